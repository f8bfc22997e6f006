//! Recording at the frontier in burst windows: each window's steps are staged
//! ([`record_window`]) and appended to the trace ([`Trace::append_batch`]), and the steps
//! between windows (barrier releases, group starts) one at a time. The trace then is the one
//! stepping one instruction at a time would make. A session records lean by default
//! ([`Batch::lean`]): the trace keeps the write indexes, each thread's span and the count of
//! steps, and the checkpoints keep the state; a stretch's records and log are made by
//! recording it again from its checkpoint ([`record_again`]) when a command reads it.
//!
//! With several cores, the first recording of a run's later work-groups shares them: the
//! other cores record chunks of them on machines of their own while this one records the
//! earlier groups (`session::split`).

use std::sync::{Arc, Mutex};

use super::split::Shared;
use super::{Session, StopReason};
use crate::exec::{Interpreter, Scheduler};
use crate::machine::Machine;
use crate::trace::{
    record_step, record_window, Batch, Checkpoint, Checkpoints, Probe, Recorder, Rerun, Single, Trace, Window,
};

/// How often long movements look at the interrupt flag.
pub(super) const INTERRUPT_CHECK: u64 = 1 << 14;

/// Bytes a window is assumed to take per step: four times what the run recorded per step so
/// far, at most 4 KiB (a step writes a few KiB at most). Near the budget (or the step
/// limit) windows shrink to the rounds that fit, so a recording keeps its speed to the edge:
/// a fixed 64 MiB reserve sent the last 27 MB of a 243 MB Collatz recording under a 280 MB
/// budget step by step (0.27 s with room to spare, 1.55 s there).
const STEP_BYTES_MAX: u64 = 4 << 10;

/// With a probe on, a single step recorded at `time` (a batch of one) is tested as the
/// windows' steps are: a candidate in `hits` where its instruction is one of the probe's
/// (the breakpoints' conditions are tested at its time), and in `probed` in any case, so
/// that finding a stop reads no part of the recording but those holding candidates.
pub(super) fn probe_single(
    probe: Option<&Probe>,
    batch: &Batch,
    time: u64,
    hits: &mut Vec<u64>,
    probed: &mut Vec<(u64, u64)>,
) {
    if let Some(p) = probe {
        if batch.only_pc().is_some_and(|pc| p.pcs.contains(pc)) {
            hits.push(time);
        }
        probed.push((time, time + 1));
    }
}

/// Why recording windows paused.
pub(super) enum Pause {
    /// The run ended, or the budget or a limit is near: the caller goes on step by step.
    Stepwise,
    Interrupted,
    /// A thread faulted inside a window, which left the machine partway through it.
    Faulted,
    /// Every group the scheduler was cut to has finished, and no other is left to claim
    /// (`record_frontier`'s `claims`).
    GroupsDone,
}

/// The next window's size ([`size_window`]).
pub(super) struct WindowSize {
    pub rounds: u64,
    /// Its steps at most: `rounds` of the current group's threads.
    pub most: u64,
    /// False near the recording budget, the index's step range or the step limit, which
    /// are checked step by step: there, steps go one at a time.
    pub fits: bool,
}

/// Takes the checkpoint due at `time` (the state `machine` and `sched` stand at), and sizes
/// the next window to end where the next checkpoint is due (at most a round later), so that
/// checkpoints stay `interval` steps apart and seeks replay no more. `trace_bytes` of
/// `budget` are recorded apart from the checkpoints; `copy`: the recording started from a
/// copy of another core's machine, whose first checkpoint is not counted.
pub(super) fn size_window(
    machine: &Machine,
    sched: &Scheduler,
    checkpoints: &mut Checkpoints,
    time: u64,
    (trace_bytes, budget): (u64, u64),
    copy: bool,
) -> WindowSize {
    let group = sched.groups.get(sched.current_group).map_or(1, |g| g.len() as u64).max(1);
    checkpoints.take_if_due(machine, sched, time);
    let held = if copy { checkpoints.bytes_after_first() } else { checkpoints.bytes() };
    let bytes = trace_bytes + held;
    let per_step = (4 * bytes / time.max(1)).clamp(64, STEP_BYTES_MAX);
    // Rounds the budget, the index's step range and the step limit leave room for.
    let room_steps = [
        budget.saturating_sub(bytes) / per_step,
        crate::trace::MAX_STEPS.saturating_sub(time + 1),
        if sched.step_limit == 0 { u64::MAX } else { sched.step_limit.saturating_sub(sched.steps + 1) },
    ];
    let room = room_steps.into_iter().min().unwrap_or(0) / group;
    let rounds = (checkpoints.due_in(time) / group).max(1).min(room);
    WindowSize { rounds: rounds.max(1), most: rounds.max(1) * group, fits: rounds >= 1 }
}

impl Session {
    /// At the frontier, records burst windows for as long as they can run, up to
    /// `until` (passed by one window at most). Returns a stop only when interrupted;
    /// otherwise the caller goes on step by step (near the recording budget, the step limit
    /// or the end), and calls again.
    pub(super) fn record_windows(&mut self, count: &mut u64, until: u64) -> Option<StopReason> {
        if !self.window_recording
            || self.now != self.recorder.len()
            || self.end.is_some()
            || self.now < self.windows_from
            || self.now >= until
        {
            return None;
        }
        // Sharing the later work-groups with the other cores records them all: only for a
        // recording to the end.
        if let Some(split) = self.split_point().filter(|_| until == u64::MAX) {
            return self.record_split(count, split);
        }
        self.windows_until = until;
        let stop = self.record_windows_here(count);
        self.windows_until = u64::MAX;
        stop
    }

    /// [`Session::record_windows`] on this machine.
    fn record_windows_here(&mut self, count: &mut u64) -> Option<StopReason> {
        let mut trace = std::mem::take(&mut self.recorder.trace);
        let pause = self.record_frontier(&mut trace, count, None);
        self.recorder.trace = trace;
        match pause {
            Pause::Stepwise | Pause::GroupsDone => None,
            Pause::Interrupted => Some(StopReason::Interrupted),
            Pause::Faulted => {
                self.recorder.restore(&mut self.machine, self.now);
                None
            }
        }
    }

    /// Runs windows, and the single steps between them, into `trace`. With `claims`, the
    /// scheduler's groups were cut short (the rest are shared with another core): once it is
    /// on its last group, the next is taken from `claims` and added to its list, so that it
    /// moves on to it as it moves to any group (windows, and the checkpoints they end at,
    /// fall where they would with every group listed); running out of groups then pauses
    /// instead of ending the run.
    pub(super) fn record_frontier(
        &mut self,
        trace: &mut Trace,
        count: &mut u64,
        claims: Option<&Shared>,
    ) -> Pause {
        let mut probe = self.probe.take();
        let pause = self.record_frontier_probed(trace, count, claims, &mut probe);
        self.probe = probe;
        pause
    }

    /// [`Session::record_frontier`] with the session's probe taken out of it.
    fn record_frontier_probed(
        &mut self,
        trace: &mut Trace,
        count: &mut u64,
        claims: Option<&Shared>,
        probe: &mut Option<Probe<'static>>,
    ) -> Pause {
        let mut claiming = claims;
        while self.end.is_none() && self.now < self.windows_until {
            let time = self.now;
            if let Some(claims) = claiming.filter(|_| self.sched.current_group + 1 >= self.sched.groups.len())
            {
                match claims.front() {
                    Some((group, threads)) => {
                        // Taken in order: the next group in the scheduler's list.
                        debug_assert_eq!(group, self.sched.groups.len());
                        self.sched.groups.push(threads);
                    }
                    None => claiming = None,
                }
            }
            let mut batch = self.spare_batches.pop().unwrap_or_default();
            batch.lean = self.lean_recording;
            let mut staged = None;
            if time >= self.windows_from {
                let checkpoints = &mut self.recorder.checkpoints;
                let trace_bytes = trace.bytes();
                let budget = match claims {
                    Some(c) => c.first_budget(trace_bytes + checkpoints.bytes()),
                    None => self.record_limit,
                };
                let WindowSize { rounds, most, fits } =
                    size_window(&self.machine, &self.sched, checkpoints, time, (trace_bytes, budget), false);
                if !fits {
                    self.windows_from = time + most;
                    self.spare_batches.push(batch);
                    return Pause::Stepwise;
                }
                batch.from = checkpoints.at(time);
                let probing = probe.as_mut();
                match record_window(
                    &self.interp,
                    &mut self.machine,
                    &mut self.sched,
                    rounds,
                    &mut batch,
                    probing,
                ) {
                    Window::Recorded(n) => {
                        self.window_steps += n;
                        staged = Some(n);
                        if let Some(p) = probe.as_mut() {
                            self.probe_hits.extend(p.hits.drain(..).map(|offset| time + offset));
                            self.probed.push((time, time + n));
                        }
                    }
                    // One step releases the barrier or starts the next group.
                    Window::Boundary => self.windows_from = time + 1,
                    // A fault lies within the window's steps: once the machine is restored,
                    // those go one by one.
                    Window::Failed => {
                        self.windows_from = time + most;
                        self.spare_batches.push(batch);
                        return Pause::Faulted;
                    }
                }
            }
            let n = match staged {
                Some(n) => n,
                None => {
                    let checkpoints = &mut self.recorder.checkpoints;
                    let single = record_step(
                        &self.interp,
                        &mut self.machine,
                        &mut self.sched,
                        checkpoints,
                        time,
                        &mut batch,
                    );
                    if single == Single::Finished && claims.is_some() {
                        // The groups left are another core's: not the end of the run.
                        self.spare_batches.push(batch);
                        return Pause::GroupsDone;
                    }
                    if !self.single_ends(single) {
                        self.spare_batches.push(batch);
                        break;
                    }
                    probe_single(probe.as_ref(), &batch, time, &mut self.probe_hits, &mut self.probed);
                    1
                }
            };
            self.now += n;
            trace.append_batch(&batch);
            self.spare_batches.push(batch);
            let before = *count;
            *count += n;
            if before / INTERRUPT_CHECK != *count / INTERRUPT_CHECK && self.poll_interrupt() {
                return Pause::Interrupted;
            }
        }
        Pause::Stepwise
    }
}

impl Session {
    /// The steps from checkpoint `k` to the next one (or to the end of the recording) run
    /// again from that checkpoint's machine and scheduler and recorded into a recording of
    /// their own, numbered from the checkpoint: what a part whose body was dropped is
    /// recorded again with ([`record_again`]). None when there is no checkpoint `k`, or the
    /// steps do not run as recorded.
    pub fn rerecord_stretch(&self, k: usize) -> Option<Recorder> {
        let list = &self.recorder.checkpoints.list;
        let ck = list.get(k)?;
        let len = list.get(k + 1).map_or(self.recorder.len(), |next| next.time) - ck.time;
        let (interp, base) = (&self.interp, &self.start.1);
        record_again(interp, base, self.window_recording, ck, len, &mut Batch::default())
    }
}

/// The function a session's trace records a dropped part again with ([`Trace::set_rerun`]).
pub(super) fn rerun(interp: Interpreter, base: Scheduler, windows: bool) -> Arc<Rerun> {
    // Batches kept from one recording again to the next, their stages' logs and lists grown.
    let spare = Mutex::new(Vec::<Batch>::new());
    Arc::new(move |ck: &Checkpoint, len: u64| {
        let mut batch = spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_default();
        let again = record_again(&interp, &base, windows, ck, len, &mut batch);
        if let Ok(mut s) = spare.lock() {
            s.push(batch);
        }
        again.map(|recorder| recorder.trace)
    })
}

/// Records the `len` steps that follow checkpoint `ck` of a launch whose scheduler started
/// as `base`, in burst windows where `windows` allows, into a recording of their own with
/// one checkpoint, `ck`'s machine at time 0. None when they do not run as `len` steps.
fn record_again(
    interp: &Interpreter,
    base: &Scheduler,
    windows: bool,
    ck: &Checkpoint,
    len: u64,
    batch: &mut Batch,
) -> Option<Recorder> {
    let mut machine = ck.machine();
    let mut sched = base.clone();
    sched.resume(&ck.sched);
    (sched.steps, sched.step_limit) = (0, 0);
    let mut recorder = Recorder::resume(ck, len);
    while recorder.len() < len {
        let time = recorder.len();
        let Recorder { trace, checkpoints } = &mut recorder;
        let group = sched.groups.get(sched.current_group).map_or(1, |g| g.len() as u64).max(1);
        let rounds = (len - time) / group;
        if windows && rounds > 0 {
            batch.from = checkpoints.at(time);
            match record_window(interp, &mut machine, &mut sched, rounds, batch, None) {
                Window::Recorded(_) => {
                    trace.append_batch(batch);
                    continue;
                }
                Window::Boundary => {}
                // A thread faults inside the window, which left the machine partway: the
                // stretch again, one step at a time (the frontier steps to a fault likewise).
                Window::Failed => return record_again(interp, base, false, ck, len, batch),
            }
        }
        match record_step(interp, &mut machine, &mut sched, checkpoints, time, batch) {
            Single::Recorded(_) => trace.append_batch(batch),
            Single::Finished | Single::Stopped(_) => return None,
        }
    }
    Some(recorder)
}
