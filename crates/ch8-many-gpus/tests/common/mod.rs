//! Devices and strategies shared by the chapter's tests; the strategies live in the library's
//! `testing` module, which the exercise runner shares.

#![allow(unused_imports, dead_code)]

pub use ch8_many_gpus::testing::*;
pub use harness::testing::proptest_config as cases;

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

use harness::{BackendChoice, EmuSettings, Gpus, HarnessError, Schedule};

/// The GPUs, opened once per test binary and held by one test at a time. A test's threads share
/// each GPU's primary context, and while a stream waits for a flag that later calls will set,
/// another thread's synchronization of that device can block those calls: the test would wait
/// for itself. Opening every GPU anew for each generated case cost each case its contexts and
/// modules again, which on four GPUs made one proptest outlast a minute.
static SHARED_GPUS: Mutex<Option<Gpus>> = Mutex::new(None);

/// [`Gpus`] for one test: emulated devices of its own, or the machine's GPUs, held until dropped.
pub enum TestGpus {
    Emulated(Gpus),
    Real(MutexGuard<'static, Option<Gpus>>),
}

impl Deref for TestGpus {
    type Target = Gpus;
    fn deref(&self) -> &Gpus {
        match self {
            TestGpus::Emulated(gpus) => gpus,
            TestGpus::Real(held) => held
                .as_ref()
                .expect("the GPUs are opened before they are held"),
        }
    }
}

impl DerefMut for TestGpus {
    fn deref_mut(&mut self) -> &mut Gpus {
        match self {
            TestGpus::Emulated(gpus) => gpus,
            TestGpus::Real(held) => held
                .as_mut()
                .expect("the GPUs are opened before they are held"),
        }
    }
}

/// `devices` devices of the backend `RACETRACK_BACKEND` names: that many on the emulator, every
/// GPU on a machine with at least two. `None` (said on stderr) on a machine with one GPU, where
/// this chapter has nothing to run.
pub fn gpus(devices: usize, schedule: Schedule) -> Option<TestGpus> {
    let choice = BackendChoice::from_env().expect("RACETRACK_BACKEND names a backend");
    if choice == BackendChoice::Emu {
        return Some(TestGpus::Emulated(emulated(devices, schedule)));
    }
    let mut held = match SHARED_GPUS.lock() {
        Ok(held) => held,
        // A test that failed while holding the GPUs may have left work queued behind a flag
        // nobody will set: the next test starts from freshly opened devices.
        Err(poisoned) => {
            let mut held = poisoned.into_inner();
            *held = None;
            SHARED_GPUS.clear_poison();
            held
        }
    };
    if held.is_none() {
        match Gpus::open(choice, 2, devices) {
            Ok(opened) if opened.kind().is_cuda() => *held = Some(opened),
            // `auto` on a machine without GPUs: emulated devices of the test's own.
            Ok(mut emulated) => {
                emulated.set_emu_settings(EmuSettings {
                    schedule,
                    ..EmuSettings::default()
                });
                return Some(TestGpus::Emulated(emulated));
            }
            Err(HarnessError::TooFewGpus { found, .. }) => {
                eprintln!("this machine has {found} GPU; chapter 8 needs two, so nothing ran here");
                return None;
            }
            Err(error) => panic!("no backend to test on: {error}"),
        }
    }
    Some(TestGpus::Real(held))
}

fn emulated_by(choice: BackendChoice, devices: usize, schedule: Schedule) -> Gpus {
    let mut gpus = Gpus::open(choice, 2, devices).expect("the emulator always opens");
    gpus.set_emu_settings(EmuSettings {
        schedule,
        ..EmuSettings::default()
    });
    gpus
}

/// `devices` emulated devices, whatever `RACETRACK_BACKEND` says: for what only the emulator
/// shows (a race the hardware hides, a hang it must never meet).
pub fn emulated(devices: usize, schedule: Schedule) -> Gpus {
    emulated_by(BackendChoice::Emu, devices, schedule)
}

/// Whether the tests run on GPUs (then device counts and schedules are the machine's).
pub fn on_gpus() -> bool {
    gpus(2, Schedule::Hardware).is_some_and(|gpus| gpus.kind().is_cuda())
}
