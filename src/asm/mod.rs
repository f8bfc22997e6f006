//! Lexer, parser and diagnostics for `.visaasm` text (placeholder until the parser lands).

use crate::program::{Program, SourceFile, Span};

pub struct ParseOptions {
    pub grf_size: u32,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { grf_size: 32 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub span: Span,
    pub severity: Severity,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub files: Vec<SourceFile>,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn render(&self) -> String {
        String::new()
    }
    pub fn has_errors(&self) -> bool {
        true
    }
}

pub fn parse_files(files: Vec<SourceFile>, _opts: &ParseOptions) -> Result<Program, Diagnostics> {
    Err(Diagnostics { files, items: Vec::new() })
}

pub fn parse_files_with_warnings(
    files: Vec<SourceFile>,
    opts: &ParseOptions,
) -> (Option<Program>, Diagnostics) {
    match parse_files(files, opts) {
        Ok(p) => (Some(p), Diagnostics { files: Vec::new(), items: Vec::new() }),
        Err(d) => (None, d),
    }
}
