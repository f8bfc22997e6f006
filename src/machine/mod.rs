//! Thread and memory state.
