//! The one write path's listener: every architectural change `exec` makes is reported here
//! with its old and new value, before the next instruction runs.

use crate::isa::PredId;
use crate::machine::{Control, MemSpace, ThreadId};

/// Receives every write. `ACTIVE == false` lets the interpreter skip capturing old values.
pub trait Observer {
    const ACTIVE: bool;
    /// Whether it hears each lane's memory accesses one by one, each after its
    /// [`Observer::access_lane`]. When false, the stores of one message to consecutive bytes
    /// may come as one [`Observer::mem`].
    const LANE_ACCESSES: bool = true;
    /// GRF bytes `[offset, offset+new.len())` of `thread` changed from `old` to `new`.
    fn grf(&mut self, thread: ThreadId, offset: u32, old: &[u8], new: &[u8]);
    /// A packed region write with disabled lanes between enabled ones: element `i` (`size`
    /// bytes at `offset + i * size`) was written where bit `i` of `lanes` is set; `old` and
    /// `new` cover every element from 0 to the last enabled one (the disabled ones keep their
    /// bytes). By default, one [`Observer::grf`] per run of enabled lanes.
    fn grf_lanes(&mut self, thread: ThreadId, offset: u32, size: u32, lanes: u32, old: &[u8], new: &[u8]) {
        for (a, b) in lane_runs(lanes, size) {
            self.grf(thread, offset + a, &old[a as usize..b as usize], &new[a as usize..b as usize]);
        }
    }
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
    /// Whether it wants the old and new bytes of each register write. When false, the
    /// in-place tiers report a destination as [`Observer::grf_span`] instead: the bytes
    /// its lanes lie in (a superset of those written), without keeping the old ones.
    #[inline(always)]
    fn values(&self) -> bool {
        true
    }
    /// GRF bytes `[offset, offset + len)` of `thread` hold the bytes a write changed (only
    /// when [`Observer::values`] is false).
    fn grf_span(&mut self, _thread: ThreadId, _offset: u32, _len: u32) {}
    /// [`Observer::grf_span`] of a packed destination: lane i's `size` bytes at `offset + i ·
    /// size`, written where bit i of `lanes` is set.
    #[inline(always)]
    fn grf_span_lanes(&mut self, thread: ThreadId, offset: u32, size: u32, lanes: u32) {
        self.grf_span(thread, offset, (32 - lanes.leading_zeros()) * size);
    }
}

/// The byte ranges `[a, b)` of the runs of set bits in `lanes`, `size` bytes per lane, in
/// order.
pub fn lane_runs(lanes: u32, size: u32) -> LaneRuns {
    LaneRuns { bits: lanes, size }
}

/// The iterator of [`lane_runs`].
#[derive(Copy, Clone, Debug)]
pub struct LaneRuns {
    bits: u32,
    size: u32,
}

impl Iterator for LaneRuns {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        if self.bits == 0 {
            return None;
        }
        let lo = self.bits.trailing_zeros();
        let len = (!(self.bits >> lo)).trailing_zeros();
        self.bits &= !((((1u64 << len) - 1) as u32) << lo);
        Some((lo * self.size, (lo + len) * self.size))
    }
}

/// An observer that also hears where each step of a burst starts and ends
/// ([`crate::exec::Interpreter::run_local`]).
pub trait StepHooks: Observer {
    /// A step of the burst's thread begins: the writes until `end_step` are its own.
    fn begin_step(&mut self);
    /// The step that began executed instruction `pc` under channel enables `chen`.
    fn end_step(&mut self, pc: u32, chen: u32);
    /// [`StepHooks::end_step`] of a step of a straight stretch run in place, which
    /// [`StepHooks::ran_stretch`] then names whole.
    #[inline(always)]
    fn end_step_in_stretch(&mut self, pc: u32, chen: u32) {
        self.end_step(pc, chen)
    }
    /// The steps since the last call (each ended by [`StepHooks::end_step_in_stretch`]) ran
    /// instructions `first..end`, one each, in order.
    #[inline(always)]
    fn ran_stretch(&mut self, _first: u32, _end: u32) {}
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
