//! Arguments by name and typed values, on the committed zebins of the reference kernels: a
//! launch with typed values binds the same bytes as the one with files, and every size that
//! does not fit the declared type is an error naming the field and the argument.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::argtypes::{Declared, ValueType};
use super::raw::{load, load_value, KernelArgValue, Launch, LaunchError};
use crate::program::Program;

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/shared").join(name)
}

/// k23_scalar_args on skl: `char c, uchar uc, short s, ushort us, int i, uint u, long l,
/// ulong ul, float f, int4 v4, float2 f2, S st, __global long* out`, with `args`.
fn k23(args: Value) -> Result<Launch, LaunchError> {
    k23_reusing(args, None)
}

/// [`k23`] with the kernel already parsed.
fn k23_reusing(args: Value, program: Option<&Arc<Program>>) -> Result<Launch, LaunchError> {
    let spec = json!({"kernel": "skl/k23_scalar_args.simd32.visaasm", "zebin": "skl/k23_scalar_args.zebin",
                      "global_size": [16], "local_size": [16], "args": args});
    load_value(&spec, &shared("k23_scalar_args"), "k23.json", program)
}

/// k23's arguments as typed values, equal to the committed `in/*.bin` files.
fn k23_typed() -> Value {
    json!([
        {"name": "c", "value": -5}, {"name": "uc", "value": 200}, {"name": "s", "value": -30000},
        {"name": "us", "value": 60000}, {"name": "i", "value": -123456}, {"name": "u", "value": 3000000000u32},
        {"name": "l", "value": -1099511627783i64}, {"name": "ul", "value": "0xfedcba9876543210"},
        {"name": "f", "type": "float", "value": 3.5}, {"name": "v4", "value": [1, -2, 3, -4]},
        {"name": "f2", "value": [0.25, "-8.5"]}, {"name": "st", "file": "in/st.bin"},
        {"name": "out", "type": "__global long*", "fill": 0, "count": 320, "output": "out/out.bin"}
    ])
}

#[test]
fn typed_values_by_name_bind_the_bytes_of_the_files() {
    let files = load(&shared("k23_scalar_args/skl.launch.json")).unwrap_or_else(|e| panic!("{e}"));
    let typed = k23(k23_typed()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(typed.args.len(), files.args.len());
    for (t, f) in typed.args.iter().zip(&files.args) {
        match (&t.value, &f.value) {
            (KernelArgValue::Buffer { size: a, .. }, KernelArgValue::Buffer { size: b, .. }) => {
                assert_eq!(a, b, "{}", t.name)
            }
            _ => assert_eq!(t, f, "{}", t.name),
        }
    }
    assert_eq!(typed.outputs.len(), 1);
}

/// The error of k23 with the typed arguments, entry `at` replaced by `entry`.
fn k23_error(at: usize, entry: Value) -> LaunchError {
    let mut args = k23_typed();
    args[at] = entry;
    match k23(args) {
        Ok(_) => panic!("accepted: {}", args_text(at)),
        Err(e) => e,
    }
}

fn args_text(at: usize) -> String {
    format!("args[{at}]")
}

#[track_caller]
fn assert_error(e: &LaunchError, field: &str, words: &[&str]) {
    assert_eq!(e.field.as_deref(), Some(field), "{e}");
    for w in words {
        assert!(e.message.contains(w), "`{w}` not in: {e}");
    }
}

#[test]
fn sizes_that_do_not_fit_the_declared_type_name_the_argument() {
    // Today's complaint: "bytes": "05" for a uint.
    assert_error(
        &k23_error(5, json!({"name": "u", "bytes": "05"})),
        "args[5].bytes",
        &["`u`", "uint", "takes 4"],
    );
    assert_error(&k23_error(5, json!({"index": 5, "bytes": "05"})), "args[5].bytes", &["`u`", "takes 4"]);
    assert_error(
        &k23_error(0, json!({"name": "c", "bytes": "05000000"})),
        "args[0].bytes",
        &["`c`", "takes 1"],
    );
    assert_error(
        &k23_error(11, json!({"name": "st", "bytes": "00"})),
        "args[11].bytes",
        &["`st`", "takes 24"],
    );
    assert_error(&k23_error(1, json!({"name": "uc", "value": 256})), "args[1].value", &["`uc`", "uchar"]);
    assert_error(&k23_error(2, json!({"name": "s", "value": "0x10000"})), "args[2].value", &["short"]);
    assert_error(&k23_error(4, json!({"name": "i", "value": 0.5})), "args[4].value", &["`i`", "int"]);
    assert_error(&k23_error(5, json!({"name": "u", "value": -1})), "args[5].value", &["does not fit"]);
    assert_error(
        &k23_error(9, json!({"name": "v4", "value": [1, 2, 3]})),
        "args[9].value",
        &["4 values, 3 given"],
    );
    assert_error(
        &k23_error(11, json!({"name": "st", "value": 1})),
        "args[11].value",
        &["cannot type", "bytes"],
    );
    let odd = json!({"name": "out", "size": 12});
    assert_error(&k23_error(12, odd), "args[12].size", &["whole number of `long`", "`out`"]);
    let fill = json!({"name": "out", "fill": 1});
    assert_error(&k23_error(12, fill), "args[12].count", &["`fill` needs `count`"]);
    let wrong = json!({"name": "out", "values": [1, "x"]});
    assert_error(&k23_error(12, wrong), "args[12].values[1]", &["`out`", "long"]);
}

#[test]
fn names_indices_and_types_are_checked() {
    assert_error(
        &k23_error(0, json!({"name": "nope", "value": 1})),
        "args[0].name",
        &["no argument `nope`", "uc"],
    );
    assert_error(
        &k23_error(0, json!({"index": 1, "name": "c", "value": 1})),
        "args[0].index",
        &["argument 0"],
    );
    assert_error(&k23_error(0, json!({"value": 1})), "args[0]", &["`name`"]);
    let typed = json!({"name": "c", "type": "uchar", "value": 1});
    assert_error(&k23_error(0, typed), "args[0].type", &["`char`", "not `uchar`"]);
    assert_error(&k23_error(0, json!({"name": "uc", "value": 1})), "args[1].name", &["given twice"]);
    assert_error(&k23_error(0, json!({"name": "c", "value": 1, "bytes": "01"})), "args[0]", &["only one of"]);
    let out = json!({"name": "c", "value": 1, "output": "o.bin"});
    assert_error(&k23_error(0, out), "args[0].output", &["by value"]);
    assert_error(&k23_error(12, json!({"name": "out", "value": 1})), "args[12].value", &["pointer"]);
    let missing = k23(json!([{"name": "c", "value": 1}])).err().expect("missing args");
    assert_error(&missing, "args", &["no value for kernel argument 1 (`uc`)"]);
}

#[test]
fn local_sizes_and_buffers_take_whole_elements() {
    let base = shared("k24_local_arg");
    let launch = |args: Value| {
        let spec = json!({"kernel": "skl/k24_local_arg.simd32.visaasm", "zebin": "skl/k24_local_arg.zebin",
                          "global_size": [96], "local_size": [24], "args": args});
        load_value(&spec, &base, "k24.json", None)
    };
    let good = json!([{"name": "in", "values": (0..96).collect::<Vec<i32>>()}, {"name": "out", "count": 96},
                      {"name": "scratch", "local": 96}, {"name": "scratch2", "type": "__local float*", "local": 96}]);
    let l = launch(good.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(l.args[0].value, KernelArgValue::Buffer { size: 384, .. }));
    assert!(matches!(l.args[2].value, KernelArgValue::Local { bytes: 96 }));
    let mut bad = good.clone();
    bad[2] = json!({"name": "scratch", "local": 94});
    assert_error(&launch(bad).err().expect("94 bytes"), "args[2].local", &["`int`", "`scratch`"]);
    let mut bad = good.clone();
    bad[2] = json!({"name": "scratch", "count": 24});
    assert_error(&launch(bad).err().expect("count"), "args[2].count", &["__local", "`local`"]);
    let mut bad = good;
    bad[1] = json!({"name": "out", "count": 4, "values": [1, 2, 3, 4, 5]});
    assert_error(&launch(bad).err().expect("count"), "args[1].count", &["smaller than the 20 bytes"]);
}

#[test]
fn declared_types_read_from_args_info() {
    let d = Declared::parse("float*;8", "__global");
    assert_eq!(d.display, "__global float*");
    assert!(d.matches("float *") && d.matches("__global  float*") && !d.matches("int*"));
    assert!(d.matches("__global const float*") && d.matches("const float *"));
    assert_eq!(d.pointee.as_ref().and_then(|p| p.size), Some(4));
    let v = Declared::parse("int3;16", "__private");
    assert_eq!((v.display.as_str(), v.value.lanes, v.value.size), ("int3", 3, Some(16)));
    let s = Declared::parse("S;24", "__private");
    assert_eq!((s.value.scalar, s.value.size), (None, Some(24)));
    assert_eq!(Declared::parse("void*;8", "__global").pointee.and_then(|p| p.size), None);
}

#[test]
fn values_encode_in_their_type() {
    let ty = |name: &str| ValueType::parse(name, None);
    assert_eq!(
        ty("int3").encode(&json!([1, -1, 2]), false),
        Ok(vec![1, 0, 0, 0, 255, 255, 255, 255, 2, 0, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(ty("half").encode(&json!(1.5), false), Ok(vec![0x00, 0x3e]));
    assert_eq!(ty("float").encode(&json!("nan"), false).map(|b| b.len()), Ok(4));
    assert_eq!(ty("float").encode(&json!("0x3f800000"), false), Ok(1.0f32.to_le_bytes().to_vec()));
    assert_eq!(ty("double").encode(&json!(-2), false), Ok((-2.0f64).to_le_bytes().to_vec()));
    assert_eq!(ty("char").encode(&json!(-128), false), Ok(vec![0x80]));
    assert_eq!(ty("uchar").encode(&json!("0xff"), false), Ok(vec![0xff]));
    assert_eq!(ty("ulong").encode(&json!(u64::MAX), false), Ok(vec![0xff; 8]));
    assert_eq!(ty("short2").encode(&json!(7), true), Ok(vec![7, 0, 7, 0]));
    assert!(ty("short2").encode(&json!(7), false).is_err());
    assert!(ty("char").encode(&json!(128), false).is_err());
    assert!(ty("uint").encode(&json!(true), false).is_err());
    // A flat list of components makes whole vectors; nested lists are one vector each.
    assert_eq!(ty("uchar2").encode_list(&[json!(1), json!(2), json!(3), json!(4)]), Ok(vec![1, 2, 3, 4]));
    assert_eq!(ty("uchar2").encode_list(&[json!([1, 2]), json!([3, 4])]), Ok(vec![1, 2, 3, 4]));
    assert_eq!(ty("uchar2").encode_list(&[json!(1), json!(2), json!(3)]).map_err(|e| e.0), Err(3));
}

/// Every form field of every argument with hostile values: errors, never a panic.
#[test]
fn hostile_values_are_errors_not_panics() {
    let hostile = [
        json!(null),
        json!(-1),
        json!(u64::MAX),
        json!(1e300),
        json!("0x"),
        json!("0x1ffffffffffffffff"),
        json!("-inf"),
        json!([]),
        json!([[1, 2], [3]]),
        json!([u64::MAX, -1, "x", null]),
        json!({"a": 1}),
        json!(""),
    ];
    let program = k23(k23_typed()).unwrap_or_else(|e| panic!("{e}")).program;
    let fields = ["value", "values", "fill", "count", "size", "local", "bytes", "file", "type", "index"];
    for at in 0..13 {
        for field in fields {
            for h in &hostile {
                let mut entry = k23_typed()[at].clone();
                entry[field] = h.clone();
                if field == "fill" {
                    entry["count"] = json!(4);
                }
                let mut args = k23_typed();
                args[at] = entry;
                let _ = k23_reusing(args, Some(&program));
            }
        }
    }
}
