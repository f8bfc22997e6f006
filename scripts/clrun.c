/* clrun: run one OpenCL kernel from source on the first (or a chosen) OpenCL platform and
 * write its buffers back to files. Used to make reference outputs with pocl and to time
 * Oclgrind (`oclgrind ./clrun ...`) against vdb.
 *
 *   clrun FILE.cl KERNEL --global X[,Y,Z] --local X[,Y,Z] [--offset X,Y,Z]
 *         [--options "BUILD OPTIONS"] [--repeat N] ARG...
 *   ARG: --buf IN_FILE[:OUT_FILE]   global buffer with initial bytes from IN_FILE
 *        --zero SIZE[:OUT_FILE]     zero-filled global buffer
 *        --local SIZE               __local allocation
 *        --scalar FILE              by-value argument from the raw bytes of FILE
 *        --hex HEXBYTES             by-value argument from hex
 * Environment: CLRUN_PLATFORM=substring picks a platform by name.
 * Prints "kernel_ms=<ms>" for the timed enqueue-to-finish of the last repetition.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ARGS 32

enum kind { BUF, ZERO, LOCAL, SCALAR };
struct arg { enum kind kind; char *in, *out; size_t size; unsigned char *bytes; cl_mem mem; };

static void die(const char *what, cl_int err) {
  fprintf(stderr, "clrun: %s failed (%d)\n", what, (int)err);
  exit(2);
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "clrun: cannot open %s\n", path); exit(2); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "clrun: short read %s\n", path); exit(2); }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void split_out(char *spec, char **out) {
  char *colon = strchr(spec, ':');
  *out = NULL;
  if (colon) { *colon = 0; *out = colon + 1; }
}

static int parse_dims(const char *s, size_t d[3]) {
  d[0] = d[1] = d[2] = 1;
  return sscanf(s, "%zu,%zu,%zu", &d[0], &d[1], &d[2]);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static cl_device_id pick_device(cl_context_properties *props) {
  cl_platform_id plats[16];
  cl_uint n = 0;
  cl_int err = clGetPlatformIDs(16, plats, &n);
  if (err != CL_SUCCESS || n == 0) die("clGetPlatformIDs", err);
  const char *want = getenv("CLRUN_PLATFORM");
  cl_platform_id chosen = plats[0];
  for (cl_uint i = 0; want && i < n; i++) {
    char name[256] = {0};
    clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, want)) chosen = plats[i];
  }
  cl_device_id dev;
  err = clGetDeviceIDs(chosen, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
  if (err != CL_SUCCESS) die("clGetDeviceIDs", err);
  props[0] = CL_CONTEXT_PLATFORM;
  props[1] = (cl_context_properties)chosen;
  props[2] = 0;
  return dev;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: clrun FILE.cl KERNEL --global .. --local .. ARGS\n"); return 2; }
  size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  int dims = 1, repeat = 1;
  const char *options = "";
  struct arg args[MAX_ARGS];
  int nargs = 0;
  for (int i = 3; i < argc; i++) {
    char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) { fprintf(stderr, "clrun: %s needs a value\n", a); return 2; }
    i++;
    if (!strcmp(a, "--global")) dims = parse_dims(v, global);
    else if (!strcmp(a, "--local")) parse_dims(v, local);
    else if (!strcmp(a, "--offset")) parse_dims(v, offset);
    else if (!strcmp(a, "--options")) options = v;
    else if (!strcmp(a, "--repeat")) repeat = atoi(v);
    else {
      if (nargs == MAX_ARGS) { fprintf(stderr, "clrun: too many args\n"); return 2; }
      struct arg *g = &args[nargs++];
      memset(g, 0, sizeof *g);
      char *spec = strdup(v);
      if (!strcmp(a, "--buf")) { g->kind = BUF; split_out(spec, &g->out); g->bytes = read_file(spec, &g->size); }
      else if (!strcmp(a, "--zero")) { g->kind = ZERO; split_out(spec, &g->out); g->size = strtoull(spec, NULL, 0); }
      else if (!strcmp(a, "--local")) { g->kind = LOCAL; g->size = strtoull(spec, NULL, 0); }
      else if (!strcmp(a, "--scalar")) { g->kind = SCALAR; g->bytes = read_file(spec, &g->size); }
      else if (!strcmp(a, "--hex")) {
        g->kind = SCALAR; g->size = strlen(spec) / 2; g->bytes = malloc(g->size + 1);
        for (size_t k = 0; k < g->size; k++) sscanf(spec + 2 * k, "%2hhx", &g->bytes[k]);
      } else { fprintf(stderr, "clrun: unknown option %s\n", a); return 2; }
    }
  }
  cl_context_properties props[3];
  cl_device_id dev = pick_device(props);
  cl_int err;
  cl_context ctx = clCreateContext(props, 1, &dev, NULL, NULL, &err);
  if (err) die("clCreateContext", err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  if (err) die("clCreateCommandQueue", err);
  size_t srclen;
  char *src = (char *)read_file(argv[1], &srclen);
  src = realloc(src, srclen + 1);
  src[srclen] = 0;
  cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err);
  if (err) die("clCreateProgramWithSource", err);
  err = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
  if (err) {
    char log[65536] = {0};
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "%s\n", log);
    die("clBuildProgram", err);
  }
  cl_kernel k = clCreateKernel(prog, argv[2], &err);
  if (err) die("clCreateKernel", err);
  for (int i = 0; i < nargs; i++) {
    struct arg *g = &args[i];
    if (g->kind == BUF || g->kind == ZERO) {
      if (g->kind == ZERO) g->bytes = calloc(g->size ? g->size : 1, 1);
      g->mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, g->size ? g->size : 1, g->bytes, &err);
      if (err) die("clCreateBuffer", err);
      err = clSetKernelArg(k, i, sizeof(cl_mem), &g->mem);
    } else if (g->kind == LOCAL) {
      err = clSetKernelArg(k, i, g->size, NULL);
    } else {
      err = clSetKernelArg(k, i, g->size, g->bytes);
    }
    if (err) die("clSetKernelArg", err);
  }
  double ms = 0;
  for (int r = 0; r < repeat; r++) {
    for (int i = 0; r > 0 && i < nargs; i++)
      if (args[i].mem) clEnqueueWriteBuffer(q, args[i].mem, CL_TRUE, 0, args[i].size, args[i].bytes, 0, NULL, NULL);
    double t0 = now_ms();
    err = clEnqueueNDRangeKernel(q, k, dims, offset, global, local, 0, NULL, NULL);
    if (err) die("clEnqueueNDRangeKernel", err);
    clFinish(q);
    ms = now_ms() - t0;
  }
  for (int i = 0; i < nargs; i++) {
    struct arg *g = &args[i];
    if (!g->mem || !g->out) continue;
    unsigned char *back = malloc(g->size ? g->size : 1);
    clEnqueueReadBuffer(q, g->mem, CL_TRUE, 0, g->size, back, 0, NULL, NULL);
    FILE *f = fopen(g->out, "wb");
    if (!f) { fprintf(stderr, "clrun: cannot write %s\n", g->out); return 2; }
    fwrite(back, 1, g->size, f);
    fclose(f);
  }
  printf("kernel_ms=%.3f\n", ms);
  return 0;
}
