"""Work on CuPy streams: each chunk is copied in, scaled and copied out on a stream of its own.

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

chunk = 512
data = np.arange(4 * chunk, dtype=np.float32)
result = np.empty_like(data)
streams = [cp.cuda.Stream() for _ in range(4)]
parts = [cp.empty(chunk, dtype=cp.float32) for _ in range(4)]
for k, (stream, part) in enumerate(zip(streams, parts)):
    part.set(data[k * chunk:(k + 1) * chunk], stream=stream)
    with stream:
        scale((chunk // 128,), (128,), (part, np.float32(3), np.int32(chunk)))
    result[k * chunk:(k + 1) * chunk] = part.get(stream=stream)
for stream in streams:
    stream.synchronize()
print(result[:4], result[-4:])
assert np.allclose(result, 3 * data)
