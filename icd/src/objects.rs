//! What the handles stand for: contexts, queues, buffers (their bytes in a [`Store`] shared
//! by a buffer and its sub-buffers), programs (source, build, log), kernels (arguments as
//! set), events (status and profiling times). The queue is in order and runs each command
//! when it is enqueued, so every event is complete (or failed) when it is returned.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use vdb_compile::{Compiled, Kernel as CompiledKernel};

/// Locks `m`, taking the data even if a panic poisoned it (entry points catch panics and
/// the data stays consistent between statements).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Context {
    /// Properties as given (zero-terminated pairs), for CL_CONTEXT_PROPERTIES.
    pub properties: Vec<isize>,
}

pub struct Queue {
    pub context: usize,
    pub properties: u64,
    /// A kernel's fault since the last clFinish: clFinish reports it.
    pub failed: Mutex<Option<i32>>,
}

/// The bytes of a buffer (and its sub-buffers): vdb's own allocation, or the host
/// program's memory for CL_MEM_USE_HOST_PTR (so the program sees what kernels wrote there,
/// as it would on an integrated GPU). Mapping returns pointers into it.
pub struct Store {
    ptr: *mut u8,
    len: usize,
    owned: bool,
}

// SAFETY: the bytes are only touched by byte copies through `read`/`write` and by the host
// program through mapped pointers; OpenCL makes the host program order its own accesses
// against commands (an in-order queue whose commands finish before they return).
unsafe impl Send for Store {}
// SAFETY: as for Send.
unsafe impl Sync for Store {}

impl Store {
    pub fn owned(len: usize) -> Store {
        let bytes = vec![0u8; len].into_boxed_slice();
        Store { ptr: Box::into_raw(bytes) as *mut u8, len, owned: true }
    }

    /// The host program's `len` bytes at `ptr` (CL_MEM_USE_HOST_PTR).
    pub fn host(ptr: *mut c_void, len: usize) -> Store {
        Store { ptr: ptr as *mut u8, len, owned: false }
    }

    fn in_bounds(&self, offset: usize, n: usize) -> bool {
        offset.checked_add(n).is_some_and(|end| end <= self.len)
    }

    /// `out.len()` bytes from `offset`; false when out of bounds.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        if !self.in_bounds(offset, out.len()) {
            return false;
        }
        // SAFETY: `ptr` holds `len` bytes for the store's life (our allocation, or the host's
        // for a USE_HOST_PTR buffer, which OpenCL requires to stay valid while the buffer
        // lives); the range was checked against `len` above; `out` is Rust memory, not
        // overlapping the store.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset), out.as_mut_ptr(), out.len()) }
        true
    }

    /// Writes `data` at `offset`; false when out of bounds.
    pub fn write(&self, offset: usize, data: &[u8]) -> bool {
        if !self.in_bounds(offset, data.len()) {
            return false;
        }
        // SAFETY: as in `read`: the range is inside the store's `len` bytes; `data` is not
        // the store's memory (callers copy out first when moving within one store).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset), data.len()) }
        true
    }

    /// The address of byte `offset`, for mapping (no access made here).
    pub fn address(&self, offset: usize) -> *mut c_void {
        self.ptr.wrapping_add(offset) as *mut c_void
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.owned {
            let slice = std::ptr::slice_from_raw_parts_mut(self.ptr, self.len);
            // SAFETY: an owned store's pointer came from `Box::into_raw` of a `len`-byte
            // boxed slice in `Store::owned`, and is freed here once.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

pub struct Mem {
    pub context: usize,
    pub store: Arc<Store>,
    /// Where this buffer starts in the store (non-zero for sub-buffers).
    pub offset: usize,
    pub size: usize,
    pub flags: u64,
    pub host_ptr: usize,
    /// The parent buffer's handle, for a sub-buffer (0 otherwise).
    pub parent: usize,
    pub maps: AtomicU32,
}

impl Mem {
    /// This buffer's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.size];
        self.store.read(self.offset, &mut v);
        v
    }
}

pub struct Program {
    pub context: usize,
    pub source: String,
    pub state: Mutex<ProgramState>,
}

#[derive(Default)]
pub struct ProgramState {
    pub options: String,
    /// CL_BUILD_NONE (-1), CL_BUILD_ERROR (-2), CL_BUILD_SUCCESS (0).
    pub status: i32,
    pub log: String,
    pub build: Option<Arc<Compiled>>,
    /// The source as compiled (a file in vdb's cache, named by its hash).
    pub source_path: PathBuf,
    pub kernels_made: u32,
}

/// A kernel argument as clSetKernelArg set it.
#[derive(Clone)]
pub enum ArgValue {
    /// A buffer (its handle and object), or NULL.
    Mem(Option<(usize, Arc<Mem>)>),
    Bytes(Vec<u8>),
    Local(usize),
}

pub struct Kernel {
    pub program: Arc<Program>,
    pub program_handle: usize,
    pub build: Arc<Compiled>,
    pub compiled: CompiledKernel,
    pub args_info: Vec<vdb::launch::zeinfo::ArgInfo>,
    pub args: Mutex<Vec<Option<ArgValue>>>,
    /// The parsed kernel, kept after the first launch so later ones skip the parse.
    pub parsed: Mutex<Option<Arc<vdb::program::Program>>>,
}

pub struct Event {
    pub context: usize,
    pub queue: usize,
    pub command: u32,
    /// CL_COMPLETE (0), or a negative error code.
    pub status: AtomicI32,
    /// Queued, submitted, started, ended: nanoseconds on the ICD's clock.
    pub times: [u64; 4],
}

/// Nanoseconds since the ICD was loaded (profiling times).
pub fn now_ns() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Event {
    pub fn status(&self) -> i32 {
        self.status.load(Ordering::SeqCst)
    }
}
