//! Hand-written reader for zebin files: the ELF64 little-endian containers that IGC/ocloc
//! produce. We only need section headers and names, the `.ze_info` text, constant/global
//! data, symbols and relocations, so this reads exactly those and checks every offset.

use std::fmt;

/// ELF section type of a symbol table.
const SHT_SYMTAB: u32 = 2;
/// ELF section type of relocations with explicit addends.
const SHT_RELA: u32 = 4;
/// ELF section type of relocations without addends.
const SHT_REL: u32 = 9;
/// ELF note section type (`.note.intelgt.compat` uses it).
const SHT_NOTE: u32 = 7;
/// Intel GT note type carrying the PRODUCT_FAMILY value the binary was compiled for.
const NT_INTELGT_PRODUCT_FAMILY: u32 = 1;

const EHDR_SIZE: usize = 64;
const SHDR_SIZE: usize = 64;
const SYM_SIZE: usize = 24;
const REL_SIZE: usize = 16;
const RELA_SIZE: usize = 24;

/// Why a zebin could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZebinError {
    /// The file is shorter than the ELF header.
    TooShort { len: usize },
    /// The first four bytes are not `\x7fELF`.
    BadMagic,
    /// Not ELFCLASS64.
    NotElf64,
    /// Not little-endian.
    NotLittleEndian,
    /// A structure (`what`) at `offset..offset+size` lies outside the file.
    OutOfBounds { what: &'static str, offset: u64, size: u64, len: usize },
    /// A header field has a value we cannot work with.
    BadField { what: &'static str, value: u64 },
    /// A name offset points outside the string table or the name is not UTF-8.
    BadName { offset: u32 },
    /// A named section (e.g. `.ze_info`) is missing.
    MissingSection(&'static str),
    /// A section's content is not UTF-8 text although it must be.
    NotText(&'static str),
}

impl fmt::Display for ZebinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooShort { len } => write!(f, "zebin: file of {len} bytes is too short for ELF"),
            Self::BadMagic => write!(f, "zebin: not an ELF file (bad magic)"),
            Self::NotElf64 => write!(f, "zebin: not a 64-bit ELF file"),
            Self::NotLittleEndian => write!(f, "zebin: not a little-endian ELF file"),
            Self::OutOfBounds { what, offset, size, len } => {
                write!(f, "zebin: {what} at offset {offset} size {size} is outside the file ({len} bytes)")
            }
            Self::BadField { what, value } => write!(f, "zebin: bad {what} ({value})"),
            Self::BadName { offset } => write!(f, "zebin: bad name at string offset {offset}"),
            Self::MissingSection(name) => write!(f, "zebin: no {name} section"),
            Self::NotText(name) => write!(f, "zebin: section {name} is not UTF-8 text"),
        }
    }
}

impl std::error::Error for ZebinError {}

/// One section header plus a copy of its bytes (empty for NOBITS sections).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub entsize: u64,
    pub data: Vec<u8>,
}

/// One `.symtab` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    /// Section header index the symbol is defined in (0 = undefined, ≥ 0xff00 = special).
    pub section: u16,
    /// `st_info >> 4` (0 local, 1 global, 2 weak).
    pub bind: u8,
    /// `st_info & 0xf` (1 object, 2 function…).
    pub sym_type: u8,
}

/// One relocation from a REL or RELA section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// Section index the relocation applies to (the REL section's `sh_info`).
    pub target_section: u32,
    pub offset: u64,
    /// Index into [`Zebin::symbols`].
    pub symbol: u32,
    pub rel_type: u32,
    /// Explicit addend (RELA), None for REL.
    pub addend: Option<i64>,
}

/// A parsed zebin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zebin {
    /// ELF `e_machine` (205 = EM_INTELGT).
    pub machine: u16,
    pub flags: u32,
    pub sections: Vec<Section>,
    pub symbols: Vec<Symbol>,
    pub relocations: Vec<Relocation>,
}

/// Bounds-checked little-endian reads over a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn slice(&self, what: &'static str, offset: u64, size: u64) -> Result<&'a [u8], ZebinError> {
        let oob = ZebinError::OutOfBounds { what, offset, size, len: self.bytes.len() };
        let start = usize::try_from(offset).map_err(|_| oob.clone())?;
        let len = usize::try_from(size).map_err(|_| oob.clone())?;
        let end = start.checked_add(len).ok_or_else(|| oob.clone())?;
        self.bytes.get(start..end).ok_or(oob)
    }

    fn u16(&self, at: usize) -> Result<u16, ZebinError> {
        let b = self.slice("field", at as u64, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&self, at: usize) -> Result<u32, ZebinError> {
        let b = self.slice("field", at as u64, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&self, at: usize) -> Result<u64, ZebinError> {
        let b = self.slice("field", at as u64, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// The NUL-terminated string at `offset` of a string table.
fn c_string(table: &[u8], offset: u32) -> Result<String, ZebinError> {
    let bad = ZebinError::BadName { offset };
    let rest = table.get(offset as usize..).ok_or(bad.clone())?;
    let end = rest.iter().position(|&b| b == 0).ok_or(bad.clone())?;
    String::from_utf8(rest[..end].to_vec()).map_err(|_| bad)
}

/// Section header table location, from the ELF header.
struct Layout {
    shoff: u64,
    shnum: usize,
    shstrndx: usize,
}

fn read_header(r: &Reader<'_>) -> Result<(Layout, u16, u32), ZebinError> {
    if r.bytes.len() < EHDR_SIZE {
        return Err(ZebinError::TooShort { len: r.bytes.len() });
    }
    if r.bytes[..4] != [0x7f, b'E', b'L', b'F'] {
        return Err(ZebinError::BadMagic);
    }
    if r.bytes[4] != 2 {
        return Err(ZebinError::NotElf64);
    }
    if r.bytes[5] != 1 {
        return Err(ZebinError::NotLittleEndian);
    }
    let shentsize = r.u16(0x3a)?;
    if shentsize as usize != SHDR_SIZE {
        return Err(ZebinError::BadField { what: "e_shentsize", value: shentsize.into() });
    }
    let layout =
        Layout { shoff: r.u64(0x28)?, shnum: r.u16(0x3c)? as usize, shstrndx: r.u16(0x3e)? as usize };
    Ok((layout, r.u16(0x12)?, r.u32(0x30)?))
}

/// Reads one section header and its name offset (names are resolved afterwards, once the
/// section-name string table is known).
fn read_section(r: &Reader<'_>, at: u64) -> Result<(u32, Section), ZebinError> {
    let h = r.slice("section header", at, SHDR_SIZE as u64)?;
    let h = Reader { bytes: h };
    let sh_type = h.u32(4)?;
    let offset = h.u64(0x18)?;
    let size = h.u64(0x20)?;
    // NOBITS sections (type 8, e.g. .bss) occupy no file bytes.
    let data = if sh_type == 8 || sh_type == 0 {
        Vec::new()
    } else {
        r.slice("section data", offset, size)?.to_vec()
    };
    let section = Section {
        name: String::new(),
        sh_type,
        flags: h.u64(8)?,
        addr: h.u64(0x10)?,
        offset,
        size,
        link: h.u32(0x28)?,
        info: h.u32(0x2c)?,
        entsize: h.u64(0x38)?,
        data,
    };
    Ok((h.u32(0)?, section))
}

fn read_sections(r: &Reader<'_>, l: &Layout) -> Result<Vec<Section>, ZebinError> {
    let mut sections = Vec::with_capacity(l.shnum.min(1024));
    let mut name_offsets = Vec::with_capacity(l.shnum.min(1024));
    for i in 0..l.shnum {
        let at = l.shoff.checked_add((i * SHDR_SIZE) as u64).ok_or(ZebinError::OutOfBounds {
            what: "section header",
            offset: l.shoff,
            size: SHDR_SIZE as u64,
            len: r.bytes.len(),
        })?;
        let (name_offset, section) = read_section(r, at)?;
        name_offsets.push(name_offset);
        sections.push(section);
    }
    if l.shnum == 0 {
        return Ok(sections);
    }
    let strtab = sections
        .get(l.shstrndx)
        .ok_or(ZebinError::BadField { what: "e_shstrndx", value: l.shstrndx as u64 })?
        .data
        .clone();
    for (s, off) in sections.iter_mut().zip(name_offsets) {
        s.name = c_string(&strtab, off)?;
    }
    Ok(sections)
}

fn read_symbols(sections: &[Section]) -> Result<Vec<Symbol>, ZebinError> {
    let Some(symtab) = sections.iter().find(|s| s.sh_type == SHT_SYMTAB) else {
        return Ok(Vec::new());
    };
    let strtab = sections
        .get(symtab.link as usize)
        .ok_or(ZebinError::BadField { what: ".symtab sh_link", value: symtab.link.into() })?;
    if symtab.data.len() % SYM_SIZE != 0 {
        return Err(ZebinError::BadField { what: ".symtab size", value: symtab.size });
    }
    let mut out = Vec::new();
    for e in symtab.data.chunks_exact(SYM_SIZE) {
        let e = Reader { bytes: e };
        let info = e.bytes[4];
        out.push(Symbol {
            name: c_string(&strtab.data, e.u32(0)?)?,
            value: e.u64(8)?,
            size: e.u64(16)?,
            section: e.u16(6)?,
            bind: info >> 4,
            sym_type: info & 0xf,
        });
    }
    Ok(out)
}

fn read_relocations(sections: &[Section]) -> Result<Vec<Relocation>, ZebinError> {
    let mut out = Vec::new();
    for s in sections.iter().filter(|s| s.sh_type == SHT_REL || s.sh_type == SHT_RELA) {
        let rela = s.sh_type == SHT_RELA;
        let esize = if rela { RELA_SIZE } else { REL_SIZE };
        if s.data.len() % esize != 0 {
            return Err(ZebinError::BadField { what: "relocation section size", value: s.size });
        }
        for e in s.data.chunks_exact(esize) {
            let e = Reader { bytes: e };
            let info = e.u64(8)?;
            let addend = if rela { Some(e.u64(16)? as i64) } else { None };
            out.push(Relocation {
                target_section: s.info,
                offset: e.u64(0)?,
                symbol: (info >> 32) as u32,
                rel_type: info as u32,
                addend,
            });
        }
    }
    Ok(out)
}

impl Zebin {
    /// Parses a zebin image. Never panics; any inconsistency is a [`ZebinError`].
    pub fn parse(bytes: &[u8]) -> Result<Zebin, ZebinError> {
        let r = Reader { bytes };
        let (layout, machine, flags) = read_header(&r)?;
        let sections = read_sections(&r, &layout)?;
        let symbols = read_symbols(&sections)?;
        let relocations = read_relocations(&sections)?;
        Ok(Zebin { machine, flags, sections, symbols, relocations })
    }

    /// The first section named `name`, with its header index.
    pub fn section(&self, name: &str) -> Option<(u16, &Section)> {
        let i = self.sections.iter().position(|s| s.name == name)?;
        Some((u16::try_from(i).ok()?, &self.sections[i]))
    }

    /// The `.ze_info` section as text.
    pub fn ze_info_text(&self) -> Result<&str, ZebinError> {
        let (_, s) = self.section(".ze_info").ok_or(ZebinError::MissingSection(".ze_info"))?;
        std::str::from_utf8(&s.data).map_err(|_| ZebinError::NotText(".ze_info"))
    }

    /// Bytes of `.data.const` (constant tables read through `faddr`), if present.
    pub fn data_const(&self) -> Option<&[u8]> {
        self.section(".data.const").map(|(_, s)| s.data.as_slice())
    }

    /// Bytes of `.data.global` (program-scope globals), if present.
    pub fn data_global(&self) -> Option<&[u8]> {
        self.section(".data.global").map(|(_, s)| s.data.as_slice())
    }

    /// The symbol named `name`.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// The address `faddr name` yields when the symbol's section is loaded at `base`:
    /// `base + value`. `base_of` maps a section index to where the caller placed it.
    pub fn symbol_address(&self, name: &str, base_of: impl Fn(u16) -> Option<u64>) -> Option<u64> {
        let sym = self.symbol(name)?;
        base_of(sym.section)?.checked_add(sym.value)
    }

    /// The PRODUCT_FAMILY value from `.note.intelgt.compat` (18 = Skylake, 29 = Tiger Lake
    /// LP, 1270 = DG2/ACM), which tells which platform the kernel was compiled for.
    pub fn product_family(&self) -> Option<u32> {
        let notes = self.sections.iter().filter(|s| s.sh_type == SHT_NOTE);
        notes.filter(|s| s.name == ".note.intelgt.compat").find_map(|s| {
            find_note(&s.data, NT_INTELGT_PRODUCT_FAMILY)
                .filter(|d| d.len() >= 4)
                .map(|d| u32::from_le_bytes([d[0], d[1], d[2], d[3]]))
        })
    }
}

/// The descriptor of the first note of type `want` in an ELF note section.
fn find_note(data: &[u8], want: u32) -> Option<&[u8]> {
    let r = Reader { bytes: data };
    let mut at = 0usize;
    while at + 12 <= data.len() {
        let namesz = r.u32(at).ok()? as usize;
        let descsz = r.u32(at + 4).ok()? as usize;
        let ntype = r.u32(at + 8).ok()?;
        // Name and descriptor are each padded to 4 bytes.
        let desc_at = at.checked_add(12)?.checked_add(namesz.checked_add(3)? & !3)?;
        let next = desc_at.checked_add(descsz.checked_add(3)? & !3)?;
        let desc = data.get(desc_at..desc_at.checked_add(descsz)?)?;
        if ntype == want {
            return Some(desc);
        }
        at = next;
    }
    None
}
