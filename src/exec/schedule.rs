//! The deterministic scheduler: work-groups one after another; inside a group, round-robin
//! by instruction over its runnable threads; barriers release when every live thread of the
//! group waits at one.

use std::ops::Range;

use super::fault::{Fault, FaultKind};
use super::observer::{NullObserver, Observer};
use super::step::{Interpreter, StepEvent};
use crate::isa::InstIdx;
use crate::machine::{Machine, ThreadId, ThreadStatus};

/// What to do next.
#[derive(Clone, Debug, PartialEq)]
pub enum Pick {
    Step(ThreadId),
    /// Every thread has finished.
    Finished,
}

/// How the threads of a work-group take turns.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// One instruction of each runnable thread in turn (the default; plain runs and
    /// recordings reproduce it in bursts).
    #[default]
    RoundRobin,
    /// Each thread runs until it blocks (a barrier) or ends, then the next.
    Sequential,
    /// A thread picked at random runs a random burst of 1 to 32 instructions, then another:
    /// other interleavings of the same kernel, the same for the same seed.
    Chaos { seed: u64 },
}

impl Schedule {
    /// `rr`, `seq` or `chaos` (with `seed`).
    pub fn parse(name: &str, seed: u64) -> Option<Schedule> {
        match name {
            "rr" | "round-robin" => Some(Schedule::RoundRobin),
            "seq" | "sequential" => Some(Schedule::Sequential),
            "chaos" => Some(Schedule::Chaos { seed }),
            _ => None,
        }
    }
}

/// Round-robin scheduler state.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// Thread ranges of each work-group, in dispatch order.
    pub groups: Vec<Range<u32>>,
    pub current_group: usize,
    /// Next thread to consider inside the current group.
    pub cursor: u32,
    /// Steps executed so far.
    pub steps: u64,
    /// Stop with a fault after this many steps (0 = no limit).
    pub step_limit: u64,
    /// Lanes enabled over the steps [`run_to_end`] ran (kept when a step faults).
    pub lane_ops: u64,
    /// [`run_bursts`] drops each work-group's threads once the group is done (a plain run
    /// whose caller reads no thread afterwards: a million-thread launch then holds one
    /// group's registers at a time, not all of them).
    pub release_finished: bool,
    /// The order threads take turns in ([`Scheduler::set_schedule`]).
    pub schedule: Schedule,
    /// Chaos state: the generator and what is left of the current burst.
    rng: u64,
    burst_left: u32,
}

/// Where a scheduler stands between steps: what a checkpoint keeps of it, so that the steps
/// after the checkpoint can be run again, in the same order, from the checkpoint's machine
/// and a scheduler of the same launch ([`Scheduler::resume`]). The step count is not in it:
/// a recording made on another core counts its own.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedPos {
    group: usize,
    cursor: u32,
    rng: u64,
    burst_left: u32,
}

impl Scheduler {
    /// One group holding all of `machine`'s threads (a raw launch).
    pub fn single_group(n_threads: u32) -> Scheduler {
        Scheduler::new(std::iter::once(0..n_threads).collect())
    }

    pub fn new(groups: Vec<Range<u32>>) -> Scheduler {
        let mut sched = Scheduler {
            groups,
            current_group: 0,
            cursor: 0,
            steps: 0,
            step_limit: 0,
            lane_ops: 0,
            release_finished: false,
            schedule: Schedule::RoundRobin,
            rng: 0,
            burst_left: 0,
        };
        sched.start_group(0);
        sched
    }

    /// Where this scheduler stands.
    pub fn position(&self) -> SchedPos {
        SchedPos {
            group: self.current_group,
            cursor: self.cursor,
            rng: self.rng,
            burst_left: self.burst_left,
        }
    }

    /// Stands this scheduler (of the launch `pos` was taken in, with every work-group) where
    /// `pos` was taken.
    pub fn resume(&mut self, pos: &SchedPos) {
        (self.current_group, self.cursor, self.rng, self.burst_left) =
            (pos.group, pos.cursor, pos.rng, pos.burst_left);
    }

    /// Chooses the schedule (before the run starts).
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
        self.rng = match schedule {
            Schedule::Chaos { seed } => seed ^ 0x9e37_79b9_7f4a_7c15,
            _ => 0,
        };
        self.burst_left = 0;
    }

    /// Whether runs may go in bursts (which reproduce the round-robin order only).
    pub fn bursts_allowed(&self) -> bool {
        self.schedule == Schedule::RoundRobin
    }

    fn next_random(&mut self) -> u64 {
        // splitmix64: deterministic per seed, well mixed from the first draw.
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next thread of `range` under a schedule other than round-robin, if one can run.
    fn pick_other(&mut self, machine: &Machine, range: &Range<u32>) -> Option<u32> {
        let runnable = |t: u32| machine.threads[t as usize].is_runnable();
        let current = self.cursor_in(range);
        match self.schedule {
            Schedule::Sequential => {
                let t = (0..range.len() as u32)
                    .map(|i| range.start + (current - range.start + i) % range.len() as u32)
                    .find(|&t| runnable(t))?;
                self.cursor = t;
                Some(t)
            }
            _ => {
                if self.burst_left > 0 && runnable(current) {
                    self.burst_left -= 1;
                    return Some(current);
                }
                let ready: Vec<u32> = range.clone().filter(|&t| runnable(t)).collect();
                if ready.is_empty() {
                    return None;
                }
                let t = ready[(self.next_random() % ready.len() as u64) as usize];
                self.burst_left = (self.next_random() % 32) as u32;
                self.cursor = t;
                Some(t)
            }
        }
    }

    /// Makes `group` the current group, its first thread next (past the last group: finished).
    pub fn start_group(&mut self, group: usize) {
        self.current_group = group;
        self.cursor = self.groups.get(group).map_or(0, |g| g.start);
    }

    /// The thread the round-robin scan of `range` starts from.
    pub fn cursor_in(&self, range: &Range<u32>) -> u32 {
        self.cursor.clamp(range.start, range.end.saturating_sub(1).max(range.start))
    }

    /// Sets the round-robin cursor as it stands after a stretch of `range` that started at
    /// position `first` and in which thread `range.start + i` ran `counts[i]` steps: just
    /// after the stretch's last step (the thread with the greatest (round, position)).
    pub fn cursor_after(&mut self, range: &Range<u32>, first: u32, counts: &[u64]) {
        let k = counts.len();
        let key = |i: usize, count: u64| (count, (i + k - first as usize) % k);
        if let Some(last) = (0..k).filter(|&i| counts[i] > 0).max_by_key(|&i| key(i, counts[i] - 1)) {
            let next = range.start + last as u32 + 1;
            self.cursor = if next >= range.end { range.start } else { next };
        }
    }

    /// Picks the next thread to step, releasing barriers and moving to the next group as
    /// needed. Barrier releases go through `observer` like any other control change.
    pub fn pick<O: Observer>(&mut self, machine: &mut Machine, observer: &mut O) -> Result<Pick, Fault> {
        while let Some(range) = self.groups.get(self.current_group).cloned() {
            if self.schedule != Schedule::RoundRobin {
                if let Some(t) = self.pick_other(machine, &range) {
                    return Ok(Pick::Step(ThreadId(t)));
                }
                if self.release_barrier(machine, range.clone(), observer)? {
                    continue;
                }
                self.start_group(self.current_group + 1);
                continue;
            }
            let mut tid = self.cursor_in(&range);
            for _ in range.clone() {
                let next = if tid + 1 >= range.end { range.start } else { tid + 1 };
                if machine.threads[tid as usize].is_runnable() {
                    self.cursor = next;
                    return Ok(Pick::Step(ThreadId(tid)));
                }
                tid = next;
            }
            if self.release_barrier(machine, range.clone(), observer)? {
                continue;
            }
            self.start_group(self.current_group + 1);
        }
        Ok(Pick::Finished)
    }

    /// With no runnable thread in `range`: if threads wait at a barrier, release them
    /// (true), or report a deadlock when some thread can never arrive.
    fn release_barrier<O: Observer>(
        &mut self,
        machine: &mut Machine,
        range: Range<u32>,
        observer: &mut O,
    ) -> Result<bool, Fault> {
        // Named-barrier waits first: those whose barrier got its signals run their `wait`
        // again; if none can, and no thread waits at a `barrier`, the group is stuck.
        let named: Vec<(u32, u8)> = range
            .clone()
            .filter_map(|t| match machine.threads[t as usize].control.status {
                ThreadStatus::AtNamedBarrier(id) => Some((t, id)),
                _ => None,
            })
            .collect();
        if !named.is_empty() {
            let group = machine.threads[named[0].0 as usize].group as usize;
            let ready: Vec<u32> = named
                .iter()
                .filter(|(_, id)| {
                    machine.slms.get(group).is_some_and(|slm| super::nbarrier::released(slm, *id))
                })
                .map(|(t, _)| *t)
                .collect();
            if ready.is_empty() {
                let (tid, id) = named[0];
                let pc = machine.threads[tid as usize].control.pc;
                let waiting: Vec<u32> = named.iter().map(|(t, _)| *t).collect();
                let message = format!("threads {waiting:?} wait at named barriers (the first at {id}) that no thread left can signal");
                return Err(Fault { kind: FaultKind::Deadlock(message), thread: ThreadId(tid), pc });
            }
            for t in ready {
                let thread = machine.thread_mut(ThreadId(t));
                let old = if O::ACTIVE { Some(thread.control.clone()) } else { None };
                thread.control.status = ThreadStatus::Running;
                if let Some(old) = old {
                    observer.control(ThreadId(t), &old, &thread.control);
                }
            }
            return Ok(true);
        }
        let waiting: Vec<u32> = range
            .clone()
            .filter(|&t| machine.threads[t as usize].control.status == ThreadStatus::AtBarrier)
            .collect();
        if waiting.is_empty() {
            return Ok(false);
        }
        // Every thread must wait at the same barrier: one instruction, the one before each pc.
        let at = |t: u32| machine.threads[t as usize].control.pc.0.saturating_sub(1);
        if let Some(&other) = waiting.iter().find(|&&t| at(t) != at(waiting[0])) {
            let message = format!(
                "thread {} waits at the barrier at instruction {} and thread {other} at instruction {}",
                waiting[0],
                at(waiting[0]),
                at(other)
            );
            return Err(Fault {
                kind: FaultKind::BarrierDivergence(message),
                thread: ThreadId(other),
                pc: InstIdx(at(other)),
            });
        }
        let done: Vec<u32> =
            range.filter(|&t| machine.threads[t as usize].control.status == ThreadStatus::Done).collect();
        if let Some(&first_done) = done.first() {
            let tid = waiting[0];
            let pc = machine.threads[tid as usize].control.pc;
            let message = format!(
                "threads {:?} wait at a barrier but thread {first_done} finished without reaching it",
                waiting
            );
            return Err(Fault {
                kind: FaultKind::Deadlock(message),
                thread: ThreadId(tid),
                pc: InstIdx(pc.0.saturating_sub(1)),
            });
        }
        for t in waiting {
            let thread = machine.thread_mut(ThreadId(t));
            let old = if O::ACTIVE { Some(thread.control.clone()) } else { None };
            thread.control.status = ThreadStatus::Running;
            if let Some(old) = old {
                observer.control(ThreadId(t), &old, &thread.control);
            }
        }
        Ok(true)
    }
}

/// Summary of a run to the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub steps: u64,
    /// Lane-instructions: the sum over steps of enabled channels.
    pub lane_ops: u64,
}

/// Runs every thread to the end (or the first fault).
pub fn run_to_end<O: Observer>(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    observer: &mut O,
) -> Result<RunSummary, Fault> {
    let mut summary = RunSummary::default();
    loop {
        let tid = match sched.pick(machine, observer)? {
            Pick::Finished => break,
            Pick::Step(tid) => tid,
        };
        if sched.step_limit != 0 && sched.steps >= sched.step_limit {
            let pc = machine.thread(tid).control.pc;
            return Err(Fault { kind: FaultKind::StepLimit(sched.step_limit), thread: tid, pc });
        }
        // A faulting instruction counts as a step, as it is one in a recording (the step
        // the debugger stops on).
        let info = interp.step(machine, tid, observer).inspect_err(|_| sched.steps += 1)?;
        sched.steps += 1;
        summary.lane_ops += info.chen.count_ones() as u64;
        sched.lane_ops += info.chen.count_ones() as u64;
        if info.event == StepEvent::Idle {
            continue;
        }
    }
    summary.steps = sched.steps;
    Ok(summary)
}

/// Runs every thread to the end in bursts, with exactly the results of [`run_to_end`]'s
/// round-robin schedule (same memory, registers and step count), or `None` when it met a
/// fault or the step limit: then `machine` and `sched` are mid-run, and the caller reruns from
/// the start with [`run_to_end`] to report the fault exactly
/// ([`run_to_end_unrecorded`](super::run_to_end_unrecorded) does).
///
/// Why that holds: threads share nothing but memory, so a run is determined by the order of
/// the instructions other threads can observe (memory messages, atomics and barriers). Inside
/// a phase of a group (from its start or a barrier release until every live thread waits or
/// has finished) the round-robin scheduler runs step `c` of thread `t` in round `c`, at
/// position `(t - first) mod k`, skipping threads that stopped; so its order is by the key
/// `(c, (t - first) mod k)`. Here each thread runs its private instructions ahead in one
/// burst and the visible ones are executed in key order. Measured on the Collatz benchmark:
/// one thread borrow per burst instead of a scheduler pick and a thread borrow per step.
pub fn run_bursts(interp: &Interpreter, machine: &mut Machine, sched: &mut Scheduler) -> Option<RunSummary> {
    run_bursts_observed(interp, machine, sched, &mut NullObserver, |_, _, _, _| {})
}

/// [`run_bursts`] with `obs` hearing the steps that other threads can observe (memory
/// messages, atomics, barriers; private instructions run unobserved), each announced first
/// to `visible(obs, machine, thread, step)` with the step number it has in the round-robin
/// run (a recording's).
pub fn run_bursts_observed<O: Observer>(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    obs: &mut O,
    visible: impl FnMut(&mut O, &Machine, ThreadId, u64),
) -> Option<RunSummary> {
    let end = sched.groups.len();
    run_groups_observed(interp, machine, sched, end, obs, visible)
}

/// [`run_bursts`] up to work-group `end` (not run): the groups from the current one to it.
pub fn run_groups(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    end: usize,
) -> Option<RunSummary> {
    run_groups_observed(interp, machine, sched, end, &mut NullObserver, |_, _, _, _| {})
}

fn run_groups_observed<O: Observer>(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    end: usize,
    obs: &mut O,
    mut visible: impl FnMut(&mut O, &Machine, ThreadId, u64),
) -> Option<RunSummary> {
    let mut summary = RunSummary::default();
    let limit = if sched.step_limit == 0 { u64::MAX } else { sched.step_limit };
    while sched.current_group < end {
        let Some(range) = sched.groups.get(sched.current_group).cloned() else { break };
        let k = range.len();
        loop {
            let first = sched.cursor_in(&range) - range.start;
            let base = sched.steps;
            // Steps each thread ran in this phase.
            let mut counts = vec![0u64; k];
            in_key_order(first as usize, &mut counts, |i, is_visible, counts| {
                let tid = range.start + i as u32;
                if is_visible && sched.steps >= limit {
                    return None;
                }
                // An observer hears the visible step by itself, with its step number; unobserved,
                // it starts the thread's next burst (one thread borrow for both).
                if is_visible && O::ACTIVE {
                    let step = base + place_in_phase(counts, first as usize, i, counts[i]);
                    visible(obs, machine, ThreadId(tid), step);
                    let info = interp.step(machine, ThreadId(tid), obs).ok()?;
                    sched.steps += 1;
                    counts[i] += 1;
                    summary.lane_ops += info.chen.count_ones() as u64;
                }
                let visible_first = is_visible && !O::ACTIVE;
                burst(interp, machine, sched, &mut summary, &mut counts[i], tid, limit, visible_first)
            })?;
            sched.cursor_after(&range, first, &counts);
            if !sched.release_barrier(machine, range.clone(), obs).ok()? {
                break;
            }
        }
        if sched.release_finished {
            machine.threads.release_below(range.end as usize);
        }
        sched.start_group(sched.current_group + 1);
    }
    summary.steps = sched.steps;
    Some(summary)
}

/// Runs a phase of a group of `counts.len()` threads in the order of the round-robin
/// scheduler that started it at position `first`, each thread's private instructions run
/// ahead (see [`run_bursts`] for why that order is exact). `advance(i, visible, count)` runs
/// thread `i` of the group: its waiting visible instruction first when `visible`, then its
/// private ones, adding its steps to `counts[i]` (the others' counts are there to read:
/// [`place_in_phase`]); it returns whether the thread then waits at a visible instruction it
/// may run, or None to give up (a fault, a limit).
pub(crate) fn in_key_order(
    first: usize,
    counts: &mut [u64],
    mut advance: impl FnMut(usize, bool, &mut [u64]) -> Option<bool>,
) -> Option<()> {
    let k = counts.len();
    let mut ready = vec![false; k];
    for (i, r) in ready.iter_mut().enumerate() {
        *r = advance(i, false, counts)?;
    }
    // Visible instructions by key (round, position in the rotation that starts at `first`).
    while let Some(i) = (0..k).filter(|&i| ready[i]).min_by_key(|&i| (counts[i], (i + k - first) % k)) {
        ready[i] = advance(i, true, counts)?;
    }
    Some(())
}

/// Where step `c` of thread `i` falls among the steps of a phase that started at position
/// `first` (see [`in_key_order`]): the number of steps of every thread before it in the
/// order (round, position). Exact once `counts` are final, and for the step a visible
/// instruction takes when [`in_key_order`] runs it (every other thread then waits at a
/// later key or has stopped).
pub(crate) fn place_in_phase(counts: &[u64], first: usize, i: usize, c: u64) -> u64 {
    let k = counts.len();
    let pos = |j: usize| (j + k - first) % k;
    (0..k).map(|j| counts[j].min(c + u64::from(pos(j) < pos(i)))).sum()
}

/// Runs thread `tid`'s private instructions; true when it then waits at a visible one, None
/// when it faulted or reached the step limit.
#[allow(clippy::too_many_arguments)]
fn burst(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    summary: &mut RunSummary,
    count: &mut u64,
    tid: u32,
    limit: u64,
    visible_first: bool,
) -> Option<bool> {
    let (steps, lane_ops) = interp
        .run_local(
            machine,
            ThreadId(tid),
            limit.saturating_sub(sched.steps),
            super::step::Stops { pcs: &super::step::NO_STOPS, holds: None },
            &mut NullObserver,
            visible_first,
        )
        .ok()?;
    sched.steps += steps;
    *count += steps;
    summary.lane_ops += lane_ops;
    let runnable = machine.threads[tid as usize].is_runnable();
    (sched.steps < limit || !runnable).then_some(runnable)
}
