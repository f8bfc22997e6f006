// Benchmark: double precision. Each work-item iterates a damped quadratic map and a Newton
// step towards a square root, in doubles: mad, add, mul, fmin and fmax, a compare and a
// select, and an IEEE division per round (skl has fp64).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void fp64(__global const double* in, __global double* out, int rounds) {
  uint i = get_global_id(0);
  double x = in[i], y = 1.0 + x * x, lo = 1e300, hi = -1e300, acc = 0.0;
  for (int r = 0; r < rounds; r++) {
    x = fma(x, 0.75, 0.25 * y) - 0.125 * x * x;
    y = 0.5 * (y + (x * x + 2.0) / y);
    lo = fmin(lo, x);
    hi = fmax(hi, y);
    acc += (x > y) ? x - y : y - x;
  }
  out[4 * i + 0] = x;
  out[4 * i + 1] = y;
  out[4 * i + 2] = lo + hi;
  out[4 * i + 3] = acc + sqrt(fabs(acc));
}
