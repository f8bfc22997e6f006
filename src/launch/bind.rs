//! Binds an OpenCL launch's `args` entries to the kernel's arguments: each entry names its
//! argument by `index` or by `name` (from the zebin's `args_info`) and gives its value as
//! bytes, a file, or typed values in the declared type (`value`, `values`, `fill` with
//! `count`). Every size is checked against what the kernel declares, and errors name the
//! entry's field and the argument.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::argtypes::{Declared, ValueType};
use super::opencl::{check_buffer_size, ArgSpec, Bound, BufferArg, BUFFER_BASE};
use super::payload::ArgValue;
use super::raw::{decode_hex, read_relative, LaunchError};
use super::zeinfo::{ArgInfo, ArgType, ZeKernel};
use crate::machine::PAGE_SIZE;

/// What kind of argument the compiled kernel has at an index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Class {
    Local,
    /// By value: the bytes its payload pieces read.
    ByValue(u32),
    Pointer,
}

/// One entry, resolved: the argument it binds and what the kernel says of it.
struct Entry<'a> {
    spec: &'a ArgSpec,
    /// `args[3]`.
    at: String,
    index: u32,
    class: Class,
    declared: Option<Declared>,
    /// `argument 3` or "argument `n` (uint)", for messages.
    label: String,
}

/// What one entry binds.
enum Binding {
    Local(u32),
    Bytes(Vec<u8>),
    Buffer { init: Option<Vec<u8>>, size: u64, output: Option<String> },
}

/// Shared context of one launch's binding.
struct Ctx<'a> {
    kernel: &'a ZeKernel,
    info: &'a [ArgInfo],
    base: &'a Path,
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, field: &str, msg: impl Into<String>) -> LaunchError {
        LaunchError::new(self.file, Some(field), msg)
    }
}

/// Binds every entry; buffers get addresses above [`BUFFER_BASE`] with a guard page between.
pub(super) fn bind_args(
    specs: &[ArgSpec],
    kernel: &ZeKernel,
    info: &[ArgInfo],
    base: &Path,
    file: &str,
) -> Result<Bound, LaunchError> {
    let ctx = Ctx { kernel, info, base, file };
    let known = kernel_arg_indices(kernel);
    let mut bound = Bound { values: BTreeMap::new(), local_sizes: BTreeMap::new(), buffers: Vec::new() };
    let mut next_addr = BUFFER_BASE;
    for (i, spec) in specs.iter().enumerate() {
        let entry = resolve(&ctx, spec, i, &known)?;
        if !known.contains(&entry.index) {
            // Named in args_info but unused by the compiled code: nothing reads its value.
            continue;
        }
        if bound.values.contains_key(&entry.index) || bound.local_sizes.contains_key(&entry.index) {
            let what = format!("{} is given twice", entry.label);
            return Err(ctx.err(&id_field(&entry), what));
        }
        match bind(&ctx, &entry)? {
            Binding::Local(bytes) => {
                bound.local_sizes.insert(entry.index, bytes);
            }
            Binding::Bytes(bytes) => {
                bound.values.insert(entry.index, ArgValue::Bytes(bytes));
            }
            Binding::Buffer { init, size, output } => {
                bound.values.insert(entry.index, ArgValue::Pointer(next_addr));
                bound.buffers.push(BufferArg { index: entry.index, address: next_addr, size, init, output });
                // Round up to whole pages and leave one unmapped guard page before the next.
                next_addr += size.div_ceil(PAGE_SIZE).max(1) * PAGE_SIZE + PAGE_SIZE;
            }
        }
    }
    let given = |k: &u32| bound.values.contains_key(k) || bound.local_sizes.contains_key(k);
    if let Some(missing) = known.iter().find(|k| !given(k)) {
        let name = info.iter().find(|a| a.index == *missing).map(|a| format!(" (`{}`)", a.name));
        let msg = format!("no value for kernel argument {missing}{}", name.unwrap_or_default());
        return Err(ctx.err("args", msg));
    }
    Ok(bound)
}

/// Explicit argument indices the kernel has.
pub(super) fn kernel_arg_indices(kernel: &ZeKernel) -> Vec<u32> {
    let mut v: Vec<u32> = kernel.payload_arguments.iter().filter_map(|a| a.arg_index).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Size in bytes a by-value argument's payload pieces read.
fn by_value_size(kernel: &ZeKernel, index: u32) -> Option<u32> {
    kernel
        .payload_arguments
        .iter()
        .filter(|a| a.arg_type == ArgType::ArgByValue && a.arg_index == Some(index))
        .map(|a| a.source_offset.unwrap_or(0) + a.size)
        .max()
}

fn class_of(kernel: &ZeKernel, index: u32) -> Class {
    let slm =
        |a: &&super::zeinfo::PayloadArg| a.arg_index == Some(index) && a.addrmode.as_deref() == Some("slm");
    if kernel.payload_arguments.iter().any(|a| slm(&a)) {
        Class::Local
    } else {
        by_value_size(kernel, index).map_or(Class::Pointer, Class::ByValue)
    }
}

/// The field that picked the argument (`args[2].name` or `args[2].index`).
fn id_field(e: &Entry) -> String {
    let key = if e.spec.index.is_some() { "index" } else { "name" };
    format!("{}.{key}", e.at)
}

/// Which argument an entry binds, by `index` or `name` (both must then agree).
fn resolve<'a>(ctx: &Ctx, spec: &'a ArgSpec, i: usize, known: &[u32]) -> Result<Entry<'a>, LaunchError> {
    let at = format!("args[{i}]");
    let by_name = match &spec.name {
        Some(name) => Some(index_of_name(ctx, name, &format!("{at}.name"))?),
        None => None,
    };
    let index = match (spec.index, by_name) {
        (Some(a), Some(b)) if a != b => {
            let msg = format!("argument `{}` is argument {b}, not {a}", spec.name.as_deref().unwrap_or(""));
            return Err(ctx.err(&format!("{at}.index"), msg));
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => return Err(ctx.err(&at, "give the argument's `name` (or `index`)")),
    };
    if !known.contains(&index) && !ctx.info.iter().any(|a| a.index == index) {
        let msg = format!("the kernel has no argument {index} (it has {known:?})");
        return Err(ctx.err(&format!("{at}.index"), msg));
    }
    let info = ctx.info.iter().find(|a| a.index == index);
    let declared = info.map(|a| Declared::parse(&a.type_name, &a.address_qualifier));
    let label = match (info, &declared) {
        (Some(a), Some(d)) if !a.name.is_empty() => format!("argument `{}` ({})", a.name, d.display),
        _ => format!("argument {index}"),
    };
    let entry = Entry { spec, at, index, class: class_of(ctx.kernel, index), declared, label };
    check_type(ctx, &entry)?;
    Ok(entry)
}

/// The index of the argument called `name` in the zebin's `args_info`.
fn index_of_name(ctx: &Ctx, name: &str, field: &str) -> Result<u32, LaunchError> {
    if ctx.info.is_empty() {
        return Err(ctx.err(field, "the zebin has no argument names (args_info): give `index`"));
    }
    ctx.info.iter().find(|a| a.name == name).map(|a| a.index).ok_or_else(|| {
        let names: Vec<&str> = ctx.info.iter().map(|a| a.name.as_str()).collect();
        ctx.err(field, format!("the kernel has no argument `{name}` (it has {})", names.join(", ")))
    })
}

/// A `type` written in the entry must be the declared one.
fn check_type(ctx: &Ctx, e: &Entry) -> Result<(), LaunchError> {
    match (&e.spec.ty, &e.declared) {
        (Some(written), Some(d)) if !d.matches(written) => Err(ctx.err(
            &format!("{}.type", e.at),
            format!("the kernel declares {} as `{}`, not `{written}`", e.label, d.display),
        )),
        (Some(_), None) => {
            Err(ctx.err(&format!("{}.type", e.at), "the zebin has no argument types (args_info) to check"))
        }
        _ => Ok(()),
    }
}

/// The value forms an entry gives, by name.
fn forms(s: &ArgSpec) -> Vec<&'static str> {
    let all = [
        ("buffer", s.buffer.is_some()),
        ("file", s.file.is_some()),
        ("values", s.values.is_some()),
        ("fill", s.fill.is_some()),
        ("local", s.local.is_some()),
        ("scalar", s.scalar.is_some()),
        ("bytes", s.bytes.is_some()),
        ("value", s.value.is_some()),
    ];
    all.iter().filter(|(_, given)| *given).map(|(k, _)| *k).collect()
}

fn bind(ctx: &Ctx, e: &Entry) -> Result<Binding, LaunchError> {
    let given = forms(e.spec);
    if given.len() > 1 {
        let msg = format!(
            "give only one of {}",
            given.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        );
        return Err(ctx.err(&e.at, msg));
    }
    if e.spec.size.is_some() && e.spec.count.is_some() {
        return Err(ctx.err(&e.at, "give `size` (bytes) or `count` (elements), not both"));
    }
    match e.class {
        Class::Local => bind_local(ctx, e, &given),
        Class::ByValue(payload) => bind_value(ctx, e, &given, payload),
        Class::Pointer => bind_buffer(ctx, e, &given),
    }
}

/// Fields of `spec` that `allowed` does not list, for "X is not for this argument" errors.
fn extra<'a>(spec: &ArgSpec, given: &[&'a str], allowed: &[&str]) -> Option<&'a str> {
    let extent =
        [("size", spec.size.is_some()), ("count", spec.count.is_some()), ("output", spec.output.is_some())];
    let mut present: Vec<&'a str> = given.to_vec();
    present.extend(extent.iter().filter(|(_, g)| *g).map(|(k, _)| *k));
    present.into_iter().find(|k| !allowed.contains(k))
}

fn bind_local(ctx: &Ctx, e: &Entry, given: &[&str]) -> Result<Binding, LaunchError> {
    if let Some(k) = extra(e.spec, given, &["local"]) {
        let msg = format!("{} is a __local pointer: give `local` (bytes), not `{k}`", e.label);
        return Err(ctx.err(&format!("{}.{k}", e.at), msg));
    }
    let Some(local) = e.spec.local else {
        return Err(ctx.err(&e.at, format!("{} is a __local pointer: give `local` (bytes)", e.label)));
    };
    let bytes = u32::try_from(local.0).map_err(|_| ctx.err(&format!("{}.local", e.at), "too large"))?;
    whole_elements(ctx, e, bytes as u64, &format!("{}.local", e.at))?;
    Ok(Binding::Local(bytes))
}

fn bind_value(ctx: &Ctx, e: &Entry, given: &[&str], payload: u32) -> Result<Binding, LaunchError> {
    if let Some(k) = extra(e.spec, given, &["scalar", "bytes", "file", "value"]) {
        let msg = format!("{} is passed by value: give `value`, `bytes` or `file`, not `{k}`", e.label);
        return Err(ctx.err(&format!("{}.{k}", e.at), msg));
    }
    let field = format!("{}.{}", e.at, given.first().copied().unwrap_or("value"));
    let s = e.spec;
    let bytes = match (&s.value, &s.bytes, s.scalar.as_ref().or(s.file.as_ref())) {
        (Some(v), _, _) => typed_value(ctx, e, v, &field)?,
        (_, Some(hex), _) => {
            decode_hex(hex).ok_or_else(|| ctx.err(&field, "not an even-length hex string"))?
        }
        (_, _, Some(path)) => read_relative(ctx.base, path, ctx.file, &field)?,
        _ => {
            let msg = format!("{} is passed by value: give `value`, `bytes` or `file`", e.label);
            return Err(ctx.err(&e.at, msg));
        }
    };
    check_value_size(ctx, e, &bytes, payload, &field)?;
    let mut bytes = bytes;
    // A 3-vector given without its fourth slot: the kernel reads all four.
    if let Some(size) = e.declared.as_ref().and_then(|d| d.value.size) {
        bytes.resize(bytes.len().max(size as usize), 0);
    }
    Ok(Binding::Bytes(bytes))
}

/// A by-value argument's `value` in its declared type.
fn typed_value(ctx: &Ctx, e: &Entry, v: &Value, field: &str) -> Result<Vec<u8>, LaunchError> {
    let d = declared(ctx, e, field)?;
    d.value.encode(v, false).map_err(|m| ctx.err(field, format!("{}: {m}", e.label)))
}

fn declared<'a>(ctx: &Ctx, e: &'a Entry, field: &str) -> Result<&'a Declared, LaunchError> {
    e.declared.as_ref().ok_or_else(|| {
        ctx.err(field, format!("the zebin has no argument types (args_info) for {}: give bytes", e.label))
    })
}

/// By-value bytes must be the declared size (a 3-vector may leave out its fourth slot);
/// without `args_info`, at most the 4-byte-rounded size the payload reads (as before types).
fn check_value_size(
    ctx: &Ctx,
    e: &Entry,
    bytes: &[u8],
    payload: u32,
    field: &str,
) -> Result<(), LaunchError> {
    let n = bytes.len() as u32;
    let want = e.declared.as_ref().and_then(|d| d.value.size.map(|size| (size, d)));
    let ok = match want {
        Some((size, d)) => n == size || (d.value.lanes == 3 && n == size / 4 * 3),
        None => n > 0 && n <= payload.div_ceil(4) * 4,
    };
    if ok {
        return Ok(());
    }
    let msg = match want {
        Some((size, d)) => format!("{n} bytes given, but {} takes {size} (a `{}`)", e.label, d.value.name),
        None => format!("{n} bytes given, {} takes at most {payload}", e.label),
    };
    Err(ctx.err(field, msg))
}

fn bind_buffer(ctx: &Ctx, e: &Entry, given: &[&str]) -> Result<Binding, LaunchError> {
    if let Some(k) = extra(e.spec, given, &["buffer", "file", "values", "fill", "size", "count", "output"]) {
        let msg = format!(
            "{} is a pointer: give `values`, `file`, `fill` and `count`, or `size`, not `{k}`",
            e.label
        );
        return Err(ctx.err(&format!("{}.{k}", e.at), msg));
    }
    let s = e.spec;
    if s.fill.is_some() && s.count.is_none() && s.size.is_none() {
        return Err(
            ctx.err(&format!("{}.count", e.at), format!("`fill` needs `count`, the elements of {}", e.label))
        );
    }
    let size = extent(ctx, e)?;
    let init = contents(ctx, e, size.as_ref().map(|(n, _)| *n))?;
    let size = match (size, &init) {
        (Some((n, field)), Some(b)) if n < b.len() as u64 => {
            let msg = format!("{n} bytes is smaller than the {} bytes given for {}", b.len(), e.label);
            return Err(ctx.err(&field, msg));
        }
        (Some((n, _)), _) => n,
        (None, Some(b)) => b.len() as u64,
        (None, None) => {
            let msg =
                format!("{} is a pointer: give `values`, `file`, `fill` and `count`, or `size`", e.label);
            return Err(ctx.err(&e.at, msg));
        }
    };
    Ok(Binding::Buffer { init, size, output: s.output.clone() })
}

/// The buffer's size from `size` (bytes) or `count` (elements), with the field it came from.
fn extent(ctx: &Ctx, e: &Entry) -> Result<Option<(u64, String)>, LaunchError> {
    let (bytes, field) = match (e.spec.size, e.spec.count) {
        (Some(n), _) => (n.0, format!("{}.size", e.at)),
        (None, Some(c)) => {
            let field = format!("{}.count", e.at);
            let elem = pointee(ctx, e, &field)?.size.ok_or_else(|| {
                ctx.err(
                    &field,
                    format!(
                        "{} points to `{}`, of no known size: give `size` in bytes",
                        e.label,
                        pointee_name(e)
                    ),
                )
            })?;
            let bytes = c.0.checked_mul(elem as u64).ok_or_else(|| ctx.err(&field, "too large"))?;
            (bytes, field)
        }
        (None, None) => return Ok(None),
    };
    check_buffer_size(ctx.file, &field, bytes)?;
    whole_elements(ctx, e, bytes, &field)?;
    Ok(Some((bytes, field)))
}

fn pointee_name(e: &Entry) -> String {
    e.declared.as_ref().and_then(|d| d.pointee.as_ref()).map_or(String::new(), |p| p.name.clone())
}

fn pointee<'a>(ctx: &Ctx, e: &'a Entry, field: &str) -> Result<&'a ValueType, LaunchError> {
    declared(ctx, e, field)?
        .pointee
        .as_ref()
        .ok_or_else(|| ctx.err(field, format!("{} is declared as a value, not a pointer", e.label)))
}

/// A byte count must hold whole elements of the pointee type, when its size is known.
fn whole_elements(ctx: &Ctx, e: &Entry, bytes: u64, field: &str) -> Result<(), LaunchError> {
    let elem = e.declared.as_ref().and_then(|d| d.pointee.as_ref()).and_then(|p| Some((p.size?, &p.name)));
    match elem {
        Some((size, name)) if size > 0 && !bytes.is_multiple_of(size as u64) => Err(ctx.err(
            field,
            format!("{bytes} bytes is not a whole number of `{name}` ({size} bytes each) for {}", e.label),
        )),
        _ => Ok(()),
    }
}

/// The buffer's initial bytes from `buffer`/`file`, `values` or `fill` (over `size` bytes).
fn contents(ctx: &Ctx, e: &Entry, size: Option<u64>) -> Result<Option<Vec<u8>>, LaunchError> {
    let s = e.spec;
    if let Some((key, path)) =
        s.buffer.as_ref().map(|p| ("buffer", p)).or(s.file.as_ref().map(|p| ("file", p)))
    {
        let field = format!("{}.{key}", e.at);
        let bytes = read_relative(ctx.base, path, ctx.file, &field)?;
        whole_elements(ctx, e, bytes.len() as u64, &field)?;
        return Ok(Some(bytes));
    }
    if let Some(values) = &s.values {
        let field = format!("{}.values", e.at);
        let ty = pointee(ctx, e, &field)?;
        let bytes = ty
            .encode_list(values)
            .map_err(|(at, m)| ctx.err(&format!("{field}[{at}]"), format!("{}: {m}", e.label)))?;
        return Ok(Some(bytes));
    }
    let (Some(fill), Some(total)) = (&s.fill, size) else {
        return Ok(None);
    };
    let field = format!("{}.fill", e.at);
    let one = pointee(ctx, e, &field)?
        .encode(fill, true)
        .map_err(|m| ctx.err(&field, format!("{}: {m}", e.label)))?;
    if one.iter().all(|&b| b == 0) {
        // Fresh pages read as zeros: nothing to write.
        return Ok(None);
    }
    Ok(Some(one.iter().copied().cycle().take(total as usize).collect()))
}
