//! The half and double tier: `add`, `mul`, `mad`, the IEEE macros `divm` and `sqrtm`,
//! `min`, `max`, `sel`, `mov` (conversions between float formats included) and `cmp` to a
//! predicate, where an operand is hf or df (f32 alone is `fast_float.rs`'s). Register
//! sources of any direct region, immediates and the destination are resolved to per-lane
//! GRF offsets at load. Each lane is computed with the general ALU's own arithmetic (the
//! exact value and the sign of its residual, rounded once into the destination's format
//! under cr0's mode), so only the operand work differs from the general path.

use super::alu::round_lane;
use super::control::size_mask;
use super::convert::{self, Fmt, RoundMode};
use super::ctx::Ctx;
use super::fault::FaultKind;
use super::math;
use super::observer::Observer;
use super::operand::{load_le, store_le};
use crate::isa::{CondMod, DataType, Opcode, Operand, PredId, Region, SrcMod, SubOp};
use crate::program::Inst;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Add,
    Mul,
    Mad,
    Divm,
    Sqrtm,
    Min,
    Max,
    Sel,
    Mov,
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
    /// The register destination: its type, first byte and region.
    Reg { ty: DataType, fmt: Fmt, base: u32, region: Region },
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
}

/// The float types of this tier (bf16 and the 8-bit formats stay on the general path).
fn float_ty(ty: DataType) -> Option<Fmt> {
    matches!(ty, DataType::Hf | DataType::F | DataType::Df).then(|| Fmt::of(ty)).flatten()
}

/// The compiled form of `inst`, if this tier takes it.
pub fn compile(inst: &Inst) -> Option<LanesOp> {
    let kind = match (inst.op, &inst.sub) {
        (Opcode::Add, _) => Kind::Add,
        (Opcode::Mul, _) => Kind::Mul,
        (Opcode::Mad, _) => Kind::Mad,
        (Opcode::Divm, _) => Kind::Divm,
        (Opcode::Sqrtm, _) => Kind::Sqrtm,
        (Opcode::Min, _) => Kind::Min,
        (Opcode::Max, _) => Kind::Max,
        (Opcode::Sel, _) => Kind::Sel,
        (Opcode::Mov, _) => Kind::Mov,
        (Opcode::Cmp, SubOp::Cond(c)) => Kind::Cmp(*c),
        _ => return None,
    };
    let arity = match kind {
        Kind::Mad => 3,
        Kind::Mov | Kind::Sqrtm => 1,
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
            Dst::Reg { ty: d.ty, fmt: float_ty(d.ty)?, base: d.base, region: d.region }
        }
        _ => return None,
    };
    // f32 alone is the f32 tier's (or the general path's, where that tier declines).
    let half_or_double = |ty: DataType| matches!(ty, DataType::Hf | DataType::Df);
    let dst_ty = match dst {
        Dst::Reg { ty, .. } => Some(ty),
        Dst::Pred(_) => None,
    };
    if !srcs.iter().map(|s| s.ty).chain(dst_ty).any(half_or_double) {
        return None;
    }
    Some(LanesOp { kind, srcs, dst, sat: inst.sat, need })
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
                        _ => math::root(v[0]),
                    };
                    let r = if kind == Kind::Sqrtm {
                        r
                    } else {
                        math::first_nan(r, v.into_iter().take(op.srcs.len()))
                    };
                    round_lane(dst_fmt, r, op.sat, mode, keep)
                }
            };
        }
        match op.dst {
            Dst::Pred(p) => {
                let off = inst.exec.offset.min(31);
                self.write_pred(p, enabled << off, flags << off);
            }
            Dst::Reg { ty, base, region, .. } => {
                if enabled == 0 {
                    return Ok(true);
                }
                let size = ty.size();
                let end = base + region.element(n - 1) * size + size;
                if O::ACTIVE {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(&self.thread.grf[base as usize..end as usize]);
                }
                for lane in (0..n).filter(|&l| enabled >> l & 1 != 0) {
                    let at = (base + region.element(lane) * size) as usize;
                    store_le(&mut self.thread.grf[at..], size, bits[lane as usize]);
                }
                if O::ACTIVE {
                    self.report_lane_runs(base, region, size, n, enabled);
                }
            }
        }
        Ok(true)
    }
}
