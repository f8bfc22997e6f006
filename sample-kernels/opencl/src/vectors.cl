// Vector loads and stores (int4, float2, uchar4) and swizzles.
__kernel void vectors(__global const int4* a, __global const float2* b, __global const uchar4* c,
                      __global int4* out, __global float2* outf, __global uchar4* outc) {
  uint i = get_global_id(0);
  int4 v = a[i];
  float2 f = b[i];
  uchar4 u = c[i];
  out[i] = v.wzyx + (int4)(i, 2 * i, 3 * i, 4 * i);
  outf[i] = (float2)(f.y * 2.0f, f.x - f.y);
  outc[i] = (uchar4)(u.x + u.y, u.y ^ u.z, u.z, u.w + 1);
}
