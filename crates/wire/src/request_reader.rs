//! The server's request parser: one request from a byte stream delivered in any pieces.
//!
//! A read returns whatever the kernel has, so a 24-byte header may arrive in 24 reads or
//! together with the next request. The reader assembles exactly one header (it never reads
//! past it, so a pipelined request stays in the socket for the next call), bounds the wait
//! with the idle and header timeouts, then decodes it ([`Request::decode`]). Every byte
//! sequence ends in one [`Incoming`]; nothing here allocates on the peer's say-so.
//!
//! Generic over [`TimedRead`] so the property tests and the fuzz target drive this very
//! code with scripted streams (crates/wire/tests/support/stream_script.rs).

use crate::protocol::{DecodeError, Request, HEADER_LEN};
use std::io::{self, ErrorKind, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A byte stream whose blocking reads can be bounded in time (`SO_RCVTIMEO` for a socket):
/// a read that waited that long fails with `WouldBlock` or `TimedOut`.
pub trait TimedRead: Read {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
}

impl TimedRead for TcpStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
}

/// How long reading a request may wait; `None` waits for ever.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadTimeouts {
    /// Before the header's first byte (a connection between requests).
    pub idle: Option<Duration>,
    /// From the header's first byte to its last (a slow or stalled peer).
    pub header: Option<Duration>,
}

/// How reading one request ended.
#[derive(Debug)]
pub enum Incoming {
    /// A whole, valid request.
    Request(Request),
    /// The peer closed cleanly between requests, or the server is stopping.
    Closed,
    /// Nothing arrived for the idle timeout.
    Idle,
    /// The header started but did not complete within the header timeout (bytes got).
    Slow(usize),
    /// The peer closed mid-header (bytes got).
    Truncated(usize),
    /// A whole header arrived but is not a request this server speaks.
    Malformed(DecodeError),
    /// The read failed (reset, ...).
    Failed(io::Error),
}

/// Read and decode the next request from `stream`.
pub fn read_request<S: TimedRead + ?Sized>(stream: &mut S, timeouts: ReadTimeouts, stop: &AtomicBool) -> Incoming {
    let mut hdr = [0u8; HEADER_LEN];
    let mut got = 0usize;
    let _ = stream.set_read_timeout(timeouts.idle);
    let mut deadline: Option<Instant> = None;
    while got < HEADER_LEN {
        if stop.load(Ordering::Relaxed) {
            return Incoming::Closed;
        }
        match stream.read(&mut hdr[got..]) {
            Ok(0) if got == 0 => return Incoming::Closed,
            Ok(0) => return Incoming::Truncated(got),
            Ok(n) => {
                if got == 0 {
                    deadline = timeouts.header.map(|t| Instant::now() + t);
                }
                got += n;
                if got < HEADER_LEN {
                    if let Some(d) = deadline {
                        let left = d.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return Incoming::Slow(got);
                        }
                        let _ = stream.set_read_timeout(Some(left));
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return if got == 0 { Incoming::Idle } else { Incoming::Slow(got) };
            }
            Err(e) if got > 0 => {
                return Incoming::Failed(io::Error::new(e.kind(), format!("{e} after {got} header bytes")))
            }
            Err(e) => return Incoming::Failed(e),
        }
    }
    match Request::decode(&hdr) {
        Ok(r) => Incoming::Request(r),
        Err(e) => Incoming::Malformed(e),
    }
}
