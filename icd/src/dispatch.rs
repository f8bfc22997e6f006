//! The dispatch table every handle points to: the generated stubs (`dispatch_gen.rs`), with
//! the calls vdb implements put in their slots by name.

use std::ffi::c_void;
use std::sync::OnceLock;

use crate::dispatch_gen::{stubs, SLOT_COUNT, SLOT_NAMES};

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
