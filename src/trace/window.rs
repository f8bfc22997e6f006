//! How steps reach the recording: each is encoded into a [`Stage`], and a [`Batch`] of stages
//! is appended to the trace. A single step ([`record_step`]) is a batch of one stage of one
//! step. A burst window ([`record_window`]) runs a stretch of a work-group's phase a thread at
//! a time, each thread's steps staged apart, and the batch is appended in the round-robin
//! scheduler's order. The recording is the one stepping one instruction at a time would make
//! (same steps, log bytes, indexes); it costs less because each thread runs its private
//! instructions in one burst, with one thread borrow and no scheduler pick per step. A lean
//! batch ([`Batch::lean`]) stages only what the write index needs.
//!
//! Why the order can be rebuilt: inside a phase (from a group's start or a barrier release
//! until every live thread waits or has finished), the round-robin scheduler runs step `c`
//! of thread `i` at key `(c, (i - first) mod k)`, skipping threads that stopped, and only
//! memory messages, atomics and barriers are seen by other threads. A window runs each
//! thread's private instructions ahead and the visible ones in key order, for at most
//! `rounds` steps per thread; its end is then a state the round-robin run passes through
//! (every thread has run `rounds` steps, or stopped), and its steps are appended round by
//! round.

use super::index::{pred_bit, set_bits, unit_shift, UNIT_WORDS};
use super::log::{self, Written};
use super::recorder::{pc_only, Checkpoints};
use crate::exec::{
    in_key_order, place_in_phase, Fault, FaultKind, Interpreter, Observer, PcSet, Pick, Scheduler, StepHooks,
    Stops, NO_STOPS,
};
use crate::isa::PredId;
use crate::machine::{Control, Machine, MemSpace, ThreadId};

/// One staged step: its instruction, channel enables, whether it changed its own control
/// state beyond moving to the next instruction, and where its log bytes end (12 bytes).
#[derive(Copy, Clone, Debug)]
pub(super) struct StagedStep {
    pub pc: u32,
    pub chen: u32,
    /// Where its log bytes end (bits 0–30: a stage holds one window's steps, a few MiB of log
    /// at most), and [`OWN_CONTROL`].
    log_end: u32,
}

const _: () = assert!(std::mem::size_of::<StagedStep>() == 12);

/// Flag of [`StagedStep::log_end`]: the step changed its own control state beyond the pc.
const OWN_CONTROL: u32 = 1 << 31;

impl StagedStep {
    pub fn log_end(&self) -> u32 {
        self.log_end & !OWN_CONTROL
    }

    pub fn own_control(&self) -> bool {
        self.log_end & OWN_CONTROL != 0
    }
}

/// A stage's bitmap of GRF units and word of predicates ([`Stage::written`]).
#[derive(Clone, Debug)]
pub(super) struct UnitBits(pub(super) [u64; UNIT_WORDS + 1]);

impl Default for UnitBits {
    fn default() -> UnitBits {
        UnitBits([0; UNIT_WORDS + 1])
    }
}

impl std::ops::Deref for UnitBits {
    type Target = [u64; UNIT_WORDS + 1];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for UnitBits {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// One thread's steps, in its own order, encoded for the log: the steps of a window, or one
/// single step (with the barrier releases the scheduler made before it). The one encoder of
/// the recording: [`Trace::append_batch`] copies what it staged.
///
/// [`Trace::append_batch`]: super::recorder::Trace::append_batch
#[derive(Clone, Debug, Default)]
pub struct Stage {
    pub(super) thread: u32,
    pub(super) log: Vec<u8>,
    pub(super) steps: Vec<StagedStep>,
    /// Changes that go to the recorder's control table: where their entry starts in `log`
    /// (its index field is filled in when the step is appended), and the change.
    pub(super) controls: Vec<(u32, (Control, Control))>,
    /// For the write index, which appending then builds without decoding entries: the units
    /// of `thread`'s GRF its steps wrote (of `1 << unit_shift` bytes, the index's;
    /// [`UNIT_WORDS`] words, the last unit standing for every unit above it), then a word of
    /// its predicates written (bit 63 also for those above 63); its memory writes with the
    /// stage step that made them; and whether an entry wrote another thread's registers or
    /// predicates (then its steps are indexed from their entries).
    pub(super) written: UnitBits,
    pub(super) unit_shift: u32,
    pub(super) mems: Vec<(u32, MemSpace, u64, u64)>,
    pub(super) foreign: bool,
    /// Whether a step of `thread` is executing (between `begin_step` and `end_step`): its
    /// writes carry no thread field and its control changes are its own (a barrier release
    /// logged before it is not), and whether it logged such a change.
    executing: bool,
    own_control: bool,
    /// Whether a step's pc or channel enables take more than 16 bits: then appending takes
    /// the general path.
    pub(super) wide: bool,
    /// Lean: nothing goes to the log (no values, no control changes); only what the index
    /// needs is noted, the registers and predicates of other threads in `foreign_writes`.
    pub(super) lean: bool,
    /// Lean: other threads' registers and predicates written, with the stage step.
    pub(super) foreign_writes: Vec<(u32, Written)>,
    /// The instructions its steps ran (a part keeps those of its stages, so that a search
    /// for steps at given instructions reads only the parts that ran one).
    pub(super) pcs: PcSet,
    /// Steps staged (lean, which keeps no `steps`, as well), the first one's instruction and,
    /// lean, the lane operations of them all.
    pub(super) count: u32,
    first_pc: u32,
    pub(super) lane_ops: u64,
}

impl Stage {
    fn reset(&mut self, thread: u32, unit_shift: u32) {
        self.thread = thread;
        self.unit_shift = unit_shift;
        self.log.clear();
        self.steps.clear();
        self.controls.clear();
        self.executing = false;
        self.written = UnitBits::default();
        self.mems.clear();
        self.foreign = false;
        self.wide = false;
        self.foreign_writes.clear();
        self.pcs.clear();
        (self.count, self.first_pc, self.lane_ops) = (0, 0, 0);
    }

    /// Notes GRF bytes `[offset, offset + len)` of `thread` written, for the index.
    #[inline(always)]
    fn note_grf(&mut self, thread: ThreadId, offset: u32, len: u32) {
        if thread.0 != self.thread {
            self.foreign = true;
            if self.lean {
                let c = self.count;
                self.foreign_writes.push((c, Written::Grf { thread: thread.0, offset, len }));
            }
            return;
        }
        let last_unit = (UNIT_WORDS * 64 - 1) as u32;
        let first = (offset >> self.unit_shift).min(last_unit);
        let last = ((offset + len.max(1) - 1) >> self.unit_shift).min(last_unit);
        set_bits(&mut self.written.0, first as usize, last as usize);
    }

    /// Notes the GRF bytes of `thread` that lanes `lanes` (bit i: `size` bytes at `offset + i
    /// · size`) wrote: lane by lane where a lane is a unit, else from the first lane's bytes
    /// to the last one's.
    #[inline(always)]
    fn note_lanes(&mut self, thread: ThreadId, offset: u32, size: u32, lanes: u32) {
        let unit = offset >> self.unit_shift;
        // Up to 32 units below the last: a lane mask's 32 units fit the bitmap.
        let below_last = unit < (UNIT_WORDS * 64 - 64) as u32;
        if thread.0 == self.thread && size == 1 << self.unit_shift && offset & (size - 1) == 0 && below_last {
            let (w, at) = ((unit / 64) as usize, unit % 64);
            self.written[w] |= u64::from(lanes) << at;
            if at > 32 {
                self.written[w + 1] |= u64::from(lanes) >> (64 - at);
            }
        } else {
            self.note_grf(thread, offset, (32 - lanes.leading_zeros()) * size);
        }
    }

    /// The writer field of an entry: none for the executing step's own thread.
    fn other(&self, thread: ThreadId) -> Option<u32> {
        (!self.executing || thread.0 != self.thread).then_some(thread.0)
    }
}

impl Observer for Stage {
    const ACTIVE: bool = true;
    // The log keeps bytes, not lanes: which lane wrote a byte is found again by running the
    // step with an observer that hears lanes.
    const LANE_ACCESSES: bool = false;

    #[inline(always)]
    fn values(&self) -> bool {
        !self.lean
    }

    #[inline(always)]
    fn grf_span(&mut self, thread: ThreadId, offset: u32, len: u32) {
        self.note_grf(thread, offset, len);
    }

    fn grf(&mut self, thread: ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        self.note_grf(thread, offset, new.len() as u32);
        if self.lean {
            return;
        }
        let who = self.other(thread);
        log::push_grf(&mut self.log, who, offset, old, new);
    }

    #[inline(always)]
    fn grf_span_lanes(&mut self, thread: ThreadId, offset: u32, size: u32, lanes: u32) {
        self.note_lanes(thread, offset, size, lanes);
    }

    fn grf_lanes(&mut self, thread: ThreadId, offset: u32, size: u32, lanes: u32, old: &[u8], new: &[u8]) {
        self.note_lanes(thread, offset, size, lanes);
        if self.lean {
            return;
        }
        let who = self.other(thread);
        log::push_grf_lanes(&mut self.log, who, offset, size, lanes, old, new);
    }

    fn pred(&mut self, thread: ThreadId, pred: PredId, old: u32, new: u32) {
        if thread.0 == self.thread {
            self.written[UNIT_WORDS] |= pred_bit(pred.0);
        } else {
            self.foreign = true;
            if self.lean {
                let c = self.count;
                self.foreign_writes.push((c, Written::Pred { thread: thread.0, pred: pred.0 }));
            }
        }
        if self.lean {
            return;
        }
        let who = self.other(thread);
        log::push_pred(&mut self.log, who, pred.0, old, new);
    }

    fn addr(&mut self, thread: ThreadId, slot: u32, old: u32, new: u32) {
        if self.lean {
            return;
        }
        log::push_addr(&mut self.log, thread.0, slot, old, new);
    }

    fn mem(&mut self, thread: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        self.mems.push((self.count, space, addr, new.len() as u64));
        if self.lean {
            return;
        }
        log::push_mem(&mut self.log, thread.0, space, addr, old, new);
    }

    fn control(&mut self, thread: ThreadId, old: &Control, new: &Control) {
        // A step changes only its own thread's control state.
        self.own_control |= self.executing;
        if self.lean {
            return;
        }
        if pc_only(old, new) {
            let who = self.other(thread);
            log::push_pc(&mut self.log, who, old.pc.0, new.pc.0);
            return;
        }
        self.controls.push((self.log.len() as u32, (old.clone(), new.clone())));
        log::push_control(&mut self.log, thread.0, 0);
    }
}

impl StepHooks for Stage {
    // Both run at every step a window records: inlined into its loop.
    #[inline(always)]
    fn begin_step(&mut self) {
        self.executing = true;
        self.own_control = false;
    }

    #[inline(always)]
    fn end_step(&mut self, pc: u32, chen: u32) {
        self.pcs.insert(pc);
        self.end_step_in_stretch(pc, chen);
    }

    #[inline(always)]
    fn end_step_in_stretch(&mut self, pc: u32, chen: u32) {
        self.executing = false;
        if self.count == 0 {
            self.first_pc = pc;
        }
        self.count += 1;
        if self.lean {
            self.lane_ops += u64::from(chen.count_ones());
            return;
        }
        let flag = if self.own_control { OWN_CONTROL } else { 0 };
        let end = self.log.len() as u32;
        self.wide |= (pc | chen) > 0xffff;
        self.steps.push(StagedStep { pc, chen, log_end: end | flag });
    }

    #[inline(always)]
    fn ran_stretch(&mut self, first: u32, end: u32) {
        self.pcs.insert_range(first, end);
    }
}

/// Staged steps of one or more threads, appended together by [`Trace::append_batch`]: step
/// `c` of every stage, from the stage at `first` round-robin, then step `c + 1`.
///
/// [`Trace::append_batch`]: super::recorder::Trace::append_batch
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Reused buffers: the first `counts.len()` are this batch's.
    pub(super) stages: Vec<Stage>,
    /// Steps staged per stage.
    pub(super) counts: Vec<u64>,
    pub(super) first: usize,
    /// The checkpoint taken where the batch starts, if one was: the trace starts a part there.
    pub from: Option<std::sync::Arc<super::Checkpoint>>,
    /// Whether its stages are lean ([`Stage::lean`]): the trace then keeps only the index
    /// and the steps' count of them, and records them again from their part's checkpoint
    /// when they are read. Only for a trace that can ([`Trace::can_rebuild`]), or that joins
    /// one that can before it is read (the other cores' recordings, `session::split`).
    ///
    /// [`Trace::can_rebuild`]: super::recorder::Trace::can_rebuild
    pub lean: bool,
}

impl Batch {
    /// Steps in the batch.
    pub fn steps(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The instruction of its step, when it holds one step (a batch [`record_step`] made):
    /// a candidate for the breakpoints at it (their conditions are tested at its time).
    pub fn only_pc(&self) -> Option<u32> {
        let k = self.counts.len();
        let mut stepped = self.stages[..k].iter().zip(&self.counts).filter(|(_, &c)| c > 0);
        match (stepped.next(), stepped.next()) {
            (Some((stage, 1)), None) => Some(stage.first_pc),
            _ => None,
        }
    }

    /// Readies `k` stages for threads `start..start + k` of `machine`.
    fn reset(&mut self, machine: &Machine, start: u32, k: usize, first: usize) {
        let shift = unit_shift(machine.threads.get(0).map_or(0, |t| t.grf.len() as u32));
        self.stages.resize_with(k.max(self.stages.len()), Stage::default);
        for (i, stage) in self.stages[..k].iter_mut().enumerate() {
            stage.reset(start + i as u32, shift);
            stage.lean = self.lean;
        }
        self.counts.clear();
        self.counts.resize(k, 0);
        self.first = first;
    }
}

/// What [`record_step`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Single {
    /// The step was staged in the batch; it raised this fault, if any (the run ends after it).
    Recorded(Option<Fault>),
    /// Every thread has finished: nothing was staged.
    Finished,
    /// The run stops before another step (a deadlock at a barrier, the step limit): nothing
    /// was staged.
    Stopped(Fault),
}

/// Stages the round-robin scheduler's next step (and the barrier release it may need first)
/// as a batch of one. `time` is the recorded time before it (for the checkpoint).
pub fn record_step(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    checkpoints: &mut Checkpoints,
    time: u64,
    batch: &mut Batch,
) -> Single {
    checkpoints.take_if_due(machine, sched, time);
    batch.from = checkpoints.at(time);
    // No step executes yet: what the scheduler logs names its thread.
    batch.reset(machine, u32::MAX, 1, 0);
    let stage = &mut batch.stages[0];
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
    batch.counts[0] = 1;
    Single::Recorded(fault)
}

/// What [`record_window`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Window {
    /// This many steps were staged in the batch.
    Recorded(u64),
    /// No thread of the current group can run: a barrier release, the next group or the
    /// end of the run comes next, which stepping handles. Nothing changed.
    Boundary,
    /// A thread faulted inside the window. The scheduler is unchanged and nothing was
    /// staged, but the machine is left partway: the caller restores it from the recording
    /// ([`Recorder::restore`]), then steps to the fault. (Restoring costs a replay from a
    /// checkpoint once per run; a copy of the machine kept per window would cost a copy of
    /// each thread it runs.)
    ///
    /// [`Recorder::restore`]: super::recorder::Recorder::restore
    Failed,
}

/// What a recording tests as it goes: before each step at one of `pcs` (the bursts stop
/// there, so that the thread's state is the state of that step), `test` is asked about the
/// thread; the steps it holds for are noted in `hits` (numbered from the window's first
/// step, in the order of the steps).
pub struct Probe<'a> {
    pub pcs: PcSet,
    pub test: Box<ProbeTest<'a>>,
    pub hits: Vec<u64>,
}

/// A probe's test: whether the thread about to execute the instruction holds for it (made
/// where the thread meets the instruction, in its burst).
pub type ProbeTest<'a> = crate::exec::StopTest<'a>;

/// Stages up to `rounds` round-robin rounds of the current group's phase: `machine` and
/// `sched` move on exactly as that many single steps would move them, and appending the
/// batch records what those steps would record. The caller takes the checkpoint due before
/// the window (it sizes the window so that the next one falls at its end).
pub fn record_window(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    rounds: u64,
    batch: &mut Batch,
    probe: Option<&mut Probe>,
) -> Window {
    let Some(range) = sched.groups.get(sched.current_group).cloned() else { return Window::Boundary };
    if !range.clone().any(|t| machine.threads[t as usize].is_runnable()) {
        return Window::Boundary;
    }
    let k = range.len();
    let first = (sched.cursor_in(&range) - range.start) as usize;
    batch.reset(machine, range.start, k, first);
    let Batch { stages, counts, .. } = batch;
    // Hits as (thread's position in the group, its step in the window).
    let mut hits = Vec::new();
    let (stops, test, out): (&PcSet, Option<Test>, _) = match probe {
        Some(Probe { pcs, test, hits }) => (pcs, Some(&mut **test), Some(hits)),
        None => (&NO_STOPS, None, None),
    };
    if run_window(interp, machine, &mut stages[..k], counts, first, rounds, stops, test, &mut hits).is_none()
    {
        return Window::Failed;
    }
    if let Some(out) = out {
        out.extend(hits.iter().map(|&(i, c)| place_in_phase(counts, first, i, c)));
    }
    sched.cursor_after(&range, first as u32, counts);
    let total = batch.steps();
    sched.steps += total;
    Window::Recorded(total)
}

/// The probe's test, as [`run_window`] calls it.
type Test<'t, 'a> = &'t mut ProbeTest<'a>;

/// Runs the window's steps into the stages, in the order the burst runs use
/// ([`in_key_order`]). None when a thread faulted.
#[allow(clippy::too_many_arguments)]
fn run_window(
    interp: &Interpreter,
    machine: &mut Machine,
    stages: &mut [Stage],
    counts: &mut [u64],
    first: usize,
    rounds: u64,
    stops: &PcSet,
    mut test: Option<Test>,
    hits: &mut Vec<(usize, u64)>,
) -> Option<()> {
    in_key_order(first, counts, |i, visible, counts| {
        let count = &mut counts[i];
        let stage = &mut stages[i];
        let tid = ThreadId(stage.thread);
        if visible {
            if let Some(test) = test.as_mut() {
                let pc = machine.threads[tid.0 as usize].control.pc;
                if stops.contains(pc.0) && test(&machine.threads[tid.0 as usize], tid, pc) {
                    hits.push((i, *count));
                }
            }
        }
        // Its turn: the instruction it waits at (a visible one, or a stop), then its private
        // instructions, in one burst; true when it then waits at a visible one with rounds
        // left in the window.
        let budget = rounds.saturating_sub(*count);
        // A stop's test is made in the burst: the thread stops there only where it holds.
        let stops = Stops { pcs: stops, holds: test.as_deref_mut() };
        *count += interp.run_local(machine, tid, budget, stops, stage, visible).ok()?.0;
        Some(*count < rounds && machine.threads[tid.0 as usize].is_runnable())
    })
}
