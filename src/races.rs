//! Data races: a run of the launch under its schedule, step by step, with an observer of every
//! memory access and the lane that made it. Two accesses to one byte race when they are made
//! by different work-items, at least one writes, they are not both atomic, and nothing orders
//! them: in SLM, a barrier of the work-group between them; in global memory, the same within a
//! work-group (work-groups are never ordered); within one hardware thread, the order of its
//! instructions. Lanes of one instruction are work-items too, so two lanes of a scatter
//! writing one address race.
//!
//! Each byte keeps its last write and up to two reads since (by different work-items), with
//! the step, thread, channel, instruction and the work-group's barrier count (its epoch) at
//! the access. Reports are grouped by the pair of instructions and the kind of race, each
//! with a count and its first pair of accesses, whose steps are the recording's (the same
//! schedule): the debugger can go to either.
//!
//! Named barriers order what their producers did before `nbarrier.signal` before what the
//! consumers do after passing `nbarrier.wait`: each thread keeps a clock that its signals
//! advance, each barrier the producers' clocks it released, and a consumer that passes it
//! learns them (a vector clock, kept only for the pairs of threads a named barrier joined).
//! The barrier's own counts, which live in SLM, are synchronisation, not data: their accesses
//! are not checked.
//!
//! Reads of bytes nothing wrote before in the run are reported too: of SLM, and of private
//! memory (the threads' slots of the `%scratch` surface, where IGC puts private arrays it
//! cannot keep in registers, and of stateless private memory, the stack of stack calls).

use std::collections::HashMap;

use crate::exec::{run_bursts_observed, Fault, FaultKind, Interpreter, Observer, Pick, Scheduler};
use crate::isa::{InstIdx, Opcode, PredId};
use crate::launch::NdGeometry;
use crate::machine::{Control, Machine, MemSpace, Scratch, ThreadId};
use crate::program::Program;
use crate::trace::FastMap;

/// One side of a race.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Access {
    pub step: u64,
    pub thread: u32,
    /// The thread's channel (an instruction's lane plus its mask offset; for a block
    /// message, the lane its element belongs to).
    pub channel: u32,
    pub pc: u32,
    pub write: bool,
    pub atomic: bool,
    /// The byte written, or the byte read (as the run's last write to it left it, or as
    /// the launch started).
    pub value: Option<u8>,
    /// The work-group's barriers passed before the access.
    #[serde(skip)]
    epoch: u32,
    #[serde(skip)]
    group: u32,
    /// The thread's named-barrier signals before the access.
    #[serde(skip)]
    signals: u32,
}

impl Access {
    /// Whether `self` and `later` are made by one work-item.
    fn same_work_item(&self, later: &Access) -> bool {
        (self.thread, self.channel) == (later.thread, later.channel)
    }

    /// Whether `self` (earlier) and `later` race on a byte of `space`, `learned` what named
    /// barriers ordered.
    fn races_with(&self, later: &Access, space: MemSpace, learned: &Learned) -> bool {
        if self.same_work_item(later) || (self.atomic && later.atomic) || !(self.write || later.write) {
            return false;
        }
        // A thread's instructions run in order for all its lanes, and IGC relies on it (it
        // drops barriers between steps of a reduction that one thread finishes alone): its
        // lanes race only within one instruction.
        if self.thread == later.thread {
            return self.step == later.step;
        }
        // A barrier of the group orders its accesses (SLM is the group's own), as does a named
        // barrier its producer's signal and its consumer's wait; other groups are never
        // ordered with it.
        let unordered = match space {
            MemSpace::Slm(_) => self.epoch == later.epoch,
            MemSpace::Svm => self.group != later.group || self.epoch == later.epoch,
        };
        unordered && !(self.group == later.group && learned.orders(self, later))
    }
}

/// What named barriers ordered: for a (consumer, producer) pair of threads, the producer's
/// signals the consumer learned by passing a wait (its accesses made before that many
/// signals come before the consumer's from then on).
#[derive(Debug, Default)]
struct Learned(FastMap<(u32, u32), u32>);

impl Learned {
    fn orders(&self, earlier: &Access, later: &Access) -> bool {
        !self.0.is_empty()
            && self.0.get(&(later.thread, earlier.thread)).is_some_and(|&signals| earlier.signals < signals)
    }
}

/// What two racing accesses did.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceKind {
    WriteWrite,
    WriteRead,
    ReadWrite,
}

/// Races between one pair of instructions, of one kind, in one kind of memory.
/// The memory an access went to, as the reports name it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    Global,
    /// The SLM of this work-group.
    Slm(u32),
    /// The reading thread's slot of the scratch surface.
    Private,
    /// The reading thread's slot of stateless private memory, where stack calls keep their
    /// frames.
    Stack,
}

impl Place {
    /// The name the JSON replies give it (`memory`).
    pub fn name(self) -> &'static str {
        match self {
            Place::Global => "global",
            Place::Slm(_) => "slm",
            Place::Private => "private",
            Place::Stack => "stack",
        }
    }

    /// The work-group of an SLM place.
    pub fn slm_group(self) -> Option<u32> {
        match self {
            Place::Slm(g) => Some(g),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Race {
    pub kind: RaceKind,
    /// Global memory or a work-group's SLM.
    pub place: Place,
    /// The first pair found: the earlier access, then the later.
    pub first: Access,
    pub second: Access,
    /// The byte of that pair (for SLM, its offset in the group's SLM).
    pub addr: u64,
    /// Racing pairs of accesses between these instructions (a pair counted once however
    /// many of its bytes race).
    pub count: u64,
}

impl Race {
    /// One paragraph for people: the kind, the count, and both accesses with their source
    /// lines and work-items.
    pub fn render(&self, program: &Program, geometry: Option<&NdGeometry>) -> String {
        let kind = match self.kind {
            RaceKind::WriteWrite => "write-write",
            RaceKind::WriteRead => "write then read",
            RaceKind::ReadWrite => "read then write",
        };
        let place = match self.place {
            Place::Slm(g) => format!("SLM of work-group {g} + {:#x}", self.addr),
            _ => format!("global {:#x}", self.addr),
        };
        let side = |a: &Access| describe(a, program, geometry);
        format!(
            "{kind} race on {place} ({} {}):\n{}\n{}",
            self.count,
            if self.count == 1 { "pair" } else { "pairs" },
            side(&self.first),
            side(&self.second)
        )
    }
}

/// Reads of SLM that no access of the run wrote before (SLM starts undefined on the
/// hardware: vdb's zeros are luck), grouped by instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct UninitRead {
    /// The first such read.
    pub read: Access,
    /// A work-group's SLM, or the reading thread's private memory or stack.
    pub place: Place,
    /// Its first unwritten byte, an offset in the group's SLM or the thread's private memory.
    pub addr: u64,
    /// Reads by this instruction of unwritten bytes (a lane's read counted once).
    pub count: u64,
}

impl UninitRead {
    /// One paragraph for people, as [`Race::render`].
    pub fn render(&self, program: &Program, geometry: Option<&NdGeometry>) -> String {
        let place = match self.place {
            Place::Slm(g) => format!("SLM of work-group {g}"),
            Place::Stack => format!("stack of thread {}", self.read.thread),
            _ => format!("private memory of thread {}", self.read.thread),
        };
        format!(
            "read of uninitialised {place} + {:#x} ({} {}):\n{}",
            self.addr,
            self.count,
            if self.count == 1 { "read" } else { "reads" },
            describe(&self.read, program, geometry)
        )
    }
}

/// A byte's accesses so far.
#[derive(Copy, Clone, Debug, Default)]
struct Byte {
    write: Option<Access>,
    reads: [Option<Access>; 2],
}

/// Bytes per entry of [`Checker::bytes`].
const LINE: u64 = 64;

/// The observer of a race-checking run.
struct Checker<'p> {
    program: &'p Program,
    /// The step being run, and its thread, instruction, exec offset and work-group state.
    now: Access,
    offset: u32,
    lane: Option<u32>,
    /// The SIMD width of the thread being run.
    simd: u32,
    /// Barriers each thread has passed.
    epochs: Vec<u32>,
    /// Named-barrier signals each thread made.
    signals: Vec<u32>,
    /// Each named barrier's producers (by SLM place of its counts) and the signals it
    /// released of each.
    released: FastMap<(MemSpace, u64), FastMap<u32, u32>>,
    learned: Learned,
    /// The step runs `nbarrier`: a signal (true) or a wait.
    named: Option<bool>,
    /// The step runs a block message (SVM, OWord, transposed LSC) of elements of this many
    /// bytes: its element k is lane k's (modulo the SIMD width), counted from its first
    /// address (`block_at`).
    block: Option<u32>,
    block_at: Option<u64>,
    /// The launch's memory as it started, for the values of reads nothing wrote before.
    start: Machine,
    /// Per 64-byte line (one lookup per line an access spans), each byte's accesses.
    bytes: FastMap<(MemSpace, u64), Box<[Byte; LINE as usize]>>,
    races: Vec<Race>,
    by_pair: HashMap<(u32, u32, RaceKind, bool), usize>,
    /// The last pair counted (its bytes are one pair).
    last_pair: Option<(u64, u32, u64, u32)>,
    uninit: Vec<UninitRead>,
    uninit_by_pc: HashMap<u32, usize>,
    /// The last read of unwritten SLM counted (step, channel: its bytes are one read).
    last_uninit: Option<(u64, u32)>,
    /// The threads' private memory in SVM, the scratch surface and the stack, whose
    /// unwritten bytes are reported as SLM's are.
    private: [Option<Scratch>; 2],
}

impl<'p> Checker<'p> {
    fn new(program: &'p Program, start: &Machine) -> Checker<'p> {
        let blank = Access {
            step: 0,
            thread: 0,
            channel: 0,
            pc: 0,
            write: false,
            atomic: false,
            value: None,
            epoch: 0,
            group: 0,
            signals: 0,
        };
        Checker {
            program,
            now: blank,
            offset: 0,
            lane: None,
            simd: 1,
            epochs: Vec::new(),
            signals: Vec::new(),
            released: FastMap::default(),
            learned: Learned::default(),
            named: None,
            block: None,
            block_at: None,
            start: start.clone(),
            bytes: FastMap::default(),
            races: Vec::new(),
            by_pair: HashMap::new(),
            last_pair: None,
            uninit: Vec::new(),
            uninit_by_pc: HashMap::new(),
            last_uninit: None,
            private: [start.scratch, start.stack],
        }
    }

    /// Thread `tid` of `machine` is about to run step `step`.
    fn begin(&mut self, machine: &Machine, tid: ThreadId, step: u64) {
        let t = machine.thread(tid);
        let (pc, group) = (t.control.pc, t.group);
        self.simd = t.simd;
        let inst = self.program.insts.get(pc.0 as usize);
        self.offset = inst.map_or(0, |i| i.exec.offset);
        let t_index = tid.0 as usize;
        if self.epochs.len() <= t_index {
            self.epochs.resize(t_index + 1, 0);
            self.signals.resize(t_index + 1, 0);
        }
        let signals = self.signals[t_index];
        let epoch = &mut self.epochs[t_index];
        self.now = Access {
            step,
            thread: tid.0,
            channel: 0,
            pc: pc.0,
            write: false,
            atomic: inst.is_some_and(|i| i.op.is_atomic()),
            value: None,
            epoch: *epoch,
            group,
            signals,
        };
        // A barrier makes no access: the thread is past it for whatever it does next.
        if inst.is_some_and(|i| i.op == Opcode::Barrier) {
            *epoch += 1;
        }
        self.named = inst
            .filter(|i| i.op == Opcode::Nbarrier)
            .map(|i| !matches!(&i.sub, crate::isa::SubOp::Word(w) if w == "wait"));
        self.block = inst.and_then(|i| block_elements(i, self.program));
        self.block_at = None;
        self.lane = None;
        self.last_pair = None;
        self.last_uninit = None;
    }

    /// A named barrier's write of its counts at `at` in `space`, `old` and `new` (four u32:
    /// producer signals, consumers through, producers, consumers): a producer's signal
    /// releases its accesses so far; a wait that went through learns what was released.
    fn named_barrier(&mut self, signal: bool, space: MemSpace, at: u64, old: &[u8], new: &[u8]) {
        let t = self.now.thread;
        let signals_in = |b: &[u8]| b.get(..4).map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        let released = self.released.entry((space, at)).or_default();
        if signal {
            // A consumer's signal (type 2) counts no signal: it releases nothing.
            if signals_in(new) > signals_in(old) {
                let mine = &mut self.signals[t as usize];
                *mine += 1;
                released.insert(t, *mine);
            }
            return;
        }
        for (&producer, &signals) in released.iter().filter(|&(&p, _)| p != t) {
            let known = self.learned.0.entry((t, producer)).or_default();
            *known = (*known).max(signals);
        }
    }

    /// The byte at `at` of `space` as the launch started.
    fn start_value(&self, space: MemSpace, at: u64) -> Option<u8> {
        let mut b = [0u8];
        match space {
            MemSpace::Svm => self.start.svm.read(at, &mut b).ok()?,
            MemSpace::Slm(g) => self.start.slms.get(g as usize)?.read(at, &mut b).ok()?,
        }
        Some(b[0])
    }

    fn report(&mut self, mut earlier: Access, mut later: Access, space: MemSpace, addr: u64) {
        let pair = (earlier.step, earlier.channel, later.step, later.channel);
        if self.last_pair == Some(pair) {
            return;
        }
        self.last_pair = Some(pair);
        let kind = match (earlier.write, later.write) {
            (true, true) => RaceKind::WriteWrite,
            (true, false) => RaceKind::WriteRead,
            _ => RaceKind::ReadWrite,
        };
        let slm = matches!(space, MemSpace::Slm(_));
        let key = (earlier.pc, later.pc, kind, slm);
        match self.by_pair.get(&key) {
            Some(&i) => self.races[i].count += 1,
            None => {
                // A read of a byte the run had not written: its value as the launch started.
                for a in [&mut earlier, &mut later] {
                    if a.value.is_none() {
                        a.value = self.start_value(space, addr);
                    }
                }
                self.by_pair.insert(key, self.races.len());
                self.races.push(Race {
                    kind,
                    place: match space {
                        MemSpace::Slm(g) => Place::Slm(g),
                        MemSpace::Svm => Place::Global,
                    },
                    first: earlier,
                    second: later,
                    addr,
                    count: 1,
                });
            }
        }
    }

    /// A read of an unwritten byte of `place` at offset `addr` in it.
    fn uninitialised(&mut self, read: Access, place: Place, addr: u64) {
        let who = (read.step, read.channel);
        if self.last_uninit == Some(who) {
            return;
        }
        self.last_uninit = Some(who);
        match self.uninit_by_pc.get(&read.pc) {
            Some(&i) => self.uninit[i].count += 1,
            None => {
                self.uninit_by_pc.insert(read.pc, self.uninit.len());
                self.uninit.push(UninitRead { read, place, addr, count: 1 });
            }
        }
    }

    fn access(&mut self, space: MemSpace, addr: u64, new: Option<&[u8]>, len: u64) {
        let lane = self.lane.take();
        let block_at = match self.block {
            Some(_) => *self.block_at.get_or_insert(addr),
            None => 0,
        };
        let write = new.is_some();
        // What the bytes' histories say, in byte order: races with earlier accesses, and
        // reads of private or SLM bytes nothing wrote (reported once the line is let go).
        let mut found: Vec<(Access, Access, u64)> = Vec::new();
        let mut unwritten: Vec<(Access, Place, u64)> = Vec::new();
        let mut i = 0;
        while i < len {
            let line = (addr + i) / LINE;
            let line_end = ((line + 1) * LINE - addr).min(len);
            let bytes =
                self.bytes.entry((space, line)).or_insert_with(|| Box::new([Byte::default(); LINE as usize]));
            for i in i..line_end {
                // A block message's element k is lane k's (modulo the SIMD width), as the
                // sub-group block reads and writes define it; a message naming no lane
                // otherwise (a 2D block), its dword k.
                let at = addr + i;
                let channel = match (self.block, lane) {
                    (Some(size), _) => {
                        (at.wrapping_sub(block_at) / u64::from(size)) as u32 % self.simd.max(1)
                    }
                    (None, Some(l)) => l + self.offset,
                    (None, None) => (i / 4) as u32 % self.simd.max(1),
                };
                // The byte's history, read in place (a copy of it is three accesses).
                let slot = &mut bytes[(at % LINE) as usize];
                // A read's value: as the last write left it (else, if it is reported, as the
                // launch started).
                let value = new.map(|b| b[i as usize]).or(slot.write.as_ref().and_then(|w| w.value));
                let access = Access { channel, write, value, ..self.now };
                // Private memory: which kind, and the offset in the thread's slot.
                let private = match space {
                    MemSpace::Svm => {
                        let [scratch, stack] = self.private.map(|s| s.and_then(|s| s.locate(at)));
                        scratch.map(|(_, o)| (Place::Private, o)).or(stack.map(|(_, o)| (Place::Stack, o)))
                    }
                    MemSpace::Slm(_) => None,
                };
                if !write && slot.write.is_none() {
                    match (space, private) {
                        (MemSpace::Slm(group), _) => unwritten.push((access, Place::Slm(group), at)),
                        (_, Some((place, offset))) => unwritten.push((access, place, offset)),
                        _ => {}
                    }
                }
                // A private slot is one thread's while it runs; one thread after another may
                // have it (the slots a platform can number run out), which is no race.
                if private.is_none() {
                    let learned = &self.learned;
                    if let Some(w) = slot.write.as_ref().filter(|w| w.races_with(&access, space, learned)) {
                        found.push((*w, access, at));
                    }
                    if write {
                        let reads =
                            slot.reads.iter().flatten().filter(|r| r.races_with(&access, space, learned));
                        found.extend(reads.map(|&r| (r, access, at)));
                    }
                }
                if write {
                    *slot = Byte { write: Some(access), reads: [None, None] };
                } else if slot.reads[0].is_none_or(|r| r.same_work_item(&access)) {
                    slot.reads[0] = Some(access);
                } else {
                    // A reader other than the first: the latest such is kept.
                    slot.reads[1] = Some(access);
                }
            }
            i = line_end;
        }
        for (read, place, at) in unwritten {
            self.uninitialised(read, place, at);
        }
        for (earlier, later, at) in found {
            self.report(earlier, later, space, at);
        }
    }
}

impl Observer for Checker<'_> {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: ThreadId, _: u32, _: &[u8], _: &[u8]) {}
    fn pred(&mut self, _: ThreadId, _: PredId, _: u32, _: u32) {}
    fn addr(&mut self, _: ThreadId, _: u32, _: u32, _: u32) {}
    fn control(&mut self, _: ThreadId, _: &Control, _: &Control) {}
    fn mem(&mut self, _: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        match self.named {
            Some(signal) => self.named_barrier(signal, space, addr, old, new),
            None => self.access(space, addr, Some(new), new.len() as u64),
        }
    }
    fn mem_read(&mut self, _: ThreadId, space: MemSpace, addr: u64, len: u64) {
        if self.named.is_none() {
            self.access(space, addr, None, len);
        }
    }
    fn access_lane(&mut self, lane: Option<u32>) {
        self.lane = lane;
    }
}

/// The outcome of a race-checking run.
#[derive(Debug)]
pub struct RaceRun {
    /// Grouped reports, in the order their first pair was found.
    pub races: Vec<Race>,
    /// Reads of SLM or private bytes nothing wrote before in the run, one report per instruction.
    pub uninit: Vec<UninitRead>,
    pub steps: u64,
    /// The fault that ended the run early, if one did.
    pub fault: Option<Fault>,
}

/// Runs `machine` to the end under `sched`, checking every memory access: in bursts where
/// the schedule allows them (threads run their private instructions ahead, and the accesses
/// are checked in the order and with the step numbers of the round-robin run), else, or
/// after a fault or the step limit (to report it exactly), step by step.
pub fn check_races(interp: &Interpreter, machine: &mut Machine, sched: &mut Scheduler) -> RaceRun {
    let mut checker = Checker::new(&interp.program, machine);
    if sched.bursts_allowed() {
        let (start, start_sched) = (machine.clone(), sched.clone());
        let visible = |c: &mut Checker, m: &Machine, tid: ThreadId, step: u64| c.begin(m, tid, step);
        if run_bursts_observed(interp, machine, sched, &mut checker, visible).is_some() {
            return RaceRun { races: checker.races, uninit: checker.uninit, steps: sched.steps, fault: None };
        }
        (*machine, *sched) = (start, start_sched);
    }
    check_races_stepwise(interp, machine, sched)
}

/// [`check_races`] one step at a time (the reference its bursts are tested against).
pub fn check_races_stepwise(interp: &Interpreter, machine: &mut Machine, sched: &mut Scheduler) -> RaceRun {
    let mut checker = Checker::new(&interp.program, machine);
    let fault = loop {
        let tid = match sched.pick(machine, &mut checker) {
            Ok(Pick::Finished) => break None,
            Ok(Pick::Step(tid)) => tid,
            Err(f) => break Some(f),
        };
        if sched.step_limit != 0 && sched.steps >= sched.step_limit {
            let pc = machine.thread(tid).control.pc;
            break Some(Fault { kind: FaultKind::StepLimit(sched.step_limit), thread: tid, pc });
        }
        checker.begin(machine, tid, sched.steps);
        let info = interp.step(machine, tid, &mut checker);
        sched.steps += 1;
        if let Err(f) = info {
            break Some(f);
        }
    };
    RaceRun { races: checker.races, uninit: checker.uninit, steps: sched.steps, fault }
}

/// One access for people: step, thread, lane and work-item, what it did, where.
fn describe(a: &Access, program: &Program, geometry: Option<&NdGeometry>) -> String {
    let inst = program.inst(InstIdx(a.pc));
    let c = a.channel;
    let who = match geometry.and_then(|g| Some((g, g.work_item(a.thread, c)?))) {
        Some((g, w)) => format!("lane {c}, work-item {}", w.text(g.shown_dims())),
        None => format!("lane {c}"),
    };
    let what = match (a.write, a.value) {
        (true, Some(v)) => format!("writes {v:#04x}"),
        (true, None) => "writes".to_string(),
        (false, Some(v)) => format!("reads {v:#04x}"),
        (false, None) => "reads".to_string(),
    };
    let atomic = if a.atomic { " (atomic)" } else { "" };
    let source =
        program.lines.at(InstIdx(a.pc)).map_or(String::new(), |p| format!("{} ", program.lines.name(p)));
    format!(
        "    step {} thread {} {who}: {what}{atomic} at {source}(line {}) `{}`",
        a.step,
        a.thread,
        inst.span.line,
        program.inst_text(InstIdx(a.pc)).trim()
    )
}

/// The element size of a block message, whose elements are the lanes' of a sub-group block
/// read or write: a transposed LSC message's data size (`lsc_load.ugm (M1_NM, 1) D:d32x8t
/// ...`), or the type of an SVM or OWord block's data variable (IGC declares it with the
/// element type: w for `intel_sub_group_block_read_us`, b for `_uc`, d for the plain one).
fn block_elements(inst: &crate::program::Inst, program: &Program) -> Option<u32> {
    use crate::isa::Operand;
    let data = match inst.op {
        Opcode::SvmBlockLd | Opcode::SvmBlockSt => inst.operands.get(1),
        Opcode::OwordLd | Opcode::OwordLdUnaligned | Opcode::OwordSt => inst.operands.get(2),
        _ => {
            return inst.operands.iter().find_map(|o| match o {
                Operand::LscData(d) if d.transpose => Some(d.data_size.mem_bytes()),
                _ => None,
            })
        }
    };
    match data {
        Some(Operand::Raw(r)) if !r.is_null => Some(program.var(r.var).ty.size()),
        _ => Some(4),
    }
}
