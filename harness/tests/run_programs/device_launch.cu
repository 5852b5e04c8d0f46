// FIXED: kernels that launch kernels (dynamic parallelism). The root kernel fills the array,
// then launches a binary tree of grids from the device: each grid splits its range in two and
// launches a child grid for each half on its own stream, and the leaves add up their part.
// A tail launch prints the sum once the whole tree is done; the host prints it too.
// Build: nvcc -rdc=true -lcudadevrt -o device_launch harness/tests/run_programs/device_launch.cu
#include <cstdio>

__global__ void tree_sum(const int *x, int lo, int hi, unsigned long long *sum, int *grids) {
    if (threadIdx.x == 0) atomicAdd(grids, 1);
    if (hi - lo <= 64) {
        int i = lo + threadIdx.x;
        if (i < hi) atomicAdd(sum, (unsigned long long)x[i]);
        return;
    }
    if (threadIdx.x == 0) {
        int mid = lo + (hi - lo) / 2;
        cudaStream_t left, right;
        cudaStreamCreateWithFlags(&left, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&right, cudaStreamNonBlocking);
        tree_sum<<<1, 64, 0, left>>>(x, lo, mid, sum, grids);
        tree_sum<<<1, 64, 0, right>>>(x, mid, hi, sum, grids);
        cudaStreamDestroy(left);
        cudaStreamDestroy(right);
    }
}

__global__ void report(const unsigned long long *sum, const int *grids, int n) {
    printf("tail launch: sum of 1..%d = %llu from %d grids\n", n, *sum, *grids);
}

__global__ void root(int *x, int n, unsigned long long *sum, int *grids) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = i + 1;
    if (threadIdx.x == 0) {
        *sum = 0;
        *grids = 0;
    }
    // What the block wrote before the launch is what the children see.
    __syncthreads();
    if (threadIdx.x == 0) {
        tree_sum<<<1, 64>>>(x, 0, n, sum, grids);
        if (cudaGetLastError() != cudaSuccess) printf("the launch failed\n");
        report<<<1, 1, 0, cudaStreamTailLaunch>>>(sum, grids, n);
    }
}

int main() {
    const int n = 1000;
    int *d_x, *d_grids, h_grids = 0;
    unsigned long long *d_sum, h_sum = 0;
    cudaMalloc(&d_x, n * sizeof(int));
    cudaMalloc(&d_sum, sizeof(unsigned long long));
    cudaMalloc(&d_grids, sizeof(int));
    root<<<1, 128>>>(d_x, n, d_sum, d_grids);
    cudaMemcpy(&h_sum, d_sum, sizeof(h_sum), cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_grids, d_grids, sizeof(h_grids), cudaMemcpyDeviceToHost);
    cudaError_t err = cudaGetLastError();
    printf("host: sum of 1..%d = %llu (expected %d), %d grids, %s\n", n, h_sum, n * (n + 1) / 2,
           h_grids, cudaGetErrorString(err));
    cudaFree(d_x);
    cudaFree(d_sum);
    cudaFree(d_grids);
    return h_sum == (unsigned long long)n * (n + 1) / 2 ? 0 : 1;
}
