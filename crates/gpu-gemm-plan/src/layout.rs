//! A kernel's dynamic shared memory.

/// Rows of A (and of D) per CTA tile of the kernels with two consumer warpgroups.
pub const BM: u32 = 128;
/// K per ring stage: one 128-byte row of bf16 per tile row (the 128-byte swizzle's span).
pub const BK: u32 = 64;
/// The swizzle of every box in shared memory: the tensor maps' (how TMA writes A, B, C and D's
/// boxes) and the `wgmma` descriptors' (how the MMAs read A and B), one constant for both.
pub const SWIZZLE: gpu_hopper::descriptor::Swizzle = gpu_hopper::descriptor::Swizzle::B128;
const _: () = assert!(BK * 2 == SWIZZLE.span());
/// A's box in a stage: 128 x 64 bf16, 16 KiB.
pub const A_BYTES: u32 = BM * BK * 2;
/// One 64 x 64 bf16 box of D (or C) in the tensor store's 128-byte-swizzled layout.
pub const BOX_BYTES: u32 = 64 * 64 * 2;
/// The epilogue's staging buffer of one consumer warpgroup: two boxes, which its 64 x BN block of
/// D passes through a quarter (64 columns) at a time, alternately.
pub const STAGING_BYTES: u32 = 2 * BOX_BYTES;
/// The 64-column quarters of a tile `bn` wide that the epilogue writes, one box at a time (one
/// for tiles up to 64 wide): [`Layout::quarters`], and the kernels' epilogue's count.
pub const fn epilogue_quarters(bn: u32) -> u32 {
    if bn <= 64 { 1 } else { bn.div_ceil(64) }
}

/// Bytes of the barriers' region at the end of every layout.
const BARRIER_BYTES: u32 = 1024;
/// Dynamic shared memory a block may have on sm_90 (CUDA C++ Programming Guide, "Compute
/// Capabilities": 227 KiB on compute capability 9.0).
pub(crate) const MAX_SMEM: u32 = 227 * 1024;

/// The dynamic shared memory of a kernel whose tiles are `bn` wide, in a ring of `stages`: the
/// stages (A's slot of `a_rows` rows, then B's box), the two consumer warpgroups' staging
/// buffers, then in the last KiB the barriers: first the two warpgroups' epilogue-load barriers,
/// then the ring's, and in the last word the split-K flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub bn: u32,
    pub stages: u32,
    /// Rows of A's slot in a stage: [`BM`] ([`Layout::new`]), or 64 for the kernels on 64-row
    /// tiles whose ring holds only their box ([`Layout::narrow`]).
    pub a_rows: u32,
}

impl Layout {
    /// The layout of `stages` stages of tiles `bn` wide; a compile error (in a `const`) or a panic
    /// if it does not fit the 227 KiB of dynamic shared memory.
    pub const fn new(bn: u32, stages: u32) -> Self {
        Self::with_a_rows(bn, stages, BM)
    }

    /// [`Layout::new`] with A's slot 64 rows (8 KiB): the ring of a kernel on 64-row tiles
    /// ([`Config::split_columns`](crate::Config::split_columns)), whose stages then hold only
    /// what they receive, so that more of them fit (a measurement: the deep rings).
    pub const fn narrow(bn: u32, stages: u32) -> Self {
        Self::with_a_rows(bn, stages, BM / 2)
    }

    /// The ring of `stages` stages of tiles `bn` wide that a kernel body on tiles of `rows` rows
    /// has: [`Layout::new`], or on 64-row tiles whose stages of 128-row slots would not fit,
    /// [`Layout::narrow`] (the rule by which the kernels and their table rows agree: each row's
    /// layout is its `ring`, checked where the entry is built).
    pub const fn ring(bn: u32, stages: u32, rows: u32) -> Self {
        let wide = Self {
            bn,
            stages,
            a_rows: BM,
        };
        if rows == BM / 2 && wide.bytes() > MAX_SMEM {
            Self::narrow(bn, stages)
        } else {
            Self::new(bn, stages)
        }
    }

    const fn with_a_rows(bn: u32, stages: u32, a_rows: u32) -> Self {
        let layout = Self { bn, stages, a_rows };
        assert!(
            layout.bytes() <= MAX_SMEM,
            "a GEMM layout exceeds the 227 KiB of dynamic shared memory of an sm_90 block: fewer stages or a narrower tile"
        );
        layout
    }

    /// B's box in a stage.
    pub const fn b_bytes(self) -> u32 {
        self.bn * BK * 2
    }

    /// A's slot in a stage: [`A_BYTES`], or half of it in a [`Layout::narrow`] ring.
    pub const fn a_bytes(self) -> u32 {
        self.a_rows * BK * 2
    }

    /// One stage: A's slot and B's box.
    pub const fn stage_bytes(self) -> u32 {
        self.a_bytes() + self.b_bytes()
    }

    /// Where consumer warpgroup `g`'s staging buffer starts.
    pub const fn staging_at(self, g: u32) -> usize {
        (self.stages * self.stage_bytes() + g * STAGING_BYTES) as usize
    }

    /// Where the barriers start.
    pub const fn barriers_at(self) -> usize {
        self.staging_at(2)
    }

    /// Where the ring's barriers start, after two epilogue-load pipelines' of `epi_bytes` each.
    pub const fn ring_barriers_at(self, epi_bytes: usize) -> usize {
        self.barriers_at() + 2 * epi_bytes
    }

    /// The word through which the consumers' first thread tells the others whether their CTA
    /// finished the last split of a tile: the last of the barriers' KiB.
    pub const fn split_flag_at(self) -> usize {
        self.barriers_at() + BARRIER_BYTES as usize - 4
    }

    /// The whole layout: the kernel's dynamic shared memory (its launch's `sharedMemBytes`).
    pub const fn bytes(self) -> u32 {
        self.barriers_at() as u32 + BARRIER_BYTES
    }

    /// The 64-column quarters of a tile the epilogue writes (and the epilogue-load thread loads
    /// of C): every column of the tile, one box of 64 at a time.
    pub const fn quarters(self) -> u32 {
        epilogue_quarters(self.bn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_of_the_table_fits_with_no_room_for_another_stage() {
        let wide = [(256, 4), (128, 6), (64, 8), (32, 9), (16, 10)].map(|(bn, st)| (bn, st, false));
        let narrow = [(16, 19), (32, 16), (48, 13), (64, 12), (80, 10), (96, 9)];
        for (bn, stages, a_narrow) in wide
            .into_iter()
            .chain(narrow.map(|(bn, st)| (bn, st, true)))
        {
            let layout = if a_narrow {
                Layout::narrow(bn, stages)
            } else {
                Layout::new(bn, stages)
            };
            assert_eq!(
                layout.a_bytes(),
                if a_narrow { A_BYTES / 2 } else { A_BYTES }
            );
            assert!(layout.bytes() <= MAX_SMEM, "{bn} x {stages}");
            let more = Layout {
                stages: stages + 1,
                ..layout
            };
            assert!(
                more.bytes() > MAX_SMEM,
                "{bn} x {stages}: room for one more stage"
            );
            assert_eq!(layout.barriers_at() % 1024, 0);
            assert_eq!(layout.split_flag_at(), layout.bytes() as usize - 4);
        }
    }

    #[test]
    #[should_panic(expected = "227 KiB")]
    fn a_layout_over_the_limit_is_refused() {
        let _ = Layout::new(256, 5);
    }
}
