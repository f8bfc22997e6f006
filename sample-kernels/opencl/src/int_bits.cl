// Bit operations: popcount, clz, ctz via clz, rotate, byte reverse, bit-field extract, mul_hi, abs, sign tricks.
__kernel void int_bits(__global const uint* in, __global uint* out) {
  uint i = get_global_id(0);
  uint x = in[i];
  int s = (int)x;
  out[10 * i + 0] = popcount(x);
  out[10 * i + 1] = clz(x);
  out[10 * i + 2] = x ? 31 - clz(x & -x) : 32;
  out[10 * i + 3] = rotate(x, (uint)(i % 32));
  out[10 * i + 4] = ((x >> 24) | ((x >> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24));
  out[10 * i + 5] = (x >> (i % 13)) & 0x3ff;
  out[10 * i + 6] = mul_hi(x, 0x9e3779b9u);
  out[10 * i + 7] = (uint)abs(s);
  out[10 * i + 8] = (uint)(s >> 31) | 1u;
  out[10 * i + 9] = (uint)mul_hi(s, -123456789);
}
