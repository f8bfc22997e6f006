// Collatz trip counts: a data-dependent loop per lane with a divergent exit (benchmark kernel).
__kernel void collatz(__global const uint* in, __global uint* steps) {
  uint i = get_global_id(0);
  uint n = in[i];
  uint s = 0;
  while (n != 1u && s < 1000u) {
    n = (n & 1u) ? 3u * n + 1u : n >> 1;
    s++;
  }
  steps[i] = s;
}
