//! One-shot flows: an incast (N senders to one receiver, several at once), a shuffle (every
//! host to every other) or a permutation (every host to one other), each flow a connection
//! that sends its bytes once from its start and is done when they have all arrived. The
//! fabric studies of NDP (SIGCOMM 2017, §6), HPCC (SIGCOMM 2019, §5) and htsim's
//! `incast_shortflows` measure these: each flow's completion time, and an incast's last
//! flow's. The run ends when the last flow is delivered (or at the duration).
//!
//! Which hosts take part (`Placement`), on a fat tree: `random` draws the receivers and each
//! incast's senders from all the hosts with the run's seed; `packed` takes them in host order
//! (incast i's receiver is host i (N + 1), its senders the N after it; a shuffle's hosts are
//! the first N), as htsim's connection-matrix generators do without shuffling. On the other
//! fabrics the hosts are the workload's: an incast's senders are the servers, its receivers
//! the clients' places.

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::net::HostId;
use crate::time::Time;

/// Which hosts a fabric workload places its flows on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Drawn at random (seeded).
    #[default]
    Random,
    /// In host order.
    Packed,
    /// Receivers first, senders last (htsim's incast mains).
    Tail,
}

/// One flow of the set.
#[derive(Clone, Copy, Debug)]
pub struct OneShot {
    pub flow: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub bytes: u64,
    pub start: Time,
    /// When its last byte reached the receiver's application.
    pub end: Option<Time>,
    /// Which incast it belongs to (0 for a shuffle or a permutation).
    pub group: u32,
}

/// A flow's (source, destination, group).
pub type Pair = (HostId, HostId, u32);

/// The pairs of `incasts` incasts of `senders` senders each among `hosts` hosts.
pub fn incast_pairs(incasts: u32, senders: u32, hosts: u32, placement: Placement, rng: &mut impl Rng) -> Vec<Pair> {
    let mut pairs = Vec::with_capacity((incasts * senders) as usize);
    match placement {
        Placement::Packed => {
            for i in 0..incasts {
                let receiver = i * (senders + 1);
                pairs.extend((1..=senders).map(|s| (receiver + s, receiver, i)));
            }
        }
        Placement::Tail => {
            let first = hosts - incasts * senders;
            for i in 0..incasts {
                let block = first + i * senders;
                pairs.extend((block..block + senders).map(|s| (s, i, i)));
            }
        }
        Placement::Random => {
            let mut all: Vec<HostId> = (0..hosts).collect();
            all.shuffle(rng);
            let receivers: Vec<HostId> = all[..incasts as usize].to_vec();
            for (i, &r) in receivers.iter().enumerate() {
                let mut others: Vec<HostId> = (0..hosts).filter(|&h| h != r).collect();
                others.partial_shuffle(rng, senders as usize);
                pairs.extend(others[..senders as usize].iter().map(|&s| (s, r, i as u32)));
            }
        }
    }
    pairs
}

/// The hosts a shuffle or a permutation takes part on: `n` of `hosts`.
pub fn members(n: u32, hosts: u32, placement: Placement, rng: &mut impl Rng) -> Vec<HostId> {
    match placement {
        Placement::Packed => (0..n).collect(),
        Placement::Tail => (hosts - n..hosts).collect(),
        Placement::Random => {
            let mut all: Vec<HostId> = (0..hosts).collect();
            all.partial_shuffle(rng, n as usize);
            all.truncate(n as usize);
            all
        }
    }
}

/// Every member to every other, in member order.
pub fn shuffle_pairs(members: &[HostId]) -> Vec<Pair> {
    members.iter().flat_map(|&a| members.iter().filter(move |&&b| b != a).map(move |&b| (a, b, 0))).collect()
}

/// Every member to one other, each receiving from one: a uniformly random derangement
/// (Sattolo's algorithm: a random cyclic permutation has no fixed point).
pub fn permutation_pairs(members: &[HostId], rng: &mut impl Rng) -> Vec<Pair> {
    let n = members.len();
    let mut to: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        to.swap(i, j);
    }
    (0..n).map(|i| (members[i], members[to[i]], 0)).collect()
}

/// The one-shot flows of a run.
pub struct FlowSet {
    pub flows: Vec<OneShot>,
    /// The first flow's id: the set's flows are `first..first + len`, made at the world's build.
    first: FlowId,
    done: usize,
    /// Each group's flows not yet delivered (the last of an incast ends it).
    left: Vec<u32>,
    /// The run ends when the last flow is delivered (no duration was given).
    until_done: bool,
}

/// Timer kind: flow `arg` starts.
const START: u8 = 0;

impl FlowSet {
    /// The flows `flows` (their connections made, ids from `first` in order); the run ends
    /// with the last one's delivery when `until_done`.
    pub fn new(flows: Vec<OneShot>, first: FlowId, until_done: bool) -> FlowSet {
        let mut left = vec![0; flows.iter().map(|f| f.group as usize + 1).max().unwrap_or(0)];
        for f in &flows {
            left[f.group as usize] += 1;
        }
        FlowSet { flows, first, done: 0, left, until_done }
    }

    /// Each flow's start: at once, or its timer.
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        for f in &self.flows {
            if f.start == cx.now {
                out.push(Action::Begin(f.flow));
                out.push(Action::Write(f.flow, f.bytes));
            } else {
                out.push(Action::Timer { at: f.start, kind: START, arg: f.flow });
            }
        }
    }

    pub(crate) fn on_timer(&mut self, flow: FlowId, out: &mut Actions) {
        let f = &self.flows[(flow - self.first) as usize];
        out.push(Action::Begin(flow));
        out.push(Action::Write(flow, f.bytes));
    }

    /// `flow`'s receiver holds its bytes up to `to`: done when they are all there.
    pub(crate) fn on_delivered(&mut self, cx: &mut Ctx, flow: FlowId, to: u64, out: &mut Actions) {
        let f = &mut self.flows[(flow - self.first) as usize];
        if to < f.bytes || f.end.is_some() {
            return;
        }
        f.end = Some(cx.now);
        self.done += 1;
        // its part is done (the time breakdown's); the last of its incast ends the incast
        self.left[f.group as usize] -= 1;
        out.push(Action::Close(flow, self.left[f.group as usize] == 0));
        if self.done == self.flows.len() && self.until_done {
            out.push(Action::Finished);
        }
    }

    /// Flows delivered whole.
    pub fn completed(&self) -> usize {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn packed_incasts_take_the_hosts_in_order_receiver_first() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let p = incast_pairs(2, 3, 16, Placement::Packed, &mut rng);
        assert_eq!(p, vec![(1, 0, 0), (2, 0, 0), (3, 0, 0), (5, 4, 1), (6, 4, 1), (7, 4, 1)]);
    }

    #[test]
    fn tail_incasts_take_the_receivers_first_and_the_senders_last_as_htsims_set_incast() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        // htsim's setIncast(3, 16 - 3): receiver 0, senders 13, 14, 15
        assert_eq!(incast_pairs(1, 3, 16, Placement::Tail, &mut rng), vec![(13, 0, 0), (14, 0, 0), (15, 0, 0)]);
        // two incasts: receivers 0 and 1, sender blocks 10-12 and 13-15
        let p = incast_pairs(2, 3, 16, Placement::Tail, &mut rng);
        assert_eq!(p, vec![(10, 0, 0), (11, 0, 0), (12, 0, 0), (13, 1, 1), (14, 1, 1), (15, 1, 1)]);
        // every host that may be asked for: incasts x (senders + 1) of them
        let full = incast_pairs(4, 3, 16, Placement::Tail, &mut rng);
        assert!(full.iter().all(|&(s, r, _)| s >= 4 && r < 4));
        assert_eq!(members(3, 16, Placement::Tail, &mut rng), vec![13, 14, 15]);
    }

    #[test]
    fn random_incasts_have_distinct_receivers_and_distinct_senders_that_are_not_their_receiver() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(2);
        let p = incast_pairs(5, 20, 64, Placement::Random, &mut rng);
        let receivers: std::collections::BTreeSet<_> = p.iter().map(|x| x.1).collect();
        assert_eq!(receivers.len(), 5);
        for g in 0..5 {
            let senders: std::collections::BTreeSet<_> = p.iter().filter(|x| x.2 == g).map(|x| x.0).collect();
            assert_eq!(senders.len(), 20);
            assert!(p.iter().filter(|x| x.2 == g).all(|x| x.0 != x.1));
        }
    }

    #[test]
    fn a_permutation_sends_and_receives_once_per_host_and_never_to_itself() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for n in [2, 3, 10, 100] {
            let m: Vec<HostId> = (10..10 + n).collect();
            let p = permutation_pairs(&m, &mut rng);
            let dsts: std::collections::BTreeSet<_> = p.iter().map(|x| x.1).collect();
            assert_eq!((p.len(), dsts.len()), (n as usize, n as usize));
            assert!(p.iter().all(|x| x.0 != x.1));
        }
    }

    #[test]
    fn a_shuffle_joins_every_ordered_pair_once() {
        let p = shuffle_pairs(&[3, 5, 9]);
        assert_eq!(p, vec![(3, 5, 0), (3, 9, 0), (5, 3, 0), (5, 9, 0), (9, 3, 0), (9, 5, 0)]);
    }
}
