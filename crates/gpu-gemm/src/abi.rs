//! The launch ABI version of the module: the entries' parameter list and what each parameter
//! means. The kernel crate exports it as the global `GPU_GEMM_ABI`; the host crate compiles this
//! same file and refuses a module whose global differs (or is missing), so that a module built
//! from another version of the crate is an error at load time, not a launch with the wrong
//! parameters. Bump it with every change to an entry's parameters or to what they mean.

/// The launch ABI version.
pub const ABI_VERSION: u32 = 1;
