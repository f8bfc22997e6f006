//! The memory pane: SVM or a work-group's SLM from an address, watched bytes highlighted, and
//! the last writer of the selection (step, thread, instruction) from the recording. In a typed
//! buffer (an OpenCL buffer argument whose pointer type names its elements) it shows elements
//! of that type and the cursor selects one; hex (`f`) shows the raw bytes, as elsewhere.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{App, Pane};
use vdb::isa::DataType;
use vdb::isa::InstIdx;
use vdb::machine::MemSpace;
use vdb::session::format::value as fmt_value;
use vdb::session::{Format, TypedBuffer, WatchTarget};

/// Bytes a row of the byte view shows.
const ROW: u64 = 16;
/// Widest a float cell grows before it is shown in exponent form.
const CELL: usize = 12;

fn watched(app: &App, addr: u64) -> bool {
    app.session.watchpoints.iter().any(|w| match &w.target {
        WatchTarget::Memory { space, addr: a, len } => {
            *space == app.mem_space && addr >= *a && addr < a + len
        }
        _ => false,
    })
}

/// The typed buffer the cursor is in, when the pane shows it as elements (not in hex).
pub fn typed_view(app: &App) -> Option<TypedBuffer> {
    if app.format == Format::Hex {
        return None;
    }
    app.session.typed_buffer(app.mem_space, app.mem_cursor)
}

/// The selection as (address, length): the element under the cursor in a typed view, else the
/// cursor byte. Watching, last-write and `why` take it whole.
pub fn selection(app: &App) -> (u64, u64) {
    let element = typed_view(app).and_then(|b| Some((b.element_start(app.mem_cursor)?, b.elem.size())));
    element.unwrap_or((app.mem_cursor, 1))
}

/// Bytes a row shows: 16, or one element where elements are wider.
pub fn row_bytes(app: &App) -> u64 {
    typed_view(app).map_or(ROW, |b| b.elem.size().max(ROW))
}

/// The start of the row holding `addr`: rows of a typed view are counted from the buffer's
/// start, so that they hold whole elements.
pub fn row_start(app: &App, addr: u64) -> u64 {
    match typed_view(app) {
        Some(b) if addr >= b.base => {
            let row = row_bytes(app);
            b.base + (addr - b.base) / row * row
        }
        _ => addr & !(ROW - 1),
    }
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let typed = typed_view(app);
    let b = block(app, Pane::Memory, &title(app, typed.as_ref()));
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.height == 0 {
        return;
    }
    let rows = inner.height.saturating_sub(1) as u64;
    let mut lines = match &typed {
        Some(b) => typed_rows(app, b, rows, &theme),
        None => (0..rows).map(|r| byte_row(app, app.mem_addr + r * ROW, &theme)).collect(),
    };
    lines.push(Line::styled(last_writer(app), theme.dim()));
    Paragraph::new(lines).render(inner, buf);
}

/// The cursor inside its buffer (`out+0x10 = 0x…`, with the element's value in a typed view)
/// when one holds it, else its region.
fn title(app: &App, typed: Option<&TypedBuffer>) -> String {
    let s = &app.session;
    let (at, len) = selection(app);
    match app.mem_space {
        MemSpace::Svm => match s.buffer_location(at) {
            Some(name) => {
                let mut bytes = vec![0u8; len as usize];
                let value = match typed {
                    Some(b) if s.read_memory(app.mem_space, at, &mut bytes).is_ok() => {
                        format!("  {} {}", b.elem.name(), b.elem.values_text(&bytes))
                    }
                    _ => String::new(),
                };
                format!(" {name} = {at:#x}{value}")
            }
            None => {
                let region = s.machine.svm.region_of(at, 1).map_or("unmapped", |r| r.name.as_str());
                format!(" {at:#x} ({region})")
            }
        },
        MemSpace::Slm(g) => format!(" {at:#x} (SLM of work-group {g})"),
    }
}

/// A row of 16 bytes in hex, or of four 32-bit words in the chosen format (`f` cycles hex,
/// signed, float) outside typed buffers.
fn byte_row(app: &App, base: u64, theme: &Theme) -> Line<'static> {
    let s = &app.session;
    let mut spans = vec![Span::styled(format!("{base:010x} "), theme.dim())];
    if matches!(app.format, Format::Signed | Format::Float | Format::Unsigned) {
        spans.extend(typed_words(app, base, theme));
        return Line::from(spans);
    }
    for i in 0..ROW {
        let a = base + i;
        let mut byte = [0u8];
        let text = match s.read_memory(app.mem_space, a, &mut byte) {
            Ok(()) => format!("{:02x}", byte[0]),
            Err(_) => "--".into(),
        };
        let mut style = if watched(app, a) { theme.write() } else { Style::default() };
        if a == app.mem_cursor && app.pane == Pane::Memory {
            style = style.patch(theme.current());
        }
        spans.push(Span::raw(if i == 8 { "  " } else { " " }));
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

/// A row as four 32-bit words in the chosen format (`f` cycles hex, signed, float).
fn typed_words(app: &App, base: u64, theme: &Theme) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    for w in 0..4u64 {
        let a = base + 4 * w;
        let mut b = [0u8; 4];
        let text = match app.session.read_memory(app.mem_space, a, &mut b) {
            Ok(()) => {
                let ty = if app.format == Format::Float { DataType::F } else { DataType::D };
                fmt_value(ty, u32::from_le_bytes(b) as u64, app.format)
            }
            Err(_) => "--".into(),
        };
        let hit = (a..a + 4).any(|x| watched(app, x));
        let mut style = if hit { theme.write() } else { Style::default() };
        if (a..a + 4).contains(&app.mem_cursor) && app.pane == Pane::Memory {
            style = style.patch(theme.current());
        }
        out.push(Span::styled(format!(" {text:>12}"), style));
    }
    out
}

/// `rows` rows of the buffer's elements from the pane's first row, in columns as wide as the
/// widest value shown; elements outside the buffer show as `--`.
fn typed_rows(app: &App, b: &TypedBuffer, rows: u64, theme: &Theme) -> Vec<Line<'static>> {
    let (size, row) = (b.elem.size(), row_bytes(app));
    let first = row_start(app, app.mem_addr);
    let (cursor, _) = selection(app);
    let cells: Vec<Vec<(u64, String)>> = (0..rows)
        .map(|r| {
            (0..row / size)
                .map(|k| {
                    let at = first + r * row + k * size;
                    (at, element_text(app, b, at))
                })
                .collect()
        })
        .collect();
    let width = cells.iter().flatten().map(|(_, t)| t.chars().count()).max().unwrap_or(0);
    cells
        .into_iter()
        .enumerate()
        .map(|(r, row_cells)| {
            let base = first + r as u64 * row;
            let mut spans = vec![Span::styled(format!("{base:010x}"), theme.dim())];
            for (at, text) in row_cells {
                let mut style =
                    if (at..at + size).any(|x| watched(app, x)) { theme.write() } else { Style::default() };
                if at == cursor && app.pane == Pane::Memory {
                    style = style.patch(theme.current());
                }
                spans.push(Span::raw(" "));
                spans.push(Span::styled(format!("{text:>width$}"), style));
            }
            Line::from(spans)
        })
        .collect()
}

/// One element of `b` at `at` in the pane's format, `--` outside the buffer or unreadable.
fn element_text(app: &App, b: &TypedBuffer, at: u64) -> String {
    let size = b.elem.size();
    if at < b.base || at + size > b.base + b.size {
        return "--".into();
    }
    let mut bytes = vec![0u8; size as usize];
    match app.session.read_memory(app.mem_space, at, &mut bytes) {
        Ok(()) => b.elem.short_text(&bytes, app.format, CELL),
        Err(_) => "--".into(),
    }
}

/// "last written at step …" for the selection (the cursor byte, or its element).
fn last_writer(app: &App) -> String {
    let s = &app.session;
    let (at, len) = selection(app);
    let what = if len == 1 { "cursor byte" } else { "cursor element" };
    let mut cur = vec![0u8; len as usize];
    if s.read_memory(app.mem_space, at, &mut cur).is_err() {
        return format!("{what}: unmapped");
    }
    let hits = s.recorder.trace.mem_writes(app.mem_space, at, len, s.now, &cur, 1);
    match hits.first() {
        None => format!("{what}: not written yet"),
        Some(h) => {
            let inst = s.program.inst(InstIdx(h.pc));
            format!(
                "last write: step {} thread {} line {} ${} ({})",
                h.step,
                h.thread,
                inst.span.line,
                inst.id,
                inst.op.mnemonic()
            )
        }
    }
}
