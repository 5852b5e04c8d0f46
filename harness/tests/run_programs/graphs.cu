// FIXED: a CUDA graph made by stream capture (forked across two streams by events and joined
// back) and one made node by node, each instantiated once and launched several times.
#include <cstdio>

__global__ void add(float *x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}

__global__ void scale(float *x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

static void CUDART_CB count_launch(void *data) { *(int *)data += 1; }

int main() {
    const int n = 1000, launches = 3;
    float *h, *d_a, *d_b;
    cudaMallocHost(&h, n * sizeof(float));
    cudaMalloc(&d_a, n * sizeof(float));
    cudaMalloc(&d_b, n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = i;
    int host_calls = 0;

    cudaStream_t s1, s2;
    cudaEvent_t fork, join;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEventCreate(&fork);
    cudaEventCreate(&join);

    cudaGraph_t captured;
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(d_a, h, n * sizeof(float), cudaMemcpyHostToDevice, s1);
    cudaMemsetAsync(d_b, 0, n * sizeof(float), s1);
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    add<<<(n + 255) / 256, 256, 0, s1>>>(d_a, 1.0f, n);
    scale<<<(n + 255) / 256, 256, 0, s2>>>(d_b, 2.0f, n);
    cudaEventRecord(join, s2);
    cudaStreamWaitEvent(s1, join, 0);
    cudaLaunchHostFunc(s1, count_launch, &host_calls);
    cudaMemcpyAsync(h, d_a, n * sizeof(float), cudaMemcpyDeviceToHost, s1);
    cudaStreamEndCapture(s1, &captured);

    size_t nodes = 0;
    cudaGraphGetNodes(captured, nullptr, &nodes);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, captured, 0);
    for (int i = 0; i < launches; i++) cudaGraphLaunch(exec, s1);
    cudaStreamSynchronize(s1);
    printf("captured graph: %zu nodes, launched %d times, host node ran %d times, h[10] = %.1f\n",
           nodes, launches, host_calls, h[10]);

    cudaGraph_t built;
    cudaGraphCreate(&built, 0);
    cudaGraphNode_t copy_in, twice, copy_out;
    cudaGraphAddMemcpyNode1D(&copy_in, built, nullptr, 0, d_a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    float two = 2.0f;
    int count = n;
    void *args[] = {&d_a, &two, &count};
    cudaKernelNodeParams params = {};
    params.func = (void *)scale;
    params.gridDim = dim3((n + 255) / 256);
    params.blockDim = dim3(256);
    params.kernelParams = args;
    cudaGraphAddKernelNode(&twice, built, &copy_in, 1, &params);
    cudaGraphAddMemcpyNode1D(&copy_out, built, &twice, 1, h, d_a, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaGraphGetNodes(built, nullptr, &nodes);
    cudaGraphExec_t exec2;
    cudaGraphInstantiate(&exec2, built, 0);
    cudaGraphLaunch(exec2, s1);
    cudaStreamSynchronize(s1);
    printf("built graph: %zu nodes, h[10] = %.1f\n", nodes, h[10]);
    cudaError_t e = cudaGetLastError();
    printf("%s\n", cudaGetErrorString(e));
    cudaGraphExecDestroy(exec);
    cudaGraphExecDestroy(exec2);
    cudaGraphDestroy(captured);
    cudaGraphDestroy(built);
    return 0;
}
