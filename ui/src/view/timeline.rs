//! The divergence timeline: for the focused thread, the execution mask over its recent
//! steps (lanes × steps, newest at the right), `g` over divergent goto departures and `r`
//! where parked lanes rejoined, from `Session::mask_history`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{App, Pane};

/// Most recording entries looked at per frame (keeps rendering fast on huge recordings).
const SCAN_LIMIT: u64 = 20_000;

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
    let hist = s.mask_history(s.focus, cols, SCAN_LIMIT);
    let marks: String = hist
        .iter()
        .map(|h| {
            if h.goto {
                'g'
            } else if h.rejoined {
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
        let cells: String = hist.iter().map(|h| if h.em >> lane & 1 != 0 { '█' } else { '·' }).collect();
        let label = format!("{}{lane:>3} ", if lane == s.lane { '›' } else { ' ' });
        lines.push(Line::from(vec![Span::raw(label), Span::raw(cells)]));
    }
    Paragraph::new(lines).render(inner, buf);
}
