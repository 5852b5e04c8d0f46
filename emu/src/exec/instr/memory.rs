//! `ld` and `st`: loads and stores to every state space (`.param` included), each lane's access
//! passing through the memory checker, racecheck, initcheck and the bank-conflict tally.

use super::atomic::sync_after;
use crate::exec::ctx::{Ctx, Tgt, rd_le, wr_le};
use crate::exec::memory::tgt_offset;
use crate::exec::warp::Warp;
use crate::ir::*;
use crate::report::AccessOp;
use crate::trace::TraceOp;
use crate::{alu, race};

/// Runs one `ld` or `st`.
#[inline(always)]
pub(crate) fn run(ctx: &mut Ctx, w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    let (pc, m) = (w.pc, ctx.m);
    match &ins.op {
        Op::Ld {
            space,
            ty,
            ds,
            addr,
            strong,
            scope,
            dbits,
        } => {
            let esize = ty.bytes();
            let total = esize * ds.len() as u32;
            let kind = if strong.is_strong() {
                race::Kind::StrongRead
            } else {
                race::Kind::Read
            };
            let op = if strong.is_strong() {
                AccessOp::AtomicRead
            } else {
                AccessOp::Read
            };
            let acquire = if *strong == Strength::Acquire {
                race::Acquire::Now
            } else {
                race::Acquire::AtNextFence
            };
            let sem = if strong.is_strong() {
                race::Sem {
                    scope: *scope,
                    atomic: false,
                    sync: *strong == Strength::Acquire
                        || m.polls.get(pc as usize).copied().unwrap_or(false),
                    silent: false,
                }
            } else {
                race::Sem::PLAIN
            };
            if ctx.banks.is_some() {
                ctx.count_banks(w, exec, *space, addr, total, pc, false);
            }
            // A plain read that only seeds a CAS loop is not checked (see `cas_seed.rs`).
            let race_checked = !m.cas_seed.get(pc as usize).copied().unwrap_or(false);
            if let [Some(dreg)] = ds.as_slice()
                && *space != Space::Param
            {
                let dreg = *dreg as usize;
                let sign_extend = ty.signed() && *dbits > ty.bits();
                // Read once: `ctx` changes inside the loop, so the compiler could not hoist it.
                let tracing = ctx.trace.is_some();
                lanes!(exec, l, {
                    let a = ctx.addr(w, addr, l);
                    let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                    if race_checked {
                        ctx.race_check(w, l, tgt, total, kind, sem, pc);
                    }
                    ctx.init_read(w, l, tgt, total, pc, op);
                    if strong.is_strong() {
                        sync_after(ctx, w, l, tgt, kind, acquire, false, *scope, pc);
                    }
                    let raw = ctx.read_tgt(tgt, esize as usize, w.slot);
                    if tracing {
                        let strong = strong.is_strong();
                        ctx.trace_access(w, l, tgt, *ty, (raw, None), TraceOp::Read, strong, None);
                    }
                    w.regs[dreg][l] = if sign_extend {
                        alu::mask(alu::sext(raw, ty.bits()) as u64, *dbits)
                    } else {
                        raw
                    };
                });
                w.advance();
                return None;
            }
            let tracing = ctx.trace.is_some();
            lanes!(exec, l, {
                let vals: [u64; 4] = match (space, addr) {
                    (Space::Param, Addr::KParam(o)) => {
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            *x = rd_le(
                                &ctx.kparams,
                                *o as usize + i * esize as usize,
                                esize as usize,
                            );
                        }
                        v
                    }
                    (Space::Param, Addr::Reg { .. }) => {
                        // A kernel parameter's address (see `check_space_addr`): past the
                        // buffer's end, reads give 0.
                        let base = ctx.addr(w, addr, l) as usize;
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            let at = base.saturating_add(i * esize as usize);
                            *x = rd_le(&ctx.kparams, at, esize as usize);
                        }
                        v
                    }
                    (Space::Param, Addr::TParam(o)) => {
                        let base = l * m.tparam_size as usize + *o as usize;
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            *x = rd_le(&w.tparam, base + i * esize as usize, esize as usize);
                        }
                        v
                    }
                    _ => {
                        let a = ctx.addr(w, addr, l);
                        let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                        ctx.race_check(w, l, tgt, total, kind, sem, pc);
                        ctx.init_read(w, l, tgt, total, pc, op);
                        if strong.is_strong() {
                            sync_after(ctx, w, l, tgt, kind, acquire, false, *scope, pc);
                        }
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            let at = tgt_offset(tgt, i * esize as usize);
                            *x = ctx.read_tgt(at, esize as usize, w.slot);
                            if tracing {
                                let strong = strong.is_strong();
                                ctx.trace_access(
                                    w,
                                    l,
                                    at,
                                    *ty,
                                    (*x, None),
                                    TraceOp::Read,
                                    strong,
                                    None,
                                );
                            }
                        }
                        v
                    }
                };
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        let raw = vals[i];
                        let v = if ty.signed() && *dbits > ty.bits() {
                            alu::mask(alu::sext(raw, ty.bits()) as u64, *dbits)
                        } else {
                            raw
                        };
                        w.regs[*d as usize][l] = v;
                    }
                }
            });
        }
        Op::St {
            space,
            ty,
            vals,
            addr,
            strong,
            scope,
        } => {
            let esize = ty.bytes();
            let total = esize * vals.len() as u32;
            let kind = if strong.is_strong() {
                race::Kind::StrongWrite
            } else {
                race::Kind::Write
            };
            let op = if strong.is_strong() {
                AccessOp::AtomicWrite
            } else {
                AccessOp::Write
            };
            let release = *strong == Strength::Release;
            if ctx.banks.is_some() {
                ctx.count_banks(w, exec, *space, addr, total, pc, true);
            }
            let tracing = ctx.trace.is_some();
            // Lanes of this one store that write the same value to the same place: the hardware
            // lands one of them, which is that value either way (every lane of a warp storing a
            // warp-reduced result, as cooperative groups do), so only the first is race-checked.
            let mut stored = LaneStores {
                stores: std::mem::take(&mut ctx.lane_stores),
                ascending: true,
            };
            stored.stores.clear();
            lanes!(exec, l, {
                match (space, addr) {
                    (Space::Param, Addr::TParam(o)) => {
                        let base = l * m.tparam_size as usize + *o as usize;
                        for (i, v) in vals.iter().enumerate() {
                            let x = ctx.get_ref(w, v, l);
                            wr_le(&mut w.tparam, base + i * esize as usize, esize as usize, x);
                        }
                    }
                    (Space::Param, _) => {}
                    _ => {
                        let a = ctx.addr(w, addr, l);
                        let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                        let mut values = [0u64; 4];
                        for (slot, v) in values.iter_mut().zip(vals.iter()) {
                            *slot = alu::mask(ctx.get_ref(w, v, l), esize * 8);
                        }
                        if stored.first_of(tgt, &values) {
                            let sem = if strong.is_strong() {
                                let silent =
                                    values.iter().take(vals.len()).enumerate().all(|(i, v)| {
                                        let at = tgt_offset(tgt, i * esize as usize);
                                        ctx.read_tgt(at, esize as usize, w.slot) == *v
                                    });
                                race::Sem {
                                    scope: *scope,
                                    atomic: false,
                                    sync: release,
                                    silent,
                                }
                            } else if ctx.race.is_some() {
                                // A plain store of the value the word holds: the detector
                                // does not count it as a write-write race with the store that
                                // put that value there (`Race::same_value_stores`).
                                let silent =
                                    values.iter().take(vals.len()).enumerate().all(|(i, v)| {
                                        let at = tgt_offset(tgt, i * esize as usize);
                                        ctx.read_tgt(at, esize as usize, w.slot) == *v
                                    });
                                race::Sem {
                                    silent,
                                    ..race::Sem::PLAIN
                                }
                            } else {
                                race::Sem::PLAIN
                            };
                            ctx.race_check(w, l, tgt, total, kind, sem, pc);
                        }
                        for (i, v) in vals.iter().enumerate() {
                            let x = ctx.get_ref(w, v, l);
                            let at = tgt_offset(tgt, i * esize as usize);
                            if ctx.read_tgt(at, esize as usize, w.slot) != alu::mask(x, esize * 8) {
                                ctx.progress += 1;
                            }
                            ctx.write_tgt(at, esize as usize, w.slot, x);
                            if tracing {
                                let strong = strong.is_strong();
                                ctx.trace_access(
                                    w,
                                    l,
                                    at,
                                    *ty,
                                    (x, None),
                                    TraceOp::Write,
                                    strong,
                                    None,
                                );
                            }
                        }
                        ctx.init_write(w, tgt, total);
                        if strong.is_strong() {
                            let never = race::Acquire::Never;
                            sync_after(ctx, w, l, tgt, kind, never, release, *scope, pc);
                        }
                    }
                }
            });
            ctx.lane_stores = stored.stores;
        }
        _ => unreachable!("instr::exec sends only memory instructions here"),
    }
    w.advance();
    None
}

/// The (place, values) pairs one warp's store has written so far, to tell a lane that repeats an
/// earlier lane's store. Coalesced stores go to ascending places, which rules a repeat out without
/// a search; only a store that goes backwards searches the lanes before it. The list is
/// [`Ctx::lane_stores`], lent for the instruction so that no store allocates.
struct LaneStores {
    stores: Vec<(Tgt, [u64; 4])>,
    ascending: bool,
}

impl LaneStores {
    /// Records the store and says whether it is the first of its (place, values); false for a
    /// lane that stores what an earlier lane of this warp stored to the same place. Inlined, so
    /// that the values reach the list from registers: passed in memory, they were read back
    /// wider than the store loop had written them.
    #[inline(always)]
    fn first_of(&mut self, tgt: Tgt, values: &[u64; 4]) -> bool {
        let after_all = self.stores.last().is_none_or(|(last, _)| *last < tgt);
        if !(self.ascending && after_all) {
            if self.stores.iter().any(|(t, v)| *t == tgt && v == values) {
                return false;
            }
            self.ascending &= after_all;
        }
        let [a, b, c, d] = *values;
        crate::push::push_in_place(&mut self.stores, (tgt, [a, b, c, d]));
        true
    }
}
