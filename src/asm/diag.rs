//! Diagnostics: errors and warnings with source spans, rendered rustc-style.

use crate::program::{FileId, SourceFile, Span};
use std::fmt::Write as _;

/// How serious a diagnostic is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One message tied to a place in a source file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub span: Span,
    pub severity: Severity,
    pub message: String,
}

/// All diagnostics of one parse, with the files they point into (so they can be rendered
/// without the `Program`, which does not exist when parsing failed).
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    pub files: Vec<SourceFile>,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }

    /// Only the warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Warning)
    }

    pub(crate) fn push(&mut self, span: Span, severity: Severity, message: impl Into<String>) {
        self.items.push(Diagnostic { span, severity, message: message.into() });
    }

    /// Renders every diagnostic as
    /// `path:line:col: error: message`, the source line, and a caret line under the span.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.items {
            self.render_one(d, &mut out);
        }
        out
    }

    fn render_one(&self, d: &Diagnostic, out: &mut String) {
        let file = self.files.get(d.span.file.0 as usize);
        let path = file.map(|f| f.path.as_str()).unwrap_or("<unknown>");
        let _ =
            writeln!(out, "{}:{}:{}: {}: {}", path, d.span.line, d.span.col, d.severity.label(), d.message);
        let Some(file) = file else { return };
        let line = file.line_text(d.span.line);
        let _ = writeln!(out, "{line}");
        let width = caret_width(file, d.span, line);
        // Keep tabs in the gutter so the caret lines up under tab-indented source.
        let pad: String = line
            .chars()
            .take(d.span.col.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = writeln!(out, "{pad}{}", "^".repeat(width));
    }
}

/// Number of characters the span covers on its first line (at least one).
fn caret_width(file: &SourceFile, span: Span, line: &str) -> usize {
    let text = file.text.get(span.start as usize..span.end as usize).unwrap_or("");
    let first_line = text.split('\n').next().unwrap_or("");
    let width = first_line.chars().count();
    let room = line.chars().count().saturating_sub(span.col.saturating_sub(1) as usize);
    width.min(room.max(1)).max(1)
}

/// A span for a file with nothing better to point at (line 1, column 1).
pub(crate) fn file_start(file: FileId) -> Span {
    Span { file, line: 1, col: 1, start: 0, end: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_caret_under_span() {
        let files = vec![SourceFile { path: "a.visaasm".into(), text: "x\n  frob (1)\n".into() }];
        let mut d = Diagnostics { files, items: Vec::new() };
        d.push(Span { file: FileId(0), line: 2, col: 3, start: 4, end: 8 }, Severity::Error, "bad");
        let text = d.render();
        assert_eq!(text, "a.visaasm:2:3: error: bad\n  frob (1)\n  ^^^^\n");
        assert!(d.has_errors());
    }
}
