// Sub-group operations (one sub-group = one hardware thread): reduction, scan, broadcast.
// pocl has no sub-group (nor work-group) functions, so the reference build (-DREF_HOST)
// computes the same values through local memory; work-group size = sub-group size = 16.
#ifdef REF_HOST
__kernel void subgroups(__global const int* in, __global int* out) {
  __local int v[16];
  uint l = get_local_id(0);
  uint i = get_global_id(0);
  v[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  int sum = 0, mx = INT_MIN;
  for (uint k = 0; k < 16; k++) sum += v[k];
  for (uint k = 0; k <= l; k++) mx = max(mx, v[k]);
  out[4 * i + 0] = sum;
  out[4 * i + 1] = mx;
  out[4 * i + 2] = v[3];
  out[4 * i + 3] = (int)l;
}
#else
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void subgroups(__global const int* in, __global int* out) {
  uint i = get_global_id(0);
  int x = in[i];
  out[4 * i + 0] = sub_group_reduce_add(x);
  out[4 * i + 1] = sub_group_scan_inclusive_max(x);
  out[4 * i + 2] = sub_group_broadcast(x, 3);
  out[4 * i + 3] = (int)get_sub_group_local_id();
}
#endif
