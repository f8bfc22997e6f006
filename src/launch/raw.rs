//! The raw launch file: one hardware thread of any kernel, its registers and SVM set by
//! hand. JSON, read with serde at the edge and validated into a [`Launch`].
//!
//! ```json
//! { "kernel": "k.visaasm", "functions": ["k_f0.visaasm"], "simd": 16,
//!   "dispatch_mask": "0xffff", "payload": "payload.bin",
//!   "inputs": { "V0034": { "type": "uq", "values": ["0x100000000"] } },
//!   "svm": [ { "name": "in", "address": "0x100000000", "size": 64, "file": "in.bin",
//!              "output": "out/in.bin" } ],
//!   "registers_out": [ { "var": "V0049", "output": "out/v49.bin" } ],
//!   "step_limit": 1000000 }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::asm::{parse_files, ParseOptions};
use crate::exec::Scheduler;
use crate::isa::{DataType, VarId};
use crate::machine::{Machine, ThreadState};
use crate::program::{InputVar, Program, SourceFile};

/// A launch file problem: which file, which field, what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchError {
    pub file: String,
    /// Dotted path of the offending field (`svm[1].size`), when one is to blame.
    pub field: Option<String>,
    pub message: String,
}

impl LaunchError {
    pub fn new(file: &str, field: Option<&str>, message: impl Into<String>) -> LaunchError {
        LaunchError { file: file.to_string(), field: field.map(str::to_string), message: message.into() }
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: field `{}`: {}", self.file, field, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// A number written as a JSON integer or as a string (decimal or `0x` hex).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Number(pub u64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(u64),
            Neg(i64),
            Float(f64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Int(v) => Ok(Number(v)),
            Repr::Neg(v) => Ok(Number(v as u64)),
            Repr::Float(v) => Ok(Number(v.to_bits())),
            Repr::Text(s) => parse_number(&s)
                .map(Number)
                .ok_or_else(|| de::Error::custom(format!("`{s}` is not a number (decimal or 0x-hex)"))),
        }
    }
}

/// Parses `123`, `-5`, `0x1F`.
pub fn parse_number(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "");
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(neg) = t.strip_prefix('-') {
        neg.parse::<u64>().ok().map(|v| (v as i64).wrapping_neg() as u64)
    } else {
        t.parse().ok()
    }
}

/// Initial contents: typed values, hex bytes or a file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSpec {
    /// Element type for `values` (ud, d, uw, w, ub, b, uq, q, f, df, hf).
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// Elements; floats may be written as JSON numbers for f/df.
    pub values: Option<Vec<serde_json::Value>>,
    /// Hex bytes, e.g. "0000803f".
    pub bytes: Option<String>,
    /// A file whose bytes are used.
    pub file: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SvmSpec {
    name: Option<String>,
    address: Number,
    size: Option<Number>,
    #[serde(flatten)]
    init: ValueSpec,
    output: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegOutSpec {
    var: String,
    output: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunchFile {
    kernel: String,
    #[serde(default)]
    functions: Vec<String>,
    grf_size: Option<u32>,
    simd: Option<u32>,
    dispatch_mask: Option<Number>,
    payload: Option<String>,
    #[serde(default)]
    inputs: BTreeMap<String, ValueSpec>,
    #[serde(default)]
    svm: Vec<SvmSpec>,
    #[serde(default)]
    registers_out: Vec<RegOutSpec>,
    /// Binding-table surfaces: surface variable name (`T6`) → SVM region name.
    #[serde(default)]
    surfaces: BTreeMap<String, String>,
    step_limit: Option<u64>,
}

/// Where a result goes after the run.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputSource {
    Svm { address: u64, size: u64 },
    Register(VarId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub source: OutputSource,
    /// Path as written in the launch file (relative to its folder or to `--out`).
    pub path: String,
    /// The launch file field that names it (`svm[1].output`), for errors.
    pub field: String,
}

/// A validated launch, ready to run.
pub struct Launch {
    pub program: Arc<Program>,
    pub machine: Machine,
    pub scheduler: Scheduler,
    pub outputs: Vec<Output>,
    /// Folder of the launch file: relative paths resolve against it.
    pub base_dir: PathBuf,
    /// Group and thread labels for messages: (group ids, thread index in group).
    pub thread_labels: Vec<([u32; 3], u32)>,
    /// Named SVM buffers (`argN` for OpenCL arguments, region names for raw launches):
    /// name, address, size. Commands accept `NAME+OFF` as an address.
    pub buffers: Vec<(String, u64, u64)>,
    /// The NDRange of an OpenCL launch (which work-item each lane holds); None for a raw one.
    pub geometry: Option<super::NdGeometry>,
    /// The kernel's arguments as the launch bound them (OpenCL launches; empty for raw ones).
    pub args: Vec<KernelArg>,
}

/// One kernel argument of an OpenCL launch, with its source name and type from the zebin.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelArg {
    pub index: u32,
    /// Empty when the zebin carries no `args_info`.
    pub name: String,
    pub type_name: String,
    /// `global`, `constant`, `local`, `private`, as the zebin says.
    pub address_qualifier: String,
    pub value: KernelArgValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum KernelArgValue {
    Buffer {
        address: u64,
        size: u64,
    },
    /// A by-value argument's bytes.
    Bytes(Vec<u8>),
    /// A `__local` pointer: the bytes asked for.
    Local {
        bytes: u32,
    },
}

/// Reads a file relative to `base`, naming the field on failure.
pub fn read_relative(base: &Path, path: &str, file: &str, field: &str) -> Result<Vec<u8>, LaunchError> {
    let full = base.join(path);
    read_file(&full, super::opencl::MAX_BUFFER)
        .map_err(|e| LaunchError::new(file, Some(field), format!("cannot read {}: {e}", full.display())))
}

/// Most bytes of a launch file, a kernel or a command file vdb reads (the largest real
/// kernels dumped by IGC are under 1 MB).
pub const MAX_TEXT_FILE: u64 = 64 << 20;

/// Reads a regular file (or a pipe, as `--script /dev/stdin` is) of at most `max` bytes: a
/// device (`/dev/zero`), a folder or a longer file is an error, not an endless read or an
/// allocation abort.
pub fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let kind = f.metadata().map_err(|e| e.to_string())?.file_type();
    #[cfg(unix)]
    let pipe = std::os::unix::fs::FileTypeExt::is_fifo(&kind);
    #[cfg(not(unix))]
    let pipe = false;
    if !kind.is_file() && !pipe {
        return Err("not a regular file (nor a pipe)".into());
    }
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(bytes)
}

/// [`read_file`] of UTF-8 text up to [`MAX_TEXT_FILE`] bytes.
pub fn read_text(path: &Path) -> Result<String, String> {
    String::from_utf8(read_file(path, MAX_TEXT_FILE)?).map_err(|_| "not UTF-8 text".into())
}

/// Reads the kernel and function files and parses them.
pub fn load_program(
    base: &Path,
    kernel: &str,
    functions: &[String],
    grf_size: u32,
    file: &str,
) -> Result<Program, LaunchError> {
    let mut sources = Vec::new();
    for (i, path) in std::iter::once(kernel).chain(functions.iter().map(String::as_str)).enumerate() {
        let field = if i == 0 { "kernel".to_string() } else { format!("functions[{}]", i - 1) };
        let bytes = read_relative(base, path, file, &field)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        sources.push(SourceFile { path: base.join(path).display().to_string(), text });
    }
    let mut program = parse_files(sources, &ParseOptions { grf_size }).map_err(|d| {
        LaunchError::new(file, Some("kernel"), format!("the kernel does not parse:\n{}", d.render()))
    })?;
    // The OpenCL source `FILE` names: by its path, else next to the launch or kernel file.
    let kernel_dir = base.join(kernel).parent().map(Path::to_path_buf).unwrap_or_else(|| base.to_path_buf());
    program.lines.find_texts(&[base, &kernel_dir]);
    Ok(program)
}

/// Decodes a hex string (spaces allowed).
pub fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()).collect()
}

/// Turns a [`ValueSpec`] into bytes.
pub fn spec_bytes(
    spec: &ValueSpec,
    base: &Path,
    file: &str,
    field: &str,
) -> Result<Option<Vec<u8>>, LaunchError> {
    let given = spec.values.is_some() as u8 + spec.bytes.is_some() as u8 + spec.file.is_some() as u8;
    if given > 1 {
        return Err(LaunchError::new(file, Some(field), "give only one of `values`, `bytes`, `file`"));
    }
    if let Some(hex) = &spec.bytes {
        return decode_hex(hex).map(Some).ok_or_else(|| {
            LaunchError::new(file, Some(&format!("{field}.bytes")), "not an even-length hex string")
        });
    }
    if let Some(path) = &spec.file {
        return read_relative(base, path, file, &format!("{field}.file")).map(Some);
    }
    let Some(values) = &spec.values else {
        return Ok(None);
    };
    let ty_name = spec.ty.as_deref().unwrap_or("ud");
    let ty =
        DataType::from_name(ty_name).filter(|t| !t.is_packed_vector() && *t != DataType::Bool).ok_or_else(
            || LaunchError::new(file, Some(&format!("{field}.type")), format!("unknown type `{ty_name}`")),
        )?;
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let bits = value_bits(v, ty).ok_or_else(|| {
            LaunchError::new(
                file,
                Some(&format!("{field}.values[{i}]")),
                format!("`{v}` is not a {ty} value"),
            )
        })?;
        out.extend_from_slice(&bits.to_le_bytes()[..ty.size() as usize]);
    }
    Ok(Some(out))
}

fn value_bits(v: &serde_json::Value, ty: DataType) -> Option<u64> {
    match (v, ty) {
        (serde_json::Value::Number(n), DataType::F) => Some(n.as_f64()? as f32).map(|f| f.to_bits() as u64),
        (serde_json::Value::Number(n), DataType::Df) => n.as_f64().map(f64::to_bits),
        (serde_json::Value::Number(n), _) => n.as_u64().or_else(|| n.as_i64().map(|i| i as u64)),
        (serde_json::Value::String(s), _) => parse_number(s),
        _ => None,
    }
}

/// Deserializes with the path of the offending field in the error.
/// A UTF-8 byte order mark, as some Windows editors save JSON with, is skipped; anything
/// but blanks after the JSON value (a second launch object pasted below) is an error.
fn from_json<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T, LaunchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let de = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let field = e.path().to_string();
        let field = (field != ".").then_some(field);
        LaunchError { file: file.to_string(), field, message: e.into_inner().to_string() }
    })?;
    de.end().map_err(|e| LaunchError::new(file, None, format!("text after the launch object: {e}")))?;
    Ok(value)
}

/// Loads and validates a launch file: the OpenCL form (with `zebin`/`zeinfo`) or the raw
/// one-thread form.
pub fn load(path: &Path) -> Result<Launch, LaunchError> {
    load_reusing(path, None)
}

/// [`load`] with the kernel already parsed (`program`, from an earlier load of the same
/// file): another core's start state is built without parsing the kernel again.
pub fn load_reusing(path: &Path, program: Option<&Arc<Program>>) -> Result<Launch, LaunchError> {
    let file = path.display().to_string();
    let text = read_text(path).map_err(|e| LaunchError::new(&file, None, format!("cannot read: {e}")))?;
    let value: serde_json::Value = from_json(&text, &file)?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    if value.get("source").is_some() {
        return Err(source_launch(&file));
    }
    if super::opencl::is_opencl(&value) {
        let spec = from_json(&text, &file)?;
        return super::opencl::build(spec, &base, &file, program);
    }
    let spec: RawLaunchFile = from_json(&text, &file)?;
    build(spec, &base, &file, program)
}

/// A launch given as JSON already read (a source launch once compiled, or one built from
/// the command line): relative paths resolve against `base`, errors name `file`.
pub fn load_value(
    value: &serde_json::Value,
    base: &Path,
    file: &str,
    program: Option<&Arc<Program>>,
) -> Result<Launch, LaunchError> {
    if value.get("source").is_some() {
        return Err(source_launch(file));
    }
    if super::opencl::is_opencl(value) {
        return super::opencl::build(from_value(value, file)?, base, file, program);
    }
    build(from_value(value, file)?, base, file, program)
}

/// The engine runs compiled kernels; the `vdb` binary compiles a `source` launch first.
fn source_launch(file: &str) -> LaunchError {
    LaunchError::new(file, Some("source"), "a source launch is compiled by the vdb command first")
}

/// [`from_json`] of a JSON value.
fn from_value<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    file: &str,
) -> Result<T, LaunchError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let field = (field != ".").then_some(field);
        LaunchError { file: file.to_string(), field, message: e.into_inner().to_string() }
    })
}

fn build(
    spec: RawLaunchFile,
    base: &Path,
    file: &str,
    reuse: Option<&Arc<Program>>,
) -> Result<Launch, LaunchError> {
    let grf_size = spec.grf_size.unwrap_or(32);
    if grf_size != 32 && grf_size != 64 {
        return Err(LaunchError::new(file, Some("grf_size"), "must be 32 or 64"));
    }
    let program = match reuse {
        Some(p) => p.clone(),
        None => Arc::new(load_program(base, &spec.kernel, &spec.functions, grf_size, file)?),
    };
    let simd = spec.simd.or(program.kernel().simd_size()).unwrap_or(16);
    if ![1, 2, 4, 8, 16, 32].contains(&simd) {
        return Err(LaunchError::new(file, Some("simd"), format!("{simd} is not 1, 2, 4, 8, 16 or 32")));
    }
    let full = crate::exec::window(crate::isa::ExecMask { size: simd, offset: 0, no_mask: false });
    // Checked before narrowing to 32 bits, so a 33-bit mask is an error, not truncated.
    let mask = spec.dispatch_mask.map_or(full as u64, |m| m.0);
    if mask & !(full as u64) != 0 {
        return Err(LaunchError::new(
            file,
            Some("dispatch_mask"),
            format!("{mask:#x} has lanes beyond SIMD{simd}"),
        ));
    }
    let mut thread = ThreadState::new(&program, simd, mask as u32);
    if let Some(payload) = &spec.payload {
        let bytes = read_relative(base, payload, file, "payload")?;
        apply_payload(&program, &mut thread, &bytes);
    }
    for (name, value) in &spec.inputs {
        let field = format!("inputs.{name}");
        set_var(&program, &mut thread, name, value, base, file, &field)?;
    }
    let mut machine = Machine {
        threads: vec![crate::machine::Shared::new(thread)].into(),
        slms: vec![crate::machine::Shared::new(crate::machine::Slm::new(64 * 1024))].into(),
        ..Machine::default()
    };
    let mut outputs = Vec::new();
    for (i, region) in spec.svm.iter().enumerate() {
        map_region(&mut machine, region, i, base, file, &mut outputs)?;
    }
    for (i, reg) in spec.registers_out.iter().enumerate() {
        let var = program.var_id(crate::isa::UnitId(0), &reg.var).ok_or_else(|| {
            LaunchError::new(
                file,
                Some(&format!("registers_out[{i}].var")),
                format!("no variable `{}`", reg.var),
            )
        })?;
        outputs.push(Output {
            source: OutputSource::Register(var),
            path: reg.output.clone(),
            field: format!("registers_out[{i}].output"),
        });
    }
    for (surface, region) in &spec.surfaces {
        let field = format!("surfaces.{surface}");
        let id = program
            .states
            .iter()
            .position(|s| &s.name == surface && s.kind != crate::program::StateKind::Slm)
            .ok_or_else(|| {
                LaunchError::new(file, Some(&field), format!("the kernel has no surface `{surface}`"))
            })?;
        let r =
            machine.svm.regions().iter().find(|r| &r.name == region).ok_or_else(|| {
                LaunchError::new(file, Some(&field), format!("no svm region named `{region}`"))
            })?;
        let span = (r.start, r.len);
        if machine.surfaces.len() <= id {
            machine.surfaces.resize(id + 1, None);
        }
        machine.surfaces[id] = Some(span);
    }
    let mut scheduler = Scheduler::single_group(1);
    scheduler.step_limit = spec.step_limit.unwrap_or(100_000_000);
    let buffers = machine.svm.regions().iter().map(|r| (r.name.clone(), r.start, r.len)).collect();
    Ok(Launch {
        program,
        machine,
        scheduler,
        outputs,
        base_dir: base.to_path_buf(),
        thread_labels: vec![([0; 3], 0)],
        geometry: None,
        args: Vec::new(),
        buffers,
    })
}

/// A launch of a kernel that needs no inputs: one thread, SIMD from its `SimdSize`, all
/// lanes dispatched, no memory.
pub fn from_kernel(path: &Path) -> Result<Launch, LaunchError> {
    let file = path.display().to_string();
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let spec = RawLaunchFile {
        kernel: name,
        functions: Vec::new(),
        grf_size: None,
        simd: None,
        dispatch_mask: None,
        payload: None,
        inputs: BTreeMap::new(),
        svm: Vec::new(),
        registers_out: Vec::new(),
        surfaces: BTreeMap::new(),
        step_limit: None,
    };
    build(spec, &base, &file, None)
}

/// Copies a payload image into r0 and every `.input` of the kernel.
pub fn apply_payload(program: &Program, thread: &mut ThreadState, payload: &[u8]) {
    if let Some(r0) = program.var_id(crate::isa::UnitId(0), "%r0") {
        let at = program.var(r0).offset as usize;
        let n = payload.len().min(32);
        thread.grf[at..at + n].copy_from_slice(&payload[..n]);
    }
    for input in &program.kernel().inputs {
        let InputVar::Gen(var) = input.var else {
            continue;
        };
        let v = program.var(var);
        let len = input.size.min(v.size) as usize;
        let src = payload.get(input.offset as usize..input.offset as usize + len);
        if let Some(src) = src {
            thread.grf[v.offset as usize..v.offset as usize + len].copy_from_slice(src);
        }
    }
}

fn set_var(
    program: &Program,
    thread: &mut ThreadState,
    name: &str,
    value: &ValueSpec,
    base: &Path,
    file: &str,
    field: &str,
) -> Result<(), LaunchError> {
    let var = program
        .var_id(crate::isa::UnitId(0), name)
        .ok_or_else(|| LaunchError::new(file, Some(field), format!("the kernel has no variable `{name}`")))?;
    let v = program.var(var);
    let bytes = spec_bytes(value, base, file, field)?.unwrap_or_default();
    if bytes.len() as u32 > v.size {
        return Err(LaunchError::new(
            file,
            Some(field),
            format!("{} bytes given but `{name}` holds {} ({} × {})", bytes.len(), v.size, v.num_elts, v.ty),
        ));
    }
    thread.grf[v.offset as usize..v.offset as usize + bytes.len()].copy_from_slice(&bytes);
    Ok(())
}

fn map_region(
    machine: &mut Machine,
    region: &SvmSpec,
    index: usize,
    base: &Path,
    file: &str,
    outputs: &mut Vec<Output>,
) -> Result<(), LaunchError> {
    let field = format!("svm[{index}]");
    let init = spec_bytes(&region.init, base, file, &field)?;
    let size = match (region.size, &init) {
        (Some(s), _) => s.0,
        (None, Some(bytes)) => bytes.len() as u64,
        (None, None) => {
            return Err(LaunchError::new(
                file,
                Some(&format!("{field}.size")),
                "give a size or initial contents",
            ))
        }
    };
    let start = region.address.0;
    if start.checked_add(size).is_none() || size == 0 {
        return Err(LaunchError::new(file, Some(&field), "the region is empty or wraps around"));
    }
    super::opencl::check_buffer_size(file, &format!("{field}.size"), size)?;
    let overlaps = machine.svm.regions().iter().any(|r| start < r.start + r.len && r.start < start + size);
    if overlaps {
        return Err(LaunchError::new(file, Some(&format!("{field}.address")), "overlaps another region"));
    }
    let name = region.name.clone().unwrap_or_else(|| format!("svm{index}"));
    machine.svm.map(start, size, &name);
    if let Some(bytes) = init {
        if bytes.len() as u64 > size {
            return Err(LaunchError::new(
                file,
                Some(&format!("{field}.size")),
                format!("{} initial bytes exceed the size {size}", bytes.len()),
            ));
        }
        machine.svm.write(start, &bytes).map_err(|e| LaunchError::new(file, Some(&field), e.to_string()))?;
    }
    if let Some(out) = &region.output {
        outputs.push(Output {
            source: OutputSource::Svm { address: start, size },
            path: out.clone(),
            field: format!("{field}.output"),
        });
    }
    Ok(())
}

/// Checks, before a run, that every output can be written under `dir` (no NUL in its name,
/// not a folder, its folder creatable, the file writable), naming the launch file's field:
/// finding out after the run would lose the outputs.
pub fn check_outputs(outputs: &[Output], dir: &Path, file: &str) -> Result<(), LaunchError> {
    for out in outputs {
        let fail = |why: String| LaunchError::new(file, Some(&out.field), why);
        if out.path.is_empty() || out.path.contains('\0') {
            return Err(fail("an output path must be a non-empty file name without NUL bytes".into()));
        }
        let path = dir.join(&out.path);
        if path.is_dir() {
            return Err(fail(format!("{} is a folder, not a file", path.display())));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
        }
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
        if !existed {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

/// Writes every output of a finished (or faulted) run under `out_dir` (or the launch's folder).
pub fn write_outputs(
    program: &Program,
    machine: &Machine,
    outputs: &[Output],
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for out in outputs {
        let bytes = match out.source {
            OutputSource::Svm { address, size } => {
                let mut buf = vec![0u8; size as usize];
                machine.svm.read(address, &mut buf).map_err(|e| e.to_string())?;
                buf
            }
            OutputSource::Register(var) => {
                let v = program.var(var);
                machine.threads[0].grf[v.offset as usize..(v.offset + v.size) as usize].to_vec()
            }
        };
        let path = dir.join(&out.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
