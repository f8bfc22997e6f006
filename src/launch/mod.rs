//! Launch files, zebin and ze_info reading, payload images.

pub mod argtypes;
mod bind;
pub mod opencl;
pub mod payload;
pub mod platform;
pub mod raw;
pub mod workitems;
pub mod yaml;
pub mod zebin;
pub mod zeinfo;

pub use payload::{build_payload, slm_layout, threads_per_group, ArgValue, ThreadPayload};
pub use platform::Platform;
pub use workitems::{NdGeometry, WorkItem};
pub use zebin::Zebin;
pub use zeinfo::{ZeInfo, ZeKernel};

#[cfg(test)]
mod bind_tests;
#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod payload_tests;
#[cfg(test)]
mod zebin_tests;
#[cfg(test)]
mod zeinfo_tests;
