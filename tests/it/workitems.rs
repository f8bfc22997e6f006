//! Work-items: `workitem`, `info lanes`, work-item breakpoint conditions, and the work-item
//! named with each writer and watchpoint lane, checked against what real compiled kernels
//! compute from their ids.

use serde_json::Value;

use crate::harness::{cmd, launch, session, thread_steps};
use vdb::machine::MemSpace;
use vdb::session::{parse, StopReason};

/// ids3d (SIMD32, a 6x4x2 NDRange in 3x2x2 groups, so each group's thread is partly
/// dispatched) writes, for the work-item of global id (x,y,z), its local ids at out[4i] and
/// its group ids at out[4i+1], where i = (z*4 + y)*6 + x.
const IDS3D: &str = "opencl/ids3d/skl.launch.json";
const SIZE: [u64; 3] = [6, 4, 2];

fn ids(v: &Value) -> Vec<u64> {
    v.as_array().expect("ids").iter().map(|n| n.as_u64().expect("id")).collect()
}

fn every_work_item() -> impl Iterator<Item = [u64; 3]> {
    (0..SIZE[2]).flat_map(|z| (0..SIZE[1]).flat_map(move |y| (0..SIZE[0]).map(move |x| [x, y, z])))
}

fn index(id: [u64; 3]) -> u64 {
    (id[2] * SIZE[1] + id[1]) * SIZE[0] + id[0]
}

/// Each output element's writer, found by `last-write`, is the lane `workitem` focuses for
/// the work-item that element belongs to; the ids vdb names for it are the ids the kernel
/// computed there (get_local_id, get_group_id).
#[test]
fn writers_are_the_work_items_the_kernel_says() {
    let mut s = session(&launch(IDS3D));
    s.run_to_end();
    for id in every_work_item() {
        let at = cmd(&mut s, &format!("workitem {},{},{}", id[0], id[1], id[2])).fields;
        let (thread, lane) = (s.focus.0, s.lane);
        assert_eq!(ids(&at["workitem"]["global"]), id.to_vec());
        let (local, group) = (ids(&at["workitem"]["local"]), ids(&at["workitem"]["group"]));
        let i = index(id);
        for (slot, ids_there) in [(0, &local), (1, &group)] {
            let w = cmd(&mut s, &format!("last-write out+{} 4", 16 * i + 4 * slot)).fields;
            let writer = &w["writer"];
            assert_eq!(writer["thread"].as_u64(), Some(u64::from(thread)), "{id:?} slot {slot}: {writer}");
            assert_eq!(writer["lane"].as_u64(), Some(u64::from(lane)), "{id:?} slot {slot}: {writer}");
            assert_eq!(ids(&writer["workitem"]["global"]), id.to_vec());
            let new =
                u32::from_str_radix(writer["new"].as_str().expect("hex"), 16).expect("hex").swap_bytes();
            assert_eq!(
                u64::from(new),
                ids_there[0] + 10 * ids_there[1] + 100 * ids_there[2],
                "{id:?} slot {slot}"
            );
        }
    }
}

/// `info lanes` names a work-item exactly for the dispatched lanes, and each one's
/// `workitem` focuses that same thread and lane.
#[test]
fn info_lanes_matches_dispatch_and_workitem() {
    let mut s = session(&launch(IDS3D));
    let threads = s.machine.threads.len() as u32;
    let mut named = 0;
    for t in 0..threads {
        cmd(&mut s, &format!("thread {t}"));
        let lanes = cmd(&mut s, "info lanes").fields["lanes"].as_array().expect("lanes").clone();
        let dispatch = s.machine.thread(s.focus).dispatch_mask;
        // `info threads` names the work-items of the first and last dispatched lanes.
        let ids: Vec<String> = lanes
            .iter()
            .filter_map(|r| r["workitem"]["global"].as_array())
            .map(|g| g.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(","))
            .collect();
        let row = cmd(&mut s, "info threads").fields["threads"][t as usize]["workitems"].clone();
        assert_eq!(row, serde_json::json!([ids[0], ids[ids.len() - 1]]), "thread {t}");
        assert_eq!(lanes.len(), 32);
        for row in &lanes {
            let lane = row["lane"].as_u64().expect("lane") as u32;
            assert_eq!(row["dispatched"], Value::Bool(dispatch >> lane & 1 != 0));
            assert_eq!(row["workitem"].is_null(), dispatch >> lane & 1 == 0, "thread {t} lane {lane}");
            if let Some(global) = row["workitem"]["global"].as_array() {
                let text: Vec<String> = global.iter().map(|n| n.to_string()).collect();
                cmd(&mut s, &format!("workitem {}", text.join(",")));
                assert_eq!((s.focus.0, s.lane), (t, lane));
                named += 1;
            }
        }
    }
    assert_eq!(named, SIZE.iter().product::<u64>());
}

/// `break LOC if workitem == ID` stops where that work-item's thread first reaches LOC with
/// its lane in the execution mask, focused on that lane, in both directions.
#[test]
fn work_item_breakpoints_stop_that_work_item() {
    let mut s = session(&launch("opencl/collatz/skl.launch.json"));
    let loc = "$18";
    for id in [0u64, 37, 200, 1023] {
        cmd(&mut s, "run");
        cmd(&mut s, &format!("workitem {id}"));
        let (thread, lane) = (s.focus.0, s.lane);
        cmd(&mut s, "thread 0");
        let b = cmd(&mut s, &format!("break {loc} if workitem == {id}")).fields;
        let bp = b["id"].as_u64().expect("id");
        let hit = cmd(&mut s, "continue");
        assert!(matches!(hit.stop, Some(StopReason::Breakpoint { .. })), "{id}: {:?}", hit.stop);
        assert_eq!((s.focus.0, s.lane), (thread, lane), "work-item {id}");
        let step = s.now;
        // The first step of that thread at the breakpoint with the lane active: scan the
        // recording, undoing nothing (the execution mask before each of the thread's steps).
        let mut scan = session(&launch("opencl/collatz/skl.launch.json"));
        let (steps, pcs) = thread_steps(&mut scan, thread);
        let first = steps.iter().zip(&pcs).find_map(|(&at, &pc)| {
            scan.execute(&parse(&format!("goto {at}")).expect("p").expect("c")).ok()?;
            let t = scan.machine.thread(vdb::machine::ThreadId(thread));
            let here = scan.program.insts[pc as usize].id == 18;
            (here && t.control.em >> lane & 1 != 0).then_some(at)
        });
        assert_eq!(Some(step), first, "work-item {id}");
        // From the end, reverse-continue stops at its last arrival, on the same lane.
        cmd(&mut s, "continue");
        cmd(&mut s, "thread 0");
        cmd(&mut s, "lane 3");
        let back = cmd(&mut s, "rcontinue");
        assert!(matches!(back.stop, Some(StopReason::Breakpoint { .. })), "{id}: {:?}", back.stop);
        assert_eq!((s.focus.0, s.lane), (thread, lane), "work-item {id} backwards");
        let t = s.machine.thread(s.focus);
        assert_eq!(s.program.insts[t.control.pc.0 as usize].id, 18);
        assert!(t.control.em >> lane & 1 != 0);
        assert!(s.now >= step);
        cmd(&mut s, &format!("delete {bp}"));
    }
}

/// Watchpoint hits name the work-items of the lanes that wrote.
#[test]
fn watchpoint_hits_name_the_writing_work_item() {
    let mut s = session(&launch(IDS3D));
    let id = [4u64, 3, 1];
    cmd(&mut s, "workitem 4,3,1");
    let (thread, lane) = (s.focus.0, s.lane);
    cmd(&mut s, &format!("watch out+{} 4", 16 * index(id)));
    let hit = cmd(&mut s, "continue");
    let Some(StopReason::Watchpoint(h)) = hit.stop else { panic!("{:?}", hit.stop) };
    assert_eq!((h.thread, h.lanes.clone()), (thread, vec![lane]));
    assert_eq!(h.workitems, vec!["4,3,1".to_string()]);
    assert!(hit.text.contains(&format!("lanes [{lane}], work-item 4,3,1)")), "{}", hit.text);
}

/// A raw launch has no work-items: the commands say so and change nothing.
#[test]
fn raw_launches_have_no_work_items() {
    let mut s = session(&launch("hand/divergent_if.launch.json"));
    for line in ["workitem 0", "workitem", "break 1 if workitem == 0"] {
        let c = parse(line).expect("parses").expect("a command");
        let e = s.execute(&c).expect_err(line);
        assert!(e.contains("raw launch"), "{line}: {e}");
    }
    assert!(s.breakpoints.is_empty());
    let lanes = cmd(&mut s, "info lanes").fields["lanes"].clone();
    assert!(lanes.as_array().expect("lanes").iter().all(|r| r["workitem"].is_null()));
    // And an OpenCL launch refuses ids outside its NDRange, naming the axis.
    let mut s = session(&launch(IDS3D));
    let e = s.execute(&parse("workitem 1,4").expect("p").expect("c")).expect_err("y = 4");
    assert!(e.contains("y = 4"), "{e}");
    assert_eq!((s.focus.0, s.lane), (0, 0));
}

/// `compare` against the pocl reference: at the start every element the kernel sets to
/// non-zero differs (the buffer starts zeroed) and nothing wrote it; at the end all are
/// equal; against a reference with elements changed, exactly those differ, each with the
/// writer `last-write` names and the work-item the element belongs to.
#[test]
fn compare_finds_the_differing_elements_and_their_writers() {
    let mut s = session(&launch(IDS3D));
    let reference = std::fs::read(launch("opencl/ids3d/expected/out.bin")).expect("reference");
    let words: Vec<u32> = reference.chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
    // Relative to the launch file's folder (no such path from the test's working folder).
    let start = cmd(&mut s, "compare out expected/out.bin").fields;
    assert_eq!(start["elements"].as_u64(), Some(words.len() as u64));
    assert_eq!(start["count"].as_u64(), Some(words.iter().filter(|&&w| w != 0).count() as u64));
    let shown = start["mismatches"].as_array().expect("mismatches");
    assert_eq!(shown.len(), 10);
    assert!(shown.iter().all(|m| m["writer"].is_null() && m["actual"] == "0x00000000"));
    cmd(&mut s, "continue");
    let end = cmd(&mut s, "compare out expected/out.bin");
    assert_eq!(end.fields["count"].as_u64(), Some(0), "{}", end.text);
    assert!(end.text.ends_with("all equal"), "{}", end.text);

    let changed = [3usize, 44, 50, 191];
    let mut bad = reference.clone();
    for &i in &changed {
        bad[4 * i + 1] ^= 0x10;
    }
    let dir = super::golden::scratch("compare");
    let file = dir.join("bad.bin");
    std::fs::write(&file, &bad).expect("write");
    let r = cmd(&mut s, &format!("compare/dw out {}", file.display())).fields;
    assert_eq!(r["count"].as_u64(), Some(changed.len() as u64));
    let mismatches = r["mismatches"].as_array().expect("mismatches");
    assert_eq!(crate::harness::numbers(&r["mismatches"], "element"), changed.map(|i| i as u64));
    for m in mismatches {
        let i = m["element"].as_u64().expect("element");
        assert_eq!(m["actual"].as_str(), Some(format!("{}", words[i as usize] as i32).as_str()));
        let last = cmd(&mut s, &format!("last-write out+{} 4", 4 * i)).fields;
        assert_eq!(m["writer"], last["writer"], "element {i}");
        // Element i is slot i % 4 of work-item i / 4 (x fastest over a 6x4 plane).
        let item = i / 4;
        let id = [item % SIZE[0], item / SIZE[0] % SIZE[1], item / (SIZE[0] * SIZE[1])];
        assert_eq!(ids(&m["writer"]["workitem"]["global"]), id.to_vec(), "element {i}");
    }
    // Files that do not fit are refused, naming why; the session is unchanged.
    let now = s.now;
    std::fs::write(&file, [&reference[..], &[0u8; 4][..]].concat()).expect("write");
    let e = s.execute(&parse(&format!("compare out {}", file.display())).expect("p").expect("c"));
    assert!(e.expect_err("longer").contains("longer than the memory"));
    std::fs::write(&file, &reference[..6]).expect("write");
    let e = s.execute(&parse(&format!("compare out {}", file.display())).expect("p").expect("c"));
    assert!(e.expect_err("6 bytes").contains("not a whole number of 4-byte elements"));
    std::fs::write(&file, []).expect("write");
    assert!(s.execute(&parse(&format!("compare out {}", file.display())).expect("p").expect("c")).is_err());
    assert!(s.execute(&parse("compare out no/such/file.bin").expect("p").expect("c")).is_err());
    // Not regular files: refused before reading (no endless read of a device).
    for odd in [dir.display().to_string(), "/dev/zero".to_string()] {
        let e = s.execute(&parse(&format!("compare out {odd}")).expect("p").expect("c"));
        assert!(e.expect_err("not a file").contains("not a regular file"), "{odd}");
    }
    assert_eq!(s.now, now);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `compare/fw … ulp N` on float_math's `approx` output: pocl's reference is met within the
/// 8 ULP its compare.json allows; against vdb's own output moved by k ULP at a few elements,
/// `ulp k-1` finds exactly those and `ulp k` none.
#[test]
fn compare_tolerates_float_differences_in_ulps() {
    let mut s = session(&launch("opencl/float_math/skl.launch.json"));
    s.run_to_end();
    let ok = cmd(&mut s, "compare/fw arg2 expected/approx.bin ulp 8");
    assert_eq!(ok.fields["count"].as_u64(), Some(0), "{}", ok.text);
    let (_, base, size) = s.buffers.iter().find(|(n, _, _)| n == "arg2").cloned().expect("arg2");
    let mut own = vec![0u8; size as usize];
    s.read_memory(vdb::machine::MemSpace::Svm, base, &mut own).expect("read");
    let dir = super::golden::scratch("ulp");
    let file = dir.join("moved.bin");
    let moved = [5usize, 17, 200];
    for k in [1u32, 3] {
        let mut reference = own.clone();
        for &i in &moved {
            let x = f32::from_le_bytes(reference[4 * i..4 * i + 4].try_into().expect("4"));
            assert!(x.is_finite() && x != 0.0, "element {i} is {x}");
            let bits = x.to_bits() + k; // k representable values away from zero
            reference[4 * i..4 * i + 4].copy_from_slice(&bits.to_le_bytes());
        }
        std::fs::write(&file, &reference).expect("write");
        let near = cmd(&mut s, &format!("compare/fw arg2 {} ulp {}", file.display(), k - 1)).fields;
        assert_eq!(
            crate::harness::numbers(&near["mismatches"], "element"),
            moved.map(|i| i as u64),
            "k = {k}"
        );
        let within = cmd(&mut s, &format!("compare/fw arg2 {} ulp {k}", file.display())).fields;
        assert_eq!(within["count"].as_u64(), Some(0), "k = {k}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lane-history` agrees with going to each of the thread's steps and reading its execution
/// mask and predicates before and after.
#[test]
fn lane_history_agrees_with_the_masks_step_by_step() {
    for (file, thread) in
        [("hand/nested_divergence.launch.json", 0u32), ("opencl/collatz/skl.launch.json", 5)]
    {
        let mut s = session(&launch(file));
        let (steps, _) = thread_steps(&mut s, thread);
        let end = s.recorder.len();
        let tid = vdb::machine::ThreadId(thread);
        let simd = s.machine.thread(tid).simd;
        // Before and after each step: (step, em before, em after, predicate bits before).
        let mut masks = Vec::new();
        for &at in &steps {
            cmd(&mut s, &format!("goto {at}"));
            let before = s.machine.thread(tid).control.em;
            let preds = s.machine.thread(tid).preds.clone();
            cmd(&mut s, &format!("goto {}", at + 1));
            masks.push((at, before, s.machine.thread(tid).control.em, preds));
        }
        cmd(&mut s, &format!("goto {end}"));
        cmd(&mut s, &format!("thread {thread}"));
        for lane in 0..simd {
            let bit = 1u32 << lane;
            let expected: Vec<(u64, &str)> = masks
                .iter()
                .rev()
                .filter(|(_, b, a, _)| (b ^ a) & bit != 0)
                .map(|&(at, _, a, _)| (at, if a & bit != 0 { "rejoined" } else { "left" }))
                .take(20)
                .collect();
            let reply = cmd(&mut s, &format!("lane-history {lane}")).fields;
            let events = reply["events"].as_array().expect("events");
            let got: Vec<(u64, &str)> = events
                .iter()
                .map(|e| (e["step"].as_u64().expect("step"), e["event"].as_str().expect("event")))
                .collect();
            assert_eq!(got, expected, "{file} lane {lane}");
            for e in events {
                let at = e["step"].as_u64().expect("step");
                let (_, _, _, preds) = masks.iter().find(|m| m.0 == at).expect("a step of the thread");
                if let Some(p) = e["predicate"].as_array() {
                    let name = p[0].as_str().expect("name");
                    let index = s.program.preds.iter().position(|d| d.name == name).expect("a predicate");
                    assert_eq!(p[1].as_bool(), Some(preds[index] & bit != 0), "{file} lane {lane} step {at}");
                }
            }
        }
        assert!(
            masks.iter().any(|(_, b, a, _)| b != a && *a != 0),
            "{file}: thread {thread} diverges, so the check above saw events"
        );
    }
}

/// `info args` shows each argument as the launch file bound it: by-value bytes (decoded by
/// their C type), buffers where `x argN` reads them with the file's size, local sizes.
#[test]
fn info_args_shows_the_arguments_as_bound() {
    let dir = launch("shared/k23_scalar_args");
    let spec: Value =
        serde_json::from_slice(&std::fs::read(dir.join("skl.launch.json")).expect("launch")).expect("json");
    let mut s = session(&dir.join("skl.launch.json"));
    let args = cmd(&mut s, "info args").fields["args"].clone();
    let args = args.as_array().expect("args");
    assert_eq!(args.len(), spec["args"].as_array().expect("args").len());
    for given in spec["args"].as_array().expect("args") {
        let index = given["index"].as_u64().expect("index");
        let shown = args.iter().find(|a| a["index"].as_u64() == Some(index)).expect("listed");
        if let Some(path) = given["scalar"].as_str() {
            let bytes = std::fs::read(dir.join(path)).expect("scalar");
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(shown["value"]["bytes"].as_str(), Some(hex.as_str()), "arg{index}");
            let value = shown["value"]["value"].as_str().expect("value");
            let expected = match shown["type"].as_str().expect("type") {
                "char" => Some(format!("{}", bytes[0] as i8)),
                "uchar" => Some(format!("{}", bytes[0])),
                "short" => Some(format!("{}", i16::from_le_bytes([bytes[0], bytes[1]]))),
                "ushort" => Some(format!("{}", u16::from_le_bytes([bytes[0], bytes[1]]))),
                "int" => Some(format!("{}", i32::from_le_bytes(bytes[..4].try_into().expect("4")))),
                "uint" => Some(format!("{}", u32::from_le_bytes(bytes[..4].try_into().expect("4")))),
                "long" => Some(format!("{}", i64::from_le_bytes(bytes[..8].try_into().expect("8")))),
                "ulong" => Some(format!("{}", u64::from_le_bytes(bytes[..8].try_into().expect("8")))),
                "float" => Some(format!("{}", f32::from_le_bytes(bytes[..4].try_into().expect("4")))),
                _ => None,
            };
            match expected {
                Some(e) => {
                    assert!(value == e || value.starts_with(&format!("{e} (")), "arg{index}: {value} vs {e}")
                }
                None => assert_eq!(value, hex, "arg{index}: other types show their bytes"),
            }
        } else {
            let (space, addr) = s.memory_at(&format!("arg{index}")).expect("a buffer");
            assert_eq!(space, MemSpace::Svm);
            assert_eq!(shown["value"]["buffer"].as_str(), Some(format!("{addr:#x}").as_str()));
            let size =
                std::fs::read(dir.join(given["buffer"].as_str().expect("buffer"))).expect("file").len();
            assert_eq!(shown["value"]["size"].as_u64(), Some(size as u64));
        }
    }
    // __local arguments show the bytes asked for; a raw launch lists its regions.
    let mut s = session(&launch("shared/k24_local_arg/skl.launch.json"));
    let spec: Value =
        serde_json::from_slice(&std::fs::read(launch("shared/k24_local_arg/skl.launch.json")).expect("l"))
            .expect("j");
    let locals: Vec<u64> =
        spec["args"].as_array().expect("args").iter().filter_map(|a| a["local"].as_u64()).collect();
    let shown: Vec<u64> = cmd(&mut s, "info args").fields["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a["value"]["local"].as_u64())
        .collect();
    assert_eq!(shown, locals);
    assert!(!locals.is_empty());
    let mut raw = session(&launch("hand/loop_exit.launch.json"));
    let regions = cmd(&mut raw, "info args").fields["regions"].clone();
    assert_eq!(regions.as_array().map(Vec::len), Some(raw.buffers.len()));
}
