//! Execution of one instruction of one thread.

pub mod alu;
mod alu_int;
mod block2d;
mod control;
pub mod convert;
mod cores;
mod ctx;
mod dpas;
mod fast;
mod fast_float;
mod fault;
mod float_lanes;
mod math;
mod mem_pass;
mod message;
mod nbarrier;
mod observer;
mod operand;
mod payload;
mod qword;
mod schedule;
mod step;
mod tables;
#[cfg(test)]
mod test_util;
mod xe2;

pub use control::{window, FUNCTION_ADDRESS_BASE};
pub use cores::{
    run_split, run_to_end_on, run_to_end_unrecorded, share, Chunk, Claims, Order, Split, MIN_SPLIT_GROUPS,
};
pub use ctx::Ctx;
pub use fault::{Fault, FaultKind};
pub use nbarrier::NBAR_BYTES;
pub use observer::{lane_runs, LaneRuns, NullObserver, Observer, StepHooks};
pub use operand::{indirect_lane, load_le, operand_type, store_le};
pub(crate) use schedule::{in_key_order, place_in_phase};
pub use schedule::{
    run_bursts, run_bursts_observed, run_groups, run_to_end, Pick, RunSummary, SchedPos, Schedule, Scheduler,
};
pub use step::{
    channel_enables, direct_dst_bytes, dst_holds_byte, Interpreter, PcSet, StepEvent, StepInfo, StopTest,
    Stops, Tier, NO_STOPS,
};
pub use tables::Tables;
