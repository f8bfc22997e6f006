//! Guest faults: a kernel doing something the spec leaves undefined stops at that
//! instruction with one of these, its state intact.

use std::fmt;

use crate::isa::InstIdx;
use crate::machine::{MemError, ThreadId};
use crate::program::Program;

/// Why an instruction could not execute. One variant per cause.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// The decoder found a problem the real verifier reports (region out of bounds, mask
    /// offset not aligned to the execution size…).
    Static(String),
    /// A direct region reaches outside the GRF file or its variable.
    RegionOutOfBounds { operand: usize, offset: u32, len: u32 },
    /// An indirect operand's address falls outside every variable, or a row crosses the end
    /// of the variable the address points into.
    IndirectOutOfBounds { operand: usize, lane: u32, address: i64 },
    /// An indirect address not aligned to the operand type.
    IndirectMisaligned { operand: usize, lane: u32, address: i64, align: u32 },
    /// An address-register element outside its variable.
    AddressOutOfBounds { operand: usize, element: u32 },
    /// A memory message failed (unmapped or out-of-bounds address, misalignment).
    Memory { lane: Option<u32>, message: String },
    /// An arithmetic form the interpreter does not support (type combination, opcode).
    Alu(String),
    /// The instruction (or this form of it) is parsed but not implemented.
    NotImplemented(String),
    /// All lanes are disabled and none is waiting at a later reconvergence point.
    NoActiveLanes,
    /// More divergent branch targets pending at once than vdb tracks per thread.
    TooManyReconvergencePoints(usize),
    /// Execution ran past the last instruction of a function.
    FellOffEnd,
    /// `ret`/`fret` with nothing to return to, or `fret` in a subroutine frame.
    BadReturn(String),
    /// `fcall`/`ifcall`/`faddr` to an unknown function or symbol.
    UnknownFunction(String),
    /// `switchjmp` index past its label list.
    SwitchOutOfRange { index: u64, labels: usize },
    /// A surface that the launch did not bind.
    UnboundSurface(String),
    /// The configured step limit was reached (a runaway loop).
    StepLimit(u64),
    /// Threads wait at a barrier that can never complete.
    Deadlock(String),
    /// Work-items of a group reach a barrier apart: some lanes of a thread wait in divergent
    /// control flow while the others reach it, or threads wait at different barriers.
    BarrierDivergence(String),
    /// A call with this many frames on the thread's call stack already: runaway recursion
    /// (OpenCL and SYCL device code cannot recurse; real call chains are a few deep).
    CallTooDeep(usize),
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::Static(m) => write!(f, "{m}"),
            FaultKind::RegionOutOfBounds { operand, offset, len } => write!(
                f,
                "operand {operand}: region reaches GRF bytes {offset}..{} outside its variable",
                offset + len
            ),
            FaultKind::IndirectOutOfBounds { operand, lane, address } => write!(
                f,
                "operand {operand}: indirect address {address} (lane {lane}) is outside the variable it points into"
            ),
            FaultKind::IndirectMisaligned { operand, lane, address, align } => write!(
                f,
                "operand {operand}: indirect address {address} (lane {lane}) is not {align}-byte aligned"
            ),
            FaultKind::AddressOutOfBounds { operand, element } => {
                write!(f, "operand {operand}: address element {element} is outside its address variable")
            }
            FaultKind::Memory { lane: Some(l), message } => write!(f, "lane {l}: {message}"),
            FaultKind::Memory { lane: None, message } => write!(f, "{message}"),
            FaultKind::Alu(m) => write!(f, "{m}"),
            FaultKind::NotImplemented(m) => write!(f, "not implemented: {m}"),
            FaultKind::NoActiveLanes => write!(
                f,
                "no lane is active and none waits at a later reconvergence point"
            ),
            FaultKind::TooManyReconvergencePoints(n) => {
                write!(f, "more than {n} reconvergence points pending at once")
            }
            FaultKind::FellOffEnd => write!(f, "execution ran past the end of the function"),
            FaultKind::BadReturn(m) => write!(f, "{m}"),
            FaultKind::UnknownFunction(n) => write!(f, "unknown function or symbol `{n}`"),
            FaultKind::SwitchOutOfRange { index, labels } => {
                write!(f, "switchjmp index {index} is past its {labels} labels")
            }
            FaultKind::UnboundSurface(n) => write!(f, "surface {n} is not bound by the launch"),
            FaultKind::StepLimit(n) => {
                write!(f, "step limit of {n} instructions reached (the launch file's `step_limit` sets it)")
            }
            FaultKind::Deadlock(m) => write!(f, "deadlock: {m}"),
            FaultKind::BarrierDivergence(m) => write!(f, "barrier divergence: {m}"),
            FaultKind::CallTooDeep(n) => {
                write!(f, "call with {n} frames on the call stack already (runaway recursion?)")
            }
        }
    }
}

impl FaultKind {
    /// The fault with its lane counted as the thread's channel (an instruction's lane plus
    /// its mask offset: lane 0 of `(M3, 8)` is channel 8), the one convention every report
    /// of a lane follows.
    pub fn in_thread_channels(self, offset: u32) -> FaultKind {
        match self {
            FaultKind::Memory { lane, message } => {
                FaultKind::Memory { lane: lane.map(|l| l + offset), message }
            }
            FaultKind::IndirectOutOfBounds { operand, lane, address } => {
                FaultKind::IndirectOutOfBounds { operand, lane: lane + offset, address }
            }
            FaultKind::IndirectMisaligned { operand, lane, address, align } => {
                FaultKind::IndirectMisaligned { operand, lane: lane + offset, address, align }
            }
            other => other,
        }
    }

    /// The thread channel the fault names, if it names one.
    pub fn lane(&self) -> Option<u32> {
        match self {
            FaultKind::Memory { lane, .. } => *lane,
            FaultKind::IndirectOutOfBounds { lane, .. } | FaultKind::IndirectMisaligned { lane, .. } => {
                Some(*lane)
            }
            _ => None,
        }
    }
}

impl From<MemError> for FaultKind {
    fn from(e: MemError) -> FaultKind {
        FaultKind::Memory { lane: None, message: e.to_string() }
    }
}

/// A fault with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub thread: ThreadId,
    pub pc: InstIdx,
}

impl Fault {
    /// `path:line:col: fault in thread T: message` followed by the instruction text.
    pub fn render(&self, program: &Program) -> String {
        let Some(inst) = program.insts.get(self.pc.0 as usize) else {
            return format!("fault in thread {}: {}", self.thread.0, self.kind);
        };
        format!(
            "{}: fault in thread {}: {}\n    {}",
            program.location(inst.span),
            self.thread.0,
            self.kind,
            program.inst_text(self.pc)
        )
    }

    /// [`Fault::render`], followed for an OpenCL launch by the work-item the faulting lane
    /// holds (lanes are the thread's channels).
    pub fn render_in(&self, program: &Program, geometry: Option<&crate::launch::NdGeometry>) -> String {
        let text = self.render(program);
        let item = self
            .kind
            .lane()
            .zip(geometry)
            .and_then(|(lane, g)| Some((lane, g.work_item(self.thread.0, lane)?)));
        match item {
            Some((lane, w)) => {
                let dims = geometry.map_or(1, |g| g.shown_dims()) as usize;
                let ids = |v: &[u64]| v[..dims].iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
                let group: Vec<u64> = w.group.iter().map(|&x| u64::from(x)).collect();
                format!(
                    "{text}\n    (lane {lane} holds work-item {} of work-group {})",
                    ids(&w.global),
                    ids(&group)
                )
            }
            None => text,
        }
    }
}
