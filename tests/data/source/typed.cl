// vdb's own source-launch test kernels (ui/tests/source.rs): arguments of many declared types,
// given by name and typed in launch files and on the command line.
#ifndef FACTOR
#define FACTOR 1
#endif

// out[i] = in[i] * scale + tmp[mirror], where each work-item stores 3 * its global id in the
// group's __local tmp and reads its mirror's; items at or past n write -1. vout[i] mixes an
// int4, a uchar, a short and a long by value.
__kernel void typed_mix(__global const float* in, __global float* out, float scale, uint n, int4 v,
                  __global int4* vout, __local int* tmp, uchar c, short s, long l) {
  uint i = get_global_id(0);
  uint li = get_local_id(0);
  tmp[li] = (int)i * 3;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint mirror = get_local_size(0) - 1 - li;
  if (i < n) {
    out[i] = in[i] * scale + (float)tmp[mirror];
  } else {
    out[i] = -1.0f;
  }
  vout[i] = v * (int)i + (int4)(c, s, (int)l, (int)(l >> 32));
}

// a[i] += k * FACTOR (FACTOR from the build options).
__kernel void add_k(__global int* a, int k) {
  a[get_global_id(0)] += k * FACTOR;
}
