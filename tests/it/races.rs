//! The race checker (`vdb::races`): the race-free sample kernels (reductions and scans with
//! barriers, histograms and counters with atomics, transposes, sub-group shuffles) report
//! no race and no read of uninitialised SLM on every target; the local max-reduction with its barriers left out reports its
//! SLM races, each with two accesses by different work-items of one work-group, one of them a
//! write, in one barrier interval, at steps the recording reaches with the same instructions.

use vdb::exec::Interpreter;
use vdb::races::{check_races, check_races_stepwise, Place, RaceKind};

use crate::harness::session;

fn check(path: &std::path::Path) -> vdb::races::RaceRun {
    let mut launch = vdb::launch::raw::load(path).unwrap_or_else(|e| panic!("{e}"));
    let interp = Interpreter::new(launch.program.clone());
    check_races(&interp, &mut launch.machine, &mut launch.scheduler)
}

#[test]
fn race_free_samples_report_nothing() {
    let mut checked = 0;
    for path in crate::opencl::launches("opencl").into_iter().chain(crate::opencl::launches("shared")) {
        let name = path.display().to_string();
        // `atomics` reads counters[4] plainly before its compare-exchange loop updates it
        // atomically: a real race (a benign one), reported as such.
        if name.contains("/atomics/") {
            let run = check(&path);
            assert!(
                run.races.iter().all(|r| r.first.atomic != r.second.atomic && r.place == Place::Global),
                "{name}: {:?}",
                run.races
            );
            assert!(!run.races.is_empty(), "{name}: the plain read of counters[4]");
            continue;
        }
        let run = check(&path);
        assert!(run.fault.is_none(), "{name}: {:?}", run.fault);
        assert!(run.races.is_empty(), "{name}: {:#?}", run.races);
        assert!(run.uninit.is_empty(), "{name}: {:#?}", run.uninit);
        checked += 1;
    }
    assert!(checked > 60, "only {checked} launches checked");
}

#[test]
fn a_reduction_without_barriers_reports_its_slm_races_at_recorded_steps() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kernels/races/max_reduce/skl.launch.json");
    let run = check(&path);
    assert!(!run.races.is_empty());
    let mut s = session(&path);
    for race in &run.races {
        assert!(matches!(race.place, Place::Slm(_)), "{race:?}");
        assert!(race.first.write || race.second.write);
        assert!(race.first.step <= race.second.step);
        let (a, b) = (race.first, race.second);
        assert!((a.thread, a.channel) != (b.thread, b.channel), "one work-item: {race:?}");
        // A thread's lanes race only within one instruction.
        assert!(a.thread != b.thread || a.step == b.step, "{race:?}");
        assert!(race.count >= 1);
        // The recording has the same steps: each access's step runs its instruction in its thread.
        for access in [a, b] {
            s.goto(access.step);
            let rec = s.recorder.trace.at(access.step);
            assert_eq!((rec.thread, rec.pc), (access.thread, access.pc), "{race:?}");
        }
    }
    // Every halving step reads what another work-item wrote without a barrier.
    assert!(run.races.iter().any(|r| r.kind == RaceKind::WriteRead));
}

/// Checking in bursts (the private instructions run ahead) finds the races, steps and
/// counts that checking step by step finds.
#[test]
fn bursts_find_what_single_steps_find() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kernels");
    let mut reported = 0;
    for path in [
        root.join("races/max_reduce/skl.launch.json"),
        root.join("opencl/atomics/skl.launch.json"),
        root.join("opencl/atomics/acm-g10.launch.json"),
        root.join("opencl/local_scan/tgllp.launch.json"),
        root.join("shared/k14_local_reduce/acm-g10.launch.json"),
    ] {
        let load = || vdb::launch::raw::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let (mut a, mut b) = (load(), load());
        let interp = Interpreter::new(a.program.clone());
        let bursts = check_races(&interp, &mut a.machine, &mut a.scheduler);
        let steps = check_races_stepwise(&interp, &mut b.machine, &mut b.scheduler);
        assert_eq!(bursts.races, steps.races, "{}", path.display());
        assert_eq!(bursts.steps, steps.steps, "{}", path.display());
        assert_eq!(a.machine.state_hash(), b.machine.state_hash(), "{}", path.display());
        reported += bursts.races.len();
    }
    assert!(reported >= 4, "only {reported} reports compared");
}

/// `races` in the debugger (and `vdb batch --json`): the reports of the check with both
/// accesses whole (step, thread, lane, work-item, instruction, read or write), and `goto`
/// takes the session to either access's step, where that thread runs that instruction next.
#[test]
fn the_debugger_lists_races_and_goes_to_either_access() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kernels/races/max_reduce/skl.launch.json");
    let mut s = session(&path);
    let reply = crate::harness::cmd(&mut s, "info races");
    let races = reply.fields["races"].as_array().expect("races").clone();
    assert!(!races.is_empty(), "{}", reply.text);
    assert!(reply.text.contains("race on SLM of work-group 0"), "{}", reply.text);
    for race in &races {
        assert_eq!(race["memory"], "slm");
        let accesses = race["accesses"].as_array().expect("accesses");
        assert_eq!(accesses.len(), 2);
        assert!(accesses.iter().any(|a| a["access"] == "write"), "{race}");
        for a in accesses {
            assert!(a["workitem"].is_string(), "{a}");
            let step = a["step"].as_u64().expect("step");
            crate::harness::cmd(&mut s, &format!("goto {step}"));
            let thread = a["thread"].as_u64().expect("thread") as usize;
            let pc = s.machine.threads[thread].control.pc;
            assert_eq!(s.program.inst_text(pc).trim(), a["instruction"].as_str().expect("text"), "{a}");
        }
    }
    // Asked again, the same reports (checked once).
    assert_eq!(crate::harness::cmd(&mut s, "races").fields["races"].as_array().expect("races"), &races);
}

/// Checks `body` (SIMD `simd`) for races on two threads of one work-group, thread i with `B`
/// holding address `addr(i)` of a 256-byte buffer and, where the kernel declares it, `X`
/// holding i (for code that differs by thread); both run to their end.
fn check_two_threads(decls: &str, body: &str, simd: u32, addr: impl Fn(u32) -> u64) -> vdb::races::RaceRun {
    use vdb::machine::{Machine, Shared, ThreadId, ThreadState};
    let program = std::sync::Arc::new(crate::harness::parse(&crate::harness::kernel_text(decls, body, simd)));
    let mut machine = Machine::default();
    machine.svm.map(0x1_0000_0000, 256, "buf");
    let var = |name: &str| program.var_id(vdb::isa::UnitId(0), name).map(|v| program.var(v).offset as usize);
    for i in 0..2u32 {
        let mut t = ThreadState::new(&program, simd, u32::MAX >> (32 - simd));
        t.index_in_group = i;
        let b = var("B").expect("B");
        t.grf[b..b + 8].copy_from_slice(&addr(i).to_le_bytes());
        if let Some(x) = var("X") {
            t.grf[x..x + 4].copy_from_slice(&i.to_le_bytes());
        }
        machine.threads.push(Shared::new(t));
    }
    machine.slms = vec![Shared::new(vdb::machine::Slm::new(64))].into();
    let interp = Interpreter::new(program.clone());
    let mut sched = vdb::exec::Scheduler::single_group(2);
    let run = check_races(&interp, &mut machine, &mut sched);
    assert!(run.fault.is_none(), "{:?}", run.fault);
    for t in 0..2 {
        assert_eq!(machine.thread(ThreadId(t)).control.status, vdb::machine::ThreadStatus::Done);
    }
    run
}

/// A block message names no lane: its dword k is lane k's (sub-group block writes). Two
/// threads of one work-group storing one block to the same address race dword by dword,
/// each access named with its lane; the same stores a barrier apart do not race.
#[test]
fn block_writes_race_per_lane() {
    let decls = ".decl B v_type=G type=uq num_elts=1 align=qword\n.decl S v_type=G type=ud num_elts=16 align=GRF\n.decl X v_type=G type=ud num_elts=8 align=GRF\n.decl P1 v_type=P num_elts=8";
    let run = |body: &str| check_two_threads(decls, body, 8, |_| 0x1_0000_0000);
    let racing = run("    svm_block_st (1) B(0,0)<0;1,0> S.0");
    assert_eq!(racing.races.len(), 1, "{:?}", racing.races);
    let race = &racing.races[0];
    assert_eq!((race.kind, race.place, race.count), (RaceKind::WriteWrite, Place::Global, 4));
    assert_eq!((race.first.thread, race.second.thread), (0, 1));
    assert_eq!((race.first.channel, race.second.channel), (0, 0));
    // Thread 0 stores before the barrier, thread 1 after it: ordered; without the barrier,
    // a race again.
    let body = "    cmp.eq (M1, 8) P1 X(0,0)<0;1,0> 0x0:ud
    (!P1) goto (M1, 1) AFTER
    svm_block_st (1) B(0,0)<0;1,0> S.0
AFTER:
    barrier
    (P1) goto (M1, 1) END
    svm_block_st (1) B(0,0)<0;1,0> S.0
END:";
    let apart = run(body);
    assert!(apart.races.is_empty(), "{:?}", apart.races);
    let unordered = run(&body.replace("    barrier\n", ""));
    assert_eq!(unordered.races.len(), 1, "{:?}", unordered.races);
}

/// Named barriers order a producer's accesses before its signal before a consumer's after its
/// wait, and their counts (kept in SLM) are no data. Each of two threads stores its word of
/// SLM and reads the other's: with both signalling and waiting, nothing races and nothing
/// reads unwritten SLM; without the barrier, the reads race with the stores (thread 0's read
/// comes first and reads SLM's starting zero); with thread 0 a consumer only (its signal
/// counts nothing) and thread 1 a producer, thread 0's read is ordered after thread 1's store
/// but thread 1's read of thread 0's store is not, whether thread 1 waits or not.
#[test]
fn named_barriers_order_their_producers_before_their_consumers() {
    use crate::threads::{nbar_machine, producer_consumer_body, NBAR_BODY};
    let run = |body: &str, types: [u8; 2]| {
        let (program, mut machine) = nbar_machine(body, 2, types);
        let interp = Interpreter::new(program);
        let mut sched = vdb::exec::Scheduler::single_group(2);
        let run = check_races(&interp, &mut machine, &mut sched);
        assert!(run.fault.is_none(), "{:?}", run.fault);
        run
    };
    let both = run(NBAR_BODY, [0, 0]);
    assert!(both.races.is_empty() && both.uninit.is_empty(), "{:?} {:?}", both.races, both.uninit);

    let unsynced =
        NBAR_BODY.replace("    nbarrier.signal 0x2:ub N(0,0)<0;1,0>\n    nbarrier.wait 0x2:ub\n", "");
    let none = run(&unsynced, [0, 0]);
    let mut kinds: Vec<_> = none.races.iter().map(|r| (r.kind, r.first.thread, r.second.thread)).collect();
    kinds.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(kinds, [(RaceKind::ReadWrite, 0, 1), (RaceKind::WriteRead, 0, 1)], "{:?}", none.races);
    assert_eq!(none.uninit.len(), 1, "{:?}", none.uninit);
    // Values of the racing byte: thread 0 read SLM's zero before thread 1 stored 300's low
    // byte, and thread 1 read the 1 thread 0 had stored.
    let value = |kind| none.races.iter().find(|r| r.kind == kind).map(|r| (r.first.value, r.second.value));
    assert_eq!(value(RaceKind::ReadWrite), Some((Some(0), Some(0x2c))));
    assert_eq!(value(RaceKind::WriteRead), Some((Some(1), Some(1))));

    let one_way = run(&producer_consumer_body(1), [2, 1]);
    assert_eq!(one_way.races.len(), 1, "{:?}", one_way.races);
    let race = &one_way.races[0];
    assert_eq!((race.kind, race.first.thread, race.second.thread), (RaceKind::WriteRead, 0, 1));
    assert!(one_way.uninit.is_empty(), "{:?}", one_way.uninit);
    // Thread 1 both produces and consumes, and waits: it learns no signal of thread 0's, which
    // only consumes, so its read of thread 0's store still races.
    let consumer_signal = run(&producer_consumer_body(2), [2, 0]);
    let races: Vec<_> =
        consumer_signal.races.iter().map(|r| (r.kind, r.first.thread, r.second.thread)).collect();
    assert_eq!(races, [(RaceKind::WriteRead, 0, 1)], "{:?}", consumer_signal.races);
}

/// A transposed LSC message's element k is lane k's (a sub-group block write): two threads
/// storing four dwords, thread 1 one dword above thread 0, race element against element,
/// each named with its own lane.
#[test]
fn transposed_lsc_stores_race_per_lane() {
    let decls =
        ".decl B v_type=G type=uq num_elts=1 align=qword\n.decl S v_type=G type=ud num_elts=16 align=GRF";
    let body = "    lsc_store.ugm (M1_NM, 1) flat[B]:a64 S:d32x4t";
    let run = check_two_threads(decls, body, 8, |i| 0x1_0000_0000 + 4 * u64::from(i));
    assert_eq!(run.races.len(), 1, "{:?}", run.races);
    let race = &run.races[0];
    // Three dwords overlap: thread 0's elements 1..3 with thread 1's 0..2.
    assert_eq!((race.kind, race.count), (RaceKind::WriteWrite, 3));
    assert_eq!((race.first.channel, race.second.channel), (1, 0));
}

/// An SVM block's elements are the type of its data variable (IGC declares a word block
/// read's as w, a byte one's as b): two threads storing one block of words, or of bytes, to
/// the same address race element by element, lane against the same lane.
#[test]
fn word_and_byte_block_writes_race_per_element() {
    for (ty, owords, elements) in [("uw", 2, 16u64), ("ub", 1, 16), ("ud", 2, 8)] {
        let decls = format!(
            ".decl B v_type=G type=uq num_elts=1 align=qword\n.decl S v_type=G type={ty} num_elts=16 align=GRF"
        );
        let body = format!("    svm_block_st ({owords}) B(0,0)<0;1,0> S.0");
        let run = check_two_threads(&decls, &body, 16, |_| 0x1_0000_0000);
        assert_eq!(run.races.len(), 1, "{ty}: {:?}", run.races);
        let race = &run.races[0];
        assert_eq!((race.kind, race.count), (RaceKind::WriteWrite, elements), "{ty}");
        assert_eq!((race.first.channel, race.second.channel), (0, 0), "{ty}");
    }
}
