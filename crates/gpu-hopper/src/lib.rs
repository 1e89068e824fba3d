//! The Hopper (sm_90a) toolkit: what every warp-specialized sm_90 kernel needs beside the
//! pipelines of `gpu-pipeline`.
#![no_std]

pub mod schedule;
