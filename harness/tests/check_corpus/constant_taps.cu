// FIXED: a 5-tap filter whose weights live in constant memory and whose gain is a __device__
// variable in a namespace, both set by the host (cudaMemcpyToSymbol) before the launch; in
// `racetrack check`, --symbol plays the host's part. Unset, the weights are 0, as on a GPU.
// Thread mapping: one output element per thread; the window is clamped at the ends.
// Shared memory: none.
// Launch: any grid covering n.

__constant__ float taps[5];

namespace filter {
__device__ float gain = 1.0f;
}

__global__ void convolve5(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float sum = 0.0f;
    for (int k = -2; k <= 2; ++k) {
        int j = min(max(i + k, 0), n - 1);
        sum += taps[k + 2] * in[j];
    }
    out[i] = filter::gain * sum;
}
