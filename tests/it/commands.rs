//! gdb's everyday commands beyond moving and breaking: `until`, `condition` and `ignore`,
//! `display`, `thread apply`; each checked against the recorded run it moves through.

use vdb::isa::UnitId;
use vdb::machine::ThreadId;
use vdb::session::{parse, Session, StopReason};

use crate::harness::{cmd as run, launch, numbers, session, thread_steps};

const COLLATZ: &str = "opencl/collatz/skl.launch.json";

fn fails(s: &mut Session, line: &str) -> String {
    let cmd = parse(line).expect("parses").expect("a command");
    s.execute(&cmd).err().unwrap_or_else(|| panic!("{line} should fail"))
}

fn pc_of(s: &Session, id: u32) -> u32 {
    s.program.inst_by_id(UnitId(0), id).expect("instruction").0
}

/// The instruction id of the first instruction whose text starts with `text`.
fn id_of(s: &Session, text: &str) -> u32 {
    let i = (0..s.program.insts.len() as u32)
        .find(|&i| s.program.inst_text(vdb::isa::InstIdx(i)).starts_with(text))
        .expect("instruction");
    s.program.inst(vdb::isa::InstIdx(i)).id
}

#[test]
fn until_runs_a_loop_through_and_stops_past_where_it_started() {
    let mut s = session(&launch(COLLATZ));
    let (steps, pcs) = thread_steps(&mut s, 0);
    // Taken back edges: thread 0's next instruction is not after this one.
    let back: Vec<usize> = (0..pcs.len() - 1).filter(|&m| pcs[m + 1] <= pcs[m]).collect();
    assert!(back.len() > 20, "the loop runs ({} back edges)", back.len());
    let last = *back.last().expect("a back edge");
    for m in back.iter().copied().step_by(9).chain([last, 0, 1, 2]) {
        // It stops after thread 0's first step that leaves it past where it started.
        let j = (m..pcs.len() - 1).find(|&j| pcs[j + 1] > pcs[m]).expect("the loop ends");
        s.goto(steps[m]);
        let reply = run(&mut s, "until");
        assert_eq!(reply.stop, Some(StopReason::Step), "until from thread 0's step {m}");
        assert_eq!(s.now, steps[j] + 1, "until from thread 0's step {m}");
        if pcs[m + 1] > pcs[m] {
            // Not at a back edge: `until` is `next`.
            s.goto(steps[m]);
            run(&mut s, "next");
            assert_eq!(s.now, steps[j] + 1);
        }
    }
    // At the back edge, `next` goes round the loop once: `until` is not `next` there.
    s.goto(steps[back[0]]);
    run(&mut s, "next");
    assert_eq!(s.now, steps[back[0]] + 1);
}

#[test]
fn until_a_location_stops_there_in_this_frame_or_when_the_frame_returns() {
    let mut s = session(&launch("hand/subroutine.launch.json"));
    let (steps, pcs) = thread_steps(&mut s, 0);
    let depth = |s: &mut Session, t: u64| {
        s.goto(t);
        s.machine.thread(ThreadId(0)).control.stack.len()
    };
    let inside = (0..steps.len()).find(|&m| depth(&mut s, steps[m]) == 1).expect("a step in the helper");
    let returned = (inside..steps.len()).find(|&m| depth(&mut s, steps[m] + 1) == 0).expect("returns");
    let scatter = id_of(&s, "svm_scatter");
    // From inside the helper, the caller's scatter is beyond the frame's return: it stops
    // there, just back in the caller.
    s.goto(steps[inside]);
    assert_eq!(run(&mut s, &format!("until ${scatter}")).stop, Some(StopReason::Step));
    assert_eq!(s.now, steps[returned] + 1);
    assert_eq!(s.backtrace(ThreadId(0)).len(), 1);
    // In the kernel's frame it runs to the scatter.
    run(&mut s, &format!("until ${scatter}"));
    let at = s.machine.thread(ThreadId(0)).control.pc.0;
    assert_eq!(at, pc_of(&s, scatter));
    let k = (0..steps.len()).find(|&m| pcs[m] == at).expect("thread 0 scatters");
    assert_eq!(s.now, steps[k - 1] + 1);
    // A location in a call the frame makes is not where it stops (`advance` is).
    s.goto(0);
    assert_eq!(run(&mut s, "until NEG").stop, Some(StopReason::End));
    assert_eq!(s.now, steps.last().expect("steps") + 1);
    run(&mut s, "run");
    assert_eq!(run(&mut s, "advance NEG").stop, Some(StopReason::Step));
    assert_eq!(s.program.function_at(s.machine.thread(ThreadId(0)).control.pc), "helper_1");
    assert!(fails(&mut s, "until nowhere").contains("no label"));
}

#[test]
fn ignore_counts_and_conditions_choose_which_hit_stops() {
    let mut s = session(&launch(COLLATZ));
    s.run_to_end();
    let head = pc_of(&s, 18);
    let arrivals: Vec<u64> = (0..s.recorder.len()).filter(|&t| s.recorder.trace.at(t).pc == head).collect();
    s.goto(0);
    run(&mut s, "break $18");
    assert_eq!(run(&mut s, "ignore 1 5").fields["ignore"], 5);
    assert_eq!(run(&mut s, "continue").stop, Some(StopReason::Breakpoint { id: 1 }));
    assert_eq!(s.now, arrivals[5], "the sixth arrival stops");
    assert_eq!((s.breakpoints[0].hits, s.breakpoints[0].ignore), (6, 0), "ignored hits are counted");

    // The loop counter of the arriving thread, read at each later arrival.
    let count_at = |s: &mut Session, t: u64| -> String {
        s.goto(t);
        s.focus = ThreadId(s.recorder.trace.at(t).thread);
        run(s, "print V0056(0,0)<0;1,0>").fields["value"][0].as_str().expect("a value").to_string()
    };
    let stopped = s.now;
    let seventh = arrivals.iter().copied().find(|&t| t > stopped && count_at(&mut s, t) == "7").expect("a 7");
    s.goto(stopped);
    run(&mut s, "condition 1 V0056(0,0)<0;1,0> == 7");
    let info = run(&mut s, "info breakpoints");
    assert!(info.text.contains("$18 if V0056(0,0)<0;1,0> == 7 hits 6"), "{}", info.text);
    assert_eq!(info.fields["breakpoints"][0]["cond"], "V0056(0,0)<0;1,0> == 7");
    assert_eq!(run(&mut s, "continue").stop, Some(StopReason::Breakpoint { id: 1 }));
    assert_eq!(s.now, seventh);
    assert_eq!(run(&mut s, "print V0056(0,0)<0;1,0>").fields["value"][0], "7");
    // Without the condition, the very next arrival stops.
    run(&mut s, "condition 1");
    run(&mut s, "continue");
    assert_eq!(s.now, arrivals.iter().copied().find(|&t| t > seventh).expect("another arrival"));

    // Watchpoints: `ignore 2 3` stops at the fourth write, as four `continue`s do.
    run(&mut s, "delete");
    run(&mut s, "run");
    run(&mut s, "watch arg1 4096");
    let writes: Vec<u64> = (0..4).map(|_| (run(&mut s, "continue"), s.now).1).collect();
    assert!(writes.windows(2).all(|w| w[0] < w[1]), "{writes:?}");
    run(&mut s, "run");
    run(&mut s, "ignore 2 3");
    assert!(matches!(run(&mut s, "continue").stop, Some(StopReason::Watchpoint(_))));
    assert_eq!(s.now, writes[3]);
    // A watchpoint's condition is on its one value: a 4096-byte range has none.
    assert!(fails(&mut s, "condition 2 == 1").contains("one value"));
    assert!(fails(&mut s, "condition 7").contains("no breakpoint or watchpoint 7"));
    assert!(fails(&mut s, "ignore 7 1").contains("no breakpoint or watchpoint 7"));
}

#[test]
fn displays_show_after_every_movement_until_undisplayed() {
    let mut s = session(&launch(COLLATZ));
    let shown = run(&mut s, "display/x V0054(0,0)<1;1,0>");
    assert_eq!(shown.fields["id"], 1);
    run(&mut s, "break $23");
    for line in ["step", "next 3", "continue", "rstep 2", "goto 500", "rcontinue", "until", "rnext"] {
        let reply = run(&mut s, line);
        let now = run(&mut s, "print V0054(0,0)<1;1,0> /x");
        let displays = &reply.fields["displays"];
        assert_eq!(displays[0]["value"], now.fields["value"], "{line}");
        assert!(reply.text.contains(&format!("1: {}", now.text)), "{line}: {}", reply.text);
    }
    run(&mut s, "display V0056(0,0)<0;1,0>");
    assert_eq!(run(&mut s, "info display").fields["displays"].as_array().map(Vec::len), Some(2));
    assert_eq!(run(&mut s, "display").fields["displays"][1]["expr"], "V0056(0,0)<0;1,0>");
    run(&mut s, "undisplay 1");
    assert_eq!(run(&mut s, "step").fields["displays"].as_array().map(Vec::len), Some(1));
    run(&mut s, "undisplay");
    assert!(run(&mut s, "step").fields.get("displays").is_none());
    assert!(fails(&mut s, "display NOPE").contains("NOPE"), "a typo fails at once");
    assert!(fails(&mut s, "undisplay 1").contains("no display 1"));
}

#[test]
fn a_display_out_of_scope_shows_its_error_and_the_movement_goes_on() {
    let launch = crate::calls::fcall_launch("display-scope");
    let mut s = session(&launch);
    run(&mut s, "step 2");
    assert_eq!(s.backtrace(ThreadId(0))[0].function, "twice_0");
    // The function's own variable: out of scope once the function returns.
    run(&mut s, "display T");
    let out = run(&mut s, "finish");
    assert_eq!(out.stop, Some(StopReason::Step));
    assert_eq!(s.backtrace(ThreadId(0)).len(), 1);
    let error = out.fields["displays"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains('T'), "{out:?}");
    assert!(out.text.contains(&format!("1: T: {error}")), "{}", out.text);
    let back = run(&mut s, "rstep");
    assert!(back.fields["displays"][0]["value"].is_array(), "{back:?}");
}

#[test]
fn thread_apply_runs_a_command_in_each_thread_and_keeps_the_focus() {
    let mut s = session(&launch(COLLATZ));
    run(&mut s, "break $24");
    for _ in 0..6 {
        run(&mut s, "continue");
    }
    run(&mut s, "thread 2");
    run(&mut s, "lane 3");
    let n = s.machine.threads.len() as u32;
    let all = run(&mut s, "thread apply all print V0056(0,0)<0;1,0>");
    let results = all.fields["results"].as_array().expect("results").clone();
    assert_eq!(results.len(), n as usize);
    let mut differ = false;
    for (t, r) in results.iter().enumerate() {
        assert_eq!(r["thread"], t);
        s.focus = ThreadId(t as u32);
        let alone = run(&mut s, "print V0056(0,0)<0;1,0>");
        assert_eq!(r["value"], alone.fields["value"], "thread {t}");
        differ |= r["value"] != results[0]["value"];
    }
    assert!(differ, "threads at different points show different values");
    s.focus = ThreadId(2);
    run(&mut s, "thread apply 1 3-4 bt");
    assert_eq!((s.focus, s.lane), (ThreadId(2), 3), "focus and lane as before");
    let some = run(&mut s, "thread apply 1 3-4 bt");
    assert_eq!(numbers(&some.fields["results"], "thread"), [1, 3, 4]);
    assert!(some.text.starts_with("thread 1:"), "{}", some.text);
    assert!(fails(&mut s, "thread apply 0-1 print NOPE").contains("NOPE"), "failing in every thread fails");
    assert!(fails(&mut s, &format!("thread apply {n} print V0056")).contains("no thread"));
}

#[test]
fn list_shows_the_source_around_a_place_and_marks_it() {
    let mut s = session(&launch(COLLATZ));
    run(&mut s, "break $18");
    run(&mut s, "continue");
    let here = s.line();
    let listed = run(&mut s, "list");
    let lines = numbers(&listed.fields["lines"], "line");
    assert_eq!(lines, (here as u64 - 5..here as u64 + 5).collect::<Vec<_>>());
    let text = s.program.file(s.program.kernel().file).text.clone();
    for (row, l) in listed.text.lines().zip(&lines) {
        assert!(row.ends_with(text.lines().nth(*l as usize - 1).expect("line")), "{row}");
        // The focused thread's line is where it stopped, on the breakpoint.
        assert_eq!(row.starts_with("=>"), *l == here as u64, "{row}");
    }
    run(&mut s, "break $33");
    let at_ret = run(&mut s, "list $33");
    assert!(at_ret.text.lines().any(|r| r.starts_with(" b") && r.contains("ret (M1, 1)")), "{}", at_ret.text);
    assert_eq!(run(&mut s, "list 1").fields["lines"][0]["text"], ".version 4.1");
    assert!(fails(&mut s, "list 100000").contains("outside"));
    assert!(fails(&mut s, "list other.visaasm:3").contains("no source file"));
}

#[test]
fn goto_relative_moves_by_global_steps_and_memory_displays_follow() {
    let mut s = session(&launch("opencl/slm_reduce/skl.launch.json"));
    run(&mut s, "display x/4dw slm+0x40");
    for (line, now) in [("goto +50", 50), ("goto -20", 30), ("goto +1", 31), ("goto -1000", 0)] {
        let reply = run(&mut s, line);
        assert_eq!(s.now, now, "{line}");
        let x = run(&mut s, "x/4dw slm+0x40");
        assert_eq!(reply.fields["displays"][0]["value"], x.fields["value"], "{line}");
    }
    assert_eq!(run(&mut s, "goto +100000000").stop, Some(StopReason::End));
    assert_eq!(s.now, s.total_steps());
    assert_eq!(run(&mut s, "info display").fields["displays"][0]["expr"], "x/4dw slm+0x40");
}

/// Every command name with every kind of argument the parser may meet (empty, zero, huge,
/// negative, signed, malformed regions and addresses, SLM forms, stray formats and
/// conditions), run in turn on one session: errors are fine, panics and hangs are not, and
/// the session still travels afterwards. Deterministic: a fixed list, crossed.
#[test]
fn every_command_with_odd_arguments_gives_errors_not_panics() {
    let names = [
        "step",
        "rstep",
        "next",
        "rnext",
        "finish",
        "rfinish",
        "until",
        "advance",
        "goto",
        "thread",
        "lane",
        "workitem",
        "break",
        "tbreak",
        "condition",
        "ignore",
        "delete",
        "disable",
        "enable",
        "watch",
        "rwatch",
        "awatch",
        "print",
        "p/x",
        "display",
        "display/f",
        "undisplay",
        "x",
        "x/4xw",
        "x/0b",
        "compare",
        "compare/dw",
        "source",
        "why",
        "lane-history",
        "list",
        "info",
        "last-write",
        "history",
        "mark",
        "thread apply all",
        "thread apply 0-1",
        "bt",
        "when",
        "state-hash",
    ];
    let args = [
        "",
        "0",
        "1",
        "-1",
        "+0",
        "+3",
        "18446744073709551615",
        "99999999999999999999",
        "$0",
        "$99999",
        "$",
        "V0053",
        "V0053(0,0)<1;1,0>",
        "V0053(0,99)<1;1,0>",
        "V0053(0,0)<32;16,4> /x",
        "V0053(",
        "V0053:zz",
        "slm",
        "slm+0x1fc",
        "slm+0x200",
        "slm3+4",
        "slm9",
        "slm+",
        "slm-1",
        "arg0+4",
        "arg9",
        "0xffffffffffffffff 18446744073709551615",
        "1 if V0053(0,0)<0;1,0> == 1",
        "1 if any(V0053(0,0)<1;1,0> ~ 3)",
        "2 3",
        "1 4-2",
        "x/4xw slm",
        "registers",
        "display",
        "/x",
        "/q V0053",
        "lane 40",
        "print V0053 /x /d",
        ":",
        "\u{1b}[A",
        "é$1",
        "0xfffffffffffffff0",
        "0xfffffffffffffff0 64",
        "-5",
        "1 2 3 4",
        "V0053(0,0)<1;1,0> lane 3",
        "V0053(0,0)<1;1,0> lane 99",
        "$1 if",
        "all(V0053(0,0)<1;1,0> >= 0)",
        "1,2,3",
        "(0,0,0)",
        "4294967296,0,0",
        "1 if workitem == 3",
        "1 if workitem == 1,99",
        "1 if wi != 3",
        "lanes",
    ];
    for launch_file in ["opencl/slm_reduce/skl.launch.json", "hand/indirect.launch.json"] {
        let mut s = session(&launch(launch_file));
        for name in names {
            for arg in args {
                let line = format!("{name} {arg}");
                if let Ok(Some(cmd)) = parse(&line) {
                    let _ = s.execute(&cmd);
                }
            }
        }
        run(&mut s, "delete");
        assert_eq!(run(&mut s, "goto 18446744073709551615").stop, Some(StopReason::End), "{launch_file}");
        assert_eq!(run(&mut s, "rstep").stop, Some(StopReason::Step), "{launch_file}");
    }
}

#[test]
fn info_record_reports_the_recording_as_it_grows() {
    let mut s = session(&launch(COLLATZ));
    let before = run(&mut s, "info record");
    assert_eq!(
        (before.fields["steps"].as_u64(), before.fields["complete"].as_bool()),
        (Some(0), Some(false))
    );
    run(&mut s, "step 40");
    assert_eq!(run(&mut s, "info record").fields["steps"].as_u64(), Some(s.total_steps()));
    run(&mut s, "continue");
    run(&mut s, "goto 100");
    let after = run(&mut s, "info record");
    let parts = s.recorder.recorded_bytes_by_part();
    assert_eq!(after.fields["steps"].as_u64(), Some(s.total_steps()));
    assert_eq!(after.fields["complete"], true);
    assert_eq!(after.fields["recorded_bytes"].as_u64(), Some(parts.total()));
    assert_eq!(after.fields["recorded"]["log"].as_u64(), Some(parts.log));
    assert_eq!(after.fields["checkpoints"].as_u64(), Some(s.recorder.checkpoints.list.len() as u64));
    assert!(after
        .text
        .starts_with(&format!("{} steps recorded, now at step 100; the run is complete", s.total_steps())));
}

/// `watch … if OP VALUE` stops only at accesses after which the watched value satisfies the
/// condition, in both directions, counting only those as hits; `condition N` sets and removes
/// it on a watchpoint. Checked against `history` of the same location.
#[test]
fn watch_conditions_test_the_value_after_the_access() {
    let mut s = session(&launch(COLLATZ));
    run(&mut s, "thread 3");
    s.run_to_end();
    // Thread 3's loop counter (the scalar `add (M1_NM, 1) V0056 … 0x1:w`): its writes with
    // their new values, oldest first.
    let counter = "V0056(0,0)<0;1,0>";
    let hist = run(&mut s, &format!("history {counter}")).fields["writes"].clone();
    let mut writes: Vec<(u64, u32)> = hist
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| {
            let hex = w["new"].as_str().expect("new");
            (w["step"].as_u64().expect("step"), u32::from_str_radix(hex, 16).expect("hex").swap_bytes())
        })
        .collect();
    writes.reverse();
    let at = |pred: &dyn Fn(u32) -> bool| {
        writes.iter().filter(|(_, v)| pred(*v)).map(|(s, _)| *s).collect::<Vec<_>>()
    };
    let sevens = at(&|v| v == 7);
    let big = at(&|v| v >= 40);
    assert_eq!(sevens.len(), 1, "{writes:?}");
    assert!(big.len() > 1, "the counter passes 40 more than once: {writes:?}");
    run(&mut s, "run");
    run(&mut s, &format!("watch {counter} if == 7"));
    let r = run(&mut s, "continue");
    let Some(StopReason::Watchpoint(h)) = &r.stop else { panic!("{:?}", r.stop) };
    assert_eq!(h.step, sevens[0]);
    assert_eq!(h.new, "07000000");
    assert_eq!(run(&mut s, "continue").stop, Some(StopReason::End));
    let back = run(&mut s, "rcontinue");
    assert!(matches!(&back.stop, Some(StopReason::Watchpoint(h)) if h.step == sevens[0]), "{:?}", back.stop);
    // `condition 1 >= 40`: every stop forward is a write of 40 or more, and backwards the same
    // steps in reverse order.
    run(&mut s, "condition 1 >= 40");
    run(&mut s, "run");
    let mut forward = Vec::new();
    while let Some(StopReason::Watchpoint(h)) = run(&mut s, "continue").stop {
        forward.push(h.step);
    }
    assert_eq!(forward, big);
    let mut backward = Vec::new();
    while let Some(StopReason::Watchpoint(h)) = run(&mut s, "rcontinue").stop {
        backward.push(h.step);
    }
    backward.reverse();
    assert_eq!(backward, big);
    let info = run(&mut s, "info breakpoints").fields["breakpoints"][0].clone();
    assert_eq!(info["cond"], "value >= 40");
    assert_eq!(
        info["hits"].as_u64(),
        Some(2 * big.len() as u64 + 2),
        "hits count only where the value passes"
    );
    // Without its condition it stops at every write again.
    run(&mut s, "condition 1");
    run(&mut s, "run");
    let r = run(&mut s, "continue");
    assert!(matches!(&r.stop, Some(StopReason::Watchpoint(h)) if h.step == writes[0].0), "{:?}", r.stop);
    // One value to test: a whole SIMD region or a 3-byte range is refused.
    assert!(fails(&mut s, "watch V0054(0,0)<1;1,0> if == 1").contains("one value"));
    assert!(fails(&mut s, "watch arg1 3 if == 1").contains("one value"));
    assert!(fails(&mut s, "watch arg1 4 if ~ 1").contains("OP VALUE"));
    assert!(fails(&mut s, "condition 1 == x").contains("not a number"));
}

/// `source FILE` runs a file's commands as if typed one by one (the same state and stops),
/// stops at the first that fails naming its file and line (what ran before stays done), and
/// refuses files that source themselves past a depth.
#[test]
fn source_runs_a_files_commands_as_typed() {
    let dir = super::golden::scratch("source");
    let lines = ["# a setup", "break $29 if V0056(0,0)<0;1,0> == 3", "", "continue", "thread 2", "rstep 4"];
    let setup = dir.join("setup.vdb");
    std::fs::write(&setup, lines.join("\n")).expect("write");
    let mut typed = session(&launch(COLLATZ));
    let mut last_stop = None;
    for line in lines {
        if let Ok(Some(c)) = parse(line) {
            last_stop = typed.execute(&c).expect(line).stop.or(last_stop);
        }
    }
    let mut sourced = session(&launch(COLLATZ));
    let r = run(&mut sourced, &format!("source {}", setup.display()));
    assert_eq!(r.fields["commands"].as_u64(), Some(4));
    assert_eq!(r.stop, last_stop);
    assert!(matches!(r.stop, Some(StopReason::Step)), "{:?}", r.stop);
    assert_eq!((sourced.now, sourced.focus), (typed.now, typed.focus));
    assert_eq!(run(&mut sourced, "state-hash").fields["hash"], run(&mut typed, "state-hash").fields["hash"]);
    assert!(r.text.contains("(vdb) continue"), "{}", r.text);

    let broken = dir.join("broken.vdb");
    std::fs::write(&broken, "watch arg1 4\nfrobnicate\ncontinue\n").expect("write");
    let mut s = session(&launch(COLLATZ));
    let e = fails(&mut s, &format!("source {}", broken.display()));
    assert!(e.contains(&format!("{}:2: unknown command `frobnicate`", broken.display())), "{e}");
    assert_eq!((s.watchpoints.len(), s.now), (1, 0), "line 1 ran, line 3 did not");

    let looped = dir.join("loop.vdb");
    std::fs::write(&looped, format!("when\nsource {}\n", dir.join("loop.vdb").display())).expect("write");
    assert!(fails(&mut s, &format!("source {}", looped.display())).contains("nest more than 8"));
    assert!(fails(&mut s, "source /dev/zero").contains("not a regular file"));
    assert!(fails(&mut s, &format!("source {}", dir.display())).contains("not a regular file"));
    // And the session still answers (each nested `when` ran and moved nothing).
    run(&mut s, "goto 3");
    assert_eq!(s.now, 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// User-given numbers never wrap: a huge relative `goto` saturates at the ends of the run,
/// and register offsets past a variable are errors, not another element.
#[test]
fn huge_numbers_saturate_or_fail_and_never_wrap() {
    let mut s = session(&launch("hand/loop_exit.launch.json"));
    run(&mut s, "goto 40");
    assert_eq!(s.now, 40);
    run(&mut s, "goto +18446744073709551615");
    let end = s.now;
    assert!(end > 40, "a forward goto went back to {end}");
    run(&mut s, "goto -18446744073709551615");
    assert_eq!(s.now, 0);
    run(&mut s, "goto 40");
    run(&mut s, "goto +9223372036854775808");
    assert_eq!(s.now, end);
    for line in [
        "print LANE(0,2147483651)",
        "print LANE(134217728,0)",
        "watch LANE(0,2147483651)",
        "last-write LANE(0,2147483651)",
    ] {
        let e = fails(&mut s, line);
        assert!(e.contains("outside `LANE`"), "{line}: {e}");
    }
    let e = fails(&mut s, "print LANE<300;1,0>");
    assert!(e.contains("too large"), "{e}");
    let e = fails(&mut s, "x/4xw out-0x200000000");
    assert!(e.contains("outside the 64-bit address space"), "{e}");
}

/// After a watchpoint stop the focused lane is the lane that made the access; after a
/// breakpoint stop it is a lane the instruction runs for.
#[test]
fn a_stop_focuses_the_lane_that_hit() {
    let mut s = session(&launch(COLLATZ));
    // Element 21 of `steps` is work-item 21's: thread 1, lane 5 (SIMD16).
    let reply = run(&mut s, "watch steps+84 4");
    assert!(reply.text.contains("watchpoint"), "{}", reply.text);
    let stop = run(&mut s, "continue");
    assert!(matches!(stop.stop, Some(StopReason::Watchpoint(_))), "{:?}", stop.stop);
    assert_eq!((s.focus.0, s.lane), (1, 5), "{}", stop.text);
    run(&mut s, "delete");
    let s = session(&launch("hand/nested_divergence.launch.json"));
    let lines: Vec<u32> =
        (0..s.program.insts.len() as u32).map(|i| s.program.inst(vdb::isa::InstIdx(i)).span.line).collect();
    let mut stops = 0;
    for line in lines {
        let mut s2 = session(&launch("hand/nested_divergence.launch.json"));
        s2.lane = 15;
        if s2.execute(&parse(&format!("break {line}")).expect("p").expect("c")).is_err() {
            continue;
        }
        let reply = run(&mut s2, "continue");
        if !matches!(reply.stop, Some(StopReason::Breakpoint { .. })) {
            continue;
        }
        stops += 1;
        let t = s2.machine.thread(s2.focus);
        let inst = s2.program.inst(t.control.pc);
        let (chen, _, _) = vdb::exec::channel_enables(inst, t.control.em, &t.preds);
        let lanes = chen << inst.exec.offset;
        assert!(lanes == 0 || lanes >> s2.lane & 1 == 1, "line {line}: lane {} of {lanes:#x}", s2.lane);
    }
    assert!(stops > 5, "{stops} breakpoints stopped");
}

/// A fault stop focuses the faulting lane (the thread's channel: lane 0 of an `(M3, 8)`
/// message is channel 8).
#[test]
fn a_fault_focuses_its_thread_and_lane() {
    let text = ".version 4.1
.kernel \"slmfault\"
.decl OFF v_type=G type=ud num_elts=16 align=GRF
.decl S v_type=G type=ud num_elts=16 align=GRF
.kernel_attr Target=\"3d\"
.kernel_attr SimdSize=16
.function \"_main_0\"

_main_0:
    mov (M1, 16) S(0,0)<1> 0x7:ud
    mov (M1, 16) OFF(0,0)<1> 0x1fff0:ud
    scatter_scaled.1 (M3, 8) %slm 0x0:ud OFF.0 S.0
    ret (M1, 1)
";
    let mut s = crate::harness::session_on_text("slmfault", text);
    let reply = run(&mut s, "continue");
    assert!(matches!(reply.stop, Some(StopReason::Fault { .. })), "{}", reply.text);
    assert!(reply.text.contains("lane 8:"), "{}", reply.text);
    assert_eq!((s.focus.0, s.lane), (0, 8));
}
