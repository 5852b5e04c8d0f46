// TWIN(clean): plain stores of one value, inter-block — the first thread of every warp of every
// block stores 1 to one flag, with nothing ordering the stores; they agree, so the flag ends 1
// whichever lands last, and compute-sanitizer's racecheck reports no hazard for such a pair
// (a "something changed" flag, as Rodinia's bfs sets it).
// Twin: plain_stores_different_values_racy.cu, plain_stores_same_value_read_racy.cu.
// check: --entry mark_changed --grid 4 --block 64 --arg changed:i32[1]=zeros
// expect: changed = 1
__global__ void mark_changed(int *changed)
{
    if (threadIdx.x % 32 == 0) {
        *changed = 1;
    }
}
