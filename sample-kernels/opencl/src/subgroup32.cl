// SIMD32 sub-groups: reduction, broadcast, shuffle and ballot-style counting across 32 lanes.
#ifdef REF_HOST
__kernel void subgroup32(__global const int* in, __global int* out) {
  __local int v[32];
  uint l = get_local_id(0), g = get_global_id(0);
  v[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  int sum = 0, mn = INT_MAX, pos = 0;
  for (uint k = 0; k < 32; k++) { sum += v[k]; mn = min(mn, v[k]); pos += v[k] > 0; }
  out[4 * g + 0] = sum;
  out[4 * g + 1] = mn;
  out[4 * g + 2] = v[31 - l];
  out[4 * g + 3] = pos;
}
#else
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void subgroup32(__global const int* in, __global int* out) {
  uint g = get_global_id(0);
  uint l = get_sub_group_local_id();
  int x = in[g];
  out[4 * g + 0] = sub_group_reduce_add(x);
  out[4 * g + 1] = sub_group_reduce_min(x);
  out[4 * g + 2] = intel_sub_group_shuffle(x, 31 - l);
  out[4 * g + 3] = sub_group_reduce_add(x > 0 ? 1 : 0);
}
#endif
