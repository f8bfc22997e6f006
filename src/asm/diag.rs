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
    /// `path:line:col: error: message`, the source line, and a caret line under the span; at
    /// most [`MAX_RENDERED`] of them, then a line counting the rest (as rustc stops after a
    /// limit). Control characters in paths, messages and source lines are escaped, so a
    /// hostile file cannot retitle or clear the terminal it is checked in.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Line starts per file, found once: looking each line up from the start of its file
        // made 40,000 diagnostics take seconds.
        let mut starts: Vec<Option<Vec<usize>>> = vec![None; self.files.len()];
        for d in self.items.iter().take(MAX_RENDERED) {
            self.render_one(d, &mut starts, &mut out);
        }
        if self.items.len() > MAX_RENDERED {
            let rest = &self.items[MAX_RENDERED..];
            let errors = rest.iter().filter(|d| d.severity == Severity::Error).count();
            let _ = writeln!(
                out,
                "... and {errors} more error(s) and {} more warning(s) not shown",
                rest.len() - errors
            );
        }
        out
    }

    fn render_one(&self, d: &Diagnostic, starts: &mut [Option<Vec<usize>>], out: &mut String) {
        let file = self.files.get(d.span.file.0 as usize);
        let path = file.map(|f| f.path.as_str()).unwrap_or("<unknown>");
        let _ = writeln!(
            out,
            "{}:{}:{}: {}: {}",
            escape_controls(path),
            d.span.line,
            d.span.col,
            d.severity.label(),
            escape_controls(&d.message)
        );
        let Some(file) = file else { return };
        let index = starts[d.span.file.0 as usize].get_or_insert_with(|| line_starts(&file.text));
        let whole = line_at(&file.text, index, d.span.line);
        // A long line (a minified or binary file) is shown as a window around the column.
        let col = d.span.col.saturating_sub(1) as usize;
        let first = col.saturating_sub(LINE_WINDOW / 2);
        let shown: String = whole.chars().skip(first).take(LINE_WINDOW).collect();
        let (lead, tail) = (
            if first > 0 { "…" } else { "" },
            if whole.chars().count() > first + LINE_WINDOW { "…" } else { "" },
        );
        let _ = writeln!(out, "{lead}{}{tail}", escape_controls(&shown));
        let width = caret_width(file, d.span, whole).min(LINE_WINDOW);
        // Keep tabs in the gutter so the caret lines up under tab-indented source, and pad
        // escaped characters by the width they print at.
        let pad: String = std::iter::once(" ".repeat(lead.chars().count()))
            .chain(shown.chars().take(col - first).map(|c| {
                if c == '\t' {
                    "\t".to_string()
                } else {
                    " ".repeat(escaped_width(c))
                }
            }))
            .collect();
        let _ = writeln!(out, "{pad}{}", "^".repeat(width));
    }
}

/// Most characters of a source line a diagnostic shows.
const LINE_WINDOW: usize = 160;

/// Most diagnostics [`Diagnostics::render`] shows.
pub const MAX_RENDERED: usize = 100;

/// Byte offsets where each line of `text` starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// Line `line` (1-based) of `text`, without its line end.
fn line_at<'t>(text: &'t str, starts: &[usize], line: u32) -> &'t str {
    let Some(&start) = starts.get(line.saturating_sub(1) as usize) else { return "" };
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    text[start..end].strip_suffix('\r').unwrap_or(&text[start..end])
}

/// `text` with control characters other than tab written as escapes (`\u{1b}`).
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| if c.is_control() && c != '\t' { c.escape_default().to_string() } else { c.to_string() })
            .collect(),
    )
}

/// Columns `c` takes once escaped.
fn escaped_width(c: char) -> usize {
    if c.is_control() && c != '\t' {
        c.escape_default().count()
    } else {
        1
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

    #[test]
    fn control_characters_are_escaped_and_the_caret_follows_them() {
        let files = vec![SourceFile { path: "a\u{7}.visaasm".into(), text: "\u{1b}[2J frob\n".into() }];
        let mut d = Diagnostics { files, items: Vec::new() };
        d.push(
            Span { file: FileId(0), line: 1, col: 6, start: 5, end: 9 },
            Severity::Error,
            "bad \u{1b}]0;t\u{7}",
        );
        let text = d.render();
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "\\u{1b}[2J frob");
        assert_eq!(lines[2].find('^'), lines[1].find("frob"));
    }

    #[test]
    fn many_diagnostics_render_in_linear_time_and_are_capped() {
        let n = 40_000;
        let text: String = (0..n).map(|i| format!("bad line {i}\n")).collect();
        let mut d = Diagnostics {
            files: vec![SourceFile { path: "a".into(), text: text.clone() }],
            items: Vec::new(),
        };
        let mut start = 0;
        for line in 1..=n {
            d.push(Span { file: FileId(0), line, col: 1, start, end: start + 3 }, Severity::Error, "x");
            start += format!("bad line {}\n", line - 1).len() as u32;
        }
        let out = d.render();
        assert_eq!(out.lines().filter(|l| l.starts_with("a:")).count(), MAX_RENDERED);
        assert!(
            out.contains(&format!("and {} more error(s)", n as usize - MAX_RENDERED)),
            "{}",
            &out[out.len() - 200..]
        );
        // The last shown diagnostic points at its own line.
        assert!(out.contains(&format!("a:{MAX_RENDERED}:1: error: x\nbad line {}\n", MAX_RENDERED - 1)));
    }
}
