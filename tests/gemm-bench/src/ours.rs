//! **The Rust GEMM under test**: `gpu-gemm`'s kernels through their host API
//! (`crates/gpu-gemm-host`), loaded from the module given with `--ours-module FILE` (the bundle
//! carries `gpu_gemm.ptx`). Without that flag every shape prints [`SKIPPED`]: no number is made up.
//!
//! It is timed in the same rounds as the baselines, checked against `cublasGemmEx` on random data
//! and bit for bit on integer data, checked exactly against the host reference on the small
//! shapes, and reported with its ratio to each baseline.

use std::path::Path;
use std::sync::Arc;

use cudarc::driver::CudaStream;
use gpu_gemm_host::{Kernel, Prepared, Shape};

use crate::cuda::{Device, Timer};
use crate::gemm::{Gemm, Operands};
use crate::problem::Problem;

/// What the benchmark prints for every shape when no module of the GEMM under test is given.
pub const SKIPPED: &str = "ours: SKIPPED (no --ours-module given)";

/// One kernel of `gpu-gemm` as an implementation of the benchmark.
struct Ours {
    gemm: Arc<gpu_gemm_host::Gemm>,
    /// The kernel, or `None` for the host API's choice per shape ([`Gemm::default_kernel`]).
    kernel: Option<Kernel>,
    stream: Arc<CudaStream>,
    prepared: Option<(Prepared, (u32, u32, u32), Operands)>,
}

impl Gemm for Ours {
    fn name(&self) -> String {
        match self.kernel {
            None => "ours".into(),
            Some(kernel) => format!("ours-{}", kernel.name()),
        }
    }

    fn prepare(
        &mut self,
        _: &mut Timer,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let shape = shape_of(problem)?;
        // SAFETY: the `Operands` contract: device buffers of the problem's sizes, alive while the
        // implementation runs on them (the benchmark prepares again for other buffers); every
        // launch and every other use of them is on the benchmark's one stream.
        let prepared = unsafe {
            self.gemm.prepare_raw(
                &self.stream,
                self.kernel.unwrap_or(self.gemm.default_kernel(shape)),
                shape,
                operands.a,
                operands.b,
                operands.c,
                operands.d,
            )
        }
        .map_err(|e| e.to_string())?;
        self.prepared = Some((prepared, (shape.m, shape.n, shape.k), *operands));
        Ok(())
    }

    fn choice(&self) -> Option<String> {
        let (prepared, _, _) = self.prepared.as_ref()?;
        let kernel = prepared.kernel();
        let splits = prepared.splits();
        let (x, y) = prepared.grid();
        let mut text = format!(
            "{}: {splits} split(s) of K, grid {x} x {y} CTAs in clusters of {}",
            kernel.name(),
            kernel.launch_cluster(splits)
        );
        if kernel.is_cluster_k() {
            let fit = self.gemm.cluster_fit(kernel);
            text.push_str(&format!(
                " (clusters of 1..8 that fit at once: {})",
                fit.map(|f| f.to_string()).join(" ")
            ));
        }
        Some(text)
    }

    fn chosen_kernel(&self) -> Option<String> {
        let (prepared, _, _) = self.prepared.as_ref()?;
        Some(prepared.kernel().name().into())
    }

    fn run(
        &mut self,
        stream: &CudaStream,
        problem: &Problem,
        operands: &Operands,
    ) -> Result<(), String> {
        let s = shape_of(problem)?;
        let same =
            |o: &Operands| (o.a, o.b, o.c, o.d) == (operands.a, operands.b, operands.c, operands.d);
        let fresh = matches!(&self.prepared, Some((_, shape, ops)) if *shape == (s.m, s.n, s.k) && same(ops));
        if !fresh {
            return Err(format!(
                "{}: run without prepare for {problem}",
                self.name()
            ));
        }
        let (prepared, _, _) = self.prepared.as_ref().expect("checked above");
        // SAFETY: the buffers it was prepared for are these (checked above), alive while the
        // benchmark runs on them, and used on this one stream only.
        unsafe {
            self.gemm
                .launch_raw(stream, prepared, problem.alpha, problem.beta)
        }
        .map_err(|e| e.to_string())
    }
}

/// The problem's sizes as the kernel takes them (each below 2^32).
fn shape_of(problem: &Problem) -> Result<Shape, String> {
    let s = problem.shape;
    let dim = |x: usize| u32::try_from(x).map_err(|_| format!("{problem}: a size above 2^32"));
    Ok(Shape {
        m: dim(s.m)?,
        n: dim(s.n)?,
        k: dim(s.k)?,
    })
}

/// The GEMMs under test, or `None` without a module: first `ours`, the host API's default kernel
/// for each shape (what the ratios compare), then every kernel of [`Kernel::ALL`] that the module
/// holds, by name (a production module has no step kernels); with `only` (`--kernels`), only the
/// kernels it names, in its order (`--kernels` keeps a name given twice once), each of which the
/// module must hold.
pub fn ours(
    device: &Device,
    module: Option<&Path>,
    only: Option<&[String]>,
) -> Result<Option<Vec<Box<dyn Gemm>>>, String> {
    let Some(path) = module else {
        return Ok(None);
    };
    let path = path.to_str().ok_or("--ours-module: not a UTF-8 path")?;
    let gemm = Arc::new(gpu_gemm_host::Gemm::load(&device.ctx, path).map_err(|e| e.to_string())?);
    let make = |kernel| -> Box<dyn Gemm> {
        Box::new(Ours {
            gemm: gemm.clone(),
            kernel,
            stream: device.stream.clone(),
            prepared: None,
        })
    };
    let held: Vec<Kernel> = Kernel::ALL.into_iter().filter(|&k| gemm.has(k)).collect();
    let timed: Vec<Kernel> = match only {
        None => held,
        Some(names) => names
            .iter()
            .map(|name| {
                Kernel::from_name(name)
                    .filter(|k| held.contains(k))
                    .ok_or_else(|| {
                        let names: Vec<&str> = held.iter().map(|k| k.name()).collect();
                        format!(
                            "--kernels: the module {path} holds no kernel named `{name}`; it holds {}",
                            names.join(", ")
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let kernels = std::iter::once(None).chain(timed.into_iter().map(Some));
    Ok(Some(kernels.map(make).collect()))
}
