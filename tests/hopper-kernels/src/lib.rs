//! Device tests of the `gpu-hopper` toolkit's leaves that the GEMM does not run: `wgmma` with A
//! from registers (RS) and the f16 and FP8 forms, the 32- and 64-byte swizzles and the
//! interleaved layout of the matrix descriptor, the register fragments, TMA reductions (add,
//! min, max) and box prefetches, `griddepcontrol`, named barriers as producer/consumer
//! signals, the ordered-sequence barrier on real mbarriers, and the named turns (warpgroups taking
//! turns on named barriers).
//!
//! A `#![no_std]` kernel crate for nvptx64 sm_90a (its own workspace root, built by the xtask
//! into `target/gpu/sm_90a-hopper/.../hopper_kernels.ptx`), using the toolkit and the library
//! as any kernel crate would: it has no inline assembly of its own. What the kernels and the
//! host test (`tests/hopper-test`) agree on is [`layout`], which the host compiles too.

#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[macro_use]
pub mod layout;

/// An entry `$name(log, counters, turns)` that runs `$body` (an `unsafe fn` of the same
/// arguments, whose contract is the entry's): the cases whose groups take turns and log them.
macro_rules! logged_turns_entry {
    ($name:ident, $body:expr, $doc:literal) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// The contract of the function it runs.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(log: *mut u32, counters: *mut u32, turns: u32) {
            // SAFETY: the entry's contract.
            unsafe { $body(log, counters, turns) }
        }
    };
}

/// A block's log of turns (the ordered-sequence and named-turns cases): `capacity` words of
/// `log` and a zeroed counter, this block's.
#[derive(Clone, Copy)]
struct TurnLog {
    log: *mut u32,
    counter: *mut u32,
    capacity: u32,
}

impl TurnLog {
    /// The block's part of `log` (`capacity` words a block) and its word of `counters`.
    ///
    /// # Safety
    ///
    /// `log` has `capacity` words per block of the grid and `counters` a zeroed word per block.
    #[inline(always)]
    unsafe fn of_block(log: *mut u32, counters: *mut u32, capacity: u32) -> Self {
        let block = block();
        // SAFETY: the block's part of both (the contract).
        unsafe {
            Self {
                log: log.add((block * capacity) as usize),
                counter: counters.add(block as usize),
                capacity,
            }
        }
    }

    /// While `group` holds its turn `turn`: its leading thread (`leads`) appends the entry, then
    /// every thread holds the turn a varying while, so that the groups' timings differ turn to
    /// turn.
    #[inline(always)]
    fn record(self, leads: bool, group: u32, turn: u32) {
        if leads {
            // SAFETY: the block's counter, a global word (`of_block`'s contract).
            let at =
                unsafe { gpu_hopper::arch::nvptx::atom_add_acq_rel_gpu_global_u32(self.counter) };
            if at < self.capacity {
                // SAFETY: inside the block's log.
                unsafe {
                    self.log
                        .add(at as usize)
                        .write(layout::sequence_entry(group, turn))
                };
            }
        }
        gpu_pipeline::arch::nvptx::nanosleep(layout::mix(turn ^ (group << 20)) % 512);
    }
}

#[cfg(feature = "checked")]
mod broken;
mod named;
mod pdl;
mod sequence;
mod tma;
mod turns;
mod wgmma;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}

/// The calling thread's index in its (one-dimensional) block.
#[inline(always)]
fn thread() -> u32 {
    gpu_pipeline::arch::nvptx::tid()[0]
}

/// The block's index in its (one-dimensional) grid.
#[inline(always)]
fn block() -> u32 {
    gpu_pipeline::arch::nvptx::ctaid()[0]
}

/// The block's threads (x).
#[inline(always)]
fn block_threads() -> u32 {
    gpu_pipeline::arch::nvptx::ntid()[0]
}

/// The block-wide barrier (`bar.sync 0`, the convergent `_syncthreads` intrinsic).
///
/// # Safety
///
/// Every thread of the block calls it, warp-converged.
#[inline(always)]
unsafe fn sync_threads() {
    // SAFETY: the caller's contract.
    unsafe { core::arch::nvptx::_syncthreads() }
}
