// FIXED: device 0 reads every device's block sums where they are, through peer access: no copies.
// Thread mapping: one block; thread tid walks the flattened (device, block) pairs; then a shared-memory tree.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: one block of a power-of-two size up to 1024 threads, on device 0, with peer access to every other device.

#define MAX_THREADS 1024

// ANCHOR: kernel
// `sums_of` holds one pointer per device: device pointers are unique across the devices of a
// process (unified addressing), so a pointer into device 1's memory means the same on device 0.
extern "C" __global__ void sum_over_peers(const float *const *sums_of, unsigned int devices,
                                          unsigned int per_device, float *total)
{
    __shared__ float s[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    unsigned long long count = (unsigned long long)devices * per_device;
    for (unsigned long long j = tid; j < count; j += blockDim.x) {
        sum += sums_of[j / per_device][j % per_device];
    }
    s[tid] = sum;
    __syncthreads();
    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s[tid] += s[tid + i];
        }
        __syncthreads();
    }
    if (tid == 0) {
        *total = s[0];
    }
}
// ANCHOR_END: kernel
