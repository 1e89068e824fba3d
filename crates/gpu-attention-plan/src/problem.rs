//! The problem: shapes, heads, strides, the element type, the mask and the scale, and every rule
//! a launch needs ([`Problem::check`]).

use crate::{AttentionError, Tensor};

/// The head dimensions the kernels are built for.
pub const HEAD_DIMS: [u32; 3] = [64, 128, 256];

/// The most tokens a sequence, or a variable-length batch, may hold: the kernels count them in
/// 31 bits (tensor-copy coordinates are signed 32-bit).
pub const MAX_TOKENS: u64 = (1 << 31) - 1;

/// The largest stride in bytes a tensor copy takes (PTX ISA, tensor maps: strides below 2^40).
const MAX_STRIDE_BYTES: u64 = 1 << 40;

/// The most bytes a tensor may span (its extent): 2^62, far above any GPU's memory and below
/// where the kernels' 64-bit address arithmetic (offsets in elements, times the element's
/// bytes, plus a base address) could wrap.
const MAX_EXTENT_BYTES: u64 = 1 << 62;

/// The mask added to `scale · Q Kᵀ` (the [`mask`](crate::mask) module: which keys each row sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mask {
    /// Every query sees every key of its sequence.
    None,
    /// Query row `i` sees keys `j <= i + seq_k - seq_q` (bottom-right aligned).
    Causal,
}

/// The element type of Q, K, V and O (the accumulation and `LSE` are f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    Bf16,
    F16,
}

impl Element {
    /// Bytes per element.
    pub const fn bytes(self) -> u64 {
        2
    }
}

/// Strides in elements of a `[batch, seq, heads, head_dim]` tensor, the head dimension
/// contiguous (FlashAttention's layout; `[batch, heads, seq, head_dim]` is the same with other
/// strides). With variable-length batches the tokens of all sequences follow one another along
/// `seq`, and `batch` is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    pub batch: u64,
    pub seq: u64,
    pub head: u64,
}

impl Strides {
    /// A contiguous `[batch, seq, heads, head_dim]` tensor.
    pub const fn contiguous(seq: u32, heads: u32, head_dim: u32) -> Self {
        let head = head_dim as u64;
        Self {
            // Saturating: a shape past 64 bits gets a stride `Problem::check` refuses.
            batch: (seq as u64 * heads as u64).saturating_mul(head),
            seq: heads as u64 * head,
            head,
        }
    }
}

/// The sequences of a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batches<'a> {
    /// `batch` sequences of `seq_q` queries and `seq_k` keys each.
    Fixed { batch: u32, seq_q: u32, seq_k: u32 },
    /// Sequences packed one after another (FlashAttention's varlen form): sequence `b` holds
    /// the queries `offsets_q[b]..offsets_q[b + 1]` and the keys `offsets_k[b]..offsets_k[b +
    /// 1]`. A sequence may be empty (no queries: nothing to compute; no keys: its rows of O are
    /// 0 and of `LSE` minus infinity).
    Varlen {
        offsets_q: &'a [u32],
        offsets_k: &'a [u32],
    },
}

impl Batches<'_> {
    /// The sequences.
    pub fn count(&self) -> u32 {
        match *self {
            Batches::Fixed { batch, .. } => batch,
            Batches::Varlen { offsets_q, .. } => offsets_q.len().saturating_sub(1) as u32,
        }
    }

    /// Sequence `b`'s queries: its first token (in the tokens of all sequences, fixed batches
    /// counting `seq_q` per sequence) and its length.
    pub fn queries(&self, b: u32) -> (u64, u32) {
        match *self {
            Batches::Fixed { seq_q, .. } => (u64::from(b) * u64::from(seq_q), seq_q),
            Batches::Varlen { offsets_q, .. } => span(offsets_q, b),
        }
    }

    /// Sequence `b`'s keys, as [`queries`](Self::queries).
    pub fn keys(&self, b: u32) -> (u64, u32) {
        match *self {
            Batches::Fixed { seq_k, .. } => (u64::from(b) * u64::from(seq_k), seq_k),
            Batches::Varlen { offsets_k, .. } => span(offsets_k, b),
        }
    }

    /// The queries of all sequences.
    pub fn tokens_q(&self) -> u64 {
        match *self {
            Batches::Fixed { batch, seq_q, .. } => u64::from(batch) * u64::from(seq_q),
            Batches::Varlen { offsets_q, .. } => offsets_q.last().map_or(0, |&t| u64::from(t)),
        }
    }

    /// The keys of the longest sequence (0 for none): what the kernel's keys per block follow
    /// (`abi::kernel`).
    pub fn max_keys(&self) -> u32 {
        match *self {
            Batches::Fixed { seq_k, .. } => seq_k,
            Batches::Varlen { .. } => (0..self.count()).map(|b| self.keys(b).1).max().unwrap_or(0),
        }
    }

    /// The keys of all sequences.
    pub fn tokens_k(&self) -> u64 {
        match *self {
            Batches::Fixed { batch, seq_k, .. } => u64::from(batch) * u64::from(seq_k),
            Batches::Varlen { offsets_k, .. } => offsets_k.last().map_or(0, |&t| u64::from(t)),
        }
    }
}

/// Sequence `b` of cumulative offsets: its first token and its length.
fn span(offsets: &[u32], b: u32) -> (u64, u32) {
    let (start, end) = (offsets[b as usize], offsets[b as usize + 1]);
    (u64::from(start), end - start)
}

/// The elements each tensor must hold: one past the last element the problem reads (Q, K, V)
/// or writes (O), from its strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extents {
    pub q: u64,
    pub k: u64,
    pub v: u64,
    pub o: u64,
    /// `LSE`'s f32 values, contiguous: `[batch, heads_q, seq_q]` for fixed batches,
    /// `[heads_q, total queries]` for variable-length ones (FlashAttention's).
    pub lse: u64,
}

/// One attention forward problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem<'a> {
    pub batches: Batches<'a>,
    /// Query heads (and O's).
    pub heads_q: u32,
    /// K and V heads: query head `h` reads K/V head `h / (heads_q / heads_kv)`.
    pub heads_kv: u32,
    pub head_dim: u32,
    pub element: Element,
    pub mask: Mask,
    /// The factor of `Q Kᵀ` (`None`: 1 / sqrt(head_dim)).
    pub scale: Option<f32>,
    pub q: Strides,
    pub k: Strides,
    pub v: Strides,
    pub o: Strides,
}

impl<'a> Problem<'a> {
    /// Contiguous bf16 tensors of `batch` sequences, no mask, the default scale.
    pub const fn contiguous(
        batch: u32,
        (seq_q, seq_k): (u32, u32),
        heads: (u32, u32),
        head_dim: u32,
    ) -> Problem<'static> {
        let batches = Batches::Fixed {
            batch,
            seq_q,
            seq_k,
        };
        Problem::dense(batches, (seq_q, seq_k), heads, head_dim)
    }

    /// Contiguous bf16 `[tokens, heads, head_dim]` tensors of packed sequences, no mask, the
    /// default scale.
    pub const fn varlen(
        offsets_q: &'a [u32],
        offsets_k: &'a [u32],
        heads: (u32, u32),
        head_dim: u32,
    ) -> Self {
        let batches = Batches::Varlen {
            offsets_q,
            offsets_k,
        };
        Problem::dense(batches, (1, 1), heads, head_dim)
    }

    /// Contiguous bf16 tensors of `seq_q` and `seq_k` rows a sequence (the batch strides' rows;
    /// 1 for packed sequences, whose batch stride is not used), no mask, the default scale.
    const fn dense(
        batches: Batches<'a>,
        (seq_q, seq_k): (u32, u32),
        (heads_q, heads_kv): (u32, u32),
        head_dim: u32,
    ) -> Self {
        Problem {
            batches,
            heads_q,
            heads_kv,
            head_dim,
            element: Element::Bf16,
            mask: Mask::None,
            scale: None,
            q: Strides::contiguous(seq_q, heads_q, head_dim),
            k: Strides::contiguous(seq_k, heads_kv, head_dim),
            v: Strides::contiguous(seq_k, heads_kv, head_dim),
            o: Strides::contiguous(seq_q, heads_q, head_dim),
        }
    }

    /// The same problem with `mask`.
    pub const fn with_mask(self, mask: Mask) -> Self {
        Self { mask, ..self }
    }

    /// The scale the kernels use: the given one, or 1 / sqrt(head_dim).
    pub fn scale(&self) -> f32 {
        self.scale
            .unwrap_or_else(|| (1.0 / sqrt(f64::from(self.head_dim.max(1)))) as f32)
    }

    /// Query heads per K/V head.
    pub fn group(&self) -> u32 {
        self.heads_q / self.heads_kv.max(1)
    }

    /// Every rule a launch needs, the first broken one as an error: the head dimension, the
    /// heads, the sequences (and the offsets of variable-length ones), the scale, and each
    /// tensor's strides (multiples of 8 elements; O's rows must not overlap; each within what a
    /// tensor copy addresses). The buffers' sizes are the host's to compare with
    /// [`extents`](Self::extents).
    pub fn check(&self) -> Result<(), AttentionError> {
        if !HEAD_DIMS.contains(&self.head_dim) {
            return Err(AttentionError::HeadDim(self.head_dim));
        }
        if self.heads_q == 0 || self.heads_kv == 0 || !self.heads_q.is_multiple_of(self.heads_kv) {
            return Err(AttentionError::Heads {
                heads_q: self.heads_q,
                heads_kv: self.heads_kv,
            });
        }
        self.check_batches()?;
        if let Some(scale) = self.scale
            && !(scale * core::f32::consts::LOG2_E).is_finite()
        {
            // NaN, infinite, or a finite scale whose base-2 factor (the kernels fold log2(e)
            // into it) overflows: every weight would be NaN.
            return Err(AttentionError::Scale(scale));
        }
        for tensor in [Tensor::Q, Tensor::K, Tensor::V, Tensor::O] {
            self.check_strides(tensor)?;
        }
        for (what, tensor) in [
            ("Q", Some(Tensor::Q)),
            ("K", Some(Tensor::K)),
            ("V", Some(Tensor::V)),
            ("O", Some(Tensor::O)),
            ("LSE", None),
        ] {
            let fits = self
                .extent_of(tensor)
                .and_then(|e| e.checked_mul(self.element_bytes_of(tensor)))
                .is_some_and(|bytes| bytes <= MAX_EXTENT_BYTES);
            if !fits {
                return Err(AttentionError::Extent { what });
            }
        }
        Ok(())
    }

    /// The bytes of one element of `tensor` (`None`: `LSE`, f32).
    fn element_bytes_of(&self, tensor: Option<Tensor>) -> u64 {
        tensor.map_or(4, |_| self.element.bytes())
    }

    /// The elements `tensor` (`None`: `LSE`) must hold, or `None` where that overflows 64 bits.
    fn extent_of(&self, tensor: Option<Tensor>) -> Option<u64> {
        let Some(tensor) = tensor else {
            return u64::from(self.heads_q).checked_mul(self.batches.tokens_q());
        };
        let (strides, heads, rows) = self.dims(tensor);
        let sequences = match self.batches {
            Batches::Fixed { batch, .. } => u64::from(batch),
            Batches::Varlen { .. } => 1,
        };
        if rows == 0 || sequences == 0 || heads == 0 {
            return Some(0);
        }
        (sequences - 1)
            .checked_mul(strides.batch)?
            .checked_add((rows - 1).checked_mul(strides.seq)?)?
            .checked_add(u64::from(heads - 1).checked_mul(strides.head)?)?
            .checked_add(u64::from(self.head_dim))
    }

    /// The sequences' rules.
    fn check_batches(&self) -> Result<(), AttentionError> {
        match self.batches {
            Batches::Fixed {
                batch,
                seq_q,
                seq_k,
            } => {
                for (what, n) in [("the batch", batch), ("seq_q", seq_q), ("seq_k", seq_k)] {
                    if n == 0 {
                        return Err(AttentionError::Empty { what });
                    }
                }
                for (what, n) in [("seq_q", seq_q), ("seq_k", seq_k)] {
                    if u64::from(n) > MAX_TOKENS {
                        return Err(AttentionError::TooLong {
                            what,
                            tokens: u64::from(n),
                        });
                    }
                }
            }
            Batches::Varlen {
                offsets_q,
                offsets_k,
            } => {
                if offsets_q.len() != offsets_k.len() || offsets_q.len() < 2 {
                    return Err(AttentionError::OffsetCounts {
                        q: offsets_q.len(),
                        k: offsets_k.len(),
                    });
                }
                for (which, offsets) in [("Q", offsets_q), ("K", offsets_k)] {
                    check_offsets(which, offsets)?;
                }
            }
        }
        Ok(())
    }

    /// One tensor's strides: its dimensions (sequences, rows, heads) and their strides.
    fn check_strides(&self, tensor: Tensor) -> Result<(), AttentionError> {
        let (strides, heads, rows) = self.dims(tensor);
        let fixed = matches!(self.batches, Batches::Fixed { .. });
        let sequences = if fixed { self.batches.count() } else { 1 };
        // (name, stride, count): the dimensions that step between rows of `head_dim` elements.
        let dims = [
            ("batch", strides.batch, u64::from(sequences)),
            ("seq", strides.seq, rows),
            ("head", strides.head, u64::from(heads)),
        ];
        for (which, stride, count) in dims {
            if count > 1 && (stride == 0 || !stride.is_multiple_of(8)) {
                return Err(AttentionError::Stride {
                    tensor,
                    which,
                    stride,
                });
            }
            // A dimension of one element is not stepped (the host's maps take the span inside
            // it instead): its stride is not used, as a variable-length batch's `batch`.
            if count > 1 && stride.saturating_mul(self.element.bytes()) >= MAX_STRIDE_BYTES {
                return Err(AttentionError::TooLarge {
                    tensor,
                    elements: stride,
                });
            }
        }
        if tensor == Tensor::O {
            // Writes must not overlap: sorted by stride, each dimension steps over all that the
            // smaller ones span (the classic test of a non-overlapping strided layout).
            let mut sorted = dims;
            sorted.sort_unstable_by_key(|&(_, stride, _)| stride);
            let mut span = u64::from(self.head_dim);
            for (which, stride, count) in sorted {
                if count <= 1 {
                    continue;
                }
                if stride < span {
                    return Err(AttentionError::Overlap {
                        tensor,
                        which,
                        stride,
                        needed: span,
                    });
                }
                span = span.saturating_add((count - 1).saturating_mul(stride));
            }
        }
        Ok(())
    }

    /// A tensor's strides, heads, and rows along `seq` (per sequence for fixed batches, all
    /// tokens for variable-length ones).
    fn dims(&self, tensor: Tensor) -> (Strides, u32, u64) {
        let (rows_q, rows_k) = match self.batches {
            Batches::Fixed { seq_q, seq_k, .. } => (u64::from(seq_q), u64::from(seq_k)),
            Batches::Varlen { .. } => (self.batches.tokens_q(), self.batches.tokens_k()),
        };
        match tensor {
            Tensor::Q => (self.q, self.heads_q, rows_q),
            Tensor::K => (self.k, self.heads_kv, rows_k),
            Tensor::V => (self.v, self.heads_kv, rows_k),
            Tensor::O => (self.o, self.heads_q, rows_q),
        }
    }

    /// The elements each tensor must hold (of a checked problem: [`check`](Self::check) refuses
    /// one whose extents overflow; here an extent that overflows saturates at `u64::MAX`, which
    /// no buffer holds).
    pub fn extents(&self) -> Extents {
        let extent = |tensor| self.extent_of(tensor).unwrap_or(u64::MAX);
        Extents {
            q: extent(Some(Tensor::Q)),
            k: extent(Some(Tensor::K)),
            v: extent(Some(Tensor::V)),
            o: extent(Some(Tensor::O)),
            lse: extent(None),
        }
    }

    /// Where element `d` of row `row` (of sequence `b`) of head `h` of `tensor` is, at its
    /// strides: rows count queries for Q and O, keys for K and V.
    pub fn index(&self, tensor: Tensor, b: u32, row: u32, h: u32, d: u32) -> u64 {
        let strides = match tensor {
            Tensor::Q => self.q,
            Tensor::K => self.k,
            Tensor::V => self.v,
            Tensor::O => self.o,
        };
        let (sequence, token) = match self.batches {
            Batches::Fixed { .. } => (u64::from(b) * strides.batch, u64::from(row)),
            Batches::Varlen { .. } => {
                let (first, _) = match tensor {
                    Tensor::Q | Tensor::O => self.batches.queries(b),
                    Tensor::K | Tensor::V => self.batches.keys(b),
                };
                (0, first + u64::from(row))
            }
        };
        sequence + token * strides.seq + u64::from(h) * strides.head + u64::from(d)
    }

    /// Where `LSE` of query row `row` of sequence `b`, query head `h` is, in [`Extents::lse`]'s
    /// layout.
    pub fn lse_index(&self, b: u32, h: u32, row: u32) -> u64 {
        match self.batches {
            Batches::Fixed { seq_q, .. } => {
                (u64::from(b) * u64::from(self.heads_q) + u64::from(h)) * u64::from(seq_q)
                    + u64::from(row)
            }
            Batches::Varlen { .. } => {
                let (first, _) = self.batches.queries(b);
                u64::from(h) * self.batches.tokens_q() + first + u64::from(row)
            }
        }
    }
}

/// Cumulative offsets: from 0, never decreasing, the total within [`MAX_TOKENS`].
fn check_offsets(which: &'static str, offsets: &[u32]) -> Result<(), AttentionError> {
    if offsets[0] != 0 {
        return Err(AttentionError::Offsets {
            which,
            at: 0,
            before: 0,
            value: offsets[0],
        });
    }
    for (at, pair) in offsets.windows(2).enumerate() {
        if pair[1] < pair[0] {
            return Err(AttentionError::Offsets {
                which,
                at: at + 1,
                before: pair[0],
                value: pair[1],
            });
        }
    }
    let total = u64::from(*offsets.last().unwrap_or(&0));
    if total > MAX_TOKENS {
        return Err(AttentionError::TooLong {
            what: if which == "Q" {
                "the queries of all sequences"
            } else {
                "the keys of all sequences"
            },
            tokens: total,
        });
    }
    Ok(())
}

/// The square root of `x > 0` (Newton's method from a power-of-two guess: `core` has no `sqrt`).
fn sqrt(x: f64) -> f64 {
    let mut y = 1.0;
    while y * y < x {
        y *= 2.0;
    }
    for _ in 0..64 {
        y = 0.5 * (y + x / y);
    }
    y
}

#[cfg(test)]
mod tests;
