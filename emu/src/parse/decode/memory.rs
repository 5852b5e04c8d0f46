//! Memory opcodes: `ld`, `st`, `atom`, `red`, `fence`/`membar`, and the hints that do nothing
//! here (`prefetch`, `nanosleep`).

use super::super::operands::check_space_addr;
use super::super::parser::*;
use super::opcode::Opcode;

impl Parser {
    pub(crate) fn decode_memory(&mut self, o: &Opcode) -> Result<Op, EmuError> {
        let (opcode, base, ops, line) = (o.text, o.base, &o.ops, o.line);
        let (mods, space, packed) = (&o.mods, o.space, o.packed);
        let has = |m: &str| o.has(m);
        let need_ty = || o.need_ty();
        let nops = |n: usize| o.nops(n);
        let unsupported = || o.unsupported();
        Ok(match base {
            "ld" | "ldu" | "st" => {
                nops(2)?;
                let t = need_ty()?;
                if has("v8") || t == Ty::Pred {
                    return Err(unsupported());
                }
                let vec_len = if has("v2") {
                    2
                } else if has("v4") {
                    4
                } else {
                    1
                };
                let strong = if has("acquire") {
                    Strength::Acquire
                } else if has("release") {
                    Strength::Release
                } else if has("volatile") || has("relaxed") {
                    Strength::Relaxed
                } else {
                    Strength::Weak
                };
                // PTX: `.volatile` is `.relaxed.sys`; `.relaxed`, `.acquire` and `.release`
                // name their scope, and NVRTC always writes one.
                let scope = if has("volatile") {
                    Scope::Sys
                } else {
                    Scope::of(mods, Scope::Gpu)
                };
                if base == "st" {
                    let addr = self.addr(&ops[0], line)?;
                    let vals = match &ops[1] {
                        Raw::Vec(v) => v
                            .iter()
                            .map(|x| self.val(x, t, line))
                            .collect::<Result<Vec<_>, _>>()?,
                        x => vec![self.val(x, t, line)?],
                    };
                    check_space_addr(space, addr, line, false)?;
                    if vals.len() != vec_len {
                        return Err(parse_err(
                            line,
                            format!("`{opcode}` needs {vec_len} values"),
                        ));
                    }
                    Op::St {
                        space,
                        ty: t,
                        vals,
                        addr,
                        strong,
                        scope,
                    }
                } else {
                    let addr = self.addr(&ops[1], line)?;
                    let ds = match &ops[0] {
                        Raw::Vec(v) => v
                            .iter()
                            .map(|x| match x {
                                Raw::Name(n) if n == "_" => Ok(None),
                                x => self.dreg(x, line).map(Some),
                            })
                            .collect::<Result<Vec<_>, _>>()?,
                        x => vec![Some(self.dreg(x, line)?)],
                    };
                    check_space_addr(space, addr, line, true)?;
                    if ds.len() != vec_len {
                        return Err(parse_err(
                            line,
                            format!("`{opcode}` needs {vec_len} destinations"),
                        ));
                    }
                    // Narrow signed loads sign-extend to the destination register's width.
                    let dbits = ds
                        .first()
                        .copied()
                        .flatten()
                        .map(|r| self.reg_bits_of(r))
                        .unwrap_or(64);
                    Op::Ld {
                        space,
                        ty: t,
                        ds,
                        addr,
                        strong,
                        scope,
                        dbits,
                    }
                }
            }
            "atom" | "red" => {
                // `atom.add.noftz.f16x2`: the packed pair is one 32-bit word.
                let t = match packed {
                    Some(_) => Ty::B32,
                    None => need_ty()?,
                };
                let half_add = has("add") && (t.half() || packed.is_some());
                if (t.half() || packed.is_some()) && !half_add
                    || mods
                        .iter()
                        .any(|m| m.starts_with("v2") || m.starts_with("v4") || m.starts_with("v8"))
                {
                    return Err(unsupported());
                }
                let op = mods
                    .iter()
                    .find_map(|m| {
                        Some(match *m {
                            "add" => AtomOp::Add,
                            "min" => AtomOp::Min,
                            "max" => AtomOp::Max,
                            "inc" => AtomOp::Inc,
                            "dec" => AtomOp::Dec,
                            "and" => AtomOp::And,
                            "or" => AtomOp::Or,
                            "xor" => AtomOp::Xor,
                            "exch" => AtomOp::Exch,
                            "cas" => AtomOp::Cas,
                            _ => return None,
                        })
                    })
                    .ok_or_else(unsupported)?;
                let op = match (op, packed) {
                    (AtomOp::Add, Some(half)) => AtomOp::AddPacked(half),
                    (op, _) => op,
                };
                let release = has("release") || has("acq_rel");
                let acquire = has("acquire") || has("acq_rel");
                // An atomic without a scope is `.gpu` (CUDA's `atomicAdd`).
                let scope = Scope::of(mods, Scope::Gpu);
                let (d, rest) = if base == "atom" {
                    if ops.is_empty() {
                        return Err(parse_err(line, "atom needs operands"));
                    }
                    (Some(self.dreg(&ops[0], line)?), &ops[1..])
                } else {
                    (None, &ops[..])
                };
                let want = if op == AtomOp::Cas { 3 } else { 2 };
                if rest.len() != want {
                    return Err(parse_err(
                        line,
                        format!("`{opcode}` has the wrong number of operands"),
                    ));
                }
                let addr = self.addr(&rest[0], line)?;
                check_space_addr(space, addr, line, false)?;
                let b = self.val(&rest[1], t, line)?;
                let c = if op == AtomOp::Cas {
                    self.val(&rest[2], t, line)?
                } else {
                    Opnd::Imm(0)
                };
                Op::Atom {
                    space,
                    op,
                    ty: t,
                    d,
                    addr,
                    b,
                    c,
                    release,
                    acquire,
                    scope,
                }
            }
            "membar" | "fence" => {
                if base == "fence"
                    && mods
                        .first()
                        .is_some_and(|m| m.starts_with("proxy") || m.starts_with("mbarrier"))
                {
                    Op::Nop
                } else {
                    // `membar.gl` and a bare `fence.sc` are device-wide.
                    Op::Fence {
                        scope: Scope::of(mods, Scope::Gpu),
                    }
                }
            }
            // `__nanosleep(ns)`: a hint to let other warps run; every schedule here already does.
            "prefetch" | "prefetchu" | "pmevent" | "nanosleep" => Op::Nop,
            // Programmatic dependent launch (CUB's kernels since CUDA 12.3): `.wait` waits
            // for the grids this one depends on to complete and their memory to be visible,
            // `.launch_dependents` lets the next grid start early. The emulator starts a grid
            // only when the work before it on its stream has completed, so the wait is already
            // met and the early start never happens.
            "griddepcontrol" => Op::Nop,
            _ => unreachable!("decode sends only this family's opcodes here"),
        })
    }
}
