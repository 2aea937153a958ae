//! The storage-server side: answer each request with the number of bytes it asks for.
//!
//! Concurrency model: one small thread per connection (128 KiB stack) doing blocking
//! I/O, plus one accept thread. Why not an event loop: each connection's life is a
//! straight line (read a header, write a response, repeat) whose only waits are the
//! header/idle/send timeouts, which `SO_RCVTIMEO`/`SO_SNDTIMEO` give for free; a
//! blocking `send` loop from one static buffer is also the fastest data path. Memory is
//! bounded: at most `max_connections` threads, each costing its stack pages actually
//! touched (a few KiB) plus a 24-byte header; the payload comes from one shared static
//! buffer, never a per-request allocation. At 1,000 idle connections this is a few MiB
//! (measured in tests/test_wire_server.py).
//!
//! Bad peers: a wrong magic/version/kind, a request over `max_request_bytes`, a header
//! that does not complete within `header_timeout` (slow peer), a connection idle longer
//! than `idle_timeout`, a peer that stops reading for `send_timeout`, and a peer that
//! vanishes (reset, EOF mid-header) each end only that connection, with one log line and,
//! where the peer can still hear it, an error response naming the problem, followed by a
//! staged close so that unread input does not reset the response away (`refuse`).

use crate::netns;
use crate::protocol::{RequestKind, ResponseHeader, Status, HEADER_LEN};
use crate::request_reader::{read_request, Incoming, ReadTimeouts};
use crate::sockopt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Payload source shared by every connection (contents do not matter).
static PAYLOAD: [u8; 1 << 20] = [0u8; 1 << 20];

fn ps_to_duration(ps: u64) -> Option<Duration> {
    (ps > 0).then(|| Duration::from_nanos(ps / 1000).max(Duration::from_millis(1)))
}

fn default_listen() -> String {
    "0.0.0.0:5701".into()
}
fn default_max_request() -> u64 {
    64 << 20
}
fn default_header_timeout() -> u64 {
    5_000_000_000_000
}
fn default_idle_timeout() -> u64 {
    600_000_000_000_000
}
fn default_send_timeout() -> u64 {
    60_000_000_000_000
}
fn default_max_connections() -> usize {
    4096
}
fn default_log() -> bool {
    true
}

/// What a server listens on and how strict it is. Durations in picoseconds (the
/// native boundary's unit, docs/native-api.md); 0 disables a timeout.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ServerConfig {
    #[serde(default = "default_listen")]
    pub listen: String,
    /// Network namespace to listen in, e.g. `/var/run/netns/iltb-s1`.
    #[serde(default)]
    pub netns: Option<PathBuf>,
    /// Largest request served; larger ones are refused with an error response.
    #[serde(default = "default_max_request")]
    pub max_request_bytes: u64,
    /// Time allowed from a header's first byte to its last.
    #[serde(default = "default_header_timeout")]
    pub header_timeout_ps: u64,
    /// Time a connection may sit between requests.
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_ps: u64,
    /// Time one blocked send may wait for a peer that stopped reading.
    #[serde(default = "default_send_timeout")]
    pub send_timeout_ps: u64,
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// TCP_CONGESTION for every accepted connection (the sender's algorithm).
    #[serde(default)]
    pub congestion: Option<String>,
    /// TCP_RTO_MIN_US for every accepted connection (Linux 6.15+).
    #[serde(default)]
    pub rto_min_us: Option<u32>,
    /// One line on stderr per refused request or misbehaving peer.
    #[serde(default = "default_log")]
    pub log: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        serde_json::from_str("{}").unwrap()
    }
}

/// Counters of a running server.
#[derive(Debug, Default)]
struct Counters {
    accepted: AtomicU64,
    open: AtomicU64,
    refused_busy: AtomicU64,
    requests: AtomicU64,
    bytes_sent: AtomicU64,
    refused_too_large: AtomicU64,
    malformed: AtomicU64,
    header_timeouts: AtomicU64,
    idle_timeouts: AtomicU64,
    peer_errors: AtomicU64,
}

/// A snapshot of the server's counters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerStats {
    pub connections_accepted: u64,
    pub connections_open: u64,
    pub refused_busy: u64,
    pub requests: u64,
    pub bytes_sent: u64,
    pub refused_too_large: u64,
    pub malformed: u64,
    pub header_timeouts: u64,
    pub idle_timeouts: u64,
    pub peer_errors: u64,
    /// Sum over open connections of `tcpi_total_retrans` (segments resent).
    pub open_total_retrans: u64,
    /// Sum over open connections of `tcpi_total_rto`, when the kernel reports it.
    pub open_total_rto: Option<u64>,
}

struct Shared {
    config: ServerConfig,
    counters: Counters,
    stop: AtomicBool,
    conns: Mutex<HashMap<u64, TcpStream>>,
    local: SocketAddr,
}

impl Shared {
    fn log(&self, peer: &SocketAddr, what: std::fmt::Arguments<'_>) {
        if self.config.log {
            eprintln!("incastlab serve [{}]: {peer}: {what}", self.local);
        }
    }
}

/// A running server; stops (and closes every connection) when dropped.
pub struct Server {
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

fn bind(config: &ServerConfig) -> io::Result<TcpListener> {
    let addr: SocketAddr = config
        .listen
        .parse()
        .map_err(|_| io::Error::new(ErrorKind::InvalidInput, format!("listen address {:?} is not ip:port", config.listen)))?;
    let listener = TcpListener::bind(addr)?;
    // std listens with a backlog of 128; a burst of 1,000 connects needs more.
    // SAFETY: a valid listening socket; calling listen again only updates the backlog.
    unsafe { libc::listen(listener.as_raw_fd(), 4096) };
    if let Some(cc) = &config.congestion {
        sockopt::set_congestion(listener.as_raw_fd(), cc)
            .map_err(|e| io::Error::new(e.kind(), format!("congestion control {cc:?}: {e}")))?;
    }
    if let Some(us) = config.rto_min_us {
        sockopt::set_rto_min_us(listener.as_raw_fd(), us)
            .map_err(|e| io::Error::new(e.kind(), format!("TCP_RTO_MIN_US {us}: {e} (needs Linux 6.15+)")))?;
    }
    Ok(listener)
}

impl Server {
    /// Bind (inside `config.netns` if given) and start serving in the background.
    pub fn start(config: ServerConfig) -> io::Result<Server> {
        sockopt::raise_nofile_limit();
        let ns = config.netns.clone();
        let cfg = config.clone();
        let listener = netns::run_in(ns.as_deref(), move || bind(&cfg))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            counters: Counters::default(),
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            local,
        });
        let s2 = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("wire-accept".into())
            .spawn(move || accept_loop(listener, s2))?;
        Ok(Server { shared, acceptor: Some(acceptor) })
    }

    /// The address actually bound (the port is chosen by the kernel for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local
    }

    /// Whether the accept thread is alive (false once stopped, or if it died).
    pub fn is_running(&self) -> bool {
        self.acceptor.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Current counters, plus TCP_INFO sums over the open connections.
    pub fn stats(&self) -> ServerStats {
        let c = &self.shared.counters;
        let (mut retrans, mut rto, mut rto_known) = (0u64, 0u64, true);
        for s in self.shared.conns.lock().unwrap().values() {
            if let Ok(i) = sockopt::tcp_info(s.as_raw_fd()) {
                retrans += u64::from(i.total_retrans);
                match i.total_rto {
                    Some(r) => rto += u64::from(r),
                    None => rto_known = false,
                }
            }
        }
        ServerStats {
            connections_accepted: c.accepted.load(Ordering::Relaxed),
            connections_open: c.open.load(Ordering::Relaxed),
            refused_busy: c.refused_busy.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            bytes_sent: c.bytes_sent.load(Ordering::Relaxed),
            refused_too_large: c.refused_too_large.load(Ordering::Relaxed),
            malformed: c.malformed.load(Ordering::Relaxed),
            header_timeouts: c.header_timeouts.load(Ordering::Relaxed),
            idle_timeouts: c.idle_timeouts.load(Ordering::Relaxed),
            peer_errors: c.peer_errors.load(Ordering::Relaxed),
            open_total_retrans: retrans,
            open_total_rto: rto_known.then_some(rto),
        }
    }

    /// Stop accepting, close every connection, wait for the accept thread.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for s in self.shared.conns.lock().unwrap().values() {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut next_id = 0u64;
    while !shared.stop.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 100) };
        loop {
            let (stream, peer) = match listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    // EMFILE and friends: log, back off, keep serving the open connections.
                    if shared.config.log {
                        eprintln!("incastlab serve [{}]: accept: {e}", shared.local);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                    break;
                }
            };
            let _ = stream.set_nonblocking(false);
            let c = &shared.counters;
            let open = c.open.load(Ordering::SeqCst);
            if open as usize >= shared.config.max_connections {
                c.refused_busy.fetch_add(1, Ordering::Relaxed);
                shared.log(&peer, format_args!("refused: {open} connections open (max {})", shared.config.max_connections));
                let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
                send_error(&stream, &format!("server busy: {open} connections open (max {})", shared.config.max_connections));
                continue;
            }
            c.accepted.fetch_add(1, Ordering::Relaxed);
            c.open.fetch_add(1, Ordering::SeqCst);
            next_id += 1;
            let id = next_id;
            if let Ok(clone) = stream.try_clone() {
                shared.conns.lock().unwrap().insert(id, clone);
            }
            let s2 = shared.clone();
            let spawned = std::thread::Builder::new()
                .name("wire-conn".into())
                .stack_size(128 * 1024)
                .spawn(move || {
                    serve_connection(stream, peer, &s2);
                    s2.conns.lock().unwrap().remove(&id);
                    s2.counters.open.fetch_sub(1, Ordering::SeqCst);
                });
            if let Err(e) = spawned {
                shared.log(&peer, format_args!("cannot start a thread: {e}"));
                shared.conns.lock().unwrap().remove(&id);
                c.open.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

fn send_error(mut stream: &TcpStream, msg: &str) {
    let hdr = ResponseHeader { status: Status::Error, length: msg.len() as u64, block: 0 }.encode();
    let _ = stream.write_all(&hdr).and_then(|_| stream.write_all(msg.as_bytes()));
    let _ = stream.shutdown(Shutdown::Write);
}

/// Longest a refused connection is kept open to let its error response get through.
const LINGER: Duration = Duration::from_secs(2);

/// Refuse a peer: the error response, then a staged close. Closing a socket whose input
/// was not all read makes Linux send a reset and drop what is still queued for the peer
/// (RFC 1122 §4.2.2.13 allows it), so a peer that sent more than the refused header (a
/// long garbage stream, requests pipelined behind the bad one) lost the error message and
/// even earlier responses. As HTTP/1.1 servers do (RFC 9112 §9.6): half-close, then read
/// and discard until the peer closes or has acknowledged everything sent, for at most
/// [`LINGER`]. Only on connection threads: the accept thread must not wait.
fn refuse(mut stream: &TcpStream, msg: &str) {
    send_error(stream, msg);
    let until = Instant::now() + LINGER;
    let mut sink = [0u8; 4096];
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    while Instant::now() < until {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return,
        }
        if sockopt::unacked_bytes(stream.as_raw_fd()).is_ok_and(|n| n == 0) {
            return;
        }
    }
}

fn serve_connection(mut stream: TcpStream, peer: SocketAddr, shared: &Shared) {
    let cfg = &shared.config;
    let c = &shared.counters;
    let fd = stream.as_raw_fd();
    let _ = sockopt::set_nodelay(fd);
    if let Some(cc) = &cfg.congestion {
        let _ = sockopt::set_congestion(fd, cc);
    }
    let _ = stream.set_write_timeout(ps_to_duration(cfg.send_timeout_ps));
    let timeouts =
        ReadTimeouts { idle: ps_to_duration(cfg.idle_timeout_ps), header: ps_to_duration(cfg.header_timeout_ps) };
    loop {
        let req = match read_request(&mut stream, timeouts, &shared.stop) {
            Incoming::Request(r) => r,
            Incoming::Closed => return,
            Incoming::Idle => {
                c.idle_timeouts.fetch_add(1, Ordering::Relaxed);
                shared.log(&peer, format_args!("closed: idle for {:?}", timeouts.idle.unwrap_or_default()));
                return;
            }
            Incoming::Slow(got) => {
                c.header_timeouts.fetch_add(1, Ordering::Relaxed);
                let within = timeouts.header.unwrap_or_default();
                let msg = format!("header timeout: {got} of {HEADER_LEN} header bytes within {within:?}");
                shared.log(&peer, format_args!("{msg}"));
                refuse(&stream, &msg);
                return;
            }
            Incoming::Truncated(got) => {
                c.malformed.fetch_add(1, Ordering::Relaxed);
                shared.log(&peer, format_args!("truncated header: peer closed after {got} of {HEADER_LEN} bytes"));
                return;
            }
            Incoming::Malformed(e) => {
                c.malformed.fetch_add(1, Ordering::Relaxed);
                let msg = format!("malformed request: {e}");
                shared.log(&peer, format_args!("{msg}"));
                refuse(&stream, &msg);
                return;
            }
            Incoming::Failed(e) => {
                c.peer_errors.fetch_add(1, Ordering::Relaxed);
                shared.log(&peer, format_args!("read failed: {e}"));
                return;
            }
        };
        c.requests.fetch_add(1, Ordering::Relaxed);
        let sent = match req.kind {
            RequestKind::Data if req.size > cfg.max_request_bytes => {
                c.refused_too_large.fetch_add(1, Ordering::Relaxed);
                let msg = format!(
                    "request size {} bytes exceeds this server's maximum of {} bytes (serve --max-request)",
                    req.size, cfg.max_request_bytes
                );
                shared.log(&peer, format_args!("refused block {}: {msg}", req.block));
                refuse(&stream, &msg);
                return;
            }
            RequestKind::Data => send_payload(&mut stream, req.size, req.block, c),
            RequestKind::Stats => send_stats(&mut stream, cfg),
        };
        if let Err(e) = sent {
            c.peer_errors.fetch_add(1, Ordering::Relaxed);
            shared.log(&peer, format_args!("send failed in block {}: {e}", req.block));
            return;
        }
    }
}

/// The response header and its payload. The header goes out in the same `writev` as the
/// payload's first bytes, so it rides in the response's first segment: written on its own,
/// it left as a 24-byte segment of its own (Nagle lets a first small segment go at once),
/// which Linux counts as a whole packet of the congestion window and which put every
/// response's segment boundaries 24 bytes off a payload-only sender's (seen in the
/// testbed's captures, docs/testbed.md "Capture and trace").
fn send_payload(stream: &mut TcpStream, size: u64, block: u64, c: &Counters) -> io::Result<()> {
    let header = ResponseHeader { status: Status::Data, length: size, block }.encode();
    let mut head = 0; // header bytes written
    let mut left = size;
    while head < header.len() || left > 0 {
        let n = left.min(PAYLOAD.len() as u64) as usize;
        let written = if head < header.len() {
            stream.write_vectored(&[IoSlice::new(&header[head..]), IoSlice::new(&PAYLOAD[..n])])
        } else {
            stream.write(&PAYLOAD[..n])
        };
        match written {
            Ok(0) => return Err(io::Error::new(ErrorKind::WriteZero, "peer stopped accepting data")),
            Ok(k) => {
                let of_header = k.min(header.len() - head);
                head += of_header;
                let payload = (k - of_header) as u64;
                left -= payload;
                c.bytes_sent.fetch_add(payload, Ordering::Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(io::Error::new(ErrorKind::TimedOut, format!("peer did not read for the send timeout ({} bytes left)", left)))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The sender's view of this connection, as JSON: the counters only the server side
/// has (retransmissions, timeouts), so a client on another host can report them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ConnectionReport {
    pub tcp_info: Option<sockopt::TcpInfo>,
    pub congestion: Option<String>,
    pub rto_min_us: Option<u32>,
}

fn send_stats(stream: &mut TcpStream, _cfg: &ServerConfig) -> io::Result<()> {
    let fd = stream.as_raw_fd();
    let report = ConnectionReport {
        tcp_info: sockopt::tcp_info(fd).ok(),
        congestion: sockopt::congestion(fd).ok(),
        rto_min_us: sockopt::rto_min_us(fd).ok(),
    };
    let body = serde_json::to_vec(&report).map_err(io::Error::other)?;
    stream.write_all(&ResponseHeader { status: Status::Stats, length: body.len() as u64, block: 0 }.encode())?;
    stream.write_all(&body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Request;

    fn start(cfg: ServerConfig) -> Server {
        Server::start(ServerConfig { listen: "127.0.0.1:0".into(), log: false, ..cfg }).unwrap()
    }

    fn read_response(s: &mut TcpStream) -> (ResponseHeader, Vec<u8>) {
        let mut h = [0u8; HEADER_LEN];
        s.read_exact(&mut h).unwrap();
        let h = ResponseHeader::decode(&h).unwrap();
        let mut body = vec![0u8; h.length as usize];
        s.read_exact(&mut body).unwrap();
        (h, body)
    }

    #[test]
    fn answers_a_request_with_exactly_the_bytes_asked_for() {
        let srv = start(ServerConfig::default());
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        for (block, size) in [(1u64, 1000u64), (2, 3 << 20), (3, 0)] {
            s.write_all(&Request::data(size, block).encode()).unwrap();
            let (h, body) = read_response(&mut s);
            assert_eq!((h.status, h.length, h.block), (Status::Data, size, block));
            assert_eq!(body.len() as u64, size);
        }
        assert_eq!(srv.stats().requests, 3);
    }

    #[test]
    fn refuses_a_request_over_the_maximum_with_a_message() {
        let srv = start(ServerConfig { max_request_bytes: 1000, ..Default::default() });
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        s.write_all(&Request::data(1001, 5).encode()).unwrap();
        let (h, body) = read_response(&mut s);
        assert_eq!(h.status, Status::Error);
        let msg = String::from_utf8(body).unwrap();
        assert!(msg.contains("1001") && msg.contains("maximum of 1000"), "{msg}");
        assert_eq!(srv.stats().refused_too_large, 1);
    }

    #[test]
    fn refuses_garbage_and_keeps_serving_others() {
        let srv = start(ServerConfig::default());
        let mut bad = TcpStream::connect(srv.local_addr()).unwrap();
        bad.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let (h, body) = read_response(&mut bad);
        assert_eq!(h.status, Status::Error);
        assert!(String::from_utf8(body).unwrap().contains("bad magic"));
        let mut good = TcpStream::connect(srv.local_addr()).unwrap();
        good.write_all(&Request::data(10, 1).encode()).unwrap();
        assert_eq!(read_response(&mut good).1.len(), 10);
        assert_eq!(srv.stats().malformed, 1);
    }

    #[test]
    fn an_error_after_pipelined_responses_reaches_a_peer_that_sent_more() {
        // Three 4 MiB requests in one write, then 25 bytes of garbage: one header's worth
        // is refused, one byte stays unread. Read only after the server has refused.
        let srv = start(ServerConfig::default());
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        let mut out = Vec::new();
        for block in 1..=3 {
            out.extend(Request::data(4 << 20, block).encode());
        }
        out.extend([0xffu8; HEADER_LEN + 1]);
        s.write_all(&out).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        for block in 1..=3 {
            let (h, body) = read_response(&mut s);
            assert_eq!((h.status, h.block, body.len()), (Status::Data, block, 4 << 20));
        }
        let (h, body) = read_response(&mut s);
        assert_eq!(h.status, Status::Error);
        assert!(String::from_utf8(body).unwrap().contains("bad magic"));
    }

    #[test]
    fn a_slow_header_times_out() {
        let srv = start(ServerConfig { header_timeout_ps: 200_000_000_000, ..Default::default() });
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        s.write_all(&Request::data(10, 1).encode()[..5]).unwrap();
        let (h, body) = read_response(&mut s);
        assert_eq!(h.status, Status::Error);
        assert!(String::from_utf8(body).unwrap().contains("header timeout"));
        assert_eq!(srv.stats().header_timeouts, 1);
    }

    #[test]
    fn a_truncated_header_and_a_vanishing_reader_end_only_their_connection() {
        let srv = start(ServerConfig::default());
        {
            let mut s = TcpStream::connect(srv.local_addr()).unwrap();
            s.write_all(&Request::data(10, 1).encode()[..7]).unwrap();
        } // closed mid-header
        {
            let mut s = TcpStream::connect(srv.local_addr()).unwrap();
            s.write_all(&Request::data(64 << 20, 1).encode()).unwrap();
            let mut some = [0u8; 1000];
            s.read_exact(&mut some).unwrap();
        } // vanished mid-response (reset)
        let mut good = TcpStream::connect(srv.local_addr()).unwrap();
        good.write_all(&Request::data(100, 2).encode()).unwrap();
        assert_eq!(read_response(&mut good).1.len(), 100);
        let deadline = Instant::now() + Duration::from_secs(5);
        while (srv.stats().malformed < 1 || srv.stats().peer_errors < 1) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let st = srv.stats();
        assert_eq!((st.malformed, st.peer_errors), (1, 1), "{st:?}");
    }

    #[test]
    fn connections_over_the_cap_are_refused_busy() {
        let srv = start(ServerConfig { max_connections: 1, ..Default::default() });
        let _first = TcpStream::connect(srv.local_addr()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let mut second = TcpStream::connect(srv.local_addr()).unwrap();
        let (h, body) = read_response(&mut second);
        assert_eq!(h.status, Status::Error);
        assert!(String::from_utf8(body).unwrap().contains("busy"));
    }

    #[test]
    fn stats_request_returns_the_senders_tcp_info() {
        let srv = start(ServerConfig { congestion: Some("reno".into()), ..Default::default() });
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        s.write_all(&Request::data(100_000, 1).encode()).unwrap();
        read_response(&mut s);
        s.write_all(&Request::stats().encode()).unwrap();
        let (h, body) = read_response(&mut s);
        assert_eq!(h.status, Status::Stats);
        let r: ConnectionReport = serde_json::from_slice(&body).unwrap();
        assert_eq!(r.congestion.as_deref(), Some("reno"));
        assert_eq!(r.tcp_info.unwrap().total_retrans, 0);
    }

    #[test]
    fn stop_closes_open_connections() {
        let mut srv = start(ServerConfig::default());
        let mut s = TcpStream::connect(srv.local_addr()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        srv.stop();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(s.read(&mut b).unwrap_or(0), 0);
    }
}
