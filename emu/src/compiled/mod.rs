//! The compiled tier: straight-line runs of register-only instructions (moves, integer and f32
//! arithmetic, comparisons, selects, address conversions), each turned by Cranelift into one
//! native function that runs the whole run for every active lane of a warp.
//!
//! The interpreter keeps everything else: control flow, memory, atomics, barriers, warp
//! collectives, special registers; and the schedule (`exec/regions.rs` runs a region when a
//! warp reaches its start, and counts its steps as the interpreter would). This room knows
//! nothing of warps or launches: its interface is [`Tier::region_at`] and [`Region::run`].

#[cfg(feature = "compiled")]
mod regions;
#[cfg(feature = "compiled")]
mod translate;

/// `code(regs, active)`, as `translate.rs` makes it.
type RegionFn = unsafe extern "C" fn(*mut u64, u32);

use crate::ir::Instr;
use std::sync::{Arc, OnceLock};

/// Which engine runs a launch's instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The interpreter alone: every instruction through `exec::instr`.
    Interp,
    /// Register-only regions run as native code; everything else in the interpreter. A build
    /// without the `compiled` feature (the exercise runner's) runs the interpreter alone.
    Compiled,
    /// What `RACETRACK_ENGINE` names; otherwise the tier for a launch of the hardware schedule
    /// with at least [`crate::options::AUTO_COMPILED_THREADS`] threads, whose step runs a
    /// region whole (register work and branches between two visible operations), and the
    /// interpreter for smaller launches and the other schedules, where a compile would cost
    /// more than it saves.
    #[default]
    Auto,
}

/// The environment variable the command lines and the Python package read for the engine.
pub const ENGINE_ENV: &str = "RACETRACK_ENGINE";

impl Engine {
    /// `interp`, `compiled` or `auto`.
    pub fn parse(s: &str) -> Option<Engine> {
        match s.trim().to_ascii_lowercase().as_str() {
            "interp" | "interpreter" => Some(Engine::Interp),
            "compiled" => Some(Engine::Compiled),
            "auto" => Some(Engine::Auto),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Compiled => "compiled",
            Engine::Auto => "auto",
        }
    }

    /// The engine `RACETRACK_ENGINE` names, `Auto` when it is unset; an error names a value
    /// that is none of the three.
    pub fn from_env() -> Result<Engine, String> {
        match std::env::var(ENGINE_ENV) {
            Ok(v) if !v.trim().is_empty() => Engine::parse(&v).ok_or_else(|| {
                format!("{ENGINE_ENV}={v:?} is not an engine (interp, compiled or auto)")
            }),
            _ => Ok(Engine::Auto),
        }
    }
}

/// One compiled region: `len` instructions from the PC it is found at.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    pub(crate) len: u32,
    /// One more than the highest register its instructions name.
    rows: u32,
    /// `code(regs, active)`: `regs` is the warp's register file, `regs[r][lane]` at
    /// `r * 32 + lane`; `active` the lanes that run (each instruction's guard applies within).
    code: RegionFn,
}

impl Region {
    /// Runs the region's instructions, in order and each under its guard, for the lanes of
    /// `active` of the register file `regs` (`regs[r][lane]`), as the interpreter's steps would.
    #[inline]
    pub(crate) fn run(&self, regs: &mut [[u64; 32]], active: u32) {
        assert!(
            regs.len() >= self.rows as usize,
            "a register file too small"
        );
        // SAFETY: the region reads and writes only rows below `rows` of the `[u64; 32]` rows
        // laid out one after another, which `regs` holds, borrowed mutably.
        unsafe { (self.code)(regs.as_mut_ptr().cast::<u64>(), active) };
    }
}

/// A module's compiled regions, by the PC each starts at.
pub(crate) struct Tier {
    starts: Vec<Option<Region>>,
    /// Owns the regions' code; `None` only while it is dropped.
    #[cfg(feature = "compiled")]
    jit: Option<cranelift_jit::JITModule>,
}

// SAFETY: after `finalize_definitions` the JIT module is never used again but to free its
// memory when the tier is dropped (which needs the tier owned, so no region runs then); the
// regions' code is immutable machine code that any thread may call.
unsafe impl Send for Tier {}
// SAFETY: as for `Send`: shared access only reads `starts` and calls finished code.
unsafe impl Sync for Tier {}

#[cfg(feature = "compiled")]
impl Drop for Tier {
    fn drop(&mut self) {
        if let Some(jit) = self.jit.take() {
            // SAFETY: the tier is being dropped, so none of its function pointers can be called
            // any more (they are reached only through `&Tier`).
            unsafe { jit.free_memory() };
        }
    }
}

impl Tier {
    /// The region starting at `pc`, if any.
    #[inline]
    pub(crate) fn region_at(&self, pc: u32) -> Option<Region> {
        self.starts.get(pc as usize).copied().flatten()
    }

    /// How many regions, and how many instructions they cover.
    pub(crate) fn size(&self) -> (usize, u64) {
        let regions = self.starts.iter().flatten();
        (regions.clone().count(), regions.map(|r| r.len as u64).sum())
    }
}

/// A module's tier, compiled the first time a launch asks for it. A module whose regions
/// Cranelift could not compile has none, and runs in the interpreter.
#[derive(Default)]
pub(crate) struct Cache(OnceLock<Option<Arc<Tier>>>);

impl Clone for Cache {
    fn clone(&self) -> Cache {
        let cache = Cache::default();
        if let Some(tier) = self.0.get() {
            let _ = cache.0.set(tier.clone());
        }
        cache
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get() {
            None => f.write_str("Cache(not compiled)"),
            Some(None) => f.write_str("Cache(interpreter only)"),
            Some(Some(t)) => write!(f, "Cache({} regions)", t.size().0),
        }
    }
}

impl Cache {
    /// The module's tier, compiled now if this is the first ask.
    #[cfg(not(feature = "compiled"))]
    pub(crate) fn get(&self, _code: &[Instr], _function_starts: &[u32]) -> Option<&Tier> {
        None
    }

    /// The module's tier, compiled now if this is the first ask.
    #[cfg(feature = "compiled")]
    pub(crate) fn get(&self, code: &[Instr], function_starts: &[u32]) -> Option<&Tier> {
        self.0
            .get_or_init(|| {
                let compiled = translate::compile(code, function_starts).ok()?;
                let mut starts = vec![None; code.len()];
                for (start, len, rows, code) in compiled.regions {
                    starts[start as usize] = Some(Region { len, rows, code });
                }
                Some(Arc::new(Tier {
                    starts,
                    jit: Some(compiled.jit),
                }))
            })
            .as_deref()
    }
}
