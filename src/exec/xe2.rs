//! Lane semantics of the vISA 4.2 (IGC 2.x) arithmetic that the spec defines: `add3.o`
//! (ADD3O.md), the `invm`/`rsqtm` math macros with their early-out predicate (INVM.md,
//! RSQTM.md), `fcvt` between HF and the FP8 formats and between F and TF32 (FCVT.md), and
//! `srnd` stochastic rounding (SRND.md). Forms the spec leaves open are refused with an
//! error that names the instruction, which the interpreter reports as `not implemented`.

use super::alu::{
    exec_fmt, load_floats, load_ints, store_floats, store_ints, AluError, AluOut, Ctx, Lanes, SrcLanes,
};
use super::convert::{self, Fmt, RoundMode, BF8, F16, F32, TF32};
use crate::isa::{DataType, Opcode};

/// The 5-exponent 3-mantissa layout that E4M3 (HF8) bit patterns share once the value is
/// scaled by 2^-8: both then have the same minimum normal exponent, so the low seven bits
/// agree for every finite HF8 value (HF8 simply has no infinity and keeps exponent 15).
const E5M3: Fmt = Fmt { exp_bits: 5, mant_bits: 3 };
/// 2^8, the scale between HF8 values and their [`E5M3`] stand-ins.
const HF8_SCALE: f64 = 256.0;
/// HF8's NaN magnitude (S.1111.111) and its largest finite magnitude (448).
const HF8_NAN: u64 = 0x7f;
const HF8_MAX: u64 = 0x7e;

/// `add3.o`: dst = src0 + src1 + src2 (wrapped to dst), and `flags` bit = the exact sum does
/// not fit the dst type (ADD3O.md's `overflow(...)`, the (ov) flag of Gen's add3).
pub(crate) fn add3o(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let s = cx.srcs(srcs, 3)?;
    if cx.dst.is_float() || s.iter().any(|x| x.ty.is_float()) {
        return Err(cx.unsupported(srcs, "ADD3O.md allows only D, UD, W and UW"));
    }
    let (a, b, c) = (load_ints(&s[0]), load_ints(&s[1]), load_ints(&s[2]));
    let mut sum = [0i128; 32];
    let (lo, hi) = convert::int_range(cx.dst);
    let mut flags = 0u32;
    for l in Lanes(cx.mask) {
        sum[l] = a[l] + b[l] + c[l];
        flags |= u32::from(!(lo..=hi).contains(&sum[l])) << l;
    }
    // Saturation is not part of add3.o's text form; the sum wraps.
    store_ints(&Ctx { sat: false, ..*cx }, &sum, out);
    out.flags = (out.flags & !cx.mask) | flags;
    Ok(())
}

/// `invm`/`rsqtm`: the quotient src0/src1 (reciprocal square root of src0), and `flags` bit =
/// the result is a NaN, an infinity or a zero (the macro's early out). The spec calls the value
/// "an initial approximation"; vdb gives the correctly rounded one, which every refinement of
/// an approximation converges to.
pub(crate) fn math_macro(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let n = if cx.op == Opcode::Invm { 2 } else { 1 };
    let s = cx.srcs(srcs, n)?;
    let Some(dst_fmt) = Fmt::of(cx.dst).filter(|_| matches!(cx.dst, DataType::F | DataType::Df)) else {
        return Err(cx.unsupported(srcs, "the macros take F or DF"));
    };
    let a = load_floats(cx, &s[0]);
    let b = if n == 2 { load_floats(cx, &s[1]) } else { [0.0; 32] };
    let mut r = [(0f64, 0i8); 32];
    for l in Lanes(cx.mask) {
        r[l] = if n == 2 { quotient(a[l], b[l]) } else { (1.0 / a[l].sqrt(), 0) };
    }
    // No saturation: INVM.md and RSQTM.md rule it out, and the text form has no `.sat`.
    store_floats(&Ctx { sat: false, ..*cx }, exec_fmt(s), &r, out);
    let mut flags = 0u32;
    for l in Lanes(cx.mask) {
        let v = dst_fmt.decode(out.values[l]);
        flags |= u32::from(!v.is_finite() || v == 0.0) << l;
    }
    out.flags = (out.flags & !cx.mask) | flags;
    Ok(())
}

/// a / b with the sign of the exact error (the fma remainder), for correct rounding.
fn quotient(a: f64, b: f64) -> (f64, i8) {
    let q = a / b;
    if !q.is_finite() || q == 0.0 {
        return (q, 0);
    }
    let r = (-q).mul_add(b, a);
    let sign = |x: f64| {
        if x > 0.0 {
            1
        } else if x < 0.0 {
            -1
        } else {
            0
        }
    };
    (q, sign(r) * sign(b))
}

/// The format a type stands for in `fcvt`/`srnd`: FCVT.md and SRND.md write BF8 as UB, HF8
/// as B and TF32 as UD, since vISA 4.1 has no names for them; IGC 2.x declares them as
/// `bf8`, `hf8` and `tf32`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    Hf,
    F,
    Bf8,
    Hf8,
    Tf32,
    Other,
}

fn kind(ty: DataType) -> Kind {
    match ty {
        DataType::Hf => Kind::Hf,
        DataType::F => Kind::F,
        DataType::Ub | DataType::Bf8 => Kind::Bf8,
        DataType::B | DataType::Hf8 => Kind::Hf8,
        DataType::Ud | DataType::Tf32 => Kind::Tf32,
        _ => Kind::Other,
    }
}

/// `fcvt` (FCVT.md): HF ↔ BF8, HF ↔ HF8, F ↔ TF32, each lane's bits converted.
pub(crate) fn fcvt(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let s = cx.srcs(srcs, 1)?;
    if cx.sat {
        return Err(cx.unsupported(srcs, "FCVT.md gives no rule for .sat"));
    }
    let conv: fn(u64) -> u64 = match (kind(cx.dst), kind(s[0].ty)) {
        // BF8 (E5M2) is exactly the high byte of an f16: widening is a shift.
        (Kind::Hf, Kind::Bf8) => |x| (x & 0xff) << 8,
        // RTE whatever cr0 says; denormals are retained (FCVT.md).
        (Kind::Bf8, Kind::Hf) => |x| convert::encode(BF8, F16.decode(x & 0xffff), 0, RoundMode::Rne),
        (Kind::Hf, Kind::Hf8) => hf8_to_hf,
        (Kind::Hf8, Kind::Hf) => hf_to_hf8,
        // "Conversion from TF32 to float is noop as TF32 is a valid F type."
        (Kind::F, Kind::Tf32) => |x| x & 0xffff_ffff,
        (Kind::Tf32, Kind::F) => f_to_tf32,
        _ => return Err(cx.unsupported(srcs, "FCVT.md converts HF<->BF8/HF8 and F<->TF32 only")),
    };
    for l in Lanes(cx.mask) {
        out.values[l] = conv(s[0].bits[l]);
    }
    Ok(())
}

/// F → TF32 (FCVT.md): RTE, denormals flushed to zero; the TF32 value sits in f32 layout with
/// its low 13 mantissa bits zero.
fn f_to_tf32(x: u64) -> u64 {
    let v = convert::flush_in(F32, F32.decode(x & 0xffff_ffff), false);
    let bits = convert::encode(TF32, v, 0, RoundMode::Rne);
    convert::flush_out(TF32, bits, false) << 13
}

/// HF8 (E4M3) bits → its value; S.1111.111 is the only NaN.
pub(crate) fn hf8_value(x: u64) -> f64 {
    let mag = x & 0x7f;
    let v = if mag == HF8_NAN { f64::NAN } else { E5M3.decode(mag) * HF8_SCALE };
    if x & 0x80 != 0 {
        -v
    } else {
        v
    }
}

/// HF8 → HF: exact (every E4M3 value is an f16 value); the NaN becomes f16's quiet NaN.
fn hf8_to_hf(x: u64) -> u64 {
    convert::encode(F16, hf8_value(x & 0xff), 0, RoundMode::Rne)
}

/// HF → HF8 with RTE, denormals retained. FCVT.md names the type (as B) but spells out only
/// BF8: vdb rounds the same way, and as E4M3 has no infinity, infinities and finite values
/// that round past 448 give the NaN (the OCP FP8 non-saturating conversion).
fn hf_to_hf8(x: u64) -> u64 {
    let v = F16.decode(x & 0xffff);
    let sign = if v.is_sign_negative() { 0x80 } else { 0 };
    if !v.is_finite() {
        return sign | HF8_NAN;
    }
    let mag = convert::encode(E5M3, v.abs() / HF8_SCALE, 0, RoundMode::Rne);
    sign | if mag > HF8_MAX { HF8_NAN } else { mag }
}

/// `srnd` (SRND.md): the random number is added to src0's mantissa (Src1 bit 0 at mantissa
/// bit 0), and the sum is normalised and truncated to the dst format. Src1[12:0] serves
/// F → HF and Src1[7:0] HF → BF8, exactly the bits the narrowing drops. NaN stays NaN and an
/// infinity stays infinite (IEEE); a finite result beyond the dst's range is infinite.
/// HF → HF8 and the BF sources are refused: there Src1[7:0] does not match the dropped bits
/// and SRND.md does not say how they align.
pub(crate) fn srnd(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let s = cx.srcs(srcs, 2)?;
    let conv: fn(u64, u64) -> u64 = match (kind(cx.dst), kind(s[0].ty)) {
        (Kind::Hf, Kind::F) => srnd_f_to_hf,
        (Kind::Bf8, Kind::Hf) => srnd_hf_to_bf8,
        _ => return Err(cx.unsupported(srcs, "SRND.md's exact forms are F->HF and HF->BF8")),
    };
    for l in Lanes(cx.mask) {
        out.values[l] = conv(s[0].bits[l], s[1].bits[l]);
    }
    Ok(())
}

/// F → HF: add Src1[12:0] to the f32 magnitude bits (a carry out of the mantissa bumps the
/// exponent: the normalisation), drop the low 13 bits, then narrow toward zero (exact for
/// HF normals; in HF's denormal range the narrowing truncates further).
fn srnd_f_to_hf(x: u64, rnd: u64) -> u64 {
    let x = x & 0xffff_ffff;
    let v = F32.decode(x);
    if !v.is_finite() {
        return convert::encode(F16, v, 0, RoundMode::Rne);
    }
    let sign = x & 0x8000_0000;
    let mag = ((x & 0x7fff_ffff) + (rnd & 0x1fff)) & !0x1fff;
    let t = F32.decode(sign | mag.min(0x7f80_0000));
    if t.abs() > 65504.0 {
        return convert::encode(F16, t.signum() * f64::INFINITY, 0, RoundMode::Rne);
    }
    convert::encode(F16, t, 0, RoundMode::Rtz)
}

/// HF → BF8: add Src1[7:0] to the f16 magnitude bits and keep the high byte (BF8 is the high
/// byte of an f16, so no further narrowing happens).
fn srnd_hf_to_bf8(x: u64, rnd: u64) -> u64 {
    let x = x & 0xffff;
    let v = F16.decode(x);
    if !v.is_finite() {
        return convert::encode(BF8, v, 0, RoundMode::Rne);
    }
    let sign = (x >> 8) & 0x80;
    let mag = (((x & 0x7fff) + (rnd & 0xff)) >> 8).min(0x7c);
    sign | mag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf8_round_trips_every_value_through_hf() {
        for b in 0..=255u64 {
            let h = hf8_to_hf(b);
            if b & 0x7f == HF8_NAN {
                assert!(F16.decode(h).is_nan());
            } else {
                assert_eq!(hf_to_hf8(h), b, "{b:#x}");
            }
        }
        assert_eq!(hf8_value(0x7e), 448.0);
        assert_eq!(hf8_value(0x01), 2f64.powi(-9));
        // 464 is halfway between 448 and the (missing) 480: ties to even keep 448.
        assert_eq!(hf_to_hf8(convert::encode(F16, 464.0, 0, RoundMode::Rne)), 0x7e);
        assert_eq!(hf_to_hf8(convert::encode(F16, 500.0, 0, RoundMode::Rne)), 0x7f);
    }

    #[test]
    fn srnd_truncates_with_no_random_bits_and_rounds_up_with_all() {
        let one_and_bit = 0x3f80_0001; // 1 + 2^-23
        assert_eq!(srnd_f_to_hf(one_and_bit, 0), 0x3c00);
        assert_eq!(srnd_f_to_hf(one_and_bit, 0x1fff), 0x3c01);
        assert_eq!(srnd_hf_to_bf8(0x3c01, 0), 0x3c);
        assert_eq!(srnd_hf_to_bf8(0x3c01, 0xff), 0x3d);
        assert_eq!(srnd_hf_to_bf8(0x7bff, 0xff), 0x7c, "the carry normalises into infinity");
        assert_eq!(srnd_hf_to_bf8(0xfc00, 0xff), 0xfc);
    }
}
