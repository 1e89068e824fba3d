//! Host API of the `gpu-attention` kernels: attention forward on Hopper (sm_90a) through cudarc,
//! `O = softmax(scale · Q Kᵀ + mask) V` and the row log-sum-exp `LSE` (f32).
//!
//! The problem is the plan's [`Problem`] (re-exported here with its types): bf16 or f16 Q, K, V,
//! O (`u16` bits) in the `[batch, seq, heads, head_dim]` layout with strides, head dimension 64,
//! 128 or 256, any sequence lengths (tails are masked in the kernel, not padded), causal or not
//! (causal aligned to the bottom right when `seq_q != seq_k`), grouped-query and multi-query
//! heads, fixed or variable-length batches (FlashAttention's packed form, cumulative offsets).
//! Anything the kernels cannot do is an [`Error`] before any launch, never a wrong result.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gpu_attention_host::{Attention, Mask, Problem};
//!
//! let ctx = gpu_attention_host::context(0)?;
//! let stream = ctx.default_stream();
//! let attention = Attention::new(&ctx)?;
//! // 2 sequences of 1000 queries and keys, 16 heads of 128, causal.
//! let problem = Problem::contiguous(2, (1000, 1000), (16, 16), 128).with_mask(Mask::Causal);
//! let e = problem.extents();
//! let q = stream.alloc_zeros::<u16>(e.q as usize)?;
//! let k = stream.alloc_zeros::<u16>(e.k as usize)?;
//! let v = stream.alloc_zeros::<u16>(e.v as usize)?;
//! let mut o = stream.alloc_zeros::<u16>(e.o as usize)?;
//! let mut lse = stream.alloc_zeros::<f32>(e.lse as usize)?;
//! attention.run(&stream, &problem, &q, &k, &v, &mut o, &mut lse)?;
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```
//!
//! # Accuracy
//!
//! Scores and the softmax are f32 (`ex2.approx` in base 2 with the scale folded in), P is
//! rounded to the element type before `P V`, O is accumulated in f32 and rounded once.
//! `gpu_attention_plan::reference::tolerance` bounds the distance to the exact result; the
//! device tests check every element against it.
//!
//! # Streams and contexts
//!
//! [`Attention::run`] takes Q, K, V for reading and O, `LSE` for writing through cudarc's event
//! tracking, so work on other streams that uses these buffers through cudarc is ordered with it.
//! Every stream and buffer must belong to the context the module was loaded in
//! ([`Error::Context`] otherwise). [`Attention::prepare`] and [`Attention::launch_raw`] take raw
//! addresses and track nothing.
//!
//! Inputs must be finite: with a variable-length batch, a key block that runs past its sequence
//! reads the next sequence's keys (masked out, weighted by 0), so an infinity there would turn
//! into NaN.

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{
    CudaContext, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, sys,
};

mod error;
mod module;
mod order;
mod plans;

pub use cudarc::driver::DriverError;
pub use error::{Error, context};
pub use gpu_attention_plan::abi::KernelSpec;
pub use gpu_attention_plan::{
    AttentionError, Batches, Element, Extents, HEAD_DIMS, Mask, Problem, Strides, Tensor,
};
pub use gpu_hopper_host::plan_cache::{CacheLimits, CacheStats};
pub use module::{ABI_SYMBOL, ABI_VERSION};

use error::{check, check_device, cuda};
use gpu_attention_plan::abi::{self, KERNELS, MAP_BYTES, MAPS, Params, UNIT_WORDS};
use gpu_attention_plan::schedule::Units;
use gpu_hopper_host::plan_cache::{Capture, PlanCache};

/// The kernels' module as `cargo xtask build` writes it (`target/gpu/sm_90a/gpu_attention.ptx`),
/// behind two comment lines that say how it is generated; `cargo xtask codegen` writes it here
/// and CI's `cargo xtask codegen --check` fails when it differs from a fresh build.
pub const PTX: &str = include_str!("../module/gpu_attention.ptx");

/// The device addresses of a problem's tensors (for [`Attention::prepare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensors {
    pub q: u64,
    pub k: u64,
    pub v: u64,
    pub o: u64,
    pub lse: u64,
}

/// The plans `run` keeps by default: 1024, and 64 MiB of their memory (a fixed batch's plan is
/// its 384 bytes of tensor maps; a variable-length batch's adds 32 bytes per unit, about 8 MiB
/// at a million tokens of 32 heads). A serving loop whose key lengths or offsets change every
/// step misses every step, and keeps the last of those plans until they are evicted.
pub const DEFAULT_CACHE_LIMITS: CacheLimits = CacheLimits {
    entries: 1024,
    bytes: 64 << 20,
};

/// The loaded kernels.
///
/// # Plans
///
/// `run` and `run_with` keep the plan of each call (its tensor maps, a variable-length batch's
/// unit table, its parameters) in a cache keyed by everything the plan is a function of: the
/// kernel, the problem (a variable-length batch's offsets by value), the five buffers' addresses
/// and the stream (why that is enough: the `plans` module's docs). A call seen before costs a
/// lookup and a launch; the buffers' lengths and contexts are checked on every call. At most
/// [`DEFAULT_CACHE_LIMITS`] plans and bytes of their device memory are kept, the least recently
/// used evicted first (and freed in its stream's order); [`set_cache_limits`] changes the bound,
/// [`clear_cache`] frees them, [`cache_stats`] counts them. Each plan holds its stream's `Arc`
/// (an owned stream stays alive while a plan of it is kept; a borrowed one is the caller's to
/// keep alive, as cudarc's contract says). A call whose buffers change address, or whose
/// problem changes (a decoding step's longer keys, a new batch's offsets), misses, as before the
/// cache, and its plan is kept until evicted. On the per-thread default stream
/// (`CudaContext::per_thread_stream`, whose handle names another stream on each thread) no plan
/// is kept: each call makes its own and frees it after its launch, as before the cache.
///
/// # CUDA graphs
///
/// `run` can be captured into a CUDA graph once the same call has run eagerly on that stream:
/// the capture launches the kept plan. A call whose plan does not exist yet is an
/// [`Error::Capture`] (making it uploads, which a capture cannot hold), after every other check;
/// [`prepare`](Attention::prepare) on a capturing stream always is. A plan a capture used is kept
/// until [`release_captured`](Attention::release_captured), outside the limits, because the
/// graph holds its addresses (a plan has no workspace, so eager calls share it); dropping the
/// `Attention` leaks those plans and the module rather than free them, since the graph may be
/// replayed after it. A graph holds the tensors' addresses too: keep them alive while it is
/// replayed (cudarc's graphs cannot check it). With cudarc's event tracking on (a context that has made a second stream),
/// `run` on a capturing stream is an [`Error::Capture`] before it touches the buffers (their
/// tracking would wait, in the capture, on events recorded outside it): capture with tracking
/// off (`CudaContext::disable_event_tracking`), as cudarc's own capture tests do.
///
/// [`set_cache_limits`]: Attention::set_cache_limits
/// [`clear_cache`]: Attention::clear_cache
/// [`cache_stats`]: Attention::cache_stats
pub struct Attention {
    ctx: Arc<CudaContext>,
    _module: Arc<CudaModule>,
    functions: Vec<cudarc::driver::CudaFunction>,
    sms: u32,
    /// Per row of the table, how many of its clusters the GPU holds at once: the SMs for a row
    /// of one CTA per cluster; for a row of pairs the driver's count
    /// (`cuOccupancyMaxActiveClusters`), 0 where none fits or the driver could not say (the
    /// plan then takes no pairs).
    fits: Vec<u32>,
    /// Whether launches ask for programmatic stream serialization
    /// ([`Attention::set_programmatic_launch`]).
    programmatic: gpu_hopper_host::ProgrammaticLaunch,
    /// The plans `run` keeps (`plans`).
    cache: Mutex<PlanCache<plans::Key, plans::Plan>>,
}

/// A graph that captured `run` may be replayed after the `Attention` is gone (cudarc's
/// `CudaGraph::launch` is safe): the plans it used are leaked with the cache
/// (`gpu_hopper_host::plan_cache`), and the module, whose kernels its nodes launch, is leaked
/// too, unless [`release_captured`](Attention::release_captured) freed them first.
impl Drop for Attention {
    fn drop(&mut self) {
        if self.cache_stats().captured > 0 {
            std::mem::forget(self._module.clone());
        }
    }
}

/// A launch made ready by [`Attention::prepare`]: its tensor maps (and a variable-length batch's
/// unit table) in device memory, its parameters and grid.
pub struct Prepared {
    /// Keeps the maps and the table alive.
    _buffer: Option<CudaSlice<u8>>,
    params: Params,
    kernel: usize,
    grid: u32,
}

impl Prepared {
    /// Its device memory in bytes (the maps and a variable-length batch's unit table).
    fn bytes(&self) -> u64 {
        self._buffer.as_ref().map_or(0, |b| b.num_bytes() as u64)
    }

    /// The CTAs of the launch (0: nothing to compute).
    pub fn grid(&self) -> u32 {
        self.grid
    }

    /// The entry point the launch runs.
    pub fn entry(&self) -> &'static str {
        KERNELS[self.kernel].entry
    }
}

impl Attention {
    /// Loads the module embedded in this crate ([`PTX`]) into `ctx`, checked as the `module`
    /// docs say.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self, Error> {
        let name = format!(
            "embedded in gpu-attention-host {}",
            env!("CARGO_PKG_VERSION")
        );
        Self::from_bytes(ctx, PTX.as_bytes().to_vec(), &name, true)
    }

    /// Loads the module at `path` (PTX text or a cubin), checked the same way.
    pub fn load(ctx: &Arc<CudaContext>, path: &str) -> Result<Self, Error> {
        let bytes = std::fs::read(path)
            .map_err(|e| Error::Module(format!("cannot read the attention module {path}: {e}")))?;
        Self::from_bytes(ctx, bytes, path, false)
    }

    fn from_bytes(
        ctx: &Arc<CudaContext>,
        bytes: Vec<u8>,
        name: &str,
        embedded: bool,
    ) -> Result<Self, Error> {
        check_device(ctx)?;
        let loaded = module::load(ctx, bytes, name, embedded)?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda("the SM count"))? as u32;
        ctx.bind_to_thread().map_err(cuda("binding the context"))?;
        let fits = KERNELS
            .iter()
            .zip(&loaded.functions)
            .map(|(k, function)| {
                if k.cluster == 1 {
                    sms
                } else {
                    gpu_hopper_host::max_active_clusters(
                        function,
                        k.cluster,
                        k.threads(),
                        k.smem_bytes(),
                    )
                    .unwrap_or(0)
                }
            })
            .collect();
        Ok(Self {
            ctx: ctx.clone(),
            _module: loaded.module,
            functions: loaded.functions,
            sms,
            fits,
            programmatic: gpu_hopper_host::ProgrammaticLaunch::new(loaded.waits),
            cache: Mutex::new(PlanCache::new(DEFAULT_CACHE_LIMITS)),
        })
    }

    /// Launches the kernels of [`run`](Self::run), [`run_with`](Self::run_with) and
    /// [`launch_raw`](Self::launch_raw) from now on as programmatic dependents of the kernel
    /// before them in their stream (`on`), or in plain stream order (off, the default).
    ///
    /// On, an attention kernel's CTAs may start while the kernel right before it in the stream
    /// ends (the QKV projection's GEMM, whose kernels allow it at their start), set up their
    /// barriers and fetch their tensor maps, and each thread waits for that kernel's completion
    /// and memory (`griddepcontrol.wait`) before it reads Q, K, V or a variable-length batch's
    /// table, or writes O or `LSE`: results are those of stream order, whatever the kernel before
    /// is (the module's ABI version, which `load` checks, says its entries wait). The attention
    /// kernels allow their own dependents at their start too (`griddepcontrol.launch_dependents`):
    /// a kernel launched after one with programmatic stream serialization must execute
    /// `griddepcontrol.wait` before it reads O or `LSE` (gpu-gemm-host's GEMM does).
    ///
    /// Only a kernel launch right before overlaps. `run` and `run_with` upload the problem's
    /// tensor maps (a copy) before their launch on a call they have no plan for yet (the type's
    /// docs: plans), which orders that launch fully after the kernel before; with cudarc's event
    /// tracking on (a context that has made a second stream) they also wait on and record the
    /// buffers' events around each launch, which may serialize it. A `run` whose plan is kept,
    /// with tracking off, and a [`launch_raw`](Self::launch_raw) of a
    /// [`prepare`](Self::prepare)d launch, have nothing before their kernel, and overlap.
    ///
    /// # Errors
    ///
    /// [`Error::Module`] for `on` with a module whose entries do not wait (built with the kernel
    /// crate's `unwaited` feature: its ABI version says so); the setting is unchanged.
    pub fn set_programmatic_launch(&self, on: bool) -> Result<(), Error> {
        if self.programmatic.set(on) {
            Ok(())
        } else {
            Err(Error::Module(
                "this attention module's entries do not wait for the kernel before them (it was built with gpu-attention's `unwaited` feature, a negative control): launching them as programmatic dependents would race that kernel; load a module built without it".to_string(),
            ))
        }
    }

    /// As [`set_programmatic_launch`](Self::set_programmatic_launch), without its refusal: a
    /// module whose entries do not wait is launched programmatically too. For a negative control
    /// that shows a test of programmatic launches fails without the wait.
    ///
    /// # Safety
    ///
    /// With `on` and such a module, a kernel may read its inputs before the kernel before it has
    /// written them, and write O and `LSE` while that kernel still reads them: the caller allows
    /// such races only on buffers it owns and expects wrong results in (no other code reads
    /// them), and waits for its stream before it frees them.
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

    /// Whether launches are programmatic dependents
    /// ([`set_programmatic_launch`](Self::set_programmatic_launch)).
    pub fn programmatic_launch(&self) -> bool {
        self.programmatic.get()
    }

    /// Computes `problem` on `stream`: O and `LSE` from Q, K, V, each a buffer of at least the
    /// problem's [`Extents`] (elements O and `LSE` do not cover are not written), with the
    /// kernel the plan picks ([`Attention::kernel_for`]). A call seen before launches its kept
    /// plan (the type's docs: plans, CUDA graphs).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        q: &CudaSlice<u16>,
        k: &CudaSlice<u16>,
        v: &CudaSlice<u16>,
        o: &mut CudaSlice<u16>,
        lse: &mut CudaSlice<f32>,
    ) -> Result<(), Error> {
        self.run_inner(None, stream, problem, q, k, v, o, lse)
    }

    /// As [`run`](Self::run), with `kernel`: a row of the module's table for the problem's
    /// element type and head dimension ([`Attention::kernels_for`]; another is an
    /// [`Error::Kernel`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run_with(
        &self,
        kernel: KernelSpec,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        q: &CudaSlice<u16>,
        k: &CudaSlice<u16>,
        v: &CudaSlice<u16>,
        o: &mut CudaSlice<u16>,
        lse: &mut CudaSlice<f32>,
    ) -> Result<(), Error> {
        self.run_inner(Some(kernel), stream, problem, q, k, v, o, lse)
    }

    /// The kernel [`run`](Self::run) and [`prepare`](Self::prepare) launch for `problem` (the
    /// plan's `abi::kernel`, with CTA pairs allowed for a fixed batch where the GPU holds clusters
    /// of two at once), or the error of a problem [`Problem::check`] refuses (a head dimension
    /// the module has no kernel for among them).
    pub fn kernel_for(&self, problem: &Problem<'_>) -> Result<KernelSpec, Error> {
        choose_kernel(problem, &self.fits)
    }

    /// [`kernel_for`](Self::kernel_for) of a problem its caller has checked already (`run`,
    /// `prepare`), without checking it again on every call.
    fn kernel_for_checked(&self, problem: &Problem<'_>) -> Result<KernelSpec, Error> {
        choose_checked_kernel(problem, &self.fits)
    }

    /// Every kernel of the module that computes `problem` (its element type and head
    /// dimension; the CTA pairs only a fixed batch without a mask, on a GPU that holds clusters
    /// of two), for
    /// [`run_with`](Self::run_with) and [`prepare_with`](Self::prepare_with): the choice of
    /// [`kernel_for`](Self::kernel_for) among them, and the others (other key blocks, three
    /// consumer warpgroups, CTA pairs).
    pub fn kernels_for(&self, problem: &Problem<'_>) -> Vec<KernelSpec> {
        KERNELS
            .iter()
            .zip(&self.fits)
            .filter(|&(k, &fit)| {
                (k.element, k.head_dim) == (problem.element, problem.head_dim)
                    && k.takes(
                        problem.mask == Mask::Causal,
                        matches!(problem.batches, Batches::Varlen { .. }),
                    )
                    && fit > 0
            })
            .map(|(k, _)| *k)
            .collect()
    }

    /// The row of [`kernels_for`](Self::kernels_for) whose entry is
    /// `attention_fwd_<element>_<name>` (`name` as `d64_n192`, `d128_n192_c2`: the plan's
    /// `abi::by_name`), if `problem` has it: what a measurement runs instead of
    /// [`kernel_for`](Self::kernel_for)'s choice.
    pub fn kernel_named(&self, problem: &Problem<'_>, name: &str) -> Option<KernelSpec> {
        let named = abi::by_name(problem.element, name)?;
        self.kernels_for(problem).contains(&named).then_some(named)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_inner(
        &self,
        kernel: Option<KernelSpec>,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        q: &CudaSlice<u16>,
        k: &CudaSlice<u16>,
        v: &CudaSlice<u16>,
        o: &mut CudaSlice<u16>,
        lse: &mut CudaSlice<f32>,
    ) -> Result<(), Error> {
        problem.check()?;
        self.same_context(stream.context(), "the stream")?;
        let capture = capture_state(stream)?;
        if capture != Capture::None && stream.context().is_managing_stream_synchronization() {
            // cudarc's tracking of the buffers would wait, inside the capture, on events
            // recorded outside it; refused before it enqueues anything.
            return Err(Error::Capture(
                "the stream is being captured into a CUDA graph with cudarc's event tracking on (a context that has made a second stream): the tracking of Q, K, V, O and LSE would wait on events recorded outside the capture. Turn tracking off for the capture (CudaContext::disable_event_tracking), or prepare the problem before the capture and capture launch_raw".into(),
            ));
        }
        let extents = problem.extents();
        for (tensor, given, needed, ctx) in [
            (Tensor::Q, q.len(), extents.q, q.stream().context()),
            (Tensor::K, k.len(), extents.k, k.stream().context()),
            (Tensor::V, v.len(), extents.v, v.stream().context()),
            (Tensor::O, o.len(), extents.o, o.stream().context()),
        ] {
            self.same_context(ctx, tensor.name())?;
            if (given as u64) < needed {
                return Err(AttentionError::Buffer {
                    tensor,
                    needed,
                    given: given as u64,
                }
                .into());
            }
        }
        self.same_context(lse.stream().context(), "LSE")?;
        if (lse.len() as u64) < extents.lse {
            return Err(Error::Buffer(format!(
                "LSE holds {} f32 values; the problem writes {} ([batch, heads_q, seq_q], or [heads_q, tokens] for a variable-length batch): allocate at least that many",
                lse.len(),
                extents.lse
            )));
        }
        let (q_ptr, _q) = q.device_ptr(stream);
        let (k_ptr, _k) = k.device_ptr(stream);
        let (v_ptr, _v) = v.device_ptr(stream);
        let (o_ptr, _o) = o.device_ptr_mut(stream);
        let (lse_ptr, _lse) = lse.device_ptr_mut(stream);
        let tensors = Tensors {
            q: q_ptr,
            k: k_ptr,
            v: v_ptr,
            o: o_ptr,
            lse: lse_ptr,
        };
        let spec = match kernel {
            Some(k) => k,
            None => self.kernel_for_checked(problem)?,
        };
        let key = plans::Key::new(
            row(spec, problem)?,
            problem,
            tensors,
            stream.cu_stream() as usize,
        );
        let found = self.cache().lookup(&key, capture);
        let plan = match found {
            Some(plan) => plan,
            None if capture != Capture::None => {
                return Err(Error::Capture(if gpu_hopper_host::is_per_thread(stream) {
                    "the per-thread default stream is being captured into a CUDA graph, and run keeps no plan for that stream (its handle names another stream on each thread), so a run under capture there has none: making one uploads the problem's tensor maps, which a capture cannot hold. Capture on a stream of your own (ctx.new_stream()) after the same run call ran on it, or prepare the problem before the capture and capture launch_raw".into()
                } else {
                    "the stream is being captured into a CUDA graph, and this call (this problem, these buffers, this stream) has no plan yet: making one uploads the problem's tensor maps, which a capture cannot hold. Make the same run call once before the capture (the capture then launches its kept plan), or prepare the problem before the capture and capture launch_raw".into()
                }));
            }
            None => {
                // Checked above: the problem and the stream's context.
                let prepared = self.prepare_checked(stream, problem, tensors, Some(spec))?;
                let made = Arc::new(plans::Plan {
                    prepared,
                    stream: stream.clone(),
                });
                if gpu_hopper_host::is_per_thread(stream) {
                    // The per-thread stream's handle names another stream on each thread: a
                    // kept plan could be freed by another thread, in its own stream, while this
                    // one's launch still reads it. Used once, freed after the launch here.
                    made
                } else {
                    let (plan, evicted) = self.cache().insert(key, made, evictable);
                    // Freed (in their streams' order) after the cache is let go.
                    drop(evicted);
                    plan
                }
            }
        };
        // SAFETY: the tensors are alive (borrowed) and ordered on `stream` by the guards; the
        // plan is this problem's over these addresses (its key), its memory kept by the cache
        // (or, not kept, by `plan` until after the launch is enqueued, then freed on its stream
        // after the launch: cudarc frees stream-ordered).
        unsafe { self.launch_raw(&plan.prepared, stream.cu_stream()) }
    }

    /// The plan cache, locked (a panic while it was held left it consistent: every update is
    /// one step).
    fn cache(&self) -> MutexGuard<'_, PlanCache<plans::Key, plans::Plan>> {
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
    /// No graph that captured a `run` of this `Attention` is launched again (their launches
    /// enqueued so far may still run: the memory is freed after them only if they were
    /// launched on the stream each plan was made for; otherwise, synchronise them first), and
    /// no capture that called `run` is in progress.
    pub unsafe fn release_captured(&self) {
        let released = self.cache().release_captured();
        drop(released);
    }

    /// Encodes the tensor maps of `problem` over `tensors`, builds a variable-length batch's
    /// unit table, and uploads both on `stream` (the upload is ordered before work later
    /// enqueued on `stream`; launching on another stream needs `stream` synchronized first).
    /// The problem is checked, and the addresses' alignment (16 bytes for Q, K, V and O, 4 for
    /// `LSE`: an `Error::Buffer` otherwise); the buffers' sizes are the caller's (at least
    /// [`Problem::extents`]).
    pub fn prepare(
        &self,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        tensors: Tensors,
    ) -> Result<Prepared, Error> {
        problem.check()?;
        self.same_context(stream.context(), "the stream")?;
        self.refuse_capture(stream)?;
        self.prepare_checked(stream, problem, tensors, None)
    }

    /// As [`prepare`](Self::prepare), with `kernel` (as [`run_with`](Self::run_with)).
    pub fn prepare_with(
        &self,
        kernel: KernelSpec,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        tensors: Tensors,
    ) -> Result<Prepared, Error> {
        problem.check()?;
        self.same_context(stream.context(), "the stream")?;
        self.refuse_capture(stream)?;
        self.prepare_checked(stream, problem, tensors, Some(kernel))
    }

    /// [`prepare`](Self::prepare) of a problem already checked, on a stream of this context,
    /// with `kernel` (a row of the table) or the plan's choice.
    fn prepare_checked(
        &self,
        stream: &Arc<CudaStream>,
        problem: &Problem<'_>,
        tensors: Tensors,
        kernel: Option<KernelSpec>,
    ) -> Result<Prepared, Error> {
        let spec = match kernel {
            Some(k) => k,
            None => self.kernel_for_checked(problem)?,
        };
        let spec_at = row(spec, problem)?;
        check_addresses(tensors)?;
        // A unit: one CTA's rows, or a pair's (each CTA half of them).
        let unit_rows = spec.unit_rows();
        let units = Units::new(problem, unit_rows);
        let count = units.count();
        let count32 = u32::try_from(count).map_err(|_| {
            Error::Buffer(format!(
                "the problem has {count} blocks of {unit_rows} queries, above 2^32: split the batch"
            ))
        })?;
        let (fixed, batch, seq_q, seq_k) = match problem.batches {
            Batches::Fixed {
                batch,
                seq_q,
                seq_k,
            } => (true, batch, seq_q, seq_k),
            Batches::Varlen { .. } => (false, problem.batches.count(), 0, 0),
        };
        let mut params = Params {
            maps: 0,
            o: tensors.o,
            lse: tensors.lse,
            o_strides: [problem.o.batch, problem.o.seq, problem.o.head],
            batch,
            seq_q,
            seq_k,
            heads_q: problem.heads_q,
            group: problem.group(),
            scale_log2: problem.scale() * std::f32::consts::LOG2_E,
            causal: u32::from(problem.mask == Mask::Causal),
            varlen: u32::from(!fixed),
            tokens_q: if fixed {
                0
            } else {
                problem.batches.tokens_q() as u32
            },
            units: count32,
        };
        if count == 0 {
            return Ok(Prepared {
                _buffer: None,
                params,
                kernel: spec_at,
                grid: 0,
            });
        }
        // `cuTensorMapEncodeTiled` needs a current context (CUDA_ERROR_INVALID_CONTEXT on a
        // thread with none: run 96, the GEMM's prepare from a fresh thread). The module's.
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))?;
        let mut bytes = Vec::with_capacity((MAPS * MAP_BYTES) as usize);
        for (tensor, address) in [
            (Tensor::Q, tensors.q),
            (Tensor::K, tensors.k),
            (Tensor::V, tensors.v),
        ] {
            bytes.extend_from_slice(&tensor_map(problem, spec, tensor, address)?);
        }
        // The persistent grid: as many clusters as fit on the GPU at once (a CTA per SM; in
        // pairs fewer where some GPCs have an odd number of SMs), at most one per unit.
        let fit = self.fits[spec_at];
        if fit == 0 {
            return Err(Error::Kernel(format!(
                "no cluster of {} CTAs of {} fits on this GPU: use a kernel of one CTA per cluster (Attention::kernels_for)",
                spec.cluster, spec.entry
            )));
        }
        let grid = count32.min(fit) * spec.cluster;
        if !fixed {
            // The most key blocks first, across the sequences (`order`).
            for unit in order::table_order(problem, spec, u64::from(grid / spec.cluster)) {
                for word in abi::unit_record(problem, unit) {
                    bytes.extend_from_slice(&word.to_le_bytes());
                }
            }
            debug_assert_eq!(
                bytes.len(),
                (MAPS * MAP_BYTES) as usize + count as usize * UNIT_WORDS * 4
            );
        }
        let buffer = stream
            .clone_htod(&bytes)
            .map_err(cuda("uploading the tensor maps"))?;
        let (address, _guard) = buffer.device_ptr(stream);
        params.maps = address;
        drop(_guard);
        Ok(Prepared {
            _buffer: Some(buffer),
            params,
            kernel: spec_at,
            grid,
        })
    }

    /// Launches `prepared` on `stream`.
    ///
    /// # Safety
    ///
    /// - `prepared` was made by [`prepare`](Self::prepare) (or `prepare_with`) of this
    ///   `Attention`, and stays alive until the launch (and every replay of a CUDA graph that
    ///   captured it) has completed: dropping it frees its tensor maps in the order of the stream
    ///   it was prepared on, which does not wait for a launch on another stream;
    /// - the upload of `prepare` is complete or ordered before `stream`'s launch, and `stream`
    ///   belongs to this module's context;
    /// - the tensors `prepared` was made for are alive, hold the problem's extents, and no other
    ///   work accesses them while the launch runs except as the caller orders;
    /// - O and `LSE` overlap neither each other nor Q, K or V (the kernels read Q, K and V while
    ///   they write O and `LSE`). The addresses' alignment is `prepare`'s check.
    pub unsafe fn launch_raw(
        &self,
        prepared: &Prepared,
        stream: sys::CUstream,
    ) -> Result<(), Error> {
        if prepared.grid == 0 {
            return Ok(());
        }
        let spec = KERNELS[prepared.kernel];
        let mut params = prepared.params;
        let mut args = [(&raw mut params).cast::<std::ffi::c_void>()];
        self.ctx
            .bind_to_thread()
            .map_err(cuda("binding the context"))?;
        // Programmatic serialization only when asked; a cluster dimension for the pairs only.
        let mut attributes =
            gpu_hopper_host::LaunchAttributes::new(spec.cluster, self.programmatic.get());
        let config = gpu_hopper_host::launch_config(
            (prepared.grid, 1),
            spec.threads(),
            spec.smem_bytes(),
            stream,
            &mut attributes,
        );
        // SAFETY: `args` points to the entries' one parameter, the `Params` block (checked
        // against the module at load), alive for the call; the maps live in `prepared`; the
        // tensors by the caller's contract; the configuration and its attribute are live
        // locals. A programmatic launch is sound because every entry of the module (its ABI
        // version, checked at load) waits for the stream's previous kernel before it touches
        // global memory.
        let status = unsafe {
            sys::cuLaunchKernelEx(
                &raw const config,
                self.functions[prepared.kernel].cu_function(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(status, "launching the attention kernel")
    }

    /// An [`Error::Capture`] when `stream` is being captured into a CUDA graph (or a capture on
    /// it failed and is still open): the upload of a preparation would break the capture
    /// (gpu-hopper-host's `capture_id`, which enqueues nothing). `prepare`'s; `run` refuses only
    /// a call it has no plan for.
    fn refuse_capture(&self, stream: &CudaStream) -> Result<(), Error> {
        // The query binds the stream's context first (the legacy default stream's answer is
        // the thread's context's).
        match capture_state(stream)? {
            Capture::None => Ok(()),
            Capture::Active(_) => Err(Error::Capture(
                "the stream is being captured into a CUDA graph, and prepare uploads the problem's tensor maps, which a capture cannot hold: prepare the problem before the capture (Attention::prepare, on this stream or synchronized), then capture launch_raw".into(),
            )),
        }
    }

    /// The SMs of the GPU (the persistent grid's most CTAs).
    pub fn sms(&self) -> u32 {
        self.sms
    }

    fn same_context(&self, ctx: &Arc<CudaContext>, what: &str) -> Result<(), Error> {
        // The CUDA context itself, not cudarc's handle: `CudaContext::new` (and `context`) makes
        // a new handle of the device's one primary context on every call.
        if ctx.cu_ctx() == self.ctx.cu_ctx() {
            Ok(())
        } else {
            Err(Error::Context(format!(
                "{what} belongs to another CUDA context than the attention module: load the module (Attention::new) in the context of the streams and buffers"
            )))
        }
    }
}

/// The 4D tensor map of `tensor` (Q, K or V) of `problem` at `address`: `[head_dim, heads, rows,
/// sequences]` innermost first, boxes of 64 elements x 1 head x the kernel's rows x 1 sequence,
/// 128-byte swizzle, zeros outside. A dimension of one element gets a stride it never steps
/// (the driver still checks it).
fn tensor_map(
    problem: &Problem<'_>,
    spec: KernelSpec,
    tensor: Tensor,
    address: u64,
) -> Result<[u8; 128], Error> {
    use gpu_hopper_host::{ElementType, L2Promotion, OobFill, Swizzle, TensorMapError, Tiled};
    let (strides, heads) = match tensor {
        Tensor::Q => (problem.q, problem.heads_q),
        Tensor::K => (problem.k, problem.heads_kv),
        _ => (problem.v, problem.heads_kv),
    };
    let (rows, sequences) = match problem.batches {
        Batches::Fixed {
            batch,
            seq_q,
            seq_k,
        } => (if tensor == Tensor::Q { seq_q } else { seq_k }, batch),
        Batches::Varlen { .. } => {
            let tokens = if tensor == Tensor::Q {
                problem.batches.tokens_q()
            } else {
                problem.batches.tokens_k()
            };
            (tokens as u32, 1)
        }
    };
    let rows = rows.max(1);
    let d = u64::from(problem.head_dim);
    // Bytes; a dimension of one element takes the span of the ones inside it.
    let head = if heads > 1 { strides.head * 2 } else { d * 2 };
    let seq = if rows > 1 {
        strides.seq * 2
    } else {
        head * u64::from(heads)
    };
    let batch = if sequences > 1 {
        strides.batch * 2
    } else {
        seq * u64::from(rows)
    };
    let box_rows = if tensor == Tensor::Q {
        spec.q_rows()
    } else {
        // A pair's CTAs each load half of a block and multicast it.
        spec.kv_box_rows()
    };
    let map = Tiled {
        element: match problem.element {
            Element::Bf16 => ElementType::Bf16,
            Element::F16 => ElementType::F16,
        },
        address,
        dims: &[d, u64::from(heads), u64::from(rows), u64::from(sequences)],
        strides: &[head, seq, batch],
        box_dims: &[64, 1, box_rows, 1],
        element_strides: &[1, 1, 1, 1],
        swizzle: Swizzle::B128,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    };
    match map.encode() {
        Ok(map) => Ok(*map.as_bytes()),
        Err(e @ TensorMapError::Driver { .. }) => {
            Err(Error::Cuda(format!("{}'s tensor map: {e}", tensor.name())))
        }
        Err(e) => Err(Error::Buffer(format!(
            "{}'s tensor map: {e}",
            tensor.name()
        ))),
    }
}

/// The position of `spec` in the table, if it is a row that computes `problem` (its element type
/// and head dimension); otherwise the [`Error::Kernel`] that says so.
/// The alignment `prepare` requires of the raw addresses: 16 bytes for Q, K and V (the tensor
/// maps' global address: `cuTensorMapEncodeTiled`) and for O (the kernels' stores of O), 4 for
/// `LSE` (f32).
fn check_addresses(tensors: Tensors) -> Result<(), Error> {
    for (name, address, align) in [
        ("Q", tensors.q, 16),
        ("K", tensors.k, 16),
        ("V", tensors.v, 16),
        ("O", tensors.o, 16),
        ("LSE", tensors.lse, 4),
    ] {
        if !address.is_multiple_of(align) {
            return Err(Error::Buffer(format!(
                "{name}'s address 0x{address:x} is not a multiple of {align} bytes: pass the start of an allocation (cudaMalloc's are 256-byte aligned) or an offset that keeps the alignment"
            )));
        }
    }
    Ok(())
}

/// [`Attention::kernel_for`] on a module whose rows fit `fits` CTAs (clusters) at once each, in
/// [`KERNELS`]' order.
fn choose_kernel(problem: &Problem<'_>, fits: &[u32]) -> Result<KernelSpec, Error> {
    // The key lengths below come from the offsets, which only a checked problem makes sense of.
    problem.check()?;
    choose_checked_kernel(problem, fits)
}

/// [`choose_kernel`] of a problem [`Problem::check`] accepted.
fn choose_checked_kernel(problem: &Problem<'_>, fits: &[u32]) -> Result<KernelSpec, Error> {
    let choose = |pairs| {
        abi::kernel(
            problem.element,
            problem.head_dim,
            problem.batches.max_keys(),
            problem.mask == Mask::Causal,
            pairs,
        )
        .ok_or_else(|| Error::from(AttentionError::HeadDim(problem.head_dim)))
    };
    // CTA pairs for a fixed batch, where the GPU holds clusters of two.
    let fixed = matches!(problem.batches, Batches::Fixed { .. });
    let k = choose(fixed)?;
    if k.cluster > 1 && fits[row(k, problem)?] == 0 {
        return choose(false);
    }
    Ok(k)
}

fn row(spec: KernelSpec, problem: &Problem<'_>) -> Result<usize, Error> {
    let at = KERNELS.iter().position(|k| *k == spec).ok_or_else(|| {
        Error::Kernel(format!(
            "{} is not a kernel of this module's table",
            spec.entry
        ))
    })?;
    if (spec.element, spec.head_dim) != (problem.element, problem.head_dim) {
        return Err(Error::Kernel(format!(
            "{} computes {:?} at head dim {}, the problem is {:?} at head dim {}: pick a kernel of the problem's (Attention::kernels_for)",
            spec.entry, spec.element, spec.head_dim, problem.element, problem.head_dim
        )));
    }
    let varlen = matches!(problem.batches, Batches::Varlen { .. });
    if !spec.takes(problem.mask == Mask::Causal, varlen) {
        return Err(Error::Kernel(format!(
            "{} runs in CTA pairs that share each key block, so it computes only a fixed batch without a mask, and the problem is {}: pick another of the problem's kernels (Attention::kernels_for)",
            spec.entry,
            if varlen {
                "a variable-length batch"
            } else {
                "causal"
            }
        )));
    }
    Ok(at)
}

/// Whether `stream` is being captured, and in which sequence (gpu-hopper-host's
/// `capture_state`).
fn capture_state(stream: &CudaStream) -> Result<Capture, Error> {
    gpu_hopper_host::capture_state(stream)
        .map_err(|e| Error::Cuda(format!("cuStreamGetCaptureInfo: {:?}", e.0)))
}

/// Whether a kept plan may be freed now (gpu-hopper-host's `may_free_on`: not while its stream
/// is being captured).
fn evictable(plan: &plans::Plan) -> bool {
    gpu_hopper_host::may_free_on(&plan.stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kernel_for` of a problem that `check` refuses: an `Err`, never a panic (found by a
    /// review, 2026-12-05: offsets of K shorter than Q's indexed past their end in `max_keys`,
    /// and decreasing ones overflowed).
    #[test]
    fn the_kernel_of_a_bad_problem_is_an_error() {
        let fits = vec![1u32; KERNELS.len()];
        for (q, k) in [
            (&[0u32, 1, 2][..], &[0u32, 1][..]),
            (&[0, 4, 8], &[0, 4, 2]),
            (&[0], &[0]),
        ] {
            let p = Problem::varlen(q, k, (2, 2), 64);
            let got = std::panic::catch_unwind(|| choose_kernel(&p, &fits));
            match got {
                Ok(Err(Error::Problem(_))) => {}
                Ok(other) => panic!("{q:?} / {k:?}: {other:?}"),
                Err(_) => panic!("{q:?} / {k:?}: panicked"),
            }
        }
        let good = Problem::varlen(&[0, 4, 8], &[0, 4, 9], (2, 2), 64);
        assert!(choose_kernel(&good, &fits).is_ok());
    }

    /// `prepare`'s raw addresses: Q, K, V and O at multiples of 16 bytes (the tensor copies'
    /// rule; O's for 16-byte stores), LSE of 4; anything else is an `Error::Buffer` that names
    /// the tensor (found by the review of 2026-12-05: an O two bytes off faulted in the kernel).
    #[test]
    fn misaligned_raw_addresses_are_errors() {
        let good = Tensors {
            q: 1 << 20,
            k: 2 << 20,
            v: 3 << 20,
            o: 4 << 20,
            lse: 5 << 20,
        };
        check_addresses(good).unwrap();
        check_addresses(Tensors {
            lse: good.lse + 4,
            ..good
        })
        .unwrap();
        for (name, bad) in [
            (
                "Q",
                Tensors {
                    q: good.q + 8,
                    ..good
                },
            ),
            (
                "K",
                Tensors {
                    k: good.k + 2,
                    ..good
                },
            ),
            (
                "V",
                Tensors {
                    v: good.v + 4,
                    ..good
                },
            ),
            (
                "O",
                Tensors {
                    o: good.o + 2,
                    ..good
                },
            ),
            (
                "O",
                Tensors {
                    o: good.o + 4,
                    ..good
                },
            ),
            (
                "LSE",
                Tensors {
                    lse: good.lse + 2,
                    ..good
                },
            ),
        ] {
            let e = check_addresses(bad).expect_err(name);
            assert!(
                matches!(e, Error::Buffer(_))
                    && e.to_string().contains(&format!("{name}'s address")),
                "{e}"
            );
        }
    }
}
