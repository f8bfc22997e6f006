// Benchmark: tiled integer matrix multiply, C = A * B for n x n ints (n a multiple of 16).
// Each 16 x 16 work-group stages one tile of A and one of B in local memory per step along
// k (barriers on both sides) and accumulates its 16 products per element.
#define TILE 16
__kernel void matmul_tiled(__global const int* a, __global const int* b, __global int* c, int n) {
  __local int ta[TILE][TILE], tb[TILE][TILE];
  uint col = get_global_id(0), row = get_global_id(1);
  uint lx = get_local_id(0), ly = get_local_id(1);
  int acc = 0;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    ta[ly][lx] = a[row * n + k0 + lx];
    tb[ly][lx] = b[(k0 + ly) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; k++) acc += ta[ly][k] * tb[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = acc;
}
