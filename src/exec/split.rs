//! Plain runs on several cores. Work-groups run one after another, so a run is a sequence of
//! groups. Cut it into chunks of consecutive groups; each core builds its own start state and
//! runs the chunks it takes, noting the SVM bytes each chunk read and wrote. SLM and registers
//! belong to one group, so memory is the only way groups meet: a chunk ran as the sequence
//! would have run it if it read no byte that an earlier chunk run on another core wrote. When
//! every chunk passes, laying each chunk's written bytes over memory in chunk order gives the
//! memory of the sequential run. Otherwise (or when a chunk faulted or met the step limit)
//! the whole run is made again in sequence.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::schedule::{run_bursts, RunSummary, Scheduler};
use super::step::Interpreter;
use crate::machine::{Accesses, Machine, Ranges};

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
}

/// Runs every group to the end with exactly the memory and step count of [`run_bursts`], the
/// groups shared out over up to `jobs` cores. `load` builds the launch's start state again (it
/// must equal `machine` and `sched` as given): once for each extra core, and once more if the
/// run has to be made again in sequence.
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
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<Option<Chunk>>> = Mutex::new((0..chunks).map(|_| None).collect());
    // Each core takes chunks in increasing order, so it ran every earlier chunk it holds
    // before a later one (the merge relies on it).
    let take_chunks = |core: usize, machine: &mut Machine, sched: &mut Scheduler| {
        while !failed.load(Ordering::Relaxed) {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                break;
            }
            match run_chunk(interp, machine, sched, core, bounds[c], bounds[c + 1]) {
                Some(chunk) => done.lock().unwrap_or_else(|e| e.into_inner())[c] = Some(chunk),
                None => failed.store(true, Ordering::Relaxed),
            }
        }
    };
    std::thread::scope(|s| {
        for core in 1..jobs.get() {
            let (load, take_chunks, failed) = (&load, &take_chunks, &failed);
            s.spawn(move || match load() {
                Some((mut m, mut sc)) => take_chunks(core, &mut m, &mut sc),
                None => failed.store(true, Ordering::Relaxed),
            });
        }
        take_chunks(0, machine, sched);
    });
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    let merged = (!failed.into_inner()).then(|| merge(machine, jobs.get(), done)).flatten();
    match merged {
        Some(summary) => {
            sched.steps = summary.steps;
            sched.current_group = sched.groups.len();
            sched.cursor = 0;
            if sched.step_limit != 0 && sched.steps > sched.step_limit {
                return None;
            }
            Some(summary)
        }
        // Groups met through memory (or a chunk stopped): the sequence itself decides.
        None => {
            (*machine, *sched) = load()?;
            run_bursts(interp, machine, sched)
        }
    }
}

/// Checks the chunks in order and lays their written bytes over `machine`'s memory; None if
/// a chunk is missing or read what an earlier chunk on another core wrote.
fn merge(machine: &mut Machine, cores: usize, done: Vec<Option<Chunk>>) -> Option<RunSummary> {
    // For each core, what chunks so far wrote on the other cores.
    let mut foreign = vec![Ranges::default(); cores];
    let mut summary = RunSummary::default();
    for chunk in done {
        let chunk = chunk?;
        if chunk.reads.intersects(&foreign[chunk.core]) {
            return None;
        }
        for (core, set) in foreign.iter_mut().enumerate() {
            if core != chunk.core {
                set.union(&chunk.writes);
            }
        }
        for (addr, bytes) in &chunk.bytes {
            machine.svm.write(*addr, bytes).ok()?;
        }
        summary.steps += chunk.summary.steps;
        summary.lane_ops += chunk.summary.lane_ops;
    }
    Some(summary)
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
    sched.current_group = lo;
    sched.cursor = sched.groups.get(lo)?.start;
    let steps_before = sched.steps;
    machine.svm.accesses = Some(Box::default());
    let summary = run_bursts(interp, machine, sched);
    let accesses = machine.svm.accesses.take();
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
    Some(Chunk { core, summary, reads, writes, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Svm;

    const BASE: u64 = 0x1_0000;

    fn chunk(core: usize, reads: &[(u64, u64)], writes: &[(u64, u8)]) -> Option<Chunk> {
        let (mut r, mut w) = (Ranges::default(), Ranges::default());
        reads.iter().for_each(|&(a, n)| r.add(BASE + a, n));
        writes.iter().for_each(|&(a, _)| w.add(BASE + a, 1));
        r.normalize();
        w.normalize();
        let bytes = writes.iter().map(|&(a, v)| (BASE + a, vec![v])).collect();
        Some(Chunk { core, summary: RunSummary { steps: 10, lane_ops: 80 }, reads: r, writes: w, bytes })
    }

    fn machine() -> Machine {
        let mut svm = Svm::default();
        svm.map(BASE, 64, "buf");
        Machine { svm, ..Machine::default() }
    }

    fn byte(m: &Machine, a: u64) -> u8 {
        let mut b = [0u8];
        m.svm.read(BASE + a, &mut b).expect("mapped");
        b[0]
    }

    #[test]
    fn chunks_merge_in_order_when_none_read_another_cores_earlier_write() {
        let mut m = machine();
        // Chunk 2 reads what chunk 0 wrote on its own core, and every chunk writes byte 9:
        // the last chunk's byte wins, as in sequence.
        let done = vec![
            chunk(0, &[(0, 4)], &[(8, 1), (9, 1)]),
            chunk(1, &[(0, 4)], &[(16, 2), (9, 2)]),
            chunk(0, &[(8, 1)], &[(24, 3), (9, 3)]),
        ];
        let summary = merge(&mut m, 2, done).expect("no conflict");
        assert_eq!(summary, RunSummary { steps: 30, lane_ops: 240 });
        assert_eq!([byte(&m, 8), byte(&m, 16), byte(&m, 24), byte(&m, 9)], [1, 2, 3, 3]);
    }

    #[test]
    fn a_chunk_that_read_another_cores_earlier_write_refuses_the_merge() {
        // Chunk 1 (core 1) read byte 8, which chunk 0 wrote on core 0.
        let done = vec![chunk(0, &[], &[(8, 1)]), chunk(1, &[(6, 4)], &[(16, 2)])];
        assert_eq!(merge(&mut machine(), 2, done), None);
        // Chunk 2 (core 0) read byte 16, which chunk 1 wrote on core 1 in between.
        let done = vec![chunk(0, &[], &[(8, 1)]), chunk(1, &[], &[(16, 2)]), chunk(0, &[(16, 1)], &[])];
        assert_eq!(merge(&mut machine(), 2, done), None);
        // A later chunk's write does not matter to an earlier chunk's read.
        let done = vec![chunk(0, &[(16, 1)], &[]), chunk(1, &[], &[(16, 2)])];
        assert!(merge(&mut machine(), 2, done).is_some());
        // A chunk that did not finish leaves the run to the sequence.
        assert_eq!(merge(&mut machine(), 2, vec![chunk(0, &[], &[]), None]), None);
    }
}
