//! Fast paths for the integer instructions that dominate real kernels (add, mul, logic,
//! shifts, mov, cmp, sel on b/w/d/q types without saturation): decided once per instruction
//! when the interpreter is built, executed on plain i64 lanes with no per-lane type dispatch.
//! Each path gives exactly what `alu::eval` gives (a test compares them on random values).

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{CondMod, DataType, DirectOperand, Opcode, Operand, Region, SrcMod, SubOp};
use crate::program::Inst;

/// A source the fast path reads.
#[derive(Clone, Debug)]
pub enum FastSrc {
    Imm(i64),
    Reg { base: u32, region: Region, ty: DataType, modifier: SrcMod },
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
}

/// One pre-decoded fast instruction.
#[derive(Clone, Debug)]
pub struct FastOp {
    pub kind: FastKind,
    pub srcs: [FastSrc; 2],
    /// Type of src0 (for logical/arithmetic shift widths).
    pub src0_ty: DataType,
    pub dst_ty: DataType,
}

fn int_ty(ty: DataType) -> bool {
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

fn sign_extend(ty: DataType, bits: u64) -> i64 {
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

fn fast_src(op: &Operand) -> Option<FastSrc> {
    match op {
        Operand::Imm(imm) if int_ty(imm.ty) => Some(FastSrc::Imm(sign_extend(imm.ty, imm.bits))),
        Operand::Direct(DirectOperand { base, region, ty, modifier, is_null: false, .. }) if int_ty(*ty) => {
            Some(FastSrc::Reg { base: *base, region: *region, ty: *ty, modifier: *modifier })
        }
        _ => None,
    }
}

fn src_ty(s: &FastSrc) -> DataType {
    match s {
        FastSrc::Imm(_) => DataType::D,
        FastSrc::Reg { ty, .. } => *ty,
    }
}

/// The fast form of `inst`, if it has one.
pub fn compile(inst: &Inst) -> Option<FastOp> {
    if inst.sat || inst.static_fault.is_some() {
        return None;
    }
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
        _ => return None,
    };
    let n_srcs = if kind == FastKind::Mov { 1 } else { 2 };
    if ops.len() != 1 + n_srcs {
        return None;
    }
    let dst_ty = match (&ops[0], kind) {
        (Operand::Pred(_), FastKind::Cmp(_)) => DataType::Bool,
        (Operand::Direct(d), _) if int_ty(d.ty) => d.ty,
        _ => return None,
    };
    let a = fast_src(&ops[1])?;
    let b = if n_srcs == 2 { fast_src(&ops[2])? } else { FastSrc::Imm(0) };
    let wide = |t: DataType| t.size() == 8;
    let any_wide = wide(src_ty(&a)) || wide(src_ty(&b)) || (dst_ty != DataType::Bool && wide(dst_ty));
    let unsigned_wide = [src_ty(&a), src_ty(&b)].contains(&DataType::Uq);
    // 64-bit compares and arithmetic shifts need the exact (i128) path for uq values.
    if matches!(kind, FastKind::Cmp(_)) && any_wide || kind == FastKind::Asr && unsigned_wide {
        return None;
    }
    Some(FastOp { kind, src0_ty: src_ty(&a), srcs: [a, b], dst_ty })
}

fn apply_mod(ty: DataType, m: SrcMod, v: i64) -> i64 {
    // `abs` of an unsigned value is the value (a uq above 2^63 is not negative).
    let abs = |v: i64| if ty.is_signed_int() { v.wrapping_abs() } else { v };
    match m {
        SrcMod::None => v,
        SrcMod::Neg => v.wrapping_neg(),
        SrcMod::Abs => abs(v),
        SrcMod::NegAbs => abs(v).wrapping_neg(),
        SrcMod::Not => !v,
    }
}

#[inline(always)]
fn map2(n: usize, a: &[i64; 32], b: &[i64; 32], r: &mut [u64; 32], f: impl Fn(i64, i64) -> u64) {
    for ((o, x), y) in r.iter_mut().zip(a).zip(b).take(n) {
        *o = f(*x, *y);
    }
}

#[inline(always)]
fn compare(n: usize, a: &[i64; 32], b: &[i64; 32], f: impl Fn(i64, i64) -> bool) -> u32 {
    let mut flags = 0u32;
    for (i, (x, y)) in a.iter().zip(b).take(n).enumerate() {
        flags |= (f(*x, *y) as u32) << i;
    }
    flags
}

impl<O: Observer> Ctx<'_, O> {
    fn fast_read(&self, src: &FastSrc, n: u32, out: &mut [i64; 32]) -> Result<(), FaultKind> {
        match src {
            FastSrc::Imm(v) => out[..n as usize].fill(*v),
            FastSrc::Reg { base, region, ty, modifier } => {
                let size = ty.size();
                let last = region.element(n.saturating_sub(1)) * size;
                let bytes = self.grf(*base, last + size)?;
                let contiguous = region.width as u32 >= n && region.hstride == 1
                    || region.width == 1 && region.vstride == 1;
                if contiguous && *ty == DataType::D {
                    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)).take(n as usize) {
                        *o = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64;
                    }
                } else if contiguous && *ty == DataType::Ud {
                    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)).take(n as usize) {
                        *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64;
                    }
                } else if region.vstride == 0 && region.width <= 1 {
                    let v = sign_extend(*ty, super::operand::load_le(bytes, size));
                    out[..n as usize].fill(v);
                } else if contiguous && *ty == DataType::W {
                    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)).take(n as usize) {
                        *o = i16::from_le_bytes([c[0], c[1]]) as i64;
                    }
                } else if contiguous && *ty == DataType::Uw {
                    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)).take(n as usize) {
                        *o = u16::from_le_bytes([c[0], c[1]]) as i64;
                    }
                } else {
                    for (lane, o) in out.iter_mut().enumerate().take(n as usize) {
                        let at = (region.element(lane as u32) * size) as usize;
                        *o = sign_extend(*ty, super::operand::load_le(&bytes[at..], size));
                    }
                }
                if *modifier != SrcMod::None {
                    for o in out.iter_mut().take(n as usize) {
                        *o = apply_mod(*ty, *modifier, *o);
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs a fast instruction. `chen` has predication applied; `em_part`/`pmask` are its
    /// two halves (sel uses the predicate to choose, not to disable).
    pub fn run_fast(
        &mut self,
        inst: &Inst,
        f: &FastOp,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<(), FaultKind> {
        let n = inst.exec.size;
        let mut a = [0i64; 32];
        let mut b = [0i64; 32];
        self.fast_read(&f.srcs[0], n, &mut a)?;
        self.fast_read(&f.srcs[1], n, &mut b)?;
        let src_bits = f.src0_ty.bits();
        let width_mask = if src_bits >= 64 { u64::MAX } else { (1u64 << src_bits) - 1 };
        let cnt_mask = if f.dst_ty.size() == 8 { 63 } else { 31 };
        let mut r = [0u64; 32];
        let lanes = n as usize;
        match f.kind {
            FastKind::Mov => map2(lanes, &a, &b, &mut r, |x, _| x as u64),
            FastKind::Add => map2(lanes, &a, &b, &mut r, |x, y| x.wrapping_add(y) as u64),
            FastKind::Mul => map2(lanes, &a, &b, &mut r, |x, y| x.wrapping_mul(y) as u64),
            FastKind::And => map2(lanes, &a, &b, &mut r, |x, y| (x & y) as u64),
            FastKind::Or => map2(lanes, &a, &b, &mut r, |x, y| (x | y) as u64),
            FastKind::Xor => map2(lanes, &a, &b, &mut r, |x, y| (x ^ y) as u64),
            FastKind::Shl => {
                map2(lanes, &a, &b, &mut r, |x, y| (x as u64).wrapping_shl((y & cnt_mask) as u32))
            }
            FastKind::Shr => map2(lanes, &a, &b, &mut r, |x, y| (x as u64 & width_mask) >> (y & cnt_mask)),
            FastKind::Asr => map2(lanes, &a, &b, &mut r, |x, y| (x >> (y & cnt_mask)) as u64),
            FastKind::Sel => {
                for (i, ((o, x), y)) in r.iter_mut().zip(&a).zip(&b).take(lanes).enumerate() {
                    *o = if pmask >> i & 1 != 0 { *x } else { *y } as u64;
                }
            }
            FastKind::Cmp(rel) => {
                // One loop per relation: the relation is decided once, not per lane.
                let flags = match rel {
                    CondMod::Eq => compare(lanes, &a, &b, |x, y| x == y),
                    CondMod::Ne => compare(lanes, &a, &b, |x, y| x != y),
                    CondMod::Lt => compare(lanes, &a, &b, |x, y| x < y),
                    CondMod::Le => compare(lanes, &a, &b, |x, y| x <= y),
                    CondMod::Gt => compare(lanes, &a, &b, |x, y| x > y),
                    CondMod::Ge => compare(lanes, &a, &b, |x, y| x >= y),
                };
                if let Operand::Pred(p) = &inst.operands[0] {
                    let off = inst.exec.offset.min(31);
                    self.write_pred(*p, chen << off, flags << off);
                    return Ok(());
                }
                for (i, o) in r.iter_mut().take(lanes).enumerate() {
                    *o = if flags >> i & 1 != 0 { u64::MAX } else { 0 };
                }
            }
        }
        let enabled = if f.kind == FastKind::Sel { em_part } else { chen };
        self.write_dst(&inst.operands[0], 0, n, enabled, &r)
    }
}

/// A dword operand of the in-place tier.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum D32 {
    /// An immediate, extended to i64 by its own type.
    Imm(i64),
    /// `<0;1,0>` of a d/ud register: GRF offset, signed.
    Scalar(u32, bool),
    /// A packed d/ud register (lane i at offset + 4i), signed.
    Packed(u32, bool),
}

/// The in-place tier: packed dword destination (or a predicate for cmp), dword or immediate
/// sources without modifiers, no overlap that per-lane order could expose. Runs without an
/// observer only (recording goes through the general write path).
#[derive(Clone, Debug)]
pub struct DwordOp {
    pub kind: FastKind,
    pub a: D32,
    pub b: D32,
    /// GRF offset of the packed destination (None for cmp to a predicate).
    pub dst: Option<u32>,
}

fn d32(src: &FastSrc) -> Option<D32> {
    match src {
        FastSrc::Imm(v) => Some(D32::Imm(*v)),
        FastSrc::Reg { base, region, ty: ty @ (DataType::D | DataType::Ud), modifier: SrcMod::None } => {
            let signed = *ty == DataType::D;
            if *region == Region::scalar() {
                Some(D32::Scalar(*base, signed))
            } else if *region == (Region { vstride: 1, width: 1, hstride: 0 })
                || (region.hstride == 1 && region.vstride == region.width)
            {
                Some(D32::Packed(*base, signed))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The in-place dword form of a fast op, if it qualifies.
pub fn compile_dword(inst: &Inst, f: &FastOp) -> Option<DwordOp> {
    let n = inst.exec.size;
    let a = d32(&f.srcs[0])?;
    let b = d32(&f.srcs[1])?;
    let dst = match &inst.operands[0] {
        Operand::Pred(_) if matches!(f.kind, FastKind::Cmp(_)) => None,
        Operand::Direct(d) if matches!(d.ty, DataType::D | DataType::Ud) && d.region == Region::dst(1) => {
            Some(d.base)
        }
        _ => return None,
    };
    if let Some(dst) = dst {
        // Reading lane i after lanes < i were written must see the old values: only an
        // identical packed source or no overlap at all is safe.
        let range = dst..dst + 4 * n;
        for s in [a, b] {
            match s {
                D32::Packed(off, _) if off != dst && off < range.end && range.start < off + 4 * n => {
                    return None
                }
                D32::Scalar(off, _) if range.contains(&off) => return None,
                _ => {}
            }
        }
    }
    Some(DwordOp { kind: f.kind, a, b, dst })
}

#[inline(always)]
fn get(grf: &[u8], s: D32, lane: u32) -> i64 {
    let load = |at: u32, signed: bool| {
        let at = at as usize;
        // One bounds check and one 4-byte load (indexing byte by byte did neither).
        let mut b = [0u8; 4];
        b.copy_from_slice(&grf[at..at + 4]);
        let v = u32::from_le_bytes(b);
        if signed {
            v as i32 as i64
        } else {
            v as i64
        }
    };
    match s {
        D32::Imm(v) => v,
        D32::Scalar(off, signed) => load(off, signed),
        D32::Packed(off, signed) => load(off + 4 * lane, signed),
    }
}

fn span(s: D32, n: u32) -> u32 {
    match s {
        D32::Imm(_) => 0,
        D32::Scalar(off, _) => off + 4,
        D32::Packed(off, _) => off + 4 * n,
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs an in-place dword op (callers use it only without an observer).
    pub fn run_dword(
        &mut self,
        inst: &Inst,
        op: &DwordOp,
        chen: u32,
        em_part: u32,
        pmask: u32,
    ) -> Result<(), FaultKind> {
        let n = inst.exec.size;
        let need = span(op.a, n).max(span(op.b, n)).max(op.dst.map_or(0, |d| d + 4 * n));
        if need as usize > self.thread.grf.len() {
            return Err(FaultKind::RegionOutOfBounds { operand: 0, offset: 0, len: need });
        }
        let signed_a = matches!(op.a, D32::Scalar(_, true) | D32::Packed(_, true));
        if let FastKind::Cmp(rel) = op.kind {
            let grf = &self.thread.grf;
            let mut flags = 0u32;
            for lane in 0..n {
                let (x, y) = (get(grf, op.a, lane), get(grf, op.b, lane));
                let t = match rel {
                    CondMod::Eq => x == y,
                    CondMod::Ne => x != y,
                    CondMod::Lt => x < y,
                    CondMod::Le => x <= y,
                    CondMod::Gt => x > y,
                    CondMod::Ge => x >= y,
                };
                flags |= (t as u32) << lane;
            }
            return match (&inst.operands[0], op.dst) {
                (Operand::Pred(p), _) => {
                    let off = inst.exec.offset.min(31);
                    self.write_pred(*p, chen << off, flags << off);
                    Ok(())
                }
                (_, Some(dst)) => {
                    let grf = &mut self.thread.grf;
                    for lane in (0..n).filter(|l| chen >> l & 1 != 0) {
                        let v: u32 = if flags >> lane & 1 != 0 { u32::MAX } else { 0 };
                        let at = (dst + 4 * lane) as usize;
                        grf[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    Ok(())
                }
                _ => Ok(()),
            };
        }
        let Some(dst) = op.dst else { return Ok(()) };
        let enabled = if op.kind == FastKind::Sel { em_part } else { chen };
        let grf = &mut self.thread.grf;
        macro_rules! lanes {
            (|$x:ident, $y:ident, $lane:ident| $e:expr) => {
                for $lane in 0..n {
                    if enabled >> $lane & 1 != 0 {
                        let ($x, $y) = (get(grf, op.a, $lane), get(grf, op.b, $lane));
                        let v: u32 = $e as u32;
                        let at = (dst + 4 * $lane) as usize;
                        grf[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
            };
        }
        match op.kind {
            FastKind::Mov => lanes!(|x, _y, _l| x),
            FastKind::Add => lanes!(|x, y, _l| x.wrapping_add(y)),
            FastKind::Mul => lanes!(|x, y, _l| x.wrapping_mul(y)),
            FastKind::And => lanes!(|x, y, _l| x & y),
            FastKind::Or => lanes!(|x, y, _l| x | y),
            FastKind::Xor => lanes!(|x, y, _l| x ^ y),
            FastKind::Shl => lanes!(|x, y, _l| (x as u32).wrapping_shl((y & 31) as u32)),
            FastKind::Shr => lanes!(|x, y, _l| (x as u32) >> (y & 31)),
            FastKind::Asr if signed_a => lanes!(|x, y, _l| (x as i32) >> (y & 31)),
            FastKind::Asr => lanes!(|x, y, _l| (x as u32) >> (y & 31)),
            FastKind::Sel => lanes!(|x, y, l| if pmask >> l & 1 != 0 { x } else { y }),
            FastKind::Cmp(_) => {}
        }
        Ok(())
    }
}
