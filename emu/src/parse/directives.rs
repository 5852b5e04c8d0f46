//! Module structure: `.version`/`.target`, `.file` and `.loc`, functions and their bodies, and
//! the last pass that resolves calls, labels and recursion into a `Module`.

use std::collections::HashMap;

use super::parser::*;

impl Parser {
    pub(crate) fn module(&mut self) -> Result<(), EmuError> {
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

    pub(crate) fn file_directive(&mut self) -> Result<(), EmuError> {
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

    pub(crate) fn loc_directive(&mut self) -> Result<(), EmuError> {
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

    pub(crate) fn function(&mut self, is_entry: bool) -> Result<(), EmuError> {
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
        self.declared_funcs.insert(name.clone());
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
            static_shared: 0,
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

    pub(crate) fn body(&mut self) -> Result<(), EmuError> {
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
                        // `proto: .callprototype (...) _ (...);` names the signature of the
                        // indirect calls that follow; the callee, known when the call runs, has
                        // the sizes and offsets.
                        ".callprototype" => self.skip_past_semicolon(),
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

    pub(crate) fn finish(mut self) -> Result<Module, EmuError> {
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
        self.fill_function_addresses()?;
        self.mark_recursive();
        self.shared_per_function();
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
            reads_clock: self.toks.iter().any(|t| {
                matches!(&t.tok, Tok::Ident(name) if Parser::sreg(name).is_some_and(Sreg::timed))
            }),
            dyn_names: self.dyn_names,
            globals: self.globals,
            nregs: self.nregs,
            tparam_size: self.tparam_size,
            local_size: self.local_size,
            cas_seed: Vec::new(),
            polls: Vec::new(),
            stretch: Vec::new(),
            quiet: Vec::new(),
            exits: Vec::new(),
            straight_to_end: Vec::new(),
            skips_barrier: Vec::new(),
            ends_step: Vec::new(),
            longest_step: crate::stretch::MAX_STEP_INSTRUCTIONS,
            shared_address_lines: self.shared_address_lines.into_inner(),
            shared_base: Vec::new(),
            tier: Default::default(),
        })
    }

    /// A call to a function the PTX only declares: one of the runtime functions the emulator
    /// provides, or a clear refusal naming the function and the `.cu` line of the call.
    pub(crate) fn builtin_call(&mut self, c: &PendingCall) -> Result<(), EmuError> {
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
                    "call to `{}` at {place}, a function the PTX declares but does not define (the emulator provides printf, assert, malloc, free, and the device runtime's launches, streams, copies, cudaMalloc, errors and cudaGraphSetConditional)",
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

    /// Writes functions' addresses where the module took them, and gives every function with an
    /// indirect call an edge to each function whose address was taken (what it may call), for
    /// the recursion check and the shared memory a launch needs.
    fn fill_function_addresses(&mut self) -> Result<(), EmuError> {
        let mut taken = Vec::new();
        for fixup in std::mem::take(&mut self.func_addr_fixups) {
            let Some(&index) = self.func_index.get(&fixup.name) else {
                return Err(EmuError::Unsupported {
                    instruction: format!(
                        "the address of `{}`, a function the PTX declares but does not define",
                        fixup.name
                    ),
                    line: fixup.line,
                });
            };
            let addr = func_addr(index);
            taken.push(index);
            match fixup.place {
                FuncAddrPlace::Global { var, offset } => {
                    if let Some(bytes) = self
                        .globals
                        .get_mut(var)
                        .and_then(|g| g.init.get_mut(offset..offset + 8))
                    {
                        bytes.copy_from_slice(&addr.to_le_bytes());
                    }
                }
                FuncAddrPlace::Mov(at) => {
                    if let Some(Instr {
                        op: Op::Mov { a, .. },
                        ..
                    }) = self.code.get_mut(at)
                    {
                        *a = Opnd::Imm(addr);
                    }
                }
            }
        }
        // A kernel's address is what a device-side launch names; an indirect call reaches only
        // device functions.
        taken.retain(|&f| !self.funcs[f as usize].is_entry);
        taken.sort_unstable();
        taken.dedup();
        for f in 0..self.funcs.len() {
            let (start, end) = (self.funcs[f].start as usize, self.funcs[f].end as usize);
            let indirect = self.code[start..end.min(self.code.len())]
                .iter()
                .any(|i| matches!(i.op, Op::CallIndirect { .. }));
            if indirect {
                self.funcs[f].calls.extend_from_slice(&taken);
            }
        }
        Ok(())
    }

    /// Marks the functions that can reach themselves through calls.
    pub(crate) fn mark_recursive(&mut self) {
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
}

impl Parser {
    /// Each function's [`Function::static_shared`]: the sizes of the shared variables it or
    /// anything it calls names, each counted once.
    fn shared_per_function(&mut self) {
        let size_at: HashMap<u32, u32> = self.shared.iter().map(|v| (v.offset, v.size)).collect();
        let mut own: Vec<Vec<u32>> = vec![Vec::new(); self.funcs.len()];
        for &(f, offset) in self.shared_uses.borrow().iter() {
            if let Some(list) = own.get_mut(f as usize) {
                list.push(offset);
            }
        }
        for f in 0..self.funcs.len() {
            let mut seen_funcs = vec![false; self.funcs.len()];
            let mut offsets = std::collections::BTreeSet::new();
            let mut stack = vec![f];
            while let Some(g) = stack.pop() {
                if std::mem::replace(&mut seen_funcs[g], true) {
                    continue;
                }
                offsets.extend(own[g].iter().copied());
                stack.extend(self.funcs[g].calls.iter().map(|&c| c as usize));
            }
            self.funcs[f].static_shared = offsets
                .iter()
                .map(|o| size_at.get(o).copied().unwrap_or(0))
                .fold(0u32, u32::saturating_add);
        }
    }
}
