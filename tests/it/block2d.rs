//! LSC 2D block loads and stores on a 64-byte-GRF (Xe2) kernel, against a model written from
//! LSC_UNTYPED.md's LOAD_BLOCK2D pseudo-code: every layout (plain, transposed, VNNI), several
//! blocks, both address forms, and tiles hanging over the surface's edges (zeros read,
//! writes dropped).

use vdb::machine::Machine;
use vdb::program::Program;

use crate::harness::{run_text, set_var, Run};

const BASE: u64 = 0x1_0000_0000;
/// The surface: 40 x 24 elements, rows 128 bytes apart (room for 64 two-byte elements).
/// Surface width in elements of `t` bytes: 40, or what a row of PITCH bytes holds.
fn w_elems(t: u64) -> u64 {
    40.min(PITCH / t)
}
const H_ROWS: u64 = 24;
const PITCH: u64 = 128;

fn value(x: u64, y: u64, t: u64) -> u64 {
    let v = (y * 1000 + x * 7 + 3) & ((1u64 << (8 * t)) - 1);
    v.max(1)
}

/// The surface in memory: element (x, y) of `t` bytes at BASE + y*PITCH + x*t.
fn setup(p: &Program, m: &mut Machine, t: u64, x: i32, y: i32) {
    m.svm.map(BASE, PITCH * (H_ROWS + 8), "surface");
    for yy in 0..H_ROWS + 8 {
        for xx in 0..PITCH / t {
            let v = value(xx, yy, t).to_le_bytes();
            m.svm.write(BASE + yy * PITCH + xx * t, &v[..t as usize]).expect("mapped");
        }
    }
    let mut pay = Vec::new();
    pay.extend(BASE.to_le_bytes());
    for dw in [(w_elems(t) * t - 1) as u32, (H_ROWS - 1) as u32, (PITCH - 1) as u32, x as u32, y as u32, 0, 0]
    {
        pay.extend(dw.to_le_bytes());
    }
    pay.resize(64, 0);
    set_var(p, m, "PAY", &pay);
    let mut base = BASE.to_le_bytes().to_vec();
    base.resize(8, 0);
    set_var(p, m, "B", &base);
    set_var(p, m, "XY", &[x.to_le_bytes(), y.to_le_bytes()].concat());
}

/// LOAD_BLOCK2D as the spec writes it, in elements.
#[allow(clippy::too_many_arguments)]
fn model(t: u64, blocks: u32, w: u32, h: u32, transpose: bool, vnni: bool, x0: i64, y0: i64) -> Vec<u64> {
    let elem = |b: u32, y: i64, x: i64| -> u64 {
        let (xx, yy) = (x0 + i64::from(b * w) + x, y0 + y);
        if xx < 0 || yy < 0 || xx as u64 >= w_elems(t) || yy as u64 >= H_ROWS {
            0
        } else {
            value(xx as u64, yy as u64, t)
        }
    };
    let elems_per_reg = 64 / t as u32;
    let per_dword = (4 / t as u32).max(1);
    let row = if transpose { h } else { w };
    let row_pitch = row.next_power_of_two();
    let block_size = row_pitch * if transpose { w } else { h };
    let block_pitch = block_size.div_ceil(elems_per_reg) * elems_per_reg;
    let mut out = vec![0u64; (blocks * block_pitch) as usize];
    for b in 0..blocks {
        let at = |o: u32| (b * block_pitch + o) as usize;
        if !transpose && !vnni {
            for y in 0..h {
                for x in 0..w {
                    out[at(y * row_pitch + x)] = elem(b, y.into(), x.into());
                }
            }
        } else if !transpose {
            for y in (0..h).step_by(per_dword as usize) {
                for x in 0..w {
                    for i in 0..per_dword {
                        out[at(y * row_pitch + x * per_dword + i)] = elem(b, (y + i).into(), x.into());
                    }
                }
            }
        } else if !vnni {
            for x in 0..w {
                for y in 0..h {
                    out[at(x * row_pitch + y)] = elem(b, y.into(), x.into());
                }
            }
        } else {
            for x in (0..w).step_by(per_dword as usize) {
                for y in 0..h {
                    for i in 0..per_dword {
                        out[at(x * row_pitch + y * per_dword + i)] = elem(b, y.into(), (x + i).into());
                    }
                }
            }
        }
    }
    out
}

fn kernel(body: &str) -> String {
    format!(
        ".version 4.2
.kernel \"b2d\"
.decl PAY v_type=G type=ud num_elts=16 align=GRF
.decl B v_type=G type=uq num_elts=1 align=qword
.decl XY v_type=G type=d num_elts=2 align=qword
.decl D v_type=G type=ub num_elts=4096 align=GRF
.decl DU v_type=G type=ud num_elts=1024 align=GRF alias=<D, 0>
.kernel_attr Target=\"3d\"
.kernel_attr SimdSize=16
.function \"_main_0\"

_main_0:
{body}
    ret (M1, 1)

//Platform: XE2
"
    )
}

fn run(body: &str, t: u64, x: i32, y: i32) -> Run {
    let r = run_text(&kernel(body), 16, 0xffff, |p, m| setup(p, m, t, x, y));
    if let Err(f) = &r.result {
        panic!("{body}: {}", f.render(&r.program));
    }
    r
}

fn elems(bytes: &[u8], t: u64, n: usize) -> Vec<u64> {
    bytes.chunks(t as usize).take(n).map(|c| vdb::exec::load_le(c, t as u32)).collect()
}

#[test]
fn loads_follow_the_spec_in_every_layout_and_over_the_edges() {
    // (shape, element bytes, blocks, width, height, transposed, vnni)
    let shapes = [
        ("d16.2x16x8nn", 2, 2, 16, 8, false, false),
        ("d16.16x16nt", 2, 1, 16, 16, false, true),
        ("d32.8x16tn", 4, 1, 8, 16, true, false),
        ("d8.1x32x8nt", 1, 1, 32, 8, false, true),
        ("d16.1x16x32tt", 2, 1, 16, 32, true, true),
        ("d32.4x8nn", 4, 1, 4, 8, false, false),
    ];
    // Inside, over the right edge, over the bottom edge, and left of / above the surface.
    let places = [(0, 0), (30, 3), (5, 20), (-4, -3)];
    for (shape, t, blocks, w, h, tr, vn) in shapes {
        for (x, y) in places {
            let want = model(t, blocks, w, h, tr, vn, x.into(), y.into());
            let fields =
                format!("flat[B,{:#x},{:#x},{:#x},XY.0,XY.4]", w_elems(t) * t - 1, H_ROWS - 1, PITCH - 1);
            for addr in ["flat[PAY + (0,0)]".to_string(), fields] {
                let body = format!("    lsc_load_block2d.ugm (M1, 1) D:{shape} {addr}");
                let r = run(&body, t, x, y);
                assert_eq!(elems(&r.bytes("D"), t, want.len()), want, "{body} at ({x},{y})");
            }
        }
    }
    // The payload's immediate offsets move the tile.
    let want = model(2, 1, 16, 8, false, false, 7, 2);
    let r = run("    lsc_load_block2d.ugm (M1, 1) D:d16.16x8nn flat[PAY + (7,2)]", 2, 0, 0);
    assert_eq!(elems(&r.bytes("D"), 2, want.len()), want);
}

#[test]
fn a_store_writes_the_tile_inside_the_surface_and_drops_the_rest() {
    for (x, y) in [(0i32, 0i32), (34, 20), (-2, -1)] {
        let body = "    mov (M1_NM, 16) DU(0,0)<1> 0x77777777:ud\n    lsc_store_block2d.ugm (M1, 1) flat[PAY + (0,0)] D:d32.16x8nn";
        // D's first register (row 0 of the tile) is 0x77777777; the rest stays 0.
        let r = run(body, 4, x, y);
        for yy in 0..H_ROWS + 8 {
            for xx in 0..PITCH / 4 {
                let mut b = [0u8; 4];
                r.machine.svm.read(BASE + yy * PITCH + xx * 4, &mut b).expect("mapped");
                let got = u64::from(u32::from_le_bytes(b));
                let (tx, ty) = (xx as i64 - i64::from(x), yy as i64 - i64::from(y));
                let in_tile = (0..16).contains(&tx) && (0..8).contains(&ty);
                let inside = xx < w_elems(4) && yy < H_ROWS;
                let want = match (in_tile && inside, ty) {
                    (true, 0) => 0x7777_7777,
                    (true, _) => 0,
                    (false, _) => value(xx, yy, 4),
                };
                assert_eq!(got, want, "store at ({x},{y}): element ({xx},{yy})");
            }
        }
    }
}

/// Rows hanging past the mapped memory: a surface of 40 rows 100 bytes apart on 32 rows'
/// worth of mapped pages (4,096 bytes), so row 40's part inside the surface (25 d32
/// elements from byte 4,000) crosses into the unmapped page at element 24. A load faults
/// naming that element, its registers untouched; a store has written every row before it
/// and the row's first 24 elements when it faults there.
#[test]
fn a_tile_running_into_unmapped_memory_faults_at_its_first_unmapped_element() {
    let fields = format!("flat[B,{:#x},{:#x},{:#x},XY.0,XY.4]", 100 - 1, 48 - 1, 100 - 1);
    let load = format!("    lsc_load_block2d.ugm (M1, 1) D:d32.32x4nn {fields}");
    let store = format!("    lsc_store_block2d.ugm (M1, 1) {fields} D:d32.32x4nn");
    for (body, y) in [(&load, 38), (&store, 38), (&load, 40)] {
        let body = format!("    mov (M1_NM, 16) DU(0,0)<1> 0x55555555:ud\n{body}");
        let r = run_text(&kernel(&body), 16, 0xffff, |p, m| setup(p, m, 4, 0, y));
        let fault = match &r.result {
            Err(f) => f.render(&r.program),
            Ok(_) => panic!("{body} at y {y}: no fault"),
        };
        assert!(fault.contains(&format!("{:#x} (4 bytes)", BASE + 4096)), "{body} at y {y}: {fault}");
        if body.contains("lsc_store") {
            // Rows 38 and 39 written in full (25 elements each: the register row's first
            // 16 are 0x55555555, the rest 0), row 40 up to its element 23.
            for (yy, n) in [(38u64, 25u64), (39, 25), (40, 24)] {
                for xx in 0..n {
                    let mut b = [0u8; 4];
                    r.machine.svm.read(BASE + yy * 100 + xx * 4, &mut b).expect("mapped");
                    let want = if yy == 38 && xx < 16 { 0x5555_5555 } else { 0 };
                    assert_eq!(u32::from_le_bytes(b), want, "store: element ({xx},{yy})");
                }
            }
        } else {
            assert!(r.bytes("D")[64..].iter().all(|&b| b == 0), "a faulting load wrote its registers");
        }
    }
}

/// Each row's part inside the surface is read in one access: two 16 x 8 blocks of d16
/// inside the surface are 16 reads of 32 bytes; hanging 4 elements over the right edge, the
/// second block's rows are 12 elements (24 bytes); over the bottom edge, the rows outside
/// are not read at all.
#[test]
fn a_load_reads_each_row_inside_the_surface_in_one_access() {
    let body = "    lsc_load_block2d.ugm (M1, 1) D:d16.2x16x8nn flat[PAY + (0,0)]";
    for ((x, y), rows) in [((0, 0), 16usize), ((12, 0), 16), ((0, 20), 8)] {
        let mut reads = crate::harness::MemReads::default();
        let r =
            crate::harness::run_observed(&kernel(body), 16, 0xffff, |p, m| setup(p, m, 2, x, y), &mut reads);
        assert!(r.result.is_ok(), "({x},{y})");
        assert_eq!(reads.0.len(), rows, "({x},{y}): {:?}", reads.0);
        for (i, &(_, addr, len)) in reads.0.iter().enumerate() {
            let (b, dy) = (i as u64 / (rows as u64 / 2), i as u64 % (rows as u64 / 2));
            let x0 = x as u64 + 16 * b;
            assert_eq!(addr, BASE + (y as u64 + dy) * PITCH + 2 * x0, "({x},{y}): read {i}");
            assert_eq!(len, 2 * (w_elems(2) - x0).min(16), "({x},{y}): read {i}");
        }
    }
}
