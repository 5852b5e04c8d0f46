// reduce_better (tests/corpus/reduce_better.cu) in OpenCL C, for Oclgrind (see compare.sh).
#define THREADS_PER_BLOCK 1024u

__kernel void reduce_better(__global const float *x, unsigned int n, __global float *partial)
{
    __local float block_sums[THREADS_PER_BLOCK];
    unsigned int tid = get_local_id(0);
    unsigned int stride = get_local_size(0) * get_num_groups(0);

    float mine = 0.0f;
    for (unsigned int i = get_group_id(0) * get_local_size(0) + tid; i < n; i += stride) {
        mine += x[i];
    }
    block_sums[tid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);

    // `half` is a type in OpenCL C.
    for (unsigned int step = THREADS_PER_BLOCK / 2; step > 0; step /= 2) {
        if (tid < step) {
            block_sums[tid] += block_sums[tid + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (tid == 0) {
        partial[get_group_id(0)] = block_sums[0];
    }
}
