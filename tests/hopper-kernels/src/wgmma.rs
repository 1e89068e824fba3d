//! The wgmma cases of [`crate::layout`]'s `wgmma_cases!`: one warpgroup stages A (for SS) and B
//! from global memory into shared memory in the case's layout, runs `k_steps` `wgmma.mma_async`
//! of the case's form, and writes D to global memory through the fragment helper
//! (`fragment::accumulator`); RS cases load their A registers through `fragment::a_16bit` /
//! `a_8bit`. The host compares every element of D with its reference, so a wrong operand order,
//! descriptor field, swizzle or fragment mapping shows up as wrong elements.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::descriptor::{MatrixDescriptor, Swizzle};
#[allow(unused_imports)] // Each type is named by some case of the list.
use gpu_hopper::wgmma::{self, Bf16, E4m3, E5m2, F16, Input, M64, MmaRs, MmaSs, Shape, fragment};
use gpu_pipeline::arch::nvptx::cvta_to_shared;
use gpu_pipeline::fence_proxy_async;

use crate::layout::{
    INTERLEAVED_LBO, STEP_BYTES, WARPGROUP, WGMMA_M, interleaved_sbo, mn_block_bytes,
};

/// How the kernel lays out A and B (K-major) in shared memory, and the descriptor of it.
#[derive(Clone, Copy)]
enum Layout {
    /// 8 x 16-byte core matrices, [`INTERLEAVED_LBO`] apart along K, [`interleaved_sbo`] apart
    /// along M/N.
    Interleaved,
    /// A row per 32-byte span, swizzled.
    B32,
    /// A row per 64-byte span, swizzled.
    B64,
    /// A row per 128-byte span, swizzled (the GEMM's).
    B128,
    /// A as [`Layout::B128`]; B MN-major, 128-byte swizzle ([`stage_mn`]).
    B128Mn,
}

impl Layout {
    /// The swizzle of a swizzled layout.
    #[inline(always)]
    fn swizzle(self) -> Option<Swizzle> {
        match self {
            Layout::Interleaved => None,
            Layout::B32 => Some(Swizzle::B32),
            Layout::B64 => Some(Swizzle::B64),
            Layout::B128 | Layout::B128Mn => Some(Swizzle::B128),
        }
    }

    /// Whether B is MN-major (read with the transpose immediate).
    #[inline(always)]
    fn b_mn_major(self) -> bool {
        matches!(self, Layout::B128Mn)
    }

    /// The shared-memory bytes of one row of `k_steps` steps.
    #[inline(always)]
    fn row_bytes(self, k_steps: u32) -> u32 {
        match self.swizzle() {
            Some(s) => s.span(),
            None => k_steps * STEP_BYTES,
        }
    }

    /// Where byte `byte` of row `row` goes, from the operand's start (aligned to the layout's
    /// atom: the 1024-byte base, and A's 64 rows are whole atoms).
    #[inline(always)]
    fn offset(self, row: u32, byte: u32, k_steps: u32) -> u32 {
        match self.swizzle() {
            Some(s) => s.apply(row * s.span() + byte),
            None => {
                (row / 8) * interleaved_sbo(k_steps)
                    + (byte / 16) * INTERLEAVED_LBO
                    + (row % 8) * 16
                    + byte % 16
            }
        }
    }

    /// The descriptor of an operand at shared address `start`, at K step 0.
    #[inline(always)]
    fn descriptor(self, start: u32, k_steps: u32) -> MatrixDescriptor {
        match self.swizzle() {
            Some(s) => MatrixDescriptor::k_major(start, s),
            None => MatrixDescriptor::k_major_interleaved(
                start,
                INTERLEAVED_LBO,
                interleaved_sbo(k_steps),
            ),
        }
    }

    /// B's descriptor at shared address `start`, at K step 0: MN-major ([`stage_mn`]'s blocks
    /// as LBO, its 8-row groups as SBO) or as A's.
    #[inline(always)]
    fn b_descriptor(self, start: u32, k_steps: u32) -> MatrixDescriptor {
        if self.b_mn_major() {
            MatrixDescriptor::mn_major(start, Swizzle::B128, mn_block_bytes(k_steps), 1024)
        } else {
            self.descriptor(start, k_steps)
        }
    }

    /// B's advance from one K step to the next: 16 rows of 128 bytes MN-major, otherwise A's.
    #[inline(always)]
    fn b_step_advance(self) -> u32 {
        if self.b_mn_major() {
            16 * 128
        } else {
            self.step_advance()
        }
    }

    /// The descriptor's advance from one K step to the next: 32 bytes inside a swizzled row, two
    /// core matrices along K when interleaved.
    #[inline(always)]
    fn step_advance(self) -> u32 {
        match self.swizzle() {
            Some(_) => STEP_BYTES,
            None => (STEP_BYTES / 16) * INTERLEAVED_LBO,
        }
    }
}

/// Copies `rows` rows of `k_steps * 32` bytes from `src` (global, rows packed) to `dst` (shared)
/// in `layout`, a word per thread per iteration; the trip count is the same in every thread (the
/// words are a multiple of 128: rows are whole multiples of 16, rows' words of 8).
///
/// # Safety
///
/// `src` holds the rows; `dst` has room for `rows` rows of the layout; every thread of the
/// warpgroup calls it with its index `t`.
#[inline(always)]
unsafe fn stage(dst: *mut u8, src: *const u32, rows: u32, k_steps: u32, layout: Layout, t: u32) {
    let row_words = k_steps * STEP_BYTES / 4;
    let total = rows * row_words;
    let mut i = 0;
    while i < total / WARPGROUP {
        let w = i * WARPGROUP + t;
        let (row, word) = (w / row_words, w % row_words);
        let at = layout.offset(row, word * 4, k_steps);
        // SAFETY: `w` is inside the source rows and `at` inside the destination (the layout's
        // bytes of `rows` rows); both 4-byte aligned.
        unsafe {
            dst.add(at as usize)
                .cast::<u32>()
                .write(src.add(w as usize).read())
        };
        i += 1;
    }
}

/// Copies B, MN-major (`k_steps * 16` rows of `n` 16-bit elements at `src`, N contiguous), to
/// `dst` in the 128-byte-swizzled MN-major layout: column block `c` (64 elements, one span) of
/// every row at `c * mn_block_bytes`, row `k` of a block at `128 k` swizzled, so that the 8-row
/// groups along K are 1024 bytes apart (SBO) and the blocks `mn_block_bytes` apart (LBO). A word
/// (two elements) per thread per iteration; the trip count is the same in every thread.
///
/// # Safety
///
/// `src` holds the rows; `dst` has room for `n / 64` blocks (at least one); every thread of the
/// warpgroup calls it with its index `t`.
#[inline(always)]
unsafe fn stage_mn(dst: *mut u8, src: *const u32, n: u32, k_steps: u32, t: u32) {
    let row_words = n / 2;
    let total = k_steps * 16 * row_words;
    let mut i = 0;
    while i < total / WARPGROUP {
        let w = i * WARPGROUP + t;
        let (k, pair) = (w / row_words, w % row_words);
        let col = 2 * pair;
        let at =
            (col / 64) * mn_block_bytes(k_steps) + Swizzle::B128.apply(k * 128 + (col % 64) * 2);
        // SAFETY: `w` is inside the source rows and `at` inside the destination's blocks; both
        // 4-byte aligned.
        unsafe {
            dst.add(at as usize)
                .cast::<u32>()
                .write(src.add(w as usize).read())
        };
        i += 1;
    }
}

/// Thread `t`'s four A registers of K step `step` for an RS wgmma, each element read from A (64 x
/// K row-major at `a`) at the place `fragment::a_16bit` / `a_8bit` gives it.
///
/// # Safety
///
/// `a` holds 64 rows of `k_steps` steps; `t < 128`.
#[inline(always)]
unsafe fn a_fragment<A: Input>(a: *const u8, t: u32, step: u32, k_steps: u32) -> [u32; 4] {
    let k = k_steps * A::K;
    let mut regs = [0u32; 4];
    let mut r = 0;
    while r < 4 {
        let mut reg = 0u32;
        if A::BITS == 16 {
            let mut e = 0;
            while e < 2 {
                let (row, col) = fragment::a_16bit(t, r, e);
                let at = (row * k + col + step * A::K) as usize;
                // SAFETY: (row, col) is inside the 64 x 16 step tile, so `at` inside A.
                let half = unsafe { a.cast::<u16>().add(at).read() };
                reg |= u32::from(half) << (16 * e);
                e += 1;
            }
        } else {
            let mut e = 0;
            while e < 4 {
                let (row, col) = fragment::a_8bit(t, r, e);
                let at = (row * k + col + step * A::K) as usize;
                // SAFETY: (row, col) is inside the 64 x 32 step tile, so `at` inside A.
                let byte = unsafe { a.add(at).read() };
                reg |= u32::from(byte) << (8 * e);
                e += 1;
            }
        }
        regs[r as usize] = reg;
        r += 1;
    }
    regs
}

/// One case: see the module's docs. `RS`: A from registers; `SCALE_A`: the immediate.
///
/// # Safety
///
/// Launched with one block of 128 threads and [`crate::layout::wgmma_smem_bytes`] of the case's
/// N and row bytes as dynamic shared memory; `a` holds A (64 x K), `b` holds B (N x K), both
/// K contiguous, `d` has room for 64 x N f32.
#[inline(always)]
unsafe fn mma_case<
    S,
    A,
    B,
    const RS: bool,
    const SCALE_A: i32,
    const K_STEPS: u32,
    const TRANS_B: u32,
>(
    layout: Layout,
    a: *const u8,
    b: *const u8,
    d: *mut f32,
) where
    S: Shape + MmaSs<A, B> + MmaRs<A, B>,
    A: Input,
    B: Input,
{
    let t = crate::thread();
    let smem = dynamic_smem_1024();
    let row_bytes = layout.row_bytes(K_STEPS);
    // SAFETY: inside the dynamic shared memory: A's 64 rows come first.
    let b_smem = unsafe { smem.add((WGMMA_M * row_bytes) as usize) };
    if !RS {
        // SAFETY: A's rows, into the first region (the launch's contract).
        unsafe { stage(smem, a.cast(), WGMMA_M, K_STEPS, layout, t) };
    }
    if layout.b_mn_major() {
        // SAFETY: B's K rows of N, after A's region (the launch's contract).
        unsafe { stage_mn(b_smem, b.cast(), S::N, K_STEPS, t) };
    } else {
        // SAFETY: B's rows, after A's region.
        unsafe { stage(b_smem, b.cast(), S::N, K_STEPS, layout, t) };
    }
    // The ordinary stores above, before wgmma reads the operands (async proxy).
    fence_proxy_async();
    // SAFETY: every thread of the block (the warpgroup).
    unsafe { crate::sync_threads() };
    // SAFETY: pointers into this CTA's dynamic shared memory.
    let (a_shared, b_shared) = unsafe { (cvta_to_shared(smem), cvta_to_shared(b_smem)) };
    let desc_a = layout.descriptor(a_shared, K_STEPS);
    let desc_b = layout.b_descriptor(b_shared, K_STEPS);
    // Every step's A registers are loaded before the fence: a register written between the
    // fence and the wgmma that reads it would need another fence.
    let mut frags = [[0u32; 4]; 4];
    if RS {
        let mut step = 0;
        while step < K_STEPS {
            // SAFETY: A holds 64 x K (the launch's contract); `t < 128`.
            frags[step as usize] = unsafe { a_fragment::<A>(a, t, step, K_STEPS) };
            step += 1;
        }
    }
    let mut acc = S::ZERO;
    // SAFETY: the whole warpgroup executes this converged (no branch on the thread above it but
    // the uniform ones); the descriptors describe the staged operands, which stay untouched
    // until the wait; `acc` and `frags` are not touched in between.
    unsafe {
        wgmma::fence();
        let mut step = 0;
        while step < K_STEPS {
            let advance = step * layout.step_advance();
            let b_step = desc_b.advance(step * layout.b_step_advance()).0;
            if RS {
                S::mma_rs::<SCALE_A, 1, TRANS_B>(&mut acc, frags[step as usize], b_step, step > 0);
            } else {
                let a_step = desc_a.advance(advance).0;
                S::mma_ss::<SCALE_A, 1, 0, TRANS_B>(&mut acc, a_step, b_step, step > 0);
            }
            step += 1;
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>();
    }
    let n = S::N;
    S::each_pair(&acc, |i, x, y| {
        let (r0, c0) = fragment::accumulator(t, i);
        let (r1, c1) = fragment::accumulator(t, i + 1);
        // SAFETY: the fragment's places are inside the 64 x N tile `d` holds.
        unsafe {
            d.add((r0 * n + c0) as usize).write(x);
            d.add((r1 * n + c1) as usize).write(y);
        }
    });
}

/// `true` for the RS form of the case list.
macro_rules! is_rs {
    (Ss) => {
        false
    };
    (Rs) => {
        true
    };
}

/// The transpose immediate of B for a case's layout: 1 where B is MN-major.
macro_rules! trans_b {
    (B128Mn) => {
        1
    };
    ($other:ident) => {
        0
    };
}

/// The entry of one case of `wgmma_cases!`.
macro_rules! wgmma_entry {
    ($name:ident, $form:ident, $a:ident, $b:ident, $n:literal, $k:literal, $layout:ident, $scale:literal) => {
        /// A wgmma case (`layout::wgmma_cases!`): D (64 x N f32) from A (64 x K) and B (N x K).
        ///
        /// # Safety
        ///
        /// One block of 128 threads with the case's dynamic shared memory; `a`, `b`, `d` hold
        /// the case's matrices.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(a: *const u8, b: *const u8, d: *mut f32) {
            // SAFETY: the entry's contract.
            unsafe {
                mma_case::<M64<$n>, $a, $b, { is_rs!($form) }, { $scale }, $k, { trans_b!($layout) }>(
                    Layout::$layout,
                    a,
                    b,
                    d,
                )
            }
        }
    };
}

wgmma_cases!(wgmma_entry);
