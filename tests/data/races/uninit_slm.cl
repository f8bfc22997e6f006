// Only the first half of each work-group fills local memory, but every work-item reads its
// own element back: the second half reads SLM nothing wrote.
__kernel void uninit_slm(__global const int* in, __global int* out) {
  __local int tmp[64];
  int l = get_local_id(0);
  if (l < 32) tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tmp[l];
}
