//! Uniform and stack-call control flow: jmp, switchjmp, predicate any/all, fcall/fret with
//! %arg/%retval in a separate function file, faddr + ifcall, and a 64-byte GRF layout.

use std::sync::Arc;

use vdb::asm::{parse_files, ParseOptions};
use vdb::exec::{run_to_end, Interpreter, NullObserver, Scheduler};
use vdb::machine::{Machine, Shared, ThreadState};
use vdb::program::SourceFile;

use crate::harness::{le32, run_with, set_var};

const DECLS: &str = ".decl X v_type=G type=d num_elts=16 align=hword
.decl R v_type=G type=d num_elts=16 align=hword
.decl I v_type=G type=ud num_elts=1 align=dword
.decl P1 v_type=P num_elts=16";

#[test]
fn jmp_and_switchjmp_are_uniform() {
    for (index, expected) in [(0u32, 10), (1, 20), (2, 30)] {
        let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    switchjmp (M1, 1) I(0,0)<0;1,0> (C0, C1, C2)
C0:
    mov (M1, 16) R(0,0)<1> 0xa:d
    jmp (M1, 1) DONE
C1:
    mov (M1, 16) R(0,0)<1> 0x14:d
    jmp (M1, 1) DONE
C2:
    mov (M1, 16) R(0,0)<1> 0x1e:d
DONE:";
        let r = run_with(DECLS, body, 16, 0xffff, |p, m| set_var(p, m, "I", &index.to_le_bytes())).ok();
        assert_eq!(r.i32s("R"), vec![expected; 16], "index {index}");
    }
    let bad = run_with(DECLS, "    switchjmp (M1, 1) I(0,0)<0;1,0> (A)\nA:", 16, 0xffff, |p, m| {
        set_var(p, m, "I", &5u32.to_le_bytes())
    });
    assert!(
        matches!(bad.result, Err(ref f) if matches!(f.kind, vdb::exec::FaultKind::SwitchOutOfRange { .. }))
    );
}

#[test]
fn predicate_any_and_all_reduce_before_inverting() {
    let x: Vec<i32> = (0..16).collect();
    let body = "    mov (M1, 16) R(0,0)<1> 0x0:d
    cmp.eq (M1, 16) P1 X(0,0)<1;1,0> 0x3:d
    (P1.any) add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1:d
    (P1.all) add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x10:d
    (!P1.all) add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x100:d
    (!P1.any) add (M1, 16) R(0,0)<1> R(0,0)<1;1,0> 0x1000:d";
    let bytes = le32(&x);
    let r = run_with(DECLS, body, 16, 0xffff, |p, m| set_var(p, m, "X", &bytes)).ok();
    assert_eq!(r.i32s("R"), vec![0x101; 16]);
}

fn run_files(files: &[(&str, &str)], grf_size: u32) -> (Arc<vdb::program::Program>, Machine) {
    let sources =
        files.iter().map(|(p, t)| SourceFile { path: p.to_string(), text: t.to_string() }).collect();
    let program = Arc::new(
        parse_files(sources, &ParseOptions { grf_size }).unwrap_or_else(|d| panic!("{}", d.render())),
    );
    let thread = ThreadState::new(&program, 8, 0xff);
    let mut machine = Machine { threads: vec![Shared::new(thread)].into(), ..Machine::default() };
    let interp = Interpreter::new(program.clone());
    let mut sched = Scheduler::single_group(1);
    if let Err(f) = run_to_end(&interp, &mut machine, &mut sched, &mut NullObserver) {
        panic!("{}", f.render(&program));
    }
    (program, machine)
}

pub const KERNEL: &str = ".version 4.1
.kernel \"k\"
.funcdecl \"twice\"
.decl A v_type=G type=d num_elts=8 align=hword alias=<%arg, 0>
.decl RV v_type=G type=d num_elts=8 align=hword alias=<%retval, 0>
.decl R v_type=G type=d num_elts=8 align=hword
.decl FA v_type=G type=uq num_elts=1 align=qword
.kernel_attr SimdSize=8
.function \"_main_0\"

_main_0:
    mov (M1, 8) A(0,0)<1> 0x15:d
    fcall (M1, 8) twice 1 1
    mov (M1, 8) R(0,0)<1> RV(0,0)<1;1,0>
    faddr twice FA(0,0)<1>
    mov (M1, 8) A(0,0)<1> R(0,0)<1;1,0>
    ifcall (M1, 8) FA(0,0)<0;1,0> 1 1
    add (M1, 8) R(0,0)<1> RV(0,0)<1;1,0> 0x1:d
    ret (M1, 1)
";

/// A raw launch of [`KERNEL`] with [`FUNCTION`] (SIMD8) in a scratch directory `name`.
pub fn fcall_launch(name: &str) -> std::path::PathBuf {
    let dir = crate::golden::scratch(name);
    std::fs::write(dir.join("k.visaasm"), KERNEL).expect("kernel");
    std::fs::write(dir.join("twice.visaasm"), FUNCTION).expect("function");
    let launch = dir.join("k.launch.json");
    std::fs::write(&launch, r#"{ "kernel": "k.visaasm", "functions": ["twice.visaasm"], "simd": 8 }"#)
        .expect("launch");
    launch
}

pub const FUNCTION: &str = ".version 4.1
.global_function \"twice\"
.decl FA v_type=G type=d num_elts=8 align=hword alias=<%arg, 0>
.decl FR v_type=G type=d num_elts=8 align=hword alias=<%retval, 0>
.decl T v_type=G type=d num_elts=8 align=hword
.kernel_attr Extern
.function \"twice_0\"

twice_0:
    add (M1, 8) T(0,0)<1> FA(0,0)<1;1,0> FA(0,0)<1;1,0>
    mov (M1, 8) FR(0,0)<1> T(0,0)<1;1,0>
    fret (M1, 8)
";

#[test]
fn fcall_and_ifcall_pass_arguments_and_results_through_arg_and_retval() {
    let (program, machine) = run_files(&[("k.visaasm", KERNEL), ("twice.visaasm", FUNCTION)], 32);
    let r = program.var(program.var_id(vdb::isa::UnitId(0), "R").expect("R"));
    let t = &machine.threads[0];
    let got: Vec<i32> = t.grf[r.offset as usize..(r.offset + 32) as usize]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    // 21 doubled by fcall, doubled again by ifcall, plus one.
    assert_eq!(got, vec![21 * 4 + 1; 8]);
    assert!(t.control.stack.is_empty());
}

#[test]
fn a_64_byte_grf_moves_rows_by_64_bytes() {
    let text = ".version 4.1
.kernel \"k\"
.decl A v_type=G type=d num_elts=32 align=GRF
.kernel_attr SimdSize=8
.function \"_main_0\"

_main_0:
    mov (M1, 8) A(1,0)<1> 0x7:d
    mov (M1, 8) A(0,8)<1> 0x5:d
    ret (M1, 1)
";
    let (program, machine) = run_files(&[("k.visaasm", text)], 64);
    assert_eq!(program.grf_size, 64);
    let a = program.var(program.var_id(vdb::isa::UnitId(0), "A").expect("A"));
    let words: Vec<i32> = machine.threads[0].grf[a.offset as usize..(a.offset + a.size) as usize]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    // Row 1 starts at element 16 with 64-byte registers; (0,8) is element 8.
    assert_eq!(&words[16..24], &[7; 8]);
    assert_eq!(&words[8..16], &[5; 8]);
    assert_eq!(&words[0..8], &[0; 8]);
}
