//! Drives the real `vdb` binary in a pseudo-terminal (no tmux needed): step forward, step
//! back, type a command, quit — reading the screen through a terminal emulator.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

struct Screen {
    parser: vt100::Parser,
    rx: mpsc::Receiver<Vec<u8>>,
}

impl Screen {
    /// Feeds output until `needle` shows on screen (or fails after a timeout).
    fn wait_for(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.parser.screen().contents();
            if text.contains(needle) {
                return text;
            }
            if Instant::now() > deadline {
                panic!("`{needle}` never appeared; screen:\n{text}");
            }
            if let Ok(bytes) = self.rx.recv_timeout(Duration::from_millis(50)) {
                self.parser.process(&bytes);
            }
        }
    }
}

/// The real `vdb` in a 44x140 pseudo-terminal with `args`, run from the repository root.
struct Vdb {
    screen: Screen,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
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
        Vdb { screen: Screen { parser: vt100::Parser::new(44, 140, 0), rx }, writer, child }
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write");
        self.writer.flush().expect("flush");
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
    vdb.screen.wait_for("step 0 of 0");
    vdb.send("sss");
    let text = vdb.screen.wait_for("step 3 of 3");
    assert!(text.contains("Registers"), "{text}");
    vdb.send("S");
    vdb.screen.wait_for("step 2 of 3");
    vdb.send(":print LANE\r");
    let text = vdb.screen.wait_for("LANE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]");
    assert!(text.contains("(vdb) print LANE"), "{text}");
    vdb.quit();
}

/// `vdb -x FILE` runs FILE's commands when the debugger opens: here a breakpoint and a
/// `continue`, whose stop the status bar shows before any key is pressed.
#[test]
fn command_files_run_when_the_debugger_opens() {
    let dir = std::env::temp_dir().join(format!("vdb-pty-{}", std::process::id()));
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
