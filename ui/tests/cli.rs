//! The `vdb` binary as a user runs it: exit codes, messages that name the file, line and
//! field, outputs written, JSON from `batch` and `trace`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

fn vdb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vdb")).args(args).current_dir(root()).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A scratch folder for one test, emptied first: under the target folder's `tmp/` (Cargo's
/// for integration tests), so runs reuse it rather than leave folders behind.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

#[test]
fn check_reports_errors_with_location_and_caret() {
    let (code, _, err) = vdb(&["check", "tests/data/real/broken/b2_undeclared.visaasm"]);
    assert_eq!(code, 1);
    assert!(err.contains("b2_undeclared.visaasm:100:18: error: V9999: unbound identifier"), "{err}");
    assert!(err.contains("^^^^^"), "{err}");
    let (code, out, _) = vdb(&["check", "sample-kernels/hand/loop_exit.visaasm"]);
    assert_eq!(code, 0);
    assert!(out.contains("ok: loop_exit"), "{out}");
}

#[test]
fn run_writes_outputs_and_stats() {
    let dir = scratch("run");
    let d = dir.to_string_lossy().to_string();
    let (code, out, err) =
        vdb(&["run", "sample-kernels/shared/k24_local_arg/skl.launch.json", "--out", &d, "--stats"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("finished: 4 thread(s)"), "{out}");
    let stats: serde_json::Value = serde_json::from_str(out.lines().last().expect("stats")).expect("json");
    assert!(stats["instructions"].as_u64().expect("n") > 0);
    assert!(stats["wall_ms"].as_f64().is_some());
    let got = std::fs::read(dir.join("out/out.bin")).expect("output");
    let want =
        std::fs::read(root().join("sample-kernels/shared/k24_local_arg/expected/out.bin")).expect("expected");
    assert_eq!(got, want);
}

/// `--record --stats` records the whole run (on two cores where there are two) and breaks
/// the recording's bytes down by part; the outputs are those of the plain run. With
/// `--keep-log` every step's record and log are held; without, the checkpoints and indexes,
/// and a fraction of the log.
#[test]
fn run_record_stats_break_the_recording_down() {
    let collatz = root().join("sample-kernels/opencl/collatz");
    let dir = scratch("record_stats");
    let d = dir.to_string_lossy().to_string();
    let launch = collatz.join("skl.launch.json").to_string_lossy().to_string();
    let (code, lean, err) = vdb(&["run", &launch, "--out", &d, "--record", "--stats"]);
    assert_eq!(code, 0, "{err}");
    let lean: serde_json::Value = serde_json::from_str(lean.lines().last().expect("stats")).expect("json");
    let (code, out, err) = vdb(&["run", &launch, "--out", &d, "--record", "--stats", "--keep-log"]);
    assert_eq!(code, 0, "{err}");
    let got = std::fs::read(dir.join("out/steps.bin")).expect("output");
    assert_eq!(got, std::fs::read(collatz.join("expected/steps.bin")).expect("expected"));
    let stats: serde_json::Value = serde_json::from_str(out.lines().last().expect("stats")).expect("json");
    let parts = stats["recorded"].as_object().expect("recorded parts");
    let sum: u64 = parts.values().map(|v| v.as_u64().expect("bytes")).sum();
    assert_eq!(Some(sum), stats["recorded_bytes"].as_u64(), "{stats}");
    for part in ["log", "steps", "index", "checkpoints", "controls"] {
        assert!(parts[part].as_u64().expect(part) > 0, "{part}: {stats}");
    }
    // A 5-byte step record per step (SIMD16, under 65,536 instructions: u16 pc and channel
    // enables, a byte of log length), a log offset per 64 steps of each part the recording
    // is held in (one per chunk of work-groups the second core recorded); and 12 bytes for
    // each of the few steps that log 127 bytes or more, the layout of each window (104 bytes
    // for four threads, every few thousand steps, naming the threads its steps ran on), and
    // the thread of each step recorded on its own (2 bytes).
    let n = stats["steps"].as_u64().expect("steps");
    let steps = parts["steps"].as_u64().expect("steps");
    let least = 5 * n + 8 * n.div_ceil(64);
    assert!((least..least + n / 16).contains(&steps), "{stats}");
    // The recording counts what the plain run counts.
    let (code, plain, err) = vdb(&["run", &launch, "--out", &d, "--stats"]);
    assert_eq!(code, 0, "{err}");
    let plain: serde_json::Value = serde_json::from_str(plain.lines().last().expect("stats")).expect("json");
    for count in ["instructions", "lane_ops"] {
        assert_eq!(stats[count], plain[count], "{count}");
        assert_eq!(lean[count], plain[count], "{count}");
        assert!(plain[count].as_u64() > Some(0), "{count}");
    }
    let part =
        |s: &serde_json::Value, k: &str| s["recorded"][k].as_u64().unwrap_or_else(|| panic!("{k}: {s}"));
    for kept in ["checkpoints", "index"] {
        assert!(part(&lean, kept) > 0, "{kept}: {lean}");
    }
    for cached in ["log", "steps"] {
        assert!(part(&lean, cached) * 4 < part(&stats, cached), "{cached}: {lean} against {stats}");
    }
    assert!(lean["recorded_bytes"].as_u64() < stats["recorded_bytes"].as_u64(), "{lean}");
}

/// `run --stats` says how the groups were shared over the cores: hash64's groups write apart,
/// so other cores ran some; histogram's groups all add into the same global bins by atomics
/// that fold, so they share too; the atomics sample widened to 100 groups reads what earlier
/// groups compare-exchanged, so the first chunk from another core is refused and the rest run
/// on one; one core shares nothing.
/// (Launches of 50 ms and more: the other core surely takes a chunk.)
#[test]
fn stats_say_how_the_groups_were_shared() {
    let d = scratch("sharing").to_string_lossy().to_string();
    let sharing = |launch: &str, jobs: &str| {
        let (code, out, err) = vdb(&["run", launch, "--out", &d, "--stats", "--jobs", jobs]);
        assert_eq!(code, 0, "{err}");
        let stats: serde_json::Value =
            serde_json::from_str(out.lines().last().expect("stats")).expect("json");
        stats["sharing"].clone()
    };
    let bench = |kernel: &str| format!("sample-kernels/bench/{kernel}/skl.launch.json");
    let apart = sharing(&bench("hash64"), "2");
    assert_eq!(apart["cores"], 2, "{apart}");
    assert!(apart["groups_elsewhere"].as_u64() > Some(0) && apart["refused_at_group"].is_null(), "{apart}");
    // The histogram's groups add into the same bins, by atomics that return nothing: they
    // fold, so the groups share the cores all the same.
    let folds = sharing(&bench("histogram"), "2");
    assert!(folds["groups_elsewhere"].as_u64() > Some(0) && folds["refused_at_group"].is_null(), "{folds}");
    // The atomics sample, widened to 100 groups: each group reads the word the groups before
    // it compare-exchanged, so no chunk can join.
    let input: Vec<u8> = (0..4000u32).flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes()).collect();
    let dir = scratch("sharing_atomics");
    let wide = write(&dir, "in.bin", "");
    std::fs::write(&wide, input).expect("input");
    let launch = edited_launch(&dir, "sample-kernels/opencl/atomics", |text| {
        text.replace("200,", "4000,").replace("\"in/in.bin\"", &format!("{wide:?}"))
    });
    let refused = sharing(&launch, "2");
    assert_eq!(refused["groups_elsewhere"], 0, "{refused}");
    assert!(refused["refused_at_group"].as_u64() > Some(0), "{refused}");
    let one = sharing(&bench("hash64"), "1");
    assert_eq!((one["cores"].as_u64(), one["groups_elsewhere"].as_u64()), (Some(1), Some(0)), "{one}");
}

/// The skl launch file of the kernel in `kernel` (under the project root) changed by `edit`,
/// its `skl/` and `in/` paths made absolute, written into `dir`: its path.
fn edited_launch(dir: &Path, kernel: &str, edit: impl FnOnce(String) -> String) -> String {
    let kernel = root().join(kernel);
    let text = edit(std::fs::read_to_string(kernel.join("skl.launch.json")).expect("launch"));
    let base = kernel.to_string_lossy();
    let text = text.replace("\"skl/", &format!("\"{base}/skl/")).replace("\"in/", &format!("\"{base}/in/"));
    write(dir, "edited.launch.json", &text)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_string_lossy().into()
}

#[test]
fn bad_launch_files_name_the_field_and_exit_2() {
    let dir = scratch("bad");
    let k = root().join("sample-kernels/shared/k01_divergent_if/skl");
    let kernel = k.join("k01_divergent_if.simd32.visaasm").to_string_lossy().to_string();
    let zebin = k.join("k01_divergent_if.zebin").to_string_lossy().to_string();
    let cases = [
        (r#"{"svm": []}"#, "missing field `kernel`"),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [64], "local_size": [64], "args": [{"index": 7, "size": 4}]}"#,
            "args[0].index",
        ),
        (r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": ["x"], "args": []}"#, "global_size[0]"),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [64], "local_size": [64], "args": [{"index": 0, "buffer": "nope.bin"}, {"index": 1, "size": 4}]}"#,
            "args[0].buffer",
        ),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [64], "local_size": [64], "args": [{"index": 0, "size": 4}]}"#,
            "no value for kernel argument 1",
        ),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [60], "local_size": [64], "args": []}"#,
            "global_size[0]",
        ),
        (r#"{"kernel": "nothere.visaasm", "svm": []}"#, "field `kernel`"),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [4294967040, 1024], "local_size": [64], "args": [{"index": 0, "size": 4}, {"index": 1, "size": 4}]}"#,
            "hardware threads",
        ),
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [64], "local_size": [64], "args": [{"index": 0, "size": 4}, {"index": 1, "size": 1000000000000000, "output": "o.bin"}]}"#,
            "args[1].size",
        ),
        (r#"{"kernel": "KERNEL", "svm": [{"address": "0x1000", "size": 4000000000000}]}"#, "svm[0].size"),
        (
            r#"{"kernel": "KERNEL", "simd": 32, "dispatch_mask": "0x1ffffffff"}"#,
            "0x1ffffffff has lanes beyond SIMD32",
        ),
        // A device as a buffer's contents: refused, not read forever.
        (
            r#"{"kernel": "KERNEL", "zebin": "ZEBIN", "global_size": [64], "local_size": [64], "args": [{"index": 0, "buffer": "/dev/zero"}, {"index": 1, "size": 4}]}"#,
            "args[0].buffer",
        ),
        (r#"{"kernel": "/dev/zero", "svm": []}"#, "not a regular file"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let text = text.replace("KERNEL", &kernel).replace("ZEBIN", &zebin);
        let path = write(&dir, &format!("bad{i}.json"), &text);
        let (code, _, err) = vdb(&["run", &path]);
        assert_eq!(code, 2, "case {i}: {err}");
        assert!(err.contains(needle), "case {i}: expected `{needle}` in: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_fault_prints_location_and_instruction_and_exits_3() {
    let dir = scratch("fault");
    let kernel = write(&dir, "k.visaasm", ".version 4.1\n.kernel \"k\"\n.decl A v_type=G type=uq num_elts=16 align=hword\n.decl D v_type=G type=d num_elts=16 align=hword\n.function \"_main_0\"\n\n_main_0:\n    mov (M1, 16) D(0,0)<1> 0x7:d\n    svm_scatter.4.1 (M1, 16) A.0 D.0\n    ret (M1, 1)\n");
    let launch = write(
        &dir,
        "l.json",
        &format!(r#"{{"kernel": "{kernel}", "simd": 16, "svm": [{{"address": "0x1000", "size": 64}}]}}"#),
    );
    let (code, _, err) = vdb(&["run", &launch]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("k.visaasm:9:5: fault in thread 0: lane 0: access to unmapped SVM memory at 0x0"),
        "{err}"
    );
    assert!(err.contains("svm_scatter.4.1 (M1, 16) A.0 D.0"), "{err}");
}

#[test]
fn batch_json_prints_one_object_per_command_and_fails_on_bad_ones() {
    let dir = scratch("batch");
    let script = write(&dir, "s.vdb", "step 3\nfrobnicate\nrstep\nprint R(0,0)<1;1,0>\nstate-hash\n");
    let (code, out, _) =
        vdb(&["batch", "sample-kernels/hand/loop_exit.launch.json", "--script", &script, "--json"]);
    assert_eq!(code, 1, "an unknown command fails the batch");
    let objs: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(objs.len(), 5);
    for o in &objs {
        for key in ["cmd", "step", "thread", "line", "stop"] {
            assert!(o.get(key).is_some(), "{key} missing in {o}");
        }
    }
    assert_eq!(objs[0]["step"], 3);
    assert!(objs[1]["error"].as_str().expect("error").contains("unknown command"));
    assert_eq!(objs[2]["step"], 2);
    assert_eq!(objs[3]["value"].as_array().expect("value").len(), 16);
    assert_eq!(objs[4]["hash"].as_str().expect("hash").len(), 16);
}

/// A watchpoint on a `float*` buffer's element, through `batch --json`: the stop keeps the raw
/// `old`/`new` bytes and adds the element type, the floats (the product the kernel computes
/// from its input file) and their little-endian hex; `x` adds typed values likewise.
#[test]
fn batch_json_gives_typed_watch_values() {
    let input = std::fs::read(root().join("sample-kernels/opencl/float_math/in/in.bin")).expect("input");
    let input: Vec<f32> =
        input.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let (i, n) = (9, input.len());
    let product = input[i] * input[(i + 7) % n];
    let at = 4 * (6 * i + 1);
    let dir = scratch("typed");
    let script = write(&dir, "s.vdb", &format!("watch exact+{at}\ncontinue\nx/2 exact+{at}\n"));
    let (code, out, err) =
        vdb(&["batch", "sample-kernels/opencl/float_math/skl.launch.json", "--script", &script, "--json"]);
    assert_eq!(code, 0, "{err}");
    let objs: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let stop = &objs[1]["stop"];
    assert_eq!(stop["reason"], "watchpoint");
    assert_eq!(stop["type"], "float");
    assert_eq!(stop["new_value"].as_f64().map(|v| v as f32), Some(product));
    assert_eq!(stop["new_hex"], format!("{:#010x}", product.to_bits()).as_str());
    let raw: String = product.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(stop["new"], raw.as_str());
    assert_eq!(stop["old"], "00000000");
    assert_eq!(objs[2]["type"], "float");
    assert_eq!(objs[2]["typed_values"][0].as_f64().map(|v| v as f32), Some(product));
}

#[test]
fn trace_writes_every_step_with_old_and_new_bytes() {
    let dir = scratch("trace");
    let out = dir.join("t.jsonl").to_string_lossy().to_string();
    let (code, _, err) = vdb(&["trace", "sample-kernels/hand/divergent_if.launch.json", "-o", &out]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("trace");
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    assert!(lines.len() > 10);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["step"], i as u64);
        for key in ["thread", "pc", "line", "em", "chen", "writes"] {
            assert!(l.get(key).is_some(), "{key}");
        }
    }
    let scatter =
        lines.iter().find(|l| l["writes"].as_array().is_some_and(|w| w.iter().any(|w| w["kind"] == "svm")));
    let w = &scatter.expect("a memory write")["writes"][0];
    assert_eq!(w["old"].as_str().map(str::len), w["new"].as_str().map(str::len));
}

/// `--jobs` shares work-groups out over cores; outputs, counts and faults are those of the
/// run in sequence.
#[test]
fn run_on_several_cores_gives_the_sequential_outputs_and_faults() {
    let collatz = root().join("sample-kernels/opencl/collatz");
    let mut reference: Option<(String, Vec<u8>)> = None;
    for jobs in ["1", "2", "3"] {
        let dir = scratch(&format!("jobs{jobs}"));
        let d = dir.to_string_lossy().to_string();
        let launch = collatz.join("skl.launch.json").to_string_lossy().to_string();
        let (code, out, err) = vdb(&["run", &launch, "--out", &d, "--jobs", jobs, "--stats"]);
        assert_eq!(code, 0, "{err}");
        let stats: serde_json::Value =
            serde_json::from_str(out.lines().last().expect("stats")).expect("json");
        let counts = format!("{} {}", stats["instructions"], stats["lane_ops"]);
        let got = std::fs::read(dir.join("out/steps.bin")).expect("output");
        assert_eq!(got, std::fs::read(collatz.join("expected/steps.bin")).expect("expected"));
        match &reference {
            None => reference = Some((counts, got)),
            Some((c, _)) => assert_eq!(&counts, c, "--jobs {jobs}"),
        }
    }
    // An output buffer half as long: the scatters of groups 8 and later fault (64 items of 4
    // bytes per group, 4 threads of SIMD16), reported as the sequential run reports them.
    let dir = scratch("jobs_fault");
    let launch = edited_launch(&dir, "sample-kernels/opencl/collatz", |text| {
        text.replace("\"size\": 4096", "\"size\": 2048")
    });
    let mut reports = Vec::new();
    for jobs in ["1", "2"] {
        let (code, _, err) = vdb(&["run", &launch, "--jobs", jobs]);
        assert_eq!(code, 3, "{err}");
        assert!(
            err.contains("lane 0: 4 bytes at 0x") && err.contains("past the end of the 2048-byte buffer"),
            "{err}"
        );
        let thread: u32 = err
            .split("fault in thread ")
            .nth(1)
            .and_then(|t| t.split(':').next()?.parse().ok())
            .expect("thread");
        assert!((32..36).contains(&thread), "{err}");
        reports.push(err);
    }
    assert_eq!(reports[0], reports[1]);
}

/// `--record-limit` takes a size with a unit, before or after the subcommand, and stops the
/// recording there (for `run --record`, `batch` and `trace` alike); a bad size names itself.
#[test]
fn record_limit_takes_sizes_with_units_everywhere() {
    let launch = "sample-kernels/opencl/collatz/skl.launch.json";
    let dir = scratch("record_limit");
    let d = dir.to_string_lossy().to_string();
    // Cut short by the budget: said so instead of "finished", and exit 1.
    let (code, out, err) = vdb(&["run", launch, "--out", &d, "--record", "--record-limit", "400K"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("stopped at the recording budget after"), "{err}");
    assert!(!out.contains("finished"), "{out}");
    let (code, out, err) = vdb(&["run", launch, "--out", &d, "--record", "--record-limit", "1G"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("finished") && !err.contains("recording budget"), "{out}{err}");

    let script = dir.join("s.vdb");
    std::fs::write(&script, "continue\nwhen\n").expect("script");
    let s = script.to_string_lossy().to_string();
    let (code, out, _) = vdb(&["--record-limit", "512KiB", "batch", launch, "--script", &s, "--json"]);
    assert_eq!(code, 0, "{out}");
    let first: serde_json::Value = serde_json::from_str(out.lines().next().expect("a line")).expect("json");
    assert_eq!(first["stop"]["reason"], "record-limit", "{out}");
    // Past the budget by what the last window and checkpoint added at most (a checkpoint
    // counts the live machine's copies of the threads that changed since the one before).
    let bytes = first["stop"]["bytes"].as_u64().expect("bytes");
    assert!((512 << 10..660 << 10).contains(&bytes), "{bytes}");

    let t = dir.join("t.jsonl").to_string_lossy().to_string();
    let (code, out, err) = vdb(&["trace", launch, "-o", &t, "--record-limit", "256k"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("up to the recording budget"), "{out}");
    let lines = std::fs::read_to_string(&t).expect("trace").lines().count() as u64;
    let under_512k = first["step"].as_u64().expect("step");
    assert!(lines > 10 && lines < under_512k, "{lines} steps under 256 KiB, {under_512k} under 512 KiB");

    for bad in ["12Q", "lots", "0", "0.1"] {
        let (code, _, err) = vdb(&["run", launch, "--out", &d, "--record", "--record-limit", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--record-limit"), "{bad}: {err}");
    }
}

/// Runs vdb and kills it if it has not ended within `secs` (a hang is a failure, not a
/// test that never ends).
fn vdb_within(secs: u64, args: &[&str]) -> (i32, String, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vdb"))
        .args(args)
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("vdb {args:?} still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().expect("stdout").read_to_string(&mut out).expect("stdout");
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    (status.code().unwrap_or(-1), out, err)
}

/// Hostile or broken kernel files end in a diagnostic, never a hang, an abort or a flood.
#[test]
fn check_survives_hostile_files() {
    let dir = scratch("hostile");
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).expect("write");
        p.to_string_lossy().to_string()
    };
    // A trailing backslash, alone or after a token, without a newline.
    for (name, text) in
        [("bs1.visaasm", "\\"), ("bs2.visaasm", "x \\"), ("bs3.visaasm", ".version 4.1\nx \\ \t")]
    {
        let (code, _, err) = vdb_within(20, &["check", &file(name, text.as_bytes())]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(&format!("{name}:1:1: error")), "{name}: {err}");
    }
    // Parentheses nested far deeper than any kernel: one diagnostic, no stack overflow, and
    // the same through `run` (which parses on more than one thread).
    let kernel =
        std::fs::read_to_string(root().join("sample-kernels/hand/loop_exit.visaasm")).expect("kernel");
    let deep = format!("{}1{}", "(".repeat(20_000), ")".repeat(20_000));
    let nested = kernel.replacen("0x1:d", &format!("{deep}:d"), 1);
    assert_ne!(nested, kernel, "the sample kernel has a 0x1:d immediate to replace");
    let (code, _, err) = vdb_within(20, &["check", &file("deep.visaasm", nested.as_bytes())]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nested more than 64 levels"), "{err}");
    // A binary file: one diagnostic naming it, not megabytes of its bytes.
    let mut binary = b"\x7fELF\x02\x01\x01".to_vec();
    binary.extend((0..4_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    let (code, _, err) = vdb_within(20, &["check", &file("k.zebin", &binary)]);
    assert_eq!(code, 1);
    assert!(err.contains("binary file"), "{err}");
    assert!(err.len() < 2_000, "{} bytes of diagnostics", err.len());
    // Many bad lines: capped, and quick.
    let bad: String = (0..40_000).map(|i| format!("frob{i} $\n")).collect();
    let (code, _, err) = vdb_within(20, &["check", &file("bad.visaasm", bad.as_bytes())]);
    assert_eq!(code, 1);
    assert!(err.contains("more error(s)"), "{}", &err[err.len().saturating_sub(300)..]);
    assert!(err.lines().count() < 400, "{} lines", err.lines().count());
    // Terminal escapes in a source line are printed escaped.
    let (code, _, err) =
        vdb_within(20, &["check", &file("esc.visaasm", b".version 4.1\n\x1b]0;title\x07 \x1b[2J\n")]);
    assert_eq!(code, 1);
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("\\u{1b}]0;title"), "{err}");
}

#[test]
fn check_takes_only_real_grf_sizes() {
    for size in ["0", "3", "48", "2147483648", "x"] {
        let (code, _, err) = vdb(&["check", "--grf-size", size, "sample-kernels/hand/loop_exit.visaasm"]);
        assert_eq!(code, 2, "--grf-size {size}: {err}");
        assert!(err.contains("not a GRF size"), "{err}");
    }
    for size in ["32", "64"] {
        let (code, _, err) = vdb(&["check", "--grf-size", size, "sample-kernels/hand/loop_exit.visaasm"]);
        assert_eq!(code, 0, "--grf-size {size}: {err}");
    }
}

/// Launch files: a BOM is fine, text after the object is not, and outputs that cannot be
/// written are refused before the run, naming their field.
#[test]
fn launch_files_are_read_strictly_and_outputs_checked_first() {
    let dir = scratch("launch_strict");
    let hand = root().join("sample-kernels/hand");
    for f in ["loop_exit.visaasm", "in.bin"] {
        std::fs::copy(hand.join(f), dir.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(hand.join("loop_exit.launch.json")).expect("launch");
    let write = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p.to_string_lossy().to_string()
    };
    let bom = write("bom.json", &format!("\u{feff}{text}"));
    let (code, out, err) = vdb(&["run", &bom]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote"), "{out}");
    let twice = write("twice.json", &format!("{text}\n{text}"));
    let (code, _, err) = vdb(&["run", &twice]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("text after the launch object"), "{err}");
    std::fs::create_dir_all(dir.join("taken.bin")).expect("dir");
    let folder = write("folder.json", &text.replace("out/loop_exit.out.bin", "taken.bin"));
    let (code, out, err) = vdb(&["run", &folder]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("svm[1].output") && err.contains("is a folder"), "{err}");
    assert!(!out.contains("finished"), "the run went ahead: {out}");
    let nul = write("nul.json", &text.replace("out/loop_exit.out.bin", "out\\u0000.bin"));
    let (code, _, err) = vdb(&["run", &nul]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("svm[1].output") && err.contains("NUL"), "{err}");
}

/// Reads IGC widens past a buffer's end (a 16-byte read at c+4 of a 16-byte buffer) run as on
/// the hardware, reading the driver's padding as zeros, and the summary says so.
#[test]
fn compiler_over_reads_run_and_are_reported() {
    for device in ["skl", "tgllp", "acm-g10"] {
        let dir = scratch(&format!("wide_{device}"));
        let d = dir.to_string_lossy().to_string();
        let launch = format!("sample-kernels/opencl/wide_reads/{device}.launch.json");
        let (code, out, err) = vdb(&["run", &launch, "--out", &d, "--stats"]);
        assert_eq!(code, 0, "{device}: {err}");
        assert!(out.contains("compiler over-read(s) past a buffer's end"), "{device}: {out}");
        let stats: serde_json::Value =
            serde_json::from_str(out.lines().last().expect("stats")).expect("json");
        assert!(stats["over_reads"].as_u64().expect("count") > 0, "{device}: {stats}");
        let got = std::fs::read(dir.join("out/out.bin")).expect("output");
        let want =
            std::fs::read(root().join("sample-kernels/opencl/wide_reads/expected/out.bin")).expect("pocl");
        assert_eq!(got, want, "{device}");
    }
}

/// A fault reads the same recorded or not: the same instruction count, lane operations,
/// lane (the thread's channel) and work-item.
#[test]
fn a_fault_reads_the_same_recorded_or_not() {
    let dir = scratch("fault_same");
    let collatz = root().join("sample-kernels/opencl/collatz");
    let mut launch: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(collatz.join("skl.launch.json")).expect("launch"))
            .expect("json");
    // An output buffer of 16 bytes: a store past its end (into the page's padding) faults.
    launch["args"][1]["size"] = serde_json::json!(16);
    for k in ["kernel", "zebin"] {
        let rel = launch[k].as_str().expect("path").to_string();
        launch[k] = serde_json::json!(collatz.join(rel).to_string_lossy());
    }
    launch["args"][0]["buffer"] = serde_json::json!(collatz.join("in/in.bin").to_string_lossy());
    let path = dir.join("small.launch.json");
    std::fs::write(&path, launch.to_string()).expect("write");
    let p = path.to_string_lossy().to_string();
    let plain = vdb(&["run", &p, "--stats"]);
    let recorded = vdb(&["run", &p, "--stats", "--record"]);
    for (code, _, err) in [&plain, &recorded] {
        assert_eq!(*code, 3, "{err}");
        assert!(err.contains("past the end of the 16-byte buffer"), "{err}");
        // The lane named is the thread's channel, and the work-item it holds is named.
        let lane = err.split("lane ").nth(1).and_then(|t| t.split(':').next()).expect("a lane");
        assert!(err.contains(&format!("(lane {lane} holds work-item ")), "{err}");
    }
    assert_eq!(plain.2, recorded.2, "fault reports differ");
    let stat = |out: &str, key: &str| {
        let v: serde_json::Value = serde_json::from_str(out.lines().last().expect("stats")).expect("json");
        v[key].as_u64().expect(key)
    };
    for key in ["instructions", "lane_ops"] {
        assert_eq!(stat(&plain.1, key), stat(&recorded.1, key), "{key}");
    }
    assert!(stat(&plain.1, "lane_ops") > 0);
}

/// A launch of a million hardware threads opens at once and within 2 GB of address space:
/// threads are built as the run (or the user) reaches them, not all before the first step
/// (their registers alone are 4 GB).
#[test]
fn a_million_thread_launch_builds_only_the_threads_it_reaches() {
    let dir = scratch("million");
    let g = root().join("sample-kernels/opencl/group_only");
    let mut launch: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(g.join("skl.launch.json")).expect("launch"))
            .expect("json");
    for k in ["kernel", "zebin"] {
        let rel = launch[k].as_str().expect("path").to_string();
        launch[k] = serde_json::json!(g.join(rel).to_string_lossy());
    }
    // SIMD32, 64 work-items a group: 2^25 work-items are 2^20 threads.
    launch["global_size"] = serde_json::json!([1u64 << 25, 1, 1]);
    launch["args"][0]["size"] = serde_json::json!(4u64 << 19);
    let path = dir.join("million.launch.json");
    std::fs::write(&path, launch.to_string()).expect("write");
    let script = dir.join("s.vdb");
    std::fs::write(&script, "step 3\nthread 1048575\ninfo frame\n").expect("script");
    let cmd = format!(
        "ulimit -v 2000000 && exec '{}' batch '{}' --script '{}'",
        env!("CARGO_BIN_EXE_vdb"),
        path.display(),
        script.display()
    );
    let out = Command::new("sh").arg("-c").arg(&cmd).current_dir(root()).output().expect("runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1048575"), "{stdout}");
}

/// Two kernels given together are not made one program: the second is an error naming both
/// files, and `--separately` checks each.
#[test]
fn check_refuses_two_kernels_as_one_program() {
    let (a, b) = ("sample-kernels/hand/loop_exit.visaasm", "sample-kernels/hand/scatter.visaasm");
    let (code, out, err) = vdb(&["check", a, b]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("scatter.visaasm:1:1: error: a second kernel") && err.contains("loop_exit.visaasm"),
        "{err}"
    );
    assert!(!out.contains("ok:"), "{out}");
    let (code, out, _) = vdb(&["check", a, b, "--separately"]);
    assert_eq!(code, 0);
    assert!(out.contains("ok: loop_exit") && out.contains("ok: scatter"), "{out}");
}

/// A kernel compiled with `-g`, through `batch --json`: `step`, `next` and `rstep` move by
/// OpenCL source line (into and out of the called helper), `break FILE.cl:LINE` stops there,
/// `stepi` moves one instruction, and every object names the source position beside the vISA
/// line (`bt` for each frame); `layout asm` makes a bare line a vISA line.
#[test]
fn batch_json_steps_and_breaks_by_source_line() {
    let dir = scratch("source_level");
    let lines = "step\nstep\nbreak loop_call.cl:28\ncontinue\nstep\nnext\nfinish\nrstep\nstepi\nlist\nbt\n\
                 layout asm\nbreak 13\nfrobnicate\n";
    let script = write(&dir, "s.vdb", lines);
    let launch = "sample-kernels/source-level/loop_call/skl.launch.json";
    let (code, out, err) = vdb(&["batch", launch, "--script", &script, "--json"]);
    assert_eq!(code, 1, "the unknown command fails the batch: {err}");
    let objs: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let sources: Vec<&str> = objs.iter().map(|o| o["source"].as_str().unwrap_or("-")).collect();
    let want = [19, 20, 20, 28, 13, 14, 28, 14, 14, 14, 14, 14, 14, 14].map(|l| format!("loop_call.cl:{l}"));
    assert_eq!(sources, want, "{out}");
    for o in &objs {
        assert!(o["line"].as_u64().is_some_and(|l| l > 0), "the vISA line beside the source: {o}");
    }
    assert_eq!(objs[2]["at_source"], "loop_call.cl:28");
    assert_eq!(objs[3]["stop"]["reason"], "breakpoint");
    assert_eq!(objs[8]["step"].as_u64(), objs[7]["step"].as_u64().map(|s| s + 1), "stepi: one instruction");
    let current: Vec<u64> = objs[9]["lines"]
        .as_array()
        .expect("list rows")
        .iter()
        .filter(|r| r["current"] == true)
        .filter_map(|r| r["line"].as_u64())
        .collect();
    assert_eq!(current, [14]);
    let frames: Vec<&str> =
        objs[10]["frames"].as_array().expect("frames").iter().filter_map(|f| f["source"].as_str()).collect();
    assert_eq!(frames, ["loop_call.cl:14", "loop_call.cl:28"]);
    assert!(objs[12]["at_source"].is_null(), "a vISA line of no source line: {}", objs[12]);
    assert!(objs[13]["error"].is_string());
}

/// `vdb check FILE` on IGC 2.x dumps needs no option: the `//Platform:` line (or, for a
/// `.inline.visaasm`, a sibling dump of the same compilation) sets a 64-byte GRF; `--platform`
/// overrides and unknown platforms are refused.
#[test]
fn check_takes_igc2_dumps_as_they_are() {
    let dir = root().join("../shared/spec/real/igc2");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("\n*** SKIPPED: {} is not here (CI has it) ***\n", dir.display());
        return;
    };
    let mut files: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path().to_string_lossy().to_string())
        .filter(|p| p.ends_with(".visaasm"))
        .collect();
    files.sort();
    let mut args = vec!["check", "--separately"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = vdb(&args);
    assert_eq!(code, 0, "{}", &err[..err.len().min(3000)]);
    assert_eq!(out.lines().filter(|l| l.starts_with("ok:")).count(), files.len(), "{out}");
    let (code, _, err) = vdb(&["check", "--platform", "nosuch", &files[0]]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = vdb(&["check", "--platform", "skl", &files[0]]);
    assert_eq!(code, 1, "a 64-byte kernel checked as skl: {err}");
}

/// The SYCL runtime's fill and copy kernels compiled by IGC 2.x for Xe2 (64-byte GRF,
/// inline cross-thread data, ze_info 1.62) run on launches built from their ze_info, and
/// write what they should.
#[test]
fn igc2_sycl_fill_and_copy_kernels_run_on_xe2() {
    let dir = root().join("../shared/spec/real/igc2");
    if !dir.is_dir() {
        eprintln!("\n*** SKIPPED: {} is not here (CI has it) ***\n", dir.display());
        return;
    }
    let work = scratch("igc2_sycl");
    let zeinfo = dir.join("sycltla__OCL_asm23954d4a795eca46.zeinfo");
    let kernel =
        |entry: &str| dir.join(format!("sycltla__OCL_asm23954d4a795eca46_simd32_entry_{entry}.visaasm"));
    let src: Vec<u8> = (0..256u32).map(|i| (i * 37 + 11) as u8).collect();
    std::fs::write(work.join("src.bin"), &src).expect("src");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let range: Vec<u8> = [256u64, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    let launch = |entry: &str, args: serde_json::Value| {
        serde_json::json!({
            "kernel": kernel(entry).to_string_lossy(), "zeinfo": zeinfo.to_string_lossy(), "device": "xe2",
            "global_size": [256, 1, 1], "local_size": [64, 1, 1], "args": args,
        })
    };
    let cases = [
        (
            "0006",
            serde_json::json!([{"index": 0, "size": 1024, "output": "out.bin"}, {"index": 1, "bytes": hex(&0xdead_beefu32.to_le_bytes())}]),
            0xdead_beefu32.to_le_bytes().repeat(256),
        ),
        (
            "0004",
            serde_json::json!([{"index": 0, "size": 512, "output": "out.bin"}, {"index": 1, "bytes": hex(&0xbeefu16.to_le_bytes())}]),
            0xbeefu16.to_le_bytes().repeat(256),
        ),
        (
            "0008",
            serde_json::json!([{"index": 0, "size": 256, "output": "out.bin"}, {"index": 1, "bytes": "5a"}]),
            vec![0x5a; 256],
        ),
        // memcpy_3d_detail: destination, its element stride and range, then the source's.
        (
            "0002",
            serde_json::json!([{"index": 0, "size": 256, "output": "out.bin"}, {"index": 1, "bytes": hex(&1u64.to_le_bytes())},
                                    {"index": 2, "bytes": hex(&range)}, {"index": 3, "buffer": "src.bin"},
                                    {"index": 4, "bytes": hex(&1u64.to_le_bytes())}, {"index": 5, "bytes": hex(&range)}]),
            src.clone(),
        ),
    ];
    for (entry, args, want) in cases {
        let path = work.join(format!("{entry}.launch.json"));
        std::fs::write(&path, launch(entry, args).to_string()).expect("launch");
        let out = work.join(format!("out_{entry}"));
        let (code, _, err) = vdb(&["run", &path.to_string_lossy(), "--out", &out.to_string_lossy()]);
        assert_eq!(code, 0, "{entry}: {err}");
        assert_eq!(std::fs::read(out.join("out.bin")).expect("output"), want, "{entry}");
    }
}

/// `--schedules N` runs chaos seeds beside round-robin and names the seeds whose outputs
/// differ (exit 1): a reduction with its barriers left out differs, one with them does not;
/// `--schedule` takes rr, seq and chaos only.
#[test]
fn schedules_expose_a_missing_barrier() {
    let (code, out, err) =
        vdb(&["run", "sample-kernels/races/max_reduce/skl.launch.json", "--schedules", "4"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("chaos seeds give outputs other than round-robin's")
            && out.contains("differ, the first at"),
        "{out}"
    );
    let (code, out, err) =
        vdb(&["run", "sample-kernels/opencl/slm_reduce/skl.launch.json", "--schedules", "3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 of 3 chaos seeds"), "{out}");
    // The seeds run side by side on the cores: the same report, seed by seed in order, on
    // one core and on three.
    let report = |jobs| {
        let args =
            ["run", "sample-kernels/races/max_reduce/skl.launch.json", "--schedules", "7", "--jobs", jobs];
        vdb(&args).1
    };
    let one = report("1");
    assert_eq!(report("3"), one);
    let seeds: Vec<u64> =
        one.lines().filter_map(|l| l.strip_prefix("seed ")?.split(':').next()?.parse().ok()).collect();
    assert_eq!(seeds, (1..=7).collect::<Vec<u64>>(), "{one}");
    let (code, _, err) =
        vdb(&["run", "sample-kernels/opencl/slm_reduce/skl.launch.json", "--schedule", "random"]);
    assert_eq!(code, 2, "{err}");
    // A chaos run with a seed writes that seed's outputs, the same every time.
    let dir = scratch("chaos_run");
    let d = dir.to_string_lossy().to_string();
    let run = || {
        let (code, _, err) = vdb(&[
            "run",
            "sample-kernels/races/max_reduce/skl.launch.json",
            "--schedule",
            "chaos",
            "--seed",
            "2",
            "--out",
            &d,
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::read(dir.join("out/out.bin")).expect("output")
    };
    assert_eq!(run(), run());
}

/// `races` in `batch --json` carries each report whole: its kind, memory, address and count,
/// and both accesses with step, thread, lane, work-item, instruction, line, whether it read or
/// wrote, and the racing byte's value (a read's too).
#[test]
fn batch_json_carries_races_whole() {
    let dir = scratch("races_json");
    let script = write(&dir, "s.vdb", "races\n");
    let (code, out, err) =
        vdb(&["batch", "sample-kernels/races/max_reduce/skl.launch.json", "--script", &script, "--json"]);
    assert_eq!(code, 0, "{err}");
    let reply: serde_json::Value = serde_json::from_str(out.lines().next().expect("a line")).expect("json");
    let races = reply["races"].as_array().expect("races");
    assert!(!races.is_empty(), "{reply}");
    for race in races {
        for key in ["kind", "memory", "addr", "count"] {
            assert!(!race[key].is_null(), "{key} missing in {race}");
        }
        let accesses = race["accesses"].as_array().expect("accesses");
        assert_eq!(accesses.len(), 2, "{race}");
        for a in accesses {
            for key in ["step", "thread", "lane", "workitem", "instruction", "line", "access", "value"] {
                assert!(!a[key].is_null(), "{key} missing in {a}");
            }
        }
        let kinds = (accesses[0]["access"].as_str(), accesses[1]["access"].as_str());
        let expected = match race["kind"].as_str().expect("kind") {
            "write-read" => (Some("write"), Some("read")),
            "read-write" => (Some("read"), Some("write")),
            _ => (Some("write"), Some("write")),
        };
        assert_eq!(kinds, expected, "{race}");
        assert!(accesses[0]["step"].as_u64() < accesses[1]["step"].as_u64(), "{race}");
    }
}
