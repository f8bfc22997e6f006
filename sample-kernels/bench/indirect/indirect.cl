// Benchmark: indirect addressing. Each work-item loads a private table of 16 words and then
// walks it for `rounds` steps, every index taken from the data just read (so both the reads
// and the writes go through computed register addresses); it writes back the table and the
// final walk position.
#define SIZE 16
__kernel void indirect(__global const uint* in, __global uint* out, int rounds) {
  uint g = get_global_id(0);
  uint n = get_global_size(0);
  uint t[SIZE];
  for (uint i = 0; i < SIZE; i++) t[i] = in[(g * 5 + i * 3) % n] ^ i;
  uint at = g % SIZE;
  for (int r = 0; r < rounds; r++) {
    uint a = t[at];
    uint j = (a + (uint)r) % SIZE;
    uint b = t[j];
    t[at] = a + (b >> 3) - (uint)r;
    t[j] = b ^ (a << 1);
    at = (at + (a & 7) + 1) % SIZE;
  }
  for (uint i = 0; i < SIZE; i++) out[(SIZE + 1) * g + i] = t[i];
  out[(SIZE + 1) * g + SIZE] = at;
}
