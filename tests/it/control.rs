//! Control flow through the harness: goto reconvergence, loops, calls, predication, masks.

use crate::harness::{le32, run_text, run_with, set_var};

const DECLS: &str = ".decl X v_type=G type=d num_elts=16 align=hword
.decl R v_type=G type=d num_elts=16 align=hword
.decl P1 v_type=P num_elts=16
.decl P2 v_type=P num_elts=16";

fn with_x(body: &str, x: &[i32]) -> crate::harness::Run {
    let bytes = le32(x);
    run_with(DECLS, body, 16, 0xffff, |p, m| set_var(p, m, "X", &bytes))
}

#[test]
fn forward_goto_parks_lanes_until_the_label() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    cmp.lt (M1, 16) P1 X(0,0)<1;1,0> 0x8:d
    (P1) goto (M1, 16) L
    mov (M1, 16) R(0,0)<1> 0x1:d
L:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x10:d";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i < 8 { 16 } else { 17 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn if_else_with_uniform_goto_runs_both_sides_and_reconverges() {
    let x: Vec<i32> = (0..16).map(|i| i * 3 - 20).collect();
    let body = "    cmp.gt (M1, 16) P1 X(0,0)<1;1,0> 0x0:d
    (P1) goto (M1, 16) THEN
    mov (M1, 16) R(0,0)<1> 0x64:d
    goto (M1, 1) END
THEN:
    mov (M1, 16) R(0,0)<1> 0xc8:d
END:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> X(0,0)<1;1,0>";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x.iter().map(|&v| if v > 0 { 200 + v } else { 100 + v }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn backward_goto_loops_each_lane_its_own_trip_count() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
LOOP:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    cmp.lt (M1, 16) P1 R(0,0)<1;1,0> X(0,0)<1;1,0>
    (P1) goto (M1, 16) LOOP
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x64:d";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x.iter().map(|&v| v.max(1) + 100).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn predicated_instruction_writes_only_true_lanes() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x7:d
    cmp.eq (M1, 16) P1 X(0,0)<1;1,0> 0x3:d
    (!P1) mov (M1, 16) R(0,0)<1> X(0,0)<1;1,0>";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i == 3 { 7 } else { i }).collect();
    assert_eq!(r.i32s("R"), expected);
    assert_eq!(r.pred("P1"), 1 << 3);
}

#[test]
fn dispatch_mask_limits_masked_instructions_but_not_nomask() {
    let body = "    mov (M1_NM, 16) R(0,0)<1> 0x1:d
    mov (M1, 16) R(0,0)<1> 0x2:d";
    let r = run_with(DECLS, body, 16, 0x00ff, |_, _| {}).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i < 8 { 2 } else { 1 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn mask_offset_selects_channels_and_predicate_bits() {
    let body = "    mov (M1_NM, 16) R(0,0)<1> 0x0:d
    setp (M1_NM, 16) P1 0xff00:uw
    (P1) mov (M3, 8) R(0,8)<1> 0x5:d";
    let r = run_with(DECLS, body, 16, 0xf0ff, |_, _| {}).ok();
    // M3 = channels 8..15; P1 bits 8..15 set; dispatch disables channels 8..11.
    let expected: Vec<i32> = (0..16).map(|i| if i >= 12 { 5 } else { 0 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn subroutine_call_in_divergent_code_returns_with_the_callers_mask() {
    let x: Vec<i32> = (0..16).map(|i| i - 8).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    cmp.ge (M1, 16) P1 X(0,0)<1;1,0> 0x0:d
    (P1) call (M1, 16) sub_1
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    ret (M1, 1)
.function \"sub_1\"
sub_1:
    cmp.gt (M1, 16) P2 X(0,0)<1;1,0> 0x3:d
    (P2) goto (M1, 16) BIG
    mov (M1, 16) R(0,0)<1> 0xa:d
    ret (M1, 16)
BIG:
    mov (M1, 16) R(0,0)<1> 0x14:d
    ret (M1, 16)";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x
        .iter()
        .map(|&v| {
            if v > 3 {
                21
            } else if v >= 0 {
                11
            } else {
                1
            }
        })
        .collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn running_off_the_end_of_the_code_faults_at_the_end() {
    let text = ".version 4.1\n.kernel \"t\"\n.decl R v_type=G type=d num_elts=16 align=hword\n.function \"_main_0\"\n\n_main_0:\n    mov (M1, 16) R(0,0)<1> 0x1:d\n";
    let r = run_text(text, 16, 0xffff, |_, _| {});
    let fault = r.result.as_ref().expect_err("must fault");
    assert_eq!(fault.kind, vdb::exec::FaultKind::FellOffEnd);
    assert_eq!(r.u32s("R"), vec![1; 16], "state before the fault is kept");
}

#[test]
fn all_lanes_parked_jumps_to_the_nearest_waiting_label() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    goto (M1, 16) B
    mov (M1, 16) R(0,0)<1> 0x63:d
A:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
B:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x2:d";
    let r = with_x(body, &x).ok();
    assert_eq!(r.i32s("R"), vec![2; 16]);
}

/// What a run tells its observer, in order: register and predicate writes and control changes.
#[derive(Default)]
struct Events(Vec<String>);

impl vdb::exec::Observer for Events {
    const ACTIVE: bool = true;
    fn grf(&mut self, _: vdb::machine::ThreadId, offset: u32, old: &[u8], new: &[u8]) {
        self.0.push(format!("grf {offset} {old:?} {new:?}"));
    }
    fn pred(&mut self, _: vdb::machine::ThreadId, p: vdb::isa::PredId, old: u32, new: u32) {
        self.0.push(format!("pred {p:?} {old} {new}"));
    }
    fn addr(&mut self, _: vdb::machine::ThreadId, _: u32, _: u32, _: u32) {}
    fn mem(&mut self, _: vdb::machine::ThreadId, _: vdb::machine::MemSpace, _: u64, _: &[u8], _: &[u8]) {}
    fn control(
        &mut self,
        _: vdb::machine::ThreadId,
        old: &vdb::machine::Control,
        new: &vdb::machine::Control,
    ) {
        self.0.push(format!("control {old:?} {new:?}"));
    }
}

impl vdb::exec::StepHooks for Events {
    fn begin_step(&mut self) {}
    fn end_step(&mut self, pc: u32, chen: u32) {
        self.0.push(format!("step {pc} {chen:#x}"));
    }
}

/// A random program of labelled blocks, each counting its visits per lane, setting a
/// predicate from the lane's data or its visit count, and branching forward or back (`goto`
/// of 16, 8 (either half) or 1 lanes and `jmp`, predicated or not, negated, `.any`/`.all`)
/// or falling through to the next.
fn branchy_program(rng: &mut u64) -> String {
    use crate::harness::lcg;
    let mut pick = |n: u64| (lcg(rng) >> 16) % n;
    let blocks = 3 + pick(5);
    let mut body = String::new();
    for b in 0..blocks {
        body += &format!("L{b}:\n    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x{:x}:d\n", b + 1);
        body += "    add (M1, 16) C(0,0)<1> C(0,0)<1;1,0> 0x1:d\n";
        let p = 1 + pick(2);
        let rel = ["lt", "gt", "eq", "ne", "le"][pick(5) as usize];
        if pick(2) == 0 {
            body += &format!("    cmp.{rel} (M1, 16) P{p} X(0,0)<1;1,0> 0x{:x}:d\n", pick(12));
        } else {
            body += &format!("    cmp.lt (M1, 16) P{p} C(0,0)<1;1,0> 0x{:x}:d\n", 1 + pick(4));
        }
        let target = pick(blocks + 1);
        let pred = match pick(6) {
            0 => String::new(),
            1 => format!("(!P{p}) "),
            2 => format!("(P{p}.any) "),
            3 => format!("(P{p}.all) "),
            _ => format!("(P{p}) "),
        };
        let exec = ["(M1, 16)", "(M1, 1)", "(M1, 8)", "(M3, 8)", "(M1_NM, 16)"][pick(5) as usize];
        // Now and then no branch: the block's last add runs into the next label, where
        // lanes parked by an earlier goto rejoin.
        body += &match pick(6) {
            0 => format!("    {pred}jmp (M1, 1) L{target}\n"),
            1 => String::new(),
            _ => format!("    {pred}goto {exec} L{target}\n"),
        };
    }
    body + &format!("L{blocks}:\n    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x100:d")
}

/// Compiled `goto` and `jmp` (labels resolved when the program is loaded) against the general
/// step, on random branchy programs: the same registers, predicates, control state, steps and
/// fault, and the same writes and control changes told to an observer, stepped one at a time
/// and in a burst (where the compiled branch runs without the general step).
#[test]
fn compiled_branches_agree_with_the_general_step() {
    use std::sync::Arc;
    use vdb::exec::{Interpreter, Scheduler, Tier};
    use vdb::machine::{Machine, Shared, ThreadState};
    let decls = ".decl X v_type=G type=d num_elts=16 align=hword
.decl R v_type=G type=d num_elts=16 align=hword
.decl C v_type=G type=d num_elts=16 align=hword
.decl P1 v_type=P num_elts=16
.decl P2 v_type=P num_elts=16";
    let mut rng = 0x5eed_b4a2_u64;
    let (mut branches, mut faults, mut long) = (0, 0, 0);
    for _ in 0..250 {
        let text = crate::harness::kernel_text(decls, &branchy_program(&mut rng), 16);
        let program = Arc::new(crate::harness::parse(&text));
        let mask = match crate::harness::lcg(&mut rng) % 3 {
            0 => 0xffff,
            _ => crate::harness::lcg(&mut rng) as u32 & 0xffff | 1,
        };
        let mut thread = ThreadState::new(&program, 16, mask);
        let x = program.var(program.var_id(vdb::isa::UnitId(0), "X").expect("X"));
        for w in thread.grf[x.offset as usize..x.offset as usize + 64].chunks_exact_mut(4) {
            w.copy_from_slice(&((crate::harness::lcg(&mut rng) % 12) as i32).to_le_bytes());
        }
        let start = Machine { threads: vec![Shared::new(thread)].into(), ..Machine::default() };
        let mut outcomes = Vec::new();
        for fast in [true, false] {
            let mut interp = Interpreter::new(program.clone());
            interp.use_fast_paths = fast;
            if fast {
                branches += (0..program.insts.len()).filter(|&i| interp.tier(i) == Tier::Branch).count();
            }
            const LIMIT: u64 = 3_000;
            let (mut stepped, mut burst) = (start.clone(), start.clone());
            let mut sched = Scheduler::single_group(1);
            sched.step_limit = LIMIT;
            let mut e1 = Events::default();
            let r1 = vdb::exec::run_to_end(&interp, &mut stepped, &mut sched, &mut e1);
            // The burst: the thread's instructions run in place, the branches compiled.
            let mut e2 = Events::default();
            let (mut steps, mut r2) = (0, None);
            let tid = vdb::machine::ThreadId(0);
            while steps < LIMIT && burst.threads[0].is_runnable() {
                let stops = vdb::exec::Stops { pcs: &vdb::exec::NO_STOPS, holds: None };
                match interp.run_local(&mut burst, tid, LIMIT - steps, stops, &mut e2, false) {
                    Ok((n, _)) => steps += n,
                    Err(f) => {
                        r2 = Some(f.render(&program));
                        break;
                    }
                }
            }
            let t = |m: &Machine| {
                let t = &m.threads[0];
                (t.grf.clone(), t.preds.clone(), format!("{:?}", t.control))
            };
            let fault = r1.as_ref().err().map(|f| f.render(&program));
            // The step limit is the stepped run's fault only (a burst stops at its budget).
            let limited = fault.as_ref().is_some_and(|f| f.contains("step limit"));
            assert_eq!(if limited { None } else { fault.clone() }, r2, "fast {fast}:\n{text}");
            assert_eq!(t(&stepped), t(&burst), "fast {fast}:\n{text}");
            let writes =
                |e: &Events| e.0.iter().filter(|l| !l.starts_with("step")).cloned().collect::<Vec<_>>();
            assert_eq!(writes(&e1), writes(&e2), "fast {fast}:\n{text}");
            if r2.is_none() {
                assert_eq!(steps, sched.steps, "fast {fast}:\n{text}");
            }
            outcomes.push((t(&stepped), e1.0, fault, sched.steps));
        }
        if outcomes[0].2.is_some() {
            faults += 1;
        }
        if outcomes[0].3 > 100 {
            long += 1;
        }
        assert_eq!(outcomes[0], outcomes[1], "compiled vs general:\n{text}");
    }
    // The programs branch, loop and fault (the step limit, lanes all parked) often enough.
    assert!(branches > 900, "{branches} compiled branches");
    assert!(faults > 20 && faults < 200, "{faults} faulted");
    assert!(long > 60, "{long} long runs");
}
