//! The TUI's state and `update`: every key becomes an `Action` (or text for a prompt), and
//! `update` applies it to the App and its Session. Rendering (view/) only reads.

use vdb::isa::{InstIdx, Operand, UnitId, VarId};
use vdb::machine::{MemSpace, ThreadId};
use vdb::session::{self, BreakLoc, Command, Format, Session, StopReason};

use crate::action::Action;
use crate::keymap::Keymap;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pane {
    Source,
    Registers,
    Lanes,
    Timeline,
    Memory,
    Threads,
    Breakpoints,
    Log,
}

impl Pane {
    pub const ORDER: [Pane; 8] = [
        Pane::Source,
        Pane::Registers,
        Pane::Lanes,
        Pane::Timeline,
        Pane::Memory,
        Pane::Threads,
        Pane::Breakpoints,
        Pane::Log,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Source => "Source",
            Pane::Registers => "Registers",
            Pane::Lanes => "Lanes",
            Pane::Timeline => "Divergence",
            Pane::Memory => "Memory",
            Pane::Threads => "Threads",
            Pane::Breakpoints => "Breakpoints",
            Pane::Log => "Log",
        }
    }
}

/// A one-line prompt being typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptKind {
    Command,
    GotoStep,
    Variable,
    MemoryAddress,
}

#[derive(Clone, Debug)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
    /// Position in the command history while browsing it.
    pub history_pos: Option<usize>,
}

/// Lines of command output the log keeps (`info threads` on a large launch is thousands).
pub const MAX_LOG_LINES: usize = 5000;

/// An overlay of rows, some of which name a step to go to, and a cursor: `why`'s provenance
/// tree (one row per value), the race reports (two accesses each).
pub struct JumpList {
    pub title: String,
    pub rows: Vec<JumpRow>,
    pub cursor: usize,
}

pub struct JumpRow {
    pub text: String,
    /// Where Enter goes: a step, and the thread (and lane) about to make the write or access
    /// the row shows.
    pub writer: Option<(u64, u32, u32)>,
}

pub struct App {
    pub session: Session,
    pub keymap: Keymap,
    pub pane: Pane,
    /// 0-based line of the source cursor in the focused thread's file.
    pub source_cursor: usize,
    /// Follow the current instruction (cleared when the cursor moves by hand).
    pub follow: bool,
    /// Selected operand of the instruction under the source cursor.
    pub operand: usize,
    pub reg_var: Option<VarId>,
    /// The register pane keeps the variable chosen with `v` (pinned) instead of following the
    /// current instruction's operands; `v` with nothing typed, or choosing an operand in the
    /// source pane, follows again.
    pub reg_pinned: bool,
    pub reg_row: usize,
    pub reg_col: usize,
    pub format: Format,
    /// The memory pane's memory (SVM, or a work-group's SLM), first row and cursor.
    pub mem_space: MemSpace,
    pub mem_addr: u64,
    pub mem_cursor: u64,
    pub thread_cursor: usize,
    pub bp_cursor: usize,
    pub prompt: Option<Prompt>,
    pub history: Vec<String>,
    pub log: Vec<String>,
    /// Lines the log pane is scrolled up from its newest line (new output scrolls back down).
    pub log_scroll: usize,
    pub help: bool,
    /// What the help overlay shows: the key bindings (empty), or `:help`'s command list; and
    /// how far it is scrolled.
    pub help_text: Vec<String>,
    pub help_scroll: usize,
    pub jumps: Option<JumpList>,
    pub status: String,
    /// GRF bytes of the focused thread before the last movement (to mark changed cells).
    pub before: Vec<u8>,
    pub before_thread: ThreadId,
    pub no_color: bool,
    pub quit: bool,
}

impl App {
    pub fn new(session: Session, keymap: Keymap, no_color: bool) -> App {
        let mem_addr = session.buffers.first().map_or(0, |b| b.1);
        let before = session.machine.thread(session.focus).grf.clone();
        let mut app = App {
            session,
            keymap,
            pane: Pane::Source,
            source_cursor: 0,
            follow: true,
            operand: 0,
            reg_var: None,
            reg_pinned: false,
            reg_row: 0,
            reg_col: 0,
            format: Format::Natural,
            mem_space: MemSpace::Svm,
            mem_addr,
            mem_cursor: mem_addr,
            thread_cursor: 0,
            bp_cursor: 0,
            prompt: None,
            history: Vec::new(),
            log: vec!["vdb: press ? for help, : for commands".into()],
            log_scroll: 0,
            help: false,
            help_text: Vec::new(),
            help_scroll: 0,
            jumps: None,
            status: "start".into(),
            before,
            before_thread: ThreadId(0),
            no_color,
            quit: false,
        };
        app.sync_cursor();
        app.select_operand_var();
        app
    }

    /// The focused thread's current instruction.
    pub fn current_inst(&self) -> InstIdx {
        self.session.machine.thread(self.session.focus).control.pc
    }

    /// File of the focused thread's code.
    pub fn file(&self) -> vdb::program::FileId {
        let p = &self.session.program;
        p.insts.get(self.current_inst().0 as usize).map_or(p.kernel().file, |i| i.span.file)
    }

    fn sync_cursor(&mut self) {
        if self.follow {
            let line = match self.session.current_source_file() {
                Some(_) => self.session.source_near().map_or(0, |p| p.line),
                None => self.session.line(),
            };
            self.source_cursor = line.saturating_sub(1) as usize;
            self.operand = 0;
        }
    }

    /// The OpenCL file the source pane shows and the entries of the cursor's line in it,
    /// or None when the pane shows the vISA (`layout asm`, or no line information).
    pub fn cursor_source_line(&self) -> Option<(u32, Vec<InstIdx>)> {
        let file = self.session.current_source_file()?;
        Some((file, self.session.program.lines.entries(file, self.source_cursor as u32 + 1)))
    }

    /// Lines of the file the source pane shows.
    fn shown_line_count(&self) -> usize {
        let lines = &self.session.program.lines;
        match self.session.current_source_file().and_then(|f| lines.file(f)) {
            Some(f) => f.line_count() as usize,
            None => self.session.program.file(self.file()).text.lines().count(),
        }
    }

    /// The instruction on the source cursor line, if any: in the OpenCL source, the current
    /// instruction on the current line, else the line's first entry.
    pub fn cursor_inst(&self) -> Option<InstIdx> {
        if let Some((_, entries)) = self.cursor_source_line() {
            let current = self.session.source_near().map(|p| p.line as usize);
            return match current == Some(self.source_cursor + 1) {
                true => Some(self.current_inst()),
                false => entries.first().copied(),
            };
        }
        let p = &self.session.program;
        let file = self.file();
        let line = self.source_cursor as u32 + 1;
        p.insts.iter().position(|i| i.span.file == file && i.span.line == line).map(|i| InstIdx(i as u32))
    }

    fn select_operand_var(&mut self) {
        if self.reg_pinned {
            return;
        }
        let Some(idx) = self.cursor_inst() else { return };
        let inst = self.session.program.inst(idx);
        let vars: Vec<VarId> = inst.operands.iter().filter_map(operand_var).collect();
        if let Some(v) = vars.get(self.operand.min(vars.len().saturating_sub(1))) {
            self.reg_var = Some(*v);
        }
    }

    fn push_log(&mut self, text: &str) {
        for line in text.lines() {
            self.log.push(line.to_string());
        }
        let excess = self.log.len().saturating_sub(MAX_LOG_LINES);
        self.log.drain(..excess);
        self.log_scroll = 0;
    }

    /// Runs a session command, logging its text.
    pub fn run_command(&mut self, line: &str) {
        self.before = self.session.machine.thread(self.session.focus).grf.clone();
        self.before_thread = self.session.focus;
        self.push_log(&format!("(vdb) {line}"));
        match session::parse(line) {
            Ok(None) => {}
            Ok(Some(cmd)) => self.execute(&cmd),
            Err(e) => self.push_log(&format!("error: {e}")),
        }
    }

    fn execute(&mut self, cmd: &Command) {
        match self.session.execute(cmd) {
            // The command list is long: it opens in the help overlay, which scrolls, rather
            // than in the narrow log pane.
            Ok(reply) if matches!(cmd, Command::Help) => {
                self.help_text = reply.text.lines().map(str::to_string).collect();
                self.help_scroll = 0;
                self.help = true;
            }
            Ok(reply) => {
                if let Some(stop) = &reply.stop {
                    self.status = stop_label(stop);
                }
                self.push_log(&reply.text);
            }
            Err(e) => self.push_log(&format!("error: {e}")),
        }
        self.sync_cursor();
        if self.follow {
            self.select_operand_var();
        }
    }

    fn movement(&mut self, cmd: Command) {
        self.before = self.session.machine.thread(self.session.focus).grf.clone();
        self.before_thread = self.session.focus;
        self.follow = true;
        self.execute(&cmd);
    }

    /// Applies one action.
    pub fn update(&mut self, action: Action) {
        match action {
            Action::Step => self.movement(Command::Step(1)),
            Action::ReverseStep => self.movement(Command::ReverseStep(1)),
            Action::Next => self.movement(Command::Next(1)),
            Action::ReverseNext => self.movement(Command::ReverseNext(1)),
            Action::StepInstruction => self.movement(Command::StepInstruction(1)),
            Action::ReverseStepInstruction => self.movement(Command::ReverseStepInstruction(1)),
            Action::Layout => {
                self.follow = true;
                self.run_command("layout next");
            }
            Action::Finish => self.movement(Command::Finish),
            Action::ReverseFinish => self.movement(Command::ReverseFinish),
            Action::Continue => self.movement(Command::Continue),
            Action::ReverseContinue => self.movement(Command::ReverseContinue),
            Action::ToggleBreakpoint => self.toggle_breakpoint(),
            Action::Watch => self.watch_selection(),
            Action::GotoStep => self.open_prompt(PromptKind::GotoStep),
            Action::ChooseVariable => self.open_prompt(PromptKind::Variable),
            Action::MemoryAddress => self.open_prompt(PromptKind::MemoryAddress),
            Action::CommandLine => self.open_prompt(PromptKind::Command),
            Action::NextPane | Action::PrevPane => self.cycle_pane(action == Action::NextPane),
            Action::Help => {
                self.help = !self.help;
                self.help_text.clear();
                self.help_scroll = 0;
            }
            // The help overlay takes the scrolling keys while it is open.
            Action::Up | Action::Down | Action::PageUp | Action::PageDown if self.help => {
                let delta: i64 = match action {
                    Action::Up => -1,
                    Action::Down => 1,
                    Action::PageUp => -16,
                    _ => 16,
                };
                self.help_scroll = (self.help_scroll as i64 + delta).max(0) as usize;
            }
            Action::Why => self.open_why(),
            Action::Races => self.open_races(),
            Action::Quit => self.quit = true,
            Action::CycleFormat => {
                self.format = match self.format {
                    Format::Natural => Format::Hex,
                    Format::Hex => Format::Signed,
                    Format::Signed => Format::Float,
                    _ => Format::Natural,
                }
            }
            _ => self.navigate(action),
        }
    }

    fn cycle_pane(&mut self, forward: bool) {
        let i = Pane::ORDER.iter().position(|p| *p == self.pane).unwrap_or(0);
        let n = Pane::ORDER.len();
        self.pane = Pane::ORDER[if forward { (i + 1) % n } else { (i + n - 1) % n }];
    }

    fn open_prompt(&mut self, kind: PromptKind) {
        self.prompt = Some(Prompt { kind, text: String::new(), history_pos: None });
    }

    fn navigate(&mut self, action: Action) {
        let delta: i64 = match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -16,
            Action::PageDown => 16,
            _ => 0,
        };
        match self.pane {
            Pane::Source => self.navigate_source(action, delta),
            Pane::Registers | Pane::Memory if action == Action::Select => self.goto_last_writer(),
            Pane::Lanes | Pane::Timeline if action == Action::Select => self.run_command("lane-history"),
            Pane::Registers => match action {
                Action::Left => self.reg_col = self.reg_col.saturating_sub(1),
                Action::Right => self.reg_col += 1,
                _ => self.reg_row = (self.reg_row as i64 + delta).max(0) as usize,
            },
            Pane::Lanes | Pane::Timeline => {
                let simd = self.session.machine.thread(self.session.focus).simd;
                let lane = self.session.lane as i64
                    + match action {
                        Action::Left | Action::Up => -1,
                        Action::Right | Action::Down => 1,
                        _ => 0,
                    };
                self.run_quiet(&Command::Lane(lane.clamp(0, simd as i64 - 1) as u32));
            }
            Pane::Memory => self.move_memory_cursor(action, delta),
            Pane::Threads => {
                let n = self.session.machine.threads.len();
                self.thread_cursor = (self.thread_cursor as i64 + delta).clamp(0, n as i64 - 1) as usize;
                if action == Action::Select {
                    self.run_quiet(&Command::Thread(self.thread_cursor as u32));
                    self.follow = true;
                    self.sync_cursor();
                }
            }
            Pane::Log => {
                // Up goes back in the log (at most to its first line), Down toward the newest.
                let back = self.log_scroll as i64 - delta;
                self.log_scroll = back.clamp(0, self.log.len().saturating_sub(1) as i64) as usize;
            }
            Pane::Breakpoints => {
                let n = self.session.breakpoints.len() + self.session.watchpoints.len();
                self.bp_cursor = (self.bp_cursor as i64 + delta).clamp(0, n.max(1) as i64 - 1) as usize;
            }
        }
    }

    /// Moves the memory cursor `rows` rows (Up, Down, pages) or one step (Left, Right): by
    /// element in a typed view, else by byte; the first row follows it out of the window.
    fn move_memory_cursor(&mut self, action: Action, rows: i64) {
        let (at, len) = crate::view::memory::selection(self);
        let row = crate::view::memory::row_bytes(self);
        let step = match action {
            Action::Left => -(len as i64),
            Action::Right => len as i64,
            _ => rows * row as i64,
        };
        self.mem_cursor = at.saturating_add_signed(step);
        if self.mem_cursor < self.mem_addr || self.mem_cursor >= self.mem_addr.saturating_add(16 * row) {
            self.mem_addr = crate::view::memory::row_start(self, self.mem_cursor);
        }
    }

    fn navigate_source(&mut self, action: Action, delta: i64) {
        match action {
            Action::Left | Action::Right => {
                let n = self.cursor_inst().map_or(0, |i| self.session.program.inst(i).operands.len());
                if n > 0 {
                    self.operand = if action == Action::Right {
                        (self.operand + 1) % n
                    } else {
                        (self.operand + n - 1) % n
                    };
                }
                self.reg_pinned = false;
                self.select_operand_var();
            }
            Action::Select => {
                self.reg_pinned = false;
                self.select_operand_var();
            }
            _ => {
                let lines = self.shown_line_count();
                self.source_cursor =
                    (self.source_cursor as i64 + delta).clamp(0, lines.max(1) as i64 - 1) as usize;
                self.follow = false;
                self.operand = 0;
                self.select_operand_var();
            }
        }
    }

    fn run_quiet(&mut self, cmd: &Command) {
        if let Err(e) = self.session.execute(cmd) {
            self.push_log(&format!("error: {e}"));
        }
    }

    fn toggle_breakpoint(&mut self) {
        if let Some((file, entries)) = self.cursor_source_line() {
            return self.toggle_source_breakpoint(file, &entries);
        }
        let Some(idx) = self.cursor_inst() else {
            self.push_log("no instruction on this line");
            return;
        };
        if let Some(bp) = self.session.breakpoints.iter().find(|b| b.pcs.contains(&idx)) {
            let id = bp.id;
            self.run_command(&format!("delete {id}"));
            return;
        }
        let line = self.source_cursor as u32 + 1;
        let file = self.session.program.file(self.file()).path.clone();
        let cmd =
            Command::Break { loc: BreakLoc::Line { file: Some(file), line }, cond: None, temporary: false };
        self.execute(&cmd);
    }

    /// `b` on a line of the OpenCL source: `break FILE:LINE`, or `delete` of the breakpoint
    /// on one of the line's entries.
    fn toggle_source_breakpoint(&mut self, file: u32, entries: &[InstIdx]) {
        if entries.is_empty() {
            return self.push_log("no code on this line");
        }
        let on_line = |b: &&vdb::session::Breakpoint| b.pcs.iter().any(|p| entries.contains(p));
        if let Some(id) = self.session.breakpoints.iter().find(on_line).map(|b| b.id) {
            return self.run_command(&format!("delete {id}"));
        }
        let Some(name) = self.session.program.lines.file(file).map(|f| f.name.clone()) else { return };
        let loc = BreakLoc::Line { file: Some(name), line: self.source_cursor as u32 + 1 };
        self.execute(&Command::Break { loc, cond: None, temporary: false });
    }

    /// The register pane's cursor cell in `var` (row, element in the row), clamped to the
    /// variable: the cursor keeps its place when another, smaller variable is shown.
    pub fn register_cell(&self, var: vdb::isa::VarId) -> (usize, usize) {
        let v = self.session.program.var(var);
        let grf = self.session.program.grf_size.max(1);
        let per_row = (grf / v.ty.size()).max(1) as usize;
        let rows = v.size.div_ceil(grf).max(1) as usize;
        let row = self.reg_row.min(rows - 1);
        let in_row =
            (v.size.saturating_sub(row as u32 * grf) / v.ty.size()).clamp(1, per_row as u32) as usize;
        (row, self.reg_col.min(in_row - 1))
    }

    /// The selection as a command location: the memory pane's cursor byte, else the register
    /// pane's cell (one element of the chosen variable); None (said in the log) without one.
    fn selection_location(&mut self) -> Option<String> {
        if self.pane == Pane::Memory {
            let (at, len) = crate::view::memory::selection(self);
            return Some(format!("{} {len}", self.session.named_location(self.mem_space, at)));
        }
        let Some(var) = self.reg_var else {
            self.push_log("choose a variable first (v)");
            return None;
        };
        let (row, col) = self.register_cell(var);
        let v = self.session.program.var(var);
        Some(format!("{}({row},{col})<0;1,0>", v.name))
    }

    /// What `y` explains: in the source pane, the selected operand's element for the focused
    /// lane (the value that lane reads or writes there); elsewhere the selection.
    fn why_location(&mut self) -> Option<String> {
        if self.pane != Pane::Source {
            return self.selection_location();
        }
        let inst = self.session.program.inst(self.cursor_inst()?);
        let Some(vdb::isa::Operand::Direct(d)) = inst.operands.get(self.operand) else {
            self.push_log("y: select a register operand (Left/Right), or use the register or memory pane");
            return None;
        };
        let channel = self.session.lane.checked_sub(inst.exec.offset).filter(|&c| c < inst.exec.size.max(1));
        let Some(channel) = channel.or((d.region.element(1) == 0).then_some(0)) else {
            self.push_log(&format!("y: lane {} is outside this instruction's channels", self.session.lane));
            return None;
        };
        let offset = d.base + d.region.element(channel) * d.ty.size();
        Some(format!("{} {}", self.session.grf_element_text(offset, d.ty.size()), d.ty.size()))
    }

    /// `why` of the selection, shown as an overlay (its text lines are the tree's nodes in
    /// order, each with the write it came from).
    fn open_why(&mut self) {
        let Some(loc) = self.why_location() else { return };
        let cmd = match session::parse(&format!("why {loc}")) {
            Ok(Some(cmd)) => cmd,
            _ => return,
        };
        let reply = match self.session.execute(&cmd) {
            Ok(reply) => reply,
            Err(e) => return self.push_log(&format!("error: {e}")),
        };
        let mut writers = Vec::new();
        flatten_writers(&reply.fields["tree"], &mut writers);
        let rows = reply
            .text
            .lines()
            .zip(writers)
            .map(|(text, writer)| JumpRow { text: text.to_string(), writer })
            .collect();
        self.jumps =
            Some(JumpList { title: format!("why {loc} — Enter: go to the write"), rows, cursor: 0 });
    }

    /// The race reports as an overlay: a heading row per report, then its two accesses, each
    /// a row that Enter goes to (the step where its thread is about to make it); then the
    /// reads of uninitialised SLM or private memory, each with its first read.
    fn open_races(&mut self) {
        self.push_log("(vdb) races");
        let races = self.session.races().to_vec();
        let (program, geometry) = (self.session.program.clone(), self.session.geometry.clone());
        let mut rows = Vec::new();
        for race in &races {
            let mut lines =
                race.render(&program, geometry.as_ref()).lines().map(str::to_string).collect::<Vec<_>>();
            let second = lines.pop().unwrap_or_default();
            let first = lines.pop().unwrap_or_default();
            rows.push(JumpRow { text: lines.join(" "), writer: None });
            for (text, a) in [(first, race.first), (second, race.second)] {
                rows.push(JumpRow { text, writer: Some((a.step, a.thread, a.channel)) });
            }
        }
        for read in self.session.uninit_reads().to_vec() {
            let text = read.render(&program, geometry.as_ref());
            let (heading, access) = text.split_once('\n').unwrap_or((&text, ""));
            rows.push(JumpRow { text: heading.to_string(), writer: None });
            let a = read.read;
            rows.push(JumpRow { text: access.to_string(), writer: Some((a.step, a.thread, a.channel)) });
        }
        if rows.is_empty() {
            rows.push(JumpRow {
                text: "no data races and no reads of uninitialised memory".to_string(),
                writer: None,
            });
        }
        let title = format!("races: {} report(s) — Enter: go to the access", races.len());
        // The cursor starts on the first access.
        self.jumps = Some(JumpList { title, cursor: usize::from(rows.len() > 1), rows });
    }

    /// A key while an overlay of rows is open: move, go to the row's step, or close.
    pub fn jump_key(&mut self, code: crossterm::event::KeyCode) {
        use crossterm::event::KeyCode;
        let Some(view) = self.jumps.as_mut() else { return };
        let last = view.rows.len().saturating_sub(1);
        match code {
            KeyCode::Up | KeyCode::Char('k') => view.cursor = view.cursor.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => view.cursor = (view.cursor + 1).min(last),
            KeyCode::Enter => {
                let writer = view.rows.get(view.cursor).and_then(|r| r.writer);
                self.jumps = None;
                if let Some((step, thread, lane)) = writer {
                    self.go_to_write(step, thread, Some(lane));
                }
            }
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('y') | KeyCode::Char('R') => self.jumps = None,
            _ => {}
        }
    }

    fn watch_selection(&mut self) {
        if let Some(loc) = self.selection_location() {
            self.run_command(&format!("watch {loc}"));
        }
    }

    /// Goes to the step that last wrote the selection (memory byte or register cell), focused
    /// on the writing thread and lane: the writing instruction is the current one.
    fn goto_last_writer(&mut self) {
        let Some(loc) = self.selection_location() else { return };
        self.push_log(&format!("(vdb) last-write {loc}"));
        let reply = match self.session.execute(&Command::LastWrite(loc)) {
            Ok(reply) => reply,
            Err(e) => return self.push_log(&format!("error: {e}")),
        };
        self.push_log(&reply.text);
        let writer = &reply.fields["writer"];
        let (Some(step), Some(thread)) = (writer["step"].as_u64(), writer["thread"].as_u64()) else { return };
        self.go_to_write(step, thread as u32, writer["lane"].as_u64().map(|l| l as u32));
    }

    /// Goes to step `step`, where `thread` (`lane`, when the write names one) is about to
    /// write: the writing instruction is the current one.
    fn go_to_write(&mut self, step: u64, thread: u32, lane: Option<u32>) {
        self.movement(Command::GotoStep(step));
        self.execute(&Command::Thread(thread));
        if let Some(lane) = lane {
            self.execute(&Command::Lane(lane));
        }
    }

    /// Handles a typed character or editing key while a prompt is open.
    pub fn prompt_key(&mut self, key: crossterm::event::KeyEvent) {
        use crossterm::event::KeyCode;
        let Some(prompt) = self.prompt.as_mut() else { return };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Enter => self.submit_prompt(),
            KeyCode::Backspace => {
                prompt.text.pop();
            }
            KeyCode::Tab => {
                let completed = complete(&self.session, &prompt.kind, &prompt.text);
                if let Some(c) = completed {
                    prompt.text = c;
                }
            }
            KeyCode::Up | KeyCode::Down if prompt.kind == PromptKind::Command && !self.history.is_empty() => {
                let last = self.history.len() - 1;
                let pos = match (prompt.history_pos, key.code) {
                    (None, KeyCode::Up) => last,
                    (Some(p), KeyCode::Up) => p.saturating_sub(1),
                    (Some(p), _) => (p + 1).min(last),
                    (None, _) => last,
                };
                prompt.history_pos = Some(pos);
                prompt.text = self.history[pos].clone();
            }
            KeyCode::Char(c) => prompt.text.push(c),
            _ => {}
        }
    }

    fn submit_prompt(&mut self) {
        let Some(prompt) = self.prompt.take() else { return };
        let text = prompt.text.trim().to_string();
        match prompt.kind {
            PromptKind::Command if !text.is_empty() => {
                self.history.push(text.clone());
                self.run_command(&text);
            }
            PromptKind::GotoStep => self.run_command(&format!("goto {text}")),
            PromptKind::MemoryAddress => match self.session.memory_at(&text) {
                Ok((space, addr)) => {
                    self.mem_space = space;
                    self.mem_cursor = addr;
                    self.mem_addr = addr & !15;
                    self.pane = Pane::Memory;
                }
                Err(e) => self.push_log(&format!("error: {e}")),
            },
            PromptKind::Variable => {
                let unit = self.session.unit();
                match self
                    .session
                    .program
                    .var_id(unit, &text)
                    .or_else(|| self.session.program.var_id(UnitId(0), &text))
                {
                    Some(v) => {
                        self.reg_var = Some(v);
                        self.reg_pinned = true;
                        self.pane = Pane::Registers;
                        self.push_log(&format!(
                            "{text} pinned in the register pane (v, Enter: follow the instruction again)"
                        ));
                    }
                    None if text.trim().is_empty() => {
                        self.reg_pinned = false;
                        self.select_operand_var();
                    }
                    None => self.push_log(&format!("no variable `{text}`")),
                }
            }
            _ => {}
        }
    }
}

/// The variable a vector or raw operand names.
pub fn operand_var(op: &Operand) -> Option<VarId> {
    match op {
        Operand::Direct(d) if !d.is_null => Some(d.var),
        Operand::Raw(r) if !r.is_null => Some(r.var),
        Operand::LscData(d) if !d.raw.is_null => Some(d.raw.var),
        Operand::LscAddr(a) if !a.addr.is_null => Some(a.addr.var),
        Operand::AddrOf(a) => Some(a.var),
        _ => None,
    }
}

/// Tab completion: command names for the command line (and variable names after them),
/// variable names for the variable prompt. Completes to the longest common prefix.
pub fn complete(session: &Session, kind: &PromptKind, text: &str) -> Option<String> {
    let (head, word) = match text.rfind(' ') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let candidates: Vec<String> = if *kind == PromptKind::Command && head.is_empty() {
        session::command::COMMANDS
            .iter()
            .filter_map(|(c, _)| c.split_whitespace().next())
            .filter(|c| c.starts_with(word))
            .map(str::to_string)
            .collect()
    } else {
        session.program.vars.iter().map(|v| v.name.clone()).filter(|n| n.starts_with(word)).collect()
    };
    let first = candidates.first()?;
    let mut prefix = first.clone();
    for c in &candidates[1..] {
        while !c.starts_with(&prefix) {
            prefix.pop();
        }
    }
    let done = candidates.len() == 1 && *kind == PromptKind::Command && head.is_empty();
    Some(format!("{head}{prefix}{}", if done { " " } else { "" }))
}

pub fn stop_label(stop: &StopReason) -> String {
    match stop {
        StopReason::Step => "step".into(),
        StopReason::Breakpoint { id } => format!("breakpoint {id}"),
        StopReason::Watchpoint(h) => {
            // A typed buffer's element: its new value as its type reads (the log has old -> new).
            let value =
                h.typed.as_ref().map(|t| format!(": {}", t.elem.values_text(&t.new))).unwrap_or_default();
            format!("watchpoint {} (step {}, lanes {:?}){value}", h.id, h.step, h.lanes)
        }
        StopReason::Start => "start".into(),
        StopReason::End => "end".into(),
        // The first line without its `path:line:col: ` (the source pane shows the place);
        // the whole message is in the log.
        StopReason::Fault { message } => {
            let first = message.lines().next().unwrap_or_default();
            match first.split_once(": fault in ") {
                Some((_, rest)) => format!("FAULT in {rest}"),
                None => format!("FAULT: {first}"),
            }
        }
        StopReason::Interrupted => "interrupted".into(),
        StopReason::RecordLimit { .. } => "recording budget reached".into(),
    }
}

/// The writers of a `why` tree's nodes, in the order its text lists them (depth first).
fn flatten_writers(node: &serde_json::Value, out: &mut Vec<Option<(u64, u32, u32)>>) {
    let w = &node["writer"];
    let writer = match (w["step"].as_u64(), w["thread"].as_u64(), w["lane"].as_u64()) {
        (Some(step), Some(thread), Some(lane)) => Some((step, thread as u32, lane as u32)),
        _ => None,
    };
    out.push(writer);
    for s in node["sources"].as_array().into_iter().flatten() {
        flatten_writers(s, out);
    }
}
