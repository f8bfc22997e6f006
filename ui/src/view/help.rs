//! Overlays: the help (every action with its keys, from the keymap in force) and `why`'s
//! provenance tree (a row per value, Enter goes to the write it came from).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::action::Action;
use crate::app::App;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let (lines, title): (Vec<Line>, &str) = if app.help_text.is_empty() {
        let mut lines: Vec<Line> = Action::ALL
            .iter()
            .map(|(a, d)| Line::from(format!("{:24} {d}", app.keymap.keys_for(*a).join(", "))))
            .collect();
        lines.push(Line::from("Commands: press : and type `help` for the command list."));
        lines.push(Line::from("Kernels built with -g: step/next go by OpenCL line, stepi by instruction."));
        (lines, "Keys")
    } else {
        (app.help_text.iter().map(|l| Line::from(l.as_str())).collect(), "Commands")
    };
    // As wide as the longest line (and its borders) where the terminal allows; as tall as
    // the lines, scrolled (arrows, PgUp/PgDn) where they do not fit.
    let longest = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 2;
    let w = area.width.min(longest);
    let h = area.height.min(lines.len() as u16 + 2);
    let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    let visible = h.saturating_sub(2) as usize;
    let first = app.help_scroll.min(lines.len().saturating_sub(visible));
    let more = if lines.len() > visible {
        format!(
            " lines {}-{} of {}, ↑↓ PgUp PgDn scroll",
            first + 1,
            (first + visible).min(lines.len()),
            lines.len()
        )
    } else {
        String::new()
    };
    Clear.render(r, buf);
    let block = Block::default().borders(Borders::ALL).title(format!(" {title} (? or Esc closes){more} "));
    Paragraph::new(lines.into_iter().skip(first).take(visible).collect::<Vec<_>>())
        .block(block)
        .render(r, buf);
}

pub fn render_jumps(app: &App, view: &crate::app::JumpList, area: Rect, buf: &mut Buffer) {
    let theme = super::Theme { no_color: app.no_color };
    let w = area
        .width
        .min(view.rows.iter().map(|r| r.text.chars().count()).max().unwrap_or(0) as u16 + 2)
        .max(40.min(area.width));
    let h = area.height.min(view.rows.len() as u16 + 2);
    let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    // Rows scroll so that the cursor stays in view.
    let visible = h.saturating_sub(2) as usize;
    let first = view.cursor.saturating_sub(visible.saturating_sub(1));
    let lines: Vec<Line> = view
        .rows
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .map(|(i, row)| {
            let style = if i == view.cursor { theme.cursor() } else { ratatui::style::Style::default() };
            Line::styled(row.text.clone(), style)
        })
        .collect();
    Clear.render(r, buf);
    let title = format!(" {}, Esc closes ", view.title);
    Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(title)).render(r, buf);
}
