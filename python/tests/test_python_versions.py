"""The package on every CPython it installs on (3.9 and later): the native core and the PyCUDA and
CuPy faces everywhere; the Numba face from 3.10, and before that one ImportError saying why."""

import sys
import traceback

import pytest

import racetrack


def test_the_cuda_c_faces_and_the_native_core_import():
    import racetrack.cupy as cp
    import racetrack.pycuda.driver as drv

    assert racetrack.nvrtc_version() >= (13, 0)
    assert cp.asnumpy(cp.arange(3, dtype=cp.int32)).tolist() == [0, 1, 2]
    assert drv.Device.count() == 1


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="the Numba face exists from Python 3.10")
def test_the_numba_face_before_python_3_10_says_why_in_one_line():
    with pytest.raises(ImportError) as caught:
        from racetrack import cuda  # noqa: F401
    message = str(caught.value)
    assert "\n" not in message
    assert "Python >= 3.10" in message and "numba-cuda 0.30.4" in message
    # Raised by the face itself, before anything of Numba's runs, and chained to nothing.
    innermost = traceback.extract_tb(caught.tb)[-1]
    assert innermost.filename.endswith(("racetrack/cuda/_requires.py", "racetrack\\cuda\\_requires.py"))
    assert caught.value.__cause__ is None and caught.value.__context__ is None


@pytest.mark.skipif(sys.version_info < (3, 10), reason="numba-cuda 0.30.4 needs Python 3.10 or later")
def test_the_numba_face_from_python_3_10_imports_the_pinned_numba_cuda():
    from importlib import metadata

    from racetrack import cuda

    assert metadata.version("numba-cuda") == "0.30.4"
    assert cuda.is_available()
