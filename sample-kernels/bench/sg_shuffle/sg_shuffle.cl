// Benchmark: sub-group shuffles (cl_intel_subgroups, sub-groups of 16). Each sub-group owns
// 32 blocks of 16 ints and makes `chunks` steps through them, cyclically, each step's block
// offset by the step number; for each it sorts the block across its lanes with a bitonic
// network (intel_sub_group_shuffle_xor), takes a prefix sum (intel_sub_group_shuffle_up),
// rotates it (intel_sub_group_shuffle) and folds the result into each lane's checksum.
//
// Built with -DNO_SUBGROUPS (for Oclgrind, which has no sub-groups), each work-group of 16 is
// one sub-group and the three shuffles go through local memory with barriers, with the same
// results.
#ifdef NO_SUBGROUPS
#define SG_ATTR
#define SG_SCRATCH __local int sg_a[16], sg_b[16];
#define LANE ((uint)get_local_id(0))
int sg_pick(__local int* a, int x, uint from) {
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_local_id(0)] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  return a[from & 15];
}
int sg_up(__local int* a, __local int* b, int prev, int cur, uint d) {
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_local_id(0)] = prev;
  b[get_local_id(0)] = cur;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint l = get_local_id(0);
  return l >= d ? b[l - d] : a[16 + l - d];
}
#define SHUFFLE(x, from) sg_pick(sg_a, x, from)
#define SHUFFLE_XOR(x, m) sg_pick(sg_a, x, LANE ^ (m))
#define SHUFFLE_UP(prev, cur, d) sg_up(sg_a, sg_b, prev, cur, d)
#else
#define SG_ATTR __attribute__((intel_reqd_sub_group_size(16)))
#define SG_SCRATCH
#define LANE get_sub_group_local_id()
#define SHUFFLE(x, from) intel_sub_group_shuffle(x, from)
#define SHUFFLE_XOR(x, m) intel_sub_group_shuffle_xor(x, m)
#define SHUFFLE_UP(prev, cur, d) intel_sub_group_shuffle_up(prev, cur, d)
#endif

SG_ATTR
__kernel void sg_shuffle(__global const int* in, __global int* out, int chunks) {
  SG_SCRATCH
  uint lane = LANE;
  uint base = (get_global_id(0) - lane) * 32;
  int check = 0, carry = 0;
  for (int c = 0; c < chunks; c++) {
    int v = in[base + 16 * (c & 31) + lane] + c;
    for (uint k = 2; k <= 16; k <<= 1) {
      for (uint j = k >> 1; j > 0; j >>= 1) {
        int other = SHUFFLE_XOR(v, j);
        bool ascending = (lane & k) == 0 || k == 16;
        bool lower = (lane & j) == 0;
        v = (lower == ascending) ? min(v, other) : max(v, other);
      }
    }
    int scan = v;
    for (uint d = 1; d < 16; d <<= 1) {
      int up = SHUFFLE_UP(0, scan, d);
      scan += up;
    }
    scan += carry;
    carry = SHUFFLE(scan, 15);
    int turned = SHUFFLE(scan, (lane + (uint)c) & 15);
    check = check * 33 + (turned ^ v);
  }
  out[2 * get_global_id(0) + 0] = check;
  out[2 * get_global_id(0) + 1] = carry;
}
