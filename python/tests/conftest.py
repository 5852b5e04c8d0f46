import os
import pathlib
import sys

import pytest
from hypothesis import HealthCheck, settings

# Every generated-input test: RACETRACK_PY_EXAMPLES inputs each (CI asks for fewer), no deadline
# (a launch on the emulator takes what it takes), large arrays allowed.
settings.register_profile(
    "racetrack",
    max_examples=int(os.environ.get("RACETRACK_PY_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("racetrack")

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))


def skip_without_the_numba_face() -> None:
    """Skips the calling test module where the Numba face cannot exist: on CPython 3.9, which
    numba-cuda 0.30.4 has no wheels for, with the face's own ImportError as the reason. From 3.10
    on this does nothing, so a Numba face that fails to import fails the tests instead of
    skipping them."""
    if sys.version_info >= (3, 10):
        return
    try:
        import racetrack.cuda  # noqa: F401
    except ImportError as error:
        pytest.skip(str(error), allow_module_level=True)


def bug_line(kernel) -> int:
    """The line of the `# BUG` marker in a broken kernel's source."""
    import inspect

    lines, first = inspect.getsourcelines(kernel.py_func)
    marked = [first + offset for offset, line in enumerate(lines) if "# BUG" in line]
    assert len(marked) == 1, f"{kernel.__name__} should mark exactly one line with # BUG"
    return marked[0]


@pytest.fixture
def bug_line_of():
    return bug_line
