// Reads the compiler widens: c[1..3] of a 16-byte constant buffer becomes one 16-byte block
// read at c+4 (svm_block_ld on skl/tgllp, lsc_load d32x4t on acm-g10), and three floats read
// from a 12-byte buffer may become a 16-byte read ending past it.
__kernel void wide_reads(__constant float* c, __global const float* v3, __global float* out) {
  uint i = get_global_id(0);
  out[4 * i + 0] = c[1] * (float)i;
  out[4 * i + 1] = c[2] + c[3];
  out[4 * i + 2] = v3[0] + v3[1] * v3[2];
  out[4 * i + 3] = c[3] - (float)i;
}
