//! A warp's steps through the compiled tier (`crate::compiled`): a region runs at once when a
//! converged warp reaches its start, and the warp then owes the region's steps
//! ([`Warp::compiled_debt`]); each of its later steps only pays one (the clock, the
//! thread-instruction count, the PC), exactly as the interpreter's step of that instruction
//! would. Registers are the only state a region changes, and no one but the warp itself reads
//! them while it owes steps, except the watchdog, whose looks the loops that step warps keep
//! out of a region: they say through [`Ctx::region_rounds`] how many steps may pass before
//! anyone looks.

use super::ctx::Ctx;
use super::warp::Warp;

/// One step of warp `w` through the compiled tier, if it can take one: it owes steps of a
/// region it ran, or a region starts at its PC that fits in `ctx.region_rounds` steps and the
/// warp is converged with nothing that could change its lanes meanwhile (no lane blocked, none
/// favoured, no lane splitter). Returns false when the interpreter must run the instruction.
#[inline]
pub(crate) fn step(ctx: &mut Ctx, w: &mut Warp) -> bool {
    if w.compiled_debt > 0 {
        pay(ctx, w);
        return true;
    }
    let Some(tier) = ctx.compiled else {
        return false;
    };
    if ctx.region_rounds == 0
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
    if region.len > ctx.region_rounds {
        return false;
    }
    region.run(&mut w.regs, w.active);
    w.compiled_debt = region.len;
    #[cfg(test)]
    REGIONS_RUN.with(|r| r.set(r.get() + 1));
    pay(ctx, w);
    true
}

/// What the interpreter's step of one register-only instruction does besides the registers:
/// the clock, the count, the PC (the warp is converged, so no regrouping).
#[inline]
fn pay(ctx: &mut Ctx, w: &mut Warp) {
    w.compiled_debt -= 1;
    ctx.thread_instrs += w.active.count_ones() as u64;
    ctx.clock += 1;
    w.pc += 1;
}

#[cfg(test)]
thread_local! {
    /// Regions run on this thread: the differential tests check that they compared something.
    pub(crate) static REGIONS_RUN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
