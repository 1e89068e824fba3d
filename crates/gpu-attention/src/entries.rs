//! The module's entry points: one line per row of the plan's kernel table.

use gpu_attention_plan::abi::{KERNELS, KernelSpec, Params};
use gpu_hopper::wgmma::{Bf16, F16, M64};

use crate::kernel::forward;

/// Whether two strings are equal, in a `const`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Checks, at compile time, that an entry named `name` is the table row `spec`'s.
const fn check(spec: KernelSpec, name: &str) {
    assert!(
        same(spec.entry, name),
        "an entry's name differs from its table row's `entry`"
    );
}

/// A table row with the crate's `plain`, `overlap`, `pingpong`, `lazy_rescale` and `eager_rescale`
/// features applied (the variant modules of the benchmark; without them, the row as the plan has
/// it).
const fn variant(mut k: KernelSpec) -> KernelSpec {
    if cfg!(feature = "plain") {
        k.overlap = false;
        k.pingpong = false;
    }
    if cfg!(feature = "overlap") {
        k.overlap = true;
    }
    if cfg!(feature = "pingpong") {
        k.pingpong = true;
    }
    if cfg!(feature = "lazy_rescale") {
        k.lazy = true;
    }
    if cfg!(feature = "eager_rescale") {
        k.lazy = false;
    }
    // The conditional rescale lets a weight reach `2^LAZY_GROWTH`, past the FMA pipe's
    // exponential's `x <= 0` (`gpu_hopper::math::exp2_fma`); with the late rescale it would put
    // a warp-divergent branch between two `wgmma`s in flight. Those variants take every
    // rescale.
    if cfg!(any(
        feature = "exp_fma_3",
        feature = "exp_fma_4",
        feature = "late_rescale"
    )) {
        k.lazy = false;
    }
    k
}

/// The parameter of every entry, one [`Params`] (the plan's `abi`), passed by value (as the
/// GEMM's: one `.param .align 8 .b8` block, which the host checks when it loads the module).
///
/// # Safety
///
/// Every entry's contract: launched with its row's `KernelSpec::threads` threads on a 1D grid of
/// at most `KernelSpec::cluster` times `units` CTAs (the plan's `schedule::Units` of the problem
/// in blocks of its row's `KernelSpec::unit_rows` rows), in clusters of `KernelSpec::cluster`
/// CTAs along x (a row of pairs: an even grid, and every pair on the GPU at once or not, as the
/// driver schedules clusters), and the dynamic shared memory of its row
/// (`KernelSpec::smem_bytes`); `params` describes a problem that `Problem::check` accepts and
/// `KernelSpec::takes` (a row of pairs: a fixed batch without a mask), for this row's element
/// type and head dimension; `params.maps`
/// points to the tensor maps of Q, K and V in global memory as `Params` describes them
/// (64-byte aligned), followed for a variable-length batch by the offsets; O and `LSE` hold
/// the problem's extents and overlap nothing the launch reads; nothing else writes them while
/// the launch runs.
macro_rules! entry {
    ($(#[$doc:meta])* $name:ident = $row:literal, $element:ty) => {
        const _: () = check(KERNELS[$row], stringify!($name));
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// See [`entry!`]: the launch, the tensor maps, the tensors.
        #[unsafe(no_mangle)]
        // One `#[repr(C)]` block by value: see [`entry!`].
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name(params: Params) {
            const SPEC: KernelSpec = variant(KERNELS[$row]);
            // SAFETY: the entries' contract.
            unsafe {
                forward::<
                    $element,
                    M64<{ SPEC.block_n }>,
                    M64<{ SPEC.head_dim }>,
                    { SPEC.stages as usize },
                    { SPEC.consumers as usize },
                    { 4 * SPEC.consumers },
                    { 4 * SPEC.consumers * SPEC.cluster },
                >(SPEC, params)
            }
        }
    };
}

entry!(
    /// bf16, head dimension 64, 128 keys a block (3 stages; the plain loop), for key sequences
    /// up to the plan's `SHORT_KEYS`.
    attention_fwd_bf16_d64_n128 = 0,
    Bf16
);
entry!(
    /// bf16, head dimension 64, 192 query rows (three consumer warpgroups) by 128 keys a block
    /// (3 stages; the plain loop), for longer key sequences.
    attention_fwd_bf16_d64_m192 = 1,
    Bf16
);
entry!(
    /// bf16, head dimension 128 (192 keys a block, 2 stages; both overlaps).
    attention_fwd_bf16_d128_n192 = 2,
    Bf16
);
entry!(
    /// bf16, head dimension 128 (128 keys a block, for key sequences up to the plan's
    /// `short_keys`).
    attention_fwd_bf16_d128_n128 = 3,
    Bf16
);
entry!(
    /// bf16, head dimension 256 (64 keys a block, 2 stages; the intra-warpgroup overlap and the
    /// conditional rescale).
    attention_fwd_bf16_d256_n64 = 4,
    Bf16
);
entry!(
    /// f16, head dimension 64, 128 keys a block (as its bf16 row).
    attention_fwd_f16_d64_n128 = 5,
    F16
);
entry!(
    /// f16, head dimension 64, 192 query rows by 128 keys a block (as its bf16 row).
    attention_fwd_f16_d64_m192 = 6,
    F16
);
entry!(
    /// f16, head dimension 128, 192 keys a block (as its bf16 row).
    attention_fwd_f16_d128_n192 = 7,
    F16
);
entry!(
    /// f16, head dimension 128, 128 keys a block (as its bf16 row).
    attention_fwd_f16_d128_n128 = 8,
    F16
);
entry!(
    /// f16, head dimension 256, 64 keys a block (as its bf16 row).
    attention_fwd_f16_d256_n64 = 9,
    F16
);
entry!(
    /// bf16, head dimension 64, 128 query rows by 192 keys a block (3 stages; the plain loop): a
    /// measurement, never the plan's choice (its long row before run 97).
    attention_fwd_bf16_d64_n192 = 10,
    Bf16
);
entry!(
    /// f16, head dimension 64, 128 query rows by 192 keys a block (as its bf16 row).
    attention_fwd_f16_d64_n192 = 11,
    F16
);
entry!(
    /// bf16, head dimension 64, 192 query rows by 192 keys a block (FlashAttention-3's tile): a
    /// measurement.
    attention_fwd_bf16_d64_m192_n192 = 12,
    Bf16
);
entry!(
    /// bf16, head dimension 128, 176 keys a block (FlashAttention-3's tile): a measurement.
    attention_fwd_bf16_d128_n176 = 13,
    Bf16
);
entry!(
    /// bf16, head dimension 256, 80 keys a block (FlashAttention-3's tile): a measurement.
    attention_fwd_bf16_d256_n80 = 14,
    Bf16
);
entry!(
    /// bf16, head dimension 128, 192 keys a block, in CTA pairs that share each K and V block
    /// by multicast (FlashAttention-3's clusters): the plan's for a fixed batch without a mask
    /// above `short_keys`.
    attention_fwd_bf16_d128_n192_c2 = 15,
    Bf16
);
entry!(
    /// bf16, head dimension 128, 176 keys a block, in CTA pairs: a measurement.
    attention_fwd_bf16_d128_n176_c2 = 16,
    Bf16
);
entry!(
    /// bf16, head dimension 256, 64 keys a block, in CTA pairs: a measurement.
    attention_fwd_bf16_d256_n64_c2 = 17,
    Bf16
);
entry!(
    /// f16, head dimension 128, 192 keys a block, in CTA pairs (as its bf16 row).
    attention_fwd_f16_d128_n192_c2 = 18,
    F16
);
entry!(
    /// bf16, head dimension 128, 128 keys a block, in CTA pairs: a measurement (the short key
    /// sequences without a mask).
    attention_fwd_bf16_d128_n128_c2 = 19,
    Bf16
);
entry!(
    /// bf16, head dimension 64, 192 query rows by 128 keys a block, in CTA pairs: a
    /// measurement.
    attention_fwd_bf16_d64_m192_c2 = 20,
    Bf16
);
