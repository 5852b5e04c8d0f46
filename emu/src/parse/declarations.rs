//! Declarations: variables in every state space (with their initializers), a function's
//! parameters, and registers (`.reg .b32 %r<12>;`).

use super::operands::num_bits;
use super::parser::*;

impl Parser {
    /// `[.align N] [.vN] .type name[dims] [= init];` after the state-space keyword.
    pub(crate) fn var_decl(
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
        // Offsets in `init` of functions' addresses, filled in by `finish`.
        let mut func_addrs = Vec::new();
        if self.is_p('=') {
            self.pos += 1;
            let mut items = Vec::new();
            self.init_list(&mut items)?;
            let t = ty.unwrap_or(Ty::B8);
            for item in items {
                let bits = match item {
                    InitItem::Num { negative, text } => num_bits(&text, negative, t)
                        .ok_or_else(|| parse_err(line, format!("bad initializer `{text}`")))?,
                    InitItem::Name(name) if t.bits() != 64 => {
                        return Err(parse_err(
                            line,
                            format!(
                                "the address `{name}` initializes a {}-bit element",
                                t.bits()
                            ),
                        ));
                    }
                    InitItem::Name(name) => match self.lookup(&name) {
                        Some(Sym::Global(addr)) => addr,
                        _ if self.declared_funcs.contains(&name) => {
                            func_addrs.push((init.len(), name));
                            0
                        }
                        _ => {
                            return Err(parse_err(
                                line,
                                format!("unsupported initializer `{name}`"),
                            ));
                        }
                    },
                };
                init.extend_from_slice(&bits.to_le_bytes()[..t.bytes() as usize]);
            }
        }
        if !func_addrs.is_empty() && !matches!(space, Space::Global | Space::Const) {
            return Err(parse_err(
                line,
                format!("function addresses initialize `{name}`, which is not global"),
            ));
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
                for (offset, name) in func_addrs {
                    self.func_addr_fixups.push(FuncAddrFixup {
                        name,
                        line,
                        place: FuncAddrPlace::Global {
                            var: self.globals.len(),
                            offset,
                        },
                    });
                }
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

    pub(crate) fn init_list(&mut self, out: &mut Vec<InitItem>) -> Result<(), EmuError> {
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
            Tok::Num(text) => {
                out.push(InitItem::Num {
                    negative: neg,
                    text,
                });
                Ok(())
            }
            Tok::Ident(name) if !neg && !name.starts_with('.') => {
                out.push(InitItem::Name(name));
                Ok(())
            }
            t => Err(parse_err(
                line,
                format!("unsupported initializer {}", show(&t)),
            )),
        }
    }

    /// One `.param` declaration in a parameter list: returns (name, size, align, type).
    pub(crate) fn param_decl(&mut self) -> Result<ParamDecl, EmuError> {
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

    pub(crate) fn param_list(&mut self) -> Result<Vec<ParamDecl>, EmuError> {
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

    pub(crate) fn reg_decl(&mut self) -> Result<(), EmuError> {
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

    pub(crate) fn add_reg(&mut self, name: String, bits: u32) {
        let slot = self.nregs;
        self.nregs += 1;
        self.reg_bits.push(bits);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name, Sym::Reg(slot));
        }
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Sym> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(*v);
            }
        }
        self.module_syms.get(name).copied()
    }
}
