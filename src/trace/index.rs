//! Indexes from a location to the steps that wrote it, so "who wrote this" needs no replay:
//! for registers and predicates, per-thread bitsets of what each segment of steps wrote; for
//! memory, step lists per 64-byte line, appended in increasing order.

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

/// Steps per segment of the register index: a thread's register and predicate writes are
/// kept as one bitset per aligned segment of steps it wrote in, not as a list of steps per
/// register. Appending a write is then a few bit operations on the end of one vector (step
/// lists per register cost the appending core cache misses and reallocations, and 6.5 bytes
/// a step on the Collatz launch). A query scans the segments' step records for the thread's
/// steps, newest first, and the caller checks their entries.
pub const SEGMENT: u64 = 1024;

/// Most bitset words per segment for registers (512 registers); higher registers share the
/// last bit (a superset: queries check entries anyway).
const MAX_REG_WORDS: usize = 8;
/// Most bytes one thread's segment takes in [`WriteIndex::bytes`]: its number and its words.
pub const MAX_SEGMENT_BYTES: u64 = 4 + 8 * (MAX_REG_WORDS as u64 + 1);

#[derive(Clone, Debug, Default, PartialEq)]
struct ThreadSegments {
    /// Segments the thread wrote registers or predicates in, increasing.
    segments: Vec<u32>,
    /// Per segment: the register bitset's words, then one word of predicates (bit 63 also
    /// stands for every predicate above 63).
    bits: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteIndex {
    /// Per thread: where it wrote registers and predicates.
    threads: Vec<ThreadSegments>,
    /// Register bitset words per segment.
    reg_words: usize,
    /// log2 of the GRF register size when it is a power of two (a shift, not a division).
    reg_shift: u32,
    reg_size: u32,
    /// (space, line number) → steps.
    mem: FastMap<(MemSpace, u64), Vec<Step32>>,
    /// Memory index entries stored (for the memory estimate).
    mem_entries: u64,
}

/// A step number in a memory index list: 4 bytes, half of a u64. Recordings stop before
/// [`MAX_STEPS`] steps, so every step fits.
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
    /// An index for threads of up to `grf_bytes` GRF bytes in registers of `reg_size` bytes.
    pub fn new(grf_bytes: u32, reg_size: u32) -> WriteIndex {
        let reg_size = reg_size.max(1);
        let regs = grf_bytes.div_ceil(reg_size).max(1) as usize;
        WriteIndex {
            reg_words: regs.div_ceil(64).min(MAX_REG_WORDS),
            reg_shift: reg_size.trailing_zeros(),
            reg_size,
            ..WriteIndex::default()
        }
    }

    fn reg(&self, byte: u32) -> usize {
        let reg = if self.reg_size.is_power_of_two() { byte >> self.reg_shift } else { byte / self.reg_size };
        (reg as usize).min(64 * self.reg_words - 1)
    }

    /// The bitset words of `thread`'s segment holding `step`, added when it has none yet.
    #[inline(always)]
    fn segment_bits(&mut self, step: u64, thread: u32) -> &mut [u64] {
        let words = self.reg_words + 1;
        let segment = (step / SEGMENT).min(u32::MAX as u64) as u32;
        if self.threads.get(thread as usize).is_none_or(|t| t.segments.last() != Some(&segment)) {
            self.add_segment(segment, thread);
        }
        let t = &mut self.threads[thread as usize];
        let at = t.bits.len() - words;
        &mut t.bits[at..]
    }

    /// Starts `thread`'s bitset for `segment` (once per thread and segment it writes in).
    #[cold]
    #[inline(never)]
    fn add_segment(&mut self, segment: u32, thread: u32) {
        if self.threads.len() <= thread as usize {
            self.threads.resize_with(thread as usize + 1, ThreadSegments::default);
        }
        let words = self.reg_words + 1;
        let t = &mut self.threads[thread as usize];
        t.segments.push(segment);
        t.bits.resize(t.bits.len() + words, 0);
    }

    #[inline]
    pub fn add_grf(&mut self, step: u64, thread: u32, offset: u32, len: u32) {
        let (first, last) = (self.reg(offset), self.reg(offset + len.max(1) - 1));
        let bits = self.segment_bits(step, thread);
        for reg in first..=last {
            bits[reg / 64] |= 1 << (reg % 64);
        }
    }

    #[inline]
    pub fn add_pred(&mut self, step: u64, thread: u32, pred: u32) {
        let words = self.reg_words;
        self.segment_bits(step, thread)[words] |= 1 << pred.min(63);
    }

    pub fn add_mem(&mut self, step: u64, space: MemSpace, addr: u64, len: u64) {
        let first = addr / MEM_LINE;
        let last = (addr + len.max(1) - 1) / MEM_LINE;
        for line in first..=last {
            self.mem_entries += push(self.mem.entry((space, line)).or_default(), step) as u64;
        }
    }

    /// Segments before the one holding step `before` or holding it, newest first, in which
    /// `thread` wrote a GRF register overlapping `[offset, offset+len)`: the steps that wrote
    /// the range are among the thread's steps in them.
    pub fn grf_segments(
        &self,
        thread: u32,
        offset: u32,
        len: u32,
        before: u64,
    ) -> impl Iterator<Item = u64> + '_ {
        let (first, last) = (self.reg(offset), self.reg(offset + len.max(1) - 1));
        self.segments(thread, before, move |bits| {
            (first..=last).any(|reg| bits[reg / 64] >> (reg % 64) & 1 != 0)
        })
    }

    /// [`WriteIndex::grf_segments`] for a predicate.
    pub fn pred_segments(&self, thread: u32, pred: u32, before: u64) -> impl Iterator<Item = u64> + '_ {
        let words = self.reg_words;
        self.segments(thread, before, move |bits| bits[words] >> pred.min(63) & 1 != 0)
    }

    fn segments<'a, F: Fn(&[u64]) -> bool + 'a>(
        &'a self,
        thread: u32,
        before: u64,
        hit: F,
    ) -> impl Iterator<Item = u64> + 'a {
        let words = self.reg_words + 1;
        let t = self.threads.get(thread as usize);
        let segments = t.map_or(&[][..], |t| &t.segments[..]);
        let bits = t.map_or(&[][..], |t| &t.bits[..]);
        // Segments that start before `before`.
        let end = segments.partition_point(|&s| (s as u64) * SEGMENT < before);
        (0..end)
            .rev()
            .filter(move |&i| hit(&bits[i * words..(i + 1) * words]))
            .map(move |i| segments[i] as u64)
    }

    /// Steps before `before` that wrote memory overlapping the range, newest first.
    pub fn mem_steps(&self, space: MemSpace, addr: u64, len: u64, before: u64) -> Vec<u64> {
        let first = addr / MEM_LINE;
        let last = (addr + len.max(1) - 1) / MEM_LINE;
        let mut steps: Vec<u64> =
            (first..=last).flat_map(|line| newest_first(self.mem.get(&(space, line)), before)).collect();
        steps.sort_unstable_by(|a, b| b.cmp(a));
        steps.dedup();
        steps
    }

    /// Bytes the index holds: segment numbers and bitsets; memory step lists (4-byte steps in
    /// lists that grow by doubling: about 1.5 times their length).
    pub fn bytes(&self) -> u64 {
        let threads: usize = self.threads.iter().map(|t| 4 * t.segments.len() + 8 * t.bits.len()).sum();
        threads as u64 + self.mem_entries * 6
    }
}
