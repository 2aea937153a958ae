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

/// Hosts, switches, ports and routes.
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
    /// `routes[switch * hosts + dst]`: the port `switch` forwards towards host `dst` on.
    routes: Vec<PortId>,
}

impl Topology {
    /// Host `h`'s NIC.
    #[inline]
    pub fn nic(&self, h: HostId) -> PortId {
        self.nic[h as usize]
    }

    /// The port switch `sw` forwards a packet for host `dst` on.
    #[inline]
    pub fn route(&self, sw: SwitchId, dst: HostId) -> PortId {
        self.routes[(sw * self.hosts + dst) as usize]
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
        Builder::new(servers, clients, extra, 1, rate_bps, delay).attach_all(|_| 0).build()
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
    ) -> Topology {
        let near = servers.div_ceil(2);
        let switch_of = |h: HostId| match h {
            h if h < near => 0,
            h if h < servers => 1,
            h if h < servers + clients => Self::client_switch(),
            h => extra_on[(h - servers - clients) as usize],
        };
        let b = Builder::new(servers, clients, extra_on.len() as u32, 2, rate_bps, delay);
        b.attach_all(switch_of).trunk(0, 1, trunk_bps).build()
    }

    /// The switch every builder hangs the clients off.
    pub const fn client_switch() -> SwitchId {
        0
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
    /// Switch ports: (switch, far end, rate).
    switch_ports: Vec<(SwitchId, Node, u64)>,
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
            self.switch_ports.push((self.host_switch[h as usize], Node::Host(h), self.rate_bps));
        }
        self
    }

    /// A trunk between switches `a` and `b`: one port each way.
    fn trunk(mut self, a: SwitchId, b: SwitchId, rate_bps: u64) -> Self {
        self.switch_ports.push((a, Node::Switch(b), rate_bps));
        self.switch_ports.push((b, Node::Switch(a), rate_bps));
        self
    }

    fn build(self) -> Topology {
        let (hosts, switches) = (self.hosts, self.switches);
        let mut ports: Vec<PortSpec> = (0..hosts)
            .map(|h| {
                let to = Node::Switch(self.host_switch[h as usize]);
                PortSpec { from: Node::Host(h), to, rate_bps: self.rate_bps, delay: self.delay }
            })
            .collect();
        let nic = (0..hosts).collect();
        for &(sw, to, rate_bps) in &self.switch_ports {
            ports.push(PortSpec { from: Node::Switch(sw), to, rate_bps, delay: self.delay });
        }
        // (from, to) -> port, so building stays linear in the ports (a star of 2^20 servers)
        let index: std::collections::HashMap<(Node, Node), PortId> =
            ports.iter().enumerate().map(|(i, p)| ((p.from, p.to), i as PortId)).collect();
        let find = |from: Node, to: Node| index.get(&(from, to)).copied();
        let reverse = ports.iter().map(|p| find(p.to, p.from).expect("every link has both directions")).collect();
        // next_hop[a][b]: the port switch a forwards on towards switch b (breadth first from
        // b over the trunks, so every route is a shortest path; ties go to the trunk added
        // first)
        let trunks: Vec<(usize, SwitchId, SwitchId)> = ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match (p.from, p.to) {
                (Node::Switch(a), Node::Switch(b)) => Some((i, a, b)),
                _ => None,
            })
            .collect();
        let mut next_hop = vec![vec![PortId::MAX; switches as usize]; switches as usize];
        for b in 0..switches {
            let mut frontier = vec![b];
            let mut seen = vec![false; switches as usize];
            seen[b as usize] = true;
            while !frontier.is_empty() {
                let mut next = vec![];
                for &x in &frontier {
                    for &(i, a, to) in &trunks {
                        if to == x && !seen[a as usize] {
                            seen[a as usize] = true;
                            next_hop[a as usize][b as usize] = i as PortId;
                            next.push(a);
                        }
                    }
                }
                frontier = next;
            }
        }
        let mut routes = Vec::with_capacity((switches * hosts) as usize);
        for sw in 0..switches {
            for h in 0..hosts {
                let home = self.host_switch[h as usize];
                let port = if home == sw {
                    find(Node::Switch(sw), Node::Host(h)).expect("a host's switch has a port to it")
                } else {
                    next_hop[sw as usize][home as usize]
                };
                assert!(port != PortId::MAX, "switch {sw} has no route to host {h}");
                routes.push(port);
            }
        }
        Topology { hosts, switches, ports, reverse, nic, routes }
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
        let t = Topology::two_switch(n, 1, &[], GIG, GIG, d);
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

    #[test]
    fn clients_follow_the_servers_on_switch_0_and_extras_follow_them() {
        // 3 servers, 2 clients (hosts 3, 4), one extra (5) on switch 1: 0, 1 and both
        // clients on switch 0; the ports towards the clients come first
        let t = Topology::two_switch(3, 2, &[1], GIG, GIG, Time::from_us(25));
        assert_eq!(t.hosts, 6);
        assert_eq!((t.hops(0, 3), t.hops(1, 4), t.hops(2, 4), t.hops(5, 3)), (2, 2, 3, 3));
        let star = Topology::star(2, 2, 0, GIG, Time::from_us(25));
        assert_eq!((star.route(0, 2), star.route(0, 3), star.route(0, 0)), (4, 5, 6));
    }
}
