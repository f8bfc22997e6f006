// Benchmark: atomics. A 256-bin histogram of `passes` hashes of every input word: each
// work-group counts into local memory with atomic_inc, then adds its bins into the global
// histogram with atomic_add; a global atomic_max and atomic_min keep the extreme hashes and
// atomic_xor folds every hash.
__kernel void histogram(__global const uint* data, __global uint* hist, __global uint* stats, int per_item, int passes) {
  __local uint bins[256];
  uint l = get_local_id(0), n = get_local_size(0);
  for (uint b = l; b < 256; b += n) bins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint base = get_global_id(0) * per_item;
  uint top = 0, bottom = 0xffffffffu, folded = 0;
  for (int p = 0; p < passes; p++) {
    for (int k = 0; k < per_item; k++) {
      uint v = data[base + k] + (uint)p * 0x9e3779b9u;
      v = (v ^ (v >> 16)) * 0x7feb352du;
      v ^= v >> 15;
      atomic_inc(&bins[v >> 24]);
      top = max(top, v);
      bottom = min(bottom, v);
      folded ^= v;
    }
  }
  atomic_max(&stats[0], top);
  atomic_min(&stats[1], bottom);
  atomic_xor(&stats[2], folded);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = l; b < 256; b += n) atomic_add(&hist[b], bins[b]);
}
