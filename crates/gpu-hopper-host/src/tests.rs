//! Host tests of every check of [`Tiled::validate`]: each limit just inside (passes) and just
//! outside (the error that names it). No driver is called.

use crate::{
    ElementType, L2Promotion, MAX_BOX_DIM, OobFill, Swizzle, TensorMapError, Tiled, coordinate,
};

const M: u64 = 4096;
const K: u64 = 1024;

/// The GEMM's A operand: bf16 `[M][K]`, boxes of 64 x 128, 128-byte swizzle.
fn gemm_a() -> Tiled<'static> {
    Tiled {
        element: ElementType::Bf16,
        address: 0x7f00_0000_0000,
        dims: &[K, M],
        strides: &[K * 2],
        box_dims: &[64, 128],
        element_strides: &[1, 1],
        swizzle: Swizzle::B128,
        l2_promotion: L2Promotion::B256,
        oob_fill: OobFill::Zero,
    }
}

fn err(t: Tiled<'_>) -> TensorMapError {
    t.validate()
        .expect_err("the description should be rejected")
}

#[test]
fn the_gemm_maps_are_valid() {
    gemm_a().validate().unwrap();
    // D and C: rows of N bf16, boxes of 64 x 64.
    let n = 4096u64;
    Tiled {
        dims: &[n, M],
        strides: &[n * 2],
        box_dims: &[64, 64],
        ..gemm_a()
    }
    .validate()
    .unwrap();
}

#[test]
fn rank_one_to_five() {
    let one = Tiled {
        element: ElementType::F32,
        dims: &[1 << 20],
        strides: &[],
        box_dims: &[256],
        element_strides: &[1],
        swizzle: Swizzle::None,
        ..gemm_a()
    };
    one.validate().unwrap();
    let five = Tiled {
        dims: &[64, 2, 3, 4, 5],
        strides: &[128, 256, 768, 3072],
        box_dims: &[64, 2, 3, 4, 5],
        element_strides: &[1, 1, 1, 1, 1],
        ..gemm_a()
    };
    five.validate().unwrap();
    let six = Tiled {
        dims: &[64, 2, 3, 4, 5, 6],
        ..five
    };
    assert_eq!(err(six), TensorMapError::Rank { rank: 6 });
    let zero = Tiled { dims: &[], ..one };
    assert_eq!(err(zero), TensorMapError::Rank { rank: 0 });
}

#[test]
fn every_array_has_the_length_of_the_rank() {
    assert_eq!(
        err(Tiled {
            strides: &[K * 2, 0],
            ..gemm_a()
        }),
        TensorMapError::Length {
            array: "strides",
            len: 2,
            expected: 1
        }
    );
    assert_eq!(
        err(Tiled {
            box_dims: &[64],
            ..gemm_a()
        }),
        TensorMapError::Length {
            array: "box_dims",
            len: 1,
            expected: 2
        }
    );
    assert_eq!(
        err(Tiled {
            element_strides: &[1, 1, 1],
            ..gemm_a()
        }),
        TensorMapError::Length {
            array: "element_strides",
            len: 3,
            expected: 2
        }
    );
}

#[test]
fn global_dims_one_to_two_to_the_32() {
    Tiled {
        dims: &[K, 1 << 32],
        ..gemm_a()
    }
    .validate()
    .unwrap();
    for (dims, dim, value) in [([K, (1 << 32) + 1], 1, (1 << 32) + 1), ([0, M], 0, 0)] {
        assert_eq!(
            err(Tiled {
                dims: &dims,
                ..gemm_a()
            }),
            TensorMapError::GlobalDim { dim, value }
        );
    }
}

#[test]
fn global_strides_multiples_of_16_below_two_to_the_40() {
    Tiled {
        strides: &[(1 << 40) - 16],
        ..gemm_a()
    }
    .validate()
    .unwrap();
    for value in [K * 2 + 8, 1 << 40, 2] {
        assert_eq!(
            err(Tiled {
                strides: &[value],
                ..gemm_a()
            }),
            TensorMapError::GlobalStride { dim: 1, value }
        );
    }
    // The message says what to do.
    let message = err(Tiled {
        strides: &[1000 * 2 + 2],
        ..gemm_a()
    })
    .to_string();
    assert!(
        message.contains("multiple of 16") && message.contains("pad"),
        "{message}"
    );
}

#[test]
fn the_address_is_16_byte_aligned() {
    Tiled {
        address: 0x1010,
        ..gemm_a()
    }
    .validate()
    .unwrap();
    assert_eq!(
        err(Tiled {
            address: 0x1008,
            ..gemm_a()
        }),
        TensorMapError::Address { address: 0x1008 }
    );
}

#[test]
fn box_dims_one_to_256() {
    Tiled {
        box_dims: &[64, MAX_BOX_DIM],
        ..gemm_a()
    }
    .validate()
    .unwrap();
    for (boxes, dim, value) in [([64, 257], 1, 257), ([64, 0], 1, 0)] {
        assert_eq!(
            err(Tiled {
                box_dims: &boxes,
                ..gemm_a()
            }),
            TensorMapError::BoxDim { dim, value }
        );
    }
    // 256 elements of one byte in the inner dimension, no swizzle: allowed.
    Tiled {
        element: ElementType::E4m3,
        box_dims: &[256, 1],
        swizzle: Swizzle::None,
        ..gemm_a()
    }
    .validate()
    .unwrap();
}

#[test]
fn the_inner_box_is_a_multiple_of_16_bytes() {
    // 4 bf16 = 8 bytes; 12 f32 = 48 bytes passes; 20 u8 = 20 bytes fails.
    assert_eq!(
        err(Tiled {
            box_dims: &[4, 128],
            ..gemm_a()
        }),
        TensorMapError::BoxInnerBytes { bytes: 8 }
    );
    Tiled {
        element: ElementType::F32,
        box_dims: &[12, 128],
        swizzle: Swizzle::None,
        ..gemm_a()
    }
    .validate()
    .unwrap();
    assert_eq!(
        err(Tiled {
            element: ElementType::U8,
            box_dims: &[20, 128],
            swizzle: Swizzle::None,
            ..gemm_a()
        }),
        TensorMapError::BoxInnerBytes { bytes: 20 }
    );
}

#[test]
fn a_swizzled_inner_box_fits_the_span() {
    for (swizzle, span) in [
        (Swizzle::B32, 32u64),
        (Swizzle::B64, 64),
        (Swizzle::B128, 128),
    ] {
        let fits = (span / 2) as u32;
        Tiled {
            box_dims: &[fits, 128],
            swizzle,
            ..gemm_a()
        }
        .validate()
        .unwrap();
        let wider = fits + 8;
        assert_eq!(
            err(Tiled {
                box_dims: &[wider, 128],
                swizzle,
                ..gemm_a()
            }),
            TensorMapError::SwizzleSpan {
                bytes: u64::from(wider) * 2,
                span
            }
        );
    }
    // Without a swizzle the inner box may be wider than 128 bytes.
    Tiled {
        box_dims: &[128, 128],
        swizzle: Swizzle::None,
        ..gemm_a()
    }
    .validate()
    .unwrap();
    let message = err(Tiled {
        box_dims: &[128, 128],
        ..gemm_a()
    })
    .to_string();
    assert!(
        message.contains("256 bytes") && message.contains("128-byte swizzle"),
        "{message}"
    );
}

#[test]
fn element_strides_one_to_eight() {
    Tiled {
        element_strides: &[1, 8],
        ..gemm_a()
    }
    .validate()
    .unwrap();
    for (strides, dim, value) in [([1, 9], 1, 9), ([0, 1], 0, 0)] {
        assert_eq!(
            err(Tiled {
                element_strides: &strides,
                ..gemm_a()
            }),
            TensorMapError::ElementStride { dim, value }
        );
    }
}

#[test]
fn the_nan_fill_is_for_floating_point_types() {
    for element in [ElementType::F16, ElementType::Bf16, ElementType::F32] {
        Tiled {
            element,
            box_dims: &[16, 128],
            oob_fill: OobFill::NanRequestZeroFma,
            ..gemm_a()
        }
        .validate()
        .unwrap();
    }
    for element in [
        ElementType::E4m3,
        ElementType::E5m2,
        ElementType::U8,
        ElementType::I32,
    ] {
        assert_eq!(
            err(Tiled {
                element,
                box_dims: &[32, 128],
                oob_fill: OobFill::NanRequestZeroFma,
                ..gemm_a()
            }),
            TensorMapError::NanFill { element }
        );
    }
}

#[test]
fn element_sizes() {
    let sizes: Vec<u64> = [
        ElementType::U8,
        ElementType::E4m3,
        ElementType::E5m2,
        ElementType::U16,
        ElementType::F16,
        ElementType::Bf16,
        ElementType::U32,
        ElementType::I32,
        ElementType::F32,
        ElementType::U64,
        ElementType::I64,
        ElementType::F64,
    ]
    .iter()
    .map(|e| e.bytes())
    .collect();
    assert_eq!(sizes, [1, 1, 1, 2, 2, 2, 4, 4, 4, 8, 8, 8]);
}

#[test]
fn coordinates_are_signed_32_bit() {
    assert_eq!(coordinate(-64), Ok(-64));
    assert_eq!(coordinate(i64::from(i32::MAX)), Ok(i32::MAX));
    assert_eq!(
        coordinate(1 << 31),
        Err(TensorMapError::Coordinate { value: 1 << 31 })
    );
    assert!(coordinate(i64::from(i32::MIN) - 1).is_err());
}

#[test]
fn the_map_value_is_128_bytes_aligned_for_the_driver() {
    assert_eq!(size_of::<crate::TensorMap>(), 128);
    assert_eq!(align_of::<crate::TensorMap>(), 128);
}
