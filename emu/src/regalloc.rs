//! Register slots shared by registers that are never live at once. NVRTC names a fresh virtual
//! register for nearly every value, and every register costs 32 lanes × 8 bytes per warp, so a
//! kernel of 77 registers keeps 10 MB of register rows for 16 resident blocks; sharing slots by
//! liveness shrinks what a launch touches until it stays in cache. A pure renaming: every thread
//! reads the value it last wrote, as before.
//!
//! Per function: liveness by backward dataflow over the instructions, then registers coloured
//! greedily, in order of first appearance, against an interference that is deliberately wide —
//! an instruction's defs interfere with what is live after it, with each other and with its own
//! operands (so no instruction, even one that reads other lanes or writes several registers
//! lane by lane, ever reads a slot it has begun to overwrite). A guarded def keeps the old value
//! in lanes whose guard is false, so it is a use as well. Runs after the analyses that follow
//! registers through the code (`cas_seed`, `poll`), which keep their results by instruction.

use crate::ir::{Addr, Op, Opnd};
use crate::module::{Module, SINK};

/// Functions with more registers than this keep their numbering: the interference matrix
/// would cost more than the slots save.
const MAX_REGISTERS: usize = 8192;
/// The most bits one liveness table (one set per instruction) may take: 32 MiB.
const MAX_LIVENESS_BITS: usize = 1 << 28;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Use,
    Def,
}

fn opnd(o: &mut Opnd, f: &mut impl FnMut(&mut u32, Role)) {
    if let Opnd::Reg(r) = o {
        f(r, Role::Use);
    }
}

fn addr(a: &mut Addr, f: &mut impl FnMut(&mut u32, Role)) {
    if let Addr::Reg { base, .. } = a {
        opnd(base, f);
    }
}

/// Calls `f` on every register an operation reads or writes, with its role.
pub(crate) fn for_each_register(op: &mut Op, f: &mut impl FnMut(&mut u32, Role)) {
    match op {
        Op::Mov { d, a, .. }
        | Op::Un { d, a, .. }
        | Op::Cvt { d, a, .. }
        | Op::Cvta { d, a, .. }
        | Op::TestP { d, a, .. } => {
            opnd(a, f);
            f(d, Role::Def);
        }
        Op::Unpack { ds, a, .. } => {
            opnd(a, f);
            for d in ds.iter_mut().flatten() {
                f(d, Role::Def);
            }
        }
        Op::Pack { d, parts, .. } => {
            for p in parts.iter_mut() {
                opnd(p, f);
            }
            f(d, Role::Def);
        }
        Op::Bin { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            opnd(a, f);
            opnd(b, f);
            f(d, Role::Def);
        }
        Op::Mad { d, a, b, c, .. }
        | Op::Selp { d, a, b, c, .. }
        | Op::Slct { d, a, b, c, .. }
        | Op::Bfe { d, a, b, c, .. }
        | Op::Prmt { d, a, b, c, .. }
        | Op::Int3 { d, a, b, c, .. }
        | Op::Half2 { d, a, b, c, .. } => {
            opnd(a, f);
            opnd(b, f);
            opnd(c, f);
            f(d, Role::Def);
        }
        Op::Setp {
            d, d2, a, b, comb, ..
        } => {
            opnd(a, f);
            opnd(b, f);
            if let Some((_, p, _)) = comb {
                opnd(p, f);
            }
            f(d, Role::Def);
            if let Some(d2) = d2 {
                f(d2, Role::Def);
            }
        }
        Op::Bfi {
            d, f: x, b, c, e, ..
        } => {
            opnd(x, f);
            opnd(b, f);
            opnd(c, f);
            opnd(e, f);
            f(d, Role::Def);
        }
        Op::Ld { ds, addr: a, .. } => {
            addr(a, f);
            for d in ds.iter_mut().flatten() {
                f(d, Role::Def);
            }
        }
        Op::St { vals, addr: a, .. } => {
            addr(a, f);
            for v in vals.iter_mut() {
                opnd(v, f);
            }
        }
        Op::Atom {
            d, addr: a, b, c, ..
        } => {
            addr(a, f);
            opnd(b, f);
            opnd(c, f);
            if let Some(d) = d {
                f(d, Role::Def);
            }
        }
        Op::Bar {
            id, count, d, p, ..
        } => {
            opnd(id, f);
            if let Some(count) = count {
                opnd(count, f);
            }
            if let Some((p, _)) = p {
                opnd(p, f);
            }
            if let Some(d) = d {
                f(d, Role::Def);
            }
        }
        Op::BarWarp { mask } => opnd(mask, f),
        Op::Shfl {
            d,
            dp,
            a,
            b,
            c,
            mask,
            ..
        } => {
            for o in [a, b, c, mask] {
                opnd(o, f);
            }
            f(d, Role::Def);
            if let Some(dp) = dp {
                f(dp, Role::Def);
            }
        }
        Op::Vote { d, p, mask, .. } => {
            opnd(p, f);
            opnd(mask, f);
            f(d, Role::Def);
        }
        Op::Activemask { d } => f(d, Role::Def),
        Op::Match { d, dp, a, mask, .. } => {
            opnd(a, f);
            opnd(mask, f);
            f(d, Role::Def);
            if let Some(dp) = dp {
                f(dp, Role::Def);
            }
        }
        Op::Redux { d, a, mask, .. } => {
            opnd(a, f);
            opnd(mask, f);
            f(d, Role::Def);
        }
        Op::CallIndirect { target, .. } => opnd(target, f),
        Op::CpAsync {
            dst,
            src,
            src_size,
            ignore_src,
            ..
        } => {
            addr(dst, f);
            addr(src, f);
            if let Some(n) = src_size {
                opnd(n, f);
            }
            if let Some((p, _)) = ignore_src {
                f(p, Role::Use);
            }
        }
        Op::CpAsyncArrive { addr: a, .. } => addr(a, f),
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbar,
        } => {
            addr(dst, f);
            addr(src, f);
            opnd(size, f);
            addr(mbar, f);
        }
        Op::Mbarrier {
            addr: a, d, a: x, ..
        } => {
            addr(a, f);
            opnd(x, f);
            if let Some(d) = d {
                f(d, Role::Def);
            }
        }
        Op::MbarPendingCount { d, state } => {
            opnd(state, f);
            f(d, Role::Def);
        }
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => {}
        Op::Bra { .. }
        | Op::Call { .. }
        | Op::Builtin { .. }
        | Op::Ret
        | Op::Exit
        | Op::Fence { .. }
        | Op::Nop
        | Op::Trap
        | Op::Unsupported(_) => {}
    }
}

/// A set of a function's registers, one bit each.
#[derive(Clone, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn has(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }
}

/// One instruction's registers, as indices into its function's range.
struct Access {
    uses: Vec<usize>,
    defs: Vec<usize>,
    /// The instruction may not run in every lane (a guard), so its defs do not kill.
    guarded: bool,
}

/// Gives registers of `module` that are never live at once the same slot, function by
/// function, and renumbers every function's range to be contiguous after the sink slot.
pub(crate) fn compact(module: &mut Module) {
    let mut next = SINK + 1;
    let funcs: Vec<(usize, usize, u32, u32)> = module
        .funcs
        .iter()
        .map(|f| (f.start as usize, f.end as usize, f.regs.start, f.regs.end))
        .collect();
    for (index, (start, end, first, last)) in funcs.into_iter().enumerate() {
        let n = last.saturating_sub(first) as usize;
        let (start, end) = (start.min(module.code.len()), end.min(module.code.len()));
        let map = if start <= end && n <= MAX_REGISTERS {
            colours(module, start, end, first, n)
        } else {
            None
        };
        let (map, slots) = map.unwrap_or_else(|| ((0..n as u32).collect(), n as u32));
        for ins in module.code.get_mut(start..end).unwrap_or_default() {
            let rename = &mut |r: &mut u32, _: Role| {
                if *r >= first && *r < last {
                    *r = next + map[(*r - first) as usize];
                }
            };
            if let Some((p, _)) = &mut ins.guard {
                rename(p, Role::Use);
            }
            for_each_register(&mut ins.op, rename);
        }
        module.funcs[index].regs = next..next + slots;
        next += slots;
    }
    module.nregs = next;
}

/// The colour (slot within the function) of each of its `n` registers starting at `first`,
/// and how many colours; `None` when a branch leaves the function or the tables would be too big.
fn colours(
    module: &mut Module,
    start: usize,
    end: usize,
    first: u32,
    n: usize,
) -> Option<(Vec<u32>, u32)> {
    let mut accesses = Vec::with_capacity(end - start);
    for ins in &mut module.code[start..end] {
        let mut access = Access {
            uses: Vec::new(),
            defs: Vec::new(),
            guarded: ins.guard.is_some(),
        };
        let mut note = |r: &mut u32, role: Role| {
            let Some(i) = r.checked_sub(first).map(|i| i as usize).filter(|&i| i < n) else {
                return;
            };
            match role {
                Role::Use => access.uses.push(i),
                Role::Def => access.defs.push(i),
            }
        };
        if let Some((p, _)) = &mut ins.guard {
            note(p, Role::Use);
        }
        for_each_register(&mut ins.op, &mut note);
        accesses.push(access);
    }
    let len = end - start;
    // Live-in and live-out sets take len × n bits each: a very long function with many
    // registers keeps its numbering rather than its parse taking hundreds of megabytes.
    if len.saturating_mul(n) > MAX_LIVENESS_BITS {
        return None;
    }
    // A branch out of the function (which the parser never emits) leaves its numbering alone.
    let leaves = module.code[start..end].iter().any(
        |ins| matches!(ins.op, Op::Bra { target } if !(start..end).contains(&(target as usize))),
    );
    if leaves {
        return None;
    }
    let mut next = Vec::new();
    let succ: Vec<Vec<usize>> = (start..end)
        .map(|pc| {
            module.code[pc].successors(pc as u32, end as u32, &mut next);
            next.iter().map(|&p| p as usize - start).collect()
        })
        .collect();
    // Liveness: live_in = uses ∪ (live_out − kills), to a fixpoint.
    let mut live_in = vec![Bits::new(n); len];
    let mut live_out = vec![Bits::new(n); len];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..len).rev() {
            let mut out = Bits::new(n);
            for &s in &succ[i] {
                out.union(&live_in[s]);
            }
            let mut inn = out.clone();
            let a = &accesses[i];
            if !a.guarded {
                for &d in &a.defs {
                    inn.clear(d);
                }
            } else {
                for &d in &a.defs {
                    inn.set(d);
                }
            }
            for &u in &a.uses {
                inn.set(u);
            }
            if inn != live_in[i] {
                live_in[i] = inn;
                changed = true;
            }
            live_out[i] = out;
        }
    }
    let mut interferes = vec![Bits::new(n); n];
    let edge = |a: usize, b: usize, m: &mut Vec<Bits>| {
        if a != b {
            m[a].set(b);
            m[b].set(a);
        }
    };
    for (i, a) in accesses.iter().enumerate() {
        for &d in &a.defs {
            for x in live_out[i].ones() {
                edge(d, x, &mut interferes);
            }
            for &e in a.defs.iter().chain(&a.uses) {
                edge(d, e, &mut interferes);
            }
        }
    }
    // What is live on entry was never written: such registers keep apart from each other.
    if len > 0 {
        let entry: Vec<usize> = live_in[0].ones().collect();
        for (k, &a) in entry.iter().enumerate() {
            for &b in &entry[k + 1..] {
                edge(a, b, &mut interferes);
            }
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut seen = Bits::new(n);
    for a in &accesses {
        for &r in a.uses.iter().chain(&a.defs) {
            if !seen.has(r) {
                seen.set(r);
                order.push(r);
            }
        }
    }
    let mut colour = vec![u32::MAX; n];
    let mut slots = 0u32;
    for &r in &order {
        let mut taken = Bits::new(n + 1);
        for x in interferes[r].ones() {
            if colour[x] != u32::MAX {
                taken.set(colour[x] as usize);
            }
        }
        let c = (0..=n).find(|&c| !taken.has(c)).unwrap_or(n) as u32;
        colour[r] = c;
        slots = slots.max(c + 1);
    }
    // Registers no instruction names share the first slot: nothing reads or writes them.
    for c in colour.iter_mut().filter(|c| **c == u32::MAX) {
        *c = 0;
    }
    Some((colour, slots))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn kernel(regs: &str, body: &str) -> Module {
        Module::parse(&format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             {regs}\nld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        ))
        .unwrap()
    }

    /// The slots the `St` instructions store, in order.
    fn stored(m: &Module) -> Vec<u32> {
        m.code
            .iter()
            .filter_map(|i| match &i.op {
                Op::St { vals, .. } => match vals[0] {
                    Opnd::Reg(r) => Some(r),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn registers_never_live_at_once_share_a_slot_and_operands_never_share_with_results() {
        let m = kernel(
            ".reg .b32 %r<8>;\n.reg .b64 %rd<2>;",
            "mov.u32 %r1, 1;\nadd.s32 %r2, %r1, 1;\nst.global.u32 [%rd1], %r2;\n\
             mov.u32 %r3, 3;\nadd.s32 %r4, %r3, 1;\nst.global.u32 [%rd1], %r4;",
        );
        // %rd1 lives throughout; %r1..%r4 need two slots between them, not four.
        assert_eq!(m.nregs, SINK + 1 + 3, "{:?}", m.code);
        let [first, second] = stored(&m)[..] else {
            panic!("two stores")
        };
        assert_eq!(first, second, "%r2 and %r4 are never live at once");
        let add_reads_and_writes: Vec<(u32, u32)> = m
            .code
            .iter()
            .filter_map(|i| match &i.op {
                Op::Bin {
                    d, a: Opnd::Reg(a), ..
                } => Some((*d, *a)),
                _ => None,
            })
            .collect();
        for (d, a) in add_reads_and_writes {
            assert_ne!(d, a, "a result never takes its own operand's slot");
        }
    }

    #[test]
    fn a_guarded_write_keeps_the_old_value_live() {
        // %r2 is written under a guard: in lanes where %p1 is false it still holds the 7, so
        // %r1 (live across the guarded write) must not share its slot.
        let m = kernel(
            ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;",
            "mov.u32 %r1, 5;\nmov.u32 %r2, 7;\nsetp.eq.s32 %p1, %r1, 5;\n@%p1 mov.u32 %r2, 9;\n\
             st.global.u32 [%rd1], %r1;\nst.global.u32 [%rd1], %r2;",
        );
        let [r1, r2] = stored(&m)[..] else {
            panic!("two stores")
        };
        assert_ne!(r1, r2);
    }

    #[test]
    fn the_corpus_reduction_keeps_a_fraction_of_its_registers() {
        let m = Module::parse(include_str!("../tests/corpus/reduce_better.ptx")).unwrap();
        let declared = 14 + 40 + 11 + 12;
        assert!(
            m.nregs < declared / 5,
            "{} slots for {declared} registers",
            m.nregs
        );
        let f = &m.funcs[0];
        assert_eq!(f.regs.start, SINK + 1);
        assert_eq!(f.regs.end, m.nregs);
    }

    /// Every committed kernel of the project (the emulator's corpus and every chapter's PTX),
    /// every entry, under the three schedules with every checker on: the run with shared slots
    /// and the run with one slot per register end with the same report and the same memory.
    #[test]
    fn every_committed_kernel_runs_alike_with_and_without_shared_slots() {
        let launches = crate::committed::runs_alike(
            "shared slots",
            2,
            |ptx| {
                let shared = Module::parse_with_slots(ptx, true).ok()?;
                let own = Module::parse_with_slots(ptx, false).ok()?;
                assert!(shared.nregs <= own.nregs);
                Some((shared, own))
            },
            |options| (options, options),
        );
        assert!(launches > 300, "{launches} launches");
    }
}
