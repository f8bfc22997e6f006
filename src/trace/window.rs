//! How steps reach the recording: each is encoded into a [`Stage`] and appended from there.
//! A single step ([`record_step`]) is a stage of one. A burst window ([`record_window`]) runs a
//! stretch of a work-group's phase a thread at a time, each thread's steps staged apart, then
//! appended in the round-robin scheduler's order. The recording is the one stepping one instruction at a time would make
//! (same steps, log bytes, indexes); it costs less because each thread runs its private
//! instructions in one burst, with one thread borrow and no scheduler pick per step.
//!
//! Why the order can be rebuilt: inside a phase (from a group's start or a barrier release
//! until every live thread waits or has finished), the round-robin scheduler runs step `c`
//! of thread `i` at key `(c, (i - first) mod k)`, skipping threads that stopped, and only
//! memory messages, atomics and barriers are seen by other threads. A window runs each
//! thread's private instructions ahead and the visible ones in key order, for at most
//! `rounds` steps per thread; its end is then a state the round-robin run passes through
//! (every thread has run `rounds` steps, or stopped), and its steps are appended round by
//! round.

use super::log;
use super::recorder::{pc_only, Recorder};
use crate::exec::{in_key_order, Fault, FaultKind, Interpreter, Observer, Pick, Scheduler, StepHooks};
use crate::isa::PredId;
use crate::machine::{Control, Machine, MemSpace, ThreadId};

/// One staged step: its instruction, channel enables, whether it changed its own control
/// state beyond moving to the next instruction, and where its log bytes and index items end.
#[derive(Copy, Clone, Debug)]
pub(super) struct StagedStep {
    pub pc: u32,
    pub chen: u32,
    pub own_control: bool,
    pub log_end: u32,
    pub item_end: u32,
}

/// A location a staged step wrote, for the write index.
#[derive(Copy, Clone, Debug)]
pub(super) enum Item {
    Grf { thread: u32, offset: u32, len: u32 },
    Pred { thread: u32, pred: u32 },
    Mem { space: MemSpace, addr: u64, len: u64 },
}

/// One thread's steps, in its own order, encoded for the log: the steps of a window, or one
/// single step (with the barrier releases the scheduler made before it). The one encoder of
/// the recording: [`Recorder::append_staged`] copies what it staged.
#[derive(Clone, Debug, Default)]
pub struct Stage {
    pub(super) thread: u32,
    pub(super) log: Vec<u8>,
    pub(super) steps: Vec<StagedStep>,
    pub(super) items: Vec<Item>,
    /// Changes that go to the recorder's control table: where their entry starts in `log`
    /// (its index field is filled in when the step is appended), and the change.
    pub(super) controls: Vec<(u32, (Control, Control))>,
    last_read: Option<usize>,
    /// Whether a step of `thread` is executing (between `begin_step` and `end_step`): its
    /// writes carry no thread field and its control changes are its own (a barrier release
    /// logged before it is not), and whether it logged such a change.
    executing: bool,
    own_control: bool,
}

impl Stage {
    fn reset(&mut self, thread: u32) {
        self.thread = thread;
        self.log.clear();
        self.steps.clear();
        self.items.clear();
        self.controls.clear();
        self.executing = false;
    }

    /// The writer field of an entry: none for the executing step's own thread.
    fn other(&self, thread: ThreadId) -> Option<u32> {
        (!self.executing || thread.0 != self.thread).then_some(thread.0)
    }
}

impl Observer for Stage {
    const ACTIVE: bool = true;

    fn mem_read(&mut self, thread: ThreadId, space: MemSpace, addr: u64, len: u64) {
        log::push_read(&mut self.log, &mut self.last_read, thread.0, space, addr, len as u32);
    }

    fn grf(&mut self, thread: ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        let who = self.other(thread);
        log::push_grf(&mut self.log, who, offset, old, new);
        self.items.push(Item::Grf { thread: thread.0, offset, len: new.len() as u32 });
    }

    fn pred(&mut self, thread: ThreadId, pred: PredId, old: u32, new: u32) {
        let who = self.other(thread);
        log::push_pred(&mut self.log, who, pred.0, old, new);
        self.items.push(Item::Pred { thread: thread.0, pred: pred.0 });
    }

    fn addr(&mut self, thread: ThreadId, slot: u32, old: u32, new: u32) {
        log::push_addr(&mut self.log, thread.0, slot, old, new);
    }

    fn mem(&mut self, thread: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        log::push_mem(&mut self.log, thread.0, space, addr, old, new);
        self.items.push(Item::Mem { space, addr, len: new.len() as u64 });
    }

    fn control(&mut self, thread: ThreadId, old: &Control, new: &Control) {
        // A step changes only its own thread's control state.
        self.own_control |= self.executing;
        if pc_only(old, new) {
            log::push_pc(&mut self.log, thread.0, old.pc.0, new.pc.0);
            return;
        }
        self.controls.push((self.log.len() as u32, (old.clone(), new.clone())));
        log::push_control(&mut self.log, thread.0, 0);
    }
}

impl StepHooks for Stage {
    fn begin_step(&mut self) {
        self.last_read = None;
        self.executing = true;
        self.own_control = false;
    }

    fn end_step(&mut self, pc: u32, chen: u32) {
        self.executing = false;
        let (log_end, item_end) = (self.log.len() as u32, self.items.len() as u32);
        self.steps.push(StagedStep { pc, chen, own_control: self.own_control, log_end, item_end });
    }
}

/// What [`record_step`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Single {
    /// The step was recorded; it raised this fault, if any (the run ends after it).
    Recorded(Option<Fault>),
    /// Every thread has finished: nothing was recorded.
    Finished,
    /// The run stops before another step (a deadlock at a barrier, the step limit): nothing
    /// was recorded.
    Stopped(Fault),
}

/// Records the round-robin scheduler's next step (and the barrier release it may need first).
pub fn record_step(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    rec: &mut Recorder,
    stage: &mut Stage,
) -> Single {
    rec.checkpoint_if_due(machine);
    // No step executes yet: what the scheduler logs names its thread.
    stage.reset(u32::MAX);
    let tid = match sched.pick(machine, stage) {
        Ok(Pick::Step(tid)) => tid,
        Ok(Pick::Finished) => return Single::Finished,
        Err(fault) => return Single::Stopped(fault),
    };
    if sched.step_limit != 0 && sched.steps >= sched.step_limit {
        let pc = machine.thread(tid).control.pc;
        return Single::Stopped(Fault { kind: FaultKind::StepLimit(sched.step_limit), thread: tid, pc });
    }
    stage.thread = tid.0;
    stage.begin_step();
    let (pc, chen, fault) = match interp.step(machine, tid, stage) {
        Ok(info) => (info.pc.0, info.chen, None),
        Err(fault) => (fault.pc.0, 0, Some(fault)),
    };
    stage.end_step(pc, chen);
    sched.steps += 1;
    rec.append_staged(stage, 0, &mut 0);
    Single::Recorded(fault)
}

/// What [`record_window`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Window {
    /// This many steps were recorded.
    Recorded(u64),
    /// No thread of the current group can run: a barrier release, the next group or the
    /// end of the run comes next, which stepping handles. Nothing changed.
    Boundary,
    /// A thread faulted inside the window. Nothing changed: stepping reaches the fault.
    Failed,
}

/// Records up to `rounds` round-robin rounds of the current group's phase: `machine`,
/// `sched` and `rec` move on exactly as that many single recorded steps would move them.
/// `stages` holds reusable buffers.
pub fn record_window(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    rec: &mut Recorder,
    rounds: u64,
    stages: &mut Vec<Stage>,
) -> Window {
    let Some(range) = sched.groups.get(sched.current_group).cloned() else { return Window::Boundary };
    if !range.clone().any(|t| machine.threads[t as usize].is_runnable()) {
        return Window::Boundary;
    }
    rec.checkpoint_if_due(machine);
    // Kept to give back on a fault (shares everything; each thread the window runs is
    // copied on its first write, as after a checkpoint).
    let start = machine.clone();
    let k = range.len();
    let first = (sched.cursor_in(&range) - range.start) as usize;
    stages.resize_with(k.max(stages.len()), Stage::default);
    for (i, stage) in stages[..k].iter_mut().enumerate() {
        stage.reset(range.start + i as u32);
    }
    let stages = &mut stages[..k];
    let mut counts = vec![0u64; k];
    let ran = run_window(interp, machine, stages, &mut counts, first, rounds);
    if ran.is_none() {
        *machine = start;
        return Window::Failed;
    }
    sched.cursor_after(&range, first as u32, &counts);
    let total: u64 = counts.iter().sum();
    sched.steps += total;
    // Round by round, in the rotation that starts at `first`.
    let mut controls = vec![0usize; k];
    let rounds_run = counts.iter().copied().max().unwrap_or(0);
    for c in 0..rounds_run {
        for p in 0..k {
            let i = (first + p) % k;
            if c < counts[i] {
                rec.append_staged(&stages[i], c as usize, &mut controls[i]);
            }
        }
    }
    Window::Recorded(total)
}

/// Runs the window's steps into the stages, in the order the burst runs use
/// ([`in_key_order`]). None when a thread faulted.
fn run_window(
    interp: &Interpreter,
    machine: &mut Machine,
    stages: &mut [Stage],
    counts: &mut [u64],
    first: usize,
    rounds: u64,
) -> Option<()> {
    in_key_order(first, counts, |i, visible, count| {
        let stage = &mut stages[i];
        if visible {
            stage.begin_step();
            let info = interp.step(machine, ThreadId(stage.thread), stage).ok()?;
            stage.end_step(info.pc.0, info.chen);
            *count += 1;
        }
        burst(interp, machine, stage, count, rounds)
    })
}

/// Runs the stage's thread's private instructions; true when it then waits at a visible one
/// with rounds left in the window.
fn burst(
    interp: &Interpreter,
    machine: &mut Machine,
    stage: &mut Stage,
    count: &mut u64,
    rounds: u64,
) -> Option<bool> {
    let tid = ThreadId(stage.thread);
    *count += interp.run_local(machine, tid, rounds.saturating_sub(*count), stage).ok()?.0;
    Some(*count < rounds && machine.threads[tid.0 as usize].is_runnable())
}
