// Does not compile: line 4 uses an undeclared name.
__kernel void broken(__global int* a) {
  int i = get_global_id(0);
  a[i] = not_declared + i;
}
