//! Architecture leaves: the only place with inline assembly.
//!
//! One file per architecture, one instruction form per function. Each function exists on every
//! target; on a target other than its own it panics with its name (so that the host type-checks
//! and documents the whole API).

pub mod amdgpu;
pub mod nvptx;
