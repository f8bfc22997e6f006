//! `vdb record` and `vdb replay`: C host programs (built here with the system's C compiler)
//! and a PyOpenCL script run with vdb as their OpenCL platform, their output equal to the
//! same programs on pocl; each launch of a multi-pass reduction replays to the bytes the
//! program got; unimplemented calls return error codes. They need ocloc, a C compiler, the
//! ICD loader (ocl-icd) and pocl: without them they say so and pass, unless
//! `VDB_REQUIRE_OCLOC` is set (CI, where `.ci/run` installs them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vdb() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vdb"))
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opencl")
}

fn on_path(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(name).is_file())
}

const POCL_ICD: &str = "/etc/OpenCL/vendors/pocl.icd";
const LOADER: &str = "/usr/lib/x86_64-linux-gnu/libOpenCL.so";

/// Whether everything these tests need is here; if not, says what is missing (or fails,
/// in CI).
fn ready(test: &str) -> bool {
    let missing: Vec<&str> = [
        ("ocloc", on_path("ocloc")),
        ("cc", on_path("cc")),
        ("libOpenCL.so (ocl-icd-opencl-dev)", Path::new(LOADER).exists()),
        ("pocl (pocl-opencl-icd)", Path::new(POCL_ICD).exists()),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(n, _)| *n)
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(std::env::var_os("VDB_REQUIRE_OCLOC").is_none(), "{test}: missing {}", missing.join(", "));
    eprintln!("SKIPPED {test}: missing {}", missing.join(", "));
    false
}

/// A fresh folder for one test, under the target folder's `tmp/` (Cargo's for integration
/// tests), so runs reuse it rather than leave folders behind.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("record-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Builds `tests/opencl/NAME.c` into `dir`.
fn build_c(name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(name);
    let src = sources().join(format!("{name}.c"));
    let out =
        Command::new("cc").arg("-O1").arg("-o").arg(&exe).arg(&src).arg("-lOpenCL").output().expect("cc");
    assert!(out.status.success(), "cc {}: {}", src.display(), String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs `program` on pocl alone.
fn on_pocl(program: &[&str], dir: &Path) -> Output {
    let vendors = dir.join("pocl-vendors");
    std::fs::create_dir_all(&vendors).expect("vendors dir");
    std::fs::copy(POCL_ICD, vendors.join("pocl.icd")).expect("pocl.icd");
    Command::new(program[0])
        .args(&program[1..])
        .env("OCL_ICD_VENDORS", &vendors)
        .env_remove("OCL_ICD_FILENAMES")
        .current_dir(dir)
        .output()
        .expect("run on pocl")
}

/// `vdb record -o DIR/rec -- program`, with the build cache in DIR.
fn record(program: &[&str], dir: &Path, extra: &[&str]) -> Output {
    Command::new(vdb())
        .arg("record")
        .args(extra)
        .arg("-o")
        .arg(dir.join("rec"))
        .arg("--")
        .args(program)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .current_dir(dir)
        .output()
        .expect("vdb record")
}

fn vdb_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(vdb())
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .current_dir(dir)
        .output()
        .expect("vdb")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_c_program_gets_what_pocl_gives_and_its_launch_replays() {
    if !ready("a_c_program_gets_what_pocl_gives_and_its_launch_replays") {
        return;
    }
    let dir = scratch("vecadd");
    let exe = build_c("vecadd", &dir);
    let exe = exe.to_str().expect("path");
    let pocl = on_pocl(&[exe], &dir);
    assert!(pocl.status.success(), "on pocl: {}", text(&pocl.stdout));
    let rec = record(&[exe], &dir, &["--device", "tgllp"]);
    assert!(rec.status.success(), "recorded: {}{}", text(&rec.stdout), text(&rec.stderr));
    assert_eq!(text(&rec.stdout), text(&pocl.stdout));
    assert!(text(&rec.stderr).contains("device: vdb (emulating Intel tgllp)"), "{}", text(&rec.stderr));
    let list = vdb_in(&dir, &["replay", "rec"]);
    let listed = text(&list.stdout);
    assert!(listed.contains("vadd") && listed.contains("1024") && listed.contains("64"), "{listed}");
    let check = vdb_in(&dir, &["replay", "rec", "0", "--check"]);
    assert!(check.status.success(), "{}{}", text(&check.stdout), text(&check.stderr));
    assert!(text(&check.stdout).contains("every output equals"), "{}", text(&check.stdout));
    // The launch folder opens in batch, with the argument names.
    std::fs::write(dir.join("script"), "info args\n").expect("script");
    let batch = vdb_in(&dir, &["batch", "rec/0000-vadd", "--script", "script"]);
    let out = text(&batch.stdout);
    assert!(out.contains("float k") && out.contains("= 2"), "{out}{}", text(&batch.stderr));
}

#[test]
fn every_launch_of_a_multi_pass_reduction_replays_to_the_bytes_the_program_got() {
    if !ready("every_launch_of_a_multi_pass_reduction_replays_to_the_bytes_the_program_got") {
        return;
    }
    let dir = scratch("reduce");
    let exe = build_c("reduce", &dir);
    let exe = exe.to_str().expect("path");
    let pocl = on_pocl(&[exe], &dir);
    assert!(pocl.status.success(), "on pocl: {}", text(&pocl.stdout));
    let rec = record(&[exe], &dir, &[]);
    assert!(rec.status.success(), "recorded: {}{}", text(&rec.stdout), text(&rec.stderr));
    assert_eq!(text(&rec.stdout), text(&pocl.stdout));
    let listed = text(&vdb_in(&dir, &["replay", "rec"]).stdout);
    let kernels: Vec<&str> = listed.lines().skip(1).filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert_eq!(kernels, ["square", "partial_sum", "partial_sum"], "{listed}");
    for n in ["0", "1", "2"] {
        let check = vdb_in(&dir, &["replay", "rec", n, "--check"]);
        assert!(check.status.success(), "launch {n}: {}{}", text(&check.stdout), text(&check.stderr));
    }
    let nth = vdb_in(&dir, &["replay", "rec", "--kernel", "partial_sum", "--nth", "1", "--check"]);
    assert!(nth.status.success(), "{}", text(&nth.stderr));
    // --only keeps one kernel's launches; the program's results are the same.
    let only = record(&[exe], &dir, &["--force", "--only", "square"]);
    assert_eq!(text(&only.stdout), text(&pocl.stdout));
    let listed = text(&vdb_in(&dir, &["replay", "rec"]).stdout);
    assert_eq!(listed.lines().count(), 2, "{listed}");
}

#[test]
fn unimplemented_calls_return_error_codes() {
    if !ready("unimplemented_calls_return_error_codes") {
        return;
    }
    let dir = scratch("unsupported");
    let exe = build_c("unsupported", &dir);
    let rec = record(&[exe.to_str().expect("path")], &dir, &[]);
    let out = text(&rec.stdout);
    assert!(rec.status.success(), "{out}{}", text(&rec.stderr));
    assert!(out.contains("clCreateImage: -59 NULL"), "{out}");
    assert!(out.contains("clCreateUserEvent: -59 NULL"), "{out}");
    assert!(out.contains("clReleaseContext: 0"), "{out}");
    assert!(text(&rec.stderr).contains("clCreateImage is not implemented by vdb"), "{}", text(&rec.stderr));
}

#[test]
fn a_pyopencl_script_gets_what_pocl_gives() {
    if !ready("a_pyopencl_script_gets_what_pocl_gives") {
        return;
    }
    let python = if on_path("python3") { "python3" } else { "python" };
    let has = Command::new(python).args(["-c", "import pyopencl"]).output();
    if !has.is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("VDB_REQUIRE_OCLOC").is_none(), "pyopencl is not installed");
        eprintln!("SKIPPED a_pyopencl_script_gets_what_pocl_gives: pyopencl is not installed");
        return;
    }
    let dir = scratch("pyopencl");
    let script = sources().join("saxpy.py");
    let script = script.to_str().expect("path");
    let pocl = on_pocl(&[python, script], &dir);
    assert!(pocl.status.success(), "on pocl: {}{}", text(&pocl.stdout), text(&pocl.stderr));
    let rec = record(&[python, script], &dir, &[]);
    assert!(rec.status.success(), "recorded: {}{}", text(&rec.stdout), text(&rec.stderr));
    assert_eq!(text(&rec.stdout), text(&pocl.stdout));
    let check = vdb_in(&dir, &["replay", "rec", "--kernel", "saxpy", "--check"]);
    assert!(check.status.success(), "{}", text(&check.stderr));
}

#[test]
fn a_faulting_kernel_is_named_and_clfinish_fails() {
    if !ready("a_faulting_kernel_is_named_and_clfinish_fails") {
        return;
    }
    let dir = scratch("fault");
    let exe = build_c("fault", &dir);
    let rec = record(&[exe.to_str().expect("path")], &dir, &[]);
    let (out, err) = (text(&rec.stdout), text(&rec.stderr));
    assert!(rec.status.success(), "{out}{err}");
    assert!(out.contains("enqueue: 0\nevent status: -5\nclFinish: -5\n"), "{out}");
    assert!(err.contains("launch 0 (wild) faulted") && err.contains("unmapped SVM memory"), "{err}");
}
