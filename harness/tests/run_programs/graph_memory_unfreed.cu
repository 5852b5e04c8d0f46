// BROKEN(host): a graph that allocates memory and never frees it is launched again; its
// allocation from the first launch is still live, so the second launch fails.
#include <cstdio>

int main() {
    cudaGraph_t graph;
    cudaGraphCreate(&graph, 0);
    cudaMemAllocNodeParams alloc = {};
    alloc.bytesize = 1 << 20;
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    alloc.poolProps.location.id = 0;
    cudaGraphNode_t alloc_node;
    cudaGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &alloc);
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, 0);
    cudaError_t e = cudaGraphLaunch(exec, 0);  // BUG: alloc.dptr was not freed after the first launch
    printf("second launch: %s\n", cudaGetErrorName(e));
    cudaFree(alloc.dptr);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return 0;
}
