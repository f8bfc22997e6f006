//! The dispatch table every handle points to: a stub per slot of the generated list
//! (`dispatch_gen.rs`), with the calls vdb implements put in their slots by name.

use std::ffi::c_void;
use std::sync::OnceLock;

use crate::dispatch_gen::{stubs, SLOT_COUNT, SLOT_NAMES};

/// One stub: logs the call as not implemented (once) and fails it the way its signature
/// allows. Its parameters match the slot's in number, so a `ptr_err` stub finds
/// `errcode_ret` where the caller put it.
macro_rules! stub {
    ($name:ident int($($t:ty),*)) => {{
        extern "C" fn stub($(_: $t),*) -> i32 {
            crate::log::not_implemented(stringify!($name));
            crate::ffi::CL_INVALID_OPERATION
        }
        stub as *const c_void
    }};
    ($name:ident void($($t:ty),*)) => {{
        extern "C" fn stub($(_: $t),*) {
            crate::log::not_implemented(stringify!($name));
        }
        stub as *const c_void
    }};
    ($name:ident ptr($($t:ty),*)) => {{
        extern "C" fn stub($(_: $t),*) -> *mut c_void {
            crate::log::not_implemented(stringify!($name));
            std::ptr::null_mut()
        }
        stub as *const c_void
    }};
    ($name:ident ptr_err($($t:ty),*)) => {{
        extern "C" fn stub($(_: $t,)* errcode_ret: *mut i32) -> *mut c_void {
            crate::log::not_implemented(stringify!($name));
            crate::ffi::set_err(errcode_ret, crate::ffi::CL_INVALID_OPERATION);
            std::ptr::null_mut()
        }
        stub as *const c_void
    }};
}

/// The slot list of `dispatch_gen.rs` made into `SLOT_NAMES` and `stubs()`.
#[macro_export]
macro_rules! dispatch_slots {
    ($($name:ident $kind:ident($($t:ty),*);)*) => {
        /// Each slot's name, in the table's order.
        pub const SLOT_NAMES: [&str; SLOT_COUNT] = [$(stringify!($name)),*];

        /// The stubs, slot by slot.
        pub fn stubs() -> [*const std::ffi::c_void; SLOT_COUNT] {
            use std::ffi::c_void;
            [$($crate::dispatch::stub!($name $kind($($t),*))),*]
        }
    };
}
pub(crate) use stub;

/// `struct _cl_icd_dispatch`: one function pointer per slot, in the header's order.
#[repr(C)]
pub struct Dispatch(pub [*const c_void; SLOT_COUNT]);

// SAFETY: the table is built once and never written again; its entries are addresses of
// functions, which any thread may call.
unsafe impl Sync for Dispatch {}
// SAFETY: as above: immutable function addresses.
unsafe impl Send for Dispatch {}

/// The table, built on first use.
pub fn table() -> *const Dispatch {
    static TABLE: OnceLock<Dispatch> = OnceLock::new();
    TABLE.get_or_init(build) as *const Dispatch
}

fn build() -> Dispatch {
    let mut slots = stubs();
    for (name, f) in crate::api::implemented() {
        if let Some(i) = SLOT_NAMES.iter().position(|n| *n == name) {
            slots[i] = f;
        }
    }
    Dispatch(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stub_of(name: &str) -> *const c_void {
        let slot = SLOT_NAMES.iter().position(|n| *n == name).expect("a slot");
        stubs()[slot]
    }

    /// A stub that returns a handle writes `*errcode_ret`, which comes after a callback
    /// parameter in `clLinkProgram` and `clCreateContext`: the callback's own parameter
    /// list must not count as parameters of the call.
    #[test]
    fn a_stub_sets_errcode_ret_after_a_callback_parameter() {
        type Link =
            extern "C" fn(usize, u32, usize, usize, u32, usize, usize, usize, *mut i32) -> *mut c_void;
        type Context = extern "C" fn(usize, u32, usize, usize, usize, *mut i32) -> *mut c_void;
        let mut err = 0;
        // SAFETY: the slot's stub has clLinkProgram's signature.
        let link: Link = unsafe { std::mem::transmute(stub_of("clLinkProgram")) };
        assert!(link(0, 0, 0, 0, 0, 0, 0, 0, &mut err).is_null());
        assert_eq!(err, crate::ffi::CL_INVALID_OPERATION);
        err = 0;
        // SAFETY: the slot's stub has clCreateContext's signature.
        let create: Context = unsafe { std::mem::transmute(stub_of("clCreateContext")) };
        assert!(create(0, 0, 0, 0, 0, &mut err).is_null());
        assert_eq!(err, crate::ffi::CL_INVALID_OPERATION);
    }

    /// Every slot the header types as returning an error code gets a stub that returns
    /// CL_INVALID_OPERATION, whatever its arity.
    #[test]
    fn an_int_stub_fails_with_invalid_operation() {
        type Release = extern "C" fn(usize) -> i32;
        type Native = extern "C" fn(usize, usize, usize, usize, u32, usize, usize, u32, usize, usize) -> i32;
        // SAFETY: the slots' stubs have these signatures.
        let release: Release = unsafe { std::mem::transmute(stub_of("clReleaseDevice")) };
        // SAFETY: as above.
        let native: Native = unsafe { std::mem::transmute(stub_of("clEnqueueNativeKernel")) };
        assert_eq!(release(0), crate::ffi::CL_INVALID_OPERATION);
        assert_eq!(native(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), crate::ffi::CL_INVALID_OPERATION);
    }
}
