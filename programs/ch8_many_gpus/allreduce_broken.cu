// BROKEN(race): allreduce.cu without the event wait before step 2: a device copies its peer's half before the peer has finished summing it — fixed in allreduce.cu
// Build: nvcc -o allreduce_broken programs/ch8_many_gpus/allreduce_broken.cu
// Run: ./allreduce_broken 4096
// Devices: 2
// Expect: race across devices at the BUG line: copy_half on one device reads the peer's half while add_half on the peer may still be writing it
// Thread mapping: grid-stride loops over one half of the vector, reading the peer's buffer through peer access.
// Shared memory: none.
// Launch: on each device, 8 blocks of 256 threads per step; n, the first argument, is the length of every device's vector.

#include "../common.h"

#include <cmath>
#include <vector>

__global__ void add_half(float *mine, const float *theirs, unsigned int begin, unsigned int end)
{
    for (unsigned int i = begin + blockIdx.x * blockDim.x + threadIdx.x; i < end; i += blockDim.x * gridDim.x) {
        mine[i] += theirs[i];
    }
}

__global__ void copy_half(float *mine, const float *theirs, unsigned int begin, unsigned int end)
{
    for (unsigned int i = begin + blockIdx.x * blockDim.x + threadIdx.x; i < end; i += blockDim.x * gridDim.x) {
        mine[i] = theirs[i]; // BUG: nothing ordered this read after the peer's add_half: the host queued no cudaStreamWaitEvent before this launch
    }
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 4096);
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (devices < 2) {
        std::printf("all-reduce needs 2 devices and this machine has %d: nothing to do\n", devices);
        return 0;
    }
    int can01 = 0, can10 = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    if (!can01 || !can10) {
        std::printf("devices 0 and 1 cannot read each other's memory: nothing to do\n");
        return 0;
    }

    // Multiples of 1/256 in [-4, 4): their sums are exact, so both sides round alike.
    Lcg rng{8};
    std::vector<float> x[2] = {std::vector<float>(n), std::vector<float>(n)};
    for (std::vector<float> &v : x) {
        for (float &value : v) {
            value = (float)((int)(rng.next() % 2048) - 1024) / 256.0f;
        }
    }

    float *d_x[2];
    cudaStream_t stream[2];
    cudaEvent_t summed[2];
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
        CUDA_CHECK(cudaMalloc(&d_x[d], n * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(d_x[d], x[d].data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaStreamCreate(&stream[d]));
        CUDA_CHECK(cudaEventCreateWithFlags(&summed[d], cudaEventDisableTiming));
        // The peer's stream reads this buffer soon, and nothing orders it after this device's copy.
        CUDA_CHECK(cudaDeviceSynchronize());
    }

    // Half h is [half[h], half[h + 1]): the two cover all n values, odd or even.
    const unsigned int half[3] = {0, n / 2, n};
    // Step 1: device d sums half d; the halves differ, so the two devices never touch the same values.
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        add_half<<<8, 256, 0, stream[d]>>>(d_x[d], d_x[1 - d], half[d], half[d + 1]);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(summed[d], stream[d]));
    }
    // Step 2: device d copies half 1 - d, which its peer has summed.
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        copy_half<<<8, 256, 0, stream[d]>>>(d_x[d], d_x[1 - d], half[1 - d], half[2 - d]);
        CUDA_CHECK(cudaGetLastError());
    }

    std::vector<float> result[2] = {std::vector<float>(n), std::vector<float>(n)};
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaStreamSynchronize(stream[d]));
    }
    double checksum = 0;
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemcpy(result[d].data(), d_x[d], n * sizeof(float), cudaMemcpyDeviceToHost));
        // One float addition, correctly rounded on both sides: the GPU's sum is the float nearest the exact one.
        for (unsigned int i = 0; i < n; ++i) {
            double want = (double)x[0][i] + x[1][i];
            if (std::fabs(result[d][i] - want) > std::ldexp(std::fabs(want), -24)) {
                std::printf("all-reduce over 2 devices: device %d holds %.6f at %u, the CPU says %.6f\n", d,
                            result[d][i], i, want);
                return 1;
            }
            checksum += result[d][i];
        }
    }
    for (int d = 0; d < 2; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaEventDestroy(summed[d]));
        CUDA_CHECK(cudaStreamDestroy(stream[d]));
        CUDA_CHECK(cudaFree(d_x[d]));
    }
    std::printf("all-reduce of %u floats over 2 devices: both hold the sums, checksum %.4f, matches the CPU\n", n,
                checksum);
    return 0;
}
