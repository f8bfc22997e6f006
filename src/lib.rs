//! vdb engine: parse Intel vISA text, run it lane by lane, record every write.
//!
//! Crate map (see ARCHITECTURE.md):
//! - [`isa`]: data types, opcodes, decoded operands and regions.
//! - [`program`]: the immutable decoded [`program::Program`] and its GRF layout.
//! - [`asm`]: lexer, parser and diagnostics for `.visaasm` text.
//! - [`machine`]: thread and memory state; no behaviour.
//! - [`exec`]: one step of one thread; faults.
//! - [`launch`]: launch files, zebin / ze_info, payload images.
//! - [`lines`]: the OpenCL source line of each instruction (`FILE` / `LOC`).

pub mod asm;
pub mod exec;
pub mod isa;
pub mod launch;
pub mod lines;
pub mod machine;
pub mod program;
pub mod races;
pub mod session;
pub mod trace;
