"""The host-side array API of CuPy, PyCUDA and Numba, as tutorials use it between kernels:
indexing and views, broadcasting, operators, reductions, copies, and the errors each library
raises for a wrong dtype, shape or launch shape. Each case runs the same code with Racetrack's
faces or with the real libraries, and is compared with NumPy computing the same thing.

    python host_api.py            # Racetrack's faces (no GPU)
    python host_api.py --real     # the real CuPy, PyCUDA and numba-cuda, on a GPU

Each line is `ok` or `FAIL` and what differed; a case that expects an error passes when the
library raises that exception type. The run ends with `N passed, N failed`; with both runs
passing, the two give the same results (within float tolerance).
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Callable, List, Tuple

import numpy as np

# -- the libraries, real or Racetrack's ---------------------------------------------------------


def libraries(real: bool) -> types.SimpleNamespace:
    """CuPy, PyCUDA's modules and Numba's cuda: the real ones, or Racetrack's faces."""
    if real:
        import cupy
        import cupy.cuda.compiler  # noqa: F401
        import pycuda.autoinit  # noqa: F401
        import pycuda.compiler
        import pycuda.driver
        import pycuda.elementwise
        import pycuda.gpuarray
        from numba import cuda

        return types.SimpleNamespace(
            cp=cupy, gpuarray=pycuda.gpuarray, drv=pycuda.driver, SourceModule=pycuda.compiler.SourceModule, cuda=cuda,
            ElementwiseKernel=pycuda.elementwise.ElementwiseKernel,
        )
    import racetrack.cupy as cupy
    import racetrack.pycuda.autoinit  # noqa: F401
    import racetrack.pycuda.compiler
    import racetrack.pycuda.driver
    import racetrack.pycuda.elementwise
    import racetrack.pycuda.gpuarray

    try:
        from racetrack import cuda
    except ImportError:  # the Numba face needs Python >= 3.10: its cases are left out
        cuda = None
    return types.SimpleNamespace(
        cp=cupy,
        gpuarray=racetrack.pycuda.gpuarray,
        drv=racetrack.pycuda.driver,
        SourceModule=racetrack.pycuda.compiler.SourceModule,
        cuda=cuda,
        ElementwiseKernel=racetrack.pycuda.elementwise.ElementwiseKernel,
    )


# -- the cases --------------------------------------------------------------------------------
#
# A CuPy case takes an array module: it runs with CuPy (real or Racetrack's) and with NumPy,
# whose result is the reference. PyCUDA and Numba cases take the libraries and return what
# they computed beside what NumPy computes.

Case = Tuple[str, Callable]
CUPY: List[Case] = []
CUPY_KERNELS: List[Case] = []
PYCUDA: List[Case] = []
NUMBA: List[Case] = []


def case(cases: List[Case]):
    def register(function):
        cases.append((function.__name__, function))
        return function

    return register


def host(value):
    """A result as NumPy holds it (device arrays copied back)."""
    if isinstance(value, (list, tuple)):
        return [host(part) for part in value]
    if hasattr(value, "get") and not isinstance(value, (np.ndarray, np.generic, dict)):
        return value.get()
    if hasattr(value, "copy_to_host"):
        return value.copy_to_host()
    return value


@case(CUPY)
def cupy_index_and_slice(xp):
    a = xp.arange(24, dtype=xp.float32).reshape(4, 6)
    return [a[2], a[1:3], a[-1, -2], a[::2, ::-3], a[:, None].shape, a[..., 1], a[1:3, 2:5].T]


@case(CUPY)
def cupy_write_through_views(xp):
    a = xp.zeros((4, 5), dtype=xp.int32)
    v = a[1:3, 1:4]
    v[...] = 7
    a[0] = xp.arange(5, dtype=xp.int32)
    a[:, -1] = -1
    column = a[:, 2]
    column += 10
    a.T[0, 3] = 99
    return a


@case(CUPY)
def cupy_broadcasting(xp):
    m = xp.arange(12, dtype=xp.float64).reshape(3, 4)
    row = xp.linspace(0.5, 2.0, 4)
    col = xp.arange(3, dtype=xp.float64)
    return [m + row, m * col[:, None], m - 1.5, 2 ** xp.arange(5)]


@case(CUPY)
def cupy_operators(xp):
    x = xp.arange(1, 9, dtype=xp.int32)
    y = xp.arange(8, 0, -1).astype(xp.int32)
    f = x.astype(xp.float32)
    return [x + y, x - y, x * y, x / y, x // 3, x % 3, x**2, -x, abs(-x), x & 6, x | 1, x ^ y,
            x < y, x == 4, x >= y, f / 4, 1.0 / f]


@case(CUPY)
def cupy_in_place(xp):
    a = xp.ones(6, dtype=xp.float32)
    a += xp.arange(6, dtype=xp.float32)
    a *= 2
    a -= 1
    a /= 4
    return a


@case(CUPY)
def cupy_reductions(xp):
    m = xp.asarray(np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], dtype=np.int32))
    f = m.astype(xp.float64) / 7
    return [m.sum(), m.sum(axis=0), m.max(), m.max(axis=1), m.min(), m.min(axis=0), m.argmax(),
            m.argmax(axis=1), f.mean(), f.mean(axis=0), xp.sum(m), xp.max(m), xp.argmax(m)]


@case(CUPY)
def cupy_creation(xp):
    empty = xp.empty((2, 3), dtype=xp.float32)
    return [xp.arange(5), xp.arange(1, 2, 0.25), xp.linspace(0, 1, 5), xp.zeros(3), xp.ones((2, 2), xp.int32),
            xp.full(3, 7.5), xp.zeros_like(empty), xp.ones_like(empty), xp.full_like(empty, 2),
            xp.empty_like(empty).shape, empty.dtype.name, xp.zeros(4, xp.int32).dtype.name]


@case(CUPY)
def cupy_shapes(xp):
    a = xp.arange(12, dtype=xp.int64)
    m = a.reshape(3, 4)
    return [m.reshape(-1, 2), m.T, m.T.ravel(), m.ravel(), m.T.reshape(2, 6), m.astype(xp.float32).dtype.name,
            m.astype(xp.float32), m.shape, m.T.shape, m.size, m.ndim, len(m)]


@case(CUPY)
def cupy_copies(xp):
    host_array = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = xp.asarray(host_array)
    back = xp.asnumpy(d) if xp is not np else np.asarray(d)
    got = d.get() if xp is not np else d.copy()
    return [back, got, type(back).__name__, xp.asarray(d) is d]


@case(CUPY)
def cupy_masks_and_functions(xp):
    a = xp.arange(10, dtype=xp.float32) - 4
    b = a.copy()
    b[b < 0] = 0
    return [a[a > 1], a[xp.asarray(np.array([0, 2, 4]))], b, xp.sqrt(xp.abs(a)), xp.maximum(a, 0),
            xp.where(a > 0, a, -a), xp.dot(a, a), xp.exp(a[:3])]


@case(CUPY)
def cupy_random_is_in_range(xp):
    xp.random.seed(5)
    first = xp.random.rand(50)
    xp.random.seed(5)
    again = xp.random.rand(50)
    ints = xp.random.randint(0, 10, size=200)
    normal = xp.random.randn(2, 3)
    return [bool(((first >= 0) & (first < 1)).all()), bool((first == again).all()),
            bool(((ints >= 0) & (ints < 10)).all()), normal.shape, first.dtype.name]


@case(CUPY_KERNELS)
def cupy_elementwise_kernel(lib):
    cp = lib.cp
    mix = cp.ElementwiseKernel("float32 p, float32 q, float32 w", "float32 r", "r = w * p + (1.0f - w) * q", "mix")
    cube = cp.ElementwiseKernel("T v, T k", "T out", "out = v * v * v + k", "cube")
    rotate = cp.ElementwiseKernel("T v, raw T table", "T out", "out = v + table[(i + 1) % _ind.size()]", "rotate")
    halves = cp.ElementwiseKernel("T v", "T low, T high", "low = v < 0 ? v : (T)0; high = v > 0 ? v : (T)0;", "halves")
    grid = np.arange(12, dtype=np.float32).reshape(3, 4) - 4
    row = np.linspace(-1, 1, 4).astype(np.float32)
    ints = np.arange(-3, 5, dtype=np.int32)
    table = np.arange(8, dtype=np.int32) * 10
    low, high = cp.zeros((3, 4), cp.float32), cp.zeros((3, 4), cp.float32)
    halves(cp.asarray(grid), low, high)
    on_device = cp.asarray(grid)
    got = [mix(cp.asarray(grid), cp.asarray(row), 0.25), cube(cp.asarray(ints), 2), rotate(cp.asarray(ints), cp.asarray(table)),
           low, high, cube(on_device.T, on_device[::-1, 1])]
    want = [0.25 * grid + 0.75 * row, ints ** 3 + 2, ints + np.roll(table, -1), np.minimum(grid, 0), np.maximum(grid, 0),
            grid.T ** 3 + grid[::-1, 1]]
    return got, want


@case(CUPY_KERNELS)
def cupy_reduction_kernel(lib):
    cp = lib.cp
    squares = cp.ReductionKernel("T v", "T total", "v * v", "a + b", "total = a", "0", "squares")
    norm = cp.ReductionKernel("T v", "T r", "v * v", "a + b", "r = sqrt(a)", "0", "l2")
    dot = cp.ReductionKernel("float32 u, float32 w", "float64 d", "(double)u * (double)w", "a + b", "d = a", "0", "dot")
    cube = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 5
    u = np.linspace(0, 1, 300).astype(np.float32)
    w = np.linspace(1, 2, 300).astype(np.float32)
    c = cp.asarray(cube)
    got = [squares(c), squares(c, axis=1), squares(c, axis=(0, 2), keepdims=True), norm(c, axis=-1),
           dot(cp.asarray(u), cp.asarray(w))]
    want = [(cube ** 2).sum(), (cube ** 2).sum(axis=1), (cube ** 2).sum(axis=(0, 2), keepdims=True),
            np.sqrt((cube ** 2).sum(axis=-1)), np.dot(u.astype(np.float64), w.astype(np.float64))]
    return got, want


@case(CUPY_KERNELS)
def cupy_complex_raw_kernel(lib):
    cp = lib.cp
    rotate_add = cp.RawKernel(r"""
#include <cupy/complex.cuh>
extern "C" __global__ void rotate_add(const complex<float> *u, complex<float> *v, float s, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) v[k] = v[k] + s * complex<float>(0.0f, 1.0f) * u[k];
}
""", "rotate_add")
    u = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64)
    v = np.full(6, 2 - 1j, np.complex64)
    v_gpu = cp.asarray(v)
    rotate_add((1,), (32,), (cp.asarray(u), v_gpu, np.float32(0.5), np.int32(6)))
    return [v_gpu], [v + 0.5j * u]


# CuPy's errors: (name, code, the exception type's name). NumPy is not the reference here.
CUPY_ERRORS = [
    ("numpy array in an operator", lambda cp: cp.arange(4) + np.ones(4), "TypeError"),
    ("set() of another dtype", lambda cp: cp.zeros(4, cp.float32).set(np.zeros(4)), "TypeError"),
    ("set() of another shape", lambda cp: cp.zeros(4).set(np.zeros(5)), "ValueError"),
    ("grid of floats", lambda cp: _cupy_kernel(cp)((2.5,), (32,), (cp.zeros(64, cp.float32),)), "TypeError"),
    ("N/32 as the grid", lambda cp: _cupy_kernel(cp)((64 / 32,), (32,), (cp.zeros(64, cp.float32),)), "TypeError"),
    ("an int, not a tuple, as the grid", lambda cp: _cupy_kernel(cp)(2, (32,), (cp.zeros(64, cp.float32),)), "TypeError"),
    ("a source that does not compile", lambda cp: _cupy_bad_kernel(cp).compile(), "CompileException"),
    ("np.asarray of a cupy array (implicit conversion)", lambda cp: np.asarray(cp.arange(3)), "TypeError"),
    ("ElementwiseKernel given an array of another dtype",
     lambda cp: _cupy_mix(cp)(cp.zeros(4), cp.zeros(4, cp.float32), 0.5), "TypeError"),
    ("ElementwiseKernel given an output of another shape",
     lambda cp: _cupy_mix(cp)(cp.zeros((2, 4), cp.float32), cp.zeros(4, cp.float32), 0.5, cp.zeros(4, cp.float32)),
     "ValueError"),
    ("ReductionKernel over an axis the array lacks",
     lambda cp: cp.ReductionKernel("T v", "T s", "v", "a + b", "s = a", "0", "total")(cp.zeros((2, 3)), axis=2),
     "AxisError"),
]


def _cupy_mix(cp):
    return cp.ElementwiseKernel("float32 p, float32 q, float32 w", "float32 r", "r = w * p + (1.0f - w) * q", "mix")


def _cupy_kernel(cp):
    return cp.RawKernel(
        r"""
extern "C" __global__ void twice(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f; }
""",
        "twice",
    )


def _cupy_bad_kernel(cp):
    return cp.RawKernel(
        r"""
extern "C" __global__ void broken(float *x) { x[0] = not_declared; }
""",
        "broken",
    )


@case(PYCUDA)
def pycuda_slices_and_negative_indices(lib):
    gpuarray = lib.gpuarray
    values = np.arange(10, dtype=np.float32) * 1.5
    x_gpu = gpuarray.to_gpu(values)
    y_gpu = gpuarray.zeros(10, np.float32)
    y_gpu[:] = x_gpu[:]
    y_gpu[2:4] = gpuarray.to_gpu(np.array([-1, -2], np.float32))
    y_gpu[-1] = 100
    m = gpuarray.to_gpu(np.arange(12, dtype=np.int32).reshape(3, 4))
    got = [y_gpu.get(), x_gpu[-1].get(), x_gpu[-3:].get(), x_gpu[::2].get(), m[1].get(), m[:, 1].get(), m[-1, -1].get()]
    want_y = values.copy()
    want_y[2:4] = [-1, -2]
    want_y[-1] = 100
    grid = np.arange(12, dtype=np.int32).reshape(3, 4)
    return got, [want_y, values[-1], values[-3:], values[::2], grid[1], grid[:, 1], grid[-1, -1]]


@case(PYCUDA)
def pycuda_set_get(lib):
    gpuarray, drv = lib.gpuarray, lib.drv
    a = gpuarray.empty((2, 3), np.float64)
    a.set(np.arange(6.0).reshape(2, 3))
    into = np.empty((2, 3))
    a.get(into)
    stream = drv.Stream()
    later = a.get_async(stream=stream)
    stream.synchronize()
    b = gpuarray.arange(0, 10, 2, dtype=np.int32)
    z = gpuarray.zeros(4, np.float32)
    return [a.get(), into, later, b.get(), z.get(), a.shape, str(a.dtype)], [
        np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3),
        np.arange(0, 10, 2, dtype=np.int32), np.zeros(4, np.float32), (2, 3), "float64"]


@case(PYCUDA)
def pycuda_arithmetic(lib):
    gpuarray = lib.gpuarray
    x = np.linspace(1, 2, 8).astype(np.float32)
    y = np.linspace(3, 0.5, 8).astype(np.float32)
    xg, yg = gpuarray.to_gpu(x), gpuarray.to_gpu(y)
    acc = xg.copy()
    acc += yg
    acc *= 2
    got = [(xg + yg).get(), (xg - yg).get(), (xg * yg).get(), (xg / yg).get(), (2 * xg).get(), (xg + 1).get(),
           (xg / 2).get(), (-xg).get(), (xg ** 2).get(), acc.get()]
    want = [x + y, x - y, x * y, x / y, 2 * x, x + 1, x / 2, -x, x ** 2, (x + y) * 2]
    return got, want


@case(PYCUDA)
def pycuda_reductions(lib):
    gpuarray = lib.gpuarray
    x = np.array([3, -1, 4, 1, -5, 9, 2, 6], dtype=np.float32)
    n = np.arange(100, dtype=np.int32)
    xg, ng = gpuarray.to_gpu(x), gpuarray.to_gpu(n)
    got = [gpuarray.sum(xg).get(), gpuarray.max(xg).get(), gpuarray.min(xg).get(), gpuarray.dot(xg, xg).get(),
           gpuarray.sum(ng).get(), str(gpuarray.sum(ng).dtype)]
    return got, [x.sum(), x.max(), x.min(), np.dot(x, x), n.sum(dtype=np.int32), "int32"]


@case(PYCUDA)
def pycuda_fill_copy_reshape(lib):
    gpuarray = lib.gpuarray
    a = gpuarray.empty(12, np.int32)
    a.fill(3)
    b = a.copy()
    b.fill(4)
    m = a.reshape(3, 4)
    m[1] = gpuarray.to_gpu(np.arange(4, dtype=np.int32))
    want = np.full(12, 3, np.int32)
    want[4:8] = np.arange(4)
    return [a.get(), b.get(), m.get(), m.shape, a.ravel().shape], [want, np.full(12, 4, np.int32), want.reshape(3, 4), (3, 4), (12,)]


@case(PYCUDA)
def pycuda_vector_types_attributes_and_includes(lib):
    gpuarray, drv = lib.gpuarray, lib.drv
    point = gpuarray.vec.make_float3(1.5, -2.0, 4.0)
    points = gpuarray.zeros(3, dtype=gpuarray.vec.float3)
    points[1] = point
    warp = lib.drv.Device(0).get_attribute(drv.device_attribute.WARP_SIZE)
    # `#include <math.h>` inside the extern "C" PyCUDA wraps the source in.
    module = lib.SourceModule("""
#include <math.h>
__global__ void roots(float *x) { x[threadIdx.x] = sqrtf(x[threadIdx.x]); }
""")
    x = gpuarray.to_gpu(np.arange(16, dtype=np.float32))
    module.get_function("roots")(x, block=(16, 1, 1), grid=(1, 1))
    # A vector type as a generated kernel's argument, by value and through a pointer.
    distance = lib.ElementwiseKernel(
        "float3 origin, float3 *p, float *d",
        "d[i] = sqrtf((p[i].x - origin.x) * (p[i].x - origin.x) + (p[i].y - origin.y) * (p[i].y - origin.y)"
        " + (p[i].z - origin.z) * (p[i].z - origin.z))",
        "distance",
    )
    d = gpuarray.zeros(3, np.float32)
    distance(gpuarray.vec.make_float3(1.5, -2.0, 0.0), points, d)
    fields = points.get()
    got = [float(point["x"]), float(point["z"]), gpuarray.vec.float3.itemsize, [float(fields[1][k]) for k in "xyz"],
           warp, drv.get_version() >= (4,), x.get(), d.get()]
    origin_to_zero = np.float32(np.sqrt(1.5 ** 2 + 2.0 ** 2))
    return got, [1.5, 4.0, 12, [1.5, -2.0, 4.0], 32, True, np.sqrt(np.arange(16, dtype=np.float32)),
                 np.array([origin_to_zero, 4.0, origin_to_zero], np.float32)]


@case(PYCUDA)
def pycuda_complex_elementwise(lib):
    gpuarray = lib.gpuarray
    times = lib.ElementwiseKernel(
        "pycuda::complex<float> *p, pycuda::complex<float> *q, pycuda::complex<float> *r",
        "r[i] = p[i] * q[i]",
        "times",
        preamble="#include <pycuda-complex.hpp>",
    )
    p = (np.linspace(-1, 1, 10) + 2j).astype(np.complex64)
    q = (3 - 1j * np.linspace(0, 2, 10)).astype(np.complex64)
    r = gpuarray.empty_like(gpuarray.to_gpu(p))
    times(gpuarray.to_gpu(p), gpuarray.to_gpu(q), r)
    return [r.get()], [p * q]


PYCUDA_ERRORS = [
    ("set() of another dtype", lambda lib: lib.gpuarray.zeros(4, np.float32).set(np.zeros(4)), "ValueError"),
    ("set() of another size", lambda lib: lib.gpuarray.zeros(4, np.float32).set(np.zeros(5, np.float32)), "ValueError"),
    ("x[:] = y of another dtype", lambda lib: _pycuda_assign(lib, np.float64, 4), "TypeError"),
    ("x[:] = y of another length", lambda lib: _pycuda_assign(lib, np.float32, 3), "ValueError"),
    ("fill of a strided view", lambda lib: lib.gpuarray.zeros(8, np.float32)[::2].fill(1), "RuntimeError"),
    ("grid of floats", lambda lib: _pycuda_launch(lib, (2.5, 1)), "TypeError"),
    ("N/32 as the grid", lambda lib: _pycuda_launch(lib, (64 / 32, 1)), "TypeError"),
    ("a source that does not compile", lambda lib: lib.SourceModule("__global__ void f(float *x) { x[0] = nope; }"), "CompileError"),
    ("x + 1 of a strided view", lambda lib: lib.gpuarray.zeros(8, np.float32)[::2] + 1, "RuntimeError"),
    ("-x of a strided view", lambda lib: -lib.gpuarray.zeros(8, np.float32)[::2], "RuntimeError"),
    ("astype of a strided view", lambda lib: lib.gpuarray.zeros(8, np.float32)[::2].astype(np.float64), "RuntimeError"),
    ("gpuarray.sum of a strided view", lambda lib: lib.gpuarray.sum(lib.gpuarray.zeros(8, np.float32)[::2]), "RuntimeError"),
]


def _pycuda_assign(lib, dtype, n):
    x = lib.gpuarray.zeros(4, np.float32)
    x[:] = lib.gpuarray.zeros(n, dtype)


def _pycuda_launch(lib, grid):
    module = lib.SourceModule(
        """
__global__ void twice(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f; }
"""
    )
    module.get_function("twice")(lib.gpuarray.zeros(64, np.float32), block=(32, 1, 1), grid=grid)


@case(NUMBA)
def numba_copies_and_views(lib):
    cuda = lib.cuda
    values = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cuda.to_device(values)
    empty = cuda.device_array((2, 5), dtype=np.int32)
    like = cuda.device_array_like(values)
    like.copy_to_device(values * 2)
    row = d[1]
    row.copy_to_device(np.full(4, -1.0))
    d[2, 3] = 50
    d[:, 0] = 7
    into = np.empty((3, 4))
    d.copy_to_host(into)
    want = values.copy()
    want[1] = -1
    want[2, 3] = 50
    want[:, 0] = 7
    got = [into, d[1:].copy_to_host(), d[:, 2].copy_to_host(), d[2, 3], d.shape, d.size, str(d.dtype),
           empty.shape, str(empty.dtype), like.copy_to_host(), d[1:].shape]
    return got, [want, want[1:], want[:, 2], 50.0, (3, 4), 12, "float64", (2, 5), "int32", values * 2, (2, 4)]


@case(NUMBA)
def numba_and_cupy_share_memory(lib):
    # Through the CUDA Array Interface: a Numba kernel writes a CuPy array, CuPy views a Numba one.
    twice = _numba_twice(lib)
    a = lib.cp.arange(8, dtype=lib.cp.float64)
    twice[1, 32](a)
    twice[1, 32](a[4:])
    d = lib.cuda.to_device(np.arange(4.0))
    view = lib.cp.asarray(d)
    view += 1
    want = np.arange(8.0) * 2
    want[4:] *= 2
    return [a.get(), d.copy_to_host()], [want, np.arange(4.0) + 1]


def _numba_twice(lib):
    cuda = lib.cuda

    @cuda.jit
    def twice(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    return twice


@case(NUMBA)
def numba_types_from_the_cuda_module(lib):
    cuda = lib.cuda
    from importlib import import_module

    types = import_module(cuda.__name__ + ".types")
    return [str(cuda.float32), str(cuda.int32), str(types.int32), str(types.float64)], ["float32", "int32", "int32", "float64"]


NUMBA_ERRORS = [
    ("copy_to_device of float32 into float64",
     lambda lib: lib.cuda.device_array(4, np.float64).copy_to_device(np.zeros(4, np.float32)), "TypeError"),
    ("copy_to_device of another shape",
     lambda lib: lib.cuda.device_array(4, np.float64).copy_to_device(np.zeros(5)), "ValueError"),
    ("copy_to_host into another dtype",
     lambda lib: lib.cuda.to_device(np.zeros(4)).copy_to_host(np.empty(4, np.float32)), "TypeError"),
    ("copy_to_host into another shape",
     lambda lib: lib.cuda.to_device(np.zeros(4)).copy_to_host(np.empty(3)), "ValueError"),
    ("copy_to_device between device arrays of other dtypes",
     lambda lib: lib.cuda.to_device(np.zeros(4)).copy_to_device(lib.cuda.to_device(np.zeros(4, np.int64))), "TypeError"),
    ("grid of floats", lambda lib: _numba_twice(lib)[2.5, 32](np.zeros(64)), "TypeError"),
    ("N/32 as the grid", lambda lib: _numba_twice(lib)[64 / 32, 32](np.zeros(64)), "TypeError"),
]


# -- running them -----------------------------------------------------------------------------


def same(got, want) -> Tuple[bool, str]:
    """Whether ``got`` is ``want``: arrays of the same shape and dtype kind, floats within a
    float32 tolerance, everything else equal."""
    if isinstance(want, (list, tuple)) and not isinstance(want, np.ndarray):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return False, f"{got!r} vs {want!r}"
        for index, (g, w) in enumerate(zip(got, want)):
            ok, detail = same(g, w)
            if not ok:
                return False, f"[{index}] {detail}"
        return True, ""
    if isinstance(want, (np.ndarray, np.generic)) or isinstance(got, (np.ndarray, np.generic)):
        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape:
            return False, f"shape {g.shape} vs {w.shape}"
        if g.dtype.kind != w.dtype.kind and {g.dtype.kind, w.dtype.kind} != {"i", "u"}:
            return False, f"dtype {g.dtype} vs {w.dtype}"
        if w.dtype.kind in "fc":
            ok = bool(np.allclose(g, w, rtol=1e-6, atol=1e-6))
        else:
            ok = bool(np.array_equal(g, w))
        return ok, "" if ok else f"{g!r} vs {w!r}"
    return got == want, "" if got == want else f"{got!r} vs {want!r}"


def outcome(run: Callable) -> Tuple[bool, object]:
    try:
        return True, run()
    except Exception as error:  # the cases that expect one look at its type
        return False, error


def raised(error: Exception, expected: str) -> bool:
    """Whether ``error`` is what a case expects: a built-in exception or a subclass (Boost.Python's
    ArgumentError is a TypeError), or a library's own class by its name."""
    builtin = getattr(builtins, expected, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return isinstance(error, builtin)
    return type(error).__name__ == expected


def all_cases(lib) -> List[Tuple[str, Callable[[], Tuple[bool, str]]]]:
    """Every case as (name, check): check returns (passed, what differed)."""
    checks = []
    for name, function in CUPY:

        def check(function=function):
            finished, got = outcome(lambda: host(function(lib.cp)))
            if not finished:
                return False, f"raised {type(got).__name__}: {got}"
            return same(got, host(function(np)))

        checks.append((name, check))
    for name, function in CUPY_KERNELS + PYCUDA + (NUMBA if lib.cuda is not None else []):

        def check(function=function):
            finished, got = outcome(lambda: function(lib))
            if not finished:
                return False, f"raised {type(got).__name__}: {got}"
            return same(host(got[0]), got[1])

        checks.append((name, check))
    faces = [("cupy", CUPY_ERRORS, lib.cp), ("pycuda", PYCUDA_ERRORS, lib)]
    if lib.cuda is not None:
        faces.append(("numba", NUMBA_ERRORS, lib))
    for face, errors, argument in faces:
        for what, function, expected in errors:

            def check(function=function, expected=expected, argument=argument):
                finished, got = outcome(lambda: function(argument))
                if finished:
                    return False, f"no error (expected {expected})"
                if raised(got, expected):
                    return True, ""
                return False, f"raised {type(got).__name__}: {got}; expected {expected}"

            checks.append((f"{face} raises {expected}: {what}", check))
    return checks


def main(argv: List[str]) -> int:
    lib = libraries(real="--real" in argv)
    passed = failed = 0
    for name, check in all_cases(lib):
        ok, detail = check()
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
