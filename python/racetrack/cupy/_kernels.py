"""CuPy's generated kernels, ``cp.ElementwiseKernel`` and ``cp.ReductionKernel``: CUDA C written
around the user's snippets, compiled by NVRTC and run on the emulator like a ``RawKernel``, so
the checkers see them too (a ``raw`` argument indexed out of bounds, two elements writing one
place). ``kernel.source`` shows the last source generated.

CuPy's rules, as its user guide states them:

- parameters are ``"type name"`` with a NumPy type name (``float32``) or a one-letter type
  placeholder (``T``), ``raw`` in front for an array the operation indexes itself;
- the types of placeholders come from the output arrays given, then the input arrays; an array
  whose dtype is not its parameter's raises ``TypeError`` ("Type is mismatched"); Python and
  NumPy scalars are converted to their parameter's type;
- non-``raw`` arrays broadcast against each other as NumPy's do; outputs not given are made with
  the broadcast shape; ``i`` is the element's index, ``_ind.size()`` the number of elements;
- a reduction maps each element (``map_expr``), folds the mapped values with ``reduce_expr``
  over ``a`` and ``b`` from ``identity``, then ``post_map_expr`` writes the outputs from ``a``,
  over ``axis`` (all axes when ``None``), with ``keepdims``.

Each generated kernel is compiled once per argument types and number of dimensions; shapes and
strides are launch arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _cuda_c
from .._device_array import DeviceArray
from ..pycuda.tools import dtype_to_ctype
from . import cuda


def _stream_id(stream) -> Optional[int]:
    """The emulator's stream a generated kernel launches on: its ``stream=``, else the current
    stream, as CuPy's kernels launch."""
    return (stream or cuda.get_current_stream())._racetrack_stream


#: Threads per block of an elementwise kernel, and the most blocks a launch uses (a grid-stride
#: loop covers the rest).
BLOCK = 256
MAX_BLOCKS = 256
#: A reduction's block: one block folds each output element, with a shared-memory tree of this
#: many values (a power of two); smaller reductions launch fewer threads.
REDUCTION_BLOCK = 256

_PARAM = re.compile(r"^(raw\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)$")
# Names the generated code itself uses; CuPy reserves them too.
_RESERVED = {"i", "n", "a", "b"}


@dataclass(frozen=True)
class _Param:
    """One parameter of a generated kernel: ``float32 x``, ``T y``, ``raw T z``."""

    name: str
    raw: bool
    #: The NumPy type written, or ``None`` for a type placeholder.
    dtype: Optional[np.dtype]
    #: The placeholder's letter, or the C type of ``dtype``.
    ctype: str


def _parse_params(text: str, what: str) -> List[_Param]:
    params = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        match = _PARAM.match(" ".join(part.split()))
        if match is None:
            raise ValueError(f"Syntax error in {what}: {part!r} (write \"type name\", e.g. \"float32 x\")")
        raw, type_name, name = bool(match.group(1)), match.group(2), match.group(3)
        if name.startswith("_") or name in ("i", "n"):
            raise ValueError(f"{name!r} is a reserved name in CuPy's kernels ({what})")
        if len(type_name) == 1:
            params.append(_Param(name, raw, None, type_name))
            continue
        try:
            dtype = np.dtype(type_name)
        except TypeError:
            raise ValueError(f"{what}: {type_name!r} is not a NumPy type name nor a one-letter placeholder") from None
        params.append(_Param(name, raw, dtype, _ctype(dtype)))
    return params


def _ctype(dtype: np.dtype) -> str:
    if dtype.kind == "c":
        # CuPy's complex<T>, from <cupy/complex.cuh> (see _complex_header).
        return f"complex<{dtype_to_ctype(np.dtype(f'f{dtype.itemsize // 2}'))}>"
    return dtype_to_ctype(dtype)


def _argument(value, param: _Param, kernel: str):
    """An argument as the kernel takes it: a device array, or a NumPy 0-d array for a scalar."""
    if isinstance(value, DeviceArray):
        return value
    if hasattr(value, "__cuda_array_interface__"):
        from . import ndarray

        return ndarray.over_interface(value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"Unsupported type {type(value)} for {kernel}'s {param.name} (pass cupy.asarray(a))")
    if isinstance(value, (bool, int, float, np.generic, np.ndarray)):
        if param.raw:
            raise TypeError(f"{kernel}'s {param.name} is raw: it takes an array, not {value!r}")
        return np.asarray(value)
    raise TypeError(f"Unsupported type {type(value)} for {kernel}'s {param.name}")


def _decide_types(
    in_params: Sequence[_Param], inputs: Sequence, out_params: Sequence[_Param], outputs: Sequence, kernel: str
) -> Tuple[List[np.dtype], List[np.dtype], Dict[str, np.dtype]]:
    """The dtype of every parameter: written, or the placeholder's, taken from the output
    arrays given and then the input arrays (scalars do not decide a placeholder unless nothing
    else does); an array of another dtype than its parameter's is CuPy's ``TypeError``."""
    placeholders: Dict[str, np.dtype] = {}

    def settle(param: _Param, value) -> None:
        if not isinstance(value, DeviceArray):
            return
        if param.dtype is not None:
            if value.dtype != param.dtype:
                raise TypeError(f"Type is mismatched. {param.name} {value.dtype} {param.dtype}")
        elif param.ctype in placeholders:
            if placeholders[param.ctype] != value.dtype:
                raise TypeError(
                    f"Type is mismatched. {param.name} {value.dtype} {placeholders[param.ctype]} {param.ctype}"
                )
        else:
            placeholders[param.ctype] = value.dtype

    for param, value in zip(out_params, outputs):
        if not isinstance(value, DeviceArray):
            raise TypeError("Output arguments must be cupy.ndarray")
        settle(param, value)
    for param, value in zip(in_params, inputs):
        settle(param, value)
    for param, value in zip(in_params, inputs):
        if param.dtype is None and param.ctype not in placeholders:
            placeholders[param.ctype] = np.asarray(value).dtype
    for param in out_params:
        if param.dtype is None and param.ctype not in placeholders:
            raise TypeError(f"Cannot determine the type of {kernel}'s output {param.name} ({param.ctype}): pass it")
    in_types = [p.dtype if p.dtype is not None else placeholders[p.ctype] for p in in_params]
    out_types = [p.dtype if p.dtype is not None else placeholders[p.ctype] for p in out_params]
    return in_types, out_types, placeholders


def _element_strides(array: DeviceArray, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """``array``'s strides in elements once broadcast to ``shape`` (0 along broadcast axes)."""
    layout = np.broadcast_to(array._layout(), shape)
    for stride in layout.strides:
        if stride % array.itemsize:
            raise NotImplementedError("an array whose strides are not whole elements is not supported here")
    return tuple(stride // array.itemsize for stride in layout.strides)


def _raw_struct() -> str:
    """The type of a ``raw`` argument: CuPy's ``CArray`` as far as kernels use it, ``y[i]`` (the
    i-th element in C order, whatever the strides), ``y[index]`` (an index per axis), ``size()``,
    ``shape()`` and ``strides()`` (in bytes)."""
    return """\
struct rt_index_t {
    long long n;
    __device__ long long size() const { return n; }
};

template <typename V, int ND>
struct rt_raw_t {
    V *data_;
    long long shape_[ND > 0 ? ND : 1];
    long long strides_[ND > 0 ? ND : 1];
    __device__ V &operator[](ptrdiff_t flat) const {
        // As CuPy's CArray: the inner axes take their share of the index, the outermost the
        // rest, unwrapped, so an index past the end stays past it (and memcheck sees it).
        long long offset = 0;
        for (int d = ND - 1; d > 0; --d) {
            offset += (flat % shape_[d]) * strides_[d];
            flat /= shape_[d];
        }
        offset += ND > 0 ? flat * strides_[0] : 0;
        return *(V *)((char *)data_ + offset);
    }
    __device__ V &operator[](const ptrdiff_t (&index)[ND > 0 ? ND : 1]) const {
        long long offset = 0;
        for (int d = 0; d < ND; ++d) {
            offset += index[d] * strides_[d];
        }
        return *(V *)((char *)data_ + offset);
    }
    __device__ long long size() const {
        long long total = 1;
        for (int d = 0; d < ND; ++d) {
            total *= shape_[d];
        }
        return total;
    }
    __device__ const long long *shape() const { return shape_; }
    __device__ const long long *strides() const { return strides_; }
};
"""


def _complex_header(types: Sequence[np.dtype]) -> str:
    """CuPy's complex type for a kernel that has complex arguments; left out otherwise, as its
    header (libcu++'s) takes NVRTC a while."""
    return "#include <cupy/complex.cuh>" if any(np.dtype(t).kind == "c" for t in types) else ""


def _typedefs(placeholders: Dict[str, np.dtype]) -> str:
    return "".join(f"typedef {_ctype(dtype)} {letter};\n" for letter, dtype in sorted(placeholders.items()))


def _unravel(prefix: str, extents: Sequence[str], index: str) -> List[str]:
    """C lines splitting the flat ``index`` into one index per axis (``{prefix}0`` …), C order."""
    lines = [f"long long {prefix}rest = {index};"]
    for d in range(len(extents) - 1, -1, -1):
        lines.append(f"const long long {prefix}{d} = {prefix}rest % {extents[d]}; {prefix}rest /= {extents[d]};")
    return lines


def _offset(array: str, prefix: str, ndim: int, axis_prefix: str) -> str:
    terms = [f"{axis_prefix}{d} * _rt_{array}_{prefix}{d}" for d in range(ndim)]
    return " + ".join(terms) if terms else "0"


def _label(array: DeviceArray, name: str) -> None:
    # Reports name the array after its parameter (`y[12]`), as a raw kernel's do.
    if array.starts_allocation:
        array.relabel(name)


def _launch_value(value: np.ndarray, dtype: np.dtype) -> Tuple[str, object]:
    converted = np.asarray(value).astype(dtype)
    if dtype.kind == "c":
        return ("bytes", converted.tobytes())
    if dtype == np.bool_:
        return ("bool", bool(converted))
    if dtype.kind == "f":
        return (f"f{dtype.itemsize * 8}", float(converted))
    return (f"{'i' if dtype.kind == 'i' else 'u'}{dtype.itemsize * 8}", int(converted))


class _Generated:
    """What both generated kernels share: the user's snippets, the constructor's location (for
    the ``.py`` lines of findings) and one compiled program per argument types."""

    def __init__(self, name: str, options: Sequence[str], preamble: str):
        self.name = name
        self.options = tuple(options)
        self.preamble = preamble
        self.source = ""
        self._location = _cuda_c.user_location()
        self._compiled: Dict[tuple, _cuda_c.Kernel] = {}

    def _kernel(self, key: tuple, template: str, snippets: Dict[str, str], mapped: Sequence[str]) -> _cuda_c.Kernel:
        found = self._compiled.get(key)
        if found is not None:
            return found
        generated = f"{self.name}.cu"
        source = _cuda_c.assemble_generated(template, snippets, generated, mapped, location=self._location)
        from ._compiler import compile_error

        program = _cuda_c.Program(source, generated, _cuda_c.parse_options(self.options), compile_error)
        found = program.kernel(self.name)
        self.source = source
        self._compiled[key] = found
        return found


class ElementwiseKernel(_Generated):
    """``cp.ElementwiseKernel(in_params, out_params, operation, name)``: called with the inputs
    (and optionally the outputs), runs ``operation`` once per element of the broadcast shape
    and returns the output (a tuple when there are several)."""

    def __init__(
        self,
        in_params: str,
        out_params: str,
        operation: str,
        name: str = "kernel",
        reduce_dims: bool = True,
        preamble: str = "",
        no_return: bool = False,
        return_tuple: bool = False,
        loop_prep: str = "",
        after_loop: str = "",
        options: Sequence[str] = (),
        **kwargs,
    ):
        super().__init__(name, options, preamble)
        self.in_params = _parse_params(in_params, "in_params")
        self.out_params = _parse_params(out_params, "out_params")
        names = [p.name for p in self.in_params + self.out_params]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: a parameter name is used twice in {names}")
        self.nin, self.nout, self.nargs = len(self.in_params), len(self.out_params), len(names)
        self.operation = operation
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self.no_return = no_return
        self.return_tuple = return_tuple

    @_cuda_c.user_facing
    def __call__(self, *args, size: Optional[int] = None, block_size: Optional[int] = None, stream=None, **kwargs):
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(_arity_message(self.name, self.nin, self.nargs, len(args)))
        params = self.in_params + self.out_params
        values = [_argument(value, param, self.name) for value, param in zip(args, params)]
        inputs, outputs = values[: self.nin], values[self.nin :]
        in_types, out_types, placeholders = _decide_types(self.in_params, inputs, self.out_params, outputs, self.name)

        broadcast = [v for v, p in zip(values, params) if isinstance(v, DeviceArray) and not p.raw]
        if size is not None:
            if broadcast:
                raise ValueError("Specified 'size' can be used only if all of the ndarray are 'raw'.")
            shape: Tuple[int, ...] = (int(size),)
        elif broadcast:
            try:
                shape = tuple(np.broadcast_shapes(*(v.shape for v in broadcast)))
            except ValueError:
                raise ValueError(
                    f"operands could not be broadcast together with shapes {', '.join(str(v.shape) for v in broadcast)}"
                ) from None
        else:
            raise ValueError("Loop size is undecided.")
        for param, value in zip(self.out_params, outputs):
            if not param.raw and value.shape != shape:
                raise ValueError(f"Out shape is mismatched: {param.name} is {value.shape}, the loop is {shape}")
        from . import ndarray

        if not outputs:
            outputs = [ndarray(shape, dtype) for dtype in out_types]
            values = inputs + outputs
        n = int(np.prod(shape, dtype=np.int64))
        if n:
            self._run(params, values, in_types + out_types, placeholders, shape, n, stream)
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return outputs[0]
        return tuple(outputs)

    def _run(self, params, values, types, placeholders, shape, n, stream=None) -> None:
        ndim = len(shape)
        raw_ndims = tuple(v.ndim if p.raw else -1 for p, v in zip(params, values))
        key = (tuple(str(t) for t in types), tuple(isinstance(v, DeviceArray) for v in values), ndim, raw_ndims)
        declarations, body_setup, loop_setup, launch = [], [], [], []
        extents = [f"_rt_shape{d}" for d in range(ndim)]
        for param, value, dtype in zip(params, values, types):
            ctype = param.ctype
            is_output = param in self.out_params
            if isinstance(value, DeviceArray):
                _label(value, param.name)
                declarations.append(f"{ctype} *_rt_{param.name}_data")
                launch.append(("ptr", value.ptr))
                if param.raw:
                    declarations += [f"long long _rt_{param.name}_e{d}" for d in range(value.ndim)]
                    declarations += [f"long long _rt_{param.name}_s{d}" for d in range(value.ndim)]
                    launch += [("i64", e) for e in value.shape] + [("i64", s) for s in value.strides]
                    shape_init = ", ".join(f"_rt_{param.name}_e{d}" for d in range(value.ndim)) or "1"
                    strides_init = ", ".join(f"_rt_{param.name}_s{d}" for d in range(value.ndim)) or "0"
                    body_setup.append(
                        f"const rt_raw_t<{ctype}, {value.ndim}> {param.name} = "
                        f"{{_rt_{param.name}_data, {{{shape_init}}}, {{{strides_init}}}}};"
                    )
                else:
                    declarations += [f"long long _rt_{param.name}_s{d}" for d in range(ndim)]
                    launch += [("i64", s) for s in _element_strides(value, shape)]
                    where = f"_rt_{param.name}_data[{_offset(param.name, 's', ndim, '_rt_i')}]"
                    # An output is a reference to its element; an input, its value.
                    declared = f"{ctype} &{param.name}" if is_output else f"const {ctype} {param.name}"
                    loop_setup.append(f"{declared} = {where};")
            else:
                declarations.append(f"{ctype} {param.name}")
                launch.append(_launch_value(value, dtype))
        declarations += [f"long long {extent}" for extent in extents] + ["long long _rt_n"]
        launch += [("i64", extent) for extent in shape] + [("i64", n)]
        template = "\n".join(
            [
                _complex_header(types),
                _typedefs(placeholders),
                "@@PREAMBLE@@",
                _raw_struct(),
                f'extern "C" __global__ void {self.name}({", ".join(declarations)})',
                "{",
                "    const rt_index_t _ind = {_rt_n};",
                "    (void)_ind;",
                *(f"    {line}" for line in body_setup),
                "@@LOOP_PREP@@",
                "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _rt_n;",
                "         i += (long long)blockDim.x * gridDim.x) {",
                *(f"        {line}" for line in _unravel("_rt_i", extents, "i")),
                *(f"        {line}" for line in loop_setup),
                "@@OPERATION@@",
                "        ;",
                "    }",
                "@@AFTER_LOOP@@",
                "}",
            ]
        )
        kernel = self._kernel(
            key,
            template,
            {
                "PREAMBLE": self.preamble,
                "LOOP_PREP": self.loop_prep,
                "OPERATION": self.operation,
                "AFTER_LOOP": self.after_loop,
            },
            ("PREAMBLE", "LOOP_PREP", "OPERATION", "AFTER_LOOP"),
        )
        blocks = max(1, min(MAX_BLOCKS, -(-n // BLOCK)))
        _cuda_c.launch(
            kernel, (blocks, 1, 1), (BLOCK, 1, 1), launch, where_text=_cuda_c.where(), stream=_stream_id(stream)
        )


class ReductionKernel(_Generated):
    """``cp.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name)``: called with the inputs (``axis=``, ``keepdims=``, ``out=``), folds the
    mapped elements along ``axis`` and returns the output array (0-d for a full reduction)."""

    def __init__(
        self,
        in_params: str,
        out_params: str,
        map_expr: str,
        reduce_expr: str,
        post_map_expr: str,
        identity: Optional[str],
        name: str = "reduce_kernel",
        reduce_type: Optional[str] = None,
        reduce_dims: bool = True,
        preamble: str = "",
        options: Sequence[str] = (),
    ):
        super().__init__(name, options, preamble)
        self.in_params = _parse_params(in_params, "in_params")
        self.out_params = _parse_params(out_params, "out_params")
        for param in self.in_params + self.out_params:
            if param.raw:
                raise NotImplementedError(
                    "raw parameters of a ReductionKernel are not implemented in racetrack's CuPy face"
                )
        if identity is None:
            raise NotImplementedError(
                "a ReductionKernel without an identity is not implemented in racetrack's CuPy face"
            )
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = str(identity)
        self.reduce_type = reduce_type

    @_cuda_c.user_facing
    def __call__(self, *args, out=None, axis=None, keepdims: bool = False, stream=None, **kwargs):
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(_arity_message(self.name, self.nin, self.nin + self.nout, len(args)))
        if out is not None:
            if len(args) != self.nin:
                raise ValueError("cannot specify 'out' as both a positional and keyword argument")
            args = args + (out,)
        params = self.in_params + self.out_params
        values = [_argument(value, param, self.name) for value, param in zip(args, params)]
        inputs, outputs = values[: self.nin], values[self.nin :]
        in_types, out_types, placeholders = _decide_types(self.in_params, inputs, self.out_params, outputs, self.name)
        arrays = [v for v in inputs if isinstance(v, DeviceArray)]
        shape = tuple(np.broadcast_shapes(*(v.shape for v in arrays))) if arrays else ()
        ndim = len(shape)
        if axis is None:
            reduced = tuple(range(ndim))
        else:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            reduced = tuple(sorted(_normalize_axis(int(a), ndim) for a in axes))
            if len(set(reduced)) != len(reduced):
                raise ValueError("duplicate value in 'axis'")
        kept = tuple(d for d in range(ndim) if d not in reduced)
        if keepdims:
            out_shape = tuple(1 if d in reduced else shape[d] for d in range(ndim))
        else:
            out_shape = tuple(shape[d] for d in kept)
        from . import ndarray

        if outputs:
            for param, value in zip(self.out_params, outputs):
                if value.shape != out_shape:
                    raise ValueError(
                        f"Out shape is mismatched: {param.name} is {value.shape}, the result is {out_shape}"
                    )
        else:
            outputs = [ndarray(out_shape, dtype) for dtype in out_types]
        self._run(inputs, outputs, in_types, out_types, placeholders, shape, kept, reduced, stream)
        return outputs[0] if self.nout == 1 else tuple(outputs)

    def _run(self, inputs, outputs, in_types, out_types, placeholders, shape, kept, reduced, stream=None) -> None:
        reduce_type = self.reduce_type if self.reduce_type is not None else _ctype(out_types[0])
        key = (
            tuple(str(t) for t in in_types + out_types),
            tuple(isinstance(v, DeviceArray) for v in inputs),
            kept,
            reduced,
        )
        kept_extents = [f"_rt_kept{k}" for k in range(len(kept))]
        reduced_extents = [f"_rt_red{r}" for r in range(len(reduced))]
        declarations, launch, in_setup, out_setup = [], [], [], []
        for param, value, dtype in zip(self.in_params, inputs, in_types):
            if isinstance(value, DeviceArray):
                _label(value, param.name)
                strides = _element_strides(value, shape)
                declarations.append(f"const {param.ctype} *_rt_{param.name}_data")
                declarations += [f"long long _rt_{param.name}_k{k}" for k in range(len(kept))]
                declarations += [f"long long _rt_{param.name}_r{r}" for r in range(len(reduced))]
                launch.append(("ptr", value.ptr))
                launch += [("i64", strides[d]) for d in kept] + [("i64", strides[d]) for d in reduced]
                offset = " + ".join(
                    [_offset(param.name, "k", len(kept), "_rt_k"), _offset(param.name, "r", len(reduced), "_rt_r")]
                )
                in_setup.append(f"const {param.ctype} {param.name} = _rt_{param.name}_data[{offset}];")
            else:
                declarations.append(f"{param.ctype} {param.name}")
                launch.append(_launch_value(value, dtype))
        for param, value in zip(self.out_params, outputs):
            _label(value, param.name)
            out_strides = _element_strides(value, value.shape)
            if len(out_strides) != len(kept):  # keepdims: the reduced axes are 1 long
                out_strides = tuple(out_strides[d] for d in kept)
            declarations.append(f"{param.ctype} *_rt_{param.name}_data")
            declarations += [f"long long _rt_{param.name}_k{k}" for k in range(len(kept))]
            launch.append(("ptr", value.ptr))
            launch += [("i64", s) for s in out_strides]
            where = f"_rt_{param.name}_data[{_offset(param.name, 'k', len(kept), '_rt_k')}]"
            out_setup.append(f"{param.ctype} &{param.name} = {where};")
        declarations += [f"long long {e}" for e in kept_extents + reduced_extents]
        declarations += ["long long _rt_out_n", "long long _rt_red_n"]
        out_n = int(np.prod([shape[d] for d in kept], dtype=np.int64))
        red_n = int(np.prod([shape[d] for d in reduced], dtype=np.int64))
        launch += [("i64", shape[d]) for d in kept] + [("i64", shape[d]) for d in reduced]
        launch += [("i64", out_n), ("i64", red_n)]
        template = "\n".join(
            [
                _complex_header(in_types + out_types),
                _typedefs(placeholders),
                f"typedef {reduce_type} _type_reduce;",
                "@@PREAMBLE@@",
                f'extern "C" __global__ void {self.name}({", ".join(declarations)})',
                "{",
                f"    __shared__ _type_reduce _rt_cache[{REDUCTION_BLOCK}];",
                "    const unsigned int _rt_tid = threadIdx.x;",
                "    for (long long _rt_j = blockIdx.x; _rt_j < _rt_out_n; _rt_j += gridDim.x) {",
                *(f"        {line}" for line in _unravel("_rt_k", kept_extents, "_rt_j")),
                "        _type_reduce _rt_acc = (_type_reduce)(",
                "@@IDENTITY@@",
                "        );",
                "        for (long long _rt_e = _rt_tid; _rt_e < _rt_red_n; _rt_e += blockDim.x) {",
                *(f"            {line}" for line in _unravel("_rt_r", reduced_extents, "_rt_e")),
                *(f"            {line}" for line in in_setup),
                "            const _type_reduce _rt_mapped = (_type_reduce)(",
                "@@MAP@@",
                "            );",
                "            const _type_reduce a = _rt_acc, b = _rt_mapped;",
                "            _rt_acc = (",
                "@@REDUCE@@",
                "            );",
                "        }",
                # The block's values folded by a shared-memory tree, a barrier between levels.
                "        _rt_cache[_rt_tid] = _rt_acc;",
                "        __syncthreads();",
                "        for (unsigned int _rt_half = blockDim.x / 2; _rt_half > 0; _rt_half /= 2) {",
                "            if (_rt_tid < _rt_half) {",
                "                const _type_reduce a = _rt_cache[_rt_tid], b = _rt_cache[_rt_tid + _rt_half];",
                "                _rt_cache[_rt_tid] = (",
                "@@REDUCE@@",
                "                );",
                "            }",
                "            __syncthreads();",
                "        }",
                "        if (_rt_tid == 0) {",
                "            const _type_reduce a = _rt_cache[0];",
                *(f"            {line}" for line in out_setup),
                "@@POST_MAP@@",
                "            ;",
                "        }",
                # The next output element's values go into the same cache.
                "        __syncthreads();",
                "    }",
                "}",
            ]
        )
        snippets = {
            "PREAMBLE": self.preamble,
            "IDENTITY": self.identity,
            "MAP": self.map_expr,
            "REDUCE": self.reduce_expr,
            "POST_MAP": self.post_map_expr,
        }
        kernel = self._kernel(key, template, snippets, ("PREAMBLE", "MAP", "POST_MAP"))
        block = REDUCTION_BLOCK
        while block > 32 and block // 2 >= red_n:
            block //= 2
        blocks = max(1, min(MAX_BLOCKS, out_n))
        if out_n:
            _cuda_c.launch(
                kernel, (blocks, 1, 1), (block, 1, 1), launch, where_text=_cuda_c.where(), stream=_stream_id(stream)
            )


def _arity_message(name: str, inputs: int, everything: int, given: int) -> str:
    return (
        f"Wrong number of arguments for {name!r}. It must be either {inputs} or {everything} "
        f"(with outputs), but given {given}."
    )


# NumPy's AxisError (a ValueError and an IndexError), where NumPy 1.x and 2.x keep it.
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise _AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim
