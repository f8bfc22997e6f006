//! The in-place tier on 64-bit lanes: every integer fast form (`fast.rs` decides which
//! instructions have one) that the dword tier does not take: q/uq operands (64-bit
//! emulation, pointer arithmetic), byte and word types, source modifiers, `mad`, `mulh`,
//! `add3`, `bfn`, the bit counts, any register region, indirect operands;
//! `addc`/`subb` with their two destinations, `addr_add`, and `setp` from a register. Each source is read as 64-bit lanes extended by its type,
//! its modifier applied; the result is stored at the destination's width. What needs a
//! lane's exact value (`.sat`, an order between a uq source and a signed one, `asr` of a uq
//! one) runs an exact kernel on i128 lanes, as the general ALU holds them. Like the dword
//! tier, every lane is read before any is written, the lane work is specialised on the kind
//! and exec size, and writes reach the observer as the general path reports them.

use super::ctx::Ctx;
use super::fast::{self, FastKind, FastOp, FastSrc, D32};
use super::fault::FaultKind;
use super::observer::Observer;
use super::step::Enables;
use crate::isa::{CondMod, DataType, IndirectOperand, Operand, PredId, Region, SrcMod};
use crate::program::Inst;

/// A source of the qword tier (before its modifier).
#[derive(Clone, Debug)]
pub enum S64 {
    /// An immediate extended to 64 bits by its type.
    Imm(u64),
    /// `<0;1,0>` of a q/uq register: its GRF offset.
    Scalar(u32),
    /// A packed q/uq register (lane i at offset + 8i).
    Packed(u32),
    /// A dword operand, extended to 64 bits by its type.
    Dword(D32),
    /// A packed w/uw register (lane i at offset + 2i; the addresses and lane numbers IGC
    /// computes in words), signed.
    Words(u32, bool),
    /// Any other register operand: each lane's GRF offset, and the type that extends it.
    Gather(Box<[u32; 32]>, DataType),
    /// Through an address register: each lane's offset is found when the instruction runs
    /// (checked as the general path checks it), then read as `Gather` reads.
    Indirect(Box<IndirectOperand>),
    /// Each lane's value, the same every time (a `:v` or `:uv` immediate).
    Lanes(Box<[u64; 32]>),
}

/// Each source's lane offsets, for the indirect ones.
type Offsets = [[u32; 32]; 3];

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
    /// The register destination (None for `cmp` to a predicate, a null or an indirect
    /// destination).
    dst: Option<QDst>,
    /// An indirect destination: the results are written lane by lane in order (lanes may
    /// alias, and a lane whose address faults stops the write there).
    dst_indirect: Option<Box<IndirectOperand>>,
    /// The address register slot of a single-address indirect destination (found when
    /// the op is made, not at each step), if its element is in its variable.
    dst_slot: Option<u32>,
    /// Whether a source is indirect.
    indirect_src: bool,
    /// A `mov` without modifier or saturation from a direct or immediate source through a
    /// single-address destination whose address register slot is known (`dst_slot`): the
    /// form IGC gives a private array's element stored at a computed index, one lane at a
    /// time under a one-bit predicate. Such a lane is stored by [`Ctx::move_one_lane`].
    one_lane_move: bool,
    /// src0's bits within its type's width (what `shr` shifts and the bit counts count).
    width_mask: u64,
    /// src0's type is signed (`fbh` counts sign bits).
    signed0: bool,
    /// `bfn`'s truth table.
    table: u8,
    /// Shift counts are taken modulo the destination's width.
    count_mask: u64,
    /// Compares and min/max order the lanes as u64 (else as i64).
    unsigned: bool,
    /// GRF bytes the operands reach (every operand lies below this offset).
    need: u32,
    pred_dst: Option<PredId>,
    /// `.sat`: the destination type's range, which every lane's exact result is clamped to.
    sat: Option<(i128, i128)>,
    /// Which sources are uq: their exact values (for the exact kernel) are zero-extended
    /// and modified in i128.
    uq: [bool; 3],
    pub en: Enables,
    kernel: QwordKernel,
}

/// The lane work of one qword op on a thread's GRF: `(grf, op, offsets, chen, em_part, pmask,
/// out)`, as [`fast::DwordOp`]'s kernels: it stores register results (or hands them to
/// `out`, for an indirect destination) and returns a compare's flags when the destination is
/// a predicate. `offsets` holds the indirect sources' lane offsets. The caller checks
/// `op.need` against the file, as for the dword kernels.
type QwordKernel =
    fn(&mut [u8], &QwordOp, Option<&Offsets>, u32, u32, u32, Option<&mut [u64; 32]>) -> Option<u32>;

fn s64(src: &FastSrc, n: u32) -> Option<S64> {
    match src {
        FastSrc::Imm(v, _) => Some(S64::Imm(*v as u64)),
        FastSrc::Reg { base, region, ty, .. } => {
            let packed = *region == Region::dst(1) || (region.hstride == 1 && region.vstride == region.width);
            match ty {
                DataType::Q | DataType::Uq if *region == Region::scalar() => Some(S64::Scalar(*base)),
                DataType::Q | DataType::Uq if packed => Some(S64::Packed(*base)),
                DataType::W | DataType::Uw if packed => Some(S64::Words(*base, *ty == DataType::W)),
                DataType::D | DataType::Ud => {
                    fast::d32(&FastSrc::Reg { base: *base, region: *region, ty: *ty, modifier: SrcMod::None })
                        .map(S64::Dword)
                        .or_else(|| gather(*base, *region, *ty, n))
                }
                _ => gather(*base, *region, *ty, n),
            }
        }
        FastSrc::Indirect(ind) => Some(S64::Indirect(ind.clone())),
        FastSrc::Vector(lanes, _) => Some(S64::Lanes(Box::new(lanes.map(|v| v as u64)))),
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
        FastSrc::Indirect(ind) => (ind.modifier, ind.ty.is_signed_int()),
        FastSrc::Imm(..) | FastSrc::Vector(..) => (SrcMod::None, false),
    }
}

/// The in-place form on 64-bit lanes of a fast op that the dword tier does not take.
pub fn compile_qword(inst: &Inst, f: &FastOp, program: &crate::program::Program) -> Option<QwordOp> {
    let kind = f.kind;
    let n = inst.exec.size;
    if !fast::kernel_size(n) {
        return None;
    }
    let srcs = [s64(&f.srcs[0], n)?, s64(&f.srcs[1], n)?, s64(&f.srcs[2], n)?];
    let (mut dst, mut dst_indirect, mut pred_dst) = (None, None, None);
    match &inst.operands[0] {
        Operand::Pred(p) if matches!(kind, FastKind::Cmp(_)) => pred_dst = Some(*p),
        Operand::Direct(d) if d.is_null => {}
        Operand::Direct(d) if d.region.width == 1 && d.region.vstride >= 1 => {
            dst = Some(QDst { base: d.base, size: d.ty.size(), stride: d.region.vstride as u32 })
        }
        Operand::Indirect(ind) => dst_indirect = Some(Box::new(ind.clone())),
        _ => return None,
    }
    let mut need = srcs.iter().map(|s| span(s, n)).max().unwrap_or(0);
    if let Some(d) = dst {
        need = need.max(d.base + d.span(n));
    }
    // Shift counts are taken modulo the destination's width.
    let count_mask = if f.dst_ty.size() == 8 { 63 } else { 31 };
    let mods = [modifier(&f.srcs[0]), modifier(&f.srcs[1]), modifier(&f.srcs[2])];
    let bits = f.src0_ty.bits();
    let width_mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let indirect_src = srcs.iter().any(|s| matches!(s, S64::Indirect(_)));
    // A single-address destination's address register slot, where its element exists.
    let dst_slot = dst_indirect.as_ref().filter(|ind| !ind.multi).and_then(|ind| {
        let var = program.addrs.get(ind.addr.0 as usize)?;
        (ind.addr_elem < var.num_elts).then(|| var.slot + ind.addr_elem)
    });
    let one_lane_move = kind == FastKind::Mov
        && !inst.sat
        && mods[0].0 == SrcMod::None
        && !indirect_src
        && dst_slot.is_some();
    Some(QwordOp {
        kind,
        srcs,
        mods,
        dst,
        dst_indirect,
        dst_slot,
        indirect_src,
        one_lane_move,
        width_mask,
        signed0: f.src0_ty.is_signed_int(),
        table: if let FastKind::Bfn(t) = kind { t } else { 0 },
        count_mask,
        unsigned: f.unsigned,
        need,
        pred_dst,
        sat: inst.sat.then(|| super::convert::int_range(f.dst_ty)),
        uq: [0, 1, 2].map(|i| fast::src_ty(&f.srcs[i]) == DataType::Uq),
        en: Enables::new(inst.exec, inst.pred),
        kernel: if f.exact { exact_kernel_for(n) } else { kernel_for(kind, n) },
    })
}

fn span(s: &S64, n: u32) -> u32 {
    match s {
        S64::Imm(_) => 0,
        S64::Scalar(off) => off + 8,
        S64::Packed(off) => off + 8 * n,
        S64::Words(off, _) => off + 2 * n,
        S64::Dword(d) => fast::span(*d, n),
        S64::Gather(offsets, ty) => offsets[..n as usize].iter().max().map_or(0, |o| o + ty.size()),
        S64::Indirect(_) | S64::Lanes(_) => 0,
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
fn source<const L: usize>(grf: &[u8], op: &QwordOp, i: usize, offsets: Option<&Offsets>) -> [u64; L] {
    let v = match (&op.srcs[i], offsets) {
        (S64::Indirect(ind), Some(offsets)) => gathered::<L>(grf, &offsets[i], ind.ty),
        (s, _) => lanes::<L>(grf, s),
    };
    modified(v, op.mods[i])
}

/// The low dwords of `values` (a loop: an array's `map` goes through memory).
#[inline(always)]
fn low_dwords<const L: usize>(values: &[u64; L]) -> [u32; L] {
    let mut out = [0u32; L];
    for i in 0..L {
        out[i] = values[i] as u32;
    }
    out
}

/// Lanes under a source's modifier and signedness.
#[inline(always)]
fn modified<const L: usize>(v: [u64; L], (m, signed): (SrcMod, bool)) -> [u64; L] {
    match m {
        SrcMod::None => v,
        m => v.map(|x| apply(m, signed, x)),
    }
}

/// Lanes `0..n` of a direct or immediate source, in an array of 32 (`lanes` at the exec
/// size, for the forms whose lane work is not specialised on it).
fn lanes_n(grf: &[u8], s: &S64, n: u32) -> [u64; 32] {
    fn widen<const L: usize>(lanes: [u64; L]) -> [u64; 32] {
        let mut out = [0u64; 32];
        out[..L].copy_from_slice(&lanes);
        out
    }
    match n {
        1 => widen(lanes::<1>(grf, s)),
        2 => widen(lanes::<2>(grf, s)),
        4 => widen(lanes::<4>(grf, s)),
        8 => widen(lanes::<8>(grf, s)),
        16 => widen(lanes::<16>(grf, s)),
        _ => lanes::<32>(grf, s),
    }
}

/// Stores the low `size` bytes of each value of `enabled` lanes into `bytes`, lane i at
/// `i · size · stride`.
pub(super) fn store_elements(bytes: &mut [u8], values: &[u64], enabled: u32, size: u32, stride: u32) {
    /// The stores of elements of `S` bytes (the size chosen once, not per lane).
    #[inline(always)]
    fn each<const S: usize>(bytes: &mut [u8], values: &[u64], enabled: u32, stride: usize) {
        let step = S * stride;
        let mut rest = enabled & super::control::size_mask(values.len() as u32);
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            super::operand::store_le(&mut bytes[lane * step..], S as u32, values[lane]);
        }
    }
    let stride = stride as usize;
    match size {
        1 => each::<1>(bytes, values, enabled, stride),
        2 => each::<2>(bytes, values, enabled, stride),
        4 => each::<4>(bytes, values, enabled, stride),
        _ => each::<8>(bytes, values, enabled, stride),
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
        S64::Dword(d) => {
            let v = fast::lanes_i64::<L>(grf, *d);
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = v[i] as u64;
            }
            out
        }
        S64::Words(off, signed) => {
            let (chunks, _) = grf[*off as usize..].as_chunks::<2>();
            let words: &[[u8; 2]; L] = chunks[..L].try_into().expect("span checked by the caller");
            let mut out = [0u64; L];
            for i in 0..L {
                let w = u16::from_le_bytes(words[i]);
                out[i] = if *signed { w as i16 as i64 as u64 } else { u64::from(w) };
            }
            out
        }
        S64::Gather(offsets, ty) => gathered::<L>(grf, offsets, *ty),
        // Read through `offsets` (see `source`).
        S64::Indirect(_) => [0; L],
        S64::Lanes(values) => {
            let mut out = [0u64; L];
            out.copy_from_slice(&values[..L]);
            out
        }
    }
}

/// Lane `lane` of a source as [`lanes`] reads it (an indirect source through its lane
/// offsets `indirect`), before its modifier.
#[inline(always)]
fn lane_value(grf: &[u8], s: &S64, indirect: Option<&[u32; 32]>, lane: usize) -> u64 {
    let load = |at: usize, ty: DataType| {
        fast::sign_extend(ty, super::operand::load_le(&grf[at..at + ty.size() as usize], ty.size())) as u64
    };
    match s {
        S64::Imm(v) => *v,
        S64::Scalar(off) => load(*off as usize, DataType::Uq),
        S64::Packed(off) => load(*off as usize + 8 * lane, DataType::Uq),
        S64::Dword(d) => {
            let ty = |signed: bool| if signed { DataType::D } else { DataType::Ud };
            match *d {
                D32::Imm(v, _) => v as u64,
                D32::Scalar(off, s) => load(off as usize, ty(s)),
                D32::Packed(off, s) => load(off as usize + 4 * lane, ty(s)),
                D32::Strided(off, s) => load(off as usize + 8 * lane, ty(s)),
            }
        }
        S64::Words(off, signed) => {
            load(*off as usize + 2 * lane, if *signed { DataType::W } else { DataType::Uw })
        }
        S64::Gather(offsets, ty) => load(offsets[lane] as usize, *ty),
        S64::Indirect(ind) => indirect.map_or(0, |o| load(o[lane] as usize, ind.ty)),
        S64::Lanes(values) => values[lane],
    }
}

/// `L` elements of type `ty` at `offsets`, extended to 64 bits.
#[inline(always)]
fn gathered<const L: usize>(grf: &[u8], offsets: &[u32; 32], ty: DataType) -> [u64; L] {
    /// The loads of elements of `S` bytes, each extended by `extend` (both chosen once, not
    /// per lane).
    #[inline(always)]
    fn each<const L: usize, const S: usize>(
        grf: &[u8],
        offsets: &[u32; 32],
        extend: impl Fn(u64) -> u64,
    ) -> [u64; L] {
        let mut out = [0u64; L];
        for (o, &at) in out.iter_mut().zip(offsets.iter()) {
            let mut b = [0u8; 8];
            b[..S].copy_from_slice(&grf[at as usize..at as usize + S]);
            *o = extend(u64::from_le_bytes(b));
        }
        out
    }
    match ty {
        DataType::B => each::<L, 1>(grf, offsets, |v| v as u8 as i8 as i64 as u64),
        DataType::Ub => each::<L, 1>(grf, offsets, |v| v),
        DataType::W => each::<L, 2>(grf, offsets, |v| v as u16 as i16 as i64 as u64),
        DataType::Uw => each::<L, 2>(grf, offsets, |v| v),
        DataType::D => each::<L, 4>(grf, offsets, |v| v as u32 as i32 as i64 as u64),
        DataType::Ud => each::<L, 4>(grf, offsets, |v| v),
        _ => match ty.size() {
            1 => each::<L, 1>(grf, offsets, |v| v),
            2 => each::<L, 2>(grf, offsets, |v| v),
            4 => each::<L, 4>(grf, offsets, |v| v),
            _ => each::<L, 8>(grf, offsets, |v| v),
        },
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

/// Compare flags of `a rel b` in the op's order (u64 or i64).
#[inline(always)]
fn ordered<const L: usize>(op: &QwordOp, a: &[u64; L], b: &[u64; L], rel: CondMod) -> u32 {
    if op.unsigned {
        fast::compare_lanes(a, b, rel)
    } else {
        fast::compare_lanes(&a.map(|v| v as i64), &b.map(|v| v as i64), rel)
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

/// The kernel of `kind` for exec size `n`.
fn kernel_for(kind: FastKind, n: u32) -> QwordKernel {
    fast::kernel_of_code!(kernel_sized, fast::kind_code(kind), n)
}

/// Whether `kind`'s result on a lane depends on that lane's two source values alone (and the
/// op's fixed fields), as [`lane`] computes it.
const fn lanewise(kind: FastKind) -> bool {
    use FastKind as K;
    !matches!(kind, K::Cmp(_) | K::Sel | K::Mad | K::Add3 | K::Bfn(_))
}

/// One lane of a [`lanewise`] kind from its sources `x` and `y` (extended and modified).
#[inline(always)]
fn lane(kind: FastKind, op: &QwordOp, x: u64, y: u64) -> u64 {
    use FastKind as K;
    let (wm, m) = (op.width_mask, op.count_mask);
    match kind {
        K::Mov => x,
        K::Add => x.wrapping_add(y),
        K::Mul => x.wrapping_mul(y),
        K::And => x & y,
        K::Or => x | y,
        K::Xor => x ^ y,
        K::Shl => x << (y & m),
        K::Shr => (x & wm) >> (y & m),
        K::Asr => ((x as i64) >> (y & m)) as u64,
        // Bits 32..63 of the product modulo 2^64: all a destination of at most 32 bits keeps.
        K::Mulh => ((x as i64).wrapping_mul(y as i64) >> 32) as u64,
        // The bit counts and reversal read src0's bits (32 at most).
        K::Cbit => (x & wm).count_ones() as u64,
        K::Fbh => super::alu_int::fbh((x & wm) as u32, op.signed0) as u64,
        K::Fbl => match (x & wm) as u32 {
            0 => 0xffff_ffff,
            v => v.trailing_zeros() as u64,
        },
        K::Lzd => ((x & wm) as u32).leading_zeros() as u64,
        // Sources of at most 32 bits, extended and modified: exact as i64.
        K::Div => fast::quotient_or_rest(true, x as i64, y as i64) as u64,
        K::Mod => fast::quotient_or_rest(false, x as i64, y as i64) as u64,
        K::Bfrev => ((x & wm) as u32).reverse_bits() as u64,
        K::Not => !x,
        // At src0's width w: left by y mod w and right by -y mod w (or the other way round).
        K::Rol | K::Ror => {
            let rm = wm.count_ones() as u64 - 1;
            let (l, r) = if kind == K::Rol {
                (y & rm, y.wrapping_neg() & rm)
            } else {
                (y.wrapping_neg() & rm, y & rm)
            };
            ((x & wm) << l | (x & wm) >> r) & wm
        }
        // `min` and `max`: src0 where it is the lesser (greater), in the op's order.
        K::Max | K::Min => {
            let order = if op.unsigned { x.cmp(&y) } else { (x as i64).cmp(&(y as i64)) };
            let wanted = if kind == K::Max { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less };
            if order == wanted {
                x
            } else {
                y
            }
        }
        _ => 0,
    }
}

/// The lanes of a packed q/uq register at GRF offset `at`.
#[inline(always)]
fn packed<const L: usize>(grf: &[u8], at: u32) -> Option<[u64; L]> {
    let (chunks, _) = grf.get(at as usize..)?.as_chunks::<8>();
    let words: &[[u8; 8]; L] = chunks.get(..L)?.try_into().ok()?;
    let mut out = [0u64; L];
    for i in 0..L {
        out[i] = u64::from_le_bytes(words[i]);
    }
    Some(out)
}

/// The lanes of a packed d/ud register at GRF offset `at`, extended to 64 bits by their type.
#[inline(always)]
fn packed_dwords<const L: usize>(grf: &[u8], at: u32, signed: bool) -> Option<[u64; L]> {
    let (chunks, _) = grf.get(at as usize..)?.as_chunks::<4>();
    let words: &[[u8; 4]; L] = chunks.get(..L)?.try_into().ok()?;
    let mut out = [0u64; L];
    for i in 0..L {
        let v = u32::from_le_bytes(words[i]);
        out[i] = if signed { v as i32 as i64 as u64 } else { u64::from(v) };
    }
    Some(out)
}

/// `lanes` under modifier `m` (of a type signed or not), in place, one loop per modifier:
/// [`modified`] for the direct forms, where its array `map` was left as an out-of-line call.
/// `modified` stays for the other paths, where this form in its place was slower
/// (`docs/design-history.md`, session 53).
#[inline(always)]
fn modify<const L: usize>(mut lanes: [u64; L], (m, signed): (SrcMod, bool)) -> [u64; L] {
    match m {
        SrcMod::None => {}
        SrcMod::Neg => lanes.iter_mut().for_each(|x| *x = apply(SrcMod::Neg, signed, *x)),
        SrcMod::Abs => lanes.iter_mut().for_each(|x| *x = apply(SrcMod::Abs, signed, *x)),
        SrcMod::NegAbs => lanes.iter_mut().for_each(|x| *x = apply(SrcMod::NegAbs, signed, *x)),
        SrcMod::Not => lanes.iter_mut().for_each(|x| *x = apply(SrcMod::Not, signed, *x)),
    }
    lanes
}

/// The lane work of a [`lanewise`] op in its commonest forms, straight from the GRF to the
/// GRF: src0 a packed register (q/uq, or d/ud extended), src1 one too or a value for every
/// lane, a packed qword or dword destination, every lane enabled. False, with nothing done,
/// for any other form. Each form of each source computes and stores on its own: lanes that
/// the forms merged went through the stack in stores of mixed widths, whose reload stalled
/// the kernel.
#[inline(always)]
fn direct<const L: usize>(grf: &mut [u8], op: &QwordOp, kind: FastKind, chen: u32) -> bool {
    let Some(dst) = op.dst else { return false };
    if !matches!((dst.size, dst.stride), (8, 1) | (4, 1)) || !fast::every_lane::<L>(chen) {
        return false;
    }
    let a = match op.srcs[0] {
        S64::Packed(x) => packed::<L>(grf, x),
        S64::Dword(D32::Packed(x, signed)) => packed_dwords::<L>(grf, x, signed),
        _ => return false,
    };
    let Some(a) = a else { return false };
    direct_from(grf, op, kind, dst, modify(a, op.mods[0]))
}

/// [`direct`] once src0's lanes `a` are read (a copy for each form of src0).
#[inline(always)]
fn direct_from<const L: usize>(grf: &mut [u8], op: &QwordOp, kind: FastKind, dst: QDst, a: [u64; L]) -> bool {
    let mut r = [0u64; L];
    let splat = match op.srcs[1] {
        S64::Imm(y) => Some(y),
        S64::Scalar(at) => packed::<1>(grf, at).map(|[y]| y),
        _ => None,
    };
    if let Some(y) = splat {
        let [y] = modify([y], op.mods[1]);
        for i in 0..L {
            r[i] = lane(kind, op, a[i], y);
        }
    } else {
        let b = match op.srcs[1] {
            S64::Packed(y) => packed::<L>(grf, y),
            S64::Dword(D32::Packed(y, signed)) => packed_dwords::<L>(grf, y, signed),
            _ => return false,
        };
        let Some(b) = b else { return false };
        let b = modify(b, op.mods[1]);
        for i in 0..L {
            r[i] = lane(kind, op, a[i], b[i]);
        }
    }
    let bytes = &mut grf[dst.base as usize..];
    if dst.size == 8 {
        fast::store_qwords(bytes, &r, u32::MAX);
    } else {
        fast::store_lanes(bytes, &low_dwords(&r), u32::MAX);
    }
    true
}

/// The kinds whose results' low 32 bits depend on their sources' low 32 bits alone (the
/// shift's count is taken modulo 32 for a destination of 32 bits or fewer).
const fn low_bits(kind: FastKind) -> bool {
    use FastKind as K;
    matches!(
        kind,
        K::Mov | K::Add | K::Mul | K::And | K::Or | K::Xor | K::Shl | K::Not | K::Mad | K::Add3 | K::Bfn(_)
    )
}

/// A [`low_bits`] op into a packed destination of dwords or words, on u32 lanes: the bits
/// the destination keeps are those of the 64-bit form, and sixteen lanes fit one vector
/// register. This is the form IGC gives most 32-bit arithmetic on DG2 and later (`add3`,
/// `bfn`, `mad`, and sources with a modifier, which the dword tier leaves to this one).
/// Sources: immediates, scalar and packed dwords, packed words (extended by their type),
/// the low dwords of packed qwords or of `<2;1,0>` dword pairs. False, with nothing done,
/// for any other form.
#[inline(always)]
fn narrow<const L: usize>(grf: &mut [u8], op: &QwordOp, kind: FastKind, chen: u32) -> bool {
    let Some(dst) = op.dst else { return false };
    if dst.stride != 1 || !matches!(dst.size, 2 | 4) {
        return false;
    }
    let three = matches!(kind, FastKind::Mad | FastKind::Add3 | FastKind::Bfn(_));
    let Some(a) = low_dwords_of::<L>(grf, &op.srcs[0], op.mods[0]) else { return false };
    let Some(b) = low_dwords_of::<L>(grf, &op.srcs[1], op.mods[1]) else { return false };
    let c = if three { low_dwords_of::<L>(grf, &op.srcs[2], op.mods[2]) } else { Some([0; L]) };
    let Some(c) = c else { return false };
    let mut r = [0u32; L];
    for i in 0..L {
        // `kind` is a constant here: the match folds away.
        r[i] = match kind {
            FastKind::Mov => a[i],
            FastKind::Add => a[i].wrapping_add(b[i]),
            FastKind::Mul => a[i].wrapping_mul(b[i]),
            FastKind::And => a[i] & b[i],
            FastKind::Or => a[i] | b[i],
            FastKind::Xor => a[i] ^ b[i],
            // The count modulo 32, the destination's width at most.
            FastKind::Shl => a[i] << (b[i] & 31),
            FastKind::Not => !a[i],
            FastKind::Mad => a[i].wrapping_mul(b[i]).wrapping_add(c[i]),
            FastKind::Add3 => a[i].wrapping_add(b[i]).wrapping_add(c[i]),
            _ => bfn(op.table, a[i], b[i], c[i]),
        };
    }
    let bytes = &mut grf[dst.base as usize..];
    if dst.size == 4 {
        fast::store_lanes(bytes, &r, chen);
    } else {
        fast::store_words(bytes, &r.map(|v| v as u16), chen);
    }
    true
}

/// The low 32 bits of source `s`'s lanes (extended by its type, then modified), for the
/// forms [`narrow`] takes.
#[inline(always)]
fn low_dwords_of<const L: usize>(grf: &[u8], s: &S64, (m, signed): (SrcMod, bool)) -> Option<[u32; L]> {
    let v = match *s {
        S64::Imm(v) => [v as u32; L],
        S64::Dword(D32::Scalar(at, _)) => dwords_at::<1>(grf, at, 4).map(|[v]| [v; L])?,
        S64::Dword(D32::Packed(at, _)) => dwords_at::<L>(grf, at, 4)?,
        S64::Dword(D32::Strided(at, _)) => dwords_at::<L>(grf, at, 8)?,
        // A qword's absolute value reads its high dword.
        S64::Packed(at) if !matches!(m, SrcMod::Abs | SrcMod::NegAbs) => dwords_at::<L>(grf, at, 8)?,
        S64::Words(at, signed) => packed_words::<L>(grf, at, signed)?,
        _ => return None,
    };
    // The modifier on the value extended to 64 bits, as the 64-bit form applies it: only
    // `abs` reads the extension (from 32 bits or fewer here).
    let wide = |x: u32| if signed { x as i32 as i64 as u64 } else { u64::from(x) };
    Some(match m {
        SrcMod::None => v,
        m => v.map(|x| apply(m, signed, wide(x)) as u32),
    })
}

/// `L` dwords from GRF offset `at`, `step` bytes apart.
#[inline(always)]
fn dwords_at<const L: usize>(grf: &[u8], at: u32, step: usize) -> Option<[u32; L]> {
    let bytes = grf.get(at as usize..at as usize + step * (L - 1) + 4)?;
    let mut out = [0u32; L];
    for (i, o) in out.iter_mut().enumerate() {
        let b = &bytes[step * i..step * i + 4];
        *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    Some(out)
}

/// The lanes of a packed w/uw register at GRF offset `at`, extended to 32 bits by their type.
#[inline(always)]
fn packed_words<const L: usize>(grf: &[u8], at: u32, signed: bool) -> Option<[u32; L]> {
    let (chunks, _) = grf.get(at as usize..)?.as_chunks::<2>();
    let words: &[[u8; 2]; L] = chunks.get(..L)?.try_into().ok()?;
    let mut out = [0u32; L];
    for i in 0..L {
        let v = u16::from_le_bytes(words[i]);
        out[i] = if signed { v as i16 as i32 as u32 } else { u32::from(v) };
    }
    Some(out)
}

/// The lane work of qword op `op` of kind `K` and exec size `L` (a [`QwordKernel`]).
fn qword_kernel<const L: usize, const K: u8>(
    grf: &mut [u8],
    op: &QwordOp,
    offsets: Option<&Offsets>,
    chen: u32,
    em_part: u32,
    pmask: u32,
    out: Option<&mut [u64; 32]>,
) -> Option<u32> {
    let kind = const { fast::kind_of_code(K) };
    if const { L >= 8 && low_bits(fast::kind_of_code(K)) }
        && out.is_none()
        && narrow::<L>(grf, op, kind, chen)
    {
        return None;
    }
    if const { L >= 8 && lanewise(fast::kind_of_code(K)) }
        && out.is_none()
        && direct::<L>(grf, op, kind, chen)
    {
        return None;
    }
    let a = source::<L>(grf, op, 0, offsets);
    let b = source::<L>(grf, op, 1, offsets);
    let values = match kind {
        FastKind::Cmp(rel) => {
            let flags = ordered(op, &a, &b, rel);
            if op.pred_dst.is_some() {
                return Some(flags);
            }
            let mut out = [0u64; L];
            for (i, o) in out.iter_mut().enumerate() {
                *o = 0u64.wrapping_sub((flags >> i & 1) as u64);
            }
            out
        }
        FastKind::Mad | FastKind::Add3 | FastKind::Bfn(_) => {
            let c = source::<L>(grf, op, 2, offsets);
            let mut out = [0u64; L];
            for i in 0..L {
                // `kind` is a constant here: the match folds away.
                out[i] = match kind {
                    FastKind::Mad => a[i].wrapping_mul(b[i]).wrapping_add(c[i]),
                    FastKind::Add3 => a[i].wrapping_add(b[i]).wrapping_add(c[i]),
                    _ => bfn(op.table, a[i], b[i], c[i]),
                };
            }
            out
        }
        FastKind::Sel => {
            let mut out = [0u64; L];
            for i in 0..L {
                out[i] = if pmask >> i & 1 != 0 { a[i] } else { b[i] };
            }
            out
        }
        _ => zip(&a, &b, |x, y| lane(kind, op, x, y)),
    };
    // `sel` writes under the execution mask alone: its predicate chooses.
    store(grf, op, &values, if kind == FastKind::Sel { em_part } else { chen }, out)
}

/// Stores a kernel's results on lanes `enabled`: into the register destination, or into
/// `out` for an indirect destination.
#[inline(always)]
fn store<const L: usize>(
    grf: &mut [u8],
    op: &QwordOp,
    values: &[u64; L],
    enabled: u32,
    out: Option<&mut [u64; 32]>,
) -> Option<u32> {
    if let Some(out) = out {
        out[..L].copy_from_slice(values);
        return None;
    }
    let dst = op.dst?;
    let bytes = &mut grf[dst.base as usize..];
    match (dst.size, dst.stride) {
        (8, 1) => fast::store_qwords(bytes, values, enabled),
        (4, 1) => fast::store_lanes(bytes, &low_dwords(values), enabled),
        (2, 1) => fast::store_words(bytes, &values.map(|v| v as u16), enabled),
        (size, stride) => store_elements(bytes, values, enabled, size, stride),
    }
    None
}

fn exact_kernel_for(n: u32) -> QwordKernel {
    match n {
        1 => exact_kernel::<1>,
        2 => exact_kernel::<2>,
        4 => exact_kernel::<4>,
        8 => exact_kernel::<8>,
        16 => exact_kernel::<16>,
        _ => exact_kernel::<32>,
    }
}

/// Lanes `L` of source `i` as the general ALU holds them (`alu::load_ints`): extended by
/// type and modified, exactly. Values of 32 bits at most and q ones (whose modifier wraps in
/// 64 bits there too) are exact in i64; a uq value is zero-extended and modified in i128.
#[inline(always)]
fn exact_source<const L: usize>(grf: &[u8], op: &QwordOp, i: usize, offsets: Option<&Offsets>) -> [i128; L] {
    if !op.uq[i] {
        return source::<L>(grf, op, i, offsets).map(|v| v as i64 as i128);
    }
    let raw = match (&op.srcs[i], offsets) {
        (S64::Indirect(ind), Some(offsets)) => gathered::<L>(grf, &offsets[i], ind.ty),
        (s, _) => lanes::<L>(grf, s),
    };
    raw.map(|v| {
        let v = i128::from(v);
        match op.mods[i].0 {
            SrcMod::None | SrcMod::Abs => v,
            SrcMod::Neg | SrcMod::NegAbs => -v,
            SrcMod::Not => !v,
        }
    })
}

/// The lane work of an op that needs its lanes' exact values (a [`QwordKernel`]): `.sat`
/// (the result clamped to the destination type's range), an order between a uq source and a
/// signed one, `asr` of a uq one. The arithmetic, logic, shifts, moves and orders are worked
/// out in i128 from the exact sources, as the general ALU does; the other kinds (`.sat` on
/// sources of 32 bits at most, which `fast::compile` ensures) take the op's own kernel,
/// whose 64-bit lanes are exact there, then the clamp.
fn exact_kernel<const L: usize>(
    grf: &mut [u8],
    op: &QwordOp,
    offsets: Option<&Offsets>,
    chen: u32,
    em_part: u32,
    pmask: u32,
    out: Option<&mut [u64; 32]>,
) -> Option<u32> {
    use FastKind as K;
    let exact = |i: usize| exact_source::<L>(grf, op, i, offsets);
    let each2 = |f: &dyn Fn(i128, i128) -> i128| {
        let (a, b) = (exact(0), exact(1));
        std::array::from_fn::<i128, L, _>(|i| f(a[i], b[i]))
    };
    let flags = |rel: CondMod| fast::compare_lanes(&exact(0), &exact(1), rel);
    let sat = op.sat.is_some();
    let mul = if sat { i128::saturating_mul } else { i128::wrapping_mul };
    let (m, wm) = (op.count_mask as i128, op.width_mask as i128);
    let values: [i128; L] = match op.kind {
        K::Cmp(rel) => {
            let flags = flags(rel);
            if op.pred_dst.is_some() {
                return Some(flags);
            }
            std::array::from_fn(|i| -i128::from(flags >> i & 1))
        }
        K::Mov => exact(0),
        K::Not => exact(0).map(|v| !v),
        K::Add => each2(&|x, y| x + y),
        K::Mul => each2(&|x, y| mul(x, y)),
        K::Mulh => each2(&|x, y| x.wrapping_mul(y) >> 32),
        K::And => each2(&|x, y| x & y),
        K::Or => each2(&|x, y| x | y),
        K::Xor => each2(&|x, y| x ^ y),
        K::Shl => each2(&|x, y| x << (y & m)),
        K::Shr => each2(&|x, y| (x & wm) >> (y & m)),
        K::Asr => each2(&|x, y| x >> (y & m)),
        K::Mad | K::Add3 => {
            let (a, b, c) = (exact(0), exact(1), exact(2));
            let add = if sat { i128::saturating_add } else { i128::wrapping_add };
            std::array::from_fn(|i| {
                if op.kind == K::Mad {
                    add(mul(a[i], b[i]), c[i])
                } else {
                    a[i] + b[i] + c[i]
                }
            })
        }
        K::Sel | K::Min | K::Max => {
            let first = match op.kind {
                K::Sel => pmask,
                K::Max => flags(CondMod::Gt),
                _ => flags(CondMod::Lt),
            };
            let (a, b) = (exact(0), exact(1));
            std::array::from_fn(|i| if first >> i & 1 != 0 { a[i] } else { b[i] })
        }
        kind => {
            let mut values = [0u64; 32];
            kernel_for(kind, L as u32)(grf, op, offsets, chen, em_part, pmask, Some(&mut values));
            std::array::from_fn(|i| values[i] as i64 as i128)
        }
    };
    let (lo, hi) = op.sat.unwrap_or((i128::MIN, i128::MAX));
    let enabled = if op.kind == K::Sel { em_part } else { chen };
    store(grf, op, &values.map(|v| v.clamp(lo, hi) as u64), enabled, out)
}

/// The three-input boolean function of truth table `table`: result bit = table bit
/// (s0 + 2·s1 + 4·s2), as the union of the minterms the table selects.
#[inline(always)]
fn bfn<T>(table: u8, x: T, y: T, z: T) -> T
where
    T: Copy + Default + std::ops::Not<Output = T> + std::ops::BitAnd<Output = T> + std::ops::BitOrAssign,
{
    let mut r = T::default();
    for k in 0..8 {
        if table >> k & 1 != 0 {
            let p = if k & 1 != 0 { x } else { !x };
            let q = if k & 2 != 0 { y } else { !y };
            let t = if k & 4 != 0 { z } else { !z };
            r |= p & q & t;
        }
    }
    r
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place qword op, reporting its write as [`Ctx::run_dword`] does.
    #[inline(always)]
    pub fn run_qword(&mut self, op: &QwordOp, chen: u32, em_part: u32, pmask: u32) -> Result<(), FaultKind> {
        if op.indirect_src || op.dst_indirect.is_some() {
            let enabled = chen & super::control::size_mask(op.en.size());
            if let (true, Some(ind)) =
                (op.one_lane_move && enabled.is_power_of_two(), op.dst_indirect.as_deref())
            {
                return self.move_one_lane(op, ind, enabled.trailing_zeros());
            }
            return self.run_qword_indirect(op, chen, em_part, pmask);
        }
        self.run_qword_with(op, None, chen, em_part, pmask)
    }

    /// The one enabled lane of a [`QwordOp::one_lane_move`], read and stored through
    /// [`Ctx::write_indirect_lane`] without the indirect form's preparations for any op.
    #[inline(always)]
    fn move_one_lane(&mut self, op: &QwordOp, ind: &IndirectOperand, lane: u32) -> Result<(), FaultKind> {
        self.grf(0, op.need)?;
        let value = lane_value(&self.thread.grf, &op.srcs[0], None, lane as usize);
        self.write_indirect_lane(ind, lane, value, op.dst_slot)
    }

    /// The lane work and the store into a direct destination or a predicate; `offsets`
    /// holds the indirect sources' lane offsets.
    #[inline(always)]
    fn run_qword_with(
        &mut self,
        op: &QwordOp,
        offsets: Option<&Offsets>,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<(), FaultKind> {
        let n = op.en.size();
        let enabled = (if op.kind == FastKind::Sel { em_part } else { chen }) & super::control::size_mask(n);
        // The kernel's operands lie below `need` (indirect sources are checked apart).
        self.grf(0, op.need)?;
        let reported = op.dst.filter(|_| O::ACTIVE && enabled != 0);
        if let Some(dst) = reported {
            self.keep_old(dst.base, dst.base + dst.span(n));
        }
        let flags = (op.kernel)(&mut self.thread.grf, op, offsets, chen, em_part, pmask, None);
        if let (Some(flags), Some(p)) = (flags, op.pred_dst) {
            let off = op.en.offset();
            self.write_pred(p, chen << off, flags << off);
        } else if let Some(dst) = reported {
            let region = Region::dst(dst.stride as u8);
            self.report_written(dst.base, dst.base + dst.span(n), region, dst.size, n, enabled);
        }
        Ok(())
    }

    /// [`Ctx::run_qword`] of an op with an indirect operand: each indirect source's lane
    /// offsets found and checked (every lane, in order, as the general path reads them), the
    /// lane work, then the results written through the destination.
    #[inline(never)]
    fn run_qword_indirect(
        &mut self,
        op: &QwordOp,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<(), FaultKind> {
        let n = op.en.size();
        // Only a destination through address registers (a private array's element written at
        // a computed index, the common case) needs no source offsets.
        let mut offsets: Option<Offsets> = None;
        if op.indirect_src {
            let offsets = offsets.insert([[0; 32]; 3]);
            for (i, s) in op.srcs.iter().enumerate() {
                if let S64::Indirect(ind) = s {
                    self.indirect_offsets(ind, i + 1, n, &mut offsets[i])?;
                }
            }
        }
        let offsets = offsets.as_ref();
        let Some(dst) = &op.dst_indirect else {
            return self.run_qword_with(op, offsets, chen, em_part, pmask);
        };
        // The direct operands lie below `need`.
        self.grf(0, op.need)?;
        let enabled = if op.kind == FastKind::Sel { em_part } else { chen };
        if op.kind == FastKind::Mov && op.sat.is_none() {
            // A move of one lane reads that lane alone (a private array's element stored at
            // a computed index writes one of sixteen).
            let (m, signed) = op.mods[0];
            let lanes = offsets.map(|o| &o[0]);
            let rest = enabled & super::control::size_mask(n);
            if rest.is_power_of_two() {
                // One lane: read, then written, with no other lane's read to come.
                let lane = rest.trailing_zeros();
                let value = apply(m, signed, lane_value(&self.thread.grf, &op.srcs[0], lanes, lane as usize));
                return self.write_indirect_lane(dst, lane, value, op.dst_slot);
            }
        }
        let mut values = [0u64; 32];
        (op.kernel)(&mut self.thread.grf, op, offsets, chen, em_part, pmask, Some(&mut values));
        self.write_indirect(dst, n, enabled, &values)
    }
}

/// `addc`, `subb` and `madw` in place: two destinations, the result and the carry (or
/// borrow), or the product's low and high dwords, from sources of any register region or
/// immediates, as the general ALU computes them: for `addc`/`subb` each source (modified,
/// extended) taken at the destination's width.
#[derive(Clone, Debug)]
pub struct CarryOp {
    kind: Wide,
    srcs: [S64; 3],
    mods: [(SrcMod, bool); 3],
    /// The result's destination, then the carry's (or the high dwords').
    dsts: [QDst; 2],
    /// The destination's bits set.
    width_mask: u64,
    width: u32,
    need: u32,
    pub en: Enables,
}

/// The two-destination operations of [`CarryOp`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Wide {
    Addc,
    Subb,
    /// src0 · src1 + src2 of dwords: its low dwords, then its high dwords in the registers
    /// after the low ones' (MADW.md).
    Madw,
}

/// The in-place form of `addc`/`subb`/`madw`, where the destinations are direct registers
/// and the sources direct or immediate integers (dwords for `madw`), without saturation.
/// The program's register size places `madw`'s high dwords; an instruction whose
/// destinations reach past the GRF is left to the general path, which names the fault.
pub fn compile_carry(inst: &Inst, program: &crate::program::Program) -> Option<CarryOp> {
    use crate::isa::Opcode;
    let kind = match inst.op {
        Opcode::Addc => Wide::Addc,
        Opcode::Subb => Wide::Subb,
        Opcode::Madw => Wide::Madw,
        _ => return None,
    };
    let n = inst.exec.size;
    if inst.sat || !fast::kernel_size(n) {
        return None;
    }
    let dword = |op: &Operand| matches!(super::operand::operand_type(op), Some(DataType::D | DataType::Ud));
    let (d0, d1, srcs) = match (kind, inst.operands.as_slice()) {
        (Wide::Madw, [d0, s @ ..]) if s.len() == 3 && dword(d0) && s.iter().all(dword) => (d0, None, s),
        (Wide::Addc | Wide::Subb, [d0, d1, s @ ..]) if s.len() == 2 => (d0, Some(d1), s),
        _ => return None,
    };
    let dst = |op: &Operand| match op {
        Operand::Direct(d) if !d.is_null && d.region.width == 1 && d.region.vstride >= 1 && d.ty.is_int() => {
            Some(QDst { base: d.base, size: d.ty.size(), stride: d.region.vstride as u32 })
        }
        _ => None,
    };
    let src = |op: &Operand| match fast::fast_src(op)? {
        FastSrc::Indirect(_) => None,
        s => Some((s64(&s, n)?, modifier(&s))),
    };
    let low = dst(d0)?;
    let high = match d1 {
        Some(d1) => dst(d1)?,
        None => QDst { base: low.base + super::step::madw_high_offset(n, low.size, program.grf_size), ..low },
    };
    let dsts = [low, high];
    // addc and subb have no third source: an immediate 0 that nothing reads.
    let mut parts: [(S64, (SrcMod, bool)); 3] = std::array::from_fn(|_| (S64::Imm(0), (SrcMod::None, false)));
    for (part, op) in parts.iter_mut().zip(srcs) {
        *part = src(op)?;
    }
    let [(a, ma), (b, mb), (c, mc)] = parts;
    let width = super::operand::operand_type(d0)?.bits();
    let srcs = [a, b, c];
    let need =
        srcs.iter().map(|s| span(s, n)).chain(dsts.iter().map(|d| d.base + d.span(n))).max().unwrap_or(0);
    if need > program.grf_bytes {
        return None;
    }
    let width_mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    Some(CarryOp {
        kind,
        srcs,
        mods: [ma, mb, mc],
        dsts,
        width_mask,
        width,
        need,
        en: Enables::new(inst.exec, inst.pred),
    })
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place `addc`/`subb`/`madw`: the result, then the carry (the high dwords),
    /// each stored and reported as the general path stores and reports it.
    pub fn run_carry(&mut self, op: &CarryOp, chen: u32) -> Result<(), FaultKind> {
        match op.en.size() {
            1 => self.carry_sized::<1>(op, chen),
            2 => self.carry_sized::<2>(op, chen),
            4 => self.carry_sized::<4>(op, chen),
            8 => self.carry_sized::<8>(op, chen),
            16 => self.carry_sized::<16>(op, chen),
            _ => self.carry_sized::<32>(op, chen),
        }
    }

    /// [`Ctx::run_carry`] at exec size `L`: the operation chosen once, then a loop over the
    /// lanes without a branch (emulated 64-bit arithmetic is made of these on targets
    /// without 64-bit integer multiplies).
    #[inline(always)]
    fn carry_sized<const L: usize>(&mut self, op: &CarryOp, chen: u32) -> Result<(), FaultKind> {
        self.grf(0, op.need)?;
        let grf = &self.thread.grf;
        // Each source read apart (an array's `map` over the two moved their lanes through
        // memory: a quarter of hash64's time on acm-g10).
        let a = modified(lanes::<L>(grf, &op.srcs[0]), op.mods[0]);
        let b = modified(lanes::<L>(grf, &op.srcs[1]), op.mods[1]);
        let wm = op.width_mask;
        let enabled = chen & super::control::size_mask(L as u32);
        if op.width == 32 && op.dsts.iter().all(|d| (d.size, d.stride) == (4, 1)) {
            // Into packed dwords (the common case), made as dwords by one loop: lanes held as
            // qwords, stored in pieces and loaded whole, made the stores below wait.
            let (mut lo, mut hi) = ([0u32; L], [0u32; L]);
            match op.kind {
                Wide::Addc => {
                    for i in 0..L {
                        let sum = u64::from(a[i] as u32) + u64::from(b[i] as u32);
                        (lo[i], hi[i]) = (sum as u32, (sum >> 32) as u32);
                    }
                }
                Wide::Subb => {
                    for i in 0..L {
                        let (x, y) = (a[i] as u32, b[i] as u32);
                        (lo[i], hi[i]) = (x.wrapping_sub(y), u32::from(x < y));
                    }
                }
                Wide::Madw => {
                    let c = modified(lanes::<L>(grf, &op.srcs[2]), op.mods[2]);
                    for i in 0..L {
                        let full = a[i].wrapping_mul(b[i]).wrapping_add(c[i]);
                        (lo[i], hi[i]) = (full as u32, (full >> 32) as u32);
                    }
                }
            }
            if enabled != 0 {
                self.put_dwords(op.dsts[0].base, &lo, enabled);
                self.put_dwords(op.dsts[1].base, &hi, enabled);
            }
            return Ok(());
        }
        let (mut lo, mut hi) = ([0u64; L], [0u64; L]);
        match op.kind {
            // At the destination's width, exactly: the masked sources' sum has at most one
            // bit more, which is the carry (beyond 64 bits, the addition's overflow).
            Wide::Addc if op.width < 64 => {
                for i in 0..L {
                    let sum = (a[i] & wm) + (b[i] & wm);
                    (lo[i], hi[i]) = (sum & wm, sum >> op.width);
                }
            }
            Wide::Addc => {
                for i in 0..L {
                    let (sum, carry) = a[i].overflowing_add(b[i]);
                    (lo[i], hi[i]) = (sum, carry as u64);
                }
            }
            Wide::Subb => {
                for i in 0..L {
                    let (x, y) = (a[i] & wm, b[i] & wm);
                    (lo[i], hi[i]) = (x.wrapping_sub(y) & wm, (x < y) as u64);
                }
            }
            // Bits 0..63 of the exact sum of the extended sources' product and src2 are
            // those of the sum modulo 2^64.
            Wide::Madw => {
                let c = modified(lanes::<L>(grf, &op.srcs[2]), op.mods[2]);
                for i in 0..L {
                    let full = a[i].wrapping_mul(b[i]).wrapping_add(c[i]);
                    (lo[i], hi[i]) = (full & wm, (full >> 32) & wm);
                }
            }
        }
        if enabled == 0 {
            return Ok(());
        }
        for (dst, values) in op.dsts.iter().zip([&lo, &hi]) {
            let (at, end) = (dst.base as usize, (dst.base + dst.span(L as u32)) as usize);
            self.keep_old(at as u32, end as u32);
            let bytes = &mut self.thread.grf[at..end];
            match (dst.size, dst.stride) {
                (4, 1) => fast::store_lanes(bytes, &low_dwords(values), enabled),
                (8, 1) => fast::store_qwords(bytes, values, enabled),
                (size, stride) => store_elements(bytes, values, enabled, size, stride),
            }
            let region = Region::dst(dst.stride as u8);
            self.report_written(at as u32, end as u32, region, dst.size, L as u32, enabled);
        }
        Ok(())
    }
}

/// `addr_add` in place: address register elements (or a variable's address) plus integer
/// offsets, into address register elements, as the general path computes them (the offset
/// extended by its type, the sum kept to 32 bits).
#[derive(Clone, Debug)]
pub struct AddrAddOp {
    base: AddrBase,
    offset: S64,
    /// The destination's first slot and element, and its variable's element count.
    dst: (u32, u32, u32),
    need: u32,
    pub en: Enables,
}

/// The address `addr_add` adds to.
#[derive(Copy, Clone, Debug)]
enum AddrBase {
    /// `&V[off]`: the same GRF address for every lane.
    Const(u32),
    /// Address register elements from `elem`, `width` of them repeated: the variable's first
    /// slot, `elem`, `width` and its element count.
    Reg { slot: u32, elem: u32, width: u32, num_elts: u32 },
}

/// `setp` from a register or a vector immediate (SETP.md): each lane's bit 0, or from a
/// scalar, bit i of its value for lane i (every lane of the execution size, whatever the
/// channel enables).
#[derive(Clone, Debug)]
pub struct SetpOp {
    pub pred: PredId,
    src: S64,
    /// The source's bits within its type's width, and whether it is a scalar.
    width_mask: u64,
    scalar: bool,
    /// GRF bytes the source reaches.
    need: u32,
    pub en: Enables,
}

/// The in-place form of `setp` from a register or a vector immediate (an integer one,
/// direct, without a modifier, which `setp` would ignore).
pub fn compile_setp(inst: &Inst) -> Option<SetpOp> {
    let [Operand::Pred(pred), src] = inst.operands.as_slice() else { return None };
    let n = inst.exec.size;
    let f = fast::fast_src(src)?;
    if !fast::kernel_size(n) || matches!(f, FastSrc::Indirect(_)) || fast::has_modifier(&f) {
        return None;
    }
    // As the general path reads it, an immediate (a vector one too: its lane 0) is a scalar.
    let scalar = match src {
        Operand::Direct(d) => d.region == Region::scalar(),
        _ => true,
    };
    let bits = fast::src_ty(&f).bits();
    let src = s64(&f, n)?;
    Some(SetpOp {
        pred: *pred,
        need: span(&src, n),
        src,
        width_mask: if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 },
        scalar,
        en: Enables::new(inst.exec, inst.pred),
    })
}

/// The in-place form of `addr_add`, where the offset is a direct or immediate integer.
pub fn compile_addr_add(inst: &Inst, program: &crate::program::Program) -> Option<AddrAddOp> {
    let n = inst.exec.size;
    if inst.op != crate::isa::Opcode::AddrAdd || !fast::kernel_size(n) {
        return None;
    }
    let [Operand::Addr(d), src0, src1] = inst.operands.as_slice() else { return None };
    let base = match src0 {
        Operand::AddrOf(a) => AddrBase::Const(a.address),
        Operand::Addr(a) => {
            let var = program.addr(a.addr);
            AddrBase::Reg { slot: var.slot, elem: a.elem, width: a.width.max(1), num_elts: var.num_elts }
        }
        _ => return None,
    };
    let offset = match fast::fast_src(src1)? {
        FastSrc::Indirect(_) => return None,
        s => s64(&s, n)?,
    };
    let var = program.addr(d.addr);
    Some(AddrAddOp {
        base,
        need: span(&offset, n),
        offset,
        dst: (var.slot, d.elem, var.num_elts),
        en: Enables::new(inst.exec, inst.pred),
    })
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place `setp` under the channel enables `chen`: false, with nothing done,
    /// when its source reaches past the register file (the general path faults there).
    pub fn run_setp(&mut self, op: &SetpOp, chen: u32) -> Result<bool, FaultKind> {
        if op.need as usize > self.thread.grf.len() {
            return Ok(false);
        }
        let n = op.en.size();
        let lanes = lanes_n(&self.thread.grf, &op.src, n);
        let size = super::control::size_mask(n);
        let (mask, bits) = if op.scalar {
            (size, (lanes[0] & op.width_mask) as u32 & size)
        } else {
            (chen & size, (0..n as usize).fold(0u32, |b, lane| b | ((lanes[lane] & 1) as u32) << lane))
        };
        let off = op.en.offset();
        self.write_pred(op.pred, mask << off, bits << off);
        Ok(true)
    }

    /// Runs an in-place `addr_add` under the channel enables `chen`.
    pub fn run_addr_add(&mut self, op: &AddrAddOp, chen: u32) -> Result<(), FaultKind> {
        match op.en.size() {
            1 => self.addr_add_sized::<1>(op, chen),
            2 => self.addr_add_sized::<2>(op, chen),
            4 => self.addr_add_sized::<4>(op, chen),
            8 => self.addr_add_sized::<8>(op, chen),
            16 => self.addr_add_sized::<16>(op, chen),
            _ => self.addr_add_sized::<32>(op, chen),
        }
    }

    /// [`Ctx::run_addr_add`] of `L` lanes: the sums of every lane, then the enabled lanes'
    /// writes in order, the first past the destination's variable faulting there.
    #[inline(always)]
    fn addr_add_sized<const L: usize>(&mut self, op: &AddrAddOp, chen: u32) -> Result<(), FaultKind> {
        if op.need as usize > self.thread.grf.len() {
            return Err(FaultKind::RegionOutOfBounds { operand: 2, offset: 0, len: op.need });
        }
        let mut sum = [0u64; L];
        match op.base {
            AddrBase::Const(address) => sum = [address as u64; L],
            AddrBase::Reg { slot, elem, width, num_elts } => {
                for (lane, s) in sum.iter_mut().enumerate() {
                    let e = elem + lane as u32 % width;
                    let fault = FaultKind::AddressOutOfBounds { operand: 1, element: e };
                    *s = self.addr_slot(slot + e).filter(|_| e < num_elts).ok_or(fault)? as u64;
                }
            }
        }
        let offsets = lanes::<L>(&self.thread.grf, &op.offset);
        let (slot, elem, num_elts) = op.dst;
        let enabled = chen & super::control::size_mask(L as u32);
        // Lanes below `top` hold every enabled one: their elements, when all exist and lie in
        // the address file, are written without a check each.
        let top = 32 - enabled.leading_zeros();
        let first = (slot + elem) as usize;
        if elem + top > num_elts || first + top as usize > self.thread.addrs.len() {
            return self.addr_add_checked(op, chen, &sum, &offsets);
        }
        let cells = &mut self.thread.addrs[first..first + top as usize];
        let mut rest = enabled;
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let value = sum[lane].wrapping_add(offsets[lane]) as u32;
            let old = std::mem::replace(&mut cells[lane], value);
            if O::ACTIVE && old != value {
                self.obs.addr(self.tid, slot + elem + lane as u32, old, value);
            }
        }
        Ok(())
    }

    /// The enabled lanes' writes one by one, each element checked: the first past the
    /// destination's variable (or the address file) faults, the lanes before it written.
    #[cold]
    fn addr_add_checked(
        &mut self,
        op: &AddrAddOp,
        chen: u32,
        sum: &[u64],
        offsets: &[u64],
    ) -> Result<(), FaultKind> {
        let (slot, elem, num_elts) = op.dst;
        let mut rest = chen & super::control::size_mask(sum.len() as u32);
        while rest != 0 {
            let lane = rest.trailing_zeros();
            rest &= rest - 1;
            let e = elem + lane;
            if e >= num_elts {
                return Err(FaultKind::AddressOutOfBounds { operand: 0, element: e });
            }
            let value = sum[lane as usize].wrapping_add(offsets[lane as usize]) & 0xffff_ffff;
            self.write_addr(slot + e, value as u32)?;
        }
        Ok(())
    }
}
