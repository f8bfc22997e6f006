//! Glue between memory instructions and the message semantics in `memory`.

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::program::Inst;

/// Executes a memory instruction.
pub fn execute<O: Observer>(_ctx: &mut Ctx<'_, O>, inst: &Inst, _chen: u32) -> Result<(), FaultKind> {
    Err(FaultKind::NotImplemented(format!("`{}`", inst.op.mnemonic())))
}
