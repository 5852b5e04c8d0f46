//! Special registers (`%tid`, `%ctaid`, `%laneid`, `%clock`, ...) as each lane reads them, and
//! `activemask`.

use crate::exec::ctx::{Ctx, split3, split3_64};
use crate::exec::warp::Warp;
use crate::ir::*;

impl Ctx<'_> {
    #[inline(always)]
    pub(crate) fn sreg(&self, w: &Warp, s: Sreg, lane: usize) -> u64 {
        let t = w.first + lane as u32;
        match s {
            Sreg::Tid(0) if self.block[1] == 1 && self.block[2] == 1 => t as u64,
            Sreg::Ctaid(0) if self.grid[1] == 1 && self.grid[2] == 1 => w.block,
            Sreg::Tid(d) => split3(t, self.block)[d as usize] as u64,
            Sreg::Ntid(d) => self.block[d as usize] as u64,
            Sreg::Ctaid(d) => split3_64(w.block, self.grid)[d as usize] as u64,
            Sreg::Nctaid(d) => self.grid[d as usize] as u64,
            Sreg::LaneId => lane as u64,
            Sreg::WarpId => (w.first / 32) as u64,
            Sreg::NWarpId => self.wpb as u64,
            Sreg::Clock => self.clock & 0xffff_ffff,
            Sreg::Clock64 => self.clock,
            Sreg::ClockHi => self.clock >> 32,
            Sreg::LaneMaskEq => 1u64 << lane,
            Sreg::LaneMaskLt => (1u64 << lane) - 1,
            Sreg::LaneMaskLe => (2u64 << lane) - 1,
            Sreg::LaneMaskGt => !((2u64 << lane) - 1) & 0xffff_ffff,
            Sreg::LaneMaskGe => !((1u64 << lane) - 1) & 0xffff_ffff,
            Sreg::DynSmem => self.dyn_size as u64,
            Sreg::TotalSmem => self.shared_size as u64,
            Sreg::DynSmemBase => self.dyn_base as u64,
            Sreg::ReservedSmem(offset) => u64::from(self.reserved_base) + u64::from(offset),
            Sreg::EnvRegHi => self.opts.grid_workspace.map_or(0, |a| a >> 32),
            Sreg::EnvRegLo => self.opts.grid_workspace.map_or(0, |a| a & 0xffff_ffff),
            Sreg::Zero => 0,
        }
    }
}

/// Runs `activemask`: the lanes of `exec` get the mask of the warp's active lanes.
#[inline(always)]
pub(crate) fn run(w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    let active = w.active;
    match &ins.op {
        Op::Activemask { d } => {
            let d = *d as usize;
            lanes!(exec, l, {
                w.regs[d][l] = active as u64;
            });
        }
        _ => unreachable!("instr::exec sends only special instructions here"),
    }
    w.advance();
    None
}
