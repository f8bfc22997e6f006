// A multi-pass reduction with two kernels: `square` once, then `partial_sum` over and over
// (each pass sums work-groups in __local memory into a smaller buffer) until one value is
// left; also a sub-buffer, a fill, a map and clCreateKernelsInProgram. `square` reads a
// __constant table: IGC then adds a kernel of its own to the program (its symbol table),
// which the program's kernels do not count.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
static const char *src =
"__constant int MOD[2] = {1000, 999};\n"
"__kernel void square(__global const int *in, __global int *out) {\n"
"  size_t i = get_global_id(0);\n"
"  out[i] = in[i] * in[i] % MOD[i % 2];\n"
"}\n"
"__kernel void partial_sum(__global const int *in, __global int *out, __local int *tmp, uint n) {\n"
"  size_t g = get_global_id(0), l = get_local_id(0), size = get_local_size(0);\n"
"  tmp[l] = g < n ? in[g] : 0;\n"
"  barrier(CLK_LOCAL_MEM_FENCE);\n"
"  for (size_t s = size / 2; s > 0; s /= 2) {\n"
"    if (l < s) tmp[l] += tmp[l + s];\n"
"    barrier(CLK_LOCAL_MEM_FENCE);\n"
"  }\n"
"  if (l == 0) out[get_group_id(0)] = tmp[0];\n"
"}\n";
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { printf("error %d at line %d\n", e_, __LINE__); return 1; } } while (0)
enum { N = 4096, WG = 64 };
int main(void) {
  cl_int err; cl_platform_id plat; cl_device_id dev;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CHECK(err);
  static int host[N];
  for (int i = 0; i < N; i++) host[i] = (i * 7919) % 10007;
  cl_mem in = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err); CHECK(err);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, sizeof host, NULL, &err); CHECK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err); CHECK(err);
  int zero = 0;
  CHECK(clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, sizeof host, 0, NULL, NULL));
  int *mapped = clEnqueueMapBuffer(q, in, CL_TRUE, CL_MAP_WRITE, 0, sizeof host, 0, NULL, NULL, &err); CHECK(err);
  memcpy(mapped, host, sizeof host);
  CHECK(clEnqueueUnmapMemObject(q, in, mapped, 0, NULL, NULL));
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err); CHECK(err);
  CHECK(clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL));
  size_t nkernels;
  CHECK(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nkernels, &nkernels, NULL));
  printf("kernels=%zu\n", nkernels);
  cl_kernel ks[2]; cl_uint nk;
  CHECK(clCreateKernelsInProgram(p, 2, ks, &nk));
  char name[64]; cl_kernel square = NULL, sum = NULL;
  for (cl_uint i = 0; i < nk; i++) {
    CHECK(clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL));
    if (!strcmp(name, "square")) square = ks[i]; else sum = ks[i];
  }
  size_t wg_max;
  CHECK(clGetKernelWorkGroupInfo(sum, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg_max, &wg_max, NULL));
  if (wg_max < WG) { printf("work-group size %zu too small\n", wg_max); return 1; }
  CHECK(clSetKernelArg(square, 0, sizeof in, &in));
  CHECK(clSetKernelArg(square, 1, sizeof a, &a));
  size_t global = N, local = WG;
  CHECK(clEnqueueNDRangeKernel(q, square, 1, NULL, &global, &local, 0, NULL, NULL));
  cl_uint n = N; cl_mem from = a, to = b; int passes = 0;
  while (n > 1) {
    size_t groups = (n + WG - 1) / WG; global = groups * WG;
    CHECK(clSetKernelArg(sum, 0, sizeof from, &from));
    CHECK(clSetKernelArg(sum, 1, sizeof to, &to));
    CHECK(clSetKernelArg(sum, 2, WG * sizeof(int), NULL));
    CHECK(clSetKernelArg(sum, 3, sizeof n, &n));
    CHECK(clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &local, 0, NULL, NULL));
    n = (cl_uint)groups; cl_mem t = from; from = to; to = t; passes++;
  }
  CHECK(clFinish(q));
  // The first 64 squares through a sub-buffer of `in`'s second half, as a check of offsets.
  cl_buffer_region region = { N / 2 * sizeof(int), 64 * sizeof(int) };
  cl_mem half = clCreateSubBuffer(in, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &err); CHECK(err);
  int tail[64];
  CHECK(clEnqueueReadBuffer(q, half, CL_TRUE, 0, sizeof tail, tail, 0, NULL, NULL));
  int total;
  CHECK(clEnqueueReadBuffer(q, from, CL_TRUE, 0, sizeof total, &total, 0, NULL, NULL));
  long expect = 0;
  for (int i = 0; i < N; i++) expect += (long)host[i] * host[i] % (i % 2 ? 999 : 1000);
  printf("passes=%d total=%d expected=%ld tail0=%d\n", passes, total, expect, tail[0]);
  clReleaseMemObject(half); clReleaseMemObject(in); clReleaseMemObject(a); clReleaseMemObject(b);
  clReleaseKernel(ks[0]); clReleaseKernel(ks[1]); clReleaseProgram(p);
  clReleaseCommandQueue(q); clReleaseContext(ctx);
  return total == expect ? 0 : 1;
}
