//! The threads pane (status, group, line; Enter focuses) and the breakpoint/watchpoint list.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{App, Pane};
use vdb::machine::ThreadStatus;

pub fn render_threads(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    let n = s.machine.threads.len();
    let b = block(app, Pane::Threads, &format!(" {n}"));
    let inner = b.inner(area);
    b.render(area, buf);
    let rows = inner.height as usize;
    let start = app.thread_cursor.saturating_sub(rows / 2).min(n.saturating_sub(rows));
    let lines: Vec<Line> = (start..n.min(start + rows))
        .map(|i| {
            let t = &s.machine.threads[i];
            let status = match t.control.status {
                ThreadStatus::Faulted => "FAULT",
                _ => s.thread_state(i),
            };
            let (group, idx) = s.thread_labels.get(i).copied().unwrap_or_default();
            let line = s.program.insts.get(t.control.pc.0 as usize).map_or(0, |x| x.span.line);
            let text = format!(
                "{}{i:>4} {status:11} g{group:?}#{idx} l{line}",
                if i == s.focus.0 as usize { '*' } else { ' ' }
            );
            let style = if app.pane == Pane::Threads && i == app.thread_cursor {
                theme.current()
            } else {
                Style::default()
            };
            Line::styled(text, style)
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}

pub fn render_breakpoints(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    let b = block(app, Pane::Breakpoints, "");
    let inner = b.inner(area);
    b.render(area, buf);
    let mut rows: Vec<String> = s
        .breakpoints
        .iter()
        .map(|b| {
            format!(
                "{} {} {}{}{} ×{}",
                b.id,
                if b.temporary { "tbreak" } else { "break" },
                b.text.rsplit('/').next().unwrap_or(""),
                b.cond.as_ref().map(|c| format!(" if {c}")).unwrap_or_default(),
                if b.enabled { "" } else { " off" },
                b.hits
            )
        })
        .collect();
    rows.extend(s.watchpoints.iter().map(|w| {
        let what = match &w.target {
            vdb::session::WatchTarget::Memory { space, addr, len } => {
                format!("{} {len}B", vdb::session::expr::location_text(*space, *addr))
            }
            vdb::session::WatchTarget::Register { text, .. } => text.clone(),
        };
        let cond = w.cond.as_ref().map(|c| format!(" if {c}")).unwrap_or_default();
        format!("{} {:?} {what}{cond}{} ×{}", w.id, w.kind, if w.enabled { "" } else { " off" }, w.hits)
    }));
    if rows.is_empty() {
        rows.push("none (b: break at cursor, w: watch)".into());
    }
    let lines: Vec<Line> = rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let style = if app.pane == Pane::Breakpoints && i == app.bp_cursor {
                theme.current()
            } else {
                Style::default()
            };
            Line::styled(r, style)
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}
