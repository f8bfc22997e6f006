//! Recording on N cores by work-groups: the first core records the groups not yet started
//! from the front, one at a time, as it always does, while the other cores (workers) record
//! chunks of them from the back, each from a copy of the machine into a recording of its
//! own; they meet where the faster have taken more. Groups run one after another, so the run is the
//! first core's steps followed by the chunks' in group order, provided each chunk read no
//! SVM byte the groups before it wrote after the copy was taken, and wrote none of those
//! bytes either (so that the old bytes in its log are right): both cores note the bytes
//! they access, and the check is made when both are done. Registers and SLM belong to one
//! group. The chunks that pass, in group order, join the first recording without copying
//! ([`Recorder::join`]), their checkpoints rebased onto the recording's end so far
//! ([`Rebase`]); from the first chunk that fails or is missing (or after the first core
//! stops early: a fault, the recording budget, an interrupt) the workers' later work is
//! dropped and the first core goes on through the later groups itself, so what is recorded
//! is the same either way.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::frontier::{size_window, Pause, Sink};
use super::{EndState, Session, StopReason};
use crate::exec::{Interpreter, Scheduler};
use crate::machine::{Accesses, Machine, Ranges};
use crate::trace::{record_step, record_window, Batch, Probe, Rebase, Recorder, Single, Window, MAX_STEPS};

/// Fewer work-groups than this not yet started: not worth other cores.
const MIN_SPLIT_GROUPS: usize = 8;

/// Each worker takes this fraction of the groups left, divided by the number of workers,
/// per chunk (at least one group): large chunks while the cores are far apart, small ones
/// as they meet, so that none waits long for the others whichever runs faster.
const CHUNK_SHARE: usize = 4;

/// The work-groups no core has taken yet: the first core takes from the front, the workers
/// from the back.
pub(super) struct Claims {
    left: Mutex<Range<usize>>,
    /// Every group's threads (the scheduler's list before it was cut).
    groups: Vec<Range<u32>>,
    /// The recording budget the cores share: the whole run's, the first core's bytes
    /// (everything recorded before the split too) and each worker's, each published as the
    /// core sizes a window. Each core may use what the others have not (a fixed share each
    /// sent a core step by step while another had room: 0.5 s against 0.3 s for Collatz
    /// under a budget 15% above what it needs).
    limit: u64,
    first_bytes: AtomicU64,
    worker_bytes: Vec<AtomicU64>,
}

impl Claims {
    /// The first core's budget, now that it has recorded `bytes` in all.
    pub(super) fn first_budget(&self, bytes: u64) -> u64 {
        self.first_bytes.store(bytes, Ordering::Relaxed);
        self.limit.saturating_sub(self.others(None))
    }

    /// Worker `w`'s budget for a chunk's own bytes, its earlier chunks having taken `done`
    /// and the current one `bytes` so far.
    fn worker_budget(&self, w: usize, done: u64, bytes: u64) -> u64 {
        self.worker_bytes[w].store(done + bytes, Ordering::Relaxed);
        self.limit.saturating_sub(self.first_bytes.load(Ordering::Relaxed) + self.others(Some(w)) + done)
    }

    /// The bytes the workers other than `but` have published.
    fn others(&self, but: Option<usize>) -> u64 {
        let bytes = self.worker_bytes.iter().enumerate().filter(|&(w, _)| Some(w) != but);
        bytes.map(|(_, b)| b.load(Ordering::Relaxed)).sum()
    }

    /// The next group from the front, with its threads.
    pub(super) fn front(&self) -> Option<(usize, Range<u32>)> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let group = left.start;
        (group < left.end).then(|| {
            left.start += 1;
            (group, self.groups[group].clone())
        })
    }

    /// The next chunk from the back.
    fn back(&self) -> Option<Range<usize>> {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let share = CHUNK_SHARE * self.worker_bytes.len().max(1);
        let n = (left.len() / share).max(1).min(left.len());
        (n > 0).then(|| {
            left.end -= n;
            left.end..left.end + n
        })
    }
}

/// What a worker recorded of a chunk (its end state is its last checkpoint): the
/// recording, how many steps it holds, and the bytes it accessed.
struct Later {
    recorder: Recorder,
    steps: u64,
    window_steps: u64,
    accesses: Accesses,
    /// With a probe: the steps it held before and the steps it tested (its windows), both
    /// numbered from the chunk's first step.
    hits: Vec<u64>,
    probed: Vec<(u64, u64)>,
}

/// A chunk of groups a worker took, and its recording (None when it could not record
/// it all).
type Chunk = (Range<usize>, Option<Later>);

impl Session {
    /// The first work-group not yet started, when recording on several cores by groups may
    /// be tried from it.
    pub(super) fn split_point(&self) -> Option<usize> {
        if self.cores < 2 || !self.split_groups || self.split_tried {
            return None;
        }
        let groups = &self.sched.groups;
        let first = self.sched.current_group + 1;
        let at = groups.get(first)?.start;
        // The later groups' threads must follow the earlier groups' in group order (as
        // launches lay them out), for a rebased machine takes the threads below its chunk's
        // first from the recording's end.
        let ordered = groups[..first].iter().all(|g| g.end <= at)
            && groups[first..].windows(2).all(|w| w[0].end <= w[1].start);
        (groups.len() - first >= MIN_SPLIT_GROUPS && ordered).then_some(first)
    }

    /// Records from the frontier with groups from `first` on shared out with the other cores
    /// (see the module's text). Returns as [`Session::record_windows`] does.
    pub(super) fn record_split(&mut self, count: &mut u64, first: usize) -> Option<StopReason> {
        self.split_tried = true;
        let start = self.machine.clone();
        let interp = self.interp.clone();
        let (grf_size, interval) = (self.program.grf_size, self.recorder.checkpoints.interval);
        // The cores share the budget left (`Claims::first_budget`, `worker_budget`).
        let claims = Claims {
            left: Mutex::new(first..self.sched.groups.len()),
            groups: self.sched.groups.clone(),
            limit: self.record_limit,
            first_bytes: AtomicU64::new(self.recorder.recorded_bytes()),
            worker_bytes: (1..self.cores).map(|_| AtomicU64::new(0)).collect(),
        };
        let base = self.sched.clone();
        self.sched.groups.truncate(first);
        self.machine.svm.accesses = Some(Box::default());
        let stop = AtomicBool::new(false);
        // A `continue`'s breakpoints are tested on every core as it records.
        let probes: Vec<_> =
            (1..self.cores).map(|_| self.probe.as_ref().and_then(|_| self.breakpoint_probe())).collect();
        let mut trace = std::mem::take(&mut self.recorder.trace);
        let (pause, chunks) = std::thread::scope(|scope| {
            let (claims, stop, interp, start, base) = (&claims, &stop, &interp, &start, &base);
            let workers: Vec<_> = probes
                .into_iter()
                .enumerate()
                .map(|(id, probe)| {
                    let batch = Batch::default();
                    let mut worker =
                        Worker { id, interp, start, base, grf_size, interval, stop, batch, probe };
                    scope.spawn(move || worker.run(claims))
                })
                .collect();
            let pause = self.record_frontier(&mut Sink::Here(&mut trace), count, Some(claims));
            if !matches!(pause, Pause::GroupsDone) {
                stop.store(true, Ordering::Relaxed);
            }
            let mut chunks = Vec::new();
            for worker in workers {
                match worker.join() {
                    Ok(mut done) => chunks.append(&mut done),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            (pause, chunks)
        });
        self.recorder.trace = trace;
        let accesses = self.machine.svm.accesses.take();
        // Where this core stopped taking groups: the first chunk's start, when it took all
        // the groups before the chunks.
        let resume = self.sched.groups.len();
        self.sched.groups = claims.groups;
        if let (Pause::GroupsDone, Some(earlier)) = (&pause, accesses) {
            let next = self.join_chunks(chunks, &start, earlier.writes, resume);
            if next == self.sched.groups.len() {
                // With its end checkpoint (one a chunk took there already, when one joined).
                self.mark_end(EndState::Finished, self.now);
            }
            // This core goes on from the first group no chunk joined with (at the end, past
            // the last group: the run is finished).
            self.sched.start_group(next);
            return None;
        }
        match pause {
            Pause::GroupsDone | Pause::Stepwise => None,
            Pause::Interrupted => {
                // Nothing failed: a later `continue` may try again.
                self.split_tried = false;
                Some(StopReason::Interrupted)
            }
            Pause::Faulted => {
                self.recorder.restore(&mut self.machine, self.now);
                None
            }
        }
    }

    /// Joins the workers' chunks after this core's recording, in group order, as long as
    /// each ran as it would have after the groups before it ([`runs_after`]) and the
    /// steps fit the index and the step limit. `written`: what this core wrote; `next`: the
    /// first group it did not record. Returns the first group no chunk joined with.
    fn join_chunks(
        &mut self,
        mut chunks: Vec<Chunk>,
        start: &Machine,
        mut written: Ranges,
        mut next: usize,
    ) -> usize {
        chunks.sort_unstable_by_key(|(groups, _)| groups.start);
        written.normalize();
        for (groups, later) in chunks {
            let Some(later) = later else { break };
            let limit = self.sched.step_limit;
            let fits = groups.start == next
                && runs_after(&written, &later.accesses)
                && self.recorder.len() + later.recorder.len() < MAX_STEPS
                && (limit == 0 || self.sched.steps + later.steps <= limit);
            if !fits {
                break;
            }
            written.union(&later.accesses.writes);
            let base = self.recorder.len();
            self.probe_hits.extend(later.hits.iter().map(|h| base + h));
            self.probed.extend(later.probed.iter().map(|&(a, b)| (base + a, base + b)));
            let first_thread = self.sched.groups[groups.start].start as usize;
            let end = std::mem::take(&mut self.machine);
            let mut rebase = Rebase::new(start, &end, first_thread, groups.start);
            self.recorder.join(later.recorder, &mut rebase);
            // The chunk's end is its last checkpoint.
            self.machine =
                self.recorder.checkpoints.list.last().map(|c| c.machine.clone()).unwrap_or_default();
            self.sched.steps += later.steps;
            self.now = self.recorder.len();
            self.window_steps += later.window_steps;
            next = groups.end;
        }
        next
    }
}

/// Whether steps that made the accesses `later` read the memory they would have read after
/// steps that wrote `written` (normalized), and left their log's old bytes right: they read
/// and wrote no byte of it (atomics note both).
fn runs_after(written: &Ranges, later: &Accesses) -> bool {
    let (mut reads, mut writes) = (later.reads.clone(), later.writes.clone());
    reads.normalize();
    writes.normalize();
    !reads.intersects(written) && !writes.intersects(written)
}

/// What a worker records chunks with: its number, the machine and scheduler it starts each
/// from, and staging buffers grown once for all of them.
struct Worker<'a> {
    id: usize,
    interp: &'a Interpreter,
    start: &'a Machine,
    base: &'a Scheduler,
    grf_size: u32,
    interval: u64,
    stop: &'a AtomicBool,
    batch: Batch,
    /// A `continue`'s breakpoints, tested as the chunks are recorded.
    probe: Option<Probe<'static>>,
}

impl Worker<'_> {
    /// Takes chunks from the back and records them until none is left, one fails or the
    /// first core stops early.
    fn run(&mut self, claims: &Claims) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut done = 0;
        while !self.stop.load(Ordering::Relaxed) {
            let Some(groups) = claims.back() else { break };
            let later = self.record(groups.clone(), claims, done);
            let recorded = later.as_ref().map(|l| l.recorder.recorded_bytes());
            chunks.push((groups, later));
            match recorded {
                Some(bytes) => done += bytes,
                None => break,
            }
        }
        chunks
    }

    /// The recording of work-groups `groups`, from a copy of the start, in windows as the
    /// first core records them, within the budget the cores share (`claims`; its earlier
    /// chunks took `done` bytes). None when it could not record them all (a fault, the
    /// budget, the index's step range) or was told to stop.
    fn record(&mut self, groups: Range<usize>, claims: &Claims, done: u64) -> Option<Later> {
        let (interp, batch) = (self.interp, &mut self.batch);
        let mut machine = self.start.clone();
        let mut sched = self.base.clone();
        sched.groups.truncate(groups.end);
        sched.start_group(groups.start);
        machine.svm.accesses = Some(Box::default());
        let steps_before = sched.steps;
        let mut recorder = Recorder::new(&machine, &sched, self.grf_size);
        recorder.checkpoints.interval = self.interval;
        let mut window_steps = 0;
        let (mut hits, mut probed) = (Vec::new(), Vec::new());
        while !self.stop.load(Ordering::Relaxed) {
            let time = recorder.len();
            let Recorder { trace, checkpoints } = &mut recorder;
            let budget = claims.worker_budget(self.id, done, trace.bytes() + checkpoints.bytes());
            let size = size_window(&machine, &sched, checkpoints, time, trace.bytes(), budget);
            if !size.fits {
                return None;
            }
            batch.from = checkpoints.at(time);
            match record_window(interp, &mut machine, &mut sched, size.rounds, batch, self.probe.as_mut()) {
                Window::Recorded(n) => {
                    window_steps += n;
                    trace.append_batch(batch);
                    if let Some(p) = self.probe.as_mut() {
                        hits.extend(p.hits.drain(..).map(|offset| time + offset));
                        probed.push((time, time + n));
                    }
                    continue;
                }
                Window::Boundary => {}
                Window::Failed => return None,
            }
            match record_step(interp, &mut machine, &mut sched, checkpoints, time, batch) {
                Single::Recorded(None) => trace.append_batch(batch),
                Single::Finished => {
                    checkpoints.take_at_end(&machine, &sched, time);
                    let accesses = *machine.svm.accesses.take()?;
                    let steps = sched.steps - steps_before;
                    return Some(Later { recorder, steps, window_steps, accesses, hits, probed });
                }
                Single::Recorded(Some(_)) | Single::Stopped(_) => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accesses(reads: &[(u64, u64)], writes: &[(u64, u64)]) -> Accesses {
        let mut a = Accesses::default();
        reads.iter().for_each(|&(at, n)| a.reads.add(at, n));
        writes.iter().for_each(|&(at, n)| a.writes.add(at, n));
        a
    }

    #[test]
    fn later_groups_fit_when_they_touch_nothing_the_earlier_ones_wrote() {
        // Earlier groups wrote [0x100, 0x140) and [0x400, 0x404), noted out of order.
        let earlier = || {
            let mut written = accesses(&[(0x1000, 64)], &[(0x400, 4), (0x100, 64)]).writes;
            written.normalize();
            written
        };
        // Reading what the earlier groups only read, writing elsewhere: fits.
        assert!(runs_after(&earlier(), &accesses(&[(0x1000, 64), (0x140, 16)], &[(0x200, 64), (0x404, 4)])));
        // Reading one byte the earlier groups wrote: the later groups saw other memory.
        assert!(!runs_after(&earlier(), &accesses(&[(0x800, 4), (0x13f, 1)], &[])));
        // Writing one: their log's old bytes would be the start's, not the earlier groups'.
        assert!(!runs_after(&earlier(), &accesses(&[], &[(0x3fd, 4)])));
    }

    #[test]
    fn the_cores_take_every_group_once_in_chunks_that_shrink_as_they_meet() {
        let claims = Claims {
            left: Mutex::new(3..103),
            groups: (0..103).map(|g| g * 4..g * 4 + 4).collect(),
            limit: 1000,
            first_bytes: AtomicU64::new(100),
            worker_bytes: (0..2).map(|_| AtomicU64::new(0)).collect(),
        };
        // Each core's budget is what the others have not used.
        assert_eq!(claims.worker_budget(0, 50, 20), 850);
        assert_eq!(claims.worker_budget(1, 0, 30), 830);
        assert_eq!(claims.first_budget(300), 900);
        assert_eq!(claims.worker_budget(0, 50, 40), 620);
        let mut taken = vec![0u32; 103];
        let mut chunks = Vec::new();
        // Each of the two workers takes a chunk for every four groups the first core takes.
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
                let Some((g, threads)) = claims.front() else { break };
                assert_eq!(threads, g as u32 * 4..g as u32 * 4 + 4);
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
}
