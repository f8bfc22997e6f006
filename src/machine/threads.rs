//! The machine's thread table in shared chunks: a checkpoint's clone copies one pointer per
//! 64 threads instead of one per thread, and a step copies only its thread's chunk of
//! pointers (on its first write after a checkpoint), not the whole table.
//!
//! A launch's table may be lazy: a chunk's threads are built (by the launch's
//! [`ThreadMaker`]) when one of them is first looked at, so a launch of a million threads
//! starts at once and a run builds the threads of the work-groups it reaches. A thread not
//! yet built is in its start state at every point of the run, so a clone taken before a
//! chunk was built and one taken after agree on it.

use std::fmt;
use std::ops::Index;
use std::sync::{Arc, OnceLock};

use super::{Shared, ThreadState};

/// Threads per chunk.
pub const CHUNK: usize = 64;

/// Builds the start state of a launch's thread `i`.
pub trait ThreadMaker: Send + Sync {
    fn make(&self, i: usize) -> ThreadState;
}

type Chunk = Shared<Vec<Shared<ThreadState>>>;

#[derive(Clone, Default)]
pub struct Threads {
    chunks: Vec<OnceLock<Chunk>>,
    len: usize,
    maker: Option<Arc<dyn ThreadMaker>>,
}

impl fmt::Debug for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = self.chunks.iter().filter(|c| c.get().is_some()).count();
        write!(f, "Threads {{ len: {}, chunks built: {built} of {} }}", self.len, self.chunks.len())
    }
}

impl Threads {
    /// A table of `len` threads built by `maker` as they are first looked at.
    pub fn lazy(len: usize, maker: Arc<dyn ThreadMaker>) -> Threads {
        Threads {
            chunks: (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect(),
            len,
            maker: Some(maker),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunk `c`, built first if it was not.
    fn chunk(&self, c: usize) -> Option<&Chunk> {
        let cell = self.chunks.get(c)?;
        Some(cell.get_or_init(|| {
            let end = ((c + 1) * CHUNK).min(self.len);
            let threads = match &self.maker {
                Some(maker) => (c * CHUNK..end).map(|i| Shared::new(maker.make(i))).collect(),
                None => Vec::new(),
            };
            Shared::new(threads)
        }))
    }

    pub fn push(&mut self, thread: Shared<ThreadState>) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(OnceLock::from(Shared::new(Vec::with_capacity(CHUNK))));
        }
        let last = self.chunks.len() - 1;
        self.chunk(last);
        if let Some(chunk) = self.chunks[last].get_mut() {
            Shared::make_mut(chunk).push(thread);
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> Option<&Shared<ThreadState>> {
        if i >= self.len {
            return None;
        }
        self.chunk(i / CHUNK)?.get(i % CHUNK)
    }

    /// Thread `i`'s slot for writing (its chunk is copied first if a checkpoint shares it).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Shared<ThreadState>> {
        if i >= self.len {
            return None;
        }
        self.chunk(i / CHUNK)?;
        Shared::make_mut(self.chunks.get_mut(i / CHUNK)?.get_mut()?).get_mut(i % CHUNK)
    }

    /// Every thread, building those not built yet.
    pub fn iter(&self) -> impl Iterator<Item = &Shared<ThreadState>> {
        (0..self.chunks.len()).filter_map(|c| self.chunk(c)).flat_map(|c| c.iter())
    }

    /// The threads built so far, with their indices (a lazy table's others are in their
    /// start state).
    pub fn built(&self) -> impl Iterator<Item = (usize, &Shared<ThreadState>)> {
        self.chunks
            .iter()
            .enumerate()
            .filter_map(|(c, cell)| cell.get().map(|chunk| (c, chunk)))
            .flat_map(|(c, chunk)| chunk.iter().enumerate().map(move |(j, t)| (c * CHUNK + j, t)))
    }

    /// Drops the threads of every chunk wholly below thread `n`: they are gone (`get` gives
    /// None), not rebuilt in their start state. Only for a run whose caller reads no finished
    /// thread again (`Scheduler::release_finished`).
    pub fn release_below(&mut self, n: usize) {
        for cell in self.chunks.iter_mut().take(n / CHUNK) {
            if cell.get().is_none_or(|c| !c.is_empty()) {
                *cell = OnceLock::from(Shared::new(Vec::new()));
            }
        }
    }

    /// Takes this table's first `n` threads from `head` (a table as long): chunks wholly
    /// below `n` become shared with `head`, and the chunk holding both tables' threads a new
    /// one.
    pub fn set_head(&mut self, head: &Threads, n: usize) {
        for i in 0..self.chunks.len().min(head.chunks.len()) {
            match (i * CHUNK, (i + 1) * CHUNK) {
                (_, end) if end <= n => self.chunks[i] = head.chunks[i].clone(),
                (start, _) if start >= n => break,
                (start, _) => {
                    let (Some(theirs), Some(_)) = (head.chunk(i), self.chunk(i)) else { continue };
                    let Some(mine) = self.chunks[i].get_mut() else { continue };
                    let chunk = Shared::make_mut(mine);
                    for (m, t) in chunk.iter_mut().zip(theirs.iter()).take(n - start) {
                        *m = t.clone();
                    }
                }
            }
        }
    }

    /// Threads of `self` not shared with `other` (an earlier copy of the same table), with
    /// their indices, found by skipping whole chunks the two share (and chunks neither
    /// built); and how many chunks are not shared.
    pub fn unshared_with<'a>(&'a self, other: &Threads) -> (Vec<(usize, &'a Shared<ThreadState>)>, usize) {
        let (mut threads, mut chunks) = (Vec::new(), 0);
        for (i, cell) in self.chunks.iter().enumerate() {
            let Some(chunk) = cell.get() else { continue };
            let old = other.chunks.get(i).and_then(OnceLock::get);
            if old.is_some_and(|o| Shared::ptr_eq(chunk, o)) {
                continue;
            }
            chunks += 1;
            for (j, t) in chunk.iter().enumerate() {
                if old.and_then(|o| o.get(j)).is_none_or(|u| !Shared::ptr_eq(t, u)) {
                    threads.push((i * CHUNK + j, t));
                }
            }
        }
        (threads, chunks)
    }
}

impl Index<usize> for Threads {
    type Output = Shared<ThreadState>;

    fn index(&self, i: usize) -> &Shared<ThreadState> {
        match self.get(i) {
            Some(t) => t,
            None => panic!("thread {i} of {}", self.len),
        }
    }
}

impl<'a> IntoIterator for &'a Threads {
    type Item = &'a Shared<ThreadState>;
    type IntoIter = Box<dyn Iterator<Item = &'a Shared<ThreadState>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl From<Vec<Shared<ThreadState>>> for Threads {
    fn from(threads: Vec<Shared<ThreadState>>) -> Threads {
        threads.into_iter().collect()
    }
}

impl FromIterator<Shared<ThreadState>> for Threads {
    fn from_iter<I: IntoIterator<Item = Shared<ThreadState>>>(iter: I) -> Threads {
        let mut t = Threads::default();
        for thread in iter {
            t.push(thread);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::InstIdx;
    use crate::machine::{Control, ThreadStatus, WaitList};

    fn thread(simd: u32) -> Shared<ThreadState> {
        let control = Control {
            pc: InstIdx(0),
            em: 0,
            call_mask: 0,
            waiting: WaitList::default(),
            stack: Vec::new(),
            status: ThreadStatus::Running,
        };
        let (grf, preds, addrs) = (Vec::new(), Vec::new(), Vec::new());
        Shared::new(ThreadState {
            grf,
            preds,
            addrs,
            control,
            dispatch_mask: 0,
            simd,
            group: 0,
            index_in_group: 0,
        })
    }

    fn table(n: u32) -> Threads {
        (0..n).map(thread).collect()
    }

    #[test]
    fn a_clone_shares_until_written_and_counts_what_it_copied() {
        let mut live = table(200);
        assert_eq!(live.len(), 200);
        assert_eq!(live.iter().map(|t| t.simd).collect::<Vec<_>>(), (0..200).collect::<Vec<_>>());
        let checkpoint = live.clone();
        assert_eq!(live.unshared_with(&checkpoint).1, 0);
        Shared::make_mut(live.get_mut(130).expect("thread 130")).simd = 1000;
        assert_eq!((checkpoint[130].simd, live[130].simd), (130, 1000));
        let (copied, chunks) = live.unshared_with(&checkpoint);
        assert_eq!(chunks, 1);
        assert_eq!(copied.iter().map(|(i, t)| (*i, t.simd)).collect::<Vec<_>>(), vec![(130, 1000)]);
        assert!(live.get(200).is_none() && live.get_mut(200).is_none());
        live.push(thread(7));
        assert_eq!((live.len(), live.unshared_with(&checkpoint).1), (201, 2));
    }

    /// Makes thread i with `simd` i, counting what it made.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl ThreadMaker for Counting {
        fn make(&self, i: usize) -> ThreadState {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Shared::unwrap_or_clone(thread(i as u32))
        }
    }

    #[test]
    fn a_lazy_table_builds_the_chunks_looked_at_and_clones_agree() {
        let maker = Arc::new(Counting(Default::default()));
        let made = || maker.0.load(std::sync::atomic::Ordering::Relaxed);
        let mut live = Threads::lazy(1 << 20, maker.clone());
        assert_eq!((live.len(), made()), (1 << 20, 0));
        let before = live.clone();
        assert_eq!(live[(1 << 20) - 1].simd, (1 << 20) - 1);
        assert_eq!(made(), CHUNK);
        Shared::make_mut(live.get_mut(70).expect("thread 70")).simd = 7;
        assert_eq!(made(), 2 * CHUNK);
        // The copy taken before either chunk was built sees thread 70 in its start state.
        assert_eq!((before[70].simd, live[70].simd), (70, 7));
        // Only built chunks count as unshared: the live table's two against the copy.
        assert_eq!(live.unshared_with(&before).1, 2);
        assert_eq!(live.built().count(), 2 * CHUNK);
        assert!(live.get(1 << 20).is_none());
        // Released chunks are gone, not rebuilt.
        live.release_below(128);
        assert!(live.get(70).is_none() && live.get(127).is_none());
        assert_eq!(live[128].simd, 128);
    }

    #[test]
    fn a_head_comes_from_the_other_table_sharing_whole_chunks() {
        let (mine, mut theirs) = (table(200), table(200));
        for i in 0..200 {
            Shared::make_mut(theirs.get_mut(i).expect("thread")).simd = 1000 + i as u32;
        }
        for n in [0, 1, 64, 100, 128, 199, 200] {
            let mut joined = mine.clone();
            joined.set_head(&theirs, n);
            let want: Vec<u32> = (0..200).map(|i| if i < n { 1000 + i as u32 } else { i as u32 }).collect();
            assert_eq!(joined.iter().map(|t| t.simd).collect::<Vec<_>>(), want, "head of {n}");
            // Chunks wholly below n are `theirs`, wholly above `mine`; the one holding both
            // (200 is inside the fourth chunk) is neither's.
            assert_eq!(joined.unshared_with(&mine).1, n.div_ceil(CHUNK), "head of {n}");
            assert_eq!(joined.unshared_with(&theirs).1, 4 - n / CHUNK, "head of {n}");
            assert_eq!(mine.iter().map(|t| t.simd).collect::<Vec<_>>(), (0..200).collect::<Vec<_>>());
        }
    }
}
