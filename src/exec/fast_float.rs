//! The float tier: f32 instructions compiled once, when the interpreter is built, into a
//! [`FloatOp`] (sources resolved to per-lane GRF byte offsets or a splat, the operation and
//! the conversion chosen; a packed op's lane work a function specialised for its kind and
//! exec size), and run on native f32 lanes: add, mul, mad, div, pow, min/max,
//! sel, cmp, mov between f32 and integers, and the one-source math
//! (inv, log, exp, sqrt, rsqrt, sin, cos, frc, rnd*).
//!
//! Native f32 add, mul, fma, division and square root are correctly rounded to nearest, which
//! is what the general ALU (`alu.rs`, the oracle) computes in the default rounding mode. Under
//! another cr0 rounding mode the ops that the mode changes are computed lane by lane with the
//! oracle's own definitions (the exact value and the sign of its residual) and rounded once
//! by the mode. The transcendentals call the same f64 functions as the oracle and round once.
//! Denormals are flushed in and out per cr0, NaN results are quiet, as the oracle's. A
//! generated test (`tests/it/fastpath.rs`) compares the two paths bit for bit.

use super::convert::{self, RoundMode};
use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{
    CondMod, DataType, DirectOperand, IndirectOperand, Opcode, Operand, PredId, Region, SrcMod, SubOp,
};
use crate::program::Inst;

/// What a float op computes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatKind {
    /// f32 to f32 (a raw copy without modifier or saturation, as `mov`'s rule says).
    Mov,
    /// An integer to f32 (round to nearest even, once).
    FromInt(DataType),
    /// f32 to an integer (toward zero, saturating; NaN gives 0).
    ToInt(DataType),
    Add,
    Mul,
    Mad,
    Div,
    Pow,
    Min,
    Max,
    Sel,
    Cmp(CondMod),
    Inv,
    Log,
    Exp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Frc,
    Rndd,
    Rndu,
    Rnde,
    Rndz,
}

/// A source of a float op.
#[derive(Clone, Debug)]
enum FSrc {
    /// An immediate's raw bits (every lane).
    Imm(u32),
    /// One element for every lane (`<0;1,0>`): its GRF byte offset.
    Scalar(u32, SrcMod),
    /// Packed elements from a GRF byte offset.
    Packed(u32, SrcMod),
    /// Any other region: each lane's GRF byte offset.
    Gather(Box<[u32; 32]>, SrcMod),
}

/// A packed, scalar or immediate f32 source as the kernels read it, without a branch on
/// its form: every lane loads `L` packed words at `packed` and the one value (the word at
/// `one`, or `imm`), and takes the one value where `splat` is all ones; then the modifier as
/// an AND and an XOR. Offsets a form does not use are 0 (in every file's bounds).
#[derive(Clone, Copy, Debug, Default)]
struct LaneSrc {
    packed: u32,
    one: u32,
    /// All ones where the one value is the immediate.
    is_imm: u32,
    imm: u32,
    splat: u32,
    and: u32,
    xor: u32,
}

impl LaneSrc {
    /// `s` (not a gather) in this form.
    fn of(s: &FSrc) -> LaneSrc {
        let (and, xor) = modifier_masks(modifier(s));
        let plain = LaneSrc { and, xor, ..LaneSrc::default() };
        match s {
            FSrc::Imm(bits) => LaneSrc { is_imm: u32::MAX, imm: *bits, splat: u32::MAX, ..plain },
            FSrc::Scalar(at, _) => LaneSrc { one: *at, splat: u32::MAX, ..plain },
            FSrc::Packed(at, _) => LaneSrc { packed: *at, ..plain },
            FSrc::Gather(..) => plain,
        }
    }

    /// An immediate's bits.
    fn imm(bits: u32) -> LaneSrc {
        LaneSrc::of(&FSrc::Imm(bits))
    }

    /// `L` lanes as stored (no flush, no modifier).
    #[inline(always)]
    fn raw<const L: usize>(&self, grf: &[u8]) -> [u32; L] {
        let one = element(grf, self.one as usize, 4) & !self.is_imm | self.imm & self.is_imm;
        let at = self.packed as usize;
        let (words, _) = grf[at..at + 4 * L].as_chunks::<4>();
        let mut out = [0u32; L];
        for (o, w) in out.iter_mut().zip(words) {
            *o = u32::from_le_bytes(*w) & !self.splat | one & self.splat;
        }
        out
    }

    /// `L` lanes as values: flushed (unless denormals are kept), then modified.
    #[inline(always)]
    fn values<const L: usize>(&self, grf: &[u8], keep: bool) -> [f32; L] {
        let (raw, flush) = (self.raw::<L>(grf), flushing(keep));
        let mut out = [0f32; L];
        for (o, r) in out.iter_mut().zip(raw) {
            *o = f32::from_bits((flushed(r, flush) & self.and) ^ self.xor);
        }
        out
    }
}

/// Where a float op's result goes.
#[derive(Clone, Debug)]
enum FDst {
    Reg,
    Pred(PredId),
}

/// Where the in-place form writes.
#[derive(Copy, Clone, Debug)]
enum InPlace {
    /// Packed f32 from this GRF offset.
    Reg(u32),
    /// A compare's flags.
    Pred(PredId),
    /// A conversion's integers of `size` bytes, lane i at `base + i · size · stride`.
    Int { base: u32, size: u32, stride: u32 },
}

/// One compiled float instruction.
#[derive(Clone, Debug)]
pub struct FloatOp {
    kind: FloatKind,
    /// The instruction's opcode (the one-source math's lane function).
    opcode: Opcode,
    srcs: [FSrc; 3],
    dst: FDst,
    sat: bool,
    /// The GRF bytes the sources reach (each source lies below this offset).
    need: u32,
    /// For an op on f32 values only (every kind but the conversions) of 8, 16 or 32 lanes,
    /// from packed, scalar or immediate sources into packed f32 or a predicate: the in-place
    /// form ([`Ctx::run_float_packed`]), with its lane work specialised for its kind and exec
    /// size ([`float_kernel`]).
    packed: Option<(InPlace, FloatKernel)>,
    /// The sources as the kernel reads them ([`LaneSrc`]): add and mul as `mad`'s three,
    /// `a · 1 + b` and `a · b + (-0)`, which round the same (one kernel for the three: a
    /// real kernel mixes them, and a call target that changes from step to step is a
    /// mispredicted branch).
    lane_srcs: [LaneSrc; 3],
    /// The sources read through address registers, by position (their `srcs` entries are
    /// gathers whose lanes' offsets are found, and checked, when the op runs).
    indirect: Option<Box<[Option<IndirectOperand>; 3]>>,
    /// Its lanes, channel offset and predicate, for a burst's in-place form.
    pub(super) en: super::step::Enables,
}

const SIGN: u32 = 0x8000_0000;
const QUIET: u32 = 0x0040_0000;
const EXP: u32 = 0x7f80_0000;

/// A source modifier as an AND then an XOR of the sign bit (`not` has no meaning on floats).
#[inline(always)]
fn modifier_masks(m: SrcMod) -> (u32, u32) {
    match m {
        SrcMod::None | SrcMod::Not => (u32::MAX, 0),
        SrcMod::Neg => (u32::MAX, SIGN),
        SrcMod::Abs => (!SIGN, 0),
        SrcMod::NegAbs => (!SIGN, SIGN),
    }
}

/// A source value: flushed if denormals are not kept, then the modifier.
#[inline(always)]
fn value(raw: u32, modifier: SrcMod, keep: bool) -> f32 {
    let (and, xor) = modifier_masks(modifier);
    f32::from_bits((flushed(raw, flushing(keep)) & and) ^ xor)
}

/// Saturation to [0, 1]: `max` gives 0 for NaN, `+ 0.0` makes -0 +0 (without branches on
/// the value, so that lane loops vectorise).
#[inline(always)]
#[allow(clippy::manual_clamp)] // `clamp` keeps a NaN; saturation makes it 0.
fn saturated(v: f32) -> f32 {
    v.max(0.0).min(1.0) + 0.0
}

/// A result's bits: saturation to [0, 1] (NaN gives 0), quiet NaNs, flushed denormals.
#[inline(always)]
fn result(v: f32, sat: bool, keep: bool) -> u32 {
    result_bits(if sat { saturated(v) } else { v }.to_bits(), flushing(keep))
}

/// All ones where `c` holds: the lane masks the in-place kernels compute with, so that their
/// lane loops have no branch on a value and vectorise.
#[inline(always)]
fn ones(c: bool) -> u32 {
    0u32.wrapping_sub(c as u32)
}

/// The mask that turns flushing on: all ones unless denormals are kept.
#[inline(always)]
fn flushing(keep: bool) -> u32 {
    ones(!keep)
}

/// f32 bits with a denormal (or a zero: the same) flushed to its sign where `flush` is all
/// ones.
#[inline(always)]
fn flushed(bits: u32, flush: u32) -> u32 {
    bits & !(ones(bits & EXP == 0) & flush & !SIGN)
}

/// A result's bits without saturation: a NaN quieted, a denormal flushed under `flush`.
#[inline(always)]
fn result_bits(bits: u32, flush: u32) -> u32 {
    flushed(bits, flush) | (ones(bits & !SIGN > EXP) & QUIET)
}

/// [`result`] of `L` lanes: saturated (when `sat`) in one pass, their bits in another.
#[inline(always)]
fn results<const L: usize>(mut v: [f32; L], sat: bool, keep: bool) -> [u32; L] {
    if sat {
        for x in &mut v {
            *x = saturated(*x);
        }
    }
    let (flush, mut r) = (flushing(keep), [0; L]);
    for (o, x) in r.iter_mut().zip(v) {
        *o = result_bits(x.to_bits(), flush);
    }
    r
}

/// The kind of a float instruction (all sources and the destination f32, or a `mov`
/// converting between f32 and an integer), if the tier runs it.
fn kind_of(inst: &Inst, dst: Option<DataType>, srcs: &[DataType]) -> Option<FloatKind> {
    use FloatKind as K;
    let all_f = srcs.iter().all(|&t| t == DataType::F);
    let f_dst = dst == Some(DataType::F);
    let kind = match (inst.op, &inst.sub) {
        (Opcode::Mov, _) => {
            return match (srcs.first().copied()?, dst?) {
                (DataType::F, DataType::F) => Some(K::Mov),
                (DataType::F, to) if super::fast::int_ty(to) => Some(K::ToInt(to)),
                (from, DataType::F) if super::fast::int_ty(from) => Some(K::FromInt(from)),
                _ => None,
            };
        }
        // A compare's destination holds all-ones or zero of its type: any 32-bit one.
        (Opcode::Cmp, SubOp::Cond(c)) if all_f && dst.is_none_or(|t| t.size() == 4) && !inst.sat => {
            return Some(K::Cmp(*c));
        }
        (Opcode::Add, _) => K::Add,
        (Opcode::Mul, _) => K::Mul,
        (Opcode::Mad, _) => K::Mad,
        (Opcode::Div, _) => K::Div,
        (Opcode::Pow, _) => K::Pow,
        (Opcode::Min, _) => K::Min,
        (Opcode::Max, _) => K::Max,
        (Opcode::Sel, _) => K::Sel,
        (Opcode::Inv, _) => K::Inv,
        (Opcode::Log, _) => K::Log,
        (Opcode::Exp, _) => K::Exp,
        (Opcode::Sqrt, _) => K::Sqrt,
        (Opcode::Rsqrt, _) => K::Rsqrt,
        (Opcode::Sin, _) => K::Sin,
        (Opcode::Cos, _) => K::Cos,
        (Opcode::Frc, _) => K::Frc,
        (Opcode::Rndd, _) => K::Rndd,
        (Opcode::Rndu, _) => K::Rndu,
        (Opcode::Rnde, _) => K::Rnde,
        (Opcode::Rndz, _) => K::Rndz,
        _ => return None,
    };
    (all_f && f_dst).then_some(kind)
}

/// Number of sources of `kind`.
fn arity(kind: FloatKind) -> usize {
    use FloatKind as K;
    match kind {
        K::Mad => 3,
        K::Add | K::Mul | K::Div | K::Pow | K::Min | K::Max | K::Sel | K::Cmp(_) => 2,
        _ => 1,
    }
}

/// The float form of `inst`, if it has one.
pub fn compile(inst: &Inst) -> Option<FloatOp> {
    let n = inst.exec.size;
    let (dst, dst_ty) = match inst.operands.first()? {
        Operand::Pred(p) if inst.op == Opcode::Cmp => (FDst::Pred(*p), None),
        Operand::Direct(DirectOperand { is_null: false, ty, .. }) => (FDst::Reg, Some(*ty)),
        // Written through the general operand path, which finds and checks each lane's address.
        Operand::Indirect(ind) => (FDst::Reg, Some(ind.ty)),
        _ => return None,
    };
    let src_ops = &inst.operands[1..];
    let mut srcs = [FSrc::Imm(0), FSrc::Imm(0), FSrc::Imm(0)];
    let mut types = Vec::with_capacity(3);
    let mut need = 0u32;
    let mut indirect: [Option<IndirectOperand>; 3] = [None, None, None];
    for (i, (slot, op)) in srcs.iter_mut().zip(src_ops).enumerate() {
        let ty = match op {
            Operand::Indirect(ind) if ind.ty.size() <= 4 => {
                *slot = FSrc::Gather(Box::new([0; 32]), ind.modifier);
                indirect[i] = Some(ind.clone());
                ind.ty
            }
            Operand::Imm(imm) if imm.ty.size() <= 4 && !imm.ty.is_packed_vector() => {
                *slot = FSrc::Imm(imm.bits as u32);
                imm.ty
            }
            // Eight-byte registers only as the source of a conversion to f32 (checked below).
            Operand::Direct(d) if !d.is_null && d.ty.size() <= 8 => {
                let size = d.ty.size();
                let mut at = [0u32; 32];
                for (lane, a) in at.iter_mut().enumerate().take(n as usize) {
                    *a = d.base + d.region.element(lane as u32) * size;
                    need = need.max(*a + size);
                }
                *slot = if at[..n as usize].iter().all(|&a| a == d.base) {
                    FSrc::Scalar(d.base, d.modifier)
                } else if at[..n as usize].iter().enumerate().all(|(i, &a)| a == d.base + i as u32 * size) {
                    FSrc::Packed(d.base, d.modifier)
                } else {
                    FSrc::Gather(Box::new(at), d.modifier)
                };
                d.ty
            }
            _ => return None,
        };
        types.push(ty);
    }
    let kind = kind_of(inst, dst_ty, &types)?;
    if src_ops.len() != arity(kind)
        || types.iter().any(|t| t.size() == 8) && !matches!(kind, FloatKind::FromInt(_))
    {
        return None;
    }
    // Integer sources take no `(~)`; f32 ones no `(~)` either (the general ALU decides).
    if srcs.iter().any(|s| modifier(s) == SrcMod::Not) {
        return None;
    }
    let in_place_kind = match kind {
        FloatKind::FromInt(ty) => ty.size() <= 4,
        FloatKind::ToInt(ty) => ty.size() <= 4,
        _ => true,
    };
    let in_place_srcs = matches!(n, 8 | 16 | 32) && srcs.iter().all(|s| !matches!(s, FSrc::Gather(..)));
    let packed = match (&inst.operands[0], &dst) {
        _ if !(in_place_kind && in_place_srcs) => None,
        (Operand::Direct(d), FDst::Reg)
            if matches!(kind, FloatKind::ToInt(ty) if ty == d.ty)
                && d.region.width == 1
                && d.region.vstride > 0 =>
        {
            let (size, stride) = (d.ty.size(), d.region.vstride as u32);
            need = need.max(d.base + size * (stride * (n - 1) + 1));
            Some(InPlace::Int { base: d.base, size, stride })
        }
        (Operand::Direct(d), FDst::Reg) if d.region == Region::dst(1) && d.ty == DataType::F => {
            need = need.max(d.base + 4 * n);
            Some(InPlace::Reg(d.base))
        }
        (_, FDst::Pred(p)) => Some(InPlace::Pred(*p)),
        _ => None,
    };
    let packed = packed.and_then(|dst| Some((dst, kernel_for(kind, n)?)));
    // The kernels' loads: a form's unused offsets are 0, so every file must hold 4n bytes.
    need = need.max(4 * n);
    let [a, b, c] = [0, 1, 2].map(|k| LaneSrc::of(&srcs[k]));
    let lane_srcs = match kind {
        FloatKind::Add => [a, LaneSrc::imm(1f32.to_bits()), b],
        FloatKind::Mul => [a, b, LaneSrc::imm((-0f32).to_bits())],
        _ => [a, b, c],
    };
    let indirect = indirect.iter().any(Option::is_some).then(|| Box::new(indirect));
    let en = super::step::Enables::new(inst.exec, inst.pred);
    Some(FloatOp { kind, opcode: inst.op, srcs, dst, sat: inst.sat, need, packed, lane_srcs, indirect, en })
}

/// Whether the rounding mode leaves `kind`'s results as they are: moves, choices, compares,
/// the rnd ops, conversions to integers (which truncate).
fn exact_in_any_mode(kind: FloatKind) -> bool {
    use FloatKind as K;
    matches!(
        kind,
        K::Mov | K::Sel | K::Min | K::Max | K::Cmp(_) | K::ToInt(_) | K::Rndd | K::Rndu | K::Rnde | K::Rndz
    )
}

/// One element of `size` bytes at `at`, zero-extended (the caller checked the bounds).
#[inline(always)]
fn element(grf: &[u8], at: usize, size: u32) -> u32 {
    match size {
        1 => grf[at] as u32,
        2 => u16::from_le_bytes([grf[at], grf[at + 1]]) as u32,
        _ => {
            let mut w = [0u8; 4];
            w.copy_from_slice(&grf[at..at + 4]);
            u32::from_le_bytes(w)
        }
    }
}

/// Lane `lane` of an eight-byte register source (the caller checked the bounds).
fn wide_element(grf: &[u8], s: &FSrc, lane: usize) -> u64 {
    let at = match s {
        FSrc::Imm(_) => return 0,
        FSrc::Scalar(at, _) => *at as usize,
        FSrc::Packed(at, _) => *at as usize + 8 * lane,
        FSrc::Gather(at, _) => at[lane] as usize,
    };
    let mut b = [0u8; 8];
    b.copy_from_slice(&grf[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Lanes `0..n` of a source as raw 32-bit elements (narrower types zero-extended).
#[inline(always)]
fn raw_lanes(grf: &[u8], s: &FSrc, size: u32, n: usize) -> [u32; 32] {
    let mut out = [0u32; 32];
    match s {
        FSrc::Imm(bits) => out[..n].fill(*bits),
        FSrc::Scalar(at, _) => out[..n].fill(element(grf, *at as usize, size)),
        FSrc::Packed(at, _) if size == 4 => {
            let at = *at as usize;
            for (o, c) in out.iter_mut().zip(grf[at..at + 4 * n].chunks_exact(4)) {
                *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        FSrc::Packed(at, _) => {
            for (i, o) in out.iter_mut().enumerate().take(n) {
                *o = element(grf, *at as usize + i * size as usize, size);
            }
        }
        FSrc::Gather(at, _) => {
            for (o, &a) in out.iter_mut().zip(at.iter()).take(n) {
                *o = element(grf, a as usize, size);
            }
        }
    }
    out
}

fn modifier(s: &FSrc) -> SrcMod {
    match s {
        FSrc::Imm(_) => SrcMod::None,
        FSrc::Scalar(_, m) | FSrc::Packed(_, m) | FSrc::Gather(_, m) => *m,
    }
}

/// f32 lanes of a source: flushed, modifier applied.
#[inline(always)]
fn f32_lanes(raw: &[u32; 32], m: SrcMod, keep: bool, n: usize) -> [f32; 32] {
    let mut out = [0f32; 32];
    for (o, &r) in out.iter_mut().zip(raw).take(n) {
        *o = value(r, m, keep);
    }
    out
}

/// Lane-wise `f` of one source.
#[inline(always)]
fn map1(n: usize, a: &[f32; 32], r: &mut [u32; 32], sat: bool, keep: bool, f: impl Fn(f32) -> f32) {
    for (o, &x) in r.iter_mut().zip(a).take(n) {
        *o = result(f(x), sat, keep);
    }
}

/// An arithmetic result `v` of sources `srcs`: when it is NaN and a source is, the first
/// NaN source (quieted by [`result`]), as the general ALU picks it; the hardware's choice
/// between two NaN operands is not left to the order the compiler gives them.
#[inline(always)]
fn first_nan(v: f32, srcs: [f32; 3]) -> f32 {
    if v.is_nan() {
        srcs.into_iter().find(|s| s.is_nan()).unwrap_or(v)
    } else {
        v
    }
}

/// Lane-wise `f` of two sources.
#[inline(always)]
fn map2(
    n: usize,
    a: &[f32; 32],
    b: &[f32; 32],
    r: &mut [u32; 32],
    sat: bool,
    keep: bool,
    f: impl Fn(f32, f32) -> f32,
) {
    for ((o, &x), &y) in r.iter_mut().zip(a).zip(b).take(n) {
        *o = result(f(x, y), sat, keep);
    }
}

/// `x` in f64, NaN payloads kept bit for bit (a signalling NaN stays signalling, as the
/// general ALU's decoding keeps it; `as f64` would quiet it, and `pow(1, y)` tells them apart).
#[inline(always)]
fn wide(x: f32) -> f64 {
    if x.is_nan() {
        let b = x.to_bits() as u64;
        f64::from_bits((b & 0x8000_0000) << 32 | 0x7ff << 52 | (b & 0x7f_ffff) << 29)
    } else {
        x as f64
    }
}

/// A one-source op computed in f64 as the general ALU computes it, rounded once to f32.
#[inline(always)]
fn via_f64(x: f32, f: impl Fn(f64) -> f64) -> f32 {
    f(wide(x)) as f32
}

/// `min`/`max` choice (MIN_MAX.md), as the general ALU makes it: true where src0 is chosen.
/// The same rule as `alu::takes_first`, on f32 and without a branch on the values (one NaN
/// gives the other operand, two give src1, -0 is below +0), so that lane loops vectorise.
#[inline(always)]
fn takes_first(x: f32, y: f32, want_max: bool) -> bool {
    let (x_nan, y_nan) = (x.is_nan(), y.is_nan());
    let by_value = if x == y { x.is_sign_negative() != want_max } else { (x > y) == want_max };
    if x_nan | y_nan {
        !x_nan
    } else {
        by_value
    }
}

/// A compare relation on two f32 values (NaN: only `ne` holds; -0 == +0).
#[inline(always)]
fn relation(rel: CondMod, x: f32, y: f32) -> bool {
    match rel {
        CondMod::Eq => x == y,
        CondMod::Ne => x != y,
        CondMod::Lt => x < y,
        CondMod::Le => x <= y,
        CondMod::Gt => x > y,
        CondMod::Ge => x >= y,
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// The packed form of `op` in place, under channel enables `chen` (EM part `em_part`,
    /// predicate mask `pmask`): false, with nothing done, where `run_float` would take
    /// another form (a conversion from an integer under another rounding mode, a file
    /// shorter than its operands, no packed form).
    #[inline(always)]
    pub(super) fn run_float_in_place(&mut self, op: &FloatOp, chen: u32, em_part: u32, pmask: u32) -> bool {
        let Some(packed) = op.packed else { return false };
        let cr0 = self.cr0();
        // Under another rounding mode (IGC divides integers on Xe with f32 ops under round
        // toward zero), the ops it changes are rounded lane by lane, conversions apart.
        let mode = RoundMode::from_cr0(cr0);
        let directed = (mode != RoundMode::Rne && !exact_in_any_mode(op.kind)).then_some(mode);
        if directed.is_some() && matches!(op.kind, FloatKind::FromInt(_))
            || op.need as usize > self.thread.grf.len()
        {
            return false;
        }
        // No lane enabled: nothing to compute or store (`sel` writes the lanes of the
        // execution mask whatever its predicate, so it runs).
        if chen == 0 && op.kind != FloatKind::Sel && matches!(op.en.size(), 8 | 16 | 32) {
            return true;
        }
        let keep = cr0 & (1 << 7) != 0;
        let off = op.en.offset();
        match op.en.size() {
            8 => self.run_float_packed::<8>(op, packed, keep, directed, chen, em_part, pmask, off),
            16 => self.run_float_packed::<16>(op, packed, keep, directed, chen, em_part, pmask, off),
            32 => self.run_float_packed::<32>(op, packed, keep, directed, chen, em_part, pmask, off),
            _ => return false,
        }
        true
    }

    /// Runs a float op under its channel enables (`em_part` and `pmask` are their halves:
    /// `sel` chooses by the predicate). Returns false, having changed nothing, where an
    /// operand lies outside the GRF (the general path raises the fault).
    pub fn run_float(
        &mut self,
        inst: &Inst,
        op: &FloatOp,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<bool, FaultKind> {
        use FloatKind as K;
        if self.run_float_in_place(op, chen, em_part, pmask) {
            return Ok(true);
        }
        let cr0 = self.cr0();
        let mode = RoundMode::from_cr0(cr0);
        // Under another rounding mode: the ops whose results it does not change (moves,
        // choices, compares, the rnd ops, conversions to integers, which truncate) as they
        // are, every other one lane by lane, rounded by the mode (`directed`).
        let directed = mode != RoundMode::Rne && !exact_in_any_mode(op.kind);
        if op.need as usize > self.thread.grf.len() {
            return Ok(false);
        }
        let keep = cr0 & (1 << 7) != 0;
        let n = inst.exec.size.min(32) as usize;
        // Each indirect source's lanes: every lane's address checked, in operand order, as
        // the general path reads them.
        let mut offsets = [[0u32; 32]; 3];
        for (i, ind) in op.indirect.iter().flat_map(|x| x.iter().enumerate()) {
            if let Some(ind) = ind {
                self.indirect_offsets(ind, i + 1, n as u32, &mut offsets[i])?;
            }
        }
        let grf = &self.thread.grf;
        let size_of = |i: usize| match (op.kind, i) {
            (FloatKind::FromInt(ty), 0) => ty.size(),
            _ => 4,
        };
        let raw: [[u32; 32]; 3] = std::array::from_fn(|i| {
            match (i < arity(op.kind), op.indirect.as_ref().is_some_and(|x| x[i].is_some())) {
                (false, _) => [0; 32],
                (true, false) => raw_lanes(grf, &op.srcs[i], size_of(i), n),
                (true, true) => {
                    let mut out = [0u32; 32];
                    for (o, &a) in out.iter_mut().zip(&offsets[i]).take(n) {
                        *o = element(grf, a as usize, size_of(i));
                    }
                    out
                }
            }
        });
        let mods = [modifier(&op.srcs[0]), modifier(&op.srcs[1]), modifier(&op.srcs[2])];
        let (sat, mut enabled) = (op.sat, chen);
        let mut r = [0u32; 32];
        match op.kind {
            K::FromInt(ty) => {
                for (l, o) in r.iter_mut().enumerate().take(n) {
                    // Exact before the one rounding (in i128: a negated q minimum, a uq above
                    // 2^63). A value that fits i64 converts natively to nearest; the others,
                    // and every value under another rounding mode, as the general ALU does.
                    let v = match ty {
                        DataType::Q => with_mod(wide_element(grf, &op.srcs[0], l) as i64 as i128, mods[0]),
                        DataType::Uq => with_mod(wide_element(grf, &op.srcs[0], l) as i128, mods[0]),
                        _ => with_mod(super::fast::sign_extend(ty, raw[0][l] as u64), mods[0]) as i128,
                    };
                    let v = match (directed, i64::try_from(v)) {
                        (false, Ok(v)) => v as f32,
                        _ => f32::from_bits(convert::int_to_float(convert::F32, v, mode) as u32),
                    };
                    *o = result(v, sat, keep);
                }
            }
            K::ToInt(ty) => {
                let a = f32_lanes(&raw[0], mods[0], keep, n);
                let mut values = [0u64; 32];
                for (o, &x) in values.iter_mut().zip(&a).take(n) {
                    *o = to_int(ty, x);
                }
                self.write_dst(&inst.operands[0], 0, n as u32, enabled, &values)?;
                return Ok(true);
            }
            K::Mov | K::Sel | K::Min | K::Max => {
                let first = match op.kind {
                    K::Mov => u32::MAX,
                    K::Sel => {
                        enabled = em_part;
                        pmask
                    }
                    _ => {
                        let a = f32_lanes(&raw[0], mods[0], keep, n);
                        let b = f32_lanes(&raw[1], mods[1], keep, n);
                        let mut take = 0u32;
                        for (l, (&x, &y)) in a.iter().zip(&b).take(n).enumerate() {
                            take |= (takes_first(x, y, op.kind == K::Max) as u32) << l;
                        }
                        take
                    }
                };
                // The chosen source moves by `mov`'s rule: its bits unchanged without a
                // modifier or saturation, else converted (flushed, quieted, saturated).
                for (l, o) in r.iter_mut().enumerate().take(n) {
                    let i = usize::from(first >> l & 1 == 0);
                    let bits = raw[i][l];
                    *o = if mods[i] == SrcMod::None && !sat {
                        bits
                    } else {
                        result(value(bits, mods[i], keep), sat, keep)
                    };
                }
            }
            K::Cmp(rel) => {
                let a = f32_lanes(&raw[0], mods[0], keep, n);
                let b = f32_lanes(&raw[1], mods[1], keep, n);
                let mut flags = 0u32;
                for (l, (&x, &y)) in a.iter().zip(&b).take(n).enumerate() {
                    flags |= (relation(rel, x, y) as u32) << l;
                }
                if let FDst::Pred(p) = op.dst {
                    let off = inst.exec.offset.min(31);
                    self.write_pred(p, chen << off, flags << off);
                    return Ok(true);
                }
                for (l, o) in r.iter_mut().enumerate().take(n) {
                    *o = 0u32.wrapping_sub(flags >> l & 1);
                }
            }
            kind if directed => {
                let [a, b, c] = [0, 1, 2].map(|i| f32_lanes(&raw[i], mods[i], keep, n));
                for (l, o) in r.iter_mut().enumerate().take(n) {
                    *o = directed_f32(kind, inst.op, [a[l], b[l], c[l]], mode, sat, keep);
                }
            }
            kind => {
                let a = f32_lanes(&raw[0], mods[0], keep, n);
                let b = f32_lanes(&raw[1], mods[1], keep, n);
                match kind {
                    K::Add => map2(n, &a, &b, &mut r, sat, keep, |x, y| first_nan(x + y, [x, y, 0.0])),
                    K::Mul => map2(n, &a, &b, &mut r, sat, keep, |x, y| first_nan(x * y, [x, y, 0.0])),
                    K::Mad => {
                        let c = f32_lanes(&raw[2], mods[2], keep, n);
                        for (l, o) in r.iter_mut().enumerate().take(n) {
                            let v = a[l].mul_add(b[l], c[l]);
                            *o = result(first_nan(v, [a[l], b[l], c[l]]), sat, keep);
                        }
                    }
                    // DIV.md: x · INV(y), the inverse rounded to f32 first.
                    K::Div => {
                        map2(n, &a, &b, &mut r, sat, keep, |x, y| first_nan(x * (1.0 / y), [x, y, 0.0]))
                    }
                    K::Pow => map2(n, &a, &b, &mut r, sat, keep, |x, y| wide(x).powf(wide(y)) as f32),
                    K::Inv => map1(n, &a, &mut r, sat, keep, |x| 1.0 / x),
                    K::Sqrt => map1(n, &a, &mut r, sat, keep, f32::sqrt),
                    K::Log => map1(n, &a, &mut r, sat, keep, |x| via_f64(x, f64::log2)),
                    K::Exp => map1(n, &a, &mut r, sat, keep, |x| via_f64(x, f64::exp2)),
                    K::Rsqrt => map1(n, &a, &mut r, sat, keep, |x| via_f64(x, |v| 1.0 / v.sqrt())),
                    K::Sin => map1(n, &a, &mut r, sat, keep, |x| via_f64(x, f64::sin)),
                    K::Cos => map1(n, &a, &mut r, sat, keep, |x| via_f64(x, f64::cos)),
                    K::Frc => map1(n, &a, &mut r, sat, keep, |x| x - x.floor()),
                    K::Rndd => map1(n, &a, &mut r, sat, keep, f32::floor),
                    K::Rndu => map1(n, &a, &mut r, sat, keep, f32::ceil),
                    K::Rnde => map1(n, &a, &mut r, sat, keep, f32::round_ties_even),
                    _ => map1(n, &a, &mut r, sat, keep, f32::trunc),
                }
            }
        }
        let mut values = [0u64; 32];
        for (v, &x) in values.iter_mut().zip(&r).take(n) {
            *v = x as u64;
        }
        self.write_dst(&inst.operands[0], 0, n as u32, enabled, &values)?;
        Ok(true)
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// The in-place form ([`FloatOp::packed`]): the op's kernel reads its `L` lanes straight
    /// from the GRF, computes them and blends them into the destination, and the write is
    /// reported as the general path reports it; a compare's flags go to its predicate at the
    /// mask offset `off`. Under `directed`, a rounding mode other than to nearest, each lane
    /// is rounded as the general path rounds it. The caller checked the bounds (`need`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run_float_packed<const L: usize>(
        &mut self,
        op: &FloatOp,
        (dst, kernel): (InPlace, FloatKernel),
        keep: bool,
        directed: Option<RoundMode>,
        chen: u32,
        em_part: u32,
        pmask: u32,
        off: u32,
    ) {
        let size_mask = super::control::size_mask(L as u32);
        if let Some(mode) = directed {
            // Only ops with an f32 destination are rounded.
            let InPlace::Reg(base) = dst else { return };
            let grf = &self.thread.grf;
            let [a, b, c] = [0, 1, 2].map(|k| {
                if k < arity(op.kind) {
                    LaneSrc::of(&op.srcs[k]).values::<L>(grf, keep)
                } else {
                    [0.0; L]
                }
            });
            let mut r = [0u32; L];
            for i in 0..L {
                r[i] = directed_f32(op.kind, op.opcode, [a[i], b[i], c[i]], mode, op.sat, keep);
            }
            return self.put_dwords(base, &r, chen & size_mask);
        }
        let enabled = if op.kind == FloatKind::Sel { em_part } else { chen } & size_mask;
        let (first, end, region, size) = match dst {
            InPlace::Pred(p) => {
                if let Some(flags) = kernel(&mut self.thread.grf, op, keep, chen, em_part, pmask) {
                    self.write_pred(p, enabled << off, flags << off);
                }
                return;
            }
            InPlace::Reg(base) => (base, base + 4 * L as u32, Region::dst(1), 4),
            InPlace::Int { base, size, stride } => {
                (base, base + size * (stride * (L as u32 - 1) + 1), Region::dst(stride as u8), size)
            }
        };
        self.keep_old(first, end);
        kernel(&mut self.thread.grf, op, keep, chen, em_part, pmask);
        self.report_written(first, end, region, size, L as u32, enabled);
    }
}

/// A packed f32 op's lane work, compiled once per kind and exec size ([`float_kernel`]):
/// (GRF, op, denormals kept, chen, em_part, pmask), a compare's flags when its destination is
/// a predicate.
type FloatKernel = fn(&mut [u8], &FloatOp, bool, u32, u32, u32) -> Option<u32>;

/// The kinds a [`FloatKernel`] is specialised for, by code (the index here); a kind's
/// operand (a compare's relation, a conversion's integer type) is read from the op.
/// Add and mul run as `mad` ([`FloatOp::lane_srcs`]).
const KINDS: [FloatKind; 22] = {
    use FloatKind as F;
    [
        F::Mov,
        F::FromInt(DataType::D),
        F::ToInt(DataType::D),
        F::Mad,
        F::Div,
        F::Pow,
        F::Min,
        F::Max,
        F::Sel,
        F::Cmp(CondMod::Eq),
        F::Inv,
        F::Log,
        F::Exp,
        F::Sqrt,
        F::Rsqrt,
        F::Sin,
        F::Cos,
        F::Frc,
        F::Rndd,
        F::Rndu,
        F::Rnde,
        F::Rndz,
    ]
};

/// The kernel of `kind` on `n` lanes (8, 16 or 32).
fn kernel_for(kind: FloatKind, n: u32) -> Option<FloatKernel> {
    fn sized<const K: u8>(n: u32) -> Option<FloatKernel> {
        match n {
            8 => Some(float_kernel::<8, K>),
            16 => Some(float_kernel::<16, K>),
            32 => Some(float_kernel::<32, K>),
            _ => None,
        }
    }
    let kind = if matches!(kind, FloatKind::Add | FloatKind::Mul) { FloatKind::Mad } else { kind };
    let code = KINDS.iter().position(|k| std::mem::discriminant(k) == std::mem::discriminant(&kind))?;
    super::fast::kernel_of_code!(sized, code, n; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; 21)
}

/// The lane work of a packed f32 op of kind `KINDS[K]` on `L` lanes: its sources read from
/// the GRF (flushed, modified), its lanes computed and blended into its destination under
/// the channel enables (`sel`: under `em_part`, choosing by `pmask`). A compare into a
/// predicate returns its flags instead.
fn float_kernel<const L: usize, const K: u8>(
    grf: &mut [u8],
    op: &FloatOp,
    keep: bool,
    chen: u32,
    em_part: u32,
    pmask: u32,
) -> Option<u32> {
    use FloatKind as F;
    let (sat, (dst, _)) = (op.sat, op.packed?);
    let enabled = chen & super::control::size_mask(L as u32);
    macro_rules! src {
        ($k:expr) => {
            op.lane_srcs[$k].values::<L>(grf, keep)
        };
    }
    // Each arm computes its lanes and stores them itself, into the destination under the
    // channel enables (`sel`'s its own).
    macro_rules! store {
        ($r:expr) => {
            store!($r, enabled)
        };
        ($r:expr, $enabled:expr) => {{
            let r: [u32; L] = $r;
            if let InPlace::Reg(base) = dst {
                let base = base as usize;
                super::fast::store_lanes(&mut grf[base..base + 4 * L], &r, $enabled);
            }
            None
        }};
    }
    macro_rules! lanes {
        (|$i:ident| $e:expr) => {
            lanes!(enabled, |$i| $e)
        };
        ($enabled:expr, |$i:ident| $e:expr) => {{
            let mut r = [0u32; L];
            for $i in 0..L {
                r[$i] = $e;
            }
            store!(r, $enabled)
        }};
    }
    // The arithmetic: every lane computed, then, only where a lane came out NaN, each
    // NaN lane given its first NaN source's NaN (a NaN is rare; the check is one compare).
    macro_rules! arith {
        (|$i:ident| $e:expr, $srcs:expr) => {{
            let mut v = [0f32; L];
            for $i in 0..L {
                v[$i] = $e;
            }
            let mut nan = 0;
            for x in &v {
                nan |= ones(x.to_bits() & !SIGN > EXP);
            }
            if nan != 0 {
                for $i in 0..L {
                    v[$i] = first_nan(v[$i], $srcs);
                }
            }
            store!(results(v, sat, keep))
        }};
    }
    // The one-source math: each lane computed from its source.
    macro_rules! unary {
        (|$x:ident| $e:expr) => {{
            let (a, mut v) = (src!(0), [0f32; L]);
            for (o, &$x) in v.iter_mut().zip(&a) {
                *o = $e;
            }
            store!(results(v, sat, keep))
        }};
    }
    let kind = const { KINDS[K as usize] };
    match kind {
        // Add and mul too, as `mad` ([`FloatOp::lane_srcs`]).
        F::Add | F::Mul | F::Mad => {
            let (a, b, c) = (src!(0), src!(1), src!(2));
            arith!(|i| a[i].mul_add(b[i], c[i]), [a[i], b[i], c[i]])
        }
        // DIV.md: x · INV(y), the inverse rounded to f32 first.
        F::Div => {
            let (a, b) = (src!(0), src!(1));
            arith!(|i| a[i] * (1.0 / b[i]), [a[i], b[i], 0.0])
        }
        F::Pow => {
            let (a, b) = (src!(0), src!(1));
            lanes!(|i| result(wide(a[i]).powf(wide(b[i])) as f32, sat, keep))
        }
        F::Cmp(_) => {
            let F::Cmp(rel) = op.kind else { return None };
            // The floats' own operators: NaN unordered, so only `ne` holds; -0 == +0.
            let flags = super::fast::compare_lanes(&src!(0), &src!(1), rel);
            match dst {
                InPlace::Pred(_) => Some(flags),
                InPlace::Reg(_) | InPlace::Int { .. } => lanes!(|i| 0u32.wrapping_sub(flags >> i & 1)),
            }
        }
        F::Mov | F::Sel | F::Min | F::Max => {
            // All ones in the lanes that take src0.
            let mut first = [u32::MAX; L];
            let enabled = match kind {
                F::Mov => enabled,
                F::Sel => {
                    for (i, f) in first.iter_mut().enumerate() {
                        *f = ones(pmask >> i & 1 != 0);
                    }
                    em_part & super::control::size_mask(L as u32)
                }
                _ => {
                    let (a, b, want_max) = (src!(0), src!(1), kind == F::Max);
                    for i in 0..L {
                        first[i] = ones(takes_first(a[i], b[i], want_max));
                    }
                    enabled
                }
            };
            // The chosen source moves by `mov`'s rule: its bits unchanged without a
            // modifier or saturation, else converted (flushed, quieted, saturated).
            let raw = [op.lane_srcs[0].raw::<L>(grf), op.lane_srcs[1].raw::<L>(grf)];
            let mods = [modifier(&op.srcs[0]), modifier(&op.srcs[1])];
            if mods == [SrcMod::None; 2] && !sat {
                // Bits unchanged: a blend of the two sources (decided once, not per lane).
                return lanes!(enabled, |i| raw[0][i] & first[i] | raw[1][i] & !first[i]);
            }
            lanes!(enabled, |i| {
                let s = usize::from(first[i] == 0);
                let bits = raw[s][i];
                if mods[s] == SrcMod::None && !sat {
                    bits
                } else {
                    result(value(bits, mods[s], keep), sat, keep)
                }
            })
        }
        F::Inv => unary!(|x| 1.0 / x),
        F::Sqrt => unary!(|x| x.sqrt()),
        F::Log => unary!(|x| via_f64(x, f64::log2)),
        F::Exp => unary!(|x| via_f64(x, f64::exp2)),
        F::Rsqrt => unary!(|x| via_f64(x, |v| 1.0 / v.sqrt())),
        F::Sin => unary!(|x| via_f64(x, f64::sin)),
        F::Cos => unary!(|x| via_f64(x, f64::cos)),
        F::Frc => unary!(|x| x - x.floor()),
        F::Rndd => unary!(|x| x.floor()),
        F::Rndu => unary!(|x| x.ceil()),
        F::Rnde => unary!(|x| x.round_ties_even()),
        F::Rndz => unary!(|x| x.trunc()),
        F::FromInt(_) => {
            let F::FromInt(ty) = op.kind else { return None };
            // At most 32 bits: a modified value is within ±2^32, exact in i64.
            let v = packed_ints::<L>(grf, &op.srcs[0], ty);
            let m = modifier(&op.srcs[0]);
            lanes!(|i| result(with_mod(v[i], m) as f32, sat, keep))
        }
        F::ToInt(_) => {
            let (F::ToInt(ty), InPlace::Int { base, size, stride }) = (op.kind, dst) else { return None };
            let a = src!(0);
            let mut values = [0u64; L];
            for i in 0..L {
                values[i] = to_int(ty, a[i]);
            }
            let (at, span) = (base as usize, (size * (stride * (L as u32 - 1) + 1)) as usize);
            super::qword::store_elements(&mut grf[at..at + span], &values, enabled, size, stride);
            None
        }
    }
}

/// `L` lanes of a packed, scalar or immediate integer source of type `ty` (at most 32 bits),
/// sign- or zero-extended, without its modifier.
#[inline(always)]
fn packed_ints<const L: usize>(grf: &[u8], s: &FSrc, ty: DataType) -> [i64; L] {
    let size = ty.size();
    let mut out = [0i64; L];
    match s {
        FSrc::Imm(bits) => out = [super::fast::sign_extend(ty, *bits as u64); L],
        FSrc::Scalar(at, _) => {
            out = [super::fast::sign_extend(ty, element(grf, *at as usize, size) as u64); L]
        }
        FSrc::Packed(at, _) => {
            for (i, o) in out.iter_mut().enumerate() {
                *o =
                    super::fast::sign_extend(ty, element(grf, *at as usize + i * size as usize, size) as u64);
            }
        }
        FSrc::Gather(..) => {}
    }
    out
}

/// An f32 op (`op`, of kind `kind`) other than the exact ones (add, mul, mad, div, pow and
/// the one-source math) computed as the general ALU computes it and rounded once under `mode`
/// (the NaN rule, saturation and flushing included): its bits.
fn rounded(kind: FloatKind, op: Opcode, s: [f32; 3], mode: RoundMode, sat: bool, keep: bool) -> u32 {
    use super::math;
    let [x, y, z] = s.map(wide);
    // The arithmetic takes the first NaN operand's NaN; pow and the one-source math do not.
    let (r, nan_from) = match kind {
        FloatKind::Add => (math::two_sum(x, y), 2),
        FloatKind::Mul => (math::two_prod(x, y), 2),
        FloatKind::Mad => (math::fused(x, y, z), 3),
        FloatKind::Div => (math::div_lane(x, y, convert::F32), 2),
        FloatKind::Pow => ((x.powf(y), 0), 0),
        _ => (math::unary_lane(op, x), 0),
    };
    let r = math::first_nan(r, [x, y, z].into_iter().take(nan_from));
    super::alu::round_lane(convert::F32, r, sat, mode, keep) as u32
}

/// [`rounded`], for add, mul and mad with a normal result and no saturation, by stepping
/// the nearest f32 one unit toward the mode's side where it lies on the other side of the
/// exact value (the sum or product in f64 and the sign of its residual, which the nearest
/// f64 cannot cross: an f32 between it and the exact value would be nearer). Zero,
/// subnormal, infinite and NaN results, and the other ops, go through [`rounded`].
#[inline(always)]
fn directed_f32(kind: FloatKind, op: Opcode, s: [f32; 3], mode: RoundMode, sat: bool, keep: bool) -> u32 {
    use super::math;
    let [x, y, z] = s.map(wide);
    let (v, e) = match kind {
        FloatKind::Add => math::two_sum(x, y),
        FloatKind::Mul => math::two_prod(x, y),
        FloatKind::Mad => math::fused(x, y, z),
        _ => return rounded(kind, op, s, mode, sat, keep),
    };
    let r = v as f32;
    if sat || !r.is_normal() {
        return rounded(kind, op, s, mode, sat, keep);
    }
    // Where the nearest f32 lies against the exact value v + residual.
    let rd = f64::from(r);
    let (above, below) = if rd == v { (e < 0, e > 0) } else { (rd > v, rd < v) };
    // The next f32 up or down in value: its bits one away, by the sign.
    let (bits, positive) = (r.to_bits(), r > 0.0);
    let step = |up: bool| if up == positive { bits + 1 } else { bits - 1 };
    let bits = match mode {
        RoundMode::Rtz if positive && above || !positive && below => bits - 1,
        RoundMode::Ru if below => step(true),
        RoundMode::Rd if above => step(false),
        _ => bits,
    };
    convert::flush_out(convert::F32, u64::from(bits), keep) as u32
}

/// An f32 converted to integer type `ty`: `as` truncates toward zero, saturates and maps NaN
/// to 0 (saturation to the destination's range is what the conversion does anyway).
#[inline(always)]
fn to_int(ty: DataType, x: f32) -> u64 {
    match ty {
        DataType::Q => x as i64 as u64,
        DataType::Uq => x as u64,
        _ => {
            let (lo, hi) = int_range(ty);
            (x as i64).clamp(lo, hi) as u64
        }
    }
}

/// The range of a 32-bit-or-narrower integer type.
fn int_range(ty: DataType) -> (i64, i64) {
    match ty {
        DataType::B => (i8::MIN as i64, i8::MAX as i64),
        DataType::Ub => (0, u8::MAX as i64),
        DataType::W => (i16::MIN as i64, i16::MAX as i64),
        DataType::Uw => (0, u16::MAX as i64),
        DataType::D => (i32::MIN as i64, i32::MAX as i64),
        _ => (0, u32::MAX as i64),
    }
}

/// An integer source's value under its modifier (`not` has no meaning for a conversion's
/// value and leaves it).
fn with_mod<T: std::ops::Neg<Output = T> + Ord + Copy + Default>(v: T, m: SrcMod) -> T {
    let abs = if v < T::default() { -v } else { v };
    match m {
        SrcMod::Neg => -v,
        SrcMod::Abs => abs,
        SrcMod::NegAbs => -abs,
        SrcMod::None | SrcMod::Not => v,
    }
}
