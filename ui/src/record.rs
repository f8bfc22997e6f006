//! `vdb record` runs an unmodified OpenCL program with vdb as its only OpenCL platform (the
//! `vdb-icd` library beside this executable, handed to the system's ICD loader through
//! `OCL_ICD_VENDORS`), which saves every kernel launch; `vdb replay` lists the launches of a
//! recording and opens (or checks) one.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::commands::{EXIT_BAD_LAUNCH, EXIT_DIAGNOSTICS, EXIT_OK};

/// What `vdb record` was asked.
pub struct RecordArgs<'a> {
    pub device: &'a str,
    pub output: &'a Path,
    pub only: Option<&'a str>,
    pub force: bool,
    pub program: &'a [String],
}

const ICD_LIB: &str = "libvdb_icd.so";

/// The ICD library: beside this executable (cargo puts the workspace's cdylib there).
fn icd_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the vdb executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // Beside it in target/<profile>/, or in deps/ when vdb-ui's tests had it built.
    let candidates = [dir.join(ICD_LIB), dir.join("deps").join(ICD_LIB)];
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "vdb's OpenCL library {ICD_LIB} is not beside {} (build it: cargo build -p vdb-icd)",
            exe.display()
        )
    })
}

/// The launch folders of a recording (`NNNN-KERNEL`), in launch order.
fn launch_dirs(dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("launch.json").is_file())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let (number, _) = name.split_once('-')?;
            Some((number.parse().ok()?, p))
        })
        .collect();
    found.sort();
    found
}

/// Makes `dir` ready: new, or an old recording that `--force` lets go.
fn prepare_output(dir: &Path, force: bool) -> Result<(), String> {
    let old = launch_dirs(dir);
    if !old.is_empty() && !force {
        return Err(format!(
            "{} already holds a recording ({} launches): remove it, choose another with -o, or pass --force",
            dir.display(),
            old.len()
        ));
    }
    for (_, p) in old {
        std::fs::remove_dir_all(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// `vdb record`: the program's exit code (or 2 when it cannot be started).
pub fn record(args: &RecordArgs) -> u8 {
    match try_record(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_BAD_LAUNCH
        }
    }
}

fn try_record(args: &RecordArgs) -> Result<u8, String> {
    if vdb::launch::Platform::from_device_name(args.device).is_none() {
        return Err(vdb::launch::Platform::unknown_device(args.device));
    }
    let Some((program, program_args)) = args.program.split_first() else {
        return Err("give the program to run: vdb record [OPTIONS] -- PROGRAM ARGS...".into());
    };
    let library = icd_library()?;
    prepare_output(args.output, args.force)?;
    let output = std::fs::canonicalize(args.output).unwrap_or_else(|_| args.output.to_path_buf());
    // The loader reads every *.icd file of OCL_ICD_VENDORS: a folder holding only vdb's
    // keeps the system's platforms (pocl, Intel's) out of the program's sight.
    let vendors = std::env::temp_dir().join(format!("vdb-record-{}", std::process::id()));
    std::fs::create_dir_all(&vendors).map_err(|e| format!("cannot create {}: {e}", vendors.display()))?;
    std::fs::write(vendors.join("vdb.icd"), format!("{}\n", library.display()))
        .map_err(|e| format!("cannot write {}: {e}", vendors.display()))?;
    let mut cmd = Command::new(program);
    cmd.args(program_args)
        .env("OCL_ICD_VENDORS", &vendors)
        .env("OPENCL_VENDOR_PATH", &vendors)
        .env_remove("OCL_ICD_FILENAMES")
        .env("VDB_DEVICE", args.device)
        .env("VDB_RECORD_DIR", &output);
    match args.only {
        Some(k) => cmd.env("VDB_RECORD_ONLY", k),
        None => cmd.env_remove("VDB_RECORD_ONLY"),
    };
    let status = cmd.status();
    let _ = std::fs::remove_dir_all(&vendors);
    let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
    let n = launch_dirs(&output).len();
    eprintln!(
        "vdb: recorded {n} launch(es) in {} (`vdb replay {}` lists them)",
        output.display(),
        args.output.display()
    );
    Ok(status.code().map_or(EXIT_DIAGNOSTICS, |c| c.clamp(0, 255) as u8))
}

/// One saved launch, as listed.
struct Entry {
    number: u32,
    dir: PathBuf,
    kernel: String,
    global: String,
    local: String,
}

fn entries(dir: &Path) -> Vec<Entry> {
    let sizes = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .map_or("-".into(), |a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
    };
    launch_dirs(dir)
        .into_iter()
        .map(|(number, path)| {
            let text = vdb::launch::raw::read_text(&path.join("launch.json")).unwrap_or_default();
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let kernel = v.get("kernel").and_then(Value::as_str).unwrap_or("?").to_string();
            Entry {
                number,
                kernel,
                global: sizes(&v, "global_size"),
                local: sizes(&v, "local_size"),
                dir: path,
            }
        })
        .collect()
}

/// Which launch `vdb replay` was asked for.
pub struct Choice<'a> {
    pub number: Option<u32>,
    pub kernel: Option<&'a str>,
    pub nth: usize,
}

/// The launch folder chosen, or the message to print.
pub fn choose(dir: &Path, choice: &Choice) -> Result<PathBuf, String> {
    let all = entries(dir);
    if all.is_empty() {
        return Err(format!(
            "{} holds no recorded launches (vdb record -o {} -- PROGRAM)",
            dir.display(),
            dir.display()
        ));
    }
    let found = match (choice.number, choice.kernel) {
        (Some(n), _) => all.iter().find(|e| e.number == n),
        (None, Some(k)) => all.iter().filter(|e| e.kernel == k).nth(choice.nth),
        (None, None) => None,
    };
    found.map(|e| e.dir.join("launch.json")).ok_or_else(|| match (choice.number, choice.kernel) {
        (Some(n), _) => {
            format!("{}: no launch {n} (`vdb replay {}` lists them)", dir.display(), dir.display())
        }
        (None, Some(k)) => {
            format!("{}: no launch #{} of kernel `{k}` (counting from 0)", dir.display(), choice.nth)
        }
        _ => String::new(),
    })
}

/// `vdb replay DIR`: the list.
pub fn list(dir: &Path) -> u8 {
    let all = entries(dir);
    if all.is_empty() {
        eprintln!("error: {} holds no recorded launches", dir.display());
        return EXIT_BAD_LAUNCH;
    }
    say!("{:>5}  {:<24} {:<16} {:<12} launch file", "#", "kernel", "global", "local");
    for e in all {
        say!(
            "{:>5}  {:<24} {:<16} {:<12} {}",
            e.number,
            e.kernel,
            e.global,
            e.local,
            e.dir.join("launch.json").display()
        );
    }
    EXIT_OK
}

/// `vdb replay DIR N --check`: runs the launch and compares every output with the bytes the
/// program got (`recorded/`); 1 when one differs.
pub fn check(launch: &Path, schedule: vdb::exec::Schedule) -> u8 {
    let dir = launch.parent().unwrap_or(Path::new("."));
    let input = match crate::commands::resolve_input(launch, &Default::default(), schedule) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let jobs = std::num::NonZeroUsize::new(crate::commands::cores()).unwrap_or(std::num::NonZeroUsize::MIN);
    let code = crate::commands::run(&input, None, false, false, jobs, None);
    if code != EXIT_OK {
        return code;
    }
    let Ok(files) = std::fs::read_dir(dir.join("recorded")) else {
        eprintln!("error: {} has no recorded/ outputs to compare", dir.display());
        return EXIT_BAD_LAUNCH;
    };
    let mut differ = 0;
    for path in files.filter_map(|e| e.ok().map(|e| e.path())) {
        let name = path.file_name().unwrap_or_default();
        let got = std::fs::read(dir.join("out").join(name)).ok();
        if got.as_deref() != std::fs::read(&path).ok().as_deref() {
            eprintln!("differs: out/{} and recorded/{}", name.to_string_lossy(), name.to_string_lossy());
            differ += 1;
        }
    }
    if differ > 0 {
        return EXIT_DIAGNOSTICS;
    }
    say!("replayed: every output equals what the program got");
    EXIT_OK
}
