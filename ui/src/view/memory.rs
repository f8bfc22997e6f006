//! The memory pane: SVM or a work-group's SLM as hex from an address, watched bytes
//! highlighted, and the last writer of the byte under the cursor (step, thread, instruction)
//! from the recording.

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
use vdb::session::{Format, WatchTarget};

fn watched(app: &App, addr: u64) -> bool {
    app.session.watchpoints.iter().any(|w| match &w.target {
        WatchTarget::Memory { space, addr: a, len } => {
            *space == app.mem_space && addr >= *a && addr < a + len
        }
        _ => false,
    })
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    // The cursor inside its buffer (`out+0x10 = 0x…`) when one holds it, else its region.
    let title = match app.mem_space {
        MemSpace::Svm => match s.buffer_location(app.mem_cursor) {
            Some(name) => format!(" {name} = {:#x}", app.mem_cursor),
            None => {
                let region =
                    s.machine.svm.region_of(app.mem_cursor, 1).map_or("unmapped", |r| r.name.as_str());
                format!(" {:#x} ({region})", app.mem_cursor)
            }
        },
        MemSpace::Slm(g) => format!(" {:#x} (SLM of work-group {g})", app.mem_cursor),
    };
    let b = block(app, Pane::Memory, &title);
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.height == 0 {
        return;
    }
    let mut lines = Vec::new();
    let rows = inner.height.saturating_sub(1) as u64;
    for r in 0..rows {
        let base = app.mem_addr + r * 16;
        let mut spans = vec![Span::styled(format!("{base:010x} "), theme.dim())];
        if matches!(app.format, Format::Signed | Format::Float | Format::Unsigned) {
            spans.extend(typed_words(app, base, &theme));
            lines.push(Line::from(spans));
            continue;
        }
        for i in 0..16 {
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
        lines.push(Line::from(spans));
    }
    lines.push(Line::styled(last_writer(app), theme.dim()));
    Paragraph::new(lines).render(inner, buf);
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

/// "last written at step …" for the cursor byte.
fn last_writer(app: &App) -> String {
    let s = &app.session;
    let mut cur = [0u8];
    if s.read_memory(app.mem_space, app.mem_cursor, &mut cur).is_err() {
        return "cursor byte: unmapped".into();
    }
    let hits = s.recorder.trace.mem_writes(app.mem_space, app.mem_cursor, 1, s.now, &cur, 1);
    match hits.first() {
        None => "cursor byte: not written yet".into(),
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
