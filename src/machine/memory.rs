//! Memories shared by threads: the SVM address space (sparse, page-granular, copy-on-write
//! pages in a persistent map, so a checkpoint is an O(1) clone) and each work-group's SLM.

use std::fmt;
use std::sync::Arc;

pub const PAGE_SIZE: u64 = 4096;

/// Which memory an access goes to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Svm,
    /// Shared local memory of a work-group.
    Slm(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemError {
    /// No mapped region contains `[addr, addr+len)`.
    Unmapped { addr: u64, len: u64 },
    /// SLM access past its size.
    SlmOutOfBounds { addr: u64, len: u64, size: u64 },
    /// A write (or a debugger read) reaching past a buffer's end into the padding of its last page.
    PastEnd { addr: u64, len: u64, buffer: String, buffer_len: u64 },
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemError::Unmapped { addr, len } => {
                write!(f, "access to unmapped SVM memory at {addr:#x} ({len} bytes)")
            }
            MemError::SlmOutOfBounds { addr, len, size } => write!(
                f,
                "SLM access at {addr:#x} ({len} bytes) is outside the {size}-byte shared local memory"
            ),
            MemError::PastEnd { addr, len, buffer, buffer_len } => write!(
                f,
                "{len} bytes at {addr:#x} reach past the end of the {buffer_len}-byte buffer `{buffer}`"
            ),
        }
    }
}

/// A mapped SVM range `[start, start+len)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    pub name: String,
    /// Bytes past `len` that read as zeros and cannot be written: the rest of the last page
    /// of a buffer the driver allocated in whole pages (see [`Svm::map_buffer`]).
    pub padding: u64,
}

/// Reads that reached past a buffer's end into its padding (compilers widen reads: a
/// three-float read becomes one 16-byte load): how many, and the first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OverReads {
    pub count: u64,
    /// (instruction index, thread, address, length, buffer start, buffer length).
    pub first: Option<OverRead>,
}

/// One read past a buffer's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverRead {
    pub inst: u32,
    pub thread: u32,
    pub addr: u64,
    pub len: u64,
    pub buffer_start: u64,
    pub buffer_len: u64,
}

impl OverReads {
    /// Adds `other`'s reads (a later part of the same run).
    pub fn add(&mut self, other: &OverReads) {
        self.count += other.count;
        if self.first.is_none() {
            self.first = other.first.clone();
        }
    }
}

type Page = [u8; PAGE_SIZE as usize];

/// Pages by number, hashed by [`super::FastHasher`].
type Pages = imbl::GenericHashMap<
    u64,
    Arc<Page>,
    std::hash::BuildHasherDefault<super::FastHasher>,
    imbl::shared_ptr::DefaultSharedPtr,
>;

/// The shared virtual memory: mapped regions (an access must lie inside one) backed by
/// copy-on-write pages allocated on first touch.
#[derive(Debug, Default)]
pub struct Svm {
    regions: Vec<Region>,
    /// A persistent map: cloning the SVM for a checkpoint shares the map's structure and
    /// every page; a write copies one page and one path of the map.
    pages: Pages,
    /// When set, the byte ranges instructions read and wrote (see [`Accesses`]).
    pub accesses: Option<Box<Accesses>>,
    /// Reads past a buffer's end into its padding, noted by the instructions that made them.
    pub over_reads: OverReads,
    /// Pages this memory and the copies it was made from made: written first, or copied on
    /// a write because a copy shared them ([`Svm::pages_made_since`]).
    made: u64,
}

/// The SVM bytes a run's instructions read and wrote, for running work-groups on several
/// cores (`exec::cores`): a chunk's run is valid only if it touched nothing that the groups
/// before it wrote. Atomics count as both, except, when `folding` is on, those that
/// [fold](Fold). Noted by `Ctx`'s memory accesses themselves, not through an `Observer`: an
/// active observer makes every register write capture its old bytes, which a plain run does
/// not need.
#[derive(Clone, Debug, Default)]
pub struct Accesses {
    pub reads: Ranges,
    pub writes: Ranges,
    /// The bytes updated by atomics that fold, by kind of fold (only with `folding`).
    pub folds: Vec<(Fold, Ranges)>,
    /// Reads are not noted (the groups whose writes alone are checked against).
    pub writes_only: bool,
    /// Atomics that fold are noted in `folds` rather than as a read and a write: for runs
    /// whose chunks join by their end values alone (a recording's chunk also carries the
    /// old values it saw, which folding would change).
    pub folding: bool,
}

impl Accesses {
    /// Notes of writes alone.
    pub fn writes_only() -> Accesses {
        Accesses { writes_only: true, ..Accesses::default() }
    }

    /// These notes, with atomics that fold noted as such.
    pub fn folding(self) -> Accesses {
        Accesses { folding: true, ..self }
    }

    /// Notes an update of `len` bytes at `addr` by `fold`.
    pub fn add_fold(&mut self, fold: Fold, addr: u64, len: u64) {
        match self.folds.iter_mut().find(|(f, _)| *f == fold) {
            Some((_, ranges)) => ranges.add(addr, len),
            None => {
                let mut ranges = Ranges::default();
                ranges.add(addr, len);
                self.folds.push((fold, ranges));
            }
        }
    }

    /// Every set [normalized](Ranges::normalize).
    pub fn normalize(&mut self) {
        self.reads.normalize();
        self.writes.normalize();
        for (_, ranges) in &mut self.folds {
            ranges.normalize();
        }
    }
}

/// An integer atomic update of `size` bytes (2, 4 or 8) whose old value goes nowhere (its
/// message has no destination), by an operation under which updates commute: whatever
/// order two runs' updates of one location come in, memory ends the same. So a run from a
/// start value `s` to an end value `e` folds onto the value `v` another run left there:
/// `v + (e - s)` for additions (`inc`, `dec` and `sub` are additions too), `v ^ e ^ s` for
/// xor, `op(v, e)` for minimum, maximum, and, or.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fold {
    pub op: FoldOp,
    pub size: u32,
}

/// The operations of a [`Fold`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FoldOp {
    Add,
    UMin,
    UMax,
    SMin,
    SMax,
    And,
    Or,
    Xor,
}

impl Fold {
    /// What a run that took a location from `start` to `end` (both `size` bytes, zero-extended)
    /// carries to [`Fold::onto`].
    pub fn delta(self, start: u64, end: u64) -> u64 {
        match self.op {
            FoldOp::Add => end.wrapping_sub(start) & self.mask(),
            FoldOp::Xor => end ^ start,
            _ => end,
        }
    }

    /// `value` with a run's updates, summed up as `delta`, laid on.
    pub fn onto(self, value: u64, delta: u64) -> u64 {
        let signed = |v: u64| ((v << (64 - self.size * 8)) as i64) >> (64 - self.size * 8);
        let r = match self.op {
            FoldOp::Add => value.wrapping_add(delta),
            FoldOp::Xor => value ^ delta,
            FoldOp::UMin => value.min(delta),
            FoldOp::UMax => value.max(delta),
            FoldOp::SMin => signed(value).min(signed(delta)) as u64,
            FoldOp::SMax => signed(value).max(signed(delta)) as u64,
            FoldOp::And => value & delta,
            FoldOp::Or => value | delta,
        };
        r & self.mask()
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.size * 8)
    }

    /// Lays the updates a run made to `end` (its bytes where it ended), from `start` (the
    /// same bytes where it started), onto `value` (the same bytes in another run).
    pub fn lay(self, start: &[u8], end: &[u8], value: &mut [u8]) {
        let n = self.size as usize;
        let le = |b: &[u8]| b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
        for ((s, e), v) in start.chunks_exact(n).zip(end.chunks_exact(n)).zip(value.chunks_exact_mut(n)) {
            let folded = self.onto(le(v), self.delta(le(s), le(e)));
            v.copy_from_slice(&folded.to_le_bytes()[..n]);
        }
    }
}

/// A set of byte ranges `[start, end)`. Adding a range that continues the last one extends it
/// (lanes of a gather or scatter usually touch consecutive bytes); [`Ranges::normalize`] sorts
/// and merges them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges(Vec<(u64, u64)>);

impl Ranges {
    #[inline]
    pub fn add(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        match self.0.last_mut() {
            _ if len == 0 => {}
            Some(last) if last.1 == start => last.1 = end,
            Some(last) if last.0 <= start && end <= last.1 => {}
            _ => self.0.push((start, end)),
        }
    }

    /// Sorted, disjoint and not touching.
    pub fn normalize(&mut self) {
        self.0.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.0.len());
        for &(s, e) in &self.0 {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.0 = merged;
    }

    /// Whether any byte is in both (both normalized).
    pub fn intersects(&self, other: &Ranges) -> bool {
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            if a.1 <= b.0 {
                i += 1;
            } else if b.1 <= a.0 {
                j += 1;
            } else {
                return true;
            }
        }
        false
    }

    /// Adds all of `other`; the result is normalized.
    pub fn union(&mut self, other: &Ranges) {
        self.0.extend_from_slice(&other.0);
        self.normalize();
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.iter().copied()
    }
}

static ZERO_PAGE: Page = [0; PAGE_SIZE as usize];

/// A copy of the memory, without the notes of accesses: those belong to the run that makes
/// them, not to its state (a checkpoint taken while they are on does not copy them).
impl Clone for Svm {
    fn clone(&self) -> Svm {
        Svm {
            regions: self.regions.clone(),
            pages: self.pages.clone(),
            accesses: None,
            over_reads: self.over_reads.clone(),
            made: self.made,
        }
    }
}

/// Pages one copy of a memory changed since it was another ([`Svm::changed_since`]).
#[derive(Clone, Debug, Default)]
pub struct PageChanges(Vec<(u64, Arc<Page>)>);

impl Svm {
    /// Maps `[start, start+len)` under `name`, zero-filled. Regions must not overlap.
    pub fn map(&mut self, start: u64, len: u64, name: &str) {
        self.map_padded(start, len, 0, name);
    }

    /// Maps a buffer as the driver allocates it: in whole pages, the rest of the last page
    /// readable (as zeros) and not writable. `start` must be page-aligned and the next
    /// region start at or after the page end.
    pub fn map_buffer(&mut self, start: u64, len: u64, name: &str) {
        let padding = len.next_multiple_of(PAGE_SIZE).max(PAGE_SIZE) - len;
        self.map_padded(start, len, padding, name);
    }

    fn map_padded(&mut self, start: u64, len: u64, padding: u64, name: &str) {
        self.regions.push(Region { start, len, name: name.to_string(), padding });
        self.regions.sort_by_key(|r| r.start);
    }

    /// The region whose readable bytes (its padding too) hold all of `[addr, addr+len)`.
    fn readable_region(&self, addr: u64, len: u64) -> Option<&Region> {
        let idx = self.regions.partition_point(|r| r.start <= addr);
        let region = self.regions.get(idx.checked_sub(1)?)?;
        let end = addr.checked_add(len)?;
        (end <= region.start + region.len + region.padding).then_some(region)
    }

    /// Reads `out.len()` bytes at `addr`; `Ok(Some(region))` when the read reached into a
    /// buffer's padding past its end (the caller notes it as an over-read).
    pub fn read_noting(&self, addr: u64, out: &mut [u8]) -> Result<Option<(u64, u64)>, MemError> {
        let len = out.len() as u64;
        let region = self.readable_region(addr, len).ok_or(MemError::Unmapped { addr, len })?;
        let past = (addr + len > region.start + region.len).then_some((region.start, region.len));
        self.read_unchecked(addr, out);
        Ok(past)
    }

    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region containing all of `[addr, addr+len)`, if any.
    pub fn region_of(&self, addr: u64, len: u64) -> Option<&Region> {
        let idx = self.regions.partition_point(|r| r.start <= addr);
        let region = self.regions.get(idx.checked_sub(1)?)?;
        let end = addr.checked_add(len)?;
        (end <= region.start + region.len).then_some(region)
    }

    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        match (self.region_of(addr, len), self.readable_region(addr, len)) {
            (Some(_), _) => Ok(()),
            (None, Some(r)) => {
                Err(MemError::PastEnd { addr, len, buffer: r.name.clone(), buffer_len: r.len })
            }
            (None, None) => Err(MemError::Unmapped { addr, len }),
        }
    }

    /// Reads `out.len()` bytes at `addr` (a buffer's padding reads as zeros).
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        self.read_noting(addr, out).map(|_| ())
    }

    /// Reads `out.len()` bytes at `addr` inside a buffer's own bytes (not its padding): what
    /// the debugger shows and compares is what the program owns.
    pub fn read_owned(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        self.check(addr, out.len() as u64)?;
        self.read_unchecked(addr, out);
        Ok(())
    }

    fn read_unchecked(&self, addr: u64, out: &mut [u8]) {
        let mut done = 0usize;
        while done < out.len() {
            let a = addr + done as u64;
            let (page_no, in_page) = (a / PAGE_SIZE, (a % PAGE_SIZE) as usize);
            let n = (PAGE_SIZE as usize - in_page).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.page(page_no)[in_page..in_page + n]);
            done += n;
        }
    }

    /// Writes `bytes` at `addr`, copying a page first if a checkpoint shares it.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), MemError> {
        self.check(addr, bytes.len() as u64)?;
        let mut done = 0usize;
        while done < bytes.len() {
            let a = addr + done as u64;
            let (page_no, in_page) = (a / PAGE_SIZE, (a % PAGE_SIZE) as usize);
            let n = (PAGE_SIZE as usize - in_page).min(bytes.len() - done);
            self.page_mut(page_no)[in_page..in_page + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// The bounds `[start, end)` of the bytes a buffer owns (not its padding) around
    /// `[addr, addr+len)`, when one region holds all of them: accesses inside need no
    /// further check.
    pub fn owned_bounds(&self, addr: u64, len: u64) -> Option<(u64, u64)> {
        self.region_of(addr, len).map(|r| (r.start, r.start + r.len))
    }

    /// Page `page_no` to read (the zero page when never written).
    pub fn page(&self, page_no: u64) -> &[u8; PAGE_SIZE as usize] {
        self.pages.get(&page_no).map(|p| &**p).unwrap_or(&ZERO_PAGE)
    }

    /// Page `page_no` to write, as [`Svm::write`] gets it: made on first touch, copied when
    /// a copy of the memory shares it. The caller has checked that its bytes are mapped.
    pub fn page_mut(&mut self, page_no: u64) -> &mut [u8; PAGE_SIZE as usize] {
        let made = &mut self.made;
        let page = self.pages.entry(page_no).or_insert_with(|| {
            *made += 1;
            Arc::new(ZERO_PAGE)
        });
        if Arc::get_mut(page).is_none() {
            *made += 1;
        }
        Arc::make_mut(page)
    }

    /// Pages held (each written page, whether or not its bytes are zero).
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Pages of `self` not shared with `earlier`, an earlier copy of it (what a checkpoint
    /// costs beyond the one before): the pages made since, counted as they are made, where
    /// comparing the two maps looked up every page (1.6% of a Collatz recording).
    pub fn pages_made_since(&self, earlier: &Svm) -> u64 {
        self.made.saturating_sub(earlier.made)
    }

    /// The pages of `self` that are not `base`'s: those written since `self` was a copy of
    /// `base` (a written page is copied first, so sharing tells).
    pub fn changed_since(&self, base: &Svm) -> PageChanges {
        let mut pages: Vec<(u64, Arc<Page>)> = (self.pages.iter())
            .filter(|(no, page)| base.pages.get(no).is_none_or(|b| !Arc::ptr_eq(b, page)))
            .map(|(&no, page)| (no, page.clone()))
            .collect();
        pages.sort_unstable_by_key(|(no, _)| *no);
        PageChanges(pages)
    }

    /// Takes in the pages `changed` (pages of a copy of `base`, changed since it was), each
    /// with the bytes `theirs` (changes another copy of `base` made) changed in it too: such
    /// a page is `changed`'s xor `theirs`' xor `base`'s, which keeps both copies' writes
    /// when no byte was written by both (the caller's to check).
    pub fn take_pages(&mut self, changed: &PageChanges, base: &Svm, theirs: &PageChanges) {
        for (no, page) in &changed.0 {
            let page = match theirs.0.binary_search_by_key(no, |(n, _)| *n) {
                Ok(at) => {
                    let mut merged = **page;
                    let before = base.pages.get(no).map_or(&ZERO_PAGE, |b| &**b);
                    for ((m, t), b) in merged.iter_mut().zip(theirs.0[at].1.iter()).zip(before.iter()) {
                        *m ^= t ^ b;
                    }
                    Arc::new(merged)
                }
                Err(_) => page.clone(),
            };
            self.pages.insert(*no, page);
        }
    }

    /// Non-zero pages in address order (an absent page and a zero page are the same state).
    pub fn nonzero_pages(&self) -> Vec<(u64, &[u8])> {
        let mut pages: Vec<(u64, &[u8])> = self
            .pages
            .iter()
            .filter(|(_, p)| p.iter().any(|&b| b != 0))
            .map(|(&no, p)| (no, &p[..]))
            .collect();
        pages.sort_unstable_by_key(|(no, _)| *no);
        pages
    }
}

/// Every work-group's SLM: the list shared with checkpoints as a whole (a kernel that uses
/// no SLM, or a stretch that writes none, copies nothing per checkpoint, where a list of a
/// pointer per group cost a reference count each: 1,024 a checkpoint on Collatz), and each
/// SLM on its own. Reads go through the slice it derefs to; writes through `get_mut`.
#[derive(Clone, Debug, Default)]
pub struct Slms(Arc<Vec<Arc<Slm>>>);

impl From<Vec<Arc<Slm>>> for Slms {
    fn from(list: Vec<Arc<Slm>>) -> Slms {
        Slms(Arc::new(list))
    }
}

impl std::ops::Deref for Slms {
    type Target = [Arc<Slm>];
    fn deref(&self) -> &[Arc<Slm>] {
        &self.0
    }
}

impl Slms {
    /// Group `g`'s SLM to write: copied first where a copy shares it (or the list).
    pub fn get_mut(&mut self, g: usize) -> Option<&mut Slm> {
        if g >= self.0.len() {
            return None;
        }
        Some(Arc::make_mut(&mut Arc::make_mut(&mut self.0)[g]))
    }

    pub fn push(&mut self, slm: Arc<Slm>) {
        Arc::make_mut(&mut self.0).push(slm);
    }

    /// Takes the first `n` groups' SLMs from `head`.
    pub fn set_head(&mut self, head: &Slms, n: usize) {
        let same = |(a, b): (&Arc<Slm>, &Arc<Slm>)| Arc::ptr_eq(a, b);
        if Arc::ptr_eq(&self.0, &head.0) || self.0.iter().zip(head.0.iter()).take(n).all(same) {
            return;
        }
        for (mine, theirs) in Arc::make_mut(&mut self.0).iter_mut().zip(head.0.iter()).take(n) {
            *mine = theirs.clone();
        }
    }

    /// Bytes of the SLMs not shared with `earlier` (an earlier copy).
    pub fn unshared_bytes(&self, earlier: &Slms) -> u64 {
        if Arc::ptr_eq(&self.0, &earlier.0) {
            return 0;
        }
        let unshared = self
            .0
            .iter()
            .enumerate()
            .filter(|(i, slm)| earlier.0.get(*i).is_none_or(|e| !Arc::ptr_eq(slm, e)));
        unshared.map(|(_, slm)| slm.bytes.len() as u64).sum()
    }
}

/// One work-group's shared local memory.
#[derive(Clone, Debug, Default)]
pub struct Slm {
    pub bytes: Vec<u8>,
}

impl Slm {
    pub fn new(size: usize) -> Slm {
        Slm { bytes: vec![0; size] }
    }

    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, MemError> {
        let size = self.bytes.len() as u64;
        match addr.checked_add(len as u64) {
            Some(end) if end <= size => Ok(addr as usize..end as usize),
            _ => Err(MemError::SlmOutOfBounds { addr, len: len as u64, size }),
        }
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let r = self.range(addr, out.len())?;
        out.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), MemError> {
        let r = self.range(addr, bytes.len())?;
        self.bytes[r].copy_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(list: &[(u64, u64)]) -> Ranges {
        let mut r = Ranges::default();
        for &(s, e) in list {
            r.add(s, e - s);
        }
        r.normalize();
        r
    }

    #[test]
    fn ranges_merge_touching_and_overlapping_bytes_only() {
        let mut r = Ranges::default();
        // Lanes of a gather: consecutive dwords extend one range as they come.
        for lane in 0..16 {
            r.add(0x100 + 4 * lane, 4);
        }
        assert_eq!(r.iter().collect::<Vec<_>>(), [(0x100, 0x140)]);
        r.add(0x200, 4);
        r.add(0x50, 8);
        r.add(0x13c, 8);
        r.normalize();
        assert_eq!(r.iter().collect::<Vec<_>>(), [(0x50, 0x58), (0x100, 0x144), (0x200, 0x204)]);
        let mut u = ranges(&[(0x58, 0x60), (0x300, 0x301)]);
        u.union(&r);
        assert_eq!(
            u.iter().collect::<Vec<_>>(),
            [(0x50, 0x60), (0x100, 0x144), (0x200, 0x204), (0x300, 0x301)]
        );
    }

    #[test]
    fn ranges_intersect_on_a_shared_byte_not_on_a_shared_edge() {
        let a = ranges(&[(0, 4), (16, 20), (40, 48)]);
        assert!(!a.intersects(&ranges(&[(4, 16), (20, 40), (48, 60)])));
        assert!(a.intersects(&ranges(&[(4, 17)])));
        assert!(a.intersects(&ranges(&[(47, 48)])));
        assert!(ranges(&[(47, 48)]).intersects(&a));
        assert!(!a.intersects(&Ranges::default()));
        // An empty access touches nothing.
        assert!(!a.intersects(&ranges(&[(2, 2)])));
    }

    #[test]
    fn svm_faults_outside_regions_and_across_their_end() {
        let mut svm = Svm::default();
        svm.map(0x1_0000_0000, 100, "buf0");
        let mut b = [0u8; 4];
        assert!(svm.read(0x1_0000_0000, &mut b).is_ok());
        assert!(svm.read(0x1_0000_0000 + 96, &mut b).is_ok());
        assert_eq!(
            svm.read(0x1_0000_0000 + 97, &mut b),
            Err(MemError::Unmapped { addr: 0x1_0000_0000 + 97, len: 4 })
        );
        assert!(svm.read(0xfff, &mut b).is_err());
    }

    #[test]
    fn svm_writes_cross_pages_and_copy_on_write_keeps_clones_apart() {
        let mut svm = Svm::default();
        svm.map(0x2000, 3 * PAGE_SIZE, "b");
        let data: Vec<u8> = (0..16).collect();
        svm.write(0x2000 + PAGE_SIZE - 8, &data).expect("write");
        let snapshot = svm.clone();
        svm.write(0x2000 + PAGE_SIZE - 8, &[0xff; 16]).expect("write");
        let mut back = [0u8; 16];
        snapshot.read(0x2000 + PAGE_SIZE - 8, &mut back).expect("read");
        assert_eq!(&back[..], &data[..]);
        svm.read(0x2000 + PAGE_SIZE - 8, &mut back).expect("read");
        assert_eq!(back, [0xff; 16]);
    }

    #[test]
    fn slm_bounds() {
        let mut slm = Slm::new(64);
        assert!(slm.write(60, &[1, 2, 3, 4]).is_ok());
        assert!(slm.write(61, &[1, 2, 3, 4]).is_err());
        assert!(slm.write(u64::MAX, &[1]).is_err());
    }
}

#[cfg(test)]
mod buffer_tests {
    use super::*;

    #[test]
    fn a_buffers_padding_reads_as_zeros_is_noted_and_cannot_be_written() {
        let mut svm = Svm::default();
        svm.map_buffer(0x10000, 16, "buf");
        svm.write(0x10000, &[7; 16]).expect("inside");
        let mut out = [1u8; 8];
        assert_eq!(svm.read_noting(0x1000c, &mut out), Ok(Some((0x10000, 16))));
        assert_eq!(out, [7, 7, 7, 7, 0, 0, 0, 0]);
        assert_eq!(svm.read_noting(0x10000, &mut out), Ok(None));
        // Up to the page end, and not a byte further.
        let mut last = [0u8; 4];
        assert!(svm.read(0x10ffc, &mut last).is_ok());
        assert!(svm.read(0x10ffe, &mut last).is_err());
        assert!(svm.write(0x1000c, &[1; 8]).is_err(), "a write past the end stays a fault");
        // A plain mapping has no padding.
        svm.map(0x20000, 16, "exact");
        assert!(svm.read(0x2000c, &mut out).is_err());
    }
}
