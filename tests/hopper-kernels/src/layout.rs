//! What the kernels and the host test (`tests/hopper-test`) agree on: the case lists, launch
//! shapes, and the values the kernels write or check. The host compiles this same file
//! (`#[path]`), so the two cannot drift apart. Pure: no dependencies, no `unsafe`.

/// Threads per warpgroup (every wgmma kernel is one warpgroup).
pub const WARPGROUP: u32 = 128;
/// Lanes per warp.
pub const WARP: u32 = 32;
/// The rows of every wgmma tile (`m64`).
pub const WGMMA_M: u32 = 64;

/// The wgmma cases: `$m!(entry, form, a, b, n, k_steps, layout, scale_a);` for each.
///
/// - `form`: `Ss` (A and B in shared memory) or `Rs` (A in registers, B in shared memory);
/// - `a`, `b`: the input types (`Bf16`, `F16`, `E4m3`, `E5m2`), K = 16 per step for 16-bit and
///   32 for 8-bit inputs, so one step is 32 bytes of a row whatever the type;
/// - `n`: the tile's columns; `k_steps`: instructions (K = `k_steps` steps), the first with
///   `scale_d` false, the others accumulating, each descriptor advanced by one step;
/// - `layout`: how A and B sit in shared memory, K-major: `B32`, `B64`, `B128` (swizzled, a row
///   per span: `k_steps * 32` bytes must fit the span) or `Interleaved` (no swizzle: 8 x 16-byte
///   core matrices, LBO = 128 bytes along K, SBO = a row's core matrices along M/N); or `B128Mn`
///   (16-bit inputs only): A K-major as `B128`, B MN-major with 128-byte swizzle, its K rows of N
///   elements in blocks of 64 columns ([`mn_block_bytes`] apart: LBO; the 8-row groups along K
///   1024 bytes apart: SBO), read with the transpose immediate;
/// - `scale_a`: the `SCALE_A` immediate, 1 or -1 (D = scale_a * A B^T).
///
/// A is 64 x K, B is N x K (both K contiguous in global memory, as the host writes them; for
/// `B128Mn` the host writes B transposed, K rows of N), D is 64 x N f32, row-major, written
/// through `gpu_hopper::wgmma::fragment::accumulator`.
macro_rules! wgmma_cases {
    ($m:ident) => {
        // bf16: the GEMM runs m64n{64,128,256}k16 SS with B128 only.
        $m!(wgmma_ss_bf16_n16_b128_k4, Ss, Bf16, Bf16, 16, 4, B128, 1);
        $m!(wgmma_ss_bf16_n64_b64_k2_neg, Ss, Bf16, Bf16, 64, 2, B64, -1);
        $m!(
            wgmma_ss_bf16_n32_interleaved_k2,
            Ss,
            Bf16,
            Bf16,
            32,
            2,
            Interleaved,
            1
        );
        $m!(wgmma_rs_bf16_n16_b128_k4, Rs, Bf16, Bf16, 16, 4, B128, 1);
        $m!(wgmma_rs_bf16_n64_b32_k1, Rs, Bf16, Bf16, 64, 1, B32, 1);
        $m!(wgmma_rs_bf16_n256_b64_k2, Rs, Bf16, Bf16, 256, 2, B64, 1);
        // B MN-major (N contiguous, read with the transpose immediate), 128-byte swizzle: the
        // form of attention's P V, whose V tile is keys x head_dim with head_dim contiguous.
        $m!(wgmma_rs_bf16_n64_mn128_k4, Rs, Bf16, Bf16, 64, 4, B128Mn, 1);
        $m!(
            wgmma_rs_bf16_n128_mn128_k2,
            Rs,
            Bf16,
            Bf16,
            128,
            2,
            B128Mn,
            1
        );
        $m!(
            wgmma_ss_bf16_n64_mn128_k2,
            Ss,
            Bf16,
            Bf16,
            64,
            2,
            B128Mn,
            -1
        );
        $m!(wgmma_rs_f16_n256_mn128_k1, Rs, F16, F16, 256, 1, B128Mn, 1);
        // f16.
        $m!(wgmma_ss_f16_n32_b32_k1, Ss, F16, F16, 32, 1, B32, 1);
        $m!(wgmma_ss_f16_n128_b128_k2, Ss, F16, F16, 128, 2, B128, 1);
        $m!(wgmma_rs_f16_n64_b128_k2, Rs, F16, F16, 64, 2, B128, -1);
        // FP8 (K = 32 per step).
        $m!(wgmma_ss_e4m3_n64_b128_k2, Ss, E4m3, E4m3, 64, 2, B128, 1);
        $m!(wgmma_ss_e4m3_n256_b32_k1, Ss, E4m3, E4m3, 256, 1, B32, 1);
        $m!(wgmma_ss_e5m2_n16_b64_k2, Ss, E5m2, E5m2, 16, 2, B64, 1);
        $m!(
            wgmma_ss_e5m2_n96_interleaved_k1,
            Ss,
            E5m2,
            E5m2,
            96,
            1,
            Interleaved,
            1
        );
        $m!(
            wgmma_ss_e4m3_e5m2_n32_b128_k4,
            Ss,
            E4m3,
            E5m2,
            32,
            4,
            B128,
            1
        );
        $m!(
            wgmma_ss_e5m2_e4m3_n192_b64_k1,
            Ss,
            E5m2,
            E4m3,
            192,
            1,
            B64,
            -1
        );
        $m!(wgmma_rs_e4m3_n32_b128_k2, Rs, E4m3, E4m3, 32, 2, B128, 1);
        $m!(wgmma_rs_e5m2_n64_b32_k1, Rs, E5m2, E5m2, 64, 1, B32, 1);
        $m!(
            wgmma_rs_e4m3_e5m2_n128_b64_k2,
            Rs,
            E4m3,
            E5m2,
            128,
            2,
            B64,
            1
        );
        $m!(
            wgmma_rs_e5m2_e4m3_n16_interleaved_k2,
            Rs,
            E5m2,
            E4m3,
            16,
            2,
            Interleaved,
            1
        );
    };
}

/// The bytes between the 64-column blocks of an MN-major B of `k_steps` 16-bit K steps: one
/// block holds all K rows of 128 bytes (the descriptor's LBO).
pub const fn mn_block_bytes(k_steps: u32) -> u32 {
    k_steps * 16 * 128
}

/// The dynamic shared memory of an MN-major case: A's 64 rows of 128 bytes, then B's blocks.
pub const fn wgmma_mn_smem_bytes(n: u32, k_steps: u32) -> u32 {
    WGMMA_M * 128 + n.div_ceil(64) * mn_block_bytes(k_steps)
}

/// Bytes of one K step of a row: 16 16-bit or 32 8-bit elements.
pub const STEP_BYTES: u32 = 32;
/// The interleaved layout's distance between core matrices along K (LBO).
pub const INTERLEAVED_LBO: u32 = 128;

/// The interleaved layout's distance between 8-row groups along M/N (SBO): a row's core
/// matrices side by side, `k_steps * 2` of them.
pub const fn interleaved_sbo(k_steps: u32) -> u32 {
    k_steps * (STEP_BYTES / 16) * INTERLEAVED_LBO
}

/// The dynamic shared memory of a wgmma case whose rows take `row_bytes` in shared memory (the
/// swizzle span, or for the interleaved layout the row's bytes): A's 64 rows, then B's `n`.
pub const fn wgmma_smem_bytes(n: u32, row_bytes: u32) -> u32 {
    (WGMMA_M + n) * row_bytes
}

/// Named barriers: the words the producer warps write per round.
pub const NAMED_BUFFER_WORDS: u32 = 256;
/// The dynamic shared memory of a named-barrier case: the buffer, then room for the barriers'
/// shadow of checked builds (the kernel checks at compile time that both fit).
pub const NAMED_SMEM_BYTES: u32 = NAMED_BUFFER_WORDS * 4 + 256;
/// Words of output per consumer thread: errors, then the wrapping sum of the words it read.
pub const NAMED_OUT_WORDS: u32 = 2;

/// The named-barrier cases: `$m!(entry, producer_warps, consumer_warps);` (a block of
/// `producer_warps + consumer_warps` warps; consumer thread `c` checks the words `c`, `c +
/// consumer threads`, ... of each round).
macro_rules! named_barrier_cases {
    ($m:ident) => {
        $m!(named_barrier_p1_c3, 1, 3);
        $m!(named_barrier_p2_c6, 2, 6);
    };
}

/// A 32-bit mix (the finaliser of MurmurHash3).
pub const fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    x
}

/// Word `word` of round `round` of block `block` in the named-barrier test.
pub const fn named_value(seed: u32, block: u32, round: u32, word: u32) -> u32 {
    mix(seed ^ mix(block.wrapping_mul(0x9E37_79B9) ^ mix(round.wrapping_mul(0x0100_0193) ^ word)))
}

/// Ordered sequence: its rings.
pub const SEQUENCE_DEPTH: usize = 2;
/// The dynamic shared memory of an ordered-sequence case: room for its storage (the kernel
/// checks at compile time that it fits).
pub const SEQUENCE_SMEM_BYTES: u32 = 1024;

/// The ordered-sequence cases: `$m!(entry, groups);` (a block of `groups` warpgroups, each a
/// group of the sequence, `SEQUENCE_DEPTH` rings).
macro_rules! sequence_cases {
    ($m:ident) => {
        $m!(sequence_d2_g2, 2);
        $m!(sequence_d2_g3, 3);
    };
}

/// The named-turns cases (`gpu_hopper::turns`): `$m!(entry, groups);` (a block of `groups`
/// warpgroups, each a group of the turns; the log of the ordered-sequence cases, in one order).
macro_rules! named_turns_cases {
    ($m:ident) => {
        $m!(named_turns_g2, 2);
        $m!(named_turns_g3, 3);
    };
}

/// The dynamic shared memory of a named-turns case: the registry's shadow (checked builds).
pub const TURNS_SMEM_BYTES: u32 = 1024;

/// A log entry of the ordered-sequence test: the group and its turn.
pub const fn sequence_entry(group: u32, turn: u32) -> u32 {
    (group << 16) | turn
}

/// The group and turn of a log entry.
pub const fn sequence_decode(entry: u32) -> (u32, u32) {
    (entry >> 16, entry & 0xFFFF)
}

/// Programmatic dependent launch: threads per block of both kernels.
pub const PDL_THREADS: u32 = 128;
/// Words each thread of the primary writes.
pub const PDL_WORDS_PER_THREAD: u32 = 4;

/// Word `i` of the primary kernel's data.
pub const fn pdl_value(seed: u32, i: u32) -> u32 {
    mix(seed ^ i.wrapping_mul(0x2545_F491)) | 1
}

/// What the reduction kernels do with their box: `tensor_reduce_add`, `_min`, `_max`, or a
/// plain `tensor_store` (the same kernel, so that a store and a reduction of the same map and box
/// are compared).
pub const REDUCE_ADD: u32 = 0;
/// See [`REDUCE_ADD`].
pub const REDUCE_MIN: u32 = 1;
/// See [`REDUCE_ADD`].
pub const REDUCE_MAX: u32 = 2;
/// See [`REDUCE_ADD`].
pub const REDUCE_STORE: u32 = 3;

/// A broken kernel of the checked build (`broken.rs`, feature `checked`): one mistake with a
/// toolkit barrier that hangs a kernel built without diagnostics; the checked build must end
/// within a second, trapped, with a record that says it. One block, no parameters.
pub struct BrokenCase {
    /// The kernel's name.
    pub name: &'static str,
    /// What goes wrong, in words.
    pub mistake: &'static str,
    /// The block's threads.
    pub threads: u32,
    /// The label given to the barrier's diagnostics (the record's `label`).
    pub label: u32,
    /// The wait budget given with it, in microseconds (the record's `budget_ns` / 1000).
    pub budget_us: u32,
    /// The words one record's plain words (its `Display`) must all say.
    pub says: &'static [&'static str],
    /// Whether that record names a line of the kernel's own file (`broken.rs`).
    pub at_call: bool,
}

/// The dynamic shared memory of every broken kernel: more than the checked storage of a
/// registry's shadow or a 2 x 2 sequence (the kernels check it at compile time).
pub const BROKEN_SMEM_BYTES: u32 = 1024;

/// A 64-thread named barrier that warp 1 never reaches (it returns early): warp 0's `sync`
/// would wait forever in `bar.sync`.
pub const BROKEN_NAMED_SKIPPED: BrokenCase = BrokenCase {
    name: "broken_named_skipped",
    mistake: "a 64-thread named barrier that only warp 0 reaches (warp 1 returns early)",
    threads: 64,
    label: 19,
    budget_us: 20_000,
    says: &[
        "gpu-hopper named barrier HANG (wait budget spent): barrier 1 of registry 19",
        "in `Barriers::sync` at",
        "phase 0;",
        "32 of 64 threads reached this phase (this one included): 32 never came",
    ],
    at_call: true,
};

/// A named barrier declared for 64 threads that all 3 warps of the block sync on (a count
/// written for two warps, then a third added): the hardware would let the first 64 arrivals
/// through and hold the third warp forever (or count it toward the next phase). The checked
/// build counts phases from the total arrivals, so the 32 threads past the first 64 wait in
/// phase 1 for 32 that never come.
pub const BROKEN_NAMED_OVERFULL: BrokenCase = BrokenCase {
    name: "broken_named_overfull",
    mistake: "a named barrier declared for 64 threads that 3 warps (96 threads) sync on",
    threads: 96,
    label: 23,
    budget_us: 20_000,
    says: &[
        "gpu-hopper named barrier HANG (wait budget spent): barrier 1 of registry 23",
        "phase 1;",
        "32 of 64 threads reached this phase (this one included): 32 never came",
    ],
    at_call: true,
};

/// Two warpgroups take turns (1 ring): group 1 stops after 3 turns, group 0 wants 5, so group
/// 0's fifth wait gets no arrival.
pub const BROKEN_SEQUENCE_STOPS: BrokenCase = BrokenCase {
    name: "broken_sequence_stops",
    mistake: "ordered sequence of 2 warpgroups: group 1 takes 3 turns, group 0 waits for a 5th",
    threads: 256,
    label: 29,
    budget_us: 20_000,
    says: &[
        "gpu-hopper ordered sequence HANG (wait budget spent): sequence 29",
        "1 rings, 2 groups), group 0 in `OrderedSequenceBarrier::wait`",
        "turn 4 (ring 0, lap 4)",
        "0 of 128 arrivals of group 1 for this turn",
    ],
    at_call: true,
};

/// Two warpgroups take turns (2 rings): group 0 leaves its second turn without `arrive` (an
/// early return holding the `Turn`), which group 1 would wait for forever. The record names the
/// `wait` that took the turn (drop glue has no line of the user's).
pub const BROKEN_SEQUENCE_DROPPED: BrokenCase = BrokenCase {
    name: "broken_sequence_dropped",
    mistake: "ordered sequence of 2 warpgroups: group 0 drops its second turn without arrive",
    threads: 256,
    label: 31,
    budget_us: 20_000,
    says: &[
        "gpu-hopper ordered sequence TURN NOT HANDED ON",
        "sequence 31",
        "group 0 in `(a Turn taken here, dropped without arrive)`",
        "turn 1 (ring 1, lap 0)",
        "group 1 waits for this turn forever",
    ],
    at_call: true,
};

/// Two warpgroups take named turns (`gpu_hopper::turns`, ids 1 and 2): group 1 stops after 3
/// turns, group 0 wants 5, so group 0's fifth `wait` (`bar.sync` on barrier 1) gets no arrival.
pub const BROKEN_TURNS_STOPS: BrokenCase = BrokenCase {
    name: "broken_turns_stops",
    mistake: "named turns of 2 warpgroups: group 1 takes 3 turns, group 0 waits for a 5th",
    threads: 256,
    label: 37,
    budget_us: 20_000,
    says: &[
        "gpu-hopper named barrier HANG (wait budget spent): barrier 1 of registry 37",
        "in `Barriers::sync` at",
        "phase 4;",
        "128 of 256 threads reached this phase (this one included): 128 never came",
    ],
    at_call: true,
};

/// Two warpgroups take named turns: group 0 leaves its second turn without `arrive` (an early
/// return holding the `NamedTurn`), which group 1 would wait for forever. The record names the
/// `wait` that took the turn.
pub const BROKEN_TURNS_DROPPED: BrokenCase = BrokenCase {
    name: "broken_turns_dropped",
    mistake: "named turns of 2 warpgroups: group 0 drops its second turn without arrive",
    threads: 256,
    label: 41,
    budget_us: 20_000,
    says: &[
        "gpu-hopper named turns TURN NOT HANDED ON",
        "sequence 41",
        "group 0 in `(a NamedTurn taken here, dropped without arrive)`",
        "turn 1 (ring 0, lap 1)",
        "group 1 waits for this turn forever",
    ],
    at_call: true,
};

/// Every broken kernel of the checked build.
pub const BROKEN_CASES: &[BrokenCase] = &[
    BROKEN_NAMED_SKIPPED,
    BROKEN_NAMED_OVERFULL,
    BROKEN_SEQUENCE_STOPS,
    BROKEN_SEQUENCE_DROPPED,
    BROKEN_TURNS_STOPS,
    BROKEN_TURNS_DROPPED,
];
