// FIXED: arrays that share an allocation, as a host that allocates once passes them. drift gets
// positions and velocities from one buffer (pos = d_state, vel = d_state + n); scale works in
// place when the host gives it the same buffer twice (scale(d_x, d_x, …)). check passes such
// pointers with --arg 'vel=pos+N' and --arg 'in=out'.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: at least n threads.

__global__ void drift(float *pos, const float *vel, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        pos[i] += dt * vel[i];
    }
}

__global__ void scale(float *out, const float *in, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = factor * in[i];
    }
}
