//! The interpreter's integer fast paths give bit-identical results to the general ALU path,
//! on random operands, for every op, type combination and modifier they accept.

use std::sync::Arc;

use vdb::exec::{run_to_end, Interpreter, NullObserver, Scheduler};
use vdb::isa::UnitId;
use vdb::machine::{Machine, Shared, ThreadState};

use crate::harness::{kernel_text, parse};

const TYPES: [&str; 8] = ["d", "ud", "w", "uw", "b", "ub", "q", "uq"];

fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state ^ (*state >> 29)
}

/// Runs `body` on random A/B contents with fast paths on or off; returns R's bytes and P1.
fn run(decls: &str, body: &str, seed: u64, fast: bool) -> (Vec<u8>, u32) {
    let program = Arc::new(parse(&kernel_text(decls, body, 16)));
    let mut thread = ThreadState::new(&program, 16, 0xffff);
    let mut s = seed;
    for name in ["A", "B"] {
        let v = program.var(program.var_id(UnitId(0), name).expect("var"));
        for b in &mut thread.grf[v.offset as usize..(v.offset + v.size) as usize] {
            *b = lcg(&mut s) as u8;
        }
        // Small shift counts and equal lanes make the interesting cases common.
        if lcg(&mut s).is_multiple_of(3) {
            thread.grf[v.offset as usize] = 0;
        }
    }
    thread.preds[0] = lcg(&mut s) as u32 & 0xffff;
    let mut machine = Machine { threads: vec![Shared::new(thread)].into(), ..Machine::default() };
    let mut interp = Interpreter::new(program.clone());
    interp.use_fast_paths = fast;
    let mut sched = Scheduler::single_group(1);
    if let Err(f) = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver) {
        panic!("{}: {}", body, f.render(&program));
    }
    let r = program.var(program.var_id(UnitId(0), "R").expect("R"));
    let t = &machine.threads[0];
    (t.grf[r.offset as usize..(r.offset + r.size) as usize].to_vec(), t.preds[1])
}

#[test]
fn fast_integer_paths_agree_with_the_general_alu() {
    let mut seed = 7u64;
    let mut checked = 0;
    for (i, ta) in TYPES.iter().enumerate() {
        for tb in TYPES.iter().skip(i % 3).step_by(3) {
            for td in ["d", "ud", "w", "q", "uq", "ub"] {
                let decls = format!(
                    ".decl A v_type=G type={ta} num_elts=16 align=hword\n.decl B v_type=G type={tb} num_elts=16 align=hword\n.decl R v_type=G type={td} num_elts=16 align=hword\n.decl P0 v_type=P num_elts=16\n.decl P1 v_type=P num_elts=16"
                );
                let mut bodies: Vec<String> = ["add", "mul", "and", "or", "xor", "shl", "shr", "asr"]
                    .iter()
                    .map(|op| format!("    {op} (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>"))
                    .collect();
                bodies.push("    add (M1, 16) R(0,0)<1> (-)A(0,0)<1;1,0> B(0,1)<0;1,0>".into());
                bodies.push("    mov (M1, 8) R(0,0)<2> (abs)A(0,0)<2;1,0>".into());
                bodies.push("    (P0) sel (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    (!P0) add (M1, 16) R(0,0)<1> A(0,0)<1;1,0> 0xfffffff9:d".into());
                // Other exec sizes, and a channel offset (lanes 8..15 of the masks).
                bodies.push("    add (M1, 1) R(0,1)<1> A(0,2)<0;1,0> B(0,3)<0;1,0>".into());
                bodies.push("    (P0) xor (M1, 4) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    (!P0) shl (M3, 8) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    cmp.lt (M3, 8) P1 A(0,0)<1;1,0> B(0,0)<1;1,0>".into());
                bodies.push("    cmp.ge (M1, 4) P1 A(0,0)<1;1,0> 0x7:d".into());
                for rel in ["eq", "ne", "lt", "le", "gt", "ge"] {
                    bodies.push(format!("    cmp.{rel} (M1, 16) P1 A(0,0)<1;1,0> B(0,0)<1;1,0>"));
                    bodies.push(format!("    cmp.{rel} (M1, 16) R(0,0)<1> A(0,0)<1;1,0> B(0,2)<0;1,0>"));
                }
                for body in &bodies {
                    seed = seed.wrapping_add(1);
                    let fast = run(&decls, body, seed, true);
                    let slow = run(&decls, body, seed, false);
                    assert_eq!(fast, slow, "{ta} {tb} -> {td}: {body}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} cases");
}
