// Benchmark: 64-bit integers. Each work-item hashes a counter stream from its own key with a
// 64-bit finaliser (xor-shift, multiply), then folds the hashes together with rotates,
// mul_hi, a signed compare, 64-bit add/sub and clz/popcount.
ulong finalise(ulong z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  return z ^ (z >> 31);
}

__kernel void hash64(__global const ulong* keys, __global ulong* out, int rounds) {
  uint g = get_global_id(0);
  ulong h = keys[g] ^ ((ulong)g << 40);
  ulong acc = 0xcbf29ce484222325UL, lo = ~0UL;
  uint bits = 0;
  for (int r = 0; r < rounds; r++) {
    h += 0x9e3779b97f4a7c15UL;
    ulong z = finalise(h);
    acc = rotate(acc ^ z, (ulong)(r & 63)) * 0x100000001b3UL;
    acc += mul_hi(z, acc | 1UL);
    if ((long)acc < 0) acc -= z >> 17;
    lo = min(lo, z);
    bits += (uint)popcount(z) + (uint)clz(acc);
  }
  out[3 * g + 0] = acc;
  out[3 * g + 1] = lo;
  out[3 * g + 2] = ((ulong)bits << 32) | (uint)h;
}
