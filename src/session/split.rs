//! Recording on N cores by work-groups, through the driver plain runs use too
//! ([`crate::exec::share`]; its text says why the result is the sequence's): this core
//! records the groups not yet started from the front, one at a time, as it always does,
//! into the session's recording, while the workers record chunks of them from the back, each
//! from a copy of the machine into a recording of its own. The chunks that follow on
//! ([`Order`]), in group order, join the first recording without copying
//! ([`Recorder::join`]), their checkpoints rebased onto the recording's end so far
//! ([`Rebase`]); from the first chunk that does not (or after this core stops early: a
//! fault, the recording budget, an interrupt) this core goes on through the later groups
//! itself, so what is recorded is the same either way.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::frontier::{probe_single, size_window, Pause};
use super::{EndState, Session, StopReason};
use crate::exec::{share, Chunk, Claims, Interpreter, Order, Scheduler, MIN_SPLIT_GROUPS};
use crate::machine::{Accesses, Machine};
use crate::trace::{record_step, record_window, Batch, Probe, Rebase, Recorder, Single, Window, MAX_STEPS};

/// The work-groups the cores share and the recording budget.
pub(super) struct Shared {
    claims: Claims,
    /// Every group's threads (the scheduler's list before it was cut).
    groups: Vec<Range<u32>>,
    /// The recording budget the cores share: the whole run's, the first core's bytes
    /// (everything recorded before the split too) and each worker's, each published as the
    /// core sizes a window. Each core may use what the others have not (a fixed share each
    /// sent a core step by step while another had room: 0.5 s against 0.3 s for Collatz
    /// under a budget 15% above what it needs).
    limit: u64,
    first_bytes: AtomicU64,
    worker_bytes: Vec<AtomicU64>,
}

impl Shared {
    /// The first core's budget, now that it has recorded `bytes` in all.
    pub(super) fn first_budget(&self, bytes: u64) -> u64 {
        self.first_bytes.store(bytes, Ordering::Relaxed);
        self.limit.saturating_sub(self.others(None))
    }

    /// Worker `w`'s budget for a chunk's own bytes, its earlier chunks having taken `done`
    /// and the current one `bytes` so far.
    fn worker_budget(&self, w: usize, done: u64, bytes: u64) -> u64 {
        self.worker_bytes[w].store(done + bytes, Ordering::Relaxed);
        self.limit.saturating_sub(self.first_bytes.load(Ordering::Relaxed) + self.others(Some(w)) + done)
    }

    /// The bytes the workers other than `but` have published.
    fn others(&self, but: Option<usize>) -> u64 {
        let bytes = self.worker_bytes.iter().enumerate().filter(|&(w, _)| Some(w) != but);
        bytes.map(|(_, b)| b.load(Ordering::Relaxed)).sum()
    }

    /// The next group from the front, with its threads.
    pub(super) fn front(&self) -> Option<(usize, Range<u32>)> {
        self.claims.front().map(|group| (group, self.groups[group].clone()))
    }
}

/// What a worker recorded of a chunk (its end state is its last checkpoint): the
/// recording, how many steps it holds, and the bytes it accessed.
struct Later {
    recorder: Recorder,
    steps: u64,
    window_steps: u64,
    accesses: Accesses,
    /// With a probe: the steps it held before and the steps it tested (its windows), both
    /// numbered from the chunk's first step.
    hits: Vec<u64>,
    probed: Vec<(u64, u64)>,
}

impl Session {
    /// The first work-group not yet started, when recording on several cores by groups may
    /// be tried from it.
    pub(super) fn split_point(&self) -> Option<usize> {
        if self.cores < 2 || !self.split_groups || self.split_tried {
            return None;
        }
        let groups = &self.sched.groups;
        let first = self.sched.current_group + 1;
        let at = groups.get(first)?.start;
        // The later groups' threads must follow the earlier groups' in group order (as
        // launches lay them out), for a rebased machine takes the threads below its chunk's
        // first from the recording's end.
        let ordered = groups[..first].iter().all(|g| g.end <= at)
            && groups[first..].windows(2).all(|w| w[0].end <= w[1].start);
        (groups.len() - first >= MIN_SPLIT_GROUPS && ordered).then_some(first)
    }

    /// Records from the frontier with groups from `first` on shared out with the other cores
    /// (see the module's text). Returns as [`Session::record_windows`] does.
    pub(super) fn record_split(&mut self, count: &mut u64, first: usize) -> Option<StopReason> {
        self.split_tried = true;
        let start = self.machine.clone();
        let interp = self.interp.clone();
        let interval = self.recorder.checkpoints.interval;
        // The cores share the budget left (`Shared::first_budget`, `worker_budget`).
        // No more workers than groups this core may leave them (`split_point`: two at least).
        let helpers = (self.cores - 1).min(self.sched.groups.len() - first - 1).max(1);
        let shared = Shared {
            claims: Claims::new(first..self.sched.groups.len(), helpers),
            groups: self.sched.groups.clone(),
            limit: self.record_limit,
            first_bytes: AtomicU64::new(self.recorder.recorded_bytes()),
            worker_bytes: (0..helpers).map(|_| AtomicU64::new(0)).collect(),
        };
        let base = self.sched.clone();
        self.sched.groups.truncate(first);
        // Only what this core's groups wrote is checked against (`Order`). A lean recording
        // logs no values, so its chunks may update what earlier groups did by atomics that
        // fold (the join lays their updates onto the earlier values, `Rebase::folding`).
        let noted = Accesses::writes_only();
        let noted = if self.lean_recording { noted.folding() } else { noted };
        self.machine.svm.accesses = Some(Box::new(noted));
        let stop = AtomicBool::new(false);
        // A `continue`'s breakpoints are tested on every core as it records.
        let workers: Vec<_> = (0..helpers)
            .map(|id| {
                let probe = self.probe.as_ref().and_then(|_| self.breakpoint_probe());
                {
                    let mut batch = Batch::default();
                    batch.lean = self.lean_recording;
                    Worker { id, batch, probe, done: 0 }
                }
            })
            .collect();
        let lean = self.lean_recording;
        let setup = Setup { interp: &interp, start: &start, base: &base, interval, lean, stop: &stop };
        let mut trace = std::mem::take(&mut self.recorder.trace);
        let front = || {
            let pause = self.record_frontier(&mut trace, count, Some(&shared));
            if !matches!(pause, Pause::GroupsDone) {
                stop.store(true, Ordering::Relaxed);
            }
            pause
        };
        let (pause, chunks) = share(&shared.claims, &stop, workers, front, |worker, groups| {
            setup.record(worker, groups, &shared)
        });
        self.recorder.trace = trace;
        let accesses = self.machine.svm.accesses.take();
        // Where this core stopped taking groups: the first chunk's start, when it took all
        // the groups before the chunks.
        let resume = self.sched.groups.len();
        self.sched.groups = shared.groups;
        if let (Pause::GroupsDone, Some(earlier)) = (&pause, accesses) {
            let next = self.join_chunks(chunks, &start, *earlier, resume);
            if next == self.sched.groups.len() {
                // With its end checkpoint (one a chunk took there already, when one joined).
                self.mark_end(EndState::Finished, self.now);
            }
            // This core goes on from the first group no chunk joined with (at the end, past
            // the last group: the run is finished).
            self.sched.start_group(next);
            return None;
        }
        match pause {
            Pause::GroupsDone | Pause::Stepwise => None,
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

    /// Joins the workers' chunks after this core's recording, in group order, as long as
    /// each ran as it would have after the groups before it ([`runs_after`]) and the
    /// steps fit the index and the step limit. `earlier`: what this core wrote; `next`: the
    /// first group it did not record. Returns the first group no chunk joined with.
    fn join_chunks(
        &mut self,
        chunks: Vec<Chunk<Later>>,
        start: &Machine,
        earlier: Accesses,
        next: usize,
    ) -> usize {
        let mut order = Order::new(earlier, next);
        for Chunk { groups, done } in chunks {
            let Some(later) = done else { break };
            let limit = self.sched.step_limit;
            let fits = order.follows(&groups, &later.accesses)
                && self.recorder.len() + later.recorder.len() < MAX_STEPS
                && (limit == 0 || self.sched.steps + later.steps <= limit);
            if !fits {
                break;
            }
            order.take(&groups, &later.accesses);
            let base = self.recorder.len();
            self.probe_hits.extend(later.hits.iter().map(|h| base + h));
            self.probed.extend(later.probed.iter().map(|&(a, b)| (base + a, base + b)));
            let first_thread = self.sched.groups[groups.start].start as usize;
            let end = std::mem::take(&mut self.machine);
            let mut rebase =
                Rebase::new(start, &end, first_thread, groups.start).folding(later.accesses.folds.clone());
            self.recorder.join(later.recorder, &mut rebase);
            // The chunk's end is its last checkpoint.
            self.machine = self.recorder.checkpoints.list.last().map(|c| c.machine()).unwrap_or_default();
            self.sched.steps += later.steps;
            self.now = self.recorder.len();
            self.window_steps += later.window_steps;
        }
        order.next()
    }
}

/// A worker's own: its number, staging buffers grown once for all its chunks, a
/// `continue`'s breakpoints (tested as it records) and the bytes its chunks took so far.
struct Worker {
    id: usize,
    batch: Batch,
    probe: Option<Probe<'static>>,
    done: u64,
}

/// What the workers share: the machine and scheduler each chunk starts from, and how the
/// session records.
struct Setup<'a> {
    interp: &'a Interpreter,
    start: &'a Machine,
    base: &'a Scheduler,
    interval: u64,
    /// Lean recordings: atomics that fold are noted as such.
    lean: bool,
    stop: &'a AtomicBool,
}

impl Setup<'_> {
    /// The recording of work-groups `groups` by `worker`, from a copy of the start, in
    /// windows as the first core records them, within the budget the cores share. None when
    /// it could not record them all (a fault, the budget, the index's step range) or was
    /// told to stop.
    fn record(&self, worker: &mut Worker, groups: Range<usize>, shared: &Shared) -> Option<Later> {
        let Worker { id, batch, probe, done } = worker;
        let mut machine = self.start.clone();
        let mut sched = self.base.clone();
        sched.groups.truncate(groups.end);
        sched.start_group(groups.start);
        let noted = if self.lean { Accesses::default().folding() } else { Accesses::default() };
        machine.svm.accesses = Some(Box::new(noted));
        let steps_before = sched.steps;
        let mut recorder = Recorder::new(&machine, &sched);
        recorder.checkpoints.interval = self.interval;
        let mut window_steps = 0;
        let (mut hits, mut probed) = (Vec::new(), Vec::new());
        while !self.stop.load(Ordering::Relaxed) {
            let time = recorder.len();
            let Recorder { trace, checkpoints } = &mut recorder;
            // Its first checkpoint is the copy it started from, which shares what it holds
            // with this core's machine and is not kept when the chunk joins.
            let budget = shared.worker_budget(*id, *done, trace.bytes() + checkpoints.bytes_after_first());
            let size = size_window(&machine, &sched, checkpoints, time, (trace.bytes(), budget), true);
            if !size.fits {
                return None;
            }
            batch.from = checkpoints.at(time);
            match record_window(self.interp, &mut machine, &mut sched, size.rounds, batch, probe.as_mut()) {
                Window::Recorded(n) => {
                    window_steps += n;
                    trace.append_batch(batch);
                    if let Some(p) = probe.as_mut() {
                        hits.extend(p.hits.drain(..).map(|offset| time + offset));
                        probed.push((time, time + n));
                    }
                    continue;
                }
                Window::Boundary => {}
                Window::Failed => return None,
            }
            match record_step(self.interp, &mut machine, &mut sched, checkpoints, time, batch) {
                Single::Recorded(None) => {
                    trace.append_batch(batch);
                    probe_single(probe.as_ref(), batch, time, &mut hits, &mut probed);
                }
                Single::Finished => {
                    checkpoints.take_at_end(&machine, &sched, time);
                    let mut accesses = *machine.svm.accesses.take()?;
                    accesses.normalize();
                    let steps = sched.steps - steps_before;
                    *done += recorder.trace.bytes() + recorder.checkpoints.bytes_after_first();
                    return Some(Later { recorder, steps, window_steps, accesses, hits, probed });
                }
                Single::Recorded(Some(_)) | Single::Stopped(_) => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_core_may_use_the_budget_the_others_have_not() {
        let shared = Shared {
            claims: Claims::new(3..103, 2),
            groups: (0..103).map(|g| g * 4..g * 4 + 4).collect(),
            limit: 1000,
            first_bytes: AtomicU64::new(100),
            worker_bytes: (0..2).map(|_| AtomicU64::new(0)).collect(),
        };
        assert_eq!(shared.worker_budget(0, 50, 20), 850);
        assert_eq!(shared.worker_budget(1, 0, 30), 830);
        assert_eq!(shared.first_budget(300), 900);
        assert_eq!(shared.worker_budget(0, 50, 40), 620);
        // The front takes groups in order, with their threads.
        assert_eq!(shared.front(), Some((3, 12..16)));
        assert_eq!(shared.front(), Some((4, 16..20)));
    }
}
