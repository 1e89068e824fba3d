//! Threshold arithmetic of the counter protocol: pure, no `unsafe`, no `cfg`.
//!
//! The counter backends ([`AmdCounterBackend`](crate::AmdCounterBackend), its nvptx build,
//! and the host model [`HostCounterBackend`](crate::HostCounterBackend)) keep one monotonic
//! counter per signal. Each arrival adds 1 (the lanes of a wave that arrive on one counter in
//! the same call are added in one atomic, see [`wave_share`]). Nothing is ever reset, so there is
//! no parity and no ABA.
//!
//! - A consumer on lap `p` waits until `full >= (p + 1) * producer_arrivals`.
//! - A producer on lap `q` waits until `empty >= (q - 1) * consumer_arrivals`.
//!
//! # Wrapping, and why no lap bound is needed
//!
//! Laps wrap modulo 2^32 ([`crate::cursor`]). Thresholds are computed modulo 2^32 from them,
//! and a counter is compared with its threshold by serial-number arithmetic (RFC 1982): the
//! counter has reached the threshold when `counter - threshold`, taken modulo 2^32, read as a
//! signed 32-bit number, is not negative. That comparison is exact whenever the true distance
//! between the two is below 2^31. The protocol bounds the distance by one lap's arrivals:
//! while a consumer waits for lap `p`, the full counter lies in `[p * P, (p + 1) * P]`
//! (the producer cannot fill lap `p + 1` of this slot before this consumer released lap `p`);
//! likewise the empty counter for a producer on lap `q` lies in `[(q - 2) * C, (q - 1) * C]`.
//! Arrive counts are at most [`MAX_COUNTER_ARRIVALS`] (far below 2^31), so the comparison is
//! exact on every lap, for any number of laps: the counters may wrap too.
//!
//! The producer's `q - 1` is a wrapping subtraction. It never wraps on the first pass (the
//! producer cursor starts on lap 1 and only moves forward), and after 2^32 laps it wraps
//! consistently with everything else.

/// The largest arrive count a counter backend accepts: the largest thread block (work-group)
/// either vendor launches, 1024 threads. More arrivals than threads could never be met.
pub const MAX_COUNTER_ARRIVALS: u32 = 1024;

/// The value a counter must reach once its signal has completed `completions` phases of
/// `per_phase` arrivals each, modulo 2^32. A side on lap `l` waits for
/// [`Side::completions`](crate::Side::completions)`(l)` completions: a consumer on lap `p` for
/// `full >= (p + 1) * producer_arrivals`, a producer on lap `q` for
/// `empty >= (q - 1) * consumer_arrivals`.
#[inline(always)]
#[must_use]
pub const fn threshold(completions: u32, per_phase: u32) -> u32 {
    completions.wrapping_mul(per_phase)
}

/// Whether a counter has reached a threshold, by serial-number arithmetic modulo 2^32.
///
/// Only the low 32 bits of a counter matter; a 64-bit counter is truncated by the caller.
#[inline(always)]
#[must_use]
pub const fn reached(counter: u32, threshold: u32) -> bool {
    (counter.wrapping_sub(threshold) as i32) >= 0
}

/// The arrivals the calling lane adds for its wave, when lanes of one wave (warp) arrive
/// together and each lane's arrival must count on the counter *that lane* names.
///
/// `peers` is the mask of the arriving lanes whose counter is the calling lane's (the calling
/// lane included: NVIDIA `match.any.sync` on the counter address, AMD the lanes that share the
/// first remaining lane's address); `peers_below` is how many of them sit below the calling lane.
/// The lowest lane of `peers` adds them all; every other lane adds nothing. Summed over the lanes
/// of a call, each counter receives exactly the number of lanes that named it, however the lanes
/// split between counters: a leader never adds for a lane of another counter.
#[inline(always)]
#[must_use]
pub const fn wave_share(peers: u64, peers_below: u32) -> u32 {
    if peers_below == 0 {
        peers.count_ones()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::{Consumer, Producer, Side};
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn first_pass_producer_never_waits_and_consumer_waits_for_one_fill() {
        for arrivals in [1, 2, 32, 128, MAX_COUNTER_ARRIVALS] {
            assert_eq!(threshold(Producer::completions(1), arrivals), 0);
            assert!(reached(0, threshold(Producer::completions(1), arrivals)));
            assert_eq!(threshold(Consumer::completions(0), arrivals), arrivals);
            assert!(!reached(
                arrivals - 1,
                threshold(Consumer::completions(0), arrivals)
            ));
            assert!(reached(
                arrivals,
                threshold(Consumer::completions(0), arrivals)
            ));
        }
    }

    /// Runs a slot through many laps with the true (unbounded) counter values and checks that
    /// the modular comparison gives the same answer as exact arithmetic at every counter value
    /// the protocol allows while a side waits, including across the 2^32 wrap of laps and counters.
    #[test]
    fn modular_comparison_equals_exact_comparison_across_wraps() {
        for arrivals in [1u32, 3, 128, MAX_COUNTER_ARRIVALS] {
            let a = arrivals as u64;
            let around_wrap = (u32::MAX as u64 / a).saturating_sub(3);
            for true_lap in (0..8u64)
                .chain(around_wrap..around_wrap + 8)
                .chain((1u64 << 32) - 4..(1u64 << 32) + 4)
            {
                let lap = true_lap as u32;
                // Consumer on lap p: the full counter lies in [p*A, (p+1)*A].
                let need = (true_lap + 1) * a;
                for value in true_lap * a..=need {
                    let exact = value >= need;
                    assert_eq!(
                        reached(
                            value as u32,
                            threshold(Consumer::completions(lap), arrivals)
                        ),
                        exact,
                        "consumer lap {true_lap} A {arrivals} value {value}"
                    );
                }
                // Producer on lap q >= 1: the empty counter lies in [(q-2)*A, (q-1)*A] (clamped at 0).
                let q = true_lap + 1;
                let need = (q - 1) * a;
                for value in (q.saturating_sub(2)) * a..=need {
                    let exact = value >= need;
                    assert_eq!(
                        reached(
                            value as u32,
                            threshold(Producer::completions(q as u32), arrivals)
                        ),
                        exact,
                        "producer lap {q} A {arrivals} value {value}"
                    );
                }
            }
        }
    }

    /// A wave whose lanes arrive on counters `target[lane]` (`None`: the lane does not arrive):
    /// peers as the hardware forms them, then every lane's [`wave_share`]; each counter must
    /// receive exactly its lanes.
    fn check_wave(target: &[Option<u8>]) {
        let mut added = [0u32; 256];
        for (lane, mine) in target.iter().enumerate() {
            let Some(mine) = mine else { continue };
            let peers = target
                .iter()
                .enumerate()
                .filter(|(_, t)| **t == Some(*mine))
                .fold(0u64, |m, (l, _)| m | 1 << l);
            let below = (peers & ((1u64 << lane) - 1)).count_ones();
            added[*mine as usize] += wave_share(peers, below);
        }
        for counter in 0..=255u8 {
            let lanes = target.iter().filter(|t| **t == Some(counter)).count() as u32;
            assert_eq!(
                added[counter as usize], lanes,
                "counter {counter}, wave {target:?}"
            );
        }
    }

    #[test]
    fn wave_share_counts_each_lane_on_its_own_counter() {
        for width in [32usize, 64] {
            // One counter, all lanes or one lane (the fast paths).
            check_wave(&vec![Some(0); width]);
            check_wave(
                &(0..width)
                    .map(|l| (l == 5).then_some(3))
                    .collect::<Vec<_>>(),
            );
            // Lane l on counter l & 1 (two stages' full signals), l on counter l (all distinct),
            // lanes 0..4 on counters 0..4 (several storers done with lanes), and some idle lanes.
            check_wave(&(0..width).map(|l| Some((l & 1) as u8)).collect::<Vec<_>>());
            check_wave(&(0..width).map(|l| Some(l as u8)).collect::<Vec<_>>());
            check_wave(
                &(0..width)
                    .map(|l| (l < 4).then_some(l as u8))
                    .collect::<Vec<_>>(),
            );
            check_wave(
                &(0..width)
                    .map(|l| (l % 3 != 0).then_some((l % 5) as u8))
                    .collect::<Vec<_>>(),
            );
        }
        // Pseudo-random splits.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let wave: Vec<Option<u8>> = (0..64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 7 != 0).then_some((x % 4) as u8)
                })
                .collect();
            check_wave(&wave);
            check_wave(&wave[..32]);
        }
    }
}
