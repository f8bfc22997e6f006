//! The control table: a thread's control state before and after each change beyond its pc
//! (divergent branches, joins, calls, returns, barriers), which control log entries index.
//! Kept as bytes, only the pending reconvergence points and call frames a state has: a
//! `Control` in memory holds room for 16 of them (176 bytes); here a state takes 18 bytes
//! and 8 per pending point, 17 per frame.

use crate::isa::{InstIdx, UnitId};
use crate::machine::{Control, Frame, FrameKind, ThreadStatus, WaitList, Waiting};

#[derive(Clone, Debug, Default)]
pub struct ControlTable {
    bytes: Vec<u8>,
    /// Where each change (old state, then new) starts in `bytes`.
    starts: Vec<u64>,
}

impl ControlTable {
    /// Adds a change; its index is the number of changes before it.
    pub fn push(&mut self, (old, new): &(Control, Control)) {
        self.starts.push(self.bytes.len() as u64);
        put_control(&mut self.bytes, old);
        put_control(&mut self.bytes, new);
    }

    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Change `index`: the state before and after.
    pub fn get(&self, index: u32) -> Option<(Control, Control)> {
        let start = *self.starts.get(index as usize)? as usize;
        let mut r = Reader { bytes: self.bytes.get(start..)? };
        Some((r.control()?, r.control()?))
    }

    /// Bytes held: the states and an offset per change.
    pub fn bytes(&self) -> u64 {
        (self.bytes.len() + 8 * self.starts.len()) as u64
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_waiting(out: &mut Vec<u8>, list: &WaitList) {
    out.push(list.len() as u8);
    for w in list.iter() {
        put_u32(out, w.at.0);
        put_u32(out, w.lanes);
    }
}

fn put_control(out: &mut Vec<u8>, c: &Control) {
    put_u32(out, c.pc.0);
    put_u32(out, c.em);
    put_u32(out, c.call_mask);
    out.push(match c.status {
        ThreadStatus::Running => 0,
        ThreadStatus::AtBarrier => 1,
        ThreadStatus::Done => 2,
        ThreadStatus::Faulted => 3,
        ThreadStatus::AtNamedBarrier(id) => 4 + id.min(31),
    });
    put_waiting(out, &c.waiting);
    put_u32(out, c.stack.len() as u32);
    for f in &c.stack {
        out.push(match f.kind {
            FrameKind::Subroutine => 0,
            FrameKind::Function => 1,
        });
        put_u32(out, f.return_pc.0);
        put_u32(out, f.saved_em);
        put_u32(out, f.saved_call_mask);
        put_waiting(out, &f.saved_waiting);
        put_u32(out, f.unit.0);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        Some(u32::from_le_bytes(*head))
    }

    fn waiting(&mut self) -> Option<WaitList> {
        let mut list = WaitList::default();
        for _ in 0..self.u8()? {
            let w = Waiting { at: InstIdx(self.u32()?), lanes: self.u32()? };
            list.push(w).then_some(())?;
        }
        Some(list)
    }

    fn control(&mut self) -> Option<Control> {
        let (pc, em, call_mask) = (InstIdx(self.u32()?), self.u32()?, self.u32()?);
        let status = match self.u8()? {
            0 => ThreadStatus::Running,
            1 => ThreadStatus::AtBarrier,
            2 => ThreadStatus::Done,
            3 => ThreadStatus::Faulted,
            b => ThreadStatus::AtNamedBarrier(b - 4),
        };
        let waiting = self.waiting()?;
        let frames = self.u32()?;
        let mut stack = Vec::with_capacity(frames as usize);
        for _ in 0..frames {
            let kind = if self.u8()? == 0 { FrameKind::Subroutine } else { FrameKind::Function };
            stack.push(Frame {
                kind,
                return_pc: InstIdx(self.u32()?),
                saved_em: self.u32()?,
                saved_call_mask: self.u32()?,
                saved_waiting: self.waiting()?,
                unit: UnitId(self.u32()?),
            });
        }
        Some(Control { pc, em, call_mask, waiting, stack, status })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(points: &[(u32, u32)]) -> WaitList {
        let mut list = WaitList::default();
        for &(at, lanes) in points {
            assert!(list.push(Waiting { at: InstIdx(at), lanes }));
        }
        list
    }

    fn control(pc: u32, points: &[(u32, u32)], frames: usize, status: ThreadStatus) -> Control {
        let stack = (0..frames)
            .map(|i| Frame {
                kind: if i % 2 == 0 { FrameKind::Subroutine } else { FrameKind::Function },
                return_pc: InstIdx(10 + i as u32),
                saved_em: 0xff00 | i as u32,
                saved_call_mask: 0xf0f0,
                saved_waiting: waiting(&points[..i.min(points.len())]),
                unit: UnitId(i as u32 % 3),
            })
            .collect();
        Control {
            pc: InstIdx(pc),
            em: 0xffff_0001,
            call_mask: 0x8000_ffff,
            waiting: waiting(points),
            stack,
            status,
        }
    }

    #[test]
    fn changes_come_back_as_they_went_in_at_their_size() {
        let points = [(7, 0b1010), (12, 0xffff_0000), (3, 1)];
        let changes = [
            (control(1, &[], 0, ThreadStatus::Running), control(2, &points[..1], 0, ThreadStatus::Running)),
            (control(5, &points, 3, ThreadStatus::AtBarrier), control(9, &[], 2, ThreadStatus::Done)),
            (
                control(0, &points[..2], 1, ThreadStatus::Faulted),
                control(0, &points, 4, ThreadStatus::Running),
            ),
        ];
        let mut table = ControlTable::default();
        for change in &changes {
            table.push(change);
        }
        assert_eq!(table.len(), 3);
        for (i, change) in changes.iter().enumerate() {
            assert_eq!(table.get(i as u32).as_ref(), Some(change), "change {i}");
        }
        assert_eq!(table.get(3), None);
        // A state with no pending points and no frames is 18 bytes: pc, masks, status, the
        // two counts.
        let mut small = ControlTable::default();
        small.push(&changes[0]);
        assert_eq!(small.bytes(), 8 + 18 + (18 + 8));
    }
}
