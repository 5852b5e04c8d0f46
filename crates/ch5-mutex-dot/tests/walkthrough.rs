//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch5_mutex_dot::walkthrough::{Options, walkthrough};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = std::env::temp_dir().join(format!("racetrack-ch5-snapshot-{}", std::process::id()));
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    let printed = String::from_utf8(printed).expect("the walk-through prints UTF-8");
    std::fs::remove_dir_all(&out).ok();

    let printed = printed.replace(&out.display().to_string(), "target/racetrack/ch5-mutex-dot");
    let sections = harness::walk::sections(&printed);
    assert_eq!(
        sections.len(),
        12,
        "a header, ten variants and the timing section:\n{printed}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch5_{name}"), text);
        }
    });
}
