//! The host API from a thread that has no current CUDA context: `prepare` on the legacy default
//! stream from a fresh thread must work. Its tensor maps are encoded by `cuTensorMapEncodeTiled`,
//! which needs a current context (CUDA_ERROR_INVALID_CONTEXT without one: the GEMM's `prepare`
//! failed so in run 96, gemm-test's `prepare_on_the_default_stream_from_a_fresh_thread`); the
//! host binds the module's context itself. The launch on this thread, O and LSE within the bound.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use gpu_attention_host::{Attention, Problem};

use crate::Rng;
use crate::capture::{buffers, check};

/// `prepare` from a fresh thread, on the default stream; launched and checked here.
pub fn prepare_from_a_fresh_thread(
    ctx: &Arc<CudaContext>,
    attention: &Attention,
) -> Result<(), String> {
    let stream = ctx.default_stream();
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    let p = Problem::contiguous(1, (130, 300), (4, 2), 128);
    let b = buffers(&stream, &p, &mut rng)?;
    stream
        .synchronize()
        .map_err(|e| format!("the uploads: {e:?}"))?;
    let tensors = b.tensors(&stream);
    let prepared = std::thread::scope(|s| {
        s.spawn(|| attention.prepare(&stream, &p, tensors))
            .join()
            .map_err(|_| "the thread panicked".to_string())
    })?
    .map_err(|e| format!("prepare from a fresh thread: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("the preparation: {e:?}"))?;
    // SAFETY: the tensors are alive and hold the problem's extents; only this stream touches
    // them, and the upload was synchronized.
    unsafe { attention.launch_raw(&prepared, stream.cu_stream()) }
        .map_err(|e| format!("launch_raw: {e}"))?;
    check(&stream, &p, &b, "the launch prepared from a fresh thread")
}
