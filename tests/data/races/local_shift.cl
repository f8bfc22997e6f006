// Each work-item reads the element of the work-item 16 places further round its group from
// local memory: with SHIFT_BARRIER defined there is a barrier between the writes and the
// reads; without it, the reads race with other threads' writes.
__kernel void local_shift(__global const int* in, __global int* out) {
  __local int tmp[64];
  int l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
#ifdef SHIFT_BARRIER
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  out[get_global_id(0)] = tmp[(l + 16) % 64];
}
