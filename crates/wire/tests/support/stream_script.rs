//! Scripted byte streams for the server's request parser, and the parser's oracle.
//!
//! Shared by the property tests (tests/request_parser_props.rs), the corpus replay
//! (tests/fuzz_corpus_replay.rs) and the coverage-guided fuzz target
//! (fuzz/fuzz_targets/request_stream.rs, which includes this file by path), so a corpus
//! file means the same stream to the fuzzer and to stable `cargo test`.
//!
//! A script is what a peer makes a socket deliver: bytes, in pieces of any size, with
//! EINTR, a wait longer than the read timeout, or a reset in between, then EOF.
//! [`check`] runs the real [`read_request`] over a script request after request and
//! asserts it ends exactly as the oracle [`expected`] says, a plain model of the
//! protocol (cut the byte stream into 24-byte headers and decode each).
#![allow(dead_code)]

use incast_wire::protocol::{DecodeError, Request, HEADER_LEN};
use incast_wire::request_reader::{read_request, Incoming, ReadTimeouts, TimedRead};
use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// One thing a read on the socket can return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Bytes available at once (a read may take fewer: only as many as its buffer holds).
    Bytes(Vec<u8>),
    /// The read was interrupted by a signal (EINTR).
    Interrupted,
    /// Nothing arrived within the read timeout (SO_RCVTIMEO expired: EAGAIN).
    Stall,
    /// The peer reset the connection.
    Reset,
}

/// How reading one request ended, comparable (an io::Error is compared by kind).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Request(Request),
    Closed,
    Idle,
    Slow(usize),
    Truncated(usize),
    Malformed(DecodeError),
    Failed(ErrorKind),
}

impl From<Incoming> for Outcome {
    fn from(i: Incoming) -> Self {
        match i {
            Incoming::Request(r) => Outcome::Request(r),
            Incoming::Closed => Outcome::Closed,
            Incoming::Idle => Outcome::Idle,
            Incoming::Slow(n) => Outcome::Slow(n),
            Incoming::Truncated(n) => Outcome::Truncated(n),
            Incoming::Malformed(e) => Outcome::Malformed(e),
            Incoming::Failed(e) => Outcome::Failed(e.kind()),
        }
    }
}

/// A socket stand-in that plays a script, then EOF, and records how it was used.
pub struct ScriptedStream {
    events: VecDeque<Event>,
    /// Bytes handed out so far.
    pub delivered: usize,
    /// Calls to `read`.
    pub reads: usize,
    /// Every read timeout set, with the bytes delivered when it was set.
    pub timeouts_set: Vec<(usize, Option<Duration>)>,
}

impl ScriptedStream {
    pub fn new(events: &[Event]) -> Self {
        // Room for every timeout the parser can set (at most one per read, plus one per
        // request), so recording them allocates nothing while a parse is measured.
        let bytes: usize = events.iter().map(|e| if let Event::Bytes(b) = e { b.len() } else { 0 }).sum();
        let timeouts_set = Vec::with_capacity(2 * (bytes + events.len()) + 4);
        ScriptedStream { events: events.iter().cloned().collect(), delivered: 0, reads: 0, timeouts_set }
    }
}

impl Read for ScriptedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        // A read into an empty buffer returns 0, which the parser would take for EOF.
        assert!(!buf.is_empty(), "the parser read into an empty buffer");
        loop {
            let Some(event) = self.events.front_mut() else { return Ok(0) };
            let result = match event {
                Event::Bytes(b) if b.is_empty() => None,
                Event::Bytes(b) => {
                    let n = buf.len().min(b.len());
                    buf[..n].copy_from_slice(&b[..n]);
                    b.drain(..n);
                    self.delivered += n;
                    if !b.is_empty() {
                        return Ok(n);
                    }
                    Some(Ok(n))
                }
                Event::Interrupted => Some(Err(ErrorKind::Interrupted.into())),
                Event::Stall => Some(Err(ErrorKind::WouldBlock.into())),
                Event::Reset => Some(Err(ErrorKind::ConnectionReset.into())),
            };
            self.events.pop_front();
            if let Some(r) = result {
                return r;
            }
        }
    }
}

impl TimedRead for ScriptedStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.timeouts_set.push((self.delivered, timeout));
        // As std does for a socket: a zero timeout is refused (and the old one stays).
        if timeout == Some(Duration::ZERO) {
            return Err(io::Error::new(ErrorKind::InvalidInput, "cannot set a 0 duration timeout"));
        }
        Ok(())
    }
}

/// The oracle: what reading requests one after another from `script` must give. The
/// stream is cut into 24-byte headers; each is decoded; reading stops at the first that
/// is not a request, at a stall (idle before a header, slow inside one), a reset or EOF.
pub fn expected(script: &[Event]) -> Vec<Outcome> {
    let mut out = Vec::new();
    let mut hdr: Vec<u8> = Vec::with_capacity(HEADER_LEN);
    for event in script {
        match event {
            Event::Bytes(bytes) => {
                for &b in bytes {
                    hdr.push(b);
                    if hdr.len() == HEADER_LEN {
                        match Request::decode(hdr.as_slice().try_into().unwrap()) {
                            Ok(r) => out.push(Outcome::Request(r)),
                            Err(e) => {
                                out.push(Outcome::Malformed(e));
                                return out;
                            }
                        }
                        hdr.clear();
                    }
                }
            }
            Event::Interrupted => {}
            Event::Stall => {
                out.push(if hdr.is_empty() { Outcome::Idle } else { Outcome::Slow(hdr.len()) });
                return out;
            }
            Event::Reset => {
                out.push(Outcome::Failed(ErrorKind::ConnectionReset));
                return out;
            }
        }
    }
    out.push(if hdr.is_empty() { Outcome::Closed } else { Outcome::Truncated(hdr.len()) });
    out
}

/// Read requests from `script` with the real parser until one read does not give a
/// request, as the server's connection loop does. Also returns the stream, to inspect.
pub fn parse_all(script: &[Event], timeouts: ReadTimeouts) -> (Vec<Outcome>, ScriptedStream) {
    let mut stream = ScriptedStream::new(script);
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    loop {
        let o = Outcome::from(read_request(&mut stream, timeouts, &stop));
        let done = !matches!(o, Outcome::Request(_));
        out.push(o);
        if done {
            return (out, stream);
        }
    }
}

/// The parser's contract on one script; panics (with the script) where it is broken.
pub fn check(script: &[Event], timeouts: ReadTimeouts) {
    let want = expected(script);
    let (got, stream) = parse_all(script, timeouts);
    assert_eq!(got, want, "parser and oracle disagree on {script:?}");
    // No hang, no busy loop: every read makes progress (a byte, an event) or ends.
    let bytes: usize = script.iter().map(|e| if let Event::Bytes(b) = e { b.len() } else { 0 }).sum();
    assert!(stream.reads <= bytes + script.len() + 1, "{} reads for {bytes} bytes in {script:?}", stream.reads);
    // Never a zero timeout (a socket would refuse it and keep the long idle timeout), and
    // once a header has begun no wait longer than the header timeout.
    for &(at, t) in &stream.timeouts_set {
        assert_ne!(t, Some(Duration::ZERO), "zero read timeout set in {script:?}");
        // every request before took exactly 24 bytes, so a partial header is a remainder
        if at % HEADER_LEN != 0 {
            if let Some(h) = timeouts.header {
                assert!(t.is_some_and(|t| t <= h), "wait of {t:?} inside a header (header timeout {h:?})");
            }
        }
    }
}

/// Timeouts used where the script, not the clock, decides when a wait expires: long
/// enough that no real time passes them while a test runs.
pub const SCRIPT_TIMEOUTS: ReadTimeouts =
    ReadTimeouts { idle: Some(Duration::from_secs(600)), header: Some(Duration::from_secs(60)) };

/// The fuzz target's input format: a control byte, then the bytes the peer sends.
/// Control bits 0-4: the largest piece a read returns, minus 1 (pieces vary 1..=that);
/// bit 5: an EINTR before every piece; bits 6-7: how the stream ends (0, 3 EOF; 1 a
/// stall past the read timeout; 2 a reset). Every byte string is a valid input.
pub fn script_from_fuzz_bytes(data: &[u8]) -> Vec<Event> {
    let Some((&ctrl, body)) = data.split_first() else { return Vec::new() };
    let max_piece = usize::from(ctrl & 0x1f) + 1;
    let mut script = Vec::new();
    let mut rest = body;
    let mut i = 0usize;
    while !rest.is_empty() {
        if ctrl & 0x20 != 0 {
            script.push(Event::Interrupted);
        }
        let len = (1 + (i * 7 + usize::from(ctrl)) % max_piece).min(rest.len());
        script.push(Event::Bytes(rest[..len].to_vec()));
        rest = &rest[len..];
        i += 1;
    }
    match ctrl >> 6 {
        1 => script.push(Event::Stall),
        2 => script.push(Event::Reset),
        _ => {}
    }
    script
}
