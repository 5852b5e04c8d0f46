"""Numba's grid group (``cuda.cg.this_grid()``, ``g.sync()``) on the emulator.

Numba compiles them to calls into CUDA's device runtime, which its PTX declares ``.extern``:
``cudaCGGetIntrinsicHandle(scope)`` and ``cudaCGSynchronize(handle, flags)``, and it launches
such a kernel cooperatively. Here both are defined in PTX, the way CUDA C's
``cooperative_groups::this_grid().sync()`` compiles: the handle is the grid workspace that a
cooperative launch hands a kernel in ``%envreg1:%envreg2``, and a sync counts the blocks in
there with a release atomic and waits for the count to flip with acquire loads, between two
block barriers. The emulator runs that PTX as it runs CUDA C's, so racecheck orders accesses
across a Numba grid sync exactly as it does across CUDA C's, and the launch is the emulator's
cooperative launch (every block resident at once, the workspace set up, a grid too large to be
resident refused).
"""

from __future__ import annotations

import re

_EXTERN_DECLARATION = re.compile(r"^\.extern\s+\.func\s*\([^)]*\)\s*(\w+)\s*\([^)]*\)\s*;", re.M)
_SYNC_CALL = re.compile(r"(call(?:\.uni)?\s*\([^)]*\),\s*)cudaCGSynchronize\b")
_LOC = re.compile(r"^\s*\.loc\s+[^\n]*", re.M)

# Each body follows the kernel. `cudaCGSynchronize` gets one copy per call, which carries the
# call's `.loc`: what happens at its barriers (threads that exited instead of arriving) is then
# reported at the `g.sync()` line of the .py file, not at a line of PTX.
_DEFINITIONS = {
    # The grid group's handle: the grid workspace's address (0 outside a cooperative launch).
    "cudaCGGetIntrinsicHandle": """
.func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(
\t.param .b32 cudaCGGetIntrinsicHandle_param_0
)
{
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<4>;
\tmov.u32 %r1, %envreg1;
\tmov.u32 %r2, %envreg2;
\tcvt.u64.u32 %rd1, %r1;
\tcvt.u64.u32 %rd2, %r2;
\tshl.b64 %rd1, %rd1, 32;
\tor.b64 %rd3, %rd1, %rd2;
\tst.param.b64 [func_retval0], %rd3;
\tret;
}
""",
    # A grid-wide barrier. Thread (0,0,0) of each block adds its block to the workspace's
    # counter (at +4; block 0 adds 0x80000001 - blocks, every other block 1, so the sum flips
    # the top bit once all have arrived) and waits until it has flipped; the block barriers
    # around it hold the rest of the block. Without a workspace a GPU traps, and so does this.
    "cudaCGSynchronize": """
.func (.param .b32 func_retval0) NAME(
\t.param .b64 NAME_param_0,
\t.param .b32 NAME_param_1
)
{
LOC
\t.reg .pred %p<4>;
\t.reg .b32 %r<16>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [NAME_param_0];
\tsetp.eq.u64 %p1, %rd1, 0;
\t@%p1 trap;
\tbarrier.sync 0;
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, %tid.y;
\tmov.u32 %r3, %tid.z;
\tor.b32 %r4, %r1, %r2;
\tor.b32 %r4, %r4, %r3;
\tsetp.ne.u32 %p2, %r4, 0;
\t@%p2 bra $NAME_DONE;
\tadd.u64 %rd2, %rd1, 4;
\tmov.u32 %r5, %nctaid.x;
\tmov.u32 %r6, %nctaid.y;
\tmov.u32 %r7, %nctaid.z;
\tmul.lo.u32 %r8, %r5, %r6;
\tmul.lo.u32 %r8, %r8, %r7;
\tmov.u32 %r9, %ctaid.x;
\tmov.u32 %r10, %ctaid.y;
\tmov.u32 %r11, %ctaid.z;
\tor.b32 %r12, %r9, %r10;
\tor.b32 %r12, %r12, %r11;
\tsetp.eq.u32 %p3, %r12, 0;
\tsub.u32 %r13, -2147483647, %r8;
\tselp.b32 %r13, %r13, 1, %p3;
\tatom.add.release.gpu.u32 %r14, [%rd2], %r13;
$NAME_WAIT:
\tld.acquire.gpu.u32 %r15, [%rd2];
\txor.b32 %r15, %r15, %r14;
\tsetp.gt.s32 %p3, %r15, -1;
\t@%p3 bra $NAME_WAIT;
$NAME_DONE:
\tbarrier.sync 0;
\tmov.u32 %r15, 0;
\tst.param.b32 [func_retval0], %r15;
\tret;
}
""",
}


def uses_grid_group(ptx: str) -> bool:
    """Whether Numba's PTX calls into the device runtime for a grid group."""
    return any(match.group(1) in _DEFINITIONS for match in _EXTERN_DECLARATION.finditer(ptx))


def with_grid_group(ptx: str) -> str:
    """Numba's PTX with the grid group's device runtime calls defined (see the module's doc).
    The declarations give way to blank lines, so PTX line numbers stay those of Numba's PTX."""
    declared = [match.group(1) for match in _EXTERN_DECLARATION.finditer(ptx) if match.group(1) in _DEFINITIONS]
    ptx = _EXTERN_DECLARATION.sub(
        lambda match: "\n" * match.group(0).count("\n") if match.group(1) in _DEFINITIONS else match.group(0), ptx
    )
    bodies = []
    if "cudaCGGetIntrinsicHandle" in declared:
        bodies.append(_DEFINITIONS["cudaCGGetIntrinsicHandle"])
    if "cudaCGSynchronize" in declared:
        calls = list(_SYNC_CALL.finditer(ptx))
        for number, call in enumerate(calls):
            locs = list(_LOC.finditer(ptx, 0, call.start()))
            loc = locs[-1].group(0).strip() if locs else ""
            name = f"cudaCGSynchronize_{number}"
            bodies.append(_DEFINITIONS["cudaCGSynchronize"].replace("NAME", name).replace("LOC", f"\t{loc}"))
        for number, call in reversed(list(enumerate(calls))):
            ptx = ptx[: call.start()] + call.group(1) + f"cudaCGSynchronize_{number}" + ptx[call.end() :]
    return ptx + "".join(bodies)
