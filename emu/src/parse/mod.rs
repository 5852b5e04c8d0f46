//! Hand-written PTX parser and decoder: text → tokens → statements → `ir::Instr`. `parser.rs`
//! holds the parser's state and its token helpers (`Module` is in `module.rs`); `emu/README.md`
//! maps the rest.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::EmuError;
use crate::lex::lex;
use crate::module::Module;

mod declarations;
mod decode;
mod directives;
mod instructions;
mod operands;
mod parser;

use parser::Parser;
pub(crate) use parser::demangle;
pub use parser::function_display_name;

static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

/// PTX text → a `Module`, before its analyses (`load.rs` makes them).
pub(crate) fn module(ptx: &str) -> Result<Module, EmuError> {
    module_from_tokens(lex(ptx)?)
}

/// Tokens (of one unit, or of several that `link.rs` linked) → a `Module`.
pub(crate) fn module_from_tokens(toks: Vec<crate::lex::Token>) -> Result<Module, EmuError> {
    let id = NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed);
    let mut p = Parser::new(toks, id);
    p.module()?;
    p.finish()
}
