//! The execution context of one step and THE write path: every change to a thread's
//! registers, predicates, address registers or to memory goes through a method here,
//! which reports it to the [`Observer`] with its old and new value.

use super::fault::FaultKind;
use super::observer::Observer;
use super::tables::Tables;
use crate::isa::PredId;
use crate::machine::{MemSpace, Slms, Svm, ThreadId, ThreadState};
use crate::program::Program;

/// SLM messages see only the low 20 bits of an offset: hardware SLM is at most 128 KiB, and
/// IGC tags local pointers with bit 28 (`add … 0x10000100:d` before a `%slm` scatter).
pub const SLM_ADDRESS_MASK: u64 = 0xf_ffff;

fn slm_offset(space: MemSpace, addr: u64) -> u64 {
    match space {
        MemSpace::Slm(_) => addr & SLM_ADDRESS_MASK,
        MemSpace::Svm => addr,
    }
}

/// Everything one instruction of one thread may read or write.
pub struct Ctx<'a, O: Observer> {
    pub program: &'a Program,
    pub tables: &'a Tables,
    pub tid: ThreadId,
    pub thread: &'a mut ThreadState,
    pub svm: &'a mut Svm,
    /// The SLMs, and the thread's work-group: its SLM is copied on write only when a store
    /// reaches it.
    pub slms: &'a mut Slms,
    pub group: usize,
    pub relocations: &'a [Option<u64>],
    pub surfaces: &'a [Option<(u64, u64)>],
    pub obs: &'a mut O,
    /// Reused buffer for old bytes (no allocation per write once warm).
    pub scratch: Vec<u8>,
    /// The variable (`[start, end)` of the register file) the last indirect access looked
    /// up: variables are the program's, so the next access, of any thread, into the same
    /// one needs no lookup (empty before the first).
    pub last_root: std::cell::Cell<(u32, u32)>,
}

impl<O: Observer> Ctx<'_, O> {
    /// Reads `len` GRF bytes at `offset`.
    #[inline]
    pub fn grf(&self, offset: u32, len: u32) -> Result<&[u8], FaultKind> {
        // Not `ok_or`: its unused error is dropped through a call on every read.
        match self.thread.grf.get(offset as usize..offset as usize + len as usize) {
            Some(bytes) => Ok(bytes),
            None => Err(FaultKind::RegionOutOfBounds { operand: 0, offset, len }),
        }
    }

    /// Writes GRF bytes `[offset, offset+len)` through `apply`, reporting the change (inlined:
    /// without an observer, in a plain run, it is a bounds check and the store; to an
    /// observer without [`Observer::values`], the span written).
    #[inline(always)]
    pub fn write_grf_with(
        &mut self,
        offset: u32,
        len: u32,
        apply: impl FnOnce(&mut [u8]),
    ) -> Result<(), FaultKind> {
        let range = offset as usize..offset as usize + len as usize;
        if range.end > self.thread.grf.len() {
            return Err(FaultKind::RegionOutOfBounds { operand: 0, offset, len });
        }
        // An observer that takes no values hears the span alone, with no old bytes kept.
        let values = O::ACTIVE && self.obs.values();
        if values {
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.thread.grf[range.clone()]);
        }
        apply(&mut self.thread.grf[range.clone()]);
        if values {
            self.obs.grf(self.tid, offset, &self.scratch, &self.thread.grf[range]);
        } else if O::ACTIVE {
            self.obs.grf_span(self.tid, offset, len);
        }
        Ok(())
    }

    /// Writes `bytes` at GRF `offset`.
    pub fn write_grf(&mut self, offset: u32, bytes: &[u8]) -> Result<(), FaultKind> {
        self.write_grf_with(offset, bytes.len() as u32, |dst| dst.copy_from_slice(bytes))
    }

    /// Writes the low `size` bytes (1, 2, 4 or 8) of `value` at GRF `offset`.
    #[inline(always)]
    pub fn write_grf_elem(&mut self, offset: u32, size: u32, value: u64) -> Result<(), FaultKind> {
        // Without an observer, the store in place (through `write_grf_with` it is a call).
        if !O::ACTIVE {
            let Some(dst) = self.thread.grf.get_mut(offset as usize..offset as usize + size as usize) else {
                return Err(FaultKind::RegionOutOfBounds { operand: 0, offset, len: size });
            };
            super::operand::store_le(dst, size, value);
            return Ok(());
        }
        self.write_grf_with(offset, size, |dst| super::operand::store_le(dst, size, value))
    }

    pub fn pred(&self, id: PredId) -> u32 {
        self.thread.preds.get(id.0 as usize).copied().unwrap_or(0)
    }

    /// Sets the bits of predicate `id` selected by `mask` to those of `bits`.
    pub fn write_pred(&mut self, id: PredId, mask: u32, bits: u32) {
        let Some(slot) = self.thread.preds.get_mut(id.0 as usize) else {
            return;
        };
        let num = self.program.preds.get(id.0 as usize).map_or(32, |p| p.num_elts);
        let width_mask = if num >= 32 { u32::MAX } else { (1u32 << num) - 1 };
        let old = *slot;
        let new = ((old & !mask) | (bits & mask)) & width_mask;
        *slot = new;
        if O::ACTIVE && old != new {
            self.obs.pred(self.tid, id, old, new);
        }
    }

    pub fn addr_slot(&self, slot: u32) -> Option<u32> {
        self.thread.addrs.get(slot as usize).copied()
    }

    pub fn write_addr(&mut self, slot: u32, value: u32) -> Result<(), FaultKind> {
        let Some(cell) = self.thread.addrs.get_mut(slot as usize) else {
            return Err(FaultKind::AddressOutOfBounds { operand: 0, element: slot });
        };
        let old = *cell;
        *cell = value;
        if O::ACTIVE && old != value {
            self.obs.addr(self.tid, slot, old, value);
        }
        Ok(())
    }

    /// Reads memory (reported to the observer for read watchpoints).
    pub fn mem_read(&mut self, space: MemSpace, addr: u64, out: &mut [u8]) -> Result<(), FaultKind> {
        let addr = slm_offset(space, addr);
        if space == MemSpace::Svm {
            if let Some((buffer_start, buffer_len)) = self.svm.read_noting(addr, out)? {
                self.note_over_read(addr, out.len() as u64, buffer_start, buffer_len);
            }
        } else {
            self.mem_peek(space, addr, out)?;
        }
        if let (MemSpace::Svm, Some(acc)) = (space, self.svm.accesses.as_deref_mut()) {
            if !acc.writes_only {
                acc.reads.add(addr, out.len() as u64);
            }
        }
        if O::ACTIVE {
            self.obs.mem_read(self.tid, space, addr, out.len() as u64);
        }
        Ok(())
    }

    /// Notes a read that went past a buffer's end into the padding the driver allocates (a
    /// compiler's widened read, not the program's doing).
    #[cold]
    fn note_over_read(&mut self, addr: u64, len: u64, buffer_start: u64, buffer_len: u64) {
        let over = &mut self.svm.over_reads;
        over.count += 1;
        if over.first.is_none() {
            over.first = Some(crate::machine::OverRead {
                inst: self.thread.control.pc.0,
                thread: self.tid.0,
                addr,
                len,
                buffer_start,
                buffer_len,
            });
        }
    }

    /// Reads memory without reporting it (old values for the write path).
    fn mem_peek(&mut self, space: MemSpace, addr: u64, out: &mut [u8]) -> Result<(), FaultKind> {
        match space {
            MemSpace::Svm => self.svm.read(addr, out)?,
            MemSpace::Slm(_) => match self.slms.get(self.group) {
                Some(slm) => slm.read(addr, out)?,
                None => return Err(FaultKind::UnboundSurface("%slm".into())),
            },
        }
        Ok(())
    }

    /// Writes memory, reporting old and new bytes.
    pub fn mem_write(&mut self, space: MemSpace, addr: u64, bytes: &[u8]) -> Result<(), FaultKind> {
        let addr = slm_offset(space, addr);
        if O::ACTIVE {
            let mut old = vec![0u8; bytes.len()];
            self.mem_peek(space, addr, &mut old)?;
            self.mem_write_unobserved(space, addr, bytes)?;
            self.obs.mem(self.tid, space, addr, &old, bytes);
            Ok(())
        } else {
            self.mem_write_unobserved(space, addr, bytes)
        }
    }

    fn mem_write_unobserved(&mut self, space: MemSpace, addr: u64, bytes: &[u8]) -> Result<(), FaultKind> {
        match space {
            MemSpace::Svm => {
                self.svm.write(addr, bytes)?;
                if let Some(acc) = self.svm.accesses.as_deref_mut() {
                    acc.writes.add(addr, bytes.len() as u64);
                }
            }
            MemSpace::Slm(_) => match self.slms.get_mut(self.group) {
                Some(slm) => slm.write(addr, bytes)?,
                None => return Err(FaultKind::UnboundSurface("%slm".into())),
            },
        }
        Ok(())
    }

    /// The thread's `%cr0` value (rounding mode and denormal controls).
    pub fn cr0(&self) -> u32 {
        let off = self.tables.cr0_offset as usize;
        match self.thread.grf.get(off..off + 4) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0,
        }
    }
}
