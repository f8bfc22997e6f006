//! Engine integration tests (one binary): control flow, golden sample kernels, time travel.

mod alu;
mod control;
mod golden;
mod harness;
mod timetravel;
