// Intel sub-group shuffles (one sub-group = one hardware thread of 16 lanes).
#ifdef REF_HOST
__kernel void sg_shuffle(__global const int* in, __global int* out) {
  __local int v[16];
  uint l = get_local_id(0), g = get_global_id(0);
  v[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[3 * g + 0] = v[(l + 5) & 15];
  out[3 * g + 1] = v[15 - l];
  out[3 * g + 2] = v[(in[g] & 15)];
}
#else
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void sg_shuffle(__global const int* in, __global int* out) {
  uint g = get_global_id(0);
  uint l = get_sub_group_local_id();
  int x = in[g];
  out[3 * g + 0] = intel_sub_group_shuffle(x, (l + 5) & 15);
  out[3 * g + 1] = intel_sub_group_shuffle(x, 15 - l);
  out[3 * g + 2] = intel_sub_group_shuffle(x, x & 15);
}
#endif
