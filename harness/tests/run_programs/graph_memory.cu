// FIXED: memory-allocation and free nodes. A graph allocates its scratch memory itself, made
// node by node and by capturing cudaMallocAsync/cudaFreeAsync; the graph memory pool's
// footprint grows when a launch needs memory, is reused by later launches on the same stream,
// and shrinks when trimmed.
#include <cstdio>

const size_t BYTES = 64 << 20;

__global__ void fill(int *x, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v + i;
}

__global__ void add_into(const int *x, int *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, x[i]);
}

static unsigned long long footprint(cudaGraphMemAttributeType what) {
    size_t bytes = 0;
    cudaDeviceGetGraphMemAttribute(0, what, &bytes);
    return bytes >> 20;
}

static void print_footprint(const char *when) {
    printf("%-44s %4llu MiB in use\n", when, footprint(cudaGraphMemAttrUsedMemCurrent));
}

static cudaMemAllocNodeParams on_device(size_t bytes) {
    cudaMemAllocNodeParams params = {};
    params.bytesize = bytes;
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = 0;
    return params;
}

int main() {
    const int n = 256;
    int *d_sum;
    cudaMalloc(&d_sum, sizeof(int));
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

    // alloc a -> fill a -> sum a -> free a -> alloc b -> free b: b may take a's address.
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    cudaMemAllocNodeParams alloc = on_device(BYTES);
    cudaGraphNode_t alloc_a, fill_a, sum_a, free_a, alloc_b, free_b;
    cudaGraphAddMemAllocNode(&alloc_a, graph, nullptr, 0, &alloc);
    int *a = (int *)alloc.dptr;
    int n_ = n, base = 1;
    void *fill_args[] = {&a, &n_, &base}, *sum_args[] = {&a, &d_sum, &n_};
    cudaKernelNodeParams kernel = {};
    kernel.gridDim = dim3(1);
    kernel.blockDim = dim3(n);
    kernel.func = (void *)fill;
    kernel.kernelParams = fill_args;
    cudaGraphAddKernelNode(&fill_a, graph, &alloc_a, 1, &kernel);
    kernel.func = (void *)add_into;
    kernel.kernelParams = sum_args;
    cudaGraphAddKernelNode(&sum_a, graph, &fill_a, 1, &kernel);
    cudaGraphAddMemFreeNode(&free_a, graph, &sum_a, 1, a);
    cudaGraphAddMemAllocNode(&alloc_b, graph, &free_a, 1, &alloc);
    int *b = (int *)alloc.dptr;
    cudaGraphAddMemFreeNode(&free_b, graph, &alloc_b, 1, b);
    printf("b takes a's address: %s\n", a == b ? "yes" : "no");

    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    print_footprint("after instantiating");
    cudaMemset(d_sum, 0, sizeof(int));
    cudaDeviceSynchronize();
    cudaGraphLaunch(exec, stream);
    cudaStreamSynchronize(stream);
    print_footprint("after the first launch");
    cudaGraphLaunch(exec, stream);
    cudaStreamSynchronize(stream);
    print_footprint("after the second launch, same stream");
    int sum = 0;
    cudaMemcpy(&sum, d_sum, sizeof(int), cudaMemcpyDeviceToHost);
    printf("sum of both launches: %d (expected %d)\n", sum, n * (n + 1));

    // The same work captured from a stream: cudaMallocAsync and cudaFreeAsync become nodes.
    cudaGraph_t captured;
    int *c;
    base = 1000;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    cudaMallocAsync(&c, n * sizeof(int), stream);
    fill<<<1, n, 0, stream>>>(c, n, base);
    add_into<<<1, n, 0, stream>>>(c, d_sum, n);
    cudaFreeAsync(c, stream);
    cudaStreamEndCapture(stream, &captured);
    cudaGraphExec_t captured_exec;
    cudaGraphInstantiate(&captured_exec, captured, 0);
    cudaMemsetAsync(d_sum, 0, sizeof(int), stream);
    cudaGraphLaunch(captured_exec, stream);
    cudaMemcpyAsync(&sum, d_sum, sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    printf("captured graph's sum: %d (expected %d)\n", sum, n * 1000 + n * (n - 1) / 2);

    // An allocation the graph does not free lives on after the launch, until cudaFree.
    cudaGraph_t keeps;
    cudaGraphCreate(&keeps, 0);
    cudaGraphNode_t kept_node;
    alloc = on_device(BYTES);
    cudaGraphAddMemAllocNode(&kept_node, keeps, nullptr, 0, &alloc);
    cudaGraphExec_t keeps_exec;
    cudaGraphInstantiate(&keeps_exec, keeps, 0);
    cudaGraphLaunch(keeps_exec, stream);
    cudaStreamSynchronize(stream);
    print_footprint("with an allocation kept after its launch");
    cudaDeviceGraphMemTrim(0);
    print_footprint("trimmed while it is kept");
    cudaFree(alloc.dptr);
    print_footprint("after cudaFree of it");
    cudaDeviceGraphMemTrim(0);
    print_footprint("trimmed");
    printf("%-44s %4llu MiB\n", "high-water mark", footprint(cudaGraphMemAttrUsedMemHigh));
    size_t reset = 0;
    cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &reset);
    printf("%-44s %4llu MiB\n", "high-water mark, reset", footprint(cudaGraphMemAttrUsedMemHigh));

    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaGraphExecDestroy(exec);
    cudaGraphExecDestroy(captured_exec);
    cudaGraphExecDestroy(keeps_exec);
    cudaGraphDestroy(graph);
    cudaGraphDestroy(captured);
    cudaGraphDestroy(keeps);
    cudaStreamDestroy(stream);
    cudaFree(d_sum);
    return 0;
}
