//! The plans [`Attention::run`](crate::Attention::run) keeps (gpu-hopper-host's `plan_cache`),
//! so that a problem it has seen costs a lookup and a launch, not tensor maps and an upload
//! (which also stood between the kernel before and this one, so that a programmatic launch
//! through `run` could never overlap them).
//!
//! # The key, and why it is enough
//!
//! A plan (the crate's `Prepared`: the tensor maps, a variable-length batch's unit table, the
//! parameters and the grid) is a function of: the kernel (a row of the table); the problem (its
//! batches, a variable-length batch's offsets by value, the heads, the head dimension, the
//! element type, the mask, the scale's bits, the four tensors' strides); the addresses of Q, K,
//! V, O and `LSE`; this `Attention`'s SM count and clusters that fit per row (both fixed at load); and the stream the plan's memory
//! was uploaded on (its memory is freed in that stream's order, after the launches that used it,
//! which are that stream's; the per-thread default stream, whose handle names another stream on
//! each thread, keeps no plan). Each tensor map encodes an address, the dims and the strides, all in
//! the key, and nothing else of the buffer: a buffer freed and another allocated at the same
//! address gets the plan it would have been built with. The buffers' lengths and contexts do not
//! follow from the key: `run` checks them on every call, hit or miss.
//!
//! A plan has no workspace (the kernels only read its memory), so one plan serves eager calls
//! and captured graphs alike.

use std::sync::Arc;

use cudarc::driver::CudaStream;
use gpu_attention_plan::{Batches, Element, Mask, Problem, Strides};
use gpu_hopper_host::plan_cache;

use crate::{Prepared, Tensors};

/// Everything a plan is a function of (the module docs: why it is enough), for one
/// `Attention`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The row's position in the table.
    kernel: usize,
    batches: Sequences,
    /// Query heads, K/V heads, head dimension.
    heads: (u32, u32, u32),
    /// 0 bf16, 1 f16.
    element: u8,
    causal: bool,
    /// The scale's bits (`None`: the default, 1 / sqrt(head_dim)).
    scale: Option<u32>,
    /// Q's, K's, V's and O's strides, each (batch, seq, head).
    strides: [(u64, u64, u64); 4],
    /// Q, K, V, O, LSE.
    tensors: [u64; 5],
    /// The stream's handle (`CUstream` as an integer; the plan holds the stream).
    stream: usize,
}

/// A problem's batches, owned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Sequences {
    Fixed {
        batch: u32,
        seq_q: u32,
        seq_k: u32,
    },
    Varlen {
        offsets_q: Box<[u32]>,
        offsets_k: Box<[u32]>,
    },
}

impl Key {
    /// The key of `problem` on row `kernel` over `tensors`, launched on the stream of handle
    /// `stream` (`CUstream` as an integer).
    pub(crate) fn new(
        kernel: usize,
        problem: &Problem<'_>,
        tensors: Tensors,
        stream: usize,
    ) -> Self {
        let batches = match problem.batches {
            Batches::Fixed {
                batch,
                seq_q,
                seq_k,
            } => Sequences::Fixed {
                batch,
                seq_q,
                seq_k,
            },
            Batches::Varlen {
                offsets_q,
                offsets_k,
            } => Sequences::Varlen {
                offsets_q: offsets_q.into(),
                offsets_k: offsets_k.into(),
            },
        };
        let strides = |s: Strides| (s.batch, s.seq, s.head);
        Key {
            kernel,
            batches,
            heads: (problem.heads_q, problem.heads_kv, problem.head_dim),
            element: match problem.element {
                Element::Bf16 => 0,
                Element::F16 => 1,
            },
            causal: problem.mask == Mask::Causal,
            scale: problem.scale.map(f32::to_bits),
            strides: [problem.q, problem.k, problem.v, problem.o].map(strides),
            tensors: [tensors.q, tensors.k, tensors.v, tensors.o, tensors.lse],
            stream,
        }
    }
}

/// A kept plan: the prepared launch and the stream it was made on (which it keeps alive, so
/// that the key's handle names no other stream while the plan lives).
pub(crate) struct Plan {
    pub(crate) prepared: Prepared,
    pub(crate) stream: Arc<CudaStream>,
}

impl plan_cache::Plan for Plan {
    fn bytes(&self) -> u64 {
        self.prepared.bytes()
    }

    fn has_workspace(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use gpu_attention_plan::Problem;

    use super::*;

    /// Every field of the problem, the tensors and the stream tells keys apart; the same problem
    /// built again gives the same key.
    #[test]
    fn every_field_tells_keys_apart() {
        let tensors = Tensors {
            q: 0x1000,
            k: 0x2000,
            v: 0x3000,
            o: 0x4000,
            lse: 0x5000,
        };
        let offsets = ([0u32, 7, 300], [0u32, 9, 500]);
        let base = Problem::contiguous(2, (300, 500), (8, 2), 128);
        let key = |kernel, p: &Problem<'_>, t: Tensors| Key::new(kernel, p, t, 7);
        let k0 = key(3, &base, tensors);
        assert_eq!(
            k0,
            key(3, &Problem::contiguous(2, (300, 500), (8, 2), 128), tensors)
        );
        let mut f16 = base;
        f16.element = Element::F16;
        let mut scaled = base;
        scaled.scale = Some(0.1);
        let mut strided = base;
        strided.o.seq += 8;
        let varlen = Problem::varlen(&offsets.0, &offsets.1, (8, 2), 128);
        let mut longer = offsets.1;
        longer[2] += 1;
        let varlen2 = Problem::varlen(&offsets.0, &longer, (8, 2), 128);
        let mut q_strided = base;
        q_strided.q.head += 8;
        let mut k_strided = base;
        k_strided.k.batch += 8;
        let mut v_strided = base;
        v_strided.v.seq += 8;
        let others = [
            key(4, &base, tensors),
            key(3, &Problem::contiguous(2, (301, 500), (8, 2), 128), tensors),
            key(3, &Problem::contiguous(2, (300, 500), (8, 1), 128), tensors),
            key(3, &Problem::contiguous(2, (300, 500), (8, 2), 64), tensors),
            key(3, &Problem::contiguous(3, (300, 500), (8, 2), 128), tensors),
            key(3, &Problem::contiguous(2, (300, 501), (8, 2), 128), tensors),
            key(
                3,
                &Problem::contiguous(2, (300, 500), (16, 2), 128),
                tensors,
            ),
            key(3, &q_strided, tensors),
            key(3, &k_strided, tensors),
            key(3, &v_strided, tensors),
            key(
                3,
                &base,
                Tensors {
                    k: 0x2100,
                    ..tensors
                },
            ),
            key(
                3,
                &base,
                Tensors {
                    v: 0x3100,
                    ..tensors
                },
            ),
            key(
                3,
                &base,
                Tensors {
                    o: 0x4100,
                    ..tensors
                },
            ),
            key(3, &base.with_mask(Mask::Causal), tensors),
            key(3, &f16, tensors),
            key(3, &scaled, tensors),
            key(3, &strided, tensors),
            key(3, &varlen, tensors),
            key(3, &varlen2, tensors),
            key(
                3,
                &base,
                Tensors {
                    lse: 0x5100,
                    ..tensors
                },
            ),
            key(
                3,
                &base,
                Tensors {
                    q: 0x1100,
                    ..tensors
                },
            ),
            Key::new(3, &base, tensors, 8),
        ];
        for (i, k) in others.iter().enumerate() {
            assert_ne!(*k, k0, "change {i}");
        }
        // The two variable-length problems differ only in their offsets' values.
        assert_ne!(
            key(3, &varlen, tensors),
            key(3, &varlen2, tensors),
            "the offsets by value"
        );
    }
}
