// FIXED: conditional graph nodes. A kernel decides, with the device-side
// cudaGraphSetConditional, whether an IF node runs its body or its else body, how many times a
// WHILE node runs its body, and which body of a SWITCH node runs.
#include <cstdio>

__global__ void decide_parity(const int *x, cudaGraphConditionalHandle handle) {
    cudaGraphSetConditional(handle, *x % 2);
}

__global__ void decide_index(const int *x, cudaGraphConditionalHandle handle) {
    cudaGraphSetConditional(handle, *x);
}

__global__ void record(int *log, int value) {
    log[log[0] + 1] = value;
    log[0] += 1;
}

// The loop's body: counts down, and ends the loop at zero.
__global__ void count_down(int *counter, int *log, cudaGraphConditionalHandle handle) {
    *counter -= 1;
    log[log[0] + 1] = *counter;
    log[0] += 1;
    if (*counter == 0) cudaGraphSetConditional(handle, 0);
}

static cudaGraphNode_t add_kernel(cudaGraph_t graph, const cudaGraphNode_t *after, void *kernel,
                                  void **args) {
    cudaGraphNodeParams params = {cudaGraphNodeTypeKernel};
    params.kernel.func = kernel;
    params.kernel.gridDim = dim3(1);
    params.kernel.blockDim = dim3(1);
    params.kernel.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddNode(&node, graph, after, nullptr, after ? 1 : 0, &params);
    return node;
}

static cudaGraphNode_t add_conditional(cudaGraph_t graph, const cudaGraphNode_t *after,
                                       cudaGraphConditionalHandle handle,
                                       cudaGraphConditionalNodeType type, unsigned size,
                                       cudaGraph_t *bodies) {
    cudaGraphNodeParams params = {cudaGraphNodeTypeConditional};
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = size;
    cudaGraphNode_t node;
    cudaGraphAddNode(&node, graph, after, nullptr, after ? 1 : 0, &params);
    for (unsigned i = 0; i < size; i++) bodies[i] = params.conditional.phGraph_out[i];
    return node;
}

static void print_log(const char *what, const int *d_log) {
    int log[16];
    cudaMemcpy(log, d_log, sizeof(log), cudaMemcpyDeviceToHost);
    printf("%s:", what);
    for (int i = 0; i < log[0]; i++) printf(" %d", log[i + 1]);
    printf("\n");
}

int main() {
    int *d_x, *d_log;
    cudaMalloc(&d_x, sizeof(int));
    cudaMalloc(&d_log, 16 * sizeof(int));

    // if (x is odd) record(1) else record(0)
    cudaGraph_t if_graph;
    cudaGraphCreate(&if_graph, 0);
    cudaGraphConditionalHandle parity;
    cudaGraphConditionalHandleCreate(&parity, if_graph);
    void *decide_args[] = {&d_x, &parity};
    cudaGraphNode_t decided = add_kernel(if_graph, nullptr, (void *)decide_parity, decide_args);
    cudaGraph_t branches[2];
    add_conditional(if_graph, &decided, parity, cudaGraphCondTypeIf, 2, branches);
    int one = 1, zero = 0;
    void *then_args[] = {&d_log, &one}, *else_args[] = {&d_log, &zero};
    add_kernel(branches[0], nullptr, (void *)record, then_args);
    add_kernel(branches[1], nullptr, (void *)record, else_args);
    cudaGraphExec_t if_exec;
    cudaGraphInstantiate(&if_exec, if_graph, 0);
    cudaMemset(d_log, 0, 16 * sizeof(int));
    for (int x = 4; x <= 7; x++) {
        cudaMemcpy(d_x, &x, sizeof(int), cudaMemcpyHostToDevice);
        cudaGraphLaunch(if_exec, 0);
    }
    cudaDeviceSynchronize();
    print_log("if x = 4..7 is odd", d_log);

    // do { counter -= 1 } while (counter != 0), the loop's first run given by the handle's default
    cudaGraph_t while_graph;
    cudaGraphCreate(&while_graph, 0);
    cudaGraphConditionalHandle going;
    cudaGraphConditionalHandleCreate(&going, while_graph, 1, cudaGraphCondAssignDefault);
    cudaGraph_t loop_body;
    add_conditional(while_graph, nullptr, going, cudaGraphCondTypeWhile, 1, &loop_body);
    // The body is captured from a stream into the graph the node made.
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaStreamBeginCaptureToGraph(stream, loop_body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal);
    count_down<<<1, 1, 0, stream>>>(d_x, d_log, going);
    cudaStreamEndCapture(stream, nullptr);
    cudaGraphExec_t while_exec;
    cudaGraphInstantiate(&while_exec, while_graph, 0);
    int five = 5;
    cudaMemcpy(d_x, &five, sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(d_log, 0, 16 * sizeof(int));
    cudaGraphLaunch(while_exec, stream);
    cudaStreamSynchronize(stream);
    print_log("while counting down from 5", d_log);

    // switch (x) { case 0: record(10); case 1: record(11); case 2: record(12); } none past 2
    cudaGraph_t switch_graph;
    cudaGraphCreate(&switch_graph, 0);
    cudaGraphConditionalHandle index;
    cudaGraphConditionalHandleCreate(&index, switch_graph);
    void *index_args[] = {&d_x, &index};
    decided = add_kernel(switch_graph, nullptr, (void *)decide_index, index_args);
    cudaGraph_t cases[3];
    add_conditional(switch_graph, &decided, index, cudaGraphCondTypeSwitch, 3, cases);
    int values[3] = {10, 11, 12};
    void *case_args[3][2] = {{&d_log, &values[0]}, {&d_log, &values[1]}, {&d_log, &values[2]}};
    for (int c = 0; c < 3; c++) add_kernel(cases[c], nullptr, (void *)record, case_args[c]);
    cudaGraphExec_t switch_exec;
    cudaGraphInstantiate(&switch_exec, switch_graph, 0);
    cudaMemset(d_log, 0, 16 * sizeof(int));
    for (int x = 3; x >= 0; x--) {
        cudaMemcpy(d_x, &x, sizeof(int), cudaMemcpyHostToDevice);
        cudaGraphLaunch(switch_exec, 0);
    }
    cudaDeviceSynchronize();
    print_log("switch on x = 3..0", d_log);

    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaGraphExecDestroy(if_exec);
    cudaGraphExecDestroy(while_exec);
    cudaGraphExecDestroy(switch_exec);
    cudaGraphDestroy(if_graph);
    cudaGraphDestroy(while_graph);
    cudaGraphDestroy(switch_graph);
    cudaStreamDestroy(stream);
    cudaFree(d_x);
    cudaFree(d_log);
    return 0;
}
