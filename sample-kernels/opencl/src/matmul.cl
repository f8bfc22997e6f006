// Integer matrix multiply (8x8 tiles per work-item row) with nested loops.
__kernel void matmul(__global const int* a, __global const int* b, __global int* c) {
  uint row = get_global_id(1), col = get_global_id(0);
  uint n = get_global_size(0);
  int acc = 0;
  for (uint k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
