//! One hash of a whole machine: equal states give equal hashes however they were reached.

use std::hash::Hasher;

use super::{Control, Machine};

/// A simple 64-bit word hash (multiply-rotate), fast enough for megabytes of state.
#[derive(Clone, Debug)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher(0x243f_6a88_85a3_08d3)
    }
}

impl StateHasher {
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        self.word(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.word(u64::from_le_bytes(a));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(tail));
    }

    pub fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
}

fn hash_control(h: &mut StateHasher, c: &Control) {
    h.word(c.pc.0 as u64);
    h.word(c.em as u64);
    h.word(c.call_mask as u64);
    let mut waiting: Vec<_> = c.waiting.iter().copied().collect();
    waiting.sort_by_key(|w| w.at);
    for w in &waiting {
        h.word(((w.at.0 as u64) << 32) | w.lanes as u64);
    }
    h.word(c.stack.len() as u64);
    for f in &c.stack {
        h.word(f.return_pc.0 as u64);
        h.word(((f.saved_em as u64) << 32) | f.saved_call_mask as u64);
    }
    h.word(match c.status {
        super::ThreadStatus::Running => 0,
        super::ThreadStatus::AtBarrier => 1,
        super::ThreadStatus::Done => 2,
        super::ThreadStatus::Faulted => 3,
        super::ThreadStatus::AtNamedBarrier(id) => 4 + u64::from(id),
    });
}

impl Machine {
    /// Hash of every thread (registers, predicates, address registers, control), SVM and SLM.
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::default();
        for t in &self.threads {
            h.bytes(&t.grf);
            for &p in &t.preds {
                h.word(p as u64);
            }
            for &a in &t.addrs {
                h.word(a as u64);
            }
            hash_control(&mut h, &t.control);
        }
        for (no, page) in self.svm.nonzero_pages() {
            h.word(no);
            h.bytes(page);
        }
        for slm in self.slms.iter() {
            h.bytes(&slm.bytes);
        }
        h.finish()
    }
}

/// A multiply-rotate hasher for small integer keys (the memory index's, SVM page numbers):
/// SipHash showed up at 7% of recording time, and at 7% of a plain run of atomics.
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}
