// A Racetrack trace (emu/TRACE.md); regenerate it with the command it records, never by hand.
(window.racetrackTraces = window.racetrackTraces || {})["ch4-racy-increment.hardware"] =
{
"format": "racetrack-trace",
"version": 1,
"command": "racetrack trace kernels/ch4_atomics/01_racy_increment.cu --entry racy_increment --grid 2 --block 16 --arg 'x:i32[1]=zeros' --schedule hardware",
"kernel": {"entry":"racy_increment","file":"kernels/ch4_atomics/01_racy_increment.cu"},
"launch": {"block":[16,1,1],"dynamic_shared_bytes":0,"grid":[2,1,1]},
"schedule": {"name":"hardware","seed":null},
"completed": true,
"source": [
"// BROKEN(race): lost updates — fixed in 02_atomic_increment.cu",
"// Thread mapping: every thread of every block adds one to the same counter, x[0].",
"// Shared memory: none.",
"// Launch: any grid × block; the walk-through uses 10 blocks of 16 threads and expects 160.",
"",
"// ANCHOR: kernel",
"extern \"C\" __global__ void racy_increment(int *x)",
"{",
"    x[0] = x[0] + 1; // BUG: read, add, write: another thread's write between them is lost",
"}",
"// ANCHOR_END: kernel"
],
"warps": [
{"block":0,"first_thread":0,"lanes":16},
{"block":1,"first_thread":0,"lanes":16}
],
"arrays": [
{"block":null,"columns":null,"initial":[0],"length":1,"name":"x","space":"global","type":"i32"}
],
"program": [
{"inlined_at":null,"line":7,"ptx_line":24,"text":"ld.param.u64 %rd1, [racy_increment_param_0];"},
{"inlined_at":null,"line":9,"ptx_line":26,"text":"cvta.to.global.u64 %rd2, %rd1;"},
{"inlined_at":null,"line":9,"ptx_line":27,"text":"ld.global.u32 %r1, [%rd2];"},
{"inlined_at":null,"line":9,"ptx_line":28,"text":"add.s32 %r2, %r1, 1;"},
{"inlined_at":null,"line":9,"ptx_line":29,"text":"st.global.u32 [%rd2], %r2;"},
{"inlined_at":null,"line":10,"ptx_line":31,"text":"ret;"},
{"inlined_at":null,"line":10,"ptx_line":35,"text":".file 1 \"kernels/ch4_atomics/01_racy_increment.cu\""}
],
"events": [
{"kind":"step","lanes":65535,"pc":0,"warp":0},
{"kind":"step","lanes":65535,"pc":1,"warp":0},
{"access":{"lanes":[[0,0,0,0],[1,0,0,0],[2,0,0,0],[3,0,0,0],[4,0,0,0],[5,0,0,0],[6,0,0,0],[7,0,0,0],[8,0,0,0],[9,0,0,0],[10,0,0,0],[11,0,0,0],[12,0,0,0],[13,0,0,0],[14,0,0,0],[15,0,0,0]],"op":"read","space":"global"},"kind":"step","lanes":65535,"pc":2,"warp":0},
{"kind":"step","lanes":65535,"pc":0,"warp":1},
{"kind":"step","lanes":65535,"pc":1,"warp":1},
{"access":{"lanes":[[0,0,0,0],[1,0,0,0],[2,0,0,0],[3,0,0,0],[4,0,0,0],[5,0,0,0],[6,0,0,0],[7,0,0,0],[8,0,0,0],[9,0,0,0],[10,0,0,0],[11,0,0,0],[12,0,0,0],[13,0,0,0],[14,0,0,0],[15,0,0,0]],"op":"read","space":"global"},"kind":"step","lanes":65535,"pc":2,"warp":1},
{"kind":"step","lanes":65535,"pc":3,"warp":0},
{"access":{"lanes":[[0,0,0,1],[1,0,0,1],[2,0,0,1],[3,0,0,1],[4,0,0,1],[5,0,0,1],[6,0,0,1],[7,0,0,1],[8,0,0,1],[9,0,0,1],[10,0,0,1],[11,0,0,1],[12,0,0,1],[13,0,0,1],[14,0,0,1],[15,0,0,1]],"op":"write","space":"global"},"findings":[0],"kind":"step","lanes":65535,"pc":4,"warp":0},
{"kind":"step","lanes":65535,"pc":3,"warp":1},
{"access":{"lanes":[[0,0,0,1],[1,0,0,1],[2,0,0,1],[3,0,0,1],[4,0,0,1],[5,0,0,1],[6,0,0,1],[7,0,0,1],[8,0,0,1],[9,0,0,1],[10,0,0,1],[11,0,0,1],[12,0,0,1],[13,0,0,1],[14,0,0,1],[15,0,0,1]],"op":"write","space":"global"},"kind":"step","lanes":65535,"pc":4,"warp":1},
{"exit":65535,"kind":"step","lanes":65535,"pc":5,"warp":0},
{"exit":65535,"kind":"step","lanes":65535,"pc":5,"warp":1}
],
"findings": [
{"accesses":[{"block":[1,0,0],"event":5,"lane":15,"line":9,"op":"read","thread":[15,0,0]},{"block":[0,0,0],"event":7,"lane":0,"line":9,"op":"write","thread":[0,0,0]}],"count":1,"hazard":"write-after-read","kind":"race","location":{"array":0,"index":0},"space":"global","text":"race (write-after-read) on global memory: x[0]\n  read:  block (1,0,0) thread (15,0,0) at kernels/ch4_atomics/01_racy_increment.cu:9\n  write: block (0,0,0) thread (0,0,0) at kernels/ch4_atomics/01_racy_increment.cu:9\n  different blocks, and no atomic/fence hand-off orders them (__syncthreads() only orders one block)"}
]
};
