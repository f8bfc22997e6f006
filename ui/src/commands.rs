//! The non-interactive commands. Exit codes: 0 success, 1 diagnostics or failed commands (or
//! a recording cut short by its budget), 2 bad launch file or arguments, 3 the kernel faulted.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Instant;

use vdb::asm::{parse_files_with_warnings, ParseOptions};
use vdb::exec::{run_split, run_to_end, Interpreter, NullObserver};
use vdb::launch::raw;
use vdb::program::SourceFile;

use crate::launchfile::{LaunchInput, SourceFlags};
use vdb::exec::Schedule;

pub const EXIT_OK: u8 = 0;
pub const EXIT_DIAGNOSTICS: u8 = 1;
pub const EXIT_BAD_LAUNCH: u8 = 2;
pub const EXIT_FAULT: u8 = 3;

fn read_source(path: &Path) -> Result<SourceFile, String> {
    let bytes = vdb::launch::raw::read_file(path, vdb::launch::raw::MAX_TEXT_FILE)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Ok(SourceFile { path: path.display().to_string(), text: String::from_utf8_lossy(&bytes).into_owned() })
}

/// Cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Loads a launch file (or kernel, or source launch) into a new session with recording
/// budget `budget` (half of memory when None; errors printed; the exit code returned).
pub fn open_session(launch_path: &Path, budget: Option<u64>) -> Result<vdb::session::Session, u8> {
    open_input(&resolve_input(launch_path, &SourceFlags::default(), Schedule::default())?, budget)
}

/// What `path` and the command-line launch flags open (a source launch compiled), to run
/// under `schedule`; errors printed, exit code 2 returned.
pub fn resolve_input(path: &Path, flags: &SourceFlags, schedule: Schedule) -> Result<LaunchInput, u8> {
    match crate::launchfile::resolve(path, flags) {
        Ok(mut input) => {
            input.schedule = schedule;
            Ok(input)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(EXIT_BAD_LAUNCH)
        }
    }
}

/// [`open_session`] of a resolved launch.
pub fn open_input(input: &LaunchInput, budget: Option<u64>) -> Result<vdb::session::Session, u8> {
    load(input).map(|l| new_session(l, cores(), budget))
}

/// `input` loaded, or its error printed and exit code 2.
fn load(input: &LaunchInput) -> Result<raw::Launch, u8> {
    input.load(None).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_BAD_LAUNCH
    })
}

/// `--keep-log`, as the command line gave it (read by every session opened).
pub static KEEP_LOG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A session on `launch` as every front end sets it up: the recording budget (`budget`, or
/// half of memory), recording on `cores` cores, lean unless `--keep-log`.
fn new_session(launch: raw::Launch, cores: usize, budget: Option<u64>) -> vdb::session::Session {
    let mut session = vdb::session::Session::new(launch);
    session.record_limit = budget.unwrap_or_else(half_of_memory);
    session.cores = cores;
    session.lean_recording = !KEEP_LOG.load(std::sync::atomic::Ordering::Relaxed);
    session
}

/// The GRF size of a program whose files name no platform, from another dump of the same
/// compilation beside them (`OCL_asm<hash>_…`: IGC writes a `.inline.visaasm` without the
/// `//Platform:` line its plain dump has).
fn sibling_platform_grf(paths: &[std::path::PathBuf], group: &[SourceFile]) -> Option<u32> {
    if group.iter().any(|f| vdb::asm::platform_of(&f.text).is_some()) {
        return None;
    }
    let path = paths.iter().find(|p| group.iter().any(|f| f.path == p.display().to_string()))?;
    let name = path.file_name()?.to_str()?;
    let hash_end = name.find("asm")? + 3 + name[name.find("asm")? + 3..].find('_')?;
    let prefix = &name[..hash_end];
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let siblings = std::fs::read_dir(dir).ok()?;
    siblings.filter_map(Result::ok).find_map(|e| {
        let n = e.file_name();
        let n = n.to_str()?;
        if !n.starts_with(prefix) || !n.ends_with(".visaasm") || n == name {
            return None;
        }
        let text = vdb::launch::raw::read_text(&e.path()).ok()?;
        vdb::asm::platform_of(&text).and_then(vdb::asm::grf_size_of_platform)
    })
}

/// `vdb check`.
pub fn check(
    files: &[std::path::PathBuf],
    separately: bool,
    grf_size: Option<u32>,
    platform: Option<&str>,
) -> u8 {
    if files.is_empty() {
        eprintln!("vdb check: give at least one .visaasm file");
        return EXIT_BAD_LAUNCH;
    }
    let from_platform = match platform.map(|p| (p, vdb::asm::grf_size_of_platform(p))) {
        Some((p, None)) => {
            eprintln!("vdb check: unknown platform `{p}` (skl, tgllp, acm-g10, pvc, xe2, bmg, lnl, …)");
            return EXIT_BAD_LAUNCH;
        }
        Some((_, size)) => size,
        None => None,
    };
    // 0: each program's own `//Platform:` line decides.
    let grf_size = grf_size.or(from_platform).unwrap_or(0);
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
        let grf_size = match grf_size {
            0 => sibling_platform_grf(files, &group).unwrap_or(0),
            n => n,
        };
        let (program, diags) = parse_files_with_warnings(group, &ParseOptions { grf_size });
        let rendered = diags.render();
        if !rendered.is_empty() {
            eprint!("{rendered}");
        }
        failed |= diags.has_errors() || program.is_none();
        if let Some(p) = program {
            let n = p.insts.len() - p.units.len();
            say!("ok: {} ({} instructions, {} variables)", p.kernel().name, n, p.vars.len());
        }
    }
    if failed {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

/// The default recording budget: half of physical memory (4 GiB when it cannot be read).
pub fn half_of_memory() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    total.map_or(vdb::session::DEFAULT_RECORD_LIMIT, |kib| kib * 1024 / 2)
}

/// Peak resident memory of this process in bytes (Linux), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// `vdb run`.
pub fn run(
    input: &LaunchInput,
    out: Option<&Path>,
    stats: bool,
    record: bool,
    jobs: NonZeroUsize,
    budget: Option<u64>,
) -> u8 {
    let started = Instant::now();
    let launch = match load(input) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let threads = launch.machine.threads.len();
    let dir = out.map(Path::to_path_buf).unwrap_or_else(|| launch.base_dir.clone());
    if let Err(e) = raw::check_outputs(&launch.outputs, &dir, &input.label()) {
        eprintln!("error: {e}");
        return EXIT_BAD_LAUNCH;
    }
    let mut budget_stop = None;
    let geometry = launch.geometry.clone();
    // How the plain run shared its groups over the cores, for `--stats`.
    let mut sharing = None;
    let (program, machine, outputs, steps, lane_ops, fault, recorded) = if record {
        let mut session = new_session(launch, jobs.get(), budget);
        let stop = session.run_to_end();
        let fault = match &session.end {
            Some(vdb::session::EndState::Fault(f)) => Some(f.clone()),
            _ => None,
        };
        if let vdb::session::StopReason::RecordLimit { bytes } = stop {
            budget_stop = Some(bytes);
        }
        let steps = session.total_steps();
        let lane_ops = session.recorder.trace.lane_ops();
        let recorded = session.recorder.recorded_bytes_by_part();
        let (program, machine, outputs) =
            (session.program.clone(), session.machine.clone(), session.outputs.clone());
        // The recording is not looked at again and the process is about to exit: freeing
        // it piece by piece (thousands of checkpoints, each sharing threads) would only
        // delay the exit.
        std::mem::forget(session);
        (program, machine, outputs, steps, lane_ops, fault, Some(recorded))
    } else {
        let mut launch = launch;
        // Nothing reads a finished thread after a plain run unless an output is a register.
        let release = !launch.outputs.iter().any(|o| matches!(o.source, raw::OutputSource::Register(_)));
        launch.scheduler.release_finished = release;
        let interp = Interpreter::new(launch.program.clone());
        let program = launch.program.clone();
        // Bursts and cores reproduce the round-robin schedule only; the others run step by step.
        let split = if launch.scheduler.bursts_allowed() {
            run_split(&interp, &mut launch.machine, &mut launch.scheduler, jobs)
        } else {
            None
        };
        let result = match split {
            Some(split) => {
                sharing = Some(serde_json::json!({
                    "cores": split.cores,
                    "groups_elsewhere": split.groups_elsewhere,
                    "refused_at_group": split.refused_at,
                }));
                Ok(split.summary)
            }
            None if !launch.scheduler.bursts_allowed() => {
                run_to_end(&interp, &mut launch.machine, &mut launch.scheduler, &mut NullObserver)
            }
            // A fault or the step limit: run again under the exact scheduler to report it
            // as stepping would (rebuilding the start state costs less than keeping a copy).
            None => match input.load(Some(&program)) {
                Ok(fresh) => {
                    launch = fresh;
                    run_to_end(&interp, &mut launch.machine, &mut launch.scheduler, &mut NullObserver)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_BAD_LAUNCH;
                }
            },
        };
        let (lane_ops, fault) = match result {
            Ok(summary) => (summary.lane_ops, None),
            Err(f) => (launch.scheduler.lane_ops, Some(f)),
        };
        (launch.program, launch.machine, launch.outputs, launch.scheduler.steps, lane_ops, fault, None)
    };
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let code = match (&fault, budget_stop) {
        (None, Some(bytes)) => {
            eprintln!(
                "stopped at the recording budget after {steps} instructions ({bytes} bytes recorded; \
                 --record-limit sets it): the outputs hold memory as it was there"
            );
            EXIT_DIAGNOSTICS
        }
        (None, None) => {
            say!(
                "finished: {threads} thread(s), {steps} instructions ({lane_ops} lane-operations) in {wall_ms:.1} ms"
            );
            EXIT_OK
        }
        (Some(fault), _) => {
            eprintln!("{}", fault.render_in(&program, geometry.as_ref()));
            eprintln!("  (thread {}, after {steps} instructions)", fault.thread.0);
            EXIT_FAULT
        }
    };
    let over_reads = &machine.svm.over_reads;
    if let Some(first) = &over_reads.first {
        let inst = program.inst(vdb::isa::InstIdx(first.inst));
        let file = program.files.get(inst.span.file.0 as usize).map_or("?", |f| f.path.as_str());
        let buffer = machine
            .svm
            .regions()
            .iter()
            .find(|r| r.start == first.buffer_start)
            .map_or("?", |r| r.name.as_str());
        say!(
            "note: {} compiler over-read(s) past a buffer's end, read as zeros (buffers are mapped in \
             whole 4 KiB pages, as the driver allocates them); the first: {}:{} ($id {}), thread {}, \
             {} bytes at {:#x}, past the {}-byte buffer `{buffer}`",
            over_reads.count,
            file,
            inst.span.line,
            inst.id,
            first.thread,
            first.len,
            first.addr,
            first.buffer_len
        );
    }
    match raw::write_outputs(&program, &machine, &outputs, &dir) {
        Ok(paths) => {
            for p in paths {
                say!("wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_LAUNCH.max(code);
        }
    }
    if stats {
        let mut line = serde_json::json!({
            "threads": threads, "instructions": steps, "steps": steps, "lane_ops": lane_ops,
            "wall_ms": wall_ms, "peak_rss": peak_rss(), "over_reads": machine.svm.over_reads.count,
        });
        if let Some(sharing) = sharing {
            line["sharing"] = sharing;
        }
        if let Some(parts) = recorded {
            let bytes = parts.total();
            line["recorded_bytes"] = serde_json::json!(bytes);
            line["recorded"] = serde_json::json!(parts);
            line["bytes_per_step"] = serde_json::json!(bytes as f64 / steps.max(1) as f64);
        }
        say!("{line}");
    }
    code
}

/// The output buffers of `launch` run to the end under `schedule` (from a copy of its start:
/// copy-on-write, so each run copies only what it writes), on up to `jobs` cores where the
/// schedule allows it, or the fault that stopped it.
fn outputs_under(
    launch: &raw::Launch,
    interp: &Interpreter,
    schedule: Schedule,
    jobs: NonZeroUsize,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
    sched.set_schedule(schedule);
    vdb::exec::run_to_end_on(interp, &mut machine, &mut sched, jobs)
        .map_err(|f| f.render(&launch.program).lines().next().unwrap_or_default().to_string())?;
    let mut out = Vec::new();
    for o in &launch.outputs {
        if let raw::OutputSource::Svm { address, size } = o.source {
            let mut bytes = vec![0u8; size as usize];
            machine.svm.read(address, &mut bytes).map_err(|e| e.to_string())?;
            out.push((o.path.clone(), bytes));
        }
    }
    Ok(out)
}

/// What differs between the round-robin outputs `want` and a seed's `got`, if anything.
fn differences(want: &[(String, Vec<u8>)], got: &[(String, Vec<u8>)]) -> Option<String> {
    let diffs: Vec<String> = want
        .iter()
        .zip(got)
        .filter_map(|((name, want), (_, have))| {
            let differ: Vec<usize> = (0..want.len()).filter(|&i| want.get(i) != have.get(i)).collect();
            let &first = differ.first()?;
            Some(format!(
                "{name}: {} of {} bytes differ, the first at +{first:#x} (round-robin {:#04x}, this seed {:#04x})",
                differ.len(),
                want.len(),
                want[first],
                have.get(first).copied().unwrap_or(0)
            ))
        })
        .collect();
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

/// `vdb run --check races|uninit|all`.
pub fn check_run(input: &LaunchInput, stats: bool, what: Option<&str>) -> u8 {
    let (races, uninit) = match what {
        Some("races") => (true, false),
        Some("uninit") => (false, true),
        _ => (true, true),
    };
    let started = Instant::now();
    let mut launch = match load(input) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let interp = Interpreter::new(launch.program.clone());
    let run = vdb::races::check_races(&interp, &mut launch.machine, &mut launch.scheduler);
    let geometry = launch.geometry.as_ref();
    let (found_races, found_uninit) =
        (if races { &run.races[..] } else { &[] }, if uninit { &run.uninit[..] } else { &[] });
    for race in found_races {
        say!("{}", race.render(&launch.program, geometry));
    }
    for read in found_uninit {
        say!("{}", read.render(&launch.program, geometry));
    }
    let pairs: u64 = found_races.iter().map(|r| r.count).sum();
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut summary = Vec::new();
    if races {
        summary.push(format!("{} race report(s) ({pairs} racing pairs of accesses)", found_races.len()));
    }
    if uninit {
        summary.push(format!("{} uninitialised-read report(s)", found_uninit.len()));
    }
    say!("{} in {} instructions, checked in {wall_ms:.1} ms", summary.join(", "), run.steps);
    if stats {
        let mut line = serde_json::json!({ "steps": run.steps, "wall_ms": wall_ms });
        if races {
            line["races"] = found_races.len().into();
            line["racing_pairs"] = pairs.into();
        }
        if uninit {
            line["uninit_reads"] = found_uninit.len().into();
        }
        say!("{line}");
    }
    if let Some(fault) = &run.fault {
        eprintln!("{}", fault.render_in(&launch.program, geometry));
        eprintln!("  (the check covers the {} instructions before it)", run.steps);
        return EXIT_FAULT;
    }
    if found_races.is_empty() && found_uninit.is_empty() {
        EXIT_OK
    } else {
        EXIT_DIAGNOSTICS
    }
}

/// `vdb run --schedules N`: the outputs under round-robin against those under chaos seeds
/// 1..=N; each seed that differs is named with what differs. Exit 1 if any differs.
pub fn compare_schedules(input: &LaunchInput, seeds: u64, jobs: NonZeroUsize) -> u8 {
    let launch = match load(input) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let interp = Interpreter::new(launch.program.clone());
    let reference = match outputs_under(&launch, &interp, Schedule::RoundRobin, jobs) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: under round-robin: {e}");
            return EXIT_BAD_LAUNCH;
        }
    };
    // The seeds run side by side, one a core (a chaos run goes step by step on one), and are
    // reported in order as they finish.
    let next = std::sync::atomic::AtomicU64::new(1);
    let (done, results) = std::sync::mpsc::channel::<(u64, Option<String>)>();
    let mut differing = 0;
    std::thread::scope(|scope| {
        for _ in 0..jobs.get().min(seeds.try_into().unwrap_or(usize::MAX)) {
            let (next, done, launch, interp, reference) = (&next, done.clone(), &launch, &interp, &reference);
            scope.spawn(move || loop {
                let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if seed > seeds {
                    break;
                }
                let what = match outputs_under(launch, interp, Schedule::Chaos { seed }, NonZeroUsize::MIN) {
                    Err(e) => Some(format!("faulted: {e}")),
                    Ok(got) => differences(reference, &got),
                };
                if done.send((seed, what)).is_err() {
                    break;
                }
            });
        }
        drop(done);
        let mut waiting = std::collections::BTreeMap::new();
        let mut due = 1;
        for (seed, what) in results {
            waiting.insert(seed, what);
            while let Some(what) = waiting.remove(&due) {
                match what {
                    Some(w) => {
                        differing += 1;
                        say!("seed {due}: {w}");
                    }
                    None => say!("seed {due}: same outputs"),
                }
                due += 1;
            }
        }
    });
    say!(
        "{differing} of {seeds} chaos seeds give outputs other than round-robin's{}",
        if differing > 0 { " (rerun one with --schedule chaos --seed N to debug it)" } else { "" }
    );
    if differing > 0 {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}
