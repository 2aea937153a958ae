//! Where a world's workload goes: which hosts its one-shot flows join (drawn once, at the
//! build, from the run's stream), how many clients the fabric places, which host's downlink
//! the results watch, and which hosts carry the background.

use rand::Rng;

use crate::app::flows::{incast_pairs, members, permutation_pairs, shuffle_pairs, Pair};
use crate::net::HostId;
use crate::net::TopologyKind;
use crate::scenario::{Scenario, Workload};

/// A workload's hosts.
pub(super) struct Plan {
    /// Hosts placed as clients (after the servers): the synchronized reads' clients, an
    /// incast's receivers off a fat tree.
    pub clients: u32,
    /// The host whose downlink is the bottleneck the results and the mirror watch.
    pub watched: HostId,
    /// The one-shot flows' (source, destination, group), in order.
    pub pairs: Vec<Pair>,
    /// The workload's hosts, counted as the fabric places them (`0..workload_hosts`).
    pub workload_hosts: u32,
}

impl Plan {
    pub fn of(sc: &Scenario, rng: &mut impl Rng) -> Plan {
        let s = &sc.spec;
        let n = s.servers;
        let tree = sc.fabric.fat_tree.map(|t| t.hosts());
        match s.workload {
            Workload::SyncRead => Plan { clients: s.clients, watched: n, pairs: vec![], workload_hosts: n + s.clients },
            // Riak: the servers are the nodes, and there is no client; node 0's downlink
            Workload::Riak => Plan { clients: 0, watched: 0, pairs: vec![], workload_hosts: n },
            Workload::Incast => {
                let pairs = match tree {
                    Some(hosts) => incast_pairs(s.incasts, n, hosts, s.placement, rng),
                    // the servers send, the clients' places receive
                    None => (0..s.incasts).flat_map(|i| (0..n).map(move |src| (src, n + i, i))).collect(),
                };
                let clients = if tree.is_some() { 0 } else { s.incasts };
                Plan { clients, watched: pairs[0].1, pairs, workload_hosts: n + s.incasts }
            }
            Workload::Shuffle | Workload::Permutation => {
                let hosts = members(n, tree.unwrap_or(n), s.placement, rng);
                let pairs = match s.workload {
                    Workload::Shuffle => shuffle_pairs(&hosts),
                    _ => permutation_pairs(&hosts, rng),
                };
                Plan { clients: 0, watched: pairs[0].1, pairs, workload_hosts: n }
            }
        }
    }

    /// The hosts the Poisson background runs among: its own hosts when it has some (after the
    /// workload's and the bulk flow's), else every host of a fat tree, else the workload's.
    pub fn background_hosts(&self, sc: &Scenario) -> Vec<HostId> {
        let s = &sc.spec;
        if s.background_hosts > 0 {
            let from = self.workload_hosts + 2 * s.victim as u32;
            return (from..from + s.background_hosts).collect();
        }
        match s.topology {
            TopologyKind::FatTree => (0..sc.fabric.hosts).collect(),
            _ => (0..self.workload_hosts).collect(),
        }
    }
}
