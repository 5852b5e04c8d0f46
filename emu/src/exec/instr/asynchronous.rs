//! Asynchronous copies (`cp.async`) and barriers (`mbarrier`).
//!
//! A `cp.async` reads its global source when it is issued and writes its shared destination
//! only when its thread waits for the copy's group (or arrives on a barrier for it, or ends):
//! the write is that thread's, race-checked then, so a thread that reads the destination
//! without the issuer's wait and a barrier after it races with the copy, as on a GPU. Until
//! then the copy is in flight (`Ctx::copies_in_flight`, under racecheck): any access to its
//! bytes, the issuing thread's own included, races with it.
//!
//! An `mbarrier` object keeps its state in its own 8 bytes of shared memory (see
//! [`MbarState`]). Each arrival releases what its thread did into the phase it completes, and a
//! wait that sees the phase complete acquires exactly that phase's arrivals: a later phase's
//! arrivals order nothing for it.

use crate::exec::ctx::{Ctx, Tgt};
use crate::exec::memory::tgt_offset;
use crate::exec::warp::CopyInFlight;
use crate::exec::warp::{AsyncCopy, Warp};
use crate::ir::*;
use crate::race;
use crate::report::AccessOp;

/// The fields of a barrier object's 8 bytes: pending arrivals (bits 0-19), expected
/// arrivals (20-39), pending transaction bytes (40-61, two's complement), initialized (62)
/// and the current phase's parity (63). The layout is the emulator's own; programs only hand
/// the word to `mbarrier` instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MbarState {
    pending: u32,
    expected: u32,
    tx: i32,
    valid: bool,
    parity: bool,
}

const COUNT_MASK: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 22;

impl MbarState {
    fn decode(word: u64) -> MbarState {
        let tx = ((word >> 40) & ((1 << TX_BITS) - 1)) as u32;
        MbarState {
            pending: (word & COUNT_MASK) as u32,
            expected: ((word >> 20) & COUNT_MASK) as u32,
            tx: ((tx << (32 - TX_BITS)) as i32) >> (32 - TX_BITS),
            valid: word >> 62 & 1 != 0,
            parity: word >> 63 != 0,
        }
    }

    fn encode(self) -> u64 {
        u64::from(self.pending) & COUNT_MASK
            | (u64::from(self.expected) & COUNT_MASK) << 20
            | (u64::from(self.tx as u32) & ((1 << TX_BITS) - 1)) << 40
            | u64::from(self.valid) << 62
            | u64::from(self.parity) << 63
    }

    /// The phase completes once every arrival and every expected byte came: the next one
    /// begins, expecting its arrivals afresh.
    fn complete_if_done(&mut self) -> bool {
        if self.pending == 0 && self.tx == 0 {
            self.parity = !self.parity;
            self.pending = self.expected;
            true
        } else {
            false
        }
    }
}

/// The race checker's synchronization word for the phases of parity `parity` of the barrier
/// whose first word is `word`: beside every real word, so that arrivals of one phase never
/// publish to waiters of the next.
fn phase_word(word: u64, parity: bool) -> u64 {
    word | 1 << 40 | u64::from(parity) << 41
}

const BARRIER_SEM: race::Sem = race::Sem {
    scope: Scope::Cta,
    atomic: true,
    sync: true,
    silent: false,
};

/// Runs one asynchronous-copy or `mbarrier` instruction.
pub(crate) fn run(ctx: &mut Ctx, w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    let pc = w.pc;
    match &ins.op {
        Op::CpAsync {
            dst,
            src,
            size,
            src_size,
            ignore_src,
        } => {
            let size = *size;
            lanes!(exec, l, {
                let ignored =
                    ignore_src.is_some_and(|(p, neg)| (w.regs[p as usize][l] & 1 != 0) != neg);
                let from_src = match src_size {
                    _ if ignored => 0,
                    Some(n) => (ctx.get(w, *n, l) as u32).min(size),
                    None => size,
                };
                let mut bytes = [0u8; 16];
                if from_src > 0 {
                    let a = ctx.addr(w, src, l);
                    let tgt =
                        ctx.resolve(w, l, Space::Global, a, from_src, size, pc, AccessOp::Read);
                    ctx.race_check(w, l, tgt, from_src, race::Kind::Read, race::Sem::PLAIN, pc);
                    ctx.init_read(w, l, tgt, from_src, pc, AccessOp::Read);
                    for (i, b) in bytes.iter_mut().enumerate().take(from_src as usize) {
                        *b = ctx.read_tgt(tgt_offset(tgt, i), 1, w.slot) as u8;
                    }
                }
                let a = ctx.addr(w, dst, l);
                let tgt = ctx.resolve(w, l, Space::Shared, a, size, size, pc, AccessOp::Write);
                if ctx.race.is_some()
                    && let Tgt::S(offset) = tgt
                {
                    let tid = ctx.gid(w, l);
                    ctx.copies_in_flight.push(CopyInFlight {
                        slot: w.slot,
                        offset,
                        size,
                        tid,
                        pc,
                    });
                }
                w.async_copies.push(AsyncCopy {
                    lane: l as u8,
                    group: w.copy_groups[l],
                    dst: match tgt {
                        Tgt::S(offset) => Some(offset),
                        _ => None,
                    },
                    bytes,
                    size: size as u8,
                    pc,
                });
            });
        }
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbar,
        } => {
            lanes!(exec, l, {
                let size = ctx.get(w, *size, l) as u32;
                let (from, to) = (ctx.addr(w, src, l), ctx.addr(w, dst, l));
                let read = ctx.resolve(w, l, Space::Global, from, size, 16, pc, AccessOp::Read);
                let write = ctx.resolve(w, l, Space::Shared, to, size, 16, pc, AccessOp::Write);
                if !matches!(read, Tgt::Bad) && !matches!(write, Tgt::Bad) {
                    ctx.race_check(w, l, read, size, race::Kind::Read, race::Sem::PLAIN, pc);
                    ctx.init_read(w, l, read, size, pc, AccessOp::Read);
                    ctx.race_check(w, l, write, size, race::Kind::Write, race::Sem::PLAIN, pc);
                    for i in 0..size as usize {
                        let b = ctx.read_tgt(tgt_offset(read, i), 1, w.slot);
                        ctx.write_tgt(tgt_offset(write, i), 1, w.slot, b);
                    }
                    ctx.init_write(w, write, size);
                    ctx.progress += 1;
                }
                arrive(ctx, w, l, mbar, Space::Shared, 0, false, -(size as i32), pc);
            });
        }
        Op::CpAsyncCommit => {
            lanes!(exec, l, {
                w.copy_groups[l] = w.copy_groups[l].wrapping_add(1);
            });
        }
        Op::CpAsyncWait { keep, all } => {
            lanes!(exec, l, {
                if *all {
                    w.copy_groups[l] = w.copy_groups[l].wrapping_add(1);
                }
                let before = w.copy_groups[l].saturating_sub(*keep);
                land_copies(ctx, w, 1 << l, before);
            });
        }
        Op::CpAsyncArrive { addr, space, noinc } => {
            lanes!(exec, l, {
                land_copies(ctx, w, 1 << l, u32::MAX);
                let count = u32::from(*noinc);
                arrive(ctx, w, l, addr, *space, count, false, 0, pc);
            });
        }
        Op::Mbarrier {
            op,
            space,
            addr,
            d,
            a,
        } => {
            lanes!(exec, l, {
                let operand = ctx.get(w, *a, l);
                let result = match *op {
                    MbarOp::Init => {
                        let count = operand as u32;
                        let state = MbarState {
                            pending: count,
                            expected: count,
                            tx: 0,
                            valid: true,
                            parity: false,
                        };
                        store_plain(ctx, w, l, addr, *space, state.encode(), pc);
                        None
                    }
                    MbarOp::Inval => {
                        store_inval(ctx, w, l, addr, *space, pc);
                        None
                    }
                    MbarOp::Arrive { drop, tx } => {
                        let (count, bytes) = if tx {
                            (1, operand as i32)
                        } else {
                            (operand as u32, 0)
                        };
                        Some(arrive(ctx, w, l, addr, *space, count, drop, bytes, pc))
                    }
                    MbarOp::ExpectTx | MbarOp::CompleteTx => {
                        let bytes = operand as i32;
                        let change = if *op == MbarOp::ExpectTx {
                            bytes
                        } else {
                            -bytes
                        };
                        arrive(ctx, w, l, addr, *space, 0, false, change, pc);
                        None
                    }
                    MbarOp::TestWait { parity } => {
                        let waited = if parity {
                            operand & 1 != 0
                        } else {
                            operand >> 63 != 0
                        };
                        Some(u64::from(test_wait(ctx, w, l, addr, *space, waited, pc)))
                    }
                };
                if let (Some(d), Some(v)) = (d, result) {
                    w.regs[*d as usize][l] = v;
                }
            });
        }
        Op::MbarPendingCount { d, state } => {
            lanes!(exec, l, {
                let s = MbarState::decode(ctx.get(w, *state, l));
                w.regs[*d as usize][l] = u64::from(s.pending);
            });
        }
        _ => unreachable!("instr::exec sends only asynchronous instructions here"),
    }
    w.advance();
    None
}

/// Lands the copies of `lanes` whose group is below `before`: their writes, race-checked as
/// their threads' writes now.
pub(crate) fn land_copies(ctx: &mut Ctx, w: &mut Warp, lanes: u32, before: u32) {
    if w.async_copies.is_empty() {
        return;
    }
    let copies = std::mem::take(&mut w.async_copies);
    let mut kept = Vec::with_capacity(copies.len());
    for copy in copies {
        let l = copy.lane as usize;
        if lanes & (1 << l) == 0 || copy.group >= before {
            kept.push(copy);
            continue;
        }
        let Some(offset) = copy.dst else {
            continue;
        };
        if !ctx.copies_in_flight.is_empty() {
            let landed = CopyInFlight {
                slot: w.slot,
                offset,
                size: u32::from(copy.size),
                tid: ctx.gid(w, l),
                pc: copy.pc,
            };
            if let Some(i) = ctx.copies_in_flight.iter().position(|c| *c == landed) {
                ctx.copies_in_flight.swap_remove(i);
            }
        }
        let (dst, size) = (Tgt::S(offset), u32::from(copy.size));
        let (write, plain) = (race::Kind::Write, race::Sem::PLAIN);
        ctx.race_check(w, l, dst, size, write, plain, copy.pc);
        for (i, b) in copy.bytes.iter().enumerate().take(size as usize) {
            ctx.write_tgt(tgt_offset(dst, i), 1, w.slot, u64::from(*b));
        }
        ctx.init_write(w, dst, size);
        ctx.progress += 1;
    }
    w.async_copies = kept;
}

/// The barrier object at `addr` for lane `l`, resolved (memcheck's findings included).
#[allow(clippy::too_many_arguments)]
fn barrier_at(
    ctx: &mut Ctx,
    w: &Warp,
    l: usize,
    addr: &Addr,
    space: Space,
    pc: u32,
    op: AccessOp,
) -> Tgt {
    let a = ctx.addr(w, addr, l);
    ctx.resolve(w, l, space, a, 8, 8, pc, op)
}

/// `init`: a plain write of the object, which a later arrival or wait must be ordered after (a
/// `__syncthreads()` between, as CUDA's examples have it).
fn store_plain(ctx: &mut Ctx, w: &Warp, l: usize, addr: &Addr, space: Space, word: u64, pc: u32) {
    let tgt = barrier_at(ctx, w, l, addr, space, pc, AccessOp::Write);
    if matches!(tgt, Tgt::Bad) {
        return;
    }
    ctx.race_check(w, l, tgt, 8, race::Kind::Write, race::Sem::PLAIN, pc);
    ctx.write_tgt(tgt, 8, w.slot, word);
    ctx.init_write(w, tgt, 8);
    ctx.progress += 1;
}

/// `inval`: not race-checked. CUDA's pipelines invalidate their barriers once the last thread
/// leaves (ordered by an atomic count), and a `__shared__ cuda::barrier`'s destructor runs in
/// every thread of the block, each invalidating the same object: neither is a race a program
/// could fix.
fn store_inval(ctx: &mut Ctx, w: &Warp, l: usize, addr: &Addr, space: Space, pc: u32) {
    let tgt = barrier_at(ctx, w, l, addr, space, pc, AccessOp::AtomicWrite);
    if matches!(tgt, Tgt::Bad) {
        return;
    }
    ctx.write_tgt(tgt, 8, w.slot, 0);
    ctx.progress += 1;
}

/// `count` arrivals (and `tx` more expected bytes, negative for bytes that came) on the
/// barrier at `addr`, releasing what the thread did into the current phase; returns the state
/// before it (the phase the arrival belongs to).
#[allow(clippy::too_many_arguments)]
fn arrive(
    ctx: &mut Ctx,
    w: &Warp,
    l: usize,
    addr: &Addr,
    space: Space,
    count: u32,
    drop: bool,
    tx: i32,
    pc: u32,
) -> u64 {
    let tgt = barrier_at(ctx, w, l, addr, space, pc, AccessOp::Atomic);
    if matches!(tgt, Tgt::Bad) {
        return 0;
    }
    ctx.init_read(w, l, tgt, 8, pc, AccessOp::Atomic);
    ctx.race_check(w, l, tgt, 8, race::Kind::Rmw, BARRIER_SEM, pc);
    let before = ctx.read_tgt(tgt, 8, w.slot);
    let mut state = MbarState::decode(before);
    let phase = state.parity;
    state.tx = state.tx.wrapping_add(tx);
    state.pending = state.pending.saturating_sub(count);
    if drop {
        state.expected = state.expected.saturating_sub(count);
    }
    if count > 0 || tx != 0 {
        state.complete_if_done();
    }
    ctx.write_tgt(tgt, 8, w.slot, state.encode());
    ctx.progress += 1;
    // What the thread did is released to the phase by its arrivals, and by the bytes its bulk
    // copies complete (those copies' writes are its own).
    if (count > 0 || tx < 0)
        && let Some((region, word)) = ctx.sync_region(tgt, w)
    {
        let who = ctx.who(w, l);
        let word = phase_word(word, phase);
        if let Some(r) = ctx.race.as_mut() {
            let never = race::Acquire::Never;
            r.sync_op(
                region,
                word,
                &who,
                race::Kind::Rmw,
                never,
                true,
                Scope::Cta,
                pc,
            );
        }
    }
    before
}

/// Whether the phase of parity `waited` of the barrier at `addr` completed; if so the thread
/// acquires what that phase's arrivals released.
fn test_wait(
    ctx: &mut Ctx,
    w: &Warp,
    l: usize,
    addr: &Addr,
    space: Space,
    waited: bool,
    pc: u32,
) -> bool {
    let tgt = barrier_at(ctx, w, l, addr, space, pc, AccessOp::AtomicRead);
    if matches!(tgt, Tgt::Bad) {
        return false;
    }
    ctx.init_read(w, l, tgt, 8, pc, AccessOp::AtomicRead);
    ctx.race_check(w, l, tgt, 8, race::Kind::StrongRead, BARRIER_SEM, pc);
    let state = MbarState::decode(ctx.read_tgt(tgt, 8, w.slot));
    let done = state.parity != waited;
    if done && let Some((region, word)) = ctx.sync_region(tgt, w) {
        let who = ctx.who(w, l);
        let word = phase_word(word, waited);
        if let Some(r) = ctx.race.as_mut() {
            let now = race::Acquire::Now;
            r.sync_op(
                region,
                word,
                &who,
                race::Kind::StrongRead,
                now,
                false,
                Scope::Cta,
                pc,
            );
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_word_keeps_every_field() {
        let state = MbarState {
            pending: 3,
            expected: (1 << 20) - 1,
            tx: -5,
            valid: true,
            parity: true,
        };
        assert_eq!(MbarState::decode(state.encode()), state);
    }
}
