//! The default kernel of a shape: a small rule, fitted to a measured sweep.
//!
//! The rule was chosen from the sweep of issue 24 (`gemm-bench --shapes decode,mid`: M in
//! 1..=1024, the linear layers of four model families; `tests/results/2026-12-02-issue24.md`),
//! where every kernel of the table was timed in the same rounds. On it, the rule picks a kernel
//! within 3 % of the fastest of ours on 203 of the 240 shapes, and 0.98 of the fastest as a
//! geometric mean (the rule it replaces: 104 of 240, 0.85). Above M = 1024 (not in that sweep)
//! the earlier rule stays: CTA pairs, unless the wide tiles leave SMs idle.

use crate::{CLUSTER, KernelSpec, PERSISTENT, PERSISTENT_N64, PERSISTENT_N128, Shape};

/// The kernel the host API uses for `shape` on a GPU of `sms` SMs.
///
/// For M <= 1024:
/// - **128 x 64 tiles** when they make at most one wave (`sms` of them) and K <= 2048: a short
///   k-loop, where wider tiles would split K or leave SMs idle;
/// - else **128 x 128 tiles** while they are few: at most `sms / 5` for decode (M <= 64, where
///   the wide tiles' deeper split-K wins beyond that), at most `3 sms / 2` otherwise;
/// - else **128 x 256 tiles**, one CTA per SM.
///
/// Above: 128 x 64 tiles if the 128 x 256 and 128 x 128 ones are both fewer than half the SMs,
/// 128 x 128 if only the 128 x 256 ones are, CTA pairs on 128 x 256 tiles otherwise.
pub fn default_kernel(shape: Shape, sms: u32) -> &'static KernelSpec {
    let tiles = |spec: &KernelSpec| {
        let (rows, cols) = spec.tiles(shape);
        rows * cols
    };
    let sms = u64::from(sms.max(1));
    if shape.m > 1024 {
        let few = |spec: &KernelSpec| tiles(spec) < sms / 2;
        return if few(&PERSISTENT) && few(&PERSISTENT_N128) {
            &PERSISTENT_N64
        } else if few(&PERSISTENT) {
            &PERSISTENT_N128
        } else {
            &CLUSTER
        };
    }
    if tiles(&PERSISTENT_N64) <= sms && shape.k <= 2048 {
        return &PERSISTENT_N64;
    }
    let narrow = if shape.m <= 64 { sms / 5 } else { 3 * sms / 2 };
    if tiles(&PERSISTENT_N128) <= narrow {
        &PERSISTENT_N128
    } else {
        &PERSISTENT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(m: u32, n: u32, k: u32) -> &'static str {
        default_kernel(Shape { m, n, k }, 132).name
    }

    /// One shape per class of the rule, with what the sweep measured there (the fastest of ours,
    /// and the chosen kernel's time over it).
    #[test]
    fn one_shape_per_class() {
        // Decode, a short K and few 128 x 64 tiles: 1 x 2048 x 2048 (fastest).
        assert_eq!(pick(1, 2048, 2048), "persistent-64");
        // Decode, few 128 x 128 tiles: 1 x 2048 x 8192 (fastest; 128 x 256: 0.78).
        assert_eq!(pick(1, 2048, 8192), "persistent-128");
        // Decode, many: 1 x 8192 x 28672 (fastest; 128 x 128: 0.74).
        assert_eq!(pick(1, 8192, 28672), "persistent");
        assert_eq!(pick(64, 10240, 8192), "persistent");
        // Mid M, a short K in one wave of 128 x 64: 512 x 2048 x 2048 (fastest).
        assert_eq!(pick(512, 2048, 2048), "persistent-64");
        // Mid M, up to 198 tiles of 128 x 128: 384 x 8192 x 8192 (fastest; 128 x 256: 0.87).
        assert_eq!(pick(384, 8192, 8192), "persistent-128");
        // Mid M, more: 1024 x 28672 x 4096 (fastest).
        assert_eq!(pick(1024, 28672, 4096), "persistent");
        // Large: CTA pairs; the few-tile shapes narrow the tiles as before.
        assert_eq!(pick(8192, 8192, 8192), "cluster");
        assert_eq!(pick(2048, 2048, 2048), "cluster");
        assert_eq!(pick(2048, 256, 4096), "persistent-64");
        assert_eq!(pick(2048, 1024, 4096), "persistent-128");
    }

    /// The class edges: 132 tiles of 128 x 64 (one wave) and K = 2048; 26 and 198 tiles of
    /// 128 x 128.
    #[test]
    fn the_edges_of_the_classes() {
        assert_eq!(pick(128, 132 * 64, 2048), "persistent-64");
        assert_eq!(pick(128, 132 * 64 + 1, 2048), "persistent-128");
        assert_eq!(pick(128, 8192, 2056), "persistent-128");
        assert_eq!(pick(64, 26 * 128, 4096), "persistent-128");
        assert_eq!(pick(64, 26 * 128 + 1, 4096), "persistent");
        assert_eq!(pick(65, 26 * 128 + 1, 4096), "persistent-128");
        assert_eq!(pick(128, 198 * 128, 4096), "persistent-128");
        assert_eq!(pick(128, 198 * 128 + 1, 4096), "persistent");
        assert_eq!(pick(1024, 2048, 4096), "persistent-128");
        assert_eq!(pick(1025, 2048, 4096), "cluster");
    }

    /// Every choice is a production kernel, on any GPU size and for any shape.
    #[test]
    fn the_choice_is_a_production_kernel() {
        for sms in [1, 2, 66, 132, 1000] {
            for m in [1, 63, 64, 65, 1024, 1025, 1 << 20] {
                for n in [1, 64, 4097, 1 << 20] {
                    for k in [8, 2048, 2056, 1 << 16] {
                        let spec = default_kernel(Shape { m, n, k }, sms);
                        assert!(crate::KERNELS.iter().any(|k| k.entry == spec.entry));
                        assert!(!spec.step);
                    }
                }
            }
        }
    }
}
