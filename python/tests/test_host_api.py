"""The host-side array API of the three faces against NumPy (examples/host_api.py, whose cases
the real libraries pass too when it runs with --real on a GPU), and what only Racetrack checks:
views under generated slices, raw kernels' pointer types, the faces' own compile errors, calls
that are not there."""

import importlib.util
import pathlib
import traceback

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import racetrack
import racetrack.cupy as cp
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
import racetrack.pycuda.gpuarray as gpuarray
from racetrack.pycuda.compiler import SourceModule

_spec = importlib.util.spec_from_file_location(
    "host_api", pathlib.Path(__file__).resolve().parent.parent / "examples" / "host_api.py"
)
host_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host_api)

CASES = dict(host_api.all_cases(host_api.libraries(real=False)))


@pytest.mark.parametrize("name", list(CASES))
def test_host_api_case_matches_numpy(name):
    ok, detail = CASES[name]()
    assert ok, detail


def test_the_comparison_sees_a_wrong_value_shape_or_dtype():
    assert host_api.same([np.arange(3)], [np.arange(3)])[0]
    assert not host_api.same([np.arange(3)], [np.arange(1, 4)])[0]
    assert not host_api.same(np.zeros((2, 2)), np.zeros(4))[0]
    assert not host_api.same(np.zeros(2, np.float32), np.zeros(2, np.int32))[0]
    assert not host_api.same((3, 4), (4, 3))[0]


def _slices(extent):
    bound = st.one_of(st.none(), st.integers(-extent - 2, extent + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@given(rows=_slices(5), cols=_slices(7), value=st.integers(-50, 50))
def test_cupy_slices_are_views_as_numpy_gives_them(rows, cols, value):
    want = np.arange(35, dtype=np.int32).reshape(5, 7)
    got = cp.asarray(want.copy())
    assert np.array_equal(got[rows, cols].get(), want[rows, cols])
    view = got[rows, cols]
    view[...] = value
    want[rows, cols] = value
    assert np.array_equal(got.get(), want)
    assert np.array_equal(got.T[cols, rows].get(), want.T[cols, rows])


@given(index=st.integers(-10, 9), step=st.integers(1, 4))
def test_pycuda_negative_indices_and_steps_read_as_numpy(index, step):
    values = np.arange(10, dtype=np.float32) ** 2
    x = gpuarray.to_gpu(values)
    assert float(x[index].get()) == values[index]
    assert np.array_equal(x[index::step].get(), values[index::step])


def test_cupy_raw_kernel_refuses_an_array_of_another_element_type():
    kernel = cp.RawKernel(
        r"""
extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
""",
        "scale",
    )
    doubles = cp.arange(8, dtype=cp.float64)
    with pytest.raises(TypeError, match=r"Racetrack found a type mismatch: argument 0 of scale \(`float \*x`\) points to float"):
        kernel((1,), (8,), (doubles, np.float32(2), np.int32(8)))
    assert np.array_equal(doubles.get(), np.arange(8.0)), "nothing ran"
    floats = cp.arange(8, dtype=cp.float32)
    kernel((1,), (8,), (floats, np.float32(2), np.int32(8)))
    assert np.array_equal(floats.get(), 2 * np.arange(8, dtype=np.float32))


def test_pycuda_refuses_float64_host_arrays_for_float_pointers():
    # The PyCUDA tutorial's first mistake: np.random.randn gives float64.
    module = SourceModule(
        """
__global__ void multiply_them(float *dest, float *a, float *b) {
    const int i = threadIdx.x;
    dest[i] = a[i] * b[i];
}
"""
    )
    multiply_them = module.get_function("multiply_them")
    a = np.random.randn(64)
    b = np.random.randn(64).astype(np.float32)
    dest = np.zeros_like(b)
    with pytest.raises(TypeError, match=r"argument 1 of multiply_them \(`float \*a`\) points to float \(4 bytes\), but the array given holds float64"):
        multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(64, 1, 1), grid=(1, 1))
    multiply_them(drv.Out(dest), drv.In(a.astype(np.float32)), drv.In(b), block=(64, 1, 1), grid=(1, 1))
    assert np.array_equal(dest, a.astype(np.float32) * b)
    # Signedness is not checked: an int32 array through an unsigned pointer is the same bits.
    counts = SourceModule("__global__ void bump(unsigned int *c) { c[threadIdx.x] += 1; }").get_function("bump")
    signed = gpuarray.zeros(4, np.int32)
    counts(signed, block=(4, 1, 1))
    assert signed.get().tolist() == [1, 1, 1, 1]


def test_a_float_grid_copies_nothing_back_into_out_arrays():
    module = SourceModule("__global__ void one(float *x) { x[threadIdx.x] = 1.0f; }")
    dest = np.full(32, 5, np.float32)
    with pytest.raises(TypeError, match=r"grid must be an int or a tuple of 1 to 3 ints, got \(1\.0, 1\): 1\.0 is a float"):
        module.get_function("one")(drv.Out(dest), block=(32, 1, 1), grid=(64 / 64, 1))
    assert np.all(dest == 5)


def test_compile_errors_are_the_faces_own_classes_at_the_users_line():
    with pytest.raises(drv.CompileError) as pycuda_error:
        SourceModule("__global__ void f(float *x) { x[0] = nope; }")  # the line of the call
    assert isinstance(pycuda_error.value, racetrack.CompileError)
    assert "identifier \"nope\" is undefined" in pycuda_error.value.stderr
    assert type(pycuda_error.value).__module__ == "racetrack.pycuda.driver"
    frames = traceback.extract_tb(pycuda_error.tb)
    assert frames[0].filename == __file__ and "SourceModule(" in frames[0].line

    from racetrack.cupy.cuda.compiler import CompileException

    kernel = cp.RawKernel('extern "C" __global__ void g(float *x) { x[0] = nope; }', "g")
    with pytest.raises(CompileException, match=r"identifier \"nope\" is undefined") as cupy_error:
        kernel((1,), (1,), (cp.zeros(1, cp.float32),))
    assert isinstance(cupy_error.value, racetrack.CompileError)
    assert CompileException is cp.cuda.compiler.CompileException
    assert type(cupy_error.value).__module__ == "racetrack.cupy.cuda.compiler"


def test_what_is_not_there_says_so_by_name():
    with pytest.raises(NotImplementedError, match=r"cupy\.fft is not implemented in racetrack's CuPy face"):
        cp.fft  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"cupy\.random\.multinomial is not implemented"):
        cp.random.multinomial  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"cupy\.ndarray\.searchsorted is not implemented"):
        cp.zeros(3).searchsorted  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"pycuda\.gpuarray\.if_positive is not implemented"):
        gpuarray.if_positive  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"GPUArray\.mul_add is not implemented"):
        gpuarray.zeros(3, np.float32).mul_add  # noqa: B018
    # PyCUDA's GPUArray has no .sum(): AttributeError, as there (gpuarray.sum(a) is the call).
    with pytest.raises(AttributeError, match=r"'GPUArray' object has no attribute 'sum'"):
        gpuarray.zeros(3, np.float32).sum()
    with pytest.raises(NotImplementedError, match=r"indexing a GPUArray with ndarray"):
        gpuarray.zeros(3, np.float32)[np.array([0, 1])]
    with pytest.raises(NotImplementedError, match=r"/ of integer GPUArrays"):
        gpuarray.arange(4, dtype=np.int32) / 2


def test_pycuda_does_not_broadcast_but_a_0d_array():
    x = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
    with pytest.raises(NotImplementedError, match=r"Broadcasting binary operator with shapes: \(4,\), \(2, 4\)"):
        x + gpuarray.zeros((2, 4), np.float32)
    assert np.array_equal((x * x[-1]).get(), np.arange(4, dtype=np.float32) * 3)
    assert np.array_equal((x > 1).get(), np.array([0, 0, 1, 1], np.float32))


def test_numpy_scalars_on_the_left_give_device_arrays():
    a = cp.arange(4, dtype=cp.float32)
    scaled = np.float32(2) * a
    assert isinstance(scaled, cp.ndarray) and np.array_equal(scaled.get(), 2 * np.arange(4, dtype=np.float32))


def test_a_number_for_a_pointer_parameter_is_refused_in_both_faces():
    source = 'extern "C" __global__ void clear(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 0; }'
    kernel = cp.RawKernel(source, "clear")
    with pytest.raises(TypeError, match=r"argument 0 of clear \(`float \*x`\) is a pointer, but the value given is a float32 number"):
        kernel((1,), (4,), (np.float32(1), np.int32(4)))
    function = SourceModule("__global__ void clear(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 0; }", no_extern_c=False).get_function("clear")
    with pytest.raises(TypeError, match=r"is a pointer, but the value given is an int32 number"):
        function(np.int32(3), np.int32(4), block=(4, 1, 1))
    # An address as CuPy's RawKernel takes one: a Python int (a long long), here a.data.ptr.
    x = cp.ones(4, cp.float32)
    kernel((1,), (4,), (x.data.ptr, np.int32(4)))
    assert x.get().tolist() == [0, 0, 0, 0]


_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@given(left=_shapes, right=_shapes, axis=st.integers(-1, 0))
def test_cupy_operators_broadcast_and_reduce_as_numpy(left, right, axis):
    a = np.arange(int(np.prod(left)), dtype=np.float32).reshape(left) - 3
    b = np.arange(int(np.prod(right)), dtype=np.float32).reshape(right) / 2
    try:
        want = a * b + a - b
    except ValueError:
        with pytest.raises(ValueError):
            cp.asarray(a) * cp.asarray(b)
        return
    got = cp.asarray(a) * cp.asarray(b) + cp.asarray(a) - cp.asarray(b)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.allclose(got.get(), want)
    assert np.allclose(got.sum(axis=axis).get(), want.sum(axis=axis), rtol=1e-5)
    assert np.array_equal(got.argmax(axis=axis).get(), want.argmax(axis=axis))
    assert np.array_equal((got > 0).get(), want > 0)


_BUMP = r"""
extern "C" __global__ void bump(unsigned int *counts, unsigned char *flags, int *offsets)
{
    counts[threadIdx.x] += 1;
    flags[threadIdx.x] = 1;
    offsets[threadIdx.x] -= 1;
}
"""


def test_other_signedness_passes_while_its_values_read_the_same():
    bump = cp.RawKernel(_BUMP, "bump")
    counts = cp.arange(4, dtype=cp.int32)  # int32 through `unsigned int *`: 0..3 are the same bits
    offsets = cp.asarray(np.array([5, 6, 7, 8], np.uint32))
    bump((1,), (4,), (counts, cp.zeros(4, cp.uint8), offsets))
    assert np.array_equal(counts.get(), np.arange(4) + 1)
    assert np.array_equal(offsets.get(), [4, 5, 6, 7])


def test_other_signedness_with_a_value_read_as_another_number_is_refused():
    bump = cp.RawKernel(_BUMP, "bump")
    negative = cp.asarray(np.array([0, -1, 2, 3], np.int32))
    with pytest.raises(TypeError, match=r"signedness mismatch.*`unsigned int \*counts`.*-1 reads as 4294967295"):
        bump((1,), (4,), (negative, cp.zeros(4, cp.uint8), cp.zeros(4, cp.int32)))
    huge = cp.asarray(np.array([1, 2**31, 0, 0], np.uint32))
    with pytest.raises(TypeError, match=r"signedness mismatch.*`int \*offsets`.*2147483648 reads as -2147483648"):
        bump((1,), (4,), (cp.zeros(4, cp.uint32), cp.zeros(4, cp.uint8), huge))
    module = SourceModule(_BUMP, no_extern_c=True)
    with pytest.raises(TypeError, match="signedness mismatch"):
        module.get_function("bump")(
            drv.InOut(np.array([-2, 0, 0, 0], np.int32)), drv.Out(np.zeros(4, np.uint8)),
            drv.In(np.zeros(4, np.int32)), block=(4, 1, 1), grid=(1, 1),
        )


def test_unsigned_char_pointers_and_template_instantiations_are_checked():
    bump = cp.RawKernel(_BUMP, "bump")
    with pytest.raises(TypeError, match=r"`unsigned char \*flags`.*float32.*np\.uint8"):
        bump((1,), (4,), (cp.zeros(4, cp.uint32), cp.zeros(4, cp.float32), cp.zeros(4, cp.int32)))
    module = cp.RawModule(
        code="template <typename T> __global__ void triple(T *x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 3; }",
        name_expressions=["triple<float>"],
    )
    with pytest.raises(TypeError, match=r"triple<float>.*float.*float64"):
        module.get_function("triple<float>")((1,), (4,), (cp.zeros(4), 4))
    right = cp.ones(4, cp.float32)
    module.get_function("triple<float>")((1,), (4,), (right, 4))
    assert np.array_equal(right.get(), np.full(4, 3, np.float32))
