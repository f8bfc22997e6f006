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
    /// Waiting at `nbarrier.wait` on named barrier `id` for its producers (the `wait` runs
    /// again once the work-group's other threads are blocked or done).
    AtNamedBarrier(u8),
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

/// Most reconvergence points one thread may have pending at once.
pub const MAX_WAITING: usize = 16;

/// Most frames a thread's call stack holds: a call beyond faults (runaway recursion). Every
/// control change the recorder keeps holds the stack, so it must stay short; OpenCL and SYCL
/// device code cannot recurse, and real call chains are a few frames deep.
pub const MAX_CALL_DEPTH: usize = 256;

/// The pending reconvergence points, kept inline (no heap) so that copying a thread's
/// control state for the recorder costs a memcpy, not an allocation, on every step.
#[derive(Copy, Clone, Debug)]
pub struct WaitList {
    items: [Waiting; MAX_WAITING],
    len: u8,
}

/// Two lists are equal when they hold the same points in the same order (whatever lies in
/// the room past their ends, which points taken off leave behind).
impl PartialEq for WaitList {
    fn eq(&self, other: &WaitList) -> bool {
        self.items[..self.len as usize] == other.items[..other.len as usize]
    }
}

impl Eq for WaitList {}

impl Default for WaitList {
    fn default() -> Self {
        WaitList { items: [Waiting { at: InstIdx(0), lanes: 0 }; MAX_WAITING], len: 0 }
    }
}

impl WaitList {
    pub fn iter(&self) -> impl Iterator<Item = &Waiting> {
        self.items[..self.len as usize].iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Waiting> {
        self.items[..self.len as usize].iter_mut()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds an entry; false when the list is full.
    pub fn push(&mut self, w: Waiting) -> bool {
        if self.len as usize == MAX_WAITING {
            return false;
        }
        self.items[self.len as usize] = w;
        self.len += 1;
        true
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Waiting) -> bool) {
        let mut n = 0;
        for i in 0..self.len as usize {
            if keep(&self.items[i]) {
                self.items[n] = self.items[i];
                n += 1;
            }
        }
        self.len = n as u8;
    }
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
    pub saved_waiting: WaitList,
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
    pub waiting: WaitList,
    pub stack: Vec<Frame>,
    pub status: ThreadStatus,
}

impl Control {
    /// Bytes a copy of this state holds beyond its own size: the call stack's frames.
    pub fn heap_bytes(&self) -> u64 {
        (self.stack.len() * std::mem::size_of::<Frame>()) as u64
    }

    /// Bytes a copy of this state takes in all.
    pub fn bytes(&self) -> u64 {
        std::mem::size_of::<Control>() as u64 + self.heap_bytes()
    }
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
                waiting: WaitList::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_lists_are_equal_by_the_points_they_hold() {
        let point = |at: u32, lanes: u32| Waiting { at: InstIdx(at), lanes };
        let (mut a, mut b) = (WaitList::default(), WaitList::default());
        assert!(a.push(point(7, 0xf)) && a.push(point(9, 0xf0)));
        // Taking the first point off leaves the second's bytes behind past the end.
        a.retain(|w| w.at != InstIdx(7));
        assert!(b.push(point(9, 0xf0)));
        assert_eq!(a, b);
        assert!(b.push(point(11, 1)));
        assert_ne!(a, b);
    }
}
