//! Which work-item each lane of each hardware thread holds in an OpenCL launch, and the way
//! back: kernel authors name a work-item by its global id, vdb by a thread and a lane.
//!
//! The layout is the one the payload is built with (`payload::write_local_ids` and
//! `dispatch_mask`): work-groups get threads in dispatch order, x fastest; inside a group,
//! lane `i` of thread `t` holds the work-item of local linear id `t * simd + i`, its local id
//! `(l % Lx, l / Lx % Ly, l / (Lx * Ly))`.

use super::payload::NdRange;

/// The NDRange of an OpenCL launch and the SIMD width its threads run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdGeometry {
    pub range: NdRange,
    pub simd: u32,
}

/// One work-item's ids.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WorkItem {
    /// `get_global_id(0..3)`, the global offset included.
    pub global: [u64; 3],
    /// `get_local_id(0..3)`.
    pub local: [u32; 3],
    /// `get_group_id(0..3)`.
    pub group: [u32; 3],
}

impl WorkItem {
    /// `(x,y,z)` with the trailing dimensions the launch does not use left out.
    pub fn text(&self, work_dim: u32) -> String {
        let dims = work_dim.clamp(1, 3) as usize;
        let ids: Vec<String> = self.global[..dims].iter().map(u64::to_string).collect();
        ids.join(",")
    }
}

impl NdGeometry {
    /// Dimensions worth writing in a global id: the launch's `work_dim`, less trailing ones of
    /// size 1 and offset 0 (launch files often give `[N, 1, 1]` for a 1D range).
    pub fn shown_dims(&self) -> u32 {
        let r = &self.range;
        let used =
            (0..3).rev().find(|&d| r.global_size[d] > 1 || r.global_offset[d] > 0).map_or(1, |d| d + 1);
        r.work_dim.clamp(1, 3).min(used as u32)
    }

    /// Work-groups in each dimension.
    pub fn groups(&self) -> [u32; 3] {
        let r = &self.range;
        [0, 1, 2].map(|d| r.global_size[d] / r.local_size[d].max(1))
    }

    /// Hardware threads per work-group.
    pub fn threads_per_group(&self) -> u32 {
        super::threads_per_group(self.range.local_size, self.simd)
    }

    /// The work-item lane `lane` of hardware thread `thread` holds; None past the launch or
    /// for a lane with no work-item (the last thread of a group whose size is not a multiple
    /// of the SIMD width).
    pub fn work_item(&self, thread: u32, lane: u32) -> Option<WorkItem> {
        let per_group = self.threads_per_group();
        if per_group == 0 || lane >= self.simd {
            return None;
        }
        let [gx, gy, gz] = self.groups();
        let group_linear = thread / per_group;
        if u64::from(group_linear) >= u64::from(gx) * u64::from(gy) * u64::from(gz) {
            return None;
        }
        let [lx, ly, lz] = self.range.local_size.map(u64::from);
        let l = u64::from(thread % per_group) * u64::from(self.simd) + u64::from(lane);
        if l >= lx * ly * lz {
            return None;
        }
        let local = [l % lx, l / lx % ly, l / (lx * ly)].map(|v| v as u32);
        let group = [group_linear % gx, group_linear / gx % gy, group_linear / (gx * gy)];
        let global = [0, 1, 2].map(|d| {
            u64::from(group[d]) * u64::from(self.range.local_size[d])
                + u64::from(local[d])
                + u64::from(self.range.global_offset[d])
        });
        Some(WorkItem { global, local, group })
    }

    /// The hardware thread and lane holding the work-item of global id `global` (the global
    /// offset included), or why there is none.
    pub fn locate(&self, global: [u64; 3]) -> Result<(u32, u32), String> {
        let r = &self.range;
        let mut group = [0u32; 3];
        let mut local = [0u64; 3];
        for d in 0..3 {
            let offset = u64::from(r.global_offset[d]);
            let end = offset + u64::from(r.global_size[d]);
            if global[d] < offset || global[d] >= end {
                let axis = ["x", "y", "z"][d];
                return Err(format!(
                    "no work-item with global id {axis} = {} (the launch has {}..{end})",
                    global[d], offset
                ));
            }
            let id = global[d] - offset;
            group[d] = (id / u64::from(r.local_size[d])) as u32;
            local[d] = id % u64::from(r.local_size[d]);
        }
        let [gx, gy, _] = self.groups();
        let group_linear = group[0] + gx * (group[1] + gy * group[2]);
        let [lx, ly, _] = r.local_size.map(u64::from);
        let l = local[0] + lx * (local[1] + ly * local[2]);
        let simd = u64::from(self.simd.max(1));
        let thread = u64::from(group_linear) * u64::from(self.threads_per_group()) + l / simd;
        Ok((thread as u32, (l % simd) as u32))
    }
}

/// Parses a work-item's global id as `X`, `X,Y`, `X,Y,Z`, `X Y Z` or `(X,Y,Z)`; missing
/// dimensions are 0.
pub fn parse_global_id(text: &str) -> Result<[u64; 3], String> {
    let inner = text.trim();
    let inner = inner.strip_prefix('(').map_or(Ok(inner), |r| r.strip_suffix(')').ok_or("missing `)`"))?;
    let parts: Vec<&str> = inner.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err("write a work-item's global id as X, X,Y or X,Y,Z".into());
    }
    let mut id = [0u64; 3];
    for (d, p) in parts.iter().enumerate() {
        let number = super::raw::parse_number(p).filter(|_| !p.starts_with('-'));
        id[d] = number.ok_or_else(|| format!("`{p}` is not a work-item id"))?;
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(global: [u32; 3], local: [u32; 3], offset: [u32; 3], simd: u32) -> NdGeometry {
        let range = NdRange { work_dim: 3, global_size: global, local_size: local, global_offset: offset };
        NdGeometry { range, simd }
    }

    /// Every work-item of several launches, odd sizes and offsets among them, is held by
    /// exactly one (thread, lane), and `locate` finds that lane.
    #[test]
    fn every_work_item_has_one_lane_and_locate_finds_it() {
        let cases = [
            geometry([64, 1, 1], [16, 1, 1], [0, 0, 0], 16),
            geometry([12, 6, 4], [3, 2, 2], [5, 0, 7], 8),
            geometry([40, 3, 1], [10, 3, 1], [1, 2, 0], 32),
            geometry([6, 4, 6], [2, 2, 3], [0, 9, 0], 16),
        ];
        for g in cases {
            let per_group = g.threads_per_group();
            let n_threads = per_group * g.groups().iter().product::<u32>();
            let mut seen = std::collections::HashSet::new();
            for t in 0..n_threads {
                let items = (0..g.simd).filter_map(|lane| g.work_item(t, lane).map(|w| (lane, w)));
                for (lane, w) in items {
                    assert!(seen.insert(w.global), "{:?} held twice", w.global);
                    assert_eq!(g.locate(w.global), Ok((t, lane)), "{g:?} {w:?}");
                    for d in 0..3 {
                        let from_ids = u64::from(w.group[d]) * u64::from(g.range.local_size[d])
                            + u64::from(w.local[d])
                            + u64::from(g.range.global_offset[d]);
                        assert_eq!(w.global[d], from_ids);
                    }
                }
            }
            let total: u64 = g.range.global_size.iter().map(|&n| u64::from(n)).product();
            assert_eq!(seen.len() as u64, total, "{g:?}");
            assert_eq!(g.work_item(n_threads, 0), None);
            assert_eq!(g.work_item(0, g.simd), None);
        }
    }

    #[test]
    fn ids_are_written_in_the_dimensions_used() {
        let item = WorkItem { global: [7, 0, 0], local: [7, 0, 0], group: [0; 3] };
        for (global, offset, dims) in [
            ([64, 1, 1], [0, 0, 0], 1),
            ([8, 8, 1], [0, 0, 0], 2),
            ([8, 1, 1], [0, 0, 3], 3),
            ([8, 1, 2], [0; 3], 3),
        ] {
            let g = geometry(global, [1, 1, 1], offset, 16);
            assert_eq!(g.shown_dims(), dims, "{global:?} {offset:?}");
        }
        assert_eq!(item.text(1), "7");
        assert_eq!(item.text(3), "7,0,0");
    }

    #[test]
    fn ids_outside_the_range_are_refused() {
        let g = geometry([12, 6, 4], [3, 2, 2], [5, 0, 7], 8);
        assert!(g.locate([4, 0, 7]).is_err());
        assert!(g.locate([17, 0, 7]).is_err());
        assert!(g.locate([5, 6, 7]).expect_err("y is 0..6").contains("y = 6"));
        assert!(g.locate([5, 0, 11]).is_err());
        assert!(g.locate([16, 5, 10]).is_ok());
    }

    #[test]
    fn global_ids_parse() {
        assert_eq!(parse_global_id("17"), Ok([17, 0, 0]));
        assert_eq!(parse_global_id("(3,4)"), Ok([3, 4, 0]));
        assert_eq!(parse_global_id("1, 2, 0x10"), Ok([1, 2, 16]));
        assert_eq!(parse_global_id("1 2 3"), Ok([1, 2, 3]));
        for bad in ["", "()", "1,2,3,4", "x", "(1,2", "-1"] {
            assert!(parse_global_id(bad).is_err(), "{bad}");
        }
    }
}
