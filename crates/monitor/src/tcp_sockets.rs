//! The TCP connections of this network namespace and what each has received, from the
//! kernel's sock_diag netlink interface (sock_diag(7)), for the monitor's fan-in count.
//!
//! Why not a snapshot of `ss -tin` at the end of each second (what the monitor did before
//! issue 11): a snapshot sees only the connections alive at that instant, and a synchronized
//! read that connects, transfers and closes within the second (200 blocks of 4 x 256 KiB on
//! loopback take 0.12 s) leaves nothing to see. The kernel also sends every TCP socket it
//! frees, with its final `tcp_info`, to the sock_diag multicast groups
//! `SKNLGRP_INET{,6}_TCP_DESTROY` (include/uapi/linux/sock_diag.h; no privilege needed); a
//! thread collects those, so a connection that lived and died between two snapshots is seen.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use netlink_packet_core::{NetlinkMessage, NetlinkPayload};
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
use netlink_packet_sock_diag::inet::{nlas::Nla, ExtensionFlags, InetRequest, InetResponse, SocketId, StateFlags};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_sys::protocols::NETLINK_SOCK_DIAG;
use netlink_sys::Socket;

use crate::netlink::exchange;

/// Multicast groups of sock_diag (include/uapi/linux/sock_diag.h, `enum sknetlink_groups`).
const SKNLGRP_INET_TCP_DESTROY: u32 = 1;
const SKNLGRP_INET6_TCP_DESTROY: u32 = 3;

// Fields of `struct tcp_info` (include/uapi/linux/tcp.h) at their ABI offsets. The struct
// only ever grows at its end, so these hold on every kernel that has the fields (bytes_received
// since 4.1, data_segs_in since 4.6). netlink-packet-sock-diag's typed TcpInfo is not used: it
// rejects a tcp_info shorter than its newest layout, i.e. every kernel older than that layout.
const TCPI_BYTES_RECEIVED: Range<usize> = 128..136; // RFC 4898 tcpEStatsAppHCThruOctetsReceived
const TCPI_DATA_SEGS_IN: Range<usize> = 152..156; // RFC 4898 tcpEStatsDataSegsIn
const TCPI_TOTAL_RETRANS: Range<usize> = 100..104; // segments this socket sent again, all its life

/// A dump asks for every state that can hold received data; listeners receive none, and
/// TIME_WAIT and SYN_RECV entries are mini-sockets without a tcp_info.
fn connected_states() -> StateFlags {
    StateFlags::all() - StateFlags::LISTEN - StateFlags::TIME_WAIT - StateFlags::SYN_RECV
}

/// One TCP socket as the kernel reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSocket {
    /// The kernel's socket cookie: unique per socket, so two sockets with the same addresses
    /// one after the other are not confused.
    pub cookie: u64,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// Payload bytes received (tcpi_bytes_received; a FIN advances it by one).
    pub bytes_received: u64,
    /// Segments received that carried payload (tcpi_data_segs_in; a bare FIN or ACK does not).
    pub data_segs_in: u32,
    /// Segments this socket retransmitted (tcpi_total_retrans).
    pub total_retrans: u32,
    /// The socket was freed (reported by the destroy broadcast), these are its final counts.
    pub closed: bool,
}

impl TcpSocket {
    /// None for a message without a tcp_info long enough for both fields.
    fn from_response(r: &InetResponse, closed: bool) -> Option<TcpSocket> {
        let info = r.nlas.iter().find_map(|nla| match nla {
            Nla::TcpInfo(bytes) => Some(bytes),
            _ => None,
        })?;
        let bytes_received = u64::from_ne_bytes(info.get(TCPI_BYTES_RECEIVED)?.try_into().ok()?);
        let data_segs_in = u32::from_ne_bytes(info.get(TCPI_DATA_SEGS_IN)?.try_into().ok()?);
        let total_retrans = u32::from_ne_bytes(info.get(TCPI_TOTAL_RETRANS)?.try_into().ok()?);
        let id = &r.header.socket_id;
        Some(TcpSocket {
            cookie: u64::from_ne_bytes(id.cookie),
            local: SocketAddr::new(id.source_address, id.source_port),
            remote: SocketAddr::new(id.destination_address, id.destination_port),
            bytes_received,
            data_segs_in,
            total_retrans,
            closed,
        })
    }
}

/// The connected TCP sockets of this network namespace, IPv4 and IPv6.
pub fn dump() -> io::Result<Vec<TcpSocket>> {
    let mut out = Vec::new();
    for (family, socket_id) in [(AF_INET, SocketId::new_v4()), (AF_INET6, SocketId::new_v6())] {
        let request = SockDiagMessage::InetRequest(InetRequest {
            family,
            protocol: IPPROTO_TCP,
            extensions: ExtensionFlags::INFO,
            states: connected_states(),
            socket_id,
        });
        let replies = match exchange(NETLINK_SOCK_DIAG, request, true) {
            Ok(r) => r,
            // a kernel without IPv6 has no IPv6 sockets
            Err(e) if family == AF_INET6 && matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EAFNOSUPPORT)) => {
                continue
            }
            Err(e) => return Err(e),
        };
        out.extend(replies.iter().filter_map(|m| match m {
            SockDiagMessage::InetResponse(r) => TcpSocket::from_response(r, false),
            _ => None,
        }));
    }
    Ok(out)
}

struct Shared {
    closed: Mutex<Vec<TcpSocket>>,
    /// Times the kernel reported that destroy messages were dropped (receive buffer full).
    overruns: AtomicU64,
    stop: AtomicBool,
}

/// A thread collecting the final counts of every TCP socket the kernel frees.
pub struct ClosedSockets {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Large enough for a second of closing connections at thousands per second (each message
/// is ~350 bytes); SO_RCVBUFFORCE needs CAP_NET_ADMIN, else SO_RCVBUF up to rmem_max.
const DESTROY_BUFFER: libc::c_int = 8 << 20;
/// How often the thread looks at its stop flag.
const POLL_MS: libc::c_int = 100;

impl ClosedSockets {
    /// Join the destroy groups (an error when this kernel has none) and start collecting.
    pub fn start() -> io::Result<ClosedSockets> {
        let mut socket = Socket::new(NETLINK_SOCK_DIAG)?;
        socket.bind_auto()?;
        socket.add_membership(SKNLGRP_INET_TCP_DESTROY)?;
        // IPv6 may be disabled; IPv4 alone is still worth collecting
        let _ = socket.add_membership(SKNLGRP_INET6_TCP_DESTROY);
        set_receive_buffer(&socket, DESTROY_BUFFER);
        let shared =
            Arc::new(Shared { closed: Mutex::new(Vec::new()), overruns: AtomicU64::new(0), stop: AtomicBool::new(false) });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("incastlab-closed-tcp".into())
            .spawn(move || collect(socket, &thread_shared))?;
        Ok(ClosedSockets { shared, thread: Some(thread) })
    }

    /// Sockets freed since the last call, and the overruns counted so far.
    pub fn drain(&self) -> (Vec<TcpSocket>, u64) {
        let closed = std::mem::take(&mut *self.shared.closed.lock().unwrap());
        (closed, self.shared.overruns.load(Ordering::Relaxed))
    }
}

impl Drop for ClosedSockets {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn set_receive_buffer(socket: &Socket, bytes: libc::c_int) {
    let fd = socket.as_raw_fd();
    let size = &bytes as *const libc::c_int as *const libc::c_void;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket fd and a c_int option value of the stated length.
    unsafe {
        if libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, size, len) != 0 {
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size, len);
        }
    }
}

fn collect(socket: Socket, shared: &Shared) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut pfd = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    while !shared.stop.load(Ordering::Relaxed) {
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
        if ready <= 0 {
            continue;
        }
        let n = match socket.recv(&mut &mut buf[..], libc::MSG_DONTWAIT) {
            Ok(n) => n,
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                shared.overruns.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Err(_) => continue, // EAGAIN, EINTR
        };
        let mut got = Vec::new();
        let mut offset = 0;
        while offset < n {
            let Ok(msg) = NetlinkMessage::<SockDiagMessage>::deserialize(&buf[offset..n]) else { break };
            let len = msg.header.length as usize;
            if let NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) = &msg.payload {
                got.extend(TcpSocket::from_response(r, true));
            }
            if len == 0 {
                break;
            }
            offset += len;
        }
        shared.closed.lock().unwrap().extend(got);
    }
}

/// What the fan-in count reads once a second: the live connections, then those freed since
/// the previous read (in this order, so a socket freed between the two is in the second list
/// rather than in neither).
pub struct TcpWatch {
    closed: Result<ClosedSockets, String>,
}

/// One read of [`TcpWatch`].
#[derive(Debug, Default)]
pub struct TcpReading {
    pub sockets: Vec<TcpSocket>,
    /// Destroy-message overruns so far (connections closed in a burst may be missing).
    pub overruns: u64,
    /// Why closed connections are not collected, if they are not.
    pub closed_unavailable: Option<String>,
}

impl TcpWatch {
    /// Start collecting closed sockets (a kernel without the destroy groups is reported by
    /// each reading, not an error: the live connections are still read).
    pub fn start() -> TcpWatch {
        TcpWatch { closed: ClosedSockets::start().map_err(|e| format!("closed connections are not reported: {e}")) }
    }

    pub fn read(&self) -> io::Result<TcpReading> {
        let mut sockets = dump()?;
        match &self.closed {
            Ok(c) => {
                let (closed, overruns) = c.drain();
                sockets.extend(closed);
                Ok(TcpReading { sockets, overruns, closed_unavailable: None })
            }
            Err(why) => Ok(TcpReading { sockets, overruns: 0, closed_unavailable: Some(why.clone()) }),
        }
    }
}

/// The address as the kernel routes it: an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, an
/// IPv4 peer of a dual-stack socket) is the IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    /// A connection on loopback that sends `request` bytes one way and `answer` back, then closes.
    fn transfer(request: usize, answer: usize) -> (SocketAddr, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server_addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut req = vec![0u8; request];
            c.read_exact(&mut req).unwrap();
            c.write_all(&vec![0u8; answer]).unwrap();
        });
        let mut c = TcpStream::connect(server_addr).unwrap();
        let client_addr = c.local_addr().unwrap();
        c.write_all(&vec![1u8; request]).unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), answer);
        drop(c);
        server.join().unwrap();
        (client_addr, server_addr)
    }

    #[test]
    fn a_connection_closed_between_two_reads_is_reported_with_its_final_counts() {
        let watch = TcpWatch::start();
        if let Some(why) = watch.read().unwrap().closed_unavailable {
            panic!("{why}");
        }
        let (client, server) = transfer(8, 300_000);
        // the destroy message of the passive closer follows the last ACK: wait for both ends
        let deadline = Instant::now() + Duration::from_secs(5);
        // (the listener, also freed, has no remote and is not one of them)
        let ends = |s: &TcpSocket| (s.local, s.remote) == (client, server) || (s.local, s.remote) == (server, client);
        let mut seen: Vec<TcpSocket> = Vec::new();
        while Instant::now() < deadline && seen.len() < 2 {
            let r = watch.read().unwrap();
            seen.extend(r.sockets.into_iter().filter(|s| s.closed && ends(s)));
            std::thread::sleep(Duration::from_millis(20));
        }
        let at_client = seen.iter().find(|s| s.local == client).expect("the client end was reported");
        let at_server = seen.iter().find(|s| s.local == server).expect("the server end was reported");
        // the FIN advances tcpi_bytes_received by one
        assert_eq!(at_client.bytes_received, 300_001);
        assert_eq!(at_server.bytes_received, 9);
        assert!(at_client.data_segs_in >= 1 && at_server.data_segs_in == 1, "{at_client:?} {at_server:?}");
        assert_ne!(at_client.cookie, at_server.cookie);
    }

    #[test]
    fn a_live_connection_is_in_the_dump_with_what_it_received() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        c.write_all(&[7u8; 1000]).unwrap();
        let mut buf = [0u8; 1000];
        s.read_exact(&mut buf).unwrap();
        let server_end = s.local_addr().unwrap();
        let peer = s.peer_addr().unwrap();
        let found = dump().unwrap().into_iter().find(|x| x.local == server_end && x.remote == peer).unwrap();
        assert_eq!((found.bytes_received, found.data_segs_in, found.closed), (1000, 1, false));
        assert!(!dump().unwrap().iter().any(|x| x.local == listener.local_addr().unwrap() && x.remote.port() == 0),
                "listeners are not dumped");
    }

    #[test]
    fn mapped_ipv4_addresses_are_routed_as_ipv4() {
        let mapped: IpAddr = "::ffff:127.0.0.2".parse().unwrap();
        assert_eq!(canonical(mapped), "127.0.0.2".parse::<IpAddr>().unwrap());
        assert_eq!(canonical("::1".parse().unwrap()), "::1".parse::<IpAddr>().unwrap());
    }
}
