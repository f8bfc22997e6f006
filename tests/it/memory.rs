//! Memory messages through the whole pipeline, with register layouts and memory effects
//! worked out by hand from the instruction pages (SVM_GATHER, SVM_GATHER4_SCALED,
//! GATHER4_SCALED, DWORD_ATOMIC, OWORD_LD, SVM_ATOMIC).

use vdb::machine::Machine;
use vdb::program::Program;

use crate::harness::{run_with, set_var, Run};

const BASE: u64 = 0x1_0000_0000;

const DECLS: &str = ".decl ADDR v_type=G type=uq num_elts=16 align=GRF
.decl OFF v_type=G type=ud num_elts=16 align=GRF
.decl QOFF v_type=G type=uq num_elts=16 align=GRF
.decl D v_type=G type=ud num_elts=64 align=GRF
.decl S v_type=G type=ud num_elts=64 align=GRF
.decl S0 v_type=G type=ud num_elts=16 align=GRF
.decl S1 v_type=G type=ud num_elts=16 align=GRF
.decl B v_type=G type=uq num_elts=1 align=qword";

/// Memory of 256 bytes at BASE holding 0, 1, 2, … 255; ADDR lane i = BASE + stride*i.
fn setup(p: &Program, m: &mut Machine, stride: u64) {
    m.svm.map(BASE, 256, "buf");
    let bytes: Vec<u8> = (0..=255u8).collect();
    m.svm.write(BASE, &bytes).expect("write");
    let addrs: Vec<u8> = (0..16u64).flat_map(|i| (BASE + stride * i).to_le_bytes()).collect();
    set_var(p, m, "ADDR", &addrs);
    set_var(p, m, "B", &BASE.to_le_bytes());
    let offs: Vec<u8> = (0..16u32).flat_map(|i| (i * stride as u32).to_le_bytes()).collect();
    set_var(p, m, "OFF", &offs);
    let qoffs: Vec<u8> = (0..16u64).flat_map(|i| (i * stride).to_le_bytes()).collect();
    set_var(p, m, "QOFF", &qoffs);
    let src: Vec<u8> = (0..64u32).flat_map(|i| (0xa000 + i).to_le_bytes()).collect();
    set_var(p, m, "S", &src);
}

fn run(body: &str, mask: u32, stride: u64) -> Run {
    run_with(DECLS, body, 8, mask, |p, m| setup(p, m, stride)).ok()
}

fn mem(r: &Run, at: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    r.machine.svm.read(BASE + at, &mut buf).expect("read");
    buf
}

#[test]
fn svm_gather_byte_blocks_share_a_dword_per_lane() {
    let r = run("    svm_gather.1.2 (M1, 8) ADDR.0 D.0", 0xff, 4);
    let d = r.bytes("D");
    for lane in 0..8usize {
        assert_eq!(&d[lane * 4..lane * 4 + 2], &[(lane * 4) as u8, (lane * 4 + 1) as u8], "lane {lane}");
    }
}

#[test]
fn svm_gather_qword_blocks_are_planes_of_exec_size() {
    let r = run("    svm_gather.8.2 (M1, 8) ADDR.0 D.0", 0xff, 16);
    let q: Vec<u64> = r.bytes("D").chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
    let at = |a: u64| u64::from_le_bytes(std::array::from_fn(|k| (a + k as u64) as u8));
    for lane in 0..8u64 {
        assert_eq!(q[lane as usize], at(lane * 16), "block 0 lane {lane}");
        assert_eq!(q[8 + lane as usize], at(lane * 16 + 8), "block 1 lane {lane}");
    }
}

#[test]
fn svm_scatter_writes_only_enabled_lanes() {
    let r = run("    svm_scatter.4.2 (M1, 8) ADDR.0 S.0", 0b1010_0101, 8);
    for lane in 0..8u64 {
        let got = mem(&r, lane * 8, 8);
        if 0b1010_0101u32 >> lane & 1 == 1 {
            let mut want = (0xa000 + lane as u32).to_le_bytes().to_vec();
            want.extend((0xa000 + 8 + lane as u32).to_le_bytes());
            assert_eq!(got, want, "lane {lane}");
        } else {
            assert_eq!(
                got,
                (lane * 8..lane * 8 + 8).map(|b| b as u8).collect::<Vec<_>>(),
                "lane {lane} untouched"
            );
        }
    }
}

#[test]
fn svm_block_load_and_store_ignore_the_mask() {
    let r = run("    svm_block_ld (2) B(0,0)<0;1,0> D.0\n    svm_block_st (1) B(0,0)<0;1,0> S.0", 0x01, 0);
    assert_eq!(&r.bytes("D")[..32], &(0..32u8).collect::<Vec<_>>()[..]);
    assert_eq!(mem(&r, 0, 16), (0..4u32).flat_map(|i| (0xa000 + i).to_le_bytes()).collect::<Vec<_>>());
}

/// A block read at a dword-aligned address reads from there (IGC prints the unaligned
/// read without a suffix); `.aligned` reads and block writes keep the oword rule.
#[test]
fn svm_block_reads_may_be_dword_aligned_and_writes_may_not() {
    let body = "    add (M1_NM, 1) B(0,0)<1> B(0,0)<0;1,0> 0x4:uq\n";
    for read in ["svm_block_ld", "svm_block_ld.unaligned"] {
        let r = run(&format!("{body}    {read} (1) B(0,0)<0;1,0> D.0"), 0x01, 0);
        assert_eq!(&r.bytes("D")[..16], &(4..20u8).collect::<Vec<_>>()[..], "{read}");
    }
    for (line, op) in [
        ("svm_block_ld.aligned (1) B(0,0)<0;1,0> D.0", "aligned read"),
        ("svm_block_st (1) B(0,0)<0;1,0> S.0", "write"),
    ] {
        let r = run_with(DECLS, &format!("{body}    {line}"), 8, 1, |p, m| setup(p, m, 0));
        let fault = r.result.as_ref().err().map(|f| f.render(&r.program)).unwrap_or_default();
        assert!(fault.contains("not 16-byte aligned"), "{op}: {fault}");
    }
    let r = run_with(
        DECLS,
        "    add (M1_NM, 1) B(0,0)<1> B(0,0)<0;1,0> 0x2:uq\n    svm_block_ld (1) B(0,0)<0;1,0> D.0",
        8,
        1,
        |p, m| setup(p, m, 0),
    );
    let fault = r.result.as_ref().err().map(|f| f.render(&r.program)).unwrap_or_default();
    assert!(fault.contains("not 4-byte aligned"), "{fault}");
}

#[test]
fn svm_gather4scaled_returns_one_plane_per_enabled_channel() {
    let r = run("    svm_gather4scaled.RB (M1, 8) B(0,0)<0;1,0> QOFF.0 D.0", 0xff, 16);
    let d = r.u32s("D");
    let dword = |a: u32| u32::from_le_bytes([a as u8, a as u8 + 1, a as u8 + 2, a as u8 + 3]);
    for lane in 0..8u32 {
        assert_eq!(d[lane as usize], dword(lane * 16), "R lane {lane}");
        assert_eq!(d[8 + lane as usize], dword(lane * 16 + 8), "B lane {lane}");
    }
}

#[test]
fn slm_scatter4_gather4_dword_atomic_and_oword() {
    let body = "    scatter4_scaled.R (M1, 8) %slm 0x0:ud OFF.0 S.0
    gather4_scaled.RG (M1, 8) %slm 0x0:ud OFF.0 D.0
    dword_atomic.inc (M1, 8) %slm OFF.0 %null.0 %null.0 S0.0
    gather_scaled.4 (M1, 8) %slm 0x0:ud OFF.0 S1.0
    oword_st (1) %slm 0x4:ud S.0
    oword_ld (2) %slm 0x3:ud D.64";
    let r = run(body, 0xff, 8);
    let d = r.u32s("D");
    for lane in 0..8u32 {
        assert_eq!(d[lane as usize], 0xa000 + lane, "R lane {lane}");
        assert_eq!(d[8 + lane as usize], 0, "G lane {lane}: nothing stored at +4");
    }
    assert_eq!(&r.u32s("S0")[..8], &(0..8).map(|l| 0xa000 + l).collect::<Vec<_>>()[..], "inc returns old");
    assert_eq!(&r.u32s("S1")[..8], &(0..8).map(|l| 0xa001 + l).collect::<Vec<_>>()[..], "after inc");
    // oword_st wrote S[0..4] at SLM byte 64; oword_ld read OWords 3 and 4 (bytes 48..80):
    // 48 and 56 hold lanes 6 and 7 after the increment, 52 and 60 were never written.
    assert_eq!(&d[16..20], &[0xa007, 0, 0xa008, 0]);
    assert_eq!(&d[20..24], &[0xa000, 0xa001, 0xa002, 0xa003]);
}

#[test]
fn svm_atomics_return_old_values_and_apply_their_op() {
    let body = "    mov (M1, 8) S0(0,0)<1> 0xfffffffe:ud
    mov (M1, 8) S1(0,0)<1> 0x3020100:ud
    svm_atomic.add (M1, 1) ADDR.0 D.0 S0.0 %null.0
    svm_atomic.minsint (M1, 1) ADDR.8 D.4 S0.0 %null.0
    svm_atomic.min (M1, 1) ADDR.16 D.8 S0.0 %null.0
    svm_atomic.cmpxchg (M1, 1) ADDR.24 D.12 S0.0 S1.0
    svm_atomic.cmpxchg (M1, 1) ADDR.32 D.16 S0.0 S1.0
    svm_atomic.add.64 (M1, 1) ADDR.40 D.32 S.0 %null.0";
    let r = run(body, 0xff, 16);
    let dword = |a: u32| u32::from_le_bytes([a as u8, a as u8 + 1, a as u8 + 2, a as u8 + 3]);
    let d = r.u32s("D");
    assert_eq!(d[0], dword(0), "add returns the old value");
    assert_eq!(u32::from_le_bytes(mem(&r, 0, 4).try_into().expect("4")), dword(0).wrapping_add(0xfffffffe));
    assert_eq!(u32::from_le_bytes(mem(&r, 16, 4).try_into().expect("4")), 0xfffffffe, "signed min picks -2");
    assert_eq!(
        u32::from_le_bytes(mem(&r, 32, 4).try_into().expect("4")),
        dword(32),
        "unsigned min keeps the old value"
    );
    // cmpxchg: new = (old == src1) ? src0 : old. Lane at 48 does not match; the test sets
    // memory at 64 to match first.
    assert_eq!(u32::from_le_bytes(mem(&r, 48, 4).try_into().expect("4")), dword(48));
    let q = u64::from_le_bytes(mem(&r, 80, 8).try_into().expect("8"));
    let old = u64::from_le_bytes(std::array::from_fn(|k| (80 + k) as u8));
    assert_eq!(q, old.wrapping_add(0x0000_a001_0000_a000), "64-bit add carries across dwords");
}

#[test]
fn a_cmpxchg_that_matches_stores_src0() {
    let body = "    mov (M1, 8) S0(0,0)<1> 0x12345678:ud
    mov (M1, 8) S1(0,0)<1> 0x3020100:ud
    svm_atomic.cmpxchg (M1, 1) ADDR.0 D.0 S0.0 S1.0";
    let r = run(body, 0xff, 0);
    assert_eq!(u32::from_le_bytes(mem(&r, 0, 4).try_into().expect("4")), 0x12345678);
    assert_eq!(r.u32s("D")[0], 0x03020100);
}

#[test]
fn an_unmapped_lane_faults_with_its_number() {
    let r = run_with(DECLS, "    svm_gather.4.1 (M1, 8) ADDR.0 D.0", 8, 0xff, |p, m| setup(p, m, 64));
    let fault = r.result.as_ref().expect_err("lane 4 is past the buffer");
    assert_eq!(fault.kind.to_string(), "lane 4: access to unmapped SVM memory at 0x100000100 (4 bytes)");
}

#[test]
fn binding_table_surfaces_map_to_svm_buffers_in_a_raw_launch() {
    let dir = crate::golden::scratch("surface");
    let kernel = ".version 4.1
.kernel \"s\"
.decl D v_type=G type=ud num_elts=8 align=GRF
.decl OFF v_type=G type=ud num_elts=8 align=GRF
.decl T6 v_type=T num_elts=1
.kernel_attr SimdSize=8
.function \"_main_0\"

_main_0:
    mov (M1, 8) OFF(0,0)<1> 0x76543210:uv
    shl (M1, 8) OFF(0,0)<1> OFF(0,0)<1;1,0> 0x2:ud
    gather_scaled.4 (M1, 8) T6 0x4:ud OFF.0 D.0
    add (M1, 8) D(0,0)<1> D(0,0)<1;1,0> 0x64:ud
    oword_st (2) T6 0x2:ud D.0
    ret (M1, 1)
";
    std::fs::write(dir.join("s.visaasm"), kernel).expect("kernel");
    let data: Vec<u8> = (0..16u32).flat_map(|i| (i * 10).to_le_bytes()).collect();
    std::fs::write(dir.join("buf.bin"), &data).expect("data");
    let launch = r#"{"kernel": "s.visaasm", "svm": [{"name": "buf", "address": "0x200000000", "size": 128, "file": "buf.bin", "output": "out.bin"}],
                    "surfaces": {"T6": "buf"}}"#;
    std::fs::write(dir.join("l.json"), launch).expect("launch");
    let mut l = vdb::launch::raw::load(&dir.join("l.json")).unwrap_or_else(|e| panic!("{e}"));
    let interp = vdb::exec::Interpreter::new(l.program.clone());
    vdb::exec::run_to_end(&interp, &mut l.machine, &mut l.scheduler, &mut vdb::exec::NullObserver)
        .expect("runs");
    let mut out = [0u8; 128];
    l.machine.svm.read(0x2_0000_0000, &mut out).expect("read");
    let words: Vec<u32> = out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
    // Element i (offset 4 + 4i) is 10*(i+1); +100; stored as two OWords at OWord 2 (byte 32).
    let want: Vec<u32> = (0..8).map(|i| 10 * (i + 1) + 100).collect();
    assert_eq!(&words[8..16], &want[..]);
    assert_eq!(&words[0..8], &(0..8).map(|i| i * 10).collect::<Vec<u32>>()[..]);
    let bad = r#"{"kernel": "s.visaasm", "svm": [{"name": "buf", "address": "0x200000000", "size": 128}], "surfaces": {"T9": "buf"}}"#;
    std::fs::write(dir.join("bad.json"), bad).expect("launch");
    let err = vdb::launch::raw::load(&dir.join("bad.json")).err().expect("error");
    assert_eq!(err.field.as_deref(), Some("surfaces.T9"));
}
