"""``racetrack.pycuda.elementwise.ElementwiseKernel``: a kernel generated around one
statement per element, as PyCUDA's.

The generated kernel is a grid-stride loop over ``i`` from 0 to the first array's size, with
the statement as its body; ``kernel.source`` shows it. The statement's lines are named as the
lines of your ``.py`` file it was written on, so an access out of bounds in it is reported there.
"""

from __future__ import annotations

from typing import Optional, Sequence

from .. import _cuda_c
from . import _generated
from .driver import compile_error
from .tools import parse_arguments

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
        self.source = _generated.assemble(
            template,
            {"PREAMBLE": preamble, "LOOP_PREP": loop_prep, "OPERATION": operation, "AFTER_LOOP": after_loop},
            generated,
            mapped=("PREAMBLE", "LOOP_PREP", "OPERATION", "AFTER_LOOP"),
        )
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
