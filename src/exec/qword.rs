//! The in-place tier on 64-bit lanes: the integer fast forms (`fast.rs`) that the dword tier
//! does not take, with direct or immediate operands: q/uq operands (64-bit emulation, pointer
//! arithmetic), byte and word types, source modifiers, `mad`, any register region. Each source
//! is read as 64-bit lanes extended by its type, its modifier applied, exactly as the i64 fast
//! form reads it; the result is stored at the destination's width. Like the dword tier, every
//! lane is read before any is written, the lane work is specialised on the kind and exec size,
//! and writes reach the observer as the general path reports them.

use super::ctx::Ctx;
use super::fast::{self, FastKind, FastOp, FastSrc, D32};
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{CondMod, DataType, ExecMask, Operand, PredId, Predicate, Region, SrcMod};
use crate::program::Inst;

/// A source of the qword tier (before its modifier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum S64 {
    /// An immediate extended to 64 bits by its type.
    Imm(u64),
    /// `<0;1,0>` of a q/uq register: its GRF offset.
    Scalar(u32),
    /// A packed q/uq register (lane i at offset + 8i).
    Packed(u32),
    /// A dword operand, extended to 64 bits by its type.
    Dword(D32),
    /// Any other register operand: each lane's GRF offset, and the type that extends it.
    Gather(Box<[u32; 32]>, DataType),
}

/// Where a qword op's result goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct QDst {
    /// GRF offset of lane 0.
    base: u32,
    /// Bytes of an element (the result's low bytes are kept).
    size: u32,
    /// Elements from one lane to the next.
    stride: u32,
}

impl QDst {
    /// Bytes from lane 0's element to the end of lane `n - 1`'s.
    fn span(self, n: u32) -> u32 {
        self.size * (self.stride * (n - 1) + 1)
    }
}

/// One 64-bit instruction of the in-place tier.
#[derive(Clone, Debug)]
pub struct QwordOp {
    pub kind: FastKind,
    srcs: [S64; 3],
    /// Each source's modifier, and whether its type is signed (`abs` of an unsigned value is
    /// the value).
    mods: [(SrcMod, bool); 3],
    /// The register destination (None for `cmp` to a predicate).
    dst: Option<QDst>,
    /// Shift counts are taken modulo the destination's width.
    count_mask: u64,
    /// Compares and min/max order the lanes as u64 (else as i64).
    unsigned: bool,
    /// GRF bytes the operands reach (every operand lies below this offset).
    need: u32,
    pred_dst: Option<PredId>,
    pub exec: ExecMask,
    pub guard: Option<Predicate>,
    kernel: QwordKernel,
}

/// The lane work of one qword op on a thread's GRF: `(grf, op, chen, em_part, pmask)`, as
/// [`fast::DwordOp`]'s kernels: it stores register results and returns a compare's flags
/// when the destination is a predicate.
type QwordKernel = fn(&mut [u8], &QwordOp, u32, u32, u32) -> Result<Option<u32>, FaultKind>;

fn s64(src: &FastSrc, n: u32) -> Option<S64> {
    match src {
        FastSrc::Imm(v, _) => Some(S64::Imm(*v as u64)),
        FastSrc::Reg { base, region, ty, modifier } => {
            let packed = *region == Region::dst(1) || (region.hstride == 1 && region.vstride == region.width);
            let plain = *modifier == SrcMod::None;
            match ty {
                DataType::Q | DataType::Uq if *region == Region::scalar() => Some(S64::Scalar(*base)),
                DataType::Q | DataType::Uq if packed => Some(S64::Packed(*base)),
                DataType::D | DataType::Ud if plain => {
                    fast::d32(src).map(S64::Dword).or_else(|| gather(*base, *region, *ty, n))
                }
                _ => gather(*base, *region, *ty, n),
            }
        }
        FastSrc::Indirect(_) => None,
    }
}

/// A register source read lane by lane from offsets decided now.
fn gather(base: u32, region: Region, ty: DataType, n: u32) -> Option<S64> {
    let mut offsets = [0u32; 32];
    for (lane, o) in offsets.iter_mut().enumerate().take(n as usize) {
        *o = base + region.element(lane as u32) * ty.size();
    }
    Some(S64::Gather(Box::new(offsets), ty))
}

fn modifier(src: &FastSrc) -> (SrcMod, bool) {
    match src {
        FastSrc::Reg { ty, modifier, .. } => (*modifier, ty.is_signed_int()),
        _ => (SrcMod::None, false),
    }
}

/// Whether a source's 64-bit value has zeros above its type's width (what `shr` shifts in).
fn zero_extended(src: &FastSrc) -> bool {
    match src {
        FastSrc::Imm(_, ty) => ty.size() == 8 || !ty.is_signed_int(),
        FastSrc::Reg { ty, modifier, .. } => {
            (ty.size() == 8 || !ty.is_signed_int()) && *modifier == SrcMod::None
        }
        FastSrc::Indirect(_) => false,
    }
}

/// The in-place form on 64-bit lanes of a fast op that the dword tier does not take, if it
/// qualifies: direct or immediate operands, a direct destination.
pub fn compile_qword(inst: &Inst, f: &FastOp) -> Option<QwordOp> {
    let kind = match f.kind {
        k @ (FastKind::Mov
        | FastKind::Add
        | FastKind::Mul
        | FastKind::And
        | FastKind::Or
        | FastKind::Xor
        | FastKind::Shl
        | FastKind::Shr
        | FastKind::Asr
        | FastKind::Sel
        | FastKind::Cmp(_)
        | FastKind::Min
        | FastKind::Max
        | FastKind::Mad) => k,
        _ => return None,
    };
    let n = inst.exec.size;
    if !matches!(n, 1 | 2 | 4 | 8 | 16 | 32) {
        return None;
    }
    let srcs = [s64(&f.srcs[0], n)?, s64(&f.srcs[1], n)?, s64(&f.srcs[2], n)?];
    // `shr` shifts src0's own bits: a signed narrower source would bring its sign bits.
    if kind == FastKind::Shr && !zero_extended(&f.srcs[0]) {
        return None;
    }
    let (dst, pred_dst) = match &inst.operands[0] {
        Operand::Pred(p) if matches!(kind, FastKind::Cmp(_)) => (None, Some(*p)),
        Operand::Direct(d) if !d.is_null && d.region.width == 1 && d.region.vstride >= 1 => {
            (Some(QDst { base: d.base, size: d.ty.size(), stride: d.region.vstride as u32 }), None)
        }
        _ => return None,
    };
    let mut need = srcs.iter().map(|s| span(s, n)).max().unwrap_or(0);
    if let Some(d) = dst {
        need = need.max(d.base + d.span(n));
    }
    let count_mask = if dst.is_some_and(|d| d.size == 8) { 63 } else { 31 };
    let mods = [modifier(&f.srcs[0]), modifier(&f.srcs[1]), modifier(&f.srcs[2])];
    Some(QwordOp {
        kind,
        srcs,
        mods,
        dst,
        count_mask,
        unsigned: f.unsigned,
        need,
        pred_dst,
        exec: inst.exec,
        guard: inst.pred,
        kernel: kernel_for(kind, n),
    })
}

fn span(s: &S64, n: u32) -> u32 {
    match s {
        S64::Imm(_) => 0,
        S64::Scalar(off) => off + 8,
        S64::Packed(off) => off + 8 * n,
        S64::Dword(d) => fast::span(*d, n),
        S64::Gather(offsets, ty) => offsets[..n as usize].iter().max().map_or(0, |o| o + ty.size()),
    }
}

/// A lane's value under its source's modifier (on the value extended to 64 bits, as the
/// i64 fast form applies it).
#[inline(always)]
fn apply(m: SrcMod, signed: bool, v: u64) -> u64 {
    let abs = |v: u64| if signed { (v as i64).wrapping_abs() as u64 } else { v };
    match m {
        SrcMod::None => v,
        SrcMod::Neg => v.wrapping_neg(),
        SrcMod::Abs => abs(v),
        SrcMod::NegAbs => abs(v).wrapping_neg(),
        SrcMod::Not => !v,
    }
}

/// Lanes `L` of source `i`, extended and modified.
#[inline(always)]
fn source<const L: usize>(grf: &[u8], op: &QwordOp, i: usize) -> [u64; L] {
    let v = lanes::<L>(grf, &op.srcs[i]);
    match op.mods[i] {
        (SrcMod::None, _) => v,
        (m, signed) => v.map(|x| apply(m, signed, x)),
    }
}

/// All `L` lanes of a source as 64-bit values.
#[inline(always)]
fn lanes<const L: usize>(grf: &[u8], s: &S64) -> [u64; L] {
    let load = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&grf[at..at + 8]);
        u64::from_le_bytes(b)
    };
    match s {
        S64::Imm(v) => [*v; L],
        S64::Scalar(off) => [load(*off as usize); L],
        S64::Packed(off) => {
            let (chunks, _) = grf[*off as usize..].as_chunks::<8>();
            let words: &[[u8; 8]; L] = chunks[..L].try_into().expect("span checked by the caller");
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = u64::from_le_bytes(words[i]);
            }
            out
        }
        S64::Dword(d) => fast::lanes_i64::<L>(grf, *d).map(|v| v as u64),
        S64::Gather(offsets, ty) => {
            let mut out = [0u64; L];
            let size = ty.size() as usize;
            for (o, &at) in out.iter_mut().zip(offsets.iter()) {
                let at = at as usize;
                *o = fast::sign_extend(*ty, super::operand::load_le(&grf[at..at + size], size as u32)) as u64;
            }
            out
        }
    }
}

#[inline(always)]
fn zip<const L: usize>(a: &[u64; L], b: &[u64; L], f: impl Fn(u64, u64) -> u64) -> [u64; L] {
    let mut out = [0u64; L];
    for i in 0..L {
        out[i] = f(a[i], b[i]);
    }
    out
}

/// Bit i set where `f(a[i], b[i])`.
#[inline(always)]
fn flags<T: Copy, const L: usize>(a: &[T; L], b: &[T; L], f: impl Fn(T, T) -> bool) -> u32 {
    let mut flags = 0u32;
    for i in 0..L {
        flags |= (f(a[i], b[i]) as u32) << i;
    }
    flags
}

#[inline(always)]
fn compare<T: Copy + PartialOrd, const L: usize>(a: &[T; L], b: &[T; L], rel: CondMod) -> u32 {
    match rel {
        CondMod::Eq => flags(a, b, |x, y| x == y),
        CondMod::Ne => flags(a, b, |x, y| x != y),
        CondMod::Lt => flags(a, b, |x, y| x < y),
        CondMod::Le => flags(a, b, |x, y| x <= y),
        CondMod::Gt => flags(a, b, |x, y| x > y),
        CondMod::Ge => flags(a, b, |x, y| x >= y),
    }
}

/// Compare flags of `a rel b` in the op's order (u64 or i64).
#[inline(always)]
fn ordered<const L: usize>(op: &QwordOp, a: &[u64; L], b: &[u64; L], rel: CondMod) -> u32 {
    if op.unsigned {
        compare(a, b, rel)
    } else {
        compare(&a.map(|v| v as i64), &b.map(|v| v as i64), rel)
    }
}

/// The kind a kernel's constant parameter `K` stands for (see [`kernel_for`]).
const fn kind_of_const(k: u8) -> FastKind {
    match k {
        0 => FastKind::Mov,
        1 => FastKind::Add,
        2 => FastKind::Mul,
        3 => FastKind::And,
        4 => FastKind::Or,
        5 => FastKind::Xor,
        6 => FastKind::Shl,
        7 => FastKind::Shr,
        8 => FastKind::Asr,
        9 => FastKind::Sel,
        10 => FastKind::Cmp(CondMod::Eq),
        11 => FastKind::Cmp(CondMod::Ne),
        12 => FastKind::Cmp(CondMod::Lt),
        13 => FastKind::Cmp(CondMod::Le),
        14 => FastKind::Cmp(CondMod::Gt),
        15 => FastKind::Cmp(CondMod::Ge),
        16 => FastKind::Min,
        17 => FastKind::Max,
        _ => FastKind::Mad,
    }
}

fn kernel_sized<const K: u8>(n: u32) -> QwordKernel {
    match n {
        1 => qword_kernel::<1, K>,
        2 => qword_kernel::<2, K>,
        4 => qword_kernel::<4, K>,
        8 => qword_kernel::<8, K>,
        16 => qword_kernel::<16, K>,
        _ => qword_kernel::<32, K>,
    }
}

/// The kernel of `kind` (one [`compile_qword`] takes) for exec size `n`.
fn kernel_for(kind: FastKind, n: u32) -> QwordKernel {
    match kind {
        FastKind::Mov => kernel_sized::<0>(n),
        FastKind::Add => kernel_sized::<1>(n),
        FastKind::Mul => kernel_sized::<2>(n),
        FastKind::And => kernel_sized::<3>(n),
        FastKind::Or => kernel_sized::<4>(n),
        FastKind::Xor => kernel_sized::<5>(n),
        FastKind::Shl => kernel_sized::<6>(n),
        FastKind::Shr => kernel_sized::<7>(n),
        FastKind::Asr => kernel_sized::<8>(n),
        FastKind::Sel => kernel_sized::<9>(n),
        FastKind::Cmp(CondMod::Eq) => kernel_sized::<10>(n),
        FastKind::Cmp(CondMod::Ne) => kernel_sized::<11>(n),
        FastKind::Cmp(CondMod::Lt) => kernel_sized::<12>(n),
        FastKind::Cmp(CondMod::Le) => kernel_sized::<13>(n),
        FastKind::Cmp(CondMod::Gt) => kernel_sized::<14>(n),
        FastKind::Cmp(CondMod::Ge) => kernel_sized::<15>(n),
        FastKind::Min => kernel_sized::<16>(n),
        FastKind::Max => kernel_sized::<17>(n),
        _ => kernel_sized::<18>(n),
    }
}

/// The lane work of qword op `op` of kind `K` and exec size `L` (a [`QwordKernel`]).
fn qword_kernel<const L: usize, const K: u8>(
    grf: &mut [u8],
    op: &QwordOp,
    chen: u32,
    em_part: u32,
    pmask: u32,
) -> Result<Option<u32>, FaultKind> {
    let kind = kind_of_const(K);
    if op.need as usize > grf.len() {
        return Err(FaultKind::RegionOutOfBounds { operand: 0, offset: 0, len: op.need });
    }
    let a = source::<L>(grf, op, 0);
    let b = source::<L>(grf, op, 1);
    let m = op.count_mask;
    let values = match kind {
        FastKind::Cmp(rel) => {
            let flags = ordered(op, &a, &b, rel);
            if op.pred_dst.is_some() {
                return Ok(Some(flags));
            }
            let mut out = [0u64; L];
            for (i, o) in out.iter_mut().enumerate() {
                *o = 0u64.wrapping_sub((flags >> i & 1) as u64);
            }
            out
        }
        FastKind::Mov => a,
        FastKind::Add => zip(&a, &b, u64::wrapping_add),
        FastKind::Mul => zip(&a, &b, u64::wrapping_mul),
        FastKind::Mad => {
            let c = source::<L>(grf, op, 2);
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = a[i].wrapping_mul(b[i]).wrapping_add(c[i]);
            }
            out
        }
        FastKind::And => zip(&a, &b, |x, y| x & y),
        FastKind::Or => zip(&a, &b, |x, y| x | y),
        FastKind::Xor => zip(&a, &b, |x, y| x ^ y),
        FastKind::Shl => zip(&a, &b, |x, y| x << (y & m)),
        FastKind::Shr => zip(&a, &b, |x, y| x >> (y & m)),
        FastKind::Asr => zip(&a, &b, |x, y| ((x as i64) >> (y & m)) as u64),
        FastKind::Sel => {
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = if pmask >> i & 1 != 0 { a[i] } else { b[i] };
            }
            out
        }
        _ => {
            let rel = if kind == FastKind::Max { CondMod::Gt } else { CondMod::Lt };
            let first = ordered(op, &a, &b, rel);
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = if first >> i & 1 != 0 { a[i] } else { b[i] };
            }
            out
        }
    };
    let Some(dst) = op.dst else { return Ok(None) };
    // `sel` writes under the execution mask alone: its predicate chooses.
    let enabled = if kind == FastKind::Sel { em_part } else { chen };
    let bytes = &mut grf[dst.base as usize..];
    match (dst.size, dst.stride) {
        (8, 1) => store_qwords(bytes, &values, enabled),
        (4, 1) => fast::store_lanes(bytes, &values.map(|v| v as u32), enabled),
        (size, stride) => {
            let (size, step) = (size as usize, (size * stride) as usize);
            for (lane, v) in values.iter().enumerate() {
                if enabled >> lane & 1 != 0 {
                    bytes[lane * step..lane * step + size].copy_from_slice(&v.to_le_bytes()[..size]);
                }
            }
        }
    }
    Ok(None)
}

/// Stores `values` to the qword lanes of `enabled` (a branch-free blend).
#[inline(always)]
fn store_qwords<const L: usize>(bytes: &mut [u8], values: &[u64; L], enabled: u32) {
    let (chunks, _) = bytes.as_chunks_mut::<8>();
    let slots: &mut [[u8; 8]; L] = (&mut chunks[..L]).try_into().expect("span checked by the caller");
    for (lane, (slot, v)) in slots.iter_mut().zip(values).enumerate() {
        let keep = 0u64.wrapping_sub((enabled >> lane & 1) as u64);
        let old = u64::from_le_bytes(*slot);
        *slot = ((v & keep) | (old & !keep)).to_le_bytes();
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place qword op, reporting its write as [`Ctx::run_dword`] does.
    #[inline(always)]
    pub fn run_qword(&mut self, op: &QwordOp, chen: u32, em_part: u32, pmask: u32) -> Result<(), FaultKind> {
        let n = op.exec.size;
        let enabled = (if op.kind == FastKind::Sel { em_part } else { chen }) & super::control::size_mask(n);
        let reported =
            op.dst.filter(|_| O::ACTIVE && enabled != 0 && op.need as usize <= self.thread.grf.len());
        if let Some(dst) = reported {
            self.scratch.clear();
            self.scratch
                .extend_from_slice(&self.thread.grf[dst.base as usize..(dst.base + dst.span(n)) as usize]);
        }
        let flags = (op.kernel)(&mut self.thread.grf, op, chen, em_part, pmask)?;
        if let (Some(flags), Some(p)) = (flags, op.pred_dst) {
            let off = op.exec.offset.min(31);
            self.write_pred(p, chen << off, flags << off);
        } else if let Some(dst) = reported {
            self.report_lane_runs(dst.base, Region::dst(dst.stride as u8), dst.size, n, enabled);
        }
        Ok(())
    }
}
