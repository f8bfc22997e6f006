//! The vISA 4.2 (IGC 2.x) instructions and types: every form parses with IGC's own syntax
//! (CISA.l/CISA.y), malformed ones are refused with the construct named, and those the vISA
//! documentation defines run against plain-Rust models of its pseudo-code on random
//! operands and execution sizes. The rest fault with `not implemented: MNEMONIC`.

use vdb::exec::FaultKind;

use crate::harness::{kernel_text, lcg, parse, run_with, set_var, Run};
use vdb::asm::{parse_files, ParseOptions};
use vdb::program::SourceFile;

const SIZES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Runs `body` as a SIMD32 kernel with every lane dispatched, after `fill` set variables.
fn exec(decls: &str, body: &str, fill: &[(&str, Vec<u8>)]) -> Run {
    run_with(decls, body, 32, u32::MAX, |p, m| {
        for (name, bytes) in fill {
            set_var(p, m, name, bytes);
        }
    })
}

fn bytes32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u16s(run: &Run, name: &str) -> Vec<u16> {
    run.bytes(name).chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
}

/// The parse error a one-instruction kernel body gets.
fn parse_error(decls: &str, line: &str) -> String {
    let text = kernel_text(decls, line, 16);
    let file = SourceFile { path: "t.visaasm".into(), text };
    match parse_files(vec![file], &ParseOptions::default()) {
        Ok(_) => panic!("parses: {line}"),
        Err(d) => d.render(),
    }
}

/// The `not implemented` message of a run that must fault on one.
fn not_implemented(run: &Run) -> String {
    match &run.result {
        Err(f) => match &f.kind {
            FaultKind::NotImplemented(m) => m.clone(),
            other => panic!("faulted otherwise: {other}"),
        },
        Ok(_) => panic!("ran to the end"),
    }
}

const TYPE_DECLS: &str = "\
.decl A v_type=G type=d num_elts=32 align=hword
.decl B v_type=G type=d num_elts=32 align=hword
.decl C v_type=G type=d num_elts=32 align=hword
.decl R v_type=G type=d num_elts=64 align=hword
.decl F v_type=G type=f num_elts=32 align=hword
.decl G v_type=G type=f num_elts=32 align=hword
.decl H v_type=G type=hf num_elts=32 align=hword
.decl Q8 v_type=G type=bf8 num_elts=32 align=hword
.decl E8 v_type=G type=hf8 num_elts=32 align=hword
.decl T32 v_type=G type=tf32 num_elts=32 align=hword
.decl X4 v_type=G type=e2m1 num_elts=64 align=hword
.decl W v_type=G type=BF num_elts=32 align=hword
.decl Addr v_type=A num_elts=1
.decl P1 v_type=P num_elts=32
.decl P2 v_type=P num_elts=32";

#[test]
fn new_opcodes_and_types_parse_in_igc_syntax() {
    let body = "\
    add3 (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0> 0x3e:d
    (P1) add3.o (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0> (-)A(0,0)<1;1,0>
    bfn.xd8 (M1_NM, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0> A(0,0)<1;1,0>
    madw (M1, 8) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0> 0x0:ud
    fcvt (M1_NM, 16) Q8(0,0)<1> H(0,0)<1;1,0>
    fcvt (M1_NM, 16) E8(0,0)<1> H(0,0)<1;1,0>
    fcvt (M1, 16) T32(0,0)<1> F(0,0)<1;1,0>
    srnd (M1, 16) H(0,0)<1> F(0,0)<1;1,0> 0x1234:uw
    invm (M1, 16) F(0,0)<1> P1 G(0,0)<1;1,0> F(0,0)<1;1,0>
    (P2) rsqtm (M1, 16) F(0,0)<1> P1 G(0,0)<1;1,0>
    tanh (M1, 16) F(0,0)<1> G(0,0)<1;1,0>
    sigm.sat (M1, 16) F(0,0)<1> G(0,0)<1;1,0>
    lfsr.b32 (M1, 16) A(0,0)<1> B(0,0)<1;1,0> 0x1d872b41:ud
    (P1) lfsr.b8v4 (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0>
    shfl_idx4 (M1, 16) R.0 B(0,0)<1;1,0> C(0,0)<1;1,0>
    dnscl.bftoe2m1.mode1.srnd (M1, 16) R.0 A.0 B.0 C.0
    dnscl.hftoint4.mode3.rne (M1, 16) R.0 A.0 B.0 C.0
    dpas.s8.u4.8.8 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpas.bf.bf.8.8 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpas.hf.hf.8.1 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpas.tf32.tf32.8.4 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpas.bf8.hf8.8.8 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpas.e2m1.e2m1.4.2 (M1, 16) R.0 R.0 B.0 C(0,0)
    dpasw.u2.s2.8.8 (M1, 8) R.0 R.0 B.0 C(0,0)
    bdpas.bf.bf.8.8 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)
    bdpas.bf8.hf8.8.8 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)
    bdpas.e2m1.e2m1.8.8 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)
    raw_sends.15.1.0.8 (M1, 1) 0x0:ud 0x2888403:ud A.0 %null.0 A.0
    nbarrier.wait 0x0:b
    mov (M1, 1) W(0,0)<1> 0x3f80:bf
    mov (M1, 1) F(0,0)<1> r[Addr(0), 0]<0;1,0>:bf";
    let prog = parse(&kernel_text(TYPE_DECLS, body, 16));
    let ops: Vec<&str> = prog.insts.iter().map(|i| i.op.mnemonic()).collect();
    for want in ["add3", "bfn", "madw", "fcvt", "srnd", "invm", "rsqtm", "tanh", "sigm", "lfsr"] {
        assert!(ops.contains(&want), "{want}");
    }
    for want in ["shfl_idx4", "dnscl", "dpas", "dpasw", "bdpas", "raw_sends", "nbarrier"] {
        assert!(ops.contains(&want), "{want}");
    }
    // add3.o's predicate is its overflow destination, not a guard.
    let add3o = &prog.insts[1];
    assert!(add3o.pred.is_none());
    assert!(matches!(add3o.operands.last(), Some(vdb::isa::Operand::Pred(_))));
    // rsqtm keeps its guard predicate and has the early-out predicate as operand 1.
    assert!(prog.insts[9].pred.is_some());
    let ty = |name: &str| prog.var(prog.var_id(vdb::isa::UnitId(0), name).expect("var")).ty;
    use vdb::isa::DataType as T;
    assert_eq!([ty("Q8"), ty("E8"), ty("T32"), ty("X4"), ty("W")], [T::Bf8, T::Hf8, T::Tf32, T::E2m1, T::Bf]);
}

#[test]
fn malformed_forms_are_refused_with_the_construct_named() {
    let cases = [
        ("    lfsr.b64 (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0>", "b64"),
        ("    lfsr (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0>", "'lfsr' needs a suffix"),
        ("    dnscl.bftoe2m1.mode4.rne (M1, 16) R.0 A.0 B.0 C.0", "mode4"),
        ("    dnscl.ftoe2m1.mode0.rne (M1, 16) R.0 A.0 B.0 C.0", "ftoe2m1"),
        ("    bdpas.bf.bf.8.4 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)", "'.4'"),
        ("    bdpas.s8.s8.8.8 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)", "s8"),
        ("    dpas.s8.tf32.8.8 (M1, 16) R.0 R.0 B.0 C(0,0)", "tf32"),
        ("    dpas.s8.s8.3.8 (M1, 16) R.0 R.0 B.0 C(0,0)", "'.3'"),
        ("    dpas.s8.s8.8.9 (M1, 16) R.0 R.0 B.0 C(0,0)", "'.9'"),
        ("    dpasw.tf32.tf32.8.8 (M1, 8) R.0 R.0 B.0 C(0,0)", "tf32"),
        ("    invm (M1, 16) F(0,0)<1> G(0,0)<1> G(0,0)<1;1,0> F(0,0)<1;1,0>", "invm"),
        ("    add3.o (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0> A(0,0)<1;1,0>", "add3.o"),
        ("    (!P1) add3.o (M1, 16) A(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0> A(0,0)<1;1,0>", "add3.o"),
        ("    mov (M1, 1) F(0,0)<1> r[Addr(0), 0]<0;1,0>:bf8", "bf8"),
        ("    mov (M1, 1) W(0,0)<1> 0x3f:hf8", "hf8"),
        ("    shfl_idx4 (M1, 16) R(0,0)<1> B(0,0)<1;1,0> C(0,0)<1;1,0>", "byte offset"),
    ];
    for (line, needle) in cases {
        let msg = parse_error(TYPE_DECLS, line);
        assert!(msg.contains(needle), "{line}: {msg}");
    }
    let msg = parse_error(".decl Z v_type=G type=fp8 num_elts=8", "");
    assert!(msg.contains("fp8"), "{msg}");
}

/// Every IGC 2.x dump in the shared spec parses (read in place, never copied).
#[test]
fn the_igc2_dumps_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/real/igc2");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut parsed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "visaasm") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let file = SourceFile { path: path.display().to_string(), text };
        // Xe2 and later: 64-byte GRFs (not every dump ends with a `//Platform:` line).
        if let Err(d) = parse_files(vec![file], &ParseOptions { grf_size: 64 }) {
            panic!("{}: {}", path.display(), d.render());
        }
        parsed += 1;
    }
    assert!(parsed > 0);
}

const INT_DECLS: &str = "\
.decl A v_type=G type=T num_elts=32 align=hword
.decl B v_type=G type=T num_elts=32 align=hword
.decl C v_type=G type=T num_elts=32 align=hword
.decl R v_type=G type=T num_elts=32 align=hword
.decl S v_type=G type=T num_elts=32 align=hword
.decl P1 v_type=P num_elts=32";

/// add3 (ADD3.md) and add3.o (ADD3O.md): the wrapped sum, and the overflow bit = the exact
/// sum leaves the dst type's range; lanes past the execution size are untouched.
#[test]
fn add3_and_add3o_match_the_model() {
    let mut seed = 28;
    for case in 0..48 {
        let (ty, lo, hi): (&str, i64, i64) = match case % 3 {
            0 => ("d", i32::MIN.into(), i32::MAX.into()),
            1 => ("ud", 0, u32::MAX.into()),
            _ => ("w", i16::MIN.into(), i16::MAX.into()),
        };
        let n = SIZES[(lcg(&mut seed) % 6) as usize];
        let size = if ty == "w" { 2 } else { 4 };
        let mut data = [[0i64; 32]; 3];
        let mut fill = Vec::new();
        for (k, name) in ["A", "B", "C"].iter().enumerate() {
            let mut bytes = Vec::new();
            for slot in data[k].iter_mut() {
                // Extremes now and then, so that overflow happens both ways.
                let r = lcg(&mut seed);
                *slot = match r % 4 {
                    0 => hi,
                    1 => lo,
                    _ => lo + (r >> 8) as i64 % (hi - lo + 1),
                };
                bytes.extend_from_slice(&slot.to_le_bytes()[..size]);
            }
            fill.push((*name, bytes));
        }
        let body = format!(
            "    add3 (M1, {n}) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0> C(0,0)<1;1,0>\n    (P1) add3.o (M1, {n}) S(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0> C(0,0)<1;1,0>"
        );
        let run = exec(&INT_DECLS.replace("type=T", &format!("type={ty}")), &body, &fill).ok();
        let (r, s) = (run.bytes("R"), run.bytes("S"));
        let mut want_flags = 0u32;
        for lane in 0..32usize {
            let got_r = &r[lane * size..(lane + 1) * size];
            let got_s = &s[lane * size..(lane + 1) * size];
            if lane as u32 >= n {
                assert!(got_r.iter().chain(got_s).all(|&b| b == 0), "lane {lane} written");
                continue;
            }
            let sum = data[0][lane] + data[1][lane] + data[2][lane];
            assert_eq!(got_r, &sum.to_le_bytes()[..size], "{ty} SIMD{n} lane {lane}");
            assert_eq!(got_s, got_r);
            want_flags |= u32::from(sum < lo || sum > hi) << lane;
        }
        assert_eq!(run.pred("P1"), want_flags, "{ty} SIMD{n} overflow bits");
    }
}

/// bfn.xHH (BFN.md): each result bit is bit (s0 + 2·s1 + 4·s2) of the table.
#[test]
fn bfn_matches_the_model() {
    let mut seed = 5;
    for _ in 0..24 {
        let table = lcg(&mut seed) as u8;
        let n = SIZES[(lcg(&mut seed) % 6) as usize];
        let vals: Vec<Vec<u32>> = (0..3).map(|_| (0..32).map(|_| lcg(&mut seed) as u32).collect()).collect();
        let body =
            format!("    bfn.x{table:x} (M1, {n}) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0> C(0,0)<1;1,0>");
        let fill = [("A", bytes32(&vals[0])), ("B", bytes32(&vals[1])), ("C", bytes32(&vals[2]))];
        let run = exec(&INT_DECLS.replace("type=T", "type=ud"), &body, &fill).ok();
        let got = run.u32s("R");
        for lane in 0..n as usize {
            let mut want = 0u32;
            for bit in 0..32 {
                let idx = (vals[0][lane] >> bit & 1)
                    + ((vals[1][lane] >> bit & 1) << 1)
                    + ((vals[2][lane] >> bit & 1) << 2);
                want |= u32::from(table >> idx & 1) << bit;
            }
            assert_eq!(got[lane], want, "table {table:#x} lane {lane}");
        }
    }
}

/// madw (MADW.md): src0·src1 + src2 in 64 bits; the low dwords, then from the next whole
/// register on the high dwords.
#[test]
fn madw_matches_the_model() {
    let mut seed = 9;
    for case in 0..24 {
        let signed = case % 2 == 0;
        let ty = if signed { "d" } else { "ud" };
        let n = SIZES[(lcg(&mut seed) % 6) as usize];
        let vals: Vec<Vec<u32>> = (0..3).map(|_| (0..32).map(|_| lcg(&mut seed) as u32).collect()).collect();
        let decls = INT_DECLS
            .replace("type=T", &format!("type={ty}"))
            .replace("R v_type=G type=d num_elts=32", "R v_type=G type=d num_elts=64")
            .replace("R v_type=G type=ud num_elts=32", "R v_type=G type=ud num_elts=64");
        let body = format!("    madw (M1, {n}) R(0,0)<1> A(0,0)<1;1,0> B(0,0)<1;1,0> C(0,0)<1;1,0>");
        let fill = [("A", bytes32(&vals[0])), ("B", bytes32(&vals[1])), ("C", bytes32(&vals[2]))];
        let run = exec(&decls, &body, &fill).ok();
        let got = run.u32s("R");
        // 32-byte GRFs (no platform line): the high half starts at the next whole register.
        let high = (n as usize * 4).div_ceil(32) * 8;
        for lane in 0..n as usize {
            let full: i128 = if signed {
                i128::from(vals[0][lane] as i32) * i128::from(vals[1][lane] as i32)
                    + i128::from(vals[2][lane] as i32)
            } else {
                i128::from(vals[0][lane]) * i128::from(vals[1][lane]) + i128::from(vals[2][lane])
            };
            assert_eq!(got[lane], full as u32, "{ty} SIMD{n} low lane {lane}");
            assert_eq!(got[high + lane], (full >> 32) as u32, "{ty} SIMD{n} high lane {lane}");
        }
    }
}

/// Plain-Rust models of the conversions, on the bit patterns.
mod model {
    /// f16 bits → value.
    pub fn hf(x: u16) -> f64 {
        let (s, e, m) = (x >> 15, (x >> 10) & 0x1f, f64::from(x & 0x3ff));
        let v = match e {
            0 => m * 2f64.powi(-24),
            31 if m == 0.0 => f64::INFINITY,
            31 => f64::NAN,
            _ => (1.0 + m / 1024.0) * 2f64.powi(i32::from(e) - 15),
        };
        if s == 1 {
            -v
        } else {
            v
        }
    }

    /// HF → BF8 (FCVT.md: RTE, denormals kept): round the low byte away, ties to even.
    pub fn hf_to_bf8(x: u16) -> u8 {
        if x & 0x7fff > 0x7c00 {
            return ((x >> 8) as u8) | 0x02; // quiet NaN, sign kept
        }
        let (hi, lo) = (x >> 8, x & 0xff);
        let up = lo > 0x80 || (lo == 0x80 && hi & 1 == 1);
        (hi + u16::from(up)) as u8
    }

    /// E4M3 bits → value, by the format's definition (bias 7, S.1111.111 the only NaN).
    pub fn hf8(b: u8) -> f64 {
        let (s, e, m) = (b >> 7, (b >> 3) & 0xf, f64::from(b & 7));
        let v = if b & 0x7f == 0x7f {
            f64::NAN
        } else if e == 0 {
            m / 8.0 * 2f64.powi(-6)
        } else {
            (1.0 + m / 8.0) * 2f64.powi(i32::from(e) - 7)
        };
        if s == 1 {
            -v
        } else {
            v
        }
    }

    /// HF → HF8 by search: the nearest E4M3 value, ties to the even pattern, past 448 the NaN.
    pub fn hf_to_hf8(x: u16) -> u8 {
        let v = hf(x);
        let sign = if v.is_sign_negative() { 0x80 } else { 0 };
        if !v.is_finite() || v.abs() >= 464.0 {
            return sign | 0x7f;
        }
        let mut best = 0u8;
        for b in 0..0x7fu8 {
            let (d, db) = ((hf8(b) - v.abs()).abs(), (hf8(best) - v.abs()).abs());
            if d < db || (d == db && b & 1 == 0) {
                best = b;
            }
        }
        sign | best
    }

    /// F → TF32 (FCVT.md: RTE, denormals flushed): round the low 13 bits away.
    pub fn f_to_tf32(x: u32) -> u32 {
        if x & 0x7f80_0000 == 0 {
            return x & 0x8000_0000;
        }
        if x & 0x7fff_ffff >= 0x7f80_0000 {
            return x;
        }
        let (keep, lo) = (x & !0x1fff, x & 0x1fff);
        let up = lo > 0x1000 || (lo == 0x1000 && keep & 0x2000 != 0);
        keep + if up { 0x2000 } else { 0 }
    }

    /// SRND.md F → HF for a result in HF's normal range: add Src1[12:0] to the mantissa,
    /// truncate 13 bits, rebias the exponent.
    pub fn srnd_f_to_hf(x: u32, r: u16) -> u16 {
        let t = ((x & 0x7fff_ffff) + u32::from(r & 0x1fff)) >> 13;
        let sign = ((x >> 16) & 0x8000) as u16;
        // f32 exponent bias 127 → f16 bias 15: subtract 112 from the exponent field.
        sign | (t - (112 << 10)) as u16
    }

    /// SRND.md HF → BF8 for a finite source: add Src1[7:0], keep the high byte.
    pub fn srnd_hf_to_bf8(x: u16, r: u8) -> u8 {
        let sign = (x >> 8) as u8 & 0x80;
        sign | (((x & 0x7fff) + u16::from(r)) >> 8).min(0x7c) as u8
    }
}

const FP_DECLS: &str = "\
.decl H v_type=G type=hf num_elts=512 align=hword
.decl Q8 v_type=G type=bf8 num_elts=512 align=hword
.decl U8 v_type=G type=ub num_elts=512 align=hword
.decl E8 v_type=G type=hf8 num_elts=512 align=hword
.decl B8 v_type=G type=b num_elts=512 align=hword
.decl F v_type=G type=f num_elts=512 align=hword
.decl T32 v_type=G type=tf32 num_elts=512 align=hword
.decl D32 v_type=G type=ud num_elts=512 align=hword
.decl H2 v_type=G type=hf num_elts=512 align=hword
.decl RW v_type=G type=uw num_elts=512 align=hword
.decl RB v_type=G type=ub num_elts=512 align=hword";

/// One instruction per 32-lane slice of 512 elements. In `line`, `@N` stands for the row of
/// the slice's first element in an operand of N-byte elements (32-byte GRFs: 32 elements of
/// N bytes are N registers).
fn slices(line: &str) -> String {
    (0..16)
        .map(|k| {
            let mut l = line.to_string();
            for size in [1, 2, 4] {
                l = l.replace(&format!("@{size}"), &(k * size).to_string());
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// fcvt (FCVT.md) over random HF and F bit patterns plus the edge cases, both spellings of
/// each FP8 type (vISA 4.1's UB/B and IGC 2.x's bf8/hf8), against the bit-level models.
#[test]
fn fcvt_matches_the_model() {
    let mut seed = 77;
    for round in 0..6 {
        let mut hf: Vec<u16> = (0..512).map(|_| lcg(&mut seed) as u16).collect();
        if round == 0 {
            // Every 128th pattern: zeros, denormals, the largest finite, infinities, NaNs.
            for (i, v) in hf.iter_mut().enumerate() {
                *v = (i as u16) << 7;
            }
            hf[1] = 0x0001;
            hf[2] = 0x7bff;
            hf[3] = 0x5f80; // 480 in f16: past HF8's 448
        }
        let f: Vec<u32> = (0..512)
            .map(|i| {
                if round == 0 && i < 4 {
                    [0x0000_0001, 0x7f7f_ffff, 0x3f80_1000, 0x3f80_3000][i]
                } else {
                    lcg(&mut seed) as u32
                }
            })
            .collect();
        let body = [
            slices("    fcvt (M1_NM, 32) Q8(@1,0)<1> H(@2,0)<1;1,0>"),
            slices("    fcvt (M1_NM, 32) U8(@1,0)<1> H(@2,0)<1;1,0>"),
            slices("    fcvt (M1_NM, 32) E8(@1,0)<1> H(@2,0)<1;1,0>"),
            slices("    fcvt (M1_NM, 32) B8(@1,0)<1> H(@2,0)<1;1,0>"),
            slices("    fcvt (M1, 32) T32(@4,0)<1> F(@4,0)<1;1,0>"),
            slices("    fcvt (M1, 32) D32(@4,0)<1> F(@4,0)<1;1,0>"),
            slices("    fcvt (M1, 32) H2(@2,0)<1> E8(@1,0)<1;1,0>"),
            slices("    fcvt (M1, 32) F(@4,0)<1> T32(@4,0)<1;1,0>"),
        ]
        .join("\n");
        let run = exec(FP_DECLS, &body, &[("H", bytes16(&hf)), ("F", bytes32(&f))]).ok();
        let (q8, u8s, e8, b8) = (run.bytes("Q8"), run.bytes("U8"), run.bytes("E8"), run.bytes("B8"));
        let (t32, d32, back, f_after) = (run.u32s("T32"), run.u32s("D32"), u16s(&run, "H2"), run.u32s("F"));
        for i in 0..512 {
            let x = hf[i];
            assert_eq!(q8[i], model::hf_to_bf8(x), "bf8 of {x:#06x}");
            assert_eq!(u8s[i], q8[i], "ub spelling of {x:#06x}");
            assert_eq!(e8[i], model::hf_to_hf8(x), "hf8 of {x:#06x}");
            assert_eq!(b8[i], e8[i], "b spelling of {x:#06x}");
            if f32::from_bits(f[i]).is_nan() {
                // FCVT.md says nothing of NaN payloads: a NaN stays a NaN of the same sign.
                assert!(
                    f32::from_bits(t32[i]).is_nan() && t32[i] >> 31 == f[i] >> 31 && t32[i] & 0x1fff == 0
                );
            } else {
                assert_eq!(t32[i], model::f_to_tf32(f[i]), "tf32 of {:#010x}", f[i]);
            }
            assert_eq!(d32[i], t32[i], "ud spelling of {:#010x}", f[i]);
            // HF8 → HF is exact; TF32 → F is a copy.
            let wide = model::hf8(e8[i]);
            if wide.is_nan() {
                assert!(model::hf(back[i]).is_nan());
            } else {
                assert_eq!(model::hf(back[i]), wide, "hf of hf8 {:#04x}", e8[i]);
            }
            assert_eq!(f_after[i], t32[i]);
        }
    }
}

/// srnd (SRND.md): F → HF with Src1[12:0] and HF → BF8 with Src1[7:0], against the models
/// for finite sources in the dst's normal range, on random values and random numbers.
#[test]
fn srnd_matches_the_model() {
    let mut seed = 3;
    for _ in 0..4 {
        // f32 values with HF-normal exponents (2^-14 .. 2^15), either sign.
        let f: Vec<u32> = (0..512)
            .map(|_| {
                let r = lcg(&mut seed) as u32;
                (r & 0x807f_ffff) | ((113 + (r >> 8) % 29) << 23)
            })
            .collect();
        // Clearing bit 10 keeps the exponent below 31: finite values, denormals included.
        let hf: Vec<u16> = (0..512).map(|_| lcg(&mut seed) as u16 & 0xfbff).collect();
        let rw: Vec<u16> = (0..512).map(|_| lcg(&mut seed) as u16).collect();
        let rb: Vec<u8> = (0..512).map(|_| lcg(&mut seed) as u8).collect();
        let body = [
            slices("    srnd (M1, 32) H2(@2,0)<1> F(@4,0)<1;1,0> RW(@2,0)<1;1,0>"),
            slices("    srnd (M1, 32) Q8(@1,0)<1> H(@2,0)<1;1,0> RB(@1,0)<1;1,0>"),
        ]
        .join("\n");
        let fill = [("F", bytes32(&f)), ("H", bytes16(&hf)), ("RW", bytes16(&rw)), ("RB", rb.clone())];
        let run = exec(FP_DECLS, &body, &fill).ok();
        let (h2, q8) = (u16s(&run, "H2"), run.bytes("Q8"));
        for i in 0..512 {
            let want = model::srnd_f_to_hf(f[i], rw[i]);
            assert_eq!(h2[i], want, "srnd f {:#010x} r {:#06x}", f[i], rw[i]);
            assert_eq!(q8[i], model::srnd_hf_to_bf8(hf[i], rb[i]), "srnd hf {:#06x} r {:#04x}", hf[i], rb[i]);
        }
    }
}

const MATH_DECLS: &str = "\
.decl X v_type=G type=f num_elts=32 align=hword
.decl Y v_type=G type=f num_elts=32 align=hword
.decl R v_type=G type=f num_elts=32 align=hword
.decl S v_type=G type=f num_elts=32 align=hword
.decl P1 v_type=P num_elts=32
.decl P2 v_type=P num_elts=32";

/// invm/rsqtm (INVM.md, RSQTM.md): the quotient and reciprocal square root, correctly
/// rounded here, and the early-out bit set exactly where the result is NaN, infinite or zero.
/// Lanes off the execution size keep their dst and predicate bits.
#[test]
fn invm_and_rsqtm_set_the_early_out_predicate() {
    let mut seed = 11;
    let specials = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1.0, -4.0, 1e-30];
    for _ in 0..16 {
        let n = SIZES[(lcg(&mut seed) % 6) as usize];
        let pick = |s: &mut u64| {
            let r = lcg(s);
            if r.is_multiple_of(4) {
                specials[(r >> 8) as usize % specials.len()]
            } else {
                f32::from_bits(r as u32 & 0x7fff_ffff | 0x2000_0000) * if r & 1 == 1 { -1.0 } else { 1.0 }
            }
        };
        let x: Vec<f32> = (0..32).map(|_| pick(&mut seed)).collect();
        let y: Vec<f32> = (0..32).map(|_| pick(&mut seed)).collect();
        let body = format!(
            "    invm (M1, {n}) R(0,0)<1> P1 X(0,0)<1;1,0> Y(0,0)<1;1,0>\n    rsqtm (M1, {n}) S(0,0)<1> P2 X(0,0)<1;1,0>"
        );
        let bits = |v: &[f32]| bytes32(&v.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
        let run = run_with(MATH_DECLS, &body, 32, u32::MAX, |p, m| {
            set_var(p, m, "X", &bits(&x));
            set_var(p, m, "Y", &bits(&y));
        })
        .ok();
        let (r, s) = (run.f32s("R"), run.f32s("S"));
        let (mut p1, mut p2) = (0u32, 0u32);
        let early = |v: f32| !v.is_finite() || v == 0.0;
        for lane in 0..32usize {
            if lane as u32 >= n {
                assert_eq!((r[lane].to_bits(), s[lane].to_bits()), (0, 0), "lane {lane} written");
                continue;
            }
            let q = (f64::from(x[lane]) / f64::from(y[lane])) as f32;
            let rs = (1.0 / f64::from(x[lane]).sqrt()) as f32;
            let flush = |v: f32| if v != 0.0 && v.abs() < f32::MIN_POSITIVE { 0.0f32.copysign(v) } else { v };
            for (got, want, what) in [(r[lane], flush(q), "invm"), (s[lane], flush(rs), "rsqtm")] {
                if want.is_nan() {
                    assert!(got.is_nan(), "{what} lane {lane}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "{what} {} {} lane {lane}", x[lane], y[lane]);
                }
            }
            p1 |= u32::from(early(r[lane])) << lane;
            p2 |= u32::from(early(s[lane])) << lane;
        }
        assert_eq!(run.pred("P1"), p1, "invm early out, SIMD{n}");
        assert_eq!(run.pred("P2"), p2, "rsqtm early out, SIMD{n}");
    }
}

/// tanh and sigm (no vISA page: tanh(x) and 1/(1+e^-x)) within an ulp of f64 libm, with
/// sigm's `.sat` and the special values.
#[test]
fn tanh_and_sigm_follow_their_definitions() {
    let mut seed = 17;
    let x: Vec<f32> = (0..32)
        .map(|i| match i {
            0 => f32::INFINITY,
            1 => f32::NEG_INFINITY,
            2 => -0.0,
            _ => (lcg(&mut seed) % 4001) as f32 / 100.0 - 20.0,
        })
        .collect();
    let body = "    tanh (M1, 32) R(0,0)<1> X(0,0)<1;1,0>\n    sigm (M1, 32) S(0,0)<1> X(0,0)<1;1,0>";
    let bits = bytes32(&x.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    let run = run_with(MATH_DECLS, body, 32, u32::MAX, |p, m| set_var(p, m, "X", &bits)).ok();
    let (t, s) = (run.f32s("R"), run.f32s("S"));
    for i in 0..32 {
        let v = f64::from(x[i]);
        let (wt, ws) = (v.tanh() as f32, (1.0 / (1.0 + (-v).exp())) as f32);
        assert!((t[i].to_bits() as i64 - wt.to_bits() as i64).abs() <= 1, "tanh {v}: {} vs {wt}", t[i]);
        assert!((s[i].to_bits() as i64 - ws.to_bits() as i64).abs() <= 1, "sigm {v}: {} vs {ws}", s[i]);
        assert!((0.0..=1.0).contains(&s[i]));
    }
    assert_eq!((t[0], t[1], s[0], s[1]), (1.0, -1.0, 1.0, 0.0));
    assert!(t[2] == 0.0 && t[2].is_sign_negative());
}

/// What vdb cannot run faults at the instruction with `not implemented: ` and the mnemonic.
#[test]
fn what_cannot_run_faults_naming_the_instruction() {
    let cases = [
        ("    lfsr.b32 (M1, 16) A(0,0)<1> B(0,0)<1;1,0> 0x1d872b41:ud", "lfsr.b32"),
        ("    shfl_idx4 (M1, 16) R.0 B(0,0)<1;1,0> C(0,0)<1;1,0>", "shfl_idx4"),
        ("    dnscl.bftoe2m1.mode0.rne (M1, 16) R.0 A.0 B.0 C.0", "dnscl.bftoe2m1.mode0.rne"),
        ("    bdpas.bf.bf.8.8 (M1, 16) R.0 R.0 B.0 C.0 A(0,0) A(0,1)", "bdpas.bf.bf.8.8"),
        ("    dpas.bf8.hf8.8.8 (M1, 16) R.0 R.0 B.0 C(0,0)", "dpas.bf8.hf8.8.8"),
        ("    dpasw.u4.u4.8.2 (M1, 8) R.0 R.0 B.0 C(0,0)", "dpasw.u4.u4.8.2"),
        ("    raw_sends.15.1.0.8 (M1, 1) 0x0:ud 0x2888403:ud A.0 %null.0 A.0", "raw_sends.15.1.0.8"),
        ("    fcvt.sat (M1_NM, 16) Q8(0,0)<1> H(0,0)<1;1,0>", "fcvt"),
        ("    fcvt (M1_NM, 16) Q8(0,0)<1> F(0,0)<1;1,0>", "fcvt"),
        ("    srnd (M1, 16) E8(0,0)<1> H(0,0)<1;1,0> 0x12:ub", "srnd"),
        ("    add (M1, 16) Q8(0,0)<1> Q8(0,0)<1;1,0> Q8(0,0)<1;1,0>", "add"),
        ("    mov (M1, 16) H(0,0)<1> E8(0,0)<1;1,0>", "mov"),
        ("    mov (M1, 16) X4(0,0)<1> X4(0,0)<1;1,0>", "NOFAULT"),
    ];
    for (line, mnemonic) in cases {
        let run = run_with(TYPE_DECLS, line, 16, 0xffff, |_, _| {});
        if mnemonic == "NOFAULT" {
            // A same-type move of any 4.2 type copies the bits.
            assert!(run.result.is_ok(), "{line}");
            continue;
        }
        let msg = not_implemented(&run);
        assert!(msg.starts_with(mnemonic), "{line}: {msg}");
        let shown = run.result.as_ref().err().map(|f| f.kind.to_string()).unwrap_or_default();
        assert!(shown.starts_with(&format!("not implemented: {mnemonic}")), "{shown}");
    }
}
