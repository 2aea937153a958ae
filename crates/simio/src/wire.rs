//! The core's packets as TCP segments between real-looking hosts.
//!
//! Each flow is one TCP connection between its server (port 7001) and the client
//! (port 40000 + flow). Sequence numbers on the wire are the core's byte sequence (the
//! first data byte is 1, the SYN took 0) plus a per-flow initial sequence number, modulo
//! 2^32. The client -> server direction has its own sequence space: every request is
//! 24 bytes of data there, so the client's sequence number advances by the request size.
//!
//! - data (server -> client): ACK|PSH, `len` bytes, ack = the client's sequence number
//!   after its latest request on that flow;
//! - request (client -> server): ACK|PSH, 24 bytes, ack = the packet's cumulative ACK;
//! - ACK (client -> server): ACK, no payload, SACK option (kind 5) when it has blocks.
//!
//! The core does not simulate connection setup; [`Wire::handshake`] makes a synthetic
//! SYN / SYN-ACK / ACK per flow so analysers see complete connections (docs/capture.md).

use crate::address::{self, TooManyServers};
use crate::frame::{Endpoint, Flags, Segment};
use etherparse::TcpOptionElement;
use incast_sim::packet::{Kind, Packet};
use incast_sim::{Scenario, TcpVariant};

/// Receive window the servers advertise (they receive only 24-byte requests).
const SERVER_WINDOW: u16 = u16::MAX;

struct FlowWire {
    server: Endpoint,
    client: Endpoint,
    server_isn: u32,
    client_isn: u32,
    /// The client's next sequence number (relative: 1 + request bytes sent so far).
    client_next: u64,
}

/// Translates one run's packets; keeps each flow's client-side sequence number.
pub struct Wire {
    flows: Vec<FlowWire>,
    mss: u16,
    sack_permitted: bool,
    client_wscale: u8,
    client_window: u16,
}

impl Wire {
    /// Addresses and ISNs for every flow of `sc` (ISNs from [`address::isns`]).
    pub fn new(sc: &Scenario) -> Result<Wire, TooManyServers> {
        Wire::with_isns(sc, address::isns)
    }

    /// As [`Wire::new`] with chosen initial sequence numbers `(server, client)` per flow.
    pub fn with_isns(sc: &Scenario, isns: impl Fn(u32) -> (u32, u32)) -> Result<Wire, TooManyServers> {
        let n = sc.spec.servers;
        if n > address::MAX_SERVERS {
            return Err(TooManyServers(n));
        }
        let client_ip = address::CLIENT_IP;
        let flows = (0..n)
            .map(|f| {
                let ip = address::server_ip(f)?;
                let (server_isn, client_isn) = isns(f);
                Ok(FlowWire {
                    server: Endpoint { mac: address::mac_of(ip), ip, port: address::SERVER_PORT },
                    client: Endpoint { mac: address::mac_of(client_ip), ip: client_ip, port: address::client_port(f) },
                    server_isn,
                    client_isn,
                    client_next: 1,
                })
            })
            .collect::<Result<Vec<_>, TooManyServers>>()?;
        let (client_wscale, client_window) = scaled_window(sc.spec.rwnd_bytes);
        Ok(Wire {
            flows,
            mss: sc.spec.mss_bytes.min(u16::MAX as u32) as u16,
            sack_permitted: sc.spec.tcp == TcpVariant::Sack,
            client_wscale,
            client_window,
        })
    }

    pub fn flows(&self) -> u32 {
        self.flows.len() as u32
    }

    /// SYN, SYN-ACK, ACK for `flow`: MSS, window scale and (for SACK runs) SACK-permitted
    /// options, as a Linux stack would negotiate them.
    pub fn handshake(&self, flow: u32) -> [Segment; 3] {
        let w = &self.flows[flow as usize];
        let mut opts = vec![TcpOptionElement::MaximumSegmentSize(self.mss)];
        if self.sack_permitted {
            opts.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
        }
        let mut syn_opts = opts.clone();
        syn_opts.push(TcpOptionElement::WindowScale(self.client_wscale));
        opts.push(TcpOptionElement::WindowScale(0));
        let client_window = u16::try_from(u64::from(self.client_window) << self.client_wscale).unwrap_or(u16::MAX);
        [
            Segment {
                src: w.client,
                dst: w.server,
                seq: w.client_isn,
                ack: 0,
                flags: Flags { syn: true, ..Flags::default() },
                window: client_window, // the SYN's window is never scaled (RFC 7323 §2.2)
                options: syn_opts,
                payload_len: 0,
            },
            Segment {
                src: w.server,
                dst: w.client,
                seq: w.server_isn,
                ack: w.client_isn.wrapping_add(1),
                flags: Flags { syn: true, ack: true, ..Flags::default() },
                window: SERVER_WINDOW,
                options: opts,
                payload_len: 0,
            },
            Segment {
                src: w.client,
                dst: w.server,
                seq: w.client_isn.wrapping_add(1),
                ack: w.server_isn.wrapping_add(1),
                flags: Flags { ack: true, ..Flags::default() },
                window: self.client_window,
                options: vec![],
                payload_len: 0,
            },
        ]
    }

    /// The segment for one captured packet (advances the client's sequence on requests).
    pub fn segment(&mut self, p: &Packet) -> Segment {
        let (client_window, w) = (self.client_window, &mut self.flows[p.flow as usize]);
        let server_seq = |rel: u64| w.server_isn.wrapping_add(rel as u32);
        let client_seq = w.client_isn.wrapping_add(w.client_next as u32);
        match p.kind {
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
                    window: client_window,
                    options: vec![],
                    payload_len: p.len as usize,
                };
                w.client_next += p.len as u64;
                seg
            }
            Kind::Ack => {
                let blocks = p.sack_blocks();
                let options = match blocks.split_first() {
                    None => vec![],
                    Some((first, rest)) => {
                        let mut more = [None; 3];
                        for (slot, b) in more.iter_mut().zip(rest) {
                            *slot = Some((server_seq(b.0), server_seq(b.1)));
                        }
                        // two NOPs align the blocks on 4 bytes, as Linux does
                        vec![
                            TcpOptionElement::Noop,
                            TcpOptionElement::Noop,
                            TcpOptionElement::SelectiveAcknowledgement((server_seq(first.0), server_seq(first.1)), more),
                        ]
                    }
                };
                Segment {
                    src: w.client,
                    dst: w.server,
                    seq: client_seq,
                    ack: server_seq(p.ack),
                    flags: Flags { ack: true, ..Flags::default() },
                    window: client_window,
                    options,
                    payload_len: 0,
                }
            }
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

    #[test]
    fn sequence_numbers_wrap_modulo_2_32() {
        let sc = scenario(2, TcpVariant::Newreno);
        let mut wire = Wire::with_isns(&sc, |_| (u32::MAX - 99, u32::MAX)).unwrap();
        let mut data = Packet::new(1, Kind::Data, 1500, 1460, 1, 0);
        assert_eq!(wire.segment(&data).seq, u32::MAX - 98, "first data byte is ISN + 1");
        data.seq = 101;
        assert_eq!(wire.segment(&data).seq, 1, "wrapped past 2^32");
        data.seq = (1u64 << 32) + 101;
        assert_eq!(wire.segment(&data).seq, 1, "a 64-bit core sequence reduces modulo 2^32");
        // the client's first byte is ISN + 1 = 0 after the wrap
        let req = Packet::new(1, Kind::Request, 64, 24, 262144, 1);
        let s = wire.segment(&req);
        assert_eq!((s.seq, s.ack, s.payload_len), (0, u32::MAX - 98, 24));
        assert_eq!(wire.segment(&req).seq, 24, "requests advance the client's sequence");
        let ack = Packet::new(1, Kind::Ack, 40, 0, 0, 1461);
        let a = wire.segment(&ack);
        assert_eq!((a.seq, a.ack), (48, (u32::MAX - 99).wrapping_add(1461)));
        assert_eq!(wire.segment(&data).ack, 48, "data acknowledges the client's requests");
    }

    #[test]
    fn flows_are_distinct_connections() {
        let sc = scenario(3, TcpVariant::Newreno);
        let mut wire = Wire::new(&sc).unwrap();
        let a = wire.segment(&Packet::new(0, Kind::Data, 1500, 1460, 1, 0));
        let b = wire.segment(&Packet::new(2, Kind::Data, 1500, 1460, 1, 0));
        assert_eq!((a.src.ip, a.src.port, a.dst.port), ([198, 18, 1, 1], 7001, 40000));
        assert_eq!((b.src.ip, b.src.port, b.dst.port), ([198, 18, 1, 3], 7001, 40002));
        assert_eq!(a.dst.ip, address::CLIENT_IP);
    }

    #[test]
    fn ack_with_sack_blocks_carries_them_relative_to_the_isn() {
        let sc = scenario(1, TcpVariant::Sack);
        let mut wire = Wire::with_isns(&sc, |_| (1000, 0)).unwrap();
        let mut ack = Packet::new(0, Kind::Ack, 58, 0, 0, 1461);
        ack.sack[0] = (2921, 4381);
        ack.sack[1] = (5841, 7301);
        ack.nsack = 2;
        let s = wire.segment(&ack);
        assert_eq!(s.ack, 2461);
        match &s.options[2] {
            TcpOptionElement::SelectiveAcknowledgement(first, more) => {
                assert_eq!(*first, (3921, 5381));
                assert_eq!(more, &[Some((6841, 8301)), None, None]);
            }
            other => panic!("expected a SACK option, got {other:?}"),
        }
        let plain = wire.segment(&Packet::new(0, Kind::Ack, 40, 0, 0, 1461));
        assert!(plain.options.is_empty());
    }

    #[test]
    fn handshake_negotiates_sack_only_for_sack_runs_and_scales_large_windows() {
        let sack = Wire::new(&scenario(1, TcpVariant::Sack)).unwrap().handshake(0);
        assert!(sack[0].options.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
        assert!(sack[1].options.contains(&TcpOptionElement::SelectiveAcknowledgementPermitted));
        let reno = Wire::new(&scenario(1, TcpVariant::Reno)).unwrap().handshake(0);
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
        assert!(Wire::new(&sc).is_err());
    }
}
