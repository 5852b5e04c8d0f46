//! What a kernel takes of an SM on a GPU: registers per thread, static shared memory and stack,
//! as ptxas counts them for sm_90. A GPU's driver compiles the program's PTX with the same
//! compiler when it loads it, so these are the numbers its occupancy calls,
//! `cudaFuncGetAttributes` and its launches go by: a block the register file cannot hold fails
//! to launch with `cudaErrorLaunchOutOfResources`, the classic "too many resources requested".
//!
//! `racetrack run` names the ptxas of nvcc's toolchain in [`PTXAS_ENV`]. Without one, a
//! kernel's registers are unknown and limit nothing (the runtime says so once, when an answer
//! would have depended on them).

use std::collections::HashMap;
use std::path::PathBuf;

pub use ptx_emu::ptxas::Resources;
use ptx_emu::ptxas::{count_unit, launch_bound};

use crate::fatbin;
use crate::register::EMULATED_ARCH;
use crate::runtime::{ApiResult, Failure, Runtime};

/// The ptxas to count registers with.
pub use ptx_emu::run_env::PTXAS as PTXAS_ENV;

/// The ptxas [`PTXAS_ENV`] names, when it names one.
pub fn ptxas() -> Option<PathBuf> {
    std::env::var_os(PTXAS_ENV)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// What a launch of a kernel may ask for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// ptxas's count; `None` without a ptxas.
    pub counted: Option<Resources>,
    /// Its `__launch_bounds__`, in threads.
    pub launch_bound: Option<u32>,
    /// The dynamic shared memory it opted in to (`cudaFuncAttributeMaxDynamicSharedMemorySize`),
    /// 48 KiB until it does.
    pub opted_in_shared: usize,
}

impl Needs {
    pub fn registers(&self) -> Option<u32> {
        self.counted.map(|c| c.registers)
    }

    pub fn static_shared(&self) -> usize {
        self.counted.map_or(0, |c| c.static_shared as usize)
    }

    /// The dynamic shared memory its launches may ask for: what it opted in to less its own
    /// static shared memory (an H100's `maxDynamicSharedSizeBytes`).
    pub fn max_dynamic_shared(&self) -> usize {
        let opted_in = self.opted_in_shared.min(crate::launch::OPT_IN_SHARED);
        opted_in - self.static_shared().min(opted_in)
    }

    /// `cudaFuncAttributes::maxThreadsPerBlock`: what the registers and launch bounds allow.
    pub fn max_threads_per_block(&self) -> u32 {
        let by_registers = ptx_emu::occupancy::max_threads_per_block(self.registers());
        self.launch_bound
            .map_or(by_registers, |bound| bound.min(by_registers))
    }
}

/// What the kernel whose host stub is `function` needs. Registers are counted for the
/// kernel's whole fatbinary on the first question (ptxas takes milliseconds a kernel).
pub fn of(rt: &mut Runtime, function: usize) -> Needs {
    Needs {
        counted: counted(rt, function),
        launch_bound: launch_bound_of(rt, function),
        opted_in_shared: rt
            .functions
            .get(&function)
            .map_or(crate::launch::MAX_SHARED, |f| f.max_dynamic_shared),
    }
}

/// [`of`] for a host stub the program passed, which must be one of its kernels.
pub fn of_kernel(rt: &mut Runtime, function: usize) -> ApiResult<Needs> {
    if !rt.functions.contains_key(&function) {
        return Err(Failure::code(crate::errors::INVALID_DEVICE_FUNCTION));
    }
    Ok(of(rt, function))
}

/// The kernel's `__launch_bounds__`, found in its PTX on the first question and kept.
pub fn launch_bound_of(rt: &mut Runtime, function: usize) -> Option<u32> {
    let f = rt.functions.get(&function)?;
    if let Some(bound) = f.launch_bound.get() {
        return *bound;
    }
    let bound = unit_texts(rt, f.fatbin)
        .iter()
        .find_map(|(text, _)| launch_bound(text, &f.name));
    *f.launch_bound.get_or_init(|| bound)
}

fn counted(rt: &mut Runtime, function: usize) -> Option<Resources> {
    let f = rt.functions.get(&function)?;
    let (index, name) = (f.fatbin, f.name.clone());
    if rt.fatbins.get(index)?.resources.is_none() {
        let texts = unit_texts(rt, index);
        let counted = count_units(rt, &texts);
        rt.fatbins[index].resources = Some(counted);
    }
    rt.fatbins[index].resources.as_ref()?.get(&name).copied()
}

/// Each unit's PTX for the emulated device, with the ptxas options nvcc stored beside it.
fn unit_texts(rt: &Runtime, index: usize) -> Vec<(String, Option<String>)> {
    let Some(Ok(units)) = rt.fatbins.get(index).map(|f| &f.units) else {
        return Vec::new();
    };
    units
        .iter()
        .filter(|unit| !fatbin::is_device_runtime(unit))
        .filter_map(|unit| fatbin::ptx_image_for(unit, EMULATED_ARCH))
        .map(|image| {
            (
                String::from_utf8_lossy(&image.data).into_owned(),
                image.ptxas_options.clone(),
            )
        })
        .collect()
}

fn count_units(rt: &mut Runtime, texts: &[(String, Option<String>)]) -> HashMap<String, Resources> {
    let Some(ptxas) = ptxas() else {
        say_registers_unknown(rt, "no ptxas was named (racetrack run names nvcc's)");
        return HashMap::new();
    };
    let mut found = HashMap::new();
    for (text, options) in texts {
        match count_unit(&ptxas, text, options.as_deref()) {
            Ok(kernels) => found.extend(kernels),
            Err(why) => say_registers_unknown(rt, &why),
        }
    }
    found
}

fn say_registers_unknown(rt: &mut Runtime, why: &str) {
    if !std::mem::replace(&mut rt.said_registers_unknown, true) {
        rt.out.say(&format!(
            "kernels' registers are not counted ({why}): occupancy, cudaFuncGetAttributes and launch limits go by threads and shared memory alone"
        ));
    }
}
