// Each work-item fills the first half of a private array too large for registers (IGC puts
// it in scratch memory) and reads back the element twice its input: from an input of 64 on
// that is in the second half, which nothing wrote.
__kernel void uninit_private(__global const int* in, __global int* out) {
  int a[256];
  for (int i = 0; i < 128; i++) a[i] = i * 3 + in[(get_global_id(0) + i) % 128];
  out[get_global_id(0)] = a[(in[get_global_id(0)] * 2) & 255];
}
