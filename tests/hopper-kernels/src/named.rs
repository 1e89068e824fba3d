//! Named barriers as producer/consumer signals: `P` producer warps write a round's
//! `NAMED_BUFFER_WORDS` words into shared memory and `arrive` on barrier 1; the `C` consumer
//! warps `sync` on it, check every word of the round against `named_value`, and `arrive` on
//! barrier 2, which the producers `sync` on before they overwrite the buffer. Each consumer
//! thread writes its error count and the wrapping sum of the words it read, which the host
//! recomputes.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::barrier::{BarrierRegistry, BarrierShadow, NamedBarrier};

use crate::layout::{NAMED_BUFFER_WORDS, NAMED_OUT_WORDS, NAMED_SMEM_BYTES, WARP, named_value};

/// The test (see the module's docs), `rounds` rounds.
///
/// # Safety
///
/// Blocks of `(P + C) * 32` threads with `NAMED_SMEM_BYTES` of dynamic shared memory; `out` has `NAMED_OUT_WORDS` words per consumer thread of the grid.
#[inline(always)]
unsafe fn named<const P: u32, const C: u32>(out: *mut u32, rounds: u32, seed: u32) {
    let (written, read, registry) = const {
        let written = NamedBarrier::new("round written", 1, (P + C) * WARP);
        let read = NamedBarrier::new("round read", 2, (P + C) * WARP);
        // Two ids, no collision (a compile error otherwise).
        (written, read, BarrierRegistry::new(&[&[written, read]]))
    };
    const {
        assert!(
            (NAMED_BUFFER_WORDS * 4) as usize + size_of::<BarrierShadow>()
                <= NAMED_SMEM_BYTES as usize,
            "the buffer and the barriers' shadow outgrew the shared memory the host gives"
        )
    };
    let (t, block) = (crate::thread(), crate::block());
    let buffer = dynamic_smem_1024().cast::<u32>();
    // SAFETY: after the buffer, 8-byte aligned, inside the launch's shared memory (checked
    // above).
    let shadow = unsafe {
        buffer
            .add(NAMED_BUFFER_WORDS as usize)
            .cast::<BarrierShadow>()
    };
    if t == 0 {
        // SAFETY: the shadow is used by no one else before the block barrier below.
        let _ = unsafe { registry.init(shadow) };
    }
    // SAFETY: every thread of the block.
    unsafe { crate::sync_threads() };
    // SAFETY: initialised above, before the block barrier; used only through these handles.
    let barriers = unsafe { registry.handles(shadow) };
    if t < P * WARP {
        let mut round = 0;
        while round < rounds {
            if round > 0 {
                // SAFETY: whole producer warps; with the consumers' arrivals, (P + C) * 32
                // threads per phase; ids 1 and 2 have no other user.
                unsafe { barriers.sync(read) };
            }
            let mut w = t;
            while w < NAMED_BUFFER_WORDS {
                // SAFETY: inside the buffer (the launch's shared memory).
                unsafe {
                    buffer
                        .add(w as usize)
                        .write_volatile(named_value(seed, block, round, w))
                };
                w += P * WARP;
            }
            // SAFETY: as above.
            unsafe { barriers.arrive(written) };
            round += 1;
        }
    } else {
        let c = t - P * WARP;
        let (mut errors, mut sum) = (0u32, 0u32);
        let mut round = 0;
        while round < rounds {
            // SAFETY: whole consumer warps; as above.
            unsafe { barriers.sync(written) };
            let mut w = c;
            while w < NAMED_BUFFER_WORDS {
                // SAFETY: inside the buffer.
                let v = unsafe { buffer.add(w as usize).read_volatile() };
                errors += u32::from(v != named_value(seed, block, round, w));
                sum = sum.wrapping_add(v);
                w += C * WARP;
            }
            if round + 1 < rounds {
                // SAFETY: as above; the producers wait for it before the next round only.
                unsafe { barriers.arrive(read) };
            }
            round += 1;
        }
        let at = ((block * C * WARP + c) * NAMED_OUT_WORDS) as usize;
        // SAFETY: the consumer thread's words of `out`.
        unsafe {
            out.add(at).write(errors);
            out.add(at + 1).write(sum);
        }
    }
}

/// The entry of one case of `named_barrier_cases!`.
macro_rules! named_entry {
    ($name:ident, $p:literal, $c:literal) => {
        /// A named-barrier case (`layout::named_barrier_cases!`).
        ///
        /// # Safety
        ///
        /// See `named`.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(out: *mut u32, rounds: u32, seed: u32) {
            // SAFETY: the entry's contract.
            unsafe { named::<$p, $c>(out, rounds, seed) }
        }
    };
}

named_barrier_cases!(named_entry);
