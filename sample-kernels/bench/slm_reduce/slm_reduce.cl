// Benchmark: shared local memory with barriers. Each work-group of 128 makes `rounds` passes
// over its slice of the input; on each pass every work-item puts a value derived from its
// element and the pass number into local memory and the group tree-reduces the sum, the
// minimum and the maximum (barrier at every level). Work-item 0 folds the pass results into
// the group's three outputs.
#define GROUP 128
__kernel void slm_reduce(__global const int* in, __global int* out, int rounds) {
  __local int sum[GROUP], lo[GROUP], hi[GROUP];
  uint l = get_local_id(0), g = get_global_id(0), grp = get_group_id(0);
  int x = in[g];
  uint total = 0;
  int low = 0x7fffffff, high = -0x7fffffff - 1;
  for (int r = 0; r < rounds; r++) {
    int v = (int)(((uint)x ^ ((uint)r * 0x45d9f3bu)) % 1000u) - 500;
    sum[l] = v;
    lo[l] = v;
    hi[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = GROUP / 2; s > 0; s >>= 1) {
      if (l < s) {
        sum[l] += sum[l + s];
        lo[l] = min(lo[l], lo[l + s]);
        hi[l] = max(hi[l], hi[l + s]);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
      total = total * 3u + (uint)sum[0];
      low = min(low, lo[0] + r);
      high = max(high, hi[0] - r);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) {
    out[3 * grp + 0] = (int)total;
    out[3 * grp + 1] = low;
    out[3 * grp + 2] = high;
  }
}
