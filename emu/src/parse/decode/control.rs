//! Control-flow opcodes: `bra`, `call` (with its `.param` arguments and return values), `ret`,
//! `exit` and `trap`.

use super::super::parser::*;
use super::opcode::Opcode;

impl Parser {
    pub(crate) fn decode_control(&mut self, o: &Opcode) -> Result<Op, EmuError> {
        let (base, ops, line, at) = (o.base, &o.ops, o.line, o.at);
        let nops = |n: usize| o.nops(n);
        let unsupported = || o.unsupported();
        Ok(match base {
            "bra" | "brx" => {
                if base == "brx" {
                    return Err(unsupported());
                }
                nops(1)?;
                match &ops[0] {
                    Raw::Name(n) => self.fixups.push((at, n.clone(), line)),
                    _ => return Err(parse_err(line, "bra needs a label")),
                }
                Op::Bra { target: 0 }
            }
            "call" => {
                let mut it = ops.iter();
                let mut rets = Vec::new();
                let mut first = it.next();
                if let Some(Raw::Paren(v)) = first {
                    for r in v {
                        rets.push(self.tparam_name(r, line)?);
                    }
                    first = it.next();
                }
                let callee = match first {
                    Some(Raw::Name(n)) => n.clone(),
                    _ => return Err(parse_err(line, "call needs a function name")),
                };
                let mut args = Vec::new();
                let mut rest = it.next();
                if let Some(Raw::Paren(v)) = rest {
                    for a in v {
                        args.push(self.tparam_name(a, line)?);
                    }
                    rest = it.next();
                }
                if let Some(Sym::Reg(r)) = self.lookup(&callee) {
                    // `call (rets), %rd, (args), proto;`: through a function's address. The
                    // prototype (or the list of possible targets) only restates what the
                    // callee says when the call runs.
                    if !matches!(rest, Some(Raw::Name(_))) || it.next().is_some() {
                        return Err(unsupported());
                    }
                    return Ok(Op::CallIndirect {
                        target: Opnd::Reg(r),
                        args,
                        rets,
                    });
                }
                if rest.is_some() {
                    return Err(unsupported());
                }
                self.calls.push(PendingCall {
                    instr: at,
                    callee,
                    args,
                    rets,
                    line,
                    loc: self.cur_loc,
                });
                Op::Call {
                    func: self.cur_func,
                    args: Vec::new(),
                    rets: Vec::new(),
                }
            }
            "ret" => Op::Ret,
            "exit" => Op::Exit,
            "trap" => Op::Trap,
            _ => unreachable!("decode sends only this family's opcodes here"),
        })
    }
}
