//! The `Gemm` trait every implementation plugs into, and the cuBLAS baselines:
//! `cublasGemmEx`, cuBLASLt's first heuristic choice, and the fastest of its heuristic candidates.
//!
//! Every baseline is held to the problem's contract: bf16 A, B, C, D, **f32 accumulation
//! throughout**, f32 scalars. cuBLAS may otherwise split K and add the partial sums in bf16
//! (`cublasGemmEx` without `CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION`; cuBLASLt's
//! `INPLACE` and `OUTPUT_TYPE` reduction schemes): that is PyTorch's
//! `allow_bf16_reduced_precision_reduction = True`, a different problem, and the error bound of
//! `check::bound` would not hold. With the restriction, cuBLASLt may still split K with f32
//! partial sums in its workspace (`COMPUTE_TYPE`).

use std::ffi::c_void;

use cudarc::cublas::CudaBlas;
use cudarc::cublas::sys as blas;
use cudarc::cublaslt::sys as lt;
use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUdeviceptr;

use crate::cuda::{Device, Step, Timer, Workspace};
use crate::problem::{Buffer, ColumnMajor, Op, Problem, column_major};

/// The device addresses of the problem's matrices, all bf16, row-major, densely packed
/// (A: M x K, B: N x K, C and D: M x N). C and D never alias. When `beta` is 0, C holds NaNs:
/// an implementation must not read it.
#[derive(Clone, Copy, Debug)]
pub struct Operands {
    /// A.
    pub a: CUdeviceptr,
    /// B.
    pub b: CUdeviceptr,
    /// C.
    pub c: CUdeviceptr,
    /// D: this implementation's own output buffer.
    pub d: CUdeviceptr,
}

impl Operands {
    fn buffer(&self, which: Buffer) -> CUdeviceptr {
        match which {
            Buffer::A => self.a,
            Buffer::B => self.b,
        }
    }
}

/// One implementation of `D = alpha * A * B^T + beta * C` (bf16 in and out, f32 accumulation).
///
/// The benchmark calls `prepare` once per problem (before any run that is timed or checked),
/// then `run` many times, alternating with the other implementations on the same stream.
pub trait Gemm {
    /// The name in the report and the CSV (no commas).
    fn name(&self) -> String;

    /// Gets ready for `problem` (choose an algorithm, build descriptors, autotune); may run the
    /// GEMM on `operands` (D is filled with NaN again afterwards). `timer` times candidates the
    /// way the benchmark times implementations.
    fn prepare(
        &mut self,
        timer: &mut Timer,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let _ = (timer, problem, operands);
        Ok(())
    }

    /// Enqueues one GEMM on `stream` and returns without waiting for it (no synchronisation, no
    /// allocation: a timed round is enqueued while the GPU is held back).
    fn run(
        &mut self,
        stream: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String>;

    /// Enqueues work that must precede each run but is not part of it; the timer enqueues it
    /// before the run's start event. `cublasGemmEx` computes in place (C = D), so with beta not 0
    /// it copies C into D here; an implementation that reads C and writes D needs nothing.
    fn before_run(
        &mut self,
        stream: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let _ = (stream, problem, operands);
        Ok(())
    }

    /// What `prepare` chose for the current problem (an algorithm, a tile), for the report.
    fn choice(&self) -> Option<String> {
        None
    }

    /// The kernel of the module under test that `prepare` chose for the current problem (its
    /// name): the host API's default's pick, for the targets' accounting ([`crate::targets`]).
    fn chosen_kernel(&self) -> Option<String> {
        None
    }
}

fn blas_op(op: Op) -> blas::cublasOperation_t {
    match op {
        Op::N => blas::cublasOperation_t::CUBLAS_OP_N,
        Op::T => blas::cublasOperation_t::CUBLAS_OP_T,
    }
}

fn int(x: usize, what: &str) -> Result<i32, String> {
    i32::try_from(x).map_err(|_| format!("{what} = {x} exceeds cuBLAS's 32-bit interface"))
}

/// `cublasGemmEx` with the default algorithm (`CUBLAS_GEMM_DEFAULT`): what a plain cuBLAS call
/// gets. The reference for the random-data check of every other implementation.
pub struct CublasGemmEx {
    handle: CudaBlas,
}

impl CublasGemmEx {
    /// A handle on the device's stream.
    pub fn new(device: &Device) -> Result<Self, String> {
        let handle =
            CudaBlas::new(device.stream.clone()).map_err(|e| format!("cublasCreate: {e}"))?;
        // f32 accumulation throughout: no split-K reduction in bf16 (see the module docs).
        // SAFETY: a live handle; the mode is a valid `cublasMath_t`.
        unsafe {
            blas::cublasSetMathMode(
                *handle.handle(),
                blas::cublasMath_t::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
            )
        }
        .result()
        .map_err(|e| format!("cublasSetMathMode: {e}"))?;
        Ok(Self { handle })
    }
}

impl Gemm for CublasGemmEx {
    fn name(&self) -> String {
        "cublasGemmEx".into()
    }

    fn run(
        &mut self,
        _: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let cm: ColumnMajor = column_major(problem.shape);
        let (alpha, beta) = (problem.alpha, problem.beta);
        let bf16 = blas::cudaDataType::CUDA_R_16BF;
        // SAFETY: the operands are device buffers of the problem's sizes (the `Operands`
        // contract), the arguments those of `column_major` (leading dimensions fit the stored
        // shapes); the scalars are read on the host during the call (host pointer mode).
        unsafe {
            blas::cublasGemmEx(
                *self.handle.handle(),
                blas_op(cm.transa),
                blas_op(cm.transb),
                int(cm.m, "N")?,
                int(cm.n, "M")?,
                int(cm.k, "K")?,
                (&raw const alpha).cast(),
                operands.buffer(cm.a) as *const c_void,
                bf16,
                int(cm.lda, "lda")?,
                operands.buffer(cm.b) as *const c_void,
                bf16,
                int(cm.ldb, "ldb")?,
                (&raw const beta).cast(),
                operands.d as *mut c_void,
                bf16,
                int(cm.ldc, "ldc")?,
                blas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )
        }
        .result()
        .map_err(|e| format!("cublasGemmEx: {e}"))
    }

    fn before_run(
        &mut self,
        stream: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        if problem.beta == 0.0 {
            return Ok(());
        }
        let (_, _, elems) = problem.shape.elems();
        crate::cuda::check(
            // SAFETY: C and D are distinct device buffers of M x N bf16 (the `Operands` contract).
            unsafe {
                cudarc::driver::sys::cuMemcpyDtoDAsync_v2(
                    operands.d,
                    operands.c,
                    elems * 2,
                    stream.cu_stream(),
                )
            },
            "copy C into D (cublasGemmEx computes in place)",
        )
    }
}

/// The cuBLASLt workspace for every cuBLASLt baseline: 64 MiB (what frameworks give it; the
/// heuristics return no candidate that needs more).
pub const LT_WORKSPACE_BYTES: usize = 64 << 20;

/// How the cuBLASLt baselines choose their algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtChoice {
    /// The first result of `cublasLtMatmulAlgoGetHeuristic`: what a framework gets.
    Heuristic,
    /// The fastest of up to `candidates` heuristic results, each timed (median of `reps`
    /// alternating runs) on the problem itself: autotuned cuBLAS.
    Autotuned {
        /// Results requested from the heuristic.
        candidates: usize,
        /// Timed runs of each candidate.
        reps: usize,
    },
}

/// The descriptors of one problem: the matmul (compute and scale f32, the transposes) and the
/// four layouts (bf16, column-major, from [`column_major`]).
struct LtPlan {
    problem: Problem,
    desc: lt::cublasLtMatmulDesc_t,
    layouts: [lt::cublasLtMatrixLayout_t; 4],
    algo: lt::cublasLtMatmulAlgo_t,
    choice: String,
}

impl Drop for LtPlan {
    fn drop(&mut self) {
        // SAFETY: created by `LtPlan::new` and destroyed only here.
        unsafe {
            let _ = lt::cublasLtMatmulDescDestroy(self.desc);
            for layout in self.layouts.into_iter().filter(|l| !l.is_null()) {
                let _ = lt::cublasLtMatrixLayoutDestroy(layout);
            }
        }
    }
}

fn lt_check(status: lt::cublasStatus_t, what: &str) -> Result<(), String> {
    status.result().map_err(|e| format!("{what}: {e}"))
}

impl LtPlan {
    fn new(problem: &Problem) -> Result<Self, String> {
        let cm = column_major(problem.shape);
        let mut desc = std::ptr::null_mut();
        lt_check(
            // SAFETY: writes one descriptor, destroyed by `Drop` (built below, so it owns it before
            // anything else can fail).
            unsafe {
                lt::cublasLtMatmulDescCreate(
                    &mut desc,
                    lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    lt::cudaDataType::CUDA_R_32F,
                )
            },
            "cublasLtMatmulDescCreate",
        )?;
        let mut plan = Self {
            problem: *problem,
            desc,
            layouts: [std::ptr::null_mut(); 4],
            algo: lt::cublasLtMatmulAlgo_t { data: [0; 8] },
            choice: String::new(),
        };
        for (attr, op) in [
            (
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                cm.transa,
            ),
            (
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                cm.transb,
            ),
        ] {
            // The attribute is a `cublasOperation_t` (int32).
            let value = blas_op(op) as i32;
            lt_check(
                // SAFETY: a live descriptor; the buffer is the attribute's 4 bytes.
                unsafe {
                    lt::cublasLtMatmulDescSetAttribute(
                        plan.desc,
                        attr,
                        (&raw const value).cast(),
                        std::mem::size_of::<i32>(),
                    )
                },
                "cublasLtMatmulDescSetAttribute (transpose)",
            )?;
        }
        let stored = [cm.a_stored(), cm.b_stored(), cm.c_stored(), cm.c_stored()];
        let lds = [cm.lda, cm.ldb, cm.ldc, cm.ldc];
        for (i, ((rows, cols), ld)) in stored.into_iter().zip(lds).enumerate() {
            lt_check(
                // SAFETY: writes one layout, owned by `plan` (its `Drop` destroys those made).
                unsafe {
                    lt::cublasLtMatrixLayoutCreate(
                        &mut plan.layouts[i],
                        lt::cudaDataType::CUDA_R_16BF,
                        rows as u64,
                        cols as u64,
                        ld as i64,
                    )
                },
                "cublasLtMatrixLayoutCreate",
            )?;
        }
        Ok(plan)
    }

    /// Up to `wanted` heuristic results, in the heuristic's order (best first), restricted to
    /// f32 reductions and the workspace.
    fn heuristics(
        &self,
        handle: lt::cublasLtHandle_t,
        wanted: usize,
    ) -> Result<Vec<lt::cublasLtMatmulHeuristicResult_t>, String> {
        let mut pref = std::ptr::null_mut();
        lt_check(
            // SAFETY: writes one preference descriptor, destroyed below.
            unsafe { lt::cublasLtMatmulPreferenceCreate(&mut pref) },
            "cublasLtMatmulPreferenceCreate",
        )?;
        let result = (|| {
            let workspace = LT_WORKSPACE_BYTES as u64;
            // f32 accumulation throughout (module docs): no split K, or split K reduced in the
            // compute type (f32) in the workspace.
            let schemes =
                lt::cublasLtReductionScheme_t::CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE as u32;
            // SAFETY: a live preference; each buffer is its attribute's type (uint64, uint32).
            unsafe {
                lt_check(
                    lt::cublasLtMatmulPreferenceSetAttribute(
                        pref,
                        lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        (&raw const workspace).cast(),
                        8,
                    ),
                    "cublasLtMatmulPreferenceSetAttribute (workspace)",
                )?;
                lt_check(
                    lt::cublasLtMatmulPreferenceSetAttribute(
                        pref,
                        lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                        (&raw const schemes).cast(),
                        4,
                    ),
                    "cublasLtMatmulPreferenceSetAttribute (reduction schemes)",
                )?;
            }
            let mut results = vec![
                // SAFETY: a plain C struct of integers and floats: all zero is a valid value.
                unsafe { std::mem::zeroed::<lt::cublasLtMatmulHeuristicResult_t>() };
                wanted
            ];
            let mut found = 0;
            let [a, b, c, d] = self.layouts;
            lt_check(
                // SAFETY: live descriptors; `results` has room for `wanted` results.
                unsafe {
                    lt::cublasLtMatmulAlgoGetHeuristic(
                        handle,
                        self.desc,
                        a,
                        b,
                        c,
                        d,
                        pref,
                        wanted as i32,
                        results.as_mut_ptr(),
                        &mut found,
                    )
                },
                "cublasLtMatmulAlgoGetHeuristic",
            )?;
            results.truncate(found.max(0) as usize);
            results.retain(|r| {
                r.state == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS
                    && r.workspaceSize <= LT_WORKSPACE_BYTES
            });
            if results.is_empty() {
                return Err(format!(
                    "cuBLASLt's heuristic has no algorithm for {} (bf16, f32 accumulation)",
                    self.problem
                ));
            }
            Ok(results)
        })();
        // SAFETY: created above, destroyed once.
        unsafe {
            let _ = lt::cublasLtMatmulPreferenceDestroy(pref);
        }
        result
    }
}

/// The algorithm's configuration in words (cuBLASLt's numbers: enough to name it in a report
/// and to find it again with `cublasLtMatmulAlgoInit`).
fn describe(algo: &lt::cublasLtMatmulAlgo_t) -> String {
    use lt::cublasLtMatmulAlgoConfigAttributes_t as A;
    let get = |attr| {
        let mut value = 0u32;
        let mut written = 0usize;
        // SAFETY: reads one 32-bit attribute of an initialised algorithm into `value`.
        let status = unsafe {
            lt::cublasLtMatmulAlgoConfigGetAttribute(
                algo,
                attr,
                (&raw mut value).cast(),
                4,
                &mut written,
            )
        };
        (status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS).then_some(value)
    };
    let field = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
    format!(
        "algo {} tile {} stages {} split-k {} reduction {}",
        field(get(A::CUBLASLT_ALGO_CONFIG_ID)),
        field(get(A::CUBLASLT_ALGO_CONFIG_TILE_ID)),
        field(get(A::CUBLASLT_ALGO_CONFIG_STAGES_ID)),
        field(get(A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM)),
        field(get(A::CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)),
    )
}

/// A cuBLASLt baseline: `cublasLtMatmul` with the algorithm its [`LtChoice`] picks per problem,
/// C and D distinct.
pub struct CublasLt {
    how: LtChoice,
    handle: lt::cublasLtHandle_t,
    workspace: Workspace,
    plan: Option<LtPlan>,
}

impl Drop for CublasLt {
    fn drop(&mut self) {
        self.plan = None;
        // SAFETY: created in `new`, destroyed only here, after the plan's descriptors.
        let _ = unsafe { lt::cublasLtDestroy(self.handle) };
    }
}

impl CublasLt {
    /// A handle and its workspace.
    pub fn new(device: &Device, how: LtChoice) -> Result<Self, String> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: writes one handle, destroyed by `Drop`.
        lt_check(unsafe { lt::cublasLtCreate(&mut handle) }, "cublasLtCreate")?;
        let workspace = match Workspace::new(device, LT_WORKSPACE_BYTES) {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: created above, not yet owned by a value with a `Drop`.
                let _ = unsafe { lt::cublasLtDestroy(handle) };
                return Err(e);
            }
        };
        Ok(Self {
            how,
            handle,
            workspace,
            plan: None,
        })
    }

    /// One `cublasLtMatmul` of `plan`'s shape with `problem`'s scalars (the descriptors do not
    /// depend on them).
    fn matmul(
        &self,
        stream: &CudaStream,
        plan: &LtPlan,
        algo: &lt::cublasLtMatmulAlgo_t,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let cm = column_major(plan.problem.shape);
        let (alpha, beta) = (problem.alpha, problem.beta);
        let [la, lb, lc, ld] = plan.layouts;
        lt_check(
            // SAFETY: live descriptors of this problem; the operands are device buffers of its sizes
            // (the `Operands` contract); the workspace is `LT_WORKSPACE_BYTES`, no less than the
            // algorithm's need (checked when it was chosen); host scalars, read during the call.
            unsafe {
                lt::cublasLtMatmul(
                    self.handle,
                    plan.desc,
                    (&raw const alpha).cast(),
                    operands.buffer(cm.a) as *const c_void,
                    la,
                    operands.buffer(cm.b) as *const c_void,
                    lb,
                    (&raw const beta).cast(),
                    operands.c as *const c_void,
                    lc,
                    operands.d as *mut c_void,
                    ld,
                    algo,
                    self.workspace.ptr as *mut c_void,
                    self.workspace.bytes,
                    stream.cu_stream() as lt::cudaStream_t,
                )
            },
            "cublasLtMatmul",
        )
    }
}

impl Gemm for CublasLt {
    fn name(&self) -> String {
        match self.how {
            LtChoice::Heuristic => "cublasLt-heuristic".into(),
            LtChoice::Autotuned { .. } => "cublasLt-autotuned".into(),
        }
    }

    fn prepare(
        &mut self,
        timer: &mut Timer,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        self.plan = None;
        let mut plan = LtPlan::new(problem)?;
        match self.how {
            LtChoice::Heuristic => {
                let first = plan.heuristics(self.handle, 1)?[0];
                plan.algo = first.algo;
                plan.choice = format!("heuristic's first: {}", describe(&first.algo));
            }
            LtChoice::Autotuned { candidates, reps } => {
                let results = plan.heuristics(self.handle, candidates)?;
                // Candidates that cannot run this problem are dropped (an error at enqueue or a
                // failed run), not fatal.
                let stream = timer.stream().clone();
                let mut runnable = Vec::new();
                for (rank, r) in results.iter().enumerate() {
                    if self
                        .matmul(&stream, &plan, &r.algo, problem, operands)
                        .is_ok()
                        && stream.synchronize().is_ok()
                    {
                        runnable.push((rank, r.algo));
                    }
                }
                if runnable.is_empty() {
                    return Err(format!(
                        "no cuBLASLt heuristic candidate runs {problem} ({} returned)",
                        results.len()
                    ));
                }
                // The same alternating, gated timing as the benchmark's.
                let times = timer.round_robin(runnable.len(), 1, reps, |i, step| match step {
                    Step::Before => Ok(()),
                    Step::Run => self.matmul(&stream, &plan, &runnable[i].1, problem, operands),
                })?;
                let medians: Vec<f64> = times
                    .iter()
                    .map(|t| crate::check::median(t).unwrap_or(f64::INFINITY))
                    .collect();
                let best = (0..runnable.len())
                    .min_by(|&x, &y| medians[x].total_cmp(&medians[y]))
                    .expect("at least one runnable candidate");
                plan.algo = runnable[best].1;
                plan.choice = format!(
                    "fastest of {} candidates (heuristic rank {}, {:.4} ms against the first's {:.4} ms): {}",
                    runnable.len(),
                    runnable[best].0,
                    medians[best],
                    medians[0],
                    describe(&plan.algo)
                );
            }
        }
        self.plan = Some(plan);
        Ok(())
    }

    fn run(
        &mut self,
        stream: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let plan = self
            .plan
            .as_ref()
            .filter(|p| p.problem.shape == problem.shape)
            .ok_or_else(|| format!("{}: run before prepare for {problem}", self.name()))?;
        self.matmul(stream, plan, &plan.algo, problem, operands)
    }

    fn choice(&self) -> Option<String> {
        self.plan.as_ref().map(|p| p.choice.clone())
    }
}

/// The baselines, in the report's order: `cublasGemmEx` first (the reference).
pub fn baselines(device: &Device, quick: bool) -> Result<Vec<Box<dyn Gemm>>, String> {
    let autotuned = if quick {
        LtChoice::Autotuned {
            candidates: 8,
            reps: 3,
        }
    } else {
        LtChoice::Autotuned {
            candidates: 16,
            reps: 5,
        }
    };
    Ok(vec![
        Box::new(CublasGemmEx::new(device)?),
        Box::new(CublasLt::new(device, LtChoice::Heuristic)?),
        Box::new(CublasLt::new(device, autotuned)?),
    ])
}
