//! The delta log's byte encoding. Each entry is a tag byte and little-endian fields; GRF and
//! memory entries carry `old XOR new` so one entry undoes and redoes the same write.
//!
//! | tag | fields |
//! |---|---|
//! | 0 GRF | thread u32, offset u32, len u16, xor\[len\] |
//! | 1 predicate | thread u32, pred u32, xor u32 |
//! | 2 address register | thread u32, slot u32, xor u32 |
//! | 3 SVM | thread u32, addr u64, len u16, xor\[len\] |
//! | 4 SLM | thread u32, group u32, addr u64, len u16, xor\[len\] |
//! | 5 control | thread u32, index u32 (into the recorder's control table) |
//! | 6 pc only | thread u32, old pc u32, new pc u32 |
//! | 9 GRF of the step's own thread | offset u32, len u16, xor\[len\] |
//! | 10 predicate of the step's own thread | pred u32, xor u32 |
//! | 11 GRF of the step's own thread, compact | offset u16, len u8, xor\[len\] |
//! | 12 pc of the step's own thread | old pc u32, new pc u32 |
//! | 13 GRF lanes of the step's own thread | offset u16, shape u8, lanes\[⌈n/8⌉\], xor\[lanes × size\] |
//! | 14 predicate of the step's own thread, compact | pred u8, xor u16 |
//!
//! Every GRF and predicate write comes from the step's own thread, so tags 9 to 14 are what
//! the recorder writes (no thread field); 0, 1 and 6 remain for changes on behalf of another
//! thread (a barrier release moves the released thread). Tag 11 takes writes of at most 127
//! bytes below GRF offset 64 Ki: most writes.
//!
//! Tag 13 is one packed region write whose enabled lanes are not contiguous (lanes that left
//! a loop, in divergent code): `n` elements of `size` bytes from the offset (shape: log2 of
//! the size in bits 0–1, `n - 1` in bits 2–6), the bitmap of the lanes written, then one XOR
//! payload of the written lanes' bytes, one lane after another. It decodes to the GRF entries
//! its runs of lanes would have made, one per run, so that readers see exactly the bytes
//! written; it takes 6–9 bytes of header where every run took 4, and one payload.
//!
//! An XOR payload is a length header (u16, or u8 in tag 11) whose top bit marks the sparse
//! form: a bitmap of the non-zero bytes, then those bytes.

use std::borrow::Cow;

#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(all(target_arch = "x86_64", target_feature = "ssse3"))]
mod ssse3;

use crate::exec::{lane_runs, LaneRuns};
use crate::machine::MemSpace;

/// A decoded log entry (borrowing its XOR bytes from the log). `X` is how an XOR payload is
/// held: expanded (the default, for queries and output), or as stored ([`Xor`], for undo
/// and redo, which need no copy).
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry<X> {
    pub thread: u32,
    pub kind: Kind<X>,
}

/// An entry with its payloads expanded.
pub type Entry<'a> = LogEntry<Cow<'a, [u8]>>;
pub type EntryKind<'a> = Kind<Cow<'a, [u8]>>;

#[derive(Clone, Debug, PartialEq)]
pub enum Kind<X> {
    Grf {
        offset: u32,
        xor: X,
    },
    Pred {
        pred: u32,
        xor: u32,
    },
    Addr {
        slot: u32,
        xor: u32,
    },
    Mem {
        space: MemSpace,
        addr: u64,
        xor: X,
    },
    Control {
        index: u32,
    },
    /// Only the pc changed (the common case: 9 bytes, not two copies of the control state).
    Pc {
        old: u32,
        new: u32,
    },
}

/// An XOR payload as the log stores it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Xor<'a> {
    Dense(&'a [u8]),
    /// Bytes `skip..skip + len` of a payload whose bytes set in `map` are `data`, in order
    /// (`skip` is not 0 for one run of a lanes entry).
    Sparse {
        len: usize,
        skip: usize,
        map: &'a [u8],
        data: &'a [u8],
    },
}

impl<'a> Xor<'a> {
    pub fn len(&self) -> usize {
        match self {
            Xor::Dense(bytes) => bytes.len(),
            Xor::Sparse { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// XORs the payload into the first [`Xor::len`] bytes of `bytes` (at most that many).
    pub fn apply(&self, bytes: &mut [u8]) {
        match *self {
            Xor::Dense(xor) => bytes.iter_mut().zip(xor).for_each(|(b, x)| *b ^= x),
            #[cfg(target_arch = "x86_64")]
            Xor::Sparse { len, skip: 0, map, data } if len <= 64 && avx512::available() => {
                // One vector: the data bytes expanded to the map's bits (the map marks none at
                // or past `len`).
                let n = len.min(bytes.len());
                let at = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                let map = map_word(map);
                avx512::xor_expand(bytes, at, Some(map), &data[..data.len().min(64)]);
            }
            Xor::Sparse { len, skip, map, data } => {
                // From the map byte holding bit `skip`: the data bytes of the bits before it
                // are skipped by count (a run of a lanes entry costs its own length).
                let first = (skip / 8).min(map.len());
                let below = map.get(first).map_or(0, |&m| m & !(0xff << (skip % 8)));
                let mut d = marked(&map[..first]) + below.count_ones() as usize;
                for (w, &m) in map.iter().enumerate().skip(first) {
                    let mut m = if w == first { m & (0xff << (skip % 8)) } else { m };
                    while m != 0 {
                        let j = 8 * w + m.trailing_zeros() as usize - skip;
                        m &= m - 1;
                        if j >= len {
                            return;
                        }
                        if let Some(b) = bytes.get_mut(j) {
                            *b ^= data.get(d).copied().unwrap_or(0);
                        }
                        d += 1;
                    }
                }
            }
        }
    }

    /// Bytes `a..b` of the payload (within its length).
    fn window(self, a: usize, b: usize) -> Xor<'a> {
        match self {
            Xor::Dense(bytes) => Xor::Dense(&bytes[a.min(bytes.len())..b.min(bytes.len())]),
            Xor::Sparse { len, skip, map, data } => {
                let b = b.min(len);
                Xor::Sparse { len: b.saturating_sub(a), skip: skip + a, map, data }
            }
        }
    }

    /// The payload's bytes.
    pub fn expand(self) -> Cow<'a, [u8]> {
        match self {
            Xor::Dense(bytes) => Cow::Borrowed(bytes),
            Xor::Sparse { len, .. } => {
                let mut out = vec![0u8; len];
                self.apply(&mut out);
                Cow::Owned(out)
            }
        }
    }
}

impl<'a> LogEntry<Xor<'a>> {
    fn expand(self) -> Entry<'a> {
        let kind = match self.kind {
            Kind::Grf { offset, xor } => Kind::Grf { offset, xor: xor.expand() },
            Kind::Mem { space, addr, xor } => Kind::Mem { space, addr, xor: xor.expand() },
            Kind::Pred { pred, xor } => Kind::Pred { pred, xor },
            Kind::Addr { slot, xor } => Kind::Addr { slot, xor },
            Kind::Control { index } => Kind::Control { index },
            Kind::Pc { old, new } => Kind::Pc { old, new },
        };
        LogEntry { thread: self.thread, kind }
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// The tag of an entry and its thread field: `own_tag` and no field for the step's own thread.
fn put_thread(out: &mut Vec<u8>, tag: u8, own_tag: u8, thread: Option<u32>) {
    match thread {
        Some(t) => {
            out.push(tag);
            put_u32(out, t);
        }
        None => out.push(own_tag),
    }
}
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The length header of an XOR payload: two bytes (length, [`SPARSE`] flag), or one for the
/// short payloads of compact entries (length below 128, [`SPARSE_SHORT`] flag).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Header {
    Long,
    Short,
}

impl Header {
    fn len(self) -> usize {
        match self {
            Header::Long => 2,
            Header::Short => 1,
        }
    }

    /// The header's bytes (only the first [`Header::len`] count).
    fn bytes(self, len: usize, sparse: bool) -> [u8; 2] {
        match self {
            Header::Long => (len as u16 | if sparse { SPARSE } else { 0 }).to_le_bytes(),
            Header::Short => [len as u8 | if sparse { SPARSE_SHORT } else { 0 }, 0],
        }
    }
}

/// Appends `old XOR new` for `len` bytes (the slices have equal length): as is, or — when
/// shorter — as a bitmap of the non-zero bytes followed by those bytes. Most writes change
/// few bytes (small integers, unchanged lanes), and the log's size is what recording time and
/// memory are made of.
fn put_xor(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) {
    let len = new.len();
    if len <= MAX_SPARSE && put_sparse(out, header, old, new) {
        return;
    }
    // Dense: also every long payload (rare big loads, where the sparse pass would rarely pay).
    let start = out.len();
    let h = header.len();
    out.resize(start + h + len, 0);
    out[start..start + h].copy_from_slice(&header.bytes(len, false)[..h]);
    for ((x, a), b) in out[start + h..].iter_mut().zip(old).zip(new) {
        *x = a ^ b;
    }
}

/// Appends the sparse form of `old XOR new` when it is shorter than the dense form, and
/// returns whether it did (`out` is unchanged if not).
fn put_sparse(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        return avx512::put_sparse(out, header, old, new);
    }
    put_sparse_portable(out, header, old, new)
}

/// [`put_sparse`] a word at a time: each word's packed bytes go out in one 8-byte store,
/// straight into the log, which is cut back to the dense form's start when that is shorter.
fn put_sparse_portable(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) -> bool {
    let len = new.len();
    let start = out.len();
    let map_len = len.div_ceil(8);
    let h = header.len();
    // Room for the sparse form, and 8 bytes of slack for the last word's store.
    out.resize(start + h + map_len + len + 8, 0);
    let (maps, data) = out[start + h..].split_at_mut(map_len);
    // Whole 16-byte chunks with a byte shuffle where the build has one, then words.
    let (done, mut packed) = pack_chunks(maps, data, old, new);
    let (words, (tail_old, tail_new)) = xor_words(&old[done..], &new[done..]);
    for (map, x) in maps[done / 8..].iter_mut().zip(words) {
        *map = nonzero_map(x);
        data[packed..packed + 8].copy_from_slice(&pack_nonzero(x).to_le_bytes());
        packed += map.count_ones() as usize;
    }
    if !tail_old.is_empty() {
        let mut map = 0u8;
        for (i, (a, b)) in tail_old.iter().zip(tail_new).enumerate() {
            data[packed] = a ^ b;
            packed += (a != b) as usize;
            map |= ((a != b) as u8) << i;
        }
        maps[map_len - 1] = map;
    }
    if map_len + packed < len {
        out[start..start + h].copy_from_slice(&header.bytes(len, true)[..h]);
        out.truncate(start + h + map_len + packed);
        return true;
    }
    out.truncate(start);
    false
}

#[cfg(all(target_arch = "x86_64", target_feature = "ssse3"))]
use ssse3::pack_chunks;

/// Without a byte shuffle, the word loop takes every byte.
#[cfg(not(all(target_arch = "x86_64", target_feature = "ssse3")))]
fn pack_chunks(_: &mut [u8], _: &mut [u8], _: &[u8], _: &[u8]) -> (usize, usize) {
    (0, 0)
}

/// The non-zero bytes of `x` moved down to its low bytes, in order (no branch per byte).
#[inline(always)]
fn pack_nonzero(x: u64) -> u64 {
    let (mut packed, mut shift) = (0u64, 0u32);
    for i in 0..8 {
        let byte = (x >> (8 * i)) & 0xff;
        packed |= byte << shift;
        shift += 8 * (byte != 0) as u32;
    }
    packed
}

/// The XOR of `old` and `new` eight bytes at a time, and the unpaired tails.
#[inline(always)]
fn xor_words<'a>(old: &'a [u8], new: &'a [u8]) -> (impl Iterator<Item = u64> + 'a, (&'a [u8], &'a [u8])) {
    let (a, b) = (old.chunks_exact(8), new.chunks_exact(8));
    let tails = (a.remainder(), b.remainder());
    let word = |c: &[u8]| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    (a.zip(b).map(move |(x, y)| word(x) ^ word(y)), tails)
}

/// 0x01 in each non-zero byte of `x`, 0x00 elsewhere.
#[inline(always)]
fn nonzero_lsbs(x: u64) -> u64 {
    let mut y = x | (x >> 4);
    y |= y >> 2;
    y |= y >> 1;
    y & 0x0101_0101_0101_0101
}

/// Bit i set where byte i of `x` is non-zero.
#[inline(always)]
fn nonzero_map(x: u64) -> u8 {
    (nonzero_lsbs(x).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Longest payload that may take the sparse form (a SIMD32 qword write); longer ones are
/// bulk loads, rarely sparse, kept dense without trying.
pub(super) const MAX_SPARSE: usize = 256;

/// Length flag of a sparse XOR payload (entries are split below 32 KiB so the bit is free).
const SPARSE: u16 = 0x8000;
/// Length flag of a sparse payload with a one-byte header.
pub(super) const SPARSE_SHORT: u8 = 0x80;
/// Tag of a compact GRF entry (the step's own thread, offset below 64 Ki, payload below 128).
const OWN_GRF: u8 = 11;
/// Tag of a GRF lanes entry (the step's own thread, offset below 64 Ki, payload below 128).
const OWN_GRF_LANES: u8 = 13;
/// Longest payload of a compact GRF entry (one-byte header).
const MAX_SHORT: usize = 0x7f;
/// Longest payload one entry holds.
const MAX_ENTRY: usize = 0x7fff;

/// Writes of the step's own thread take `None` (no thread field).
pub fn push_grf(out: &mut Vec<u8>, thread: Option<u32>, offset: u32, old: &[u8], new: &[u8]) {
    if thread.is_none() && new.len() <= MAX_SHORT {
        if let Ok(offset) = u16::try_from(offset) {
            // The common write (a few lanes of one region of the step's own thread): 4 bytes
            // of header instead of 7.
            out.push(OWN_GRF);
            out.extend_from_slice(&offset.to_le_bytes());
            put_xor(out, Header::Short, old, new);
            return;
        }
    }
    // Entries hold at most 32 KiB; longer writes (rare message loads) are split.
    for (i, (o, n)) in old.chunks(MAX_ENTRY).zip(new.chunks(MAX_ENTRY)).enumerate() {
        put_thread(out, 0, 9, thread);
        put_u32(out, offset + (i * MAX_ENTRY) as u32);
        put_xor(out, Header::Long, o, n);
    }
}

/// A packed region write of the lanes set in `lanes` (see [`Observer::grf_lanes`]): one
/// lanes entry, or one GRF entry per run of lanes where that entry cannot hold it (another
/// thread's write, a high offset, 128 bytes or more written).
///
/// [`Observer::grf_lanes`]: crate::exec::Observer::grf_lanes
pub fn push_grf_lanes(
    out: &mut Vec<u8>,
    thread: Option<u32>,
    offset: u32,
    size: u32,
    lanes: u32,
    old: &[u8],
    new: &[u8],
) {
    let n = new.len() / size.max(1) as usize;
    let written = lanes.count_ones() as usize * size as usize;
    let fits = thread.is_none()
        && matches!(size, 1 | 2 | 4 | 8)
        && (1..=32).contains(&n)
        && n * size as usize == new.len()
        && written <= MAX_SHORT
        && lanes >> (n - 1) >> 1 == 0;
    match u16::try_from(offset) {
        Ok(at) if fits => {
            // The head in one fixed-size copy (a call to memcpy per entry otherwise), then
            // cut to the lane bitmap's length.
            let [lo, hi] = at.to_le_bytes();
            let [l0, l1, l2, l3] = lanes.to_le_bytes();
            let shape = size.trailing_zeros() as u8 | ((n - 1) as u8) << 2;
            out.extend_from_slice(&[OWN_GRF_LANES, lo, hi, shape, l0, l1, l2, l3]);
            out.truncate(out.len() - 4 + n.div_ceil(8));
            put_packed(out, old, new, lanes, size);
        }
        _ => {
            for (a, b) in lane_runs(lanes, size) {
                let (a, b) = (a as usize, b as usize);
                push_grf(out, thread, offset + a as u32, &old[a..b], &new[a..b]);
            }
        }
    }
}

/// The bytes that lanes of `size` bytes (at most 8) cover within the first 64, as a mask.
#[cfg(target_arch = "x86_64")]
fn lane_bytes(lanes: u32, size: u32) -> u64 {
    let unit = (1u64 << size) - 1;
    let mut at = 0u64;
    let mut bits = lanes;
    while bits != 0 {
        at |= unit.checked_shl(bits.trailing_zeros() * size).unwrap_or(0);
        bits &= bits - 1;
    }
    at
}

/// The XOR payload of a lanes entry: the written lanes' bytes of `old XOR new`, packed, with
/// a one-byte header (at most [`MAX_SHORT`] bytes).
fn put_packed(out: &mut Vec<u8>, old: &[u8], new: &[u8], lanes: u32, size: u32) {
    #[cfg(target_arch = "x86_64")]
    if new.len() <= 64 && avx512::available() {
        // One vector (a SIMD16 dword write): its written bytes, as a mask.
        avx512::put_packed(out, old, new, lane_bytes(lanes, size));
        return;
    }
    put_packed_portable(out, old, new, lanes, size);
}

/// [`put_packed`] by gathering the written lanes' bytes, then [`put_xor`].
fn put_packed_portable(out: &mut Vec<u8>, old: &[u8], new: &[u8], lanes: u32, size: u32) {
    let (mut o, mut w) = ([0u8; MAX_SHORT], [0u8; MAX_SHORT]);
    let mut packed = 0;
    for (a, b) in lane_runs(lanes, size) {
        let (a, b) = (a as usize, b as usize);
        o[packed..packed + b - a].copy_from_slice(&old[a..b]);
        w[packed..packed + b - a].copy_from_slice(&new[a..b]);
        packed += b - a;
    }
    put_xor(out, Header::Short, &o[..packed], &w[..packed]);
}

/// Tag of a compact predicate entry (the step's own thread, predicate below 256, lanes of
/// SIMD16 or narrower).
const OWN_PRED: u8 = 14;

/// Writes of the step's own thread take `None` (no thread field).
pub fn push_pred(out: &mut Vec<u8>, thread: Option<u32>, pred: u32, old: u32, new: u32) {
    if let (None, Ok(p), Ok(x)) = (thread, u8::try_from(pred), u16::try_from(old ^ new)) {
        // The common one (a compare of up to 16 lanes): 4 bytes instead of 9.
        let [lo, hi] = x.to_le_bytes();
        out.extend_from_slice(&[OWN_PRED, p, lo, hi]);
        return;
    }
    put_thread(out, 1, 10, thread);
    put_u32(out, pred);
    put_u32(out, old ^ new);
}

pub fn push_addr(out: &mut Vec<u8>, thread: u32, slot: u32, old: u32, new: u32) {
    out.push(2);
    put_u32(out, thread);
    put_u32(out, slot);
    put_u32(out, old ^ new);
}

pub fn push_mem(out: &mut Vec<u8>, thread: u32, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
    for (i, (o, n)) in old.chunks(MAX_ENTRY).zip(new.chunks(MAX_ENTRY)).enumerate() {
        let at = addr + (i * MAX_ENTRY) as u64;
        match space {
            MemSpace::Svm => {
                out.push(3);
                put_u32(out, thread);
            }
            MemSpace::Slm(group) => {
                out.push(4);
                put_u32(out, thread);
                put_u32(out, group);
            }
        }
        put_u64(out, at);
        put_xor(out, Header::Long, o, n);
    }
}

/// Offset of the control-table index in a control entry (after the tag and the thread).
pub const CONTROL_INDEX_AT: usize = 5;

pub fn push_control(out: &mut Vec<u8>, thread: u32, index: u32) {
    out.push(5);
    put_u32(out, thread);
    put_u32(out, index);
}

/// A move of the step's own thread takes `None` (no thread field).
pub fn push_pc(out: &mut Vec<u8>, thread: Option<u32>, old: u32, new: u32) {
    put_thread(out, 6, 12, thread);
    put_u32(out, old);
    put_u32(out, new);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u16(&mut self) -> u16 {
        let b = self.take(2);
        u16::from_le_bytes([b[0], b[1]])
    }
    fn u32(&mut self) -> u32 {
        let b = self.take(4);
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn u64(&mut self) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8));
        u64::from_le_bytes(a)
    }
    fn xor(&mut self, header: Header) -> Xor<'a> {
        let (n, sparse) = match header {
            Header::Long => {
                let head = self.u16();
                ((head & !SPARSE) as usize, head & SPARSE != 0)
            }
            Header::Short => {
                let head = self.take(1)[0];
                ((head & !SPARSE_SHORT) as usize, head & SPARSE_SHORT != 0)
            }
        };
        if !sparse {
            return Xor::Dense(self.take(n));
        }
        let map = self.take(n.div_ceil(8));
        Xor::Sparse { len: n, skip: 0, map, data: self.take(marked(map)) }
    }

    /// The fields of a lanes entry after its tag: the offset, the element size, the lanes
    /// written, and their payload.
    fn lanes(&mut self) -> (u32, u32, u32, Xor<'a>) {
        let offset = self.u16() as u32;
        let shape = self.take(1)[0];
        let (size, n) = (1u32 << (shape & 3), (shape >> 2) as usize + 1);
        // Assembled from its 1 to 4 bytes in registers: copying them into a 4-byte array
        // and loading that stalled the appending core (a store-forwarding failure).
        let lanes = self.take(n.div_ceil(8)).iter().rev().fold(0u32, |lanes, &b| lanes << 8 | u32::from(b));
        (offset, size, lanes, self.xor(Header::Short))
    }
}

/// Decodes the entries of one step's byte range; `own` is the step's thread (the writer of
/// tags 9 to 12). The log is written only by this module, so a malformed range is a bug;
/// decoding stops at the range's end.
pub fn decode(bytes: &[u8], own: u32) -> Vec<Entry<'_>> {
    entries(bytes, own).map(LogEntry::expand).collect()
}

/// An entry as undo and redo take it: any entry but a lanes entry, or a lanes entry whole
/// (its thread is the step's own).
pub enum Applied<'a> {
    Entry(LogEntry<Xor<'a>>),
    Lanes { offset: u32, size: u32, lanes: u32, xor: Xor<'a> },
}

/// [`entries`] with lanes entries whole, for undo and redo: [`xor_lanes`] applies one in a
/// vector where [`entries`] would split it into runs.
pub fn entries_whole(bytes: &[u8], own: u32) -> impl Iterator<Item = Applied<'_>> {
    let mut r = Reader { bytes, at: 0 };
    std::iter::from_fn(move || match r.bytes.get(r.at) {
        None => None,
        Some(&OWN_GRF_LANES) => {
            r.at += 1;
            let (offset, size, lanes, xor) = r.lanes();
            Some(Applied::Lanes { offset, size, lanes, xor })
        }
        Some(_) => Some(Applied::Entry(read_entry(&mut r, own))),
    })
}

/// XORs a lanes entry's payload into the register bytes from its offset on: the packed bytes
/// of its lanes (of `size` bytes each) go to those lanes.
pub fn xor_lanes(grf: &mut [u8], size: u32, lanes: u32, xor: Xor<'_>) {
    let span = (32 - lanes.leading_zeros()) as usize * size as usize;
    #[cfg(target_arch = "x86_64")]
    if span <= 64 && span <= grf.len() && matches!(size, 1 | 2 | 4 | 8) && avx512::available() {
        let at = lane_bytes(lanes, size);
        match xor {
            Xor::Dense(data) if data.len() <= 64 => return avx512::xor_expand(grf, at, None, data),
            Xor::Sparse { len, skip: 0, map, data } if len <= 64 && data.len() <= 64 => {
                let map = map_word(map);
                return avx512::xor_expand(grf, at, Some(map), data);
            }
            _ => {}
        }
    }
    let mut packed = 0;
    for (a, b) in lane_runs(lanes, size) {
        let (a, b) = (a as usize, b as usize);
        if let Some(bytes) = grf.get_mut(a..) {
            xor.window(packed, packed + b - a).apply(bytes);
        }
        packed += b - a;
    }
}

/// [`decode`] without expanding payloads or collecting (undo and redo, step by step). A
/// lanes entry comes out as one GRF entry per run of its lanes.
pub fn entries(bytes: &[u8], own: u32) -> impl Iterator<Item = LogEntry<Xor<'_>>> {
    let mut whole = entries_whole(bytes, own);
    // The runs of the lanes entry being read: its offset, runs left, payload, and where the
    // next run's bytes start in it.
    let mut runs: Option<(u32, LaneRuns, Xor<'_>, usize)> = None;
    std::iter::from_fn(move || loop {
        if let Some((offset, left, xor, at)) = &mut runs {
            if let Some((a, b)) = left.next() {
                let xor = xor.window(*at, *at + (b - a) as usize);
                *at += (b - a) as usize;
                return Some(LogEntry { thread: own, kind: Kind::Grf { offset: *offset + a, xor } });
            }
            runs = None;
        }
        match whole.next()? {
            Applied::Entry(e) => return Some(e),
            Applied::Lanes { offset, size, lanes, xor } => {
                runs = Some((offset, lane_runs(lanes, size), xor, 0))
            }
        }
    })
}

/// A location an entry wrote (for the write index).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Written {
    Grf { thread: u32, offset: u32, len: u32 },
    Pred { thread: u32, pred: u32 },
    Mem { space: MemSpace, addr: u64, len: u64 },
}

/// Calls `f` with each location a step's entries wrote, in log order. The compact GRF entry
/// (nearly every entry) is measured from its header without decoding its payload.
pub fn for_each_write(bytes: &[u8], own: u32, f: impl FnMut(Written)) {
    walk_writes::<false>(bytes, own, f)
}

/// [`for_each_write`] as the write index needs it, which is a superset (its queries check
/// the entries of the steps it names): a lanes entry comes out as one GRF write from its
/// first lane's bytes to its last one's, not one write per run of lanes. The appending core
/// indexes every step this way; runs took it a loop and a call per run.
pub fn for_each_write_span(bytes: &[u8], own: u32, f: impl FnMut(Written)) {
    walk_writes::<true>(bytes, own, f)
}

#[inline(always)]
fn walk_writes<const SPAN: bool>(bytes: &[u8], own: u32, mut f: impl FnMut(Written)) {
    let mut r = Reader { bytes, at: 0 };
    while let Some(&tag) = bytes.get(r.at) {
        if let (OWN_GRF, Some(&[lo, hi, head])) = (tag, bytes.get(r.at + 1..r.at + 4)) {
            let len = (head & !SPARSE_SHORT) as usize;
            let payload = if head & SPARSE_SHORT == 0 { len } else { sparse_size(bytes, r.at + 4, len) };
            f(Written::Grf { thread: own, offset: u16::from_le_bytes([lo, hi]) as u32, len: len as u32 });
            r.at += 4 + payload;
            continue;
        }
        if tag == OWN_GRF_LANES {
            r.at += 1;
            let (offset, size, lanes, _) = r.lanes();
            if SPAN {
                f(Written::Grf { thread: own, offset, len: (32 - lanes.leading_zeros()) * size });
                continue;
            }
            for (a, b) in lane_runs(lanes, size) {
                f(Written::Grf { thread: own, offset: offset + a, len: b - a });
            }
            continue;
        }
        let e = read_entry(&mut r, own);
        match e.kind {
            Kind::Grf { offset, xor } => f(Written::Grf { thread: e.thread, offset, len: xor.len() as u32 }),
            Kind::Pred { pred, .. } => f(Written::Pred { thread: e.thread, pred }),
            Kind::Mem { space, addr, xor } => f(Written::Mem { space, addr, len: xor.len() as u64 }),
            Kind::Addr { .. } | Kind::Control { .. } | Kind::Pc { .. } => {}
        }
    }
}

/// A sparse payload's map of at most 64 bytes as one word (bit `i`: byte `i`).
#[cfg(target_arch = "x86_64")]
fn map_word(map: &[u8]) -> u64 {
    map.iter().take(8).rev().fold(0u64, |m, &b| m << 8 | u64::from(b))
}

/// Bytes of a sparse payload of `len` bytes whose map starts at `at`: the map and the bytes
/// it marks.
fn sparse_size(bytes: &[u8], at: usize, len: usize) -> usize {
    let map_len = len.div_ceil(8);
    map_len + marked(&bytes[at..at + map_len])
}

/// How many bytes a sparse payload's map marks: one per bit set (a word at a time).
fn marked(map: &[u8]) -> usize {
    let (words, tail) = map.as_chunks::<8>();
    let set = words.iter().map(|w| u64::from_le_bytes(*w).count_ones()).sum::<u32>()
        + tail.iter().map(|b| b.count_ones()).sum::<u32>();
    set as usize
}

/// Decodes the entry at the reader's position (any but a lanes entry, which [`entries`] and
/// [`for_each_write`] read themselves).
fn read_entry<'a>(r: &mut Reader<'a>, own: u32) -> LogEntry<Xor<'a>> {
    let tag = r.take(1)[0];
    let thread = if matches!(tag, 9..=12 | OWN_PRED) { own } else { r.u32() };
    let kind = match tag {
        OWN_GRF => Kind::Grf { offset: r.u16() as u32, xor: r.xor(Header::Short) },
        0 | 9 => Kind::Grf { offset: r.u32(), xor: r.xor(Header::Long) },
        1 | 10 => Kind::Pred { pred: r.u32(), xor: r.u32() },
        OWN_PRED => Kind::Pred { pred: r.take(1)[0] as u32, xor: r.u16() as u32 },
        2 => Kind::Addr { slot: r.u32(), xor: r.u32() },
        3 => Kind::Mem { space: MemSpace::Svm, addr: r.u64(), xor: r.xor(Header::Long) },
        4 => {
            let group = r.u32();
            Kind::Mem { space: MemSpace::Slm(group), addr: r.u64(), xor: r.xor(Header::Long) }
        }
        5 => Kind::Control { index: r.u32() },
        // 6 and 12 (no other tag is written).
        _ => Kind::Pc { old: r.u32(), new: r.u32() },
    };
    LogEntry { thread, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for payloads.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Random old bytes of length `len`, and new ones with about `density` in 64 changed.
    fn write(next: &mut impl FnMut() -> u64, len: usize, density: u64) -> (Vec<u8>, Vec<u8>) {
        let old: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let new =
            old.iter().map(|&b| if next() % 64 < density { b ^ (next() as u8 | 1) } else { b }).collect();
        (old, new)
    }

    /// [`write`] of `n` lanes of `size` bytes where only the lanes set in `lanes` change.
    fn lanes_write(
        next: &mut impl FnMut() -> u64,
        n: u32,
        size: u32,
        lanes: u32,
        density: u64,
    ) -> (Vec<u8>, Vec<u8>) {
        let size = size as usize;
        let (old, mut new) = write(next, n as usize * size, density);
        for (lane, bytes) in new.chunks_mut(size).enumerate() {
            if lanes >> lane & 1 == 0 {
                bytes.copy_from_slice(&old[lane * size..][..size]);
            }
        }
        (old, new)
    }

    /// The vector encoder's bytes are the portable one's, at every length and density (on a
    /// CPU without AVX-512 VBMI2 only the portable encoder runs, and this checks nothing).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vector_and_portable_encoders_write_the_same_bytes() {
        if !avx512::available() {
            return;
        }
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut compared = 0;
        for len in 1..=MAX_SPARSE {
            for density in [0u64, 1, 3, 8, 20, 40, 64] {
                let (old, new) = write(&mut next, len, density);
                // A non-empty log with spare capacity: the encoders append at its end.
                let prefix: Vec<u8> = (0..(next() % 5) as u8).collect();
                let headers = [Header::Long, Header::Short];
                for header in headers.into_iter().filter(|&h| h == Header::Long || len <= MAX_SHORT) {
                    let (mut simd, mut portable) = (prefix.clone(), prefix.clone());
                    let wrote = avx512::put_sparse(&mut simd, header, &old, &new);
                    let portable_wrote = put_sparse_portable(&mut portable, header, &old, &new);
                    assert_eq!(wrote, portable_wrote, "len {len} density {density} {header:?}");
                    assert_eq!(simd, portable, "len {len} density {density} {header:?}");
                    compared += wrote as usize;
                }
            }
        }
        assert!(compared > MAX_SPARSE, "sparse forms compared: {compared}");
    }

    /// The encoder every CPU runs (with SSSE3, 16-byte chunks by byte shuffle, then words and
    /// bytes) writes the sparse form by its definition at every length and density: a bit
    /// per byte that changed, then those bytes in order, when that is shorter.
    #[test]
    fn portable_encoder_writes_the_sparse_form_by_its_definition() {
        let mut next = xorshift(0x51_7cc1_b727_220a);
        for len in 1..=MAX_SPARSE {
            for density in [0u64, 1, 3, 8, 20, 40, 64] {
                let (old, new) = write(&mut next, len, density);
                let xor: Vec<u8> = old.iter().zip(&new).map(|(a, b)| a ^ b).collect();
                let mut maps = vec![0u8; len.div_ceil(8)];
                for (i, x) in xor.iter().enumerate() {
                    maps[i / 8] |= ((*x != 0) as u8) << (i % 8);
                }
                let changed: Vec<u8> = xor.iter().copied().filter(|&x| x != 0).collect();
                let prefix: Vec<u8> = (0..(next() % 5) as u8).collect();
                let mut out = prefix.clone();
                let wrote = put_sparse_portable(&mut out, Header::Long, &old, &new);
                let what = format!("len {len} density {density}");
                assert_eq!(wrote, maps.len() + changed.len() < len, "{what}");
                let body = [&maps[..], &changed[..]].concat();
                // A long header: the length with its top bit set for the sparse form.
                let header = (len as u16 | 0x8000).to_le_bytes();
                let want = if wrote { [&prefix[..], &header[..], &body].concat() } else { prefix };
                assert_eq!(out, want, "{what}");
            }
        }
    }

    /// The vector encoder's lanes payloads are the portable gather's, at every element size,
    /// span of at most 64 bytes, lane pattern and density.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vector_and_portable_lanes_payloads_are_the_same_bytes() {
        if !avx512::available() {
            return;
        }
        let mut next = xorshift(0x7a9e5);
        for size in [1u32, 2, 4, 8] {
            for n in 1..=(64 / size).min(32) {
                for density in [0u64, 2, 10, 30, 64] {
                    let lanes = next() as u32 & ((1u64 << n) - 1) as u32;
                    let (old, new) = lanes_write(&mut next, n, size, lanes, density);
                    let prefix: Vec<u8> = (0..(next() % 5) as u8).collect();
                    let (mut simd, mut portable) = (prefix.clone(), prefix.clone());
                    put_packed(&mut simd, &old, &new, lanes, size);
                    put_packed_portable(&mut portable, &old, &new, lanes, size);
                    assert_eq!(simd, portable, "size {size} lanes {lanes:#x} of {n} density {density}");
                }
            }
        }
    }

    #[test]
    fn sparse_payloads_round_trip_and_are_smaller() {
        let old: Vec<u8> = (0..64).collect();
        let mut new = old.clone();
        new[3] ^= 0x10;
        new[40] ^= 0x01;
        let mut log = Vec::new();
        push_grf(&mut log, None, 0, &old, &new);
        assert!(log.len() < 1 + 2 + 1 + 16, "{} bytes", log.len());
        let e = decode(&log, 1);
        let EntryKind::Grf { xor, .. } = &e[0].kind else { panic!("grf") };
        let mut want = [0u8; 64];
        want[3] = 0x10;
        want[40] = 0x01;
        assert_eq!(&xor[..], &want[..]);
    }

    #[test]
    fn xor_payloads_of_every_length_and_density_round_trip_at_their_smallest() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for len in [1usize, 3, 7, 8, 9, 31, 64, 100, 128, 256, 257, 600] {
            for density in [0u64, 1, 4, 16, 64] {
                let (old, new) = write(&mut next, len, density);
                let want: Vec<u8> = old.iter().zip(&new).map(|(a, b)| a ^ b).collect();
                let changed = want.iter().filter(|&&x| x != 0).count();
                let sparse = len.div_ceil(8) + changed;
                let smallest = if len <= MAX_SPARSE { sparse.min(len) } else { len };
                // The step's own thread (a compact entry below 128 bytes), another thread, and
                // an offset beyond the compact entry's reach.
                let own = if len <= MAX_SHORT { 1 + 2 + 1 } else { 1 + 4 + 2 };
                for (thread, offset, header) in
                    [(None, 8, own), (Some(3), 8, 1 + 4 + 4 + 2), (None, 0x1_0008, 1 + 4 + 2)]
                {
                    let mut log = Vec::new();
                    push_grf(&mut log, thread, offset, &old, &new);
                    let entries = decode(&log, 2);
                    let EntryKind::Grf { xor, offset: at } = &entries[0].kind else { panic!("grf") };
                    let what = format!("len {len} density {density} thread {thread:?} offset {offset}");
                    let got = (&xor[..], *at, entries[0].thread);
                    assert_eq!(got, (&want[..], offset, thread.unwrap_or(2)), "{what}");
                    assert_eq!(log.len() - header, smallest, "{what}");
                    // Undo applies the payload as stored: the old bytes come back and the byte
                    // after them stays; into a shorter buffer, its first bytes come back.
                    let Some(LogEntry { kind: Kind::Grf { xor, .. }, .. }) = super::entries(&log, 2).next()
                    else {
                        panic!("{what}: grf")
                    };
                    let mut bytes = [&new[..], &[0xa5]].concat();
                    xor.apply(&mut bytes);
                    assert_eq!((&bytes[..len], bytes[len]), (&old[..], 0xa5), "{what}");
                    let mut short = new[..len / 2].to_vec();
                    xor.apply(&mut short);
                    assert_eq!(short, old[..len / 2], "{what}");
                }
            }
        }
    }

    #[test]
    fn entries_round_trip() {
        let mut log = Vec::new();
        push_grf(&mut log, Some(3), 64, &[1, 2, 3], &[1, 0, 7]);
        push_pred(&mut log, None, 1, 0b1010, 0b0110);
        push_mem(&mut log, 2, MemSpace::Slm(5), 12, &[9], &[8]);
        push_control(&mut log, 4, 17);
        push_pc(&mut log, None, 5, 9);
        push_pc(&mut log, Some(4), 1, 2);
        push_grf(&mut log, None, 40, &[1, 2], &[3, 2]);
        let entries = decode(&log, 9);
        assert_eq!(entries.len(), 7);
        assert_eq!(entries[4], Entry { thread: 9, kind: EntryKind::Pc { old: 5, new: 9 } });
        assert_eq!(entries[5], Entry { thread: 4, kind: EntryKind::Pc { old: 1, new: 2 } });
        assert_eq!(
            entries[6],
            Entry { thread: 9, kind: EntryKind::Grf { offset: 40, xor: Cow::Borrowed(&[2, 0]) } }
        );
        assert_eq!(
            entries[0],
            Entry { thread: 3, kind: EntryKind::Grf { offset: 64, xor: Cow::Borrowed(&[0, 2, 4]) } }
        );
        // An own-thread entry takes the step's thread.
        assert_eq!(entries[1], Entry { thread: 9, kind: EntryKind::Pred { pred: 1, xor: 0b1100 } });
        assert_eq!(
            entries[2].kind,
            EntryKind::Mem { space: MemSpace::Slm(5), addr: 12, xor: Cow::Borrowed(&[1]) }
        );
        assert_eq!(entries[3], Entry { thread: 4, kind: EntryKind::Control { index: 17 } });
    }

    /// A lanes entry reads back as the GRF entries its runs of lanes make on their own, in
    /// `entries`, `decode` and `for_each_write` alike, at every element size and pattern of
    /// two runs or more (disabled lanes keep their bytes, as the interpreter leaves them); it
    /// is shorter than those entries together; and what it cannot hold goes out as them.
    #[test]
    fn lanes_entries_read_back_as_their_runs() {
        let mut next = xorshift(0x1a2e5);
        let (mut lanes_bytes, mut runs_bytes) = (0, 0);
        for size in [1u32, 2, 4, 8] {
            for _ in 0..200 {
                // A span of 3 to 32 lanes, its first and last written and one between not.
                let n = (3 + next() % 30) as u32;
                let hole = 1 + (next() % (n as u64 - 2)) as u32;
                let lanes = ((next() as u32) & ((1u64 << n) - 1) as u32 | 1 | 1 << (n - 1)) & !(1 << hole);
                if lanes.count_ones() * size > MAX_SHORT as u32 {
                    continue;
                }
                let density = 1 + next() % 64;
                let (old, new) = lanes_write(&mut next, n, size, lanes, density);
                let offset = 32 * (next() % 100) as u32;
                let mut lanes_log = vec![OWN_GRF, 0, 0, 0];
                let mut runs_log = lanes_log.clone();
                push_grf_lanes(&mut lanes_log, None, offset, size, lanes, &old, &new);
                let runs: Vec<_> = crate::exec::lane_runs(lanes, size).collect();
                for &(a, b) in &runs {
                    let (a, b) = (a as usize, b as usize);
                    push_grf(&mut runs_log, None, offset + a as u32, &old[a..b], &new[a..b]);
                }
                let what = format!("size {size} lanes {lanes:#x} of {n}");
                assert_eq!(lanes_log[4], OWN_GRF_LANES, "{what}");
                assert_eq!(decode(&lanes_log, 5), decode(&runs_log, 5), "{what}");
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for_each_write(&lanes_log, 5, |w| a.push(w));
                for_each_write(&runs_log, 5, |w| b.push(w));
                assert_eq!(a, b, "{what}");
                // For the index: one write from the first run's start to the last run's end
                // (after the empty entry the log starts with).
                let mut span = Vec::new();
                for_each_write_span(&lanes_log, 5, |w| span.push(w));
                let (start, end) = (runs[0].0, runs[runs.len() - 1].1);
                let want = Written::Grf { thread: 5, offset: offset + start, len: end - start };
                assert_eq!(span, [a[0], want], "{what}");
                // Undo through the stored payloads: the old bytes come back, every byte once.
                let mut grf = new.clone();
                for e in entries(&lanes_log[4..], 5) {
                    let Kind::Grf { offset: at, xor } = e.kind else { panic!("{what}: {e:?}") };
                    xor.apply(&mut grf[(at - offset) as usize..]);
                }
                assert_eq!(grf, old, "{what}");
                // And whole, as undo and redo take it (the byte after the span stays).
                let mut grf = [&new[..], &[0x5a]].concat();
                for e in entries_whole(&lanes_log[4..], 5) {
                    let Applied::Lanes { offset: at, size: s, lanes: l, xor } = e else { panic!("{what}") };
                    assert_eq!((at, s, l), (offset, size, lanes), "{what}");
                    xor_lanes(&mut grf, s, l, xor);
                }
                assert_eq!((&grf[..old.len()], grf[old.len()]), (&old[..], 0x5a), "{what}");
                assert!(runs.len() >= 2, "{what}");
                lanes_bytes += lanes_log.len() - 4;
                runs_bytes += runs_log.len() - 4;
            }
        }
        assert!(lanes_bytes * 4 < runs_bytes * 3, "{lanes_bytes} bytes against {runs_bytes}");
        // Another thread's write, a high offset and a 128-byte span take the runs' entries.
        let lanes = 0b1011_0101;
        for (thread, offset, size) in [(Some(3), 64, 4), (None, 0x1_0000, 4), (None, 64, 16)] {
            let n = 8 * size as usize;
            let (old, new) = (vec![0u8; n], vec![7u8; n]);
            let (mut lanes_log, mut runs_log) = (Vec::new(), Vec::new());
            push_grf_lanes(&mut lanes_log, thread, offset, size, lanes, &old, &new);
            for (a, b) in lane_runs(lanes, size) {
                let (a, b) = (a as usize, b as usize);
                push_grf(&mut runs_log, thread, offset + a as u32, &old[a..b], &new[a..b]);
            }
            assert_eq!(lanes_log, runs_log, "{thread:?} {offset} {size}");
        }
    }

    /// A predicate write of the step's own thread takes 4 bytes when its predicate number and
    /// changed lanes fit (SIMD16 or narrower, predicate below 256), 9 otherwise, and reads
    /// back the same either way.
    #[test]
    fn predicate_entries_are_compact_where_they_fit() {
        for (thread, pred, old, new, size) in [
            (None, 3, 0x0000_00f0, 0x0000_ff0f, 4),
            (None, 255, 0, 0xffff, 4),
            (None, 2, 0x0001_0000, 0, 9),
            (None, 256, 0, 1, 9),
            (Some(7), 1, 0, 1, 13),
        ] {
            let mut log = Vec::new();
            push_pred(&mut log, thread, pred, old, new);
            assert_eq!(log.len(), size, "{thread:?} P{pred} {old:#x} -> {new:#x}");
            let want = Entry { thread: thread.unwrap_or(5), kind: EntryKind::Pred { pred, xor: old ^ new } };
            assert_eq!(decode(&log, 5), vec![want]);
            let mut written = Vec::new();
            for_each_write(&log, 5, |w| written.push(w));
            assert_eq!(written, vec![Written::Pred { thread: thread.unwrap_or(5), pred }]);
        }
    }

    /// What the write index is built from: every written location of a step's entries, in
    /// order, the compact GRF entries measured from their headers (sparse at every density,
    /// and dense) and the rest decoded; pc, control and address entries write nothing the
    /// index keeps.
    #[test]
    fn for_each_write_names_every_location_written() {
        let mut next = xorshift(0x5eed);
        let mut log = Vec::new();
        let mut want = Vec::new();
        for (i, len) in [1usize, 3, 8, 9, 16, 17, 32, 64, 100, MAX_SHORT].into_iter().enumerate() {
            for density in [0u64, 2, 20, 64] {
                let (old, new) = write(&mut next, len, density);
                let offset = 0x40 * i as u32 + density as u32;
                push_grf(&mut log, None, offset, &old, &new);
                want.push(Written::Grf { thread: 7, offset, len: len as u32 });
            }
        }
        push_grf(&mut log, Some(9), 0x80, &[0; 4], &[1; 4]);
        push_grf(&mut log, None, 0x1_0000, &[0; 8], &[1; 8]);
        push_grf(&mut log, None, 0x20, &[0; 200], &[1; 200]);
        push_pred(&mut log, None, 3, 0, 0xffff);
        push_pred(&mut log, Some(9), 2, 1, 0);
        push_mem(&mut log, 7, MemSpace::Slm(5), 0x1000, &[0; 12], &[1; 12]);
        push_mem(&mut log, 7, MemSpace::Svm, 0x2000, &[0; 4], &[0; 4]);
        push_pc(&mut log, None, 5, 6);
        push_control(&mut log, 7, 3);
        push_addr(&mut log, 7, 0, 1, 2);
        want.extend([
            Written::Grf { thread: 9, offset: 0x80, len: 4 },
            Written::Grf { thread: 7, offset: 0x1_0000, len: 8 },
            Written::Grf { thread: 7, offset: 0x20, len: 200 },
            Written::Pred { thread: 7, pred: 3 },
            Written::Pred { thread: 9, pred: 2 },
            Written::Mem { space: MemSpace::Slm(5), addr: 0x1000, len: 12 },
            Written::Mem { space: MemSpace::Svm, addr: 0x2000, len: 4 },
        ]);
        let mut got = Vec::new();
        for_each_write(&log, 7, |w| got.push(w));
        assert_eq!(got, want);
    }
}
