//! Step records, one per executed step, stored by field: thread, instruction and channel
//! enables each as u16 while every value so far fits (a launch of fewer than 65,536 threads,
//! a program of fewer than 65,536 instructions, SIMD16 or narrower), widened to u32 in place
//! the first time one does not. Collatz on 64 Ki work-items takes 10 bytes a step instead of
//! 16 (the log offset stays a u32).

/// One executed step, as [`Steps`] hands it out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StepRecord {
    pub thread: u32,
    /// The instruction executed.
    pub pc: u32,
    /// Its channel enables (relative to its mask offset).
    pub chen: u32,
    /// Where its entries start in the log, from the start of its block of log offsets
    /// (bits 0–30), and [`FALLS_THROUGH`].
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

/// The step records of a trace, in step order.
#[derive(Clone, Debug, Default)]
pub struct Steps {
    thread: Column,
    pc: Column,
    chen: Column,
    log: Vec<u32>,
}

impl Steps {
    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// Step `i`'s record. Panics when there is no step `i`, as a slice index would.
    #[inline]
    pub fn at(&self, i: u64) -> StepRecord {
        let i = i as usize;
        StepRecord {
            thread: self.thread.get(i),
            pc: self.pc.get(i),
            chen: self.chen.get(i),
            log: self.log[i],
        }
    }

    pub fn get(&self, i: u64) -> Option<StepRecord> {
        (i < self.len() as u64).then(|| self.at(i))
    }

    pub fn last(&self) -> Option<StepRecord> {
        self.len().checked_sub(1).map(|i| self.at(i as u64))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = StepRecord> + '_ {
        (0..self.len() as u64).map(|i| self.at(i))
    }

    /// The thread of step `i` alone (what scans for one thread's steps read).
    #[inline]
    pub fn thread(&self, i: u64) -> u32 {
        self.thread.get(i as usize)
    }

    /// The log word of step `i` alone (offset and flag).
    #[inline]
    pub(super) fn log_word(&self, i: u64) -> u32 {
        self.log[i as usize]
    }

    #[inline(always)]
    pub fn push(&mut self, rec: StepRecord) {
        self.thread.push(rec.thread);
        self.pc.push(rec.pc);
        self.chen.push(rec.chen);
        self.log.push(rec.log);
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
        self.thread.bytes() + self.pc.bytes() + self.chen.bytes() + 4 * self.log.len() as u64
    }

    /// The most bytes one record can take.
    pub const MAX_RECORD_BYTES: u64 = 16;
}

impl PartialEq for Steps {
    fn eq(&self, other: &Steps) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
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
        assert_eq!(steps.iter().collect::<Vec<_>>(), want);
        assert_eq!(steps.last(), want.last().copied());
        assert_eq!(steps.get(300), None);
        assert!(steps.at(3).falls_through() && !steps.at(4).falls_through());
        assert_eq!(steps.thread(150), 0x1_0000 + 150);
        let ones: u64 = want.iter().map(|r| u64::from(r.chen.count_ones())).sum();
        assert_eq!(steps.lane_ops(), ones);
        // Every column is wide by now: 16 bytes a record.
        assert_eq!(steps.bytes(), 300 * Steps::MAX_RECORD_BYTES);
    }

    #[test]
    fn narrow_records_take_ten_bytes() {
        let mut steps = Steps::default();
        for i in 0..50u32 {
            steps.push(rec(i, 0xffff, 0xffff, i));
        }
        assert_eq!(steps.bytes(), 50 * 10);
        assert_eq!(steps.lane_ops(), 50 * 16);
        let mut other = Steps { pc: Column::Wide(Vec::new()), ..Steps::default() };
        for i in 0..50u32 {
            other.push(rec(i, 0xffff, 0xffff, i));
        }
        assert_eq!(other.bytes(), 50 * 12);
        // Equal records are equal whatever their columns' widths.
        assert!(steps == other);
    }
}
