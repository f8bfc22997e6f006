# A PyOpenCL script: saxpy and a sum, printed (vdb record tests compare with pocl's output).
import numpy as np
import pyopencl as cl

ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, """
__kernel void saxpy(float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
""").build()
n = 512
x = np.arange(n, dtype=np.float32)
y = np.full(n, 3.0, dtype=np.float32)
mf = cl.mem_flags
dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
dy = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
prg.saxpy(queue, (n,), (64,), np.float32(0.5), dx, dy)
out = np.empty_like(y)
cl.enqueue_copy(queue, out, dy)
queue.finish()
print("y[0..4] =", out[:4].tolist(), "sum =", float(out.sum()))
