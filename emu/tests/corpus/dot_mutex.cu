// FIXED: dot product; each block reduces in shared memory, then adds its sum under a mutex.
// Thread mapping: grid-stride loop over n; block tree reduction.
// Shared memory: 256 floats.
// Launch: blockDim.x == 256, any grid.

#define THREADS 256

__device__ void lock(int *mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int *mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

extern "C" __global__ void dot_mutex(const float *a, const float *b, float *c, int n, int *mutex)
{
    __shared__ float cache[THREADS];
    int tid = threadIdx.x;
    float temp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        temp += a[i] * b[i];
    }
    cache[tid] = temp;
    __syncthreads();
    for (int i = blockDim.x / 2; i > 0; i /= 2) {
        if (tid < i) {
            cache[tid] += cache[tid + i];
        }
        __syncthreads();
    }
    if (tid == 0) {
        lock(mutex);
        *c += cache[0];
        unlock(mutex);
    }
}
