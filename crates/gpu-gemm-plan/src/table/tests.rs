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
        assert_eq!(k.cols() % (step * k.cluster()), 0, "{}", k.name);
        assert!(!(k.config.swap_ab && k.config.tma_store), "{}", k.name);
    }
}

#[test]
fn the_hosts_grid_is_the_schedule_the_device_walks() {
    let capacity = |k: &KernelSpec| 132 / k.cluster();
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
                Grid::PerTile => gx * gy,
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
