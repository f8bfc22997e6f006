//! Work-groups shared out over N cores, for plain runs ([`run_split`]) and recordings (the
//! session's `split.rs`) alike, through one driver ([`share`]).
//!
//! Groups run one after another, so a run is a sequence of groups, and memory is the only
//! way they meet: registers and SLM belong to one group. This core runs the groups from the
//! front, one at a time, as it would alone, while each other core takes chunks of the groups
//! left from the back ([`Claims`]: large chunks while the cores are far apart, smaller ones
//! as they meet), each chunk from a copy of the state the split started from. What a chunk's
//! core made of it (its memory writes, a recording) stands for the sequence's when the chunk
//! read no SVM byte the groups before it wrote, and wrote none either (a recording's log
//! holds the bytes it overwrote): the workers note the bytes they read and write, this core
//! the bytes it writes, and [`Order`] checks the chunks in group order once all are done. From the first chunk that failed (a
//! fault, a limit) or does not pass, the later chunks are dropped and this core goes on
//! through the groups itself, so the result is the sequence's either way.

use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::schedule::{run_bursts, run_groups, run_to_end, RunSummary, Scheduler};
use super::step::Interpreter;
use super::{Fault, NullObserver};
use crate::machine::{Accesses, Fold, Machine, OverReads, Ranges};

/// Fewer work-groups than this left: nothing to share. From two on, another core may run or
/// record the later ones while this core runs the first (the cost of trying is a copy-on-write
/// clone and a thread; `docs/design-history.md` has the figures).
pub const MIN_SPLIT_GROUPS: usize = 2;

/// Each worker takes this fraction of the groups left, divided by the number of workers, per
/// chunk (at least one group), so that no core waits long for the others whichever runs
/// faster.
const CHUNK_SHARE: usize = 4;

/// The work-groups no core has taken yet: this core takes them from the front, one at a
/// time, the workers from the back, in chunks.
#[derive(Debug)]
pub struct Claims {
    left: Mutex<Range<usize>>,
    workers: usize,
}

impl Claims {
    pub fn new(groups: Range<usize>, workers: usize) -> Claims {
        Claims { left: Mutex::new(groups), workers }
    }

    /// The next group from the front.
    pub fn front(&self) -> Option<usize> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let group = left.start;
        (group < left.end).then(|| {
            left.start += 1;
            group
        })
    }

    /// The next chunk from the back.
    fn back(&self) -> Option<Range<usize>> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let share = CHUNK_SHARE * self.workers.max(1);
        let n = (left.len() / share).max(1).min(left.len());
        (n > 0).then(|| {
            left.end -= n;
            left.end..left.end + n
        })
    }
}

/// A chunk of groups a worker took, and what it made of them (None when it could not run
/// them all).
#[derive(Debug)]
pub struct Chunk<T> {
    pub groups: Range<usize>,
    pub done: Option<T>,
}

/// Runs `front` on this core while a worker for each of `workers` (its state) takes chunks
/// from `claims`' back and runs `work` on them, until none is left, one of its chunks fails
/// or `stop` is set (`front` sets it when the workers' later work is of no use). Returns
/// what `front` returned and the chunks in group order.
pub fn share<S, T, R>(
    claims: &Claims,
    stop: &AtomicBool,
    workers: Vec<S>,
    front: impl FnOnce() -> R,
    work: impl Fn(&mut S, Range<usize>) -> Option<T> + Sync,
) -> (R, Vec<Chunk<T>>)
where
    S: Send,
    T: Send,
{
    let (ran, mut chunks) = std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut state| {
                scope.spawn(move || {
                    let mut chunks = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let Some(groups) = claims.back() else { break };
                        let done = work(&mut state, groups.clone());
                        let failed = done.is_none();
                        chunks.push(Chunk { groups, done });
                        if failed {
                            break;
                        }
                    }
                    chunks
                })
            })
            .collect();
        let ran = front();
        let mut chunks = Vec::new();
        for handle in handles {
            match handle.join() {
                Ok(mut done) => chunks.append(&mut done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (ran, chunks)
    });
    chunks.sort_unstable_by_key(|c| c.groups.start);
    (ran, chunks)
}

/// The check of chunks in group order: where the groups run so far end, the SVM bytes they
/// wrote, and those they updated by atomics that fold.
#[derive(Debug)]
pub struct Order {
    written: Ranges,
    folded: Vec<(Fold, Ranges)>,
    next: usize,
}

impl Order {
    /// After groups up to `next` (not included) that made `earlier` (of which the writes and
    /// folds count).
    pub fn new(mut earlier: Accesses, next: usize) -> Order {
        earlier.normalize();
        Order { written: earlier.writes, folded: earlier.folds, next }
    }

    /// The first group not run yet.
    pub fn next(&self) -> usize {
        self.next
    }

    /// Whether a chunk of `groups` that made `accesses` (normalized) ran as it would have
    /// after the groups so far, once its folds are [laid](Fold::lay) onto theirs: it starts
    /// where they end, read and wrote none of the bytes they wrote or folded, and folded
    /// none of the bytes they wrote or folded another way, nor one byte two ways itself.
    pub fn follows(&self, groups: &Range<usize>, accesses: &Accesses) -> bool {
        let touched =
            |r: &Ranges| r.intersects(&self.written) || self.folded.iter().any(|(_, f)| r.intersects(f));
        // Two kinds of fold of one byte in the chunk do not lay on one another.
        let mixed = accesses
            .folds
            .iter()
            .enumerate()
            .any(|(i, (_, r))| accesses.folds[i + 1..].iter().any(|(_, other)| r.intersects(other)));
        groups.start == self.next
            && !touched(&accesses.reads)
            && !touched(&accesses.writes)
            && !mixed
            && accesses.folds.iter().all(|(fold, r)| {
                !r.intersects(&self.written)
                    && self.folded.iter().all(|(f, earlier)| f == fold || !r.intersects(earlier))
            })
    }

    /// Counts a chunk that [follows](Order::follows) as run.
    pub fn take(&mut self, groups: &Range<usize>, accesses: &Accesses) {
        self.written.union(&accesses.writes);
        for (fold, r) in &accesses.folds {
            match self.folded.iter_mut().find(|(f, _)| f == fold) {
                Some((_, earlier)) => earlier.union(r),
                None => self.folded.push((*fold, r.clone())),
            }
        }
        self.next = groups.end;
    }
}

/// How a run shared its groups: the cores it used, the groups other cores ran that joined
/// the run, and the first group of the first chunk that did not join because it touched
/// memory the groups before it wrote (the groups from there ran on this core).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub summary: RunSummary,
    pub cores: usize,
    pub groups_elsewhere: usize,
    pub refused_at: Option<usize>,
}

/// Runs every group to the end with exactly the memory and step count of [`run_bursts`], the
/// groups shared out over up to `jobs` cores when at least [`MIN_SPLIT_GROUPS`] are left.
///
/// When it returns, only memory, the step count and the summary are the run's: threads run on
/// other cores keep their start state in `machine`. `None` as for [`run_bursts`]: a fault or
/// the step limit, to be reported by an exact rerun from the start.
pub fn run_split(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    jobs: NonZeroUsize,
) -> Option<Split> {
    let (first, end) = (sched.current_group, sched.groups.len());
    if jobs.get() < 2 || end.saturating_sub(first) < MIN_SPLIT_GROUPS {
        let summary = run_bursts(interp, machine, sched)?;
        return Some(Split { summary, cores: 1, ..Split::default() });
    }
    // No more workers than groups the front core may leave them.
    let workers = (jobs.get() - 1).min(end - first - 1);
    let claims = Claims::new(first..end, workers);
    let (start, base) = (machine.clone(), sched.clone());
    let stop = AtomicBool::new(false);
    // Only what this core's groups wrote and folded is checked against (`Order`).
    machine.svm.accesses = Some(Box::new(Accesses::writes_only().folding()));
    let mut lane_ops = 0;
    let front = || {
        while let Some(group) = claims.front() {
            // Taken in order, from the group the run stands at.
            debug_assert_eq!(group, sched.current_group);
            match run_groups(interp, machine, sched, group + 1) {
                Some(summary) => lane_ops += summary.lane_ops,
                None => {
                    stop.store(true, Ordering::Relaxed);
                    return false;
                }
            }
        }
        true
    };
    let (ran, chunks) = share(&claims, &stop, vec![(); workers], front, |_, groups| {
        run_chunk(interp, &start, &base, groups, &stop)
    });
    let earlier = *machine.svm.accesses.take()?;
    if !ran {
        return None;
    }
    let mut order = Order::new(earlier, sched.current_group);
    let (mut groups_elsewhere, mut refused_at) = (0, None);
    for Chunk { groups, done } in chunks {
        let Some(done) = done else { break };
        if !order.follows(&groups, &done.accesses) {
            refused_at = Some(groups.start);
            break;
        }
        order.take(&groups, &done.accesses);
        groups_elsewhere += groups.len();
        // Folds first: a byte the chunk also wrote plainly is one no group before it touched,
        // and its end value is the chunk's.
        for (fold, addr, start, end) in &done.folds {
            let mut value = vec![0u8; start.len()];
            machine.svm.read(*addr, &mut value).ok()?;
            fold.lay(start, end, &mut value);
            machine.svm.write(*addr, &value).ok()?;
        }
        for (addr, bytes) in &done.bytes {
            machine.svm.write(*addr, bytes).ok()?;
        }
        machine.svm.over_reads.add(&done.over_reads);
        sched.steps += done.steps;
        lane_ops += done.lane_ops;
    }
    // The groups no chunk ran, in sequence, on this core.
    sched.start_group(order.next());
    lane_ops += run_groups(interp, machine, sched, end)?.lane_ops;
    if sched.step_limit != 0 && sched.steps > sched.step_limit {
        return None;
    }
    let summary = RunSummary { steps: sched.steps, lane_ops };
    Some(Split { summary, cores: workers + 1, groups_elsewhere, refused_at })
}

/// Runs every thread to the end without recording, in bursts ([`run_bursts`]), with exactly
/// the results of [`run_to_end`]'s round-robin schedule (same memory, registers and step
/// count): [`run_to_end_on`] one core.
pub fn run_to_end_unrecorded(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
) -> Result<RunSummary, Fault> {
    run_to_end_on(interp, machine, sched, NonZeroUsize::MIN)
}

/// [`run_to_end_unrecorded`] with the groups shared out over up to `jobs` cores
/// ([`run_split`]): the same memory, step count and faults. On a fault or the
/// step limit it starts again from a copy of the start state with [`run_to_end`], so faults
/// are reported exactly as there (the copy makes every thread's first write copy its
/// registers; a caller that can rebuild the start state calls [`run_split`] itself).
pub fn run_to_end_on(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    jobs: NonZeroUsize,
) -> Result<RunSummary, Fault> {
    if !sched.bursts_allowed() {
        return run_to_end(interp, machine, sched, &mut NullObserver);
    }
    let start = (machine.clone(), sched.clone());
    match run_split(interp, machine, sched, jobs) {
        Some(split) => Ok(split.summary),
        None => {
            (*machine, *sched) = start;
            run_to_end(interp, machine, sched, &mut NullObserver)
        }
    }
}

/// A chunk's plain run, as the core that ran it saw it.
struct Ran {
    steps: u64,
    lane_ops: u64,
    accesses: Accesses,
    /// The bytes it wrote, as they were when it ended.
    bytes: Vec<(u64, Vec<u8>)>,
    /// The bytes it folded: how, where, as they were when it started and when it ended.
    folds: Vec<(Fold, u64, Vec<u8>, Vec<u8>)>,
    /// Its reads past buffers' ends.
    over_reads: OverReads,
}

/// Runs groups `groups` from a copy of `start`, noting what they read and wrote; None at a
/// fault, the step limit, or when `stop` is set before a group (the front core faulted:
/// nothing after it is of use, and the fault is reported sooner).
fn run_chunk(
    interp: &Interpreter,
    start: &Machine,
    base: &Scheduler,
    groups: Range<usize>,
    stop: &AtomicBool,
) -> Option<Ran> {
    let mut machine = start.clone();
    let mut sched = base.clone();
    sched.start_group(groups.start);
    machine.svm.accesses = Some(Box::new(Accesses::default().folding()));
    machine.svm.over_reads = OverReads::default();
    let mut lane_ops = 0;
    for group in groups.clone() {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        lane_ops += run_groups(interp, &mut machine, &mut sched, group + 1)?.lane_ops;
    }
    let mut accesses = *machine.svm.accesses.take()?;
    accesses.normalize();
    let bytes_of = |m: &Machine, (from, to): (u64, u64)| {
        let mut buf = vec![0u8; (to - from) as usize];
        m.svm.read(from, &mut buf).ok().map(|()| buf)
    };
    let mut bytes = Vec::new();
    for range in accesses.writes.iter() {
        bytes.push((range.0, bytes_of(&machine, range)?));
    }
    let mut folds = Vec::new();
    for (fold, ranges) in &accesses.folds {
        for range in ranges.iter() {
            folds.push((*fold, range.0, bytes_of(start, range)?, bytes_of(&machine, range)?));
        }
    }
    let steps = sched.steps - base.steps;
    Some(Ran { steps, lane_ops, accesses, bytes, folds, over_reads: machine.svm.over_reads })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::AtomicOp;
    use crate::machine::FoldOp;

    fn accesses(reads: &[(u64, u64)], writes: &[(u64, u64)]) -> Accesses {
        let mut a = Accesses::default();
        reads.iter().for_each(|&(at, n)| a.reads.add(at, n));
        writes.iter().for_each(|&(at, n)| a.writes.add(at, n));
        a.normalize();
        a
    }

    #[test]
    fn chunks_follow_in_group_order_when_they_touch_nothing_the_earlier_groups_wrote() {
        // Groups up to 3 wrote [0x100, 0x140) and [0x400, 0x404), noted out of order.
        let mut order = Order::new(accesses(&[(0x1000, 64)], &[(0x400, 4), (0x100, 64)]), 3);
        // Reading what the earlier groups only read, writing elsewhere: follows, but only
        // from group 3.
        let fits = accesses(&[(0x1000, 64), (0x140, 16)], &[(0x200, 64), (0x404, 4)]);
        assert!(order.follows(&(3..5), &fits));
        assert!(!order.follows(&(4..5), &fits) && !order.follows(&(2..5), &fits));
        // Reading one byte the earlier groups wrote: the chunk saw other memory.
        assert!(!order.follows(&(3..5), &accesses(&[(0x800, 4), (0x13f, 1)], &[])));
        // Writing one: a recording's old bytes would be the start's, not the earlier groups'.
        assert!(!order.follows(&(3..5), &accesses(&[], &[(0x3fd, 4)])));
        // Once taken, its writes count too, and the next chunk starts at its end.
        order.take(&(3..5), &fits);
        assert_eq!(order.next(), 5);
        assert!(!order.follows(&(5..6), &accesses(&[(0x23f, 1)], &[])));
        assert!(order.follows(&(5..6), &accesses(&[(0x240, 1)], &[(0x300, 4)])));
    }

    fn with_folds(mut a: Accesses, folds: &[(FoldOp, u64, u64)]) -> Accesses {
        for &(op, at, n) in folds {
            a.add_fold(Fold { op, size: 4 }, at, n);
        }
        a.normalize();
        a
    }

    #[test]
    fn chunks_fold_into_the_bytes_earlier_groups_folded_the_same_way_only() {
        let earlier =
            with_folds(accesses(&[], &[(0x100, 16)]), &[(FoldOp::Add, 0x200, 8), (FoldOp::UMax, 0x300, 4)]);
        let mut order = Order::new(earlier, 2);
        let add = |at, n| with_folds(Accesses::default(), &[(FoldOp::Add, at, n)]);
        // Adding into what the earlier groups added into, or into untouched bytes: follows.
        assert!(order.follows(&(2..3), &add(0x200, 8)));
        assert!(order.follows(&(2..3), &add(0x400, 4)));
        // Adding into bytes they wrote plainly, or took the maximum of: does not.
        assert!(!order.follows(&(2..3), &add(0x10c, 4)));
        assert!(!order.follows(&(2..3), &add(0x300, 4)));
        // Reading or writing a folded byte plainly: the value differs.
        assert!(!order.follows(&(2..3), &accesses(&[(0x204, 1)], &[])));
        assert!(!order.follows(&(2..3), &accesses(&[], &[(0x303, 1)])));
        // A chunk that folds one byte two ways: its end value is not a fold of either.
        let two_ways = with_folds(Accesses::default(), &[(FoldOp::Add, 0x500, 4), (FoldOp::Xor, 0x500, 4)]);
        assert!(!order.follows(&(2..3), &two_ways));
        // Once taken, a chunk's folds count as the earlier groups' did.
        order.take(&(2..3), &with_folds(Accesses::default(), &[(FoldOp::Xor, 0x600, 4)]));
        assert!(order.follows(&(3..4), &with_folds(Accesses::default(), &[(FoldOp::Xor, 0x600, 4)])));
        assert!(!order.follows(&(3..4), &add(0x600, 4)));
    }

    /// Whatever the values and the split, atomic updates of one location folded from two runs
    /// that start from the same value end as the atomics made one after another.
    #[test]
    fn folds_lay_two_runs_updates_as_one_run_after_the_other() {
        let ops = [
            FoldOp::Add,
            FoldOp::UMin,
            FoldOp::UMax,
            FoldOp::SMin,
            FoldOp::SMax,
            FoldOp::And,
            FoldOp::Or,
            FoldOp::Xor,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for size in [2u32, 4, 8] {
            let mask = u64::MAX >> (64 - size * 8);
            for op in ops {
                for _ in 0..200 {
                    // The atomic itself, as messages run it.
                    let atomic = match op {
                        FoldOp::Add => AtomicOp::Add,
                        FoldOp::UMin => AtomicOp::Min,
                        FoldOp::UMax => AtomicOp::Max,
                        FoldOp::SMin => AtomicOp::MinSint,
                        FoldOp::SMax => AtomicOp::MaxSint,
                        FoldOp::And => AtomicOp::And,
                        FoldOp::Or => AtomicOp::Or,
                        FoldOp::Xor => AtomicOp::Xor,
                    };
                    let update =
                        |v: u64, x: u64| super::super::message::apply_atomic(atomic, size * 8, v, x, 0).0;
                    let start = next() & mask;
                    let xs: Vec<u64> = (0..1 + next() % 6).map(|_| next() & mask).collect();
                    let cut = (next() % (xs.len() as u64 + 1)) as usize;
                    let first = xs[..cut].iter().fold(start, |v, &x| update(v, x));
                    let second = xs[cut..].iter().fold(start, |v, &x| update(v, x));
                    let all = xs.iter().fold(start, |v, &x| update(v, x));
                    let fold = Fold { op, size };
                    let n = size as usize;
                    let mut value = first.to_le_bytes()[..n].to_vec();
                    fold.lay(&start.to_le_bytes()[..n], &second.to_le_bytes()[..n], &mut value);
                    assert_eq!(
                        value,
                        all.to_le_bytes()[..n],
                        "{op:?} {size} bytes from {start:#x}: {xs:x?} cut at {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_cores_take_every_group_once_in_chunks_that_shrink_as_they_meet() {
        let claims = Claims::new(3..103, 2);
        let mut taken = vec![0u32; 103];
        let mut chunks = Vec::new();
        // Each of the two workers takes a chunk for every four groups the front takes.
        loop {
            let mut backs = 0;
            for _ in 0..2 {
                if let Some(chunk) = claims.back() {
                    chunks.push(chunk.len());
                    chunk.clone().for_each(|g| taken[g] += 1);
                    backs += 1;
                }
            }
            let mut fronts = 0;
            while fronts < 4 {
                let Some(g) = claims.front() else { break };
                taken[g] += 1;
                fronts += 1;
            }
            if backs == 0 && fronts == 0 {
                break;
            }
        }
        assert!(taken[..3].iter().all(|&n| n == 0) && taken[3..].iter().all(|&n| n == 1), "{taken:?}");
        // An eighth (a quarter shared by two workers) of what is left each time: 12 of 100
        // first, one group at the end.
        assert_eq!(chunks.first(), Some(&12));
        assert!(chunks.windows(2).all(|w| w[1] <= w[0]), "{chunks:?}");
        assert_eq!(chunks.last(), Some(&1));
    }

    #[test]
    fn share_runs_every_group_once_and_returns_the_chunks_in_order() {
        for workers in [1, 3] {
            let claims = Claims::new(0..200, workers);
            let stop = AtomicBool::new(false);
            let mut front = Vec::new();
            let (n, chunks) = share(
                &claims,
                &stop,
                vec![0usize; workers],
                || {
                    while let Some(g) = claims.front() {
                        front.push(g);
                    }
                    front.len()
                },
                |ran: &mut usize, groups| {
                    *ran += 1;
                    Some(groups.clone().collect::<Vec<_>>())
                },
            );
            let mut all: Vec<usize> = front.clone();
            assert_eq!(n, front.len());
            assert!(chunks.windows(2).all(|w| w[0].groups.end == w[1].groups.start));
            for c in &chunks {
                assert_eq!(c.done.as_deref(), Some(&c.groups.clone().collect::<Vec<_>>()[..]));
                all.extend(c.groups.clone());
            }
            assert_eq!(all, (0..200).collect::<Vec<_>>(), "{workers} workers");
        }
    }

    /// A chunk's run notes what it accessed and stops before its next group once told to.
    #[test]
    fn a_chunk_runs_its_groups_unless_told_to_stop() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample-kernels/opencl/collatz/skl.launch.json");
        let launch = crate::launch::raw::load(&path).expect("launch");
        let interp = Interpreter::new(launch.program.clone());
        let (start, base) = (&launch.machine, &launch.scheduler);
        let stop = AtomicBool::new(false);
        let ran = run_chunk(&interp, start, base, 2..4, &stop).expect("runs");
        assert!(ran.steps > 0 && ran.lane_ops > ran.steps, "{} steps", ran.steps);
        assert!(ran.accesses.reads.iter().next().is_some() && !ran.bytes.is_empty());
        // The same groups from the front, in sequence, take as many steps.
        let (mut machine, mut sched) = (start.clone(), base.clone());
        sched.start_group(2);
        let before = sched.steps;
        run_groups(&interp, &mut machine, &mut sched, 4).expect("runs");
        assert_eq!(sched.steps - before, ran.steps);
        stop.store(true, Ordering::Relaxed);
        assert!(run_chunk(&interp, start, base, 2..4, &stop).is_none());
    }

    #[test]
    fn a_worker_stops_at_its_first_failed_chunk_and_all_stop_when_told() {
        let claims = Claims::new(0..100, 1);
        let stop = AtomicBool::new(false);
        // The worker fails its second chunk; the front takes nothing.
        let (_, chunks) = share(
            &claims,
            &stop,
            vec![0],
            || (),
            |n: &mut usize, _| {
                *n += 1;
                (*n < 2).then_some(())
            },
        );
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].done.is_none() && chunks[1].done.is_some());
        // Told to stop before it starts, it takes nothing.
        let claims = Claims::new(0..100, 1);
        stop.store(true, Ordering::Relaxed);
        let (_, chunks) = share(&claims, &stop, vec![()], || (), |_, _| Some(()));
        assert!(chunks.is_empty());
        assert_eq!(claims.front(), Some(0));
    }
}
