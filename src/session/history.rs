//! Queries over the recording that front ends draw: the execution-mask history of a thread.

use super::Session;
use crate::isa::{InstIdx, Opcode};
use crate::machine::ThreadId;
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
        let mut em = self.machine.thread(thread).control.em;
        let mut out = Vec::new();
        let mut step = self.now;
        let floor = self.now.saturating_sub(scan_limit);
        while step > floor && out.len() < n {
            step -= 1;
            let rec = self.recorder.trace.steps.at(step);
            if rec.thread != thread.0 {
                continue;
            }
            let after = em;
            for e in self.recorder.trace.entries(step) {
                if let (EntryKind::Control { index }, true) = (&e.kind, e.thread == thread.0) {
                    if let Some((old, _)) = self.recorder.trace.control_change(*index) {
                        em = old.em;
                    }
                }
            }
            let goto = self.program.inst(InstIdx(rec.pc)).op == Opcode::Goto;
            out.push(MaskStep { step, em, goto, rejoined: after & !em != 0 && !goto });
        }
        out.reverse();
        out
    }
}
