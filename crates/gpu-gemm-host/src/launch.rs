//! What a launch hands the driver: the tensor maps of the matrices, the launch configuration (a
//! cluster dimension for the CTA pairs), and how many clusters fit on the GPU at once.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream};

use crate::cache::Capture;
use crate::error::cuda;
use crate::{GemmError, Kernel};

/// Whether `stream` is being captured into a CUDA graph, and the capture sequence's id
/// (gpu-hopper-host's `capture_id`). A capture that failed and is still open counts as one (the
/// driver refuses its launches; a plan must not be made or freed in it either).
pub(crate) fn capture_state(stream: &CudaStream) -> Result<Capture, GemmError> {
    gpu_hopper_host::capture_state(stream)
        .map_err(|e| GemmError::Cuda(format!("cuStreamGetCaptureInfo: {:?}", e.0)))
}

/// A 2D bf16 tensor map over `rows` rows of `k` elements at `address`, boxes of 64 x `box_rows`,
/// 128-byte swizzle (the layout the kernel's wgmma descriptors read and its epilogue stages),
/// zero fill outside (and, for stores, nothing written outside): `gpu-hopper-host`'s encoder,
/// which checks the description against the driver's limits first (a raw address that is not
/// 16-byte aligned, say, is a [`GemmError::Shape`] that says so).
pub(crate) fn tensor_map(
    address: u64,
    k: u32,
    rows: u32,
    box_rows: u32,
) -> Result<[u8; 128], GemmError> {
    use gpu_hopper_host::{ElementType, L2Promotion, OobFill, TensorMapError, Tiled};
    let map = Tiled {
        element: ElementType::Bf16,
        address,
        dims: &[u64::from(k), u64::from(rows)],
        strides: &[u64::from(k) * 2],
        box_dims: &[gpu_gemm_plan::BK, box_rows],
        element_strides: &[1, 1],
        swizzle: gpu_gemm_plan::SWIZZLE,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    };
    match map.encode() {
        Ok(map) => Ok(*map.as_bytes()),
        Err(e @ TensorMapError::Driver { .. }) => {
            Err(GemmError::Cuda(format!("a tensor map: {e}")))
        }
        Err(e) => Err(GemmError::Shape(format!("a matrix's tensor map: {e}"))),
    }
}

/// The launch attributes and configuration of a GEMM kernel (gpu-hopper-host's): a cluster
/// dimension for the clustered kernels only, programmatic serialization when asked
/// ([`crate::Gemm::set_programmatic_launch`]).
pub(crate) use gpu_hopper_host::{LaunchAttributes as Attributes, launch_config};

/// How many clusters of `size` CTAs of `kernel`'s `function` (its threads and shared memory)
/// the GPU holds at once (`cuOccupancyMaxActiveClusters`): the persistent cluster grid. Some GPCs have an odd
/// number of SMs, so this can be below half the SM count.
pub(crate) fn max_active_clusters(
    ctx: &Arc<CudaContext>,
    kernel: Kernel,
    function: &CudaFunction,
    size: u32,
) -> Result<u32, GemmError> {
    ctx.bind_to_thread().map_err(cuda("binding the context"))?;
    let clusters =
        gpu_hopper_host::max_active_clusters(function, size, kernel.threads(), kernel.smem_bytes())
            .map_err(cuda("cuOccupancyMaxActiveClusters"))?;
    if clusters < 1 {
        return Err(GemmError::Cuda(format!(
            "no cluster of {size} CTAs of the GEMM fits on this GPU"
        )));
    }
    Ok(clusters as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_the_tensor_copies_cannot_address_is_a_shape_error() {
        // Checked before the driver is asked (no driver here): a raw address off the 16-byte
        // alignment a tensor map needs.
        let e = tensor_map(0x1001, 64, 64, 128).unwrap_err();
        assert!(matches!(e, GemmError::Shape(_)), "{e}");
        assert!(e.to_string().contains("16"), "{e}");
    }
}
