//! The divergence timeline: for the focused thread, the execution mask over its recent
//! steps (lanes × steps, newest at the right), `g` over divergent goto departures and `r`
//! where parked lanes rejoined. Built from the recording with a bounded backward walk.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{App, Pane};
use vdb::isa::{InstIdx, Opcode};
use vdb::trace::EntryKind;

/// Most recording entries looked at per frame (keeps rendering fast on huge recordings).
const SCAN_LIMIT: u64 = 20_000;

/// (execution mask before the step, its instruction is a goto, lanes were woken) for the
/// focused thread's last `n` steps, oldest first.
pub fn history(app: &App, n: usize) -> Vec<(u32, bool, bool)> {
    let s = &app.session;
    let focus = s.focus.0;
    let mut em = s.machine.thread(s.focus).control.em;
    let mut out = Vec::new();
    let mut step = s.now;
    let floor = s.now.saturating_sub(SCAN_LIMIT);
    while step > floor && out.len() < n {
        step -= 1;
        let rec = s.recorder.steps[step as usize];
        if rec.thread != focus {
            continue;
        }
        let after = em;
        for e in s.recorder.entries(step) {
            if let (EntryKind::Control { index }, true) = (&e.kind, e.thread == focus) {
                if let Some((old, _)) = s.recorder.control_change(*index) {
                    em = old.em;
                }
            }
        }
        let goto = s.program.inst(InstIdx(rec.pc)).op == Opcode::Goto;
        out.push((em, goto, after & !em != 0 && !goto));
    }
    out.reverse();
    out
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let b = block(app, Pane::Timeline, " exec mask per step →");
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.height < 2 || inner.width < 8 {
        return;
    }
    let s = &app.session;
    let simd = s.machine.thread(s.focus).simd;
    let cols = inner.width.saturating_sub(5) as usize;
    let hist = history(app, cols);
    let marks: String = hist
        .iter()
        .map(|(_, g, r)| {
            if *g {
                'g'
            } else if *r {
                'r'
            } else {
                ' '
            }
        })
        .collect();
    let mut lines = vec![Line::from(vec![Span::raw("     "), Span::styled(marks, theme.dim())])];
    let rows = (inner.height as u32 - 1).min(simd);
    let first = s.lane.saturating_sub(rows / 2).min(simd - rows);
    for lane in first..first + rows {
        let cells: String =
            hist.iter().map(|(em, _, _)| if em >> lane & 1 != 0 { '█' } else { '·' }).collect();
        let label = format!("{}{lane:>3} ", if lane == s.lane { '›' } else { ' ' });
        lines.push(Line::from(vec![Span::raw(label), Span::raw(cells)]));
    }
    Paragraph::new(lines).render(inner, buf);
}
