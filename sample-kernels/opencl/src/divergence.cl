// Nested divergence and a switch on per-lane data.
__kernel void divergence(__global const int* in, __global int* out) {
  int i = get_global_id(0);
  int x = in[i];
  int r;
  switch (x & 7) {
    case 0: r = x * 2; break;
    case 1: r = x - 100; break;
    case 3: if (x > 40) r = x ^ 0x5a; else r = -x; break;
    case 5: r = x / 3; break;
    default: r = (x & 8) ? x >> 2 : x * x;
  }
  if (i & 1) r += i;
  out[i] = r;
}
