//! Plain runs on several cores. Work-groups run one after another, so a run is a sequence of
//! groups. Cut it into chunks of consecutive groups; each core builds its own start state and
//! runs the chunks it takes, noting the SVM bytes each chunk read and wrote. SLM and registers
//! belong to one group, so memory is the only way groups meet: a chunk ran as the sequence
//! would have run it if it read no byte that an earlier chunk run on another core wrote.
//! Chunks are checked in order as they finish. When every chunk passes, laying each chunk's
//! written bytes over memory in chunk order gives the memory of the sequential run. At the
//! first chunk that fails (or faulted, or met the step limit) the cores stop taking chunks,
//! and the sequence goes on from that chunk's first group on a fresh start state that holds
//! the memory of the chunks before it.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::schedule::{run_bursts, RunSummary, Scheduler};
use super::step::Interpreter;
use crate::machine::{Accesses, Machine, OverReads, Ranges};

/// Fewer groups than this per chunk are not worth a second start state.
const MIN_GROUPS_PER_CHUNK: usize = 4;
/// Chunks per core: enough that cores finish close together although one started late.
const CHUNKS_PER_JOB: usize = 16;

/// One chunk's run, as the core that ran it saw it.
struct Chunk {
    core: usize,
    summary: RunSummary,
    reads: Ranges,
    writes: Ranges,
    /// The bytes of `writes` when the chunk ended.
    bytes: Vec<(u64, Vec<u8>)>,
    /// Its reads past buffers' ends.
    over_reads: OverReads,
}

/// A chunk's state as the cores report it.
enum Slot {
    Pending,
    Ran(Chunk),
    /// Faulted or met the step limit on its core.
    Stopped,
}

/// The chunks as they finish, and how far they have been checked.
struct Progress {
    slots: Vec<Slot>,
    /// The written bytes of the chunks that passed, `[0, passed.len())`, in order.
    passed: Vec<Vec<(u64, Vec<u8>)>>,
    summary: RunSummary,
    /// The passed chunks' reads past buffers' ends.
    over_reads: OverReads,
    /// For each core, what the passed chunks wrote on the other cores.
    foreign: Vec<Ranges>,
    /// The first chunk that did not pass.
    failed_at: Option<usize>,
}

impl Progress {
    fn new(chunks: usize, cores: usize) -> Progress {
        Progress {
            slots: (0..chunks).map(|_| Slot::Pending).collect(),
            passed: Vec::new(),
            summary: RunSummary::default(),
            over_reads: OverReads::default(),
            foreign: vec![Ranges::default(); cores],
            failed_at: None,
        }
    }

    /// Checks the finished chunks that follow the passed ones; false once one failed.
    fn advance(&mut self) -> bool {
        while self.failed_at.is_none() && self.passed.len() < self.slots.len() {
            let c = self.passed.len();
            // Taken out of its slot: a passed chunk keeps only its bytes.
            match std::mem::replace(&mut self.slots[c], Slot::Pending) {
                Slot::Pending => break,
                Slot::Ran(chunk) if !chunk.reads.intersects(&self.foreign[chunk.core]) => {
                    for (core, set) in self.foreign.iter_mut().enumerate() {
                        if core != chunk.core {
                            set.union(&chunk.writes);
                        }
                    }
                    self.summary.steps += chunk.summary.steps;
                    self.summary.lane_ops += chunk.summary.lane_ops;
                    self.over_reads.add(&chunk.over_reads);
                    self.passed.push(chunk.bytes);
                }
                Slot::Ran(_) | Slot::Stopped => self.failed_at = Some(c),
            }
        }
        self.failed_at.is_none()
    }

    /// Lays the passed chunks' written bytes over `machine`'s memory, in chunk order.
    fn apply(&self, machine: &mut Machine) -> Option<()> {
        for (addr, bytes) in self.passed.iter().flatten() {
            machine.svm.write(*addr, bytes).ok()?;
        }
        machine.svm.over_reads.add(&self.over_reads);
        Some(())
    }
}

/// Runs every group to the end with exactly the memory and step count of [`run_bursts`], the
/// groups shared out over up to `jobs` cores. `load` builds the launch's start state again (it
/// must equal `machine` and `sched` as given): once for each extra core, and once more if the
/// sequence has to go on from a chunk that did not pass.
///
/// When it returns, only memory, the step count and the summary are the run's: threads run on
/// other cores keep their start state in `machine`. `None` as for [`run_bursts`]: a fault or
/// the step limit, to be reported by an exact rerun from the start.
pub fn run_split<L>(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    jobs: NonZeroUsize,
    load: L,
) -> Option<RunSummary>
where
    L: Fn() -> Option<(Machine, Scheduler)> + Sync,
{
    let n = sched.groups.len().saturating_sub(sched.current_group);
    let chunks = (jobs.get() * CHUNKS_PER_JOB).min(n / MIN_GROUPS_PER_CHUNK);
    run_split_chunks(interp, machine, sched, jobs, chunks, load)
}

/// [`run_split`] with the groups cut into `chunks` chunks (at most one per group).
pub fn run_split_chunks<L>(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    jobs: NonZeroUsize,
    chunks: usize,
    load: L,
) -> Option<RunSummary>
where
    L: Fn() -> Option<(Machine, Scheduler)> + Sync,
{
    let first = sched.current_group;
    let n = sched.groups.len().saturating_sub(first);
    let chunks = chunks.min(n);
    if jobs.get() < 2 || chunks < 2 {
        return run_bursts(interp, machine, sched);
    }
    let bounds: Vec<usize> = (0..=chunks).map(|c| first + n * c / chunks).collect();
    let steps_before = sched.steps;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let progress = Mutex::new(Progress::new(chunks, jobs.get()));
    // Each core takes chunks in increasing order, so it ran every earlier chunk it holds
    // before a later one (the check relies on it).
    let take_chunks = |core: usize, machine: &mut Machine, sched: &mut Scheduler| {
        while !stop.load(Ordering::Relaxed) {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                break;
            }
            let slot = match run_chunk(interp, machine, sched, core, bounds[c], bounds[c + 1]) {
                Some(chunk) => Slot::Ran(chunk),
                None => Slot::Stopped,
            };
            let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
            p.slots[c] = slot;
            if !p.advance() {
                stop.store(true, Ordering::Relaxed);
            }
        }
    };
    std::thread::scope(|s| {
        for core in 1..jobs.get() {
            let (load, take_chunks) = (&load, &take_chunks);
            // A core that cannot build its start state takes no chunks.
            s.spawn(move || load().map(|(mut m, mut sc)| take_chunks(core, &mut m, &mut sc)));
        }
        take_chunks(0, machine, sched);
    });
    let progress = progress.into_inner().unwrap_or_else(|e| e.into_inner());
    match progress.failed_at {
        None => {
            progress.apply(machine)?;
            sched.steps = steps_before + progress.summary.steps;
            sched.start_group(sched.groups.len());
            if sched.step_limit != 0 && sched.steps > sched.step_limit {
                return None;
            }
            Some(RunSummary { steps: sched.steps, lane_ops: progress.summary.lane_ops })
        }
        // The sequence goes on from chunk `c`, with the memory of the chunks before it.
        Some(c) => {
            (*machine, *sched) = load()?;
            progress.apply(machine)?;
            sched.steps = steps_before + progress.summary.steps;
            sched.start_group(bounds[c]);
            let rest = run_bursts(interp, machine, sched)?;
            Some(RunSummary { steps: rest.steps, lane_ops: progress.summary.lane_ops + rest.lane_ops })
        }
    }
}

/// Runs groups `[lo, hi)` on `machine`, noting what they read and wrote.
fn run_chunk(
    interp: &Interpreter,
    machine: &mut Machine,
    sched: &mut Scheduler,
    core: usize,
    lo: usize,
    hi: usize,
) -> Option<Chunk> {
    let rest = sched.groups.split_off(hi);
    sched.start_group(lo);
    let steps_before = sched.steps;
    machine.svm.accesses = Some(Box::default());
    let over_before = std::mem::take(&mut machine.svm.over_reads);
    let summary = run_bursts(interp, machine, sched);
    let accesses = machine.svm.accesses.take();
    let over_reads = std::mem::replace(&mut machine.svm.over_reads, over_before);
    sched.groups.extend(rest);
    let summary = summary?;
    let summary = RunSummary { steps: summary.steps - steps_before, lane_ops: summary.lane_ops };
    let Accesses { mut reads, mut writes } = *accesses?;
    reads.normalize();
    writes.normalize();
    let mut bytes = Vec::new();
    for (start, end) in writes.iter() {
        let mut buf = vec![0u8; (end - start) as usize];
        machine.svm.read(start, &mut buf).ok()?;
        bytes.push((start, buf));
    }
    Some(Chunk { core, summary, reads, writes, bytes, over_reads })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Svm;

    const BASE: u64 = 0x1_0000;

    fn ran(core: usize, reads: &[(u64, u64)], writes: &[(u64, u8)]) -> Slot {
        let (mut r, mut w) = (Ranges::default(), Ranges::default());
        reads.iter().for_each(|&(a, n)| r.add(BASE + a, n));
        writes.iter().for_each(|&(a, _)| w.add(BASE + a, 1));
        r.normalize();
        w.normalize();
        let bytes = writes.iter().map(|&(a, v)| (BASE + a, vec![v])).collect();
        let summary = RunSummary { steps: 10, lane_ops: 80 };
        Slot::Ran(Chunk { core, summary, reads: r, writes: w, bytes, over_reads: OverReads::default() })
    }

    /// Reports `slots` one at a time in the order given by `order`; the first failed chunk.
    fn check(slots: Vec<Slot>, order: &[usize]) -> (Progress, Option<usize>) {
        let mut p = Progress::new(slots.len(), 2);
        let mut slots: Vec<Option<Slot>> = slots.into_iter().map(Some).collect();
        for &c in order {
            p.slots[c] = slots[c].take().expect("reported once");
            p.advance();
        }
        let failed = p.failed_at;
        (p, failed)
    }

    fn byte(m: &Machine, a: u64) -> u8 {
        let mut b = [0u8];
        m.svm.read(BASE + a, &mut b).expect("mapped");
        b[0]
    }

    #[test]
    fn chunks_pass_in_order_when_none_read_another_cores_earlier_write() {
        // Chunk 2 reads what chunk 0 wrote on its own core, and every chunk writes byte 9:
        // the last chunk's byte wins, as in sequence. Chunks finish out of order.
        let slots = vec![
            ran(0, &[(0, 4)], &[(8, 1), (9, 1)]),
            ran(1, &[(0, 4)], &[(16, 2), (9, 2)]),
            ran(0, &[(8, 1)], &[(24, 3), (9, 3)]),
        ];
        let (p, failed) = check(slots, &[2, 0, 1]);
        assert_eq!(failed, None);
        assert_eq!((p.passed.len(), p.summary.clone()), (3, RunSummary { steps: 30, lane_ops: 240 }));
        let mut svm = Svm::default();
        svm.map(BASE, 64, "buf");
        let mut m = Machine { svm, ..Machine::default() };
        p.apply(&mut m).expect("mapped");
        assert_eq!([byte(&m, 8), byte(&m, 16), byte(&m, 24), byte(&m, 9)], [1, 2, 3, 3]);
    }

    #[test]
    fn the_first_chunk_that_read_another_cores_earlier_write_fails() {
        // Chunk 1 (core 1) read byte 8, which chunk 0 wrote on core 0.
        let (p, failed) = check(vec![ran(0, &[], &[(8, 1)]), ran(1, &[(6, 4)], &[(16, 2)])], &[1, 0]);
        assert_eq!((failed, p.passed.len()), (Some(1), 1));
        // Chunk 2 (core 0) read byte 16, which chunk 1 wrote on core 1 in between.
        let slots =
            vec![ran(0, &[], &[(8, 1)]), ran(1, &[], &[(16, 2)]), ran(0, &[(16, 1)], &[]), ran(1, &[], &[])];
        assert_eq!(check(slots, &[0, 1, 2, 3]).1, Some(2));
        // A later chunk's write does not matter to an earlier chunk's read.
        assert_eq!(check(vec![ran(0, &[(16, 1)], &[]), ran(1, &[], &[(16, 2)])], &[1, 0]).1, None);
        // A chunk that stopped fails; one still pending is not checked yet.
        assert_eq!(check(vec![ran(0, &[], &[]), Slot::Stopped], &[0, 1]).1, Some(1));
        let (p, failed) = check(vec![Slot::Pending, ran(1, &[(8, 1)], &[])], &[1]);
        assert_eq!((failed, p.passed.len()), (None, 0));
    }
}
