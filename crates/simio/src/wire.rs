//! The core's packets as TCP segments between real-looking hosts.
//!
//! Each connection of a flow is one TCP connection between its sending host (port 7001)
//! and its receiving host (port 40000 + flow + connection number; flows that start
//! established have only connection 0, `--handshake` runs open connection 1, 2, ... one per
//! block). The hosts are the flow's ends in the core (`Records::ends`): with several
//! clients each client's connections go to its own address, with the Riak workload each
//! connection joins its two nodes (addresses: [`address::host_ip`]).
//! Sequence numbers on the wire are the core's byte sequence (the first data byte is 1,
//! the SYN took 0) plus a per-connection initial sequence number, modulo 2^32. The
//! client -> server direction has its own sequence space: every request is 24 bytes of
//! data there, so the client's sequence number advances by the request size.
//!
//! - data (server -> client): ACK|PSH, `len` bytes, ack = the client's sequence number
//!   after its latest request on that connection;
//! - request (client -> server): ACK|PSH, 24 bytes, ack = the packet's cumulative ACK;
//! - ACK (client -> server): ACK, no payload, SACK option (kind 5) when it has blocks;
//! - SYN / SYN-ACK: MSS, window scale and (SACK runs) SACK-permitted options;
//! - background UDP (server -> client): a datagram of the core's size, port 7002 -> 9.
//!
//! When the core simulates no connection setup, [`Wire::handshake`] makes a synthetic
//! SYN / SYN-ACK / ACK per flow so analysers see complete connections (docs/capture.md).

use std::collections::HashMap;

use crate::address::{self, TooManyServers};
use crate::frame::{Datagram, Endpoint, Flags, Segment, Wired};
use etherparse::TcpOptionElement;
use incast_sim::packet::{Kind, Packet};
use incast_sim::{Scenario, TcpVariant};

/// Receive window the servers advertise (they receive only 24-byte requests).
const SERVER_WINDOW: u16 = u16::MAX;
/// UDP ports of the background datagrams (server -> client discard port).
const UDP_SERVER_PORT: u16 = 7002;
const UDP_CLIENT_PORT: u16 = 9;
/// IPv4 + UDP header bytes, included in the core's UDP `wire_bytes`.
const UDP_HEADERS: u32 = 28;

/// One TCP connection: connection `conn` of a flow.
struct ConnWire {
    server: Endpoint,
    client: Endpoint,
    server_isn: u32,
    client_isn: u32,
    /// The client's next sequence number (relative: 1 + request bytes sent so far).
    client_next: u64,
}

/// Translates one run's packets; keeps each connection's client-side sequence number.
pub struct Wire {
    /// Each flow's (sender, receiver) address, by flow id.
    ends: Vec<([u8; 4], [u8; 4])>,
    isns: Box<dyn Fn(u32, u32) -> (u32, u32) + Send>,
    conns: HashMap<(u32, u32), ConnWire>,
    mss: u16,
    sack_permitted: bool,
    client_wscale: u8,
    client_window: u16,
    rwnd: u64,
}

impl Wire {
    /// Addresses and ISNs for every flow of `sc`, whose (sender host, receiver host) are
    /// `ends` (ISNs from [`address::isns`]).
    pub fn new(sc: &Scenario, ends: &[(u32, u32)]) -> Result<Wire, TooManyServers> {
        Wire::with_isns(sc, ends, address::isns)
    }

    /// As [`Wire::new`] with chosen initial sequence numbers `(server, client)` per
    /// (flow, connection).
    pub fn with_isns(
        sc: &Scenario,
        ends: &[(u32, u32)],
        isns: impl Fn(u32, u32) -> (u32, u32) + Send + 'static,
    ) -> Result<Wire, TooManyServers> {
        let n = sc.spec.servers;
        if n > address::MAX_SERVERS {
            return Err(TooManyServers(n));
        }
        let ends = ends
            .iter()
            .map(|&(src, dst)| Ok((address::host_ip(src, n)?, address::host_ip(dst, n)?)))
            .collect::<Result<Vec<_>, TooManyServers>>()?;
        let (client_wscale, client_window) = scaled_window(sc.rwnd_bytes);
        Ok(Wire {
            ends,
            isns: Box::new(isns),
            conns: HashMap::new(),
            mss: sc.spec.mss_bytes.min(u16::MAX as u32) as u16,
            sack_permitted: sc.spec.tcp == TcpVariant::Sack,
            client_wscale,
            client_window,
            rwnd: sc.rwnd_bytes,
        })
    }

    pub fn flows(&self) -> u32 {
        self.ends.len() as u32
    }

    /// Flow `flow`'s (sender, receiver) address; a flow the run did not create (never in a
    /// capture of it) gets the first server's and the client's rather than a panic.
    fn ends_of(&self, flow: u32) -> ([u8; 4], [u8; 4]) {
        debug_assert!((flow as usize) < self.ends.len(), "flow {flow} of {}", self.ends.len());
        let fallback = (address::server_ip(0).unwrap_or_default(), address::CLIENT_IP);
        self.ends.get(flow as usize).copied().unwrap_or(fallback)
    }

    fn conn(&mut self, flow: u32, conn: u32) -> &mut ConnWire {
        let (server_ip, client_ip) = self.ends_of(flow);
        let isns = &self.isns;
        self.conns.entry((flow, conn)).or_insert_with(|| {
            let (server_isn, client_isn) = isns(flow, conn);
            ConnWire {
                server: Endpoint { mac: address::mac_of(server_ip), ip: server_ip, port: address::SERVER_PORT },
                client: Endpoint {
                    mac: address::mac_of(client_ip),
                    ip: client_ip,
                    port: address::client_port(flow, conn),
                },
                server_isn,
                client_isn,
                client_next: 1,
            }
        })
    }

    /// The options a SYN (`syn_ack` false) or SYN-ACK carries: MSS, SACK-permitted in
    /// SACK runs, window scale, as a Linux stack negotiates them.
    fn syn_options(&self, syn_ack: bool) -> Vec<TcpOptionElement> {
        let mut opts = vec![TcpOptionElement::MaximumSegmentSize(self.mss)];
        if self.sack_permitted {
            opts.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
        }
        opts.push(TcpOptionElement::WindowScale(if syn_ack { 0 } else { self.client_wscale }));
        opts
    }

    /// The window field of a client packet advertising `wnd` bytes (0: the run's rwnd).
    fn client_window_field(&self, wnd: u64) -> u16 {
        if wnd == 0 {
            return self.client_window;
        }
        (wnd >> self.client_wscale).min(u16::MAX as u64) as u16
    }

    /// A synthetic SYN, SYN-ACK, ACK for `flow`'s first connection, for runs whose flows
    /// start established (the core then simulates no connection setup).
    pub fn handshake(&mut self, flow: u32) -> [Segment; 3] {
        let (syn_opts, syn_ack_opts, window) = (self.syn_options(false), self.syn_options(true), self.client_window);
        let syn_window = u16::try_from(self.rwnd).unwrap_or(u16::MAX);
        let w = self.conn(flow, 0);
        [
            syn_segment(w, syn_window, syn_opts),
            syn_ack_segment(w, syn_ack_opts),
            Segment {
                src: w.client,
                dst: w.server,
                seq: w.client_isn.wrapping_add(1),
                ack: w.server_isn.wrapping_add(1),
                flags: Flags { ack: true, ..Flags::default() },
                window,
                options: vec![],
                payload_len: 0,
            },
        ]
    }

    /// What goes on the wire for one captured packet (advances the client's sequence on
    /// requests).
    pub fn segment(&mut self, p: &Packet) -> Wired {
        if p.kind == Kind::Udp {
            let (server_ip, client_ip) = self.ends_of(p.flow);
            let client = Endpoint { mac: address::mac_of(client_ip), ip: client_ip, port: UDP_CLIENT_PORT };
            return Wired::Udp(Datagram {
                src: Endpoint { mac: address::mac_of(server_ip), ip: server_ip, port: UDP_SERVER_PORT },
                dst: client,
                payload_len: p.wire_bytes.saturating_sub(UDP_HEADERS) as usize,
            });
        }
        let (syn_opts, syn_ack_opts) = match p.kind {
            Kind::Syn => (self.syn_options(false), vec![]),
            Kind::SynAck => (vec![], self.syn_options(true)),
            _ => (vec![], vec![]),
        };
        let window = self.client_window_field(p.wnd as u64);
        // the SYN's window is never scaled (RFC 7323 §2.2)
        let syn_window = u16::try_from(if p.wnd == 0 { self.rwnd } else { p.wnd as u64 }).unwrap_or(u16::MAX);
        let w = self.conn(p.flow, p.conn);
        let server_seq = |rel: u64| w.server_isn.wrapping_add(rel as u32);
        let client_seq = w.client_isn.wrapping_add(w.client_next as u32);
        Wired::Tcp(match p.kind {
            // NDP and trimming (issue 29) have no wire format of their own here: a trimmed
            // header (or one returned to its sender) shows as a zero-length data segment at its
            // sequence number, a NACK or a pull as a pure ACK
            Kind::Header | Kind::Bounced => Segment {
                src: w.server,
                dst: w.client,
                seq: server_seq(p.seq),
                ack: client_seq,
                flags: Flags { ack: true, ..Flags::default() },
                window: SERVER_WINDOW,
                options: vec![],
                payload_len: 0,
            },
            Kind::Nack | Kind::Pull => Segment {
                src: w.client,
                dst: w.server,
                seq: client_seq,
                ack: server_seq(p.ack),
                flags: Flags { ack: true, ..Flags::default() },
                window,
                options: vec![],
                payload_len: 0,
            },
            Kind::Data => Segment {
                src: w.server,
                dst: w.client,
                seq: server_seq(p.seq),
                ack: client_seq,
                flags: Flags { ack: true, psh: true, ..Flags::default() },
                window: SERVER_WINDOW,
                options: vec![],
                payload_len: p.len as usize,
            },
            Kind::Request => {
                let seg = Segment {
                    src: w.client,
                    dst: w.server,
                    seq: client_seq,
                    ack: server_seq(p.ack),
                    flags: Flags { ack: true, psh: true, ..Flags::default() },
                    window,
                    options: vec![],
                    payload_len: p.len as usize,
                };
                w.client_next += p.len as u64;
                seg
            }
            Kind::Ack => Segment {
                src: w.client,
                dst: w.server,
                seq: client_seq,
                ack: server_seq(p.ack),
                flags: Flags { ack: true, ..Flags::default() },
                window,
                options: sack_option(&p.sack_blocks(), server_seq),
                payload_len: 0,
            },
            Kind::Syn => syn_segment(w, syn_window, syn_opts),
            Kind::SynAck => syn_ack_segment(w, syn_ack_opts),
            Kind::Udp => unreachable!("handled above"),
        })
    }
}

/// The client's SYN of connection `w`.
fn syn_segment(w: &ConnWire, window: u16, options: Vec<TcpOptionElement>) -> Segment {
    Segment {
        src: w.client,
        dst: w.server,
        seq: w.client_isn,
        ack: 0,
        flags: Flags { syn: true, ..Flags::default() },
        window,
        options,
        payload_len: 0,
    }
}

/// The server's SYN-ACK of connection `w`.
fn syn_ack_segment(w: &ConnWire, options: Vec<TcpOptionElement>) -> Segment {
    Segment {
        src: w.server,
        dst: w.client,
        seq: w.server_isn,
        ack: w.client_isn.wrapping_add(1),
        flags: Flags { syn: true, ack: true, ..Flags::default() },
        window: SERVER_WINDOW,
        options,
        payload_len: 0,
    }
}

/// The SACK option for `blocks` (none: no option); two NOPs align the blocks on 4 bytes,
/// as Linux writes them.
fn sack_option(blocks: &[(u64, u64)], seq: impl Fn(u64) -> u32) -> Vec<TcpOptionElement> {
    match blocks.split_first() {
        None => vec![],
        Some((first, rest)) => {
            let mut more = [None; 3];
            for (slot, b) in more.iter_mut().zip(rest) {
                *slot = Some((seq(b.0), seq(b.1)));
            }
            vec![
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::SelectiveAcknowledgement((seq(first.0), seq(first.1)), more),
            ]
        }
    }
}

/// RFC 7323 window scale for a receive window of `rwnd` bytes: the smallest shift that
/// makes the window fit 16 bits (at most 14), and the field value.
pub fn scaled_window(rwnd: u64) -> (u8, u16) {
    let mut shift = 0u8;
    while shift < 14 && (rwnd >> shift) > u16::MAX as u64 {
        shift += 1;
    }
    (shift, (rwnd >> shift).min(u16::MAX as u64) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use incast_sim::ScenarioSpec;

    fn scenario(servers: u32, tcp: TcpVariant) -> Scenario {
        ScenarioSpec { servers, tcp, blocks: Some(1), duration_ps: None, ..ScenarioSpec::default() }.validate().unwrap()
    }

    /// The core's flow ends with one client: flow i from server i to host `servers`.
    fn one_client(sc: &Scenario) -> Vec<(u32, u32)> {
        let n = sc.spec.servers;
        (0..n).map(|i| (i, n)).collect()
    }

    fn tcp(w: Wired) -> Segment {
        match w {
            Wired::Tcp(s) => s,
            Wired::Udp(_) => panic!("expected TCP"),
        }
    }

    #[test]
    fn sequence_numbers_wrap_modulo_2_32() {
        let sc = scenario(2, TcpVariant::Newreno);
        let mut wire = Wire::with_isns(&sc, &one_client(&sc), |_, _| (u32::MAX - 99, u32::MAX)).unwrap();
        let mut data = Packet::new(1, Kind::Data, 1500, 1460, 1, 0);
        assert_eq!(tcp(wire.segment(&data)).seq, u32::MAX - 98, "first data byte is ISN + 1");
        data.seq = 101;
        assert_eq!(tcp(wire.segment(&data)).seq, 1, "wrapped past 2^32");
        data.seq = (1u64 << 32) + 101;
        assert_eq!(tcp(wire.segment(&data)).seq, 1, "a 64-bit core sequence reduces modulo 2^32");
        // the client's first byte is ISN + 1 = 0 after the wrap
        let req = Packet::new(1, Kind::Request, 64, 24, 262144, 1);
        let s = tcp(wire.segment(&req));
        assert_eq!((s.seq, s.ack, s.payload_len), (0, u32::MAX - 98, 24));
        assert_eq!(tcp(wire.segment(&req)).seq, 24, "requests advance the client's sequence");
        let ack = Packet::new(1, Kind::Ack, 40, 0, 0, 1461);
        let a = tcp(wire.segment(&ack));
        assert_eq!((a.seq, a.ack), (48, (u32::MAX - 99).wrapping_add(1461)));
        assert_eq!(tcp(wire.segment(&data)).ack, 48, "data acknowledges the client's requests");
    }

    #[test]
    fn flows_are_distinct_connections() {
        let sc = scenario(3, TcpVariant::Newreno);
        let mut wire = Wire::new(&sc, &one_client(&sc)).unwrap();
        let a = tcp(wire.segment(&Packet::new(0, Kind::Data, 1500, 1460, 1, 0)));
        let b = tcp(wire.segment(&Packet::new(2, Kind::Data, 1500, 1460, 1, 0)));
        assert_eq!((a.src.ip, a.src.port, a.dst.port), ([198, 18, 1, 1], 7001, 40000));
        assert_eq!((b.src.ip, b.src.port, b.dst.port), ([198, 18, 1, 3], 7001, 40002));
        assert_eq!(a.dst.ip, address::CLIENT_IP);
    }

    #[test]
    fn each_flow_joins_its_own_hosts() {
        // 2 servers, 2 clients: client c's flow from server i is flow c * 2 + i (hosts 2, 3)
        let sc = scenario(2, TcpVariant::Newreno);
        let mut wire = Wire::new(&sc, &[(0, 2), (1, 2), (0, 3), (1, 3)]).unwrap();
        let a = tcp(wire.segment(&Packet::new(1, Kind::Data, 1500, 1460, 1, 0)));
        let b = tcp(wire.segment(&Packet::new(3, Kind::Data, 1500, 1460, 1, 0)));
        assert_eq!((a.src.ip, a.dst.ip), ([198, 18, 1, 2], address::CLIENT_IP));
        assert_eq!((b.src.ip, b.dst.ip), ([198, 18, 1, 2], address::host_ip(3, 2).unwrap()));
        assert_ne!(a.dst.ip, b.dst.ip, "the second client has its own address");
        // Riak: a connection between two nodes; its ACKs go from the receiving node back
        let mut riak = Wire::new(&sc, &[(1, 0)]).unwrap();
        let ack = tcp(riak.segment(&Packet::new(0, Kind::Ack, 40, 0, 0, 1461)));
        assert_eq!((ack.src.ip, ack.dst.ip), ([198, 18, 1, 1], [198, 18, 1, 2]));
    }

    #[test]
    fn each_connection_of_a_flow_has_its_own_port_isn_and_client_sequence() {
        let sc = scenario(2, TcpVariant::Newreno);
        let mut wire = Wire::with_isns(&sc, &one_client(&sc), |f, c| (1000 * (c + 1) + f, 5000 * (c + 1))).unwrap();
        let mut syn = Packet::new(1, Kind::Syn, 40, 0, 0, 0);
        syn.conn = 1;
        syn.set_window(2920);
        let s = tcp(wire.segment(&syn));
        assert!(s.flags.syn && !s.flags.ack);
        assert_eq!((s.src.port, s.seq, s.window), (40002, 10000, 2920));
        let mut synack = Packet::new(1, Kind::SynAck, 40, 0, 0, 0);
        synack.conn = 1;
        let sa = tcp(wire.segment(&synack));
        assert!(sa.flags.syn && sa.flags.ack);
        assert_eq!((sa.dst.port, sa.seq, sa.ack), (40002, 2001, 10001));
        let mut req = Packet::new(1, Kind::Request, 64, 24, 100, 1);
        req.conn = 1;
        req.set_window(2920);
        let r = tcp(wire.segment(&req));
        assert_eq!((r.seq, r.ack, r.window), (10001, 2002, 2920));
        // the next block's connection starts afresh
        req.conn = 2;
        let r2 = tcp(wire.segment(&req));
        assert_eq!((r2.src.port, r2.seq, r2.ack), (40003, 15001, 3002));
    }

    #[test]
    fn background_udp_is_a_datagram_of_the_core_size() {
        let sc = scenario(2, TcpVariant::Newreno);
        let mut wire = Wire::new(&sc, &one_client(&sc)).unwrap();
        match wire.segment(&Packet::new(1, Kind::Udp, 1500, 0, 0, 0)) {
            Wired::Udp(d) => {
                assert_eq!((d.src.ip, d.dst.ip, d.payload_len), ([198, 18, 1, 2], address::CLIENT_IP, 1472));
            }
            Wired::Tcp(_) => panic!("expected UDP"),
        }
    }

    #[test]
    fn ack_with_sack_blocks_carries_them_relative_to_the_isn() {
        let sc = scenario(1, TcpVariant::Sack);
        let mut wire = Wire::with_isns(&sc, &one_client(&sc), |_, _| (1000, 0)).unwrap();
        let mut ack = Packet::new(0, Kind::Ack, 58, 0, 0, 1461);
        ack.set_sack(&[(2921, 4381), (5841, 7301)]);
        let s = tcp(wire.segment(&ack));
        assert_eq!(s.ack, 2461);
        match &s.options[2] {
            TcpOptionElement::SelectiveAcknowledgement(first, more) => {
                assert_eq!(*first, (3921, 5381));
                assert_eq!(more, &[Some((6841, 8301)), None, None]);
            }
            other => panic!("expected a SACK option, got {other:?}"),
        }
        let plain = tcp(wire.segment(&Packet::new(0, Kind::Ack, 40, 0, 0, 1461)));
        assert!(plain.options.is_empty());
    }

    #[test]
    fn handshake_negotiates_sack_only_for_sack_runs_and_scales_large_windows() {
        let sc = scenario(1, TcpVariant::Sack);
        let sack = Wire::new(&sc, &one_client(&sc)).unwrap().handshake(0);
        assert!(sack[0].options.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
        assert!(sack[1].options.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
        let sc = scenario(1, TcpVariant::Reno);
        let reno = Wire::new(&sc, &one_client(&sc)).unwrap().handshake(0);
        assert!(!reno[0].options.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
        assert!(reno[0].flags.syn && !reno[0].flags.ack);
        assert!(reno[1].flags.syn && reno[1].flags.ack && reno[1].ack == reno[0].seq.wrapping_add(1));
        assert!(!reno[2].flags.syn && reno[2].ack == reno[1].seq.wrapping_add(1));
        assert_eq!(scaled_window(29200), (0, 29200));
        assert_eq!(scaled_window(1 << 30), (14, 65535));
        assert_eq!(scaled_window(1 << 20), (5, 32768));
    }

    #[test]
    fn too_many_servers_for_the_address_range_is_refused() {
        let sc = scenario(address::MAX_SERVERS + 1, TcpVariant::Newreno);
        assert!(Wire::new(&sc, &one_client(&sc)).is_err());
    }
}
