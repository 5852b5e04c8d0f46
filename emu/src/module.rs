//! `Module`, a parsed PTX module: what the parser makes (`parse/`), the analyses read
//! (`cas_seed.rs`, `poll.rs`, `regalloc.rs`, `stretch.rs`) and a launch runs (`exec/`). `load.rs`
//! makes one: parse, then analyze.

use std::collections::HashMap;

use crate::error::EmuError;
use crate::ir::*;

/// Module-level `.global`/`.const` variables live here, one 16 MiB slot per module, so their
/// addresses are fixed at parse time and never collide with `Emulator::alloc`.
pub(crate) const GLOBAL_VAR_BASE: u64 = 0x0000_6000_0000_0000;

/// Register slot 0 is the sink `_`; writes to it are harmless and never read back.
pub(crate) const SINK: u32 = 0;

/// A parsed PTX module, ready to launch.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) id: u64,
    pub(crate) code: Vec<Instr>,
    pub(crate) funcs: Vec<Function>,
    pub(crate) files: HashMap<u32, String>,
    pub(crate) locs: Vec<Loc>,
    pub(crate) shared: Vec<SharedVar>,
    pub(crate) static_shared: u32,
    /// It reads `%reserved_smem_offset_*`, so each block gets [`RESERVED_SMEM`] bytes more.
    pub(crate) reserved_smem: bool,
    /// It reads `%clock`, `%clock64` or `%globaltimer`, whose values depend on every warp's
    /// instructions before: its launches run on one core.
    pub(crate) reads_clock: bool,
    /// Names of `extern .shared` arrays (all alias the dynamic shared memory).
    pub(crate) dyn_names: Vec<String>,
    pub(crate) globals: Vec<GlobalVar>,
    pub(crate) nregs: u32,
    pub(crate) tparam_size: u32,
    pub(crate) local_size: u32,
    /// Per instruction: a plain load whose value only seeds compare-and-swaps (`cas_seed.rs`);
    /// racecheck skips it.
    pub(crate) cas_seed: Vec<bool>,
    /// Per instruction: a strong load that polls a flag (`poll.rs`); the words it reads are
    /// flags to racecheck.
    pub(crate) polls: Vec<bool>,
    /// Per instruction: the rounds a lane there surely keeps to its block (`stretch.rs`).
    pub(crate) stretch: Vec<u32>,
    /// Per instruction: the rounds a lane there surely changes nothing beyond its block, loads
    /// of global memory allowed (`stretch.rs`).
    pub(crate) quiet: Vec<u32>,
    /// Per instruction: the fewest steps a lane there takes to end its thread (`stretch.rs`).
    pub(crate) exits: Vec<u32>,
    /// Per instruction: whether a lane there runs straight to the end of its thread, through
    /// no branch or call (`stretch.rs`): a branch to such code is a `return`.
    pub(crate) straight_to_end: Vec<bool>,
    /// Per instruction: a branch forward over a barrier (`if (tid >= i) break;`, a `continue`,
    /// an `if` around a `__syncthreads()`): the last one a thread took before it exited without
    /// arriving is what a barrier divergence blames.
    pub(crate) skips_barrier: Vec<bool>,
    /// Per instruction: whether it ends a step of the hardware schedule (`stretch.rs`,
    /// [`crate::stretch::ends_step`]): an instruction another warp could observe, or one that
    /// synchronizes. The instructions between two such run in the step of the second.
    pub(crate) ends_step: Vec<bool>,
    /// The most instructions a thread runs in one step of the hardware schedule
    /// ([`crate::stretch::analyze_longest_step`]).
    pub(crate) longest_step: u32,
    /// PTX lines that take a static shared variable's address, with its offset (the parser's).
    pub(crate) shared_address_lines: Vec<(u32, u32)>,
    /// Per instruction: for a shared-memory access through a register that holds one static
    /// shared array's address plus an offset, that array (its index in `shared`): memcheck
    /// holds the access to it, so an index past `As`'s end is reported rather than landing in
    /// `Bs` (`shared_base.rs`).
    pub(crate) shared_base: Vec<Option<u32>>,
    /// Its compiled regions, made by the first launch that runs with the compiled tier.
    pub(crate) tier: crate::compiled::Cache,
}

/// Bytes of reserved shared memory a block has when its module reads `%reserved_smem_offset_*`:
/// 1 KiB, as sm_80 and later GPUs set aside for the system (cooperative groups keep multi-warp
/// tiles' barriers and reduction scratch there).
pub(crate) const RESERVED_SMEM: u32 = 1024;

impl Module {
    /// Whether a `free` can run: a freed heap block's size is gone afterwards, so findings about
    /// it must be worded before it is freed (a piped race detector's come later).
    pub(crate) fn frees_heap(&self) -> bool {
        self.calls_builtin(|f| f == crate::ir::Builtin::Free)
    }

    /// Whether the module calls a device-runtime function that `which` picks.
    pub(crate) fn calls_builtin(&self, which: impl Fn(crate::ir::Builtin) -> bool) -> bool {
        self.code
            .iter()
            .any(|i| matches!(i.op, crate::ir::Op::Builtin { func, .. } if which(func)))
    }

    /// What the compiled tier takes of this module: how many regions, and how many
    /// instructions they cover (compiled now if no launch has yet; `(0, 0)` where Cranelift
    /// has no code generator for the host).
    pub fn compiled_regions(&self) -> (usize, u64) {
        self.tier(crate::compiled::Engine::Compiled, false)
            .map_or((0, 0), |tier| tier.size())
    }

    /// The compiled regions a launch runs with: none for [`Engine::Interp`] and for traced
    /// launches (a trace records every step's instruction, which only the interpreter takes one
    /// at a time); compiled by the first launch that asks.
    ///
    /// [`Engine::Interp`]: crate::compiled::Engine::Interp
    pub(crate) fn tier(
        &self,
        engine: crate::compiled::Engine,
        traced: bool,
    ) -> Option<&crate::compiled::Tier> {
        if engine == crate::compiled::Engine::Interp || traced {
            return None;
        }
        let starts: Vec<u32> = self.funcs.iter().map(|f| f.start).collect();
        self.tier.get(&self.code, &starts)
    }

    /// Names of the kernels (`.entry`) in this module.
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.funcs
            .iter()
            .filter(|f| f.is_entry)
            .map(|f| f.name.as_str())
    }

    /// The sizes in bytes of kernel `entry`'s parameters, in order (its PTX name): how a host
    /// that holds only pointers to the arguments (`cudaLaunchKernel`'s `args`) reads them.
    pub fn param_sizes(&self, entry: &str) -> Option<Vec<u32>> {
        let f = self.funcs.iter().find(|f| f.is_entry && f.name == entry)?;
        Some(f.params.iter().map(|p| p.size).collect())
    }

    /// The `.global` and `.const` variables of the module, by the names reports use, with their
    /// sizes in bytes.
    pub fn variables(&self) -> impl Iterator<Item = (&str, usize)> {
        self.globals.iter().map(|g| (g.name.as_str(), g.init.len()))
    }

    pub(crate) fn file_name(&self, file: u32) -> &str {
        self.files
            .get(&file)
            .map(String::as_str)
            .unwrap_or("<unknown>")
    }

    /// The function whose code holds `pc`.
    pub(crate) fn function_at(&self, pc: u32) -> Option<&crate::ir::Function> {
        self.funcs.iter().find(|f| f.start <= pc && pc < f.end)
    }

    /// The error of a launch that reached `what` at `pc`: the kernel is the entry the
    /// instruction belongs to, or the one that called it.
    pub(crate) fn refusal(&self, pc: u32, what: &Unsupported) -> EmuError {
        let entry = self
            .funcs
            .iter()
            .find(|f| f.start <= pc && pc < f.end)
            .map_or_else(String::new, |f| f.name.clone());
        let instr = &self.code[pc as usize];
        EmuError::CannotRun {
            entry,
            opcode: what.opcode.clone(),
            place: self.place(instr),
            why: unsupported_why(what),
        }
    }

    /// `kernel.cu:12 (PTX line 345)`: the user's line for code inlined from a header.
    fn place(&self, instr: &Instr) -> String {
        match self.locs.get(instr.loc as usize) {
            Some(loc) if loc.line != 0 => {
                let (file, line) = loc.outermost.unwrap_or((loc.file, loc.line));
                format!(
                    "{}:{line} (PTX line {})",
                    self.file_name(file),
                    instr.ptx_line
                )
            }
            _ => format!("PTX line {}", instr.ptx_line),
        }
    }
}

/// Why the emulator does not run an instruction, and what to do instead.
fn unsupported_why(what: &Unsupported) -> String {
    let base = what.opcode.split('.').next().unwrap_or("");
    let family = match base {
        "tex" | "tld4" | "txq" | "istypep" => Some(
            "texture fetches (tex1Dfetch, tex2D, texture objects) are not emulated; read the data through a plain pointer instead (const T *__restrict__ or __ldg give the same read-only caching)",
        ),
        "suld" | "sust" | "sured" | "suq" => Some(
            "surface reads and writes are not emulated; use a plain pointer to the data instead",
        ),
        "wmma" | "mma" | "wgmma" | "ldmatrix" | "stmatrix" | "movmatrix" | "tcgen05" => {
            Some("tensor-core matrix instructions (wmma, mma) are not emulated")
        }
        "cp" => Some(
            "of the asynchronous copies only cp.async (4, 8 or 16 bytes, with its groups and mbarrier arrival) is emulated, not bulk or tensor copies (cp.async.bulk, TMA); copy with cp.async or ordinary loads and stores",
        ),
        "mbarrier" => Some(
            "mbarrier is emulated on a block's own shared memory only, not on another block's of a cluster (shared::cluster)",
        ),
        _ => None,
    };
    match (family, &what.detail) {
        (_, Some(detail)) if matches!(base, "cp" | "mbarrier") => {
            format!("the emulator cannot read it ({detail})")
        }
        (Some(family), _) => family.to_string(),
        (None, Some(detail)) => format!("the emulator cannot read it ({detail})"),
        (None, None) => "the emulator does not know this instruction".to_string(),
    }
}
