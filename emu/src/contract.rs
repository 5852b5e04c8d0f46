//! Multiply-add contraction, as the GPU's JIT does it. PTX says that a float `mul` and an
//! `add` or `sub` with no rounding modifier "may be optimized aggressively by the code
//! generator", and ptxas (which compiles a program's PTX when it loads, and nvcc's own for
//! `sm_XX` code) fuses such a pair into one `fma`: the product is not rounded before the
//! addition. So `a[i] -= m * b` gives, on a GPU, `fma(-m, b, a[i])`, which can be a tiny
//! negative number where rounding the product first gives exactly 0 (Rodinia's gaussian prints
//! `-0.00` there). nvcc leaves such pairs to ptxas, so a program's PTX holds many of them.
//!
//! The emulator does the same: when every use of a `mul`'s result is an `add`/`sub` later in the
//! same straight-line code, with neither rounding modifier written, the same `.ftz`, and the
//! `mul`'s operands unchanged in between, each becomes an `fma` of the `mul`'s operands
//! (negating the product or the addend for a `sub`). The `mul` stays, unused. `.rn` written out
//! (`__fmul_rn`, `__fadd_rn`, `__hmul2_rn`) keeps a pair apart, as it does on a GPU. Not yet
//! followed: a `neg` between the two, which ptxas folds into the `fma` too.

use crate::ir::{BinOp, Half2Op, Instr, Negate, Op, Opnd, Rnd, Ty};
use crate::module::Module;
use crate::regalloc::{Role, for_each_register};
use std::collections::HashMap;

/// A `mul` whose result an `add` may take in: its operands, and what the `add` must match.
#[derive(Clone, Copy)]
struct Product {
    /// The register it writes.
    d: u32,
    a: Opnd,
    b: Opnd,
    kind: Kind,
    ftz: bool,
    guard: Option<(u32, bool)>,
}

/// Scalar floats, or the packed halves of `.f16x2`/`.bf16x2`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Scalar(Ty),
    Packed(Ty),
}

/// Contracts every such pair in `module`'s code in place: same instruction count, same
/// registers written, so branch targets and everything indexed by instruction still hold.
///
/// As ptxas does (checked on an H100), a `mul` is contracted only when every use of its result
/// is an `add`/`sub` that can take it in, in the same straight-line code: a product that is
/// also stored, moved, or read after a branch stays rounded for every use.
pub(crate) fn contract(module: &mut Module) {
    let leaders = block_leaders(module);
    let funcs: Vec<(usize, usize)> = module
        .funcs
        .iter()
        .map(|f| (f.start as usize, (f.end as usize).min(module.code.len())))
        .collect();
    for (start, end) in funcs {
        if start >= end {
            continue;
        }
        let registers: Vec<Registers> = module.code[start..end].iter().map(registers).collect();
        // How many times each register is read in the function, guards included.
        let mut reads: HashMap<u32, usize> = HashMap::new();
        for r in &registers {
            for &u in &r.used {
                *reads.entry(u).or_default() += 1;
            }
        }
        let mut rewrites = Vec::new();
        for m in start..end {
            let Some(p) = product(&module.code[m]) else {
                continue;
            };
            let mut fused = Vec::new();
            let mut operands_changed = false;
            let mut every_use_fuses = true;
            let mut seen = 0;
            let mut replaced = false;
            for pc in m + 1..end {
                if leaders[pc] {
                    break;
                }
                let r = &registers[pc - start];
                let uses = r.used.iter().filter(|&&u| u == p.d).count();
                if uses > 0 {
                    seen += uses;
                    match fuse(&module.code[pc], &p).filter(|_| !operands_changed && uses == 1) {
                        Some(op) => fused.push((pc, op)),
                        None => {
                            every_use_fuses = false;
                            break;
                        }
                    }
                }
                let writes = |x: Opnd| matches!(x, Opnd::Reg(x) if r.written.contains(&x));
                if writes(p.a)
                    || writes(p.b)
                    || p.guard.is_some_and(|(g, _)| r.written.contains(&g))
                {
                    operands_changed = true;
                }
                if r.written.contains(&p.d) {
                    // A guarded write leaves the product in the lanes it skips.
                    replaced = module.code[pc].guard.is_none();
                    break;
                }
            }
            // Replaced before the straight-line code ends, the product has no other reader;
            // else a read anywhere else in the function (after a branch) keeps it apart.
            let no_other_reader = replaced || seen == reads.get(&p.d).copied().unwrap_or(0);
            if every_use_fuses && no_other_reader {
                rewrites.extend(fused);
            }
        }
        for (pc, op) in rewrites {
            module.code[pc].op = op;
        }
    }
}

/// The registers one instruction reads (its guard too) and writes.
struct Registers {
    used: Vec<u32>,
    written: Vec<u32>,
}

fn registers(ins: &Instr) -> Registers {
    let mut r = Registers {
        used: ins.guard.iter().map(|&(g, _)| g).collect(),
        written: Vec::new(),
    };
    let mut op = ins.op.clone();
    for_each_register(&mut op, &mut |x: &mut u32, role| match role {
        Role::Use => r.used.push(*x),
        Role::Def => r.written.push(*x),
    });
    // A call's or a device-runtime call's registers are not all in its operands.
    if matches!(ins.op, Op::Call { .. } | Op::Builtin { .. }) {
        r.used.push(u32::MAX);
    }
    r
}

/// Where straight-line code starts: each function's first instruction, each branch target,
/// and whatever follows a branch, return or exit.
fn block_leaders(module: &Module) -> Vec<bool> {
    let n = module.code.len();
    let mut leaders = vec![false; n + 1];
    let mut next = Vec::new();
    for f in &module.funcs {
        let (start, end) = (f.start as usize, (f.end as usize).min(n));
        if start < n {
            leaders[start] = true;
        }
        for pc in start..end {
            let ins = &module.code[pc];
            ins.successors(pc as u32, f.end, &mut next);
            if next.as_slice() != [pc as u32 + 1] {
                leaders[pc + 1] = true;
                for &target in &next {
                    leaders[target as usize] = true;
                }
            }
        }
    }
    leaders.truncate(n);
    leaders
}

fn is_float(ty: Ty) -> bool {
    matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
}

/// A `mul` the JIT may fuse into a later `add`: a float one, with no rounding modifier and no
/// saturation (a saturated product is not the one an `fma` would use).
fn product(ins: &Instr) -> Option<Product> {
    let (d, a, b, kind, fm) = match ins.op {
        Op::Bin {
            op: BinOp::MulLo,
            ty,
            d,
            a,
            b,
            fm,
        } if is_float(ty) => (d, a, b, Kind::Scalar(ty), fm),
        Op::Half2 {
            op: Half2Op::Bin(BinOp::MulLo),
            ty,
            fm,
            d,
            a,
            b,
            ..
        } => (d, a, b, Kind::Packed(ty), fm),
        _ => return None,
    };
    if fm.rnd != Rnd::Default || fm.sat || a == Opnd::Reg(d) || b == Opnd::Reg(d) {
        return None;
    }
    Some(Product {
        d,
        a,
        b,
        kind,
        ftz: fm.ftz,
        guard: ins.guard,
    })
}

/// `ins` as one `fma`, when it is an `add`/`sub` with no rounding modifier that takes in the
/// product `p` under the same guard (or the product's unguarded).
fn fuse(ins: &Instr, p: &Product) -> Option<Op> {
    let (op, kind, d, a, b, fm) = match ins.op {
        Op::Bin {
            op: op @ (BinOp::Add | BinOp::Sub),
            ty,
            d,
            a,
            b,
            fm,
        } if is_float(ty) => (op, Kind::Scalar(ty), d, a, b, fm),
        Op::Half2 {
            op: Half2Op::Bin(op @ (BinOp::Add | BinOp::Sub)),
            ty,
            fm,
            d,
            a,
            b,
            ..
        } => (op, Kind::Packed(ty), d, a, b, fm),
        _ => return None,
    };
    if fm.rnd != Rnd::Default {
        return None;
    }
    if p.kind != kind || p.ftz != fm.ftz || !(p.guard.is_none() || p.guard == ins.guard) {
        return None;
    }
    let taken = |o: Opnd| o == Opnd::Reg(p.d);
    // The product as the first operand, else as the second: `p + c`, `c + p`, `p - c`, `c - p`.
    let (addend, negate) = if taken(a) {
        let negate = Negate {
            product: false,
            addend: op == BinOp::Sub,
        };
        (b, negate)
    } else if taken(b) {
        let negate = Negate {
            product: op == BinOp::Sub,
            addend: false,
        };
        (a, negate)
    } else {
        return None;
    };
    Some(match kind {
        Kind::Scalar(ty) => Op::Mad {
            ty,
            hi: false,
            wide: false,
            d,
            a: p.a,
            b: p.b,
            c: addend,
            fm,
            negate,
        },
        Kind::Packed(ty) => Op::Half2 {
            op: Half2Op::Fma(negate),
            ty,
            fm,
            d,
            a: p.a,
            b: p.b,
            c: addend,
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::ir::{Negate, Op};
    use crate::module::Module;

    fn kernel(body: &str) -> String {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .f32 x, .param .f32 y, .param .u32 flag)\n{{\n\
             .reg .f32 %f<9>;\n.reg .b16 %rs<9>;\n.reg .b32 %r<9>;\n.reg .pred %p<3>;\n\
             ld.param.f32 %f1, [x];\nld.param.f32 %f2, [y];\nld.param.u32 %r1, [flag];\n\
             {body}\nret;\n}}\n"
        )
    }

    /// The operation each instruction of `body` became, in order (after the three loads).
    fn ops(body: &str) -> Vec<Op> {
        let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
        m.code[3..m.code.len() - 1]
            .iter()
            .map(|i| i.op.clone())
            .collect()
    }

    fn fused(op: &Op) -> Option<Negate> {
        match op {
            Op::Mad { negate, .. } => Some(*negate),
            _ => None,
        }
    }

    #[test]
    fn a_mul_and_an_add_or_sub_with_no_rounding_become_one_fma() {
        let plain = Negate::default();
        let addend = Negate {
            addend: true,
            ..plain
        };
        let product = Negate {
            product: true,
            ..plain
        };
        for (add, want) in [
            ("add.f32 %f4, %f3, %f2;", plain),
            ("add.f32 %f4, %f2, %f3;", plain),
            ("sub.f32 %f4, %f3, %f2;", addend),
            ("sub.f32 %f4, %f2, %f3;", product),
        ] {
            let ops = ops(&format!("mul.f32 %f3, %f1, %f1;\n{add}"));
            assert_eq!(fused(&ops[1]), Some(want), "{add}");
        }
    }

    #[test]
    fn a_product_that_only_adds_take_in_fuses_into_each() {
        let ops = ops("mul.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;\nsub.f32 %f5, %f3, %f2;");
        assert!(fused(&ops[1]).is_some() && fused(&ops[2]).is_some());
    }

    #[test]
    fn rounding_written_out_a_changed_operand_or_a_branch_keeps_them_apart() {
        for body in [
            "mul.rn.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;",
            "mul.f32 %f3, %f1, %f1;\nadd.rn.f32 %f4, %f3, %f2;",
            "mul.f32 %f3, %f1, %f1;\nmov.f32 %f1, %f2;\nadd.f32 %f4, %f3, %f2;",
            "mul.f32 %f3, %f1, %f1;\nsetp.ne.s32 %p1, %r1, 0;\n@%p1 bra L;\nL:\nadd.f32 %f4, %f3, %f2;",
            "@%p1 mul.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;",
            "mul.sat.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;",
            // The product is used by something else too: it stays rounded for every use.
            "mul.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;\nmov.f32 %f5, %f3;",
            "mul.ftz.f32 %f3, %f1, %f1;\nadd.f32 %f4, %f3, %f2;",
        ] {
            let ops = ops(body);
            assert!(ops.iter().all(|op| fused(op).is_none()), "{body}");
        }
    }
}
