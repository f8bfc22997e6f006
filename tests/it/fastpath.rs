//! The interpreter's integer fast paths give bit-identical results to the general ALU path,
//! on random operands, for every op, type combination and modifier they accept.

use std::sync::Arc;

use vdb::exec::{run_to_end, Interpreter, NullObserver, Observer, Scheduler};
use vdb::isa::{PredId, UnitId};
use vdb::machine::{Control, Machine, MemSpace, Shared, ThreadId, ThreadState};

use crate::harness::{kernel_text, lcg, parse};

const TYPES: [&str; 8] = ["d", "ud", "w", "uw", "b", "ub", "q", "uq"];

/// Runs `body` on random A/B contents with fast paths on or off; returns R's bytes and P1.
fn run(decls: &str, body: &str, seed: u64, fast: bool) -> (Vec<u8>, u32) {
    let program = Arc::new(parse(&kernel_text(decls, body, 16)));
    let mut thread = ThreadState::new(&program, 16, 0xffff);
    let mut s = seed;
    for name in ["A", "B"] {
        let v = program.var(program.var_id(UnitId(0), name).expect("var"));
        for b in &mut thread.grf[v.offset as usize..(v.offset + v.size) as usize] {
            *b = lcg(&mut s) as u8;
        }
        // Small shift counts and equal lanes make the interesting cases common.
        if lcg(&mut s).is_multiple_of(3) {
            thread.grf[v.offset as usize] = 0;
        }
    }
    thread.preds[0] = lcg(&mut s) as u32 & 0xffff;
    let mut machine = Machine { threads: vec![Shared::new(thread)].into(), ..Machine::default() };
    let mut interp = Interpreter::new(program.clone());
    interp.use_fast_paths = fast;
    let mut sched = Scheduler::single_group(1);
    if let Err(f) = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver) {
        panic!("{}: {}", body, f.render(&program));
    }
    let r = program.var(program.var_id(UnitId(0), "R").expect("R"));
    let t = &machine.threads[0];
    (t.grf[r.offset as usize..(r.offset + r.size) as usize].to_vec(), t.preds[1])
}

#[test]
fn fast_integer_paths_agree_with_the_general_alu() {
    let mut seed = 7u64;
    let mut checked = 0;
    for (i, ta) in TYPES.iter().enumerate() {
        for tb in TYPES.iter().skip(i % 3).step_by(3) {
            for td in ["d", "ud", "w", "q", "uq", "ub"] {
                let decls = format!(
                    ".decl A v_type=G type={ta} num_elts=16 align=hword\n.decl B v_type=G type={tb} num_elts=16 align=hword\n.decl R v_type=G type={td} num_elts=16 align=hword\n.decl P0 v_type=P num_elts=16\n.decl P1 v_type=P num_elts=16"
                );
                let mut bodies: Vec<String> = ["add", "mul", "and", "or", "xor", "shl", "shr", "asr"]
                    .iter()
                    .map(|op| format!("    {op} (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>"))
                    .collect();
                bodies.push("    add (M1, 16) R(0,0)<1> (-)A(0,0)<1;1,0> B(0,1)<0;1,0>".into());
                bodies.push("    mov (M1, 8) R(0,0)<2> (abs)A(0,0)<2;1,0>".into());
                bodies.push("    (P0) sel (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    (!P0) add (M1, 16) R(0,0)<1> A(0,0)<1;1,0> 0xfffffff9:d".into());
                // Other exec sizes, and a channel offset (lanes 8..15 of the masks).
                bodies.push("    add (M1, 1) R(0,1)<1> A(0,2)<0;1,0> B(0,3)<0;1,0>".into());
                bodies.push("    (P0) xor (M1, 4) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    (!P0) shl (M3, 8) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    cmp.lt (M3, 8) P1 A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    cmp.ge (M1, 4) P1 A(0,0)<1;1,0> 0x7:d".into());
                for rel in ["eq", "ne", "lt", "le", "gt", "ge"] {
                    bodies.push(format!("    cmp.{rel} (M1, 16) P1 A(0,0)<1;1,0> B(0,0)<1;1,0>"));
                    bodies.push(format!("    cmp.{rel} (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,2)<0;1,0>"));
                }
                for body in &bodies {
                    seed = seed.wrapping_add(1);
                    let fast = run(&decls, body, seed, true);
                    let slow = run(&decls, body, seed, false);
                    assert_eq!(fast, slow, "{ta} {tb} -> {td}: {body}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} cases");
}

/// What one generated instruction left behind: R's bytes, P1 and the register writes it
/// reported to the observer (what a recording logs), or the fault it raised.
type Outcome = Result<(Vec<u8>, u32, Vec<(u32, u8, u8)>), String>;

/// The register bytes an instruction reports writing, one (GRF offset, old, new) per byte
/// (sorted by the caller): the fast forms must report what the general path reports, which
/// is what a recording logs.
#[derive(Default)]
struct Writes(Vec<(u32, u8, u8)>);

impl Observer for Writes {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        self.0.extend(old.iter().zip(new).enumerate().map(|(i, (&o, &n))| (offset + i as u32, o, n)));
    }
    fn grf_lanes(&mut self, _: ThreadId, offset: u32, size: u32, lanes: u32, old: &[u8], new: &[u8]) {
        for (i, (&o, &n)) in old.iter().zip(new).enumerate() {
            if lanes >> (i as u32 / size) & 1 != 0 {
                self.0.push((offset + i as u32, o, n));
            }
        }
    }
    fn pred(&mut self, _: ThreadId, _: PredId, _: u32, _: u32) {}
    /// Address register writes go in as bytes far past any GRF offset (slot `s` at
    /// `ADDR_BYTES + 4s`).
    fn addr(&mut self, _: ThreadId, slot: u32, old: u32, new: u32) {
        let bytes = old.to_le_bytes().into_iter().zip(new.to_le_bytes());
        self.0.extend(bytes.enumerate().map(|(i, (o, n))| (ADDR_BYTES + 4 * slot + i as u32, o, n)));
    }
    fn mem(&mut self, _: ThreadId, _: MemSpace, _: u64, _: &[u8], _: &[u8]) {}
    fn control(&mut self, _: ThreadId, _: &Control, _: &Control) {}
}

/// Where [`Writes`] puts address register bytes.
const ADDR_BYTES: u32 = 1 << 24;

/// The first byte the two paths report differently.
fn written_differ(fast: &[(u32, u8, u8)], general: &[(u32, u8, u8)]) -> String {
    let i = fast.iter().zip(general).position(|(a, b)| a != b).unwrap_or(fast.len().min(general.len()));
    format!(
        "reported writes ({} and {} bytes) differ first at {i}: fast {:?}, general {:?}",
        fast.len(),
        general.len(),
        fast.get(i),
        general.get(i)
    )
}

/// Where a fast and a general outcome first differ: an element of R (`unit` bytes), P1, the
/// writes reported, or the outcomes whole (a fault on either side).
fn first_difference(fast: &Outcome, general: &Outcome, unit: usize) -> String {
    match (fast, general) {
        (Ok((f, fp, fw)), Ok((g, gp, gw))) => {
            match f.chunks(unit).zip(g.chunks(unit)).position(|(x, y)| x != y) {
                Some(i) => format!(
                    "R element {i} ({unit} bytes): fast {:02x?}, general {:02x?}",
                    &f[unit * i..unit * (i + 1)],
                    &g[unit * i..unit * (i + 1)]
                ),
                None if fp != gp => format!("P1: fast {fp:#x}, general {gp:#x}"),
                None => written_differ(fw, gw),
            }
        }
        _ => format!("fast {fast:?}\ngeneral {general:?}"),
    }
}

/// How a generated case fills its variables A, B and R.
#[derive(Copy, Clone)]
enum Fill {
    /// Whole random words, words with only small values (shift counts, equal lanes) and
    /// words around the sign bit, chosen per variable.
    Integers,
    /// f32 values: random bits, specials (signed zeros, infinities, quiet and signalling
    /// NaNs, denormals, the largest finite), values around 1 and small integers.
    Floats,
    /// f64 values of the same kinds (see [`double_bits`]).
    Doubles,
    /// f64 values most of which are normal and near 1 (exponents within ±40), so that
    /// whole vectors of them meet no NaN, infinity or denormal; now and then one of those.
    TameDoubles,
    /// Halves of the same kind (see [`half_bits`]).
    TameHalves,
}

/// Runs `text` from the same fill and dispatch mask on the fast and on the general path
/// ([`run_filled`], instruction `at`): the fast outcome and the tier it took, or where the two
/// first differ (an element of R being `unit` bytes) with that tier.
fn on_both_paths(
    text: &str,
    seed: u64,
    mask: u32,
    fill: Fill,
    at: usize,
    unit: usize,
) -> Result<(Outcome, vdb::exec::Tier), String> {
    let (fast, tier) = run_filled(text, seed, mask, true, fill, at);
    let (general, _) = run_filled(text, seed, mask, false, fill, at);
    if fast == general {
        Ok((fast, tier))
    } else {
        Err(format!("({tier:?}) {}", first_difference(&fast, &general, unit)))
    }
}

/// Declarations of A, B and R (64 elements of types `ta`, `tb`, `td`) and predicates P0, P1.
fn abr_decls(ta: &str, tb: &str, td: &str) -> String {
    format!(
        ".decl A v_type=G type={ta} num_elts=64 align=hword\n.decl B v_type=G type={tb} num_elts=64 align=hword\n.decl R v_type=G type={td} num_elts=64 align=hword\n.decl P0 v_type=P num_elts=32\n.decl P1 v_type=P num_elts=32"
    )
}

/// Runs `text` (one SIMD32 thread, dispatch mask `mask`) with fast paths on or off, A, B and
/// R filled from `seed` as `fill` says; also returns the tier instruction `at` took.
fn run_filled(
    text: &str,
    seed: u64,
    mask: u32,
    fast: bool,
    fill: Fill,
    at: usize,
) -> (Outcome, vdb::exec::Tier) {
    let program = Arc::new(parse(text));
    let mut thread = ThreadState::new(&program, 32, mask);
    let mut s = seed;
    if let Some(id) = program.var_id(UnitId(0), "O") {
        // Byte offsets for address registers: multiples of 8 below 384, so that most
        // indirect reads land inside A and a few run past it, and one in 16 off by 2 or 4
        // bytes, misaligned for the wider types (both paths must fault alike).
        let v = program.var(id);
        for o in thread.grf[v.offset as usize..(v.offset + v.size) as usize].chunks_exact_mut(2) {
            let skew = [2, 4].get(lcg(&mut s) as usize % 32).copied().unwrap_or(0);
            o.copy_from_slice(&(((lcg(&mut s) % 48) * 8 + skew) as u16).to_le_bytes());
        }
    }
    for name in ["A", "B", "R"] {
        let v = program.var(program.var_id(UnitId(0), name).expect("var"));
        let bytes = &mut thread.grf[v.offset as usize..(v.offset + v.size) as usize];
        let style = lcg(&mut s) % 3;
        match fill {
            Fill::Integers => {
                for b in bytes.iter_mut() {
                    let r = lcg(&mut s);
                    *b = match style {
                        0 => r as u8,
                        1 => (r % 5) as u8,
                        _ => [0x00, 0x7f, 0x80, 0xff][(r % 4) as usize],
                    };
                }
            }
            Fill::Floats => {
                for word in bytes.chunks_exact_mut(4) {
                    word.copy_from_slice(&float_bits(&mut s, style).to_le_bytes());
                }
            }
            Fill::Doubles => {
                for word in bytes.chunks_exact_mut(8) {
                    word.copy_from_slice(&double_bits(&mut s, style).to_le_bytes());
                }
            }
            Fill::TameHalves => {
                for word in bytes.chunks_exact_mut(2) {
                    word.copy_from_slice(&(half_bits(&mut s) as u16).to_le_bytes());
                }
            }
            Fill::TameDoubles => {
                // A few values recur, so that lanes of two sources are often equal (the
                // compares' equal cases, min/max of equal values and of -0 and +0).
                const RECUR: [f64; 6] = [1.0, -1.0, 0.5, 2.0, 0.0, -0.0];
                for word in bytes.chunks_exact_mut(8) {
                    let bits = if lcg(&mut s).is_multiple_of(64) {
                        double_bits(&mut s, 1)
                    } else if lcg(&mut s).is_multiple_of(4) {
                        RECUR[(lcg(&mut s) % 6) as usize].to_bits()
                    } else {
                        let exponent = (1023 + lcg(&mut s) % 81 - 40) << 52;
                        (lcg(&mut s) & 0x800f_ffff_ffff_ffff) | exponent
                    };
                    word.copy_from_slice(&bits.to_le_bytes());
                }
            }
        }
    }
    // One P0 in four holds no lane or every lane (a predicate that disables every enabled
    // lane, which `sel` does not follow, is otherwise rare at eight lanes and more).
    thread.preds[0] = match lcg(&mut s) % 8 {
        0 => 0,
        1 => u32::MAX,
        _ => lcg(&mut s) as u32,
    };
    thread.preds[1] = lcg(&mut s) as u32;
    let mut machine = Machine { threads: vec![Shared::new(thread)].into(), ..Machine::default() };
    let mut interp = Interpreter::new(program.clone());
    interp.use_fast_paths = fast;
    let tier = interp.tier(at);
    // The same run in a burst (where the fast forms run inline, not through a step) ends in
    // the same registers and predicates, or the same fault.
    let mut burst = machine.clone();
    let burst_run = vdb::exec::run_to_end_unrecorded(&interp, &mut burst, &mut Scheduler::single_group(1));
    let mut sched = Scheduler::single_group(1);
    let mut writes = Writes::default();
    let stepped = run_to_end(&interp, &mut machine, &mut sched, &mut writes);
    assert_eq!(
        burst_run.as_ref().map(|r| (r.lane_ops, burst.state_hash())).map_err(|f| f.render(&program)),
        stepped.as_ref().map(|r| (r.lane_ops, machine.state_hash())).map_err(|f| f.render(&program)),
        "a burst and single steps differ on\n{text}"
    );
    let outcome = match stepped {
        Err(f) => Err(f.render(&program)),
        Ok(_) => {
            let r = program.var(program.var_id(UnitId(0), "R").expect("R"));
            let t = &machine.threads[0];
            let mut written = writes.0;
            written.sort_unstable();
            Ok((t.grf[r.offset as usize..(r.offset + r.size) as usize].to_vec(), t.preds[1], written))
        }
    };
    (outcome, tier)
}

/// An immediate of type `ty` for a generated instruction: values at the edges of every
/// width, negative ones (written in decimal, as IGC and people write them) and 64-bit ones.
fn immediate(s: &mut u64, ty: &str) -> String {
    const EDGES: [i64; 14] =
        [0, 1, -1, -8, 4, 31, 0x7f, 0x80, 0x7fff, 0x8000, 0x7fff_ffff, -0x8000_0000, 0x1_2345_6789, i64::MIN];
    let v =
        if lcg(s).is_multiple_of(4) { lcg(s) as i64 } else { EDGES[(lcg(s) % EDGES.len() as u64) as usize] };
    if v < 0 && lcg(s).is_multiple_of(2) && v != i64::MIN {
        format!("-{}:{ty}", v.unsigned_abs())
    } else {
        format!("{:#x}:{ty}", v as u64)
    }
}

/// A register source of type `ty` in one of the regions real code uses.
fn register(s: &mut u64, name: &str, modifier: &str) -> String {
    match lcg(s) % 4 {
        0 => format!("{modifier}{name}(0,{})<0;1,0>", lcg(s) % 4),
        1 => format!("{modifier}{name}(0,0)<2;1,0>"),
        _ => format!("{modifier}{name}(0,0)<1;1,0>"),
    }
}

/// `mulh.sat` on every pair of source types (d, ud), every destination type of 32 bits or
/// fewer, with and without source modifiers, immediates and scalars, exec sizes 1 to 32 and
/// dispatch masks: the high half of the exact product, clamped to the destination's range,
/// in the qword tier as on the general path (two `ud` sources' product passes i64).
#[test]
fn mulh_sat_agrees_on_fast_and_general_paths() {
    let mut s = 0x3u64;
    let mut in_place = 0;
    for case in 0..400u32 {
        let (ta, tb) = (["d", "ud"][case as usize % 2], ["d", "ud"][case as usize / 2 % 2]);
        let td = ["d", "ud", "w", "uw", "b", "ub"][case as usize / 4 % 6];
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let mut modifier = || ["", "", "(-)", "(abs)"][(lcg(&mut s) % 4) as usize];
        let (m0, m1) = (modifier(), modifier());
        let a = register(&mut s, "A", m0);
        let b = if lcg(&mut s).is_multiple_of(4) { immediate(&mut s, tb) } else { register(&mut s, "B", m1) };
        let body = format!("    mulh.sat (M1, {size}) R(0,0)<1> {a} {b}");
        let text = kernel_text(&abr_decls(ta, tb, td), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let (_, tier) =
            on_both_paths(&text, lcg(&mut s), dispatch, Fill::Integers, 0, 1).unwrap_or_else(|first| {
                panic!("fast and general paths differ on\n{body}\n(A: {ta}, B: {tb}, R: {td}): {first}")
            });
        in_place += usize::from(tier == vdb::exec::Tier::Qword);
    }
    assert!(in_place > 350, "{in_place} of 400 in the qword tier");
}

/// The qword tier's commonest forms, which run straight from register to register: src0 a
/// packed register, src1 one too, an immediate or a scalar, a packed destination, every
/// lane enabled. Generated over the lane-wise opcodes, q/uq/d/ud in each position (a d or ud
/// source where another is 64-bit, as IGC's 64-bit arithmetic has them), source modifiers,
/// exec sizes 8 to 32 at their channel offsets, with one case in four taken out of those
/// forms (a predicate, a dispatch mask with lanes off, a strided destination, a scalar src0):
/// every case agrees with the general ALU, in the qword tier.
#[test]
fn generated_packed_qword_instructions_agree_on_fast_and_general_paths() {
    const OPS: [&str; 13] =
        ["mov", "add", "mul", "and", "or", "xor", "shl", "shr", "asr", "min", "max", "rol", "ror"];
    let mut s = 0x64_u64;
    let mut direct = 0;
    let mut cases = 0;
    while cases < 2400 {
        let op = OPS[cases % OPS.len()];
        let [ta, tb, td] = [0, 0, 0].map(|_| ["q", "uq", "d", "ud"][(lcg(&mut s) % 4) as usize]);
        // Ops on 32-bit types alone are the dword tier's (a move has no src1).
        if ![ta, if op == "mov" { ta } else { tb }, td].iter().any(|t| t.ends_with('q')) {
            continue;
        }
        cases += 1;
        let size = [8, 16, 32][(lcg(&mut s) % 3) as usize];
        let offset = [0, 8, 16, 24].iter().copied().filter(|o| o % size == 0).nth((lcg(&mut s) % 4) as usize);
        let mask = format!("M{}", offset.unwrap_or(0) / 4 + 1);
        let mut modifier = || match lcg(&mut s) % 5 {
            0 if matches!(op, "mov" | "add" | "mul" | "min" | "max") => "(-)",
            1 if matches!(op, "mov" | "add" | "mul" | "min" | "max") => "(abs)",
            0 if matches!(op, "and" | "or" | "xor") => "(~)",
            _ => "",
        };
        let (m0, m1) = (modifier(), modifier());
        // One case in four out of the direct forms, one way or another.
        let (mut pred, mut dst, mut dispatch, mut a) = ("", "R(0,0)<1>", u32::MAX, "A(0,0)<1;1,0>");
        let plain = !lcg(&mut s).is_multiple_of(4);
        if !plain {
            match lcg(&mut s) % 4 {
                0 => pred = "(P0) ",
                1 => dispatch = lcg(&mut s) as u32,
                2 => dst = "R(0,0)<2>",
                _ => a = "A(0,1)<0;1,0>",
            }
        }
        let b = match (op, lcg(&mut s) % 3) {
            ("mov", _) => String::new(),
            (_, 0) => format!(" {}", immediate(&mut s, tb)),
            (_, 1) => format!(" {m1}B(0,{})<0;1,0>", lcg(&mut s) % 8),
            _ => format!(" {m1}B(0,0)<1;1,0>"),
        };
        let body = format!("    {pred}{op} ({mask}, {size}) {dst} {m0}{a}{b}");
        let text = kernel_text(&abr_decls(ta, tb, td), &body, 32);
        let unit = if td.ends_with('q') { 8 } else { 4 };
        let (_, tier) =
            on_both_paths(&text, lcg(&mut s), dispatch, Fill::Integers, 0, unit).unwrap_or_else(|first| {
                panic!("fast and general paths differ on\n{body}\n(A: {ta}, B: {tb}, R: {td}): {first}")
            });
        assert_eq!(tier, vdb::exec::Tier::Qword, "{body} ({ta}, {tb}, {td})");
        direct += usize::from(plain);
    }
    assert!(direct > 1500, "{direct} cases in the direct forms");
}

/// Every opcode of the fast tiers, with immediates in every source position, every integer
/// type, negative and 64-bit values, exec sizes 1 to 32 at every legal channel offset,
/// predicates and dispatch masks: the fast forms and the general ALU agree bit for bit (or
/// raise the same fault).
#[test]
fn generated_instructions_agree_on_fast_and_general_paths() {
    const OPS: [&str; 41] = [
        "mov", "add", "mul", "and", "or", "xor", "shl", "shr", "asr", "sel", "cmp.eq", "cmp.ne", "cmp.lt",
        "cmp.le", "cmp.gt", "cmp.ge", "min", "max", "mulh", "mad", "cbit", "fbh", "fbl", "lzd", "bfrev",
        "setp", "add3", "bfn", "p.and", "p.or", "p.xor", "p.not", "addc", "subb", "div", "mod", "madw",
        "not", "rol", "ror", "p.mov",
    ];
    let mut s = 0x5eed_u64;
    let mut by_tier = [0usize; 5];
    // div and mod cases in the dword and qword tiers, madw cases in the qword tier.
    let (mut divmod_fast, mut madw_fast) = ([0usize; 2], 0usize);
    // not, rol and ror cases in the dword and qword tiers.
    let mut not_rotate_fast = [0usize; 2];
    // Moves from a predicate in its plan; `.sat` cases in the qword tier; `setp` from a
    // register in place.
    let (mut pred_moves, mut sat_fast, mut setp_regs) = (0usize, 0usize, 0usize);
    for case in 0..6000u32 {
        let op = OPS[case as usize % OPS.len()];
        // A third of the cases in dwords, the dword tier's domain, a third in 64-bit and
        // 32-bit types, the qword tier's (chosen at random: the opcode follows the case
        // number, and a pool that did too would meet only every other opcode).
        let pool = match lcg(&mut s) % 3 {
            // addc and subb are defined on ud (ADDC.md, SUBB.md), mostly.
            _ if matches!(op, "addc" | "subb") && !lcg(&mut s).is_multiple_of(4) => &["ud"][..],
            // div and mod are defined on types of 32 bits at most (DIV.md, MOD.md), mostly.
            _ if matches!(op, "div" | "mod") && lcg(&mut s).is_multiple_of(2) => &TYPES[..6],
            // madw is defined on d and ud (MADW.md), mostly.
            _ if op == "madw" && !lcg(&mut s).is_multiple_of(4) => &TYPES[..2],
            0 => &TYPES[..2],
            1 => &["q", "uq", "d", "ud"][..],
            _ => &TYPES[..],
        };
        let [ta, tb, td] = [0, 0, 0].map(|_| pool[(lcg(&mut s) % pool.len() as u64) as usize]);
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let offsets: Vec<u32> = (0..32).step_by(size.max(4) as usize).collect();
        let offset = offsets[(lcg(&mut s) % offsets.len() as u64) as usize];
        let mask = format!("M{}", offset / 4 + 1);
        let arith = matches!(
            op,
            "mov"
                | "add"
                | "mul"
                | "sel"
                | "min"
                | "max"
                | "mulh"
                | "mad"
                | "add3"
                | "addc"
                | "subb"
                | "div"
                | "mod"
                | "madw"
        ) || op.starts_with("cmp");
        let mut modifier = || match (lcg(&mut s) % 6, arith) {
            (0, true) => "(-)",
            (1, true) => "(abs)",
            (0, false) if matches!(op, "and" | "or" | "xor" | "bfn" | "not") => "(~)",
            _ => "",
        };
        let (m0, m1, m2) = (modifier(), modifier(), modifier());
        let n_srcs = match op {
            "mov" | "cbit" | "fbh" | "fbl" | "lzd" | "bfrev" | "setp" | "not" => 1,
            "mad" | "add3" | "bfn" | "madw" => 3,
            _ => 2,
        };
        let mut mnemonic = if op == "bfn" { format!("bfn.x{:x}", lcg(&mut s) % 256) } else { op.to_string() };
        // `.sat` (one case in four where the parser takes it): the exact result clamped to
        // the destination's type.
        let sat = !(op.starts_with("cmp")
            || op.starts_with("p.")
            || matches!(op, "setp" | "addc" | "subb" | "madw"))
            && lcg(&mut s).is_multiple_of(4);
        if sat {
            mnemonic.push_str(".sat");
        }
        let mut src = |i: usize, ty: &str, m: &str| {
            if lcg(&mut s).is_multiple_of(10) {
                // A packed vector immediate: eight 4-bit elements, one per lane, repeated.
                format!("{:#010x}:{}", lcg(&mut s) as u32, ["v", "uv"][(lcg(&mut s) % 2) as usize])
            } else if lcg(&mut s).is_multiple_of(3) {
                immediate(&mut s, ty)
            } else {
                // Now and then src1 reads src0's register (equal operands: borrows, compares).
                let name = if i == 1 && lcg(&mut s).is_multiple_of(4) { "A" } else { ["A", "B", "A"][i] };
                register(&mut s, name, m)
            }
        };
        let mut srcs: Vec<String> = [(ta, m0), (tb, m1), (ta, m2)]
            .iter()
            .take(n_srcs)
            .enumerate()
            .map(|(i, (t, m))| src(i, t, m))
            .collect();
        // Now and then src1 is src0 itself: equal values in every lane (a borrow of 0 from
        // `subb`, compares that hold for equals).
        if n_srcs >= 2 && lcg(&mut s).is_multiple_of(8) {
            srcs[1] = srcs[0].clone();
        }
        // Packed, or every other element (how 64-bit emulation joins halves).
        let dst = if op == "setp" || op.starts_with("cmp") && lcg(&mut s).is_multiple_of(2) {
            "P1".to_string()
        } else {
            ["R(0,0)<1>", "R(0,0)<1>", "R(0,0)<2>", "R(0,1)<2>"][(lcg(&mut s) % 4) as usize].to_string()
        };
        let pred = match (op, lcg(&mut s) % 3) {
            _ if op.starts_with("cmp") || op == "setp" => "",
            ("sel", 0) | (_, 1) => "(P0) ",
            ("sel", _) | (_, 2) => "(!P0) ",
            _ => "",
        };
        let body = match op.strip_prefix("p.") {
            // Predicate logic: P1 from P0 and P1.
            Some("not") => format!("    not ({mask}, {size}) P1 P0"),
            // A predicate's bits into a register (IGC: `mov (M1_NM, 1) V(0,0)<1> P7`).
            Some("mov") => format!("    {pred}mov ({mask}, {size}) {dst} P0"),
            Some(logic) => format!("    {logic} ({mask}, {size}) P1 P0 P1"),
            // The carry (or borrow) into R's second half, or over the result's odd elements.
            None if matches!(op, "addc" | "subb") => {
                let carry = if lcg(&mut s).is_multiple_of(2) { "R(0,1)<2>" } else { "R(4,0)<1>" };
                format!("    {pred}{op} ({mask}, {size}) {dst} {carry} {}", srcs.join(" "))
            }
            None => format!("    {pred}{mnemonic} ({mask}, {size}) {dst} {}", srcs.join(" ")),
        };
        let text = kernel_text(&abr_decls(ta, tb, td), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let seed = lcg(&mut s);
        let (_, tier) = on_both_paths(&text, seed, dispatch, Fill::Integers, 0, 1).unwrap_or_else(|first| {
            panic!("fast and general paths differ on\n{body}\n(A: {ta}, B: {tb}, R: {td}): {first}")
        });
        by_tier[tier as usize] += 1;
        if matches!(op, "div" | "mod") && (tier as usize) < 2 {
            divmod_fast[tier as usize] += 1;
        }
        madw_fast += usize::from(op == "madw" && tier == vdb::exec::Tier::Qword);
        pred_moves += usize::from(op == "p.mov" && tier == vdb::exec::Tier::Pred);
        sat_fast += usize::from(sat && tier == vdb::exec::Tier::Qword);
        setp_regs += usize::from(op == "setp" && body.contains("A(") && tier == vdb::exec::Tier::Pred);
        if matches!(op, "not" | "rol" | "ror") && (tier as usize) < 2 {
            not_rotate_fast[tier as usize] += 1;
        }
    }
    // The generator must reach every integer tier often, or it compares the general path with
    // itself.
    assert!(
        divmod_fast[0] > 20 && divmod_fast[1] > 100,
        "div and mod cases (dword, qword tier): {divmod_fast:?}"
    );
    assert!(madw_fast > 60, "{madw_fast} madw cases in the qword tier");
    assert!(pred_moves > 100, "{pred_moves} moves from a predicate in place");
    assert!(sat_fast > 200, "{sat_fast} .sat cases in the qword tier");
    assert!(setp_regs > 40, "{setp_regs} setp cases from a register in place");
    assert!(
        not_rotate_fast[0] > 60 && not_rotate_fast[1] > 150,
        "not, rol and ror cases (dword, qword tier): {not_rotate_fast:?}"
    );
    assert!(
        by_tier[0] > 800 && by_tier[1] > 2500 && by_tier[3] > 500,
        "cases per tier (dword, qword, float, predicate forms, general): {by_tier:?}"
    );
}

/// An f32 for a generated float case (see [`Fill::Floats`]).
fn float_bits(s: &mut u64, style: u64) -> u32 {
    const SPECIAL: [u32; 14] = [
        0x0000_0000,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc1_2345,
        0x7f80_0001,
        0xffa0_0000,
        0x0000_0001,
        0x807f_ffff,
        0x0040_0000,
        0x7f7f_ffff,
        0x3f80_0000,
        0xbf80_0000,
    ];
    let r = lcg(s);
    match (style, r % 4) {
        (0, _) => r as u32,
        (1, 0) | (2, 0) | (2, 1) => SPECIAL[(lcg(s) % SPECIAL.len() as u64) as usize],
        // Around 1: products and sums that round, compares of near-equal values.
        (1, 1) => 1.0f32.to_bits().wrapping_add((lcg(s) % 64) as u32).wrapping_sub(32),
        (1, _) => ((lcg(s) % 200) as f32 - 100.0).to_bits(),
        _ => ((lcg(s) % 2000) as f32 / 16.0 - 60.0).to_bits(),
    }
}

/// A float case's `.sat` (one in five, not on compares) and predicate (`(P0)`, `(!P0)` or
/// none; `sel` always has one, compares never).
fn sat_and_predicate(s: &mut u64, op: &str) -> (&'static str, &'static str) {
    let sat = if !op.starts_with("cmp") && lcg(s).is_multiple_of(5) { ".sat" } else { "" };
    let pred = match (op, lcg(s) % 3) {
        _ if op.starts_with("cmp") => "",
        ("sel", 0) | (_, 1) => "(P0) ",
        ("sel", _) | (_, 2) => "(!P0) ",
        _ => "",
    };
    (sat, pred)
}

/// The tier a generated float case takes: a `mov` or `sel` that changes no bits (one float
/// type throughout, no modifier, no saturation) an integer one of its width (in place, dword or
/// qword: `taken` if it is one of those), every other case the float tier.
fn expected_float_tier(
    op: &str,
    ta: &str,
    td: &str,
    sat: &str,
    srcs: &[String],
    taken: vdb::exec::Tier,
) -> vdb::exec::Tier {
    use vdb::exec::Tier;
    let raw =
        matches!(op, "mov" | "sel") && ta == td && sat.is_empty() && srcs.iter().all(|t| !t.starts_with('('));
    match taken {
        Tier::Dword | Tier::Qword if raw => taken,
        _ if raw => Tier::Dword,
        _ => Tier::Float,
    }
}

/// An f64 for a generated hf/df case: random bits, specials (signed zeros, infinities, quiet
/// and signalling NaNs, denormals, the largest finite), an f32 value widened (so that f32
/// specials and values around 1 meet f64 ones), and sums that round.
fn double_bits(s: &mut u64, style: u64) -> u64 {
    const SPECIAL: [u64; 10] = [
        0,
        1 << 63,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0xfff8_1234_5678_9abc,
        0x7ff0_0000_0000_0001,
        0x0000_0000_0000_0001,
        0x800f_ffff_ffff_ffff,
        0x7fef_ffff_ffff_ffff,
    ];
    let r = lcg(s);
    match (style, r % 4) {
        (0, _) => lcg(s),
        (1, 0) | (2, 0) => SPECIAL[(lcg(s) % SPECIAL.len() as u64) as usize],
        (1, 1) => 1.0f64.to_bits().wrapping_add(lcg(s) % 64).wrapping_sub(32),
        _ => (f32::from_bits(float_bits(s, style)) as f64).to_bits(),
    }
}

/// hf, bf and df with each other, with f32 and (moves) with integers (`float_lanes.rs`): the
/// opcodes of that tier, the math ones included (div, pow, inv, log, exp, sqrt, rsqrt, sin,
/// cos, frc, rnd*), immediates of each format (specials included) in every source position, modifiers,
/// `.sat`, register regions, exec sizes 1 to 32 at every legal channel offset, predicates,
/// dispatch masks, and cr0 with each format's denormals kept or flushed and every rounding
/// mode: the tier and the general ALU agree bit for bit (or raise the same fault).
#[test]
fn generated_half_and_double_instructions_agree_on_fast_and_general_paths() {
    const OPS: [&str; 27] = [
        "mov", "add", "mul", "mad", "min", "max", "sel", "cmp.eq", "cmp.lt", "cmp.ge", "cmp.ne", "divm",
        "sqrtm", "div", "pow", "inv", "log", "exp", "sqrt", "rsqrt", "sin", "cos", "frc", "rndd", "rndu",
        "rnde", "rndz",
    ];
    const UNARY: [&str; 12] =
        ["inv", "log", "exp", "sqrt", "rsqrt", "sin", "cos", "frc", "rndd", "rndu", "rnde", "rndz"];
    const FLOATS: [&str; 4] = ["hf", "f", "df", "bf"];
    let mut s = 0x4a1f_d0b1_u64;
    let (mut lanes_tier, mut cases, mut conversions) = (0usize, 0usize, 0usize);
    // div, pow and the one-source math in the tier.
    let mut math = 0usize;
    for case in 0..6000u32 {
        let op = OPS[case as usize % OPS.len()];
        let arity = match op {
            "mad" => 3,
            "mov" | "sqrtm" => 1,
            _ if UNARY.contains(&op) => 1,
            _ => 2,
        };
        // One format per variable; at least one of them hf or df. divm and sqrtm are df's.
        let mut pick = || FLOATS[(lcg(&mut s) % 4) as usize];
        let [mut ta, mut tb, mut td] = [pick(), pick(), pick()];
        if matches!(op, "divm" | "sqrtm") && !lcg(&mut s).is_multiple_of(4) {
            [ta, tb, td] = ["df"; 3];
        }
        if ![ta, tb, td].iter().any(|t| *t != "f") {
            td = ["hf", "df"][(lcg(&mut s) % 2) as usize];
        }
        // A third of the moves convert between an integer and hf, bf or df.
        let wider = |t: &'static str| if t == "f" { "hf" } else { t };
        if op == "mov" && lcg(&mut s).is_multiple_of(3) {
            let int = TYPES[(lcg(&mut s) % TYPES.len() as u64) as usize];
            (ta, td) = if lcg(&mut s).is_multiple_of(2) { (int, wider(td)) } else { (wider(ta), int) };
        }
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let offsets: Vec<u32> = (0..32).step_by(size.max(4) as usize).collect();
        let offset = offsets[(lcg(&mut s) % offsets.len() as u64) as usize];
        let mask = format!("M{}", offset / 4 + 1);
        let mut srcs = Vec::new();
        for i in 0..arity {
            let ty = if i == 1 { tb } else { ta };
            let m = ["", "", "", "(-)", "(abs)", "(-abs)"][(lcg(&mut s) % 6) as usize];
            // (bf has no immediates in vISA's text.)
            let text = if TYPES.contains(&ty) && lcg(&mut s).is_multiple_of(4) {
                immediate(&mut s, ty)
            } else if ty != "bf" && !TYPES.contains(&ty) && lcg(&mut s).is_multiple_of(4) {
                let style = 1 + lcg(&mut s) % 2;
                let d = f64::from_bits(double_bits(&mut s, style));
                match ty {
                    "df" => format!("{:#018x}:df", d.to_bits()),
                    "f" => format!("{:#010x}:f", (d as f32).to_bits()),
                    _ => format!("{:#06x}:hf", vdb::exec::alu::f32_to_f16_bits(d as f32, 0)),
                }
            } else {
                register(&mut s, ["A", "B", "A"][i], m)
            };
            srcs.push(text);
        }
        let dst = if op.starts_with("cmp") {
            "P1"
        } else {
            ["R(0,0)<1>", "R(0,0)<1>", "R(0,0)<2>", "R(0,1)<2>"][(lcg(&mut s) % 4) as usize]
        };
        let (sat, pred) = sat_and_predicate(&mut s, op);
        // cr0: rounding mode (bits 4-5) and the denormal-keep bits of df (6), f (7), hf (10).
        let cr0 = [0x0u32, 0x10, 0x20, 0x30][(lcg(&mut s) % 4) as usize] | (lcg(&mut s) as u32 & 0x4c0);
        let body = format!(
            "    and (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0xfffffb0f:ud\n    or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> {cr0:#x}:ud\n    {pred}{op}{sat} ({mask}, {size}) {dst} {}",
            srcs.join(" ")
        );
        let text = kernel_text(&abr_decls(ta, tb, td), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let seed = lcg(&mut s);
        let fill = if lcg(&mut s).is_multiple_of(2) { Fill::Floats } else { Fill::Doubles };
        let unit = match td {
            "hf" | "bf" | "w" | "uw" => 2,
            "f" | "d" | "ud" => 4,
            "b" | "ub" => 1,
            _ => 8,
        };
        let (_, tier) = on_both_paths(&text, seed, dispatch, fill, 2, unit).unwrap_or_else(|first| {
            panic!("hf/bf/df tier and general ALU differ on\n{body}\n(A: {ta}, B: {tb}, R: {td}): {first}")
        });
        lanes_tier += usize::from(tier == vdb::exec::Tier::Float);
        conversions +=
            usize::from(tier == vdb::exec::Tier::Float && (TYPES.contains(&ta) || TYPES.contains(&td)));
        math += usize::from(
            tier == vdb::exec::Tier::Float && (UNARY.contains(&op) || matches!(op, "div" | "pow")),
        );
        cases += 1;
    }
    assert!(math > 1500, "{math} math cases in the tier");
    assert!(conversions > 40, "{conversions} integer conversions in the tier");
    // Nearly every case must take the tier, or the test compares the general ALU with itself.
    assert!(lanes_tier * 10 > cases * 9, "{lanes_tier} of {cases} cases took the hf/df tier");
}

/// Instructions whose operands are all df (the IEEE macros `divm` and `sqrtm` too), or all
/// hf, mostly in the default rounding mode and on values that are normal across whole vectors
/// (the native form of `float_lanes.rs`, which computes with the machine's f64 arithmetic),
/// now and then meeting a NaN, an infinity, a denormal kept or flushed by cr0, an overflow, an
/// hf `mad` whose sum f64 cannot hold, or another rounding mode (where it hands the
/// instruction to the per-lane way); moves between hf and f too: immediates, packed, scalar
/// and strided sources,
/// modifiers, `.sat`, strided destinations, exec sizes 1 to 32, predicates and dispatch masks.
/// The tier and the general ALU agree bit for bit.
#[test]
fn generated_double_and_half_instructions_agree_on_fast_and_general_paths() {
    const OPS: [&str; 15] = [
        "mov", "add", "mul", "mad", "min", "max", "sel", "cmp.eq", "cmp.lt", "cmp.le", "cmp.gt", "cmp.ge",
        "cmp.ne", "divm", "sqrtm",
    ];
    let mut s = 0xdf_u64;
    for case in 0..5000u32 {
        let half = case % 2 == 1;
        let (ty, unit, keep_bit) = if half { ("hf", 2, 0x400u32) } else { ("df", 8, 0x40) };
        let ops = if half { &OPS[..13] } else { &OPS[..] };
        let op = ops[(case / 2) as usize % ops.len()];
        let arity = match op {
            "mad" => 3,
            "mov" | "sqrtm" => 1,
            _ => 2,
        };
        let size = [1, 2, 4, 8, 16, 16, 32][(lcg(&mut s) % 7) as usize];
        // Half the hf moves convert, to hf from f or from hf to f.
        let (ta, td) = match (half && op == "mov", lcg(&mut s) % 4) {
            (true, 0) => ("f", "hf"),
            (true, 1) => ("hf", "f"),
            _ => (ty, ty),
        };
        let mut srcs = Vec::new();
        for i in 0..arity {
            let m = ["", "", "", "(-)", "(abs)", "(-abs)"][(lcg(&mut s) % 6) as usize];
            let text = match (lcg(&mut s) % 5, half) {
                (0 | 1, true) if ta == "f" => {
                    let style = 1 + lcg(&mut s) % 2;
                    format!("{:#010x}:f", float_bits(&mut s, style))
                }
                (0, false) => {
                    let style = 1 + lcg(&mut s) % 2;
                    format!("{:#018x}:df", double_bits(&mut s, style))
                }
                (1, false) => format!("{:#018x}:df", 1.5f64.powi((lcg(&mut s) % 40) as i32 - 20).to_bits()),
                (0 | 1, true) => format!("{:#06x}:hf", half_bits(&mut s)),
                _ => register(&mut s, ["A", "B", "A"][i], m),
            };
            srcs.push(text);
        }
        let dst = if op.starts_with("cmp") {
            "P1"
        } else {
            ["R(0,0)<1>", "R(0,0)<1>", "R(0,0)<1>", "R(0,0)<2>"][(lcg(&mut s) % 4) as usize]
        };
        let (sat, pred) = sat_and_predicate(&mut s, op);
        // Mostly round-to-nearest-even; the types' denormals kept or flushed (f's: bit 7).
        let mode =
            if lcg(&mut s).is_multiple_of(5) { [0x10u32, 0x20, 0x30][(lcg(&mut s) % 3) as usize] } else { 0 };
        let cr0 = mode | (lcg(&mut s) as u32 & (keep_bit | 0x80));
        let body = format!(
            "    and (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0xfffffb0f:ud\n    or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> {cr0:#x}:ud\n    {pred}{op}{sat} (M1, {size}) {dst} {}",
            srcs.join(" ")
        );
        let text = kernel_text(&abr_decls(ta, ty, td), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let seed = lcg(&mut s);
        let fill = match (lcg(&mut s).is_multiple_of(8), half) {
            (true, false) => Fill::Doubles,
            (true, true) => Fill::Floats,
            (false, false) => Fill::TameDoubles,
            (false, true) => Fill::TameHalves,
        };
        let unit = if td == "f" { 4 } else { unit };
        let (_, tier) = on_both_paths(&text, seed, dispatch, fill, 2, unit).unwrap_or_else(|first| {
            panic!("{ty} tier and general ALU differ on\n{body}\n(A: {ta}, R: {td}): {first}")
        });
        assert_eq!(tier, expected_float_tier(op, ta, td, sat, &srcs, tier), "{body}");
    }
}

/// Half bits for a generated hf case: mostly normal values near 1 (exponents within ±7,
/// whose sums and products stay normal), now and then one of any normal exponent (products
/// that overflow or fall to denormals, sums of far-apart magnitudes), a special (signed
/// zeros, infinities, NaNs, denormals, the largest finite) or any bits.
fn half_bits(s: &mut u64) -> u64 {
    const SPECIAL: [u64; 9] = [0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfd01, 0x0001, 0x83ff, 0x7bff];
    match lcg(s) % 48 {
        0 => SPECIAL[(lcg(s) % SPECIAL.len() as u64) as usize],
        1 => lcg(s) & 0xffff,
        2..=4 => (lcg(s) & 0x83ff) | (1 + lcg(s) % 30) << 10,
        _ => (lcg(s) & 0x83ff) | (15 + lcg(s) % 15 - 7) << 10,
    }
}

/// Every opcode of the f32 tier, f32 immediates among the sources (specials included),
/// modifiers, `.sat`, conversions between f32 and every integer type of 32 bits or fewer,
/// exec sizes 1 to 32 at every legal channel offset, predicates, dispatch masks, and cr0
/// with denormals kept or flushed and every rounding mode: the f32 tier and the general ALU
/// agree bit for bit (or raise the same fault).
#[test]
fn generated_float_instructions_agree_on_fast_and_general_paths() {
    const OPS: [&str; 26] = [
        "mov", "add", "mul", "mad", "div", "pow", "min", "max", "sel", "cmp.eq", "cmp.ne", "cmp.lt",
        "cmp.le", "cmp.gt", "cmp.ge", "inv", "log", "exp", "sqrt", "rsqrt", "sin", "cos", "frc", "rndd",
        "rndu", "rnde",
    ];
    const INTS: [&str; 8] = ["d", "ud", "w", "uw", "b", "ub", "q", "uq"];
    let mut s = 0xf10a7_u64;
    let (mut float_tier, mut cases) = (0usize, 0usize);
    for case in 0..6000u32 {
        let op = OPS[case as usize % OPS.len()];
        let arity = match op {
            "mad" => 3,
            "mov" | "inv" | "log" | "exp" | "sqrt" | "rsqrt" | "sin" | "cos" | "frc" => 1,
            _ if op.starts_with("rnd") => 1,
            _ => 2,
        };
        // One mov in three converts between f32 and an integer type, either way.
        let int = INTS[(lcg(&mut s) % INTS.len() as u64) as usize];
        let (ta, td) = match (op, lcg(&mut s) % 3) {
            ("mov", 0) => (int, "f"),
            ("mov", 1) => ("f", int),
            _ => ("f", "f"),
        };
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let offsets: Vec<u32> = (0..32).step_by(size.max(4) as usize).collect();
        let offset = offsets[(lcg(&mut s) % offsets.len() as u64) as usize];
        let mask = format!("M{}", offset / 4 + 1);
        let mut srcs = Vec::new();
        for i in 0..arity {
            let ty = if i == 0 { ta } else { "f" };
            let m = ["", "", "", "(-)", "(abs)", "(-abs)"][(lcg(&mut s) % 6) as usize];
            let text = if lcg(&mut s).is_multiple_of(4) {
                if ty == "f" {
                    let style = 1 + lcg(&mut s) % 2;
                    format!("{:#010x}:f", float_bits(&mut s, style))
                } else {
                    immediate(&mut s, ty)
                }
            } else {
                register(&mut s, ["A", "B", "A"][i], m)
            };
            srcs.push(text);
        }
        // Packed, or every other element (a conversion to a narrow type, then packed).
        let dst = if op.starts_with("cmp") && lcg(&mut s).is_multiple_of(2) {
            "P1"
        } else {
            ["R(0,0)<1>", "R(0,0)<1>", "R(0,0)<2>", "R(0,1)<2>"][(lcg(&mut s) % 4) as usize]
        };
        let (sat, pred) = sat_and_predicate(&mut s, op);
        // cr0: denormals kept (as IGC sets it) or flushed, and now and then another
        // rounding mode (by which the f32 tier rounds, lane by lane, every op it changes).
        let cr0 = [0x4c0u32, 0x4c0, 0x0, 0x4d0, 0x4e0, 0x30][(lcg(&mut s) % 6) as usize];
        let body = format!(
            "    or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> {cr0:#x}:ud\n    {pred}{op}{sat} ({mask}, {size}) {dst} {}",
            srcs.join(" ")
        );
        let text = kernel_text(&abr_decls(ta, "f", td), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let seed = lcg(&mut s);
        let (_, tier) = on_both_paths(&text, seed, dispatch, Fill::Floats, 1, 4).unwrap_or_else(|first| {
            panic!("f32 tier and general ALU differ on\n{body}\n(A: {ta}, R: {td}): {first}")
        });
        float_tier += usize::from(tier == expected_float_tier(op, ta, td, sat, &srcs, tier));
        cases += 1;
    }
    // Nearly every case must take its tier, or the test compares the general ALU with itself.
    assert!(float_tier * 10 > cases * 9, "{float_tier} of {cases} cases took their tier");
}

/// A SIMD32 kernel whose A, B and R have types `types` and whose address register A0 points,
/// lane by lane, at A plus the byte offsets in O (`size` lanes), then runs `line`: the body
/// and the kernel's text.
fn through_a0([ta, tb, td]: [&str; 3], size: u32, line: &str) -> (String, String) {
    let body = format!("    addr_add (M1, {size}) A0(0)<1> &A O(0,0)<1;1,0>\n    {line}");
    let decls = format!(
        ".decl A v_type=G type={ta} num_elts=128 align=hword\n.decl B v_type=G type={tb} num_elts=64 align=hword\n.decl R v_type=G type={td} num_elts=64 align=hword\n.decl O v_type=G type=uw num_elts=16 align=hword\n.decl A0 v_type=A num_elts=16\n.decl P0 v_type=P num_elts=32\n.decl P1 v_type=P num_elts=32"
    );
    let text = kernel_text(&decls, &body, 32);
    (body, text)
}

/// Sources through address registers (one address per lane, `<1,0>`, or per row of two or
/// four lanes, `<2,1>` and `<4,0>`, or one address and a region, `<1;1,0>`) in every integer
/// fast op, every integer type, with modifiers, and half the destinations through an address
/// register too, under predicates: the qword tier and
/// the general ALU read and write the same elements, report the same writes and fault alike
/// on addresses past the variable.
#[test]
fn generated_indirect_sources_agree_on_fast_and_general_paths() {
    const OPS: [&str; 10] = ["mov", "add", "mul", "and", "xor", "shl", "min", "max", "cmp.lt", "sel"];
    let mut s = 0x1d1_u64;
    let (mut fast_tier, mut faults) = (0, 0);
    for case in 0..1500u32 {
        let op = OPS[case as usize % OPS.len()];
        let [ta, tb, td] = [0, 0, 0].map(|_| TYPES[(lcg(&mut s) % TYPES.len() as u64) as usize]);
        let size = [1, 2, 4, 8, 16][(lcg(&mut s) % 5) as usize];
        let region = ["<1,0>", "<1;1,0>", "<2,1>", "<4,0>"][(lcg(&mut s) % 4) as usize];
        let modifier = match (lcg(&mut s) % 4, op) {
            (0, "mov" | "add" | "mul" | "min" | "max" | "cmp.lt" | "sel") => "(-)",
            (1, "and" | "xor") => "(~)",
            _ => "",
        };
        let src0 = format!("{modifier}r[A0(0),{}]{region}:{ta}", 8 * (lcg(&mut s) % 3));
        let srcs = if op == "mov" { src0 } else { format!("{src0} B(0,0)<1;1,0>") };
        // Half the destinations indirect too: into A, through the same address register
        // (lanes may alias; the writes reported are compared).
        let dst = match (op.starts_with("cmp"), lcg(&mut s) % 2) {
            (true, _) => "P1".to_string(),
            (false, 0) => "R(0,0)<1>".to_string(),
            (false, _) => {
                let (elem, offset, stride) = (lcg(&mut s) % 2, 8 * (lcg(&mut s) % 3), 1 + lcg(&mut s) % 2);
                format!("r[A0({elem}),{offset}]<{stride}>:{td}")
            }
        };
        let pred = match (op, lcg(&mut s) % 3) {
            ("sel", _) | (_, 0) if !op.starts_with("cmp") => "(P0) ",
            (_, 1) if !op.starts_with("cmp") => "(!P0) ",
            _ => "",
        };
        let (body, text) = through_a0([ta, tb, td], size, &format!("{pred}{op} (M1, {size}) {dst} {srcs}"));
        let seed = lcg(&mut s);
        let (fast, tier) =
            on_both_paths(&text, seed, u32::MAX, Fill::Integers, 1, 1).unwrap_or_else(|first| {
                panic!("fast and general paths differ on\n{body}\n(A: {ta}, B: {tb}, R: {td}): {first}")
            });
        fast_tier += usize::from(tier == vdb::exec::Tier::Qword);
        faults += usize::from(fast.is_err());
    }
    assert!(fast_tier > 1200, "only {fast_tier} cases took the qword tier");
    assert!(faults > 20 && faults < 700, "{faults} cases faulted");
}

/// Moves into a destination through an address register (how IGC writes a private array's
/// element at a computed index: a predicated `mov` per element, often of one lane) from
/// immediates and register regions of every integer type, signed values widened, some with
/// `.sat`: the qword
/// tier and the general ALU write the same elements, report the same writes and fault alike.
#[test]
fn generated_moves_into_indirect_destinations_agree_on_fast_and_general_paths() {
    let mut s = 0x3a7_u64;
    let (mut fast_tier, mut faults, mut sats) = (0, 0, 0);
    for _ in 0..600u32 {
        let [ta, tb] = [0, 0].map(|_| TYPES[(lcg(&mut s) % TYPES.len() as u64) as usize]);
        let size = [1, 2, 4, 8, 16][(lcg(&mut s) % 5) as usize];
        let src = match lcg(&mut s) % 5 {
            0 => immediate(&mut s, tb),
            1 => format!("B(0,{})<0;1,0>", lcg(&mut s) % 4),
            2 => "B(0,1)<2;1,0>".to_string(),
            3 => "B(0,0)<4;2,1>".to_string(),
            _ => "B(0,0)<1;1,0>".to_string(),
        };
        let (elem, offset, stride) = (lcg(&mut s) % 2, 8 * (lcg(&mut s) % 3), 1 + lcg(&mut s) % 2);
        let pred = ["(P0) ", "(!P0) ", ""][(lcg(&mut s) % 3) as usize];
        // One move in four saturates: each lane's value clamped to the element's type.
        let sat = if lcg(&mut s).is_multiple_of(4) { ".sat" } else { "" };
        sats += usize::from(!sat.is_empty());
        let line = format!("{pred}mov{sat} (M1, {size}) r[A0({elem}),{offset}]<{stride}>:{ta} {src}");
        let (body, text) = through_a0([ta, tb, ta], size, &line);
        let (fast, tier) =
            on_both_paths(&text, lcg(&mut s), u32::MAX, Fill::Integers, 1, 1).unwrap_or_else(|first| {
                panic!("fast and general paths differ on\n{body}\n(A: {ta}, B: {tb}): {first}")
            });
        fast_tier += usize::from(tier == vdb::exec::Tier::Qword);
        faults += usize::from(fast.is_err());
    }
    assert!(fast_tier > 550, "only {fast_tier} cases took the qword tier");
    assert!(faults > 10 && faults < 300, "{faults} cases faulted");
    assert!(sats > 100, "{sats} saturating moves");
}

/// f32 operations with sources through address registers (`<1,0>` or `<1;1,0>`, with
/// modifiers) and, half the time, the destination too, as the attention kernels of IGC 2.x
/// write them; conversions to and from integers among them; predicates, dispatch masks and
/// addresses past the variable or misaligned: the f32 tier and the general ALU agree.
#[test]
fn generated_indirect_float_operands_agree_on_fast_and_general_paths() {
    const OPS: [&str; 9] = ["mov", "add", "mul", "mad", "max", "min", "sel", "cmp.lt", "inv"];
    let mut s = 0xf1_0a7_u64;
    let (mut float_tier, mut faults) = (0, 0);
    for case in 0..1200u32 {
        let op = OPS[case as usize % OPS.len()];
        // Now and then a conversion: an integer source moved to f, or f moved to an integer.
        let (ta, td) = match (op, lcg(&mut s) % 6) {
            ("mov", 0) => ("d", "f"),
            ("mov", 1) => ("f", "ud"),
            _ => ("f", "f"),
        };
        let size = [1, 2, 4, 8, 16][(lcg(&mut s) % 5) as usize];
        let region = ["<1,0>", "<1;1,0>", "<2,1>", "<4,0>"][(lcg(&mut s) % 4) as usize];
        let modifier = if ta == "f" { ["", "", "(-)", "(abs)"][(lcg(&mut s) % 4) as usize] } else { "" };
        let src0 = format!("{modifier}r[A0(0),{}]{region}:{ta}", 8 * (lcg(&mut s) % 3));
        let srcs = match op {
            "mov" | "inv" => src0,
            "mad" => format!("{src0} B(0,0)<1;1,0> r[A0(0),4]<1;1,0>:f"),
            _ => format!("B(0,0)<1;1,0> {src0}"),
        };
        let dst = match (op.starts_with("cmp"), lcg(&mut s) % 2) {
            (true, _) => "P1".to_string(),
            (false, 0) => "R(0,0)<1>".to_string(),
            (false, _) => format!("r[A0({}),{}]<1>:{td}", lcg(&mut s) % 2, 8 * (lcg(&mut s) % 3)),
        };
        let pred = match (op, lcg(&mut s) % 3) {
            ("sel", _) | (_, 0) if !op.starts_with("cmp") => "(P0) ",
            _ => "",
        };
        let (body, text) = through_a0([ta, "f", td], size, &format!("{pred}{op} (M1, {size}) {dst} {srcs}"));
        let seed = lcg(&mut s);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let (fast, tier) = on_both_paths(&text, seed, dispatch, Fill::Floats, 1, 4).unwrap_or_else(|first| {
            panic!("f32 tier and general ALU differ on\n{body}\n(A: {ta}, R: {td}): {first}")
        });
        let srcs = [format!("{modifier}r")];
        float_tier += usize::from(tier == expected_float_tier(op, ta, td, "", &srcs, tier));
        faults += usize::from(fast.is_err());
    }
    assert!(float_tier > 1100, "only {float_tier} cases took their tier");
    assert!(faults > 20 && faults < 500, "{faults} cases faulted");
}

/// `mulh` multiplies 32-bit integers (MULH.md): with a 64-bit source it stops at the
/// instruction with a fault, on both paths (the general ALU's 128-bit product used to
/// overflow on two uq sources).
#[test]
fn mulh_of_64_bit_sources_faults() {
    for (ta, tb) in [("uq", "uq"), ("q", "d"), ("d", "uq")] {
        let text = kernel_text(
            &abr_decls(ta, tb, "d"),
            "    mulh (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>",
            32,
        );
        for fast in [true, false] {
            let (outcome, _) = run_filled(&text, 3, u32::MAX, fast, Fill::Integers, 0);
            let fault = outcome.expect_err("mulh of a 64-bit source must fault");
            assert!(fault.contains("mulh multiplies 32-bit integers"), "{ta} {tb}: {fault}");
        }
    }
}

/// `addr_add` from a variable's address or from address register elements (any width),
/// plus an immediate or a register offset of any integer type and region, into address
/// register elements past the end of their variable (another one after it) now and then,
/// under dispatch masks: the in-place form and the general path write the same address
/// registers (compared through the writes reported) and fault alike.
#[test]
fn generated_addr_adds_agree_on_fast_and_general_paths() {
    let mut s = 0xadd_u64;
    let (mut compiled, mut faults) = (0, 0);
    for _ in 0..1500u32 {
        let ty = TYPES[(lcg(&mut s) % TYPES.len() as u64) as usize];
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let src0 = match lcg(&mut s) % 3 {
            0 => format!("&A[{}]", 8 * (lcg(&mut s) % 4)),
            1 => format!("A0({})<1>", lcg(&mut s) % 4),
            _ => format!("A0({})<{}>", lcg(&mut s) % 8, [1, 2, 4][(lcg(&mut s) % 3) as usize]),
        };
        let offset = match lcg(&mut s) % 3 {
            0 => immediate(&mut s, ty),
            _ => register(&mut s, "B", ""),
        };
        let body = format!(
            "    addr_add (M1_NM, 16) A0(0)<1> &A O(0,0)<1;1,0>\n    addr_add (M1, {size}) A1({})<1> {src0} {offset}",
            [0, 0, 2, 10][(lcg(&mut s) % 4) as usize]
        );
        let decls = format!(
            ".decl A v_type=G type=d num_elts=128 align=hword\n.decl B v_type=G type={ty} num_elts=64 align=hword\n.decl R v_type=G type=d num_elts=64 align=hword\n.decl O v_type=G type=uw num_elts=16 align=hword\n.decl A0 v_type=A num_elts=16\n.decl A1 v_type=A num_elts=16\n.decl A2 v_type=A num_elts=16\n.decl P0 v_type=P num_elts=32\n.decl P1 v_type=P num_elts=32"
        );
        let text = kernel_text(&decls, &body, 32);
        let seed = lcg(&mut s);
        // Dispatch masks with disabled lanes now and then (addr_add takes no predicate).
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let (fast, tier) =
            on_both_paths(&text, seed, dispatch, Fill::Integers, 1, 1).unwrap_or_else(|first| {
                panic!("the in-place and general paths differ on\n{body}\n(B: {ty}): {first}")
            });
        compiled += usize::from(tier == vdb::exec::Tier::Qword);
        faults += usize::from(fast.is_err());
    }
    assert!(compiled > 1200, "only {compiled} cases took the in-place form");
    assert!(faults > 50 && faults < 700, "{faults} cases faulted");
}

/// A 64-bit integer converts to f32 with one rounding: values just above a tie of f32 that
/// an f64 step would round onto the tie (and then to even) round up. 2^60 + 2^36 + 1 is
/// 2^60 + 2^37 in f32, not 2^60; its negation and the uq form likewise.
#[test]
fn q_to_f32_rounds_once() {
    let decls = ".decl A v_type=G type=q num_elts=16 align=hword\n.decl B v_type=G type=uq num_elts=16 align=hword\n.decl R v_type=G type=f num_elts=16 align=hword\n.decl P0 v_type=P num_elts=16\n.decl P1 v_type=P num_elts=16";
    let v: i64 = (1 << 60) + (1 << 36) + 1;
    let body = format!(
        "    mov (M1_NM, 1) A(0,0)<1> {v:#x}:q\n    mov (M1_NM, 1) B(0,0)<1> {v:#x}:uq\n    mov (M1, 1) R(0,0)<1> A(0,0)<0;1,0>\n    mov (M1, 1) R(0,1)<1> (-)A(0,0)<0;1,0>\n    mov (M1, 1) R(0,2)<1> B(0,0)<0;1,0>"
    );
    let up = ((60 + 127) << 23 | 1) as u32;
    for fast in [true, false] {
        let (r, _) = run(decls, &body, 1, fast);
        let word = |i: usize| u32::from_le_bytes(r[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        assert_eq!([word(0), word(1), word(2)], [up, up | 1 << 31, up], "fast paths {fast}");
    }
}

/// `mov` of a packed float vector (`:vf`, four 8-bit floats repeated over the lanes) to an
/// f register, packed or strided, at every exec size and channel offset, predicated or not:
/// the in-place form writes the bits the general ALU writes.
#[test]
fn generated_float_vector_moves_agree_on_fast_and_general_paths() {
    let mut s = 0x7f3a_11c5_u64;
    let mut in_place = 0;
    for _ in 0..600 {
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let offsets: Vec<u32> = (0..32).step_by(size.max(4) as usize).collect();
        let offset = offsets[(lcg(&mut s) % offsets.len() as u64) as usize];
        let dst = ["R(0,0)<1>", "R(0,0)<2>", "R(0,1)<2>", "R(0,0)<4>"][(lcg(&mut s) % 4) as usize];
        let pred = ["", "(P0) ", "(!P0) "][(lcg(&mut s) % 3) as usize];
        let body =
            format!("    {pred}mov (M{}, {size}) {dst} {:#010x}:vf", offset / 4 + 1, lcg(&mut s) as u32);
        let text = kernel_text(&abr_decls("f", "f", "f"), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let (_, tier) = on_both_paths(&text, lcg(&mut s), dispatch, Fill::Floats, 0, 4)
            .unwrap_or_else(|first| panic!("fast and general paths differ on\n{body}\n{first}"));
        in_place += usize::from(tier != vdb::exec::Tier::General);
    }
    assert!(in_place > 500, "{in_place} of 600 moves in place");
}

/// The instructions that change nothing (`loc`, `file`, `lifetime`, fences, `wait`,
/// `yield`; a `-g` build has a `loc` before each source line's instructions) run in place
/// between ALU instructions of every exec size, masked or not: the same registers,
/// writes, steps and lane counts as on the general path, in a burst as in single steps.
#[test]
fn instructions_that_change_nothing_run_in_place() {
    const NOPS: [&str; 9] = [
        "LOC 7",
        "LOC 0",
        "FILE \"k.cl\"",
        "lifetime.start R",
        "fence_global.ER",
        "fence_local",
        "fence_sw",
        "wait 0x0:ud",
        "yield",
    ];
    let mut s = 0x51c0_9e77_u64;
    let mut seen = [false; NOPS.len()];
    for _ in 0..300 {
        let k = (lcg(&mut s) % NOPS.len() as u64) as usize;
        seen[k] = true;
        let size = [1, 2, 4, 8, 16, 32][(lcg(&mut s) % 6) as usize];
        let nm = if lcg(&mut s).is_multiple_of(3) { "_NM" } else { "" };
        let body = format!(
            "    add (M1{nm}, {size}) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>\n    {}\n    mul (M1, {size}) R(2,0)<1> R(0,0)<1;1,0> A(0,0)<1;1,0>\n    {}",
            NOPS[k],
            NOPS[(k + 1) % NOPS.len()]
        );
        let text = kernel_text(&abr_decls("d", "d", "d"), &body, 32);
        let dispatch = if lcg(&mut s).is_multiple_of(2) { u32::MAX } else { lcg(&mut s) as u32 };
        let (_, tier) = on_both_paths(&text, lcg(&mut s), dispatch, Fill::Integers, 1, 4)
            .unwrap_or_else(|first| panic!("fast and general paths differ on\n{body}\n{first}"));
        assert_eq!(tier, vdb::exec::Tier::Nop, "{body}");
    }
    assert!(seen.iter().all(|&s| s), "every instruction generated");
}

/// The programs of every real dump that parses (the project's, its samples', and IGC 2.x's
/// in `../shared/spec/real/igc2` where present), with their paths.
fn real_dump_programs() -> Vec<(std::path::PathBuf, Arc<vdb::program::Program>)> {
    use vdb::asm::{parse_files_with_warnings, ParseOptions};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/data/real", "tests/data/kernels", "sample-kernels", "../shared/spec/real/igc2"] {
        crate::harness::visaasm_files(&root.join(dir), &mut files);
    }
    files.retain(|p| {
        let s = p.to_string_lossy();
        !s.contains("/broken/") && !s.contains("/probes/") && !s.ends_with(".inline.visaasm")
    });
    assert!(files.len() > 100, "{} dumps", files.len());
    files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).expect("read");
            let file = vdb::program::SourceFile { path: f.display().to_string(), text };
            let program = parse_files_with_warnings(vec![file], &ParseOptions::default()).0?;
            Some((f, Arc::new(program)))
        })
        .collect()
}

/// Every ALU instruction of every real dump (the project's, its samples', and IGC 2.x's in
/// `../shared/spec/real/igc2` where present) has an in-place form.
#[test]
fn every_alu_instruction_of_the_real_dumps_runs_in_place() {
    use vdb::isa::Family;
    let (mut alu, mut left) = (0usize, Vec::new());
    for (f, program) in &real_dump_programs() {
        let interp = Interpreter::new(program.clone());
        for (at, inst) in program.insts.iter().enumerate() {
            if inst.op.family() != Family::Alu || inst.static_fault.is_some() {
                continue;
            }
            alu += 1;
            if interp.tier(at) == vdb::exec::Tier::General {
                left.push(format!("{}: instruction ${}: {inst:?}", f.display(), inst.id));
            }
        }
    }
    assert!(alu > 20_000, "{alu} ALU instructions");
    assert!(left.is_empty(), "{} ALU instructions on the general path:\n{}", left.len(), left.join("\n"));
}

/// Every gather, scatter, atomic and SVM or OWord block of every real dump runs compiled;
/// the memory instructions left to `message.rs` are the 2D blocks (3,127 compiled when this
/// was written, blocks not counted; the 2D blocks are in IGC 2.x's dumps, read where
/// `../shared` is there).
#[test]
fn every_message_of_the_real_dumps_but_2d_blocks_is_compiled() {
    use vdb::isa::{Family, Opcode};
    let (mut compiled, mut blocks, mut left) = (0usize, 0usize, Vec::new());
    for (f, program) in &real_dump_programs() {
        let interp = Interpreter::new(program.clone());
        for (at, inst) in program.insts.iter().enumerate() {
            if inst.op.family() != Family::Memory
                || inst.static_fault.is_some()
                || matches!(inst.op, Opcode::LscLoadBlock2d | Opcode::LscStoreBlock2d)
            {
                continue;
            }
            match interp.tier(at) {
                vdb::exec::Tier::Message => compiled += 1,
                tier => left.push(format!("{}: ${} ({tier:?}): {inst:?}", f.display(), inst.id)),
            }
            blocks += usize::from(matches!(
                inst.op,
                Opcode::SvmBlockLd
                    | Opcode::SvmBlockSt
                    | Opcode::OwordLd
                    | Opcode::OwordLdUnaligned
                    | Opcode::OwordSt
            ));
        }
    }
    assert!(compiled > 1_000, "{compiled} compiled messages");
    assert!(blocks > 0, "no SVM or OWord block among the real dumps");
    assert!(left.is_empty(), "{} messages left to message.rs:\n{}", left.len(), left.join("\n"));
}

/// An in-place op whose operands reach past the thread's register file (a file shorter than
/// the program's layout) faults on its instruction, in a burst and stepped, with fast forms
/// on and off, and writes nothing: the dword and qword kernels leave that check to their
/// callers, and the packed f32 form run in place makes it itself.
#[test]
fn ops_reaching_past_a_short_register_file_fault_and_write_nothing() {
    let decls = ".decl A v_type=G type=d num_elts=16 align=hword\n.decl B v_type=G type=q num_elts=16 align=hword\n.decl RD v_type=G type=d num_elts=16 align=hword\n.decl R v_type=G type=q num_elts=16 align=hword\n.decl F v_type=G type=f num_elts=16 align=hword\n.decl RF v_type=G type=f num_elts=16 align=hword\n.decl P1 v_type=P num_elts=16";
    for (line, tier) in [
        ("add (M1, 16) RD(0,0)<1> A(0,0)<1;1,0> 0x5:d", vdb::exec::Tier::Dword),
        ("cmp.lt (M1, 16) P1 A(0,0)<1;1,0> 0x5:d", vdb::exec::Tier::Dword),
        ("add (M1, 16) R(0,0)<1> B(0,0)<1;1,0> 0x5:q", vdb::exec::Tier::Qword),
        ("cmp.lt (M1, 16) P1 B(0,0)<1;1,0> 0x5:q", vdb::exec::Tier::Qword),
        ("add (M1, 16) RF(0,0)<1> F(0,0)<1;1,0> 0x40a00000:f", vdb::exec::Tier::Float),
        ("cmp.lt (M1, 16) P1 F(0,0)<1;1,0> 0x40a00000:f", vdb::exec::Tier::Float),
    ] {
        let program = Arc::new(parse(&kernel_text(decls, line, 16)));
        let mut thread = ThreadState::new(&program, 16, 0xffff);
        // The file ends inside A (the first variable): every op above reaches past it.
        let a = program.var(program.var_id(UnitId(0), "A").expect("A"));
        thread.grf.truncate((a.offset + 8) as usize);
        for (i, b) in thread.grf.iter_mut().enumerate() {
            *b = i as u8;
        }
        let before = thread.clone();
        for fast in [true, false] {
            let mut interp = Interpreter::new(program.clone());
            interp.use_fast_paths = fast;
            assert_eq!(interp.tier(0), tier, "{line}");
            let machine = Machine { threads: vec![Shared::new(thread.clone())].into(), ..Machine::default() };
            let mut burst = machine.clone();
            let burst_run =
                vdb::exec::run_to_end_unrecorded(&interp, &mut burst, &mut Scheduler::single_group(1));
            let mut stepped = machine.clone();
            let step_run =
                run_to_end(&interp, &mut stepped, &mut Scheduler::single_group(1), &mut NullObserver);
            for (how, run, m) in [("burst", burst_run.err(), &burst), ("stepped", step_run.err(), &stepped)] {
                let fault = run.unwrap_or_else(|| panic!("{line} ({how}, fast {fast}) ran past the file"));
                assert_eq!(fault.pc.0, 0, "{line} ({how})");
                let t = &m.threads[0];
                assert_eq!(
                    (&t.grf, &t.preds),
                    (&before.grf, &before.preds),
                    "{line} ({how}, fast {fast}) wrote"
                );
            }
        }
    }
}
