//! Schedules (`--schedule rr|seq|chaos --seed N`): chaos runs are the same for the same seed,
//! kernels whose threads meet only at barriers and atomics give the same outputs under every
//! schedule, a kernel with its barriers left out gives the right answer only under
//! round-robin, and a recording under chaos travels back and forth exactly.

use vdb::exec::{run_to_end_unrecorded, Interpreter, Schedule};
use vdb::launch::raw::{self, OutputSource};

use crate::harness::{cmd, launch};

/// The output buffers of a sample launch run to the end under `schedule`, and its steps.
fn outputs(rel: &str, schedule: Schedule) -> (Vec<Vec<u8>>, u64) {
    let mut l = raw::load(&launch(rel)).expect("launch");
    l.scheduler.set_schedule(schedule);
    let interp = Interpreter::new(l.program.clone());
    run_to_end_unrecorded(&interp, &mut l.machine, &mut l.scheduler).expect("runs");
    let bytes = l
        .outputs
        .iter()
        .filter_map(|o| match o.source {
            OutputSource::Svm { address, size } => {
                let mut b = vec![0u8; size as usize];
                l.machine.svm.read(address, &mut b).expect("mapped");
                Some(b)
            }
            OutputSource::Register(_) => None,
        })
        .collect();
    (bytes, l.scheduler.steps)
}

#[test]
fn race_free_kernels_give_the_same_outputs_under_every_schedule() {
    for rel in [
        "opencl/slm_reduce/skl.launch.json",
        "opencl/local_scan/tgllp.launch.json",
        "opencl/transpose/acm-g10.launch.json",
        "shared/k14_local_reduce/skl.launch.json",
    ] {
        let (rr, _) = outputs(rel, Schedule::RoundRobin);
        let (seq, _) = outputs(rel, Schedule::Sequential);
        assert_eq!(seq, rr, "{rel}: sequential");
        for seed in 1..=6 {
            let (chaos, _) = outputs(rel, Schedule::Chaos { seed });
            assert_eq!(chaos, rr, "{rel}: chaos seed {seed}");
        }
    }
}

#[test]
fn chaos_is_the_same_for_the_same_seed_and_exposes_a_missing_barrier() {
    let rel = "races/max_reduce/skl.launch.json";
    let want = std::fs::read(launch("races/max_reduce/expected/out.bin")).expect("expected");
    let (rr, _) = outputs(rel, Schedule::RoundRobin);
    assert_eq!(rr[0], want, "round-robin hides the race");
    let (seq, _) = outputs(rel, Schedule::Sequential);
    assert_ne!(seq[0], want, "each thread running to its end reads stale values");
    let mut exposed = 0;
    for seed in 1..=8 {
        let a = outputs(rel, Schedule::Chaos { seed });
        assert_eq!(a, outputs(rel, Schedule::Chaos { seed }), "seed {seed} twice");
        exposed += usize::from(a.0[0] != want);
    }
    assert!(exposed > 0, "no chaos seed of 8 exposed the missing barriers");
}

#[test]
fn a_recording_under_chaos_travels_exactly() {
    let mut l = raw::load(&launch("races/max_reduce/skl.launch.json")).expect("launch");
    l.scheduler.set_schedule(Schedule::Chaos { seed: 3 });
    let mut s = vdb::session::Session::new(l);
    cmd(&mut s, "continue");
    let end = s.now;
    let at_end = cmd(&mut s, "state-hash").text;
    let mut hashes = Vec::new();
    for step in (0..end).step_by((end as usize / 7).max(1)) {
        cmd(&mut s, &format!("goto {step}"));
        hashes.push((step, cmd(&mut s, "state-hash").text));
    }
    cmd(&mut s, &format!("goto {end}"));
    assert_eq!(cmd(&mut s, "state-hash").text, at_end);
    for (step, h) in hashes.into_iter().rev() {
        cmd(&mut s, &format!("goto {step}"));
        assert_eq!(cmd(&mut s, "state-hash").text, h, "step {step}");
    }
    // The outputs the chaos recording ends with are those of a chaos run with that seed.
    let (chaos, steps) = outputs("races/max_reduce/skl.launch.json", Schedule::Chaos { seed: 3 });
    assert_eq!(steps, end);
    let mut got = vec![0u8; chaos[0].len()];
    cmd(&mut s, &format!("goto {end}"));
    let out = s.buffers.iter().find(|b| b.0 == "arg1").expect("out").1;
    s.machine.svm.read(out, &mut got).expect("mapped");
    assert_eq!(got, chaos[0]);
}

/// Under the sequential and chaos schedules too, every stretch between checkpoints recorded
/// again from its checkpoint makes the same steps: a checkpoint keeps the chaos generator
/// and what is left of its burst (checkpoints 50 steps apart fall inside bursts); so a
/// recording that drops its parts reads the same steps.
#[test]
fn stretches_record_again_under_every_schedule() {
    for rel in ["races/max_reduce/skl.launch.json", "opencl/local_scan/skl.launch.json"] {
        for schedule in [Schedule::Sequential, Schedule::Chaos { seed: 3 }, Schedule::Chaos { seed: 11 }] {
            let mut l = raw::load(&launch(rel)).expect("launch");
            l.scheduler.set_schedule(schedule);
            let mut s = vdb::session::Session::new(l);
            s.recorder.checkpoints.interval = 50;
            s.run_to_end();
            let name = format!("{rel} under {schedule:?}");
            let times: Vec<u64> = s.recorder.checkpoints.list.iter().map(|c| c.time).collect();
            assert!(times.len() > 4, "{name}: {times:?}");
            for (k, &start) in times.iter().enumerate() {
                let again = s.rerecord_stretch(k).unwrap_or_else(|| panic!("{name}: stretch {k}"));
                let len = times.get(k + 1).copied().unwrap_or(s.recorder.len()) - start;
                assert_eq!(again.len(), len, "{name}: stretch {k}");
                let name = format!("{name}, stretch {k}");
                crate::timetravel::assert_same_steps(&name, &s.recorder.trace, start, &again.trace, 0, len);
            }
            // A recording that keeps no complete part reads the same steps, each part recorded
            // again from its checkpoint as it is read.
            let mut l = raw::load(&launch(rel)).expect("launch");
            l.scheduler.set_schedule(schedule);
            let mut dropping = vdb::session::Session::new(l);
            dropping.recorder.checkpoints.interval = 50;
            dropping.recorder.trace.cache = vdb::trace::Cache { per_step: 0, floor: 0 };
            dropping.run_to_end();
            let (kept, dropped) = (&s.recorder.trace, &dropping.recorder.trace);
            assert!(dropped.parts_held() < dropped.parts(), "{name}: nothing dropped");
            crate::timetravel::assert_same_steps(&name, kept, 0, dropped, 0, kept.len());
        }
    }
}
