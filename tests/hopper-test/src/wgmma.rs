//! The wgmma cases (`layout::wgmma_cases!`): A (64 x K) and B (N x K) of small integers in
//! -4..=4, exact in every input type (bf16, f16, e4m3, e5m2) and every partial sum exact in f32;
//! D (64 x N, poisoned with NaN before the launch) compared element by element with
//! `scale_a * A B^T`. D goes out through the fragment helper, so a wrong fragment mapping, a
//! wrong descriptor or swizzle, or operands in the wrong order is a wrong element.

use crate::device::{address, arg, download, run, upload, words_of};
use crate::layout::{STEP_BYTES, WARPGROUP, WGMMA_M, wgmma_mn_smem_bytes, wgmma_smem_bytes};
use crate::{Case, Seed};

/// An input type of the cases.
#[derive(Clone, Copy, Debug)]
enum Elem {
    Bf16,
    F16,
    E4m3,
    E5m2,
}

impl Elem {
    /// Bits per element.
    fn bits(self) -> u32 {
        match self {
            Elem::Bf16 | Elem::F16 => 16,
            Elem::E4m3 | Elem::E5m2 => 8,
        }
    }

    /// Elements per K step (32 bytes of a row).
    fn k(self) -> u32 {
        STEP_BYTES * 8 / self.bits()
    }

    /// (exponent bits, mantissa bits, bias).
    fn format(self) -> (u32, u32, i32) {
        match self {
            Elem::Bf16 => (8, 7, 127),
            Elem::F16 => (5, 10, 15),
            Elem::E4m3 => (4, 3, 7),
            Elem::E5m2 => (5, 2, 15),
        }
    }

    /// The bits of the small integer `v` (|v| <= 7, exact in every type here).
    fn encode(self, v: i32) -> u16 {
        let (exp_bits, man_bits, bias) = self.format();
        if v == 0 {
            return 0;
        }
        let sign = u16::from(v < 0) << (exp_bits + man_bits);
        let m = v.unsigned_abs();
        let e = 31 - m.leading_zeros(); // floor(log2 m)
        let fraction = m - (1 << e); // below 2^e
        assert!(
            man_bits >= e,
            "{v} is not exact in {self:?} (the cases keep to -4..=4)"
        );
        let mantissa = (fraction << (man_bits - e)) as u16;
        sign | ((((e as i32) + bias) as u16) << man_bits) | mantissa
    }

    /// The bytes of `values` in this type, little-endian.
    fn bytes(self, values: &[i32]) -> Vec<u8> {
        match self.bits() {
            16 => values
                .iter()
                .flat_map(|&v| self.encode(v).to_le_bytes())
                .collect(),
            _ => values.iter().map(|&v| self.encode(v) as u8).collect(),
        }
    }
}

/// One case of the list.
struct Wgmma {
    entry: &'static str,
    rs: bool,
    a: Elem,
    b: Elem,
    n: u32,
    k_steps: u32,
    layout: &'static str,
    scale_a: i32,
}

impl Wgmma {
    /// The shared-memory bytes of one row: the swizzle span, or the row itself (interleaved).
    fn row_bytes(&self) -> u32 {
        match self.layout {
            "B32" => 32,
            "B64" => 64,
            "B128" | "B128Mn" => 128,
            _ => self.k_steps * STEP_BYTES,
        }
    }

    /// Whether B goes to the kernel MN-major (transposed: K rows of N).
    fn b_mn_major(&self) -> bool {
        self.layout == "B128Mn"
    }

    /// The case's dynamic shared memory.
    fn smem_bytes(&self) -> u32 {
        if self.b_mn_major() {
            wgmma_mn_smem_bytes(self.n, self.k_steps)
        } else {
            wgmma_smem_bytes(self.n, self.row_bytes())
        }
    }

    fn run(&self, gpu: &pipeline_harness::cuda::Gpu, seed: &mut Seed) -> Result<String, String> {
        let (m, n) = (WGMMA_M as usize, self.n as usize);
        let k = (self.k_steps * self.a.k()) as usize;
        let a: Vec<i32> = (0..m * k).map(|_| seed.int(-4, 4)).collect();
        let b: Vec<i32> = (0..n * k).map(|_| seed.int(-4, 4)).collect();
        let want: Vec<f32> = (0..m * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                let dot: i32 = (0..k).map(|j| a[r * k + j] * b[c * k + j]).sum();
                (self.scale_a * dot) as f32
            })
            .collect();
        let da = upload(gpu, &words_of(&self.a.bytes(&a)))?;
        // MN-major: B^T, K rows of N (the layout of attention's V: keys x head_dim).
        let b_given: Vec<i32> = if self.b_mn_major() {
            (0..k * n).map(|i| b[(i % n) * k + i / n]).collect()
        } else {
            b.clone()
        };
        let db = upload(gpu, &words_of(&self.b.bytes(&b_given)))?;
        // Poison: a NaN that no product gives.
        let dd = upload(gpu, &vec![0x7FC0_DEADu32; m * n])?;
        let (mut pa, mut pb, mut pd) = (address(gpu, &da), address(gpu, &db), address(gpu, &dd));
        let smem = self.smem_bytes();
        run(
            gpu,
            self.entry,
            1,
            WARPGROUP,
            smem,
            &mut [arg(&mut pa), arg(&mut pb), arg(&mut pd)],
        )?;
        let got: Vec<f32> = download(gpu, &dd, m * n)?
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let wrong: Vec<usize> = (0..m * n).filter(|&i| got[i] != want[i]).collect();
        let form = if self.rs { "RS" } else { "SS" };
        let what = format!(
            "{form} {:?} x {:?} m64n{}k{} ({} step{}, {}, scale_a {}): 64 x {} f32 against the host",
            self.a,
            self.b,
            self.n,
            self.a.k(),
            self.k_steps,
            if self.k_steps > 1 { "s" } else { "" },
            self.layout,
            self.scale_a,
            self.n
        );
        if wrong.is_empty() {
            return Ok(format!("{what}, every element exact"));
        }
        let shown: Vec<String> = wrong
            .iter()
            .take(4)
            .map(|&i| format!("({}, {}) = {} expected {}", i / n, i % n, got[i], want[i]))
            .collect();
        let unwritten = wrong.iter().filter(|&&i| got[i].is_nan()).count();
        Err(format!(
            "{what}: {} of {} elements wrong ({unwritten} never written); {}",
            wrong.len(),
            m * n,
            shown.join(", ")
        ))
    }
}

/// The cases of `wgmma_cases!`.
fn list() -> Vec<Wgmma> {
    let mut list: Vec<Wgmma> = Vec::new();
    macro_rules! host_case {
        ($name:ident, $form:ident, $a:ident, $b:ident, $n:literal, $k:literal, $layout:ident, $scale:literal) => {
            list.push(Wgmma {
                entry: stringify!($name),
                rs: stringify!($form) == "Rs",
                a: Elem::$a,
                b: Elem::$b,
                n: $n,
                k_steps: $k,
                layout: stringify!($layout),
                scale_a: $scale,
            });
        };
    }
    wgmma_cases!(host_case);
    list
}

/// The cases of `wgmma_cases!`, to run.
pub fn cases() -> Vec<Case> {
    list()
        .into_iter()
        .map(|case| Case {
            name: case.entry.to_string(),
            run: Box::new(move |gpu, seed| case.run(gpu, seed)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Elem;

    #[test]
    fn small_integers_encode_exactly() {
        // bf16: the upper half of the f32.
        for v in -4..=4 {
            assert_eq!(
                u32::from(Elem::Bf16.encode(v)) << 16,
                (v as f32).to_bits(),
                "{v}"
            );
        }
        assert_eq!(Elem::F16.encode(1), 0x3C00);
        assert_eq!(Elem::F16.encode(-3), 0xC200);
        assert_eq!(Elem::F16.encode(4), 0x4400);
        assert_eq!(Elem::E4m3.encode(1), 0x38);
        assert_eq!(Elem::E4m3.encode(-4), 0xC8);
        assert_eq!(Elem::E4m3.encode(3), 0x44);
        assert_eq!(Elem::E5m2.encode(1), 0x3C);
        assert_eq!(Elem::E5m2.encode(3), 0x42);
        assert_eq!(Elem::E5m2.encode(-2), 0xC0);
        assert_eq!(Elem::E5m2.encode(0), 0);
    }

    /// A swizzled row holds all the case's K steps; the entries' names are unique; the dynamic
    /// shared memory stays below the 48 KiB that needs no opt-in.
    #[test]
    fn every_case_fits_its_layout() {
        let list = super::list();
        assert_eq!(list.len(), 23);
        for case in &list {
            assert!(
                case.k_steps * super::STEP_BYTES <= case.row_bytes(),
                "{}",
                case.entry
            );
            assert!(case.a.bits() == case.b.bits(), "{}", case.entry);
            // MN-major B: 16-bit inputs (8-bit wgmma has no transpose), whole 64-column blocks.
            assert!(
                !case.b_mn_major() || (case.a.bits() == 16 && case.n % 64 == 0),
                "{}",
                case.entry
            );
            assert!(case.smem_bytes() <= 48 * 1024);
            assert_eq!(list.iter().filter(|c| c.entry == case.entry).count(), 1);
        }
    }
}
