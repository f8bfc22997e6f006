//! vdb's OpenCL ICD: loaded by the system's ICD loader (ocl-icd) when `vdb record` points it
//! here, it is an OpenCL 1.2 platform with one device, vdb emulating an Intel GPU. Programs
//! are compiled with ocloc (`-g`), every clEnqueueNDRangeKernel runs in vdb's engine and is
//! saved as a launch file that `vdb replay` opens in the debugger.
//!
//! The only crate of the workspace with `unsafe`: the C entry points take the host
//! program's raw pointers. Those are touched only in `ffi.rs` (out-parameters, arrays,
//! strings), `objects.rs` (a buffer's bytes) and `handles.rs` (freeing a handle); every
//! other module is safe Rust over the copies they make. Each entry point catches panics.

mod api;
mod api_mem;
mod api_platform;
mod api_program;
mod device;
mod dispatch;
mod dispatch_gen;
mod events;
mod ffi;
mod handles;
mod launch;
mod log;
mod objects;

use std::ffi::{c_char, c_void};

/// The ICD loader's way in (cl_khr_icd): the platforms of this library.
#[no_mangle]
pub extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: u32,
    platforms: *mut *mut c_void,
    num_platforms: *mut u32,
) -> i32 {
    api_platform::get_platform_ids(num_entries, platforms, num_platforms)
}

/// The loader looks up `clIcdGetPlatformIDsKHR` through this; vdb has no other extension
/// functions.
#[no_mangle]
pub extern "C" fn clGetExtensionFunctionAddress(name: *const c_char) -> *mut c_void {
    let name = std::panic::catch_unwind(|| ffi::read_cstr(name)).ok().flatten();
    match name.as_deref() {
        Some("clIcdGetPlatformIDsKHR") => clIcdGetPlatformIDsKHR as *mut c_void,
        _ => std::ptr::null_mut(),
    }
}

#[no_mangle]
pub extern "C" fn clGetExtensionFunctionAddressForPlatform(
    _platform: *mut c_void,
    name: *const c_char,
) -> *mut c_void {
    clGetExtensionFunctionAddress(name)
}

/// Some loaders ask the library itself for the ICD suffix.
#[no_mangle]
pub extern "C" fn clGetPlatformInfo(
    platform: *mut c_void,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    api_platform::get_platform_info(platform, param, size, value, size_ret)
}
