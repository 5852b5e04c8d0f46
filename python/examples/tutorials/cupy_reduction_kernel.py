"""CuPy's ReductionKernel: the L2 norm of each row.

Expect: correct
Float32 sums: at most 5 terms (a row's 5 squares).
"""
import numpy as np
import racetrack.cupy as cp

l2norm_kernel = cp.ReductionKernel(
    'T x',  # input params
    'T y',  # output params
    'x * x',  # map
    'a + b',  # reduce
    'y = sqrt(a)',  # post-reduction map
    '0',  # identity value
    'l2norm')  # kernel name

x = cp.arange(10, dtype=np.float32).reshape(2, 5)
norms = l2norm_kernel(x, axis=1)
print(norms)
assert np.allclose(cp.asnumpy(norms), np.linalg.norm(np.arange(10, dtype=np.float32).reshape(2, 5), axis=1))
