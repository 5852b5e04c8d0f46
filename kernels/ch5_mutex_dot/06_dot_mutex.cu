// FIXED: dot product finished on the device: each block adds its sum into *c under the mutex.
// Thread mapping: as 04_partial_dot.cu; then thread 0 of each block takes the lock and adds s_block[0] to *c.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: any grid × a power-of-two block up to 1024 threads; *c and *mutex start at 0.

#define MAX_THREADS 1024

struct Lock {
    int *mutex;

    __device__ void lock()
    {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        __threadfence();
    }

    __device__ void unlock()
    {
        __threadfence();
        atomicExch(mutex, 0);
    }
};

// ANCHOR: kernel
extern "C" __global__ void dot_mutex(const float *a, const float *b, unsigned int n, float *c, int *mutex)
{
    __shared__ float s_block[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = blockIdx.x * blockDim.x + tid; j < n; j += blockDim.x * gridDim.x) {
        sum += a[j] * b[j];
    }
    s_block[tid] = sum;
    __syncthreads();

    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s_block[tid] += s_block[tid + i];
        }
        __syncthreads();
    }
    // ANCHOR: add_under_lock
    if (tid == 0) {
        Lock block_lock{mutex};
        block_lock.lock();
        *c += s_block[0];
        block_lock.unlock();
    }
    // ANCHOR_END: add_under_lock
}
// ANCHOR_END: kernel
