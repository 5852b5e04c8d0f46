//! Where NVRTC finds headers: the file's own folder, `-I` folders, the CUDA headers (as nvcc
//! would find them), and small stand-ins for the C and C++ standard headers kernels include.
//!
//! NVRTC ships no standard library: `#include <cassert>` fails with "cannot open source file".
//! Device code needs little of it, and NVRTC already knows `printf`, `malloc`, `memcpy` and
//! `__assertfail`; the stand-ins below give the rest from libcu++ (`cuda/std/…`, in the CUDA
//! headers) under the names people include.

use std::path::{Path, PathBuf};

use super::source::Include;
use crate::nvrtc;

/// Standard headers NVRTC lacks, as NVRTC takes them from memory: (name, contents).
pub const STANDARD_HEADERS: &[(&str, &str)] = &[
    ("cassert", ASSERT),
    ("assert.h", ASSERT),
    ("cstdio", STDIO),
    ("stdio.h", STDIO),
    ("cstdint", CSTDINT),
    ("stdint.h", CSTDINT),
    ("climits", CLIMITS),
    ("limits.h", CLIMITS),
    ("cfloat", CFLOAT),
    ("float.h", CFLOAT),
    ("cmath", CMATH),
    ("math.h", CMATH),
    ("cstddef", CSTDDEF),
    ("stddef.h", CSTDDEF),
    ("cstdlib", CSTDLIB),
    ("stdlib.h", CSTDLIB),
    ("cstring", CSTRING),
    ("string.h", CSTRING),
    ("type_traits", TYPE_TRAITS),
    ("utility", UTILITY),
    ("limits", LIMITS),
    ("tuple", TUPLE),
    ("array", ARRAY),
    ("functional", FUNCTIONAL),
    ("cub/cub.cuh", CUB),
    ("thrust/complex.h", THRUST_COMPLEX),
    ("device_functions.h", BUILT_IN),
    (PRELUDE, PRELUDE_TEXT),
    (LIBRARY_TYPES, LIBRARY_TYPES_TEXT),
    (STD_CORE, ""),
];

/// What nvcc's `cuda_runtime.h` brings from the host's C library into every `.cu` file and
/// NVRTC does not: `math.h`'s constants and the `uint` family of `<sys/types.h>`. NVRTC reads it
/// before the file (`-include`); each name is defined only where the file has not.
pub const PRELUDE: &str = "__racetrack_prelude.h";

/// What a failed `assert(e)` does on the device, as CUDA's own `assert` does: `__assertfail`
/// with the function's full signature. GPUVerify's `__assert` in the prelude does the same.
macro_rules! assert_expansion {
    () => {
        "(static_cast<bool>(e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))"
    };
}

const PRELUDE_TEXT: &str = concat!(
    "\
#pragma once
#if __has_include(<cuda/std/cstdint>)
#include <cuda/std/cstdint>
typedef cuda::std::int8_t int8_t;
typedef cuda::std::int16_t int16_t;
typedef cuda::std::int32_t int32_t;
typedef cuda::std::int64_t int64_t;
typedef cuda::std::uint8_t uint8_t;
typedef cuda::std::uint16_t uint16_t;
typedef cuda::std::uint32_t uint32_t;
typedef cuda::std::uint64_t uint64_t;
typedef cuda::std::intptr_t intptr_t;
typedef cuda::std::uintptr_t uintptr_t;
#endif
// libcu++'s <cmath> defines INFINITY and NAN again, its own way, when a file or a CUDA header
// includes it: the same values, so the redefinition is not worth a warning in a failing log.
#pragma nv_diag_suppress 47
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef uint
typedef unsigned int uint;
#endif
#ifndef ushort
typedef unsigned short ushort;
#endif
#ifndef ulong
typedef unsigned long ulong;
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
// GPUVerify's annotations, so that kernels of its test suite compile: contracts and invariants
// (statements, or in a loop's condition before a comma) are proof obligations a run cannot
// check and compile to nothing; __assert is checked as assert is.
#ifndef __requires
#define __requires(...) ((void)0)
#define __ensures(...) ((void)0)
#define __global_requires(...) ((void)0)
#define __global_ensures(...) ((void)0)
#define __invariant(...) ((void)0)
#define __global_invariant(...) ((void)0)
#define __candidate_invariant(...) ((void)0)
#define __candidate_global_invariant(...) ((void)0)
#define __function_wide_invariant(...) ((void)0)
#define __function_wide_candidate_invariant(...) ((void)0)
#define __barrier_invariant(...) ((void)0)
#define __barrier_invariant_binary(...) ((void)0)
#define __implies(a, b) (!(a) || (b))
#define __assert(e) ",
    assert_expansion!(),
    "
#endif
"
);

/// What the C++ standard headers nvcc reads from the host compiler bring to device code even
/// when the file includes them for host code (`<iostream>`, `<algorithm>`, `<vector>` pull in
/// `<type_traits>`, `<utility>`, `<limits>`, `<cstdint>`): the same names from libcu++, under
/// `std::`. A left-out host header gives way to this one, on the same line.
pub const STD_CORE: &str = "__racetrack_std.h";

const STD_CORE_INCLUDES: &str = "\
#pragma once
#include <cstdint>
#include <cuda/std/type_traits>
#include <cuda/std/utility>
#include <cuda/std/limits>
#if __has_include(<cuda/std/__algorithm/max.h>)
#include <cuda/std/__algorithm/max.h>
#include <cuda/std/__algorithm/min.h>
#endif
";

/// The names [`STD_CORE`] gives `std::`, each a using-declaration of libcu++'s (not a
/// using-directive, which would also bring libcu++'s `exp` and `log` next to CUDA's own for a
/// file that says `using namespace std;`).
const STD_CORE_NAMES: &[&str] = &[
    "add_const",
    "add_const_t",
    "add_cv",
    "add_cv_t",
    "add_lvalue_reference",
    "add_lvalue_reference_t",
    "add_pointer",
    "add_pointer_t",
    "add_rvalue_reference",
    "add_rvalue_reference_t",
    "add_volatile",
    "add_volatile_t",
    "aligned_storage",
    "aligned_storage_t",
    "aligned_union",
    "aligned_union_t",
    "alignment_of",
    "alignment_of_v",
    "common_reference",
    "common_reference_t",
    "common_type",
    "common_type_t",
    "conditional",
    "conditional_t",
    "conjunction",
    "conjunction_v",
    "decay",
    "decay_t",
    "disjunction",
    "disjunction_v",
    "enable_if",
    "enable_if_t",
    "extent",
    "extent_v",
    "has_virtual_destructor",
    "has_virtual_destructor_v",
    "integral_constant",
    "is_abstract",
    "is_abstract_v",
    "is_aggregate",
    "is_aggregate_v",
    "is_arithmetic",
    "is_arithmetic_v",
    "is_array",
    "is_array_v",
    "is_assignable",
    "is_assignable_v",
    "is_base_of",
    "is_base_of_v",
    "is_bounded_array",
    "is_bounded_array_v",
    "is_class",
    "is_class_v",
    "is_compound",
    "is_compound_v",
    "is_const",
    "is_const_v",
    "is_constructible",
    "is_constructible_v",
    "is_convertible",
    "is_convertible_v",
    "is_copy_assignable",
    "is_copy_assignable_v",
    "is_copy_constructible",
    "is_copy_constructible_v",
    "is_default_constructible",
    "is_default_constructible_v",
    "is_destructible",
    "is_destructible_v",
    "is_empty",
    "is_empty_v",
    "is_enum",
    "is_enum_v",
    "is_final",
    "is_final_v",
    "is_floating_point",
    "is_floating_point_v",
    "is_function",
    "is_function_v",
    "is_fundamental",
    "is_fundamental_v",
    "is_integral",
    "is_integral_v",
    "is_member_function_pointer",
    "is_member_function_pointer_v",
    "is_member_object_pointer",
    "is_member_object_pointer_v",
    "is_member_pointer",
    "is_member_pointer_v",
    "is_move_assignable",
    "is_move_assignable_v",
    "is_move_constructible",
    "is_move_constructible_v",
    "is_nothrow_assignable",
    "is_nothrow_assignable_v",
    "is_nothrow_constructible",
    "is_nothrow_constructible_v",
    "is_nothrow_convertible",
    "is_nothrow_convertible_v",
    "is_nothrow_copy_assignable",
    "is_nothrow_copy_assignable_v",
    "is_nothrow_copy_constructible",
    "is_nothrow_copy_constructible_v",
    "is_nothrow_default_constructible",
    "is_nothrow_default_constructible_v",
    "is_nothrow_destructible",
    "is_nothrow_destructible_v",
    "is_nothrow_move_assignable",
    "is_nothrow_move_assignable_v",
    "is_nothrow_move_constructible",
    "is_nothrow_move_constructible_v",
    "is_null_pointer",
    "is_null_pointer_v",
    "is_object",
    "is_object_v",
    "is_pointer",
    "is_pointer_v",
    "is_polymorphic",
    "is_polymorphic_v",
    "is_reference",
    "is_reference_v",
    "is_same",
    "is_same_v",
    "is_scalar",
    "is_scalar_v",
    "is_scoped_enum",
    "is_scoped_enum_v",
    "is_signed",
    "is_signed_v",
    "is_standard_layout",
    "is_standard_layout_v",
    "is_swappable",
    "is_swappable_v",
    "is_trivial",
    "is_trivial_v",
    "is_trivially_assignable",
    "is_trivially_assignable_v",
    "is_trivially_constructible",
    "is_trivially_constructible_v",
    "is_trivially_copy_assignable",
    "is_trivially_copy_assignable_v",
    "is_trivially_copy_constructible",
    "is_trivially_copy_constructible_v",
    "is_trivially_copyable",
    "is_trivially_copyable_v",
    "is_trivially_default_constructible",
    "is_trivially_default_constructible_v",
    "is_trivially_destructible",
    "is_trivially_destructible_v",
    "is_trivially_move_assignable",
    "is_trivially_move_assignable_v",
    "is_trivially_move_constructible",
    "is_trivially_move_constructible_v",
    "is_unbounded_array",
    "is_unbounded_array_v",
    "is_union",
    "is_union_v",
    "is_unsigned",
    "is_unsigned_v",
    "is_void",
    "is_void_v",
    "is_volatile",
    "is_volatile_v",
    "make_signed",
    "make_signed_t",
    "make_unsigned",
    "make_unsigned_t",
    "negation",
    "negation_v",
    "rank",
    "rank_v",
    "reference_constructs_from_temporary",
    "reference_constructs_from_temporary_v",
    "reference_converts_from_temporary",
    "reference_converts_from_temporary_v",
    "remove_all_extents",
    "remove_all_extents_t",
    "remove_const",
    "remove_const_t",
    "remove_cv",
    "remove_cv_t",
    "remove_cvref",
    "remove_cvref_t",
    "remove_extent",
    "remove_extent_t",
    "remove_pointer",
    "remove_pointer_t",
    "remove_reference",
    "remove_reference_t",
    "remove_volatile",
    "remove_volatile_t",
    "underlying_type",
    "underlying_type_t",
    "void_t",
    "is_constant_evaluated",
    "type_identity",
    "type_identity_t",
    "bool_constant",
    "true_type",
    "false_type",
    "is_pod",
    "is_pod_v",
    "is_literal_type",
    "pair",
    "make_pair",
    "swap",
    "move",
    "forward",
    "declval",
    "exchange",
    "integer_sequence",
    "index_sequence",
    "make_index_sequence",
    "make_integer_sequence",
    "index_sequence_for",
    "as_const",
    "numeric_limits",
    "min",
    "max",
    "move_if_noexcept",
];

fn std_core_text() -> String {
    let mut text = STD_CORE_INCLUDES.to_string();
    text.push_str("namespace std {\n");
    for name in STD_CORE_NAMES {
        text.push_str(&format!("using cuda::std::{name};\n"));
    }
    text.push_str("}\n");
    text
}

/// A standard header device code uses, from libcu++ under `std::` (see [`STD_CORE`]).
macro_rules! libcu_header {
    ($name:literal, $using:literal) => {
        concat!(
            "#pragma once\n#include <cuda/std/",
            $name,
            ">\n#include <__racetrack_std.h>\nnamespace std {\n",
            $using,
            "}\n"
        )
    };
}

const TYPE_TRAITS: &str = libcu_header!("type_traits", "");
const UTILITY: &str = libcu_header!("utility", "");
const LIMITS: &str = libcu_header!("limits", "");
const TUPLE: &str = libcu_header!(
    "tuple",
    "using cuda::std::tuple; using cuda::std::make_tuple; using cuda::std::tie; using cuda::std::get;
using cuda::std::tuple_cat; using cuda::std::forward_as_tuple; using cuda::std::ignore;
using cuda::std::tuple_size_v; using cuda::std::tuple_element_t; using cuda::std::apply;
"
);
const ARRAY: &str = libcu_header!("array", "using cuda::std::array; using cuda::std::get;\n");
const FUNCTIONAL: &str = libcu_header!(
    "functional",
    "using cuda::std::plus; using cuda::std::minus; using cuda::std::multiplies;
using cuda::std::divides; using cuda::std::modulus; using cuda::std::negate;
using cuda::std::equal_to; using cuda::std::not_equal_to; using cuda::std::greater;
using cuda::std::less; using cuda::std::greater_equal; using cuda::std::less_equal;
using cuda::std::logical_and; using cuda::std::logical_or; using cuda::std::logical_not;
using cuda::std::bit_and; using cuda::std::bit_or; using cuda::std::bit_xor; using cuda::std::bit_not;
using cuda::std::identity; using cuda::std::invoke; using cuda::std::reference_wrapper;
using cuda::std::ref; using cuda::std::cref;
"
);

/// CUB's umbrella header also brings its device-wide algorithms, host code that launches
/// kernels, which NVRTC refuses; kernels use the block- and warp-wide primitives, which NVRTC
/// compiles.
const CUB: &str = "\
#pragma once
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <cub/thread/thread_operators.cuh>
";

/// Thrust's `complex` header also includes `<sstream>` for its `operator<<`, which NVRTC lacks;
/// libcu++'s `complex` is the same type for device code, with the same functions.
const THRUST_COMPLEX: &str = "\
#pragma once
#include <cuda/std/complex>
namespace thrust {
template <class T> using complex = cuda::std::complex<T>;
using cuda::std::abs; using cuda::std::arg; using cuda::std::norm; using cuda::std::conj;
using cuda::std::proj; using cuda::std::polar; using cuda::std::exp; using cuda::std::log;
using cuda::std::log10; using cuda::std::pow; using cuda::std::sqrt; using cuda::std::sin;
using cuda::std::cos; using cuda::std::tan; using cuda::std::sinh; using cuda::std::cosh;
using cuda::std::tanh; using cuda::std::asin; using cuda::std::acos; using cuda::std::atan;
}
";

/// Whether `name` is a C++ standard header that only host code uses (see [`HOST_STD`]): left
/// out, it gives way to [`STD_CORE`].
pub fn host_std(name: &str) -> bool {
    HOST_STD.contains(&name) && !name.contains(['.', '/']) && name != "ctime"
}

/// Whether the stand-in NVRTC reads for `#include <name>` includes libcu++ (`cuda/std/…`) or
/// CUB, parts of CUDA's headers: `<cstdlib>`, `<climits>`, `<type_traits>`, `<cub/cub.cuh>`, …,
/// and every host-only standard header, which gives way to [`STD_CORE`]. A file that includes
/// one needs CUDA's headers even when it names none of them.
pub fn stand_in_needs_cuda_headers(name: &str) -> bool {
    host_std(name)
        || STANDARD_HEADERS.iter().any(|(stand_in, text)| {
            *stand_in == name
                && *stand_in != PRELUDE
                && (text.contains("<cuda/std/") || text.contains("<cub/"))
        })
}

/// What a CUDA library's host header (`cublas_v2.h`, `curand.h`, …) brings that device code
/// uses: the half and bfloat16 types. Such an include is replaced by this one.
pub const LIBRARY_TYPES: &str = "__racetrack_library_types.h";

const LIBRARY_TYPES_TEXT: &str = "\
#pragma once
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
";

/// Whether `name` is the host header of a CUDA library, which also declares the half types.
pub fn library_header(name: &str) -> bool {
    [
        "cublas", "cusparse", "cusolver", "cufft", "curand.h", "cudnn",
    ]
    .iter()
    .any(|prefix| name.starts_with(prefix))
}

/// Headers whose declarations NVRTC already has built in.
const BUILT_IN: &str = "#pragma once\n// __syncthreads, __shfl_sync, … are built into NVRTC.\n";

/// Headers of host-only libraries and APIs that a `.cu` file includes for its host code (the
/// driver API, the CUDA libraries' host interfaces, MPI, OpenMP, NVTX, OpenGL, the CUDA
/// samples' host helpers): never device code, so `check` always leaves them out, as it does a
/// header NVRTC cannot find in a file with host code.
const HOST_ONLY: &[&str] = &[
    "cuda.h",
    "cudaProfiler.h",
    "cuda_profiler_api.h",
    "cuda_gl_interop.h",
    "cudaGL.h",
    "curand.h",
    "cufft.h",
    "cufftXt.h",
    "cudnn.h",
    "nccl.h",
    "nvml.h",
    "mpi.h",
    "omp.h",
    "nvToolsExt.h",
    "nvrtc.h",
    "helper_cuda.h",
    "helper_functions.h",
    "helper_string.h",
    "helper_timer.h",
    "helper_image.h",
    "helper_gl.h",
];

/// Prefixes of host-only headers: `cublas_v2.h`, `cusparse.h`, `nvtx3/…`, `GL/…`, PyTorch's.
const HOST_ONLY_PREFIXES: &[&str] = &[
    "cublas",
    "cusparse",
    "cusolver",
    "cufile",
    "nvtx3/",
    "GL/",
    "GLFW/",
    "c10/",
    "ATen/",
    "torch/",
    "pybind11/",
];

/// C++ standard library headers that NVRTC does not have and device code cannot use (the ones
/// it can, `<cmath>`, `<cstdint>` and friends, have stand-ins above).
const HOST_STD: &[&str] = &[
    "algorithm",
    "atomic",
    "chrono",
    "complex",
    "deque",
    "exception",
    "fstream",
    "iomanip",
    "iostream",
    "iterator",
    "list",
    "map",
    "memory",
    "mutex",
    "numeric",
    "optional",
    "ostream",
    "queue",
    "random",
    "set",
    "sstream",
    "stack",
    "stdexcept",
    "string",
    "thread",
    "unordered_map",
    "unordered_set",
    "vector",
    "ctime",
    "time.h",
    "unistd.h",
    "sys/time.h",
    "getopt.h",
    "pthread.h",
];

/// Whether `name` (as written in `#include`) is a host-only header; see [`HOST_ONLY`] and
/// [`HOST_STD`].
pub fn host_only(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    HOST_ONLY.contains(&file)
        || HOST_STD.contains(&name)
        || HOST_ONLY_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// Thrust headers that only host code uses (containers, algorithms, execution policies): left
/// out of a file with host code, where they are the host's. The ones device code uses
/// (`thrust/complex.h`, `thrust/tuple.h`, …) stay.
pub fn host_side_thrust(name: &str) -> bool {
    const DEVICE_SIDE: &[&str] = &[
        "thrust/complex.h",
        "thrust/tuple.h",
        "thrust/pair.h",
        "thrust/functional.h",
        "thrust/random.h",
    ];
    name.starts_with("thrust/") && !DEVICE_SIDE.contains(&name)
}

/// No include guard, as in C: each inclusion looks at `NDEBUG` again. A failed assert calls
/// `__assertfail` with the function's full signature, as CUDA's own `assert` does on the device.
const ASSERT: &str = concat!(
    "\
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ",
    assert_expansion!(),
    "
#endif
"
);

const STDIO: &str =
    "#pragma once\n// printf is built into NVRTC; nothing else of <cstdio> runs on the device.\n";

const CSTRING: &str = "#pragma once\n// memcpy and memset are built into NVRTC for device code.\n";

const CSTDINT: &str = "\
#pragma once
#include <cuda/std/cstdint>
namespace std {
using cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t; using cuda::std::int64_t;
using cuda::std::uint8_t; using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;
using cuda::std::intptr_t; using cuda::std::uintptr_t; using cuda::std::intmax_t; using cuda::std::uintmax_t;
}
";

const CLIMITS: &str = "#pragma once\n#include <cuda/std/climits>\n";

/// NVRTC predefines none of the `__FLT_*__` macros a host compiler has: the values, as C gives them.
const CFLOAT: &str = "\
#pragma once
#define FLT_MAX 3.402823466e+38F
#define FLT_MIN 1.175494351e-38F
#define FLT_EPSILON 1.192092896e-07F
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-016
#define DBL_DIG 15
#define DBL_MANT_DIG 53
";

const CMATH: &str = "\
#pragma once
// sqrtf, expf, fabsf, … are built into NVRTC; std:: overloads come from libcu++.
#include <cuda/std/cmath>
namespace std {
using cuda::std::abs; using cuda::std::fabs; using cuda::std::sqrt; using cuda::std::cbrt;
using cuda::std::exp; using cuda::std::exp2; using cuda::std::expm1; using cuda::std::log;
using cuda::std::log2; using cuda::std::log10; using cuda::std::log1p; using cuda::std::pow;
using cuda::std::sin; using cuda::std::cos; using cuda::std::tan; using cuda::std::asin;
using cuda::std::acos; using cuda::std::atan; using cuda::std::atan2; using cuda::std::sinh;
using cuda::std::cosh; using cuda::std::tanh; using cuda::std::floor; using cuda::std::ceil;
using cuda::std::round; using cuda::std::trunc; using cuda::std::fmin; using cuda::std::fmax;
using cuda::std::hypot; using cuda::std::isnan; using cuda::std::isinf; using cuda::std::isfinite;
using cuda::std::signbit; using cuda::std::copysign;
}
";

const CSTDDEF: &str = "\
#pragma once
#include <cuda/std/cstddef>
namespace std {
using cuda::std::size_t; using cuda::std::ptrdiff_t; using cuda::std::nullptr_t; using cuda::std::max_align_t;
}
";

const CSTDLIB: &str = "#pragma once\n// malloc and free are built into NVRTC for device code.\n#include <cuda/std/cstdlib>\n";

/// The folders NVRTC searches, in order, and why each is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPath {
    /// The `.cu` file's own folder, where `#include "mine.h"` looks first.
    pub file_dir: PathBuf,
    /// `-I` folders, in the order given.
    pub user_dirs: Vec<PathBuf>,
    /// The CUDA headers: see [`nvrtc::cuda_include_dirs`].
    pub cuda_dirs: Vec<PathBuf>,
}

impl SearchPath {
    pub fn new(file: &Path, user_dirs: &[PathBuf]) -> Self {
        let file_dir = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Self {
            file_dir,
            user_dirs: user_dirs.to_vec(),
            cuda_dirs: nvrtc::cuda_include_dirs(),
        }
    }

    /// Every folder, in NVRTC's search order.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.file_dir)
            .chain(&self.user_dirs)
            .chain(&self.cuda_dirs)
    }

    /// `-I` options for NVRTC.
    pub fn options(&self) -> Vec<String> {
        self.dirs()
            .map(|dir| format!("-I{}", dir.display()))
            .collect()
    }

    /// Whether NVRTC will find `include`: a standard stand-in, or a file in one of the folders.
    pub fn finds(&self, include: &Include) -> bool {
        self.finds_from(&self.file_dir, include)
    }

    /// Whether NVRTC will find `include` written in a file of `including_dir`.
    pub fn finds_from(&self, including_dir: &Path, include: &Include) -> bool {
        STANDARD_HEADERS
            .iter()
            .any(|(name, _)| *name == include.name)
            || !include.angled && including_dir.join(&include.name).is_file()
            || self.dirs().any(|dir| dir.join(&include.name).is_file())
    }

    /// The user's own header that `include`, written in a file of `including_dir`, names: one
    /// in the file's folder or an `-I` folder (not a stand-in, not a CUDA header), found where
    /// a compiler looks (`"…"` first beside the file that includes it).
    pub fn local_header(&self, including_dir: &Path, include: &Include) -> Option<PathBuf> {
        if STANDARD_HEADERS
            .iter()
            .any(|(name, _)| *name == include.name)
        {
            return None;
        }
        let beside = (!include.angled).then(|| including_dir.join(&include.name));
        let mut candidates = beside
            .into_iter()
            .chain(std::iter::once(self.file_dir.join(&include.name)))
            .chain(self.user_dirs.iter().map(|dir| dir.join(&include.name)));
        candidates.find(|path| path.is_file())
    }

    /// The folders as an error message lists them.
    pub fn describe(&self) -> String {
        let cuda = if self.cuda_dirs.is_empty() {
            format!(
                "no CUDA headers (a toolkit under CUDA_PATH or /usr/local/cuda, or `pip install {} {}`)",
                nvrtc::PINNED_RUNTIME,
                nvrtc::PINNED_CCCL
            )
        } else {
            display_dirs(&self.cuda_dirs)
        };
        let mut parts = vec![format!("{} (the file's folder)", self.file_dir.display())];
        if !self.user_dirs.is_empty() {
            parts.push(format!("{} (-I)", display_dirs(&self.user_dirs)));
        }
        parts.push(cuda);
        parts.join(", ")
    }
}

fn display_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|dir| dir.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The stand-ins as NVRTC takes them.
pub fn standard_headers() -> Vec<(String, String)> {
    STANDARD_HEADERS
        .iter()
        .map(|(name, text)| {
            let text = if *name == STD_CORE {
                std_core_text()
            } else {
                (*text).to_string()
            };
            ((*name).to_string(), text)
        })
        .collect()
}
