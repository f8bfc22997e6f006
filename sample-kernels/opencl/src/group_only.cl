// Uses only group ids and sizes (no local ids): the payload's blank-r1 rule on skl/tgllp.
__kernel void group_only(__global int* out) {
  if (get_local_id(0) == 0)
    out[get_group_id(0)] = (int)(get_group_id(0) * 100 + get_num_groups(0) + get_local_size(0));
}
