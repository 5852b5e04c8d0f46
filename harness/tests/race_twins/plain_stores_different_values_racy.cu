// TWIN(racy): plain stores of different values, inter-block — the first thread of every warp of
// every block stores its block's number to one word, with nothing ordering the stores: which
// value is left depends on which lands last. Twin: plain_stores_same_value_clean.cu.
// check: --entry mark_changed --grid 4 --block 64 --arg changed:i32[1]=zeros
// why: different blocks
// ptx: racy
// gpu: outputs
__global__ void mark_changed(int *changed)
{
    if (threadIdx.x % 32 == 0) {
        *changed = blockIdx.x + 1; // RACE
    }
}
