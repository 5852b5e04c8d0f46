"""The tutorial corpus (python/examples/tutorials/): programs in the form Numba, PyCUDA and CuPy
tutorials print them, with only the import line changed. Each says what it expects in its
docstring: ``Expect: correct`` (it runs, and its own comparison with NumPy holds), or
``Expect: RaceError`` / ``SyncError`` / ``MemoryAccessError`` at the lines marked ``# BUG``
(every marked line is among the lines the error names)."""

from __future__ import annotations

import os
import pathlib
import re
import runpy
import sys

import pytest

import racetrack

TUTORIALS = pathlib.Path(__file__).resolve().parent.parent / "examples" / "tutorials"
PROGRAMS = sorted(p for p in TUTORIALS.glob("*.py") if not p.name.startswith("_"))
EXPECT = re.compile(r"^Expect: (correct|RaceError|SyncError|MemoryAccessError)\b", re.MULTILINE)

#: Programs that need host-side API the faces do not have yet: which API, and whether it is
#: expected to stay missing (strict: a pass is then a failure, so the mark goes when it lands).
MISSING_API: dict = {}


def expectation(program: pathlib.Path) -> str:
    found = EXPECT.search(program.read_text())
    assert found, f"{program.name} says nothing of what it expects (an `Expect: ...` line)"
    return found.group(1)


def bug_lines(program: pathlib.Path):
    return [n for n, line in enumerate(program.read_text().splitlines(), 1) if re.search(r"(#|//) BUG:", line)]


def needs_numba(program: pathlib.Path) -> bool:
    return program.name.startswith("numba_")


def run(program: pathlib.Path) -> None:
    """Runs the program as `python program.py` would, from the tutorials folder, so that its
    reports name `program.py:LINE`."""
    cwd = os.getcwd()
    os.chdir(TUTORIALS)
    try:
        runpy.run_path(program.name, run_name="__main__")
    finally:
        os.chdir(cwd)


def test_the_corpus_is_big_enough():
    assert len(PROGRAMS) >= 30
    kinds = {expectation(p) for p in PROGRAMS}
    assert kinds == {"correct", "RaceError", "SyncError", "MemoryAccessError"}
    for program in PROGRAMS:
        if expectation(program) != "correct":
            assert bug_lines(program), f"{program.name} expects a finding but marks no # BUG line"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_tutorial(program: pathlib.Path, capsys, request):
    if needs_numba(program) and sys.version_info < (3, 10):
        pytest.skip("the Numba face needs Python >= 3.10 (numba-cuda 0.30.4 has no wheels for 3.9)")
    if program.name in MISSING_API:
        reason, strict = MISSING_API[program.name]
        request.applymarker(pytest.mark.xfail(reason=reason, strict=strict))
    expected = expectation(program)
    if expected == "correct":
        run(program)  # its own assertion compares it with NumPy
        return
    error_class = getattr(racetrack, expected)
    with pytest.raises(error_class) as raised:
        run(program)
    error = raised.value
    for line in bug_lines(program):
        assert line in error.lines, f"{program.name}:{line} is not among {error.lines}:\n{error}"
    # Every finding quotes the lines it names, as a traceback does.
    for line in bug_lines(program):
        assert f'File "{program.name}", line {line}\n' in str(error), str(error)


def test_the_gpu_script_turns_every_import_back_into_the_librarys_own():
    """`examples/run_tutorials.py --real` runs the corpus with numba-cuda, PyCUDA and CuPy: no
    program may keep a `racetrack` import there, and nothing but the imports may change."""
    sys.path.insert(0, str(TUTORIALS.parent))
    try:
        import run_tutorials
    finally:
        sys.path.remove(str(TUTORIALS.parent))
    for program in PROGRAMS:
        source = program.read_text()
        real = run_tutorials.with_real_imports(source)
        assert "racetrack" not in real, program.name
        changed = [(a, b) for a, b in zip(source.splitlines(), real.splitlines()) if a != b]
        assert changed and all(b.lstrip().startswith(("import ", "from ")) for _, b in changed), changed


def differential():
    sys.path.insert(0, str(TUTORIALS.parent))
    try:
        import run_tutorials
    finally:
        sys.path.remove(str(TUTORIALS.parent))
    return run_tutorials


def test_the_differential_comparison_allows_float_reordering_and_nothing_more():
    compare = differential()
    eps = 2.0**-23
    # NumPy's padding and Python's `6.0` beside NumPy's `6.` are the same output.
    assert compare.same_output("[ 0.  2. 10.] 6.0", "[0. 2. 10.] 6.")
    # A float32 sum of 5000 non-negative terms in another order: within 4999 eps of it.
    total = 1234.5678
    assert compare.same_output(repr(total), repr(total * (1 + 4000 * eps)), terms=5000)
    assert not compare.same_output(repr(total), repr(total * (1 + 6000 * eps)), terms=5000)
    # A sum of 2000 terms that lost one term of 0.5 is not a reordering.
    assert not compare.same_output("1012.64526", "1013.14526", terms=2000)
    # An element-wise result is two roundings of its line's scale from the other, no more.
    assert compare.same_output("[13.492527 -0.0000001]", "[13.492528 0.0000001]")
    assert not compare.same_output("[13.492527 5.642928]", "[13.492527 5.642938]")
    # Counts are exact: a racy counter's lost updates are a difference, however few.
    assert not compare.same_output("Counter: 8191", "Counter: 8192")
    # An integer where the library prints a float is another dtype.
    assert not compare.same_output("[1 2 3]", "[1. 2. 3.]")
    # Text and line counts must match too.
    assert not compare.same_output("alive: 5", "dead: 5")
    assert not compare.same_output("1.0\n2.0", "1.0")
    # Only lines naming the machine or a duration are left out.
    assert compare.same_output("Counter: 3\nran in 0.5 ms", "Counter: 3\nran in 0.01 ms")
    assert not compare.same_output("Counter: 3\nalive: 2", "Counter: 3\nalive: 3")


def test_every_printed_float32_sum_declares_its_length():
    """The tolerance trusts a program's `Float32 sums:` line; a correct program whose kernel
    accumulates floats (a reduction, a float atomic add) must have one."""
    compare = differential()
    accumulates = re.compile(r"atomic\.add\(|atomicAdd\(|ReductionKernel|\+= *(?:a|sA|tile|shared|cache)\[|\bsum \+=")
    for program in PROGRAMS:
        source = program.read_text()
        if expectation(program) == "correct" and accumulates.search(source) and "float" in source:
            assert compare.sum_terms(program) > 1, f"{program.name} prints a float32 sum of unstated length"


def test_the_differential_runner_keeps_spinning_and_diverging_kernels_off_the_gpu(monkeypatch):
    """The programs whose kernels may never finish on a GPU are named, exist, and are never
    run by `--real`."""
    compare = differential()
    assert set(compare.GPU_UNSAFE) <= {p.name for p in PROGRAMS}
    for program in PROGRAMS:
        if expectation(program) == "SyncError":
            assert program.name in compare.GPU_UNSAFE, f"{program.name} may hang a GPU"
    ran = []

    def pretend_run(path, timeout):
        ran.append(path.name)
        assert "racetrack" not in path.read_text(), path.name
        return {"returncode": 0, "stdout": "", "error": ""}

    monkeypatch.setattr(compare, "run", pretend_run)
    monkeypatch.setattr(compare, "machine", lambda: {})
    recorded = compare.run_real(timeout=1)["programs"]
    assert set(ran) == {p.name for p in PROGRAMS} - set(compare.GPU_UNSAFE)
    for name, reason in compare.GPU_UNSAFE.items():
        assert recorded[name]["skipped"] == reason


def numba_programs_to_simulate():
    compare = differential()
    return [
        p
        for p in PROGRAMS
        if needs_numba(p) and expectation(p) == "correct" and p.name not in compare.GPU_UNSAFE
    ]


@pytest.mark.parametrize("program", numba_programs_to_simulate(), ids=lambda p: p.stem)
def test_a_numba_program_prints_what_numbas_own_simulator_prints(program: pathlib.Path, tmp_path):
    """The differential test without a GPU: the real numba-cuda's CUDA simulator
    (NUMBA_ENABLE_CUDASIM=1) runs the program with its import turned back, and Racetrack's
    face must print the same, within the float tolerance run_tutorials.py derives. Catches a
    face whose host side (array printing, dtypes, copies, streams) strays from Numba's."""
    if sys.version_info < (3, 10):
        pytest.skip("the Numba face needs Python >= 3.10 (numba-cuda 0.30.4 has no wheels for 3.9)")
    compare = differential()
    real = tmp_path / program.name
    real.write_text(compare.with_real_imports(program.read_text()))
    theirs = compare.run(real, timeout=300, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert theirs["returncode"] == 0, theirs["error"]
    ours = compare.run(program, timeout=300)
    ok, word, why = compare.verdict(program, ours, theirs)
    assert word == "same", f"{why}\nRacetrack: {ours['stdout']}\nsimulator: {theirs['stdout']}"
