//! Source launches through the real `vdb` binary and the real `ocloc`: a launch file naming
//! OpenCL C, arguments by name in their declared types, the one-line form, `vdb new`, the
//! build cache, compiler errors. The kernels, inputs and pocl's outputs are the project's own
//! (`tests/data/source/`), and every output is also checked against a model computed here.
//!
//! Without `ocloc` on PATH the compiler tests print one loud banner (straight to stderr, which
//! the test harness does not capture) and pass; with `VDB_REQUIRE_OCLOC` set (CI), they fail.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;
use std::time::{Duration, Instant};

/// The tests below that need `ocloc`, for the banner.
const COMPILER_TESTS: &[&str] = &[
    "a_source_launch_file_runs_and_matches_the_model",
    "the_one_line_form_means_what_the_launch_fields_mean",
    "batch_and_trace_take_source_launches",
    "compiler_errors_exit_2_with_the_compilers_file_and_line",
    "arguments_that_do_not_fit_exit_2_naming_the_argument",
    "vdb_new_writes_a_skeleton_naming_every_argument_that_runs",
    "builds_are_cached_by_source_options_and_device",
    "the_debugger_opens_a_cl_file",
    "race_checks_report_each_kind_of_race_and_none_past_a_barrier",
    "a_constant_table_adds_no_kernel_to_choose",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

fn data() -> PathBuf {
    root().join("tests/data/source")
}

/// Whether `ocloc` is on PATH; if not, says so once, loudly (or fails, in CI).
fn have_ocloc() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join("ocloc").is_file()) {
        return true;
    }
    assert!(
        std::env::var_os("VDB_REQUIRE_OCLOC").is_none(),
        "VDB_REQUIRE_OCLOC is set but ocloc is not on PATH: install intel-opencl-icd"
    );
    static BANNER: Once = Once::new();
    BANNER.call_once(|| {
        let line = "=".repeat(78);
        let _ = writeln!(
            std::io::stderr(),
            "\n{line}\nSKIPPED: {} compiler tests (ocloc not installed; apt-get install intel-opencl-icd \
             libigc-tools):\n  {}\n{line}",
            COMPILER_TESTS.len(),
            COMPILER_TESTS.join("\n  ")
        );
    });
    false
}

/// A fresh folder for one test's outputs, under the target folder's `tmp/` (Cargo's for
/// integration tests), so runs reuse it rather than leave folders behind.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("source-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// The build cache the tests of this process share (a test of the cache has its own),
/// emptied when the process first asks for it.
fn shared_cache() -> PathBuf {
    static EMPTIED: Once = Once::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("source-shared-cache");
    EMPTIED.call_once(|| {
        let _ = std::fs::remove_dir_all(&dir);
    });
    dir
}

struct Run {
    code: i32,
    out: String,
    err: String,
}

/// `vdb ARGS` from the repository root with the build cache under `cache`.
fn vdb_with(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdb"));
    cmd.args(args).current_dir(root()).env("XDG_CACHE_HOME", cache);
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("vdb runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into(),
        err: String::from_utf8_lossy(&out.stderr).into(),
    }
}

fn vdb(args: &[&str]) -> Run {
    vdb_with(&shared_cache(), args, &[])
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The arguments of `typed_mix` in `typed.launch.json`.
struct Typed {
    input: Vec<f32>,
    scale: f32,
    n: u32,
    v: [i32; 4],
    c: u8,
    s: i16,
    l: i64,
    global: usize,
    local: usize,
}

fn launch_values() -> Typed {
    let bytes = std::fs::read(data().join("in.bin")).expect("in.bin");
    let input = bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    Typed {
        input,
        scale: 0.5,
        n: 50,
        v: [1, -2, 3, -4],
        c: 200,
        s: -300,
        l: 0x5_0000_0007,
        global: 64,
        local: 16,
    }
}

/// `typed_mix` computed here: (out, vout) as bytes.
fn model(t: &Typed) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut vout) = (Vec::new(), Vec::new());
    for i in 0..t.global {
        let (group, li) = (i / t.local, i % t.local);
        let mirror = (group * t.local + (t.local - 1 - li)) as i32 * 3;
        let o = if (i as u32) < t.n { t.input[i] * t.scale + mirror as f32 } else { -1.0 };
        out.extend_from_slice(&o.to_le_bytes());
        let add = [t.c as i32, t.s as i32, t.l as i32, (t.l >> 32) as i32];
        for (v, a) in t.v.iter().zip(add) {
            vout.extend_from_slice(&v.wrapping_mul(i as i32).wrapping_add(a).to_le_bytes());
        }
    }
    (out, vout)
}

/// The outputs under `dir` are the model's and pocl's (committed in `expected/`).
#[track_caller]
fn assert_outputs(dir: &Path) {
    let (out, vout) = model(&launch_values());
    let got = |f: &str| std::fs::read(dir.join("out").join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let pocl = |f: &str| std::fs::read(data().join("expected").join(f)).expect("expected");
    assert_eq!(got("out.bin"), out, "out against the model");
    assert_eq!(got("vout.bin"), vout, "vout against the model");
    assert_eq!(got("out.bin"), pocl("out.bin"), "out against pocl");
    assert_eq!(got("vout.bin"), pocl("vout.bin"), "vout against pocl");
}

/// The one-line form of `typed.launch.json`.
fn one_line_args() -> Vec<String> {
    let input = text(&data().join("in.bin"));
    let mut args: Vec<String> =
        ["tests/data/source/typed.cl", "--kernel", "typed_mix", "--global", "64", "--local", "16"]
            .map(String::from)
            .to_vec();
    for a in [
        format!("in=@{input}"),
        "out=zeros".into(),
        "scale=0.5".into(),
        "n=50".into(),
        "v=1,-2,3,-4".into(),
        "vout=zeros:64".into(),
        "tmp=64".into(),
        "c=200".into(),
        "s=-300".into(),
        "l=0x500000007".into(),
    ] {
        args.extend(["--arg".to_string(), a]);
    }
    args
}

#[test]
fn a_source_launch_file_runs_and_matches_the_model() {
    if !have_ocloc() {
        return;
    }
    for jobs in ["1", "2"] {
        let dir = scratch(&format!("file{jobs}"));
        let r = vdb(&["run", "tests/data/source/typed.launch.json", "--out", &text(&dir), "-j", jobs]);
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(r.out.contains("finished:"), "{}", r.out);
        assert_outputs(&dir);
    }
    let dir = scratch("file_record");
    let r = vdb(&["run", "tests/data/source/typed.launch.json", "--out", &text(&dir), "--record"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_outputs(&dir);
}

/// A `__constant` table makes IGC add a kernel of its own (the program's symbol table):
/// the source still has one kernel, which runs without `--kernel`, and `vdb new` too.
#[test]
fn a_constant_table_adds_no_kernel_to_choose() {
    if !have_ocloc() {
        return;
    }
    let dir = scratch("constant_table");
    let cl = dir.join("lut.cl");
    std::fs::write(
        &cl,
        "__constant int T[8] = {3, 1, 4, 1, 5, 9, 2, 6};\n__kernel void lut(__global int* out) {\n  uint g = get_global_id(0);\n  out[g] = T[g % 8] * 2 + (int)g;\n}\n",
    )
    .expect("write");
    let out = dir.join("out");
    let r = vdb(&["run", &text(&cl), "--global", "32", "--arg", "out=zeros", "--out", &text(&out)]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let got = std::fs::read(out.join("out/out.bin")).expect("out.bin");
    let table = [3, 1, 4, 1, 5, 9, 2, 6];
    let want: Vec<u8> = (0..32).flat_map(|g| (table[g % 8] * 2 + g as i32).to_le_bytes()).collect();
    assert_eq!(got, want);
    let r = vdb(&["new", &text(&cl)]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(dir.join("lut.launch.json").is_file(), "{}", r.out);
}

#[test]
fn the_one_line_form_means_what_the_launch_fields_mean() {
    if !have_ocloc() {
        return;
    }
    let dir = scratch("line");
    let mut args = vec!["run".to_string()];
    args.extend(one_line_args());
    args.extend(["--out".to_string(), text(&dir)]);
    let r = vdb(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.err);
    assert_outputs(&dir);
    // The other kernel of the file, with the default work-group size and a build option.
    let dir = scratch("line_add");
    let cl = "tests/data/source/typed.cl";
    let r = vdb(&[
        "run",
        cl,
        "--kernel",
        "add_k",
        "--global",
        "48",
        "--arg",
        "a=zeros",
        "--arg",
        "k=-7",
        "--out",
        &text(&dir),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let a = std::fs::read(dir.join("out/a.bin")).expect("a.bin");
    assert_eq!(a, (-7i32).to_le_bytes().repeat(48));
    let r = vdb(&[
        "run",
        cl,
        "--kernel",
        "add_k",
        "--global",
        "8",
        "--arg",
        "a=1,2,3,4,5,6,7,8",
        "--arg",
        "k=2",
        "--build-options",
        "-DFACTOR=10",
        "--out",
        &text(&dir),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let a = std::fs::read(dir.join("out/a.bin")).expect("a.bin");
    let want: Vec<u8> = (1..=8).flat_map(|x: i32| (x + 20).to_le_bytes()).collect();
    assert_eq!(a, want);
}

#[test]
fn batch_and_trace_take_source_launches() {
    if !have_ocloc() {
        return;
    }
    let dir = scratch("batch");
    let script = dir.join("s.vdb");
    std::fs::write(&script, "continue\ninfo args\n").expect("script");
    let r = vdb(&["batch", "tests/data/source/typed.launch.json", "--script", &text(&script)]);
    assert_eq!(r.code, 0, "{}", r.err);
    for needle in ["float scale", "= 0.5", "uint n", "= 50", "short s", "= -300", "local, 64 bytes"] {
        assert!(r.out.contains(needle), "`{needle}` not in:\n{}", r.out);
    }
    let trace = dir.join("t.jsonl");
    let mut args = vec!["trace".to_string()];
    args.extend(one_line_args());
    args.extend(["-o".to_string(), text(&trace)]);
    let r = vdb(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.err);
    let lines = std::fs::read_to_string(&trace).expect("trace");
    assert!(lines.lines().count() > 100, "{} steps", lines.lines().count());
}

#[test]
fn compiler_errors_exit_2_with_the_compilers_file_and_line() {
    if !have_ocloc() {
        return;
    }
    let r = vdb(&["run", "tests/data/source/broken.cl", "--global", "16", "--arg", "a=zeros"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("tests/data/source/broken.cl:4:10: error: use of undeclared identifier"),
        "{}",
        r.err
    );
    assert!(r.err.contains("ocloc could not compile it for skl"), "{}", r.err);
    assert!(!r.err.contains("Command was"), "{}", r.err);
    let dir = scratch("broken_launch");
    std::fs::copy(data().join("broken.cl"), dir.join("broken.cl")).expect("copy");
    let launch = dir.join("broken.launch.json");
    std::fs::write(&launch, r#"{"source": "broken.cl", "global_size": [16], "args": []}"#).expect("write");
    let r = vdb(&["run", &text(&launch)]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("broken.cl:4:10: error"), "{}", r.err);
    // A device vdb does not run is refused before compiling, naming the field.
    let bad_device = dir.join("device.launch.json");
    std::fs::write(&bad_device, r#"{"source": "broken.cl", "device": "gen1", "global_size": [16]}"#)
        .expect("w");
    let r = vdb(&["run", &text(&bad_device)]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("field `device`") && r.err.contains("gen1") && r.err.contains("pvc"), "{}", r.err);
}

/// `typed.launch.json` with `args[at]` replaced by `entry`, in `dir`.
fn launch_with(dir: &Path, at: usize, entry: serde_json::Value) -> String {
    let original = std::fs::read_to_string(data().join("typed.launch.json")).expect("launch");
    let mut v: serde_json::Value = serde_json::from_str(&original).expect("json");
    v["source"] = serde_json::json!(text(&data().join("typed.cl")));
    v["args"][0]["file"] = serde_json::json!(text(&data().join("in.bin")));
    v["args"][at] = entry;
    let path = dir.join(format!("bad{at}.json"));
    std::fs::write(&path, v.to_string()).expect("write");
    text(&path)
}

#[test]
fn arguments_that_do_not_fit_exit_2_naming_the_argument() {
    if !have_ocloc() {
        return;
    }
    let dir = scratch("badargs");
    let cases = [
        (3, serde_json::json!({"name": "n", "bytes": "05"}), "args[3].bytes", "`n` (uint)"),
        (3, serde_json::json!({"name": "count", "value": 5}), "args[3].name", "no argument `count`"),
        (4, serde_json::json!({"name": "v", "value": [1, 2]}), "args[4].value", "`v` (int4)"),
        (7, serde_json::json!({"name": "c", "value": 300}), "args[7].value", "`c` (uchar)"),
        (6, serde_json::json!({"name": "tmp", "local": 10}), "args[6].local", "`tmp` (__local int*)"),
        (5, serde_json::json!({"name": "vout", "values": [1, 2, 3]}), "args[5].values", "`vout`"),
        (2, serde_json::json!({"name": "scale", "type": "double", "value": 1}), "args[2].type", "`float`"),
    ];
    for (at, entry, field, needle) in cases {
        let r = vdb(&["run", &launch_with(&dir, at, entry), "--out", &text(&dir)]);
        assert_eq!(r.code, 2, "{field}: {}", r.err);
        assert!(r.err.contains(&format!("field `{field}")), "{field}: {}", r.err);
        assert!(r.err.contains(needle), "`{needle}` not in: {}", r.err);
    }
    // On the command line, the error names the --arg.
    let mut args = vec!["run".to_string()];
    args.extend(one_line_args().into_iter().map(|a| if a == "n=50" { "n=-1".into() } else { a }));
    let r = vdb(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("--arg n=-1") && r.err.contains("does not fit in a uint"), "{}", r.err);
}

#[test]
fn vdb_new_writes_a_skeleton_naming_every_argument_that_runs() {
    if !have_ocloc() {
        return;
    }
    let dir = scratch("new");
    std::fs::copy(data().join("typed.cl"), dir.join("typed.cl")).expect("copy");
    let cl = text(&dir.join("typed.cl"));
    let r = vdb(&["new", &cl]);
    assert_eq!(r.code, 2, "two kernels: one must be chosen");
    assert!(r.err.contains("typed_mix, add_k"), "{}", r.err);
    let r = vdb(&["new", &cl, "--kernel", "typed_mix"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let path = dir.join("typed_mix.launch.json");
    let skeleton = std::fs::read_to_string(&path).expect("skeleton");
    let v: serde_json::Value = serde_json::from_str(&skeleton).expect("valid JSON");
    assert_eq!(v["source"], "typed.cl");
    let named: Vec<(&str, &str)> = v["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| (a["name"].as_str().unwrap_or(""), a["type"].as_str().unwrap_or("")))
        .collect();
    let want = [
        ("in", "__global float*"),
        ("out", "__global float*"),
        ("scale", "float"),
        ("n", "uint"),
        ("v", "int4"),
        ("vout", "__global int4*"),
        ("tmp", "__local int*"),
        ("c", "uchar"),
        ("s", "short"),
        ("l", "long"),
    ];
    assert_eq!(named, want, "{skeleton}");
    // One argument a line, and it runs as written.
    assert_eq!(skeleton.lines().filter(|l| l.trim_start().starts_with("{\"name\"")).count(), want.len());
    let r = vdb(&["run", &text(&path)]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(dir.join("out/out.bin").is_file());
    let r = vdb(&["new", &cl, "--kernel", "typed_mix"]);
    assert_eq!(r.code, 2, "an existing file is kept");
    assert!(r.err.contains("--force"), "{}", r.err);
    let other = dir.join("elsewhere.json");
    let r = vdb(&["new", &cl, "--kernel", "add_k", "--device", "tgllp", "-o", &text(&other)]);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&other).expect("read")).expect("json");
    assert_eq!((v["kernel"].as_str(), v["device"].as_str()), (Some("add_k"), Some("tgllp")));
}

/// Entries of the build cache under `cache`.
fn cache_entries(cache: &Path) -> Vec<String> {
    let dir = cache.join("vdb/ocloc");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn builds_are_cached_by_source_options_and_device() {
    if !have_ocloc() {
        return;
    }
    let cache = scratch("cache");
    let dir = scratch("cache_out");
    let out = text(&dir);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "tests/data/source/typed.cl", "--kernel", "add_k", "--global", "16"];
        args.extend(["--arg", "a=zeros", "--arg", "k=1", "--out", &out]);
        args.extend(extra);
        let r = vdb_with(&cache, &args, &[]);
        assert_eq!(r.code, 0, "{}", r.err);
        std::fs::read(dir.join("out/a.bin")).expect("a.bin")[..4].to_vec()
    };
    assert_eq!(run(&[]), 1i32.to_le_bytes());
    let first = cache_entries(&cache);
    assert_eq!(first.len(), 1, "{first:?}");
    let started = Instant::now();
    assert_eq!(run(&[]), 1i32.to_le_bytes());
    assert_eq!(cache_entries(&cache), first, "the second run is a cache hit");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(run(&["--build-options", "-DFACTOR=3"]), 3i32.to_le_bytes());
    assert_eq!(run(&["--device", "acm-g10"]), 1i32.to_le_bytes());
    let all = cache_entries(&cache);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all.iter().all(|e| !e.starts_with("tmp-")), "temporary build folders left: {all:?}");
    let entry = cache.join("vdb/ocloc").join(&first[0]);
    assert!(entry.join("program.zebin").is_file() && entry.join("dump").is_dir());
}

/// Not a compiler test: without ocloc, one message says what to install; the command-line
/// launch flags go with a .cl file only; a .cl file needs its launch.
#[test]
fn without_ocloc_one_message_says_what_to_install() {
    let r = vdb_with(
        &shared_cache(),
        &["run", "tests/data/source/typed.cl", "--global", "4"],
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(r.err.contains("ocloc") && r.err.contains("intel-opencl-icd"), "{}", r.err);
    let r = vdb_with(
        &shared_cache(),
        &["run", "tests/data/source/typed.launch.json"],
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("intel-opencl-icd"), "{}", r.err);
    let r = vdb(&["run", "sample-kernels/shared/k24_local_arg/skl.launch.json", "--global", "4"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("go with a .cl file"), "{}", r.err);
    let r = vdb(&["run", "tests/data/source/typed.cl"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("--global") && r.err.contains("vdb new"), "{}", r.err);
}

#[test]
fn the_debugger_opens_a_cl_file() {
    if !have_ocloc() {
        return;
    }
    let args = one_line_args();
    let screen = tui_screen(&args.iter().map(String::as_str).collect::<Vec<_>>(), "typed_mix");
    assert!(screen.contains("typed_mix"), "{screen}");
}

/// `vdb run --check races|uninit|all` on kernels of the project's own (`tests/data/races/`): a
/// write-write race between work-groups, two lanes of one scatter writing one element, SLM
/// reads racing with other threads' writes without a barrier, and none with it; reads of
/// SLM or private memory nothing wrote. Each report
/// names both accesses (steps, lanes, work-items, source lines), exit 1; `--stats` counts the
/// reports.
#[test]
fn race_checks_report_each_kind_of_race_and_none_past_a_barrier() {
    if !have_ocloc() {
        return;
    }
    let races = root().join("tests/data/races");
    let kernel = |name: &str| text(&races.join(name));
    let stats = |r: &Run| -> serde_json::Value {
        serde_json::from_str(r.out.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {}", r.out))
    };
    let input: String = (1..=128).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let check = |k: &str, extra: &[&str]| {
        let mut args = vec!["run", k, "--check", "races", "--stats"];
        args.extend_from_slice(extra);
        vdb(&args)
    };

    // Work-groups 0..3 each write out[0]: every later group's write races with the first's.
    let r = check(&kernel("two_groups.cl"), &["--global", "256", "--local", "64", "--arg", "out=zeros:4"]);
    assert_eq!(r.code, 1, "{}{}", r.out, r.err);
    assert!(r.out.contains("write-write race on global"), "{}", r.out);
    assert!(r.out.contains("work-item 0: writes") && r.out.contains("work-item 64: writes"), "{}", r.out);
    assert!(r.out.contains("two_groups.cl:4"), "{}", r.out);
    assert_eq!(stats(&r)["races"], 1, "{}", r.out);
    assert_eq!(stats(&r)["racing_pairs"], 3, "{}", r.out);

    // Work-items 2k and 2k+1 write out[k] in one store: both accesses are one step.
    let r = check(&kernel("scatter_collide.cl"), &["--global", "64", "--arg", "out=zeros:32"]);
    assert_eq!(r.code, 1, "{}{}", r.out, r.err);
    let steps: Vec<&str> = r.out.lines().filter_map(|l| l.trim().strip_prefix("step ")).collect();
    assert!(steps.len() >= 2, "{}", r.out);
    let step_of = |l: &str| l.split_whitespace().next().map(str::to_string);
    assert_eq!(step_of(steps[0]), step_of(steps[1]), "{}", r.out);
    assert!(steps[0].contains("lane 0,") && steps[1].contains("lane 1,"), "{}", r.out);
    assert_eq!(stats(&r)["racing_pairs"], 32, "{}", r.out);

    // Without the barrier, each read of local memory races with another thread's write.
    let (i, o) = (format!("in={input}"), "out=zeros".to_string());
    let geometry = ["--global", "128", "--local", "64", "--arg", &i, "--arg", &o];
    let r = check(&kernel("local_shift.cl"), &geometry);
    assert_eq!(r.code, 1, "{}{}", r.out, r.err);
    assert!(r.out.contains("write then read race on SLM of work-group 0"), "{}", r.out);
    assert!(r.out.contains("local_shift.cl:11") && r.out.contains("local_shift.cl:7"), "{}", r.out);
    let mut with_barrier = geometry.to_vec();
    with_barrier.push("--build-options=-DSHIFT_BARRIER");
    let r = check(&kernel("local_shift.cl"), &with_barrier);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert_eq!(stats(&r)["races"], 0, "{}", r.out);

    // `vdb run KERNEL --check WHAT --stats` over `geometry`.
    let check_geometry = |kernel: &str, what: &str| {
        let mut args = vec!["run", kernel, "--check", what, "--stats"];
        args.extend_from_slice(&geometry);
        vdb(&args)
    };
    // Exit 1, no race and two reports of reads nothing wrote before.
    let two_uninit_reports = |r: &Run| {
        assert_eq!(r.code, 1, "{}{}", r.out, r.err);
        let counts = (stats(r)["races"].as_u64(), stats(r)["uninit_reads"].as_u64());
        assert_eq!(counts, (Some(0), Some(2)), "{}", r.out);
    };

    // The second half of each group reads local memory only the first half wrote: no race
    // (a barrier between), but reads of uninitialised SLM, one report per gather, each lane
    // of both groups counted.
    let r = check_geometry("tests/data/races/uninit_slm.cl", "all");
    two_uninit_reports(&r);
    assert!(r.out.contains("read of uninitialised SLM of work-group 0 + 0x80 (32 reads)"), "{}", r.out);
    assert!(r.out.contains("work-item 32: reads at uninit_slm.cl:8"), "{}", r.out);
    assert_eq!(check_geometry("tests/data/races/uninit_slm.cl", "races").code, 0);

    // A private array IGC puts in scratch memory: each thread has its own slot of the
    // scratch surface (no race between them), the written half reads back what the model
    // says, and reads of the unwritten half (inputs from 64 on) are reported per gather:
    // 64 work-items, the first of them work-item 63 in thread 1.
    let r = check_geometry("tests/data/races/uninit_private.cl", "all");
    two_uninit_reports(&r);
    let reads: u64 = r
        .out
        .lines()
        .filter(|l| l.starts_with("read of uninitialised private memory of thread "))
        .filter_map(|l| l.split(" (").nth(1)?.split(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(reads, 64, "{}", r.out);
    assert!(r.out.contains("thread 1 lane 31, work-item 63: reads at uninit_private.cl:7"), "{}", r.out);
    let dir = scratch("uninit_private");
    let out_dir = dir.display().to_string();
    let mut args = vec!["run", "tests/data/races/uninit_private.cl", "--out", &out_dir];
    args.extend_from_slice(&geometry);
    let r = vdb(&args);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let bytes = std::fs::read(dir.join("out/out.bin")).expect("out.bin");
    let out: Vec<i32> = bytes.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let input: Vec<i32> = (1..=128).collect();
    for (gid, &got) in out.iter().enumerate() {
        let at = ((input[gid] * 2) & 255) as usize;
        if at < 128 {
            assert_eq!(got, at as i32 * 3 + input[(gid + at) % 128], "work-item {gid}");
        }
    }

    // The same array in a function IGC compiles as a stack call: it lives on the stack, in
    // stateless private memory (a slot per thread, found from `%hw_id` on skl and tgllp, from
    // `%sr0` on acm-g10). The same 64 reads are reported, the same outputs come back, and
    // the threads' stacks neither race nor overlap.
    let options = "--build-options=-igc_opts 'FunctionControl=3,ForceInlineStackCallWithImplArg=0'";
    for device in ["--device=skl", "--device=tgllp", "--device=acm-g10"] {
        let mut args =
            vec!["run", "tests/data/races/uninit_stack.cl", "--check", "all", "--stats", options, device];
        args.extend_from_slice(&geometry);
        let r = vdb(&args);
        assert_eq!(r.code, 1, "{device}: {}{}", r.out, r.err);
        let counts = (stats(&r)["races"].as_u64(), stats(&r)["uninit_reads"].as_u64());
        assert_eq!(counts, (Some(0), Some(1)), "{device}: {}", r.out);
        assert!(r.out.contains("read of uninitialised stack of thread "), "{device}: {}", r.out);
        let where_ = "work-item 63: reads at uninit_stack.cl:8";
        assert!(r.out.contains("(64 reads)") && r.out.contains(where_), "{device}: {}", r.out);
        let dir = scratch(&format!("uninit_stack_{device}"));
        let out_dir = dir.display().to_string();
        let mut args = vec!["run", "tests/data/races/uninit_stack.cl", "--out", &out_dir, options, device];
        args.extend_from_slice(&geometry);
        let r = vdb(&args);
        assert_eq!(r.code, 0, "{device}: {}{}", r.out, r.err);
        let bytes = std::fs::read(dir.join("out/out.bin")).expect("out.bin");
        let got: Vec<i32> = bytes.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        for (gid, &got) in got.iter().enumerate() {
            let at = ((input[gid] * 2) & 255) as usize;
            if at < 128 {
                assert_eq!(got, at as i32 * 3 + input[(gid + at) % 128], "{device}: work-item {gid}");
            }
        }
    }
}

/// Runs the debugger in a pseudo-terminal until `needle` shows, then quits; the screen.
fn tui_screen(args: &[&str], needle: &str) -> String {
    use portable_pty::{native_pty_system, CommandBuilder, PtySize};
    let pair = native_pty_system()
        .openpty(PtySize { rows: 44, cols: 140, pixel_width: 0, pixel_height: 0 })
        .expect("pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_vdb"));
    cmd.args(args);
    cmd.cwd(root());
    cmd.env("TERM", "xterm-256color");
    cmd.env("XDG_CACHE_HOME", shared_cache());
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut parser = vt100::Parser::new(44, 140, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !parser.screen().contents().contains(needle) && Instant::now() < deadline {
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(50)) {
            parser.process(&bytes);
        }
    }
    let screen = parser.screen().contents();
    let _ = writer.write_all(b"q");
    let _ = writer.flush();
    std::thread::sleep(Duration::from_millis(300));
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    screen
}
