//! Launch files, zebin and ze_info reading, payload images.
pub mod raw;
