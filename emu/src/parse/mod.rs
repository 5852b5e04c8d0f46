//! Hand-written PTX parser and decoder: text → tokens → statements → `ir::Instr`. This file holds
//! the parser's state and its token helpers (`Module` is in `module.rs`); `emu/README.md` maps the
//! rest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{EmuError, parse_err};
use crate::ir::*;
use crate::lex::{Tok, Token, lex, parse_float, parse_int};
use crate::module::{GLOBAL_VAR_BASE, Module, RESERVED_SMEM, SINK};

mod declarations;
mod decode;
mod directives;
mod instructions;
mod operands;

use decode::Opcode;
use operands::*;

static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

/// PTX text → a `Module`, before its analyses (`load.rs` makes them).
pub(crate) fn module(ptx: &str) -> Result<Module, EmuError> {
    let toks = lex(ptx)?;
    let id = NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed);
    let mut p = Parser::new(toks, id);
    p.module()?;
    p.finish()
}

#[derive(Clone, Debug)]
enum Raw {
    Name(String),
    Num(String, bool),
    Vec(Vec<Raw>),
    Addr(Box<Raw>, i64),
    Not(Box<Raw>),
    Pipe(Box<Raw>, Box<Raw>),
    Paren(Vec<Raw>),
}

#[derive(Clone, Copy, Debug)]
enum Sym {
    Reg(u32),
    KParam(u32),
    TParam(u32),
    Shared(u32),
    DynShared,
    Local(u32),
    Global(u64),
}

/// (name, size, alignment, type) of one declared parameter.
type ParamDecl = (String, u32, u32, Option<Ty>);

struct PendingCall {
    instr: usize,
    callee: String,
    args: Vec<u32>,
    rets: Vec<u32>,
    line: u32,
    /// Index into `locs` of the call, to name its `.cu` line.
    loc: u32,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    id: u64,
    code: Vec<Instr>,
    funcs: Vec<Function>,
    func_index: HashMap<String, u32>,
    files: HashMap<u32, String>,
    locs: Vec<Loc>,
    /// For a `(file, line)` whose `.loc` was inlined: the outermost call site of its chain.
    loc_roots: HashMap<(u32, u32), (u32, u32)>,
    shared: Vec<SharedVar>,
    static_shared: u32,
    dyn_names: Vec<String>,
    globals: Vec<GlobalVar>,
    global_off: u64,
    nregs: u32,
    reg_bits: Vec<u32>,
    tparam_size: u32,
    local_size: u32,
    module_syms: HashMap<String, Sym>,
    scopes: Vec<HashMap<String, Sym>>,
    labels: HashMap<String, u32>,
    fixups: Vec<(usize, String, u32)>,
    calls: Vec<PendingCall>,
    cur_loc: u32,
    /// Function being parsed, for `call` bookkeeping.
    cur_func: u32,
}

fn align_up(v: u32, a: u32) -> u32 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a).saturating_mul(a)
    }
}

impl Parser {
    fn new(toks: Vec<Token>, id: u64) -> Parser {
        Parser {
            toks,
            pos: 0,
            id,
            code: Vec::new(),
            funcs: Vec::new(),
            func_index: HashMap::new(),
            files: HashMap::new(),
            locs: vec![Loc {
                file: u32::MAX,
                line: 0,
                inlined_at: None,
                outermost: None,
            }],
            loc_roots: HashMap::new(),
            shared: Vec::new(),
            static_shared: 0,
            dyn_names: Vec::new(),
            globals: Vec::new(),
            global_off: 0,
            nregs: 1,
            reg_bits: vec![64],
            tparam_size: 0,
            local_size: 0,
            module_syms: HashMap::new(),
            scopes: Vec::new(),
            labels: HashMap::new(),
            fixups: Vec::new(),
            calls: Vec::new(),
            cur_loc: 0,
            cur_func: 0,
        }
    }

    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map(|t| t.line)
            .unwrap_or(0)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn next(&mut self) -> Result<Tok, EmuError> {
        let line = self.line();
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t.ok_or_else(|| parse_err(line, "unexpected end of input"))
    }

    fn is_p(&self, c: char) -> bool {
        self.peek() == Some(&Tok::P(c))
    }

    fn expect_p(&mut self, c: char) -> Result<(), EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::P(x) if x == c => Ok(()),
            t => Err(parse_err(
                line,
                format!("expected `{c}`, found {}", show(&t)),
            )),
        }
    }

    fn ident(&mut self) -> Result<String, EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            t => Err(parse_err(
                line,
                format!("expected a name, found {}", show(&t)),
            )),
        }
    }

    fn int(&mut self) -> Result<u64, EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::Num(s) => {
                parse_int(&s).ok_or_else(|| parse_err(line, format!("bad integer `{s}`")))
            }
            t => Err(parse_err(
                line,
                format!("expected a number, found {}", show(&t)),
            )),
        }
    }

    fn skip_line(&mut self, line: u32) {
        while let Some(t) = self.toks.get(self.pos) {
            if t.line != line {
                break;
            }
            self.pos += 1;
        }
    }

    fn skip_past_semicolon(&mut self) {
        while let Some(t) = self.toks.get(self.pos) {
            self.pos += 1;
            if t.tok == Tok::P(';') {
                break;
            }
        }
    }

    fn skip_braced(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        self.expect_p('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.next() {
                Ok(Tok::P('{')) => depth += 1,
                Ok(Tok::P('}')) => depth -= 1,
                Ok(_) => {}
                Err(_) => return Err(parse_err(line, "unterminated `{` block")),
            }
        }
        Ok(())
    }
}

/// `_ZZ16histogram_sharedE11block_histo` → `block_histo`: NVRTC mangles function-local shared
/// arrays, and reports should use the name the student wrote.
pub(crate) fn demangle(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("_ZZ")
        && let Some(pos) = rest.rfind('E')
    {
        let tail = &rest[pos + 1..];
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse::<usize>()
            && let Some(id) = tail.get(digits.len()..digits.len() + n)
        {
            return id.to_string();
        }
    }
    name.to_string()
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Num(s) => format!("`{s}`"),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::P(c) => format!("`{c}`"),
    }
}
