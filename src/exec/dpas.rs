//! `dpas.W.A.SD.RC` (DPAS.md): D = C + A x B on whole registers. Src1 (B, precision W) holds
//! one column per channel, several elements packed in each dword; Src2 (A, precision A) is a
//! row-major stream of elements; Dst and Src0 (C) hold one dword per channel, a register per
//! repeat. Integer forms are exact (wrapping 32-bit accumulation); bf, hf and tf32 forms
//! compute each dot product exactly and round it, then the sum, to f32 (the pseudo-code's
//! `temp.F[i] += dot2(...)`).

use super::convert::{self, Fmt, RoundMode};
use super::ctx::Ctx;
use super::fault::FaultKind;
use super::observer::Observer;
use crate::isa::{DataType, Operand, SubOp};
use crate::program::Inst;

/// An element precision of a dpas source.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Precision {
    Int { bits: u32, signed: bool },
    Float(Fmt, u32),
}

impl Precision {
    fn parse(text: &str) -> Option<Precision> {
        let t = text.to_ascii_lowercase();
        Some(match t.as_str() {
            "bf" => Precision::Float(convert::BF16, 16),
            "hf" => Precision::Float(convert::F16, 16),
            "tf32" => Precision::Float(convert::F32, 32),
            _ => {
                let (signed, bits) = match t.split_at(1) {
                    ("s", b) => (true, b),
                    ("u", b) => (false, b),
                    _ => return None,
                };
                let bits: u32 = bits.parse().ok()?;
                matches!(bits, 1 | 2 | 4 | 8).then_some(Precision::Int { bits, signed })?
            }
        })
    }

    fn bits(self) -> u32 {
        match self {
            Precision::Int { bits, .. } | Precision::Float(_, bits) => bits,
        }
    }
}

/// One element's value: an integer, or a float exactly as f64.
fn element(p: Precision, raw: u64) -> Value {
    match p {
        Precision::Int { bits, signed } => {
            let v = if signed { ((raw << (64 - bits)) as i64) >> (64 - bits) } else { raw as i64 };
            Value::Int(v)
        }
        // TF32 sits in an f32 container; its low 13 mantissa bits are not used.
        Precision::Float(fmt, 32) => Value::Float(fmt.decode(raw & !0x1fff)),
        Precision::Float(fmt, _) => Value::Float(fmt.decode(raw)),
    }
}

#[derive(Copy, Clone)]
enum Value {
    Int(i64),
    Float(f64),
}

/// Reads `bits` bits at bit offset `at` of a register stream starting at GRF byte `base`.
fn bits_at<O: Observer>(ctx: &Ctx<'_, O>, base: u32, at: u64, bits: u32) -> Result<u64, FaultKind> {
    let byte = base + (at / 8) as u32;
    let shift = (at % 8) as u32;
    let len = (shift + bits).div_ceil(8).max(1);
    let raw = super::operand::load_le(ctx.grf(byte, len)?, len);
    Ok((raw >> shift) & ((1u64 << bits) - 1))
}

fn raw_base(op: Option<&Operand>) -> Result<Option<(u32, DataType)>, FaultKind> {
    match op {
        Some(Operand::Raw(r)) if r.is_null => Ok(None),
        Some(Operand::Raw(r)) => Ok(Some((r.base, DataType::Ud))),
        Some(Operand::Direct(d)) if d.is_null => Ok(None),
        Some(Operand::Direct(d)) => Ok(Some((d.base, d.ty))),
        _ => Err(FaultKind::NotImplemented("dpas with operands of this kind".into())),
    }
}

/// A `dpas` decoded once, when the interpreter is built: the precisions of Src1 (W) and
/// Src2 (A), the systolic depth and the repeat count.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DpasOp {
    w: Precision,
    a: Precision,
    sd: u32,
    rc: u32,
}

/// The decoded form of a `dpas` this module runs (integer, bf, hf, tf32), if it is one.
pub(super) fn compile(inst: &Inst) -> Option<DpasOp> {
    let SubOp::Word(suffix) = &inst.sub else { return None };
    let parts: Vec<&str> = suffix.split('.').collect();
    let [w, a, sd, rc] = parts[..] else { return None };
    let (w, a) = (Precision::parse(w)?, Precision::parse(a)?);
    let (sd, rc) = (sd.parse().ok()?, rc.parse().ok()?);
    let float = matches!(w, Precision::Float(..));
    if float != matches!(a, Precision::Float(..)) || (float && w != a) {
        return None;
    }
    Some(DpasOp { w, a, sd, rc })
}

/// Executes a `dpas` decoded by [`compile`].
pub(super) fn dpas<O: Observer>(ctx: &mut Ctx<'_, O>, inst: &Inst, op: &DpasOp) -> Result<(), FaultKind> {
    let DpasOp { w, a, sd, rc } = *op;
    let not_impl = || FaultKind::NotImplemented(format!("dpas with operands of this kind ({:?})", inst.sub));
    let float = matches!(w, Precision::Float(..));
    let ops_per_chan = match (w, a) {
        (Precision::Float(_, 32), _) => 1,
        (Precision::Float(..), _) => 2,
        _ if w.bits() == 8 || a.bits() == 8 => 4,
        _ => 8,
    };
    let src1_operands_per_chan = (32 / (ops_per_chan * w.bits())).max(1);
    let n = inst.exec.size as usize;
    let grf = ctx.tables.grf_size;
    let dst = raw_base(inst.operands.first())?.ok_or_else(not_impl)?;
    let src0 = raw_base(inst.operands.get(1))?;
    let src1 = raw_base(inst.operands.get(2))?.ok_or_else(not_impl)?.0;
    let src2 = raw_base(inst.operands.get(3))?.ok_or_else(not_impl)?.0;
    let dst_ty = ctx
        .program
        .var(match inst.operands.first() {
            Some(Operand::Raw(r)) => r.var,
            Some(Operand::Direct(d)) => d.var,
            _ => return Err(not_impl()),
        })
        .ty;
    let mut out = Vec::with_capacity(rc as usize * grf as usize);
    let mut k = 0u64;
    for r in 0..rc {
        let row = r * grf;
        let mut temp: Vec<Value> = (0..n)
            .map(|i| -> Result<Value, FaultKind> {
                let Some((base, _)) = src0 else {
                    return Ok(if float { Value::Float(0.0) } else { Value::Int(0) });
                };
                let bits = super::operand::load_le(ctx.grf(base + row + 4 * i as u32, 4)?, 4);
                Ok(if float {
                    Value::Float(f64::from(f32::from_bits(bits as u32)))
                } else {
                    Value::Int(bits as i64)
                })
            })
            .collect::<Result<_, _>>()?;
        for d in 0..sd {
            let m = d / src1_operands_per_chan;
            let first = (d % src1_operands_per_chan) * ops_per_chan;
            for (i, t) in temp.iter_mut().enumerate() {
                let b_dw = src1 + m * grf + 4 * i as u32;
                let mut acc_int = 0i64;
                let mut acc_float = 0f64;
                for e in 0..ops_per_chan {
                    let bw = element(w, bits_at(ctx, b_dw, u64::from((first + e) * w.bits()), w.bits())?);
                    let av =
                        element(a, bits_at(ctx, src2, (k + u64::from(e)) * u64::from(a.bits()), a.bits())?);
                    match (bw, av) {
                        (Value::Int(x), Value::Int(y)) => acc_int = acc_int.wrapping_add(x * y),
                        (Value::Float(x), Value::Float(y)) => acc_float += x * y,
                        _ => return Err(not_impl()),
                    }
                }
                *t = match *t {
                    Value::Int(c) => Value::Int((c as i32).wrapping_add(acc_int as i32) as i64),
                    // The products are exact in f64; the dot product rounds to f32, then the sum.
                    Value::Float(c) => Value::Float(f64::from(c as f32 + acc_float as f32)),
                };
            }
            k += u64::from(ops_per_chan);
        }
        let mut reg = vec![0u8; grf as usize];
        for (i, t) in temp.iter().enumerate() {
            let bits = match (*t, dst_ty) {
                (Value::Int(v), _) => v as u32,
                (Value::Float(v), DataType::Bf | DataType::Hf) => {
                    let fmt = Fmt::of(dst_ty).ok_or_else(not_impl)?;
                    let b = convert::encode(fmt, v, 0, RoundMode::Rne) as u32;
                    // 16-bit results pack two to a dword: channel i at half i.
                    let at = 2 * i;
                    reg[at..at + 2].copy_from_slice(&(b as u16).to_le_bytes());
                    continue;
                }
                (Value::Float(v), _) => (v as f32).to_bits(),
            };
            reg[4 * i..4 * i + 4].copy_from_slice(&bits.to_le_bytes());
        }
        let used = if matches!(dst_ty, DataType::Bf | DataType::Hf) && float { 2 * n } else { 4 * n };
        out.extend_from_slice(&reg[..used]);
        if used < grf as usize && r + 1 < rc {
            // Each repeat's result is a register of its own.
            let old = ctx.grf(dst.0 + row + used as u32, grf - used as u32)?.to_vec();
            out.extend_from_slice(&old);
        }
    }
    ctx.write_grf(dst.0, &out)
}
