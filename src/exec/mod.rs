//! Execution of one instruction of one thread.
