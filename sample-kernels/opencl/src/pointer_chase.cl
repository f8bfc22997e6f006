// Pointer chasing: each lane follows a linked list of (next, value) records a different number of hops.
typedef struct { int next; int value; } node;
__kernel void pointer_chase(__global const node* nodes, __global const int* starts, __global int* out) {
  uint i = get_global_id(0);
  int at = starts[i];
  int sum = 0, hops = 0;
  while (at >= 0 && hops < 64) {
    sum += nodes[at].value;
    at = nodes[at].next;
    hops++;
  }
  out[2 * i] = sum;
  out[2 * i + 1] = hops;
}
