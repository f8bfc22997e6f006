// Nested loops with per-lane trip counts, a break out of the inner loop, continue, and
// integer and float accumulators carried across both loops.
__kernel void nested_loops(__global const int* n, __global const float* w, __global int* outi,
                           __global float* outf) {
  int i = get_global_id(0);
  int m = n[i] & 15;
  int s = 0;
  float f = 0.0f;
  for (int a = 0; a < m; a++) {
    if ((a ^ i) % 5 == 0) continue;
    for (int b = a; b < m + 3; b++) {
      s += a * b - (b >> 1);
      if (s > 400) break;
      f = f * 0.5f + w[(i + a + b) & 63];
    }
    s ^= a << 3;
  }
  outi[i] = s;
  outf[i] = f;
}
