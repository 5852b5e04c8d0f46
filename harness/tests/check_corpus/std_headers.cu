// FIXED: a kernel that includes the C and C++ headers people reach for: fixed-width integers,
// limits, std::sqrt and printf's header. NVRTC ships none of them; check gives it stand-ins.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: at least n threads.
#include <cstdint>
#include <climits>
#include <cfloat>
#include <cmath>
#include <cstdio>

__global__ void lengths(const float2 *points, float *length, std::uint32_t *clamped, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float2 p = points[i];
        const float l = std::sqrt(p.x * p.x + p.y * p.y);
        length[i] = l < FLT_MAX ? l : 0.0f;
        const std::int64_t wide = static_cast<std::int64_t>(l) * INT_MAX;
        clamped[i] = wide > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(wide);
    }
}
