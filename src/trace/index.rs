//! Indexes from a location to the steps that wrote it, so "who wrote this" needs no replay:
//! for registers and predicates, per-thread bitsets of the GRF units (a dword on a 4 KiB
//! file) and predicates each segment piece of steps wrote (or more: a burst window's stage
//! adds all it wrote to every piece its steps span, and queries check the entries of the
//! steps named); for memory, step lists per 64-byte line, appended in increasing order.
//!
//! A segment is 1,024 aligned steps, cut into pieces where parts of the trace begin, so
//! that a piece lies in one part: a query reads (and, for a part whose body was dropped,
//! records again) only parts where its location was written.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

pub use crate::machine::FastHasher;

use crate::machine::MemSpace;

/// A map keyed by small integers, hashed by [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Most units a thread's GRF is indexed in: 4032, 63 words of bits (a stage's bitmap and an
/// index segment's alike; with the word of predicates, a piece's words fit a 64-bit mask).
pub const UNIT_WORDS: usize = 63;

/// log2 of the bytes per unit the register index (and the stages that feed it) keep for a
/// GRF of `grf_bytes`: 4-byte units (one lane of a dword operand) where the file has at
/// most 4032 of them, as on every file up to 15.75 KiB; larger units on larger files, so
/// that the file fits [`UNIT_WORDS`] (a unit of at most a 32-byte register up to 126 KiB,
/// so that variables, each aligned to a register, share no unit). A query for a dword
/// then names only segments where that dword (or its register) was written, not every one
/// where a variable next to it was.
pub fn unit_shift(grf_bytes: u32) -> u32 {
    let units = (UNIT_WORDS * 64) as u32;
    2 + grf_bytes.div_ceil(4 * units).max(1).next_power_of_two().trailing_zeros()
}

/// Sets bits `lo..=hi` of a bitset kept as words (unit bitmaps), a word at a time.
#[inline(always)]
pub fn set_bits(words: &mut [u64], lo: usize, hi: usize) {
    let (first, last) = (lo / 64, hi / 64);
    let low = u64::MAX << (lo % 64);
    let high = u64::MAX >> (63 - hi % 64);
    if first == last {
        words[first] |= low & high;
        return;
    }
    words[first] |= low;
    for w in &mut words[first + 1..last] {
        *w = u64::MAX;
    }
    words[last] |= high;
}

/// A predicate's bit in a word of predicates (bit 63 also stands for every predicate above).
#[inline(always)]
pub fn pred_bit(pred: u32) -> u64 {
    1 << pred.min(63)
}

/// Granularity of the memory index: one key per 64-byte line.
pub const MEM_LINE: u64 = 64;

/// Steps per segment of the register index: a thread's register and predicate writes are
/// kept as one bitset of units per aligned segment of steps it wrote in (per piece of it,
/// where a part of the trace begins inside: [`WriteIndex::cut`]), not as a list of steps per
/// register. Appending a write is then a few bit operations on the end of one vector (step
/// lists per register cost the appending core cache misses and reallocations, and 6.5 bytes
/// a step on the Collatz launch). A query scans the pieces' step records for the thread's
/// steps, newest first, and the caller checks their entries.
pub const SEGMENT: u64 = 1024;

/// Most pieces a segment is cut into (its key's low bits); the last piece takes every cut
/// past those.
const PIECES: u64 = 8;
const PIECE_BITS: u32 = PIECES.trailing_zeros();

#[derive(Clone, Debug, Default, PartialEq)]
struct ThreadSegments {
    /// Keys of the segment pieces the thread wrote registers or predicates in, increasing
    /// ([`WriteIndex::key`]).
    segments: Vec<u32>,
    /// Per piece: its bitset (the GRF unit bitset's words, then one word of predicates, bit
    /// 63 also standing for every predicate above 63) as the words that are not zero, from
    /// `starts[i]` in `words`, and which words those are (bit j: word j). A thread writes a
    /// few registers a piece: most of a 4 KiB file's 16 words are zero.
    starts: Vec<u32>,
    masks: Vec<u64>,
    words: Vec<u64>,
}

/// A piece's bitset, whole.
type Bits = [u64; UNIT_WORDS + 1];

impl ThreadSegments {
    /// Piece `i`'s bitset.
    fn bits(&self, i: usize) -> Bits {
        let mut bits = [0; UNIT_WORDS + 1];
        let mut mask = self.masks[i];
        let mut at = self.starts[i] as usize;
        while mask != 0 {
            bits[mask.trailing_zeros() as usize] = self.words[at];
            mask &= mask - 1;
            at += 1;
        }
        bits
    }

    /// Changes the last piece's bitset by `f`; the words it then holds beyond those before.
    fn update_last(&mut self, f: impl FnOnce(&mut Bits)) -> i64 {
        let i = self.segments.len() - 1;
        let mut bits = self.bits(i);
        f(&mut bits);
        let start = self.starts[i] as usize;
        let before = self.words.len() - start;
        let mask = bits.iter().enumerate().fold(0u64, |m, (j, &w)| m | u64::from(w != 0) << j);
        if mask != self.masks[i] {
            self.words.truncate(start);
            self.words.extend(bits.iter().filter(|&&w| w != 0));
            self.masks[i] = mask;
        } else {
            // The same words are set: they change in place.
            let (mut m, mut at) = (mask, start);
            while m != 0 {
                self.words[at] = bits[m.trailing_zeros() as usize];
                m &= m - 1;
                at += 1;
            }
        }
        (self.words.len() - start) as i64 - before as i64
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteIndex {
    /// Per thread: where it wrote registers and predicates.
    threads: Vec<ThreadSegments>,
    /// GRF unit bitset words per segment.
    unit_words: usize,
    /// log2 of the bytes per unit ([`unit_shift`]).
    unit_shift: u32,
    /// (space, line number) → steps.
    mem: FastMap<(MemSpace, u64), Vec<Step32>>,
    /// Memory index entries stored (for the memory estimate).
    mem_entries: u64,
    /// Register segment pieces and their bitset words held over all threads (for
    /// [`WriteIndex::bytes`], which the recording budget asks for every window).
    segment_count: u64,
    word_count: u64,
    /// Steps where parts of the trace begin inside a segment (not on its first step),
    /// increasing: each cuts its segment into pieces indexed apart, so that a query whose
    /// write is in one part does not also read (and record again) the part next to it.
    cuts: Vec<u64>,
    /// Writes are not indexed: the index of a stretch recorded again for its log alone (the
    /// recording it was dropped from keeps the stretch's index).
    off: bool,
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
    /// An index for threads of `grf_bytes` GRF bytes.
    pub fn new(grf_bytes: u32) -> WriteIndex {
        let unit_shift = unit_shift(grf_bytes);
        let units = (grf_bytes >> unit_shift).max(1) as usize;
        WriteIndex { unit_words: units.div_ceil(64).min(UNIT_WORDS), unit_shift, ..WriteIndex::default() }
    }

    /// An index that indexes nothing: every write added is dropped.
    pub fn off() -> WriteIndex {
        WriteIndex { off: true, ..WriteIndex::default() }
    }

    /// The unit holding GRF byte `byte` (the last unit stands for every byte above it).
    fn unit(&self, byte: u32) -> usize {
        ((byte >> self.unit_shift) as usize).min(64 * self.unit_words - 1)
    }

    /// Notes that a part of the trace begins at `step`, before anything at or after it is
    /// indexed: from there on, its segment's writes go to a piece of their own.
    pub fn cut(&mut self, step: u64) {
        if !step.is_multiple_of(SEGMENT) && self.cuts.last().is_none_or(|&c| c < step) {
            self.cuts.push(step);
        }
    }

    /// The cuts inside segment `segment`, as indexes into `cuts`.
    fn cuts_in(&self, segment: u64) -> std::ops::Range<usize> {
        let (lo, hi) = (segment * SEGMENT, (segment + 1) * SEGMENT);
        self.cuts.partition_point(|&c| c <= lo)..self.cuts.partition_point(|&c| c < hi)
    }

    /// The key of the segment piece holding `step`: the segment's number, then which piece
    /// (the cuts inside the segment at or before `step`).
    #[inline(always)]
    fn key(&self, step: u64) -> u32 {
        let segment = (step / SEGMENT).min(u64::from(u32::MAX) >> PIECE_BITS);
        // Appending past every cut: the common case, without a search.
        let piece = if self.cuts.last().is_none_or(|&c| c <= segment * SEGMENT) {
            0
        } else {
            let cuts = self.cuts_in(segment);
            let at_or_before = self.cuts[cuts.clone()].partition_point(|&c| c <= step);
            (at_or_before as u64).min(PIECES - 1)
        };
        (segment << PIECE_BITS | piece) as u32
    }

    /// The steps of the piece `key` names.
    fn range(&self, key: u32) -> std::ops::Range<u64> {
        let (segment, piece) = (u64::from(key) >> PIECE_BITS, (u64::from(key) & (PIECES - 1)) as usize);
        let (lo, hi) = (segment * SEGMENT, (segment + 1) * SEGMENT);
        let cuts = &self.cuts[self.cuts_in(segment)];
        let start = if piece == 0 { lo } else { cuts.get(piece - 1).copied().unwrap_or(hi) };
        let end = if (piece as u64) < PIECES - 1 { cuts.get(piece).copied().unwrap_or(hi) } else { hi };
        start..end
    }

    /// The keys of the pieces holding steps `first..=last`, increasing.
    fn keys_over(&self, first: u64, last: u64) -> Vec<u32> {
        let mut keys = Vec::new();
        for segment in first / SEGMENT..=last / SEGMENT {
            let (lo, hi) = (segment * SEGMENT, (segment + 1) * SEGMENT - 1);
            let (a, b) = (self.key(first.max(lo)), self.key(last.min(hi)));
            keys.extend(a..=b);
        }
        keys
    }

    /// Changes by `f` the bitset of `thread`'s piece `key`, added when it has none yet (keys
    /// come in increasing order).
    #[inline(always)]
    fn with_bits(&mut self, key: u32, thread: u32, f: impl FnOnce(&mut Bits)) {
        if self.threads.get(thread as usize).is_none_or(|t| t.segments.last() != Some(&key)) {
            self.add_segment(key, thread);
        }
        let grown = self.threads[thread as usize].update_last(f);
        self.word_count = self.word_count.saturating_add_signed(grown);
    }

    /// Starts `thread`'s bitset for piece `key` (once per thread and piece it writes in).
    #[cold]
    #[inline(never)]
    fn add_segment(&mut self, key: u32, thread: u32) {
        if self.threads.len() <= thread as usize {
            self.threads.resize_with(thread as usize + 1, ThreadSegments::default);
        }
        let t = &mut self.threads[thread as usize];
        debug_assert!(t.segments.last().is_none_or(|&l| l < key), "a thread's pieces in step order");
        t.segments.push(key);
        t.starts.push(t.words.len() as u32);
        t.masks.push(0);
        self.segment_count += 1;
    }

    #[inline]
    pub fn add_grf(&mut self, step: u64, thread: u32, offset: u32, len: u32) {
        if self.off {
            return;
        }
        let (first, last) = (self.unit(offset), self.unit(offset + len.max(1) - 1));
        self.with_bits(self.key(step), thread, |bits| set_bits(bits, first, last));
    }

    /// Adds to every segment piece from the one holding step `first` to the one holding
    /// `last` what a stage of `thread` wrote: a bitmap of [`UNIT_WORDS`] words of GRF units
    /// (the last unit standing for all above it), then a word of predicates. The units are
    /// this index's, of `1 << shift` bytes ([`unit_shift`] of the file both were made for).
    pub fn add_units(&mut self, thread: u32, first: u64, last: u64, written: &[u64], shift: u32) {
        if self.off {
            return;
        }
        debug_assert_eq!(shift, self.unit_shift, "a stage's units are its index's");
        let (units, preds) = written.split_at(written.len() - 1);
        let words = self.unit_words;
        let mut add = [0u64; UNIT_WORDS + 1];
        add[..words].copy_from_slice(&units[..words]);
        // Units past the index's last one: that last one stands for them.
        if units[words..].iter().any(|&w| w != 0) {
            add[words - 1] |= 1 << 63;
        }
        add[words] = preds[0];
        if add.iter().all(|&r| r == 0) {
            return;
        }
        for key in self.keys_over(first, last) {
            self.with_bits(key, thread, |bits| {
                for (b, r) in bits.iter_mut().zip(&add) {
                    *b |= r;
                }
            });
        }
    }

    #[inline]
    pub fn add_pred(&mut self, step: u64, thread: u32, pred: u32) {
        if self.off {
            return;
        }
        let words = self.unit_words;
        self.with_bits(self.key(step), thread, |bits| bits[words] |= pred_bit(pred));
    }

    pub fn add_mem(&mut self, step: u64, space: MemSpace, addr: u64, len: u64) {
        if self.off {
            return;
        }
        let first = addr / MEM_LINE;
        let last = (addr + len.max(1) - 1) / MEM_LINE;
        for line in first..=last {
            self.mem_entries += push(self.mem.entry((space, line)).or_default(), step) as u64;
        }
    }

    /// The steps of the segment pieces that start before `before`, newest first, in which
    /// `thread` wrote a GRF unit overlapping `[offset, offset+len)`: the steps that wrote
    /// the range are among the thread's steps in them.
    pub fn grf_segments(
        &self,
        thread: u32,
        offset: u32,
        len: u32,
        before: u64,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        let (first, last) = (self.unit(offset), self.unit(offset + len.max(1) - 1));
        self.segments(thread, before, move |bits| {
            (first..=last).any(|unit| bits[unit / 64] >> (unit % 64) & 1 != 0)
        })
    }

    /// [`WriteIndex::grf_segments`] for a predicate.
    pub fn pred_segments(
        &self,
        thread: u32,
        pred: u32,
        before: u64,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        let words = self.unit_words;
        self.segments(thread, before, move |bits| bits[words] >> pred.min(63) & 1 != 0)
    }

    fn segments<'a, F: Fn(&[u64]) -> bool + 'a>(
        &'a self,
        thread: u32,
        before: u64,
        hit: F,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + 'a {
        let t = self.threads.get(thread as usize);
        let segments = t.map_or(&[][..], |t| &t.segments[..]);
        // Pieces that start before `before`.
        let end = segments.partition_point(|&s| self.range(s).start < before);
        (0..end)
            .rev()
            .filter(move |&i| t.is_some_and(|t| hit(&t.bits(i))))
            .map(move |i| self.range(segments[i]))
    }

    /// The unit and predicate bits of `thread`'s segment piece holding `step`, if it has one.
    fn bits_at(&self, thread: u32, step: u64) -> Option<Bits> {
        let t = self.threads.get(thread as usize)?;
        let i = t.segments.binary_search(&self.key(step)).ok()?;
        Some(t.bits(i))
    }

    /// Whether a query for what `w` wrote, asked after `step`, is sent to `step`: its
    /// thread's piece holding `step` has the units or predicate, or `step` is in the lists
    /// of the memory lines.
    pub fn names(&self, step: u64, w: &super::log::Written) -> bool {
        use super::log::Written;
        match *w {
            Written::Grf { thread, offset, len } => self.bits_at(thread, step).is_some_and(|bits| {
                (self.unit(offset)..=self.unit(offset + len.max(1) - 1))
                    .all(|u| bits[u / 64] >> (u % 64) & 1 != 0)
            }),
            Written::Pred { thread, pred } => {
                self.bits_at(thread, step).is_some_and(|bits| bits[self.unit_words] & pred_bit(pred) != 0)
            }
            Written::Mem { space, addr, len } => {
                (addr / MEM_LINE..=(addr + len.max(1) - 1) / MEM_LINE).all(|line| {
                    let list = self.mem.get(&(space, line)).map_or(&[][..], Vec::as_slice);
                    list.binary_search(&(step.min(MAX_STEPS) as Step32)).is_ok()
                })
            }
        }
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
    /// pieces' bits in the pieces of this index its steps now fall in. Every step this index
    /// holds comes before `offset`; the parts that hold `later`'s steps are cut here first.
    pub fn join(&mut self, later: WriteIndex, offset: u64) {
        for (thread, theirs) in later.threads.iter().enumerate() {
            for (i, &key) in theirs.segments.iter().enumerate() {
                let add = theirs.bits(i);
                let range = later.range(key);
                if range.is_empty() {
                    continue;
                }
                for key in self.keys_over(range.start + offset, range.end - 1 + offset) {
                    self.with_bits(key, thread as u32, |bits| {
                        for (b, r) in bits.iter_mut().zip(&add) {
                            *b |= r;
                        }
                    });
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

    /// Bytes the index holds: piece keys, word starts and masks (16 bytes a piece), and
    /// bitset words; memory step lists (4-byte steps in lists that grow by doubling: about
    /// 1.5 times their length); the cuts.
    pub fn bytes(&self) -> u64 {
        self.segment_count * 16 + self.word_count * 8 + self.mem_entries * 6 + 8 * self.cuts.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage's units go to every segment its steps span, and the result covers the index
    /// single steps make of the same writes; queries name only segments where a unit of
    /// their range was written, on files of every size.
    #[test]
    fn stage_units_index_every_segment_spanned() {
        for grf in [4096u32, 8192, 16128, 16384, 65536, 91136, 129024, 262144] {
            let shift = unit_shift(grf);
            let most = (UNIT_WORDS * 64) as u32;
            assert!(grf >> shift <= most && (shift == 2 || grf >> shift > most / 2), "{grf}");
            assert!(shift <= 5 || grf > 32 * most, "{grf}: units of a 32-byte register or less");
            let unit = 1u32 << shift;
            let mut units = [0u64; UNIT_WORDS + 1];
            // Units 2 to 4, and the last unit (all bytes above it); predicate 3.
            set_bits(&mut units, 2, 4);
            let top = ((grf >> shift) - 1) as usize;
            set_bits(&mut units, top, top);
            units[UNIT_WORDS] = 1 << 3;
            let mut stage = WriteIndex::new(grf);
            stage.add_units(7, SEGMENT - 5, 2 * SEGMENT + 1, &units, shift);
            // Three pieces, each keeping its three words that are not zero (units 2 to 4, the
            // last unit, the predicates).
            assert_eq!(stage.bytes(), 3 * 16 + 3 * 3 * 8, "{grf}");
            let mut single = WriteIndex::new(grf);
            single.add_grf(SEGMENT - 2, 7, 2 * unit, 3 * unit);
            single.add_pred(SEGMENT + 9, 7, 3);
            single.add_grf(2 * SEGMENT, 7, grf - 4, 4);
            // Every write single steps made is named by the stage's index too.
            use crate::trace::log::Written;
            let grf_write = |offset, len| Written::Grf { thread: 7, offset, len };
            for (step, w) in [
                (SEGMENT - 2, grf_write(2 * unit, 3 * unit)),
                (2 * SEGMENT, grf_write(grf - 4, 4)),
                (SEGMENT + 9, Written::Pred { thread: 7, pred: 3 }),
            ] {
                assert!(single.names(step, &w) && stage.names(step, &w), "{grf}: {w:?}");
            }
            // Not every one the stage may have made.
            assert!(!single.names(2 * SEGMENT, &grf_write(2 * unit, 4)), "{grf}");
            assert!(!stage.names(2 * SEGMENT, &grf_write(unit, 4)), "{grf}");
            assert!(!stage.names(3 * SEGMENT, &grf_write(2 * unit, 4)), "{grf}");
            let starts = |r: Vec<std::ops::Range<u64>>| r.into_iter().map(|r| r.start).collect::<Vec<_>>();
            let segs = starts(stage.grf_segments(7, 2 * unit, 4, u64::MAX).collect());
            assert_eq!(segs, [2 * SEGMENT, SEGMENT, 0], "{grf}");
            // The bytes next to those written, on either side: nothing.
            assert_eq!(stage.grf_segments(7, 0, 2 * unit, u64::MAX).count(), 0, "{grf}");
            assert_eq!(stage.grf_segments(7, 5 * unit, unit, u64::MAX).count(), 0, "{grf}");
            assert_eq!(single.grf_segments(7, 2 * unit - 4, 4, u64::MAX).count(), 0, "{grf}");
            assert_eq!(starts(single.grf_segments(7, 4 * unit, 4, u64::MAX).collect()), [0], "{grf}");
            // Before the step that wrote it: nothing.
            assert_eq!(single.grf_segments(7, grf - 4, 4, 2 * SEGMENT).count(), 0, "{grf}");
            assert_eq!(single.grf_segments(7, grf - 4, 4, 2 * SEGMENT + 1).count(), 1, "{grf}");
            assert_eq!(stage.grf_segments(7, grf - 1, 1, u64::MAX).count(), 3, "{grf}");
            // Where the file fills its words, the last unit also stands for offsets past it.
            if (grf >> shift).is_multiple_of(64) {
                assert_eq!(stage.grf_segments(7, grf + 100, 4, u64::MAX).count(), 3, "{grf}");
            }
            assert_eq!(stage.pred_segments(7, 3, u64::MAX).count(), 3, "{grf}");
            assert_eq!(stage.pred_segments(7, 2, u64::MAX).count(), 0, "{grf}");
        }
        // Memory: the steps of every line the write touched.
        let mut a = WriteIndex::new(64);
        a.add_mem(4, MemSpace::Svm, 0x1000, 4);
        a.add_mem(5, MemSpace::Svm, 0x103e, 4);
        let mem = |addr, len| crate::trace::log::Written::Mem { space: MemSpace::Svm, addr, len };
        assert!(a.names(4, &mem(0x1000, 4)) && a.names(5, &mem(0x103e, 4)) && a.names(5, &mem(0x1000, 64)));
        assert!(!a.names(4, &mem(0x1000, 65)) && !a.names(6, &mem(0x1000, 4)));
        assert!(
            !a.names(4, &crate::trace::log::Written::Mem { space: MemSpace::Slm(0), addr: 0x1000, len: 4 })
        );
    }

    /// `set_bits` sets exactly the bits of its range, for every range of a few words.
    #[test]
    fn set_bits_sets_exactly_its_range() {
        for lo in 0..200 {
            for hi in lo..200 {
                let mut words = [0u64; 4];
                set_bits(&mut words, lo, hi);
                for bit in 0..256 {
                    assert_eq!(
                        words[bit / 64] >> (bit % 64) & 1 == 1,
                        (lo..=hi).contains(&bit),
                        "{lo}..={hi}: {bit}"
                    );
                }
            }
        }
    }

    /// A small deterministic generator for the tests below.
    fn next(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed >> 33
    }

    /// Generated traces: parts cut at random steps (several inside one segment, more than
    /// [`PIECES`] in some), writes of random units by single steps or by stages spanning
    /// steps inside one part, the index built in one piece or joined from two at a cut. Every
    /// query names every piece holding a write of its range before `before`, and only pieces
    /// of the parts holding one: a write in one part never sends a query to the part next to
    /// it.
    #[test]
    fn pieces_name_the_parts_that_wrote_and_only_those() {
        let mut seed = 7;
        for case in 0..300 {
            let len = 1 + next(&mut seed) % (6 * SEGMENT);
            let mut cuts: Vec<u64> = (0..next(&mut seed) % 12).map(|_| next(&mut seed) % len).collect();
            if case % 5 == 0 {
                // Many cuts in one segment.
                let base = next(&mut seed) % len;
                cuts.extend((0..12).map(|i| (base + 3 * i).min(len - 1)));
            }
            cuts.retain(|&c| c > 0);
            cuts.sort_unstable();
            cuts.dedup();
            let part_of = |step: u64| cuts.partition_point(|&c| c <= step);
            // (step, first unit, last unit) per write; a stage's writes with its step span.
            let mut writes: Vec<(u64, u64, u32, u32)> = Vec::new();
            for _ in 0..next(&mut seed) % 40 {
                let first = next(&mut seed) % len;
                let u = (next(&mut seed) % 1024) as u32;
                let (lo, hi) = (u, (u + (next(&mut seed) % 3) as u32).min(1023));
                let last = if next(&mut seed).is_multiple_of(2) {
                    first
                } else {
                    // A stage: up to the end of its part.
                    let end = cuts.get(part_of(first)).copied().unwrap_or(len);
                    first + next(&mut seed) % (end - first)
                };
                writes.push((first, last, lo, hi));
            }
            writes.sort_unstable();
            // One thread's steps come one after another: a stage's span holds no other write.
            let mut end = 0;
            writes.retain(|w| {
                let keep = w.0 >= end;
                end = end.max(w.1 + 1);
                keep
            });
            let split = if case % 2 == 1 { cuts.first().copied() } else { None };
            let build = |from: u64, to: u64, offset: u64| {
                let mut index = WriteIndex::new(4096);
                let mut next_cut = cuts.iter().filter(|&&c| c >= from && c < to).peekable();
                for &(first, last, lo, hi) in writes.iter().filter(|w| w.0 >= from && w.0 < to) {
                    while let Some(&&c) = next_cut.peek().filter(|&&&c| c <= first) {
                        index.cut(c - offset);
                        next_cut.next();
                    }
                    if first == last {
                        index.add_grf(first - offset, 3, lo * 4, (hi - lo + 1) * 4);
                    } else {
                        let mut units = [0u64; UNIT_WORDS + 1];
                        set_bits(&mut units, lo as usize, hi as usize);
                        index.add_units(3, first - offset, last - offset, &units, 2);
                    }
                }
                for c in next_cut {
                    index.cut(c - offset);
                }
                index
            };
            let index = match split {
                None => build(0, len, 0),
                Some(at) => {
                    let mut index = build(0, at, 0);
                    for &c in cuts.iter().filter(|&&c| c >= at) {
                        index.cut(c);
                    }
                    index.join(build(at, len, at), at);
                    index
                }
            };
            for _ in 0..40 {
                let unit = (next(&mut seed) % 1024) as u32;
                let before = next(&mut seed) % (len + 1);
                let named: Vec<std::ops::Range<u64>> = index.grf_segments(3, unit * 4, 4, before).collect();
                let hits = |w: &&(u64, u64, u32, u32)| (w.2..=w.3).contains(&unit) && w.0 < before;
                for w in writes.iter().filter(hits) {
                    // Some step of the write (its first) in a named piece.
                    assert!(
                        named.iter().any(|r| r.contains(&w.0)),
                        "case {case}: {w:?} not named: {named:?}"
                    );
                }
                for r in &named {
                    assert!(r.start < before, "case {case}: {r:?} from {before}");
                    // More cuts in a segment than pieces: its last piece spans parts (a
                    // joined index's segments also counted from the join).
                    let crowded = |from: u64| {
                        let cuts_in = |segment: u64| {
                            let inside = |c: u64| {
                                c > from
                                    && (c - from) / SEGMENT == segment
                                    && !(c - from).is_multiple_of(SEGMENT)
                            };
                            cuts.iter().filter(|&&c| inside(c)).count() >= PIECES as usize
                        };
                        let (a, b) = (
                            r.start.saturating_sub(from) / SEGMENT,
                            (r.end - 1).saturating_sub(from) / SEGMENT,
                        );
                        (a..=b).any(cuts_in)
                    };
                    if crowded(0) || split.is_some_and(crowded) {
                        continue;
                    }
                    // Inside one part, which one of the writes ran in; without a join (whose
                    // pieces are the other index's segments), overlapping the write's steps.
                    assert_eq!(part_of(r.start), part_of(r.end - 1), "case {case}: {r:?} {cuts:?}");
                    let wrote = writes.iter().filter(|w| (w.2..=w.3).contains(&unit)).any(|w| {
                        part_of(w.0) == part_of(r.start)
                            && (split.is_some() || (w.0 < r.end && w.1 >= r.start))
                    });
                    assert!(wrote, "case {case}: {r:?} names no write of unit {unit}");
                }
            }
        }
    }
}
