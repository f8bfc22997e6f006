// Benchmark: float arithmetic and transcendentals. Each work-item samples a damped wave and
// a slowly growing curve at `iters` points from its own start and keeps three running
// figures: a sum, a maximum and a mean of a ratio. Uses sin, cos, exp, log, sqrt, pow, tanh,
// atan2 and division (all at OpenCL's default, not correctly rounded, precision).
__kernel void fp_transcend(__global const float* start, __global float* out, int iters) {
  uint g = get_global_id(0);
  float x = start[g];
  float sum = 0.0f, peak = -1.0e30f, ratio = 0.0f;
  for (int i = 0; i < iters; i++) {
    float t = x + 0.0625f * (float)i;
    float damp = exp(-0.03125f * t);
    float wave = sin(3.0f * t) * damp + 0.5f * cos(0.75f * t);
    float grow = log(1.0f + t * t) / (1.0f + sqrt(t));
    float bend = pow(1.0f + 0.01f * t, 1.5f) - tanh(wave);
    sum += 0.25f * wave + grow;
    peak = fmax(peak, bend);
    ratio += atan2(wave, 1.0f + grow) / (float)iters;
  }
  out[3 * g + 0] = sum;
  out[3 * g + 1] = peak;
  out[3 * g + 2] = ratio;
}
