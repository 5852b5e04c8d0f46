//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch2_reductions::walkthrough::{Options, walkthrough};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = std::env::temp_dir().join(format!("racetrack-ch2-snapshot-{}", std::process::id()));
    let options = Options::new(2024, out.clone(), false);
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    let printed = String::from_utf8(printed).expect("the walk-through prints UTF-8");
    for image in ["blobs.png", "blobs_racy.png", "blobs_side_by_side.png"] {
        let bytes = std::fs::read(out.join(image)).expect("the blobs images are written");
        assert_eq!(&bytes[1..4], b"PNG", "{image}");
    }
    std::fs::remove_dir_all(&out).ok();

    let printed = printed.replace(
        &out.display().to_string(),
        "target/racetrack/ch2-reductions",
    );
    let sections = sections(&printed);
    assert_eq!(
        sections.len(),
        11,
        "a header, nine variants and the timing section:\n{printed}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch2_{name}"), text);
        }
    });
}

/// Splits at `## N. name` headings: `00_header`, `01_naive_block_sum`, …, `gpu`.
fn sections(printed: &str) -> Vec<(String, String)> {
    let mut sections = vec![("00_header".to_string(), String::new())];
    for line in printed.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            let name = match heading.split_once(". ") {
                Some((number, rest)) => format!(
                    "{:0>2}_{}",
                    number,
                    rest.split(' ').next().unwrap_or_default()
                ),
                None => heading.split(' ').next().unwrap_or_default().to_lowercase(),
            };
            sections.push((name.replace('-', "_"), String::new()));
        }
        if let Some((_, text)) = sections.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    for (_, text) in &mut sections {
        *text = text.trim_end().to_string();
    }
    sections
}
