//! Placeholder for the ALU semantics (replaced by the full implementation on merge).

use std::fmt;

use crate::isa::{DataType, Opcode, SrcMod, SubOp};

pub struct SrcLanes {
    pub ty: DataType,
    pub modifier: SrcMod,
    pub bits: [u64; 32],
}

pub struct AluOut {
    pub values: [u64; 32],
    pub second: [u64; 32],
    pub flags: u32,
}

#[derive(Debug)]
pub enum AluError {
    Unsupported(String),
}

impl fmt::Display for AluError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AluError::Unsupported(m) => f.write_str(m),
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub fn eval(
    op: Opcode,
    _sub: &SubOp,
    _sat: bool,
    _dst_ty: DataType,
    srcs: &[SrcLanes],
    n_lanes: usize,
    enabled: u32,
    _select: u32,
    _cr0: u32,
    out: &mut AluOut,
) -> Result<(), AluError> {
    for lane in 0..n_lanes {
        if enabled >> lane & 1 == 0 {
            continue;
        }
        out.values[lane] = match op {
            Opcode::Mov => srcs[0].bits[lane],
            Opcode::Add => srcs[0].bits[lane].wrapping_add(srcs[1].bits[lane]),
            _ => return Err(AluError::Unsupported(format!("{op:?}"))),
        };
    }
    Ok(())
}

pub fn expand_vector_imm(ty: DataType, bits: u64) -> (DataType, [u64; 32]) {
    let mut out = [0u64; 32];
    for (lane, v) in out.iter_mut().enumerate() {
        *v = (bits >> ((lane % 8) * 4)) & 0xf;
    }
    (if ty == DataType::V { DataType::W } else { DataType::Uw }, out)
}
