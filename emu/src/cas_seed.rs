//! Which plain loads only seed a compare-and-swap (see README, "Race detector").
//!
//! The standard CAS loop reads the old value with a plain load, then retries `atomicCAS` until
//! it sticks. That load races with other threads' CAS, but its value can only matter through the
//! CAS: a stale or torn value makes the CAS fail, and the loop goes on with the value the CAS
//! read atomically. So racecheck ignores a plain load when a data-flow analysis of its function
//! shows that, on every path, its value reaches nothing but:
//!
//! - the compare operand of an `atom.cas` (any derivation of the value: a CAS compare only
//!   decides whether the CAS writes);
//! - the new-value operand of an `atom.cas` whose compare operand holds exactly the register
//!   the new value was computed from, so the CAS writes it only when memory held that value;
//! - an (in)equality test between that exact value and the result of such a CAS (the loop's exit
//!   test: it equals "the CAS failed"), whose result is clean;
//! - arithmetic and moves that feed the above.
//!
//! Anything else is an escape and the load is checked as usual: a store, an address, a branch or
//! guard predicate, another atomic's operand, a shuffle, a call argument or return value.

use std::collections::BTreeMap;

use crate::ir::{AtomOp, Cmp, Instr, Op, Opnd, Space, Strength};
use crate::module::Module;

/// What a register may hold, relative to the value of the load under analysis.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tag {
    /// The result of a CAS whose compare operand was exactly the current value of register `A`
    /// (a must-fact: true on every path). Not derived from the load.
    CasOf(u32),
    /// Not derived from the load (on any path). Registers absent from a state are clean.
    Clean,
    /// Where derived from the load: exactly the value it loaded, unchanged since.
    Root,
    /// Where derived from the load: exactly the current value of root register `A`.
    Copy(u32),
    /// Where derived from the load: a function of the current value of root register `A`.
    Derived(u32),
    /// Derived from the load, with no register it is known to be a function of.
    Loose,
}

impl Tag {
    fn tainted(self) -> bool {
        matches!(
            self,
            Tag::Root | Tag::Copy(_) | Tag::Derived(_) | Tag::Loose
        )
    }

    /// The root register this value is a function of, for a register `r` with this tag.
    fn anchor(self, r: u32) -> Option<u32> {
        match self {
            Tag::Root => Some(r),
            Tag::Copy(a) | Tag::Derived(a) => Some(a),
            _ => None,
        }
    }

    /// Exactly the value of root `A` (for the CAS compare operand and the exit test).
    fn exact(self, r: u32) -> Option<u32> {
        match self {
            Tag::Root => Some(r),
            Tag::Copy(a) => Some(a),
            _ => None,
        }
    }

    fn join(self, o: Tag) -> Tag {
        use Tag::*;
        match (self, o) {
            (a, b) if a == b => a,
            (CasOf(_), CasOf(_)) | (CasOf(_), Clean) | (Clean, CasOf(_)) => Clean,
            (CasOf(_) | Clean, t) | (t, CasOf(_) | Clean) => t,
            (Copy(a), Derived(b)) | (Derived(b), Copy(a)) if a == b => Derived(a),
            _ => Loose,
        }
    }
}

/// Registers that are not clean; absent means clean.
type State = BTreeMap<u32, Tag>;

fn tag(s: &State, r: u32) -> Tag {
    s.get(&r).copied().unwrap_or(Tag::Clean)
}

fn opnd_tag(s: &State, o: Opnd) -> (Tag, u32) {
    match o {
        Opnd::Reg(r) => (tag(s, r), r),
        _ => (Tag::Clean, u32::MAX),
    }
}

/// The tag of a value computed from `ops`: a function of one root if all tainted operands are.
fn combine(s: &State, ops: &[Opnd]) -> Tag {
    let mut out = Tag::Clean;
    for &o in ops {
        let (t, r) = opnd_tag(s, o);
        if !t.tainted() {
            continue;
        }
        let this = match t.anchor(r) {
            Some(a) => Tag::Derived(a),
            None => Tag::Loose,
        };
        out = match out {
            Tag::Clean => this,
            prev if prev == this => prev,
            _ => Tag::Loose,
        };
    }
    out
}

/// A plain move keeps exactness: the copy holds the current value of the same root.
fn copy(s: &State, o: Opnd) -> Tag {
    match opnd_tag(s, o) {
        (Tag::Root, r) => Tag::Copy(r),
        (t, _) => t,
    }
}

/// Register `d` gets a new value: facts about its old value end.
fn define(s: &mut State, d: u32, t: Tag) {
    for v in s.values_mut() {
        match *v {
            Tag::Copy(a) | Tag::Derived(a) if a == d => *v = Tag::Loose,
            Tag::CasOf(a) if a == d => *v = Tag::Clean,
            _ => {}
        }
    }
    let t = match t {
        Tag::Copy(a) | Tag::Derived(a) if a == d => Tag::Loose,
        Tag::CasOf(a) if a == d => Tag::Clean,
        t => t,
    };
    if t == Tag::Clean {
        s.remove(&d);
    } else {
        s.insert(d, t);
    }
}

struct Escape;

fn any_tainted(s: &State, ops: &[Opnd]) -> bool {
    ops.iter().any(|&o| opnd_tag(s, o).0.tainted())
}

fn addr_opnd(a: &crate::ir::Addr) -> Opnd {
    match *a {
        crate::ir::Addr::Reg { base, .. } => base,
        _ => Opnd::Imm(0),
    }
}

/// The effect of instruction `pc` on `s`; `Err` if the load's value escapes there. Sets
/// `seeded` when a CAS compare operand holds exactly the load's value.
fn transfer(
    s: &mut State,
    ins: &Instr,
    pc: u32,
    load: u32,
    seeded: &mut bool,
) -> Result<(), Escape> {
    if let Some((p, _)) = ins.guard
        && tag(s, p).tainted()
    {
        return Err(Escape);
    }
    let clean_or_escape = |s: &State, ops: &[Opnd]| {
        if any_tainted(s, ops) {
            Err(Escape)
        } else {
            Ok(())
        }
    };
    match &ins.op {
        Op::Mov { d, a, .. } => {
            let t = copy(s, *a);
            define(s, *d, t);
        }
        Op::Unpack { ds, a, .. } => {
            let t = combine(s, &[*a]);
            for d in ds.iter().flatten() {
                define(s, *d, t);
            }
        }
        Op::Pack { d, parts, .. } => {
            let t = combine(s, parts);
            define(s, *d, t);
        }
        Op::Bin { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            let t = combine(s, &[*a, *b]);
            define(s, *d, t);
        }
        Op::Un { d, a, .. }
        | Op::Cvt { d, a, .. }
        | Op::Cvta { d, a, .. }
        | Op::TestP { d, a, .. } => {
            let t = combine(s, &[*a]);
            define(s, *d, t);
        }
        Op::Mad { d, a, b, c, .. }
        | Op::Int3 { d, a, b, c, .. }
        | Op::Half2 { d, a, b, c, .. }
        | Op::Selp { d, a, b, c, .. }
        | Op::Slct { d, a, b, c, .. }
        | Op::Bfe { d, a, b, c, .. }
        | Op::Prmt { d, a, b, c } => {
            let t = combine(s, &[*a, *b, *c]);
            define(s, *d, t);
        }
        Op::Bfi { d, f, b, c, e, .. } => {
            let t = combine(s, &[*f, *b, *c, *e]);
            define(s, *d, t);
        }
        Op::Setp {
            cmp,
            d,
            d2,
            a,
            b,
            comb,
            ..
        } => {
            let (ta, ra) = opnd_tag(s, *a);
            let (tb, rb) = opnd_tag(s, *b);
            let is_cas_test = |t: Tag, r: u32, other: Tag| match (t.exact(r), other) {
                (Some(root), Tag::CasOf(x)) => root == x,
                _ => false,
            };
            let equality = matches!(cmp, Cmp::Eq | Cmp::Ne | Cmp::Equ | Cmp::Neu);
            let mut t = if equality && (is_cas_test(ta, ra, tb) || is_cas_test(tb, rb, ta)) {
                Tag::Clean
            } else {
                combine(s, &[*a, *b])
            };
            if let Some((_, c, _)) = comb {
                t = combine_tags(s, t, *c);
            }
            define(s, *d, t);
            if let Some(d2) = d2 {
                define(s, *d2, t);
            }
        }
        Op::Ld { ds, addr, .. } => {
            clean_or_escape(s, &[addr_opnd(addr)])?;
            let t = if pc == load { Tag::Root } else { Tag::Clean };
            for d in ds.iter().flatten() {
                define(s, *d, t);
            }
        }
        Op::St { vals, addr, .. } => {
            clean_or_escape(s, vals)?;
            clean_or_escape(s, &[addr_opnd(addr)])?;
        }
        Op::Atom {
            op, d, addr, b, c, ..
        } => {
            clean_or_escape(s, &[addr_opnd(addr)])?;
            let mut result = Tag::Clean;
            if *op == AtomOp::Cas {
                let (tb, rb) = opnd_tag(s, *b);
                let exact = tb.exact(rb);
                if exact.is_some() {
                    *seeded = true;
                }
                let (tc, rc) = opnd_tag(s, *c);
                if tc.tainted() && (exact.is_none() || tc.anchor(rc) != exact) {
                    return Err(Escape);
                }
                if let Some(root) = exact {
                    result = Tag::CasOf(root);
                }
            } else {
                clean_or_escape(s, &[*b, *c])?;
            }
            if let Some(d) = d {
                define(s, *d, result);
            }
        }
        Op::Bar {
            id, count, d, p, ..
        } => {
            clean_or_escape(s, &[*id])?;
            if let Some(c) = count {
                clean_or_escape(s, &[*c])?;
            }
            if let Some((p, _)) = p {
                clean_or_escape(s, &[*p])?;
            }
            if let Some(d) = d {
                define(s, *d, Tag::Clean);
            }
        }
        Op::BarWarp { mask } => clean_or_escape(s, &[*mask])?,
        Op::Shfl {
            d,
            dp,
            a,
            b,
            c,
            mask,
            ..
        } => {
            clean_or_escape(s, &[*a, *b, *c, *mask])?;
            define(s, *d, Tag::Clean);
            if let Some(dp) = dp {
                define(s, *dp, Tag::Clean);
            }
        }
        Op::Vote { d, p, mask, .. } => {
            clean_or_escape(s, &[*p, *mask])?;
            define(s, *d, Tag::Clean);
        }
        Op::Redux { d, a, mask, .. } => {
            clean_or_escape(s, &[*a, *mask])?;
            define(s, *d, Tag::Clean);
        }
        Op::Match { d, dp, a, mask, .. } => {
            clean_or_escape(s, &[*a, *mask])?;
            define(s, *d, Tag::Clean);
            if let Some(dp) = dp {
                define(s, *dp, Tag::Clean);
            }
        }
        Op::Activemask { d } => define(s, *d, Tag::Clean),
        Op::CpAsync {
            dst, src, src_size, ..
        } => {
            clean_or_escape(s, &[addr_opnd(dst), addr_opnd(src)])?;
            if let Some(n) = src_size {
                clean_or_escape(s, &[*n])?;
            }
        }
        Op::CpAsyncArrive { addr, .. } => clean_or_escape(s, &[addr_opnd(addr)])?,
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbar,
        } => clean_or_escape(s, &[addr_opnd(dst), addr_opnd(src), *size, addr_opnd(mbar)])?,
        Op::Mbarrier { addr, d, a, .. } => {
            clean_or_escape(s, &[addr_opnd(addr), *a])?;
            if let Some(d) = d {
                define(s, *d, Tag::Clean);
            }
        }
        Op::MbarPendingCount { d, state } => {
            clean_or_escape(s, &[*state])?;
            define(s, *d, Tag::Clean);
        }
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => {}
        // Runtime calls take their arguments through `.param` stores (escapes above).
        Op::Builtin { .. } => {}
        Op::Bra { .. }
        | Op::Call { .. }
        | Op::CallIndirect { .. }
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::Unsupported(_)
        | Op::Fence { .. }
        | Op::Nop => {}
    }
    Ok(())
}

fn combine_tags(s: &State, t: Tag, c: Opnd) -> Tag {
    let (tc, rc) = opnd_tag(s, c);
    if !tc.tainted() {
        return t;
    }
    let other = match tc.anchor(rc) {
        Some(a) => Tag::Derived(a),
        None => Tag::Loose,
    };
    match t {
        Tag::Clean | Tag::CasOf(_) => other,
        t if t == other => t,
        _ => Tag::Loose,
    }
}

/// Whether the plain load at `load` (in the function spanning `start..end`) only seeds CASes.
fn only_seeds_cas(code: &[Instr], start: u32, end: u32, load: u32) -> bool {
    let n = (end - start) as usize;
    let mut states: Vec<Option<State>> = vec![None; n];
    // Analysis starts at the load with nothing tainted; everything before it is clean.
    states[(load - start) as usize] = Some(State::new());
    let mut work = vec![load];
    let mut seeded = false;
    let mut succ = Vec::new();
    while let Some(pc) = work.pop() {
        let Some(ins) = code.get(pc as usize) else {
            continue;
        };
        let Some(mut s) = states[(pc - start) as usize].clone() else {
            continue;
        };
        if transfer(&mut s, ins, pc, load, &mut seeded).is_err() {
            return false;
        }
        ins.successors(pc, end, &mut succ);
        for &next in &succ {
            let slot = &mut states[(next - start) as usize];
            let changed = match slot {
                None => {
                    *slot = Some(s.clone());
                    true
                }
                Some(old) => join_into(old, &s),
            };
            if changed {
                work.push(next);
            }
        }
    }
    seeded
}

/// `old ⊔= new`; true if `old` changed.
fn join_into(old: &mut State, new: &State) -> bool {
    let mut changed = false;
    let keys: Vec<u32> = old.keys().chain(new.keys()).copied().collect();
    for k in keys {
        let a = tag(old, k);
        let j = a.join(tag(new, k));
        if j != a {
            changed = true;
            if j == Tag::Clean {
                old.remove(&k);
            } else {
                old.insert(k, j);
            }
        }
    }
    changed
}

/// For every instruction of `m`: true for a plain load whose value only seeds CASes.
pub(crate) fn analyze(m: &Module) -> Vec<bool> {
    let mut out = vec![false; m.code.len()];
    for f in &m.funcs {
        let (start, end) = (f.start, f.end.min(m.code.len() as u32));
        if start >= end {
            continue;
        }
        let body = &m.code[start as usize..end as usize];
        let has_cas = body.iter().any(|i| {
            matches!(
                i.op,
                Op::Atom {
                    op: AtomOp::Cas,
                    ..
                }
            )
        });
        if !has_cas {
            continue;
        }
        for (k, ins) in body.iter().enumerate() {
            let pc = start + k as u32;
            if let Op::Ld {
                space: Space::Global | Space::Shared | Space::Generic,
                ds,
                strong: Strength::Weak,
                ..
            } = &ins.op
                && ds.len() == 1
                && ds[0].is_some()
            {
                out[pc as usize] = only_seeds_cas(&m.code, start, end, pc);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Parses a kernel whose parameter `%rd1` is a pointer, and returns, for each plain load in
    /// program order, whether it only seeds CASes.
    fn seeds(body: &str) -> Vec<bool> {
        let src = format!(
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry t(.param .u64 p, .param .u64 q)\n{{\n.reg .pred %p<8>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n.reg .f64 %fd<8>;\nld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [q];\n{body}\nret;\n}}\n"
        );
        let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        m.code
            .iter()
            .zip(&m.cas_seed)
            .filter(|(i, _)| {
                matches!(
                    i.op,
                    Op::Ld {
                        space: Space::Global,
                        ..
                    }
                )
            })
            .map(|(_, &s)| s)
            .collect()
    }

    /// The CUDA Programming Guide's atomicAdd for double, as NVRTC emits it.
    const GUIDE_LOOP: &str = "
        ld.global.u64 %rd11, [%rd1];
    L1:
        mov.b64 %fd2, %rd11;
        add.f64 %fd3, %fd1, %fd2;
        mov.b64 %rd10, %fd3;
        atom.global.cas.b64 %rd4, [%rd1], %rd11, %rd10;
        setp.ne.s64 %p2, %rd11, %rd4;
        mov.u64 %rd11, %rd4;
        @%p2 bra L1;";

    #[test]
    fn the_guide_loop_only_seeds_its_cas() {
        assert_eq!(seeds(GUIDE_LOOP), [true]);
        // The result after the loop is the CAS's value, not the plain read's.
        assert_eq!(
            seeds(&format!("{GUIDE_LOOP}\n st.global.u64 [%rd2], %rd11;")),
            [true]
        );
    }

    #[test]
    fn the_exit_test_may_be_either_way_round_and_either_equality() {
        let body = "
            ld.global.u32 %r5, [%rd1];
        L1:
            add.s32 %r4, %r5, 1;
            atom.global.cas.b32 %r3, [%rd1], %r5, %r4;
            setp.eq.s32 %p1, %r3, %r5;
            mov.u32 %r5, %r3;
            @!%p1 bra L1;";
        assert_eq!(seeds(body), [true]);
    }

    #[test]
    fn a_read_whose_value_is_also_stored_is_checked() {
        let stored = GUIDE_LOOP.replacen("L1:", "st.global.u64 [%rd2], %rd11;\n    L1:", 1);
        assert_eq!(seeds(&stored), [false]);
        // Stored after the loop from a copy made inside it: the copy can hold the stale seed.
        let copied = format!("{GUIDE_LOOP}\n st.global.f64 [%rd2], %fd2;");
        assert_eq!(seeds(&copied), [false]);
    }

    #[test]
    fn a_read_whose_value_is_added_elsewhere_is_checked() {
        let added = format!("{GUIDE_LOOP}\n red.global.add.f64 [%rd2], %fd3;");
        assert_eq!(seeds(&added), [false]);
        let atomic_operand = GUIDE_LOOP.replacen(
            "L1:",
            "atom.global.add.u64 %rd5, [%rd2], %rd11;\n    L1:",
            1,
        );
        assert_eq!(seeds(&atomic_operand), [false]);
    }

    #[test]
    fn a_new_value_not_validated_by_the_compare_is_checked() {
        // Compare operand from an atomic read, new value from the plain read: the CAS can
        // succeed while the new value came from a stale read.
        let body = "
            ld.global.u32 %r5, [%rd1];
            atom.global.or.b32 %r6, [%rd1], 0;
            add.s32 %r4, %r5, 1;
            atom.global.cas.b32 %r3, [%rd1], %r6, %r4;";
        assert_eq!(seeds(body), [false]);
        // Compare operand derived (not exactly the read), new value from the read.
        let body = "
            ld.global.u32 %r5, [%rd1];
            and.b32 %r6, %r5, 255;
            add.s32 %r4, %r5, 1;
            atom.global.cas.b32 %r3, [%rd1], %r6, %r4;";
        assert_eq!(seeds(body), [false]);
    }

    #[test]
    fn branching_on_the_read_is_checked() {
        let body = "
            ld.global.u32 %r5, [%rd1];
            setp.eq.s32 %p1, %r5, 7;
            @%p1 bra L2;
            add.s32 %r4, %r5, 1;
            atom.global.cas.b32 %r3, [%rd1], %r5, %r4;
        L2:";
        assert_eq!(seeds(body), [false]);
        // An exit test against something other than the CAS's result.
        let body = "
            ld.global.u32 %r5, [%rd1];
        L1:
            add.s32 %r4, %r5, 1;
            atom.global.cas.b32 %r3, [%rd1], %r5, %r4;
            setp.ne.s32 %p1, %r4, %r3;
            mov.u32 %r5, %r3;
            @%p1 bra L1;";
        assert_eq!(seeds(body), [false]);
    }

    #[test]
    fn a_read_that_reaches_no_cas_is_checked() {
        assert_eq!(seeds("ld.global.u32 %r5, [%rd1];"), [false]);
        let body = "
            ld.global.u32 %r5, [%rd1];
            atom.global.cas.b32 %r3, [%rd1], 0, 1;";
        assert_eq!(seeds(body), [false]);
    }

    #[test]
    fn an_address_from_the_read_is_checked() {
        let body = "
            ld.global.u64 %rd5, [%rd1];
            ld.global.u32 %r1, [%rd5];
            atom.global.cas.b64 %rd6, [%rd1], %rd5, 0;";
        assert_eq!(seeds(body), [false, false]);
    }
}
