// A local size that is not a multiple of the SIMD width: the last thread has fewer lanes.
__kernel void partial_atomics(__global const int* in, __global int* counts, __global int* sums) {
  uint i = get_global_id(0);
  atomic_inc(&counts[get_group_id(0)]);
  atomic_add(&sums[get_group_id(0)], in[i]);
  if (in[i] > 0) atomic_inc(&counts[16]);
}
