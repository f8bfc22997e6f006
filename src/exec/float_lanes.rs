//! The half and double tier: `add`, `mul`, `mad`, the IEEE macros `divm` and `sqrtm`,
//! `div`, `pow`, the one-source math (`inv`, `log`, `exp`, `sqrt`, `rsqrt`, `sin`, `cos`,
//! `tanh`, `sigm`, `frc`, `rnd*`), `min`, `max`, `sel`, `mov` (conversions between float
//! formats, and between integers and hf, bf or df, included) and `cmp` to a predicate, where
//! an operand is hf, bf or df (f32 alone is `fast_float.rs`'s). Register
//! sources of any direct region, immediates and the destination are resolved to per-lane
//! GRF offsets at load. Each lane is computed with the general ALU's own arithmetic (the
//! exact value and the sign of its residual, rounded once into the destination's format
//! under cr0's mode), so only the operand work differs from the general path. Where every
//! operand is df (or every one hf), the sources immediate, packed or scalar, without
//! saturation, in the default rounding mode, the lanes are computed with the machine's f64
//! arithmetic instead (for hf: exact in f64, then rounded once to half), which gives the same
//! bits on every lane free of NaNs and of denormals (else the instruction goes the per-lane
//! way).

use super::alu::round_lane;
use super::control::size_mask;
use super::convert::{self, Fmt, RoundMode};
use super::ctx::Ctx;
use super::fault::FaultKind;
use super::math;
use super::observer::Observer;
use super::operand::load_le;
use crate::isa::{CondMod, DataType, Opcode, Operand, PredId, Region, SrcMod, SubOp};
use crate::program::Inst;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Add,
    Mul,
    Mad,
    Divm,
    Sqrtm,
    /// `div`: x · INV(y), the inverse rounded to the execution format first (DIV.md).
    Div,
    Pow,
    /// The one-source math: inv, log, exp, sqrt, rsqrt, sin, cos, tanh, sigm, frc, rnd*
    /// (which one is the instruction's opcode; a kind without data keeps the native loops'
    /// match as tight as it was).
    Unary,
    Min,
    Max,
    Sel,
    Mov,
    /// `mov` of an integer to hf, bf or df (rounded once by cr0's mode, as the general ALU's
    /// integer results are stored).
    FromInt,
    /// `mov` of hf, bf or df to an integer (toward zero, saturating; NaN gives 0).
    ToInt,
    Cmp(CondMod),
}

/// Where a source's lanes are: one immediate's bits, or a GRF offset per lane.
#[derive(Clone, Debug)]
enum At {
    Imm(u64),
    Lanes(Box<[u32; 32]>),
}

#[derive(Clone, Debug)]
struct Src {
    ty: DataType,
    fmt: Fmt,
    modifier: SrcMod,
    at: At,
}

#[derive(Clone, Debug)]
enum Dst {
    /// The register destination (the instruction's operand 0): its type and format.
    Reg { ty: DataType, fmt: Fmt },
    /// A compare's flags.
    Pred(PredId),
}

/// One compiled hf/df instruction.
#[derive(Clone, Debug)]
pub struct LanesOp {
    kind: Kind,
    srcs: Vec<Src>,
    dst: Dst,
    sat: bool,
    /// The GRF bytes its operands reach.
    need: u32,
    /// Its native form, when every operand is df and in one of its shapes.
    native: Option<Native>,
    /// The widest source format.
    exec: Fmt,
    /// For a native form: where its results go in place ([`Ctx::run_lanes_in_place`]).
    packed: Option<InPlace>,
    /// Its lanes, channel offset and predicate, for a burst's in-place form.
    pub(super) en: super::step::Enables,
}

/// Where the in-place form writes.
#[derive(Copy, Clone, Debug)]
enum InPlace {
    /// Packed elements of `size` bytes from this GRF offset.
    Reg { base: u32, size: u32 },
    /// A compare's flags.
    Pred(PredId),
}

/// Where a source's lanes are, in the native form: an immediate's bits, lane `l` at
/// `offset + size·l`, or every lane at one offset.
#[derive(Copy, Clone, Debug)]
enum NAt {
    Imm(u64),
    Packed(u32),
    Scalar(u32),
}

/// The native form of an instruction whose operands are all df, or all hf, or of a move
/// between hf and f: sources immediate, packed or scalar, no saturation. In the default rounding mode it gives the
/// general ALU's bits with the machine's own arithmetic: df in f64 directly; hf in f64, where
/// a sum or product of halves is exact (a `mad` whose sum is not goes the per-lane way), then
/// rounded once to half. A lane meeting a NaN or a denormal (the general ALU's NaN rules,
/// cr0's flushing) sends the instruction the per-lane way ([`native_run`]).
#[derive(Clone, Debug)]
struct Native {
    /// The sources are halves (else doubles, or floats for a move to hf).
    half: bool,
    srcs: [(NAt, SrcMod); 3],
    /// A `mov` between hf and f: true from f to hf, false from hf to f (the sources' format
    /// is then the other one).
    convert: Option<bool>,
}

/// The float types of this tier (bf16 and the 8-bit formats stay on the general path).
fn float_ty(ty: DataType) -> Option<Fmt> {
    matches!(ty, DataType::Hf | DataType::Bf | DataType::F | DataType::Df).then(|| Fmt::of(ty)).flatten()
}

/// `mov` between an integer and hf, bf or df: a conversion, its integer side register or
/// immediate, any region.
fn compile_conversion(inst: &Inst) -> Option<LanesOp> {
    let n = inst.exec.size;
    let other_float = |ty: DataType| matches!(ty, DataType::Hf | DataType::Bf | DataType::Df);
    let int = |ty: DataType| ty.is_int() && ty.size() <= 8;
    let [dst_op, src_op] = inst.operands.as_slice() else { return None };
    let mut need = 0u32;
    let src = match src_op {
        Operand::Imm(imm) if !imm.ty.is_packed_vector() => {
            Src { ty: imm.ty, fmt: convert::F64, modifier: SrcMod::None, at: At::Imm(imm.bits) }
        }
        Operand::Direct(d) if !d.is_null && d.modifier != SrcMod::Not => {
            let size = d.ty.size();
            let mut at = [0u32; 32];
            for (lane, a) in at.iter_mut().enumerate().take(n as usize) {
                *a = d.base + d.region.element(lane as u32) * size;
                need = need.max(*a + size);
            }
            Src { ty: d.ty, fmt: convert::F64, modifier: d.modifier, at: At::Lanes(Box::new(at)) }
        }
        _ => return None,
    };
    let Operand::Direct(d) = dst_op else { return None };
    if d.is_null {
        return None;
    }
    let kind = match (src.ty, d.ty) {
        (s, t) if int(s) && other_float(t) => Kind::FromInt,
        (s, t) if other_float(s) && int(t) => Kind::ToInt,
        _ => return None,
    };
    let src = match Fmt::of(src.ty) {
        Some(fmt) => Src { fmt, ..src },
        None => src,
    };
    let size = d.ty.size();
    need = need.max(d.base + d.region.element(n - 1) * size + size);
    let dst = Dst::Reg { ty: d.ty, fmt: Fmt::of(d.ty).unwrap_or(convert::F64) };
    let en = super::step::Enables::new(inst.exec, inst.pred);
    Some(LanesOp {
        kind,
        srcs: vec![src],
        dst,
        sat: inst.sat,
        need,
        native: None,
        exec: convert::F64,
        packed: None,
        en,
    })
}

/// The compiled form of `inst`, if this tier takes it.
pub fn compile(inst: &Inst) -> Option<LanesOp> {
    if inst.op == Opcode::Mov && (1..=32).contains(&inst.exec.size) {
        if let Some(op) = compile_conversion(inst) {
            return Some(op);
        }
    }
    let kind = match (inst.op, &inst.sub) {
        (Opcode::Add, _) => Kind::Add,
        (Opcode::Mul, _) => Kind::Mul,
        (Opcode::Mad, _) => Kind::Mad,
        (Opcode::Divm, _) => Kind::Divm,
        (Opcode::Sqrtm, _) => Kind::Sqrtm,
        (Opcode::Div, _) => Kind::Div,
        (Opcode::Pow, _) => Kind::Pow,
        (
            Opcode::Inv
            | Opcode::Log
            | Opcode::Exp
            | Opcode::Sqrt
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Tanh
            | Opcode::Sigm
            | Opcode::Frc
            | Opcode::Rndd
            | Opcode::Rndu
            | Opcode::Rnde
            | Opcode::Rndz,
            _,
        ) => Kind::Unary,
        (Opcode::Min, _) => Kind::Min,
        (Opcode::Max, _) => Kind::Max,
        (Opcode::Sel, _) => Kind::Sel,
        (Opcode::Mov, _) => Kind::Mov,
        (Opcode::Cmp, SubOp::Cond(c)) => Kind::Cmp(*c),
        _ => return None,
    };
    let arity = match kind {
        Kind::Mad => 3,
        Kind::Mov | Kind::Sqrtm | Kind::Unary => 1,
        _ => 2,
    };
    let n = inst.exec.size;
    if inst.operands.len() != 1 + arity || !(1..=32).contains(&n) {
        return None;
    }
    let mut need = 0u32;
    let mut srcs = Vec::with_capacity(arity);
    for op in &inst.operands[1..] {
        let src = match op {
            Operand::Imm(imm) if !imm.ty.is_packed_vector() => {
                Src { ty: imm.ty, fmt: float_ty(imm.ty)?, modifier: SrcMod::None, at: At::Imm(imm.bits) }
            }
            Operand::Direct(d) if !d.is_null && d.modifier != SrcMod::Not => {
                let (fmt, size) = (float_ty(d.ty)?, d.ty.size());
                let mut at = [0u32; 32];
                for (lane, a) in at.iter_mut().enumerate().take(n as usize) {
                    *a = d.base + d.region.element(lane as u32) * size;
                    need = need.max(*a + size);
                }
                Src { ty: d.ty, fmt, modifier: d.modifier, at: At::Lanes(Box::new(at)) }
            }
            _ => return None,
        };
        srcs.push(src);
    }
    let dst = match (&inst.operands[0], kind) {
        (Operand::Pred(p), Kind::Cmp(_)) => Dst::Pred(*p),
        (Operand::Direct(d), k) if !d.is_null && !matches!(k, Kind::Cmp(_)) => {
            let size = d.ty.size();
            need = need.max(d.base + d.region.element(n - 1) * size + size);
            Dst::Reg { ty: d.ty, fmt: float_ty(d.ty)? }
        }
        _ => return None,
    };
    // f32 alone is the f32 tier's (or the general path's, where that tier declines).
    let half_or_double = |ty: DataType| matches!(ty, DataType::Hf | DataType::Bf | DataType::Df);
    let dst_ty = match dst {
        Dst::Reg { ty, .. } => Some(ty),
        Dst::Pred(_) => None,
    };
    if !srcs.iter().map(|s| s.ty).chain(dst_ty).any(half_or_double) {
        return None;
    }
    let native = native_form(kind, &srcs, &dst, inst.sat, n);
    // The in-place form: a native one whose destination is a predicate or packed elements.
    let packed = match (&inst.operands[0], &native) {
        (_, None) => None,
        (Operand::Pred(p), _) => Some(InPlace::Pred(*p)),
        (Operand::Direct(d), _) => {
            let size = d.ty.size();
            (0..n).all(|l| d.region.element(l) == l).then_some(InPlace::Reg { base: d.base, size })
        }
        _ => None,
    };
    // The execution format: the widest source format (`div` rounds its inverse to it).
    let exec = srcs.iter().map(|s| s.fmt).max_by_key(|f| f.mant_bits).unwrap_or(convert::F32);
    let en = super::step::Enables::new(inst.exec, inst.pred);
    Some(LanesOp { kind, srcs, dst, sat: inst.sat, need, native, exec, packed, en })
}

/// [`Native`] for these operands, if they take it.
fn native_form(kind: Kind, srcs: &[Src], dst: &Dst, sat: bool, n: u32) -> Option<Native> {
    // div, pow and the math go lane by lane, as the general ALU defines them.
    if matches!(kind, Kind::Div | Kind::Pow | Kind::Unary | Kind::FromInt | Kind::ToInt) {
        return None;
    }
    let ty = srcs.first()?.ty;
    let dst_ty = match dst {
        Dst::Reg { ty: t, .. } => Some(*t),
        Dst::Pred(_) => None,
    };
    let convert = match (kind, ty, dst_ty) {
        (Kind::Mov, DataType::F, Some(DataType::Hf)) => Some(true),
        (Kind::Mov, DataType::Hf, Some(DataType::F)) => Some(false),
        _ => None,
    };
    let same_dst = dst_ty.is_none_or(|t| t == ty);
    if sat
        || !(same_dst || convert.is_some())
        || !matches!(ty, DataType::Df | DataType::Hf | DataType::F)
        || (ty == DataType::F && convert.is_none())
        || srcs.iter().any(|s| s.ty != ty)
    {
        return None;
    }
    let size = ty.size();
    let mut out = [(NAt::Imm(0), SrcMod::None); 3];
    for (o, s) in out.iter_mut().zip(srcs) {
        let at = match &s.at {
            At::Imm(bits) => NAt::Imm(*bits),
            At::Lanes(at) => {
                let lanes = &at[..n as usize];
                if lanes.iter().enumerate().all(|(l, &a)| a == at[0] + size * l as u32) {
                    NAt::Packed(at[0])
                } else if lanes.iter().all(|&a| a == at[0]) {
                    NAt::Scalar(at[0])
                } else {
                    return None;
                }
            }
        };
        *o = (at, s.modifier);
    }
    Some(Native { half: ty == DataType::Hf, srcs: out, convert })
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs a compiled hf/df instruction under its channel enables (`sel` under `em_part`,
    /// choosing by `pmask`). Returns false, having changed nothing, when an operand reaches
    /// past the GRF (the general path raises the fault).
    pub fn run_lanes(
        &mut self,
        inst: &Inst,
        op: &LanesOp,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<bool, FaultKind> {
        if op.need as usize > self.thread.grf.len() {
            return Ok(false);
        }
        let cr0 = self.cr0();
        let mode = RoundMode::from_cr0(cr0);
        let n = inst.exec.size;
        let enabled = (if op.kind == Kind::Sel { em_part } else { chen }) & size_mask(n);
        if let Some(native) = op.native.as_ref().filter(|_| mode == RoundMode::Rne) {
            let keep = convert::keeps_denormals(if native.half { convert::F16 } else { convert::F64 }, cr0);
            if let Some((bits, flags)) =
                native_run(&self.thread.grf, op.kind, native, n, enabled, pmask, keep)
            {
                self.write_lanes(inst, &op.dst, n, enabled, &bits, flags)?;
                return Ok(true);
            }
        }
        let grf = &self.thread.grf;
        let raw = |s: &Src, lane: usize| match &s.at {
            At::Imm(bits) => *bits,
            // A fixed-size load per type (a copy of a variable length is a memcpy call).
            At::Lanes(at) => load_le(&grf[at[lane] as usize..], s.ty.size()),
        };
        let keeps = [0, 1, 2].map(|i| op.srcs.get(i).is_some_and(|s| convert::keeps_denormals(s.fmt, cr0)));
        // Source `i`'s value as the general ALU loads it: decoded, flushed, modified.
        let value = |i: usize, lane: usize| {
            let s = &op.srcs[i];
            let v = convert::flush_in(s.fmt, s.fmt.decode(raw(s, lane)), keeps[i]);
            match s.modifier {
                SrcMod::Neg => -v,
                SrcMod::Abs => v.abs(),
                SrcMod::NegAbs => -v.abs(),
                SrcMod::None | SrcMod::Not => v,
            }
        };
        let (dst_fmt, keep) = match &op.dst {
            Dst::Reg { fmt, .. } => (*fmt, convert::keeps_denormals(*fmt, cr0)),
            Dst::Pred(_) => (convert::F64, false),
        };
        let dst_ty = match op.dst {
            Dst::Reg { ty, .. } => ty,
            Dst::Pred(_) => DataType::Bool,
        };
        // `mov`'s rule: the bits unchanged into the same format without a modifier or
        // saturation, else the value converted.
        let moved = |i: usize, lane: usize| {
            let s = &op.srcs[i];
            if s.fmt == dst_fmt && s.modifier == SrcMod::None && !op.sat {
                raw(s, lane)
            } else {
                round_lane(dst_fmt, (value(i, lane), 0), op.sat, mode, keep)
            }
        };
        let (mut bits, mut flags) = ([0u64; 32], 0u32);
        for lane in (0..n as usize).filter(|&l| enabled >> l & 1 != 0) {
            bits[lane] = match op.kind {
                Kind::Cmp(rel) => {
                    let ord = value(0, lane).partial_cmp(&value(1, lane));
                    flags |= (super::alu::relation(rel, ord) as u32) << lane;
                    0
                }
                Kind::Mov => moved(0, lane),
                Kind::FromInt => {
                    let s = &op.srcs[0];
                    let v = super::alu::int_mod(s.ty, s.modifier, super::alu::ext(s.ty, raw(s, lane)));
                    super::alu::int_to_float_lane(dst_fmt, v, op.sat, mode, keep)
                }
                Kind::ToInt => convert::float_to_int(value(0, lane), dst_ty),
                Kind::Sel => moved(usize::from(pmask >> lane & 1 == 0), lane),
                Kind::Min | Kind::Max => {
                    let first = super::alu::takes_first(value(0, lane), value(1, lane), op.kind == Kind::Max);
                    moved(usize::from(!first), lane)
                }
                kind => {
                    let mut v = [0f64; 3];
                    for (i, x) in v.iter_mut().enumerate().take(op.srcs.len()) {
                        *x = value(i, lane);
                    }
                    let r = match kind {
                        Kind::Add => math::two_sum(v[0], v[1]),
                        Kind::Mul => math::two_prod(v[0], v[1]),
                        Kind::Mad => math::fused(v[0], v[1], v[2]),
                        Kind::Divm => math::divide(v[0], v[1]),
                        Kind::Div => math::div_lane(v[0], v[1], op.exec),
                        Kind::Pow => (v[0].powf(v[1]), 0),
                        Kind::Unary => math::unary_lane(inst.op, v[0]),
                        _ => math::root(v[0]),
                    };
                    // A NaN from NaN operands is the first of them, as the general ALU has it
                    // for the arithmetic (not for sqrtm, pow or the one-source math).
                    let r = if matches!(kind, Kind::Sqrtm | Kind::Pow | Kind::Unary) {
                        r
                    } else {
                        math::first_nan(r, v.into_iter().take(op.srcs.len()))
                    };
                    round_lane(dst_fmt, r, op.sat, mode, keep)
                }
            };
        }
        self.write_lanes(inst, &op.dst, n, enabled, &bits, flags)?;
        Ok(true)
    }

    /// The native form in place, under channel enables `chen` (`sel`: under `em_part`,
    /// choosing by `pmask`): its lanes read straight from the GRF and stored straight into
    /// a packed destination or a predicate, the write reported as the general path reports
    /// it. False, with nothing done, where [`Ctx::run_lanes`] would take another form
    /// (another rounding mode, a lane the per-lane way gets right, operands past the GRF).
    // Not inlined into the burst loop: the lanes' loops inline and vectorise here.
    #[inline(never)]
    pub(super) fn run_lanes_in_place(&mut self, op: &LanesOp, chen: u32, em_part: u32, pmask: u32) -> bool {
        let (Some(dst), Some(native)) = (op.packed, op.native.as_ref()) else { return false };
        let cr0 = self.cr0();
        if RoundMode::from_cr0(cr0) != RoundMode::Rne || op.need as usize > self.thread.grf.len() {
            return false;
        }
        let keep = convert::keeps_denormals(if native.half { convert::F16 } else { convert::F64 }, cr0);
        let enabled = if op.kind == Kind::Sel { em_part } else { chen };
        match op.en.size() {
            1 => self.lanes_in_place::<1>(op, native, dst, keep, enabled, pmask),
            2 => self.lanes_in_place::<2>(op, native, dst, keep, enabled, pmask),
            4 => self.lanes_in_place::<4>(op, native, dst, keep, enabled, pmask),
            8 => self.lanes_in_place::<8>(op, native, dst, keep, enabled, pmask),
            16 => self.lanes_in_place::<16>(op, native, dst, keep, enabled, pmask),
            32 => self.lanes_in_place::<32>(op, native, dst, keep, enabled, pmask),
            _ => false,
        }
    }

    /// [`Ctx::run_lanes_in_place`] on `L` lanes.
    #[inline(always)]
    fn lanes_in_place<const L: usize>(
        &mut self,
        op: &LanesOp,
        native: &Native,
        dst: InPlace,
        keep: bool,
        enabled: u32,
        pmask: u32,
    ) -> bool {
        let enabled = enabled & size_mask(L as u32);
        let Some((bits, flags)) = native_at::<L>(&self.thread.grf, op.kind, native, enabled, pmask, keep)
        else {
            return false;
        };
        match dst {
            InPlace::Pred(p) => {
                let off = op.en.offset();
                self.write_pred(p, enabled << off, flags << off)
            }
            InPlace::Reg { base, size } => {
                let end = base + size * L as u32;
                self.keep_old(base, end);
                let bytes = &mut self.thread.grf[base as usize..end as usize];
                match size {
                    8 => super::fast::store_qwords(bytes, &bits, enabled),
                    4 => super::fast::store_lanes(bytes, &bits.map(|v| v as u32), enabled),
                    _ => super::fast::store_words(bytes, &bits.map(|v| v as u16), enabled),
                }
                self.report_written(base, end, Region::dst(1), size, L as u32, enabled);
            }
        }
        true
    }

    /// Writes the enabled lanes' results: `bits` to the destination register (through the
    /// general path's `write_dst`), or `flags` to the compare's predicate.
    fn write_lanes(
        &mut self,
        inst: &Inst,
        dst: &Dst,
        n: u32,
        enabled: u32,
        bits: &[u64; 32],
        flags: u32,
    ) -> Result<(), FaultKind> {
        match *dst {
            Dst::Pred(p) => {
                let off = inst.exec.offset.min(31);
                self.write_pred(p, enabled << off, flags << off);
            }
            Dst::Reg { .. } => self.write_dst(&inst.operands[0], 0, n, enabled, bits)?,
        }
        Ok(())
    }
}

/// The native form's results for lanes `0..n` (all of them: disabled lanes are computed
/// and not written), or None when a lane meets what only the per-lane way gets right: a NaN
/// result or source (the general ALU's NaN rules), a denormal result (cr0 may flush it), a
/// denormal source that cr0 flushes (`keep` false), an hf `mad` whose sum is inexact in f64.
/// `pmask` chooses for `sel`.
fn native_run(
    grf: &[u8],
    kind: Kind,
    op: &Native,
    n: u32,
    enabled: u32,
    pmask: u32,
    keep: bool,
) -> Option<([u64; 32], u32)> {
    #[inline(always)]
    fn widen<const L: usize>(r: Option<([u64; L], u32)>) -> Option<([u64; 32], u32)> {
        let (lanes, flags) = r?;
        let mut bits = [0u64; 32];
        bits[..L].copy_from_slice(&lanes);
        Some((bits, flags))
    }
    match n {
        1 => widen(native_at::<1>(grf, kind, op, enabled, pmask, keep)),
        2 => widen(native_at::<2>(grf, kind, op, enabled, pmask, keep)),
        4 => widen(native_at::<4>(grf, kind, op, enabled, pmask, keep)),
        8 => widen(native_at::<8>(grf, kind, op, enabled, pmask, keep)),
        16 => widen(native_at::<16>(grf, kind, op, enabled, pmask, keep)),
        32 => widen(native_at::<32>(grf, kind, op, enabled, pmask, keep)),
        _ => None,
    }
}

/// [`native_run`] on `L` lanes.
#[inline(always)]
fn native_at<const L: usize>(
    grf: &[u8],
    kind: Kind,
    op: &Native,
    enabled: u32,
    pmask: u32,
    keep: bool,
) -> Option<([u64; L], u32)> {
    if let Some(to_half) = op.convert {
        native_convert::<L>(grf, op.srcs[0], to_half, keep)
    } else if op.half {
        native_lanes::<L, true>(grf, kind, op, enabled, pmask, keep)
    } else {
        native_lanes::<L, false>(grf, kind, op, enabled, pmask, keep)
    }
}

/// `x` rounded to the nearest half, ties to even, overflowing to infinity: None where the
/// result would be a half denormal (cr0 may flush it) or `x` is a NaN. What
/// `convert::encode(F16, x, 0, Rne)` gives on the rest, without its 128-bit mantissa path
/// (which took the hf loop of `docs/design-history.md` from 114 to 201 ms).
#[inline(always)]
fn half_bits(x: f64) -> Option<u64> {
    let bits = x.to_bits();
    let sign = (bits >> 48) & 0x8000;
    let magnitude = bits & !(1 << 63);
    if magnitude == 0 {
        return Some(sign);
    }
    let e = (magnitude >> 52) as i64 - 1023 + 15;
    if e < 1 || magnitude > 0x7ff0_0000_0000_0000 {
        return None;
    }
    if e > 30 {
        return Some(sign | 0x7c00);
    }
    let kept = (e as u64) << 10 | (magnitude >> 42) & 0x3ff;
    let rest = magnitude & ((1 << 42) - 1);
    let up = rest > 1 << 41 || (rest == 1 << 41 && kept & 1 == 1);
    // A carry out of the mantissa moves to the next binade, or to infinity.
    Some(sign | (kept + u64::from(up)))
}

/// A source's `L` lanes of `fmt` bits (hf, f or df), modifier applied on the sign bit, and
/// whether any is a NaN or a denormal that cr0 flushes (`keep` false). Inlined with `fmt` a
/// constant, each format's loads and checks are its own.
#[inline(always)]
fn native_src<const L: usize>(
    grf: &[u8],
    (at, modifier): (NAt, SrcMod),
    fmt: Fmt,
    keep: bool,
) -> ([u64; L], bool) {
    let size = (1 + fmt.exp_bits + fmt.mant_bits) as usize / 8;
    let mut v = match at {
        NAt::Imm(x) => [x; L],
        NAt::Scalar(at) => [load_le(&grf[at as usize..], size as u32); L],
        NAt::Packed(at) => {
            let bytes = &grf[at as usize..at as usize + size * L];
            match size {
                2 => {
                    let (words, _) = bytes.as_chunks::<2>();
                    each_lane(|l| u64::from(u16::from_le_bytes(words[l])))
                }
                4 => {
                    let (words, _) = bytes.as_chunks::<4>();
                    each_lane(|l| u64::from(u32::from_le_bytes(words[l])))
                }
                _ => {
                    let (words, _) = bytes.as_chunks::<8>();
                    each_lane(|l| u64::from_le_bytes(words[l]))
                }
            }
        }
    };
    let sign = fmt.sign_bit();
    match modifier {
        SrcMod::Neg => v.iter_mut().for_each(|x| *x ^= sign),
        SrcMod::Abs => v.iter_mut().for_each(|x| *x &= !sign),
        SrcMod::NegAbs => v.iter_mut().for_each(|x| *x |= sign),
        SrcMod::None | SrcMod::Not => {}
    }
    let mut odd = false;
    for &x in &v {
        odd |= nan_or_denormal(fmt, x, keep);
    }
    (v, odd)
}

/// Whether `fmt` bits `x` are a NaN, or a denormal unless `keep`: on the bits without the
/// sign, above infinity's or below the least normal's but not zero (no branch, so that the
/// lanes' checks vectorise).
#[inline(always)]
fn nan_or_denormal(fmt: Fmt, x: u64, keep: bool) -> bool {
    let m = x & !fmt.sign_bit();
    let (inf, normal) = (((1 << fmt.exp_bits) - 1) << fmt.mant_bits, 1 << fmt.mant_bits);
    (m > inf) | ((m != 0) & (m < normal) & !keep)
}

/// A `mov` between hf and f on `L` lanes: half to float exactly, float to half rounded to
/// the nearest, ties to even. None on a NaN, a half denormal that cr0 flushes (`keep` false)
/// or a half denormal result.
#[inline(always)]
fn native_convert<const L: usize>(
    grf: &[u8],
    (at, modifier): (NAt, SrcMod),
    to_half: bool,
    keep: bool,
) -> Option<([u64; L], u32)> {
    let mut bits = [0u64; L];
    if !to_half {
        let (v, odd) = native_src::<L>(grf, (at, modifier), convert::F16, keep);
        if odd {
            return None;
        }
        for l in 0..L {
            bits[l] = u64::from((convert::F16.decode(v[l]) as f32).to_bits());
        }
        return Some((bits, 0));
    }
    let (v, _) = native_src::<L>(grf, (at, modifier), convert::F32, true);
    // A NaN, or a float denormal (far below half's least denormal, flushed or not), is where
    // `half_bits` declines.
    for l in 0..L {
        bits[l] = half_bits(f64::from(f32::from_bits(v[l] as u32)))?;
    }
    Some((bits, 0))
}

/// [`native_run`] on `L` lanes of halves (`HALF`) or doubles.
#[inline(always)]
fn native_lanes<const L: usize, const HALF: bool>(
    grf: &[u8],
    kind: Kind,
    op: &Native,
    enabled: u32,
    pmask: u32,
    keep: bool,
) -> Option<([u64; L], u32)> {
    let fmt = if HALF { convert::F16 } else { convert::F64 };
    let raw = |i: usize| native_src::<L>(grf, op.srcs[i], fmt, keep);
    // A double's bits are its value; a half is decoded.
    let value = |x: u64| if HALF { fmt.decode(x) } else { f64::from_bits(x) };
    let values = |v: &[u64; L]| -> [f64; L] { each_lane(|l| value(v[l])) };
    let mut bits = [0u64; L];
    let r: [f64; L] = match kind {
        // `mov` and `sel` copy the bits of unmodified sources, whatever they hold; a modified
        // source's value goes through the general ALU's rounding (NaNs, flushing).
        Kind::Mov | Kind::Sel => {
            let copies = |i: usize, odd: bool| op.srcs[i].1 == SrcMod::None || !odd;
            let (a, odd_a) = raw(0);
            let (b, odd_b) = if kind == Kind::Sel { raw(1) } else { (a, odd_a) };
            if !copies(0, odd_a) || (kind == Kind::Sel && !copies(1, odd_b)) {
                return None;
            }
            for l in 0..L {
                bits[l] = if pmask >> l & 1 != 0 || kind == Kind::Mov { a[l] } else { b[l] };
            }
            return Some((bits, 0));
        }
        _ => {
            let ((a, odd_a), (b, odd_b)) = (raw(0), raw(1));
            if odd_a || odd_b {
                return None;
            }
            let (a, b) = (values(&a), values(&b));
            match kind {
                // Exact in f64 for halves; one rounding for doubles.
                Kind::Add => each_lane(|l| a[l] + b[l]),
                Kind::Mul => each_lane(|l| a[l] * b[l]),
                Kind::Mad => {
                    let (c, odd_c) = raw(2);
                    if odd_c {
                        return None;
                    }
                    let c = values(&c);
                    if HALF {
                        // The product of halves is exact; the sum must be too.
                        let mut inexact = false;
                        let r = each_lane(|l| {
                            let (s, err) = math::two_sum(a[l] * b[l], c[l]);
                            inexact |= err != 0;
                            s
                        });
                        if inexact {
                            return None;
                        }
                        r
                    } else {
                        each_lane(|l| a[l].mul_add(b[l], c[l]))
                    }
                }
                // The IEEE macros (df only): one correctly rounded division or root.
                Kind::Divm if !HALF => each_lane(|l| a[l] / b[l]),
                Kind::Sqrtm if !HALF => each_lane(|l| a[l].sqrt()),
                Kind::Min | Kind::Max => {
                    let max = kind == Kind::Max;
                    each_lane(|l| if super::alu::takes_first(a[l], b[l], max) { a[l] } else { b[l] })
                }
                Kind::Cmp(rel) => {
                    let flags = super::fast::compare_lanes(&a, &b, rel);
                    return Some((bits, flags & enabled));
                }
                _ => return None,
            }
        }
    };
    if HALF {
        for l in 0..L {
            bits[l] = half_bits(r[l])?;
        }
    } else {
        let mut odd = false;
        for x in &r {
            odd |= nan_or_denormal(fmt, x.to_bits(), false);
        }
        if odd {
            return None;
        }
        for l in 0..L {
            bits[l] = r[l].to_bits();
        }
    }
    Some((bits, 0))
}

/// `[f(0), f(1), ..., f(L - 1)]` as one plain loop (which the compiler inlines and
/// vectorises, where `std::array::from_fn` of 16 or 32 lanes stayed a call).
#[inline(always)]
fn each_lane<const L: usize, T: Copy + Default>(mut f: impl FnMut(usize) -> T) -> [T; L] {
    let mut out = [T::default(); L];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(l);
    }
    out
}
