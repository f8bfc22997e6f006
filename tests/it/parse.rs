//! Parser tests over real IGC dumps, hand-written probes (with GenX_IR's verdicts from
//! RESULTS.txt), broken files, instruction ids, and never-panic fuzzing.

use std::path::{Path, PathBuf};
use vdb::asm::{parse_files, parse_files_with_warnings, parse_str, ParseOptions};
use vdb::isa::Opcode;
use vdb::program::{Program, SourceFile};

use crate::harness::visaasm_files;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn source(path: &Path) -> SourceFile {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    SourceFile { path: path.display().to_string(), text }
}

/// Real dumps and kernels: everything outside broken/ and the probes directory.
fn good_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    visaasm_files(&data("real"), &mut files);
    visaasm_files(&data("kernels"), &mut files);
    files.retain(|p| {
        let s = p.to_string_lossy();
        // probe_roundtrip is GenX_IR's own re-print, which GenX_IR itself rejects
        // (`fence_local.` with an empty option list).
        !s.contains("/broken/")
            && !s.contains("/probes/")
            && !s.ends_with("probe_roundtrip.visaasm")
            && !s.contains("/rt2/")
    });
    files
}

fn parse_one(path: &Path) -> Program {
    let (prog, diags) = parse_files_with_warnings(vec![source(path)], &ParseOptions::default());
    match prog {
        Some(p) => p,
        None => panic!("{} failed:\n{}", path.display(), diags.render()),
    }
}

#[test]
fn parse_every_real_file_without_errors_or_faults() {
    let files = good_files();
    assert!(files.len() >= 35, "only {} files found", files.len());
    for path in &files {
        let prog = parse_one(path);
        let faults: Vec<_> = prog.insts.iter().filter_map(|i| i.static_fault.as_ref()).collect();
        assert!(faults.is_empty(), "{}: unexpected static faults {faults:?}", path.display());
        assert!(prog.insts.len() > 1, "{}", path.display());
    }
}

#[test]
fn parse_multi_file_programs_put_the_kernel_first() {
    let dir = data("real/calls_indirect");
    let names = ["simd8_entry_0001_f0.visaasm", "simd8_entry_0001.visaasm"];
    let existing: Vec<_> = names.iter().map(|n| dir.join(n)).filter(|p| p.exists()).collect();
    let stack = [
        data("real/calls_stackcall_func_helper_simd8.visaasm"),
        data("real/calls_stackcall_kernel_simd8.visaasm"),
    ];
    for group in [existing, stack.to_vec()] {
        if group.is_empty() {
            continue;
        }
        let files: Vec<_> = group.iter().map(|p| source(p)).collect();
        let prog = parse_files(files, &ParseOptions::default()).unwrap_or_else(|d| panic!("{}", d.render()));
        assert_eq!(prog.kernel().kind, vdb::program::UnitKind::Kernel);
        for u in &prog.units {
            assert_eq!(prog.inst(vdb::isa::InstIdx(u.end.0 - 1)).op, Opcode::EndOfCode);
        }
    }
    let files: Vec<_> = stack.iter().map(|p| source(p)).collect();
    let prog = parse_files(files, &ParseOptions::default()).unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(prog.units.len(), 2);
    assert!(prog.function_unit("helper").is_some());
}

/// The `/// $N` tag IGC writes after an instruction, if the line has one.
fn tag_of(line: &str) -> Option<u32> {
    let at = line.find("/// $")?;
    let digits: String = line[at + 5..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[test]
fn parse_instruction_ids_match_igc_tags() {
    let mut checked = 0;
    for path in good_files() {
        let prog = parse_one(&path);
        let file = &prog.files[0];
        for inst in &prog.insts {
            if inst.op == Opcode::EndOfCode {
                continue;
            }
            if let Some(tag) = tag_of(file.line_text(inst.span.line)) {
                assert_eq!(inst.id, tag, "{}:{}", path.display(), inst.span.line);
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} tags checked");
}

/// Verdict of GenX_IR on a probe: None = accepted (maybe with verifier errors), Some(line) =
/// rejected by the parser at that line.
fn probe_verdicts() -> Vec<(String, Option<u32>)> {
    let text = std::fs::read_to_string(data("real/handwritten/probes/RESULTS.txt")).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        if cols.len() < 3 || line.starts_with('#') || line.starts_with("note") {
            continue;
        }
        let name = cols[0].to_string();
        let verdict = cols[cols.len() - 1];
        let err_line =
            verdict.strip_prefix("near line ").and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok());
        out.push((name, err_line));
    }
    // Not in RESULTS.txt; verdicts from running GenX_IR 12504 on them.
    for p in ["p61", "p62", "p63", "p64", "p65", "p66", "p67", "p68", "p70", "p60_rt", "p79_rt", "p80_rt"] {
        out.push((p.to_string(), None));
    }
    out.push(("p69".to_string(), Some(20)));
    out
}

#[test]
fn parse_probes_agree_with_genx_ir() {
    let verdicts = probe_verdicts();
    assert!(verdicts.len() > 80);
    let faulting = ["p13", "p17", "p20", "p21", "p56"];
    for (name, err_line) in verdicts {
        let path = data(&format!("real/handwritten/probes/{name}.visaasm"));
        if !path.exists() {
            continue;
        }
        let (prog, diags) = parse_files_with_warnings(vec![source(&path)], &ParseOptions::default());
        match err_line {
            None if name == "p90" => assert!(prog.is_none(), "p90: unquoted string value should be rejected"),
            None => {
                let prog = prog.unwrap_or_else(|| panic!("{name} should parse:\n{}", diags.render()));
                let faults = prog.insts.iter().filter(|i| i.static_fault.is_some()).count();
                if faulting.contains(&name.as_str()) {
                    assert!(faults > 0, "{name}: expected a static fault");
                    assert!(diags.warnings().count() > 0, "{name}: expected a warning");
                } else {
                    assert_eq!(faults, 0, "{name}: unexpected static fault\n{}", diags.render());
                }
            }
            // `svm_block_ld.unaligned` is the vISA 4.2 spelling, which 12504 rejects and vdb
            // accepts (12504 prints the unaligned read without a suffix).
            Some(_) if name == "p34" => assert!(prog.is_some(), "p34: {}", diags.render()),
            // Likewise the `:bf` immediate (syntax.md §9: IGC 2.x adds it; 12504 rejects it).
            Some(_) if name == "p01" => assert!(prog.is_some(), "p01: {}", diags.render()),
            Some(line) => {
                assert!(prog.is_none(), "{name} should be rejected");
                // GenX_IR reports errors found at a line's end after reading the newline,
                // so its line number can be one past ours.
                let near = |l: u32| l == line || l + 1 == line;
                assert!(
                    diags.errors().any(|d| near(d.span.line)),
                    "{name}: no error near line {line}:\n{}",
                    diags.render()
                );
            }
        }
    }
}

#[test]
fn parse_broken_files_report_the_right_line() {
    let cases = [
        ("b1_syntax", 112, "unexpected"),
        ("b2_undeclared", 100, "V9999: unbound identifier"),
        ("b3_region", 98, "VertStride"),
        ("b4_execsize", 99, "invalid execution size"),
        ("b5_label", 123, "undefined label: _0_NOPE"),
        ("b6_mnemonic", 126, "frob"),
    ];
    for (name, line, needle) in cases {
        let path = data(&format!("real/broken/{name}.visaasm"));
        let err = match parse_files(vec![source(&path)], &ParseOptions::default()) {
            Ok(_) => panic!("{name} should fail"),
            Err(d) => d,
        };
        let errors: Vec<_> = err.errors().collect();
        assert_eq!(errors.len(), 1, "{name}: {}", err.render());
        assert_eq!(errors[0].span.line, line, "{name}: {}", err.render());
        assert!(errors[0].message.contains(needle), "{name}: {}", err.render());
        let rendered = err.render();
        assert!(rendered.contains(&format!("{name}.visaasm:{line}:")), "{rendered}");
        assert!(rendered.contains('^'));
    }
    // b7 mixes d and f operand types: only the verifier rejects it; vdb accepts it.
    let b7 = parse_one(&data("real/broken/b7_typemix.visaasm"));
    assert!(b7.insts.len() > 10);
}

/// Small deterministic generator (no dependency on external state).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn parse_never_panics_on_prefixes_and_mutations() {
    let text = std::fs::read_to_string(data("real/handwritten/syntax_probe.visaasm")).unwrap_or_default();
    let bytes = text.as_bytes();
    for end in (0..=bytes.len()).step_by(3) {
        let s = String::from_utf8_lossy(&bytes[..end]);
        let _ = parse_str("prefix.visaasm", &s);
    }
    let big = std::fs::read(data("real/divergent_simd32.visaasm")).unwrap_or_default();
    let mut rng = Lcg(42);
    const JUNK: &[u8] = b"()<>[];,.:%&!~-+*/\\\"'{}=0x9aZ_\n\t \xff";
    for _ in 0..300 {
        let mut m = big.clone();
        for _ in 0..(1 + rng.next() % 8) {
            let at = (rng.next() as usize) % m.len().max(1);
            match rng.next() % 3 {
                0 => m[at] = JUNK[(rng.next() as usize) % JUNK.len()],
                1 => {
                    m.remove(at);
                }
                _ => m.insert(at, JUNK[(rng.next() as usize) % JUNK.len()]),
            }
        }
        let s = String::from_utf8_lossy(&m);
        if let Err(d) = parse_str("mut.visaasm", &s) {
            let _ = d.render();
        }
    }
    let mut junk = Vec::new();
    for _ in 0..20_000 {
        junk.push((rng.next() & 0xff) as u8);
    }
    let _ = parse_str("junk.visaasm", &String::from_utf8_lossy(&junk));
}

#[test]
fn parse_is_fast_enough() {
    let path = good_files().into_iter().max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let Some(path) = path else { return };
    let src = source(&path);
    let start = std::time::Instant::now();
    for _ in 0..5 {
        let _ = parse_files(vec![src.clone()], &ParseOptions::default());
    }
    // Debug build budget; release is an order of magnitude faster.
    assert!(start.elapsed().as_millis() < 2500, "{:?}", start.elapsed());
}

const HEADER: &str = ".version 4.1
.kernel \"k\"
.decl V32 v_type=G type=d num_elts=16 align=GRF
.decl V33 v_type=G type=w num_elts=16 align=hword alias=<V32, 32>
.decl V34 v_type=G type=uq num_elts=4 align=qword
.decl P1 v_type=P num_elts=16
.decl A0 v_type=A num_elts=2
.decl A1 v_type=A num_elts=4
.decl T6 v_type=T num_elts=1 v_name=buf
.function \"_main_0\"

_main_0:
";

fn body(code: &str) -> Result<Program, vdb::asm::Diagnostics> {
    parse_str("t.visaasm", &format!("{HEADER}{code}"))
}

fn imm_bits(code: &str) -> u64 {
    let prog =
        body(&format!("    mov (M1, 1) V32(0,0)<1> {code}\n")).unwrap_or_else(|d| panic!("{}", d.render()));
    match &prog.insts[0].operands[1] {
        vdb::isa::Operand::Imm(i) => i.bits,
        other => panic!("{other:?}"),
    }
}

#[test]
fn parse_layout_aliases_and_operand_bases() {
    let prog = body("    add (M1, 8) V33(1,2)<1> V32(0,3)<1;1,0> 0x1:w\n    ret (M1, 1)\n")
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let v32 = prog.var(prog.var_id(vdb::isa::UnitId(0), "V32").expect("V32"));
    let v33 = prog.var(prog.var_id(vdb::isa::UnitId(0), "V33").expect("V33"));
    assert_eq!(v32.offset % 32, 0);
    assert_eq!(v33.offset, v32.offset + 32);
    assert_eq!(v33.root, prog.var_id(vdb::isa::UnitId(0), "V32").expect("V32"));
    let vdb::isa::Operand::Direct(d) = &prog.insts[0].operands[0] else { panic!() };
    assert_eq!(d.base, v33.offset + 32 + 4);
    assert_eq!(d.ty, vdb::isa::DataType::W);
    let vdb::isa::Operand::Direct(s) = &prog.insts[0].operands[1] else { panic!() };
    assert_eq!(s.base, v32.offset + 12);
    assert_eq!(prog.grf_bytes % 32, 0);
    assert!(prog.grf_bytes >= v32.offset + 64);
    assert_eq!(prog.addr_slots, 6);
    assert_eq!(prog.addrs[1].slot, 2);
    assert_eq!(prog.states[0].kind, vdb::program::StateKind::Slm);
    assert_eq!(prog.states[6].kind, vdb::program::StateKind::Surface(6));
}

#[test]
fn parse_immediate_values() {
    assert_eq!(imm_bits("-7:w"), 0xfff9);
    assert_eq!(imm_bits("0x12345678:w"), 0x5678);
    assert_eq!(imm_bits("4294967295:ud"), 0xffff_ffff);
    assert_eq!(imm_bits("0xffffffffffffffff:uq"), u64::MAX);
    assert_eq!(imm_bits("1.5:f"), u64::from(1.5f32.to_bits()));
    assert_eq!(imm_bits("-2.25:f"), u64::from((-2.25f32).to_bits()));
    assert_eq!(imm_bits("1.0e+3:f"), u64::from(1000f32.to_bits()));
    assert_eq!(imm_bits("1.5:df"), 1.5f64.to_bits());
    assert_eq!(imm_bits("1:f"), 1);
    assert_eq!(imm_bits("0x3c00:hf"), 0x3c00);
    assert_eq!(imm_bits("0x76543210:v"), 0x7654_3210);
    assert_eq!(imm_bits("(2+3*4):W"), 14);
    assert_eq!(imm_bits("(-8>>>60):d"), 15);
    assert_eq!(imm_bits("(1?2:3):d"), 2);
    assert_eq!(imm_bits("(%sizeof V32):d"), 64);
    assert_eq!(imm_bits("%sizeof(GRF):d"), 32);
    // `:bf` is IGC 2.x's (syntax.md §9); like `:hf` it takes only a hex bit pattern.
    assert_eq!(imm_bits("0x3f80:bf"), 0x3f80);
    for bad in ["7", "1e3:f", "3.0:F", "-0x3c00:hf", "-0x3f80:bf", "1:bf", "0x1:UV", "2+3:d", ".5:f"] {
        assert!(body(&format!("    mov (M1, 1) V32(0,0)<1> {bad}\n")).is_err(), "{bad}");
    }
}

#[test]
fn parse_labels_calls_and_ids() {
    let code = "    goto (M1, 1) L_end\n    switchjmp (M1, 1) V32(0,0)<0;1,0> (L_a, \"L_end\")\nL_a:\n    call (M1, 1) sub_1\n    ret (M1, 1)\n.function \"sub_1\"\nsub_1:\n    mov (M1, 1) V32(0,0)<1> 0x1:d\n    ret (M1, 1)\nL_end:\n";
    let prog = body(code).unwrap_or_else(|d| panic!("{}", d.render()));
    use vdb::isa::{InstIdx, Operand};
    let end = prog.kernel().end.0 - 1;
    assert_eq!(prog.insts[end as usize].op, Opcode::EndOfCode);
    assert_eq!(prog.insts[0].operands[0], Operand::Label(InstIdx(end)));
    assert_eq!(prog.insts[1].operands[1], Operand::Labels(vec![InstIdx(2), InstIdx(end)]));
    assert_eq!(prog.insts[2].operands[0], Operand::Subroutine(InstIdx(4)));
    // .function "_main_0" is $0; goto $1, switchjmp $2, L_a $3, call $4, ret $5,
    // .function "sub_1" $6, mov $7.
    let ids: Vec<u32> = prog.insts.iter().map(|i| i.id).collect();
    assert_eq!(ids, vec![1, 2, 4, 5, 7, 8, 10]);
}

#[test]
fn parse_rejections_point_at_the_right_place() {
    let cases = [
        ("    (P1) cmp.eq (M1, 16) P1 V32(0,0)<1;1,0> 0x2:d\n", "cannot be predicated"),
        ("    mov (M1, 8) V32(0,0)<1> 0x1:d mov (M1, 8) V32(0,0)<1> 0x1:d\n", "expecting end of line"),
        ("    CMP.GE (M1, 16) P1 V32(0,0)<1;1,0> 0x2:d\n", "lower case"),
        ("    mov (M9, 16) V32(0,0)<1> 0x1:d\n", "invalid execution offset info"),
        ("    mov (M1, 16) V32(0,0)<3> 0x1:d\n", "Dst HorzStride"),
        ("    mov (M1, 16) V32(0,0)<1> V32\n", "V32: not a predicate variable"),
        ("    mov (M1, 16) V32(0,0)<1> V32(0,0)<1<2;1,0>\n", "syntax error"),
        ("    goto (M1, 1) nowhere\n", "undefined label: nowhere"),
        ("  L_indented:\n", "column 0"),
        (".decl P9 v_type=P num_elts=33\n", "1..32"),
        (".decl V99 v_type=G type=d num_elts=16 alias=<V34, 8>\n", "runs past the end"),
        ("    add (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0>\n", "expecting a source operand"),
    ];
    for (code, needle) in cases {
        let err = match body(code) {
            Ok(_) => panic!("accepted: {code}"),
            Err(d) => d,
        };
        let first = err.errors().next().expect("an error");
        assert_eq!(first.span.line, 13, "{code}: {}", err.render());
        assert!(first.message.contains(needle), "{code}: {}", err.render());
    }
    // All errors in one pass: two bad lines give two errors.
    let err = body(
        "    frob (M1, 1)
    mov (M1, 1) V77(0,0)<1> 0x1:d
",
    )
    .expect_err("errors");
    assert_eq!(err.errors().count(), 2, "{}", err.render());
    assert!(parse_str("x.visaasm", ".kernel \"k\"\n").is_err());
}

/// The parser holds a few lines' tokens at a time (it lexes 64 lines when it runs short and
/// drops the tokens it passed every thousand or so): a rejection is found at its line and
/// column wherever it sits in a long file, a statement continued over lines with `\\` or
/// split by a block comment still parses, and every line of a long valid file is one
/// instruction.
#[test]
fn parse_rejections_are_found_anywhere_in_a_long_file() {
    const LINES: usize = 3000;
    let good = "    add (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0> 0x1:d\n";
    let long = good.repeat(LINES);
    let prog = body(&long).unwrap_or_else(|d| panic!("{}", d.render()));
    // One instruction a line, and the end-of-code sentinel; each spans its text.
    assert_eq!(prog.insts.len(), LINES + 1);
    let text = good.trim();
    for (i, inst) in prog.insts[..LINES].iter().enumerate() {
        let span = inst.span;
        assert_eq!((span.line, span.col), (13 + i as u32, 5), "instruction {i}");
        assert_eq!((span.end - span.start) as usize, text.len(), "instruction {i}");
    }
    let cases = [
        ("    mov (M1, 16) V32(0,0)<3> 0x1:d\n", "Dst HorzStride"),
        ("    goto (M1, 1) nowhere\n", "undefined label: nowhere"),
        ("    add (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0>\n", "expecting a source operand"),
        ("    add (M1, 16) V32(0,0)<1> \\\n  /* x\n */ V32(0,0)<1;1,0> 0x1:d 0x2:d\n", "end of line"),
    ];
    for (bad, needle) in cases {
        let short = body(bad).expect_err("rejected");
        let first = short.errors().next().expect("an error");
        // Line 13 is the body's first; the error may be on a later line of a continued one.
        let (line0, col) = (first.span.line - 13, first.span.col);
        let mut at = vec![0, 1, 63, 64, 65, 127, 128, 500, 1023, 1024, 1500, LINES - 1, LINES];
        at.extend((0..8).map(|i| 37 + i * 331));
        for k in at {
            let text = format!("{}{bad}{}", good.repeat(k), good.repeat(LINES - k));
            let err = body(&text).expect_err("rejected");
            let errors: Vec<_> = err.errors().collect();
            assert_eq!(errors.len(), 1, "{needle} after {k} lines: {}", err.render());
            assert_eq!(
                (errors[0].span.line, errors[0].span.col),
                (13 + k as u32 + line0, col),
                "{needle} after {k} lines"
            );
            assert!(errors[0].message.contains(needle), "{}", err.render());
        }
    }
}

#[test]
fn parse_static_faults_are_warnings() {
    let (prog, diags) = parse_files_with_warnings(
        vec![SourceFile { path: "f.visaasm".into(), text: format!("{HEADER}    mov (M2, 16) V32(0,0)<1> 0x1:d\n    mov (M1, 16) V32(0,8)<1> 0x1:d\n    mov (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0>\n") }],
        &ParseOptions::default(),
    );
    let prog = prog.unwrap_or_else(|| panic!("{}", diags.render()));
    assert!(prog.insts[0].static_fault.is_some());
    assert!(prog.insts[1].static_fault.is_some());
    assert!(prog.insts[2].static_fault.is_none());
    assert_eq!(diags.warnings().count(), 2);
    assert!(!diags.has_errors());
}

/// Every real IGC 2.x dump (Xe2 and PVC; `../shared/spec/real/igc2/`, beside the project in
/// CI) parses with no option: the platform comes from each dump's `//Platform:` line.
#[test]
fn every_igc2_dump_parses_with_its_platforms_grf() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/real/igc2");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "\n*** SKIPPED: {} is not here (CI has it): IGC 2.x dumps not checked ***\n",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    files.retain(|p| {
        p.extension().is_some_and(|e| e == "visaasm") && !p.to_string_lossy().ends_with(".inline.visaasm")
    });
    files.sort();
    assert!(files.len() >= 30, "{} dumps", files.len());
    for f in &files {
        let file = source(f);
        let grf = vdb::asm::platform_of(&file.text).and_then(vdb::asm::grf_size_of_platform);
        assert_eq!(grf, Some(64), "{}: its platform's GRF", f.display());
        match parse_files(vec![file], &ParseOptions::default()) {
            Ok(p) => assert_eq!(p.grf_size, 64, "{}", f.display()),
            Err(d) => panic!("{}", d.render()),
        }
    }
}

const XE2_HEADER: &str = ".version 4.2
.kernel \"k\"
.decl PAY v_type=G type=ud num_elts=16 align=GRF
.decl BASE v_type=G type=uq num_elts=1 align=qword
.decl X v_type=G type=d num_elts=1 align=dword
.decl D v_type=G type=w num_elts=256 align=wordx64
.decl S v_type=G type=f num_elts=128 align=GRF
.decl R0V v_type=G type=ud num_elts=16 align=GRF alias=<%r0, 0>
.decl DST v_type=G type=f num_elts=8 alias=<S, 0>
.decl DST v_type=G type=f num_elts=8 alias=<S, 64>
.function \"_main_0\"

_main_0:
";

/// The constructs IGC 2.x prints, each in a small kernel of our own: the `//Platform:` line
/// and a 64-byte %r0, LSC without cache options and the `d16u32` shape, 2D block loads and
/// stores in both address forms, and a name declared twice (the later one holds).
#[test]
fn igc2_constructs_parse() {
    let code = "    lsc_load.ugm (M1, 16)  S:d16u32  flat[PAY]:a64
    lsc_load_block2d.ugm (M1, 1)  D:d16.2x16x16nt  flat[PAY + (0,0)]
    lsc_load_block2d.ugm.ca.ca (M1, 1)  %null:d16.32x2nn  flat[PAY+(16,-2)]
    lsc_load_block2d.ugm (M1, 1)  D:d32.8x16tn  flat[BASE,0x3F,0x1F,0x40,X,X]
    lsc_store_block2d.ugm (M1, 1)  flat[PAY + (0,0)]  D:d32.16x8nn
    mov (M1, 8) DST(0,0)<1> 0x0:f
    ret (M1, 1)

//Platform: XE2
//Build option: \"-emitLocation\"
";
    let text = format!("{XE2_HEADER}{code}");
    let p = parse_str("t.visaasm", &text).unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(p.grf_size, 64);
    let r0 = p.vars.iter().find(|v| v.name == "%r0").expect("%r0");
    assert_eq!(r0.size, 64);
    let ops: Vec<Opcode> = p.insts.iter().map(|i| i.op).collect();
    assert!(ops.contains(&Opcode::LscLoadBlock2d) && ops.contains(&Opcode::LscStoreBlock2d), "{ops:?}");
    match &p.insts[1].operands[0] {
        vdb::isa::Operand::LscBlock2dData(d) => {
            assert_eq!((d.blocks, d.width, d.height, d.transpose, d.vnni), (2, 16, 16, false, true));
        }
        other => panic!("{other:?}"),
    }
    match &p.insts[2].operands[1] {
        vdb::isa::Operand::LscBlock2dAddr(vdb::isa::LscBlock2dAddr::Payload { x, y, .. }) => {
            assert_eq!((*x, *y), (16, -2))
        }
        other => panic!("{other:?}"),
    }
    // The second `DST` (S at byte 64) is the one the `mov` writes.
    let mov = p.insts.iter().find(|i| i.op == Opcode::Mov).expect("mov");
    let s = p.vars.iter().find(|v| v.name == "S").expect("S");
    match &mov.operands[0] {
        vdb::isa::Operand::Direct(d) => assert_eq!(d.base, s.offset + 64),
        other => panic!("{other:?}"),
    }
    // Without the platform line the GRF is 32 bytes, and a 64-byte alias of %r0 is refused.
    let plain = text.replace("//Platform: XE2\n", "");
    let e = parse_str("t.visaasm", &plain).expect_err("a 32-byte %r0");
    assert!(e.render().contains("runs past the end of %r0"), "{}", e.render());
    // A bad shape names itself.
    let e = parse_str("t.visaasm", &text.replace("d16.2x16x16nt", "d16.2x16x16ntx")).expect_err("bad shape");
    assert!(e.render().contains("2D block"), "{}", e.render());
}
