//! The pre-decoded form the interpreter runs: every register is a slot index, every symbol an
//! address or offset, every modifier an enum, so the hot loop never looks at a string.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Ty {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    BF16,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub(crate) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "bf16" => Ty::BF16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }
    pub(crate) fn bytes(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::Pred => 1,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 2,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 => 4,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 8,
        }
    }
    pub(crate) fn bits(self) -> u32 {
        self.bytes() * 8
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Pred => "pred",
        }
    }
    pub(crate) fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
    pub(crate) fn float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
    }
    /// A 16-bit float (`.f16` or `.bf16`), computed through f32 and rounded back.
    pub(crate) fn half(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    Clock,
    Clock64,
    /// The upper 32 bits of the step counter (`%globaltimer_hi`).
    ClockHi,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
    DynSmem,
    TotalSmem,
    /// Shared-space offset where `extern .shared` (dynamic) memory begins: the end of the static
    /// variables, known only once the whole module is parsed.
    DynSmemBase,
    /// `%reserved_smem_offset_*`: an address in the block's reserved shared memory (what
    /// cooperative groups keep multi-warp tiles' barriers in), this many bytes into it.
    ReservedSmem(u16),
    /// `%envreg1`/`%envreg2`: the high and low halves of a cooperative launch's grid
    /// workspace address ([`crate::RunOptions::grid_workspace`]), 0 in an ordinary launch.
    EnvRegHi,
    EnvRegLo,
    Zero,
}

impl Sreg {
    /// Whether its value depends on when it is read rather than on who reads it: the clocks
    /// (`%clock`, `%clock64`, `%globaltimer` and its halves) count every warp's instructions
    /// before the read.
    pub(crate) fn timed(self) -> bool {
        match self {
            Sreg::Clock | Sreg::Clock64 | Sreg::ClockHi => true,
            Sreg::Tid(_)
            | Sreg::Ntid(_)
            | Sreg::Ctaid(_)
            | Sreg::Nctaid(_)
            | Sreg::LaneId
            | Sreg::WarpId
            | Sreg::NWarpId
            | Sreg::LaneMaskEq
            | Sreg::LaneMaskLt
            | Sreg::LaneMaskLe
            | Sreg::LaneMaskGt
            | Sreg::LaneMaskGe
            | Sreg::DynSmem
            | Sreg::TotalSmem
            | Sreg::DynSmemBase
            | Sreg::ReservedSmem(_)
            | Sreg::EnvRegHi
            | Sreg::EnvRegLo
            | Sreg::Zero => false,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Opnd {
    Reg(u32),
    Imm(u64),
    Sreg(Sreg),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Space {
    Generic,
    Global,
    Shared,
    Local,
    Param,
    Const,
}

/// Where a memory operand points: `[base + off]`. Param-space operands of the kernel or of a
/// callee are resolved to byte offsets at decode time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Addr {
    Reg {
        base: Opnd,
        off: i64,
    },
    /// Kernel parameter buffer, shared by all threads.
    KParam(u32),
    /// Per-thread parameter area (`.func` params, call-site `.param` variables).
    TParam(u32),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Strength {
    Weak,
    /// volatile / relaxed / acquire / release loads and stores: "morally strong" in PTX's memory
    /// model, so they never race with each other. `.volatile` and `.relaxed` order nothing by
    /// themselves: a read acquires only with a fence after it, a write releases only with a fence
    /// before it.
    Relaxed,
    /// `ld.acquire`: later accesses are ordered after the write it read.
    Acquire,
    /// `st.release`: earlier accesses are ordered before it.
    Release,
}

impl Strength {
    pub(crate) fn is_strong(self) -> bool {
        self != Strength::Weak
    }
}

/// The threads a strong operation (atomic, fence, volatile/relaxed/acquire/release access) is
/// strong towards: PTX's `.cta`, `.gpu` and `.sys` (CUDA's `_block`, plain and `_system`
/// atomics; `__threadfence_block`, `__threadfence`, `__threadfence_system`). A launch without
/// clusters has clusters of one block, so `.cluster` is `.cta` here.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub(crate) enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    /// The scope an opcode's modifiers name, or `default` when they name none.
    pub(crate) fn of(mods: &[&str], default: Scope) -> Scope {
        if mods.iter().any(|m| *m == "cta" || *m == "cluster") {
            Scope::Cta
        } else if mods.contains(&"sys") {
            Scope::Sys
        } else if mods.iter().any(|m| *m == "gpu" || *m == "gl") {
            Scope::Gpu
        } else {
            default
        }
    }

    /// The scope of the threads in one block (`block`) or of the whole device.
    pub(crate) fn covers_other_blocks(self) -> bool {
        self >= Scope::Gpu
    }

    /// As PTX writes it: `cta`, `gpu`, `sys`.
    pub(crate) fn ptx_name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }

    /// The suffix of CUDA's atomics and fences at this scope: `_block`, none, `_system`.
    pub(crate) fn cuda_suffix(self) -> &'static str {
        match self {
            Scope::Cta => "_block",
            Scope::Gpu => "",
            Scope::Sys => "_system",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BinOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    CopySign,
    /// `mul24.lo`/`mul24.hi`: see [`Int3Op::Mad24`].
    Mul24Lo,
    Mul24Hi,
    /// `bmsk.clamp`/`bmsk.wrap`: a mask of `b` bits from bit `a` (sm_70; CUB's radix sort).
    BmskClamp,
    BmskWrap,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum UnOp {
    Neg,
    Abs,
    Not,
    CNot,
    Popc,
    Clz,
    Brev,
    /// `bfind`: the position of the most significant bit that differs from the sign (0 for
    /// unsigned types), or `0xFFFFFFFF` when there is none.
    Bfind,
    /// `bfind.shiftamt`: the left shift that brings that bit to the top.
    BfindShiftAmt,
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) enum Rnd {
    #[default]
    Default,
    Rn,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AtomOp {
    Add,
    /// `atom.add.noftz.f16x2` / `.bf16x2`: two halves packed in a 32-bit word, each added as
    /// `.f16` (`.bf16`) would be, in one atomic step.
    AddPacked(Ty),
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BarKind {
    Sync,
    Arrive,
    RedPopc,
    RedAnd,
    RedOr,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum TestP {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Float modifiers that change results: flush-to-zero and saturation to [0, 1].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct FMod {
    pub ftz: bool,
    pub sat: bool,
    /// `.rz`, `.rm` or `.rp` on `add`/`sub`/`mul`/`fma`; anything else rounds to nearest.
    pub rnd: Rnd,
}

impl FMod {
    pub(crate) fn directed(self) -> bool {
        matches!(self.rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp)
    }
}

#[derive(Clone, PartialEq, Debug)]
pub(crate) enum Op {
    Mov {
        ty: Ty,
        d: u32,
        a: Opnd,
    },
    /// `mov.b64 {lo, hi}, d` and friends: split a wide value into parts.
    Unpack {
        part_bits: u32,
        ds: Vec<Option<u32>>,
        a: Opnd,
    },
    /// `mov.b64 d, {lo, hi}`.
    Pack {
        part_bits: u32,
        d: u32,
        parts: Vec<Opnd>,
    },
    Bin {
        op: BinOp,
        ty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
        fm: FMod,
    },
    Un {
        op: UnOp,
        ty: Ty,
        d: u32,
        a: Opnd,
        fm: FMod,
    },
    /// mad.lo / mad.hi / mad.wide (integer) and fma / mad (float: fused).
    Mad {
        ty: Ty,
        hi: bool,
        wide: bool,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
        fm: FMod,
        negate: Negate,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        d: u32,
        d2: Option<u32>,
        a: Opnd,
        b: Opnd,
        comb: Option<(BoolOp, Opnd, bool)>,
        ftz: bool,
    },
    Set {
        cmp: Cmp,
        dty: Ty,
        ty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
    },
    Selp {
        ty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
        neg: bool,
    },
    Slct {
        ty: Ty,
        cty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    Cvt {
        dty: Ty,
        sty: Ty,
        rnd: Rnd,
        fm: FMod,
        d: u32,
        a: Opnd,
        dbits: u32,
    },
    Cvta {
        to: bool,
        space: Space,
        d: u32,
        a: Opnd,
        wide: bool,
    },
    Bfe {
        ty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    Bfi {
        ty: Ty,
        d: u32,
        f: Opnd,
        b: Opnd,
        c: Opnd,
        e: Opnd,
    },
    Prmt {
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    TestP {
        t: TestP,
        ty: Ty,
        d: u32,
        a: Opnd,
    },
    Ld {
        space: Space,
        ty: Ty,
        ds: Vec<Option<u32>>,
        addr: Addr,
        strong: Strength,
        scope: Scope,
        dbits: u32,
    },
    St {
        space: Space,
        ty: Ty,
        vals: Vec<Opnd>,
        addr: Addr,
        strong: Strength,
        scope: Scope,
    },
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Option<u32>,
        addr: Addr,
        b: Opnd,
        c: Opnd,
        release: bool,
        /// `.acquire` or `.acq_rel`.
        acquire: bool,
        scope: Scope,
    },
    Bra {
        target: u32,
    },
    Call {
        func: u32,
        args: Vec<(u32, u32, u32)>,
        rets: Vec<(u32, u32, u32)>,
    },
    /// `call (rets), %reg, (args), prototype;`: a call through a function's address (a
    /// virtual call, a function pointer). `args` and `rets` are the caller's `.param` offsets;
    /// the callee, known only when it runs, gives the sizes and its own offsets.
    CallIndirect {
        target: Opnd,
        args: Vec<u32>,
        rets: Vec<u32>,
    },
    Ret,
    Exit,
    Bar {
        kind: BarKind,
        id: Opnd,
        count: Option<Opnd>,
        d: Option<u32>,
        p: Option<(Opnd, bool)>,
    },
    BarWarp {
        mask: Opnd,
    },
    Shfl {
        mode: ShflMode,
        d: u32,
        dp: Option<u32>,
        a: Opnd,
        b: Opnd,
        c: Opnd,
        mask: Opnd,
    },
    Vote {
        mode: VoteMode,
        d: u32,
        p: Opnd,
        neg: bool,
        mask: Opnd,
    },
    Activemask {
        d: u32,
    },
    /// `match.any.sync` (`all: false`): each lane gets the mask of lanes holding its value of
    /// `a`; `match.all.sync`: every lane gets the whole mask if all hold one value, else 0,
    /// and `dp` says which.
    Match {
        all: bool,
        ty: Ty,
        d: u32,
        dp: Option<u32>,
        a: Opnd,
        mask: Opnd,
    },
    /// A call to a CUDA runtime function that the PTX declares but does not define. `args` and
    /// `ret` are the call site's `.param` offsets.
    Builtin {
        func: Builtin,
        args: Vec<u32>,
        ret: Option<u32>,
    },
    /// `redux.sync.op.type d, a, mask`: every lane of `mask` gets `op` over all their `a`s
    /// (add wraps; min and max compare as `ty`, signed for `.s32`).
    Redux {
        op: ReduxOp,
        ty: Ty,
        d: u32,
        a: Opnd,
        mask: Opnd,
    },
    /// `fence`/`membar` (`membar.gl` is `.gpu`).
    Fence {
        scope: Scope,
    },
    Nop,
    /// `trap`: the kernel aborts.
    Trap,
    /// Three 32-bit inputs, one 32-bit result: `mad24`, `lop3`, `shf`, `dp4a`, `dp2a`, `sad`.
    Int3 {
        op: Int3Op,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    /// `add`, `sub`, `mul`, `min`, `max`, `fma`, `neg`, `abs` on `.f16x2` or `.bf16x2`: two
    /// halves packed in a 32-bit register, each computed as the `.f16` (`.bf16`) instruction
    /// would; and `cvt.rn.f16x2.f32 d, a, b`, which packs `a` (high) and `b` (low).
    Half2 {
        op: Half2Op,
        ty: Ty,
        fm: FMod,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    /// `cp.async.ca/.cg.shared.global [dst], [src], size{, src_size | ignore_src}`: a copy of
    /// `size` bytes from global to shared memory that lands when the thread waits for its group
    /// (`cp.async.wait_group`/`wait_all`), or when the thread ends. Bytes past `src_size`, or
    /// all of them when the predicate `ignore_src` holds, are zeros.
    CpAsync {
        dst: Addr,
        src: Addr,
        size: u32,
        src_size: Option<Opnd>,
        ignore_src: Option<(u32, bool)>,
    },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar]`: `size` bytes from global to shared memory, then `size` transaction bytes
    /// complete on the barrier at `mbar`. The bytes land at once, as the issuing thread's
    /// writes, which the completion releases to the barrier's waiters.
    CpAsyncBulk {
        dst: Addr,
        src: Addr,
        size: Opnd,
        mbar: Addr,
    },
    /// `cp.async.commit_group`: the thread's copies not yet in a group become its newest group.
    CpAsyncCommit,
    /// `cp.async.wait_group keep` (all but the `keep` newest groups land) and
    /// `cp.async.wait_all` (`all`: every copy, committed or not).
    CpAsyncWait {
        keep: u32,
        all: bool,
    },
    /// `cp.async.mbarrier.arrive{.noinc}`: the thread's copies so far land, then it arrives on
    /// the barrier (`.noinc`: as one of its expected arrivals; otherwise without changing its
    /// count, only publishing the copies to its waiters).
    CpAsyncArrive {
        addr: Addr,
        space: Space,
        noinc: bool,
    },
    /// An `mbarrier` operation on the 8-byte barrier object at `addr` (see [`MbarOp`]).
    Mbarrier {
        op: MbarOp,
        space: Space,
        addr: Addr,
        d: Option<u32>,
        a: Opnd,
    },
    /// `mbarrier.pending_count.b64 d, state`: the arrivals still pending in the phase a state
    /// (an arrive's result) captured.
    MbarPendingCount {
        d: u32,
        state: Opnd,
    },
    /// An instruction the emulator does not run (see [`Unsupported`]): refused when a launch
    /// could reach it, so that the other kernels of the same file still run.
    Unsupported(Box<Unsupported>),
}

/// What an [`Op::Mbarrier`] does, with its operand `a`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MbarOp {
    /// `init`: `a` arrivals complete each phase.
    Init,
    /// `inval`: the object is no barrier any more.
    Inval,
    /// `arrive` (`a` arrivals; `drop`: `arrive_drop`, which also lowers the expected count for
    /// later phases) or `arrive.expect_tx` (`tx`: one arrival after expecting `a` bytes);
    /// `d` gets the state, the phase before the arrival.
    Arrive { drop: bool, tx: bool },
    /// `expect_tx`: `a` more bytes must arrive before the phase can complete.
    ExpectTx,
    /// `complete_tx`: `a` of the expected bytes arrived.
    CompleteTx,
    /// `test_wait`/`try_wait` (`parity`: their `.parity` forms): predicate `d` says whether the
    /// phase state `a` captured (or the phase of parity `a`) completed.
    TestWait { parity: bool },
}

/// What [`Op::Unsupported`] stood for, for the refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unsupported {
    /// The opcode with its modifiers: `tex.1d.v4.f32.s32`.
    pub opcode: String,
    /// Why the parser could not take it, when it is not simply an unknown instruction.
    pub detail: Option<String>,
}

/// Which operands of a float fused multiply-add are negated: none for `fma` as written; the
/// product or the addend where a `mul` and a `sub` were contracted into one (`contract.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Negate {
    pub product: bool,
    pub addend: bool,
}

/// The operations of [`Op::Half2`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Half2Op {
    Bin(BinOp),
    Fma(Negate),
    Un(UnOp),
    PackFromF32,
}

/// The operations of [`Op::Int3`], all on 32-bit values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Int3Op {
    /// `mad24.lo`/`mad24.hi`: the 48-bit product of the low 24 bits of `a` and `b` (sign- or
    /// zero-extended), its bits 0..32 or 16..48, plus `c`.
    Mad24 { hi: bool, signed: bool },
    /// `lop3.b32 d, a, b, c, lut`: any function of three inputs, as a truth table.
    Lop3 { lut: u8 },
    /// `shf.l`/`shf.r`: the funnel shift of `b:a` by `c` (`.wrap`: modulo 32, `.clamp`: at most 32).
    Shf { left: bool, wrap: bool },
    /// `sad`: `c + |a - b|`, the difference taken as signed or unsigned (`__sad`, `__usad`).
    Sad { signed: bool },
    /// `dp4a`/`dp2a.lo`/`dp2a.hi`: a dot product of byte (or halfword × byte) lanes plus `c`.
    Dot {
        pairs: u8,
        hi: bool,
        a_signed: bool,
        b_signed: bool,
    },
}

/// The device runtime functions NVRTC's PTX calls without defining them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Builtin {
    /// `printf`: `vprintf(const char *format, void *packed_arguments)`.
    Vprintf,
    /// `assert`: `__assertfail(message, file, line, function, char_size)`.
    AssertFail,
    Malloc,
    Free,
    /// `cudaGraphSetConditional(handle, value)`: sets the condition of a graph's conditional
    /// node; the runtime that launched the kernel reads it after the launch.
    GraphSetConditional,
    /// The device runtime of dynamic parallelism, by the names CUDA 12 and 13's `cudadevrt`
    /// gives its entry points (`__cudaCDP2…`): see `exec/device_runtime.rs`.
    Cdp(Cdp),
}

/// The device runtime calls a kernel makes to launch kernels (`<<<…>>>` in device code), make
/// streams, copy and allocate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cdp {
    /// `cudaGetParameterBuffer(alignment, size)`, the older form without the kernel.
    GetParameterBuffer,
    /// `(kernel, gridDim, blockDim, sharedMem)`: what `<<<…>>>` in device code calls.
    GetParameterBufferV2,
    /// `cudaLaunchDevice(kernel, buffer, gridDim, blockDim, sharedMem, stream)`.
    LaunchDevice,
    /// `(buffer, stream)`: launches what the buffer was taken for.
    LaunchDeviceV2,
    StreamCreateWithFlags,
    StreamDestroy,
    GetLastError,
    PeekAtLastError,
    GetErrorString,
    GetErrorName,
    /// `cudaMalloc(&ptr, size)` in device code: the device heap, as `malloc`.
    Malloc,
    Free,
    MemcpyAsync,
    MemsetAsync,
}

impl Builtin {
    pub(crate) fn by_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "vprintf" => Builtin::Vprintf,
            "__assertfail" => Builtin::AssertFail,
            "malloc" => Builtin::Malloc,
            "free" => Builtin::Free,
            "cudaGraphSetConditional" => Builtin::GraphSetConditional,
            "__cudaCDP2GetParameterBuffer" => Builtin::Cdp(Cdp::GetParameterBuffer),
            "__cudaCDP2GetParameterBufferV2" => Builtin::Cdp(Cdp::GetParameterBufferV2),
            "__cudaCDP2LaunchDevice" => Builtin::Cdp(Cdp::LaunchDevice),
            "__cudaCDP2LaunchDeviceV2" => Builtin::Cdp(Cdp::LaunchDeviceV2),
            "__cudaCDP2StreamCreateWithFlags" => Builtin::Cdp(Cdp::StreamCreateWithFlags),
            "__cudaCDP2StreamDestroy" => Builtin::Cdp(Cdp::StreamDestroy),
            "__cudaCDP2GetLastError" => Builtin::Cdp(Cdp::GetLastError),
            "__cudaCDP2PeekAtLastError" => Builtin::Cdp(Cdp::PeekAtLastError),
            "__cudaCDP2GetErrorString" => Builtin::Cdp(Cdp::GetErrorString),
            "__cudaCDP2GetErrorName" => Builtin::Cdp(Cdp::GetErrorName),
            "__cudaCDP2Malloc" => Builtin::Cdp(Cdp::Malloc),
            "__cudaCDP2Free" => Builtin::Cdp(Cdp::Free),
            "__cudaCDP2MemcpyAsync" => Builtin::Cdp(Cdp::MemcpyAsync),
            "__cudaCDP2MemsetAsync" => Builtin::Cdp(Cdp::MemsetAsync),
            _ => return None,
        })
    }

    /// (arguments, results) the declaration has.
    pub(crate) fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Vprintf => (2, 1),
            Builtin::AssertFail => (5, 0),
            Builtin::Malloc => (1, 1),
            Builtin::Free => (1, 0),
            Builtin::GraphSetConditional => (2, 0),
            Builtin::Cdp(c) => match c {
                Cdp::GetParameterBuffer => (2, 1),
                Cdp::GetParameterBufferV2 => (4, 1),
                Cdp::LaunchDevice => (6, 1),
                Cdp::LaunchDeviceV2 => (2, 1),
                Cdp::StreamCreateWithFlags => (2, 1),
                Cdp::StreamDestroy | Cdp::Free => (1, 1),
                Cdp::GetLastError | Cdp::PeekAtLastError => (0, 1),
                Cdp::GetErrorString | Cdp::GetErrorName => (1, 1),
                Cdp::Malloc => (2, 1),
                Cdp::MemcpyAsync => (5, 1),
                Cdp::MemsetAsync => (4, 1),
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Where an instruction may reach beyond its block, for the rounds run on several cores
/// (`exec/plan.rs`, and the stretches `stretch.rs` counts).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reach {
    /// Registers, shared, local or parameter memory: the block's own.
    Block,
    /// Global memory, at addresses its lanes' registers tell.
    Global,
    /// What every block may see (`malloc`, `printf`, `assert`, `trap`, a refused instruction):
    /// the round runs on one core.
    Launch,
}

impl Op {
    /// Calls `f` with each operand the instruction reads (a register, an immediate or a special
    /// register), an address's base included; registers named only by number (a call's
    /// arguments, a built-in's) are not operands.
    pub(crate) fn for_each_operand(&self, mut f: impl FnMut(Opnd)) {
        let addr = |a: &Addr, f: &mut dyn FnMut(Opnd)| {
            if let Addr::Reg { base, .. } = a {
                f(*base);
            }
        };
        match self {
            Op::Mov { a, .. }
            | Op::Unpack { a, .. }
            | Op::Un { a, .. }
            | Op::Cvt { a, .. }
            | Op::Cvta { a, .. }
            | Op::TestP { a, .. }
            | Op::Mbarrier { a, .. } => f(*a),
            Op::MbarPendingCount { state, .. } => f(*state),
            Op::Pack { parts, .. } => parts.iter().copied().for_each(f),
            Op::Bin { a, b, .. } | Op::Set { a, b, .. } => {
                f(*a);
                f(*b);
            }
            Op::Setp { a, b, comb, .. } => {
                f(*a);
                f(*b);
                if let Some((_, c, _)) = comb {
                    f(*c);
                }
            }
            Op::Mad { a, b, c, .. }
            | Op::Selp { a, b, c, .. }
            | Op::Slct { a, b, c, .. }
            | Op::Bfe { a, b, c, .. }
            | Op::Prmt { a, b, c, .. }
            | Op::Int3 { a, b, c, .. }
            | Op::Half2 { a, b, c, .. } => {
                f(*a);
                f(*b);
                f(*c);
            }
            Op::Bfi { f: x, b, c, e, .. } => {
                f(*x);
                f(*b);
                f(*c);
                f(*e);
            }
            Op::Ld { addr: a, .. } => addr(a, &mut f),
            Op::St { vals, addr: a, .. } => {
                vals.iter().copied().for_each(&mut f);
                addr(a, &mut f);
            }
            Op::Atom { addr: a, b, c, .. } => {
                addr(a, &mut f);
                f(*b);
                f(*c);
            }
            Op::CallIndirect { target, .. } => f(*target),
            Op::Bar { id, count, p, .. } => {
                f(*id);
                count.iter().copied().for_each(&mut f);
                if let Some((p, _)) = p {
                    f(*p);
                }
            }
            Op::BarWarp { mask } => f(*mask),
            Op::Shfl { a, b, c, mask, .. } => {
                f(*a);
                f(*b);
                f(*c);
                f(*mask);
            }
            Op::Vote { p, mask, .. } => {
                f(*p);
                f(*mask);
            }
            Op::Match { a, mask, .. } | Op::Redux { a, mask, .. } => {
                f(*a);
                f(*mask);
            }
            Op::CpAsync {
                dst, src, src_size, ..
            } => {
                addr(dst, &mut f);
                addr(src, &mut f);
                src_size.iter().copied().for_each(&mut f);
            }
            Op::CpAsyncBulk {
                dst,
                src,
                size,
                mbar,
            } => {
                addr(dst, &mut f);
                addr(src, &mut f);
                f(*size);
                addr(mbar, &mut f);
            }
            Op::CpAsyncArrive { addr: a, .. } => addr(a, &mut f),
            Op::Bra { .. }
            | Op::Call { .. }
            | Op::Ret
            | Op::Exit
            | Op::Activemask { .. }
            | Op::Builtin { .. }
            | Op::Fence { .. }
            | Op::Nop
            | Op::Trap
            | Op::CpAsyncCommit
            | Op::CpAsyncWait { .. }
            | Op::Unsupported(_) => {}
        }
    }

    /// Whether it reads a special register whose value depends on when it is read
    /// ([`Sreg::timed`]: a clock).
    pub(crate) fn reads_timed(&self) -> bool {
        let mut timed = false;
        self.for_each_operand(|o| timed |= matches!(o, Opnd::Sreg(s) if s.timed()));
        timed
    }

    /// The scope of a strong access, atomic or fence (`None` for everything else; a plain
    /// `ld`/`st` has the scope it would have if it were strong).
    pub(crate) fn scope(&self) -> Option<Scope> {
        match self {
            Op::Atom { scope, .. }
            | Op::Fence { scope }
            | Op::Ld { scope, .. }
            | Op::St { scope, .. } => Some(*scope),
            _ => None,
        }
    }

    /// How far this instruction may reach beyond its block.
    pub(crate) fn reach(&self) -> Reach {
        let of_space = |space: &Space| match space {
            Space::Shared | Space::Local | Space::Param => Reach::Block,
            Space::Generic | Space::Global | Space::Const => Reach::Global,
        };
        match self {
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => of_space(space),
            Op::Builtin { .. } | Op::Trap | Op::Unsupported(_) => Reach::Launch,
            // The source is global; the copy's shared destination and the barrier object are
            // the block's own.
            Op::CpAsync { .. } | Op::CpAsyncBulk { .. } => Reach::Global,
            Op::CpAsyncCommit
            | Op::CpAsyncWait { .. }
            | Op::CpAsyncArrive { .. }
            | Op::Mbarrier { .. }
            | Op::MbarPendingCount { .. } => Reach::Block,
            Op::Mov { .. }
            | Op::Unpack { .. }
            | Op::Pack { .. }
            | Op::Bin { .. }
            | Op::Un { .. }
            | Op::Mad { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp { .. }
            | Op::Slct { .. }
            | Op::Cvt { .. }
            | Op::Cvta { .. }
            | Op::Bfe { .. }
            | Op::Bfi { .. }
            | Op::Prmt { .. }
            | Op::TestP { .. }
            | Op::Bra { .. }
            | Op::Call { .. }
            | Op::CallIndirect { .. }
            | Op::Ret
            | Op::Exit
            | Op::Bar { .. }
            | Op::BarWarp { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Activemask { .. }
            | Op::Match { .. }
            | Op::Redux { .. }
            | Op::Fence { .. }
            | Op::Nop
            | Op::Int3 { .. }
            | Op::Half2 { .. } => Reach::Block,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Instr {
    pub op: Op,
    pub guard: Option<(u32, bool)>,
    /// Index into `Module::locs`.
    pub loc: u32,
    pub ptx_line: u32,
}

impl Instr {
    /// Where control can go after this instruction at `pc`, in a function whose code ends
    /// before `end`: a branch's target (and the next instruction when the branch is guarded),
    /// nowhere after an unguarded `ret`, `exit`, `trap` or refused instruction, else the next.
    pub(crate) fn successors(&self, pc: u32, end: u32, out: &mut Vec<u32>) {
        out.clear();
        let next = pc + 1;
        match self.op {
            Op::Bra { target } => {
                out.push(target);
                if self.guard.is_some() {
                    out.push(next);
                }
            }
            Op::Ret | Op::Exit | Op::Trap | Op::Unsupported(_) => {
                if self.guard.is_some() {
                    out.push(next);
                }
            }
            _ => out.push(next),
        }
        out.retain(|&p| p < end);
    }
}

/// A source location from `.loc` (and its `inlined_at`, when the code came from an inlined
/// device function).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Loc {
    pub file: u32,
    pub line: u32,
    pub inlined_at: Option<(u32, u32)>,
    /// The outermost call site of an inlined chain, e.g. the user's kernel line into which a
    /// CUDA header's functions were inlined (`inlined_at` is only the innermost call).
    pub outermost: Option<(u32, u32)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub size: u32,
    pub offset: u32,
    pub ty: Option<Ty>,
}

#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<Param>,
    pub rets: Vec<Param>,
    pub kparam_size: u32,
    /// First instruction (index into `Module::code`).
    pub start: u32,
    pub end: u32,
    pub calls: Vec<u32>,
    /// The function's register slots, per-thread `.param` bytes and local-memory bytes: what a
    /// recursive call saves and restores.
    pub regs: std::ops::Range<u32>,
    pub tparams: std::ops::Range<u32>,
    pub locals: std::ops::Range<u32>,
    /// It can call itself (directly or through others), so each call needs a frame.
    pub recursive: bool,
    /// Bytes of the module's static shared variables this function or a function it calls
    /// names: what a launch of it needs, which a module of many kernels (CUB's) can hold far
    /// less of than the module's total.
    pub static_shared: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct SharedVar {
    pub name: String,
    pub offset: u32,
    pub size: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct GlobalVar {
    pub name: String,
    pub addr: u64,
    pub init: Vec<u8>,
}

/// Where functions' addresses lie (`mov` of a function's name, a vtable's entries): function
/// `i` is at `FUNC_ADDR_BASE + i * FUNC_ADDR_STEP`, in no window of memory, so a load or store
/// there is out of bounds and a call through anything else is no function's.
pub(crate) const FUNC_ADDR_BASE: u64 = 0x0000_7C00_0000_0000;
const FUNC_ADDR_STEP: u64 = 16;

/// The address of function `index` (of `Module::funcs`).
pub(crate) fn func_addr(index: u32) -> u64 {
    FUNC_ADDR_BASE + u64::from(index) * FUNC_ADDR_STEP
}

/// The function whose address `addr` is, if any (a bound check against the module is the
/// caller's).
pub(crate) fn func_at(addr: u64) -> Option<u32> {
    let offset = addr.checked_sub(FUNC_ADDR_BASE)?;
    if offset % FUNC_ADDR_STEP != 0 {
        return None;
    }
    u32::try_from(offset / FUNC_ADDR_STEP).ok()
}

/// The type twice as wide, for `.wide` arithmetic; other types are their own.
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

/// Whether the branch at `branch` to `target` jumps forward over a barrier: the threads that take
/// it never arrive there.
pub(crate) fn jumps_over_a_barrier(code: &[Instr], branch: u32, target: u32) -> bool {
    code.get(branch as usize + 1..target as usize)
        .is_some_and(|skipped| skipped.iter().any(|i| matches!(i.op, Op::Bar { .. })))
}
