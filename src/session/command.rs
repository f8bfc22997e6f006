//! The command language shared by `vdb batch` and the TUI: `enum Command` and its parser,
//! kept apart from execution. Names follow gdb where gdb has one.

use std::fmt;

use crate::trace::Cache;

/// Where a breakpoint goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BreakLoc {
    /// A 1-based line of the kernel file (or of `file`).
    Line { file: Option<String>, line: u32 },
    /// A label or subroutine name.
    Label(String),
    /// A vISA instruction id `$N` in the kernel (or in the named function unit).
    InstId { unit: Option<String>, id: u32 },
}

/// What the source pane shows (gdb's `layout`), and so which file `break LINE` and `list`
/// mean: the OpenCL source, the vISA, or the source with the vISA of the current line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum CodeLayout {
    Source,
    Visa,
    #[default]
    Split,
}

impl CodeLayout {
    /// gdb's name: `src`, `asm` or `split`.
    pub fn name(self) -> &'static str {
        match self {
            CodeLayout::Source => "src",
            CodeLayout::Visa => "asm",
            CodeLayout::Split => "split",
        }
    }

    /// The next one in `layout next`'s cycle.
    pub fn next(self) -> CodeLayout {
        match self {
            CodeLayout::Split => CodeLayout::Source,
            CodeLayout::Source => CodeLayout::Visa,
            CodeLayout::Visa => CodeLayout::Split,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WatchKind {
    Write,
    Read,
    Access,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Natural,
    Hex,
    Signed,
    Unsigned,
    Float,
}

/// The letters of `/x`-style formats (`print`, `display`, `x/NFU`).
const FORMAT_LETTERS: [(char, Format); 4] =
    [('x', Format::Hex), ('d', Format::Signed), ('u', Format::Unsigned), ('f', Format::Float)];
/// The unit letters of `x/NFU` and their sizes in bytes.
const UNIT_LETTERS: [(char, u32); 4] = [('b', 1), ('h', 2), ('w', 4), ('g', 8)];
/// The unit of an `x` or `compare` given no unit letter: a typed buffer's element, else a
/// word (its format, when none is given either, is `Format::Natural`: the element's type's,
/// else hex).
pub const UNIT_OF_TYPE: u32 = 0;

fn format_of(letter: char) -> Option<Format> {
    FORMAT_LETTERS.iter().find(|(c, _)| *c == letter).map(|(_, f)| *f)
}

fn letter_of(format: Format) -> Option<char> {
    FORMAT_LETTERS.iter().find(|(_, f)| *f == format).map(|(c, _)| *c)
}

impl Command {
    /// A `print` or `x` command as it would be typed (what `info display` lists); other
    /// commands have no such text here.
    pub fn shown_text(&self) -> Option<String> {
        match self {
            Command::Print { expr, format } => {
                Some(letter_of(*format).map_or_else(|| expr.clone(), |f| format!("{expr} /{f}")))
            }
            Command::Examine { count, format, unit, addr } => {
                let f = letter_of(*format).map(String::from).unwrap_or_default();
                let u = UNIT_LETTERS.iter().find(|(_, size)| size == unit).map(|(c, _)| c.to_string());
                Some(format!("x/{count}{f}{} {addr}", u.unwrap_or_default()))
            }
            _ => None,
        }
    }
}

/// `info` subjects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InfoWhat {
    Registers,
    Predicates,
    Masks,
    Threads,
    Breakpoints,
    Marks,
    Frame,
    Display,
    /// The recording: steps, bytes by part, checkpoints, how the run ended.
    Record,
    /// The focused thread's lanes: work-item, dispatched, active now.
    Lanes,
    /// The kernel's arguments (OpenCL) or the launch's memory regions (raw).
    Args,
    /// The data races of the run (`vdb::races`), each with its two accesses.
    Races,
}

/// The threads `thread apply` runs a command in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadSet {
    All,
    /// Inclusive ranges of thread numbers, in the order given (`5` is `(5, 5)`).
    List(Vec<(u32, u32)>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Step(u64),
    ReverseStep(u64),
    Next(u64),
    ReverseNext(u64),
    /// `stepi [N]`: N instructions of the focused thread (what `step` does in a kernel
    /// without line information); `rstepi`, `nexti` and `rnexti` likewise.
    StepInstruction(u64),
    ReverseStepInstruction(u64),
    NextInstruction(u64),
    ReverseNextInstruction(u64),
    /// `layout src|asm|split` (or `next`, as None: the next in the cycle).
    Layout(Option<CodeLayout>),
    Finish,
    ReverseFinish,
    Continue,
    ReverseContinue,
    /// `goto N` (a step index) or `goto NAME` (a mark).
    GotoStep(u64),
    GotoMark(String),
    Run,
    When,
    Thread(u32),
    Lane(u32),
    /// `workitem [X[,Y[,Z]]]`: focus the thread and lane holding the work-item of that global
    /// id (OpenCL launches); without one, the focused lane's work-item. Kept as text.
    WorkItem(Option<String>),
    /// `break`, or `tbreak` (`temporary`: deleted when it first stops a movement).
    Break {
        loc: BreakLoc,
        cond: Option<String>,
        temporary: bool,
    },
    /// `advance LOC`: continue to LOC (or to whatever stops `continue` first).
    Advance(BreakLoc),
    /// `until`: `next` that runs through jumps back (a loop's back edge) in the same frame;
    /// `until LOC`: run the focused thread to LOC in this frame, or until the frame returns.
    Until(Option<BreakLoc>),
    Delete(Option<u32>),
    Disable(u32),
    Enable(u32),
    /// `condition N [COND]`: set or (without COND) remove breakpoint N's condition.
    Condition {
        id: u32,
        cond: Option<String>,
    },
    /// `ignore N COUNT`: the next COUNT hits of breakpoint or watchpoint N do not stop.
    Ignore {
        id: u32,
        count: u64,
    },
    /// `watch/rwatch/awatch TARGET [LEN] [lane L]`: TARGET is a memory address expression or
    /// a register region; kept as text and resolved against the session.
    Watch {
        kind: WatchKind,
        target: String,
        len: Option<u64>,
        lane: Option<u32>,
        /// `if OP VALUE`: a condition on the watched value after the access.
        cond: Option<String>,
    },
    Print {
        expr: String,
        format: Format,
    },
    /// `x/NFU ADDR`.
    Examine {
        count: u32,
        format: Format,
        unit: u32,
        addr: String,
    },
    Info(InfoWhat),
    /// `compare[/FU] LOC FILE [ulp N]`: memory from LOC against FILE's bytes, element by
    /// element (F and U as in `x`), with the last writer of each differing element; float
    /// elements within `ulps` units in the last place count as equal.
    Compare {
        format: Format,
        unit: u32,
        loc: String,
        file: String,
        ulps: u64,
    },
    /// `display REGION [/fmt]` or `display x/NFU ADDR`: that `print` or `x` after every
    /// movement (the boxed command is one of the two); `display` alone shows them all now.
    Display(Option<Box<Command>>),
    /// `list [LOC]`: ten source lines around LOC or the focused thread's instruction.
    List(Option<BreakLoc>),
    /// `goto +N` / `goto -N`: N steps later or earlier in global time.
    GotoRelative(i64),
    /// `undisplay [N]`: remove display N (all without N).
    Undisplay(Option<u32>),
    /// `thread apply all|LIST CMD`: an inspecting command run with each thread focused.
    ThreadApply {
        threads: ThreadSet,
        cmd: Box<Command>,
    },
    /// `backtrace`: the focused thread's call stack, innermost first.
    Backtrace,
    LastWrite(String),
    History(String),
    /// `lane-history [L]`: when lane L (default: the focused one) of the focused thread left
    /// and rejoined the execution mask, newest first.
    LaneHistory(Option<u32>),
    /// `source FILE`: run the commands in FILE.
    Source(String),
    /// `why LOC [LEN] [lane L] [depth N]`: where the value at LOC came from, as a tree of
    /// writes and the values they read.
    Why {
        loc: String,
        len: Option<u64>,
        lane: Option<u32>,
        depth: Option<u32>,
    },
    Mark(String),
    /// `set log-cache SIZE|all|default`: how many bytes of the recording's logs are kept
    /// (the parts read least lately past that are dropped, and recorded again when read).
    SetLogCache(Cache),
    StateHash,
    Help,
}

/// A byte count with an optional unit: `2G`, `512MiB`, `1.5gb`, `4096` (units are powers of
/// 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("unknown unit `{other}` (use K, M, G or T)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a size (like 512M or 2G)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is not a size between 1 byte and 16 EiB"));
    }
    Ok(bytes as u64)
}

/// A command line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError(pub String);

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, CommandError> {
    Err(CommandError(msg.into()))
}

/// Every command name (with aliases) and a one-line description, for help and completion.
pub const COMMANDS: &[(&str, &str)] = &[
    ("step [N] (s)", "step the focused thread N source lines (instructions without line information)"),
    ("rstep [N] (rs)", "step the focused thread back N source lines"),
    ("next [N] (n)", "step over calls"),
    ("rnext [N] (rn)", "step back over calls"),
    ("stepi [N] (si)", "step the focused thread N instructions"),
    ("rstepi [N] (rsi)", "step the focused thread back N instructions"),
    ("nexti [N] (ni)", "step N instructions over calls"),
    ("rnexti [N] (rni)", "step back N instructions over calls"),
    ("layout src|asm|split|next", "what the source pane shows; `break LINE` and `list` mean its file"),
    ("finish", "run until the current subroutine or function returns"),
    ("rfinish (reverse-finish)", "back to the call that entered the current subroutine or function"),
    ("continue (c)", "run forward to a breakpoint, watchpoint, fault or the end"),
    ("rcontinue (rc)", "run backward to a breakpoint, watchpoint or the start"),
    ("goto STEP|+N|-N|MARK", "go to a step index, N steps later or earlier, or a mark"),
    ("run", "go back to step 0"),
    ("when", "print the current step"),
    ("thread T", "focus thread T"),
    ("lane L", "focus lane L"),
    ("workitem [X[,Y[,Z]]] (wi)", "focus the lane holding a work-item (global id); alone: the focused one"),
    ("break LOC [if COND] (b)", "LOC: line, file:line, label or $id"),
    ("tbreak LOC [if COND]", "a breakpoint deleted when it first stops"),
    ("advance LOC", "continue to LOC (or to an earlier breakpoint, watchpoint or the end)"),
    ("until [LOC]", "next, running loops through; with LOC: to LOC or out of this frame"),
    ("delete [N]", "delete breakpoint/watchpoint N (all without N)"),
    ("disable N / enable N", "toggle breakpoint/watchpoint N"),
    ("condition N [COND]", "set breakpoint or watchpoint N's condition (remove it without COND)"),
    ("ignore N COUNT", "the next COUNT hits of breakpoint/watchpoint N do not stop"),
    (
        "watch|rwatch|awatch LOC [LEN] [lane L] [if OP VALUE]",
        "address (N, argN+OFF, NAME+OFF, slm[G]+OFF) or register region",
    ),
    ("print REGION[:type] [/x|/d|/u|/f] (p)", "values of a region of the focused thread"),
    ("x/NFU ADDR", "dump memory: N elements of its type, or of unit U (b h w g); format F (x d u f)"),
    ("display REGION [/x|/d|/u|/f]", "print REGION after every movement (display: all now)"),
    ("display x/NFU ADDR", "dump memory after every movement"),
    ("undisplay [N]", "remove display N (all without N)"),
    ("list [LOC]", "ten source lines around LOC or the focused thread's instruction"),
    ("thread apply all|LIST CMD", "run print, x, info, bt, last-write or history in each thread"),
    (
        "info registers|predicates|masks|threads|breakpoints|marks|frame|display|record|lanes|args",
        "state summaries",
    ),
    (
        "races (info races)",
        "the run's data races, grouped by pair of instructions, each with both accesses' steps",
    ),
    ("backtrace (bt, where)", "the focused thread's call stack, innermost first"),
    ("last-write LOC [LEN] (lw)", "who last wrote a register element or memory range"),
    ("history LOC [LEN]", "every write to LOC with values"),
    (
        "why LOC [LEN] [lane L] [depth N]",
        "where a value came from: the write that made it and the values that write read, as a tree",
    ),
    (
        "compare[/FU] LOC FILE [ulp N]",
        "memory against a reference file, with the writer of each element that differs",
    ),
    ("lane-history [L] (lh)", "when lane L of the focused thread left and rejoined the execution mask"),
    ("source FILE", "run the commands in FILE"),
    ("mark NAME", "bookmark the current step"),
    (
        "set log-cache SIZE|all|default",
        "bytes of the recording's logs kept (512M, 2G); past them parts are recorded again when read",
    ),
    ("state-hash", "hash of the whole machine"),
    ("help", "this list"),
];

fn count(arg: Option<&str>) -> Result<u64, CommandError> {
    match arg {
        None => Ok(1),
        Some(t) => match t.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => err(format!("`{t}` is not a positive count")),
        },
    }
}

fn number(text: &str, what: &str) -> Result<u32, CommandError> {
    text.parse().map_err(|_| CommandError(format!("`{text}` is not a {what}")))
}

/// Splits a `/x` style format from a `print` or `display` argument: trailing (`R /x`), or
/// leading (`/x R`, which is how `print/x R` arrives).
fn split_format(rest: &str) -> Result<(String, Format), CommandError> {
    let rest = rest.trim();
    let (expr, spec) = if let Some(after) = rest.strip_prefix('/') {
        let (spec, expr) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
        (expr, Some(spec))
    } else if let Some(pos) = rest.rfind(" /") {
        (&rest[..pos], Some(rest[pos + 2..].trim()))
    } else {
        (rest, None)
    };
    let mut letters = spec.unwrap_or_default().chars();
    let format = match (spec, letters.next().and_then(format_of), letters.next()) {
        (None, _, _) => Format::Natural,
        (Some(_), Some(format), None) => format,
        (Some(other), _, _) => return err(format!("unknown format /{other} (use /x /d /u /f)")),
    };
    Ok((expr.trim().to_string(), format))
}

/// The region and format of `print` and `display` (`cmd`).
fn region_and_format(cmd: &str, rest: &str) -> Result<(String, Format), CommandError> {
    let (expr, format) = split_format(rest)?;
    if expr.is_empty() {
        return err(format!("{cmd} needs a region, e.g. V0048(0,0)<1;1,0>"));
    }
    Ok((expr, format))
}

/// A breakpoint's location and condition: `LOC [if COND]`.
fn parse_break(rest: &str) -> Result<(BreakLoc, Option<String>), CommandError> {
    let (loc_text, cond) = match rest.split_once(" if ") {
        Some((l, c)) => (l.trim(), Some(c.trim().to_string())),
        None => (rest.trim(), None),
    };
    if loc_text.is_empty() {
        return err("break needs a location: a line, file:line, label or $id");
    }
    let loc = if let Some(id) = loc_text.strip_prefix('$') {
        BreakLoc::InstId { unit: None, id: number(id, "instruction id")? }
    } else if let Ok(line) = loc_text.parse::<u32>() {
        BreakLoc::Line { file: None, line }
    } else if let Some((file, tail)) = loc_text.rsplit_once(':') {
        if let Some(id) = tail.strip_prefix('$') {
            BreakLoc::InstId { unit: Some(file.to_string()), id: number(id, "instruction id")? }
        } else {
            BreakLoc::Line { file: Some(file.to_string()), line: number(tail, "line number")? }
        }
    } else {
        BreakLoc::Label(loc_text.to_string())
    };
    Ok((loc, cond))
}

fn parse_watch(kind: WatchKind, rest: &str) -> Result<Command, CommandError> {
    let (rest, cond) = match rest.split_once(" if ") {
        Some((head, cond)) if !cond.trim().is_empty() => (head, Some(cond.trim().to_string())),
        Some(_) => return err("`if` needs a condition: watch LOC if == 7"),
        None if rest.trim_end().ends_with(" if") => return err("`if` needs a condition: watch LOC if == 7"),
        None => (rest, None),
    };
    let mut words: Vec<&str> = rest.split_whitespace().collect();
    let mut lane = None;
    if let Some(pos) = words.iter().position(|w| *w == "lane") {
        let value = words.get(pos + 1).ok_or(CommandError("`lane` needs a number".into()))?;
        lane = Some(number(value, "lane")?);
        words.drain(pos..pos + 2);
    }
    let Some(&target) = words.first() else { return err("watch needs an address or a register region") };
    let len = match words.get(1) {
        Some(t) => {
            Some(crate::launch::raw::parse_number(t).ok_or(CommandError(format!("`{t}` is not a length")))?)
        }
        None => None,
    };
    if words.len() > 2 {
        return err(format!("unexpected `{}`", words[2]));
    }
    Ok(Command::Watch { kind, target: target.to_string(), len, lane, cond })
}

fn parse_examine(spec: &str, rest: &str) -> Result<Command, CommandError> {
    let digits: String = spec.chars().take_while(char::is_ascii_digit).collect();
    let count = if digits.is_empty() { 1 } else { number(&digits, "count")? };
    let (mut format, mut unit) = (Format::Natural, UNIT_OF_TYPE);
    for c in spec[digits.len()..].chars() {
        match (format_of(c), UNIT_LETTERS.iter().find(|(u, _)| *u == c)) {
            (Some(f), _) => format = f,
            (None, Some(&(_, size))) => unit = size,
            (None, None) => return err(format!("unknown x/ letter `{c}` (formats x d u f, units b h w g)")),
        }
    }
    if rest.trim().is_empty() {
        return err("x needs an address");
    }
    Ok(Command::Examine { count, format, unit, addr: rest.trim().to_string() })
}

/// `why LOC [LEN] [lane L] [depth N]`.
fn parse_why(rest: &str) -> Result<Command, CommandError> {
    let mut words: Vec<&str> = rest.split_whitespace().collect();
    let mut take = |key: &str| -> Result<Option<u32>, CommandError> {
        match words.iter().position(|w| *w == key) {
            Some(pos) => {
                let value =
                    words.get(pos + 1).ok_or_else(|| CommandError(format!("`{key}` needs a number")))?;
                let n = number(value, key)?;
                words.drain(pos..pos + 2);
                Ok(Some(n))
            }
            None => Ok(None),
        }
    };
    let (lane, depth) = (take("lane")?, take("depth")?);
    let (loc, len) = match words.as_slice() {
        [] => return err("why needs a location: a register region, a predicate or an address [LEN]"),
        [loc] => (loc.to_string(), None),
        [loc, len] => {
            let n = crate::launch::raw::parse_number(len)
                .ok_or_else(|| CommandError(format!("`{len}` is not a length")))?;
            (loc.to_string(), Some(n))
        }
        [_, _, extra, ..] => return err(format!("unexpected `{extra}`")),
    };
    Ok(Command::Why { loc, len, lane, depth })
}

/// `compare[/FU] LOC FILE`: the format and unit letters of `x` (no count).
fn parse_compare(spec: &str, rest: &str) -> Result<Command, CommandError> {
    if spec.starts_with(|c: char| c.is_ascii_digit()) {
        return err("compare/ takes a format and a unit (`compare/dw`), no count: the file sets it");
    }
    let Command::Examine { format, unit, .. } = parse_examine(spec, "-")? else {
        return err("compare/: a format and a unit");
    };
    // A trailing `ulp N`: float elements within N units in the last place are equal.
    let mut rest = rest.trim();
    let mut ulps = 0;
    if let Some((head, n)) = rest.rsplit_once(char::is_whitespace) {
        if let Some(head) = head.trim_end().strip_suffix(" ulp") {
            // Without letters the buffer's element type decides, when the command runs.
            let typed = format == Format::Natural && unit == UNIT_OF_TYPE;
            if !typed && (format != Format::Float || (unit != 4 && unit != 8)) {
                return err("`ulp N` is for float elements: compare/fw or compare/fg");
            }
            ulps = u64::from(number(n, "ulp count")?);
            rest = head.trim_end();
        }
    }
    match rest.rsplit_once(char::is_whitespace) {
        Some((loc, file)) if !loc.trim().is_empty() => {
            Ok(Command::Compare { format, unit, loc: loc.trim().to_string(), file: file.to_string(), ulps })
        }
        _ => err("compare needs a memory location and a file: compare out expected/out.bin"),
    }
}

/// `thread apply all|LIST CMD`, LIST being thread numbers and ranges (`0 2 4-7`).
fn parse_thread_apply(rest: &str) -> Result<Command, CommandError> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (threads, used) = if words.first() == Some(&"all") {
        (ThreadSet::All, 1)
    } else {
        let ranges = words.iter().map_while(|w| thread_range(w)).collect::<Result<Vec<_>, _>>()?;
        if ranges.is_empty() {
            return err("`thread apply` needs `all` or thread numbers (e.g. 0 2 4-7), then a command");
        }
        let used = ranges.len();
        (ThreadSet::List(ranges), used)
    };
    let Some(cmd) = parse(&words[used..].join(" "))? else {
        return err("`thread apply` needs a command to run, e.g. `thread apply all print V0048`");
    };
    match cmd {
        Command::Print { .. }
        | Command::Examine { .. }
        | Command::Info(_)
        | Command::Backtrace
        | Command::LastWrite(_)
        | Command::History(_) => Ok(Command::ThreadApply { threads, cmd: Box::new(cmd) }),
        _ => err("`thread apply` runs print, x, info, bt, last-write and history: commands that neither move in time nor change the session"),
    }
}

/// A thread number or an inclusive range `A-B` (None: the word is neither, the command
/// starts there).
fn thread_range(word: &str) -> Option<Result<(u32, u32), CommandError>> {
    if !word.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (a, b) = word.split_once('-').unwrap_or((word, word));
    Some(match (number(a, "thread number"), number(b, "thread number")) {
        (Ok(a), Ok(b)) if a <= b => Ok((a, b)),
        (Ok(_), Ok(_)) => err(format!("`{word}` is an empty range of threads")),
        (Err(e), _) | (_, Err(e)) => Err(e),
    })
}

/// Parses one command line. Blank lines and `#` comments are not commands (None).
pub fn parse(line: &str) -> Result<Option<Command>, CommandError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let args: Vec<&str> = rest.split_whitespace().collect();
    let one_arg = |what: &str| -> Result<&str, CommandError> {
        match args.as_slice() {
            [a] => Ok(a),
            [] => err(format!("`{name}` needs {what}")),
            _ => err(format!("`{name}` takes one argument")),
        }
    };
    let no_args = |cmd: Command| -> Result<Command, CommandError> {
        if args.is_empty() {
            Ok(cmd)
        } else {
            err(format!("`{name}` takes no arguments"))
        }
    };
    let cmd = match name {
        "step" | "s" => Command::Step(count(args.first().copied())?),
        "rstep" | "rs" | "reverse-step" => Command::ReverseStep(count(args.first().copied())?),
        "next" | "n" => Command::Next(count(args.first().copied())?),
        "rnext" | "rn" | "reverse-next" => Command::ReverseNext(count(args.first().copied())?),
        "stepi" | "si" => Command::StepInstruction(count(args.first().copied())?),
        "rstepi" | "rsi" | "reverse-stepi" => Command::ReverseStepInstruction(count(args.first().copied())?),
        "nexti" | "ni" => Command::NextInstruction(count(args.first().copied())?),
        "rnexti" | "rni" | "reverse-nexti" => Command::ReverseNextInstruction(count(args.first().copied())?),
        "layout" => Command::Layout(match one_arg("src, asm, split or next")? {
            "src" | "source" => Some(CodeLayout::Source),
            "asm" | "visa" => Some(CodeLayout::Visa),
            "split" | "both" => Some(CodeLayout::Split),
            "next" => None,
            other => return err(format!("unknown layout `{other}` (src, asm, split or next)")),
        }),
        "finish" | "fin" => no_args(Command::Finish)?,
        "rfinish" | "reverse-finish" => no_args(Command::ReverseFinish)?,
        "continue" | "c" => no_args(Command::Continue)?,
        "races" => no_args(Command::Info(InfoWhat::Races))?,
        "rcontinue" | "rc" | "reverse-continue" => no_args(Command::ReverseContinue)?,
        "goto" => {
            let a = one_arg("a step index, +N, -N or a mark name")?;
            // Signs first: Rust's integer parse takes `+1` as 1.
            match (a.strip_prefix(['+', '-']), a.parse::<u64>()) {
                (Some(n), _) => {
                    // Past i64's range the move saturates (it would wrap and go the other way).
                    let n = count(Some(n))?.min(i64::MAX as u64) as i64;
                    Command::GotoRelative(if a.starts_with('-') { -n } else { n })
                }
                (None, Ok(n)) => Command::GotoStep(n),
                (None, Err(_)) => Command::GotoMark(a.to_string()),
            }
        }
        "run" | "r" => no_args(Command::Run)?,
        "when" => no_args(Command::When)?,
        "thread" | "t" if args.first() == Some(&"apply") => {
            parse_thread_apply(rest.strip_prefix("apply").unwrap_or(rest))?
        }
        "thread" | "t" => Command::Thread(number(one_arg("a thread number")?, "thread number")?),
        "lane" | "l" => Command::Lane(number(one_arg("a lane number")?, "lane number")?),
        "workitem" | "wi" => Command::WorkItem((!rest.is_empty()).then(|| rest.to_string())),
        "break" | "b" | "tbreak" | "tb" => {
            let (loc, cond) = parse_break(rest)?;
            Command::Break { loc, cond, temporary: name.starts_with('t') }
        }
        "advance" => match parse_break(rest)? {
            (loc, None) => Command::Advance(loc),
            (_, Some(_)) => return err("`advance` takes a location without a condition"),
        },
        "until" | "u" if rest.is_empty() => Command::Until(None),
        "until" | "u" => match parse_break(rest)? {
            (loc, None) => Command::Until(Some(loc)),
            (_, Some(_)) => return err("`until` takes a location without a condition"),
        },
        "condition" | "cond" => {
            let (id, cond) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if id.is_empty() {
                return err("`condition` needs a breakpoint number (and a condition to set)");
            }
            let cond = Some(cond.trim()).filter(|c| !c.is_empty()).map(str::to_string);
            Command::Condition { id: number(id, "breakpoint number")?, cond }
        }
        "ignore" => match args.as_slice() {
            [id, n] => Command::Ignore {
                id: number(id, "breakpoint number")?,
                count: n.parse().map_err(|_| CommandError(format!("`{n}` is not a count")))?,
            },
            _ => return err("`ignore` takes a breakpoint number and a count"),
        },
        "display" if rest.is_empty() => Command::Display(None),
        "display" if rest.starts_with("x/") || rest.starts_with("x ") => match parse(rest)? {
            Some(examine @ Command::Examine { .. }) => Command::Display(Some(Box::new(examine))),
            _ => return err("display x/NFU ADDR needs an address"),
        },
        "display" => {
            let (expr, format) = region_and_format("display", rest)?;
            Command::Display(Some(Box::new(Command::Print { expr, format })))
        }
        "list" => Command::List(match rest {
            "" => None,
            _ => match parse_break(rest)? {
                (loc, None) => Some(loc),
                (_, Some(_)) => return err("`list` takes a location without a condition"),
            },
        }),
        "undisplay" => match args.as_slice() {
            [] => Command::Undisplay(None),
            [a] => Command::Undisplay(Some(number(a, "display number")?)),
            _ => return err("`undisplay` takes at most one number"),
        },
        "delete" | "d" => match args.as_slice() {
            [] => Command::Delete(None),
            [a] => Command::Delete(Some(number(a, "breakpoint number")?)),
            _ => return err("`delete` takes at most one number"),
        },
        "disable" => Command::Disable(number(one_arg("a breakpoint number")?, "breakpoint number")?),
        "enable" => Command::Enable(number(one_arg("a breakpoint number")?, "breakpoint number")?),
        "watch" => parse_watch(WatchKind::Write, rest)?,
        "rwatch" => parse_watch(WatchKind::Read, rest)?,
        "awatch" => parse_watch(WatchKind::Access, rest)?,
        "print" | "p" => {
            let (expr, format) = region_and_format("print", rest)?;
            Command::Print { expr, format }
        }
        "info" | "i" => Command::Info(match one_arg("a subject")? {
            "registers" | "reg" | "r" => InfoWhat::Registers,
            "predicates" | "pred" | "p" => InfoWhat::Predicates,
            "masks" | "m" => InfoWhat::Masks,
            "threads" | "t" => InfoWhat::Threads,
            "breakpoints" | "break" | "b" | "watchpoints" => InfoWhat::Breakpoints,
            "marks" => InfoWhat::Marks,
            "frame" | "f" => InfoWhat::Frame,
            "display" | "displays" => InfoWhat::Display,
            "record" | "rec" => InfoWhat::Record,
            "lanes" | "workitems" => InfoWhat::Lanes,
            "args" | "arguments" | "buffers" => InfoWhat::Args,
            "races" => InfoWhat::Races,
            other => return err(format!("unknown info subject `{other}`")),
        }),
        "last-write" | "lw" | "history" if rest.is_empty() => {
            return err(format!("`{name}` needs a location: a register region or an address [LEN]"))
        }
        "last-write" | "lw" => Command::LastWrite(rest.to_string()),
        "history" => Command::History(rest.to_string()),
        "why" => parse_why(rest)?,
        "source" => Command::Source(match rest {
            "" => return err("source needs a file of commands"),
            file => file.to_string(),
        }),
        "lane-history" | "lh" => match args.as_slice() {
            [] => Command::LaneHistory(None),
            [lane] => Command::LaneHistory(Some(number(lane, "lane number")?)),
            _ => return err("lane-history takes at most a lane number"),
        },
        "mark" => Command::Mark(one_arg("a name")?.to_string()),
        "set" => match args.as_slice() {
            ["log-cache", "all"] => Command::SetLogCache(Cache::ALL),
            ["log-cache", "default"] => Command::SetLogCache(super::LOG_CACHE),
            ["log-cache", size] => {
                Command::SetLogCache(Cache::at_most(parse_size(size).map_err(CommandError)?))
            }
            ["log-cache", ..] => return err("`set log-cache` takes a size (512M, 2G), `all` or `default`"),
            [other, ..] => return err(format!("unknown setting `{other}` (there is `set log-cache`)")),
            [] => return err("`set` needs a setting: `set log-cache SIZE|all|default`"),
        },
        "state-hash" => no_args(Command::StateHash)?,
        "backtrace" | "bt" | "where" => no_args(Command::Backtrace)?,
        "help" | "h" | "?" => Command::Help,
        _ => {
            if let Some(spec) = name.strip_prefix("x/") {
                parse_examine(spec, rest)?
            } else if let Some(spec) = name.strip_prefix("compare/") {
                parse_compare(spec, rest)?
            } else if name == "compare" {
                parse_compare("", rest)?
            } else if name == "x" {
                parse_examine("", rest)?
            } else if let Some(f) = name.strip_prefix("print/").or_else(|| name.strip_prefix("p/")) {
                let (expr, format) = region_and_format("print", &format!("/{f} {rest}"))?;
                Command::Print { expr, format }
            } else if let Some(f) = name.strip_prefix("display/") {
                let (expr, format) = region_and_format("display", &format!("/{f} {rest}"))?;
                Command::Display(Some(Box::new(Command::Print { expr, format })))
            } else {
                return err(format!("unknown command `{name}` (try `help`)"));
            }
        }
    };
    Ok(Some(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Command {
        match parse(line) {
            Ok(Some(c)) => c,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// `help` names every command the parser takes, under its name or an alias.
    #[test]
    fn help_lists_every_command() {
        let names: Vec<&str> = COMMANDS
            .iter()
            .flat_map(|(usage, _)| usage.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')))
            .collect();
        for (line, _) in good_commands() {
            let name = line.split([' ', '/']).next().unwrap_or_default();
            assert!(names.contains(&name), "`{name}` ({line}) is not in the help");
        }
    }

    /// Command lines and what they parse to.
    fn good_commands() -> Vec<(&'static str, Command)> {
        vec![
            ("s", Command::Step(1)),
            ("step 5", Command::Step(5)),
            ("rs 2", Command::ReverseStep(2)),
            ("stepi 3", Command::StepInstruction(3)),
            ("si", Command::StepInstruction(1)),
            ("rsi", Command::ReverseStepInstruction(1)),
            ("rstepi 2", Command::ReverseStepInstruction(2)),
            ("ni", Command::NextInstruction(1)),
            ("nexti 4", Command::NextInstruction(4)),
            ("rnexti", Command::ReverseNextInstruction(1)),
            ("layout src", Command::Layout(Some(CodeLayout::Source))),
            ("layout asm", Command::Layout(Some(CodeLayout::Visa))),
            ("layout next", Command::Layout(None)),
            ("n", Command::Next(1)),
            ("finish", Command::Finish),
            ("reverse-finish", Command::ReverseFinish),
            ("rfinish", Command::ReverseFinish),
            ("bt", Command::Backtrace),
            ("where", Command::Backtrace),
            ("c", Command::Continue),
            ("rc", Command::ReverseContinue),
            ("goto 100", Command::GotoStep(100)),
            ("goto here", Command::GotoMark("here".into())),
            ("thread 3", Command::Thread(3)),
            ("lane 7", Command::Lane(7)),
            ("workitem 3,1", Command::WorkItem(Some("3,1".into()))),
            ("wi (1, 2, 3)", Command::WorkItem(Some("(1, 2, 3)".into()))),
            ("workitem", Command::WorkItem(None)),
            ("info lanes", Command::Info(InfoWhat::Lanes)),
            ("info args", Command::Info(InfoWhat::Args)),
            ("info races", Command::Info(InfoWhat::Races)),
            ("races", Command::Info(InfoWhat::Races)),
            ("lane-history", Command::LaneHistory(None)),
            ("source my setup.vdb", Command::Source("my setup.vdb".into())),
            ("why out+4", Command::Why { loc: "out+4".into(), len: None, lane: None, depth: None }),
            (
                "why V0055(0,0)<1;1,0> depth 6 lane 3",
                Command::Why { loc: "V0055(0,0)<1;1,0>".into(), len: None, lane: Some(3), depth: Some(6) },
            ),
            ("why arg1 8", Command::Why { loc: "arg1".into(), len: Some(8), lane: None, depth: None }),
            ("lh 5", Command::LaneHistory(Some(5))),
            (
                "compare out expected/out.bin",
                Command::Compare {
                    format: Format::Natural,
                    unit: UNIT_OF_TYPE,
                    loc: "out".into(),
                    file: "expected/out.bin".into(),
                    ulps: 0,
                },
            ),
            (
                "compare/fg arg1 + 8 ref.bin",
                Command::Compare {
                    format: Format::Float,
                    unit: 8,
                    loc: "arg1 + 8".into(),
                    file: "ref.bin".into(),
                    ulps: 0,
                },
            ),
            (
                "compare/fw out ref.bin ulp 8",
                Command::Compare {
                    format: Format::Float,
                    unit: 4,
                    loc: "out".into(),
                    file: "ref.bin".into(),
                    ulps: 8,
                },
            ),
            (
                "break 42",
                Command::Break { loc: BreakLoc::Line { file: None, line: 42 }, cond: None, temporary: false },
            ),
            (
                "break $19 if any(V0048(0,0)<1;1,0> == 7)",
                Command::Break {
                    loc: BreakLoc::InstId { unit: None, id: 19 },
                    cond: Some("any(V0048(0,0)<1;1,0> == 7)".into()),
                    temporary: false,
                },
            ),
            (
                "b _0_004",
                Command::Break { loc: BreakLoc::Label("_0_004".into()), cond: None, temporary: false },
            ),
            (
                "b k.visaasm:10",
                Command::Break {
                    loc: BreakLoc::Line { file: Some("k.visaasm".into()), line: 10 },
                    cond: None,
                    temporary: false,
                },
            ),
            (
                "tbreak 12 if R(0,0)<0;1,0> > 1",
                Command::Break {
                    loc: BreakLoc::Line { file: None, line: 12 },
                    cond: Some("R(0,0)<0;1,0> > 1".into()),
                    temporary: true,
                },
            ),
            ("advance NEG", Command::Advance(BreakLoc::Label("NEG".into()))),
            ("delete", Command::Delete(None)),
            ("delete 2", Command::Delete(Some(2))),
            (
                "watch arg1+8 4",
                Command::Watch {
                    kind: WatchKind::Write,
                    target: "arg1+8".into(),
                    len: Some(4),
                    lane: None,
                    cond: None,
                },
            ),
            (
                "watch out+4 4 if >= 0x10",
                Command::Watch {
                    kind: WatchKind::Write,
                    target: "out+4".into(),
                    len: Some(4),
                    lane: None,
                    cond: Some(">= 0x10".into()),
                },
            ),
            (
                "awatch 0x100000000",
                Command::Watch {
                    kind: WatchKind::Access,
                    target: "0x100000000".into(),
                    len: None,
                    lane: None,
                    cond: None,
                },
            ),
            (
                "watch V0048(0,0)<1;1,0> lane 3",
                Command::Watch {
                    kind: WatchKind::Write,
                    target: "V0048(0,0)<1;1,0>".into(),
                    len: None,
                    lane: Some(3),
                    cond: None,
                },
            ),
            (
                "print V0049(0,0)<1;1,0> /x",
                Command::Print { expr: "V0049(0,0)<1;1,0>".into(), format: Format::Hex },
            ),
            ("p/d X", Command::Print { expr: "X".into(), format: Format::Signed }),
            ("print /u X", Command::Print { expr: "X".into(), format: Format::Unsigned }),
            ("x/8xw arg0", Command::Examine { count: 8, format: Format::Hex, unit: 4, addr: "arg0".into() }),
            (
                "x/4dg 0x10",
                Command::Examine { count: 4, format: Format::Signed, unit: 8, addr: "0x10".into() },
            ),
            ("info threads", Command::Info(InfoWhat::Threads)),
            ("last-write R(0,3)<0;1,0>", Command::LastWrite("R(0,3)<0;1,0>".into())),
            ("history arg1+4", Command::History("arg1+4".into())),
            ("last-write out+36 4", Command::LastWrite("out+36 4".into())),
            ("mark before", Command::Mark("before".into())),
            ("state-hash", Command::StateHash),
            ("until", Command::Until(None)),
            ("until $33", Command::Until(Some(BreakLoc::InstId { unit: None, id: 33 }))),
            (
                "condition 2 any(X(0,0)<1;1,0> >= 3)",
                Command::Condition { id: 2, cond: Some("any(X(0,0)<1;1,0> >= 3)".into()) },
            ),
            ("condition 2", Command::Condition { id: 2, cond: None }),
            ("ignore 1 40", Command::Ignore { id: 1, count: 40 }),
            ("display", Command::Display(None)),
            (
                "display R(0,0)<1;1,0> /x",
                Command::Display(Some(Box::new(Command::Print {
                    expr: "R(0,0)<1;1,0>".into(),
                    format: Format::Hex,
                }))),
            ),
            (
                "display/d R",
                Command::Display(Some(Box::new(Command::Print { expr: "R".into(), format: Format::Signed }))),
            ),
            (
                "display x/4dw slm+8",
                Command::Display(Some(Box::new(Command::Examine {
                    count: 4,
                    format: Format::Signed,
                    unit: 4,
                    addr: "slm+8".into(),
                }))),
            ),
            ("list", Command::List(None)),
            ("list $12", Command::List(Some(BreakLoc::InstId { unit: None, id: 12 }))),
            ("goto +25", Command::GotoRelative(25)),
            ("goto -3", Command::GotoRelative(-3)),
            ("goto +1", Command::GotoRelative(1)),
            ("goto +18446744073709551615", Command::GotoRelative(i64::MAX)),
            ("goto -18446744073709551615", Command::GotoRelative(-i64::MAX)),
            ("goto +9223372036854775808", Command::GotoRelative(i64::MAX)),
            ("undisplay", Command::Undisplay(None)),
            ("undisplay 3", Command::Undisplay(Some(3))),
            ("info display", Command::Info(InfoWhat::Display)),
            ("info record", Command::Info(InfoWhat::Record)),
            ("set log-cache all", Command::SetLogCache(Cache::ALL)),
            ("set log-cache default", Command::SetLogCache(crate::session::LOG_CACHE)),
            ("set log-cache 1.5G", Command::SetLogCache(Cache { per_step: 0, floor: 3 << 29 })),
            ("set log-cache 4096", Command::SetLogCache(Cache { per_step: 0, floor: 4096 })),
            (
                "thread apply all print R /x",
                Command::ThreadApply {
                    threads: ThreadSet::All,
                    cmd: Box::new(Command::Print { expr: "R".into(), format: Format::Hex }),
                },
            ),
            (
                "thread apply 1 4-6 bt",
                Command::ThreadApply {
                    threads: ThreadSet::List(vec![(1, 1), (4, 6)]),
                    cmd: Box::new(Command::Backtrace),
                },
            ),
        ]
    }

    #[test]
    fn table_of_good_commands() {
        for (line, expected) in good_commands() {
            assert_eq!(ok(line), expected, "{line}");
            // What a display lists reads back as the same command.
            if let Some(text) = expected.shown_text() {
                let again = if text.starts_with("x/") { text } else { format!("print {text}") };
                assert_eq!(ok(&again), expected, "{line} shown as {again}");
            }
        }
    }

    #[test]
    fn table_of_bad_commands() {
        for line in [
            "frobnicate",
            "layout",
            "layout sideways",
            "stepi 0",
            "step 0",
            "step x",
            "thread",
            "lane a b",
            "break",
            "x/8q arg0",
            "print",
            "p/x",
            "print /x",
            "print R /q",
            "c 3",
            "rfinish 2",
            "bt full",
            "tbreak",
            "advance",
            "advance 12 if R(0,0)<0;1,0> > 1",
            "info nothing",
            "set",
            "set log-cache",
            "set log-cache 2X",
            "set log-cache 0",
            "set log-cache 1G 2G",
            "set verbose on",
            "until 12 if R(0,0)<0;1,0> > 1",
            "condition",
            "condition x R == 1",
            "ignore 1",
            "ignore 1 -2",
            "display/x",
            "undisplay a",
            "thread apply",
            "thread apply all",
            "thread apply 3",
            "thread apply 5-2 print R",
            "thread apply all step",
            "thread apply 0 thread 1",
            "thread apply all thread apply 0 bt",
            "thread apply all break 3",
            "display x/4xw",
            "list 3 if R == 1",
            "goto +0",
            "goto -x",
            "compare",
            "compare out",
            "lane-history x",
            "source",
            "why",
            "why x depth",
            "why a b c",
            "why out lane -1",
            "watch out if",
            "watch out 4 if ",
            "lh 1 2",
            "compare/4xw out ref.bin",
            "compare/q out ref.bin",
            "compare/xw out ref.bin ulp 2",
            "compare/fw out ref.bin ulp x",
            "compare/fw out ulp 2",
        ] {
            assert!(parse(line).is_err(), "{line} should not parse");
        }
        assert_eq!(parse("  # comment"), Ok(None));
        assert_eq!(parse(""), Ok(None));
    }
}
