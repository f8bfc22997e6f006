//! `continue` records ahead in burst windows and finds its stops in the recording (the
//! breakpoints' conditions tested as the windows run, watched writes from the indexes). It
//! stops where checking every step as it is made stops: on sample launches with SLM,
//! barriers, atomics, divergence and several work-groups, for breakpoints with and without
//! conditions (`workitem ==`, comparisons), `tbreak`, `ignore`, and memory and register
//! watchpoints with and without value conditions (read watchpoints too, checked at memory
//! instructions), continued from the start, from a stop and from a point in the recorded
//! past; and reverse continue stops where undoing one step at a time and checking each
//! stops. Stepping commands (`stepi`, `nexti`, `step`, `next`, `until`, `finish` and their
//! reverses) search the recording for the focused thread's steps and stop where checking
//! each step stops.

use std::path::Path;

use vdb::session::{Session, StopReason};

use crate::harness::{cmd, lcg, session};

/// Where a session stands after a movement: the stop, the time, the focused thread and lane.
fn place(s: &Session, stop: &vdb::session::StopReason) -> String {
    format!("{stop:?} at {} focus {} lane {}", s.now, s.focus.0, s.lane)
}

/// Asserts that two sessions stopped alike (the stop, the time, the focus, the whole state);
/// 1 when that was a breakpoint or watchpoint stop.
fn same_stop(a: &Session, b: &Session, (sa, sb): (&StopReason, &StopReason), what: &str) -> u32 {
    assert_eq!(place(a, sa), place(b, sb), "{what}");
    assert_eq!(a.machine.state_hash(), b.machine.state_hash(), "{what}");
    u32::from(matches!(sa, StopReason::Breakpoint { .. } | StopReason::Watchpoint(_)))
}

#[test]
fn continue_stops_where_checking_each_step_stops() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/opencl");
    let mut seed = 0x5709_u64;
    let mut stops = 0;
    for name in ["collatz", "slm_reduce", "atomics", "divergence", "local_scan", "nested_loops"] {
        let path = root.join(name).join("skl.launch.json");
        let probe = session(&path);
        let program = probe.program.clone();
        let lines: Vec<u32> = program.insts.iter().map(|i| i.span.line).filter(|&l| l > 0).collect();
        // A variable the kernel writes, to watch and to test in conditions.
        let written: Vec<String> = program
            .insts
            .iter()
            .filter_map(|i| match i.operands.first() {
                Some(vdb::isa::Operand::Direct(d)) if i.op.family() == vdb::isa::Family::Alu => {
                    Some(program.var(d.var).name.clone())
                }
                _ => None,
            })
            .collect();
        for case in 0..6 {
            let line = lines[(lcg(&mut seed) % lines.len() as u64) as usize];
            let var = &written[(lcg(&mut seed) % written.len() as u64) as usize];
            let wi = lcg(&mut seed) % 64;
            let setup: Vec<String> = match case {
                0 => vec![format!("break {line}")],
                1 => vec![format!("break {line} if workitem == {wi}")],
                2 => vec![format!("break {line} if any({var} > 3)"), "ignore 1 2".into()],
                3 => vec![format!("tbreak {line}"), format!("break {line} if {var} == 0")],
                4 => vec![
                    format!("watch arg1+{} 4", 4 * (lcg(&mut seed) % 4)),
                    format!("rwatch arg0+{} 4", 4 * (lcg(&mut seed) % 64)),
                ],
                _ => vec![
                    format!("watch {var}(0,0)<1;1,0> lane 0 if == 1"),
                    format!("break {line} if all({var} != 5)"),
                ],
            };
            let (mut fast, mut each) = (session(&path), session(&path));
            // Every other case records ahead step by step, as under a schedule other than
            // round-robin (no windows, so no probe either).
            fast.window_recording = case % 2 == 0;
            each.window_recording = false;
            for s in [&mut fast, &mut each] {
                for line in &setup {
                    cmd(s, line);
                }
            }
            for round in 0..6 {
                if round == 4 {
                    // From the recorded past: back to a third of the way.
                    let back = fast.now / 3;
                    fast.goto(back);
                    each.goto(back);
                }
                let (a, b) = (fast.continue_forward(), each.continue_stepwise());
                stops += same_stop(&fast, &each, (&a, &b), &format!("{name}: {setup:?}, continue {round}"));
            }
            // And backwards: reverse continue searches the recording the same way.
            for round in 0..5 {
                let (a, b) = (fast.continue_backward(), each.continue_backward_stepwise());
                stops += same_stop(&fast, &each, (&a, &b), &format!("{name}: {setup:?}, rcontinue {round}"));
            }
        }
    }
    assert!(stops > 90, "only {stops} stops compared");
}

/// `goto` past the recorded end records in burst windows (up to a window past the target)
/// and lands on the state recording step by step reaches, and the same steps after it.
#[test]
fn goto_past_the_end_lands_where_single_steps_do() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/opencl");
    for name in ["collatz", "slm_reduce", "local_scan"] {
        let path = root.join(name).join("skl.launch.json");
        let (mut windows, mut single) = (session(&path), session(&path));
        single.window_recording = false;
        for target in [1u64, 700, 5000, 2500, 9000] {
            let (a, b) = (windows.goto(target), single.goto(target));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}: goto {target}");
            assert_eq!(
                (windows.now, windows.machine.state_hash()),
                (single.now, single.machine.state_hash()),
                "{name}: goto {target}"
            );
        }
        assert!(windows.window_steps > 0, "{name}: no window ran");
    }
}

/// Stepping commands move the focused thread from one of its steps to the next through the
/// recording (recorded ahead in windows), checking only the steps that may trigger a
/// watchpoint; they stop where checking every step as it is made (or undone) stops: random
/// commands in both directions,
/// threads (some not started yet) and moves into the past, with breakpoints and write, read
/// and access watchpoints, on launches with SLM, barriers, divergence and calls.
#[test]
fn stepping_stops_where_checking_each_step_stops() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let launches = [
        "sample-kernels/opencl/collatz/skl.launch.json",
        "sample-kernels/opencl/slm_reduce/skl.launch.json",
        "sample-kernels/opencl/divergence/skl.launch.json",
        "sample-kernels/opencl/nested_loops/skl.launch.json",
        "sample-kernels/hand/subroutine.launch.json",
        "sample-kernels/shared/k29_calls/skl.launch.json",
    ];
    let mut seed = 0x57e9_u64;
    let (mut compared, mut stops, mut searched) = (0u32, 0u32, 0u64);
    for rel in launches {
        let path = root.join(rel);
        let probe = session(&path);
        let lines: Vec<u32> = probe.program.insts.iter().map(|i| i.span.line).filter(|&l| l > 0).collect();
        let threads = probe.machine.threads.len() as u64;
        // A word of a random buffer.
        let word = |seed: &mut u64| {
            let (name, _, size) = &probe.buffers[(lcg(seed) % probe.buffers.len() as u64) as usize];
            format!("{name}+{} 4", 4 * (lcg(seed) % (size / 4).max(1)))
        };
        // A variable the kernel writes (a register of thread 0 to watch: written many times).
        let written: Vec<String> = probe
            .program
            .insts
            .iter()
            .filter_map(|i| match i.operands.first() {
                Some(vdb::isa::Operand::Direct(d)) if i.op.family() == vdb::isa::Family::Alu => {
                    Some(probe.program.var(d.var).name.clone())
                }
                _ => None,
            })
            .collect();
        for case in 0..6 {
            let line = lines[(lcg(&mut seed) % lines.len() as u64) as usize];
            let var = &written[(lcg(&mut seed) % written.len() as u64) as usize];
            let setup: Vec<String> = match case {
                0 => vec![],
                1 => vec![format!("break {line}")],
                2 => vec![format!("watch {}", word(&mut seed))],
                3 => vec![format!("rwatch {}", word(&mut seed)), "ignore 1 1".into()],
                4 => vec![format!("awatch {}", word(&mut seed)), format!("watch {}", word(&mut seed))],
                _ => vec![format!("watch {var}(0,0)<1;1,0>")],
            };
            let (mut fast, mut each) = (session(&path), session(&path));
            each.window_recording = false;
            each.check_each_step = true;
            for s in [&mut fast, &mut each] {
                for line in &setup {
                    cmd(s, line);
                }
            }
            for round in 0..20 {
                let line = lines[(lcg(&mut seed) % lines.len() as u64) as usize];
                let command = match lcg(&mut seed) % 14 {
                    0 => format!("thread {}", lcg(&mut seed) % threads),
                    1 => format!("stepi {}", 1 + lcg(&mut seed) % 3000),
                    2 => format!("nexti {}", 1 + lcg(&mut seed) % 40),
                    3 => "until".to_string(),
                    4 => format!("until {line}"),
                    5 => format!("step {}", 1 + lcg(&mut seed) % 4),
                    6 => "next".to_string(),
                    7 => "finish".to_string(),
                    8 => format!("rstepi {}", 1 + lcg(&mut seed) % 3000),
                    9 => format!("rnexti {}", 1 + lcg(&mut seed) % 40),
                    10 => format!("rstep {}", 1 + lcg(&mut seed) % 4),
                    11 => "rnext".to_string(),
                    12 => "rfinish".to_string(),
                    _ => format!("goto {}", fast.now / 2),
                };
                let parsed = vdb::session::parse(&command).expect("parses").expect("a command");
                let before = fast.now;
                let (a, b) = (fast.execute(&parsed), each.execute(&parsed));
                let what = format!("{rel}: {setup:?}, round {round}: {command}");
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        let (sa, sb) =
                            (a.stop.unwrap_or(StopReason::Step), b.stop.unwrap_or(StopReason::Step));
                        stops += same_stop(&fast, &each, (&sa, &sb), &what);
                        assert_eq!(a.text, b.text, "{what}");
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
                    (a, b) => panic!("{what}: {a:?} against {b:?}"),
                }
                searched += fast.now.saturating_sub(before);
                compared += 1;
            }
        }
        // Back from the last thread's third step to the start: past its first step, the
        // latest of thread 0's writes to a watched register stops it (the register thread 0
        // writes most often).
        let mut run = session(&path);
        let (_, pcs) = crate::harness::thread_steps(&mut run, 0);
        let dst = |pc: &u32| match run.program.insts[*pc as usize].operands.first() {
            Some(vdb::isa::Operand::Direct(d))
                if run.program.insts[*pc as usize].op.family() == vdb::isa::Family::Alu =>
            {
                Some(run.program.var(d.var).name.clone())
            }
            _ => None,
        };
        let dsts: Vec<String> = pcs.iter().filter_map(dst).collect();
        let var =
            dsts.iter().max_by_key(|v| dsts.iter().filter(|w| w == v).count()).expect("a written variable");
        let (mut fast, mut each) = (session(&path), session(&path));
        each.window_recording = false;
        each.check_each_step = true;
        let last = format!("thread {}", threads - 1);
        let script =
            [last.clone(), "stepi 3".into(), "thread 0".into(), format!("watch {var}(0,0)<1;1,0>"), last];
        for s in [&mut fast, &mut each] {
            for line in &script {
                cmd(s, line);
            }
        }
        let (a, b) = (fast.reverse_step_focused(1 << 20), each.reverse_step_focused(1 << 20));
        stops += same_stop(&fast, &each, (&a, &b), &format!("{rel}: {script:?}, rstepi"));
    }
    assert!(compared == 6 * 6 * 20, "{compared}");
    assert!(stops >= 10, "only {stops} breakpoint or watchpoint stops compared");
    assert!(searched > 100_000, "only {searched} steps moved forward");
}

/// Once a `continue` with stops has gone `split_after` steps without one, it records the
/// rest of the run with the later work-groups shared out to other cores, each testing the
/// breakpoints' conditions as it records; it still stops where checking each step stops,
/// for stops that fall in the groups the other cores recorded, and the recording is the
/// one a single core makes.
#[test]
fn continue_on_several_cores_stops_where_checking_each_step_stops() {
    let path = crate::harness::launch("opencl/collatz/skl.launch.json");
    // First stops in the last of the 16 work-groups, which the other cores record (`$32`
    // stores the result, `$22` is in the loop), and one early: found in the first stretch,
    // with nothing recorded beyond.
    let cases: Vec<(Vec<String>, bool)> = vec![
        (vec!["break $32 if workitem == 1000".into()], true),
        (vec!["break $22 if workitem == 900".into(), "ignore 1 5".into()], true),
        (vec![format!("watch arg1+{} 4", 4 * 1020)], true),
        (vec![format!("watch arg1+{} 4 if == 0", 4 * 1000), "break $32 if workitem == 1023".into()], true),
        (vec!["break $22 if any(V0054 == 7)".into()], false),
    ];
    let mut stops = 0;
    for (setup, late) in &cases {
        let (mut fast, mut each) = (session(&path), session(&path));
        fast.cores = 2;
        fast.split_after = 1 << 13;
        each.window_recording = false;
        for s in [&mut fast, &mut each] {
            for line in setup {
                cmd(s, line);
            }
        }
        for round in 0..4 {
            let (a, b) = (fast.continue_forward(), each.continue_stepwise());
            stops += same_stop(&fast, &each, (&a, &b), &format!("{setup:?}, continue {round}"));
            if round == 0 {
                // A late stop with the rest of the run recorded; an early one without.
                let ahead = (fast.now > 100_000, fast.end.is_some());
                assert_eq!(ahead, (*late, *late), "{setup:?}: {a:?} at {}", fast.now);
            }
        }
        let (a, b) = (&fast.recorder.trace, &each.recorder.trace);
        let differ = (0..a.len().min(b.len())).find(|&i| a.get(i) != b.get(i));
        assert_eq!(differ, None, "{setup:?}: step records differ first at this step");
    }
    assert!(stops >= 6, "only {stops} stops compared");
}
