//! Payload builder tests on synthetic kernels: the blank-r1 rule per platform, r0 group ids,
//! masks and thread counts, SLM slots, non-uniform groups and argument errors.

use std::collections::BTreeMap;

use super::payload::{
    build_payload, cross_thread_start, dispatch_mask, slm_layout, threads_per_group, Launch, NdRange,
    PayloadError,
};
use super::zeinfo::ZeInfo;
use super::{ArgValue, Platform, ZeKernel};
use crate::isa::InstIdx;
use crate::program::{FileId, Unit, UnitKind};

/// A kernel without local ids (like `k32_group_only`): header, one pointer, a char, a
/// two-piece struct, group_count.
const NO_IDS: &str = "kernels:
  - name: g
    execution_env:
      simd_size: 16
    payload_arguments:
      - arg_type: global_id_offset
        offset: 0
        size: 12
      - arg_type: local_size
        offset: 12
        size: 12
      - arg_type: arg_bypointer
        offset: 32
        size: 8
        arg_index: 0
        addrmode: stateless
      - arg_type: arg_byvalue
        offset: 40
        size: 4
        arg_index: 1
      - arg_type: arg_byvalue
        offset: 44
        size: 4
        arg_index: 2
        source_offset: 0
      - arg_type: arg_byvalue
        offset: 48
        size: 4
        arg_index: 2
        source_offset: 8
      - arg_type: group_count
        offset: 52
        size: 12
";

fn kernel(text: &str) -> ZeKernel {
    ZeInfo::parse(text).expect("parses").kernels.remove(0)
}

fn unit() -> Unit {
    Unit {
        name: "g".into(),
        kind: UnitKind::Kernel,
        file: FileId(0),
        entry: InstIdx(0),
        end: InstIdx(0),
        inputs: Vec::new(),
        attrs: Vec::new(),
        labels: Vec::new(),
        subroutines: Vec::new(),
        funcdecls: Vec::new(),
    }
}

fn range(global: [u32; 3], local: [u32; 3]) -> NdRange {
    NdRange { work_dim: 3, global_size: global, local_size: local, global_offset: [5, 6, 7] }
}

fn args() -> BTreeMap<u32, ArgValue> {
    BTreeMap::from([
        (0, ArgValue::Pointer(0x1_2345_6789)),
        (1, ArgValue::Bytes(vec![0xfb])),
        (2, ArgValue::Bytes((1..=12).collect())),
    ])
}

fn build(
    k: &ZeKernel,
    platform: Platform,
    args: &BTreeMap<u32, ArgValue>,
    group: [u32; 3],
) -> Result<super::ThreadPayload, PayloadError> {
    let unit = unit();
    let range = range([64, 4, 2], [16, 2, 1]);
    let launch = Launch { kernel: k, unit: &unit, platform, simd: 16, range, args };
    build_payload(&launch, group, 0)
}

fn u32_at(image: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(image[at..at + 4].try_into().expect("4 bytes"))
}

#[test]
fn blank_r1_on_gen9_and_gen12lp_only() {
    let k = kernel(NO_IDS);
    for (platform, ct) in [(Platform::Gen9, 64), (Platform::Gen12Lp, 64), (Platform::XeHpg, 32)] {
        assert_eq!(cross_thread_start(&k, platform) as usize, ct);
        let p = build(&k, platform, &args(), [0, 0, 0]).expect("builds");
        assert_eq!(u32_at(&p.image, ct), 5, "{platform:?}: global offset x");
        assert_eq!(u32_at(&p.image, ct + 12), 16, "{platform:?}: local size x");
        if ct == 64 {
            assert!(p.image[32..64].iter().all(|&b| b == 0), "r1 must stay blank");
        }
        assert_eq!(p.image.len() % 32, 0);
    }
}

#[test]
fn r0_group_ids_and_cross_thread_values() {
    let k = kernel(NO_IDS);
    let p = build(&k, Platform::Gen9, &args(), [3, 1, 1]).expect("builds");
    let img = &p.image;
    assert_eq!([u32_at(img, 4), u32_at(img, 24), u32_at(img, 28)], [3, 1, 1]);
    assert_eq!(img[0..4], [0; 4]);
    assert_eq!(img[8..24], [0; 16]);
    assert_eq!(img[64 + 32..64 + 40], 0x1_2345_6789u64.to_le_bytes());
    // A char goes into the low byte of a zeroed 4-byte slot.
    assert_eq!(img[64 + 40..64 + 44], [0xfb, 0, 0, 0]);
    // Struct pieces: bytes 0..4 and 8..12 of the argument.
    assert_eq!(img[64 + 44..64 + 48], [1, 2, 3, 4]);
    assert_eq!(img[64 + 48..64 + 52], [9, 10, 11, 12]);
    assert_eq!([u32_at(img, 116), u32_at(img, 120), u32_at(img, 124)], [4, 2, 2]);
    assert_eq!(p.dispatch_mask, 0xFFFF);
}

#[test]
fn argument_errors_are_typed() {
    let k = kernel(NO_IDS);
    let with = |index: u32, value: Option<ArgValue>| {
        let mut a = args();
        match value {
            Some(v) => a.insert(index, v),
            None => a.remove(&index),
        };
        build(&k, Platform::Gen9, &a, [0, 0, 0])
    };
    assert_eq!(with(0, None), Err(PayloadError::MissingArg(0)));
    let kind = PayloadError::ArgKind { index: 0, expected: "a pointer" };
    assert_eq!(with(0, Some(ArgValue::Local { slot: 0 })), Err(kind));
    let long = PayloadError::ArgTooLong { index: 1, slot: 4, have: 5 };
    assert_eq!(with(1, Some(ArgValue::Bytes(vec![0; 5]))), Err(long));
    let short = PayloadError::ArgTooShort { index: 2, need: 12, have: 10 };
    assert_eq!(with(2, Some(ArgValue::Bytes(vec![0; 10]))), Err(short));
    let bytes = PayloadError::ArgKind { index: 1, expected: "bytes" };
    assert_eq!(with(1, Some(ArgValue::Pointer(1))), Err(bytes));
    let out = PayloadError::GroupOutOfRange { dim: 0, group: 4, count: 4 };
    assert_eq!(build(&k, Platform::Gen9, &args(), [4, 0, 0]), Err(out));
}

#[test]
fn launch_shape_errors() {
    let k = kernel(NO_IDS);
    let unit = unit();
    let a = args();
    let mut launch = Launch {
        kernel: &k,
        unit: &unit,
        platform: Platform::Gen9,
        simd: 16,
        range: range([64, 4, 2], [16, 2, 1]),
        args: &a,
    };
    let threads = PayloadError::ThreadOutOfRange { thread: 2, threads: 2 };
    assert_eq!(build_payload(&launch, [0, 0, 0], 2), Err(threads));
    launch.simd = 32;
    let mismatch = PayloadError::SimdMismatch { given: 32, compiled: 16 };
    assert_eq!(build_payload(&launch, [0, 0, 0], 0), Err(mismatch));
    launch.simd = 12;
    assert_eq!(build_payload(&launch, [0, 0, 0], 0), Err(PayloadError::BadSimd(12)));
    launch.simd = 16;
    launch.range.local_size = [0, 1, 1];
    assert_eq!(build_payload(&launch, [0, 0, 0], 0), Err(PayloadError::EmptyRange));
}

#[test]
fn unknown_payload_argument_is_refused_with_its_line() {
    let text = format!("{NO_IDS}      - arg_type: buffer_offset\n        offset: 64\n        size: 4\n");
    let k = kernel(&text);
    let err = build(&k, Platform::Gen9, &args(), [0, 0, 0]);
    let want = PayloadError::UnsupportedArg { arg_type: "buffer_offset".into(), line: 34 };
    assert_eq!(err, Err(want));
}

#[test]
fn masks_and_thread_counts() {
    assert_eq!(threads_per_group([24, 1, 1], 32), 1);
    assert_eq!(dispatch_mask([24, 1, 1], 32, 0), 0x00FF_FFFF);
    assert_eq!(dispatch_mask([20, 1, 1], 32, 0), 0x000F_FFFF);
    assert_eq!(threads_per_group([64, 1, 1], 32), 2);
    assert_eq!(dispatch_mask([64, 1, 1], 32, 1), u32::MAX);
    assert_eq!(threads_per_group([5, 3, 2], 8), 4);
    assert_eq!(dispatch_mask([5, 3, 2], 8, 3), 0b11_1111);
    assert_eq!(dispatch_mask([5, 3, 2], 8, 4), 0);
    assert_eq!(threads_per_group([1, 1, 1], 0), 0);
}

#[test]
fn slm_slots_respect_alignment_and_order() {
    let text = "kernels:
  - name: s
    execution_env:
      slm_size: 100
    payload_arguments:
      - arg_type: arg_bypointer
        offset: 8
        size: 8
        arg_index: 3
        addrmode: slm
        slm_alignment: 16
      - arg_type: arg_bypointer
        offset: 0
        size: 8
        arg_index: 1
        addrmode: slm
        slm_alignment: 4
";
    let k = kernel(text);
    let (total, slots) = slm_layout(&k, &BTreeMap::from([(1, 6), (3, 10)])).expect("layout");
    // Arg 1 first (argument order, not payload order): 0..6; arg 3 aligned to 16: 16..26.
    assert_eq!(slots, BTreeMap::from([(1, 0), (3, 16)]));
    assert_eq!(total, 126);
    assert_eq!(slm_layout(&k, &BTreeMap::from([(1, 6)])), Err(PayloadError::MissingArg(3)));
}

#[test]
fn edge_group_of_non_uniform_range_is_smaller() {
    let text = "kernels:
  - name: n
    execution_env:
      simd_size: 8
    payload_arguments:
      - arg_type: local_size
        offset: 0
        size: 12
      - arg_type: enqueued_local_size
        offset: 12
        size: 12
    per_thread_payload_arguments:
      - arg_type: local_id
        offset: 0
        size: 96
";
    let k = kernel(text);
    let unit = unit();
    let a = BTreeMap::new();
    let range =
        NdRange { work_dim: 1, global_size: [20, 1, 1], local_size: [8, 1, 1], global_offset: [0; 3] };
    let launch = Launch { kernel: &k, unit: &unit, platform: Platform::XeHpg, simd: 8, range, args: &a };
    let p = build_payload(&launch, [2, 0, 0], 0).expect("builds");
    assert_eq!(p.dispatch_mask, 0b1111);
    let ct = 32 + 96;
    assert_eq!(u32_at(&p.image, ct), 4, "actual local size");
    assert_eq!(u32_at(&p.image, ct + 12), 8, "enqueued local size");
    let ids: Vec<u16> =
        (0..8).map(|i| u16::from_le_bytes([p.image[32 + 2 * i], p.image[33 + 2 * i]])).collect();
    assert_eq!(ids, [0, 1, 2, 3, 0, 0, 0, 0]);
}

#[test]
fn per_thread_layout_problems_are_reported() {
    let base = "kernels:
  - name: p
    execution_env:
      simd_size: 16
    per_thread_payload_arguments:
";
    let unit = unit();
    let a = BTreeMap::new();
    let run = |k: &ZeKernel| {
        let range = range([16, 1, 1], [16, 1, 1]);
        let launch = Launch { kernel: k, unit: &unit, platform: Platform::Gen9, simd: 16, range, args: &a };
        build_payload(&launch, [0, 0, 0], 0)
    };
    let packed = kernel(&format!("{base}      - arg_type: packed_local_ids\n        size: 6\n"));
    let want = PayloadError::UnsupportedArg { arg_type: "packed_local_ids".into(), line: 6 };
    assert_eq!(run(&packed), Err(want));
    let small = kernel(&format!("{base}      - arg_type: local_id\n        size: 64\n"));
    assert_eq!(run(&small), Err(PayloadError::PerThreadLayout { size: 64, simd: 16 }));
}
