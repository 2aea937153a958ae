//! The client side: synchronized reads over N persistent connections.
//!
//! Per block (`000_315d806dde942a9f.txt` §3.1): send one request per server, wait for
//! every byte of every response, record the block's completion time, start the next
//! block at once. Two application-level mitigations shape when requests leave: at most
//! `max_concurrent` servers answer at a time (the next request leaves when a response
//! completes), and `stagger` delays request i by i x stagger from the block's start.
//!
//! One thread drives all connections with `ppoll` (microsecond timeouts for the
//! stagger), reading into one scratch buffer, so the client costs one copy per byte and
//! no per-block allocation: on loopback it moves far more than the 1 Gbps under test
//! (figure in README.md).

use crate::netns;
use crate::protocol::{Request, ResponseHeader, Status, HEADER_LEN};
use crate::server::ConnectionReport;
use crate::sockopt::{self, TcpInfo};
use crate::summary::quantile;
use serde::{Deserialize, Serialize};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn default_sru() -> u64 {
    256 * 1024
}
fn default_blocks() -> u64 {
    40
}
fn default_connect_timeout() -> u64 {
    5_000_000_000_000
}
fn default_block_timeout() -> u64 {
    120_000_000_000_000
}
fn default_true() -> bool {
    true
}

/// What to read and how. Sizes in bytes, durations in picoseconds.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ClientConfig {
    /// `host:port` of every server, in request order.
    pub servers: Vec<String>,
    /// Network namespace to connect from, e.g. `/var/run/netns/iltb-c`.
    #[serde(default)]
    pub netns: Option<PathBuf>,
    /// Fixed-SRU mode: bytes each server sends per block.
    #[serde(default = "default_sru")]
    pub sru_bytes: u64,
    /// Fixed-block mode: the block is split over the servers (overrides `sru_bytes`).
    #[serde(default)]
    pub block_bytes: Option<u64>,
    #[serde(default = "default_blocks")]
    pub blocks: u64,
    /// TCP_QUICKACK on every read: no delayed ACKs from the client.
    #[serde(default)]
    pub quickack: bool,
    /// TCP_CONGESTION of the client's sockets (the servers' choice is what shapes the
    /// data direction; see ServerConfig::congestion).
    #[serde(default)]
    pub congestion: Option<String>,
    /// SO_RCVBUF before connect.
    #[serde(default)]
    pub rcvbuf_bytes: Option<u32>,
    /// TCP_WINDOW_CLAMP: the largest receive window advertised. The kernel rewrites the
    /// clamp when receive-buffer autotuning grows the buffer (unless SO_RCVBUF locks it)
    /// and when it re-estimates the payload/truesize ratio, so the client re-applies it
    /// at every request and after every read. Because a rewrite can re-open the window
    /// before the client sees it, the reliable bound is the receive buffer: callers set
    /// `rcvbuf_bytes` to half the clamp (the kernel doubles it), so the window, a fraction
    /// of the buffer, never exceeds the clamp.
    #[serde(default)]
    pub window_clamp_bytes: Option<u32>,
    /// TCP_DELACK_MAX_US (Linux 6.15+) on every connection: the longest the client delays
    /// an ACK.
    #[serde(default)]
    pub delack_max_us: Option<u32>,
    /// At most this many servers answer at a time.
    #[serde(default)]
    pub max_concurrent: Option<usize>,
    /// Request i of a block leaves i x stagger after the block starts.
    #[serde(default)]
    pub stagger_ps: u64,
    /// Nearly complete serialization (Osada et al. §4.3, application form): the next
    /// request leaves only once the newest response has at most this many bytes left
    /// (still at most `max_concurrent` at a time). None: leave as soon as the cap allows.
    #[serde(default)]
    pub start_next_at_remaining: Option<u64>,
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_ps: u64,
    /// Give up if one block takes longer than this.
    #[serde(default = "default_block_timeout")]
    pub block_timeout_ps: u64,
    /// Give up when a server that owes bytes of the current block (or has a request to
    /// take) sends nothing for this long: a server that accepts and never answers, or a
    /// connection that died without a reset. None: only the block timeout applies.
    #[serde(default)]
    pub idle_timeout_ps: Option<u64>,
    /// Ask every server for its side's TCP_INFO at the end.
    #[serde(default = "default_true")]
    pub server_stats: bool,
    /// Counts the blocks completed so far, for a caller showing progress from another
    /// thread (not part of the JSON configuration).
    #[serde(skip)]
    pub blocks_done: Option<Arc<AtomicU64>>,
}

/// One connection's share of the run.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectionResult {
    pub server: String,
    pub request_bytes: u64,
    pub payload_bytes: u64,
    /// The receiver's TCP_INFO (client side) at the end.
    pub client_tcp_info: Option<TcpInfo>,
    /// The sender's report (server side) at the end.
    pub server_report: Option<ConnectionReport>,
}

/// The outcome of a run; field names follow `incastlab simulate --json` where they overlap.
#[derive(Clone, Debug, Serialize)]
pub struct ClientResult {
    pub servers: usize,
    pub sru_bytes: u64,
    pub block_bytes: u64,
    pub blocks: u64,
    pub payload_bytes: u64,
    /// Payload bits per second over the whole run, in Mbit/s.
    pub goodput_mbps: f64,
    /// From the first request to the last byte of the last block.
    pub wall_seconds: f64,
    pub block_time_p50_s: f64,
    pub block_time_p99_s: f64,
    pub block_time_max_s: f64,
    pub block_time_mean_s: f64,
    pub block_times_s: Vec<f64>,
    /// Sum over servers of the sender's `tcpi_total_retrans` (null if a server did not report).
    pub retransmits: Option<u64>,
    /// Sum over servers of the sender's `tcpi_total_rto` (null if unknown).
    pub timeouts: Option<u64>,
    /// Sum over servers of `tcpi_total_rto_time`: time spent in RTO recovery.
    pub rto_recovery_seconds: Option<f64>,
    pub server_congestion: Option<String>,
    pub server_rto_min_us: Option<u32>,
    pub quickack: bool,
    pub max_concurrent: Option<usize>,
    pub stagger_s: f64,
    pub start_next_at_remaining: Option<u64>,
    pub connections: Vec<ConnectionResult>,
}

fn ps(d: u64) -> Duration {
    Duration::from_nanos(d / 1000)
}

/// Split a block over `n` servers: block / n each, the first block % n one byte more.
pub fn split_block(block: u64, n: usize) -> Vec<u64> {
    let n64 = n as u64;
    (0..n64).map(|i| block / n64 + u64::from(i < block % n64)).collect()
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: zeroed sockaddr_storage is a valid value; we fill the family's fields.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// Connect with the receive-side options set before the SYN (so the window scale fits).
fn connect(addr: SocketAddr, cfg: &ClientConfig) -> io::Result<TcpStream> {
    let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain socket(2); the fd is owned at once.
    let raw = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: raw is a fresh, valid fd we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let ctx = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{addr}: {what}: {e}"));
    if let Some(b) = cfg.rcvbuf_bytes {
        sockopt::set_rcvbuf(raw, b).map_err(|e| ctx("SO_RCVBUF", e))?;
    }
    if let Some(b) = cfg.window_clamp_bytes {
        sockopt::set_window_clamp(raw, b).map_err(|e| ctx("TCP_WINDOW_CLAMP", e))?;
    }
    if let Some(cc) = &cfg.congestion {
        sockopt::set_congestion(raw, cc).map_err(|e| ctx(&format!("congestion control {cc:?}"), e))?;
    }
    if let Some(us) = cfg.delack_max_us {
        sockopt::set_delack_max_us(raw, us).map_err(|e| ctx(&format!("TCP_DELACK_MAX_US {us} (Linux 6.15+)"), e))?;
    }
    let stream = TcpStream::from(fd);
    // Linux bounds a blocking connect by SO_SNDTIMEO.
    stream.set_write_timeout(Some(ps(cfg.connect_timeout_ps).max(Duration::from_millis(1))))?;
    let (ss, len) = sockaddr(&addr);
    // SAFETY: ss holds a valid sockaddr of length len.
    let rc = unsafe { libc::connect(raw, &ss as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        let e = if e.kind() == ErrorKind::WouldBlock { io::Error::new(ErrorKind::TimedOut, "timed out") } else { e };
        return Err(ctx("connect", e));
    }
    stream.set_write_timeout(None)?;
    sockopt::set_nodelay(raw)?;
    if let Some(b) = cfg.window_clamp_bytes {
        // again after the handshake: the kernel recomputes the clamp from the route then
        sockopt::set_window_clamp(raw, b).map_err(|e| ctx("TCP_WINDOW_CLAMP", e))?;
    }
    Ok(stream)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Waiting,
    Sending,
    Receiving,
    Done,
}

struct Conn {
    stream: TcpStream,
    fd: RawFd,
    addr: String,
    size: u64,
    req: [u8; HEADER_LEN],
    req_sent: usize,
    hdr: [u8; HEADER_LEN],
    hdr_got: usize,
    remaining: u64,
    block: u64,
    phase: Phase,
    payload: u64,
    clamp: Option<u32>,
    /// When this connection last made progress: its request went out, or bytes came in.
    last_progress: Instant,
}

/// May the next request of a block leave, given the start-next threshold and how many
/// bytes the newest request's response still has to deliver (None: no request yet)?
fn may_start_next(threshold: Option<u64>, newest_left: Option<u64>) -> bool {
    match (threshold, newest_left) {
        (Some(t), Some(left)) => left <= t,
        _ => true,
    }
}

impl Conn {
    /// Whether this connection has a request out (or going out) whose answer is not in.
    fn owes(&self) -> bool {
        matches!(self.phase, Phase::Sending | Phase::Receiving)
    }

    /// Payload bytes of this block's response not yet received.
    fn left(&self) -> u64 {
        match self.phase {
            Phase::Done => 0,
            _ if self.hdr_got < HEADER_LEN => self.size,
            _ => self.remaining,
        }
    }

    fn start_block(&mut self, block: u64) {
        self.req = Request::data(self.size, block).encode();
        self.req_sent = 0;
        self.hdr_got = 0;
        self.remaining = 0;
        self.block = block;
        self.phase = Phase::Waiting;
    }

    /// Linux 6.x resets the clamp to the buffer's window whenever it re-estimates the
    /// payload/truesize ratio (tcp_measure_rcv_mss), so re-apply it at every request and
    /// after every read (one setsockopt; only when a clamp is asked for).
    fn reclamp(&self) {
        if let Some(b) = self.clamp {
            let _ = sockopt::set_window_clamp(self.fd, b);
        }
    }

    /// Push the request out; `Receiving` once all 24 bytes left.
    fn send_request(&mut self) -> io::Result<()> {
        self.reclamp();
        while self.req_sent < HEADER_LEN {
            match self.stream.write(&self.req[self.req_sent..]) {
                Ok(n) => {
                    self.req_sent += n;
                    self.last_progress = Instant::now();
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.phase = Phase::Sending;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: sending request: {e}", self.addr))),
            }
        }
        self.phase = Phase::Receiving;
        Ok(())
    }

    /// Read what is there; true once the whole response has arrived.
    fn on_readable(&mut self, scratch: &mut [u8], quickack: bool) -> io::Result<bool> {
        for _ in 0..64 {
            let header_done = self.hdr_got == HEADER_LEN;
            if header_done && self.remaining == 0 {
                return Ok(true);
            }
            let r = if header_done {
                let want = (self.remaining.min(scratch.len() as u64)) as usize;
                self.stream.read(&mut scratch[..want])
            } else {
                self.stream.read(&mut self.hdr[self.hdr_got..])
            };
            let n = match r {
                Ok(0) => {
                    return Err(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        format!("{}: server closed the connection in block {}", self.addr, self.block),
                    ))
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", self.addr))),
            };
            self.last_progress = Instant::now();
            if quickack {
                let _ = sockopt::set_quickack(self.fd);
            }
            self.reclamp();
            if header_done {
                self.remaining -= n as u64;
                self.payload += n as u64;
            } else {
                self.hdr_got += n;
                if self.hdr_got == HEADER_LEN {
                    self.reclamp();
                    self.accept_header()?;
                }
            }
        }
        Ok(false)
    }

    fn accept_header(&mut self) -> io::Result<()> {
        let h = ResponseHeader::decode(&self.hdr)
            .map_err(|e| io::Error::new(ErrorKind::InvalidData, format!("{}: {e}", self.addr)))?;
        match h.status {
            Status::Data if h.length == self.size && h.block == self.block => {
                self.remaining = h.length;
                Ok(())
            }
            Status::Error => Err(io::Error::other(format!("{}: server refused: {}", self.addr, read_message(&mut self.stream, h.length)))),
            _ => Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("{}: unexpected response {:?} of {} bytes for block {} (asked {} bytes of block {})",
                    self.addr, h.status, h.length, h.block, self.size, self.block),
            )),
        }
    }
}

fn read_message(stream: &mut TcpStream, len: u64) -> String {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut buf = vec![0u8; len.min(4096) as usize];
    match stream.read_exact(&mut buf) {
        Ok(()) => String::from_utf8_lossy(&buf).into_owned(),
        Err(e) => format!("(message lost: {e})"),
    }
}

fn resolve(s: &str) -> io::Result<SocketAddr> {
    s.to_socket_addrs()
        .map_err(|e| io::Error::new(ErrorKind::InvalidInput, format!("server {s:?}: {e}")))?
        .next()
        .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, format!("server {s:?}: no address")))
}

fn ppoll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
    let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: fds is a valid slice of pollfd; ts is a valid timespec; no signal mask.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

fn run_block(conns: &mut [Conn], block: u64, cfg: &ClientConfig, scratch: &mut [u8]) -> io::Result<Duration> {
    let n = conns.len();
    let k = cfg.max_concurrent.unwrap_or(n).clamp(1, n.max(1));
    let stagger = ps(cfg.stagger_ps);
    for c in conns.iter_mut() {
        c.start_block(block);
    }
    let start = Instant::now();
    let deadline = start + ps(cfg.block_timeout_ps);
    let (mut next, mut active, mut done) = (0usize, 0usize, 0usize);
    let threshold = cfg.start_next_at_remaining;
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(n);
    let mut idx: Vec<usize> = Vec::with_capacity(n);
    while done < n {
        let now = Instant::now();
        while next < n
            && active < k
            && start + stagger * next as u32 <= now
            && may_start_next(threshold, next.checked_sub(1).map(|i| conns[i].left()))
        {
            conns[next].send_request()?;
            active += 1;
            next += 1;
        }
        if now >= deadline {
            let late: Vec<&str> = conns.iter().filter(|c| c.phase != Phase::Done).map(|c| c.addr.as_str()).collect();
            return Err(io::Error::new(
                ErrorKind::TimedOut,
                format!("block {block} did not complete within {:?}; still waiting for {}", ps(cfg.block_timeout_ps), late.join(", ")),
            ));
        }
        if let Some(idle) = cfg.idle_timeout_ps.map(ps) {
            if let Some(c) = conns.iter().find(|c| c.owes() && now.duration_since(c.last_progress) >= idle) {
                return Err(io::Error::new(
                    ErrorKind::TimedOut,
                    format!("{} sent nothing for {:?} in block {block} ({} of {} bytes still to come); \
                             the server accepts but does not answer",
                        c.addr, idle, c.left(), c.size),
                ));
            }
        }
        let mut wake = deadline;
        if next < n && active < k {
            wake = wake.min(start + stagger * next as u32);
        }
        if let Some(idle) = cfg.idle_timeout_ps.map(ps) {
            for c in conns.iter().filter(|c| c.owes()) {
                wake = wake.min(c.last_progress + idle);
            }
        }
        fds.clear();
        idx.clear();
        for (i, c) in conns.iter().enumerate() {
            let events = match c.phase {
                Phase::Sending => libc::POLLOUT,
                Phase::Receiving => libc::POLLIN,
                _ => continue,
            };
            fds.push(libc::pollfd { fd: c.fd, events, revents: 0 });
            idx.push(i);
        }
        ppoll(&mut fds, wake.saturating_duration_since(now))?;
        for (f, &i) in fds.iter().zip(idx.iter()) {
            if f.revents == 0 {
                continue;
            }
            let c = &mut conns[i];
            if c.phase == Phase::Sending {
                c.send_request()?;
            }
            if c.phase == Phase::Receiving && c.on_readable(scratch, cfg.quickack)? {
                c.phase = Phase::Done;
                done += 1;
                active -= 1;
            }
        }
    }
    Ok(start.elapsed())
}

fn ask_stats(c: &mut Conn) -> Option<ConnectionReport> {
    c.stream.set_nonblocking(false).ok()?;
    c.stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    c.stream.write_all(&Request::stats().encode()).ok()?;
    let mut h = [0u8; HEADER_LEN];
    c.stream.read_exact(&mut h).ok()?;
    let h = ResponseHeader::decode(&h).ok()?;
    if h.status != Status::Stats || h.length > 1 << 20 {
        return None;
    }
    let mut body = vec![0u8; h.length as usize];
    c.stream.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn sum_opt(it: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    it.sum()
}

fn run(cfg: ClientConfig) -> io::Result<ClientResult> {
    let n = cfg.servers.len();
    if n == 0 {
        return Err(io::Error::new(ErrorKind::InvalidInput, "servers: at least one server is needed"));
    }
    let sizes = match cfg.block_bytes {
        Some(b) => split_block(b, n),
        None => vec![cfg.sru_bytes; n],
    };
    sockopt::raise_nofile_limit();
    let mut conns = Vec::with_capacity(n);
    for (s, &size) in cfg.servers.iter().zip(sizes.iter()) {
        let stream = connect(resolve(s)?, &cfg)?;
        stream.set_nonblocking(true)?;
        let fd = stream.as_raw_fd();
        if cfg.quickack {
            sockopt::set_quickack(fd)?;
        }
        conns.push(Conn {
            stream,
            fd,
            addr: s.clone(),
            size,
            req: [0; HEADER_LEN],
            req_sent: 0,
            hdr: [0; HEADER_LEN],
            hdr_got: 0,
            remaining: 0,
            block: 0,
            phase: Phase::Done,
            payload: 0,
            clamp: cfg.window_clamp_bytes,
            last_progress: Instant::now(),
        });
    }
    let mut scratch = vec![0u8; 1 << 20];
    let mut times = Vec::with_capacity(cfg.blocks as usize);
    let t0 = Instant::now();
    for b in 0..cfg.blocks {
        times.push(run_block(&mut conns, b, &cfg, &mut scratch)?.as_secs_f64());
        if let Some(done) = &cfg.blocks_done {
            done.store(b + 1, Ordering::Relaxed);
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let mut connections = Vec::with_capacity(n);
    for c in conns.iter_mut() {
        let client_tcp_info = sockopt::tcp_info(c.fd).ok();
        let server_report = if cfg.server_stats { ask_stats(c) } else { None };
        connections.push(ConnectionResult {
            server: c.addr.clone(),
            request_bytes: c.size,
            payload_bytes: c.payload,
            client_tcp_info,
            server_report,
        });
    }
    let infos: Vec<Option<&TcpInfo>> = connections.iter().map(|c| c.server_report.as_ref().and_then(|r| r.tcp_info.as_ref())).collect();
    let retransmits = sum_opt(infos.iter().map(|i| i.map(|i| u64::from(i.total_retrans))));
    let timeouts = sum_opt(infos.iter().map(|i| i.and_then(|i| i.total_rto).map(u64::from)));
    let rto_ms = sum_opt(infos.iter().map(|i| i.and_then(|i| i.total_rto_time_ms).map(u64::from)));
    let first_report = connections.iter().find_map(|c| c.server_report.clone());
    let payload: u64 = conns.iter().map(|c| c.payload).sum();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let block_bytes: u64 = sizes.iter().sum();
    Ok(ClientResult {
        servers: n,
        sru_bytes: sizes[0],
        block_bytes,
        blocks: cfg.blocks,
        payload_bytes: payload,
        goodput_mbps: if wall > 0.0 { payload as f64 * 8.0 / wall / 1e6 } else { 0.0 },
        wall_seconds: wall,
        block_time_p50_s: quantile(&sorted, 0.5),
        block_time_p99_s: quantile(&sorted, 0.99),
        block_time_max_s: sorted.last().copied().unwrap_or(0.0),
        block_time_mean_s: if times.is_empty() { 0.0 } else { times.iter().sum::<f64>() / times.len() as f64 },
        block_times_s: times,
        retransmits,
        timeouts,
        rto_recovery_seconds: rto_ms.map(|ms| ms as f64 / 1000.0),
        server_congestion: first_report.as_ref().and_then(|r| r.congestion.clone()),
        server_rto_min_us: first_report.as_ref().and_then(|r| r.rto_min_us),
        quickack: cfg.quickack,
        max_concurrent: cfg.max_concurrent,
        stagger_s: cfg.stagger_ps as f64 / 1e12,
        start_next_at_remaining: cfg.start_next_at_remaining,
        connections,
    })
}

/// Run the synchronized-read workload (inside `cfg.netns` if given) and report.
pub fn read_blocks(cfg: ClientConfig) -> io::Result<ClientResult> {
    let ns = cfg.netns.clone();
    netns::run_in(ns.as_deref(), move || run(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Server, ServerConfig};

    fn servers(n: usize, cfg: ServerConfig) -> Vec<Server> {
        (0..n)
            .map(|_| Server::start(ServerConfig { listen: "127.0.0.1:0".into(), log: false, ..cfg.clone() }).unwrap())
            .collect()
    }

    fn client(srv: &[Server]) -> ClientConfig {
        let mut c: ClientConfig = serde_json::from_str(r#"{"servers": []}"#).unwrap();
        c.servers = srv.iter().map(|s| s.local_addr().to_string()).collect();
        c
    }

    #[test]
    fn split_block_spreads_the_remainder_over_the_first_servers() {
        assert_eq!(split_block(10, 3), vec![4, 3, 3]);
        assert_eq!(split_block(1 << 20, 4).iter().sum::<u64>(), 1 << 20);
    }

    #[test]
    fn every_byte_of_every_block_arrives() {
        let srv = servers(3, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.sru_bytes = 100_000;
        cfg.blocks = 7;
        let r = read_blocks(cfg).unwrap();
        assert_eq!(r.payload_bytes, 3 * 100_000 * 7);
        assert_eq!(r.block_times_s.len(), 7);
        assert!(r.connections.iter().all(|c| c.payload_bytes == 700_000));
        assert_eq!(r.retransmits, Some(0), "loopback does not lose packets");
        assert_eq!(r.timeouts, Some(0));
    }

    #[test]
    fn fixed_block_mode_splits_the_block() {
        let srv = servers(3, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.block_bytes = Some(1_000_000);
        cfg.blocks = 2;
        let r = read_blocks(cfg).unwrap();
        assert_eq!(r.block_bytes, 1_000_000);
        assert_eq!(r.payload_bytes, 2_000_000);
    }

    #[test]
    fn stagger_delays_each_request() {
        let srv = servers(4, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.sru_bytes = 1000;
        cfg.blocks = 3;
        cfg.stagger_ps = 20_000_000_000; // 20 ms
        let r = read_blocks(cfg).unwrap();
        // the last request leaves 3 x 20 ms after the block starts
        assert!(r.block_time_p50_s >= 0.060, "{:?}", r.block_times_s);
    }

    #[test]
    fn max_concurrent_one_serializes_and_still_completes() {
        let srv = servers(4, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.max_concurrent = Some(1);
        cfg.quickack = true;
        cfg.blocks = 3;
        let r = read_blocks(cfg).unwrap();
        assert_eq!(r.payload_bytes, 4 * 256 * 1024 * 3);
    }

    #[test]
    fn the_next_request_waits_for_the_newest_response_to_reach_the_threshold() {
        assert!(may_start_next(Some(1000), None), "the first request leaves at once");
        assert!(!may_start_next(Some(1000), Some(5000)));
        assert!(may_start_next(Some(1000), Some(1000)));
        assert!(may_start_next(None, Some(5000)), "no threshold: only the cap applies");
    }

    #[test]
    fn start_next_at_threshold_completes_every_block() {
        let srv = servers(4, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.max_concurrent = Some(2);
        cfg.start_next_at_remaining = Some(64 * 1024);
        cfg.blocks = 3;
        let r = read_blocks(cfg).unwrap();
        assert_eq!(r.payload_bytes, 4 * 256 * 1024 * 3);
        assert_eq!(r.start_next_at_remaining, Some(64 * 1024));
    }

    #[test]
    fn a_refused_request_surfaces_the_servers_message() {
        let srv = servers(1, ServerConfig { max_request_bytes: 1000, ..Default::default() });
        let mut cfg = client(&srv);
        cfg.sru_bytes = 5000;
        let e = read_blocks(cfg).unwrap_err().to_string();
        assert!(e.contains("server refused") && e.contains("maximum of 1000"), "{e}");
    }

    #[test]
    fn blocks_done_counts_every_completed_block() {
        let srv = servers(2, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.blocks = 7;
        let done = Arc::new(AtomicU64::new(0));
        cfg.blocks_done = Some(done.clone());
        read_blocks(cfg).unwrap();
        assert_eq!(done.load(Ordering::Relaxed), 7);
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_times_out_naming_it() {
        // the listen backlog completes the handshake; nobody ever reads the request
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let srv = servers(1, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.servers.push(silent.local_addr().unwrap().to_string());
        cfg.blocks = 3;
        cfg.idle_timeout_ps = Some(300_000_000_000); // 300 ms
        let start = Instant::now();
        let e = read_blocks(cfg).unwrap_err();
        let waited = start.elapsed();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        let text = e.to_string();
        assert!(text.contains(&silent.local_addr().unwrap().to_string()) && text.contains("sent nothing"), "{text}");
        assert!(!text.contains(&srv[0].local_addr().to_string()), "the server that answered is not blamed: {text}");
        // 300 ms of silence, plus scheduling on a loaded 2-core machine (never the 120 s block timeout)
        assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(5), "{waited:?}");
    }

    #[test]
    fn an_unreachable_server_is_an_error_naming_it() {
        let mut cfg: ClientConfig = serde_json::from_str(r#"{"servers": ["127.0.0.1:1"]}"#).unwrap();
        cfg.blocks = 1;
        let e = read_blocks(cfg).unwrap_err().to_string();
        assert!(e.contains("127.0.0.1:1"), "{e}");
    }

    #[test]
    fn receive_window_options_are_applied() {
        let srv = servers(1, ServerConfig::default());
        let mut cfg = client(&srv);
        cfg.window_clamp_bytes = Some(131072);
        cfg.rcvbuf_bytes = Some(131072 / 2);
        cfg.blocks = 2;
        let r = read_blocks(cfg).unwrap();
        let rcv_wnd = r.connections[0].client_tcp_info.as_ref().unwrap().rcv_wnd.unwrap();
        assert!(rcv_wnd <= 131072, "advertised window {rcv_wnd} above the clamp");
    }
}
