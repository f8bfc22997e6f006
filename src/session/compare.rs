//! `compare LOC FILE`: memory against a reference (pocl's output, a golden file), element by
//! element, with the last writer of each element that differs, so a wrong output leads
//! straight to the step, lane and work-item that wrote it.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::command::Format;
use super::expr::location_text;
use super::format::value as fmt_value;
use super::handlers::{Reply, MAX_MEMORY_LEN};
use super::Session;
use crate::exec::load_le;
use crate::isa::DataType;
use crate::machine::MemSpace;

/// Differing elements reported with their writers (the count covers them all).
pub const SHOWN_MISMATCHES: usize = 10;

impl Session {
    /// A reference file's path: as given when it exists from the working folder (absolute, or
    /// relative to where vdb runs, as gdb reads files), else relative to the launch file.
    fn reference_path(&self, file: &str) -> PathBuf {
        let given = Path::new(file);
        if given.is_absolute() || given.exists() {
            given.to_path_buf()
        } else {
            self.base_dir.join(given)
        }
    }

    /// `out+0xb0` for an SVM address inside a named buffer (its source name when the zebin
    /// gives one, else `argN`), else the address as `x` writes it.
    fn named_location(&self, space: MemSpace, addr: u64) -> String {
        let inside = self.buffers.iter().rev().find(|(_, base, size)| (*base..base + size).contains(&addr));
        match (space, inside) {
            (MemSpace::Svm, Some((name, base, _))) if addr == *base => name.clone(),
            (MemSpace::Svm, Some((name, base, _))) => format!("{name}+{:#x}", addr - base),
            _ => location_text(space, addr),
        }
    }

    pub(super) fn compare(
        &mut self,
        format: Format,
        unit: u32,
        loc: &str,
        file: &str,
    ) -> Result<Reply, String> {
        let (space, addr) = self.memory_at(loc)?;
        let path = self.reference_path(file);
        let expected = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let len = expected.len() as u64;
        if len == 0 || len > MAX_MEMORY_LEN {
            return Err(format!("{}: {len} bytes; compare takes 1 to {MAX_MEMORY_LEN}", path.display()));
        }
        if !len.is_multiple_of(u64::from(unit)) {
            return Err(format!(
                "{}: {len} bytes is not a whole number of {unit}-byte elements",
                path.display()
            ));
        }
        let mut actual = vec![0u8; expected.len()];
        self.read_memory(space, addr, &mut actual).map_err(|e| {
            format!("{} is {len} bytes, longer than the memory at {loc}: {e}", path.display())
        })?;
        let ty = match (unit, format) {
            (4, Format::Float) => DataType::F,
            (8, Format::Float) => DataType::Df,
            (1, _) => DataType::Ub,
            (2, _) => DataType::Uw,
            (8, _) => DataType::Uq,
            _ => DataType::Ud,
        };
        let size = unit as usize;
        let differing: Vec<usize> = (0..expected.len() / size)
            .filter(|&i| expected[i * size..][..size] != actual[i * size..][..size])
            .collect();
        let mut shown = Vec::new();
        for &i in differing.iter().take(SHOWN_MISMATCHES) {
            let at = addr + (i * size) as u64;
            let here = self.named_location(space, at);
            let writer = self
                .writes_query(&format!("{here} {unit}"), 1)?
                .fields
                .remove("writer")
                .unwrap_or(Value::Null);
            let value = |bytes: &[u8]| fmt_value(ty, load_le(&bytes[i * size..][..size], unit), format);
            shown.push(json!({"element": i, "location": here, "address": format!("{at:#x}"),
                              "expected": value(&expected), "actual": value(&actual), "writer": writer}));
        }
        let n = expected.len() / size;
        let what = format!(
            "{} ({n} elements of {unit} bytes) against {}",
            self.named_location(space, addr),
            path.display()
        );
        let mut lines = vec![match differing.len() {
            0 => format!("{what}: all equal"),
            d => format!("{what}: {d} differ"),
        }];
        for m in &shown {
            lines.push(format!(
                "  [{}] {}: expected {} got {}  {}",
                m["element"],
                str(&m["location"]),
                str(&m["expected"]),
                str(&m["actual"]),
                writer_text(&m["writer"])
            ));
        }
        if differing.len() > shown.len() {
            lines.push(format!("  … and {} more", differing.len() - shown.len()));
        }
        Ok(Reply::text(lines.join("\n"))
            .with("elements", json!(n))
            .with("count", json!(differing.len()))
            .with("mismatches", json!(shown)))
    }
}

fn str(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// `written at step 168 by thread 1 lane 5 (work-item 5,1,0), line 245`, or that nothing wrote it.
fn writer_text(w: &Value) -> String {
    if w.is_null() {
        return "never written in this run".into();
    }
    let item = match w["workitems"].as_array().map(Vec::as_slice) {
        Some([one, ..]) => format!(" (work-item {})", str(one)),
        _ => String::new(),
    };
    format!(
        "written at step {} by thread {} lane {}{item}, line {}",
        w["step"], w["thread"], w["lane"], w["line"]
    )
}
