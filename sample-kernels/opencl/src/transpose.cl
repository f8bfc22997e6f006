// 2D tile transpose through padded local memory: each work-item moves 4 rows of a 16x16 tile,
// with barriers between the load and the store phases.
#define TILE 16
__kernel void transpose(__global const float* in, __global float* out, int width, int height) {
  __local float tile[TILE][TILE + 1];
  int lx = get_local_id(0), ly = get_local_id(1);
  int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
  for (int r = ly; r < TILE; r += get_local_size(1)) {
    int x = bx + lx, y = by + r;
    tile[r][lx] = (x < width && y < height) ? in[y * width + x] : -1.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = ly; r < TILE; r += get_local_size(1)) {
    int x = by + lx, y = bx + r;
    if (x < height && y < width) out[y * height + x] = tile[lx][r] * 2.0f + (float)r;
  }
}
