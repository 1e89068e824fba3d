//! Host API of the `gpu-gemm` kernel: `D = alpha * A * B^T + beta * C` in bf16 with f32
//! accumulation, on cudarc.
//!
//! A is M x K row-major, B is N x K row-major (a linear layer's weight), C and D are M x N
//! row-major, all bf16 (`u16` bits). M, N and K are at least 1 and below 2^31, K a multiple of 8
//! (a row of A or B must be a multiple of 16 bytes for the tensor copies); C may be D
//! ([`Addend::InPlace`]). Anything else is a [`GemmError`], never a wrong result.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gpu_gemm_host::{Gemm, Shape};
//!
//! // A one-line error, not a panic inside cudarc, on a machine without a CUDA driver.
//! let ctx = gpu_gemm_host::context(0)?;
//! let stream = ctx.default_stream();
//! // The kernels' module is embedded in this crate; `Gemm::load` takes one from a file instead.
//! let gemm = Gemm::new(&ctx)?;
//! let shape = Shape { m: 1024, n: 4096, k: 4096 };
//! let a = stream.alloc_zeros::<u16>(1024 * 4096)?;
//! let b = stream.alloc_zeros::<u16>(4096 * 4096)?;
//! let mut d = stream.alloc_zeros::<u16>(1024 * 4096)?;
//! gemm.run(&stream, shape, 1.0, &a, &b, 0.0, None, &mut d)?;
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```
//!
//! # Rounding
//!
//! Each element of D is computed in f32 and rounded once to bf16, to nearest even
//! (`cvt.rn.bf16x2.f32`): `acc` is the sum over K of the bf16 products, accumulated in f32 by the
//! tensor cores (in their order; with split-K, each split's f32 partial, added in split order),
//! then `alpha * acc`, then `+ beta * c` (two f32 roundings, no fused multiply-add), then bf16.
//! With beta = 0, C is not read (NaN in C does not reach D).
//!
//! # Streams and contexts
//!
//! [`Gemm::run`] and [`Gemm::launch`] take A, B (and C) for reading and D for writing through
//! cudarc's event tracking, held across the launch: in a context with several streams (cudarc's
//! multi-stream mode, from `CudaContext::new_stream`), work on another stream that uses these
//! buffers through cudarc is ordered after the GEMM, and the GEMM after earlier work on them.
//! Every stream and buffer must belong to the context the module was loaded in
//! ([`GemmError::Context`] otherwise). The raw-address forms ([`Gemm::prepare_raw`],
//! [`Gemm::launch_raw`]) track nothing: ordering is the caller's.
//!
//! # The module
//!
//! The kernels are built from the `gpu-gemm` kernel crate of the same repository, for nvptx64
//! sm_90a, with a nightly toolchain; this crate embeds the result ([`PTX`]), so a program on
//! stable Rust needs nothing else: [`Gemm::new`] loads it. [`Gemm::load`] loads a module from a
//! file instead (one built with `cargo xtask build`, or a cubin of it). Either way the module is
//! checked before any launch: its launch ABI version, its entries, their parameters and their
//! launch bounds. The driver compiles the PTX for the GPU when the module is loaded.

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    SyncOnDrop, sys,
};

mod cache;
mod error;
mod kernel;
mod launch;
mod module;

pub use cache::{CacheLimits, CacheStats};
pub use error::{GemmError, context};
pub use gpu_gemm_plan::{ClusterFit, H100_CLUSTER_FIT, H200_CLUSTER_FIT};
pub use kernel::{Kernel, Shape, check_shape};
pub use module::{ABI_SYMBOL, ABI_VERSION};

use cache::{Capture, Key, PlanCache};
use error::{check, check_device, cuda};
use launch::{Attributes, capture_state, launch_config, max_active_clusters, tensor_map};
use module::Params;

/// The kernels' module, as `cargo xtask build` writes it (`target/gpu/sm_90a/gpu_gemm.ptx`: the
/// PTX of the `gpu-gemm` kernel crate with a `.maxntid` launch bound per entry), behind two
/// comment lines that say how it is generated. `cargo xtask codegen` writes it into this crate
/// (`module/gpu_gemm.ptx`), and CI's `cargo xtask codegen --check` fails when it differs from a
/// fresh build of the kernel crate. [`Gemm::new`] loads it.
pub const PTX: &str = include_str!("../module/gpu_gemm.ptx");

/// The C of `D = alpha * A * B^T + beta * C`.
///
/// `None` and `Some(&c)` convert into it, so `run(.., beta, None, &mut d)` and
/// `run(.., beta, Some(&c), &mut d)` read as before it existed.
#[derive(Clone, Copy, Debug)]
pub enum Addend<'a> {
    /// No C: beta must be 0.
    None,
    /// C in its own buffer, read only (borrowed apart from D, so it cannot overlap D).
    Buffer(&'a CudaSlice<u16>),
    /// C is D: `D = alpha * A * B^T + beta * D`. Every element of D is read before it is written.
    InPlace,
}

impl<'a> From<Option<&'a CudaSlice<u16>>> for Addend<'a> {
    fn from(c: Option<&'a CudaSlice<u16>>) -> Self {
        c.map_or(Addend::None, Addend::Buffer)
    }
}

/// How a prepared problem reads C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum CSource {
    None,
    Buffer(u64),
    InPlace,
}

impl CSource {
    fn address(self, d: u64) -> u64 {
        match self {
            CSource::None => 0,
            CSource::Buffer(c) => c,
            CSource::InPlace => d,
        }
    }
}

/// The loaded kernels, and the plans of the problems [`run`](Gemm::run) has seen.
///
/// `Gemm` is `Send` and `Sync`: one may be shared by threads (the plans are behind a mutex,
/// held for a lookup, not across a launch or while a plan is made).
///
/// # The plan cache
///
/// `run` and `run_with` keep the plan of each problem they make (the tensor maps, uploaded,
/// and the split-K workspace: what [`prepare`](Gemm::prepare) makes), keyed by everything it
/// is a function of: the kernel, the shape, the addresses of A, B, C and D, how C is read, and
/// the stream. A call whose key was seen launches the kept plan: no tensor map, no upload, no
/// allocation. Every check that does not follow from the key (the buffers' lengths and
/// contexts, the stream's context, beta != 0 without C) runs on every call, so a buffer freed
/// and another allocated at its address is checked as any other, and gets a plan that is right
/// for it when it has the same shape (a tensor map encodes only the address, the dims and the
/// strides). Why the key is enough: the `cache` module's docs.
///
/// At most [`CacheLimits::default`] plans and bytes of their device memory are kept, the least
/// recently used evicted first (and freed in its stream's order); [`set_cache_limits`]
/// changes the bound, [`clear_cache`] frees them, [`cache_stats`] counts them. Each plan holds
/// its stream's `Arc` (an owned stream stays alive while a plan of it is kept; a borrowed one is
/// the caller's to keep alive, as cudarc's contract says). Memory bound to buffers that change
/// address on every call (activations from an allocator that does not reuse them) misses on
/// every call, as before the cache, and evicts plans that would hit: give such calls stable
/// buffers, or [`prepare`](Gemm::prepare) them. On the per-thread default stream
/// (`CudaContext::per_thread_stream`, whose handle names another stream on each thread) no plan
/// is kept: each call makes its own and frees it after its launch, as before the cache.
///
/// # CUDA graphs
///
/// `run` can be captured into a CUDA graph (`cuStreamBeginCapture`) once the same call has run
/// eagerly on that stream: the capture launches the kept plan. A call whose plan does not exist
/// yet is a [`GemmError::Capture`] (its making allocates and uploads, which a capture cannot
/// hold), after every other check. A plan a capture used is kept until
/// [`release_captured`](Gemm::release_captured), outside the limits, because the graph holds
/// its addresses; one with a split-K workspace is not used by eager calls after that (they make
/// another), so a replay on another stream does not share a workspace with them. Dropping the
/// `Gemm` leaks those plans and the module rather than free them: the graph may be replayed
/// after it. As with a prepared problem, the replays of a graph must not run concurrently with
/// each other (one executable graph is serialised by CUDA; two instantiated from it are not).
/// A graph holds the addresses of A, B, C and D too: keep the buffers alive while it is
/// replayed (cudarc's graphs cannot check it). `launch` of a prepared problem on a capturing
/// stream is refused (the `Prepared` could be dropped while the graph lives): capture `run`, or
/// the unsafe `launch_raw` under its contract.
///
/// With cudarc's event tracking on (a context with several streams), the tracking of A, B, C
/// and D waits on and records events in the capture, as for any cudarc buffer; cudarc's own
/// capture tests turn it off for the capture (`CudaContext::disable_event_tracking`).
///
/// [`set_cache_limits`]: Gemm::set_cache_limits
/// [`clear_cache`]: Gemm::clear_cache
/// [`cache_stats`]: Gemm::cache_stats
pub struct Gemm {
    /// Dropped first: the plans' memory is freed in their streams' order, after their launches.
    cache: Mutex<PlanCache<Key, Prepared>>,
    _module: Arc<CudaModule>,
    /// The entry points, in the order of [`Kernel::ALL`] (`None`: a step kernel this module
    /// does not hold).
    functions: Vec<Option<CudaFunction>>,
    sms: u32,
    /// How many clusters of each kernel fit on the GPU at once, in the order of
    /// [`Kernel::ALL`] ([`Kernel::capacity_in`]): CTA pairs for the pair kernels (0 where none
    /// fits), the clusters of their unsplit launch for the cluster-K kernels, CTAs (the SMs) for
    /// the others.
    capacities: Vec<u32>,
    /// For the cluster-K kernels (in the order of [`Kernel::ALL`]), how many clusters of each
    /// size, 1 to 8 CTAs, fit at once: their split counts; for the pair kernels the SMs and the
    /// pairs; zeros for the others.
    fits: Vec<ClusterFit>,
    /// Whether launches ask for programmatic stream serialization
    /// ([`Gemm::set_programmatic_launch`]).
    programmatic: gpu_hopper_host::ProgrammaticLaunch,
    ctx: Arc<CudaContext>,
}

/// The stream a problem may be prepared on (the one its launches go to): not the per-thread
/// default stream, whose handle names another stream on each thread, so that a `launch` from
/// another thread would pass the stream check unordered after the upload, and share the
/// workspace (found by a review, 2026-12-05).
fn preparable(handle: usize) -> Result<(), GemmError> {
    if gpu_hopper_host::per_thread_handle(handle) {
        return Err(GemmError::Shape(
            "a prepared problem launches only on the stream it was prepared on, and the per-thread default stream is another stream on each thread (a launch from another thread would not be ordered after this one's upload, and would share its split-K workspace): prepare on a stream of your own (ctx.new_stream()), or use run".into(),
        ));
    }
    Ok(())
}

/// A graph that captured `run` may be replayed after the `Gemm` is gone (cudarc's
/// `CudaGraph::launch` is safe): the plans it used are leaked with the cache
/// (`gpu_hopper_host::plan_cache`), and the module, whose kernels its nodes launch, is leaked
/// too, unless [`release_captured`](Gemm::release_captured) freed them first.
impl Drop for Gemm {
    fn drop(&mut self) {
        if self.cache_stats().captured > 0 {
            std::mem::forget(self._module.clone());
        }
    }
}

/// The device addresses of one problem's matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Addresses {
    a: u64,
    b: u64,
    c: CSource,
    d: u64,
}

/// The addresses of one problem's buffers, taken through cudarc's tracking on a stream: A, B and
/// C with read intent, D with write intent. Dropping it records the stream's work so far as their
/// last read (A, B, C) and write (D), so it must live until the launch is enqueued; in a context
/// with several streams, taking it makes the stream wait for their earlier writes (and D's reads).
struct Tracked<'a> {
    addresses: Addresses,
    _guards: [Option<SyncOnDrop<'a>>; 4],
}

impl<'a> Tracked<'a> {
    fn new(
        stream: &'a CudaStream,
        a: &'a CudaSlice<u16>,
        b: &'a CudaSlice<u16>,
        c: Addend<'a>,
        d: &'a mut CudaSlice<u16>,
    ) -> Self {
        let (pa, ga) = a.device_ptr(stream);
        let (pb, gb) = b.device_ptr(stream);
        let (pc, gc) = match c {
            Addend::Buffer(c) => {
                let (p, g) = c.device_ptr(stream);
                (CSource::Buffer(p), Some(g))
            }
            Addend::InPlace => (CSource::InPlace, None),
            Addend::None => (CSource::None, None),
        };
        let (pd, gd) = d.device_ptr_mut(stream);
        Self {
            addresses: Addresses {
                a: pa,
                b: pb,
                c: pc,
                d: pd,
            },
            _guards: [Some(ga), Some(gb), gc, Some(gd)],
        }
    }
}

impl Gemm {
    /// Loads the kernels' module embedded in this crate ([`PTX`]) into `ctx`, with the checks
    /// of [`Gemm::load`] (a [`GemmError::Module`] here means the crate's embedded module is
    /// stale, which CI checks against).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self, GemmError> {
        check_device(ctx)?;
        Self::with_module(ctx, module::load_embedded(ctx)?)
    }

    /// Loads the kernels' module from the file `path` (the PTX `cargo xtask build` writes, or a
    /// cubin of it) into `ctx`, and refuses one this host API cannot launch
    /// ([`GemmError::Module`]: a module of another launch ABI version, an entry missing or
    /// taking other parameters, no launch bounds; see the `module` docs).
    pub fn load(ctx: &Arc<CudaContext>, path: &str) -> Result<Self, GemmError> {
        check_device(ctx)?;
        Self::with_module(ctx, module::load(ctx, path)?)
    }

    /// The loaded kernels of a checked module.
    fn with_module(ctx: &Arc<CudaContext>, loaded: module::Loaded) -> Result<Self, GemmError> {
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda("the SM count"))? as u32;
        let mut capacities = Vec::with_capacity(Kernel::ALL.len());
        let mut fits = Vec::with_capacity(Kernel::ALL.len());
        for (kernel, function) in Kernel::ALL.into_iter().zip(&loaded.functions) {
            let mut fit = [0; 8];
            match function {
                Some(function) if kernel.is_cluster_k() => {
                    // A size of which none fits is never launched (a GPU that holds no cluster
                    // of 2 of them runs each tile in one CTA; a pair kernel, in one pair).
                    fit[0] = sms;
                    for size in 2..=8 {
                        fit[size as usize - 1] =
                            max_active_clusters(ctx, kernel, function, size).unwrap_or(0);
                    }
                }
                // The CTA pairs (the production pair kernel, and a step in pairs).
                Some(function) if kernel.cluster() == 2 => {
                    fit[0] = sms;
                    fit[1] = max_active_clusters(ctx, kernel, function, kernel.cluster())?;
                }
                _ => {}
            }
            capacities.push(kernel.capacity_in(sms, &fit));
            fits.push(fit);
        }
        Ok(Self {
            cache: Mutex::new(PlanCache::new(CacheLimits::default())),
            functions: loaded.functions,
            _module: loaded.module,
            sms,
            capacities,
            fits,
            programmatic: gpu_hopper_host::ProgrammaticLaunch::new(loaded.waits),
            ctx: ctx.clone(),
        })
    }

    /// Launches the kernels of [`run`](Self::run), [`run_with`](Self::run_with),
    /// [`launch`](Self::launch) and [`launch_raw`](Self::launch_raw) from now on as programmatic
    /// dependents of the kernel before them in their stream (`on`), or in plain stream order (off,
    /// the default).
    ///
    /// On, a GEMM's CTAs may start while the kernel right before it in the stream finishes, as
    /// soon as that kernel allows it (`griddepcontrol.launch_dependents`, which every production
    /// GEMM kernel executes at its start; a kernel that never does allows it when it ends): they
    /// set up their barriers and fetch their tensor maps, then each thread waits for that kernel
    /// to complete and its writes to be visible (`griddepcontrol.wait`) before it reads A, B or
    /// C, writes D or touches the workspace. So the results are those of stream order whatever
    /// the kernel before is (the module's ABI version, which `load` checks, says its entries
    /// wait); what it saves is the gap between the kernels, in a chain of GEMMs above all.
    ///
    /// Only a kernel launch right before the GEMM overlaps it. Any other operation between them
    /// (a copy, an event record or wait) orders the GEMM after it as before. `run` and `run_with`
    /// upload a plan on a shape, addresses or stream they have not seen (their cache's docs), and
    /// with cudarc's event tracking on (a context that has made a second stream) they wait on and
    /// record the buffers' events around each launch, which may serialize the kernels; a chain of
    /// prepared [`launch_raw`](Self::launch_raw)s, or of cached `run`s with tracking off, has
    /// nothing between its kernels. CUDA graphs captured from such launches keep the
    /// programmatic edges.
    ///
    /// A kernel of yours launched after a GEMM with programmatic stream serialization must still
    /// execute `griddepcontrol.wait` before it reads D ([`launch`](Self::launch)).
    ///
    /// # Errors
    ///
    /// [`GemmError::Module`] for `on` with a module whose entries do not wait (built with the
    /// kernel crate's `unwaited` feature: its ABI version says so); the setting is unchanged.
    pub fn set_programmatic_launch(&self, on: bool) -> Result<(), GemmError> {
        if self.programmatic.set(on) {
            Ok(())
        } else {
            Err(GemmError::Module(
                "this GEMM module's entries do not wait for the kernel before them (it was built with gpu-gemm's `unwaited` feature, a negative control): launching them as programmatic dependents would race that kernel; load a module built without it".to_string(),
            ))
        }
    }

    /// As [`set_programmatic_launch`](Self::set_programmatic_launch), without its refusal: a
    /// module whose entries do not wait is launched programmatically too. For a negative control
    /// that shows a test of programmatic launches fails without the wait.
    ///
    /// # Safety
    ///
    /// With `on` and such a module, a GEMM may read its inputs before the kernel before it has
    /// written them, and write D while that kernel still reads it: the caller allows such races
    /// only on buffers it owns and expects wrong results in (no other code reads them), and
    /// waits for its stream before it frees them. Two launches of one kept plan may then also
    /// share its split-K workspace at once, which can leave its counters wrong for later
    /// launches: the caller calls [`clear_cache`](Self::clear_cache) (after its stream's work)
    /// before it relies on any later result of this `Gemm`.
    pub unsafe fn set_programmatic_launch_unchecked(&self, on: bool) {
        // SAFETY: this function's contract.
        unsafe { self.programmatic.set_unchecked(on) };
    }

    /// Whether the module's entries wait for the kernel before them in the stream before they
    /// touch global memory (its ABI version says so; all but the `unwaited` negative control's),
    /// which [`set_programmatic_launch`](Self::set_programmatic_launch) needs.
    pub fn entries_wait(&self) -> bool {
        self.programmatic.entries_wait()
    }

    /// Whether launches are programmatic dependents ([`set_programmatic_launch`](Self::set_programmatic_launch)).
    pub fn programmatic_launch(&self) -> bool {
        self.programmatic.get()
    }

    /// The GPU's SM count: the persistent grid.
    pub fn sms(&self) -> u32 {
        self.sms
    }

    /// Whether the loaded module holds `kernel` (every production kernel does; the step kernels
    /// only the steps module).
    pub fn has(&self, kernel: Kernel) -> bool {
        self.functions[kernel.index()].is_some()
    }

    /// `kernel`'s entry point; an error for a step kernel the module does not hold.
    fn function(&self, kernel: Kernel) -> Result<&CudaFunction, GemmError> {
        self.functions[kernel.index()].as_ref().ok_or_else(|| {
            GemmError::Module(format!(
                "the loaded GEMM module has no {} kernel ({}): the step kernels are only in the steps module (cargo xtask build writes target/gpu/sm_90a/gpu_gemm_steps.ptx; load it with Gemm::load)",
                kernel.name(),
                kernel.entry()
            ))
        })
    }

    /// Into how many parts `kernel` splits each tile's K range for `shape` on this GPU (the
    /// plan's `KernelSpec::launch_splits` with this GPU's SMs and cluster fit).
    pub fn splits(&self, kernel: Kernel, shape: Shape) -> u32 {
        kernel
            .spec()
            .launch_splits(shape, self.sms, &self.fits[kernel.index()])
    }

    /// How many clusters of 1 to 8 CTAs of a cluster-K kernel (element `s - 1` for clusters of
    /// `s`) this GPU holds at once, as the driver says (`cuOccupancyMaxActiveClusters`), from
    /// which [`Gemm::splits`] takes its part count; for a pair kernel the SMs and the pairs
    /// (elements 0 and 1, the rest zero); zeros for the other kernels.
    pub fn cluster_fit(&self, kernel: Kernel) -> ClusterFit {
        self.fits[kernel.index()]
    }

    /// The kernel [`run`](Self::run) uses for `shape` on this GPU: [`Kernel::default_on`] with
    /// the clusters that fit here ([`Gemm::cluster_fit`]).
    pub fn default_kernel(&self, shape: Shape) -> Kernel {
        Kernel::default_on(shape, self.sms, |kernel| self.cluster_fit(kernel))
    }

    /// How many clusters of `kernel` fit at once (CTAs for the single-CTA kernels, clusters of
    /// 8 for the cluster-K kernels).
    fn capacity(&self, kernel: Kernel) -> u32 {
        self.capacities[kernel.index()]
    }

    /// How many CTA pairs of [`Kernel::Cluster`] the GPU holds at once: its grid, in pairs.
    pub fn pairs(&self) -> u32 {
        self.capacity(Kernel::Cluster)
    }

    /// Enqueues `D = alpha * A * B^T + beta * C` on `stream` with the kernel
    /// [`Gemm::default_kernel`] picks for the shape. `c` is [`Addend::None`] (or `None`: beta
    /// must be 0), a buffer (`Some(&c)`) or [`Addend::InPlace`] (C is D); C is read only when
    /// beta != 0.
    ///
    /// A, B and C are taken for reading and D for writing through cudarc's tracking, across the
    /// launch (the crate docs: streams and contexts).
    #[allow(clippy::too_many_arguments)]
    pub fn run<'a>(
        &self,
        stream: &Arc<CudaStream>,
        shape: Shape,
        alpha: f32,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        beta: f32,
        c: impl Into<Addend<'a>>,
        d: &mut CudaSlice<u16>,
    ) -> Result<(), GemmError> {
        self.run_with(
            self.default_kernel(shape),
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
    pub fn run_with<'a>(
        &self,
        kernel: Kernel,
        stream: &Arc<CudaStream>,
        shape: Shape,
        alpha: f32,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        beta: f32,
        c: impl Into<Addend<'a>>,
        d: &mut CudaSlice<u16>,
    ) -> Result<(), GemmError> {
        let c = c.into();
        // Every check that the plan's key does not imply, on every call (the cache's docs).
        let checked = self.check_operands(stream, shape, a, b, c, d)?;
        needs_c(beta, c)?;
        // The guards record the GEMM's reads and its write when they drop, after the launch.
        let tracked = Tracked::new(stream, a, b, c, d);
        let prepared = self.plan(checked, stream, kernel, shape, tracked.addresses)?;
        // SAFETY: the addresses are those of the slices, checked above for the shape and for
        // this context, borrowed (D mutably) until the guards drop after the launch; the plan
        // is this problem's (its key: kernel, shape, addresses, stream), made for this stream.
        unsafe { self.enqueue(&prepared, alpha, beta) }
    }

    /// The plan of one problem on `stream`: the kept one, or a new one, kept.
    fn plan(
        &self,
        checked: Checked,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        shape: Shape,
        addresses: Addresses,
    ) -> Result<Arc<Prepared>, GemmError> {
        let key = key(
            checked,
            kernel,
            shape,
            addresses,
            stream.cu_stream() as usize,
        );
        // The capture query binds the stream's context first (the legacy default stream's
        // answer is the thread's context's).
        let capture = capture_state(stream)?;
        if let Some(plan) = self.cache().lookup(&key, capture) {
            return Ok(plan);
        }
        // Under a capture, `encode` refuses (after the checks).
        let made = Arc::new(self.encode(stream, capture, kernel, shape, addresses)?);
        if gpu_hopper_host::is_per_thread(stream) {
            // The per-thread stream's handle names another stream on each thread: a kept plan
            // could be freed by another thread, in its own stream, while this one's launch
            // still reads it. Used once, freed after the launch on this thread's stream.
            return Ok(made);
        }
        let (plan, evicted) = self.cache().insert(key, made, evictable);
        // Freed (in their streams' order) after the cache is let go.
        drop(evicted);
        Ok(plan)
    }

    /// The plan cache, locked (a panic while it was held left it consistent: every update is
    /// one step).
    fn cache(&self) -> MutexGuard<'_, PlanCache<Key, Prepared>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets how many plans, and how many bytes of their device memory, `run` keeps (the
    /// least recently used are evicted now if they exceed it). `entries: 0` keeps none: every
    /// call prepares its problem and frees it, as before the cache.
    pub fn set_cache_limits(&self, limits: CacheLimits) {
        let evicted = self.cache().set_limits(limits, evictable);
        drop(evicted);
    }

    /// What the plan cache holds and how it was used.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache().stats()
    }

    /// Frees every plan kept for eager calls (in their streams' order, after their launches),
    /// but those whose stream is being captured now (the free would join the capture).
    /// Plans captured graphs use are kept ([`release_captured`](Self::release_captured)).
    pub fn clear_cache(&self) {
        let cleared = self.cache().clear(evictable);
        drop(cleared);
    }

    /// Frees the plans that captured calls of `run` used (the type's docs: CUDA graphs), in
    /// their streams' order.
    ///
    /// # Safety
    ///
    /// No graph that captured a `run` of this `Gemm` is launched again (their launches enqueued
    /// so far may still run: the memory is freed after them only if they were launched on the
    /// stream each plan was made for; otherwise, synchronise them first), and no capture that
    /// called `run` is in progress.
    pub unsafe fn release_captured(&self) {
        let released = self.cache().release_captured();
        drop(released);
    }

    /// Builds the tensor maps and the split-K workspace of one problem over these buffers, the
    /// part of a launch that allocates, for repeated [`launch`](Self::launch)es on `stream`.
    /// `c` as for [`run`](Self::run); [`Addend::InPlace`] prepares C = D.
    ///
    /// It does not touch the matrices: it reads their addresses (through cudarc's `device_ptr`,
    /// which in multi-stream mode makes `stream` wait for their earlier writes). The per-thread
    /// default stream is refused (a `GemmError::Shape`: it is another stream on each thread,
    /// which the stream check of `launch` could not tell apart).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare<'a>(
        &self,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        shape: Shape,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        c: impl Into<Addend<'a>>,
        d: &CudaSlice<u16>,
    ) -> Result<Prepared, GemmError> {
        let c = c.into();
        self.check_operands(stream, shape, a, b, c, d)?;
        preparable(stream.cu_stream() as usize)?;
        let addresses = Addresses {
            a: a.device_ptr(stream).0,
            b: b.device_ptr(stream).0,
            c: match c {
                Addend::None => CSource::None,
                Addend::Buffer(c) => CSource::Buffer(c.device_ptr(stream).0),
                Addend::InPlace => CSource::InPlace,
            },
            d: d.device_ptr(stream).0,
        };
        let capture = capture_state(stream)?;
        self.encode(stream, capture, kernel, shape, addresses)
    }

    /// Enqueues one launch of a prepared problem on its stream, over the buffers it was prepared
    /// for (each must be that buffer: the same address, still large enough, in this context; `c`
    /// as it was prepared): one kernel (split-K included: the CTA that finishes a tile's last
    /// split adds the splits up), no allocation, no synchronisation. A, B and C are taken for
    /// reading and D for writing through cudarc's tracking, across the launch.
    ///
    /// A prepared problem launches only on the stream it was prepared on, because its split-K
    /// workspace (partials and split counters) is reused from one launch to the next.
    ///
    /// The kernels allow programmatic dependent launches from their start
    /// (`griddepcontrol.launch_dependents`). A kernel of yours launched after this one with
    /// programmatic stream serialization must execute `griddepcontrol.wait` before it reads D;
    /// one launched without it waits as usual.
    #[allow(clippy::too_many_arguments)]
    pub fn launch<'a>(
        &self,
        stream: &CudaStream,
        prepared: &Prepared,
        alpha: f32,
        beta: f32,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        c: impl Into<Addend<'a>>,
        d: &mut CudaSlice<u16>,
    ) -> Result<(), GemmError> {
        let c = c.into();
        self.check_prepared_stream(stream, prepared)?;
        self.check_operands(stream, prepared.shape, a, b, c, d)?;
        needs_c(beta, c)?;
        if capture_state(stream)? != Capture::None {
            // A graph would hold the `Prepared`'s tensor maps and workspace, which its drop (safe)
            // frees while the graph may still be replayed.
            return Err(GemmError::Capture(
                "launch of a prepared problem on a stream being captured into a CUDA graph: the graph would keep the prepared problem's tensor maps and workspace, which dropping the Prepared frees. Capture run instead (its plans stay for the graph), or the unsafe launch_raw, keeping the Prepared alive while the graph is replayed".into(),
            ));
        }
        let tracked = Tracked::new(stream, a, b, c, d);
        let given = tracked.addresses;
        if given != prepared.addresses {
            return Err(GemmError::Shape(format!(
                "launch: the buffers are not those the problem was prepared for (prepared {:x?}, given {given:x?}): prepare it again for these",
                prepared.addresses
            )));
        }
        // SAFETY: the buffers are the prepared ones (same addresses), checked for the shape and
        // this context, and borrowed (D mutably) until the guards drop after the launch; the
        // stream is the prepared one.
        unsafe { self.enqueue(prepared, alpha, beta) }
    }

    /// As [`prepare`](Self::prepare), over raw device addresses: `c` is 0 for no C, or may be
    /// `d` (in place).
    ///
    /// # Safety
    ///
    /// `a`, `b`, `d` (and `c`, unless every launch has `beta == 0`) are device addresses in this
    /// context of row-major bf16 matrices of the shape's sizes (A: M x K, B: N x K, C and D:
    /// M x N), 16-byte aligned, alive while any launch of the result runs. `c` is 0, `d`, or a
    /// matrix that does not overlap D; A and B do not overlap D. Launches of the result go
    /// through [`launch_raw`](Self::launch_raw), whose caller orders them with every other
    /// access to the matrices (cudarc's tracking does not see them).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn prepare_raw(
        &self,
        stream: &Arc<CudaStream>,
        kernel: Kernel,
        shape: Shape,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
    ) -> Result<Prepared, GemmError> {
        self.check_stream(stream)?;
        preparable(stream.cu_stream() as usize)?;
        let Shape { m, n, k } = shape;
        let elems = |rows: u32, cols: u32| rows as usize * cols as usize;
        check_shape(shape, elems(m, k), elems(n, k), None, elems(m, n))?;
        let c = match c {
            0 => CSource::None,
            c if c == d => CSource::InPlace,
            c => CSource::Buffer(c),
        };
        let capture = capture_state(stream)?;
        self.encode(stream, capture, kernel, shape, Addresses { a, b, c, d })
    }

    /// Enqueues one launch of a prepared problem on its stream, with no check of the buffers
    /// and no tracking (cudarc's events are not recorded).
    ///
    /// # Safety
    ///
    /// The matrices at the prepared addresses are alive, of the prepared shape (as
    /// [`prepare_raw`](Self::prepare_raw) states), and no other work accesses them while the
    /// launch may run (the caller orders other streams with it); with `beta != 0`, C was
    /// prepared. `prepared` stays alive until the launch, and every replay of a CUDA graph that
    /// captured it, has completed (dropping it frees its tensor maps and workspace in the order
    /// of the stream it was prepared on only).
    pub unsafe fn launch_raw(
        &self,
        stream: &CudaStream,
        prepared: &Prepared,
        alpha: f32,
        beta: f32,
    ) -> Result<(), GemmError> {
        self.check_prepared_stream(stream, prepared)?;
        if beta != 0.0 && prepared.addresses.c == CSource::None {
            return Err(GemmError::Shape(
                "beta != 0 needs C: prepare the problem with a C address (or C = D), or launch with beta 0".into(),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        unsafe { self.enqueue(prepared, alpha, beta) }
    }

    /// `stream` belongs to the module's context.
    fn check_stream(&self, stream: &CudaStream) -> Result<(), GemmError> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(GemmError::Context(
                "the stream belongs to another CUDA context than the one the GEMM module was loaded in: load the module in that context, or use a stream of this one".into(),
            ));
        }
        Ok(())
    }

    /// `stream` is the one `prepared` was made for (the same handle in the same context).
    fn check_prepared_stream(
        &self,
        stream: &CudaStream,
        prepared: &Prepared,
    ) -> Result<(), GemmError> {
        if stream.context().cu_ctx() != prepared.stream.context().cu_ctx() {
            return Err(GemmError::Context(
                "a prepared GEMM launches on the stream it was prepared on, and this stream belongs to another CUDA context".into(),
            ));
        }
        if stream.cu_stream() != prepared.stream.cu_stream() {
            return Err(GemmError::Shape(
                "a prepared GEMM launches on the stream it was prepared on (its split-K workspace is not shared between streams)".into(),
            ));
        }
        Ok(())
    }

    /// The stream and every buffer belong to the module's context, and the buffers are large
    /// enough for `shape` ([`check_call`] of what the arguments are).
    fn check_operands(
        &self,
        stream: &CudaStream,
        shape: Shape,
        a: &CudaSlice<u16>,
        b: &CudaSlice<u16>,
        c: Addend<'_>,
        d: &CudaSlice<u16>,
    ) -> Result<Checked, GemmError> {
        let ours = |ctx: &CudaContext| ctx.cu_ctx() == self.ctx.cu_ctx();
        let c_buffer = match c {
            Addend::Buffer(c) => Some(c),
            Addend::None | Addend::InPlace => None,
        };
        let foreign = if !ours(stream.context()) {
            Some(Foreign::Stream)
        } else {
            [
                ("A", Some(a)),
                ("B", Some(b)),
                ("C", c_buffer),
                ("D", Some(d)),
            ]
            .into_iter()
            .find(|(_, buffer)| buffer.is_some_and(|x| !ours(x.context())))
            .map(|(name, _)| Foreign::Buffer(name))
        };
        let lens = Lens {
            a: a.len(),
            b: b.len(),
            c: c_buffer.map(CudaSlice::len),
            d: d.len(),
        };
        check_call(foreign, shape, lens)
    }

    /// What a plan of one problem at `addresses` is, on the host: the checks of the kernel
    /// and the shape, the tensor maps encoded (each address's alignment checked), the split
    /// count, the grid and the workspace's size. No allocation, no upload, no stream.
    fn layout(
        &self,
        kernel: Kernel,
        shape: Shape,
        addresses: Addresses,
    ) -> Result<Layout, GemmError> {
        let Shape { m, n, k } = shape;
        self.function(kernel)?;
        let capacity = self.capacity(kernel);
        let splits = self.splits(kernel, shape);
        kernel.check_launch(shape, splits, capacity)?;
        // A, B, and D and C for the TMA-store epilogue (their rows must be a multiple of 16
        // bytes: N % 8 == 0; otherwise the kernels store D from registers, read C from global
        // memory, and the last two maps stay zero; so does C's without C).
        let mut maps = [0u8; MAPS_BYTES];
        // A kernel that computes the transpose (`D^T = B A^T`) takes B as its A and A as its B.
        let ((a, rows_a), (b, rows_b)) = if kernel.spec().config.swap_ab {
            ((addresses.b, n), (addresses.a, m))
        } else {
            ((addresses.a, m), (addresses.b, n))
        };
        // A's box: below one tile of M only M's rows, rounded up to 8, in the kernels that take
        // it (`abi::a_box_rows_of`, by which the device's `mainloop::stage_tx` counts too).
        let a_box =
            gpu_gemm_plan::abi::a_box_rows_of(kernel.spec().config.swap_ab, kernel.tile_rows(), m);
        maps[..128].copy_from_slice(&tensor_map(a, k, rows_a, a_box)?);
        maps[128..256].copy_from_slice(&tensor_map(b, k, rows_b, kernel.b_box_rows())?);
        let c = addresses.c.address(addresses.d);
        // D's and C's maps serve the TMA-store epilogue only.
        if n % 8 == 0 && kernel.spec().config.tma_store {
            maps[256..384].copy_from_slice(&tensor_map(addresses.d, n, m, 64)?);
            if c != 0 {
                maps[384..].copy_from_slice(&tensor_map(c, n, m, 64)?);
            }
        }
        let bytes = kernel.workspace_bytes(shape, splits, capacity)?;
        let work_bytes = usize::try_from(bytes)
            .map_err(|_| GemmError::Shape(format!("a split-K workspace of {bytes} bytes")))?;
        // The grid of the capacity the workspace is sized for, once for every launch.
        let grid = kernel.grid(shape, splits, capacity)?;
        Ok(Layout {
            maps,
            splits,
            grid,
            work_bytes,
        })
    }

    /// The tensor maps and the workspace of one problem at `addresses`, for `stream` (whose
    /// capture state the caller queried: `capture`; refused under a capture, after the checks).
    fn encode(
        &self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        kernel: Kernel,
        shape: Shape,
        addresses: Addresses,
    ) -> Result<Prepared, GemmError> {
        // `cuTensorMapEncodeTiled` needs a current context: on a thread that has none it
        // returns CUDA_ERROR_INVALID_CONTEXT (run 96: `prepare` from a fresh thread failed so,
        // gemm-test's `prepare_on_the_default_stream_from_a_fresh_thread`). The module's.
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))?;
        let Layout {
            maps,
            splits,
            grid,
            work_bytes,
        } = self.layout(kernel, shape, addresses)?;
        if capture != Capture::None && gpu_hopper_host::is_per_thread(stream) {
            return Err(GemmError::Capture(
                "the per-thread default stream is being captured into a CUDA graph, and run keeps no plan for that stream (its handle names another stream on each thread), so a call under capture there has none: making one uploads tensor maps and allocates a split-K workspace, which a capture cannot hold. Capture on a stream of your own (ctx.new_stream()) after the same run call ran on it".into(),
            ));
        }
        if capture != Capture::None {
            return Err(GemmError::Capture(format!(
                "this problem ({} kernel, {} x {} x {}, these buffers, this stream) has no plan yet, and its stream is being captured into a CUDA graph: making one uploads tensor maps and allocates a split-K workspace, which a capture cannot hold. Make the same run call once before the capture (the capture then launches its kept plan), or Gemm::prepare it before the capture and capture the unsafe Gemm::launch_raw",
                kernel.name(),
                shape.m,
                shape.n,
                shape.k
            )));
        }
        let maps = stream
            .clone_htod(&maps)
            .map_err(cuda("uploading the tensor maps"))?;
        // Zeroed: the split counters start at zero, and each launch leaves them so.
        let work = if work_bytes == 0 {
            None
        } else {
            Some(
                stream
                    .alloc_zeros::<u8>(work_bytes)
                    .map_err(cuda("allocating the split-K workspace"))?,
            )
        };
        // The addresses, read once: every launch of the plan is on `stream`, the stream these
        // buffers were made on and are freed on (cudarc's drop), so no event orders them.
        let maps_ptr = maps.device_ptr(stream).0;
        let work_ptr = work.as_ref().map_or(0, |w| w.device_ptr(stream).0);
        Ok(Prepared {
            maps,
            maps_ptr,
            kernel,
            shape,
            addresses,
            splits,
            grid,
            work,
            work_ptr,
            stream: stream.clone(),
        })
    }

    /// Enqueues the kernel of `prepared` on its stream.
    ///
    /// # Safety
    ///
    /// The matrices at the prepared addresses are alive and of the prepared shape until the
    /// launch has run, and no other work accesses them meanwhile except as the caller orders.
    unsafe fn enqueue(&self, prepared: &Prepared, alpha: f32, beta: f32) -> Result<(), GemmError> {
        let stream = &prepared.stream;
        // The kernel's own problem: N x M for one that computes the transpose.
        let Shape { m, n, k } = prepared.kernel.spec().problem(prepared.shape);
        let mut params = Params {
            maps: prepared.maps_ptr,
            c: prepared.addresses.c.address(prepared.addresses.d),
            d: prepared.addresses.d,
            m,
            n,
            k,
            alpha,
            beta,
            splits: prepared.splits,
            work: prepared.work_ptr,
        };
        let mut args = module::pointers(&mut params);
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))?;
        let kernel = prepared.kernel;
        let grid = prepared.grid;
        let mut attributes = Attributes::new(
            kernel.launch_cluster(prepared.splits),
            self.programmatic.get(),
        );
        let config = launch_config(
            grid,
            kernel.threads(),
            kernel.smem_bytes(),
            stream.cu_stream(),
            &mut attributes,
        );
        // SAFETY: `args` points to the entries' one parameter, the `Params` block (the module's
        // entries were checked against `module::LAYOUT` at load), alive for the call;
        // the tensor maps and workspace live in `prepared`, the matrices by the caller's
        // contract; the configuration and its attributes are live locals. A programmatic
        // launch is sound because it is asked only of a module whose ABI version (checked at
        // load) says every entry waits for the stream's previous kernel before it touches global
        // memory (`set_programmatic_launch` refuses the others; the unchecked setter's caller
        // takes the race on).
        let status = unsafe {
            sys::cuLaunchKernelEx(
                &raw const config,
                self.function(kernel)?.cu_function(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(status, "launching the GEMM")
    }
}

/// The bytes of a problem's tensor maps: A, B, D and C, 128 each.
const MAPS_BYTES: usize = 512;

/// A plan's host side ([`Gemm::layout`]).
struct Layout {
    maps: [u8; MAPS_BYTES],
    splits: u32,
    grid: (u32, u32),
    work_bytes: usize,
}

/// The cache key of a problem: everything its plan is a function of (the `cache` module's
/// docs), for one `Gemm`.
fn key(_: Checked, kernel: Kernel, shape: Shape, addresses: Addresses, stream: usize) -> Key {
    let (c_kind, c) = match addresses.c {
        CSource::None => (0, 0),
        CSource::Buffer(c) => (1, c),
        CSource::InPlace => (2, 0),
    };
    Key {
        kernel: kernel.index(),
        shape: (shape.m, shape.n, shape.k),
        a: addresses.a,
        b: addresses.b,
        c_kind,
        c,
        d: addresses.d,
        stream,
    }
}

/// Whether a kept plan may be freed now: not while its stream is being captured (the free
/// would join the capture). A stream whose state cannot be read is not captured by this
/// process's calls either way.
fn evictable(plan: &Prepared) -> bool {
    gpu_hopper_host::may_free_on(&plan.stream)
}

impl cache::Plan for Prepared {
    fn bytes(&self) -> u64 {
        (self.maps.num_bytes() + self.work.as_ref().map_or(0, CudaSlice::num_bytes)) as u64
    }

    fn has_workspace(&self) -> bool {
        self.work.is_some()
    }
}

/// Which argument of a call belongs to another CUDA context than the module (the first, in
/// the order of the checks: the stream, then A, B, C, D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Foreign {
    Stream,
    Buffer(&'static str),
}

/// The lengths of a call's buffers, in bf16 elements (`c`: without a C buffer, `None`).
#[derive(Clone, Copy, Debug)]
struct Lens {
    a: usize,
    b: usize,
    c: Option<usize>,
    d: usize,
}

/// That a call's checks passed ([`check_call`]): the only way to a plan's [`Key`], so no path
/// reaches the cache without them.
#[derive(Clone, Copy, Debug)]
struct Checked(());

/// The checks of a call that do not follow from its plan's key, on every call, hit or miss:
/// the contexts (`foreign`), then the shape and the buffers' lengths ([`check_shape`]). Pure.
fn check_call(foreign: Option<Foreign>, shape: Shape, lens: Lens) -> Result<Checked, GemmError> {
    match foreign {
        Some(Foreign::Stream) => Err(GemmError::Context(
            "the stream belongs to another CUDA context than the one the GEMM module was loaded in: load the module in that context, or use a stream of this one".into(),
        )),
        Some(Foreign::Buffer(name)) => Err(GemmError::Context(format!(
            "{name} belongs to another CUDA context than the one the GEMM module was loaded in"
        ))),
        None => {
            check_shape(shape, lens.a, lens.b, lens.c, lens.d)?;
            Ok(Checked(()))
        }
    }
}

/// beta != 0 needs a C.
fn needs_c(beta: f32, c: Addend<'_>) -> Result<(), GemmError> {
    if beta != 0.0 && matches!(c, Addend::None) {
        return Err(GemmError::Shape(
            "beta != 0 needs C (a buffer, or Addend::InPlace)".into(),
        ));
    }
    Ok(())
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

/// A problem's tensor maps and split-K workspace in device memory, for
/// [`Gemm::launch`] (or [`Gemm::launch_raw`]) on the stream it was prepared on.
pub struct Prepared {
    maps: CudaSlice<u8>,
    /// `maps`' device address.
    maps_ptr: u64,
    kernel: Kernel,
    shape: Shape,
    /// The matrices the maps describe.
    addresses: Addresses,
    /// Split-K parts (1: none) and their workspace.
    splits: u32,
    /// The launch's grid in CTAs, for the clusters that fit on the GPU at once (which sized the
    /// workspace too).
    grid: (u32, u32),
    work: Option<CudaSlice<u8>>,
    /// `work`'s device address (0 without one).
    work_ptr: u64,
    /// The stream it was prepared on, the only one it launches on (held, so that its handle
    /// names this stream for as long as the problem exists).
    stream: Arc<CudaStream>,
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

    /// The launch's grid `(x, y)` in CTAs, in clusters of
    /// [`Kernel::launch_cluster`]`(self.splits())`.
    pub fn grid(&self) -> (u32, u32) {
        self.grid
    }

    /// The shape it was prepared for.
    pub fn shape(&self) -> Shape {
        self.shape
    }
}

/// bf16 bits of `x`, rounded to nearest even; a NaN gives a quiet NaN of its sign.
pub fn bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x0040;
    }
    // No overflow: only NaNs' bits reach 0xFFFF_8000.
    ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

/// The f32 value of bf16 bits.
pub fn f32_of(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}
#[cfg(test)]
mod tests {

    /// A problem is not prepared on the per-thread default stream (`CU_STREAM_PER_THREAD`, 0x2):
    /// an `Err` that says what to do; the legacy default stream (0) and others are fine.
    #[test]
    fn the_per_thread_stream_is_refused_for_prepared_problems() {
        let e = preparable(0x2).expect_err("the per-thread stream");
        assert!(matches!(e, GemmError::Shape(_)), "{e}");
        assert!(e.to_string().contains("ctx.new_stream()"), "{e}");
        preparable(0).unwrap();
        preparable(0x7f00_1234_5678).unwrap();
    }
    use super::*;

    /// The checks' token, for keys built in tests.
    const OK: Checked = Checked(());

    #[test]
    fn beta_needs_a_c_and_in_place_is_one() {
        assert!(needs_c(0.0, Addend::None).is_ok());
        assert!(needs_c(1.0, Addend::InPlace).is_ok());
        let e = needs_c(0.5, Addend::None).unwrap_err().to_string();
        assert!(e.contains("beta != 0 needs C"), "{e}");
        // `None` converts to no C, as `run(.., None, ..)` reads.
        assert!(matches!(Addend::from(None), Addend::None));
        assert!(needs_c(-1.0, Addend::from(None)).is_err());
    }

    #[test]
    fn the_launch_reads_c_where_it_was_prepared() {
        let d = 0x7000;
        assert_eq!(CSource::None.address(d), 0);
        assert_eq!(CSource::Buffer(0x5000).address(d), 0x5000);
        assert_eq!(CSource::InPlace.address(d), d);
    }

    #[test]
    fn a_gemm_may_be_shared_by_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Gemm>();
        shared::<Prepared>();
    }

    #[test]
    fn the_key_holds_every_input_of_a_plan() {
        let addresses = |c| Addresses {
            a: 0x1000,
            b: 0x2000,
            c,
            d: 0x3000,
        };
        let shape = Shape { m: 1, n: 8, k: 8 };
        let base = key(OK, Kernel::Persistent, shape, addresses(CSource::None), 7);
        assert_eq!(
            base,
            key(OK, Kernel::Persistent, shape, addresses(CSource::None), 7)
        );
        for (what, other) in [
            (
                "kernel",
                key(OK, Kernel::Cluster, shape, addresses(CSource::None), 7),
            ),
            (
                "shape",
                key(
                    OK,
                    Kernel::Persistent,
                    Shape { m: 2, ..shape },
                    addresses(CSource::None),
                    7,
                ),
            ),
            (
                "stream",
                key(OK, Kernel::Persistent, shape, addresses(CSource::None), 8),
            ),
            (
                "C in place",
                key(
                    OK,
                    Kernel::Persistent,
                    shape,
                    addresses(CSource::InPlace),
                    7,
                ),
            ),
            (
                "C a buffer",
                key(
                    OK,
                    Kernel::Persistent,
                    shape,
                    addresses(CSource::Buffer(0x5000)),
                    7,
                ),
            ),
        ] {
            assert_ne!(base, other, "{what}");
        }
        // C = D in place and C a buffer at D's address (which safe calls cannot make) are not
        // one key either.
        assert_ne!(
            key(
                OK,
                Kernel::Persistent,
                shape,
                addresses(CSource::InPlace),
                7
            ),
            key(
                OK,
                Kernel::Persistent,
                shape,
                addresses(CSource::Buffer(0x3000)),
                7
            )
        );
    }

    #[test]
    fn a_kept_plan_does_not_skip_the_checks_a_changed_argument_fails() {
        // A plan kept for these addresses; the same addresses come again with arguments that
        // must fail. The key (all a hit reads) is the same, so only the checks can refuse them,
        // and `key` takes their token: there is no lookup without them.
        let shape = Shape {
            m: 16,
            n: 4096,
            k: 4096,
        };
        let addresses = Addresses {
            a: 0x10000,
            b: 0x20000,
            c: CSource::None,
            d: 0x30000,
        };
        let lens = Lens {
            a: 16 * 4096,
            b: 4096 * 4096,
            c: None,
            d: 16 * 4096,
        };
        let kept = key(
            check_call(None, shape, lens).expect("a valid call"),
            Kernel::PersistentSlim,
            shape,
            addresses,
            7,
        );
        let mut cache = cache::PlanCache::new(CacheLimits::default());
        struct Fake;
        impl cache::Plan for Fake {
            fn bytes(&self) -> u64 {
                1
            }
            fn has_workspace(&self) -> bool {
                true
            }
        }
        cache.insert(kept, Arc::new(Fake), |_| true);
        // D freed and a shorter buffer allocated at its address.
        let e = check_call(
            None,
            shape,
            Lens {
                d: 16 * 4096 - 1,
                ..lens
            },
        )
        .unwrap_err();
        assert!(matches!(e, GemmError::Shape(_)), "{e}");
        assert!(e.to_string().contains("D"), "{e}");
        // A shorter A, B; a buffer of another context; the stream of another context.
        assert!(check_call(None, shape, Lens { a: 1, ..lens }).is_err());
        assert!(check_call(None, shape, Lens { b: 4096, ..lens }).is_err());
        let e = check_call(Some(Foreign::Buffer("B")), shape, lens).unwrap_err();
        assert!(
            matches!(e, GemmError::Context(_)) && e.to_string().contains("B belongs"),
            "{e}"
        );
        let e = check_call(Some(Foreign::Stream), shape, lens).unwrap_err();
        assert!(e.to_string().contains("the stream belongs"), "{e}");
        // beta != 0 without C, checked beside them on every call.
        assert!(needs_c(1.0, Addend::None).is_err());
        // The valid call again: the same key, a hit.
        let again = key(
            check_call(None, shape, lens).unwrap(),
            Kernel::PersistentSlim,
            shape,
            addresses,
            7,
        );
        assert_eq!(again, kept);
        assert!(cache.lookup(&again, Capture::None).is_some());
    }

    /// Every f32, NaNs of either sign among them: no overflow panic (found by a review,
    /// 2026-12-05: a negative NaN overflowed the rounding addition in a debug build), and a NaN
    /// stays a NaN.
    #[test]
    fn bf16_of_any_bits_is_defined() {
        for bits in [
            0xFFFF_FFFFu32,
            0xFFC0_0000,
            0x7FC0_0001,
            0x7F80_0001,
            0xFF80_0000,
        ] {
            let x = f32::from_bits(bits);
            let got = std::panic::catch_unwind(|| bf16(x)).expect("no panic");
            assert_eq!(f32_of(got).is_nan(), x.is_nan(), "{bits:#x} -> {got:#x}");
            assert_eq!(got >> 15, (bits >> 31) as u16, "the sign of {bits:#x}");
        }
        assert_eq!(bf16(f32::NEG_INFINITY), 0xFF80);
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
