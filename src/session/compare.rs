//! `compare LOC FILE`: memory against a reference (pocl's output, a golden file), element by
//! element, with the last writer of each element that differs, so a wrong output leads
//! straight to the step, lane and work-item that wrote it.

use serde_json::{json, Value};

use super::command::{Format, UNIT_OF_TYPE};
use super::format::value as fmt_value;
use super::handlers::{Reply, MAX_MEMORY_LEN};
use super::types::ElemType;
use super::Session;
use crate::exec::load_le;
use crate::isa::DataType;
use crate::machine::MemSpace;

/// Differing elements reported with their writers (the count covers them all).
pub const SHOWN_MISMATCHES: usize = 10;

impl Session {
    pub(super) fn compare(
        &mut self,
        format: Format,
        unit: u32,
        loc: &str,
        file: &str,
        ulps: u64,
    ) -> Result<Reply, String> {
        let (space, addr) = self.memory_at(loc)?;
        let reading = self.reading(space, addr, format, unit);
        if ulps > 0 && !reading.scalar().is_float() {
            return Err(format!(
                "`ulp N` is for float elements; {loc} holds {} (compare/fw or compare/fg reads floats)",
                reading.name()
            ));
        }
        let (path, expected) = self.read_user_file(file, MAX_MEMORY_LEN)?;
        let len = expected.len() as u64;
        if len == 0 || len > MAX_MEMORY_LEN {
            return Err(format!("{}: {len} bytes; compare takes 1 to {MAX_MEMORY_LEN}", path.display()));
        }
        let size = reading.size();
        if !len.is_multiple_of(size as u64) {
            return Err(format!(
                "{}: {len} bytes is not a whole number of {size}-byte elements",
                path.display()
            ));
        }
        let mut actual = vec![0u8; expected.len()];
        self.read_memory(space, addr, &mut actual).map_err(|e| {
            format!("{} is {len} bytes, longer than the memory at {loc}: {e}", path.display())
        })?;
        let element = |bytes: &[u8], i: usize| bytes[i * size..][..size].to_vec();
        let differing: Vec<usize> = (0..expected.len() / size)
            .filter(|&i| !reading.equal(&element(&expected, i), &element(&actual, i), ulps))
            .collect();
        let mut shown = Vec::new();
        for &i in differing.iter().take(SHOWN_MISMATCHES) {
            let at = addr + (i * size) as u64;
            let here = self.named_location(space, at);
            let writer = self
                .writes_query(&format!("{here} {size}"), 1)?
                .fields
                .remove("writer")
                .unwrap_or(Value::Null);
            let (e, a) = (element(&expected, i), element(&actual, i));
            let mut m = json!({"element": i, "location": here, "address": format!("{at:#x}"),
                               "expected": reading.shown(&e), "actual": reading.shown(&a), "writer": writer});
            if let (Reading::Typed(elem, _), Value::Object(fields)) = (&reading, &mut m) {
                fields.insert("type".into(), json!(elem.name()));
                fields.insert("expected_value".into(), elem.json(&e));
                fields.insert("actual_value".into(), elem.json(&a));
            }
            shown.push((m, reading.text(&e), reading.text(&a)));
        }
        let n = expected.len() / size;
        let within = if ulps > 0 { format!(" within {ulps} ULP") } else { String::new() };
        let what = format!(
            "{} ({n} elements of {}) against {}{within}",
            self.named_location(space, addr),
            reading.name(),
            path.display()
        );
        let mut lines = vec![match differing.len() {
            0 => format!("{what}: all equal"),
            d => format!("{what}: {d} differ"),
        }];
        for (m, expected, actual) in &shown {
            lines.push(format!(
                "  [{}] {}: expected {expected} got {actual}  {}",
                m["element"],
                str(&m["location"]),
                writer_text(&m["writer"])
            ));
        }
        if differing.len() > shown.len() {
            lines.push(format!("  … and {} more", differing.len() - shown.len()));
        }
        let mismatches: Vec<Value> = shown.into_iter().map(|(m, _, _)| m).collect();
        Ok(Reply::text(lines.join("\n"))
            .with("elements", json!(n))
            .with("count", json!(differing.len()))
            .with("mismatches", json!(mismatches)))
    }

    /// How `compare` reads elements: without a unit letter a typed buffer's elements, else
    /// (and in raw launches and SLM) units of `unit` bytes (a word without one) in `format`
    /// (hex without one).
    fn reading(&self, space: MemSpace, addr: u64, format: Format, unit: u32) -> Reading {
        let typed = self.typed_buffer(space, addr).filter(|_| unit == UNIT_OF_TYPE);
        if let Some(b) = typed {
            return Reading::Typed(b.elem, format);
        }
        let unit = if unit == UNIT_OF_TYPE { 4 } else { unit };
        let format = if format == Format::Natural { Format::Hex } else { format };
        Reading::Units(super::format::unit_type(u64::from(unit), format), format)
    }
}

/// How `compare` reads and shows an element.
enum Reading {
    /// A typed buffer's element, in a format the user gave (`Natural` when none).
    Typed(ElemType, Format),
    /// Raw units (`compare/dw`) of this type, in this format.
    Units(DataType, Format),
}

impl Reading {
    fn size(&self) -> usize {
        match self {
            Reading::Typed(e, _) => e.size() as usize,
            Reading::Units(ty, _) => ty.size() as usize,
        }
    }

    fn scalar(&self) -> DataType {
        match self {
            Reading::Typed(e, _) => e.scalar,
            Reading::Units(ty, _) => *ty,
        }
    }

    /// `float`, or `4 bytes`.
    fn name(&self) -> String {
        match self {
            Reading::Typed(e, _) => e.name(),
            Reading::Units(ty, _) => format!("{} bytes", ty.size()),
        }
    }

    /// Whether element bytes `actual` equal `expected`: every scalar of a vector, floats
    /// within `ulps`.
    fn equal(&self, expected: &[u8], actual: &[u8], ulps: u64) -> bool {
        let (ty, n) = match self {
            Reading::Typed(e, _) => (e.scalar, e.lanes as usize),
            Reading::Units(ty, _) => (*ty, 1),
        };
        let size = ty.size() as usize;
        (0..n).all(|k| {
            let scalar = |b: &[u8]| b.get(k * size..(k + 1) * size).map(|s| load_le(s, size as u32));
            match (scalar(expected), scalar(actual)) {
                (Some(e), Some(a)) => equal(ty, e, a, ulps),
                _ => expected == actual,
            }
        })
    }

    /// The `expected`/`actual` string of JSON: the element's hex without a format letter
    /// (as before elements had types), else as the format reads it.
    fn shown(&self, bytes: &[u8]) -> String {
        match self {
            Reading::Typed(e, Format::Natural) => e.hex(bytes),
            Reading::Typed(e, format) => e.text(bytes, *format),
            Reading::Units(ty, format) => fmt_value(*ty, load_le(bytes, ty.size()), *format),
        }
    }

    /// What the text shows: a typed element as its type reads and its hex.
    fn text(&self, bytes: &[u8]) -> String {
        match self {
            Reading::Typed(e, Format::Natural) => e.values_text(bytes),
            _ => self.shown(bytes),
        }
    }
}

/// Whether an element equals its reference: the same bits, or for floats within `ulps` units in
/// the last place (any two NaNs are equal; so are +0 and -0 once `ulps` is above 0).
fn equal(ty: DataType, expected: u64, actual: u64, ulps: u64) -> bool {
    if expected == actual {
        return true;
    }
    let bits = match ty {
        DataType::F => 32,
        DataType::Df => 64,
        _ => return false,
    };
    let nan = |b: u64| match bits {
        32 => f32::from_bits(b as u32).is_nan(),
        _ => f64::from_bits(b).is_nan(),
    };
    if nan(expected) || nan(actual) {
        return nan(expected) && nan(actual);
    }
    ulps > 0 && ordered(expected, bits).abs_diff(ordered(actual, bits)) <= u128::from(ulps)
}

/// A float's bits mapped to integers in the order of the values (sign-magnitude to a line).
fn ordered(raw: u64, bits: u32) -> i128 {
    let sign = raw >> (bits - 1) & 1 != 0;
    let magnitude = i128::from(raw & ((1u64 << (bits - 1)) - 1));
    if sign {
        -magnitude
    } else {
        magnitude
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
    let item = super::handlers::writer_work_items(w);
    format!(
        "written at step {} by thread {} lane {}{item}, line {}",
        w["step"], w["thread"], w["lane"], w["line"]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ULP distances agree with stepping through the floats one representable value at a time,
    /// across zero and between denormals and normals.
    #[test]
    fn ulp_distance_counts_representable_floats() {
        let next = |x: f32| {
            if x == 0.0 {
                f32::from_bits(1)
            } else if x > 0.0 {
                f32::from_bits(x.to_bits() + 1)
            } else {
                f32::from_bits(x.to_bits() - 1)
            }
        };
        for start in [-1.5e-38f32, -3.0, 0.0, 1.0, 1.17e-38, 3.4e38] {
            let mut x = start;
            for k in 0..40u64 {
                let (a, b) = (u64::from(start.to_bits()), u64::from(x.to_bits()));
                assert!(equal(DataType::F, a, b, k.max(1)), "{start} {x} {k}");
                if k > 1 {
                    assert!(!equal(DataType::F, a, b, k - 1), "{start} {x} {k}");
                }
                if x.is_infinite() {
                    break;
                }
                x = next(x);
            }
        }
        let (pos, neg) = (0f32.to_bits() as u64, (-0f32).to_bits() as u64);
        assert!(!equal(DataType::F, pos, neg, 0) && equal(DataType::F, pos, neg, 1));
        let nan = f32::NAN.to_bits() as u64;
        assert!(equal(DataType::F, nan, nan | 1, 0) && !equal(DataType::F, nan, 0, u64::MAX));
        assert!(!equal(DataType::Ud, 5, 6, 100), "integers compare bits");
        let one = 1f64.to_bits();
        assert!(equal(DataType::Df, one, one + 7, 7) && !equal(DataType::Df, one, one + 8, 7));
    }
}
