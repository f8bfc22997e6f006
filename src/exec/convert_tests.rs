//! Tests of the float formats and conversions.

use super::*;
use proptest::prelude::*;

const RNE: RoundMode = RoundMode::Rne;
const RTZ: RoundMode = RoundMode::Rtz;

#[test]
fn f16_every_value_round_trips_through_f32() {
    for h in 0..=u16::MAX {
        let back = f32_to_f16_bits(f16_bits_to_f32(h), 0);
        let is_nan = h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
        if is_nan {
            // NaNs stay NaNs (quieted), with the sign kept.
            assert_eq!(back & 0x7e00, 0x7e00, "h={h:#x}");
            assert_eq!(back & 0x8000, h & 0x8000);
        } else {
            assert_eq!(back, h, "h={h:#x}");
        }
    }
}

#[test]
fn f32_to_f16_halfway_rne_vs_rtz() {
    // 1 + 2^-11 is exactly halfway between f16 1.0 and 1.0 + 2^-10.
    let half = 1.0 + 2f32.powi(-11);
    assert_eq!(f32_to_f16_bits(half, 0), 0x3c00); // tie to even
    assert_eq!(f32_to_f16_bits(half, 3), 0x3c00);
    assert_eq!(f32_to_f16_bits(half, 1), 0x3c01); // toward +inf
                                                  // 1 + 3·2^-11: halfway between 0x3c01 and 0x3c02 → even is 0x3c02.
    let half3 = 1.0 + 3.0 * 2f32.powi(-11);
    assert_eq!(f32_to_f16_bits(half3, 0), 0x3c02);
    assert_eq!(f32_to_f16_bits(half3, 3), 0x3c01);
    assert_eq!(f32_to_f16_bits(-half3, 2), 0xbc02); // toward -inf grows the magnitude
    assert_eq!(f32_to_f16_bits(-half3, 1), 0xbc01);
}

#[test]
fn f16_overflow_follows_the_mode() {
    assert_eq!(f32_to_f16_bits(65520.0, 0), 0x7c00);
    assert_eq!(f32_to_f16_bits(65520.0, 3), 0x7bff);
    assert_eq!(f32_to_f16_bits(-1e6, 1), 0xfbff); // RU on a negative: -max
    assert_eq!(f32_to_f16_bits(-1e6, 2), 0xfc00);
    assert_eq!(f32_to_f16_bits(f32::INFINITY, 3), 0x7c00);
}

#[test]
fn f16_denormals_are_produced_and_decoded() {
    assert_eq!(f32_to_f16_bits(2f32.powi(-24), 0), 0x0001);
    assert_eq!(f16_bits_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_bits_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
    // Below half the smallest denormal: RNE → +0, RU → smallest denormal.
    assert_eq!(f32_to_f16_bits(2f32.powi(-26), 0), 0x0000);
    assert_eq!(f32_to_f16_bits(2f32.powi(-26), 1), 0x0001);
    assert_eq!(f32_to_f16_bits(-0.0, 0), 0x8000);
    assert_eq!(flush_out(F16, 0x8001, false), 0x8000);
    assert_eq!(flush_out(F16, 0x8001, true), 0x8001);
    assert_eq!(flush_in(F32, -(2f64.powi(-130)), false).to_bits(), (-0.0f64).to_bits());
}

#[test]
fn encode_uses_the_residual_sign() {
    // 1.0 with a tiny positive residual: RU must step up, RTZ/RNE must not.
    assert_eq!(encode(F32, 1.0, 1, RoundMode::Ru), 0x3f80_0001);
    assert_eq!(encode(F32, 1.0, 1, RNE), 0x3f80_0000);
    assert_eq!(encode(F32, 1.0, -1, RTZ), 0x3f7f_ffff);
    // Exactly halfway in f32 plus a positive residual → rounds up under RNE.
    let half = 1.0 + 2f64.powi(-24);
    assert_eq!(encode(F32, half, 0, RNE), 0x3f80_0000);
    assert_eq!(encode(F32, half, 1, RNE), 0x3f80_0001);
    assert_eq!(encode(F64, 1.0, 1, RoundMode::Ru), 0x3ff0_0000_0000_0001);
    assert_eq!(encode(F64, -1.0, 1, RTZ), 0xbfef_ffff_ffff_ffff);
}

#[test]
fn int_to_float_rounds_per_mode() {
    assert_eq!(int_to_float(F32, 16_777_217, RNE), 0x4b80_0000);
    assert_eq!(int_to_float(F32, 16_777_217, RoundMode::Ru), 0x4b80_0001);
    assert_eq!(int_to_float(F32, u32::MAX as i128, RNE), 0x4f80_0000);
    assert_eq!(int_to_float(F32, u32::MAX as i128, RTZ), 0x4f7f_ffff);
    assert_eq!(int_to_float(F32, -3, RNE), (-3.0f32).to_bits() as u64);
    assert_eq!(int_to_float(F16, 65519, RNE), 0x7bff);
    assert_eq!(int_to_float(F16, 70000, RNE), 0x7c00);
    assert_eq!(int_to_float(F64, i64::MIN as i128, RNE), (i64::MIN as f64).to_bits());
    assert_eq!(int_to_float(F32, 0, RNE), 0);
}

#[test]
fn float_to_int_truncates_and_saturates() {
    assert_eq!(float_to_int(2.9, DataType::D), 2);
    assert_eq!(float_to_int(-2.9, DataType::D), 0xffff_fffe);
    assert_eq!(float_to_int(f64::NAN, DataType::D), 0);
    assert_eq!(float_to_int(3e9, DataType::D), 0x7fff_ffff);
    assert_eq!(float_to_int(f64::NEG_INFINITY, DataType::D), 0x8000_0000);
    assert_eq!(float_to_int(-1.5, DataType::Ud), 0);
    assert_eq!(float_to_int(300.0, DataType::Ub), 255);
    assert_eq!(float_to_int(-200.0, DataType::B), 0x80);
    assert_eq!(float_to_int(1e30, DataType::Uq), u64::MAX);
    assert_eq!(float_to_int(-1e30, DataType::Q), i64::MIN as u64);
}

#[test]
fn vf_bytes_decode() {
    assert_eq!(f32::from_bits(vf_to_f32_bits(0x30)), 1.0);
    assert_eq!(f32::from_bits(vf_to_f32_bits(0x38)), 1.5);
    assert_eq!(f32::from_bits(vf_to_f32_bits(0xc0)), -2.0);
    assert_eq!(f32::from_bits(vf_to_f32_bits(0x00)), 0.0);
    assert_eq!(f32::from_bits(vf_to_f32_bits(0x7f)), 31.0);
    assert_eq!(f32::from_bits(vf_to_f32_bits(0x01)), 0.125 * (1.0 + 1.0 / 16.0));
}

proptest! {
    #[test]
    fn f64_to_f32_rne_matches_rust_cast(bits in any::<u64>()) {
        let v = f64::from_bits(bits);
        prop_assume!(!v.is_nan());
        prop_assert_eq!(encode(F32, v, 0, RNE), (v as f32).to_bits() as u64);
    }

    #[test]
    fn f64_to_f32_rtz_is_below_and_adjacent(bits in any::<u64>()) {
        let v = f64::from_bits(bits);
        prop_assume!(v.is_finite() && v.abs() < f32::MAX as f64);
        let r = f32::from_bits(encode(F32, v, 0, RTZ) as u32) as f64;
        prop_assert!(r.abs() <= v.abs());
        let next = f32::from_bits(encode(F32, v, 0, RTZ) as u32 + 1) as f64;
        prop_assert!(next.abs() > v.abs());
    }

    #[test]
    fn i64_to_float_rne_matches_rust_cast(v in any::<i64>()) {
        prop_assert_eq!(int_to_float(F32, v as i128, RNE), (v as f32).to_bits() as u64);
        prop_assert_eq!(int_to_float(F64, v as i128, RNE), (v as f64).to_bits());
    }
}
