//! Queries that front ends draw: the execution-mask history of a thread, and its call stack.

use serde::Serialize;

use super::Session;
use crate::isa::{InstIdx, Opcode};
use crate::machine::{FrameKind, ThreadId};
use crate::trace::EntryKind;

/// One past step of a thread, for the divergence timeline.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MaskStep {
    pub step: u64,
    /// Execution mask just before the step.
    pub em: u32,
    /// The step executed a `goto`.
    pub goto: bool,
    /// Parked lanes rejoined the execution mask at this step.
    pub rejoined: bool,
}

impl Session {
    /// The last `n` steps of `thread` before now, oldest first, looking back at most
    /// `scan_limit` steps of any thread (a bound that keeps this cheap on huge recordings).
    pub fn mask_history(&self, thread: ThreadId, n: usize, scan_limit: u64) -> Vec<MaskStep> {
        let mut out: Vec<MaskStep> = self
            .mask_steps(thread, self.now.saturating_sub(scan_limit))
            .take(n)
            .map(|m| {
                let goto = self.program.inst(InstIdx(m.pc)).op == Opcode::Goto;
                MaskStep { step: m.step, em: m.before, goto, rejoined: m.after & !m.before != 0 && !goto }
            })
            .collect();
        out.reverse();
        out
    }

    /// `thread`'s steps from now back to step `floor` (included), newest first, each with its
    /// execution mask before and after, undone from the current one through the control
    /// changes the log holds.
    fn mask_steps(&self, thread: ThreadId, floor: u64) -> impl Iterator<Item = EmStep> + '_ {
        let trace = &self.recorder.trace;
        let mut em = self.machine.thread(thread).control.em;
        trace.thread_steps_back(thread.0, floor, self.now).map(move |(step, rec)| {
            let after = em;
            // A step that only moved the pc changed no mask.
            if !rec.falls_through() {
                for e in trace.entries(step) {
                    if let (EntryKind::Control { index }, true) = (&e.kind, e.thread == thread.0) {
                        if let Some((old, _)) = trace.control_change(step, *index) {
                            em = old.em;
                        }
                    }
                }
            }
            EmStep { step, pc: rec.pc, before: em, after }
        })
    }
}

/// One of a thread's steps with its execution mask around it.
struct EmStep {
    step: u64,
    pc: u32,
    before: u32,
    after: u32,
}

/// A step at which one lane of a thread left or rejoined the execution mask.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaneEvent {
    pub step: u64,
    /// `left` or `rejoined`.
    pub event: &'static str,
    pub line: u32,
    /// The OpenCL source position (`k.cl:13`), where the kernel has line information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub id: u32,
    pub instruction: String,
    /// The execution mask before and after the step.
    pub em_before: u32,
    pub em_after: u32,
    /// For a predicated instruction: its predicate variable and that variable's bit for the
    /// lane before the step (the instruction's text says whether it is inverted).
    pub predicate: Option<(String, bool)>,
}

/// Most events `lane_history` reports.
pub const MAX_LANE_EVENTS: usize = 20;

impl Session {
    /// The steps before now at which `lane` of `thread` left or rejoined its execution mask,
    /// newest first, at most [`MAX_LANE_EVENTS`]: the story of a lane's divergence (which
    /// `goto` parked it, on which predicate bit, and where it came back). Scans the thread's
    /// steps back to its first; predicate bits come from a copy of the machine walked back.
    pub fn lane_history(&self, thread: ThreadId, lane: u32) -> Vec<LaneEvent> {
        // Back to the thread's first step (none recorded: nothing to scan).
        let first = self.recorder.trace.first_step.get(thread.0 as usize).copied().unwrap_or(u64::MAX);
        let bit = 1u32.checked_shl(lane).unwrap_or(0);
        let found: Vec<EmStep> = self
            .mask_steps(thread, if first == u64::MAX { self.now } else { first })
            .filter(|m| (m.before ^ m.after) & bit != 0)
            .take(MAX_LANE_EVENTS)
            .collect();
        let mut state = self.machine.clone();
        let mut at = self.now;
        found
            .into_iter()
            .map(|EmStep { step, pc, before, after }| {
                let inst = self.program.inst(InstIdx(pc));
                let predicate = inst.pred.map(|p| {
                    self.recorder.seek(&mut state, at, step);
                    at = step;
                    let bits = state.thread(thread).preds.get(p.pred.0 as usize).copied().unwrap_or(0);
                    let name =
                        self.program.preds.get(p.pred.0 as usize).map_or("?".into(), |d| d.name.clone());
                    (name, bits & bit != 0)
                });
                LaneEvent {
                    step,
                    event: if after & bit != 0 { "rejoined" } else { "left" },
                    line: inst.span.line,
                    source: self.source_of(InstIdx(pc)),
                    id: inst.id,
                    instruction: self.program.inst_text(InstIdx(pc)).to_string(),
                    em_before: before,
                    em_after: after,
                    predicate,
                }
            })
            .collect()
    }
}

/// One frame of a thread's call stack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FrameInfo {
    /// 0 for the frame the thread runs in, 1 for its caller, and so on.
    pub level: usize,
    /// The subroutine (`.function` section) or stack-call function the frame runs.
    pub function: String,
    /// `kernel`, `subroutine` (entered by `call`) or `function` (entered by `fcall`).
    pub kind: &'static str,
    /// Where the frame is: the current instruction in frame 0, the call it waits on in the others.
    pub file: String,
    pub line: u32,
    /// The OpenCL source position there (`k.cl:13`), where the kernel has line information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The vISA instruction id (`$N`) of that instruction, and its text.
    pub id: u32,
    pub instruction: String,
    /// The frame's execution mask (for a caller, the one its return restores).
    pub exec_mask: u32,
}

fn kind_name(kind: Option<FrameKind>) -> &'static str {
    match kind {
        None => "kernel",
        Some(FrameKind::Subroutine) => "subroutine",
        Some(FrameKind::Function) => "function",
    }
}

impl Session {
    /// `thread`'s call stack now, innermost frame first.
    pub fn backtrace(&self, thread: ThreadId) -> Vec<FrameInfo> {
        let control = &self.machine.thread(thread).control;
        let stack = &control.stack;
        let frame = |level: usize, pc: InstIdx, exec_mask: u32| {
            // Frame `level` was entered by stack entry len - 1 - level (none for the kernel body).
            let kind = stack.len().checked_sub(level + 1).map(|i| stack[i].kind);
            let (file, line, id, instruction) = match self.program.insts.get(pc.0 as usize) {
                Some(inst) => (
                    self.program.file(inst.span.file).path.clone(),
                    inst.span.line,
                    inst.id,
                    self.program.inst_text(pc).to_string(),
                ),
                None => Default::default(),
            };
            FrameInfo {
                level,
                function: self.program.function_at(pc).to_string(),
                kind: kind_name(kind),
                file,
                line,
                source: self.source_of(pc),
                id,
                instruction,
                exec_mask,
            }
        };
        let mut frames = vec![frame(0, control.pc, control.em)];
        for (level, f) in stack.iter().rev().enumerate() {
            // A call returns to the instruction after it.
            frames.push(frame(level + 1, InstIdx(f.return_pc.0.saturating_sub(1)), f.saved_em));
        }
        frames
    }
}
