//! The launch ABI of the kernels' module and its kernel table: what the kernel crate builds and
//! the host crate launches, written once.
//!
//! Every entry takes one [`Params`] by value. The kernel crate exports [`ABI_VERSION`] as the
//! global `GPU_ATTENTION_ABI`; the host refuses a module whose global differs or is missing, so a
//! module built from another version of the crates, or from another table,
//! is an error when it is loaded, not a launch with the wrong parameters or layout.

use crate::Element;

/// The revision of [`Params`] and of what its fields mean, and of the entries' contract: bump it
/// with every change to them. 4: an entry of a row of CTA pairs is launched in clusters of two and
/// its units are [`KernelSpec::unit_rows`] rows, each CTA taking half. 3: a module whose entries
/// do not wait says so ([`ABI_UNWAITED`];
/// one of revision 2 without the wait, the negative control, exported the plain version, which
/// a host of revision 3 refuses). 2: every entry waits for the stream's previous kernel
/// (`griddepcontrol.wait`) before it touches global memory, which the host's programmatic
/// launches rely on.
const REVISION: u32 = 4;

/// The launch ABI version: [`REVISION`] and every kernel's layout in [`KERNELS`] (element, head
/// dimension, keys per block, stages: what the host's maps and shared memory size follow),
/// hashed (FNV-1a), so that a module and a host built from different tables disagree on it.
pub const ABI_VERSION: u32 = fingerprint(REVISION, &KERNELS);

/// Xor-ed into the exported version by a module whose entries do not wait for the stream's
/// previous kernel (the kernel crate's `unwaited` feature: the negative control of the
/// programmatic chains). Its launch ABI is [`ABI_VERSION`]'s and its results in stream order the
/// same, so the host loads it; but launched as a programmatic dependent it races the kernel
/// before it, so the host never launches it so.
pub const ABI_UNWAITED: u32 = 1 << 31;

const fn fingerprint(revision: u32, kernels: &[KernelSpec]) -> u32 {
    const fn mix(h: u32, word: u32) -> u32 {
        let mut h = h;
        let mut i = 0;
        while i < 4 {
            h ^= (word >> (8 * i)) & 0xFF;
            h = h.wrapping_mul(0x0100_0193);
            i += 1;
        }
        h
    }
    let mut h = mix(0x811C_9DC5, revision);
    let mut i = 0;
    while i < kernels.len() {
        let k = kernels[i];
        h = mix(h, k.element as u32);
        h = mix(h, k.head_dim);
        h = mix(h, k.block_n);
        h = mix(h, k.stages);
        h = mix(h, k.consumers);
        h = mix(h, k.cluster);
        i += 1;
    }
    h
}

/// The shared memory the kernels keep after their tiles: the ring barriers (Q's, K's and V's
/// full and empty `mbarrier`s, 8 bytes each) in one KiB.
pub const BARRIER_BYTES: u32 = 1024;

/// One tensor map: 128 bytes (`CUtensorMap`), in global memory, 64-byte aligned.
pub const MAP_BYTES: u32 = 128;

/// The tensor maps of a launch, in order at [`Params::maps`]: Q, K, V.
pub const MAPS: u32 = 3;

/// The one launch parameter of every entry, passed by value: the host fills it and hands the
/// driver a pointer to it. Addresses are device addresses as integers (0 where not used).
///
/// The tensor maps at `maps` are 4D over `[batch, seq, heads, head_dim]` (innermost first:
/// `head_dim`, heads, rows, sequences; a variable-length batch is one sequence of all the
/// tokens), 16-bit elements, 128-byte swizzle, zeros outside; boxes of 64 elements by one head by
/// [`KernelSpec::q_rows`] rows (Q) or [`KernelSpec::kv_box_rows`] rows (K, V: a block's, or half
/// of it in a row of CTA pairs) by one sequence.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The tensor maps of Q, K and V ([`MAPS`] of [`MAP_BYTES`]), then, for a variable-length
    /// batch, the unit table: `units` records of [`UNIT_WORDS`] `u32` ([`unit_record`]) in the
    /// schedule's order.
    pub maps: u64,
    /// O (`head_dim` 16-bit elements per row, at `o_strides`).
    pub o: u64,
    /// `LSE` (f32, contiguous: `[batch, heads_q, seq_q]`, or `[heads_q, tokens_q]` for a
    /// variable-length batch).
    pub lse: u64,
    /// O's strides in elements: sequence, row, head (the sequence stride is not used for a
    /// variable-length batch).
    pub o_strides: [u64; 3],
    /// Sequences.
    pub batch: u32,
    /// Queries per sequence (a fixed batch; 0 for a variable-length one).
    pub seq_q: u32,
    /// Keys per sequence (a fixed batch; 0 for a variable-length one).
    pub seq_k: u32,
    /// Query heads.
    pub heads_q: u32,
    /// Query heads per K/V head.
    pub group: u32,
    /// The scale times log2(e): the softmax runs in base 2.
    pub scale_log2: f32,
    /// 1: causal, aligned to the bottom right; 0: no mask.
    pub causal: u32,
    /// 1: a variable-length batch (offsets after the maps); 0: fixed.
    pub varlen: u32,
    /// All queries of a variable-length batch (`LSE`'s row length); 0 for a fixed batch.
    pub tokens_q: u32,
    /// The work units (`schedule::Units::count`, in blocks of [`KernelSpec::unit_rows`] rows): a
    /// CTA takes units `blockIdx.x`, `+ gridDim.x`, and so on (in the plan's alternating order);
    /// in a row of CTA pairs a cluster does, both its CTAs the same units.
    pub units: u32,
}

/// Words of a unit record of a variable-length batch's table.
pub const UNIT_WORDS: usize = 8;

/// The record of unit `u` of a variable-length batch: sequence, query head, query block, the
/// sequence's first query token, its queries, its first key token, its keys, 0. The kernels read
/// the table with read-only loads, whose values the PTX check can prove warpgroup-uniform (as
/// `wgmma` needs of the loops they bound); a fixed batch needs none (its units are arithmetic on
/// the parameters).
pub fn unit_record(problem: &crate::Problem<'_>, unit: crate::schedule::Unit) -> [u32; UNIT_WORDS] {
    let (first_q, len_q) = problem.batches.queries(unit.sequence);
    let (first_k, len_k) = problem.batches.keys(unit.sequence);
    [
        unit.sequence,
        unit.head,
        unit.m_block,
        first_q as u32,
        len_q,
        first_k as u32,
        len_k,
        0,
    ]
}

/// Bytes of [`Params`]: the size the host checks the module's parameter against.
pub const PARAMS_BYTES: usize = core::mem::size_of::<Params>();

const _: () = assert!(PARAMS_BYTES == 88 && core::mem::align_of::<Params>() == 8);

/// One kernel of the module: its entry, what it computes and its shared-memory layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// The entry point's name.
    pub entry: &'static str,
    pub element: Element,
    pub head_dim: u32,
    /// Keys per block: the N of `S = Q Kᵀ`'s `wgmma` and the K of `O += P V`'s.
    pub block_n: u32,
    /// Stages of the K ring and of the V ring (each).
    pub stages: u32,
    /// The consumers issue the scores of block j ahead of `P V` of block j - 1 (FlashAttention-3's
    /// intra-warpgroup overlap); otherwise each block's products in turn.
    pub overlap: bool,
    /// The consumer warpgroups take turns issuing their `wgmma`s (FlashAttention-3's
    /// ping-pong, through the toolkit's ordered sequence).
    pub pingpong: bool,
    /// Consumer warpgroups, 64 query rows each: 2, or 3 (FlashAttention-3's 192-row tiles at
    /// head dim 64, where the softmax's exponentials bound the kernel and a third warpgroup
    /// gives each SM sub-partition one more warp to interleave).
    pub consumers: u32,
    /// A warp keeps its rows' old maxima as the exponents' base while they grow by at most 8
    /// (base 2) in a block, so O needs no rescale there (FlashAttention-4's conditional
    /// rescaling; the kernel crate's `softmax`). The result is the same function.
    pub lazy: bool,
    /// Whether [`kernel`] ever chooses the row; the others are measurements, reachable by name
    /// ([`by_name`]).
    pub planned: bool,
    /// CTAs per cluster: 1, or 2 (FlashAttention-3's pairs, for problems without a mask): the
    /// two CTAs of a pair take the two halves of one unit of [`unit_rows`](Self::unit_rows)
    /// query rows, each loads half of every K and V block and multicasts it to both, so each
    /// block crosses from L2 once per pair. Only for a fixed batch without a mask (both halves
    /// then read the same key blocks).
    pub cluster: u32,
}

impl KernelSpec {
    /// 64-element (128-byte) spans of a row: the boxes per tile.
    pub const fn spans(self) -> u32 {
        self.head_dim / 64
    }

    /// Rows of Q per tensor load: one consumer warpgroup's.
    pub const fn q_rows(self) -> u32 {
        64
    }

    /// Query rows per CTA: 64 per consumer warpgroup (`wgmma`'s M); a unit of the schedule is
    /// [`unit_rows`](Self::unit_rows).
    pub const fn block_m(self) -> u32 {
        64 * self.consumers
    }

    /// Query rows per unit of the schedule: [`block_m`](Self::block_m) per CTA of a cluster.
    pub const fn unit_rows(self) -> u32 {
        self.block_m() * self.cluster
    }

    /// Rows of K's and V's tensor-load boxes: a block's, or in a pair half of it (each CTA loads
    /// one half and multicasts it).
    pub const fn kv_box_rows(self) -> u32 {
        self.block_n / self.cluster
    }

    /// Whether the row computes a problem with `causal` and `varlen`: a pair's two halves must
    /// read the same key blocks (no mask, a fixed batch).
    pub const fn takes(self, causal: bool, varlen: bool) -> bool {
        self.cluster == 1 || !(causal || varlen)
    }

    /// Threads per CTA: a producer warpgroup and the consumer warpgroups.
    pub const fn threads(self) -> u32 {
        128 * (1 + self.consumers)
    }

    /// Bytes of one K (or V) stage: `block_n` rows of `head_dim` 16-bit elements.
    pub const fn kv_stage_bytes(self) -> u32 {
        self.block_n * self.head_dim * 2
    }

    /// Bytes of the Q tile: [`block_m`](Self::block_m) rows.
    pub const fn q_bytes(self) -> u32 {
        self.block_m() * self.head_dim * 2
    }

    /// Where K's stage `s` starts (after Q).
    pub const fn k_at(self, s: u32) -> u32 {
        self.q_bytes() + s * self.kv_stage_bytes()
    }

    /// Where V's stage `s` starts (after K's stages).
    pub const fn v_at(self, s: u32) -> u32 {
        self.q_bytes() + (self.stages + s) * self.kv_stage_bytes()
    }

    /// Where the barriers start: after the tiles.
    pub const fn barriers_at(self) -> u32 {
        self.q_bytes() + 2 * self.stages * self.kv_stage_bytes()
    }

    /// The dynamic shared memory of a launch.
    pub const fn smem_bytes(self) -> u32 {
        self.barriers_at() + BARRIER_BYTES
    }
}

/// The most dynamic shared memory a CTA may have on sm_90 (227 KiB: CUDA C++ Programming Guide,
/// "Compute Capabilities", "Technical Specifications" table).
pub const MAX_SMEM: u32 = 227 * 1024;

/// The longest key sequence a problem may have for the short rows of the table (128 keys a
/// block) to be chosen over the long ones (192) at head dims 64 and 128: a short sequence's last,
/// partly masked block (and a causal one's diagonal blocks) waste fewer keys. Runs 83 and 84
/// measured 192-key blocks slower at 512 and 1k keys (D 128 causal, 512: 169 against 228 TFLOP/s
/// with 128) and faster from 2k, except D 128 causal at 2k (368 against 418 with 128, run 76),
/// where the short rows stay up to [`SHORT_KEYS_CAUSAL_D128`] (tests/results/2026-12-03-issue25.md).
pub const SHORT_KEYS: u32 = 1024;

/// [`SHORT_KEYS`] for a causal problem at head dim 128. Raised from 2048 (runs 76, 83 and 84, on
/// the first kernels) to 4096 by runs 123 and 128 (an H100, the 128-key row beside the plan's in
/// one process, `bench_attention.py --modules n128=@d128_n128`): the benchmark's causal varlen
/// row (16k tokens in sequences of 12 to 3875) +8.9 % and +13.7 % on 128-key blocks (410 and
/// 466 TFLOP/s against 377 and 410), causal 4k +3.3 % (504 against 488); at 8k -2.0 %, at 16k
/// +0.9 %, so the long rows stay from 4097 keys.
pub const SHORT_KEYS_CAUSAL_D128: u32 = 4096;

/// Above this many keys (and up to [`SHORT_KEYS`]) a problem without a mask that may run in CTA
/// pairs runs the short rows' pairs, in bf16 (the module has no f16 pairs of them): 192 query
/// rows by 128 keys at head dim 64, 128 by 128 at head dim 128. Run 108 (an H100, two
/// alternating processes each beside cuDNN, the benchmark's cells without a mask) measured them
/// at 1k keys +7.6 % at 64 (393 and 391 TFLOP/s against 365 and 364 for the single 128-row CTAs)
/// and +2.4 % at 128 (528 and 525 against 514 and 514); at 512 keys -17 % at 64 (264 against
/// 318) and -0.7 % at 128, and above 1k slower than the long rows (tests/results/2026-12-03-issue25.md).
pub const SHORT_PAIRS_ABOVE: u32 = 512;

/// A row of two consumer warpgroups, one CTA per cluster, that [`kernel`] may choose.
const fn spec(entry: &'static str, element: Element, head_dim: u32, block_n: u32) -> KernelSpec {
    wide(entry, element, head_dim, block_n, 2)
}

/// A row of `consumers` consumer warpgroups, one CTA per cluster, that [`kernel`] may choose
/// ([`KernelSpec::measured`] and [`KernelSpec::paired`] change that).
const fn wide(
    entry: &'static str,
    element: Element,
    head_dim: u32,
    block_n: u32,
    consumers: u32,
) -> KernelSpec {
    // Stages: as many as the shared memory holds, at most 3.
    let stages = if head_dim == 64 { 3 } else { 2 };
    // The consumers' loop per head dimension, as measured on the H200 against the other
    // choices in the same call (run 82, tests/results/2026-12-03-issue25.md): at 64 the plain
    // loop (the two warpgroups interleave by themselves; the overlaps' registers cost more than
    // they hide), at 128 both of FlashAttention-3's overlaps, at 256 the intra-warpgroup one.
    let (overlap, pingpong) = match head_dim {
        64 => (false, false),
        128 => (true, true),
        _ => (true, false),
    };
    KernelSpec {
        entry,
        element,
        head_dim,
        block_n,
        stages,
        overlap,
        pingpong,
        consumers,
        // FlashAttention-4's conditional rescaling at head dim 256, where O's 128 accumulators
        // per thread make each rescale dear: run 97 (H200, two alternating processes each,
        // seq 8k beside cuDNN) measured it +11 % without a mask (765 and 759 TFLOP/s against
        // 681 and 688) and +6 % causal (697, 693 against 656, 651), and -5 % to -7 % at head dim
        // 64, mixed at 128 (tests/results/2026-12-03-issue25.md).
        lazy: head_dim == 256,
        planned: true,
        cluster: 1,
    }
}

impl KernelSpec {
    /// The row as a measurement: [`kernel`] never chooses it ([`by_name`] reaches it).
    const fn measured(mut self) -> Self {
        self.planned = false;
        self
    }

    /// The row in pairs of CTAs ([`KernelSpec::cluster`] 2).
    const fn paired(mut self) -> Self {
        self.cluster = 2;
        self
    }
}

/// The module's kernels. The plan's rows ([`kernel`], [`KernelSpec::planned`]), per element
/// type: head dim 64 with 128 keys a block for key sequences up to [`SHORT_KEYS`] and, above,
/// 192 query rows (three consumer warpgroups) by 128 keys; head dim 128 with 128 keys a block up
/// to [`short_keys`] and 192 above, in CTA pairs (`_c2`) where the problem allows them; head dim
/// 256 with 64 (the accumulators of O take 128 of a thread's registers); in bf16, the pairs of
/// 192 rows by 128 keys at 64 and of 128 keys at 128 from [`SHORT_PAIRS_ABOVE`] keys to
/// [`SHORT_KEYS`]. The measurement rows, which [`kernel`] does not choose ([`by_name`]): head
/// dim 64 with two consumer warpgroups by 192 keys (the plan's row before run 97) and, in bf16
/// only, FlashAttention-3's other tiles (192 rows by 192 keys at 64, 176 keys at 128, 80 at 256)
/// and CTA pairs of 176 keys at 128 and of 64 at 256.
pub const KERNELS: [KernelSpec; 21] = [
    spec("attention_fwd_bf16_d64_n128", Element::Bf16, 64, 128),
    wide("attention_fwd_bf16_d64_m192", Element::Bf16, 64, 128, 3),
    spec("attention_fwd_bf16_d128_n192", Element::Bf16, 128, 192),
    spec("attention_fwd_bf16_d128_n128", Element::Bf16, 128, 128),
    spec("attention_fwd_bf16_d256_n64", Element::Bf16, 256, 64),
    spec("attention_fwd_f16_d64_n128", Element::F16, 64, 128),
    wide("attention_fwd_f16_d64_m192", Element::F16, 64, 128, 3),
    spec("attention_fwd_f16_d128_n192", Element::F16, 128, 192),
    spec("attention_fwd_f16_d128_n128", Element::F16, 128, 128),
    spec("attention_fwd_f16_d256_n64", Element::F16, 256, 64),
    spec("attention_fwd_bf16_d64_n192", Element::Bf16, 64, 192).measured(),
    spec("attention_fwd_f16_d64_n192", Element::F16, 64, 192).measured(),
    wide(
        "attention_fwd_bf16_d64_m192_n192",
        Element::Bf16,
        64,
        192,
        3,
    )
    .measured(),
    spec("attention_fwd_bf16_d128_n176", Element::Bf16, 128, 176).measured(),
    spec("attention_fwd_bf16_d256_n80", Element::Bf16, 256, 80).measured(),
    spec("attention_fwd_bf16_d128_n192_c2", Element::Bf16, 128, 192).paired(),
    spec("attention_fwd_bf16_d128_n176_c2", Element::Bf16, 128, 176)
        .paired()
        .measured(),
    spec("attention_fwd_bf16_d256_n64_c2", Element::Bf16, 256, 64)
        .paired()
        .measured(),
    spec("attention_fwd_f16_d128_n192_c2", Element::F16, 128, 192).paired(),
    spec("attention_fwd_bf16_d128_n128_c2", Element::Bf16, 128, 128).paired(),
    wide("attention_fwd_bf16_d64_m192_c2", Element::Bf16, 64, 128, 3).paired(),
];

const _: () = {
    let mut i = 0;
    while i < KERNELS.len() {
        let k = KERNELS[i];
        assert!(
            k.smem_bytes() <= MAX_SMEM,
            "an attention kernel's layout exceeds the shared memory"
        );
        assert!(k.head_dim % 64 == 0 && k.block_n % 16 == 0 && k.block_n <= 256);
        // The barriers' KiB holds Q's two and the rings' 4 per stage.
        assert!((2 + 4 * k.stages) * 8 <= BARRIER_BYTES);
        assert!(k.consumers == 2 || k.consumers == 3);
        // A pair's half block is a whole number of the 128-byte swizzle's 8-row atoms.
        assert!(k.cluster == 1 || (k.cluster == 2 && k.block_n % 16 == 0));
        i += 1;
    }
};

/// The longest key sequence of the short rows at `head_dim` ([`SHORT_KEYS`], or
/// [`SHORT_KEYS_CAUSAL_D128`]).
pub const fn short_keys(head_dim: u32, causal: bool) -> u32 {
    if causal && head_dim == 128 {
        SHORT_KEYS_CAUSAL_D128
    } else {
        SHORT_KEYS
    }
}

/// The kernel of `element` and `head_dim` for a problem whose longest key sequence is
/// `max_keys`, if the module has one (a row with [`KernelSpec::planned`]): up to
/// [`short_keys`] keys, 128 query rows by 128 keys a block; above, at head dim 64 192 query rows
/// (three consumer warpgroups) by 128 keys, at 128 128 rows by 192 keys, in CTA pairs when
/// `pairs` (the caller's word that the batch is fixed and clusters of two fit on the GPU) and
/// the problem has no mask; head dim 256 has one row. With `pairs` and no mask, from
/// [`SHORT_PAIRS_ABOVE`] keys up to [`SHORT_KEYS`], bf16 runs the short rows' pairs (192 rows
/// by 128 keys at 64, 128 by 128 at 128); f16, which has no such rows, the single CTAs.
///
/// Run 97 (H200, two alternating processes each, seq 8k beside cuDNN) measured the 192-row
/// kernel at head dim 64 +7 % to +9 % without a mask (532, 539 TFLOP/s against 497, 493 for
/// 128 rows by 192 keys) and +6 % causal (494, 493 against 466, 466); it runs from
/// [`SHORT_KEYS`] up, where the 192-key row did. Run 98 (an H100, the same method at 2k and 8k)
/// measured the pairs at head dim 128 without a mask +6 % at 2k (603, 607 against 572, 570) and
/// +7 % at 8k (688, 648 against 627, 624), and the pairs at head dim 256 5-10 % slower (not
/// planned).
pub const fn kernel(
    element: Element,
    head_dim: u32,
    max_keys: u32,
    causal: bool,
    pairs: bool,
) -> Option<KernelSpec> {
    let short = max_keys <= short_keys(head_dim, causal);
    let pair = pairs && !causal;
    let short_pair = pair && max_keys > SHORT_PAIRS_ABOVE;
    // The row by the table (keys a block, consumer warpgroups), and the pair that replaces it
    // where the module has one.
    let ((block_n, consumers), paired) = match (head_dim, short) {
        (256, _) => ((64, 2), None),
        (64, true) => ((128, 2), if short_pair { Some((128, 3)) } else { None }),
        (64, false) => ((128, 3), None),
        (_, true) => ((128, 2), if short_pair { Some((128, 2)) } else { None }),
        (_, false) => ((192, 2), if pair { Some((192, 2)) } else { None }),
    };
    if let Some((block_n, consumers)) = paired
        && let Some(k) = planned_row(element, head_dim, block_n, consumers, 2)
    {
        return Some(k);
    }
    planned_row(element, head_dim, block_n, consumers, 1)
}

/// The planned row of `element` and `head_dim` with `block_n` keys a block, `consumers`
/// warpgroups and `cluster` CTAs a cluster, if the module has one.
const fn planned_row(
    element: Element,
    head_dim: u32,
    block_n: u32,
    consumers: u32,
    cluster: u32,
) -> Option<KernelSpec> {
    let mut i = 0;
    while i < KERNELS.len() {
        let k = KERNELS[i];
        if k.planned
            && k.head_dim == head_dim
            && k.consumers == consumers
            && k.block_n == block_n
            && k.cluster == cluster
            && same_element(k.element, element)
        {
            return Some(k);
        }
        i += 1;
    }
    None
}

const fn same_element(a: Element, b: Element) -> bool {
    matches!(
        (a, b),
        (Element::Bf16, Element::Bf16) | (Element::F16, Element::F16)
    )
}

/// The row of `element` whose entry is `attention_fwd_<element>_<name>` (`name` as `d64_n192`,
/// `d128_n176`), planned or not: what a measurement runs instead of [`kernel`]'s choice.
pub fn by_name(element: Element, name: &str) -> Option<KernelSpec> {
    let prefix = match element {
        Element::Bf16 => "attention_fwd_bf16_",
        Element::F16 => "attention_fwd_f16_",
    };
    KERNELS
        .iter()
        .find(|k| k.entry.strip_prefix(prefix) == Some(name))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HEAD_DIMS;

    #[test]
    fn every_supported_problem_has_a_kernel() {
        for element in [Element::Bf16, Element::F16] {
            for d in HEAD_DIMS {
                for causal in [false, true] {
                    let limit = if causal && d == 128 { 4096 } else { 1024 };
                    assert_eq!(short_keys(d, causal), limit);
                    for keys in [1, limit, limit + 1, 1 << 20] {
                        for pairs in [false, true] {
                            let k = kernel(element, d, keys, causal, pairs).expect("a kernel");
                            assert!(k.planned, "{}", k.entry);
                            assert_eq!((k.element, k.head_dim), (element, d));
                            // The short rows' pairs: bf16, no mask, above 512 keys.
                            let short_pair = d != 256
                                && keys <= limit
                                && keys > SHORT_PAIRS_ABOVE
                                && pairs
                                && !causal
                                && element == Element::Bf16;
                            let (block_n, consumers) = match (d, keys <= limit) {
                                (256, _) => (64, 2),
                                (64, true) if short_pair => (128, 3),
                                (_, true) => (128, 2),
                                (64, false) => (128, 3),
                                (_, false) => (192, 2),
                            };
                            let cluster =
                                if (d == 128 && keys > limit && pairs && !causal) || short_pair {
                                    2
                                } else {
                                    1
                                };
                            assert_eq!(
                                (k.block_n, k.consumers, k.lazy, k.cluster),
                                (block_n, consumers, d == 256, cluster),
                                "{} for {keys} keys",
                                k.entry
                            );
                            assert_eq!(k.block_m(), 64 * consumers);
                            // The plan never gives a row that does not take the problem.
                            assert!(k.takes(causal, !pairs));
                        }
                    }
                }
            }
        }
        assert_eq!(kernel(Element::Bf16, 96, 1, false, true), None);
        // Every planned row is some problem's; every row is reachable by its name, and only
        // there: the measurement rows are never the plan's.
        let planned: std::vec::Vec<_> = HEAD_DIMS
            .iter()
            .flat_map(|&d| {
                [Element::Bf16, Element::F16]
                    .into_iter()
                    .flat_map(move |e| {
                        [1, SHORT_KEYS, 1 << 20].into_iter().flat_map(move |keys| {
                            [(false, false), (false, true), (true, true)]
                                .map(|(c, pairs)| kernel(e, d, keys, c, pairs))
                        })
                    })
            })
            .flatten()
            .map(|k| k.entry)
            .collect();
        for k in KERNELS {
            assert_eq!(k.planned, planned.contains(&k.entry), "{}", k.entry);
            let prefix = match k.element {
                Element::Bf16 => "attention_fwd_bf16_",
                Element::F16 => "attention_fwd_f16_",
            };
            let name = k.entry.strip_prefix(prefix).expect("the element's prefix");
            assert_eq!(by_name(k.element, name), Some(k));
        }
        assert_eq!(by_name(Element::F16, "d128_n176"), None);
        assert_eq!(by_name(Element::Bf16, "d96_n128"), None);
        let k = by_name(Element::Bf16, "d64_m192_n192").expect("a measurement row");
        assert_eq!(
            (k.block_m(), k.threads(), k.block_n, k.planned),
            (192, 512, 192, false)
        );
        let k = by_name(Element::Bf16, "d128_n176_c2").expect("a pair row");
        assert_eq!(
            (k.cluster, k.block_m(), k.unit_rows(), k.kv_box_rows()),
            (2, 128, 256, 88)
        );
        assert!(k.takes(false, false) && !k.takes(true, false) && !k.takes(false, true));
        for k in KERNELS.iter().filter(|k| k.cluster == 1) {
            assert!(k.takes(true, true));
            assert_eq!((k.unit_rows(), k.kv_box_rows()), (k.block_m(), k.block_n));
        }
    }

    #[test]
    fn layouts_are_aligned_and_fit() {
        for k in KERNELS {
            // Every tile starts at a 1024-byte boundary (the 128-byte swizzle's atom).
            for at in [
                k.q_bytes(),
                k.k_at(1),
                k.v_at(0),
                k.v_at(1),
                k.barriers_at(),
            ] {
                assert_eq!(at % 1024, 0, "{}", k.entry);
            }
            assert!(k.smem_bytes() <= MAX_SMEM);
        }
    }

    #[test]
    fn the_abi_version_follows_the_revision_and_every_layout_field() {
        assert_eq!(ABI_VERSION, fingerprint(REVISION, &KERNELS));
        assert_ne!(ABI_VERSION, fingerprint(REVISION + 1, &KERNELS));
        // Each field the host's maps or shared memory follow, changed in one kernel.
        let changes: [fn(&mut KernelSpec); 6] = [
            |k| k.block_n += 64,
            |k| k.stages += 1,
            |k| k.head_dim *= 2,
            |k| k.element = Element::F16,
            |k| k.consumers += 1,
            |k| k.cluster = 2,
        ];
        for change in changes {
            let mut table = KERNELS;
            change(&mut table[1]);
            assert_ne!(ABI_VERSION, fingerprint(REVISION, &table));
        }
        // The loop's overlaps, the rescale and whether the plan chooses the row do not change what
        // the host does.
        let mut table = KERNELS;
        table[0].overlap = !table[0].overlap;
        table[0].pingpong = !table[0].pingpong;
        table[0].lazy = !table[0].lazy;
        table[0].planned = !table[0].planned;
        assert_eq!(ABI_VERSION, fingerprint(REVISION, &table));
    }
}
