"""`racetrack.cupy`: CuPy's raw kernels and array helpers, on the emulator."""

import numpy as np
import pytest

import racetrack
from racetrack import cupy as cp

ADD = cp.RawKernel(
    r"""
extern "C" __global__ void add_scaled(const float *x, const float *y, float *out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i] + a * y[i];
    }
}
""",
    "add_scaled",
)

DOUBLE_SCALE = cp.RawKernel(
    r"""
extern "C" __global__ void double_scale(double *x, double a, long long n)
{
    long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] *= a;
    }
}
""",
    "double_scale",
)


def test_raw_kernel_with_cupys_scalar_rules():
    x = cp.arange(50, dtype=cp.float32)
    y = cp.ones(50, dtype=cp.float32)
    out = cp.empty_like(x)
    # n is a Python int: CuPy passes a long long, whose first four bytes are the int.
    ADD((2,), (32,), (x, y, out, np.float32(0.5), 50))
    assert np.array_equal(cp.asnumpy(out), np.arange(50, dtype=np.float32) + 0.5)
    # A Python float is a double, as the parameter is.
    z = cp.asarray(np.arange(8.0))
    DOUBLE_SCALE((1,), (8,), (z, 1.5, 8))
    assert np.array_equal(z.get(), 1.5 * np.arange(8.0))


def test_python_float_for_a_float_parameter_is_refused():
    x = cp.zeros(4, dtype=cp.float32)
    with pytest.raises(TypeError, match=r"`float a`.*double|`float a`.*float64.*np\.float32"):
        ADD((1,), (4,), (x, x, x, 0.5, 4))


def test_an_int_that_does_not_fit_is_refused():
    x = cp.zeros(4, dtype=cp.float32)
    with pytest.raises(TypeError, match=r"does not fit"):
        ADD((1,), (4,), (x, x, x, np.float32(1), 1 << 40))


def test_wrong_argument_count_and_host_arrays():
    x = cp.zeros(4, dtype=cp.float32)
    with pytest.raises(TypeError, match=r"takes 5 arguments"):
        ADD((1,), (4,), (x, x, x))
    with pytest.raises(TypeError, match=r"cupy\.asarray"):
        ADD((1,), (4,), (np.zeros(4, np.float32), x, x, np.float32(1), 4))


def test_array_helpers_round_trip():
    host = np.random.default_rng(0).random((3, 5))
    device = cp.asarray(host)
    assert cp.asarray(device) is device
    assert np.array_equal(cp.asnumpy(device), host)
    assert device.shape == (3, 5) and device.dtype == np.float64 and device.size == 15
    assert np.array_equal(cp.zeros((2, 2), cp.int32).get(), np.zeros((2, 2), np.int32))
    assert cp.empty(7, dtype=cp.uint8).nbytes == 7
    assert cp.allclose(device * 2, host * 2)
    assert isinstance(device.data.ptr, int)


def test_raw_module_get_function_and_global():
    module = cp.RawModule(
        code=r"""
        __device__ int offset;
        extern "C" __global__ void bump(int *x) { x[threadIdx.x] += offset; }
        template <typename T> __global__ void triple(T *x) { x[threadIdx.x] *= 3; }
        """,
        name_expressions=["triple<float>"],
    )
    offset = module.get_global("offset")
    offset.copy_from_host(np.array([7], dtype=np.int32), 4)
    x = cp.arange(4, dtype=cp.int32)
    module.get_function("bump")((1,), (4,), (x,))
    assert x.get().tolist() == [7, 8, 9, 10]
    y = cp.ones(3, dtype=cp.float32)
    module.get_function("triple<float>")((1,), (3,), (y,))
    assert y.get().tolist() == [3, 3, 3]


def test_race_at_the_python_line_and_checking_options():
    racy = cp.RawKernel(
        r"""
extern "C" __global__ void last_wins(int *x)
{
    x[0] = threadIdx.x;
}
""",
        "last_wins",
    )
    x = cp.zeros(1, dtype=cp.int32)
    with pytest.raises(racetrack.RaceError) as caught:
        racy((1,), (64,), (x,))
    line = next(
        n for n, text in enumerate(open(__file__).read().splitlines(), 1) if "x[0] = threadIdx.x;" in text
    )
    assert f"test_cupy_face.py:{line}" in str(caught.value)
    with racetrack.checking(raise_on_finding=False, schedule="random", seed=3) as report:
        racy((1,), (64,), (x,))
    assert not report.clean and all(finding.category == "race" for finding in report.findings)
    with racetrack.checking(racecheck=False) as quiet:
        racy((1,), (64,), (x,))
    assert quiet.clean


def test_source_not_in_the_file_is_named_kernel_cu():
    body = "x[0] = threadIdx.x;"
    racy = cp.RawKernel('extern "C" __global__ void built(int *x)\n{\n    ' + body + "\n}\n", "built")
    with pytest.raises(racetrack.RaceError) as caught:
        racy((1,), (32,), (cp.zeros(1, dtype=cp.int32),))
    assert "kernel.cu:3" in str(caught.value)


def test_compiler_options_as_nvrtc_spells_them():
    from racetrack._cuda_c import parse_options

    parsed = parse_options(
        ["-DN=4", "-I", "inc", "--std=c++20", "-use_fast_math", "--define-macro=M", "-Ifoo"]
    )
    assert parsed.defines == ("N=4", "M")
    assert parsed.include_dirs == ("inc", "foo")
    assert parsed.std == "c++20"
    # C++11 and C++14 are NVRTC's default C++17's subsets: no -std is passed for them.
    assert parse_options(("-std=c++11",)).std is None
    with pytest.raises(ValueError, match="needs a value"):
        parse_options(["-I"])
    kernel = cp.RawKernel(
        'extern "C" __global__ void fill(int *x) { x[threadIdx.x] = VALUE; }', "fill", options=("-DVALUE=7",)
    )
    x = cp.zeros(3, dtype=cp.int32)
    kernel((1,), (3,), (x,))
    assert x.get().tolist() == [7, 7, 7]


def test_a_first_cupy_raw_kernel_script_runs_unchanged_but_for_its_import():
    add = cp.RawKernel(
        r"""
extern "C" __global__
void add(const float *a, const float *b, float *out)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    out[i] = a[i] + b[i];
}
""",
        "add",
    )
    a = cp.arange(25, dtype=cp.float32).reshape(5, 5)
    b = cp.random.rand(5, 5, dtype=cp.float32)
    out = cp.zeros((5, 5), dtype=cp.float32)
    add((5,), (5,), (a, b, out))
    assert cp.allclose(out, a.get() + b.get())
    assert out.shape == (5, 5)


def test_raw_module_from_a_cu_file_names_that_file(tmp_path):
    source = tmp_path / "last_wins.cu"
    source.write_text('extern "C" __global__ void last_wins(int *x)\n{\n    x[0] = threadIdx.x;\n}\n')
    module = cp.RawModule(path=str(source))
    with pytest.raises(racetrack.RaceError) as caught:
        module.get_function("last_wins")((1,), (32,), (cp.zeros(1, dtype=cp.int32),))
    assert "last_wins.cu:3" in str(caught.value)
    with pytest.raises(ValueError, match=r"\.cu"):
        cp.RawModule(path=str(tmp_path / "kernels.cubin"))


def test_an_allocation_the_machine_cannot_hold_is_cupys_out_of_memory_error():
    with pytest.raises(cp.cuda.memory.OutOfMemoryError, match="Out of memory"):
        cp.empty((1 << 48,), dtype=cp.float32)
