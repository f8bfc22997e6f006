//! Tests of `eval`: integer, logic, compare, select and move semantics.

use super::*;
use crate::exec::test_util::*;
use crate::isa::{CondMod, DataType as T, Opcode as O, SrcMod as M, SubOp};
use proptest::prelude::*;

#[test]
fn integer_add_wraps_or_saturates() {
    let max = i32::MAX as u64;
    assert_eq!(one(O::Add, T::D, &[s(T::D, max), s(T::D, 1)]), 0x8000_0000);
    assert_eq!(sat(O::Add, T::D, &[s(T::D, max), s(T::D, 1)]), max);
    assert_eq!(sat(O::Add, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 1)]), 0xffff_ffff);
    assert_eq!(sat(O::Add, T::Ub, &[s(T::D, (-5i32) as u32 as u64), s(T::D, 0)]), 0);
    // Each source extends by its own type: w -1 + b -1 = -2 as d.
    assert_eq!(one(O::Add, T::D, &[s(T::W, 0xffff), s(T::B, 0xff)]), 0xffff_fffe);
    assert_eq!(one(O::Add, T::D, &[s(T::Uw, 0xffff), s(T::Ub, 0xff)]), 0x100fe);
    let q = one(O::Add, T::Q, &[s(T::Q, u64::MAX), s(T::Q, 2)]);
    assert_eq!(q, 1);
    assert_eq!(sat(O::Add, T::Uq, &[s(T::Uq, u64::MAX), s(T::Uq, 2)]), u64::MAX);
    assert_eq!(one(O::Add3, T::D, &[s(T::D, 1), s(T::D, 2), s(T::D, 0xffff_fffd)]), 0);
}

#[test]
fn integer_source_modifiers() {
    let min = 0x8000_0000u64;
    // -(i32::MIN) is 2^31 in 64 bits: truncates back to MIN, saturates to MAX.
    assert_eq!(one(O::Mov, T::D, &[sm(T::D, M::Neg, min)]), min);
    assert_eq!(sat(O::Mov, T::D, &[sm(T::D, M::Neg, min)]), 0x7fff_ffff);
    assert_eq!(sat(O::Add, T::D, &[sm(T::D, M::Abs, min), s(T::D, 0)]), 0x7fff_ffff);
    assert_eq!(one(O::Add, T::D, &[sm(T::D, M::NegAbs, 5), s(T::D, 0)]), 0xffff_fffb);
    assert_eq!(one(O::Add, T::Ud, &[sm(T::Ud, M::Neg, 1), s(T::Ud, 0)]), 0xffff_ffff);
    assert_eq!(one(O::And, T::Ud, &[sm(T::Ud, M::Not, 0xf0), s(T::Ud, 0xff)]), 0x0f);
    // Q negation wraps in 64 bits.
    assert_eq!(sat(O::Mov, T::Q, &[sm(T::Q, M::Neg, i64::MIN as u64)]), i64::MIN as u64);
}

#[test]
fn multiplies() {
    assert_eq!(one(O::Mul, T::Ud, &[s(T::Uw, 0xffff), s(T::Uw, 0xffff)]), 0xfffe_0001);
    let min = 0x8000_0000u64;
    assert_eq!(one(O::Mul, T::Q, &[s(T::D, min), s(T::D, min)]), 1 << 62);
    assert_eq!(one(O::Mul, T::D, &[s(T::D, 0x10000), s(T::D, 0x10000)]), 0);
    assert_eq!(sat(O::Mul, T::D, &[s(T::D, 0x10000), s(T::D, 0x10000)]), 0x7fff_ffff);
    assert_eq!(one(O::Mulh, T::D, &[s(T::D, min), s(T::D, min)]), 0x4000_0000);
    assert_eq!(one(O::Mulh, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 0xffff_ffff)]), 0xffff_fffe);
    assert_eq!(one(O::Mulh, T::D, &[s(T::D, 0xffff_ffff), s(T::D, 1)]), 0xffff_ffff);
    assert_eq!(one(O::Mulh, T::D, &[s(T::D, 0x7fff_ffff), s(T::D, min)]), 0xc000_0000);
    let mad = one(O::Mad, T::D, &[s(T::D, 3), s(T::D, 0xffff_fffe), s(T::D, 10)]);
    assert_eq!(mad, 4);
}

#[test]
fn madw_gives_both_halves() {
    let m = 0xffff_ffffu64;
    let out = run_x(O::Madw, SubOp::None, false, T::Ud, &[s(T::Ud, m), s(T::Ud, m), s(T::Ud, m)], CR0);
    // (2^32-1)^2 + 2^32-1 = 2^64 - 2^32.
    assert_eq!((out.values[0], out.second[0]), (0, m));
    let out = run_x(O::Madw, SubOp::None, false, T::D, &[s(T::D, m), s(T::D, 1), s(T::D, 0)], CR0);
    assert_eq!((out.values[0], out.second[0]), (m, m));
}

#[test]
fn addc_subb_chain_into_64_bits() {
    // (0x1_ffff_ffff) + (0x0_0000_0001) as two dword halves.
    let lo = run_x(O::Addc, SubOp::None, false, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 1)], CR0);
    assert_eq!((lo.values[0], lo.second[0]), (0, 1));
    let hi = one(O::Add3, T::Ud, &[s(T::Ud, 1), s(T::Ud, 0), s(T::Ud, lo.second[0])]);
    assert_eq!((hi << 32) | lo.values[0], 0x2_0000_0000);
    let no = run_x(O::Addc, SubOp::None, false, T::Ud, &[s(T::Ud, 5), s(T::Ud, 6)], CR0);
    assert_eq!((no.values[0], no.second[0]), (11, 0));
    let b = run_x(O::Subb, SubOp::None, false, T::Ud, &[s(T::Ud, 0), s(T::Ud, 1)], CR0);
    assert_eq!((b.values[0], b.second[0]), (0xffff_ffff, 1));
    let b = run_x(O::Subb, SubOp::None, false, T::Ud, &[s(T::Ud, 7), s(T::Ud, 7)], CR0);
    assert_eq!((b.values[0], b.second[0]), (0, 0));
}

#[test]
fn avg_does_not_overflow() {
    let max = 0x7fff_ffffu64;
    assert_eq!(one(O::Avg, T::D, &[s(T::D, max), s(T::D, max)]), max);
    assert_eq!(one(O::Avg, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 0xffff_fffe)]), 0xffff_ffff);
    // (-1 + -2 + 1) >> 1 = -1.
    assert_eq!(one(O::Avg, T::D, &[s(T::D, 0xffff_ffff), s(T::D, 0xffff_fffe)]), 0xffff_ffff);
    assert_eq!(one(O::Avg, T::Ub, &[s(T::Ub, 1), s(T::Ub, 2)]), 2);
}

#[test]
fn integer_divide_and_modulo() {
    let d = |v: i32| v as u32 as u64;
    assert_eq!(one(O::Div, T::D, &[s(T::D, d(7)), s(T::D, d(-2))]), d(-3));
    assert_eq!(one(O::Mod, T::D, &[s(T::D, d(7)), s(T::D, d(-2))]), 1);
    assert_eq!(one(O::Div, T::D, &[s(T::D, d(-7)), s(T::D, d(2))]), d(-3));
    assert_eq!(one(O::Mod, T::D, &[s(T::D, d(-7)), s(T::D, d(2))]), d(-1));
    assert_eq!(one(O::Div, T::D, &[s(T::D, d(i32::MIN)), s(T::D, d(-1))]), d(i32::MIN));
    assert_eq!(one(O::Mod, T::D, &[s(T::D, d(i32::MIN)), s(T::D, d(-1))]), 0);
    assert_eq!(one(O::Div, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 2)]), 0x7fff_ffff);
    assert_eq!(one(O::Div, T::Ud, &[s(T::Ud, 9), s(T::Ud, 0)]), 0xffff_ffff);
    assert_eq!(one(O::Mod, T::Ud, &[s(T::Ud, 9), s(T::Ud, 0)]), 9);
    assert_eq!(one(O::Div, T::W, &[s(T::W, 0x8000), s(T::W, 0xffff)]), 0x8000);
}

#[test]
fn shifts_and_rotates() {
    assert_eq!(one(O::Shl, T::D, &[s(T::D, 1), s(T::D, 33)]), 2);
    assert_eq!(one(O::Shl, T::Q, &[s(T::Q, 1), s(T::D, 33)]), 1 << 33);
    assert_eq!(one(O::Shl, T::Q, &[s(T::Q, 1), s(T::D, 64)]), 1);
    assert_eq!(one(O::Shl, T::Uw, &[s(T::Uw, 0x8001), s(T::Uw, 1)]), 2);
    assert_eq!(sat(O::Shl, T::Uw, &[s(T::Uw, 0x8001), s(T::Uw, 1)]), 0xffff);
    assert_eq!(one(O::Shr, T::Ud, &[s(T::Ud, 0x8000_0000), s(T::Ud, 31)]), 1);
    assert_eq!(one(O::Shr, T::Ud, &[s(T::Ud, 0x8000_0000), s(T::Ud, 32)]), 0x8000_0000);
    // shr is logical at the source width even for a signed source.
    assert_eq!(one(O::Shr, T::Ud, &[s(T::W, 0x8000), s(T::Ud, 15)]), 1);
    assert_eq!(one(O::Asr, T::D, &[s(T::D, 0x8000_0000), s(T::D, 4)]), 0xf800_0000);
    assert_eq!(one(O::Asr, T::D, &[s(T::D, 0x8000_0000), s(T::D, 36)]), 0xf800_0000);
    assert_eq!(one(O::Asr, T::Q, &[s(T::Q, 1 << 63), s(T::D, 63)]), u64::MAX);
    assert_eq!(one(O::Rol, T::Ud, &[s(T::Ud, 0x8000_0001), s(T::Ud, 1)]), 3);
    assert_eq!(one(O::Ror, T::Ud, &[s(T::Ud, 0x8000_0001), s(T::Ud, 1)]), 0xc000_0000);
    assert_eq!(one(O::Rol, T::Ud, &[s(T::Ud, 0x1234_5678), s(T::Ud, 32)]), 0x1234_5678);
    assert_eq!(one(O::Rol, T::Uw, &[s(T::Uw, 0x8001), s(T::Uw, 4)]), 0x0018);
    assert_eq!(one(O::Ror, T::Uq, &[s(T::Uq, 1), s(T::Uq, 1)]), 1 << 63);
}

#[test]
fn bit_counting_ops() {
    assert_eq!(one(O::Cbit, T::Ud, &[s(T::Ud, 0xf0f0)]), 8);
    assert_eq!(one(O::Cbit, T::Ud, &[s(T::Ub, 0xff)]), 8);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::Ud, 0x0001_0000)]), 15);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::Ud, 0)]), 0xffff_ffff);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::D, 0xffff_ffff)]), 0xffff_ffff);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::D, 0)]), 0xffff_ffff);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::D, 0xffff_0000)]), 16);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::D, 0x0000_00ff)]), 24);
    assert_eq!(one(O::Fbh, T::Ud, &[s(T::Ud, 0xffff_ffff)]), 0);
    assert_eq!(one(O::Fbl, T::Ud, &[s(T::Ud, 8)]), 3);
    assert_eq!(one(O::Fbl, T::Ud, &[s(T::Ud, 0)]), 0xffff_ffff);
    assert_eq!(one(O::Lzd, T::Ud, &[s(T::Ud, 0)]), 32);
    assert_eq!(one(O::Lzd, T::Ud, &[s(T::Ud, 1)]), 31);
    assert_eq!(one(O::Bfrev, T::Ud, &[s(T::Ud, 1)]), 0x8000_0000);
    assert_eq!(one(O::Bfrev, T::Ud, &[s(T::Ud, 0x0000_00f1)]), 0x8f00_0000);
}

#[test]
fn bit_field_ops() {
    assert_eq!(one(O::Bfe, T::Ud, &[s(T::Ud, 4), s(T::Ud, 4), s(T::Ud, 0xabcd)]), 0xc);
    assert_eq!(one(O::Bfe, T::Ud, &[s(T::Ud, 0), s(T::Ud, 4), s(T::Ud, 0xabcd)]), 0);
    // width and offset use their low 5 bits.
    assert_eq!(one(O::Bfe, T::Ud, &[s(T::Ud, 36), s(T::Ud, 40), s(T::Ud, 0xabcd)]), 0xb);
    assert_eq!(one(O::Bfe, T::D, &[s(T::D, 4), s(T::D, 4), s(T::D, 0xf0)]), 0xffff_ffff);
    assert_eq!(one(O::Bfe, T::D, &[s(T::D, 4), s(T::D, 4), s(T::D, 0x70)]), 7);
    let bfi = [s(T::Ud, 8), s(T::Ud, 8), s(T::Ud, 0x1ab), s(T::Ud, 0x1234_5678)];
    assert_eq!(one(O::Bfi, T::Ud, &bfi), 0x1234_ab78);
    let bfi0 = [s(T::Ud, 0), s(T::Ud, 8), s(T::Ud, 0xff), s(T::Ud, 0x1234_5678)];
    assert_eq!(one(O::Bfi, T::Ud, &bfi0), 0x1234_5678);
}

#[test]
fn logic_and_bfn() {
    let (a, b, c) = (0xf0f0_1234u64, 0xff00_5678u64, 0x0ff0_9abcu64);
    let srcs = [s(T::Ud, a), s(T::Ud, b), s(T::Ud, c)];
    assert_eq!(one(O::And, T::Ud, &srcs[..2]), a & b);
    assert_eq!(one(O::Or, T::Ud, &srcs[..2]), a | b);
    assert_eq!(one(O::Xor, T::Ud, &srcs[..2]), a ^ b);
    assert_eq!(one(O::Not, T::Ud, &srcs[..1]), !a & 0xffff_ffff);
    assert_eq!(one(O::Not, T::Uw, &[s(T::Uw, 0x00ff)]), 0xff00);
    let bfn = |t: u8| run_x(O::Bfn, SubOp::Bfn(t), false, T::Ud, &srcs, CR0).values[0];
    assert_eq!(bfn(0x96), a ^ b ^ c);
    assert_eq!(bfn(0x80), a & b & c);
    assert_eq!(bfn(0xfe), a | b | c);
    // Table index = src0 + 2*src1 + 4*src2 (BFN.md).
    assert_eq!(bfn(0xaa), a);
    assert_eq!(bfn(0xcc), b);
    assert_eq!(bfn(0xf0), c);
    assert_eq!(bfn(0xf8), c | (a & b));
    assert_eq!(bfn(0xd8), (a & b) | (!a & c), "IGC's select: src0 ? src1 : src2");
    assert_eq!(bfn(0x00), 0);
}

#[test]
fn compares_handle_nan_zero_and_signedness() {
    let nan = s(T::F, 0x7fc0_0000);
    let one_f = s(T::F, f(1.0));
    assert!(!cmp1(CondMod::Eq, nan.clone(), nan.clone()));
    assert!(cmp1(CondMod::Ne, nan.clone(), nan.clone()));
    for rel in [CondMod::Lt, CondMod::Le, CondMod::Gt, CondMod::Ge] {
        assert!(!cmp1(rel, nan.clone(), one_f.clone()));
    }
    assert!(cmp1(CondMod::Eq, s(T::F, f(-0.0)), s(T::F, f(0.0))));
    assert!(!cmp1(CondMod::Lt, s(T::F, f(-0.0)), s(T::F, f(0.0))));
    assert!(cmp1(CondMod::Eq, s(T::F, f(f32::INFINITY)), s(T::F, f(f32::INFINITY))));
    assert!(cmp1(CondMod::Lt, s(T::D, 0xffff_ffff), s(T::D, 0)));
    assert!(cmp1(CondMod::Gt, s(T::Ud, 0xffff_ffff), s(T::Ud, 0)));
    assert!(cmp1(CondMod::Ge, s(T::Hf, 0x3c00), s(T::Hf, 0x3c00)));
    assert!(cmp1(CondMod::Lt, s(T::Df, (-1.0f64).to_bits()), s(T::Df, 0)));
    let out = run_x(O::Cmp, SubOp::Cond(CondMod::Eq), false, T::W, &[s(T::D, 3), s(T::D, 3)], CR0);
    assert_eq!((out.values[0], out.flags), (0xffff, 1));
    let out = run_x(O::Cmp, SubOp::Cond(CondMod::Eq), false, T::D, &[s(T::D, 3), s(T::D, 4)], CR0);
    assert_eq!((out.values[0], out.flags), (0, 0));
}

#[test]
fn cmp_sets_flags_per_lane_and_leaves_disabled_lanes() {
    let mut a = s(T::D, 0);
    for (i, v) in a.bits.iter_mut().enumerate() {
        *v = i as u64;
    }
    let mut out = AluOut { values: [0xdead; 32], second: [0; 32], flags: 0x8000_0000 };
    let sub = SubOp::Cond(CondMod::Lt);
    eval(O::Cmp, &sub, false, T::Ud, &[a, s(T::D, 3)], 8, 0b1010_1111, 0, CR0, &mut out).expect("cmp");
    // Lanes 0..2 are < 3; lane 4 is disabled; lanes ≥ 8 are beyond n_lanes.
    assert_eq!(out.flags, 0b0000_0111 | 0x8000_0000);
    assert_eq!(
        &out.values[..8],
        &[u32::MAX as u64, u32::MAX as u64, u32::MAX as u64, 0, 0xdead, 0, 0xdead, 0]
    );
    assert_eq!(out.values[8], 0xdead);
}

#[test]
fn min_max_nan_and_signed_zero() {
    let nan = 0x7fc0_0001u64;
    let three = f(3.0);
    assert_eq!(one(O::Min, T::F, &[s(T::F, nan), s(T::F, three)]), three);
    assert_eq!(one(O::Max, T::F, &[s(T::F, three), s(T::F, nan)]), three);
    // Two NaNs: src1.
    assert_eq!(one(O::Min, T::F, &[s(T::F, nan), s(T::F, 0x7fc0_0002)]), 0x7fc0_0002);
    let (nz, pz) = (f(-0.0), f(0.0));
    assert_eq!(one(O::Max, T::F, &[s(T::F, nz), s(T::F, pz)]), pz);
    assert_eq!(one(O::Max, T::F, &[s(T::F, pz), s(T::F, nz)]), pz);
    assert_eq!(one(O::Min, T::F, &[s(T::F, nz), s(T::F, pz)]), nz);
    assert_eq!(one(O::Min, T::F, &[s(T::F, pz), s(T::F, nz)]), nz);
    assert_eq!(one(O::Min, T::D, &[s(T::D, 0xffff_ffff), s(T::D, 1)]), 0xffff_ffff);
    assert_eq!(one(O::Min, T::Ud, &[s(T::Ud, 0xffff_ffff), s(T::Ud, 1)]), 1);
    assert_eq!(one(O::Max, T::W, &[s(T::W, 0x8000), s(T::W, 0x7fff)]), 0x7fff);
    assert_eq!(one(O::Max, T::F, &[sm(T::F, M::Neg, f(5.0)), s(T::F, f(-1.0))]), f(-1.0));
}

#[test]
fn sel_uses_the_select_mask() {
    let mut out = AluOut::default();
    let srcs = [s(T::Ud, 11), s(T::Ud, 22)];
    eval(O::Sel, &SubOp::None, false, T::Ud, &srcs, 4, 0b1111, 0b0101, CR0, &mut out).expect("sel");
    assert_eq!(&out.values[..4], &[11, 22, 11, 22]);
    let hf = [s(T::Hf, 0x3c00), s(T::Hf, 0x4000)];
    eval(O::Sel, &SubOp::None, false, T::Hf, &hf, 2, 0b11, 0b10, CR0, &mut out).expect("sel");
    assert_eq!(&out.values[..2], &[0x4000, 0x3c00]);
}

#[test]
fn sad2_and_dp4a() {
    let mut a = s(T::Ub, 0);
    let mut b = s(T::Ub, 0);
    a.bits[..2].copy_from_slice(&[10, 200]);
    b.bits[..2].copy_from_slice(&[30, 100]);
    let mut out = AluOut::default();
    eval(O::Sad2, &SubOp::None, false, T::Uw, &[a.clone(), b.clone()], 2, 0b11, 0, CR0, &mut out)
        .expect("sad2");
    assert_eq!(out.values[0], 120);
    eval(O::Sad2add, &SubOp::None, false, T::Uw, &[a, b, s(T::Uw, 5)], 2, 0b11, 0, CR0, &mut out)
        .expect("sad2add");
    assert_eq!(out.values[0], 125);
    let dp = [s(T::D, 100), s(T::D, 0x0102_03ff), s(T::D, 0x0101_0102)];
    // signed bytes: -1·2 + 3·1 + 2·1 + 1·1 = 4.
    assert_eq!(one(O::Dp4a, T::D, &dp), 104);
    let dpu = [s(T::Ud, 0), s(T::Ud, 0x0000_00ff), s(T::Ud, 0x0000_0002)];
    assert_eq!(one(O::Dp4a, T::Ud, &dpu), 510);
}

#[test]
fn vector_immediates_expand() {
    let (ty, v) = expand_vector_imm(T::V, 0x7654_3210);
    assert_eq!(ty, T::W);
    assert_eq!(&v[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(v[9], 1);
    let (_, v) = expand_vector_imm(T::V, 0x0000_00f8);
    assert_eq!(&v[..3], &[0xfff8, 0xffff, 0]);
    let (ty, v) = expand_vector_imm(T::Uv, 0xf8);
    assert_eq!((ty, v[0], v[1]), (T::Uw, 8, 15));
    let (ty, v) = expand_vector_imm(T::Vf, 0x00c0_3830);
    assert_eq!(ty, T::F);
    assert_eq!(&v[..5], &[f(1.0), f(1.5), f(-2.0), 0, f(1.0)]);
    assert_eq!(expand_vector_imm(T::D, 7).1[31], 7);
}

#[test]
fn conversions_for_other_modules() {
    assert_eq!(to_f64(T::B, 0xff), -1.0);
    assert_eq!(to_f64(T::Ud, 0xffff_ffff), 4_294_967_295.0);
    assert_eq!(to_f64(T::Hf, 0x3555), f16_bits_to_f32(0x3555) as f64);
    assert_eq!(to_f64(T::Bf, 0x3fc0), 1.5);
    assert_eq!(to_f64(T::Df, 2.5f64.to_bits()), 2.5);
    assert_eq!(f32_to_f16_bits(0.5, 0), 0x3800);
}

#[test]
fn errors_name_the_op_and_types() {
    let mut out = AluOut::default();
    let e = eval(O::Cmp, &SubOp::None, false, T::Bool, &[s(T::D, 0), s(T::D, 0)], 1, 1, 0, CR0, &mut out)
        .expect_err("no relation");
    assert!(e.to_string().contains("cmp") && e.to_string().contains("d, d"), "{e}");
    let e = eval(O::Add, &SubOp::None, false, T::D, &[s(T::D, 0)], 1, 1, 0, CR0, &mut out)
        .expect_err("one source");
    assert!(e.to_string().contains("add"), "{e}");
    let e = eval(O::Plane, &SubOp::None, false, T::F, &[s(T::F, 0), s(T::F, 0)], 1, 1, 0, CR0, &mut out)
        .expect_err("plane");
    assert!(e.to_string().contains("plane"), "{e}");
    assert!(eval(O::Goto, &SubOp::None, false, T::D, &[], 1, 1, 0, CR0, &mut out).is_err());
}

/// A reference implementation of a 32-bit binary op.
type BinI32 = fn(i32, i32) -> i32;

/// Runs a two-source op on 32 lanes of random values and returns all lane results.
fn lanes2(op: O, ty: T, a: &[u64; 32], b: &[u64; 32]) -> [u64; 32] {
    let sa = SrcLanes { ty, modifier: M::None, bits: *a };
    let sb = SrcLanes { ty, modifier: M::None, bits: *b };
    let mut out = AluOut::default();
    eval(op, &SubOp::None, false, ty, &[sa, sb], 32, u32::MAX, 0, CR0, &mut out).expect("eval");
    out.values
}

proptest! {
    #[test]
    fn d_ops_match_wrapping_rust(a in any::<[u32; 32]>(), b in any::<[u32; 32]>()) {
        let wa: [u64; 32] = a.map(u64::from);
        let wb: [u64; 32] = b.map(u64::from);
        let ops: [(O, BinI32); 8] = [
            (O::Add, i32::wrapping_add),
            (O::Mul, i32::wrapping_mul),
            (O::And, |x, y| x & y),
            (O::Or, |x, y| x | y),
            (O::Xor, |x, y| x ^ y),
            (O::Shl, |x, y| x.wrapping_shl(y as u32)),
            (O::Asr, |x, y| x.wrapping_shr(y as u32)),
            (O::Min, i32::min),
        ];
        for (op, reference) in ops {
            let got = lanes2(op, T::D, &wa, &wb);
            for l in 0..32 {
                let want = reference(a[l] as i32, b[l] as i32) as u32 as u64;
                prop_assert_eq!(got[l], want, "{:?} lane {}", op, l);
            }
        }
    }

    #[test]
    fn ud_and_q_ops_match_wrapping_rust(a in any::<[u64; 32]>(), b in any::<[u64; 32]>()) {
        let got = lanes2(O::Shr, T::Ud, &a.map(|x| x & 0xffff_ffff), &b.map(|x| x & 0xffff_ffff));
        let mulh = lanes2(O::Mulh, T::Ud, &a.map(|x| x & 0xffff_ffff), &b.map(|x| x & 0xffff_ffff));
        let avg = lanes2(O::Avg, T::Ud, &a.map(|x| x & 0xffff_ffff), &b.map(|x| x & 0xffff_ffff));
        let qadd = lanes2(O::Add, T::Q, &a, &b);
        let qmul = lanes2(O::Mul, T::Uq, &a, &b);
        let qmax = lanes2(O::Max, T::Q, &a, &b);
        for l in 0..32 {
            let (x, y) = (a[l] as u32, b[l] as u32);
            prop_assert_eq!(got[l], x.wrapping_shr(y) as u64);
            prop_assert_eq!(mulh[l], (x as u64 * y as u64) >> 32);
            prop_assert_eq!(avg[l], ((x as u64 + y as u64 + 1) >> 1) & 0xffff_ffff);
            prop_assert_eq!(qadd[l], a[l].wrapping_add(b[l]));
            prop_assert_eq!(qmul[l], a[l].wrapping_mul(b[l]));
            prop_assert_eq!(qmax[l], (a[l] as i64).max(b[l] as i64) as u64);
        }
    }

    #[test]
    fn w_div_mod_match_rust(x in any::<i16>(), y in any::<i16>()) {
        prop_assume!(y != 0);
        let q = one(O::Div, T::W, &[s(T::W, x as u16 as u64), s(T::W, y as u16 as u64)]);
        let r = one(O::Mod, T::W, &[s(T::W, x as u16 as u64), s(T::W, y as u16 as u64)]);
        prop_assert_eq!(q, x.wrapping_div(y) as u16 as u64);
        prop_assert_eq!(r, x.wrapping_rem(y) as u16 as u64);
    }
}
