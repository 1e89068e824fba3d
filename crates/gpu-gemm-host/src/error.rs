//! What can go wrong, and the checks that come before any module: the driver, the GPU.

use std::sync::Arc;

use cudarc::driver::{CudaContext, sys};

/// What can go wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum GemmError {
    /// The shape, a buffer or an argument does not fit the kernel's contract.
    Shape(String),
    /// The module is not one this host API can launch: built from another version of the
    /// kernel crate, an entry missing, or without the launch bounds the build adds.
    Module(String),
    /// A stream or a buffer belongs to another CUDA context than the module.
    Context(String),
    /// No CUDA driver (`libcuda.so` cannot be loaded).
    NoDriver(String),
    /// The GPU cannot run the kernels: they are sm_90a (compute capability 9.0 exactly; the
    /// architecture-specific `a` features run on no other).
    Device(String),
    /// A CUDA call failed.
    Cuda(String),
    /// The call cannot be captured into a CUDA graph: it would allocate or upload (a problem
    /// [`Gemm::run`](crate::Gemm::run) has no plan for yet on that stream, or
    /// [`Gemm::prepare`](crate::Gemm::prepare)) while its stream is being captured.
    Capture(String),
}

impl std::fmt::Display for GemmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Shape(s)
            | Self::Module(s)
            | Self::Context(s)
            | Self::NoDriver(s)
            | Self::Device(s)
            | Self::Capture(s) => {
                write!(f, "gemm: {s}")
            }
            Self::Cuda(s) => write!(f, "gemm: CUDA: {s}"),
        }
    }
}

impl std::error::Error for GemmError {}

/// The CUDA context of GPU `ordinal` (its primary context, as `CudaContext::new`), or a
/// one-line [`GemmError::NoDriver`] on a machine without a CUDA driver, where
/// `CudaContext::new` itself panics inside cudarc (its dynamic loading of `libcuda.so`).
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>, GemmError> {
    // SAFETY: loads and unloads the driver library, as any CUDA program does.
    if !unsafe { sys::is_culib_present() } {
        return Err(GemmError::NoDriver(
            "no CUDA driver (libcuda.so cannot be loaded): run this on a machine with an NVIDIA Hopper GPU (compute capability 9.0: the kernels are sm_90a) and its driver".into(),
        ));
    }
    CudaContext::new(ordinal).map_err(cuda("opening the GPU"))
}

/// The kernels run on compute capability 9.0 only: [`compute_capability_error`] of `ctx`'s GPU.
pub(crate) fn check_device(ctx: &Arc<CudaContext>) -> Result<(), GemmError> {
    let attribute = |a| ctx.attribute(a).map_err(cuda("the compute capability"));
    let major = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    compute_capability_error(major, minor).map_or(Ok(()), Err)
}

/// The error for a GPU of compute capability `major.minor`, if the kernels cannot run there:
/// sm_90a code runs on 9.0 alone (PTX ISA, "Target ISA notes": the `a` features are not
/// forward compatible), so another GPU is told so, not left to fail in the driver's JIT.
fn compute_capability_error(major: i32, minor: i32) -> Option<GemmError> {
    (major != 9 || minor != 0).then(|| {
        GemmError::Device(format!(
            "this GPU is compute capability {major}.{minor}; the GEMM's kernels are sm_90a and run only on compute capability 9.0 (H100, H200, GH200)"
        ))
    })
}

pub(crate) fn cuda(what: &str) -> impl Fn(cudarc::driver::DriverError) -> GemmError + '_ {
    move |e| GemmError::Cuda(format!("{what}: {e:?}"))
}

pub(crate) fn check(status: sys::CUresult, what: &str) -> Result<(), GemmError> {
    if status == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(GemmError::Cuda(format!("{what}: {status:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_compute_capability_9_0_runs_the_kernels() {
        assert!(compute_capability_error(9, 0).is_none());
        for (major, minor) in [(8, 0), (8, 9), (9, 1), (10, 0), (12, 0)] {
            let e = compute_capability_error(major, minor).expect("refused");
            assert!(matches!(e, GemmError::Device(_)), "{e}");
            assert!(e.to_string().contains(&format!("{major}.{minor}")), "{e}");
        }
    }
}
