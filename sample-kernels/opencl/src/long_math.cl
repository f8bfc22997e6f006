// 64-bit integer arithmetic: multiply, add with carry, shifts, division and remainder.
__kernel void long_math(__global const ulong* a, __global const ulong* b, __global ulong* out) {
  uint i = get_global_id(0);
  ulong x = a[i], y = b[i] | 1ul;
  long sx = (long)x;
  out[8 * i + 0] = x * y;
  out[8 * i + 1] = x + (y << 7);
  out[8 * i + 2] = x >> (y & 63ul);
  out[8 * i + 3] = (ulong)(sx >> 13);
  out[8 * i + 4] = x / y;
  out[8 * i + 5] = x % y;
  out[8 * i + 6] = mul_hi(x, y);
  out[8 * i + 7] = (ulong)((long)x / (long)(y | 2ul));
}
