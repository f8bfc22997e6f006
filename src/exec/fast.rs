//! The integer fast forms: which integer instructions have one (`compile`, decided once per
//! instruction when the interpreter is built: add, add3, mul, mad, mulh, logic, bfn, shifts,
//! mov, cmp, sel, min/max and the bit counts on b/w/d/q types, with `.sat`), and the in-place
//! dword tier that runs the packed-dword ones. `qword.rs` runs the others on 64-bit lanes.
//! Each gives exactly what `alu::eval` gives (generated tests compare them bit for bit).

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use super::step::Enables;
use crate::isa::{
    CondMod, DataType, DirectOperand, IndirectOperand, Opcode, Operand, PredId, Region, SrcMod, SubOp,
};
use crate::program::Inst;

/// A source the fast path reads.
#[derive(Clone, Debug)]
pub enum FastSrc {
    /// An immediate, extended to i64 by its type, and that type (shifts and compares read it).
    Imm(i64, DataType),
    Reg {
        base: u32,
        region: Region,
        ty: DataType,
        modifier: SrcMod,
    },
    /// Through an address register: each lane's address checked as the general path checks
    /// it (`Ctx::indirect_address`).
    Indirect(Box<IndirectOperand>),
    /// A `:v` or `:uv` immediate: each lane's value (eight 4-bit elements, repeated),
    /// extended by the type it expands to (w or uw).
    Vector(Box<[i64; 32]>, DataType),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FastKind {
    Mov,
    Add,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Asr,
    Sel,
    /// Compare to a predicate (`Some`) or to a register.
    Cmp(CondMod),
    Min,
    Max,
    /// The high dword of a 32-bit product.
    Mulh,
    /// src0 · src1 + src2.
    Mad,
    /// src0 + src1 + src2.
    Add3,
    /// The three-input boolean function of this truth table (BFN.md).
    Bfn(u8),
    /// The one-source bit counts and reversal (of the source's bits, 32 at most).
    Cbit,
    Fbh,
    Fbl,
    Lzd,
    Bfrev,
    /// Integer quotient and remainder, truncated toward zero (DIV.md, MOD.md: sources and
    /// destination of 32 bits at most); by zero as the general ALU defines it.
    Div,
    Mod,
    /// The bitwise complement.
    Not,
    /// Rotations of src0's bits (at src0's width) by src1 modulo that width.
    Rol,
    Ror,
}

impl FastKind {
    /// The one-source bit counts and reversal.
    fn is_bit_op(self) -> bool {
        matches!(self, FastKind::Cbit | FastKind::Fbh | FastKind::Fbl | FastKind::Lzd | FastKind::Bfrev)
    }
}

/// One pre-decoded fast instruction.
#[derive(Clone, Debug)]
pub struct FastOp {
    pub kind: FastKind,
    pub srcs: [FastSrc; 3],
    /// Type of src0 (for logical/arithmetic shift widths).
    pub src0_ty: DataType,
    pub dst_ty: DataType,
    /// Whether compares and min/max order the lanes as unsigned 64-bit values: both sources
    /// of unsigned types, one of them uq (above 2^63, as i64 it would be negative).
    pub(super) unsigned: bool,
    /// Whether the lanes need their exact values (i128, as the general ALU holds them): for
    /// `.sat`, for an order between a uq source and a signed one, for `asr` of a uq one.
    pub(super) exact: bool,
}

pub(super) fn int_ty(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::B
            | DataType::Ub
            | DataType::W
            | DataType::Uw
            | DataType::D
            | DataType::Ud
            | DataType::Q
            | DataType::Uq
    )
}

/// Raw `bits` of an integer type extended to i64 by the type (q and uq as they are).
pub(super) fn sign_extend(ty: DataType, bits: u64) -> i64 {
    match ty {
        DataType::B => bits as u8 as i8 as i64,
        DataType::Ub => bits as u8 as i64,
        DataType::W => bits as u16 as i16 as i64,
        DataType::Uw => bits as u16 as i64,
        DataType::D => bits as u32 as i32 as i64,
        DataType::Ud => bits as u32 as i64,
        _ => bits as i64,
    }
}

pub(super) fn fast_src(op: &Operand) -> Option<FastSrc> {
    match op {
        Operand::Imm(imm) if int_ty(imm.ty) => Some(FastSrc::Imm(sign_extend(imm.ty, imm.bits), imm.ty)),
        Operand::Direct(DirectOperand { base, region, ty, modifier, is_null: false, .. }) if int_ty(*ty) => {
            Some(FastSrc::Reg { base: *base, region: *region, ty: *ty, modifier: *modifier })
        }
        Operand::Indirect(ind) if int_ty(ind.ty) => Some(FastSrc::Indirect(Box::new(ind.clone()))),
        Operand::Imm(imm) if matches!(imm.ty, DataType::V | DataType::Uv) => {
            let (ty, lanes) = super::alu::expand_vector_imm(imm.ty, imm.bits);
            Some(FastSrc::Vector(Box::new(lanes.map(|bits| sign_extend(ty, bits))), ty))
        }
        _ => None,
    }
}

pub(super) fn src_ty(s: &FastSrc) -> DataType {
    match s {
        FastSrc::Imm(_, ty) | FastSrc::Reg { ty, .. } | FastSrc::Vector(_, ty) => *ty,
        FastSrc::Indirect(ind) => ind.ty,
    }
}

/// Whether the in-place kernels have a specialisation for exec size `n`.
pub(super) fn kernel_size(n: u32) -> bool {
    matches!(n, 1 | 2 | 4 | 8 | 16 | 32)
}

/// The fast form of `inst`, if it has one.
pub fn compile(inst: &Inst) -> Option<FastOp> {
    let ops = &inst.operands;
    let kind = match (inst.op, &inst.sub) {
        (Opcode::Mov, _) => FastKind::Mov,
        (Opcode::Add, _) => FastKind::Add,
        (Opcode::Mul, _) => FastKind::Mul,
        (Opcode::And, _) => FastKind::And,
        (Opcode::Or, _) => FastKind::Or,
        (Opcode::Xor, _) => FastKind::Xor,
        (Opcode::Shl, _) => FastKind::Shl,
        (Opcode::Shr, _) => FastKind::Shr,
        (Opcode::Asr, _) => FastKind::Asr,
        (Opcode::Sel, _) => FastKind::Sel,
        (Opcode::Cmp, SubOp::Cond(c)) => FastKind::Cmp(*c),
        (Opcode::Min, _) => FastKind::Min,
        (Opcode::Max, _) => FastKind::Max,
        (Opcode::Mulh, _) => FastKind::Mulh,
        (Opcode::Mad, _) => FastKind::Mad,
        (Opcode::Add3, _) => FastKind::Add3,
        (Opcode::Bfn, SubOp::Bfn(table)) => FastKind::Bfn(*table),
        (Opcode::Cbit, _) => FastKind::Cbit,
        (Opcode::Fbh, _) => FastKind::Fbh,
        (Opcode::Fbl, _) => FastKind::Fbl,
        (Opcode::Lzd, _) => FastKind::Lzd,
        (Opcode::Bfrev, _) => FastKind::Bfrev,
        (Opcode::Div, _) => FastKind::Div,
        (Opcode::Mod, _) => FastKind::Mod,
        (Opcode::Not, _) => FastKind::Not,
        (Opcode::Rol, _) => FastKind::Rol,
        (Opcode::Ror, _) => FastKind::Ror,
        _ => return None,
    };
    let bit_op = kind.is_bit_op();
    let n_srcs = match kind {
        _ if bit_op => 1,
        FastKind::Mov | FastKind::Not => 1,
        FastKind::Mad | FastKind::Add3 | FastKind::Bfn(_) => 3,
        _ => 2,
    };
    if ops.len() != 1 + n_srcs {
        return None;
    }
    // A packed float vector moved to f (`mov (M1, 8) R(0,0)<1>:f 0x3f302820:vf`) moves its
    // lanes' f32 bits (none is a NaN or a denormal, so `mov` changes none) as dwords.
    if let (FastKind::Mov, [Operand::Direct(d), Operand::Imm(imm)]) = (kind, ops.as_slice()) {
        if d.ty == DataType::F && imm.ty == DataType::Vf && !d.is_null && !inst.sat {
            let (_, lanes) = super::alu::expand_vector_imm(imm.ty, imm.bits);
            let a = FastSrc::Vector(Box::new(lanes.map(|bits| bits as u32 as i64)), DataType::Ud);
            let b = FastSrc::Imm(0, DataType::D);
            return Some(FastOp {
                kind,
                src0_ty: DataType::Ud,
                srcs: [a, b.clone(), b],
                dst_ty: DataType::Ud,
                unsigned: false,
                exact: false,
            });
        }
    }
    let dst_ty = match (&ops[0], kind) {
        (Operand::Pred(_), FastKind::Cmp(_)) => DataType::Bool,
        (Operand::Direct(d), _) if int_ty(d.ty) => d.ty,
        (Operand::Indirect(i), _) if int_ty(i.ty) => i.ty,
        _ => return None,
    };
    let a = fast_src(&ops[1])?;
    let b = if n_srcs >= 2 { fast_src(&ops[2])? } else { FastSrc::Imm(0, DataType::D) };
    let c = if n_srcs == 3 { fast_src(&ops[3])? } else { FastSrc::Imm(0, DataType::D) };
    let wide = |t: DataType| t.size() == 8;
    let unsigned_wide = [src_ty(&a), src_ty(&b)].contains(&DataType::Uq);
    // 64-bit compares and arithmetic shifts need the exact (i128) path for uq values, as do
    // min/max (which compare); mulh takes 32-bit sources (a 64-bit product would not fit).
    let wide_src = wide(src_ty(&a)) || wide(src_ty(&b));
    // Compares and min/max with a uq source order as u64 where the other is unsigned too
    // (an unsigned immediate is not negative) and no modifier makes either negative, as i64
    // where no source is uq; otherwise they need the exact (i128) path.
    let unsigned = unsigned_wide && [&a, &b].iter().all(|s| !src_ty(s).is_signed_int() && !has_modifier(s));
    let orders = matches!(kind, FastKind::Cmp(_) | FastKind::Min | FastKind::Max);
    // Orders between a uq source and a signed one, `asr` of a uq one and `.sat` (which clamps
    // a lane's exact result) take the qword tier's exact (i128) kernel, which knows the
    // arithmetic, logic, shifts, moves and orders.
    let exact = orders && unsigned_wide && !unsigned || kind == FastKind::Asr && unsigned_wide || inst.sat;
    let exact_known = matches!(
        kind,
        FastKind::Mov
            | FastKind::Add
            | FastKind::Add3
            | FastKind::Mul
            | FastKind::Mad
            | FastKind::Mulh
            | FastKind::And
            | FastKind::Or
            | FastKind::Xor
            | FastKind::Not
            | FastKind::Shl
            | FastKind::Shr
            | FastKind::Asr
            | FastKind::Sel
            | FastKind::Min
            | FastKind::Max
            | FastKind::Cmp(_)
    );
    let any_wide = [&a, &b, &c].iter().any(|s| wide(src_ty(s)));
    if matches!(kind, FastKind::Mulh | FastKind::Div | FastKind::Mod) && (wide_src || dst_ty.size() > 4)
        // The bit ops read 32 bits at most and take no modifier (the general path says so).
        || bit_op && (wide(src_ty(&a)) || has_modifier(&a))
        // The parser refuses a compare's `.sat`; the other kinds' exact values with 64-bit
        // sources are left to the general path (the bit counts, bfn, rotations).
        || inst.sat && matches!(kind, FastKind::Cmp(_))
        || exact && !exact_known && (any_wide || !inst.sat)
    {
        return None;
    }
    Some(FastOp { kind, src0_ty: src_ty(&a), srcs: [a, b, c], dst_ty, unsigned, exact })
}

/// A float `mov` or `sel` that moves bits unchanged (every operand of one float format, no
/// source modifier, no saturation: `mov`'s raw copy, MOV.md) as the same instruction on
/// unsigned integers of that width, which the integer tiers run in place; None otherwise.
pub fn raw_float_move(inst: &Inst) -> Option<Inst> {
    if !matches!(inst.op, Opcode::Mov | Opcode::Sel) || inst.sat {
        return None;
    }
    let ty = match inst.operands.first()? {
        Operand::Direct(d) if !d.is_null => d.ty,
        Operand::Indirect(i) => i.ty,
        _ => return None,
    };
    let int = match ty {
        DataType::F => DataType::Ud,
        DataType::Df => DataType::Uq,
        DataType::Hf | DataType::Bf => DataType::Uw,
        _ => return None,
    };
    let mut moved = inst.clone();
    for op in &mut moved.operands {
        match op {
            Operand::Direct(d) if d.ty == ty && d.modifier == SrcMod::None => d.ty = int,
            Operand::Indirect(i) if i.ty == ty && i.modifier == SrcMod::None => i.ty = int,
            Operand::Imm(imm) if imm.ty == ty => imm.ty = int,
            _ => return None,
        }
    }
    Some(moved)
}

pub(super) fn has_modifier(s: &FastSrc) -> bool {
    match s {
        FastSrc::Imm(..) | FastSrc::Vector(..) => false,
        FastSrc::Reg { modifier, .. } => *modifier != SrcMod::None,
        FastSrc::Indirect(ind) => ind.modifier != SrcMod::None,
    }
}

/// A dword operand of the in-place tier.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum D32 {
    /// An immediate of at most 32 bits, extended to i64 by its own type, and whether that
    /// type is signed.
    Imm(i64, bool),
    /// `<0;1,0>` of a d/ud register: GRF offset, signed.
    Scalar(u32, bool),
    /// A packed d/ud register (lane i at offset + 4i), signed.
    Packed(u32, bool),
    /// Every other dword of a register (lane i at offset + 8i: `<2;1,0>`, the low or high
    /// halves of qwords that 64-bit emulation splits), signed.
    Strided(u32, bool),
}

impl D32 {
    /// Whether the operand's type is signed.
    fn signed(self) -> bool {
        match self {
            D32::Imm(_, signed)
            | D32::Scalar(_, signed)
            | D32::Packed(_, signed)
            | D32::Strided(_, signed) => signed,
        }
    }
}

/// The in-place tier: packed dword destination (or a predicate for cmp), dword or immediate
/// sources without modifiers. Every lane is read before any is written, so sources may overlap
/// the destination. Writes are reported to the observer like the general path's (old bytes,
/// runs of enabled lanes).
#[derive(Clone, Debug)]
pub struct DwordOp {
    pub kind: FastKind,
    pub a: D32,
    pub b: D32,
    /// GRF offset of the destination (None for cmp to a predicate).
    pub dst: Option<u32>,
    /// The destination's stride in dwords: 1 (packed) or 2 (every other dword: the low or
    /// high halves of qwords that 64-bit emulation joins).
    dst_stride: u32,
    /// GRF bytes the operands reach (every operand lies below this offset).
    need: u32,
    /// The domain a compare runs in.
    domain: Domain,
    /// Predicate destination of a compare.
    pred_dst: Option<PredId>,
    /// The instruction's exec mask and predicate (its channel enables without the `Inst`).
    pub en: Enables,
    /// The lane work specialised on the kind and exec size, for runs that record nothing.
    pub kernel: DwordKernel,
}

/// The lane work of one dword instruction on a thread's GRF: `(grf, op, chen, em_part,
/// pmask)`. It stores register results itself and returns a compare's flags when the
/// destination is a predicate ([`Ctx::run_dword`] writes and reports both). Chosen once per
/// instruction, so a step makes one indirect call where it would match on the exec size and
/// the kind. Its operands lie below `op.need`, which the caller checks against the file
/// (a kernel cannot fault: its result comes back in registers).
type DwordKernel = fn(&mut [u8], &DwordOp, u32, u32, u32) -> Option<u32>;

pub(super) fn d32(src: &FastSrc) -> Option<D32> {
    match src {
        // A 64-bit immediate would need 64-bit lanes (`shr` of a q immediate keeps its high bits).
        FastSrc::Imm(v, ty) if ty.size() <= 4 => Some(D32::Imm(*v, ty.is_signed_int())),
        FastSrc::Reg { base, region, ty: ty @ (DataType::D | DataType::Ud), modifier: SrcMod::None } => {
            let signed = *ty == DataType::D;
            if *region == Region::scalar() {
                Some(D32::Scalar(*base, signed))
            } else if *region == (Region { vstride: 1, width: 1, hstride: 0 })
                || (region.hstride == 1 && region.vstride == region.width)
            {
                Some(D32::Packed(*base, signed))
            } else if (region.width == 1 && region.vstride == 2)
                || (region.hstride == 2 && region.vstride == 2 * region.width)
            {
                Some(D32::Strided(*base, signed))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The in-place dword form of a fast op, if it qualifies.
pub fn compile_dword(inst: &Inst, f: &FastOp) -> Option<DwordOp> {
    if f.exact || matches!(f.kind, FastKind::Mad | FastKind::Add3 | FastKind::Bfn(_)) {
        return None;
    }
    let a = d32(&f.srcs[0])?;
    // The bit ops count a register's 32 bits (an immediate's are fewer).
    if f.kind.is_bit_op() && matches!(a, D32::Imm(..)) {
        return None;
    }
    let b = d32(&f.srcs[1])?;
    let (dst, pred_dst) = match &inst.operands[0] {
        Operand::Pred(p) if matches!(f.kind, FastKind::Cmp(_)) => (None, Some(*p)),
        // (An f destination: a `:vf` moved as dwords, see `compile`.)
        Operand::Direct(d)
            if (matches!(d.ty, DataType::D | DataType::Ud)
                || d.ty == DataType::F && f.dst_ty == DataType::Ud)
                && (d.region == Region::dst(1) || d.region == Region::dst(2)) =>
        {
            (Some(d.base), None)
        }
        _ => return None,
    };
    let dst_stride = match &inst.operands[0] {
        Operand::Direct(d) if d.region == Region::dst(2) => 2,
        _ => 1,
    };
    let n = inst.exec.size;
    if !kernel_size(n) {
        return None;
    }
    let need = span(a, n).max(span(b, n)).max(dst.map_or(0, |d| d + dst_span(dst_stride, n)));
    // `asr` of an unsigned source is a logical shift.
    let kind = if f.kind == FastKind::Asr && !a.signed() { FastKind::Shr } else { f.kind };
    // `shr` shifts src0 at its own width: a w or b immediate's sign bits are not the dword's;
    // rotations turn src0's bits at its width, which here must be the dword's.
    if kind == FastKind::Shr && matches!(f.srcs[0], FastSrc::Imm(_, ty) if ty.size() < 4)
        || matches!(kind, FastKind::Rol | FastKind::Ror) && f.src0_ty.size() != 4
    {
        return None;
    }
    let kernel = kernel_for(kind, n);
    // Sources may overlap the destination: every lane is read before any is written.
    let (en, domain) = (Enables::new(inst.exec, inst.pred), compare_domain(a, b));
    Some(DwordOp { kind, a, b, dst, dst_stride, need, domain, pred_dst, en, kernel })
}

/// Bytes from the first lane's dword of a destination of stride `stride` to its last's end.
fn dst_span(stride: u32, n: u32) -> u32 {
    4 * (stride * (n - 1) + 1)
}

/// One dword at `at` (bounds checked once by the caller's span check).
#[inline(always)]
fn load_u32(grf: &[u8], at: u32) -> u32 {
    let at = at as usize;
    let mut b = [0u8; 4];
    b.copy_from_slice(&grf[at..at + 4]);
    u32::from_le_bytes(b)
}

/// `L` dwords at `at` as an array reference (one bounds check; fixed size so the lane loops
/// below become vector code).
#[inline(always)]
fn dwords<const L: usize>(grf: &[u8], at: u32) -> &[[u8; 4]; L] {
    let (chunks, _) = grf[at as usize..].as_chunks::<4>();
    chunks[..L].try_into().expect("span checked by the caller")
}

/// All `L` lanes of a dword operand as raw 32-bit values.
#[inline(always)]
fn lanes_u32<const L: usize>(grf: &[u8], s: D32) -> [u32; L] {
    match s {
        D32::Imm(v, _) => [v as u32; L],
        D32::Scalar(off, _) => [load_u32(grf, off); L],
        D32::Packed(off, _) => {
            let words = dwords::<L>(grf, off);
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = u32::from_le_bytes(words[i]);
            }
            out
        }
        D32::Strided(off, _) => {
            let (pairs, _) = grf[off as usize..off as usize + 8 * L - 4].as_chunks::<4>();
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = u32::from_le_bytes(pairs[2 * i]);
            }
            out
        }
    }
}

/// All `L` lanes of a dword operand extended to i64 by their type.
#[inline(always)]
pub(super) fn lanes_i64<const L: usize>(grf: &[u8], s: D32) -> [i64; L] {
    match s {
        D32::Imm(v, _) => [v; L],
        _ => {
            let (raw, signed) = (lanes_u32::<L>(grf, s), s.signed());
            let mut out = [0i64; L];
            for i in 0..L {
                out[i] = if signed { raw[i] as i32 as i64 } else { raw[i] as i64 };
            }
            out
        }
    }
}

/// All `L` lanes of a dword operand as i32.
#[inline(always)]
fn lanes_i32<const L: usize>(grf: &[u8], s: D32) -> [i32; L] {
    let raw = lanes_u32::<L>(grf, s);
    let mut out = [0i32; L];
    for i in 0..L {
        out[i] = raw[i] as i32;
    }
    out
}

/// The narrowest integer domain in which a compare of these operands is exact: both fit
/// i32, both fit u32, or neither (i64).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Domain {
    I32,
    U32,
    I64,
}

fn compare_domain(a: D32, b: D32) -> Domain {
    let fits = |s: D32| match s {
        D32::Imm(v, _) => (i32::try_from(v).is_ok(), u32::try_from(v).is_ok()),
        _ => (s.signed(), !s.signed()),
    };
    let ((a_i32, a_u32), (b_i32, b_u32)) = (fits(a), fits(b));
    if a_i32 && b_i32 {
        Domain::I32
    } else if a_u32 && b_u32 {
        Domain::U32
    } else {
        Domain::I64
    }
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

/// Compare flags of `a rel b`, the relation decided once.
#[inline(always)]
pub(super) fn compare_lanes<T: Copy + PartialOrd, const L: usize>(
    a: &[T; L],
    b: &[T; L],
    rel: CondMod,
) -> u32 {
    match rel {
        CondMod::Eq => flags(a, b, |x, y| x == y),
        CondMod::Ne => flags(a, b, |x, y| x != y),
        CondMod::Lt => flags(a, b, |x, y| x < y),
        CondMod::Le => flags(a, b, |x, y| x <= y),
        CondMod::Gt => flags(a, b, |x, y| x > y),
        CondMod::Ge => flags(a, b, |x, y| x >= y),
    }
}

/// Compare flags of two dword operands, in the narrowest exact domain.
#[inline(always)]
fn dword_compare<const L: usize>(grf: &[u8], op: &DwordOp, rel: CondMod) -> u32 {
    let (a, b) = (op.a, op.b);
    match op.domain {
        Domain::U32 => compare_lanes(&lanes_u32::<L>(grf, a), &lanes_u32::<L>(grf, b), rel),
        Domain::I32 => compare_lanes(&lanes_i32::<L>(grf, a), &lanes_i32::<L>(grf, b), rel),
        Domain::I64 => compare_lanes(&lanes_i64::<L>(grf, a), &lanes_i64::<L>(grf, b), rel),
    }
}

/// Lane-wise `f`.
#[inline(always)]
fn zip<const L: usize>(a: &[u32; L], b: &[u32; L], f: impl Fn(u32, u32) -> u32) -> [u32; L] {
    let mut out = [0u32; L];
    for i in 0..L {
        out[i] = f(a[i], b[i]);
    }
    out
}

/// What a dword op computes on all `L` lanes: compare flags, or lane values.
enum DwordOut<const L: usize> {
    Flags(u32),
    Lanes([u32; L]),
}

/// The results of dword op `op` taken as `kind` (a constant in the specialised kernels, so
/// the match folds away).
#[inline(always)]
fn dword_out<const L: usize>(grf: &[u8], op: &DwordOp, kind: FastKind, pmask: u32) -> DwordOut<L> {
    if let FastKind::Cmp(rel) = kind {
        return DwordOut::Flags(dword_compare::<L>(grf, op, rel));
    }
    let a = lanes_u32::<L>(grf, op.a);
    let b = lanes_u32::<L>(grf, op.b);
    DwordOut::Lanes(match kind {
        FastKind::Mov => a,
        FastKind::Add => zip(&a, &b, u32::wrapping_add),
        FastKind::Mul => zip(&a, &b, u32::wrapping_mul),
        FastKind::And => zip(&a, &b, |x, y| x & y),
        FastKind::Or => zip(&a, &b, |x, y| x | y),
        FastKind::Xor => zip(&a, &b, |x, y| x ^ y),
        FastKind::Shl => zip(&a, &b, |x, y| x << (y & 31)),
        FastKind::Shr => zip(&a, &b, |x, y| x >> (y & 31)),
        FastKind::Asr => zip(&a, &b, |x, y| ((x as i32) >> (y & 31)) as u32),
        FastKind::Cbit => zip(&a, &a, |x, _| x.count_ones()),
        FastKind::Fbh => {
            let signed = op.a.signed();
            zip(&a, &a, |x, _| super::alu_int::fbh(x, signed) as u32)
        }
        FastKind::Fbl => zip(&a, &a, |x, _| if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        FastKind::Lzd => zip(&a, &a, |x, _| x.leading_zeros()),
        FastKind::Bfrev => zip(&a, &a, |x, _| x.reverse_bits()),
        FastKind::Not => zip(&a, &a, |x, _| !x),
        FastKind::Rol => zip(&a, &b, |x, y| x.rotate_left(y & 31)),
        FastKind::Ror => zip(&a, &b, |x, y| x.rotate_right(y & 31)),
        FastKind::Sel => {
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = if pmask >> i & 1 != 0 { a[i] } else { b[i] };
            }
            out
        }
        FastKind::Min | FastKind::Max => {
            // The source the relation picks, bits unchanged (the in-place tier has no
            // modifiers, and both sources are dwords or immediates of at most 32 bits).
            let rel = if kind == FastKind::Max { CondMod::Gt } else { CondMod::Lt };
            let first = dword_compare::<L>(grf, op, rel);
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = if first >> i & 1 != 0 { a[i] } else { b[i] };
            }
            out
        }
        FastKind::Mulh => {
            // The product's bits 32..63, exact modulo 2^64 (all the dword keeps).
            let (x, y) = (lanes_i64::<L>(grf, op.a), lanes_i64::<L>(grf, op.b));
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = (x[i].wrapping_mul(y[i]) >> 32) as u32;
            }
            out
        }
        FastKind::Div | FastKind::Mod => {
            // Extended to i64 the values are within ±2^32: the quotient cannot overflow.
            let (x, y) = (lanes_i64::<L>(grf, op.a), lanes_i64::<L>(grf, op.b));
            let mut out = [0u32; L];
            for i in 0..L {
                out[i] = quotient_or_rest(kind == FastKind::Div, x[i], y[i]) as u32;
            }
            out
        }
        FastKind::Cmp(_) | FastKind::Mad | FastKind::Add3 | FastKind::Bfn(_) => a,
    })
}

/// Every kind in the order of its code: the constant parameter `K` of the specialised
/// kernels of both in-place tiers (`Bfn`'s table is the op's, not the kind's).
const KINDS: [FastKind; 32] = [
    FastKind::Mov,
    FastKind::Add,
    FastKind::Mul,
    FastKind::And,
    FastKind::Or,
    FastKind::Xor,
    FastKind::Shl,
    FastKind::Shr,
    FastKind::Asr,
    FastKind::Sel,
    FastKind::Cmp(CondMod::Eq),
    FastKind::Cmp(CondMod::Ne),
    FastKind::Cmp(CondMod::Lt),
    FastKind::Cmp(CondMod::Le),
    FastKind::Cmp(CondMod::Gt),
    FastKind::Cmp(CondMod::Ge),
    FastKind::Min,
    FastKind::Max,
    FastKind::Mad,
    FastKind::Mulh,
    FastKind::Cbit,
    FastKind::Fbh,
    FastKind::Fbl,
    FastKind::Lzd,
    FastKind::Bfrev,
    FastKind::Add3,
    FastKind::Bfn(0),
    FastKind::Div,
    FastKind::Mod,
    FastKind::Not,
    FastKind::Rol,
    FastKind::Ror,
];

/// `x / y` (`div`) or `x % y` (`mod`), truncated toward zero, of two values of at most 33
/// bits; by zero, all ones and `x` (the general ALU's `div` and `rem`).
#[inline(always)]
pub(super) fn quotient_or_rest(div: bool, x: i64, y: i64) -> i64 {
    match (div, y) {
        (true, 0) => -1,
        (false, 0) => x,
        (true, _) => x / y,
        (false, _) => x % y,
    }
}

/// The kind a kernel's constant parameter `K` stands for.
pub(super) const fn kind_of_code(k: u8) -> FastKind {
    KINDS[k as usize]
}

/// The code of `kind` (its index in [`KINDS`]).
pub(super) fn kind_code(kind: FastKind) -> u8 {
    let kind = if let FastKind::Bfn(_) = kind { FastKind::Bfn(0) } else { kind };
    KINDS.iter().position(|k| *k == kind).expect("every kind is listed") as u8
}

/// `$sized::<K>($n)` for the kind code `$code` (see [`KINDS`]; another tier's table: its
/// codes but the last, then the last, which takes every other code): the specialised kernel
/// of a kind, chosen once per instruction.
macro_rules! kernel_of_code {
    ($sized:ident, $code:expr, $n:expr) => {
        $crate::exec::fast::kernel_of_code!($sized, $code, $n;
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; 31)
    };
    ($sized:ident, $code:expr, $n:expr; $($c:literal)*; $last:literal) => {
        match $code {
            $($c => $sized::<$c>($n),)*
            _ => $sized::<$last>($n),
        }
    };
}
pub(super) use kernel_of_code;

/// The kernel of kind `K` (see [`KINDS`]) for exec size `n`.
fn kernel_sized<const K: u8>(n: u32) -> DwordKernel {
    match n {
        1 => dword_kernel::<1, K>,
        2 => dword_kernel::<2, K>,
        4 => dword_kernel::<4, K>,
        8 => dword_kernel::<8, K>,
        16 => dword_kernel::<16, K>,
        _ => dword_kernel::<32, K>,
    }
}

/// The kernel of `kind` for exec size `n`.
fn kernel_for(kind: FastKind, n: u32) -> DwordKernel {
    kernel_of_code!(kernel_sized, kind_code(kind), n)
}

/// The lane work of dword op `op` of kind `K` and exec size `L` (a [`DwordKernel`]).
fn dword_kernel<const L: usize, const K: u8>(
    grf: &mut [u8],
    op: &DwordOp,
    chen: u32,
    em_part: u32,
    pmask: u32,
) -> Option<u32> {
    let kind = const { kind_of_code(K) };
    match (dword_out::<L>(grf, op, kind, pmask), op.pred_dst) {
        (DwordOut::Flags(flags), Some(_)) => return Some(flags),
        (DwordOut::Flags(flags), None) => store_dword(grf, op, kind, &lane_masks::<L>(flags), chen, em_part),
        (DwordOut::Lanes(values), _) => store_dword(grf, op, kind, &values, chen, em_part),
    }
    None
}

/// All ones in the lanes whose flag is set.
#[inline(always)]
fn lane_masks<const L: usize>(flags: u32) -> [u32; L] {
    let mut out = [0u32; L];
    for (i, o) in out.iter_mut().enumerate() {
        *o = 0u32.wrapping_sub(flags >> i & 1);
    }
    out
}

/// Stores a dword op's values to its destination's enabled lanes (`sel` writes under the
/// execution mask alone: its predicate chooses, it does not disable).
#[inline(always)]
fn store_dword<const L: usize>(
    grf: &mut [u8],
    op: &DwordOp,
    kind: FastKind,
    values: &[u32; L],
    chen: u32,
    em_part: u32,
) {
    let Some(dst) = op.dst else { return };
    let enabled = if kind == FastKind::Sel { em_part } else { chen };
    if op.dst_stride == 1 {
        store_lanes(&mut grf[dst as usize..], values, enabled);
    } else {
        store_every_other(&mut grf[dst as usize..], values, enabled);
    }
}

/// [`store_lanes`] into every other dword (lane i at byte 8i): the low dwords of qwords,
/// as 64-bit emulation writes them, every lane but the last blended within its qword.
#[inline(always)]
fn store_every_other<const L: usize>(bytes: &mut [u8], values: &[u32; L], enabled: u32) {
    let bytes = &mut bytes[..8 * L - 4];
    let (last, rest) = values.split_last().expect("a lane at least");
    let (pairs, _) = bytes.as_chunks_mut::<8>();
    for (lane, (pair, v)) in pairs.iter_mut().zip(rest).enumerate() {
        let keep = u64::from(0u32.wrapping_sub(enabled >> lane & 1));
        let old = u64::from_le_bytes(*pair);
        *pair = ((u64::from(*v) & keep) | (old & !keep)).to_le_bytes();
    }
    if enabled >> (L - 1) & 1 != 0 {
        bytes[8 * (L - 1)..].copy_from_slice(&last.to_le_bytes());
    }
}

/// Whether `enabled` holds each of `L` lanes.
#[inline(always)]
pub(super) fn every_lane<const L: usize>(enabled: u32) -> bool {
    let all = super::control::size_mask(L as u32);
    enabled & all == all
}

/// Packed stores of lanes of `$t`: `$name(bytes, values, enabled)` stores `values` to the
/// lanes of `enabled`, lane i at `i · size_of::<$t>()`, copying when every lane is enabled
/// and otherwise blending without a branch (divergent code makes partial masks common).
macro_rules! packed_store {
    ($name:ident, $t:ty) => {
        #[inline(always)]
        pub(super) fn $name<const L: usize>(bytes: &mut [u8], values: &[$t; L], enabled: u32) {
            const S: usize = std::mem::size_of::<$t>();
            let (chunks, _) = bytes.as_chunks_mut::<S>();
            let slots: &mut [[u8; S]; L] = (&mut chunks[..L]).try_into().expect("span checked by the caller");
            if every_lane::<L>(enabled) {
                for (slot, v) in slots.iter_mut().zip(values) {
                    *slot = v.to_le_bytes();
                }
                return;
            }
            for (lane, (slot, v)) in slots.iter_mut().zip(values).enumerate() {
                let keep = (0 as $t).wrapping_sub((enabled >> lane & 1) as $t);
                let old = <$t>::from_le_bytes(*slot);
                *slot = ((v & keep) | (old & !keep)).to_le_bytes();
            }
        }
    };
}

packed_store!(store_words, u16);
packed_store!(store_lanes, u32);
packed_store!(store_qwords, u64);

pub(super) fn span(s: D32, n: u32) -> u32 {
    match s {
        D32::Imm(..) => 0,
        D32::Scalar(off, _) => off + 4,
        D32::Packed(off, _) => off + 4 * n,
        D32::Strided(off, _) => off + 8 * n - 4,
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place dword op: its kernel does the lane work and stores register results;
    /// the write is reported to the observer as the general path reports one (old bytes,
    /// runs of enabled lanes), and a predicate result goes through [`Ctx::write_pred`].
    #[inline(always)]
    pub fn run_dword(&mut self, op: &DwordOp, chen: u32, em_part: u32, pmask: u32) -> Result<(), FaultKind> {
        let n = op.en.size();
        let enabled = (if op.kind == FastKind::Sel { em_part } else { chen }) & super::control::size_mask(n);
        // The kernel's operands lie below `need`.
        self.grf(0, op.need)?;
        let reported = op.dst.filter(|_| O::ACTIVE && enabled != 0);
        if let Some(dst) = reported {
            self.keep_old(dst, dst + dst_span(op.dst_stride, n));
        }
        let flags = (op.kernel)(&mut self.thread.grf, op, chen, em_part, pmask);
        if let (Some(flags), Some(p)) = (flags, op.pred_dst) {
            let off = op.en.offset();
            self.write_pred(p, chen << off, flags << off);
        } else if let Some(dst) = reported {
            let end = dst + dst_span(op.dst_stride, n);
            self.report_written(dst, end, Region::dst(op.dst_stride as u8), 4, n, enabled);
        }
        Ok(())
    }
}
