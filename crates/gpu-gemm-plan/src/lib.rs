//! The plan of the gpu-gemm kernels.
#![no_std]
#![forbid(unsafe_code)]
