//! Zebin reader tests on a synthetic ELF built here: sections, symbols, relocations, the
//! compatibility note, `faddr`-style symbol resolution, and bad input of every kind.

use super::zebin::{Relocation, Zebin, ZebinError};
use super::Platform;

/// A section to put in a synthetic ELF: name, type, bytes, sh_link, sh_info.
struct Sec {
    name: &'static str,
    sh_type: u32,
    data: Vec<u8>,
    link: u32,
    info: u32,
}

fn sec(name: &'static str, sh_type: u32, data: Vec<u8>) -> Sec {
    Sec { name, sh_type, data, link: 0, info: 0 }
}

/// Lays out: ELF header, section bytes, `.shstrtab`, then the section header table. Index 0
/// is the null section and `.shstrtab` comes last.
fn build_elf(sections: Vec<Sec>) -> Vec<u8> {
    let mut names = vec![0u8];
    let mut name_off = Vec::new();
    for s in &sections {
        name_off.push(names.len() as u32);
        names.extend(s.name.as_bytes());
        names.push(0);
    }
    let shstr_name = names.len() as u32;
    names.extend(b".shstrtab\0");
    let mut out = vec![0u8; 64];
    let mut headers = vec![[0u8; 64]];
    let all = sections.iter().zip(&name_off).map(|(s, &n)| (n, s.sh_type, &s.data, s.link, s.info));
    let shstr = (shstr_name, 3, &names, 0, 0);
    for (name, ty, data, link, info) in all.chain(std::iter::once(shstr)) {
        let mut h = [0u8; 64];
        h[0..4].copy_from_slice(&name.to_le_bytes());
        h[4..8].copy_from_slice(&ty.to_le_bytes());
        h[0x18..0x20].copy_from_slice(&(out.len() as u64).to_le_bytes());
        h[0x20..0x28].copy_from_slice(&(data.len() as u64).to_le_bytes());
        h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
        h[0x2c..0x30].copy_from_slice(&info.to_le_bytes());
        out.extend(data.iter());
        headers.push(h);
    }
    let shoff = out.len() as u64;
    out[0..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[0x12..0x14].copy_from_slice(&205u16.to_le_bytes());
    out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&(headers.len() as u16).to_le_bytes());
    out[0x3e..0x40].copy_from_slice(&((headers.len() - 1) as u16).to_le_bytes());
    headers.iter().for_each(|h| out.extend(h));
    out
}

fn symbol(name: u32, shndx: u16, value: u64, size: u64) -> Vec<u8> {
    let mut e = Vec::new();
    e.extend(name.to_le_bytes());
    e.push(0x11); // global object
    e.push(0);
    e.extend(shndx.to_le_bytes());
    e.extend(value.to_le_bytes());
    e.extend(size.to_le_bytes());
    e
}

fn compat_note(family: u32) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend(8u32.to_le_bytes());
    n.extend(4u32.to_le_bytes());
    n.extend(1u32.to_le_bytes());
    n.extend(b"IntelGT\0");
    n.extend(family.to_le_bytes());
    n
}

/// Sections: 1 .data.const, 2 .strtab, 3 .symtab, 4 .text.k, 5 .rela.text.k, 6 .ze_info,
/// 7 .note.intelgt.compat, 8 .shstrtab.
fn sample() -> Vec<u8> {
    let table: Vec<u8> = (0u8..16).collect();
    let strtab = b"\0log_table\0pow_table\0".to_vec();
    let mut symtab = symbol(0, 0, 0, 0);
    symtab.extend(symbol(1, 1, 0, 8));
    symtab.extend(symbol(11, 1, 8, 8));
    let mut rela = Vec::new();
    rela.extend(0x40u64.to_le_bytes());
    rela.extend(((2u64 << 32) | 1).to_le_bytes());
    rela.extend((-4i64).to_le_bytes());
    build_elf(vec![
        sec(".data.const", 1, table),
        sec(".strtab", 3, strtab),
        Sec { link: 2, ..sec(".symtab", 2, symtab) },
        sec(".text.k", 1, vec![0; 128]),
        Sec { info: 4, link: 3, ..sec(".rela.text.k", 4, rela) },
        sec(".ze_info", 0xff00_0011, b"version: '1.20'\n".to_vec()),
        sec(".note.intelgt.compat", 7, compat_note(18)),
    ])
}

#[test]
fn reads_sections_symbols_and_relocations() {
    let z = Zebin::parse(&sample()).expect("parses");
    let names: Vec<&str> = z.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names[1..4], [".data.const", ".strtab", ".symtab"]);
    assert_eq!(z.machine, 205);
    assert_eq!(z.data_const(), Some(&(0u8..16).collect::<Vec<u8>>()[..]));
    assert_eq!(z.data_global(), None);
    let pow = z.symbol("pow_table").expect("symbol");
    assert_eq!((pow.value, pow.size, pow.section), (8, 8, 1));
    assert_eq!(z.ze_info_text(), Ok("version: '1.20'\n"));
    let rel = Relocation { target_section: 4, offset: 0x40, symbol: 2, rel_type: 1, addend: Some(-4) };
    assert_eq!(z.relocations, vec![rel]);
    assert_eq!(Platform::of_zebin(&z), Some(Platform::Gen9));
}

#[test]
fn faddr_resolves_to_section_base_plus_value() {
    let z = Zebin::parse(&sample()).expect("parses");
    let (index, _) = z.section(".data.const").expect("const");
    let base = 0x2_0000_0000u64;
    let at = |s: u16| (s == index).then_some(base);
    assert_eq!(z.symbol_address("log_table", at), Some(base));
    assert_eq!(z.symbol_address("pow_table", at), Some(base + 8));
    assert_eq!(z.symbol_address("missing", at), None);
    // Reading through the resolved address gives the table bytes.
    let data = z.data_const().expect("bytes");
    let off = (z.symbol_address("pow_table", at).expect("addr") - base) as usize;
    assert_eq!(&data[off..off + 2], &[8, 9]);
}

#[test]
fn every_truncation_is_an_error() {
    let full = sample();
    for len in 0..full.len() {
        assert!(Zebin::parse(&full[..len]).is_err(), "prefix of {len} bytes parsed");
    }
}

#[test]
fn garbled_bytes_never_panic() {
    let full = sample();
    for i in 0..full.len() {
        for flip in [0xffu8, 0x80, 0x01] {
            let mut bad = full.clone();
            bad[i] ^= flip;
            let _ = Zebin::parse(&bad);
        }
    }
}

#[test]
fn header_problems_have_their_own_errors() {
    let full = sample();
    let with = |at: usize, v: &[u8]| {
        let mut b = full.clone();
        b[at..at + v.len()].copy_from_slice(v);
        Zebin::parse(&b)
    };
    assert_eq!(Zebin::parse(b"\x7fELF"), Err(ZebinError::TooShort { len: 4 }));
    assert_eq!(with(0, b"\x7fELG"), Err(ZebinError::BadMagic));
    assert_eq!(with(4, &[1]), Err(ZebinError::NotElf64));
    assert_eq!(with(5, &[2]), Err(ZebinError::NotLittleEndian));
    assert!(matches!(with(0x28, &[0xff; 8]), Err(ZebinError::OutOfBounds { .. })));
    assert!(matches!(with(0x3e, &[50, 0]), Err(ZebinError::BadField { .. })));
    assert!(matches!(with(0x3a, &[40, 0]), Err(ZebinError::BadField { .. })));
}

#[test]
fn bad_name_offset_is_reported() {
    let mut b = sample();
    let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().expect("8 bytes")) as usize;
    // Section 1's sh_name points far outside .shstrtab.
    b[shoff + 64..shoff + 68].copy_from_slice(&5000u32.to_le_bytes());
    assert_eq!(Zebin::parse(&b), Err(ZebinError::BadName { offset: 5000 }));
}

#[test]
fn missing_ze_info_is_a_typed_error() {
    let z = Zebin::parse(&build_elf(vec![sec(".text", 1, vec![1, 2])])).expect("parses");
    assert_eq!(z.ze_info_text(), Err(ZebinError::MissingSection(".ze_info")));
    assert_eq!(z.product_family(), None);
    assert!(z.symbols.is_empty() && z.relocations.is_empty());
}
