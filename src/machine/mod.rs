//! Thread and memory state. Plain data: all behaviour lives in `exec`, and every change
//! to it goes through `exec`'s write path so that the recorder sees it.

mod memory;
mod thread;

pub use memory::{MemError, MemSpace, Region as MemRegion, Slm, Svm, PAGE_SIZE};
pub use thread::{Control, Frame, FrameKind, ThreadId, ThreadState, ThreadStatus, Waiting};
