// Early returns from divergent code, some inside a loop, with stores before returning.
__kernel void early_return(__global const int* in, __global int* out, __global int* trail) {
  int i = get_global_id(0);
  int x = in[i];
  trail[i] = -1;
  if (x < -150) return;
  out[i] = x;
  if ((x & 3) == 1) {
    out[i] = x * 7;
    return;
  }
  int acc = 0;
  for (int k = 0; k < 40; k++) {
    acc += (x >> (k & 7)) ^ k;
    if (acc > 900 + i) {
      trail[i] = k;
      return;
    }
    if (((acc + k) & 15) == 3) continue;
    acc -= k / 2;
  }
  out[i] = acc;
  trail[i] = 100 + (acc & 31);
}
