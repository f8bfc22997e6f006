//! Time travel: every path to a step gives the same state (forward, backward, goto,
//! checkpoint replay), reverse-continue finds the hit forward execution saw, and
//! last-write/history agree with a brute-force scan of the trace.

use vdb::launch::raw;
use vdb::session::{parse, Session, StopReason};

use crate::golden::hand_launches;
use crate::harness::{cmd as run, kernel_text, session};

/// The hand kernels and OpenCL launches with several threads meeting at barriers (a released
/// thread's next step follows its release in the same step's log), SLM, atomics and calls.
fn time_travel_launches() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels");
    let mut all = hand_launches();
    for multi in [
        "shared/k14_local_reduce/skl",
        "shared/k24_local_arg/tgllp",
        "shared/k29_calls/skl",
        "opencl/local_scan/acm-g10",
        "opencl/block_atomics/acm-g10",
        "opencl/divergence/tgllp",
        // Built with -g: a `loc` before each source line's instructions.
        "source-level/loop_call/skl",
    ] {
        all.push(root.join(format!("{multi}.launch.json")));
    }
    all
}

#[test]
fn forward_then_backward_gives_the_same_hash_at_every_step() {
    for path in time_travel_launches() {
        let mut s = session(&path);
        s.recorder.checkpoints.interval = 7; // many checkpoints, to exercise replay from them
        let mut hashes = vec![s.machine.state_hash()];
        while s.forward().is_some() {
            hashes.push(s.machine.state_hash());
        }
        assert!(hashes.len() > 10, "{}: only {} steps", path.display(), hashes.len());
        // The end is a checkpoint too: seeks near it undo from there.
        let end = s.recorder.checkpoints.list.last().expect("checkpoints");
        assert_eq!(end.time, s.recorder.len(), "{}", path.display());
        assert_eq!(end.machine().state_hash(), *hashes.last().expect("a hash"), "{}", path.display());
        for t in (0..hashes.len() - 1).rev() {
            s.backward().expect("step back");
            assert_eq!(s.machine.state_hash(), hashes[t], "{} step {t} backward", path.display());
        }
        assert!(s.backward().is_none());
        // Replaying the log forward passes through the same states.
        for (t, hash) in hashes.iter().enumerate().skip(1) {
            s.forward().expect("replay");
            assert_eq!(s.machine.state_hash(), *hash, "{} step {t} replayed", path.display());
        }
        // goto to scattered steps, from wherever we are, equals straight-line execution.
        let n = hashes.len() as u64;
        for k in 0..40u64 {
            let target = (k * 7919 + 13) % n;
            s.goto(target);
            assert_eq!(s.machine.state_hash(), hashes[target as usize], "{} goto {target}", path.display());
        }
    }
}

/// A seek that lands on a checkpoint leaves the threads and SVM pages of the steps next to
/// it unshared, so that the first reverse step from there copies nothing (before, that step
/// took 4.6–6 µs on the Collatz launch, and 5 µs for undoing a result store).
#[test]
fn a_seek_copies_out_what_the_next_steps_change() {
    use vdb::machine::{MemSpace, Shared};
    use vdb::trace::EntryKind;
    for path in time_travel_launches() {
        let name = path.display();
        let mut s = session(&path);
        s.run_to_end();
        let end = s.recorder.len();
        s.goto(0);
        // From step 0, the end checkpoint is nearest: the machine is cloned from it.
        s.goto(end);
        let checkpoint = s.recorder.checkpoints.list.last().expect("an end checkpoint").machine();
        let mut svm_written = false;
        for step in end.saturating_sub(2)..end {
            let thread = s.recorder.trace.at(step).thread as usize;
            let (Some(live), Some(kept)) = (s.machine.threads.get(thread), checkpoint.threads.get(thread))
            else {
                continue;
            };
            assert!(!Shared::ptr_eq(live, kept), "{name}: thread {thread} of step {step} still shared");
            svm_written |= s
                .recorder
                .trace
                .entries(step)
                .iter()
                .any(|e| matches!(e.kind, EntryKind::Mem { space: MemSpace::Svm, .. }));
        }
        if svm_written {
            assert!(s.machine.svm.pages_made_since(&checkpoint.svm) > 0, "{name}: SVM pages still shared");
        }
        // Copying changed nothing.
        assert_eq!(s.machine.state_hash(), checkpoint.state_hash(), "{name}");
        s.backward().expect("a step back");
    }
}

/// A run of several thousand steps spans several blocks of the step records' log offsets
/// (and many checkpoints): every step still undoes, redoes and seeks exactly.
#[test]
fn long_runs_travel_exactly_across_log_blocks() {
    let dir = crate::golden::scratch("long_loop");
    let body = "    mov (M1, 16) I(0,0)<1> 0x0:d\nLOOP:\n    add (M1, 16) I(0,0)<1> I(0,0)<1;1,0> 0x1:d\n    cmp.lt (M1, 16) P1 I(0,0)<1;1,0> 0x5dc:d\n    (P1) goto (M1, 16) LOOP";
    let decls = ".decl I v_type=G type=d num_elts=16 align=hword\n.decl P1 v_type=P num_elts=16";
    let path = dir.join("long.visaasm");
    std::fs::write(&path, crate::harness::kernel_text(decls, body, 16)).expect("write kernel");
    let mut s = Session::new(raw::from_kernel(&path).unwrap_or_else(|e| panic!("{e}")));
    let mut hashes = vec![s.machine.state_hash()];
    while s.forward().is_some() {
        hashes.push(s.machine.state_hash());
    }
    assert!(hashes.len() > 4096 + 300, "only {} steps", hashes.len());
    for t in (0..hashes.len() - 1).rev() {
        s.backward().expect("step back");
        assert_eq!(s.machine.state_hash(), hashes[t], "step {t} backward");
    }
    for (t, hash) in hashes.iter().enumerate().skip(1) {
        s.forward().expect("replay");
        assert_eq!(s.machine.state_hash(), *hash, "step {t} replayed");
    }
    let n = hashes.len() as u64;
    for k in 0..60u64 {
        let target = (k * 7919 + 4093) % n;
        s.goto(target);
        assert_eq!(s.machine.state_hash(), hashes[target as usize], "goto {target}");
    }
}

#[test]
fn reverse_continue_stops_at_the_write_forward_continue_saw() {
    let path = hand_launches().into_iter().find(|p| p.ends_with("loop_exit.launch.json")).expect("loop_exit");
    let mut s = session(&path);
    // Lane 9's output word (out + 36).
    run(&mut s, "watch out+36 4");
    let forward = run(&mut s, "continue");
    let Some(StopReason::Watchpoint(hit)) = forward.stop.clone() else {
        panic!("no watch hit: {:?}", forward.stop)
    };
    assert_eq!(hit.lanes, vec![9]);
    run(&mut s, "continue");
    let end = s.now;
    assert!(end > hit.step);
    let back = run(&mut s, "rcontinue");
    let Some(StopReason::Watchpoint(rhit)) = back.stop else { panic!("no reverse hit") };
    assert_eq!(rhit.step, hit.step);
    assert_eq!((rhit.old.clone(), rhit.new.clone()), (hit.old.clone(), hit.new.clone()));
    assert_eq!(s.now, hit.step, "reverse stops before the writing instruction");
}

#[test]
fn last_write_and_history_agree_with_a_scan_of_the_trace() {
    let path = hand_launches().into_iter().find(|p| p.ends_with("loop_exit.launch.json")).expect("loop_exit");
    let mut s = session(&path);
    run(&mut s, "continue");
    let reply = run(&mut s, "history R(0,5)<0;1,0>");
    let writes = reply.fields["writes"].as_array().expect("writes").clone();
    // Brute force: every step whose log writes the GRF bytes of R element 5.
    let unit = vdb::isa::UnitId(0);
    let r = s.program.var(s.program.var_id(unit, "R").expect("R"));
    let (lo, hi) = (r.offset + 20, r.offset + 24);
    let mut expected = Vec::new();
    for step in 0..s.total_steps() {
        for e in s.recorder.trace.entries(step) {
            if let vdb::trace::EntryKind::Grf { offset, xor } = e.kind {
                if offset < hi && lo < offset + xor.len() as u32 {
                    expected.push(step);
                    break;
                }
            }
        }
    }
    expected.reverse();
    let got: Vec<u64> = writes.iter().map(|w| w["step"].as_u64().expect("step")).collect();
    assert_eq!(got, expected);
    let last = run(&mut s, "last-write R(0,5)<0;1,0>");
    assert_eq!(last.fields["writer_step"].as_u64(), expected.first().copied());
    assert_eq!(last.fields["writer_lane"].as_u64(), Some(5));
}

/// The write index answers every register and predicate query with exactly the steps a scan
/// of the whole log finds: on a launch of 161,136 steps over 64 threads (many index segments,
/// threads interleaved in each), for dwords and predicates at random times, including lanes
/// that stop being written when they leave the loop.
#[test]
fn register_and_predicate_queries_find_what_a_scan_of_the_log_finds() {
    use std::collections::BTreeMap;
    use vdb::machine::ThreadId;
    use vdb::trace::EntryKind;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kernels/opencl/collatz/skl.launch.json");
    let mut s = session(&path);
    s.run_to_end();
    let total = s.total_steps();
    assert!(total > 100_000, "{total} steps");
    // One pass over the log: every step that wrote each GRF dword and each predicate.
    let mut dwords: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    let mut preds: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    for step in 0..total {
        for e in s.recorder.trace.entries(step) {
            match e.kind {
                EntryKind::Grf { offset, xor } => {
                    for dword in offset / 4..(offset + xor.len() as u32).div_ceil(4) {
                        let steps = dwords.entry((e.thread, dword * 4)).or_default();
                        if steps.last() != Some(&step) {
                            steps.push(step);
                        }
                    }
                }
                EntryKind::Pred { pred, .. } => preds.entry((e.thread, pred)).or_default().push(step),
                _ => {}
            }
        }
    }
    let (written, flags): (Vec<_>, Vec<_>) =
        (dwords.keys().copied().collect(), preds.keys().copied().collect());
    assert!(written.len() > 1000 && !flags.is_empty());
    let mut seed = 0x5eed_u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let grf = s.program.grf_bytes;
    for _ in 0..30 {
        let now = next(total + 1);
        s.goto(now);
        let before =
            |steps: &Vec<u64>| -> Vec<u64> { steps.iter().rev().copied().filter(|&t| t < now).collect() };
        for query in 0..40 {
            // Dwords that were written, and (one query in four) any dword of any thread.
            let (thread, offset) = if query % 4 == 3 {
                (next(s.machine.threads.len() as u64) as u32, next(grf as u64 / 4) as u32 * 4)
            } else {
                written[next(written.len() as u64) as usize]
            };
            let current =
                s.machine.thread(ThreadId(thread)).grf[offset as usize..offset as usize + 4].to_vec();
            let hits = s.recorder.trace.grf_writes(thread, offset, 4, now, &current, usize::MAX);
            let got: Vec<u64> = hits.iter().map(|h| h.step).collect();
            let want = dwords.get(&(thread, offset)).map(before).unwrap_or_default();
            assert_eq!(got, want, "thread {thread} dword {offset} before step {now}");
            // Each hit's values chain back from the current ones.
            let mut value = current;
            for h in &hits {
                assert_eq!(h.new, value, "thread {thread} dword {offset} step {}", h.step);
                value = h.old.clone();
            }
        }
        for _ in 0..10 {
            let (thread, pred) = flags[next(flags.len() as u64) as usize];
            let current = s.machine.thread(ThreadId(thread)).preds[pred as usize];
            let hits = s.recorder.trace.pred_writes(thread, vdb::isa::PredId(pred), now, current, usize::MAX);
            let got: Vec<u64> = hits.iter().map(|h| h.step).collect();
            assert_eq!(got, before(&preds[&(thread, pred)]), "thread {thread} P{pred} before step {now}");
        }
    }
}

/// A write to a packed dword destination is logged as exactly the bytes of its enabled lanes:
/// no disabled lane between runs is claimed (that would make `last-write` name the wrong step).
#[test]
fn packed_writes_log_exactly_their_enabled_lanes() {
    use vdb::isa::{Opcode, Operand, Region};
    let mut gapped = 0;
    for path in time_travel_launches() {
        let mut s = session(&path);
        while s.forward().is_some() {}
        for step in 0..s.total_steps() {
            let rec = s.recorder.trace.at(step);
            let inst = &s.program.insts[rec.pc as usize];
            let Some(Operand::Direct(d)) = inst.operands.first() else { continue };
            // `sel` writes under the execution mask alone, not its channel enables.
            if d.region != Region::dst(1) || d.ty.size() != 4 || inst.op == Opcode::Sel || d.is_null {
                continue;
            }
            let n = inst.exec.size;
            let (lo, hi) = (d.base, d.base + 4 * n);
            let mut logged = 0u32;
            for e in s.recorder.trace.entries(step) {
                let vdb::trace::EntryKind::Grf { offset, xor } = e.kind else { continue };
                if e.thread != rec.thread || offset + xor.len() as u32 <= lo || offset >= hi {
                    continue;
                }
                assert!(offset >= lo && offset + xor.len() as u32 <= hi, "{} step {step}", path.display());
                assert!(offset % 4 == 0 && xor.len() % 4 == 0, "{} step {step}", path.display());
                for lane in (offset - lo) / 4..(offset - lo + xor.len() as u32) / 4 {
                    assert_eq!(
                        logged >> lane & 1,
                        0,
                        "{} step {step}: lane {lane} logged twice",
                        path.display()
                    );
                    logged |= 1 << lane;
                }
            }
            assert_eq!(logged, rec.chen, "{} step {step} (pc {}): logged lanes", path.display(), rec.pc);
            // Enabled lanes in more than one run (a gap of disabled lanes between them).
            let runs = rec.chen >> rec.chen.trailing_zeros().min(31);
            if rec.chen != 0 && runs & (runs + 1) != 0 {
                gapped += 1;
            }
        }
    }
    assert!(gapped > 10, "only {gapped} writes with disabled lanes between enabled ones");
}

#[test]
fn odd_command_lines_give_errors_not_panics() {
    let path = hand_launches().into_iter().find(|p| p.ends_with("indirect.launch.json")).expect("indirect");
    let mut s = session(&path);
    let lines = [
        "x/4294967295xg 0",
        "x/4xg 0xffffffffffffffff",
        "print R(",
        "print R(0,99)<1;1,0>",
        "print R(0,0)<3;1,0>",
        "print R:zz",
        "print R(0,0)<32;16,4>",
        "watch 0xffffffffffffffff 18446744073709551615",
        "watch R(0,0)<1;1,0> lane 99",
        "rwatch R(0,0)<1;1,0>",
        "last-write nowhere+3",
        "history R(9,9)<0;1,0>",
        "lane 999",
        "thread 99999",
        "break $99999",
        "break nowhere",
        "break 3 if any(R(0,0)<1;1,0> ~ 3)",
        "goto nomark",
        "delete 42",
        "enable 42",
        "finish",
    ];
    for line in lines {
        match parse(line) {
            Ok(Some(cmd)) => {
                let _ = s.execute(&cmd);
            }
            Ok(None) => panic!("{line} parsed as nothing"),
            Err(_) => {}
        }
    }
    // Still a working session afterwards.
    let reply = run(&mut s, "goto 18446744073709551615");
    assert_eq!(reply.stop, Some(StopReason::End));
    let back = run(&mut s, "rstep");
    assert_eq!(back.stop, Some(StopReason::Step));
}

#[test]
fn a_progress_callback_sees_long_runs_and_can_interrupt_them() {
    let mut s = Session::new(
        raw::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("sample-kernels/opencl/collatz/skl.launch.json"),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    );
    let calls = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let seen = calls.clone();
    s.progress = Some(Box::new(move |_, _| {
        seen.set(seen.get() + 1);
        seen.get() >= 3
    }));
    let stop = run(&mut s, "continue").stop;
    assert_eq!(stop, Some(StopReason::Interrupted));
    assert_eq!(calls.get(), 3);
    let reached = s.now;
    assert!(reached > 0);
    // What was recorded stays: go back and forth within it.
    run(&mut s, "goto 10");
    run(&mut s, &format!("goto {reached}"));
    assert_eq!(s.now, reached);
}

#[test]
fn mask_history_shows_the_goto_that_split_the_lanes() {
    let path =
        hand_launches().into_iter().find(|p| p.ends_with("divergent_if.launch.json")).expect("divergent_if");
    let mut s = session(&path);
    run(&mut s, "step 12");
    let hist = s.mask_history(s.focus, 64, 1000);
    assert_eq!(hist.len(), 12);
    let split = hist.iter().position(|h| h.goto).expect("a goto");
    // Full mask up to and including the goto, fewer lanes right after it.
    assert_eq!(hist[split].em, 0xffff);
    assert!(hist[split + 1].em != 0xffff && hist[split + 1].em != 0);
}

#[test]
fn last_write_names_the_lane_from_the_addresses_at_the_writing_step() {
    let dir = crate::golden::scratch("writer-lane");
    let kernel = ".version 4.1
.kernel \"w\"
.decl ADDR v_type=G type=uq num_elts=8 align=GRF
.decl OFF v_type=G type=uq num_elts=8 align=GRF
.decl L v_type=G type=uw num_elts=8 align=GRF
.decl D v_type=G type=ud num_elts=8 align=GRF
.kernel_attr SimdSize=8
.function \"_main_0\"

_main_0:
    mov (M1, 8) L(0,0)<1> 0x76543210:uv
    mov (M1, 8) D(0,0)<1> L(0,0)<1;1,0>
    shl (M1, 8) OFF(0,0)<1> L(0,0)<1;1,0> 0x2:uw
    add (M1, 8) ADDR(0,0)<1> OFF(0,0)<1;1,0> 0x300000000:uq
    svm_scatter.4.1 (M1, 8) ADDR.0 D.0
    add (M1, 8) ADDR(0,0)<1> (-)OFF(0,0)<1;1,0> 0x30000001c:uq
    ret (M1, 1)
";
    std::fs::write(dir.join("w.visaasm"), kernel).expect("kernel");
    std::fs::write(
        dir.join("l.json"),
        r#"{"kernel": "w.visaasm", "svm": [{"name": "out", "address": "0x300000000", "size": 32}]}"#,
    )
    .expect("launch");
    let mut s = session(&dir.join("l.json"));
    run(&mut s, "continue");
    // ADDR now holds the reversed addresses; the writer of out+12 is still lane 3.
    let reply = run(&mut s, "last-write out+12 4");
    assert_eq!(reply.fields["writer_lane"].as_u64(), Some(3));
    let hist = run(&mut s, "history out+12 4");
    assert_eq!(hist.fields["writes"][0]["lanes"], serde_json::json!([3]));
}

/// Steps `[a0, a0 + len)` of `a` and `[b0, b0 + len)` of `b` are the same steps: records,
/// log entries, and the control changes their entries name (each part numbers those in its
/// own table).
pub(crate) fn assert_same_steps(
    name: &str,
    a: &vdb::trace::Trace,
    a0: u64,
    b: &vdb::trace::Trace,
    b0: u64,
    len: u64,
) {
    let differ = (0..len).find(|&i| a.get(a0 + i) != b.get(b0 + i));
    assert_eq!(differ, None, "{name}: step records differ first at this step (from {a0})");
    for i in 0..len {
        let (sa, sb) = (a0 + i, b0 + i);
        let (ea, eb) = (a.entries(sa), b.entries(sb));
        assert_eq!(ea.len(), eb.len(), "{name}: entries of step {sa}");
        for (x, y) in ea.iter().zip(&eb) {
            match (&x.kind, &y.kind) {
                (
                    vdb::trace::EntryKind::Control { index: i },
                    vdb::trace::EntryKind::Control { index: j },
                ) => {
                    assert_eq!(x.thread, y.thread, "{name}: step {sa}");
                    let (ca, cb) = (a.control_change(sa, *i), b.control_change(sb, *j));
                    assert!(ca.is_some() && ca == cb, "{name}: control change of step {sa}");
                }
                _ => assert_eq!(x, y, "{name}: entries of step {sa}"),
            }
        }
    }
}

/// Recording in burst windows (what `continue` does at the frontier) makes the recording that
/// single steps make: the same step records, log entries, control changes and write index,
/// the same end, and every step reached by `goto` has the same state; each stretch between
/// checkpoints, recorded again from its checkpoint (on whichever core it was recorded, its
/// machine rebased), makes the same steps again. On every sample launch.
#[test]
fn burst_windows_record_what_single_steps_record() {
    let mut all = hand_launches();
    all.extend(crate::opencl::launches("opencl"));
    all.extend(crate::opencl::launches("shared"));
    // A fault inside a window: with half the output buffer, a scatter of group 8 faults.
    let faulting = crate::golden::half_output_collatz("window_fault");
    all.push(faulting.clone());
    let mut windowed_steps = 0u64;
    // Launches recorded in two parts. (Which are depends on how far this core got before
    // another took a chunk; refused chunks are `Order`'s unit tests.)
    let mut split_launches = 0;
    for path in all {
        let name = path.display().to_string();
        let mut single = session(&path);
        single.window_recording = false;
        // Every step's log kept as it is recorded: the reference.
        single.lean_recording = false;
        // Several windows per group, and checkpoints inside groups.
        single.recorder.checkpoints.interval = 64;
        let stop = single.run_to_end();
        assert_eq!(single.window_steps, 0);
        let final_state = single.machine.state_hash();
        // Lean (the index only, each part recorded again when read) on this core and with
        // the later work-groups recorded on other cores (when nothing stops that); every
        // step's log appended on a second core while the next window runs.
        let mut window_checkpoints = None;
        for (cores, split, lean) in [(1, false, true), (2, false, false), (2, true, true), (4, true, true)] {
            let name = format!("{name} (cores: {cores}, groups split: {split}, lean: {lean})");
            let mut windows = session(&path);
            windows.lean_recording = lean;
            windows.cores = cores;
            windows.split_groups = split;
            windows.recorder.checkpoints.interval = 64;
            assert_eq!(windows.run_to_end(), stop, "{name}: stop");
            assert_eq!(windows.end, single.end, "{name}: end");
            if path == faulting {
                assert!(matches!(stop, StopReason::Fault { .. }), "{name}: {stop:?}");
                assert!(windows.window_steps > 0, "{name}: no window ran before the fault");
            }
            let (a, b) = (&single.recorder.trace, &windows.recorder.trace);
            assert_eq!(a.len(), b.len(), "{name}: steps");
            assert_same_steps(&name, a, 0, b, 0, a.len());
            // Each stretch between checkpoints, recorded again from its checkpoint, is the
            // same stretch.
            let checkpoints = &windows.recorder.checkpoints.list;
            for (k, ck) in checkpoints.iter().enumerate() {
                let again = windows.rerecord_stretch(k).unwrap_or_else(|| panic!("{name}: stretch {k}"));
                let end = checkpoints.get(k + 1).map_or(b.len(), |c| c.time);
                assert_eq!(again.len(), end - ck.time, "{name}: stretch {k}");
                // Recorded again for its log alone: the recording it came from indexes it.
                assert_eq!(again.trace.bytes_by_part().index, 0, "{name}: stretch {k} indexed again");
                assert_same_steps(
                    &format!("{name}, stretch {k}"),
                    a,
                    ck.time,
                    &again.trace,
                    0,
                    end - ck.time,
                );
            }
            assert!(windows.rerecord_stretch(checkpoints.len()).is_none());
            // Windows index a stage's writes in every segment piece its steps span: a
            // superset of what single steps index, which also names every write.
            assert_eq!(b.write_not_indexed(), None, "{name}: write index");
            assert_eq!(a.write_not_indexed(), None, "{name}: write index of single steps");
            assert_eq!((&a.first_step, &a.last_step), (&b.first_step, &b.last_step), "{name}: thread spans");
            // The same log and control table.
            let without_steps =
                |t: &vdb::trace::Trace| vdb::trace::RecordedBytes { index: 0, steps: 0, ..t.bytes_by_part() };
            assert_eq!(without_steps(a), without_steps(b), "{name}: trace bytes");
            // Windows end where a checkpoint is due (at most a round later), on either core.
            // Joined after the second core's recording, checkpoints are as far apart or less.
            let times: Vec<u64> = windows.recorder.checkpoints.list.iter().map(|c| c.time).collect();
            let expected = window_checkpoints.get_or_insert_with(|| times.clone());
            // Checkpoints restart at a joined chunk's start.
            let joined = split && *expected != times;
            // Step records no larger (a window's name no thread each: its layout names them)
            // but for a block of log offsets (8 bytes) that each part may start where the
            // other recording's parts (cut at its own checkpoints) do not. Not where chunks
            // joined: every later part is then cut elsewhere, and a part's pc and channel
            // columns are 4 bytes a step wherever one of its steps needs more than 16 bits
            // (SIMD32 upper lanes), so the same steps may take 2 bytes more each.
            let records = |t: &vdb::trace::Trace| t.bytes_by_part().steps - t.layout_bytes();
            let extra = 8 * b.parts() as u64;
            assert!(
                joined || records(b) <= records(a) + extra,
                "{name}: step bytes {} against {} + {extra}",
                records(b),
                records(a)
            );
            if joined {
                split_launches += 1;
                let gap = |t: &[u64]| t.windows(2).map(|w| w[1] - w[0]).max();
                assert!(gap(&times) <= gap(expected), "{name}: checkpoints {times:?}");
                assert_eq!((times.first(), times.last()), (expected.first(), expected.last()), "{name}");
            } else {
                assert_eq!(*expected, times, "{name}: checkpoints");
            }
            assert_eq!(windows.machine.state_hash(), final_state, "{name}: final state");
            windowed_steps += windows.window_steps;
            let n = a.len() + 1;
            // Across the seams of parts (each starts at a checkpoint): where chunks from other
            // cores were joined (after a part cut short) and a few others; and at steps spread
            // over the run.
            let starts: Vec<u64> = b.part_starts().collect();
            let interval = windows.recorder.checkpoints.interval;
            let joins = starts.windows(2).filter(|w| w[1] - w[0] < interval).map(|w| w[1]);
            let seams: Vec<u64> =
                b.part_starts().skip(1).take(3).chain(joins).flat_map(|s| [s - 3, s, s + 2, s - 1]).collect();
            for target in seams.into_iter().chain((0..8u64).map(|k| (k * 7919 + 13) % n)) {
                single.goto(target);
                windows.goto(target);
                assert_eq!(
                    windows.machine.state_hash(),
                    single.machine.state_hash(),
                    "{name}: goto {target}"
                );
            }
        }
    }
    assert!(windowed_steps > 200_000, "only {windowed_steps} steps recorded in windows");
    assert!(split_launches >= 5, "only {split_launches} launches recorded in two parts");
}

/// A recording that keeps no complete part's body (lean, as sessions record, and its parts
/// dropped again past the cache; each is recorded again from its checkpoint when read)
/// answers as one that keeps every step's log as it is recorded: the same step records, entries
/// and control changes, the same state at every goto and after reverse steps from the end,
/// whether the recording was made on one core or with later work-groups joined from others,
/// and again after the bodies read were dropped once more. It holds fewer bytes.
#[test]
fn a_recording_that_drops_its_parts_answers_as_one_that_keeps_them() {
    use vdb::trace::Cache;
    let mut all = hand_launches();
    all.extend(crate::opencl::launches("opencl"));
    let (mut dropped, mut joined) = (0, 0);
    for path in all {
        let mut kept = session(&path);
        kept.recorder.trace.cache = Cache::ALL;
        kept.recorder.checkpoints.interval = 64;
        kept.lean_recording = false;
        let stop = kept.run_to_end();
        let mut one_core = None;
        for cores in [1, 4] {
            let name = format!("{} (cores: {cores})", path.display());
            let mut s = session(&path);
            s.cores = cores;
            s.recorder.trace.cache = Cache { per_step: 0, floor: 0 };
            s.recorder.checkpoints.interval = 64;
            assert_eq!(s.run_to_end(), stop, "{name}: stop");
            assert_eq!(s.end, kept.end, "{name}: end");
            let (a, b) = (&kept.recorder.trace, &s.recorder.trace);
            assert_eq!(a.len(), b.len(), "{name}: steps");
            let logs = |t: &vdb::trace::Trace| t.bytes_by_part().log;
            let dropping = logs(b) < logs(a);
            if dropping {
                dropped += 1;
                // The trace's bytes (chunks joined from other cores bring checkpoints of their
                // own, so the whole recording's may not be fewer).
                assert!(b.bytes() < a.bytes(), "{name}: bytes");
            }
            // Work-groups recorded on other cores leave checkpoints where one core does not.
            let times: Vec<u64> = s.recorder.checkpoints.list.iter().map(|c| c.time).collect();
            joined += usize::from(*one_core.get_or_insert_with(|| times.clone()) != times);
            assert_same_steps(&name, a, 0, b, 0, a.len());
            assert_eq!(b.bytes(), b.bytes_by_part().total(), "{name}: bytes kept as parts are read again");
            s.recorder.trace.drop_bodies();
            let b = &s.recorder.trace;
            assert_eq!(b.bytes(), b.bytes_by_part().total(), "{name}: bytes kept as parts are dropped");
            if dropping {
                let info = run(&mut s, "info record");
                let held = info.fields["parts_held"].as_u64().expect("parts held");
                assert!(held < info.fields["parts"].as_u64().expect("parts"), "{name}: {}", info.text);
            }
            let n = a.len() + 1;
            for target in (0..12u64).map(|k| (k * 7919 + 13) % n).chain([n - 1, 0, n / 2]) {
                kept.goto(target);
                s.goto(target);
                assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "{name}: goto {target}");
            }
            s.recorder.trace.drop_bodies();
            kept.goto(n - 1);
            s.goto(n - 1);
            for k in 0..40 {
                let (x, y) = (run(&mut kept, "rstep"), run(&mut s, "rstep"));
                assert_eq!((x.stop, kept.now, kept.focus), (y.stop, s.now, s.focus), "{name}: rstep {k}");
                assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "{name}: rstep {k}");
            }
            // A goto just back over a part's start, its body dropped, records again only the
            // part it lands in (from that part's checkpoint, not from the current step across
            // the dropped part; and readying the steps around it only in that part).
            let starts: Vec<u64> = s.recorder.trace.part_starts().filter(|&b| b >= 8 && b + 8 < n).collect();
            for &b in starts.iter().take(6) {
                s.goto(b + 3);
                s.recorder.trace.drop_bodies();
                let before = s.recorder.trace.rebuilds();
                kept.goto(b - 3);
                s.goto(b - 3);
                assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "{name}: goto {}", b - 3);
                let again = s.recorder.trace.rebuilds() - before;
                assert!(again <= 1, "{name}: goto {} from {} recorded {again} parts again", b - 3, b + 3);
                s.recorder.trace.drop_bodies();
            }
            // Each command drops again what it recorded again, past the cache (here: every
            // complete part).
            let info = run(&mut s, "info record");
            assert_eq!(info.fields["parts_held"].as_u64(), Some(1), "{name}: {}", info.text);
        }
    }
    assert!(dropped >= 10, "bodies dropped on only {dropped} recordings");
    assert!(joined >= 3, "only {joined} recordings with work-groups from other cores");
}

/// A walk backward over a recording that dropped every part's body finds each part it steps
/// into read ahead on another thread, none recorded again where it is read, and is at every
/// step where a recording that keeps every body is.
#[test]
fn a_walk_backward_finds_each_dropped_part_read_ahead() {
    use vdb::trace::Cache;
    let mut all = hand_launches();
    all.extend(crate::opencl::launches("opencl").into_iter().step_by(3));
    let mut crossed_all = 0;
    for path in all {
        let name = path.display().to_string();
        let mut kept = session(&path);
        kept.recorder.trace.cache = Cache::ALL;
        kept.recorder.checkpoints.interval = 64;
        kept.lean_recording = false;
        kept.run_to_end();
        let mut s = session(&path);
        s.cores = 1;
        s.recorder.trace.cache = Cache { per_step: 0, floor: 0 };
        s.recorder.checkpoints.interval = 64;
        s.run_to_end();
        s.recorder.trace.drop_bodies();
        let end = s.total_steps();
        kept.goto(end);
        s.goto(end);
        let from = end.saturating_sub(900);
        // Parts the walk steps into (those starting at or after `from`, before the last).
        let starts: Vec<u64> = s.recorder.trace.part_starts().collect();
        let crossed = starts.iter().filter(|&&b| b > from && b < end).count() as u64;
        let (rebuilds, ahead) = (s.recorder.trace.rebuilds(), s.recorder.trace.taken_ahead());
        while s.now > from {
            kept.backward();
            s.backward();
            assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "{name}: back to {}", s.now);
        }
        let trace = &s.recorder.trace;
        let (rebuilt, taken) = (trace.rebuilds() - rebuilds, trace.taken_ahead() - ahead);
        assert_eq!((rebuilt, taken), (0, crossed), "{name}: parts recorded again, read ahead");
        crossed_all += crossed;
    }
    assert!(crossed_all >= 20, "walks stepped into only {crossed_all} parts");
}

/// SLM is addressed as `slm[G]+OFF` by `x`, `watch`, `rwatch`, `last-write` and `history`:
/// on slm_reduce (SIMD32, four work-groups, barriers), every write a scan of the log finds
/// stops `continue` in turn, `history` lists the same steps, and each writer's lane (a
/// thread channel: `(M5, 16)` scatters write channels 16 to 31) holds the value the SLM got.
#[test]
fn slm_is_examined_watched_and_queried_like_svm() {
    use vdb::isa::{InstIdx, Operand};
    use vdb::machine::{MemSpace, ThreadId};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels");
    let mut s = session(&root.join("opencl/slm_reduce/skl.launch.json"));
    s.run_to_end();
    let (group, off) = (1u32, 0x48u64);
    let writes: Vec<u64> = (0..s.total_steps())
        .filter(|&t| {
            s.recorder.trace.entries(t).iter().any(|e| {
                matches!(e.kind, vdb::trace::EntryKind::Mem { space: MemSpace::Slm(g), addr, ref xor }
                    if g == group && addr < off + 4 && off < addr + xor.len() as u64)
            })
        })
        .collect();
    assert!(writes.len() >= 2, "{writes:?}");
    let history = run(&mut s, &format!("history slm{group}+{off:#x} 4"));
    let listed = crate::harness::numbers(&history.fields["writes"], "step");
    assert_eq!(listed, writes.iter().rev().copied().collect::<Vec<_>>());

    run(&mut s, "run");
    run(&mut s, &format!("watch slm{group}+{off:#x} 4"));
    for &w in &writes {
        let Some(StopReason::Watchpoint(hit)) = run(&mut s, "continue").stop else {
            panic!("no stop for step {w}")
        };
        assert_eq!((hit.step, s.now), (w, w + 1));
        // The reported channel's data element is what the SLM dword now holds.
        let inst = s.program.inst(InstIdx(s.recorder.trace.at(w).pc));
        let Some(Operand::Raw(data)) = inst.operands.get(3) else { panic!("{inst:?}") };
        assert_eq!(hit.lanes.len(), 1, "{hit:?}");
        let lane = hit.lanes[0] - inst.exec.offset;
        let thread = s.machine.thread(ThreadId(hit.thread));
        let at = (data.base + lane * 4) as usize;
        let mut slm = [0u8; 4];
        s.read_memory(MemSpace::Slm(group), off, &mut slm).expect("slm");
        assert_eq!(thread.grf[at..at + 4], slm, "step {w}, lane {}", hit.lanes[0]);
        assert_eq!(thread.group, group);
        let x = run(&mut s, &format!("x/1xw slm{group}+{off:#x}"));
        assert_eq!(x.fields["value"][0], format!("{:#010x}", u32::from_le_bytes(slm)));
    }
    assert!(writes.iter().any(|&w| s.program.inst(InstIdx(s.recorder.trace.at(w).pc)).exec.offset == 16));
    assert_eq!(run(&mut s, "continue").stop, Some(StopReason::End));
    // Reads: as many stops as steps of a run from the start read it (the log keeps no reads:
    // the debugger finds them by running a step again).
    let reads = {
        let (start, sched) = s.start_state();
        let (mut machine, mut sched) = (start.clone(), sched.clone());
        // Steps that read the dword of the group's SLM at `off`.
        let mut seen = crate::harness::MemReads::default();
        let mut count = 0;
        while let Ok(vdb::exec::Pick::Step(tid)) = sched.pick(&mut machine, &mut seen) {
            seen.0.clear();
            let _ = s.interp.step(&mut machine, tid, &mut seen);
            sched.steps += 1;
            let hit = |&(space, addr, len): &(MemSpace, u64, u64)| {
                space == MemSpace::Slm(group) && addr < off + 4 && off < addr + len
            };
            count += usize::from(seen.0.iter().any(hit));
        }
        count
    };
    run(&mut s, "delete");
    run(&mut s, "run");
    run(&mut s, &format!("rwatch slm{group}+{off:#x} 4"));
    let mut stops = 0;
    while let Some(StopReason::Watchpoint(hit)) = run(&mut s, "continue").stop {
        stops += 1;
        // Each read names its lane, a read just after a barrier too (the thread is released
        // with that step; running it again on a copy must release it as well).
        assert_eq!(hit.lanes.len(), 1, "{hit:?}");
    }
    assert_eq!((stops, reads > 0), (reads, true));
    // Without a group, `slm` is the focused thread's.
    run(&mut s, "thread 0");
    assert_eq!(run(&mut s, "x/2xw slm+8").fields["space"], "slm0");
    for bad in ["watch slm9+0", "x/4xw slm+0x100000", "x slm-4"] {
        let cmd = parse(bad).expect("parses").expect("a command");
        assert!(s.execute(&cmd).is_err(), "{bad}");
    }
}

/// A step just after a barrier release runs again, for its lanes, with the thread released:
/// on local_scan every `rwatch` stop on SLM names the reading lane (a gather right after a
/// barrier named none).
#[test]
fn reads_just_after_a_barrier_name_their_lane() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels");
    let mut s = session(&root.join("opencl/local_scan/skl.launch.json"));
    run(&mut s, "rwatch slm0+0 4");
    let mut after_barrier = 0;
    while let Some(StopReason::Watchpoint(hit)) = run(&mut s, "continue").stop {
        assert_eq!(hit.lanes.len(), 1, "{hit:?}");
        // The step before the reading thread's previous one was its barrier.
        let previous = (0..hit.step).rev().find(|&t| s.recorder.trace.thread(t) == hit.thread);
        let pc = previous.map(|t| s.recorder.trace.at(t).pc);
        if pc.is_some_and(|pc| s.program.inst(vdb::isa::InstIdx(pc)).op == vdb::isa::Opcode::Barrier) {
            after_barrier += 1;
        }
    }
    assert!(after_barrier > 0, "some read follows a barrier");
}

/// A recording keeps its full speed to the edge of its budget: with a budget 10% above what
/// the run needs, nearly every step is still recorded in burst windows (on one core and on
/// two or three sharing the budget), not one at a time; lean or keeping every step's log.
#[test]
fn recording_keeps_its_windows_up_to_the_budget() {
    let path = crate::harness::launch("opencl/collatz/skl.launch.json");
    for (cores, lean) in [(1, false), (2, false), (1, true), (2, true), (3, true)] {
        let mut whole = session(&path);
        (whole.cores, whole.lean_recording) = (cores, lean);
        assert!(matches!(whole.run_to_end(), StopReason::End));
        let needed = whole.recorder.recorded_bytes();
        let mut s = session(&path);
        (s.cores, s.lean_recording) = (cores, lean);
        s.record_limit = needed + needed / 10;
        assert!(matches!(s.run_to_end(), StopReason::End), "cores: {cores}, lean: {lean}");
        let total = s.total_steps();
        assert!(
            s.window_steps * 100 >= total * 95,
            "cores {cores}, lean: {lean}: {} of {total} steps in windows",
            s.window_steps
        );
    }
}

/// `set log-cache` changes what the recording keeps, as the next command ends: a byte keeps
/// only the last part, `all` keeps every part once read, `default` goes back to the session's
/// cache; the state at a step is the same whatever is kept.
#[test]
fn set_log_cache_keeps_what_it_says() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels/opencl/matmul/skl.launch.json");
    let mut s = session(&path);
    s.recorder.checkpoints.interval = 256;
    let mut kept = session(&path);
    kept.recorder.trace.cache = vdb::trace::Cache::ALL;
    kept.recorder.checkpoints.interval = 256;
    // Kept as recorded, not lean.
    kept.lean_recording = false;
    assert_eq!(s.run_to_end(), kept.run_to_end());
    let held = |s: &mut Session| {
        let info = run(s, "info record");
        let f = |k: &str| info.fields[k].as_u64().unwrap_or_else(|| panic!("{k}: {}", info.text));
        (f("parts_held"), f("parts"), info.fields["log_cache_bytes"].clone())
    };
    let (all_held, parts, _) = held(&mut kept);
    assert!(parts > 8 && all_held == parts, "{all_held} of {parts}");
    let reply = run(&mut s, "set log-cache 1");
    assert_eq!(reply.fields["log_cache_bytes"], serde_json::json!(1), "{}", reply.text);
    // The last part, if held: a lean recording's is only once read.
    let (last, total, cache) = held(&mut s);
    assert_eq!((total, cache), (parts, serde_json::json!(1)));
    assert!(last <= 1, "{last} parts held");
    let n = s.recorder.len();
    for target in [n / 3, n / 2, 1] {
        run(&mut s, &format!("goto {target}"));
        kept.goto(target);
        assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "goto {target}");
        // The command ends with the last part alone held, if that.
        assert_eq!(held(&mut s).0, last, "after goto {target}");
    }
    run(&mut s, "set log-cache all");
    for (k, target) in [n / 3, n / 2, 1].into_iter().enumerate() {
        run(&mut s, &format!("goto {target}"));
        kept.goto(target);
        assert_eq!(s.machine.state_hash(), kept.machine.state_hash(), "goto {target}");
        let (h, _, cache) = held(&mut s);
        assert_eq!((h, cache), (k as u64 + 1 + last, serde_json::Value::Null), "after goto {target}");
    }
    run(&mut s, "set log-cache default");
    assert_eq!(s.recorder.trace.cache, vdb::session::LOG_CACHE);
}

/// A lean recording shares work-groups that update the same words only by atomics that
/// fold (the histogram benchmark at two passes: 64 groups adding into the same bins, taking
/// the maximum, minimum and xor of the same words): the other cores' chunks join, their
/// updates laid onto the earlier groups' values at every checkpoint. Every step then has the
/// state of one core's recording that keeps its log, and the run ends with the same memory.
#[test]
fn lean_recordings_share_groups_whose_atomics_fold() {
    let path = crate::opencl::small_histogram();
    let mut one = session(&path);
    (one.cores, one.lean_recording) = (1, false);
    let stop = one.run_to_end();
    assert!(matches!(stop, StopReason::End), "{stop:?}");
    let end = one.recorder.len();
    let times = |s: &Session| s.recorder.checkpoints.list.iter().map(|c| c.time).collect::<Vec<u64>>();
    let mut joined = 0;
    for cores in [2, 3] {
        let mut s = session(&path);
        s.cores = cores;
        assert_eq!(s.run_to_end(), stop, "cores: {cores}");
        one.goto(end);
        assert_eq!(s.machine.state_hash(), one.machine.state_hash(), "cores: {cores}: the end");
        assert_eq!(s.recorder.len(), end, "cores: {cores}");
        // Checkpoints restart where a chunk from another core joined.
        joined += usize::from(times(&s) != times(&one));
        let seams: Vec<u64> =
            s.recorder.trace.part_starts().skip(1).step_by(5).flat_map(|p| [p - 1, p]).collect();
        for target in seams.into_iter().chain((0..10u64).map(|k| (k * 7919 + 13) % (end + 1))) {
            s.goto(target);
            one.goto(target);
            assert_eq!(s.machine.state_hash(), one.machine.state_hash(), "cores: {cores}: goto {target}");
        }
    }
    assert!(joined > 0, "no chunk joined");
}

/// Stepping the focused thread searches only its span of the recording: after `continue` to
/// the end of a lean recording of Collatz (64 threads one after another), `rstep` and `step`
/// on thread 0, whose steps all lie in the first few parts, record again only the parts they
/// land in, not every part between the end and there; they reach the steps a recording that
/// keeps its log reaches.
#[test]
fn stepping_a_thread_reads_only_its_span_of_a_lean_recording() {
    let path = crate::harness::launch("opencl/collatz/skl.launch.json");
    let mut lean = session(&path);
    let mut kept = session(&path);
    kept.lean_recording = false;
    for s in [&mut lean, &mut kept] {
        assert!(matches!(s.run_to_end(), StopReason::End));
    }
    let held = |s: &mut Session| run(s, "info record").fields["parts_held"].as_u64().expect("parts held");
    let parts = run(&mut lean, "info record").fields["parts"].as_u64().expect("parts");
    assert!(parts > 20, "{parts} parts");
    let before = held(&mut lean);
    for line in ["rstep", "rstep", "step"] {
        let (a, b) = (run(&mut lean, line), run(&mut kept, line));
        assert_eq!((a.stop, lean.now, lean.focus), (b.stop, kept.now, kept.focus), "{line}");
        assert_eq!(lean.machine.state_hash(), kept.machine.state_hash(), "{line}");
    }
    let after = held(&mut lean);
    assert!(after <= before + 2, "{before} parts held before, {after} after, of {parts}");
}

/// A range inserted into an instruction set holds what inserting its instructions one by one
/// holds: random ranges (empty, inside a word, across words, on word edges) into sets that
/// already hold some instructions.
#[test]
fn an_inserted_range_of_instructions_is_its_instructions() {
    use vdb::exec::PcSet;
    let mut seed = 29;
    for _ in 0..2000 {
        let mut rnd = |n: u64| (crate::harness::lcg(&mut seed) % n) as u32;
        let before: Vec<u32> = (0..rnd(4)).map(|_| rnd(300)).collect();
        let first = if rnd(4) == 0 { 64 * rnd(4) } else { rnd(260) };
        let end = match rnd(4) {
            0 => first,
            1 => (first / 64 + 1 + rnd(2)) * 64,
            _ => first + rnd(140),
        };
        let mut ranged = PcSet::new(before.iter().copied());
        ranged.insert_range(first, end);
        let one_by_one = PcSet::new(before.iter().copied().chain(first..end));
        for pc in 0..500 {
            assert_eq!(ranged.contains(pc), one_by_one.contains(pc), "{before:?} + {first}..{end}: pc {pc}");
        }
    }
}

/// A search for the steps at given instructions (breakpoints behind, `rcontinue`) reads only
/// the parts whose steps ran one: on every sample launch, recorded lean with every part
/// dropped, the steps at each of a few instructions are those a recording that keeps its log
/// holds (found there by their records, and by the same search), and no part is recorded
/// again but those that hold one (and the last).
#[test]
fn searching_for_instructions_reads_only_the_parts_that_ran_them() {
    use vdb::exec::PcSet;
    use vdb::trace::Cache;
    let mut all = hand_launches();
    all.extend(crate::opencl::launches("opencl"));
    let mut spared = 0;
    for path in all {
        let name = path.display().to_string();
        let mut lean = session(&path);
        let mut kept = session(&path);
        kept.lean_recording = false;
        for s in [&mut lean, &mut kept] {
            s.recorder.checkpoints.interval = 64;
            s.run_to_end();
        }
        let n = kept.recorder.len();
        let insts = lean.program.insts.len() as u32;
        for pc in [0, insts / 3, insts / 2, insts.saturating_sub(2)] {
            let pcs = PcSet::new([pc]);
            let trace = &mut lean.recorder.trace;
            trace.cache = Cache { per_step: 0, floor: 0 };
            trace.drop_bodies();
            let before = trace.parts_held();
            let found = trace.steps_at(&pcs, 0, n);
            // Every step at the instruction, from the kept log's records.
            let every: Vec<u64> = (0..n).filter(|&s| kept.recorder.trace.at(s).pc == pc).collect();
            assert_eq!(found, every, "{name}: pc {pc}");
            assert_eq!(kept.recorder.trace.steps_at(&pcs, 0, n), every, "{name}: pc {pc}");
            let starts: Vec<u64> = trace.part_starts().collect();
            let mut holding: Vec<usize> =
                found.iter().map(|&s| starts.partition_point(|&p| p <= s) - 1).collect();
            holding.dedup();
            let read = trace.parts_held();
            assert!(
                read <= before + holding.len(),
                "{name}: pc {pc}: {read} parts held, {before} before, {holding:?}"
            );
            spared += starts.len() - read;
        }
    }
    assert!(spared > 100, "only {spared} parts spared");
}

/// Every checkpoint holds the machine at its time, whether it is a key or a delta from one
/// (the threads changed since the key, as the units of their registers that differ): on a
/// launch of many work-groups (a lazy thread table, SLMs, atomics), recorded on one core and
/// on two (the second core's checkpoints rebased as they join), each checkpoint's machine is
/// the one a recording with no checkpoint but the first reaches by replaying its log there.
/// Most checkpoints are deltas.
#[test]
fn delta_checkpoints_hold_the_machine_at_their_time() {
    let path = crate::opencl::small_histogram();
    let mut reference = session(&path);
    (reference.cores, reference.lean_recording) = (1, false);
    reference.recorder.checkpoints.interval = u64::MAX / 4;
    assert!(matches!(reference.run_to_end(), StopReason::End));
    for cores in [1, 2] {
        let mut s = session(&path);
        s.cores = cores;
        s.recorder.checkpoints.interval = 512;
        assert!(matches!(s.run_to_end(), StopReason::End));
        let list = s.recorder.checkpoints.list.clone();
        let deltas = list.iter().filter(|c| !c.is_key()).count();
        assert!(
            list.len() > 20 && deltas * 2 > list.len(),
            "cores {cores}: {deltas} deltas of {}",
            list.len()
        );
        for ck in &list {
            reference.goto(ck.time);
            assert_eq!(
                ck.machine().state_hash(),
                reference.machine.state_hash(),
                "cores {cores}: the checkpoint at {} ({})",
                ck.time,
                if ck.is_key() { "key" } else { "delta" }
            );
        }
    }
}

/// Checkpoints between keys cost at most what keys cost, and much less where a thread's
/// registers change in a few places: one thread looping over a 4 KiB variable, adding to one
/// 64-byte row of it per pass (the next row every 64 passes) or to all of them, and two
/// OpenCL launches, each recorded with deltas and with keys only. Both recordings have their
/// checkpoints at the same times, holding the same machines.
#[test]
fn delta_checkpoints_cost_at_most_what_keys_cost() {
    let decls = ".decl V v_type=G type=ud num_elts=1024 align=hword\n.decl I v_type=G type=ud num_elts=1 align=hword\n.decl J v_type=G type=uw num_elts=1 align=hword\n.decl A0 v_type=A num_elts=1\n.decl P1 v_type=P num_elts=1";
    let one_row = "    mov (M1_NM, 1) I(0,0)<1> 0x0:ud\nLOOP:\n    shr (M1_NM, 1) J(0,0)<1> I(0,0)<0;1,0> 0x6:ud\n    and (M1_NM, 1) J(0,0)<1> J(0,0)<0;1,0> 0x3f:uw\n    shl (M1_NM, 1) J(0,0)<1> J(0,0)<0;1,0> 0x6:uw\n    addr_add (M1_NM, 1) A0(0)<1> &V J(0,0)<0;1,0>\n    add (M1, 16) r[A0(0),0]<1>:ud r[A0(0),0]<1;1,0>:ud 0x1:ud\n    add (M1_NM, 1) I(0,0)<1> I(0,0)<0;1,0> 0x1:ud\n    cmp.lt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x800:ud\n    (P1) jmp (M1_NM, 1) LOOP".to_string();
    let rows: String =
        (0..64).map(|r| format!("    add (M1, 16) V({r},0)<1> V({r},0)<1;1,0> 0x1:ud\n")).collect();
    let all_rows = format!(
        "    mov (M1_NM, 1) I(0,0)<1> 0x0:ud\nLOOP:\n{rows}    add (M1_NM, 1) I(0,0)<1> I(0,0)<0;1,0> 0x1:ud\n    cmp.lt (M1_NM, 1) P1 I(0,0)<0;1,0> 0x200:ud\n    (P1) jmp (M1_NM, 1) LOOP"
    );
    let on_text =
        |name: &str, body: &str| crate::harness::session_on_text(name, &kernel_text(decls, body, 16));
    for name in ["one row a pass", "every row a pass", "histogram", "collatz"] {
        let mut held = Vec::new();
        let mut machines = Vec::new();
        for deltas in [true, false] {
            let mut s = match name {
                "one row a pass" => on_text("delta_one_row", &one_row),
                "every row a pass" => on_text("delta_all_rows", &all_rows),
                "histogram" => session(&crate::opencl::small_histogram()),
                _ => session(&crate::harness::launch("opencl/collatz/skl.launch.json")),
            };
            s.cores = 1;
            s.recorder.checkpoints.interval = 256;
            s.recorder.checkpoints.deltas = deltas;
            assert!(matches!(s.run_to_end(), StopReason::End), "{name}");
            held.push(s.recorder.checkpoints.bytes());
            let list = &s.recorder.checkpoints.list;
            assert!(list.len() > 20, "{name}: {} checkpoints", list.len());
            machines.push(list.iter().map(|c| (c.time, c.machine().state_hash())).collect::<Vec<_>>());
        }
        assert_eq!(machines[0], machines[1], "{name}");
        let (with, keys) = (held[0], held[1]);
        assert!(with <= keys + keys / 20, "{name}: {with} bytes with deltas, {keys} with keys only");
        if name == "one row a pass" {
            assert!(with * 3 < keys, "{name}: {with} bytes with deltas, {keys} with keys only");
        }
    }
}
