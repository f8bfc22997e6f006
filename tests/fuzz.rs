//! Fuzzing the `.visaasm` parser and the launch loader: a plain mutation harness with no
//! dependencies (stable Rust; no cargo-fuzz, no nightly).
//!
//! Two targets, each a `#[test]`:
//! - `parser`: mutated kernels (seeds: every `.visaasm` under `sample-kernels/`, `tests/data/`
//!   and, when the folder exists, `../shared/spec/real/`) go through
//!   `asm::parse_files_with_warnings` with GRF size 32 or 64; the diagnostics are rendered and
//!   must hold no control character but `\n` and `\t`; a kernel that parses runs one thread a
//!   few thousand steps, step by step (`exec::run_to_end`) and in bursts
//!   (`exec::run_to_end_unrecorded`), which must agree.
//! - `launch_loader`: mutated launch files (seeds: every `*.launch.json` under
//!   `sample-kernels/`; field values, names, sizes, paths, out-of-range numbers, nested
//!   garbage, broken JSON text, and mutated copies of the kernel, zebin, ze_info or input
//!   file they name) go through `launch::raw::load` next to copies of their folder; a launch
//!   that loads runs a few thousand steps both ways too.
//!
//! Mutations: bit flips, interesting bytes (NUL, ESC, DEL), line ranges deleted, duplicated or
//! moved, tokens inserted (`(` and other openers repeated up to 100,000 times, `\` at the end of
//! the file, 4294967296, -9223372036854775808, 0x1_0000_0000_0000_0000, `%r0`, `.decl`, the
//! region `<300;1,0>`, unicode, whole declaration and instruction lines), numbers and names
//! replaced, truncation, splicing two seeds, deeply indented blocks; a third of the cases
//! take one gentle mutation so that they still parse (or load) and run.
//!
//! Errors, diagnostics and faults are fine; a panic, a case that takes longer than the time
//! limit (a hang), control characters in rendered diagnostics or the two runs disagreeing
//! are failures. Each case runs under `catch_unwind` on its own thread with the default 2 MiB
//! stack, as real runs parse on spawned threads, so unbounded recursion shows up as it would
//! there; a debug build also panics where an offset would wrap.
//!
//! Short campaign, which CI runs as part of `cargo test --workspace` (1000 cases per target,
//! about 30 s in a debug build on two cores):
//!
//! ```text
//! cargo test --test fuzz
//! ```
//!
//! Longer campaign:
//!
//! ```text
//! VDB_FUZZ_ITERS=100000 cargo test --release --test fuzz
//! ```
//!
//! or `scripts/fuzz.sh [ITERS [SEED [RUNS [TEST]]]]`, which builds with overflow checks on,
//! caps the address space (a launch that maps gigabytes aborts instead of meeting the OOM
//! killer) and runs RUNS campaigns with seeds SEED, SEED+1, ...
//!
//! Environment:
//! - `VDB_FUZZ_ITERS`: cases per target (default [`DEFAULT_ITERS`]).
//! - `VDB_FUZZ_SEED`: campaign seed, decimal or `0x` hex (default [`DEFAULT_SEED`]). Case `i`
//!   of a campaign depends only on the seed, `i` and the seed files, so one case replays alone.
//! - `VDB_FUZZ_START`: index of the first case (replay case `i` with `VDB_FUZZ_START=i
//!   VDB_FUZZ_ITERS=1`).
//! - `VDB_FUZZ_TIMEOUT_MS`: time limit per case (default 2000 ms in release builds, 10000 ms
//!   in debug builds, where the largest real kernels take a second to parse).
//! - `VDB_FUZZ_REPRO=FILE`: run one saved input instead of a campaign: a `.visaasm` through
//!   the parser target (with both GRF sizes; `FILE.2.visaasm`, if present, as a second
//!   file), a launch file through the loader target.
//! - `VDB_FUZZ_VERBOSE`: print each case's first diagnostic or load error (with
//!   `-- --nocapture`), to see what the mutations reach.
//!
//! On a failure the input is written to `target/fuzz-failures/` (the parser's kernel text,
//! plus a copy shrunk while it still panics the same way; or the loader's whole launch
//! folder) and the test panics with its path, the replay commands and the mutation log. If
//! the process dies instead (a stack overflow or an allocation abort cannot be caught), the
//! case it was on is `target/fuzz-failures/parser.cur.visaasm` (with `parser.cur.log`) or the
//! folder named in `target/fuzz-failures/launch_loader.cur.log`; the case thread's name,
//! which the stack overflow message quotes, names that file too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use vdb::asm::{parse_files_with_warnings, ParseOptions};
use vdb::exec::{run_to_end, run_to_end_unrecorded, Fault, Interpreter, NullObserver, RunSummary, Scheduler};
use vdb::machine::{Machine, Shared, Slm, ThreadState};
use vdb::program::{Program, SourceFile};

/// Cases per target when `VDB_FUZZ_ITERS` is not set.
pub const DEFAULT_ITERS: u64 = 1000;
/// Campaign seed when `VDB_FUZZ_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x7664_625f_6675_7a7a;
/// Steps a kernel or launch runs before the step-limit fault.
const STEP_LIMIT: u64 = 3000;
/// Most shrinking attempts on a failing parser input.
const SHRINK_ATTEMPTS: usize = 3000;
/// Inputs are cut to this size (the largest real kernels are under 1 MB).
const MAX_INPUT: usize = 2 << 20;

// ---------------------------------------------------------------------------------------------
// Configuration, paths, seeds

struct Config {
    seed: u64,
    iters: u64,
    start: u64,
    timeout: Duration,
}

impl Config {
    fn from_env() -> Config {
        let debug_limit = if cfg!(debug_assertions) { 10_000 } else { 2000 };
        Config {
            seed: env_number("VDB_FUZZ_SEED").unwrap_or(DEFAULT_SEED),
            iters: env_number("VDB_FUZZ_ITERS").unwrap_or(DEFAULT_ITERS),
            start: env_number("VDB_FUZZ_START").unwrap_or(0),
            timeout: Duration::from_millis(env_number("VDB_FUZZ_TIMEOUT_MS").unwrap_or(debug_limit)),
        }
    }
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let t = text.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text} is not a number")))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/fuzz-failures/`, created.
fn failures_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().map_or_else(|| tmp.join("fuzz-failures"), |t| t.join("fuzz-failures"));
    std::fs::create_dir_all(&dir).expect("target/fuzz-failures created");
    dir
}

/// Every file under `dir` (recursively, sorted) whose name ends with `suffix`.
fn files_under(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_under(&p, suffix, out);
        } else if p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)) {
            out.push(p);
        }
    }
}

struct Seed {
    name: String,
    bytes: Vec<u8>,
}

fn kernel_seeds() -> Vec<Seed> {
    let root = repo();
    let mut paths = Vec::new();
    for dir in ["sample-kernels", "tests/data", "../shared/spec/real"] {
        files_under(&root.join(dir), ".visaasm", &mut paths);
    }
    let seeds: Vec<Seed> = paths
        .iter()
        .filter_map(|p| {
            let bytes = std::fs::read(p).ok()?;
            let name = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            Some(Seed { name, bytes })
        })
        .collect();
    assert!(!seeds.is_empty(), "no .visaasm seeds under sample-kernels/ or tests/data/");
    seeds
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64*.
struct Rng(u64);

impl Rng {
    /// The generator of case `case` of target `salt` in the campaign `seed`.
    fn for_case(seed: u64, salt: u64, case: u64) -> Rng {
        Rng(splitmix(seed ^ splitmix(salt.wrapping_mul(0x1_0000_0001) ^ case)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A count that is usually small and sometimes large.
    fn count(&mut self) -> usize {
        *self.pick(&[1, 2, 3, 8, 16, 100, 257, 300, 1000, 5000, 20000, 100_000])
    }
}

// ---------------------------------------------------------------------------------------------
// Running one case: own thread, default stack, catch_unwind, time limit

enum Outcome<R> {
    Done(R),
    Panicked(String),
    TimedOut,
}

impl<R> Outcome<R> {
    /// The case's result, or what went wrong in words (`panicked: …`, `took over …`).
    fn failure(self, limit: Duration) -> Result<R, String> {
        match self {
            Outcome::Done(r) => Ok(r),
            Outcome::Panicked(m) => Err(format!("panicked: {m}")),
            Outcome::TimedOut => Err(format!("took over {limit:?} (a hang?)")),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

/// Runs `f` on a new thread named `name` with the default stack size; waits at most `limit`.
/// A thread that times out is left running (the test fails right after).
fn run_case<R: Send + 'static>(
    name: &str,
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Outcome<R> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r.map_err(|p| panic_message(&*p)));
        })
        .expect("case thread spawned");
    match rx.recv_timeout(limit) {
        Ok(r) => {
            let _ = handle.join();
            match r {
                Ok(v) => Outcome::Done(v),
                Err(m) => Outcome::Panicked(m),
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::TimedOut,
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Outcome::Panicked("the case thread ended without a result".to_string())
        }
    }
}

/// Silences the panic message of threads named `fuzz-shrink…` (shrinking panics thousands of
/// times); other threads report as usual.
fn quiet_shrink_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !std::thread::current().name().is_some_and(|n| n.starts_with("fuzz-shrink")) {
                default(info);
            }
        }));
    });
}

/// Fails if `text` holds a control character other than `\n` and `\t`.
fn assert_no_controls(what: &str, text: &str) {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| c.is_control() && c != '\n' && c != '\t') {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        panic!(
            "{what} holds control character {:?} at byte {at}, in the line {:?}",
            c,
            &text[line_start..line_end]
        );
    }
}

/// A run's result, comparable between the recorded and the unrecorded runner.
fn run_key(r: &Result<RunSummary, Fault>) -> String {
    match r {
        Ok(s) => format!("finished in {} steps", s.steps),
        Err(f) => format!("fault {f:?}"),
    }
}

/// Runs `machine` to the end both ways; they must agree on the result and the registers.
fn run_both(program: &Arc<Program>, machine: Machine, sched: Scheduler) -> String {
    let interp = Interpreter::new(program.clone());
    let (mut m1, mut s1) = (machine.clone(), sched.clone());
    let r1 = run_to_end(&interp, &mut m1, &mut s1, &mut NullObserver);
    if let Err(f) = &r1 {
        let _ = f.render(program);
    }
    let (mut m2, mut s2) = (machine, sched);
    let r2 = run_to_end_unrecorded(&interp, &mut m2, &mut s2);
    let (k1, k2) = (run_key(&r1), run_key(&r2));
    assert_eq!(k1, k2, "run_to_end and run_to_end_unrecorded disagree");
    if r1.is_ok() {
        for (i, (a, b)) in m1.threads.iter().zip(m2.threads.iter()).enumerate() {
            assert!(a.grf == b.grf, "run_to_end and run_to_end_unrecorded leave thread {i}'s GRF different");
        }
    }
    k1
}

// ---------------------------------------------------------------------------------------------
// Text mutations (kernels, ze_info YAML, launch JSON text)

/// Tokens inserted anywhere.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "(", ")", "((((((((", "\\", "\\\n", "4294967296", "4294967295", "2147483648", "-2147483649",
    "-9223372036854775808", "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "0x1_0000_0000_0000_0000", "0xFFFFFFFFFFFFFFFF", "0x", "0b", "1e400", "-0.0", "nan", "%r0", "%null",
    "%tdr0", "%sp", "%arg", ".decl", "<300;1,0>", "<0;1,0>", "<4294967295;4294967295,4294967295>", "<1>",
    "<0>", "(0,4294967295)", "(4294967295,0)", "(-1,-1)", "(M1, 32)", "(M1_NM, 4294967296)", "(M5, 33)",
    "(M9, 0)", ":d", ":q", ":hf", ":df", ":v", ":uv", ":vf", "\0", "\u{1b}", "\u{1b}[2J",
    "\u{1b}]0;pwned\u{7}", "\u{7f}", "\u{85}", "\r", "\t", "é", "𝔘", "\u{202e}", "\u{feff}", "\"",
    "\"unterminated", "/*", "//", ":", "::", ",", ";", ".", "-", "--", "~", "!", "<<", ">>", "/0", "%0", "[",
    "]", "{", "}", "- ", "? ", "&a", "*a", "!!str", "|", "'", "r[A0(0),4294967295]<1,0>",
    "r[A0(0),-4294967296]", "V0", "P1", "A0", "T0", "S0", "lsc_load.ugm", "raw_sends.0.1.0.0", "goto", "jmp",
    "call", "fcall", "ret", "_main_0",
];

/// Whole lines inserted at a line start.
const LINES: &[&str] = &[
    ".decl V900 v_type=G type=d num_elts=4294967295 align=GRF",
    ".decl V901 v_type=G type=d num_elts=16 align=GRF alias=<V901, 0>",
    ".decl V902 v_type=G type=q num_elts=8 align=wordx32 alias=<V33, 4294967295>",
    ".decl V903 v_type=G type=b num_elts=0",
    ".decl P900 v_type=P num_elts=4294967295",
    ".decl A900 v_type=A num_elts=4294967295",
    ".decl T900 v_type=T num_elts=4294967295",
    ".decl S900 v_type=S num_elts=0",
    ".input V33 offset=4294967295 size=4294967295",
    ".input V33 offset=-32 size=64",
    ".kernel_attr SimdSize=64",
    ".kernel_attr SimdSize=4294967296",
    ".kernel_attr SimdSize=0",
    ".kernel_attr NumGRF=4294967295",
    ".kernel_attr Target=\"3d\"",
    ".function \"_f\"",
    ".kernel \"k\"",
    ".global_function \"g\"",
    ".version 4294967295.1",
    "_main_0:",
    "lbl:",
    "    mov (M1, 16) V33(0,0)<1> 0x1:d",
    "    add (M1, 32) V33(4294967295,0)<1> V33(0,0)<300;1,0> 0x1:d",
    "    mov (M1, 1) %r0(0,0)<1>:ud 0x7fffffff:ud",
    "    goto (M1, 1) nowhere",
    "    goto (M1, 16) _main_0",
    "    jmp (M1, 1) lbl",
    "    call (M1, 1) _main_0",
    "    fcall (M1, 1) _f",
    "    ret (M1, 1)",
    "    (P1) jmp (M1, 1) _main_0",
    "    mov (M1, 8) r[A0(0),4294967295]<1>:d 0x0:d",
    "    shl (M1, 16) V33(0,0)<1> V33(0,0)<1;1,0> 0xffffffff:d",
    "    div (M1, 16) V33(0,0)<1> V33(0,0)<1;1,0> 0x0:d",
    "    lsc_load.ugm (M1, 16) V33:d32 flat[V34]:a64",
    "a:",
    "  - [1, 2, {b: c}]",
];

/// Interesting numbers for number-for-number replacement.
#[rustfmt::skip]
const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "3", "7", "8", "31", "32", "33", "63", "64", "65", "127", "128", "255", "256",
    "4095", "4096", "65535", "65536", "2147483647", "2147483648", "4294967295", "4294967296",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615", "18446744073709551616",
    "0x7fffffff", "0x80000000", "0xffffffff", "0x100000000", "0x1_0000_0000_0000_0000",
    "999999999999999999999999999999",
];

/// Start of each line, and the length as the last entry.
fn line_starts(data: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(data.iter().enumerate().filter(|&(_, &b)| b == b'\n').map(|(i, _)| i + 1));
    if starts.last() != Some(&data.len()) {
        starts.push(data.len());
    }
    starts
}

/// A random range of whole lines (a few lines, sometimes many).
fn line_range(rng: &mut Rng, data: &[u8]) -> (usize, usize) {
    let starts = line_starts(data);
    let n = starts.len() - 1;
    if n == 0 {
        return (0, 0);
    }
    let first = rng.below(n);
    let len = if rng.chance(75) { 1 + rng.below(3) } else { 1 + rng.below(n - first) };
    let last = (first + len).min(n);
    (starts[first], starts[last])
}

/// The byte offset of a random line start.
fn random_line_start(rng: &mut Rng, data: &[u8]) -> usize {
    let starts = line_starts(data);
    *rng.pick(&starts)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The word (identifier) at or after a random position.
fn random_word(rng: &mut Rng, data: &[u8]) -> Option<(usize, usize)> {
    let from = rng.below(data.len());
    let start = from + data[from..].iter().position(|&b| b.is_ascii_alphabetic() || b == b'_')?;
    let start = (0..start).rev().take_while(|&i| is_ident(data[i])).last().unwrap_or(start);
    let end = start + data[start..].iter().take_while(|&&b| is_ident(b)).count();
    Some((start, end))
}

/// The number at or after a random position (with a `-` sign and `0x` digits).
fn random_number(rng: &mut Rng, data: &[u8]) -> Option<(usize, usize)> {
    let from = rng.below(data.len());
    let mut start = from + data[from..].iter().position(u8::is_ascii_digit)?;
    if start > 0 && data[start - 1] == b'-' {
        start -= 1;
    }
    let end = start
        + 1
        + data[start + 1..].iter().take_while(|&&b| b.is_ascii_hexdigit() || b == b'x' || b == b'_').count();
    Some((start, end))
}

fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s: String = s.chars().take(40).collect();
    format!("{s:?}{}", if bytes.len() > 40 { "…" } else { "" })
}

/// One random text mutation of `data`; `others` are texts to splice from.
fn mutate_text(rng: &mut Rng, data: &mut Vec<u8>, others: &[Seed], log: &mut Vec<String>) {
    let op = rng.below(17);
    mutate_text_op(rng, op, data, others, log);
}

/// Mutations that keep most kernels parsing: a number replaced, a line deleted, duplicated
/// or moved, a name replaced by another.
fn mutate_text_gently(rng: &mut Rng, data: &mut Vec<u8>, others: &[Seed], log: &mut Vec<String>) {
    let op = *rng.pick(&[10, 10, 10, 10, 2, 3, 4, 11]);
    mutate_text_op(rng, op, data, others, log);
}

/// Text mutation number `op` (see [`mutate_text`]).
fn mutate_text_op(rng: &mut Rng, op: usize, data: &mut Vec<u8>, others: &[Seed], log: &mut Vec<String>) {
    let len = data.len();
    match op {
        0 if len > 0 => {
            let at = rng.below(len);
            let bit = rng.below(8);
            data[at] ^= 1 << bit;
            log.push(format!("flip bit {bit} of byte {at}"));
        }
        1 if len > 0 => {
            let at = rng.below(len);
            let b = *rng.pick(b"\0\x1b\x7f\xff()<>;,\"\\\n.%:-+09 \t\r[]{}");
            data[at] = b;
            log.push(format!("set byte {at} to {b:#04x}"));
        }
        2 => {
            let (a, b) = line_range(rng, data);
            data.drain(a..b);
            log.push(format!("delete bytes {a}..{b} (whole lines)"));
        }
        3 => {
            let (a, b) = line_range(rng, data);
            let copy = data[a..b].to_vec();
            let at = random_line_start(rng, data);
            data.splice(at..at, copy);
            log.push(format!("duplicate lines {a}..{b} at {at}"));
        }
        4 => {
            let (a, b) = line_range(rng, data);
            let moved: Vec<u8> = data.drain(a..b).collect();
            let at = random_line_start(rng, data);
            data.splice(at..at, moved);
            log.push(format!("move lines {a}..{b} to {at}"));
        }
        5 | 6 => {
            let tok = *rng.pick(TOKENS);
            let at = rng.below(len + 1);
            data.splice(at..at, tok.bytes());
            log.push(format!("insert {tok:?} at {at}"));
        }
        7 => {
            let line = *rng.pick(LINES);
            let at = random_line_start(rng, data);
            data.splice(at..at, format!("{line}\n").into_bytes());
            log.push(format!("insert line {line:?} at {at}"));
        }
        8 => {
            let at = rng.below(len + 1);
            data.truncate(at);
            log.push(format!("truncate at {at}"));
        }
        9 if !others.is_empty() => {
            let other = rng.pick(others);
            let cut = random_line_start(rng, data);
            let from = random_line_start(rng, &other.bytes);
            data.truncate(cut);
            data.extend_from_slice(&other.bytes[from..]);
            log.push(format!("splice: keep 0..{cut}, then {} from byte {from}", other.name));
        }
        10 if len > 0 => {
            if let Some((a, b)) = random_number(rng, data) {
                let n = *rng.pick(NUMBERS);
                log.push(format!("replace number {} at {a} by {n}", show(&data[a..b])));
                data.splice(a..b, n.bytes());
            }
        }
        11 if len > 0 => {
            if let (Some((a, b)), Some((c, d))) = (random_word(rng, data), random_word(rng, data)) {
                let word = data[c..d].to_vec();
                log.push(format!("replace word {} at {a} by {}", show(&data[a..b]), show(&word)));
                data.splice(a..b, word);
            }
        }
        12 => {
            let tok =
                *rng.pick(&["(", "-", "~", "!", "[", "{", "- ", "<", "\\", "\"", "((-", "a", ".", "\n"]);
            let n = rng.count();
            let at = rng.below(len + 1);
            data.splice(at..at, tok.repeat(n).into_bytes());
            log.push(format!("insert {tok:?} x{n} at {at}"));
        }
        13 => {
            let tok = *rng.pick(&["\\", "\\\n", "(", "\"", "/*", "-", "0x", "<", "[", ":", "\u{1b}", "\r"]);
            data.extend_from_slice(tok.as_bytes());
            log.push(format!("append {tok:?} at the end"));
        }
        14 if len > 0 => {
            let a = rng.below(len);
            let b = (a + 1 + rng.below(64)).min(len);
            data.drain(a..b);
            log.push(format!("delete bytes {a}..{b}"));
        }
        15 if !others.is_empty() => {
            let other = rng.pick(others);
            let (a, b) = line_range(rng, &other.bytes);
            let at = random_line_start(rng, data);
            data.splice(at..at, other.bytes[a..b].iter().copied());
            log.push(format!("insert lines {a}..{b} of {} at {at}", other.name));
        }
        16 => {
            // Deep indentation (YAML nesting) or nested blocks.
            let n = rng.count().min(1500);
            let at = random_line_start(rng, data);
            let step = *rng.pick(&["  ", " ", "- ", "  - "]);
            let mut block = String::new();
            for i in 0..n {
                block.push_str(&step.repeat(i));
                block.push_str(if i % 2 == 0 { "k:\n" } else { "- x:\n" });
            }
            data.splice(at..at, block.into_bytes());
            log.push(format!("insert {n} lines nested by {step:?} at {at}"));
        }
        _ => {
            let at = rng.below(len + 1);
            let b = rng.next() as u8;
            data.insert(at, b);
            log.push(format!("insert byte {b:#04x} at {at}"));
        }
    }
}

/// 1 to 16 mutations (usually a few).
fn mutate_text_n(rng: &mut Rng, data: &mut Vec<u8>, others: &[Seed], log: &mut Vec<String>) {
    let n = if rng.chance(80) { 1 + rng.below(4) } else { 1 + rng.below(16) };
    for _ in 0..n {
        mutate_text(rng, data, others, log);
    }
    if data.len() > MAX_INPUT {
        data.truncate(MAX_INPUT);
        log.push(format!("truncate to {MAX_INPUT} bytes (the size cap)"));
    }
}

// ---------------------------------------------------------------------------------------------
// Parser target

/// A parser input: one or two files and the GRF size.
#[derive(Clone)]
struct ParserInput {
    files: Vec<Vec<u8>>,
    grf_size: u32,
}

/// Parses (and, if it parses, runs) one input: 1 if it parsed, 0 if not.
fn parser_case(input: ParserInput) -> usize {
    let files: Vec<SourceFile> = input
        .files
        .iter()
        .enumerate()
        .map(|(i, bytes)| SourceFile {
            path: if i == 0 { "fuzz.visaasm".to_string() } else { format!("fuzz.{}.visaasm", i + 1) },
            text: String::from_utf8_lossy(bytes).into_owned(),
        })
        .collect();
    let (program, diags) = parse_files_with_warnings(files, &ParseOptions { grf_size: input.grf_size });
    let rendered = diags.render();
    assert_no_controls("the rendered diagnostics", &rendered);
    if std::env::var_os("VDB_FUZZ_VERBOSE").is_some() {
        println!("parse: {}", rendered.lines().next().unwrap_or("ok"));
    }
    let Some(program) = program else { return 0 };
    let program = Arc::new(program);
    let simd = program.kernel().simd_size().filter(|s| [1, 2, 4, 8, 16, 32].contains(s)).unwrap_or(16);
    let mask = if simd == 32 { u32::MAX } else { (1u32 << simd) - 1 };
    let thread = ThreadState::new(&program, simd, mask);
    let machine = Machine {
        threads: vec![Shared::new(thread)].into(),
        slms: vec![Shared::new(Slm::new(64 * 1024))].into(),
        ..Machine::default()
    };
    let mut sched = Scheduler::single_group(1);
    sched.step_limit = STEP_LIMIT;
    run_both(&program, machine, sched);
    1
}

/// The first line of a panic message (what shrinking keeps the same).
fn first_line(m: &str) -> String {
    m.lines().next().unwrap_or("").to_string()
}

/// Shrinks `input` while it still panics with the same first message line: drops line
/// ranges, then byte ranges, halving their size.
fn shrink_parser(input: &ParserInput, message: &str, limit: Duration) -> ParserInput {
    quiet_shrink_panics();
    let want = first_line(message);
    let mut best = input.clone();
    let mut attempts = 0;
    let still_fails = |candidate: &ParserInput, attempts: &mut usize| -> bool {
        *attempts += 1;
        let c = candidate.clone();
        matches!(run_case("fuzz-shrink", limit, move || parser_case(c)),
            Outcome::Panicked(m) if first_line(&m) == want)
    };
    for f in 0..best.files.len() {
        for by_lines in [true, false] {
            let mut chunk =
                if by_lines { line_starts(&best.files[f]).len() / 2 } else { best.files[f].len() / 2 };
            while chunk >= 1 && attempts < SHRINK_ATTEMPTS {
                let mut i = 0;
                loop {
                    let data = &best.files[f];
                    let (a, b) = if by_lines {
                        let starts = line_starts(data);
                        if i >= starts.len() - 1 {
                            break;
                        }
                        (starts[i], starts[(i + chunk).min(starts.len() - 1)])
                    } else {
                        if i >= data.len() {
                            break;
                        }
                        (i, (i + chunk).min(data.len()))
                    };
                    let mut candidate = best.clone();
                    candidate.files[f].drain(a..b);
                    if attempts < SHRINK_ATTEMPTS && still_fails(&candidate, &mut attempts) {
                        best = candidate;
                    } else {
                        i += chunk;
                    }
                    if attempts >= SHRINK_ATTEMPTS {
                        break;
                    }
                }
                chunk /= 2;
            }
        }
    }
    best
}

/// Writes a parser input as `stem.visaasm` (and `stem.2.visaasm`); the first path.
fn save_parser_input(dir: &Path, stem: &str, input: &ParserInput) -> PathBuf {
    let first = dir.join(format!("{stem}.visaasm"));
    for (i, bytes) in input.files.iter().enumerate() {
        let path = if i == 0 { first.clone() } else { dir.join(format!("{stem}.{}.visaasm", i + 1)) };
        std::fs::write(&path, bytes).expect("fuzz input written");
    }
    first
}

/// Builds case `case` of the parser campaign.
fn parser_input(cfg: &Config, case: u64, seeds: &[Seed], log: &mut Vec<String>) -> ParserInput {
    let mut rng = Rng::for_case(cfg.seed, 1, case);
    let seed = rng.pick(seeds);
    let grf_size = *rng.pick(&[32, 64]);
    log.push(format!("seed {} (grf_size {grf_size})", seed.name));
    let mut first = seed.bytes.clone();
    if rng.chance(35) {
        mutate_text_gently(&mut rng, &mut first, seeds, log);
    } else {
        mutate_text_n(&mut rng, &mut first, seeds, log);
    }
    let mut files = vec![first];
    if rng.chance(10) {
        // A second file: a function file, a kernel, or a mutated one.
        let other = rng.pick(seeds);
        let mut bytes = other.bytes.clone();
        log.push(format!("second file: {}", other.name));
        if rng.chance(50) {
            mutate_text_n(&mut rng, &mut bytes, seeds, log);
        }
        files.push(bytes);
        if rng.chance(30) {
            files.swap(0, 1);
            log.push("second file first".to_string());
        }
    }
    ParserInput { files, grf_size }
}

#[test]
fn parser() {
    let cfg = Config::from_env();
    let dir = failures_dir();
    if let Ok(path) = std::env::var("VDB_FUZZ_REPRO") {
        if path.ends_with(".visaasm") {
            let mut files = vec![std::fs::read(&path).expect("VDB_FUZZ_REPRO readable")];
            let second = format!("{}.2.visaasm", path.trim_end_matches(".visaasm"));
            if let Ok(b) = std::fs::read(&second) {
                files.push(b);
            }
            for grf_size in [32, 64] {
                let input = ParserInput { files: files.clone(), grf_size };
                let name = format!("fuzz-case parser repro (input: {path})");
                if let Err(f) = run_case(&name, cfg.timeout, move || parser_case(input)).failure(cfg.timeout)
                {
                    panic!("{path} (grf_size {grf_size}): {f}");
                }
            }
        }
        return;
    }
    let seeds = kernel_seeds();
    let cur = dir.join("parser.cur.visaasm");
    let cur_log = dir.join("parser.cur.log");
    let started = Instant::now();
    let (mut parsed, mut slowest) = (0, (Duration::ZERO, 0));
    for case in cfg.start..cfg.start.saturating_add(cfg.iters) {
        let mut log = Vec::new();
        let input = parser_input(&cfg, case, &seeds, &mut log);
        save_parser_input(&dir, "parser.cur", &input);
        std::fs::write(&cur_log, log.join("\n")).expect("fuzz log written");
        let name = format!("fuzz-case parser #{case} (input: {})", cur.display());
        let t = Instant::now();
        let copy = input.clone();
        let failure = match run_case(&name, cfg.timeout, move || parser_case(copy)).failure(cfg.timeout) {
            Ok(n) => {
                parsed += n;
                None
            }
            Err(f) => Some(f),
        };
        if t.elapsed() > slowest.0 {
            slowest = (t.elapsed(), case);
        }
        if let Some(failure) = failure {
            let stem = format!("parser-{:x}-{case}", cfg.seed);
            let saved = save_parser_input(&dir, &stem, &input);
            std::fs::write(dir.join(format!("{stem}.log")), log.join("\n")).expect("fuzz log written");
            let mut shrunk_note = String::new();
            if let Some(m) = failure.strip_prefix("panicked: ") {
                let small = shrink_parser(&input, m, cfg.timeout);
                let path = save_parser_input(&dir, &format!("{stem}.min"), &small);
                shrunk_note = format!(
                    "\n  shrunk ({} bytes): {}\n{}",
                    small.files.iter().map(Vec::len).sum::<usize>(),
                    path.display(),
                    String::from_utf8_lossy(&small.files[0]).chars().take(2000).collect::<String>()
                );
            }
            panic!(
                "fuzz parser: case {case} (grf_size {}) {failure}\n  input: {}{shrunk_note}\n  replay: \
                 VDB_FUZZ_REPRO={} cargo test --test fuzz parser\n  or: VDB_FUZZ_SEED={:#x} \
                 VDB_FUZZ_START={case} VDB_FUZZ_ITERS=1 cargo test --test fuzz parser (same seed files)\n  \
                 mutations:\n    {}",
                input.grf_size,
                saved.display(),
                saved.display(),
                cfg.seed,
                log.join("\n    ")
            );
        }
    }
    let _ = std::fs::remove_file(&cur);
    let _ = std::fs::remove_file(dir.join("parser.cur.2.visaasm"));
    let _ = std::fs::remove_file(&cur_log);
    println!(
        "fuzz parser: {} cases from {} seeds in {:.1?} ({parsed} parsed and ran); slowest case #{} {:.1?}",
        cfg.iters,
        seeds.len(),
        started.elapsed(),
        slowest.1,
        slowest.0
    );
}

// ---------------------------------------------------------------------------------------------
// Launch loader target

/// Removes the launch folder copies `vdb-fuzz-PID` of campaigns that died (a stack overflow, an
/// allocation abort) where `/proc` tells which processes live.
fn remove_stale_work_dirs(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("vdb-fuzz-") else { continue };
        if Path::new("/proc/self").exists() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A launch file seed: its JSON and a private copy of its folder.
struct LaunchSeed {
    name: String,
    json: Value,
    /// The copy of the launch's folder the mutated launch is written into.
    dir: PathBuf,
    /// The zebin's `.ze_info` text, if the launch names a zebin that has one.
    zeinfo: Option<String>,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("fuzz folder created");
    let Ok(entries) = std::fs::read_dir(from) else { return };
    for e in entries.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            if e.file_name() != "out" {
                copy_dir(&src, &dst);
            }
        } else {
            std::fs::copy(&src, &dst).expect("seed file copied");
        }
    }
}

fn launch_seeds(work: &Path) -> Vec<LaunchSeed> {
    let root = repo();
    let mut paths = Vec::new();
    files_under(&root.join("sample-kernels"), ".launch.json", &mut paths);
    let mut copies: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut seeds = Vec::new();
    for p in paths {
        let Some(folder) = p.parent() else { continue };
        let n = copies.len();
        let dir = copies
            .entry(folder.to_path_buf())
            .or_insert_with(|| {
                let dir = work.join(format!("seed{n}"));
                copy_dir(folder, &dir);
                dir
            })
            .clone();
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let Ok(json) = serde_json::from_str::<Value>(&text) else { continue };
        let zeinfo =
            json.get("zebin").and_then(Value::as_str).and_then(|z| std::fs::read(dir.join(z)).ok()).and_then(
                |bytes| vdb::launch::Zebin::parse(&bytes).ok()?.ze_info_text().ok().map(str::to_string),
            );
        let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
        seeds.push(LaunchSeed { name, json, dir, zeinfo });
    }
    assert!(!seeds.is_empty(), "no *.launch.json seeds under sample-kernels/");
    seeds
}

/// JSON pointer of every node.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                pointers(child, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Field names of both launch forms and their parts.
#[rustfmt::skip]
const KEYS: &[&str] = &[
    "kernel", "functions", "zebin", "zeinfo", "device", "global_size", "local_size", "global_offset", "args",
    "step_limit", "grf_size", "simd", "dispatch_mask", "payload", "inputs", "svm", "registers_out",
    "surfaces", "index", "buffer", "size", "output", "local", "scalar", "bytes", "type", "values", "file",
    "name", "address", "var", "", "kernel ", "KERNEL", "\u{1b}[2J", "\u{0}",
];

/// Interesting unsigned numbers for launch fields.
#[rustfmt::skip]
const JSON_U64: &[u64] = &[
    0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 255, 256, 4096, 65535, 65536, 1 << 20, (1 << 20) + 1,
    1 << 30, (1 << 30) + 1, i32::MAX as u64, 1 << 31, u32::MAX as u64, 1 << 32, (1 << 32) + 1,
    i64::MAX as u64, 1 << 63, u64::MAX,
];

/// Interesting strings for launch fields: paths, numbers as text, type and device names.
#[rustfmt::skip]
const JSON_STRINGS: &[&str] = &[
    "", " ", ".", "..", "/", "/dev/zero", "/dev/null", "missing.bin", "in",
    "../../../../../../../../etc/hostname", "0x", "0xFFFFFFFFFFFFFFFF", "0x10000000000000000",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "1_0", "0X1F", " 12 ", "--1",
    "1e3", "ud", "d", "uq", "q", "f", "df", "hf", "b", "ub", "w", "uw", "v", "skl", "tgllp", "acm-g10",
    "pvc", "%r0", "V0", "V33", "0000803f", "0", "zz", "\u{0}", "\u{1b}[2J", "\u{1b}]0;pwned\u{7}",
    "é𝔘\u{202e}",
];

fn interesting_value(rng: &mut Rng) -> Value {
    use serde_json::json;
    match rng.below(6) {
        0 | 1 => {
            let n: Value = match rng.below(4) {
                0 => json!(*rng.pick(JSON_U64)),
                1 => json!(*rng.pick(&[-1i64, -2, -32, i32::MIN as i64, -(1i64 << 32), i64::MIN])),
                2 => json!(*rng.pick(&[0.5f64, -0.0, 1.5, 1e300, -1e300, 4294967296.5, f64::MIN_POSITIVE])),
                _ => json!(rng.next() >> rng.below(64)),
            };
            n
        }
        2 | 3 => Value::String((*rng.pick(JSON_STRINGS)).to_string()),
        4 => match rng.below(5) {
            0 => json!([]),
            1 => json!({}),
            2 => json!(null),
            3 => json!(true),
            _ => json!([0, 1, 2, 3, 4]),
        },
        _ => {
            // Nested garbage: arrays or objects some levels deep.
            let depth = *rng.pick(&[2, 8, 64, 127, 128, 200]);
            let mut v = interesting_leaf(rng);
            for i in 0..depth {
                v = if (i + depth) % 3 == 0 { json!({ "a": v }) } else { json!([v]) };
            }
            v
        }
    }
}

fn interesting_leaf(rng: &mut Rng) -> Value {
    match rng.below(3) {
        0 => Value::from(u64::MAX),
        1 => Value::from("x"),
        _ => Value::Null,
    }
}

/// One structural mutation of the launch JSON.
fn mutate_json(rng: &mut Rng, root: &mut Value, log: &mut Vec<String>) {
    let mut all = Vec::new();
    pointers(root, String::new(), &mut all);
    let ptr = rng.pick(&all).clone();
    mutate_json_at(rng, root, &ptr, &all, log);
}

/// A number of the launch set to a nearby or a small value, which usually still loads.
fn mutate_json_gently(rng: &mut Rng, root: &mut Value, log: &mut Vec<String>) {
    let mut all = Vec::new();
    pointers(root, String::new(), &mut all);
    let numbers: Vec<String> = all
        .iter()
        .filter(|p| {
            root.pointer(p).is_some_and(|v| v.is_number() || v.as_str().is_some_and(|s| s.starts_with("0x")))
        })
        .cloned()
        .collect();
    if numbers.is_empty() {
        return mutate_json(rng, root, log);
    }
    let ptr = rng.pick(&numbers).clone();
    let Some(node) = root.pointer_mut(&ptr) else { return };
    let v = match (rng.below(3), node.as_u64()) {
        (0, Some(x)) => Value::from(x.saturating_add(1)),
        (1, Some(x)) => Value::from(x.saturating_sub(1)),
        _ => Value::from(*rng.pick(&[0u64, 1, 2, 3, 4, 7, 8, 15, 16, 24, 32, 33, 64, 100, 256, 1024, 4096])),
    };
    log.push(format!("{ptr}: {node} -> {v}"));
    *node = v;
}

/// One structural mutation of the node at `ptr`; `all` are every node's pointers.
fn mutate_json_at(rng: &mut Rng, root: &mut Value, ptr: &str, all: &[String], log: &mut Vec<String>) {
    let ptr = ptr.to_string();
    let other = root.pointer(rng.pick(all).as_str()).cloned().unwrap_or(Value::Null);
    let Some(node) = root.pointer_mut(&ptr) else { return };
    let shown = |v: &Value| {
        let s = v.to_string();
        if s.len() > 60 {
            format!("{}…", s.chars().take(60).collect::<String>())
        } else {
            s
        }
    };
    match (rng.below(8), &mut *node) {
        (0 | 1, Value::Number(n)) => {
            let x = n.as_i64().map(|x| x as i128).or_else(|| n.as_u64().map(|x| x as i128)).unwrap_or(0);
            let y = match rng.below(6) {
                0 => x + 1,
                1 => x - 1,
                2 => x * 2,
                3 => -x,
                4 => x + (1 << 32),
                _ => x << rng.below(40),
            };
            let v = if let Ok(u) = u64::try_from(y) {
                Value::from(u)
            } else if let Ok(i) = i64::try_from(y) {
                Value::from(i)
            } else {
                Value::from(y as f64)
            };
            log.push(format!("{ptr}: {x} -> {}", shown(&v)));
            *node = v;
        }
        (0 | 1, Value::String(s)) => {
            let new = match rng.below(5) {
                0 => format!("{s}{s}"),
                1 => s.chars().rev().collect(),
                2 => format!("{s}x"),
                3 => s.chars().take(s.chars().count() / 2).collect(),
                _ => format!("./{s}"),
            };
            log.push(format!("{ptr}: {s:?} -> {new:?}"));
            *s = new;
        }
        (2, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            let new = (*rng.pick(KEYS)).to_string();
            if let Some(v) = map.remove(&key) {
                log.push(format!("{ptr}: rename key {key:?} to {new:?}"));
                map.insert(new, v);
            }
        }
        (3, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            map.remove(&key);
            log.push(format!("{ptr}: remove key {key:?}"));
        }
        (2 | 3, Value::Object(map)) => {
            let key = (*rng.pick(KEYS)).to_string();
            let v = if rng.chance(50) { other } else { interesting_value(rng) };
            log.push(format!("{ptr}: add {key:?}: {}", shown(&v)));
            map.insert(key, v);
        }
        (2, Value::Array(items)) if !items.is_empty() => {
            let i = rng.below(items.len());
            items.remove(i);
            log.push(format!("{ptr}: remove element {i}"));
        }
        (3, Value::Array(items)) if !items.is_empty() => {
            let i = rng.below(items.len());
            let n = *rng.pick(&[1, 2, 10, 300]);
            for _ in 0..n {
                items.push(items[i].clone());
            }
            log.push(format!("{ptr}: append element {i} x{n}"));
        }
        (2 | 3, Value::Array(items)) => {
            let v = interesting_value(rng);
            log.push(format!("{ptr}: push {}", shown(&v)));
            items.push(v);
        }
        (4, _) => {
            log.push(format!("{ptr}: {} -> copy of another node {}", shown(node), shown(&other)));
            *node = other;
        }
        _ => {
            let v = interesting_value(rng);
            log.push(format!("{ptr}: {} -> {}", shown(node), shown(&v)));
            *node = v;
        }
    }
}

/// Interesting integers written into zebins and buffers (the file's length ±1 is added).
#[rustfmt::skip]
const BINARY_INTS: &[u64] = &[
    0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 1 << 32, 1 << 63,
    u64::MAX,
];

/// Binary mutations (zebins, input buffers): bit flips, interesting integers at header and
/// section-table offsets, truncation, growth, chunk deletion and duplication.
fn mutate_binary(rng: &mut Rng, data: &mut Vec<u8>, log: &mut Vec<String>) {
    let n = 1 + rng.below(4);
    for _ in 0..n {
        let len = data.len();
        match rng.below(7) {
            0 if len > 0 => {
                let at = rng.below(len);
                let bit = rng.below(8);
                data[at] ^= 1 << bit;
                log.push(format!("binary: flip bit {bit} of byte {at}"));
            }
            1 | 2 if len >= 8 => {
                // ELF header or a section header (e_shoff at 0x28, e_shentsize 0x3a, e_shnum 0x3c).
                let width = *rng.pick(&[1usize, 2, 4, 8]);
                let at = if rng.chance(40) {
                    rng.below(64.min(len))
                } else if len >= 64 && rng.chance(70) {
                    let shoff = u64::from_le_bytes(data[0x28..0x30].try_into().expect("8 bytes")) as usize;
                    let shnum = u16::from_le_bytes([data[0x3c], data[0x3d]]) as usize;
                    shoff.saturating_add(rng.below(shnum.max(1)) * 64).saturating_add(rng.below(64))
                } else {
                    rng.below(len)
                };
                let at = at / width * width;
                if at.checked_add(width).is_some_and(|end| end <= len) {
                    let v = match rng.below(BINARY_INTS.len() + 3) {
                        i if i < BINARY_INTS.len() => BINARY_INTS[i],
                        i => (len as u64).wrapping_add(i as u64).wrapping_sub(BINARY_INTS.len() as u64 + 1),
                    };
                    data[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
                    log.push(format!("binary: write {v:#x} as {width} bytes at {at}"));
                }
            }
            3 => {
                let at = rng.below(len + 1);
                data.truncate(at);
                log.push(format!("binary: truncate at {at}"));
            }
            4 => {
                let extra = *rng.pick(&[1, 7, 64, 4096]);
                data.extend(std::iter::repeat_n(rng.next() as u8, extra));
                log.push(format!("binary: append {extra} bytes"));
            }
            5 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(256)).min(len);
                data.drain(a..b);
                log.push(format!("binary: delete bytes {a}..{b}"));
            }
            _ if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(256)).min(len);
                let at = rng.below(len + 1);
                let chunk = data[a..b].to_vec();
                data.splice(at..at, chunk);
                log.push(format!("binary: copy bytes {a}..{b} to {at}"));
            }
            _ => {}
        }
    }
}

/// String values of the launch that name an existing file in `dir`, with their pointers.
fn file_fields(v: &Value, dir: &Path) -> Vec<(String, String)> {
    let mut all = Vec::new();
    pointers(v, String::new(), &mut all);
    all.into_iter()
        .filter_map(|p| {
            let s = v.pointer(&p)?.as_str()?.to_string();
            (!s.is_empty() && dir.join(&s).is_file()).then_some((p, s))
        })
        .collect()
}

/// Builds case `case` of the loader campaign in its seed's folder copy; the launch path.
fn launch_input(
    cfg: &Config,
    case: u64,
    seeds: &[LaunchSeed],
    kernels: &[Seed],
    log: &mut Vec<String>,
) -> PathBuf {
    let mut rng = Rng::for_case(cfg.seed, 2, case);
    let seed = rng.pick(seeds);
    log.push(format!("seed {}", seed.name));
    let mut json = seed.json.clone();
    let dir = &seed.dir;
    if rng.chance(30) {
        for _ in 0..1 + rng.below(2) {
            mutate_json_gently(&mut rng, &mut json, log);
        }
        let path = dir.join("fuzz.launch.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&json).expect("JSON serialized"))
            .expect("fuzz launch written");
        return path;
    }
    if rng.chance(35) {
        // A mutated copy of a file the launch names.
        match rng.below(4) {
            0 if seed.zeinfo.is_some() => {
                let mut text = seed.zeinfo.clone().unwrap_or_default().into_bytes();
                mutate_text_n(&mut rng, &mut text, &[], log);
                std::fs::write(dir.join("fuzz.yaml"), &text).expect("fuzz file written");
                if let Value::Object(map) = &mut json {
                    map.remove("zebin");
                    map.insert("zeinfo".into(), "fuzz.yaml".into());
                    let device = seed.name.rsplit('/').next().and_then(|n| n.strip_suffix(".launch.json"));
                    map.insert("device".into(), device.unwrap_or("tgllp").into());
                }
                log.push("the zebin's ze_info, mutated, as `zeinfo: fuzz.yaml`".to_string());
            }
            1 => {
                if let Some(kernel) = json.get("kernel").and_then(Value::as_str).map(str::to_string) {
                    if let Ok(mut text) = std::fs::read(dir.join(&kernel)) {
                        mutate_text_n(&mut rng, &mut text, kernels, log);
                        std::fs::write(dir.join("fuzz.visaasm"), &text).expect("fuzz file written");
                        json["kernel"] = "fuzz.visaasm".into();
                        log.push(format!("kernel {kernel}, mutated, as fuzz.visaasm"));
                    }
                }
            }
            _ => {
                let fields = file_fields(&json, dir);
                if !fields.is_empty() {
                    let (ptr, file) = rng.pick(&fields).clone();
                    if let Ok(mut bytes) = std::fs::read(dir.join(&file)) {
                        mutate_binary(&mut rng, &mut bytes, log);
                        std::fs::write(dir.join("fuzz.bin"), &bytes).expect("fuzz file written");
                        if let Some(v) = json.pointer_mut(&ptr) {
                            *v = "fuzz.bin".into();
                        }
                        log.push(format!("{ptr} ({file}), mutated, as fuzz.bin"));
                    }
                }
            }
        }
    }
    let n = if rng.chance(80) { 1 + rng.below(3) } else { 1 + rng.below(10) };
    for _ in 0..n {
        mutate_json(&mut rng, &mut json, log);
    }
    let mut text = if rng.chance(50) {
        serde_json::to_vec_pretty(&json).expect("JSON serialized")
    } else {
        serde_json::to_vec(&json).expect("JSON serialized")
    };
    if rng.chance(15) {
        log.push("then the JSON text:".to_string());
        mutate_text_n(&mut rng, &mut text, &[], log);
    }
    let path = dir.join("fuzz.launch.json");
    std::fs::write(&path, &text).expect("fuzz launch written");
    path
}

/// Loads and runs one launch file: 0 if it did not load, 1 if it loaded and ran.
fn launch_case(path: &Path) -> usize {
    let mut launch = match vdb::launch::raw::load(path) {
        Ok(l) => l,
        Err(e) => {
            let shown = e.to_string();
            if std::env::var_os("VDB_FUZZ_VERBOSE").is_some() {
                println!("load error: {}", shown.lines().next().unwrap_or(""));
            }
            return 0;
        }
    };
    launch.scheduler.step_limit = STEP_LIMIT;
    run_both(&launch.program, launch.machine, launch.scheduler);
    1
}

#[test]
fn launch_loader() {
    let cfg = Config::from_env();
    let dir = failures_dir();
    if let Ok(path) = std::env::var("VDB_FUZZ_REPRO") {
        if path.ends_with(".json") {
            let p = PathBuf::from(&path);
            let name = format!("fuzz-case launch repro (input: {path})");
            if let Err(f) = run_case(&name, cfg.timeout, move || launch_case(&p)).failure(cfg.timeout) {
                panic!("{path}: {f}");
            }
        }
        return;
    }
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    remove_stale_work_dirs(&tmp);
    let work = tmp.join(format!("vdb-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let seeds = launch_seeds(&work);
    let kernels = kernel_seeds();
    let cur_log = dir.join("launch_loader.cur.log");
    let started = Instant::now();
    let (mut loaded, mut slowest) = (0, (Duration::ZERO, 0));
    for case in cfg.start..cfg.start.saturating_add(cfg.iters) {
        let mut log = Vec::new();
        let path = launch_input(&cfg, case, &seeds, &kernels, &mut log);
        let case_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        std::fs::write(&cur_log, format!("{}\n{}", path.display(), log.join("\n")))
            .expect("fuzz log written");
        let name = format!("fuzz-case launch #{case} (input: {})", path.display());
        let t = Instant::now();
        let p = path.clone();
        let failure = match run_case(&name, cfg.timeout, move || launch_case(&p)).failure(cfg.timeout) {
            Ok(n) => {
                loaded += n;
                None
            }
            Err(f) => Some(f),
        };
        if t.elapsed() > slowest.0 {
            slowest = (t.elapsed(), case);
        }
        if let Some(failure) = failure {
            let saved = dir.join(format!("launch-{:x}-{case}", cfg.seed));
            let _ = std::fs::remove_dir_all(&saved);
            copy_dir(&case_dir, &saved);
            let launch = saved.join("fuzz.launch.json");
            std::fs::write(saved.join("fuzz.log"), log.join("\n")).expect("fuzz log written");
            let text = std::fs::read_to_string(&launch).unwrap_or_default();
            if !failure.starts_with("took over") {
                let _ = std::fs::remove_dir_all(&work);
            }
            panic!(
                "fuzz launch_loader: case {case} {failure}\n  input: {}\n{}\n  replay: VDB_FUZZ_REPRO={} \
                 cargo test --test fuzz launch_loader\n  or: VDB_FUZZ_SEED={:#x} VDB_FUZZ_START={case} \
                 VDB_FUZZ_ITERS=1 cargo test --test fuzz launch_loader\n  mutations:\n    {}",
                launch.display(),
                text.chars().take(3000).collect::<String>(),
                launch.display(),
                cfg.seed,
                log.join("\n    ")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_file(&cur_log);
    println!(
        "fuzz launch_loader: {} cases from {} launch files in {:.1?} ({loaded} loaded and ran); slowest case \
         #{} {:.1?}",
        cfg.iters,
        seeds.len(),
        started.elapsed(),
        slowest.1,
        slowest.0
    );
}
