//! Which static shared array a shared-memory access means. A block's static shared variables
//! lie side by side, so `As[TILE + ty][tx]` in an `As` declared one tile too small lands in
//! `Bs`, inside the block's shared memory: the bound of the whole window, the only one a GPU's
//! memcheck knows, never sees it, and racecheck then names `Bs` at a line that writes `As`.
//! NVRTC takes an array's address once (`mov.u32 %r1, As;`) and adds the index to it, so
//! following registers from that `mov` to the access tells which array the code indexes.
//!
//! Per function, each register is *plain*, one array's address plus an offset, or *mixed*
//! (defined from two arrays, or from an array and something else: a pointer that picks one of
//! two buffers). A register is an array's when every instruction that defines it reads exactly
//! one register of that array (an `add`, a `cvta`, a `mov`) and nothing of another; loads and
//! atomics define plain values. The fixed point runs over the whole function, so a pointer
//! stepped in a loop keeps its array. Only an access through a register of exactly one array
//! is held to it; everything else keeps the window's bound alone.

use std::collections::HashMap;

use crate::ir::{Addr, Op, Opnd, Space};
use crate::module::Module;
use crate::regalloc::{Role, for_each_register};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Holds {
    Unknown,
    Plain,
    Array(u32),
    Mixed,
}

impl Holds {
    fn join(self, other: Holds) -> Holds {
        match (self, other) {
            (Holds::Unknown, x) | (x, Holds::Unknown) => x,
            (a, b) if a == b => a,
            _ => Holds::Mixed,
        }
    }
}

/// Per instruction: the index in `m.shared` of the array a shared or generic access through a
/// register means, when the register holds exactly one static array's address.
pub(crate) fn analyze(m: &Module) -> Vec<Option<u32>> {
    let mut base = vec![None; m.code.len()];
    if m.shared.is_empty() || m.shared_address_lines.is_empty() {
        return base;
    }
    // The arrays by offset: those with a size (an `extern` array has none to hold to).
    let by_offset: HashMap<u32, u32> = m
        .shared
        .iter()
        .enumerate()
        .filter(|(_, v)| v.size > 0)
        .map(|(i, v)| (v.offset, i as u32))
        .collect();
    let mut named: HashMap<u32, Holds> = HashMap::new();
    for &(line, offset) in &m.shared_address_lines {
        let holds = by_offset
            .get(&offset)
            .map_or(Holds::Mixed, |&i| Holds::Array(i));
        let entry = named.entry(line).or_insert(Holds::Unknown);
        *entry = entry.join(holds);
    }
    for f in &m.funcs {
        let end = (f.end as usize).min(m.code.len());
        let start = (f.start as usize).min(end);
        let code = &m.code[start..end];
        let mut holds = vec![Holds::Unknown; m.nregs as usize + 1];
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        loop {
            let mut changed = false;
            for ins in code {
                defs.clear();
                uses.clear();
                let mut op = ins.op.clone();
                for_each_register(&mut op, &mut |r: &mut u32, role| match role {
                    Role::Def => defs.push(*r),
                    Role::Use => uses.push(*r),
                });
                if defs.is_empty() {
                    continue;
                }
                let made = if let Some(&array) = named.get(&ins.ptx_line) {
                    array
                } else if matches!(ins.op, Op::Ld { .. } | Op::Atom { .. }) {
                    Holds::Plain
                } else {
                    uses.iter()
                        .map(|&r| holds.get(r as usize).copied().unwrap_or(Holds::Mixed))
                        .filter(|h| !matches!(h, Holds::Unknown | Holds::Plain))
                        .fold(Holds::Plain, |acc, h| match acc {
                            Holds::Plain => h,
                            _ => acc.join(h),
                        })
                };
                for &d in &defs {
                    if let Some(slot) = holds.get_mut(d as usize) {
                        let joined = slot.join(made);
                        if joined != *slot {
                            *slot = joined;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (at, ins) in code.iter().enumerate() {
            let (space, addr) = match &ins.op {
                Op::Ld { space, addr, .. } | Op::St { space, addr, .. } => (*space, addr),
                Op::Atom { space, addr, .. } => (*space, addr),
                _ => continue,
            };
            if !matches!(space, Space::Shared | Space::Generic) {
                continue;
            }
            if let Addr::Reg {
                base: Opnd::Reg(r), ..
            } = addr
                && let Some(Holds::Array(array)) = holds.get(*r as usize)
            {
                base[start + at] = Some(*array);
            }
        }
    }
    base
}
