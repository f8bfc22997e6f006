//! Reading and writing vector operands: direct and indirect regions, immediates, address
//! operands. Lane values travel as raw bits zero-extended into u64.

use super::alu::{expand_vector_imm, SrcLanes};
use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{DataType, DirectOperand, IndirectOperand, Operand, Region, SrcMod};

/// Little-endian load of a `size`-byte element.
#[inline(always)]
pub fn load_le(bytes: &[u8], size: u32) -> u64 {
    match size {
        1 => bytes[0] as u64,
        2 => {
            let mut b = [0u8; 2];
            b.copy_from_slice(&bytes[..2]);
            u16::from_le_bytes(b) as u64
        }
        4 => {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[..4]);
            u32::from_le_bytes(b) as u64
        }
        _ => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[..8]);
            u64::from_le_bytes(b)
        }
    }
}

/// Little-endian store of the low `size` bytes of `value` (one store per size: a copy of a
/// variable length would be a call to `memcpy` per lane).
#[inline(always)]
pub fn store_le(bytes: &mut [u8], size: u32, value: u64) {
    match size {
        1 => bytes[0] = value as u8,
        2 => bytes[..2].copy_from_slice(&(value as u16).to_le_bytes()),
        4 => bytes[..4].copy_from_slice(&(value as u32).to_le_bytes()),
        8 => bytes[..8].copy_from_slice(&value.to_le_bytes()),
        n => bytes[..n as usize].copy_from_slice(&value.to_le_bytes()[..n as usize]),
    }
}

/// The operand's element type, if it is a vector operand.
pub fn operand_type(op: &Operand) -> Option<DataType> {
    match op {
        Operand::Direct(d) => Some(d.ty),
        Operand::Indirect(i) => Some(i.ty),
        Operand::Imm(i) => Some(i.ty),
        Operand::Pred(_) => Some(DataType::Bool),
        Operand::Addr(_) | Operand::AddrOf(_) => Some(DataType::Uw),
        _ => None,
    }
}

/// Byte span `[first, end)` that a region touches for `n` lanes.
#[inline]
fn region_span(base: u32, region: Region, n: u32, size: u32) -> (u32, u32) {
    let last = region.element(n.saturating_sub(1)) * size;
    (base, base + last + size)
}

/// Lane `lane` of an indirect operand: which element of its address variable (past
/// `addr_elem`) holds the address (one per row in the multi-address form), and the index of
/// the element the region adds to it (in elements of the operand's type).
pub fn indirect_lane(ind: &IndirectOperand, lane: u32) -> (u32, u32) {
    if ind.multi {
        let (row, column) = crate::isa::row_column(lane, ind.region.width);
        (row, column * ind.region.hstride as u32)
    } else {
        (0, ind.region.element(lane))
    }
}

/// What the lanes of an indirect operand share: the address element the last lane read
/// (none before the first) and its base address, and the variable (root) that base falls
/// in, `[start, end)` of the register file.
struct Root {
    /// -1 before the first lane.
    elem: i64,
    base: i64,
    start: i64,
    end: i64,
}

impl Default for Root {
    fn default() -> Root {
        Root { elem: -1, base: 0, start: 0, end: 0 }
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// GRF byte address of lane `lane` of an indirect operand, checked against the variable
    /// the address points into and the type alignment.
    pub(super) fn indirect_address(
        &self,
        ind: &IndirectOperand,
        index: usize,
        lane: u32,
    ) -> Result<u32, FaultKind> {
        let (row_elem, element) = indirect_lane(ind, lane);
        let var = self.program.addr(ind.addr);
        let elem = ind.addr_elem + row_elem;
        if elem >= var.num_elts {
            return Err(FaultKind::AddressOutOfBounds { operand: index, element: elem });
        }
        let base = self.addr_slot(var.slot + elem).unwrap_or(0) as i64 + ind.imm_offset as i64;
        let size = ind.ty.size();
        // Type sizes are powers of two: a mask, not a division.
        if base & (size as i64 - 1) != 0 {
            return Err(FaultKind::IndirectMisaligned { operand: index, lane, address: base, align: size });
        }
        let out_of_bounds = || FaultKind::IndirectOutOfBounds { operand: index, lane, address: base };
        let (start, end) = self.tables.root_at(base).ok_or_else(out_of_bounds)?;
        let address = base + (element * size) as i64;
        if address < start as i64 || address + size as i64 > end as i64 {
            return Err(FaultKind::IndirectOutOfBounds { operand: index, lane, address });
        }
        Ok(address as u32)
    }

    /// [`Ctx::indirect_address`] of lanes `0..n` into `out`, then each lane's element
    /// checked to lie in the register file, as the general path reads them: the first
    /// failing lane's fault otherwise. Lanes whose addresses fall in one variable share
    /// its lookup. The in-place tiers use it; the general path, their oracle, keeps the
    /// lane-by-lane form.
    pub(super) fn indirect_offsets(
        &self,
        ind: &IndirectOperand,
        index: usize,
        n: u32,
        out: &mut [u32; 32],
    ) -> Result<(), FaultKind> {
        let (n, size) = (n.min(32) as usize, ind.ty.size());
        if self.offsets_in_one_root(ind, n, out) {
            return Ok(());
        }
        let mut root = Root::default();
        let mut furthest = 0;
        for (lane, at) in out[..n].iter_mut().enumerate() {
            *at = self.lane_address(ind, index, lane as u32, &mut root, None)?;
            furthest = furthest.max(u64::from(*at) + u64::from(size));
        }
        // Every variable lies in the file; a file shorter than its variables fails here,
        // at the first lane that reaches past its end.
        if furthest > self.thread.grf.len() as u64 {
            for &at in &out[..n] {
                self.grf(at, size)?;
            }
        }
        Ok(())
    }

    /// [`Ctx::indirect_offsets`] without a fault and without a lookup per lane, when it can
    /// be had so: every lane's address element exists, every base (address element plus
    /// immediate offset) is aligned to the type, and every base and element lies in the
    /// variable the lowest base falls in (variables never share a register, so that is each
    /// base's variable), inside the file. False, with `out` to be overwritten, otherwise:
    /// the lane-by-lane form then finds the variables, or the first lane's fault.
    #[inline(always)]
    fn offsets_in_one_root(&self, ind: &IndirectOperand, n: usize, out: &mut [u32; 32]) -> bool {
        let size = i64::from(ind.ty.size());
        let var = self.program.addr(ind.addr);
        let rows = if ind.multi { (n as u32).div_ceil(u32::from(ind.region.width.max(1))) } else { 1 };
        if ind.addr_elem.saturating_add(rows) > var.num_elts {
            return false;
        }
        let first = (var.slot + ind.addr_elem) as usize;
        let Some(addrs) = self.thread.addrs.get(first..first + rows as usize) else { return false };
        let (mut lo, mut hi, mut bits) = (i64::MAX, i64::MIN, 0i64);
        for (lane, at) in out[..n].iter_mut().enumerate() {
            let (row, element) = indirect_lane(ind, lane as u32);
            let Some(&value) = addrs.get(row as usize) else { return false };
            let base = i64::from(value) + i64::from(ind.imm_offset);
            let address = base + i64::from(element) * size;
            bits |= base;
            lo = lo.min(base);
            hi = hi.max(address);
            *at = address as u32;
        }
        if n == 0 || bits & (size - 1) != 0 {
            return false;
        }
        let Some((start, end)) = self.root_at(lo) else { return false };
        i64::from(start) <= lo && hi + size <= i64::from(end) && hi + size <= self.thread.grf.len() as i64
    }

    /// The variable GRF byte `address` falls in, `[start, end)` (none for a byte of no
    /// variable): the last one found when it holds the address, else looked up.
    #[inline(always)]
    fn root_at(&self, address: i64) -> Option<(u32, u32)> {
        let (start, end) = self.last_root.get();
        if (i64::from(start)..i64::from(end)).contains(&address) {
            return Some((start, end));
        }
        let found = self.tables.root_at(address)?;
        self.last_root.set(found);
        Some(found)
    }

    /// [`Ctx::indirect_address`] of one lane, with no lookup of the variable its address
    /// falls in when that is `root`'s (which it updates). `slot` is a single-address
    /// operand's address register slot where it was found when its op was made.
    #[inline(always)]
    fn lane_address(
        &self,
        ind: &IndirectOperand,
        index: usize,
        lane: u32,
        root: &mut Root,
        slot: Option<u32>,
    ) -> Result<u32, FaultKind> {
        let size = ind.ty.size();
        let (row_elem, element) = indirect_lane(ind, lane);
        let elem = ind.addr_elem + row_elem;
        if root.elem != i64::from(elem) {
            let value = match slot {
                Some(slot) => self.addr_slot(slot),
                None => {
                    let var = self.program.addr(ind.addr);
                    if elem < var.num_elts {
                        self.addr_slot(var.slot + elem)
                    } else {
                        None
                    }
                }
            };
            // Whatever is wrong, as the one-lane check reports it.
            let Some(value) = value else { return self.indirect_address(ind, index, lane) };
            let base = value as i64 + ind.imm_offset as i64;
            if base & (size as i64 - 1) != 0 {
                return self.indirect_address(ind, index, lane);
            }
            // Variables never share a register: a base inside the last root's range has
            // that root.
            if !(root.start..root.end).contains(&base) {
                let Some((start, end)) = self.root_at(base) else {
                    return self.indirect_address(ind, index, lane);
                };
                (root.start, root.end) = (start as i64, end as i64);
            }
            (root.elem, root.base) = (i64::from(elem), base);
        }
        let address = root.base + (element * size) as i64;
        if address < root.start || address + size as i64 > root.end {
            return Err(FaultKind::IndirectOutOfBounds { operand: index, lane, address });
        }
        Ok(address as u32)
    }

    /// [`Ctx::write_indirect`] of one lane's `value` (`slot`: as [`Ctx::lane_address`]
    /// takes it).
    #[inline(always)]
    pub(super) fn write_indirect_lane(
        &mut self,
        ind: &IndirectOperand,
        lane: u32,
        value: u64,
        slot: Option<u32>,
    ) -> Result<(), FaultKind> {
        let at = self.lane_address(ind, 0, lane, &mut Root::default(), slot)?;
        self.write_grf_elem(at, ind.ty.size(), value)
    }

    /// The in-place tiers' write of `values` through indirect destination `ind`: lanes
    /// `enabled` of `0..n` in order, as [`Ctx::write_dst`] writes them (a lane whose address
    /// faults stops the write there), visiting only the enabled lanes and sharing an address
    /// element's checks among the lanes that use it.
    pub(super) fn write_indirect(
        &mut self,
        ind: &IndirectOperand,
        n: u32,
        enabled: u32,
        values: &[u64; 32],
    ) -> Result<(), FaultKind> {
        let size = ind.ty.size();
        let mut rest = enabled & super::control::size_mask(n);
        let mut at = [0u32; 32];
        if rest.count_ones() > 1 && self.offsets_in_one_root(ind, n.min(32) as usize, &mut at) {
            // The store's width chosen once, not per lane.
            return match size {
                1 => self.store_lanes::<1>(&at, rest, values),
                2 => self.store_lanes::<2>(&at, rest, values),
                4 => self.store_lanes::<4>(&at, rest, values),
                _ => self.store_lanes::<8>(&at, rest, values),
            };
        }
        let mut root = Root::default();
        while rest != 0 {
            let lane = rest.trailing_zeros();
            rest &= rest - 1;
            let at = self.lane_address(ind, 0, lane, &mut root, None)?;
            self.write_grf_elem(at, size, values[lane as usize])?;
        }
        Ok(())
    }

    /// The low `S` bytes of `values[lane]` written at `at[lane]`, for each lane of `rest` in
    /// order.
    #[inline(always)]
    fn store_lanes<const S: u32>(
        &mut self,
        at: &[u32; 32],
        mut rest: u32,
        values: &[u64; 32],
    ) -> Result<(), FaultKind> {
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            self.write_grf_elem(at[lane], S, values[lane])?;
        }
        Ok(())
    }

    /// Reads lanes `0..n` of a source operand.
    pub fn read_src(&self, op: &Operand, index: usize, n: u32) -> Result<SrcLanes, FaultKind> {
        let mut lanes = SrcLanes { ty: DataType::Ud, modifier: SrcMod::None, bits: [0; 32] };
        match op {
            Operand::Direct(d) => self.read_direct(d, index, n, &mut lanes)?,
            Operand::Indirect(ind) => {
                lanes.ty = ind.ty;
                lanes.modifier = ind.modifier;
                let size = ind.ty.size();
                for lane in 0..n {
                    let at = self.indirect_address(ind, index, lane)?;
                    lanes.bits[lane as usize] = load_le(self.grf(at, size)?, size);
                }
            }
            Operand::Imm(imm) if imm.ty.is_packed_vector() => {
                let (ty, bits) = expand_vector_imm(imm.ty, imm.bits);
                lanes.ty = ty;
                lanes.bits = bits;
            }
            Operand::Imm(imm) => {
                lanes.ty = imm.ty;
                lanes.bits = [imm.bits; 32];
            }
            Operand::Addr(a) => {
                lanes.ty = DataType::Uw;
                let var = self.program.addr(a.addr);
                let width = a.width.max(1);
                for lane in 0..n {
                    let elem = a.elem + lane % width;
                    let v = if elem < var.num_elts { self.addr_slot(var.slot + elem) } else { None };
                    let v = v.ok_or(FaultKind::AddressOutOfBounds { operand: index, element: elem })?;
                    lanes.bits[lane as usize] = v as u64;
                }
            }
            Operand::AddrOf(a) => {
                lanes.ty = DataType::Ud;
                lanes.bits = [a.address as u64; 32];
            }
            other => {
                return Err(FaultKind::NotImplemented(format!("operand {index} form {other:?} as a source")))
            }
        }
        Ok(lanes)
    }

    fn read_direct(
        &self,
        d: &DirectOperand,
        index: usize,
        n: u32,
        lanes: &mut SrcLanes,
    ) -> Result<(), FaultKind> {
        lanes.ty = d.ty;
        lanes.modifier = d.modifier;
        if d.is_null {
            return Ok(());
        }
        let size = d.ty.size();
        let (first, end) = region_span(d.base, d.region, n, size);
        let bytes = self.grf(first, end - first).map_err(|_| FaultKind::RegionOutOfBounds {
            operand: index,
            offset: first,
            len: end - first,
        })?;
        for lane in 0..n {
            let at = (d.region.element(lane) * size) as usize;
            lanes.bits[lane as usize] = load_le(&bytes[at..], size);
        }
        Ok(())
    }

    /// Writes `values` (raw bits of `size` bytes) to the lanes of `enabled` of the register
    /// region at GRF offset `base`, reported as runs of enabled lanes; on a region that
    /// reaches past the GRF, writes nothing and returns its span.
    #[inline(always)]
    pub(super) fn write_region(
        &mut self,
        base: u32,
        region: Region,
        size: u32,
        n: u32,
        enabled: u32,
        values: &[u64; 32],
    ) -> Result<(), (u32, u32)> {
        let (first, end) = region_span(base, region, n, size);
        if self.thread.grf.len() < end as usize {
            return Err((first, end));
        }
        self.keep_old(first, end);
        let grf = &mut self.thread.grf[first as usize..end as usize];
        if region == Region::dst(1) && size == 4 {
            // The common packed dword destination: no per-lane region arithmetic.
            for (lane, slot) in grf.chunks_exact_mut(4).enumerate().take(n as usize) {
                if enabled >> lane & 1 != 0 {
                    slot.copy_from_slice(&(values[lane] as u32).to_le_bytes());
                }
            }
        } else if region == Region::dst(1) && size == 8 {
            // Packed qwords and doubles likewise.
            let (words, _) = grf.as_chunks_mut::<8>();
            for (lane, word) in words.iter_mut().enumerate().take(n as usize) {
                if enabled >> lane & 1 != 0 {
                    *word = values[lane].to_le_bytes();
                }
            }
        } else {
            for lane in 0..n {
                if enabled >> lane & 1 != 0 {
                    let at = (region.element(lane) * size) as usize;
                    store_le(&mut grf[at..], size, values[lane as usize]);
                }
            }
        }
        self.report_written(first, end, region, size, n, enabled);
        Ok(())
    }

    /// Writes `values` (raw bits of the operand's type) to the lanes of `enabled`.
    pub fn write_dst(
        &mut self,
        op: &Operand,
        index: usize,
        n: u32,
        enabled: u32,
        values: &[u64; 32],
    ) -> Result<(), FaultKind> {
        match op {
            Operand::Direct(d) => {
                if d.is_null || enabled == 0 {
                    return Ok(());
                }
                self.write_region(d.base, d.region, d.ty.size(), n, enabled, values).map_err(
                    |(first, end)| FaultKind::RegionOutOfBounds {
                        operand: index,
                        offset: first,
                        len: end - first,
                    },
                )
            }
            Operand::Indirect(ind) => {
                let size = ind.ty.size();
                for lane in 0..n {
                    if enabled >> lane & 1 != 0 {
                        let at = self.indirect_address(ind, index, lane)?;
                        self.write_grf_elem(at, size, values[lane as usize])?;
                    }
                }
                Ok(())
            }
            Operand::Addr(a) => {
                let var = self.program.addr(a.addr);
                for lane in 0..n {
                    if enabled >> lane & 1 != 0 {
                        let elem = a.elem + lane;
                        if elem >= var.num_elts {
                            return Err(FaultKind::AddressOutOfBounds { operand: index, element: elem });
                        }
                        self.write_addr(var.slot + elem, values[lane as usize] as u32)?;
                    }
                }
                Ok(())
            }
            other => {
                Err(FaultKind::NotImplemented(format!("operand {index} form {other:?} as a destination")))
            }
        }
    }

    /// Before an in-place destination write to GRF bytes `[at, end)`: their old bytes kept
    /// for the observer, when it wants values.
    #[inline(always)]
    pub(super) fn keep_old(&mut self, at: u32, end: u32) {
        if O::ACTIVE && self.obs.values() {
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.thread.grf[at as usize..end as usize]);
        }
    }

    /// Blends `values` into the packed dwords at GRF `base` under `enabled`, the write
    /// reported as the general path reports it.
    #[inline(always)]
    pub(super) fn put_dwords<const L: usize>(&mut self, base: u32, values: &[u32; L], enabled: u32) {
        let end = base + 4 * L as u32;
        self.keep_old(base, end);
        super::fast::store_lanes(&mut self.thread.grf[base as usize..end as usize], values, enabled);
        self.report_written(base, end, Region::dst(1), 4, L as u32, enabled);
    }

    /// After it: the write reported, as runs of enabled lanes ([`Ctx::report_lane_runs`],
    /// from the bytes [`Ctx::keep_old`] kept) or as the span `[first, end)`.
    #[inline(always)]
    pub(super) fn report_written(
        &mut self,
        first: u32,
        end: u32,
        region: Region,
        size: u32,
        n: u32,
        enabled: u32,
    ) {
        if !O::ACTIVE || enabled == 0 {
            return;
        }
        if self.obs.values() {
            self.report_lane_runs(first, region, size, n, enabled);
        } else if region == Region::dst(1) {
            self.obs.grf_span_lanes(self.tid, first, size, enabled & super::control::size_mask(n));
        } else {
            self.obs.grf_span(self.tid, first, end - first);
        }
    }

    /// Reports a region write as runs of enabled lanes whose bytes are contiguous, so the
    /// recorder knows exactly which bytes were written (not the disabled lanes between); a
    /// packed destination with more than one run goes out as one [`Observer::grf_lanes`].
    pub(super) fn report_lane_runs(&mut self, first: u32, region: Region, size: u32, n: u32, enabled: u32) {
        if region == Region::dst(1) {
            // Packed lanes: the runs are the runs of set bits; two or more go to the observer
            // as one write with its lanes (the recorder logs them as one entry).
            let bits = (enabled as u64 & ((1u64 << n.min(32)) - 1)) as u32;
            if bits == 0 {
                return;
            }
            let (lo, hi) = (bits.trailing_zeros(), 32 - bits.leading_zeros());
            let lanes = bits >> lo;
            if lanes & lanes.wrapping_add(1) == 0 {
                self.flush_run(first, (lo * size, hi * size));
            } else {
                let (a, b) = ((lo * size) as usize, (hi * size) as usize);
                let at = first as usize;
                let new = &self.thread.grf[at + a..at + b];
                self.obs.grf_lanes(self.tid, first + a as u32, size, lanes, &self.scratch[a..b], new);
            }
            return;
        }
        let mut run: Option<(u32, u32)> = None;
        for lane in 0..n {
            if enabled >> lane & 1 == 0 {
                continue;
            }
            let start = region.element(lane) * size;
            run = match run {
                Some((a, b)) if b == start => Some((a, start + size)),
                Some(r) => {
                    self.flush_run(first, r);
                    Some((start, start + size))
                }
                None => Some((start, start + size)),
            };
        }
        if let Some(r) = run {
            self.flush_run(first, r);
        }
    }

    fn flush_run(&mut self, first: u32, (a, b): (u32, u32)) {
        let at = first as usize;
        let new = &self.thread.grf[at + a as usize..at + b as usize];
        self.obs.grf(self.tid, first + a, &self.scratch[a as usize..b as usize], new);
    }
}
