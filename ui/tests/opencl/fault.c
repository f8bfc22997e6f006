// A kernel that writes far past its buffer: vdb names the launch, the kernel's event fails
// and clFinish returns an error; the program goes on and prints what it got.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char *src =
"__kernel void wild(__global int *out) { out[get_global_id(0) + (1 << 24)] = 1; }\n";
int main(void) {
  cl_int err; cl_platform_id plat; cl_device_id dev;
  if (clGetPlatformIDs(1, &plat, NULL) || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) return 2;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (clBuildProgram(p, 1, &dev, "", NULL, NULL)) return 2;
  cl_kernel k = clCreateKernel(p, "wild", &err);
  clSetKernelArg(k, 0, sizeof out, &out);
  size_t global = 64; cl_event ev; cl_int status = 0;
  printf("enqueue: %d\n", clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
  clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  printf("event status: %d\n", status);
  printf("clFinish: %d\n", clFinish(q));
  printf("clFinish again: %d\n", clFinish(q));
  return 0;
}
