// Unsigned 32-bit division and remainder by per-lane divisors, with dividends and divisors
// at and above 2^31 (acm-g10 expands them in float arithmetic; skl and tgllp use div/mod).
__kernel void udivmod(__global const uint* a, __global const uint* b, __global uint* out, uint s) {
  uint i = get_global_id(0);
  uint x = a[i], y = b[i];
  out[6 * i + 0] = x / y;
  out[6 * i + 1] = x % y;
  out[6 * i + 2] = s / y;
  out[6 * i + 3] = x % s;
  uint t = x;
  for (uint k = 0; k < (y & 3u); k++) t = t / (y | 1u) + k;
  out[6 * i + 4] = t;
  out[6 * i + 5] = (x >> 1) % (y | 0x80000000u);
}
