//! Messages to the host program's stderr, each starting `vdb:`; calls vdb does not implement
//! are named once each.

use std::sync::Mutex;

/// A line on stderr.
pub fn warn(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "vdb: {message}");
}

/// Called by the stub of a dispatch slot: names the call the first time.
pub fn not_implemented(call: &str) {
    once(format!("{call} is not implemented by vdb (it returned an error)"));
}

/// A call that is implemented but not for these arguments, named once per message.
pub fn unsupported(what: &str) {
    once(format!("{what} is not supported by vdb (it returned an error)"));
}

/// `message` on stderr, unless it was written before.
fn once(message: String) {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&message) {
        warn(&message);
        seen.push(message);
    }
}
