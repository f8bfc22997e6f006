//! OpenCL handles. Each handle is a boxed [`IcdObject`] whose first (only) field is the
//! dispatch table, as the ICD loader requires; what the handle stands for lives in a
//! registry keyed by the handle's address, with its reference count. A handle is looked up
//! before anything is done with it, so a stale or foreign pointer is an error code, never a
//! read through it.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::dispatch::Dispatch;
use crate::objects::{Context, Event, Kernel, Mem, Program, Queue};

/// What the ICD loader reads through a handle: the dispatch table pointer.
#[repr(C)]
pub struct IcdObject {
    dispatch: *const Dispatch,
}

/// What a handle stands for.
#[derive(Clone)]
pub enum Obj {
    Platform,
    Device,
    Context(Arc<Context>),
    Queue(Arc<Queue>),
    Mem(Arc<Mem>),
    Program(Arc<Program>),
    Kernel(Arc<Kernel>),
    Event(Arc<Event>),
}

struct Entry {
    refs: u32,
    obj: Obj,
}

fn registry() -> MutexGuard<'static, HashMap<usize, Entry>> {
    static REGISTRY: OnceLock<Mutex<HashMap<usize, Entry>>> = OnceLock::new();
    let m = REGISTRY.get_or_init(|| Mutex::new(HashMap::new()));
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A new handle for `obj`, with one reference.
pub fn new_handle(obj: Obj) -> *mut c_void {
    let ptr = Box::into_raw(Box::new(IcdObject { dispatch: crate::dispatch::table() })) as *mut c_void;
    registry().insert(ptr as usize, Entry { refs: 1, obj });
    ptr
}

/// The platform's and the device's handles: made once, never freed.
pub fn platform() -> *mut c_void {
    static P: OnceLock<usize> = OnceLock::new();
    *P.get_or_init(|| new_handle(Obj::Platform) as usize) as *mut c_void
}

pub fn device() -> *mut c_void {
    static D: OnceLock<usize> = OnceLock::new();
    *D.get_or_init(|| new_handle(Obj::Device) as usize) as *mut c_void
}

/// What `h` stands for, if it is a live handle.
pub fn lookup(h: *mut c_void) -> Option<Obj> {
    registry().get(&(h as usize)).map(|e| e.obj.clone())
}

/// The reference count of a live handle (0 if not live).
pub fn ref_count(h: usize) -> u32 {
    registry().get(&h).map_or(0, |e| e.refs)
}

/// clRetain*: `code` when `h` is not a live handle that `is_kind` accepts.
pub fn retain(h: *mut c_void, is_kind: fn(&Obj) -> bool, code: i32) -> Result<(), i32> {
    match registry().get_mut(&(h as usize)) {
        Some(e) if is_kind(&e.obj) => {
            if !matches!(e.obj, Obj::Platform | Obj::Device) {
                e.refs = e.refs.saturating_add(1);
            }
            Ok(())
        }
        _ => Err(code),
    }
}

/// clRelease*: the last release frees the handle (the object itself goes when nothing
/// else holds it: a kernel keeps its program, a sub-buffer its bytes).
pub fn release(h: *mut c_void, is_kind: fn(&Obj) -> bool, code: i32) -> Result<(), i32> {
    let mut reg = registry();
    let key = h as usize;
    let entry = reg.get_mut(&key).filter(|e| is_kind(&e.obj)).ok_or(code)?;
    if matches!(entry.obj, Obj::Platform | Obj::Device) {
        return Ok(());
    }
    entry.refs -= 1;
    if entry.refs == 0 {
        let removed = reg.remove(&key);
        drop(reg);
        drop(removed);
        // SAFETY: `h` was made by `Box::into_raw` in `new_handle` and was live in the
        // registry until the line above removed it, under its lock, so it is freed once.
        drop(unsafe { Box::from_raw(h as *mut IcdObject) });
    }
    Ok(())
}

macro_rules! typed_lookup {
    ($name:ident, $variant:ident, $ty:ty, $code:expr) => {
        /// The object behind a handle of this kind, or the kind's CL_INVALID_* code.
        pub fn $name(h: *mut c_void) -> Result<Arc<$ty>, i32> {
            match lookup(h) {
                Some(Obj::$variant(x)) => Ok(x),
                _ => Err($code),
            }
        }
    };
}

typed_lookup!(context, Context, Context, crate::ffi::CL_INVALID_CONTEXT);
typed_lookup!(queue, Queue, Queue, crate::ffi::CL_INVALID_COMMAND_QUEUE);
typed_lookup!(mem, Mem, Mem, crate::ffi::CL_INVALID_MEM_OBJECT);
typed_lookup!(program, Program, Program, crate::ffi::CL_INVALID_PROGRAM);
typed_lookup!(kernel, Kernel, Kernel, crate::ffi::CL_INVALID_KERNEL);
typed_lookup!(event, Event, Event, crate::ffi::CL_INVALID_EVENT);

/// `h` is the device (or NULL, where the caller allows it).
pub fn check_device(h: *mut c_void) -> Result<(), i32> {
    match lookup(h) {
        Some(Obj::Device) => Ok(()),
        _ => Err(crate::ffi::CL_INVALID_DEVICE),
    }
}

/// `h` is the platform, or NULL (which means it: vdb's is the only one in its library).
pub fn check_platform(h: *mut c_void) -> Result<(), i32> {
    match lookup(h) {
        _ if h.is_null() => Ok(()),
        Some(Obj::Platform) => Ok(()),
        _ => Err(crate::ffi::CL_INVALID_PLATFORM),
    }
}
