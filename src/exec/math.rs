//! Float ALU ops. Values are computed in f64 together with the sign of the exact residual
//! (error-free transforms: TwoSum, TwoProduct, division/sqrt remainders), then rounded once
//! into the destination format with the cr0 rounding mode — exact for add/mul/mad/divm/sqrtm
//! of F and HF in every mode, and for DF add/mul/divm/sqrtm. HF math is thereby "promote to
//! f32, round to f16". Transcendentals use the f64 libm result rounded to the dst (hardware
//! results are approximations within a few ulp; we return the nearly-exact value). The vISA
//! 4.2 conversions and macros (fcvt, srnd, invm, rsqtm, add3.o) are in `xe2`.

use super::alu::{exec_fmt, load_floats, store_floats, AluError, AluOut, Ctx, Lanes, SrcLanes};
use super::convert::{self, Fmt, RoundMode};
use crate::isa::Opcode;

/// Sign of a residual (-1, 0, +1); NaN residuals (overflowed results) count as exact.
#[inline]
fn sign(e: f64) -> i8 {
    if e > 0.0 {
        1
    } else if e < 0.0 {
        -1
    } else {
        0
    }
}

/// a + b as (rounded sum, sign of the exact error) — Knuth's TwoSum.
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, i8) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, if s.is_finite() { sign(err) } else { 0 })
}

/// a · b as (rounded product, sign of the exact error), via fma.
#[inline]
pub(crate) fn two_prod(a: f64, b: f64) -> (f64, i8) {
    let p = a * b;
    (p, if p.is_finite() { sign(a.mul_add(b, -p)) } else { 0 })
}

/// a · b + c: exact whenever a · b is exact in f64 (always for F and HF sources).
#[inline]
pub(crate) fn fused(a: f64, b: f64, c: f64) -> (f64, i8) {
    let (p, pe) = two_prod(a, b);
    // A product that overflowed from finite sources may still meet a finite sum.
    if pe == 0 && (p.is_finite() || !a.is_finite() || !b.is_finite()) {
        two_sum(p, c)
    } else {
        // DF: the fma result is correctly rounded to nearest; the residual is not tracked,
        // so directed rounding of DF mad is not emulated (IGC never changes the mode there).
        (a.mul_add(b, c), 0)
    }
}

/// a / b with the sign of the exact error from the fma remainder.
#[inline]
pub(crate) fn divide(a: f64, b: f64) -> (f64, i8) {
    let q = a / b;
    if !q.is_finite() || q == 0.0 {
        return (q, 0);
    }
    let r = (-q).mul_add(b, a);
    (q, sign(r) * sign(b))
}

/// sqrt(a) with the sign of the exact error.
#[inline]
pub(crate) fn root(a: f64) -> (f64, i8) {
    let r = a.sqrt();
    if !r.is_finite() || r == 0.0 {
        return (r, 0);
    }
    (r, sign((-r).mul_add(r, a)))
}

/// Number of sources of a float op, or None if vdb does not evaluate it.
fn arity(op: Opcode) -> Option<usize> {
    use Opcode as O;
    Some(match op {
        O::Mad | O::Lrp => 3,
        O::Add | O::Mul | O::Div | O::Divm | O::Pow | O::Dp2 | O::Dp3 | O::Dp4 | O::Dph => 2,
        O::Line => 2,
        O::Inv | O::Log | O::Exp | O::Sqrt | O::Rsqrt | O::Sqrtm | O::Sin | O::Cos => 1,
        O::Tanh | O::Sigm => 1,
        O::Frc | O::Rndd | O::Rndu | O::Rnde | O::Rndz => 1,
        _ => return None,
    })
}

/// Evaluates a float-domain op and stores the results.
pub(crate) fn eval_float(cx: &Ctx, srcs: &[SrcLanes], out: &mut AluOut) -> Result<(), AluError> {
    let Some(n) = arity(cx.op) else {
        return Err(cx.unsupported(srcs, "no float semantics in vdb"));
    };
    let s = cx.srcs(srcs, n)?;
    let exec = exec_fmt(s);
    let mut v = [[0f64; 32]; 3];
    for (slot, src) in v.iter_mut().zip(s) {
        *slot = load_floats(cx, src);
    }
    let mut r = [(0f64, 0i8); 32];
    let m = cx.mask;
    let [a, b, c] = &v;
    use Opcode as O;
    match cx.op {
        O::Add => lanes2(m, &mut r, a, b, two_sum),
        O::Mul => lanes2(m, &mut r, a, b, two_prod),
        O::Mad => lanes3(m, &mut r, [a, b, c], fused),
        O::Divm => lanes2(m, &mut r, a, b, divide),
        O::Div => div(m, &mut r, a, b, exec),
        O::Pow => lanes2(m, &mut r, a, b, |x, y| (x.powf(y), 0)),
        O::Lrp => lanes3(m, &mut r, [a, b, c], |x, y, z| (y * x + z * (1.0 - x), 0)),
        O::Dp2 | O::Dp3 | O::Dp4 | O::Dph => dot(cx.op, m, &mut r, a, b),
        // LINE (Gen): dst = src0[0] · src1 + src0[3]; the caller supplies src0 with a <0;4,1>
        // region so lanes 0 and 3 hold the line's p and q.
        O::Line => lanes1(m, &mut r, b, |y| (a[0].mul_add(y, a[3]), 0)),
        _ => unary(cx.op, m, &mut r, a),
    }
    // A NaN from NaN operands is the first NaN operand, quieted (IEEE 754 asks for one of
    // them; which one the host's instructions give depends on the order the compiler puts
    // the operands in, and add and mul are commutative to it).
    if matches!(cx.op, O::Add | O::Mul | O::Mad | O::Div | O::Divm) {
        for l in Lanes(m) {
            r[l] = first_nan(r[l], v[..n].iter().map(|s| s[l]));
        }
    }
    store_floats(cx, exec, &r, out);
    Ok(())
}

/// A NaN result replaced by the first NaN among `srcs`, quieted (and exact).
#[inline]
pub(crate) fn first_nan(r: (f64, i8), mut srcs: impl Iterator<Item = f64>) -> (f64, i8) {
    match srcs.find(|x| r.0.is_nan() && x.is_nan()) {
        Some(x) => (f64::from_bits(x.to_bits() | 1 << 51), 0),
        None => r,
    }
}

#[inline]
fn lanes1(m: u32, r: &mut [(f64, i8); 32], a: &[f64; 32], f: impl Fn(f64) -> (f64, i8)) {
    for l in Lanes(m) {
        r[l] = f(a[l]);
    }
}

#[inline]
fn lanes2(m: u32, r: &mut [(f64, i8); 32], a: &[f64; 32], b: &[f64; 32], f: impl Fn(f64, f64) -> (f64, i8)) {
    for l in Lanes(m) {
        r[l] = f(a[l], b[l]);
    }
}

#[inline]
fn lanes3(m: u32, r: &mut [(f64, i8); 32], s: [&[f64; 32]; 3], f: impl Fn(f64, f64, f64) -> (f64, i8)) {
    for l in Lanes(m) {
        r[l] = f(s[0][l], s[1][l], s[2][l]);
    }
}

/// One-source math: inv, log (log2), exp (2^x), sqrt, rsqrt, sqrtm, sin, cos, frc, rnd*.
fn unary(op: Opcode, m: u32, r: &mut [(f64, i8); 32], a: &[f64; 32]) {
    lanes1(m, r, a, |x| unary_lane(op, x))
}

/// One lane of the one-source math (the definition the hf/bf/df tier computes with too).
#[inline]
pub(crate) fn unary_lane(op: Opcode, x: f64) -> (f64, i8) {
    use Opcode as O;
    match op {
        O::Inv => divide(1.0, x),
        O::Log => (x.log2(), 0),
        O::Exp => (x.exp2(), 0),
        O::Sqrt | O::Sqrtm => root(x),
        O::Rsqrt => (1.0 / x.sqrt(), 0),
        O::Sin => (x.sin(), 0),
        O::Cos => (x.cos(), 0),
        // IGC 2.x's tanh and sigm (the logistic 1/(1+e^-x)); the vISA documentation has no
        // page for them, so as for sin and cos vdb returns the f64 value rounded to the dst.
        O::Tanh => (x.tanh(), 0),
        O::Sigm => (1.0 / (1.0 + (-x).exp()), 0),
        // x - floor(x) is exact in f64 for F/HF inputs.
        O::Frc => (x - x.floor(), 0),
        O::Rndd => (x.floor(), 0),
        O::Rndu => (x.ceil(), 0),
        O::Rnde => (x.round_ties_even(), 0),
        _ => (x.trunc(), 0),
    }
}

/// DIV.md: float divide is `x · INV(y)`, with INV rounded to the execution format first
/// (so F results can differ from IEEE division by an ulp; `divm` is the exact one). DF
/// division is done IEEE-exactly, as IGC expands it to the divm sequence anyway.
fn div(m: u32, r: &mut [(f64, i8); 32], a: &[f64; 32], b: &[f64; 32], exec: Fmt) {
    lanes2(m, r, a, b, |x, y| div_lane(x, y, exec))
}

/// One lane of [`div`] in the execution format `exec`.
#[inline]
pub(crate) fn div_lane(x: f64, y: f64, exec: Fmt) -> (f64, i8) {
    if exec == convert::F64 {
        return divide(x, y);
    }
    let (q, e) = divide(1.0, y);
    let inv = exec.decode(convert::encode(exec, q, e, RoundMode::Rne));
    two_prod(x, inv)
}

/// dp2/dp3/dp4/dph: each group of four lanes receives the dot product of its group.
fn dot(op: Opcode, m: u32, r: &mut [(f64, i8); 32], a: &[f64; 32], b: &[f64; 32]) {
    let n = match op {
        Opcode::Dp2 => 2,
        Opcode::Dp4 => 4,
        _ => 3,
    };
    for l in Lanes(m) {
        let g = l & !3;
        let mut sum: f64 = (0..n).map(|j| a[g + j] * b[g + j]).sum();
        if op == Opcode::Dph {
            sum += b[g + 3];
        }
        r[l] = (sum, 0);
    }
}

#[cfg(test)]
#[path = "math_tests.rs"]
mod tests;
