//! `compare LOC FILE`: memory against a reference (pocl's output, a golden file), element by
//! element, with the last writer of each element that differs, so a wrong output leads
//! straight to the step, lane and work-item that wrote it.

use serde_json::{json, Value};

use super::command::Format;
use super::format::value as fmt_value;
use super::handlers::{Reply, MAX_MEMORY_LEN};
use super::Session;
use crate::exec::load_le;
use crate::isa::DataType;

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
        let (path, expected) = self.read_user_file(file, MAX_MEMORY_LEN)?;
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
        let ty = super::format::unit_type(u64::from(unit), format);
        let size = unit as usize;
        let element = |bytes: &[u8], i: usize| load_le(&bytes[i * size..][..size], unit);
        let differing: Vec<usize> = (0..expected.len() / size)
            .filter(|&i| !equal(ty, element(&expected, i), element(&actual, i), ulps))
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
            let value = |bytes: &[u8]| fmt_value(ty, element(bytes, i), format);
            shown.push(json!({"element": i, "location": here, "address": format!("{at:#x}"),
                              "expected": value(&expected), "actual": value(&actual), "writer": writer}));
        }
        let n = expected.len() / size;
        let within = if ulps > 0 { format!(" within {ulps} ULP") } else { String::new() };
        let what = format!(
            "{} ({n} elements of {unit} bytes) against {}{within}",
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
