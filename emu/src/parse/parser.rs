//! The parser's state and its token helpers, which every file of `parse/` reads; `mod.rs` only
//! declares the files and makes a `Module` with them.

use std::collections::HashMap;

pub(super) use crate::error::{EmuError, parse_err};
pub(super) use crate::ir::*;
pub(super) use crate::lex::{Tok, Token, parse_float, parse_int};
pub(super) use crate::module::{GLOBAL_VAR_BASE, Module, RESERVED_SMEM, SINK};

#[derive(Clone, Debug)]
pub(super) enum Raw {
    Name(String),
    Num(String, bool),
    Vec(Vec<Raw>),
    Addr(Box<Raw>, i64),
    Not(Box<Raw>),
    Pipe(Box<Raw>, Box<Raw>),
    Paren(Vec<Raw>),
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Sym {
    Reg(u32),
    KParam(u32),
    TParam(u32),
    Shared(u32),
    DynShared,
    Local(u32),
    Global(u64),
}

/// (name, size, alignment, type) of one declared parameter.
pub(super) type ParamDecl = (String, u32, u32, Option<Ty>);

pub(super) struct PendingCall {
    pub(super) instr: usize,
    pub(super) callee: String,
    pub(super) args: Vec<u32>,
    pub(super) rets: Vec<u32>,
    pub(super) line: u32,
    /// Index into `locs` of the call, to name its `.cu` line.
    pub(super) loc: u32,
}

pub(super) struct Parser {
    pub(super) toks: Vec<Token>,
    pub(super) pos: usize,
    pub(super) id: u64,
    pub(super) code: Vec<Instr>,
    pub(super) funcs: Vec<Function>,
    pub(super) func_index: HashMap<String, u32>,
    pub(super) files: HashMap<u32, String>,
    pub(super) locs: Vec<Loc>,
    /// For a `(file, line)` whose `.loc` was inlined: the outermost call site of its chain.
    pub(super) loc_roots: HashMap<(u32, u32), (u32, u32)>,
    pub(super) shared: Vec<SharedVar>,
    pub(super) static_shared: u32,
    /// Static shared variables each function names: (function, the variable's offset).
    pub(super) shared_uses: std::cell::RefCell<Vec<(u32, u32)>>,
    /// PTX lines whose instruction takes a static shared variable's address as an operand
    /// (`mov.u32 %r1, As;`), with the variable's offset: where shared pointers start.
    pub(super) shared_address_lines: std::cell::RefCell<Vec<(u32, u32)>>,
    pub(super) dyn_names: Vec<String>,
    pub(super) globals: Vec<GlobalVar>,
    pub(super) global_off: u64,
    pub(super) nregs: u32,
    pub(super) reg_bits: Vec<u32>,
    pub(super) tparam_size: u32,
    pub(super) local_size: u32,
    pub(super) module_syms: HashMap<String, Sym>,
    pub(super) scopes: Vec<HashMap<String, Sym>>,
    pub(super) labels: HashMap<String, u32>,
    pub(super) fixups: Vec<(usize, String, u32)>,
    pub(super) calls: Vec<PendingCall>,
    pub(super) cur_loc: u32,
    /// Function being parsed, for `call` bookkeeping.
    pub(super) cur_func: u32,
    /// Every function declared or defined so far, by name: what a `mov` or an initializer may
    /// take the address of before its definition.
    pub(super) declared_funcs: std::collections::HashSet<String>,
    /// Function addresses to fill in once every function has its index.
    pub(super) func_addr_fixups: Vec<FuncAddrFixup>,
}

/// A place that holds a function's address, known once the module is parsed.
pub(super) struct FuncAddrFixup {
    pub(super) name: String,
    pub(super) line: u32,
    pub(super) place: FuncAddrPlace,
}

pub(super) enum FuncAddrPlace {
    /// Bytes `offset..offset + 8` of global variable `var`'s initial value (a vtable entry).
    Global { var: usize, offset: usize },
    /// The immediate of the `mov` at this instruction.
    Mov(usize),
}

/// One element of an initializer: a number, or a name (a function's or a variable's address).
pub(super) enum InitItem {
    Num { negative: bool, text: String },
    Name(String),
}

pub(super) fn align_up(v: u32, a: u32) -> u32 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a).saturating_mul(a)
    }
}

impl Parser {
    pub(super) fn new(toks: Vec<Token>, id: u64) -> Parser {
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
            shared_uses: std::cell::RefCell::new(Vec::new()),
            shared_address_lines: std::cell::RefCell::new(Vec::new()),
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
            declared_funcs: std::collections::HashSet::new(),
            func_addr_fixups: Vec::new(),
        }
    }

    pub(super) fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map(|t| t.line)
            .unwrap_or(0)
    }

    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    pub(super) fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    pub(super) fn next(&mut self) -> Result<Tok, EmuError> {
        let line = self.line();
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t.ok_or_else(|| parse_err(line, "unexpected end of input"))
    }

    pub(super) fn is_p(&self, c: char) -> bool {
        self.peek() == Some(&Tok::P(c))
    }

    pub(super) fn expect_p(&mut self, c: char) -> Result<(), EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::P(x) if x == c => Ok(()),
            t => Err(parse_err(
                line,
                format!("expected `{c}`, found {}", show(&t)),
            )),
        }
    }

    pub(super) fn ident(&mut self) -> Result<String, EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            t => Err(parse_err(
                line,
                format!("expected a name, found {}", show(&t)),
            )),
        }
    }

    pub(super) fn int(&mut self) -> Result<u64, EmuError> {
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

    pub(super) fn skip_line(&mut self, line: u32) {
        while let Some(t) = self.toks.get(self.pos) {
            if t.line != line {
                break;
            }
            self.pos += 1;
        }
    }

    pub(super) fn skip_past_semicolon(&mut self) {
        while let Some(t) = self.toks.get(self.pos) {
            self.pos += 1;
            if t.tok == Tok::P(';') {
                break;
            }
        }
    }

    pub(super) fn skip_braced(&mut self) -> Result<(), EmuError> {
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

/// How reports name a kernel or function: `histogram`, `reduce<float, 256>` for the mangled
/// `_Z9histogramPKjPj`; an `extern "C"` name as it is.
pub fn function_display_name(name: &str) -> String {
    let Some(text) = cpp_demangle::Symbol::new(name).ok().and_then(|symbol| {
        let options = cpp_demangle::DemangleOptions::new().no_return_type();
        symbol.demangle_with_options(&options).ok()
    }) else {
        return name.to_string();
    };
    let head = match text.rfind('(') {
        Some(open) if text.ends_with(')') => &text[..open],
        _ => &text,
    };
    head.strip_prefix("void ").unwrap_or(head).to_string()
}

pub(super) fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Num(s) => format!("`{s}`"),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::P(c) => format!("`{c}`"),
    }
}
