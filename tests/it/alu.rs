//! One instruction at a time through the whole pipeline (parse, decode, execute, write):
//! every opcode family and operand form, with values worked out by hand from the spec.

use crate::harness::{le32, run, run_with, set_var};

const DECLS: &str = ".decl A v_type=G type=d num_elts=16 align=hword
.decl B v_type=G type=d num_elts=16 align=hword
.decl R v_type=G type=d num_elts=16 align=hword
.decl C v_type=G type=ud num_elts=16 align=hword
.decl UA v_type=G type=ud num_elts=16 align=hword alias=<A, 0>
.decl W v_type=G type=w num_elts=16 align=hword
.decl UB8 v_type=G type=ub num_elts=32 align=hword
.decl F v_type=G type=f num_elts=16 align=hword
.decl G v_type=G type=f num_elts=16 align=hword
.decl H v_type=G type=hf num_elts=16 align=hword
.decl Q v_type=G type=q num_elts=16 align=hword
.decl UQ v_type=G type=uq num_elts=16 align=hword
.decl DF v_type=G type=df num_elts=4 align=hword
.decl P1 v_type=P num_elts=16
.decl P2 v_type=P num_elts=16
.decl P3 v_type=P num_elts=16
.decl A0 v_type=A num_elts=16";

fn with(a: &[i32], b: &[i32], body: &str) -> crate::harness::Run {
    let (a, b) = (le32(a), le32(b));
    run_with(DECLS, body, 16, 0xffff, |p, m| {
        set_var(p, m, "A", &a);
        set_var(p, m, "B", &b);
    })
    .ok()
}

fn ramp() -> Vec<i32> {
    (0..16).collect()
}

#[test]
fn add_with_broadcast_and_negated_source() {
    let r = with(&ramp(), &[10; 16], "    add (M1, 16) R(0,0)<1> (-)A(0,0)<1;1,0> B(0,3)<0;1,0>");
    assert_eq!(r.i32s("R"), (0..16).map(|i| 10 - i).collect::<Vec<_>>());
}

#[test]
fn strided_and_2d_regions_pick_the_right_elements() {
    // <4;2,1> over A: rows of two elements, rows four apart: 0 1 4 5 8 9 12 13
    let r = with(
        &ramp(),
        &[0; 16],
        "    mov (M1, 8) R(0,0)<1> A(0,0)<4;2,1>\n    mov (M1, 8) R(0,8)<1> A(0,1)<2;1,0>",
    );
    assert_eq!(&r.i32s("R")[..8], &[0, 1, 4, 5, 8, 9, 12, 13]);
    assert_eq!(&r.i32s("R")[8..], &[1, 3, 5, 7, 9, 11, 13, 15]);
}

#[test]
fn destination_stride_leaves_gaps_untouched() {
    let r = with(
        &ramp(),
        &[-1; 16],
        "    mov (M1, 16) R(0,0)<1> B(0,0)<1;1,0>\n    mov (M1, 8) R(0,0)<2> A(0,0)<1;1,0>",
    );
    let expected: Vec<i32> = (0..16).map(|i| if i % 2 == 0 { i / 2 } else { -1 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn mov_converts_and_saturates() {
    let a: Vec<i32> = vec![-5, 300, 70000, -70000, 0, 1, 127, 128, -129, 255, 256, 42, 7, 8, 9, 10];
    let r = with(&a, &[0; 16], "    mov.sat (M1, 16) UB8(0,0)<1> A(0,0)<1;1,0>\n    mov (M1, 16) W(0,0)<1> A(0,0)<1;1,0>\n    mov (M1, 16) F(0,0)<1> A(0,0)<1;1,0>");
    let ub = r.bytes("UB8");
    let sat: Vec<u8> = a.iter().map(|&v| v.clamp(0, 255) as u8).collect();
    assert_eq!(&ub[..16], &sat[..]);
    let w: Vec<i16> = r.bytes("W").chunks(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(w, a.iter().map(|&v| v as i16).collect::<Vec<_>>());
    assert_eq!(r.f32s("F"), a.iter().map(|&v| v as f32).collect::<Vec<_>>());
}

#[test]
fn float_to_int_rounds_toward_zero_and_saturates() {
    let body = "    mov (M1, 4) F(0,0)<1> 0x40600000:f
    mov (M1, 4) F(0,4)<1> 0xc0600000:f
    mov (M1, 4) F(0,8)<1> 0x7f800000:f
    mov (M1, 4) F(0,12)<1> 0x7fc00000:f
    mov (M1, 16) R(0,0)<1> F(0,0)<1;1,0>";
    let r = with(&ramp(), &ramp(), body);
    let got = r.i32s("R");
    assert_eq!(got[0], 3, "3.5 -> 3");
    assert_eq!(got[4], -3, "-3.5 -> -3");
    assert_eq!(got[8], i32::MAX, "inf saturates");
    assert_eq!(got[12], 0, "NaN -> 0");
}

#[test]
fn cmp_to_predicate_and_to_register() {
    let r = with(&ramp(), &[7; 16], "    cmp.lt (M1, 16) P1 A(0,0)<1;1,0> B(0,0)<1;1,0>\n    cmp.ge (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>");
    assert_eq!(r.pred("P1"), 0x007f);
    assert_eq!(r.i32s("R"), (0..16).map(|i| if i >= 7 { -1 } else { 0 }).collect::<Vec<_>>());
}

#[test]
fn nan_compares_follow_cmp_md() {
    let body = "    mov (M1, 16) F(0,0)<1> 0x7fc00000:f
    cmp.eq (M1, 16) P1 F(0,0)<1;1,0> F(0,0)<1;1,0>
    cmp.ne (M1, 16) P2 F(0,0)<1;1,0> F(0,0)<1;1,0>
    cmp.lt (M1, 16) P3 F(0,0)<1;1,0> 0x0:f";
    let r = with(&ramp(), &ramp(), body);
    assert_eq!((r.pred("P1"), r.pred("P2"), r.pred("P3")), (0, 0xffff, 0));
}

#[test]
fn sel_picks_by_predicate_under_the_execution_mask() {
    let body = "    cmp.gt (M1, 16) P1 A(0,0)<1;1,0> 0x7:d
    (P1) sel (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>";
    let r = with(&ramp(), &[-3; 16], body);
    assert_eq!(r.i32s("R"), (0..16).map(|i| if i > 7 { i } else { -3 }).collect::<Vec<_>>());
}

#[test]
fn addc_produces_carries_for_64_bit_emulation() {
    let a = vec![-1, -1, 5, 0x7fff_ffff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let b = vec![1, 2, 6, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let r = with(&a, &b, "    addc (M1, 16) UA(0,0)<1> C(0,0)<1> UA(0,0)<1;1,0> B(0,0)<1;1,0>");
    assert_eq!(&r.u32s("A")[..4], &[0, 1, 11, 0x8000_0000]);
    assert_eq!(&r.u32s("C")[..4], &[1, 1, 0, 0]);
}

#[test]
fn shifts_take_the_count_modulo_the_width() {
    let a = vec![1; 16];
    let b: Vec<i32> = (0..16).map(|i| i * 3).collect();
    let r = with(&a, &b, "    shl (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>");
    let expected: Vec<i32> = (0..16).map(|i| 1i32.wrapping_shl((i * 3) as u32 % 32)).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn asr_and_shr_differ_on_negative_values() {
    let a = vec![-16; 16];
    let r = with(
        &a,
        &[0; 16],
        "    asr (M1, 16) R(0,0)<1> A(0,0)<1;1,0> 0x2:d\n    shr (M1, 16) C(0,0)<1> UA(0,0)<1;1,0> 0x2:d",
    );
    assert_eq!(r.i32s("R")[0], -4);
    assert_eq!(r.u32s("C")[0], (-16i32 as u32) >> 2);
}

#[test]
fn shifts_of_immediates_keep_the_immediates_type() {
    // asr.md: src0 shifted arithmetically in its own type; shr.md: logically, at its width.
    let decls = ".decl B v_type=G type=d num_elts=8 align=hword\n.decl A v_type=G type=d num_elts=8 align=hword\n.decl Q v_type=G type=q num_elts=4 align=hword";
    let body = "    mov (M1_NM, 8) B(0,0)<1> 0x1:d\n    asr (M1_NM, 8) A(0,0)<1> -8:d B(0,0)<1;1,0>\n    shr (M1_NM, 1) Q(0,0)<1> 0x123456789:q 0x4:d";
    let r = run(decls, body, 8).ok();
    assert_eq!(r.i32s("A"), vec![-8 >> 1; 8]);
    assert_eq!(r.u64s("Q")[0], 0x1_2345_6789u64 >> 4);
}

#[test]
fn vector_immediate_builds_a_lane_ramp() {
    let r = run(
        DECLS,
        "    mov (M1_NM, 8) W(0,0)<1> 0x76543210:v\n    mov (M1_NM, 8) W(0,8)<1> 0xfedcba98:v",
        16,
    )
    .ok();
    let w: Vec<i16> = r.bytes("W").chunks(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(w, vec![0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1]);
}

#[test]
fn setp_from_immediate_and_predicate_logic() {
    let body = "    setp (M1_NM, 16) P1 0x00ff:uw
    setp (M1_NM, 16) P2 0x0f0f:uw
    and (M1_NM, 16) P3 P1 P2
    mov (M1_NM, 1) C(0,0)<1> P3
    or (M1_NM, 16) P3 P1 P2
    mov (M1_NM, 1) C(0,1)<1> P3
    not (M1_NM, 16) P3 P1
    mov (M1_NM, 1) C(0,2)<1> P3";
    let r = run(DECLS, body, 16).ok();
    assert_eq!(&r.u32s("C")[..3], &[0x000f, 0x0fff, 0xff00]);
}

#[test]
fn indirect_read_and_write_through_address_registers() {
    let body = "    addr_add (M1_NM, 1) A0(0)<1> &B[8] 0x4:uw
    mov (M1, 4) R(0,0)<1> r[A0(0),0]<1;1,0>:d
    addr_add (M1_NM, 1) A0(1)<1> &R[16] 0x0:uw
    mov (M1, 2) r[A0(1),4]<1>:d A(0,9)<1;1,0>";
    let b: Vec<i32> = (100..116).collect();
    let r = with(&ramp(), &b, body);
    // B element (8+4)/4 = 3 onwards; then R elements 5,6 = A[9], A[10].
    assert_eq!(&r.i32s("R")[..7], &[103, 104, 105, 106, 0, 9, 10]);
}

#[test]
fn indirect_access_past_its_variable_faults() {
    let body =
        "    addr_add (M1_NM, 1) A0(0)<1> &B[60] 0x0:uw\n    mov (M1, 4) R(0,0)<1> r[A0(0),0]<1;1,0>:d";
    let r = run(DECLS, body, 16);
    let fault = r.result.as_ref().expect_err("out of bounds");
    assert!(matches!(fault.kind, vdb::exec::FaultKind::IndirectOutOfBounds { .. }), "{:?}", fault.kind);
}

#[test]
fn q_arithmetic_is_64_bit() {
    let body = "    mov (M1, 8) Q(0,0)<1> 0x7fffffffffffffff:q\n    add (M1, 8) Q(0,0)<1> Q(0,0)<1;1,0> 0x1:q\n    mul (M1, 8) UQ(0,0)<1> Q(0,0)<1;1,0> 0x2:q";
    let r = run(DECLS, body, 16).ok();
    assert_eq!(r.u64s("Q")[0], 0x8000_0000_0000_0000);
    assert_eq!(r.u64s("UQ")[0], 0);
}

#[test]
fn float_math_matches_ieee() {
    let body = "    mov (M1, 16) F(0,0)<1> 0x40400000:f
    mul (M1, 16) G(0,0)<1> F(0,0)<1;1,0> 0x3f000000:f
    mad (M1, 16) G(0,0)<1> G(0,0)<1;1,0> F(0,0)<1;1,0> 0x3f800000:f
    sqrt (M1, 16) F(0,0)<1> 0x41100000:f";
    let r = run(DECLS, body, 16).ok();
    assert_eq!(r.f32s("G")[0], 1.5 * 3.0 + 1.0);
    assert_eq!(r.f32s("F")[0], 3.0);
}

#[test]
fn half_conversion_honours_the_cr0_rounding_mode() {
    // 1 + 2^-11 + 2^-20 lies just above the halfway point between two halves: RNE rounds
    // up to 1 + 2^-10 (0x3c01), RTZ truncates to 1.0 (0x3c00).
    let body = "    mov (M1, 16) F(0,0)<1> 0x3f801008:f
    mov (M1, 8) H(0,0)<1> F(0,0)<1;1,0>
    xor (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x30:ud
    mov (M1, 8) H(0,8)<1> F(0,0)<1;1,0>
    xor (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x30:ud";
    let r = run(DECLS, body, 16).ok();
    let h: Vec<u16> = r.bytes("H").chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!((h[0], h[8]), (0x3c01, 0x3c00));
}

#[test]
fn madw_puts_the_high_half_in_the_next_register() {
    let a = vec![0x10000; 16];
    let r = with(&a, &a, "    madw (M1, 8) R(0,0)<1> UA(0,0)<1;1,0> UA(0,0)<1;1,0> 0x5:ud");
    let r32 = r.u32s("R");
    assert_eq!((r32[0], r32[8]), (5, 1), "0x10000 * 0x10000 + 5 = 0x1_0000_0005");
}
