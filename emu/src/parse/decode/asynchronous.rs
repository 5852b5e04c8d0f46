//! Asynchronous copies and barriers: `cp.async` (with its groups and its arrival on an
//! `mbarrier`) and `mbarrier`, as `cuda::memcpy_async`, `cuda::pipeline` and `cuda::barrier`
//! compile to.

use super::super::parser::*;
use super::opcode::Opcode;

impl Parser {
    pub(crate) fn decode_async(&mut self, o: &Opcode) -> Result<Op, EmuError> {
        let (ops, line) = (&o.ops, o.line);
        let has = |m: &str| o.has(m);
        let nops = |n: usize| o.nops(n);
        let unsupported = || o.unsupported();
        // The barrier object's space: `.shared`/`.shared::cta`, or a generic address.
        let barrier_space = || match o.space {
            Space::Shared | Space::Generic => Ok(o.space),
            _ => Err(unsupported()),
        };
        if o.base == "cp" {
            if o.mods.first() != Some(&"async") {
                return Err(unsupported());
            }
            if has("bulk") {
                // Only the 1-D copy from global to this block's shared memory that completes
                // on a barrier: `cuda::memcpy_async` with a `cuda::barrier` on sm_90.
                let to_shared = o.mods.get(2) == Some(&"shared::cluster")
                    || o.mods.get(2) == Some(&"shared::cta");
                let on_barrier = o.mods.contains(&"mbarrier::complete_tx::bytes");
                if !(to_shared && o.mods.get(3) == Some(&"global") && on_barrier) {
                    return Err(unsupported());
                }
                nops(4)?;
                return Ok(Op::CpAsyncBulk {
                    dst: self.addr(&ops[0], line)?,
                    src: self.addr(&ops[1], line)?,
                    size: self.val(&ops[2], Ty::U32, line)?,
                    mbar: self.addr(&ops[3], line)?,
                });
            }
            if has("commit_group") {
                nops(0)?;
                return Ok(Op::CpAsyncCommit);
            }
            if has("wait_all") {
                nops(0)?;
                return Ok(Op::CpAsyncWait { keep: 0, all: true });
            }
            if has("wait_group") {
                nops(1)?;
                let keep = match &ops[0] {
                    Raw::Num(n, false) => parse_int(n).and_then(|v| u32::try_from(v).ok()),
                    _ => None,
                }
                .ok_or_else(|| parse_err(line, "cp.async.wait_group needs a constant"))?;
                return Ok(Op::CpAsyncWait { keep, all: false });
            }
            if has("mbarrier") {
                if !has("arrive") {
                    return Err(unsupported());
                }
                nops(1)?;
                return Ok(Op::CpAsyncArrive {
                    addr: self.addr(&ops[0], line)?,
                    space: barrier_space()?,
                    noinc: has("noinc"),
                });
            }
            if !(has("ca") || has("cg")) || !has("global") {
                return Err(unsupported());
            }
            if !(3..=4).contains(&ops.len()) {
                return Err(parse_err(line, "cp.async takes 3 or 4 operands"));
            }
            let size = match &ops[2] {
                Raw::Num(n, false) => parse_int(n).and_then(|v| u32::try_from(v).ok()),
                _ => None,
            }
            .filter(|s| matches!(s, 4 | 8 | 16))
            .ok_or_else(|| parse_err(line, "cp.async copies 4, 8 or 16 bytes"))?;
            // The fourth operand is the source size (an integer) or `ignore-src` (a predicate).
            let (mut src_size, mut ignore_src) = (None, None);
            match ops.get(3) {
                None => {}
                Some(Raw::Not(p)) => ignore_src = Some((self.dreg(p, line)?, true)),
                // Predicates are the only 8-bit registers NVCC declares.
                Some(Raw::Name(n)) if matches!(self.lookup(n), Some(Sym::Reg(r)) if self.reg_bits_of(r) == 8) =>
                {
                    ignore_src = Some((self.dreg(&ops[3], line)?, false));
                }
                Some(raw) => src_size = Some(self.val(raw, Ty::U32, line)?),
            }
            return Ok(Op::CpAsync {
                dst: self.addr(&ops[0], line)?,
                src: self.addr(&ops[1], line)?,
                size,
                src_size,
                ignore_src,
            });
        }
        // `mbarrier.*`
        if has("pending_count") {
            nops(2)?;
            return Ok(Op::MbarPendingCount {
                d: self.dreg(&ops[0], line)?,
                state: self.val(&ops[1], Ty::B64, line)?,
            });
        }
        // Barriers of other blocks of a cluster: a launch here has clusters of one block, but
        // remote arrivals name addresses this does not map.
        if o.mods.contains(&"shared::cluster") {
            return Err(unsupported());
        }
        let op = if has("init") {
            MbarOp::Init
        } else if has("inval") {
            MbarOp::Inval
        } else if has("arrive") || has("arrive_drop") {
            MbarOp::Arrive {
                drop: has("arrive_drop"),
                tx: has("expect_tx"),
            }
        } else if has("expect_tx") {
            MbarOp::ExpectTx
        } else if has("complete_tx") {
            MbarOp::CompleteTx
        } else if has("test_wait") || has("try_wait") {
            MbarOp::TestWait {
                parity: has("parity"),
            }
        } else {
            return Err(unsupported());
        };
        let (d, addr, a) = match op {
            MbarOp::Init | MbarOp::ExpectTx | MbarOp::CompleteTx => {
                nops(2)?;
                (None, &ops[0], self.val(&ops[1], Ty::U32, line)?)
            }
            MbarOp::Inval => {
                nops(1)?;
                (None, &ops[0], Opnd::Imm(0))
            }
            MbarOp::Arrive { tx, .. } => {
                if !(2..=3).contains(&ops.len()) || (tx && ops.len() != 3) {
                    return Err(parse_err(line, format!("`{}`: wrong operands", o.text)));
                }
                let count = match ops.get(2) {
                    Some(raw) => self.val(raw, Ty::U32, line)?,
                    None => Opnd::Imm(1),
                };
                (Some(self.dreg(&ops[0], line)?), &ops[1], count)
            }
            MbarOp::TestWait { parity } => {
                // A fourth operand is a suspend-time hint, which changes nothing here.
                if !(3..=4).contains(&ops.len()) {
                    return Err(parse_err(line, format!("`{}`: wrong operands", o.text)));
                }
                let ty = if parity { Ty::U32 } else { Ty::B64 };
                (
                    Some(self.dreg(&ops[0], line)?),
                    &ops[1],
                    self.val(&ops[2], ty, line)?,
                )
            }
        };
        Ok(Op::Mbarrier {
            op,
            space: barrier_space()?,
            addr: self.addr(addr, line)?,
            d,
            a,
        })
    }
}
