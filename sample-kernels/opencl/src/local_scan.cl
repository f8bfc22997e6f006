// Work-group prefix sum and histogram in local memory with local atomics and barriers.
__kernel void local_scan(__global const uint* in, __global uint* scan, __global uint* hist) {
  __local uint buf[64];
  __local uint h[16];
  uint l = get_local_id(0), g = get_global_id(0);
  if (l < 16) h[l] = 0;
  buf[l] = in[g] & 0xff;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&h[in[g] & 15]);
  for (uint d = 1; d < 64; d <<= 1) {
    uint v = l >= d ? buf[l - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    buf[l] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  scan[g] = buf[l];
  if (l < 16) hist[get_group_id(0) * 16 + l] = h[l];
}
