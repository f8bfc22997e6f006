//! Step records, one per executed step, stored by field: instruction and channel enables
//! each as u16 while every value so far fits (a program of fewer than 65,536 instructions,
//! SIMD16 or narrower), widened to u32 in place the first time one does not; the thread only
//! of steps appended one at a time (a burst window's steps are stored thread by thread, and
//! the window's layout names the threads), likewise u16 until a launch has 65,536 threads or
//! more. The log is found by length, not offset: a byte per step (7 bits of length and the
//! fall-through flag), the steps that log 127 bytes or more kept apart with their lengths;
//! the recorder keeps a log offset per 64 steps and sums the lengths before a step. Collatz
//! on 64 Ki work-items takes 5 bytes a step (16 with 32-bit offsets and columns, 8 with u16
//! lengths and a thread per step).

/// One executed step, as [`Steps`] hands it out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StepRecord {
    pub thread: u32,
    /// The instruction executed.
    pub pc: u32,
    /// Its channel enables (relative to its mask offset).
    pub chen: u32,
    /// How many bytes of the log its entries take (bits 0–30), and [`FALLS_THROUGH`].
    pub(super) log: u32,
}

/// Flag of [`StepRecord::log`]: the step only moved its thread's pc to the next instruction
/// (nothing logged for it).
pub(super) const FALLS_THROUGH: u32 = 1 << 31;

impl StepRecord {
    /// Whether the step only moved its thread's pc to the next instruction.
    pub fn falls_through(&self) -> bool {
        self.log & FALLS_THROUGH != 0
    }
}

/// u32 values kept as u16 until one needs more.
#[derive(Clone, Debug)]
enum Column {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for Column {
    fn default() -> Column {
        Column::Narrow(Vec::new())
    }
}

impl Column {
    #[inline(always)]
    fn push(&mut self, value: u32) {
        match self {
            Column::Narrow(values) if value <= u32::from(u16::MAX) => values.push(value as u16),
            Column::Wide(values) => values.push(value),
            Column::Narrow(_) => self.widen_and_push(value),
        }
    }

    /// The first value over 16 bits: the column becomes u32 (once per column and recording).
    #[cold]
    #[inline(never)]
    fn widen_and_push(&mut self, value: u32) {
        if let Column::Narrow(values) = self {
            let mut wide: Vec<u32> = Vec::with_capacity(values.capacity().max(values.len() + 1));
            wide.extend(values.iter().map(|&v| u32::from(v)));
            *self = Column::Wide(wide);
        }
        if let Column::Wide(values) = self {
            values.push(value);
        }
    }

    fn reserve(&mut self, n: usize) {
        match self {
            Column::Narrow(values) => values.reserve(n),
            Column::Wide(values) => values.reserve(n),
        }
    }

    #[inline]
    fn get(&self, i: usize) -> u32 {
        match self {
            Column::Narrow(values) => u32::from(values[i]),
            Column::Wide(values) => values[i],
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Column::Narrow(values) => 2 * values.len() as u64,
            Column::Wide(values) => 4 * values.len() as u64,
        }
    }
}

/// The step records of a trace part, by slot.
#[derive(Clone, Debug, Default)]
pub struct Steps {
    /// The threads of the steps appended by [`Steps::push`], in slot order.
    pushed: Column,
    pc: Column,
    chen: Column,
    /// Per step: its log length (bits 0–6; [`LONG`] when it is in `long`) and the
    /// fall-through flag (bit 7).
    log: Vec<u8>,
    /// The steps whose log takes [`LONG`] bytes or more, in step order, with their lengths.
    long: Vec<(u64, u32)>,
}

/// The log length that sends a step's length to [`Steps::long`]. On Collatz, 0.08% of the
/// steps (64-bit address computations and messages) log that much.
const LONG: u8 = 0x7f;
/// The fall-through flag of [`Steps::log`].
const LOG_FALLS_THROUGH: u8 = 0x80;

impl Steps {
    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The record in slot `i`, whose thread is `thread`. Panics when there is no slot `i`,
    /// as a slice index would.
    #[inline]
    pub fn record(&self, i: u64, thread: u32) -> StepRecord {
        let i = i as usize;
        let flag = if self.log[i] & LOG_FALLS_THROUGH != 0 { FALLS_THROUGH } else { 0 };
        StepRecord { thread, pc: self.pc.get(i), chen: self.chen.get(i), log: self.log_len(i as u64) | flag }
    }

    /// The instruction of the step in slot `i`.
    #[inline]
    pub fn pc_at(&self, i: u64) -> u32 {
        self.pc.get(i as usize)
    }

    /// The thread of the `k`-th step appended by [`Steps::push`].
    #[inline]
    pub fn pushed_thread(&self, k: u64) -> u32 {
        self.pushed.get(k as usize)
    }

    /// How many log bytes step `i` takes.
    #[inline]
    pub(super) fn log_len(&self, i: u64) -> u32 {
        match self.log[i as usize] & LONG {
            LONG => self.long_len(i),
            len => u32::from(len),
        }
    }

    #[cold]
    fn long_len(&self, i: u64) -> u32 {
        let at = self.long.partition_point(|&(step, _)| step < i);
        self.long.get(at).filter(|&&(step, _)| step == i).map_or(0, |&(_, len)| len)
    }

    /// Log bytes of steps `from..to` together (a few dozen steps: the recorder's offsets are
    /// 64 steps apart).
    #[inline]
    pub(super) fn log_bytes(&self, from: u64, to: u64) -> u64 {
        let lens = &self.log[from as usize..to as usize];
        let sum: u64 = lens.iter().map(|&l| u64::from(l & LONG)).sum();
        if !lens.iter().any(|&l| l & LONG == LONG) {
            return sum;
        }
        // Steps in `long` were counted as LONG bytes above.
        let (a, b) =
            (self.long.partition_point(|&(s, _)| s < from), self.long.partition_point(|&(s, _)| s < to));
        self.long[a..b].iter().map(|&(_, len)| u64::from(len) - u64::from(LONG)).sum::<u64>() + sum
    }

    /// Room for `n` more records.
    pub fn reserve(&mut self, n: usize) {
        self.pushed.reserve(n);
        self.pc.reserve(n);
        self.chen.reserve(n);
        self.log.reserve(n);
    }

    #[inline(always)]
    pub fn push(&mut self, rec: StepRecord) {
        let len = rec.log & !FALLS_THROUGH;
        let flag = if rec.log & FALLS_THROUGH != 0 { LOG_FALLS_THROUGH } else { 0 };
        if len >= u32::from(LONG) {
            self.long.push((self.log.len() as u64, len));
        }
        self.pushed.push(rec.thread);
        self.pc.push(rec.pc);
        self.chen.push(rec.chen);
        self.log.push(len.min(u32::from(LONG)) as u8 | flag);
    }

    /// Room for `n` more records written in place (a window's, whose threads its layout
    /// names), when the pc and channel-enable columns are still narrow (zeros until written).
    /// None when one is wide. A window's steps go in this way, without a width check and a
    /// growth check per field and step.
    pub(super) fn narrow_tail(&mut self, n: usize) -> Option<Tail<'_>> {
        let (Column::Narrow(pc), Column::Narrow(chen)) = (&mut self.pc, &mut self.chen) else {
            return None;
        };
        let at = self.log.len();
        for column in [&mut *pc, &mut *chen] {
            column.resize(at + n, 0);
        }
        self.log.resize(at + n, 0);
        Some(Tail {
            pc: &mut pc[at..],
            chen: &mut chen[at..],
            log: &mut self.log[at..],
            long: &mut self.long,
            at: at as u64,
        })
    }

    /// Channel enables summed over every step (lane operations).
    pub fn lane_ops(&self) -> u64 {
        match &self.chen {
            Column::Narrow(values) => values.iter().map(|v| u64::from(v.count_ones())).sum(),
            Column::Wide(values) => values.iter().map(|v| u64::from(v.count_ones())).sum(),
        }
    }

    /// Bytes held (by the records themselves, not spare capacity).
    pub fn bytes(&self) -> u64 {
        self.pushed.bytes()
            + self.pc.bytes()
            + self.chen.bytes()
            + self.log.len() as u64
            + 12 * self.long.len() as u64
    }

    /// The most bytes one record can take (but the 12 of a step that logs 127 bytes or more).
    pub const MAX_RECORD_BYTES: u64 = 13;

    /// The records of steps appended by [`Steps::push`] alone, in order.
    #[cfg(test)]
    fn pushed_records(&self) -> Vec<StepRecord> {
        (0..self.len() as u64).map(|i| self.record(i, self.pushed_thread(i))).collect()
    }
}

/// The slots [`Steps::narrow_tail`] made, to write records into.
pub(super) struct Tail<'a> {
    pub pc: &'a mut [u16],
    pub chen: &'a mut [u16],
    log: &'a mut [u8],
    long: &'a mut Vec<(u64, u32)>,
    /// The step of the first slot.
    at: u64,
}

impl Tail<'_> {
    /// Sets slot `i`'s log length and fall-through flag. Slots whose length goes to the long
    /// list are set in increasing order.
    #[inline(always)]
    pub fn set_log(&mut self, i: usize, len: u32, falls_through: bool) {
        if len >= u32::from(LONG) {
            self.long.push((self.at + i as u64, len));
        }
        let flag = if falls_through { LOG_FALLS_THROUGH } else { 0 };
        self.log[i] = len.min(u32::from(LONG)) as u8 | flag;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(thread: u32, pc: u32, chen: u32, log: u32) -> StepRecord {
        StepRecord { thread, pc, chen, log }
    }

    #[test]
    fn columns_widen_in_place_and_keep_every_value() {
        let mut steps = Steps::default();
        let mut want = Vec::new();
        // Narrow at first; then each field in turn needs 32 bits.
        for i in 0..300u32 {
            let wide = |at: u32| if i >= at { 0x1_0000 + i } else { i };
            let r = rec(wide(100), wide(200), wide(250), i | if i % 3 == 0 { FALLS_THROUGH } else { 0 });
            steps.push(r);
            want.push(r);
        }
        assert_eq!(steps.len(), 300);
        assert_eq!(steps.pushed_records(), want);
        assert!(steps.record(3, 0).falls_through() && !steps.record(4, 0).falls_through());
        assert_eq!(steps.pushed_thread(150), 0x1_0000 + 150);
        let ones: u64 = want.iter().map(|r| u64::from(r.chen.count_ones())).sum();
        assert_eq!(steps.lane_ops(), ones);
        // Every column is wide by now: 13 bytes a record, and the long lengths.
        let long = want.iter().filter(|r| r.log & !FALLS_THROUGH >= 127).count() as u64;
        assert_eq!(steps.bytes(), 300 * Steps::MAX_RECORD_BYTES + 12 * long);
    }

    #[test]
    fn narrow_records_take_seven_bytes() {
        let mut steps = Steps::default();
        for i in 0..50u32 {
            steps.push(rec(i, 0xffff, 0xffff, i));
        }
        assert_eq!(steps.bytes(), 50 * 7);
        assert_eq!(steps.lane_ops(), 50 * 16);
        let mut other = Steps { pc: Column::Wide(Vec::new()), ..Steps::default() };
        for i in 0..50u32 {
            other.push(rec(i, 0xffff, 0xffff, i));
        }
        assert_eq!(other.bytes(), 50 * 9);
        // Equal records whatever their columns' widths.
        assert_eq!(steps.pushed_records(), other.pushed_records());
        // A window's records, whose threads its layout names: 5 bytes each.
        let mut window = Steps::default();
        let mut tail = window.narrow_tail(50).expect("narrow");
        for i in 0..50 {
            (tail.pc[i], tail.chen[i]) = (0xffff, 0xffff);
            tail.set_log(i, i as u32, false);
        }
        assert_eq!(window.bytes(), 50 * 5);
        assert_eq!(window.record(7, 3), rec(3, 0xffff, 0xffff, 7));
    }

    /// Log lengths of every size come back, flags kept, one by one and summed over any range:
    /// those of 127 bytes or more (kept apart) included, pushed one at a time or written into
    /// a tail.
    #[test]
    fn log_lengths_of_every_size_come_back_and_sum() {
        let mut steps = Steps::default();
        let lens: Vec<u32> = (0..300u32)
            .map(|i| match i % 37 {
                5 => 126,
                6 => 127,
                7 => 0x8000 + i,
                8 => 1 << 30,
                _ => i % 200,
            })
            .collect();
        for (i, &len) in lens[..150].iter().enumerate() {
            steps.push(rec(1, 2, 3, len | if i % 2 == 0 { FALLS_THROUGH } else { 0 }));
        }
        let mut tail = steps.narrow_tail(150).expect("narrow");
        for (i, &len) in lens[150..].iter().enumerate() {
            (tail.pc[i], tail.chen[i]) = (2, 3);
            tail.set_log(i, len, (150 + i) % 2 == 0);
        }
        for (i, &len) in lens.iter().enumerate() {
            let r = steps.record(i as u64, 1);
            assert_eq!((r.log & !FALLS_THROUGH, r.falls_through()), (len, i % 2 == 0), "step {i}");
            assert_eq!(steps.log_len(i as u64), len);
        }
        for (from, to) in [(0, 300), (0, 0), (5, 9), (6, 7), (40, 120), (299, 300)] {
            let want: u64 = lens[from..to].iter().map(|&l| u64::from(l)).sum();
            assert_eq!(steps.log_bytes(from as u64, to as u64), want, "{from}..{to}");
        }
        let long = lens.iter().filter(|&&l| l >= 127).count() as u64;
        assert_eq!(steps.bytes(), 150 * 7 + 150 * 5 + 12 * long);
    }
}
