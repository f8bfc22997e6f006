// A work-group max-reduction in __local memory with its barriers left out (the bug): under
// the round-robin schedule the threads happen to stay in step and the result is right;
// other interleavings (vdb --schedule chaos, pocl, the hardware) read stale values.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void max_reduce(__global const int* in, __global int* out) {
  __local int tmp[64];
  int l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  for (int s = 32; s > 0; s >>= 1) {
    if (l < s) tmp[l] = max(tmp[l], tmp[l + s]);
  }
  if (l == 0) out[get_group_id(0)] = tmp[0];
}
