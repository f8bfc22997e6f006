//! Thread and memory state. Plain data: all behaviour lives in `exec`, and every change
//! to it goes through `exec`'s write path so that the recorder sees it.

mod hash;
pub use hash::FastHasher;
mod memory;
mod thread;
mod threads;

pub use memory::{
    Accesses, Fold, FoldOp, MemError, MemSpace, OverRead, OverReads, PageChanges, Ranges,
    Region as MemRegion, Slm, Slms, Svm, PAGE_SIZE,
};
pub use thread::{
    Control, Frame, FrameKind, ThreadId, ThreadState, ThreadStatus, WaitList, Waiting, MAX_CALL_DEPTH,
    MAX_WAITING,
};
pub use threads::{ThreadMaker, Threads, CHUNK as THREADS_PER_CHUNK};

use std::sync::Arc;

/// Sharing between the live machine and checkpoints. `Arc`, so that a machine can cross to
/// another core: a recording runs its later work-groups on a second core with a machine of
/// its own, whose checkpoints then join the first core's (`session::frontier`). A step
/// copies-on-write its thread through `make_mut`; with one thread borrow per burst rather
/// than per step, the atomic count costs nothing measurable in plain runs and about 5% of a
/// recording's CPU time (`Rc` measured against `Arc`, session 20).
pub type Shared<T> = Arc<T>;

/// Everything a run changes: the hardware threads and the memories they share.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// Shared with checkpoints: a thread is copied on its first write after a checkpoint.
    pub threads: Threads,
    pub svm: Svm,
    /// One SLM per work-group (indexed by `ThreadState::group`), shared the same way.
    pub slms: Slms,
    /// Relocations, resolved by the launch: for each instruction index, the address of the
    /// zebin data symbol its `faddr` names (None elsewhere), so `faddr` looks up no name.
    /// Fixed for the launch, and shared by every copy of the machine (each checkpoint makes
    /// one): a table per instruction copied at every checkpoint grows with the program.
    pub relocations: Arc<[Option<u64>]>,
    /// Bound surfaces by surface variable index (`StateId`): SVM base address and size.
    pub surfaces: Vec<Option<(u64, u64)>>,
    /// The threads' private memory, where the launch gives one: the SVM region behind the
    /// `%scratch` surface, each thread's slot of it (its offset in r0.5).
    pub scratch: Option<Scratch>,
    /// Stateless private memory (the stack of stack calls), each thread's slot of it (its
    /// index the thread number the launch gives in `%hw_id`, `%sr0` and `%msg0`).
    pub stack: Option<Scratch>,
}

/// The SVM region of private memory: from `base`, `slots` slots of `per_thread` bytes; thread
/// `t` has slot `t % slots`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scratch {
    pub base: u64,
    pub per_thread: u64,
    pub slots: u64,
}

impl Scratch {
    /// Whether SVM byte `addr` is private memory, and if so whose slot and the offset in it.
    pub fn locate(&self, addr: u64) -> Option<(u64, u64)> {
        let at = addr.checked_sub(self.base)?;
        (at < self.per_thread * self.slots).then(|| (at / self.per_thread, at % self.per_thread))
    }
}

impl Machine {
    pub fn thread(&self, id: ThreadId) -> &ThreadState {
        &self.threads[id.0 as usize]
    }

    /// Reads memory: SVM (a buffer's own bytes, not the padding of its last page), or
    /// work-group G's SLM (`MemSpace::Slm(G)`).
    pub fn read_memory(&self, space: MemSpace, addr: u64, out: &mut [u8]) -> Result<(), String> {
        match space {
            MemSpace::Svm => self.svm.read_owned(addr, out).map_err(|e| e.to_string()),
            MemSpace::Slm(g) => match self.slms.get(g as usize) {
                Some(slm) => slm.read(addr, out).map_err(|e| e.to_string()),
                None => Err(format!("no SLM for group {g}")),
            },
        }
    }

    /// A thread for writing (copied first if a checkpoint shares it).
    pub fn thread_mut(&mut self, id: ThreadId) -> &mut ThreadState {
        match self.threads.get_mut(id.0 as usize) {
            Some(t) => Shared::make_mut(t),
            None => panic!("no thread {}", id.0),
        }
    }
}
