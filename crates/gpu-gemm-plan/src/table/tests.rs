use super::*;

extern crate std;
use std::vec::Vec;

#[test]
fn entries_and_names_are_unique() {
    let all: Vec<KernelSpec> = KERNELS.iter().chain(&STEPS).copied().collect();
    for k in &KERNELS {
        assert!(!k.step, "{}: a production row", k.name);
    }
    for k in &STEPS {
        assert!(k.step, "{}: a step row", k.name);
    }
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a.entry, b.entry);
            assert_ne!(a.name, b.name);
        }
    }
}

#[test]
fn the_launch_of_each_row_fits_an_sm90_block() {
    for k in KERNELS.iter().chain(&STEPS) {
        assert!(k.smem_bytes() <= 227 * 1024, "{}", k.name);
        assert!(k.threads % 128 == 0 && k.threads <= 384, "{}", k.name);
        // The TMA-store epilogue leaves 64 columns at a time; a `wgmma` is 8 to 256 wide, in
        // steps of 8 (16 for the toolkit's generated shapes below 64).
        let step = if k.config.tma_store { 64 } else { 16 };
        assert_eq!(k.cols() % step, 0, "{}", k.name);
        // A pair's CTAs each load half of B's box for both: whole 128-byte swizzle atoms (8
        // rows), 1024-aligned in the stage.
        assert_eq!(k.b_box_rows() % 8, 0, "{}", k.name);
        assert_eq!(k.b_box_rows() * k.cluster(), k.cols(), "{}", k.name);
        assert!(!(k.config.swap_ab && k.config.tma_store), "{}", k.name);
    }
}

#[test]
fn the_hosts_grid_is_the_schedule_the_device_walks() {
    // Clusters of the kernel's own size that fit, or of 8 for the cluster-K kernels.
    let capacity = |k: &KernelSpec| match k.grid {
        Grid::ClusterK => 16,
        _ => 132 / k.cluster(),
    };
    for k in KERNELS.into_iter().chain(STEPS) {
        for (m, n, kk) in [
            (1, 1, 8),
            (128, 4096, 4096),
            (1024, 14336, 4096),
            (8192, 8192, 8192),
            (129, 257, 64),
        ] {
            let shape = Shape { m, n, k: kk };
            let cap = capacity(&k);
            let splits = k.splits(shape, cap);
            assert!(k.check_launch(shape, splits, cap).is_ok());
            let (gx, gy) = k.grid(shape, splits, cap).unwrap();
            // Every unit is walked once by the grid's CTAs (clusters), each in its own
            // schedule built from the grid as the device builds it.
            let clusters = match k.grid {
                Grid::PerTile | Grid::ClusterK => gx * gy,
                Grid::Persistent => gx / k.cluster(),
            };
            let mut units = Vec::new();
            for c in 0..clusters {
                let s = k.schedule(shape, splits, cap, c).unwrap();
                let mut u = s.first;
                while u < s.total() {
                    units.push(u);
                    u += s.stride;
                }
            }
            units.sort_unstable();
            let total = k.schedule(shape, splits, cap, 0).unwrap().total();
            assert_eq!(
                units,
                (0..total).collect::<Vec<_>>(),
                "{} {m} x {n} x {kk}",
                k.name
            );
        }
    }
}

#[test]
fn the_workspace_holds_a_block_per_slot_and_split_and_a_counter_per_slot() {
    // 1024 x 14336 x 4096: 448 tiles of 128 x 256 on 132 SMs, the last 52 split in 2.
    let llm = Shape {
        m: 1024,
        n: 14336,
        k: 4096,
    };
    assert_eq!(PERSISTENT.splits(llm, 132), 2);
    assert_eq!(
        PERSISTENT.workspace_bytes(llm, 2, 132),
        Ok(52 * 2 * 131_072 + 52 * 4)
    );
    // In pairs: 224 cluster tiles on 66 pairs, 26 split, 2 CTA tiles each.
    assert_eq!(
        CLUSTER.workspace_bytes(llm, 2, 66),
        Ok(52 * 2 * 131_072 + 52 * 4)
    );
    // Kernels without split-K never need one.
    assert_eq!(
        PER_TILE.splits(
            Shape {
                m: 128,
                n: 4096,
                k: 4096
            },
            132
        ),
        1
    );
    assert_eq!(PERSISTENT_FIRST.workspace_bytes(llm, 2, 132), Ok(0));
}

#[test]
fn launches_beyond_the_device_counters_are_refused() {
    let tall = Shape {
        m: 65_536 * 128,
        n: 256,
        k: 64,
    };
    assert_eq!(
        PER_TILE.check_launch(tall, 1, 132),
        Err(LaunchLimit::GridRows { rows: 65_536 })
    );
    assert!(PERSISTENT.check_launch(tall, 1, 132).is_ok());
    let huge = Shape {
        m: i32::MAX as u32,
        n: i32::MAX as u32,
        k: 64,
    };
    assert!(matches!(
        PERSISTENT.check_launch(huge, 1, 132),
        Err(LaunchLimit::Units { .. })
    ));
}

/// A transposing kernel counts the tiles, splits, grid and workspace of its own problem, N x M:
/// 8 x 3584 x 3584 is 28 tiles of 128 rows of B by 16 of A, split in 4 on 132 SMs.
#[test]
fn a_transposing_kernel_schedules_the_transposed_problem() {
    let shape = Shape {
        m: 8,
        n: 3584,
        k: 3584,
    };
    assert_eq!(
        SKINNY16.problem(shape),
        Shape {
            m: 3584,
            n: 8,
            k: 3584
        }
    );
    assert_eq!(PERSISTENT.problem(shape), shape);
    assert_eq!(SKINNY16.tiles(shape), (28, 1));
    let splits = SKINNY16.splits(shape, 132);
    assert_eq!(splits, 4);
    assert_eq!(SKINNY16.grid(shape, splits, 132), Ok((112, 1)));
    assert_eq!(
        SKINNY16.workspace_bytes(shape, splits, 132),
        Ok(28 * 4 * 128 * 16 * 4 + 28 * 4)
    );
    // M = 64: one tile column of 64 rows of A, or four of 16.
    let wide = Shape { m: 64, ..shape };
    assert_eq!(SKINNY64.tiles(wide), (28, 1));
    assert_eq!(SKINNY16.tiles(wide), (28, 4));
}

/// The 64-row transposing kernels (`split_columns`): twice the weight tiles of their 128-row
/// forms, the same widths and splits rule, a workspace block of 64 rows per slot and split.
#[test]
fn a_64_row_kernel_has_twice_the_weight_tiles() {
    let shape = Shape {
        m: 8,
        n: 3584,
        k: 3584,
    };
    for (half, whole) in [
        (SKINNY16_R64, SKINNY16),
        (SKINNY32_R64, SKINNY32),
        (SKINNY64_R64, SKINNY64),
    ] {
        assert!(half.config.split_columns && !whole.config.split_columns);
        assert_eq!(
            (half.rows, half.cols(), half.threads),
            (64, whole.cols(), 384)
        );
        assert_eq!(half.smem_bytes(), whole.smem_bytes());
        assert_eq!(half.tiles(shape), (56, 1));
        assert_eq!(whole.tiles(shape), (28, 1));
    }
    // 56 tiles on 132 SMs: 2 parts (the 128-row kernel's 28 tiles: 4).
    let splits = SKINNY16_R64.splits(shape, 132);
    assert_eq!(splits, 2);
    assert_eq!(SKINNY16_R64.grid(shape, splits, 132), Ok((112, 1)));
    assert_eq!(
        SKINNY16_R64.workspace_bytes(shape, splits, 132),
        Ok(56 * 2 * 64 * 16 * 4 + 56 * 4)
    );
    // 1 x 2048 x 512: 32 tiles of 64 rows, 8 k-blocks: 2 parts of 4 (the global split-K's least).
    let short = Shape {
        m: 1,
        n: 2048,
        k: 512,
    };
    assert_eq!(SKINNY16_R64.tiles(short), (32, 1));
    assert_eq!(SKINNY16_R64.splits(short, 132), 2);
}

/// The cluster-K kernels: as many parts of K (2 to 8) as the tiles' clusters fit at once, each
/// at least four k-blocks; one cluster per tile, its CTA of rank r the r-th part; no workspace.
#[test]
fn a_cluster_k_kernel_splits_each_tile_across_one_cluster() {
    // 16 clusters of 8 fit (the H200's 132 SMs: 128 CTAs in clusters of 8).
    let cap = 16;
    let shape = |m, n, k| Shape { m, n, k };
    // 1 x 2048 x 2048: 16 tiles of 128 rows of B, 32 k-blocks: 8 parts of 4.
    let small = shape(1, 2048, 2048);
    assert_eq!(SKINNY16_CLUSTER_K.splits(small, cap), 8);
    assert_eq!(SKINNY16_CLUSTER_K.grid(small, 8, cap), Ok((128, 1)));
    assert_eq!(SKINNY16_CLUSTER_K.launch_cluster(8), 8);
    assert_eq!(SKINNY16.launch_cluster(8), 1);
    assert_eq!(CLUSTER.launch_cluster(1), 2);
    assert_eq!(SKINNY16_CLUSTER_K.workspace_bytes(small, 8, cap), Ok(0));
    // Tile t's parts are CTAs 8 t .. 8 t + 7, part r on the CTA of rank r.
    for cta in [0, 5, 8, 127] {
        let s = SKINNY16_CLUSTER_K.schedule(small, 8, cap, cta).unwrap();
        assert_eq!((s.first, s.total(), s.stride), (cta, 128, 128));
        assert_eq!(s.unit(cta), (cta / 8, cta % 8, 8));
        assert_eq!(s.first + s.stride, s.total() + cta, "one unit per CTA");
    }
    // 32 tiles (4096 x 4096): 4 parts; 64 tiles (8192): 2; 28 tiles (3584): 4.
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(1, 4096, 4096), cap), 4);
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(16, 8192, 8192), cap), 2);
    assert_eq!(SKINNY64_CLUSTER_K.splits(shape(64, 3584, 3584), cap), 4);
    // Too many tiles for two parts each (65 x 2 > 128 CTAs): one CTA per tile.
    let wide = shape(1, 65 * 128, 4096);
    assert_eq!(SKINNY32_CLUSTER_K.splits(wide, cap), 1);
    assert_eq!(SKINNY32_CLUSTER_K.grid(wide, 1, cap), Ok((65, 1)));
    // A short K: split from 16 k-blocks, in parts of at least four (15 k-blocks: 1 part; 16:
    // 4; 32: 8); the 192-wide kernel from 8 k-blocks (8: 2 parts).
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(1, 2048, 448), cap), 1);
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(1, 2048, 512), cap), 1);
    assert_eq!(SKINNY64_CLUSTER_K.splits(shape(64, 2048, 960), cap), 1);
    assert_eq!(SKINNY192_CLUSTER_K.splits(shape(160, 2048, 512), cap), 2);
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(1, 2048, 1024), cap), 4);
    assert_eq!(SKINNY16_CLUSTER_K.splits(shape(1, 2048, 2048), cap), 8);
    // With the clusters of each size that fit (a cluster stays in one GPC; the H200's, run 90:
    // 15 of 8 or 7, 17 of 6, 22 of 5, 30 of 4, 39 of 3, 66 of 2): 16 tiles in 6 parts, 20 in 5,
    // 28 in 4, 32 in 3, 64 in 2; with 15 k-blocks, 1 part (3 of at least 4 for the 192-wide).
    let fit: ClusterFit = crate::H200_CLUSTER_FIT;
    let parts = |spec: &KernelSpec, m, n, k| spec.cluster_k_splits(shape(m, n, k), &fit);
    assert_eq!(SKINNY16_CLUSTER_K.cluster_k_splits(small, &fit), 6);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 9, 2560, 2048), 5);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 1, 3584, 3584), 4);
    assert_eq!(parts(&SKINNY64_CLUSTER_K, 40, 3000, 1496), 4);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 1, 4096, 4096), 3);
    assert_eq!(parts(&SKINNY32_CLUSTER_K, 17, 4097, 1000), 3);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 5, 8192, 1024), 2);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 2, 1024, 900), 1);
    assert_eq!(parts(&SKINNY192_CLUSTER_K, 160, 1024, 900), 3);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 3, 1000, 2056), 8);
    // More tiles than clusters of 2 fit: one CTA per tile; fewer than 16 k-blocks: one part.
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 1, 67 * 128, 4096), 1);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 7, 1000, 136), 1);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 7, 1000, 448), 1);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 7, 1000, 960), 1);
    assert_eq!(parts(&SKINNY16_CLUSTER_K, 7, 1000, 1024), 4);
    assert_eq!(SKINNY16.cluster_k_splits(small, &fit), 1);
    // A part count it cannot launch: more than 8 CTAs a cluster, more parts than k-blocks.
    assert_eq!(
        SKINNY16_CLUSTER_K.check_launch(small, 16, cap),
        Err(LaunchLimit::ClusterSplits {
            splits: 16,
            k_blocks: 32
        })
    );
    assert_eq!(
        SKINNY16_CLUSTER_K.check_launch(shape(1, 2048, 128), 4, cap),
        Err(LaunchLimit::ClusterSplits {
            splits: 4,
            k_blocks: 2
        })
    );
    assert!(SKINNY16_CLUSTER_K.check_launch(small, 0, cap).is_err());
}

/// The cluster-K kernels in CTA pairs: clusters of twice the parts (at most 4 parts), one per
/// cluster tile of two weight tiles, a grid of two CTAs per unit of the schedule.
#[test]
fn a_cluster_k_pair_launches_twice_its_parts_per_cluster_tile() {
    let shape = |m, n, k| Shape { m, n, k };
    let pair = SKINNY192_CLUSTER_K_PAIR;
    assert_eq!((pair.cluster(), pair.max_parts()), (2, 4));
    assert_eq!(SKINNY192_CLUSTER_K.max_parts(), 8);
    assert_eq!(pair.launch_cluster(4), 8);
    assert_eq!(pair.launch_cluster(1), 2);
    assert_eq!(pair.b_box_rows(), 96);
    assert_eq!(SKINNY64_CLUSTER_K_PAIR.b_box_rows(), 32);
    // 192 x 3584 x 3584: 28 weight tiles, 14 cluster tiles; 56 k-blocks.
    let s = shape(192, 3584, 3584);
    assert_eq!(pair.tiles(s), (14, 1));
    // The H100's fits (clusters of 2, 4, 6, 8): 14 clusters of 8 fit at once: 4 parts.
    let fit: ClusterFit = crate::H100_CLUSTER_FIT;
    assert_eq!(pair.cluster_k_splits(s, &fit), 4);
    // 4608 x 3584: 36 weight tiles, 18 cluster tiles: more than 16 clusters of 8, 20 of 6 fit.
    assert_eq!(pair.cluster_k_splits(shape(192, 4608, 3584), &fit), 3);
    // 33 weight tiles (17 cluster tiles, the last pair's second CTA wholly past N) at 3 parts.
    let odd = shape(96, 4105, 1000);
    assert_eq!(pair.tiles(odd), (17, 1));
    assert_eq!(pair.cluster_k_splits(odd, &fit), 3);
    assert_eq!(pair.grid(odd, 3, 16), Ok((17 * 3 * 2, 1)));
    assert_eq!(pair.grid(s, 4, 16), Ok((14 * 4 * 2, 1)));
    // The schedule's units are the cluster tiles' parts: CTA b of the grid is unit
    // `b / (2 parts) * parts + b % (2 parts) % parts`, tile row `2 tm + b % (2 parts) / parts`.
    let sched = pair.schedule(s, 4, 16, 0).unwrap();
    assert_eq!((sched.total(), sched.splits), (14 * 4, 4));
    // Five parts would need clusters of 10.
    assert_eq!(
        pair.check_launch(s, 5, 16),
        Err(LaunchLimit::ClusterSplits {
            splits: 5,
            k_blocks: 56
        })
    );
    assert!(pair.check_launch(s, 4, 16).is_ok());
    // Without the fits, from the clusters of 8 that fit: 4 parts where they all fit.
    assert_eq!(pair.splits(s, 16), 4);
    assert_eq!(pair.workspace_bytes(s, 4, 16), Ok(0));
}

/// The stream-K rows: every CTA a worker where the tiles leave SMs idle, a tile in two or three
/// parts, the workspace one slot per split tile of that many blocks.
#[test]
fn a_stream_k_kernel_cuts_the_last_waves_k_blocks_over_every_cta() {
    let shape = |m, n, k| Shape { m, n, k };
    // 768 x 3072 x 2048: 72 tiles of 128 x 256, 32 k-blocks each, 2304 over 132 CTAs.
    let s72 = shape(768, 3072, 2048);
    assert_eq!(PERSISTENT.splits(s72, 132), 1, "split-K leaves them whole");
    assert_eq!(PERSISTENT_SK.splits(s72, 132), 132);
    assert_eq!(PERSISTENT_SK.grid(s72, 132, 132), Ok((132, 1)));
    let s = PERSISTENT_SK.schedule(s72, 132, 132, 0).unwrap();
    assert_eq!((s.full, s.workers, s.splits), (0, 132, 3));
    assert_eq!(
        PERSISTENT_SK.workspace_bytes(s72, 132, 132),
        Ok(72 * 3 * 131_072 + 72 * 4)
    );
    // 1024 x 4608 x 3584 on the 128 x 128 kernel: 288 tiles, 2 waves and 24: the first wave
    // whole, the second with the 24 cut over the CTAs (156 tiles of 56 k-blocks).
    let s288 = shape(1024, 4608, 3584);
    let workers = PERSISTENT_N128_SK.splits(s288, 132);
    assert_eq!(workers, 132);
    let s = PERSISTENT_N128_SK.schedule(s288, workers, 132, 0).unwrap();
    assert_eq!((s.full, s.slots(1)), (132, 156));
    // A worker's range is 66 or 67 k-blocks, longer than a tile's 56: a tile in two parts at
    // most.
    assert_eq!(s.splits, 2);
    // Small problems: workers of at least 4 k-blocks and a quarter of a tile's (8 tiles of 32:
    // 32 workers of 8, each tile in 4 parts).
    let small = shape(128, 2048, 2048);
    assert_eq!(PERSISTENT_SK.splits(small, 132), 32);
    assert_eq!(stream_k_workers(8, 132, 32), 32);
    assert_eq!(stream_k_workers(1, 132, 1), 1);
    // Pairs at 8192^3: 1024 cluster tiles on 66 pairs, 15 waves whole and 34 tiles of 128 k-blocks
    // cut over the 66 pairs (65 or 66 each: a tile in up to three parts), a slot per CTA tile.
    let big = shape(8192, 8192, 8192);
    let workers = CLUSTER_SK.splits(big, 66);
    assert_eq!(workers, 66);
    assert_eq!(CLUSTER_SK.grid(big, workers, 66), Ok((132, 1)));
    let s = CLUSTER_SK.schedule(big, workers, 66, 0).unwrap();
    assert_eq!((s.full, s.slots(2), s.splits), (990, 68, 3));
    assert_eq!(
        CLUSTER_SK.workspace_bytes(big, workers, 66),
        Ok(68 * 3 * 131_072 + 68 * 4)
    );
    // Whole waves: nothing to cut, no workspace.
    let whole = shape(1536, 5632, 2048);
    assert_eq!(PERSISTENT_SK.tiles(whole), (12, 22));
    let w = PERSISTENT_SK.splits(whole, 132);
    assert_eq!(PERSISTENT_SK.workspace_bytes(whole, w, 132), Ok(0));
    assert_eq!(PERSISTENT_SK.schedule(whole, w, 132, 0).unwrap().workers, 0);
}

/// The staged epilogue writes every column of a tile of every row of the table that has it (the
/// 128 x 192 kernel's first form wrote only two of its three quarters: found by a review,
/// 2026-12-05); the transposing kernels write D from registers, each accumulator pair once.
#[test]
fn the_epilogue_covers_every_column_of_every_tile() {
    for k in KERNELS.iter().chain(&STEPS) {
        if !k.config.tma_store {
            assert!(k.config.swap_ab || k.step, "{}", k.name);
            continue;
        }
        let layout = k.layout;
        assert_eq!(
            64 * layout.quarters(),
            layout.bn.max(64),
            "{}: {} columns",
            k.name,
            layout.bn
        );
    }
}

/// The plan's public shape functions on the inputs outside the kernels' domain (a dimension of
/// 0, no capacity, no SMs): errors or a count, never a panic (found by a review, 2026-12-05:
/// division by zero with capacity 0, `clamp` with min > max at K = 0, the cluster-K count at
/// M = 0).
#[test]
fn degenerate_inputs_are_errors_not_panics() {
    let shapes = [
        Shape { m: 0, n: 64, k: 64 },
        Shape { m: 64, n: 0, k: 64 },
        Shape { m: 64, n: 64, k: 0 },
        Shape { m: 0, n: 0, k: 0 },
        Shape {
            m: 64,
            n: 64,
            k: 64,
        },
    ];
    for k in KERNELS.iter().chain(&STEPS) {
        for shape in shapes {
            for capacity in [0, 1, 132] {
                let degenerate = capacity == 0 || shape.m == 0 || shape.n == 0 || shape.k == 0;
                let got = std::panic::catch_unwind(|| {
                    let splits = k.splits(shape, capacity);
                    assert!(splits >= 1);
                    for splits in [0, 1, splits] {
                        let checked = k.check_launch(shape, splits, capacity);
                        let bad = degenerate || splits == 0;
                        assert_eq!(
                            checked.is_err(),
                            bad,
                            "{} {shape:?} {splits} {capacity}: {checked:?}",
                            k.name
                        );
                        assert_eq!(k.schedule(shape, splits, capacity, 0).is_err(), bad);
                        assert_eq!(k.workspace_bytes(shape, splits, capacity).is_err(), bad);
                        assert_eq!(k.grid(shape, splits, capacity).is_err(), bad);
                    }
                });
                assert!(
                    got.is_ok(),
                    "{} {shape:?} capacity {capacity} panicked",
                    k.name
                );
            }
        }
    }
    for shape in shapes {
        let got = std::panic::catch_unwind(|| {
            crate::default_kernel(shape, 0);
            crate::default_kernel_on(shape, 0, |_| [0; 8]);
            crate::default_kernel_on(shape, 132, |_| [132, 66, 44, 33, 26, 22, 18, 16]);
        });
        assert!(got.is_ok(), "the default for {shape:?} panicked");
    }
}

/// A split count whose product with the k-blocks passes 32 bits (the device's `k_range`): an
/// error, not a launch whose last split computes nothing (found by a review, 2026-12-05:
/// K = 2^22 in 65536 splits passed).
#[test]
fn splits_times_k_blocks_fit_32_bits() {
    let shape = Shape {
        m: 128,
        n: 256,
        k: 1 << 22,
    };
    let e = PERSISTENT.check_launch(shape, 1 << 16, 132);
    assert!(e.is_err(), "{e:?}");
    // The host's own count passes.
    let splits = PERSISTENT.splits(shape, 132);
    PERSISTENT.check_launch(shape, splits, 132).unwrap();
}

/// The default kernel of every shape of a wide class (M, N and K from 1 to past a wave, odd and
/// even, on GPUs of 2 to 132 SMs and cluster fits from none to the H100's), and every production
/// kernel a user may name on it, launched with the split count the host computes for it: the launch is accepted, and the grid's walk computes
/// every k-block of every tile exactly once (a unit per CTA, in its own schedule, as the device
/// builds it). A user's shape outside the benchmark's lists is one of these.
#[test]
fn the_default_of_any_shape_launches_and_covers_every_k_block_once() {
    let (h100, h200) = (crate::H100_CLUSTER_FIT, crate::H200_CLUSTER_FIT);
    let small: ClusterFit = [16, 8, 4, 4, 2, 2, 2, 2];
    let none: ClusterFit = [1, 0, 0, 0, 0, 0, 0, 0];
    // Two SMs holding one pair of the pair kernels (what `none` holds no pair of).
    let one_pair: ClusterFit = [2, 1, 0, 0, 0, 0, 0, 0];
    let ms = [
        1, 2, 3, 7, 16, 17, 33, 63, 64, 65, 96, 127, 129, 144, 160, 177, 192, 200, 383, 1000, 1025,
        4097,
    ];
    let ns = [1, 8, 63, 129, 896, 2056, 4097, 14336];
    let ks = [1, 8, 64, 65, 192, 256, 448, 1000, 3584, 8200];
    let (mut launches, mut refused) = (0u32, 0u32);
    for (sms, fit) in [
        (132, h100),
        (132, h200),
        (16, small),
        (2, none),
        (2, one_pair),
    ] {
        for m in ms {
            for n in ns {
                for k in ks {
                    let shape = Shape { m, n, k };
                    let default = crate::default_kernel_on(shape, sms, |_| fit);
                    for spec in core::iter::once(default).chain(KERNELS.iter()) {
                        // The host's capacity and count (`Gemm::load`, `Gemm::splits`).
                        let cap = spec.capacity_on(sms, &fit);
                        if cap == 0 {
                            // No cluster of it fits on this GPU: its launch is refused, and the
                            // default is another kernel.
                            assert!(spec.check_launch(shape, 1, cap).is_err(), "{}", spec.name);
                            assert_ne!(spec.entry, default.entry, "{m} x {n} x {k}, {sms} SMs");
                            refused += 1;
                            continue;
                        }
                        let splits = spec.launch_splits(shape, sms, &fit);
                        let what = || {
                            std::format!(
                                "{} on {m} x {n} x {k}, {sms} SMs, {splits} splits",
                                spec.name
                            )
                        };
                        assert!(spec.check_launch(shape, splits, cap).is_ok(), "{}", what());
                        if matches!(spec.grid, Grid::ClusterK) {
                            assert!(spec.launch_cluster(splits) <= 8, "{}", what());
                        }
                        let (gx, gy) = spec.grid(shape, splits, cap).unwrap();
                        let clusters = match spec.grid {
                            Grid::PerTile | Grid::ClusterK => gx * gy,
                            Grid::Persistent => gx / spec.cluster(),
                        };
                        let (tm, tn) = spec.tiles(shape);
                        let k_blocks = k.div_ceil(BK);
                        // Each tile's k-blocks, counted as the walk computes them.
                        let mut count = std::vec![0u8; (tm * tn) as usize * k_blocks as usize];
                        for c in 0..clusters {
                            let s = spec.schedule(shape, splits, cap, c).unwrap();
                            let mut u = s.first;
                            while u < s.total() {
                                let w = s.work(u, k_blocks);
                                if w.parts != 0 {
                                    assert!(
                                        w.tile < s.tiles() && w.kb0 < w.kb1 && w.kb1 <= k_blocks,
                                        "{}: {w:?}",
                                        what()
                                    );
                                    for kb in w.kb0..w.kb1 {
                                        count[(w.tile * k_blocks + kb) as usize] += 1;
                                    }
                                }
                                u += s.stride;
                            }
                        }
                        assert!(
                            count.iter().all(|&c| c == 1),
                            "{}: a k-block computed {:?} times",
                            what(),
                            count.iter().find(|&&c| c != 1)
                        );
                        launches += 1;
                    }
                }
            }
        }
    }
    // Refused: the pair kernel where no pair fits (`none`), on every shape.
    let pairs = KERNELS
        .iter()
        .filter(|spec| spec.capacity_on(2, &none) == 0)
        .count() as u32;
    assert_eq!(pairs, 1);
    assert_eq!(refused, 22 * 8 * 10 * pairs);
    assert_eq!(
        launches + refused,
        5 * 22 * 8 * 10 * (1 + KERNELS.len() as u32)
    );
}

/// The deep rings (step rows): 64-row tiles whose A slots hold only their box, so that more
/// stages fit than in the rings they deepen; each is the ring its kernel body builds
/// (`Layout::ring`), and tiles and splits are those of the 64-row kernels of their width.
#[test]
fn the_deep_rings_hold_more_stages_of_64_row_tiles() {
    let shape = Shape {
        m: 96,
        n: 3584,
        k: 3584,
    };
    for (deep, shallow) in [
        (SKINNY16_R64_DEEP, Some(SKINNY16_R64)),
        (SKINNY32_R64_DEEP, Some(SKINNY32_R64)),
        (SKINNY48_R64_DEEP, None),
        (SKINNY64_R64_DEEP, Some(SKINNY64_R64)),
        (SKINNY80_R64_DEEP, None),
        (SKINNY96_R64_DEEP, None),
    ] {
        let l = deep.layout;
        assert_eq!(
            (deep.rows, l.a_rows, l.a_bytes()),
            (64, 64, 8192),
            "{}",
            deep.name
        );
        assert_eq!(l, Layout::ring(l.bn, l.stages, deep.rows), "{}", deep.name);
        assert!(deep.config.split_columns && deep.step, "{}", deep.name);
        // The widest ring that fits: one more stage would not.
        let more = Layout {
            stages: l.stages + 1,
            ..l
        };
        assert!(more.bytes() > crate::layout::MAX_SMEM, "{}", deep.name);
        assert_eq!(deep.tiles(shape).0, 56, "{}", deep.name);
        if let Some(shallow) = shallow {
            assert!(l.stages > shallow.layout.stages, "{}", deep.name);
            assert_eq!(shallow.layout.a_rows, BM);
            assert_eq!(deep.tiles(shape), shallow.tiles(shape));
            assert_eq!(deep.splits(shape, 132), shallow.splits(shape, 132));
        }
    }
    // 96 x 3584 x 3584 on the 48-wide tiles: 56 weight tiles by two of M, 112 CTAs unsplit.
    assert_eq!(SKINNY48_R64_DEEP.tiles(shape), (56, 2));
    assert_eq!(SKINNY48_R64_DEEP.splits(shape, 132), 1);
    assert_eq!(SKINNY48_R64_DEEP.grid(shape, 1, 132), Ok((112, 1)));
}

/// The deep rings in CTA pairs (step rows): the rings and tiles of the rows they pair, clusters
/// of 2 over cluster tiles of two weight tiles, B's box half the tile's columns for each CTA
/// (a whole number of 8-row swizzle atoms), and a grid of pairs.
#[test]
fn the_deep_ring_pairs_share_the_activations_box_of_their_rows() {
    let shape = Shape {
        m: 160,
        n: 3584,
        k: 3584,
    };
    for (pair, alone) in [
        (SKINNY32_R64_DEEP_PAIR, SKINNY32_R64_DEEP),
        (SKINNY48_R64_DEEP_PAIR, SKINNY48_R64_DEEP),
        (SKINNY64_R64_DEEP_PAIR, SKINNY64_R64_DEEP),
        (SKINNY80_R64_DEEP_PAIR, SKINNY80_R64_DEEP),
        (SKINNY96_R64_DEEP_PAIR, SKINNY96_R64_DEEP),
    ] {
        assert_eq!(pair.layout, alone.layout, "{}", pair.name);
        assert_eq!((pair.rows, pair.cluster(), pair.step), (64, 2, true));
        assert_eq!(
            pair.config,
            Config {
                cluster: 2,
                ..alone.config
            }
        );
        assert_eq!(pair.b_box_rows() * 2, alone.b_box_rows(), "{}", pair.name);
        assert_eq!(pair.b_box_rows() % 8, 0, "{}", pair.name);
        let (tm, tn) = alone.tiles(shape);
        assert_eq!(pair.tiles(shape), (tm / 2, tn), "{}", pair.name);
        assert_eq!(pair.launch_cluster(1), 2);
    }
    // 160 x 3584 x 3584 on the 80-wide pairs: 28 pairs of weight tiles by two of M, unsplit with
    // 66 pairs fitting at once: 112 CTAs, cuBLAS's grid at this shape.
    assert_eq!(SKINNY80_R64_DEEP_PAIR.tiles(shape), (28, 2));
    assert_eq!(SKINNY80_R64_DEEP_PAIR.splits(shape, 66), 1);
}
