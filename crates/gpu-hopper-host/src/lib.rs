//! Host side of gpu-hopper: TMA tensor maps, encoded with the CUDA driver through cudarc, their
//! documented limits checked first; whether a stream is being captured into a CUDA graph
//! ([`capture_id`], which the kernels' host APIs ask before an upload); a launch's configuration
//! ([`launch_config`]) and attributes ([`LaunchAttributes`]: a cluster dimension, programmatic
//! serialization) and how many clusters
//! of a kernel fit at once ([`max_active_clusters`]).
//!
//! ```no_run
//! use gpu_hopper_host::{ElementType, L2Promotion, OobFill, Swizzle, Tiled};
//!
//! # fn demo(address: u64) -> Result<(), gpu_hopper_host::TensorMapError> {
//! // A row-major bf16 matrix A[M][K] (M = 4096, K = 1024) at `address`, read in boxes of 64 x 128
//! // elements (64 bf16 = 128 bytes: the 128-byte swizzle span), zeros outside the matrix.
//! let (m, k) = (4096u64, 1024u64);
//! let tiled = Tiled {
//!     element: ElementType::Bf16,
//!     address,
//!     dims: &[k, m],    // innermost first
//!     strides: &[k * 2], // bytes, of the dimensions after the first
//!     box_dims: &[64, 128],
//!     element_strides: &[1, 1],
//!     swizzle: Swizzle::B128,
//!     l2_promotion: L2Promotion::B256,
//!     oob_fill: OobFill::Zero,
//! };
//! tiled.validate()?; // pure: what `encode` checks before the driver sees it
//! let map = tiled.encode()?; // needs the CUDA driver: create a cudarc `CudaContext` first
//! let bytes: &[u8; 128] = map.as_bytes(); // copy to device memory; kernels take a pointer to it
//! # let _ = bytes;
//! # Ok(())
//! # }
//! ```
//!
//! # What is checked
//! [`Tiled::validate`] checks every requirement the CUDA Driver API documentation of
//! `cuTensorMapEncodeTiled` ("Tensor Map Object Management") states for the forms this crate
//! offers (no interleave; the element types of [`ElementType`]), each beside its check in
//! `tensor_map.rs` with the documentation's words: the rank (1 to 5) and the lengths of the four
//! arrays; each global dimension 1 to 2^32; each global stride a multiple of 16 bytes below
//! 2^40; the global address 16-byte aligned; each box dimension 1 to 256, the box's inner
//! dimension in bytes a multiple of 16 and, with a swizzle, at most the swizzle span (32, 64 or
//! 128 bytes); each element stride 1 to 8; the NaN fill only for floating-point types. A
//! failed check is a [`TensorMapError`] whose message says what to change. [`Tiled::encode`]
//! calls the driver only with a validated description; what the driver still rejects (a
//! requirement it has beyond its documentation) comes back as [`TensorMapError::Driver`].
//!
//! # Coordinates
//! The device side addresses a box by signed 32-bit coordinates, innermost first
//! (`cp.async.bulk.tensor`'s `tensorCoords` are `.s32`: PTX ISA, "Data Movement and Conversion
//! Instructions: cp.async.bulk.tensor"); a box may start at a negative coordinate or beyond the
//! end, and its elements outside the tensor are filled ([`OobFill`]) on a load and not written on
//! a store. So a dimension longer than 2^31 elements, which the driver accepts, is reachable
//! only up to coordinate 2^31 - 1 + the box; [`coordinate`] converts a host index and says when
//! it does not fit.
//!
//! # The map's value
//! [`TensorMap`] is the driver's `CUtensorMap`: 128 opaque bytes, 128-byte aligned as CUDA 13's
//! header declares it (the driver requires 64: "tensorMap address must be aligned to 64
//! bytes"). The device-side `gpu_pipeline::TensorMap` has the same size but is a different
//! type: it is what a kernel reads through a pointer to global memory (64-byte aligned, its bytes
//! private, no constructor), while this one is what the driver writes on the host. The bytes go
//! from one to the other by a copy to device memory ([`TensorMap::as_bytes`]), so neither side
//! needs the other's type.

mod encode;
mod launch;
pub mod plan_cache;
mod stream;
mod tensor_map;

#[cfg(test)]
mod tests;

pub use encode::TensorMap;
pub use launch::{LaunchAttributes, cluster_attribute, launch_config, max_active_clusters};
pub use stream::{
    ProgrammaticLaunch, capture_id, capture_state, is_per_thread, may_free_on, per_thread_handle,
    programmatic_attribute,
};
pub use tensor_map::{
    ElementType, L2Promotion, MAX_BOX_DIM, MAX_ELEMENT_STRIDE, MAX_RANK, OobFill, Swizzle,
    TensorMapError, Tiled, coordinate,
};
