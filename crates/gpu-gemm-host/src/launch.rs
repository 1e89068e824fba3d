//! What a launch hands the driver: the tensor maps of the matrices, the launch configuration (a
//! cluster dimension for the CTA pairs), and how many clusters fit on the GPU at once.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, sys};

use crate::cache::Capture;
use crate::error::{check, cuda};
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

/// The launch attributes of a GEMM kernel: a cluster dimension when it asks for clusters of more
/// than one CTA, and programmatic stream serialization when `programmatic`
/// ([`crate::Gemm::set_programmatic_launch`]). Only the clustered kernels are cluster launches: a
/// cluster dimension of 1 x 1 x 1 still launches as clusters, and the single-CTA persistent kernel
/// ran 11 % slower back to back that way on the H200 (tests/results/2026-12-01-issue13.md).
pub(crate) struct Attributes {
    list: [sys::CUlaunchAttribute; 2],
    count: u32,
}

impl Attributes {
    pub(crate) fn new(cluster: u32, programmatic: bool) -> Self {
        // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
        let mut list: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
        let mut count = 0;
        if cluster > 1 {
            list[count] = cluster_attribute(cluster);
            count += 1;
        }
        if programmatic {
            // Each GEMM thread waits for the previous kernel (`griddepcontrol.wait`, ABI version
            // 3) before it touches global memory.
            list[count] = gpu_hopper_host::programmatic_attribute();
            count += 1;
        }
        Attributes {
            list,
            count: count as u32,
        }
    }
}

/// The launch configuration of a GEMM kernel (`threads` threads, `smem` bytes of dynamic shared
/// memory) on `grid` and `stream`, with `attributes` (which must outlive the launch call).
pub(crate) fn launch_config(
    grid: (u32, u32),
    threads: u32,
    smem: u32,
    stream: sys::CUstream,
    attributes: &mut Attributes,
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: 1,
        blockDimX: threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: smem,
        hStream: stream,
        attrs: attributes.list.as_mut_ptr(),
        numAttrs: attributes.count,
    }
}

/// A launch attribute asking for clusters of `size` CTAs along x.
fn cluster_attribute(size: u32) -> sys::CUlaunchAttribute {
    // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = size;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    attribute
}

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
    let mut attributes = Attributes::new(size, false);
    let config = launch_config(
        (size, 1),
        kernel.threads(),
        kernel.smem_bytes(),
        std::ptr::null_mut(),
        &mut attributes,
    );
    let mut clusters = 0i32;
    // SAFETY: the configuration and its attributes are live locals; the driver writes `clusters`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_asks_for_clusters_and_programmatic_serialization_as_told() {
        use sys::CUlaunchAttributeID as Id;
        let ids = |cluster, programmatic| {
            let mut attributes = Attributes::new(cluster, programmatic);
            let config = launch_config((1, 1), 384, 0, std::ptr::null_mut(), &mut attributes);
            assert_eq!(config.attrs.cast_const(), attributes.list.as_ptr());
            let list = &attributes.list[..config.numAttrs as usize];
            list.iter()
                .map(|a| {
                    // SAFETY: each union field read is the one its id names.
                    let value = unsafe {
                        match a.id {
                            Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => a.value.clusterDim.x,
                            _ => a.value.programmaticStreamSerializationAllowed as u32,
                        }
                    };
                    (a.id, value)
                })
                .collect::<Vec<_>>()
        };
        // A cluster of one CTA is no cluster launch (the persistent kernel ran 11 % slower so).
        assert_eq!(ids(1, false), []);
        assert_eq!(
            ids(2, false),
            [(Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 2)]
        );
        assert_eq!(
            ids(1, true),
            [(Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 1)]
        );
        assert_eq!(
            ids(8, true),
            [
                (Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 8),
                (Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 1)
            ]
        );
    }

    #[test]
    fn a_matrix_the_tensor_copies_cannot_address_is_a_shape_error() {
        // Checked before the driver is asked (no driver here): a raw address off the 16-byte
        // alignment a tensor map needs.
        let e = tensor_map(0x1001, 64, 64, 128).unwrap_err();
        assert!(matches!(e, GemmError::Shape(_)), "{e}");
        assert!(e.to_string().contains("16"), "{e}");
    }
}
