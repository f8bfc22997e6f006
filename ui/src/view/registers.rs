//! The register pane: a variable as a 2D grid (rows = its GRF rows, columns = elements),
//! cells the current instruction reads (per source, distinct styles) and writes (enabled
//! destination lanes) highlighted, cells changed by the last movement marked.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{App, Pane};
use vdb::exec::{channel_enables, load_le};
use vdb::isa::{DataType, Operand};
use vdb::session::format::value as fmt_value;

/// GRF byte → highlight (Some(i) = source i reads it, None = the destination writes it).
fn touched(app: &App) -> HashMap<u32, Option<usize>> {
    let s = &app.session;
    let t = s.machine.thread(s.focus);
    let mut map = HashMap::new();
    let Some(inst) = s.program.insts.get(t.control.pc.0 as usize) else { return map };
    let (chen, _, _) = channel_enables(inst, t.control.em, &t.preds);
    let mut src = 0;
    for op in &inst.operands {
        let Operand::Direct(d) = op else {
            if !matches!(op, Operand::Pred(_)) {
                src += 1;
            }
            continue;
        };
        let size = d.ty.size();
        for lane in 0..inst.exec.size {
            if d.is_dst && chen >> lane & 1 == 0 {
                continue;
            }
            let at = d.base + d.region.element(lane) * size;
            for b in at..at + size {
                map.entry(b).or_insert(if d.is_dst { None } else { Some(src) });
            }
        }
        if !d.is_dst {
            src += 1;
        }
    }
    map
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    let Some(var_id) = app.reg_var else {
        let b = block(app, Pane::Registers, "");
        Paragraph::new("choose a variable: v, or select an operand in the source pane")
            .block(b)
            .render(area, buf);
        return;
    };
    let program = &s.program;
    let v = program.var(var_id);
    let alias = v.alias.map_or(String::new(), |(base, off)| format!(" = {}+{off}", program.var(base).name));
    let pin = if app.reg_pinned { " (pinned)" } else { "" };
    let b = block(app, Pane::Registers, &format!(" {}:{} ×{}{alias}{pin}", v.name, v.ty, v.num_elts));
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let t = s.machine.thread(s.focus);
    let before = (app.before_thread == s.focus).then_some(&app.before);
    let size = v.ty.size();
    let per_row = (program.grf_size / size).max(1);
    let rows = v.size.div_ceil(program.grf_size);
    let width = cell_width(v.ty, app.format).min(widest(app, t, v));
    let hits = touched(app);
    let mut out = Vec::new();
    let cursor = app.register_cell(var_id);
    let first_row = (cursor.0 as u32).min(rows.saturating_sub(1)).saturating_sub(inner.height as u32 / 2);
    for r in first_row..rows.min(first_row + inner.height as u32) {
        // Rows are labelled as vISA names them, `(row,0)` of the variable (`r1` read as the
        // GRF register r1).
        let mut spans = vec![Span::styled(format!("({r},0)"), theme.dim())];
        for c in 0..per_row {
            let at = v.offset + r * program.grf_size + c * size;
            if at + size > v.offset + v.size {
                break;
            }
            let bytes = &t.grf[at as usize..(at + size) as usize];
            let text = fmt_value(v.ty, load_le(bytes, size), app.format);
            let mut style = match hits.get(&at) {
                Some(None) => theme.write(),
                Some(Some(i)) => theme.read(*i),
                None => Style::default(),
            };
            if before.is_some_and(|b| b.get(at as usize..(at + size) as usize) != Some(bytes)) {
                style = style.patch(theme.changed());
            }
            if app.pane == Pane::Registers && (r as usize, c as usize) == cursor {
                style = style.patch(theme.cursor());
            }
            spans.push(Span::raw(" "));
            spans.push(Span::styled(format!("{text:>width$}"), style));
        }
        out.push(Line::from(spans));
    }
    Paragraph::new(out).render(inner, buf);
}

/// The widest formatted element of the variable (so small values use narrow cells).
fn widest(app: &App, t: &vdb::machine::ThreadState, v: &vdb::program::GenVar) -> usize {
    let size = v.ty.size();
    (0..v.num_elts)
        .filter_map(|i| {
            let at = (v.offset + i * size) as usize;
            t.grf.get(at..at + size as usize).map(|b| fmt_value(v.ty, load_le(b, size), app.format).len())
        })
        .max()
        .unwrap_or(1)
        .max(2)
}

fn cell_width(ty: DataType, format: vdb::session::Format) -> usize {
    match (format, ty.size()) {
        (vdb::session::Format::Hex, n) => 2 + 2 * n as usize,
        (_, 1) => 4,
        (_, 2) => 6,
        (_, 4) => 11,
        _ => 20,
    }
}
