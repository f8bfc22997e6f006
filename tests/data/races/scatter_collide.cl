// Two work-items of every pair write the same element in one store: two lanes of one
// scatter write one address (a write-write race inside one instruction).
__kernel void scatter_collide(__global int* out) {
  out[get_global_id(0) / 2] = (int)get_global_id(0);
}
