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
        }
    }
}

/// A mapped SVM range `[start, start+len)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    pub name: String,
}

type Page = [u8; PAGE_SIZE as usize];

/// The shared virtual memory: mapped regions (an access must lie inside one) backed by
/// copy-on-write pages allocated on first touch.
#[derive(Clone, Debug, Default)]
pub struct Svm {
    regions: Vec<Region>,
    /// A persistent map: cloning the SVM for a checkpoint shares the map's structure and
    /// every page; a write copies one page and one path of the map.
    pages: imbl::HashMap<u64, Arc<Page>>,
}

static ZERO_PAGE: Page = [0; PAGE_SIZE as usize];

impl Svm {
    /// Maps `[start, start+len)` under `name`, zero-filled. Regions must not overlap.
    pub fn map(&mut self, start: u64, len: u64, name: &str) {
        self.regions.push(Region { start, len, name: name.to_string() });
        self.regions.sort_by_key(|r| r.start);
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
        match self.region_of(addr, len) {
            Some(_) => Ok(()),
            None => Err(MemError::Unmapped { addr, len }),
        }
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        self.check(addr, out.len() as u64)?;
        let mut done = 0usize;
        while done < out.len() {
            let a = addr + done as u64;
            let (page_no, in_page) = (a / PAGE_SIZE, (a % PAGE_SIZE) as usize);
            let n = (PAGE_SIZE as usize - in_page).min(out.len() - done);
            let page = self.pages.get(&page_no).map(|p| &**p).unwrap_or(&ZERO_PAGE);
            out[done..done + n].copy_from_slice(&page[in_page..in_page + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `bytes` at `addr`, copying a page first if a checkpoint shares it.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), MemError> {
        self.check(addr, bytes.len() as u64)?;
        let mut done = 0usize;
        while done < bytes.len() {
            let a = addr + done as u64;
            let (page_no, in_page) = (a / PAGE_SIZE, (a % PAGE_SIZE) as usize);
            let n = (PAGE_SIZE as usize - in_page).min(bytes.len() - done);
            let page = self.pages.entry(page_no).or_insert_with(|| Arc::new(ZERO_PAGE));
            Arc::make_mut(page)[in_page..in_page + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Pages of `self` not shared with `other` (what a checkpoint costs beyond `other`).
    pub fn unshared_pages(&self, other: &Svm) -> usize {
        self.pages
            .iter()
            .filter(|(no, page)| other.pages.get(no).is_none_or(|o| !Arc::ptr_eq(o, page)))
            .count()
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
