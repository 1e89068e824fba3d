//! What can go wrong.

use std::sync::Arc;

use cudarc::driver::{CudaContext, sys};
use gpu_attention_plan::AttentionError;

/// What can go wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The problem breaks a rule of the kernels (the plan's [`AttentionError`]: its message says
    /// what to change).
    Problem(AttentionError),
    /// `LSE`'s buffer is too short for the problem, an address is misaligned, or an argument
    /// does not fit. (A too-short Q, K, V or O is a [`Error::Problem`] holding
    /// [`AttentionError::Buffer`], which names the tensor: `AttentionError`'s `Tensor` has no
    /// `LSE`.)
    Buffer(String),
    /// The module is not one this host API can launch.
    Module(String),
    /// A stream or a buffer belongs to another CUDA context than the module.
    Context(String),
    /// No CUDA driver (`libcuda.so` cannot be loaded).
    NoDriver(String),
    /// The GPU cannot run the kernels (they are sm_90a: compute capability 9.0 exactly).
    Device(String),
    /// A CUDA call failed.
    Cuda(String),
    /// A kernel given to `run_with` or `prepare_with` that does not compute the problem.
    Kernel(String),
    /// `prepare`, or `run` of a call it has no plan for yet (or any `run` while cudarc's event
    /// tracking is on), on a stream that is being captured into a CUDA graph: they upload the
    /// tensor maps, which a capture cannot hold (or the tracking would wait on events recorded
    /// outside it). Nothing was enqueued; the capture goes on.
    Capture(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Problem(e) => write!(f, "attention: {e}"),
            Self::Buffer(s)
            | Self::Module(s)
            | Self::Context(s)
            | Self::NoDriver(s)
            | Self::Device(s)
            | Self::Kernel(s)
            | Self::Capture(s) => {
                write!(f, "attention: {s}")
            }
            Self::Cuda(s) => write!(f, "attention: CUDA: {s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<AttentionError> for Error {
    fn from(e: AttentionError) -> Self {
        Self::Problem(e)
    }
}

/// A CUDA error with what was being done.
pub(crate) fn cuda<E: std::fmt::Debug>(what: &'static str) -> impl FnOnce(E) -> Error {
    move |e| Error::Cuda(format!("{what}: {e:?}"))
}

/// A driver status as a result.
pub(crate) fn check(status: sys::CUresult, what: &str) -> Result<(), Error> {
    if status == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda(format!("{what}: {status:?}")))
    }
}

/// The CUDA context of GPU `ordinal`, or a one-line [`Error::NoDriver`] on a machine without a
/// CUDA driver (where `CudaContext::new` itself panics inside cudarc).
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>, Error> {
    // SAFETY: loads and unloads the driver library, as any CUDA program does.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver(
            "no CUDA driver (libcuda.so cannot be loaded): run this on a machine with an NVIDIA Hopper GPU (compute capability 9.0: the kernels are sm_90a) and its driver".into(),
        ));
    }
    CudaContext::new(ordinal).map_err(cuda("opening the GPU"))
}

/// The kernels run on compute capability 9.0 only.
pub(crate) fn check_device(ctx: &Arc<CudaContext>) -> Result<(), Error> {
    let attribute = |a| ctx.attribute(a).map_err(cuda("the compute capability"));
    let major = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    if (major, minor) != (9, 0) {
        return Err(Error::Device(format!(
            "the GPU has compute capability {major}.{minor}; the attention kernels are sm_90a and run only on 9.0 (H100, H200, GH200)"
        )));
    }
    Ok(())
}
