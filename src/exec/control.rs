//! Control flow: divergent `goto` with reconvergence, `jmp`, `switchjmp`, `call`/`ret` with
//! the call mask, `fcall`/`ifcall`/`fret`, and the thread's final `ret`.
//!
//! Reconvergence follows 3_execution_model.md and GOTO.md: a forward goto parks its taken
//! lanes at the target label; a backward goto parks its not-taken lanes at the next
//! instruction. Parked lanes rejoin when execution arrives at their instruction. When no lane
//! is left active, execution moves to the nearest later instruction where lanes wait.

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{ExecMask, InstIdx, Opcode, Operand};
use crate::machine::{Control, Frame, FrameKind, ThreadStatus, Waiting, MAX_CALL_DEPTH};
use crate::program::Inst;

/// Bits `[0, n)`.
#[inline]
pub fn size_mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// Lanes (absolute channel bits) covered by an instruction's execution size and mask offset.
#[inline]
pub fn window(exec: ExecMask) -> u32 {
    size_mask(exec.size) << exec.offset.min(31)
}

/// Parks `lanes` at `at`, merging with lanes already waiting there.
fn park(control: &mut Control, at: InstIdx, lanes: u32) -> Result<(), FaultKind> {
    if lanes == 0 {
        return Ok(());
    }
    if let Some(w) = control.waiting.iter_mut().find(|w| w.at == at) {
        w.lanes |= lanes;
        return Ok(());
    }
    if !control.waiting.push(Waiting { at, lanes }) {
        return Err(FaultKind::TooManyReconvergencePoints(crate::machine::MAX_WAITING));
    }
    Ok(())
}

/// Reactivates the lanes waiting at the current pc (called on arrival at each instruction,
/// so the common case, nobody waits here, is a scan kept inline).
#[inline(always)]
pub fn arrive(control: &mut Control) {
    let pc = control.pc;
    if control.waiting.iter().any(|w| w.at == pc) {
        wake(control, pc);
    }
}

#[inline(never)]
fn wake(control: &mut Control, pc: InstIdx) {
    let mut woken = 0;
    control.waiting.retain(|w| {
        if w.at == pc {
            woken |= w.lanes;
            false
        } else {
            true
        }
    });
    control.em |= woken;
}

/// With no active lane, continue at the nearest later point where lanes wait.
fn resume_if_idle(control: &mut Control, from: InstIdx) -> Result<(), FaultKind> {
    if control.em != 0 {
        return Ok(());
    }
    let next = control.waiting.iter().filter(|w| w.at > from).map(|w| w.at).min();
    match next {
        Some(at) => {
            control.pc = at;
            Ok(())
        }
        None => Err(FaultKind::NoActiveLanes),
    }
}

pub(super) fn label_target(inst: &Inst, index: usize) -> Result<InstIdx, FaultKind> {
    match inst.operands.get(index) {
        Some(Operand::Label(t)) | Some(Operand::Subroutine(t)) => Ok(*t),
        other => Err(FaultKind::NotImplemented(format!("branch target {other:?}"))),
    }
}

/// `goto`: `taken` = active lanes whose predicate holds (for exec size 1: every active lane
/// or none, decided by the predicate's first bit).
pub fn goto(control: &mut Control, inst: &Inst, pc: InstIdx, taken: u32) -> Result<(), FaultKind> {
    goto_to(control, label_target(inst, 0)?, pc, taken)
}

/// [`goto`] to `target`, the label already resolved.
#[inline]
pub fn goto_to(control: &mut Control, target: InstIdx, pc: InstIdx, taken: u32) -> Result<(), FaultKind> {
    let taken = taken & control.em;
    if target > pc {
        control.em &= !taken;
        park(control, target, taken)?;
        control.pc = InstIdx(pc.0 + 1);
        resume_if_idle(control, pc)
    } else {
        if taken == 0 {
            control.pc = InstIdx(pc.0 + 1);
            return Ok(());
        }
        let stay = control.em & !taken;
        park(control, InstIdx(pc.0 + 1), stay)?;
        control.em = taken;
        control.pc = target;
        Ok(())
    }
}

/// Executes a control-flow instruction. `chen` has the predicate applied; `em_lanes` is the
/// set of active lanes in the instruction's window before predication (absolute bits);
/// `pred_true` says whether the (scalar) predicate holds for exec size 1.
pub fn execute<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    pc: InstIdx,
    chen_abs: u32,
    pred_true: bool,
) -> Result<(), FaultKind> {
    let scalar = inst.exec.size == 1;
    let next = InstIdx(pc.0 + 1);
    match inst.op {
        Opcode::Goto => {
            let taken = if scalar {
                if pred_true {
                    u32::MAX
                } else {
                    0
                }
            } else {
                chen_abs
            };
            goto(&mut ctx.thread.control, inst, pc, taken)
        }
        Opcode::Jmp => {
            let target = label_target(inst, 0)?;
            ctx.thread.control.pc = if pred_true { target } else { next };
            Ok(())
        }
        Opcode::Switchjmp => switchjmp(ctx, inst, next),
        Opcode::Call | Opcode::Fccall => {
            let target = label_target(inst, 0)?;
            let lanes = call_lanes(&ctx.thread.control, scalar, pred_true, chen_abs);
            enter(&mut ctx.thread.control, FrameKind::Subroutine, lanes, target, next, inst.unit)
        }
        Opcode::Fcall => {
            let name = match inst.operands.first() {
                Some(Operand::Function(n)) => n.clone(),
                other => return Err(FaultKind::NotImplemented(format!("fcall target {other:?}"))),
            };
            let unit = ctx.tables.function_of.get(pc.0 as usize).copied().flatten();
            let unit = unit.ok_or(FaultKind::UnknownFunction(name))?;
            let entry = ctx.program.unit(unit).entry;
            let lanes = call_lanes(&ctx.thread.control, scalar, pred_true, chen_abs);
            enter(&mut ctx.thread.control, FrameKind::Function, lanes, entry, next, unit)
        }
        Opcode::Ifcall => ifcall(ctx, inst, next, scalar, pred_true, chen_abs),
        Opcode::Ret | Opcode::Fret => {
            let lanes = if scalar {
                if pred_true {
                    u32::MAX
                } else {
                    0
                }
            } else {
                chen_abs
            };
            ret(&mut ctx.thread.control, inst, next, lanes)
        }
        Opcode::EndOfCode => Err(FaultKind::FellOffEnd),
        Opcode::Faddr => faddr(ctx, inst, next),
        other => Err(FaultKind::NotImplemented(format!("control opcode {}", other.mnemonic()))),
    }
}

/// Lanes a call takes: for exec size 1 every active lane or none (by the predicate's first
/// bit); otherwise the active lanes whose predicate holds.
fn call_lanes(control: &Control, scalar: bool, pred_true: bool, chen_abs: u32) -> u32 {
    match (scalar, pred_true) {
        (true, true) => control.em,
        (true, false) => 0,
        (false, _) => chen_abs,
    }
}

/// Enters a subroutine or function with `lanes` active (nothing happens when empty).
fn enter(
    control: &mut Control,
    kind: FrameKind,
    lanes: u32,
    target: InstIdx,
    next: InstIdx,
    unit: crate::isa::UnitId,
) -> Result<(), FaultKind> {
    let lanes = lanes & control.em;
    if lanes == 0 {
        control.pc = next;
        return Ok(());
    }
    if control.stack.len() >= MAX_CALL_DEPTH {
        return Err(FaultKind::CallTooDeep(MAX_CALL_DEPTH));
    }
    control.stack.push(Frame {
        kind,
        return_pc: next,
        saved_em: control.em,
        saved_call_mask: control.call_mask,
        saved_waiting: std::mem::take(&mut control.waiting),
        unit,
    });
    control.em = lanes;
    control.call_mask = lanes;
    control.pc = target;
    Ok(())
}

/// `ret`/`fret`: the returning lanes leave the call mask; when it empties, return.
fn ret(control: &mut Control, inst: &Inst, next: InstIdx, lanes: u32) -> Result<(), FaultKind> {
    let lanes = lanes & control.em;
    if lanes == 0 {
        control.pc = next;
        return Ok(());
    }
    control.call_mask &= !lanes;
    control.em &= !lanes;
    if control.call_mask != 0 && control.em == 0 {
        return resume_if_idle(control, InstIdx(next.0 - 1));
    }
    if control.call_mask != 0 {
        control.pc = next;
        return Ok(());
    }
    let Some(frame) = control.stack.pop() else {
        if inst.op == Opcode::Fret {
            return Err(FaultKind::BadReturn("fret with no caller".into()));
        }
        control.status = ThreadStatus::Done;
        return Ok(());
    };
    let expected = if inst.op == Opcode::Fret { FrameKind::Function } else { FrameKind::Subroutine };
    if frame.kind != expected {
        let what = if inst.op == Opcode::Fret {
            "fret inside a subroutine"
        } else {
            "ret inside a stack-call function"
        };
        control.stack.push(frame);
        return Err(FaultKind::BadReturn(what.into()));
    }
    control.pc = frame.return_pc;
    control.em = frame.saved_em;
    control.call_mask = frame.saved_call_mask;
    control.waiting = frame.saved_waiting;
    Ok(())
}

fn switchjmp<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst, _next: InstIdx) -> Result<(), FaultKind> {
    let index = ctx.read_src(&inst.operands[0], 0, 1)?.bits[0];
    let Some(Operand::Labels(labels)) = inst.operands.get(1) else {
        return Err(FaultKind::NotImplemented("switchjmp without a label list".into()));
    };
    let target = labels
        .get(index as usize)
        .copied()
        .ok_or(FaultKind::SwitchOutOfRange { index, labels: labels.len() })?;
    ctx.thread.control.pc = target;
    Ok(())
}

/// Addresses `faddr` gives to stack-call functions: never mapped, so a data access faults.
pub const FUNCTION_ADDRESS_BASE: u64 = 0xffff_f000_0000_0000;

fn faddr<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst, next: InstIdx) -> Result<(), FaultKind> {
    let Some(Operand::Function(name)) = inst.operands.first() else {
        return Err(FaultKind::NotImplemented("faddr operand".into()));
    };
    let pc = next.0 - 1;
    let address = match ctx.tables.function_of.get(pc as usize).copied().flatten() {
        Some(unit) => FUNCTION_ADDRESS_BASE + unit.0 as u64 * 0x100,
        // A data symbol of the launch's zebin (a rare instruction: k10's math tables).
        None => ctx
            .relocations
            .get(pc as usize)
            .copied()
            .flatten()
            .ok_or_else(|| FaultKind::UnknownFunction(name.clone()))?,
    };
    let dst = inst.operands.get(1).ok_or(FaultKind::NotImplemented("faddr without destination".into()))?;
    let mut values = [0u64; 32];
    values[0] = address;
    ctx.write_dst(dst, 1, 1, 1, &values)?;
    ctx.thread.control.pc = next;
    Ok(())
}

fn ifcall<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    next: InstIdx,
    scalar: bool,
    pred_true: bool,
    chen_abs: u32,
) -> Result<(), FaultKind> {
    let address = ctx.read_src(&inst.operands[0], 0, 1)?.bits[0];
    let offset = address.wrapping_sub(FUNCTION_ADDRESS_BASE);
    let unit_idx = offset / 0x100;
    let valid = address >= FUNCTION_ADDRESS_BASE
        && offset % 0x100 == 0
        && (unit_idx as usize) < ctx.program.units.len()
        && unit_idx > 0;
    if !valid {
        return Err(FaultKind::UnknownFunction(format!("at address {address:#x}")));
    }
    let unit = crate::isa::UnitId(unit_idx as u32);
    let entry = ctx.program.unit(unit).entry;
    let lanes = call_lanes(&ctx.thread.control, scalar, pred_true, chen_abs);
    enter(&mut ctx.thread.control, FrameKind::Function, lanes, entry, next, unit)
}
