//! The architectural state of one hardware thread.

use crate::isa::{InstIdx, UnitId};
use crate::program::Program;

/// Index of a hardware thread in the machine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub u32);

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ThreadStatus {
    Running,
    /// Waiting at a `barrier` for the rest of its work-group.
    AtBarrier,
    Done,
    /// Stopped by a fault; the message is in the fault record.
    Faulted,
}

/// Lanes parked by a divergent `goto`, to be reactivated when execution reaches `at`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub at: InstIdx,
    pub lanes: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// `call` to a subroutine of the same unit.
    Subroutine,
    /// `fcall`/`ifcall` to a stack-call function.
    Function,
}

/// One entry of the call stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    /// Where execution resumes after the return.
    pub return_pc: InstIdx,
    /// Execution mask at the call site, restored on return.
    pub saved_em: u32,
    /// Call mask before the call, restored on return.
    pub saved_call_mask: u32,
    /// Lanes the caller had parked at reconvergence points, restored on return.
    pub saved_waiting: Vec<Waiting>,
    /// The unit the callee's code belongs to.
    pub unit: UnitId,
}

/// Control state of a thread: everything but the register and predicate contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    pub pc: InstIdx,
    /// Execution mask: the lanes currently active (bit n = channel n).
    pub em: u32,
    /// Call mask of the current subroutine or function.
    pub call_mask: u32,
    pub waiting: Vec<Waiting>,
    pub stack: Vec<Frame>,
    pub status: ThreadStatus,
}

/// One hardware thread.
#[derive(Clone, Debug)]
pub struct ThreadState {
    pub grf: Vec<u8>,
    /// One 32-bit word per predicate variable (bit n = channel n).
    pub preds: Vec<u32>,
    /// Address-register elements (UW in vISA, kept as u32 here so the GRF file may exceed
    /// 64 KiB: vdb lays every variable of every unit out separately).
    pub addrs: Vec<u32>,
    pub control: Control,
    /// Lanes dispatched (the thread's initial execution mask).
    pub dispatch_mask: u32,
    /// SIMD width of the kernel (8, 16 or 32).
    pub simd: u32,
    /// Index of the work-group this thread belongs to (its SLM), and its index in the group.
    pub group: u32,
    pub index_in_group: u32,
}

impl ThreadState {
    /// A fresh thread at the kernel entry with zeroed registers.
    pub fn new(program: &Program, simd: u32, dispatch_mask: u32) -> ThreadState {
        ThreadState {
            grf: vec![0; program.grf_bytes as usize],
            preds: vec![0; program.preds.len()],
            addrs: vec![0; program.addr_slots as usize],
            control: Control {
                pc: program.kernel().entry,
                em: dispatch_mask,
                call_mask: dispatch_mask,
                waiting: Vec::new(),
                stack: Vec::new(),
                status: ThreadStatus::Running,
            },
            dispatch_mask,
            simd,
            group: 0,
            index_in_group: 0,
        }
    }

    pub fn is_runnable(&self) -> bool {
        self.control.status == ThreadStatus::Running
    }
}
