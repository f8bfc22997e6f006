// Half-precision arithmetic through vload_half/vstore_half and float math in between.
__kernel void half_arith(__global const half* a, __global const half* b, __global half* out) {
  uint i = get_global_id(0);
  float x = vload_half(i, a), y = vload_half(i, b);
  vstore_half(x * y + 0.5f, 3 * i, out);
  vstore_half(fmin(x, y) - fmax(x, -y), 3 * i + 1, out);
  vstore_half_rtz(x / 3.0f, 3 * i + 2, out);
}
