//! Hand-written PTX parser and decoder: text → tokens → statements → `ir::Instr`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{EmuError, parse_err};
use crate::ir::*;
use crate::lex::{Tok, Token, lex, parse_float, parse_int};

/// Module-level `.global`/`.const` variables live here, one 16 MiB slot per module, so their
/// addresses are fixed at parse time and never collide with `Emulator::alloc`.
pub(crate) const GLOBAL_VAR_BASE: u64 = 0x0000_6000_0000_0000;
static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

/// Register slot 0 is the sink `_`; writes to it are harmless and never read back.
pub(crate) const SINK: u32 = 0;

/// A parsed PTX module, ready to launch.
#[derive(Debug)]
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
    /// Names of `extern .shared` arrays (all alias the dynamic shared memory).
    pub(crate) dyn_names: Vec<String>,
    pub(crate) globals: Vec<GlobalVar>,
    pub(crate) nregs: u32,
    pub(crate) tparam_size: u32,
    pub(crate) local_size: u32,
    /// Per instruction: a plain load whose value only seeds compare-and-swaps (`cas_seed.rs`);
    /// racecheck skips it.
    pub(crate) cas_seed: Vec<bool>,
}

/// Bytes of reserved shared memory a block has when its module reads `%reserved_smem_offset_*`:
/// 1 KiB, as sm_80 and later GPUs set aside for the system (cooperative groups keep multi-warp
/// tiles' barriers and reduction scratch there).
pub(crate) const RESERVED_SMEM: u32 = 1024;

impl Module {
    /// Parses NVRTC-style PTX. Errors name the PTX line.
    pub fn parse(ptx: &str) -> Result<Module, EmuError> {
        let toks = lex(ptx)?;
        let id = NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed);
        let mut p = Parser::new(toks, id);
        p.module()?;
        let mut module = p.finish()?;
        module.cas_seed = crate::cas_seed::analyze(&module);
        Ok(module)
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

    fn module(&mut self) -> Result<(), EmuError> {
        while let Some(tok) = self.peek().cloned() {
            let line = self.line();
            match tok {
                Tok::Ident(s) => match s.as_str() {
                    ".version" | ".target" | ".address_size" => self.skip_line(line),
                    ".file" => self.file_directive()?,
                    ".loc" => self.skip_line(line),
                    ".section" => {
                        self.pos += 2;
                        self.skip_braced()?;
                    }
                    ".visible" | ".extern" | ".weak" | ".common" => {
                        self.pos += 1;
                        if s == ".extern" && self.peek() == Some(&Tok::Ident(".shared".into())) {
                            self.pos += 1;
                            self.var_decl(Space::Shared, true, true)?;
                        }
                    }
                    ".entry" | ".func" => self.function(s == ".entry")?,
                    ".global" | ".const" => {
                        self.pos += 1;
                        self.var_decl(Space::Global, false, true)?;
                    }
                    ".shared" => {
                        self.pos += 1;
                        self.var_decl(Space::Shared, false, true)?;
                    }
                    ".pragma" => self.skip_past_semicolon(),
                    _ => return Err(parse_err(line, format!("unexpected `{s}` at module level"))),
                },
                t => {
                    return Err(parse_err(
                        line,
                        format!("unexpected {} at module level", show(&t)),
                    ));
                }
            }
        }
        Ok(())
    }

    fn file_directive(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        self.pos += 1;
        let n = self.int()?;
        let name = match self.next()? {
            Tok::Str(s) => s,
            t => {
                return Err(parse_err(
                    line,
                    format!("expected a file name, found {}", show(&t)),
                ));
            }
        };
        self.files.insert(n as u32, name);
        self.skip_line(line);
        Ok(())
    }

    fn loc_directive(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        self.pos += 1;
        let file = self.int()? as u32;
        let l = self.int()? as u32;
        let mut inlined_at = None;
        while let Some(t) = self.toks.get(self.pos) {
            if t.line != line {
                break;
            }
            if t.tok == Tok::Ident("inlined_at".into()) {
                self.pos += 1;
                let f = self.int()? as u32;
                let ln = self.int()? as u32;
                inlined_at = Some((f, ln));
                continue;
            }
            self.pos += 1;
        }
        // NVRTC writes the call site's own `.loc` (with its `inlined_at`) before the inlined
        // code's, so the chain up to the kernel is known by the time a line refers to it.
        let outermost = inlined_at.map(|at| self.loc_roots.get(&at).copied().unwrap_or(at));
        match outermost {
            Some(root) => self.loc_roots.insert((file, l), root),
            None => self.loc_roots.remove(&(file, l)),
        };
        let loc = Loc {
            file,
            line: l,
            inlined_at,
            outermost,
        };
        if self.locs.last() != Some(&loc) {
            self.locs.push(loc);
        }
        self.cur_loc = (self.locs.len() - 1) as u32;
        Ok(())
    }

    /// `[.align N] [.vN] .type name[dims] [= init];` after the state-space keyword.
    fn var_decl(
        &mut self,
        space: Space,
        is_extern: bool,
        module_level: bool,
    ) -> Result<(), EmuError> {
        let line = self.line();
        let mut align = 1u32;
        let mut elem = 0u32;
        let mut vec = 1u32;
        let mut ty = None;
        let name = loop {
            let s = self.ident()?;
            match s.as_str() {
                ".align" => align = self.int()? as u32,
                ".v2" => vec = 2,
                ".v4" => vec = 4,
                ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                _ if s.starts_with('.') => match Ty::parse(&s[1..]) {
                    Some(t) => {
                        elem = t.bytes();
                        ty = Some(t);
                    }
                    None => {
                        return Err(parse_err(line, format!("unknown variable modifier `{s}`")));
                    }
                },
                _ => break s,
            }
        };
        if elem == 0 {
            return Err(parse_err(line, format!("variable `{name}` has no type")));
        }
        let mut count: u64 = 1;
        let mut no_size = false;
        while self.is_p('[') {
            self.pos += 1;
            if self.is_p(']') {
                no_size = true;
            } else {
                count = count.saturating_mul(self.int()?);
            }
            self.expect_p(']')?;
        }
        let size64 = (elem as u64)
            .saturating_mul(vec as u64)
            .saturating_mul(count);
        if size64 > (1 << 30) {
            return Err(parse_err(line, format!("variable `{name}` is too large")));
        }
        let size = size64 as u32;
        let mut init = Vec::new();
        if self.is_p('=') {
            self.pos += 1;
            let mut nums = Vec::new();
            self.init_list(&mut nums)?;
            let t = ty.unwrap_or(Ty::B8);
            for (neg, s) in nums {
                let bits = num_bits(&s, neg, t)
                    .ok_or_else(|| parse_err(line, format!("bad initializer `{s}`")))?;
                init.extend_from_slice(&bits.to_le_bytes()[..t.bytes() as usize]);
            }
        }
        self.expect_p(';')?;
        let sym = match space {
            Space::Shared => {
                if is_extern || no_size {
                    self.dyn_names.push(demangle(&name));
                    Sym::DynShared
                } else {
                    let off = align_up(self.static_shared, align.max(1));
                    self.static_shared = off.saturating_add(size);
                    self.shared.push(SharedVar {
                        name: demangle(&name),
                        offset: off,
                        size,
                    });
                    Sym::Shared(off)
                }
            }
            Space::Local => {
                let off = align_up(self.local_size, align.max(1));
                self.local_size = off.saturating_add(size);
                Sym::Local(off)
            }
            Space::Param => {
                let off = align_up(self.tparam_size, align.max(elem));
                self.tparam_size = off.saturating_add(size);
                Sym::TParam(off)
            }
            _ => {
                let a = align.max(1) as u64;
                let off = self.global_off.div_ceil(a) * a;
                self.global_off = off + size as u64;
                if self.global_off >= (1 << 24) {
                    return Err(parse_err(line, "global variables exceed 16 MiB"));
                }
                let addr = GLOBAL_VAR_BASE + ((self.id & 0xff_ffff) << 24) + off;
                init.resize(size as usize, 0);
                self.globals.push(GlobalVar {
                    name: demangle(&name),
                    addr,
                    init,
                });
                Sym::Global(addr)
            }
        };
        if module_level {
            self.module_syms.insert(name, sym);
        } else if let Some(s) = self.scopes.last_mut() {
            s.insert(name, sym);
        }
        Ok(())
    }

    fn init_list(&mut self, out: &mut Vec<(bool, String)>) -> Result<(), EmuError> {
        let line = self.line();
        if self.is_p('{') {
            self.pos += 1;
            loop {
                if self.is_p('}') {
                    self.pos += 1;
                    return Ok(());
                }
                self.init_list(out)?;
                if self.is_p(',') {
                    self.pos += 1;
                }
            }
        }
        let neg = if self.is_p('-') {
            self.pos += 1;
            true
        } else {
            false
        };
        match self.next()? {
            Tok::Num(s) => {
                out.push((neg, s));
                Ok(())
            }
            t => Err(parse_err(
                line,
                format!("unsupported initializer {}", show(&t)),
            )),
        }
    }

    /// One `.param` declaration in a parameter list: returns (name, size, align, type).
    fn param_decl(&mut self) -> Result<ParamDecl, EmuError> {
        let line = self.line();
        let kw = self.ident()?;
        if kw != ".param" && kw != ".reg" {
            return Err(parse_err(line, format!("expected `.param`, found `{kw}`")));
        }
        let mut align = 0u32;
        let mut elem = 0u32;
        let mut ty = None;
        let name = loop {
            let s = self.ident()?;
            match s.as_str() {
                ".align" => align = self.int()? as u32,
                ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                _ if s.starts_with('.') => match Ty::parse(&s[1..]) {
                    Some(t) => {
                        elem = t.bytes();
                        ty = Some(t);
                    }
                    None => {
                        return Err(parse_err(line, format!("unknown parameter modifier `{s}`")));
                    }
                },
                _ => break s,
            }
        };
        let mut count = 1u64;
        while self.is_p('[') {
            self.pos += 1;
            count = count.saturating_mul(self.int()?);
            self.expect_p(']')?;
        }
        let size = (elem as u64).saturating_mul(count).min(1 << 20) as u32;
        if count > 1 {
            ty = None;
        }
        Ok((name, size, align.max(elem).max(1), ty))
    }

    fn param_list(&mut self) -> Result<Vec<ParamDecl>, EmuError> {
        self.expect_p('(')?;
        let mut v = Vec::new();
        while !self.is_p(')') {
            v.push(self.param_decl()?);
            if self.is_p(',') {
                self.pos += 1;
            }
        }
        self.expect_p(')')?;
        Ok(v)
    }

    fn function(&mut self, is_entry: bool) -> Result<(), EmuError> {
        let line = self.line();
        self.pos += 1;
        let mut rets = Vec::new();
        if !is_entry && self.is_p('(') {
            rets = self.param_list()?;
        }
        let name = self.ident()?;
        let params = if self.is_p('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        // Performance directives (.maxntid 256, 1, 1 / .noreturn / ...) up to the body.
        while !self.is_p('{') && !self.is_p(';') {
            if self.peek().is_none() {
                return Err(parse_err(line, format!("function `{name}` has no body")));
            }
            self.pos += 1;
        }
        if self.is_p(';') {
            self.pos += 1;
            return Ok(());
        }
        if self.func_index.contains_key(&name) {
            return Err(parse_err(line, format!("function `{name}` defined twice")));
        }
        let fidx = self.funcs.len() as u32;
        self.cur_func = fidx;
        self.func_index.insert(name.clone(), fidx);
        let (regs_start, tparams_start, locals_start) =
            (self.nregs, self.tparam_size, self.local_size);
        let mut scope = HashMap::new();
        let mut fparams = Vec::new();
        let mut koff = 0u32;
        for (pname, size, align, ty) in &params {
            // Kernel parameters live in the launch's parameter buffer, a `.func`'s in the
            // thread's call area.
            let (off, sym) = if is_entry {
                let off = align_up(koff, *align);
                koff = off.saturating_add(*size);
                (off, Sym::KParam(off))
            } else {
                let off = align_up(self.tparam_size, *align);
                self.tparam_size = off.saturating_add(*size);
                (off, Sym::TParam(off))
            };
            scope.insert(pname.clone(), sym);
            fparams.push(Param {
                size: *size,
                offset: off,
                ty: *ty,
            });
        }
        let mut frets = Vec::new();
        for (pname, size, align, ty) in &rets {
            let off = align_up(self.tparam_size, *align);
            self.tparam_size = off.saturating_add(*size);
            scope.insert(pname.clone(), Sym::TParam(off));
            frets.push(Param {
                size: *size,
                offset: off,
                ty: *ty,
            });
        }
        let start = self.code.len() as u32;
        self.funcs.push(Function {
            name: name.clone(),
            is_entry,
            params: fparams,
            rets: frets,
            kparam_size: koff,
            start,
            end: start,
            calls: Vec::new(),
            regs: regs_start..regs_start,
            tparams: tparams_start..tparams_start,
            locals: locals_start..locals_start,
            recursive: false,
        });
        self.scopes = vec![scope];
        self.labels.clear();
        self.fixups.clear();
        self.cur_loc = 0;
        self.body()?;
        // A function may fall off its end; give it an explicit return so the PC stays in range.
        let loc = self.cur_loc;
        self.code.push(Instr {
            op: Op::Ret,
            guard: None,
            loc,
            ptx_line: self.line(),
        });
        for (at, label, l) in std::mem::take(&mut self.fixups) {
            let target = *self
                .labels
                .get(&label)
                .ok_or_else(|| parse_err(l, format!("unknown label `{label}`")))?;
            if let Some(Instr {
                op: Op::Bra { target: t },
                ..
            }) = self.code.get_mut(at)
            {
                *t = target;
            }
        }
        let end = self.code.len() as u32;
        if let Some(f) = self.funcs.get_mut(fidx as usize) {
            f.end = end;
            f.regs.end = self.nregs;
            f.tparams.end = self.tparam_size;
            f.locals.end = self.local_size;
        }
        Ok(())
    }

    fn body(&mut self) -> Result<(), EmuError> {
        self.expect_p('{')?;
        let mut depth = 1usize;
        loop {
            let line = self.line();
            let Some(tok) = self.peek().cloned() else {
                return Err(parse_err(line, "unterminated function body"));
            };
            match tok {
                Tok::P('}') => {
                    self.pos += 1;
                    depth -= 1;
                    self.scopes.pop();
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::P('{') => {
                    self.pos += 1;
                    depth += 1;
                    self.scopes.push(HashMap::new());
                }
                Tok::P('@') => self.instruction()?,
                Tok::Ident(s) => {
                    if self.peek_at(1) == Some(&Tok::P(':')) && !s.starts_with('.') {
                        self.pos += 2;
                        self.labels.insert(s, self.code.len() as u32);
                        continue;
                    }
                    match s.as_str() {
                        ".reg" => self.reg_decl()?,
                        // `.reg.b32 x;`, as CUDA's own inline assembly writes it: `.reg .b32`.
                        _ if s.starts_with(".reg.") => {
                            let ty = s[".reg".len()..].to_string();
                            let token = &mut self.toks[self.pos];
                            token.tok = Tok::Ident(".reg".to_string());
                            let mut split = token.clone();
                            split.tok = Tok::Ident(ty);
                            self.toks.insert(self.pos + 1, split);
                            self.reg_decl()?
                        }
                        ".local" => {
                            self.pos += 1;
                            self.var_decl(Space::Local, false, false)?
                        }
                        ".shared" => {
                            self.pos += 1;
                            self.var_decl(Space::Shared, false, false)?
                        }
                        ".param" => {
                            self.pos += 1;
                            self.var_decl(Space::Param, false, false)?
                        }
                        ".global" | ".const" => {
                            self.pos += 1;
                            self.var_decl(Space::Global, false, false)?
                        }
                        ".loc" => self.loc_directive()?,
                        ".file" => self.file_directive()?,
                        ".pragma" => self.skip_past_semicolon(),
                        _ if s.starts_with('.') => {
                            return Err(parse_err(
                                line,
                                format!("unsupported directive `{s}` in function body"),
                            ));
                        }
                        _ => self.instruction()?,
                    }
                }
                t => {
                    return Err(parse_err(
                        line,
                        format!("unexpected {} in function body", show(&t)),
                    ));
                }
            }
        }
    }

    fn reg_decl(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        self.pos += 1;
        let mut bits = 0u32;
        let mut vec = 1u32;
        loop {
            let s = self.ident()?;
            if s == ".v2" {
                vec = 2;
                continue;
            }
            if s == ".v4" {
                vec = 4;
                continue;
            }
            if let Some(t) = s.strip_prefix('.').and_then(Ty::parse) {
                bits = t.bits();
                continue;
            }
            if bits == 0 {
                return Err(parse_err(line, format!("register `{s}` has no type")));
            }
            if vec != 1 {
                return Err(parse_err(line, "vector registers are not supported"));
            }
            if self.is_p('<') {
                self.pos += 1;
                let n = self.int()?;
                self.expect_p('>')?;
                if n > 1_000_000 {
                    return Err(parse_err(line, "too many registers"));
                }
                for i in 0..n {
                    self.add_reg(format!("{s}{i}"), bits);
                }
            } else {
                self.add_reg(s, bits);
            }
            if self.is_p(',') {
                self.pos += 1;
                continue;
            }
            self.expect_p(';')?;
            return Ok(());
        }
    }

    fn add_reg(&mut self, name: String, bits: u32) {
        let slot = self.nregs;
        self.nregs += 1;
        self.reg_bits.push(bits);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name, Sym::Reg(slot));
        }
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(*v);
            }
        }
        self.module_syms.get(name).copied()
    }

    fn raw_operand(&mut self) -> Result<Raw, EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::P('{') => {
                let mut v = Vec::new();
                while !self.is_p('}') {
                    v.push(self.raw_operand()?);
                    if self.is_p(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Raw::Vec(v))
            }
            Tok::P('(') => {
                let mut v = Vec::new();
                while !self.is_p(')') {
                    v.push(self.raw_operand()?);
                    if self.is_p(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Raw::Paren(v))
            }
            Tok::P('[') => {
                let base = if self.is_p('-') || matches!(self.peek(), Some(Tok::Num(_))) {
                    Raw::Num("0".into(), false)
                } else {
                    self.raw_operand()?
                };
                let mut off: i64 = 0;
                while !self.is_p(']') {
                    let neg = match self.next()? {
                        Tok::P('+') => {
                            if self.is_p('-') {
                                self.pos += 1;
                                true
                            } else {
                                false
                            }
                        }
                        Tok::P('-') => true,
                        Tok::Num(s) => {
                            off = off.wrapping_add(
                                parse_int(&s)
                                    .ok_or_else(|| parse_err(line, "bad address offset"))?
                                    as i64,
                            );
                            continue;
                        }
                        t => {
                            return Err(parse_err(
                                line,
                                format!("bad address: unexpected {}", show(&t)),
                            ));
                        }
                    };
                    let v = self.int()? as i64;
                    off = if neg {
                        off.wrapping_sub(v)
                    } else {
                        off.wrapping_add(v)
                    };
                }
                self.pos += 1;
                Ok(Raw::Addr(Box::new(base), off))
            }
            Tok::P('!') => Ok(Raw::Not(Box::new(self.raw_operand()?))),
            Tok::P('-') => match self.next()? {
                Tok::Num(s) => Ok(Raw::Num(s, true)),
                t => Err(parse_err(
                    line,
                    format!("expected a number after `-`, found {}", show(&t)),
                )),
            },
            Tok::Num(s) => Ok(Raw::Num(s, false)),
            Tok::Ident(s) => {
                if self.is_p('|') {
                    self.pos += 1;
                    let b = self.raw_operand()?;
                    return Ok(Raw::Pipe(Box::new(Raw::Name(s)), Box::new(b)));
                }
                Ok(Raw::Name(s))
            }
            t => Err(parse_err(
                line,
                format!("unexpected {} in operand", show(&t)),
            )),
        }
    }

    fn instruction(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        let mut guard = None;
        if self.is_p('@') {
            self.pos += 1;
            let neg = if self.is_p('!') {
                self.pos += 1;
                true
            } else {
                false
            };
            let g = self.ident()?;
            match self.lookup(&g) {
                Some(Sym::Reg(r)) => guard = Some((r, neg)),
                _ => return Err(parse_err(line, format!("unknown guard predicate `{g}`"))),
            }
        }
        let opcode = self.ident()?;
        let at = self.code.len();
        // An instruction the emulator cannot take becomes `Op::Unsupported`, refused only by a
        // launch that can reach it: one texture fetch must not stop the file's other kernels.
        let unsupported = |opcode: &str, error: EmuError| {
            let detail = match error {
                EmuError::Unsupported { .. } => None,
                EmuError::Parse { message, .. } => Some(message),
                other => Some(other.to_string()),
            };
            Op::Unsupported(Box::new(Unsupported {
                opcode: opcode.to_string(),
                detail,
            }))
        };
        let op = match self.operands(&opcode, line) {
            Ok(ops) => self
                .decode(&opcode, ops, line, at)
                .unwrap_or_else(|error| unsupported(&opcode, error)),
            Err(error) => {
                while self.peek().is_some_and(|t| *t != Tok::P(';')) {
                    self.pos += 1;
                }
                if self.peek().is_none() {
                    return Err(error);
                }
                self.pos += 1;
                unsupported(&opcode, error)
            }
        };
        self.code.push(Instr {
            op,
            guard,
            loc: self.cur_loc,
            ptx_line: line,
        });
        Ok(())
    }

    /// `add.f16x2` and friends (see [`Op::Half2`]); rounding is to nearest, as `.rn` or no
    /// rounding modifier says.
    fn half2(
        &self,
        base: &str,
        ty: Ty,
        ops: &[Raw],
        line: u32,
        sat: bool,
        ftz: bool,
    ) -> Result<Op, EmuError> {
        let unsupported = || EmuError::Unsupported {
            instruction: format!("{base}.{}x2", ty.name()),
            line,
        };
        let op = match base {
            "pack" => Half2Op::PackFromF32,
            "add" => Half2Op::Bin(BinOp::Add),
            "sub" => Half2Op::Bin(BinOp::Sub),
            "mul" => Half2Op::Bin(BinOp::MulLo),
            "min" => Half2Op::Bin(BinOp::Min),
            "max" => Half2Op::Bin(BinOp::Max),
            "fma" => Half2Op::Fma,
            "neg" => Half2Op::Un(UnOp::Neg),
            "abs" => Half2Op::Un(UnOp::Abs),
            _ => return Err(unsupported()),
        };
        let arity = match op {
            Half2Op::Bin(_) | Half2Op::PackFromF32 => 3,
            Half2Op::Fma => 4,
            Half2Op::Un(_) => 2,
        };
        if ops.len() != arity {
            return Err(parse_err(
                line,
                format!(
                    "`{base}.{}x2` takes {arity} operands, found {}",
                    ty.name(),
                    ops.len()
                ),
            ));
        }
        let operand = |i: usize| -> Result<Opnd, EmuError> {
            match ops.get(i) {
                Some(raw) => self.val(raw, Ty::B32, line),
                None => Ok(Opnd::Imm(0)),
            }
        };
        Ok(Op::Half2 {
            op,
            ty,
            fm: FMod {
                ftz,
                sat,
                rnd: Rnd::Default,
            },
            d: self.dreg(&ops[0], line)?,
            a: operand(1)?,
            b: operand(2)?,
            c: operand(3)?,
        })
    }

    /// The operands of `opcode`, up to and including its `;`.
    fn operands(&mut self, opcode: &str, line: u32) -> Result<Vec<Raw>, EmuError> {
        let mut ops = Vec::new();
        while !self.is_p(';') {
            if self.peek().is_none() {
                return Err(parse_err(line, format!("`{opcode}` is missing its `;`")));
            }
            ops.push(self.raw_operand()?);
            if self.is_p(',') {
                self.pos += 1;
            } else if !self.is_p(';') {
                let l = self.line();
                return Err(parse_err(l, format!("expected `,` or `;` in `{opcode}`")));
            }
        }
        self.pos += 1;
        Ok(ops)
    }

    fn finish(mut self) -> Result<Module, EmuError> {
        for c in std::mem::take(&mut self.calls) {
            let Some(&fidx) = self.func_index.get(&c.callee) else {
                self.builtin_call(&c)?;
                continue;
            };
            let callee = &self.funcs[fidx as usize];
            if callee.is_entry {
                return Err(parse_err(c.line, format!("call to kernel `{}`", c.callee)));
            }
            if callee.params.len() != c.args.len() || callee.rets.len() != c.rets.len() {
                return Err(parse_err(
                    c.line,
                    format!("wrong number of arguments in call to `{}`", c.callee),
                ));
            }
            let args = c
                .args
                .iter()
                .zip(&callee.params)
                .map(|(&from, p)| (from, p.offset, p.size))
                .collect();
            let rets = c
                .rets
                .iter()
                .zip(&callee.rets)
                .map(|(&to, p)| (p.offset, to, p.size))
                .collect();
            if let Some(Instr {
                op:
                    Op::Call {
                        func,
                        args: a,
                        rets: r,
                    },
                ..
            }) = self.code.get_mut(c.instr)
            {
                *func = fidx;
                *a = args;
                *r = rets;
            }
            // Record the call edge for the recursion check at launch.
            let caller = self
                .funcs
                .iter()
                .position(|f| (f.start as usize) <= c.instr && c.instr < f.end as usize);
            if let Some(ci) = caller {
                self.funcs[ci].calls.push(fidx);
            }
        }
        self.mark_recursive();
        Ok(Module {
            id: self.id,
            code: self.code,
            funcs: self.funcs,
            files: self.files,
            locs: self.locs,
            shared: self.shared,
            static_shared: self.static_shared,
            reserved_smem: self.toks.iter().any(
                |t| matches!(&t.tok, Tok::Ident(name) if name.starts_with("%reserved_smem_offset")),
            ),
            dyn_names: self.dyn_names,
            globals: self.globals,
            nregs: self.nregs,
            tparam_size: self.tparam_size,
            local_size: self.local_size,
            cas_seed: Vec::new(),
        })
    }

    /// A call to a function the PTX only declares: one of the runtime functions the emulator
    /// provides, or a clear refusal naming the function and the `.cu` line of the call.
    fn builtin_call(&mut self, c: &PendingCall) -> Result<(), EmuError> {
        let Some(func) = Builtin::by_name(&c.callee) else {
            let place = match self.locs.get(c.loc as usize) {
                Some(l) if l.line != 0 => format!(
                    "{}:{}",
                    self.files
                        .get(&l.file)
                        .map(String::as_str)
                        .unwrap_or("<unknown>"),
                    l.line
                ),
                _ => format!("PTX line {}", c.line),
            };
            return Err(EmuError::Unsupported {
                instruction: format!(
                    "call to `{}` at {place}, a function the PTX declares but does not define (the emulator provides printf, assert, malloc and free)",
                    c.callee
                ),
                line: c.line,
            });
        };
        if func.arity() != (c.args.len(), c.rets.len()) {
            return Err(parse_err(
                c.line,
                format!("wrong number of arguments in call to `{}`", c.callee),
            ));
        }
        if let Some(ins) = self.code.get_mut(c.instr) {
            ins.op = Op::Builtin {
                func,
                args: c.args.clone(),
                ret: c.rets.first().copied(),
            };
        }
        Ok(())
    }

    /// Marks the functions that can reach themselves through calls.
    fn mark_recursive(&mut self) {
        let n = self.funcs.len();
        for f in 0..n {
            let mut seen = vec![false; n];
            let mut todo: Vec<u32> = self.funcs[f].calls.clone();
            while let Some(g) = todo.pop() {
                let g = g as usize;
                if g == f {
                    self.funcs[f].recursive = true;
                    break;
                }
                if g < n && !seen[g] {
                    seen[g] = true;
                    todo.extend_from_slice(&self.funcs[g].calls);
                }
            }
        }
    }

    // ---- operand decoding ----

    fn sreg(name: &str) -> Option<Sreg> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((base, d)) = name.rsplit_once('.') {
            let d = dim(d)?;
            return Some(match base {
                "%tid" => Sreg::Tid(d),
                "%ntid" => Sreg::Ntid(d),
                "%ctaid" | "%clusterid" => Sreg::Ctaid(d),
                "%nctaid" | "%nclusterid" => Sreg::Nctaid(d),
                "%cluster_ctaid" => Sreg::Zero,
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => Sreg::LaneId,
            "%warpid" => Sreg::WarpId,
            "%nwarpid" => Sreg::NWarpId,
            "%clock" => Sreg::Clock,
            "%clock64" | "%globaltimer" => Sreg::Clock64,
            "%globaltimer_lo" => Sreg::Clock,
            "%globaltimer_hi" => Sreg::ClockHi,
            "%lanemask_eq" => Sreg::LaneMaskEq,
            "%lanemask_lt" => Sreg::LaneMaskLt,
            "%lanemask_le" => Sreg::LaneMaskLe,
            "%lanemask_gt" => Sreg::LaneMaskGt,
            "%lanemask_ge" => Sreg::LaneMaskGe,
            "%dynamic_smem_size" => Sreg::DynSmem,
            "%total_smem_size" => Sreg::TotalSmem,
            "%smid" | "%gridid" | "%nsmid" => Sreg::Zero,
            "%reserved_smem_offset_begin" | "%reserved_smem_offset_0" => Sreg::ReservedSmem(0),
            "%reserved_smem_offset_1" => Sreg::ReservedSmem(8),
            "%reserved_smem_offset_end" => {
                Sreg::ReservedSmem(u16::try_from(RESERVED_SMEM).unwrap_or(0))
            }
            // An ordinary launch makes every block a cluster of one.
            "%cluster_ctarank" | "%is_explicit_cluster" => Sreg::Zero,
            // The driver's environment registers. A cooperative launch puts the grid barrier's
            // address in %envreg1/%envreg2; an ordinary launch, the only kind here, leaves them
            // 0, and cooperative_groups' grid sync then traps, as on a GPU.
            _ if name
                .strip_prefix("%envreg")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n < 32) =>
            {
                Sreg::Zero
            }
            _ => return None,
        })
    }

    fn val(&self, r: &Raw, ty: Ty, line: u32) -> Result<Opnd, EmuError> {
        match r {
            Raw::Num(s, neg) => num_bits(s, *neg, ty)
                .map(Opnd::Imm)
                .ok_or_else(|| parse_err(line, format!("bad number `{s}`"))),
            Raw::Name(n) => {
                if let Some(sr) = Self::sreg(n) {
                    return Ok(Opnd::Sreg(sr));
                }
                // PTX's predefined constant for `warpSize`; sizes of a one-block cluster and
                // of the reserved shared memory.
                match n.as_str() {
                    "WARP_SZ" => return Ok(Opnd::Imm(32)),
                    "%cluster_nctarank" | "%cluster_nctaid.x" | "%cluster_nctaid.y"
                    | "%cluster_nctaid.z" => return Ok(Opnd::Imm(1)),
                    "%reserved_smem_offset_cap" => return Ok(Opnd::Imm(RESERVED_SMEM.into())),
                    _ => {}
                }
                match self.lookup(n) {
                    Some(Sym::Reg(r)) => Ok(Opnd::Reg(r)),
                    Some(Sym::Shared(o)) => Ok(Opnd::Imm(o as u64)),
                    Some(Sym::DynShared) => Ok(Opnd::Sreg(Sreg::DynSmemBase)),
                    Some(Sym::Local(o)) => Ok(Opnd::Imm(o as u64)),
                    Some(Sym::Global(a)) => Ok(Opnd::Imm(a)),
                    Some(Sym::KParam(_) | Sym::TParam(_)) => Err(EmuError::Unsupported {
                        instruction: format!("taking the address of parameter `{n}`"),
                        line,
                    }),
                    None => Err(parse_err(line, format!("unknown name `{n}`"))),
                }
            }
            _ => Err(parse_err(line, "expected a register or constant")),
        }
    }

    fn dreg(&self, r: &Raw, line: u32) -> Result<u32, EmuError> {
        match r {
            Raw::Name(n) if n == "_" => Ok(SINK),
            Raw::Name(n) => match self.lookup(n) {
                Some(Sym::Reg(r)) => Ok(r),
                _ => Err(parse_err(line, format!("`{n}` is not a register"))),
            },
            _ => Err(parse_err(line, "expected a destination register")),
        }
    }

    fn reg_bits_of(&self, slot: u32) -> u32 {
        self.reg_bits.get(slot as usize).copied().unwrap_or(64)
    }

    fn addr(&self, r: &Raw, line: u32) -> Result<Addr, EmuError> {
        let (base, off) = match r {
            Raw::Addr(b, o) => (b.as_ref(), *o),
            _ => return Err(parse_err(line, "expected an address `[...]`")),
        };
        if let Raw::Name(n) = base {
            match self.lookup(n) {
                Some(Sym::KParam(o)) => {
                    return Ok(Addr::KParam((o as i64).wrapping_add(off) as u32));
                }
                Some(Sym::TParam(o)) => {
                    return Ok(Addr::TParam((o as i64).wrapping_add(off) as u32));
                }
                _ => {}
            }
        }
        Ok(Addr::Reg {
            base: self.val(base, Ty::U64, line)?,
            off,
        })
    }

    fn decode(
        &mut self,
        opcode: &str,
        ops: Vec<Raw>,
        line: u32,
        at: usize,
    ) -> Result<Op, EmuError> {
        let unsupported = || EmuError::Unsupported {
            instruction: opcode.to_string(),
            line,
        };
        let mut parts = opcode.split('.');
        let base = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        let has = |m: &str| mods.contains(&m);
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let ty = types.last().copied();
        let need_ty = || ty.ok_or_else(|| parse_err(line, format!("`{opcode}` has no type")));
        let nops = |n: usize| -> Result<(), EmuError> {
            if ops.len() == n {
                Ok(())
            } else {
                Err(parse_err(
                    line,
                    format!("`{opcode}` takes {n} operands, found {}", ops.len()),
                ))
            }
        };
        let packed = if has("f16x2") {
            Some(Ty::F16)
        } else if has("bf16x2") {
            Some(Ty::BF16)
        } else {
            None
        };
        let packed_atom = matches!(base, "atom" | "red") && packed.is_some();
        if let Some(half) = packed.filter(|_| !packed_atom) {
            if has("rz") || has("rm") || has("rp") {
                return Err(unsupported());
            }
            // `cvt.rn.f16x2.f32 d, a, b`: a pair of f32s packed into halves.
            let base = if base == "cvt" && mods.last() == Some(&"f32") {
                "pack"
            } else {
                base
            };
            return self.half2(base, half, &ops, line, has("sat"), has("ftz"));
        }
        let fm = FMod {
            ftz: has("ftz"),
            sat: has("sat"),
            rnd: if has("rz") {
                Rnd::Rz
            } else if has("rm") {
                Rnd::Rm
            } else if has("rp") {
                Rnd::Rp
            } else {
                Rnd::Default
            },
        };
        let space = if has("global") {
            Space::Global
        } else if has("shared") || mods.iter().any(|m| m.starts_with("shared::")) {
            Space::Shared
        } else if has("local") {
            Space::Local
        } else if has("param") {
            Space::Param
        } else if has("const") {
            Space::Const
        } else {
            Space::Generic
        };
        Ok(match base {
            "mov" => {
                nops(2)?;
                let t = need_ty()?;
                match (&ops[0], &ops[1]) {
                    (Raw::Vec(ds), a) => {
                        let part_bits = t.bits() / ds.len().max(1) as u32;
                        if !matches!(ds.len(), 2 | 4) || !matches!(part_bits, 8 | 16 | 32) {
                            return Err(parse_err(line, "bad vector mov"));
                        }
                        let ds = ds
                            .iter()
                            .map(|d| match d {
                                Raw::Name(n) if n == "_" => Ok(None),
                                d => self.dreg(d, line).map(Some),
                            })
                            .collect::<Result<_, _>>()?;
                        Op::Unpack {
                            part_bits,
                            ds,
                            a: self.val(a, t, line)?,
                        }
                    }
                    (d, Raw::Vec(parts)) => {
                        let part_bits = t.bits() / parts.len().max(1) as u32;
                        if !matches!(parts.len(), 2 | 4) {
                            return Err(parse_err(line, "bad vector mov"));
                        }
                        let pt = match part_bits {
                            8 => Ty::B8,
                            16 => Ty::B16,
                            32 => Ty::B32,
                            _ => return Err(parse_err(line, "bad vector mov")),
                        };
                        Op::Pack {
                            part_bits,
                            d: self.dreg(d, line)?,
                            parts: parts
                                .iter()
                                .map(|p| self.val(p, pt, line))
                                .collect::<Result<_, _>>()?,
                        }
                    }
                    (d, a) => {
                        if let Raw::Name(n) = a
                            && self.func_index.contains_key(n)
                        {
                            return Err(unsupported());
                        }
                        Op::Mov {
                            ty: t,
                            d: self.dreg(d, line)?,
                            a: self.val(a, t, line)?,
                        }
                    }
                }
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" => {
                if has("cc") || has("relu") || has("NaN") || has("xorsign") {
                    return Err(unsupported());
                }
                nops(3)?;
                let t = need_ty()?;
                let op = match base {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "mul" if has("hi") => BinOp::MulHi,
                    "mul" if has("wide") => BinOp::MulWide,
                    "mul" => BinOp::MulLo,
                    "div" => BinOp::Div,
                    "rem" => BinOp::Rem,
                    "min" => BinOp::Min,
                    "max" => BinOp::Max,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    "shl" => BinOp::Shl,
                    "shr" => BinOp::Shr,
                    _ => BinOp::CopySign,
                };
                let half_supported = matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::MulLo | BinOp::Min | BinOp::Max
                ) && !fm.directed();
                if (t.half() && !half_supported)
                    || (fm.directed() && !matches!(op, BinOp::Add | BinOp::Sub | BinOp::MulLo))
                {
                    return Err(unsupported());
                }
                // Shift amounts are always u32.
                let bt = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    Ty::U32
                } else {
                    t
                };
                Op::Bin {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], bt, line)?,
                    fm,
                }
            }
            "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt"
            | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                nops(2)?;
                let t = need_ty()?;
                if (t.half() && !matches!(base, "neg" | "abs")) || fm.directed() {
                    return Err(unsupported());
                }
                let op = match base {
                    "neg" => UnOp::Neg,
                    "abs" => UnOp::Abs,
                    "not" => UnOp::Not,
                    "cnot" => UnOp::CNot,
                    "popc" => UnOp::Popc,
                    "clz" => UnOp::Clz,
                    "brev" => UnOp::Brev,
                    "bfind" if has("shiftamt") => UnOp::BfindShiftAmt,
                    "bfind" => UnOp::Bfind,
                    "sqrt" => UnOp::Sqrt,
                    "rsqrt" => UnOp::Rsqrt,
                    "rcp" => UnOp::Rcp,
                    "ex2" => UnOp::Ex2,
                    "lg2" => UnOp::Lg2,
                    "sin" => UnOp::Sin,
                    "cos" => UnOp::Cos,
                    _ => UnOp::Tanh,
                };
                Op::Un {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    fm,
                }
            }
            "mad" | "fma" => {
                if has("cc") || has("relu") {
                    return Err(unsupported());
                }
                nops(4)?;
                let t = need_ty()?;
                let half_refused = t.half() && (base == "mad" || fm.directed());
                if half_refused || has("24") || (t == Ty::F64 && fm.directed()) {
                    return Err(unsupported());
                }
                let wide = has("wide");
                let ct = if wide { wide_ty(t) } else { t };
                Op::Mad {
                    ty: t,
                    hi: has("hi"),
                    wide,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], ct, line)?,
                    fm,
                }
            }
            "setp" | "set" => {
                let cmp = mods
                    .iter()
                    .find_map(|m| parse_cmp(m))
                    .ok_or_else(unsupported)?;
                let comb = mods.iter().find_map(|m| match *m {
                    "and" => Some(BoolOp::And),
                    "or" => Some(BoolOp::Or),
                    "xor" => Some(BoolOp::Xor),
                    _ => None,
                });
                let t = need_ty()?;
                if base == "set" {
                    if comb.is_some() || types.len() != 2 {
                        return Err(unsupported());
                    }
                    nops(3)?;
                    return Ok(Op::Set {
                        cmp,
                        dty: types[0],
                        ty: t,
                        d: self.dreg(&ops[0], line)?,
                        a: self.val(&ops[1], t, line)?,
                        b: self.val(&ops[2], t, line)?,
                    });
                }
                nops(if comb.is_some() { 4 } else { 3 })?;
                let (d, d2) = match &ops[0] {
                    Raw::Pipe(a, b) => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                let comb = match comb {
                    Some(bo) => {
                        let (c, neg) = match &ops[3] {
                            Raw::Not(x) => (x.as_ref(), true),
                            x => (x, false),
                        };
                        Some((bo, self.val(c, Ty::Pred, line)?, neg))
                    }
                    None => None,
                };
                Op::Setp {
                    cmp,
                    ty: t,
                    d,
                    d2,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    comb,
                    ftz: fm.ftz,
                }
            }
            "selp" => {
                nops(4)?;
                let t = need_ty()?;
                let (c, neg) = match &ops[3] {
                    Raw::Not(x) => (x.as_ref(), true),
                    x => (x, false),
                };
                Op::Selp {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(c, Ty::Pred, line)?,
                    neg,
                }
            }
            "slct" => {
                nops(4)?;
                if types.len() != 2 {
                    return Err(unsupported());
                }
                let (t, ct) = (types[0], types[1]);
                Op::Slct {
                    ty: t,
                    cty: ct,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], ct, line)?,
                }
            }
            "cvt" => {
                nops(2)?;
                if types.len() != 2
                    || has("relu")
                    || mods.iter().any(|m| {
                        m.starts_with("f16x2")
                            || m.starts_with("bf16x2")
                            || m.starts_with("e4m3")
                            || m.starts_with("e5m2")
                            || m.starts_with("tf32")
                    })
                {
                    return Err(unsupported());
                }
                let rnd = mods
                    .iter()
                    .find_map(|m| {
                        Some(match *m {
                            "rn" => Rnd::Rn,
                            "rz" => Rnd::Rz,
                            "rm" => Rnd::Rm,
                            "rp" => Rnd::Rp,
                            "rni" => Rnd::Rni,
                            "rzi" => Rnd::Rzi,
                            "rmi" => Rnd::Rmi,
                            "rpi" => Rnd::Rpi,
                            _ => return None,
                        })
                    })
                    .unwrap_or(Rnd::Default);
                let (dty, sty) = (types[0], types[1]);
                let d = self.dreg(&ops[0], line)?;
                let dbits = self.reg_bits_of(d);
                Op::Cvt {
                    dty,
                    sty,
                    rnd,
                    fm,
                    d,
                    a: self.val(&ops[1], sty, line)?,
                    dbits,
                }
            }
            "cvta" => {
                nops(2)?;
                let t = need_ty()?;
                Op::Cvta {
                    to: has("to"),
                    space,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    wide: t.bits() == 64,
                }
            }
            "bfe" => {
                nops(4)?;
                let t = need_ty()?;
                Op::Bfe {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], Ty::U32, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                }
            }
            "bfi" => {
                nops(5)?;
                let t = need_ty()?;
                Op::Bfi {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    f: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                    e: self.val(&ops[4], Ty::U32, line)?,
                }
            }
            "prmt" => {
                nops(4)?;
                if mods.len() != 1 {
                    return Err(unsupported());
                }
                Op::Prmt {
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], Ty::B32, line)?,
                    b: self.val(&ops[2], Ty::B32, line)?,
                    c: self.val(&ops[3], Ty::B32, line)?,
                }
            }
            "testp" => {
                nops(2)?;
                let t = need_ty()?;
                let tp = mods
                    .iter()
                    .find_map(|m| {
                        Some(match *m {
                            "finite" => TestP::Finite,
                            "infinite" => TestP::Infinite,
                            "number" => TestP::Number,
                            "notanumber" => TestP::NotANumber,
                            "normal" => TestP::Normal,
                            "subnormal" => TestP::Subnormal,
                            _ => return None,
                        })
                    })
                    .ok_or_else(unsupported)?;
                Op::TestP {
                    t: tp,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                }
            }
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
                if base == "st" {
                    let addr = self.addr(&ops[0], line)?;
                    let vals = match &ops[1] {
                        Raw::Vec(v) => v
                            .iter()
                            .map(|x| self.val(x, t, line))
                            .collect::<Result<Vec<_>, _>>()?,
                        x => vec![self.val(x, t, line)?],
                    };
                    check_space_addr(space, addr, line)?;
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
                    check_space_addr(space, addr, line)?;
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
                check_space_addr(space, addr, line)?;
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
                }
            }
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
                if self.lookup(&callee).is_some() {
                    // Indirect call through a register.
                    return Err(unsupported());
                }
                let mut args = Vec::new();
                if let Some(Raw::Paren(v)) = it.next() {
                    for a in v {
                        args.push(self.tparam_name(a, line)?);
                    }
                }
                if it.next().is_some() {
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
            "bar" | "barrier" => {
                if has("warp") {
                    nops(1)?;
                    return Ok(Op::BarWarp {
                        mask: self.val(&ops[0], Ty::B32, line)?,
                    });
                }
                let kind = if has("red") {
                    if has("popc") {
                        BarKind::RedPopc
                    } else if has("and") {
                        BarKind::RedAnd
                    } else if has("or") {
                        BarKind::RedOr
                    } else {
                        return Err(unsupported());
                    }
                } else if has("arrive") {
                    BarKind::Arrive
                } else if has("sync") || mods.is_empty() {
                    BarKind::Sync
                } else {
                    return Err(unsupported());
                };
                match kind {
                    BarKind::Sync | BarKind::Arrive => {
                        if ops.is_empty() || ops.len() > 2 {
                            return Err(parse_err(line, "bar takes 1 or 2 operands"));
                        }
                        Op::Bar {
                            kind,
                            id: self.val(&ops[0], Ty::U32, line)?,
                            count: ops.get(1).map(|c| self.val(c, Ty::U32, line)).transpose()?,
                            d: None,
                            p: None,
                        }
                    }
                    _ => {
                        // bar.red.op.type d, a{, b}, {!}c
                        if ops.len() != 3 && ops.len() != 4 {
                            return Err(parse_err(line, "bar.red takes 3 or 4 operands"));
                        }
                        let last = &ops[ops.len() - 1];
                        let (pc, neg) = match last {
                            Raw::Not(x) => (x.as_ref(), true),
                            x => (x, false),
                        };
                        Op::Bar {
                            kind,
                            id: self.val(&ops[1], Ty::U32, line)?,
                            count: if ops.len() == 4 {
                                Some(self.val(&ops[2], Ty::U32, line)?)
                            } else {
                                None
                            },
                            d: Some(self.dreg(&ops[0], line)?),
                            p: Some((self.val(pc, Ty::Pred, line)?, neg)),
                        }
                    }
                }
            }
            "shfl" => {
                let mode = if has("up") {
                    ShflMode::Up
                } else if has("down") {
                    ShflMode::Down
                } else if has("bfly") {
                    ShflMode::Bfly
                } else if has("idx") {
                    ShflMode::Idx
                } else {
                    return Err(unsupported());
                };
                if !has("sync") {
                    return Err(unsupported());
                }
                nops(5)?;
                let (d, dp) = match &ops[0] {
                    Raw::Pipe(a, b) => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    dp,
                    a: self.val(&ops[1], Ty::B32, line)?,
                    b: self.val(&ops[2], Ty::U32, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                    mask: self.val(&ops[4], Ty::U32, line)?,
                }
            }
            "vote" => {
                let mode = if has("all") {
                    VoteMode::All
                } else if has("any") {
                    VoteMode::Any
                } else if has("uni") {
                    VoteMode::Uni
                } else if has("ballot") {
                    VoteMode::Ballot
                } else {
                    return Err(unsupported());
                };
                if ops.len() != 3 && ops.len() != 2 {
                    return Err(parse_err(line, "vote takes 2 or 3 operands"));
                }
                let (p, neg) = match &ops[1] {
                    Raw::Not(x) => (x.as_ref(), true),
                    x => (x, false),
                };
                Op::Vote {
                    mode,
                    d: self.dreg(&ops[0], line)?,
                    p: self.val(p, Ty::Pred, line)?,
                    neg,
                    mask: match ops.get(2) {
                        Some(m) => self.val(m, Ty::U32, line)?,
                        None => Opnd::Imm(0xffff_ffff),
                    },
                }
            }
            "match" => {
                let all = if has("all") {
                    true
                } else if has("any") {
                    false
                } else {
                    return Err(unsupported());
                };
                let t = need_ty()?;
                if !has("sync") || !matches!(t, Ty::B32 | Ty::B64) {
                    return Err(unsupported());
                }
                nops(3)?;
                let (d, dp) = match &ops[0] {
                    Raw::Pipe(a, b) if all => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                Op::Match {
                    all,
                    ty: t,
                    d,
                    dp,
                    a: self.val(&ops[1], t, line)?,
                    mask: self.val(&ops[2], Ty::U32, line)?,
                }
            }
            "redux" => {
                let op = if has("add") {
                    ReduxOp::Add
                } else if has("min") {
                    ReduxOp::Min
                } else if has("max") {
                    ReduxOp::Max
                } else if has("and") {
                    ReduxOp::And
                } else if has("or") {
                    ReduxOp::Or
                } else if has("xor") {
                    ReduxOp::Xor
                } else {
                    return Err(unsupported());
                };
                let t = need_ty()?;
                let bitwise = matches!(op, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor);
                let fits = if bitwise {
                    t == Ty::B32
                } else {
                    matches!(t, Ty::U32 | Ty::S32)
                };
                if !has("sync") || !fits {
                    return Err(unsupported());
                }
                nops(3)?;
                Op::Redux {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    mask: self.val(&ops[2], Ty::U32, line)?,
                }
            }
            "activemask" => {
                nops(1)?;
                Op::Activemask {
                    d: self.dreg(&ops[0], line)?,
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
                    Op::Fence
                }
            }
            // `__nanosleep(ns)`: a hint to let other warps run; every schedule here already does.
            "prefetch" | "prefetchu" | "pmevent" | "nanosleep" => Op::Nop,
            "mul24" => {
                nops(3)?;
                let t = need_ty()?;
                if t.bits() != 32 {
                    return Err(unsupported());
                }
                Op::Bin {
                    op: if has("hi") {
                        BinOp::Mul24Hi
                    } else {
                        BinOp::Mul24Lo
                    },
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    fm,
                }
            }
            "mad24" | "lop3" | "shf" | "dp4a" | "dp2a" => {
                let t = need_ty()?;
                if t.bits() != 32 || has("sat") || has("cc") {
                    return Err(unsupported());
                }
                let signed = |ty: Option<&Ty>| ty.is_some_and(|t| t.signed());
                let op = match base {
                    "mad24" => Int3Op::Mad24 {
                        hi: has("hi"),
                        signed: t.signed(),
                    },
                    "lop3" => {
                        nops(5)?;
                        let lut =
                            match &ops[4] {
                                Raw::Num(n, false) => parse_int(n)
                                    .and_then(|v| u8::try_from(v).ok())
                                    .ok_or_else(|| parse_err(line, "bad lop3 table"))?,
                                _ => return Err(parse_err(line, "lop3 needs a constant table")),
                            };
                        Int3Op::Lop3 { lut }
                    }
                    "shf" => Int3Op::Shf {
                        left: has("l"),
                        wrap: has("wrap"),
                    },
                    _ => Int3Op::Dot {
                        pairs: if base == "dp4a" { 4 } else { 2 },
                        hi: has("hi"),
                        a_signed: signed(types.first()),
                        b_signed: signed(types.get(1)),
                    },
                };
                if !matches!(op, Int3Op::Lop3 { .. }) {
                    nops(4)?;
                }
                Op::Int3 {
                    op,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], t, line)?,
                }
            }
            _ => return Err(unsupported()),
        })
    }

    fn tparam_name(&self, r: &Raw, line: u32) -> Result<u32, EmuError> {
        match r {
            Raw::Name(n) => match self.lookup(n) {
                Some(Sym::TParam(o)) => Ok(o),
                _ => Err(parse_err(line, format!("`{n}` is not a .param variable"))),
            },
            _ => Err(parse_err(line, "call arguments must be .param variables")),
        }
    }
}

fn check_space_addr(space: Space, addr: Addr, line: u32) -> Result<(), EmuError> {
    match (space, addr) {
        (Space::Param, Addr::Reg { .. }) => Err(EmuError::Unsupported {
            instruction: "ld/st.param through a register address".into(),
            line,
        }),
        (s, Addr::KParam(_) | Addr::TParam(_)) if s != Space::Param => Err(parse_err(
            line,
            "a parameter name used as a non-param address",
        )),
        _ => Ok(()),
    }
}

pub(crate) fn wide_ty(t: Ty) -> Ty {
    match t {
        Ty::U8 => Ty::U16,
        Ty::U16 => Ty::U32,
        Ty::U32 => Ty::U64,
        Ty::S8 => Ty::S16,
        Ty::S16 => Ty::S32,
        Ty::S32 => Ty::S64,
        Ty::B16 => Ty::B32,
        Ty::B32 => Ty::B64,
        other => other,
    }
}

fn parse_cmp(m: &str) -> Option<Cmp> {
    Some(match m {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" | "lo" => Cmp::Lt,
        "le" | "ls" => Cmp::Le,
        "gt" | "hi" => Cmp::Gt,
        "ge" | "hs" => Cmp::Ge,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

/// The register bits of a literal in an operand of type `ty`.
fn num_bits(s: &str, neg: bool, ty: Ty) -> Option<u64> {
    let is_float_lit = parse_float(s);
    match ty {
        Ty::F32 => {
            if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
                let b = u32::from_str_radix(h, 16).ok()?;
                return Some((if neg { b ^ 0x8000_0000 } else { b }) as u64);
            }
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            Some((if neg { -v } else { v } as f32).to_bits() as u64)
        }
        Ty::F64 => {
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            Some((if neg { -v } else { v }).to_bits())
        }
        Ty::F16 | Ty::BF16 => {
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            let v = if neg { -v } else { v } as f32;
            Some(if ty == Ty::BF16 {
                crate::alu::f32_to_bf16(v)
            } else {
                crate::alu::f32_to_f16(v)
            } as u64)
        }
        _ => {
            if let Some(f) = is_float_lit {
                // A float literal in an integer context keeps its bits (as `mov.b32 %r, 0f...`).
                if s.starts_with("0f") || s.starts_with("0F") {
                    return Some((f as f32).to_bits() as u64);
                }
                return Some(f.to_bits());
            }
            let v = parse_int(s)?;
            let v = if neg { v.wrapping_neg() } else { v };
            let bits = ty.bits();
            Some(if bits >= 64 {
                v
            } else {
                v & ((1u64 << bits) - 1)
            })
        }
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
