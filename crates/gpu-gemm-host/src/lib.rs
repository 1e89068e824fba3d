//! Host API of the `gpu-gemm` kernel: `D = alpha * A * B^T + beta * C` in bf16 with f32
//! accumulation, on cudarc.
//!
//! A is M x K row-major, B is N x K row-major (a linear layer's weight), C and D are M x N
//! row-major, all bf16 (`u16` bits). M and N are any size >= 1; K is a multiple of 8 (a row of A
//! or B must be a multiple of 16 bytes for the tensor copies). Anything else is a
//! [`GemmError::Shape`], never a wrong result.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use cudarc::driver::CudaContext;
//! use gpu_gemm_host::{Gemm, Shape};
//!
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let gemm = Gemm::load(&ctx, "target/gpu/sm_90a/gpu_gemm.ptx")?;
//! let shape = Shape { m: 1024, n: 4096, k: 4096 };
//! let a = stream.alloc_zeros::<u16>(1024 * 4096)?;
//! let b = stream.alloc_zeros::<u16>(4096 * 4096)?;
//! let mut d = stream.alloc_zeros::<u16>(1024 * 4096)?;
//! gemm.run(&stream, shape, 1.0, &a, &b, 0.0, None, &mut d)?;
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use cudarc::nvrtc::Ptx;

/// The kernels' CTA tile: rows of A (and D), rows of B (columns of D), and K per stage
/// ([`Kernel::PersistentNarrow`]'s tiles are 128 columns wide, [`Kernel::PersistentSlim`]'s 64:
/// [`Kernel::tile_cols`]).
pub const TILE: (u32, u32, u32) = (128, 256, 64);
/// Stages of the kernels' ring (the narrower tiles' kernels have more: [`Kernel::stages`]).
pub const STAGES: u32 = 4;
/// Threads per block: one producer warpgroup, two consumer warpgroups (all kernels but
/// [`Kernel::SingleWarpgroup`], which has one warpgroup: [`Kernel::threads`]).
pub const THREADS: u32 = 384;
/// Dynamic shared memory: the stages (A and B boxes), the epilogue's staging buffers (two
/// consumer warpgroups x two 64 x 64 bf16 boxes) and one KiB for the barriers. The same for every
/// kernel ([`Kernel::smem_bytes`]): 4 stages of 128 x 256 tiles, 6 of 128 x 128, or 8 of
/// 128 x 64.
pub const SMEM_BYTES: u32 = smem_bytes(STAGES, TILE.1);

/// The dynamic shared memory of a kernel with `stages` stages of tiles `cols` wide.
const fn smem_bytes(stages: u32, cols: u32) -> u32 {
    stages * (TILE.0 * TILE.2 * 2 + cols * TILE.2 * 2) + 2 * (2 * 64 * 64 * 2) + 1024
}
/// The kernels of the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// One CTA per 128 x 256 tile (`gemm_bf16_ws`).
    PerTile,
    /// One CTA per SM, each walking its tiles in bands of 8 tile rows (`gemm_bf16_persistent`).
    Persistent,
    /// The persistent kernel on 128 x 128 tiles (`wgmma.m64n128k16`) in a ring of 6 stages
    /// (`gemm_bf16_persistent_n128`): twice the tiles, for shapes with too few 128 x 256 tiles
    /// to fill the GPU (skinny M), which then need less split-K or none.
    PersistentNarrow,
    /// The persistent kernel on 128 x 64 tiles (`wgmma.m64n64k16`) in a ring of 8 stages
    /// (`gemm_bf16_persistent_n64`): four times the tiles, for the smallest problems.
    PersistentSlim,
    /// The persistent kernel in CTA pairs (clusters of 2): the two CTAs of a pair compute
    /// vertically adjacent tiles and share B's box through TMA multicast (`gemm_bf16_cluster`).
    Cluster,
    /// The persistent kernel as first built, every consumer thread releasing each stage and no
    /// `setmaxnreg` (`gemm_bf16_persistent_first`): kept to measure those steps.
    PersistentFirst,
    /// The step before warp specialization: one warpgroup (128 threads) per 64 x 256 tile, whose
    /// thread 0 issues the tensor loads between its MMAs (`gemm_bf16_single`): kept to measure
    /// what warp specialization gives. Never split.
    SingleWarpgroup,
}

impl Kernel {
    /// Every kernel of the module.
    pub const ALL: [Kernel; 7] = [
        Kernel::Cluster,
        Kernel::Persistent,
        Kernel::PersistentNarrow,
        Kernel::PersistentSlim,
        Kernel::PerTile,
        Kernel::PersistentFirst,
        Kernel::SingleWarpgroup,
    ];

    /// The entry point's name.
    pub const fn entry(self) -> &'static str {
        match self {
            Self::PerTile => "gemm_bf16_ws",
            Self::Persistent => "gemm_bf16_persistent",
            Self::PersistentNarrow => "gemm_bf16_persistent_n128",
            Self::PersistentSlim => "gemm_bf16_persistent_n64",
            Self::Cluster => "gemm_bf16_cluster",
            Self::PersistentFirst => "gemm_bf16_persistent_first",
            Self::SingleWarpgroup => "gemm_bf16_single",
        }
    }

    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            Self::PerTile => "per-tile",
            Self::Persistent => "persistent",
            Self::PersistentNarrow => "persistent-128",
            Self::PersistentSlim => "persistent-64",
            Self::Cluster => "cluster",
            Self::PersistentFirst => "persistent-first",
            Self::SingleWarpgroup => "single-warpgroup",
        }
    }

    /// Threads per block.
    pub const fn threads(self) -> u32 {
        match self {
            Self::SingleWarpgroup => 128,
            _ => THREADS,
        }
    }

    /// Rows of D per CTA tile: 64 for the single warpgroup, 128 (two consumer warpgroups)
    /// otherwise; also the rows of A's tensor-map box.
    const fn tile_rows(self) -> u32 {
        match self {
            Self::SingleWarpgroup => 64,
            _ => TILE.0,
        }
    }

    /// Columns of D per CTA tile (rows of B's box, alone): 128 for
    /// [`Kernel::PersistentNarrow`], 64 for [`Kernel::PersistentSlim`], 256 otherwise.
    pub const fn tile_cols(self) -> u32 {
        match self {
            Self::PersistentNarrow => 128,
            Self::PersistentSlim => 64,
            _ => TILE.1,
        }
    }

    /// Stages of the kernel's ring: as many as fit the same shared memory.
    pub const fn stages(self) -> u32 {
        match self {
            Self::PersistentNarrow => 6,
            Self::PersistentSlim => 8,
            _ => STAGES,
        }
    }

    /// The kernel's dynamic shared memory (its launch's `sharedMemBytes`).
    pub const fn smem_bytes(self) -> u32 {
        smem_bytes(self.stages(), self.tile_cols())
    }

    /// CTAs per cluster: 2 for the CTA pairs, 1 otherwise.
    pub const fn cluster(self) -> u32 {
        match self {
            Self::Cluster => 2,
            _ => 1,
        }
    }

    /// Rows of B's tensor-map box: a CTA of a pair loads half of the 256-row tile.
    const fn b_box_rows(self) -> u32 {
        self.tile_cols() / self.cluster()
    }

    /// The kernel [`Gemm::run`] uses for `shape` on a GPU of `sms` SMs. Where there are fewer
    /// 128 x 256 tiles than half the SMs (which would split every tile), a persistent kernel on
    /// narrower tiles: 128 x 128 if there are at least half as many of those as SMs, 128 x 64
    /// otherwise. Else the single-CTA persistent kernel when there is only one row of tiles (a
    /// pair's second CTA would compute only padding), and CTA pairs otherwise.
    pub fn default_for(shape: Shape, sms: u32) -> Kernel {
        // CTA tiles, as the single-CTA kernels count them.
        let few = |kernel: Kernel| kernel.cluster_tiles(shape) < sms / 2;
        if few(Kernel::Persistent) && few(Kernel::PersistentNarrow) {
            Kernel::PersistentSlim
        } else if few(Kernel::Persistent) {
            Kernel::PersistentNarrow
        } else if shape.m <= TILE.0 {
            Kernel::Persistent
        } else {
            Kernel::Cluster
        }
    }

    /// Into how many parts the persistent kernels split the K range of the tiles they split, for
    /// `shape`, when `capacity` clusters fit on the GPU at once (split-K). The split tiles are
    /// every tile when they fill less than half of the grid, or else those of the last, partial
    /// wave ([`Kernel::full_tiles`]); they are split into as many parts as keep every cluster
    /// busy, at most 16, each at least 4 k-blocks of 64. 1 (no split) when the tiles fill at least
    /// half of the grid and the last wave is full or at least half full. The per-tile, first
    /// persistent and single-warpgroup kernels do not split.
    pub fn splits(self, shape: Shape, capacity: u32) -> u32 {
        if matches!(
            self,
            Kernel::PerTile | Kernel::PersistentFirst | Kernel::SingleWarpgroup
        ) {
            return 1;
        }
        let tiles = self.cluster_tiles(shape);
        let split = if tiles >= capacity {
            tiles % capacity
        } else if tiles < capacity / 2 {
            tiles
        } else {
            0
        };
        if split == 0 {
            return 1;
        }
        let k_blocks = shape.k.div_ceil(TILE.2);
        (capacity / split).min(k_blocks / 4).clamp(1, 16)
    }

    /// How many tiles (cluster tiles for pairs) of `shape` the kernel computes whole, first, when
    /// launched in `splits` parts with `capacity` clusters: all without split-K; the whole waves
    /// when there is more than one; none otherwise. The kernels' `Schedule::new` makes the same
    /// choice from their grid.
    pub fn full_tiles(self, shape: Shape, splits: u32, capacity: u32) -> u32 {
        let tiles = self.cluster_tiles(shape);
        if splits <= 1 {
            tiles
        } else if tiles >= capacity {
            tiles - tiles % capacity
        } else {
            0
        }
    }

    /// The split-K workspace's bytes for `shape` in `splits` parts with `capacity` clusters: a
    /// CTA tile's f32 block (128 x [`Kernel::tile_cols`]) per CTA tile of the split tiles and
    /// split, then a 4-byte counter per CTA tile of the split tiles (none without split-K).
    pub fn workspace_bytes(self, shape: Shape, splits: u32, capacity: u32) -> usize {
        if splits <= 1 {
            return 0;
        }
        let slots = self.slots(shape, splits, capacity) as usize;
        slots * splits as usize * (TILE.0 * self.tile_cols() * 4) as usize + slots * 4
    }

    /// CTA tiles of the split tiles of `shape` (a cluster tile counts its CTAs): the split-K
    /// workspace's slots.
    fn slots(self, shape: Shape, splits: u32, capacity: u32) -> u32 {
        (self.cluster_tiles(shape) - self.full_tiles(shape, splits, capacity)) * self.cluster()
    }

    /// Tiles of `shape` as the kernel's schedule counts them: 128 x [`Kernel::tile_cols`] CTA
    /// tiles, or for CTA pairs 256 x 256 cluster tiles.
    fn cluster_tiles(self, shape: Shape) -> u32 {
        shape.m.div_ceil(TILE.0 * self.cluster()) * shape.n.div_ceil(self.tile_cols())
    }

    /// The launch grid for `shape` in `splits` parts when `capacity` clusters fit at once: one CTA
    /// per tile (x: tile columns, y: tile rows) for the per-tile kernel; otherwise one CTA (or
    /// pair) per work unit, at most `capacity` of them.
    fn grid(self, shape: Shape, splits: u32, capacity: u32) -> (u32, u32) {
        match self {
            Kernel::PerTile | Kernel::SingleWarpgroup => (
                shape.n.div_ceil(self.tile_cols()),
                shape.m.div_ceil(self.tile_rows()),
            ),
            _ => {
                let full = self.full_tiles(shape, splits, capacity);
                let units = full + (self.cluster_tiles(shape) - full) * splits;
                (self.cluster() * units.min(capacity), 1)
            }
        }
    }
}

/// A problem size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows of A, C and D.
    pub m: u32,
    /// Rows of B; columns of C and D.
    pub n: u32,
    /// Columns of A and B.
    pub k: u32,
}

/// What can go wrong.
#[derive(Debug)]
pub enum GemmError {
    /// The shape or a buffer does not fit the kernel's contract.
    Shape(String),
    /// A CUDA call failed.
    Cuda(String),
}

impl std::fmt::Display for GemmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Shape(s) => write!(f, "gemm: {s}"),
            Self::Cuda(s) => write!(f, "gemm: CUDA: {s}"),
        }
    }
}

impl std::error::Error for GemmError {}

/// Checks a shape and the buffers' lengths (in bf16 elements) against the kernel's contract.
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
    // tensor coordinates are `.s32`): a column of B, D or C, or a k-block, at 2^31 or beyond
    // would wrap. The grid's y dimension is below 2^16.
    if n > i32::MAX as u32 || k > i32::MAX as u32 {
        return Err(GemmError::Shape(format!(
            "N and K must be below 2^31 (got N = {n}, K = {k}): the tensor copies' coordinates are signed 32-bit"
        )));
    }
    if m.div_ceil(TILE.0) > 65_535 {
        return Err(GemmError::Shape(format!(
            "M = {m} needs more than 65535 tile rows"
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

/// The loaded kernels.
pub struct Gemm {
    _module: Arc<CudaModule>,
    /// The entry points, in the order of [`Kernel::ALL`].
    functions: Vec<CudaFunction>,
    sms: u32,
    /// How many CTA pairs of the cluster kernel fit on the GPU at once.
    pairs: u32,
    ctx: Arc<CudaContext>,
}

fn cuda(what: &str) -> impl Fn(cudarc::driver::DriverError) -> GemmError + '_ {
    move |e| GemmError::Cuda(format!("{what}: {e:?}"))
}

fn check(status: sys::CUresult, what: &str) -> Result<(), GemmError> {
    if status == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(GemmError::Cuda(format!("{what}: {status:?}")))
    }
}

/// A 2D bf16 tensor map over `rows` rows of `k` elements at `address`, boxes of 64 x `box_rows`,
/// 128-byte swizzle (the layout the kernel's wgmma descriptors read and its epilogue stages),
/// zero fill outside (and, for stores, nothing written outside).
fn tensor_map(address: u64, k: u32, rows: u32, box_rows: u32) -> Result<[u8; 128], GemmError> {
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    let dims = [u64::from(k), u64::from(rows)];
    let strides = [u64::from(k) * 2];
    let boxes = [TILE.2, box_rows];
    let element_strides = [1u32, 1];
    // SAFETY: every pointer refers to a live local of rank 2; the driver writes the map.
    let status = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            2,
            address as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    check(status, "cuTensorMapEncodeTiled")?;
    // SAFETY: initialised by the successful call; a CUtensorMap is 128 plain bytes.
    Ok(unsafe { std::mem::transmute::<sys::CUtensorMap, [u8; 128]>(map.assume_init()) })
}

impl Gemm {
    /// Loads the kernel's module (the PTX `cargo xtask build` writes, or a cubin of it).
    pub fn load(ctx: &Arc<CudaContext>, path: &str) -> Result<Self, GemmError> {
        let module = ctx
            .load_module(Ptx::from_file(path))
            .map_err(cuda("loading the GEMM module"))?;
        let load = |kernel: Kernel| -> Result<CudaFunction, GemmError> {
            let function = module
                .load_function(kernel.entry())
                .map_err(cuda("a GEMM entry point"))?;
            function
                .set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    kernel.smem_bytes() as i32,
                )
                .map_err(cuda("dynamic shared memory"))?;
            Ok(function)
        };
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda("the SM count"))? as u32;
        let functions = Kernel::ALL
            .iter()
            .map(|&kernel| load(kernel))
            .collect::<Result<Vec<_>, _>>()?;
        let cluster = &functions[Kernel::index(Kernel::Cluster)];
        let pairs = max_active_clusters(ctx, cluster, Kernel::Cluster.cluster())?;
        Ok(Self {
            functions,
            _module: module,
            sms,
            pairs,
            ctx: ctx.clone(),
        })
    }

    /// The GPU's SM count: the persistent grid.
    pub fn sms(&self) -> u32 {
        self.sms
    }

    /// Into how many parts `kernel` splits each tile's K range for `shape` on this GPU
    /// ([`Kernel::splits`] with this GPU's capacity).
    pub fn splits(&self, kernel: Kernel, shape: Shape) -> u32 {
        kernel.splits(shape, self.capacity(kernel))
    }

    /// How many clusters of `kernel` fit at once (CTAs for the single-CTA kernels).
    fn capacity(&self, kernel: Kernel) -> u32 {
        match kernel {
            Kernel::Cluster => self.pairs,
            _ => self.sms,
        }
    }

    /// How many CTA pairs of [`Kernel::Cluster`] the GPU holds at once: its grid, in pairs.
    pub fn pairs(&self) -> u32 {
        self.pairs
    }

    /// Enqueues `D = alpha * A * B^T + beta * C` on `stream` with the kernel
    /// [`Kernel::default_for`] the shape (C is read only when `beta != 0`; `None` means beta
    /// must be 0).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        stream: &Arc<CudaStream>,
        shape: Shape,
        alpha: f32,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        beta: f32,
        c: Option<&CudaSlice<u16>>,
        d: &mut CudaSlice<u16>,
    ) -> Result<(), GemmError> {
        self.run_with(
            Kernel::default_for(shape, self.sms),
            stream,
            shape,
            alpha,
            a,
            b,
            beta,
            c,
            d,
        )
    }

    /// As [`run`](Self::run), with the kernel chosen.
    #[allow(clippy::too_many_arguments)]
    pub fn run_with(
        &self,
        kernel: Kernel,
        stream: &Arc<CudaStream>,
        shape: Shape,
        alpha: f32,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        beta: f32,
        c: Option<&CudaSlice<u16>>,
        d: &mut CudaSlice<u16>,
    ) -> Result<(), GemmError> {
        check_shape(shape, a.len(), b.len(), c.map(CudaSlice::len), d.len())?;
        if beta != 0.0 && c.is_none() {
            return Err(GemmError::Shape("beta != 0 needs C".into()));
        }
        let (pa, _ga) = a.device_ptr(stream);
        let (pb, _gb) = b.device_ptr(stream);
        let pc = c.map_or(0, |c| c.device_ptr(stream).0);
        let (pd, _gd) = d.device_ptr(stream);
        // SAFETY: the addresses are those of the slices, which the checks above sized for the
        // shape, and which outlive the launch (the caller holds them; the stream orders uses).
        let prepared = unsafe { self.prepare(stream, kernel, shape, pa, pb, pc, pd)? };
        self.launch(stream, &prepared, alpha, beta)
    }

    /// Builds the tensor maps of one problem over raw device addresses and uploads them: the part
    /// of a launch that allocates, done once for a benchmark's repeated launches.
    ///
    /// # Safety
    ///
    /// `a`, `b`, `d` (and `c`, unless every launch has `beta == 0`) are device addresses of
    /// row-major bf16 matrices of the shape's sizes (A: M x K, B: N x K, C and D: M x N) in this
    /// context, 16-byte aligned, alive while any launch of the result runs. `c` may be `d` (D
    /// computed in place over C: every element of C is read before its element of D is
    /// written); otherwise no two of them overlap D.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn prepare(
        &self,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        shape: Shape,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
    ) -> Result<Prepared, GemmError> {
        let Shape { m, n, k } = shape;
        let elems = |rows: u32, cols: u32| rows as usize * cols as usize;
        check_shape(shape, elems(m, k), elems(n, k), None, elems(m, n))?;
        // A, B, and D and C for the TMA-store epilogue (their rows must be a multiple of 16
        // bytes: N % 8 == 0; otherwise the kernels store D from registers, read C from global
        // memory, and the last two maps stay zero; so does C's without C).
        let mut maps = [0u8; 512];
        if kernel.grid(shape, 1, self.sms).1 > 65_535 {
            return Err(GemmError::Shape(format!(
                "M = {m} needs more than 65535 tile rows of {} for {}",
                kernel.tile_rows(),
                kernel.name()
            )));
        }
        maps[..128].copy_from_slice(&tensor_map(a, k, m, kernel.tile_rows())?);
        maps[128..256].copy_from_slice(&tensor_map(b, k, n, kernel.b_box_rows())?);
        if n % 8 == 0 {
            maps[256..384].copy_from_slice(&tensor_map(d, n, m, 64)?);
            if c != 0 {
                maps[384..].copy_from_slice(&tensor_map(c, n, m, 64)?);
            }
        }
        let maps = stream
            .clone_htod(&maps)
            .map_err(cuda("uploading the tensor maps"))?;
        let capacity = self.capacity(kernel);
        let splits = kernel.splits(shape, capacity);
        let bytes = kernel.workspace_bytes(shape, splits, capacity);
        // Zeroed: the split counters start at zero, and each launch leaves them so.
        let work = if bytes == 0 {
            None
        } else {
            Some(
                stream
                    .alloc_zeros::<u8>(bytes)
                    .map_err(cuda("allocating the split-K workspace"))?,
            )
        };
        Ok(Prepared {
            maps,
            kernel,
            shape,
            c,
            d,
            splits,
            capacity,
            work,
            stream: stream.cu_stream() as usize,
        })
    }

    /// Enqueues one launch of a prepared problem: one kernel (split-K included: the CTA that
    /// finishes a tile's last split adds the splits up), no allocation, no synchronisation.
    ///
    /// The kernels allow programmatic dependent launches from their start
    /// (`griddepcontrol.launch_dependents`). A kernel of yours launched after this one with
    /// programmatic stream serialization must execute `griddepcontrol.wait` before it reads D;
    /// one launched without it waits as usual.
    pub fn launch(
        &self,
        stream: &CudaStream,
        prepared: &Prepared,
        alpha: f32,
        beta: f32,
    ) -> Result<(), GemmError> {
        if beta != 0.0 && prepared.c == 0 {
            return Err(GemmError::Shape("beta != 0 needs C".into()));
        }
        // The split-K workspace holds one launch's partials and split counters: the launches of
        // one `Prepared` must not overlap, so they go to the stream it was made for.
        if stream.cu_stream() as usize != prepared.stream {
            return Err(GemmError::Shape(
                "a prepared GEMM launches on the stream it was prepared on (its split-K workspace is not shared between streams)".into(),
            ));
        }
        let Shape { m, n, k } = prepared.shape;
        let (mut pmaps, _gmaps) = prepared.maps.device_ptr(stream);
        let (mut pc, mut pd) = (prepared.c, prepared.d);
        let (mut mm, mut nn, mut kk, mut al, mut be) = (m, n, k, alpha, beta);
        let mut splits = prepared.splits;
        let (mut work, _gwork) = match &prepared.work {
            Some(w) => {
                let (p, g) = w.device_ptr(stream);
                (p, Some(g))
            }
            None => (0, None),
        };
        let mut args: [*mut c_void; 10] = [
            (&raw mut pmaps).cast(),
            (&raw mut pc).cast(),
            (&raw mut pd).cast(),
            (&raw mut mm).cast(),
            (&raw mut nn).cast(),
            (&raw mut kk).cast(),
            (&raw mut al).cast(),
            (&raw mut be).cast(),
            (&raw mut splits).cast(),
            (&raw mut work).cast(),
        ];
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))?;
        let kernel = prepared.kernel;
        // The grid of the capacity `prepare` sized the workspace for.
        let grid = kernel.grid(prepared.shape, prepared.splits, prepared.capacity);
        let mut attribute = cluster_attribute(kernel.cluster());
        let config = launch_config(
            grid,
            kernel.threads(),
            kernel.smem_bytes(),
            stream.cu_stream(),
            &mut attribute,
        );
        // SAFETY: `args` holds one value per kernel parameter, of its type, alive for the call;
        // the tensor maps live in `prepared` and the matrices by `prepare`'s contract; the
        // configuration and its attribute are live locals.
        let status = unsafe {
            sys::cuLaunchKernelEx(
                &raw const config,
                self.functions[kernel.index()].cu_function(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(status, "launching the GEMM")
    }
}

impl Kernel {
    /// The position in [`Kernel::ALL`].
    fn index(self) -> usize {
        Kernel::ALL
            .iter()
            .position(|&k| k == self)
            .expect("every kernel is in ALL")
    }
}

/// The launch configuration of a GEMM kernel (`threads` threads, `smem` bytes of dynamic shared
/// memory) on `grid` and `stream`, with `attribute` (a cluster dimension) when it asks for clusters of more than one
/// CTA. Only the pair kernel is a cluster launch: a cluster dimension of 1 x 1 x 1 still launches
/// as clusters, and the single-CTA persistent kernel ran 11 % slower back to back that way
/// (issue 13, runs 31 and 32).
fn launch_config(
    grid: (u32, u32),
    threads: u32,
    smem: u32,
    stream: sys::CUstream,
    attribute: &mut sys::CUlaunchAttribute,
) -> sys::CUlaunchConfig {
    // SAFETY: reads the union field this module writes (`cluster_attribute`).
    let clustered = unsafe { attribute.value.clusterDim.x } > 1;
    sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: 1,
        blockDimX: threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: smem,
        hStream: stream,
        attrs: attribute,
        numAttrs: u32::from(clustered),
    }
}

/// A launch attribute asking for clusters of `size` CTAs along x (1: no clusters).
fn cluster_attribute(size: u32) -> sys::CUlaunchAttribute {
    // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = size;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    attribute
}

/// How many clusters of `size` CTAs of `function` (384 threads, [`SMEM_BYTES`]) the GPU holds at
/// once (`cuOccupancyMaxActiveClusters`): the persistent cluster grid. Some GPCs have an odd
/// number of SMs, so this can be below half the SM count.
fn max_active_clusters(
    ctx: &Arc<CudaContext>,
    function: &CudaFunction,
    size: u32,
) -> Result<u32, GemmError> {
    ctx.bind_to_thread().map_err(cuda("binding the context"))?;
    let mut attribute = cluster_attribute(size);
    let config = launch_config(
        (size, 1),
        THREADS,
        SMEM_BYTES,
        std::ptr::null_mut(),
        &mut attribute,
    );
    let mut clusters = 0i32;
    // SAFETY: the configuration and its attribute are live locals; the driver writes `clusters`.
    let status = unsafe {
        sys::cuOccupancyMaxActiveClusters(
            &raw mut clusters,
            function.cu_function(),
            &raw const config,
        )
    };
    check(status, "cuOccupancyMaxActiveClusters")?;
    if clusters < 1 {
        return Err(GemmError::Cuda(format!(
            "no cluster of {size} CTAs of the GEMM fits on this GPU"
        )));
    }
    Ok(clusters as u32)
}

/// A problem's tensor maps in device memory, ready for [`Gemm::launch`].
pub struct Prepared {
    maps: CudaSlice<u8>,
    kernel: Kernel,
    shape: Shape,
    c: u64,
    d: u64,
    /// Split-K parts (1: none) and their workspace.
    splits: u32,
    /// The clusters that fit on the GPU at once, which sized the workspace and the grid.
    capacity: u32,
    work: Option<CudaSlice<u8>>,
    /// The stream it was prepared on (its `CUstream`), the only one it launches on.
    stream: usize,
}

impl Prepared {
    /// Into how many parts each tile's K range is split (1: no split-K).
    pub fn splits(&self) -> u32 {
        self.splits
    }

    /// The kernel it launches.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }
}

/// bf16 bits of `x`, rounded to nearest even (no NaN).
pub fn bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

/// The f32 value of bf16 bits.
pub fn f32_of(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The issue's small shapes: 16, 56 and 32 tiles of 128 x 256 for 132 SMs.
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
        // The kernels that do not split.
        assert_eq!(Kernel::PerTile.splits(shape(128, 4096, 4096), sms), 1);
        assert_eq!(
            Kernel::PersistentFirst.splits(shape(128, 4096, 4096), sms),
            1
        );
    }

    #[test]
    fn only_the_last_partial_wave_is_split_when_the_tiles_fill_the_gpu() {
        let shape = |m, n, k| Shape { m, n, k };
        let (sms, pairs) = (132, 66);
        // 1024 x 14336 x 4096: 448 tiles on 132 SMs are 3 waves and 52 tiles (run 35: 0.86 of
        // cuBLAS); the 52 are split in 2, so the last wave takes half a tile's time.
        let llm = shape(1024, 14336, 4096);
        assert_eq!(Kernel::Persistent.splits(llm, sms), 2);
        assert_eq!(Kernel::Persistent.full_tiles(llm, 2, sms), 396);
        assert_eq!(Kernel::Persistent.grid(llm, 2, sms), (132, 1));
        assert_eq!(
            Kernel::Persistent.workspace_bytes(llm, 2, sms),
            52 * 2 * 131_072 + 52 * 4
        );
        // In pairs: 224 cluster tiles on 66 pairs, 26 of them split, 2 CTA tiles each.
        assert_eq!(Kernel::Cluster.splits(llm, pairs), 2);
        assert_eq!(Kernel::Cluster.full_tiles(llm, 2, pairs), 198);
        assert_eq!(Kernel::Cluster.grid(llm, 2, pairs), (132, 1));
        assert_eq!(
            Kernel::Cluster.workspace_bytes(llm, 2, pairs),
            52 * 2 * 131_072 + 52 * 4
        );
        // A last wave half full or more, or none, is not split: 8192^3 in pairs is 15 waves and
        // 34 of 66; 8448 x 8192 single is 33 x 32 = 1056 tiles, 8 waves exactly.
        assert_eq!(Kernel::Cluster.splits(shape(8192, 8192, 8192), pairs), 1);
        assert_eq!(Kernel::Persistent.splits(shape(8448, 8192, 4096), sms), 1);
        // At most 16 parts, each at least 4 k-blocks: 133 tiles leave one over.
        let one_over = shape(7 * 128, 19 * 256, 4096);
        assert_eq!(Kernel::Persistent.splits(one_over, sms), 16);
        assert_eq!(Kernel::Persistent.full_tiles(one_over, 16, sms), 132);
        assert_eq!(
            Kernel::Persistent.splits(shape(7 * 128, 19 * 256, 512), sms),
            2
        );
        // No split: every tile whole.
        assert_eq!(Kernel::Persistent.full_tiles(llm, 1, sms), 448);
        // Fewer tiles than half the SMs: every tile split.
        assert_eq!(
            Kernel::Persistent.full_tiles(shape(128, 4096, 4096), 8, sms),
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
            assert_eq!(Kernel::PerTile.grid(shape, 1, sms), (cols, rows));
            assert_eq!(
                Kernel::SingleWarpgroup.grid(shape, 1, sms),
                (cols, m.div_ceil(64))
            );
            for splits in [1, 2, 8] {
                let single = (rows * cols * splits).min(sms);
                assert_eq!(Kernel::Persistent.grid(shape, splits, sms), (single, 1));
                let narrow = (rows * n.div_ceil(128) * splits).min(sms);
                assert_eq!(
                    Kernel::PersistentNarrow.grid(shape, splits, sms),
                    (narrow, 1)
                );
                assert_eq!(
                    Kernel::PersistentFirst.grid(shape, splits, sms),
                    (single, 1)
                );
                let pair_units = m.div_ceil(256) * cols * splits;
                assert_eq!(
                    Kernel::Cluster.grid(shape, splits, pairs),
                    (2 * pair_units.min(pairs), 1)
                );
            }
        }
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
        // The language-model shapes with M = 128 and 16 or 56 tiles of 128 x 256 (run 37: 0.79,
        // 0.78, 0.86 of cuBLAS, split 8 or 2 ways), and 1024^3 (32 tiles, 0.46): the widest
        // tiles of which there are at least half as many as SMs, or else 128 x 64 ones.
        for (s, kernel) in [
            (shape(128, 4096, 4096), Kernel::PersistentSlim),
            (shape(128, 14336, 4096), Kernel::PersistentNarrow),
            (shape(128, 4096, 14336), Kernel::PersistentSlim),
            (shape(1024, 1024, 1024), Kernel::PersistentSlim),
            (shape(1024, 2048, 1024), Kernel::PersistentNarrow),
        ] {
            assert_eq!(Kernel::default_for(s, sms), kernel, "{s:?}");
        }
        // 128 x 64 tiles: 1024^3 has 128, one wave without split-K (run 41, Nsight Compute:
        // 11.9 us, against 14.5 us for 128 x 128 tiles in 2 splits).
        let slim = Kernel::PersistentSlim;
        assert_eq!(slim.splits(shape(1024, 1024, 1024), sms), 1);
        assert_eq!(slim.splits(shape(128, 4096, 4096), sms), 2);
        assert_eq!(slim.grid(shape(1024, 1024, 1024), 1, sms), (128, 1));
        // 128 x 128 tiles: 32, 112 and 64 of them; 112 fill the GPU enough without split-K.
        let narrow = Kernel::PersistentNarrow;
        assert_eq!(narrow.splits(shape(128, 4096, 4096), sms), 4);
        assert_eq!(narrow.splits(shape(128, 14336, 4096), sms), 1);
        assert_eq!(narrow.splits(shape(128, 4096, 14336), sms), 4);
        assert_eq!(narrow.splits(shape(1024, 1024, 1024), sms), 2);
        assert_eq!(narrow.grid(shape(128, 4096, 4096), 4, sms), (128, 1));
        assert_eq!(
            narrow.workspace_bytes(shape(128, 4096, 4096), 4, sms),
            32 * 4 * 128 * 128 * 4 + 32 * 4
        );
        // 128 x 28672 x 8192 has 112 wide tiles, one wave without split-K: it stays wide.
        assert_eq!(
            Kernel::default_for(shape(128, 28672, 8192), sms),
            Kernel::Persistent
        );
        // Six stages of 128 x 128, or eight of 128 x 64, take the shared memory of four of
        // 128 x 256.
        assert_eq!(narrow.smem_bytes(), SMEM_BYTES);
        assert_eq!(Kernel::PersistentSlim.smem_bytes(), SMEM_BYTES);
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
        assert_eq!(Kernel::Persistent.workspace_bytes(shape, 1, 132), 0);
        // 8 x 2 tiles, 3 blocks of 128 KiB each, and a counter each.
        assert_eq!(
            Kernel::Persistent.workspace_bytes(shape, 3, 132),
            16 * 3 * 131_072 + 16 * 4
        );
        // Pairs: 4 x 2 cluster tiles of 2 CTA tiles each (the padding CTA tiles included).
        assert_eq!(
            Kernel::Cluster.workspace_bytes(shape, 2, 66),
            16 * 2 * 131_072 + 16 * 4
        );
        let one_row = Shape {
            m: 100,
            n: 700,
            k: 4096,
        };
        assert_eq!(
            Kernel::Persistent.workspace_bytes(one_row, 2, 132),
            3 * 2 * 131_072 + 3 * 4
        );
        assert_eq!(
            Kernel::Cluster.workspace_bytes(one_row, 2, 66),
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
                assert!((1..=16).contains(&splits), "{kernel:?}: {splits}");
                let _ = kernel.full_tiles(big, splits, capacity);
                let _ = kernel.workspace_bytes(big, splits, capacity);
            }
        }
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16(1.0), 0x3F80);
        assert_eq!(f32_of(bf16(3.0)), 3.0);
        // 257 is halfway between 256 and 258 in bf16: ties to even (256).
        assert_eq!(f32_of(bf16(257.0)), 256.0);
        assert_eq!(f32_of(bf16(259.0)), 260.0);
    }
}
