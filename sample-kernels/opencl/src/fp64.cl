// Double precision (skl only: tgllp and acm-g10 have no fp64): IEEE division and square root.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void fp64(__global const double* a, __global const double* b, __global double* out) {
  uint i = get_global_id(0);
  double x = a[i], y = b[i];
  out[5 * i + 0] = x + y * 3.0;
  out[5 * i + 1] = x * y;
  out[5 * i + 2] = x / (y == 0.0 ? 1.0 : y);
  out[5 * i + 3] = sqrt(fabs(x));
  out[5 * i + 4] = fma(x, y, -1.0);
}
