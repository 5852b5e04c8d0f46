"""Numba's foreign functions: ``cuda.declare_device(name, sig, link=...)`` and
``cuda.jit(link=[...])``. The CUDA C files are compiled by Racetrack's NVRTC to relocatable PTX
and linked with the kernels that call them, as Numba's linker does on a GPU; a finding inside a
foreign function names its ``.cu`` line.

Numba's own ``declare_device`` types the calls (it needs no driver); what is linked is kept
here, by the function's name, and looked up by the ``.extern .func`` declarations of a kernel's
PTX.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Iterable, List, Tuple

import numba.cuda as _numba_cuda

from .. import _native
from .._core import relative_path

#: The files each declared foreign function needs linked, by its name.
_links_of_function: Dict[str, Tuple] = {}
#: Files device functions link (``cuda.jit(device=True, link=...)``), linked into a kernel that
#: calls a function one of them defines.
_device_function_links: List = []
#: Relocatable PTX of each CUDA C source, by (its text, its name, the include folders).
_compiled: Dict[Tuple, str] = {}

_EXTERN_FUNCTION = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(", re.MULTILINE)
_DEFINED_FUNCTION = re.compile(r"^\s*\.visible\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(", re.MULTILINE)


def as_links(link) -> Tuple:
    """Numba's ``link=`` argument as a tuple: one path or code object, or several."""
    if link is None:
        return ()
    if isinstance(link, (list, tuple, set)):
        return tuple(link)
    return (link,)


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """``cuda.declare_device``: Numba's declaration, whose ``link`` files are linked into every
    kernel that calls ``name``."""
    descriptor = _numba_cuda.declare_device(name, sig, link=link, use_cooperative=use_cooperative, abi=abi)
    _links_of_function[name] = as_links(link)
    return descriptor


def device_function_links(link) -> None:
    """A device function's ``link=`` files: linked into the kernels that call what they define."""
    _device_function_links.extend(as_links(link))


def linked_units(ptx: str, kernel_links: Iterable = ()) -> List[str]:
    """The PTX of what a kernel with this PTX links: its own ``link=``, the files of the
    foreign functions it calls, and device functions' files that define them, each once."""
    wanted = list(kernel_links)
    for name in _EXTERN_FUNCTION.findall(ptx):
        wanted.extend(_links_of_function.get(name, ()))
        wanted.extend(link for link in _device_function_links if name in _DEFINED_FUNCTION.findall(_ptx_of(link)))
    units, seen = [], set()
    for link in wanted:
        key = link if isinstance(link, str) else id(link)
        if key not in seen:
            seen.add(key)
            units.append(_ptx_of(link))
    return units


def _include_dirs() -> List[str]:
    """Where Numba's NVRTC looks for headers besides CUDA's own (which Racetrack adds): its
    shims and ``config.CUDA_NVRTC_EXTRA_SEARCH_PATHS``."""
    from numba.cuda import config

    numba_cuda_dir = os.path.dirname(os.path.abspath(_numba_cuda.__file__))
    dirs = [os.path.join(numba_cuda_dir, "include", "13"), os.path.join(numba_cuda_dir, "memory_management")]
    extra = getattr(config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "") or ""
    dirs.extend(d for d in extra.split(":") if d)
    return [d for d in dirs if os.path.isdir(d)]


def _ptx_of(link) -> str:
    if isinstance(link, str):
        extension = os.path.splitext(link)[1]
        if extension == ".ptx":
            with open(link, encoding="utf-8") as file:
                return file.read()
        if extension != ".cu":
            raise NotImplementedError(
                f"racetrack.cuda links CUDA C (.cu) and PTX (.ptx) files; {link} is a {extension or 'extensionless'} "
                "file, which only a GPU's linker takes"
            )
        with open(link, encoding="utf-8") as file:
            return _compiled_cuda(file.read(), relative_path(link))
    from numba.cuda.cudadrv.linkable_code import CUSource, PTXSource

    if isinstance(link, (CUSource, PTXSource)):
        text = link.data.decode() if isinstance(link.data, bytes) else link.data
        if isinstance(link, PTXSource):
            return text
        return _compiled_cuda(text, f"{link.name}.cu")
    raise NotImplementedError(
        f"racetrack.cuda links CUDA C and PTX sources; {type(link).__name__} {getattr(link, 'name', '')!r} "
        "is code only a GPU's linker takes"
    )


def _compiled_cuda(source: str, name: str) -> str:
    """``source``'s relocatable PTX, compiled once for each text, name and header search path
    (NVRTC's own cache also keeps it across processes)."""
    key = (source, name, tuple(_include_dirs()))
    if key not in _compiled:
        _compiled[key] = _native.compile_device_functions(source, name, list(key[2]))
    return _compiled[key]
