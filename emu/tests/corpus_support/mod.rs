//! What the corpus tests share: loading the committed PTX, finding a `.cu` file's `// BUG:`
//! line, launch shapes, and reading and writing device buffers.

// Each test binary uses some of these.
#![allow(dead_code)]

use ptx_emu::*;

pub fn module(path: &str) -> Module {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    Module::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1-based line of the `// BUG:` marker in a .cu file.
pub fn bug_line(path: &str) -> u32 {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let i = text
        .lines()
        .position(|l| l.contains("// BUG:"))
        .unwrap_or_else(|| panic!("{path} has no BUG line"));
    i as u32 + 1
}

pub fn cfg(grid: u32, block: u32, dyn_shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: dyn_shared,
    }
}

pub fn u32s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    emu.read(p, &mut b).unwrap();
    b.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn f32s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<f32> {
    u32s(emu, p, n).into_iter().map(f32::from_bits).collect()
}

pub fn put_u32(emu: &mut Emulator, p: DevicePtr, v: &[u32]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    emu.write(p, &b).unwrap();
}

pub fn put_f32(emu: &mut Emulator, p: DevicePtr, v: &[f32]) {
    put_u32(emu, p, &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

pub fn show(r: &RunReport) -> String {
    r.findings.iter().map(|f| format!("{f}\n")).collect()
}

pub fn races(r: &RunReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::Race { .. }))
        .collect()
}

pub fn corpus(name: &str) -> Module {
    module(&format!("emu/tests/corpus/{name}.ptx"))
}

pub fn corpus_bug(name: &str) -> u32 {
    bug_line(&format!("emu/tests/corpus/{name}.cu"))
}

pub fn launch_corpus(
    emu: &mut Emulator,
    name: &str,
    config: &LaunchConfig,
    args: &[KernelArg],
    opts: &RunOptions,
) -> RunReport {
    emu.launch(&corpus(name), name, config, args, opts)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn only(r: &RunReport, kind: FindingKind) -> &Finding {
    assert_eq!(r.findings.len(), 1, "{}", show(r));
    assert_eq!(r.findings[0].kind, kind, "{}", show(r));
    &r.findings[0]
}
