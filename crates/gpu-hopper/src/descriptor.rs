//! The shared-memory matrix descriptor of `wgmma` and the swizzled layouts it describes. Pure
//! arithmetic, no `unsafe`, host-tested.
//!
//! # The descriptor (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//! Instructions: Matrix Descriptor Format")
//!
//! ```text
//! bits  0..14  start address >> 4            (the operand's .shared::cta address, bits 4..18)
//! bits 16..30  leading dimension byte offset >> 4   (LBO)
//! bits 32..46  stride dimension byte offset >> 4    (SBO)
//! bits 49..52  matrix base offset            (0 when the swizzle pattern starts aligned)
//! bits 62..64  swizzle mode                  (0 none, 1 128-byte, 2 64-byte, 3 32-byte)
//! ```
//!
//! The matrix is made of *core matrices*: 8 rows of 16 bytes. In a swizzled layout each row of
//! the operand is one swizzle span (32, 64 or 128 bytes) and 8 rows form one swizzle atom; SBO
//! is the distance between atoms along M/N (K-major) and LBO the distance between
//! span-wide column blocks (MN-major), or unused for K-major (one k-step fits in a span: set to
//! 16 bytes, field 1, as CUTLASS and the GEMM do). Without swizzle ("interleave"), LBO and SBO
//! are the distances between core matrices along K and along M/N.
//!
//! # Swizzling (PTX ISA, "Tensor Copy: Swizzling Modes")
//!
//! A swizzle permutes the 16-byte chunks of each row: byte-address bits 4.. are XORed with the
//! bits from 7 up, as many as the span has chunks to choose from. With 128-byte swizzle, chunk
//! `j` of row `r` (a row being 128 bytes) lands at chunk `j ^ (r % 8)`; the pattern repeats
//! every 1024 bytes, which is why such a box is 1024-byte aligned. TMA writes this layout
//! (the tensor map's swizzle mode) and `wgmma` reads it (the descriptor's), so the two must agree.

/// A swizzle mode: the width of the span whose 16-byte chunks are permuted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle: the core-matrix ("interleave") layout.
    None,
    /// 32-byte span: 2 chunks, pattern of 256 bytes.
    B32,
    /// 64-byte span: 4 chunks, pattern of 512 bytes.
    B64,
    /// 128-byte span: 8 chunks, pattern of 1024 bytes.
    B128,
}

impl Swizzle {
    /// The bytes of one swizzled row (16 for [`Swizzle::None`]: one core-matrix row).
    #[must_use]
    pub const fn span(self) -> u32 {
        match self {
            Swizzle::None => 16,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The bytes after which the pattern repeats: 8 rows of the span (the alignment a box in
    /// this layout needs).
    #[must_use]
    pub const fn atom_bytes(self) -> u32 {
        8 * self.span()
    }

    /// The descriptor's 2-bit field (bits 62-63).
    #[must_use]
    pub const fn descriptor_mode(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        }
    }

    /// Where byte `offset` of an unswizzled layout lands, for an `offset` counted from a
    /// position aligned to [`atom_bytes`](Self::atom_bytes): bits 4.. XOR bits 7.. (1, 2 or 3
    /// of them).
    #[must_use]
    pub const fn apply(self, offset: u32) -> u32 {
        let mask = self.span() / 16 - 1;
        offset ^ (((offset >> 7) & mask) << 4)
    }

    /// The physical 16-byte chunk, within its row, of logical chunk `chunk` of row `row`, rows
    /// being one span wide.
    #[must_use]
    pub const fn chunk(self, row: u32, chunk: u32) -> u32 {
        let span = self.span();
        (self.apply(row * span + chunk * 16) % span) / 16
    }
}

/// A 64-bit `wgmma` shared-memory matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDescriptor(pub u64);

/// The 14-bit field of a byte address or offset: bits 4..18.
const fn field14(bytes: u32) -> u64 {
    ((bytes & 0x3_FFFF) >> 4) as u64
}

impl MatrixDescriptor {
    /// A descriptor from its fields: `start` (a `.shared::cta` address, 16-byte aligned: its
    /// low 4 bits are dropped unchecked, as a run-time check would cost a branch per descriptor
    /// on the GPU), `lbo` and `sbo` in bytes (multiples of 16, checked: constants in practice,
    /// so the check folds away), `base_offset` (0..8), and the swizzle mode.
    #[must_use]
    pub const fn new(start: u32, lbo: u32, sbo: u32, base_offset: u32, swizzle: Swizzle) -> Self {
        assert!(
            lbo % 16 == 0 && sbo % 16 == 0,
            "gpu-hopper: descriptor offsets are multiples of 16 bytes"
        );
        assert!(
            base_offset < 8,
            "gpu-hopper: the matrix base offset has 3 bits"
        );
        Self(
            field14(start)
                | (field14(lbo) << 16)
                | (field14(sbo) << 32)
                | ((base_offset as u64) << 49)
                | (swizzle.descriptor_mode() << 62),
        )
    }

    /// A K-major operand (rows along M or N, K contiguous) in a swizzled layout written by TMA
    /// with the same swizzle: each row one span, atoms of 8 rows back to back (SBO = the atom's
    /// bytes), LBO unused (16 bytes). The GEMM's A and B: `k_major(addr, Swizzle::B128)`.
    #[must_use]
    pub const fn k_major(start: u32, swizzle: Swizzle) -> Self {
        assert!(
            !matches!(swizzle, Swizzle::None),
            "gpu-hopper: an unswizzled K-major operand needs its offsets: use k_major_interleaved"
        );
        Self::new(start, 16, swizzle.atom_bytes(), 0, swizzle)
    }

    /// A K-major operand without swizzle: core matrices `lbo` bytes apart along K and `sbo`
    /// bytes apart along M/N.
    #[must_use]
    pub const fn k_major_interleaved(start: u32, lbo: u32, sbo: u32) -> Self {
        Self::new(start, lbo, sbo, 0, Swizzle::None)
    }

    /// An MN-major operand (M or N contiguous: read with the transpose immediate): span-wide
    /// blocks along M/N `lbo` bytes apart, 8-deep groups along K `sbo` bytes apart (without
    /// swizzle: core matrices `sbo` apart along M/N and `lbo` apart along K).
    #[must_use]
    pub const fn mn_major(start: u32, swizzle: Swizzle, lbo: u32, sbo: u32) -> Self {
        Self::new(start, lbo, sbo, 0, swizzle)
    }

    /// The same operand `bytes` further on (a k-step inside a swizzle atom: `16 * K_elements_bytes`).
    #[must_use]
    pub const fn advance(self, bytes: u32) -> Self {
        Self(self.0 + (bytes >> 4) as u64)
    }

    /// The start address field, in bytes.
    #[must_use]
    pub const fn start(self) -> u32 {
        ((self.0 & 0x3FFF) << 4) as u32
    }

    /// The leading dimension byte offset.
    #[must_use]
    pub const fn lbo(self) -> u32 {
        (((self.0 >> 16) & 0x3FFF) << 4) as u32
    }

    /// The stride dimension byte offset.
    #[must_use]
    pub const fn sbo(self) -> u32 {
        (((self.0 >> 32) & 0x3FFF) << 4) as u32
    }

    /// The swizzle field (bits 62-63).
    #[must_use]
    pub const fn swizzle_mode(self) -> u64 {
        self.0 >> 62
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GEMM's `descriptor(smem)` (crates/gpu-gemm/src/lib.rs), as it writes it.
    fn gemm_descriptor(smem: u32) -> u64 {
        u64::from((smem & 0x3_FFFF) >> 4) | (1 << 16) | ((1024u64 >> 4) << 32) | (1 << 62)
    }

    #[test]
    fn the_gemms_descriptor_is_k_major_128b() {
        for smem in [0, 1024, 0x400 * 37, 0x3_FC00, 0x1_2340, 0x4_0400, 0x1_2347] {
            assert_eq!(
                MatrixDescriptor::k_major(smem, Swizzle::B128).0,
                gemm_descriptor(smem),
                "{smem:#x}"
            );
        }
        // Its k-steps: start + 32 bytes per k16 of bf16.
        let d = MatrixDescriptor::k_major(2048, Swizzle::B128);
        assert_eq!(d.advance(32).0, gemm_descriptor(2048 + 32));
    }

    #[test]
    fn fields_round_trip() {
        let d = MatrixDescriptor::new(0x2_3450, 256, 2048, 5, Swizzle::B64);
        assert_eq!(
            (d.start(), d.lbo(), d.sbo(), d.swizzle_mode()),
            (0x2_3450, 256, 2048, 2)
        );
        assert_eq!((d.0 >> 49) & 7, 5);
        assert_eq!(MatrixDescriptor::k_major(0, Swizzle::B32).swizzle_mode(), 3);
        assert_eq!(MatrixDescriptor::k_major(0, Swizzle::B32).sbo(), 256);
        assert_eq!(
            MatrixDescriptor::k_major_interleaved(0, 128, 256).swizzle_mode(),
            0
        );
        assert_eq!(
            MatrixDescriptor::mn_major(1024, Swizzle::B128, 8192, 1024).lbo(),
            8192
        );
    }

    #[test]
    fn swizzle_128b_is_chunk_xor_row_mod_8() {
        for r in 0..32 {
            for j in 0..8 {
                assert_eq!(Swizzle::B128.chunk(r, j), j ^ (r % 8), "row {r}, chunk {j}");
            }
        }
    }

    #[test]
    fn narrower_swizzles_use_the_address_bits_above_the_row() {
        for r in 0..32 {
            for j in 0..4 {
                assert_eq!(
                    Swizzle::B64.chunk(r, j),
                    j ^ ((r / 2) % 4),
                    "64B row {r}, chunk {j}"
                );
            }
            for j in 0..2 {
                assert_eq!(
                    Swizzle::B32.chunk(r, j),
                    j ^ ((r / 4) % 2),
                    "32B row {r}, chunk {j}"
                );
            }
            assert_eq!(Swizzle::None.chunk(r, 0), 0);
        }
    }

    #[test]
    fn each_swizzle_permutes_its_atom_and_keeps_bytes_in_chunks() {
        for s in [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128] {
            let atom = s.atom_bytes();
            let mut seen = std::vec![false; atom as usize];
            for offset in 0..atom {
                let to = s.apply(offset);
                assert!(
                    to < atom && to % 16 == offset % 16,
                    "{s:?}: {offset} -> {to}"
                );
                assert!(!seen[to as usize], "{s:?}: {to} twice");
                seen[to as usize] = true;
            }
            // The pattern repeats atom by atom.
            assert_eq!(s.apply(atom + 48), atom + s.apply(48));
        }
    }
}
