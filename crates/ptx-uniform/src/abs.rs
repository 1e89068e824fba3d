//! The abstract domain: how uniform a value is across the CTA's threads (its granularity), and
//! the value of each special register. The parser records special registers' values in it, and
//! the evaluation of instructions (`value`) and the analysis compute in it.

/// Granularity of a value equal in the whole CTA.
pub(crate) const UNIFORM: u8 = u8::MAX;
/// Granularity an `.aligned` instruction needs: its warp (32 threads).
pub const WARP: u8 = 5;
/// Granularity `wgmma.*` and `setmaxnreg` need: their warpgroup (128 threads).
pub const WARPGROUP: u8 = 7;

/// The abstract value of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Abs {
    /// Exactly `%tid.x + c (mod 2^32)` in every thread, whichever definition wrote it: a fixed
    /// function of the thread, so no branch or loop can make two threads of a block disagree
    /// about it beyond what `%tid.x` does (which is why sync dependence leaves it alone).
    TidPlus(u32),
    /// Equal in every set of threads whose `%tid.x` lie in one aligned block of `2^k`
    /// (`UNIFORM`: in the CTA; 0: lane-varying).
    Gran(u8),
}

impl Abs {
    pub(crate) fn gran(self) -> u8 {
        match self {
            Abs::TidPlus(_) => 0,
            Abs::Gran(g) => g,
        }
    }

    /// Either value (two definitions of one register).
    pub(crate) fn join(self, other: Abs) -> Abs {
        match (self, other) {
            (a, b) if a == b => a,
            (a, b) => Abs::Gran(a.gran().min(b.gran())),
        }
    }

    /// The value when it also depends on something of granularity `g` (a guard, or the block's
    /// threads). `%tid.x + c` is the same function of the thread whatever that is.
    pub(crate) fn depend(self, g: u8) -> Abs {
        match self {
            Abs::TidPlus(_) => self,
            Abs::Gran(k) => Abs::Gran(k.min(g)),
        }
    }
}

/// A granularity from a number of low bits: 32 or more is the whole CTA.
pub(crate) fn bits(j: u32) -> u8 {
    if j >= 32 { UNIFORM } else { j as u8 }
}

/// The value of a special register (`%tid.x`, `%ctaid.y`, ...).
pub(crate) fn special(name: &str) -> Abs {
    let base = name.split('.').next().unwrap_or(name);
    if name == "%tid.x" {
        return Abs::TidPlus(0);
    }
    const UNIFORM_SPECIALS: [&str; 17] = [
        "%ntid",
        "%ctaid",
        "%nctaid",
        "%clusterid",
        "%nclusterid",
        "%cluster_ctaid",
        "%cluster_nctaid",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%is_explicit_cluster",
        "%gridid",
        "%nwarpid",
        "%nsmid",
        "%dynamic_smem_size",
        "%total_smem_size",
        "%aggr_smem_size",
        "%current_graph_exec",
    ];
    if UNIFORM_SPECIALS.contains(&base) || base.starts_with("%envreg") {
        Abs::Gran(UNIFORM)
    } else {
        Abs::Gran(0)
    }
}
