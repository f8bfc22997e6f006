//! The lane pane: one strip per mask, SIMD-width aware — execution mask, the current
//! instruction's channel enables, call mask, dispatch mask, every predicate — with the
//! focused lane marked.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, strip, Theme};
use crate::app::{App, Pane};
use vdb::exec::channel_enables;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    let t = s.machine.thread(s.focus);
    let simd = t.simd;
    let item = s
        .work_item(s.focus.0, s.lane)
        .map_or(String::new(), |w| format!(", work-item {}", s.work_item_text(&w)));
    let b = block(app, Pane::Lanes, &format!(" SIMD{simd}, lane {}{item}", s.lane));
    let inner = b.inner(area);
    b.render(area, buf);
    let inst = s.program.insts.get(t.control.pc.0 as usize);
    let chen = inst.map_or(0, |i| channel_enables(i, t.control.em, &t.preds).0 << i.exec.offset.min(31));
    let header: String = (0..simd)
        .map(|l| {
            if l == s.lane {
                '▼'
            } else if l % 8 == 0 {
                '|'
            } else {
                ' '
            }
        })
        .collect();
    let mut rows = vec![Line::from(vec![Span::raw(format!("{:10}", "")), Span::styled(header, theme.dim())])];
    let mut push = |label: &str, bits: u32| {
        rows.push(Line::from(vec![Span::raw(format!("{label:10}")), Span::raw(strip(bits, simd))]));
    };
    push("exec mask", t.control.em);
    push("chan en.", chen);
    push("call mask", t.control.call_mask);
    push("dispatch", t.dispatch_mask);
    for (p, bits) in s.program.preds.iter().zip(&t.preds) {
        push(&p.name, *bits);
    }
    let skip = 0;
    Paragraph::new(rows.into_iter().skip(skip).collect::<Vec<_>>()).render(inner, buf);
}
