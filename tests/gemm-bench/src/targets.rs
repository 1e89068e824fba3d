//! The GEMM's targets over a run's shapes (pure: no CUDA), the accounting of issue 24 printed
//! after the benchmark's table: per class of M (decode, mid, large) the geometric mean of ours
//! (the host API's default) over the faster cuBLAS default, how many shapes reach 0.90 and 1.0
//! of it, how many have the default within 3 % of the fastest of our timed kernels, and for
//! decode the fraction of the equal-bytes copy's bandwidth; then every shape that misses the
//! default's target, with the kernel that was faster.
//!
//! The default is measured twice in the same rounds: its own column (`ours`) and the column of
//! the kernel it chose (`ours-NAME`, the same launch). Both are counted; the chosen kernel's
//! column compares like with like (two columns of one kernel differ by the rounds' noise alone).

use std::fmt::Write as _;

use crate::check::geomean;
use crate::problem::Shape;

/// The default's target: within this factor of the fastest of our kernels.
pub const WITHIN: f64 = 1.03;

/// One timed shape as the targets read it: medians in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// The sizes.
    pub shape: Shape,
    /// The faster of `cublasGemmEx` and cuBLASLt's first heuristic choice (the faster default).
    pub cublas: Option<f64>,
    /// The host API's default kernel (`ours`).
    pub ours: Option<f64>,
    /// The kernel the default chose (its name, without `ours-`).
    pub chosen: Option<String>,
    /// Every timed kernel of the module: its name (without `ours-`) and median.
    pub kernels: Vec<(String, f64)>,
    /// The equal-bytes copy (decode shapes).
    pub copy: Option<f64>,
}

impl Timed {
    /// The fastest of our timed kernels: its name and median.
    pub fn fastest(&self) -> Option<(&str, f64)> {
        self.kernels
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(name, ms)| (name.as_str(), *ms))
    }

    /// The chosen kernel's own column, where it was timed.
    pub fn chosen_column(&self) -> Option<f64> {
        let chosen = self.chosen.as_deref()?;
        self.kernels
            .iter()
            .find(|(name, _)| name == chosen)
            .map(|&(_, ms)| ms)
    }
}

/// The classes of M the targets name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// M <= 64: bandwidth-bound, measured against the equal-bytes copy too.
    Decode,
    /// 64 < M <= 1024.
    Mid,
    /// M > 1024.
    Large,
}

impl Class {
    /// The class of `m`.
    pub fn of(m: usize) -> Self {
        match m {
            0..=64 => Class::Decode,
            65..=1024 => Class::Mid,
            _ => Class::Large,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Class::Decode => "decode (M <= 64)",
            Class::Mid => "mid (64 < M <= 1024)",
            Class::Large => "large (M > 1024)",
        }
    }
}

/// The report: one block per class that has shapes, then all of them, then the misses.
pub fn report(timed: &[Timed]) -> String {
    let mut out = String::from(
        "\n== targets: ours (the default) over the faster of cublasGemmEx and cublasLt-heuristic; the default against the fastest of our timed kernels (within 3 %)\n",
    );
    let mut classes = 0;
    for class in [Class::Decode, Class::Mid, Class::Large] {
        let of: Vec<&Timed> = timed
            .iter()
            .filter(|t| Class::of(t.shape.m) == class)
            .collect();
        if !of.is_empty() {
            out += &block(class.label(), &of);
            classes += 1;
        }
    }
    if classes > 1 {
        out += &block("all", &timed.iter().collect::<Vec<_>>());
    }
    let misses: Vec<String> = timed.iter().filter_map(miss).collect();
    if !misses.is_empty() {
        let _ = writeln!(
            out,
            "the default more than 3 % behind the fastest of our timed kernels (by the chosen kernel's column) on {} shape(s):",
            misses.len()
        );
        for line in misses {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// One class's lines.
fn block(label: &str, of: &[&Timed]) -> String {
    let mut out = format!("{label}: {} shape(s)\n", of.len());
    // ours / cuBLAS as a speed ratio: the faster default's time over ours.
    let ratios: Vec<(f64, Shape)> = of
        .iter()
        .filter_map(|t| Some((t.cublas? / t.ours?, t.shape)))
        .collect();
    if let Some(g) = geomean(&ratios.iter().map(|r| r.0).collect::<Vec<_>>()) {
        let (min, at) = ratios
            .iter()
            .copied()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("not empty: it has a geometric mean");
        let _ = writeln!(
            out,
            "  ours / cuBLAS: geometric mean {g:.3}, lowest {min:.3} ({at}); >= 0.90 on {} and >= 1.0 on {} of {}",
            ratios.iter().filter(|r| r.0 >= 0.90).count(),
            ratios.iter().filter(|r| r.0 >= 1.0).count(),
            ratios.len()
        );
    }
    let fastest: Vec<f64> = of
        .iter()
        .filter_map(|t| Some(t.cublas? / t.fastest()?.1))
        .collect();
    if let Some(g) = geomean(&fastest) {
        let _ = writeln!(
            out,
            "  the fastest of our timed kernels / cuBLAS: geometric mean {g:.3}"
        );
    }
    let with_kernels: Vec<&&Timed> = of.iter().filter(|t| t.fastest().is_some()).collect();
    if !with_kernels.is_empty() {
        let own = with_kernels
            .iter()
            .filter(|t| matches!((t.ours, t.fastest()), (Some(o), Some((_, f))) if o <= WITHIN * f))
            .count();
        let chosen: Vec<bool> = with_kernels
            .iter()
            .filter_map(|t| Some(t.chosen_column()? <= WITHIN * t.fastest()?.1))
            .collect();
        let _ = writeln!(
            out,
            "  the default within 3 % of the fastest: {own} of {} by its own column, {} of {} by the chosen kernel's",
            with_kernels.len(),
            chosen.iter().filter(|&&w| w).count(),
            chosen.len()
        );
    }
    let copy: Vec<f64> = of.iter().filter_map(|t| Some(t.copy? / t.ours?)).collect();
    if let Some(g) = geomean(&copy) {
        let (lo, hi) = copy.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        let _ = writeln!(
            out,
            "  ours' fraction of the equal-bytes copy's bandwidth: geometric mean {g:.3}, {lo:.3} to {hi:.3}; >= 0.80 on {} of {}",
            copy.iter().filter(|&&x| x >= 0.80).count(),
            copy.len()
        );
    }
    out
}

/// The line of a shape whose default (the chosen kernel's column) is more than 3 % behind the
/// fastest of our timed kernels; `None` where it is not, or where either was not timed.
fn miss(t: &Timed) -> Option<String> {
    let (name, best) = t.fastest()?;
    let chosen = t.chosen_column()?;
    (chosen > WITHIN * best).then(|| {
        format!(
            "{}: the default {} {:.2} us, {name} {:.2} us ({:.3}x)",
            t.shape,
            t.chosen.as_deref().unwrap_or("?"),
            chosen * 1e3,
            best * 1e3,
            chosen / best
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(m: usize, cublas: f64, ours: f64, chosen: &str, kernels: &[(&str, f64)]) -> Timed {
        Timed {
            shape: Shape::new(m, 4096, 4096),
            cublas: Some(cublas),
            ours: Some(ours),
            chosen: Some(chosen.into()),
            kernels: kernels.iter().map(|&(n, t)| (n.into(), t)).collect(),
            copy: None,
        }
    }

    #[test]
    fn classes_split_at_64_and_1024() {
        assert_eq!(Class::of(1), Class::Decode);
        assert_eq!(Class::of(64), Class::Decode);
        assert_eq!(Class::of(65), Class::Mid);
        assert_eq!(Class::of(1024), Class::Mid);
        assert_eq!(Class::of(1025), Class::Large);
    }

    #[test]
    fn the_counts_and_the_misses() {
        let shapes = [
            // Ahead of cuBLAS, the default the fastest.
            timed(1, 2.0, 1.0, "a", &[("a", 1.0), ("b", 1.5)]),
            // At 0.95 of cuBLAS; the chosen kernel's column within 3 % of b (0.97 against
            // 0.96), the default's own column not (1.0).
            timed(16, 0.95, 1.0, "a", &[("a", 0.97), ("b", 0.96)]),
            // At 0.5 of cuBLAS, the default 2x behind b: a miss.
            timed(512, 1.0, 2.0, "a", &[("a", 2.0), ("b", 1.0)]),
        ];
        let text = report(&shapes);
        assert!(text.contains("decode (M <= 64): 2 shape(s)"), "{text}");
        assert!(
            text.contains("geometric mean 1.378, lowest 0.950 (16x4096x4096); >= 0.90 on 2 and >= 1.0 on 1 of 2"),
            "{text}"
        );
        assert!(
            text.contains(
                "within 3 % of the fastest: 1 of 2 by its own column, 2 of 2 by the chosen kernel's"
            ),
            "{text}"
        );
        assert!(text.contains("mid (64 < M <= 1024): 1 shape(s)"), "{text}");
        assert!(
            text.contains("lowest 0.500 (512x4096x4096); >= 0.90 on 0"),
            "{text}"
        );
        assert!(text.contains("all: 3 shape(s)"), "{text}");
        assert!(
            text.contains(
                "on 1 shape(s):\n  512x4096x4096: the default a 2000.00 us, b 1000.00 us (2.000x)"
            ),
            "{text}"
        );
        assert!(!text.contains("large"), "no large shape, no block: {text}");
    }

    #[test]
    fn one_class_has_no_all_block_and_untimed_kernels_count_nothing() {
        let mut t = timed(8, 1.0, 1.0, "a", &[]);
        t.copy = Some(0.9);
        let text = report(&[t.clone()]);
        assert!(!text.contains("all:"), "{text}");
        assert!(!text.contains("within 3 %:"), "{text}");
        assert!(
            !text.contains("shape(s):\n  "),
            "no miss without kernels: {text}"
        );
        assert!(
            text.contains(
                "copy's bandwidth: geometric mean 0.900, 0.900 to 0.900; >= 0.80 on 1 of 1"
            ),
            "{text}"
        );
        // The chosen kernel not among the timed ones (--kernels left it out): no chosen count,
        // no miss.
        t.kernels = vec![("b".into(), 0.5)];
        let text = report(&[t]);
        assert!(
            text.contains("0 of 1 by its own column, 0 of 0 by the chosen"),
            "{text}"
        );
        assert!(
            !text.contains("behind the fastest of our timed kernels (by"),
            "{text}"
        );
    }
}
