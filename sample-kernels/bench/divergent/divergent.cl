// Benchmark: divergent loops. Two nested loops whose trip counts come from each work-item's
// own data, with a data-dependent if/else, a continue and a break in the inner loop and a
// break in the outer one, so the lanes of a thread leave the loops at different times.
// (The inner trip count adds `acc & 3`, not `i & 3`: from `i & 3` Oclgrind's compiler makes a
// 2-bit induction variable, i2 in LLVM IR, that Oclgrind 21.10 does not wrap, and counted
// inner_total wrong.)
__kernel void divergent(__global const uint* in, __global uint* out) {
  uint g = get_global_id(0);
  uint v = in[g];
  uint outer = (v & 63) + 8;
  uint acc = g ^ v, inner_total = 0, skipped = 0;
  for (uint i = 0; i < outer; i++) {
    uint inner = ((v >> (i % 24)) & 31) + (acc & 3);
    for (uint j = 0; j < inner; j++) {
      inner_total++;
      if ((acc ^ j) & 1) {
        acc = acc * 3u + j;
      } else {
        acc = (acc >> 1) ^ (i << 7);
      }
      if (acc % 7u == 0) { skipped++; continue; }
      acc += j * i;
      if ((acc & 0x3ff) == 0x2aa) break;
    }
    if (i > 40 && (acc & 7) == 0) break;
  }
  out[3 * g + 0] = acc;
  out[3 * g + 1] = inner_total;
  out[3 * g + 2] = skipped;
}
