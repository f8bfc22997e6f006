// Float arithmetic and conversions (exact) and transcendentals (compared with a tolerance).
__kernel void float_math(__global const float* in, __global float* exact, __global float* approx, __global int* conv) {
  uint i = get_global_id(0);
  float x = in[i];
  float y = in[(i + 7) % get_global_size(0)];
  exact[6 * i + 0] = x + y;
  exact[6 * i + 1] = x * y;
  exact[6 * i + 2] = fma(x, y, 1.5f);
  exact[6 * i + 3] = fmin(x, y);
  exact[6 * i + 4] = fmax(x, -y);
  exact[6 * i + 5] = floor(x) + ceil(y) + rint(x * 0.5f) + trunc(y * 3.0f);
  approx[6 * i + 0] = sqrt(fabs(x));
  approx[6 * i + 1] = 1.0f / (y == 0.0f ? 1.0f : y);
  approx[6 * i + 2] = sin(x);
  approx[6 * i + 3] = cos(y);
  approx[6 * i + 4] = exp(x * 0.05f);
  approx[6 * i + 5] = log(fabs(y) + 1.0f) + pow(fabs(x) + 1.0f, 0.75f);
  conv[3 * i + 0] = (int)x;
  conv[3 * i + 1] = convert_int_rte(x * 3.0f);
  conv[3 * i + 2] = (int)(uint)(x < 0 ? -x * 1000.0f : x * 1000.0f);
}
