// `#include <cupy/complex.cuh>` for racetrack's CuPy face: CuPy's `complex<T>` (a
// `thrust::complex` there) as libcu++'s `cuda::std::complex<T>`, which has the same layout (two
// T, real first) and the operators and functions kernels use (`+`, `*` with a T, `abs`, `exp`).
#pragma once
#include <cuda/std/complex>

template <typename T>
using complex = cuda::std::complex<T>;
