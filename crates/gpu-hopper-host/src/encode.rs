//! The driver call: a validated [`Tiled`] into a [`TensorMap`] with `cuTensorMapEncodeTiled`.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::tensor_map::{ElementType, L2Promotion, OobFill, Swizzle, TensorMapError, Tiled};

/// An encoded tensor map: the driver's `CUtensorMap`, 128 opaque bytes, 128-byte aligned (see
/// the crate documentation for why this is not `gpu_pipeline::TensorMap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct TensorMap(sys::CUtensorMap);

const _: () = assert!(
    size_of::<TensorMap>() == 128 && align_of::<TensorMap>() >= 64,
    "a CUtensorMap is 128 bytes, at least 64-byte aligned"
);

impl TensorMap {
    /// The map's bytes, to copy to device memory (at a 64-byte aligned address: "tensorMap
    /// address must be aligned to 64 bytes"; cudarc's allocations are).
    pub fn as_bytes(&self) -> &[u8; 128] {
        // SAFETY: `CUtensorMap` is `repr(C)` around `[u64; 16]`: 128 initialised bytes without
        // padding, and `[u8; 128]` needs no more alignment than it has.
        unsafe { &*std::ptr::from_ref(&self.0).cast::<[u8; 128]>() }
    }
}

impl ElementType {
    fn driver(self) -> sys::CUtensorMapDataType {
        use sys::CUtensorMapDataType as T;
        match self {
            ElementType::U8 | ElementType::E4m3 | ElementType::E5m2 => {
                T::CU_TENSOR_MAP_DATA_TYPE_UINT8
            }
            ElementType::U16 => T::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            ElementType::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            ElementType::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            ElementType::U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            ElementType::I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
            ElementType::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            ElementType::U64 => T::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            ElementType::I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
            ElementType::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        }
    }
}

/// The driver's name of a swizzle mode.
fn swizzle_mode(swizzle: Swizzle) -> sys::CUtensorMapSwizzle {
    use sys::CUtensorMapSwizzle as S;
    match swizzle {
        Swizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
        Swizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

impl L2Promotion {
    fn driver(self) -> sys::CUtensorMapL2promotion {
        use sys::CUtensorMapL2promotion as L;
        match self {
            L2Promotion::None => L::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        }
    }
}

impl OobFill {
    fn driver(self) -> sys::CUtensorMapFloatOOBfill {
        use sys::CUtensorMapFloatOOBfill as F;
        match self {
            OobFill::Zero => F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            OobFill::NanRequestZeroFma => F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
        }
    }
}

impl Tiled<'_> {
    /// Validates the description ([`Tiled::validate`]), then encodes it with the driver.
    ///
    /// Needs the CUDA driver loaded, as after cudarc's `CudaContext::new` (cudarc loads it on the
    /// first driver call and panics where there is none). The map does not refer to the context:
    /// it holds the address, which must stay valid for as long as kernels use the map.
    pub fn encode(&self) -> Result<TensorMap, TensorMapError> {
        self.validate()?;
        let rank = self.rank();
        // The driver reads `rank` entries of each array (`rank - 1` of the strides); the checks
        // above made the lengths so.
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: `map` is a writable CUtensorMap; every array pointer refers to a live slice of
        // the length the driver reads for `rank` (checked by `validate`); the driver only reads
        // them and writes `map`. The address is not dereferenced here.
        let status = unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                self.element.driver(),
                rank as u32,
                self.address as *mut c_void,
                self.dims.as_ptr(),
                self.strides.as_ptr(),
                self.box_dims.as_ptr(),
                self.element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle_mode(self.swizzle),
                self.l2_promotion.driver(),
                self.oob_fill.driver(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(TensorMapError::Driver {
                status: format!("{status:?}"),
            });
        }
        // SAFETY: the successful call wrote the map; a CUtensorMap is plain bytes, and the zeroed
        // start made every byte initialised anyway.
        Ok(TensorMap(unsafe { map.assume_init() }))
    }
}
