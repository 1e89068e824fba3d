//! Runs the example kernel crate's `ring` kernel on an NVIDIA GPU with cudarc, and checks every
//! word it moved against the input.
//!
//! ```text
//! example-launcher [PTX]     (default: ../kernel/target/nvptx64-nvidia-cuda/release/example_kernels.ptx)
//! ```
//!
//! Prints one `PASS` or `FAIL` line for a kernel that ran, or one `error:` line when it could
//! not run. The exit status says which (see [`exit`]). The kernel cannot hang the machine: its
//! loops are bounded by `items`, and the launcher waits for it at most [`TIMEOUT`].

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cudarc::driver::{CudaContext, CudaStream, LaunchConfig, PushKernelArg, sys};
use cudarc::nvrtc::Ptx;

// The kernel crate's layout (block size, roles, shared memory), compiled here too.
#[allow(dead_code)]
#[path = "../../kernel/src/layout.rs"]
mod layout;

use layout::{BLOCK_THREADS, CONSUMER_WARPS, DYNAMIC_SMEM_BYTES, SLOT_WORDS};

/// The exit statuses: the numbers of the gpu-pipeline repository's `pipeline_suite::exit`
/// (`tests/suite/src/lib.rs`), which its `cargo xtask test-nvidia` and the bundle's `run.sh`
/// read. Only [`NO_DRIVER`](exit::NO_DRIVER) means "nothing could be tested here".
mod exit {
    /// The kernel ran and every word is right.
    pub const PASSED: u8 = 0;
    /// The kernel ran and some word is wrong (or the launch failed: the kernel trapped).
    pub const TEST_FAILED: u8 = 1;
    /// A wrong command line.
    pub const USAGE: u8 = 2;
    /// The kernel did not finish within the timeout.
    pub const HUNG: u8 = 3;
    /// `libcuda.so` cannot be loaded: this machine has no NVIDIA driver.
    pub const NO_DRIVER: u8 = 4;
    /// The driver is there, but the PTX cannot be read or loaded, no GPU of sm_90 or newer, ...
    pub const SETUP: u8 = 5;
}

/// The kernel's PTX when no path is given: the kernel crate's `cargo build --release` output.
const DEFAULT_PTX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../kernel/target/nvptx64-nvidia-cuda/release/example_kernels.ptx"
);
/// Blocks in the grid.
const BLOCKS: u32 = 8;
/// Items (of `SLOT_WORDS` words) each block moves.
const ITEMS: u32 = 4096;
/// The longest the launcher waits for the kernel (it takes well under a millisecond on an H200).
const TIMEOUT: Duration = Duration::from_secs(10);
/// Written over the output before the launch, so that a word the kernel skipped shows.
const POISON: u32 = 0xDEAD_BEEF;

/// Why the run ended without a `PASS`.
enum Failure {
    /// The status and the one-line message (`error: ...`) of a run that could not start.
    Error(u8, String),
    /// The status and the reason of a kernel that ran and failed (the `FAIL` line).
    Fail(u8, String),
}

fn setup(message: String) -> Failure {
    Failure::Error(exit::SETUP, message)
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("PASS ring: {line}");
            ExitCode::from(exit::PASSED)
        }
        Err(Failure::Fail(status, reason)) => {
            println!("FAIL ring: {reason}");
            ExitCode::from(status)
        }
        Err(Failure::Error(status, message)) => {
            eprintln!("error: {message}");
            ExitCode::from(status)
        }
    }
}

fn run() -> Result<String, Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ptx_path = match args.as_slice() {
        [] => DEFAULT_PTX,
        [flag] if flag == "-h" || flag == "--help" => {
            println!("usage: example-launcher [PTX]  (default: {DEFAULT_PTX})");
            std::process::exit(exit::PASSED.into());
        }
        [path] if !path.starts_with('-') => path.as_str(),
        _ => {
            return Err(Failure::Error(
                exit::USAGE,
                format!("usage: example-launcher [PTX], got {args:?}"),
            ));
        }
    };
    let ptx = std::fs::read_to_string(ptx_path).map_err(|e| {
        setup(format!(
            "cannot read the PTX `{ptx_path}`: {e} (build it: `cargo build --release` in the kernel crate's folder)"
        ))
    })?;

    let stream = open_gpu()?;
    let ctx = stream.context();
    let module = ctx
        .load_module(Ptx::from_src(ptx))
        .map_err(|e| setup(format!("the driver rejected the PTX `{ptx_path}`: {e:?}")))?;
    let ring = module
        .load_function("ring")
        .map_err(|e| setup(format!("no kernel `ring` in `{ptx_path}`: {e:?}")))?;

    // Fresh input every run; the output poisoned.
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |t| t.as_nanos() as u64)
        | 1;
    let input = random_words(seed, (BLOCKS * ITEMS) as usize * SLOT_WORDS);
    let output_len = input.len() * CONSUMER_WARPS as usize;
    let alloc = |e| setup(format!("device memory: {e:?}"));
    let input_dev = stream.clone_htod(&input).map_err(alloc)?;
    let mut output_dev = stream
        .clone_htod(&vec![POISON; output_len])
        .map_err(alloc)?;

    let config = LaunchConfig {
        grid_dim: (BLOCKS, 1, 1),
        block_dim: (BLOCK_THREADS, 1, 1),
        shared_mem_bytes: DYNAMIC_SMEM_BYTES as u32,
    };
    let mut launch = stream.launch_builder(&ring);
    launch.arg(&input_dev).arg(&mut output_dev).arg(&ITEMS);
    // SAFETY: the arguments are the kernel's (`*const u32`, `*mut u32`, `u32`), the buffers are
    // the sizes its contract asks for, and the launch has its block size and shared memory.
    unsafe { launch.launch(config) }.map_err(|e| setup(format!("launch: {e:?}")))?;
    let elapsed = wait(&stream, TIMEOUT)?;

    let output = stream
        .clone_dtoh(&output_dev)
        .map_err(|e| setup(format!("copying the output back: {e:?}")))?;
    match first_wrong_word(&input, &output) {
        None => Ok(format!(
            "{BLOCKS} blocks x {CONSUMER_WARPS} consumer warps x {ITEMS} items x {SLOT_WORDS} words, every word right ({:.2} ms, seed {seed:#x})",
            elapsed.as_secs_f64() * 1e3
        )),
        Some(wrong) => Err(Failure::Fail(
            exit::TEST_FAILED,
            format!("{wrong} (seed {seed:#x})"),
        )),
    }
}

/// Opens GPU 0 and returns its default stream. A machine whose `libcuda.so` cannot be loaded is
/// [`exit::NO_DRIVER`]; every other failure [`exit::SETUP`].
fn open_gpu() -> Result<Arc<CudaStream>, Failure> {
    // SAFETY: loads and unloads the driver library, as any CUDA program does.
    if !unsafe { sys::is_culib_present() } {
        return Err(Failure::Error(
            exit::NO_DRIVER,
            "no CUDA driver (libcuda.so cannot be loaded): run this on a machine with an NVIDIA GPU (sm_90 or newer) and its driver; copy the launcher binary and the PTX there, it needs no Rust".into(),
        ));
    }
    // cudarc panics when a driver symbol it needs is missing (a driver older than CUDA 13.0).
    let opened = std::panic::catch_unwind(|| CudaContext::new(0));
    let ctx = match opened {
        Ok(Ok(ctx)) => ctx,
        Ok(Err(e)) => return Err(setup(format!("no usable CUDA GPU: {e:?}"))),
        Err(_) => {
            return Err(setup(
                "the CUDA driver is too old for cudarc's CUDA 13.0 bindings".into(),
            ));
        }
    };
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| setup(format!("compute capability: {e:?}")))?;
    if major < 9 {
        return Err(setup(format!(
            "GPU 0 is sm_{major}{minor}; gpu-pipeline needs sm_90 (Hopper) or newer"
        )));
    }
    Ok(ctx.default_stream())
}

/// Waits for `stream` by polling, at most `timeout`: a kernel that hangs is reported, never
/// waited on forever.
fn wait(stream: &CudaStream, timeout: Duration) -> Result<Duration, Failure> {
    let start = Instant::now();
    loop {
        // SAFETY: queries the status of a live stream.
        match unsafe { sys::cuStreamQuery(stream.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => return Ok(start.elapsed()),
            sys::CUresult::CUDA_ERROR_NOT_READY if start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_micros(100));
            }
            sys::CUresult::CUDA_ERROR_NOT_READY => {
                println!(
                    "FAIL ring: did not finish within {} s (hung)",
                    timeout.as_secs()
                );
                // Exits without destructors: freeing the buffers would wait for the kernel.
                std::process::exit(exit::HUNG.into());
            }
            error => {
                return Err(Failure::Fail(
                    exit::TEST_FAILED,
                    format!("the kernel failed: {error:?}"),
                ));
            }
        }
    }
}

/// `n` pseudo-random words (xorshift64*) from `seed`.
fn random_words(mut seed: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
        })
        .collect()
}

/// What the kernel must write: consumer warp `c` of block `b` copies block `b`'s items, so
/// output part `b * CONSUMER_WARPS + c` equals input part `b`. `None` if every word is right,
/// else how many are wrong and where the first one is.
fn first_wrong_word(input: &[u32], output: &[u32]) -> Option<String> {
    let part = ITEMS as usize * SLOT_WORDS;
    let expected =
        |index: usize| input[index / part / CONSUMER_WARPS as usize * part + index % part];
    let first = (0..output.len()).find(|&i| output[i] != expected(i))?;
    let wrong = (0..output.len())
        .filter(|&i| output[i] != expected(i))
        .count();
    let (consumer, offset) = (first / part, first % part);
    let got = output[first];
    Some(format!(
        "{wrong} of {} words wrong; the first: block {}, consumer warp {}, item {}, word {}: {got:#010x}, expected {:#010x}{}",
        output.len(),
        consumer / CONSUMER_WARPS as usize,
        consumer % CONSUMER_WARPS as usize + 1,
        offset / SLOT_WORDS,
        offset % SLOT_WORDS,
        expected(first),
        if got == POISON {
            " (never written)"
        } else {
            ""
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output of a correct run: every consumer warp's part is its block's input.
    fn copied(input: &[u32]) -> Vec<u32> {
        input
            .chunks(ITEMS as usize * SLOT_WORDS)
            .flat_map(|block| (0..CONSUMER_WARPS).flat_map(move |_| block.iter().copied()))
            .collect()
    }

    #[test]
    fn a_correct_output_has_no_wrong_word() {
        let input = random_words(7, (BLOCKS * ITEMS) as usize * SLOT_WORDS);
        assert_eq!(first_wrong_word(&input, &copied(&input)), None);
    }

    #[test]
    fn a_skipped_word_is_found_and_located() {
        let input = random_words(7, (BLOCKS * ITEMS) as usize * SLOT_WORDS);
        let mut output = copied(&input);
        // Block 2, consumer warp 3 (part 2 * 4 + 2), item 5, word 17.
        let part = ITEMS as usize * SLOT_WORDS;
        output[(2 * CONSUMER_WARPS as usize + 2) * part + 5 * SLOT_WORDS + 17] = POISON;
        let message = first_wrong_word(&input, &output).expect("a wrong word");
        assert!(
            message.starts_with("1 of ")
                && message.contains("block 2, consumer warp 3, item 5, word 17")
                && message.ends_with("(never written)"),
            "{message}"
        );
    }

    #[test]
    fn random_words_differ_between_seeds() {
        assert_ne!(random_words(1, 64), random_words(3, 64));
    }
}
