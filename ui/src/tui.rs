//! The interactive loop: draw, read a key, turn it into an action, update; long movements
//! report progress on the bottom line and stop on Ctrl-C, keeping what was recorded.

use std::io::Write;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use crate::app::App;
use crate::keymap::{Key, Keymap};
use crate::{terminal, view};

/// Progress line and Ctrl-C check during a long run (called every few thousand steps).
fn progress(now: u64, total: u64) -> bool {
    let (_, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let mut out = std::io::stdout();
    let _ = crossterm::queue!(
        out,
        crossterm::cursor::MoveTo(0, rows.saturating_sub(1)),
        crossterm::style::Print(format!("running… step {now} ({total} recorded) — Ctrl-C stops   "))
    );
    let _ = out.flush();
    while event::poll(Duration::ZERO).unwrap_or(false) {
        if let Ok(Event::Key(k)) = event::read() {
            if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
                return true;
            }
        }
    }
    false
}

/// Handles one key press.
pub fn handle_key(app: &mut App, key: event::KeyEvent) {
    if app.prompt.is_some() {
        app.prompt_key(key);
        return;
    }
    if app.why.is_some() {
        app.why_key(key.code);
        return;
    }
    if app.help && matches!(key.code, KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q')) {
        app.help = false;
        return;
    }
    if let Some(action) = app.keymap.action(Key::from_event(key)) {
        app.update(action);
    }
}

/// Runs the debugger; `scripts` are command files run first (`vdb -x FILE`), their output in
/// the log.
pub fn run(
    session: vdb::session::Session,
    keymap: Keymap,
    scripts: &[std::path::PathBuf],
) -> anyhow::Result<()> {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(session, keymap, no_color);
    app.session.progress = Some(Box::new(progress));
    let mut term = terminal::enter()?;
    // In the terminal already, so that a long movement shows its progress and Ctrl-C stops it.
    for script in scripts {
        app.run_command(&format!("source {}", script.display()));
    }
    let result = (|| -> anyhow::Result<()> {
        while !app.quit {
            term.draw(|f| {
                let area = f.area();
                view::render(&app, area, f.buffer_mut());
            })?;
            match event::read()? {
                Event::Key(k) if k.kind == KeyEventKind::Press => handle_key(&mut app, k),
                Event::Resize(_, _) => term.autoresize()?,
                _ => {}
            }
        }
        Ok(())
    })();
    terminal::restore();
    result
}
