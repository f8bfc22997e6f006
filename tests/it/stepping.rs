//! Stepping over and out of calls (`next`, `finish` and their reverses) against the
//! straight-line run, the call stack they move through (`backtrace`), and what stops them
//! early, as in gdb: watchpoints of any thread, breakpoints of the focused thread.

use vdb::isa::{InstIdx, Opcode};
use vdb::machine::ThreadId;
use vdb::session::{parse, Session, StopReason};

use crate::harness::{cmd as run, launch, session};

/// Thread 0's steps in the straight-line run: the global index of each, and the depth of its
/// call stack before and after it.
struct Path0 {
    steps: Vec<u64>,
    before: Vec<usize>,
    after: Vec<usize>,
}

fn thread0_path(s: &mut Session) -> Path0 {
    let (steps, _) = crate::harness::thread_steps(s, 0);
    let depth = |s: &mut Session, t: u64| {
        s.goto(t);
        s.machine.thread(ThreadId(0)).control.stack.len()
    };
    let before = steps.iter().map(|&t| depth(s, t)).collect();
    let after = steps.iter().map(|&t| depth(s, t + 1)).collect();
    Path0 { steps, before, after }
}

const CALL_LAUNCHES: [&str; 2] = ["hand/subroutine.launch.json", "shared/k29_calls/skl.launch.json"];

#[test]
fn next_finish_and_their_reverses_agree_with_the_straight_line_run() {
    for rel in CALL_LAUNCHES {
        let path = launch(rel);
        let mut s = session(&path);
        let p = thread0_path(&mut s);
        let calls: Vec<usize> = (0..p.steps.len()).filter(|&m| p.after[m] > p.before[m]).collect();
        assert!(!calls.is_empty(), "{rel}: thread 0 makes no call");
        for &m in &calls {
            let d = p.before[m];
            // The step that brings the thread back to the caller's depth.
            let r = (m + 1..p.steps.len()).find(|&r| p.after[r] <= d).expect("the call returns");
            s.goto(p.steps[m]);
            let reply = run(&mut s, "next");
            assert_eq!(reply.stop, Some(StopReason::Step), "{rel}: next over the call of step {m}");
            assert_eq!(s.now, p.steps[r] + 1, "{rel}: next over the call of step {m}");
            run(&mut s, "rnext");
            assert_eq!(s.now, p.steps[m], "{rel}: rnext back onto the call of step {m}");
            for q in (m + 1..=r).filter(|&q| p.before[q] == d + 1) {
                s.goto(p.steps[q]);
                let frames = s.backtrace(ThreadId(0));
                assert_eq!(frames.len(), d + 2, "{rel}: frames at step {q}");
                let pc = s.machine.thread(ThreadId(0)).control.pc;
                assert_eq!(frames[0].function, s.program.function_at(pc), "{rel}");
                let call = InstIdx(s.recorder.trace.at(p.steps[m]).pc);
                assert_eq!(frames[1].id, s.program.inst(call).id, "{rel}: the caller's frame is at its call");
                assert_eq!(s.program.inst(call).op, Opcode::Call, "{rel}");
                assert_eq!(run(&mut s, "bt").fields["frames"].as_array().map(Vec::len), Some(d + 2));

                let out = (q..p.steps.len()).find(|&x| p.after[x] <= d).expect("returns");
                run(&mut s, "finish");
                assert_eq!(s.now, p.steps[out] + 1, "{rel}: finish from step {q}");
                s.goto(p.steps[q]);
                let entered = (0..q).rev().find(|&x| p.before[x] <= d).expect("was called");
                run(&mut s, "rfinish");
                assert_eq!(s.now, p.steps[entered], "{rel}: rfinish from step {q}");
                assert_eq!(s.machine.thread(ThreadId(0)).control.stack.len(), d);
                assert_eq!(
                    s.machine.thread(ThreadId(0)).control.pc,
                    call,
                    "{rel}: rfinish lands on the call"
                );
            }
        }
        // Out of nothing: an error, and no movement.
        s.goto(0);
        for cmd in ["finish", "rfinish"] {
            let c = parse(cmd).expect("parses").expect("a command");
            assert!(s.execute(&c).is_err(), "{rel}: {cmd} in the kernel body");
            assert_eq!(s.now, 0);
        }
    }
}

#[test]
fn a_breakpoint_inside_a_call_stops_next_and_rnext_there() {
    let path = launch("hand/subroutine.launch.json");
    let mut s = session(&path);
    let p = thread0_path(&mut s);
    let m = (0..p.steps.len()).find(|&m| p.after[m] > p.before[m]).expect("a call");
    let r = (m + 1..p.steps.len()).find(|&r| p.after[r] <= p.before[m]).expect("returns");
    let id = match run(&mut s, "break helper_1").fields["id"].as_u64() {
        Some(id) => id as u32,
        None => panic!("no breakpoint id"),
    };
    s.goto(p.steps[m]);
    assert_eq!(run(&mut s, "next").stop, Some(StopReason::Breakpoint { id }));
    assert_eq!(s.now, p.steps[m + 1], "stopped before the callee's first instruction");
    assert_eq!(s.backtrace(ThreadId(0))[0].function, "helper_1");
    s.goto(p.steps[r] + 1);
    assert_eq!(run(&mut s, "rnext").stop, Some(StopReason::Breakpoint { id }));
    assert_eq!(s.now, p.steps[m + 1]);
    // Disabled, it stops nothing.
    run(&mut s, &format!("disable {id}"));
    s.goto(p.steps[m]);
    assert_eq!(run(&mut s, "next").stop, Some(StopReason::Step));
    assert_eq!(s.now, p.steps[r] + 1);
}

#[test]
fn stepping_stops_at_the_focused_threads_breakpoints_not_at_other_threads() {
    let path = launch("shared/k29_calls/skl.launch.json");
    let mut s = session(&path);
    assert!(s.machine.threads.len() > 1);
    // The instruction every thread executes second.
    run(&mut s, "step");
    let second = s.program.inst(s.machine.thread(ThreadId(0)).control.pc).id;
    run(&mut s, "run");
    run(&mut s, &format!("break ${second}"));
    // Thread 0 arrives there: its step stops, counted as a hit.
    assert_eq!(run(&mut s, "step").stop, Some(StopReason::Breakpoint { id: 1 }));
    assert_eq!((s.now, s.breakpoints[0].hits), (1, 1));
    // Its next step lets every other thread arrive there too, without stopping.
    assert_eq!(run(&mut s, "step").stop, Some(StopReason::Step));
    assert!(s.now > 2, "other threads ran during the step (now {})", s.now);
    let arrived = (1..s.now - 1).filter(|&t| s.recorder.trace.at(t).thread != 0).count();
    assert!(arrived > 0);
    assert_eq!((s.focus, s.breakpoints[0].hits), (ThreadId(0), 1));
    // They stop `continue`, before they execute it.
    let stop = run(&mut s, "continue").stop;
    assert_eq!(stop, Some(StopReason::Breakpoint { id: 1 }));
    assert_ne!(s.focus, ThreadId(0), "continue stops at another thread's hit");
}

#[test]
fn a_watchpoint_stops_step_and_rstep_where_continue_does() {
    let path = launch("hand/subroutine.launch.json");
    let mut s = session(&path);
    run(&mut s, "watch R(0,0)<1;1,0>");
    let forward = run(&mut s, "continue");
    let Some(StopReason::Watchpoint(hit)) = forward.stop else { panic!("{:?}", forward.stop) };
    let at = s.now;
    s.goto(0);
    let stepped = run(&mut s, "step 1000");
    assert_eq!(stepped.stop, Some(StopReason::Watchpoint(hit)), "step stops at the first write");
    assert_eq!(s.now, at);
    // Backward from the end: the last write, as rcontinue finds it.
    s.goto(u64::MAX);
    let back = run(&mut s, "rcontinue");
    let Some(StopReason::Watchpoint(last)) = back.stop else { panic!("{:?}", back.stop) };
    let at = s.now;
    s.goto(u64::MAX);
    assert_eq!(run(&mut s, "rstep 1000").stop, Some(StopReason::Watchpoint(last)));
    assert_eq!(s.now, at);
}

#[test]
fn stack_call_functions_show_in_the_backtrace_and_finish_out_of_them() {
    let launch = crate::calls::fcall_launch("fcall-frames");
    let mut s = session(&launch);
    let depth = |s: &Session| s.machine.thread(ThreadId(0)).control.stack.len();
    // Into `fcall`, then `ifcall`: both are stack-call frames under the kernel's.
    for call in ["fcall", "ifcall"] {
        while depth(&s) == 0 {
            assert_eq!(run(&mut s, "step").stop, Some(StopReason::Step));
        }
        let inside = s.now;
        let frames = s.backtrace(ThreadId(0));
        assert_eq!(frames.len(), 2);
        assert_eq!((frames[0].function.as_str(), frames[0].kind), ("twice_0", "function"));
        assert_eq!((frames[1].function.as_str(), frames[1].kind), ("_main_0", "kernel"));
        assert!(frames[1].instruction.starts_with(call), "{:?}", frames[1]);
        assert!(frames[1].file.ends_with("k.visaasm"), "{}", frames[1].file);
        let info = run(&mut s, "info frame");
        assert_eq!(info.fields["depth"], 2);
        assert_eq!(info.fields["caller"]["function"], "_main_0");
        run(&mut s, "finish");
        assert_eq!(depth(&s), 0);
        let back_at = s.machine.thread(ThreadId(0)).control.pc;
        assert!(s.program.inst_text(InstIdx(back_at.0 - 1)).starts_with(call), "returned past the {call}");
        s.goto(inside);
        run(&mut s, "rfinish");
        assert_eq!((s.now, depth(&s)), (inside - 1, 0));
        assert!(s.program.inst_text(s.machine.thread(ThreadId(0)).control.pc).starts_with(call));
        // On to the next call from just past this one.
        run(&mut s, "next");
        assert_eq!(s.machine.thread(ThreadId(0)).control.pc, back_at);
    }
}

#[test]
fn tbreak_stops_once_and_advance_runs_to_a_location() {
    let path = launch("hand/subroutine.launch.json");
    let mut s = session(&path);
    let id = run(&mut s, "tbreak helper_1").fields["id"].as_u64().map(|id| id as u32);
    let info = run(&mut s, "info breakpoints");
    assert_eq!(info.fields["breakpoints"][0]["kind"], "tbreakpoint");
    assert!(
        info.text.contains("tbreakpoint ") && info.text.contains("subroutine.visaasm:40 $"),
        "{}",
        info.text
    );
    let stop = run(&mut s, "continue");
    assert_eq!(stop.stop, id.map(|id| StopReason::Breakpoint { id }));
    let at = s.now;
    assert!(s.breakpoints.is_empty(), "deleted once it stopped the run");
    assert_eq!(run(&mut s, "info breakpoints").text, "no breakpoints or watchpoints");
    assert!(stop.text.contains("deleted"), "{}", stop.text);
    run(&mut s, "run");
    assert_eq!(run(&mut s, "continue").stop, Some(StopReason::End));

    // advance: to the label's instruction, with nothing left behind.
    run(&mut s, "run");
    let reply = run(&mut s, "advance NEG");
    assert_eq!(reply.stop, Some(StopReason::Step));
    assert_eq!(s.program.function_at(s.machine.thread(ThreadId(0)).control.pc), "helper_1");
    let neg = s.line();
    assert!(s.breakpoints.is_empty());
    // A breakpoint on the way stops it first; a place never reached runs to the end.
    run(&mut s, "run");
    run(&mut s, "break helper_1");
    assert!(matches!(run(&mut s, "advance NEG").stop, Some(StopReason::Breakpoint { .. })));
    assert_eq!((s.now, s.breakpoints.len()), (at, 1));
    run(&mut s, "delete");
    run(&mut s, "advance NEG");
    assert_eq!(s.line(), neg);
    assert_eq!(run(&mut s, "advance 21").stop, Some(StopReason::End));
    assert!(s.breakpoints.is_empty());
    let bad = parse("advance nowhere").expect("parses").expect("a command");
    assert!(s.execute(&bad).is_err());
}
