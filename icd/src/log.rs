//! Messages to the host program's stderr, each starting `vdb:`; calls vdb does not implement
//! are named once each.

use std::sync::Mutex;

use crate::dispatch_gen::{SLOT_COUNT, SLOT_NAMES};

static REPORTED: Mutex<[bool; SLOT_COUNT]> = Mutex::new([false; SLOT_COUNT]);

/// A line on stderr.
pub fn warn(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "vdb: {message}");
}

/// Called by the stub of dispatch slot `slot`: names the call the first time.
pub fn not_implemented(slot: usize) {
    let mut seen = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(flag) = seen.get_mut(slot).filter(|f| !**f) {
        *flag = true;
        let name = SLOT_NAMES.get(slot).copied().unwrap_or("?");
        warn(&format!("{name} is not implemented by vdb (it returned an error)"));
    }
}

/// A call that is implemented but not for these arguments, named once per message.
pub fn unsupported(what: &str) {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|s| s == what) {
        seen.push(what.to_string());
        warn(&format!("{what} is not supported by vdb (it returned an error)"));
    }
}
