//! One TCP segment as an Ethernet II / IPv4 / TCP frame with correct lengths and
//! checksums. The payload is zeros; only the first `snaplen` bytes of the frame are
//! kept (headers always fit), while the IPv4 total length and the pcap original length
//! state the real size, so analysers see the true TCP segment length.

use etherparse::{EtherType, Ethernet2Header, IpNumber, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};

/// Largest frame header: Ethernet 14 + IPv4 20 + TCP with full options 60.
pub const MAX_HEADERS: usize = Ethernet2Header::LEN + Ipv4Header::MIN_LEN + TcpHeader::MAX_LEN;

/// Largest TCP payload an IPv4 packet without options can carry.
pub const MAX_PAYLOAD: usize = u16::MAX as usize - Ipv4Header::MIN_LEN - TcpHeader::MIN_LEN;

static ZEROS: [u8; 65536] = [0; 65536];

/// TTL written in every packet (Linux's default).
const TTL: u8 = 64;

/// One end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub port: u16,
}

/// TCP flags the simulation uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub syn: bool,
    pub ack: bool,
    pub psh: bool,
}

/// A TCP segment to put on the wire.
#[derive(Clone, Debug)]
pub struct Segment {
    pub src: Endpoint,
    pub dst: Endpoint,
    pub seq: u32,
    /// Meaningful when `flags.ack`.
    pub ack: u32,
    pub flags: Flags,
    pub window: u16,
    pub options: Vec<TcpOptionElement>,
    /// Payload bytes (zeros on the wire).
    pub payload_len: usize,
}

/// A UDP datagram (the background traffic of Osada et al.'s scenarios).
#[derive(Clone, Debug)]
pub struct Datagram {
    pub src: Endpoint,
    pub dst: Endpoint,
    /// Payload bytes (zeros on the wire).
    pub payload_len: usize,
}

/// What goes on the wire for one packet.
#[derive(Clone, Debug)]
pub enum Wired {
    Tcp(Segment),
    Udp(Datagram),
}

/// The segment cannot be encoded (options too long, payload too large).
#[derive(Debug)]
pub struct FrameError(pub String);

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pcap: {}", self.0)
    }
}

impl std::error::Error for FrameError {}

/// Encode `seg` into `out` (cleared first), keeping at most `snaplen` bytes of the frame
/// (never fewer than its headers). Returns the frame's full length on the wire.
pub fn encode(seg: &Segment, snaplen: usize, out: &mut Vec<u8>) -> Result<u32, FrameError> {
    if seg.payload_len > MAX_PAYLOAD {
        return Err(FrameError(format!("a {} B payload does not fit one IPv4 packet", seg.payload_len)));
    }
    let mut tcp = TcpHeader::new(seg.src.port, seg.dst.port, seg.seq, seg.window);
    tcp.syn = seg.flags.syn;
    tcp.ack = seg.flags.ack;
    tcp.psh = seg.flags.psh;
    if seg.flags.ack {
        tcp.acknowledgment_number = seg.ack;
    }
    tcp.set_options(&seg.options).map_err(|e| FrameError(format!("TCP options: {e}")))?;
    let payload = &ZEROS[..seg.payload_len];
    let tcp_len = tcp.header_len() + seg.payload_len;
    let ip_payload = u16::try_from(tcp_len)
        .ok()
        .filter(|&n| n as usize <= u16::MAX as usize - Ipv4Header::MIN_LEN)
        .ok_or_else(|| FrameError(format!("a {tcp_len} B TCP segment does not fit one IPv4 packet")))?;
    let ip = Ipv4Header::new(ip_payload, TTL, IpNumber::TCP, seg.src.ip, seg.dst.ip)
        .map_err(|e| FrameError(e.to_string()))?;
    tcp.checksum = tcp.calc_checksum_ipv4(&ip, payload).map_err(|e| FrameError(e.to_string()))?;
    let eth = Ethernet2Header { source: seg.src.mac, destination: seg.dst.mac, ether_type: EtherType::IPV4 };

    out.clear();
    // writes into a Vec cannot fail; Ipv4Header::write computes the header checksum
    eth.write(out).expect("write to Vec");
    ip.write(out).expect("write to Vec");
    tcp.write(out).expect("write to Vec");
    let full = out.len() + seg.payload_len;
    let keep = snaplen.max(out.len()).min(full);
    out.extend_from_slice(&ZEROS[..keep - out.len()]);
    Ok(full as u32)
}

/// Encode `d` like [`encode`] does a TCP segment.
pub fn encode_udp(d: &Datagram, snaplen: usize, out: &mut Vec<u8>) -> Result<u32, FrameError> {
    let payload = ZEROS
        .get(..d.payload_len)
        .filter(|_| d.payload_len <= u16::MAX as usize - Ipv4Header::MIN_LEN - UdpHeader::LEN)
        .ok_or_else(|| FrameError(format!("a {} B UDP payload does not fit one IPv4 packet", d.payload_len)))?;
    let udp_len = (UdpHeader::LEN + d.payload_len) as u16;
    let ip = Ipv4Header::new(udp_len, TTL, IpNumber::UDP, d.src.ip, d.dst.ip).map_err(|e| FrameError(e.to_string()))?;
    let udp = UdpHeader::with_ipv4_checksum(d.src.port, d.dst.port, &ip, payload).map_err(|e| FrameError(e.to_string()))?;
    let eth = Ethernet2Header { source: d.src.mac, destination: d.dst.mac, ether_type: EtherType::IPV4 };
    out.clear();
    eth.write(out).expect("write to Vec");
    ip.write(out).expect("write to Vec");
    udp.write(out).expect("write to Vec");
    let full = out.len() + d.payload_len;
    let keep = snaplen.max(out.len()).min(full);
    out.extend_from_slice(&ZEROS[..keep - out.len()]);
    Ok(full as u32)
}

/// Encode either kind.
pub fn encode_wired(w: &Wired, snaplen: usize, out: &mut Vec<u8>) -> Result<u32, FrameError> {
    match w {
        Wired::Tcp(seg) => encode(seg, snaplen, out),
        Wired::Udp(d) => encode_udp(d, snaplen, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn ends() -> (Endpoint, Endpoint) {
        let a = Endpoint { mac: [2, 0, 198, 18, 1, 1], ip: [198, 18, 1, 1], port: 7001 };
        let b = Endpoint { mac: [2, 0, 198, 18, 0, 1], ip: [198, 18, 0, 1], port: 40003 };
        (a, b)
    }

    fn data_segment(len: usize) -> Segment {
        let (a, b) = ends();
        Segment {
            src: a,
            dst: b,
            seq: 0xFFFF_FF00,
            ack: 77,
            flags: Flags { ack: true, psh: true, ..Flags::default() },
            window: 65535,
            options: vec![],
            payload_len: len,
        }
    }

    /// RFC 1071: the one's-complement sum over a correct header (or pseudo-header +
    /// segment) including its checksum field is 0xFFFF.
    fn ones_complement_sum(chunks: &[&[u8]]) -> u16 {
        let mut sum: u32 = 0;
        let bytes: Vec<u8> = chunks.concat();
        for w in bytes.chunks(2) {
            let v = if w.len() == 2 { u16::from_be_bytes([w[0], w[1]]) } else { u16::from_be_bytes([w[0], 0]) };
            sum += v as u32;
        }
        while sum >> 16 != 0 {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        sum as u16
    }

    #[test]
    fn full_frame_has_valid_ip_and_tcp_checksums_and_lengths() {
        let seg = data_segment(1460);
        let mut out = Vec::new();
        let full = encode(&seg, usize::MAX, &mut out).unwrap();
        assert_eq!(full, 14 + 20 + 20 + 1460);
        assert_eq!(out.len(), full as usize);
        let ip = &out[14..34];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500, "IPv4 total length");
        assert_eq!(ones_complement_sum(&[ip]), 0xFFFF, "IPv4 header checksum");
        let tcp = &out[34..];
        let pseudo = [&ip[12..20], &[0, 6], &(tcp.len() as u16).to_be_bytes()[..]].concat();
        assert_eq!(ones_complement_sum(&[&pseudo, tcp]), 0xFFFF, "TCP checksum");
        let p = SlicedPacket::from_ethernet(&out).unwrap();
        let Some(TransportSlice::Tcp(t)) = p.transport else { panic!("not TCP") };
        assert_eq!((t.source_port(), t.destination_port()), (7001, 40003));
        assert_eq!((t.sequence_number(), t.acknowledgment_number()), (0xFFFF_FF00, 77));
        assert!(t.ack() && t.psh() && !t.syn());
        assert!(matches!(p.net, Some(NetSlice::Ipv4(_))));
    }

    #[test]
    fn snapped_frame_keeps_headers_and_states_the_real_length() {
        let seg = data_segment(1460);
        let (mut full, mut snapped) = (Vec::new(), Vec::new());
        encode(&seg, usize::MAX, &mut full).unwrap();
        let orig = encode(&seg, 96, &mut snapped).unwrap();
        assert_eq!(orig, 1514);
        assert_eq!(snapped.len(), 96);
        assert_eq!(&snapped[..], &full[..96], "the kept bytes are the full frame's first bytes");
        // a frame shorter than the snaplen is kept whole; headers are never cut
        let mut ack = Vec::new();
        assert_eq!(encode(&data_segment(0), 96, &mut ack).unwrap(), 54);
        assert_eq!(ack.len(), 54);
        assert_eq!(encode(&data_segment(0), 10, &mut ack).unwrap(), 54);
        assert_eq!(ack.len(), 54);
    }

    #[test]
    fn sack_blocks_are_written_as_option_kind_5() {
        let mut seg = data_segment(0);
        seg.options = vec![
            TcpOptionElement::Noop,
            TcpOptionElement::Noop,
            TcpOptionElement::SelectiveAcknowledgement((1000, 2000), [Some((3000, 4000)), None, None]),
        ];
        let mut out = Vec::new();
        encode(&seg, usize::MAX, &mut out).unwrap();
        let opts = &out[54..];
        assert_eq!(opts.len(), 2 + 2 + 16);
        assert_eq!(&opts[..4], &[1, 1, 5, 18], "NOP NOP kind 5 length 2+8n");
        assert_eq!(u32::from_be_bytes(opts[4..8].try_into().unwrap()), 1000);
        assert_eq!(u32::from_be_bytes(opts[16..20].try_into().unwrap()), 4000);
        let ip = &out[14..34];
        let tcp = &out[34..];
        let pseudo = [&ip[12..20], &[0, 6], &(tcp.len() as u16).to_be_bytes()[..]].concat();
        assert_eq!(ones_complement_sum(&[&pseudo, tcp]), 0xFFFF);
        assert_eq!(tcp[12] >> 4, 10, "data offset: 40 B header");
    }

    #[test]
    fn udp_datagram_has_valid_lengths_and_checksums() {
        let (a, b) = ends();
        let mut out = Vec::new();
        let full = encode_udp(&Datagram { src: a, dst: b, payload_len: 1472 }, usize::MAX, &mut out).unwrap();
        assert_eq!(full, 1514);
        let ip = &out[14..34];
        assert_eq!(ip[9], 17, "protocol UDP");
        assert_eq!(ones_complement_sum(&[ip]), 0xFFFF);
        let udp = &out[34..];
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]), 1480, "UDP length");
        let pseudo = [&ip[12..20], &[0, 17], &(udp.len() as u16).to_be_bytes()[..]].concat();
        assert_eq!(ones_complement_sum(&[&pseudo, udp]), 0xFFFF, "UDP checksum");
    }

    #[test]
    fn oversized_payload_is_refused() {
        assert!(encode(&data_segment(MAX_PAYLOAD + 1), 96, &mut Vec::new()).is_err());
        assert!(encode(&data_segment(MAX_PAYLOAD), 96, &mut Vec::new()).is_ok());
    }
}
