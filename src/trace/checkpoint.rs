//! Checkpoints: the machine at a recorded time, from which the steps after it can be run
//! again or a seek starts.
//!
//! A key checkpoint is a clone of the live machine: it shares every thread and page with it,
//! and the live machine copies a thread on its first write after that: with a key at every
//! checkpoint, every thread that runs is copied whole at every checkpoint, into fresh pages
//! (`docs/design-history.md`, session 41). Between keys, a checkpoint is a delta: the live machine's memory
//! and SLMs as a clone shares them, the key's threads, and a [`ThreadPatch`] for every thread
//! the live machine copied since the key, holding only the 64-byte units of its registers that
//! differ from the key's. The live threads then stay the live machine's own until the next key.
//! A delta that would cost more than a key is not taken (`Checkpoint::delta`): then the
//! checkpoint is a key, and the next deltas start from it.

use std::sync::Arc;

use crate::exec::SchedPos;
use crate::machine::{Control, Machine, Shared, ThreadState};

/// Bytes of a patch's register unit.
const UNIT: usize = 64;

/// A checkpoint in `KEY_EVERY` is a key.
pub(super) const KEY_EVERY: u32 = 16;

/// Register bytes of the threads changed since the key above which a checkpoint is a key:
/// many short threads (each running once, then done) make deltas that compare and hold more
/// than the copies a key lets the live machine make.
const DELTA_LIMIT: usize = 1 << 20;

/// The machine at a recorded time, and where the scheduler stood: the steps after it can be
/// run again from there.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub time: u64,
    /// The machine at `time`, but for the threads `patch` brings there from a key's.
    pub(super) base: Machine,
    pub(super) patch: Arc<[ThreadPatch]>,
    pub sched: SchedPos,
}

impl Checkpoint {
    /// A key checkpoint of `machine` (a clone: it shares every thread and page).
    pub(super) fn key(time: u64, machine: &Machine, sched: SchedPos) -> Checkpoint {
        Checkpoint { time, base: machine.clone(), patch: Arc::new([]), sched }
    }

    /// A checkpoint of `machine` at `time` as a delta from `key` (an earlier key checkpoint
    /// of the same run), the bytes its patches hold and the register bytes of the threads
    /// changed since `key`; None when a key costs less: those threads hold more than
    /// [`DELTA_LIMIT`] bytes of registers (each delta compares them all), the patches would
    /// hold more than `limit` (default: three quarters of those bytes), or the table or a
    /// thread's files are not the key's size.
    pub(super) fn delta(
        time: u64,
        machine: &Machine,
        sched: SchedPos,
        key: &Checkpoint,
        limit: Option<u64>,
    ) -> Option<(Checkpoint, u64, u64)> {
        if machine.threads.len() != key.base.threads.len() {
            return None;
        }
        let (changed, _) = machine.threads.unshared_with(&key.base.threads);
        let full = changed.iter().map(|(_, t)| t.grf.len()).sum::<usize>();
        if full > DELTA_LIMIT {
            return None;
        }
        // A thread of a chunk the key had not built is in its start state there: `get`
        // builds it to compare with.
        let mut patch = Vec::with_capacity(changed.len());
        for (i, live) in changed {
            let old = key.base.threads.get(i).filter(|k| {
                (k.grf.len(), k.preds.len(), k.addrs.len())
                    == (live.grf.len(), live.preds.len(), live.addrs.len())
            })?;
            patch.extend(ThreadPatch::new(i, live, old));
        }
        let bytes = patch.iter().map(ThreadPatch::bytes).sum();
        // Threads whose registers change all over (tiles loaded anew) make deltas as large
        // as the copies a key costs.
        if bytes > limit.unwrap_or(full as u64 * 3 / 4) {
            return None;
        }
        let mut base = machine.clone();
        base.threads = key.base.threads.clone();
        Some((Checkpoint { time, base, patch: patch.into(), sched }, bytes, full as u64))
    }

    /// The machine at the checkpoint's time (sharing every thread and page it can with the
    /// checkpoint and its key).
    pub fn machine(&self) -> Machine {
        let mut machine = self.base.clone();
        for p in self.patch.iter() {
            p.apply(&mut machine);
        }
        machine
    }

    /// Whether this is a key checkpoint (its own threads, no patch).
    pub fn is_key(&self) -> bool {
        self.patch.is_empty()
    }

    /// This checkpoint `offset` steps later, its machine (the key's threads, for a delta)
    /// made by `rebase`; its patches stay, which is right when `rebase` keeps the threads
    /// they patch (a second core's own, `Recorder::join`: it patches no other, as those
    /// never differ from its key).
    pub(super) fn rebased(self, offset: u64, rebase: impl FnOnce(Machine) -> Machine) -> Checkpoint {
        Checkpoint { time: self.time + offset, base: rebase(self.base), ..self }
    }
}

/// Whether two units are equal: whole units as eight words each, compared inline (not a
/// `memcmp` call per unit), a short last one as slices.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    match (<&[u8; UNIT]>::try_from(a), <&[u8; UNIT]>::try_from(b)) {
        (Ok(a), Ok(b)) => {
            let word = |x: &[u8; UNIT], i: usize| {
                u64::from_le_bytes(x[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]))
            };
            (0..UNIT / 8).fold(0, |acc, i| acc | (word(a, i) ^ word(b, i))) == 0
        }
        _ => a == b,
    }
}

/// One thread at a delta checkpoint: its control state, predicates and address registers,
/// and the register units that differ from its key's.
#[derive(Clone, Debug)]
pub(super) struct ThreadPatch {
    thread: u32,
    control: Box<Control>,
    preds: Box<[u32]>,
    addrs: Box<[u32]>,
    /// Runs of differing units: their GRF offset and length, their bytes in `bytes`.
    runs: Box<[(u32, u32)]>,
    bytes: Box<[u8]>,
}

impl ThreadPatch {
    /// The patch that brings thread `thread` from `key` (its files of `live`'s sizes) to
    /// `live`; None if they agree.
    fn new(thread: usize, live: &ThreadState, key: &ThreadState) -> Option<ThreadPatch> {
        let (mut runs, mut bytes) = (Vec::<(u32, u32)>::new(), Vec::new());
        for (u, (new, old)) in live.grf.chunks(UNIT).zip(key.grf.chunks(UNIT)).enumerate() {
            if same(new, old) {
                continue;
            }
            let at = (u * UNIT) as u32;
            match runs.last_mut() {
                Some((start, len)) if *start + *len == at => *len += new.len() as u32,
                _ => runs.push((at, new.len() as u32)),
            }
            bytes.extend_from_slice(new);
        }
        if runs.is_empty()
            && live.control == key.control
            && live.preds == key.preds
            && live.addrs == key.addrs
        {
            return None;
        }
        Some(ThreadPatch {
            thread: thread as u32,
            control: Box::new(live.control.clone()),
            preds: live.preds.as_slice().into(),
            addrs: live.addrs.as_slice().into(),
            runs: runs.into(),
            bytes: bytes.into(),
        })
    }

    /// Brings the thread of `machine` (the key's) to the patch's state.
    fn apply(&self, machine: &mut Machine) {
        let Some(slot) = machine.threads.get_mut(self.thread as usize) else { return };
        let t = Shared::make_mut(slot);
        t.control.clone_from(&self.control);
        t.preds.copy_from_slice(&self.preds);
        t.addrs.copy_from_slice(&self.addrs);
        let mut from = 0;
        for &(at, len) in self.runs.iter() {
            let (at, len) = (at as usize, len as usize);
            t.grf[at..at + len].copy_from_slice(&self.bytes[from..from + len]);
            from += len;
        }
    }

    /// Bytes it holds.
    fn bytes(&self) -> u64 {
        (std::mem::size_of::<ThreadPatch>()
            + std::mem::size_of::<Control>()
            + self.bytes.len()
            + 8 * self.runs.len()
            + 4 * (self.preds.len() + self.addrs.len())) as u64
            + self.control.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{ThreadId, ThreadStatus, WaitList};
    use crate::trace::Checkpoints;

    /// `n` threads of 4 KiB of registers.
    fn machine(n: usize) -> Machine {
        let thread = ThreadState {
            grf: vec![0; 4096],
            preds: vec![0; 2],
            addrs: vec![0; 1],
            control: Control {
                pc: crate::isa::InstIdx(0),
                em: 0xffff,
                call_mask: 0xffff,
                waiting: WaitList::default(),
                stack: Vec::new(),
                status: ThreadStatus::Running,
            },
            dispatch_mask: 0xffff,
            simd: 16,
            group: 0,
            index_in_group: 0,
        };
        Machine { threads: (0..n).map(|_| Shared::new(thread.clone())).collect(), ..Machine::default() }
    }

    /// Writes `units` 64-byte units of each of `threads`, and moves their pc.
    fn run(m: &mut Machine, threads: std::ops::Range<u32>, units: usize, round: u8) {
        for t in threads {
            let thread = m.thread_mut(ThreadId(t));
            for u in 0..units {
                thread.grf[u * UNIT + 3] = round;
            }
            thread.control.pc.0 += 1;
        }
    }

    /// Checkpoints of a machine whose 16 threads run in turns of four, each turn writing
    /// `units` units of its threads: deltas while they hold no more than a turn's copies
    /// cost a key, then a key; every checkpoint gives back the machine it was taken of.
    fn record(units: usize) -> (Checkpoints, Vec<u64>, Vec<u64>) {
        let mut m = machine(16);
        let mut cks = Checkpoints::default();
        (cks.interval, cks.deltas) = (1, true);
        let (mut hashes, mut held) = (Vec::new(), Vec::new());
        for time in 0..24u64 {
            if time > 0 {
                let turn = ((time - 1) % 4) as u32;
                run(&mut m, 4 * turn..4 * turn + 4, units, time as u8);
            }
            cks.take(&m, crate::exec::SchedPos::default(), time);
            hashes.push(m.state_hash());
            held.push(cks.bytes());
        }
        (cks, hashes, held)
    }

    #[test]
    fn deltas_hold_what_changed_until_a_key_costs_less() {
        for units in [2, 40, 64] {
            let (cks, hashes, held) = record(units);
            let got: Vec<u64> = cks.list.iter().map(|c| c.machine().state_hash()).collect();
            assert_eq!(got, hashes, "{units} units a turn");
            let keys: Vec<u64> = cks.list.iter().filter(|c| c.is_key()).map(|c| c.time).collect();
            let expected: Vec<u64> = match units {
                // 128 bytes of 4 KiB: every checkpoint but each 16th is a delta, the 15th
                // holding all 16 threads.
                2 => {
                    assert_eq!(cks.list[15].patch.len(), 16);
                    // The live machine's copies were counted as the turns made them: the
                    // key that shares them adds less than one turn's four.
                    assert!(held[16] - held[15] < 4 * 4096, "{held:?}");
                    vec![0, 16]
                }
                // Most of the file: the first delta holds one turn's four threads, the second
                // would hold eight (more than the four copies a key costs): a key.
                40 => (0..24).step_by(2).collect(),
                // The whole file: a delta holds more than a key costs.
                _ => (0..24).collect(),
            };
            assert_eq!(keys, expected, "{units} units a turn");
        }
    }
}
