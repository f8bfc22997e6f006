//! Parser tests over real IGC dumps, hand-written probes (with GenX_IR's verdicts from
//! RESULTS.txt), broken files, instruction ids, and never-panic fuzzing.

use std::path::{Path, PathBuf};
use vdb::asm::{parse_files, parse_files_with_warnings, parse_str, ParseOptions};
use vdb::isa::Opcode;
use vdb::program::{Program, SourceFile};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn visaasm_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            visaasm_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "visaasm") {
            out.push(p);
        }
    }
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
        !s.contains("/broken/") && !s.contains("/probes/") && !s.ends_with("probe_roundtrip.visaasm")
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
    let stack = [data("real/calls_stackcall_func_helper_simd8.visaasm"), data("real/calls_stackcall_kernel_simd8.visaasm")];
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
        let err_line = verdict.strip_prefix("near line ").and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok());
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
            Some(line) => {
                assert!(prog.is_none(), "{name} should be rejected");
                // GenX_IR reports errors found at a line's end after reading the newline,
                // so its line number can be one past ours.
                let near = |l: u32| l == line || l + 1 == line;
                assert!(diags.errors().any(|d| near(d.span.line)), "{name}: no error near line {line}:\n{}", diags.render());
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
