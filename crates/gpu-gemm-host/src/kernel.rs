//! The kernels of the module and the host's side of their arithmetic: the `Kernel` enum (one
//! variant per row of the plan's kernel table, `gpu_gemm_plan::KERNELS`), the default choice,
//! the launch checks and the shape contract. The tiles, split-K, grids and workspace come from
//! the plan, which the kernels compile too. Pure: no CUDA call, so every rule here is tested on
//! the host.

use gpu_gemm_plan::{ClusterFit, KernelSpec, LaunchLimit};

use crate::GemmError;

pub use gpu_gemm_plan::Shape;

/// The `Kernel` enum and its table lookup, from the plan's lists of rows: the production rows,
/// then (with the `steps` feature) the step rows.
macro_rules! kernels {
    (
        [$($(#[$step_doc:meta])* $step:ident = $step_row:ident,)*]
        $($(#[$doc:meta])* $variant:ident = $row:ident,)*
    ) => {
        /// The kernels of the module: one per row of the plan's kernel table
        /// (`gpu_gemm_plan::KERNELS`), and with the `steps` feature the kernels kept to show the
        /// design's steps (`gpu_gemm_plan::STEPS`, which only the steps module holds).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kernel {
            $($(#[$doc])* $variant,)*
            $(#[cfg(feature = "steps")] $(#[$step_doc])* $step,)*
        }

        impl Kernel {
            /// Every kernel of the module, in the plan table's order (the steps last).
            pub const ALL: [Kernel; KERNEL_COUNT] = [
                $(Kernel::$variant,)*
                $(#[cfg(feature = "steps")] Kernel::$step,)*
            ];

            /// The kernel's row of the plan's table.
            pub const fn spec(self) -> &'static KernelSpec {
                match self {
                    $(Kernel::$variant => &gpu_gemm_plan::$row,)*
                    $(#[cfg(feature = "steps")] Kernel::$step => &gpu_gemm_plan::$step_row,)*
                }
            }
        }
    };
}

/// The step rows, bracketed, then the production rows: [`kernels!`]'s input.
macro_rules! after_the_steps {
    ($($steps:tt)*) => {
        gpu_gemm_plan::with_kernels!(kernels, [$($steps)*]);
    };
}
gpu_gemm_plan::with_steps!(after_the_steps);

/// How many kernels [`Kernel::ALL`] holds.
const KERNEL_COUNT: usize = gpu_gemm_plan::KERNELS.len()
    + if cfg!(feature = "steps") {
        gpu_gemm_plan::STEPS.len()
    } else {
        0
    };

// The enum and the table list the same rows, in the same order.
const _: () = {
    let mut i = 0;
    while i < gpu_gemm_plan::KERNELS.len() {
        let (a, b) = (Kernel::ALL[i].spec().entry, gpu_gemm_plan::KERNELS[i].entry);
        assert!(
            a.len() == b.len(),
            "Kernel::ALL and the plan's KERNELS differ"
        );
        i += 1;
    }
};

impl Kernel {
    /// The entry point's name.
    pub const fn entry(self) -> &'static str {
        self.spec().entry
    }

    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The kernel of [`Kernel::ALL`] whose [`name`](Self::name) is `name` (the table's names:
    /// `persistent-128`, `skinny-80-r64-d`), or `None`. Whether a module holds it is
    /// [`Gemm::has`](crate::Gemm::has)'s to say (a production module has no step kernels).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Threads per block.
    pub const fn threads(self) -> u32 {
        self.spec().threads
    }

    /// Rows of D per CTA tile: 64 for the single warpgroup, 128 (two consumer warpgroups)
    /// otherwise; also the rows of A's tensor-map box.
    pub const fn tile_rows(self) -> u32 {
        self.spec().rows
    }

    /// Columns of D per CTA tile (rows of B's box, alone).
    pub const fn tile_cols(self) -> u32 {
        self.spec().cols()
    }

    /// Stages of the kernel's ring: as many as fit the same shared memory.
    pub const fn stages(self) -> u32 {
        self.spec().layout.stages
    }

    /// The kernel's dynamic shared memory (its launch's `sharedMemBytes`).
    pub const fn smem_bytes(self) -> u32 {
        self.spec().smem_bytes()
    }

    /// CTAs per cluster tile: 2 for the CTA pairs, 1 otherwise (a cluster-K kernel's clusters
    /// are its splits of one tile, in pairs of two tiles: [`Kernel::launch_cluster`]).
    pub const fn cluster(self) -> u32 {
        self.spec().cluster()
    }

    /// CTAs per cluster of a launch in `splits` parts: the cluster-K kernels'
    /// ([`Kernel::Skinny16ClusterK`] and its wider forms) clusters are their `splits` (in CTA
    /// pairs, the steps module's `-ckp` rows: twice), the pairs' 2, the others' 1.
    pub const fn launch_cluster(self, splits: u32) -> u32 {
        self.spec().launch_cluster(splits)
    }

    /// How many clusters of the kernel a GPU of `sms` SMs holds at once, where `fit` is
    /// [`Gemm::cluster_fit`](crate::Gemm::cluster_fit)'s (`fit[s - 1]` clusters of `s` CTAs):
    /// the capacity its launches are planned with, the plan's
    /// [`KernelSpec::capacity_on`](gpu_gemm_plan::KernelSpec::capacity_on). The SMs for the
    /// single-CTA kernels, the pairs that fit for the pair kernels; for the cluster-K kernels
    /// the clusters of their unsplit launch (one CTA a tile; a pair for a step in pairs), which
    /// is all a launch needs to be possible: [`Gemm::splits`](crate::Gemm::splits) takes only a
    /// part count whose clusters fit.
    pub fn capacity_in(self, sms: u32, fit: &ClusterFit) -> u32 {
        self.spec().capacity_on(sms, fit)
    }

    /// Whether the kernel splits K across the CTAs of a cluster ([`Kernel::capacity_in`] then
    /// counts the clusters of its unsplit launch).
    pub const fn is_cluster_k(self) -> bool {
        matches!(self.spec().grid, gpu_gemm_plan::Grid::ClusterK)
    }

    /// Rows of B's tensor-map box: a CTA of a pair loads half of the tile's.
    pub const fn b_box_rows(self) -> u32 {
        self.spec().b_box_rows()
    }

    /// The kernel for `shape` on a GPU of `sms` SMs, of those that need no knowledge of how many
    /// clusters fit: the plan's rule ([`gpu_gemm_plan::default_kernel`], fitted to a measured
    /// sweep of M from 1 to 1024 over four model families' layers; its docs give the classes).
    /// [`Gemm::run`](crate::Gemm::run) uses [`Gemm::default_kernel`](crate::Gemm::default_kernel),
    /// which also takes the cluster-K kernels where they are faster ([`Kernel::default_on`]).
    pub fn default_for(shape: Shape, sms: u32) -> Kernel {
        Kernel::of(gpu_gemm_plan::default_kernel(shape, sms))
    }

    /// The kernel for `shape` on a GPU of `sms` SMs where `fit(kernel)` clusters of each size of
    /// the cluster-K and pair `kernel` fit at once
    /// ([`Gemm::cluster_fit`](crate::Gemm::cluster_fit)): the plan's
    /// [`gpu_gemm_plan::default_kernel_on`].
    pub fn default_on(shape: Shape, sms: u32, fit: impl Fn(Kernel) -> ClusterFit) -> Kernel {
        Kernel::of(gpu_gemm_plan::default_kernel_on(shape, sms, |spec| {
            fit(Kernel::of(spec))
        }))
    }

    /// The kernel of a row of the plan's table.
    fn of(spec: &KernelSpec) -> Kernel {
        Kernel::ALL
            .into_iter()
            .find(|kernel| kernel.spec().entry == spec.entry)
            .expect("the plan's default is a kernel of the table")
    }

    /// Into how many parts the kernel splits the K range of the tiles it splits, for `shape`,
    /// when `capacity` clusters fit on the GPU at once (split-K): the split tiles are every tile
    /// when they fill less than half of the grid, or else those of the last, partial wave; they
    /// are split into as many parts as keep every cluster busy, at most 16, each at least 4
    /// k-blocks of 64. 1 (no split) when the tiles fill at least half of the grid and the last
    /// wave is full or at least half full, and for the kernels without split-K (per tile, the
    /// first persistent kernel, the single warpgroup). The stream-K measurement kernels (the
    /// `steps` feature): their workers, up to `capacity` ([`gpu_gemm_plan::stream_k_workers`]).
    pub fn splits(self, shape: Shape, capacity: u32) -> u32 {
        self.spec().splits(shape, capacity)
    }

    /// How many tiles (cluster tiles for pairs) of `shape` the kernel computes whole, first, when
    /// launched in `splits` parts with `capacity` clusters: all without split-K; the whole waves
    /// when there is more than one; none otherwise: the `Schedule` the kernels build. An error
    /// where the kernel cannot run the shape ([`Kernel::check_launch`]).
    pub fn full_tiles(self, shape: Shape, splits: u32, capacity: u32) -> Result<u64, GemmError> {
        let schedule = self.spec().schedule(shape, splits, capacity, 0);
        schedule
            .map(|s| u64::from(s.full))
            .map_err(|e| self.limit(shape, e))
    }

    /// The split-K workspace's bytes for `shape` in `splits` parts with `capacity` clusters: a
    /// CTA tile's f32 block (128 x [`Kernel::tile_cols`]) per CTA tile of the split tiles and
    /// split (stream-K: per part of the tile with the most), then a 4-byte counter per CTA tile
    /// of the split tiles (none without split-K). An error where the kernel cannot run the shape
    /// ([`Kernel::check_launch`]).
    pub fn workspace_bytes(
        self,
        shape: Shape,
        splits: u32,
        capacity: u32,
    ) -> Result<u64, GemmError> {
        let bytes = self.spec().workspace_bytes(shape, splits, capacity);
        bytes.map_err(|e| self.limit(shape, e))
    }

    /// Whether this kernel can run `shape` in `splits` parts with `capacity` clusters: every
    /// kernel's schedule counts its work units (tiles, and the splits of split tiles) in 32 bits
    /// on the device, which holds below 2^31 units; the per-tile kernels also take at most 65535
    /// tile rows (the grid's y dimension: M up to 8,388,480, or 4,194,240 for the single
    /// warpgroup's 64-row tiles).
    pub fn check_launch(self, shape: Shape, splits: u32, capacity: u32) -> Result<(), GemmError> {
        let checked = self.spec().check_launch(shape, splits, capacity);
        checked.map_err(|e| self.limit(shape, e))
    }

    /// The error of a launch limit.
    fn limit(self, shape: Shape, limit: LaunchLimit) -> GemmError {
        match limit {
            LaunchLimit::GridRows { rows } => GemmError::Shape(format!(
                "M = {} needs {rows} tile rows of {} for {}, above the grid's 65535; a persistent kernel (Kernel::default_for) takes it",
                shape.m,
                self.tile_rows(),
                self.name()
            )),
            LaunchLimit::ClusterSplits { splits, k_blocks } => GemmError::Shape(format!(
                "{} splits K across the CTAs of a cluster: 1 to {} parts, at most one per 64 of K's {} ({k_blocks} blocks), not {splits}; Kernel::splits gives the count it launches with",
                self.name(),
                self.spec().max_parts(),
                shape.k
            )),
            LaunchLimit::SplitBlocks { splits, k_blocks } => GemmError::Shape(format!(
                "{} in {splits} parts of K's {k_blocks} blocks of 64: the parts times the blocks must stay below 2^32; Kernel::splits gives the count it launches with (at most 16)",
                self.name()
            )),
            LaunchLimit::Zero { what } => GemmError::Shape(format!(
                "{what} is 0 for {}: M, N and K are at least 1 (a GEMM with an empty dimension has nothing to compute), and so are the split count and the clusters that fit (Kernel::splits, Gemm::cluster_fit)",
                self.name()
            )),
            LaunchLimit::Units { units } => GemmError::Shape(format!(
                "{} x {} needs {units} work units (tiles of {} x {}) for {}, whose schedule counts them in 32 bits (below 2^31)",
                shape.m,
                shape.n,
                self.tile_rows() * self.cluster(),
                self.tile_cols(),
                self.name()
            )),
        }
    }

    /// The launch's grid `(x, y)` in CTAs; an error where the kernel cannot run the shape.
    pub(crate) fn grid(
        self,
        shape: Shape,
        splits: u32,
        capacity: u32,
    ) -> Result<(u32, u32), GemmError> {
        let grid = self.spec().grid(shape, splits, capacity);
        grid.map_err(|e| self.limit(shape, e))
    }
}

/// Checks a shape and the buffers' lengths (in bf16 elements) against the kernels' contract:
/// M, N and K at least 1 and below 2^31 (the tensor copies' coordinates are signed 32-bit), K a
/// multiple of 8 (a row of A or B is a multiple of 16 bytes), each buffer at least the shape's
/// size. A kernel may take less: [`Kernel::check_launch`].
pub fn check_shape(
    shape: Shape,
    a_len: usize,
    b_len: usize,
    c_len: Option<usize>,
    d_len: usize,
) -> Result<(), GemmError> {
    let Shape { m, n, k } = shape;
    if m == 0 || n == 0 || k == 0 {
        return Err(GemmError::Shape(format!(
            "M, N and K must be >= 1 (got {m} x {n} x {k})"
        )));
    }
    if k % 8 != 0 {
        return Err(GemmError::Shape(format!(
            "K must be a multiple of 8 (got {k}): a row of A or B must be a multiple of 16 bytes for the tensor copies"
        )));
    }
    // The tensor copies' coordinates are signed 32-bit (PTX ISA, "cp.async.bulk.tensor": the
    // tensor coordinates are `.s32`): a row of A, C or D, a column of B, D or C, or a k-block at
    // 2^31 or beyond would wrap.
    if m > i32::MAX as u32 || n > i32::MAX as u32 || k > i32::MAX as u32 {
        return Err(GemmError::Shape(format!(
            "M, N and K must be below 2^31 (got {m} x {n} x {k}): the tensor copies' coordinates are signed 32-bit"
        )));
    }
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let want = [
        ("A", a_len, mu * ku),
        ("B", b_len, nu * ku),
        ("D", d_len, mu * nu),
    ];
    for (name, have, need) in want {
        if have < need {
            return Err(GemmError::Shape(format!(
                "{name} has {have} elements, the shape needs {need}"
            )));
        }
    }
    if let Some(c_len) = c_len
        && c_len < mu * nu
    {
        return Err(GemmError::Shape(format!(
            "C has {c_len} elements, the shape needs {}",
            mu * nu
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default is a kernel that can launch the shape wherever one of the production kernels
    /// can: `run` must never refuse a shape (beyond the buffers' own limits) that `run_with`
    /// would take with another kernel. Drawn shapes of every size a user may send (M and N 1 to
    /// 2^24, K 8 to 2^20, each matrix below 2^31 elements), on GPUs of 1 to 1000 SMs, with
    /// cluster fits from none to every size.
    #[test]
    fn the_default_launches_every_shape_some_production_kernel_launches() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut log_uniform = |bits: u32| -> u32 {
            let e = (next() % u64::from(bits * 1000)) as f64 / 1000.0;
            (2f64.powf(e) as u32).max(1)
        };
        let fits: [fn(u32) -> ClusterFit; 3] = [
            |sms| [sms, 0, 0, 0, 0, 0, 0, 0],
            |sms| {
                [
                    sms,
                    sms / 2,
                    sms / 3,
                    sms / 4,
                    sms / 6,
                    sms / 8,
                    sms / 9,
                    sms / 9,
                ]
            },
            |sms| {
                [
                    sms,
                    sms / 2,
                    sms / 2,
                    sms / 4,
                    sms / 4,
                    sms / 4,
                    sms / 8,
                    sms / 8,
                ]
            },
        ];
        let mut tried = 0;
        while tried < 4000 {
            let (m, n, k) = (log_uniform(24), log_uniform(24), 8 * log_uniform(17));
            let (mu, nu, ku) = (m as usize, n as usize, k as usize);
            if [mu * ku, nu * ku, mu * nu].iter().any(|&e| e >= 1 << 31) {
                continue;
            }
            let shape = Shape { m, n, k };
            assert!(check_shape(shape, mu * ku, nu * ku, None, mu * nu).is_ok());
            tried += 1;
            for sms in [1, 2, 3, 7, 16, 66, 78, 114, 132, 144, 170, 264, 1000] {
                let fit = fits[tried % fits.len()](sms);
                // The capacity and the part count `Gemm` plans a launch with.
                let launches = |kernel: Kernel| {
                    let splits = kernel.spec().launch_splits(shape, sms, &fit);
                    kernel.check_launch(shape, splits, kernel.capacity_in(sms, &fit))
                };
                let default = Kernel::default_on(shape, sms, |_| fit);
                if let Err(e) = launches(default) {
                    let other = Kernel::ALL
                        .into_iter()
                        .filter(|k| !k.spec().step)
                        .find(|&k| launches(k).is_ok());
                    assert!(
                        other.is_none(),
                        "{m} x {n} x {k} on {sms} SMs: the default {} cannot launch it ({e}), {} can",
                        default.name(),
                        other.map_or("", Kernel::name)
                    );
                }
            }
        }
    }

    #[test]
    fn every_kernel_is_found_by_its_name_and_no_other() {
        for kernel in Kernel::ALL {
            assert_eq!(Kernel::from_name(kernel.name()), Some(kernel));
        }
        let mut names: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kernel::ALL.len(), "two kernels share a name");
        for name in ["", "persistent-12", "Persistent-128", "persistent-128 "] {
            assert_eq!(Kernel::from_name(name), None, "{name:?}");
        }
    }

    #[test]
    fn shapes_outside_the_contract_are_errors() {
        let ok = Shape {
            m: 7,
            n: 1000,
            k: 136,
        };
        assert!(check_shape(ok, 7 * 136, 1000 * 136, None, 7000).is_ok());
        assert!(check_shape(Shape { m: 0, ..ok }, 0, 1000 * 136, None, 0).is_err());
        assert!(check_shape(Shape { k: 100, ..ok }, 700, 100_000, None, 7000).is_err());
        assert!(check_shape(ok, 7 * 136 - 1, 1000 * 136, None, 7000).is_err());
        assert!(check_shape(ok, 7 * 136, 1000 * 136, Some(10), 7000).is_err());
        assert!(check_shape(ok, 7 * 136, 1000 * 136, None, 6999).is_err());
        // The tensor copies' coordinates are signed 32-bit: N or K of 2^31 would wrap to a
        // negative coordinate (zeros loaded, nothing stored: a wrong result), so they are
        // errors even with buffers large enough; 2^31 - 8 is the largest K, 2^31 - 1 the largest N.
        let big = 1u32 << 31;
        let (bu, b8) = (big as usize, 8 * big as usize);
        let wide = Shape { m: 1, n: big, k: 8 };
        let e = check_shape(wide, 8, b8, None, bu).unwrap_err().to_string();
        assert!(e.contains("2^31"), "{e}");
        let long = Shape { m: 1, n: 1, k: big };
        assert!(check_shape(long, bu, bu, None, 1).is_err());
        let largest = Shape {
            m: 1,
            n: big - 1,
            k: big - 8,
        };
        let (n, k) = ((big - 1) as usize, (big - 8) as usize);
        assert!(check_shape(largest, k, n * k, None, n).is_ok());
    }

    #[test]
    fn split_k_only_where_tiles_leave_the_gpu_idle() {
        let shape = |m, n, k| Shape { m, n, k };
        let sms = 132;
        // The small shapes: 16, 56 and 32 tiles of 128 x 256 for 132 SMs.
        assert_eq!(Kernel::Persistent.splits(shape(128, 4096, 4096), sms), 8);
        assert_eq!(Kernel::Persistent.splits(shape(128, 4096, 14336), sms), 8);
        assert_eq!(Kernel::Persistent.splits(shape(128, 14336, 4096), sms), 2);
        assert_eq!(Kernel::Persistent.splits(shape(1024, 1024, 1024), sms), 4);
        // Enough tiles: no split.
        assert_eq!(Kernel::Persistent.splits(shape(128, 28672, 8192), sms), 1);
        assert_eq!(Kernel::Persistent.splits(shape(8192, 8192, 8192), sms), 1);
        assert_eq!(Kernel::Cluster.splits(shape(8192, 8192, 8192), 66), 1);
        // Each split keeps at least 4 k-blocks, at most 16 splits, never 0.
        assert_eq!(Kernel::Persistent.splits(shape(64, 128, 65536), sms), 16);
        assert_eq!(Kernel::Persistent.splits(shape(1, 1, 8), sms), 1);
        assert_eq!(Kernel::Persistent.splits(shape(128, 256, 1024), sms), 4);
        // The kernels that do not split (the step rows, which the host has only with `steps`).
        assert_eq!(
            gpu_gemm_plan::PER_TILE.splits(shape(128, 4096, 4096), sms),
            1
        );
        assert_eq!(
            gpu_gemm_plan::PERSISTENT_FIRST.splits(shape(128, 4096, 4096), sms),
            1
        );
    }

    #[test]
    fn only_the_last_partial_wave_is_split_when_the_tiles_fill_the_gpu() {
        let shape = |m, n, k| Shape { m, n, k };
        let (sms, pairs) = (132, 66);
        // 1024 x 14336 x 4096: 448 tiles on 132 SMs are 3 waves and 52 tiles (measured at 0.86
        // of cuBLAS before the split); the 52 are split in 2, so the last wave takes half a tile's time.
        let llm = shape(1024, 14336, 4096);
        assert_eq!(Kernel::Persistent.splits(llm, sms), 2);
        assert_eq!(Kernel::Persistent.full_tiles(llm, 2, sms).unwrap(), 396);
        assert_eq!(Kernel::Persistent.grid(llm, 2, sms).unwrap(), (132, 1));
        assert_eq!(
            Kernel::Persistent.workspace_bytes(llm, 2, sms).unwrap(),
            52 * 2 * 131_072 + 52 * 4
        );
        // In pairs: 224 cluster tiles on 66 pairs, 26 of them split, 2 CTA tiles each.
        assert_eq!(Kernel::Cluster.splits(llm, pairs), 2);
        assert_eq!(Kernel::Cluster.full_tiles(llm, 2, pairs).unwrap(), 198);
        assert_eq!(Kernel::Cluster.grid(llm, 2, pairs).unwrap(), (132, 1));
        assert_eq!(
            Kernel::Cluster.workspace_bytes(llm, 2, pairs).unwrap(),
            52 * 2 * 131_072 + 52 * 4
        );
        // A last wave half full or more, or none, is not split: 8192^3 in pairs is 15 waves and
        // 34 of 66; 8448 x 8192 single is 33 x 32 = 1056 tiles, 8 waves exactly.
        assert_eq!(Kernel::Cluster.splits(shape(8192, 8192, 8192), pairs), 1);
        assert_eq!(Kernel::Persistent.splits(shape(8448, 8192, 4096), sms), 1);
        // At most 16 parts, each at least 4 k-blocks: 133 tiles leave one over.
        let one_over = shape(7 * 128, 19 * 256, 4096);
        assert_eq!(Kernel::Persistent.splits(one_over, sms), 16);
        assert_eq!(
            Kernel::Persistent.full_tiles(one_over, 16, sms).unwrap(),
            132
        );
        assert_eq!(
            Kernel::Persistent.splits(shape(7 * 128, 19 * 256, 512), sms),
            2
        );
        // No split: every tile whole.
        assert_eq!(Kernel::Persistent.full_tiles(llm, 1, sms).unwrap(), 448);
        // Fewer tiles than half the SMs: every tile split.
        assert_eq!(
            Kernel::Persistent
                .full_tiles(shape(128, 4096, 4096), 8, sms)
                .unwrap(),
            0
        );
    }

    #[test]
    fn grids_cover_every_unit_up_to_the_capacity() {
        let (sms, pairs) = (132, 66);
        for (m, n) in [
            (1, 1),
            (128, 256),
            (129, 257),
            (1000, 7),
            (4097, 300),
            (8192, 8192),
        ] {
            let shape = Shape { m, n, k: 4096 };
            let (rows, cols) = (m.div_ceil(128), n.div_ceil(256));
            assert_eq!(
                gpu_gemm_plan::PER_TILE.grid(shape, 1, sms).unwrap(),
                (cols, rows)
            );
            assert_eq!(
                gpu_gemm_plan::SINGLE_WARPGROUP.grid(shape, 1, sms).unwrap(),
                (cols, m.div_ceil(64))
            );
            for splits in [1, 2, 8] {
                let single = (rows * cols * splits).min(sms);
                assert_eq!(
                    Kernel::Persistent.grid(shape, splits, sms).unwrap(),
                    (single, 1)
                );
                let narrow = (rows * n.div_ceil(128) * splits).min(sms);
                assert_eq!(
                    Kernel::PersistentNarrow.grid(shape, splits, sms).unwrap(),
                    (narrow, 1)
                );
                // The first persistent kernel ignores `splits`: a CTA per tile, up to the SMs.
                assert_eq!(
                    gpu_gemm_plan::PERSISTENT_FIRST
                        .grid(shape, splits, sms)
                        .unwrap(),
                    ((rows * cols).min(sms), 1)
                );
                let pair_units = m.div_ceil(256) * cols * splits;
                assert_eq!(
                    Kernel::Cluster.grid(shape, splits, pairs).unwrap(),
                    (2 * pair_units.min(pairs), 1)
                );
            }
        }
    }

    /// With the clusters that fit, the default takes a cluster-K kernel for a decode layer of
    /// one wave (the plan's rule), asking for the fit of that kernel; without, never.
    #[test]
    fn the_default_kernel_splits_k_in_clusters_where_it_knows_they_fit() {
        let shape = Shape {
            m: 1,
            n: 6144,
            k: 4096,
        };
        let asked = std::cell::Cell::new(None);
        let fit = |kernel: Kernel| {
            asked.set(Some(kernel));
            gpu_gemm_plan::H200_CLUSTER_FIT
        };
        assert_eq!(
            Kernel::default_on(shape, 132, fit),
            Kernel::Skinny16ClusterK
        );
        assert_eq!(asked.get(), Some(Kernel::Skinny16ClusterK));
        assert_eq!(Kernel::default_for(shape, 132), Kernel::Skinny16);
        // No cluster of 2 fits: one CTA per tile against the global split in 2.
        let none = |_: Kernel| [132, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(Kernel::default_on(shape, 132, none), Kernel::Skinny16);
    }

    #[test]
    fn the_default_kernel_pairs_ctas_only_with_enough_tile_rows() {
        let shape = |m, n, k| Shape { m, n, k };
        assert_eq!(
            Kernel::default_for(shape(8192, 8192, 8192), 132),
            Kernel::Cluster
        );
        assert_eq!(
            Kernel::default_for(shape(2048, 2048, 2048), 132),
            Kernel::Cluster
        );
        assert_eq!(
            Kernel::default_for(shape(128, 28672, 8192), 132),
            Kernel::Persistent
        );
    }

    #[test]
    fn the_default_kernel_narrows_the_tiles_where_wide_ones_leave_sms_idle() {
        let shape = |m, n, k| Shape { m, n, k };
        let sms = 132;
        // The language-model shapes with M = 128 and 16 or 56 tiles of 128 x 256, and 1024^3
        // (32 tiles): narrower tiles (the plan's rule, from the sweep of issue 24: 128 x 128
        // where there are at most 198 of them, 128 x 64 in one wave with K <= 2048 or K in
        // 8192..=16384: run 142 timed 128 x 4096 x 14336 at 1.011 of cuBLAS on 128 x 64 tiles
        // against 0.947 on 128 x 128; since runs n17-n19 128 x 64 wherever they make one wave
        // at M 65..=128 up to K 16384: run n17, 128 x 4096 x 4096 in 15.98 us against 18.77).
        for (s, kernel) in [
            (shape(128, 4096, 4096), Kernel::PersistentSlim),
            (shape(128, 14336, 4096), Kernel::PersistentNarrow),
            (shape(128, 4096, 14336), Kernel::PersistentSlim),
            (shape(1024, 1024, 1024), Kernel::PersistentSlim),
            (shape(1024, 2048, 1024), Kernel::PersistentNarrow),
        ] {
            assert_eq!(Kernel::default_for(s, sms), kernel, "{s:?}");
        }
        // 128 x 64 tiles: 1024^3 has 128, one wave without split-K (Nsight Compute on the H200:
        // 11.9 us, against 14.5 us for 128 x 128 tiles in 2 splits).
        let slim = Kernel::PersistentSlim;
        assert_eq!(slim.splits(shape(1024, 1024, 1024), sms), 1);
        assert_eq!(slim.splits(shape(128, 4096, 4096), sms), 2);
        assert_eq!(
            slim.grid(shape(1024, 1024, 1024), 1, sms).unwrap(),
            (128, 1)
        );
        // 128 x 128 tiles: 32, 112 and 64 of them; 112 fill the GPU enough without split-K.
        let narrow = Kernel::PersistentNarrow;
        assert_eq!(narrow.splits(shape(128, 4096, 4096), sms), 4);
        assert_eq!(narrow.splits(shape(128, 14336, 4096), sms), 1);
        assert_eq!(narrow.splits(shape(128, 4096, 14336), sms), 4);
        assert_eq!(narrow.splits(shape(1024, 1024, 1024), sms), 2);
        assert_eq!(
            narrow.grid(shape(128, 4096, 4096), 4, sms).unwrap(),
            (128, 1)
        );
        assert_eq!(
            narrow
                .workspace_bytes(shape(128, 4096, 4096), 4, sms)
                .unwrap(),
            32 * 4 * 128 * 128 * 4 + 32 * 4
        );
        // 128 x 28672 x 8192 has 112 wide tiles, one wave without split-K: it stays wide.
        assert_eq!(
            Kernel::default_for(shape(128, 28672, 8192), sms),
            Kernel::Persistent
        );
        // Six stages of 128 x 128, or eight of 128 x 64, take the shared memory of four of
        // 128 x 256.
        assert_eq!(narrow.smem_bytes(), Kernel::Persistent.smem_bytes());
        assert_eq!(
            Kernel::PersistentSlim.smem_bytes(),
            Kernel::Persistent.smem_bytes()
        );
        assert_eq!(narrow.b_box_rows(), 128);
        assert_eq!(Kernel::PersistentSlim.b_box_rows(), 64);
    }

    #[test]
    fn the_workspace_holds_a_block_per_cta_tile_and_split_and_a_counter_per_cta_tile() {
        let shape = Shape {
            m: 1000,
            n: 300,
            k: 4096,
        };
        assert_eq!(
            Kernel::Persistent.workspace_bytes(shape, 1, 132).unwrap(),
            0
        );
        // 8 x 2 tiles, 3 blocks of 128 KiB each, and a counter each.
        assert_eq!(
            Kernel::Persistent.workspace_bytes(shape, 3, 132).unwrap(),
            16 * 3 * 131_072 + 16 * 4
        );
        // Pairs: 4 x 2 cluster tiles of 2 CTA tiles each (the padding CTA tiles included).
        assert_eq!(
            Kernel::Cluster.workspace_bytes(shape, 2, 66).unwrap(),
            16 * 2 * 131_072 + 16 * 4
        );
        let one_row = Shape {
            m: 100,
            n: 700,
            k: 4096,
        };
        assert_eq!(
            Kernel::Persistent.workspace_bytes(one_row, 2, 132).unwrap(),
            3 * 2 * 131_072 + 3 * 4
        );
        assert_eq!(
            Kernel::Cluster.workspace_bytes(one_row, 2, 66).unwrap(),
            6 * 2 * 131_072 + 6 * 4
        );
    }

    #[test]
    fn shape_arithmetic_holds_on_every_shape_check_shape_accepts() {
        // `check_shape` accepts N up to 2^31 - 1 with M of 65535 tile rows: 65535 x 2^25 tiles of
        // 128 x 64, far beyond u32 (the outside review of bf6166c: a debug build panicked with an
        // overflow, a release build wrapped).
        let big = Shape {
            m: 65_535 * 128,
            n: (1 << 31) - 1,
            k: 1 << 30,
        };
        let (m, n, k) = (big.m as usize, big.n as usize, big.k as usize);
        assert!(check_shape(big, m * k, n * k, None, m * n).is_ok());
        let _ = Kernel::default_for(big, 132);
        for kernel in Kernel::ALL {
            for capacity in [1, 66, 132] {
                let splits = kernel.splits(big, capacity);
                // Split-K: at most 16 parts; stream-K: at most a worker per cluster.
                let most = if kernel.spec().config.stream_k {
                    capacity
                } else {
                    16
                };
                assert!((1..=most).contains(&splits), "{kernel:?}: {splits}");
                let _ = kernel.full_tiles(big, splits, capacity);
                let _ = kernel.workspace_bytes(big, splits, capacity);
                // Too many tiles for any kernel's grid or schedule: an error, not a launch.
                let e = kernel.check_launch(big, splits, capacity).unwrap_err();
                assert!(matches!(e, GemmError::Shape(_)), "{kernel:?}: {e}");
            }
        }
    }

    #[test]
    fn m_is_limited_by_the_grid_only_for_the_per_tile_kernels() {
        // 65535 tile rows of 128 (of 64 for the single warpgroup) is the per-tile grid's limit;
        // the persistent kernels take any M below 2^31 whose work units fit their schedule.
        let tall = |m| Shape { m, n: 64, k: 64 };
        let limit = 65_535 * 128;
        assert!(
            gpu_gemm_plan::PER_TILE
                .check_launch(tall(limit), 1, 132)
                .is_ok()
        );
        assert!(
            gpu_gemm_plan::PER_TILE
                .check_launch(tall(limit + 1), 1, 132)
                .is_err()
        );
        assert!(
            gpu_gemm_plan::SINGLE_WARPGROUP
                .check_launch(tall(65_535 * 64 + 1), 1, 132)
                .is_err()
        );
        let huge = tall(i32::MAX as u32);
        assert!(
            check_shape(
                huge,
                i32::MAX as usize * 64,
                64 * 64,
                None,
                i32::MAX as usize * 64
            )
            .is_ok()
        );
        for kernel in [Kernel::Persistent, Kernel::PersistentSlim, Kernel::Cluster] {
            let splits = kernel.splits(huge, 132);
            assert!(kernel.check_launch(huge, splits, 132).is_ok(), "{kernel:?}");
        }
        assert_eq!(Kernel::default_for(huge, 132), Kernel::Cluster);
    }
}
