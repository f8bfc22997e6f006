//! One handler per command. Each returns a [`Reply`]: JSON fields for `vdb batch --json`
//! and a human-readable text for the TUI's log and plain batch output.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::command::{BreakLoc, Command, Format, InfoWhat, ThreadSet, WatchKind, COMMANDS, UNIT_OF_TYPE};
use super::expr::{
    location_text, parse_condition, resolve_memory, resolve_region, Condition, ValueCondition,
};
use super::format::value as fmt_value;
use super::motion::hex;
use super::workitems::work_items_phrase;
use super::{Breakpoint, Session, StopReason, TypedChange, WatchTarget, Watchpoint};
use crate::exec::load_le;
use crate::isa::{DataType, InstIdx, Opcode, Operand};
use crate::machine::{Machine, MemSpace, ThreadId, ThreadStatus};

/// The result of one command.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Reply {
    /// Why movement stopped (movement commands only).
    pub stop: Option<StopReason>,
    /// Command-specific fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
    /// The same for people.
    #[serde(skip)]
    pub text: String,
}

impl Reply {
    pub(super) fn text(text: impl Into<String>) -> Reply {
        Reply { text: text.into(), ..Reply::default() }
    }
    pub(super) fn with(mut self, key: &str, value: Value) -> Reply {
        self.fields.insert(key.to_string(), value);
        self
    }
}

/// `#1  _main_0 (kernel) at k.visaasm:31 $10  (P1) call (M1, 16) helper_1  [exec 0xffff]`
/// The ten lines of a file around `center` (of `n_lines`, 1-based), `=>` at the `current`
/// one and ` b` at lines with a breakpoint: the text, and the rows as `lines`.
pub(super) fn listing<'a>(
    path: &str,
    center: u32,
    n_lines: u32,
    current: Option<u32>,
    marked: &[u32],
    text_of: impl Fn(u32) -> &'a str,
) -> Reply {
    let first = center.saturating_sub(5).max(1);
    let (mut rows, mut text) = (Vec::new(), Vec::new());
    for line in first..=(first + 9).min(n_lines) {
        let is_current = current == Some(line);
        let source = text_of(line);
        let mark = match (is_current, marked.contains(&line)) {
            (true, _) => "=>",
            (false, true) => " b",
            _ => "  ",
        };
        text.push(format!("{mark}{line:>5}  {source}"));
        rows.push(json!({"line": line, "text": source, "current": is_current}));
    }
    Reply::text(text.join("\n")).with("file", json!(path)).with("lines", json!(rows))
}

fn frame_text(f: &super::FrameInfo) -> String {
    let source = f.source.as_ref().map_or(String::new(), |s| format!(" ({s})"));
    format!(
        "#{:<2} {} ({}) at {}:{} ${}{source}  {}  [exec {:#x}]",
        f.level, f.function, f.kind, f.file, f.line, f.id, f.instruction, f.exec_mask
    )
}

fn stop_text(reason: &StopReason) -> String {
    match reason {
        StopReason::Step => String::new(),
        StopReason::Breakpoint { id } => format!("breakpoint {id}"),
        StopReason::Watchpoint(h) => format!(
            "watchpoint {}: {} by step {} (thread {}, line {}, lanes {:?}{}): {}\n  {}",
            h.id,
            h.access,
            h.step,
            h.thread,
            h.line,
            h.lanes,
            match work_items_phrase(&h.workitems) {
                p if p.is_empty() => p,
                p => format!(", {p}"),
            },
            h.typed.as_ref().map_or_else(|| format!("{} -> {}", h.old, h.new), |t| t.text()),
            h.instruction
        ),
        StopReason::Start => "reached the start of the run".into(),
        StopReason::End => "reached the end of the run".into(),
        StopReason::Fault { message } => format!("fault: {message}"),
        StopReason::Interrupted => "interrupted".into(),
        StopReason::RecordLimit { bytes } => {
            format!(
                "recording budget reached ({bytes} bytes; --record-limit sets it); everything recorded stays usable"
            )
        }
    }
}

/// Elements of each variable `info registers` shows (`print` shows them all).
const INFO_REGISTER_ELEMENTS: usize = 8;

impl Session {
    /// Executes one command.
    pub fn execute(&mut self, cmd: &Command) -> Result<Reply, String> {
        let reply = self.execute_here(cmd);
        // Parts a query recorded again stay held only as far as the cache allows.
        self.recorder.trace.drop_bodies();
        reply
    }

    fn execute_here(&mut self, cmd: &Command) -> Result<Reply, String> {
        self.ahead = super::motion::AHEAD_FIRST;
        let moved = |s: &mut Session, reason: StopReason| -> Result<Reply, String> {
            let text = stop_text(&reason);
            let here = s.here_text();
            let text = if text.is_empty() { here } else { format!("{text}\n{here}") };
            // A temporary breakpoint is gone once it has stopped a movement.
            let text = match reason {
                StopReason::Breakpoint { id } if s.breakpoints.iter().all(|b| b.id != id) => {
                    format!("{text}\n(temporary breakpoint {id} deleted)")
                }
                _ => text,
            };
            let mut reply = Reply { stop: Some(reason), text, ..Reply::default() };
            if !s.displays.is_empty() {
                let (values, lines) = s.display_values();
                reply.text = format!("{}\n{}", reply.text, lines.join("\n"));
                reply.fields.insert("displays".into(), json!(values));
            }
            Ok(reply)
        };
        match cmd {
            Command::Step(n) => {
                let r = self.step_lines(*n, false);
                moved(self, r)
            }
            Command::ReverseStep(n) => {
                let r = self.reverse_step_lines(*n, false);
                moved(self, r)
            }
            Command::Next(n) => {
                let r = self.step_lines(*n, true);
                moved(self, r)
            }
            Command::ReverseNext(n) => {
                let r = self.reverse_step_lines(*n, true);
                moved(self, r)
            }
            Command::StepInstruction(n) => {
                let r = self.step_focused(*n);
                moved(self, r)
            }
            Command::ReverseStepInstruction(n) => {
                let r = self.reverse_step_focused(*n);
                moved(self, r)
            }
            Command::NextInstruction(n) => {
                let r = self.next(*n);
                moved(self, r)
            }
            Command::ReverseNextInstruction(n) => {
                let r = self.reverse_next(*n);
                moved(self, r)
            }
            Command::Layout(layout) => Ok(self.set_layout(*layout)),
            Command::Finish => {
                let r = self.finish()?;
                moved(self, r)
            }
            Command::ReverseFinish => {
                let r = self.reverse_finish()?;
                moved(self, r)
            }
            Command::Backtrace => {
                let frames = self.backtrace(self.focus);
                let text: Vec<String> = frames.iter().map(frame_text).collect();
                Ok(Reply::text(text.join("\n")).with("frames", json!(frames)))
            }
            Command::Continue => {
                let r = self.continue_forward();
                moved(self, r)
            }
            Command::ReverseContinue => {
                let r = self.continue_backward();
                moved(self, r)
            }
            Command::GotoStep(n) => {
                let r = self.goto(*n);
                moved(self, r)
            }
            Command::GotoMark(name) => {
                let step = *self.marks.get(name).ok_or_else(|| format!("no mark `{name}`"))?;
                let r = self.goto(step);
                moved(self, r)
            }
            Command::Run => {
                let r = self.goto(0);
                moved(self, if r == StopReason::Step { StopReason::Start } else { r })
            }
            Command::When => Ok(Reply::text(format!("step {} of {}", self.now, self.total_steps()))
                .with("total", json!(self.total_steps()))),
            Command::Thread(t) => self.focus_thread(*t),
            Command::WorkItem(id) => self.focus_work_item(id.as_deref()),
            Command::Lane(l) => {
                let simd = self.machine.thread(self.focus).simd;
                if *l >= simd {
                    return Err(format!("lane {l} is outside SIMD{simd}"));
                }
                self.lane = *l;
                let item = self.work_item_suffix(self.focus.0, *l);
                Ok(Reply::text(format!("lane {l}{item}"))
                    .with("lane", json!(l))
                    .with("workitem", self.work_item_json(self.focus.0, *l)))
            }
            Command::Break { loc, cond, temporary } => {
                self.add_breakpoint(loc, cond.as_deref(), *temporary).map(|(_, reply)| reply)
            }
            Command::Advance(loc) => {
                let (id, _) = self.add_breakpoint(loc, None, true)?;
                let r = match self.continue_forward() {
                    // There: the movement asked for is done.
                    StopReason::Breakpoint { id: hit } if hit == id => StopReason::Step,
                    other => other,
                };
                // Gone whether the run got there or not.
                self.breakpoints.retain(|b| b.id != id);
                moved(self, r)
            }
            Command::Until(None) => {
                let r = self.until_next();
                moved(self, r)
            }
            Command::Until(Some(loc)) => {
                let pcs = self.locate(loc)?;
                let r = self.until_location(&pcs);
                moved(self, r)
            }
            Command::Condition { id, cond } => self.set_condition(*id, cond.as_deref()),
            Command::Ignore { id, count } => self.set_ignore(*id, *count),
            Command::Display(None) => {
                let (values, lines) = self.display_values();
                let text = if lines.is_empty() { "no displays".to_string() } else { lines.join("\n") };
                Ok(Reply::text(text).with("displays", json!(values)))
            }
            Command::Display(Some(shown)) => self.add_display(shown),
            Command::List(loc) => self.list(loc.as_ref()),
            Command::GotoRelative(delta) => {
                let r = self.goto(self.now.saturating_add_signed(*delta));
                moved(self, r)
            }
            Command::Undisplay(id) => self.undisplay(*id),
            Command::ThreadApply { threads, cmd } => self.thread_apply(threads, cmd),
            Command::Delete(id) => self.delete(*id),
            Command::Disable(id) => self.set_enabled(*id, false),
            Command::Enable(id) => self.set_enabled(*id, true),
            Command::Watch { kind, target, len, lane, cond } => {
                self.add_watch(*kind, target, *len, *lane, cond.as_deref())
            }
            Command::Print { expr, format } => self.print(expr, *format),
            Command::Examine { count, format, unit, addr } => self.examine(*count, *format, *unit, addr),
            Command::Info(what) => self.info(*what),
            Command::Source(file) => self.source(file),
            Command::Why { loc, len, lane, depth } => self.why_reply(loc, *len, *lane, depth.unwrap_or(4)),
            Command::Compare { format, unit, loc, file, ulps } => {
                self.compare(*format, *unit, loc, file, *ulps)
            }
            Command::LastWrite(loc) => self.writes_query(loc, 1),
            Command::History(loc) => self.writes_query(loc, usize::MAX),
            Command::LaneHistory(lane) => self.lane_history_reply(lane.unwrap_or(self.lane)),
            Command::Mark(name) => {
                self.marks.insert(name.clone(), self.now);
                Ok(Reply::text(format!("mark {name} = step {}", self.now)).with("mark", json!(name)))
            }
            Command::SetLogCache(cache) => {
                self.recorder.trace.cache = *cache;
                // The parts past it go as every command ends (`Session::execute`).
                let keep = cache.limit(self.recorder.len());
                let text = match keep {
                    None => "every part's log is kept once read".to_string(),
                    Some(n) => format!(
                        "logs are kept up to {n} bytes now; past that, the parts read least lately are recorded again when read"
                    ),
                };
                Ok(Reply::text(text).with("log_cache_bytes", json!(keep)))
            }
            Command::StateHash => {
                let h = format!("{:016x}", self.machine.state_hash());
                Ok(Reply::text(format!("state hash {h}")).with("hash", json!(h)))
            }
            Command::Help => {
                let text: Vec<String> = COMMANDS.iter().map(|(c, d)| format!("{c:48} {d}")).collect();
                Ok(Reply::text(text.join("\n")))
            }
        }
    }

    /// The focused thread's current instruction text.
    pub fn current_text(&self) -> String {
        let t = self.machine.thread(self.focus);
        match t.control.status {
            ThreadStatus::Done => "(finished)".into(),
            _ => self.program.inst_text(t.control.pc).to_string(),
        }
    }

    fn focus_thread(&mut self, t: u32) -> Result<Reply, String> {
        if t as usize >= self.machine.threads.len() {
            return Err(format!("no thread {t} (there are {})", self.machine.threads.len()));
        }
        self.focus = ThreadId(t);
        self.lane = self.lane.min(self.machine.thread(self.focus).simd - 1);
        let item = self.work_item_suffix(t, self.lane);
        Ok(Reply::text(format!(
            "thread {t} (lane {}{item}): line {}: {}",
            self.lane,
            self.line(),
            self.current_text()
        ))
        .with("lane", json!(self.lane))
        .with("workitem", self.work_item_json(t, self.lane)))
    }

    /// The source files a location's file part names: those whose path ends with `name`, or
    /// the kernel's without one.
    fn files_named(&self, name: Option<&str>) -> Vec<crate::program::FileId> {
        match name {
            None => vec![self.program.kernel().file],
            // A whole file name or a path's tail of whole components: `k.visaasm` names
            // `dir/k.visaasm`, and `ivergence.visaasm` names no `divergence.visaasm`.
            Some(name) => (0..self.program.files.len() as u32)
                .map(crate::program::FileId)
                .filter(|&f| {
                    let path = self.program.file(f).path.as_str();
                    path == name || path.strip_suffix(name).is_some_and(|head| head.ends_with('/'))
                })
                .collect(),
        }
    }

    /// Instruction indices a breakpoint location names.
    fn locate(&self, loc: &BreakLoc) -> Result<Vec<InstIdx>, String> {
        let code = |i: &InstIdx| self.program.inst(*i).op != Opcode::EndOfCode;
        // A line of the OpenCL source (`k.cl:13`, or a bare line while the pane shows it).
        if let Some(found) = self.locate_source(loc) {
            return found;
        }
        match loc {
            BreakLoc::Line { file, line } => {
                let found: Vec<InstIdx> = self
                    .files_named(file.as_deref())
                    .into_iter()
                    .filter_map(|f| self.program.inst_at_line(f, *line))
                    .filter(code)
                    .collect();
                if let Some(name) = file.as_deref().filter(|_| self.files_named(file.as_deref()).is_empty()) {
                    let files: Vec<&str> = self.program.files.iter().map(|f| f.path.as_str()).collect();
                    return Err(format!(
                        "no file `{name}` in this program (its files: {})",
                        files.join(", ")
                    ));
                }
                if found.is_empty() {
                    return Err(format!("no instruction at or after line {line}"));
                }
                Ok(found)
            }
            BreakLoc::Label(name) => {
                let hit = self
                    .program
                    .units
                    .iter()
                    .flat_map(|u| u.labels.iter().chain(&u.subroutines))
                    .find(|l| &l.name == name);
                hit.map(|l| vec![l.target]).ok_or_else(|| format!("no label `{name}`"))
            }
            BreakLoc::InstId { unit, id } => {
                let u = match unit {
                    None => crate::isa::UnitId(0),
                    Some(name) => self
                        .program
                        .units
                        .iter()
                        .position(|u| &u.name == name)
                        .map(|i| crate::isa::UnitId(i as u32))
                        .ok_or_else(|| format!("no function `{name}`"))?,
                };
                self.program
                    .inst_by_id(u, *id)
                    .map(|i| vec![i])
                    .ok_or_else(|| format!("no instruction ${id}"))
            }
        }
    }

    fn add_breakpoint(
        &mut self,
        loc: &BreakLoc,
        cond: Option<&str>,
        temporary: bool,
    ) -> Result<(u32, Reply), String> {
        let pcs = self.locate(loc)?;
        let cond = cond.map(|c| self.checked_condition(c)).transpose()?;
        let id = self.fresh_id();
        let (first_pc, first) = (pcs[0], self.program.inst(pcs[0]));
        let text = self.breakpoint_text(loc, &pcs);
        self.breakpoints.push(Breakpoint {
            id,
            pcs,
            text: text.clone(),
            cond,
            enabled: true,
            hits: 0,
            ignore: 0,
            temporary,
        });
        let what = if temporary { "temporary breakpoint" } else { "breakpoint" };
        let reply = Reply::text(format!("{what} {id} at {text}"))
            .with("id", json!(id))
            .with("at_line", json!(first.span.line))
            .with("at_source", json!(self.source_of(first_pc)));
        Ok((id, reply))
    }

    fn delete(&mut self, id: Option<u32>) -> Result<Reply, String> {
        match id {
            None => {
                self.breakpoints.clear();
                self.watchpoints.clear();
                Ok(Reply::text("deleted all breakpoints and watchpoints"))
            }
            Some(id) => {
                let before = self.breakpoints.len() + self.watchpoints.len();
                self.breakpoints.retain(|b| b.id != id);
                self.watchpoints.retain(|w| w.id != id);
                if before == self.breakpoints.len() + self.watchpoints.len() {
                    return Err(format!("no breakpoint or watchpoint {id}"));
                }
                Ok(Reply::text(format!("deleted {id}")))
            }
        }
    }

    /// The enabled flag and ignore count of breakpoint or watchpoint `id`.
    fn stop_point(&mut self, id: u32) -> Result<(&mut bool, &mut u64), String> {
        if let Some(b) = self.breakpoints.iter_mut().find(|b| b.id == id) {
            return Ok((&mut b.enabled, &mut b.ignore));
        }
        match self.watchpoints.iter_mut().find(|w| w.id == id) {
            Some(w) => Ok((&mut w.enabled, &mut w.ignore)),
            None => Err(format!("no breakpoint or watchpoint {id}")),
        }
    }

    fn set_enabled(&mut self, id: u32, enabled: bool) -> Result<Reply, String> {
        *self.stop_point(id)?.0 = enabled;
        Ok(Reply::text(format!("{} {id}", if enabled { "enabled" } else { "disabled" })))
    }

    /// A breakpoint condition, its region checked against the kernel's names now.
    fn checked_condition(&self, text: &str) -> Result<Condition, String> {
        let c = parse_condition(text)?;
        match &c {
            Condition::Compare(c) => {
                resolve_region(&self.program, crate::isa::UnitId(0), &c.region, 32)?;
            }
            Condition::WorkItem(id) => {
                let geometry = self.geometry.as_ref().ok_or("this is a raw launch: it has no work-items")?;
                geometry.locate(*id)?;
            }
        }
        Ok(c)
    }

    fn set_condition(&mut self, id: u32, cond: Option<&str>) -> Result<Reply, String> {
        if let Some(i) = self.watchpoints.iter().position(|w| w.id == id) {
            let target = &self.watchpoints[i].target;
            let ty = self.watch_type(target);
            let cond = cond.map(|c| watch_condition(target, ty, c)).transpose()?;
            let text = match &cond {
                Some(c) => format!("watchpoint {id} stops only if {c}"),
                None => format!("watchpoint {id} is now unconditional"),
            };
            self.watchpoints[i].cond = cond;
            return Ok(Reply::text(text));
        }
        let cond = cond.map(|c| self.checked_condition(c)).transpose()?;
        let Some(bp) = self.breakpoints.iter_mut().find(|b| b.id == id) else {
            return Err(format!("no breakpoint or watchpoint {id}"));
        };
        let text = match &cond {
            Some(c) => format!("breakpoint {id} stops only if {c}"),
            None => format!("breakpoint {id} is now unconditional"),
        };
        bp.cond = cond;
        Ok(Reply::text(text))
    }

    fn set_ignore(&mut self, id: u32, count: u64) -> Result<Reply, String> {
        *self.stop_point(id)?.1 = count;
        let text = match count {
            0 => format!("{id} will stop the next time it is reached"),
            1 => format!("{id} will not stop the next time it is reached"),
            n => format!("{id} will not stop the next {n} times it is reached"),
        };
        Ok(Reply::text(text).with("ignore", json!(count)))
    }

    fn add_display(&mut self, shown: &Command) -> Result<Reply, String> {
        if shown.shown_text().is_none() {
            return Err("display shows a region (print) or memory (x/NFU ADDR)".into());
        }
        // Run once now, so that a typo is an error here and not a message after every step.
        self.execute(shown)?;
        let id = self.next_display;
        self.next_display += 1;
        self.displays.push(super::Display { id, cmd: shown.clone() });
        let (values, lines) = self.display_values();
        let i = values.len() - 1;
        Ok(Reply::text(lines[i].clone()).with("id", json!(id)).with("displays", json!([values[i]])))
    }

    /// `list [LOC]`: ten lines of LOC's file around it (the focused thread's instruction
    /// without LOC), `=>` on the focused thread's line, `b` on lines with a breakpoint.
    fn list(&mut self, loc: Option<&BreakLoc>) -> Result<Reply, String> {
        if let Some(listing) = self.list_source(loc) {
            return listing;
        }
        let here = self.program.inst(self.machine.thread(self.focus).control.pc).span;
        let (file_id, center) = match loc {
            None => (here.file, here.line),
            // Any line, code or not.
            Some(BreakLoc::Line { file, line }) => match self.files_named(file.as_deref()).first() {
                Some(&f) => (f, *line),
                None => return Err(format!("no source file `{}`", file.as_deref().unwrap_or(""))),
            },
            Some(other) => {
                let span = self.program.inst(self.locate(other)?[0]).span;
                (span.file, span.line)
            }
        };
        let file = self.program.file(file_id);
        let n_lines = file.text.lines().count() as u32;
        if center == 0 || center > n_lines {
            return Err(format!("line {center} is outside {} ({n_lines} lines)", file.path));
        }
        let marked: Vec<u32> = self
            .breakpoints
            .iter()
            .flat_map(|b| b.pcs.iter())
            .map(|&p| self.program.inst(p).span)
            .filter(|s| s.file == file_id)
            .map(|s| s.line)
            .collect();
        let current = (here.file == file_id).then_some(here.line);
        Ok(listing(&file.path, center, n_lines, current, &marked, |line| file.line_text(line)))
    }

    fn undisplay(&mut self, id: Option<u32>) -> Result<Reply, String> {
        match id {
            None => self.displays.clear(),
            Some(id) => {
                let before = self.displays.len();
                self.displays.retain(|d| d.id != id);
                if self.displays.len() == before {
                    return Err(format!("no display {id}"));
                }
            }
        }
        Ok(Reply::text(match id {
            None => "deleted all displays".to_string(),
            Some(id) => format!("deleted display {id}"),
        }))
    }

    /// Every display evaluated in the focused thread: JSON objects and lines of text. A
    /// display whose region does not resolve here (another function's variable) shows the
    /// error instead.
    fn display_values(&mut self) -> (Vec<Value>, Vec<String>) {
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for d in self.displays.clone() {
            match self.execute(&d.cmd) {
                Ok(r) => {
                    lines.push(format!("{}: {}", d.id, r.text));
                    values.push(json!({"id": d.id, "expr": d.text(), "value": r.fields["value"]}));
                }
                Err(e) => {
                    lines.push(format!("{}: {}: {e}", d.id, d.text()));
                    values.push(json!({"id": d.id, "expr": d.text(), "error": e}));
                }
            }
        }
        (values, lines)
    }

    /// `thread apply`: `cmd` (one that neither moves nor changes the session) with each of
    /// `threads` focused in turn; the focus and lane are as before afterwards. It fails only
    /// when it fails in every thread (a typo, most likely); otherwise each thread's error
    /// is in its result.
    fn thread_apply(&mut self, threads: &ThreadSet, cmd: &Command) -> Result<Reply, String> {
        let n = self.machine.threads.len() as u32;
        let list: Vec<u32> = match threads {
            ThreadSet::All => (0..n).collect(),
            ThreadSet::List(ranges) => {
                if let Some(&(_, hi)) = ranges.iter().find(|r| r.1 >= n) {
                    return Err(format!("no thread {hi} (there are {n})"));
                }
                ranges.iter().flat_map(|&(lo, hi)| lo..=hi).collect()
            }
        };
        let (focus, lane) = (self.focus, self.lane);
        let mut results = Vec::new();
        let mut texts = Vec::new();
        let mut first_error = None;
        for &t in &list {
            self.focus = ThreadId(t);
            self.lane = lane.min(self.machine.thread(self.focus).simd - 1);
            let mut result = Map::new();
            result.insert("thread".into(), json!(t));
            match self.execute(cmd) {
                Ok(reply) => {
                    let sep = if reply.text.contains('\n') { "\n" } else { " " };
                    texts.push(format!("thread {t}:{sep}{}", reply.text));
                    result.extend(reply.fields);
                }
                Err(e) => {
                    texts.push(format!("thread {t}: error: {e}"));
                    result.insert("error".into(), json!(e));
                    first_error.get_or_insert(e);
                }
            }
            results.push(Value::Object(result));
        }
        (self.focus, self.lane) = (focus, lane);
        match first_error {
            Some(e) if results.iter().all(|r| r.get("error").is_some()) => Err(e),
            _ => Ok(Reply::text(texts.join("\n")).with("results", json!(results))),
        }
    }

    /// Resolves a location to a register byte range (focused thread) or a memory range.
    pub(super) fn location(
        &self,
        text: &str,
        len: Option<u64>,
        lane: Option<u32>,
    ) -> Result<WatchTarget, String> {
        self.location_or(text, len, lane, 4)
    }

    /// [`Session::location`], a memory location without a length being the element that holds
    /// it in a typed buffer, else `untyped` bytes.
    pub(super) fn location_or(
        &self,
        text: &str,
        len: Option<u64>,
        lane: Option<u32>,
        untyped: u64,
    ) -> Result<WatchTarget, String> {
        let simd = self.machine.thread(self.focus).simd;
        let name_end = text.find(['(', '<', ':']).unwrap_or(text.len());
        if self.program.var_id(self.unit(), &text[..name_end]).is_some() {
            let r = resolve_region(&self.program, self.unit(), text, simd)?;
            let size = r.ty.size();
            let ranges: Vec<(u32, u32)> = match lane {
                Some(l) if l >= r.n => {
                    return Err(format!("lane {l} is outside the region's {} elements", r.n))
                }
                Some(l) => vec![(r.offset(l), r.offset(l) + size)],
                None => (0..r.n).map(|i| (r.offset(i), r.offset(i) + size)).collect(),
            };
            return Ok(WatchTarget::Register { thread: self.focus.0, ranges, text: text.to_string() });
        }
        let (space, addr) = self.memory_at(text)?;
        let (addr, len) = match len {
            Some(len) => (addr, len.max(1)),
            None => self.default_range(space, addr, untyped),
        };
        // Values of the whole range are read at every hit and query.
        if len > MAX_MEMORY_LEN || addr.checked_add(len).is_none() {
            return Err(format!(
                "a memory range is 1 to {MAX_MEMORY_LEN} bytes below 2^64 (got {len} at {addr:#x})"
            ));
        }
        Ok(WatchTarget::Memory { space, addr, len })
    }

    /// A file a command names: as given when it exists from the working folder (absolute, or
    /// relative to where vdb runs, as gdb reads files), else relative to the launch file.
    pub(super) fn user_path(&self, file: &str) -> std::path::PathBuf {
        let given = std::path::Path::new(file);
        if given.is_absolute() || given.exists() {
            given.to_path_buf()
        } else {
            self.base_dir.join(given)
        }
    }

    /// Reads a file a command names ([`Session::user_path`]): a regular file of at most `max`
    /// bytes (`/dev/zero` or a huge file is an error, not an endless read).
    pub(super) fn read_user_file(
        &self,
        file: &str,
        max: u64,
    ) -> Result<(std::path::PathBuf, Vec<u8>), String> {
        let path = self.user_path(file);
        let bytes =
            crate::launch::raw::read_file(&path, max).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((path, bytes))
    }

    /// `source FILE`: runs its commands (one per line, `#` comments) as if typed, stopping at
    /// the first that fails (named by file and line). The reply holds every command's text
    /// and the last movement's stop.
    fn source(&mut self, file: &str) -> Result<Reply, String> {
        if self.sourcing >= MAX_SOURCE_DEPTH {
            return Err(format!("source: files nest more than {MAX_SOURCE_DEPTH} deep"));
        }
        let (path, bytes) = self.read_user_file(file, MAX_SOURCE_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))?;
        self.sourcing += 1;
        let mut shown = Vec::new();
        let mut stop = None;
        let mut ran = 0;
        let mut failed = None;
        for (n, line) in text.lines().enumerate() {
            let result = match super::command::parse(line) {
                Ok(None) => continue,
                Ok(Some(cmd)) => self.execute(&cmd),
                Err(e) => Err(e.to_string()),
            };
            shown.push(format!("(vdb) {}", line.trim()));
            match result {
                Ok(reply) => {
                    ran += 1;
                    stop = reply.stop.or(stop);
                    shown.push(reply.text);
                }
                Err(e) => {
                    failed = Some(format!("{}:{}: {e}", path.display(), n + 1));
                    break;
                }
            }
        }
        self.sourcing -= 1;
        if let Some(e) = failed {
            shown.push(e);
            return Err(shown.join("\n"));
        }
        let mut reply = Reply::text(shown.join("\n")).with("commands", json!(ran));
        reply.stop = stop;
        Ok(reply)
    }

    /// `out+0xb0` for an SVM address inside a buffer: its source name when the zebin gives
    /// one, else `argN` (raw launches: the region's name).
    pub fn buffer_location(&self, addr: u64) -> Option<String> {
        let (name, base, _) =
            self.buffers.iter().rev().find(|(_, base, size)| (*base..base + size).contains(&addr))?;
        Some(if addr == *base { name.clone() } else { format!("{name}+{:#x}", addr - base) })
    }

    /// A memory location as commands accept it: [`Session::buffer_location`] for SVM inside
    /// a buffer, else as `x` writes it (`0x1000`, `slm1+0x40`).
    pub fn named_location(&self, space: MemSpace, addr: u64) -> String {
        match space {
            MemSpace::Svm => self.buffer_location(addr).unwrap_or_else(|| location_text(space, addr)),
            MemSpace::Slm(_) => location_text(space, addr),
        }
    }

    /// A memory address expression (SVM, or `slm[G][+OFF]`) resolved for the focused thread;
    /// an SLM one must name a work-group that has SLM.
    pub fn memory_at(&self, text: &str) -> Result<(MemSpace, u64), String> {
        let group = self.machine.thread(self.focus).group;
        let (space, addr) = resolve_memory(text, &self.buffers, group)?;
        if let MemSpace::Slm(g) = space {
            let Some(slm) = self.machine.slms.get(g as usize) else {
                return Err(format!(
                    "work-group {g} has no SLM (the launch has {})",
                    self.machine.slms.len()
                ));
            };
            if addr >= slm.bytes.len() as u64 {
                return Err(format!("offset {addr:#x} is past the {} bytes of SLM", slm.bytes.len()));
            }
        }
        Ok((space, addr))
    }

    fn add_watch(
        &mut self,
        kind: WatchKind,
        target: &str,
        len: Option<u64>,
        lane: Option<u32>,
        cond: Option<&str>,
    ) -> Result<Reply, String> {
        let (target, ty) = self.watch_location(target, len, lane)?;
        if matches!(target, WatchTarget::Register { .. }) && kind != WatchKind::Write {
            return Err("read watchpoints work on SVM memory only".into());
        }
        // Memory no buffer holds (a guard page, past a buffer's end) can never be accessed
        // without a fault: a watchpoint there would never stop, so it is refused.
        if let WatchTarget::Memory { space: MemSpace::Svm, addr, len } = target {
            if self.machine.svm.region_of(addr, len).is_none() {
                let near = self
                    .machine
                    .svm
                    .regions()
                    .iter()
                    .map(|r| format!("`{}` [{:#x}, +{})", r.name, r.start, r.len))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(format!("[{addr:#x}, +{len}) is not inside one buffer (buffers: {near})"));
            }
        }
        let cond = cond.map(|c| watch_condition(&target, ty, c)).transpose()?;
        let id = self.fresh_id();
        let desc = describe_target(&target);
        let text = match &cond {
            Some(c) => format!("watchpoint {id}: {desc} if {c}"),
            None => format!("watchpoint {id}: {desc}"),
        };
        self.watchpoints.push(Watchpoint { id, kind, target, cond, enabled: true, hits: 0, ignore: 0 });
        Ok(Reply::text(text).with("id", json!(id)))
    }

    /// A watch target and the type its value reads as ([`Session::watch_type`]).
    fn watch_location(
        &self,
        text: &str,
        len: Option<u64>,
        lane: Option<u32>,
    ) -> Result<(WatchTarget, DataType), String> {
        let target = self.location(text, len, lane)?;
        let ty = self.watch_type(&target);
        Ok((target, ty))
    }

    /// How a watched value reads: a register region's element type, or for memory an unsigned
    /// integer of the range's length.
    fn watch_type(&self, target: &WatchTarget) -> DataType {
        match target {
            WatchTarget::Register { text, thread, .. } => {
                let simd = self.machine.thread(ThreadId(*thread)).simd;
                resolve_region(&self.program, self.unit(), text, simd)
                    .or_else(|_| resolve_region(&self.program, crate::isa::UnitId(0), text, simd))
                    .map_or(DataType::Ud, |r| r.ty)
            }
            // One scalar element of a typed buffer reads as its type (`watch out+8 if > 1.5`).
            WatchTarget::Memory { space, addr, len } => match self.typed_range(*space, *addr, *len) {
                Some(e) if e.lanes == 1 && e.size() == *len => e.scalar,
                _ => super::format::unit_type(*len, Format::Hex),
            },
        }
    }

    fn print(&mut self, expr: &str, format: Format) -> Result<Reply, String> {
        let thread = self.machine.thread(self.focus);
        let r = resolve_region(&self.program, self.unit(), expr, thread.simd)?;
        let values: Vec<String> =
            (0..r.n).map(|i| r.value(thread, i).map_or("?".into(), |b| fmt_value(r.ty, b, format))).collect();
        let text = format!("{expr} = [{}]", values.join(", "));
        Ok(Reply::text(text).with("value", json!(values)).with("type", json!(r.ty.name())))
    }

    /// Reads memory as it is now: SVM, or work-group G's SLM (`MemSpace::Slm(G)`).
    pub fn read_memory(&self, space: MemSpace, addr: u64, out: &mut [u8]) -> Result<(), String> {
        self.machine.read_memory(space, addr, out)
    }

    fn examine(&mut self, count: u32, format: Format, unit: u32, addr: &str) -> Result<Reply, String> {
        let (space, addr) = self.memory_at(addr)?;
        if count == 0 || count > 1 << 16 {
            return Err(format!("x/{count}: give a count from 1 to 65536"));
        }
        // No unit letter: a typed buffer's elements; `x/b`, `x/4xw` read raw units as gdb's.
        if unit == UNIT_OF_TYPE {
            if let Some(b) = self.typed_buffer(space, addr) {
                return self.examine_typed(count, format, &b, addr);
            }
        }
        // gdb's defaults where no type says otherwise: hex words.
        let unit = if unit == UNIT_OF_TYPE { 4 } else { unit };
        let format = if format == Format::Natural { Format::Hex } else { format };
        let mut bytes = vec![0u8; count as usize * unit as usize];
        self.read_memory(space, addr, &mut bytes)?;
        let ty = super::format::unit_type(u64::from(unit), format);
        let values: Vec<String> =
            bytes.chunks(unit as usize).map(|c| fmt_value(ty, load_le(c, unit), format)).collect();
        let mut text = String::new();
        for (i, row) in values.chunks(8).enumerate() {
            let at = location_text(space, addr + (i * 8) as u64 * unit as u64);
            text.push_str(&format!("{at}: {}\n", row.join(" ")));
        }
        Ok(Reply::text(text.trim_end())
            .with("space", json!(space_name(space)))
            .with("address", json!(format!("{addr:#x}")))
            .with("value", json!(values)))
    }

    pub(super) fn writes_query(&mut self, loc: &str, limit: usize) -> Result<Reply, String> {
        let (text, len) = match loc.rsplit_once(' ') {
            Some((t, l)) => (t.trim(), crate::launch::raw::parse_number(l)),
            None => (loc.trim(), None),
        };
        let target = self.location_or(text, len, None, 1)?;
        let (hits, base) = match &target {
            WatchTarget::Register { thread, ranges, .. } => {
                // One element: the region's element at the focused lane.
                let (lo, hi) = ranges.get(self.lane as usize).copied().unwrap_or(ranges[0]);
                let current = self.machine.thread(ThreadId(*thread)).grf[lo as usize..hi as usize].to_vec();
                (self.recorder.trace.grf_writes(*thread, lo, hi - lo, self.now, &current, limit), lo as u64)
            }
            WatchTarget::Memory { space, addr, len } => {
                let mut current = vec![0u8; *len as usize];
                self.read_memory(*space, *addr, &mut current)?;
                (self.recorder.trace.mem_writes(*space, *addr, *len, self.now, &current, limit), *addr)
            }
        };
        // Memory writers' lanes come from their address registers as they were at the writing
        // step: walk a copy of the machine back through the hits (newest first).
        let mut state = self.machine.clone();
        let mut at = self.now;
        let mut writes: Vec<Value> = Vec::new();
        // Each write's old -> new, as the buffer's elements where it has a type.
        let mut changes: Vec<String> = Vec::new();
        for h in &hits {
            if matches!(target, WatchTarget::Memory { .. }) {
                self.recorder.seek(&mut state, at, h.step);
                at = h.step;
            }
            let inst = self.program.inst(InstIdx(h.pc));
            let lanes = self.writer_lanes(h.step, h.pc, &target, h.first_written, &state);
            // A one-channel instruction writes the thread's value, no work-item's.
            let items: &[u32] = if inst.exec.size == 1 { &[] } else { &lanes };
            let mut write = json!({
                "step": h.step, "thread": h.thread, "line": inst.span.line, "id": inst.id,
                "instruction": self.program.inst_text(InstIdx(h.pc)),
                "lane": lanes.first(), "lanes": lanes,
                "workitem": items.first().map_or(Value::Null, |&l| self.work_item_json(h.thread, l)),
                "workitems": self.work_items_of(h.thread, items),
                "old": hex(&h.old), "new": hex(&h.new),
            });
            let typed = self.typed_change(&target, &h.old, &h.new);
            let raw = || format!("{} -> {}", hex(&h.old), hex(&h.new));
            changes.push(typed.as_ref().map_or_else(raw, TypedChange::text));
            if let (Some(t), Value::Object(fields)) = (typed, &mut write) {
                fields.extend(t.fields());
            }
            if let (Some(source), Value::Object(fields)) = (self.source_of(InstIdx(h.pc)), &mut write) {
                fields.insert("source".into(), json!(source));
            }
            writes.push(write);
        }
        let desc = describe_target(&target);
        if limit == 1 {
            let Some(w) = writes.first() else {
                return Ok(Reply::text(format!("{desc}: no write before step {}", self.now))
                    .with("writer", Value::Null));
            };
            let text = format!(
                "{desc} ({base:#x}): last written at step {} by thread {}, lane {}{}, line {}: {}  ({})",
                w["step"],
                w["thread"],
                w["lane"],
                writer_work_items(w),
                w["line"],
                w["instruction"].as_str().unwrap_or(""),
                changes.first().map_or("", String::as_str)
            );
            let mut reply = Reply::text(text);
            for key in ["step", "thread", "lane", "workitem", "line", "instruction", "old", "new"] {
                reply.fields.insert(format!("writer_{key}"), w[key].clone());
            }
            return Ok(reply.with("writer", w.clone()));
        }
        let text: Vec<String> = writes
            .iter()
            .zip(&changes)
            .map(|(w, change)| {
                format!(
                    "step {} thread {} lane {}{} line {}: {change}",
                    w["step"],
                    w["thread"],
                    w["lane"],
                    writer_work_items(w),
                    w["line"],
                )
            })
            .collect();
        Ok(Reply::text(format!("{desc}: {} writes\n{}", writes.len(), text.join("\n")))
            .with("writes", json!(writes)))
    }

    fn info(&mut self, what: InfoWhat) -> Result<Reply, String> {
        match what {
            InfoWhat::Threads => {
                let rows: Vec<Value> = self
                    .machine
                    .threads
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let (group, index) = self.thread_labels.get(i).copied().unwrap_or_default();
                        let line = self.program.insts.get(t.control.pc.0 as usize).map_or(0, |x| x.span.line);
                        // The work-items of its first and last dispatched lanes (OpenCL).
                        let lanes = (0..t.simd).filter(|l| t.dispatch_mask >> l & 1 != 0);
                        let ends = [lanes.clone().next(), lanes.clone().next_back()]
                            .map(|l| l.and_then(|l| self.work_item(i as u32, l)).map(|w| self.work_item_text(&w)));
                        let workitems = match ends {
                            [Some(a), Some(b)] => json!([a, b]),
                            _ => Value::Null,
                        };
                        json!({"thread": i, "status": self.thread_state(i),
                               "group": group, "index": index, "line": line, "em": format!("{:#010x}", t.control.em),
                               "workitems": workitems})
                    })
                    .collect();
                let text: Vec<String> = rows
                    .iter()
                    .map(|r| {
                        let items = match r["workitems"].as_array().map(Vec::as_slice) {
                            Some([a, b]) => format!(
                                " work-items {}..{}",
                                a.as_str().unwrap_or(""),
                                b.as_str().unwrap_or("")
                            ),
                            _ => String::new(),
                        };
                        format!(
                            "{}{:>4} {:10} group {} line {} em {}{items}",
                            if r["thread"] == self.focus.0 { "*" } else { " " },
                            r["thread"],
                            r["status"].as_str().unwrap_or(""),
                            r["group"],
                            r["line"],
                            r["em"].as_str().unwrap_or("")
                        )
                    })
                    .collect();
                Ok(Reply::text(text.join("\n")).with("threads", json!(rows)))
            }
            InfoWhat::Masks => {
                let t = self.machine.thread(self.focus);
                let pc = t.control.pc;
                let inst = self.program.inst(pc);
                let (chen, _, _) = crate::exec::channel_enables(inst, t.control.em, &t.preds);
                let waiting: Vec<Value> = t
                    .control
                    .waiting
                    .iter()
                    .map(|w| json!({"line": self.program.inst(w.at).span.line, "lanes": format!("{:#010x}", w.lanes)}))
                    .collect();
                // Lanes waiting to rejoin, as `lanes at line N`, one per reconvergence point.
                let waiting_text: Vec<String> = t
                    .control
                    .waiting
                    .iter()
                    .map(|w| format!("{:#010x} at line {}", w.lanes, self.program.inst(w.at).span.line))
                    .collect();
                let waiting_text =
                    if waiting_text.is_empty() { "none".to_string() } else { waiting_text.join(", ") };
                let text = format!(
                    "em {:#010x}  call mask {:#010x}  dispatch {:#010x}  chen {:#010x} (offset {})  waiting: {waiting_text}",
                    t.control.em, t.control.call_mask, t.dispatch_mask, chen, inst.exec.offset
                );
                Ok(Reply::text(text)
                    .with("em", json!(t.control.em))
                    .with("call_mask", json!(t.control.call_mask))
                    .with("dispatch_mask", json!(t.dispatch_mask))
                    .with("chen", json!(chen))
                    .with("waiting", json!(waiting)))
            }
            InfoWhat::Predicates => {
                let t = self.machine.thread(self.focus);
                let preds: Map<String, Value> = self
                    .program
                    .preds
                    .iter()
                    .zip(&t.preds)
                    .map(|(p, v)| (p.name.clone(), json!(format!("{v:#010x}"))))
                    .collect();
                let text: Vec<String> =
                    preds.iter().map(|(k, v)| format!("{k} = {}", v.as_str().unwrap_or(""))).collect();
                Ok(Reply::text(text.join("\n")).with("predicates", Value::Object(preds)))
            }
            InfoWhat::Registers => {
                let t = self.machine.thread(self.focus);
                let unit = self.unit();
                let (mut rows, mut counts, mut text) = (Map::new(), Map::new(), Vec::new());
                for v in self.program.vars.iter().filter(|v| {
                    v.alias.is_none() && (v.unit == Some(unit) || v.name == "%r0" || v.name == "%cr0")
                }) {
                    let bytes = &t.grf[v.offset as usize..(v.offset + v.size) as usize];
                    let n = bytes.len() / v.ty.size().max(1) as usize;
                    let vals: Vec<String> = bytes
                        .chunks(v.ty.size() as usize)
                        .take(INFO_REGISTER_ELEMENTS)
                        .map(|c| fmt_value(v.ty, load_le(c, v.ty.size()), Format::Natural))
                        .collect();
                    // Elements not shown are said so, as gdb's `...`, with how many.
                    let more = match n.saturating_sub(vals.len()) {
                        0 => String::new(),
                        rest => format!(", … ({rest} more of {n}; `print {}` shows all)", v.name),
                    };
                    text.push(format!("{:10} {{{}{more}}}", v.name, vals.join(", ")));
                    rows.insert(v.name.clone(), json!(vals));
                    counts.insert(v.name.clone(), json!(n));
                }
                Ok(Reply::text(text.join("\n"))
                    .with("registers", Value::Object(rows))
                    .with("elements", Value::Object(counts)))
            }
            InfoWhat::Breakpoints => {
                let mut rows = Vec::new();
                for b in &self.breakpoints {
                    rows.push(json!({"id": b.id, "kind": if b.temporary { "tbreakpoint" } else { "breakpoint" }, "at": b.text, "enabled": b.enabled, "hits": b.hits,
                                     "cond": b.cond.as_ref().map(|c| c.to_string()), "ignore": b.ignore}));
                }
                for w in &self.watchpoints {
                    rows.push(json!({"id": w.id, "kind": format!("{:?}", w.kind).to_lowercase() + "-watch", "at": describe_target(&w.target), "enabled": w.enabled, "hits": w.hits,
                                     "cond": w.cond.as_ref().map(|c| c.to_string()), "ignore": w.ignore}));
                }
                let text: Vec<String> = rows
                    .iter()
                    .map(|r| {
                        let field = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                        let cond = r["cond"].as_str().map(|c| format!(" if {c}")).unwrap_or_default();
                        let ignore = match r["ignore"].as_u64() {
                            Some(n) if n > 0 => format!(" (ignore next {n})"),
                            _ => String::new(),
                        };
                        format!(
                            "{} {} {}{cond} hits {}{ignore}{}",
                            r["id"],
                            field("kind"),
                            field("at"),
                            r["hits"],
                            if r["enabled"] == true { "" } else { " (disabled)" }
                        )
                    })
                    .collect();
                let text =
                    if text.is_empty() { "no breakpoints or watchpoints".into() } else { text.join("\n") };
                Ok(Reply::text(text).with("breakpoints", json!(rows)))
            }
            InfoWhat::Display => {
                let rows: Vec<Value> =
                    self.displays.iter().map(|d| json!({"id": d.id, "expr": d.text()})).collect();
                let text: Vec<String> =
                    self.displays.iter().map(|d| format!("{}: {}", d.id, d.text())).collect();
                let text = if text.is_empty() { "no displays".into() } else { text.join("\n") };
                Ok(Reply::text(text).with("displays", json!(rows)))
            }
            InfoWhat::Lanes => self.info_lanes(),
            InfoWhat::Args => Ok(self.info_args()),
            InfoWhat::Races => Ok(self.races_reply()),
            InfoWhat::Record => {
                let parts = self.recorder.recorded_bytes_by_part();
                let (steps, bytes) = (self.total_steps(), parts.total());
                let per_step = |b: u64| b as f64 / steps.max(1) as f64;
                let end = match &self.end {
                    None => "recording goes on as the run moves forward".to_string(),
                    Some(super::EndState::Finished) => "the run is complete".to_string(),
                    Some(super::EndState::Fault(f)) => {
                        format!("the run faulted: {}", f.render_in(&self.program, self.geometry.as_ref()))
                    }
                    Some(super::EndState::RecordLimit(b)) => {
                        format!("the recording budget stopped it at {b} bytes")
                    }
                };
                let checkpoints = &self.recorder.checkpoints;
                let held = self.recorder.trace.parts_held();
                let cache_bytes = self.recorder.trace.cache.limit(self.recorder.len());
                let text = format!(
                    "{steps} steps recorded, now at step {}; {end}\n{bytes} bytes, {:.1} per step: log {:.1}, step records {:.1}, checkpoints {:.1}, control table {:.1}, index {:.1}\n{} checkpoints, every {} steps; {held} of {} parts held (the others are recorded again when read; logs kept: {}); budget {} bytes",
                    self.now,
                    per_step(bytes),
                    per_step(parts.log),
                    per_step(parts.steps),
                    per_step(parts.checkpoints),
                    per_step(parts.controls),
                    per_step(parts.index),
                    checkpoints.list.len(),
                    checkpoints.interval,
                    self.recorder.trace.parts(),
                    match cache_bytes {
                        None => "all".to_string(),
                        Some(n) => format!("up to {n} bytes, `set log-cache`"),
                    },
                    self.record_limit
                );
                Ok(Reply::text(text)
                    .with("steps", json!(steps))
                    .with("recorded_bytes", json!(bytes))
                    .with("recorded", json!(parts))
                    .with("bytes_per_step", json!(per_step(bytes)))
                    .with("checkpoints", json!(checkpoints.list.len()))
                    .with("parts", json!(self.recorder.trace.parts()))
                    .with("parts_held", json!(held))
                    .with("log_cache_bytes", json!(cache_bytes))
                    .with("complete", json!(self.end.is_some()))
                    .with("record_limit", json!(self.record_limit)))
            }
            InfoWhat::Marks => {
                let text: Vec<String> = self.marks.iter().map(|(k, v)| format!("{k} = step {v}")).collect();
                Ok(Reply::text(text.join("\n")).with("marks", json!(self.marks)))
            }
            InfoWhat::Frame => {
                let frames = self.backtrace(self.focus);
                let control = &self.machine.thread(self.focus).control;
                let mut text = vec![
                    format!("frame {}", frame_text(&frames[0])),
                    format!("  call mask {:#x}, {} frame(s) deep", control.call_mask, frames.len()),
                ];
                if let Some(caller) = frames.get(1) {
                    text.push(format!("  called from {}", frame_text(caller)));
                }
                Ok(Reply::text(text.join("\n"))
                    .with("frame", json!(frames[0]))
                    .with("caller", json!(frames.get(1)))
                    .with("call_mask", json!(control.call_mask))
                    .with("depth", json!(frames.len())))
            }
        }
    }

    /// Lanes of the instruction at `pc` (executed at `step`) that wrote the location, as
    /// the thread's channels (an `(M5, 16)` instruction's first lane is 16); `state` is the
    /// machine just before that step.
    fn writer_lanes(&self, step: u64, pc: u32, target: &WatchTarget, byte: u64, state: &Machine) -> Vec<u32> {
        let inst = self.program.inst(InstIdx(pc));
        let chen = self.recorder.trace.at(step).chen;
        match (target, inst.operands.first()) {
            // The enabled channels whose destination bytes (`addc`'s carry and `madw`'s high
            // half included) hold the byte.
            (WatchTarget::Register { .. }, Some(Operand::Direct(_))) => (0..inst.exec.size)
                .filter(|&l| chen >> l & 1 != 0)
                .filter(|&l| crate::exec::dst_holds_byte(inst, l, self.program.grf_size, byte))
                .map(|l| l + inst.exec.offset)
                .collect(),
            (WatchTarget::Memory { .. }, _) => self.lanes_at(step, target, state),
            _ => Vec::new(),
        }
    }

    /// Lanes of step `step`'s instruction that touch `target`, `state` being the machine
    /// just before the step.
    pub(crate) fn lanes_touching(&self, step: u64, target: &WatchTarget, state: &Machine) -> Vec<u32> {
        match target {
            WatchTarget::Memory { .. } => self.lanes_at(step, target, state),
            WatchTarget::Register { ranges, .. } => {
                let rec = self.recorder.trace.at(step);
                let lo = ranges.iter().map(|r| r.0).min().unwrap_or(0) as u64;
                self.writer_lanes(step, rec.pc, target, lo, state)
            }
        }
    }

    /// Lanes of step `step`'s instruction whose memory accesses overlap `target`, `state`
    /// being the machine just before the step. The step runs again on a copy of `state`
    /// with an observer told which lane each access is for: exact for every message kind
    /// and memory (SVM, SLM, bound surfaces, LSC, atomics), with no address decoding here.
    fn lanes_at(&self, step: u64, target: &WatchTarget, state: &Machine) -> Vec<u32> {
        let WatchTarget::Memory { space, addr, len } = *target else { return Vec::new() };
        let rec = self.recorder.trace.at(step);
        let offset = self.program.inst(InstIdx(rec.pc)).exec.offset;
        let mut lanes: Vec<u32> = self
            .step_accesses(state, step)
            .iter()
            .filter(|a| a.space == space && a.addr < addr + len && addr < a.addr + a.len)
            .filter_map(|a| a.lane.map(|lane| lane + offset))
            .collect();
        lanes.sort_unstable();
        lanes.dedup();
        lanes
    }

    /// The memory accesses of step `step`, each with its channel: the step runs again on a
    /// copy of `state` (the machine just before it) with an observer told each access's lane.
    /// A thread the scheduler released from a barrier just before the step (the release is
    /// logged with the step) is released on the copy too; it would not run otherwise.
    pub(super) fn step_accesses(&self, state: &Machine, step: u64) -> Vec<Access> {
        let thread = ThreadId(self.recorder.trace.at(step).thread);
        let mut copy = state.clone();
        if copy.thread(thread).control.status == ThreadStatus::AtBarrier {
            copy.thread_mut(thread).control.status = ThreadStatus::Running;
        }
        let mut seen = LaneAccesses::default();
        // A fault ends the step where the recording ended it; the accesses before count.
        let _ = self.interp.step(&mut copy, thread, &mut seen);
        seen.accesses
    }
}

impl Session {
    /// The data races of the run, checked once from step 0 under the session's schedule
    /// (`vdb::races`; the steps are the recording's).
    pub fn races(&mut self) -> &[crate::races::Race] {
        &self.checked().0
    }

    /// The reads of SLM nothing wrote before in the run (from the same check as
    /// [`Session::races`]).
    pub fn uninit_reads(&mut self) -> &[crate::races::UninitRead] {
        &self.checked().1
    }

    fn checked(&mut self) -> &(Vec<crate::races::Race>, Vec<crate::races::UninitRead>) {
        let (interp, start) = (&self.interp, &self.start);
        self.checked.get_or_insert_with(|| {
            let (mut machine, mut sched) = (**start).clone();
            let run = crate::races::check_races(interp, &mut machine, &mut sched);
            (run.races, run.uninit)
        })
    }

    /// `races` / `info races`: the data races of the run, checked once from step 0 under the
    /// session's schedule (`vdb::races`), each with both accesses (`goto` takes either step).
    fn races_reply(&mut self) -> Reply {
        let races = self.races().to_vec();
        let uninit = self.uninit_reads().to_vec();
        let access = |a: &crate::races::Access| {
            let inst = self.program.inst(InstIdx(a.pc));
            let workitem = self.work_item(a.thread, a.channel).map(|w| self.work_item_text(&w));
            json!({"step": a.step, "thread": a.thread, "lane": a.channel, "workitem": workitem,
                   "access": if a.write { "write" } else { "read" }, "atomic": a.atomic, "value": a.value,
                   "line": inst.span.line, "source": self.source_of(InstIdx(a.pc)),
                   "instruction": self.program.inst_text(InstIdx(a.pc)).trim()})
        };
        let rows: Vec<Value> = races
            .iter()
            .map(|r| {
                json!({"kind": r.kind, "memory": r.place.name(), "addr": r.addr, "slm_group": r.place.slm_group(),
                       "count": r.count, "accesses": [access(&r.first), access(&r.second)]})
            })
            .collect();
        let uninit_rows: Vec<Value> = uninit
            .iter()
            .map(|u| {
                json!({"memory": u.place.name(), "slm_group": u.place.slm_group(), "addr": u.addr, "count": u.count,
                       "read": access(&u.read)})
            })
            .collect();
        let geometry = self.geometry.as_ref();
        let mut text: Vec<String> = races.iter().map(|r| r.render(&self.program, geometry)).collect();
        text.extend(uninit.iter().map(|u| u.render(&self.program, geometry)));
        text.push(match (races.len(), uninit.len()) {
            (0, 0) => "no data races and no reads of uninitialised SLM".to_string(),
            (r, u) => {
                format!("{r} race report(s), {u} uninitialised-read report(s); `goto STEP` goes to an access")
            }
        });
        Reply::text(text.join("\n")).with("races", json!(rows)).with("uninit_reads", json!(uninit_rows))
    }
}

/// One memory access of a re-executed step.
pub(super) struct Access {
    pub lane: Option<u32>,
    pub space: MemSpace,
    pub addr: u64,
    pub len: u64,
    /// A write (a store, an atomic's update), not a read.
    pub write: bool,
}

/// Hears a step's memory accesses and the lane of each.
#[derive(Default)]
pub(super) struct LaneAccesses {
    next_lane: Option<u32>,
    pub accesses: Vec<Access>,
}

impl LaneAccesses {
    fn push(&mut self, space: MemSpace, addr: u64, len: u64, write: bool) {
        // The lane named just before this access, once (block messages name none).
        let lane = self.next_lane.take();
        self.accesses.push(Access { lane, space, addr, len, write });
    }
}

impl crate::exec::Observer for LaneAccesses {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: ThreadId, _: u32, _: &[u8], _: &[u8]) {}
    fn pred(&mut self, _: ThreadId, _: crate::isa::PredId, _: u32, _: u32) {}
    fn addr(&mut self, _: ThreadId, _: u32, _: u32, _: u32) {}
    fn control(&mut self, _: ThreadId, _: &crate::machine::Control, _: &crate::machine::Control) {}
    fn mem(&mut self, _: ThreadId, space: MemSpace, addr: u64, _: &[u8], new: &[u8]) {
        self.push(space, addr, new.len() as u64, true);
    }
    fn mem_read(&mut self, _: ThreadId, space: MemSpace, addr: u64, len: u64) {
        self.push(space, addr, len, false);
    }
    fn access_lane(&mut self, lane: Option<u32>) {
        self.next_lane = lane;
    }
}

/// The longest memory range a watchpoint, `last-write` or `history` takes (16 MiB).
pub(super) const MAX_MEMORY_LEN: u64 = 1 << 24;

/// How deep `source` files may nest (a file that sources itself stops here).
const MAX_SOURCE_DEPTH: u32 = 8;
/// The largest command file `source` reads.
const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// A watchpoint's value condition, which needs one value to test: one register element, or a
/// memory range of 1, 2, 4 or 8 bytes.
fn watch_condition(target: &WatchTarget, ty: DataType, text: &str) -> Result<ValueCondition, String> {
    let one = match target {
        WatchTarget::Register { ranges, .. } => ranges.iter().all(|r| *r == ranges[0]),
        WatchTarget::Memory { len, .. } => matches!(len, 1 | 2 | 4 | 8),
    };
    if !one {
        return Err(
            "a watch condition tests one value: watch one element (`lane L`) or 1, 2, 4 or 8 bytes".into()
        );
    }
    ValueCondition::parse(text, ty)
}

/// ` (work-item 53)` for a writer object of `last-write`/`history` that names work-items.
pub(super) fn writer_work_items(writer: &Value) -> String {
    let items: Vec<&str> =
        writer["workitems"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    match work_items_phrase(&items) {
        p if p.is_empty() => p,
        p => format!(" ({p})"),
    }
}

/// `svm`, `slm3`: a memory's name in replies.
pub fn space_name(space: MemSpace) -> String {
    match space {
        MemSpace::Svm => "svm".into(),
        MemSpace::Slm(g) => format!("slm{g}"),
    }
}

fn describe_target(t: &WatchTarget) -> String {
    match t {
        WatchTarget::Memory { space: MemSpace::Svm, addr, len } => format!("SVM [{addr:#x}, +{len})"),
        WatchTarget::Memory { space: MemSpace::Slm(g), addr, len } => format!("SLM{g} [{addr:#x}, +{len})"),
        WatchTarget::Register { thread, text, .. } => format!("{text} of thread {thread}"),
    }
}
