//! Compiled message payloads. Each gather, scatter and atomic message (SVM, surface, SLM and
//! flat LSC) is translated once, when the interpreter is built, into where its payload sits
//! in the GRF: the register bytes of its lanes' addresses, of its store data or atomic
//! sources and of its results (offsets and strides), and the memory offset of each piece of
//! a lane's access. Running one reads those bytes straight from the register file and hands
//! the accesses, in the order `message.rs` makes them, to the same memory pass. Block
//! messages (`svm_block_*`, `oword_*`: bytes at one address) compile to their address
//! operand, alignment and data register, and move their bytes with the same two calls as
//! `message.rs`. A message whose payload reaches past the register file, or of a form this
//! does not cover (2D blocks, LSC address models other than flat), runs in `message.rs`,
//! which stays the oracle: generated tests compare the two.

use super::control::size_mask;
use super::ctx::{Ctx, SLM_ADDRESS_MASK};
use super::fault::FaultKind;
use super::mem_pass::{Batch, MemOp, Results};
use super::observer::Observer;
use super::operand::{load_le, store_le};
use crate::isa::{AtomicOp, LscAddrModel, LscDataSize, LscSfid, Opcode, Operand, Region, SubOp};
use crate::machine::{MemSpace, Svm, PAGE_SIZE};
use crate::program::{Inst, Program};

/// Most pieces a lane's access has for [`Ctx::load_plain`] (a `gather4` of four channels).
const MAX_PLAIN_PIECES: usize = 4;

/// The memory a message reaches.
#[derive(Clone, Copy, Debug)]
enum Space {
    Svm,
    /// The SLM of the thread's work-group (LSC `.slm`).
    Slm,
    /// What this surface state names (`Ctx::state_memory`): `%slm` or a bound buffer.
    State(u32),
}

/// A value added to every lane's address: a surface's global offset, an SVM base.
#[derive(Clone, Copy, Debug)]
enum Scalar {
    Imm(u64),
    /// The raw bits of the `size`-byte element at this GRF byte.
    Reg(u32, u32),
}

/// One compiled message.
#[derive(Clone, Debug)]
pub struct MessageOp {
    space: Space,
    base: Scalar,
    /// GRF byte of lane 0's address element, its size (2, 4 or 8 bytes), and the LSC
    /// transform of each address: times `scale`, plus `offset`, masked to `addr_mask`.
    addr: u32,
    addr_size: u32,
    scale: i64,
    offset: i64,
    addr_mask: u64,
    /// Lanes: the execution size; with `one_lane` (LSC transposed forms) lane 0 alone,
    /// whatever the channel enables.
    n: u32,
    one_lane: bool,
    /// The memory offset of each piece of a lane's access from the lane's address.
    pieces: Box<[u32]>,
    /// Pieces outer, lanes inner (`*4scaled`: one register plane per channel); else each
    /// lane's pieces in turn.
    piece_major: bool,
    /// GRF byte of lane 0's first piece (its store data or its result), and the strides
    /// from lane to lane and from piece to piece.
    data: u32,
    lane_stride: u32,
    piece_stride: u32,
    /// Bytes per access, their alignment, what each does, where results go.
    size: u32,
    align: u64,
    op: MemOp,
    results: Option<Results>,
    /// Stores: bytes read at each access's register, and the right shift they take (16 for
    /// LSC `d16u32h`).
    store: Option<(u32, u32)>,
    /// Atomics: GRF bytes of the two sources in the order the operation takes them
    /// (`None`: 0), `source_slot` bytes per lane.
    sources: [Option<u32>; 2],
    source_slot: u32,
    /// GRF bytes the payload spans: a register file shorter than this runs the message in
    /// `message.rs`, which faults where it must.
    extent: u32,
}

/// GRF offset of a raw or LSC data operand: `Some(None)` for `%null`, `None` for any
/// other form (left to `message.rs`, which names it in its fault).
fn raw(op: Option<&Operand>) -> Option<Option<u32>> {
    super::message::raw(op).ok()
}

/// A scalar operand as `Ctx::scalar` reads it: the raw bits of its first element.
fn scalar(op: Option<&Operand>) -> Option<Scalar> {
    match op? {
        Operand::Imm(imm) if !imm.ty.is_packed_vector() => Some(Scalar::Imm(imm.bits)),
        Operand::Direct(d) if d.is_null => Some(Scalar::Imm(0)),
        Operand::Direct(d) => Some(Scalar::Reg(d.base, d.ty.size())),
        _ => None,
    }
}

/// A surface operand: its state (SLM or a buffer, told apart when the message runs).
fn surface(op: Option<&Operand>, program: &Program) -> Option<Space> {
    let Some(Operand::State(id)) = op else { return None };
    program.states.get(id.0 as usize).map(|_| Space::State(id.0))
}

impl MessageOp {
    /// A message on `space` with the defaults of the non-LSC forms: no base, plain
    /// addresses of `addr_size` bytes at `addr`, one piece at offset 0, no data.
    fn plain(space: Space, addr: u32, addr_size: u32, n: u32, size: u32, op: MemOp) -> MessageOp {
        MessageOp {
            space,
            base: Scalar::Imm(0),
            addr,
            addr_size,
            scale: 1,
            offset: 0,
            addr_mask: u64::MAX,
            n,
            one_lane: false,
            pieces: Box::new([0]),
            piece_major: false,
            data: 0,
            lane_stride: 0,
            piece_stride: 0,
            size,
            align: size as u64,
            op,
            results: None,
            store: None,
            sources: [None, None],
            source_slot: 0,
            extent: 0,
        }
    }

    /// The compiled form of memory instruction `inst`, if it has one.
    pub fn compile(inst: &Inst, program: &Program) -> Option<MessageOp> {
        let ops = &inst.operands;
        let n = inst.exec.size.min(32);
        let grf = program.grf_size.max(1);
        let load_or_store = |store: bool| if store { MemOp::Store } else { MemOp::Load };
        let mut m = match (inst.op, &inst.sub) {
            (Opcode::SvmGather | Opcode::SvmScatter, &SubOp::Blocks { block_size, num_blocks }) => {
                let store = inst.op == Opcode::SvmScatter;
                let data = raw(ops.get(1))?;
                if store && data.is_none() || !matches!(block_size, 1 | 4 | 8) {
                    return None;
                }
                // SVM_GATHER.md: byte blocks of a lane share one slot of max(4, N) bytes;
                // 4- and 8-byte blocks form N planes of `exec_size` blocks.
                let (len, count) = if block_size == 1 { (num_blocks, 1) } else { (block_size, num_blocks) };
                let mut m = MessageOp::plain(Space::Svm, raw(ops.first())??, 8, n, len, load_or_store(store));
                m.align = block_size as u64;
                m.pieces = (0..count).map(|j| j * block_size).collect();
                m.data = data.unwrap_or(0);
                (m.lane_stride, m.piece_stride) =
                    if block_size == 1 { (num_blocks.max(4), 0) } else { (block_size, n * block_size) };
                m.results = data.map(|_| Results { slot: len, shift: 0 });
                m.store = store.then_some((len, 0));
                m
            }
            (
                Opcode::SvmGather4Scaled
                | Opcode::SvmScatter4Scaled
                | Opcode::Gather4Scaled
                | Opcode::Scatter4Scaled,
                &SubOp::Channels(channels),
            ) => {
                let svm = matches!(inst.op, Opcode::SvmGather4Scaled | Opcode::SvmScatter4Scaled);
                let store = matches!(inst.op, Opcode::SvmScatter4Scaled | Opcode::Scatter4Scaled);
                // Operands: `base offsets data` (SVM) or `surface global offsets data`.
                let (space, base, at) = if svm {
                    (Space::Svm, scalar(ops.first())?, 1)
                } else {
                    (surface(ops.first(), program)?, scalar(ops.get(1))?, 2)
                };
                let offsets = raw(ops.get(at))??;
                let data = raw(ops.get(at + 1))?;
                if store && data.is_none() {
                    return None;
                }
                let mut m =
                    MessageOp::plain(space, offsets, if svm { 8 } else { 4 }, n, 4, load_or_store(store));
                m.base = base;
                m.pieces = (0..4).filter(|c| channels >> c & 1 != 0).map(|c| 4 * c).collect();
                m.piece_major = true;
                m.data = data.unwrap_or(0);
                (m.lane_stride, m.piece_stride) = (4, n.max(grf / 4) * 4);
                m.results = data.map(|_| Results { slot: 4, shift: 0 });
                m.store = store.then_some((4, 0));
                m
            }
            (Opcode::GatherScaled | Opcode::ScatterScaled, &SubOp::Blocks { num_blocks, .. }) => {
                let store = inst.op == Opcode::ScatterScaled;
                let mut m = MessageOp::plain(
                    surface(ops.first(), program)?,
                    raw(ops.get(2))??,
                    4,
                    n,
                    num_blocks,
                    load_or_store(store),
                );
                m.base = scalar(ops.get(1))?;
                m.align = 1;
                (m.data, m.lane_stride) = (raw(ops.get(3))??, 4);
                m.results = Some(Results { slot: num_blocks, shift: 0 });
                m.store = store.then_some((num_blocks, 0));
                m
            }
            (Opcode::SvmAtomic, &SubOp::Atomic { op, bits }) => {
                let (dst, s0, s1) = (raw(ops.get(1))?, raw(ops.get(2))?, raw(ops.get(3))?);
                Self::atomic(Space::Svm, raw(ops.first())??, 8, n, op, bits, dst, [s0, s1])
            }
            (Opcode::DwordAtomic, &SubOp::Atomic { op, bits }) => {
                let space = surface(ops.first(), program)?;
                let (s0, s1, dst) = (raw(ops.get(2))?, raw(ops.get(3))?, raw(ops.get(4))?);
                Self::atomic(space, raw(ops.get(1))??, 4, n, op, bits, dst, [s0, s1])
            }
            (Opcode::LscLoad | Opcode::LscStore | Opcode::LscAtomic, SubOp::Lsc { sfid, atomic, .. }) => {
                Self::lsc(inst, n, grf, *sfid, *atomic)?
            }
            _ => return None,
        };
        m.extent = m.span()?;
        Some(m)
    }

    /// `svm_atomic` and `dword_atomic`: 16- and 32-bit data in dword slots, 64-bit in qwords.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        space: Space,
        addr: u32,
        addr_size: u32,
        n: u32,
        op: AtomicOp,
        bits: u32,
        dst: Option<u32>,
        sources: [Option<u32>; 2],
    ) -> MessageOp {
        let size = bits / 8;
        let slot = size.max(4);
        let mut m = MessageOp::plain(space, addr, addr_size, n, size, MemOp::Atomic(op, bits));
        (m.data, m.lane_stride) = (dst.unwrap_or(0), slot);
        m.results = dst.map(|_| Results { slot, shift: 0 });
        (m.sources, m.source_slot) = (sources, slot);
        m
    }

    /// LSC loads, stores and atomics on flat addresses (LSC_UNTYPED.md): component v of lane
    /// n in register plane v (planes GRF-aligned); transposed forms read `vector`
    /// consecutive elements from lane 0's address into consecutive slots.
    fn lsc(inst: &Inst, n: u32, grf: u32, sfid: LscSfid, atomic: Option<AtomicOp>) -> Option<MessageOp> {
        let ops = &inst.operands;
        let addr = ops.iter().find_map(|o| if let Operand::LscAddr(a) = o { Some(a) } else { None })?;
        let data = ops.iter().find_map(|o| if let Operand::LscData(d) = o { Some(*d) } else { None })?;
        if !matches!(addr.model, LscAddrModel::Flat) || addr.addr.is_null {
            return None;
        }
        let store = inst.op == Opcode::LscStore;
        if store && data.raw.is_null {
            return None;
        }
        let space = if sfid == LscSfid::Slm { Space::Slm } else { Space::Svm };
        let addr_size = addr.size.bytes();
        let mem_bytes = data.data_size.mem_bytes();
        let reg_bytes = if data.transpose { mem_bytes } else { data.data_size.reg_bytes() };
        let lanes = if data.transpose { 1 } else { n };
        let plane = (lanes * reg_bytes).div_ceil(grf) * grf;
        let high = data.data_size == LscDataSize::D16U32H;
        let mut m = MessageOp::plain(space, addr.addr.base, addr_size, lanes, mem_bytes, MemOp::Load);
        (m.scale, m.offset) = (addr.scale.max(1) as i64, addr.offset);
        m.addr_mask = if addr_size < 8 { (1u64 << (addr_size * 8)) - 1 } else { u64::MAX };
        m.one_lane = data.transpose;
        m.data = data.raw.base;
        m.lane_stride = reg_bytes;
        let results =
            (!data.raw.is_null).then_some(Results { slot: reg_bytes, shift: if high { 16 } else { 0 } });
        match atomic {
            // Atomics are aligned to their data and return their result unshifted; operands
            // `dst addr src1 src2`, and a compare-and-swap takes src2 as the value it stores.
            Some(op) => {
                m.op = MemOp::Atomic(op, mem_bytes * 8);
                m.results = results.map(|r| Results { shift: 0, ..r });
                let (s1, s2) = (raw(ops.get(2))?, raw(ops.get(3))?);
                m.sources =
                    if matches!(op, AtomicOp::Cmpxchg | AtomicOp::Fcmpwr) { [s2, s1] } else { [s1, s2] };
                m.source_slot = data.data_size.reg_bytes();
                m.lane_stride = m.source_slot;
            }
            // Plain loads and stores may be unaligned.
            None => {
                m.align = 1;
                m.pieces = (0..data.vector).map(|v| v * mem_bytes).collect();
                m.piece_stride = if data.transpose { reg_bytes } else { plane };
                if store {
                    m.op = MemOp::Store;
                    m.store = Some((reg_bytes, if high { 16 } else { 0 }));
                } else {
                    m.results = results;
                }
            }
        }
        Some(m)
    }

    /// The GRF bytes the payload spans (None past 4 GB).
    fn span(&self) -> Option<u32> {
        let lanes = if self.one_lane { 1 } else { self.n.max(1) };
        let mut end = self.addr.checked_add(lanes.checked_mul(self.addr_size)?)?;
        if let Scalar::Reg(at, size) = self.base {
            end = end.max(at.checked_add(size)?);
        }
        let touched = self.results.map_or(0, |r| r.slot).max(self.store.map_or(0, |s| s.0));
        if touched > 0 {
            let last = (lanes - 1)
                .checked_mul(self.lane_stride)?
                .checked_add((self.pieces.len() as u32).saturating_sub(1).checked_mul(self.piece_stride)?)?;
            end = end.max(self.data.checked_add(last)?.checked_add(touched)?);
        }
        for s in self.sources.iter().flatten() {
            end = end.max(s.checked_add(lanes.checked_mul(self.source_slot)?)?);
        }
        Some(end)
    }
}

/// The most bytes a compiled block message moves (an SVM or OWord block is at most 8
/// OWords).
const MAX_BLOCK: usize = 256;

/// One compiled block message (`svm_block_ld`/`st`, `oword_ld`, `oword_ld_unaligned`,
/// `oword_st`): `len` bytes at one address, whatever the channel enables.
#[derive(Clone, Debug)]
pub struct BlockOp {
    space: Space,
    /// The address (SVM) or the offset in the surface, in OWords for `oword_ld`/`oword_st`.
    at: Scalar,
    align: u64,
    len: u32,
    /// GRF byte of the data, and whether it is stored (else loaded there).
    data: u32,
    store: bool,
    oword: Option<Opcode>,
    /// GRF bytes the operands span, as for [`MessageOp`].
    extent: u32,
}

impl BlockOp {
    /// The compiled form of block message `inst`, if it is one.
    pub fn compile(inst: &Inst, program: &Program) -> Option<BlockOp> {
        let ops = &inst.operands;
        let len = inst.exec.size.checked_mul(16).filter(|&l| l as usize <= MAX_BLOCK)?;
        let (space, at, align, data, oword) = match inst.op {
            Opcode::SvmBlockLd | Opcode::SvmBlockSt => {
                let align = super::message::svm_block_align(inst);
                (Space::Svm, scalar(ops.first())?, align, raw(ops.get(1))??, None)
            }
            Opcode::OwordLd | Opcode::OwordLdUnaligned | Opcode::OwordSt => {
                (surface(ops.first(), program)?, scalar(ops.get(1))?, 1, raw(ops.get(2))??, Some(inst.op))
            }
            _ => return None,
        };
        let mut extent = data.checked_add(len)?;
        if let Scalar::Reg(r, size) = at {
            extent = extent.max(r.checked_add(size)?);
        }
        let store = matches!(inst.op, Opcode::SvmBlockSt | Opcode::OwordSt);
        Some(BlockOp { space, at, align, len, data, store, oword, extent })
    }
}

/// The `size`-byte element at GRF byte `at` (inside the span checked before).
#[inline]
fn elem(grf: &[u8], at: u32, size: u32) -> u64 {
    grf.get(at as usize..(at + size) as usize).map_or(0, |b| load_le(b, size))
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs compiled message `m` under channel enables `chen`: false, with nothing done,
    /// when the register file is shorter than its payload.
    pub(super) fn run_message(&mut self, m: &MessageOp, chen: u32) -> Result<bool, FaultKind> {
        if self.thread.grf.len() < m.extent as usize {
            return Ok(false);
        }
        let (space, mut base) = match m.space {
            Space::Svm => (MemSpace::Svm, 0),
            Space::Slm => (MemSpace::Slm(self.thread.group), 0),
            Space::State(id) => self.state_memory(id)?,
        };
        let grf = &self.thread.grf;
        base = base.wrapping_add(match m.base {
            Scalar::Imm(v) => v,
            Scalar::Reg(at, size) => elem(grf, at, size),
        });
        let lanes = if m.one_lane { 1 } else { chen & size_mask(m.n) };
        // Every lane's address first, as the whole payload is read before any access.
        let mut addrs = [0u64; 32];
        for lane in lanes_of(lanes) {
            let a = elem(grf, m.addr + lane * m.addr_size, m.addr_size) as i64;
            let a = a.wrapping_mul(m.scale).wrapping_add(m.offset) as u64 & m.addr_mask;
            addrs[lane as usize] = base.wrapping_add(a);
        }
        if self.load_plain(m, space, lanes, &addrs) || self.store_plain(m, space, lanes, &addrs) {
            return Ok(true);
        }
        let mut batch = Batch::new(space, m.size, m.align, m.op, m.results);
        // The accesses in the order `message.rs` makes them.
        if m.piece_major {
            for j in 0..m.pieces.len() as u32 {
                for lane in lanes_of(lanes) {
                    self.push_access(m, &mut batch, addrs[lane as usize], lane, j)?;
                }
            }
        } else {
            for lane in lanes_of(lanes) {
                for j in 0..m.pieces.len() as u32 {
                    self.push_access(m, &mut batch, addrs[lane as usize], lane, j)?;
                }
            }
        }
        batch.flush(self)?;
        Ok(true)
    }

    /// A load whose accesses are all plain (aligned; in the SLM, or in one page of a
    /// buffer) and whose results land in packed runs (lane i at `slot · i` in each piece's
    /// plane), done straight: every access read, then each plane written as one region,
    /// as the batch does them in one pass (pieces outer; an observer hears it only for at
    /// most 32 accesses, which the batch does in one pass). False, with nothing done, for
    /// any other (the batch makes the accesses one by one, and faults where it must), and
    /// for observers that hear lanes.
    #[inline(always)]
    fn load_plain(&mut self, m: &MessageOp, space: MemSpace, lanes: u32, addrs: &[u64; 32]) -> bool {
        let Some(r) = m.results else { return false };
        let pieces = m.pieces.len();
        if m.op != MemOp::Load
            || (O::ACTIVE && O::LANE_ACCESSES)
            || lanes == 0
            || m.lane_stride != r.slot
            || !matches!(r.slot, 1 | 2 | 4 | 8)
            || pieces > MAX_PLAIN_PIECES
            || (pieces > 1 && !m.piece_major)
            || (O::ACTIVE && pieces * lanes.count_ones() as usize > 32)
        {
            return false;
        }
        let n = 32 - lanes.leading_zeros();
        let last_plane = m.data + (pieces as u32 - 1) * m.piece_stride;
        if (last_plane + n * r.slot) as usize > self.thread.grf.len() {
            return false;
        }
        let (size, align) = (m.size as u64, m.align);
        let mut values = [[0u64; 32]; MAX_PLAIN_PIECES];
        match space {
            MemSpace::Slm(group) => {
                let Some(slm) = self.slms.get(group as usize) else { return false };
                let len = slm.bytes.len() as u64;
                for (j, plane) in values[..pieces].iter_mut().enumerate() {
                    for lane in lanes_of(lanes) {
                        let at = addrs[lane as usize].wrapping_add(m.pieces[j] as u64) & SLM_ADDRESS_MASK;
                        if !plain_in_slm(at, size, align, len) {
                            return false;
                        }
                        plane[lane as usize] = load_le(&slm.bytes[at as usize..], m.size) << r.shift;
                    }
                }
            }
            MemSpace::Svm => {
                let mut bounds = (0u64, 0u64);
                // The page the last lane read, looked up again only when a lane leaves it
                // (a lookup hashes the page number; the lanes of a gather mostly share pages).
                let mut last: Option<(u64, &[u8; PAGE_SIZE as usize])> = None;
                for (j, plane) in values[..pieces].iter_mut().enumerate() {
                    for lane in lanes_of(lanes) {
                        let addr = addrs[lane as usize].wrapping_add(m.pieces[j] as u64);
                        if !plain_in_buffer(self.svm, addr, size, align, &mut bounds) {
                            return false;
                        }
                        let page_no = addr / PAGE_SIZE;
                        let page = match last {
                            Some((no, page)) if no == page_no => page,
                            _ => last.insert((page_no, self.svm.page(page_no))).1,
                        };
                        plane[lane as usize] =
                            load_le(&page[(addr % PAGE_SIZE) as usize..], m.size) << r.shift;
                    }
                }
                // The reads noted for the run's split over cores, as the batch notes them.
                if let Some(acc) = self.svm.accesses.as_deref_mut().filter(|a| !a.writes_only) {
                    for &piece in m.pieces.iter() {
                        for lane in lanes_of(lanes) {
                            acc.reads.add(addrs[lane as usize].wrapping_add(piece as u64), size);
                        }
                    }
                }
            }
        }
        // What an observer that does not hear lanes one by one hears of the batch's single
        // pass: the reads in access order, then each plane's write.
        if O::ACTIVE {
            for j in 0..pieces {
                for lane in lanes_of(lanes) {
                    let addr = addrs[lane as usize].wrapping_add(m.pieces[j] as u64);
                    let addr = if matches!(space, MemSpace::Slm(_)) { addr & SLM_ADDRESS_MASK } else { addr };
                    self.obs.access_lane(Some(lane));
                    self.obs.mem_read(self.tid, space, addr, size);
                }
            }
        }
        for (j, plane) in values[..pieces].iter().enumerate() {
            let at = m.data + j as u32 * m.piece_stride;
            let written = self.write_region(at, Region::dst(1), r.slot, n, lanes, plane);
            debug_assert!(written.is_ok(), "the planes were checked to lie in the register file");
        }
        true
    }

    /// A store whose accesses are all plain (aligned; in the SLM, or inside one buffer's
    /// page), when nothing observes it: every access checked, then done in the batch's
    /// order (pieces outer for the planar forms, then lanes, a later lane's bytes over an
    /// earlier one's). False, with nothing done, for any other.
    #[inline(always)]
    fn store_plain(&mut self, m: &MessageOp, space: MemSpace, lanes: u32, addrs: &[u64; 32]) -> bool {
        let Some((len, shift)) = m.store.filter(|_| !O::ACTIVE && m.op == MemOp::Store && lanes != 0) else {
            return false;
        };
        let (size, align) = (m.size as u64, m.align);
        let access = |lane: u32, j: usize| addrs[lane as usize].wrapping_add(m.pieces[j] as u64);
        let value = |grf: &[u8], lane: u32, j: usize| {
            elem(grf, m.data + lane * m.lane_stride + j as u32 * m.piece_stride, len) >> shift
        };
        match space {
            MemSpace::Slm(group) => {
                let Some(slm) = self.slms.get(group as usize) else { return false };
                let slm_len = slm.bytes.len() as u64;
                for j in 0..m.pieces.len() {
                    for lane in lanes_of(lanes) {
                        if !plain_in_slm(access(lane, j) & SLM_ADDRESS_MASK, size, align, slm_len) {
                            return false;
                        }
                    }
                }
                let Some(slm) = self.slms.get_mut(group as usize) else { return false };
                let grf = &self.thread.grf;
                let put = |lane: u32, j: usize| {
                    let at = (access(lane, j) & SLM_ADDRESS_MASK) as usize;
                    store_le(&mut slm.bytes[at..at + size as usize], m.size, value(grf, lane, j));
                };
                each_access(m, lanes, put);
            }
            MemSpace::Svm => {
                let mut bounds = (0u64, 0u64);
                for j in 0..m.pieces.len() {
                    for lane in lanes_of(lanes) {
                        if !plain_in_buffer(self.svm, access(lane, j), size, align, &mut bounds) {
                            return false;
                        }
                    }
                }
                let (svm, grf) = (&mut *self.svm, &self.thread.grf);
                let put = |lane: u32, j: usize| {
                    let addr = access(lane, j);
                    let page = svm.page_mut(addr / PAGE_SIZE);
                    let at = (addr % PAGE_SIZE) as usize;
                    store_le(&mut page[at..at + size as usize], m.size, value(grf, lane, j));
                    if let Some(acc) = svm.accesses.as_deref_mut() {
                        acc.writes.add(addr, size);
                    }
                };
                each_access(m, lanes, put);
            }
        }
        true
    }

    /// Runs compiled block message `b`: false, with nothing done, when the register file is
    /// shorter than its operands.
    pub(super) fn run_block(&mut self, b: &BlockOp) -> Result<bool, FaultKind> {
        if self.thread.grf.len() < b.extent as usize {
            return Ok(false);
        }
        let (space, base) = match b.space {
            Space::Svm => (MemSpace::Svm, 0),
            Space::Slm => (MemSpace::Slm(self.thread.group), 0),
            Space::State(id) => self.state_memory(id)?,
        };
        let at = match b.at {
            Scalar::Imm(v) => v,
            Scalar::Reg(at, size) => elem(&self.thread.grf, at, size),
        };
        let addr = base.wrapping_add(b.oword.map_or(at, |op| super::message::oword_offset(op, at)));
        super::message::check_align(addr, b.align, 0)?;
        let (mut buf, len, data) = ([0u8; MAX_BLOCK], b.len as usize, b.data as usize);
        if b.store {
            buf[..len].copy_from_slice(&self.thread.grf[data..data + len]);
            self.mem_write(space, addr, &buf[..len])?;
        } else {
            self.mem_read(space, addr, &mut buf[..len])?;
            self.write_grf(b.data, &buf[..len])?;
        }
        Ok(true)
    }

    /// Piece `j` of lane `lane`'s access (at `addr` plus the piece's offset) into `batch`,
    /// with its store data or atomic sources.
    #[inline(always)]
    fn push_access(
        &mut self,
        m: &MessageOp,
        batch: &mut Batch,
        addr: u64,
        lane: u32,
        j: u32,
    ) -> Result<(), FaultKind> {
        let reg = m.data + lane * m.lane_stride + j * m.piece_stride;
        let grf = &self.thread.grf;
        let sources = match m.store {
            Some((len, shift)) => (elem(grf, reg, len) >> shift, 0),
            None => {
                let source =
                    |s: Option<u32>| s.map_or(0, |s| elem(grf, s + lane * m.source_slot, m.source_slot));
                (source(m.sources[0]), source(m.sources[1]))
            }
        };
        batch.push(self, lane, addr.wrapping_add(m.pieces[j as usize] as u64), sources, reg)
    }
}

/// Whether a `size`-byte access at SLM offset `at` is plain: aligned to `align`, inside the
/// group's `len` bytes.
#[inline(always)]
fn plain_in_slm(at: u64, size: u64, align: u64, len: u64) -> bool {
    at & (align - 1) == 0 && at + size <= len
}

/// Whether a `size`-byte access at `addr` is plain: aligned to `align`, in one page, inside
/// a buffer (`bounds`, the last buffer found, is checked first and updated).
#[inline(always)]
fn plain_in_buffer(svm: &Svm, addr: u64, size: u64, align: u64, bounds: &mut (u64, u64)) -> bool {
    let Some(last) = addr.checked_add(size - 1) else { return false };
    if addr & (align - 1) != 0 || last / PAGE_SIZE != addr / PAGE_SIZE {
        return false;
    }
    if !(bounds.0 <= addr && last < bounds.1) {
        match svm.owned_bounds(addr, size) {
            Some(b) => *bounds = b,
            None => return false,
        }
    }
    true
}

/// Calls `f(lane, piece)` for each access of message `m` on `lanes`, in the order the
/// message makes them.
#[inline(always)]
fn each_access(m: &MessageOp, lanes: u32, mut f: impl FnMut(u32, usize)) {
    if m.piece_major {
        for j in 0..m.pieces.len() {
            for lane in lanes_of(lanes) {
                f(lane, j);
            }
        }
    } else {
        for lane in lanes_of(lanes) {
            for j in 0..m.pieces.len() {
                f(lane, j);
            }
        }
    }
}

/// The set bits of `mask`, lowest first.
fn lanes_of(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let lane = mask.trailing_zeros();
            mask &= mask - 1;
            lane
        })
    })
}
