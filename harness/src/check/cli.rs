//! `racetrack check`'s command line.

use std::path::PathBuf;
use std::time::Duration;

use super::args::{ArgKind, ArgSpec, ArgValueSpec};
use super::front::{CompileFlags, CppStd};
use super::{CheckError, Result};
use crate::backend::{BACKEND_ENV, BackendChoice};
use crate::cli::{MemoryModelName, ScheduleName};
use crate::device::EmuSettings;
use crate::launch::{Dim3, LaunchShape};

/// What `racetrack check --help` adds below the flags.
pub const HELP: &str = "\
The file:
  C++ as people write it: kernels by their source names (--entry sum, ns::sum,
  'reduce<float, 256>' instantiates a template, 'scale(float*, int)' picks an overload),
  CUDA headers (cooperative_groups.h, cuda_fp16.h, from CUDA_PATH, /usr/local/cuda or the pip
  wheels nvidia-cuda-runtime and nvidia-cuda-cccl), <cassert>, <cstdio>, <cstdint>, <cmath>.
  NVRTC compiles device code only: check leaves out a whole program's host code (main,
  functions that are neither __global__ nor __device__, a class's host members, and includes
  such as <iostream>), keeping line numbers, and says what it left out; constexpr functions and
  member declarations without a body are kept for the device. #ifndef __CUDACC_RTC__ … #endif
  around host code does the same in any NVRTC tool. The file's own headers (found beside it or with -I)
  get the same treatment; host-only headers (<cuda.h>, cuBLAS, MPI, NVTX, <vector>, the CUDA
  samples' helper_cuda.h) are always left out, and what nvcc's headers bring unasked (uint,
  INFINITY, M_PI, int32_t, the half types of a CUDA library's header, std::enable_if and the rest
  of <type_traits>, <utility> and <limits> from libcu++) is there; <cub/cub.cuh> gives CUB's
  block and warp primitives. GPUVerify's annotations compile: __requires, __invariant and the
  other contracts to nothing, __assert to an assert.
    -I include          also search ./include for #include \"…\" and <…> (repeatable)
    -D BLOCK=256        define a macro (repeatable); -D USE_SHARED defines it as 1
    --std c++20         the C++ standard (NVRTC's default is c++17)

Argument specs (--arg, one per kernel parameter, in order):
  scalars   u32=5  i32=-3  u64=0x10  i64=-7  f32=1.5  f64=2e-3  u8=7  i8=-1  u16=9  i16=-9
            f16=0.5  bf16=0.5 (a __half or __nv_bfloat16 parameter)
  buffers   TYPE[LEN]=FILL, TYPE one of u8 i8 u16 i16 i32 u32 u64 i64 f16 bf16 f32 f64, FILL one of
              zeros         every element 0
              const:V       every element V
              iota          0, 1, 2, … (u8 wraps at 256)
              random:SEED   seeded uniform values: u8/i8 over their whole range, u16/u32/u64 in
                            [0, 1000), i16/i32/i64 in [-1000, 1000), floats in [0, 1);
                            drawn on every core, each million elements from a stream of
                            the seed of its own
              file:PATH     raw little-endian bytes; TYPE[]=file:PATH takes the file's length,
                            TYPE[LEN]=file:PATH its first LEN elements
              uninit        allocated and never written, as cudaMalloc leaves memory: on the
                            emulator initcheck reports each read of an element the kernel did
                            not write first (on a GPU the buffer is zeroed)
            f16 and bf16 buffers are shown as numbers.
  names     reports name an argument after the kernel parameter that receives it; prefix a
            spec with NAME: to name it otherwise (or to refer to it: --show histo prints that
            buffer alone, n=histo+4 points into it),
            e.g. --arg text:u8[]=file:book.txt --arg n:u32=4096 --arg histo:u32[128]=zeros
  pointers  into a buffer, as a host passes in + RADIUS or one allocation as two arrays:
              TYPE[LEN]+N=FILL   the kernel gets the buffer's start + N elements:
                                 --arg in:f32[1030]+3=iota for a launch with d_in + 3
              NAME=OTHER+N       a pointer N elements into the buffer named OTHER (no new
                                 memory): --arg pos:f32[2048]=random:1 --arg vel=pos+1024;
                                 NAME=OTHER passes that buffer again (in place: --arg in=out)
            memcheck names accesses by the whole buffer: in[-3] is 3 before its start.
  structs   a struct passed by value (a functor, a lock handle): {FIELD, FIELD, …}, its fields in
            declaration order, scalars as TYPE=VALUE and pointer fields as TYPE[LEN]=FILL (each
            gets its own buffer), laid out as C lays them out and checked against the kernel's
            parameter size and alignment: --arg 'f:{f32=2, x:f32[128]=random:1, y:f32[128]=zeros,
            i32=128}' for struct { float a; const float *x; float *y; int n; }; name fields
            (x:f32[128]=…) and reports show them as f.x.

Launch state the host would set:
  --shared BYTES       dynamic shared memory (extern __shared__), the third <<<>>> parameter
  --symbol NAME:SPEC   a __constant__ or __device__ variable, as cudaMemcpyToSymbol sets it;
                       SPEC as a buffer spec (or TYPE=VALUE): --symbol c_kernel:f32[17]=const:0.0588,
                       --symbol ns::gain:f32=2 (repeatable). Unset, such memory holds zeros or
                       its initializer, as on a GPU.

The emulator runs the PTX NVRTC makes of ordinary CUDA (warp shuffles and votes, atomics, f16
and bf16, cooperative groups); a kernel that reaches what it does not run (texture and surface
fetches, tensor-core mma, cp.async) stops with one sentence naming the instruction and its line.

Exit status:
  0  the kernel ran and the checkers found nothing (on cuda: the kernel ran)
  1  error: bad arguments, the file does not compile, the launch was refused, or the kernel did
     not finish within --timeout
  2  the kernel ran and the emulator's checkers reported findings

Examples:
  racetrack check kernels/ch4_atomics/01_racy_increment.cu --entry racy_increment \\
      --grid 10 --block 16 --arg x:i32[1]=zeros --backend emu
  racetrack check sum.cu --entry 'block_sum<float, 256>' -I include -D SCALE=2 \\
      --grid 4 --block 256 --arg f32[1000]=random:1 --arg out:f32[1]=zeros --arg i32=1000 \\
      --show out --backend emu";

/// `racetrack check FILE.cu [--entry NAME] --grid G --block B --arg SPEC…`
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The .cu file; errors and reports name its lines as `FILE:LINE`
    pub file: String,

    /// The kernel to launch, named as in the source: sum, ns::sum, 'reduce<float, 256>' (a
    /// template's instance), 'scale(float*, int)' (one of overloads); may be left out when the
    /// file defines one kernel
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,

    /// Also search DIR for #include "…" and <…> (repeatable), after the file's own folder and
    /// before the CUDA headers: -I include
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,

    /// Define a macro, as nvcc -D does (repeatable): -D BLOCK=256, -D USE_SHARED
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]", value_parser = parse_define)]
    pub defines: Vec<String>,

    /// The C++ standard to compile with [default: NVRTC's, c++17]
    #[arg(long, value_enum, value_name = "STD")]
    pub std: Option<CppStd>,

    /// Blocks per grid: N, X,Y or X,Y,Z
    #[arg(long, value_name = "G", value_parser = parse_dim3)]
    pub grid: Dim3,

    /// Threads per block: N, X,Y or X,Y,Z
    #[arg(long, value_name = "B", value_parser = parse_dim3)]
    pub block: Dim3,

    /// Bytes of dynamic shared memory (extern __shared__) per block
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared: u32,

    /// One kernel argument, in parameter order: u32=5, f32[1024]=random:1, histo:u32[128]=zeros,
    /// in:f32[1030]+3=iota (a pointer 3 elements in), vel=pos+1024 (into another's buffer),
    /// '{f32=2, f32[128]=random:1, i32=128}' (a struct by value) (see below)
    #[arg(long = "arg", value_name = "SPEC")]
    pub args: Vec<ArgSpec>,

    /// Set a __constant__ or __device__ variable before the launch, as the host's
    /// cudaMemcpyToSymbol does (repeatable): --symbol c_kernel:f32[17]=const:0.0588
    #[arg(long = "symbol", value_name = "NAME:SPEC")]
    pub symbols: Vec<super::SymbolSpec>,

    /// Print this argument's buffer after the run, by index or by its --arg name: --show 2,
    /// --show histo (repeatable) [default: every buffer]
    #[arg(long = "show", value_name = "N|NAME", value_parser = parse_show)]
    pub show: Vec<Show>,

    /// Print one JSON object (backend, device, launch, findings, buffers) instead of text
    #[arg(long)]
    pub json: bool,

    /// Also print where the time went, phase by phase (front end, finding NVRTC, compile or
    /// compile cache, load, fill, launch, copy back), on standard error
    #[arg(long)]
    pub timings: bool,

    /// Where the kernel runs: a GPU (cuda), the PTX emulator with its checkers (emu), or cuda when there is one (auto)
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, env = BACKEND_ENV)]
    pub backend: BackendChoice,

    /// Emulator schedule
    #[arg(long, value_enum, default_value_t = ScheduleName::Hardware)]
    pub schedule: ScheduleName,

    /// Seed of the random, adversarial and lanes schedules
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,

    /// Turn off the emulator's race checker
    #[arg(long)]
    pub no_racecheck: bool,

    /// What the race checker reports: racecheck (also volatile/relaxed data that nothing
    /// orders) or ptx (exactly PTX's data races)
    #[arg(long, value_enum, default_value_t = MemoryModelName::Racecheck)]
    pub memory_model: MemoryModelName,

    /// Turn off the emulator's barrier checker
    #[arg(long)]
    pub no_synccheck: bool,

    /// Turn off the emulator's memory checker
    #[arg(long)]
    pub no_memcheck: bool,

    /// Turn off the emulator's check for reads of memory nothing wrote (shared memory, and
    /// buffers given as =uninit)
    #[arg(long)]
    pub no_initcheck: bool,

    /// Hard cap on the thread-instructions the emulator runs. A stuck kernel (nothing changes:
    /// no store, no barrier, no exit, no register) is stopped by the watchdog long before; this
    /// cap stops one that keeps busy forever, e.g. a spinner that counts its tries
    #[arg(long, value_name = "N", default_value_t = EmuSettings::default().step_budget,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub step_budget: u64,

    /// Cores the emulator may use [default: every core]; what it finds is the same for any number
    #[arg(long, value_name = "N", env = crate::cli::THREADS_ENV,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,

    /// The emulator's engine: the interpreter, or native code for straight-line register
    /// arithmetic; auto compiles launches of 2^20 threads or more (emu/BENCHMARK.md). Findings are the same
    #[arg(long, value_enum, env = crate::cli::ENGINE_ENV, default_value_t = crate::cli::EngineName::Auto)]
    pub engine: crate::cli::EngineName,

    /// Give up (exit 1) when the run takes longer than this many seconds; 0 waits forever
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    pub timeout: Duration,
}

impl CheckArgs {
    pub fn emu_settings(&self) -> EmuSettings {
        EmuSettings {
            schedule: self.schedule.with_seed(self.seed),
            racecheck: !self.no_racecheck,
            synccheck: !self.no_synccheck,
            memcheck: !self.no_memcheck,
            initcheck: !self.no_initcheck,
            step_budget: self.step_budget,
            bank_conflicts: false,
            memory_model: self.memory_model.model(),
            threads: self.threads.unwrap_or(0),
            engine: self.engine.engine(),
        }
    }

    pub fn compile_flags(&self) -> CompileFlags {
        CompileFlags {
            include_dirs: self.include_dirs.clone(),
            defines: self.defines.clone(),
            std: self.std,
        }
    }

    pub fn shape(&self) -> LaunchShape {
        LaunchShape {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.shared,
        }
    }

    /// The argument indices to print: `--show`, checked, or every buffer.
    pub fn shown(&self) -> Result<Vec<usize>> {
        if self.show.is_empty() {
            return Ok((0..self.args.len())
                .filter(|&index| {
                    let value = &self.args[index].value;
                    match value {
                        ArgValueSpec::Buffer(_) => true,
                        ArgValueSpec::Struct(fields) => fields
                            .iter()
                            .any(|field| matches!(field.value, ArgValueSpec::Buffer(_))),
                        ArgValueSpec::Scalar(_) | ArgValueSpec::Alias(_) => false,
                    }
                })
                .collect());
        }
        let mut indices = Vec::with_capacity(self.show.len());
        for show in &self.show {
            let refuse = |reason: String| CheckError::Show {
                target: show.to_string(),
                reason,
            };
            let index = match show {
                Show::Index(index) => *index,
                Show::Name(name) => self
                    .args
                    .iter()
                    .position(|spec| spec.name.as_deref() == Some(name.as_str()))
                    .ok_or_else(|| {
                        let names: Vec<&str> = self
                            .args
                            .iter()
                            .filter_map(|spec| spec.name.as_deref())
                            .collect();
                        refuse(if names.is_empty() {
                            format!("no --arg is named {name} (name one as {name}:TYPE[LEN]=FILL)")
                        } else {
                            format!(
                                "no --arg is named {name}; the names given are {}",
                                names.join(", ")
                            )
                        })
                    })?,
            };
            let Some(arg) = self.args.get(index) else {
                return Err(refuse(format!(
                    "there is no argument {index}: the {} --arg given are numbered from 0",
                    self.args.len()
                )));
            };
            if !matches!(arg.kind(), ArgKind::Buffer | ArgKind::Struct { .. }) {
                return Err(refuse(format!(
                    "argument {index} is the scalar `{arg}`; --show prints buffers"
                )));
            }
            // A pointer into another argument's buffer shows that buffer.
            let index = match &arg.value {
                ArgValueSpec::Alias(alias) => self
                    .args
                    .iter()
                    .position(|spec| spec.name.as_deref() == Some(alias.target.as_str()))
                    .unwrap_or(index),
                _ => index,
            };
            if !indices.contains(&index) {
                indices.push(index);
            }
        }
        Ok(indices)
    }
}

/// What `--show` names: an argument's index, or the name its spec gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Show {
    Index(usize),
    Name(String),
}

impl std::fmt::Display for Show {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Index(index) => write!(f, "{index}"),
            Self::Name(name) => f.write_str(name),
        }
    }
}

/// A number, or a name as `--arg NAME:…` gives one.
pub fn parse_show(text: &str) -> Result<Show, String> {
    let text = text.trim();
    if let Ok(index) = text.parse() {
        return Ok(Show::Index(index));
    }
    let mut chars = text.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(Show::Name(text.to_string()))
    } else {
        Err(format!(
            "`{text}` is neither an argument's index nor its name (--show 2, --show histo)"
        ))
    }
}

/// `NAME` or `NAME=VALUE`, NAME a C identifier.
pub fn parse_define(text: &str) -> Result<String, String> {
    let name = text.split_once('=').map_or(text, |(name, _)| name);
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(text.to_string())
    } else {
        Err(format!(
            "`{text}` is not a macro definition; expected NAME or NAME=VALUE (BLOCK=256)"
        ))
    }
}

/// Seconds, fractions allowed: `60`, `0.5`.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// `N`, `X,Y` or `X,Y,Z` (`x` works as a separator too: `16x16`).
pub fn parse_dim3(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split([',', 'x', 'X']).map(str::trim).collect();
    let bad = || {
        format!("`{text}` is not a launch dimension; expected N, X,Y or X,Y,Z (e.g. 256 or 16,16)")
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut axes = [1u32; 3];
    for (axis, part) in axes.iter_mut().zip(&parts) {
        *axis = part.parse().map_err(|_| bad())?;
    }
    Ok(Dim3 {
        x: axes[0],
        y: axes[1],
        z: axes[2],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_takes_an_index_or_a_name() {
        assert_eq!(parse_show("2"), Ok(Show::Index(2)));
        assert_eq!(parse_show("histo"), Ok(Show::Name("histo".into())));
        assert!(parse_show("-1").is_err());
        assert!(parse_show("a b").is_err());
    }

    #[test]
    fn defines_are_names_with_optional_values() {
        assert_eq!(parse_define("BLOCK=256"), Ok("BLOCK=256".to_string()));
        assert_eq!(parse_define("USE_SHARED"), Ok("USE_SHARED".to_string()));
        assert_eq!(parse_define("_X="), Ok("_X=".to_string()));
        for bad in ["", "=1", "2X", "A B=1", "A-B"] {
            assert!(parse_define(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dimensions_take_one_to_three_axes() {
        assert_eq!(parse_dim3("256"), Ok(Dim3::x(256)));
        assert_eq!(parse_dim3("16,16"), Ok(Dim3::xy(16, 16)));
        assert_eq!(parse_dim3("4, 2, 3"), Ok(Dim3 { x: 4, y: 2, z: 3 }));
        assert_eq!(parse_dim3("16x8"), Ok(Dim3::xy(16, 8)));
        for bad in ["", "1,2,3,4", "a", "-1", "1,,2"] {
            assert!(parse_dim3(bad).is_err(), "{bad}");
        }
    }
}
