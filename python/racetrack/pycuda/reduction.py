"""``racetrack.pycuda.reduction.ReductionKernel``: a map-then-reduce kernel generated as
PyCUDA's, e.g. a dot product::

    dot = ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
                          map_expr="x[i]*y[i]", arguments="float *x, float *y")
    dot(x_gpu, y_gpu).get()

Two passes: each block folds a grid-stride share of ``map_expr`` into one value per thread,
then a shared-memory tree of ``reduce_expr`` (a barrier between levels) leaves one value per
block; a second launch of one block reduces those. ``kernel.source`` shows the CUDA C.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import _cuda_c
from .._device_array import Allocation
from . import _generated
from .driver import compile_error
from .gpuarray import GPUArray
from .tools import dtype_to_ctype, parse_arguments

#: Threads per block (a power of two, for the tree) and the most blocks the first pass uses.
BLOCK = 256
MAX_BLOCKS = 256

_TEMPLATE = """\
@@PREAMBLE@@
typedef {out_type} rt_out_t;

__device__ rt_out_t rt_reduce(rt_out_t a, rt_out_t b)
{{
    return (
@@REDUCE@@
    );
}}

// The block's values, one per thread, folded by a shared-memory tree (a barrier between
// levels); every thread gets the total.
__device__ rt_out_t rt_block_reduce(rt_out_t *rt_cache, unsigned int tid, rt_out_t rt_acc)
{{
    rt_cache[tid] = rt_acc;
    __syncthreads();
    for (unsigned int half = {block} / 2; half > 0; half /= 2) {{
        if (tid < half) {{
            rt_cache[tid] = rt_reduce(rt_cache[tid], rt_cache[tid + half]);
        }}
        __syncthreads();
    }}
    return rt_cache[0];
}}

extern "C" __global__ void {name}_stage1({declarations}rt_out_t *rt_partial, unsigned long long n)
{{
    __shared__ rt_out_t rt_cache[{block}];
    const unsigned int tid = threadIdx.x;
    const unsigned long long rt_stride = (unsigned long long){block} * gridDim.x;
    rt_out_t rt_acc = (
@@NEUTRAL@@
    );
    for (unsigned long long i = (unsigned long long)blockIdx.x * {block} + tid; i < n; i += rt_stride) {{
        rt_acc = rt_reduce(rt_acc, (
@@MAP@@
        ));
    }}
    const rt_out_t rt_total = rt_block_reduce(rt_cache, tid, rt_acc);
    if (tid == 0) {{
        rt_partial[blockIdx.x] = rt_total;
    }}
}}

extern "C" __global__ void {name}_stage2(const rt_out_t *rt_in, rt_out_t *rt_out, unsigned long long n)
{{
    __shared__ rt_out_t rt_cache[{block}];
    const unsigned int tid = threadIdx.x;
    rt_out_t rt_acc = (
@@NEUTRAL@@
    );
    for (unsigned long long i = tid; i < n; i += {block}) {{
        rt_acc = rt_reduce(rt_acc, rt_in[i]);
    }}
    const rt_out_t rt_total = rt_block_reduce(rt_cache, tid, rt_acc);
    if (tid == 0) {{
        rt_out[0] = rt_total;
    }}
}}
"""


class ReductionKernel:
    """``ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, arguments)``: calling it
    with the arguments returns a 0-d ``GPUArray`` (``.get()`` for the value). ``reduce_expr``
    combines ``a`` and ``b``; ``map_expr`` reads element ``i`` of the arguments (``in[i]`` of
    ``const T *in`` when no arguments are given)."""

    def __init__(
        self,
        dtype_out,
        neutral: str,
        reduce_expr: str,
        map_expr: Optional[str] = None,
        arguments=None,
        name: str = "reduce_kernel",
        keep: bool = False,
        options: Optional[Sequence[str]] = None,
        preamble: str = "",
        allocator=None,
    ):
        self.dtype_out = np.dtype(dtype_out)
        out_type = dtype_to_ctype(self.dtype_out)
        if arguments is None:
            arguments = f"const {out_type} *in"
        if map_expr is None:
            map_expr = "in[i]"
        self.arguments = parse_arguments(arguments)
        self.name = name
        declarations = "".join(f"{argument.declarator()}, " for argument in self.arguments)
        template = _TEMPLATE.format(name=name, declarations=declarations, out_type=out_type, block=BLOCK)
        generated = f"{name}.cu"
        self.source = _generated.assemble(
            template,
            {"PREAMBLE": preamble, "REDUCE": reduce_expr, "MAP": map_expr, "NEUTRAL": str(neutral)},
            generated,
            mapped=("PREAMBLE", "MAP"),
        )
        self._program = _cuda_c.Program(
            self.source, generated, _cuda_c.parse_options(options), compile_error
        )
        self._stage1 = self._program.kernel(f"{name}_stage1")
        self._stage2 = self._program.kernel(f"{name}_stage2")

    @_cuda_c.user_facing
    def __call__(
        self, *args, stream=None, out: Optional[GPUArray] = None, allocator=None, range=None, slice=None
    ):  # noqa: A002
        if range is not None or slice is not None:
            raise NotImplementedError(
                "racetrack's ReductionKernel reduces the whole array; range= and slice= are not supported"
            )
        if len(args) != len(self.arguments):
            raise TypeError(f"{self.name} takes {len(self.arguments)} arguments, {len(args)} given")
        _generated.contiguous_arrays(self.arguments, args, "ReductionKernel cannot deal with non-contiguous arrays")
        where = _cuda_c.where()
        n = _generated.first_size(self.arguments, args)
        blocks = max(1, min(MAX_BLOCKS, -(-n // BLOCK)))
        partial = Allocation(blocks * self.dtype_out.itemsize, f"{self.name}_partial")
        if out is None:
            out = GPUArray((), self.dtype_out)
        first = _generated.typed_args(self._stage1, self.arguments, args)
        first += [("ptr", partial.address), ("u64", n)]
        _cuda_c.launch(self._stage1, (blocks, 1, 1), (BLOCK, 1, 1), first, where_text=where)
        second = [("ptr", partial.address), ("ptr", out.ptr), ("u64", blocks)]
        _cuda_c.launch(self._stage2, (1, 1, 1), (BLOCK, 1, 1), second, where_text=where)
        return out


def get_reduction_kernel(*args, **kwargs) -> ReductionKernel:
    return ReductionKernel(*args, **kwargs)
