//! LSC 2D block loads and stores (`lsc_load_block2d`, `lsc_store_block2d`; LSC_UNTYPED.md,
//! LOAD_BLOCK2D / STORE_BLOCK2D): a `width x height` tile of elements (times `blocks` side by
//! side for loads) between a 2D surface in memory and registers, optionally transposed or
//! VNNI-transformed on the way in. Elements outside the surface read as zeros and are not
//! written, as the hardware's bounds check does. Memory is touched a row at a time: each
//! row's part inside the surface is one read or write (one page lookup, one access noted),
//! element by element only where that fails, so that a fault names the element.

use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{LscBlock2dAddr, LscBlock2dData, Opcode, Operand};
use crate::machine::MemSpace;
use crate::program::Inst;

/// The surface and the tile's top-left element.
struct Surface {
    base: u64,
    /// Bytes per row that are inside the surface, rows, and bytes from one row to the next.
    width: u64,
    height: u64,
    pitch: u64,
    x: i64,
    y: i64,
}

/// Executes a 2D block load or store.
pub(super) fn block2d<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst) -> Result<(), FaultKind> {
    let (data, addr) = match (inst.op, inst.operands.first(), inst.operands.get(1)) {
        (Opcode::LscLoadBlock2d, Some(Operand::LscBlock2dData(d)), Some(Operand::LscBlock2dAddr(a))) => {
            (d, a)
        }
        (Opcode::LscStoreBlock2d, Some(Operand::LscBlock2dAddr(a)), Some(Operand::LscBlock2dData(d))) => {
            (d, a)
        }
        _ => return Err(FaultKind::NotImplemented(format!("`{}` in this form", inst.op.mnemonic()))),
    };
    let surface = surface(ctx, addr)?;
    if inst.op == Opcode::LscLoadBlock2d {
        load(ctx, data, &surface)
    } else {
        store(ctx, data, &surface)
    }
}

/// A field of the explicit address form: a constant or a variable's first element.
fn field<O: Observer>(ctx: &Ctx<'_, O>, op: &Operand, bytes: u32) -> Result<u64, FaultKind> {
    match op {
        Operand::Int(v) => Ok(*v as u64),
        Operand::Raw(r) => Ok(super::operand::load_le(ctx.grf(r.base, bytes)?, bytes)),
        _ => Err(FaultKind::NotImplemented("a 2D block address field of this kind".into())),
    }
}

/// The surface an address operand describes. Width, height and pitch are encoded minus one
/// (as the message payload carries them: IGC writes a pitch of `0x5FFF` for 24,576 bytes).
fn surface<O: Observer>(ctx: &Ctx<'_, O>, addr: &LscBlock2dAddr) -> Result<Surface, FaultKind> {
    let (base, w, h, p, x, y) = match addr {
        LscBlock2dAddr::Fields(f) => (
            field(ctx, &f[0], 8)?,
            field(ctx, &f[1], 4)?,
            field(ctx, &f[2], 4)?,
            field(ctx, &f[3], 4)?,
            field(ctx, &f[4], 4)? as u32 as i32 as i64,
            field(ctx, &f[5], 4)? as u32 as i32 as i64,
        ),
        // The payload register IGC 2.x builds: base (dwords 0-1), width-1, height-1,
        // pitch-1, X, Y (dwords 2-6); the immediates move the tile.
        LscBlock2dAddr::Payload { payload, x, y } => {
            let p = ctx.grf(payload.base, 28)?;
            let dw = |i: usize| u32::from_le_bytes([p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]]);
            let base = u64::from(dw(0)) | u64::from(dw(1)) << 32;
            (
                base,
                u64::from(dw(2)),
                u64::from(dw(3)),
                u64::from(dw(4)),
                dw(5) as i32 as i64 + x,
                dw(6) as i32 as i64 + y,
            )
        }
    };
    Ok(Surface {
        base,
        width: (w & 0xff_ffff) + 1,
        height: (h & 0xff_ffff) + 1,
        pitch: (p & 0xff_ffff) + 1,
        x,
        y,
    })
}

/// Reads element (`x`, `y`) of `t` bytes: zero outside the surface.
fn read_elem<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    s: &Surface,
    x: i64,
    y: i64,
    t: u64,
) -> Result<u64, FaultKind> {
    match elem_addr(s, x, y, t) {
        Some(at) => {
            let mut buf = [0u8; 8];
            ctx.mem_read(MemSpace::Svm, at, &mut buf[..t as usize])?;
            Ok(u64::from_le_bytes(buf))
        }
        None => Ok(0),
    }
}

/// The address of element (`x`, `y`), if it lies inside the surface.
fn elem_addr(s: &Surface, x: i64, y: i64, t: u64) -> Option<u64> {
    let (x, y) = (u64::try_from(x).ok()?, u64::try_from(y).ok()?);
    let inside = x.checked_add(1)?.checked_mul(t)? <= s.width && y < s.height;
    inside.then(|| s.base.wrapping_add(y * s.pitch).wrapping_add(x * t))
}

/// The part of a row of `w` elements from (`x0`, `y`) that lies inside the surface: the
/// index of its first element in the row, how many there are, and the first one's address
/// (none above, below or beside the surface).
fn row_span(s: &Surface, x0: i64, y: i64, w: u32, t: u64) -> Option<(u32, u32, u64)> {
    let columns = (s.width / t) as i64;
    let first = (-x0).clamp(0, i64::from(w));
    let end = (columns - x0).clamp(0, i64::from(w));
    let at = elem_addr(s, x0 + first, y, t).filter(|_| first < end)?;
    Some((first as u32, (end - first) as u32, at))
}

/// The `w x h` elements from (`x0`, `s.y`), row after row (zeros outside the surface). Each
/// row's part inside the surface is one read; a row that cannot be read in one (a page
/// missing) is read element by element, so that the fault names the first element it
/// could not read.
fn read_tile<O: Observer>(
    ctx: &mut Ctx<'_, O>,
    s: &Surface,
    x0: i64,
    w: u32,
    h: u32,
    t: u64,
) -> Result<Vec<u64>, FaultKind> {
    let mut tile = vec![0u64; (w * h) as usize];
    let mut row = vec![0u8; w as usize * t as usize];
    for dy in 0..h {
        let y = s.y + i64::from(dy);
        let Some((first, len, at)) = row_span(s, x0, y, w, t) else { continue };
        let out = &mut tile[(dy * w + first) as usize..(dy * w + first + len) as usize];
        let bytes = &mut row[..len as usize * t as usize];
        if ctx.mem_read(MemSpace::Svm, at, bytes).is_ok() {
            for (v, b) in out.iter_mut().zip(bytes.chunks_exact(t as usize)) {
                *v = super::operand::load_le(b, t as u32);
            }
        } else {
            for (k, v) in out.iter_mut().enumerate() {
                *v = read_elem(ctx, s, x0 + i64::from(first) + k as i64, y, t)?;
            }
        }
    }
    Ok(tile)
}

/// LOAD_BLOCK2D: the four layouts (plain, VNNI, transposed, both) of LSC_UNTYPED.md, each
/// block padded to whole registers, rows padded to a power of two with zeros.
fn load<O: Observer>(ctx: &mut Ctx<'_, O>, d: &LscBlock2dData, s: &Surface) -> Result<(), FaultKind> {
    let t = u64::from(d.data_size.mem_bytes());
    let grf = ctx.tables.grf_size;
    let elems_per_reg = grf / t as u32;
    let per_dword = (4 / t as u32).max(1);
    let (b_n, w, h) = (d.blocks, d.width, d.height);
    let row_size = if d.transpose { h } else { w };
    let row_pitch = row_size.next_power_of_two();
    let block_size = row_pitch * if d.transpose { w } else { h };
    let block_pitch = block_size.div_ceil(elems_per_reg) * elems_per_reg;
    let mut out = vec![0u64; (b_n * block_pitch) as usize];
    for b in 0..b_n {
        let tile = read_tile(ctx, s, s.x + i64::from(b * w), w, h, t)?;
        let base = (b * block_pitch) as usize;
        // VNNI packs `per_dword` consecutive rows (columns, transposed) into each dword;
        // the plain layouts are the same walk with one element a dword.
        let k = if d.vnni { per_dword } else { 1 };
        let (outer, inner) = if d.transpose { (w, h) } else { (h, w) };
        for o in (0..outer).step_by(k as usize) {
            for n in 0..inner {
                for i in 0..k {
                    let (x, y) = if d.transpose { (o + i, n) } else { (n, o + i) };
                    let at = base + (o * row_pitch + n * k + i) as usize;
                    out[at] = tile[(y * w + x) as usize];
                }
            }
        }
    }
    if d.raw.is_null {
        // A prefetch: the data goes nowhere.
        return Ok(());
    }
    let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()[..t as usize].to_vec()).collect();
    ctx.write_grf(d.raw.base, &bytes)
}

/// STORE_BLOCK2D: one block, laid out in registers as the plain load lays it (rows of
/// `width` elements, padded to a power of two); elements outside the surface are dropped.
fn store<O: Observer>(ctx: &mut Ctx<'_, O>, d: &LscBlock2dData, s: &Surface) -> Result<(), FaultKind> {
    if d.blocks != 1 || d.transpose || d.vnni {
        return Err(FaultKind::NotImplemented(
            "lsc_store_block2d of several, transposed or VNNI blocks".into(),
        ));
    }
    let t = d.data_size.mem_bytes();
    let row_pitch = d.width.next_power_of_two();
    let regs = ctx.grf(d.raw.base, row_pitch * d.height * t)?.to_vec();
    let t64 = u64::from(t);
    // Each row's part inside the surface in one write, element by element where that
    // cannot be done in one (so that the fault names the first element not written).
    for dy in 0..d.height {
        let y = s.y + i64::from(dy);
        let Some((first, len, at)) = row_span(s, s.x, y, d.width, t64) else { continue };
        let from = ((dy * row_pitch + first) * t) as usize;
        if ctx.mem_write(MemSpace::Svm, at, &regs[from..from + (len * t) as usize]).is_ok() {
            continue;
        }
        for k in 0..len {
            let from = from + (k * t) as usize;
            ctx.mem_write(MemSpace::Svm, at.wrapping_add(u64::from(k * t)), &regs[from..from + t as usize])?;
        }
    }
    Ok(())
}
