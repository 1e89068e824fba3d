//! The launches and buffers of the cases, on the harness's `Gpu`: words in and out, kernels
//! waited for with a timeout (a hung or trapped kernel ends the process at once: its context
//! cannot be used again).

use std::ffi::c_void;
use std::time::Duration;

use cudarc::driver::{CudaSlice, sys};
use pipeline_harness::cuda::{Gpu, check};
use pipeline_harness::report;
use pipeline_suite::exit;

/// How long a case's kernels may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// A device buffer of `u32` words.
pub type Words = CudaSlice<u32>;

/// A buffer holding `words`.
pub fn upload(gpu: &Gpu, words: &[u32]) -> Result<Words, String> {
    let mut buffer = gpu.alloc(words.len())?;
    gpu.upload(words, &mut buffer)?;
    Ok(buffer)
}

/// The first `n` words of `buffer` (waits for the stream).
pub fn download(gpu: &Gpu, buffer: &Words, n: usize) -> Result<Vec<u32>, String> {
    let mut host = vec![0u32; n];
    gpu.download(buffer, &mut host)?;
    Ok(host)
}

/// A kernel parameter: a pointer to its value, for `cuLaunchKernelEx`.
pub fn arg<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

/// Launches `entry` (a 1D grid of `grid` blocks of `block` threads, `smem` bytes of dynamic
/// shared memory) and waits for it.
pub fn run(
    gpu: &Gpu,
    entry: &str,
    grid: u32,
    block: u32,
    smem: u32,
    args: &mut [*mut c_void],
) -> Result<(), String> {
    let function = gpu.function(entry)?;
    gpu.launch(&function, grid, block, 1, smem, args)?;
    finish(gpu, entry)
}

/// Launches `entry` like [`run`] without waiting, with the programmatic stream serialization
/// attribute when `programmatic` (the launch may then overlap the stream's previous kernel up to
/// its `griddepcontrol.wait`).
pub fn launch_dependent(
    gpu: &Gpu,
    entry: &str,
    grid: u32,
    block: u32,
    programmatic: bool,
    args: &mut [*mut c_void],
) -> Result<(), String> {
    let function = gpu.function(entry)?;
    // Passed only when asked (`numAttrs`).
    let mut attribute = gpu_hopper_host::programmatic_attribute();
    let config = sys::CUlaunchConfig {
        gridDimX: grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: gpu.stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: u32::from(programmatic),
    };
    // SAFETY: `args` points to one value per kernel parameter, of the parameter's type, alive
    // for the call (the driver copies them); the function belongs to the GPU's context.
    check(
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                function.cu_function(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        &format!("cuLaunchKernelEx of `{entry}`"),
    )
}

/// Waits for the stream's kernels; a hang or a failed kernel ends the process (after a FAIL
/// line): the context cannot run anything else.
pub fn finish(gpu: &Gpu, what: &str) -> Result<(), String> {
    match gpu.wait(TIMEOUT) {
        Ok(_) => Ok(()),
        Err((hung, message)) => {
            println!("FAIL {what:<40} {message}; stopping (the context is lost)");
            report::exit_now(if hung { exit::HUNG } else { exit::TEST_FAILED })
        }
    }
}

/// The device address of `buffer`, as a kernel's pointer parameter.
pub fn address(gpu: &Gpu, buffer: &Words) -> u64 {
    gpu.address(buffer)
}

/// Little-endian bytes packed into words (zero-padded to a whole word).
pub fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}
