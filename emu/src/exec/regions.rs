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

/// Under the hardware schedule, whose steps run a warp's register-only instructions together
/// (`block::step`): runs the region at the warp's PC at once, when one starts there, fits in
/// the `room` instructions left of the step, and no other lanes of the warp could join the
/// active ones within it (every runnable lane is active, none favoured, no lane splitter), and
/// it would not run past [`Ctx::steps_end_at`]. Returns the instructions it ran (0: the interpreter runs the next one). No one else sees
/// the warp's registers before the step ends, so it owes nothing afterwards.
#[inline]
pub(crate) fn run_in_step(ctx: &mut Ctx, w: &mut Warp, room: u32) -> u32 {
    let Some(tier) = ctx.compiled else {
        return 0;
    };
    if w.active != w.runnable() || w.favored.is_some() || w.lanes.is_some() {
        return 0;
    }
    let Some(region) = tier.region_at(w.pc) else {
        return 0;
    };
    let len = region.len;
    // A step ends at the instruction that reaches `steps_end_at`: the region may end there, not
    // run past it.
    let lanes = w.active.count_ones() as u64;
    if len > room || ctx.thread_instrs + lanes * (len.saturating_sub(1) as u64) >= ctx.steps_end_at
    {
        return 0;
    }
    region.run(&mut w.regs, w.active);
    ctx.thread_instrs += w.active.count_ones() as u64 * len as u64;
    ctx.clock += len as u64;
    w.pc += len;
    #[cfg(test)]
    REGIONS_RUN.with(|r| r.set(r.get() + 1));
    len
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
