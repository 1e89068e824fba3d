//! The plan of the attention forward kernels (`O = softmax(scale · Q Kᵀ + mask) V` and the row
//! log-sum-exp `LSE`): what a kernel crate (on the device) and its host crate (on the CPU) must
//! agree on, written once and compiled by both, as `gpu-gemm-plan` is for the GEMM.
//!
//! - [`Problem`]: the shapes (fixed-length or variable-length batches, [`Batches`]), the heads
//!   (grouped-query and multi-query attention: `heads_kv` divides `heads_q`), the head dimension
//!   (64, 128 or 256), the element type, the mask ([`Mask`]: none, or causal aligned to the bottom
//!   right), the scale, and the strides of Q, K, V and O in the `[batch, seq, heads, head_dim]`
//!   layout (FlashAttention's). [`Problem::check`] is every rule a launch needs, each a clear
//!   [`AttentionError`]; [`Problem::extents`] the elements each tensor must hold.
//! - [`mask`]: which keys a query row sees ([`mask::visible_keys`]), the key blocks of a query
//!   block, and the FLOP counts the benchmark reports.
//! - [`schedule`]: the work units (a query block of one head of one sequence) and their order:
//!   causal tiles longest first, the query heads that share a K/V head side by side.
//! - `reference` (feature `std`): the host reference in f64.
//!
//! Pure: no `unsafe`, no CUDA call, no target-specific code. The host tests every rule here.
//!
//! The kernels are `gpu-attention`'s and their host API `gpu-attention-host`'s; this crate is
//! what both compile.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(any(feature = "std", test))]
extern crate std;

pub mod abi;
mod error;
pub mod mask;
mod problem;
#[cfg(feature = "std")]
pub mod reference;
pub mod schedule;

pub use error::{AttentionError, Tensor};
pub use problem::{Batches, Element, Extents, HEAD_DIMS, MAX_TOKENS, Mask, Problem, Strides};
