//! Shared helpers of the exec unit tests: splatted sources and one-lane evaluation.

use super::alu::{eval, AluOut, SrcLanes};
use crate::isa::{CondMod, DataType as T, Opcode as O, SrcMod as M, SubOp};

/// IGC's kernel prologue value: keep all denormals, RNE.
pub const CR0: u32 = 0x4c0;
pub const RU: u32 = 0x4c0 | 0x10;
pub const RD: u32 = 0x4c0 | 0x20;
pub const RTZ: u32 = 0x4c0 | 0x30;

pub fn s(ty: T, v: u64) -> SrcLanes {
    SrcLanes::splat(ty, M::None, v)
}
pub fn sm(ty: T, m: M, v: u64) -> SrcLanes {
    SrcLanes::splat(ty, m, v)
}
pub fn f(v: f32) -> u64 {
    v.to_bits() as u64
}

/// Lane 0 of a full-featured call.
pub fn run_x(op: O, sub: SubOp, sat: bool, dst: T, srcs: &[SrcLanes], cr0: u32) -> AluOut {
    let mut out = AluOut::default();
    eval(op, &sub, sat, dst, srcs, 1, 1, 1, cr0, &mut out).expect("op evaluates");
    out
}
pub fn one(op: O, dst: T, srcs: &[SrcLanes]) -> u64 {
    run_x(op, SubOp::None, false, dst, srcs, CR0).values[0]
}
pub fn sat(op: O, dst: T, srcs: &[SrcLanes]) -> u64 {
    run_x(op, SubOp::None, true, dst, srcs, CR0).values[0]
}
pub fn moded(op: O, dst: T, srcs: &[SrcLanes], cr0: u32) -> u64 {
    run_x(op, SubOp::None, false, dst, srcs, cr0).values[0]
}
pub fn cmp1(rel: CondMod, a: SrcLanes, b: SrcLanes) -> bool {
    run_x(O::Cmp, SubOp::Cond(rel), false, T::Bool, &[a, b], CR0).flags & 1 == 1
}
