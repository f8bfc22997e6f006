//! Property tests: direct, single-address indirect and multi-address indirect regions pick
//! exactly the elements the spec's pseudo-code (5_operands.md) says, for random regions,
//! execution sizes, origins and element types.

use proptest::prelude::*;

use crate::harness::{run_with, set_var};

/// SourceDataElements[i] per 5_operands.md, as element indices of the source variable.
fn spec_indices(first: u32, exec: u32, vs: u32, w: u32, hs: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for i in 0..exec / w {
        for j in 0..w {
            out.push(first + i * vs + j * hs);
        }
    }
    out
}

fn decls(ty: &str) -> String {
    format!(
        ".decl S v_type=G type={ty} num_elts=128 align=GRF\n.decl D v_type=G type=d num_elts=16 align=GRF\n.decl OFFS v_type=G type=uw num_elts=16 align=GRF\n.decl A0 v_type=A num_elts=16"
    )
}

/// Fills S with element values 0, 1, 2, … (wrapping at the type's width).
fn fill(ty: &str) -> Vec<u8> {
    let size = match ty {
        "b" => 1,
        "w" => 2,
        _ => 4,
    };
    (0..128u32).flat_map(|i| i.to_le_bytes()[..size].to_vec()).collect()
}

fn run_mov(ty: &str, body: &str, offs: &[u16]) -> Vec<i32> {
    let s = fill(ty);
    let o: Vec<u8> = offs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let r = run_with(&decls(ty), body, 16, 0xffff, |p, m| {
        set_var(p, m, "S", &s);
        set_var(p, m, "OFFS", &o);
    });
    if let Err(f) = &r.result {
        panic!("{body}: {}", f.render(&r.program));
    }
    r.i32s("D")
}

fn region() -> impl Strategy<Value = (u32, u32, u32, u32)> {
    (
        prop::sample::select(vec![1u32, 2, 4, 8, 16]),
        prop::sample::select(vec![0u32, 1, 2, 4, 8, 16, 32]),
        prop::sample::select(vec![1u32, 2, 4, 8, 16]),
        prop::sample::select(vec![0u32, 1, 2, 4]),
    )
        .prop_filter("width <= exec size", |(exec, _, w, _)| w <= exec)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn direct_regions_follow_the_spec((exec, vs, w, hs) in region(), row in 0u32..2, col in 0u32..4,
                                      ty in prop::sample::select(vec!["b", "w", "d"])) {
        let size = match ty { "b" => 1, "w" => 2, _ => 4 };
        let per_row = 32 / size;
        let first = row * per_row + col;
        let idx = spec_indices(first, exec, vs, w, hs);
        prop_assume!(idx.iter().all(|&i| i < 128));
        let body = format!("    mov (M1, {exec}) D(0,0)<1> S({row},{col})<{vs};{w},{hs}>");
        let got = run_mov(ty, &body, &[]);
        let mask = if size == 4 { u32::MAX } else { (1u32 << (8 * size)) - 1 };
        let signed = |v: u32| -> i32 { match ty { "b" => v as u8 as i8 as i32, "w" => v as u16 as i16 as i32, _ => v as i32 } };
        for (lane, &i) in idx.iter().enumerate() {
            prop_assert_eq!(got[lane], signed(i & mask), "lane {}", lane);
        }
    }

    #[test]
    fn single_address_indirect_regions_follow_the_spec((exec, vs, w, hs) in region(), byte_off in 0u32..16) {
        let first = byte_off;
        let idx = spec_indices(first, exec, vs, w, hs);
        prop_assume!(idx.iter().all(|&i| i < 128));
        let body = format!(
            "    addr_add (M1_NM, 1) A0(0)<1> &S[{}] 0x0:uw\n    mov (M1, {exec}) D(0,0)<1> r[A0(0),0]<{vs};{w},{hs}>:d",
            byte_off * 4
        );
        let got = run_mov("d", &body, &[]);
        for (lane, &i) in idx.iter().enumerate() {
            prop_assert_eq!(got[lane], i as i32, "lane {}", lane);
        }
    }

    #[test]
    fn multi_address_indirect_rows_follow_their_own_addresses((exec, _vs, w, hs) in region(),
                                                               rows in prop::collection::vec(0u16..64, 16)) {
        let n_rows = exec / w;
        let idx: Vec<u32> = (0..n_rows).flat_map(|r| (0..w).map(move |j| (r, j)))
            .map(|(r, j)| rows[r as usize] as u32 + j * hs)
            .collect();
        prop_assume!(idx.iter().all(|&i| i < 128));
        let offs: Vec<u16> = rows.iter().map(|r| r * 4).collect();
        let body = format!(
            "    addr_add (M1_NM, 16) A0(0)<1> &S OFFS(0,0)<1;1,0>\n    mov (M1, {exec}) D(0,0)<1> r[A0(0),0]<{w},{hs}>:d"
        );
        let got = run_mov("d", &body, &offs);
        for (lane, &i) in idx.iter().enumerate() {
            prop_assert_eq!(got[lane], i as i32, "lane {}", lane);
        }
    }
}
