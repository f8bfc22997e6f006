// Calls vdb does not implement (an image, a user event) and a NULL handle: each must come
// back as an OpenCL error code, and the program goes on. (A pointer that is no handle at all
// is read by the ICD loader itself, before vdb sees it.)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
int main(void) {
  cl_int err = 0; cl_platform_id plat; cl_device_id dev;
  if (clGetPlatformIDs(1, &plat, NULL) || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) return 2;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err) return 2;
  cl_image_format fmt = { CL_RGBA, CL_UNORM_INT8 };
  cl_image_desc desc = { 0 };
  desc.image_type = CL_MEM_OBJECT_IMAGE2D; desc.image_width = 16; desc.image_height = 16;
  cl_mem img = clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
  printf("clCreateImage: %d %s\n", err, img ? "handle" : "NULL");
  cl_event ue = clCreateUserEvent(ctx, &err);
  printf("clCreateUserEvent: %d %s\n", err, ue ? "handle" : "NULL");
  cl_int code = clReleaseMemObject(NULL);
  printf("clReleaseMemObject(NULL): %d\n", code);
  printf("clReleaseContext: %d\n", clReleaseContext(ctx));
  return 0;
}
