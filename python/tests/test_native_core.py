"""The native core the faces stand on (python/README.md, "The native core"): CUDA C compiled
through Racetrack's front end and provisioned NVRTC, PTX launched with typed arguments."""

import numpy as np
import pytest

import racetrack
from racetrack import _native

SOURCE = r"""
extern "C" __global__ void racy(int *x) {
    x[0] = x[0] + 1;
}

template <typename T> __global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

struct Affine { float a; float b; };

extern "C" __global__ void affine(Affine f, const float *x, float *y, unsigned long long n) {
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f.a * x[i] + f.b;
}
"""


def upload(array, label):
    dev = racetrack.device()
    address = dev.alloc(array.nbytes, label)
    dev.write(address, np.ravel(array, order="K").view(np.uint8))
    return address


def download(address, like):
    out = np.empty_like(like)
    racetrack.device().read_into(address, out.view(np.uint8))
    return out


def test_a_cuda_c_race_has_racetrack_checks_text():
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "racy")
    assert kernel.param_types == ["u64"] and kernel.symbol == "racy"
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    x = racetrack.device().alloc(4, "x")
    with pytest.raises(racetrack.RaceError) as raised:
        racetrack.launch(module, kernel.symbol, (2, 1, 1), (32, 1, 1), [("ptr", x)], kernel_name="racy", where="test:1")
    text = str(raised.value)
    assert text.startswith("racy: ") and "in the launch at test:1" in text
    assert "on global memory: x[0]" in text and "at demo.cu:3" in text
    assert raised.value.lines == [3]


def test_templates_are_named_as_written_and_scalars_take_their_types():
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "scale<float>")
    assert kernel.param_types == ["u64", "f32", "u32"]
    # types from the mangled name, names from the file
    assert kernel.cpp_params == ["float* x", "float a", "int n"]
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    data = np.arange(10, dtype=np.float32)
    x = upload(data, "x")
    result = racetrack.launch(module, kernel.symbol, (1, 1, 1), (32, 1, 1), [("ptr", x), ("f32", 2.5), ("i32", 10)])
    assert result.findings == [] and result.completed and result.thread_instructions > 0
    assert np.array_equal(download(x, data), data * 2.5)


def test_structs_by_value_are_bytes_laid_out_as_c_does():
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "affine")
    assert kernel.param_types[0] == "b8[8]"
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    data = np.linspace(0, 1, 50, dtype=np.float32)
    x, y = upload(data, "x"), upload(np.zeros_like(data), "y")
    affine = np.array([3.0, -1.0], np.float32).tobytes()
    racetrack.launch(module, "affine", (2, 1, 1), (32, 1, 1), [("bytes", affine), ("ptr", x), ("ptr", y), ("u64", 50)])
    # NVRTC contracts a * x + b to one fma: one rounding of the exact value, which float64 holds.
    assert np.array_equal(download(y, data), (3.0 * data.astype(np.float64) - 1.0).astype(np.float32))


def test_compile_errors_and_missing_kernels_are_one_clear_error():
    with pytest.raises(racetrack.CompileError, match=r"bad\.cu does not compile"):
        racetrack.compile_cuda("__global__ void f( { }", "bad.cu", "f")
    with pytest.raises(ValueError, match="has no kernel named `nothere`"):
        racetrack.compile_cuda(SOURCE, "demo.cu", "nothere")


def test_bad_arguments_and_bad_ptx_are_refused_not_run():
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "racy")
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    with pytest.raises(ValueError, match="unknown type"):
        racetrack.device().launch(module, "racy", (1, 1, 1), (1, 1, 1), [("pointer", 0)])
    with pytest.raises(TypeError, match=r"\(type, value\) pair"):
        racetrack.device().launch(module, "racy", (1, 1, 1), (1, 1, 1), [0])
    with pytest.raises(racetrack.EmulatorError):
        racetrack.device().launch(module, "racy", (1, 1, 1), (1, 1, 1), [])
    with pytest.raises(racetrack.EmulatorError, match="broken.ptx"):
        racetrack.PtxModule(".version 9.0\n.target sm_90\n.entry f( { bogus; }", "broken.ptx")


def test_options_follow_the_command_line():
    options = _native.Options(schedule="random", seed=3, racecheck=False, memory_model="ptx", threads=1)
    assert options.schedule == "random" and not options.racecheck
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "racy")
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    x = racetrack.device().alloc(4, "x")
    quiet = racetrack.device().launch(module, "racy", (2, 1, 1), (32, 1, 1), [("ptr", x)], options=options)
    assert quiet.findings == []
    with pytest.raises(ValueError, match="memory_model must be"):
        _native.Options(memory_model="sc")


def test_every_engine_computes_and_finds_the_same():
    scale = racetrack.compile_cuda(SOURCE, "demo.cu", "scale<float>")
    racy = racetrack.compile_cuda(SOURCE, "demo.cu", "racy")
    scale_module = racetrack.PtxModule(scale.ptx, "demo.cu")
    racy_module = racetrack.PtxModule(racy.ptx, "demo.cu")
    data = np.linspace(-3.0, 3.0, 1000, dtype=np.float32)
    seen = []
    for engine in ["interp", "compiled", "auto"]:
        options = _native.Options(engine=engine)
        x = upload(data, "x")
        done = racetrack.device().launch(
            scale_module, scale.symbol, (8, 1, 1), (128, 1, 1), [("ptr", x), ("f32", 1.5), ("i32", 1000)], options=options
        )
        counter = racetrack.device().alloc(4, "counter")
        raced = racetrack.device().launch(racy_module, "racy", (2, 1, 1), (32, 1, 1), [("ptr", counter)], options=options)
        seen.append(
            (
                download(x, data).tobytes(),
                done.thread_instructions,
                [str(f) for f in raced.findings],
                raced.thread_instructions,
            )
        )
    assert seen[0][0] == (data * np.float32(1.5)).tobytes()
    assert len(seen[0][2]) == 1
    assert seen[1] == seen[0] and seen[2] == seen[0]
    with pytest.raises(ValueError, match="engine must be"):
        _native.Options(engine="jit")


def test_the_clock_advances_with_launches_only():
    dev = racetrack.device()
    kernel = racetrack.compile_cuda(SOURCE, "demo.cu", "scale<float>")
    module = racetrack.PtxModule(kernel.ptx, "demo.cu")
    x = upload(np.ones(1000, np.float32), "x")
    before = dev.clock_ms
    dev.alloc(16, "idle")
    assert dev.clock_ms == before
    dev.launch(module, kernel.symbol, (8, 1, 1), (128, 1, 1), [("ptr", x), ("f32", 1.0), ("i32", 1000)])
    assert dev.clock_ms > before


#: Stores the grid workspace's address, which a cooperative launch hands in %envreg1:%envreg2.
WORKSPACE_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry workspace(.param .u64 out)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %envreg1;
    mov.u32 %r2, %envreg2;
    st.global.v2.u32 [%rd1], {%r2, %r1};
    ret;
}
"""


def test_a_cooperative_launch_has_a_grid_workspace_and_a_residency_limit():
    module = racetrack.PtxModule(WORKSPACE_PTX, "workspace.ptx")
    out = upload(np.zeros(1, np.uint64), "out")
    racetrack.device().launch(module, "workspace", (1, 1, 1), (1, 1, 1), [("ptr", out)])
    assert download(out, np.zeros(1, np.uint64))[0] == 0  # an ordinary launch has none
    racetrack.device().launch(module, "workspace", (1, 1, 1), (1, 1, 1), [("ptr", out)], cooperative=True)
    assert download(out, np.zeros(1, np.uint64))[0] != 0
    most = _native.cooperative_grid_limit((256, 1, 1))
    assert most == 8 * 132  # 2048 threads an SM: eight blocks of 256 on each of 132 SMs
    assert _native.cooperative_grid_limit((256, 1, 1), 100 * 1024) == 2 * 132  # shared memory bounds it
    with pytest.raises(ValueError, match=f"cudaErrorCooperativeLaunchTooLarge: .*{most + 1} blocks.*at most {most}"):
        racetrack.device().launch(
            module, "workspace", (most + 1, 1, 1), (256, 1, 1), [("ptr", out)], cooperative=True
        )


SPINS = r"""
extern "C" __global__ void spins(unsigned long long *out, unsigned long long n) {
    unsigned long long sum = 0;
    for (unsigned long long i = 0; i < n; ++i) sum += i ^ (sum >> 3);
    *out = sum;
}
"""


def test_ctrl_c_during_a_launch_raises_keyboard_interrupt_at_once():
    """A launch that would run for hours stops at Ctrl-C, and Python raises KeyboardInterrupt
    then, not when the launch would have ended."""
    import os
    import signal
    import threading
    import time

    kernel = racetrack.compile_cuda(SPINS, "spins.cu", "spins")
    module = racetrack.PtxModule(kernel.ptx, "spins.cu")
    out = racetrack.device().alloc(8, "out")
    # A process started in the background by a shell inherits SIGINT ignored, and Python then
    # installs no handler of its own: Ctrl-C could not reach it at all. The test is about a
    # terminal's Ctrl-C, so it puts Python's handler in place whatever it inherited.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    ctrl_c = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    ctrl_c.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            racetrack.launch(module, kernel.symbol, (1, 1, 1), (1, 1, 1), [("ptr", out), ("u64", 1 << 40)],
                             kernel_name="spins", where="test:1")
    finally:
        ctrl_c.cancel()
        signal.signal(signal.SIGINT, inherited)
    assert time.monotonic() - started < 60
    # The next launch runs as usual: the request to stop ended with the one it stopped.
    racetrack.launch(module, kernel.symbol, (1, 1, 1), (1, 1, 1), [("ptr", out), ("u64", 100)],
                     kernel_name="spins", where="test:2")
