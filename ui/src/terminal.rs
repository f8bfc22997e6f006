//! The real terminal: raw mode and the alternate screen on entry, restored on every exit
//! path, including a panic and a signal from another process (SIGTERM, SIGHUP, SIGINT,
//! SIGQUIT).

use std::io::{self, Stdout};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Once};

use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// The signals that would otherwise kill vdb with the terminal still raw, on the alternate
/// screen, the cursor hidden. In raw mode a Ctrl-C keypress is a key, not SIGINT: a SIGINT
/// here comes from another process (`kill -INT`).
const FATAL_SIGNALS: [i32; 4] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT];

/// Leaves raw mode and the alternate screen (safe to call more than once).
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
}

/// Enters the full-screen mode, with a panic hook and a signal watcher that restore the
/// terminal first.
pub fn enter() -> io::Result<Term> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    // Before raw mode, so that no signal finds the terminal raw without a watcher.
    restore_on_signals();
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen)?;
    Terminal::new(CrosstermBackend::new(io::stdout()))
}

/// Catches FATAL_SIGNALS and, on the first one, restores the terminal and exits with
/// 128 + the signal's number (what a shell reports for a process the signal killed).
///
/// A signal handler may do next to nothing safely, so the handler only wakes a thread
/// (signal-hook's self-pipe) and the restoring happens there. Installed once per process;
/// if the signals cannot be caught, they keep their default action (vdb dies as before).
fn restore_on_signals() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let Ok(mut signals) = Signals::new(FATAL_SIGNALS) else { return };
        let watcher = std::thread::Builder::new().name("vdb-signals".into()).spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Holding stdout's lock until the exit keeps the UI thread from drawing
                // again after the terminal is restored (the lock is reentrant, so
                // `restore` can take it too; exit's own flush only tries the lock).
                let _hold = io::stdout().lock();
                restore();
                std::process::exit(128 + signal);
            }
        });
        if watcher.is_err() {
            // No thread to act on them (and dropping `signals` would leave them ignored):
            // let them kill vdb as they did before, terminal or not.
            let always = Arc::new(AtomicBool::new(true));
            for signal in FATAL_SIGNALS {
                let _ = signal_hook::flag::register_conditional_default(signal, Arc::clone(&always));
            }
        }
    });
}
