//! Typed memory values: watchpoint stops, `x`, `last-write`, `history`, `why` and `compare`
//! read an OpenCL buffer as its argument's element type (floats for `float*`, signed for
//! `int*`, vectors as tuples) with the little-endian value in hex, checked against what the
//! kernels compute from their input files; raw launches and SLM stay bytes and words.

use serde_json::Value;

use crate::harness::{cmd, launch, session};
use vdb::session::{hex, parse, StopReason};

const FLOAT_MATH: &str = "opencl/float_math/skl.launch.json";
const DIVMOD: &str = "opencl/divmod/skl.launch.json";
const VECTORS: &str = "opencl/vectors/skl.launch.json";

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(launch(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()
}

/// A JSON number read back as the f32 it was printed from.
fn as_f32(v: &Value) -> f32 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) as f32
}

/// float_math's input and one work-item whose `exact[6i + 1] = x * y` is a non-zero float
/// with a fraction: (i, x, y).
fn float_item() -> (usize, f32, f32) {
    let input = f32s(&read("opencl/float_math/in/in.bin"));
    let n = input.len();
    let pair = |i: usize| (input[i], input[(i + 7) % n]);
    let i = (3..n)
        .find(|&i| {
            let (x, y) = pair(i);
            (x * y).is_finite() && (x * y).fract() != 0.0
        })
        .expect("a product with a fraction");
    (i, pair(i).0, pair(i).1)
}

/// A watchpoint on one float of `exact` (no length: one element) stops at the store with old
/// and new as floats, their hex, and the raw bytes as before, in text and in JSON; a float
/// condition compares the float.
#[test]
fn watch_stops_show_a_float_buffers_values_as_floats() {
    let mut s = session(&launch(FLOAT_MATH));
    let (i, x, y) = float_item();
    let product = x * y;
    let at = 4 * (6 * i + 1);
    cmd(&mut s, &format!("watch exact+{at}"));
    let r = cmd(&mut s, "continue");
    let Some(StopReason::Watchpoint(h)) = &r.stop else { panic!("{:?}", r.stop) };
    assert_eq!(h.workitems, vec![i.to_string()]);
    assert_eq!(h.new, hex(&product.to_le_bytes()), "the raw bytes stay");
    let bits = format!("{:#010x}", product.to_bits());
    let stop = serde_json::to_value(&r).expect("json")["stop"].clone();
    assert_eq!(stop["reason"], "watchpoint");
    assert_eq!(stop["type"], "float");
    assert_eq!(as_f32(&stop["new_value"]), product);
    assert_eq!(as_f32(&stop["old_value"]), 0.0);
    assert_eq!(stop["new_hex"], bits.as_str());
    assert_eq!(stop["old_hex"], "0x00000000");
    assert!(r.text.contains(&format!("float 0 (0x00000000) -> {product} ({bits})")), "{}", r.text);
    let step = h.step;
    // `if == VALUE` compares the float (as a double, exactly), not the bits as an integer.
    cmd(&mut s, "delete");
    cmd(&mut s, "run");
    cmd(&mut s, &format!("watch exact+{at} if == {}", f64::from(product)));
    let hit = cmd(&mut s, "continue").stop;
    assert!(matches!(&hit, Some(StopReason::Watchpoint(h)) if h.step == step), "{hit:?}");
    cmd(&mut s, "delete");
    cmd(&mut s, "run");
    cmd(&mut s, &format!("watch exact+{at} if != {}", f64::from(product)));
    assert_eq!(cmd(&mut s, "continue").stop, Some(StopReason::End));
}

/// `last-write` and `history` on `int*` and `long*` buffers give signed values computed from
/// the inputs; a location without a length is the element holding it; an explicit byte stays
/// a byte.
#[test]
fn last_write_and_history_read_int_buffers_as_signed() {
    let mut s = session(&launch(DIVMOD));
    s.run_to_end();
    let (a, b) = (i32s(&read("opencl/divmod/in/a.bin")), i32s(&read("opencl/divmod/in/b.bin")));
    let divisor = |i: usize| if b[i] == 0 { 7 } else { b[i] };
    let i = (0..a.len()).find(|&i| a[i].wrapping_div(divisor(i)) < 0).expect("a negative quotient");
    let (q, rem) = (a[i].wrapping_div(divisor(i)), a[i].wrapping_rem(divisor(i)));
    let w = cmd(&mut s, &format!("last-write out+{}", 16 * i));
    let writer = &w.fields["writer"];
    assert_eq!(writer["type"], "int");
    assert_eq!(writer["new_value"].as_i64(), Some(i64::from(q)));
    assert_eq!(writer["old_value"].as_i64(), Some(0));
    assert_eq!(writer["new_hex"], format!("{:#010x}", q as u32).as_str());
    assert_eq!(writer["new"], hex(&q.to_le_bytes()).as_str());
    assert!(w.text.contains(&format!("int 0 (0x00000000) -> {q} ({:#010x})", q as u32)), "{}", w.text);
    // Inside the element, without a length: the element from its start.
    let inside = cmd(&mut s, &format!("last-write out+{}", 16 * i + 2));
    assert_eq!(inside.fields["writer"], *writer);
    let base = s.buffers.iter().find(|(name, _, _)| name == "out").expect("out").1;
    assert!(inside.text.contains(&format!("({:#x})", base + 16 * i as u64)), "{}", inside.text);
    // One byte asked for: bytes, no type.
    let byte = cmd(&mut s, &format!("last-write out+{} 1", 16 * i)).fields["writer"].clone();
    assert!(byte.get("type").is_none(), "{byte}");
    assert_eq!(byte["new"], hex(&q.to_le_bytes()[..1]).as_str());
    let history = cmd(&mut s, &format!("history out+{}", 16 * i + 4));
    let writes = history.fields["writes"].as_array().expect("writes").clone();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0]["new_value"].as_i64(), Some(i64::from(rem)));
    assert!(history.text.contains(&format!("-> {rem} ({:#010x})", rem as u32)), "{}", history.text);
    // `long*`: 64-bit signed.
    let (lx, ly) = (i64::from(a[i]) * 1_000_003, i64::from(divisor(i)) * 7);
    let long = cmd(&mut s, &format!("last-write out64+{}", 16 * i)).fields["writer"].clone();
    assert_eq!(long["type"], "long");
    assert_eq!(long["new_value"].as_i64(), Some(lx / ly));
    assert_eq!(long["new_hex"], format!("{:#018x}", lx / ly).as_str());
}

/// `x` without a unit shows a typed buffer's elements (exact's floats are pocl's reference
/// and the sums and products of the inputs), rows labelled with the buffer offset; `x/6xw`
/// and `x/8b` still read raw words and bytes as gdb's.
#[test]
fn examine_shows_elements_without_a_unit_and_raw_units_with_one() {
    let mut s = session(&launch(FLOAT_MATH));
    s.run_to_end();
    let (i, x, y) = float_item();
    let reference = f32s(&read("opencl/float_math/expected/exact.bin"));
    let mine = cmd(&mut s, &format!("x/6 exact+{}", 24 * i));
    let f = &mine.fields;
    assert_eq!(f["type"], "float");
    let values: Vec<f32> = f["typed_values"].as_array().expect("values").iter().map(as_f32).collect();
    assert_eq!(values, reference[6 * i..6 * i + 6]);
    assert_eq!(values[..3], [x + y, x * y, x.mul_add(y, 1.5)]);
    let hexes: Vec<String> = values.iter().map(|v| format!("{:#010x}", v.to_bits())).collect();
    assert_eq!(f["values_hex"], serde_json::json!(hexes));
    assert_eq!(f["value"][1], (x * y).to_string().as_str());
    let base = u64::from_str_radix(f["address"].as_str().expect("address").trim_start_matches("0x"), 16)
        .expect("hex address");
    assert!(mine.text.starts_with(&format!("{base:#x} <exact+{:#x}>: ", 24 * i)), "{}", mine.text);
    let words = cmd(&mut s, &format!("x/6xw exact+{}", 24 * i)).fields;
    assert_eq!(words["value"], serde_json::json!(hexes));
    assert!(words.get("type").is_none());
    let bytes = cmd(&mut s, &format!("x/8b exact+{}", 24 * i)).fields;
    let raw: Vec<String> =
        values[..2].iter().flat_map(|v| v.to_le_bytes()).map(|b| format!("{b:#04x}")).collect();
    assert_eq!(bytes["value"], serde_json::json!(raw));
    // The int buffer `conv`: signed, as pocl computed them.
    let conv = i32s(&read("opencl/float_math/expected/conv.bin"));
    let c = cmd(&mut s, &format!("x/3 conv+{}", 12 * i)).fields;
    assert_eq!(c["type"], "int");
    let got: Vec<i64> =
        c["typed_values"].as_array().expect("values").iter().filter_map(Value::as_i64).collect();
    assert_eq!(got, conv[3 * i..3 * i + 3].iter().map(|&v| i64::from(v)).collect::<Vec<_>>());
}

/// Vector buffers (int4, float2, uchar4) read as tuples, each component as its type, as the
/// kernel computes them from its inputs.
#[test]
fn vector_elements_read_as_tuples() {
    let mut s = session(&launch(VECTORS));
    s.run_to_end();
    let (a, b, c) = (
        i32s(&read("opencl/vectors/in/a.bin")),
        f32s(&read("opencl/vectors/in/b.bin")),
        read("opencl/vectors/in/c.bin"),
    );
    let n = a.len() / 4;
    let out = cmd(&mut s, &format!("x/{n} out")).fields;
    assert_eq!(out["type"], "int4");
    for (i, v) in out["typed_values"].as_array().expect("values").iter().enumerate() {
        let k = i as i32;
        let want = [a[4 * i + 3] + k, a[4 * i + 2] + 2 * k, a[4 * i + 1] + 3 * k, a[4 * i] + 4 * k];
        assert_eq!(*v, serde_json::json!(want), "out[{i}]");
    }
    // From inside element 1: that element.
    let outf = cmd(&mut s, "x/1 outf+12");
    let (fx, fy) = (b[2], b[3]);
    assert_eq!(outf.fields["type"], "float2");
    let got: Vec<f32> = outf.fields["typed_values"][0].as_array().expect("pair").iter().map(as_f32).collect();
    assert_eq!(got, [fy * 2.0, fx - fy]);
    assert!(outf.text.contains(&format!("({}, {})", fy * 2.0, fx - fy)), "{}", outf.text);
    let i = 5;
    let u = &c[4 * i..4 * i + 4];
    let want = [u[0].wrapping_add(u[1]), u[1] ^ u[2], u[2], u[3].wrapping_add(1)];
    let w = cmd(&mut s, &format!("last-write outc+{}", 4 * i + 2)).fields["writer"].clone();
    assert_eq!(w["type"], "uchar4");
    assert_eq!(w["new_value"], serde_json::json!(want));
    assert_eq!(w["old_value"], serde_json::json!([0, 0, 0, 0]));
}

/// `compare` without letters reads the buffer's element type: floats shown as floats with
/// their hex, `ulp N` without `/fw`; an int buffer refuses `ulp`.
#[test]
fn compare_reads_the_buffers_type() {
    let mut s = session(&launch(FLOAT_MATH));
    let reference = f32s(&read("opencl/float_math/expected/exact.bin"));
    let start = cmd(&mut s, "compare exact expected/exact.bin").fields;
    assert_eq!(start["elements"].as_u64(), Some(reference.len() as u64));
    assert_eq!(start["count"].as_u64(), Some(reference.iter().filter(|v| v.to_bits() != 0).count() as u64));
    for m in start["mismatches"].as_array().expect("mismatches") {
        let i = m["element"].as_u64().expect("element") as usize;
        assert_eq!(m["type"], "float");
        assert_eq!(as_f32(&m["expected_value"]), reference[i]);
        assert_eq!(m["expected"], format!("{:#010x}", reference[i].to_bits()).as_str());
        assert_eq!(m["actual"], "0x00000000");
    }
    s.run_to_end();
    assert_eq!(cmd(&mut s, "compare exact expected/exact.bin").fields["count"].as_u64(), Some(0));
    let approx = cmd(&mut s, "compare approx expected/approx.bin ulp 8");
    assert_eq!(approx.fields["count"].as_u64(), Some(0), "{}", approx.text);
    let e = s.execute(&parse("compare conv expected/conv.bin ulp 1").expect("p").expect("c"));
    assert!(e.expect_err("ints").contains("`ulp N` is for float elements"));
}

/// `why` on a float element: the root's value as a float with its hex beside the raw bytes.
#[test]
fn why_shows_a_typed_root() {
    let mut s = session(&launch(FLOAT_MATH));
    s.run_to_end();
    let (i, x, y) = float_item();
    let at = 4 * (6 * i + 1);
    let why = cmd(&mut s, &format!("why exact+{at} depth 1"));
    let tree = &why.fields["tree"];
    assert_eq!(tree["type"], "float");
    assert_eq!(as_f32(&tree["typed_value"]), x * y);
    assert_eq!(tree["value"], hex(&(x * y).to_le_bytes()).as_str());
    let first = why.text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("exact+{at:#x} = {} ({:#010x})", x * y, (x * y).to_bits())),
        "{first}"
    );
}

/// Raw launches have no types: `x` reads hex words and watch stops show raw bytes; SLM too.
#[test]
fn raw_launches_and_slm_keep_bytes() {
    let mut s = session(&launch("hand/loop_exit.launch.json"));
    let x = cmd(&mut s, "x out").fields;
    assert!(x.get("type").is_none());
    let words = x["value"].as_array().expect("value");
    assert!(
        words.len() == 1 && words[0].as_str().is_some_and(|w| w.len() == 10 && w.starts_with("0x")),
        "{x:?}"
    );
    cmd(&mut s, "watch out+36 4");
    let r = cmd(&mut s, "continue");
    let Some(StopReason::Watchpoint(h)) = &r.stop else { panic!("{:?}", r.stop) };
    assert!(h.typed.is_none());
    assert!(r.text.contains(&format!("{} -> {}", h.old, h.new)), "{}", r.text);
    assert!(serde_json::to_value(&r).expect("json")["stop"].get("new_value").is_none());
    let mut s = session(&launch("opencl/slm_reduce/skl.launch.json"));
    cmd(&mut s, "step 200");
    let slm = cmd(&mut s, "x/2 slm+0").fields;
    assert!(slm.get("type").is_none());
    assert_eq!(slm["space"], "slm0");
}
