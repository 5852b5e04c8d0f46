//! What `racetrack check` spends outside the launch on one large buffer, on 1, 2, 4 … cores:
//! making its data (`random:1`, `iota`, `const:1.5`), uploading it to the emulator, copying it
//! back, and the stats a report shows of it. No compile and no launch, so it runs where NVRTC is
//! not installed (a GPU machine's CPUs). `emu/BENCHMARK.md`, "Overheads outside the launch".
//!
//! ```text
//! cargo run --release -p harness --example overheads            # 4 Mi floats (16 MiB)
//! cargo run --release -p harness --example overheads -- N       # N floats
//! ```
//!
//! Each cell is the best of five, in ms; the cores are rayon's pool, as `--threads` sizes it.

use std::time::{Duration, Instant};

use harness::check::{ArgSpec, HostArg, HostData};
use harness::{BackendChoice, Device};

const RUNS: usize = 5;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    // As in a one-shot `racetrack check`, every large buffer is fresh memory the kernel faults in
    // page by page: glibc would otherwise keep freed buffers for the next run's.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called before any other thread exists; mallopt only sets an allocator parameter.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
    let len: usize = match std::env::args().nth(1) {
        Some(text) => text.parse()?,
        None => 4 << 20,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads: Vec<usize> = std::iter::successors(Some(1), |&n| Some(n * 2))
        .take_while(|&n| n < cores)
        .collect();
    threads.push(cores);
    println!(
        "{len} f32 ({} MiB), best of {RUNS}, ms; {cores} cores",
        (len * 4) >> 20
    );
    println!("| threads | random:1 | iota | const:1.5 | upload | copy back | stats |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for &n in &threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build()?;
        let row = pool.install(|| row(len))?;
        let cells: Vec<String> = row
            .iter()
            .map(|took| format!("{:.1}", took.as_secs_f64() * 1e3))
            .collect();
        println!("| {n} | {} |", cells.join(" | "));
    }
    Ok(())
}

/// The best time of each column.
fn row(len: usize) -> Result<[Duration; 6], Error> {
    let mut best = [Duration::MAX; 6];
    for _ in 0..RUNS {
        let mut took = [Duration::ZERO; 6];
        let mut random = None;
        for (column, fill) in ["random:1", "iota", "const:1.5"].iter().enumerate() {
            let spec: ArgSpec = format!("x:f32[{len}]={fill}").parse()?;
            let started = Instant::now();
            let arg = spec.resolve(0)?;
            took[column] = started.elapsed();
            if column == 0 {
                random = Some(arg);
            }
        }
        let Some(HostArg::Buffer { data, .. }) = random else {
            return Err("random:1 made no buffer".into());
        };
        let mut device = Device::open(BackendChoice::Emu)?;
        let started = Instant::now();
        let buffer = device.upload(data.as_bytes(), "x")?;
        took[3] = started.elapsed();
        let started = Instant::now();
        let mut values: Vec<f32> = bytemuck::zeroed_vec(len);
        device.download_into(&buffer, bytemuck::cast_slice_mut(&mut values))?;
        let back = HostData::from(values);
        took[4] = started.elapsed();
        let started = Instant::now();
        let stats = back.stats();
        took[5] = started.elapsed();
        assert!(
            back == data && stats.is_some(),
            "the buffer came back changed"
        );
        for (best, took) in best.iter_mut().zip(took) {
            *best = (*best).min(took);
        }
    }
    Ok(best)
}
