//! The committed `kernels/ptx/` must be what the pinned NVRTC makes of today's sources; the
//! emulator runs that PTX wherever NVRTC is absent.

use harness::nvrtc;
use harness::testing::require_pinned_nvrtc;
use harness::{HarnessError, ptx};

#[test]
fn committed_ptx_is_fresh() {
    require_pinned_nvrtc();
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
    require_pinned_nvrtc();
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
    require_pinned_nvrtc();
    let source = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n";
    let ptx = nvrtc::compile("kernels/example/ok.cu", source, nvrtc::EMU_ARCH).unwrap();
    assert!(ptx.contains(".file\t1 \"kernels/example/ok.cu\""), "{ptx}");
    assert!(
        ptx.contains(".loc\t1 1"),
        "-lineinfo must emit .loc directives"
    );
}
