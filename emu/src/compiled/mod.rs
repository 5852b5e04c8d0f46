//! The compiled tier: straight-line runs of register-only instructions (moves, integer and f32
//! arithmetic, comparisons, selects, address conversions), each turned by Cranelift into one
//! native function that runs the whole run for every active lane of a warp.
//!
//! The interpreter keeps everything else: control flow, memory, atomics, barriers, warp
//! collectives, special registers. It also keeps the schedule: a warp that enters a region runs
//! its instructions at once, and then owes the region's steps ([`Warp::compiled_debt`]); each of
//! its later steps only pays one (the clock, the thread-instruction count, the PC), exactly as
//! the interpreter would have counted that instruction. Registers are the only state a region
//! changes, and no one but the warp itself reads them while it owes steps, except the watchdog,
//! whose look the launch loops keep out of a region: they say through [`Ctx::region_rounds`]
//! how many steps may pass before anyone looks (see `enter`).
//!
//! [`Warp::compiled_debt`]: crate::exec::warp::Warp
//! [`Ctx::region_rounds`]: crate::exec

mod regions;
mod translate;

use crate::exec::Warp;
use crate::ir::Instr;
use std::sync::{Arc, OnceLock};

/// Which engine runs a launch's instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The interpreter alone: every instruction through `exec::instr`.
    Interp,
    /// Register-only regions run as native code; everything else in the interpreter.
    Compiled,
    /// The compiled tier wherever it is exact (everywhere but traced launches, which step
    /// every instruction for the trace), the interpreter elsewhere.
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
    /// `code(regs, active)`: `regs` is the warp's register file, `regs[r][lane]` at
    /// `r * 32 + lane`; `active` the lanes that run (each instruction's guard applies within).
    code: unsafe extern "C" fn(*mut u64, u32),
}

/// A module's compiled regions, by the PC each starts at.
pub(crate) struct Tier {
    starts: Vec<Option<Region>>,
    /// Owns the regions' code; `None` only while it is dropped.
    jit: Option<cranelift_jit::JITModule>,
}

// SAFETY: after `finalize_definitions` the JIT module is never used again but to free its
// memory when the tier is dropped (which needs the tier owned, so no region runs then); the
// regions' code is immutable machine code that any thread may call.
unsafe impl Send for Tier {}
// SAFETY: as for `Send`: shared access only reads `starts` and calls finished code.
unsafe impl Sync for Tier {}

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
    pub(crate) fn get(&self, code: &[Instr], function_starts: &[u32]) -> Option<&Tier> {
        self.0
            .get_or_init(|| translate::compile(code, function_starts).ok().map(Arc::new))
            .as_deref()
    }
}

/// The tier a launch runs with: none for [`Engine::Interp`] and for traced launches (a trace
/// records every step's instruction, which only the interpreter takes one at a time).
pub(crate) fn for_launch<'m>(
    module: &'m crate::module::Module,
    engine: Engine,
    traced: bool,
) -> Option<&'m Tier> {
    if engine == Engine::Interp || traced {
        return None;
    }
    let starts: Vec<u32> = module.funcs.iter().map(|f| f.start).collect();
    module.tier.get(&module.code, &starts)
}

/// What a step changes besides the warp: the launch's (or worker's) counters.
pub(crate) struct Counters<'c> {
    pub(crate) thread_instrs: &'c mut u64,
    pub(crate) clock: &'c mut u64,
}

/// One step of warp `w` through the compiled `tier`, if it can take one: it owes steps of a
/// region it ran, or a region starts at its PC that fits in `region_rounds` steps (see
/// `Ctx::region_rounds`) and the warp is converged with nothing that could change its lanes
/// meanwhile (no lane blocked, none favoured, no lane splitter). Returns false when the
/// interpreter must run the instruction.
#[inline]
pub(crate) fn step(
    tier: Option<&Tier>,
    region_rounds: u32,
    counters: Counters,
    w: &mut Warp,
) -> bool {
    if w.compiled_debt > 0 {
        pay(counters, w);
        return true;
    }
    let Some(tier) = tier else {
        return false;
    };
    if region_rounds == 0
        || w.blocked != 0
        || w.active != w.live
        || w.favored.is_some()
        || w.lanes.is_some()
    {
        return false;
    }
    let Some(region) = tier.region_at(w.pc) else {
        return false;
    };
    if region.len > region_rounds {
        return false;
    }
    // Every register a region names is below the module's count, which is the file's length.
    debug_assert!(!w.regs.is_empty());
    // SAFETY: `regs` is the warp's register file, `[u64; 32]` rows laid out one after another,
    // and the region reads and writes only rows of registers its instructions name, each below
    // the module's register count (the length of every warp's file); nothing else holds it.
    unsafe { (region.code)(w.regs.as_mut_ptr().cast::<u64>(), w.active) };
    w.compiled_debt = region.len;
    #[cfg(test)]
    REGIONS_RUN.with(|r| r.set(r.get() + 1));
    pay(counters, w);
    true
}

#[cfg(test)]
thread_local! {
    /// Regions run on this thread: the differential tests check that they compared something.
    pub(crate) static REGIONS_RUN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// What the interpreter's step of one register-only instruction does besides the registers:
/// the clock, the count, the PC (the warp is converged, so no regrouping).
#[inline]
fn pay(counters: Counters, w: &mut Warp) {
    w.compiled_debt -= 1;
    *counters.thread_instrs += w.active.count_ones() as u64;
    *counters.clock += 1;
    w.pc += 1;
}
