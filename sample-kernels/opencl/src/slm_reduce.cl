// Work-group sum in shared local memory: tree reduction with barriers.
__kernel void slm_reduce(__global const int* in, __global int* sums, __global int* scan) {
  __local int tmp[64];
  uint lid = get_local_id(0);
  uint gid = get_global_id(0);
  tmp[lid] = in[gid];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = get_local_size(0) / 2; stride > 0; stride >>= 1) {
    if (lid < stride) tmp[lid] += tmp[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) sums[get_group_id(0)] = tmp[0];
  scan[gid] = tmp[0] - in[gid];
}
