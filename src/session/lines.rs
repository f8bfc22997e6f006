//! OpenCL source level, where the vISA carries `FILE`/`LOC` ([`crate::lines`]): stepping by
//! source line in both directions, breakpoints and `list` on source lines, the layout that
//! says which file a bare line number means, and the source position every reply names.
//!
//! A source-line step is a stop predicate over single instruction steps of the focused
//! thread: it ends at the next line *entry* the thread reaches, an instruction that starts a
//! run of its line ([`crate::lines::SrcPos::stmt`]) reached from another line (instructions
//! of no line do not count). A reverse step ends at the previous entry, found first in the
//! recorded step records (no machine moves) and then reached by reverse instruction steps,
//! so that breakpoints and watchpoints on the way stop it as they stop `rstepi`. Forward and
//! back stop at the same places. Kernels without line information step by instruction.

use serde_json::json;

use super::command::{BreakLoc, CodeLayout};
use super::frontier::INTERRUPT_CHECK;
use super::{Reply, Session, StopReason};
use crate::isa::InstIdx;
use crate::lines::SrcPos;
use crate::machine::ThreadStatus;
use crate::trace::EntryKind;

impl Session {
    /// `k.cl:13` for instruction `pc`, when its code has a source line.
    pub fn source_of(&self, pc: InstIdx) -> Option<String> {
        self.program.lines.at(pc).map(|p| self.program.lines.name(p))
    }

    /// The focused thread's source position (`k.cl:13`), while it has one to execute.
    pub fn source_here(&self) -> Option<String> {
        self.focus_pos().map(|p| self.program.lines.name(p))
    }

    /// The focused thread's instruction's own source position, while it has one to execute.
    fn focus_pos(&self) -> Option<SrcPos> {
        let control = &self.machine.thread(self.focus).control;
        match control.status {
            ThreadStatus::Done => None,
            _ => self.program.lines.at(control.pc),
        }
    }

    /// The line the focused thread is at, or the nearest one (its instruction is a `LOC` or
    /// of no line), for showing it; None without line information there.
    pub fn source_near(&self) -> Option<SrcPos> {
        self.program.lines.near(self.machine.thread(self.focus).control.pc)
    }

    /// The OpenCL file the source pane shows (gdb's current source file): the focused
    /// thread's, unless the layout is `asm` or the file's text was not found.
    pub fn current_source_file(&self) -> Option<u32> {
        if self.layout == CodeLayout::Visa {
            return None;
        }
        let file = self.source_near()?.file;
        self.program.lines.file(file)?.text().map(|_| file)
    }

    /// The "step N thread T line L: instruction" line after a movement, with the source
    /// position and the source line's text where the kernel has them.
    pub(super) fn here_text(&self) -> String {
        let pos = self.focus_pos();
        let here = match pos {
            Some(p) => format!("line {} ({})", self.line(), self.program.lines.name(p)),
            None => format!("line {}", self.line()),
        };
        let text = format!("step {} thread {} {here}: {}", self.now, self.focus.0, self.current_text());
        let source = pos.and_then(|p| Some((p.line, self.program.lines.file(p.file)?.line_text(p.line)?)));
        match source {
            Some((line, source)) => format!("{text}\n{line:>5}  {}", source.trim_end()),
            None => text,
        }
    }

    /// `step N`: N source lines of the focused thread (instructions without line
    /// information); with `over_calls` (`next`), calls run through.
    pub fn step_lines(&mut self, n: u64, over_calls: bool) -> StopReason {
        if !self.program.lines.has_lines() {
            return if over_calls { self.next(n) } else { self.step_focused(n) };
        }
        for _ in 0..n {
            let reason = self.next_entry(over_calls);
            if reason != StopReason::Step {
                return reason;
            }
        }
        StopReason::Step
    }

    /// `rstep N` / `rnext N`: back N source lines.
    pub fn reverse_step_lines(&mut self, n: u64, over_calls: bool) -> StopReason {
        if !self.program.lines.has_lines() {
            return if over_calls { self.reverse_next(n) } else { self.reverse_step_focused(n) };
        }
        for _ in 0..n {
            let reason = match self.previous_entry(over_calls) {
                Some(time) => self.back_to(time),
                // No line before: back to where the thread began, as gdb says it has no
                // more history.
                None => match self.back_to(self.focus_first_step()) {
                    StopReason::Step => StopReason::Start,
                    other => other,
                },
            };
            if reason != StopReason::Step {
                return reason;
            }
        }
        StopReason::Step
    }

    fn focus_depth(&self) -> usize {
        self.machine.thread(self.focus).control.stack.len()
    }

    /// The time the focused thread's first recorded step starts (now when it has none).
    fn focus_first_step(&self) -> u64 {
        let first = self.recorder.trace.first_step.get(self.focus.0 as usize).copied();
        first.filter(|&s| s < self.now).unwrap_or(self.now)
    }

    /// Single instruction steps of the focused thread until it stands at the entry of a line
    /// other than the last one it passed (the one it starts on, at first). With
    /// `over_calls`, what it runs in deeper frames is passed over.
    fn next_entry(&mut self, over_calls: bool) -> StopReason {
        let mut depth = self.focus_depth();
        let start = self.machine.thread(self.focus).control.pc;
        let mut line = self.program.lines.at(start).map(SrcPos::key);
        let mut count = 0u64;
        loop {
            let reason = self.step_focused(1);
            let control = &self.machine.thread(self.focus).control;
            // A thread that finished or faulted stops the step where it ended.
            if reason != StopReason::Step
                || matches!(control.status, ThreadStatus::Done | ThreadStatus::Faulted)
            {
                return reason;
            }
            let d = control.stack.len();
            if !(over_calls && d > depth) {
                depth = depth.min(d);
                if let Some(pos) = self.program.lines.at(control.pc) {
                    if pos.stmt && Some(pos.key()) != line {
                        return StopReason::Step;
                    }
                    line = Some(pos.key());
                }
            }
            count += 1;
            if count.is_multiple_of(INTERRUPT_CHECK) && self.poll_interrupt() {
                return StopReason::Interrupted;
            }
        }
    }

    /// The time of the focused thread's last line entry before now, from the recorded step
    /// records: the latest step that executed an entry whose previous step with a line (in
    /// this frame or an outer one, with `over_calls`) was of another line.
    fn previous_entry(&self, over_calls: bool) -> Option<u64> {
        let thread = self.focus.0;
        let trace = &self.recorder.trace;
        let floor = trace.first_step.get(thread as usize).copied().filter(|&s| s < self.now)?;
        let mut depth = self.focus_depth();
        let mut frame = depth;
        // An entry seen whose predecessor is not yet known: (its step, its line).
        let mut pending: Option<(u64, (u32, u32))> = None;
        for (step, rec) in trace.thread_steps_back(thread, floor, self.now) {
            if !rec.falls_through() {
                depth = self.depth_before(step, thread).unwrap_or(depth);
            }
            if over_calls && depth > frame {
                continue;
            }
            frame = frame.min(depth);
            let Some(pos) = self.program.lines.at(InstIdx(rec.pc)) else { continue };
            match pending {
                Some((time, key)) if key != pos.key() => return Some(time),
                _ => pending = pos.stmt.then_some((step, pos.key())),
            }
        }
        pending.map(|(time, _)| time)
    }

    /// The call depth of `thread` before `step`, from the control state the step changed
    /// (None when it changed none).
    fn depth_before(&self, step: u64, thread: u32) -> Option<usize> {
        let trace = &self.recorder.trace;
        trace.entries(step).iter().find_map(|e| match e.kind {
            EntryKind::Control { index } if e.thread == thread => {
                trace.control_change(step, index).map(|(old, _)| old.stack.len())
            }
            _ => None,
        })
    }

    /// Reverse instruction steps of the focused thread back to time `target` (one of its
    /// step starts), stopped early where `rstepi` would stop.
    fn back_to(&mut self, target: u64) -> StopReason {
        let mut count = 0u64;
        while self.now > target {
            let reason = self.reverse_step_focused(1);
            if reason != StopReason::Step {
                return reason;
            }
            count += 1;
            if count.is_multiple_of(INTERRUPT_CHECK) && self.poll_interrupt() {
                return StopReason::Interrupted;
            }
        }
        StopReason::Step
    }

    /// `layout src|asm|split` or `layout next`.
    pub(super) fn set_layout(&mut self, layout: Option<CodeLayout>) -> Reply {
        self.layout = layout.unwrap_or(self.layout.next());
        let name = self.layout.name();
        let lines = &self.program.lines;
        let note = if !lines.has_lines() {
            " (this kernel has no line information: the source pane shows its vISA)"
        } else if self.layout != CodeLayout::Visa && lines.files.iter().all(|f| f.text().is_none()) {
            " (the OpenCL source was not found at its path nor next to the launch or kernel file: \
             the source pane shows the vISA)"
        } else {
            ""
        };
        Reply::text(format!("layout {name}{note}")).with("layout", json!(name))
    }

    /// The instructions a `FILE:LINE` or `LINE` location names in an OpenCL source file, or
    /// None when it names a vISA line (another file, or a bare line while the source pane
    /// shows the vISA). A line without code moves to the next one with code, as in gdb.
    pub(super) fn locate_source(&self, loc: &BreakLoc) -> Option<Result<Vec<InstIdx>, String>> {
        let BreakLoc::Line { file, line } = loc else { return None };
        let lines = &self.program.lines;
        let f = match file {
            Some(name) => lines.file_named(name)?,
            None => self.current_source_file()?,
        };
        let name = lines.file(f).map_or("?", |f| f.short());
        Some(match lines.code_line_from(f, *line) {
            Some(at) => Ok(lines.entries(f, at)),
            None => Err(format!("no code at or after line {line} of {name}")),
        })
    }

    /// A breakpoint's description: `k.cl:13 ($19 $41)` for a source line, else the vISA
    /// file, line and id of its first instruction.
    pub(super) fn breakpoint_text(&self, loc: &BreakLoc, pcs: &[InstIdx]) -> String {
        let first = pcs.first().map(|&pc| (pc, self.program.inst(pc)));
        match (self.locate_source(loc), first) {
            (Some(Ok(_)), Some((pc, _))) => {
                let ids: Vec<String> = pcs.iter().map(|&p| format!("${}", self.program.inst(p).id)).collect();
                format!("{} ({})", self.source_of(pc).unwrap_or_default(), ids.join(" "))
            }
            (_, Some((_, inst))) => {
                format!("{}:{} ${}", self.program.file(inst.span.file).path, inst.span.line, inst.id)
            }
            (_, None) => String::new(),
        }
    }

    /// `list` on an OpenCL source file: the location's file (or the current source file),
    /// ten lines around the line (or the focused thread's), `=>` on the focused thread's
    /// line and `b` on lines with a breakpoint. None when the location is a vISA one.
    pub(super) fn list_source(&self, loc: Option<&BreakLoc>) -> Option<Result<Reply, String>> {
        let here = self.source_near();
        let (file, center) = match loc {
            None => (self.current_source_file()?, here?.line),
            Some(BreakLoc::Line { file, line }) => {
                let f = match file {
                    Some(name) => self.program.lines.file_named(name)?,
                    None => self.current_source_file()?,
                };
                (f, *line)
            }
            Some(_) => return None,
        };
        Some(self.source_listing(file, center, here))
    }

    fn source_listing(&self, file: u32, center: u32, here: Option<SrcPos>) -> Result<Reply, String> {
        let lines = &self.program.lines;
        let f = lines.file(file).ok_or("no such source file")?;
        if f.text().is_none() {
            return Err(format!(
                "the source of {} was not found (its path, or {} next to the launch or kernel file)",
                f.name,
                f.short()
            ));
        }
        let n_lines = f.line_count();
        if center == 0 || center > n_lines {
            return Err(format!("line {center} is outside {} ({n_lines} lines)", f.short()));
        }
        let marked: Vec<u32> = self
            .breakpoints
            .iter()
            .flat_map(|b| b.pcs.iter())
            .filter_map(|&pc| lines.at(pc))
            .filter(|p| p.file == file)
            .map(|p| p.line)
            .collect();
        let path = f.found.as_ref().map_or(f.name.as_str(), |(p, _)| p.as_str());
        let current = here.filter(|h| h.file == file).map(|h| h.line);
        Ok(super::handlers::listing(path, center, n_lines, current, &marked, |line| {
            f.line_text(line).unwrap_or("")
        }))
    }
}
