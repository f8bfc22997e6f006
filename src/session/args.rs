//! `info args`: the kernel's arguments as the launch bound them, named and typed from the
//! zebin (OpenCL), or a raw launch's memory regions.

use serde_json::{json, Value};

use super::handlers::Reply;
use super::Session;
use crate::launch::raw::KernelArgValue;

impl Session {
    /// `info args`: the kernel's arguments as bound (buffers with their addresses, values,
    /// local sizes); for a raw launch, its named memory regions.
    pub(super) fn info_args(&self) -> Reply {
        if self.args.is_empty() {
            let rows: Vec<Value> = self
                .buffers
                .iter()
                .map(|(n, a, s)| json!({"name": n, "address": format!("{a:#x}"), "size": s}))
                .collect();
            let text: Vec<String> =
                self.buffers.iter().map(|(n, a, s)| format!("{n:<12} {a:#x}, {s} bytes")).collect();
            let head = "a raw launch: no kernel arguments; its memory regions:".to_string();
            return Reply::text(std::iter::once(head).chain(text).collect::<Vec<_>>().join("\n"))
                .with("regions", json!(rows));
        }
        let mut rows = Vec::new();
        let mut text = Vec::new();
        for a in &self.args {
            let decl = format!("{} {} {}", a.address_qualifier, a.type_name, a.name);
            let (shown, value) = match &a.value {
                KernelArgValue::Buffer { address, size } => (
                    format!("buffer at {address:#x}, {size} bytes"),
                    json!({"buffer": format!("{address:#x}"), "size": size}),
                ),
                KernelArgValue::Bytes(b) => {
                    let v = arg_value_text(&a.type_name, b);
                    (format!("= {v}"), json!({"value": v, "bytes": super::motion::hex(b)}))
                }
                KernelArgValue::Local { bytes } => (format!("local, {bytes} bytes"), json!({"local": bytes})),
            };
            text.push(format!("arg{:<3} {:<36} {shown}", a.index, decl.trim()));
            rows.push(json!({"index": a.index, "name": a.name, "type": a.type_name,
                             "address_qualifier": a.address_qualifier, "value": value}));
        }
        Reply::text(text.join("\n")).with("args", json!(rows))
    }
}

/// A by-value argument as its C type reads: `float`/`double` as floats, other scalars as
/// integers (signed unless the type is unsigned), anything else (structs, vectors) as bytes.
fn arg_value_text(type_name: &str, bytes: &[u8]) -> String {
    let t = type_name.trim();
    let raw = |n: usize| bytes.get(..n).map(|b| crate::exec::load_le(b, n as u32));
    let unsigned = t.starts_with('u') || t.starts_with("size_t") || t == "bool";
    let int = |n: usize| {
        raw(n).map(|v| {
            let shift = 64 - 8 * n as u32;
            if unsigned {
                format!("{v} ({v:#x})")
            } else {
                format!("{} ({v:#x})", ((v << shift) as i64) >> shift)
            }
        })
    };
    let text = match (t, bytes.len()) {
        ("float", 4) => raw(4).map(|v| format!("{}", f32::from_bits(v as u32))),
        ("double", 8) => raw(8).map(|v| format!("{}", f64::from_bits(v))),
        ("char" | "uchar" | "bool", 1..=4) => int(1),
        ("short" | "ushort", 2..=4) => int(2),
        ("int" | "uint", 4) => int(4),
        ("long" | "ulong" | "size_t", 8) => int(8),
        _ => None,
    };
    text.unwrap_or_else(|| super::motion::hex(bytes))
}
