//! Rendering: one file per pane, each `fn render(&App, Rect, &mut Buffer)`, never mutating.

mod help;
mod lanes;
mod log;
pub(crate) mod memory;
mod registers;
mod source;
mod status;
mod threads;
mod timeline;

#[cfg(test)]
mod tests;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::app::{App, Pane};

/// The smallest screen the layout needs.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Colours, or plain modifiers under NO_COLOR.
pub struct Theme {
    pub no_color: bool,
}

impl Theme {
    pub fn fg(&self, c: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(c)
        }
    }
    pub fn current(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().bg(Color::Blue).fg(Color::White)
        }
    }
    pub fn cursor(&self) -> Style {
        Style::default().add_modifier(Modifier::UNDERLINED)
    }
    /// Style of source operand `i` (distinct per source) and of the destination.
    pub fn read(&self, i: usize) -> Style {
        if self.no_color {
            return Style::default().add_modifier(Modifier::BOLD);
        }
        let c = [Color::Cyan, Color::Magenta, Color::Green, Color::LightBlue][i % 4];
        Style::default().fg(Color::Black).bg(c)
    }
    pub fn write(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().fg(Color::Black).bg(Color::Yellow)
        }
    }
    pub fn changed(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    pub fn dim(&self) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(Color::DarkGray)
        }
    }
}

/// A bordered block, highlighted when its pane has focus.
pub fn block<'a>(app: &App, pane: Pane, extra: &str) -> Block<'a> {
    let theme = Theme { no_color: app.no_color };
    let focused = app.pane == pane;
    let title = format!(" {}{}{} ", if focused { "▶ " } else { "" }, pane.title(), extra);
    let style = if focused { theme.fg(Color::Yellow).add_modifier(Modifier::BOLD) } else { Style::default() };
    Block::default().borders(Borders::ALL).title(title).border_style(style)
}

/// Renders the whole screen into `buf`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "vdb needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {}x{}. Enlarge it or press q.",
            area.width, area.height
        );
        Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: true }).render(area, buf);
        return;
    }
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(1), Constraint::Min(10), Constraint::Length(1)])
        .split(area);
    status::render(app, rows[0], buf);
    let cols = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(52), Constraint::Percentage(48)])
        .split(rows[1]);
    let left = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Min(8), Constraint::Length(9)])
        .split(cols[0]);
    source::render(app, left[0], buf);
    log::render(app, left[1], buf);
    let n_preds = app.session.program.preds.len().min(6) as u16;
    // The register pane is as tall as its variable's rows (a one-element variable took 47
    // rows at 300x80), at most half the column; the divergence timeline (a row per lane) and
    // memory share what is left.
    let var_rows = app.reg_var.map_or(4, |v| {
        let p = &app.session.program;
        p.var(v).size.div_ceil(p.grf_size).max(1) as u16
    });
    let reg_rows = (var_rows + 2).clamp(3, (cols[1].height / 2).max(3));
    let right = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(reg_rows),
            Constraint::Length(7 + n_preds),
            Constraint::Fill(2),
            Constraint::Fill(1),
            Constraint::Length(6),
        ])
        .split(cols[1]);
    registers::render(app, right[0], buf);
    lanes::render(app, right[1], buf);
    timeline::render(app, right[2], buf);
    memory::render(app, right[3], buf);
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(right[4]);
    threads::render_threads(app, bottom[0], buf);
    threads::render_breakpoints(app, bottom[1], buf);
    render_prompt(app, rows[2], buf);
    if app.help {
        help::render(app, area, buf);
    }
    if let Some(view) = &app.jumps {
        help::render_jumps(app, view, area, buf);
    }
}

fn render_prompt(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let line = match &app.prompt {
        Some(p) => {
            let label = match p.kind {
                crate::app::PromptKind::Command => ":",
                crate::app::PromptKind::GotoStep => "go to step: ",
                crate::app::PromptKind::Variable => "variable: ",
                crate::app::PromptKind::MemoryAddress => "memory address (N, argN+OFF, buffer+OFF, slm[G]+OFF): ",
            };
            Line::from(format!("{label}{}▏", p.text))
        }
        None => Line::styled(
            "s/S step  n/N next  o/O out  c/C continue  b break  w watch  y why  g goto  v variable  : command  Tab pane  ? help  q quit",
            theme.dim(),
        ),
    };
    Paragraph::new(line).render(area, buf);
}

/// Lane strip text: one char per lane, `█` set and `·` clear.
pub fn strip(bits: u32, simd: u32) -> String {
    (0..simd).map(|l| if bits >> l & 1 != 0 { '█' } else { '·' }).collect()
}
