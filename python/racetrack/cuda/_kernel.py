"""``@cuda.jit`` kernels: compiled by Numba per argument types, launched on the emulator with
``kernel[blocks, threads](args)``."""

from __future__ import annotations

import inspect
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from numba.core import sigutils
from numba.cuda.cudadrv.driver import CudaAPIError

from .. import _core, _native
from ._ffi import as_links, linked_units
from ._abi import Marshalled, numba_type
from ._compile import compile_kernel
from ._grid_group import uses_grid_group, with_grid_group
from ._streams import native_stream


#: Numba's environment pointer, which every module declares and a CUDA kernel never reads.
_NUMBA_ENV = re.compile(r"^\.(?:common|visible|weak)\s+\.global\s+\.align\s+\d+\s+\.u64\s+(_ZN08NumbaEnv\S+);$", re.M)


def _without_unused_numba_env(ptx: str) -> str:
    """The PTX without Numba's environment pointer where nothing reads it. The emulator keeps a
    module's global variables on device 0 only, and refuses to launch a module that has any on
    another device; this one is never used, so kernels run on every device (a blank line keeps
    the PTX's line numbers)."""

    def drop(match):
        return "" if ptx.count(match.group(1)) == 1 else match.group(0)

    return _NUMBA_ENV.sub(drop, ptx)


class UnsupportedOnTheEmulator(NotImplementedError):
    """A kernel needs something the emulator does not do; the message says what."""


UnsupportedOnTheEmulator.__module__ = "racetrack.cuda"  # as users would import it

#: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, the driver's code for a cooperative grid too large.
_COOPERATIVE_LAUNCH_TOO_LARGE = 720


class Kernel:
    """A ``@cuda.jit`` kernel. Index it with a launch configuration and call it:
    ``kernel[blocks, threads](args)``, ``kernel[blocks, threads, stream, shared_bytes](args)``."""

    def __init__(self, py_func, signatures: Optional[List[Any]] = None, options: Optional[Dict[str, Any]] = None):
        self.py_func = py_func
        self.options = dict(options or {})
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self._params = list(inspect.signature(py_func).parameters)
        self._signatures = [sigutils.normalize_signature(sig)[0] for sig in signatures or []]
        self._compiled: Dict[Tuple[Any, ...], Tuple[_core.PtxModule, str, bool]] = {}
        for signature in self._signatures:
            self._compile(tuple(signature))

    def __repr__(self) -> str:
        return f"<racetrack kernel {self.__name__}>"

    @property
    def py_func_name(self) -> str:
        return self.py_func.__qualname__

    def _compile(self, signature: Tuple[Any, ...]):
        compiled = self._compiled.get(signature)
        if compiled is None:
            numbas = ptx = compile_kernel(self.py_func, signature, self.options)
            # A grid group (cuda.cg.this_grid()) makes it a cooperative kernel, as in Numba.
            cooperative = uses_grid_group(ptx)
            if cooperative:
                ptx = with_grid_group(ptx)
            source = _core.relative_path(inspect.getsourcefile(self.py_func) or "<kernel>")
            # Foreign functions (cuda.declare_device(..., link=...), cuda.jit(link=...)) are
            # linked in, as Numba's linker does.
            linked = linked_units(numbas, as_links(self.options.get("link")))
            module = _core.PtxModule(_without_unused_numba_env(ptx), source, as_compiled=numbas, linked=linked)
            compiled = (module, module.entries[0], cooperative)
            _core.entry_names[module.entries[0]] = self.__name__
            self._compiled[signature] = compiled
        return compiled

    def _resources(self, signature) -> Tuple[Any, int]:
        """(registers a thread or None, static shared bytes) as a GPU's driver allots them
        to this signature's kernel, where a ptxas is found (see `PtxModule.resources`)."""
        module, entry, _cooperative = self._compile(signature)
        counted = module.resources(entry)
        return (None, 0) if counted is None else counted

    def inspect_ptx(self, signature=None) -> str:
        """The PTX Numba made (for the first signature compiled when none is named)."""
        if not self._compiled:
            raise ValueError(f"{self.__name__} has not been compiled yet: launch it first")
        return self._ptx_of(signature)

    def _ptx_of(self, signature) -> str:
        key = tuple(signature) if signature is not None else next(iter(self._compiled))
        return compile_kernel(self.py_func, key, self.options)

    @property
    def signatures(self) -> List[Tuple[Any, ...]]:
        return list(self._compiled)

    @property
    def overloads(self) -> Dict[Tuple[Any, ...], "_Overload"]:
        """The compiled kernel of each signature, as Numba's ``kernel.overloads[sig]``."""
        return {signature: _Overload(self, signature) for signature in self._compiled}

    def __getitem__(self, config) -> "_Launch":
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError(
                "a launch configuration is kernel[blocks, threads] (optionally with a stream and "
                f"the dynamic shared memory in bytes), not kernel[{config!r}]"
            )
        blocks, threads = config[0], config[1]
        stream = config[2] if len(config) > 2 else 0
        shared_bytes = int(config[3]) if len(config) > 3 else 0
        return _Launch(self, _core.dim3(blocks, "blocks"), _core.dim3(threads, "threads"), stream, shared_bytes)

    def forall(self, ntasks: int, tpb: int = 128, stream=0, sharedmem: int = 0) -> "_Launch":
        """A configuration with at least ``ntasks`` threads, as Numba's ``forall``."""
        blocks = max(1, -(-int(ntasks) // tpb))
        return _Launch(self, (blocks, 1, 1), (tpb, 1, 1), stream, sharedmem)

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.__name__} is a kernel: launch it with a configuration, {self.__name__}[blocks, threads](...)"
        )

    def _signature_for(self, args) -> Tuple[Any, ...]:
        if self._signatures:
            for signature in self._signatures:
                if len(signature) == len(args):
                    return tuple(signature)
            raise TypeError(f"{self.__name__} takes {len(self._signatures[0])} arguments, not {len(args)}")
        return tuple(numba_type(arg) for arg in args)

    def _run(self, launch: "_Launch", args, where: str) -> None:
        if len(args) != len(self._params):
            raise TypeError(f"{self.__name__}() takes {len(self._params)} arguments, {len(args)} given")
        signature = self._signature_for(args)
        module, entry, cooperative = self._compile(signature)
        if cooperative:
            _check_cooperative_grid(self.__name__, launch, *self._resources(signature))
        stream = native_stream(launch.stream)
        marshalled = Marshalled()
        for value, ty, name in zip(args, signature, self._params):
            marshalled.add(value, ty, name)
        try:
            _core.launch(
                module,
                entry,
                launch.grid,
                launch.block,
                marshalled.args,
                shared_bytes=launch.shared_bytes,
                kernel_name=self.__name__,
                where=where,
                stream=stream,
                cooperative=cooperative,
            )
        finally:
            # As Numba does, host arrays get the device's contents back, findings or not.
            for copy_back in marshalled.after:
                copy_back()


class _Launch:
    def __init__(self, kernel: Kernel, grid, block, stream, shared_bytes: int):
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.stream = stream
        self.shared_bytes = shared_bytes

    def __call__(self, *args):
        caller = sys._getframe(1)
        where = f"{_core.relative_path(caller.f_code.co_filename)}:{caller.f_lineno}"
        try:
            self.kernel._run(self, args, where)
        except (_core.FindingError, UnsupportedOnTheEmulator, CudaAPIError) as error:
            # The traceback ends here, at the user's launch line, not inside Racetrack.
            raise error.with_traceback(None) from None


class _Overload:
    """One signature's compiled kernel (what Numba's ``kernel.overloads[sig]`` gives)."""

    def __init__(self, kernel: Kernel, signature: Tuple[Any, ...]):
        self.kernel = kernel
        self.signature = signature

    def inspect_ptx(self) -> str:
        return self.kernel.inspect_ptx(self.signature)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize: int = 0) -> int:
        """The most blocks of ``blockdim`` threads a cooperative launch of this kernel may have
        on the emulated device (every one resident at once), as Numba's method of that name:
        by threads, shared memory and, where a ptxas counts them, registers."""
        registers, static_shared = self.kernel._resources(self.signature)
        return _native.cooperative_grid_limit(
            _core.dim3(blockdim, "blockdim"), static_shared + int(dynsmemsize), registers
        )


def _check_cooperative_grid(name: str, launch: "_Launch", registers, static_shared: int) -> None:
    """A grid-syncing kernel's blocks must all be resident at once: a larger grid is refused
    with the error Numba's launch raises (the driver's, from cuLaunchCooperativeKernel)."""
    blocks = launch.grid[0] * launch.grid[1] * launch.grid[2]
    most = _native.cooperative_grid_limit(tuple(launch.block), static_shared + launch.shared_bytes, registers)
    if blocks > most:
        raise CudaAPIError(
            _COOPERATIVE_LAUNCH_TOO_LARGE,
            f"Call to cuLaunchCooperativeKernel results in CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: "
            f"{name} syncs its grid (cuda.cg.this_grid()), so all {blocks} blocks must be resident "
            f"at once, and at most {most} blocks of {launch.block} threads can be "
            f"(kernel.max_cooperative_grid_blocks)",
        )
