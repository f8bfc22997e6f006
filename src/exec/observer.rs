//! The one write path's listener: every architectural change `exec` makes is reported here
//! with its old and new value, before the next instruction runs.

use crate::isa::PredId;
use crate::machine::{Control, MemSpace, ThreadId};

/// Receives every write. `ACTIVE == false` lets the interpreter skip capturing old values.
pub trait Observer {
    const ACTIVE: bool;
    /// GRF bytes `[offset, offset+new.len())` of `thread` changed from `old` to `new`.
    fn grf(&mut self, thread: ThreadId, offset: u32, old: &[u8], new: &[u8]);
    fn pred(&mut self, thread: ThreadId, pred: PredId, old: u32, new: u32);
    fn addr(&mut self, thread: ThreadId, slot: u32, old: u32, new: u32);
    fn mem(&mut self, thread: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]);
    /// Control state (pc, masks, reconvergence list, call stack, status) changed, or the
    /// step left the pc where it was. Not called for the common case of a step that only
    /// moved the pc to the next instruction: that is implied by the step itself.
    fn control(&mut self, thread: ThreadId, old: &Control, new: &Control);
    /// Memory was read (for read watchpoints); not a change of state.
    fn mem_read(&mut self, _thread: ThreadId, _space: MemSpace, _addr: u64, _len: u64) {}
    /// The memory access reported next (`mem` or `mem_read`) is lane `lane`'s; None for a
    /// block message's, which belong to no lane. The debugger's "which lanes wrote this
    /// byte" re-executes a step with an observer that listens here.
    fn access_lane(&mut self, _lane: Option<u32>) {}
}

/// An observer that also hears where each step of a burst starts and ends
/// ([`crate::exec::Interpreter::run_local`]).
pub trait StepHooks: Observer {
    /// A step of the burst's thread begins: the writes until `end_step` are its own.
    fn begin_step(&mut self);
    /// The step that began executed instruction `pc` under channel enables `chen`.
    fn end_step(&mut self, pc: u32, chen: u32);
}

/// Ignores everything (plain `vdb run` without recording).
#[derive(Copy, Clone, Debug, Default)]
pub struct NullObserver;

impl Observer for NullObserver {
    const ACTIVE: bool = false;
    #[inline]
    fn grf(&mut self, _: ThreadId, _: u32, _: &[u8], _: &[u8]) {}
    #[inline]
    fn pred(&mut self, _: ThreadId, _: PredId, _: u32, _: u32) {}
    #[inline]
    fn addr(&mut self, _: ThreadId, _: u32, _: u32, _: u32) {}
    #[inline]
    fn mem(&mut self, _: ThreadId, _: MemSpace, _: u64, _: &[u8], _: &[u8]) {}
    #[inline]
    fn control(&mut self, _: ThreadId, _: &Control, _: &Control) {}
}

impl StepHooks for NullObserver {
    #[inline]
    fn begin_step(&mut self) {}
    #[inline]
    fn end_step(&mut self, _: u32, _: u32) {}
}
