// Global atomics from divergent lanes: counters, a histogram, min/max/or, a compare-exchange loop.
__kernel void atomics(__global const uint* in, __global int* counters, __global uint* hist) {
  uint i = get_global_id(0);
  uint v = in[i];
  atomic_inc(&counters[0]);
  if (v & 1u) atomic_add(&counters[1], (int)(v & 0xffu));
  atomic_max(&counters[2], (int)(v % 1000u));
  atomic_min(&counters[3], (int)(v % 777u));
  atomic_inc(&hist[v % 16u]);
  // max through a compare-exchange loop (deterministic result whatever the order)
  int want = (int)(v % 500u);
  int old = counters[4];
  while (old < want) {
    int seen = atomic_cmpxchg(&counters[4], old, want);
    if (seen == old) break;
    old = seen;
  }
  atomic_or((__global int*)&counters[8], 1 << (v % 31u));
}
