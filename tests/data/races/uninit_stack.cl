// Built with stack calls (build options `-igc_opts 'FunctionControl=3'`): the helper's
// private array lives on the stack, in stateless private memory. It fills the first half
// and reads back the element twice its input: from an input of 64 on that is in the
// second half, which nothing wrote.
__attribute__((noinline)) int pick(__global const int* in, int gid) {
  int a[256];
  for (int i = 0; i < 128; i++) a[i] = i * 3 + in[(gid + i) % 128];
  return a[(in[gid] * 2) & 255];
}

__kernel void uninit_stack(__global const int* in, __global int* out) {
  int gid = get_global_id(0);
  out[gid] = pick(in, gid);
}
