//! `racetrack run --timings`: when the program ends, how its kernels spent their time on the
//! emulator, kernel by kernel, so that a slow run says which launches to look at.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use ptx_emu::KernelTally;

use crate::runtime::Runtime;

use ptx_emu::run_env::TIMINGS as TIMINGS_ENV;

/// Says each kernel's launches, thread-instructions and time, when `--timings` asked for them.
pub fn report(rt: &mut Runtime) {
    if std::env::var_os(TIMINGS_ENV).is_none() {
        return;
    }
    let elapsed = rt.started.elapsed();
    let tallies = rt.emu.kernel_tallies().to_vec();
    if tallies.is_empty() {
        rt.out.say(&format!(
            "timings: no kernel ran; the program took {:.2} s",
            elapsed.as_secs_f64()
        ));
        return;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header([
        "kernel",
        "launches",
        "thread-instructions",
        "time, s",
        "thread-instructions/s",
        "cores' worth",
    ]);
    let mut all = KernelTally::default();
    for (name, tally) in &tallies {
        all += tally;
        table.add_row(row(&short_name(&crate::launch::display_name(name)), tally));
    }
    table.add_row(row("all kernels", &all));
    rt.out.say(&format!(
        "timings: the program took {:.2} s, {:.2} s of it in kernels on the emulator\n{table}",
        elapsed.as_secs_f64(),
        all.time.as_secs_f64()
    ));
}

fn row(name: &str, tally: &KernelTally) -> [String; 6] {
    let seconds = tally.time.as_secs_f64();
    let per = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    [
        name.to_string(),
        tally.launches.to_string(),
        tally.thread_instructions.to_string(),
        format!("{seconds:.3}"),
        format!("{:.3e}", per(tally.thread_instructions as f64)),
        format!("{:.2}", per(tally.busy.as_secs_f64())),
    ]
}

/// A kernel's name short enough for a table: template arguments as `<…>` (Thrust's and CUB's
/// run to hundreds of characters), and at most [`LONGEST`] characters, its end kept.
fn short_name(name: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…>");
                }
                depth += 1;
            }
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let count = out.chars().count();
    if count <= LONGEST {
        return out;
    }
    let tail: String = out.chars().skip(count - (LONGEST - 1)).collect();
    format!("…{tail}")
}

const LONGEST: usize = 60;

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn template_arguments_are_elided_and_long_names_keep_their_end() {
        assert_eq!(short_name("scale<float>"), "scale<…>");
        assert_eq!(short_name("markSegments"), "markSegments");
        assert_eq!(
            short_name("cub::detail::scan::DeviceScanKernel<cub::policy<int, less<int> >, int>"),
            "cub::detail::scan::DeviceScanKernel<…>"
        );
        let long = format!("{}::kernel", "namespace".repeat(10));
        let short = short_name(&long);
        assert_eq!(short.chars().count(), 60);
        assert!(
            short.starts_with('…') && short.ends_with("namespace::kernel"),
            "{short}"
        );
    }
}
