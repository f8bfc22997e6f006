//! Instruction-set vocabulary: data types, opcodes, operands, regions.

mod opcode;
mod operand;
mod types;

pub use opcode::{Family, Opcode};
pub use operand::*;
pub use types::DataType;
