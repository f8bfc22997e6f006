// A private array indexed by lane-varying values: indirect register addressing.
__kernel void private_array(__global const int* in, __global int* out) {
  uint i = get_global_id(0);
  int a[16];
  for (int k = 0; k < 16; k++) a[k] = in[i] * k + k * k;
  int idx = in[i] & 15;
  a[idx] += 1000;
  a[(idx * 7) & 15] -= 3;
  int s = 0;
  for (int k = 0; k < 16; k += 3) s += a[(k + idx) & 15];
  out[i] = s + a[in[(i + 1) % get_global_size(0)] & 15];
}
