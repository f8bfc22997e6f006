//! A debugging session: one recorded run, a position in its time, focus, breakpoints and
//! watchpoints, and the commands that move and inspect. The TUI and `vdb batch` both drive
//! this; nothing here prints.

mod args;
pub mod command;
mod compare;
pub mod expr;
pub mod format;
mod frontier;
mod handlers;
mod history;
mod lines;
mod motion;
mod split;
pub mod types;
mod why;
mod workitems;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Serialize;

use crate::exec::{Fault, Interpreter, PcSet, Scheduler};
use crate::isa::{Family, InstIdx, UnitId};
use crate::launch::raw::{KernelArg, Launch, Output};
use crate::launch::NdGeometry;
use crate::machine::{Machine, MemSpace, ThreadId};
use crate::program::Program;
use crate::trace::{Batch, Cache, Recorder};

pub use command::{
    parse, parse_size, BreakLoc, CodeLayout, Command, CommandError, Format, InfoWhat, ThreadSet, WatchKind,
};
pub use expr::{Condition, RegionRef, ValueCondition};
pub use handlers::{space_name, Reply};
pub use history::{FrameInfo, LaneEvent, MaskStep};
pub use motion::hex;
pub use types::{ElemType, TypedBuffer, TypedChange, TypedValue};
pub use why::{Place, WhyNode, WhyWriter};

/// How the recorded run ended at its frontier, once it has.
#[derive(Clone, Debug, PartialEq)]
pub enum EndState {
    Finished,
    Fault(Fault),
    /// The recording budget ran out; everything recorded stays usable.
    RecordLimit(u64),
}

/// Why a movement stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum StopReason {
    /// The requested steps were done.
    Step,
    Breakpoint {
        id: u32,
    },
    Watchpoint(WatchHit),
    /// Reached step 0 going backwards.
    Start,
    /// Reached the end of the run.
    End,
    Fault {
        message: String,
    },
    /// Ctrl-C.
    Interrupted,
    RecordLimit {
        bytes: u64,
    },
}

/// A watchpoint trigger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WatchHit {
    pub id: u32,
    /// "write" or "read".
    pub access: &'static str,
    /// The step that accessed the location.
    pub step: u64,
    pub thread: u32,
    pub line: u32,
    /// The OpenCL source position (`k.cl:13`), where the kernel has line information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub instruction: String,
    /// Lanes that accessed it, where the instruction says.
    pub lanes: Vec<u32>,
    /// The work-items those lanes hold (global ids as `work_item_text` writes them), for
    /// OpenCL launches.
    pub workitems: Vec<String>,
    /// Hex bytes of the watched range before and after the step.
    pub old: String,
    pub new: String,
    /// The same values as the buffer's elements, when the range is whole elements of a typed
    /// buffer (`type`, `old_value`, `new_value`, `old_hex`, `new_hex` in JSON). Boxed: most
    /// stops have none, and a stop reason stays small.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub typed: Option<Box<TypedChange>>,
}

/// What a watchpoint watches.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchTarget {
    Memory {
        space: MemSpace,
        addr: u64,
        len: u64,
    },
    /// GRF byte ranges of one thread.
    Register {
        thread: u32,
        ranges: Vec<(u32, u32)>,
        text: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Watchpoint {
    pub id: u32,
    pub kind: WatchKind,
    pub target: WatchTarget,
    /// `watch … if == 7`: only accesses after which the watched value satisfies it stop (and
    /// count as hits).
    pub cond: Option<ValueCondition>,
    pub enabled: bool,
    pub hits: u64,
    /// Hits still to pass without stopping (`ignore`).
    pub ignore: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Breakpoint {
    pub id: u32,
    pub pcs: Vec<InstIdx>,
    pub text: String,
    pub cond: Option<Condition>,
    pub enabled: bool,
    pub hits: u64,
    /// Hits still to pass without stopping (`ignore`).
    pub ignore: u64,
    /// A `tbreak`: deleted when it stops a movement.
    pub temporary: bool,
}

/// A `display`: a `print` or `x` shown after every movement.
#[derive(Clone, Debug, PartialEq)]
pub struct Display {
    pub id: u32,
    pub cmd: Command,
}

impl Display {
    /// What it shows, as it would be typed after `display`.
    pub fn text(&self) -> String {
        self.cmd.shown_text().unwrap_or_default()
    }
}

/// One session over one launch.
pub struct Session {
    pub program: Arc<Program>,
    pub interp: Interpreter,
    /// The machine at time `now`.
    pub machine: Machine,
    pub now: u64,
    pub recorder: Recorder,
    /// The scheduler as it stands at the frontier (time `recorder.len()`).
    sched: Scheduler,
    pub end: Option<EndState>,
    pub focus: ThreadId,
    pub lane: u32,
    pub breakpoints: Vec<Breakpoint>,
    pub watchpoints: Vec<Watchpoint>,
    next_id: u32,
    pub marks: BTreeMap<String, u64>,
    pub displays: Vec<Display>,
    next_display: u32,
    /// Recording budget in bytes.
    pub record_limit: u64,
    pub buffers: Vec<(String, u64, u64)>,
    pub thread_labels: Vec<([u32; 3], u32)>,
    /// Which work-item each lane holds (OpenCL launches).
    pub geometry: Option<NdGeometry>,
    /// The kernel's arguments as bound (OpenCL launches).
    pub args: Vec<KernelArg>,
    pub outputs: Vec<Output>,
    pub base_dir: PathBuf,
    /// Set from another thread (Ctrl-C) to stop a long movement.
    pub interrupt: Arc<AtomicBool>,
    /// Called every few thousand steps of a long movement with (step, recorded steps); a
    /// front end shows progress here and returns true to interrupt (Ctrl-C in the TUI).
    pub progress: Option<Box<dyn FnMut(u64, u64) -> bool>>,
    /// Whether `continue` and `goto` at the frontier record in burst windows
    /// ([`crate::trace::record_window`]); tests turn it off to compare with recording step by
    /// step (and schedules other than round-robin run without them).
    pub window_recording: bool,
    /// Whether the frontier records lean (`trace::Batch::lean`): the index and the steps'
    /// count, each part recorded again from its checkpoint when first read. Off, every
    /// step's log and record are kept as it is recorded (the cache may drop them later).
    pub lean_recording: bool,
    /// Whether stepping commands check every step as it is made instead of searching the
    /// recording for the focused thread's steps (the reference the tests hold the search to).
    pub check_each_step: bool,
    /// Cores recording may use (1 by default: front ends set it from the machine, as the
    /// engine reads no system files). With more than one, a recording to the end shares its
    /// work-groups not yet started with the other cores (`session::split`).
    pub cores: usize,
    /// With several cores: whether a recording to the end shares its work-groups (tests
    /// turn it off to compare).
    pub split_groups: bool,
    /// A `continue` with breakpoints or watchpoints records a stretch at a time, from 8192
    /// steps, doubling, and searches each; once a stretch would be longer than this (after
    /// about twice as many steps without a stop), it records the rest of the run, shared
    /// with the other cores (each testing the breakpoints as it records), and searches that.
    pub split_after: u64,
    /// Whether that was tried in this recording (once: after an interrupt, a later
    /// `continue` may try again).
    split_tried: bool,
    /// Staging buffers of single steps and burst windows, kept between them so that their
    /// memory is reused.
    spare_batches: Vec<Batch>,
    /// Step by step until this time (after a window that could not run).
    windows_from: u64,
    /// Where recording in windows pauses (a movement that records ahead of its stops and
    /// then looks for them in the recording sets it; the windows may pass it by one window).
    windows_until: u64,
    /// How far the next step forward from the frontier records ahead in windows before it
    /// is redone from the recording (doubled each time within a command, reset by each).
    ahead: u64,
    /// The instructions that access memory (memory messages, atomics, barriers): where read
    /// and access watchpoints look for their steps.
    memory_pcs: PcSet,
    /// During a `continue` with breakpoints: what windows test before a breakpoint's
    /// instructions, the stretches they recorded with it (oldest first), and the steps at
    /// which a breakpoint's condition held (in order).
    probe: Option<crate::trace::Probe<'static>>,
    probed: Vec<(u64, u64)>,
    probe_hits: Vec<u64>,
    /// The machine and scheduler at step 0 (the race check runs the launch again from them).
    start: Box<(Machine, Scheduler)>,
    /// The race check's reports (races, reads of unwritten SLM), once made (the run is
    /// deterministic).
    checked: Option<(Vec<crate::races::Race>, Vec<crate::races::UninitRead>)>,
    /// Steps recorded in burst windows (the rest were recorded one at a time).
    pub window_steps: u64,
    /// `source` files being run, innermost last (their nesting is bounded).
    sourcing: u32,
    /// What the source pane shows, and so which file `break LINE` and `list` mean.
    pub layout: CodeLayout,
}

/// The recording budget a session starts with; front ends set `record_limit` from the
/// machine's memory (the engine reads no system files).
pub const DEFAULT_RECORD_LIMIT: u64 = 4 << 30;

/// How much of a recording's parts a session keeps held: 24 bytes a step, 64 MiB at
/// least; the rest is recorded again from its checkpoint when it is read.
pub const LOG_CACHE: Cache = Cache { per_step: 24, floor: 64 << 20 };

impl Session {
    pub fn new(launch: Launch) -> Session {
        let Launch { program, machine, scheduler, outputs, base_dir, thread_labels, buffers, geometry, args } =
            launch;
        let mut recorder = Recorder::new(&machine, &scheduler);
        // Burst windows (and the other cores) reproduce the round-robin order only.
        let window_recording = scheduler.bursts_allowed();
        let interp = Interpreter::new(program.clone());
        recorder.trace.cache = LOG_CACHE;
        recorder.trace.set_rerun(frontier::rerun(interp.clone(), scheduler.clone(), window_recording));
        let start = Box::new((machine.clone(), scheduler.clone()));
        let memory = |i: &crate::program::Inst| matches!(i.op.family(), Family::Memory | Family::Sync);
        let memory_pcs =
            PcSet::new(program.insts.iter().enumerate().filter(|(_, i)| memory(i)).map(|(pc, _)| pc as u32));
        Session {
            interp,
            program,
            machine,
            now: 0,
            recorder,
            sched: scheduler,
            end: None,
            focus: ThreadId(0),
            lane: 0,
            breakpoints: Vec::new(),
            watchpoints: Vec::new(),
            next_id: 1,
            marks: BTreeMap::new(),
            displays: Vec::new(),
            next_display: 1,
            record_limit: DEFAULT_RECORD_LIMIT,
            buffers,
            thread_labels,
            geometry,
            args,
            outputs,
            base_dir,
            interrupt: Arc::new(AtomicBool::new(false)),
            progress: None,
            window_recording,
            lean_recording: true,
            check_each_step: false,
            cores: 1,
            split_after: 1 << 17,
            split_groups: true,
            split_tried: false,
            spare_batches: Vec::new(),
            windows_from: 0,
            windows_until: u64::MAX,
            ahead: motion::AHEAD_FIRST,
            memory_pcs,
            probe: None,
            probed: Vec::new(),
            probe_hits: Vec::new(),
            start,
            checked: None,
            window_steps: 0,
            sourcing: 0,
            layout: CodeLayout::default(),
        }
    }

    /// The unit whose names are in scope for the focused thread.
    pub fn unit(&self) -> UnitId {
        let pc = self.machine.thread(self.focus).control.pc;
        self.program.insts.get(pc.0 as usize).map_or(UnitId(0), |i| i.unit)
    }

    /// Source line of the focused thread's current instruction.
    pub fn line(&self) -> u32 {
        let pc = self.machine.thread(self.focus).control.pc;
        self.program.insts.get(pc.0 as usize).map_or(0, |i| i.span.line)
    }

    /// Total recorded steps.
    pub fn total_steps(&self) -> u64 {
        self.recorder.len()
    }

    /// Thread `i`'s state as shown to the user at the current step: `not started` until its
    /// first step (a work-group not yet dispatched is not running), else its status.
    pub fn thread_state(&self, i: usize) -> &'static str {
        let started = self.recorder.trace.first_step.get(i).is_some_and(|&first| first < self.now);
        match self.machine.threads.get(i).map(|t| t.control.status) {
            Some(crate::machine::ThreadStatus::Running) if !started => "not started",
            Some(crate::machine::ThreadStatus::Running) => "running",
            Some(crate::machine::ThreadStatus::AtBarrier) => "at barrier",
            Some(crate::machine::ThreadStatus::Done) => "done",
            Some(crate::machine::ThreadStatus::Faulted) => "faulted",
            Some(crate::machine::ThreadStatus::AtNamedBarrier(_)) => "at named barrier",
            None => "no such thread",
        }
    }

    fn fresh_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The machine and scheduler at step 0 (what a run again from the start begins with).
    pub fn start_state(&self) -> (&Machine, &Scheduler) {
        (&self.start.0, &self.start.1)
    }

    /// Runs forward to the end (used by `vdb run --stats` with recording and by tests).
    pub fn run_to_end(&mut self) -> StopReason {
        self.continue_forward()
    }
}
