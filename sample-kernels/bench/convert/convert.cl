// Benchmark: conversions. Each work-item walks a linear congruential sequence and converts
// every value between int, uint, long, float, short, char and uchar: int and uint to float
// (default and toward zero), float to int under all four rounding modes, saturating
// conversions to the small types, long <-> float, and reinterpretation of the bits. The
// results are folded into four checksums. (Rounding up and down are applied to magnitudes
// only: Oclgrind 21.10 rounds negative values the wrong way under _rtp and _rtn, e.g.
// convert_int_rtp(-0.5f) gives -1 there, and the suite compares against Oclgrind.)
__kernel void convert(__global const uint* seeds, __global uint* out, int iters) {
  uint g = get_global_id(0);
  uint s = seeds[g];
  uint h0 = 0, h1 = 0, h2 = 0, h3 = 0;
  for (int i = 0; i < iters; i++) {
    s = s * 1664525u + 1013904223u;
    int si = as_int(s);
    float f = convert_float(si);
    float fz = convert_float_rtz(s);
    float scaled = f * 9.5367431640625e-7f;  // 2^-20: about -2048 .. 2048
    int r0 = convert_int_rte(scaled);
    float mag = fabs(scaled);
    int r1 = convert_int_rtp(mag);
    int r2 = convert_int_rtn(mag * 0.75f);
    int r3 = convert_int(scaled);
    uchar c = convert_uchar_sat(scaled);
    char ch = convert_char_sat_rte(scaled * 0.125f);
    short sh = convert_short_sat(f * 3.0e-5f);
    ushort us = convert_ushort_sat_rtp(fz * 1.0e-5f);
    long wide = convert_long(f) * (long)(r0 | 1);
    float back = convert_float(wide);
    uint bits = as_uint(back) ^ as_uint(fz);
    h0 = h0 * 31u + (uint)r0 + ((uint)r1 << 4) + ((uint)r2 << 8) + ((uint)r3 << 12);
    h1 = (h1 ^ bits) * 16777619u;
    h2 += (uint)c | ((uint)(uchar)ch << 8) | ((uint)(ushort)sh << 16);
    h3 = rotate(h3, 5u) ^ (uint)us ^ (uint)(wide >> 32);
  }
  out[4 * g + 0] = h0;
  out[4 * g + 1] = h1;
  out[4 * g + 2] = h2;
  out[4 * g + 3] = h3;
}
