//! Memory messages: SVM (stateless A64), surface (binding table or SLM) and LSC loads,
//! stores and atomics, with the register data layouts of their instruction pages
//! (SVM_GATHER.md, SVM_GATHER4_SCALED.md, GATHER4_SCALED.md, DWORD_ATOMIC.md,
//! LSC_UNTYPED.md). Every access goes through the observed write path; a bad address is a
//! fault naming the lane.

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::mem_pass::{Batch, MemOp, Results};
use super::observer::Observer;
use super::operand::load_le;
use crate::isa::{AtomicOp, LscAddrModel, LscDataSize, Opcode, Operand, RawOperand, SubOp};
use crate::machine::MemSpace;
use crate::program::{Inst, StateKind};

fn mem_fault(lane: Option<u32>, message: impl Into<String>) -> FaultKind {
    FaultKind::Memory { lane, message: message.into() }
}

/// GRF offset of a raw operand (`V.off`), or None for `%null`.
pub(super) fn raw(op: Option<&Operand>) -> Result<Option<u32>, FaultKind> {
    match op {
        Some(Operand::Raw(RawOperand { is_null: true, .. })) => Ok(None),
        Some(Operand::Raw(r)) => Ok(Some(r.base)),
        Some(Operand::LscData(d)) if d.raw.is_null => Ok(None),
        Some(Operand::LscData(d)) => Ok(Some(d.raw.base)),
        other => Err(FaultKind::NotImplemented(format!("message operand {other:?}"))),
    }
}

/// Element `lane` (`size` bytes) of the raw operand at `base` for each lane of `lanes` below
/// `n`: a message reads its lanes' addresses before any access, so that its results cannot
/// change an address it has yet to use.
fn lane_values<O: Observer>(
    ctx: &Ctx<'_, O>,
    base: u32,
    size: u32,
    n: u32,
    lanes: u32,
) -> Result<[u64; 32], FaultKind> {
    let mut out = [0u64; 32];
    for lane in (0..n.min(32)).filter(|l| lanes >> l & 1 != 0) {
        out[lane as usize] = ctx.raw_elem(base, lane, size)?;
    }
    Ok(out)
}

fn need(op: Option<u32>, what: &str) -> Result<u32, FaultKind> {
    op.ok_or_else(|| FaultKind::NotImplemented(format!("%null as the {what} operand")))
}

impl<O: Observer> Ctx<'_, O> {
    /// Element `lane` (of `size` bytes) of the raw operand at `base`.
    fn raw_elem(&self, base: u32, lane: u32, size: u32) -> Result<u64, FaultKind> {
        Ok(load_le(self.grf(base + lane * size, size)?, size))
    }

    /// Element `lane` of an atomic's source operand at `base` (0 for `%null`).
    fn source_elem(&self, base: Option<u32>, lane: u32, size: u32) -> Result<u64, FaultKind> {
        base.map_or(Ok(0), |base| self.raw_elem(base, lane, size))
    }

    /// The memory a surface operand names: SLM for `%slm`, a bound buffer otherwise.
    fn surface(&self, op: Option<&Operand>) -> Result<(MemSpace, u64), FaultKind> {
        let Some(Operand::State(id)) = op else {
            return Err(FaultKind::NotImplemented(format!("surface operand {op:?}")));
        };
        self.state_memory(id.0)
    }

    /// The memory surface state `id` names: the group's SLM, or the buffer bound to it.
    pub(super) fn state_memory(&self, id: u32) -> Result<(MemSpace, u64), FaultKind> {
        let state = &self.program.states[id as usize];
        match state.kind {
            StateKind::Slm => Ok((MemSpace::Slm(self.thread.group), 0)),
            _ => match self.surfaces.get(id as usize).copied().flatten() {
                Some((base, _)) => Ok((MemSpace::Svm, base)),
                None => Err(FaultKind::UnboundSurface(state.name.clone())),
            },
        }
    }

    /// A scalar source (global offset, block address) as an integer.
    pub(super) fn scalar(&self, op: Option<&Operand>, index: usize) -> Result<u64, FaultKind> {
        let op = op.ok_or_else(|| FaultKind::NotImplemented("missing scalar operand".into()))?;
        let lanes = self.read_src(op, index, 1)?;
        Ok(lanes.bits[0])
    }
}

pub(super) fn check_align(addr: u64, align: u64, lane: u32) -> Result<(), FaultKind> {
    if align > 1 && !addr.is_multiple_of(align) {
        return Err(mem_fault(Some(lane), format!("address {addr:#x} is not {align}-byte aligned")));
    }
    Ok(())
}

/// Executes a memory instruction with channel enables `chen`.
pub fn execute<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst, chen: u32) -> Result<(), FaultKind> {
    let ops = &inst.operands;
    match (inst.op, &inst.sub) {
        (Opcode::SvmGather | Opcode::SvmScatter, SubOp::Blocks { block_size, num_blocks }) => {
            svm_gather_scatter(ctx, inst, chen, *block_size, *num_blocks)
        }
        (Opcode::SvmBlockLd, _) | (Opcode::SvmBlockSt, _) => svm_block(ctx, inst),
        (Opcode::SvmGather4Scaled, SubOp::Channels(ch))
        | (Opcode::SvmScatter4Scaled, SubOp::Channels(ch)) => {
            let base = ctx.scalar(ops.first(), 0)?;
            let offsets = need(raw(ops.get(1))?, "offset")?;
            let store = inst.op == Opcode::SvmScatter4Scaled;
            four_scaled(ctx, inst, chen, *ch, (MemSpace::Svm, base), offsets, 8, raw(ops.get(2))?, store)
        }
        (Opcode::Gather4Scaled, SubOp::Channels(ch)) | (Opcode::Scatter4Scaled, SubOp::Channels(ch)) => {
            let (space, base) = ctx.surface(ops.first())?;
            let global = ctx.scalar(ops.get(1), 1)?;
            let offsets = need(raw(ops.get(2))?, "offset")?;
            let store = inst.op == Opcode::Scatter4Scaled;
            four_scaled(
                ctx,
                inst,
                chen,
                *ch,
                (space, base.wrapping_add(global)),
                offsets,
                4,
                raw(ops.get(3))?,
                store,
            )
        }
        (Opcode::GatherScaled | Opcode::ScatterScaled, SubOp::Blocks { num_blocks, .. }) => {
            let (space, base) = ctx.surface(ops.first())?;
            let global = ctx.scalar(ops.get(1), 1)?;
            let offsets = need(raw(ops.get(2))?, "offset")?;
            let data = need(raw(ops.get(3))?, "data")?;
            scaled(ctx, inst, chen, *num_blocks, (space, base.wrapping_add(global)), offsets, data)
        }
        (Opcode::OwordLd | Opcode::OwordLdUnaligned | Opcode::OwordSt, _) => oword(ctx, inst),
        (Opcode::SvmAtomic, SubOp::Atomic { op, bits }) => {
            let addrs = need(raw(ops.first())?, "address")?;
            let (dst, s0, s1) = (raw(ops.get(1))?, raw(ops.get(2))?, raw(ops.get(3))?);
            atomic(
                ctx,
                inst,
                chen,
                *op,
                *bits,
                |ctx, lane| Ok((MemSpace::Svm, ctx.raw_elem(addrs, lane, 8)?)),
                dst,
                s0,
                s1,
            )
        }
        (Opcode::DwordAtomic, SubOp::Atomic { op, bits }) => {
            let (space, base) = ctx.surface(ops.first())?;
            let offs = need(raw(ops.get(1))?, "offset")?;
            let (s0, s1, dst) = (raw(ops.get(2))?, raw(ops.get(3))?, raw(ops.get(4))?);
            atomic(
                ctx,
                inst,
                chen,
                *op,
                *bits,
                |ctx, lane| Ok((space, base.wrapping_add(ctx.raw_elem(offs, lane, 4)?))),
                dst,
                s0,
                s1,
            )
        }
        (Opcode::LscLoad | Opcode::LscStore | Opcode::LscAtomic, SubOp::Lsc { sfid, atomic: aop, .. }) => {
            lsc(ctx, inst, chen, *sfid, *aop)
        }
        (Opcode::LscLoadBlock2d | Opcode::LscStoreBlock2d, _) => super::block2d::block2d(ctx, inst),
        _ => Err(FaultKind::NotImplemented(format!("`{}` with {:?}", inst.op.mnemonic(), inst.sub))),
    }
}

/// `svm_gather.B.N` / `svm_scatter.B.N`. Register layout (SVM_GATHER.md): byte blocks of a
/// lane share one slot of `max(4, N)` bytes; 4- and 8-byte blocks form N planes of
/// `exec_size` blocks. Each address must be aligned to the block size.
fn svm_gather_scatter<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    chen: u32,
    block: u32,
    blocks: u32,
) -> Result<(), FaultKind> {
    let addrs = need(raw(inst.operands.first())?, "address")?;
    let data = raw(inst.operands.get(1))?;
    let store = inst.op == Opcode::SvmScatter;
    if store && data.is_none() {
        return Err(FaultKind::NotImplemented("%null as the source operand".into()));
    }
    let n = inst.exec.size;
    // (memory offset, register offset, length) of each piece of one lane.
    let pieces = |lane: u32, j: u32| -> (u32, u32, u32) {
        if block == 1 {
            (0, lane * blocks.max(4), blocks)
        } else {
            (j * block, (j * n + lane) * block, block)
        }
    };
    let count = if block == 1 { 1 } else { blocks };
    let len = if block == 1 { blocks } else { block };
    let op = if store { MemOp::Store } else { MemOp::Load };
    let results = data.map(|_| Results { slot: len, shift: 0 });
    let mut batch = Batch::new(MemSpace::Svm, len, block as u64, op, results);
    let d = data.unwrap_or(0);
    let lane_addrs = lane_values(ctx, addrs, 8, n, chen)?;
    for lane in (0..n).filter(|l| chen >> l & 1 != 0) {
        let addr = lane_addrs[lane as usize];
        for j in 0..count {
            let (mem_off, reg_off, len) = pieces(lane, j);
            let value = if store { batch.or_flush(ctx, ctx.raw_elem(d + reg_off, 0, len))? } else { 0 };
            batch.push(ctx, lane, addr.wrapping_add(mem_off as u64), (value, 0), d + reg_off)?;
        }
    }
    batch.flush(ctx)
}

/// `svm_block_ld/st (n) addr data`: n OWords at one address, whatever the channel enables.
fn svm_block<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst) -> Result<(), FaultKind> {
    let addr = ctx.scalar(inst.operands.first(), 0)?;
    let len = inst.exec.size * 16;
    check_align(addr, svm_block_align(inst), 0)?;
    let data = need(raw(inst.operands.get(1))?, "data")?;
    if inst.op == Opcode::SvmBlockLd {
        let mut buf = vec![0u8; len as usize];
        ctx.mem_read(MemSpace::Svm, addr, &mut buf)?;
        ctx.write_grf(data, &buf)
    } else {
        let bytes = ctx.grf(data, len)?.to_vec();
        ctx.mem_write(MemSpace::Svm, addr, &bytes)
    }
}

/// The alignment an `svm_block_ld`/`svm_block_st` address must have. SVM_BLOCK_LD.md: the
/// read's descriptor bit 3 allows dword-aligned addresses, and IGC 1.0.12504 sets it on
/// every block read it emits while printing no suffix (reading c[1..3] of a
/// `__constant float*` is one 16-byte read at c+4). Only a read written `.aligned` and every
/// write (SVM_BLOCK_ST.md) must be oword-aligned.
pub(super) fn svm_block_align(inst: &Inst) -> u64 {
    match (&inst.op, &inst.sub) {
        (Opcode::SvmBlockLd, SubOp::Word(w)) if w == "aligned" => 16,
        (Opcode::SvmBlockLd, _) => 4,
        _ => 16,
    }
}

/// The byte offset in its surface of an `oword_ld`/`oword_st` block at `offset` (in
/// OWords; in bytes for `oword_ld_unaligned`).
pub(super) fn oword_offset(op: Opcode, offset: u64) -> u64 {
    if op == Opcode::OwordLdUnaligned {
        offset
    } else {
        offset.wrapping_mul(16)
    }
}

/// `oword_ld/oword_st (n) SURF offset data`: n OWords at `offset` (in OWords; in bytes for
/// `oword_ld_unaligned`), whatever the channel enables.
fn oword<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst) -> Result<(), FaultKind> {
    let (space, base) = ctx.surface(inst.operands.first())?;
    let offset = ctx.scalar(inst.operands.get(1), 1)?;
    let addr = base.wrapping_add(oword_offset(inst.op, offset));
    let len = inst.exec.size * 16;
    let data = need(raw(inst.operands.get(2))?, "data")?;
    if inst.op == Opcode::OwordSt {
        let bytes = ctx.grf(data, len)?.to_vec();
        ctx.mem_write(space, addr, &bytes)
    } else {
        let mut buf = vec![0u8; len as usize];
        ctx.mem_read(space, addr, &mut buf)?;
        ctx.write_grf(data, &buf)
    }
}

/// `*4scaled` and `gather4_scaled`: one register plane per enabled channel (R, G, B, A),
/// each `max(exec_size, GRF/4)` dwords; channel c reads dword c after each lane's address.
#[allow(clippy::too_many_arguments)]
fn four_scaled<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    chen: u32,
    channels: u8,
    (space, base): (MemSpace, u64),
    offsets: u32,
    offset_size: u32,
    data: Option<u32>,
    store: bool,
) -> Result<(), FaultKind> {
    let n = inst.exec.size;
    let plane = n.max(ctx.tables.grf_size / 4) * 4;
    let op = if store { MemOp::Store } else { MemOp::Load };
    let d = match (store, data) {
        (true, d) => Some(need(d, "data")?),
        (false, d) => d,
    };
    let mut batch = Batch::new(space, 4, 4, op, d.map(|_| Results { slot: 4, shift: 0 }));
    let d = d.unwrap_or(0);
    let lane_offsets = lane_values(ctx, offsets, offset_size, n, chen)?;
    let mut pos = 0;
    for c in 0..4u32 {
        if channels >> c & 1 == 0 {
            continue;
        }
        for lane in (0..n).filter(|l| chen >> l & 1 != 0) {
            let addr = base.wrapping_add(lane_offsets[lane as usize]).wrapping_add(4 * c as u64);
            let at = d + pos * plane + lane * 4;
            let value = if store { batch.or_flush(ctx, ctx.raw_elem(at, 0, 4))? } else { 0 };
            batch.push(ctx, lane, addr, (value, 0), at)?;
        }
        pos += 1;
    }
    batch.flush(ctx)
}

/// `gather_scaled.N` / `scatter_scaled.N`: N (1, 2 or 4) bytes per lane in a dword slot.
fn scaled<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    chen: u32,
    blocks: u32,
    (space, base): (MemSpace, u64),
    offsets: u32,
    data: u32,
) -> Result<(), FaultKind> {
    let store = inst.op != Opcode::GatherScaled;
    let op = if store { MemOp::Store } else { MemOp::Load };
    let mut batch = Batch::new(space, blocks, 1, op, Some(Results { slot: blocks, shift: 0 }));
    let lane_offsets = lane_values(ctx, offsets, 4, inst.exec.size, chen)?;
    for lane in (0..inst.exec.size).filter(|l| chen >> l & 1 != 0) {
        let addr = base.wrapping_add(lane_offsets[lane as usize]);
        let value = if store { batch.or_flush(ctx, ctx.raw_elem(data + lane * 4, 0, blocks))? } else { 0 };
        batch.push(ctx, lane, addr, (value, 0), data + lane * 4)?;
    }
    batch.flush(ctx)
}

/// New value and returned value of one atomic operation on `bits`-wide data.
pub fn apply_atomic(op: AtomicOp, bits: u32, old: u64, s0: u64, s1: u64) -> (u64, u64) {
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let signed = |v: u64| -> i64 { ((v << (64 - bits)) as i64) >> (64 - bits) };
    let float = |v: u64| -> f64 {
        match bits {
            16 => crate::exec::convert::f16_bits_to_f32(v as u16) as f64,
            64 => f64::from_bits(v),
            _ => f32::from_bits(v as u32) as f64,
        }
    };
    let to_float = |f: f64| -> u64 {
        match bits {
            16 => crate::exec::convert::f32_to_f16_bits(f as f32, 0) as u64,
            64 => f.to_bits(),
            _ => (f as f32).to_bits() as u64,
        }
    };
    let new = match op {
        AtomicOp::Add => old.wrapping_add(s0),
        AtomicOp::Sub => old.wrapping_sub(s0),
        AtomicOp::Inc => old.wrapping_add(1),
        AtomicOp::Dec | AtomicOp::Predec => old.wrapping_sub(1),
        AtomicOp::Min => (old & mask).min(s0 & mask),
        AtomicOp::Max => (old & mask).max(s0 & mask),
        AtomicOp::MinSint => signed(old).min(signed(s0)) as u64,
        AtomicOp::MaxSint => signed(old).max(signed(s0)) as u64,
        AtomicOp::Xchg | AtomicOp::Store => s0,
        AtomicOp::Cmpxchg => {
            if old & mask == s1 & mask {
                s0
            } else {
                old
            }
        }
        AtomicOp::And => old & s0,
        AtomicOp::Or => old | s0,
        AtomicOp::Xor => old ^ s0,
        AtomicOp::Fadd => to_float(float(old) + float(s0)),
        AtomicOp::Fsub => to_float(float(old) - float(s0)),
        AtomicOp::Fmax => {
            let (a, b) = (float(old), float(s0));
            if b > a || a.is_nan() {
                s0
            } else {
                old
            }
        }
        AtomicOp::Fmin => {
            let (a, b) = (float(old), float(s0));
            if b < a || a.is_nan() {
                s0
            } else {
                old
            }
        }
        AtomicOp::Fcmpwr => {
            if float(old) == float(s0) {
                s1
            } else {
                old
            }
        }
        AtomicOp::Load => old,
    } & mask;
    let ret = if op == AtomicOp::Predec { new } else { old & mask };
    (new, ret)
}

/// Whether an atomic writes memory: loads never do, and a compare-exchange whose compare
/// failed leaves memory untouched (so it is not reported as a writer).
pub(super) fn atomic_stores(op: AtomicOp, old: u64, new: u64) -> bool {
    match op {
        AtomicOp::Load => false,
        AtomicOp::Cmpxchg | AtomicOp::Fcmpwr => old != new,
        _ => true,
    }
}

/// Per-lane atomics; `addr_of` gives each lane's memory and address.
#[allow(clippy::too_many_arguments)]
fn atomic<O: Observer, F>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    chen: u32,
    op: AtomicOp,
    bits: u32,
    addr_of: F,
    dst: Option<u32>,
    s0: Option<u32>,
    s1: Option<u32>,
) -> Result<(), FaultKind>
where
    F: Fn(&Ctx<'_, O>, u32) -> Result<(MemSpace, u64), FaultKind>,
{
    let size = bits / 8;
    // Sources and results use dword slots for 16- and 32-bit atomics, qwords for 64-bit.
    let slot = size.max(4);
    let results = dst.map(|_| Results { slot, shift: 0 });
    // Every lane's address first, as the whole payload is read before any access.
    let (mut space, mut lane_addrs) = (MemSpace::Svm, [0u64; 32]);
    for lane in (0..inst.exec.size.min(32)).filter(|l| chen >> l & 1 != 0) {
        (space, lane_addrs[lane as usize]) = addr_of(ctx, lane)?;
    }
    let mut batch = Batch::new(space, size, size as u64, MemOp::Atomic(op, bits), results);
    for lane in (0..inst.exec.size.min(32)).filter(|l| chen >> l & 1 != 0) {
        let a = batch.or_flush(ctx, ctx.source_elem(s0, lane, slot))?;
        let c = batch.or_flush(ctx, ctx.source_elem(s1, lane, slot))?;
        batch.push(ctx, lane, lane_addrs[lane as usize], (a, c), dst.unwrap_or(0) + lane * slot)?;
    }
    batch.flush(ctx)
}

/// LSC load/store/atomic on ugm (flat A64/A32) or slm (A32), per LSC_UNTYPED.md: component
/// v of lane n lives in register plane v (planes GRF-aligned); transposed forms read
/// `vector` consecutive elements from lane 0's address into consecutive slots.
fn lsc<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    inst: &Inst,
    chen: u32,
    sfid: crate::isa::LscSfid,
    aop: Option<AtomicOp>,
) -> Result<(), FaultKind> {
    let ops = &inst.operands;
    let addr_op = ops.iter().find_map(|o| if let Operand::LscAddr(a) = o { Some(a) } else { None });
    let data_op = ops.iter().find_map(|o| if let Operand::LscData(d) = o { Some(*d) } else { None });
    let (Some(addr), Some(data)) = (addr_op, data_op) else {
        return Err(FaultKind::NotImplemented("LSC operands".into()));
    };
    if !matches!(addr.model, LscAddrModel::Flat) {
        return Err(FaultKind::NotImplemented("LSC address models other than flat".into()));
    }
    let space = match sfid {
        crate::isa::LscSfid::Slm => MemSpace::Slm(ctx.thread.group),
        _ => MemSpace::Svm,
    };
    let asize = addr.size.bytes();
    let mem_bytes = data.data_size.mem_bytes();
    let reg_bytes = if data.transpose { mem_bytes } else { data.data_size.reg_bytes() };
    let n = if data.transpose { 1 } else { inst.exec.size };
    let plane = (n * reg_bytes).div_ceil(ctx.tables.grf_size) * ctx.tables.grf_size;
    let lanes = if data.transpose { 1 } else { chen };
    let addr_base = need(Some(addr.addr.base).filter(|_| !addr.addr.is_null), "address")?;
    let store = inst.op == Opcode::LscStore;
    let high = data.data_size == LscDataSize::D16U32H;
    let results =
        (!data.raw.is_null).then_some(Results { slot: reg_bytes, shift: if high { 16 } else { 0 } });
    let mut batch = match aop {
        // Atomics must be aligned to their data, and return their result unshifted.
        Some(op) => {
            let results = results.map(|r| Results { shift: 0, ..r });
            Batch::new(space, mem_bytes, mem_bytes as u64, MemOp::Atomic(op, mem_bytes * 8), results)
        }
        // Plain LSC loads and stores may be unaligned: IGC stores two packed halves with one
        // d32 at a 2-byte-aligned address (vstore_half on acm-g10).
        None if store => Batch::new(space, mem_bytes, 1, MemOp::Store, None),
        None => Batch::new(space, mem_bytes, 1, MemOp::Load, results),
    };
    // An atomic's sources (`dst addr src1 src2`).
    let (s1, s2) = match aop {
        Some(_) => (raw(ops.get(2))?, raw(ops.get(3))?),
        None => (None, None),
    };
    let lane_addrs = lane_values(ctx, addr_base, asize, n, lanes)?;
    for lane in (0..n).filter(|l| lanes >> l & 1 != 0) {
        let a = lane_addrs[lane as usize];
        let a = (a as i64).wrapping_mul(addr.scale.max(1) as i64).wrapping_add(addr.offset) as u64;
        let a = if asize < 8 { a & ((1u64 << (asize * 8)) - 1) } else { a };
        if let Some(op) = aop {
            // Operands `dst addr src1 src2`; for a compare-and-swap src1 is the compare value
            // and src2 the value stored on a match.
            let slot = data.data_size.reg_bytes();
            let x = batch.or_flush(ctx, ctx.source_elem(s1, lane, slot))?;
            let y = batch.or_flush(ctx, ctx.source_elem(s2, lane, slot))?;
            let sources = if matches!(op, AtomicOp::Cmpxchg | AtomicOp::Fcmpwr) { (y, x) } else { (x, y) };
            batch.push(ctx, lane, a, sources, data.raw.base + lane * slot)?;
            continue;
        }
        for v in 0..data.vector {
            let at =
                data.raw.base + if data.transpose { v * reg_bytes } else { v * plane + lane * reg_bytes };
            let m = a.wrapping_add((v * mem_bytes) as u64);
            let value = if store {
                let raw = batch.or_flush(ctx, ctx.raw_elem(at, 0, reg_bytes))?;
                if high {
                    raw >> 16
                } else {
                    raw
                }
            } else {
                0
            };
            batch.push(ctx, lane, m, (value, 0), at)?;
        }
    }
    batch.flush(ctx)
}
