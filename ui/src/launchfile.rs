//! What every front end (`run`, `batch`, `trace`, the debugger) opens: a launch file of
//! compiled kernels, a `.visaasm` kernel, a source launch (`"source": "k.cl"`, compiled with
//! ocloc first), or a `.cl` file with the launch on the command line
//! (`--global 256 --local 64 --arg in=@in.bin --arg n=250 --arg out=zeros`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use vdb::launch::argtypes::Declared;
use vdb::launch::raw::{self, Launch, LaunchError};
use vdb::program::Program;

use crate::compile::{self, Compiled, Request};

/// The launch given on the command line with a `.cl` file.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct SourceFlags {
    /// With a .cl file: the kernel to run (default: its only one).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// With a .cl file: the device to compile for: skl (default), tgllp or acm-g10.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
    /// With a .cl file: OpenCL build options (`-DN=4`).
    #[arg(long = "build-options", value_name = "OPTIONS", allow_hyphen_values = true)]
    pub build_options: Option<String>,
    /// With a .cl file: the global size, `256` or `64,4` (1 to 3 dimensions).
    #[arg(long, value_name = "N[,N[,N]]")]
    pub global: Option<String>,
    /// With a .cl file: the work-group size (default: the largest that divides the global
    /// size and fits one hardware thread).
    #[arg(long, value_name = "N[,N[,N]]")]
    pub local: Option<String>,
    /// With a .cl file: the global offset.
    #[arg(long, value_name = "N[,N[,N]]")]
    pub offset: Option<String>,
    /// With a .cl file: one argument, NAME=VALUE: a number or a comma list (a vector, or a
    /// buffer's elements), @FILE (bytes from a file), zeros or zeros:COUNT (a buffer of zeros,
    /// one element per work-item by default), or the bytes of a __local pointer.
    #[arg(long = "arg", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub args: Vec<String>,
}

impl SourceFlags {
    fn any(&self) -> bool {
        self.kernel.is_some()
            || self.device.is_some()
            || self.build_options.is_some()
            || self.global.is_some()
            || self.local.is_some()
            || self.offset.is_some()
            || !self.args.is_empty()
    }
}

/// A launch ready to load (again: a plain run's other cores build their own start state),
/// and the schedule its work-groups run under (`--schedule`, `--seed`).
pub struct LaunchInput {
    target: Target,
    pub schedule: vdb::exec::Schedule,
}

/// What a launch is loaded from.
enum Target {
    /// A launch file, read by the engine.
    File(PathBuf),
    /// A kernel that needs no inputs.
    Kernel(PathBuf),
    /// A launch made here (a compiled source launch or the command-line form), paths
    /// relative to `base`, errors naming `label`.
    Spec { value: Value, base: PathBuf, label: String, flags: Vec<String> },
}

impl LaunchInput {
    pub fn load(&self, reuse: Option<&Arc<Program>>) -> Result<Launch, LaunchError> {
        let mut launch = match &self.target {
            Target::File(p) => raw::load_reusing(p, reuse),
            Target::Kernel(p) => raw::from_kernel(p),
            Target::Spec { value, base, label, flags } => {
                raw::load_value(value, base, label, reuse).map_err(|e| name_flag(e, flags))
            }
        }?;
        launch.scheduler.set_schedule(self.schedule);
        Ok(launch)
    }

    /// The name errors give the launch.
    pub fn label(&self) -> String {
        match &self.target {
            Target::File(p) | Target::Kernel(p) => p.display().to_string(),
            Target::Spec { label, .. } => label.clone(),
        }
    }
}

/// A target under the default (round-robin) schedule.
impl From<Target> for LaunchInput {
    fn from(target: Target) -> LaunchInput {
        LaunchInput { target, schedule: vdb::exec::Schedule::default() }
    }
}

/// An error about `args[N]` of a command-line launch names the `--arg` it came from.
fn name_flag(mut e: LaunchError, flags: &[String]) -> LaunchError {
    let n =
        e.field.as_deref().and_then(|f| f.strip_prefix("args[")?.split(']').next()?.parse::<usize>().ok());
    if let Some(text) = n.and_then(|n| flags.get(n)) {
        e.field = Some(format!("--arg {text}"));
    }
    e
}

/// What `path` (and the command-line launch flags) open; the error is the message to print.
pub fn resolve(path: &Path, flags: &SourceFlags) -> Result<LaunchInput, String> {
    // A launch folder of a recording (`vdb record`): its launch file.
    if path.is_dir() && path.join("launch.json").is_file() {
        return resolve(&path.join("launch.json"), flags);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "cl" {
        return command_line_launch(path, flags);
    }
    if flags.any() {
        return Err(format!(
            "{}: --kernel, --device, --build-options, --global, --local, --offset and --arg go with a .cl file",
            path.display()
        ));
    }
    if ext == "visaasm" || ext == "isaasm" {
        return Ok(Target::Kernel(path.to_path_buf()).into());
    }
    // Anything that does not read as a source launch goes to the engine, which says what is
    // wrong with it.
    let value = raw::read_text(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(t.trim_start_matches('\u{feff}')).ok());
    match value {
        Some(v) if v.get("source").is_some() => {
            let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
            source_launch(v, base, path.display().to_string())
        }
        _ => Ok(Target::File(path.to_path_buf()).into()),
    }
}

/// A string field of a source launch, if present.
fn text_field(obj: &Map<String, Value>, key: &str, label: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(LaunchError::new(label, Some(key), "must be a string").to_string()),
    }
}

/// A launch file with `source`: compiled, then turned into the compiled form the engine
/// reads (`kernel` the `.visaasm`, `zebin`, `functions`).
fn source_launch(value: Value, base: PathBuf, label: String) -> Result<LaunchInput, String> {
    let Value::Object(mut obj) = value else {
        return Err(LaunchError::new(&label, None, "a launch is a JSON object").to_string());
    };
    for key in ["zebin", "zeinfo", "functions"] {
        if obj.contains_key(key) {
            let msg = "a source launch compiles its own kernel files: leave this out";
            return Err(LaunchError::new(&label, Some(key), msg).to_string());
        }
    }
    let source = text_field(&obj, "source", &label)?.unwrap_or_default();
    let kernel = text_field(&obj, "kernel", &label)?;
    let device = text_field(&obj, "device", &label)?.unwrap_or_else(|| "skl".into());
    let options = text_field(&obj, "build_options", &label)?.unwrap_or_default();
    let source_path = base.join(&source);
    let build = build(&source_path, &device, &options, &label)?;
    let chosen = build
        .kernel(kernel.as_deref())
        .map_err(|m| LaunchError::new(&label, Some("kernel"), m).to_string())?;
    obj.remove("source");
    obj.remove("build_options");
    compiled_fields(&mut obj, &build, &chosen, &device);
    Ok(Target::Spec { value: Value::Object(obj), base, label, flags: Vec::new() }.into())
}

/// Compiles `source` for `device`, printing the compiler's warnings; the error names the
/// field to blame (`device`) or is the compiler's own messages.
fn build(source: &Path, device: &str, options: &str, label: &str) -> Result<Compiled, String> {
    if vdb::launch::Platform::from_device_name(device).is_none() {
        let msg = vdb::launch::Platform::unknown_device(device);
        return Err(LaunchError::new(label, Some("device"), msg).to_string());
    }
    if !source.is_file() {
        let msg = format!("cannot read {}: not a file", source.display());
        return Err(LaunchError::new(label, Some("source"), msg).to_string());
    }
    let built =
        compile::compile(&Request { source, device, options }).map_err(|e| e.render(source, device))?;
    if built.log.contains("warning") {
        eprintln!("{}", built.log.trim_end());
    }
    Ok(built)
}

fn compiled_fields(obj: &mut Map<String, Value>, build: &Compiled, k: &compile::Kernel, device: &str) {
    let text = |p: &Path| Value::String(p.to_string_lossy().into_owned());
    obj.insert("kernel".into(), text(&k.visaasm));
    obj.insert("zebin".into(), text(&build.zebin));
    obj.insert("functions".into(), Value::Array(k.functions.iter().map(|p| text(p)).collect()));
    obj.insert("device".into(), Value::String(device.to_string()));
}

/// `vdb k.cl --global ... --arg ...`: a source launch built from the flags, with paths
/// relative to the current folder. Writable `__global` buffers are written to
/// `out/NAME.bin`.
fn command_line_launch(path: &Path, flags: &SourceFlags) -> Result<LaunchInput, String> {
    let label = path.display().to_string();
    let Some(global) = &flags.global else {
        return Err(format!(
            "{label}: give the launch: --global N [--local N] --arg NAME=VALUE ..., or write a launch file with `vdb new {label}`"
        ));
    };
    let device = flags.device.clone().unwrap_or_else(|| "skl".into());
    let options = flags.build_options.clone().unwrap_or_default();
    let build = build(path, &device, &options, &label)?;
    let kernel = build.kernel(flags.kernel.as_deref()).map_err(|m| format!("{label}: --kernel: {m}"))?;
    let global = dims(global, "--global", &label)?;
    let local = match &flags.local {
        Some(l) => dims(l, "--local", &label)?,
        None => default_local(&global, kernel.simd),
    };
    let mut obj = Map::new();
    obj.insert("global_size".into(), json!(global));
    obj.insert("local_size".into(), json!(local));
    if let Some(o) = &flags.offset {
        obj.insert("global_offset".into(), json!(dims(o, "--offset", &label)?));
    }
    let info = build.info.misc_info(&kernel.name).map(|m| m.args_info.clone()).unwrap_or_default();
    let items: u64 = global.iter().product();
    let args: Result<Vec<Value>, String> =
        flags.args.iter().map(|a| line_arg(a, &info, items, &label)).collect();
    obj.insert("args".into(), Value::Array(args?));
    compiled_fields(&mut obj, &build, &kernel, &device);
    Ok(Target::Spec { value: Value::Object(obj), base: PathBuf::from("."), label, flags: flags.args.clone() }
        .into())
}

/// `256`, `64,4` or `16x16x2`.
fn dims(text: &str, flag: &str, label: &str) -> Result<Vec<u64>, String> {
    let parts: Result<Vec<u64>, _> = text.split([',', 'x']).map(|p| p.trim().parse::<u64>()).collect();
    match parts {
        Ok(v) if (1..=3).contains(&v.len()) => Ok(v),
        _ => Err(format!("{label}: {flag} `{text}`: give 1 to 3 sizes, like 256 or 64,4")),
    }
}

/// The largest work-group along x that divides the global size and fits one thread.
fn default_local(global: &[u64], simd: u32) -> Vec<u64> {
    let x = global.first().copied().unwrap_or(1);
    let first = (1..=simd.max(1) as u64).rev().find(|d| x.is_multiple_of(*d)).unwrap_or(1);
    std::iter::once(first).chain(global.iter().skip(1).map(|_| 1)).collect()
}

/// One `--arg NAME=VALUE` as a launch file's `args` entry.
fn line_arg(
    text: &str,
    info: &[vdb::launch::zeinfo::ArgInfo],
    items: u64,
    label: &str,
) -> Result<Value, String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("{label}: --arg `{text}`: write NAME=VALUE"));
    };
    let arg = info.iter().find(|a| a.name == name);
    let declared = arg.map(|a| Declared::parse(&a.type_name, &a.address_qualifier));
    let local = arg.is_some_and(|a| a.address_qualifier == "__local");
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name));
    if let Some(path) = value.strip_prefix('@') {
        entry.insert("file".into(), json!(path));
    } else if let Some(count) = zeros(value) {
        let count = count.map_err(|_| format!("{label}: --arg `{text}`: write zeros or zeros:COUNT"))?;
        entry.insert("fill".into(), json!(0));
        entry.insert("count".into(), json!(count.unwrap_or(items)));
    } else {
        let parts: Vec<Value> = value.split(',').map(item).collect();
        let pointer = declared.as_ref().is_some_and(|d| d.pointee.is_some());
        let (key, v) = match (local, pointer, parts.len()) {
            (true, _, _) => ("local", parts[0].clone()),
            (_, true, _) => ("values", Value::Array(parts)),
            (_, _, 1) => ("value", parts[0].clone()),
            _ => ("value", Value::Array(parts)),
        };
        entry.insert(key.into(), v);
    }
    let writable =
        arg.is_some_and(|a| a.address_qualifier == "__global" && !a.type_qualifiers.contains("const"));
    if writable && !local {
        entry.insert("output".into(), json!(format!("out/{name}.bin")));
    }
    Ok(Value::Object(entry))
}

/// `zeros` → Some(Ok(None)); `zeros:8` → Some(Ok(Some(8))).
fn zeros(value: &str) -> Option<Result<Option<u64>, std::num::ParseIntError>> {
    let rest = value.strip_prefix("zeros")?;
    match rest.strip_prefix(':') {
        Some(n) => Some(n.trim().parse().map(Some)),
        None if rest.is_empty() => Some(Ok(None)),
        None => None,
    }
}

/// A command-line number as JSON: an integer or a float when it reads as one, else the text
/// (`0x1f`, `nan`), which the launch reads by the argument's type.
fn item(text: &str) -> Value {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return json!(i);
    }
    if let Ok(u) = t.parse::<u64>() {
        return json!(u);
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => json!(f),
        _ => json!(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_commas_or_x() {
        assert_eq!(dims("256", "--global", "k").ok(), Some(vec![256]));
        assert_eq!(dims("16x16", "--global", "k").ok(), Some(vec![16, 16]));
        assert!(dims("1,2,3,4", "--global", "k").is_err());
        assert!(dims("abc", "--global", "k").is_err());
    }

    #[test]
    fn the_default_work_group_divides_the_global_size() {
        assert_eq!(default_local(&[256], 16), vec![16]);
        assert_eq!(default_local(&[100, 3], 32), vec![25, 1]);
        assert_eq!(default_local(&[7], 8), vec![7]);
    }

    #[test]
    fn command_line_values_are_numbers_where_they_read_as_numbers() {
        assert_eq!(item("250"), json!(250));
        assert_eq!(item("-3"), json!(-3));
        assert_eq!(item("0.5"), json!(0.5));
        assert_eq!(item("0x1f"), json!("0x1f"));
        assert_eq!(item("nan"), json!("nan"));
        assert!(matches!(zeros("zeros"), Some(Ok(None))));
        assert!(matches!(zeros("zeros:64"), Some(Ok(Some(64)))));
        assert!(matches!(zeros("zeros:x"), Some(Err(_))));
        assert!(zeros("zeroes").is_none());
    }
}
