//! Generated memory messages against a plain model of their accesses: lanes one after
//! another, each access checked (alignment, a buffer's own bytes for writes, its padding
//! readable, SLM bounds after the address mask) and done in full or faulting, the accesses
//! before a fault done and their results in registers. Addresses are drawn so that lanes
//! alias (atomics on one word), cross a page, reach a buffer's padding or past it, are
//! misaligned or carry IGC's SLM tag bit; half the cases run with a copy of the memory
//! alive (a checkpoint), which must keep its bytes while the message writes shared pages.
//! Each case runs unobserved and observed; the observed run must report the model's reads
//! and writes, in its order.

use vdb::exec::Observer;
use vdb::isa::PredId;
use vdb::machine::{Control, MemSpace, ThreadId};

use crate::harness::{kernel_text, lcg, run_observed, run_text, set_var, Run};

const BASE: u64 = 0x1_0000_0000;
/// The buffer's own bytes; it is mapped as a driver maps it, padded to two pages.
const LEN: u64 = 5000;
const MAPPED: u64 = 8192;
const SLM: u64 = 4096;

const DECLS: &str = ".decl ADDR v_type=G type=uq num_elts=16 align=GRF
.decl OFF v_type=G type=ud num_elts=16 align=GRF
.decl D v_type=G type=ud num_elts=128 align=GRF
.decl S v_type=G type=ud num_elts=128 align=GRF
.decl S0 v_type=G type=ud num_elts=32 align=GRF
.decl S1 v_type=G type=ud num_elts=32 align=GRF";

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        lcg(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `svm_gather.B.N` / `svm_scatter.B.N`.
    Svm { block: u32, blocks: u32, store: bool },
    /// `svm_atomic.OP[.64]`.
    SvmAtomic { op: &'static str, bits: u32 },
    /// `dword_atomic.OP` on `%slm`.
    SlmAtomic { op: &'static str },
    /// `gather_scaled.N` / `scatter_scaled.N` on `%slm`.
    SlmScaled { blocks: u32, store: bool },
}

const OPS: [&str; 13] =
    ["add", "sub", "inc", "dec", "min", "max", "minsint", "maxsint", "xchg", "cmpxchg", "and", "or", "xor"];

/// The plain model of an atomic: new memory value and the value returned.
fn atomic_model(op: &str, bits: u32, old: u64, s0: u64, s1: u64) -> (u64, u64) {
    let mask = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let signed = |v: u64| if bits == 64 { v as i64 } else { v as u32 as i32 as i64 };
    let new = match op {
        "add" => old.wrapping_add(s0),
        "sub" => old.wrapping_sub(s0),
        "inc" => old.wrapping_add(1),
        "dec" => old.wrapping_sub(1),
        "min" => old.min(s0 & mask),
        "max" => old.max(s0 & mask),
        "minsint" => signed(old).min(signed(s0 & mask)) as u64,
        "maxsint" => signed(old).max(signed(s0 & mask)) as u64,
        "xchg" => s0,
        "cmpxchg" if old == s1 & mask => s0,
        "cmpxchg" => old,
        "and" => old & s0,
        "or" => old | s0,
        "xor" => old ^ s0,
        _ => unreachable!("{op}"),
    } & mask;
    (new, old)
}

struct Case {
    kind: Kind,
    n: u32,
    mask: u32,
    addrs: Vec<u64>,
    offs: Vec<u32>,
    shared: bool,
}

impl Case {
    fn text(&self) -> String {
        let n = self.n;
        let line = match self.kind {
            Kind::Svm { block, blocks, store } => {
                let (op, data) = if store { ("svm_scatter", "S") } else { ("svm_gather", "D") };
                format!("{op}.{block}.{blocks} (M1, {n}) ADDR.0 {data}.0")
            }
            Kind::SvmAtomic { op, bits } => {
                let width = if bits == 64 { ".64" } else { "" };
                let s0 = if matches!(op, "inc" | "dec") { "%null.0" } else { "S0.0" };
                let s1 = if op == "cmpxchg" { "S1.0" } else { "%null.0" };
                format!("svm_atomic.{op}{width} (M1, {n}) ADDR.0 D.0 {s0} {s1}")
            }
            Kind::SlmAtomic { op } => {
                let s0 = if matches!(op, "inc" | "dec") { "%null.0" } else { "S0.0" };
                let s1 = if op == "cmpxchg" { "S1.0" } else { "%null.0" };
                format!("dword_atomic.{op} (M1, {n}) %slm OFF.0 {s0} {s1} D.0")
            }
            Kind::SlmScaled { blocks, store } => {
                let (op, data) = if store { ("scatter_scaled", "S") } else { ("gather_scaled", "D") };
                format!("{op}.{blocks} (M1, {n}) %slm 0x0:ud OFF.0 {data}.0")
            }
        };
        kernel_text(DECLS, &format!("    {line}"), 16)
    }
}

fn draw(rng: &mut Rng) -> Case {
    let kind = match rng.below(4) {
        0 => {
            let block = rng.pick(&[1, 4, 8]);
            Kind::Svm { block, blocks: rng.pick(&[1, 2, 4]), store: rng.below(2) == 0 }
        }
        1 => Kind::SvmAtomic { op: rng.pick(&OPS), bits: rng.pick(&[32, 64]) },
        2 => Kind::SlmAtomic { op: rng.pick(&OPS) },
        _ => Kind::SlmScaled { blocks: rng.pick(&[1, 2, 4]), store: rng.below(2) == 0 },
    };
    let n = rng.pick(&[8, 16]);
    let mask = (rng.next() as u32 | 1) & ((1u32 << n) - 1);
    let svm_addr = |rng: &mut Rng| -> u64 {
        if rng.below(100) == 0 {
            // An address whose access wraps around the address space.
            return u64::MAX - 3;
        }
        let r = rng.below(4);
        BASE + match rng.below(40) {
            0..=19 => 8 * r,                     // lanes alias
            20..=25 => 4088 + 4 * r,             // up to a page end, across it
            26..=31 => 4200 + 8 * rng.below(64), // the second page
            32..=34 => LEN - 8 + 4 * r,          // up to the buffer's end, into its padding
            35 => MAPPED - 4 + 4 * r,            // past the padding
            36 => 9000,                          // unmapped
            _ => 8 * r + rng.pick(&[1, 2, 4]),   // misaligned for some sizes
        }
    };
    let slm_off = |rng: &mut Rng| -> u32 {
        let r = rng.below(4) as u32;
        match rng.below(20) {
            0..=11 => 4 * r,
            12..=13 => 0x1000_0000 + 4 * r, // IGC's SLM tag bit
            14..=15 => SLM as u32 - 4 * r,  // up to and past the end
            _ => 4 * r + rng.pick(&[1, 2]),
        }
    };
    let addrs = (0..16).map(|_| svm_addr(rng)).collect();
    let offs = (0..16).map(|_| slm_off(rng)).collect();
    Case { kind, n, mask, addrs, offs, shared: rng.below(2) == 0 }
}

/// Register and memory contents before the message.
fn initial_svm() -> Vec<u8> {
    (0..MAPPED).map(|i| if i < LEN { (i * 7 + 3) as u8 } else { 0 }).collect()
}
fn initial_slm() -> Vec<u8> {
    (0..SLM).map(|i| (i * 5 + 1) as u8).collect()
}
fn initial_reg(name: &str, len: usize) -> Vec<u8> {
    let seed = name.bytes().fold(0u8, |a, b| a.wrapping_mul(31).wrapping_add(b));
    (0..len).map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed)).collect()
}

/// (lane, SLM?, address, old bytes, new bytes) of a write.
type Write = (u32, bool, u64, Vec<u8>, Vec<u8>);

/// What the model expects.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    svm: Vec<u8>,
    slm: Vec<u8>,
    d: Vec<u8>,
    fault_lane: Option<u32>,
    /// (lane, SLM?, address, length) of each read, in order.
    reads: Vec<(u32, bool, u64, u64)>,
    /// (lane, SLM?, address, old, new) of each write, in order.
    writes: Vec<Write>,
}

fn le(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |v, &b| v << 8 | b as u64)
}

fn model(case: &Case) -> Outcome {
    let mut o =
        Outcome { svm: initial_svm(), slm: initial_slm(), d: initial_reg("D", 512), ..Outcome::default() };
    let s = initial_reg("S", 512);
    let (s0, s1) = (initial_reg("S0", 128), initial_reg("S1", 128));
    // (lane, SLM?, address, size, alignment, register offset in D or S) of each access.
    let mut accesses = vec![];
    for lane in (0..case.n).filter(|l| case.mask >> l & 1 != 0) {
        match case.kind {
            Kind::Svm { block: 1, blocks, .. } => {
                accesses.push((lane, false, case.addrs[lane as usize], blocks, 1, lane * blocks.max(4)))
            }
            Kind::Svm { block, blocks, .. } => {
                for j in 0..blocks {
                    let at = case.addrs[lane as usize].wrapping_add((j * block) as u64);
                    accesses.push((lane, false, at, block, block, (j * case.n + lane) * block));
                }
            }
            Kind::SvmAtomic { bits, .. } => {
                let size = bits / 8;
                accesses.push((lane, false, case.addrs[lane as usize], size, size, lane * size));
            }
            Kind::SlmAtomic { .. } => {
                accesses.push((lane, true, case.offs[lane as usize] as u64, 4, 4, lane * 4))
            }
            Kind::SlmScaled { blocks, .. } => {
                accesses.push((lane, true, case.offs[lane as usize] as u64, blocks, 1, lane * 4))
            }
        }
    }
    for (lane, slm, addr, size, align, reg) in accesses {
        if addr % align as u64 != 0 {
            o.fault_lane = Some(lane);
            break;
        }
        let (at, readable, writable) = if slm {
            let a = addr & 0xf_ffff;
            (a, a + size as u64 <= SLM, a + size as u64 <= SLM)
        } else {
            let end = addr.saturating_add(size as u64);
            (addr.wrapping_sub(BASE), addr >= BASE && end <= BASE + MAPPED, addr >= BASE && end <= BASE + LEN)
        };
        let range = at as usize..at as usize + size as usize;
        let memory = |o: &mut Outcome| if slm { o.slm.clone() } else { o.svm.clone() };
        let reported = if slm { at } else { addr };
        let store = matches!(case.kind, Kind::Svm { store: true, .. } | Kind::SlmScaled { store: true, .. });
        let atomic = matches!(case.kind, Kind::SvmAtomic { .. } | Kind::SlmAtomic { .. });
        let regs = |bytes: &[u8], slot: u32, lane: u32| {
            le(&bytes[(lane * slot) as usize..(lane * slot + slot) as usize])
        };
        let (new, result) = if store {
            (Some(le(&s[reg as usize..(reg + size) as usize])), None)
        } else {
            if !readable {
                o.fault_lane = Some(lane);
                break;
            }
            o.reads.push((lane, slm, reported, size as u64));
            let old = le(&memory(&mut o)[range.clone()]);
            if atomic {
                let (op, bits) = match case.kind {
                    Kind::SvmAtomic { op, bits } => (op, bits),
                    Kind::SlmAtomic { op } => (op, 32),
                    _ => unreachable!(),
                };
                let slot = (bits / 8).max(4);
                let (a, b) = (regs(&s0, slot, lane), regs(&s1, slot, lane));
                let a = if matches!(op, "inc" | "dec") { 0 } else { a };
                let (new, ret) = atomic_model(op, bits, old, a, b);
                let stores = op != "cmpxchg" || new != old;
                (stores.then_some(new), Some(ret))
            } else {
                (None, Some(old))
            }
        };
        if let Some(new) = new {
            if !writable {
                o.fault_lane = Some(lane);
                break;
            }
            let mem = if slm { &mut o.slm } else { &mut o.svm };
            let old = mem[range.clone()].to_vec();
            mem[range.clone()].copy_from_slice(&new.to_le_bytes()[..size as usize]);
            o.writes.push((lane, slm, reported, old, mem[range.clone()].to_vec()));
        }
        if let Some(result) = result {
            // Atomics return `max(4, size)`-byte slots; loads write their own bytes.
            let slot = if atomic { size.max(4) } else { size };
            o.d[reg as usize..(reg + slot) as usize].copy_from_slice(&result.to_le_bytes()[..slot as usize]);
        }
    }
    o
}

/// Hears memory reads and writes with their lanes.
#[derive(Default)]
struct MemLog {
    lane: Option<u32>,
    reads: Vec<(u32, bool, u64, u64)>,
    writes: Vec<Write>,
}

impl Observer for MemLog {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: ThreadId, _: u32, _: &[u8], _: &[u8]) {}
    fn pred(&mut self, _: ThreadId, _: PredId, _: u32, _: u32) {}
    fn addr(&mut self, _: ThreadId, _: u32, _: u32, _: u32) {}
    fn mem(&mut self, _: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        let lane = self.lane.take().unwrap_or(u32::MAX);
        self.writes.push((lane, space != MemSpace::Svm, addr, old.to_vec(), new.to_vec()));
    }
    fn control(&mut self, _: ThreadId, _: &Control, _: &Control) {}
    fn mem_read(&mut self, _: ThreadId, space: MemSpace, addr: u64, len: u64) {
        let lane = self.lane.take().unwrap_or(u32::MAX);
        self.reads.push((lane, space != MemSpace::Svm, addr, len));
    }
    fn access_lane(&mut self, lane: Option<u32>) {
        self.lane = lane;
    }
}

fn outcome(case: &Case, r: &Run) -> Outcome {
    let mut svm = vec![0u8; MAPPED as usize];
    r.machine.svm.read(BASE, &mut svm).expect("mapped");
    let fault_lane = r.result.as_ref().err().map(|f| {
        let text = f.kind.to_string();
        let lane = text.strip_prefix("lane ").and_then(|t| t.split(':').next()).and_then(|l| l.parse().ok());
        lane.unwrap_or_else(|| panic!("{:?}: a fault without a lane: {text}", case.kind))
    });
    Outcome { svm, slm: r.machine.slms[0].bytes.clone(), d: r.bytes("D"), fault_lane, ..Outcome::default() }
}

#[test]
fn generated_messages_do_what_their_lanes_would_one_by_one() {
    let mut rng = Rng(29);
    let (mut faults, mut writes, mut shared) = (0, 0, 0);
    for i in 0..600 {
        let case = draw(&mut rng);
        let want = model(&case);
        let kept = std::cell::RefCell::new(None);
        let kept = &kept;
        let setup = |p: &vdb::program::Program, m: &mut vdb::machine::Machine| {
            m.svm.map_buffer(BASE, LEN, "buf");
            m.svm.write(BASE, &initial_svm()[..LEN as usize]).expect("write");
            m.slms.get_mut(0).expect("one group").bytes.copy_from_slice(&initial_slm());
            let addrs: Vec<u8> = case.addrs.iter().flat_map(|a| a.to_le_bytes()).collect();
            set_var(p, m, "ADDR", &addrs);
            let offs: Vec<u8> = case.offs.iter().flat_map(|a| a.to_le_bytes()).collect();
            set_var(p, m, "OFF", &offs);
            for (name, len) in [("D", 512), ("S", 512), ("S0", 128), ("S1", 128)] {
                set_var(p, m, name, &initial_reg(name, len));
            }
            if case.shared {
                // A checkpoint: every page and the SLM are shared when the message writes.
                *kept.borrow_mut() = Some(m.clone());
            }
        };
        let text = case.text();
        let plain = run_text(&text, 16, case.mask, setup);
        let got = outcome(&case, &plain);
        let what = format!(
            "case {i}: {:?} n={} mask={:#x} {:?} {:?}",
            case.kind, case.n, case.mask, case.addrs, case.offs
        );
        assert_eq!(got.fault_lane, want.fault_lane, "{what}");
        assert!(got.svm == want.svm, "{what}: SVM differs");
        assert!(got.slm == want.slm, "{what}: SLM differs");
        assert_eq!(got.d, want.d, "{what}: D differs");
        if let Some(checkpoint) = kept.borrow_mut().take() {
            let mut svm = vec![0u8; MAPPED as usize];
            checkpoint.svm.read(BASE, &mut svm).expect("mapped");
            assert!(
                svm == initial_svm() && checkpoint.slms[0].bytes == initial_slm(),
                "{what}: the copy changed"
            );
        }
        let mut log = MemLog::default();
        let observed = run_observed(&text, 16, case.mask, setup, &mut log);
        let again = outcome(&case, &observed);
        assert!(again == got, "{what}: observed run ends elsewhere");
        assert_eq!(log.reads, want.reads, "{what}: reads reported");
        assert_eq!(log.writes, want.writes, "{what}: writes reported");
        faults += usize::from(want.fault_lane.is_some());
        writes += usize::from(!want.writes.is_empty());
        shared += usize::from(case.shared && !want.writes.is_empty());
    }
    // The draws reach every outcome often.
    assert!(faults > 100 && faults < 450, "{faults} faulting cases");
    assert!(writes > 200, "{writes} cases that write");
    assert!(shared > 100, "{shared} that write shared memory");
}

/// A gather whose results land on its own address register: 64 accesses, more than one
/// pass, with the addresses at bytes 64.. of the register and the results from byte 0, so
/// that the first pass's second plane overwrites the addresses of lanes 9 to 15. Every lane
/// still reads at the address it was given (the payload is read before any access).
#[test]
fn a_gather_into_its_own_address_register_reads_where_it_was_told() {
    let decls = ".decl ADDR v_type=G type=uq num_elts=64 align=GRF";
    let text = kernel_text(decls, "    svm_gather.8.4 (M1, 16) ADDR.64 ADDR.0", 16);
    let r = run_text(&text, 16, 0xffff, |p, m| {
        m.svm.map_buffer(BASE, LEN, "buf");
        m.svm.write(BASE, &initial_svm()[..LEN as usize]).expect("write");
        let addrs: Vec<u8> =
            (0..64u64).flat_map(|i| (BASE + 32 * (i.wrapping_sub(8) % 16)).to_le_bytes()).collect();
        set_var(p, m, "ADDR", &addrs);
    })
    .ok();
    let got = r.bytes("ADDR");
    let svm = initial_svm();
    for (j, lane) in (0..4usize).flat_map(|j| (0..16usize).map(move |lane| (j, lane))) {
        let at = 32 * lane + 8 * j;
        let slot = 8 * (16 * j + lane);
        assert_eq!(&got[slot..slot + 8], &svm[at..at + 8], "block {j} of lane {lane}");
    }
}

/// Everything a run shows: the fault (rendered) or none, thread 0's GRF, the SVM buffer
/// and padding, the SLM, and every change and read reported, in order.
#[derive(Debug, PartialEq)]
struct Whole {
    fault: Option<String>,
    grf: Vec<u8>,
    svm: Vec<u8>,
    slm: Vec<u8>,
    events: Vec<String>,
}

/// Hears everything, as text.
#[derive(Default)]
struct Everything(Vec<String>);

impl Observer for Everything {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        self.0.push(format!("grf {offset} {old:?} {new:?}"));
    }
    fn pred(&mut self, _: ThreadId, p: PredId, old: u32, new: u32) {
        self.0.push(format!("pred {p:?} {old} {new}"));
    }
    fn addr(&mut self, _: ThreadId, slot: u32, old: u32, new: u32) {
        self.0.push(format!("addr {slot} {old} {new}"));
    }
    fn mem(&mut self, _: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        self.0.push(format!("mem {space:?} {addr:#x} {old:?} {new:?}"));
    }
    fn control(&mut self, _: ThreadId, old: &Control, new: &Control) {
        self.0.push(format!("control {old:?} {new:?}"));
    }
    fn mem_read(&mut self, _: ThreadId, space: MemSpace, addr: u64, len: u64) {
        self.0.push(format!("read {space:?} {addr:#x} {len}"));
    }
    fn access_lane(&mut self, lane: Option<u32>) {
        self.0.push(format!("lane {lane:?}"));
    }
}

/// Hears what the recorder hears: everything but the lanes one by one, so a message's
/// plain loads may be done in one go and its stores to consecutive bytes come as one.
#[derive(Default)]
struct NoLanes(Everything);

impl Observer for NoLanes {
    const ACTIVE: bool = true;
    const LANE_ACCESSES: bool = false;
    fn grf(&mut self, t: ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        self.0.grf(t, offset, old, new)
    }
    fn pred(&mut self, t: ThreadId, p: PredId, old: u32, new: u32) {
        self.0.pred(t, p, old, new)
    }
    fn addr(&mut self, t: ThreadId, slot: u32, old: u32, new: u32) {
        self.0.addr(t, slot, old, new)
    }
    fn mem(&mut self, t: ThreadId, space: MemSpace, addr: u64, old: &[u8], new: &[u8]) {
        self.0.mem(t, space, addr, old, new)
    }
    fn control(&mut self, t: ThreadId, old: &Control, new: &Control) {
        self.0.control(t, old, new)
    }
    fn mem_read(&mut self, t: ThreadId, space: MemSpace, addr: u64, len: u64) {
        self.0.mem_read(t, space, addr, len)
    }
    fn access_lane(&mut self, lane: Option<u32>) {
        self.0.access_lane(lane)
    }
}

/// An observer of a generated run, and what it heard, in order.
trait Heard: Observer + Default {
    fn heard(self) -> Vec<String>;
}

impl Heard for Everything {
    fn heard(self) -> Vec<String> {
        self.0
    }
}

impl Heard for NoLanes {
    fn heard(self) -> Vec<String> {
        self.0 .0
    }
}

impl Heard for vdb::exec::NullObserver {
    fn heard(self) -> Vec<String> {
        Vec::new()
    }
}

/// One generated message: its line, the declarations it needs, the bytes of its address
/// register (`ADDR`), and whether surface T6 is bound.
fn draw_compiled(rng: &mut Rng) -> (String, Vec<u8>, bool) {
    // Lanes and channel offsets: SIMD1 to SIMD32, the upper half of SIMD32 now and then.
    let n = rng.pick(&[1u32, 2, 4, 8, 16, 32]);
    let emask = if n == 16 && rng.below(4) == 0 { "M5" } else { "M1" };
    let pred = match rng.below(4) {
        0 => "(P1) ",
        1 => "(!P1) ",
        _ => "",
    };
    // Register operands start anywhere in their variable: the payload of the last one, D,
    // sometimes runs past the register file.
    let d = format!("D.{}", 32 * if rng.below(4) == 0 { 56 + rng.below(8) } else { rng.below(8) });
    let s = |rng: &mut Rng, v: &str| if rng.below(6) == 0 { "%null.0".to_string() } else { format!("{v}.0") };
    let svm_addr = |rng: &mut Rng| -> u64 {
        match rng.below(60) {
            0 => 9000,                                                // unmapped
            1 => BASE + LEN - 4 + rng.below(8),                       // the buffer's end, its padding
            2..=3 => BASE + rng.below(64) * 8 + rng.pick(&[1, 2, 4]), // misaligned
            _ => BASE + 8 * rng.below(600),
        }
    };
    let offset = |rng: &mut Rng| -> u64 {
        match rng.below(40) {
            0 => SLM - 4 + rng.below(8),
            1 => 4 * rng.below(64) + rng.pick(&[1, 2]),
            2..=3 => 0x1000_0000 + 4 * rng.below(64),
            _ => 4 * rng.below(1000),
        }
    };
    let (line, asize, svm) = match rng.below(8) {
        0 => {
            let store = rng.below(2) == 0;
            let (block, blocks) = (rng.pick(&[1, 4, 8]), rng.pick(&[1, 2, 4]));
            let op = if store { "svm_scatter" } else { "svm_gather" };
            let data = if !store && rng.below(8) == 0 { "%null.0".to_string() } else { d.clone() };
            (format!("{op}.{block}.{blocks} ({emask}, {n}) ADDR.0 {data}"), 8, true)
        }
        1 => {
            let store = rng.below(2) == 0;
            let ch = rng.pick(&["R", "RG", "RGBA", "GA", "B", "RBA"]);
            if rng.below(2) == 0 {
                let op = if store { "svm_scatter4scaled" } else { "svm_gather4scaled" };
                // A base of BASE and small offsets, or a small base and SVM addresses.
                let (base, svm) = if rng.below(2) == 0 {
                    (format!("{:#x}:uq", 8 * rng.below(4)), true)
                } else {
                    ("BASEQ(0,0)<0;1,0>".into(), false)
                };
                (format!("{op}.{ch} ({emask}, {n}) {base} ADDR.0 {d}"), 8, svm)
            } else {
                let op = if store { "scatter4_scaled" } else { "gather4_scaled" };
                let surf = if rng.below(2) == 0 { "%slm" } else { "T6" };
                (format!("{op}.{ch} ({emask}, {n}) {surf} {:#x}:ud ADDR.0 {d}", 4 * rng.below(4)), 4, false)
            }
        }
        2 => {
            let op = if rng.below(2) == 0 { "scatter_scaled" } else { "gather_scaled" };
            let surf = if rng.below(2) == 0 { "%slm" } else { "T6" };
            let blocks = rng.pick(&[1, 2, 4]);
            (format!("{op}.{blocks} ({emask}, {n}) {surf} 0x0:ud ADDR.0 {d}"), 4, false)
        }
        3 => {
            let op = rng.pick(&OPS);
            let bits = rng.pick(&[32, 64]);
            let width = if bits == 64 { ".64" } else { "" };
            let dst = if rng.below(4) == 0 { "%null.0".to_string() } else { d.clone() };
            (
                format!(
                    "svm_atomic.{op}{width} ({emask}, {n}) ADDR.0 {dst} {} {}",
                    s(rng, "S0"),
                    s(rng, "S1")
                ),
                8,
                true,
            )
        }
        4 => {
            let op = rng.pick(&OPS);
            let surf = if rng.below(2) == 0 { "%slm" } else { "T6" };
            let dst = if rng.below(4) == 0 { "%null.0".to_string() } else { d.clone() };
            (
                format!(
                    "dword_atomic.{op} ({emask}, {n}) {surf} ADDR.0 {} {} {dst}",
                    s(rng, "S0"),
                    s(rng, "S1")
                ),
                4,
                false,
            )
        }
        5 => {
            // Blocks of 1 to 8 OWords at one address, whatever the lanes: SVM ones at a
            // register's address, OWord ones at an immediate or register offset in T6 or SLM.
            let blocks = rng.pick(&[1, 2, 4, 8]);
            if rng.below(2) == 0 {
                let op = rng.pick(&[
                    "svm_block_ld",
                    "svm_block_ld.aligned",
                    "svm_block_ld.unaligned",
                    "svm_block_st",
                ]);
                (format!("{op} ({blocks}) ADDR(0,0)<0;1,0> {d}"), 8, true)
            } else {
                let op = rng.pick(&["oword_ld", "oword_ld_unaligned", "oword_st"]);
                let surf = if rng.below(2) == 0 { "%slm" } else { "T6" };
                let off = if rng.below(2) == 0 {
                    format!(
                        "{:#x}:ud",
                        if op == "oword_ld_unaligned" { 4 * rng.below(300) } else { rng.below(300) }
                    )
                } else {
                    "ADDR(0,0)<0;1,0>".to_string()
                };
                (format!("{op} ({blocks}) {surf} {off} {d}"), 8, false)
            }
        }
        _ => {
            // LSC: ugm (a64, a32) or slm (a32, a16); scaled and offset addresses; every data
            // size; vectors; transposed forms; atomics.
            let slm = rng.below(2) == 0;
            let asize = if slm { rng.pick(&[4, 2]) } else { rng.pick(&[8, 8, 4]) };
            let scale =
                if rng.below(4) == 0 { format!("{:#x}*", rng.pick(&[2, 4, 8])) } else { String::new() };
            let off = match rng.below(3) {
                0 => format!("+{:#x}", 4 * rng.below(8)),
                1 => format!("-{:#x}", 4 * rng.below(4)),
                _ => String::new(),
            };
            let addr = format!("flat[{scale}ADDR{off}]:a{}", asize * 8);
            let sfid = if slm { "slm" } else { "ugm" };
            let line = match rng.below(4) {
                0 => {
                    let op = rng.pick(&["iadd", "icas", "umax", "smin", "xchg", "or"]);
                    let ty = rng.pick(&["d32", "d64"]);
                    let dst = if rng.below(4) == 0 { format!("%null:{ty}") } else { format!("{d}:{ty}") };
                    let (s0, s1) = (s(rng, "S0"), if op == "icas" { s(rng, "S1") } else { "%null".into() });
                    format!(
                        "lsc_atomic_{op}.{sfid} ({emask}, {n}) {dst} {addr} {} {}",
                        s0.trim_end_matches(".0"),
                        s1.trim_end_matches(".0")
                    )
                }
                1 => {
                    let shape = rng.pick(&["d32t", "d32x2t", "d32x4t", "d64x4t", "d64x8t", "d8t", "d64x64t"]);
                    if rng.below(2) == 0 {
                        format!("lsc_load.{sfid} (M1_NM, 1) {d}:{shape} {addr}")
                    } else {
                        format!("lsc_store.{sfid} (M1_NM, 1) {addr} {d}:{shape}")
                    }
                }
                _ => {
                    let shape = rng.pick(&[
                        "d32", "d16", "d8", "d16u32", "d8u32", "d16u32h", "d64", "d32x2", "d32x3", "d32x4",
                        "d64x2",
                    ]);
                    if rng.below(2) == 0 {
                        format!("lsc_load.{sfid} ({emask}, {n}) {d}:{shape} {addr}")
                    } else {
                        format!("lsc_store.{sfid} ({emask}, {n}) {addr} {d}:{shape}")
                    }
                }
            };
            (line, asize, !slm && asize == 8)
        }
    };
    let mut addr = vec![];
    // A quarter of the messages reach only plain addresses (aligned, inside the SLM or the
    // buffer): on many lanes those are the loads done in one go.
    let all_plain = rng.below(4) == 0;
    for _ in 0..32 {
        let v = match (all_plain, svm) {
            (true, true) => BASE + 16 * rng.below(250),
            (true, false) => 16 * rng.below(200),
            (false, true) => svm_addr(rng),
            (false, false) => offset(rng),
        };
        // Scaled LSC addresses: small values that land in the same places.
        let v = if line.contains("oword_ld ") || line.contains("oword_st") {
            v / 16
        } else if line.contains("*ADDR") && !svm {
            v / 8
        } else if line.contains("*ADDR") {
            BASE / 8 + rng.below(600)
        } else {
            v
        };
        addr.extend_from_slice(&v.to_le_bytes()[..asize as usize]);
    }
    // Block messages take no predicate.
    let pred = if line.contains("_block_") || line.starts_with("oword") { "" } else { pred };
    (format!("    {pred}{line}"), addr, rng.below(5) != 0)
}

/// Runs `text` on one SIMD32 thread with fast paths on or off, heard by an `O`.
fn run_compiled_or_not<O: Heard>(
    text: &str,
    addr: &[u8],
    bound: bool,
    mask: u32,
    seed: u64,
    fast: bool,
) -> (Whole, vdb::exec::Tier) {
    use std::sync::Arc;
    use vdb::machine::{Machine, Shared, Slm, ThreadState};
    let program = Arc::new(crate::harness::parse(text));
    let mut thread = ThreadState::new(&program, 32, mask);
    let mut s = seed;
    for b in thread.grf.iter_mut() {
        *b = lcg(&mut s) as u8;
    }
    // Zero words in the sources half the time, as in the first KB of memory: compares that
    // hold (a compare-exchange stores) are common.
    for name in ["S0", "S1"] {
        let v = program.var(program.var_id(vdb::isa::UnitId(0), name).expect(name));
        for w in thread.grf[v.offset as usize..(v.offset + v.size) as usize].chunks_exact_mut(4) {
            if lcg(&mut s).is_multiple_of(2) {
                w.fill(0);
            }
        }
    }
    thread.preds[0] = lcg(&mut s) as u32;
    let mut machine = Machine {
        threads: vec![Shared::new(thread)].into(),
        slms: vec![Shared::new(Slm::new(SLM as usize))].into(),
        ..Machine::default()
    };
    set_var(&program, &mut machine, "ADDR", addr);
    set_var(&program, &mut machine, "BASEQ", &BASE.to_le_bytes());
    machine.svm.map_buffer(BASE, LEN, "buf");
    machine.svm.write(BASE, &initial_svm()[..LEN as usize]).expect("write");
    machine.svm.write(BASE, &[0; 1024]).expect("write");
    let slm = &mut machine.slms.get_mut(0).expect("one group").bytes;
    slm.copy_from_slice(&initial_slm());
    slm[..1024].fill(0);
    let t6 = program.states.iter().position(|st| st.name == "T6").expect("T6");
    machine.surfaces = vec![None; program.states.len()];
    if bound {
        machine.surfaces[t6] = Some((BASE, LEN));
    }
    let mut interp = vdb::exec::Interpreter::new(program.clone());
    interp.use_fast_paths = fast;
    let at = program.insts.iter().position(|i| i.op.family() == vdb::isa::Family::Memory).expect("a message");
    let tier = interp.tier(at);
    let mut events = O::default();
    let mut sched = vdb::exec::Scheduler::single_group(1);
    let result = vdb::exec::run_to_end(&interp, &mut machine, &mut sched, &mut events);
    let mut svm = vec![0u8; MAPPED as usize];
    machine.svm.read(BASE, &mut svm).expect("mapped");
    let whole = Whole {
        fault: result.err().map(|f| f.render(&program)),
        grf: machine.threads[0].grf.clone(),
        svm,
        slm: machine.slms[0].bytes.clone(),
        events: events.heard(),
    };
    (whole, tier)
}

/// Every gather, scatter and atomic form with a compiled payload (`svm_gather`/`scatter`,
/// the `4scaled` forms, `gather`/`scatter_scaled`, `svm_atomic`, `dword_atomic`, LSC loads,
/// stores and atomics on ugm and SLM with a16/a32/a64, scaled and offset addresses, every
/// data size, vectors and transposed forms) and every compiled block (`svm_block_ld` and
/// `_st`, `oword_ld`, `oword_ld_unaligned`, `oword_st`), generated on bound and unbound surfaces, with
/// data operands anywhere in their variable (their payload sometimes past the register
/// file), under channel offsets, predicates and random dispatch masks: the compiled form and
/// `message.rs` end in the same registers, memory and fault, and report the same changes and
/// reads in the same order: to an observer that hears each lane's accesses, to one that does
/// not (for which a plain load is done in one go), and with no observer at all.
#[test]
fn generated_messages_agree_on_compiled_and_general_paths() {
    let decls = ".decl ADDR v_type=G type=uq num_elts=32 align=GRF
.decl BASEQ v_type=G type=uq num_elts=4 align=GRF
.decl S0 v_type=G type=uq num_elts=32 align=GRF
.decl S1 v_type=G type=uq num_elts=32 align=GRF
.decl P1 v_type=P num_elts=32
.decl T6 v_type=T num_elts=1 v_name=T6
.decl D v_type=G type=ud num_elts=512 align=GRF";
    let mut rng = Rng(2929);
    let (mut compiled, mut faults, mut past_grf) = (0, 0, 0);
    let mut forms = std::collections::BTreeSet::new();
    for i in 0..1500 {
        let (line, addr, bound) = draw_compiled(&mut rng);
        let text = kernel_text(decls, &line, 32);
        let mask = if rng.below(3) == 0 { rng.next() as u32 } else { u32::MAX };
        let seed = rng.next();
        // Heard lane by lane (the debugger's lane queries), as the recorder hears, or not
        // at all (a plain run): each may take its own way through a message.
        let run = |fast| match i % 3 {
            0 => run_compiled_or_not::<Everything>(&text, &addr, bound, mask, seed, fast),
            1 => run_compiled_or_not::<NoLanes>(&text, &addr, bound, mask, seed, fast),
            _ => run_compiled_or_not::<vdb::exec::NullObserver>(&text, &addr, bound, mask, seed, fast),
        };
        let (fast, tier) = run(true);
        let (general, _) = run(false);
        if fast != general {
            let what = match (&fast.fault, &general.fault) {
                (f, g) if f != g => format!("faults: compiled {f:?}, general {g:?}"),
                _ if fast.events != general.events => {
                    let k = fast.events.iter().zip(&general.events).position(|(a, b)| a != b).unwrap_or(0);
                    format!(
                        "event {k}: compiled {:?}, general {:?}",
                        fast.events.get(k),
                        general.events.get(k)
                    )
                }
                _ => "state differs".into(),
            };
            panic!("case {i} ({tier:?}, mask {mask:#x}, bound {bound}):\n{line}\n{what}");
        }
        if tier == vdb::exec::Tier::Message {
            compiled += 1;
            forms.insert(
                line.split_whitespace()
                    .find(|w| !w.starts_with('('))
                    .unwrap_or("")
                    .split('.')
                    .next()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        faults += usize::from(general.fault.is_some());
        past_grf += usize::from(general.fault.as_deref().is_some_and(|f| f.contains("GRF bytes")));
    }
    // Nearly every form compiles, and the draws reach faults of each kind.
    assert!(compiled > 1400, "{compiled} compiled");
    assert_eq!(forms.len(), 23, "{forms:?}");
    assert!(faults > 200 && faults < 1200, "{faults} faulting cases");
    assert!(past_grf > 20, "{past_grf} cases with a payload past the register file");
}
