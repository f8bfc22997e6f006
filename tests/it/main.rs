//! Engine integration tests (one binary): parsing, instructions, control flow, golden sample
//! kernels, time travel.

mod alu;
mod block2d;
mod calls;
mod commands;
mod control;
mod dpas;
mod fastpath;
mod golden;
mod harness;
mod igc2_ops;
mod memory;
mod messages;
mod opencl;
mod parse;
mod races;
mod regions;
mod schedules;
mod source_level;
mod stepping;
mod stops;
mod threads;
mod timetravel;
mod typed;
mod why;
mod workitems;
