//! What a kernel launch hands the driver beside its grid (`cuLaunchKernelEx`'s attributes), and
//! how many clusters of a kernel fit on the GPU at once: the pieces every host crate's launch
//! shares.

use cudarc::driver::{CudaFunction, DriverError, sys};

/// The launch attributes of a kernel: a cluster dimension when it asks for clusters of more than
/// one CTA, and programmatic stream serialization when asked ([`programmatic_attribute`]). Only a
/// clustered kernel is a cluster launch: a cluster dimension of 1 x 1 x 1 still launches as
/// clusters, and the GEMM's single-CTA persistent kernel ran 11 % slower back to back that way
/// on the H200 (tests/results/2026-12-01-issue13.md).
///
/// [`programmatic_attribute`]: crate::programmatic_attribute
pub struct LaunchAttributes {
    list: [sys::CUlaunchAttribute; 2],
    count: u32,
}

impl LaunchAttributes {
    /// The attributes of a launch in clusters of `cluster` CTAs along x, as a programmatic
    /// dependent of the stream's previous kernel when `programmatic`.
    pub fn new(cluster: u32, programmatic: bool) -> Self {
        // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
        let mut list: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
        let mut count = 0;
        if cluster > 1 {
            list[count] = cluster_attribute(cluster);
            count += 1;
        }
        if programmatic {
            list[count] = crate::programmatic_attribute();
            count += 1;
        }
        LaunchAttributes {
            list,
            count: count as u32,
        }
    }

    /// The attributes, for `CUlaunchConfig::attrs` (with [`len`](Self::len) as `numAttrs`);
    /// valid while `self` is neither moved nor dropped.
    pub fn as_mut_ptr(&mut self) -> *mut sys::CUlaunchAttribute {
        self.list.as_mut_ptr()
    }

    /// How many attributes the launch passes.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether the launch passes none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The attributes the launch passes.
    pub fn as_slice(&self) -> &[sys::CUlaunchAttribute] {
        &self.list[..self.count as usize]
    }
}

/// The launch configuration of a kernel of `threads` threads and `smem` bytes of dynamic shared
/// memory on `grid` (x, y) and `stream`, with `attributes` (which must outlive the launch call).
pub fn launch_config(
    grid: (u32, u32),
    threads: u32,
    smem: u32,
    stream: sys::CUstream,
    attributes: &mut LaunchAttributes,
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
        attrs: attributes.as_mut_ptr(),
        numAttrs: attributes.len(),
    }
}

/// A launch attribute asking for clusters of `size` CTAs along x
/// (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`).
pub fn cluster_attribute(size: u32) -> sys::CUlaunchAttribute {
    // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = size;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    attribute
}

/// How many clusters of `size` CTAs of `function` (launched with `threads` threads and `smem`
/// bytes of dynamic shared memory) the GPU holds at once, as the driver says
/// (`cuOccupancyMaxActiveClusters`): a persistent cluster grid. Some GPCs have an odd number of
/// SMs, so this can be below the SM count over `size`. The function's context must be current.
pub fn max_active_clusters(
    function: &CudaFunction,
    size: u32,
    threads: u32,
    smem: u32,
) -> Result<u32, DriverError> {
    let mut attributes = LaunchAttributes::new(size, false);
    let config = launch_config(
        (size, 1),
        threads,
        smem,
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
    match status {
        sys::CUresult::CUDA_SUCCESS => Ok(clusters.max(0) as u32),
        e => Err(DriverError(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attributes_ask_for_clusters_and_programmatic_serialization_as_told() {
        use sys::CUlaunchAttributeID as Id;
        let ids = |cluster, programmatic| {
            let attributes = LaunchAttributes::new(cluster, programmatic);
            attributes
                .as_slice()
                .iter()
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
        assert!(LaunchAttributes::new(1, false).is_empty());
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

    /// The configuration passes the attributes it is given, and the grid, block and memory.
    #[test]
    fn the_configuration_passes_its_attributes() {
        for (cluster, programmatic, count) in [(1, false, 0), (2, false, 1), (2, true, 2)] {
            let mut attributes = LaunchAttributes::new(cluster, programmatic);
            let config = launch_config((3, 2), 384, 1024, std::ptr::null_mut(), &mut attributes);
            assert_eq!(config.attrs.cast_const(), attributes.as_slice().as_ptr());
            assert_eq!(config.numAttrs, count);
            assert_eq!(
                (config.gridDimX, config.gridDimY, config.gridDimZ),
                (3, 2, 1)
            );
            assert_eq!((config.blockDimX, config.sharedMemBytes), (384, 1024));
        }
    }
}
