//! The launch ABI of the module: the one parameter every entry takes ([`Params`]) and its
//! version ([`ABI_VERSION`]). The kernel crate exports the version as the global `GPU_GEMM_ABI`;
//! the host crate refuses a module whose global differs (or is missing), so that a module built
//! from another version of the crates is an error when it is loaded, not a launch with the wrong
//! parameters. Bump it with every change to [`Params`] or to what a field means.

/// The launch ABI version: 5 since the kernels that do not compute the transpose take, for M
/// below one tile, A's box of [`a_box_rows`] rows (M rounded up to 8) instead of a tile's 128
/// rows zero-filled past M: a stage then receives fewer bytes, so a host of version 4 (boxes of
/// 128 rows) would overfill the stage's transaction count and a host of 5 underfill a module of
/// 4; 4: a module whose entries do not wait says so ([`ABI_UNWAITED`]); 3: every entry waits for its prerequisite grid (`griddepcontrol.wait`)
/// before it accesses global memory, so that the host may launch it as a programmatic
/// dependent, and a module without the wait (the negative control) exported 3 as well, which a
/// host of version 4 refuses; 2: one [`Params`], and no such wait: a module of version 2
/// launched so could read A before the kernel before it wrote it; 1: ten scalar parameters.
pub const ABI_VERSION: u32 = 5;

/// Or-ed into the exported version by a module whose entries do not wait for their prerequisite
/// grid (the kernel crate's `unwaited` feature: the negative control of the programmatic chains).
/// Its launch ABI is [`ABI_VERSION`]'s and it computes the same results in stream order, so the
/// host loads it; but a programmatic launch of it races the kernel before it, so the host
/// refuses to launch it so.
pub const ABI_UNWAITED: u32 = 1 << 31;

/// The rows of A's box for a problem of `m` rows, in the kernels that do not compute the
/// transpose: `m` rounded up to a whole number of 8-row swizzle atoms below one tile
/// ([`crate::BM`]), else a tile's. The host encodes A's tensor map with this box and each stage's
/// transaction count is its bytes. The rows of the stage's slot past the box hold whatever the
/// slot held before; `wgmma` computes each row of D from its own row of A, and no row at or past
/// M leaves the kernel, so they reach nothing. Run 131 (an H100, M = 72, 96 and 112 by 16 layers,
/// each module's kernels over cuBLAS in its process): the 128 x 64 kernel 11 % faster than with
/// 128-row boxes, the 128 x 128 kernel 4 %, 128 x 192 2 % (geometric means of the time ratios).
pub const fn a_box_rows(m: u32) -> u32 {
    if m < crate::BM {
        let rows = m.div_ceil(8) * 8;
        if rows == 0 { 8 } else { rows }
    } else {
        crate::BM
    }
}

/// The rows of A's box of a kernel whose tiles are `tile_rows` high (`swap_ab`: computing the
/// transpose, whose A is the weights) for a problem of `m` rows: [`a_box_rows`] in the kernels
/// of 128-row tiles that do not compute the transpose, else the tile's rows (the transposing
/// kernels and the 64-row single-warpgroup step). The host encodes A's map with it and the
/// kernels count their stages' bytes by it: one rule for both sides.
pub const fn a_box_rows_of(swap_ab: bool, tile_rows: u32, m: u32) -> u32 {
    if swap_ab || tile_rows != crate::BM {
        tile_rows
    } else {
        a_box_rows(m)
    }
}

/// The one launch parameter of every entry, passed by value (`.param .align 8 .b8 p[56]` in the
/// PTX): the host fills it and hands the driver a pointer to it, the device reads each field
/// from the parameter space. Addresses are device addresses as integers (0 where not used).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The tensor maps, 128 bytes each, in global memory: A, B, and (when N % 8 == 0) D and
    /// (when `beta != 0`) C.
    pub maps: u64,
    /// C (read when `beta != 0`; may be D).
    pub c: u64,
    /// D.
    pub d: u64,
    /// The problem: D is M x N, the sum runs over K.
    pub m: u32,
    /// Columns of D.
    pub n: u32,
    /// The sum's length.
    pub k: u32,
    /// D = alpha A B^T + beta C.
    pub alpha: f32,
    /// See `alpha`.
    pub beta: f32,
    /// Split-K parts (1: none; kernels without split-K ignore it).
    pub splits: u32,
    /// The split-K workspace (0 without split-K).
    pub work: u64,
}

/// Bytes of [`Params`]: the size the host checks the module's parameter against.
pub const PARAMS_BYTES: usize = core::mem::size_of::<Params>();

const _: () = assert!(PARAMS_BYTES == 56 && core::mem::align_of::<Params>() == 8);

#[cfg(test)]
mod tests {
    use super::*;

    /// Below a tile: whole 8-row atoms covering M (at least one); from a tile up: the tile.
    #[test]
    fn a_boxes_cover_m_in_whole_atoms() {
        assert_eq!(a_box_rows(0), 8);
        assert_eq!(a_box_rows(1), 8);
        assert_eq!(a_box_rows(8), 8);
        assert_eq!(a_box_rows(9), 16);
        assert_eq!(a_box_rows(96), 96);
        assert_eq!(a_box_rows(97), 104);
        assert_eq!(a_box_rows(127), 128);
        assert_eq!(a_box_rows(128), 128);
        assert_eq!(a_box_rows(4096), 128);
        // Only the 128-row kernels that do not compute the transpose take the short box.
        assert_eq!(a_box_rows_of(false, 128, 96), 96);
        assert_eq!(a_box_rows_of(false, 128, 4096), 128);
        assert_eq!(a_box_rows_of(true, 128, 96), 128);
        assert_eq!(a_box_rows_of(false, 64, 3), 64);
        // The flag is a bit above any version.
        assert_eq!(ABI_VERSION & ABI_UNWAITED, 0);
    }
}
