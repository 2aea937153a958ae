//! The network as data: hosts, switches, the links between them (each direction an output
//! port with its own rate and propagation delay) and static routes (per switch, per
//! destination host: the output port to forward on).
//!
//! Hosts are numbered servers first (`0..servers`), then the clients
//! (`servers..servers + clients`; none in the Riak workload, whose nodes are the servers),
//! then any extra hosts a builder adds (a victim flow's sender and receiver). Every builder
//! puts the clients on switch 0 ([`Topology::client_switch`]). Ports are numbered host NICs
//! first, in host order, then the switches' ports; the star keeps the numbering the world
//! had before topologies were data (server NICs, the client's NIC, the switch port towards
//! the client, the ports towards each server).

use serde::{Deserialize, Serialize};

use crate::event::PortId;
use crate::time::Time;

/// Index of a host (a server, the client, an extra sender or receiver).
pub type HostId = u32;
/// Index of a switch.
pub type SwitchId = u32;

/// Which fabric joins the hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// Every host on one switch (FAST'08 Fig. 1).
    #[default]
    Star,
    /// Two switches joined by a trunk: the client and the first half of the servers (rounded
    /// up) on switch 0, the rest on switch 1 (FAST'08 §5.2: two switches with a trunk).
    TwoSwitch,
    /// Two tiers: leaves holding the hosts, each linked to every spine (the thousands of
    /// servers behind more than one switch of SIGCOMM'09 and WREN'09).
    LeafSpine,
    /// A three-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008 §3): k pods of k/2 edge
    /// and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts (`FatTree`).
    FatTree,
}

/// A node: where a link ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Host(HostId),
    Switch(SwitchId),
}

/// One direction of a link: the output port at `from` and the wire to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSpec {
    pub from: Node,
    pub to: Node,
    pub rate_bps: u64,
    pub delay: Time,
}

/// Where a host hangs off: its switch and that switch's port towards it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Home {
    switch: SwitchId,
    port: PortId,
}

/// How a switch forwards towards a host on another switch: down towards the switch the host
/// hangs off, when that switch is below it (a spine's port towards a leaf, a fat tree's
/// aggregation port towards an edge of its pod, a core's port towards a pod), else up over
/// one of its equal-cost uplinks (a leaf's spines, an edge's aggregation switches, an
/// aggregation switch's cores, a trunk alone). Which uplink is the load balancer's choice
/// ([`Topology::route_with`]).
#[derive(Clone, Debug, Default)]
struct Transit {
    /// By the destination's home switch: the port down towards it (`PortId::MAX`: not
    /// below this switch); empty for a switch with nothing below but hosts.
    down: Vec<PortId>,
    /// The uplinks, in the order they were added.
    up: Vec<PortId>,
}

/// Hosts, switches, ports and routes.
///
/// Routes are static per (switch, destination host), stored in two levels so that they
/// take memory linear in hosts and links: a host's own switch forwards on its port
/// towards it; any other switch by its [`Transit`] rule. On a leaf-spine the spine a
/// packet crosses is chosen by its destination's rank on the destination's leaf: the
/// two-level tables of Al-Fares et al. (SIGCOMM 2008 §3.3), whose upward hop is chosen by
/// the host-ID suffix, so traffic to different hosts spreads over the core switches and
/// every flow's packets keep one path (no reordering).
#[derive(Clone, Debug)]
pub struct Topology {
    pub hosts: u32,
    pub switches: u32,
    /// Every output port, indexed by [`PortId`].
    pub ports: Vec<PortSpec>,
    /// The port in the opposite direction of each port's link (a PAUSE frame for port p's
    /// traffic leaves its far end on `reverse[p]`).
    pub reverse: Vec<PortId>,
    /// Each host's NIC.
    nic: Vec<PortId>,
    home: Vec<Home>,
    /// Each host's rank among the hosts on its switch, in host order.
    rank: Vec<u32>,
    transit: Vec<Transit>,
    /// The fat tree's shape, to name its switches by tier; `None` on other fabrics.
    tree: Option<FatTree>,
}

impl Topology {
    /// A node as a person reads it: "host 12", "switch 3"; a fat tree's switches by tier
    /// and index, "edge 5", "agg 2.1" (pod 2's second), "core 7".
    pub fn node_name(&self, node: Node) -> String {
        match (node, self.tree) {
            (Node::Host(h), _) => format!("host {h}"),
            (Node::Switch(sw), Some(t)) if sw < t.edges() => format!("edge {sw}"),
            (Node::Switch(sw), Some(t)) if sw < 2 * t.edges() => {
                let i = sw - t.edges();
                format!("agg {}.{}", i / t.half(), i % t.half())
            }
            (Node::Switch(sw), Some(t)) => format!("core {}", sw - 2 * t.edges()),
            (Node::Switch(sw), None) => format!("switch {sw}"),
        }
    }

    /// Output port `p` as a person reads it: "agg 2.1 -> edge 5".
    pub fn port_name(&self, p: PortId) -> String {
        let spec = &self.ports[p as usize];
        format!("{} -> {}", self.node_name(spec.from), self.node_name(spec.to))
    }

    /// Host `h`'s NIC.
    #[inline]
    pub fn nic(&self, h: HostId) -> PortId {
        self.nic[h as usize]
    }

    /// The port switch `sw` forwards a packet for host `dst` on, taking the uplink the
    /// destination's rank on its own switch picks (`rank % uplinks`): the two-level tables of
    /// Al-Fares et al. (SIGCOMM 2008 §3.3), whose upward hop is chosen by the host-ID suffix,
    /// so traffic to different hosts spreads over the uplinks and every flow keeps one path.
    #[inline]
    pub fn route(&self, sw: SwitchId, dst: HostId) -> PortId {
        self.route_with(sw, dst, |n| self.rank[dst as usize] as usize % n)
    }

    /// The port switch `sw` forwards a packet for host `dst` on, `pick(n)` choosing among
    /// the `n` uplinks where it goes up (a load balancer: a flow hash, a packet spray).
    #[inline]
    pub fn route_with(&self, sw: SwitchId, dst: HostId, pick: impl FnOnce(usize) -> usize) -> PortId {
        let home = self.home[dst as usize];
        if home.switch == sw {
            home.port
        } else {
            self.transit(sw, home.switch, dst, pick)
        }
    }

    /// The port switch `sw` forwards on towards host `dst` on switch `home` (not `sw`).
    #[inline]
    fn transit(&self, sw: SwitchId, home: SwitchId, dst: HostId, pick: impl FnOnce(usize) -> usize) -> PortId {
        let t = &self.transit[sw as usize];
        match t.down.get(home as usize) {
            Some(&p) if p != PortId::MAX => p,
            _ if !t.up.is_empty() => t.up[pick(t.up.len())],
            _ => panic!("switch {sw} has no route to host {dst}"),
        }
    }

    /// The uplinks of switch `sw` (its equal-cost group upwards).
    pub fn uplinks(&self, sw: SwitchId) -> &[PortId] {
        &self.transit[sw as usize].up
    }

    /// The switch host `h` hangs off.
    pub fn switch_of(&self, h: HostId) -> SwitchId {
        self.home[h as usize].switch
    }

    /// The switch a port's link leads to, if it leads to one.
    #[inline]
    pub fn far_switch(&self, port: PortId) -> Option<SwitchId> {
        match self.ports[port as usize].to {
            Node::Switch(s) => Some(s),
            Node::Host(_) => None,
        }
    }

    /// The port is a switch's (it has a buffer), not a host's NIC.
    pub fn is_switch_port(&self, port: PortId) -> bool {
        matches!(self.ports[port as usize].from, Node::Switch(_))
    }

    /// Links a packet from host `src` crosses to reach host `dst`.
    pub fn hops(&self, src: HostId, dst: HostId) -> u32 {
        let mut port = self.nic(src);
        let mut hops = 1;
        while let Node::Switch(sw) = self.ports[port as usize].to {
            port = self.route(sw, dst);
            hops += 1;
            assert!(hops <= self.ports.len() as u32, "routing loop towards host {dst}");
        }
        debug_assert_eq!(self.ports[port as usize].to, Node::Host(dst));
        hops
    }

    /// Propagation plus serialization of `wire_bytes` from `src` to `dst`, store and forward.
    pub fn one_way(&self, src: HostId, dst: HostId, wire_bytes: u64) -> Time {
        let mut port = self.nic(src);
        let mut t = Time::ZERO;
        loop {
            let p = &self.ports[port as usize];
            t = t + p.delay + crate::time::serialization_time(wire_bytes, p.rate_bps);
            match p.to {
                Node::Switch(sw) => port = self.route(sw, dst),
                Node::Host(_) => return t,
            }
        }
    }

    /// FAST'08 Fig. 1: `servers` servers and `clients` clients on one switch; `extra` more
    /// hosts on it too.
    pub fn star(servers: u32, clients: u32, extra: u32, rate_bps: u64, delay: Time) -> Topology {
        Builder::new(servers, clients, extra, 1, rate_bps, delay).attach_all(|_| 0).build(|_, _| Transit::default())
    }

    /// Two switches joined by a trunk of `trunk_bps`: the clients and servers
    /// `0..ceil(servers / 2)` on switch 0, the other servers on switch 1. `extra_on` puts
    /// each extra host on a switch.
    pub fn two_switch(
        servers: u32,
        clients: u32,
        extra_on: &[SwitchId],
        rate_bps: u64,
        trunk_bps: u64,
        delay: Time,
        trunk_delay: Time,
    ) -> Topology {
        let near = servers.div_ceil(2);
        let switch_of = |h: HostId| match h {
            h if h < near => 0,
            h if h < servers => 1,
            h if h < servers + clients => Self::client_switch(),
            h => extra_on[(h - servers - clients) as usize],
        };
        let b = Builder::new(servers, clients, extra_on.len() as u32, 2, rate_bps, delay);
        b.attach_all(switch_of).link(0, 1, trunk_bps, trunk_delay).build(|sw, links| Transit { down: vec![], up: links.to_vec_for(sw) })
    }

    /// The switch every builder hangs the clients off.
    pub const fn client_switch() -> SwitchId {
        0
    }

    /// A two-tier leaf-spine: `fabric.leaves` leaves (switches `0..leaves`), each linked to
    /// every one of `fabric.spines` spines (switches `leaves..leaves + spines`) by an uplink
    /// of `uplink_bps` each way. Hosts hang off leaves as [`LeafSpine::leaf_of`] says; a leaf
    /// forwards towards another leaf's host over the uplink to spine `rank % spines`.
    pub fn leaf_spine(fabric: LeafSpine, rate_bps: u64, uplink_bps: u64, delay: Time, uplink_delay: Time) -> Topology {
        let (leaves, spines) = (fabric.leaves, fabric.spines);
        let b = Builder::new(fabric.servers, fabric.clients, fabric.extra_on.len() as u32, leaves + spines, rate_bps, delay);
        let mut b = b.attach_all(|h| fabric.leaf_of(h));
        for leaf in 0..leaves {
            for spine in 0..spines {
                b = b.link(leaf, leaves + spine, uplink_bps, uplink_delay);
            }
        }
        b.build(|sw, links| {
            if sw < leaves {
                // the uplinks in spine order
                Transit { down: vec![], up: links.to_vec_for(sw) }
            } else {
                Transit { down: links.by_far_switch(sw, leaves), up: vec![] }
            }
        })
    }
}

/// A three-tier k-ary fat tree (Al-Fares, Loukissas and Vahdat, "A scalable, commodity data
/// center network architecture", SIGCOMM 2008, §3.1): k pods, each of k/2 edge switches and
/// k/2 aggregation switches, every edge linked to every aggregation switch of its pod;
/// (k/2)^2 core switches, core j linked to aggregation switch j / (k/2) of every pod; k/2
/// hosts on each edge, k^3/4 in all, host h on edge h / (k/2) (as htsim's `FatTreeTopology`
/// numbers them). Switches are numbered edges first (pod by pod), then aggregation, then core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FatTree {
    pub k: u32,
    /// Edge-aggregation links.
    pub agg_bps: u64,
    pub agg_delay: Time,
    /// Aggregation-core links.
    pub core_bps: u64,
    pub core_delay: Time,
}

impl FatTree {
    pub fn hosts(&self) -> u32 {
        self.k * self.k * self.k / 4
    }

    fn half(&self) -> u32 {
        self.k / 2
    }

    /// Edge (and aggregation) switches in all.
    pub fn edges(&self) -> u32 {
        self.k * self.half()
    }

    pub fn cores(&self) -> u32 {
        self.half() * self.half()
    }

    /// The edge switch host `h` hangs off.
    pub fn edge_of(&self, h: HostId) -> SwitchId {
        h / self.half()
    }

    /// The pod of edge switch `e`.
    pub fn pod_of_edge(&self, e: SwitchId) -> u32 {
        e / self.half()
    }

    /// Aggregation switch `i` (0..k/2) of pod `p`.
    pub fn agg(&self, p: u32, i: u32) -> SwitchId {
        self.edges() + p * self.half() + i
    }

    /// Core switch `j` (0..(k/2)^2).
    pub fn core(&self, j: u32) -> SwitchId {
        2 * self.edges() + j
    }
}

impl Topology {
    /// A k-ary fat tree ([`FatTree`]) with host links of `rate_bps` and `delay`. An edge
    /// forwards a packet for another edge's host up over one of its k/2 aggregation
    /// switches; an aggregation switch down to the edge when the host is in its pod, else up
    /// over one of its k/2 cores; a core down to the pod's aggregation switch it is linked to.
    pub fn fat_tree(tree: FatTree, rate_bps: u64, delay: Time) -> Topology {
        let (half, edges) = (tree.half(), tree.edges());
        let switches = 2 * edges + tree.cores();
        let b = Builder::new(tree.hosts(), 0, 0, switches, rate_bps, delay);
        let mut b = b.attach_all(|h| tree.edge_of(h));
        for e in 0..edges {
            let pod = tree.pod_of_edge(e);
            for i in 0..half {
                b = b.link(e, tree.agg(pod, i), tree.agg_bps, tree.agg_delay);
            }
        }
        for pod in 0..tree.k {
            for i in 0..half {
                for j in 0..half {
                    b = b.link(tree.agg(pod, i), tree.core(i * half + j), tree.core_bps, tree.core_delay);
                }
            }
        }
        let mut topo = b.build(|sw, links| {
            if sw < edges {
                // an edge: up over its pod's aggregation switches, in order
                return Transit { down: vec![], up: links.to_vec_for(sw) };
            }
            let by_switch = links.by_far_switch(sw, switches);
            if sw < 2 * edges {
                // an aggregation switch: down to the edges of its pod, up to its cores
                let down = by_switch[..edges as usize].to_vec();
                let up = links.of(sw).iter().filter(|l| l.1 >= 2 * edges).map(|l| l.2).collect();
                return Transit { down, up };
            }
            // a core: towards an edge, down to the aggregation switch of the edge's pod
            let down = (0..edges)
                .map(|e| {
                    let pod = tree.pod_of_edge(e);
                    (0..half).map(|i| by_switch[tree.agg(pod, i) as usize]).find(|&p| p != PortId::MAX).unwrap()
                })
                .collect();
            Transit { down, up: vec![] }
        });
        topo.tree = Some(tree);
        topo
    }
}

/// Where a leaf-spine's hosts go: servers round-robin over the leaves (server `i` on leaf
/// `i % leaves`, so every leaf holds `servers / leaves` of them, give or take one, whatever
/// the count), the clients on leaf 0 ([`Topology::client_switch`]), each extra host on the
/// leaf `extra_on` gives it.
#[derive(Clone, Debug)]
pub struct LeafSpine {
    pub servers: u32,
    pub leaves: u32,
    pub spines: u32,
    pub clients: u32,
    /// The leaf of each host after the clients (hosts `servers + clients..`).
    pub extra_on: Vec<SwitchId>,
}

impl LeafSpine {
    /// The leaf host `h` hangs off.
    pub fn leaf_of(&self, h: HostId) -> SwitchId {
        match h {
            h if h < self.servers => h % self.leaves,
            h if h < self.servers + self.clients => Topology::client_switch(),
            h => self.extra_on[(h - self.servers - self.clients) as usize],
        }
    }
}

/// Assembles a topology: host NICs first, then switch ports in the order links are added.
struct Builder {
    servers: u32,
    clients: u32,
    hosts: u32,
    switches: u32,
    rate_bps: u64,
    delay: Time,
    /// The switch each host hangs off.
    host_switch: Vec<SwitchId>,
    /// Switch ports: (switch, far end, rate, propagation delay).
    switch_ports: Vec<(SwitchId, Node, u64, Time)>,
}

/// The switch-to-switch ports of a topology being built, grouped by the switch they leave.
struct Links {
    /// `(from, to, port)`, sorted by `from` (then in the order they were added).
    links: Vec<(SwitchId, SwitchId, PortId)>,
    /// `first[s]..first[s + 1]`: switch s's links.
    first: Vec<usize>,
}

impl Links {
    fn of(&self, sw: SwitchId) -> &[(SwitchId, SwitchId, PortId)] {
        &self.links[self.first[sw as usize]..self.first[sw as usize + 1]]
    }

    /// Switch `sw`'s ports towards other switches, in the order they were added.
    fn to_vec_for(&self, sw: SwitchId) -> Vec<PortId> {
        self.of(sw).iter().map(|l| l.2).collect()
    }

    /// Switch `sw`'s port towards each of `switches` switches, `PortId::MAX` where none.
    fn by_far_switch(&self, sw: SwitchId, switches: u32) -> Vec<PortId> {
        let mut by = vec![PortId::MAX; switches as usize];
        for &(_, to, port) in self.of(sw) {
            by[to as usize] = port;
        }
        by
    }
}

impl Builder {
    fn new(servers: u32, clients: u32, extras: u32, switches: u32, rate_bps: u64, delay: Time) -> Self {
        let hosts = servers + clients + extras;
        Builder { servers, clients, hosts, switches, rate_bps, delay, host_switch: vec![], switch_ports: vec![] }
    }

    /// Hang every host off `switch_of(host)`. The switch ports towards hosts are added
    /// clients first, then servers and extras in order (the star's historical numbering).
    fn attach_all(mut self, switch_of: impl Fn(HostId) -> SwitchId) -> Self {
        self.host_switch = (0..self.hosts).map(&switch_of).collect();
        let clients = self.servers..self.servers + self.clients;
        let order = clients.clone().chain((0..self.hosts).filter(|h| !clients.contains(h)));
        for h in order {
            self.switch_ports.push((self.host_switch[h as usize], Node::Host(h), self.rate_bps, self.delay));
        }
        self
    }

    /// A link between switches `a` and `b` of `rate_bps` and `delay`: one port each way.
    fn link(mut self, a: SwitchId, b: SwitchId, rate_bps: u64, delay: Time) -> Self {
        self.switch_ports.push((a, Node::Switch(b), rate_bps, delay));
        self.switch_ports.push((b, Node::Switch(a), rate_bps, delay));
        self
    }

    /// The topology, each switch forwarding towards other switches' hosts as `transit`
    /// says from its links. Linear in hosts and ports (a star of 2^20 servers, a leaf-spine
    /// of 100,000).
    fn build(self, transit: impl Fn(SwitchId, &Links) -> Transit) -> Topology {
        let (hosts, switches) = (self.hosts, self.switches);
        let mut ports: Vec<PortSpec> = (0..hosts)
            .map(|h| {
                let to = Node::Switch(self.host_switch[h as usize]);
                PortSpec { from: Node::Host(h), to, rate_bps: self.rate_bps, delay: self.delay }
            })
            .collect();
        let nic = (0..hosts).collect();
        let mut home = vec![Home { switch: 0, port: PortId::MAX }; hosts as usize];
        let mut links = vec![];
        for &(sw, to, rate_bps, delay) in &self.switch_ports {
            let port = ports.len() as PortId;
            match to {
                Node::Host(h) => home[h as usize] = Home { switch: sw, port },
                Node::Switch(b) => links.push((sw, b, port)),
            }
            ports.push(PortSpec { from: Node::Switch(sw), to, rate_bps, delay });
        }
        // a NIC's reverse is its switch's port to the host; a trunk's, the other way
        let mut reverse: Vec<PortId> = home.iter().map(|h| h.port).collect();
        reverse.resize(ports.len(), PortId::MAX);
        for h in 0..hosts {
            reverse[home[h as usize].port as usize] = h;
        }
        let index: std::collections::HashMap<(SwitchId, SwitchId), PortId> =
            links.iter().map(|&(a, b, p)| ((a, b), p)).collect();
        for &(a, b, p) in &links {
            reverse[p as usize] = *index.get(&(b, a)).expect("every link has both directions");
        }
        links.sort_by_key(|l| l.0); // stable: each switch's links stay in the order added
        let mut first = vec![0; switches as usize + 1];
        for &(a, _, _) in &links {
            first[a as usize + 1] += 1;
        }
        for s in 0..switches as usize {
            first[s + 1] += first[s];
        }
        let links = Links { links, first };
        let transit = (0..switches).map(|sw| transit(sw, &links)).collect();
        let mut on_switch = vec![0u32; switches as usize];
        let rank = self
            .host_switch
            .iter()
            .map(|&sw| {
                on_switch[sw as usize] += 1;
                on_switch[sw as usize] - 1
            })
            .collect();
        Topology { hosts, switches, ports, reverse, nic, home, rank, transit, tree: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIG: u64 = 1_000_000_000;

    #[test]
    fn the_star_keeps_the_historical_port_numbering() {
        // server NICs 0..n, client NIC n, towards the client n + 1, towards server f n + 2 + f
        let n = 3;
        let t = Topology::star(n, 1, 0, GIG, Time::from_us(25));
        assert_eq!(t.ports.len(), 2 * n as usize + 2);
        assert_eq!((t.nic(0), t.nic(2), t.nic(n)), (0, 2, n));
        assert_eq!(t.route(0, n), n + 1);
        assert_eq!((0..n).map(|f| t.route(0, f)).collect::<Vec<_>>(), vec![n + 2, n + 3, n + 4]);
        assert_eq!(t.reverse[t.nic(1) as usize], n + 3);
        assert_eq!(t.hops(1, n), 2);
    }

    #[test]
    fn two_switches_route_the_far_half_over_the_trunk() {
        // 5 servers: 0, 1, 2 and the client on switch 0; 3 and 4 on switch 1
        let (n, d) = (5, Time::from_us(25));
        let t = Topology::two_switch(n, 1, &[], GIG, GIG, d, d);
        let client = n;
        let trunk01 = t.route(0, 3);
        let trunk10 = t.route(1, client);
        assert_eq!(t.ports[trunk01 as usize].to, Node::Switch(1));
        assert_eq!(t.ports[trunk10 as usize].to, Node::Switch(0));
        assert_eq!(t.reverse[trunk01 as usize], trunk10);
        assert_eq!((t.hops(0, client), t.hops(4, client), t.hops(client, 4)), (2, 3, 3));
        // one full packet from a far server: three links of 25 us and 12 us each
        assert_eq!(t.one_way(4, client, 1500), Time::from_us(3 * (25 + 12)));
    }

    /// 2 leaves, 2 spines, 4 servers and the client (no extras), uplinks at `uplink_bps`.
    fn small_leaf_spine(uplink_bps: u64) -> Topology {
        let fabric = LeafSpine { servers: 4, leaves: 2, spines: 2, clients: 1, extra_on: vec![] };
        Topology::leaf_spine(fabric, GIG, uplink_bps, Time::from_us(25), Time::from_us(25))
    }

    #[test]
    fn a_small_leaf_spine_routes_as_computed_by_hand() {
        // Round robin: leaf 0 holds servers 0, 2 and the client 4 (ranks 0, 1, 2), leaf 1
        // servers 1, 3 (ranks 0, 1). Ports: NICs 0-4; host ports client first: 5 (leaf 0 ->
        // client), 6 (-> 0), 7 (leaf 1 -> 1), 8 (-> 2), 9 (leaf 1 -> 3); then per leaf, per
        // spine (switches 2, 3), up and down: 10 leaf0->S0, 11 S0->leaf0, 12 leaf0->S1,
        // 13 S1->leaf0, 14 leaf1->S0, 15 S0->leaf1, 16 leaf1->S1, 17 S1->leaf1.
        let t = small_leaf_spine(GIG);
        assert_eq!((t.hosts, t.switches, t.ports.len()), (5, 4, 18));
        let table = |sw: SwitchId| (0..5).map(|h| t.route(sw, h)).collect::<Vec<_>>();
        // a leaf reaches another leaf's host over spine (its rank mod 2)
        assert_eq!(table(0), vec![6, 10, 8, 12, 5]);
        assert_eq!(table(1), vec![14, 7, 16, 9, 14], "the client's rank 2 goes over spine 0");
        assert_eq!(table(2), vec![11, 15, 11, 15, 11]);
        assert_eq!(table(3), vec![13, 17, 13, 17, 13]);
        assert_eq!((t.reverse[10], t.reverse[17], t.reverse[t.nic(1) as usize]), (11, 16, 7));
        assert_eq!((t.switch_of(3), t.switch_of(4)), (1, 0));
    }

    #[test]
    fn hops_and_one_way_delay_on_a_leaf_spine_match_the_hand_count() {
        let t = small_leaf_spine(GIG);
        // server 1 -> leaf 1 -> spine 0 -> leaf 0 -> client: 4 links; server 0 is beside it
        assert_eq!((t.hops(1, 4), t.hops(0, 4), t.hops(4, 3)), (4, 2, 4));
        // one full packet: 4 links of 25 us propagation and 12 us serialization each
        assert_eq!(t.one_way(1, 4, 1500), Time::from_us(4 * (25 + 12)));
        // 10 Gbps uplinks: the two leaf-spine links serialize 1500 B in 1.2 us
        let fast = small_leaf_spine(10 * GIG);
        assert_eq!(fast.one_way(1, 4, 1500), Time::from_us(2 * (25 + 12)) + Time(2 * (25_000 + 1200) * 1000));
    }

    #[test]
    fn a_leaf_spine_of_100000_servers_builds_with_memory_linear_in_hosts() {
        // routes take two levels (a host's own leaf, then per switch a spine or a leaf's
        // port), not a table per (switch, host): 2 x 10^5 ports, not 2 x 10^8 routes.
        // Construction time is printed, not asserted (the machine is shared).
        let started = std::time::Instant::now();
        let (servers, leaves, spines) = (100_000, 250, 4);
        let fabric = LeafSpine { servers, leaves, spines, clients: 1, extra_on: vec![] };
        let t = Topology::leaf_spine(fabric, GIG, 100 * GIG, Time::from_us(5), Time::from_us(5));
        eprintln!("leaf_spine of {servers} servers built in {:?}", started.elapsed());
        let hosts = servers as usize + 1;
        assert_eq!(t.ports.len(), 2 * hosts + 2 * (leaves * spines) as usize);
        // beyond a home per host, each leaf holds its uplinks and each spine a port per switch
        let transit: usize = t.transit.iter().map(|t| t.up.len() + t.down.len()).sum();
        assert_eq!(transit, (leaves * spines + spines * leaves) as usize);
        // the last server (on leaf 249) is 4 links from the client, whose rank on leaf 0
        // (after its 400 servers) picks spine 400 mod 4 = 0
        assert_eq!(t.hops(servers - 1, servers), 4);
        let up = t.route(249, servers);
        assert_eq!(t.ports[up as usize].to, Node::Switch(leaves + 400 % 4));
    }

    fn k_ary(k: u32) -> Topology {
        let d = Time::from_us(1);
        Topology::fat_tree(FatTree { k, agg_bps: GIG, agg_delay: d, core_bps: GIG, core_delay: d }, GIG, d)
    }

    #[test]
    fn a_k_ary_fat_tree_has_the_switches_ports_and_hosts_al_fares_counts() {
        // k = 4: 16 hosts, 8 edges, 8 aggregation switches, 4 cores; links: 16 host links,
        // 16 edge-aggregation, 16 aggregation-core, two ports each
        let t = k_ary(4);
        assert_eq!((t.hosts, t.switches, t.ports.len()), (16, 20, 2 * 16 + 2 * 16 + 2 * 16));
        // k = 12 (htsim's 432-node tree), k = 32 (8192 hosts)
        assert_eq!((k_ary(12).hosts, k_ary(32).hosts, k_ary(32).switches), (432, 8192, 32 * 32 + 256));
        // every edge has k/2 uplinks, every aggregation switch k/2 to the cores
        assert!((0..8).all(|e| t.uplinks(e).len() == 2) && (8..16).all(|a| t.uplinks(a).len() == 2));
        assert!((16..20).all(|c| t.uplinks(c).is_empty()));
    }

    /// The switches a packet from `src` to `dst` crosses, `pick` choosing each uplink.
    fn path(t: &Topology, src: HostId, dst: HostId, mut pick: impl FnMut(SwitchId, usize) -> usize) -> Vec<SwitchId> {
        let mut port = t.nic(src);
        let mut switches = vec![];
        while let Node::Switch(sw) = t.ports[port as usize].to {
            switches.push(sw);
            port = t.route_with(sw, dst, |n| pick(sw, n));
            assert!(switches.len() <= 5, "a loop from {src} to {dst}: {switches:?}");
        }
        assert_eq!(t.ports[port as usize].to, Node::Host(dst));
        switches
    }

    #[test]
    fn every_fat_tree_route_is_a_shortest_path_whatever_uplinks_it_takes() {
        // up only as far as the lowest common ancestor tier, then down: 1 switch under one
        // edge, 3 within a pod, 5 across pods (Al-Fares §3.3); under every choice of uplinks
        let (k, t) = (6, k_ary(6));
        let tree = FatTree { k, agg_bps: GIG, agg_delay: Time::ZERO, core_bps: GIG, core_delay: Time::ZERO };
        let mut draws = 0usize;
        for src in 0..t.hosts {
            for dst in (0..t.hosts).filter(|&d| d != src) {
                let (es, ed) = (tree.edge_of(src), tree.edge_of(dst));
                let want = if es == ed { 1 } else if tree.pod_of_edge(es) == tree.pod_of_edge(ed) { 3 } else { 5 };
                for choice in 0..3 {
                    let p = path(&t, src, dst, |_, n| {
                        draws += 1;
                        (choice + draws) % n
                    });
                    assert_eq!(p.len(), want, "{src} -> {dst}: {p:?}");
                }
                assert_eq!(t.hops(src, dst), want as u32 + 1);
            }
        }
    }

    #[test]
    fn a_fat_tree_core_reaches_every_pod_and_an_uplink_choice_picks_the_core() {
        // k = 4, cross-pod: host 0 (edge 0, pod 0) to host 15 (edge 7, pod 3). Edge 0's
        // uplinks are aggregation switches 8 and 9; aggregation switch 8's cores 16, 17 and 9's
        // 18, 19: choosing (1, 0) goes 0 -> 9 -> 18 -> pod 3's aggregation switch linked to
        // core 18 (its index 1: switch 15) -> edge 7
        let t = k_ary(4);
        let mut picks = [1usize, 0].into_iter();
        assert_eq!(path(&t, 0, 15, |_, _| picks.next().unwrap()), vec![0, 9, 18, 15, 7]);
        // without a choice, by destination rank (host 15 is rank 1 on its edge): 0 -> 9 -> 19
        assert_eq!(path(&t, 0, 15, |_, n| 1 % n), vec![0, 9, 19, 15, 7]);
        assert_eq!(t.route(0, 15), t.route_with(0, 15, |n| 1 % n));
    }

    #[test]
    fn a_fat_tree_names_its_switches_by_tier_and_other_fabrics_by_number() {
        // k = 4: edges 0..8, aggregation 8..16 (pod 3's second is switch 15), cores 16..20;
        // the path 0 -> 9 -> 18 -> 15 -> 7 of the test above, port by port
        let t = k_ary(4);
        let names: Vec<String> = [0u32, 9, 18, 15, 7].iter().map(|&s| t.node_name(Node::Switch(s))).collect();
        assert_eq!(names, ["edge 0", "agg 0.1", "core 2", "agg 3.1", "edge 7"]);
        assert_eq!(t.port_name(t.route(7, 15)), "edge 7 -> host 15");
        assert_eq!(t.port_name(t.nic(15)), "host 15 -> edge 7");
        let star = Topology::star(2, 1, 0, GIG, Time::from_us(25));
        assert_eq!(star.port_name(star.route(0, 2)), "switch 0 -> host 2");
    }

    #[test]
    fn clients_follow_the_servers_on_switch_0_and_extras_follow_them() {
        // 3 servers, 2 clients (hosts 3, 4), one extra (5) on switch 1: 0, 1 and both
        // clients on switch 0; the ports towards the clients come first
        let t = Topology::two_switch(3, 2, &[1], GIG, GIG, Time::from_us(25), Time::from_us(25));
        assert_eq!(t.hosts, 6);
        assert_eq!((t.hops(0, 3), t.hops(1, 4), t.hops(2, 4), t.hops(5, 3)), (2, 2, 3, 3));
        let star = Topology::star(2, 2, 0, GIG, Time::from_us(25));
        assert_eq!((star.route(0, 2), star.route(0, 3), star.route(0, 0)), (4, 5, 6));
    }
}
