//! Integer ALU ops: arithmetic on sign/zero-extended values held in i128 (so `.sat` sees the
//! exact result before clamping and wrap-around is a plain truncation at store time), logic,
//! shifts and bit manipulation.

use super::alu::{load_ints, store_ints, AluError, AluOut, Ctx, Lanes, SrcLanes};
use super::convert::mask;
use crate::isa::{Opcode, SubOp};

/// Applies `f` to two sources on the enabled lanes.
#[inline]
fn map2(m: u32, r: &mut [i128; 32], a: &[i128; 32], b: &[i128; 32], f: impl Fn(i128, i128) -> i128) {
    for l in Lanes(m) {
        r[l] = f(a[l], b[l]);
    }
}

/// Applies `f` to three sources on the enabled lanes.
#[inline]
fn map3(m: u32, r: &mut [i128; 32], s: [&[i128; 32]; 3], f: impl Fn(i128, i128, i128) -> i128) {
    for l in Lanes(m) {
        r[l] = f(s[0][l], s[1][l], s[2][l]);
    }
}

/// Number of sources of the integer arithmetic op.
fn arity(op: Opcode) -> usize {
    match op {
        Opcode::Add3 | Opcode::Mad | Opcode::Madw | Opcode::Sad2add | Opcode::Dp4a => 3,
        _ => 2,
    }
}

/// Integer division truncating toward zero (DIV.md sign table). Division by zero is not
/// specified by vISA; Gen's integer divide returns an all-ones quotient, which we mirror,
/// and the remainder is the dividend (so q·d + r == n still holds for d = 0).
fn div(n: i128, d: i128) -> i128 {
    if d == 0 {
        -1
    } else {
        n / d
    }
}

fn rem(n: i128, d: i128) -> i128 {
    if d == 0 {
        n
    } else {
        n % d
    }
}

/// add, add3, avg, mul, mulh, mad, div, mod, sad2, sad2add, dp4a, addc, subb, madw.
pub(crate) fn arith(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let s = cx.srcs(srcs, arity(cx.op))?;
    let a = load_ints(&s[0]);
    let b = load_ints(&s[1]);
    let c = if s.len() > 2 { load_ints(&s[2]) } else { [0; 32] };
    let m = cx.mask;
    let mut r = [0i128; 32];
    // Products of two 64-bit values can exceed i128 only for q/uq; saturate those for .sat.
    let mul = if cx.sat { i128::saturating_mul } else { i128::wrapping_mul };
    let add = if cx.sat { i128::saturating_add } else { i128::wrapping_add };
    match cx.op {
        Opcode::Add => map2(m, &mut r, &a, &b, |x, y| x + y),
        Opcode::Add3 => map3(m, &mut r, [&a, &b, &c], |x, y, z| x + y + z),
        // Exact in i128, so no intermediate overflow; `>>` floors like the hardware's shift.
        Opcode::Avg => map2(m, &mut r, &a, &b, |x, y| (x + y + 1) >> 1),
        Opcode::Mul => map2(m, &mut r, &a, &b, mul),
        Opcode::Mad => map3(m, &mut r, [&a, &b, &c], |x, y, z| add(mul(x, y), z)),
        // Sources are 32-bit (the parser faults others): the product is exact; `>> 32` keeps
        // its high dword.
        Opcode::Mulh => map2(m, &mut r, &a, &b, |x, y| x.wrapping_mul(y) >> 32),
        Opcode::Div => map2(m, &mut r, &a, &b, div),
        Opcode::Mod => map2(m, &mut r, &a, &b, rem),
        Opcode::Sad2 | Opcode::Sad2add => sad2(m, &mut r, [&a, &b, &c], cx.op == Opcode::Sad2add),
        Opcode::Dp4a => dp4a(m, &mut r, s, [&a, &b, &c]),
        Opcode::Addc | Opcode::Subb | Opcode::Madw => return wide(cx, [&a, &b, &c], out),
        _ => return Err(cx.unsupported(srcs, "not an integer arithmetic op")),
    }
    store_ints(cx, &r, out);
    Ok(())
}

/// sad2/sad2add: even lanes get |a0-b0| + |a1-b1| (+ c); odd lanes are "undefined" in the
/// spec and are written as 0 here so replays are deterministic.
fn sad2(m: u32, r: &mut [i128; 32], s: [&[i128; 32]; 3], add: bool) {
    for l in Lanes(m) {
        r[l] = if l % 2 == 1 {
            0
        } else {
            let hi = (l + 1).min(31);
            let sum = (s[0][l] - s[1][l]).abs() + (s[0][hi] - s[1][hi]).abs();
            if add {
                sum + s[2][l]
            } else {
                sum
            }
        };
    }
}

/// dp4a: src0 + Σ byte(src1)·byte(src2); each byte's signedness follows its source type.
fn dp4a(m: u32, r: &mut [i128; 32], s: &[SrcLanes], v: [&[i128; 32]; 3]) {
    let byte = |x: i128, k: u32, signed: bool| -> i128 {
        let b = (x >> (8 * k)) as u8;
        if signed {
            b as i8 as i128
        } else {
            b as i128
        }
    };
    let (s1, s2) = (s[1].ty.is_signed_int(), s[2].ty.is_signed_int());
    for l in Lanes(m) {
        let dot: i128 = (0..4).map(|k| byte(v[1][l], k, s1) * byte(v[2][l], k, s2)).sum();
        r[l] = v[0][l] + dot;
    }
}

/// addc/subb/madw: two destinations. addc/subb work on the dst-width unsigned values (carry
/// and borrow are 0/1); madw writes the low dword of src0·src1+src2 to `values` and the high
/// dword to `second`.
fn wide(cx: &Ctx, s: [&[i128; 32]; 3], out: &mut AluOut) -> Result<(), AluError> {
    let w = cx.dst.bits();
    let mk = mask(w);
    for l in Lanes(cx.mask) {
        let (x, y) = ((s[0][l] as u64 & mk) as u128, (s[1][l] as u64 & mk) as u128);
        let (lo, hi) = match cx.op {
            Opcode::Addc => ((x + y) as u64, ((x + y) >> w) as u64),
            Opcode::Subb => (x.wrapping_sub(y) as u64, (x < y) as u64),
            _ => {
                let full = s[0][l].wrapping_mul(s[1][l]).wrapping_add(s[2][l]);
                (full as u64, (full >> 32) as u64)
            }
        };
        out.values[l] = lo & mk;
        out.second[l] = hi & mk;
    }
    Ok(())
}

/// and, or, xor, not, bfn.xHH on the extended values (`(~)` already applied), truncated at
/// store time.
pub(crate) fn logic(cx: &Ctx, sub: &SubOp, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let n = match cx.op {
        Opcode::Not => 1,
        Opcode::Bfn => 3,
        _ => 2,
    };
    let s = cx.srcs(srcs, n)?;
    let a = load_ints(&s[0]);
    let b = if n > 1 { load_ints(&s[1]) } else { [0; 32] };
    let m = cx.mask;
    let mut r = [0i128; 32];
    match cx.op {
        Opcode::And => map2(m, &mut r, &a, &b, |x, y| x & y),
        Opcode::Or => map2(m, &mut r, &a, &b, |x, y| x | y),
        Opcode::Xor => map2(m, &mut r, &a, &b, |x, y| x ^ y),
        Opcode::Not => map2(m, &mut r, &a, &b, |x, _| !x),
        _ => {
            let SubOp::Bfn(table) = *sub else {
                return Err(cx.unsupported(srcs, "bfn without a truth table"));
            };
            let c = load_ints(&s[2]);
            map3(m, &mut r, [&a, &b, &c], |x, y, z| bfn(table, x, y, z));
        }
    }
    store_ints(cx, &r, out);
    Ok(())
}

/// Three-input boolean function: result bit = table bit (s0 + (s1 << 1) + (s2 << 2)), as in
/// BFN.md (IGC's `bfn.xd8 d c a b` is `c ? a : b`).
fn bfn(table: u8, x: i128, y: i128, z: i128) -> i128 {
    let mut r = 0;
    for k in 0..8 {
        if table >> k & 1 == 1 {
            let p = if k & 1 != 0 { x } else { !x };
            let q = if k & 2 != 0 { y } else { !y };
            let t = if k & 4 != 0 { z } else { !z };
            r |= p & q & t;
        }
    }
    r
}

/// shl, shr, asr, rol, ror. Shift counts use the low 5 bits (6 for a 64-bit dst) of src1
/// (SHL/SHR/ASR notes); rotates use src0's width (ROL/ROR pseudo-code).
pub(crate) fn shift(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let s = cx.srcs(srcs, 2)?;
    let a = load_ints(&s[0]);
    let b = load_ints(&s[1]);
    let cnt_mask: i128 = if cx.dst.bits() == 64 { 63 } else { 31 };
    let w = s[0].ty.bits().min(64);
    let wm = mask(w) as i128;
    let m = cx.mask;
    let mut r = [0i128; 32];
    match cx.op {
        // Bits shifted past bit 127 cannot reach a ≤64-bit dst, so wrapping is harmless.
        Opcode::Shl => map2(m, &mut r, &a, &b, |x, y| x << (y & cnt_mask)),
        // Logical: shift the zero-extended source-width value.
        Opcode::Shr => map2(m, &mut r, &a, &b, |x, y| (x & wm) >> (y & cnt_mask)),
        // Arithmetic on the value extended by its own type (so a ud source shifts in zeros).
        Opcode::Asr => map2(m, &mut r, &a, &b, |x, y| x >> (y & cnt_mask)),
        Opcode::Rol | Opcode::Ror => {
            let left = cx.op == Opcode::Rol;
            map2(m, &mut r, &a, &b, |x, y| rotate(x & wm, y, w, left));
        }
        _ => return Err(cx.unsupported(srcs, "not a shift")),
    }
    store_ints(cx, &r, out);
    Ok(())
}

/// Rotates the `w`-bit value `x` by `y mod w`.
fn rotate(x: i128, y: i128, w: u32, left: bool) -> i128 {
    let rm = w as i128 - 1;
    let (l, rt) = if left { (y & rm, (-y) & rm) } else { ((-y) & rm, y & rm) };
    ((x << l) | (x >> rt)) & mask(w) as i128
}

/// cbit, fbh, fbl, lzd, bfrev, bfe, bfi (all on 32-bit or narrower values).
pub(crate) fn bits(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let n = match cx.op {
        Opcode::Bfe => 3,
        Opcode::Bfi => 4,
        _ => 1,
    };
    let s = cx.srcs(srcs, n)?;
    let v: [[i128; 32]; 4] = std::array::from_fn(|i| s.get(i).map(load_ints).unwrap_or([0; 32]));
    let wm = mask(s[0].ty.bits().min(64));
    let signed = s[0].ty.is_signed_int();
    let mut r = [0i128; 32];
    for l in Lanes(cx.mask) {
        let x = v[0][l] as u64 & wm;
        r[l] = match cx.op {
            Opcode::Cbit => x.count_ones() as i128,
            Opcode::Fbh => fbh(x as u32, signed),
            Opcode::Fbl if x as u32 == 0 => 0xffff_ffff,
            Opcode::Fbl => (x as u32).trailing_zeros() as i128,
            Opcode::Lzd => (x as u32).leading_zeros() as i128,
            Opcode::Bfrev => (x as u32).reverse_bits() as i128,
            Opcode::Bfe => bfe(v[0][l], v[1][l], v[2][l], cx.dst.is_signed_int()),
            Opcode::Bfi => bfi(v[0][l], v[1][l], v[2][l], v[3][l]),
            _ => return Err(cx.unsupported(srcs, "not a bit op")),
        };
    }
    store_ints(cx, &r, out);
    Ok(())
}

/// First bit from the MSB that differs from the sign (signed) or is set (unsigned);
/// 0xFFFFFFFF when there is none (FBH.md).
pub(super) fn fbh(x: u32, signed: bool) -> i128 {
    if x == 0 || (signed && x == u32::MAX) {
        0xffff_ffff
    } else if signed && (x as i32) < 0 {
        x.leading_ones() as i128
    } else {
        x.leading_zeros() as i128
    }
}

/// BFE.md gives `(src2 >> offset) & ((1 << width) - 1)`. For a D dst we follow Gen hardware
/// (and D3D `ibfe`): the extracted field is sign-extended, and when width + offset ≥ 32 the
/// result is `src2 >> offset` arithmetically. For UD both readings agree.
fn bfe(width: i128, offset: i128, src: i128, signed: bool) -> i128 {
    let (w, o) = ((width & 31) as u32, (offset & 31) as u32);
    let x = src as u32;
    if w == 0 {
        0
    } else if !signed {
        ((x >> o) as u64 & mask(w)) as i128
    } else if w + o < 32 {
        (((x << (32 - w - o)) as i32) >> (32 - w)) as i128
    } else {
        ((x as i32) >> o) as i128
    }
}

/// BFI.md: mask = ((1 << width) - 1) << offset on 32 bits.
fn bfi(width: i128, offset: i128, src: i128, base: i128) -> i128 {
    let (w, o) = ((width & 31) as u32, (offset & 31) as u32);
    let bitmask = ((mask(w) as u32) << o) as i128;
    ((((src as u32) << o) as i128) & bitmask) | (base & !bitmask & 0xffff_ffff)
}
