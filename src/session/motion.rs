//! Moving through time: one step forward (replayed from the log, or executed and recorded
//! at the frontier), one step back, and the commands built on them.

use std::sync::atomic::Ordering;

use super::expr::{Condition, RegionRef};
use super::frontier::INTERRUPT_CHECK;
use super::workitems::condition_lane_on;
use super::{EndState, Session, StopReason, WatchHit, WatchKind, WatchTarget};
use crate::exec::PcSet;
use crate::isa::{InstIdx, UnitId};
use crate::machine::ThreadStatus;
use crate::machine::{ThreadId, ThreadState};
use crate::trace::{record_step, EntryKind, Probe, Single, StepRecord};

/// The first stretch a step forward from the frontier records ahead (doubling up to
/// [`AHEAD_MOST`] while one command goes on stepping).
pub(super) const AHEAD_FIRST: u64 = 1 << 13;
const AHEAD_MOST: u64 = 1 << 20;

impl Session {
    /// The end state as a stop reason; a fault focuses its thread and lane, as gdb shows
    /// the thread that got the signal.
    fn end_reason(&mut self) -> StopReason {
        match &self.end {
            Some(EndState::Fault(f)) => {
                let (thread, lane) = (f.thread, f.kind.lane());
                let message = f.render_in(&self.program, self.geometry.as_ref());
                if (thread.0 as usize) < self.machine.threads.len() {
                    self.focus = thread;
                    if let Some(lane) = lane.filter(|&l| l < self.machine.thread(thread).simd) {
                        self.lane = lane;
                    }
                }
                StopReason::Fault { message }
            }
            Some(EndState::RecordLimit(b)) => StopReason::RecordLimit { bytes: *b },
            _ => StopReason::End,
        }
    }

    /// Executes one new step at the frontier and records it.
    fn execute_new(&mut self) -> Option<StepRecord> {
        if self.end.is_some() {
            return None;
        }
        let bytes = self.recorder.recorded_bytes();
        if bytes > self.record_limit || self.recorder.len() >= crate::trace::MAX_STEPS {
            self.mark_end(EndState::RecordLimit(bytes), self.now);
            return None;
        }
        let (checkpoints, time) = (&mut self.recorder.checkpoints, self.recorder.trace.len());
        let mut batch = self.spare_batches.pop().unwrap_or_default();
        let single =
            record_step(&self.interp, &mut self.machine, &mut self.sched, checkpoints, time, &mut batch);
        let rec = if self.single_ends(single) {
            self.recorder.trace.append_batch(&batch);
            self.now += 1;
            self.recorder.trace.last()
        } else {
            None
        };
        self.spare_batches.push(batch);
        rec
    }

    /// Sets the end state a single step staged by [`record_step`] leads to; true when it
    /// staged the step (which may have faulted).
    pub(super) fn single_ends(&mut self, single: Single) -> bool {
        match single {
            Single::Recorded(fault) => {
                if let Some(fault) = fault {
                    self.mark_end(EndState::Fault(fault), self.now + 1);
                }
                true
            }
            Single::Finished => {
                self.mark_end(EndState::Finished, self.now);
                false
            }
            Single::Stopped(fault) => {
                self.mark_end(EndState::Fault(fault), self.now);
                false
            }
        }
    }

    /// Ends the recording at `time`, the live machine's time (a step may still wait to be
    /// appended). The end state becomes a checkpoint, so that seeks near the end undo from it
    /// instead of replaying from the checkpoint before.
    pub(super) fn mark_end(&mut self, end: EndState, time: u64) {
        self.end = Some(end);
        self.recorder.checkpoints.take_at_end(&self.machine, &self.sched, time);
    }

    /// One step forward (redone from the recording, or executed and recorded at the
    /// frontier); None at the end of the run.
    pub fn forward(&mut self) -> Option<StepRecord> {
        if self.now < self.recorder.len() {
            let rec = self.recorder.trace.at(self.now);
            self.recorder.trace.redo(&mut self.machine, self.now);
            self.now += 1;
            return Some(rec);
        }
        self.execute_new()
    }

    /// At the frontier: records up to [`Session::ahead`] steps ahead in windows (none where
    /// they cannot run) and comes back; true when it recorded any. An interrupt while
    /// recording stays set for the movement to see.
    fn record_ahead(&mut self) -> bool {
        let from = self.now;
        if !self.window_recording || self.end.is_some() || from < self.windows_from {
            return false;
        }
        let stop = self.record_windows(&mut 0, from.saturating_add(self.ahead));
        if stop == Some(StopReason::Interrupted) {
            self.interrupt.store(true, Ordering::Relaxed);
        }
        if self.now == from {
            return false;
        }
        self.ahead = (self.ahead * 2).min(AHEAD_MOST);
        self.recorder.seek(&mut self.machine, self.now, from);
        self.now = from;
        true
    }

    /// One step back; None at step 0.
    pub fn backward(&mut self) -> Option<StepRecord> {
        if self.now == 0 {
            return None;
        }
        self.now -= 1;
        self.recorder.trace.undo(&mut self.machine, self.now);
        Some(self.recorder.trace.at(self.now))
    }

    /// Moves to recorded time `target` (executing forward if it lies past the frontier).
    pub fn goto(&mut self, target: u64) -> StopReason {
        // Past the recorded end: recorded in burst windows first where they can run.
        if target > self.recorder.len() {
            let end = self.recorder.len();
            self.recorder.seek(&mut self.machine, self.now, end);
            self.now = end;
            if let Some(stop) = self.record_windows(&mut 0, target) {
                return stop;
            }
        }
        let recorded = self.recorder.len();
        self.recorder.seek(&mut self.machine, self.now, target.min(recorded));
        self.now = target.min(recorded);
        let mut count = 0u64;
        while self.now < target {
            if self.forward().is_none() {
                return self.end_reason();
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    /// Every few thousand steps of a long movement: report progress and ask whether to stop
    /// (the interrupt flag, or the progress callback returning true).
    fn interrupted(&mut self, count: u64) -> bool {
        count.is_multiple_of(INTERRUPT_CHECK) && self.poll_interrupt()
    }

    /// Reports progress and asks whether to stop.
    pub(super) fn poll_interrupt(&mut self) -> bool {
        // While windows record, the trace is out of the recorder: the frontier is `now`.
        let (now, total) = (self.now, self.total_steps().max(self.now));
        let asked = match self.progress.as_mut() {
            Some(report) => report(now, total),
            None => false,
        };
        asked || self.interrupt.swap(false, Ordering::Relaxed)
    }

    /// Whether the focused thread can execute again (it is not finished or faulted, and if
    /// the run has ended, it has a recorded step ahead).
    fn focus_has_future(&self) -> bool {
        let t = self.focus.0 as usize;
        let last = self.recorder.trace.last_step.get(t).copied().unwrap_or(u64::MAX);
        let status = self.machine.thread(self.focus).control.status;
        let alive = !matches!(status, ThreadStatus::Done | ThreadStatus::Faulted);
        let recorded_ahead = last != u64::MAX && last >= self.now;
        recorded_ahead || (alive && self.end.is_none())
    }

    /// Steps forward until the focused thread has executed `n` instructions. The recording
    /// is searched for the thread's steps (recorded ahead where needed) and the machine moved
    /// from one to the next; the steps between are checked for watchpoints at the steps that
    /// may trigger one ([`Session::watched_steps`]).
    pub fn step_focused(&mut self, n: u64) -> StopReason {
        if self.check_each_step {
            return self.step_focused_each(n);
        }
        if !self.focus_has_future() {
            return self.end_reason_for_focus();
        }
        let mut count = 0u64;
        for _ in 0..n {
            if let Some(stop) = self.focus_step_forward(&mut count) {
                return stop;
            }
            if let Some(stop) = self.focus_breakpoint_after() {
                return stop;
            }
            if self.interrupted_after(&mut count) {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    /// Moves to just after the focused thread's next step, recording ahead where the
    /// recording ends; or returns what stopped it first (a watchpoint that a step on the way
    /// triggered, that step included; the end of the run; an interrupt).
    fn focus_step_forward(&mut self, count: &mut u64) -> Option<StopReason> {
        let thread = self.focus.0;
        loop {
            if self.now == self.recorder.len() && !self.record_ahead() {
                // Where windows cannot run: one step at a time.
                let Some(rec) = self.forward() else { return Some(self.end_reason()) };
                *count += 1;
                if let Some(hit) = self.watch_hit(self.now - 1, true) {
                    self.focus_hit(hit.thread, &hit.lanes);
                    return Some(StopReason::Watchpoint(hit));
                }
                if rec.thread == thread {
                    return None;
                }
            } else {
                let (from, len) = (self.now, self.recorder.len());
                let next = self.recorder.trace.thread_steps_ahead(thread, from, len).next();
                let to = next.map_or(len, |s| s + 1);
                if let Some(stop) = self.watch_stop(from, to, true) {
                    return Some(stop);
                }
                self.recorder.seek(&mut self.machine, self.now, to);
                self.now = to;
                *count += to - from;
                if next.is_some() {
                    return None;
                }
            }
            if self.interrupted_after(count) {
                return Some(StopReason::Interrupted);
            }
        }
    }

    /// The first watchpoint that a recorded step in `[from, to)` triggers in the direction of
    /// the movement (the latest first going back), the machine left where that direction
    /// stops (after the step forward, before it back); the candidates from
    /// [`Session::watched_steps`], each checked at its time.
    fn watch_stop(&mut self, from: u64, to: u64, forward: bool) -> Option<StopReason> {
        let mut candidates = self.watched_steps(from, to);
        candidates.sort_unstable();
        candidates.dedup();
        if !forward {
            candidates.reverse();
        }
        for step in candidates {
            let at = step + u64::from(forward);
            self.recorder.seek(&mut self.machine, self.now, at);
            self.now = at;
            if let Some(hit) = self.watch_hit(step, forward) {
                self.focus_hit(hit.thread, &hit.lanes);
                return Some(StopReason::Watchpoint(hit));
            }
        }
        None
    }

    /// After a step of the focused thread: a breakpoint where it now stands, with its
    /// condition true.
    fn focus_breakpoint_after(&mut self) -> Option<StopReason> {
        if self.breakpoints.is_empty() {
            return None;
        }
        let control = &self.machine.thread(self.focus).control;
        if matches!(control.status, ThreadStatus::Done | ThreadStatus::Faulted) {
            return None;
        }
        let pc = control.pc.0;
        self.breakpoint_at(self.focus.0, pc).map(|id| StopReason::Breakpoint { id })
    }

    /// [`Session::step_focused`] one step at a time, each checked as it is made: the
    /// reference the tests hold the search to ([`Session::check_each_step`]).
    fn step_focused_each(&mut self, n: u64) -> StopReason {
        if !self.focus_has_future() {
            return self.end_reason_for_focus();
        }
        let mut done = 0;
        let mut count = 0u64;
        while done < n {
            let Some(rec) = self.forward() else { return self.end_reason() };
            done += (rec.thread == self.focus.0) as u64;
            if let Some(stop) = self.stepping_stop(&rec, true) {
                return stop;
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    /// What stops a stepping command (`step`, `next`, `finish` and their reverses) after
    /// step `rec`, just taken in the direction `forward`, as gdb stops them: a watchpoint
    /// that any thread's access triggers (the focus moves to that thread, as `continue`
    /// does), or, after a step of the focused thread, a breakpoint at the instruction that
    /// thread is now at, with its condition true. Other threads' breakpoints do not stop a
    /// step: they run the same code, and would stop every step of the focused thread.
    fn stepping_stop(&mut self, rec: &StepRecord, forward: bool) -> Option<StopReason> {
        let step = if forward { self.now - 1 } else { self.now };
        if let Some(hit) = self.watch_hit(step, forward) {
            self.focus_hit(hit.thread, &hit.lanes);
            return Some(StopReason::Watchpoint(hit));
        }
        if rec.thread != self.focus.0 {
            return None;
        }
        self.focus_breakpoint_after()
    }

    /// The stop for a step of a thread that has nothing left to execute.
    fn end_reason_for_focus(&mut self) -> StopReason {
        match self.end {
            Some(_) => self.end_reason(),
            None => StopReason::End,
        }
    }

    /// Steps back until the focused thread has un-executed `n` instructions: from one of its
    /// steps to the one before through the recording, the steps between checked where they
    /// may trigger a watchpoint, as [`Session::step_focused`] goes forward.
    pub fn reverse_step_focused(&mut self, n: u64) -> StopReason {
        let first = self.recorder.trace.first_step.get(self.focus.0 as usize).copied().unwrap_or(u64::MAX);
        if first == u64::MAX || first >= self.now {
            return StopReason::Start;
        }
        if self.check_each_step {
            return self.reverse_step_focused_each(n);
        }
        let mut count = 0u64;
        for _ in 0..n {
            let to = self.now;
            let previous = self.recorder.trace.thread_steps_back(self.focus.0, 0, to).next().map(|(s, _)| s);
            let from = previous.unwrap_or(0);
            if let Some(stop) = self.watch_stop(from, to, false) {
                return stop;
            }
            self.recorder.seek(&mut self.machine, self.now, from);
            self.now = from;
            if previous.is_none() {
                return StopReason::Start;
            }
            if let Some(stop) = self.focus_breakpoint_after() {
                return stop;
            }
            count += to - from;
            if self.interrupted_after(&mut count) {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    /// [`Session::reverse_step_focused`] one step at a time, each checked as it is undone.
    fn reverse_step_focused_each(&mut self, n: u64) -> StopReason {
        let mut done = 0;
        let mut count = 0u64;
        while done < n {
            let Some(rec) = self.backward() else { return StopReason::Start };
            done += (rec.thread == self.focus.0) as u64;
            if let Some(stop) = self.stepping_stop(&rec, false) {
                return stop;
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    fn depth(&self) -> usize {
        self.machine.thread(self.focus).control.stack.len()
    }

    /// `next`: like step, but a call runs until it returns.
    pub fn next(&mut self, n: u64) -> StopReason {
        self.over_calls(n, Session::step_focused)
    }

    /// `rnext`: like rstep, but stepping back out of a call lands on the call.
    pub fn reverse_next(&mut self, n: u64) -> StopReason {
        self.over_calls(n, Session::reverse_step_focused)
    }

    /// `n` single steps in one direction, each continued while the thread is deeper in the
    /// call stack than where it started.
    fn over_calls(&mut self, n: u64, step: fn(&mut Session, u64) -> StopReason) -> StopReason {
        for _ in 0..n {
            let depth = self.depth();
            let reason = self.steps_until(step, |s| s.depth() <= depth);
            if reason != StopReason::Step {
                return reason;
            }
        }
        StopReason::Step
    }

    /// `finish`: run until the focused thread leaves its current subroutine or function.
    pub fn finish(&mut self) -> Result<StopReason, String> {
        self.leave_frame("finish", Session::step_focused)
    }

    /// `reverse-finish`: back to the call that entered the focused thread's current
    /// subroutine or function, stopped before that call runs.
    pub fn reverse_finish(&mut self) -> Result<StopReason, String> {
        self.leave_frame("reverse-finish", Session::reverse_step_focused)
    }

    /// Single steps of the focused thread in one direction until it is out of the frame it
    /// is in now (or something stops the stepping).
    fn leave_frame(
        &mut self,
        name: &str,
        step: fn(&mut Session, u64) -> StopReason,
    ) -> Result<StopReason, String> {
        let depth = self.depth();
        if depth == 0 {
            return Err(format!(
                "`{name}` needs a subroutine or function frame; the thread is in the kernel body"
            ));
        }
        Ok(self.steps_until(step, |s| s.depth() < depth))
    }

    /// `until`: `next`, except that a jump back to an earlier instruction of the same frame
    /// (a loop's back edge) is run through, as gdb's `until` does: it stops once the focused
    /// thread is at an instruction after the one it started at, in this frame, or has left
    /// the frame. For a SIMD loop that means every lane has left it.
    pub fn until_next(&mut self) -> StopReason {
        let (depth, start) = (self.depth(), self.focus_pc());
        self.steps_until(Session::next, |s| s.depth() < depth || s.focus_pc() > start)
    }

    /// `until LOC`: steps the focused thread until it is about to execute one of `pcs` in
    /// this frame (not in a call it makes), or until this frame returns.
    pub fn until_location(&mut self, pcs: &[InstIdx]) -> StopReason {
        let depth = self.depth();
        self.steps_until(Session::step_focused, |s| {
            s.depth() < depth || (s.depth() == depth && pcs.contains(&s.focus_pc()))
        })
    }

    /// Takes one step of `step` (a stepping command with a count of 1) at a time until
    /// `done` holds or the stepping stops for another reason (returned).
    fn steps_until(
        &mut self,
        step: fn(&mut Session, u64) -> StopReason,
        done: impl Fn(&Session) -> bool,
    ) -> StopReason {
        let mut count = 0u64;
        loop {
            let reason = step(self, 1);
            if reason != StopReason::Step || done(self) {
                return reason;
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
    }

    fn focus_pc(&self) -> InstIdx {
        self.machine.thread(self.focus).control.pc
    }

    /// The breakpoint that stops `thread` before it executes instruction `pc` now: the first
    /// enabled one there whose condition holds and that has no hits left to ignore. Every
    /// caller stops on it, so hits are counted here (ignored ones too, as gdb counts them),
    /// and a temporary one (`tbreak`) is deleted.
    fn breakpoint_at(&mut self, thread: u32, pc: u32) -> Option<u32> {
        for i in 0..self.breakpoints.len() {
            let bp = &self.breakpoints[i];
            if !bp.enabled || !bp.pcs.contains(&InstIdx(pc)) {
                continue;
            }
            // A work-item condition that holds names the lane the stop focuses.
            let lane = match &bp.cond {
                None => None,
                Some(cond) => match self.condition_lane(cond, thread, pc) {
                    Some(lane) => lane,
                    None => continue,
                },
            };
            let bp = &mut self.breakpoints[i];
            bp.hits += 1;
            if bp.ignore > 0 {
                bp.ignore -= 1;
                continue;
            }
            let id = bp.id;
            if bp.temporary {
                self.breakpoints.remove(i);
            }
            if let Some(lane) = lane {
                self.lane = lane;
            }
            return Some(id);
        }
        None
    }

    /// Watchpoints that step `step` triggers. `after` says whether the machine is at
    /// time step + 1 (forward) or step (backward), for old/new values.
    fn watch_hit(&mut self, step: u64, after: bool) -> Option<WatchHit> {
        if self.watchpoints.iter().all(|w| !w.enabled) {
            return None;
        }
        let rec = self.recorder.trace.at(step);
        let entries = self.recorder.trace.entries(step);
        // The log keeps writes only: the memory a step read comes from running it again on
        // the state before it, where a read or access watchpoint needs it.
        let reads_wanted = self.watchpoints.iter().any(|w| {
            w.enabled && w.kind != WatchKind::Write && matches!(w.target, WatchTarget::Memory { .. })
        });
        // After a forward step, the state before it is one undo away: made once, for the
        // reads and for a hit's lanes.
        let mut undone = None;
        let reads: Vec<(crate::machine::MemSpace, u64, u64)> =
            if reads_wanted && self.memory_pcs.contains(rec.pc) {
                let before = if after { undone.insert(self.before_step(step)) } else { &self.machine };
                let accesses = self.step_accesses(before, step);
                accesses.iter().filter(|a| !a.write).map(|a| (a.space, a.addr, a.len)).collect()
            } else {
                Vec::new()
            };
        for wi in 0..self.watchpoints.len() {
            if !self.watchpoints[wi].enabled {
                continue;
            }
            let wp = &self.watchpoints[wi];
            let read = match wp.target {
                WatchTarget::Memory { space, addr, len } => reads
                    .iter()
                    .find(|&&(s, a, l)| s == space && a < addr + len && addr < a + l)
                    .map(|&(_, a, _)| ("read", &[][..], a)),
                WatchTarget::Register { .. } => None,
            };
            // The step's writes of the watched range, then its read of it.
            let found: Vec<(&str, &[u8], u64)> = entries
                .iter()
                .filter_map(|e| match (&wp.target, &e.kind) {
                    (WatchTarget::Memory { space, addr, len }, EntryKind::Mem { space: s, addr: a, xor })
                        if s == space && *a < addr + len && *addr < *a + xor.len() as u64 =>
                    {
                        Some(("write", &xor[..], *a))
                    }
                    (WatchTarget::Register { thread, ranges, .. }, EntryKind::Grf { offset, xor })
                        if e.thread == *thread
                            && ranges
                                .iter()
                                .any(|(lo, hi)| *offset < *hi && *lo < offset + xor.len() as u32) =>
                    {
                        Some(("write", &xor[..], *offset as u64))
                    }
                    _ => None,
                })
                .chain(read)
                .collect();
            for (access, xor, at) in found {
                let wp = &self.watchpoints[wi];
                let wanted = match wp.kind {
                    WatchKind::Write => access == "write",
                    WatchKind::Read => access == "read",
                    WatchKind::Access => true,
                };
                if !wanted {
                    continue;
                }
                let (old, new) = self.watch_values(&wp.target, xor, at, after);
                // A value condition is on the value after the step: the same test in both
                // directions of time.
                if wp.cond.as_ref().is_some_and(|c| !c.holds(&new)) {
                    break;
                }
                // Counted once per step, stopping or not.
                let w = &mut self.watchpoints[wi];
                w.hits += 1;
                if w.ignore > 0 {
                    w.ignore -= 1;
                    break;
                }
                let (id, wp) = (w.id, &self.watchpoints[wi]);
                let lanes = if after {
                    let before = match undone.take() {
                        Some(before) => before,
                        None => self.before_step(step),
                    };
                    self.lanes_touching(step, &wp.target, &before)
                } else {
                    self.lanes_touching(step, &wp.target, &self.machine)
                };
                let inst = self.program.inst(InstIdx(rec.pc));
                let workitems = self.work_items_of(rec.thread, &lanes);
                let hit = WatchHit {
                    id,
                    access,
                    step,
                    thread: rec.thread,
                    line: inst.span.line,
                    source: self.source_of(InstIdx(rec.pc)),
                    instruction: self.program.inst_text(InstIdx(rec.pc)).to_string(),
                    lanes,
                    workitems,
                    old: hex(&old),
                    new: hex(&new),
                    typed: self.typed_change(&wp.target, &old, &new).map(Box::new),
                };
                return Some(hit);
            }
        }
        None
    }

    /// The machine as it was before step `step`, the step just behind the current state.
    fn before_step(&self, step: u64) -> crate::machine::Machine {
        let mut before = self.machine.clone();
        self.recorder.trace.undo(&mut before, step);
        before
    }

    /// Values of the watched range around a write whose XOR starts at `at`.
    fn watch_values(&self, target: &WatchTarget, xor: &[u8], at: u64, after: bool) -> (Vec<u8>, Vec<u8>) {
        let (base, now) = match target {
            WatchTarget::Memory { space, addr, len } => {
                let mut buf = vec![0u8; *len as usize];
                let _ = self.read_memory(*space, *addr, &mut buf);
                (*addr, buf)
            }
            WatchTarget::Register { thread, ranges, .. } => {
                let (lo, hi) = ranges.first().copied().unwrap_or((0, 0));
                let t = self.machine.thread(ThreadId(*thread));
                (lo as u64, t.grf.get(lo as usize..hi as usize).unwrap_or(&[]).to_vec())
            }
        };
        let mut other = now.clone();
        for (i, b) in other.iter_mut().enumerate() {
            let addr = base + i as u64;
            if addr >= at && addr < at + xor.len() as u64 {
                *b ^= xor[(addr - at) as usize];
            }
        }
        if after {
            (other, now)
        } else {
            (now, other)
        }
    }

    /// `continue` forward. The first step is not checked for breakpoints, so continuing
    /// from a breakpoint stop moves past it.
    ///
    /// Past the recorded end, the run is recorded ahead in burst windows, as a `continue`
    /// with nothing to stop it records, a stretch at a time (growing from 8192 steps; past
    /// [`Session::split_after`], the rest of the run, its later work-groups shared with the
    /// other cores); each stretch, like any recorded stretch ahead, is then searched for the
    /// first stop: the steps at a breakpoint's instructions, and the steps the memory and
    /// register indexes name as writing a watched range, each checked at its own time (a
    /// seek), oldest first. A stop found leaves the recording ahead of it in place (the run
    /// is deterministic), as after going back. Read and access watchpoints are checked at
    /// the steps of memory instructions.
    pub fn continue_forward(&mut self) -> StopReason {
        self.probe = self.breakpoint_probe();
        let stop = self.continue_recorded_ahead();
        self.probe = None;
        self.probed.clear();
        self.probe_hits.clear();
        stop
    }

    /// What recording windows test, during a `continue`, before the instructions of the
    /// enabled breakpoints: whether one of those there has no condition or one that holds
    /// for the thread (its state in a window is that of its step; other threads' are not).
    pub(super) fn breakpoint_probe(&self) -> Option<Probe<'static>> {
        let breakpoints: Vec<(Vec<InstIdx>, Option<Condition>)> =
            self.breakpoints.iter().filter(|b| b.enabled).map(|b| (b.pcs.clone(), b.cond.clone())).collect();
        if breakpoints.is_empty() {
            return None;
        }
        let pcs = PcSet::new(breakpoints.iter().flat_map(|(pcs, _)| pcs.iter().map(|p| p.0)));
        let (program, geometry, lane) = (self.program.clone(), self.geometry.clone(), self.lane);
        // Comparisons resolved once per breakpoint, unit and SIMD width (by name, they are
        // a search of the unit's variables).
        // (A few entries: a list searched in order costs less than hashing at every test.)
        let mut resolved: Vec<(ResolvedKey, Option<(RegionRef, f64)>)> = Vec::new();
        let test = move |state: &ThreadState, thread: ThreadId, pc: InstIdx| {
            let unit = program.inst(pc).unit;
            breakpoints.iter().enumerate().any(|(i, (pcs, cond))| {
                pcs.contains(&pc)
                    && match cond {
                        None => true,
                        Some(Condition::Compare(c)) => {
                            let key = (i, unit, state.simd);
                            let at = match resolved.iter().position(|(k, _)| *k == key) {
                                Some(at) => at,
                                None => {
                                    resolved.push((key, c.resolve(&program, unit, state.simd).ok()));
                                    resolved.len() - 1
                                }
                            };
                            resolved[at].1.as_ref().is_some_and(|(r, rhs)| c.holds(r, *rhs, state, lane))
                        }
                        Some(c) => {
                            condition_lane_on(&program, geometry.as_ref(), lane, state, c, thread.0, pc.0)
                                .is_some()
                        }
                    }
            })
        };
        Some(Probe { pcs, test: Box::new(test), hits: Vec::new() })
    }

    /// [`Session::continue_forward`] with its probe set.
    fn continue_recorded_ahead(&mut self) -> StopReason {
        let start = self.now;
        let mut count = 0u64;
        let mut stretch = 1u64 << 13;
        loop {
            let from = self.now;
            let recorded = self.recorder.len();
            if from < recorded {
                if let Some(stop) = self.first_stop(from, recorded, start) {
                    return stop;
                }
                count += recorded - from;
                if self.interrupted_after(&mut count) {
                    return StopReason::Interrupted;
                }
                continue;
            }
            if self.end.is_some() {
                return self.end_reason();
            }
            // With nothing to stop it, to the end (where the later work-groups may be shared
            // with other cores). With stops, a stretch at a time; once the stretches have
            // grown past `split_after` steps without a stop, to the end too when other cores
            // can share the groups left (each core tests the breakpoints as it records): a
            // stop found then leaves at most the rest of one plain `continue` recorded ahead.
            let stoppers =
                self.breakpoints.iter().any(|b| b.enabled) || self.watchpoints.iter().any(|w| w.enabled);
            let to_the_end = !stoppers || (stretch > self.split_after && self.split_point().is_some());
            let until = if to_the_end { u64::MAX } else { from.saturating_add(stretch) };
            if let Some(stop) = self.record_windows(&mut count, until) {
                return stop;
            }
            // Where windows cannot run (the budget, the step limit or a fault is near, a
            // barrier release, a schedule other than round-robin), single steps: up to where
            // windows may run again, or a stretch.
            if self.now == from {
                let singles = if self.window_recording {
                    self.windows_from.saturating_sub(from).clamp(1, stretch)
                } else {
                    stretch
                };
                while self.now < from + singles && self.forward().is_some() {}
                if self.now == from {
                    return self.end_reason();
                }
            }
            stretch = (stretch * 2).min(1 << 20);
            // The machine is at the end of what was recorded: the search below seeks back
            // into it only to a step it has to check.
            let recorded = self.recorder.len();
            if let Some(stop) = self.first_stop(from, recorded, start) {
                return stop;
            }
            count += recorded - from;
            if self.interrupted_after(&mut count) {
                return StopReason::Interrupted;
            }
        }
    }

    /// The recorded steps in `[from, to)` that may trigger an enabled watchpoint (a superset:
    /// each is checked at its time): writes from the memory and register indexes; for read
    /// and access watchpoints (memory only), the steps of instructions that access memory,
    /// found in the pc column.
    fn watched_steps(&self, from: u64, to: u64) -> Vec<u64> {
        let trace = &self.recorder.trace;
        let mut steps = Vec::new();
        for w in self.watchpoints.iter().filter(|w| w.enabled) {
            match &w.target {
                WatchTarget::Memory { space, addr, len } => {
                    steps.extend(trace.mem_write_steps(*space, *addr, *len, from, to))
                }
                WatchTarget::Register { thread, ranges, .. } => {
                    for &(lo, hi) in ranges {
                        steps.extend(trace.grf_write_steps(*thread, lo, hi - lo, from, to));
                    }
                }
            }
        }
        if self.watchpoints.iter().any(|w| w.enabled && w.kind != WatchKind::Write) {
            steps.extend(trace.steps_at(&self.memory_pcs, from, to));
        }
        steps
    }

    /// The instructions of the enabled breakpoints.
    fn breakpoint_pcs(&self) -> PcSet {
        PcSet::new(self.breakpoints.iter().filter(|b| b.enabled).flat_map(|b| b.pcs.iter().map(|p| p.0)))
    }

    /// True (to stop) when the interrupt flag is set or the progress callback asks to, looked at
    /// each time `count` passes a multiple of [`INTERRUPT_CHECK`] (then reset below it).
    fn interrupted_after(&mut self, count: &mut u64) -> bool {
        if *count < INTERRUPT_CHECK {
            return false;
        }
        *count %= INTERRUPT_CHECK;
        self.poll_interrupt()
    }

    /// The first stop of a `continue` among the recorded steps `[from, to)`, the machine at
    /// any time: a breakpoint before a step (not the step at `start`, where the `continue`
    /// began), or a write watchpoint after one. Without one, moves to `to`.
    fn first_stop(&mut self, from: u64, to: u64, start: u64) -> Option<StopReason> {
        // Candidates as (step, 0 for a breakpoint before it or 1 for a watchpoint after it),
        // in the order they would be met.
        let mut candidates: Vec<(u64, u8)> = Vec::new();
        let pcs = self.breakpoint_pcs();
        if !pcs.is_empty() {
            let trace = &self.recorder.trace;
            let first = from.max(start + 1);
            // Steps recorded in a window with the probe on are candidates only where the probe
            // found a breakpoint's condition to hold; the others, where their pc is one.
            let hits = &self.probe_hits;
            let lo = hits.partition_point(|&h| h < first);
            candidates.extend(hits[lo..].iter().take_while(|&&h| h < to).map(|&h| (h, 0)));
            let mut at = first;
            let gaps = self.probed.iter().copied().chain(std::iter::once((to, to)));
            for (a, b) in gaps {
                if b <= at {
                    continue;
                }
                candidates.extend(trace.steps_at(&pcs, at, a.clamp(at, to)).into_iter().map(|s| (s, 0)));
                at = b.max(at);
                if at >= to {
                    break;
                }
            }
        }
        candidates.extend(self.watched_steps(from, to).into_iter().map(|s| (s, 1)));
        candidates.sort_unstable();
        candidates.dedup();
        for (i, (step, kind)) in candidates.into_iter().enumerate() {
            if i % 4096 == 4095 && self.poll_interrupt() {
                return Some(StopReason::Interrupted);
            }
            let at = step + u64::from(kind);
            self.recorder.seek(&mut self.machine, self.now, at);
            self.now = at;
            if kind == 0 {
                let rec = self.recorder.trace.at(step);
                if let Some(id) = self.breakpoint_at(rec.thread, rec.pc) {
                    self.focus_breakpoint(rec.thread);
                    return Some(StopReason::Breakpoint { id });
                }
            } else if let Some(hit) = self.watch_hit(step, true) {
                self.focus_hit(hit.thread, &hit.lanes);
                return Some(StopReason::Watchpoint(hit));
            }
        }
        self.recorder.seek(&mut self.machine, self.now, to);
        self.now = to;
        None
    }

    /// `continue` one step at a time, each checked as it is made: the reference the tests
    /// hold [`Session::continue_forward`] to.
    pub fn continue_stepwise(&mut self) -> StopReason {
        let mut first = true;
        let mut count = 0u64;
        loop {
            let Some(rec) = self.forward() else { return self.end_reason() };
            let step = self.now - 1;
            if !first && !self.breakpoints.is_empty() {
                if let Some(id) = self.breakpoint_hit_before(&rec, step) {
                    return StopReason::Breakpoint { id };
                }
            }
            first = false;
            if let Some(hit) = self.watch_hit(step, true) {
                self.focus_hit(hit.thread, &hit.lanes);
                return StopReason::Watchpoint(hit);
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
    }

    /// Focuses the thread and the first lane of a watchpoint hit (the lane that made the
    /// access, as a thread channel).
    fn focus_hit(&mut self, thread: u32, lanes: &[u32]) {
        self.focus = ThreadId(thread);
        if let Some(&lane) = lanes.first() {
            self.lane = lane;
        }
    }

    /// Focuses a thread stopped at a breakpoint: on its first lane the instruction runs for,
    /// unless the focused lane is one of them (a condition that named a lane chose it).
    fn focus_breakpoint(&mut self, thread: u32) {
        self.focus = ThreadId(thread);
        let t = self.machine.thread(self.focus);
        let Some(inst) = self.program.insts.get(t.control.pc.0 as usize) else { return };
        let (chen, _, _) = crate::exec::channel_enables(inst, t.control.em, &t.preds);
        let lanes = chen << inst.exec.offset.min(31);
        if lanes != 0 && lanes >> self.lane & 1 == 0 {
            self.lane = lanes.trailing_zeros();
        }
    }

    /// Checks a breakpoint on the step just executed; on a hit, steps back so the stop is
    /// before the instruction runs.
    fn breakpoint_hit_before(&mut self, rec: &StepRecord, step: u64) -> Option<u32> {
        if !self.breakpoints.iter().any(|b| b.enabled && b.pcs.contains(&InstIdx(rec.pc))) {
            return None;
        }
        self.recorder.trace.undo(&mut self.machine, step);
        self.now = step;
        let hit = self.breakpoint_at(rec.thread, rec.pc);
        match hit {
            Some(_) => self.focus_breakpoint(rec.thread),
            None => {
                self.recorder.trace.redo(&mut self.machine, step);
                self.now = step + 1;
            }
        }
        hit
    }

    /// Reverse continue to the previous breakpoint or watchpoint hit: the recording is
    /// searched backwards as `continue` searches it forwards (breakpoint candidates by their
    /// instructions, watched steps), each candidate checked at its time,
    /// the latest first. Read and access watchpoints are checked at memory instructions.
    pub fn continue_backward(&mut self) -> StopReason {
        let to = self.now;
        // (step, 0 for a watchpoint, 1 for a breakpoint): going back, a step's write is met
        // before the breakpoint at its instruction (the old loop's order).
        let mut candidates: Vec<(u64, u8)> = Vec::new();
        candidates.extend(self.watched_steps(0, to).into_iter().map(|s| (s, 0)));
        let pcs = self.breakpoint_pcs();
        if !pcs.is_empty() {
            candidates.extend(self.recorder.trace.steps_at(&pcs, 0, to).into_iter().map(|s| (s, 1)));
        }
        // Latest step first; at one step, the watchpoint first.
        candidates.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        candidates.dedup();
        for (i, (step, kind)) in candidates.into_iter().enumerate() {
            if i % 4096 == 4095 && self.poll_interrupt() {
                return StopReason::Interrupted;
            }
            self.recorder.seek(&mut self.machine, self.now, step);
            self.now = step;
            if kind == 0 {
                if let Some(hit) = self.watch_hit(step, false) {
                    self.focus_hit(hit.thread, &hit.lanes);
                    return StopReason::Watchpoint(hit);
                }
            } else {
                let rec = self.recorder.trace.at(step);
                if let Some(id) = self.breakpoint_at(rec.thread, rec.pc) {
                    self.focus_breakpoint(rec.thread);
                    return StopReason::Breakpoint { id };
                }
            }
        }
        self.recorder.seek(&mut self.machine, self.now, 0);
        self.now = 0;
        StopReason::Start
    }

    /// Reverse continue one step at a time, each checked as it is undone: the reference the
    /// tests hold [`Session::continue_backward`] to.
    pub fn continue_backward_stepwise(&mut self) -> StopReason {
        let mut count = 0u64;
        loop {
            let Some(rec) = self.backward() else { return StopReason::Start };
            if let Some(hit) = self.watch_hit(self.now, false) {
                self.focus_hit(hit.thread, &hit.lanes);
                return StopReason::Watchpoint(hit);
            }
            if !self.breakpoints.is_empty() {
                if let Some(id) = self.breakpoint_at(rec.thread, rec.pc) {
                    self.focus_breakpoint(rec.thread);
                    return StopReason::Breakpoint { id };
                }
            }
            count += 1;
            if self.interrupted(count) {
                return StopReason::Interrupted;
            }
        }
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A breakpoint's comparison resolved for: the breakpoint's index, the unit, the SIMD width.
type ResolvedKey = (usize, UnitId, u32);
