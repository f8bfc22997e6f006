//! The C side of the ICD: OpenCL's numbers, and the few places that touch the host program's
//! raw pointers (out-parameters, input arrays, `param_value` buffers). Every entry point runs
//! its body under [`guard`], so a Rust panic becomes an error code, never an unwind across
//! the C boundary.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const CL_SUCCESS: i32 = 0;
pub const CL_COMPILER_NOT_AVAILABLE: i32 = -3;
pub const CL_OUT_OF_RESOURCES: i32 = -5;
pub const CL_OUT_OF_HOST_MEMORY: i32 = -6;
pub const CL_PROFILING_INFO_NOT_AVAILABLE: i32 = -7;
pub const CL_MEM_COPY_OVERLAP: i32 = -8;
pub const CL_BUILD_PROGRAM_FAILURE: i32 = -11;
pub const CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: i32 = -14;
pub const CL_INVALID_VALUE: i32 = -30;
pub const CL_INVALID_PLATFORM: i32 = -32;
pub const CL_INVALID_DEVICE: i32 = -33;
pub const CL_INVALID_CONTEXT: i32 = -34;
pub const CL_INVALID_QUEUE_PROPERTIES: i32 = -35;
pub const CL_INVALID_COMMAND_QUEUE: i32 = -36;
pub const CL_INVALID_HOST_PTR: i32 = -37;
pub const CL_INVALID_MEM_OBJECT: i32 = -38;
pub const CL_INVALID_BINARY: i32 = -42;
pub const CL_INVALID_PROGRAM: i32 = -44;
pub const CL_INVALID_PROGRAM_EXECUTABLE: i32 = -45;
pub const CL_INVALID_KERNEL_NAME: i32 = -46;
pub const CL_INVALID_KERNEL: i32 = -48;
pub const CL_INVALID_ARG_INDEX: i32 = -49;
pub const CL_INVALID_ARG_VALUE: i32 = -50;
pub const CL_INVALID_ARG_SIZE: i32 = -51;
pub const CL_INVALID_KERNEL_ARGS: i32 = -52;
pub const CL_INVALID_WORK_DIMENSION: i32 = -53;
pub const CL_INVALID_WORK_GROUP_SIZE: i32 = -54;
pub const CL_INVALID_GLOBAL_WORK_SIZE: i32 = -63;
pub const CL_INVALID_EVENT_WAIT_LIST: i32 = -57;
pub const CL_INVALID_EVENT: i32 = -58;
pub const CL_INVALID_OPERATION: i32 = -59;
pub const CL_INVALID_BUFFER_SIZE: i32 = -61;
pub const CL_INVALID_PROPERTY: i32 = -64;

pub const CL_MEM_READ_WRITE: u64 = 1;
pub const CL_MEM_WRITE_ONLY: u64 = 2;
pub const CL_MEM_READ_ONLY: u64 = 4;
pub const CL_MEM_USE_HOST_PTR: u64 = 8;
pub const CL_MEM_ALLOC_HOST_PTR: u64 = 16;
pub const CL_MEM_COPY_HOST_PTR: u64 = 32;

/// An OpenCL object handle as the host holds it.
pub type Handle = *mut c_void;

/// `clRetainX` and `clReleaseX` for the objects `is` tells apart; any other handle is `err`.
macro_rules! retain_release {
    ($retain:ident, $release:ident, $is:path, $err:expr) => {
        pub extern "C" fn $retain(h: $crate::ffi::Handle) -> i32 {
            $crate::ffi::guard(|| $crate::handles::retain(h, $is, $err))
        }

        pub extern "C" fn $release(h: $crate::ffi::Handle) -> i32 {
            $crate::ffi::guard(|| $crate::handles::release(h, $is, $err))
        }
    };
}
pub(crate) use retain_release;

/// The body of a `clGetXInfo` entry point: the bytes `f` gives, copied out by [`info`].
pub fn answer(
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
    f: impl FnOnce() -> Result<Vec<u8>, i32>,
) -> i32 {
    guard(|| info(&f()?, size, value, size_ret))
}

/// Runs an entry point's body; a panic is reported and becomes `CL_OUT_OF_HOST_MEMORY`.
pub fn guard(f: impl FnOnce() -> Result<(), i32>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => internal_error(),
    }
}

/// [`guard`] for entry points that return an object and report through `errcode_ret`.
pub fn guard_ptr(errcode_ret: *mut i32, f: impl FnOnce() -> Result<*mut c_void, i32>) -> *mut c_void {
    let (ptr, code) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(p)) => (p, CL_SUCCESS),
        Ok(Err(code)) => (std::ptr::null_mut(), code),
        Err(_) => (std::ptr::null_mut(), internal_error()),
    };
    set_err(errcode_ret, code);
    ptr
}

fn internal_error() -> i32 {
    crate::log::warn("internal error (a panic, reported above): the call failed with CL_OUT_OF_HOST_MEMORY");
    CL_OUT_OF_HOST_MEMORY
}

/// Writes `code` to `errcode_ret` when the caller gave one.
pub fn set_err(errcode_ret: *mut i32, code: i32) {
    write_out(errcode_ret, code);
}

/// Writes `value` through an optional out-parameter.
pub fn write_out<T>(p: *mut T, value: T) {
    if !p.is_null() {
        // SAFETY: OpenCL out-parameters are NULL or point to a `T` the caller owns (the API
        // contract of every call that takes one); NULL is checked above. `write_unaligned`
        // asks nothing of the alignment.
        unsafe { p.write_unaligned(value) }
    }
}

/// The `n` elements at `p` (empty when `p` is NULL or `n` is 0), copied out.
pub fn read_array<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    if p.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: the caller passes an array of `n` elements with its count (the API contract of
    // wait lists, device lists, size triples, string arrays); NULL is checked above. Elements
    // are read one by one unaligned, so no alignment is assumed.
    (0..n).map(|i| unsafe { p.add(i).read_unaligned() }).collect()
}

/// `n` bytes at `p`, copied out (empty for NULL).
pub fn read_bytes(p: *const c_void, n: usize) -> Vec<u8> {
    read_array(p as *const u8, n)
}

/// A NUL-terminated C string (None for NULL), lossily as UTF-8.
pub fn read_cstr(p: *const std::ffi::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: string parameters of OpenCL (kernel names, build options, function names) are
    // NUL-terminated C strings by the API contract; NULL is checked above.
    let s = unsafe { std::ffi::CStr::from_ptr(p) };
    Some(s.to_string_lossy().into_owned())
}

/// Copies `bytes` to the caller's memory at `dst`.
pub fn copy_to(dst: *mut c_void, bytes: &[u8]) {
    if dst.is_null() || bytes.is_empty() {
        return;
    }
    // SAFETY: `dst` is a caller buffer the API promises holds at least `bytes.len()` bytes
    // (checked against `param_value_size` or the read's size by every caller of this
    // function); the regions cannot overlap since `bytes` is vdb's own memory.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) }
}

/// The clGet*Info protocol: the value's size to `size_ret`, the value to `value` when given
/// (CL_INVALID_VALUE when it does not fit in `size`).
pub fn info(bytes: &[u8], size: usize, value: *mut c_void, size_ret: *mut usize) -> Result<(), i32> {
    if !value.is_null() {
        if size < bytes.len() {
            return Err(CL_INVALID_VALUE);
        }
        copy_to(value, bytes);
    }
    write_out(size_ret, bytes.len());
    Ok(())
}

/// Info values as bytes.
pub fn u32b(v: u32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
pub fn u64b(v: u64) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
pub fn usizeb(v: usize) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
pub fn usizes(v: &[usize]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}
pub fn boolb(v: bool) -> Vec<u8> {
    u32b(v as u32)
}
/// A C string with its NUL.
pub fn strb(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}
