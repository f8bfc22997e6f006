// char/short arithmetic with wrap-around, saturation and mixed-width conversions.
__kernel void small_types(__global const char* c, __global const short* s, __global const uchar* u,
                          __global char* oc, __global short* os, __global int* oi) {
  uint i = get_global_id(0);
  char x = c[i];
  short y = s[i];
  uchar z = u[i];
  oc[2 * i] = (char)(x * 3 + z);
  oc[2 * i + 1] = add_sat(x, (char)z);
  os[2 * i] = (short)(y * x - z);
  os[2 * i + 1] = sub_sat(y, (short)(x * 300));
  oi[2 * i] = (int)x * (int)y + (int)z;
  oi[2 * i + 1] = (int)(ushort)y >> (z & 7);
}
