//! Load balancing over equal-cost uplinks: which of a switch's uplinks a packet takes where
//! its route goes up (`net::topology`'s `route_with`).
//!
//! - `destination`: by the destination host's rank on its own switch, the static two-level
//!   tables of Al-Fares et al. (SIGCOMM 2008 §3.3): every flow to one host takes one path.
//! - `ecmp`: by a hash of the flow and the switch (RFC 2992's hash-threshold idea, as
//!   switches hash a packet's 5-tuple with a seed of their own), seeded by the run's seed:
//!   every packet of a flow takes one path, different flows spread at random.
//! - `spray`: every packet its own uplink, drawn at random (NDP's and the Ultra Ethernet
//!   consortium's per-packet spraying), from a stream of the fabric's own so that turning it
//!   on shifts no other draw.
//! - `spray_rr`: every packet the switch's next uplink in turn.
//!
//! Spraying reorders a flow's packets when its paths' queues differ; TCP sees the reordering
//! as duplicate ACKs (the model does not adapt its duplicate threshold as Linux does).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use crate::event::FlowId;
use crate::net::topology::SwitchId;

/// How a switch picks among its equal-cost uplinks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// By the destination's rank on its switch (static two-level routes).
    #[default]
    Destination,
    /// By a seeded hash of the flow and the switch: one path per flow.
    Ecmp,
    /// Each packet on a random uplink.
    Spray,
    /// Each packet on the switch's next uplink in turn.
    SprayRr,
}

/// A fabric's load balancer and its state.
#[derive(Clone, Debug)]
pub struct Balancer {
    pub mode: LoadBalancing,
    seed: u64,
    rng: Pcg64,
    /// `spray_rr`: each switch's next uplink (by switch).
    next: Vec<u32>,
}

/// SplitMix64's finaliser: a fast 64-bit mix whose every input bit reaches every output bit.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Balancer {
    pub fn new(mode: LoadBalancing, seed: u64, switches: usize) -> Balancer {
        let rng = Pcg64::seed_from_u64(seed ^ 0x7370_7261_7921);
        let next = if mode == LoadBalancing::SprayRr { vec![0; switches] } else { vec![] };
        Balancer { mode, seed, rng, next }
    }

    /// The uplink (of `n`) a packet of `flow` takes at switch `sw`.
    #[inline]
    pub fn pick(&mut self, sw: SwitchId, flow: FlowId, n: usize) -> usize {
        match self.mode {
            LoadBalancing::Destination => unreachable!("destination routes are the topology's own"),
            LoadBalancing::Ecmp => (ecmp_hash(self.seed, sw, flow) % n as u64) as usize,
            LoadBalancing::Spray => self.rng.random_range(0..n),
            LoadBalancing::SprayRr => {
                let c = &mut self.next[sw as usize];
                let i = *c as usize % n;
                *c = c.wrapping_add(1);
                i
            }
        }
    }
}

/// The hash a switch gives a flow: the flow's id stands for its 5-tuple (one connection, one
/// source port), the switch's id for its own hash seed.
#[inline]
pub fn ecmp_hash(seed: u64, sw: SwitchId, flow: FlowId) -> u64 {
    mix(seed ^ mix((flow as u64) << 32 | sw as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecmp_keeps_a_flow_on_one_uplink_and_spreads_flows_evenly() {
        let mut b = Balancer::new(LoadBalancing::Ecmp, 7, 4);
        for flow in 0..50 {
            let first = b.pick(2, flow, 4);
            assert!((0..20).all(|_| b.pick(2, flow, 4) == first), "flow {flow} stays on its uplink");
        }
        // 40,000 flows over 4 uplinks: each gets 10,000, sd = sqrt(40,000 x 1/4 x 3/4) = 87;
        // 5 sd is 433, a tolerance a correct hash misses with probability ~1e-6
        let mut counts = [0u32; 4];
        for flow in 0..40_000 {
            counts[b.pick(3, flow, 4)] += 1;
        }
        assert!(counts.iter().all(|&c| (c as i64 - 10_000).abs() < 433), "{counts:?}");
    }

    #[test]
    fn ecmp_depends_on_the_seed_and_the_switch() {
        let on = |seed, sw| (0..64).map(|f| ecmp_hash(seed, sw, f) % 8).collect::<Vec<_>>();
        assert_ne!(on(1, 0), on(2, 0), "another seed, other paths");
        assert_ne!(on(1, 0), on(1, 1), "another switch, another hash (no polarisation)");
        assert_eq!(on(1, 0), on(1, 0));
    }

    #[test]
    fn round_robin_spraying_takes_the_uplinks_in_turn_per_switch() {
        let mut b = Balancer::new(LoadBalancing::SprayRr, 1, 3);
        let picks: Vec<usize> = (0..6).map(|_| b.pick(1, 0, 4)).collect();
        assert_eq!(picks, vec![0, 1, 2, 3, 0, 1]);
        assert_eq!(b.pick(2, 0, 4), 0, "each switch has its own turn");
    }

    #[test]
    fn random_spraying_balances_packets_over_the_uplinks() {
        // 80,000 packets over 8 uplinks: 10,000 each, sd 94; 5 sd = 468
        let mut b = Balancer::new(LoadBalancing::Spray, 3, 1);
        let mut counts = [0u32; 8];
        for _ in 0..80_000 {
            counts[b.pick(0, 5, 8)] += 1;
        }
        assert!(counts.iter().all(|&c| (c as i64 - 10_000).abs() < 468), "{counts:?}");
    }
}
