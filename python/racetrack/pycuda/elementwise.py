"""``racetrack.pycuda.elementwise.ElementwiseKernel``: a kernel generated around one
statement per element, as PyCUDA's.

The generated kernel is a grid-stride loop over ``i`` from 0 to the first array's size, with
the statement as its body; ``kernel.source`` shows it. The statement's lines are named as the
lines of your ``.py`` file it was written on, so an access out of bounds in it is reported there.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import _cuda_c
from . import _generated
from .compiler import SourceModule
from .driver import compile_error
from .tools import ScalarArg, VectorArg, parse_arguments

#: Threads per block, and the most blocks a launch uses (the loop covers the rest).
BLOCK = 256
MAX_BLOCKS = 256

_TEMPLATE = """\
@@PREAMBLE@@
extern "C" __global__ void {name}({declarations}unsigned long long n)
{{
    const unsigned long long rt_stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
@@LOOP_PREP@@
    for (; i < n; i += rt_stride) {{
@@OPERATION@@
    ;
    }}
@@AFTER_LOOP@@
}}
"""


def _loop_source(template: str, generated: str, preamble: str, loop_prep: str, operation: str, after_loop: str) -> str:
    """A generated loop kernel's source, each snippet named as its ``.py`` lines."""
    return _generated.assemble(
        template,
        {"PREAMBLE": preamble, "LOOP_PREP": loop_prep, "OPERATION": operation, "AFTER_LOOP": after_loop},
        generated,
        mapped=("PREAMBLE", "LOOP_PREP", "OPERATION", "AFTER_LOOP"),
    )


class ElementwiseKernel:
    """``ElementwiseKernel("float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]",
    "saxpy")``: call it with the arguments in that order (arrays as ``GPUArray``); it runs the
    operation for every ``i`` below the first array's size."""

    def __init__(
        self,
        arguments,
        operation: str,
        name: str = "kernel",
        keep: bool = False,
        options: Optional[Sequence[str]] = None,
        preamble: str = "",
        loop_prep: str = "",
        after_loop: str = "",
    ):
        self.arguments = parse_arguments(arguments)
        self.name = name
        declarations = "".join(f"{argument.declarator()}, " for argument in self.arguments)
        template = _TEMPLATE.format(name=name, declarations=declarations)
        generated = f"{name}.cu"
        self.source = _loop_source(template, generated, preamble, loop_prep, operation, after_loop)
        self._program = _cuda_c.Program(
            self.source, generated, _cuda_c.parse_options(options), compile_error
        )
        self._kernel = self._program.kernel(name)

    @_cuda_c.user_facing
    def __call__(self, *args, range=None, slice=None, stream=None):  # noqa: A002 (PyCUDA's names)
        if range is not None or slice is not None:
            raise NotImplementedError(
                "racetrack's ElementwiseKernel runs over the whole array; range= and slice= are not supported"
            )
        if len(args) != len(self.arguments):
            raise TypeError(f"{self.name} takes {len(self.arguments)} arguments, {len(args)} given")
        _generated.contiguous_arrays(self.arguments, args, "elementwise kernel cannot deal with non-contiguous arrays")
        n = _generated.first_size(self.arguments, args)
        launch_args = _generated.typed_args(self._kernel, self.arguments, args)
        launch_args.append(("u64", n))
        blocks = max(1, min(MAX_BLOCKS, -(-n // BLOCK)))
        _cuda_c.launch(self._kernel, (blocks, 1, 1), (BLOCK, 1, 1), launch_args, where_text=_cuda_c.where())


def get_elwise_kernel(arguments, operation: str, name: str = "kernel", **kwargs) -> ElementwiseKernel:
    return ElementwiseKernel(arguments, operation, name, **kwargs)


#: PyCUDA's ``get_elwise_module`` kernel: a grid-stride loop up to an argument named ``n``,
#: which the caller declares last (``ScalarArg(numpy.uintp, "n")``).
_MODULE_TEMPLATE = """\
#include <pycuda-complex.hpp>
@@PREAMBLE@@
extern "C" __global__ void {name}({declarations})
{{
    size_t tid = threadIdx.x;
    size_t total_threads = gridDim.x * blockDim.x;
    size_t cta_start = blockDim.x * blockIdx.x;
    size_t i;
@@LOOP_PREP@@
    ;
    for (i = cta_start + tid; i < n; i += total_threads) {{
@@OPERATION@@
    ;
    }}
@@AFTER_LOOP@@
    ;
}}
"""


class _GeneratedModule(SourceModule):
    """A ``SourceModule`` of generated source whose snippets are already named as their ``.py``
    lines."""

    def __init__(self, source: str, name: str, options: Optional[Sequence[str]]):
        self.source = source
        self.no_extern_c = True
        self._program = _cuda_c.Program(source, name, _cuda_c.parse_options(options), compile_error)
        self._program.compile_eagerly()


def get_elwise_module(
    arguments,
    operation: str,
    name: str = "kernel",
    keep: bool = False,
    options: Optional[Sequence[str]] = None,
    preamble: str = "",
    loop_prep: str = "",
    after_loop: str = "",
) -> SourceModule:
    """PyCUDA's ``get_elwise_module``: a ``SourceModule`` holding kernel ``name`` with exactly
    ``arguments`` (the last of them ``n``, the element count), looping ``i`` over ``[0, n)``;
    call it through ``get_function(name)``, usually prepared."""
    declared = parse_arguments(arguments)
    declarations = ", ".join(argument.declarator() for argument in declared)
    generated = f"{name}.cu"
    template = _MODULE_TEMPLATE.format(name=name, declarations=declarations)
    source = _loop_source(template, generated, preamble, loop_prep, operation, after_loop)
    return _GeneratedModule(source, generated, options)


def get_linear_combination_kernel(summand_descriptors, dtype_z):
    """PyCUDA's ``z = a0*x0 + a1*x1 + …`` kernel, prepared, and its texture references:
    ``summand_descriptors`` holds ``(is_gpu_scalar, scalar_dtype, vector_dtype)`` per summand,
    and the kernel takes each summand's ``a`` (when not a GPU scalar) and ``x``, then ``z`` and
    ``n``. A GPU scalar is read through a texture reference, which CUDA 12 removed: PyCUDA's own
    kernel no longer compiles on CUDA 13, and this one raises the same ``CompileError``."""
    from .driver import CompileError

    arguments = []
    summands = []
    for index, (is_gpu_scalar, scalar_dtype, vector_dtype) in enumerate(summand_descriptors):
        if is_gpu_scalar:
            raise CompileError(
                "get_linear_combination_kernel: summand {index} is a GPU scalar, which PyCUDA reads through "
                "a texture reference (texture<…> tex_a{index}); CUDA 12 removed texture references, so "
                "PyCUDA's kernel fails to compile on CUDA 13 too. Pass the scalar as an array argument "
                "(get_elwise_module with a VectorArg for it) or as a host scalar (is_gpu_scalar False)".format(
                    index=index
                ),
                "nvrtc linear_combination.cu",
            )
        arguments.append(ScalarArg(scalar_dtype, f"a{index}"))
        arguments.append(VectorArg(vector_dtype, f"x{index}"))
        summands.append(f"a{index}*x{index}[i]")
    arguments.append(VectorArg(dtype_z, "z"))
    arguments.append(ScalarArg(np.uintp, "n"))
    module = get_elwise_module(arguments, "z[i] = " + " + ".join(summands), "linear_combination")
    function = module.get_function("linear_combination")
    function.prepare("".join(argument.struct_char for argument in arguments))
    return function, []
