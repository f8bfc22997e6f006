// A plain OpenCL 1.2 host program: vector a*k+b with COPY_HOST_PTR, USE_HOST_PTR and
// profiling; prints its results (vdb record tests compare them with pocl's).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
"__kernel void vadd(__global const float *a, __global const float *b, __global float *c, float k, uint n) {\n"
"  size_t i = get_global_id(0);\n"
"  if (i < n) c[i] = a[i] * k + b[i];\n"
"}\n";
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { printf("error %d at %s:%d\n", e_, __FILE__, __LINE__); return 1; } } while (0)
int main(void) {
  cl_int err; cl_platform_id plat; cl_device_id dev; char name[256];
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU, 1, &dev, NULL));
  CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
  fprintf(stderr, "device: %s\n", name);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err); CHECK(err);
  enum { N = 1000 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) { a[i] = i * 0.5f; b[i] = 1000 - i; }
  cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err); CHECK(err);
  cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, sizeof b, b, &err); CHECK(err);
  cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err); CHECK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err); CHECK(err);
  err = clBuildProgram(p, 1, &dev, "", NULL, NULL);
  if (err != CL_SUCCESS) { char log[4096]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL); printf("build: %s\n", log); return 1; }
  cl_kernel k = clCreateKernel(p, "vadd", &err); CHECK(err);
  float kk = 2.0f; cl_uint n = N;
  CHECK(clSetKernelArg(k, 0, sizeof da, &da)); CHECK(clSetKernelArg(k, 1, sizeof db, &db));
  CHECK(clSetKernelArg(k, 2, sizeof dc, &dc)); CHECK(clSetKernelArg(k, 3, sizeof kk, &kk));
  CHECK(clSetKernelArg(k, 4, sizeof n, &n));
  size_t global = 1024, local = 64; cl_event ev;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
  CHECK(clWaitForEvents(1, &ev));
  cl_ulong t0, t1;
  CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
  CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
  CHECK(clFinish(q));
  double sum = 0; for (int i = 0; i < N; i++) sum += c[i];
  printf("c[0]=%g c[1]=%g c[999]=%g sum=%.3f profiled=%d\n", c[0], c[1], c[999], sum, t1 >= t0);
  clReleaseEvent(ev); clReleaseKernel(k); clReleaseProgram(p);
  clReleaseMemObject(da); clReleaseMemObject(db); clReleaseMemObject(dc);
  clReleaseCommandQueue(q); clReleaseContext(ctx);
  return 0;
}
