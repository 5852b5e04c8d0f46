"""The Numba, PyCUDA and CuPy examples on a real GPU, with the real libraries in place of racetrack's
faces: what changing the import line back does.

    python on_a_gpu.py            # on a machine with an NVIDIA GPU and numba-cuda, CuPy, PyCUDA
    python on_a_gpu.py CuPy       # one library's part: Numba, CuPy, PyCUDA or "host API"

Each example's fixed kernels run and are compared with NumPy; each broken one runs too, with
no checker to stop it, and the script prints what it computed beside the right answer (a racy
counter loses counts; a race may also happen to give the right answer, which is why a checker
is needed). Ends with `N passed, N failed`.
"""

import importlib.util
import pathlib
import sys
import types

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def stand_in(**faces) -> None:
    """Makes `import racetrack…` give the real libraries, as the examples' import lines
    would if they named them."""
    racetrack = types.ModuleType("racetrack")
    for name in ("RaceError", "SyncError", "MemoryAccessError", "FindingError"):
        setattr(racetrack, name, type(name, (Exception,), {}))
    sys.modules["racetrack"] = racetrack
    for name, module in faces.items():
        setattr(racetrack, name.split(".")[0], sys.modules[module.split(".")[0]])
        sys.modules[f"racetrack.{name}"] = sys.modules[module]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


results = {"passed": 0, "failed": 0}


def check(what: str, ok: bool, detail: str = "") -> None:
    results["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")


def numba_examples() -> None:
    from numba import cuda

    if not cuda.is_available():
        raise ImportError("numba.cuda sees no GPU")
    stand_in()
    sys.modules["racetrack"].cuda = cuda  # `from racetrack import cuda` gives Numba's own
    rng = np.random.default_rng(2)
    atomics = load("ch4_atomics")
    check("numba ch4 atomic_increment", atomics.increment(64, 256) == 64 * 256)
    racy = atomics.increment(64, 256, atomics.racy_increment)
    print(f"     racy_increment on the GPU: {racy} (right: {64 * 256})")
    data = rng.integers(0, 1000, 100_000).astype(np.int32)
    for kernel in ("histogram_global", "histogram_shared"):
        got = atomics.histogram(data, getattr(atomics, kernel))
        check(f"numba ch4 {kernel}", np.array_equal(got, atomics.histogram_numpy(data)))
    reductions = load("ch2_reductions")
    x = rng.random(100_000).astype(np.float32)
    exact = float(x.astype(np.float64).sum())
    got = float(reductions.total(x))
    check("numba ch2 tree_sum", abs(got - exact) <= 64 * np.finfo(np.float32).eps * exact, f"{got} vs {exact}")
    scans = load("ch6_scans")
    x = rng.integers(-100, 100, 200).astype(np.int32)
    check("numba ch6 hillis_steele", np.array_equal(scans.inclusive_scan(x), np.cumsum(x, dtype=np.int32)))
    matmul = load("ch7_matmul")
    a = rng.random((100, 70)).astype(np.float32)
    b = rng.random((70, 90)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = matmul.matmul(a, b)
    check("numba ch7 matmul_tiled", bool(np.all(np.abs(got - exact) <= matmul.error_bound(a, b))))
    numba_ufuncs(rng)
    numba_memory_kinds(rng)
    numba_records()
    numba_grid_sync(rng)
    numba_many_gpus(rng)


def numba_ufuncs(rng) -> None:
    ufuncs = load("ufuncs")
    x = rng.random(10_000).astype(np.float32)
    y = rng.random(10_000).astype(np.float32)
    exact = 3.0 * x.astype(np.float64) + y
    got = ufuncs.scaled_add(np.float32(3), x, y)
    check("numba vectorize scaled_add", bool(np.all(np.abs(got - exact) <= np.finfo(np.float32).eps * (3 * x + y))))
    levels = rng.integers(0, ufuncs.LEVELS, 1000).astype(np.int32)
    check("numba vectorize brightness", np.array_equal(ufuncs.brightness(levels), ufuncs.brightness_numpy(levels)))
    rows = rng.random((500, 64)).astype(np.float32)
    exact = (rows.astype(np.float64) ** 2).sum(axis=1)
    got = ufuncs.row_dot(rows, rows)
    check("numba guvectorize row_dot", bool(np.all(np.abs(got - exact) <= 65 * np.finfo(np.float32).eps * exact)))
    ints = rng.integers(-100, 100, (300, 50)).astype(np.int32)
    check("numba guvectorize running_sum", np.array_equal(ufuncs.running_sum(ints), np.cumsum(ints, axis=1, dtype=np.int32)))
    # The broken one writes past its last row; on a GPU that lands in whatever follows.
    ones = np.ones((300, 50), np.int32)
    wrong = int((ufuncs.running_sum_past_the_row(ones) != np.cumsum(ones, axis=1, dtype=np.int32)).sum())
    print(f"     running_sum_past_the_row on the GPU: {wrong} of {ones.size} sums wrong this run")


def numba_memory_kinds(rng) -> None:
    memory = load("memory_kinds")
    x = rng.standard_normal(100_000).astype(np.float32)
    want = int((x > 0).sum())
    check("numba mapped_array count_positive", memory.count_positive_mapped(x) == want)
    print(f"     count_positive_racy on the GPU: {memory.count_positive_mapped(x, memory.count_positive_racy)} (right: {want})")
    values = rng.standard_normal(5000).astype(np.float32)
    check("numba managed_array clamp", np.array_equal(memory.clamp_managed(values, -1, 1), np.clip(values, -1, 1)))
    values = rng.standard_normal(5000)
    want = values * 3.0
    check("numba cuda.mapped scale", np.array_equal(memory.scale_mapped(values, 3.0), want))


def numba_records() -> None:
    records = load("records")
    start = records.random_particles(10_000, wall=100)
    moved = records.simulate(start, 1, 100, 50)
    check("numba records advance", np.array_equal(moved, records.simulate_numpy(start, 1, 100, 50)))
    want = int(moved["bounces"].sum())
    check("numba records total_bounces", records.count_bounces(moved) == want)
    print(f"     total_bounces_into_record on the GPU: {records.count_bounces_into_record(moved)} (right: {want})")


def numba_grid_sync(rng) -> None:
    """Kernels that sync their grid (`cuda.cg.this_grid().sync()`), launched cooperatively."""
    grid_sync = load("grid_sync")
    rod = rng.uniform(0, 100, 5000)
    got = grid_sync.diffuse_rod(rod, 20)
    want = grid_sync.diffuse_numpy(rod, 20)
    check("numba grid sync diffuse", bool(np.allclose(got, want, rtol=1e-13, atol=1e-12)))
    x = rng.standard_normal(100_000)
    check("numba grid sync blur_after_grid_sync", bool(np.allclose(grid_sync.blur_squares(x), grid_sync.blur_squares_numpy(x), rtol=1e-15)))
    racy = grid_sync.blur_squares(x, grid_sync.blur_after_block_barrier)
    wrong = int((~np.isclose(racy, grid_sync.blur_squares_numpy(x), rtol=1e-15)).sum())
    print(f"     blur_after_block_barrier on the GPU: {wrong} of {x.size} values wrong this run")
    # What the emulator refuses as too large to be resident, the GPU's driver should refuse too.
    sig = grid_sync.diffuse.signatures[0]
    most = grid_sync.diffuse.overloads[sig].max_cooperative_grid_blocks(grid_sync.THREADS)
    print(f"     max_cooperative_grid_blocks({grid_sync.THREADS}) on this GPU: {most} (the emulator: 2640 where a ptxas counts its registers)")


def numba_many_gpus(rng) -> None:
    """Chapter 8 on every GPU of the machine: skipped, saying so, with fewer than two."""
    from numba import cuda

    if len(cuda.gpus) < 2:
        print(f"skip numba ch8 (many GPUs): it needs 2 GPUs, and this machine has {len(cuda.gpus)}")
        return
    many = load("ch8_many_gpus")  # once: it remembers which peer access it enabled
    ranks = len(cuda.gpus)
    x = rng.uniform(-1, 1, 1_000_003).astype(np.float32)
    exact = float(x.astype(np.float64).sum())
    bound = many.split_sum_error_bound(x, 64)
    got = many.sum_by_copies(x, 64)
    check(f"numba ch8 sum_by_copies ({ranks} GPUs)", abs(got - exact) <= bound, f"{got} vs {exact}")
    # GPU 0 reads every other GPU's block sums; in the ring each GPU reads its predecessor's chunks.
    pairs = {(0, p) for p in range(1, ranks)} | {(r, (r - 1) % ranks) for r in range(ranks)}
    blocked = sorted((r, o) for r, o in pairs if not cuda.gpus[r].get_primary_context().can_access_peer(o))
    if blocked:
        print(f"skip numba ch8 sum_over_peers and the ring: GPU {blocked[0][0]} cannot access GPU {blocked[0][1]}'s memory")
        return
    got = many.sum_over_peers(x, 64)
    check("numba ch8 sum_over_peers", abs(got - exact) <= bound, f"{got} vs {exact}")
    n = 1_000_001  # not a multiple of the ring's size, so the wrong offset shows
    inputs = [rng.uniform(0.5, 1, n).astype(np.float32) for _ in range(ranks)]
    want = np.sum(np.asarray(inputs, np.float64), axis=0)
    bound = many.all_reduce_error_bound(inputs)
    outputs = many.all_reduce(inputs, 80, 256)
    check("numba ch8 ring all_reduce", all(bool(np.all(np.abs(out - want) <= bound)) for out in outputs))
    outputs = many.all_reduce(inputs, 80, 256, gather_step=many.ring_gather_without_wait, gather_waits=False)
    wrong = sum(int((np.abs(out - want) > bound).sum()) for out in outputs)
    print(f"     ring without the event wait on the GPUs: {wrong} of {n * ranks} values wrong this run")
    outputs = many.all_reduce(inputs, 80, 256, reduce_step=many.ring_reduce_wrong_offset)
    wrong = sum(int((np.abs(out - want) > bound).sum()) for out in outputs)
    print(f"     ring_reduce_wrong_offset on the GPUs: {wrong} of {n * ranks} values wrong (n % {ranks} = {n % ranks} per device)")


def cupy_examples() -> None:
    import cupy  # noqa: F401

    stand_in(cupy="cupy")
    rng = np.random.default_rng(0)
    counter = load("cupy_ch4_counter")
    x = rng.random(100_000).astype(np.float32)
    want = int((x > 0.5).sum())
    check("cupy ch4 count_atomic", counter.count_above(x, 0.5) == want)
    print(f"     count_racy on the GPU: {counter.count_above(x, 0.5, counter.count_racy)} (right: {want})")
    block_sum = load("cupy_ch2_block_sum")
    x = rng.random(5000).astype(np.float32)
    got = float(block_sum.block_sums(x).astype(np.float64).sum())
    exact = float(x.astype(np.float64).sum())
    check("cupy ch2 tree_sum", abs(got - exact) <= 16 * np.finfo(np.float32).eps * exact, f"{got} vs {exact}")
    scan = load("cupy_ch6_scan")
    x = rng.integers(-100, 100, 1000).astype(np.int32)
    check("cupy ch6 scan_double_buffer", np.array_equal(scan.inclusive_scan(x), np.cumsum(x, dtype=np.int32)))
    wrong = int((scan.inclusive_scan(x, "scan_single_buffer") != np.cumsum(x, dtype=np.int32)).sum())
    print(f"     scan_single_buffer on the GPU: {wrong} of {x.size} sums wrong this run")


def pycuda_examples() -> None:
    import pycuda.autoinit  # noqa: F401
    import pycuda.compiler  # noqa: F401
    import pycuda.driver  # noqa: F401
    import pycuda.elementwise  # noqa: F401
    import pycuda.gpuarray  # noqa: F401
    import pycuda.reduction  # noqa: F401

    stand_in(
        **{
            "pycuda": "pycuda",
            "pycuda.autoinit": "pycuda.autoinit",
            "pycuda.driver": "pycuda.driver",
            "pycuda.compiler": "pycuda.compiler",
            "pycuda.gpuarray": "pycuda.gpuarray",
            "pycuda.elementwise": "pycuda.elementwise",
            "pycuda.reduction": "pycuda.reduction",
        }
    )
    rng = np.random.default_rng(1)
    histogram = load("pycuda_ch4_histogram")
    data = rng.integers(0, 256, 100_000).astype(np.uint8)
    check(
        "pycuda ch4 histogram_shared",
        np.array_equal(histogram.histogram(data), np.bincount(data, minlength=256)),
    )
    reduction = load("pycuda_ch2_reduction")
    x = rng.random(5000).astype(np.float32)
    exact = float(x.astype(np.float64).sum())
    bound = 64 * np.finfo(np.float32).eps * exact
    check(
        "pycuda ch2 tree_sum", abs(float(reduction.block_sums(x).astype(np.float64).sum()) - exact) <= bound
    )
    check("pycuda ch2 ReductionKernel", abs(reduction.reduction_kernel_sum(x) - exact) <= bound)
    reductions = load("pycuda_ch2_reductions")
    check(
        "pycuda ch2 prepared_call tree_sum",
        abs(float(reductions.block_sums_prepared(x).astype(np.float64).sum()) - exact) <= bound,
    )
    saxpy = load("pycuda_ch1_saxpy")
    x = rng.random(1000).astype(np.float32)
    y = rng.random(1000).astype(np.float32)
    bound = np.finfo(np.float32).eps * (2 * x + y)
    check(
        "pycuda ch1 ElementwiseKernel saxpy",
        bool(np.all(np.abs(saxpy.run(2.0, x, y) - (2 * x + y)) <= bound)),
    )


def host_api_examples() -> None:
    """host_api.py's cases with the real libraries: the host-side API and its errors, against
    NumPy, as pytest runs them against Racetrack's faces."""
    host_api = load("host_api")
    for name, run in host_api.all_cases(host_api.libraries(real=True)):
        ok, detail = run()
        check(f"host API {name}", ok, detail)


PARTS = {
    "Numba": numba_examples,
    "CuPy": cupy_examples,
    "PyCUDA": pycuda_examples,
    "host API": host_api_examples,
}


def run_part(name: str) -> None:
    try:
        PARTS[name]()
    except ImportError as error:
        print(f"skip {name}: {error}")
    print(f"{results['passed']} passed, {results['failed']} failed")


def run_each_part_in_its_own_process() -> int:
    """Each library in a process of its own: PyCUDA's `autoinit` leaves its context current,
    and CuPy's kernels loaded under it fail with CUDA_ERROR_INVALID_HANDLE, which says nothing
    of either library."""
    import subprocess

    passed = failed = 0
    for name in PARTS:
        done = subprocess.run([sys.executable, __file__, name], stdout=subprocess.PIPE, text=True)
        lines = done.stdout.splitlines()
        print("\n".join(lines[:-1]), flush=True)
        tally = lines[-1].split() if lines else []
        if done.returncode != 0 or len(tally) != 4 or tally[1:4:2] != ["passed,", "failed"]:
            print(f"FAIL {name}: its process ended with code {done.returncode}")
            failed += 1
            continue
        passed += int(tally[0])
        failed += int(tally[2])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run_part(sys.argv[1])
    else:
        sys.exit(run_each_part_in_its_own_process())
