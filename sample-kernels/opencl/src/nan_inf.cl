// NaN, infinities and signed zeros through compares, min/max, select and conversions.
__kernel void nan_inf(__global const float* in, __global int* flags, __global float* vals) {
  uint i = get_global_id(0);
  float x = in[i], y = in[(i + 1) % get_global_size(0)];
  flags[6 * i + 0] = isnan(x);
  flags[6 * i + 1] = isinf(x);
  flags[6 * i + 2] = x < y;
  flags[6 * i + 3] = x != y;
  flags[6 * i + 4] = isequal(x, -x);
  flags[6 * i + 5] = signbit(x);
  vals[3 * i + 0] = fmin(x, y);
  vals[3 * i + 1] = fmax(x, y);
  vals[3 * i + 2] = x > y ? x : y;
}
