//! Device runtime calls: `printf`, `assert`, `malloc`, `free`, `__trap`, and call-stack
//! overflow, with the findings each one can make.

use super::allocs::{Allocation, GAP, HeapBlock, LOCAL_WIN, SHARED_WIN, WIN};
use super::ctx::{Ctx, rd_le, wr_le};
use super::device_runtime::CallArgs;
use super::limits::MAX_CALL_DEPTH;
use super::warp::Warp;
use crate::ir::*;
use crate::report::{
    Access, AccessOp, ConditionSet, Finding, FindingKind, MemLocation, OutputStream, PrintfRecord,
    ThreadGroup, ThreadRef,
};
use crate::{printf, report};

/// Device runtime calls (`printf`, `assert`, `malloc`, `free`) and recursive-call frames.
/// One lane's `__assertfail` arguments: the condition's text, where it is, and in which function.
pub(crate) struct FailedAssert {
    pub(crate) lane: usize,
    pub(crate) message: Vec<u8>,
    pub(crate) file: Vec<u8>,
    pub(crate) line: u32,
    pub(crate) function: Vec<u8>,
}

impl Ctx<'_> {
    /// The bytes from a generic address to the end of whatever holds it (empty if nothing does).
    pub(crate) fn generic_bytes(&self, w: &Warp, lane: usize, addr: u64) -> &[u8] {
        if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) {
            let Some(block) = self.mem.shared.get(w.slot as usize) else {
                return &[];
            };
            let start = (addr - SHARED_WIN) as usize;
            return block
                .get(start.min(block.len())..block.len())
                .unwrap_or(&[]);
        }
        if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) {
            let off = addr - LOCAL_WIN;
            let size = self.local_size as usize;
            if off >= size as u64 {
                return &[];
            }
            let base = self.rt(w, lane) as usize * size;
            return self
                .mem
                .local
                .get(base + off as usize..base + size)
                .unwrap_or(&[]);
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        match i.checked_sub(1).and_then(|i| self.allocs.get(i)) {
            Some(a) => a.data.get((addr - a.base) as usize..).unwrap_or(&[]),
            None => &[],
        }
    }

    /// A NUL-terminated string at a generic address (at most 64 KiB of it).
    pub(crate) fn cstr(&self, w: &Warp, lane: usize, addr: u64) -> Vec<u8> {
        let bytes = self.generic_bytes(w, lane, addr);
        let bytes = &bytes[..bytes.len().min(1 << 16)];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        bytes[..end].to_vec()
    }

    /// `vprintf(format, args)` for one thread: formats, keeps the output if the buffer has room,
    /// and returns what CUDA's `printf` returns (arguments consumed, -1 for a NULL format).
    pub(crate) fn printf(&mut self, w: &Warp, lane: usize, format: u64, args: u64) -> i32 {
        if format == 0 {
            return -1;
        }
        let fmt = self.cstr(w, lane, format);
        let (out, consumed) = printf::format(
            &fmt,
            |off, size| {
                rd_le(
                    self.generic_bytes(w, lane, args.wrapping_add(off as u64)),
                    0,
                    size,
                )
            },
            |addr| self.cstr(w, lane, addr),
        );
        let thread = self.thread_ref(self.gid(w, lane));
        self.emit(
            thread,
            String::from_utf8_lossy(&out).into_owned(),
            OutputStream::Stdout,
        );
        consumed
    }

    pub(crate) fn emit(&mut self, thread: ThreadRef, text: String, stream: OutputStream) {
        if self.printf_bytes + text.len() > self.opts.printf_buffer_bytes {
            self.printf_dropped += 1;
            return;
        }
        self.printf_bytes += text.len();
        self.printf.push(PrintfRecord {
            thread,
            text,
            stream,
        });
    }

    /// `__assertfail` for the lanes of one warp: each prints the GPU's message, the finding
    /// names the condition, and the launch ends, as a GPU's does.
    pub(crate) fn assert_failed(
        &mut self,
        w: &Warp,
        pc: u32,
        lanes_mask: u32,
        messages: Vec<FailedAssert>,
    ) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut first = None;
        for FailedAssert {
            lane,
            message,
            file,
            line,
            function,
        } in messages
        {
            let t = self.thread_ref(self.gid(w, lane));
            let [bx, by, bz] = t.block;
            let [tx, ty, tz] = t.thread;
            self.emit(
                t,
                format!(
                    "{}:{line}: {}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion `{}` failed.\n",
                    text(&file),
                    text(&function),
                    text(&message)
                ),
                OutputStream::Stderr,
            );
            first.get_or_insert((t, text(&message), text(&function)));
        }
        if let Some((example, message, function)) = first {
            let key = (FindingKind::AssertionFailed, self.line_of(pc), 0, 0);
            let at = self.src(pc);
            let threads = lanes_mask.count_ones() as u64;
            self.findings.add(key, || Finding {
                kind: FindingKind::AssertionFailed,
                count: 1,
                location: None,
                accesses: vec![],
                threads: vec![ThreadGroup {
                    at,
                    threads,
                    example,
                    state: format!("failed assert({message})"),
                }],
                why: format!(
                    "in {function}: a failed assert() stops the kernel on a GPU, and later CUDA calls return cudaErrorAssert; the emulator stopped the launch here"
                ),
            });
        }
        self.aborted = true;
    }

    /// `trap` (`__trap()`, and cooperative groups' checks that can never fail): the kernel
    /// stops, as on a GPU, where later CUDA calls return an error.
    pub(crate) fn trapped(&mut self, w: &Warp, lanes_mask: u32, pc: u32) {
        let example = self.thread_ref(self.gid(w, lanes_mask.trailing_zeros() as usize));
        let at = self.src(pc);
        let key = (FindingKind::Trap, self.line_of(pc), 0, 0);
        self.findings.add(key, || Finding {
            kind: FindingKind::Trap,
            count: 1,
            location: None,
            accesses: vec![],
            threads: vec![ThreadGroup {
                at,
                threads: lanes_mask.count_ones() as u64,
                example,
                state: "executed trap (__trap())".to_string(),
            }],
            why: "trap aborts the kernel on a GPU (later CUDA calls return cudaErrorLaunchFailure); the emulator stopped the launch here".to_string(),
        });
        self.aborted = true;
    }

    /// Lanes that called through `addr`, which is no function's address (or a function the
    /// call's arguments do not fit): the launch stops.
    pub(crate) fn bad_call_target(&mut self, w: &Warp, lanes_mask: u32, pc: u32, addr: u64) {
        let example = self.thread_ref(self.gid(w, lanes_mask.trailing_zeros() as usize));
        let at = self.src(pc);
        let key = (FindingKind::InvalidCallTarget, self.line_of(pc), 0, 0);
        let what = match crate::ir::func_at(addr).and_then(|f| self.m.funcs.get(f as usize)) {
            Some(f) => format!(
                "`{}`, whose {} parameters the call's arguments do not match",
                f.name,
                f.params.len()
            ),
            None => format!("{addr:#x}, which is no device function's address"),
        };
        self.findings.add(key, || Finding {
            kind: FindingKind::InvalidCallTarget,
            count: 1,
            location: None,
            accesses: vec![],
            threads: vec![ThreadGroup {
                at,
                threads: lanes_mask.count_ones() as u64,
                example,
                state: format!("called through {what}"),
            }],
            why: "a GPU stops the kernel with an illegal-instruction error (later CUDA calls return an error); the emulator stopped the launch here".to_string(),
        });
        self.aborted = true;
    }

    pub(crate) fn stack_overflow(&mut self, w: &Warp, lanes_mask: u32, pc: u32) {
        let example = self.thread_ref(self.gid(w, lanes_mask.trailing_zeros() as usize));
        let at = self.src(pc);
        let key = (FindingKind::StackOverflow, self.line_of(pc), 0, 0);
        self.findings.add(key, || Finding {
            kind: FindingKind::StackOverflow,
            count: 1,
            location: None,
            accesses: vec![],
            threads: vec![ThreadGroup {
                at,
                threads: lanes_mask.count_ones() as u64,
                example,
                state: format!("were {MAX_CALL_DEPTH} calls deep"),
            }],
            why: format!(
                "recursion deeper than {MAX_CALL_DEPTH} nested calls; a GPU's per-thread stack (1 KiB by default, cudaLimitStackSize) overflows long before and the launch fails; the emulator stopped it here"
            ),
        });
        self.aborted = true;
    }

    /// Device `malloc`: an exact-size block (uninitialized: a nonzero pattern, as for shared
    /// memory) with unmapped bytes after it, or NULL when the heap limit would be passed.
    pub(crate) fn malloc(&mut self, w: &Warp, lane: usize, size: u64, pc: u32) -> u64 {
        let taken = self.allocs.edit(|_, heap| {
            let base = heap.next;
            let next = base
                .checked_add(size)
                .and_then(|end| end.checked_add(GAP + 255))
                .map(|end| end / 256 * 256);
            let fits = size <= heap.limit.saturating_sub(heap.live) && size <= 1 << 32;
            let next = next.filter(|&next| fits && size > 0 && next < LOCAL_WIN)?;
            heap.next = next;
            heap.live += size;
            Some(base)
        });
        let Some(base) = taken else {
            return 0;
        };
        self.progress += 1;
        let at = self.src(pc);
        let label = if at.line == 0 {
            "malloc".to_string()
        } else {
            format!("malloc@{}:{}", at.file, at.line)
        };
        let _ = (w, lane);
        let device = self.device;
        self.allocs.edit(|allocs, _| {
            allocs.push(Allocation {
                base,
                data: (0..size as usize)
                    .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 | 0x41)
                    .collect(),
                label,
                heap: Some(HeapBlock {
                    size,
                    site: pc,
                    freed: None,
                }),
                written: Some(vec![0; (size as usize).div_ceil(64)]),
                device,
            })
        });
        base
    }

    /// Device `free`: releases a heap block, or reports a double or invalid free.
    pub(crate) fn free(&mut self, w: &Warp, lane: usize, ptr: u64, pc: u32) {
        if ptr == 0 {
            return;
        }
        let me = Access {
            op: AccessOp::Free,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let i = self.allocs.partition_point(|a| a.base <= ptr);
        let block = i.checked_sub(1).filter(|&i| self.allocs[i].base == ptr);
        let heap = block.and_then(|i| self.allocs[i].heap.as_ref().map(|h| (i, h)));
        match heap {
            Some((i, h)) if h.freed.is_none() => {
                let size = h.size;
                self.progress += 1;
                self.allocs.edit(|allocs, heap| {
                    heap.live -= size;
                    let a = &mut allocs[i];
                    a.data = Vec::new();
                    if let Some(h) = a.heap.as_mut() {
                        h.freed = Some(me);
                    }
                });
            }
            Some((i, h)) => {
                let earlier = h.freed.clone();
                let (size, site, label) = (h.size, h.site, self.allocs[i].label.clone());
                let key = (FindingKind::DoubleFree, self.line_of(pc), 0, site as u64);
                self.findings.add(key, || Finding {
                    kind: FindingKind::DoubleFree,
                    count: 1,
                    location: Some(MemLocation {
                        space: report::Space::Global,
                        label,
                        index: 0,
                        address: ptr,
                        element_bytes: 1,
                        c_index: None,
                        note: None,
                    }),
                    accesses: earlier.into_iter().chain([me]).collect(),
                    threads: vec![],
                    why: format!(
                        "the {size}-byte block was already freed; on a GPU a second free() corrupts the device heap"
                    ),
                });
            }
            None => {
                let (loc, obj) = self.mem_location(report::Space::Global, ptr, ptr, 1);
                let key = (FindingKind::InvalidFree, self.line_of(pc), 0, obj);
                self.findings.add(key, || Finding {
                    kind: FindingKind::InvalidFree,
                    count: 1,
                    location: Some(loc),
                    accesses: vec![me],
                    threads: vec![],
                    why: format!(
                        "{ptr:#x} is not the start of a block from device malloc(); host (cudaMalloc) memory and pointers into a block cannot be freed in a kernel"
                    ),
                });
            }
        }
    }

    /// A freed heap block containing `addr`, if any: a use after free rather than a wild access.
    pub(crate) fn freed_block(&self, addr: u64) -> Option<usize> {
        let i = self
            .allocs
            .partition_point(|a| a.base <= addr)
            .checked_sub(1)?;
        let a = &self.allocs[i];
        let h = a.heap.as_ref()?;
        (h.freed.is_some() && addr < a.base + h.size).then_some(i)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn report_use_after_free(
        &mut self,
        w: &Warp,
        lane: usize,
        i: usize,
        addr: u64,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        let a = &self.allocs[i];
        let Some(h) = a.heap.as_ref() else { return };
        let location = MemLocation {
            space: report::Space::Global,
            label: a.label.clone(),
            index: ((addr - a.base) / size.max(1) as u64) as i64,
            address: addr,
            element_bytes: size.max(1),
            c_index: None,
            note: None,
        };
        let key = (
            FindingKind::UseAfterFree,
            self.line_of(pc),
            0,
            h.site as u64,
        );
        let freed = h.freed.clone();
        let me = Access {
            op,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let what = super::memory::dropped(op);
        self.findings.add(key, || Finding {
            kind: FindingKind::UseAfterFree,
            count: 1,
            location: Some(location),
            accesses: freed.into_iter().chain([me]).collect(),
            threads: vec![],
            why: format!("the block was freed before this {size}-byte access; {what}"),
        });
    }
}

/// Runs a call into the device runtime (`vprintf`, `__assertfail`, `malloc`, `free`,
/// `cudaGraphSetConditional`).
#[inline(always)]
pub(crate) fn run(ctx: &mut Ctx, w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    let (pc, m) = (w.pc, ctx.m);
    match &ins.op {
        Op::Builtin { func, args, ret } => {
            let ts = m.tparam_size as usize;
            let arg = |w: &Warp, l: usize, i: usize, size: usize| {
                args.get(i)
                    .map_or(0, |&o| rd_le(&w.tparam, l * ts + o as usize, size))
            };
            match func {
                Builtin::Vprintf => {
                    lanes!(exec, l, {
                        let n = ctx.printf(w, l, arg(w, l, 0, 8), arg(w, l, 1, 8));
                        if let Some(r) = ret {
                            wr_le(&mut w.tparam, l * ts + *r as usize, 4, n as u32 as u64);
                        }
                    });
                }
                Builtin::AssertFail => {
                    if exec != 0 {
                        let mut messages = Vec::new();
                        lanes!(exec, l, {
                            messages.push(FailedAssert {
                                lane: l,
                                message: ctx.cstr(w, l, arg(w, l, 0, 8)),
                                file: ctx.cstr(w, l, arg(w, l, 1, 8)),
                                line: arg(w, l, 2, 4) as u32,
                                function: ctx.cstr(w, l, arg(w, l, 3, 8)),
                            });
                        });
                        ctx.assert_failed(w, pc, exec, messages);
                        return None;
                    }
                }
                Builtin::Malloc => {
                    lanes!(exec, l, {
                        let p = ctx.malloc(w, l, arg(w, l, 0, 8), pc);
                        if let Some(r) = ret {
                            wr_le(&mut w.tparam, l * ts + *r as usize, 8, p);
                        }
                    });
                }
                Builtin::Free => {
                    lanes!(exec, l, {
                        ctx.free(w, l, arg(w, l, 0, 8), pc);
                    });
                }
                Builtin::GraphSetConditional => {
                    lanes!(exec, l, {
                        let thread = ctx.thread_ref(ctx.gid(w, l));
                        ctx.conditions.push(ConditionSet {
                            handle: arg(w, l, 0, 8),
                            value: arg(w, l, 1, 4) as u32,
                            thread,
                            at: ctx.src(pc),
                        });
                    });
                }
                Builtin::Cdp(call) => {
                    let size = match call {
                        Cdp::GetParameterBuffer
                        | Cdp::GetParameterBufferV2
                        | Cdp::GetErrorString
                        | Cdp::GetErrorName => 8,
                        _ => 4,
                    };
                    lanes!(exec, l, {
                        let tparam = std::mem::take(&mut w.tparam);
                        let call_args = CallArgs {
                            tparam: &tparam,
                            base: l * ts,
                            offsets: args,
                        };
                        let value = ctx.device_runtime(w, l, *call, &call_args, pc);
                        w.tparam = tparam;
                        if let Some(r) = ret {
                            wr_le(&mut w.tparam, l * ts + *r as usize, size, value);
                        }
                    });
                }
            }
        }
        _ => unreachable!("instr::exec sends only device_calls instructions here"),
    }
    w.advance();
    None
}
