// BROKEN(race): the parent fills the second half of the array after launching the child grid
// that sums it. A child grid sees what its parent wrote before the launch; what the parent
// writes afterwards races with the child, which may already be running.
// Build: nvcc -rdc=true -lcudadevrt -o device_launch_race harness/tests/run_programs/device_launch_race.cu
#include <cstdio>

__global__ void sum_child(const int *x, int n, int *out) {
    int s = 0;
    for (int i = 0; i < n; i++) s += x[i];  // BUG: reads x[n/2..], written after the launch
    *out = s;
}

__global__ void parent(int *x, int n, int *out) {
    for (int i = 0; i < n / 2; i++) x[i] = 1;
    sum_child<<<1, 1>>>(x, n, out);
    for (int i = n / 2; i < n; i++) x[i] = 1;
}

int main() {
    const int n = 64;
    int *d_x, *d_out, h_out = 0;
    cudaMalloc(&d_x, n * sizeof(int));
    cudaMalloc(&d_out, sizeof(int));
    parent<<<1, 1>>>(d_x, n, d_out);
    cudaMemcpy(&h_out, d_out, sizeof(int), cudaMemcpyDeviceToHost);
    printf("sum = %d\n", h_out);
    return 0;
}
