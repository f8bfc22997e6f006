//! Where a trace part stores its steps. Steps appended one at a time are stored in step
//! order. A burst window's steps are stored thread by thread, each thread's steps together in
//! the order it ran them, the way they were staged: appending then copies each thread's log
//! in one piece instead of interleaving the threads' steps one by one. A window of `n` steps
//! from step `s` takes slots `s..s + n`, so only the order inside a window differs from step
//! order. Its steps ran round-robin: round `r` takes one step of each thread that has more
//! than `r`, in rotation order, which is also the order the threads are stored in. The
//! layout names each window's threads, so its steps' records need no thread of their own.

use std::ops::Range;

/// The windows of a part, by first step. Steps outside them are stored in step order, and
/// their records name their threads.
#[derive(Clone, Debug, Default)]
pub(super) struct Layout {
    windows: Vec<WindowLayout>,
}

/// Whose a slot is: a window thread's, or the `k`-th step outside windows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    Window(u32),
    Pushed(u64),
}

/// One window stored thread by thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct WindowLayout {
    /// Its first step (and slot), counted from the part's start.
    start: u64,
    /// Steps in all.
    len: u64,
    /// Each thread's steps, in rotation order (threads without a step left out).
    counts: Box<[u64]>,
    /// Those threads.
    threads: Box<[u32]>,
    /// Slots of the windows before this one.
    windowed_before: u64,
}

impl WindowLayout {
    /// A window from step `start` whose threads, in rotation order, ran `counts` steps.
    pub fn new(start: u64, threads: Box<[u32]>, counts: Box<[u64]>) -> WindowLayout {
        WindowLayout { start, len: counts.iter().sum(), counts, threads, windowed_before: 0 }
    }

    /// Bytes a layout entry takes for a window of `threads` threads.
    pub fn bytes_for(threads: usize) -> u64 {
        56 + 12 * threads as u64
    }

    /// Steps taken in the rounds before round `r`.
    fn before_round(&self, r: u64) -> u64 {
        self.counts.iter().map(|&c| c.min(r)).sum()
    }

    /// The thread (its position in rotation order) and round of the window's step `j`
    /// (`j < len`).
    fn locate(&self, j: u64) -> (usize, u64) {
        // The last round that starts at or before `j`: rounds start at `before_round`, which
        // grows with the round, and the round after the longest thread's last starts at `len`.
        let (mut lo, mut hi) = (0, self.counts.iter().copied().max().unwrap_or(0));
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.before_round(mid) <= j {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut rest = j - self.before_round(lo);
        for (p, &c) in self.counts.iter().enumerate() {
            if c > lo {
                if rest == 0 {
                    return (p, lo);
                }
                rest -= 1;
            }
        }
        (self.counts.len() - 1, lo)
    }

    /// The window's step that is round `r` of thread `p`.
    pub fn step_of(&self, p: usize, r: u64) -> u64 {
        self.before_round(r) + self.counts[..p].iter().filter(|&&c| c > r).count() as u64
    }

    /// The thread (position) and round that slot `o` of the window holds (`o < len`).
    fn at_slot(&self, o: u64) -> (usize, u64) {
        let mut base = 0;
        for (p, &c) in self.counts.iter().enumerate() {
            if o < base + c {
                return (p, o - base);
            }
            base += c;
        }
        (self.counts.len() - 1, o - (base - self.counts.last().copied().unwrap_or(0)))
    }

    /// Slot of thread `p`'s first step, from the window's first slot.
    fn base(&self, p: usize) -> u64 {
        self.counts[..p].iter().sum()
    }

    /// How many of thread `p`'s steps come before the window's step `j` (`j ≤ len`), given
    /// where step `j` falls (`at`, from [`WindowLayout::locate`]; None at the end).
    fn taken(&self, p: usize, at: Option<(usize, u64)>) -> u64 {
        let c = self.counts[p];
        match at {
            Some((q, r)) if c > r => r + u64::from(p < q),
            _ => c,
        }
    }

    fn end(&self) -> u64 {
        self.start + self.len
    }
}

impl Layout {
    /// Adds a window after every step laid out so far.
    pub fn push(&mut self, mut window: WindowLayout) {
        window.windowed_before = self.windows.last().map_or(0, |w| w.windowed_before + w.len);
        self.windows.push(window);
    }

    /// The window holding step (or slot: a window's are the same range) `i`, or, outside
    /// windows, which step appended one at a time `i` is (counted from 0).
    #[inline]
    fn find(&self, i: u64) -> Result<&WindowLayout, u64> {
        let at = self.windows.partition_point(|w| w.start <= i);
        match at.checked_sub(1).map(|k| &self.windows[k]) {
            Some(w) if i < w.end() => Ok(w),
            Some(w) => Err(i - w.windowed_before - w.len),
            None => Err(i),
        }
    }

    /// The slot holding step `i`, and whose it is.
    #[inline]
    pub fn slot(&self, i: u64) -> (u64, Owner) {
        match self.find(i) {
            Ok(w) => {
                let (p, r) = w.locate(i - w.start);
                (w.start + w.base(p) + r, Owner::Window(w.threads[p]))
            }
            Err(k) => (i, Owner::Pushed(k)),
        }
    }

    /// Whose slot `slot` is.
    #[inline]
    pub fn owner(&self, slot: u64) -> Owner {
        match self.find(slot) {
            Ok(w) => Owner::Window(w.threads[w.at_slot(slot - w.start).0]),
            Err(k) => Owner::Pushed(k),
        }
    }

    /// The step that slot `slot` holds.
    pub fn step(&self, slot: u64) -> u64 {
        match self.find(slot) {
            Ok(w) => {
                let (p, r) = w.at_slot(slot - w.start);
                w.start + w.step_of(p, r)
            }
            Err(_) => slot,
        }
    }

    /// The slots holding steps `from..to`, as ranges: a stretch stored in step order is one
    /// range; a window's steps in the stretch, one range per thread. Stretches come in step
    /// order. Applying a window's steps thread by thread (each thread's in its order) leaves
    /// the state applying them in step order leaves: each step changes its own thread's
    /// registers and control, and memory by XOR, which commutes.
    pub fn ranges(&self, from: u64, to: u64) -> Vec<Range<u64>> {
        let mut ranges = Vec::new();
        let mut i = from;
        let mut k = self.windows.partition_point(|w| w.end() <= from);
        while i < to {
            let Some(w) = self.windows.get(k).filter(|w| w.start < to) else {
                ranges.push(i..to);
                break;
            };
            if w.start > i {
                ranges.push(i..w.start);
                i = w.start;
            }
            let (a, b) = (i - w.start, to.min(w.end()) - w.start);
            let (at_a, at_b) = (Some(w.locate(a)), (b < w.len).then(|| w.locate(b)));
            for p in 0..w.counts.len() {
                let base = w.start + w.base(p);
                let (x, y) = (w.taken(p, at_a), w.taken(p, at_b));
                if x < y {
                    ranges.push(base + x..base + y);
                }
            }
            i = w.start + b;
            k += 1;
        }
        ranges
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.windows.iter().map(|w| WindowLayout::bytes_for(w.counts.len())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The round-robin order, spelled out: (thread, round) of each step.
    fn round_robin(counts: &[u64]) -> Vec<(usize, u64)> {
        let rounds = counts.iter().copied().max().unwrap_or(0);
        (0..rounds)
            .flat_map(|r| (0..counts.len()).filter(move |&p| counts[p] > r).map(move |p| (p, r)))
            .collect()
    }

    #[test]
    fn windows_map_steps_to_slots_thread_by_thread_and_back() {
        for counts in [&[3u64, 3, 3][..], &[5, 1, 4, 2], &[1, 7], &[2, 2, 9, 9, 1]] {
            let threads: Vec<u32> = (0..counts.len() as u32).map(|p| 100 + p).collect();
            let w = WindowLayout::new(10, threads.into(), counts.into());
            let mut layout = Layout::default();
            layout.push(w.clone());
            let order = round_robin(counts);
            assert_eq!(order.len() as u64, w.len);
            let mut seen = vec![false; order.len()];
            for (j, &(p, r)) in order.iter().enumerate() {
                assert_eq!(w.locate(j as u64), (p, r), "{counts:?} step {j}");
                assert_eq!(w.step_of(p, r), j as u64, "{counts:?}");
                let (slot, owner) = layout.slot(10 + j as u64);
                assert_eq!(slot, 10 + w.base(p) + r);
                assert_eq!((owner, layout.owner(slot)), (Owner::Window(100 + p as u32), owner));
                assert_eq!(layout.step(slot), 10 + j as u64);
                seen[(slot - 10) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "every slot holds one step");
            // Outside the window, steps are their own slots, numbered apart from the window's.
            assert_eq!(layout.slot(9), (9, Owner::Pushed(9)));
            assert_eq!(layout.slot(10 + w.len + 2), (10 + w.len + 2, Owner::Pushed(12)));
            assert_eq!(layout.owner(10 + w.len + 2), Owner::Pushed(12));
            assert_eq!((layout.step(9), layout.step(10 + w.len)), (9, 10 + w.len));
            // Every stretch's ranges hold exactly its steps' slots.
            let end = 10 + w.len + 3;
            for from in 7..end {
                for to in from..=end {
                    let mut got: Vec<u64> = layout.ranges(from, to).into_iter().flatten().collect();
                    let mut want: Vec<u64> = (from..to).map(|i| layout.slot(i).0).collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "{counts:?} {from}..{to}");
                }
            }
        }
    }

    #[test]
    fn a_window_of_one_thread_is_in_step_order_and_names_its_thread() {
        let mut layout = Layout::default();
        layout.push(WindowLayout::new(0, [7].into(), [5].into()));
        layout.push(WindowLayout::new(6, [8, 9].into(), [1, 1].into()));
        assert_eq!(layout.ranges(1, 4), vec![(1..4)]);
        assert_eq!(layout.slot(3), (3, Owner::Window(7)));
        // Step 5 is outside windows (the first step appended on its own); 6 and 7 are the
        // second window's.
        assert_eq!(layout.slot(5), (5, Owner::Pushed(0)));
        assert_eq!((layout.owner(7), layout.owner(8)), (Owner::Window(9), Owner::Pushed(1)));
    }
}
