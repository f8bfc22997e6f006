//! Bit-exact floating-point formats and conversions: one generic rounding routine
//! ([`round_to_format`]) serves every narrowing (f64→f32/f16/bf16, int→float, fcvt), so all
//! four cr0 rounding modes and denormal handling behave the same everywhere.

use crate::isa::DataType;

/// Rounding mode of cr0 bits 5:4 (the field's value is the discriminant).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RoundMode {
    /// Round to nearest, ties to even (00).
    Rne = 0,
    /// Round toward +inf (01).
    Ru = 1,
    /// Round toward -inf (10).
    Rd = 2,
    /// Round toward zero (11).
    Rtz = 3,
}

impl RoundMode {
    /// Decodes the 2-bit mode field value (0..=3).
    pub const fn from_bits(mode: u32) -> RoundMode {
        // An index, not a match: every f32 op decodes cr0, and the match compiled to a jump
        // table on that path.
        const MODES: [RoundMode; 4] = [RoundMode::Rne, RoundMode::Ru, RoundMode::Rd, RoundMode::Rtz];
        MODES[(mode & 3) as usize]
    }

    /// Reads the mode from the control register (bits 5:4).
    pub const fn from_cr0(cr0: u32) -> RoundMode {
        RoundMode::from_bits(cr0 >> 4)
    }
}

/// A binary interchange-style float format (sign, exponent, stored mantissa bits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fmt {
    pub exp_bits: u32,
    pub mant_bits: u32,
}

pub const F64: Fmt = Fmt { exp_bits: 11, mant_bits: 52 };
pub const F32: Fmt = Fmt { exp_bits: 8, mant_bits: 23 };
pub const F16: Fmt = Fmt { exp_bits: 5, mant_bits: 10 };
pub const BF16: Fmt = Fmt { exp_bits: 8, mant_bits: 7 };
/// BF8 (e5m2), the `fcvt` UB encoding.
pub const BF8: Fmt = Fmt { exp_bits: 5, mant_bits: 2 };
/// TF32 (e8m10), the `fcvt` UD encoding (kept in the top 19 bits of a dword).
pub const TF32: Fmt = Fmt { exp_bits: 8, mant_bits: 10 };

impl Fmt {
    /// The format of a float data type (None for integers).
    pub const fn of(ty: DataType) -> Option<Fmt> {
        match ty {
            DataType::F | DataType::Vf => Some(F32),
            DataType::Df => Some(F64),
            DataType::Hf => Some(F16),
            DataType::Bf => Some(BF16),
            DataType::Bf8 => Some(BF8),
            // TF32 values are f32 values (FCVT.md: "TF32 is a valid F type").
            DataType::Tf32 => Some(F32),
            // HF8 (E4M3) and E2M1 have no infinities, so no `Fmt` describes them.
            _ => None,
        }
    }
    const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    const fn exp_max(self) -> u64 {
        (1 << self.exp_bits) - 1
    }
    const fn mant_mask(self) -> u64 {
        (1 << self.mant_bits) - 1
    }
    pub const fn sign_bit(self) -> u64 {
        1 << (self.exp_bits + self.mant_bits)
    }
    const fn signed(self, neg: bool, mag: u64) -> u64 {
        if neg {
            mag | self.sign_bit()
        } else {
            mag
        }
    }
    const fn inf(self, neg: bool) -> u64 {
        self.signed(neg, self.exp_max() << self.mant_bits)
    }
    const fn max_finite(self, neg: bool) -> u64 {
        self.signed(neg, ((self.exp_max() - 1) << self.mant_bits) | self.mant_mask())
    }
    /// True for a nonzero value with a zero exponent field.
    pub const fn is_denormal(self, bits: u64) -> bool {
        (bits >> self.mant_bits) & self.exp_max() == 0 && bits & self.mant_mask() != 0
    }
    /// Smallest positive normal value.
    fn min_normal(self) -> f64 {
        pow2(1 - self.bias())
    }

    /// Decodes `bits` into the f64 of the same value (exact: every format embeds in f64).
    pub fn decode(self, bits: u64) -> f64 {
        if self == F64 {
            return f64::from_bits(bits);
        }
        let e = (bits >> self.mant_bits) & self.exp_max();
        let m = bits & self.mant_mask();
        let shift = 52 - self.mant_bits;
        let mag = if e == self.exp_max() {
            // Inf or NaN: keep the payload's top bits so NaNs stay NaNs of the same kind.
            f64::from_bits((0x7ff << 52) | (m << shift))
        } else if e == 0 {
            m as f64 * pow2(1 - self.bias() - self.mant_bits as i32)
        } else {
            let e64 = (e as i64 - self.bias() as i64 + 1023) as u64;
            f64::from_bits((e64 << 52) | (m << shift))
        };
        if bits & self.sign_bit() != 0 {
            -mag
        } else {
            mag
        }
    }
}

/// 2^k for k in the f64 normal range.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Result bits of overflowing `fmt` under `mode`.
fn overflow(fmt: Fmt, neg: bool, mode: RoundMode) -> u64 {
    let to_inf = match mode {
        RoundMode::Rne => true,
        RoundMode::Rtz => false,
        RoundMode::Ru => !neg,
        RoundMode::Rd => neg,
    };
    if to_inf {
        fmt.inf(neg)
    } else {
        fmt.max_finite(neg)
    }
}

/// Rounds the exact value `(-1)^neg · m · 2^exp` (m > 0) into `fmt` with `mode`.
/// Denormal results are produced (flushing is the caller's decision).
pub fn round_to_format(fmt: Fmt, neg: bool, m: u128, exp: i32, mode: RoundMode) -> u64 {
    if m == 0 {
        return fmt.signed(neg, 0);
    }
    let mb = fmt.mant_bits as i32;
    let top = 127 - m.leading_zeros() as i32 + exp;
    let emin = 1 - fmt.bias();
    // Exponent of one unit in the last place of the result.
    let mut q = if top < emin { emin - mb } else { top - mb };
    let shift = q - exp;
    let (mut kept, rem_vs_half, inexact) = if shift <= 0 {
        (m << (-shift) as u32, std::cmp::Ordering::Less, false)
    } else if shift >= 128 {
        (0, std::cmp::Ordering::Less, true)
    } else {
        let rem = m & ((1u128 << shift) - 1);
        (m >> shift, rem.cmp(&(1u128 << (shift - 1))), rem != 0)
    };
    let up = match mode {
        RoundMode::Rne => {
            rem_vs_half == std::cmp::Ordering::Greater
                || (rem_vs_half == std::cmp::Ordering::Equal && kept & 1 == 1)
        }
        RoundMode::Ru => inexact && !neg,
        RoundMode::Rd => inexact && neg,
        RoundMode::Rtz => false,
    };
    if up {
        kept += 1;
        if kept >> (mb + 1) != 0 {
            kept >>= 1;
            q += 1;
        }
    }
    if kept >> mb == 0 {
        return fmt.signed(neg, kept as u64); // denormal or zero
    }
    let biased = q + mb + fmt.bias();
    if biased as i64 >= fmt.exp_max() as i64 {
        return overflow(fmt, neg, mode);
    }
    fmt.signed(neg, ((biased as u64) << mb) | (kept as u64 & fmt.mant_mask()))
}

/// Encodes the real number `v + ε` into `fmt`, where `v` is an f64 and `ε` is a residual far
/// below v's f64 ulp of which only the sign `err` (-1, 0, +1) is known. Exact arithmetic
/// results (TwoSum, TwoProduct, division remainders) use this to round correctly in any mode.
pub fn encode(fmt: Fmt, v: f64, err: i8, mode: RoundMode) -> u64 {
    let neg = v.is_sign_negative();
    if v.is_nan() {
        let payload = (v.to_bits() >> (52 - fmt.mant_bits)) & fmt.mant_mask();
        let quiet = 1 << (fmt.mant_bits - 1);
        return fmt.signed(neg, fmt.inf(false) | payload | quiet);
    }
    if v.is_infinite() || v == 0.0 {
        return if v == 0.0 { fmt.signed(neg, 0) } else { fmt.inf(neg) };
    }
    if fmt == F64 {
        return directed_f64(v, err, mode).to_bits();
    }
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1 << 52) - 1)) as u128;
    let (m, exp) = if e == 0 { (frac, -1074) } else { (frac | (1 << 52), e - 1075) };
    // Two extra bits hold the residual as a sticky value strictly between neighbours.
    let away = (err > 0) != neg;
    let m = match err {
        0 => m << 2,
        _ if away => (m << 2) + 1,
        _ => (m << 2) - 1,
    };
    round_to_format(fmt, neg, m, exp - 2, mode)
}

/// Applies a directed rounding mode to an f64 that is already the round-to-nearest result.
fn directed_f64(v: f64, err: i8, mode: RoundMode) -> f64 {
    match (mode, err) {
        (_, 0) | (RoundMode::Rne, _) => v,
        (RoundMode::Ru, e) if e > 0 => step(v, true),
        (RoundMode::Rd, e) if e < 0 => step(v, false),
        (RoundMode::Rtz, e) if (e > 0) == (v < 0.0) => step(v, v < 0.0),
        _ => v,
    }
}

/// Next f64 toward +inf (`up`) or -inf; `v` is finite and nonzero.
fn step(v: f64, up: bool) -> f64 {
    let bits = v.to_bits();
    let toward_larger_mag = up == (v > 0.0);
    if toward_larger_mag {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}

/// Flushes a denormal f64 input of format `fmt` to signed zero unless `keep`.
#[inline]
pub fn flush_in(fmt: Fmt, v: f64, keep: bool) -> f64 {
    if !keep && v != 0.0 && v.abs() < fmt.min_normal() {
        0.0f64.copysign(v)
    } else {
        v
    }
}

/// Flushes denormal result bits to signed zero unless `keep`.
#[inline]
pub fn flush_out(fmt: Fmt, bits: u64, keep: bool) -> u64 {
    if !keep && fmt.is_denormal(bits) {
        bits & fmt.sign_bit()
    } else {
        bits
    }
}

/// cr0 denormal-keep bit for a format: 6 for fp64, 7 for fp32, 10 for fp16 (bf16 follows fp32).
pub fn keeps_denormals(fmt: Fmt, cr0: u32) -> bool {
    let bit = if fmt == F64 {
        6
    } else if fmt == F16 || fmt == BF8 {
        10
    } else {
        7
    };
    cr0 & (1 << bit) != 0
}

/// Integer range of an integer data type as (min, max).
pub fn int_range(ty: DataType) -> (i128, i128) {
    match ty {
        DataType::B => (i8::MIN as i128, i8::MAX as i128),
        DataType::Ub | DataType::Bool => (0, u8::MAX as i128),
        DataType::W => (i16::MIN as i128, i16::MAX as i128),
        DataType::Uw => (0, u16::MAX as i128),
        DataType::D => (i32::MIN as i128, i32::MAX as i128),
        DataType::Q => (i64::MIN as i128, i64::MAX as i128),
        DataType::Uq => (0, u64::MAX as i128),
        _ => (0, u32::MAX as i128),
    }
}

/// Float → integer: truncate toward zero, saturate to the type's range, NaN → 0 (2_datatypes
/// "Float to Integer"). Negative values to unsigned types give 0: the spec's table says
/// "qNaN Indefinite" there, which has no integer encoding; Gen hardware clamps to 0.
pub fn float_to_int(v: f64, ty: DataType) -> u64 {
    let (lo, hi) = int_range(ty);
    // `as i128` already truncates, saturates at the i128 range and maps NaN to 0.
    let i = (v.trunc() as i128).clamp(lo, hi);
    (i as u64) & mask(ty.bits())
}

/// Integer → float with the given rounding mode.
pub fn int_to_float(fmt: Fmt, v: i128, mode: RoundMode) -> u64 {
    round_to_format(fmt, v < 0, v.unsigned_abs(), 0, mode)
}

/// All-ones mask of `bits` width (bits ≤ 64).
#[inline]
pub const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Restricted 8-bit float of `:vf` (1 sign, 3 exponent bias 3, 4 mantissa, no denormals,
/// no inf/NaN; only all-zero magnitude is zero) → f32 bits.
pub fn vf_to_f32_bits(byte: u8) -> u32 {
    let sign = ((byte as u32) & 0x80) << 24;
    let mag = (byte & 0x7f) as u32;
    if mag == 0 {
        return sign;
    }
    let exp = (mag >> 4) + 127 - 3;
    sign | (exp << 23) | ((mag & 0xf) << 19)
}

/// f32 → f16 bits with the 2-bit cr0 rounding-mode code `round_mode` (0 RNE, 1 RU, 2 RD,
/// 3 RTZ). Denormals are produced, not flushed.
pub fn f32_to_f16_bits(v: f32, round_mode: u32) -> u16 {
    encode(F16, v as f64, 0, RoundMode::from_bits(round_mode)) as u16
}

/// f16 bits → f32 (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    F16.decode(h as u64) as f32
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
