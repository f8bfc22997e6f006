//! Recording: every write of a run as a delta log (location + old XOR new), checkpoints that
//! share unchanged state, and indexes from locations to the steps that wrote them.
//!
//! Time `t` is the state after `t` steps; step record `t` takes time `t` to time `t + 1`.

mod checkpoint;
mod controls;
mod index;
mod layout;
mod log;
mod recorder;
mod steps;
mod window;

pub use checkpoint::Checkpoint;
pub use index::{FastMap, WriteIndex, MAX_STEPS};
pub use log::{Entry, EntryKind, Kind, LogEntry, Xor};
pub use recorder::{Cache, Checkpoints, Rebase, RecordedBytes, Recorder, Rerun, Trace, WriteHit};
pub use steps::{StepRecord, Steps};
pub use window::{record_step, record_window, Batch, Probe, Single, Stage, Window};

/// A global step index (one step = one instruction of one thread).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StepIdx(pub u64);
