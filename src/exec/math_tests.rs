//! Tests of the float ops: rounding modes, fusing, denormals, math functions, conversions.

use crate::exec::alu::{eval, AluOut};
use crate::exec::test_util::*;
use crate::isa::{DataType as T, Opcode as O, SrcMod as M, SubOp};
use proptest::prelude::*;

#[test]
fn mov_float_to_int_and_back() {
    assert_eq!(one(O::Mov, T::D, &[s(T::F, f(-2.9))]), (-2i32) as u32 as u64);
    assert_eq!(one(O::Mov, T::D, &[s(T::F, 0x7fc0_0000)]), 0);
    assert_eq!(one(O::Mov, T::D, &[s(T::F, f(3e9))]), 0x7fff_ffff);
    assert_eq!(one(O::Mov, T::D, &[s(T::F, f(f32::NEG_INFINITY))]), 0x8000_0000);
    assert_eq!(one(O::Mov, T::Ud, &[s(T::F, f(-1.5))]), 0);
    assert_eq!(one(O::Mov, T::Ub, &[s(T::Hf, 0x5c00)]), 255); // 256.0
    assert_eq!(one(O::Mov, T::Q, &[s(T::Df, (-1e300f64).to_bits())]), i64::MIN as u64);
    assert_eq!(one(O::Mov, T::F, &[s(T::D, 16_777_217)]), 0x4b80_0000);
    assert_eq!(moded(O::Mov, T::F, &[s(T::D, 16_777_217)], RU), 0x4b80_0001);
    assert_eq!(moded(O::Mov, T::F, &[s(T::Ud, 0xffff_ffff)], RTZ), 0x4f7f_ffff);
    assert_eq!(one(O::Mov, T::F, &[s(T::Ud, 0xffff_ffff)]), 0x4f80_0000);
    assert_eq!(one(O::Mov, T::Hf, &[s(T::W, 0xfffe)]), 0xc000);
    assert_eq!(one(O::Mov, T::Df, &[s(T::Uq, u64::MAX)]), 2f64.powi(64).to_bits());
}

#[test]
fn mov_int_to_int() {
    assert_eq!(one(O::Mov, T::D, &[s(T::W, 0x8000)]), 0xffff_8000);
    assert_eq!(one(O::Mov, T::Ud, &[s(T::Uw, 0x8000)]), 0x8000);
    assert_eq!(one(O::Mov, T::W, &[s(T::D, 0x1234_5678)]), 0x5678);
    assert_eq!(sat(O::Mov, T::W, &[s(T::D, 0x1234_5678)]), 0x7fff);
    assert_eq!(sat(O::Mov, T::Ud, &[s(T::D, 0xffff_ffff)]), 0);
    assert_eq!(sat(O::Mov, T::D, &[s(T::Ud, 0xffff_ffff)]), 0x7fff_ffff);
    assert_eq!(one(O::Mov, T::Q, &[s(T::D, 0xffff_ffff)]), u64::MAX);
    assert_eq!(one(O::Mov, T::Uq, &[s(T::Ud, 0xffff_ffff)]), 0xffff_ffff);
    assert_eq!(one(O::Mov, T::D, &[s(T::Ud, 0xffff_ffff)]), 0xffff_ffff);
}

#[test]
fn mov_float_to_float_rounding_and_denormals() {
    let half = f(1.0 + 2f32.powi(-11));
    assert_eq!(one(O::Mov, T::Hf, &[s(T::F, half)]), 0x3c00);
    assert_eq!(moded(O::Mov, T::Hf, &[s(T::F, half)], RU), 0x3c01);
    let odd_half = f(1.0 + 3.0 * 2f32.powi(-11));
    assert_eq!(one(O::Mov, T::Hf, &[s(T::F, odd_half)]), 0x3c02);
    assert_eq!(moded(O::Mov, T::Hf, &[s(T::F, odd_half)], RTZ), 0x3c01);
    assert_eq!(moded(O::Mov, T::Hf, &[s(T::F, f(65520.0))], RTZ), 0x7bff);
    assert_eq!(one(O::Mov, T::Hf, &[s(T::F, f(65520.0))]), 0x7c00);
    let tiny = f(2f32.powi(-24));
    assert_eq!(one(O::Mov, T::Hf, &[s(T::F, tiny)]), 0x0001);
    assert_eq!(moded(O::Mov, T::Hf, &[s(T::F, tiny)], 0x0c0), 0x0000); // fp16 keep bit clear
    assert_eq!(one(O::Mov, T::F, &[s(T::Hf, 0x0001)]), tiny);
    assert_eq!(one(O::Mov, T::F, &[s(T::Hf, 0xfc00)]), f(f32::NEG_INFINITY));
    assert_eq!(one(O::Mov, T::F, &[s(T::Df, (0.1f64).to_bits())]), f(0.1));
    // fl32(0.1) = 0x3dcccccd lies above 0.1.
    assert_eq!(moded(O::Mov, T::F, &[s(T::Df, (0.1f64).to_bits())], RD), f(0.1) - 1);
    assert_eq!(moded(O::Mov, T::F, &[s(T::Df, (0.1f64).to_bits())], RU), f(0.1));
    assert_eq!(one(O::Mov, T::Df, &[s(T::F, f(0.1))]), (0.1f32 as f64).to_bits());
    // Same type without modifiers: the bits move unchanged, even a signalling NaN.
    assert_eq!(one(O::Mov, T::F, &[s(T::F, 0x7f80_0001)]), 0x7f80_0001);
    assert_eq!(one(O::Mov, T::F, &[sm(T::F, M::Neg, f(2.0))]), f(-2.0));
    assert_eq!(one(O::Mov, T::F, &[sm(T::F, M::Abs, f(-2.0))]), f(2.0));
}

#[test]
fn float_saturation() {
    assert_eq!(sat(O::Mov, T::F, &[s(T::F, f(1.5))]), f(1.0));
    assert_eq!(sat(O::Mov, T::F, &[s(T::F, f(-2.0))]), 0);
    assert_eq!(sat(O::Mov, T::F, &[s(T::F, 0x7fc0_0000)]), 0);
    assert_eq!(sat(O::Mov, T::F, &[s(T::F, f(0.5))]), f(0.5));
    assert_eq!(sat(O::Add, T::F, &[s(T::F, f(0.75)), s(T::F, f(0.5))]), f(1.0));
    assert_eq!(sat(O::Add, T::Hf, &[s(T::Hf, 0xbc00), s(T::Hf, 0x3800)]), 0);
    assert_eq!(sat(O::Mul, T::Df, &[s(T::Df, 2f64.to_bits()), s(T::Df, 4f64.to_bits())]), 1f64.to_bits());
    assert_eq!(sat(O::Mov, T::F, &[s(T::D, 7)]), f(1.0));
}

#[test]
fn float_add_mul_honour_rounding_modes() {
    let (a, b) = (s(T::F, f(1.0)), s(T::F, f(2f32.powi(-24))));
    assert_eq!(one(O::Add, T::F, &[a.clone(), b.clone()]), f(1.0));
    assert_eq!(moded(O::Add, T::F, &[a.clone(), b.clone()], RU), 0x3f80_0001);
    assert_eq!(moded(O::Add, T::F, &[a.clone(), b.clone()], RTZ), f(1.0));
    let (na, nb) = (s(T::F, f(-1.0)), s(T::F, f(-(2f32.powi(-24)))));
    assert_eq!(moded(O::Add, T::F, &[na, nb], RD), 0xbf80_0001);
    // The residual below f64 precision still decides directed rounding.
    let t = s(T::F, f(2f32.powi(-60)));
    assert_eq!(moded(O::Add, T::F, &[a.clone(), t.clone()], RU), 0x3f80_0001);
    assert_eq!(moded(O::Add, T::F, &[a.clone(), sm(T::F, M::Neg, f(2f32.powi(-60)))], RTZ), 0x3f7f_ffff);
    let x = s(T::F, 0x3f80_0001);
    assert_eq!(one(O::Mul, T::F, &[x.clone(), x.clone()]), 0x3f80_0002);
    assert_eq!(moded(O::Mul, T::F, &[x.clone(), x.clone()], RU), 0x3f80_0003);
    assert_eq!(moded(O::Mul, T::F, &[x.clone(), x], RTZ), 0x3f80_0002);
    let h = [s(T::Hf, 0x3c00), s(T::Hf, 0x1000)]; // 1 + 2^-11: an f16 tie
    assert_eq!(one(O::Add, T::Hf, &h), 0x3c00);
    assert_eq!(moded(O::Add, T::Hf, &h, RU), 0x3c01);
    let d = [s(T::Df, 1f64.to_bits()), s(T::Df, 2f64.powi(-60).to_bits())];
    assert_eq!(one(O::Add, T::Df, &d), 1f64.to_bits());
    assert_eq!(moded(O::Add, T::Df, &d, RU), 0x3ff0_0000_0000_0001);
    assert_eq!(one(O::Add, T::F, &[s(T::F, f(f32::MAX)), s(T::F, f(f32::MAX))]), f(f32::INFINITY));
    assert_eq!(moded(O::Add, T::F, &[s(T::F, f(f32::MAX)), s(T::F, f(f32::MAX))], RTZ), f(f32::MAX));
}

#[test]
fn mad_is_fused() {
    let a = s(T::F, f(1.0 + 2f32.powi(-12)));
    let c = s(T::F, f(-1.0));
    // Exact: 2^-11 + 2^-24; an unfused mul would round the product first and lose 2^-24.
    let expect = f(2f32.powi(-11) + 2f32.powi(-24));
    assert_eq!(one(O::Mad, T::F, &[a.clone(), a, c]), expect);
    let d = |v: f64| s(T::Df, v.to_bits());
    assert_eq!(one(O::Mad, T::Df, &[d(3.0), d(4.0), d(-2.0)]), 10f64.to_bits());
    // A product past the largest double whose sum with src2 is finite: one rounding of the
    // exact 1.5·2^1024 − MAX, not the overflowed product plus src2 (infinity).
    let sum = one(O::Mad, T::Df, &[d(1.5 * 2f64.powi(1000)), d(2f64.powi(24)), d(-f64::MAX)]);
    assert_eq!(sum, (2f64.powi(1023) * (1.0 + f64::EPSILON)).to_bits());
}

#[test]
fn denormal_flush_follows_cr0() {
    let den = s(T::F, 1); // 2^-149
    let zero = s(T::F, 0);
    assert_eq!(moded(O::Add, T::F, &[den.clone(), zero.clone()], CR0), 1);
    assert_eq!(moded(O::Add, T::F, &[den.clone(), zero.clone()], 0), 0);
    // Output flush: 2^-126 · 0.5 is denormal.
    let m = [s(T::F, f(2f32.powi(-126))), s(T::F, f(-0.5))];
    assert_eq!(moded(O::Mul, T::F, &m, CR0), f(-(2f32.powi(-127))));
    assert_eq!(moded(O::Mul, T::F, &m, 0), 0x8000_0000);
    // fp64 keep bit is 6, independent of fp32's bit 7.
    let dd = [s(T::Df, 1), s(T::Df, 0)];
    assert_eq!(moded(O::Add, T::Df, &dd, 0x40), 1);
    assert_eq!(moded(O::Add, T::Df, &dd, 0x80), 0);
}

#[test]
fn math_functions() {
    let u = |op: O, v: f32| one(op, T::F, &[s(T::F, f(v))]);
    assert_eq!(u(O::Rnde, 2.5), f(2.0));
    assert_eq!(u(O::Rnde, -2.5), f(-2.0));
    assert_eq!(u(O::Rnde, 3.5), f(4.0));
    assert_eq!(u(O::Rndd, -0.5), f(-1.0));
    assert_eq!(u(O::Rndu, -0.5), f(-0.0));
    assert_eq!(u(O::Rndz, -1.7), f(-1.0));
    assert_eq!(u(O::Frc, -0.25), f(0.75));
    assert_eq!(u(O::Frc, 5.5), f(0.5));
    assert_eq!(u(O::Inv, 4.0), f(0.25));
    assert_eq!(u(O::Inv, 0.0), f(f32::INFINITY));
    assert_eq!(u(O::Log, 8.0), f(3.0));
    assert_eq!(u(O::Log, 0.0), f(f32::NEG_INFINITY));
    assert_eq!(u(O::Exp, 3.0), f(8.0));
    assert_eq!(u(O::Sqrt, 2.0), f(2f32.sqrt()));
    assert_eq!(u(O::Sqrtm, 2.0), f(2f32.sqrt()));
    assert_eq!(u(O::Rsqrt, 4.0), f(0.5));
    assert_eq!(u(O::Sin, 0.0), 0);
    assert_eq!(u(O::Cos, 0.0), f(1.0));
    assert_eq!(one(O::Pow, T::F, &[s(T::F, f(2.0)), s(T::F, f(10.0))]), f(1024.0));
    // fl(sqrt 2) = 1.41421354 lies below sqrt 2: RTZ keeps it, RU steps up.
    assert_eq!(moded(O::Sqrtm, T::F, &[s(T::F, f(2.0))], RTZ), f(2f32.sqrt()));
    assert_eq!(moded(O::Sqrtm, T::F, &[s(T::F, f(2.0))], RU), f(2f32.sqrt()) + 1);
    assert_eq!(one(O::Exp, T::Hf, &[s(T::Hf, 0x4000)]), 0x4400); // 2^2 = 4
}

#[test]
fn divisions() {
    let third = [s(T::F, f(1.0)), s(T::F, f(3.0))];
    assert_eq!(one(O::Divm, T::F, &third), f(1.0 / 3.0));
    // fl(1/3) = 0x3eaaaaab lies above 1/3: RU keeps it, RTZ steps down.
    assert_eq!(moded(O::Divm, T::F, &third, RU), f(1.0 / 3.0));
    assert_eq!(moded(O::Divm, T::F, &third, RTZ), f(1.0 / 3.0) - 1);
    assert_eq!(one(O::Div, T::F, &third), f(1.0 / 3.0));
    // div = x · inv(y): 10 · fl(1/3) = 3.33333325 rather than fl(10/3) = 3.33333325/3.3333335.
    let ten = [s(T::F, f(10.0)), s(T::F, f(3.0))];
    assert_eq!(one(O::Div, T::F, &ten), f(10.0 * (1.0f32 / 3.0)));
    let d = [s(T::Df, 1f64.to_bits()), s(T::Df, 3f64.to_bits())];
    assert_eq!(one(O::Divm, T::Df, &d), (1.0f64 / 3.0).to_bits());
    assert_eq!(moded(O::Divm, T::Df, &d, RU), (1.0f64 / 3.0).to_bits() + 1);
    let z = [s(T::F, f(-1.0)), s(T::F, 0)];
    assert_eq!(one(O::Divm, T::F, &z), f(f32::NEG_INFINITY));
}

#[test]
fn dot_products_lrp_line() {
    let mut a = s(T::F, 0);
    let mut b = s(T::F, 0);
    for i in 0..8 {
        a.bits[i] = f(i as f32 + 1.0);
        b.bits[i] = f(i as f32 + 5.0);
    }
    let mut out = AluOut::default();
    let srcs = [a.clone(), b.clone()];
    eval(O::Dp4, &SubOp::None, false, T::F, &srcs, 8, 0xff, 0, CR0, &mut out).expect("dp4");
    // 1·5+2·6+3·7+4·8 = 70; 5·9+6·10+7·11+8·12 = 278.
    assert_eq!(out.values[..8], [f(70.0); 4].iter().chain(&[f(278.0); 4]).copied().collect::<Vec<_>>()[..]);
    eval(O::Dph, &SubOp::None, false, T::F, &srcs, 4, 0xf, 0, CR0, &mut out).expect("dph");
    assert_eq!(out.values[0], f(5.0 + 12.0 + 21.0 + 8.0));
    eval(O::Dp2, &SubOp::None, false, T::F, &srcs, 4, 0xf, 0, CR0, &mut out).expect("dp2");
    assert_eq!(out.values[3], f(17.0));
    eval(O::Line, &SubOp::None, false, T::F, &srcs, 2, 0b11, 0, CR0, &mut out).expect("line");
    assert_eq!(out.values[..2], [f(1.0 * 5.0 + 4.0), f(1.0 * 6.0 + 4.0)]);
    let lrp = [s(T::F, f(0.25)), s(T::F, f(4.0)), s(T::F, f(8.0))];
    assert_eq!(one(O::Lrp, T::F, &lrp), f(7.0));
}

#[test]
fn fcvt_and_srnd() {
    assert_eq!(one(O::Fcvt, T::Ub, &[s(T::Hf, 0x3c00)]), 0x3c);
    assert_eq!(one(O::Fcvt, T::Ub, &[s(T::Hf, 0x3d00)]), 0x3d); // 1.25 is exact in e5m2
    assert_eq!(one(O::Fcvt, T::Ub, &[s(T::Hf, 0x3d80)]), 0x3e); // 1.375: tie → even
    assert_eq!(one(O::Fcvt, T::Hf, &[s(T::Ub, 0xbc)]), 0xbc00);
    assert_eq!(one(O::Fcvt, T::Ud, &[s(T::F, 0x3f80_1fff)]), 0x3f80_2000);
    assert_eq!(one(O::Fcvt, T::F, &[s(T::Ud, 0x3f80_2000)]), 0x3f80_2000);
    let exact = [s(T::F, f(1.5)), s(T::Uw, 0xffff)];
    assert_eq!(one(O::Srnd, T::Hf, &exact), 0x3e00);
    // Halfway between two f16 values: the random number (its bits 12:0, SRND.md) decides.
    let half = f(1.0 + 2f32.powi(-11));
    assert_eq!(one(O::Srnd, T::Hf, &[s(T::F, half), s(T::Uw, 0x0fff)]), 0x3c00);
    assert_eq!(one(O::Srnd, T::Hf, &[s(T::F, half), s(T::Uw, 0x1000)]), 0x3c01);
    assert_eq!(one(O::Srnd, T::Hf, &[s(T::F, half), s(T::Uw, 0xe000)]), 0x3c00);
}

proptest! {
    #[test]
    fn f32_add_mul_rne_match_rust(x in any::<f32>(), y in any::<f32>()) {
        prop_assume!(!x.is_nan() && !y.is_nan());
        let sum = one(O::Add, T::F, &[s(T::F, f(x)), s(T::F, f(y))]);
        let prod = one(O::Mul, T::F, &[s(T::F, f(x)), s(T::F, f(y))]);
        let fma = one(O::Mad, T::F, &[s(T::F, f(x)), s(T::F, f(y)), s(T::F, f(x))]);
        if !(x + y).is_nan() { prop_assert_eq!(sum, f(x + y)); }
        if !(x * y).is_nan() { prop_assert_eq!(prod, f(x * y)); }
        if !x.mul_add(y, x).is_nan() { prop_assert_eq!(fma, f(x.mul_add(y, x))); }
    }
}
