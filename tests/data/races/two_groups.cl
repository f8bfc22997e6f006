// Each work-group's first work-item writes the one global result: the groups are not ordered,
// so which value stays is up to the schedule (a write-write race between work-groups).
__kernel void two_groups(__global int* out) {
  if (get_local_id(0) == 0) out[0] = (int)get_group_id(0);
}
