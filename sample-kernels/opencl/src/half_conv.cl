// Half-precision storage: round-to-nearest and round-toward-zero stores, loads back to float.
__kernel void half_conv(__global const float* in, __global half* rte, __global half* rtz, __global float* back) {
  uint i = get_global_id(0);
  float x = in[i] * 1.5f - 3.0f;
  vstore_half_rte(x, i, rte);
  vstore_half_rtz(x, i, rtz);
  back[i] = vload_half(i, rte) + vload_half(i, rtz);
}
