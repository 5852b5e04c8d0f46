"""The tutorial corpus (examples/tutorials/) run with the real libraries or on Racetrack, and the
two runs compared: the differential test of issue 47 (results in python/DIFFERENTIAL.md).

    python run_tutorials.py --real > gpu.json              # on a GPU machine: numba-cuda, PyCUDA, CuPy
    python run_tutorials.py --compare gpu.json             # here: each program on Racetrack, beside the GPU's
    python run_tutorials.py --compare gpu.json --markdown  # the same, as DIFFERENTIAL.md's table

`--real` turns each program's import line back into the library's own (`from racetrack import
cuda` becomes `from numba import cuda`, `racetrack.pycuda` becomes `pycuda`, `racetrack.cupy`
becomes `cupy`), runs it in a fresh interpreter from a copy under the same name, and prints one
JSON object: the machine (GPU, driver, library versions) and, for each program, what it
expects, its exit status, what it printed and the last line of its error output. A library
that is missing shows as the program's ImportError. The programs in GPU_UNSAFE (a kernel that
may never finish on a GPU) are not run there; the JSON says why. With NUMBA_ENABLE_CUDASIM=1 and
`--library Numba`, the same runs Numba's own CUDA simulator on the CPU instead of a GPU: the
real library's host side, with kernels run as Python (the JSON's machine says which).

`--compare` runs every program as it is (on Racetrack) and prints, for each, one verdict:
- a correct program is `same` when both runs exit 0 and print the same text, numbers within
  the float tolerance below (see `same_output`), else `DIFF` with the first difference;
- a broken program is `caught` when Racetrack stops it with the finding its docstring names;
  what the GPU printed is only recorded (a race may give any answer, the right one included).
Ends with the counts per library; the exit status is 1 when a correct program differs or a
broken one was not caught.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
TUTORIALS = HERE / "tutorials"
EXPECT = re.compile(r"^Expect: (\w+)", re.MULTILINE)
#: The line a traceback ends with: the exception and its message's first line.
RAISED = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b.*$", re.MULTILINE)
#: A number as Python and NumPy print one: `6`, `-0.5`, `6.`, `1.5e+03`, `nan`, `inf`.
NUMBER = re.compile(r"[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\binf\b|\bnan\b)")

#: The import lines a tutorial prints, from the ones the corpus uses.
REAL_IMPORTS = [
    (re.compile(r"^from racetrack import cuda\b", re.MULTILINE), "from numba import cuda"),
    (re.compile(r"\bracetrack\.pycuda\b"), "pycuda"),
    (re.compile(r"\bracetrack\.cupy\b"), "cupy"),
]

#: Programs never run on a real GPU: their kernels may spin or wait forever there, and a GPU
#: kernel cannot be stopped from the host short of killing its process. Racetrack still runs
#: them (its synccheck and step budget end them with a report).
GPU_UNSAFE = {
    "numba_syncthreads_in_if.py": "a __syncthreads that only some threads reach: the others may wait forever",
    "numba_mutex_plain_read.py": "spins on a plain load, which the compiler may hoist out of the loop: a block "
    "that once sees the flag taken spins forever",
    "numba_mutex.py": "a spin lock (compare-and-swap in a loop); kept off the GPU with the other spinning "
    "mutex variants",
}

#: Output lines that name the machine or a duration differ between any two runs and are left
#: out of the comparison: none of the corpus prints one today; a line a library prints on its
#: own (a device banner, a timing) would be.
MACHINE_OR_TIME = re.compile(
    r"\b(?:device|GPU|emulator|NVIDIA|H100|H200|seconds?|ms|elapsed|time[ds]?)\b", re.IGNORECASE
)

#: Float tolerance. Both runs execute the same kernels in IEEE float32, operation for operation;
#: they may differ only in the order of floating-point additions (atomicAdd's order, a library
#: reduction's tree shape) and in whether a multiply and an add were fused. A sum of n
#: non-negative terms computed in any order lies within (n-1)*u*S of its exact value S (u =
#: eps/2, Higham's gamma bound), so two orders lie within (n-1)*eps*S of each other. A program
#: that prints such a sum says its longest n in its docstring (`Float32 sums: at most 5000
#: terms`); every float32 sum the corpus prints has non-negative terms (rng.random data,
#: squares), so the bound, relative to the printed value, holds. One without that line prints
#: element-wise results only (n = 1: no reordering term).
FLOAT32_EPS = 2.0**-23
SUM_TERMS = re.compile(r"^Float32 sums: at most (\d+) terms", re.MULTILINE)
#: Element-wise results of signed data (a*x + b*y) are one or two roundings from exact, but may
#: cancel to near zero: their error is relative to the operands, whose size the output's largest
#: printed magnitude stands for. Two roundings each way: 4 * u = 2 * eps of that magnitude.
ELEMENTWISE_ROUNDINGS = 2


def programs():
    return sorted(p for p in TUTORIALS.glob("*.py") if not p.name.startswith("_"))


def library(program: pathlib.Path) -> str:
    return {"numba": "Numba", "cupy": "CuPy", "pycuda": "PyCUDA"}[program.name.split("_")[0]]


def expectation(program: pathlib.Path) -> str:
    return EXPECT.search(program.read_text()).group(1)


def sum_terms(program: pathlib.Path) -> int:
    """The most terms of any float32 sum the program prints (1: it prints none)."""
    found = SUM_TERMS.search(program.read_text())
    return int(found.group(1)) if found else 1


def with_real_imports(source: str) -> str:
    for pattern, real in REAL_IMPORTS:
        source = pattern.sub(real, source)
    return source


def run(path: pathlib.Path, timeout: int, env: dict | None = None) -> dict:
    """`python path` from its folder, in a fresh interpreter (`env`: its environment)."""
    try:
        ran = subprocess.run(
            [sys.executable, path.name], cwd=path.parent, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return {"returncode": None, "stdout": "", "error": f"timed out after {timeout} s"}
    raised = RAISED.search(ran.stderr)
    error = raised.group(0) if raised else "\n".join(ran.stderr.strip().splitlines()[-3:])
    return {"returncode": ran.returncode, "stdout": ran.stdout, "error": error}


#: Printed by a fresh interpreter on the GPU machine: what the runs there used.
MACHINE_SCRIPT = r"""
import importlib.metadata, json, os, platform, numpy
found = {"python": platform.python_version(), "numpy": numpy.__version__}
if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    found["device"] = "Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), no GPU"
try:
    import numba
    found["numba"] = numba.__version__
    found["numba-cuda"] = importlib.metadata.version("numba-cuda")
except Exception as error:
    found["numba error"] = repr(error)
try:
    import cupy
    found["cupy"] = cupy.__version__
    found["cuda runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    found["driver"] = cupy.cuda.runtime.driverGetVersion()
    found.setdefault("device", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
except Exception as error:
    found["cupy error"] = repr(error)
try:
    import pycuda
    found["pycuda"] = pycuda.VERSION_TEXT
except Exception as error:
    found["pycuda error"] = repr(error)
print(json.dumps(found))
"""


def machine() -> dict:
    ran = subprocess.run([sys.executable, "-c", MACHINE_SCRIPT], capture_output=True, text=True)
    try:
        return json.loads(ran.stdout)
    except json.JSONDecodeError:
        return {"error": ran.stderr.strip()[-500:]}


def run_real(timeout: int, output: pathlib.Path | None = None, libraries=None, jobs: int = 1) -> dict:
    """Every program of `libraries` (all when None) with the real libraries, `jobs` at a time
    (each in its own process: the GPU runs them side by side). With `output`, the JSON so far
    is written there after each program, so a run stopped at its time limit keeps what it
    finished."""
    results = {}
    recorded = {"machine": machine(), "programs": results}
    chosen = [p for p in programs() if libraries is None or library(p) in libraries]
    with tempfile.TemporaryDirectory() as folder:

        def run_one(program: pathlib.Path) -> None:
            expect = expectation(program)
            if program.name in GPU_UNSAFE:
                results[program.name] = {"expect": expect, "skipped": GPU_UNSAFE[program.name]}
                print(f"{program.name}: not run ({GPU_UNSAFE[program.name]})", file=sys.stderr)
                return
            copy = pathlib.Path(folder) / program.name
            copy.write_text(with_real_imports(program.read_text()))
            results[program.name] = {"expect": expect, **run(copy, timeout)}
            print(f"{program.name}: exit {results[program.name]['returncode']}", file=sys.stderr, flush=True)

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for done in concurrent.futures.as_completed([pool.submit(run_one, p) for p in chosen]):
                done.result()
                if output:
                    output.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    return recorded


def merged(recordings: list) -> dict:
    """Several --real runs (one per library, say) as one: their programs together, and each
    machine entry from the run that found it (a library's error only where no run found it)."""
    machine_found, programs_run = {}, {}
    for recorded in recordings:
        programs_run.update(recorded["programs"])
        machine_found.update({k: v for k, v in recorded["machine"].items() if not k.endswith(" error")})
    for recorded in recordings:
        for key, value in recorded["machine"].items():
            if key.endswith(" error") and key[: -len(" error")] not in machine_found:
                machine_found[key] = value
    return {"machine": machine_found, "programs": programs_run}


def compared_lines(text: str) -> list:
    return [line for line in text.splitlines() if line.strip() and not MACHINE_OR_TIME.search(line)]


def tokens(line: str):
    """The line's numbers, and its text with each number replaced by `#`, spaces collapsed and
    none beside a bracket (NumPy pads array columns to the widest number, which differs when
    the numbers do: `[ 1.  2. 10.]` and `[1. 2. 3.]` are the same text)."""
    numbers = NUMBER.findall(line)
    text = " ".join(NUMBER.sub("#", line).split())
    return numbers, re.sub(r" ?([\[\]]) ?", r"\1", text)


def is_integer(token: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", token) is not None


def same_number(ours: str, theirs: str, scale: float, terms: int) -> bool:
    """Integers (counts, histogram bins, integer scans) must be equal; floats agree within the
    tolerance above. A float printed as `6.` on one side and `6.0` on the other is the same;
    `6` beside `6.` is not (an integer where the library gives a float: another dtype)."""
    if is_integer(ours) or is_integer(theirs):
        return is_integer(ours) and is_integer(theirs) and int(ours) == int(theirs)
    a, b = float(ours), float(theirs)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    reordering = (terms - 1) * FLOAT32_EPS * max(abs(a), abs(b))
    bound = reordering + ELEMENTWISE_ROUNDINGS * FLOAT32_EPS * scale
    return abs(a - b) <= bound


def first_difference(ours: str, theirs: str, terms: int = 1):
    """None when the two outputs are the same, else what differs first, in one sentence.
    `terms`: the most terms of a float32 sum the output prints (see SUM_TERMS)."""
    a, b = compared_lines(ours), compared_lines(theirs)
    if len(a) != len(b):
        return f"{len(a)} lines here, {len(b)} with the real library"
    for line_a, line_b in zip(a, b):
        numbers_a, text_a = tokens(line_a)
        numbers_b, text_b = tokens(line_b)
        if text_a != text_b or len(numbers_a) != len(numbers_b):
            return f"{line_a!r} here, {line_b!r} with the real library"
        scale = max((abs(float(n)) for n in numbers_a + numbers_b if not re.search("nan|inf", n)), default=0.0)
        for x, y in zip(numbers_a, numbers_b):
            if not same_number(x, y, scale, terms):
                return f"{x} here, {y} with the real library, in {line_a!r}"
    return None


def same_output(ours: str, theirs: str, terms: int = 1) -> bool:
    return first_difference(ours, theirs, terms) is None


def verdict(program: pathlib.Path, ours: dict, theirs: dict | None):
    """(ok, word, why) for one program: `same`/`DIFF` for a correct one, `caught`/`MISSED`
    for a broken one."""
    expect = expectation(program)
    if expect == "correct":
        if theirs is None or "skipped" in theirs:
            why = theirs["skipped"] if theirs else "not in the real run's results"
            return ours["returncode"] == 0, "not compared", why
        if ours["returncode"] != 0 or theirs["returncode"] != 0:
            return False, "DIFF", f"exit {ours['returncode']} here, {theirs['returncode']} with the real library"
        difference = first_difference(ours["stdout"], theirs["stdout"], sum_terms(program))
        return difference is None, "same" if difference is None else "DIFF", difference or ""
    caught = ours["returncode"] != 0 and ours["error"].startswith(f"racetrack.{expect}:")
    return caught, "caught" if caught else "MISSED", "" if caught else f"expected racetrack.{expect}"


def gpu_summary(theirs: dict | None) -> str:
    if theirs is None:
        return "(not run)"
    if "skipped" in theirs:
        return f"not run: {theirs['skipped']}"
    printed = " / ".join(compared_lines(theirs["stdout"]))
    error = f"; {theirs['error'].splitlines()[-1]}" if theirs["returncode"] != 0 and theirs["error"] else ""
    return f"exit {theirs['returncode']}: {printed}{error}"


def ours_summary(ours: dict) -> str:
    printed = " / ".join(compared_lines(ours["stdout"]))
    if ours["returncode"] == 0:
        return printed
    error = ours["error"].splitlines()[-1] if ours["error"] else f"exit {ours['returncode']}"
    return f"{printed + '; ' if printed else ''}{error[:120]}"


def compare(gpu_files: list, timeout: int, markdown: bool) -> int:
    recorded = merged([json.loads(pathlib.Path(f).read_text()) for f in gpu_files])
    gpu = recorded["programs"]
    counts: dict = {}
    failed = 0
    if markdown:
        print("| program | expects | verdict | Racetrack printed | the real library printed |")
        print("|---|---|---|---|---|")
    for program in programs():
        ours = run(program, timeout)
        theirs = gpu.get(program.name)
        ok, word, why = verdict(program, ours, theirs)
        failed += not ok
        tally = counts.setdefault(library(program), {})
        tally[word] = tally.get(word, 0) + 1
        expect = expectation(program)
        if markdown:
            def cell(text: str, width: int = 72) -> str:
                text = text if len(text) <= width else text[: width - 1] + "…"
                return text.replace("|", "\\|")

            note = f" ({why})" if why and word != "not compared" else ""
            print(
                f"| {program.name} | {expect} | {word}{cell(note, 200)} | `{cell(ours_summary(ours))}` "
                f"| `{cell(gpu_summary(theirs))}` |"
            )
            continue
        print(f"{word:6} {program.name} (expects {expect}){': ' + why if why else ''}")
        if not ok or expect != "correct":
            print(f"       racetrack: {ours_summary(ours)[:200]}")
            print(f"       real:      {gpu_summary(theirs)[:200]}")
    summary = "; ".join(
        f"{name}: " + ", ".join(f"{n} {word}" for word, n in sorted(tally.items())) for name, tally in counts.items()
    )
    print(f"\n{summary}" if markdown else summary)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--real", action="store_true", help="run with numba-cuda, PyCUDA and CuPy; print JSON")
    group.add_argument(
        "--compare", metavar="REAL_JSON", nargs="+", help="run on Racetrack; compare with --real's outputs (merged)"
    )
    parser.add_argument("--library", nargs="+", choices=["Numba", "CuPy", "PyCUDA"], help="with --real: these only")
    parser.add_argument("--jobs", type=int, default=1, help="with --real: programs run at once (default 1)")
    parser.add_argument("--output", type=pathlib.Path, help="with --real: also write the JSON here, after each program")
    parser.add_argument("--markdown", action="store_true", help="with --compare: print a Markdown table")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per program (default 300)")
    args = parser.parse_args()
    if args.real:
        json.dump(run_real(args.timeout, args.output, args.library, args.jobs), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    return compare(args.compare, args.timeout, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
