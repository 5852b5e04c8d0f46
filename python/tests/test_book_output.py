"""The output the book's "From Python" page and the README show, regenerated here and compared
with the committed file (RACETRACK_UPDATE_SNAPSHOTS=1 rewrites it), so prose and output cannot
drift."""

import os
import pathlib
import subprocess
import sys

import racetrack
from conftest import skip_without_the_numba_face

# The walk-through is a Numba kernel (`from racetrack import cuda`).
skip_without_the_numba_face()

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SNAPSHOTS = pathlib.Path(__file__).resolve().parent / "snapshots"


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("RACETRACK_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with RACETRACK_UPDATE_SNAPSHOTS=1 and check the diff"


def test_the_walk_through_reports_the_race_at_its_line():
    """`python race_at_your_line.py`, as a learner runs it from examples/."""
    ran = subprocess.run(
        [sys.executable, "race_at_your_line.py"],
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 1, ran.stderr
    package = str(pathlib.Path(racetrack.__file__).parent)
    # Where Python and the package are installed differs between machines; nothing else does.
    text = ran.stdout + ran.stderr.replace(str(EXAMPLES) + os.sep, "").replace(package, "…/racetrack")
    # Newer Pythons underline the failing call with carets; older ones do not.
    text = "".join(line for line in text.splitlines(keepends=True) if line.strip(" ^~\n"))
    check_snapshot("race_at_your_line.txt", text)
    bug = next(n for n, line in enumerate((EXAMPLES / "race_at_your_line.py").read_text().splitlines(), 1) if "# BUG" in line)
    assert f"race_at_your_line.py:{bug}" in text
