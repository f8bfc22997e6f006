//! Indexes from a location to the steps that wrote it, so "who wrote this" needs no replay.
//! Step lists are appended in increasing order; a lookup is a binary search.

use std::collections::HashMap;

use crate::machine::MemSpace;

/// Granularity of the memory index: one key per 64-byte line.
pub const MEM_LINE: u64 = 64;

#[derive(Clone, Debug, Default)]
pub struct WriteIndex {
    /// (thread, GRF register number) → steps.
    grf: HashMap<(u32, u32), Vec<u64>>,
    /// (thread, predicate) → steps.
    pred: HashMap<(u32, u32), Vec<u64>>,
    /// (space, line number) → steps.
    mem: HashMap<(MemSpace, u64), Vec<u64>>,
    /// Entries stored (for the memory estimate).
    pub entries: u64,
}

fn push(list: &mut Vec<u64>, step: u64) -> bool {
    if list.last() == Some(&step) {
        return false;
    }
    list.push(step);
    true
}

/// Steps in `list` that are `< before`, newest first.
fn newest_first(list: Option<&Vec<u64>>, before: u64) -> impl Iterator<Item = u64> + '_ {
    let list = list.map(Vec::as_slice).unwrap_or(&[]);
    let end = list.partition_point(|&s| s < before);
    list[..end].iter().rev().copied()
}

impl WriteIndex {
    pub fn add_grf(&mut self, step: u64, thread: u32, offset: u32, len: u32, grf_size: u32) {
        let first = offset / grf_size;
        let last = (offset + len.max(1) - 1) / grf_size;
        for reg in first..=last {
            self.entries += push(self.grf.entry((thread, reg)).or_default(), step) as u64;
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
        let mut steps: Vec<u64> =
            (first..=last).flat_map(|reg| newest_first(self.grf.get(&(thread, reg)), before)).collect();
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
        for list in self.grf.values_mut().chain(self.pred.values_mut()).chain(self.mem.values_mut()) {
            let keep = list.partition_point(|&s| s < from);
            list.truncate(keep);
        }
    }
}
