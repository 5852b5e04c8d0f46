// FIXED: thrust::inclusive_scan, which CUB runs as a decoupled look-back: each tile waits for
// its predecessors' status words with relaxed loads, the first of them before the wait loop.
// Those words are flags, not data, so nothing is reported.
// Compare: gpu
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/scan.h>

int main() {
    const int n = 1 << 18;
    thrust::device_vector<int> v(n, 1);
    thrust::inclusive_scan(v.begin(), v.end(), v.begin());
    int last = v[n - 1];
    printf("n = %d, last = %d\n", n, last);
    return last == n ? 0 : 1;
}
