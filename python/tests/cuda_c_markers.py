"""Where the PyCUDA and CuPy examples mark their bugs: the `BUG` comment inside a kernel's CUDA
C (`// BUG`) or on a generated kernel's Python line (`# BUG`)."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name: str):
    """The example module `python/examples/<name>.py`."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bug_line(example: str, anchor: str) -> int:
    """The line of the first `BUG` marker after the first line holding `anchor` (a kernel's
    `void name(` or a generator's `name = ElementwiseKernel(`) in the example's file."""
    lines = (EXAMPLES / f"{example}.py").read_text().splitlines()
    start = next(number for number, line in enumerate(lines) if anchor in line)
    for number in range(start, len(lines)):
        if "// BUG" in lines[number] or "# BUG" in lines[number]:
            return number + 1
        if number > start and ("__global__" in lines[number] or "Kernel(" in lines[number]):
            break
    raise AssertionError(f"no BUG marker after {anchor!r} in {example}.py")


def assert_reported_at(error, example: str, anchor: str) -> None:
    """The finding names the example's file and its BUG line."""
    line = bug_line(example, anchor)
    assert line in error.lines, f"{example}.py:{line} not among the reported lines {error.lines}:\n{error}"
    assert f"{example}.py:{line}" in str(error), str(error)
