// Benchmark: min, max and mad. Collatz trajectories from each work-item's start, keeping the
// trip count, the peak (max), the lowest odd value seen after the start (min), a clamp, and
// three multiply-adds: mad_sat for the 3n + 1 step, mad24 and mad_hi folds, and a float fma
// with fmin/fmax bounds.
__kernel void minmax_collatz(__global const uint* starts, __global uint* out, __global float* outf) {
  uint g = get_global_id(0);
  uint n = starts[g];
  uint trips = 0, peak = n, low_odd = 0xffffffffu, fold24 = 0, foldhi = 0;
  float e = 0.0f, flo = 1.0e30f, fhi = -1.0e30f;
  while (n != 1) {
    if (n & 1) {
      n = mad_sat(n, 3u, 1u);
      low_odd = min(low_odd, n);
    } else {
      n >>= 1;
    }
    trips++;
    peak = max(peak, n);
    fold24 = mad24(clamp(n, 1u, 0xffffu), trips & 0xff, fold24);
    foldhi = mad_hi(n, 0x9e3779b9u, foldhi ^ trips);
    e = fma((float)(n & 1023), 0.0078125f, e * 0.5f);
    flo = fmin(flo, e);
    fhi = fmax(fhi, e);
  }
  out[5 * g + 0] = trips;
  out[5 * g + 1] = peak;
  out[5 * g + 2] = low_odd;
  out[5 * g + 3] = fold24;
  out[5 * g + 4] = foldhi;
  outf[3 * g + 0] = e;
  outf[3 * g + 1] = flo;
  outf[3 * g + 2] = fhi;
}
