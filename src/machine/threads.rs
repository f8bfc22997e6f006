//! The machine's thread table in shared chunks: a checkpoint's clone copies one pointer per
//! 64 threads instead of one per thread, and a step copies only its thread's chunk of
//! pointers (on its first write after a checkpoint), not the whole table.

use std::ops::Index;

use super::{Shared, ThreadState};

/// Threads per chunk.
pub const CHUNK: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct Threads {
    chunks: Vec<Shared<Vec<Shared<ThreadState>>>>,
    len: usize,
}

impl Threads {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, thread: Shared<ThreadState>) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Shared::new(Vec::with_capacity(CHUNK)));
        }
        if let Some(last) = self.chunks.last_mut() {
            Shared::make_mut(last).push(thread);
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> Option<&Shared<ThreadState>> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    /// Thread `i`'s slot for writing (its chunk is copied first if a checkpoint shares it).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Shared<ThreadState>> {
        Shared::make_mut(self.chunks.get_mut(i / CHUNK)?).get_mut(i % CHUNK)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Shared<ThreadState>> {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// Takes this table's first `n` threads from `head` (a table as long): chunks wholly
    /// below `n` become shared with `head`, and the chunk holding both tables' threads a new
    /// one.
    pub fn set_head(&mut self, head: &Threads, n: usize) {
        for (i, (mine, theirs)) in self.chunks.iter_mut().zip(&head.chunks).enumerate() {
            match (i * CHUNK, (i + 1) * CHUNK) {
                (_, end) if end <= n => *mine = theirs.clone(),
                (start, _) if start >= n => break,
                (start, _) => {
                    let chunk = Shared::make_mut(mine);
                    for (m, t) in chunk.iter_mut().zip(theirs.iter()).take(n - start) {
                        *m = t.clone();
                    }
                }
            }
        }
    }

    /// Threads of `self` not shared with `other` (an earlier copy of the same table), found
    /// by skipping whole chunks the two share; and how many chunks are not shared.
    pub fn unshared_with<'a>(&'a self, other: &Threads) -> (Vec<&'a ThreadState>, usize) {
        let (mut threads, mut chunks) = (Vec::new(), 0);
        for (i, chunk) in self.chunks.iter().enumerate() {
            let old = other.chunks.get(i);
            if old.is_some_and(|o| Shared::ptr_eq(chunk, o)) {
                continue;
            }
            chunks += 1;
            for (j, t) in chunk.iter().enumerate() {
                if old.and_then(|o| o.get(j)).is_none_or(|u| !Shared::ptr_eq(t, u)) {
                    threads.push(&**t);
                }
            }
        }
        (threads, chunks)
    }
}

impl Index<usize> for Threads {
    type Output = Shared<ThreadState>;

    fn index(&self, i: usize) -> &Shared<ThreadState> {
        &self.chunks[i / CHUNK][i % CHUNK]
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
        assert_eq!(copied.iter().map(|t| t.simd).collect::<Vec<_>>(), vec![1000]);
        assert!(live.get(200).is_none() && live.get_mut(200).is_none());
        live.push(thread(7));
        assert_eq!((live.len(), live.unshared_with(&checkpoint).1), (201, 2));
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
