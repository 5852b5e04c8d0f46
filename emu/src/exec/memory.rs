//! Memory access: turning a lane's address into a place (global allocation, shared, local, heap),
//! the memory checker's findings when it is none, byte loads and stores, and bank-conflict counts.

use super::allocs::{GAP, LOCAL_WIN, SHARED_WIN, WIN, find_alloc};
use super::ctx::{Ctx, Tgt, heap_key};
use super::warp::Warp;
use crate::ir::*;
use crate::report;
use crate::report::{Access, AccessOp, Finding, FindingKind, MemLocation};

impl Ctx<'_> {
    /// Adds one warp access to the bank-conflict tally: the shared-memory offsets of the lanes
    /// in `exec` that access shared memory (a generic address may point elsewhere).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn count_banks(
        &mut self,
        w: &Warp,
        exec: u32,
        space: Space,
        addr: &Addr,
        bytes: u32,
        pc: u32,
        write: bool,
    ) {
        if !matches!(space, Space::Shared | Space::Generic) {
            return;
        }
        let mut offsets = [None; 32];
        let mut any = false;
        lanes!(exec, l, {
            let a = self.addr(w, addr, l);
            let offset = if (SHARED_WIN..SHARED_WIN + WIN).contains(&a) {
                Some(a - SHARED_WIN)
            } else if space == Space::Shared {
                Some(a & 0xffff_ffff)
            } else {
                None
            };
            if let Some(offset) = offset {
                offsets[l] = u32::try_from(offset).ok();
                any = true;
            }
        });
        if any && let Some(tally) = self.banks.as_deref_mut() {
            tally.record(pc, write, &offsets, bytes);
        }
    }

    /// [`Ctx::resolve`] for the common case, an aligned in-bounds access to shared memory or to
    /// the global allocation of the previous access; anything else takes the full path.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn resolve(
        &mut self,
        w: &Warp,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        pc: u32,
        op: AccessOp,
    ) -> Tgt {
        // Accesses are 1 to 32 bytes, a power of two: a mask, not a division per lane.
        let aligned = if align.is_power_of_two() {
            addr & (align as u64 - 1) == 0
        } else {
            addr.is_multiple_of(align.max(1) as u64)
        };
        if aligned {
            match space {
                Space::Shared => {
                    // A `.shared` address is 32 bits wide: arithmetic that went below zero in
                    // 32 bits and was widened wraps, as on a GPU.
                    let off = if addr >= SHARED_WIN {
                        addr - SHARED_WIN
                    } else {
                        addr & 0xffff_ffff
                    };
                    if off.saturating_add(size as u64) <= self.shared_size as u64
                        && !(self.opts.memcheck && self.outside_its_array(pc, off, size).is_some())
                    {
                        return Tgt::S(off as usize);
                    }
                }
                Space::Global => {
                    if let Some(last) = self.allocs.get(self.last_alloc)
                        && addr >= last.base
                        && addr.saturating_add(size as u64) <= last.base + last.data.len() as u64
                    {
                        return Tgt::G(self.last_alloc, (addr - last.base) as usize);
                    }
                }
                _ => {}
            }
        }
        self.resolve_full(w, lane, space, addr, size, align, pc, op)
    }

    /// Maps an address to memory, reporting out-of-bounds and misaligned accesses.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resolve_full(
        &mut self,
        w: &Warp,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        pc: u32,
        op: AccessOp,
    ) -> Tgt {
        let (sp, off) = match space {
            Space::Shared => (
                report::Space::Shared,
                if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) {
                    addr - SHARED_WIN
                } else {
                    addr & 0xffff_ffff
                },
            ),
            Space::Local => (
                report::Space::Local,
                if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) {
                    addr - LOCAL_WIN
                } else {
                    addr
                },
            ),
            Space::Generic if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) => {
                (report::Space::Shared, addr - SHARED_WIN)
            }
            Space::Generic if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) => {
                (report::Space::Local, addr - LOCAL_WIN)
            }
            _ => (report::Space::Global, addr),
        };
        if self.opts.memcheck && align > 1 && off % align as u64 != 0 {
            let gid = self.gid(w, lane);
            let loc = self.mem_location(sp, off, addr, size);
            let key = (
                FindingKind::Misaligned { space: sp },
                self.line_of(pc),
                0,
                loc.1,
            );
            let (thread, at) = (self.thread_ref(gid), self.src(pc));
            let new = self.findings.add(key, || Finding {
                kind: FindingKind::Misaligned { space: sp },
                count: 1,
                location: Some(loc.0),
                accesses: vec![Access { op, thread, at }],
                threads: vec![],
                why: format!("a {size}-byte access must be {align}-byte aligned (address {addr:#x}); hardware faults here"),
            });
            self.link_finding(new, None, lane);
        }
        let tgt = match sp {
            report::Space::Global => {
                // Neighbouring lanes almost always hit the allocation the last access hit.
                let last = self.allocs.get(self.last_alloc);
                if let Some(last) = last
                    && off >= last.base
                    && off.saturating_add(size as u64) <= last.base + last.data.len() as u64
                {
                    Tgt::G(self.last_alloc, (off - last.base) as usize)
                } else {
                    match find_alloc(&self.allocs, off, size as u64) {
                        Some(i) if !self.peer[self.allocs[i].device as usize] => {
                            self.report_no_peer_access(w, lane, i, off, addr, size, pc, op);
                            return Tgt::Bad;
                        }
                        Some(i) => {
                            self.last_alloc = i;
                            Tgt::G(i, (off - self.allocs[i].base) as usize)
                        }
                        None => Tgt::Bad,
                    }
                }
            }
            report::Space::Shared => {
                if off.saturating_add(size as u64) > self.shared_size as u64 {
                    Tgt::Bad
                } else if self.opts.memcheck
                    && let Some(array) = self.outside_its_array(pc, off, size)
                {
                    self.report_outside_array(w, lane, array, off, addr, size, pc, op);
                    return Tgt::Bad;
                } else {
                    Tgt::S(off as usize)
                }
            }
            report::Space::Local => {
                if off.saturating_add(size as u64) <= self.local_size as u64 {
                    Tgt::L(self.rt(w, lane) as usize * self.local_size as usize + off as usize)
                } else {
                    Tgt::Bad
                }
            }
        };
        if let Tgt::Bad = tgt
            && sp == report::Space::Global
            && let Some(i) = self.freed_block(off)
        {
            self.report_use_after_free(w, lane, i, off, size, pc, op);
            return tgt;
        }
        if let Tgt::Bad = tgt {
            let (location, object) = self.mem_location(sp, off, addr, size);
            let what = dropped(op);
            self.report_dropped(
                w,
                lane,
                location,
                object,
                pc,
                op,
                format!("{size}-byte access at {addr:#x} is outside every {sp} allocation; {what}"),
            );
        }
        tgt
    }

    /// The static shared array the access at `pc` indexes (`shared_base.rs`), when the `size`
    /// bytes at shared offset `off` fall outside it: into the next array, or before its start.
    #[inline]
    fn outside_its_array(&self, pc: u32, off: u64, size: u32) -> Option<usize> {
        let array = (*self.m.shared_base.get(pc as usize)?)? as usize;
        let var = self.m.shared.get(array)?;
        let (start, end) = (var.offset as u64, var.offset as u64 + var.size as u64);
        (off < start || off.saturating_add(size as u64) > end).then_some(array)
    }

    /// An index past one static shared array that lands in another (or before the first): a
    /// GPU writes the neighbour, and memcheck there sees nothing, since the access stays in the
    /// block's shared memory. Reported here at the array the code indexes, and dropped (reads
    /// give 0), as an access outside memory is.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn report_outside_array(
        &mut self,
        w: &Warp,
        lane: usize,
        array: usize,
        off: u64,
        addr: u64,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        let var = &self.m.shared[array];
        let (start, end) = (var.offset as u64, var.offset as u64 + var.size as u64);
        let index = (off as i64 - start as i64).div_euclid(size.max(1) as i64);
        let whose = if off < start {
            format!("before the start of {}", var.name)
        } else {
            format!("{} of {}", past_the_end(off, size as u64, end), var.name)
        };
        let landed = self.mem_location(report::Space::Shared, off, addr, size).0;
        let landed = if landed.label == var.name {
            String::new()
        } else {
            let verb = if is_read(op) { "read" } else { "overwrite" };
            format!("; on a GPU it would {verb} {landed}")
        };
        let location = MemLocation {
            space: report::Space::Shared,
            label: var.name.clone(),
            index,
            address: addr,
            element_bytes: size,
            c_index: None,
            note: Some(format!("{whose}, which has {}", bytes(var.size as u64))),
        };
        let why = format!(
            "{size}-byte access at shared offset {off:#x} is outside {}, though inside the block's shared memory{landed}; here {}",
            var.name,
            dropped(op)
        );
        self.report_dropped(w, lane, location, array as u64, pc, op, why);
    }

    /// Adds an access outside memory (or outside its array) that was dropped, one finding per
    /// line, object and direction: a read and a write of one line (`v[i] = v[i] * a;` past the
    /// end) are two findings, since one would name the read alone and count the write's times
    /// as its own.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn report_dropped(
        &mut self,
        w: &Warp,
        lane: usize,
        location: MemLocation,
        object: u64,
        pc: u32,
        op: AccessOp,
        why: String,
    ) {
        let space = location.space;
        let key = (
            FindingKind::OutOfBounds { space },
            self.line_of(pc),
            u32::from(!is_read(op)),
            object,
        );
        let thread = self.thread_ref(self.gid(w, lane));
        let at = self.src(pc);
        let new = self.findings.add(key, || Finding {
            kind: FindingKind::OutOfBounds { space },
            count: 1,
            location: Some(location),
            accesses: vec![Access { op, thread, at }],
            threads: vec![],
            why,
        });
        self.link_finding(new, None, lane);
    }

    /// The allocation below `off` (among the first `below` by address) that a 32-bit unsigned
    /// index gone a little below zero reaches `off` from, and that index (the one nearest
    /// zero when several do).
    fn wrapped_from(
        &self,
        below: usize,
        off: u64,
        size: u64,
    ) -> Option<(&super::allocs::Allocation, i64)> {
        self.allocs[..below]
            .iter()
            .filter_map(|a| Some((a, wrapped_index(off - a.base, size)?)))
            .max_by_key(|&(_, index)| index)
    }

    /// An access to the memory of a device this launch's device has no peer access to.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn report_no_peer_access(
        &mut self,
        w: &Warp,
        lane: usize,
        index: usize,
        off: u64,
        addr: u64,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        let gid = self.gid(w, lane);
        let (location, object) = self.mem_location(report::Space::Global, off, addr, size);
        let key = (FindingKind::NoPeerAccess, self.line_of(pc), 0, object);
        let (thread, at) = (self.thread_ref(gid), self.src(pc));
        let (here, there) = (self.device, self.allocs[index].device);
        let what = dropped(op);
        let new = self.findings.add(key, || Finding {
            kind: FindingKind::NoPeerAccess,
            count: 1,
            location: Some(location),
            accesses: vec![Access { op, thread, at }],
            threads: vec![],
            why: format!(
                "this is device {there}'s memory and the kernel runs on device {here}, which never enabled peer access to it (cudaDeviceEnablePeerAccess({there}) on device {here}); a GPU faults here, and here {what}"
            ),
        });
        self.link_finding(new, None, lane);
    }

    /// Label and element index for an address, plus a key naming the object for deduplication.
    pub(crate) fn mem_location(
        &self,
        sp: report::Space,
        off: u64,
        addr: u64,
        size: u32,
    ) -> (MemLocation, u64) {
        let size = size.max(1) as i64;
        match sp {
            report::Space::Global => {
                let i = self.allocs.partition_point(|a| a.base <= off);
                let near = if i > 0 { self.allocs.get(i - 1) } else { None };
                match near {
                    Some(a) if off < a.base.saturating_add(a.data.len() as u64 + GAP / 2) => {
                        let rel = (off - a.base) as i64;
                        let len = a.data.len() as u64;
                        let note = if off.saturating_add(size as u64) > a.base + len {
                            Some(format!(
                                "{} of {}, which has {}",
                                past_the_end(off, size as u64, a.base + len),
                                a.label,
                                bytes(len)
                            ))
                        } else {
                            None
                        };
                        (
                            MemLocation {
                                space: sp,
                                label: a.label.clone(),
                                index: rel / size,
                                address: addr,
                                element_bytes: size as u32,
                                c_index: None,
                                note,
                            },
                            heap_key(a),
                        )
                    }
                    _ if let Some((a, index)) = self.wrapped_from(i, off, size as u64) => (
                        MemLocation {
                            space: sp,
                            label: a.label.clone(),
                            index,
                            address: addr,
                            element_bytes: size as u32,
                            c_index: None,
                            note: Some(format!(
                                "{label}[{}] as a 32-bit unsigned index: {index} went below zero and wrapped to about 4 billion, far past the end of {label}",
                                index + (1i64 << 32),
                                label = a.label
                            )),
                        },
                        heap_key(a),
                    ),
                    _ => {
                        let nxt = self.allocs.get(i).filter(|a| a.base - off < GAP / 2);
                        match nxt {
                            Some(a) => {
                                let rel = off as i64 - a.base as i64;
                                (
                                    MemLocation {
                                        space: sp,
                                        label: a.label.clone(),
                                        index: rel.div_euclid(size),
                                        address: addr,
                                        element_bytes: size as u32,
                                        c_index: None,
                                        note: Some(format!(
                                            "{} before the start of {}",
                                            bytes(rel.unsigned_abs()),
                                            a.label
                                        )),
                                    },
                                    heap_key(a),
                                )
                            }
                            None => (
                                MemLocation {
                                    space: sp,
                                    label: "<no allocation>".into(),
                                    index: 0,
                                    address: addr,
                                    element_bytes: size as u32,
                                    c_index: None,
                                    note: Some(format!("address {addr:#x}")),
                                },
                                0,
                            ),
                        }
                    }
                }
            }
            report::Space::Shared => {
                // The variable at or below the offset; past its end, say so.
                let var = self
                    .m
                    .shared
                    .iter()
                    .filter(|v| (v.offset as u64) <= off)
                    .max_by_key(|v| v.offset)
                    .map(|v| (v.name.clone(), v.offset as u64, v.size as u64));
                // At or past the dynamic area of a kernel that declares `extern __shared__`:
                // that array, even when the launch gave it no bytes (the usual slip).
                let in_dynamic = off >= self.dyn_base as u64
                    && (self.dyn_size > 0 || !self.m.dyn_names.is_empty());
                let dynamic = in_dynamic.then(|| {
                    let name = match self.m.dyn_names.as_slice() {
                        [] => "extern __shared__".to_string(),
                        names => names.join(" / "),
                    };
                    (name, self.dyn_base as u64, self.dyn_size as u64)
                });
                let (label, base, len) = dynamic
                    .clone()
                    .or(var)
                    .unwrap_or_else(|| ("shared".to_string(), 0, self.shared_size as u64));
                let end = off.saturating_add(size as u64);
                let note = match dynamic {
                    Some(_) if len == 0 => Some(format!(
                        "{label} is dynamic shared memory (extern __shared__), and the launch gave it no bytes"
                    )),
                    Some(_) if end > base + len => Some(format!(
                        "{} of {label}, the dynamic shared memory, which the launch sized at {}",
                        past_the_end(off, size as u64, base + len),
                        bytes(len)
                    )),
                    _ if end > base + len => Some(format!(
                        "{} of {label}, which has {}",
                        past_the_end(off, size as u64, base + len),
                        bytes(len)
                    )),
                    _ => None,
                };
                (
                    MemLocation {
                        space: sp,
                        label,
                        index: (off - base) as i64 / size,
                        address: addr,
                        element_bytes: size as u32,
                        c_index: None,
                        note,
                    },
                    (1 << 63) | base,
                )
            }
            report::Space::Local => (
                MemLocation {
                    space: sp,
                    label: "local".into(),
                    index: off as i64 / size,
                    address: addr,
                    element_bytes: size as u32,
                    c_index: None,
                    note: Some(format!(
                        "the thread has {} bytes of local memory",
                        self.local_size
                    )),
                },
                (1 << 62) | off,
            ),
        }
    }

    /// Loads `size` bytes (one element) through a resolved target; `slot` is the accessing
    /// block's.
    #[inline(always)]
    pub(crate) fn read_tgt(&self, tgt: Tgt, size: usize, slot: u32) -> u64 {
        match tgt {
            Tgt::G(i, off) => self.allocs.bytes(i).read(off, size),
            Tgt::S(off) => self.mem.shared(slot).read(off, size),
            Tgt::L(off) => self.mem.local.read(off, size),
            Tgt::Bad => 0,
        }
    }

    #[inline(always)]
    pub(crate) fn write_tgt(&mut self, tgt: Tgt, size: usize, slot: u32, v: u64) {
        match tgt {
            Tgt::G(i, off) => self.allocs.bytes(i).write(off, size, v),
            Tgt::S(off) => self.mem.shared(slot).write(off, size, v),
            Tgt::L(off) => self.mem.local.write(off, size, v),
            Tgt::Bad => {}
        }
    }
}

pub(crate) fn tgt_offset(tgt: Tgt, by: usize) -> Tgt {
    match tgt {
        Tgt::G(i, o) => Tgt::G(i, o + by),
        Tgt::S(o) => Tgt::S(o + by),
        Tgt::L(o) => Tgt::L(o + by),
        Tgt::Bad => Tgt::Bad,
    }
}

/// Where an access of `size` bytes at `off` lies against an object that ends at `end`, which it
/// reaches past: `just past the end` when it starts there (the element after the last),
/// `8 bytes past the end` when it starts later, `its last 2 bytes past the end` when it starts
/// inside.
/// Whether `op` reads (what a dropped access gives back, and how its findings are keyed).
pub(crate) fn is_read(op: AccessOp) -> bool {
    matches!(op, AccessOp::Read | AccessOp::AtomicRead)
}

/// What became of an access the emulator refused: a read gives 0, a write is dropped.
pub(crate) fn dropped(op: AccessOp) -> &'static str {
    if is_read(op) {
        "reads give 0"
    } else {
        "the write was dropped"
    }
}

pub(crate) fn past_the_end(off: u64, size: u64, end: u64) -> String {
    match off.checked_sub(end) {
        Some(0) => "just past the end".into(),
        Some(beyond) => format!("{} past the end", bytes(beyond)),
        None => format!(
            "its last {} past the end",
            bytes(off.saturating_add(size) - end)
        ),
    }
}

/// `1 byte`, `4 bytes`: sizes as the reports write them.
pub(crate) fn bytes(count: u64) -> String {
    if count == 1 {
        "1 byte".into()
    } else {
        format!("{count} bytes")
    }
}

#[cfg(test)]
mod byte_count_tests {
    #[test]
    fn an_access_past_the_end_is_placed_by_where_it_starts() {
        use super::past_the_end;
        // x[4] of a float x[4], x[6], and a float read at byte 14 of a 16-byte buffer
        assert_eq!(past_the_end(16, 4, 16), "just past the end");
        assert_eq!(past_the_end(24, 4, 16), "8 bytes past the end");
        assert_eq!(past_the_end(14, 4, 16), "its last 2 bytes past the end");
        assert_eq!(past_the_end(15, 4, 16), "its last 3 bytes past the end");
        assert_eq!(past_the_end(17, 1, 16), "1 byte past the end");
    }

    #[test]
    pub(crate) fn one_byte_is_singular() {
        assert_eq!(super::bytes(1), "1 byte");
        assert_eq!(super::bytes(0), "0 bytes");
        assert_eq!(super::bytes(4), "4 bytes");
    }
}

/// The negative index `byte_offset` stands for when it is a 32-bit unsigned index that went a
/// little below zero (`in[x - 1]` at x = 0, with unsigned x): 2^32 − k elements of `size`
/// bytes past the start, for k up to 65,536. `None` for any other offset.
fn wrapped_index(byte_offset: u64, size: u64) -> Option<i64> {
    if size == 0 || !byte_offset.is_multiple_of(size) {
        return None;
    }
    let index = byte_offset / size;
    let wrap = 1u64 << 32;
    (wrap - (1 << 16)..wrap)
        .contains(&index)
        .then(|| index as i64 - wrap as i64)
}

#[cfg(test)]
mod wrapped_tests {
    use super::wrapped_index;

    #[test]
    fn an_unsigned_index_just_below_zero_is_read_as_negative() {
        assert_eq!(wrapped_index(4 * ((1 << 32) - 1), 4), Some(-1));
        assert_eq!(wrapped_index(8 * ((1 << 32) - 1000), 8), Some(-1000));
        // far from the wrap, or not a whole element: an ordinary stray address
        assert_eq!(wrapped_index(4 * (1 << 31), 4), None);
        assert_eq!(wrapped_index(4 * ((1 << 32) - 1) + 2, 4), None);
    }
}
