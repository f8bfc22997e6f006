//! `why LOC`: where a value came from. The last write to LOC before now, then the values that
//! write read for the same lane, each traced back the same way, as a tree: a register element
//! to the instruction that wrote it and its source operands, a stored memory element to the
//! register that held the data, a loaded register to the memory it was loaded from.
//!
//! Every edge is checked before it is shown: the source's value at the writing step must be
//! what the rule says flowed (the loaded or stored bytes equal, the operand element the one
//! the channel reads). What the rules do not cover (an atomic's operands, bytes a load
//! zero-extended, ...) is listed as not followed rather than guessed.

use serde::Serialize;

use super::handlers::Access;
use super::Session;
use crate::exec::{direct_dst_bytes, dst_holds_byte};
use crate::isa::{InstIdx, Operand, PredId};
use crate::machine::{Machine, MemSpace, ThreadId};

/// Most nodes one `why` shows (the tree stops growing there).
pub const MAX_WHY_NODES: usize = 64;

/// A place a value lives, for one lane.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Grf {
        thread: u32,
        offset: u32,
        len: u32,
    },
    Mem {
        space: MemSpace,
        addr: u64,
        len: u64,
    },
    /// One lane's bit of a predicate.
    Pred {
        thread: u32,
        pred: PredId,
        lane: u32,
    },
}

/// The step that wrote a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhyWriter {
    pub step: u64,
    pub thread: u32,
    /// The thread channel whose write this is.
    pub lane: u32,
    pub line: u32,
    /// The OpenCL source position (`k.cl:13`), where the kernel has line information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub id: u32,
    pub instruction: String,
    /// A one-channel instruction (`(M1_NM, 1)`): its value is the thread's, no work-item's.
    pub scalar: bool,
}

/// One value in the tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhyNode {
    /// As commands take it: `V0132(0,5)`, `out+0xb0`, `P1`.
    pub location: String,
    /// The thread whose register or predicate it is (None for memory).
    pub thread: Option<u32>,
    /// Its bytes (little-endian hex) or predicate bit, when it was read or written.
    pub value: String,
    /// The same bytes as a typed buffer's elements, when they are whole elements of one
    /// (`type`, `typed_value`, `value_hex` in JSON).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub typed: Option<super::TypedValue>,
    /// The write it came from; None for a value nothing in the run wrote (launch input),
    /// an immediate, or an operand not followed.
    pub writer: Option<WhyWriter>,
    /// Why there is no writer or no sources, when that is not plain.
    pub note: Option<String>,
    /// A part of its parent's value that the parent's writer did not write (read at the
    /// parent's time), not a value that writer read.
    pub part: bool,
    pub sources: Vec<WhyNode>,
}

impl Session {
    /// `why LOC [LEN] [lane L] [depth N]`.
    pub(super) fn why_reply(
        &self,
        loc: &str,
        len: Option<u64>,
        lane: Option<u32>,
        depth: u32,
    ) -> Result<super::Reply, String> {
        let lane = lane.unwrap_or(self.lane);
        let simd = self.machine.thread(self.focus).simd;
        let place = match self.program.preds.iter().position(|p| p.name == loc.trim()) {
            Some(p) if lane < simd => Place::Pred { thread: self.focus.0, pred: PredId(p as u32), lane },
            Some(_) => return Err(format!("lane {lane} is outside SIMD{simd}")),
            None => match self.location(loc, len, None)? {
                // One element (`V(0,5)`, a scalar region) whatever the lane; else the lane's.
                super::WatchTarget::Register { thread, ranges, .. } => {
                    let one = ranges.iter().all(|r| *r == ranges[0]);
                    let (lo, hi) = match one {
                        true => ranges[0],
                        false => *ranges.get(lane as usize).ok_or_else(|| {
                            format!("lane {lane} is outside the region's {} elements", ranges.len())
                        })?,
                    };
                    Place::Grf { thread, offset: lo, len: hi - lo }
                }
                super::WatchTarget::Memory { space, addr, len } => {
                    self.read_memory(space, addr, &mut vec![0u8; len as usize])?;
                    Place::Mem { space, addr, len }
                }
            },
        };
        // Deeper than the node limit cannot show more.
        let tree = self.why(place, self.now, depth.min(MAX_WHY_NODES as u32));
        let mut lines = Vec::new();
        self.why_lines(&tree, 0, &mut lines);
        Ok(super::Reply::text(lines.join("\n")).with("tree", serde_json::json!(tree)))
    }

    /// The tree as indented lines, a value and its writer per line.
    fn why_lines(&self, node: &WhyNode, level: usize, out: &mut Vec<String>) {
        let indent = "  ".repeat(level);
        // `←` a value the write read; `+` another part of the value above, written elsewhere.
        let mark = match (level, node.part) {
            (0, _) => "",
            (_, true) => "+ ",
            _ => "← ",
        };
        let shown = node.typed.as_ref().map_or_else(|| node.value.clone(), |t| t.text());
        let head = format!("{indent}{mark}{} = {shown}", node.location);
        let writer = node.writer.as_ref().map(|w| {
            let who = match w.scalar {
                true => "(scalar)".to_string(),
                false => format!("lane {}{}", w.lane, self.work_item_suffix(w.thread, w.lane)),
            };
            format!(
                "  written at step {} by thread {} {who}, line {} ${}: {}",
                w.step, w.thread, w.line, w.id, w.instruction
            )
        });
        let note = node.note.as_ref().map(|n| format!("  ({n})"));
        out.push(format!("{head}{}{}", writer.unwrap_or_default(), note.unwrap_or_default()));
        for s in &node.sources {
            self.why_lines(s, level + 1, out);
        }
    }

    /// The provenance tree of `place` as it is before step `before`, `depth` writes deep.
    pub fn why(&self, place: Place, before: u64, depth: u32) -> WhyNode {
        let mut walk = Walk { state: self.machine.clone(), at: self.now, nodes: 0 };
        self.explain(&mut walk, place, before, depth)
    }

    fn explain(&self, walk: &mut Walk, place: Place, before: u64, depth: u32) -> WhyNode {
        walk.nodes += 1;
        walk.seek(self, before);
        let value = self.place_value(&walk.state, place);
        let mut node = WhyNode {
            location: self.place_text(place),
            thread: match place {
                Place::Grf { thread, .. } | Place::Pred { thread, .. } => Some(thread),
                Place::Mem { .. } => None,
            },
            value: value.text(),
            typed: self.typed_place(place, &value),
            writer: None,
            note: None,
            part: false,
            sources: Vec::new(),
        };
        let Some((step, first_byte)) = self.last_writer(place, before, &value) else {
            node.note = Some("initial value: nothing in the run wrote it (launch payload or input)".into());
            return node;
        };
        let rec = self.recorder.trace.at(step);
        let inst = self.program.inst(InstIdx(rec.pc));
        walk.seek(self, step);
        // A message's (or a memory write's) accesses, by lane: the step run again once.
        let accesses = match is_message(inst) || matches!(place, Place::Mem { .. }) {
            true => self.step_accesses(&walk.state, step),
            false => Vec::new(),
        };
        let w = Write { step, rec, inst, place, accesses };
        let channel = self.writing_channel(&walk.state, &w, first_byte);
        node.writer = Some(WhyWriter {
            step,
            thread: rec.thread,
            lane: channel.map_or(inst.exec.offset, |c| c + inst.exec.offset),
            line: inst.span.line,
            source: self.source_of(InstIdx(rec.pc)),
            id: inst.id,
            instruction: self.program.inst_text(InstIdx(rec.pc)).to_string(),
            scalar: inst.exec.size == 1,
        });
        if depth == 0 {
            node.note = Some("depth reached: `why … depth N` goes further".into());
            return node;
        }
        let (channel, mut sources) = match channel {
            Some(c) => (c, self.sources(walk, &w, c)),
            // A block message (no lane per access) moves the thread's bytes in order.
            None => match self.block_sources(walk, &w) {
                Some(sources) => {
                    if let Some(w) = node.writer.as_mut() {
                        w.scalar = true;
                    }
                    (0, sources)
                }
                None => {
                    node.note = Some("the writing lane is not known: sources not followed".into());
                    return node;
                }
            },
        };
        // Bytes of the location this channel did not write (a qword whose halves two `mov`s
        // wrote, a range over several lanes' stores) have writers of their own: the rest of
        // the value, as it stood at the same time.
        sources.extend(self.rest_of(&w, channel).into_iter().map(Source::Rest));
        for source in sources {
            if walk.nodes >= MAX_WHY_NODES {
                node.note = Some(format!("more sources not shown (at most {MAX_WHY_NODES} values)"));
                break;
            }
            node.sources.push(match source {
                Source::Place(p) => self.explain(walk, p, step, depth - 1),
                // A strictly smaller piece of the same value: the recursion ends.
                Source::Rest(p) => WhyNode { part: true, ..self.explain(walk, p, before, depth) },
                Source::Leaf { location, value, note } => {
                    walk.nodes += 1;
                    WhyNode {
                        location,
                        thread: None,
                        value,
                        typed: None,
                        writer: None,
                        note: Some(note),
                        part: false,
                        sources: Vec::new(),
                    }
                }
            });
        }
        node
    }

    /// The last step before `before` that wrote `place`, and the first byte of it that step
    /// wrote (GRF offset or address; the lane bit for a predicate).
    fn last_writer(&self, place: Place, before: u64, value: &Value) -> Option<(u64, u64)> {
        let trace = &self.recorder.trace;
        let hit = match (place, value) {
            (Place::Grf { thread, offset, len }, Value::Bytes(cur)) => {
                trace.grf_writes(thread, offset, len, before, cur, 1).into_iter().next()
            }
            (Place::Mem { space, addr, len }, Value::Bytes(cur)) => {
                trace.mem_writes(space, addr, len, before, cur, 1).into_iter().next()
            }
            (Place::Pred { thread, pred, lane }, Value::Bits(bits, _)) => {
                // Writes of the predicate that changed or wrote this lane's bit: the newest
                // whose step enabled the lane (a predicate write covers its channels).
                let hits = trace.pred_writes(thread, pred, before, *bits, usize::MAX);
                return hits
                    .into_iter()
                    .find(|h| {
                        let rec = trace.at(h.step);
                        let inst = self.program.inst(InstIdx(rec.pc));
                        lane >= inst.exec.offset && rec.chen >> (lane - inst.exec.offset) & 1 != 0
                    })
                    .map(|h| (h.step, u64::from(lane)));
            }
            _ => None,
        }?;
        Some((hit.step, hit.first_written))
    }

    /// The channel (relative to the instruction's mask offset) of step `step` that wrote
    /// `byte` of `place`, `state` being the machine before the step.
    fn writing_channel(&self, state: &Machine, w: &Write, byte: u64) -> Option<u32> {
        let (rec, inst, place, accesses) = (w.rec, w.inst, w.place, &w.accesses[..]);
        let enabled = |c: u32| rec.chen >> c & 1 != 0;
        match (place, inst.operands.first()) {
            // A block message names no lane: `block_sources` maps its bytes in order.
            (Place::Grf { .. }, _) if is_message(inst) && accesses.iter().all(|a| a.lane.is_none()) => None,
            (Place::Grf { .. }, _) if is_message(inst) => {
                // A message's return, in the slot layout of loads: channel c's component k at
                // dst + (k·n + c)·slot (a dword, or 8 bytes for `d64`); checked by value in
                // `sources`.
                let (dst, size) = inst.operands.iter().rev().find_map(|op| payload(inst, op))?;
                let slot = (byte.checked_sub(u64::from(dst))? / u64::from(size)) as u32;
                Some(slot % inst.exec.size.max(1)).filter(|&c| enabled(c))
            }
            (Place::Grf { .. }, Some(Operand::Direct(_))) => {
                // The channel whose destination bytes (`addc`'s carry and `madw`'s high half
                // included) hold the byte.
                let covers = |c: &u32| dst_holds_byte(inst, *c, self.program.grf_size, byte);
                first_channel(inst.exec.size, enabled, covers)
            }
            (Place::Grf { .. }, Some(Operand::Indirect(ind))) => {
                // An indirect destination: the channel whose address covers the byte.
                let size = u64::from(ind.ty.size());
                let covers = |c: &u32| {
                    indirect_element(self, state, rec.thread, ind, *c)
                        .is_some_and(|at| byte >= u64::from(at) && byte < u64::from(at) + size)
                };
                first_channel(inst.exec.size, enabled, covers)
            }
            (Place::Grf { .. }, _) => None,
            (Place::Mem { space, addr, len }, _) => accesses
                .iter()
                .filter(|a| a.write && a.space == space && a.addr < addr + len && addr < a.addr + a.len)
                .find_map(|a| a.lane),
            (Place::Pred { lane, .. }, _) => lane.checked_sub(inst.exec.offset),
        }
    }

    /// Sources of a block message's write, whose accesses name no lane: the payload's bytes
    /// map to the accesses' bytes in order (a block store's data register to memory, memory to
    /// a block load's return). None when the step made no such access to `place`; each edge
    /// is checked by value.
    fn block_sources(&self, walk: &mut Walk, w: &Write) -> Option<Vec<Source>> {
        let (rec, inst, step, place, accesses) = (w.rec, w.inst, w.step, w.place, &w.accesses[..]);
        let write = matches!(place, Place::Mem { .. });
        let blocks: Vec<&Access> = accesses.iter().filter(|a| a.lane.is_none() && a.write == write).collect();
        let payload_base = data_operands(inst).first().map(|&(base, _)| base)?;
        // Payload byte d is byte d - start(i) of access i.
        let starts: Vec<u64> = blocks
            .iter()
            .scan(0, |sum, a| {
                let start = *sum;
                *sum += a.len;
                Some(start)
            })
            .collect();
        let place = match place {
            Place::Mem { space, addr, len } => {
                let i = blocks
                    .iter()
                    .position(|a| a.space == space && a.addr <= addr && addr < a.addr + a.len)?;
                let d = starts[i] + (addr - blocks[i].addr);
                let len = len.min(blocks[i].addr + blocks[i].len - addr);
                let offset = u32::try_from(u64::from(payload_base) + d).ok()?;
                let mut stored = vec![0u8; len as usize];
                let read = walk.after(self, step, |m| m.read_memory(space, addr, &mut stored));
                let grf = &walk.state.thread(ThreadId(rec.thread)).grf;
                (read.is_ok()
                    && grf.get(offset as usize..offset as usize + len as usize) == Some(&stored[..]))
                .then_some(Place::Grf { thread: rec.thread, offset, len: len as u32 })?
            }
            Place::Grf { offset, len, .. } => {
                let d = u64::from(offset.checked_sub(payload_base)?);
                let i = (0..blocks.len()).rev().find(|&i| starts[i] <= d)?;
                let addr = blocks[i].addr + (d - starts[i]);
                let loaded = walk.after(self, step, |m| {
                    m.thread(ThreadId(rec.thread))
                        .grf
                        .get(offset as usize..(offset + len) as usize)
                        .map(<[u8]>::to_vec)
                });
                let mut there = vec![0u8; len as usize];
                let ok = walk.state.read_memory(blocks[i].space, addr, &mut there).is_ok()
                    && Some(there) == loaded;
                ok.then_some(Place::Mem { space: blocks[i].space, addr, len: u64::from(len) })?
            }
            Place::Pred { .. } => return None,
        };
        Some(vec![Source::Place(place)])
    }

    /// The parts of `place` that channel `channel` of step `step` did not write: outside its
    /// destination element (registers) or outside its own stores (memory).
    fn rest_of(&self, w: &Write, channel: u32) -> Vec<Place> {
        let (inst, place, accesses) = (w.inst, w.place, &w.accesses[..]);
        let (lo, hi, written): (u64, u64, Vec<(u64, u64)>) = match place {
            Place::Grf { offset, len, .. } => {
                let written = direct_dst_bytes(inst, channel, self.program.grf_size);
                let written = written.into_iter().map(|(a, e)| (u64::from(a), u64::from(e))).collect();
                (u64::from(offset), u64::from(offset + len), written)
            }
            Place::Mem { space, addr, len } => {
                let mine = accesses
                    .iter()
                    .filter(|a| a.write && a.space == space && a.lane == Some(channel))
                    .map(|a| (a.addr, a.addr + a.len))
                    .collect();
                (addr, addr + len, mine)
            }
            Place::Pred { .. } => return Vec::new(),
        };
        // Walk the place's bytes, cutting out what the channel wrote.
        let mut pieces = Vec::new();
        let mut start = None;
        for b in lo..hi {
            let covered = written.iter().any(|&(a, e)| a <= b && b < e);
            match (covered, start) {
                (false, None) => start = Some(b),
                (true, Some(s)) => {
                    pieces.push((s, b));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            pieces.push((s, hi));
        }
        // Nothing of it written by the channel: no piece is smaller than the place.
        if pieces == [(lo, hi)] {
            return Vec::new();
        }
        pieces
            .into_iter()
            .map(|(a, e)| match place {
                Place::Grf { thread, .. } => Place::Grf { thread, offset: a as u32, len: (e - a) as u32 },
                Place::Mem { space, .. } => Place::Mem { space, addr: a, len: e - a },
                Place::Pred { .. } => place,
            })
            .collect()
    }

    /// What channel `channel` of step `step` read to make the value it wrote to `place`.
    fn sources(&self, walk: &mut Walk, w: &Write, channel: u32) -> Vec<Source> {
        let (inst, thread) = (w.inst, w.rec.thread);
        let lane = channel + inst.exec.offset;
        let mut out = Vec::new();
        if let Some(p) = inst.pred {
            out.push(Source::Place(Place::Pred { thread, pred: p.pred, lane }));
        }
        if is_message(inst) {
            out.extend(self.message_sources(walk, w, channel));
            return out;
        }
        // `(P) sel`: the predicate bit chose one source for this lane.
        let chosen = match (inst.op, inst.pred) {
            (crate::isa::Opcode::Sel, Some(p)) => {
                let bits =
                    walk.state.thread(ThreadId(thread)).preds.get(p.pred.0 as usize).copied().unwrap_or(0);
                Some(usize::from((bits >> lane & 1 != 0) == p.invert))
            }
            _ => None,
        };
        for (i, op) in inst.operands.iter().skip(1).enumerate() {
            if chosen.is_some_and(|c| c != i) {
                continue;
            }
            match op {
                Operand::Direct(d) if d.is_null || d.is_dst => {}
                Operand::Direct(d) => {
                    let size = d.ty.size();
                    let offset = d.base + d.region.element(channel) * size;
                    out.push(Source::Place(Place::Grf { thread, offset, len: size }));
                }
                Operand::Pred(p) => out.push(Source::Place(Place::Pred { thread, pred: *p, lane })),
                Operand::Imm(imm) => out.push(Source::Leaf {
                    location: "immediate".into(),
                    value: super::format::value(imm.ty, imm.bits, super::command::Format::Natural),
                    note: "a constant in the instruction".into(),
                }),
                Operand::Indirect(ind) => match indirect_element(self, &walk.state, thread, ind, channel) {
                    Some(offset) => {
                        out.push(Source::Place(Place::Grf { thread, offset, len: ind.ty.size() }))
                    }
                    None => out.push(Source::Leaf {
                        location: "indirect operand".into(),
                        value: String::new(),
                        note: "not followed: its address register points outside the registers".into(),
                    }),
                },
                _ => {}
            }
        }
        out
    }

    /// Sources of a message's write: for a store, the data register element holding the
    /// bytes written; for a load, the memory the channel read. Each checked by value.
    fn message_sources(&self, walk: &mut Walk, w: &Write, channel: u32) -> Vec<Source> {
        let (rec, inst, step, place, accesses) = (w.rec, w.inst, w.step, w.place, &w.accesses[..]);
        let mine: Vec<&Access> = accesses.iter().filter(|a| a.lane == Some(channel)).collect();
        let unknown = |what: &str| Source::Leaf {
            location: "message operands".into(),
            value: String::new(),
            note: format!("not followed: {what}"),
        };
        match place {
            // An atomic's result combines the memory's old value with its operands: the old
            // value is followed (a counter's history), the operands named.
            Place::Mem { space, addr, len } if inst.op.is_atomic() => vec![
                Source::Place(Place::Mem { space, addr, len }),
                Source::Leaf {
                    location: "atomic operands".into(),
                    value: String::new(),
                    note: format!("combined with the old value by `{}`", inst.op.mnemonic()),
                },
            ],
            Place::Mem { space, addr, len } => {
                // The bytes this channel stored at `addr`: component k of its write. Only the
                // part of the place inside the channel's stores (`rest_of` has the others).
                let writes: Vec<&&Access> = mine.iter().filter(|a| a.write && a.space == space).collect();
                let Some(first) = writes.iter().map(|a| a.addr).min() else {
                    return vec![unknown("the channel's store is not seen")];
                };
                let inside = |b: u64| writes.iter().any(|a| a.addr <= b && b < a.addr + a.len);
                let end = addr + len;
                let Some(addr) = (addr..end).find(|&b| inside(b)) else {
                    return vec![unknown("the channel stored none of these bytes")];
                };
                let len = (addr..end).take_while(|&b| inside(b)).count() as u64;
                let mut stored = vec![0u8; len as usize];
                let read = walk.after(self, step, |m| m.read_memory(space, addr, &mut stored));
                if read.is_err() {
                    return vec![unknown("the stored bytes cannot be read")];
                }
                // Component k of the channel's data, at its byte within the component.
                let Some(into) = addr.checked_sub(first).and_then(|d| u32::try_from(d).ok()) else {
                    return vec![unknown("the bytes are before the channel's store")];
                };
                let n = inst.exec.size.max(1);
                let grf = &walk.state.thread(ThreadId(rec.thread)).grf;
                for (base, slot) in data_operands(inst) {
                    // Byte j of the location is in component k of the channel's data, at
                    // base + (k·n + channel)·slot: k is the index of the channel's store that
                    // holds it when each store is one component (`scatter4_scaled.RB` skips
                    // G in memory, not in registers), else its offset into the data / slot. A
                    // location over several components comes from several register pieces.
                    let byte_at = |j: u32| -> Option<u32> {
                        let at = addr + u64::from(j);
                        let (k, b) = match writes.iter().position(|a| a.addr <= at && at < a.addr + a.len) {
                            Some(i) if writes[i].len <= u64::from(slot) => {
                                (i as u32, (at - writes[i].addr) as u32)
                            }
                            _ => {
                                let b = into.checked_add(j)?;
                                (b / slot, b % slot)
                            }
                        };
                        let element = k.checked_mul(n)?.checked_add(channel)?.checked_mul(slot)?;
                        base.checked_add(element)?.checked_add(b)
                    };
                    let offsets: Option<Vec<u32>> = (0..len as u32).map(byte_at).collect();
                    let Some(offsets) = offsets else { continue };
                    let holds = offsets.iter().zip(&stored).all(|(&o, &b)| grf.get(o as usize) == Some(&b));
                    if !holds {
                        continue;
                    }
                    // Runs of consecutive register bytes, one place each.
                    let mut pieces: Vec<(u32, u32)> = Vec::new();
                    for &o in &offsets {
                        match pieces.last_mut() {
                            Some((start, l)) if *start + *l == o => *l += 1,
                            _ => pieces.push((o, 1)),
                        }
                    }
                    return pieces
                        .into_iter()
                        .map(|(offset, len)| Source::Place(Place::Grf { thread: rec.thread, offset, len }))
                        .collect();
                }
                vec![unknown("no data operand element holds the stored bytes")]
            }
            Place::Grf { offset, len, .. } => {
                // A load: the memory this channel read, where it holds the loaded bytes.
                let loaded = walk.after(self, step, |m| {
                    m.thread(ThreadId(rec.thread))
                        .grf
                        .get(offset as usize..(offset + len) as usize)
                        .map(<[u8]>::to_vec)
                });
                let Some(loaded) = loaded else { return vec![unknown("the register is out of range")] };
                let reads: Vec<&&Access> = mine.iter().filter(|a| !a.write).collect();
                let Some(first) = reads.iter().map(|a| (a.space, a.addr)).min_by_key(|x| x.1) else {
                    return vec![unknown("the channel read no memory")];
                };
                // Channel c's component k is at dst + (k·n + c)·slot; in memory, at the
                // channel's address + k·(element bytes in memory).
                let Some((dst, slot, in_memory)) = inst.operands.iter().rev().find_map(|op| {
                    let (base, slot) = payload(inst, op)?;
                    let in_memory = match op {
                        Operand::LscData(d) => d.data_size.mem_bytes(),
                        _ => slot,
                    };
                    Some((base, slot, in_memory))
                }) else {
                    return vec![unknown("the message has no data operand")];
                };
                let n = inst.exec.size.max(1);
                let Some(into) = offset.checked_sub(dst) else {
                    return vec![unknown("the register is before the message's return")];
                };
                // The k-th of the channel's reads when it reads one component at a time
                // (`gather4_scaled.RB` reads B 8 bytes past R), else k elements into its read.
                let k = into / slot / n;
                let (space, at) = match reads.get(k as usize) {
                    Some(r) if reads.iter().all(|a| a.len <= u64::from(slot)) => {
                        (r.space, r.addr + u64::from(into % slot))
                    }
                    _ => (
                        first.0,
                        first.1.saturating_add(u64::from(k) * u64::from(in_memory) + u64::from(into % slot)),
                    ),
                };
                let mut there = vec![0u8; len as usize];
                if walk.state.read_memory(space, at, &mut there).is_ok() && there == loaded {
                    return vec![Source::Place(Place::Mem { space, addr: at, len: u64::from(len) })];
                }
                vec![unknown("the loaded bytes are not where the channel read")]
            }
            Place::Pred { .. } => vec![unknown("a message does not write predicates")],
        }
    }

    fn place_value(&self, state: &Machine, place: Place) -> Value {
        match place {
            Place::Grf { thread, offset, len } => Value::Bytes(
                state
                    .thread(ThreadId(thread))
                    .grf
                    .get(offset as usize..(offset + len) as usize)
                    .map_or_else(Vec::new, <[u8]>::to_vec),
            ),
            Place::Mem { space, addr, len } => {
                let mut bytes = vec![0u8; len as usize];
                let _ = state.read_memory(space, addr, &mut bytes);
                Value::Bytes(bytes)
            }
            Place::Pred { thread, pred, lane } => {
                let bits = state.thread(ThreadId(thread)).preds.get(pred.0 as usize).copied().unwrap_or(0);
                Value::Bits(bits, bits >> lane & 1 != 0)
            }
        }
    }

    /// A memory place's bytes as its buffer's elements, when it is whole elements of a typed
    /// buffer.
    fn typed_place(&self, place: Place, value: &Value) -> Option<super::TypedValue> {
        let (Place::Mem { space, addr, len }, Value::Bytes(bytes)) = (place, value) else { return None };
        let elem = self.typed_range(space, addr, len)?;
        Some(super::TypedValue { elem, bytes: bytes.clone() })
    }

    fn place_text(&self, place: Place) -> String {
        match place {
            Place::Grf { offset, len, .. } => self.grf_element_text(offset, len),
            Place::Mem { space, addr, .. } => self.named_location(space, addr),
            Place::Pred { pred, lane, .. } => format!("{} lane {lane}", self.program.pred(pred).name),
        }
    }

    /// `V0132(0,5)`: GRF bytes `[offset, offset + len)` as an element of a declared variable:
    /// one whose element is exactly those bytes when there is one (an alias of the right type),
    /// else the smallest variable holding them, as the element they start in.
    pub fn grf_element_text(&self, offset: u32, len: u32) -> String {
        let grf = self.program.grf_size.max(1);
        let holding = |v: &&crate::program::GenVar| {
            !v.predefined && v.offset <= offset && offset + len <= v.offset + v.size
        };
        let exact = |v: &&crate::program::GenVar| {
            v.ty.size() == len && (offset - v.offset).is_multiple_of(len.max(1))
        };
        let vars: Vec<&crate::program::GenVar> = self.program.vars.iter().filter(holding).collect();
        let var = vars
            .iter()
            .copied()
            .filter(exact)
            .min_by_key(|v| v.size)
            .or_else(|| vars.iter().copied().min_by_key(|v| v.size));
        match var {
            Some(v) => {
                let rel = offset - v.offset;
                format!("{}({},{})", v.name, rel / grf, rel % grf / v.ty.size().max(1))
            }
            None => format!("GRF byte {offset:#x}"),
        }
    }
}

/// The channel among `0..n` that `covers` picks: an enabled one; else any (a predicated
/// `sel` writes channels its predicate disabled, choosing the source, not the lanes).
fn first_channel(n: u32, enabled: impl Fn(u32) -> bool, covers: impl Fn(&u32) -> bool) -> Option<u32> {
    (0..n).filter(|&c| enabled(c)).find(&covers).or_else(|| (0..n).find(&covers))
}

/// The write a node's value came from, as the functions explaining it need it: its step and
/// record, instruction, the place it wrote, and (for messages and memory) the step's accesses
/// by lane, from running it again once.
struct Write<'a> {
    step: u64,
    rec: crate::trace::StepRecord,
    inst: &'a crate::program::Inst,
    place: Place,
    accesses: Vec<Access>,
}

/// A copy of the machine walked through time as the tree needs it.
struct Walk {
    state: Machine,
    at: u64,
    nodes: usize,
}

impl Walk {
    /// `f` of the machine just after step `step`; the walk stays just before it.
    fn after<T>(&mut self, session: &Session, step: u64, f: impl FnOnce(&Machine) -> T) -> T {
        self.seek(session, step + 1);
        let out = f(&self.state);
        self.seek(session, step);
        out
    }

    fn seek(&mut self, session: &Session, time: u64) {
        if self.at != time {
            session.recorder.seek(&mut self.state, self.at, time);
            self.at = time;
        }
    }
}

enum Value {
    Bytes(Vec<u8>),
    /// A predicate's bits and the lane's bit.
    Bits(u32, bool),
}

impl Value {
    fn text(&self) -> String {
        match self {
            Value::Bytes(b) => super::motion::hex(b),
            Value::Bits(_, bit) => u8::from(*bit).to_string(),
        }
    }
}

enum Source {
    Place(Place),
    /// Bytes of the value the writing channel did not set, explained as of the value's time.
    Rest(Place),
    Leaf {
        location: String,
        value: String,
        note: String,
    },
}

/// A memory message or atomic (the opcode table's family): its operands are address and
/// payload registers, not a destination and sources.
fn is_message(inst: &crate::program::Inst) -> bool {
    inst.op.family() == crate::isa::Family::Memory
}

/// The GRF offset of a message's raw or LSC data operand `op` (not its LSC address), and the
/// bytes each channel's element takes there: an LSC operand's size (a `d64` takes 8, smaller
/// ones a dword); a raw operand a dword, or a qword in `svm_gather.8.N` / `svm_scatter.8.N`.
fn payload(inst: &crate::program::Inst, op: &Operand) -> Option<(u32, u32)> {
    use crate::isa::{LscDataSize, Opcode, SubOp};
    match op {
        Operand::Raw(r) if !r.is_null => {
            let qwords = matches!(inst.op, Opcode::SvmGather | Opcode::SvmScatter)
                && matches!(inst.sub, SubOp::Blocks { block_size: 8, .. });
            Some((r.base, if qwords { 8 } else { 4 }))
        }
        Operand::LscData(d) if !d.raw.is_null => {
            Some((d.raw.base, if d.data_size == LscDataSize::D64 { 8 } else { 4 }))
        }
        _ => None,
    }
}

/// A message's payload operands and their element sizes, last first (the data is last in the
/// stores vISA has, raw and LSC).
fn data_operands(inst: &crate::program::Inst) -> Vec<(u32, u32)> {
    inst.operands.iter().rev().filter_map(|op| payload(inst, op)).collect()
}

/// The GRF offset channel `channel` of an indirect operand reads, `state` being the machine
/// before the step: the address register element (one per row in the multi-address form)
/// plus the immediate offset, then the region's element (`indirect_lane`, as the step
/// computed it; the step ran, so the address was in bounds).
fn indirect_element(
    session: &Session,
    state: &Machine,
    thread: u32,
    ind: &crate::isa::IndirectOperand,
    channel: u32,
) -> Option<u32> {
    let (row, element) = crate::exec::indirect_lane(ind, channel);
    let var = session.program.addr(ind.addr);
    let slot = var.slot + ind.addr_elem + row;
    let base =
        i64::from(*state.thread(ThreadId(thread)).addrs.get(slot as usize)?) + i64::from(ind.imm_offset);
    let address = base + i64::from(element * ind.ty.size());
    u32::try_from(address).ok().filter(|&a| (a as usize) < state.thread(ThreadId(thread)).grf.len())
}
