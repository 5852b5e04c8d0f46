"""The tutorial corpus (examples/tutorials/) run with the real libraries or on Racetrack, and the
two runs compared: the differential test of issue 47.

    python run_tutorials.py --real > gpu.json      # on a GPU machine: numba-cuda, PyCUDA, CuPy
    python run_tutorials.py --compare gpu.json     # here: each program on Racetrack, beside the GPU's output

`--real` turns each program's import line back into the library's own (`from racetrack import
cuda` becomes `from numba import cuda`, `racetrack.pycuda` becomes `pycuda`, `racetrack.cupy`
becomes `cupy`), runs it in a fresh interpreter from a copy under the same name, and prints one
JSON object: for each program what it expects, its exit status, what it printed and the last
lines of its error output. A library that is missing shows as the program's ImportError.

`--compare` runs every program as it is (on Racetrack) and prints, for each, whether its output
matches the GPU's: the numbers each printed are compared within a float tolerance. A program
that expects a finding is expected to stop with it here and to run on the GPU (where no checker
stops it); what the GPU printed is shown beside it. Ends with `N same, N different`; the exit
status is 1 when a correct program's output differs or a broken one was not caught.
"""

from __future__ import annotations

import argparse
import json
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
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")

#: The import lines a tutorial prints, from the ones the corpus uses.
REAL_IMPORTS = [
    (re.compile(r"^from racetrack import cuda\b", re.MULTILINE), "from numba import cuda"),
    (re.compile(r"\bracetrack\.pycuda\b"), "pycuda"),
    (re.compile(r"\bracetrack\.cupy\b"), "cupy"),
]


def programs():
    return sorted(p for p in TUTORIALS.glob("*.py") if not p.name.startswith("_"))


def with_real_imports(source: str) -> str:
    for pattern, real in REAL_IMPORTS:
        source = pattern.sub(real, source)
    return source


def run(path: pathlib.Path, timeout: int) -> dict:
    try:
        ran = subprocess.run(
            [sys.executable, path.name], cwd=path.parent, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"returncode": None, "stdout": "", "error": f"timed out after {timeout} s"}
    raised = RAISED.search(ran.stderr)
    error = raised.group(0) if raised else "\n".join(ran.stderr.strip().splitlines()[-3:])
    return {"returncode": ran.returncode, "stdout": ran.stdout, "error": error}


def run_real(timeout: int) -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for program in programs():
            copy = pathlib.Path(folder) / program.name
            copy.write_text(with_real_imports(program.read_text()))
            results[program.name] = {"expect": EXPECT.search(program.read_text()).group(1), **run(copy, timeout)}
            print(f"{program.name}: exit {results[program.name]['returncode']}", file=sys.stderr)
    return results


def numbers(text: str):
    return [float(n) for n in NUMBER.findall(text)]


def same_numbers(ours: str, theirs: str, rtol: float = 1e-3, atol: float = 1e-4) -> bool:
    a, b = numbers(ours), numbers(theirs)
    return len(a) == len(b) and all(abs(x - y) <= atol + rtol * abs(y) for x, y in zip(a, b))


def compare(gpu_file: str, timeout: int) -> int:
    gpu = json.loads(pathlib.Path(gpu_file).read_text())
    same = different = 0
    for program in programs():
        expect = EXPECT.search(program.read_text()).group(1)
        ours = run(program, timeout)
        theirs = gpu.get(program.name)
        if theirs is None:
            print(f"?    {program.name}: not in {gpu_file}")
            different += 1
            continue
        if expect == "correct":
            ok = ours["returncode"] == 0 and theirs["returncode"] == 0 and same_numbers(ours["stdout"], theirs["stdout"])
        else:
            caught = ours["returncode"] != 0 and ours["error"].startswith(f"racetrack.{expect}:")
            ok = caught and theirs["returncode"] == 0
        same += ok
        different += not ok
        print(f"{'same' if ok else 'DIFF'} {program.name} (expects {expect})")
        if not ok or expect != "correct":
            print(f"       racetrack: exit {ours['returncode']}: {ours['stdout'].strip()[:200]}")
            if ours["error"]:
                print("         " + ours["error"].splitlines()[-1][:200])
            print(f"       GPU:       exit {theirs['returncode']}: {theirs['stdout'].strip()[:200]}")
            if theirs["error"]:
                print("         " + theirs["error"].splitlines()[-1][:200])
    print(f"{same} same, {different} different")
    print("(a broken program is `same` when Racetrack stops it with its finding and the GPU runs it)")
    return 1 if different else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--real", action="store_true", help="run with numba-cuda, PyCUDA and CuPy; print JSON")
    group.add_argument("--compare", metavar="GPU_JSON", help="run on Racetrack and compare with --real's output")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per program (default 300)")
    args = parser.parse_args()
    if args.real:
        json.dump(run_real(args.timeout), sys.stdout, indent=1)
        print()
        return 0
    return compare(args.compare, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
