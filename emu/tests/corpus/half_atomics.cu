// FIXED: atomicAdd on packed half pairs and on single halves, as CUDA's __half2 and __half
// overloads compile (atom.add.noftz.f16x2 / .bf16x2 / .f16), many threads on a few words.
// Thread mapping: thread t adds (1, 0.5) to pairs[t % 4], (1, 2) to bf_pairs[t % 4] and 0.25
// to halves[t % 8]; every sum is exact in its type for up to 256 threads.
// Shared memory: none.
// Launch: any grid of up to 256 threads in all; pairs, bf_pairs and halves start at zero.

extern "C" __global__ void half_atomics(unsigned int *pairs, unsigned int *bf_pairs,
                                        unsigned short *halves)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    // __floats2half2_rn(1.0f, 0.5f) and __floats2bfloat162_rn(1.0f, 2.0f), low half first.
    const unsigned int one_and_half = 0x38003c00u;
    const unsigned int one_and_two = 0x40003f80u;
    const unsigned short quarter = 0x3400u;
    unsigned int old_pair;
    asm volatile("atom.global.add.noftz.f16x2 %0, [%1], %2;"
                 : "=r"(old_pair)
                 : "l"(pairs + t % 4), "r"(one_and_half)
                 : "memory");
    asm volatile("red.global.add.noftz.bf16x2 [%0], %1;"
                 :
                 : "l"(bf_pairs + t % 4), "r"(one_and_two)
                 : "memory");
    unsigned short old_half;
    asm volatile("atom.global.add.noftz.f16 %0, [%1], %2;"
                 : "=h"(old_half)
                 : "l"(halves + t % 8), "h"(quarter)
                 : "memory");
}
