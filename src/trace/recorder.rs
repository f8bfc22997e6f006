//! The recorder: the trace (step records, delta log, indexes) that staged steps are appended
//! to, the checkpoints, and moving a machine to any recorded time by undoing or redoing deltas.

use super::checkpoint::{Checkpoint, Deltas, KEY_EVERY};
use super::controls::ControlTable;
use super::index::{WriteIndex, SEGMENT};
use super::layout::{Layout, Owner, WindowLayout};
use super::log::{self, EntryKind, Kind, Written, Xor};
use super::steps::{StepRecord, Steps, FALLS_THROUGH};
use super::window::{Batch, Stage};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock};

use crate::exec::{PcSet, SchedPos, Scheduler};
use crate::isa::{InstIdx, PredId};
use crate::machine::{
    Control, Fold, Machine, MemSpace, PageChanges, Ranges, Slms, Svm, ThreadId, ThreadState, PAGE_SIZE,
    THREADS_PER_CHUNK,
};

/// A walk backward asks every this many steps of a part that the part before it be read
/// ahead ([`Trace::undo`]).
const READ_AHEAD_EVERY: u64 = 256;

/// Steps per block of the log's offsets: a step's entries start at its block's offset plus
/// the log lengths of the steps before it in the block.
const LOG_BLOCK: u64 = 64;

/// Steps on either side of a seek's target whose threads the seek copies out of the
/// checkpoints ([`Recorder::unshare_near`]): enough for the threads that round-robin steps
/// visit next in a work-group of a few threads.
const UNSHARE_AROUND: u64 = 8;

/// Emptied logs of dropped bodies a trace keeps for its next parts.
const SPARE_LOGS: usize = 4;

/// What a recording holds, in bytes, by part.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecordedBytes {
    /// The delta log.
    pub log: u64,
    /// Step records (and the log's block offsets).
    pub steps: u64,
    /// The control table (thread control states before and after changes beyond the pc).
    pub controls: u64,
    /// The write index.
    pub index: u64,
    /// What checkpoints hold beyond what they share.
    pub checkpoints: u64,
}

impl RecordedBytes {
    pub fn total(&self) -> u64 {
        self.log + self.steps + self.controls + self.index + self.checkpoints
    }
}

/// One write found by a query, with the queried bytes' values around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteHit {
    pub step: u64,
    pub thread: u32,
    pub pc: u32,
    /// Values of the queried range just before and just after the step.
    pub old: Vec<u8>,
    pub new: Vec<u8>,
    /// The first byte of the queried range this step wrote (GRF offset or memory address).
    pub first_written: u64,
}

/// The recorded steps, their log and indexes: everything a recording holds except its
/// checkpoints. Plain data (`Send`): the other cores record traces of their own, which join
/// this one.
///
/// Its steps are held in parts, each a stretch of consecutive steps with their records, log
/// and control table (its body), numbered from its own start. A part begins where a
/// checkpoint was taken (a batch staged there says so), and a second core's parts come after
/// the first's ([`Trace::join`]) without being copied. The body of a part that is complete
/// and starts at a checkpoint may be dropped when the bodies held pass the trace's
/// [`Cache`]: it is recorded again from that checkpoint (through [`Trace::set_rerun`]'s
/// function) the next time a step of it is read.
pub struct Trace {
    /// In step order; never empty. Steps are appended to the last, whose body is held.
    parts: Vec<Part>,
    pub index: WriteIndex,
    /// Per thread: its first and last recorded step (u64::MAX when it has none), so moving a
    /// thread that has no step in that direction answers at once instead of scanning.
    pub first_step: Vec<u64>,
    pub last_step: Vec<u64>,
    /// Records a part's steps again from its checkpoint; without it no body is dropped.
    rerun: Option<Arc<Rerun>>,
    pub cache: Cache,
    /// Advances as parts are sealed; a part read is stamped with it, so that the bodies read
    /// least lately are dropped first.
    clock: AtomicU64,
    /// Bytes of the bodies held of every part but the last.
    held: AtomicU64,
    /// Parts recorded again so far (their bodies read after being dropped).
    rebuilds: AtomicU64,
    /// The thread recording dropped parts' bodies again ahead of a walk backward
    /// ([`Trace::undo`]; started the first time), and how many bodies were taken from it.
    ahead: Mutex<Option<ReadAhead>>,
    taken_ahead: AtomicU64,
    /// Logs of dropped bodies, emptied, for the next parts: memory that is already mapped
    /// (first touches of new log memory were a third of a recording's time).
    spare_logs: Vec<Vec<u8>>,
}

/// Records again the steps that follow a checkpoint, as many as the second argument says:
/// a trace of them alone (one part, numbered from 0), or None when they could not be.
pub type Rerun = dyn Fn(&Checkpoint, u64) -> Option<Trace> + Send + Sync;

/// How much of the complete parts' bodies a trace keeps: `per_step` bytes for every recorded
/// step, and at least `floor` bytes. Past that, the bodies read least lately are dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    pub per_step: u64,
    pub floor: u64,
}

impl Cache {
    /// Everything kept.
    pub const ALL: Cache = Cache { per_step: u64::MAX, floor: u64::MAX };

    /// At most `bytes`, whatever the length.
    pub fn at_most(bytes: u64) -> Cache {
        Cache { per_step: 0, floor: bytes }
    }

    /// The bytes of complete parts' bodies kept at `len` recorded steps.
    pub fn keep(&self, len: u64) -> u64 {
        self.per_step.saturating_mul(len).max(self.floor)
    }

    /// [`Cache::keep`], or None when everything is kept.
    pub fn limit(&self, len: u64) -> Option<u64> {
        (*self != Cache::ALL).then(|| self.keep(len))
    }
}

/// A stretch of consecutive steps: where it starts, the checkpoint there, and its body,
/// held or recorded again on demand.
#[derive(Debug)]
struct Part {
    start: u64,
    /// Its steps and their channel enables, kept when its body is dropped.
    len: u64,
    lane_ops: u64,
    /// The checkpoint at `start`, when there is one to record the part again from.
    from: Option<Arc<Checkpoint>>,
    /// The trace's clock when it was last read.
    used: AtomicU64,
    /// Whether `body` was recorded again (and so counted in the trace's `held`) rather than
    /// appended to.
    rebuilt: AtomicBool,
    /// The instructions its steps ran (kept with the body dropped: a search for steps at
    /// given instructions reads only the parts that ran one).
    pcs: PcSet,
    body: OnceLock<Body>,
}

impl Part {
    fn new(body: Body, from: Option<Arc<Checkpoint>>) -> Part {
        let part = Part::lean(body.start, from);
        let _ = part.body.set(body);
        part
    }

    /// A part from `start` with no body held, for lean steps: its body is recorded again
    /// from `from` when read.
    fn lean(start: u64, from: Option<Arc<Checkpoint>>) -> Part {
        Part {
            start,
            len: 0,
            lane_ops: 0,
            from,
            used: AtomicU64::new(0),
            rebuilt: AtomicBool::new(false),
            pcs: PcSet::default(),
            body: OnceLock::new(),
        }
    }

    /// Drops its body, if held (its log, emptied, to `spare_logs`): the body's bytes, and
    /// whether it had been recorded again.
    fn drop_body(&mut self, spare_logs: &mut Vec<Vec<u8>>) -> Option<(u64, bool)> {
        let mut body = self.body.take()?;
        (self.len, self.lane_ops) = (body.len(), body.steps.lane_ops());
        let bytes = body.bytes();
        body.log.clear();
        if spare_logs.len() < SPARE_LOGS {
            spare_logs.push(std::mem::take(&mut body.log));
        }
        Some((bytes, std::mem::take(self.rebuilt.get_mut())))
    }

    /// The bytes of its body when held and not counted in the trace's `held` (the last
    /// part's, appended to).
    fn uncounted_bytes(&self) -> u64 {
        match self.body.get() {
            Some(body) if !self.rebuilt.load(Ordering::Relaxed) => body.bytes(),
            _ => 0,
        }
    }

    fn len(&self) -> u64 {
        self.body.get().map_or(self.len, Body::len)
    }

    /// Whether one of its steps ran an instruction of `pcs`.
    fn ran_any(&self, pcs: &PcSet) -> bool {
        self.pcs.intersects(pcs)
    }

    /// Notes the instructions `stages` ran.
    fn add_pcs(&mut self, stages: &[Stage]) {
        for stage in stages {
            self.pcs.union_with(&stage.pcs);
        }
    }

    fn lane_ops(&self) -> u64 {
        self.body.get().map_or(self.lane_ops, |b| b.steps.lane_ops())
    }

    /// The trace's step after this part's last.
    fn end(&self) -> u64 {
        self.start + self.len()
    }
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace").field("len", &self.len()).field("parts", &self.parts.len()).finish()
    }
}

/// A step of a trace, with the part and slot it is stored in.
#[derive(Copy, Clone, Debug)]
struct Stored {
    step: u64,
    part: usize,
    slot: u64,
    owner: Owner,
}

/// Consecutive steps of a trace, from `start`: their records, log and control table, with
/// steps, log offsets and control indexes counted from the part's start. Records and log
/// are stored by slot: a step's own number but inside burst windows, which are stored
/// thread by thread (`layout`).
#[derive(Debug, Default)]
struct Body {
    start: u64,
    /// By slot.
    steps: Steps,
    /// By slot.
    log: Vec<u8>,
    /// Log offset of the first slot of each block of [`LOG_BLOCK`] slots.
    log_bases: Vec<u64>,
    controls: ControlTable,
    layout: Layout,
}

impl Default for Trace {
    fn default() -> Trace {
        Trace {
            parts: vec![Part::new(Body::default(), None)],
            index: WriteIndex::default(),
            first_step: Vec::new(),
            last_step: Vec::new(),
            rerun: None,
            cache: Cache::ALL,
            clock: AtomicU64::new(0),
            held: AtomicU64::new(0),
            rebuilds: AtomicU64::new(0),
            ahead: Mutex::new(None),
            taken_ahead: AtomicU64::new(0),
            spare_logs: Vec::new(),
        }
    }
}

/// Machines at recorded times, `interval` steps apart: keys, and deltas after the last key
/// (`checkpoint.rs`).
#[derive(Clone, Debug, Default)]
pub struct Checkpoints {
    pub list: Vec<Arc<Checkpoint>>,
    /// Steps between checkpoints.
    pub interval: u64,
    /// Bytes the checkpoints hold beyond what they share.
    bytes: u64,
    /// Of those, the first checkpoint's.
    first: u64,
    /// The last key checkpoint, which the next ones are deltas from (None: the next is a key).
    key: Option<Key>,
    /// Whether checkpoints between keys are deltas (else every one is a key: what
    /// recordings did before deltas, kept to compare with).
    pub deltas: bool,
}

/// The key checkpoint the next checkpoints are deltas from.
#[derive(Clone, Debug)]
struct Key {
    checkpoint: Arc<Checkpoint>,
    /// The deltas taken since.
    deltas: Deltas,
    /// Checkpoints taken since.
    since: u32,
    /// The register bytes of the threads that ran in the interval after it (the copies it
    /// cost), once the first delta found them.
    interval_copies: Option<u64>,
    /// Register bytes of the live machine's copies of threads since it, counted so far.
    copies_counted: u64,
}

impl Key {
    fn new(checkpoint: &Arc<Checkpoint>) -> Key {
        Key {
            checkpoint: checkpoint.clone(),
            deltas: Deltas::default(),
            since: 0,
            interval_copies: None,
            copies_counted: 0,
        }
    }
}

#[derive(Debug)]
pub struct Recorder {
    pub trace: Trace,
    pub checkpoints: Checkpoints,
}

impl Recorder {
    /// A recorder whose time 0 is `machine`, with `sched` where it stands.
    pub fn new(machine: &Machine, sched: &Scheduler) -> Recorder {
        let mut checkpoints = Checkpoints { interval: 4096, deltas: true, ..Checkpoints::default() };
        checkpoints.take(machine, sched.position(), 0);
        Recorder::with(machine, checkpoints)
    }

    /// A recorder of the `len` steps that follow checkpoint `from` (its time 0 is `from`'s
    /// machine): what a dropped part is recorded again into. `from` is its one checkpoint,
    /// copied (its machine shares every thread and page with it) rather than taken again,
    /// and not counted in the checkpoints' bytes (nothing budgets such a recording). Its
    /// writes are not indexed: the recording the part was dropped from keeps their index.
    pub fn resume(from: &Checkpoint, len: u64) -> Recorder {
        let list = vec![Arc::new(Checkpoint { time: 0, ..from.clone() })];
        // The recording takes the machine's thread count and register file size, which the
        // checkpoint's base has without its patches applied.
        let mut recorder =
            Recorder::with(&from.base, Checkpoints { list, interval: len + 1, ..Checkpoints::default() });
        recorder.trace.index = WriteIndex::off();
        recorder
    }

    fn with(machine: &Machine, checkpoints: Checkpoints) -> Recorder {
        let trace = Trace {
            parts: vec![Part::new(Body::default(), checkpoints.list.first().cloned())],
            // Every thread's file is the program's size; thread 0 says it without building a
            // lazy table's others.
            index: WriteIndex::new(machine.threads.get(0).map_or(0, |t| t.grf.len() as u32)),
            first_step: vec![u64::MAX; machine.threads.len()],
            last_step: vec![u64::MAX; machine.threads.len()],
            ..Trace::default()
        };
        Recorder { trace, checkpoints }
    }

    /// Number of recorded steps (the latest recorded time).
    pub fn len(&self) -> u64 {
        self.trace.len()
    }

    /// Appends `later`, recorded on a second core as `rebase` describes, from this
    /// recording's end: its steps and checkpoints come after this recording's (its
    /// checkpoints rebased; its first, the machine it started from, is this recording's
    /// end, which has one already).
    pub fn join(&mut self, later: Recorder, rebase: &mut Rebase) {
        let offset = self.len();
        let mut list = later.checkpoints.list.into_iter();
        let first = list.next();
        // The scheduler stood where `later`'s did when it started.
        if self.checkpoints.list.last().is_none_or(|c| c.time < offset) {
            let pos = first.as_ref().map_or_else(SchedPos::default, |c| c.sched);
            self.checkpoints.take(rebase.end, pos, offset);
        }
        let first_bytes = first.map_or(0, |c| first_checkpoint_bytes(&c.machine()));
        self.checkpoints.bytes += later.checkpoints.bytes.saturating_sub(first_bytes);
        for ck in list {
            let ck = Arc::unwrap_or_clone(ck).rebased(offset, |m| rebase.machine(m));
            self.checkpoints.list.push(Arc::new(ck));
        }
        // The machine the recording goes on from is the last checkpoint's, whose threads the
        // rebase made anew: the next checkpoint is a key.
        self.checkpoints.key = None;
        let first_joined = self.trace.parts.len();
        self.trace.join(later.trace);
        // The joined parts start from the recording's (rebased) checkpoints, which the list
        // shares, not from the second core's own machines, which would stay held for them.
        let joined = first_joined.min(self.trace.parts.len());
        for k in joined..self.trace.parts.len() {
            let start = self.trace.parts[k].start;
            let ck = Some(self.checkpoint_before(start)).filter(|c| c.time == start).cloned();
            self.trace.parts[k].from = ck;
        }
        self.trace.drop_bodies();
    }

    pub fn is_empty(&self) -> bool {
        self.trace.is_empty()
    }

    /// Bytes of recording held: log, step records, control table, indexes, checkpoints.
    pub fn recorded_bytes(&self) -> u64 {
        self.trace.bytes() + self.checkpoints.bytes
    }

    /// [`Recorder::recorded_bytes`] by part.
    pub fn recorded_bytes_by_part(&self) -> RecordedBytes {
        RecordedBytes { checkpoints: self.checkpoints.bytes, ..self.trace.bytes_by_part() }
    }

    /// Sets `machine` to recorded time `time` from the checkpoint before it, whatever state
    /// it is in.
    pub fn restore(&self, machine: &mut Machine, time: u64) {
        let ck = self.checkpoint_before(time.min(self.len()));
        *machine = ck.machine();
        self.seek(machine, ck.time, time);
    }

    /// The last checkpoint at or before recorded time `time` (there is one at time 0).
    fn checkpoint_before(&self, time: u64) -> &Arc<Checkpoint> {
        let list = &self.checkpoints.list;
        &list[list.partition_point(|c| c.time <= time).saturating_sub(1)]
    }

    /// Moves `machine` from recorded time `now` to recorded time `target` (both ≤ `len()`),
    /// from whichever is nearest: `now`, the checkpoint before `target` (redoing steps) or the
    /// one after it (undoing them). A seek then replays at most half a checkpoint interval,
    /// inside one part (parts start at checkpoints, and `now` is nearer than a checkpoint
    /// only without one in between).
    pub fn seek(&self, machine: &mut Machine, now: u64, target: u64) {
        let target = target.min(self.len());
        let list = &self.checkpoints.list;
        let later = list.get(list.partition_point(|c| c.time < target)).filter(|c| c.time <= self.len());
        let earlier = self.checkpoint_before(target);
        let mut time = now;
        let mut distance = now.abs_diff(target);
        for ck in std::iter::once(earlier).chain(later) {
            if ck.time.abs_diff(target) < distance {
                distance = ck.time.abs_diff(target);
                *machine = ck.machine();
                time = ck.time;
            }
        }
        // The log is walked a range of slots at a time from one end, each slot's entries
        // where the last ones ended (or began), not found again by summing lengths per slot;
        // a part at a time.
        while time < target {
            let (part, from) = self.trace.part(time);
            let to = (target - part.start).min(part.len());
            for slots in part.layout.ranges(from, to) {
                let mut at = part.log_start(slots.start);
                let owner = part.layout.owner(slots.start);
                let steps = slots.clone().map(|slot| {
                    let len = part.steps.log_len(slot) as usize;
                    at += len;
                    (part.record(slot, owner_at(owner, slot - slots.start)), &part.log[at - len..at])
                });
                part.apply_steps(machine, steps, true);
            }
            time = part.start + to;
        }
        while time > target {
            let (part, last) = self.trace.part(time - 1);
            let from = target.max(part.start) - part.start;
            for slots in part.layout.ranges(from, last + 1).into_iter().rev() {
                let mut at = part.log_start(slots.end);
                let owner = part.layout.owner(slots.start);
                let steps = slots.clone().rev().map(|slot| {
                    let len = part.steps.log_len(slot) as usize;
                    at -= len;
                    (part.record(slot, owner_at(owner, slot - slots.start)), &part.log[at..at + len])
                });
                part.apply_steps(machine, steps, false);
            }
            time = part.start + from;
        }
        self.unshare_near(machine, target);
    }

    /// Copies out of the checkpoints what the steps next to `time` change (their threads,
    /// and the SVM pages or SLM they write), so that the reverse or forward steps that
    /// usually follow a seek do not pay for it: the first write to a thread or page that a
    /// checkpoint shares copies it (a Collatz thread: 4.6–6 µs with its chunk of the thread
    /// table; undoing its result store: 5 µs for the page and the map's path to it), which a
    /// seek has the time for and a single step has not.
    ///
    /// Only the parts of the steps just before and at `time`, which the next reverse and
    /// forward steps read, are read (a part whose body was dropped is recorded again).
    fn unshare_near(&self, machine: &mut Machine, time: u64) {
        let len = self.len();
        if len == 0 {
            return;
        }
        let parts = &self.trace.parts;
        let (before, at) =
            (self.trace.part_index(time.saturating_sub(1)).0, self.trace.part_index(time.min(len - 1)).0);
        let (lo, hi) = (parts[before].start, parts[at].end());
        let around = time.saturating_sub(UNSHARE_AROUND).max(lo)..(time + UNSHARE_AROUND).min(len).min(hi);
        for step in around {
            let (bytes, rec) = self.trace.stored_log(self.trace.stored(step));
            let thread = rec.thread;
            if (thread as usize) < machine.threads.len() {
                machine.thread_mut(ThreadId(thread));
            }
            log::for_each_write(bytes, thread, |w| {
                if let Written::Mem { space, addr, len } = w {
                    // The write path of undo and redo with a payload of zeros (a sparse one
                    // with no byte set): the bytes stay, the page or SLM becomes this machine's.
                    let zeros = Xor::Sparse { len: len as usize, skip: 0, map: &[], data: &[] };
                    xor_memory(&mut machine.svm, &mut machine.slms, space, addr, zeros);
                }
            });
        }
    }
}

/// Gives the control entries among a step's log bytes (`[start, end)` of `stage`'s log,
/// copied to `log` at `pos`) the control table's numbers, adding their changes to `table`:
/// they were staged with the stage's own numbering. `next` is how many of the stage's
/// changes earlier steps took, and moves past this step's.
fn number_controls(
    log: &mut [u8],
    table: &mut ControlTable,
    stage: &Stage,
    next: &mut usize,
    pos: usize,
    start: usize,
    end: usize,
) {
    while let Some((at, change)) = stage.controls.get(*next).filter(|(at, _)| (*at as usize) < end) {
        let field = pos + (*at as usize - start) + log::CONTROL_INDEX_AT;
        log[field..field + 4].copy_from_slice(&(table.len() as u32).to_le_bytes());
        table.push(change);
        *next += 1;
    }
}

/// Indexes the memory writes `stage` noted for its step `c`, recorded as step `step`; `next`
/// is how many of its writes are indexed, and moves past this step's.
fn index_mems(index: &mut WriteIndex, stage: &Stage, c: u64, step: u64, next: &mut usize) {
    while let Some(&(_, space, addr, len)) = stage.mems.get(*next).filter(|m| u64::from(m.0) == c) {
        index.add_mem(step, space, addr, len);
        *next += 1;
    }
}

/// Ends a batch: each stage's thread gets its first and last step (`span`, the stage's steps
/// here; none when the first is above the last), and what the stage wrote goes to every
/// index segment those steps span, a superset of the segments each write fell in, as the
/// index may be (a stage that wrote another thread's registers was indexed entry by entry).
fn close_spans(
    index: &mut WriteIndex,
    first_step: &mut [u64],
    last_step: &mut [u64],
    stages: &[Stage],
    span: &[(u64, u64)],
) {
    for (stage, &(first, last)) in stages.iter().zip(span) {
        if first > last {
            continue;
        }
        let t = stage.thread as usize;
        if let Some(f) = first_step.get_mut(t) {
            *f = (*f).min(first);
            last_step[t] = last;
        }
        // A lean stage's writes to other threads are indexed apart; its own, here.
        if !stage.foreign || stage.lean {
            index.add_units(stage.thread, first, last, &stage.written.0, stage.unit_shift);
        }
    }
}

/// The stages of `batch` that ran steps, in the order each round ran them (from `first`,
/// round-robin): the order their steps are numbered and stored in.
fn rotation(batch: &Batch) -> Vec<usize> {
    let k = batch.counts.len();
    (batch.first..k).chain(0..batch.first.min(k)).filter(|&i| batch.counts[i] > 0).collect()
}

/// The layout of `batch`'s steps, from slot `start`, its stages in `order`.
fn window_of(batch: &Batch, start: u64, order: &[usize]) -> WindowLayout {
    WindowLayout::new(
        start,
        order.iter().map(|&i| batch.stages[i].thread).collect(),
        order.iter().map(|&i| batch.counts[i]).collect(),
    )
}

/// Notes in the index that step `step` wrote `w`.
fn index_written(index: &mut WriteIndex, step: u64, w: Written) {
    match w {
        Written::Grf { thread, offset, len } => index.add_grf(step, thread, offset, len),
        Written::Pred { thread, pred } => index.add_pred(step, thread, pred),
        Written::Mem { space, addr, len } => index.add_mem(step, space, addr, len),
    }
}

/// What a recording's first checkpoint holds: the registers of every thread built so far (a
/// lazy table's later threads are counted as checkpoints that hold them are taken) and every SLM.
fn first_checkpoint_bytes(machine: &Machine) -> u64 {
    machine.threads.built().map(|(_, t)| t.grf.len() as u64).sum::<u64>()
        + machine.slms.iter().map(|slm| slm.bytes.len() as u64).sum::<u64>()
}

/// How machines of a recording made on a second core become machines of the whole run:
/// that core took a copy (`start`) of the first core's machine and ran work-groups
/// `first_group..` (threads `first_thread..`) on it, while the first core ran the groups
/// before those and ended with `end`. A later machine then gets the earlier groups' threads
/// and SLMs from `end`, and its SVM is `end`'s with the pages the second core changed since
/// `start` taken in (merged with the first core's changes where both changed a page).
pub struct Rebase<'a> {
    start: &'a Machine,
    end: &'a Machine,
    /// The pages the first core changed.
    changes: PageChanges,
    first_thread: usize,
    first_group: usize,
    /// The SVM of the last later machine rebased, as the second core had it and rebased:
    /// the next one takes in only what changed since (a page or so per checkpoint, where
    /// taking in every page the second core changed costs an insert into the page map each).
    raw: Svm,
    rebased: Svm,
    /// The bytes the second core updated only by atomics that fold ([`Rebase::folding`]).
    folds: Vec<(Fold, Ranges)>,
}

impl<'a> Rebase<'a> {
    /// Right only when the two cores wrote no SVM byte in common (the caller checks).
    pub fn new(start: &'a Machine, end: &'a Machine, first_thread: usize, first_group: usize) -> Rebase<'a> {
        Rebase {
            start,
            end,
            changes: end.svm.changed_since(&start.svm),
            first_thread,
            first_group,
            raw: start.svm.clone(),
            rebased: end.svm.clone(),
            folds: Vec::new(),
        }
    }

    /// Where the second core updated bytes by atomics that fold (`machine::Fold`), which the
    /// first core may have updated too: a later machine's are those updates laid onto
    /// `end`'s values (the join of a plain run's chunk does the same). Right only for a
    /// recording that logged no values (a lean one): its log is made again from the
    /// rebased checkpoints.
    pub fn folding(mut self, folds: Vec<(Fold, Ranges)>) -> Rebase<'a> {
        self.folds = folds;
        self
    }

    /// The whole run's machine at the time `later`, a machine of the second core's, stands
    /// at. Later machines go in time order.
    pub fn machine(&mut self, mut later: Machine) -> Machine {
        later.threads.set_head(&self.end.threads, self.first_thread);
        later.slms.set_head(&self.end.slms, self.first_group);
        let changed = later.svm.changed_since(&self.raw);
        self.rebased.take_pages(&changed, &self.start.svm, &self.changes);
        for (fold, ranges) in &self.folds {
            for (from, to) in ranges.iter() {
                let len = (to - from) as usize;
                let (mut start, mut theirs, mut value) = (vec![0u8; len], vec![0u8; len], vec![0u8; len]);
                let read = self.start.svm.read(from, &mut start).is_ok()
                    && later.svm.read(from, &mut theirs).is_ok()
                    && self.end.svm.read(from, &mut value).is_ok();
                if read {
                    fold.lay(&start, &theirs, &mut value);
                    // Mapped: it was read from the same buffers.
                    let _ = self.rebased.write(from, &value);
                }
            }
        }
        self.raw = std::mem::replace(&mut later.svm, self.rebased.clone());
        later
    }
}

impl Checkpoints {
    /// Steps from `time` until the next checkpoint is due (0: due now).
    pub fn due_in(&self, time: u64) -> u64 {
        let last = self.list.last().map_or(0, |c| c.time);
        (last + self.interval.max(1)).saturating_sub(time)
    }

    /// Takes a checkpoint of `machine` and `sched`, the state at `time`, when one is due.
    pub fn take_if_due(&mut self, machine: &Machine, sched: &Scheduler, time: u64) {
        // A subtraction, not a remainder: a division per step showed up in profiles.
        if self.due_in(time) == 0 {
            self.take(machine, sched.position(), time);
        }
    }

    /// Takes a checkpoint of the state the recording ended in, at `time`, unless there is
    /// one there already.
    pub fn take_at_end(&mut self, machine: &Machine, sched: &Scheduler, time: u64) {
        if self.list.last().is_none_or(|c| c.time < time) {
            self.take(machine, sched.position(), time);
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The checkpoint at time `time`, when the last one was taken there.
    pub fn at(&self, time: u64) -> Option<Arc<Checkpoint>> {
        self.list.last().filter(|c| c.time == time).cloned()
    }

    /// Bytes the checkpoints hold beyond what they share.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// [`Checkpoints::bytes`] but the first checkpoint's: what a recording made from a copy
    /// of another's machine adds to that one's when it joins it ([`Recorder::join`]).
    pub fn bytes_after_first(&self) -> u64 {
        self.bytes - self.first
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Takes a checkpoint: a key when none is due from the last key, else a delta from it.
    pub(super) fn take(&mut self, machine: &Machine, sched: SchedPos, time: u64) {
        let Some(prev) = self.list.last() else {
            self.first = first_checkpoint_bytes(machine);
            self.bytes += self.first;
            let key = Arc::new(Checkpoint::key(time, machine, sched));
            self.key = Some(Key::new(&key));
            self.list.push(key);
            return;
        };
        // Pages and SLMs: a checkpoint shares them with the live machine as a key does.
        let pages = machine.svm.pages_made_since(&prev.base.svm) * PAGE_SIZE;
        let slms = machine.slms.unshared_bytes(&prev.base.slms);
        let table = |chunks: usize| {
            8 * (machine.threads.len().div_ceil(THREADS_PER_CHUNK) + THREADS_PER_CHUNK * chunks) as u64
        };
        let deltas = self.deltas;
        let due = self.key.as_mut().filter(|k| deltas && k.since + 1 < KEY_EVERY);
        // Past the first delta, one holds at most what the first cost a key: the copies of the
        // threads that ran in one interval. None where a delta costs more than a key: the
        // next deltas start from this key.
        let delta = due.and_then(|key| {
            let (ck, patches, full) = Checkpoint::delta(
                time,
                machine,
                sched,
                &key.checkpoint,
                &mut key.deltas,
                key.interval_copies,
            )?;
            key.interval_copies.get_or_insert(full);
            key.since += 1;
            // The live machine's copies of the threads changed since the key are counted as
            // they are made (the key that later shares them counts the rest), so a budget sees
            // them grow step by step, not all at once.
            let copies = full.saturating_sub(key.copies_counted);
            key.copies_counted = key.copies_counted.max(full);
            Some((ck, patches + copies))
        });
        let ck = match delta {
            Some((ck, patches)) => {
                // Its table is the key's.
                self.bytes += patches + pages + slms + table(0);
                Arc::new(ck)
            }
            None => {
                // The threads copied since the last key (the one the previous checkpoint was,
                // or was a delta from), and the chunks of pointers copied with them.
                let last_key = self.key.as_ref().map_or(&prev.base.threads, |k| &k.checkpoint.base.threads);
                let counted = self.key.as_ref().map_or(0, |k| k.copies_counted);
                let (copied, chunks) = machine.threads.unshared_with(last_key);
                let threads: u64 = copied
                    .iter()
                    .map(|(_, t)| {
                        (t.grf.len() + 4 * (t.preds.len() + t.addrs.len()) + 64) as u64
                            + t.control.heap_bytes()
                    })
                    .sum();
                self.bytes += threads.saturating_sub(counted) + pages + slms + table(chunks);
                let key = Arc::new(Checkpoint::key(time, machine, sched));
                self.key = Some(Key::new(&key));
                key
            }
        };
        self.list.push(ck);
    }
}

impl Trace {
    /// Number of recorded steps (the latest recorded time).
    pub fn len(&self) -> u64 {
        self.parts.last().expect("a trace has a part").end()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last part's body, when held (tests look at how it is stored).
    #[cfg(test)]
    fn last_part(&self) -> &Body {
        let last = self.parts.last().expect("a trace has a part");
        last.body.get().expect("the last part's body is held")
    }

    fn last_part_mut(&mut self) -> &mut Body {
        self.parts
            .last_mut()
            .expect("a trace has a part")
            .body
            .get_mut()
            .expect("the last part's body is held")
    }

    /// Part `k`'s body, recorded again from its checkpoint when it was dropped.
    #[inline]
    fn body(&self, k: usize) -> &Body {
        let part = &self.parts[k];
        part.used.store(self.clock.load(Ordering::Relaxed), Ordering::Relaxed);
        part.body.get_or_init(|| {
            part.rebuilt.store(true, Ordering::Relaxed);
            self.rebuild(k, part)
        })
    }

    /// Whether parts' bodies can be dropped and recorded again (and so lean batches
    /// appended).
    pub fn can_rebuild(&self) -> bool {
        self.rerun.is_some()
    }

    /// Readies the last part to be appended to: its body held (recorded again when it was
    /// lean or dropped) and not counted in `held`.
    fn hold_last(&mut self) {
        let k = self.parts.len() - 1;
        if self.parts[k].body.get().is_none() {
            if self.parts[k].len == 0 {
                let start = self.parts[k].start;
                let log = self.spare_logs.pop().unwrap_or_default();
                let _ = self.parts[k].body.set(Body { start, log, ..Body::default() });
                return;
            }
            self.body(k);
        }
        let part = &mut self.parts[k];
        if std::mem::take(part.rebuilt.get_mut()) {
            let bytes = part.body.get().map_or(0, Body::bytes);
            let held = self.held.get_mut();
            *held = held.saturating_sub(bytes);
        }
    }

    /// Drops the last part's body, if held, for lean steps to follow (it is recorded again
    /// from the part's checkpoint when read).
    fn drop_last(&mut self) {
        let part = self.parts.last_mut().expect("a trace has a part");
        // Only a body recorded again is counted in `held` (an appended one is not yet).
        if let Some((bytes, true)) = part.drop_body(&mut self.spare_logs) {
            let held = self.held.get_mut();
            *held = held.saturating_sub(bytes);
        }
    }

    /// The body of part `k` (`part`), whose body was dropped, from its steps recorded again:
    /// on another thread already ([`Trace::read_ahead`]), or now.
    #[cold]
    fn rebuild(&self, k: usize, part: &Part) -> Body {
        // Bodies are dropped only where both are there.
        let (Some(rerun), Some(from)) = (&self.rerun, &part.from) else {
            unreachable!("a part without a checkpoint or a way to record again lost its body")
        };
        let (again, counter) = match self.take_ahead(k) {
            Some(body) => (Some(body), &self.taken_ahead),
            None => (record_body(rerun.as_ref(), from, part.len), &self.rebuilds),
        };
        // The recording is deterministic from a checkpoint: anything else is vdb's bug.
        let mut body = again.filter(|b| b.len() == part.len).unwrap_or_else(|| {
            panic!(
                "steps {}..{} did not record again from their checkpoint",
                part.start,
                part.start + part.len
            )
        });
        body.start = part.start;
        self.held.fetch_add(body.bytes(), Ordering::Relaxed);
        counter.fetch_add(1, Ordering::Relaxed);
        body
    }

    /// Part `k`'s body as the thread reading ahead recorded it (waiting for it to finish),
    /// if that thread reads part `k` and could record it.
    fn take_ahead(&self, k: usize) -> Option<Body> {
        let worker = self.ahead.lock().ok()?;
        let (slot, done) = &*worker.as_ref()?.slot;
        let mut slot = slot.lock().ok()?;
        while matches!(*slot, Some(Ahead::Recording(j)) if j == k) {
            slot = done.wait(slot).ok()?;
        }
        match slot.take() {
            Some(Ahead::Recorded(j, body)) if j == k => body.map(|b| *b),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Asks the thread reading ahead (started with the first lean part or drop, else here) to
    /// record part `k`'s body again, when it was dropped and that thread is not recording
    /// another or has not recorded this one already (one at a time; a recorded one not taken
    /// is let go).
    fn read_ahead(&self, k: usize) {
        let (Some(part), Some(rerun)) = (self.parts.get(k), &self.rerun) else { return };
        let (Some(from), None) = (&part.from, part.body.get()) else { return };
        let Ok(mut worker) = self.ahead.lock() else { return };
        if worker.is_none() {
            *worker = ReadAhead::start();
        }
        let Some(worker) = worker.as_ref() else { return };
        let Ok(mut slot) = worker.slot.0.lock() else { return };
        match *slot {
            Some(Ahead::Recording(_)) => return,
            Some(Ahead::Recorded(j, _)) if j == k => return,
            _ => {}
        }
        if worker.jobs.send((k, rerun.clone(), from.clone(), part.len)).is_ok() {
            *slot = Some(Ahead::Recording(k));
        }
    }

    /// How many bodies a walk backward found recorded ahead ([`Trace::undo`]).
    pub fn taken_ahead(&self) -> u64 {
        self.taken_ahead.load(Ordering::Relaxed)
    }

    /// Lets the trace drop bodies, recording them again with `rerun` when they are read.
    pub fn set_rerun(&mut self, rerun: Arc<Rerun>) {
        self.rerun = Some(rerun);
        self.drop_bodies();
    }

    /// Drops the bodies read least lately, of complete parts that can be recorded again,
    /// until those held fit the cache; their logs are kept, emptied, for the next parts.
    pub fn drop_bodies(&mut self) {
        if self.rerun.is_none() || self.parts.len() < 2 {
            return;
        }
        let keep = self.cache.keep(self.len());
        let mut held = *self.held.get_mut();
        if held <= keep {
            return;
        }
        let last = self.parts.len() - 1;
        let mut order: Vec<usize> = (0..last)
            .filter(|&k| self.parts[k].from.is_some() && self.parts[k].body.get().is_some())
            .collect();
        order.sort_by_key(|&k| self.parts[k].used.load(Ordering::Relaxed));
        let mut dropped = false;
        for k in order {
            if held <= keep {
                break;
            }
            if let Some((bytes, _)) = self.parts[k].drop_body(&mut self.spare_logs) {
                held = held.saturating_sub(bytes);
                dropped = true;
            }
        }
        *self.held.get_mut() = held;
        if dropped {
            self.start_reading_ahead();
        }
    }

    /// Starts the thread that reads dropped parts ahead, if not started: with the first part
    /// without its body, while the run records (starting a thread takes tens of microseconds,
    /// which the reverse step that first asks for a part would otherwise pay).
    fn start_reading_ahead(&mut self) {
        if let (Some(_), Ok(worker @ None)) = (&self.rerun, self.ahead.get_mut()) {
            *worker = ReadAhead::start();
        }
    }

    /// Ends the last part where a checkpoint was taken (`from`, at the trace's end): the
    /// steps appended next go to a new part that starts from it.
    fn cut(&mut self, from: &Arc<Checkpoint>, lean: bool) {
        let start = self.len();
        debug_assert_eq!(from.time, start, "a part starts at its checkpoint");
        self.index.cut(start);
        let last = self.parts.last_mut().expect("a trace has a part");
        if last.len() == 0 {
            last.from = Some(from.clone());
            return;
        }
        *self.held.get_mut() += last.uncounted_bytes();
        self.clock.fetch_add(1, Ordering::Relaxed);
        let part = if lean {
            self.start_reading_ahead();
            Part::lean(start, Some(from.clone()))
        } else {
            let log = self.spare_logs.pop().unwrap_or_default();
            Part::new(Body { start, log, ..Body::default() }, Some(from.clone()))
        };
        self.parts.push(part);
        self.drop_bodies();
    }

    /// The part holding step `step` (the last part past the end), and the step's number in it.
    #[inline]
    fn part(&self, step: u64) -> (&Body, u64) {
        let (k, i) = self.part_index(step);
        (self.body(k), i)
    }

    /// The parts holding steps of `[from, to)`, by index.
    fn spanned(&self, from: u64, to: u64) -> impl Iterator<Item = usize> + '_ {
        let first = if from < to { self.part_index(from).0 } else { self.parts.len() };
        (first..self.parts.len()).take_while(move |&k| self.parts[k].start < to).filter(move |&k| {
            let p = &self.parts[k];
            from < p.end() && p.len() > 0
        })
    }

    /// [`Trace::part`] by the part's index.
    #[inline]
    fn part_index(&self, step: u64) -> (usize, u64) {
        let last = self.parts.len() - 1;
        let k = if step >= self.parts[last].start {
            last
        } else {
            self.parts.partition_point(|p| p.start <= step).saturating_sub(1)
        };
        (k, step - self.parts[k].start)
    }

    /// Where step `step` is stored.
    fn stored(&self, step: u64) -> Stored {
        let (part, i) = self.part_index(step);
        let (slot, owner) = self.body(part).layout.slot(i);
        Stored { step, part, slot, owner }
    }

    /// The log bytes and record of a stored step.
    fn stored_log(&self, s: Stored) -> (&[u8], StepRecord) {
        let part = self.body(s.part);
        (part.log_range(s.slot), part.record(s.slot, s.owner))
    }

    /// The record and entries of a stored step.
    fn stored_step(&self, s: Stored) -> (StepRecord, Vec<log::Entry<'_>>) {
        let (bytes, rec) = self.stored_log(s);
        (rec, log::decode(bytes, rec.thread))
    }

    /// Step `step`'s record. Panics when there is no step `step`, as a slice index would.
    #[inline]
    pub fn at(&self, step: u64) -> StepRecord {
        let s = self.stored(step);
        self.body(s.part).record(s.slot, s.owner)
    }

    pub fn get(&self, step: u64) -> Option<StepRecord> {
        (step < self.len()).then(|| self.at(step))
    }

    /// The last step's record.
    pub fn last(&self) -> Option<StepRecord> {
        self.len().checked_sub(1).map(|step| self.at(step))
    }

    /// The thread of step `step` alone (what scans for one thread's steps read).
    #[inline]
    pub fn thread(&self, step: u64) -> u32 {
        let s = self.stored(step);
        self.body(s.part).thread_of(s.owner)
    }

    /// Channel enables summed over every step (lane operations).
    pub fn lane_ops(&self) -> u64 {
        self.parts.iter().map(Part::lane_ops).sum()
    }

    /// How many parts hold the steps (one from each checkpoint on).
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// How many parts have been recorded again so far, their bodies read after being dropped.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }

    /// How many parts have their bodies held (the others are recorded again when read).
    pub fn parts_held(&self) -> usize {
        self.parts.iter().filter(|p| p.body.get().is_some()).count()
    }

    /// The first step of each part.
    pub fn part_starts(&self) -> impl Iterator<Item = u64> + '_ {
        self.parts.iter().map(|p| p.start)
    }

    /// Appends `later`, a trace of the steps that follow this one's last, recorded from
    /// time 0 on a machine of its own (whose threads this trace's steps did not touch):
    /// its parts become this trace's last, renumbered, and its index and thread spans join
    /// this one's. Nothing of its log or records is copied.
    pub fn join(&mut self, later: Trace) {
        let offset = self.len();
        let Trace { parts, index, first_step, last_step, spare_logs, held, .. } = later;
        self.spare_logs.extend(spare_logs);
        // This trace's last part becomes a complete one when a part follows.
        if parts.iter().any(|p| p.len() > 0) {
            let last = self.parts.last().map_or(0, Part::uncounted_bytes);
            *self.held.get_mut() += last + held.into_inner();
        }
        self.parts.extend(parts.into_iter().filter(|p| p.len() > 0).map(|mut p| {
            p.start += offset;
            if let Some(body) = p.body.get_mut() {
                body.start += offset;
            }
            p
        }));
        for k in 0..self.parts.len() {
            if self.parts[k].start >= offset {
                self.index.cut(self.parts[k].start);
            }
        }
        self.index.join(index, offset);
        for (t, (&first, &last)) in first_step.iter().zip(&last_step).enumerate() {
            if first == u64::MAX {
                continue;
            }
            if let Some(f) = self.first_step.get_mut(t) {
                *f = (*f).min(first + offset);
                self.last_step[t] = last + offset;
            }
        }
    }

    /// Bytes that say where windows' steps are stored (`layout.rs`): part of the step records'
    /// bytes in [`Trace::bytes_by_part`].
    pub fn layout_bytes(&self) -> u64 {
        self.parts.iter().filter_map(|p| p.body.get()).map(|b| b.layout.bytes()).sum()
    }

    /// Bytes held: log, step records, control table, indexes.
    pub fn bytes(&self) -> u64 {
        // Kept as parts are completed, dropped and recorded again: what a recording checks
        // its budget against step by step costs no walk over the parts.
        let last = self.parts.last().map_or(0, Part::uncounted_bytes);
        self.index.bytes() + self.held.load(Ordering::Relaxed) + last
    }

    /// [`Trace::bytes`] by part (checkpoints are not the trace's: 0 here).
    pub fn bytes_by_part(&self) -> RecordedBytes {
        let mut bytes = RecordedBytes { index: self.index.bytes(), ..RecordedBytes::default() };
        for b in self.parts.iter().filter_map(|p| p.body.get()) {
            bytes.log += b.log.len() as u64;
            bytes.controls += b.controls.bytes();
            bytes.steps += b.bytes() - b.log.len() as u64 - b.controls.bytes();
        }
        bytes
    }

    /// Appends a batch's steps, numbered in the round-robin order its stages ran in (round by
    /// round, from the stage at `first`): stored thread by thread where the batch allows
    /// (`append_narrow`), in step order otherwise.
    pub fn append_batch(&mut self, batch: &Batch) {
        if let Some(from) = &batch.from {
            self.cut(from, batch.lean);
        }
        let stages = &batch.stages[..batch.counts.len()];
        self.parts.last_mut().expect("a trace has a part").add_pcs(stages);
        if batch.lean {
            self.append_lean(batch);
            return;
        }
        self.hold_last();
        let stages = &batch.stages[..batch.counts.len()];
        if stages.iter().all(|s| !s.foreign && !s.wide) && self.append_narrow(batch) {
            return;
        }
        self.append_general(batch);
    }

    /// [`Trace::append_batch`] when every record fits the step columns' narrow form and
    /// every stage wrote only its own thread's registers (the stages note both): the batch
    /// is stored thread by thread, as it was staged (its [`WindowLayout`]): each stage's log
    /// in one copy, its records into room made for the whole batch. False, with nothing
    /// changed, when the columns are wide or the batch is too small to be worth a layout
    /// entry. One step at a time in step order (through
    /// [`Steps::push`] and `extend_from_slice`), appending took 0.26 s of a Collatz
    /// recording's CPU; interleaving in place, 0.13 s.
    fn append_narrow(&mut self, batch: &Batch) -> bool {
        let k = batch.counts.len();
        let stages = &batch.stages[..k];
        let n = batch.steps() as usize;
        let step0 = self.len();
        let Trace { parts, index, first_step, last_step, .. } = self;
        let Some(Body { start, steps, log, log_bases, controls, layout }) =
            parts.last_mut().and_then(|p| p.body.get_mut())
        else {
            return false;
        };
        let local0 = step0 - *start;
        // The stages with steps in rotation order: the order each round ran them in, and the
        // order they are stored in.
        let order = rotation(batch);
        // A few steps (a single step, a window cut short) are stored in step order, each
        // naming its thread: cheaper than a layout entry.
        if (n as u64) < WindowLayout::bytes_for(order.len()) / 2 {
            return false;
        }
        let Some(mut tail) = steps.narrow_tail(n) else { return false };
        let window = window_of(batch, local0, &order);
        log.reserve(stages.iter().map(|s| s.log.len()).sum::<usize>());
        // Per stage: its first and last step here; and the batch's memory writes with their
        // steps, which the index takes in step order.
        let mut span = vec![(u64::MAX, 0u64); k];
        let mut mems = Vec::new();
        let mut slot = 0;
        for (p, &i) in order.iter().enumerate() {
            let stage = &stages[i];
            let count = batch.counts[i] as usize;
            let base = log.len();
            let end = stage.steps[count - 1].log_end() as usize;
            log.extend_from_slice(&stage.log[..end]);
            let mut start = 0;
            for staged in &stage.steps[..count] {
                if (local0 + slot as u64).is_multiple_of(LOG_BLOCK) {
                    log_bases.push((base + start) as u64);
                }
                let end = staged.log_end() as usize;
                tail.pc[slot] = staged.pc as u16;
                tail.chen[slot] = staged.chen as u16;
                tail.set_log(slot, (end - start) as u32, !staged.own_control());
                start = end;
                slot += 1;
            }
            number_controls(log, controls, stage, &mut 0, base, 0, end);
            let step = |c: u64| step0 + window.step_of(p, c);
            span[i] = (step(0), step(count as u64 - 1));
            let noted = stage.mems.iter().take_while(|m| (m.0 as usize) < count);
            mems.extend(noted.map(|&(c, space, addr, len)| (step(u64::from(c)), space, addr, len)));
        }
        debug_assert!(slot == n);
        mems.sort_unstable_by_key(|m| m.0);
        for (step, space, addr, len) in mems {
            index.add_mem(step, space, addr, len);
        }
        layout.push(window);
        close_spans(index, first_step, last_step, stages, &span);
        true
    }

    /// [`Trace::append_batch`] of lean stages: the index, the threads' spans and the last
    /// part's count of steps and lane operations; no body (the part is recorded again from
    /// its checkpoint when a step of it is read).
    fn append_lean(&mut self, batch: &Batch) {
        self.drop_last();
        let k = batch.counts.len();
        let stages = &batch.stages[..k];
        let step0 = self.len();
        let order = rotation(batch);
        let window = window_of(batch, 0, &order);
        let mut span = vec![(u64::MAX, 0u64); k];
        let (mut mems, mut foreign) = (Vec::new(), Vec::new());
        let mut lane_ops = 0u64;
        for (p, &i) in order.iter().enumerate() {
            let stage = &stages[i];
            let count = batch.counts[i] as usize;
            let step = |c: u64| step0 + window.step_of(p, c);
            span[i] = (step(0), step(count as u64 - 1));
            let noted = stage.mems.iter().take_while(|m| (m.0 as usize) < count);
            mems.extend(noted.map(|&(c, space, addr, len)| (step(u64::from(c)), space, addr, len)));
            let writes = stage.foreign_writes.iter().take_while(|w| (w.0 as usize) < count);
            foreign.extend(writes.map(|(c, w)| (step(u64::from(*c)), w)));
            // Every step a stage staged is counted (a window that faults stages nothing).
            debug_assert_eq!(stage.count as usize, count);
            lane_ops += stage.lane_ops;
        }
        mems.sort_unstable_by_key(|m| m.0);
        let Trace { parts, index, first_step, last_step, .. } = self;
        for (step, space, addr, len) in mems {
            index.add_mem(step, space, addr, len);
        }
        close_spans(index, first_step, last_step, stages, &span);
        foreign.sort_by_key(|w| w.0);
        for (step, w) in foreign {
            index_written(index, step, *w);
        }
        let last = parts.last_mut().expect("a trace has a part");
        last.len += batch.steps();
        last.lane_ops += lane_ops;
    }

    /// [`Trace::append_batch`] one step at a time, for any batch.
    fn append_general(&mut self, batch: &Batch) {
        let k = batch.counts.len();
        // Room for the whole batch first: no growth checks that fail inside the loop.
        let part = self.last_part_mut();
        part.log.reserve(batch.stages[..k].iter().map(|s| s.log.len()).sum());
        part.steps.reserve(batch.steps() as usize);
        let mut controls = vec![0usize; k];
        // Per stage: its first and last step here, and its memory writes indexed so far.
        let mut span = vec![(u64::MAX, 0u64); k];
        let mut mems = vec![0usize; k];
        let rounds = batch.counts.iter().copied().max().unwrap_or(0);
        // The stages in round-robin order from `first` (no division per step).
        let order = (batch.first..k).chain(0..batch.first.min(k));
        for c in 0..rounds {
            for i in order.clone() {
                if c < batch.counts[i] {
                    let stage = &batch.stages[i];
                    let step = self.append_staged(stage, c as usize, &mut controls[i]);
                    span[i] = (span[i].0.min(step), step);
                    if !stage.foreign {
                        index_mems(&mut self.index, stage, c, step, &mut mems[i]);
                    }
                }
            }
        }
        let Trace { index, first_step, last_step, .. } = self;
        close_spans(index, first_step, last_step, &batch.stages[..k], &span);
    }

    /// Appends step `c` of `stage` (its log bytes and record) as the next step, and returns
    /// its number. `control` is how many of the stage's control-table changes earlier steps
    /// took, and moves past this step's. The index entries and thread spans are the batch's
    /// to add, from what the stage noted, unless the stage wrote another thread's registers:
    /// then its index entries are read from the step's entries here.
    fn append_staged(&mut self, stage: &Stage, c: usize, control: &mut usize) -> u64 {
        let staged = stage.steps[c];
        let log_start = c.checked_sub(1).map_or(0, |p| stage.steps[p].log_end());
        let log_end = staged.log_end();
        let bytes = &stage.log[log_start as usize..log_end as usize];
        let step = self.len();
        let Trace { parts, index, .. } = self;
        let part = parts.last_mut().and_then(|p| p.body.get_mut()).expect("the last part's body is held");
        let base = part.log.len();
        part.log.extend_from_slice(bytes);
        let (start, end) = (log_start as usize, log_end as usize);
        number_controls(&mut part.log, &mut part.controls, stage, control, base, start, end);
        let thread = stage.thread;
        if stage.foreign {
            log::for_each_write_span(bytes, thread, |w| index_written(index, step, w));
        }
        let flag = if staged.own_control() { 0 } else { FALLS_THROUGH };
        if (step - part.start).is_multiple_of(LOG_BLOCK) {
            part.log_bases.push(base as u64);
        }
        let len = (log_end - log_start) & !FALLS_THROUGH;
        part.steps.push(StepRecord { thread, pc: staged.pc, chen: staged.chen, log: len | flag });
        step
    }

    /// Applies step `step`'s deltas forward (time step → step+1) or backward. Payloads are
    /// applied as the log stores them, nothing allocated (but SVM writes over 256 bytes): this
    /// is what goto and reverse steps spend their time in.
    /// Returns the part the step is in.
    fn apply(&self, machine: &mut Machine, step: u64, forward: bool) -> usize {
        let s = self.stored(step);
        let (bytes, rec) = self.stored_log(s);
        self.body(s.part).apply_steps(machine, std::iter::once((rec, bytes)), forward);
        s.part
    }

    /// Redoes step `step` (time step → step + 1).
    pub fn redo(&self, machine: &mut Machine, step: u64) {
        let _ = self.apply(machine, step, true);
    }

    /// Undoes step `step` (time step + 1 → step). A walk backward has the part before the
    /// one it is in read ahead, on another thread, when that part's body was dropped (asked
    /// every [`READ_AHEAD_EVERY`] steps of a part, its first step included), so that the
    /// step into that part finds its body ready instead of waiting for its recording.
    pub fn undo(&self, machine: &mut Machine, step: u64) {
        let k = self.apply(machine, step, false);
        if k > 0 && (step - self.parts[k].start).is_multiple_of(READ_AHEAD_EVERY) {
            self.read_ahead(k - 1);
        }
    }

    /// The first write the log holds that the write index does not name (its step and
    /// location), if any: the index must name every one, for queries to find them.
    pub fn write_not_indexed(&self) -> Option<(u64, Written)> {
        let mut missing = None;
        for step in 0..self.len() {
            let (bytes, rec) = self.stored_log(self.stored(step));
            log::for_each_write(bytes, rec.thread, |w| {
                if missing.is_none() && !self.index.names(step, &w) {
                    missing = Some((step, w));
                }
            });
            if missing.is_some() {
                break;
            }
        }
        missing
    }

    /// The log entries of one step (for `trace` output and watchpoints).
    pub fn entries(&self, step: u64) -> Vec<log::Entry<'_>> {
        self.stored_step(self.stored(step)).1
    }

    /// Control-table change `index` of step `step`'s entries: the state before and after.
    pub fn control_change(&self, step: u64, index: u32) -> Option<(Control, Control)> {
        self.part(step).0.controls.get(index)
    }

    /// Writes to GRF bytes `[offset, offset+len)` of `thread` before time `now`, newest first,
    /// with the range's values around each (`current` = the bytes at `now`). At most `limit`.
    pub fn grf_writes(
        &self,
        thread: u32,
        offset: u32,
        len: u32,
        now: u64,
        current: &[u8],
        limit: usize,
    ) -> Vec<WriteHit> {
        let segments = self.index.grf_segments(thread, offset, len, now);
        self.walk(
            self.steps_in(thread, segments, now),
            current,
            limit,
            |kind, t| match kind {
                EntryKind::Grf { offset: o, xor } if t == thread => Some((*o as u64, &xor[..])),
                _ => None,
            },
            offset as u64,
        )
    }

    /// Steps in `[from, to)` whose instruction is one of `pcs`, in step order: the pc column
    /// read slot by slot (a lookup of each step's slot would cost more than the scan).
    pub fn steps_at(&self, pcs: &PcSet, from: u64, to: u64) -> Vec<u64> {
        let mut steps = Vec::new();
        let ran = self.spanned(from, to).filter(|&k| self.parts[k].ran_any(pcs));
        for part in ran.map(|k| self.body(k)) {
            let (a, b) = (from.max(part.start) - part.start, to.min(part.end()) - part.start);
            for slots in part.layout.ranges(a, b) {
                for slot in slots {
                    if pcs.contains(part.steps.pc_at(slot)) {
                        steps.push(part.start + part.layout.step(slot));
                    }
                }
            }
        }
        steps.sort_unstable();
        steps
    }

    /// Steps in `[from, to)` that wrote memory `[addr, addr+len)` or a byte of its 64-byte
    /// lines, oldest first (from the memory index: a superset that the caller checks step by
    /// step).
    pub fn mem_write_steps(&self, space: MemSpace, addr: u64, len: u64, from: u64, to: u64) -> Vec<u64> {
        let mut steps: Vec<u64> =
            self.index.mem_steps(space, addr, len, to).into_iter().take_while(|&s| s >= from).collect();
        steps.reverse();
        steps
    }

    /// Steps of `thread` in `[from, to)` that may have written its GRF bytes
    /// `[offset, offset+len)`, oldest first (every step of the thread in a 1024-step segment
    /// the register index marks: a superset that the caller checks step by step).
    pub fn grf_write_steps(&self, thread: u32, offset: u32, len: u32, from: u64, to: u64) -> Vec<u64> {
        let segments = self.index.grf_segments(thread, offset, len, to);
        let mut steps: Vec<u64> =
            self.steps_in(thread, segments, to).map(|s| s.step).take_while(|&s| s >= from).collect();
        steps.reverse();
        steps
    }

    /// Writes to memory `[addr, addr+len)` before `now`, newest first.
    pub fn mem_writes(
        &self,
        space: MemSpace,
        addr: u64,
        len: u64,
        now: u64,
        current: &[u8],
        limit: usize,
    ) -> Vec<WriteHit> {
        let steps = self.index.mem_steps(space, addr, len, now);
        self.walk(
            steps.into_iter().map(|step| self.stored(step)),
            current,
            limit,
            |kind, _| match kind {
                EntryKind::Mem { space: s, addr: a, xor } if *s == space => Some((*a, &xor[..])),
                _ => None,
            },
            addr,
        )
    }

    /// Writes to a predicate before `now`, newest first (values as 4 little-endian bytes).
    pub fn pred_writes(
        &self,
        thread: u32,
        pred: PredId,
        now: u64,
        current: u32,
        limit: usize,
    ) -> Vec<WriteHit> {
        let segments = self.index.pred_segments(thread, pred.0, now);
        let steps = self.steps_in(thread, segments, now);
        let mut value = current;
        let mut hits = Vec::new();
        for stored in steps {
            let (rec, entries) = self.stored_step(stored);
            for e in entries {
                if let EntryKind::Pred { pred: p, xor } = e.kind {
                    if p == pred.0 && e.thread == thread {
                        let old = value ^ xor;
                        hits.push(WriteHit {
                            step: stored.step,
                            thread: rec.thread,
                            pc: rec.pc,
                            old: old.to_le_bytes().to_vec(),
                            new: value.to_le_bytes().to_vec(),
                            first_written: 0,
                        });
                        value = old;
                    }
                }
            }
            if hits.len() >= limit {
                break;
            }
        }
        hits
    }

    /// The first and last steps `thread` has in the recording (none: an empty span, `(1, 0)`;
    /// a thread the recording does not know: every step).
    fn span(&self, thread: u32) -> (u64, u64) {
        let t = thread as usize;
        match (self.first_step.get(t), self.last_step.get(t)) {
            (Some(&u64::MAX), _) => (1, 0),
            (Some(&first), Some(&last)) => (first, last),
            _ => (0, u64::MAX),
        }
    }

    /// `thread`'s steps from `floor` (included) to `before`, newest first, with their
    /// records. Windows' slots of other threads are skipped whole, not looked at one by one.
    pub fn thread_steps_back(
        &self,
        thread: u32,
        floor: u64,
        before: u64,
    ) -> impl Iterator<Item = (u64, StepRecord)> + '_ {
        // Only within the thread's span: no part outside it is read (or recorded again).
        let (first, last) = self.span(thread);
        let (floor, before) = (floor.max(first), before.min(self.len()).min(last.saturating_add(1)));
        let segments = (before > floor).then(|| (floor / SEGMENT..=(before - 1) / SEGMENT).rev());
        let segments = segments.into_iter().flatten().map(|s| s * SEGMENT..(s + 1) * SEGMENT);
        self.steps_in(thread, segments, before)
            .take_while(move |s| s.step >= floor)
            .map(|s| (s.step, self.body(s.part).record(s.slot, s.owner)))
    }

    /// `thread`'s steps in `[from, to)`, oldest first, a segment of [`SEGMENT`] steps at a time
    /// (windows' slots of other threads skipped whole).
    pub fn thread_steps_ahead(&self, thread: u32, from: u64, to: u64) -> impl Iterator<Item = u64> + '_ {
        let (first, last) = self.span(thread);
        let (from, to) = (from.max(first), to.min(self.len()).min(last.saturating_add(1)));
        let segments = (to > from).then(|| from / SEGMENT..=(to - 1) / SEGMENT);
        segments.into_iter().flatten().flat_map(move |segment| {
            let range = (segment * SEGMENT).max(from)..((segment + 1) * SEGMENT).min(to);
            let mut steps: Vec<u64> =
                self.thread_steps_within(thread, range).iter().map(|s| s.step).collect();
            steps.sort_unstable();
            steps
        })
    }

    /// `thread`'s steps in `range`, in no particular order, from every part it spans.
    fn thread_steps_within(&self, thread: u32, range: std::ops::Range<u64>) -> Vec<Stored> {
        let (lo, hi) = (range.start, range.end);
        let mut steps = Vec::new();
        for (k, part) in self.spanned(lo, hi).map(|k| (k, self.body(k))) {
            let (a, b) = (lo.max(part.start) - part.start, hi.min(part.end()) - part.start);
            part.thread_steps(thread, a, b, k, &mut steps);
        }
        steps
    }

    /// `thread`'s steps before `before` in `pieces` (index segment pieces, newest first),
    /// newest first: the candidates the register index gives. A piece lies in one part, its
    /// body read (and recorded again, when it was dropped) only when the walk gets there.
    fn steps_in<'a>(
        &'a self,
        thread: u32,
        pieces: impl Iterator<Item = std::ops::Range<u64>> + 'a,
        before: u64,
    ) -> impl Iterator<Item = Stored> + 'a {
        let before = before.min(self.len());
        pieces.flat_map(move |piece| {
            let range = piece.start.min(before)..piece.end.min(before);
            let mut steps = self.thread_steps_within(thread, range);
            steps.sort_unstable_by_key(|s| std::cmp::Reverse(s.step));
            steps
        })
    }

    /// Walks candidate steps newest first, un-XORing the queried range as it goes.
    fn walk<F>(
        &self,
        steps: impl IntoIterator<Item = Stored>,
        current: &[u8],
        limit: usize,
        pick: F,
        base: u64,
    ) -> Vec<WriteHit>
    where
        F: for<'e> Fn(&'e EntryKind<'_>, u32) -> Option<(u64, &'e [u8])>,
    {
        let mut value = current.to_vec();
        let end = base + value.len() as u64;
        let mut hits = Vec::new();
        for stored in steps {
            let after = value.clone();
            let mut first: Option<u64> = None;
            let (rec, entries) = self.stored_step(stored);
            for e in entries.iter().rev() {
                let Some((at, xor)) = pick(&e.kind, e.thread) else { continue };
                let lo = at.max(base);
                let hi = (at + xor.len() as u64).min(end);
                for b in lo..hi {
                    value[(b - base) as usize] ^= xor[(b - at) as usize];
                }
                if lo < hi {
                    first = Some(first.map_or(lo, |f: u64| f.min(lo)));
                }
            }
            if let Some(first_written) = first {
                hits.push(WriteHit {
                    step: stored.step,
                    thread: rec.thread,
                    pc: rec.pc,
                    old: value.clone(),
                    new: after,
                    first_written,
                });
                if hits.len() >= limit {
                    break;
                }
            }
        }
        hits
    }
}

impl Body {
    fn len(&self) -> u64 {
        self.steps.len() as u64
    }

    /// Bytes held: log, records, where windows' steps are, control table.
    fn bytes(&self) -> u64 {
        self.log.len() as u64
            + self.steps.bytes()
            + self.log_bases.len() as u64 * 8
            + self.layout.bytes()
            + self.controls.bytes()
    }

    /// The trace's step after this part's last.
    fn end(&self) -> u64 {
        self.start + self.len()
    }

    /// Adds `thread`'s steps among this part's steps `from..to` to `steps`, in no particular
    /// order (`part`: this part's index). A window's slots for one thread are together: its
    /// other threads' are skipped whole.
    fn thread_steps(&self, thread: u32, from: u64, to: u64, part: usize, steps: &mut Vec<Stored>) {
        for slots in self.layout.ranges(from, to) {
            if slots.is_empty() {
                continue;
            }
            let stored = |slot, step, owner| Stored { step: self.start + step, part, slot, owner };
            match self.layout.owner(slots.start) {
                Owner::Window(t) if t == thread => {
                    let owner = Owner::Window(t);
                    steps.extend(slots.map(|slot| stored(slot, self.layout.step(slot), owner)));
                }
                Owner::Window(_) => {}
                first @ Owner::Pushed(_) => {
                    for slot in slots.clone() {
                        let owner = owner_at(first, slot - slots.start);
                        if self.thread_of(owner) == thread {
                            steps.push(stored(slot, slot, owner));
                        }
                    }
                }
            }
        }
    }

    /// Where slot `slot`'s entries start in the log (the log's end for `slot == len()`).
    fn log_start(&self, slot: u64) -> usize {
        if slot >= self.len() {
            return self.log.len();
        }
        let block = slot / LOG_BLOCK;
        (self.log_bases[block as usize] + self.steps.log_bytes(block * LOG_BLOCK, slot)) as usize
    }

    /// Slot `slot`'s entries in the log.
    fn log_range(&self, slot: u64) -> &[u8] {
        let start = self.log_start(slot);
        &self.log[start..start + self.steps.log_len(slot) as usize]
    }

    /// The thread of a slot whose owner is `owner`.
    #[inline]
    fn thread_of(&self, owner: Owner) -> u32 {
        match owner {
            Owner::Window(thread) => thread,
            Owner::Pushed(k) => self.steps.pushed_thread(k),
        }
    }

    /// The record in slot `slot`, whose owner is `owner`.
    #[inline]
    fn record(&self, slot: u64, owner: Owner) -> StepRecord {
        self.steps.record(slot, self.thread_of(owner))
    }

    /// Applies the deltas of steps (`rec` and its entries), forward or backward, one after
    /// another in the order given. A run of one thread's steps finds that thread (making it
    /// this machine's own, two reference counts checked) once, not for each entry: on a seek
    /// that lookup cost more than most steps' entries. Changes a step makes on behalf of
    /// another thread (a barrier release) touch only that thread, so they are applied after
    /// the run, in the run's order.
    fn apply_steps<'b>(
        &self,
        machine: &mut Machine,
        steps: impl Iterator<Item = (StepRecord, &'b [u8])>,
        forward: bool,
    ) {
        let mut steps = steps.peekable();
        let mut others = Vec::new();
        while let Some(&(first, _)) = steps.peek() {
            let Machine { threads, svm, slms, .. } = &mut *machine;
            let Some(t) = threads.get_mut(first.thread as usize) else {
                panic!("no thread {}", first.thread)
            };
            let t = Arc::make_mut(t);
            while let Some((rec, bytes)) = steps.next_if(|(r, _)| r.thread == first.thread) {
                if self.apply_own(t, svm, slms, rec, bytes, forward) {
                    others.push((rec, bytes));
                }
            }
            for (rec, bytes) in others.drain(..) {
                self.apply_others(machine, rec, bytes, forward);
            }
        }
    }

    /// Applies what step `rec` changed in its own thread `t` and in memory; true when it also
    /// changed another thread.
    fn apply_own(
        &self,
        t: &mut ThreadState,
        svm: &mut Svm,
        slms: &mut Slms,
        rec: StepRecord,
        bytes: &[u8],
        forward: bool,
    ) -> bool {
        if !forward && rec.falls_through() {
            t.control.pc = InstIdx(rec.pc);
        }
        // XOR entries commute, so they go in log order either way. Control and pc entries set
        // a state: backward they go last to first (`sets_backward`).
        let mut others = false;
        for e in log::entries_whole(bytes, rec.thread) {
            let e = match e {
                log::Applied::Entry(e) => e,
                log::Applied::Lanes { offset, size, lanes, xor } => {
                    if let Some(bytes) = t.grf.get_mut(offset as usize..) {
                        log::xor_lanes(bytes, size, lanes, xor);
                    }
                    continue;
                }
            };
            match e.kind {
                Kind::Mem { space, addr, xor } => xor_memory(svm, slms, space, addr, xor),
                _ if e.thread != rec.thread => others = true,
                kind => self.apply_entry(t, kind, forward),
            }
        }
        if !forward {
            for e in sets_backward(bytes, rec.thread, |thread| thread == rec.thread) {
                self.set_control(&mut t.control, &e.kind, false);
            }
        }
        if forward && rec.falls_through() {
            t.control.pc = InstIdx(rec.pc + 1);
        }
        others
    }

    /// Applies what step `rec` changed in threads other than its own.
    fn apply_others(&self, machine: &mut Machine, rec: StepRecord, bytes: &[u8], forward: bool) {
        for e in log::entries_whole(bytes, rec.thread) {
            match e {
                log::Applied::Entry(e) if e.thread != rec.thread && !matches!(e.kind, Kind::Mem { .. }) => {
                    self.apply_entry(machine.thread_mut(ThreadId(e.thread)), e.kind, forward)
                }
                _ => {}
            }
        }
        if !forward {
            for e in sets_backward(bytes, rec.thread, |thread| thread != rec.thread) {
                self.set_control(&mut machine.thread_mut(ThreadId(e.thread)).control, &e.kind, false);
            }
        }
    }

    /// Applies one entry's change to its thread `t` (a control or pc entry only forward).
    fn apply_entry(&self, t: &mut ThreadState, kind: Kind<Xor<'_>>, forward: bool) {
        match kind {
            Kind::Grf { offset, xor } => {
                if let Some(bytes) = t.grf.get_mut(offset as usize..) {
                    xor.apply(bytes);
                }
            }
            Kind::Pred { pred, xor } => t.preds[pred as usize] ^= xor,
            Kind::Addr { slot, xor } => t.addrs[slot as usize] ^= xor,
            Kind::Control { .. } | Kind::Pc { .. } if forward => {
                self.set_control(&mut t.control, &kind, true)
            }
            Kind::Control { .. } | Kind::Pc { .. } | Kind::Mem { .. } => {}
        }
    }

    /// Sets a thread's control state (or pc) to what a control or pc entry holds after its
    /// step (`forward`) or before it.
    fn set_control(&self, control: &mut Control, kind: &Kind<Xor<'_>>, forward: bool) {
        match *kind {
            Kind::Pc { old, new } => control.pc = InstIdx(if forward { new } else { old }),
            Kind::Control { index } => {
                if let Some((old, new)) = self.controls.get(index) {
                    *control = if forward { new } else { old };
                }
            }
            _ => {}
        }
    }
}

/// What the thread reading ahead is doing: recording part `k`'s body again, or done (None
/// when it could not: the part is then recorded again where it is read, which says why).
enum Ahead {
    Recording(usize),
    Recorded(usize, Option<Box<Body>>),
}

/// A part's recording again asked of the thread reading ahead: the part, and what records it.
type Job = (usize, Arc<Rerun>, Arc<Checkpoint>, u64);

/// The thread that records dropped parts' bodies again ahead of a walk backward
/// ([`Trace::undo`]), one at a time; it ends when the trace is dropped.
struct ReadAhead {
    jobs: mpsc::Sender<Job>,
    /// What it is doing, and a signal when it is done.
    slot: Arc<(Mutex<Option<Ahead>>, Condvar)>,
}

impl ReadAhead {
    /// The thread, waiting for parts to record; None when no thread can be started.
    fn start() -> Option<ReadAhead> {
        let (jobs, asked) = mpsc::channel::<Job>();
        let slot = Arc::new((Mutex::new(None), Condvar::new()));
        let theirs = slot.clone();
        let thread = std::thread::Builder::new().name("vdb-read-ahead".into());
        let started = thread.spawn(move || {
            for (k, rerun, from, len) in asked {
                let run = std::panic::AssertUnwindSafe(|| record_body(rerun.as_ref(), &from, len));
                let body = std::panic::catch_unwind(run).ok().flatten().map(Box::new);
                let (slot, done) = &*theirs;
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(Ahead::Recorded(k, body));
                }
                done.notify_all();
            }
        });
        started.ok().map(|_| ReadAhead { jobs, slot })
    }
}

/// The control and pc entries of a step of `owner` (its log `bytes`) of the threads `of`
/// takes, last to first: backward, the first one's old state is the one that remains (a
/// second pass over the few entries of one step, not a buffer).
fn sets_backward<'a>(
    bytes: &'a [u8],
    owner: u32,
    of: impl Fn(u32) -> bool + Copy + 'a,
) -> impl Iterator<Item = log::LogEntry<Xor<'a>>> + 'a {
    let sets = move || {
        log::entries_whole(bytes, owner).filter_map(move |e| match e {
            log::Applied::Entry(e)
                if of(e.thread) && matches!(e.kind, Kind::Control { .. } | Kind::Pc { .. }) =>
            {
                Some(e)
            }
            _ => None,
        })
    };
    (0..sets().count()).rev().filter_map(move |k| sets().nth(k))
}

/// A part's body recorded again: the `len` steps after checkpoint `from`.
fn record_body(rerun: &Rerun, from: &Checkpoint, len: u64) -> Option<Body> {
    rerun(from, len).and_then(|mut t| t.parts.swap_remove(0).body.into_inner())
}

/// The owner of the slot `i` after the first of a range of slots whose first is `first`'s:
/// a window's range is one thread's; outside windows, slots are pushed steps in order.
#[inline]
fn owner_at(first: Owner, i: u64) -> Owner {
    match first {
        Owner::Window(t) => Owner::Window(t),
        Owner::Pushed(k) => Owner::Pushed(k + i),
    }
}

/// Whether a control change moved only the pc (logged as a pc entry, not a table entry).
pub(super) fn pc_only(old: &Control, new: &Control) -> bool {
    old.em == new.em
        && old.call_mask == new.call_mask
        && old.status == new.status
        && old.waiting == new.waiting
        && old.stack == new.stack
}

fn xor_memory(svm: &mut Svm, slms: &mut Slms, space: MemSpace, addr: u64, xor: Xor<'_>) {
    match space {
        MemSpace::Svm => {
            // SVM pages are copy-on-write behind `Svm::read`/`write`: the bytes go through a
            // buffer, on the stack for every payload the sparse form takes (undo and redo
            // allocate only for long block writes).
            let (mut stack, mut heap) = ([0u8; log::MAX_SPARSE], Vec::new());
            let bytes = match stack.get_mut(..xor.len()) {
                Some(bytes) => bytes,
                None => {
                    heap.resize(xor.len(), 0);
                    &mut heap[..]
                }
            };
            if svm.read(addr, bytes).is_ok() {
                xor.apply(bytes);
                let _ = svm.write(addr, bytes);
            }
        }
        MemSpace::Slm(group) => {
            if let Some(slm) = slms.get_mut(group as usize) {
                if let Some(range) = slm.bytes.get_mut(addr as usize..addr as usize + xor.len()) {
                    xor.apply(range);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Observer, StepHooks};

    /// An empty trace for `threads` threads of 4 KiB of GRF in 64-byte registers.
    fn trace_for(threads: usize) -> Trace {
        Trace {
            index: WriteIndex::new(4096),
            first_step: vec![u64::MAX; threads],
            last_step: vec![u64::MAX; threads],
            ..Trace::default()
        }
    }

    /// A stage notes its own thread's writes for the index; one that wrote another thread's
    /// registers has its steps indexed from their entries instead. Either way every write is
    /// found.
    #[test]
    fn stages_index_their_writes_and_foreign_ones_from_entries() {
        for foreign in [false, true] {
            let mut trace = trace_for(8);
            let mut batch = Batch::default();
            batch.stages.push(Stage::default());
            batch.counts.push(2);
            let stage = &mut batch.stages[0];
            stage.thread = 3;
            stage.unit_shift = crate::trace::index::unit_shift(4096);
            let (old, new) = ([0u8; 8], [1u8; 8]);
            stage.begin_step();
            stage.grf(ThreadId(3), 128, &old, &new);
            stage.end_step(0, 1);
            stage.begin_step();
            stage.mem(ThreadId(3), MemSpace::Svm, 0x2000, &old[..4], &new[..4]);
            stage.pred(ThreadId(3), PredId(2), 0, 1);
            if foreign {
                stage.grf(ThreadId(5), 64, &old, &new);
            }
            stage.end_step(1, 1);
            assert_eq!(stage.foreign, foreign);
            trace.append_batch(&batch);
            assert_eq!(trace.len(), 2);
            let pieces: Vec<_> = trace.index.grf_segments(3, 128, 8, 2).map(|r| (r.start, r.end)).collect();
            assert_eq!(pieces, [(0, SEGMENT)]);
            assert_eq!(trace.index.grf_segments(3, 0, 64, 2).count(), 0);
            assert_eq!(trace.index.pred_segments(3, 2, 2).count(), 1);
            assert_eq!(trace.index.mem_steps(MemSpace::Svm, 0x2000, 1, 2), [1]);
            assert_eq!(trace.index.grf_segments(5, 64, 8, 2).count(), usize::from(foreign));
            // And the queries find the steps.
            let hits = trace.grf_writes(3, 128, 8, 2, &new, 4);
            assert_eq!(hits.iter().map(|h| h.step).collect::<Vec<_>>(), [0]);
            let hits = trace.mem_writes(MemSpace::Svm, 0x2000, 4, 2, &new[..4], 4);
            assert_eq!(hits.iter().map(|h| h.step).collect::<Vec<_>>(), [1]);
        }
    }

    /// A batch of stages with uneven counts, started mid-rotation: stored thread by thread
    /// (every record narrow) it makes the trace that appending one step at a time in step
    /// order makes: records and entries of every step, log and control table sizes, index
    /// and thread spans. Steps of every log length (none, short, over 64 bytes, and the stage's
    /// last bytes) and a second batch after the first are covered; a stage noted as wide
    /// goes the general way.
    #[test]
    fn windows_appended_in_place_match_step_by_step() {
        use crate::machine::{ThreadStatus, WaitList};
        let control = |pc: u32, em: u32| Control {
            pc: InstIdx(pc),
            em,
            call_mask: 0,
            waiting: WaitList::default(),
            stack: Vec::new(),
            status: ThreadStatus::Running,
        };
        let batch = |threads: [u32; 3], counts: [u64; 3], first: usize, big_pc: bool| {
            let mut batch = Batch::default();
            for (i, (&thread, &count)) in threads.iter().zip(&counts).enumerate() {
                let mut stage = Stage::default();
                stage.thread = thread;
                stage.unit_shift = crate::trace::index::unit_shift(4096);
                for c in 0..count as u32 {
                    stage.begin_step();
                    let (old, new) = ([c as u8; 96], [(c * 7 + i as u32) as u8 ^ 0x5a; 96]);
                    match (c + i as u32) % 5 {
                        0 => {}
                        1 => stage.grf(ThreadId(thread), 32 * c, &old[..8], &new[..8]),
                        2 => stage.grf(ThreadId(thread), 64, &old, &new),
                        3 => {
                            stage.mem(
                                ThreadId(thread),
                                MemSpace::Svm,
                                0x1000 + 16 * u64::from(c),
                                &old[..4],
                                &new[..4],
                            );
                            stage.control(ThreadId(thread), &control(c, 0xffff), &control(c + 1, 0xff));
                        }
                        _ => stage.pred(ThreadId(thread), PredId(1), c, !c),
                    }
                    let pc = if big_pc && c == 1 { 0x1_0000 } else { 10 + c };
                    stage.end_step(pc, 0xffff >> i);
                }
                batch.stages.push(stage);
                batch.counts.push(count);
            }
            batch.first = first;
            batch
        };
        let (mut in_place, mut by_step) = (trace_for(16), trace_for(16));
        let batches = [
            batch([4, 5, 6], [70, 3, 41], 1, false),
            batch([7, 8, 9], [1, 0, 130], 2, false),
            batch([4, 5, 6], [3, 9, 2], 0, true),
        ];
        assert!(batches[2].stages.iter().any(|s| s.wide) && !batches[0].stages.iter().any(|s| s.wide));
        let mut windowed = 0;
        for batch in &batches {
            in_place.append_batch(batch);
            by_step.append_general(batch);
            if !batch.stages.iter().any(|s| s.wide) {
                windowed += batch.steps();
            }
            let (a, b) = (&in_place, &by_step);
            assert_eq!(a.len(), b.len());
            assert_eq!(a.write_not_indexed(), None);
            assert_eq!(b.write_not_indexed(), None);
            assert_eq!((&a.first_step, &a.last_step), (&b.first_step, &b.last_step));
            // Step by step the same records and entries, though stored in another order
            // (control changes numbered in it: compared by the changes they name).
            for step in 0..a.len() {
                assert_eq!(a.at(step), b.at(step), "step {step}");
                let (ea, eb) = (a.entries(step), b.entries(step));
                assert_eq!(ea.len(), eb.len(), "step {step}");
                for (x, y) in ea.iter().zip(&eb) {
                    match (&x.kind, &y.kind) {
                        (EntryKind::Control { index: i }, EntryKind::Control { index: j }) => {
                            let (ca, cb) = (a.control_change(step, *i), b.control_change(step, *j));
                            assert!(ca.is_some() && ca == cb, "step {step}");
                        }
                        _ => assert_eq!(x, y, "step {step}"),
                    }
                }
            }
            let (a, b) = (a.last_part(), b.last_part());
            // Two bytes less a window's step: its layout names its threads.
            assert_eq!(a.steps.bytes() + 2 * windowed, b.steps.bytes());
            assert_eq!((a.log.len(), a.log_bases.len()), (b.log.len(), b.log_bases.len()));
            assert_eq!(a.controls.len(), b.controls.len());
        }
        assert!(in_place.last_part().layout.bytes() > 0, "windows stored thread by thread");
        let part = in_place.last_part();
        assert!(part.log.len() > 1000 && part.controls.len() > 10);
    }
}
