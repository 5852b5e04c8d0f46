// FIXED: device printf, one line per thread, with the conversions and flags C programs use.
// Thread mapping: one thread per element of values; thread i prints values[i].
// Shared memory: none.
// Launch: any; n values. Output order differs between runs on a GPU; the lines do not.

extern "C" __global__ void printf_formats(const float *values, const char *label, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float v = values[i];
    long long big = (long long)i * 1000000007LL;
    // ANCHOR: printf
    printf("%s[%03d] = %8.3f | %e | %g | %+d %i %u %x %X %#o %c | %ld %lld %llu | %-5d| %5.2s|%%\n",
           label, i, v, v * 1e-5f, v * 1e6f, i - 2, -i, (unsigned)i * 3u, i * 255, i * 255, i,
           'a' + i % 26, (long)i << 33, big, (unsigned long long)big * 3ull, i, label);
    // ANCHOR_END: printf
}
