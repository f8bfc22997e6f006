//! Recording at the frontier in burst windows, on two cores: this core runs the machine and
//! stages each window's steps ([`record_window`]) while a second core appends earlier batches
//! to the trace ([`Trace::append_batch`]), in the order they were staged. The trace then is
//! the one stepping one instruction at a time would make.
//!
//! Checkpoints stay on this core (they share the live machine's `Rc`s); everything the trace
//! holds is plain data. The steps between windows (barrier releases, group starts) are staged
//! one at a time on this core and go through the same queue, so the queue drains only when
//! windows stop: at the end, an interrupt, a window in which a thread faults, or near the
//! recording budget or the step limit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use super::{EndState, Session, StopReason};
use crate::trace::{record_step, record_window, Batch, Recorder, Single, Trace, Window};

/// How often long movements look at the interrupt flag.
pub(super) const INTERRUPT_CHECK: u64 = 1 << 14;

/// Recording budget left free while windows run, for the next window's steps (a step
/// writes a few KiB at most and a window holds a checkpoint interval of steps, 2048 by
/// default).
const WINDOW_RESERVE: u64 = 64 << 20;

/// Steps a bundle of batches holds before it goes to the appending core: each hand-over
/// wakes that core, which costs microseconds.
const BUNDLE_STEPS: u64 = 16 << 10;

/// Bundles queued for the appending core.
const IN_FLIGHT: usize = 2;

/// Where staged batches go: appended here, or bundled and queued for the appending core.
enum Sink<'a> {
    Here(&'a mut Trace),
    Queue {
        to: mpsc::SyncSender<Vec<Batch>>,
        back: &'a mpsc::Receiver<Vec<Batch>>,
        bundle: Vec<Batch>,
        bundle_steps: u64,
        /// Estimated bytes of the batches handed over, and of those appended.
        sent: u64,
        appended: &'a AtomicU64,
        /// The trace's bytes as of the last bundle appended.
        bytes: &'a AtomicU64,
    },
}

impl Sink<'_> {
    /// Hands a batch over; returns batches whose buffers can be reused.
    fn deliver(&mut self, batch: Batch, spare: &mut Vec<Batch>) {
        match self {
            Sink::Here(trace) => {
                trace.append_batch(&batch);
                spare.push(batch);
            }
            Sink::Queue { bundle, bundle_steps, sent, .. } => {
                *bundle_steps += batch.steps();
                *sent += batch.bytes_estimate();
                bundle.push(batch);
                if *bundle_steps >= BUNDLE_STEPS {
                    self.flush(spare);
                }
            }
        }
    }

    /// Sends the bundle being filled, and takes back the batches of appended ones.
    fn flush(&mut self, spare: &mut Vec<Batch>) {
        if let Sink::Queue { to, back, bundle, bundle_steps, .. } = self {
            if !bundle.is_empty() {
                // A send fails only when the appending core stopped (it panicked); the scope
                // that joins it reports that.
                let _ = to.send(std::mem::take(bundle));
                *bundle_steps = 0;
            }
            for mut done in back.try_iter() {
                spare.append(&mut done);
            }
        }
    }

    /// The recording's bytes apart from checkpoints, counting batches not yet appended.
    fn trace_bytes(&self) -> u64 {
        match self {
            Sink::Here(trace) => trace.bytes(),
            Sink::Queue { sent, appended, bytes, .. } => {
                // `appended` first: a bundle appended after it is then counted twice at worst
                // (in `bytes` and as not yet appended), never missed.
                let appended = appended.load(Ordering::Acquire);
                bytes.load(Ordering::Relaxed) + sent.saturating_sub(appended)
            }
        }
    }
}

impl Session {
    /// At the frontier, with no breakpoint or watchpoint that could stop a `continue`,
    /// records burst windows for as long as they can run. Returns a stop only when
    /// interrupted; otherwise the caller goes on step by step (near the recording budget,
    /// the step limit or the end), and calls again.
    pub(super) fn record_windows(&mut self, count: &mut u64) -> Option<StopReason> {
        let stoppers =
            self.breakpoints.iter().any(|b| b.enabled) || self.watchpoints.iter().any(|w| w.enabled);
        if !self.window_recording
            || stoppers
            || self.now != self.recorder.len()
            || self.end.is_some()
            || self.now < self.windows_from
        {
            return None;
        }
        let mut restore = false;
        let stop = self.record_frontier(count, &mut restore);
        if restore {
            self.recorder.restore(&mut self.machine, self.now);
        }
        stop
    }

    fn record_frontier(&mut self, count: &mut u64, restore: &mut bool) -> Option<StopReason> {
        let Recorder { trace, checkpoints } = &mut self.recorder;
        let mut run = Frontier {
            session_now: &mut self.now,
            interp: &self.interp,
            machine: &mut self.machine,
            sched: &mut self.sched,
            checkpoints,
            end: &mut self.end,
            windows_from: &mut self.windows_from,
            window_steps: &mut self.window_steps,
            spare: &mut self.spare_batches,
            restore,
            record_limit: self.record_limit,
            progress: &mut self.progress,
            interrupt: &self.interrupt,
        };
        if !self.two_cores {
            return run.go(&mut Sink::Here(trace), count);
        }
        let (bytes, appended) = (AtomicU64::new(trace.bytes()), AtomicU64::new(0));
        let (back_to, back) = mpsc::channel::<Vec<Batch>>();
        let stop = std::thread::scope(|scope| {
            let (to, bundles) = mpsc::sync_channel::<Vec<Batch>>(IN_FLIGHT);
            let (bytes, appended) = (&bytes, &appended);
            scope.spawn(move || {
                for bundle in bundles {
                    let mut estimate = 0;
                    for batch in &bundle {
                        trace.append_batch(batch);
                        estimate += batch.bytes_estimate();
                    }
                    // Released after `bytes`: whoever sees this bundle appended sees its bytes.
                    bytes.store(trace.bytes(), Ordering::Relaxed);
                    appended.fetch_add(estimate, Ordering::Release);
                    // The receiver outlives the scope.
                    let _ = back_to.send(bundle);
                }
            });
            let mut sink = Sink::Queue {
                to,
                back: &back,
                bundle: Vec::new(),
                bundle_steps: 0,
                sent: 0,
                appended,
                bytes,
            };
            let stop = run.go(&mut sink, count);
            sink.flush(run.spare);
            stop
        });
        for mut done in back.try_iter() {
            run.spare.append(&mut done);
        }
        stop
    }
}

/// The parts of a session that recording at the frontier moves on.
struct Frontier<'a> {
    session_now: &'a mut u64,
    interp: &'a crate::exec::Interpreter,
    machine: &'a mut crate::machine::Machine,
    sched: &'a mut crate::exec::Scheduler,
    checkpoints: &'a mut crate::trace::Checkpoints,
    end: &'a mut Option<EndState>,
    windows_from: &'a mut u64,
    window_steps: &'a mut u64,
    spare: &'a mut Vec<Batch>,
    /// Set when a window faulted: the machine is partway through it.
    restore: &'a mut bool,
    record_limit: u64,
    progress: &'a mut Option<Box<dyn FnMut(u64, u64) -> bool>>,
    interrupt: &'a std::sync::atomic::AtomicBool,
}

impl Frontier<'_> {
    fn go(&mut self, sink: &mut Sink, count: &mut u64) -> Option<StopReason> {
        let mut time = *self.session_now;
        let mut stop = None;
        while self.end.is_none() {
            let mut batch = self.spare.pop().unwrap_or_default();
            let mut staged = None;
            if time >= *self.windows_from {
                let sched = &*self.sched;
                let group = sched.groups.get(sched.current_group).map_or(1, |g| g.len() as u64).max(1);
                // The window ends where the next checkpoint is due (at most a round later),
                // so checkpoints stay `interval` steps apart and seeks replay no more.
                self.checkpoints.take_if_due(self.machine, time);
                let rounds = (self.checkpoints.due_in(time) / group).max(1);
                let most = rounds * group;
                // Budget, step limit and the index's step range are checked step by step:
                // near any of them, the caller goes on that way.
                let bytes = sink.trace_bytes() + self.checkpoints.bytes();
                let limit = sched.step_limit;
                if bytes.saturating_add(WINDOW_RESERVE) > self.record_limit
                    || time + most >= crate::trace::MAX_STEPS
                    || (limit != 0 && sched.steps + most >= limit)
                {
                    *self.windows_from = time + most;
                    self.spare.push(batch);
                    break;
                }
                let window = record_window(
                    self.interp,
                    self.machine,
                    self.sched,
                    self.checkpoints,
                    time,
                    rounds,
                    &mut batch,
                );
                match window {
                    Window::Recorded(n) => {
                        *self.window_steps += n;
                        staged = Some(n);
                    }
                    // One step releases the barrier or starts the next group.
                    Window::Boundary => *self.windows_from = time + 1,
                    // A fault lies within the window's steps: once the machine is restored,
                    // those go one by one.
                    Window::Failed => {
                        *self.windows_from = time + most;
                        *self.restore = true;
                        self.spare.push(batch);
                        break;
                    }
                }
            }
            let n = match staged {
                Some(n) => n,
                None => match record_step(
                    self.interp,
                    self.machine,
                    self.sched,
                    self.checkpoints,
                    time,
                    &mut batch,
                ) {
                    Single::Recorded(fault) => {
                        if let Some(fault) = fault {
                            *self.end = Some(EndState::Fault(fault));
                        }
                        1
                    }
                    Single::Finished => {
                        *self.end = Some(EndState::Finished);
                        self.spare.push(batch);
                        break;
                    }
                    Single::Stopped(fault) => {
                        *self.end = Some(EndState::Fault(fault));
                        self.spare.push(batch);
                        break;
                    }
                },
            };
            time += n;
            sink.deliver(batch, self.spare);
            let before = *count;
            *count += n;
            if before / INTERRUPT_CHECK != *count / INTERRUPT_CHECK && self.poll_interrupt(time) {
                stop = Some(StopReason::Interrupted);
                break;
            }
        }
        *self.session_now = time;
        stop
    }

    /// Reports progress and asks whether to stop (as [`Session::poll_interrupt`] does).
    fn poll_interrupt(&mut self, time: u64) -> bool {
        let asked = self.progress.as_mut().is_some_and(|report| report(time, time));
        asked || self.interrupt.swap(false, Ordering::Relaxed)
    }
}
