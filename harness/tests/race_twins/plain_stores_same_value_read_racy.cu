// TWIN(racy): plain stores of one value beside a read, inter-block — blocks 1 to 3 store 1 to one
// flag, as in the clean twin, while block 0 reads it with nothing ordering the read and the
// stores: it sees 0 or 1 depending on timing. Stores that agree with each other still race
// with a read. Twin: plain_stores_same_value_clean.cu.
// check: --entry mark_changed --grid 4 --block 64 --arg changed:i32[1]=zeros --arg seen:i32[1]=zeros
// why: different blocks
// ptx: racy
// gpu: outputs
__global__ void mark_changed(int *changed, int *seen)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        *seen = *changed; // RACE
    } else {
        *changed = 1; // RACE
    }
}
