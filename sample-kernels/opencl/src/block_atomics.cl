// Sub-group block read/write (one sub-group = one work-group of 16) and more atomics:
// 64-bit add, unsigned min/max, and, xor.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#ifdef REF_HOST
#define BLOCK_READ(p) ((p)[get_local_id(0)])
#define BLOCK_WRITE(p, v) ((p)[get_local_id(0)] = (v))
#else
#define BLOCK_READ(p) intel_sub_group_block_read(p)
#define BLOCK_WRITE(p, v) intel_sub_group_block_write(p, v)
__attribute__((intel_reqd_sub_group_size(16)))
#endif
__kernel void block_atomics(__global uint* in, __global uint* out, __global ulong* c64, __global uint* c32) {
  __global uint* base = in + get_group_id(0) * 16;
  uint v = BLOCK_READ(base);
  BLOCK_WRITE(out + get_group_id(0) * 16, v * 3u + 1u);
  atom_add(&c64[0], (ulong)v * 4097ul);
  atomic_min(&c32[0], v);
  atomic_max(&c32[1], v);
  atomic_and(&c32[2], v | 0x0f0f0000u);
  atomic_xor(&c32[3], v);
}
