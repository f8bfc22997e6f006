// Native (hardware) math: sin, cos, rsqrt, exp2, log2, powr, fract — compared with a tolerance.
__kernel void native_math(__global const float* in, __global float* out) {
  uint i = get_global_id(0);
  float x = in[i];
  float ip;
  out[7 * i + 0] = native_sin(x);
  out[7 * i + 1] = native_cos(x);
  out[7 * i + 2] = native_rsqrt(fabs(x) + 0.5f);
  out[7 * i + 3] = native_exp2(x * 0.1f);
  out[7 * i + 4] = native_log2(fabs(x) + 1.0f);
  out[7 * i + 5] = native_powr(fabs(x) + 1.0f, 0.5f);
  out[7 * i + 6] = fract(x, &ip) + ip * 0.0f;
}
