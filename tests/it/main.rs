//! Integration tests of the vdb engine (one module per area).

mod parse;
