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
    let misc = info.misc_info("k").expect("misc");
    assert_eq!(misc.args_info[0].type_name, "struct S;8");
    assert_eq!(misc.args_info[0].type_qualifiers, "it's \"quoted\"");
    assert_eq!(misc.args_info[0].access_qualifier, "");
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
