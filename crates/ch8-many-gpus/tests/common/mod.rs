//! Devices and strategies shared by the chapter's tests; the strategies live in the library's
//! `testing` module, which the exercise runner shares.

#![allow(unused_imports, dead_code)]

pub use ch8_many_gpus::testing::*;
pub use harness::testing::proptest_config as cases;

use harness::{BackendChoice, EmuSettings, Gpus, HarnessError, Schedule};

/// `devices` devices of the backend `RACETRACK_BACKEND` names: that many on the emulator, every
/// GPU on a machine with at least two. `None` (said on stderr) on a machine with one GPU, where
/// this chapter has nothing to run.
pub fn gpus(devices: usize, schedule: Schedule) -> Option<Gpus> {
    let choice = BackendChoice::from_env().expect("RACETRACK_BACKEND names a backend");
    match Gpus::open(choice, 2, devices) {
        Ok(mut gpus) => {
            gpus.set_emu_settings(EmuSettings {
                schedule,
                ..EmuSettings::default()
            });
            Some(gpus)
        }
        Err(HarnessError::TooFewGpus { found, .. }) => {
            eprintln!("this machine has {found} GPU; chapter 8 needs two, so nothing ran here");
            None
        }
        Err(error) => panic!("no backend to test on: {error}"),
    }
}

/// `devices` emulated devices, whatever `RACETRACK_BACKEND` says: for what only the emulator
/// shows (a race the hardware hides, a hang it must never meet).
pub fn emulated(devices: usize, schedule: Schedule) -> Gpus {
    let mut gpus = Gpus::open(BackendChoice::Emu, 2, devices).expect("the emulator always opens");
    gpus.set_emu_settings(EmuSettings {
        schedule,
        ..EmuSettings::default()
    });
    gpus
}

/// Whether the tests run on GPUs (then device counts and schedules are the machine's).
pub fn on_gpus() -> bool {
    gpus(2, Schedule::Hardware).is_some_and(|gpus| gpus.kind().is_cuda())
}
