// `#include <pycuda-complex.hpp>` for racetrack's PyCUDA face: PyCUDA's `pycuda::complex<T>` as
// libcu++'s `cuda::std::complex<T>`, which has the same layout (two T, real first) and the
// operators and functions kernels use.
#pragma once
#include <cuda/std/complex>

namespace pycuda {
template <typename T>
using complex = cuda::std::complex<T>;
}
