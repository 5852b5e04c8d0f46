"""``cupy.cuda.compiler``: what a kernel source the compiler refuses raises."""

from __future__ import annotations

from typing import Sequence

from .. import _core


class CompileException(_core.CompileError):
    """CuPy's exception for a source NVRTC refuses: ``str(error)`` is NVRTC's log
    (``kernel.py(12): error: …``), ``error.source`` the code, ``error.name`` its file name. It
    is also a ``racetrack.CompileError``."""

    def __init__(self, msg: str, source: str, name: str, options: Sequence[str] = (), backend: str = "nvrtc"):
        self._msg = msg
        self.source = source
        self.name = name
        self.options = tuple(options)
        self.backend = backend
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self._msg, self.source, self.name, self.options, self.backend))

    def get_message(self) -> str:
        return self._msg

    def dump(self, f) -> None:
        """Writes the source with line numbers, as CuPy's does, to the file ``f``."""
        lines = self.source.split("\n")
        digits = len(str(len(lines)))
        f.write("==========\n")
        for number, line in enumerate(lines, 1):
            f.write(f"{number:{digits}d} {line}\n")
        f.write("==========\n")


CompileException.__module__ = "racetrack.cupy.cuda.compiler"  # where users import it from


def compile_error(log: str, program) -> CompileException:
    return CompileException(log, program.source, program.name)
