// 3D NDRange with a partial last thread per group and work-group functions of ids.
__kernel void ids3d(__global int* out) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  size_t w = get_global_size(0), h = get_global_size(1);
  size_t i = (z * h + y) * w + x;
  out[4 * i + 0] = (int)(get_local_id(0) + 10 * get_local_id(1) + 100 * get_local_id(2));
  out[4 * i + 1] = (int)(get_group_id(0) + 10 * get_group_id(1) + 100 * get_group_id(2));
  out[4 * i + 2] = (int)(get_local_size(0) * get_local_size(1) * get_local_size(2));
  out[4 * i + 3] = (int)(get_num_groups(0) + get_num_groups(1) + get_num_groups(2) + get_work_dim());
}
