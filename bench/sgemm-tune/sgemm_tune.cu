// Times one SGEMM kernel file of kernels/ch7_matmul (its #defines edited by tune.sh) against
// cublasSgemm on square matrices, and compares it with cuBLAS on a spread of elements.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#include <cmath>
#include <cublas_v2.h>
#include KERNEL_FILE

#define CHECK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(err_), __LINE__); exit(1);} } while (0)

int main(int argc, char **argv)
{
    const char *label = argv[1];
    for (int arg = 2; arg < argc; ++arg) {
        int n = atoi(argv[arg]);
        size_t len = (size_t)n * n;
        std::vector<float> a(len), b(len), c(len), r(len);
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        for (auto &x : a) x = dist(rng);
        for (auto &x : b) x = dist(rng);
        float *A, *B, *C, *R;
        CHECK(cudaMalloc(&A, len * 4)); CHECK(cudaMalloc(&B, len * 4)); CHECK(cudaMalloc(&C, len * 4)); CHECK(cudaMalloc(&R, len * 4));
        CHECK(cudaMemcpy(A, a.data(), len * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(B, b.data(), len * 4, cudaMemcpyHostToDevice));
        cublasHandle_t h; cublasCreate(&h);
        float one = 1, zero = 0;
        dim3 grid(n / TILE_N, n / TILE_M), block(BLOCK_THREADS);
        cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
        float ms_k = 0, ms_c = 0;
        for (int round = 0; round < 2; ++round) {
            ENTRY<<<grid, block>>>(A, B, C, n, n, n);
            CHECK(cudaGetLastError());
            cudaEventRecord(s);
            for (int i = 0; i < 20; ++i) ENTRY<<<grid, block>>>(A, B, C, n, n, n);
            cudaEventRecord(e); CHECK(cudaEventSynchronize(e));
            cudaEventElapsedTime(&ms_k, s, e);
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, R, n);
            cudaEventRecord(s);
            for (int i = 0; i < 20; ++i) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, R, n);
            cudaEventRecord(e); CHECK(cudaEventSynchronize(e));
            cudaEventElapsedTime(&ms_c, s, e);
        }
        CHECK(cudaMemcpy(c.data(), C, len * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(r.data(), R, len * 4, cudaMemcpyDeviceToHost));
        double worst = 0;
        for (size_t i = 0; i < len; i += 997) worst = fmax(worst, fabs(c[i] - r[i]));
        double flops = 2.0 * n * n * (double)n;
        double gk = flops / (ms_k / 20 / 1e3) / 1e9, gc = flops / (ms_c / 20 / 1e3) / 1e9;
        printf("%-40s n=%5d  %8.0f GFLOP/s  cuBLAS %8.0f  %5.1f%%  maxdiff %.1e\n", label, n, gk, gc, 100 * gk / gc, worst);
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R); cublasDestroy(h);
    }
    return 0;
}
