// Benchmark: float arithmetic. All-pairs gravity over `n` bodies: each work-item adds up the
// softened pull of every body on its own (sub, mul, add, rsqrt), then takes a half time step
// and writes its new position and velocity.
__kernel void fp_nbody(__global const float* pos, __global const float* vel, __global float* out, int n) {
  uint i = get_global_id(0);
  float xi = pos[4 * i + 0], yi = pos[4 * i + 1], zi = pos[4 * i + 2];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; j++) {
    float dx = pos[4 * j + 0] - xi;
    float dy = pos[4 * j + 1] - yi;
    float dz = pos[4 * j + 2] - zi;
    float mass = pos[4 * j + 3];
    float d2 = dx * dx + dy * dy + dz * dz + 0.01f;
    float inv = rsqrt(d2);
    float s = mass * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  const float dt = 0.005f;
  float vx = vel[3 * i + 0] + dt * ax, vy = vel[3 * i + 1] + dt * ay, vz = vel[3 * i + 2] + dt * az;
  out[6 * i + 0] = xi + dt * vx;
  out[6 * i + 1] = yi + dt * vy;
  out[6 * i + 2] = zi + dt * vz;
  out[6 * i + 3] = vx;
  out[6 * i + 4] = vy;
  out[6 * i + 5] = vz;
}
