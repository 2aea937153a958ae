//! Who is who on the synthetic wire: one IPv4 address (and MAC) per host, one TCP
//! 4-tuple per flow. Addresses come from the RFC 2544 benchmarking range 198.18.0.0/15,
//! so a capture can never be mistaken for real traffic.

use std::fmt;

/// The client's address.
pub const CLIENT_IP: [u8; 4] = [198, 18, 0, 1];
/// Every server listens on this port.
pub const SERVER_PORT: u16 = 7001;
/// Flow f uses client port `CLIENT_PORT_BASE + f` (wrapping within 40000..=65535; the
/// server's own address keeps the 4-tuple unique).
pub const CLIENT_PORT_BASE: u16 = 40000;
/// Host numbers used per /24 (x.y.z.1 ..= x.y.z.250: no .0 or .255, which readers
/// tend to take for network or broadcast addresses).
const HOSTS_PER_SUBNET: u32 = 250;
/// /24 subnets available for servers: 198.18.1.0 ..= 198.19.255.0.
const SERVER_SUBNETS: u32 = 511;
/// Servers that get an address of their own.
pub const MAX_SERVERS: u32 = HOSTS_PER_SUBNET * SERVER_SUBNETS;

/// More servers than the range has addresses for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyServers(pub u32);

impl fmt::Display for TooManyServers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pcap: {} servers is not allowed; expected at most {MAX_SERVERS} (one address each in 198.18.0.0/15)", self.0)
    }
}

impl std::error::Error for TooManyServers {}

/// Server `i`'s address: 198.18.1.1 for server 0, .250 for server 249, then 198.18.2.1, ...
pub fn server_ip(i: u32) -> Result<[u8; 4], TooManyServers> {
    if i >= MAX_SERVERS {
        return Err(TooManyServers(i + 1));
    }
    let base = u32::from_be_bytes([198, 18, 0, 0]);
    let subnet = 1 + i / HOSTS_PER_SUBNET;
    let host = 1 + i % HOSTS_PER_SUBNET;
    Ok((base + subnet * 256 + host).to_be_bytes())
}

/// Host `h`'s address in a run of `servers` servers (the core's host numbers: servers
/// 0..servers, then the clients, then the victim's two hosts): server i is `server_ip(i)`,
/// the first client keeps [`CLIENT_IP`], and every later host takes the next address after
/// the servers', so a capture of several clients gives each connection its real hosts.
pub fn host_ip(h: u32, servers: u32) -> Result<[u8; 4], TooManyServers> {
    match h.cmp(&servers) {
        std::cmp::Ordering::Less => server_ip(h),
        std::cmp::Ordering::Equal => Ok(CLIENT_IP),
        std::cmp::Ordering::Greater => server_ip(h - 1).map_err(|_| TooManyServers(h)),
    }
}

/// A locally administered MAC derived from the IPv4 address (02:00:a.b.c.d).
pub fn mac_of(ip: [u8; 4]) -> [u8; 6] {
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

/// The client's port for connection `conn` of flow `f`: 40000 + f for a flow's first
/// connection; with a new connection per block (handshake mode) each next connection of
/// a flow takes the next port, so its 4-tuple differs from the previous one.
pub fn client_port(f: u32, conn: u32) -> u16 {
    let span = u16::MAX as u64 - CLIENT_PORT_BASE as u64 + 1;
    CLIENT_PORT_BASE + ((f as u64 + conn as u64) % span) as u16
}

/// Deterministic initial sequence numbers for connection `conn` of flow `f`: (server's,
/// client's). Spread over the whole 32-bit space (a fixed mix of the numbers, no
/// randomness), so sequence wrap-around happens in ordinary captures, not only after 4 GiB.
pub fn isns(f: u32, conn: u32) -> (u32, u32) {
    let h = splitmix64(f as u64 | (conn as u64) << 32);
    ((h >> 32) as u32, h as u32)
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_get_distinct_addresses_in_the_benchmarking_range() {
        assert_eq!(server_ip(0).unwrap(), [198, 18, 1, 1]);
        assert_eq!(server_ip(249).unwrap(), [198, 18, 1, 250]);
        assert_eq!(server_ip(250).unwrap(), [198, 18, 2, 1]);
        assert_eq!(server_ip(MAX_SERVERS - 1).unwrap(), [198, 19, 255, 250]);
        assert_eq!(server_ip(MAX_SERVERS), Err(TooManyServers(MAX_SERVERS + 1)));
        let mut seen = std::collections::HashSet::new();
        for i in (0..MAX_SERVERS).step_by(7) {
            let ip = server_ip(i).unwrap();
            assert!(ip[0] == 198 && (ip[1] == 18 || ip[1] == 19) && ip[3] != 0 && ip[3] != 255);
            assert_ne!(ip, CLIENT_IP);
            assert!(seen.insert(ip));
        }
    }

    #[test]
    fn every_host_gets_its_own_address() {
        // 4 servers, 2 clients (hosts 4 and 5), the victim's hosts 6 and 7
        let ips: Vec<_> = (0..8).map(|h| host_ip(h, 4).unwrap()).collect();
        assert_eq!(ips[3], server_ip(3).unwrap());
        assert_eq!(ips[4], CLIENT_IP);
        assert_eq!(ips[5], server_ip(4).unwrap());
        assert_eq!(ips.iter().collect::<std::collections::HashSet<_>>().len(), 8);
        assert!(host_ip(MAX_SERVERS, MAX_SERVERS).is_ok(), "the client of the largest run");
        assert!(host_ip(MAX_SERVERS + 1, MAX_SERVERS).is_err());
    }

    #[test]
    fn client_ports_start_at_40000_and_stay_in_range() {
        assert_eq!(client_port(0, 0), 40000);
        assert_eq!(client_port(25535, 0), 65535);
        assert_eq!(client_port(25536, 0), 40000);
        assert_eq!(client_port(3, 1), 40004, "a flow's next connection takes the next port");
        assert_eq!(client_port(25535, 1), 40000);
    }

    #[test]
    fn isns_are_deterministic_and_differ_between_flows_and_connections() {
        assert_eq!(isns(3, 0), isns(3, 0));
        assert_ne!(isns(3, 0), isns(4, 0));
        assert_ne!(isns(3, 0), isns(3, 1));
        assert_ne!(isns(3, 0).0, isns(3, 0).1);
    }
}
