//! `.ze_info` / YAML subset tests: the shapes IGC writes, values kept for unknown keys, and
//! errors that name the offending line.

use super::yaml::{self, Node};
use super::zeinfo::{ArgType, ZeInfo, ZeInfoErrorKind};

const SAMPLE: &str = "---
version:         '1.20'
kernels:
  - name:            k
    execution_env:   # comment after a key
      simd_size:       16
      slm_size:        0x100
      has_4gb_buffers: true
      required_sub_group_size: 16
      work_group_walk_order_dimensions: [ 0, 1, 2 ]
    payload_arguments:
    - arg_type:        arg_byvalue
      offset:          8
      size:            4
      arg_index:       1
      source_offset:   4
      is_pipe:         false
    - arg_type:        buffer_offset
      offset:          16
      size:            4
    per_thread_payload_arguments:
      - arg_type:        local_id
        offset:          0
        size:            96
    binding_table_indices:
    per_thread_memory_buffers:
      - type:            scratch
        usage:           single_space
        size:            32768
      - type:            global
        usage:           private_space
        size:            512
      - type:            global
        usage:           private_space
        size:            80
        is_simt_thread:  true
kernels_misc_info:
  - name:            k
    args_info:
      - index:           1
        name:            s
        address_qualifier: __private
        type_name:       'struct S;8'
        type_qualifiers: \"it's \\\"quoted\\\"\"
...
";

#[test]
fn parses_the_shapes_ze_info_uses() {
    let info = ZeInfo::parse(SAMPLE).expect("parses");
    assert_eq!(info.version.as_deref(), Some("1.20"));
    let k = info.kernel("k").expect("kernel");
    assert_eq!(k.execution_env.simd_size, 16);
    assert_eq!(k.execution_env.slm_size, 256);
    assert!(k.execution_env.has_4gb_buffers);
    assert_eq!(k.execution_env.other["required_sub_group_size"], "16");
    assert_eq!(k.execution_env.other["work_group_walk_order_dimensions"], "[0, 1, 2]");
    let arg = &k.payload_arguments[0];
    assert_eq!(arg.arg_type, ArgType::ArgByValue);
    assert_eq!((arg.offset, arg.size, arg.arg_index, arg.source_offset), (8, 4, Some(1), Some(4)));
    assert_eq!(arg.other["is_pipe"], "false");
    assert_eq!(arg.line, 12);
    assert_eq!(k.payload_arguments[1].arg_type, ArgType::Other("buffer_offset".into()));
    assert_eq!(k.per_thread_size(), 96);
    assert_eq!(k.cross_thread_size(), 20);
    assert!(k.binding_table_indices.is_empty());
    // The scratch entries make the `%scratch` surface.
    assert_eq!(k.scratch_size, 32768);
    // Stateless private memory: per hardware thread, or per work-item times the SIMD size.
    assert_eq!(k.private_size, 512 + 80 * 16);
    let misc = info.misc_info("k").expect("misc");
    assert_eq!(misc.args_info[0].type_name, "struct S;8");
    assert_eq!(misc.args_info[0].type_qualifiers, "it's \"quoted\"");
    assert_eq!(misc.args_info[0].access_qualifier, "");
}

#[test]
fn the_symbol_table_kernel_is_not_a_source_kernel() {
    let text = "---\nkernels:\n  - name: lut\n    execution_env:\n      simd_size: 8\n  - name: Intel_Symbol_Table_Void_Program\n    execution_env:\n      simd_size: 8\n...\n";
    let info = ZeInfo::parse(text).expect("parses");
    assert_eq!(info.kernels.len(), 2);
    let names: Vec<&str> = info.source_kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["lut"]);
}

#[test]
fn yaml_nodes_remember_their_lines() {
    let node = yaml::parse("a:\n  - x\n  - y: 1\n    z: 2\nb: 'q'\n").expect("parses");
    let Node::Map { entries, .. } = node else { panic!("map expected") };
    assert_eq!(entries[0].0, "a");
    let Node::List { items, line } = &entries[0].1 else { panic!("list expected") };
    assert_eq!(*line, 2);
    assert_eq!(items[0], Node::Scalar { value: "x".into(), line: 2 });
    assert_eq!(items[1].line(), 3);
    assert_eq!(entries[1].1, Node::Scalar { value: "q".into(), line: 5 });
}

#[test]
fn empty_document_has_no_kernels() {
    assert_eq!(ZeInfo::parse("---\n...\n").expect("parses").kernels.len(), 0);
}

fn error_of(text: &str) -> (u32, ZeInfoErrorKind) {
    let e = ZeInfo::parse(text).expect_err("must fail");
    assert!(e.to_string().contains(&format!("line {}", e.line)), "{e}");
    (e.line, e.kind)
}

#[test]
fn errors_name_the_line() {
    let bad_number = "kernels:\n  - name: k\n    execution_env:\n      simd_size: sixteen\n";
    let (line, kind) = error_of(bad_number);
    assert_eq!(line, 4);
    assert!(matches!(kind, ZeInfoErrorKind::BadNumber { .. }));

    let no_type = "kernels:\n  - name: k\n    payload_arguments:\n      - offset: 0\n";
    assert_eq!(error_of(no_type), (4, ZeInfoErrorKind::MissingKey("arg_type")));

    let not_list = "kernels: 3\n";
    assert_eq!(error_of(not_list), (1, ZeInfoErrorKind::ExpectedList("kernels")));

    let bad_bool = "kernels:\n  - name: k\n    execution_env:\n      has_4gb_buffers: maybe\n";
    assert_eq!(error_of(bad_bool).0, 4);
}

#[test]
fn syntax_errors_name_the_line() {
    let cases: &[(&str, u32)] = &[
        ("a: 1\nb 2\n", 2),
        ("a: 1\n\tb: 2\n", 2),
        ("a: 'open\n", 1),
        ("a:\n  b: 1\n    c: 2\n", 3),
        ("a: 1\na: 2\n", 2),
        ("a: [1, 2\n", 1),
        ("a:\n  - 1\n  b: 2\n", 3),
    ];
    for &(text, line) in cases {
        let (got, kind) = error_of(text);
        assert!(matches!(kind, ZeInfoErrorKind::Syntax(_)), "{text:?}: {kind:?}");
        assert_eq!(got, line, "{text:?}");
    }
}

#[test]
fn garbage_never_panics() {
    let bytes = SAMPLE.as_bytes();
    for cut in 0..bytes.len() {
        if let Ok(text) = std::str::from_utf8(&bytes[..cut]) {
            let _ = ZeInfo::parse(text);
        }
    }
    for junk in ["-", "- -", ":", "a: :", "- a: 1\n b: 2", "'", "\"", "a:\n-\n-", "[", "{a: 1}"] {
        let _ = ZeInfo::parse(junk);
    }
}

/// A ze_info nested far deeper than any compiler writes is an error naming its line, not a
/// stack overflow, even on a spawned thread's stack.
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text: String = (0..5000).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
    let result = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || yaml::parse(&text).map(|_| ()).map_err(|e| e.to_string()))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    let e = result.expect_err("too deep");
    assert!(e.contains("nested more than"), "{e}");
}

/// `info` with its kernel's static SLM set to `bytes`.
fn with_slm(info: &str, bytes: u64) -> String {
    let line = info.lines().find(|l| l.trim_start().starts_with("slm_size:"));
    match line {
        Some(l) => info.replace(l, &format!("{}slm_size: {bytes}", &l[..l.len() - l.trim_start().len()])),
        None => {
            let simd = info.lines().find(|l| l.trim_start().starts_with("simd_size:")).unwrap_or_default();
            let indent = &simd[..simd.len() - simd.trim_start().len()];
            info.replace(simd, &format!("{simd}\n{indent}slm_size: {bytes}"))
        }
    }
}

/// Launch-time checks of what a ze_info says: a SIMD width no kernel has, and more shared
/// local memory than any device (static or `__local` arguments), are launch errors naming the
/// field, not a division by zero, an overflow or gigabytes copied per work-group.
#[test]
fn impossible_simd_and_slm_sizes_are_launch_errors() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/shared/k24_local_arg");
    let zebin = std::fs::read(root.join("skl/k24_local_arg.zebin")).expect("zebin");
    let z = super::Zebin::parse(&zebin).expect("parses");
    let info = z.ze_info_text().expect("ze_info").to_string();
    let launch: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("skl.launch.json")).expect("launch"))
            .expect("json");
    let dir = std::env::temp_dir().join(format!("vdb-zeinfo-limits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let simd_line =
        info.lines().find(|l| l.trim_start().starts_with("simd_size:")).expect("simd_size").to_string();
    let cases = [
        (
            "simd0",
            info.replace(&simd_line, &simd_line.replace(|c: char| c.is_ascii_digit(), "0")),
            None,
            "simd_size 0",
        ),
        ("slm", with_slm(&info, 3_000_000_000), None, "shared local memory"),
        ("local", info.clone(), Some(300_000u64), "shared local memory"),
        ("local4g", info.clone(), Some(4_000_000_000u64), "field `args`"),
    ];
    for (name, yaml_text, local, expect) in cases {
        std::fs::write(dir.join(format!("{name}.yaml")), &yaml_text).expect("yaml");
        let mut l = launch.clone();
        l.as_object_mut().expect("object").remove("zebin");
        l["zeinfo"] = serde_json::json!(format!("{name}.yaml"));
        l["device"] = serde_json::json!("skl");
        l["kernel"] =
            serde_json::json!(root.join(launch["kernel"].as_str().expect("kernel")).to_string_lossy());
        for arg in l["args"].as_array_mut().expect("args") {
            for key in ["buffer", "scalar"] {
                if let Some(p) = arg[key].as_str() {
                    arg[key] = serde_json::json!(root.join(p).to_string_lossy());
                }
            }
            if let (Some(n), Some(_)) = (local, arg.get("local")) {
                arg["local"] = serde_json::json!(n);
            }
        }
        let path = dir.join(format!("{name}.launch.json"));
        std::fs::write(&path, l.to_string()).expect("launch");
        let e = match super::raw::load(&path) {
            Ok(_) => panic!("{name}: loaded"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(expect), "{name}: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
