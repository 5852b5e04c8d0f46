//! Racetrack fetches its pinned NVRTC, CUDA headers and nvcc itself: concurrent first runs fetch
//! each once, a half-finished or failed install is never used, what cannot be fetched is one
//! sentence with the command to run, and the nvcc it installs builds whole programs.
//!
//! pip is played by a stand-in `python3` first on `PATH`, which copies the NVRTC, headers and
//! nvcc this test process found (fetching them first if need be; nvcc as pip lays out its wheels,
//! without the links Racetrack adds) and logs each install: no network, and the machine's own
//! wheels are out of sight (the stand-in knows no site-packages).

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::nvcc::{Origin, Toolchain};
use harness::testing::outputs_of_concurrent;

const FAKE_PYTHON: &str = r#"#!/bin/sh
if [ "$1" = "-c" ]; then exit 0; fi
if [ "$1 $2 $3" = "-m pip --version" ]; then echo "pip 99.0 from a stand-in (python 3.11)"; exit 0; fi
target=""; wheels=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    nvidia-*) wheels="$wheels $1"; shift ;;
    *) shift ;;
  esac
done
echo "install$wheels" >> "$FAKE_PIP_LOG"
echo "Collecting$wheels"
# Long enough for every other process to reach the lock while this one installs.
sleep 1
if [ -n "$FAKE_PIP_FAIL" ]; then
  mkdir -p "$target/nvidia/cu13/lib"
  echo "ERROR: No matching distribution found for$wheels" >&2
  exit 1
fi
case "$wheels" in
  *nvidia-cuda-nvcc*)
    mkdir -p "$target/nvidia" && cp -r "$NVCC_SRC" "$target/nvidia/cu13" &&
      rm -f "$target/nvidia/cu13/lib64" "$target/nvidia/cu13/lib/libcudart.so" ;;
  *nvrtc*) mkdir -p "$target/nvidia/cu13/lib" && cp "$NVRTC_SRC"/libnvrtc* "$target/nvidia/cu13/lib/" ;;
  *) mkdir -p "$target/nvidia/cu13" && cp -r "$HEADERS_SRC" "$target/nvidia/cu13/include" ;;
esac
"#;

struct Scene {
    dir: PathBuf,
}

impl Scene {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("racetrack-provision-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let python = dir.join("bin/python3");
        std::fs::write(&python, FAKE_PYTHON).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Self { dir }
    }

    fn cache(&self) -> PathBuf {
        self.dir.join("cache/racetrack")
    }

    fn pip_log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("pip.log"))
            .unwrap_or_default()
            .lines()
            .map(ToString::to_string)
            .collect()
    }

    /// `racetrack doctor --fetch` as on a fresh machine: only the stand-in python3, no
    /// LD_LIBRARY_PATH or CUDA_PATH, an empty cache.
    fn racetrack(&self, sources: &Sources, fail: bool) -> Command {
        self.racetrack_with(sources, fail, &["doctor", "--fetch"])
    }

    /// `racetrack ARGS` on the same fresh machine, in the scene's folder.
    fn racetrack_with(&self, sources: &Sources, fail: bool, args: &[&str]) -> Command {
        let mut command = Command::new(harness::ptx::workspace_binary(env!(
            "CARGO_BIN_EXE_racetrack"
        )));
        command
            .args(args)
            .current_dir(&self.dir)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("CUDA_PATH")
            .env_remove("RACETRACK_OFFLINE")
            .env_remove("RACETRACK_NVCC")
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.dir.join("bin").display()),
            )
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env("FAKE_PIP_LOG", self.dir.join("pip.log"))
            .env("NVRTC_SRC", &sources.nvrtc_lib)
            .env("HEADERS_SRC", &sources.include)
            .env("NVCC_SRC", &sources.nvcc_root);
        if fail {
            command.env("FAKE_PIP_FAIL", "1");
        }
        command
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where this process's NVRTC, CUDA headers and nvcc are, for the stand-in pip to copy.
struct Sources {
    nvrtc_lib: PathBuf,
    include: PathBuf,
    /// The `nvidia/cu13` folder of a pip-installed nvcc.
    nvcc_root: PathBuf,
}

impl Scene {
    /// NVRTC and the headers already in the scene's cache, linked to this process's own, so
    /// that `doctor --fetch` goes on to nvcc.
    fn with_nvrtc_and_headers(self, sources: &Sources) -> Self {
        for (piece, inner, source) in [
            ("nvrtc-13.0.88", "lib", &sources.nvrtc_lib),
            ("headers-13.0.96-13.0.85", "include", &sources.include),
        ] {
            let cu13 = self.cache().join(piece).join("nvidia/cu13");
            std::fs::create_dir_all(&cu13).unwrap();
            std::os::unix::fs::symlink(source, cu13.join(inner)).unwrap();
        }
        self
    }
}

fn sources() -> Sources {
    let nvrtc = harness::nvrtc::require_nvrtc().unwrap_or_else(|error| panic!("{error}"));
    let library = nvrtc
        .path
        .clone()
        .expect("NVRTC was loaded from a known folder");
    let include = harness::nvrtc::require_cuda_headers()
        .unwrap_or_else(|error| panic!("{error}"))
        .into_iter()
        .find(|dir| dir.join("cooperative_groups.h").is_file())
        .expect("a folder with cooperative_groups.h");
    let nvcc = harness::nvcc::require_nvcc().unwrap_or_else(|error| panic!("{error}"));
    let nvcc_root = nvcc
        .nvcc
        .canonicalize()
        .unwrap()
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap();
    Sources {
        nvrtc_lib: library.parent().map(Path::to_path_buf).unwrap(),
        include,
        nvcc_root,
    }
}

/// Whether this machine's nvcc was installed by pip, which the stand-in pip can copy; a
/// toolkit's has another layout (and is in the way, see [`toolkit_in_the_way`]).
fn pip_laid_out(sources: &Sources) -> bool {
    let pip = sources.nvcc_root.join("lib/libcudart.so.13").is_file()
        && sources.nvcc_root.join("nvvm/bin/cicc").is_file();
    if !pip {
        eprintln!(
            "nvcc here is not laid out as pip installs it ({}), so the stand-in pip cannot copy it",
            sources.nvcc_root.display()
        );
    }
    pip
}

/// A toolkit at a fixed path (or nvcc in `/usr/bin`, which the scenes' `PATH` keeps) cannot be
/// hidden from a child process.
fn toolkit_in_the_way() -> bool {
    if Path::new("/usr/local/cuda/lib64/libnvrtc.so.13").exists() {
        eprintln!("NVRTC is installed under /usr/local/cuda here, so nothing would be fetched");
        return true;
    }
    let nvcc = ["/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc", "/bin/nvcc"]
        .into_iter()
        .find(|nvcc| Toolchain::at(Path::new(nvcc), Origin::Toolkit).is_ok());
    if let Some(nvcc) = nvcc {
        eprintln!("nvcc 13.0 is installed as {nvcc} here, so it would not be fetched");
    }
    nvcc.is_some()
}

/// Ten lines of a whole program, host code and all, as `racetrack run` will be given.
const PROGRAM: &str = r#"#include <cstdio>
__global__ void add_index(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += i;
}
int main() {
    int *x;
    cudaMalloc(&x, 100 * sizeof(int));
    add_index<<<4, 32>>>(x, 100);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
"#;

/// Builds [`PROGRAM`] in `dir` with `toolchain` against the shared runtime, and checks that the
/// program asks for `libcudart.so.13` by its soname, as Racetrack's own runtime answers.
fn builds_a_whole_program(toolchain: &Toolchain, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("program.cu"), PROGRAM).unwrap();
    let output = toolchain
        .command()
        .args(["-cudart", "shared", "-o", "program", "program.cu"])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|error| panic!("{} does not start: {error}", toolchain.nvcc.display()));
    assert!(output.status.success(), "{toolchain:?}\n{}", text(&output));
    let program = std::fs::read(dir.join("program")).unwrap();
    assert!(program.starts_with(b"\x7fELF"), "not an executable");
    assert!(
        program
            .windows(b"libcudart.so.13\0".len())
            .any(|window| window == b"libcudart.so.13\0"),
        "the program does not need libcudart.so.13"
    );
}

#[test]
fn the_toolchain_builds_a_whole_program_against_the_shared_runtime() {
    // The host compiler first: without one the sentence says what to install.
    let host = harness::nvcc::host_compiler().unwrap_or_else(|error| panic!("{error}"));
    assert!(!host.version.is_empty(), "{host:?}");
    let toolchain = harness::nvcc::require_nvcc().unwrap_or_else(|error| panic!("{error}"));
    assert!(toolchain.version.starts_with("13.0."), "{toolchain:?}");
    assert!(
        toolchain.runtime_lib_dir.join("libcudart.so.13").is_file(),
        "{toolchain:?}"
    );
    assert!(
        toolchain.include_dir.join("cuda_runtime.h").is_file(),
        "{toolchain:?}"
    );
    let dir = std::env::temp_dir().join(format!(
        "racetrack-provision-program-{}",
        std::process::id()
    ));
    builds_a_whole_program(&toolchain, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The line of `racetrack doctor`'s output that starts with `start`, or nothing.
fn row(output: &Output, start: &str) -> String {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find(|line| line.starts_with(start))
        .unwrap_or_default()
        .to_string()
}

fn staging_left(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(".fetching-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The wheels and a scene named `name` for a test that installs them with pip; `None` (the test
/// has nothing to show) when a CUDA toolkit on this machine would be found first, or pip did
/// not lay the wheels out.
fn pip_scene(name: &str) -> Option<(Sources, Scene)> {
    if toolkit_in_the_way() {
        return None;
    }
    let sources = sources();
    if !pip_laid_out(&sources) {
        return None;
    }
    Some((sources, Scene::new(name)))
}

#[test]
fn concurrent_first_runs_fetch_each_piece_once_and_all_use_it() {
    let Some((sources, scene)) = pip_scene("concurrent") else {
        return;
    };
    // What a killed install left behind: removed under the lock, never used.
    let leftover = scene.cache().join(".fetching-nvrtc-13.0.88-999999");
    std::fs::create_dir_all(leftover.join("nvidia/cu13/lib")).unwrap();
    // All four start before any finishes: they meet at the lock.
    let outputs = outputs_of_concurrent((0..4).map(|_| scene.racetrack(&sources, false)));
    for output in &outputs {
        assert!(output.status.success(), "{}", text(output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("(Racetrack's cache)") && stdout.contains("✓ NVRTC"),
            "{}",
            text(output)
        );
    }
    let log = scene.pip_log();
    assert_eq!(
        log,
        vec![
            "install nvidia-cuda-nvrtc==13.0.88",
            "install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85",
            "install nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cuda-profiler-api==13.0.85 nvidia-nvtx==13.0.85",
        ],
        "each piece is installed once"
    );
    for piece in ["NVRTC", "nvcc"] {
        let announced = outputs
            .iter()
            .filter(|output| {
                String::from_utf8_lossy(&output.stderr)
                    .contains(&format!("racetrack: fetching {piece} "))
            })
            .count();
        assert_eq!(
            announced, 1,
            "one process fetches {piece}, the others wait and use it"
        );
    }
    for output in &outputs {
        assert!(
            row(output, "✓ nvcc").contains(" 13.0.88 at "),
            "{}",
            text(output)
        );
    }

    assert!(
        scene
            .cache()
            .join("nvrtc-13.0.88/nvidia/cu13/lib/libnvrtc.so.13")
            .is_file()
    );
    assert!(
        scene
            .cache()
            .join("headers-13.0.96-13.0.85/nvidia/cu13/include/cooperative_groups.h")
            .is_file()
    );
    assert_eq!(staging_left(&scene.cache()), Vec::<String>::new());

    // The links pip's layout lacks were made, so the installed nvcc needs nothing else.
    let cu13 = scene
        .cache()
        .join("nvcc-13.0.88-13.0.88-13.0.88-13.0.96-13.0.85-13.0.85-13.0.85/nvidia/cu13");
    assert_eq!(
        std::fs::read_link(cu13.join("lib64")).unwrap(),
        Path::new("lib")
    );
    let toolchain = Toolchain::at(&cu13.join("bin/nvcc"), Origin::Cache).unwrap();
    assert_eq!(toolchain.version, "13.0.88");
    assert!(
        toolchain.command().get_envs().next().is_none(),
        "{toolchain:?}"
    );
    builds_a_whole_program(&toolchain, &scene.dir.join("program"));

    // A later run finds it in the cache and does not ask pip again.
    let again = scene.racetrack(&sources, false).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("fetching"),
        "{}",
        text(&again)
    );
    assert_eq!(scene.pip_log().len(), 3);
}

#[test]
fn a_file_that_includes_only_standard_headers_gets_cuda_headers_on_a_fresh_machine() {
    if toolkit_in_the_way() {
        return;
    }
    let sources = sources();
    let scene = Scene::new("standard-only");
    // A whole program as tutorials ship it: no CUDA header named, but <cstdlib>'s and
    // <iostream>'s stand-ins are built on libcu++, which comes with CUDA's headers.
    std::fs::write(
        scene.dir.join("sum.cu"),
        "#include <cstdlib>\n#include <iostream>\n\
         __global__ void sum(const int *x, int *total) { atomicAdd(total, abs(x[threadIdx.x])); }\n\
         int main() { std::cout << \"hi\"; return EXIT_SUCCESS; }\n",
    )
    .unwrap();
    let args = [
        "check",
        "sum.cu",
        "--entry",
        "sum",
        "--grid",
        "1",
        "--block",
        "4",
        "--arg",
        "i32[4]=const:-2",
        "--arg",
        "total:i32[1]=zeros",
        "--backend",
        "emu",
        "--show",
        "total",
    ];
    let output = scene
        .racetrack_with(&sources, false, &args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("total (arg 1, i32[1]): [8]"),
        "{}",
        text(&output)
    );
    let mut installs = scene.pip_log();
    installs.sort();
    assert_eq!(
        installs,
        vec![
            "install nvidia-cuda-nvrtc==13.0.88",
            "install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85",
        ]
    );
}

#[test]
fn a_failed_fetch_is_one_sentence_and_leaves_nothing_to_use() {
    if toolkit_in_the_way() {
        return;
    }
    let sources = sources();
    let scene = Scene::new("failed");
    let output = scene.racetrack(&sources, true).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let error: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("error:"))
        .collect();
    assert_eq!(error.len(), 1, "{}", text(&output));
    for part in [
        "NVRTC was not found in LD_LIBRARY_PATH",
        "pip could not fetch it (ERROR: No matching distribution found for nvidia-cuda-nvrtc==13.0.88)",
        "run `python3 -m pip install nvidia-cuda-nvrtc==13.0.88` to see why",
    ] {
        assert!(error[0].contains(part), "{part}\n{}", text(&output));
    }
    assert!(!scene.cache().join("nvrtc-13.0.88").exists());
    assert_eq!(staging_left(&scene.cache()), Vec::<String>::new());
}

#[test]
fn offline_never_runs_pip() {
    if toolkit_in_the_way() {
        return;
    }
    let sources = sources();
    let scene = Scene::new("offline");
    let output = scene
        .racetrack(&sources, false)
        .env("RACETRACK_OFFLINE", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "RACETRACK_OFFLINE is set, so Racetrack did not fetch it; run `python3 -m pip install nvidia-cuda-nvrtc==13.0.88`"
        ),
        "{}",
        text(&output)
    );
    assert!(scene.pip_log().is_empty(), "pip ran: {:?}", scene.pip_log());
}

#[test]
fn offline_with_no_nvcc_is_one_line_with_the_command_to_run() {
    if toolkit_in_the_way() {
        return;
    }
    let sources = sources();
    let scene = Scene::new("offline-nvcc").with_nvrtc_and_headers(&sources);
    let output = scene
        .racetrack(&sources, false)
        .env("RACETRACK_OFFLINE", "1")
        .output()
        .unwrap();
    harness::testing::assert_one_line_error(
        &output,
        "nvcc was not found in CUDA_PATH, /usr/local/cuda, PATH, python3's site-packages (nvidia/cu13) and Racetrack's cache",
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "RACETRACK_OFFLINE is set, so Racetrack did not fetch it; run `python3 -m pip install nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cuda-profiler-api==13.0.85 nvidia-nvtx==13.0.85`"
        ),
        "{}",
        text(&output)
    );
    assert!(scene.pip_log().is_empty(), "pip ran: {:?}", scene.pip_log());
}

#[test]
fn racetrack_nvcc_of_another_release_is_refused_not_passed_over() {
    let sources = sources();
    let scene = Scene::new("nvcc-12").with_nvrtc_and_headers(&sources);
    let fake = scene.dir.join("bin/nvcc");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let refusal = format!(
        "RACETRACK_NVCC is {}, which is nvcc 12.4.131, not 13.0; Racetrack needs nvcc 13.0: point RACETRACK_NVCC at one, or unset it so that Racetrack finds or fetches one",
        fake.display()
    );
    let output = scene
        .racetrack(&sources, false)
        .env("RACETRACK_NVCC", &fake)
        .output()
        .unwrap();
    harness::testing::assert_one_line_error(&output, &refusal);
    assert!(scene.pip_log().is_empty(), "pip ran: {:?}", scene.pip_log());
    let doctor = scene
        .racetrack_with(&sources, false, &["doctor"])
        .env("RACETRACK_NVCC", &fake)
        .output()
        .unwrap();
    assert!(doctor.status.success(), "{}", text(&doctor));
    assert!(
        row(&doctor, "✗ nvcc").ends_with(&refusal),
        "{}",
        text(&doctor)
    );
}

/// A learner who ran a whole program first has nvcc's piece, with the same runtime and CCCL
/// wheels as the headers' piece: `check` on a file that includes `cooperative_groups.h` finds
/// CUDA's headers there, and pip installs them no second time.
#[test]
fn headers_that_came_with_nvcc_serve_check_without_a_second_fetch() {
    let Some((sources, scene)) = pip_scene("nvcc-headers") else {
        return;
    };
    std::fs::write(
        scene.dir.join("prog.cu"),
        "#include <cstdio>\n__global__ void k(int *x) { x[threadIdx.x] = threadIdx.x; }\n\
         int main() { int *d; cudaMalloc(&d, 128); k<<<1, 32>>>(d); cudaDeviceSynchronize();\n\
         printf(\"ran\\n\"); return 0; }\n",
    )
    .unwrap();
    let ran = scene
        .racetrack_with(&sources, false, &["run", "prog.cu"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran));
    std::fs::write(
        scene.dir.join("cg.cu"),
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\
         extern \"C\" __global__ void tile_sum(int *x) {\n\
           cg::thread_block block = cg::this_thread_block();\n\
           x[threadIdx.x] = threadIdx.x; block.sync();\n}\n",
    )
    .unwrap();
    let args = [
        "check",
        "cg.cu",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "i32[32]=zeros",
        "--backend",
        "emu",
    ];
    let checked = scene
        .racetrack_with(&sources, false, &args)
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    let log = scene.pip_log();
    assert!(
        !log.contains(
            &"install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85".to_string()
        ),
        "{log:#?}"
    );
}
