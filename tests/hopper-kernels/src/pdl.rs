//! `griddepcontrol`: a primary kernel lets its dependents launch at once
//! (`griddepcontrol_launch_dependents`), then waits `delay_ns` and only then writes its data; the
//! secondary, launched after it with programmatic stream serialization, reads the data after
//! `griddepcontrol_wait`, which must wait for the whole primary grid. What the secondary saw
//! *before* its wait is counted too: information only (how early it started), never checked.
//! Launched without programmatic serialization, the secondary's wait returns at once (stream
//! order alone has finished the primary).

use gpu_hopper::arch::nvptx::{griddepcontrol_launch_dependents, griddepcontrol_wait};
use gpu_pipeline::arch::nvptx::globaltimer;

use crate::layout::{PDL_THREADS, PDL_WORDS_PER_THREAD, pdl_value};

/// The first word of the calling thread: each writes (primary) and reads (secondary) its own
/// `PDL_WORDS_PER_THREAD` consecutive words.
#[inline(always)]
fn first_word() -> u32 {
    (crate::block() * PDL_THREADS + crate::thread()) * PDL_WORDS_PER_THREAD
}

/// The primary: `griddepcontrol.launch_dependents` first, then `delay_ns` of waiting, then
/// `data[i] = pdl_value(seed, i)` for the thread's words.
///
/// # Safety
///
/// Blocks of `PDL_THREADS` threads; `data` has `PDL_WORDS_PER_THREAD` words per thread of the
/// grid.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn pdl_primary(data: *mut u32, seed: u32, delay_ns: u32) {
    griddepcontrol_launch_dependents();
    let start = globaltimer();
    while globaltimer().wrapping_sub(start) < u64::from(delay_ns) {}
    let first = first_word();
    let mut w = 0;
    while w < PDL_WORDS_PER_THREAD {
        // SAFETY: the thread's own words (the contract).
        unsafe {
            data.add((first + w) as usize)
                .write_volatile(pdl_value(seed, first + w))
        };
        w += 1;
    }
}

/// The secondary: counts into `early[thread]` the words that already held the primary's value
/// before `griddepcontrol.wait`, then copies its words of `data` to `out` after it.
///
/// # Safety
///
/// The primary's grid shape; `data` and `out` as the primary's `data`, `early` a word per
/// thread of the grid.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn pdl_secondary(
    data: *const u32,
    out: *mut u32,
    early: *mut u32,
    seed: u32,
) {
    let first = first_word();
    let mut ready = 0;
    let mut w = 0;
    while w < PDL_WORDS_PER_THREAD {
        // SAFETY: the thread's own words (the contract). A read racing the primary's write, on
        // purpose: it only counts.
        if unsafe { data.add((first + w) as usize).read_volatile() } == pdl_value(seed, first + w) {
            ready += 1;
        }
        w += 1;
    }
    griddepcontrol_wait();
    let mut w = 0;
    while w < PDL_WORDS_PER_THREAD {
        // SAFETY: the thread's own words of `data` and `out`.
        unsafe {
            let v = data.add((first + w) as usize).read_volatile();
            out.add((first + w) as usize).write(v);
        }
        w += 1;
    }
    // SAFETY: a word per thread.
    unsafe {
        early
            .add((first / PDL_WORDS_PER_THREAD) as usize)
            .write(ready)
    };
}
