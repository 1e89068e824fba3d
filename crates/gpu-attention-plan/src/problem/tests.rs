//! The problem's rules, one test per rule.

use std::string::ToString;

use super::*;

fn err(p: Problem<'_>) -> AttentionError {
    p.check().expect_err("an error")
}

#[test]
fn contiguous_problems_pass_and_their_extents_are_their_sizes() {
    for d in HEAD_DIMS {
        let p = Problem::contiguous(3, (129, 1000), (8, 2), d);
        p.check().unwrap();
        let e = p.extents();
        assert_eq!(e.q, 3 * 129 * 8 * u64::from(d));
        assert_eq!(e.k, 3 * 1000 * 2 * u64::from(d));
        assert_eq!(e.v, e.k);
        assert_eq!(e.o, e.q);
        assert_eq!(e.lse, 3 * 8 * 129);
    }
}

#[test]
fn the_default_scale_is_one_over_the_root_of_the_head_dimension() {
    let p = Problem::contiguous(1, (1, 1), (1, 1), 128);
    assert!((p.scale() - 0.088_388_35).abs() < 1e-7);
    assert_eq!(Problem::contiguous(1, (1, 1), (1, 1), 64).scale(), 0.125);
    assert_eq!(Problem::contiguous(1, (1, 1), (1, 1), 256).scale(), 0.0625);
    let given = Problem {
        scale: Some(0.5),
        ..p
    };
    assert_eq!(given.scale(), 0.5);
}

#[test]
fn each_rule_has_its_error() {
    let ok = Problem::contiguous(2, (7, 9), (4, 2), 64);
    assert_eq!(
        err(Problem::contiguous(2, (7, 9), (4, 2), 96)),
        AttentionError::HeadDim(96)
    );
    for (q, kv) in [(4, 3), (0, 1), (4, 0)] {
        assert_eq!(
            err(Problem::contiguous(2, (7, 9), (q, kv), 64)),
            AttentionError::Heads {
                heads_q: q,
                heads_kv: kv
            }
        );
    }
    assert_eq!(
        err(Problem::contiguous(2, (0, 9), (4, 2), 64)),
        AttentionError::Empty { what: "seq_q" }
    );
    assert_eq!(
        err(Problem {
            scale: Some(f32::NAN),
            ..ok
        })
        .to_string(),
        "the scale is NaN: it must be finite, and its product with log2(e) too (|scale| below 2.35e38; the default is 1 / sqrt(head_dim))"
    );
    let unaligned = Problem {
        k: Strides { seq: 68, ..ok.k },
        ..ok
    };
    assert_eq!(
        err(unaligned),
        AttentionError::Stride {
            tensor: Tensor::K,
            which: "seq",
            stride: 68
        }
    );
    assert!(
        err(unaligned)
            .to_string()
            .contains("multiples of 8 elements")
    );
}

#[test]
fn the_output_must_not_overlap_itself_but_inputs_may() {
    let ok = Problem::contiguous(2, (7, 9), (4, 2), 64);
    // Heads 32 elements apart: rows of 64 overlap.
    let o = Strides { head: 32, ..ok.o };
    assert_eq!(
        err(Problem { o, ..ok }),
        AttentionError::Overlap {
            tensor: Tensor::O,
            which: "head",
            stride: 32,
            needed: 64
        }
    );
    // K and V may share heads (a broadcast K/V read twice is fine).
    let k = Strides { head: 0, ..ok.k };
    assert_eq!(
        err(Problem { k, ..ok }),
        AttentionError::Stride {
            tensor: Tensor::K,
            which: "head",
            stride: 0
        }
    );
    let k = Strides { seq: 64, ..ok.k };
    Problem { k, ..ok }.check().unwrap();
    // [batch, heads, seq, dim] is a layout of its own, not an overlap.
    let bhsd = Strides {
        batch: 4 * 7 * 64,
        seq: 64,
        head: 7 * 64,
    };
    Problem { o: bhsd, ..ok }.check().unwrap();
    assert_eq!(Problem { o: bhsd, ..ok }.extents().o, 2 * 4 * 7 * 64);
}

#[test]
fn offsets_are_checked() {
    let offsets = [0, 5, 5, 12];
    let p = Problem::varlen(&offsets, &offsets, (4, 4), 128);
    p.check().unwrap();
    assert_eq!(p.batches.count(), 3);
    assert_eq!(p.batches.queries(2), (5, 7));
    assert_eq!(p.batches.keys(1), (5, 0));
    assert_eq!(p.extents().q, 12 * 4 * 128);
    assert_eq!(p.extents().lse, 4 * 12);
    assert_eq!(p.lse_index(2, 1, 3), 12 + 5 + 3);
    let down = [0, 5, 4];
    let e = err(Problem::varlen(&down, &down, (4, 4), 128));
    assert_eq!(
        e,
        AttentionError::Offsets {
            which: "Q",
            at: 2,
            before: 5,
            value: 4
        }
    );
    assert_eq!(
        e.to_string(),
        "variable-length offsets of Q go down at index 2: 5 then 4 (cumulative sequence lengths never decrease)"
    );
    let late = [1, 5];
    assert!(
        err(Problem::varlen(&offsets[..2], &late, (4, 4), 128))
            .to_string()
            .contains("of K must start at 0, not 1")
    );
    assert_eq!(
        err(Problem::varlen(&offsets, &offsets[..3], (4, 4), 128)),
        AttentionError::OffsetCounts { q: 4, k: 3 }
    );
    assert_eq!(
        err(Problem::varlen(&[0], &[0], (4, 4), 128)),
        AttentionError::OffsetCounts { q: 1, k: 1 }
    );
}

#[test]
fn fixed_lse_is_batch_head_row() {
    let p = Problem::contiguous(2, (7, 9), (4, 2), 64);
    assert_eq!(p.lse_index(0, 0, 0), 0);
    assert_eq!(p.lse_index(1, 3, 6), (4 + 3) * 7 + 6);
    assert_eq!(p.lse_index(1, 3, 6) + 1, p.extents().lse);
}

/// Strides within their limit whose products with the counts overflow 64 bits: found by a
/// review (2026-12-05). `extents` wrapped (in a release build) to 64 elements, so a buffer of 64
/// passed the host's length check while the kernel addressed 2^64 bytes past it.
#[test]
fn an_extent_past_64_bits_is_an_error_not_a_wrapped_length() {
    let batch = (1u32 << 26) + 1;
    let huge = Strides {
        batch: 1 << 38,
        seq: 64,
        head: 64,
    };
    let p = Problem {
        q: huge,
        k: huge,
        v: huge,
        o: huge,
        ..Problem::contiguous(batch, (1, 1), (1, 1), 64)
    };
    let e = err(p);
    assert!(matches!(e, AttentionError::Extent { .. }), "{e:?}");
    assert!(e.to_string().contains("split the batch"), "{e}");
    // The contiguous strides of a shape whose tensor exceeds 2^64 elements saturate (no panic,
    // no wrap) and are refused the same way.
    let p = Problem::contiguous(u32::MAX, (1 << 20, 1 << 20), (1 << 12, 1 << 12), 256);
    assert!(p.check().is_err());
    // (LSE's extent, heads_q x tokens, is below O's, whose rows may not overlap: no separate
    // case.)
}

/// A finite scale whose product with log2(e) (the kernels fold it into `ex2`) is infinite made
/// every O and LSE NaN: found by the same review.
#[test]
fn a_scale_whose_base_2_factor_overflows_is_an_error() {
    let ok = Problem::contiguous(1, (8, 8), (1, 1), 64);
    for scale in [f32::MAX, -f32::MAX, 2.4e38] {
        let e = err(Problem {
            scale: Some(scale),
            ..ok
        });
        assert_eq!(e, AttentionError::Scale(scale));
        assert!(e.to_string().contains("log2(e)"), "{e}");
    }
    // The largest scale that works is accepted.
    Problem {
        scale: Some(f32::MAX / core::f32::consts::LOG2_E * 0.999),
        ..ok
    }
    .check()
    .unwrap();
}

/// A variable-length batch's `batch` stride is not used (documented so): any value passes, as
/// any stride of a dimension of one element (the review of 2026-12-05 found it refused past
/// 2^40 bytes).
#[test]
fn an_unused_stride_is_not_checked() {
    let offsets = [0u32, 5, 9];
    let p = Problem::varlen(&offsets, &offsets, (2, 2), 64);
    let huge = |s: Strides| Strides {
        batch: u64::MAX / 2,
        ..s
    };
    Problem {
        q: huge(p.q),
        k: huge(p.k),
        v: huge(p.v),
        o: huge(p.o),
        ..p
    }
    .check()
    .unwrap();
}
