//! The TMA cases: `tensor_reduce_add` / `_min` / `_max` of boxes from shared memory into 2D and
//! 3D tensors (f32, bf16, s32), several blocks' boxes overlapping (each element's reduction is
//! atomic) and one box past the tensor's end in every dimension (its elements outside the
//! tensor must not be written), and `tensor_store` of the same kernel and boxes (neither may
//! start at a negative coordinate: their leaves' contract); and `prefetch_tensor` followed by a
//! tensor load of the same box (u32; the part outside the tensor loads as zeros). Every element
//! of the tensor (reductions) or of the loaded boxes (prefetch) is compared with the host's.

use gpu_hopper_host::{ElementType, L2Promotion, OobFill, Swizzle, Tiled};
use pipeline_harness::cuda::Gpu;

use crate::device::{Words, address, arg, download, run, upload, words_of};
use crate::layout::{REDUCE_ADD, REDUCE_MAX, REDUCE_MIN, REDUCE_STORE};
use crate::{Case, Seed};

/// The prefetch kernel's box offset in shared memory (`tma::BOX_OFFSET` of the kernels).
const BOX_OFFSET: u32 = 1024;

/// A tensor of small integers and the box its copies move, innermost dimension first.
#[derive(Clone)]
struct Tensor {
    element: ElementType,
    dims: Vec<u64>,
    box_dims: Vec<u32>,
}

impl Tensor {
    fn len(&self) -> usize {
        self.dims.iter().product::<u64>() as usize
    }

    fn box_len(&self) -> usize {
        self.box_dims.iter().map(|&d| d as usize).product()
    }

    fn bytes(&self) -> usize {
        self.element.bytes() as usize
    }

    /// The index in the tensor of element `l` (linear, innermost first) of the box at `corner`,
    /// or `None` outside the tensor.
    fn index(&self, corner: &[i32], l: usize) -> Option<usize> {
        let (mut rest, mut index, mut stride) = (l, 0usize, 1usize);
        for (d, (&dim, &box_dim)) in self.dims.iter().zip(&self.box_dims).enumerate() {
            let offset = rest % box_dim as usize;
            rest /= box_dim as usize;
            let c = i64::from(corner[d]) + offset as i64;
            if c < 0 || c >= dim as i64 {
                return None;
            }
            index += c as usize * stride;
            stride *= dim as usize;
        }
        Some(index)
    }

    /// The bytes of `values` in the element type.
    fn encode(&self, values: &[i64]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|&v| match self.element {
                ElementType::F32 => (v as f32).to_bits().to_le_bytes().to_vec(),
                ElementType::Bf16 => (((v as f32).to_bits() >> 16) as u16).to_le_bytes().to_vec(),
                ElementType::I32 | ElementType::U32 => (v as u32).to_le_bytes().to_vec(),
                other => unreachable!("no case has {other:?} elements"),
            })
            .collect()
    }

    /// The values of the elements in `words` (the first `n`).
    fn decode(&self, words: &[u32], n: usize) -> Vec<f64> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes
            .chunks(self.bytes())
            .take(n)
            .map(|c| match self.element {
                ElementType::F32 => f64::from(f32::from_le_bytes(c.try_into().unwrap())),
                ElementType::Bf16 => f64::from(f32::from_bits(
                    u32::from(u16::from_le_bytes(c.try_into().unwrap())) << 16,
                )),
                ElementType::I32 => f64::from(i32::from_le_bytes(c.try_into().unwrap())),
                ElementType::U32 => f64::from(u32::from_le_bytes(c.try_into().unwrap())),
                other => unreachable!("no case has {other:?} elements"),
            })
            .collect()
    }

    /// The byte strides of the dimensions after the first (rows packed).
    fn strides(&self) -> Vec<u64> {
        let mut strides = Vec::new();
        let mut stride = self.element.bytes();
        for &d in &self.dims[..self.dims.len() - 1] {
            stride *= d;
            strides.push(stride);
        }
        strides
    }

    /// The tiled map's description at `address` (no swizzle, zeros outside), given to `use_it`.
    fn tiled<R>(&self, address: u64, use_it: impl FnOnce(Tiled<'_>) -> R) -> R {
        let strides = self.strides();
        let element_strides = vec![1u32; self.dims.len()];
        use_it(Tiled {
            element: self.element,
            address,
            dims: &self.dims,
            strides: &strides,
            box_dims: &self.box_dims,
            element_strides: &element_strides,
            swizzle: Swizzle::None,
            l2_promotion: L2Promotion::B128,
            oob_fill: OobFill::Zero,
        })
    }

    /// The tensor map of this tensor at `address`, uploaded (128 bytes).
    fn map(&self, gpu: &Gpu, address: u64) -> Result<Words, String> {
        let map = self
            .tiled(address, |tiled| tiled.encode())
            .map_err(|e| format!("the tensor map: {e}"))?;
        upload(gpu, &words_of(map.as_bytes()))
    }

    /// A description for the lines.
    fn describe(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(u64::to_string).collect();
        let box_dims: Vec<String> = self.box_dims.iter().map(u32::to_string).collect();
        format!(
            "{:?} tensor {} (box {})",
            self.element,
            dims.join(" x "),
            box_dims.join(" x ")
        )
    }
}

/// A reduction case: the tensor, the operation, each block's box corner, the value ranges of the
/// tensor and of the boxes.
struct Reduce {
    name: String,
    tensor: Tensor,
    op: u32,
    corners: Vec<Vec<i32>>,
    initial: (i32, i32),
    tiles: (i32, i32),
}

impl Reduce {
    fn run(&self, gpu: &Gpu, seed: &mut Seed) -> Result<String, String> {
        let t = &self.tensor;
        let rank = t.dims.len();
        let initial: Vec<i64> = (0..t.len())
            .map(|_| i64::from(seed.int(self.initial.0, self.initial.1)))
            .collect();
        let tiles: Vec<Vec<i64>> = self
            .corners
            .iter()
            .map(|_| {
                (0..t.box_len())
                    .map(|_| i64::from(seed.int(self.tiles.0, self.tiles.1)))
                    .collect()
            })
            .collect();
        let mut want = initial.clone();
        let mut touched = 0;
        for (corner, tile) in self.corners.iter().zip(&tiles) {
            for (l, &v) in tile.iter().enumerate() {
                if let Some(i) = t.index(corner, l) {
                    touched += 1;
                    want[i] = match self.op {
                        REDUCE_ADD => want[i] + v,
                        REDUCE_MIN => want[i].min(v),
                        REDUCE_MAX => want[i].max(v),
                        // Stores replace: the cases' stored boxes do not overlap.
                        _ => v,
                    };
                }
            }
        }
        let tensor = upload(gpu, &words_of(&t.encode(&initial)))?;
        let map = t.map(gpu, address(gpu, &tensor))?;
        let tile_bytes: Vec<u8> = tiles.iter().flat_map(|tile| t.encode(tile)).collect();
        let tiles_buffer = upload(gpu, &words_of(&tile_bytes))?;
        let coords: Vec<u32> = self.corners.iter().flatten().map(|&c| c as u32).collect();
        let coords_buffer = upload(gpu, &coords)?;
        let mut box_words = (t.box_len() * t.bytes() / 4) as u32;
        let (mut pm, mut pt, mut pc, mut op) = (
            address(gpu, &map),
            address(gpu, &tiles_buffer),
            address(gpu, &coords_buffer),
            self.op,
        );
        let entry = format!("tma_reduce_{rank}d");
        run(
            gpu,
            &entry,
            self.corners.len() as u32,
            128,
            box_words * 4,
            &mut [
                arg(&mut pm),
                arg(&mut pt),
                arg(&mut box_words),
                arg(&mut pc),
                arg(&mut op),
            ],
        )?;
        let got = t.decode(
            &download(gpu, &tensor, (t.len() * t.bytes()).div_ceil(4))?,
            t.len(),
        );
        let wrong: Vec<usize> = (0..t.len()).filter(|&i| got[i] != want[i] as f64).collect();
        let op = ["add", "min", "max", "store"][self.op as usize];
        let what = format!(
            "{entry} {op}: {} boxes into a {}, {touched} box elements inside it; all {} elements against the host",
            self.corners.len(),
            t.describe(),
            t.len()
        );
        match wrong.first() {
            None => Ok(format!("{what}, every one exact")),
            Some(&i) => Err(format!(
                "{what}: {} wrong; first at linear index {i}: {} expected {} (initially {})",
                wrong.len(),
                got[i],
                want[i],
                initial[i]
            )),
        }
    }
}

/// A prefetch case: the tensor (u32), each block's box corner.
struct Prefetch {
    name: &'static str,
    tensor: Tensor,
    corners: Vec<Vec<i32>>,
}

impl Prefetch {
    fn run(&self, gpu: &Gpu, seed: &mut Seed) -> Result<String, String> {
        let t = &self.tensor;
        let rank = t.dims.len();
        let values: Vec<u32> = (0..t.len()).map(|_| seed.word() | 1).collect();
        let tensor = upload(gpu, &values)?;
        let map = t.map(gpu, address(gpu, &tensor))?;
        let coords: Vec<u32> = self.corners.iter().flatten().map(|&c| c as u32).collect();
        let coords_buffer = upload(gpu, &coords)?;
        let boxes = self.corners.len();
        let out = upload(gpu, &vec![0xDEAD_BEEF; boxes * t.box_len()])?;
        let mut box_words = t.box_len() as u32;
        let (mut pm, mut pc, mut po) = (
            address(gpu, &map),
            address(gpu, &coords_buffer),
            address(gpu, &out),
        );
        let entry = format!("tma_prefetch_load_{rank}d");
        run(
            gpu,
            &entry,
            boxes as u32,
            128,
            BOX_OFFSET + box_words * 4,
            &mut [
                arg(&mut pm),
                arg(&mut pc),
                arg(&mut po),
                arg(&mut box_words),
            ],
        )?;
        let got = download(gpu, &out, boxes * t.box_len())?;
        let mut outside = 0;
        let want: Vec<u32> = self
            .corners
            .iter()
            .flat_map(|corner| {
                (0..t.box_len())
                    .map(|l| match t.index(corner, l) {
                        Some(i) => values[i],
                        None => {
                            outside += 1;
                            0
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let wrong: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
        let what = format!(
            "prefetch_tensor then a tensor load of {boxes} boxes of a {} ({outside} elements outside it, zero-filled); every loaded element against the host",
            t.describe()
        );
        match wrong.first() {
            None => Ok(format!("{what}, all exact")),
            Some(&i) => Err(format!(
                "{what}: {} of {} wrong; first: box {}, element {}: {:#x} expected {:#x}",
                wrong.len(),
                want.len(),
                i / t.box_len(),
                i % t.box_len(),
                got[i],
                want[i]
            )),
        }
    }
}

/// Where a case's boxes lie: inside the tensor (several overlapping), past its end in every
/// dimension, or at negative coordinates (loads only: the prefetch cases). Each placement of a
/// store or reduction is its own case, so that a fault names the placement (a fault loses the
/// context and ends the process's later cases).
#[derive(Clone, Copy)]
enum Placement {
    Inside,
    PastTheEnd,
    Negative,
}

const PLACEMENTS: [Placement; 3] = [
    Placement::Inside,
    Placement::PastTheEnd,
    Placement::Negative,
];

impl Placement {
    fn describe(self) -> &'static str {
        match self {
            Placement::Inside => "boxes inside, overlapping",
            Placement::PastTheEnd => "a box past the end",
            Placement::Negative => "a box at negative coordinates",
        }
    }
}

/// The boxes of a 40 x 24 tensor with 16 x 8 boxes, placed as `p`.
fn corners_2d(p: Placement) -> Vec<Vec<i32>> {
    match p {
        Placement::Inside => vec![vec![8, 4], vec![16, 8], vec![8, 4]],
        Placement::PastTheEnd => vec![vec![32, 20]],
        Placement::Negative => vec![vec![-8, -4]],
    }
}

/// The boxes of a 24 x 10 x 6 tensor with 8 x 4 x 3 boxes, as [`corners_2d`].
fn corners_3d(p: Placement) -> Vec<Vec<i32>> {
    match p {
        Placement::Inside => vec![vec![0, 0, 0], vec![4, 2, 1], vec![4, 2, 1]],
        Placement::PastTheEnd => vec![vec![20, 8, 4]],
        Placement::Negative => vec![vec![-4, -2, -2]],
    }
}

/// The boxes of the 32 x 12 x 5 bf16 tensor with 16 x 4 x 2 boxes, as [`corners_2d`].
fn corners_bf16(p: Placement) -> Vec<Vec<i32>> {
    match p {
        Placement::Inside => vec![vec![0, 0, 0], vec![8, 2, 1], vec![8, 2, 1]],
        Placement::PastTheEnd => vec![vec![24, 10, 4]],
        Placement::Negative => vec![vec![-8, -2, -1]],
    }
}

/// The stored boxes of the 2D tensor: as [`corners_2d`] without overlaps (a store replaces, so
/// the order between blocks would decide the result).
fn stored_2d(p: Placement) -> Vec<Vec<i32>> {
    match p {
        Placement::Inside => vec![vec![8, 4], vec![24, 12]],
        other => corners_2d(other),
    }
}

/// The stored boxes of the 3D tensor, as [`stored_2d`].
fn stored_3d(p: Placement) -> Vec<Vec<i32>> {
    match p {
        Placement::Inside => vec![vec![0, 0, 0], vec![8, 4, 3]],
        other => corners_3d(other),
    }
}

/// Every placement's boxes, for the prefetch cases (one launch: loads take all of them).
fn all_corners(corners: fn(Placement) -> Vec<Vec<i32>>) -> Vec<Vec<i32>> {
    PLACEMENTS.iter().flat_map(|&p| corners(p)).collect()
}

/// The reduction and prefetch cases.
fn list() -> (Vec<Reduce>, Vec<Prefetch>) {
    let t2 = |element| Tensor {
        element,
        dims: vec![40, 24],
        box_dims: vec![16, 8],
    };
    let t3 = |element| Tensor {
        element,
        dims: vec![24, 10, 6],
        box_dims: vec![8, 4, 3],
    };
    let bf16 = Tensor {
        element: ElementType::Bf16,
        dims: vec![32, 12, 5],
        box_dims: vec![16, 4, 2],
    };
    type Corners = fn(Placement) -> Vec<Vec<i32>>;
    // Name, tensor, operation, boxes, and the value ranges of the tensor and of the boxes.
    type Config = (&'static str, Tensor, u32, Corners, (i32, i32), (i32, i32));
    let configs: Vec<Config> = vec![
        (
            "tma_reduce_2d add f32",
            t2(ElementType::F32),
            REDUCE_ADD,
            corners_2d,
            (-64, 64),
            (-8, 8),
        ),
        // Sums stay within 8 bits of magnitude: exact in bf16.
        (
            "tma_reduce_3d add bf16",
            bf16,
            REDUCE_ADD,
            corners_bf16,
            (-32, 32),
            (-8, 8),
        ),
        (
            "tma_reduce_3d min s32",
            t3(ElementType::I32),
            REDUCE_MIN,
            corners_3d,
            (-1_000_000, 1_000_000),
            (-1_000_000, 1_000_000),
        ),
        (
            "tma_reduce_2d max s32",
            t2(ElementType::I32),
            REDUCE_MAX,
            corners_2d,
            (-1_000_000, 1_000_000),
            (-1_000_000, 1_000_000),
        ),
        (
            "tma_reduce_3d add s32",
            t3(ElementType::I32),
            REDUCE_ADD,
            corners_3d,
            (-1_000_000, 1_000_000),
            (-1_000_000, 1_000_000),
        ),
        // gpu-pipeline's `tensor_store` through the same kernel, maps and boxes: what the
        // reductions are compared with.
        (
            "tma_reduce_2d store f32",
            t2(ElementType::F32),
            REDUCE_STORE,
            stored_2d,
            (-64, 64),
            (-8, 8),
        ),
        (
            "tma_reduce_3d store s32",
            t3(ElementType::I32),
            REDUCE_STORE,
            stored_3d,
            (-1_000_000, 1_000_000),
            (-1_000_000, 1_000_000),
        ),
    ];
    let reduces = configs
        .into_iter()
        .flat_map(|(name, tensor, op, corners, initial, tiles)| {
            // A store's or a reduction's box may not start at a negative coordinate (the
            // leaves' contract: the H200 faults with an illegal instruction there); loads may,
            // and the prefetch cases load there.
            PLACEMENTS[..2].iter().map(move |&p| Reduce {
                name: format!("{name}, {}", p.describe()),
                tensor: tensor.clone(),
                op,
                corners: corners(p),
                initial,
                tiles,
            })
        })
        .collect();
    let prefetches = vec![
        Prefetch {
            name: "tma_prefetch_load_2d u32",
            tensor: t2(ElementType::U32),
            corners: all_corners(corners_2d),
        },
        Prefetch {
            name: "tma_prefetch_load_3d u32",
            tensor: t3(ElementType::U32),
            corners: all_corners(corners_3d),
        },
    ];
    (reduces, prefetches)
}

/// The TMA cases, to run.
pub fn cases() -> Vec<Case> {
    let (reduces, prefetches) = list();
    let mut cases: Vec<Case> = reduces
        .into_iter()
        .map(|r| Case {
            name: r.name.clone(),
            run: Box::new(move |gpu, seed| r.run(gpu, seed)),
        })
        .collect();
    cases.extend(prefetches.into_iter().map(|p| Case {
        name: p.name.to_string(),
        run: Box::new(move |gpu, seed| p.run(gpu, seed)),
    }));
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_elements_outside_the_tensor_have_no_index() {
        let t = Tensor {
            element: ElementType::F32,
            dims: vec![40, 24],
            box_dims: vec![16, 8],
        };
        assert_eq!(t.index(&[8, 4], 0), Some(4 * 40 + 8));
        assert_eq!(t.index(&[8, 4], 17), Some(5 * 40 + 9));
        // Past the end: x 32..48 of 40, y 20..28 of 24.
        assert_eq!(t.index(&[32, 20], 7), Some(20 * 40 + 39));
        assert_eq!(t.index(&[32, 20], 8), None);
        assert_eq!(t.index(&[32, 20], 16 * 4), None);
        // Negative: the first inside element is box (8, 4).
        assert_eq!(t.index(&[-8, -4], 4 * 16 + 7), None);
        assert_eq!(t.index(&[-8, -4], 4 * 16 + 8), Some(0));
    }

    /// A store case's boxes cover no element twice (the result would depend on the blocks'
    /// order).
    #[test]
    fn stored_boxes_do_not_overlap() {
        let (reduces, _) = list();
        for r in reduces.iter().filter(|r| r.op == REDUCE_STORE) {
            let mut seen = std::collections::HashSet::new();
            for corner in &r.corners {
                for l in 0..r.tensor.box_len() {
                    if let Some(i) = r.tensor.index(corner, l) {
                        assert!(seen.insert(i), "{}: element {i} twice", r.name);
                    }
                }
            }
        }
    }

    /// Every case's map passes gpu-hopper-host's checks, its corners have its rank, and its box
    /// fits the kernels' shared memory.
    #[test]
    fn every_case_has_a_valid_tensor_map() {
        let (reduces, prefetches) = list();
        let all = reduces
            .iter()
            .map(|r| (r.name.as_str(), &r.tensor, &r.corners))
            .chain(prefetches.iter().map(|p| (p.name, &p.tensor, &p.corners)));
        for (name, tensor, corners) in all {
            tensor
                .tiled(1 << 20, |tiled| tiled.validate())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                corners.iter().all(|c| c.len() == tensor.dims.len()),
                "{name}"
            );
            assert!(tensor.box_len() * tensor.bytes() <= 4096, "{name}");
        }
        assert_eq!(
            Tensor {
                element: ElementType::Bf16,
                dims: vec![32, 12, 5],
                box_dims: vec![16, 4, 2]
            }
            .strides(),
            [64, 768]
        );
    }
}
