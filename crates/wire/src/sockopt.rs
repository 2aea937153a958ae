//! The Linux socket options the testbed's knobs map to, and TCP_INFO.
//!
//! | knob | where | option |
//! |------|-------|--------|
//! | delayed ACK off | receiver (client) | `TCP_QUICKACK`, re-armed after every read because the kernel clears it |
//! | congestion control | sender (server) | `TCP_CONGESTION` |
//! | receive-window clamp | receiver (client) | `SO_RCVBUF` before connect and `TCP_WINDOW_CLAMP` |
//! | RTOmin | sender (server) | `TCP_RTO_MIN_US` (Linux >= 6.15) or, in the testbed, per-route `rto_min` |
//! | delayed-ACK bound | receiver (client) | `TCP_DELACK_MAX_US` (Linux >= 6.15) |

use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::RawFd;

fn setsockopt_raw(fd: RawFd, level: i32, name: i32, val: *const libc::c_void, len: usize) -> io::Result<()> {
    // SAFETY: `val` points to `len` readable bytes for the duration of the call.
    let rc = unsafe { libc::setsockopt(fd, level, name, val, len as libc::socklen_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_int(fd: RawFd, level: i32, name: i32, v: i32) -> io::Result<()> {
    setsockopt_raw(fd, level, name, &v as *const i32 as *const libc::c_void, std::mem::size_of::<i32>())
}

fn get_int(fd: RawFd, level: i32, name: i32) -> io::Result<i32> {
    let mut v: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: v and len are valid for writes.
    let rc = unsafe { libc::getsockopt(fd, level, name, &mut v as *mut i32 as *mut libc::c_void, &mut len) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Send an ACK for every segment until the kernel leaves quick-ACK mode again
/// (it does on its own, so callers re-arm after each read).
pub fn set_quickack(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1)
}

/// Disable Nagle so the 24-byte requests leave at once.
pub fn set_nodelay(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
}

/// Choose the congestion control algorithm (`reno`, `cubic`, `bbr`, ...).
pub fn set_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    setsockopt_raw(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const libc::c_void, name.len())
}

/// The congestion control algorithm in use.
pub fn congestion(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 32];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf and len are valid for writes.
    let rc = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr() as *mut libc::c_void, &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let s = &buf[..len as usize];
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    Ok(String::from_utf8_lossy(&s[..end]).into_owned())
}

/// Receive buffer size (the kernel doubles the value for bookkeeping); set before
/// connect so the window scale in the SYN matches.
pub fn set_rcvbuf(fd: RawFd, bytes: u32) -> io::Result<()> {
    set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, bytes.min(i32::MAX as u32) as i32)
}

/// Upper bound on the receive window this socket advertises.
pub fn set_window_clamp(fd: RawFd, bytes: u32) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, bytes.min(i32::MAX as u32) as i32)
}

/// TCP_RTO_MIN_US (Linux 6.15+): this socket's RTOmin in microseconds.
pub const TCP_RTO_MIN_US: i32 = 45;

/// Set this socket's RTOmin; fails with ENOPROTOOPT on kernels before 6.15.
pub fn set_rto_min_us(fd: RawFd, us: u32) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, TCP_RTO_MIN_US, us.min(i32::MAX as u32) as i32)
}

/// This socket's RTOmin in microseconds (Linux 6.15+).
pub fn rto_min_us(fd: RawFd) -> io::Result<u32> {
    get_int(fd, libc::IPPROTO_TCP, TCP_RTO_MIN_US).map(|v| v as u32)
}

/// TCP_DELACK_MAX_US (Linux 6.15+): the longest this socket delays an ACK, in microseconds
/// (`icsk_delack_max`; the kernel also bounds it by the socket's RTOmin less a jiffy,
/// `tcp_delack_max`).
pub const TCP_DELACK_MAX_US: i32 = 46;

/// Bound this socket's delayed ACKs; fails with ENOPROTOOPT on kernels before 6.15 and
/// EINVAL outside 2 jiffies .. 200 ms (`TCP_TIMEOUT_MIN` .. `TCP_DELACK_MAX`).
pub fn set_delack_max_us(fd: RawFd, us: u32) -> io::Result<()> {
    set_int(fd, libc::IPPROTO_TCP, TCP_DELACK_MAX_US, us.min(i32::MAX as u32) as i32)
}

/// This socket's delayed-ACK bound in microseconds, as the kernel rounded it to jiffies.
pub fn delack_max_us(fd: RawFd) -> io::Result<u32> {
    get_int(fd, libc::IPPROTO_TCP, TCP_DELACK_MAX_US).map(|v| v as u32)
}

/// The counters of `struct tcp_info` the testbed reports. Fields added by later kernels
/// are `None` when the running kernel's struct is too short to hold them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    /// Consecutive unrecovered RTOs right now (`tcpi_retransmits`).
    pub retransmits_now: u8,
    /// Current exponential backoff of the RTO (`tcpi_backoff`).
    pub backoff: u8,
    pub rto_us: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_mss: u32,
    pub snd_cwnd: u32,
    pub lost: u32,
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    pub total_retrans: u32,
    pub bytes_retrans: Option<u64>,
    pub rcv_wnd: Option<u32>,
    /// Retransmission timeouts over the connection's life (`tcpi_total_rto`, Linux 6.7+).
    pub total_rto: Option<u32>,
    pub total_rto_recoveries: Option<u32>,
    pub total_rto_time_ms: Option<u32>,
}

fn u32_at(b: &[u8], off: usize, len: usize) -> Option<u32> {
    (off + 4 <= len).then(|| u32::from_ne_bytes(b[off..off + 4].try_into().unwrap()))
}

fn u16_at(b: &[u8], off: usize, len: usize) -> Option<u16> {
    (off + 2 <= len).then(|| u16::from_ne_bytes(b[off..off + 2].try_into().unwrap()))
}

fn u64_at(b: &[u8], off: usize, len: usize) -> Option<u64> {
    (off + 8 <= len).then(|| u64::from_ne_bytes(b[off..off + 8].try_into().unwrap()))
}

impl TcpInfo {
    /// Decode the first `len` bytes of a `struct tcp_info` (offsets from
    /// include/uapi/linux/tcp.h; the struct only ever grows at its end).
    pub fn parse(b: &[u8], len: usize) -> Option<TcpInfo> {
        if len < 104 {
            return None;
        }
        Some(TcpInfo {
            state: b[0],
            ca_state: b[1],
            retransmits_now: b[2],
            backoff: b[4],
            rto_us: u32_at(b, 8, len)?,
            snd_mss: u32_at(b, 16, len)?,
            lost: u32_at(b, 32, len)?,
            rtt_us: u32_at(b, 68, len)?,
            rttvar_us: u32_at(b, 72, len)?,
            snd_cwnd: u32_at(b, 80, len)?,
            total_retrans: u32_at(b, 100, len)?,
            bytes_retrans: u64_at(b, 208, len),
            rcv_wnd: u32_at(b, 232, len),
            total_rto: u16_at(b, 240, len).map(u32::from),
            total_rto_recoveries: u16_at(b, 242, len).map(u32::from),
            total_rto_time_ms: u32_at(b, 244, len),
        })
    }
}

/// Read TCP_INFO of a connected socket.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut buf = [0u8; 256];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf and len are valid for writes; the kernel writes at most len bytes.
    let rc = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, buf.as_mut_ptr() as *mut libc::c_void, &mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    TcpInfo::parse(&buf, len as usize).ok_or_else(|| io::Error::other("TCP_INFO shorter than Linux 2.6's"))
}

/// Bytes written to this socket that the peer has not acknowledged yet, a FIN counting
/// one (SIOCOUTQ: `write_seq - snd_una` in Linux's tcp_ioctl).
pub fn unacked_bytes(fd: RawFd) -> io::Result<u32> {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (== TIOCOUTQ) writes one int to a valid pointer.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut n as *mut libc::c_int) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n.max(0) as u32)
}

/// Raise the soft open-files limit to the hard limit (a server with 1,000 idle
/// connections needs more than the usual 1,024 descriptors). Returns the new limit.
pub fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: lim is valid for writes.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    #[test]
    fn tcp_info_of_a_fresh_loopback_connection_shows_no_retransmissions() {
        let (mut c, mut s) = pair();
        c.write_all(b"hello").unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).unwrap();
        let info = tcp_info(c.as_raw_fd()).unwrap();
        assert_eq!(info.state, 1, "TCP_ESTABLISHED");
        assert_eq!(info.total_retrans, 0);
        assert!(info.rto_us >= 200_000, "default RTOmin is 200 ms, rto {}", info.rto_us);
    }

    #[test]
    fn the_delayed_ack_bound_is_set_in_whole_jiffies_where_the_kernel_has_it() {
        // Linux 6.15+: usecs_to_jiffies rounds up, and 2 jiffies .. 200 ms are accepted;
        // an older kernel answers ENOPROTOOPT, which the testbed turns into a refusal
        let (c, _s) = pair();
        let fd = c.as_raw_fd();
        match set_delack_max_us(fd, 40_000) {
            Err(e) if e.raw_os_error() == Some(libc::ENOPROTOOPT) => return,
            r => r.unwrap(),
        }
        assert_eq!(delack_max_us(fd).unwrap(), 40_000, "40 ms is whole jiffies at HZ 100, 250, 1000");
        assert_eq!(set_delack_max_us(fd, 200_001).unwrap_err().raw_os_error(), Some(libc::EINVAL), "above TCP_DELACK_MAX");
        assert_eq!(set_delack_max_us(fd, 1).unwrap_err().raw_os_error(), Some(libc::EINVAL), "below 2 jiffies");
    }

    #[test]
    fn parse_refuses_a_truncated_struct_and_hides_fields_the_kernel_lacks() {
        let buf = [0u8; 256];
        assert!(TcpInfo::parse(&buf, 50).is_none());
        let old = TcpInfo::parse(&buf, 104).unwrap();
        assert_eq!(old.total_rto, None);
        let new = TcpInfo::parse(&buf, 248).unwrap();
        assert_eq!(new.total_rto, Some(0));
    }

    #[test]
    fn congestion_control_can_be_chosen_per_socket() {
        let (c, _s) = pair();
        set_congestion(c.as_raw_fd(), "reno").unwrap();
        assert_eq!(congestion(c.as_raw_fd()).unwrap(), "reno");
        assert!(set_congestion(c.as_raw_fd(), "no-such-cc").is_err());
    }

    #[test]
    fn unacked_bytes_drop_to_zero_once_the_peer_acknowledges() {
        let (mut c, _s) = pair();
        c.write_all(&[0u8; 1000]).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while unacked_bytes(c.as_raw_fd()).unwrap() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(unacked_bytes(c.as_raw_fd()).unwrap(), 0, "loopback acknowledges at once");
    }

    #[test]
    fn quickack_and_window_clamp_are_accepted() {
        let (c, _s) = pair();
        set_quickack(c.as_raw_fd()).unwrap();
        set_window_clamp(c.as_raw_fd(), 65536).unwrap();
        assert_eq!(get_int(c.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP).unwrap(), 65536);
    }
}
