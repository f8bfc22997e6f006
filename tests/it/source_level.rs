//! OpenCL source level on a kernel compiled with `-g` (sample-kernels/source-level): stepping
//! by source line in both directions, over and into a called helper and through an inlined
//! one, `break FILE.cl:LINE` and bare lines by layout, `list`, `bt` and stops naming the
//! source position; and kernels without line information stepping by instruction as before.

use vdb::isa::InstIdx;
use vdb::session::{Session, StopReason};

use crate::harness::{cmd, launch, session};

const DEVICES: [&str; 2] = ["skl", "acm-g10"];

fn loop_call(device: &str) -> Session {
    session(&launch(&format!("source-level/loop_call/{device}.launch.json")))
}

/// The focused thread's instruction.
fn pc(s: &Session) -> InstIdx {
    s.machine.thread(s.focus).control.pc
}

fn here(s: &Session) -> String {
    s.source_here().unwrap_or_default()
}

#[test]
fn step_moves_by_source_line_through_the_loop_and_the_inlined_helper() {
    for device in DEVICES {
        let mut s = loop_call(device);
        let mut seen = Vec::new();
        for _ in 0..8 {
            let reply = cmd(&mut s, "step");
            assert_eq!(reply.stop, Some(StopReason::Step), "{device}");
            // Every stop is at the entry of a line: the first instruction of its run.
            let pos = s.program.lines.at(pc(&s)).expect("a line");
            assert!(pos.stmt, "{device}: stopped inside a line at {}", here(&s));
            seen.push(here(&s).trim_start_matches("loop_call.cl:").to_string());
        }
        // 19 `int i = …`, 20 `int v = in[i]`, 22 the loop, 5 and 6 the inlined weigh(), 23 its
        // use, and round the loop again.
        assert_eq!(seen, ["19", "20", "22", "5", "6", "23", "22", "5"], "{device}");
    }
}

/// Forward steps to the end of the focused thread, then reverse steps from there: each
/// reverse step stops exactly where the forward step before it had stopped. With
/// `prerecorded`, the reverse steps run on a recording made to the end first, in burst
/// windows on two cores, so that they read window-stored step records.
fn reverse_retraces(device: &str, forward: &str, back: &str, prerecorded: bool) {
    let mut s = loop_call(device);
    let mut times = vec![s.now];
    loop {
        let reply = cmd(&mut s, forward);
        if reply.stop != Some(StopReason::Step) || s.source_here().is_none() {
            break;
        }
        times.push(s.now);
    }
    assert!(times.len() > 20, "{device} {forward}: {} stops", times.len());
    if prerecorded {
        s = loop_call(device);
        s.cores = 2;
        s.run_to_end();
    }
    // Back from the last line the thread stood on.
    let last = times.len() - 1;
    s.goto(times[last]);
    for want in times[..last].iter().rev() {
        let reply = cmd(&mut s, back);
        let at = here(&s);
        assert_eq!(s.now, *want, "{device} {back} to {at}: {:?}", reply.stop);
    }
}

#[test]
fn reverse_steps_retrace_forward_steps() {
    for device in DEVICES {
        for prerecorded in [false, true] {
            reverse_retraces(device, "step", "rstep", prerecorded);
            reverse_retraces(device, "next", "rnext", prerecorded);
        }
    }
}

#[test]
fn rstep_before_the_first_line_goes_back_to_the_thread_start() {
    let mut s = loop_call("skl");
    cmd(&mut s, "step");
    let reply = cmd(&mut s, "rstep");
    assert_eq!(reply.stop, Some(StopReason::Start));
    assert_eq!(s.now, 0);
}

#[test]
fn next_runs_the_called_helper_and_step_enters_it() {
    let mut s = loop_call("skl");
    cmd(&mut s, "break loop_call.cl:28");
    cmd(&mut s, "continue");
    assert_eq!(here(&s), "loop_call.cl:28");
    let at_call = s.now;
    // `next` does not stop in mix() (lines 13 and 14), and ends in the kernel body.
    cmd(&mut s, "next");
    assert!(!["loop_call.cl:13", "loop_call.cl:14"].contains(&here(&s).as_str()), "{}", here(&s));
    assert!(s.machine.thread(s.focus).control.stack.is_empty());
    cmd(&mut s, &format!("goto {at_call}"));
    cmd(&mut s, "step");
    assert_eq!(here(&s), "loop_call.cl:13");
    let bt = cmd(&mut s, "bt");
    let sources: Vec<&str> =
        bt.fields["frames"].as_array().expect("frames").iter().filter_map(|f| f["source"].as_str()).collect();
    assert_eq!(sources, ["loop_call.cl:13", "loop_call.cl:28"]);
    assert!(bt.text.contains("(loop_call.cl:28)"), "{}", bt.text);
    cmd(&mut s, "step");
    assert_eq!(here(&s), "loop_call.cl:14");
    // `finish` returns to the caller, in the middle of line 28 (after the call).
    cmd(&mut s, "finish");
    assert_eq!(here(&s), "loop_call.cl:28");
    assert!(!s.program.lines.at(pc(&s)).expect("line").stmt);
}

#[test]
fn break_on_a_source_line_stops_at_its_entries() {
    let mut s = loop_call("skl");
    let reply = cmd(&mut s, "break loop_call.cl:23");
    assert_eq!(reply.fields["at_source"], "loop_call.cl:23");
    assert!(reply.text.starts_with("breakpoint 1 at loop_call.cl:23 ($"), "{}", reply.text);
    let first = cmd(&mut s, "continue");
    assert_eq!(first.stop, Some(StopReason::Breakpoint { id: 1 }));
    assert_eq!(here(&s), "loop_call.cl:23");
    let step = s.now;
    // Round the loop: line 23 again, once per iteration.
    cmd(&mut s, "continue");
    assert_eq!(here(&s), "loop_call.cl:23");
    assert!(s.now > step);
    // A line without code moves to the next line with code, as in gdb: 24 is `}`.
    let reply = cmd(&mut s, "tbreak loop_call.cl:24");
    assert_eq!(reply.fields["at_source"], "loop_call.cl:25");
    let err = s.execute(&vdb::session::parse("break loop_call.cl:99").expect("p").expect("c"));
    assert!(err.is_err_and(|e| e.contains("no code at or after line 99")));
}

#[test]
fn bare_lines_mean_the_file_the_source_pane_shows() {
    let mut s = loop_call("skl");
    cmd(&mut s, "step");
    // The default layout shows the OpenCL source: line 13 is in mix().
    assert_eq!(cmd(&mut s, "break 13").fields["at_source"], "loop_call.cl:13");
    assert_eq!(cmd(&mut s, "layout asm").fields["layout"], "asm");
    // The vISA's line 13 is a declaration: the first instruction after it is $1.
    let visa = cmd(&mut s, "break 13");
    assert!(visa.text.contains(".visaasm:"), "{}", visa.text);
    // vISA file:line and $id keep working whatever the layout.
    cmd(&mut s, "layout split");
    let by_file = cmd(&mut s, "break loop_call.simd8.visaasm:150");
    assert!(by_file.text.contains("loop_call.simd8.visaasm:150"), "{}", by_file.text);
    let by_id = cmd(&mut s, "break $55");
    assert_eq!(by_id.fields["at_source"], "loop_call.cl:28");
    assert_eq!(cmd(&mut s, "layout next").fields["layout"], "src");
}

#[test]
fn stepi_and_nexti_move_by_instruction() {
    let mut s = loop_call("skl");
    cmd(&mut s, "step");
    let (t, before) = (s.now, pc(&s));
    cmd(&mut s, "stepi");
    assert_eq!((s.now, pc(&s).0), (t + 1, before.0 + 1), "one instruction of the one running thread");
    cmd(&mut s, "rsi");
    assert_eq!(s.now, t);
    cmd(&mut s, "ni 2");
    assert_eq!(s.now, t + 2);
    cmd(&mut s, "rnexti");
    assert_eq!(s.now, t + 1);
}

#[test]
fn list_shows_the_source_around_the_current_line() {
    let mut s = loop_call("skl");
    cmd(&mut s, "step 2");
    let reply = cmd(&mut s, "list");
    assert!(reply.fields["file"].as_str().is_some_and(|f| f.ends_with("loop_call.cl")));
    let rows = reply.fields["lines"].as_array().expect("rows");
    let current: Vec<u64> =
        rows.iter().filter(|r| r["current"] == true).filter_map(|r| r["line"].as_u64()).collect();
    assert_eq!(current, [20]);
    assert!(reply.text.contains("=>   20      int v = in[i];"), "{}", reply.text);
    let mix = cmd(&mut s, "list loop_call.cl:13");
    assert!(mix.text.contains("int m = a ^ b;"), "{}", mix.text);
    cmd(&mut s, "layout asm");
    let visa = cmd(&mut s, "list");
    assert!(visa.fields["file"].as_str().is_some_and(|f| f.ends_with(".visaasm")));
}

#[test]
fn movements_name_the_source_line_beside_the_visa_line() {
    let mut s = loop_call("skl");
    let reply = cmd(&mut s, "step");
    let first = reply.text.lines().next().unwrap_or_default();
    assert!(first.contains(&format!("line {} (loop_call.cl:19): mul", s.line())), "{}", reply.text);
    assert!(reply.text.contains("   19      int i = get_global_id(0);"), "{}", reply.text);
    // A watchpoint stop names the writing instruction's line.
    cmd(&mut s, "watch out 4");
    let hit = cmd(&mut s, "continue");
    match hit.stop {
        Some(StopReason::Watchpoint(h)) => assert_eq!(h.source.as_deref(), Some("loop_call.cl:29")),
        other => panic!("{other:?}"),
    }
    // So do the writes `last-write` and `why` find.
    assert_eq!(cmd(&mut s, "last-write out 4").fields["writer"]["source"], "loop_call.cl:29");
    assert_eq!(cmd(&mut s, "why out 4").fields["tree"]["writer"]["source"], "loop_call.cl:29");
}

#[test]
fn a_source_not_found_leaves_stepping_and_names_where_it_looked() {
    let dir = crate::golden::scratch("source_level_no_text");
    let from = launch("source-level/loop_call");
    std::fs::create_dir_all(dir.join("skl")).expect("dir");
    std::fs::create_dir_all(dir.join("in")).expect("dir");
    for rel in ["skl.launch.json", "skl/loop_call.simd8.visaasm", "skl/loop_call.zebin", "in/in.bin"] {
        std::fs::copy(from.join(rel), dir.join(rel)).expect("copy");
    }
    let mut s = session(&dir.join("skl.launch.json"));
    cmd(&mut s, "step 2");
    assert_eq!(here(&s), "loop_call.cl:20");
    assert_eq!(s.current_source_file(), None, "the pane shows the vISA");
    // A bare line is then a vISA line; the source file's lines still work by name.
    assert!(cmd(&mut s, "break 13").text.contains(".visaasm:"));
    assert_eq!(cmd(&mut s, "break loop_call.cl:23").fields["at_source"], "loop_call.cl:23");
    let err = s.execute(&vdb::session::parse("list loop_call.cl:20").expect("p").expect("c"));
    assert!(err.is_err_and(|e| e.contains("was not found")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn kernels_without_line_information_step_by_instruction() {
    let path = launch("hand/nested_divergence.launch.json");
    let (mut a, mut b) = (session(&path), session(&path));
    assert!(!a.program.lines.has_lines());
    for (line, inst) in
        [("step 3", "stepi 3"), ("next", "nexti"), ("rstep 2", "rstepi 2"), ("rnext", "rnexti")]
    {
        cmd(&mut a, line);
        cmd(&mut b, inst);
        assert_eq!(a.now, b.now, "{line}");
        assert_eq!(a.source_here(), None);
    }
    assert!(cmd(&mut a, "layout src").text.contains("no line information"));
}
