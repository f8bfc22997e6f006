// Integer division and remainder, signed and unsigned, 32 and 64 bit, with per-lane divisors.
__kernel void divmod(__global const int* a, __global const int* b, __global int* out, __global long* out64) {
  uint i = get_global_id(0);
  int x = a[i], y = b[i];
  if (y == 0) y = 7;
  out[4 * i + 0] = x / y;
  out[4 * i + 1] = x % y;
  uint ux = (uint)x ^ 0x80000000u, uy = (uint)y | 1u;
  out[4 * i + 2] = (int)(ux / uy);
  out[4 * i + 3] = (int)(ux % uy);
  long lx = (long)x * 1000003L, ly = (long)y * 7L;
  out64[2 * i + 0] = lx / ly;
  out64[2 * i + 1] = lx % ly;
}
