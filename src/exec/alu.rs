//! Per-lane ALU semantics of vISA: the public entry point [`eval`], operand loading (type
//! extension and source modifiers), result storing (truncation, saturation, rounding,
//! denormal flushing) and the data-movement family (mov, sel, min/max, cmp).
//! Integer ops live in `alu_int`, float ops in `math`, format conversion in `convert`.
//!
//! Every op is dispatched once per call; the lane loops are tight loops over stack arrays.

use std::fmt;

use super::convert::{self, Fmt, RoundMode};
use crate::isa::{CondMod, DataType, Opcode, SrcMod, SubOp};

/// One source operand's lane values: raw bits as read from registers or the immediate,
/// zero-extended from `ty.size()` bytes into u64. Source modifier NOT yet applied.
#[derive(Clone, Debug, PartialEq)]
pub struct SrcLanes {
    pub ty: DataType,
    pub modifier: SrcMod,
    pub bits: [u64; 32],
}

impl SrcLanes {
    /// The same value in every lane.
    pub fn splat(ty: DataType, modifier: SrcMod, bits: u64) -> SrcLanes {
        SrcLanes { ty, modifier, bits: [bits; 32] }
    }
}

/// Results: `values[lane]` = raw bits of the destination type (zero-extended into u64);
/// `second[lane]` = the second destination (addc carry, subb borrow, madw high half);
/// `flags` bit lane = cmp relation true.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AluOut {
    pub values: [u64; 32],
    pub second: [u64; 32],
    pub flags: u32,
}

/// Why an instruction cannot be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AluError {
    Unsupported(String),
}

impl fmt::Display for AluError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AluError::Unsupported(msg) => write!(f, "unsupported ALU operation: {msg}"),
        }
    }
}

impl std::error::Error for AluError {}

/// Per-call context shared by the op implementations.
#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    pub op: Opcode,
    pub dst: DataType,
    pub sat: bool,
    pub cr0: u32,
    pub mode: RoundMode,
    /// Enabled lanes restricted to 0..n_lanes.
    pub mask: u32,
}

impl Ctx {
    pub fn unsupported(&self, srcs: &[SrcLanes], why: &str) -> AluError {
        let types: Vec<&str> = srcs.iter().map(|s| s.ty.name()).collect();
        AluError::Unsupported(format!(
            "{} with dst {} and sources [{}]: {why}",
            self.op.mnemonic(),
            self.dst,
            types.join(", ")
        ))
    }

    /// The first `n` sources, or an error naming the op.
    pub fn srcs<'a>(&self, srcs: &'a [SrcLanes], n: usize) -> Result<&'a [SrcLanes], AluError> {
        srcs.get(..n).ok_or_else(|| self.unsupported(srcs, &format!("needs {n} sources")))
    }

    /// Whether denormals of `fmt` are kept.
    pub fn keep(&self, fmt: Fmt) -> bool {
        convert::keeps_denormals(fmt, self.cr0)
    }
}

/// Iterator over the set bits of a lane mask, lowest first.
pub(crate) struct Lanes(pub u32);

impl Iterator for Lanes {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let lane = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(lane)
    }
}

/// Sign- or zero-extends raw `bits` of `ty` (floats: raw bits, zero-extended).
#[inline]
pub(crate) fn ext(ty: DataType, bits: u64) -> i128 {
    match ty {
        DataType::B => bits as u8 as i8 as i128,
        DataType::W => bits as u16 as i16 as i128,
        DataType::D => bits as u32 as i32 as i128,
        DataType::Q => bits as i64 as i128,
        _ => (bits & convert::mask(ty.bits())) as i128,
    }
}

/// Applies an integer source modifier. Negation is exact on the extended value except for
/// Q, where it wraps in 64 bits as the hardware's 64-bit datapath does; `abs` of an unsigned
/// value is the value itself.
#[inline]
pub(crate) fn int_mod(ty: DataType, m: SrcMod, v: i128) -> i128 {
    let r = match m {
        SrcMod::None => return v,
        SrcMod::Neg => -v,
        SrcMod::Abs => v.abs(),
        SrcMod::NegAbs => -v.abs(),
        SrcMod::Not => !v,
    };
    if ty == DataType::Q {
        r as i64 as i128
    } else {
        r
    }
}

/// Loads a source as extended integers with its modifier applied.
pub(crate) fn load_ints(s: &SrcLanes) -> [i128; 32] {
    let mut v = [0i128; 32];
    if let Some(fmt) = Fmt::of(s.ty) {
        // A float source in an integer op: convert its value (not legal vISA; kept total).
        for (o, &b) in v.iter_mut().zip(&s.bits) {
            *o = fmt.decode(b).trunc() as i128;
        }
    } else {
        for (o, &b) in v.iter_mut().zip(&s.bits) {
            *o = ext(s.ty, b);
        }
    }
    if s.modifier != SrcMod::None {
        for o in v.iter_mut() {
            *o = int_mod(s.ty, s.modifier, *o);
        }
    }
    v
}

/// Loads a source as f64 values with its modifier applied and denormals flushed per cr0.
pub(crate) fn load_floats(cx: &Ctx, s: &SrcLanes) -> [f64; 32] {
    let mut v = [0f64; 32];
    match Fmt::of(s.ty) {
        Some(fmt) => {
            let keep = cx.keep(fmt);
            for (o, &b) in v.iter_mut().zip(&s.bits) {
                *o = convert::flush_in(fmt, fmt.decode(b), keep);
            }
        }
        None => {
            for (o, &b) in v.iter_mut().zip(&s.bits) {
                *o = ext(s.ty, b) as f64;
            }
        }
    }
    match s.modifier {
        SrcMod::Neg => v.iter_mut().for_each(|x| *x = -*x),
        SrcMod::Abs => v.iter_mut().for_each(|x| *x = x.abs()),
        SrcMod::NegAbs => v.iter_mut().for_each(|x| *x = -x.abs()),
        SrcMod::None | SrcMod::Not => {}
    }
    v
}

/// Writes integer results: saturate or truncate to the dst type; a float dst converts with
/// the rounding mode.
pub(crate) fn store_ints(cx: &Ctx, vals: &[i128; 32], out: &mut AluOut) {
    if let Some(fmt) = Fmt::of(cx.dst) {
        let keep = cx.keep(fmt);
        for l in Lanes(cx.mask) {
            out.values[l] = int_to_float_lane(fmt, vals[l], cx.sat, cx.mode, keep);
        }
        return;
    }
    let m = convert::mask(cx.dst.bits());
    if cx.sat {
        let (lo, hi) = convert::int_range(cx.dst);
        for l in Lanes(cx.mask) {
            out.values[l] = (vals[l].clamp(lo, hi) as u64) & m;
        }
    } else {
        for l in Lanes(cx.mask) {
            out.values[l] = (vals[l] as u64) & m;
        }
    }
}

/// An integer result stored into float format `fmt`: rounded once under `mode`, flushed
/// (unless `keep`), saturated to [0.0, 1.0] with `sat`. Its bits.
#[inline]
pub(crate) fn int_to_float_lane(fmt: Fmt, v: i128, sat: bool, mode: RoundMode, keep: bool) -> u64 {
    let bits = convert::flush_out(fmt, convert::int_to_float(fmt, v, mode), keep);
    if sat {
        sat_float_bits(fmt, bits)
    } else {
        bits
    }
}

/// Clamps float bits of `fmt` to [0.0, 1.0]; NaN and -0.0 give +0.0.
fn sat_float_bits(fmt: Fmt, bits: u64) -> u64 {
    let v = fmt.decode(bits);
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= 1.0 {
        convert::encode(fmt, 1.0, 0, RoundMode::Rne)
    } else {
        bits
    }
}

/// Writes float results given as value + residual sign: clamp (`.sat`), round to the dst
/// format per cr0, flush denormals. An integer dst receives the value rounded to the
/// execution format `exec` and then converted toward zero with saturation.
pub(crate) fn store_floats(cx: &Ctx, exec: Fmt, vals: &[(f64, i8); 32], out: &mut AluOut) {
    let Some(fmt) = Fmt::of(cx.dst) else {
        for l in Lanes(cx.mask) {
            let (v, e) = vals[l];
            let rounded = exec.decode(convert::encode(exec, v, e, cx.mode));
            out.values[l] = convert::float_to_int(rounded, cx.dst);
        }
        return;
    };
    let keep = cx.keep(fmt);
    for l in Lanes(cx.mask) {
        out.values[l] = round_lane(fmt, vals[l], cx.sat, cx.mode, keep);
    }
}

/// A float result `(value, sign of its exact residual)` saturated, rounded once into `fmt`
/// under `mode` and flushed (unless `keep`): its bits.
pub(crate) fn round_lane(
    fmt: Fmt,
    (mut v, mut e): (f64, i8),
    sat: bool,
    mode: convert::RoundMode,
    keep: bool,
) -> u64 {
    if sat {
        // Clamping before rounding is equivalent: 0 and 1 are representable.
        if v.is_nan() || v <= 0.0 {
            (v, e) = (0.0, 0);
        } else if v > 1.0 || (v == 1.0 && e > 0) {
            (v, e) = (1.0, 0);
        }
    }
    convert::flush_out(fmt, convert::encode(fmt, v, e, mode), keep)
}

/// The execution float format: the widest float among the sources (F if none).
pub(crate) fn exec_fmt(srcs: &[SrcLanes]) -> Fmt {
    let mut best = convert::F32;
    let mut seen_float = false;
    for f in srcs.iter().filter_map(|s| Fmt::of(s.ty)) {
        if !seen_float || f.mant_bits > best.mant_bits {
            best = f;
            seen_float = true;
        }
    }
    best
}

/// Whether any source has a float type.
pub(crate) fn any_float(srcs: &[SrcLanes]) -> bool {
    srcs.iter().any(|s| s.ty.is_float())
}

/// Evaluate `op` for lanes 0..n_lanes whose bit is set in `enabled` (others untouched).
/// `select` is the per-lane predicate used by `sel` (bit set → src0, else src1; ignored by
/// others). `cr0` is the control register (rounding mode bits 5:4; denormal-keep bits 6 fp64,
/// 7 fp32, 10 fp16 — when a keep bit is clear, denormal inputs/outputs flush to signed zero).
#[allow(clippy::too_many_arguments)]
pub fn eval(
    op: Opcode,
    sub: &SubOp,
    sat: bool,
    dst_ty: DataType,
    srcs: &[SrcLanes],
    n_lanes: usize,
    enabled: u32,
    select: u32,
    cr0: u32,
    out: &mut AluOut,
) -> Result<(), AluError> {
    let lane_mask = if n_lanes >= 32 { u32::MAX } else { (1u32 << n_lanes) - 1 };
    let cx = Ctx { op, dst: dst_ty, sat, cr0, mode: RoundMode::from_cr0(cr0), mask: enabled & lane_mask };
    use Opcode as O;
    // bf8, hf8, tf32 and e2m1 values are only converted by fcvt/srnd, or moved unchanged:
    // no other vISA instruction accepts them, so vdb gives them no meaning there.
    if !matches!(op, O::Fcvt | O::Srnd) {
        let raw_move = op == O::Mov
            && !sat
            && srcs.first().is_some_and(|s| s.ty == dst_ty && s.modifier == SrcMod::None);
        let odd = std::iter::once(dst_ty).chain(srcs.iter().map(|s| s.ty)).find(|t| t.is_convert_only());
        if let (Some(t), false) = (odd, raw_move) {
            return Err(cx.unsupported(srcs, &format!("{t} operands are only converted by fcvt and srnd")));
        }
    }
    match op {
        O::Mov => mov(&cx, cx.srcs(srcs, 1)?, out),
        O::Sel => choose(&cx, cx.srcs(srcs, 2)?, select, out),
        O::Min | O::Max => min_max(&cx, cx.srcs(srcs, 2)?, out),
        O::Cmp => match sub {
            SubOp::Cond(c) => cmp(&cx, *c, cx.srcs(srcs, 2)?, out),
            _ => Err(cx.unsupported(srcs, "cmp without a relation")),
        },
        O::Add3 if matches!(sub, SubOp::Word(w) if w == "o") => super::xe2::add3o(&cx, srcs, out),
        O::Add | O::Mul | O::Mad | O::Div | O::Mod
            if any_float(srcs) || (op == O::Div && dst_ty.is_float()) =>
        {
            super::math::eval_float(&cx, srcs, out)
        }
        O::Add
        | O::Add3
        | O::Avg
        | O::Mul
        | O::Mulh
        | O::Mad
        | O::Madw
        | O::Addc
        | O::Subb
        | O::Sad2
        | O::Sad2add
        | O::Dp4a
        | O::Div
        | O::Mod => super::alu_int::arith(&cx, srcs, out),
        O::And | O::Or | O::Xor | O::Not | O::Bfn => super::alu_int::logic(&cx, sub, srcs, out),
        O::Shl | O::Shr | O::Asr | O::Rol | O::Ror => super::alu_int::shift(&cx, srcs, out),
        O::Cbit | O::Fbh | O::Fbl | O::Lzd | O::Bfrev | O::Bfe | O::Bfi => {
            super::alu_int::bits(&cx, srcs, out)
        }
        O::Fcvt => super::xe2::fcvt(&cx, srcs, out),
        O::Srnd => super::xe2::srnd(&cx, srcs, out),
        O::Invm | O::Rsqtm => super::xe2::math_macro(&cx, srcs, out),
        _ if op.family() == crate::isa::Family::Alu => super::math::eval_float(&cx, srcs, out),
        _ => Err(cx.unsupported(srcs, "not an ALU opcode")),
    }
}

/// `mov`: raw copy when types match and nothing modifies the value; otherwise a conversion.
fn mov(cx: &Ctx, s: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let src = &s[0];
    let same_size = src.ty.size() == cx.dst.size() && src.ty.is_float() == cx.dst.is_float();
    if same_size && !cx.sat && src.modifier == SrcMod::None && Fmt::of(src.ty) == Fmt::of(cx.dst) {
        // Same-width integer or identical float: the bits move unchanged (NaN payloads too).
        let m = convert::mask(cx.dst.bits());
        for l in Lanes(cx.mask) {
            out.values[l] = src.bits[l] & m;
        }
        return Ok(());
    }
    convert_lanes(cx, src, cx.mask, out);
    Ok(())
}

/// Converts the lanes of `lanes` from `src` to the dst type (modifier, saturation included).
fn convert_lanes(cx: &Ctx, src: &SrcLanes, lanes: u32, out: &mut AluOut) {
    let sub = Ctx { mask: lanes, ..*cx };
    if src.ty.is_float() {
        let v = load_floats(cx, src);
        let mut vals = [(0.0, 0i8); 32];
        for l in Lanes(lanes) {
            vals[l] = (v[l], 0);
        }
        store_floats(&sub, Fmt::of(src.ty).unwrap_or(convert::F32), &vals, out);
    } else {
        store_ints(&sub, &load_ints(src), out);
    }
}

/// `sel`: per-lane choice by the predicate, then a move to the dst type.
fn choose(cx: &Ctx, s: &[SrcLanes], select: u32, out: &mut AluOut) -> Result<(), AluError> {
    pick(cx, s, cx.mask & select, cx.mask & !select, out);
    Ok(())
}

/// Moves src0 on `first` lanes and src1 on `second` lanes (raw when no conversion needed).
fn pick(cx: &Ctx, s: &[SrcLanes], first: u32, second: u32, out: &mut AluOut) {
    for (src, lanes) in [(&s[0], first), (&s[1], second)] {
        let sub = Ctx { mask: lanes, ..*cx };
        // mov's rules (raw copy or conversion) apply per chosen source.
        let _ = mov(&sub, std::slice::from_ref(src), out);
    }
}

/// `min`/`max`: integer compare on extended values; float per IEEE minNum/maxNum with
/// -0.0 < +0.0 (Gen), one NaN → the other operand, two NaNs → src1 (MIN_MAX.md).
fn min_max(cx: &Ctx, s: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let want_max = cx.op == Opcode::Max;
    let mut take0 = 0u32;
    if any_float(s) {
        let (a, b) = (load_floats(cx, &s[0]), load_floats(cx, &s[1]));
        for l in Lanes(cx.mask) {
            take0 |= (takes_first(a[l], b[l], want_max) as u32) << l;
        }
    } else {
        let (a, b) = (load_ints(&s[0]), load_ints(&s[1]));
        for l in Lanes(cx.mask) {
            take0 |= (((a[l] > b[l]) == want_max && a[l] != b[l]) as u32) << l;
        }
    }
    pick(cx, s, take0, cx.mask & !take0, out);
    Ok(())
}

/// `cmp`: floats compare unordered-aware (NaN: only `ne` is true; -0 == +0); integers
/// compare the extended values. GRF dst lanes get all-ones / zero of the dst type.
fn cmp(cx: &Ctx, rel: CondMod, s: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let mut flags = 0u32;
    if any_float(s) {
        let (a, b) = (load_floats(cx, &s[0]), load_floats(cx, &s[1]));
        for l in Lanes(cx.mask) {
            let ord = a[l].partial_cmp(&b[l]);
            flags |= (relation(rel, ord) as u32) << l;
        }
    } else {
        let (a, b) = (load_ints(&s[0]), load_ints(&s[1]));
        for l in Lanes(cx.mask) {
            flags |= (relation(rel, Some(a[l].cmp(&b[l]))) as u32) << l;
        }
    }
    let ones = if cx.dst == DataType::Bool { 1 } else { convert::mask(cx.dst.bits()) };
    for l in Lanes(cx.mask) {
        out.values[l] = if flags >> l & 1 == 1 { ones } else { 0 };
    }
    out.flags = (out.flags & !cx.mask) | flags;
    Ok(())
}

/// Whether float `min` (`max` if `want_max`) takes its first source: one NaN gives the other
/// operand, two give src1, and -0 is below +0.
pub(crate) fn takes_first(x: f64, y: f64, want_max: bool) -> bool {
    if x.is_nan() || y.is_nan() {
        !x.is_nan()
    } else if x == y {
        // Signed zeros: max prefers +0, min prefers -0.
        x.is_sign_negative() != want_max
    } else {
        (x > y) == want_max
    }
}

/// Evaluates a relation on an ordering; `None` means unordered (a NaN operand).
#[inline]
pub(crate) fn relation(rel: CondMod, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    match (rel, ord) {
        (CondMod::Ne, None) => true,
        (_, None) => false,
        (CondMod::Eq, Some(o)) => o == Equal,
        (CondMod::Ne, Some(o)) => o != Equal,
        (CondMod::Gt, Some(o)) => o == Greater,
        (CondMod::Ge, Some(o)) => o != Less,
        (CondMod::Lt, Some(o)) => o == Less,
        (CondMod::Le, Some(o)) => o != Greater,
    }
}

/// Expand a `:v` (8 × signed 4-bit → W), `:uv` (8 × unsigned 4-bit → UW) or `:vf`
/// (4 × restricted 8-bit float → F) immediate into per-lane values; lanes repeat with
/// period 8 (or 4 for vf). Other types are splatted unchanged.
pub fn expand_vector_imm(ty: DataType, bits: u64) -> (DataType, [u64; 32]) {
    let mut lanes = [0u64; 32];
    let out_ty = match ty {
        DataType::V => DataType::W,
        DataType::Uv => DataType::Uw,
        DataType::Vf => DataType::F,
        other => return (other, [bits; 32]),
    };
    for (i, lane) in lanes.iter_mut().enumerate() {
        *lane = match ty {
            DataType::Vf => convert::vf_to_f32_bits((bits >> (8 * (i % 4))) as u8) as u64,
            _ => {
                let nib = (bits >> (4 * (i % 8))) & 0xf;
                if ty == DataType::V {
                    ((nib as i64) << 60 >> 60) as u64 & 0xffff
                } else {
                    nib
                }
            }
        };
    }
    (out_ty, lanes)
}

/// The numeric value of raw `bits` of `ty` as f64 (ints may round above 2^53).
pub fn to_f64(ty: DataType, bits: u64) -> f64 {
    match Fmt::of(ty) {
        Some(fmt) => fmt.decode(bits),
        None => ext(ty, bits) as f64,
    }
}

pub use super::convert::{f16_bits_to_f32, f32_to_f16_bits};

#[cfg(test)]
#[path = "alu_tests.rs"]
mod tests;
