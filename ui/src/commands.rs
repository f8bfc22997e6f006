//! The non-interactive commands. Exit codes: 0 success, 1 diagnostics or failed commands,
//! 2 bad launch file or arguments, 3 the kernel faulted.

use std::path::Path;
use std::time::Instant;

use vdb::asm::{parse_files_with_warnings, ParseOptions};
use vdb::exec::{run_to_end, Interpreter, NullObserver};
use vdb::launch::raw;
use vdb::program::SourceFile;

pub const EXIT_OK: u8 = 0;
pub const EXIT_DIAGNOSTICS: u8 = 1;
pub const EXIT_BAD_LAUNCH: u8 = 2;
pub const EXIT_FAULT: u8 = 3;

fn read_source(path: &Path) -> Result<SourceFile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Ok(SourceFile { path: path.display().to_string(), text: String::from_utf8_lossy(&bytes).into_owned() })
}

/// Loads a launch file into a new session (errors printed; the exit code returned).
pub fn open_session(launch_path: &Path) -> Result<vdb::session::Session, u8> {
    match raw::load(launch_path) {
        Ok(l) => Ok(vdb::session::Session::new(l)),
        Err(e) => {
            eprintln!("error: {e}");
            Err(EXIT_BAD_LAUNCH)
        }
    }
}

/// `vdb check`.
pub fn check(files: &[std::path::PathBuf], separately: bool, grf_size: u32) -> u8 {
    if files.is_empty() {
        eprintln!("vdb check: give at least one .visaasm file");
        return EXIT_BAD_LAUNCH;
    }
    let mut sources = Vec::new();
    for path in files {
        match read_source(path) {
            Ok(s) => sources.push(s),
            Err(e) => {
                eprintln!("{e}");
                return EXIT_DIAGNOSTICS;
            }
        }
    }
    let groups: Vec<Vec<SourceFile>> =
        if separately { sources.into_iter().map(|s| vec![s]).collect() } else { vec![sources] };
    let mut failed = false;
    for group in groups {
        let (program, diags) = parse_files_with_warnings(group, &ParseOptions { grf_size });
        let rendered = diags.render();
        if !rendered.is_empty() {
            eprint!("{rendered}");
        }
        failed |= diags.has_errors() || program.is_none();
        if let Some(p) = program {
            let n = p.insts.len() - p.units.len();
            println!("ok: {} ({} instructions, {} variables)", p.kernel().name, n, p.vars.len());
        }
    }
    if failed {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

/// `vdb run`.
pub fn run(launch_path: &Path, out: Option<&Path>, stats: bool) -> u8 {
    let started = Instant::now();
    let mut launch = match raw::load(launch_path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_LAUNCH;
        }
    };
    let interp = Interpreter::new(launch.program.clone());
    let result = run_to_end(&interp, &mut launch.machine, &mut launch.scheduler, &mut NullObserver);
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let dir = out.map(Path::to_path_buf).unwrap_or_else(|| launch.base_dir.clone());
    let code = match &result {
        Ok(summary) => {
            println!(
                "finished: {} thread(s), {} instructions ({} lane-operations) in {:.1} ms",
                launch.machine.threads.len(),
                summary.steps,
                summary.lane_ops,
                wall_ms
            );
            EXIT_OK
        }
        Err(fault) => {
            let (group, index) =
                launch.thread_labels.get(fault.thread.0 as usize).copied().unwrap_or_default();
            eprintln!("{}", fault.render(&launch.program));
            eprintln!(
                "  (work-group {group:?}, thread {index} of the group, after {} instructions)",
                launch.scheduler.steps
            );
            EXIT_FAULT
        }
    };
    match raw::write_outputs(&launch.program, &launch.machine, &launch.outputs, &dir) {
        Ok(paths) => {
            for p in paths {
                println!("wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_LAUNCH.max(code);
        }
    }
    if stats {
        let line = serde_json::json!({
            "threads": launch.machine.threads.len(),
            "instructions": launch.scheduler.steps,
            "steps": launch.scheduler.steps,
            "wall_ms": wall_ms,
        });
        println!("{line}");
    }
    code
}
