//! What nvcc's generated code registers before `main`: each translation unit's fatbinary, its
//! kernels by their host stubs and its variables by their host shadows. A fatbinary's PTX is
//! parsed the first time one of its kernels or variables is used.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use ptx_emu::Module;

use crate::errors;
use crate::fatbin;
use crate::runtime::{ApiResult, Failure, Fatbin, Function, Runtime, Variable, query};

/// The compute capability the emulated device reports; a fatbinary's PTX for the highest
/// architecture at or below it is the one that runs.
pub const EMULATED_ARCH: u32 = 90;

fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: nvcc's registration code passes NUL-terminated names from the program's data.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// The handle nvcc's code keeps: a pointer to a slot that holds the fatbinary's index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cudaRegisterFatBinary(wrapper: *mut c_void) -> *mut *mut c_void {
    query(std::ptr::null_mut(), |rt| {
        // SAFETY: nvcc passes its `__fatBinC_Wrapper_t`, which `images_from_wrapper` checks.
        let units = unsafe { fatbin::units_from_wrapper(wrapper) }.map_err(|e| e.to_string());
        rt.fatbins.push(Fatbin {
            units,
            module: None,
            resources: None,
        });
        let slot = Box::new(rt.fatbins.len() - 1);
        Box::into_raw(slot) as *mut *mut c_void
    })
}

fn fatbin_index(handle: *mut *mut c_void) -> Option<usize> {
    // SAFETY: a handle is the boxed index `__cudaRegisterFatBinary` returned.
    (!handle.is_null()).then(|| unsafe { *(handle as *const usize) })
}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

/// Called at exit; the runtime's own exit handler finishes the work.
#[unsafe(no_mangle)]
pub extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaInitModule(_handle: *mut *mut c_void) -> c_char {
    1
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_function: *const c_char,
    _device_function: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut c_void,
    _grid_dim: *mut c_void,
    _warp_size: *mut c_int,
) {
    query((), |rt| {
        if let Some(fatbin) = fatbin_index(handle) {
            rt.functions.insert(
                host_function as usize,
                Function {
                    fatbin,
                    name: c_str(device_name),
                    max_dynamic_shared: crate::launch::MAX_SHARED,
                    ptx_version: std::cell::OnceCell::new(),
                    launch_bound: std::cell::OnceCell::new(),
                },
            );
        }
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_variable: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    query((), |rt| {
        if let Some(fatbin) = fatbin_index(handle) {
            rt.variables.insert(
                host_variable as usize,
                Variable {
                    fatbin,
                    name: c_str(device_name),
                    size,
                    managed_host: None,
                },
            );
        }
    })
}

/// A `__managed__` variable: the host reaches it through the pointer written here, to memory
/// that is copied to the device variable before each launch and back after it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_pointer: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    query((), |rt| {
        let Some(fatbin) = fatbin_index(handle) else {
            return;
        };
        let host = Box::leak(vec![0u8; size.max(1)].into_boxed_slice());
        let host_address = host.as_mut_ptr() as usize;
        if !host_pointer.is_null() {
            // SAFETY: nvcc passes the address of the variable's host pointer.
            unsafe { *host_pointer = host_address as *mut c_void };
        }
        rt.variables.insert(
            host_pointer as usize,
            Variable {
                fatbin,
                name: c_str(device_name),
                size,
                managed_host: Some(host_address),
            },
        );
    })
}

/// The virtual architecture (75 for `compute_75`) of the PTX that runs `function`, as a GPU's
/// `cudaFuncAttributes::ptxVersion` gives it: the PTX the driver would JIT for this device, from
/// the unit that defines the kernel. CUB picks its tuning by this number and accepts only one of
/// the architectures the program was built for, so a fixed 90 breaks a default (`compute_75`)
/// build of every Thrust algorithm.
pub fn ptx_version(rt: &Runtime, function: &Function) -> u32 {
    *function
        .ptx_version
        .get_or_init(|| search_ptx_version(rt, function))
}

fn search_ptx_version(rt: &Runtime, function: &Function) -> u32 {
    let Some(Ok(units)) = rt.fatbins.get(function.fatbin).map(|f| &f.units) else {
        return EMULATED_ARCH;
    };
    let entry = format!(".entry {}", function.name);
    let chosen: Vec<(u32, String)> = units
        .iter()
        .filter_map(|unit| fatbin::ptx_for(unit, EMULATED_ARCH))
        .collect();
    chosen
        .iter()
        .find(|(_, text)| text.contains(&entry))
        .or(chosen.first())
        .map_or(EMULATED_ARCH, |(arch, _)| *arch)
}

/// The parsed PTX of fatbinary `index`, parsed now if this is its first use.
pub fn module(rt: &mut Runtime, index: usize) -> ApiResult<Arc<Module>> {
    let fatbin = rt
        .fatbins
        .get_mut(index)
        .ok_or(Failure::code(errors::INVALID_DEVICE_FUNCTION))?;
    if fatbin.module.is_none() {
        let parsed = match &fatbin.units {
            Err(why) => Err(format!("its device code cannot be read: {why}")),
            Ok(units) => match fatbin::ptx_of_units(units, EMULATED_ARCH) {
                None => Err(
                    "it carries no PTX, only machine code for particular GPUs: build it with PTX (nvcc's default, or -gencode arch=compute_90,code=compute_90)"
                        .to_string(),
                ),
                Some(texts) => {
                    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                    Module::parse_linked(&texts)
                        .map(Arc::new)
                        .map_err(|e| format!("its PTX cannot run on the emulator: {e}"))
                }
            },
        };
        fatbin.module = Some(parsed);
    }
    match fatbin.module.as_ref().expect("set just above") {
        Ok(module) => Ok(module.clone()),
        Err(why) => Err(Failure::host(
            errors::INVALID_PTX,
            "device code the emulator cannot run",
            why.clone(),
        )),
    }
}

/// `__cudaGetKernel`: a handle for the launch stub nvcc generates (CUDA 13's launch path).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cudaGetKernel(
    kernel: *mut *mut c_void,
    host_function: *const c_void,
) -> i32 {
    crate::runtime::api("__cudaGetKernel", |rt| {
        if !rt.functions.contains_key(&(host_function as usize)) {
            return Err(Failure::code(errors::INVALID_DEVICE_FUNCTION));
        }
        rt.kernel_handles.push(host_function as usize);
        if kernel.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        // SAFETY: nvcc passes the address of its static handle.
        unsafe { *kernel = rt.kernel_handles.len() as *mut c_void };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetFuncBySymbol(
    function: *mut *mut c_void,
    symbol: *const c_void,
) -> i32 {
    // SAFETY: the same contract as `__cudaGetKernel`.
    unsafe { __cudaGetKernel(function, symbol) }
}

/// The host stub a kernel handle stands for.
pub fn kernel_function(rt: &Runtime, handle: *mut c_void) -> ApiResult<usize> {
    let index = (handle as usize).wrapping_sub(1);
    rt.kernel_handles
        .get(index)
        .copied()
        .ok_or(Failure::code(errors::INVALID_RESOURCE_HANDLE))
}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaRegisterTexture() {}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaRegisterSurface() {}
