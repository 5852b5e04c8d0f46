//! The committed `kernels/ptx/` must be what the pinned NVRTC makes of today's sources; the
//! emulator runs that PTX wherever NVRTC is absent.

use harness::nvrtc::{self, PINNED_NVRTC};
use harness::{HarnessError, ptx};

/// CI installs the pinned NVRTC, so there a missing or different NVRTC is a failure; on a
/// learner's machine these tests say what is missing and pass.
fn pinned_nvrtc_or_skip(test: &str) -> bool {
    match ptx::require_pinned_nvrtc() {
        Ok(()) => true,
        Err(error) if std::env::var_os("CI").is_some() => panic!("{test} must run in CI: {error}"),
        Err(error) => {
            eprintln!("{test} skipped: {error} (pip install {PINNED_NVRTC})");
            false
        }
    }
}

#[test]
fn committed_ptx_is_fresh() {
    if !pinned_nvrtc_or_skip("committed_ptx_is_fresh") {
        return;
    }
    let root = ptx::workspace_root();
    let sources = ptx::kernel_sources(&root).unwrap();
    assert!(
        sources
            .iter()
            .any(|s| s.starts_with("kernels/ch4_atomics/")),
        "{sources:?}"
    );
    let stale = ptx::stale_files(&root).unwrap();
    assert!(
        stale.is_empty(),
        "stale PTX: {stale:?}; run `cargo run -p harness --bin racetrack -- ptx`"
    );
}

#[test]
fn compile_errors_show_nvrtc_log_with_file_and_line() {
    if !pinned_nvrtc_or_skip("compile_errors_show_nvrtc_log_with_file_and_line") {
        return;
    }
    let source = "extern \"C\" __global__ void broken(int *x)\n{\n    x[tid] = 1;\n}\n";
    let error = nvrtc::compile("kernels/example/broken.cu", source, nvrtc::EMU_ARCH).unwrap_err();
    let HarnessError::Compile { path, log } = &error else {
        panic!("expected a compile error, got {error}");
    };
    assert_eq!(path, "kernels/example/broken.cu");
    assert!(
        log.contains("kernels/example/broken.cu:3: error: identifier \"tid\" is undefined"),
        "{log}"
    );
    assert!(
        error
            .to_string()
            .starts_with("kernels/example/broken.cu does not compile"),
        "{error}"
    );
}

#[test]
fn ptx_names_the_kernel_by_its_repository_path() {
    if !pinned_nvrtc_or_skip("ptx_names_the_kernel_by_its_repository_path") {
        return;
    }
    let source = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n";
    let ptx = nvrtc::compile("kernels/example/ok.cu", source, nvrtc::EMU_ARCH).unwrap();
    assert!(ptx.contains(".file\t1 \"kernels/example/ok.cu\""), "{ptx}");
    assert!(
        ptx.contains(".loc\t1 1"),
        "-lineinfo must emit .loc directives"
    );
}
