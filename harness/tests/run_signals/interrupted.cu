// A racy kernel, then one that would run for hours on the emulator: Ctrl-C during the second
// ends the program with the first one's race reported, and a line saying where it stopped.
#include <cstdio>

__global__ void count(int *total) {
    *total += 1;  // a race: every thread's read-modify-write of one int
}

__global__ void for_hours(unsigned long long *out, unsigned long long n) {
    unsigned long long sum = 0;
    for (unsigned long long i = 0; i < n; ++i) {
        sum += i ^ (sum >> 3);
    }
    *out = sum;
}

int main() {
    int *total;
    unsigned long long *out;
    cudaMalloc(&total, sizeof(int));
    cudaMemset(total, 0, sizeof(int));
    cudaMalloc(&out, sizeof(unsigned long long));
    count<<<1, 64>>>(total);
    cudaDeviceSynchronize();
    printf("the long kernel starts\n");
    fflush(stdout);
    for_hours<<<1, 32>>>(out, 1ull << 40);
    cudaDeviceSynchronize();
    printf("it finished\n");
    return 0;
}
