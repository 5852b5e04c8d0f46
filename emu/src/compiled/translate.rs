//! Regions to native code with Cranelift. A region's function loops over the active lanes; for
//! each it runs the region's instructions in order, each under its guard, reading a register
//! from memory the first time the lane needs it and writing every result through to memory at
//! once (so what a region leaves is exactly what the interpreter's steps leave, guard by
//! guard). Every operation mirrors what `exec/instr/arith.rs` computes for it, through
//! `alu.rs` or the interpreter's own fast paths.

use super::regions;
use crate::alu;
use crate::exec::allocs::{LOCAL_WIN, SHARED_WIN};
use crate::ir::*;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, BlockArg, InstBuilder, MemFlags, Value, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module as _};
use std::collections::HashMap;

/// Why a module's regions could not be compiled (the module then runs in the interpreter).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompileError {
    #[error("the host is not one Cranelift generates code for: {0}")]
    Host(String),
    #[error("Cranelift could not compile a region: {0}")]
    Codegen(String),
}

fn codegen(e: impl std::fmt::Display) -> CompileError {
    CompileError::Codegen(e.to_string())
}

/// A region's native code: `code(regs, active)` runs it on a warp's register file (`regs[r]
/// [lane]` at `r * 32 + lane`) for the lanes of `active`.
pub(crate) type RegionFn = unsafe extern "C" fn(*mut u64, u32);

/// What `compile` made: each region's start, length, one more than the highest register it
/// names, and code; and the JIT module that owns the code.
pub(crate) struct Compiled {
    pub(crate) regions: Vec<(u32, u32, u32, RegionFn)>,
    pub(crate) jit: JITModule,
}

/// Compiles every region of `code`.
pub(crate) fn compile(code: &[Instr], function_starts: &[u32]) -> Result<Compiled, CompileError> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(codegen)?;
    let isa = cranelift_native::builder()
        .map_err(|e| CompileError::Host(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| CompileError::Host(e.to_string()))?;
    let mut jit = JITModule::new(JITBuilder::with_isa(
        isa,
        cranelift_module::default_libcall_names(),
    ));
    let ptr = jit.target_config().pointer_type();
    let mut ctx = jit.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut ids = Vec::new();
    for (n, (start, len)) in regions::find(code, function_starts).into_iter().enumerate() {
        ctx.func.signature.params.push(AbiParam::new(ptr));
        ctx.func.signature.params.push(AbiParam::new(types::I32));
        let id = jit
            .declare_function(&format!("region{n}"), Linkage::Local, &ctx.func.signature)
            .map_err(codegen)?;
        let body = &code[start as usize..(start + len) as usize];
        build(FunctionBuilder::new(&mut ctx.func, &mut fctx), ptr, body);
        jit.define_function(id, &mut ctx).map_err(codegen)?;
        jit.clear_context(&mut ctx);
        ids.push((start, len, id));
    }
    jit.finalize_definitions().map_err(codegen)?;
    let mut regions = Vec::with_capacity(ids.len());
    for (start, len, id) in ids {
        let f = jit.get_finalized_function(id);
        // SAFETY: `f` is the finished code of a function whose signature is (pointer, i32)
        // with no result, in the host's calling convention, which is what `extern "C"` is.
        let run = unsafe { std::mem::transmute::<*const u8, RegionFn>(f) };
        let body = &code[start as usize..(start + len) as usize];
        let rows = body
            .iter()
            .map(regions::highest_register)
            .max()
            .unwrap_or(0)
            + 1;
        regions.push((start, len, rows, run));
    }
    Ok(Compiled { regions, jit })
}

/// The lane loop around the region's instructions.
fn build(mut b: FunctionBuilder, ptr: types::Type, body: &[Instr]) {
    let entry = b.create_block();
    let head = b.create_block();
    let lane = b.create_block();
    let done = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(head, types::I32);
    b.switch_to_block(entry);
    let regs = b.block_params(entry)[0];
    let active = b.block_params(entry)[1];
    b.ins().jump(head, &[BlockArg::Value(active)]);

    b.switch_to_block(head);
    let left = b.block_params(head)[0];
    b.ins().brif(left, lane, &[], done, &[]);

    b.switch_to_block(lane);
    let l = b.ins().ctz(left);
    let l = b.ins().uextend(ptr, l);
    let offset = b.ins().ishl_imm(l, 3);
    let base = b.ins().iadd(regs, offset);
    let mut lane_code = Lane {
        b: &mut b,
        base,
        values: HashMap::new(),
    };
    for ins in body {
        lane_code.instr(ins);
    }
    let one = b.ins().iconst(types::I32, 1);
    let below = b.ins().isub(left, one);
    let rest = b.ins().band(left, below);
    b.ins().jump(head, &[BlockArg::Value(rest)]);

    b.switch_to_block(done);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize();
}

/// One lane's instructions: register values known so far (as 64-bit values) and where the
/// lane's registers are (`base + r * 256`).
struct Lane<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    base: Value,
    values: HashMap<u32, Value>,
}

const ROW: i32 = 32 * 8;

impl Lane<'_, '_> {
    fn reg(&mut self, r: u32) -> Value {
        if let Some(v) = self.values.get(&r) {
            return *v;
        }
        let v = self
            .b
            .ins()
            .load(types::I64, MemFlags::trusted(), self.base, r as i32 * ROW);
        self.values.insert(r, v);
        v
    }

    fn opnd(&mut self, o: &Opnd) -> Value {
        match o {
            Opnd::Reg(r) => self.reg(*r),
            Opnd::Imm(v) => self.k(*v),
            // `regions::compilable` keeps special registers out.
            Opnd::Sreg(_) => unreachable!("a special register in a compiled region"),
        }
    }

    fn k(&mut self, v: u64) -> Value {
        self.b.ins().iconst(types::I64, v as i64)
    }

    /// Writes `v` to register `d` where `guard` holds (`None`: always).
    fn write(&mut self, d: u32, v: Value, guard: Option<Value>) {
        let v = match guard {
            Some(g) => {
                let old = self.reg(d);
                self.b.ins().select(g, v, old)
            }
            None => v,
        };
        self.b
            .ins()
            .store(MemFlags::trusted(), v, self.base, d as i32 * ROW);
        self.values.insert(d, v);
    }

    /// `alu::mask(v, bits)`.
    fn mask(&mut self, v: Value, bits: u32) -> Value {
        if bits >= 64 {
            v
        } else {
            self.b.ins().band_imm(v, alu::mask(u64::MAX, bits) as i64)
        }
    }

    /// `alu::sext(v, bits)`.
    fn sext(&mut self, v: Value, bits: u32) -> Value {
        if bits >= 64 {
            return v;
        }
        let s = (64 - bits) as i64;
        let up = self.b.ins().ishl_imm(v, s);
        self.b.ins().sshr_imm(up, s)
    }

    /// `ival(v, t)` as 64 bits: sign-extended for signed types, masked otherwise.
    fn ival(&mut self, v: Value, t: Ty) -> Value {
        if t.signed() {
            self.sext(v, t.bits())
        } else {
            self.mask(v, t.bits())
        }
    }

    /// A boolean (`i8` 0 or 1) as a 64-bit 0 or 1.
    fn widen(&mut self, c: Value) -> Value {
        self.b.ins().uextend(types::I64, c)
    }

    /// `(v & 1 != 0) != neg`, as an `i8` condition.
    fn pred(&mut self, o: &Opnd, neg: bool) -> Value {
        let v = self.opnd(o);
        let bit = self.b.ins().band_imm(v, 1);
        let cc = if neg { IntCC::Equal } else { IntCC::NotEqual };
        self.b.ins().icmp_imm(cc, bit, 0)
    }

    fn f32(&mut self, v: Value) -> Value {
        let low = self.b.ins().ireduce(types::I32, v);
        self.b.ins().bitcast(types::F32, MemFlags::new(), low)
    }

    fn f32_bits(&mut self, v: Value) -> Value {
        let bits = self.b.ins().bitcast(types::I32, MemFlags::new(), v);
        self.b.ins().uextend(types::I64, bits)
    }

    fn instr(&mut self, ins: &Instr) {
        let guard = ins.guard.map(|(p, neg)| self.pred(&Opnd::Reg(p), neg));
        match &ins.op {
            Op::Mov { ty, d, a } => {
                let v = self.opnd(a);
                let v = if *ty == Ty::Pred {
                    self.b.ins().band_imm(v, 1)
                } else {
                    self.mask(v, ty.bits())
                };
                self.write(*d, v, guard);
            }
            Op::Bin {
                op, ty, d, a, b, ..
            } => {
                let (x, y) = (self.opnd(a), self.opnd(b));
                let v = match *ty {
                    Ty::Pred => {
                        let v = match op {
                            BinOp::And => self.b.ins().band(x, y),
                            BinOp::Or => self.b.ins().bor(x, y),
                            _ => self.b.ins().bxor(x, y),
                        };
                        self.b.ins().band_imm(v, 1)
                    }
                    Ty::F32 => {
                        let (fx, fy) = (self.f32(x), self.f32(y));
                        let r = match op {
                            BinOp::Add => self.b.ins().fadd(fx, fy),
                            BinOp::Sub => self.b.ins().fsub(fx, fy),
                            _ => self.b.ins().fmul(fx, fy),
                        };
                        // The interpreter's `nan_first`: a NaN first operand, quieted, wins.
                        let r = self.f32_bits(r);
                        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, fx, fx);
                        let x32 = self.mask(x, 32);
                        let quiet = self.b.ins().bor_imm(x32, 0x0040_0000);
                        self.b.ins().select(x_nan, quiet, r)
                    }
                    t => self.bin_int(*op, t, x, y),
                };
                self.write(*d, v, guard);
            }
            Op::Mad {
                ty,
                wide,
                d,
                a,
                b,
                c,
                ..
            } => {
                let (x, y, z) = (self.opnd(a), self.opnd(b), self.opnd(c));
                let v = if *wide {
                    // 32-bit factors, extended to a 64-bit product, plus a 64-bit addend.
                    let (x, y) = if ty.signed() {
                        (self.sext(x, 32), self.sext(y, 32))
                    } else {
                        (self.mask(x, 32), self.mask(y, 32))
                    };
                    let p = self.b.ins().imul(x, y);
                    self.b.ins().iadd(p, z)
                } else {
                    let p = self.b.ins().imul(x, y);
                    let s = self.b.ins().iadd(p, z);
                    self.mask(s, ty.bits())
                };
                self.write(*d, v, guard);
            }
            Op::Setp {
                cmp,
                ty,
                d,
                d2,
                a,
                b,
                comb,
                ..
            } => {
                let (x, y) = (self.opnd(a), self.opnd(b));
                let r = self.compare(*cmp, *ty, x, y);
                let (r1, r2) = match comb {
                    Some((bo, c, neg)) => {
                        let cv = self.pred(c, *neg);
                        let not_r = self.b.ins().bxor_imm(r, 1);
                        (self.bool_op(*bo, r, cv), self.bool_op(*bo, not_r, cv))
                    }
                    None => (r, self.b.ins().bxor_imm(r, 1)),
                };
                let r1 = self.widen(r1);
                self.write(*d, r1, guard);
                if let Some(d2) = d2 {
                    let r2 = self.widen(r2);
                    self.write(*d2, r2, guard);
                }
            }
            Op::Selp {
                ty,
                d,
                a,
                b,
                c,
                neg,
            } => {
                let p = self.pred(c, *neg);
                let (x, y) = (self.opnd(a), self.opnd(b));
                let v = self.b.ins().select(p, x, y);
                let v = self.mask(v, ty.bits());
                self.write(*d, v, guard);
            }
            Op::Cvta {
                to,
                space,
                d,
                a,
                wide,
            } => {
                let win = match space {
                    Space::Shared => SHARED_WIN,
                    Space::Local => LOCAL_WIN,
                    _ => 0,
                };
                let x = self.opnd(a);
                let w = self.k(win);
                let v = if *to {
                    self.b.ins().isub(x, w)
                } else {
                    self.b.ins().iadd(x, w)
                };
                let v = if *wide { v } else { self.mask(v, 32) };
                self.write(*d, v, guard);
            }
            _ => unreachable!("regions::compilable lets only these through"),
        }
    }

    /// The smaller of `v` and `k`, unsigned.
    fn umin_k(&mut self, v: Value, k: u32) -> Value {
        let k = self.k(k as u64);
        self.b.ins().umin(v, k)
    }

    /// `alu::bool_op` on two `i8` conditions.
    fn bool_op(&mut self, op: BoolOp, a: Value, c: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, c),
            BoolOp::Or => self.b.ins().bor(a, c),
            BoolOp::Xor => self.b.ins().bxor(a, c),
        }
    }

    /// `alu::compare` for integer types, and f32/f64 without flush-to-zero: an `i8` 0 or 1.
    fn compare(&mut self, cmp: Cmp, t: Ty, x: Value, y: Value) -> Value {
        match t {
            Ty::F32 | Ty::F64 => {
                let (x, y) = if t == Ty::F32 {
                    (self.f32(x), self.f32(y))
                } else {
                    (
                        self.b.ins().bitcast(types::F64, MemFlags::new(), x),
                        self.b.ins().bitcast(types::F64, MemFlags::new(), y),
                    )
                };
                let cc = match cmp {
                    Cmp::Eq => FloatCC::Equal,
                    Cmp::Ne => FloatCC::OrderedNotEqual,
                    Cmp::Lt => FloatCC::LessThan,
                    Cmp::Le => FloatCC::LessThanOrEqual,
                    Cmp::Gt => FloatCC::GreaterThan,
                    Cmp::Ge => FloatCC::GreaterThanOrEqual,
                    Cmp::Equ => FloatCC::UnorderedOrEqual,
                    Cmp::Neu => FloatCC::NotEqual,
                    Cmp::Ltu => FloatCC::UnorderedOrLessThan,
                    Cmp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
                    Cmp::Gtu => FloatCC::UnorderedOrGreaterThan,
                    Cmp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
                    Cmp::Num => FloatCC::Ordered,
                    Cmp::Nan => FloatCC::Unordered,
                };
                self.b.ins().fcmp(cc, x, y)
            }
            _ => {
                let (x, y) = (self.ival(x, t), self.ival(y, t));
                let s = t.signed();
                let cc = match cmp {
                    Cmp::Eq | Cmp::Equ => IntCC::Equal,
                    Cmp::Ne | Cmp::Neu => IntCC::NotEqual,
                    Cmp::Lt | Cmp::Ltu if s => IntCC::SignedLessThan,
                    Cmp::Lt | Cmp::Ltu => IntCC::UnsignedLessThan,
                    Cmp::Le | Cmp::Leu if s => IntCC::SignedLessThanOrEqual,
                    Cmp::Le | Cmp::Leu => IntCC::UnsignedLessThanOrEqual,
                    Cmp::Gt | Cmp::Gtu if s => IntCC::SignedGreaterThan,
                    Cmp::Gt | Cmp::Gtu => IntCC::UnsignedGreaterThan,
                    Cmp::Ge | Cmp::Geu if s => IntCC::SignedGreaterThanOrEqual,
                    Cmp::Ge | Cmp::Geu => IntCC::UnsignedGreaterThanOrEqual,
                    Cmp::Num => return self.b.ins().iconst(types::I8, 1),
                    Cmp::Nan => return self.b.ins().iconst(types::I8, 0),
                };
                self.b.ins().icmp(cc, x, y)
            }
        }
    }

    /// `alu::bin_int` for the operations `regions::compilable` admits.
    fn bin_int(&mut self, op: BinOp, t: Ty, a: Value, b: Value) -> Value {
        let bits = t.bits();
        match op {
            // The low `bits` of a sum, difference or product do not depend on how the
            // operands were extended.
            BinOp::Add => {
                let v = self.b.ins().iadd(a, b);
                self.mask(v, bits)
            }
            BinOp::Sub => {
                let v = self.b.ins().isub(a, b);
                self.mask(v, bits)
            }
            BinOp::MulLo => {
                let v = self.b.ins().imul(a, b);
                self.mask(v, bits)
            }
            BinOp::MulHi => {
                // At most 32 bits: the product of the extended operands fits in 64.
                let (x, y) = (self.ival(a, t), self.ival(b, t));
                let p = self.b.ins().imul(x, y);
                let h = self.b.ins().sshr_imm(p, bits as i64);
                self.mask(h, bits)
            }
            BinOp::MulWide => {
                let (x, y) = (self.ival(a, t), self.ival(b, t));
                let p = self.b.ins().imul(x, y);
                self.mask(p, bits * 2)
            }
            BinOp::And => {
                let v = self.b.ins().band(a, b);
                self.mask(v, bits)
            }
            BinOp::Or => {
                let v = self.b.ins().bor(a, b);
                self.mask(v, bits)
            }
            BinOp::Xor => {
                let v = self.b.ins().bxor(a, b);
                self.mask(v, bits)
            }
            BinOp::Shl => {
                // Cranelift shifts by the amount modulo the width; PTX clamps.
                let s = self.mask(b, 32);
                let shifted = self.b.ins().ishl(a, s);
                let shifted = self.mask(shifted, bits);
                let zero = self.k(0);
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, s, bits as i64);
                self.b.ins().select(big, zero, shifted)
            }
            BinOp::Shr => {
                let s = self.mask(b, 32);
                let s = self.umin_k(s, bits);
                if t.signed() {
                    // `sext(a) >> min(s, 63)`: at most 64 - 1 for every width.
                    let v = self.sext(a, bits);
                    let s63 = self.umin_k(s, 63);
                    let r = self.b.ins().sshr(v, s63);
                    self.mask(r, bits)
                } else {
                    let v = self.mask(a, bits);
                    let r = self.b.ins().ushr(v, s);
                    let zero = self.k(0);
                    let big =
                        self.b
                            .ins()
                            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, s, bits as i64);
                    self.b.ins().select(big, zero, r)
                }
            }
            BinOp::Min | BinOp::Max => {
                let (x, y) = (self.ival(a, t), self.ival(b, t));
                let v = match (op, t.signed()) {
                    (BinOp::Min, true) => self.b.ins().smin(x, y),
                    (BinOp::Min, false) => self.b.ins().umin(x, y),
                    (_, true) => self.b.ins().smax(x, y),
                    (_, false) => self.b.ins().umax(x, y),
                };
                self.mask(v, bits)
            }
            _ => unreachable!("regions::compilable lets only these through"),
        }
    }
}
