//! Indexes from a location to the steps that wrote it, so "who wrote this" needs no replay.
//! Step lists are appended in increasing order; a lookup is a binary search.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::machine::MemSpace;

/// A multiply-rotate hasher for the small integer keys of the memory index: SipHash showed
/// up at 7% of recording time.
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Granularity of the memory index: one key per 64-byte line.
pub const MEM_LINE: u64 = 64;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteIndex {
    /// thread → GRF register number → steps (dense: no hashing on the hot path).
    grf: Vec<Vec<Vec<Step32>>>,
    /// (thread, predicate) → steps.
    pred: FastMap<(u32, u32), Vec<Step32>>,
    /// (space, line number) → steps.
    mem: FastMap<(MemSpace, u64), Vec<Step32>>,
    /// Entries stored (for the memory estimate).
    pub entries: u64,
}

/// A step number in an index list: 4 bytes, half of a u64 (the index is a fifth of the
/// recording). Recordings stop before [`MAX_STEPS`] steps, so every step fits.
type Step32 = u32;

/// Most steps one recording holds (the index stores steps as u32).
pub const MAX_STEPS: u64 = u32::MAX as u64;

fn push(list: &mut Vec<Step32>, step: u64) -> bool {
    let step = step.min(MAX_STEPS) as Step32;
    if list.last() == Some(&step) {
        return false;
    }
    list.push(step);
    true
}

/// Steps in `list` that are `< before`, newest first.
fn newest_first(list: Option<&Vec<Step32>>, before: u64) -> impl Iterator<Item = u64> + '_ {
    let list = list.map(Vec::as_slice).unwrap_or(&[]);
    let end = list.partition_point(|&s| (s as u64) < before);
    list[..end].iter().rev().map(|&s| s as u64)
}

impl WriteIndex {
    pub fn add_grf(&mut self, step: u64, thread: u32, offset: u32, len: u32, grf_size: u32) {
        // GRF sizes are powers of two: a shift, not two divisions per write.
        let reg = |byte: u32| match grf_size.is_power_of_two() {
            true => byte >> grf_size.trailing_zeros(),
            false => byte / grf_size,
        };
        let (first, last) = (reg(offset), reg(offset + len.max(1) - 1));
        if self.grf.len() <= thread as usize {
            self.grf.resize_with(thread as usize + 1, Vec::new);
        }
        let regs = &mut self.grf[thread as usize];
        if regs.len() <= last as usize {
            regs.resize_with(last as usize + 1, Vec::new);
        }
        for reg in first..=last {
            self.entries += push(&mut regs[reg as usize], step) as u64;
        }
    }

    pub fn add_pred(&mut self, step: u64, thread: u32, pred: u32) {
        self.entries += push(self.pred.entry((thread, pred)).or_default(), step) as u64;
    }

    pub fn add_mem(&mut self, step: u64, space: MemSpace, addr: u64, len: u64) {
        let first = addr / MEM_LINE;
        let last = (addr + len.max(1) - 1) / MEM_LINE;
        for line in first..=last {
            self.entries += push(self.mem.entry((space, line)).or_default(), step) as u64;
        }
    }

    /// Steps before `before` that wrote any GRF register overlapping the range, newest first.
    pub fn grf_steps(&self, thread: u32, offset: u32, len: u32, grf_size: u32, before: u64) -> Vec<u64> {
        let first = offset / grf_size;
        let last = (offset + len.max(1) - 1) / grf_size;
        let regs = self.grf.get(thread as usize);
        let mut steps: Vec<u64> = (first..=last)
            .flat_map(|reg| newest_first(regs.and_then(|r| r.get(reg as usize)), before))
            .collect();
        steps.sort_unstable_by(|a, b| b.cmp(a));
        steps.dedup();
        steps
    }

    pub fn pred_steps(&self, thread: u32, pred: u32, before: u64) -> Vec<u64> {
        newest_first(self.pred.get(&(thread, pred)), before).collect()
    }

    pub fn mem_steps(&self, space: MemSpace, addr: u64, len: u64, before: u64) -> Vec<u64> {
        let first = addr / MEM_LINE;
        let last = (addr + len.max(1) - 1) / MEM_LINE;
        let mut steps: Vec<u64> =
            (first..=last).flat_map(|line| newest_first(self.mem.get(&(space, line)), before)).collect();
        steps.sort_unstable_by(|a, b| b.cmp(a));
        steps.dedup();
        steps
    }

    /// Drops every step ≥ `from` (after truncating the recording).
    pub fn truncate(&mut self, from: u64) {
        let grf = self.grf.iter_mut().flat_map(|regs| regs.iter_mut());
        for list in grf.chain(self.pred.values_mut()).chain(self.mem.values_mut()) {
            let keep = list.partition_point(|&s| (s as u64) < from);
            list.truncate(keep);
        }
    }
}
