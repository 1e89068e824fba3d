//! A tiled tensor map's description and its validation: pure, no driver call, no `unsafe`.
//!
//! The requirements quoted beside each check are those of the CUDA Driver API documentation of
//! `cuTensorMapEncodeTiled` (section "Tensor Map Object Management", CUDA 13.1).

use std::fmt;

/// The most dimensions a tensor map has: "`tensorRank` must be non-zero and less than or equal
/// to the maximum supported dimensionality of 5".
pub const MAX_RANK: usize = 5;
/// The largest box dimension: "`boxDim` array ... must be non-zero and less than or equal to 256".
pub const MAX_BOX_DIM: u32 = 256;
/// The largest element stride: "`elementStrides` array ... must be non-zero and less than or
/// equal to 8".
pub const MAX_ELEMENT_STRIDE: u32 = 8;
/// The largest global dimension: "`globalDim` array ... must be non-zero and less than or equal
/// to 2^32".
const MAX_GLOBAL_DIM: u64 = 1 << 32;
/// Global strides stay below this: "must be a multiple of 16 and less than 2^40".
const GLOBAL_STRIDE_LIMIT: u64 = 1 << 40;

/// The type of the tensor's elements (`CUtensorMapDataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementType {
    /// 1 byte, unsigned (`UINT8`).
    U8,
    /// FP8 E4M3 (1 byte). The driver has no FP8 type: the map moves it as `UINT8`, which is
    /// exact for a copy; so no NaN fill (the driver allows it only for floating-point types).
    E4m3,
    /// FP8 E5M2 (1 byte), moved as `UINT8` like [`ElementType::E4m3`].
    E5m2,
    /// 2 bytes, unsigned (`UINT16`).
    U16,
    /// IEEE half (`FLOAT16`).
    F16,
    /// bfloat16 (`BFLOAT16`).
    Bf16,
    /// 4 bytes, unsigned (`UINT32`).
    U32,
    /// 4 bytes, signed (`INT32`).
    I32,
    /// IEEE single (`FLOAT32`).
    F32,
    /// 8 bytes, unsigned (`UINT64`).
    U64,
    /// 8 bytes, signed (`INT64`).
    I64,
    /// IEEE double (`FLOAT64`).
    F64,
}

impl ElementType {
    /// The size of one element in bytes.
    pub const fn bytes(self) -> u64 {
        match self {
            ElementType::U8 | ElementType::E4m3 | ElementType::E5m2 => 1,
            ElementType::U16 | ElementType::F16 | ElementType::Bf16 => 2,
            ElementType::U32 | ElementType::I32 | ElementType::F32 => 4,
            ElementType::U64 | ElementType::I64 | ElementType::F64 => 8,
        }
    }

    /// A floating-point type to the driver (FP8 is not: it travels as `UINT8`).
    pub const fn is_float_to_the_driver(self) -> bool {
        matches!(
            self,
            ElementType::F16 | ElementType::Bf16 | ElementType::F32 | ElementType::F64
        )
    }
}

/// How the box is laid out in shared memory (`CUtensorMapSwizzle`): the toolkit's swizzle modes
/// (`gpu_hopper::descriptor::Swizzle`), the same type a `wgmma` descriptor is built with, so that
/// the layout TMA writes and the one `wgmma` reads are named once. With a swizzle, the box's
/// inner dimension may not exceed [`Swizzle::span`] bytes.
pub use gpu_hopper::descriptor::Swizzle;

/// The L2 fetch size, "the byte granularity at which L2 requests are filled from DRAM"
/// (`CUtensorMapL2promotion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L2Promotion {
    /// No promotion.
    None,
    /// 64 bytes.
    B64,
    /// 128 bytes.
    B128,
    /// 256 bytes.
    B256,
}

/// What a load puts in the box's elements outside the tensor (`CUtensorMapFloatOOBfill`); a
/// store writes nothing outside it either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OobFill {
    /// Zeros (`FLOAT_OOB_FILL_NONE`).
    Zero,
    /// A NaN that makes an FMA with it give zero (`FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`): floating-
    /// point types only.
    NanRequestZeroFma,
}

/// A tiled tensor map: a tensor of rank 1 to 5 in global memory and the box a copy moves, with
/// no interleave. Every array is innermost dimension first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiled<'a> {
    /// The elements' type.
    pub element: ElementType,
    /// The device address of element `[0, 0, ...]`.
    pub address: u64,
    /// The tensor's size in elements along each dimension (`rank` entries; the rank is its
    /// length).
    pub dims: &'a [u64],
    /// The stride in bytes of each dimension but the first (`rank - 1` entries): for a row-major
    /// matrix `[rows][cols]`, `[cols * element bytes]`.
    pub strides: &'a [u64],
    /// The box's size in elements along each dimension (`rank` entries).
    pub box_dims: &'a [u32],
    /// The step in elements along each dimension (`rank` entries; usually all 1). The first is
    /// ignored by the hardware without interleave; a step `s` along dimension `i` moves
    /// `ceil(box_dims[i] / s)` elements.
    pub element_strides: &'a [u32],
    /// The shared-memory layout of the box.
    pub swizzle: Swizzle,
    /// The L2 fetch size.
    pub l2_promotion: L2Promotion,
    /// The fill outside the tensor.
    pub oob_fill: OobFill,
}

/// Why a tensor map cannot be encoded; the message says what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensorMapError {
    /// The rank (the length of `dims`) is not 1 to 5.
    Rank { rank: usize },
    /// An array's length does not match the rank.
    Length {
        array: &'static str,
        len: usize,
        expected: usize,
    },
    /// A global dimension is 0 or above 2^32.
    GlobalDim { dim: usize, value: u64 },
    /// A global stride is not a multiple of 16, or not below 2^40.
    GlobalStride { dim: usize, value: u64 },
    /// The global address is not 16-byte aligned.
    Address { address: u64 },
    /// A box dimension is 0 or above 256.
    BoxDim { dim: usize, value: u32 },
    /// The box's inner dimension in bytes is not a multiple of 16.
    BoxInnerBytes { bytes: u64 },
    /// The box's inner dimension in bytes is wider than the swizzle span.
    SwizzleSpan { bytes: u64, span: u64 },
    /// An element stride is 0 or above 8.
    ElementStride { dim: usize, value: u32 },
    /// The NaN fill asked for a type the driver does not take as floating point.
    NanFill { element: ElementType },
    /// A host index that is no device coordinate (not a signed 32-bit value).
    Coordinate { value: i64 },
    /// The driver rejected a description that passed the checks above.
    Driver { status: String },
}

impl fmt::Display for TensorMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorMapError::Rank { rank } => write!(
                f,
                "a tensor map has 1 to {MAX_RANK} dimensions, this one {rank}: give `dims` 1 to {MAX_RANK} entries"
            ),
            TensorMapError::Length {
                array,
                len,
                expected,
            } => write!(
                f,
                "`{array}` has {len} entries, the rank needs {expected}: give it one per dimension{}",
                if *array == "strides" {
                    " after the first (the first dimension's stride is the element size)"
                } else {
                    ""
                }
            ),
            TensorMapError::GlobalDim { dim, value } => write!(
                f,
                "global dimension {dim} is {value} elements; it must be 1 to 2^32: split the tensor or fix the shape"
            ),
            TensorMapError::GlobalStride { dim, value } => write!(
                f,
                "the stride of dimension {dim} is {value} bytes; it must be a multiple of 16 below 2^40: pad the rows to a multiple of 16 bytes"
            ),
            TensorMapError::Address { address } => write!(
                f,
                "the global address {address:#x} is not 16-byte aligned: start the tensor at a multiple of 16 bytes"
            ),
            TensorMapError::BoxDim { dim, value } => write!(
                f,
                "box dimension {dim} is {value} elements; it must be 1 to {MAX_BOX_DIM}: copy a larger tile as several boxes"
            ),
            TensorMapError::BoxInnerBytes { bytes } => write!(
                f,
                "the box's inner dimension is {bytes} bytes; it must be a multiple of 16: widen or narrow box_dims[0]"
            ),
            TensorMapError::SwizzleSpan { bytes, span } => write!(
                f,
                "the box's inner dimension is {bytes} bytes, wider than the {span}-byte swizzle span: make box_dims[0] at most {span} bytes of elements, or choose a wider swizzle"
            ),
            TensorMapError::ElementStride { dim, value } => write!(
                f,
                "element stride {dim} is {value}; it must be 1 to {MAX_ELEMENT_STRIDE}"
            ),
            TensorMapError::NanFill { element } => write!(
                f,
                "the NaN fill is for floating-point types; {element:?} is not one to the driver: use OobFill::Zero"
            ),
            TensorMapError::Coordinate { value } => write!(
                f,
                "{value} is no tensor-map coordinate: the device takes signed 32-bit coordinates; split the tensor into maps of at most 2^31 elements along that dimension"
            ),
            TensorMapError::Driver { status } => write!(
                f,
                "cuTensorMapEncodeTiled rejected a description that passed every documented check: {status}"
            ),
        }
    }
}

impl std::error::Error for TensorMapError {}

impl Tiled<'_> {
    /// The rank, once [`validate`](Self::validate) has passed.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Checks every documented requirement of `cuTensorMapEncodeTiled` for this description,
    /// in the order of the documentation; the first one that fails is the error.
    pub fn validate(&self) -> Result<(), TensorMapError> {
        // "`tensorRank` must be non-zero and less than or equal to the maximum supported
        // dimensionality of 5."
        let rank = self.dims.len();
        if !(1..=MAX_RANK).contains(&rank) {
            return Err(TensorMapError::Rank { rank });
        }
        // The driver reads `tensorRank` entries of `globalDim`, `boxDim`, `elementStrides` and
        // `tensorRank - 1` of `globalStrides`.
        for (array, len, expected) in [
            ("strides", self.strides.len(), rank - 1),
            ("box_dims", self.box_dims.len(), rank),
            ("element_strides", self.element_strides.len(), rank),
        ] {
            if len != expected {
                return Err(TensorMapError::Length {
                    array,
                    len,
                    expected,
                });
            }
        }
        // "`globalAddress`, which specifies the starting address of the memory region
        // described, must be 16 byte aligned." (32 with the 32-byte interleave, not offered.)
        if self.address % 16 != 0 {
            return Err(TensorMapError::Address {
                address: self.address,
            });
        }
        // "`globalDim` array ... must be non-zero and less than or equal to 2^32."
        for (dim, &value) in self.dims.iter().enumerate() {
            if value == 0 || value > MAX_GLOBAL_DIM {
                return Err(TensorMapError::GlobalDim { dim, value });
            }
        }
        // "`globalStrides` array, which specifies tensor stride of each of the lower
        // `tensorRank` - 1 dimensions in bytes, must be a multiple of 16 and less than 2^40."
        for (i, &value) in self.strides.iter().enumerate() {
            if value % 16 != 0 || value >= GLOBAL_STRIDE_LIMIT {
                return Err(TensorMapError::GlobalStride { dim: i + 1, value });
            }
        }
        // "`boxDim` array ... must be non-zero and less than or equal to 256."
        for (dim, &value) in self.box_dims.iter().enumerate() {
            if value == 0 || value > MAX_BOX_DIM {
                return Err(TensorMapError::BoxDim { dim, value });
            }
        }
        // "When `interleave` is CU_TENSOR_MAP_INTERLEAVE_NONE, { `boxDim`[0] *
        // elementSizeInBytes( `tensorDataType` ) } must be a multiple of 16 bytes."
        let inner = u64::from(self.box_dims[0]) * self.element.bytes();
        if inner % 16 != 0 {
            return Err(TensorMapError::BoxInnerBytes { bytes: inner });
        }
        // "`elementStrides` array ... must be non-zero and less than or equal to 8."
        for (dim, &value) in self.element_strides.iter().enumerate() {
            if value == 0 || value > MAX_ELEMENT_STRIDE {
                return Err(TensorMapError::ElementStride { dim, value });
            }
        }
        // "When `interleave` is CU_TENSOR_MAP_INTERLEAVE_NONE and `swizzle` is not
        // CU_TENSOR_MAP_SWIZZLE_NONE, the bounding box inner dimension (computed as `boxDim`[0]
        // multiplied by element size derived from `tensorDataType`) must be less than or equal
        // to the swizzle size."
        let span = u64::from(self.swizzle.span());
        if self.swizzle != Swizzle::None && inner > span {
            return Err(TensorMapError::SwizzleSpan { bytes: inner, span });
        }
        // "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA can only be used when
        // `tensorDataType` represents a floating-point data type."
        if self.oob_fill == OobFill::NanRequestZeroFma && !self.element.is_float_to_the_driver() {
            return Err(TensorMapError::NanFill {
                element: self.element,
            });
        }
        Ok(())
    }
}

/// A host index as a device coordinate: the tensor copies take signed 32-bit coordinates
/// (`cp.async.bulk.tensor`'s `tensorCoords`, `.s32`), so an index outside `i32` cannot be
/// addressed through one map.
pub fn coordinate(value: i64) -> Result<i32, TensorMapError> {
    i32::try_from(value).map_err(|_| TensorMapError::Coordinate { value })
}
