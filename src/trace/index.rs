//! Indexes from a location to the steps that wrote it, so "who wrote this" needs no replay:
//! for registers and predicates, per-thread bitsets of what each segment of steps wrote (or
//! more: a burst window's stage adds all it wrote to every segment its steps span, and
//! queries check the entries of the steps named); for memory, step lists per 64-byte line,
//! appended in increasing order.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

pub use crate::machine::FastHasher;

use crate::machine::MemSpace;

/// A map keyed by small integers, hashed by [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// log2 of the GRF unit stages note their writes in ([`WriteIndex::add_units`]): 32 bytes,
/// the smallest register size.
pub const UNIT_SHIFT: u32 = 5;

/// Sets bits `lo..=hi` of a bitset kept as words (register and unit bitmaps).
#[inline(always)]
pub fn set_bits(words: &mut [u64], lo: usize, hi: usize) {
    for bit in lo..=hi {
        words[bit / 64] |= 1 << (bit % 64);
    }
}

/// A predicate's bit in a word of predicates (bit 63 also stands for every predicate above).
#[inline(always)]
pub fn pred_bit(pred: u32) -> u64 {
    1 << pred.min(63)
}

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
    /// Register segments held over all threads (for [`WriteIndex::bytes`], which the
    /// recording budget asks for every window).
    segment_count: u64,
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
        self.segment_count += 1;
    }

    #[inline]
    pub fn add_grf(&mut self, step: u64, thread: u32, offset: u32, len: u32) {
        let (first, last) = (self.reg(offset), self.reg(offset + len.max(1) - 1));
        let bits = self.segment_bits(step, thread);
        set_bits(bits, first, last);
    }

    /// Adds to every segment from the one holding step `first` to the one holding `last`
    /// what a stage of `thread` wrote: a bitmap of 32-byte GRF units (the last unit standing
    /// for all above it), then a word of predicates.
    pub fn add_units(&mut self, thread: u32, first: u64, last: u64, written: &[u64]) {
        let (units, preds) = written.split_at(written.len() - 1);
        let mut regs = [0u64; MAX_REG_WORDS];
        let top = (units.len() * 64 - 1) as u32;
        for (w, &word) in units.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let unit = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let lo = self.reg(unit << UNIT_SHIFT);
                // The last unit stands for every byte above it: up to the last register bit.
                let hi = if unit == top {
                    64 * self.reg_words - 1
                } else {
                    self.reg(((unit + 1) << UNIT_SHIFT) - 1)
                };
                set_bits(&mut regs, lo, hi);
            }
        }
        let words = self.reg_words;
        let pred_bits = preds[0];
        if pred_bits == 0 && regs.iter().all(|&r| r == 0) {
            return;
        }
        for segment in first / SEGMENT..=last / SEGMENT {
            let bits = self.segment_bits(segment * SEGMENT, thread);
            for (b, r) in bits[..words].iter_mut().zip(&regs) {
                *b |= r;
            }
            bits[words] |= pred_bits;
        }
    }

    #[inline]
    pub fn add_pred(&mut self, step: u64, thread: u32, pred: u32) {
        let words = self.reg_words;
        self.segment_bits(step, thread)[words] |= pred_bit(pred);
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

    /// Whether this index names every segment and step `other` names for every location: a
    /// superset, which answers every query as `other` does (queries check the entries of
    /// the steps named). Burst windows index what a stage wrote in each segment its steps
    /// span, where single steps index each write in its own segment.
    pub fn covers(&self, other: &WriteIndex) -> bool {
        let words = other.reg_words + 1;
        let same_shape = (self.reg_words, self.reg_size) == (other.reg_words, other.reg_size);
        let threads = other.threads.iter().enumerate().all(|(t, theirs)| {
            let ours = self.threads.get(t);
            theirs.segments.iter().enumerate().all(|(i, segment)| {
                let Some(ours) = ours else { return false };
                let Ok(j) = ours.segments.binary_search(segment) else { return false };
                let (a, b) =
                    (&ours.bits[j * words..(j + 1) * words], &theirs.bits[i * words..(i + 1) * words]);
                a.iter().zip(b).all(|(a, b)| a & b == *b)
            })
        });
        let mem = other.mem.iter().all(|(key, steps)| {
            self.mem.get(key).is_some_and(|ours| steps.iter().all(|s| ours.binary_search(s).is_ok()))
        });
        same_shape && threads && mem
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

    /// Adds `later`, the index of steps recorded from step 0 of a machine of their own,
    /// for those steps at `offset` onwards: its steps numbered from `offset`, and each of its
    /// segments' register bits in the (one or two) segments of this index its steps now fall
    /// in. Every step this index holds comes before `offset`.
    pub fn join(&mut self, later: WriteIndex, offset: u64) {
        let words = later.reg_words + 1;
        for (thread, theirs) in later.threads.iter().enumerate() {
            for (i, &segment) in theirs.segments.iter().enumerate() {
                let bits = &theirs.bits[i * words..(i + 1) * words];
                // The local segment's steps, numbered from `offset`.
                let (first, last) = (
                    u64::from(segment) * SEGMENT + offset,
                    u64::from(segment) * SEGMENT + offset + SEGMENT - 1,
                );
                for s in first / SEGMENT..=last / SEGMENT {
                    for (mine, theirs) in self.segment_bits(s * SEGMENT, thread as u32).iter_mut().zip(bits) {
                        *mine |= theirs;
                    }
                }
            }
        }
        for (key, steps) in later.mem {
            let list = self.mem.entry(key).or_default();
            for step in steps {
                self.mem_entries += push(list, u64::from(step) + offset) as u64;
            }
        }
    }

    /// Bytes the index holds: segment numbers and bitsets; memory step lists (4-byte steps in
    /// lists that grow by doubling: about 1.5 times their length).
    pub fn bytes(&self) -> u64 {
        let words = self.reg_words as u64 + 1;
        self.segment_count * (4 + 8 * words) + self.mem_entries * 6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage's 32-byte units come out as the registers holding them, in every segment its
    /// steps span, and the result covers the index single steps make of the same writes.
    #[test]
    fn stage_units_index_the_registers_they_hold_in_every_segment_spanned() {
        for reg_size in [32u32, 64] {
            let mut units = [0u64; 17];
            // Bytes 64..160 (units 2 to 4) and the last unit (all bytes above it), predicate 3.
            for unit in [2usize, 3, 4, 1023] {
                units[unit / 64] |= 1 << (unit % 64);
            }
            units[16] = 1 << 3;
            let mut stage = WriteIndex::new(64 * 1024, reg_size);
            stage.add_units(7, SEGMENT - 5, 2 * SEGMENT + 1, &units);
            let mut single = WriteIndex::new(64 * 1024, reg_size);
            single.add_grf(SEGMENT - 2, 7, 64, 96);
            single.add_grf(2 * SEGMENT, 7, 40_000, 4);
            single.add_pred(SEGMENT + 9, 7, 3);
            assert!(stage.covers(&single), "{reg_size}");
            assert!(!single.covers(&stage), "{reg_size}");
            let regs: Vec<u64> = stage.grf_segments(7, 64, 96, u64::MAX).collect();
            assert_eq!(regs, [2, 1, 0], "{reg_size}");
            // Below the first unit written: nothing.
            assert_eq!(stage.grf_segments(7, 0, 64, u64::MAX).count(), 0, "{reg_size}");
            // The last unit stands for every register above it.
            assert_eq!(stage.grf_segments(7, 60_000, 4, u64::MAX).count(), 3, "{reg_size}");
            assert_eq!(stage.pred_segments(7, 3, u64::MAX).count(), 3, "{reg_size}");
            assert_eq!(stage.pred_segments(7, 2, u64::MAX).count(), 0, "{reg_size}");
        }
        // A memory step the other lacks.
        let (mut a, mut b) = (WriteIndex::new(64, 32), WriteIndex::new(64, 32));
        a.add_mem(4, MemSpace::Svm, 0x1000, 4);
        b.add_mem(5, MemSpace::Svm, 0x1000, 4);
        assert!(!a.covers(&b) && !b.covers(&a));
        b.add_mem(6, MemSpace::Svm, 0x1000, 4);
        a.add_mem(5, MemSpace::Svm, 0x1000, 4);
        assert!(!a.covers(&b));
    }
}
