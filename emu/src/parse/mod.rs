//! Hand-written PTX parser and decoder: text → tokens → statements → `ir::Instr`. This file holds
//! `Module`, the parser's state and its token helpers; `emu/README.md` maps the rest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{EmuError, parse_err};
use crate::ir::*;
use crate::lex::{Tok, Token, lex, parse_float, parse_int};

mod declarations;
mod decode;
mod directives;
mod instructions;
mod operands;

use decode::Opcode;
pub(crate) use operands::wide_ty;
use operands::*;

/// Module-level `.global`/`.const` variables live here, one 16 MiB slot per module, so their
/// addresses are fixed at parse time and never collide with `Emulator::alloc`.
pub(crate) const GLOBAL_VAR_BASE: u64 = 0x0000_6000_0000_0000;
static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

/// Register slot 0 is the sink `_`; writes to it are harmless and never read back.
pub(crate) const SINK: u32 = 0;

/// A parsed PTX module, ready to launch.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) id: u64,
    pub(crate) code: Vec<Instr>,
    pub(crate) funcs: Vec<Function>,
    pub(crate) files: HashMap<u32, String>,
    pub(crate) locs: Vec<Loc>,
    pub(crate) shared: Vec<SharedVar>,
    pub(crate) static_shared: u32,
    /// It reads `%reserved_smem_offset_*`, so each block gets [`RESERVED_SMEM`] bytes more.
    pub(crate) reserved_smem: bool,
    /// It reads `%clock`, `%clock64` or `%globaltimer`, whose values depend on every warp's
    /// instructions before: its launches run on one core.
    pub(crate) reads_clock: bool,
    /// Names of `extern .shared` arrays (all alias the dynamic shared memory).
    pub(crate) dyn_names: Vec<String>,
    pub(crate) globals: Vec<GlobalVar>,
    pub(crate) nregs: u32,
    pub(crate) tparam_size: u32,
    pub(crate) local_size: u32,
    /// Per instruction: a plain load whose value only seeds compare-and-swaps (`cas_seed.rs`);
    /// racecheck skips it.
    pub(crate) cas_seed: Vec<bool>,
    /// Per instruction: a strong load that polls a flag (`poll.rs`); the words it reads are
    /// flags to racecheck.
    pub(crate) polls: Vec<bool>,
    /// Per instruction: the rounds a lane there surely keeps to its block (`stretch.rs`).
    pub(crate) stretch: Vec<u32>,
}

/// Bytes of reserved shared memory a block has when its module reads `%reserved_smem_offset_*`:
/// 1 KiB, as sm_80 and later GPUs set aside for the system (cooperative groups keep multi-warp
/// tiles' barriers and reduction scratch there).
pub(crate) const RESERVED_SMEM: u32 = 1024;

impl Module {
    /// Parses NVRTC-style PTX. Errors name the PTX line.
    pub fn parse(ptx: &str) -> Result<Module, EmuError> {
        Self::parse_with_slots(ptx, true)
    }

    /// [`Module::parse`], with registers that are never live at once sharing a slot or not
    /// (`regalloc.rs`); the two must run alike, which its tests check on every committed kernel.
    pub(crate) fn parse_with_slots(ptx: &str, share_slots: bool) -> Result<Module, EmuError> {
        let toks = lex(ptx)?;
        let id = NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed);
        let mut p = Parser::new(toks, id);
        p.module()?;
        let mut module = p.finish()?;
        module.cas_seed = crate::cas_seed::analyze(&module);
        module.polls = crate::poll::analyze(&module);
        module.stretch = crate::stretch::analyze(&module);
        if share_slots {
            crate::regalloc::compact(&mut module);
        }
        Ok(module)
    }

    /// Whether a `free` can run: a freed heap block's size is gone afterwards, so findings about
    /// it must be worded before it is freed (a piped race detector's come later).
    pub(crate) fn frees_heap(&self) -> bool {
        self.calls_builtin(|f| f == crate::ir::Builtin::Free)
    }

    /// Whether the module calls a device-runtime function that `which` picks.
    pub(crate) fn calls_builtin(&self, which: impl Fn(crate::ir::Builtin) -> bool) -> bool {
        self.code
            .iter()
            .any(|i| matches!(i.op, crate::ir::Op::Builtin { func, .. } if which(func)))
    }

    /// Names of the kernels (`.entry`) in this module.
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.funcs
            .iter()
            .filter(|f| f.is_entry)
            .map(|f| f.name.as_str())
    }

    pub(crate) fn file_name(&self, file: u32) -> &str {
        self.files
            .get(&file)
            .map(String::as_str)
            .unwrap_or("<unknown>")
    }

    /// The error of a launch that reached `what` at `pc`: the kernel is the entry the
    /// instruction belongs to, or the one that called it.
    pub(crate) fn refusal(&self, pc: u32, what: &Unsupported) -> EmuError {
        let entry = self
            .funcs
            .iter()
            .find(|f| f.start <= pc && pc < f.end)
            .map_or_else(String::new, |f| f.name.clone());
        let instr = &self.code[pc as usize];
        EmuError::CannotRun {
            entry,
            opcode: what.opcode.clone(),
            place: self.place(instr),
            why: unsupported_why(what),
        }
    }

    /// `kernel.cu:12 (PTX line 345)`: the user's line for code inlined from a header.
    fn place(&self, instr: &Instr) -> String {
        match self.locs.get(instr.loc as usize) {
            Some(loc) if loc.line != 0 => {
                let (file, line) = loc.outermost.unwrap_or((loc.file, loc.line));
                format!(
                    "{}:{line} (PTX line {})",
                    self.file_name(file),
                    instr.ptx_line
                )
            }
            _ => format!("PTX line {}", instr.ptx_line),
        }
    }
}

/// Why the emulator does not run an instruction, and what to do instead.
fn unsupported_why(what: &Unsupported) -> String {
    let base = what.opcode.split('.').next().unwrap_or("");
    let family = match base {
        "tex" | "tld4" | "txq" | "istypep" => Some(
            "texture fetches (tex1Dfetch, tex2D, texture objects) are not emulated; read the data through a plain pointer instead (const T *__restrict__ or __ldg give the same read-only caching)",
        ),
        "suld" | "sust" | "sured" | "suq" => Some(
            "surface reads and writes are not emulated; use a plain pointer to the data instead",
        ),
        "wmma" | "mma" | "wgmma" | "ldmatrix" | "stmatrix" | "movmatrix" | "tcgen05" => {
            Some("tensor-core matrix instructions (wmma, mma) are not emulated")
        }
        "cp" => Some(
            "asynchronous copies (cp.async, memcpy_async, cuda::pipeline) are not emulated; copy with ordinary loads and stores",
        ),
        "mbarrier" => Some("asynchronous barriers (cuda::barrier, mbarrier) are not emulated"),
        _ => None,
    };
    match (family, &what.detail) {
        (Some(family), _) => family.to_string(),
        (None, Some(detail)) => format!("the emulator cannot read it ({detail})"),
        (None, None) => "the emulator does not know this instruction".to_string(),
    }
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
