//! Control flow through the harness: goto reconvergence, loops, calls, predication, masks.

use crate::harness::{le32, run_text, run_with, set_var};

const DECLS: &str = ".decl X v_type=G type=d num_elts=16 align=hword
.decl R v_type=G type=d num_elts=16 align=hword
.decl P1 v_type=P num_elts=16
.decl P2 v_type=P num_elts=16";

fn with_x(body: &str, x: &[i32]) -> crate::harness::Run {
    let bytes = le32(x);
    run_with(DECLS, body, 16, 0xffff, |p, m| set_var(p, m, "X", &bytes))
}

#[test]
fn forward_goto_parks_lanes_until_the_label() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    cmp.lt (M1, 16) P1 X(0,0)<1;1,0> 0x8:d
    (P1) goto (M1, 16) L
    mov (M1, 16) R(0,0)<1> 0x1:d
L:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x10:d";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i < 8 { 16 } else { 17 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn if_else_with_uniform_goto_runs_both_sides_and_reconverges() {
    let x: Vec<i32> = (0..16).map(|i| i * 3 - 20).collect();
    let body = "    cmp.gt (M1, 16) P1 X(0,0)<1;1,0> 0x0:d
    (P1) goto (M1, 16) THEN
    mov (M1, 16) R(0,0)<1> 0x64:d
    goto (M1, 1) END
THEN:
    mov (M1, 16) R(0,0)<1> 0xc8:d
END:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> X(0,0)<1;1,0>";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x.iter().map(|&v| if v > 0 { 200 + v } else { 100 + v }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn backward_goto_loops_each_lane_its_own_trip_count() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
LOOP:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    cmp.lt (M1, 16) P1 R(0,0)<1;1,0> X(0,0)<1;1,0>
    (P1) goto (M1, 16) LOOP
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x64:d";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x.iter().map(|&v| v.max(1) + 100).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn predicated_instruction_writes_only_true_lanes() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x7:d
    cmp.eq (M1, 16) P1 X(0,0)<1;1,0> 0x3:d
    (!P1) mov (M1, 16) R(0,0)<1> X(0,0)<1;1,0>";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i == 3 { 7 } else { i }).collect();
    assert_eq!(r.i32s("R"), expected);
    assert_eq!(r.pred("P1"), 1 << 3);
}

#[test]
fn dispatch_mask_limits_masked_instructions_but_not_nomask() {
    let body = "    mov (M1_NM, 16) R(0,0)<1> 0x1:d
    mov (M1, 16) R(0,0)<1> 0x2:d";
    let r = run_with(DECLS, body, 16, 0x00ff, |_, _| {}).ok();
    let expected: Vec<i32> = (0..16).map(|i| if i < 8 { 2 } else { 1 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn mask_offset_selects_channels_and_predicate_bits() {
    let body = "    mov (M1_NM, 16) R(0,0)<1> 0x0:d
    setp (M1_NM, 16) P1 0xff00:uw
    (P1) mov (M3, 8) R(0,8)<1> 0x5:d";
    let r = run_with(DECLS, body, 16, 0xf0ff, |_, _| {}).ok();
    // M3 = channels 8..15; P1 bits 8..15 set; dispatch disables channels 8..11.
    let expected: Vec<i32> = (0..16).map(|i| if i >= 12 { 5 } else { 0 }).collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn subroutine_call_in_divergent_code_returns_with_the_callers_mask() {
    let x: Vec<i32> = (0..16).map(|i| i - 8).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    cmp.ge (M1, 16) P1 X(0,0)<1;1,0> 0x0:d
    (P1) call (M1, 16) sub_1
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    ret (M1, 1)
.function \"sub_1\"
sub_1:
    cmp.gt (M1, 16) P2 X(0,0)<1;1,0> 0x3:d
    (P2) goto (M1, 16) BIG
    mov (M1, 16) R(0,0)<1> 0xa:d
    ret (M1, 16)
BIG:
    mov (M1, 16) R(0,0)<1> 0x14:d
    ret (M1, 16)";
    let r = with_x(body, &x).ok();
    let expected: Vec<i32> = x
        .iter()
        .map(|&v| {
            if v > 3 {
                21
            } else if v >= 0 {
                11
            } else {
                1
            }
        })
        .collect();
    assert_eq!(r.i32s("R"), expected);
}

#[test]
fn running_off_the_end_of_the_code_faults_at_the_end() {
    let text = ".version 4.1\n.kernel \"t\"\n.decl R v_type=G type=d num_elts=16 align=hword\n.function \"_main_0\"\n\n_main_0:\n    mov (M1, 16) R(0,0)<1> 0x1:d\n";
    let r = run_text(text, 16, 0xffff, |_, _| {});
    let fault = r.result.as_ref().expect_err("must fault");
    assert_eq!(fault.kind, vdb::exec::FaultKind::FellOffEnd);
    assert_eq!(r.u32s("R"), vec![1; 16], "state before the fault is kept");
}

#[test]
fn all_lanes_parked_jumps_to_the_nearest_waiting_label() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    goto (M1, 16) B
    mov (M1, 16) R(0,0)<1> 0x63:d
A:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
B:
    add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x2:d";
    let r = with_x(body, &x).ok();
    assert_eq!(r.i32s("R"), vec![2; 16]);
}
