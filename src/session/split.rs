//! Recording on two cores by work-groups: the first core records the groups up to a split
//! point as it always does, while a second core records the rest from a copy of the machine
//! into a recording of its own. Groups run one after another, so the run is the first core's
//! steps followed by the second's, provided the later groups read no SVM byte the earlier
//! ones wrote after the copy was taken, and wrote none of those bytes either (so that the
//! old bytes in their log are right): both cores note the bytes they access, and the check
//! is made when both are done. Registers and SLM belong to one group. When it passes, the
//! second recording joins the first without copying ([`Recorder::join`]), its checkpoints
//! rebased onto the first core's end ([`Rebase`]); when it fails, or either core stops
//! early (a fault, the recording budget, an interrupt), the second core's work is dropped
//! and the first core goes on through the later groups itself, so what is recorded is the
//! same either way.

use std::sync::atomic::{AtomicBool, Ordering};

use super::frontier::{size_window, Pause, Sink};
use super::{EndState, Session, StopReason};
use crate::exec::{Interpreter, Scheduler};
use crate::machine::{Accesses, Machine};
use crate::trace::{record_step, record_window, Batch, Rebase, Recorder, Single, Window, MAX_STEPS};

/// Fewer work-groups than this not yet started: not worth a second core.
const MIN_SPLIT_GROUPS: usize = 8;

/// What the second core recorded (its end state is its last checkpoint), and the bytes it
/// accessed.
struct Later {
    recorder: Recorder,
    sched: Scheduler,
    window_steps: u64,
    accesses: Accesses,
}

impl Session {
    /// The work-group a second core would record from: the middle of the groups not yet
    /// started, when recording on two cores by groups may be tried.
    pub(super) fn split_point(&self) -> Option<usize> {
        if !self.two_cores || !self.split_groups || self.split_tried {
            return None;
        }
        let groups = &self.sched.groups;
        let first = self.sched.current_group + 1;
        let left = groups.len().saturating_sub(first);
        let split = first + left / 2;
        // The later groups' threads must all follow the earlier groups' (as launches lay
        // them out), for the rebased machines take the threads below the split's first.
        let at = groups.get(split)?.start;
        let apart =
            groups[..split].iter().all(|g| g.end <= at) && groups[split..].iter().all(|g| g.start >= at);
        (left >= MIN_SPLIT_GROUPS && apart).then_some(split)
    }

    /// Records from the frontier with groups `split..` on a second core (see the module's
    /// text). Returns as [`Session::record_windows`] does.
    pub(super) fn record_split(&mut self, count: &mut u64, split: usize) -> Option<StopReason> {
        self.split_tried = true;
        let start = self.machine.clone();
        let first_thread = self.sched.groups[split].start as usize;
        let mut later_sched = self.sched.clone();
        later_sched.start_group(split);
        let steps_before = later_sched.steps;
        let interp = self.interp.clone();
        let (grf_size, interval) = (self.program.grf_size, self.recorder.checkpoints.interval);
        // Each core gets half of the budget left.
        let limit = self.record_limit;
        let budget = limit.saturating_sub(self.recorder.recorded_bytes()) / 2;
        self.record_limit = limit - budget;
        let rest = self.sched.groups.split_off(split);
        self.machine.svm.accesses = Some(Box::default());
        let stop = AtomicBool::new(false);
        let mut trace = std::mem::take(&mut self.recorder.trace);
        let (pause, later) = std::thread::scope(|scope| {
            let later = scope.spawn(|| {
                record_later(&interp, start.clone(), later_sched, grf_size, interval, budget, &stop)
            });
            let pause = self.record_frontier(&mut Sink::Here(&mut trace), count, true);
            if !matches!(pause, Pause::GroupsDone) {
                stop.store(true, Ordering::Relaxed);
            }
            match later.join() {
                Ok(later) => (pause, later),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        self.recorder.trace = trace;
        self.record_limit = limit;
        let accesses = self.machine.svm.accesses.take();
        self.sched.groups.extend(rest);
        if let (Pause::GroupsDone, Some(later), Some(earlier)) = (&pause, later, accesses) {
            if self.fits_after(&later, *earlier, steps_before) {
                self.join_later(later, &start, first_thread, split, steps_before);
                return None;
            }
        }
        match pause {
            // The first core goes on from the split's first group.
            Pause::GroupsDone => {
                self.sched.start_group(split);
                None
            }
            Pause::Stepwise => None,
            Pause::Interrupted => {
                // Nothing failed: a later `continue` may try again.
                self.split_tried = false;
                Some(StopReason::Interrupted)
            }
            Pause::Faulted => {
                self.recorder.restore(&mut self.machine, self.now);
                None
            }
        }
    }

    /// Whether the second core's groups ran as they would have after the first core's (see
    /// [`runs_after`]), and the steps fit the index and the step limit (the second core
    /// counted its steps from the split, not from the first core's end).
    fn fits_after(&self, later: &Later, earlier: Accesses, steps_before: u64) -> bool {
        runs_after(earlier, &later.accesses)
            && self.recorder.len() + later.recorder.len() < MAX_STEPS
            && (self.sched.step_limit == 0
                || self.sched.steps + (later.sched.steps - steps_before) <= self.sched.step_limit)
    }

    /// Makes the second core's recording the rest of this one, and its end the frontier.
    fn join_later(
        &mut self,
        later: Later,
        start: &Machine,
        first_thread: usize,
        split: usize,
        steps_before: u64,
    ) {
        let Later { recorder, mut sched, window_steps, .. } = later;
        let end = std::mem::take(&mut self.machine);
        self.end = Some(EndState::Finished);
        let mut rebase = Rebase::new(start, &end, first_thread, split);
        self.recorder.join(recorder, &mut rebase);
        // The second core's end is its last checkpoint.
        self.machine = self.recorder.checkpoints.list.last().map(|c| c.machine.clone()).unwrap_or_default();
        sched.steps = self.sched.steps + (sched.steps - steps_before);
        self.sched = sched;
        self.now = self.recorder.len();
        self.window_steps += window_steps;
    }
}

/// Whether steps that made the accesses `later` read the memory they would have read after
/// steps that made `earlier`, and left their log's old bytes right: they read and wrote no
/// byte that `earlier` wrote (atomics note both).
fn runs_after(earlier: Accesses, later: &Accesses) -> bool {
    let mut written = earlier.writes;
    written.normalize();
    let (mut reads, mut writes) = (later.reads.clone(), later.writes.clone());
    reads.normalize();
    writes.normalize();
    !reads.intersects(&written) && !writes.intersects(&written)
}

/// The second core's recording: `sched`'s groups from its current one to the end, on
/// `machine`, in windows as the first core records them. None when it could not record them
/// all (a fault, the budget, the index's step range) or was told to stop.
fn record_later(
    interp: &Interpreter,
    mut machine: Machine,
    mut sched: Scheduler,
    grf_size: u32,
    interval: u64,
    budget: u64,
    stop: &AtomicBool,
) -> Option<Later> {
    machine.svm.accesses = Some(Box::default());
    let mut recorder = Recorder::new(&machine, grf_size);
    recorder.checkpoints.interval = interval;
    let mut batch = Batch::default();
    let mut window_steps = 0;
    while !stop.load(Ordering::Relaxed) {
        let time = recorder.len();
        let Recorder { trace, checkpoints } = &mut recorder;
        let size = size_window(&machine, &sched, checkpoints, time, trace.bytes(), budget);
        if !size.fits {
            return None;
        }
        let rounds = size.rounds;
        match record_window(interp, &mut machine, &mut sched, rounds, &mut batch) {
            Window::Recorded(n) => {
                window_steps += n;
                trace.append_batch(&batch);
                continue;
            }
            Window::Boundary => {}
            Window::Failed => return None,
        }
        match record_step(interp, &mut machine, &mut sched, checkpoints, time, &mut batch) {
            Single::Recorded(None) => trace.append_batch(&batch),
            Single::Finished => {
                checkpoints.take_at_end(&machine, time);
                let accesses = *machine.svm.accesses.take()?;
                return Some(Later { recorder, sched, window_steps, accesses });
            }
            Single::Recorded(Some(_)) | Single::Stopped(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accesses(reads: &[(u64, u64)], writes: &[(u64, u64)]) -> Accesses {
        let mut a = Accesses::default();
        reads.iter().for_each(|&(at, n)| a.reads.add(at, n));
        writes.iter().for_each(|&(at, n)| a.writes.add(at, n));
        a
    }

    #[test]
    fn later_groups_fit_when_they_touch_nothing_the_earlier_ones_wrote() {
        // Earlier groups wrote [0x100, 0x140) and [0x400, 0x404), noted out of order.
        let earlier = || accesses(&[(0x1000, 64)], &[(0x400, 4), (0x100, 64)]);
        // Reading what the earlier groups only read, writing elsewhere: fits.
        assert!(runs_after(earlier(), &accesses(&[(0x1000, 64), (0x140, 16)], &[(0x200, 64), (0x404, 4)])));
        // Reading one byte the earlier groups wrote: the later groups saw other memory.
        assert!(!runs_after(earlier(), &accesses(&[(0x800, 4), (0x13f, 1)], &[])));
        // Writing one: their log's old bytes would be the start's, not the earlier groups'.
        assert!(!runs_after(earlier(), &accesses(&[], &[(0x3fd, 4)])));
    }
}
