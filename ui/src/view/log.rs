//! The command output log (newest at the bottom).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use crate::app::App;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let block = ratatui::widgets::Block::default().borders(ratatui::widgets::Borders::ALL).title(" Log ");
    let inner = block.inner(area);
    block.render(area, buf);
    let n = inner.height as usize;
    let start = app.log.len().saturating_sub(n);
    let lines: Vec<Line> = app.log[start..].iter().map(|l| Line::from(l.clone())).collect();
    Paragraph::new(lines).render(inner, buf);
}
