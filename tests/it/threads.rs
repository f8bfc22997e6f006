//! Several hardware threads: barriers release together, a thread that can never arrive is a
//! deadlock fault (not a hang), and watchpoints catch every kind of memory write across
//! threads (scatter lanes, atomics, LSC stores), agreeing with a scan of the recording.

use std::path::Path;

use vdb::exec::{run_to_end, FaultKind, Interpreter, NullObserver, Scheduler};
use vdb::launch::raw;
use vdb::machine::{Machine, Shared, Slm, ThreadState};
use vdb::session::{parse, Session, StopReason, WatchTarget};

use crate::harness::{kernel_text, parse as parse_kernel, session_on_text, set_var};

const BODY: &str = "    mov (M1, 16) R(0,0)<1> 0x1:d
    cmp.eq (M1, 16) P1 X(0,0)<0;1,0> 0x0:d
    (P1) goto (M1, 1) END
    barrier
    mov (M1, 16) R(0,0)<1> 0x2:d
END:";

fn two_threads(x: [i32; 2]) -> (std::sync::Arc<vdb::program::Program>, Machine) {
    let decls = ".decl X v_type=G type=d num_elts=16 align=hword\n.decl R v_type=G type=d num_elts=16 align=hword\n.decl P1 v_type=P num_elts=16";
    let program = std::sync::Arc::new(parse_kernel(&kernel_text(decls, BODY, 16)));
    let mut machine = Machine { slms: vec![Shared::new(Slm::new(64))].into(), ..Machine::default() };
    for (i, v) in x.iter().enumerate() {
        machine.threads.push(Shared::new(ThreadState::new(&program, 16, 0xffff)));
        machine.thread_mut(vdb::machine::ThreadId(i as u32)).index_in_group = i as u32;
        set_var_thread(&program, &mut machine, i, "X", &v.to_le_bytes());
    }
    (program, machine)
}

fn set_var_thread(p: &vdb::program::Program, m: &mut Machine, thread: usize, name: &str, bytes: &[u8]) {
    if thread == 0 {
        set_var(p, m, name, bytes);
        return;
    }
    let v = p.var(p.var_id(vdb::isa::UnitId(0), name).expect("var"));
    let t = m.thread_mut(vdb::machine::ThreadId(thread as u32));
    t.grf[v.offset as usize..v.offset as usize + bytes.len()].copy_from_slice(bytes);
}

#[test]
fn a_barrier_holds_every_thread_until_all_arrive() {
    let (program, mut machine) = two_threads([1, 1]);
    let interp = Interpreter::new(program);
    let mut sched = Scheduler::single_group(2);
    run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect("runs");
    for t in &machine.threads {
        assert_eq!(t.control.status, vdb::machine::ThreadStatus::Done);
    }
}

#[test]
fn a_thread_that_finishes_without_the_barrier_is_a_deadlock_fault() {
    let (program, mut machine) = two_threads([0, 1]);
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(2);
    let fault = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect_err("deadlock");
    assert!(matches!(fault.kind, FaultKind::Deadlock(_)), "{:?}", fault.kind);
    assert_eq!(fault.thread.0, 1);
    assert!(
        fault.render(&program).contains("thread 0 finished without reaching it"),
        "{}",
        fault.render(&program)
    );
}

fn session(path: &str) -> Session {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    Session::new(raw::load(&p).unwrap_or_else(|e| panic!("{e}")))
}

/// Counts watchpoint stops by continuing to the end, and checks them against the log.
fn watch_catches_every_write(path: &str, target: &str) {
    let mut s = session(path);
    let cmd = parse(&format!("watch {target}")).expect("parse").expect("cmd");
    s.execute(&cmd).expect("watch");
    let WatchTarget::Memory { space, addr, len } = s.watchpoints[0].target.clone() else {
        panic!("memory watch")
    };
    let mut hits = Vec::new();
    loop {
        match s.continue_forward() {
            StopReason::Watchpoint(h) => hits.push(h.step),
            StopReason::End => break,
            other => panic!("{path}: unexpected stop {other:?}"),
        }
    }
    let mut expected = Vec::new();
    for step in 0..s.total_steps() {
        let writes = s.recorder.trace.entries(step).into_iter().any(|e| match e.kind {
            vdb::trace::EntryKind::Mem { space: sp, addr: a, xor } => {
                sp == space && a < addr + len && addr < a + xor.len() as u64
            }
            _ => false,
        });
        if writes {
            expected.push(step);
        }
    }
    assert!(!expected.is_empty(), "{path}: nothing writes {target}");
    assert_eq!(hits, expected, "{path}");
    // And backwards: reverse-continue finds the same writes, newest first.
    let mut back = Vec::new();
    while let StopReason::Watchpoint(h) = s.continue_backward() {
        back.push(h.step);
    }
    back.reverse();
    assert_eq!(back, expected, "{path} in reverse");
}

#[test]
fn watchpoints_catch_atomics_from_every_thread() {
    watch_catches_every_write("sample-kernels/opencl/atomics/skl.launch.json", "counters 4");
    watch_catches_every_write("sample-kernels/opencl/atomics/acm-g10.launch.json", "counters+4 4");
}

#[test]
fn watchpoints_catch_scatter_lanes_and_lsc_stores() {
    watch_catches_every_write("sample-kernels/opencl/divergence/skl.launch.json", "out+40 8");
    watch_catches_every_write("sample-kernels/opencl/divergence/acm-g10.launch.json", "out+40 8");
    watch_catches_every_write("sample-kernels/opencl/slm_reduce/tgllp.launch.json", "sums 16");
}

#[test]
fn a_recording_budget_stops_the_run_and_keeps_what_was_recorded() {
    let mut s = session("sample-kernels/opencl/collatz/skl.launch.json");
    s.record_limit = s.recorder.recorded_bytes() + 200_000;
    let stop = s.continue_forward();
    assert!(matches!(stop, StopReason::RecordLimit { .. }), "{stop:?}");
    let reached = s.now;
    assert!(reached > 100);
    let h = s.machine.state_hash();
    s.goto(reached / 2);
    s.goto(reached);
    assert_eq!(s.machine.state_hash(), h, "the recorded part stays usable");
}

/// What checkpoints hold apart counts against the budget, shared local memory included: a
/// thread that bumps an SLM counter in a loop makes every checkpoint copy the 64 KiB SLM,
/// and the checkpoint bytes cover those copies (they once counted registers and SVM pages
/// only).
#[test]
fn checkpoint_bytes_count_the_slm_they_copy() {
    let body = "    mov (M1_NM, 8) OFF(0,0)<1> 0x0:ud
    mov (M1_NM, 1) I(0,0)<1> 0x40:d
LOOP:
    dword_atomic.inc (M1_NM, 1) %slm OFF.0 %null.0 %null.0 OLD.0
    add (M1_NM, 1) I(0,0)<1> I(0,0)<0;1,0> 0xffffffff:d
    cmp.gt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x0:d
    (P1) goto (M1_NM, 1) LOOP";
    let decls = ".decl I v_type=G type=d num_elts=8 align=hword
.decl OFF v_type=G type=ud num_elts=8 align=hword
.decl OLD v_type=G type=ud num_elts=8 align=hword
.decl P1 v_type=P num_elts=1";
    let mut s = session_on_text("slm_loop", &kernel_text(decls, body, 8));
    s.recorder.checkpoints.interval = 16;
    s.continue_forward();
    assert_eq!(s.end, Some(vdb::session::EndState::Finished), "{:?}", s.end);
    let list = &s.recorder.checkpoints.list;
    let copied: u64 = list
        .windows(2)
        .map(|w| {
            let (prev, next) = (w[0].machine().slms, w[1].machine().slms);
            let unshared = next.iter().enumerate().filter(|(i, slm)| !Shared::ptr_eq(slm, &prev[*i]));
            unshared.map(|(_, slm)| slm.bytes.len() as u64).sum::<u64>()
        })
        .sum();
    assert!(copied >= 8 * 64 * 1024, "SLM copies: {copied} bytes");
    let held = s.recorder.checkpoints.bytes();
    assert!(held >= copied, "checkpoints count {held} bytes; their SLM copies take {copied}");
}

/// A subroutine that calls itself without end faults at the call-depth limit, with the
/// stack intact; and the call stacks the recording keeps (every call's control change holds
/// one) count against the budget: under a budget below what they take, the run stops at
/// the budget instead, before the fault (they were once left out of the count, and such a
/// kernel ran into the tens of gigabytes under any budget).
#[test]
fn runaway_recursion_faults_at_the_depth_limit_and_its_stacks_count_against_the_budget() {
    let text = ".version 4.1
.kernel \"recurse\"
.decl R v_type=G type=d num_elts=16 align=hword
.kernel_attr SimdSize=16
.function \"_main_0\"
_main_0:
    mov (M1, 16) R(0,0)<1> 0x0:d
    call (M1, 16) down_1
    ret (M1, 1)
.function \"down_1\"
down_1:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    call (M1, 16) down_1
    ret (M1, 16)
";
    // Every step's log kept as it is recorded: the control table holds the stacks.
    let open = || {
        let mut s = session_on_text("recurse", text);
        s.lean_recording = false;
        s
    };

    let mut s = open();
    let stop = s.continue_forward();
    assert!(matches!(stop, StopReason::Fault { .. }), "{stop:?}");
    let Some(vdb::session::EndState::Fault(fault)) = &s.end else { panic!("{:?}", s.end) };
    assert!(matches!(fault.kind, FaultKind::CallTooDeep(vdb::machine::MAX_CALL_DEPTH)), "{fault:?}");
    let stack = &s.machine.thread(vdb::machine::ThreadId(0)).control.stack;
    assert_eq!(stack.len(), vdb::machine::MAX_CALL_DEPTH);
    let frames = std::mem::size_of::<vdb::machine::Frame>() as u64;
    let held = s.recorder.recorded_bytes_by_part().controls;
    // Call k (k = 0..256) changes a stack of k frames into one of k + 1, each frame at least
    // its four 32-bit fields.
    let depth = vdb::machine::MAX_CALL_DEPTH as u64;
    assert!(held >= 16 * depth * depth, "control table {held} bytes for 256 calls");

    let faulted_at = s.now;
    let mut s = open();
    s.record_limit = s.recorder.recorded_bytes() + held / 4;
    let stop = s.continue_forward();
    assert!(matches!(stop, StopReason::RecordLimit { .. }), "{stop:?}");
    assert!(s.now < faulted_at, "stopped at step {} (the fault is at {faulted_at})", s.now);
    // The budget is checked before each step: the last one may go past it, by one call's
    // change of two stacks at most (and its few log and step bytes).
    let one_call = 2 * (std::mem::size_of::<vdb::machine::Control>() as u64 + frames * depth) + 1024;
    let over = s.recorder.recorded_bytes().saturating_sub(s.record_limit);
    assert!(over <= one_call, "{over} bytes over the budget");
}

/// Threads of two groups run private loops of different lengths between SLM atomics whose
/// returned old values record the exact order in which the threads reached them.
const RACE_BODY: &str = "    mov (M1_NM, 8) OFF(0,0)<1> 0x0:ud
    mov (M1_NM, 1) I(0,0)<1> X(0,0)<0;1,0>
LOOP:
    add (M1_NM, 1) I(0,0)<1> I(0,0)<0;1,0> 0xffffffff:d
    cmp.gt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x0:d
    (P1) goto (M1_NM, 1) LOOP
    dword_atomic.inc (M1_NM, 1) %slm OFF.0 %null.0 %null.0 OLD.0
    add (M1_NM, 1) I(0,0)<1> X(0,0)<0;1,0> 0x1:d
    cmp.gt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x3:d
    (P1) mov (M1_NM, 1) I(0,0)<1> 0x1:d
    dword_atomic.inc (M1_NM, 1) %slm OFF.0 %null.0 %null.0 OLD.4
    barrier
    dword_atomic.add (M1_NM, 1) %slm OFF.0 I.0 %null.0 OLD.8
    mov (M1_NM, 1) OFF(0,0)<1> Y(0,0)<0;1,0>
    dword_atomic.inc (M1_NM, 1) %slm OFF.0 %null.0 %null.0 OLD.12";

fn race(
    loops: &[(i32, u32)],
    groups: Vec<std::ops::Range<u32>>,
) -> (std::sync::Arc<vdb::program::Program>, Machine) {
    let decls = ".decl X v_type=G type=d num_elts=8 align=hword
.decl Y v_type=G type=ud num_elts=8 align=hword
.decl I v_type=G type=d num_elts=8 align=hword
.decl OFF v_type=G type=ud num_elts=8 align=hword
.decl OLD v_type=G type=ud num_elts=8 align=hword
.decl P1 v_type=P num_elts=1";
    let program = std::sync::Arc::new(parse_kernel(&kernel_text(decls, RACE_BODY, 8)));
    let slms: Vec<_> = groups.iter().map(|_| Shared::new(Slm::new(64))).collect();
    let mut machine = Machine { slms: slms.into(), ..Machine::default() };
    for (i, (x, y)) in loops.iter().enumerate() {
        let mut thread = ThreadState::new(&program, 8, 0xff);
        let group = groups.iter().position(|g| g.contains(&(i as u32))).expect("grouped");
        thread.group = group as u32;
        thread.index_in_group = i as u32 - groups[group].start;
        machine.threads.push(Shared::new(thread));
        set_var_thread(&program, &mut machine, i, "X", &x.to_le_bytes());
        set_var_thread(&program, &mut machine, i, "Y", &y.to_le_bytes());
    }
    (program, machine)
}

/// The burst runner of plain `vdb run` gives what the round-robin scheduler gives: every
/// register (here the atomics' returned values, which record the interleaving), every
/// memory byte, the step count and the lane operations; a fault falls back to the exact run.
#[test]
fn burst_runs_equal_round_robin_runs_including_the_order_of_atomics() {
    type Case = (Vec<(i32, u32)>, Vec<std::ops::Range<u32>>);
    let cases: Vec<Case> = vec![
        (vec![(5, 0), (1, 0), (3, 0), (1, 0), (2, 0), (7, 0), (2, 0)], vec![0..4, 4..7]),
        (vec![(1, 0), (1, 0), (1, 0)], std::iter::once(0..3).collect()),
        (vec![(9, 4), (2, 8), (4, 12), (6, 0)], vec![0..2, 2..4]),
        // An SLM offset past the end: a fault after the barrier, in thread 2.
        (vec![(3, 0), (1, 0), (2, 1 << 16), (5, 0)], std::iter::once(0..4).collect()),
    ];
    for (loops, groups) in cases {
        let (program, machine) = race(&loops, groups.clone());
        let interp = Interpreter::new(program.clone());
        let mut exact = (machine.clone(), Scheduler::new(groups.clone()));
        let mut burst = (machine, Scheduler::new(groups));
        let a = run_to_end(&interp, &mut exact.0, &mut exact.1, &mut NullObserver);
        let b = vdb::exec::run_to_end_unrecorded(&interp, &mut burst.0, &mut burst.1);
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{loops:?}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.render(&program), b.render(&program));
                assert!(matches!(a.kind, FaultKind::Memory { .. }), "{:?}", a.kind);
            }
            (a, b) => panic!("{loops:?}: exact {a:?}, burst {b:?}"),
        }
        assert_eq!(exact.1.steps, burst.1.steps, "{loops:?}");
        assert_eq!(exact.0.state_hash(), burst.0.state_hash(), "{loops:?}");
        let olds = |m: &Machine| -> Vec<Vec<u32>> {
            let v = program.var(program.var_id(vdb::isa::UnitId(0), "OLD").expect("OLD"));
            m.threads
                .iter()
                .map(|t| {
                    t.grf[v.offset as usize..v.offset as usize + 16]
                        .chunks(4)
                        .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                        .collect()
                })
                .collect()
        };
        assert_eq!(olds(&exact.0), olds(&burst.0), "{loops:?}");
    }
}

/// Named barriers (NBARRIER.md, the baseline form): thread 1 stores its value to SLM only
/// after a long private loop, and thread 0 reads it after `nbarrier.wait`, so the value it
/// reads is thread 1's only if the wait held it until both signalled. Plain and burst runs
/// agree, time travel returns to the same state, and a wait that nobody signals is a deadlock.
pub(crate) const NBAR_BODY: &str = "    mov (M1_NM, 1) I(0,0)<1> X(0,0)<0;1,0>
LOOP:
    add (M1_NM, 1) I(0,0)<1> I(0,0)<0;1,0> 0xffffffff:d
    cmp.gt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x0:d
    (P1) goto (M1_NM, 1) LOOP
    mov (M1_NM, 1) V(0,0)<1> X(0,0)<0;1,0>
    mul (M1_NM, 1) OFF(0,0)<1> T(0,0)<0;1,0> 0x4:ud
    scatter_scaled.4 (M1_NM, 1) %slm 0x0:ud OFF.0 V.0
    nbarrier.signal 0x2:ub N(0,0)<0;1,0>
    nbarrier.wait 0x2:ub
    xor (M1_NM, 1) OFF(0,0)<1> OFF(0,0)<0;1,0> 0x4:ud
    gather_scaled.4 (M1_NM, 1) %slm 0x0:ud OFF.0 R.0";

fn nbar_threads(signals: u32) -> (std::sync::Arc<vdb::program::Program>, Machine) {
    nbar_machine(NBAR_BODY, signals, [0, 0])
}

/// [`NBAR_BODY`] in its producer-consumer form: the threads signal as their `TY` says (type
/// 0 produces and consumes, 1 produces, 2 consumes) for one producer and `consumers`
/// consumers, and all but the producers of type 1 wait.
pub(crate) fn producer_consumer_body(consumers: u8) -> String {
    NBAR_BODY
        .replace(
            "    nbarrier.signal 0x2:ub N(0,0)<0;1,0>",
            &format!("    nbarrier.signal 0x2:ub TY(0,0)<0;1,0> 0x1:ub 0x{consumers:x}:ub"),
        )
        .replace("    nbarrier.wait 0x2:ub", "    cmp.ne (M1_NM, 1) P2 TY(0,0)<0;1,0> 0x1:ub\n    (P2) goto (M1_NM, 1) WAIT\n    goto (M1_NM, 1) AFTER\nWAIT:\n    nbarrier.wait 0x2:ub\nAFTER:")
}

/// Two SIMD16 threads of one work-group running `body` (`NBAR_BODY` or a form of it), with 64
/// bytes of SLM and the named barriers': thread 0 with X = 1 (stores at once) and type
/// `types[0]`, thread 1 with X = 300 (stores after 300 loop trips) and `types[1]`, both
/// expecting `signals` signals.
pub(crate) fn nbar_machine(
    body: &str,
    signals: u32,
    types: [u8; 2],
) -> (std::sync::Arc<vdb::program::Program>, Machine) {
    let decls = ".decl X v_type=G type=d num_elts=16 align=hword
.decl T v_type=G type=ud num_elts=8 align=hword
.decl N v_type=G type=ub num_elts=32 align=hword
.decl TY v_type=G type=ub num_elts=32 align=hword
.decl I v_type=G type=d num_elts=8 align=hword
.decl V v_type=G type=d num_elts=8 align=hword
.decl OFF v_type=G type=ud num_elts=8 align=hword
.decl R v_type=G type=d num_elts=8 align=hword
.decl P1 v_type=P num_elts=16
.decl P2 v_type=P num_elts=16";
    let program = std::sync::Arc::new(parse_kernel(&kernel_text(decls, body, 16)));
    let slm = Slm::new(64 + vdb::exec::NBAR_BYTES);
    let mut machine = Machine { slms: vec![Shared::new(slm)].into(), ..Machine::default() };
    for (i, x) in [(0usize, 1i32), (1, 300)] {
        machine.threads.push(Shared::new(ThreadState::new(&program, 16, 0xffff)));
        machine.thread_mut(vdb::machine::ThreadId(i as u32)).index_in_group = i as u32;
        set_var_thread(&program, &mut machine, i, "X", &x.to_le_bytes());
        set_var_thread(&program, &mut machine, i, "T", &(i as u32).to_le_bytes());
        set_var_thread(&program, &mut machine, i, "N", &[signals as u8]);
        set_var_thread(&program, &mut machine, i, "TY", &[types[i]]);
    }
    (program, machine)
}

#[test]
fn a_named_barrier_holds_its_waiters_until_every_signal() {
    let r_of = |m: &Machine, p: &vdb::program::Program, t: usize| {
        let v = p.var(p.var_id(vdb::isa::UnitId(0), "R").expect("R"));
        i32::from_le_bytes(m.threads[t].grf[v.offset as usize..v.offset as usize + 4].try_into().expect("4"))
    };
    let (program, mut machine) = nbar_threads(2);
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(2);
    run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect("runs");
    // Each thread reads the other's value: thread 0 got 300 (thread 1's X), not 0.
    assert_eq!((r_of(&machine, &program, 0), r_of(&machine, &program, 1)), (300, 1));
    let (_, mut bursts) = nbar_threads(2);
    let mut sched2 = Scheduler::single_group(2);
    vdb::exec::run_to_end_unrecorded(&interp, &mut bursts, &mut sched2).expect("runs");
    assert_eq!((r_of(&bursts, &program, 0), r_of(&bursts, &program, 1)), (300, 1));
    assert_eq!(sched.steps, sched2.steps);
    // Expecting three signals from two threads: nobody can release the waiters.
    let (program, mut stuck) = nbar_threads(3);
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(2);
    let fault = run_to_end(&interp, &mut stuck, &mut sched, &mut NullObserver).expect_err("deadlock");
    assert!(fault.render(&program).contains("named barriers"), "{}", fault.render(&program));
}

/// The general form: thread 1 only produces (type 1) after its long loop, thread 0 only
/// consumes (type 2) and waits; one producer, one consumer. Thread 0 reads thread 1's store.
#[test]
fn a_named_barrier_consumer_waits_for_its_producer() {
    let (program, mut machine) = nbar_machine(&producer_consumer_body(1), 0, [2, 1]);
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(2);
    run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect("runs");
    let v = program.var(program.var_id(vdb::isa::UnitId(0), "R").expect("R"));
    let r0 = i32::from_le_bytes(
        machine.threads[0].grf[v.offset as usize..v.offset as usize + 4].try_into().expect("4"),
    );
    assert_eq!(r0, 300);
}

/// Barrier divergence is a fault at the barrier: lanes of a thread that a divergent `goto`
/// parked past it while the others reach it, or two threads waiting at different barriers.
#[test]
fn barrier_divergence_is_a_fault() {
    let decls = ".decl L v_type=G type=d num_elts=16 align=hword\n.decl X v_type=G type=d num_elts=16 align=hword\n.decl R v_type=G type=d num_elts=16 align=hword\n.decl P1 v_type=P num_elts=16";
    let body = "    cmp.lt (M1, 16) P1 L(0,0)<1;1,0> 0x8:d
    (P1) goto (M1, 16) SKIP
    barrier
SKIP:
    mov (M1, 16) R(0,0)<1> 0x1:d";
    let lanes: Vec<u8> = (0..16i32).flat_map(|l| l.to_le_bytes()).collect();
    let r = crate::harness::run_with(decls, body, 16, 0xffff, |p, m| set_var(p, m, "L", &lanes));
    let fault = r.result.expect_err("a divergent barrier");
    assert!(matches!(fault.kind, FaultKind::BarrierDivergence(_)), "{:?}", fault.kind);
    let text = fault.render(&r.program);
    assert!(text.contains("lanes 0xff of this thread wait") && text.contains("barrier"), "{text}");
    // Uniform branches around the barrier are fine: every lane reaches it or none does.
    let uniform = crate::harness::run_with(decls, body, 16, 0xffff, |p, m| set_var(p, m, "L", &[9u8; 64]));
    assert!(uniform.result.is_ok());
    // Two threads, each at a barrier of its own.
    let body2 = "    cmp.eq (M1, 16) P1 X(0,0)<0;1,0> 0x0:d
    (P1) goto (M1, 1) OTHER
    barrier
    goto (M1, 1) END
OTHER:
    barrier
END:";
    let program = std::sync::Arc::new(parse_kernel(&kernel_text(decls, body2, 16)));
    let mut machine = Machine { slms: vec![Shared::new(Slm::new(64))].into(), ..Machine::default() };
    for (i, x) in [0i32, 1].iter().enumerate() {
        machine.threads.push(Shared::new(ThreadState::new(&program, 16, 0xffff)));
        machine.thread_mut(vdb::machine::ThreadId(i as u32)).index_in_group = i as u32;
        set_var_thread(&program, &mut machine, i, "X", &x.to_le_bytes());
    }
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(2);
    let fault =
        run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver).expect_err("different barriers");
    assert!(matches!(fault.kind, FaultKind::BarrierDivergence(_)), "{:?}", fault.kind);
    assert!(
        fault.render(&program).contains("waits at the barrier at instruction"),
        "{}",
        fault.render(&program)
    );
}

/// A barrier that only some lanes of a thread reach stops a debugging session with the fault
/// at the barrier; the recording stays: stepping back leaves the fault and undoes the steps
/// before it, and stepping forward reaches the same fault again.
#[test]
fn a_divergent_barrier_stops_the_session_and_time_travel_goes_on() {
    let decls = ".decl L v_type=G type=d num_elts=16 align=hword\n.decl R v_type=G type=d num_elts=16 align=hword\n.decl P1 v_type=P num_elts=16";
    let body = "    mov (M1, 16) L(0,0)<1> 0x9:d
    mov (M1, 8) L(0,0)<1> 0x0:d
    cmp.lt (M1, 16) P1 L(0,0)<1;1,0> 0x8:d
    (P1) goto (M1, 16) SKIP
    barrier
SKIP:
    mov (M1, 16) R(0,0)<1> 0x1:d";
    let mut s = session_on_text("divergent_barrier", &kernel_text(decls, body, 16));
    let stop = s.continue_forward();
    let vdb::session::StopReason::Fault { message } = &stop else { panic!("{stop:?}") };
    assert!(message.contains("barrier divergence"), "{message}");
    let (at_fault, hash) = (s.now, s.machine.state_hash());
    let pc = s.machine.threads[0].control.pc;
    assert_eq!(s.program.inst_text(pc).trim(), "barrier");
    crate::harness::cmd(&mut s, "rstep");
    assert!(s.now < at_fault);
    assert_ne!(s.machine.state_hash(), hash);
    crate::harness::cmd(&mut s, "goto 0");
    assert_eq!(s.now, 0);
    let again = s.continue_forward();
    assert_eq!(again, stop);
    assert_eq!((s.now, s.machine.state_hash()), (at_fault, hash));
}
