// FIXED: a kernel that leans on what nvcc's headers bring without being asked: `uint` (from the
// C library), INFINITY and M_PI (math.h, which cuda_runtime.h includes), and __nv_bfloat16
// (through cuBLAS's header); <algorithm> and <vector> are there for the host. `check` compiles
// it as nvcc would.
// Thread mapping: one block strides over the input; warps reduce with shuffles, warp 0's lane 0
// finishes.
// Shared memory: one float per warp.
// Launch: 1 block, a multiple of 32 threads.
#include <algorithm>
#include <vector>
#include <cublas_v2.h>

__global__ void scaled_max(const __nv_bfloat16 *in, float *out, uint n)
{
    __shared__ float best[32];
    float m = -INFINITY;
    for (uint i = threadIdx.x; i < n; i += blockDim.x) {
        m = fmaxf(m, __bfloat162float(in[i]));
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    if (threadIdx.x % 32 == 0) {
        best[threadIdx.x / 32] = m;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = -INFINITY;
        for (uint w = 0; w < blockDim.x / 32; ++w) {
            r = fmaxf(r, best[w]);
        }
        out[0] = r * static_cast<float>(M_PI);
    }
}
