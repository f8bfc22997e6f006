//! `vdb new k.cl`: compiles the source and writes a launch file skeleton naming every
//! argument with its declared type and a placeholder value that runs (buffers of zeros, one
//! element per work-item; zero scalars; a `__local` element per work-item), so the user
//! edits values, not structure.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use vdb::launch::argtypes::Declared;
use vdb::launch::zeinfo::ArgInfo;

use crate::commands::{EXIT_BAD_LAUNCH, EXIT_OK};
use crate::compile::{self, Request};

/// Work-groups of the skeleton's placeholder global size.
const GROUPS: u64 = 4;

/// What `vdb new` was asked for.
pub struct NewLaunch<'a> {
    pub source: &'a Path,
    pub kernel: Option<&'a str>,
    pub device: &'a str,
    pub build_options: &'a str,
    pub output: Option<&'a Path>,
    pub force: bool,
}

/// `vdb new`.
pub fn new_launch(req: &NewLaunch) -> u8 {
    match write_skeleton(req) {
        Ok(path) => {
            say!(
                "wrote {}: set the sizes and argument values, then `vdb {}`",
                path.display(),
                path.display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_BAD_LAUNCH
        }
    }
}

fn write_skeleton(req: &NewLaunch) -> Result<PathBuf, String> {
    if vdb::launch::Platform::from_device_name(req.device).is_none() {
        return Err(format!("--device: {}", vdb::launch::Platform::unknown_device(req.device)));
    }
    let compile_req = Request { source: req.source, device: req.device, options: req.build_options };
    let built = compile::compile(&compile_req).map_err(|e| e.render(req.source, req.device))?;
    if built.log.contains("warning") {
        eprintln!("{}", built.log.trim_end());
    }
    let kernel = built.kernel(req.kernel).map_err(|m| format!("{}: --kernel: {m}", req.source.display()))?;
    let folder = req.source.parent().unwrap_or(Path::new(""));
    let out =
        req.output.map_or_else(|| folder.join(format!("{}.launch.json", kernel.name)), Path::to_path_buf);
    if out.exists() && !req.force {
        return Err(format!("{} exists (--force replaces it)", out.display()));
    }
    let args = built.info.misc_info(&kernel.name).map(|m| m.args_info.clone()).unwrap_or_default();
    let skeleton = Skeleton {
        source: source_from(req.source, &out),
        kernel: &kernel.name,
        device: req.device,
        build_options: req.build_options,
        simd: kernel.simd.max(1) as u64,
        args: &args,
    };
    std::fs::write(&out, skeleton.render()).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// The `source` field: the file name when the launch file sits beside it, else an absolute
/// path (or the path as given when it cannot be made absolute).
fn source_from(source: &Path, launch: &Path) -> String {
    let same = |a: &Path, b: &Path| std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok();
    let (src_dir, out_dir) =
        (source.parent().unwrap_or(Path::new(".")), launch.parent().unwrap_or(Path::new(".")));
    let dir = |d: &Path| if d.as_os_str().is_empty() { PathBuf::from(".") } else { d.to_path_buf() };
    match source.file_name() {
        Some(name) if same(&dir(src_dir), &dir(out_dir)) => name.to_string_lossy().into_owned(),
        _ => std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf()).display().to_string(),
    }
}

struct Skeleton<'a> {
    source: String,
    kernel: &'a str,
    device: &'a str,
    build_options: &'a str,
    simd: u64,
    args: &'a [ArgInfo],
}

impl Skeleton<'_> {
    /// The launch file: one field a line, one argument a line.
    fn render(&self) -> String {
        let items = self.simd * GROUPS;
        let mut lines = vec![
            field("source", &json!(self.source)),
            field("kernel", &json!(self.kernel)),
            field("device", &json!(self.device)),
            field("build_options", &json!(self.build_options)),
            field("global_size", &json!([items])),
            field("local_size", &json!([self.simd])),
        ];
        let args: Vec<String> =
            self.args.iter().map(|a| format!("    {}", placeholder(a, items, self.simd))).collect();
        lines.push(format!("  \"args\": [\n{}\n  ]", args.join(",\n")));
        format!("{{\n{}\n}}\n", lines.join(",\n"))
    }
}

fn field(key: &str, value: &Value) -> String {
    format!("  {}: {}", json!(key), inline(value))
}

/// JSON on one line with a space after `:` and `,`.
fn inline(v: &Value) -> String {
    match v {
        Value::Array(items) => format!("[{}]", items.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let parts: Vec<String> =
                map.iter().map(|(k, v)| format!("{}: {}", json!(k), inline(v))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// One argument's entry: its name, type and a placeholder in the form its type takes.
fn placeholder(a: &ArgInfo, items: u64, group: u64) -> String {
    let d = Declared::parse(&a.type_name, &a.address_qualifier);
    let mut parts = vec![("name", json!(a.name)), ("type", json!(d.display))];
    match (&d.pointee, a.address_qualifier.as_str()) {
        (Some(p), "__local") => parts.push(("local", json!(group * p.size.unwrap_or(4) as u64))),
        (Some(p), qualifier) => {
            match p.size.filter(|_| p.scalar.is_some()) {
                Some(_) => parts.extend([("fill", json!(0)), ("count", json!(items))]),
                None => parts.push(("size", json!(items * 4))),
            }
            if qualifier == "__global" && !a.type_qualifiers.contains("const") {
                parts.push(("output", json!(format!("out/{}.bin", a.name))));
            }
        }
        (None, _) => parts.push(value_placeholder(&d)),
    }
    let fields: Vec<String> = parts.iter().map(|(k, v)| format!("{}: {}", json!(k), inline(v))).collect();
    format!("{{{}}}", fields.join(", "))
}

/// Zero in the argument's type: `0`, `[0, 0, 0, 0]`, or zero bytes for a struct.
fn value_placeholder(d: &Declared) -> (&'static str, Value) {
    let zero = if d.value.scalar.is_some_and(|s| {
        matches!(
            s,
            vdb::launch::argtypes::Scalar::Float
                | vdb::launch::argtypes::Scalar::Double
                | vdb::launch::argtypes::Scalar::Half
        )
    }) {
        json!(0.0)
    } else {
        json!(0)
    };
    match (d.value.scalar, d.value.lanes) {
        (Some(_), 1) => ("value", zero),
        (Some(_), n) => ("value", Value::Array(vec![zero; n as usize])),
        (None, _) => ("bytes", json!("00".repeat(d.value.size.unwrap_or(4) as usize))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(index: u32, name: &str, qualifier: &str, ty: &str, quals: &str) -> ArgInfo {
        ArgInfo {
            index,
            name: name.into(),
            address_qualifier: qualifier.into(),
            access_qualifier: "NONE".into(),
            type_name: ty.into(),
            type_qualifiers: quals.into(),
        }
    }

    #[test]
    fn placeholders_take_the_form_of_the_type() {
        let line = |a: ArgInfo| placeholder(&a, 64, 16);
        assert_eq!(
            line(arg(0, "in", "__global", "float*;8", "const")),
            r#"{"name": "in", "type": "__global float*", "fill": 0, "count": 64}"#
        );
        assert_eq!(
            line(arg(1, "out", "__global", "int4*;8", "NONE")),
            r#"{"name": "out", "type": "__global int4*", "fill": 0, "count": 64, "output": "out/out.bin"}"#
        );
        assert_eq!(
            line(arg(2, "tmp", "__local", "int*;8", "NONE")),
            r#"{"name": "tmp", "type": "__local int*", "local": 64}"#
        );
        assert_eq!(
            line(arg(3, "s", "__private", "float;4", "NONE")),
            r#"{"name": "s", "type": "float", "value": 0.0}"#
        );
        assert_eq!(
            line(arg(4, "v", "__private", "uint3;16", "NONE")),
            r#"{"name": "v", "type": "uint3", "value": [0, 0, 0]}"#
        );
        assert_eq!(
            line(arg(5, "st", "__private", "S;8", "NONE")),
            r#"{"name": "st", "type": "S", "bytes": "0000000000000000"}"#
        );
    }
}
