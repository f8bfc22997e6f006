//! The command output log (newest at the bottom; focused, Up and PgUp go back through it).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use crate::app::{App, Pane};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let scroll = app.log_scroll.min(app.log.len().saturating_sub(1));
    let extra = if scroll > 0 { format!(" ↑ {scroll} lines back (Down returns)") } else { String::new() };
    let block = super::block(app, Pane::Log, &extra);
    let inner = block.inner(area);
    block.render(area, buf);
    let n = inner.height as usize;
    let end = app.log.len() - scroll;
    let start = end.saturating_sub(n);
    let lines: Vec<Line> = app.log[start..end].iter().map(|l| Line::from(l.clone())).collect();
    Paragraph::new(lines).render(inner, buf);
}
