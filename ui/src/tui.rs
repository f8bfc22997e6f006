//! The interactive loop: draw, read a key, turn it into an action, update; long movements
//! report progress on the bottom line and stop on `q` or Ctrl-C, keeping what was recorded.

use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use crate::app::App;
use crate::keymap::{Key, Keymap};
use crate::{terminal, view};

/// Progress line and stop check during a long run (called every few thousand steps): `q` or
/// Ctrl-C stops it; other keys pressed meanwhile are dropped.
fn progress(now: u64, total: u64) -> bool {
    let (_, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let mut out = std::io::stdout();
    let _ = crossterm::queue!(
        out,
        crossterm::cursor::MoveTo(0, rows.saturating_sub(1)),
        crossterm::style::Print(format!("running… step {now} ({total} recorded) — q or Ctrl-C stops   "))
    );
    let _ = out.flush();
    while event::poll(Duration::ZERO).unwrap_or(false) {
        if let Ok(Event::Key(k)) = event::read() {
            if stops_movement(k) {
                return true;
            }
        }
    }
    false
}

/// Whether `key` stops a long movement: Ctrl-C, or a plain `q` (the quit key; it only stops
/// the movement, keeping what was recorded, and a second `q` quits).
fn stops_movement(key: event::KeyEvent) -> bool {
    if key.kind != KeyEventKind::Press {
        return false;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('c') => ctrl,
        KeyCode::Char('q') => !ctrl && !key.modifiers.contains(KeyModifiers::ALT),
        _ => false,
    }
}

/// Handles one key press.
pub fn handle_key(app: &mut App, key: event::KeyEvent) {
    if app.prompt.is_some() {
        app.prompt_key(key);
        return;
    }
    if app.jumps.is_some() {
        app.jump_key(key.code);
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
    // The progress line is written past ratatui, which does not know those cells changed:
    // after a movement that showed it, the next frame is drawn whole.
    let progress_shown = Rc::new(Cell::new(false));
    let shown = Rc::clone(&progress_shown);
    app.session.progress = Some(Box::new(move |now, total| {
        shown.set(true);
        progress(now, total)
    }));
    let mut term = terminal::enter()?;
    // In the terminal already, so that a long movement shows its progress and `q` or Ctrl-C
    // stops it.
    for script in scripts {
        app.run_command(&format!("source {}", script.display()));
    }
    let result = (|| -> anyhow::Result<()> {
        while !app.quit {
            if progress_shown.replace(false) {
                term.clear()?;
            }
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

#[cfg(test)]
mod tests {
    use super::stops_movement;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn q_and_ctrl_c_stop_a_movement_other_keys_do_not() {
        let key = |code, modifiers| stops_movement(KeyEvent::new(code, modifiers));
        assert!(key(KeyCode::Char('q'), KeyModifiers::NONE));
        assert!(key(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(!key(KeyCode::Char('c'), KeyModifiers::NONE));
        assert!(!key(KeyCode::Char('s'), KeyModifiers::NONE));
        assert!(!key(KeyCode::Char('Q'), KeyModifiers::SHIFT));
        assert!(!key(KeyCode::Char('q'), KeyModifiers::ALT));
    }
}
