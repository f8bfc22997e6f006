//! Checkpoints: the machine at a recorded time, from which the steps after it can be run
//! again or a seek starts.
//!
//! A key checkpoint is a clone of the live machine: it shares every thread and page with it,
//! and the live machine copies a thread on its first write after that: with a key at every
//! checkpoint, every thread that runs is copied whole at every checkpoint, into fresh pages
//! (`docs/design-history.md`, session 41). Between keys, a checkpoint is a delta: the live
//! machine's memory and SLMs as a clone shares them, the key's threads, and the patches of
//! every delta since the key, each holding, for the threads that changed since the delta
//! before it, only the 64-byte units of their registers that did; a checkpoint's machine is
//! the key's with its patches applied as if in order (each unit from the latest patch that
//! holds it, copied once). To find what changed, the deltas keep each
//! changed thread as the last checkpoint saw it ([`Deltas`], dropped at the next key). The
//! live threads stay the live machine's own until the next key. A delta that would cost more
//! than a key is not taken (`Checkpoint::delta`): then the checkpoint is a key, and the next
//! deltas start from it.

use std::collections::hash_map::Entry;
use std::sync::Arc;

use super::index::FastMap;
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
    /// The machine at `time`, but for the threads `patches` bring there from a key's.
    pub(super) base: Machine,
    /// The patches of the deltas since the key, this one's last: each brings the threads
    /// from the checkpoint before it to its own (none for a key).
    pub(super) patches: Vec<Arc<[ThreadPatch]>>,
    pub sched: SchedPos,
}

/// What the deltas after one key keep: their patches so far, and the threads changed since
/// the key as the last checkpoint saw them (at most [`DELTA_LIMIT`] bytes of registers).
#[derive(Clone, Debug, Default)]
pub(super) struct Deltas {
    patches: Vec<Arc<[ThreadPatch]>>,
    seen: FastMap<usize, ThreadState>,
}

impl Checkpoint {
    /// A key checkpoint of `machine` (a clone: it shares every thread and page).
    pub(super) fn key(time: u64, machine: &Machine, sched: SchedPos) -> Checkpoint {
        Checkpoint { time, base: machine.clone(), patches: Vec::new(), sched }
    }

    /// A checkpoint of `machine` at `time` as a delta from `key` (an earlier key checkpoint
    /// of the same run, whose deltas so far `deltas` holds), the bytes its patch holds and the
    /// register bytes of the threads changed since `key`; None when a key costs less: those
    /// threads hold more than [`DELTA_LIMIT`] bytes of registers (each delta compares them
    /// all), the patch would hold more than `limit` (default: three quarters of those bytes),
    /// or the table or a thread's files are not the key's size.
    pub(super) fn delta(
        time: u64,
        machine: &Machine,
        sched: SchedPos,
        key: &Checkpoint,
        deltas: &mut Deltas,
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
        let mut patch = Vec::with_capacity(changed.len());
        for (i, live) in changed {
            // A thread no delta has seen changed is the key's there. A thread of a chunk the
            // key had not built is in its start state: `get` builds it to compare with.
            let seen = match deltas.seen.get(&i) {
                Some(seen) => seen,
                None => key.base.threads.get(i).map(|k| &**k)?,
            };
            if (seen.grf.len(), seen.preds.len(), seen.addrs.len())
                != (live.grf.len(), live.preds.len(), live.addrs.len())
            {
                return None;
            }
            patch.extend(ThreadPatch::new(i, live, seen));
        }
        let bytes = patch.iter().map(ThreadPatch::bytes).sum();
        // Threads whose registers change all over (tiles loaded anew) make deltas as large
        // as the copies a key costs.
        if bytes > limit.unwrap_or(full as u64 * 3 / 4) {
            return None;
        }
        for p in &patch {
            let i = p.thread as usize;
            let seen = match deltas.seen.entry(i) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(key.base.threads.get(i).map(|k| (**k).clone())?),
            };
            p.apply_to(seen);
        }
        deltas.patches.push(patch.into());
        let mut base = machine.clone();
        base.threads = key.base.threads.clone();
        Some((Checkpoint { time, base, patches: deltas.patches.clone(), sched }, bytes, full as u64))
    }

    /// The machine at the checkpoint's time (sharing every thread and page it can with the
    /// checkpoint and its key).
    pub fn machine(&self) -> Machine {
        let mut machine = self.base.clone();
        // The latest patch first, each unit (and each thread's control and predicates) taken
        // from the last patch that holds it: a unit that every interval changes is copied
        // once, not once per delta since the key.
        let mut taken = FastMap::<u32, Vec<u64>>::default();
        for p in self.patches.iter().rev().flat_map(|set| set.iter()) {
            let Some(slot) = machine.threads.get_mut(p.thread as usize) else { continue };
            let t = Shared::make_mut(slot);
            let (units, first) = match taken.entry(p.thread) {
                Entry::Occupied(e) => (e.into_mut(), false),
                Entry::Vacant(e) => (e.insert(vec![0; t.grf.len().div_ceil(UNIT * 64)]), true),
            };
            p.apply_over(t, Some((units, !first)));
        }
        machine
    }

    /// Whether this is a key checkpoint (its own threads, no patch).
    pub fn is_key(&self) -> bool {
        self.patches.is_empty()
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
/// and the register units that differ from the last checkpoint's.
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
    /// The patch that brings thread `thread` from `key` (its state at the last checkpoint,
    /// files of `live`'s sizes) to `live`; None if they agree.
    fn new(thread: usize, live: &ThreadState, key: &ThreadState) -> Option<ThreadPatch> {
        let mut runs = Vec::<(u32, u32)>::new();
        for (u, (new, old)) in live.grf.chunks(UNIT).zip(key.grf.chunks(UNIT)).enumerate() {
            if same(new, old) {
                continue;
            }
            let at = (u * UNIT) as u32;
            match runs.last_mut() {
                Some((start, len)) if *start + *len == at => *len += new.len() as u32,
                _ => runs.push((at, new.len() as u32)),
            }
        }
        // The runs' bytes copied once into a buffer of their size (grown unit by unit, it was
        // reallocated, copied again and given back at each doubling).
        let mut bytes = Vec::with_capacity(runs.iter().map(|&(_, len)| len as usize).sum());
        for &(at, len) in &runs {
            bytes.extend_from_slice(&live.grf[at as usize..(at + len) as usize]);
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

    /// Brings `t` (the thread as the checkpoint before saw it) to the patch's state.
    fn apply_to(&self, t: &mut ThreadState) {
        self.apply_over(t, None);
    }

    /// Brings `t` to the patch's state where a checkpoint's patches are applied latest first
    /// (`later`: the units the later ones set, a bit per unit, and whether one set the
    /// thread's files): only what no later patch set, its units marked.
    fn apply_over(&self, t: &mut ThreadState, later: Option<(&mut [u64], bool)>) {
        let (mut taken, files_set) = later.map_or((None, false), |(units, files)| (Some(units), files));
        if !files_set {
            t.control.clone_from(&self.control);
            t.preds.copy_from_slice(&self.preds);
            t.addrs.copy_from_slice(&self.addrs);
        }
        let mut from = 0;
        for &(at, len) in self.runs.iter() {
            let (at, len) = (at as usize, len as usize);
            for start in (at..at + len).step_by(UNIT) {
                let (u, end) = (start / UNIT, (start + UNIT).min(at + len));
                if let Some(taken) = taken.as_deref_mut() {
                    if taken[u / 64] >> (u % 64) & 1 != 0 {
                        continue;
                    }
                    taken[u / 64] |= 1 << (u % 64);
                }
                t.grf[start..end].copy_from_slice(&self.bytes[from + start - at..from + end - at]);
            }
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
    /// `units` units of its threads (every `revert`th turn writes them back to zero): deltas
    /// while one holds no more than a turn's copies cost a key, then a key; every checkpoint
    /// gives back the machine it was taken of.
    fn record(units: usize, revert: u64) -> (Checkpoints, Vec<u64>, Vec<u64>) {
        let mut m = machine(16);
        let mut cks = Checkpoints::default();
        (cks.interval, cks.deltas) = (1, true);
        let (mut hashes, mut held) = (Vec::new(), Vec::new());
        for time in 0..40u64 {
            if time > 0 {
                let turn = ((time - 1) % 4) as u32;
                let value = if time.is_multiple_of(revert) { 0 } else { time as u8 };
                run(&mut m, 4 * turn..4 * turn + 4, units, value);
            }
            cks.take(&m, crate::exec::SchedPos::default(), time);
            hashes.push(m.state_hash());
            held.push(cks.bytes());
        }
        (cks, hashes, held)
    }

    #[test]
    fn deltas_hold_what_changed_since_the_last_checkpoint_until_a_key_costs_less() {
        for revert in [1000, 3, 5] {
            for units in [2, 40, 64] {
                let (cks, hashes, held) = record(units, revert);
                let got: Vec<u64> = cks.list.iter().map(|c| c.machine().state_hash()).collect();
                assert_eq!(got, hashes, "{units} units a turn, every {revert}th turn back to zero");
                let keys: Vec<u64> = cks.list.iter().filter(|c| c.is_key()).map(|c| c.time).collect();
                if units == 64 {
                    // The whole file: a delta holds more than a key costs (but where a turn
                    // writes back the zeros its threads had).
                    if revert > 40 {
                        assert_eq!(keys, (0..40).collect::<Vec<_>>(), "{units} units a turn");
                    }
                    continue;
                }
                // Fewer units: every checkpoint but each 16th is a delta, the 15th patching
                // in turn each of the 16 threads the key had in their start state.
                assert_eq!(keys, vec![0, 16, 32], "{units} units a turn, revert {revert}");
                let last = &cks.list[15];
                assert_eq!(last.patches.len(), 15);
                assert!(last.patches.iter().all(|set| set.len() == 4), "{units} units");
                // A delta holds the four threads of its turn, not what changed since the key:
                // its bytes do not grow with the threads changed since the key.
                // (The first four turns also count the live machine's copies of their threads;
                // a turn back to zero writes fewer units than the others.)
                let turn = (held[5] - held[4]) as i64;
                for t in (1..16).filter(|_| revert > 40) {
                    let delta = (held[t] - held[t - 1]) as i64;
                    let copies = if t <= 4 { 4 * 4096 } else { 0 };
                    assert!((delta - copies - turn).abs() < 64, "{units} units: {held:?}");
                }
                // The live machine's copies were counted as the turns made them: the key
                // that shares them adds less than one turn's four.
                assert!(held[16] - held[15] < 4 * 4096, "{held:?}");
            }
        }
    }
}
