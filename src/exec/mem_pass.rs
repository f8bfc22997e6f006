//! The memory side of a message in one pass: every access of its lanes, in order, against a
//! page (or the SLM) looked up once per run of accesses that fall in it, each access checked
//! and reported to the observer as [`Ctx::mem_read`] and [`Ctx::mem_write`] would. An access
//! that is not plain (misaligned, crossing a page, outside a buffer's own bytes or the SLM)
//! goes through those general methods instead, which fault or
//! note it exactly; the pass stops at the first fault, the accesses before it done.

use super::ctx::{Ctx, SLM_ADDRESS_MASK};
use super::fault::FaultKind;
use super::message::{apply_atomic, atomic_stores, check_align};
use super::observer::Observer;
use super::operand::{load_le, store_le};
use crate::isa::{AtomicOp, Region};
use crate::machine::{Fold, FoldOp, MemSpace, ThreadId, PAGE_SIZE};

/// What each access of a pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemOp {
    /// Reads the element into `out`.
    Load,
    /// Writes `src0`.
    Store,
    /// Reads, computes with `src0`/`src1`, writes when the operation stores, returns the
    /// operation's result in `out` (`bits` wide).
    Atomic(AtomicOp, u32),
}

/// A pass: `size`-byte accesses at `addrs[i]` for lane `lanes[i]`, each address a multiple
/// of `align`, a power of two (SLM addresses are masked by the pass).
pub(super) struct Pass<'a> {
    pub space: MemSpace,
    pub size: u32,
    pub align: u64,
    pub op: MemOp,
    pub lanes: &'a [u32],
    pub addrs: &'a [u64],
    pub src0: &'a [u64],
    pub src1: &'a [u64],
    /// Set for atomics that [fold](Fold): noted as such where the run notes folds.
    pub fold: Option<Fold>,
}

impl Pass<'_> {
    /// What access `i` does with the `old` value it read: its result into `out[i]`, and the
    /// value it stores, if it stores (a load never does, an atomic when its operation says).
    fn apply(&self, i: usize, old: u64, out: &mut [u64]) -> Option<u64> {
        match self.op {
            MemOp::Load => {
                out[i] = old;
                None
            }
            MemOp::Store => Some(self.src0[i]),
            MemOp::Atomic(op, bits) => {
                let (new, ret) = apply_atomic(op, bits, old, self.src0[i], self.src1[i]);
                out[i] = ret;
                atomic_stores(op, old, new).then_some(new)
            }
        }
    }
}

impl<O: Observer> Ctx<'_, O> {
    /// Runs `pass`, results into `out`; returns how many accesses were done and the fault
    /// that stopped the pass, if any.
    pub(super) fn mem_pass(&mut self, pass: &Pass<'_>, out: &mut [u64]) -> (usize, Result<(), FaultKind>) {
        let n = pass.addrs.len();
        let mut i = 0;
        while i < n {
            i += match pass.space {
                MemSpace::Svm => self.svm_run(pass, i, out),
                MemSpace::Slm(_) => self.slm_run(pass, i, out),
            };
            if i < n {
                if let Err(e) = self.access_one(pass, i, out) {
                    return (i, Err(e));
                }
                i += 1;
            }
        }
        (n, Ok(()))
    }

    /// Access `i` through the general methods.
    fn access_one(&mut self, pass: &Pass<'_>, i: usize, out: &mut [u64]) -> Result<(), FaultKind> {
        let (lane, addr, size) = (pass.lanes[i], pass.addrs[i], pass.size);
        check_align(addr, pass.align, lane)?;
        let mut bytes = [0u8; 8];
        let len = size as usize;
        if pass.op != MemOp::Store {
            if O::ACTIVE {
                self.obs.access_lane(Some(lane));
            }
            self.mem_read(pass.space, addr, &mut bytes[..len]).map_err(|e| in_lane(e, lane))?;
        }
        let Some(new) = pass.apply(i, load_le(&bytes, size), out) else { return Ok(()) };
        store_le(&mut bytes, size, new);
        if O::ACTIVE {
            self.obs.access_lane(Some(lane));
        }
        self.mem_write(pass.space, addr, &bytes[..len]).map_err(|e| in_lane(e, lane))
    }

    /// Plain SVM accesses from `start` on, one page lookup per run of them in one page: how
    /// many were done.
    fn svm_run(&mut self, pass: &Pass<'_>, start: usize, out: &mut [u64]) -> usize {
        let (size, n) = (pass.size as u64, pass.addrs.len());
        let mut bounds = (0u64, 0u64);
        let mut i = start;
        while i < n {
            // The run of plain accesses in the page of access `i`.
            let page_no = pass.addrs[i] / PAGE_SIZE;
            let mut end = i;
            while end < n {
                let addr = pass.addrs[end];
                // `last` is the access's last byte (an access that wraps around is not plain).
                let last = addr.checked_add(size - 1);
                let plain = last.map(|l| l / PAGE_SIZE) == Some(page_no)
                    && addr / PAGE_SIZE == page_no
                    && addr & (pass.align - 1) == 0;
                if !plain {
                    break;
                }
                if !(bounds.0 <= addr && last.is_some_and(|l| l < bounds.1)) {
                    match self.svm.owned_bounds(addr, size) {
                        Some(b) => bounds = b,
                        None => break,
                    }
                }
                end += 1;
            }
            if end == i {
                break;
            }
            let base = page_no * PAGE_SIZE;
            let (tid, obs) = (self.tid, &mut *self.obs);
            match pass.op {
                MemOp::Load => {
                    let page = self.svm.page(page_no);
                    for ((value, &addr), &lane) in
                        out[i..end].iter_mut().zip(&pass.addrs[i..end]).zip(&pass.lanes[i..])
                    {
                        *value = load_le(&page[(addr - base) as usize..], pass.size);
                        if O::ACTIVE {
                            obs.access_lane(Some(lane));
                            obs.mem_read(tid, MemSpace::Svm, addr, size);
                        }
                    }
                }
                _ => {
                    let page = self.svm.page_mut(page_no);
                    if O::ACTIVE && !O::LANE_ACCESSES && pass.op == MemOp::Store {
                        store_runs(page, base, MemSpace::Svm, pass, i..end, |a| a, tid, obs);
                    } else {
                        for j in i..end {
                            let at = (pass.addrs[j] - base) as usize;
                            let cell = &mut page[at..at + pass.size as usize];
                            write_access(cell, MemSpace::Svm, pass.addrs[j], pass, j, out, tid, obs);
                        }
                    }
                }
            }
            if let Some(acc) = self.svm.accesses.as_deref_mut() {
                for &addr in &pass.addrs[i..end] {
                    match pass.fold {
                        Some(fold) if acc.folding => acc.add_fold(fold, addr, size),
                        _ => {
                            if pass.op != MemOp::Store && !acc.writes_only {
                                acc.reads.add(addr, size);
                            }
                            if pass.op != MemOp::Load {
                                acc.writes.add(addr, size);
                            }
                        }
                    }
                }
            }
            i = end;
        }
        i - start
    }

    /// Plain SLM accesses from `start` on (aligned, inside the SLM): how many were done.
    fn slm_run(&mut self, pass: &Pass<'_>, start: usize, out: &mut [u64]) -> usize {
        let size = pass.size as u64;
        let (tid, group, n) = (self.tid, self.group, pass.addrs.len());
        let space = MemSpace::Slm(group as u32);
        let plain_until = |len: u64| {
            let plain = |&i: &usize| {
                let a = pass.addrs[i] & SLM_ADDRESS_MASK;
                a & (pass.align - 1) == 0 && a + size <= len
            };
            (start..n).find(|i| !plain(i)).unwrap_or(n)
        };
        let obs = &mut *self.obs;
        if pass.op == MemOp::Load {
            let Some(slm) = self.slms.get(group) else { return 0 };
            let end = plain_until(slm.bytes.len() as u64);
            for ((value, &addr), &lane) in
                out[start..end].iter_mut().zip(&pass.addrs[start..end]).zip(&pass.lanes[start..])
            {
                let at = addr & SLM_ADDRESS_MASK;
                *value = load_le(&slm.bytes[at as usize..], pass.size);
                if O::ACTIVE {
                    obs.access_lane(Some(lane));
                    obs.mem_read(tid, space, at, size);
                }
            }
            return end - start;
        }
        let Some(slm) = self.slms.get_mut(group) else { return 0 };
        let end = plain_until(slm.bytes.len() as u64);
        if O::ACTIVE && !O::LANE_ACCESSES && pass.op == MemOp::Store {
            store_runs(&mut slm.bytes, 0, space, pass, start..end, |a| a & SLM_ADDRESS_MASK, tid, obs);
            return end - start;
        }
        for i in start..end {
            let at = pass.addrs[i] & SLM_ADDRESS_MASK;
            let cell = &mut slm.bytes[at as usize..(at + size) as usize];
            write_access(cell, space, at, pass, i, out, tid, obs);
        }
        end - start
    }
}

fn in_lane(e: FaultKind, lane: u32) -> FaultKind {
    match e {
        FaultKind::Memory { message, .. } => FaultKind::Memory { lane: Some(lane), message },
        other => other,
    }
}

/// Plain stores `range` of `pass` into `mem` (the bytes from address `mem_base` of `space`;
/// `at` maps a pass address to its address there), each run of them to consecutive bytes
/// reported as one write (for observers that do not hear lanes).
#[allow(clippy::too_many_arguments)]
fn store_runs<O: Observer>(
    mem: &mut [u8],
    mem_base: u64,
    space: MemSpace,
    pass: &Pass<'_>,
    range: std::ops::Range<usize>,
    at: impl Fn(u64) -> u64,
    tid: ThreadId,
    obs: &mut O,
) {
    let size = pass.size as u64;
    let mut old = [0u8; 32 * 8];
    let mut j = range.start;
    while j < range.end {
        // The run from access j: each next one starts where the one before ends.
        let first = at(pass.addrs[j]);
        let mut len = 0u64;
        while j < range.end && at(pass.addrs[j]) == first + len && len + size <= old.len() as u64 {
            let o = (first + len - mem_base) as usize;
            let cell = &mut mem[o..o + size as usize];
            old[len as usize..(len + size) as usize].copy_from_slice(cell);
            store_le(cell, pass.size, pass.src0[j]);
            len += size;
            j += 1;
        }
        let o = (first - mem_base) as usize;
        obs.mem(tid, space, first, &old[..len as usize], &mem[o..o + len as usize]);
    }
}

/// Store or atomic `i` on `cell` (its bytes, at `addr` in `space`), reported as the general
/// path reports it (an atomic's read, then its write).
#[allow(clippy::too_many_arguments)]
#[inline]
fn write_access<O: Observer>(
    cell: &mut [u8],
    space: MemSpace,
    addr: u64,
    pass: &Pass<'_>,
    i: usize,
    out: &mut [u64],
    tid: ThreadId,
    obs: &mut O,
) {
    let size = pass.size;
    let old = load_le(cell, size);
    if O::ACTIVE && pass.op != MemOp::Store {
        obs.access_lane(Some(pass.lanes[i]));
        obs.mem_read(tid, space, addr, size as u64);
    }
    let Some(new) = pass.apply(i, old, out) else { return };
    store_le(cell, size, new);
    if O::ACTIVE {
        let mut before = [0u8; 8];
        store_le(&mut before, size, old);
        obs.access_lane(Some(pass.lanes[i]));
        obs.mem(tid, space, addr, &before[..size as usize], cell);
    }
}

/// Where a pass's results go: `slot` bytes at each access's register offset, after a left
/// shift by `shift` bits (LSC `d16u32h` loads).
#[derive(Clone, Copy, Debug)]
pub(super) struct Results {
    pub slot: u32,
    pub shift: u32,
}

/// A message's accesses gathered in order, run as passes of up to 32: the message pushes
/// each access, and on a fault of its own (a register out of range) flushes what it pushed
/// first, so that the accesses before the fault are done as they would be one by one.
pub(super) struct Batch {
    space: MemSpace,
    size: u32,
    align: u64,
    op: MemOp,
    results: Option<Results>,
    n: usize,
    lanes: [u32; 32],
    addrs: [u64; 32],
    src0: [u64; 32],
    src1: [u64; 32],
    regs: [u32; 32],
}

impl Batch {
    /// A batch of `size`-byte accesses aligned to `align` (a power of two).
    pub(super) fn new(space: MemSpace, size: u32, align: u64, op: MemOp, results: Option<Results>) -> Batch {
        debug_assert!(align.is_power_of_two());
        Batch {
            space,
            size,
            align,
            op,
            results,
            n: 0,
            lanes: [0; 32],
            addrs: [0; 32],
            src0: [0; 32],
            src1: [0; 32],
            regs: [0; 32],
        }
    }

    /// Adds an access of lane `lane` at `addr`, with sources `src0`/`src1`, its result to
    /// GRF byte `reg`.
    #[inline(always)]
    pub(super) fn push<O: Observer>(
        &mut self,
        ctx: &mut Ctx<'_, O>,
        lane: u32,
        addr: u64,
        (src0, src1): (u64, u64),
        reg: u32,
    ) -> Result<(), FaultKind> {
        if self.n == 32 {
            self.flush(ctx)?;
        }
        let i = self.n;
        (self.lanes[i], self.addrs[i], self.src0[i], self.src1[i], self.regs[i]) =
            (lane, addr, src0, src1, reg);
        self.n += 1;
        Ok(())
    }

    /// `value`, or, on a fault, the accesses pushed so far done and then the fault.
    pub(super) fn or_flush<O: Observer, T>(
        &mut self,
        ctx: &mut Ctx<'_, O>,
        value: Result<T, FaultKind>,
    ) -> Result<T, FaultKind> {
        match value {
            Ok(v) => Ok(v),
            Err(e) => {
                self.flush(ctx)?;
                Err(e)
            }
        }
    }

    /// Runs the accesses pushed so far and writes their results.
    pub(super) fn flush<O: Observer>(&mut self, ctx: &mut Ctx<'_, O>) -> Result<(), FaultKind> {
        let n = std::mem::take(&mut self.n);
        if n == 0 {
            return Ok(());
        }
        let pass = Pass {
            space: self.space,
            size: self.size,
            align: self.align,
            op: self.op,
            lanes: &self.lanes[..n],
            addrs: &self.addrs[..n],
            src0: &self.src0[..n],
            src1: &self.src1[..n],
            fold: match (self.op, self.results) {
                (MemOp::Atomic(op, bits), None) => fold(op, bits),
                _ => None,
            },
        };
        let mut out = [0u64; 32];
        let (done, fault) = ctx.mem_pass(&pass, &mut out[..n]);
        if let (Some(r), false) = (self.results, self.op == MemOp::Store) {
            let mut i = 0;
            while i < done {
                i = self.write_results(ctx, r, &out, i, done)?;
            }
        }
        fault
    }

    /// Writes the results of accesses `i..` that go to one packed register region (lane `l`'s
    /// at slot `l` from a common base, lanes rising: a message's usual layout) in one write,
    /// reported as that region's lanes; else access `i`'s alone. Returns the next access.
    fn write_results<O: Observer>(
        &self,
        ctx: &mut Ctx<'_, O>,
        r: Results,
        out: &[u64; 32],
        i: usize,
        done: usize,
    ) -> Result<usize, FaultKind> {
        let (slot, lane0) = (r.slot, self.lanes[i]);
        let mut j = i + 1;
        if matches!(slot, 1 | 2 | 4 | 8) && self.regs[i] >= lane0 * slot {
            let base = self.regs[i] - lane0 * slot;
            while j < done && self.lanes[j] > self.lanes[j - 1] && self.regs[j] == base + self.lanes[j] * slot
            {
                j += 1;
            }
            if j - i > 1 {
                let (mut enabled, mut values) = (0u32, [0u64; 32]);
                for (&lane, value) in self.lanes[i..j].iter().zip(&out[i..j]) {
                    enabled |= 1 << lane;
                    values[lane as usize] = value << r.shift;
                }
                let n = 32 - enabled.leading_zeros();
                // A region past the GRF: lane by lane below, which faults where it must.
                if ctx.write_region(base, Region::dst(1), slot, n, enabled, &values).is_ok() {
                    return Ok(j);
                }
            }
        }
        for (&reg, value) in self.regs[i..j].iter().zip(&out[i..j]) {
            ctx.write_grf_elem(reg, slot, value << r.shift)?;
        }
        Ok(j)
    }
}

/// The [`Fold`] an atomic of `op` on `bits`-bit integers makes when its old value goes
/// nowhere, if its updates commute.
fn fold(op: AtomicOp, bits: u32) -> Option<Fold> {
    let op = match op {
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::Inc | AtomicOp::Dec | AtomicOp::Predec => FoldOp::Add,
        AtomicOp::Min => FoldOp::UMin,
        AtomicOp::Max => FoldOp::UMax,
        AtomicOp::MinSint => FoldOp::SMin,
        AtomicOp::MaxSint => FoldOp::SMax,
        AtomicOp::And => FoldOp::And,
        AtomicOp::Or => FoldOp::Or,
        AtomicOp::Xor => FoldOp::Xor,
        _ => return None,
    };
    matches!(bits, 16 | 32 | 64).then_some(Fold { op, size: bits / 8 })
}
