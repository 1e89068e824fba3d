//! What is wrong with a problem, in words that say what to do.

use core::fmt;

/// One of the four tensors of a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tensor {
    Q,
    K,
    V,
    O,
}

impl Tensor {
    /// The tensor's name.
    pub const fn name(self) -> &'static str {
        match self {
            Tensor::Q => "Q",
            Tensor::K => "K",
            Tensor::V => "V",
            Tensor::O => "O",
        }
    }
}

/// A problem the kernels cannot run, from [`Problem::check`](crate::Problem::check) (or, for the
/// buffers, from the host crate).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum AttentionError {
    /// The head dimension is not one the kernels are built for.
    HeadDim(u32),
    /// `heads_kv` is 0 or does not divide `heads_q` (or `heads_q` is 0).
    Heads { heads_q: u32, heads_kv: u32 },
    /// A fixed-length batch with no sequence, or a sequence of no tokens.
    Empty { what: &'static str },
    /// The variable-length offsets of Q and K are not one sequence each alike, or hold no
    /// sequence.
    OffsetCounts { q: usize, k: usize },
    /// An offset array that does not start at 0 or goes down at `at`.
    Offsets {
        which: &'static str,
        at: usize,
        before: u32,
        value: u32,
    },
    /// More tokens (or a longer sequence) than the kernels count: 2^31 - 1.
    TooLong { what: &'static str, tokens: u64 },
    /// A stride (in elements) that is not a multiple of 8 (16 bytes of 16-bit elements: the
    /// tensor copies' rule), or is 0 where the tensor has more than one row along it.
    Stride {
        tensor: Tensor,
        which: &'static str,
        stride: u64,
    },
    /// A stride smaller than what it steps over: rows of one tensor would overlap.
    Overlap {
        tensor: Tensor,
        which: &'static str,
        stride: u64,
        needed: u64,
    },
    /// A stride of a tensor's dimension of more than one element is 2^40 bytes or more (what a
    /// tensor copy steps at most).
    TooLarge { tensor: Tensor, elements: u64 },
    /// A buffer holds fewer elements than the problem reads or writes there.
    Buffer {
        tensor: Tensor,
        needed: u64,
        given: u64,
    },
    /// The scale is NaN or infinite, or so large that its base-2 factor (`scale * log2(e)`,
    /// what the kernels multiply the scores by) is infinite.
    Scale(f32),
    /// A tensor's extent (one past its last element: the sequences, rows and heads times their
    /// strides) does not fit in 2^62 bytes: no buffer holds it, and its addresses would wrap.
    Extent { what: &'static str },
}

impl fmt::Display for AttentionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AttentionError::HeadDim(d) => write!(
                f,
                "head dimension {d} is not supported: the kernels are built for 64, 128 and 256 (pad the heads to the next one)"
            ),
            AttentionError::Heads { heads_q, heads_kv } => write!(
                f,
                "heads_q = {heads_q}, heads_kv = {heads_kv}: both must be at least 1 and heads_kv must divide heads_q (grouped-query attention: each K/V head serves heads_q / heads_kv query heads)"
            ),
            AttentionError::Empty { what } => write!(
                f,
                "{what} is 0: there is nothing to attend (a fixed batch needs at least one sequence of at least one query and one key; empty sequences go in a variable-length batch, Problem::varlen)"
            ),
            AttentionError::OffsetCounts { q, k } => write!(
                f,
                "variable-length offsets: {q} for Q and {k} for K; both need one per sequence plus one (the first 0, the last the total tokens), the same count"
            ),
            AttentionError::Offsets {
                which,
                at,
                before,
                value,
            } => {
                if at == 0 {
                    write!(
                        f,
                        "variable-length offsets of {which} must start at 0, not {value}"
                    )
                } else {
                    write!(
                        f,
                        "variable-length offsets of {which} go down at index {at}: {before} then {value} (cumulative sequence lengths never decrease)"
                    )
                }
            }
            AttentionError::TooLong { what, tokens } => write!(
                f,
                "{what} is {tokens} tokens; the kernels count tokens in 31 bits (at most 2147483647)"
            ),
            AttentionError::Stride {
                tensor,
                which,
                stride,
            } => write!(
                f,
                "{}'s {which} stride is {stride} elements: strides must be multiples of 8 elements (16 bytes) and not 0; the head dimension itself must be contiguous",
                tensor.name()
            ),
            AttentionError::Overlap {
                tensor,
                which,
                stride,
                needed,
            } => write!(
                f,
                "{}'s {which} stride is {stride} elements, less than the {needed} it steps over: its rows would overlap (O's elements must each be written once: give it at least the contiguous strides, Strides::contiguous)",
                tensor.name()
            ),
            AttentionError::TooLarge { tensor, elements } => write!(
                f,
                "{}'s stride of {elements} elements is 2^40 bytes or more, beyond what a tensor copy steps: split the tensor, or lay it out more densely",
                tensor.name()
            ),
            AttentionError::Buffer {
                tensor,
                needed,
                given,
            } => write!(
                f,
                "{}'s buffer holds {given} elements; the problem uses {needed}",
                tensor.name()
            ),
            AttentionError::Scale(scale) => write!(
                f,
                "the scale is {scale}: it must be finite, and its product with log2(e) too (|scale| below 2.35e38; the default is 1 / sqrt(head_dim))"
            ),
            AttentionError::Extent { what } => write!(
                f,
                "{what} would span more than 2^62 bytes (its sequences, rows and heads times their strides): no buffer holds that; check the strides, or split the batch"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for AttentionError {}
