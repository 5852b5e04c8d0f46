// FIXED: changing an instantiated graph instead of instantiating it again. A kernel node gets
// new arguments with cudaGraphExecKernelNodeSetParams; a graph captured again with other
// arguments replaces the instantiated one's with cudaGraphExecUpdate, which refuses a graph of
// another shape and says why.
#include <cstdio>

__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

static const char *result_name(cudaGraphExecUpdateResult r) {
    switch (r) {
    case cudaGraphExecUpdateSuccess: return "cudaGraphExecUpdateSuccess";
    case cudaGraphExecUpdateErrorTopologyChanged: return "cudaGraphExecUpdateErrorTopologyChanged";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "cudaGraphExecUpdateErrorNodeTypeChanged";
    default: return "another reason";
    }
}

// y = 0, then y += a * x on `stream`, as a captured graph; with `extra`, y += a * x twice.
static cudaGraph_t capture(cudaStream_t stream, float a, const float *x, float *y, int n, bool twice) {
    cudaGraph_t graph;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    cudaMemsetAsync(y, 0, n * sizeof(float), stream);
    axpy<<<(n + 127) / 128, 128, 0, stream>>>(a, x, y, n);
    if (twice) axpy<<<(n + 127) / 128, 128, 0, stream>>>(a, x, y, n);
    cudaStreamEndCapture(stream, &graph);
    return graph;
}

int main() {
    const int n = 1000;
    float h[n], *d_x, *d_y, *d_z;
    for (int i = 0; i < n; i++) h[i] = i;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMalloc(&d_z, n * sizeof(float));
    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaStream_t stream;
    cudaStreamCreate(&stream);

    // One kernel node, launched with new arguments each time.
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    float a = 1.0f;
    int count = n;
    void *args[] = {&a, &d_x, &d_y, &count};
    cudaKernelNodeParams params = {};
    params.func = (void *)axpy;
    params.gridDim = dim3((n + 127) / 128);
    params.blockDim = dim3(128);
    params.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphUpload(exec, stream);
    cudaMemsetAsync(d_y, 0, n * sizeof(float), stream);
    cudaMemsetAsync(d_z, 0, n * sizeof(float), stream);
    for (int k = 1; k <= 3; k++) {
        a = k;
        args[2] = k % 2 ? (void *)&d_y : (void *)&d_z;
        cudaGraphExecKernelNodeSetParams(exec, node, &params);
        cudaGraphLaunch(exec, stream);
    }
    // The arguments were copied when set: changing them now changes nothing.
    a = 100.0f;
    cudaGraphLaunch(exec, stream);
    float y10, z10;
    cudaMemcpyAsync(&y10, d_y + 10, sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync(&z10, d_z + 10, sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    printf("set params: y[10] = %.0f, z[10] = %.0f\n", y10, z10);

    // A graph captured again with other arguments updates the instantiated one.
    cudaGraph_t first = capture(stream, 2.0f, d_x, d_y, n, false);
    cudaGraphExec_t captured_exec;
    cudaGraphInstantiate(&captured_exec, first, 0);
    for (int k = 1; k <= 3; k++) {
        cudaGraph_t again = capture(stream, 2.0f * k, d_x, d_y, n, false);
        cudaGraphExecUpdateResultInfo info;
        cudaError_t e = cudaGraphExecUpdate(captured_exec, again, &info);
        cudaGraphLaunch(captured_exec, stream);
        cudaMemcpyAsync(&y10, d_y + 10, sizeof(float), cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
        printf("update %d: %s, %s, y[10] = %.0f\n", k, cudaGetErrorName(e), result_name(info.result), y10);
        cudaGraphDestroy(again);
    }

    // A graph with one more node cannot replace it: the instantiated graph stays as it was.
    cudaGraph_t longer = capture(stream, 5.0f, d_x, d_y, n, true);
    cudaGraphExecUpdateResultInfo info;
    cudaError_t e = cudaGraphExecUpdate(captured_exec, longer, &info);
    printf("longer graph: %s, %s\n", cudaGetErrorName(e), result_name(info.result));
    printf("after it: %s\n", cudaGetErrorString(cudaGetLastError()));
    cudaGraphLaunch(captured_exec, stream);
    cudaMemcpyAsync(&y10, d_y + 10, sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    printf("still the last update: y[10] = %.0f\n", y10);

    cudaGraphExecDestroy(exec);
    cudaGraphExecDestroy(captured_exec);
    cudaGraphDestroy(graph);
    cudaGraphDestroy(first);
    cudaGraphDestroy(longer);
    cudaStreamDestroy(stream);
    cudaFree(d_x);
    cudaFree(d_y);
    cudaFree(d_z);
    return 0;
}
