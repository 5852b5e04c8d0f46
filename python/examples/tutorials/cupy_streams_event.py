"""The CuPy streams bug fixed: the copy stream records an event, the compute stream waits.

Expect: correct
"""
import numpy as np
import racetrack.cupy as cp

scale = cp.RawKernel(r'''
extern "C" __global__
void scale(float *x, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}
''', 'scale')

n = 1024
data = np.arange(n, dtype=np.float32)
x = cp.empty(n, dtype=cp.float32)
copy_stream = cp.cuda.Stream(non_blocking=True)
compute_stream = cp.cuda.Stream(non_blocking=True)

x.set(data, stream=copy_stream)
copied = copy_stream.record()
compute_stream.wait_event(copied)
scale((n // 128,), (128,), (x, np.float32(2), np.int32(n)), stream=compute_stream)
result = x.get(stream=compute_stream)
compute_stream.synchronize()
print(result[:4])
assert np.allclose(result, 2 * data)
