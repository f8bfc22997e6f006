//! `why`: every edge of a provenance tree is checked against the recording by other means:
//! each writer is the newest step before its reader whose log entries touch the location (a
//! scan of the log, not the write index), each value is what the location held at that
//! time (by `goto`), and values flow as the instruction says (a `mov` copies, a store stores
//! what its data register held).

use serde_json::Value;

use crate::harness::{cmd, launch, session};
use vdb::machine::{MemSpace, ThreadId};
use vdb::session::{expr, Session};
use vdb::trace::EntryKind;

/// Where a node's location lives: a GRF byte range of a thread or a memory range.
enum At {
    Grf(u32, u32, u32),
    Mem(u64, u64),
    Pred,
    Leaf,
}

fn place(s: &Session, node: &Value) -> At {
    let loc = node["location"].as_str().expect("location");
    let len = node["value"].as_str().map_or(0, |v| v.len() as u64 / 2);
    if let Some(thread) = node["thread"].as_u64() {
        if s.program.preds.iter().any(|p| loc.starts_with(&format!("{} lane", p.name))) {
            return At::Pred;
        }
        let unit = vdb::isa::UnitId(0);
        let r = expr::resolve_region(&s.program, unit, loc, 32).expect("a register element");
        return At::Grf(thread as u32, r.offset(0), len as u32);
    }
    match s.memory_at(loc) {
        Ok((MemSpace::Svm, addr)) => At::Mem(addr, len),
        _ => At::Leaf,
    }
}

/// The newest step before `before` whose log entries write the location (the log itself,
/// scanned step by step).
fn scanned_writer(s: &Session, at: &At, before: u64) -> Option<u64> {
    (0..before).rev().find(|&step| {
        s.recorder.trace.entries(step).iter().any(|e| match (&e.kind, at) {
            (EntryKind::Grf { offset, xor }, At::Grf(t, o, l)) => {
                e.thread == *t && *offset < o + l && *o < offset + xor.len() as u32
            }
            (EntryKind::Mem { space: MemSpace::Svm, addr, xor }, At::Mem(a, l)) => {
                *addr < a + l && *a < addr + xor.len() as u64
            }
            _ => false,
        })
    })
}

/// The location's bytes at time `time`, as hex (the tree's notation).
fn value_at(s: &mut Session, at: &At, time: u64) -> Option<String> {
    cmd(s, &format!("goto {time}"));
    let bytes = match at {
        At::Grf(t, o, l) => s.machine.thread(ThreadId(*t)).grf[*o as usize..(*o + *l) as usize].to_vec(),
        At::Mem(a, l) => {
            let mut b = vec![0u8; *l as usize];
            s.read_memory(MemSpace::Svm, *a, &mut b).ok()?;
            b
        }
        _ => return None,
    };
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks `node` (read before `before`) and its subtree; returns the edges checked.
fn check(s: &mut Session, node: &Value, before: u64) -> usize {
    let at = place(s, node);
    if let Some(value) = value_at(s, &at, before) {
        assert_eq!(node["value"].as_str(), Some(value.as_str()), "value of {node}");
    }
    let writer = &node["writer"];
    if matches!(at, At::Grf(..) | At::Mem(..)) {
        let expected = scanned_writer(s, &at, before);
        assert_eq!(writer["step"].as_u64(), expected, "writer of {}", node["location"]);
    }
    let Some(step) = writer["step"].as_u64() else { return 0 };
    let instruction = writer["instruction"].as_str().unwrap_or("");
    let sources = node["sources"].as_array().cloned().unwrap_or_default();
    let followed: Vec<&Value> =
        sources.iter().filter(|n| n["thread"].is_u64() || n["writer"].is_object()).collect();
    // A plain `mov` or a store copies: the followed source held the value written.
    let copies = instruction.starts_with("mov (") || instruction.starts_with("svm_scatter");
    if copies && followed.len() == 1 && !matches!(at, At::Pred) {
        let src = followed[0];
        let (a, b) = (node["value"].as_str().unwrap_or(""), src["value"].as_str().unwrap_or(""));
        if a.len() == b.len() {
            assert_eq!(a, b, "{instruction}: {} from {}", node["location"], src["location"]);
        }
    }
    // A part of the value (bytes another write set) is read at the value's own time.
    sources.iter().map(|src| 1 + check(s, src, if src["part"] == true { before } else { step })).sum()
}

/// Nodes below the root that are memory (a load followed to what it read).
fn count_memory_sources(node: &Value) -> usize {
    let sources = node["sources"].as_array().cloned().unwrap_or_default();
    sources
        .iter()
        .map(|s| {
            usize::from(
                s["thread"].is_null()
                    && s["writer"].is_null()
                    && s["location"].as_str().is_some_and(|l| l.starts_with("in")),
            ) + count_memory_sources(s)
        })
        .sum()
}

#[test]
fn why_trees_agree_with_the_trace() {
    // ids3d: every output element, through the scatter to the ids in the payload.
    let mut s = session(&launch("opencl/ids3d/skl.launch.json"));
    s.run_to_end();
    let end = s.now;
    let mut edges = 0;
    for i in (0..192u64).step_by(5) {
        cmd(&mut s, &format!("goto {end}"));
        let tree = cmd(&mut s, &format!("why out+{} 4 depth 6", 4 * i)).fields["tree"].clone();
        assert!(tree["writer"].is_object(), "out[{i}] was written: {tree}");
        let data = &tree["sources"][0];
        assert!(data["thread"].is_u64(), "the stored data register is followed for out[{i}]: {tree}");
        edges += check(&mut s, &tree, end);
    }
    // Collatz: the trip count of a few work-items, through the loop counter and its
    // predicate (the loop's exit), from a point in the middle of the run.
    let mut s = session(&launch("opencl/collatz/skl.launch.json"));
    s.run_to_end();
    let middle = s.now / 2;
    for (thread, lane) in [(0u32, 3u32), (5, 0), (17, 15)] {
        for (time, loc) in [(s.recorder.len(), "V0055(0,0)<1;1,0>"), (middle, "V0054(0,0)<1;1,0>")] {
            cmd(&mut s, &format!("goto {time}"));
            cmd(&mut s, &format!("thread {thread}"));
            let tree = cmd(&mut s, &format!("why {loc} lane {lane} depth 5")).fields["tree"].clone();
            edges += check(&mut s, &tree, time);
        }
    }
    // LSC messages (acm-g10): the store's data register and the load's memory.
    let mut s = session(&launch("opencl/collatz/acm-g10.launch.json"));
    s.run_to_end();
    let end = s.now;
    let (mut stores, mut loads) = (0, 0);
    for i in [0u64, 5, 200, 1023] {
        cmd(&mut s, &format!("goto {end}"));
        let tree = cmd(&mut s, &format!("why arg1+{} 4 depth 40", 4 * i)).fields["tree"].clone();
        stores += usize::from(tree["sources"][0]["thread"].is_u64());
        loads += count_memory_sources(&tree);
        edges += check(&mut s, &tree, end);
    }
    // Just after thread 0's lsc_load, each lane's loaded value comes from in[lane].
    cmd(&mut s, "run");
    cmd(&mut s, "advance $16");
    let now = s.now;
    for lane in [0u64, 3, 15] {
        // (`check` moves through time: back to just after the load.)
        cmd(&mut s, &format!("goto {now}"));
        cmd(&mut s, "thread 0");
        let tree = cmd(&mut s, &format!("why V0068(0,0)<1;1,0> lane {lane} depth 2")).fields["tree"].clone();
        let read = if lane == 0 { "in".to_string() } else { format!("in+{:#x}", 4 * lane) };
        assert_eq!(tree["sources"][0]["location"].as_str(), Some(read.as_str()), "{tree}");
        loads += count_memory_sources(&tree);
        edges += check(&mut s, &tree, now);
    }
    assert_eq!(stores, 4, "every lsc_store's data register is followed");
    // 64-bit data: qword scatters and gathers (skl), d64 stores and d32x2 loads (acm-g10),
    // whose registers two `mov`s may fill half by half.
    for file in ["opencl/long_math/skl.launch.json", "opencl/long_math/acm-g10.launch.json"] {
        let mut s = session(&launch(file));
        s.run_to_end();
        let end = s.now;
        for i in [0u64, 2, 37, 63] {
            cmd(&mut s, &format!("goto {end}"));
            let tree = cmd(&mut s, &format!("why arg2+{} 8 depth 6", 8 * i)).fields["tree"].clone();
            assert!(
                tree["sources"][0]["thread"].is_u64(),
                "{file} out[{i}]: the stored data is followed: {tree}"
            );
            loads += count_memory_sources(&tree);
            edges += check(&mut s, &tree, end);
        }
    }
    assert!(loads >= 3, "each lsc_load is followed to the input buffer ({loads} memory sources)");
    // Atomics (a counter's history across threads), indirect operands (a private array in
    // registers), predicated `sel`s (divmod): every edge checked the same way.
    for (file, root) in [
        ("opencl/atomics/skl.launch.json", "arg1 4"),
        ("opencl/private_array/skl.launch.json", "arg1+8 4"),
        ("opencl/divmod/skl.launch.json", "arg3+8 8"),
        ("opencl/sg_shuffle/acm-g10.launch.json", "arg1+4 4"),
        // Over two lanes' stores: two parts, both written by the same scatter.
        ("opencl/collatz/skl.launch.json", "arg1+4 8"),
        // Through SLM, stores and gathers between barriers.
        ("opencl/local_scan/skl.launch.json", "arg1 4"),
        // `gather4_scaled.RB` (B read 8 bytes past R) and `addc`'s carry destination.
        ("shared/k14_local_reduce/skl.launch.json", "arg1+8 4"),
        ("opencl/long_math/acm-g10.launch.json", "arg2+12 4"),
        // Block messages (no lane per access): svm_block_st's data and svm_block_ld's memory.
        ("opencl/block_atomics/skl.launch.json", "arg1+4 8"),
    ] {
        let mut s = session(&launch(file));
        s.run_to_end();
        let end = s.now;
        let tree = cmd(&mut s, &format!("why {root} depth 12")).fields["tree"].clone();
        assert!(!tree.to_string().contains("not followed"), "{file}: {tree}");
        assert!(tree.to_string().matches("\"writer\":{").count() > 3, "{file}: a tree, not a leaf");
        edges += check(&mut s, &tree, end);
    }
    assert!(edges > 300, "{edges} edges checked");
}

#[test]
fn why_refuses_what_it_cannot_name() {
    let mut s = session(&launch("opencl/ids3d/skl.launch.json"));
    for line in ["why nothing", "why V0132(0,0)<1;1,0> lane 40", "why out+100000", "why P1 lane 99"] {
        let c = vdb::session::parse(line).expect("parses").expect("a command");
        assert!(s.execute(&c).is_err(), "{line}");
    }
    // One element names itself whatever the focused lane; a region takes the lane's element.
    s.run_to_end();
    cmd(&mut s, "thread 1");
    cmd(&mut s, "lane 5");
    for line in ["why V0132(0,5)", "why V0132(0,0)<1;1,0>", "why V0132(0,0)<1;1,0> lane 5"] {
        assert_eq!(cmd(&mut s, line).fields["tree"]["location"], "V0132(0,5)", "{line}");
    }
    cmd(&mut s, "run");
    // Before anything ran, an output element is an initial value.
    let tree = cmd(&mut s, "why out 4").fields["tree"].clone();
    assert!(
        tree["writer"].is_null() && tree["note"].as_str().is_some_and(|n| n.contains("initial value")),
        "{tree}"
    );
}

/// A qword gather's return (`svm_gather.8.1 (M5, 16)`): each qword of the destination, and
/// each dword half of it through an alias, comes from its channel's qword of `a` (channel
/// `k` of the M5 half is work-item 16 + k of thread 0).
#[test]
fn why_maps_qword_gathers_channel_by_channel() {
    let mut s = session(&launch("opencl/long_math/skl.launch.json"));
    cmd(&mut s, "advance $17");
    for k in 0..16u64 {
        let at = |bytes: u64| match 128 + 8 * k + bytes {
            0 => "a".to_string(),
            o => format!("a+{o:#x}"),
        };
        let qword = cmd(&mut s, &format!("why V0069({},{}) 8 depth 1", k / 4, k % 4)).fields["tree"].clone();
        assert_eq!(qword["sources"][0]["location"].as_str(), Some(at(0).as_str()), "{qword}");
        assert_eq!(qword["writer"]["lane"].as_u64(), Some(16 + k));
        let high = cmd(&mut s, &format!("why V0082({},{}) 4 depth 1", k / 4, 2 * (k % 4) + 1)).fields["tree"]
            .clone();
        assert_eq!(high["sources"][0]["location"].as_str(), Some(at(4).as_str()), "{high}");
    }
}

/// `madw` writes each channel's high half whole registers after its low half: both halves
/// name the writing channel and the three operands it multiplied and added.
#[test]
fn why_follows_both_halves_of_madw() {
    let mut s = session(&launch("opencl/long_math/acm-g10.launch.json"));
    cmd(&mut s, "advance $548");
    let now = s.now;
    for lane in [0u32, 6, 15] {
        for (row, half) in [(0, "low"), (2, "high")] {
            cmd(&mut s, &format!("goto {now}"));
            let tree = cmd(&mut s, &format!("why V0505({row},{lane}) 4 depth 2")).fields["tree"].clone();
            assert_eq!(tree["writer"]["id"].as_u64(), Some(547), "{half} {tree}");
            assert_eq!(tree["writer"]["lane"].as_u64(), Some(u64::from(lane)), "{half} {tree}");
            assert_eq!(tree["sources"].as_array().map(Vec::len), Some(3), "{half} {tree}");
            // `last-write` names the same lane (it shares the destination layout).
            let w = cmd(&mut s, &format!("last-write V0505({row},{lane})")).fields["writer"].clone();
            assert_eq!(w["lane"].as_u64(), Some(u64::from(lane)), "{half} {w}");
            check(&mut s, &tree, now);
        }
    }
}
