//! Named barriers (NBARRIER.md): `nbarrier.signal ID N` notes that the thread reached
//! barrier ID, one of N threads that each signal and wait (the baseline form), and
//! `nbarrier.signal ID TYPE PRODUCERS CONSUMERS` the same for a producer-consumer (TYPE 0),
//! producer (1) or consumer (2) thread; `nbarrier.wait ID` lets a consumer go on once every
//! producer signalled in this phase, and the last consumer through frees the barrier for
//! its next phase.
//!
//! The counts live in the work-group's shared local memory, in `NBAR_BYTES` past what the
//! kernel uses, and change through the ordinary memory write path, so recording and time
//! travel see them as any SLM write. A thread whose wait cannot go on yet stops at the
//! instruction with status `AtNamedBarrier`; the scheduler runs the wait again once no other
//! thread of the group can run (`Scheduler::release_barrier`), which keeps runs deterministic.

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::SubOp;
use crate::machine::{MemSpace, Slm, ThreadStatus};
use crate::program::Inst;

/// SLM bytes the named barriers take, after the kernel's own: 32 barriers of four u32
/// (producer signals this phase, consumers gone through, producers, consumers).
pub const NBAR_BYTES: usize = 32 * SLOT;

const SLOT: usize = 16;

/// SLM offset of barrier `id`'s counts in an SLM of `len` bytes.
fn slot(len: usize, id: u8) -> Option<u64> {
    len.checked_sub(NBAR_BYTES).map(|base| (base + SLOT * usize::from(id)) as u64)
}

/// Barrier `id`'s (signals, passed, producers, consumers) in `slm`.
fn counts(slm: &Slm, id: u8) -> Option<[u32; 4]> {
    let at = slot(slm.bytes.len(), id)? as usize;
    slm.bytes.get(at..at + SLOT).map(decode)
}

/// The four little-endian u32 counts of a barrier's slot.
fn decode(b: &[u8]) -> [u32; 4] {
    [0, 4, 8, 12].map(|i| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]))
}

/// Whether a wait on barrier `id` may go on.
pub(super) fn released(slm: &Slm, id: u8) -> bool {
    counts(slm, id).is_some_and(|[signals, _, producers, _]| producers > 0 && signals >= producers)
}

/// Executes `nbarrier`; returns whether the thread goes on to the next instruction.
pub(super) fn nbarrier<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst) -> Result<bool, FaultKind> {
    let id = ctx.scalar(inst.operands.first(), 0)?;
    let id = u8::try_from(id).ok().filter(|&i| i < 32).ok_or_else(|| FaultKind::Memory {
        lane: None,
        message: format!("named barrier {id} does not exist (ids are 0 to 31)"),
    })?;
    let group = ctx.group;
    let len = ctx.slms.get(group).map_or(0, |s| s.bytes.len());
    let at =
        slot(len, id).ok_or_else(|| FaultKind::UnboundSurface("%slm (named barriers need SLM)".into()))?;
    let space = MemSpace::Slm(group as u32);
    let mut raw = [0u8; SLOT];
    ctx.mem_read(space, at, &mut raw)?;
    let [signals, passed, producers, consumers] = decode(&raw);
    let count = |ctx: &Ctx<'_, O>, i: usize| -> Result<u32, FaultKind> {
        let n = ctx.scalar(inst.operands.get(i), i)?;
        u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| FaultKind::Memory {
            lane: None,
            message: format!("nbarrier.signal with {n} threads"),
        })
    };
    let new = match &inst.sub {
        SubOp::Word(w) if w == "signal" => {
            if inst.operands.len() >= 4 {
                let ty = ctx.scalar(inst.operands.get(1), 1)?;
                let (p, c) = (count(ctx, 2)?, count(ctx, 3)?);
                // Only producers (types 0 and 1) count toward the release.
                let produced = u32::from(ty != 2);
                [signals + produced, passed, p, c]
            } else {
                let n = count(ctx, 1)?;
                [signals + 1, passed, n, n]
            }
        }
        _ if producers == 0 || signals < producers => {
            ctx.thread.control.status = ThreadStatus::AtNamedBarrier(id);
            return Ok(false);
        }
        // The last consumer of the phase frees the barrier (later signals are the next's).
        _ if passed + 1 >= consumers => [signals - producers, 0, producers, consumers],
        _ => [signals, passed + 1, producers, consumers],
    };
    let bytes: Vec<u8> = new.iter().flat_map(|v| v.to_le_bytes()).collect();
    ctx.mem_write(space, at, &bytes)?;
    Ok(true)
}
