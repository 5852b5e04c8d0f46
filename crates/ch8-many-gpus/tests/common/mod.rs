//! Devices and strategies shared by the chapter's tests; the strategies live in the library's
//! `testing` module, which the exercise runner shares.

#![allow(unused_imports, dead_code)]

pub use ch8_many_gpus::testing::*;
pub use harness::testing::proptest_config as cases;

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

use harness::{BackendChoice, EmuSettings, Gpus, HarnessError, Schedule};

/// The GPUs, held by one test at a time. A test's threads share each GPU's primary context, and
/// while a stream waits for a flag that later calls will set, another thread's synchronization
/// of that device can block those calls: the test would wait for itself.
static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

/// [`Gpus`] for one test, holding the GPUs (not the emulator) until it is dropped.
pub struct TestGpus {
    gpus: Gpus,
    _turn: Option<MutexGuard<'static, ()>>,
}

impl Deref for TestGpus {
    type Target = Gpus;
    fn deref(&self) -> &Gpus {
        &self.gpus
    }
}

impl DerefMut for TestGpus {
    fn deref_mut(&mut self) -> &mut Gpus {
        &mut self.gpus
    }
}

/// `devices` devices of the backend `RACETRACK_BACKEND` names: that many on the emulator, every
/// GPU on a machine with at least two. `None` (said on stderr) on a machine with one GPU, where
/// this chapter has nothing to run.
pub fn gpus(devices: usize, schedule: Schedule) -> Option<TestGpus> {
    let choice = BackendChoice::from_env().expect("RACETRACK_BACKEND names a backend");
    // A test that failed while holding the GPUs leaves them usable for the next.
    let turn = (choice != BackendChoice::Emu)
        .then(|| ONE_TEST_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
    match Gpus::open(choice, 2, devices) {
        Ok(mut gpus) => {
            gpus.set_emu_settings(EmuSettings {
                schedule,
                ..EmuSettings::default()
            });
            Some(TestGpus { gpus, _turn: turn })
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
