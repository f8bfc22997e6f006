//! Execution of one instruction of one thread.

pub mod alu;
mod alu_int;
pub mod convert;
mod math;
#[cfg(test)]
mod test_util;
