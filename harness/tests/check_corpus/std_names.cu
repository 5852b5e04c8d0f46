// FIXED: a whole program that uses what the C++ headers it includes for its host code bring to
// device code under nvcc: int32_t without <cstdint>, std::enable_if and std::is_same, and
// std::numeric_limits in a constant; with `using namespace std;`, exp and max still mean CUDA's.
// NVRTC ships no standard library, so check takes these names from libcu++.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: at least n threads.
#include <algorithm>
#include <iostream>
#include <limits>
#include <type_traits>
#include <vector>
using namespace std;

constexpr float kLargest = numeric_limits<float>::max();

template <typename T, typename std::enable_if<std::is_same<T, float>::value, int>::type = 0>
__device__ T soft_clip(T x)
{
    return x > 0.0f ? x : exp(x) - 1.0f;
}

__global__ void activate(const float *in, float *out, int32_t n)
{
    int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = max(soft_clip(in[i]), -kLargest);
    }
}

int main()
{
    vector<float> host(256, 1.0f);
    cout << host.size() << " inputs\n";
    return 0;
}
