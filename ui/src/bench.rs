//! `vdb bench-record LAUNCH`: records a whole run, then times the time-travel operations on
//! it (goto to random steps, single reverse steps, last-write queries) and prints one JSON
//! line of figures. Used by scripts/bench_timetravel.sh; not a test (timings vary).

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use vdb::machine::{MemSpace, ThreadId};

use crate::commands::{open_session, peak_rss, EXIT_OK};

fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 11
}

/// A reverse step slower than this is timed again (`reverse_step_slow_retimed`).
const SLOW_US: f64 = 10.0;

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(|a, b| a.total_cmp(b));
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    json!({"n": v.len(), "mean_us": mean, "p50_us": v.get(v.len() / 2), "p99_us": v.get(v.len() * 99 / 100), "max_us": v.last()})
}

/// What the machine alone adds to short timed operations: timings of a fixed loop of about
/// the cost of a reverse step, as many as fill `total_us` (the time the timed steps took
/// together, so that both are exposed to the machine's pauses as long). Its maximum is the
/// floor under the maxima above (a virtual machine's pauses reach 20-180 us).
fn machine_pauses(total_us: f64) -> serde_json::Value {
    let mut v = Vec::new();
    let (mut sum, mut timed) = (0u64, 0.0);
    let mut i = 0u64;
    while timed < total_us {
        let t = Instant::now();
        for j in 0..1000 {
            sum = std::hint::black_box(sum.wrapping_add(i ^ j));
        }
        let us = t.elapsed().as_secs_f64() * 1e6;
        v.push(us);
        timed += us;
        i += 1;
    }
    stats(v)
}

pub fn bench_record(launch: &Path, queries: usize) -> u8 {
    let mut s = match open_session(launch, None) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let t0 = Instant::now();
    let stop = s.run_to_end();
    let record_ms = t0.elapsed().as_secs_f64() * 1e3;
    let total = s.total_steps();
    let bytes = s.recorder.recorded_bytes();
    let mut seed = 12345u64;
    let mut gotos = Vec::new();
    // Parts recorded again by one movement or query, at most (their bodies were dropped).
    let rebuilds = |s: &vdb::session::Session| s.recorder.trace.rebuilds();
    let mut goto_rebuilds = 0;
    for _ in 0..queries {
        let target = lcg(&mut seed) % (total + 1);
        let (t, before) = (Instant::now(), rebuilds(&s));
        s.goto(target);
        gotos.push(t.elapsed().as_secs_f64() * 1e6);
        goto_rebuilds = goto_rebuilds.max(rebuilds(&s) - before);
    }
    // Back from the end over several checkpoint intervals: the parts before the last were
    // dropped, and a step back into one records it again (timed apart).
    s.goto(total);
    // A step into a part whose body the previous part's step back started recording ahead on
    // another thread is timed apart too (it waits for that thread if it has not finished).
    let (mut backs, mut backs_into_dropped, mut backs_into_ahead) = (Vec::new(), Vec::new(), Vec::new());
    let mut slow = Vec::new();
    for _ in 0..queries.min(total as usize) * 100 {
        let (t, before, ahead) = (Instant::now(), rebuilds(&s), s.recorder.trace.taken_ahead());
        s.backward();
        let us = t.elapsed().as_secs_f64() * 1e6;
        if rebuilds(&s) > before {
            backs_into_dropped.push(us)
        } else if s.recorder.trace.taken_ahead() > ahead {
            backs_into_ahead.push(us)
        } else {
            if us > SLOW_US {
                slow.push(s.now);
            }
            backs.push(us)
        }
    }
    // A reverse step that took long is timed again, three times from the same state (the
    // part's body is in the cache, as it was): the least of those is what the step costs,
    // the excess of the first timing was the machine's (a timer interrupt on this VM costs
    // 15-75 us, with no page fault or context switch in the step).
    let retimed: Vec<f64> = slow
        .iter()
        .map(|&at| {
            (0..3)
                .map(|_| {
                    s.goto(at + 1);
                    let t = Instant::now();
                    s.backward();
                    t.elapsed().as_secs_f64() * 1e6
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    // The first reverse step after landing at a random point: the seek has copied out of its
    // checkpoint what that step changes, so it should cost what any reverse step costs.
    let mut firsts = Vec::new();
    for _ in 0..queries {
        let target = 1 + lcg(&mut seed) % total.max(1);
        s.goto(target);
        let t = Instant::now();
        s.backward();
        firsts.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let mut writes = Vec::new();
    let threads = s.machine.threads.len() as u64;
    let grf = s.program.grf_bytes as u64;
    let mut found = 0;
    let mut write_rebuilds = 0;
    for i in 0..queries {
        let at = lcg(&mut seed) % (total + 1);
        s.goto(at);
        let before = rebuilds(&s);
        let t = Instant::now();
        let hits = if i % 2 == 0 {
            let thread = (lcg(&mut seed) % threads) as u32;
            let offset = (lcg(&mut seed) % (grf / 4)) as u32 * 4;
            let cur = s.machine.thread(ThreadId(thread)).grf[offset as usize..offset as usize + 4].to_vec();
            s.recorder.trace.grf_writes(thread, offset, 4, s.now, &cur, 1)
        } else {
            let Some(region) = s.machine.svm.regions().last().cloned() else { continue };
            let addr = region.start + (lcg(&mut seed) % region.len.max(4)) / 4 * 4;
            let mut cur = [0u8; 4];
            let _ = s.machine.svm.read(addr, &mut cur);
            s.recorder.trace.mem_writes(MemSpace::Svm, addr, 4, s.now, &cur, 1)
        };
        writes.push(t.elapsed().as_secs_f64() * 1e6);
        write_rebuilds = write_rebuilds.max(rebuilds(&s) - before);
        found += hits.len();
    }
    let rr = reexecution(&s, queries, &mut seed);
    let pauses =
        machine_pauses([&backs, &backs_into_dropped, &backs_into_ahead].iter().flat_map(|v| v.iter()).sum());
    let line = json!({
        "steps": total, "threads": threads, "stop": format!("{stop:?}"),
        "record_ms": record_ms, "recorded_bytes": bytes, "bytes_per_step": bytes as f64 / total.max(1) as f64,
        "checkpoints": s.recorder.checkpoints.len(), "peak_rss": peak_rss(),
        "goto": stats(gotos), "reverse_step": stats(backs), "reverse_step_slow_retimed": stats(retimed), "reverse_step_into_dropped_part": stats(backs_into_dropped), "reverse_step_into_part_read_ahead": stats(backs_into_ahead), "reverse_step_after_goto": stats(firsts), "last_write": stats(writes), "last_write_found": found,
        "most_parts_recorded_again": {"goto": goto_rebuilds, "last_write": write_rebuilds},
        "reexecution": rr, "machine_pauses": pauses,
    });
    say!("{line}");
    EXIT_OK
}

/// What keeping only checkpoints (rr's design) or only checkpoints and the write indexes (a
/// hybrid that records a stretch's log again when a movement or a query needs it) would cost
/// on this recording, measured exactly: the stretch between two checkpoints holding a random
/// step is recorded again from its checkpoint (`Session::rerecord_stretch`), then the goto
/// is made in that stretch's own recording. A reverse step out of a stretch whose log is not
/// kept costs as much. `whole_run_ms`: every stretch recorded again, what a query whose
/// write is far back costs without an index. Bytes per step: the checkpoints alone, and with
/// the write indexes.
fn reexecution(s: &vdb::session::Session, queries: usize, seed: &mut u64) -> serde_json::Value {
    let list = &s.recorder.checkpoints.list;
    let total = s.total_steps();
    let mut machine = s.machine.clone();
    let mut gotos = Vec::new();
    let mut rerecords = Vec::new();
    for _ in 0..queries {
        let target = lcg(seed) % (total + 1);
        let k = list.partition_point(|c| c.time <= target).saturating_sub(1);
        let t = Instant::now();
        let Some(stretch) = s.rerecord_stretch(k) else { continue };
        rerecords.push(t.elapsed().as_secs_f64() * 1e6);
        stretch.restore(&mut machine, target - list[k].time);
        gotos.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let t = Instant::now();
    let whole = (0..list.len()).filter(|&k| s.rerecord_stretch(k).is_some()).count();
    let whole_ms = t.elapsed().as_secs_f64() * 1e3;
    let parts = s.recorder.recorded_bytes_by_part();
    let per_step = |bytes: u64| bytes as f64 / total.max(1) as f64;
    json!({
        "checkpoint_interval": s.recorder.checkpoints.interval,
        "rerecord_stretch": stats(rerecords),
        "goto_or_reverse_step": stats(gotos),
        "whole_run_ms": whole_ms,
        "stretches": list.len(),
        "stretches_recorded_again": whole,
        "ns_per_step": whole_ms * 1e6 / total.max(1) as f64,
        "bytes_per_step": per_step(parts.checkpoints),
        "bytes_per_step_with_index": per_step(parts.checkpoints + parts.index),
    })
}

/// `vdb bench-render LAUNCH`: records the whole run, then times key presses (the action's
/// update plus a full-screen render into a TestBackend) at random points of the recording.
pub fn bench_render(launch: &Path, frames: usize) -> u8 {
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use crate::action::Action;
    use crate::app::App;

    let mut s = match open_session(launch, None) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let t0 = Instant::now();
    s.run_to_end();
    let record_ms = t0.elapsed().as_secs_f64() * 1e3;
    let total = s.total_steps();
    let threads = s.machine.threads.len();
    let mut app = App::new(s, crate::keymap::Keymap::default(), false);
    let mut term = match Terminal::new(TestBackend::new(160, 50)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::commands::EXIT_DIAGNOSTICS;
        }
    };
    let mut seed = 99u64;
    let mut times = Vec::new();
    let actions = [
        Action::Step,
        Action::ReverseStep,
        Action::Next,
        Action::ReverseNext,
        Action::Down,
        Action::NextPane,
    ];
    for i in 0..frames {
        if i % 8 == 0 {
            // Land on a random step, focused on the thread that runs there.
            let at = lcg(&mut seed) % total.max(1);
            app.session.goto(at);
            app.session.focus = ThreadId(app.session.recorder.trace.at(at).thread);
        }
        let action = actions[i % actions.len()];
        let t = Instant::now();
        app.update(action);
        let _ = term.draw(|f| crate::view::render(&app, f.area(), f.buffer_mut()));
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let line = json!({"steps": total, "threads": threads, "record_ms": record_ms, "key_press": stats(times)});
    say!("{line}");
    EXIT_OK
}
