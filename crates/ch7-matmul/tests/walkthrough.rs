//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch7_matmul::walkthrough::{Options, walkthrough};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = std::env::temp_dir().join(format!("racetrack-ch7-snapshot-{}", std::process::id()));
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    let printed = String::from_utf8(printed).expect("the walk-through prints UTF-8");
    for broken in [
        "naive-write-outside-guard",
        "tiled-no-bounds",
        "tiled-missing-second-sync",
    ] {
        let map = std::fs::read(out.join(format!("{broken}.png"))).expect("the map is written");
        assert_eq!(&map[1..4], b"PNG");
    }
    std::fs::remove_dir_all(&out).ok();
    let printed = printed.replace(&out.display().to_string(), "target/racetrack/ch7-matmul");
    let sections = harness::walk::sections(&printed);
    assert_eq!(
        sections.len(),
        15,
        "a header, thirteen variants and the timing section:\n{printed}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch7_{name}"), text);
        }
    });
}
