//! Decoding one opcode to an `ir::Op`: `Opcode` holds what every family reads, and each file
//! here decodes one family.

mod arith;
mod asynchronous;
mod collective;
mod control;
mod memory;
mod opcode;

pub(crate) use opcode::Opcode;
