//! The interpreter: a table of contents. The public `Emulator` API is in `emulator.rs`;
//! `emu/README.md` has a map of the rooms below.

/// Runs `$body` for each lane `$l` set in `$mask`, in lane order. A full warp (the common case)
/// takes a plain counted loop, which the compiler unrolls and vectorizes.
macro_rules! lanes {
    ($mask:expr, $l:ident, $body:block) => {{
        let mut m__: u32 = $mask;
        if m__ == u32::MAX {
            for $l in 0..32usize {
                $body
            }
        } else {
            while m__ != 0 {
                let $l = m__.trailing_zeros() as usize;
                m__ &= m__ - 1;
                $body
            }
        }
    }};
}

pub(crate) mod allocs;
pub(crate) mod args;
mod block;
mod checks;
mod child_work;
mod collector;
mod ctx;
mod device_calls;
mod device_runtime;
pub(crate) mod devices;
pub(crate) mod emulator;
mod instr;
mod lanes;
mod launch;
mod launch_state;
mod limits;
mod memory;
mod parallel;
pub(crate) mod plan;
mod prefix;
mod regions;
mod splitter;
mod streams;
pub(crate) mod timing;
mod views;
mod warp;
mod watchdog;

/// Regions the compiled tier ran on this thread, for the differential tests.
#[cfg(test)]
pub(crate) use regions::REGIONS_RUN;
