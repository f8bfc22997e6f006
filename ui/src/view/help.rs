//! The help overlay: every action with its keys (from the keymap in force).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::action::Action;
use crate::app::App;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let mut lines: Vec<Line> = Action::ALL
        .iter()
        .map(|(a, d)| Line::from(format!("{:24} {d}", app.keymap.keys_for(*a).join(", "))))
        .collect();
    lines.push(Line::from("Commands: press : and type `help` for the command list."));
    // As wide as the longest line (and its borders) where the terminal allows.
    let longest = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 2;
    let w = area.width.min(longest);
    let h = area.height.min(Action::ALL.len() as u16 + 4);
    let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    Clear.render(r, buf);
    let block = Block::default().borders(Borders::ALL).title(" Keys (? closes) ");
    Paragraph::new(lines).block(block).render(r, buf);
}
