//! Real OpenCL launches end to end: every launch file under sample-kernels/opencl and
//! sample-kernels/shared (IGC-compiled for skl, tgllp and acm-g10) runs every thread of every
//! work-group and its output buffers equal pocl's, byte for byte unless the kernel's
//! compare.json allows a float tolerance for a buffer. Each runs both under the round-robin
//! scheduler and in the bursts of plain `vdb run`, which must end in the same state, and
//! split over cores a group at a time, which must end with the same memory.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use vdb::exec::{run_split, run_to_end, run_to_end_on, run_to_end_unrecorded, Interpreter, NullObserver};
use vdb::launch::raw;

use crate::golden::scratch;

pub fn launches(group: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels").join(group);
    let mut out = Vec::new();
    for kernel in std::fs::read_dir(&root).expect("sample kernels").filter_map(|e| e.ok()) {
        for f in std::fs::read_dir(kernel.path()).into_iter().flatten().filter_map(|e| e.ok()) {
            if f.path().to_string_lossy().ends_with(".launch.json") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

/// Compares one output with its reference under the buffer's rule.
fn matches(rule: &serde_json::Value, got: &[u8], want: &[u8]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} bytes, expected {}", got.len(), want.len()));
    }
    if let Some(ulp) = rule.get("f32_ulp").and_then(|v| v.as_u64()) {
        for (i, (a, b)) in got.chunks(4).zip(want.chunks(4)).enumerate() {
            let (a, b) =
                (i32::from_le_bytes(a.try_into().expect("4")), i32::from_le_bytes(b.try_into().expect("4")));
            if (a as i64 - b as i64).unsigned_abs() > ulp {
                return Err(format!(
                    "float {i}: {:e} vs {:e}",
                    f32::from_bits(a as u32),
                    f32::from_bits(b as u32)
                ));
            }
        }
        return Ok(());
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(i) => Err(format!("first difference at byte {i}: {:#04x} vs {:#04x}", got[i], want[i])),
    }
}

fn check(path: &Path) -> Result<(), String> {
    let mut launch = raw::load(path).map_err(|e| e.to_string())?;
    let interp = Interpreter::new(launch.program.clone());
    // The exact round-robin run and the burst run of plain `vdb run` end in the same state.
    let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
    let exact = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver)
        .map_err(|f| f.render(&launch.program))?;
    let burst = run_to_end_unrecorded(&interp, &mut launch.machine, &mut launch.scheduler)
        .map_err(|f| f.render(&launch.program))?;
    if exact != burst || machine.state_hash() != launch.machine.state_hash() {
        return Err(format!("burst run differs from the round-robin run: {exact:?} vs {burst:?}"));
    }
    check_split(path, &interp, &exact, &machine)?;
    let name = path.to_string_lossy().replace(['/', '.'], "_");
    let out = scratch(&name);
    raw::write_outputs(&launch.program, &launch.machine, &launch.outputs, &out)?;
    let kdir = path.parent().expect("kernel dir");
    let rules: serde_json::Value =
        serde_json::from_slice(&std::fs::read(kdir.join("compare.json")).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    for output in &launch.outputs {
        let file = Path::new(&output.path).file_name().expect("name").to_string_lossy().to_string();
        let got = std::fs::read(out.join(&output.path)).map_err(|e| e.to_string())?;
        let want = std::fs::read(kdir.join("expected").join(&file)).map_err(|e| e.to_string())?;
        let stem = file.trim_end_matches(".bin");
        let rule = rules.get(stem).or_else(|| rules.get(&file)).cloned().unwrap_or(serde_json::Value::Null);
        matches(&rule, &got, &want).map_err(|e| format!("{file}: {e}"))?;
    }
    let _ = std::fs::remove_dir_all(out);
    Ok(())
}

/// Runs `path` split over two and three cores from two groups on, and compares memory and
/// counts with the round-robin run.
fn check_split(
    path: &Path,
    interp: &Interpreter,
    exact: &vdb::exec::RunSummary,
    want: &vdb::machine::Machine,
) -> Result<(), String> {
    for jobs in [2, 3] {
        let l = raw::load(path).map_err(|e| format!("reload failed: {e}"))?;
        let (mut machine, mut sched) = (l.machine, l.scheduler);
        let jobs = NonZeroUsize::new(jobs).expect("nonzero");
        let split = run_split(interp, &mut machine, &mut sched, jobs)
            .ok_or(format!("split run over {jobs} cores stopped"))?;
        if &split.summary != exact || sched.steps != exact.steps {
            return Err(format!("split run over {jobs} cores counted {split:?}, expected {exact:?}"));
        }
        let groups = sched.groups.len();
        // Other cores may take every group (before this core takes its first).
        if split.cores > jobs.get() || split.groups_elsewhere > groups {
            return Err(format!("split run over {jobs} cores of {groups} groups: {split:?}"));
        }
        if machine.svm.nonzero_pages() != want.svm.nonzero_pages() {
            return Err(format!("split run over {jobs} cores ends with other memory"));
        }
    }
    Ok(())
}

fn check_all(group: &str) {
    let all = launches(group);
    assert!(!all.is_empty());
    let failures: Vec<String> =
        all.iter().filter_map(|p| check(p).err().map(|e| format!("{}: {e}", p.display()))).collect();
    assert!(
        failures.is_empty(),
        "{} of {} launches differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn project_reference_kernels_match_pocl_on_every_target() {
    check_all("shared");
}

#[test]
fn sample_opencl_kernels_match_pocl_on_every_target() {
    check_all("opencl");
}

/// The kernels compiled with `-g` (their references computed by the build script).
#[test]
fn source_level_samples_match_their_reference() {
    check_all("source-level");
}

/// The step limit counts the steps of all cores: a split run that goes past it stops for the
/// exact rerun to report, one that reaches it exactly does not.
#[test]
fn split_runs_keep_the_launch_step_limit() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/opencl/collatz/skl.launch.json");
    let load = || raw::load(&path).ok().map(|l| (l.machine, l.scheduler));
    let launch = raw::load(&path).expect("launch");
    let interp = Interpreter::new(launch.program.clone());
    let (mut machine, mut sched) = load().expect("launch");
    let exact = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect("runs");
    let jobs = NonZeroUsize::new(2).expect("nonzero");
    for (limit, stops) in [(exact.steps, false), (exact.steps - 1, true)] {
        let (mut machine, mut sched) = load().expect("launch");
        sched.step_limit = limit;
        let groups = sched.groups.len();
        assert!(groups >= 4, "{groups} groups");
        let split = run_split(&interp, &mut machine, &mut sched, jobs);
        assert_eq!(split.is_none(), stops, "limit {limit} of {} steps", exact.steps);
        // The run the ICD makes reports what the exact run does: the summary, or the fault
        // at the limit, with the memory it leaves.
        let (mut machine, mut sched) = load().expect("launch");
        let (mut want_m, mut want_s) = (machine.clone(), sched.clone());
        (sched.step_limit, want_s.step_limit) = (limit, limit);
        assert!(groups >= vdb::exec::MIN_SPLIT_GROUPS, "{groups} groups");
        let got = run_to_end_on(&interp, &mut machine, &mut sched, jobs);
        let want = run_to_end(&interp, &mut want_m, &mut want_s, &mut NullObserver);
        assert_eq!(got, want, "limit {limit}");
        assert_eq!(machine.svm.nonzero_pages(), want_m.svm.nonzero_pages(), "limit {limit}");
    }
}

/// A fault in a later work-group, run with the groups shared over cores (where the chunks
/// from the back fault too), is the one the sequential run meets: the same fault, with the
/// memory it leaves; the run on N cores before the fault writes what the sequence does.
#[test]
fn split_runs_report_the_fault_of_the_sequential_run() {
    let path = crate::golden::half_output_collatz("split_fault");
    let launch = raw::load(&path).expect("launch");
    let interp = Interpreter::new(launch.program.clone());
    let (mut want_m, mut want_s) = (launch.machine.clone(), launch.scheduler.clone());
    let want = run_to_end(&interp, &mut want_m, &mut want_s, &mut NullObserver);
    let fault = want.clone().expect_err("the sequential run faults");
    assert!(fault.thread.0 > 0, "{fault:?}");
    for jobs in [2, 3] {
        let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
        let jobs = NonZeroUsize::new(jobs).expect("nonzero");
        assert!(run_split(&interp, &mut machine, &mut sched, jobs).is_none(), "{jobs} cores");
        let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
        let got = run_to_end_on(&interp, &mut machine, &mut sched, jobs);
        assert_eq!(got, want, "{jobs} cores");
        assert_eq!(machine.svm.nonzero_pages(), want_m.svm.nonzero_pages(), "{jobs} cores");
        assert_eq!(sched.steps, want_s.steps, "{jobs} cores");
    }
}

/// What a plain run of `launch` notes (normalized), starting from `accesses`.
fn noted(
    launch: &raw::Launch,
    interp: &Interpreter,
    accesses: vdb::machine::Accesses,
) -> vdb::machine::Accesses {
    let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
    machine.svm.accesses = Some(Box::new(accesses));
    run_to_end_unrecorded(interp, &mut machine, &mut sched).expect("runs");
    let mut a = *machine.svm.accesses.take().expect("noted");
    a.normalize();
    a
}

/// A run notes the SVM bytes it reads and writes when asked, and only those it writes when
/// asked for writes alone (the groups run from the front, checked against by their writes).
#[test]
fn runs_note_their_accesses_or_their_writes_alone() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/opencl/collatz/skl.launch.json");
    let launch = raw::load(&path).expect("launch");
    let interp = Interpreter::new(launch.program.clone());
    let noted: Vec<_> = [vdb::machine::Accesses::default(), vdb::machine::Accesses::writes_only()]
        .into_iter()
        .map(|accesses| noted(&launch, &interp, accesses))
        .collect();
    let [both, writes] = &noted[..] else { unreachable!() };
    assert!(both.reads.iter().next().is_some() && both.writes.iter().next().is_some());
    assert!(writes.reads.iter().next().is_none(), "{:?}", writes.reads);
    assert_eq!(writes.writes, both.writes);
}

/// The histogram benchmark with 2 passes instead of 64: 64 groups that add into the same 256
/// global bins and take the maximum, minimum and xor of the same three words, with atomics
/// whose old values go nowhere.
pub(crate) fn small_histogram() -> PathBuf {
    crate::golden::edited_launch("sample-kernels/bench/histogram", "small_histogram", |text| {
        let text = text.replace("\"scalar\": \"in/passes.bin\"", "\"value\": 2");
        assert!(text.contains("\"value\": 2"), "the launch names its passes");
        text
    })
}

/// Chunks of groups that update the same words only by atomics that fold (no old value
/// returned; add, max, min, xor) join the run on several cores, their updates laid onto
/// the earlier groups': the memory is the sequential run's.
#[test]
fn groups_whose_atomics_fold_share_cores_and_end_as_in_sequence() {
    let launch = raw::load(&small_histogram()).expect("launch");
    let interp = Interpreter::new(launch.program.clone());
    let (mut want_m, mut want_s) = (launch.machine.clone(), launch.scheduler.clone());
    let want = run_to_end(&interp, &mut want_m, &mut want_s, &mut NullObserver).expect("runs");
    for jobs in [2, 3] {
        let (mut machine, mut sched) = (launch.machine.clone(), launch.scheduler.clone());
        let split = run_split(&interp, &mut machine, &mut sched, NonZeroUsize::new(jobs).expect("nonzero"))
            .expect("no fault");
        assert_eq!(split.summary, want, "{jobs} cores");
        assert!(split.groups_elsewhere > 0 && split.refused_at.is_none(), "{jobs} cores: {split:?}");
        assert_eq!(machine.svm.nonzero_pages(), want_m.svm.nonzero_pages(), "{jobs} cores");
    }
}

/// Noting folds is for plain runs alone: without it (a recording's chunks) the same atomics
/// are reads and writes; with it, they are folds, by operation, and not writes.
#[test]
fn atomics_that_fold_are_noted_as_folds_only_when_asked() {
    use vdb::machine::{Accesses, FoldOp};
    let launch = raw::load(&small_histogram()).expect("launch");
    let interp = Interpreter::new(launch.program.clone());
    let plain = noted(&launch, &interp, Accesses::default());
    let folding = noted(&launch, &interp, Accesses::default().folding());
    let (plain, folding) = (&plain, &folding);
    assert!(plain.folds.is_empty() && plain.writes.iter().next().is_some());
    assert!(folding.writes.iter().next().is_none(), "{:?}", folding.writes);
    let mut ops: Vec<(FoldOp, u32, u64)> =
        folding.folds.iter().map(|(f, r)| (f.op, f.size, r.iter().map(|(s, e)| e - s).sum())).collect();
    ops.sort_by_key(|o| format!("{o:?}"));
    // 256 bins of 4 bytes added into; one word each for the maximum, minimum and xor.
    assert_eq!(
        ops,
        [(FoldOp::Add, 4, 1024), (FoldOp::UMax, 4, 4), (FoldOp::UMin, 4, 4), (FoldOp::Xor, 4, 4)],
        "{:?}",
        folding.folds
    );
    // Without folding, each folded byte is both read and written.
    for (_, r) in &folding.folds {
        for (s, e) in r.iter() {
            assert!(plain.writes.iter().any(|(a, b)| a <= s && e <= b), "{s:#x}..{e:#x}");
            assert!(plain.reads.iter().any(|(a, b)| a <= s && e <= b), "{s:#x}..{e:#x}");
        }
    }
}
