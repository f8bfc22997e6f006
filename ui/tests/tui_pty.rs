//! Drives the real `vdb` binary in a pseudo-terminal (no tmux needed): step forward, step
//! back, type a command, quit — reading the screen through a terminal emulator; `q` stopping
//! a long movement; the terminal restored when another process kills vdb with a signal.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, ExitStatus, MasterPty, PtySize};

struct Screen {
    parser: vt100::Parser,
    rx: mpsc::Receiver<Vec<u8>>,
    /// Every byte vdb wrote so far, escape sequences included.
    raw: Vec<u8>,
}

impl Screen {
    fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
        self.raw.extend_from_slice(bytes);
    }

    /// Feeds output until `needle` shows on screen (or fails after a timeout).
    fn wait_for(&mut self, needle: &str) -> String {
        self.wait_until(&format!("`{needle}` on screen"), |screen| screen.contents().contains(needle));
        self.parser.screen().contents()
    }

    /// Feeds output until `done` holds for the screen (or fails after a timeout).
    fn wait_until(&mut self, what: &str, done: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(self.parser.screen()) {
            if Instant::now() > deadline {
                panic!("never got {what}; screen:\n{}", self.parser.screen().contents());
            }
            if let Ok(bytes) = self.rx.recv_timeout(Duration::from_millis(50)) {
                self.feed(&bytes);
            }
        }
    }
}

/// The real `vdb` in a 44x140 pseudo-terminal with `args`, run from the repository root.
struct Vdb {
    screen: Screen,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Kept open so that the terminal's settings can still be read once vdb has exited.
    _master: Box<dyn MasterPty + Send>,
}

/// A test that fails midway must not leave vdb running.
impl Drop for Vdb {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

impl Vdb {
    fn spawn(args: &[&str]) -> Vdb {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("root").to_path_buf();
        let pty = native_pty_system();
        let pair =
            pty.openpty(PtySize { rows: 44, cols: 140, pixel_width: 0, pixel_height: 0 }).expect("pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_vdb"));
        cmd.args(args);
        cmd.cwd(&root);
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).expect("spawn vdb");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let screen = Screen { parser: vt100::Parser::new(44, 140, 0), rx, raw: Vec::new() };
        Vdb { screen, writer, child, _master: pair.master }
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write");
        self.writer.flush().expect("flush");
    }

    /// The terminal device vdb runs on (`/dev/pts/N`).
    fn tty(&self) -> std::path::PathBuf {
        let pid = self.child.process_id().expect("pid");
        std::fs::read_link(format!("/proc/{pid}/fd/0")).expect("vdb's terminal")
    }

    /// Sends `signal` (`TERM`, `HUP`, ...) to vdb as another process would.
    fn kill(&self, signal: &str) {
        let pid = self.child.process_id().expect("pid");
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid} failed");
    }

    /// Waits for vdb to exit, reading everything it wrote until then.
    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                // The reader ends when the last writer to the terminal is gone.
                while let Ok(bytes) = self.screen.rx.recv_timeout(Duration::from_secs(2)) {
                    self.screen.feed(&bytes);
                }
                return status;
            }
            assert!(Instant::now() < deadline, "vdb did not exit");
            if let Ok(bytes) = self.screen.rx.recv_timeout(Duration::from_millis(20)) {
                self.screen.feed(&bytes);
            }
        }
    }

    /// `q`, and vdb exits with success.
    fn quit(mut self) {
        self.send("q");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "vdb exited with {status:?}");
                break;
            }
            assert!(Instant::now() < deadline, "vdb did not quit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn step_forward_back_command_and_quit_in_a_real_terminal() {
    let mut vdb = Vdb::spawn(&["sample-kernels/hand/nested_divergence.launch.json"]);
    vdb.screen.wait_for("step 0 (0 recorded so far)");
    vdb.send("sss");
    let text = vdb.screen.wait_for("step 3 of 25 (run complete)");
    assert!(text.contains("Registers"), "{text}");
    vdb.send("S");
    vdb.screen.wait_for("step 2 of 25 (run complete)");
    vdb.send(":print LANE\r");
    let text = vdb.screen.wait_for("LANE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]");
    assert!(text.contains("(vdb) print LANE"), "{text}");
    vdb.quit();
}

/// `vdb -x FILE` runs FILE's commands when the debugger opens: here a breakpoint and a
/// `continue`, whose stop the status bar shows before any key is pressed.
#[test]
fn command_files_run_when_the_debugger_opens() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pty-setup");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let script = dir.join("setup.vdb");
    std::fs::write(&script, "# stop where lanes rejoin\nbreak $13\ncontinue\n").expect("script");
    let path = script.to_string_lossy().into_owned();
    let mut vdb = Vdb::spawn(&["-x", &path, "sample-kernels/hand/nested_divergence.launch.json"]);
    vdb.screen.wait_for("stop: breakpoint 1");
    // The source pane is at the breakpoint.
    vdb.screen.wait_for("▶  $13");
    vdb.quit();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that never ends: `continue` runs until stopped (or the recording budget).
const SPIN: &str = "\
.version 4.1
.kernel \"spin\"
.decl R v_type=G type=d num_elts=16 align=hword
.decl P1 v_type=P num_elts=16
.kernel_attr Target=\"3d\"
.kernel_attr SimdSize=16
.function \"_main_0\"

_main_0:
    mov (M1, 16) R(0,0)<1> 0x0:d
LOOP:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    cmp.eq (M1, 16) P1 R(0,0)<1;1,0> R(0,0)<1;1,0>
    (P1) goto (M1, 16) LOOP
    ret (M1, 1)
";

/// `q` during a long `continue` stops it as Ctrl-C does: vdb stays open on what was
/// recorded (the progress line gone), and a second `q` quits.
#[test]
fn q_or_ctrl_c_stops_a_long_movement() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pty-spin");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kernel = dir.join("spin.visaasm");
    std::fs::write(&kernel, SPIN).expect("kernel");
    let path = kernel.to_string_lossy().into_owned();
    // The budget only bounds a failing test: at its end the run would stop by itself.
    let mut vdb = Vdb::spawn(&["--record-limit", "1G", &path]);
    vdb.screen.wait_for("step 0 (0 recorded so far)");
    let status_line = |s: &vt100::Screen| s.contents().lines().next().unwrap_or_default().to_string();
    for (stop, name) in [("q", "q"), ("\x03", "Ctrl-C")] {
        let before = status_line(vdb.screen.parser.screen());
        vdb.send("c");
        let text = vdb.screen.wait_for("running…");
        assert!(text.contains("q or Ctrl-C stops"), "{text}");
        vdb.send(stop);
        vdb.screen.wait_until(&format!("the run stopped by {name}"), |s| {
            let status = status_line(s);
            status != before && status.contains("stop: interrupted") && !s.contents().contains("running…")
        });
    }
    vdb.quit();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Another process sends `signal` (number `number`) to vdb: it leaves the alternate screen,
/// shows the cursor, takes the terminal out of raw mode, and exits with 128 + `number`.
fn restores_the_terminal_when_killed_by(signal: &str, number: u32) {
    let mut vdb = Vdb::spawn(&["sample-kernels/hand/loop_exit.launch.json"]);
    vdb.screen.wait_for("step 0 (0 recorded so far)");
    // The cursor is hidden after the first frame is drawn.
    vdb.screen.wait_until("the TUI full-screen", |s| s.alternate_screen() && s.hide_cursor());
    let tty = vdb.tty();
    assert!(stty(&tty).contains(&"-icanon".to_string()), "the tty is not raw under the TUI");
    let before = vdb.screen.raw.len();
    vdb.kill(signal);
    let status = vdb.wait_exit();
    assert_eq!(status.exit_code(), 128 + number, "SIG{signal}: {status:?}");

    let after = &vdb.screen.raw[before..];
    let has = |needle: &[u8]| after.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"\x1b[?1049l"), "SIG{signal}: no leave-alternate-screen in {after:?}");
    assert!(has(b"\x1b[?25h"), "SIG{signal}: no show-cursor in {after:?}");
    let screen = vdb.screen.parser.screen();
    assert!(!screen.alternate_screen(), "SIG{signal}: still on the alternate screen");
    assert!(!screen.hide_cursor(), "SIG{signal}: the cursor is still hidden");

    // Raw mode turns these off; the settings vdb found (the pty's defaults) have them on.
    let settings = stty(&tty);
    for flag in ["icanon", "echo", "isig"] {
        assert!(
            settings.contains(&flag.to_string()),
            "SIG{signal}: `{flag}` still off, the tty is raw: {settings:?}"
        );
    }
}

/// The settings of terminal `tty` as `stty -a` lists them (`icanon`, or `-icanon` when off).
fn stty(tty: &Path) -> Vec<String> {
    let out = std::process::Command::new("stty").arg("-a").arg("-F").arg(tty).output().expect("stty");
    assert!(out.status.success(), "stty -F {}: {}", tty.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn sigterm_restores_the_terminal() {
    restores_the_terminal_when_killed_by("TERM", 15);
}

#[test]
fn sighup_restores_the_terminal() {
    restores_the_terminal_when_killed_by("HUP", 1);
}

#[test]
fn sigint_and_sigquit_from_another_process_restore_the_terminal() {
    restores_the_terminal_when_killed_by("INT", 2);
    restores_the_terminal_when_killed_by("QUIT", 3);
}
