//! Lexer, parser and diagnostics for `.visaasm` text (the syntax IGC 1.0.12504's parser
//! accepts; see `spec/syntax.md`). The result is a fully decoded, laid-out [`Program`].
//!
//! Module map: [`lexer`] tokens; `parser` statements, names and labels; `decl` variable
//! declarations and GRF layout; `directive` attributes and inputs; `expr` constant expressions and immediates; `operand`
//! operand forms; `lsc` LSC operands; `mnemonic` suffixes and signatures; `inst` instructions and static checks;
//! [`diag`] diagnostics.

mod decl;
pub mod diag;
mod directive;
mod expr;
mod inst;
pub mod lexer;
mod lsc;
mod mnemonic;
mod operand;
mod parser;

pub use diag::{Diagnostic, Diagnostics, Severity};

use crate::isa::{StateId, UnitId};
use crate::program::{
    align_up, predefined_vars, FileId, Program, SourceFile, Span, StateKind, StateVar, PREDEFINED_SURFACES,
};
use parser::{Binding, Ctx, UnitParser};
use std::collections::HashMap;

/// Parser settings.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Bytes per GRF: 32 (SKL to DG2) or 64 (Xe-HPC/PVC, Xe2); 0 takes it from the kernel
    /// file's `//Platform:` line (IGC 2.x ends its dumps with one), else 32.
    pub grf_size: u32,
}

/// The platform a dump names in its trailing `//Platform: NAME` line.
pub fn platform_of(text: &str) -> Option<&str> {
    text.lines().rev().take(16).find_map(|l| l.trim().strip_prefix("//Platform:")).map(str::trim)
}

/// GRF bytes of a platform, by the names IGC's dumps and `ocloc -device` use.
pub fn grf_size_of_platform(name: &str) -> Option<u32> {
    let n = name.to_ascii_lowercase().replace(['-', '_'], "");
    match n.as_str() {
        "xe2" | "xe2hpg" | "xe2lpg" | "bmg" | "lnl" | "pvc" | "pvcxt" | "pvcxl" | "xehpc" | "xe3" | "ptl" => {
            Some(64)
        }
        "skl" | "gen9" | "kbl" | "cfl" | "icllp" | "gen11" | "tgllp" | "xelp" | "xe" | "dg1" | "rkl"
        | "adls" | "adlp" | "dg2" | "acmg10" | "acmg11" | "acmg12" | "xehpg" | "mtl" | "xelpg" | "arl" => {
            Some(32)
        }
        _ => None,
    }
}

/// The GRF size a parse uses: the option's, else the first file's `//Platform:` line's,
/// else 32.
fn grf_size_for(files: &[SourceFile], opts: &ParseOptions) -> u32 {
    if opts.grf_size != 0 {
        return opts.grf_size;
    }
    files.iter().find_map(|f| platform_of(&f.text).and_then(grf_size_of_platform)).unwrap_or(32)
}

/// Parses a kernel file plus its stack-call function files (one unit per file; the file
/// with `.kernel` becomes `units[0]`). Fails if there is any error.
pub fn parse_files(files: Vec<SourceFile>, opts: &ParseOptions) -> Result<Program, Diagnostics> {
    match parse_files_with_warnings(files, opts) {
        (Some(p), _) => Ok(p),
        (None, d) => Err(d),
    }
}

/// Parses one file with default options.
pub fn parse_str(path: &str, text: &str) -> Result<Program, Diagnostics> {
    parse_files(vec![SourceFile { path: path.to_string(), text: text.to_string() }], &ParseOptions::default())
}

/// Parses and returns the program (if there were no errors) plus every diagnostic,
/// including warnings for instructions with a static fault.
pub fn parse_files_with_warnings(
    files: Vec<SourceFile>,
    opts: &ParseOptions,
) -> (Option<Program>, Diagnostics) {
    let grf_size = match grf_size_for(&files, opts) {
        n @ (32 | 64) => n,
        _ => 32,
    };
    let mut ctx = new_ctx(grf_size);
    // The kernel file is parsed first so that it becomes unit 0.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| !declares_kernel(&files[i].text));
    // Files given together form one program: one kernel and the functions it calls. A
    // second kernel is another program (checking unrelated kernels together would quietly
    // make one program of them).
    let kernels: Vec<usize> = order.iter().copied().filter(|&i| declares_kernel(&files[i].text)).collect();
    if let [first, rest @ ..] = kernels.as_slice() {
        for &i in rest {
            ctx.diags.push(
                diag::file_start(FileId(i as u32)),
                Severity::Error,
                format!(
                    "a second kernel: {} declares one too; files given together form one program \
                     (a kernel and its function files) — check kernels one by one, or with --separately",
                    files[*first].path
                ),
            );
        }
    }
    let mut units = Vec::with_capacity(files.len());
    for &i in &order {
        let file = FileId(i as u32);
        if let Some(span) = binary_byte(file, &files[i].text) {
            ctx.diags.push(
                span,
                Severity::Error,
                "this is a binary file (a NUL byte here), not vISA assembly text",
            );
            continue;
        }
        let unit = UnitId(units.len() as u32);
        units.push(UnitParser::new(&mut ctx, &files[i].text, file, unit).run());
    }
    let mut diags = std::mem::take(&mut ctx.diags);
    diags.files = files.clone();
    if diags.has_errors() {
        return (None, diags);
    }
    let lines = crate::lines::LineTable::build(&ctx.insts, &units);
    let program = Program {
        files,
        units,
        insts: ctx.insts,
        vars: ctx.vars,
        preds: ctx.preds,
        addrs: ctx.addrs,
        states: ctx.states,
        grf_size,
        grf_bytes: align_up(ctx.next_offset, grf_size),
        addr_slots: ctx.addr_slots,
        lines,
    };
    (Some(program), diags)
}

/// Where a text holds a NUL byte, which no `.visaasm` file does: the file is binary (a zebin,
/// a `.dat` dump), and reporting each of its bytes as a syntax error helps nobody.
fn binary_byte(file: FileId, text: &str) -> Option<Span> {
    let at = text.find('\0')?;
    let before = &text[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
    Some(Span { file, line, col, start: at as u32, end: at as u32 + 1 })
}

/// Whether a file has a `.kernel` directive (not `.kernel_attr`), by a quick text scan.
fn declares_kernel(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.strip_prefix(".kernel").is_some_and(|r| r.starts_with([' ', '\t', '"']))
    })
}

/// The program-wide state with the predefined variables and surfaces in place.
fn new_ctx(grf_size: u32) -> Ctx {
    let (vars, next_offset) = predefined_vars(grf_size);
    let mut predefined = HashMap::new();
    for (i, v) in vars.iter().enumerate() {
        predefined.insert(v.name.clone(), Binding::Gen(crate::isa::VarId(i as u32)));
    }
    let mut states = Vec::new();
    for (i, name) in PREDEFINED_SURFACES.iter().enumerate() {
        let kind = if i == 0 { StateKind::Slm } else { StateKind::Surface(i as u32) };
        predefined.insert(name.to_string(), Binding::State(StateId(i as u32)));
        states.push(StateVar { name: name.to_string(), kind, num_elts: 1 });
    }
    Ctx {
        grf_size,
        insts: Vec::new(),
        vars,
        preds: Vec::new(),
        addrs: Vec::new(),
        states,
        next_offset,
        addr_slots: 0,
        diags: Diagnostics::default(),
        predefined,
    }
}
