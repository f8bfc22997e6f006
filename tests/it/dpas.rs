//! `dpas` against D = C + A x B written from DPAS.md's matrix view (A: row-major elements of
//! Src2, M x K; B: column i of Src1 in dword i of each register, 32/W-bit elements packed;
//! C and D: a register per row): integer precisions exactly, bf and hf with each dot2 rounded
//! to f32 and then the sum, on 32-byte (exec 8) and 64-byte (exec 16) GRFs, repeat counts 1-8.

use vdb::machine::Machine;
use vdb::program::Program;

use crate::harness::{lcg, run_text, set_var};

fn kernel(op: &str, n: u32, xe2: bool) -> String {
    let platform = if xe2 { "//Platform: XE2\n" } else { "" };
    format!(
        ".version 4.2
.kernel \"dp\"
.decl DST v_type=G type=ud num_elts=256 align=GRF
.decl C v_type=G type=ud num_elts=256 align=GRF
.decl B v_type=G type=ud num_elts=256 align=GRF
.decl A v_type=G type=ud num_elts=256 align=GRF
.kernel_attr Target=\"3d\"
.kernel_attr SimdSize={n}
.function \"_main_0\"

_main_0:
    {op} (M1, {n}) DST.0 C.0 B.0 A(0,0)
    ret (M1, 1)
{platform}"
    )
}

/// Element `e` of `bits` bits from a little-endian byte stream.
/// Runs `op` at exec size `n` with C, B and A holding the given bytes; the DST bytes (a fault panics,
/// naming the instruction).
fn run_dpas(op: &str, n: u32, xe2: bool, [c, b, a]: [&[u8]; 3]) -> Vec<u8> {
    let set = |p: &Program, m: &mut Machine| {
        set_var(p, m, "C", c);
        set_var(p, m, "B", b);
        set_var(p, m, "A", a);
    };
    let r = run_text(&kernel(op, n, xe2), n, u32::MAX >> (32 - n), set);
    if let Err(f) = &r.result {
        panic!("{op}: {}", f.render(&r.program));
    }
    r.bytes("DST")
}

fn elem(bytes: &[u8], e: usize, bits: usize, signed: bool) -> i64 {
    let at = e * bits;
    let word = u32::from_le_bytes(bytes[at / 8 / 4 * 4..at / 8 / 4 * 4 + 4].try_into().expect("4"));
    let v = (u64::from(word) >> (at % 32)) & ((1u64 << bits) - 1);
    if signed && v >> (bits - 1) & 1 == 1 {
        v as i64 - (1i64 << bits)
    } else {
        v as i64
    }
}

fn random_bytes(s: &mut u64, n: usize) -> Vec<u8> {
    (0..n).map(|_| lcg(s) as u8).collect()
}

#[test]
fn integer_dpas_is_c_plus_a_times_b() {
    let precisions = [
        ("u8", 8, false),
        ("s8", 8, true),
        ("u4", 4, false),
        ("s4", 4, true),
        ("u2", 2, false),
        ("s2", 2, true),
    ];
    let mut s = 42u64;
    let mut cases = 0;
    for (w, wbits, wsigned) in precisions {
        for (a, abits, asigned) in precisions {
            for (xe2, n) in [(false, 8u32), (true, 16)] {
                let rc = [1u32, 2, 4, 8][(lcg(&mut s) % 4) as usize];
                let op = format!("dpas.{w}.{a}.8.{rc}");
                let grf = if xe2 { 64 } else { 32 };
                let ops = if wbits == 8 || abits == 8 { 4 } else { 8 };
                let k = 8 * ops;
                let (cb, bb, ab) =
                    (random_bytes(&mut s, 1024), random_bytes(&mut s, 1024), random_bytes(&mut s, 1024));
                let d = run_dpas(&op, n, xe2, [&cb, &bb, &ab]);
                let per_dw = 32 / wbits;
                for row in 0..rc as usize {
                    for i in 0..n as usize {
                        let c_at = row * grf + 4 * i;
                        let c = u32::from_le_bytes(cb[c_at..c_at + 4].try_into().expect("4"));
                        let mut sum = c;
                        for kk in 0..k {
                            let a_e = elem(&ab, row * k + kk, abits, asigned);
                            // B: element kk of column i is in dword i of register kk / per_dw.
                            let dw = (kk / per_dw) * grf + 4 * i;
                            let b_e = elem(&bb[dw..dw + 4], kk % per_dw, wbits, wsigned);
                            sum = sum.wrapping_add((a_e * b_e) as u32);
                        }
                        let got = u32::from_le_bytes(d[c_at..c_at + 4].try_into().expect("4"));
                        assert_eq!(got, sum, "{op} exec {n}: row {row} channel {i}");
                    }
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 72);
}

fn bf16(bits: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(bits) << 16))
}

fn hf(bits: u16) -> f64 {
    f64::from(vdb::exec::convert::f16_bits_to_f32(bits))
}

#[test]
fn bf_and_hf_dpas_round_each_dot2_then_the_sum_to_f32() {
    let mut s = 7u64;
    for (p, decode) in [("bf", bf16 as fn(u16) -> f64), ("hf", hf as fn(u16) -> f64)] {
        for (xe2, n) in [(false, 8u32), (true, 16)] {
            let rc = 4;
            let op = format!("dpas.{p}.{p}.8.{rc}");
            let grf = if xe2 { 64 } else { 32 };
            // Finite values of moderate size (exponents near 0) so sums stay finite.
            let small = |s: &mut u64| -> Vec<u8> {
                (0..512)
                    .flat_map(|_| {
                        let sign = (lcg(s) & 1) << 15;
                        let bits =
                            if p == "bf" { 0x3c00 + (lcg(s) % 0x0800) } else { 0x3000 + (lcg(s) % 0x1800) };
                        ((sign | bits) as u16).to_le_bytes()
                    })
                    .collect()
            };
            let (bb, ab) = (small(&mut s), small(&mut s));
            let cb: Vec<u8> =
                (0..256).flat_map(|_| ((lcg(&mut s) % 200) as f32 - 100.0).to_le_bytes()).collect();
            let d = run_dpas(&op, n, xe2, [&cb, &bb, &ab]);
            let half = |bytes: &[u8], e: usize| u16::from_le_bytes([bytes[2 * e], bytes[2 * e + 1]]);
            for row in 0..rc {
                for i in 0..n as usize {
                    let at = row * grf + 4 * i;
                    let mut acc = f32::from_le_bytes(cb[at..at + 4].try_into().expect("4"));
                    for depth in 0..8 {
                        let b_dw = depth * grf + 4 * i;
                        let mut dot = 0f64;
                        for e in 0..2 {
                            let kk = depth * 2 + e;
                            dot += decode(half(&ab, row * 16 + kk)) * decode(half(&bb[b_dw..], e));
                        }
                        acc += dot as f32;
                    }
                    let got = f32::from_le_bytes(d[at..at + 4].try_into().expect("4"));
                    assert_eq!(
                        got.to_bits(),
                        acc.to_bits(),
                        "{op} exec {n}: row {row} channel {i}: {got} vs {acc}"
                    );
                }
            }
        }
    }
}

#[test]
fn tf32_dpas_uses_each_f32_containers_top_19_bits() {
    let mut s = 11u64;
    for (xe2, n) in [(false, 8u32), (true, 16)] {
        let rc = 2;
        let op = format!("dpas.tf32.tf32.8.{rc}");
        let grf = if xe2 { 64 } else { 32 };
        let floats = |s: &mut u64| -> Vec<u8> {
            (0..256).flat_map(|_| (((lcg(s) % 2000) as f32 - 1000.0) / 37.0).to_le_bytes()).collect()
        };
        let (bb, ab, cb) = (floats(&mut s), floats(&mut s), floats(&mut s));
        let d = run_dpas(&op, n, xe2, [&cb, &bb, &ab]);
        let f = |bytes: &[u8], at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        // TF32 keeps 10 mantissa bits: the container's low 13 bits are not read.
        let tf32 = |v: f32| f64::from(f32::from_bits(v.to_bits() & !0x1fff));
        for row in 0..rc {
            for i in 0..n as usize {
                let at = row * grf + 4 * i;
                let mut acc = f(&cb, at);
                for kk in 0..8 {
                    // One element per dword: K = 8; B's element kk is dword i of register kk.
                    acc += (tf32(f(&ab, 4 * (row * 8 + kk))) * tf32(f(&bb, kk * grf + 4 * i))) as f32;
                }
                assert_eq!(f(&d, at).to_bits(), acc.to_bits(), "{op} exec {n}: row {row} channel {i}");
            }
        }
    }
}
