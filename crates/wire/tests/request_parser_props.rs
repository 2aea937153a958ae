//! Property tests of the server's request parser (`request_reader::read_request` over
//! `Request::decode`): any byte sequence, cut into reads at any points, with EINTR,
//! stalls and resets in between, ends as the oracle in support/stream_script.rs says (a
//! request, or a clean protocol error), without a panic, a busy loop or an allocation
//! that a size field could inflate; valid requests round-trip exactly.
//!
//! Each property runs [`CASES`] cases (PROPTEST_CASES overrides): 4096 in release, 1024
//! in the debug profile, whose job here is overflow checks (proptest is ~6x slower there).

mod support;

use incast_wire::protocol::{Request, RequestKind, ResponseHeader, Status, HEADER_LEN, REQUEST_MAGIC, VERSION};
use incast_wire::request_reader::{read_request, ReadTimeouts};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use support::stream_script::{check, parse_all, Event, Outcome, ScriptedStream, SCRIPT_TIMEOUTS};

/// Counts the bytes this thread allocates, to bound what one parse may allocate.
struct CountingAlloc;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size()));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + new_size));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocated() -> usize {
    ALLOCATED.with(|a| a.get())
}

const CASES: u32 = if cfg!(debug_assertions) { 1024 } else { 4096 };

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CASES)
}

// ---- strategies ----

/// Sizes and block ids at the edges a parser gets wrong: zero, one, the server's
/// default maximum and one past it, the sign bit, the top of u64, and anything.
fn edge_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(64 << 20),
        Just((64 << 20) + 1),
        Just(1 << 63),
        Just(u64::MAX - 1),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    (prop_oneof![Just(RequestKind::Data), Just(RequestKind::Stats)], edge_u64(), edge_u64())
        .prop_map(|(kind, size, block)| Request { kind, size, block })
}

/// One piece of what a peer sends: a valid header, a valid header with one field
/// broken, a header cut short (which misaligns everything after it), or garbage.
#[derive(Clone, Debug)]
enum Frame {
    Valid(Request),
    BadMagic(Request, usize, u8),
    BadVersion(Request, u8),
    BadKind(Request, u8),
    BadReserved(Request, u16),
    Cut(Request, usize),
    Garbage(Vec<u8>),
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        4 => request().prop_map(Frame::Valid),
        1 => (request(), 0..4usize, any::<u8>()).prop_map(|(r, i, b)| Frame::BadMagic(r, i, b)),
        1 => (request(), any::<u8>()).prop_map(|(r, v)| Frame::BadVersion(r, v)),
        1 => (request(), 2..=255u8).prop_map(|(r, k)| Frame::BadKind(r, k)),
        1 => (request(), 1..=u16::MAX).prop_map(|(r, v)| Frame::BadReserved(r, v)),
        1 => (request(), 0..HEADER_LEN).prop_map(|(r, n)| Frame::Cut(r, n)),
        1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Frame::Garbage),
    ]
}

impl Frame {
    fn bytes(&self) -> Vec<u8> {
        let h = |r: &Request, f: &dyn Fn(&mut [u8; HEADER_LEN])| {
            let mut b = r.encode();
            f(&mut b);
            b.to_vec()
        };
        match self {
            Frame::Valid(r) => r.encode().to_vec(),
            Frame::BadMagic(r, i, x) => h(r, &|b| b[*i] = *x),
            Frame::BadVersion(r, v) => h(r, &|b| b[4] = *v),
            Frame::BadKind(r, k) => h(r, &|b| b[5] = *k),
            Frame::BadReserved(r, v) => h(r, &|b| b[6..8].copy_from_slice(&v.to_be_bytes())),
            Frame::Cut(r, n) => r.encode()[..*n].to_vec(),
            Frame::Garbage(g) => g.clone(),
        }
    }
}

/// How a stream of bytes reaches the reader: pieces of the given sizes (cycled), each
/// perhaps after an EINTR, then EOF, a stall or a reset.
fn deliver(bytes: &[u8], pieces: &[usize], eintr: &[bool], end: Option<Event>) -> Vec<Event> {
    let mut script = Vec::new();
    let mut rest = bytes;
    let mut i = 0;
    while !rest.is_empty() {
        if eintr[i % eintr.len()] {
            script.push(Event::Interrupted);
        }
        let n = pieces[i % pieces.len()].min(rest.len());
        script.push(Event::Bytes(rest[..n].to_vec()));
        rest = &rest[n..];
        i += 1;
    }
    script.extend(end);
    script
}

fn ending() -> impl Strategy<Value = Option<Event>> {
    prop_oneof![3 => Just(None), 1 => Just(Some(Event::Stall)), 1 => Just(Some(Event::Reset))]
}

fn pieces() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![1..=3usize, 1..=HEADER_LEN, 1..=200usize], 1..16)
}

fn eintr() -> impl Strategy<Value = Vec<bool>> {
    prop::collection::vec(prop::bool::weighted(0.1), 1..8)
}

fn timeouts() -> impl Strategy<Value = ReadTimeouts> {
    let t = prop_oneof![Just(None), (1u64..600_000).prop_map(|ms| Some(Duration::from_millis(ms)))];
    (t.clone(), t).prop_map(|(idle, header)| ReadTimeouts { idle, header })
}

fn valid_only(frames: &[Frame]) -> Vec<Request> {
    frames.iter().filter_map(|f| if let Frame::Valid(r) = f { Some(*r) } else { None }).collect()
}

// ---- properties ----

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        // shrunk failures are kept beside this file, as request_parser_props.proptest-regressions
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    /// Random bytes, cut anywhere: the parser agrees with the oracle, makes progress on
    /// every read and never waits longer than the header timeout inside a header.
    #[test]
    fn random_bytes_cut_anywhere_end_as_the_oracle_says(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        pieces in pieces(), eintr in eintr(), end in ending(),
    ) {
        check(&deliver(&bytes, &pieces, &eintr, end), SCRIPT_TIMEOUTS);
    }

    /// Random bytes that start with a valid magic and version, so the decoder's later
    /// fields (kind, reserved) are reached, not only the magic check.
    #[test]
    fn bytes_behind_a_valid_prefix_end_as_the_oracle_says(
        tail in prop::collection::vec(any::<u8>(), 0..200),
        pieces in pieces(), eintr in eintr(), end in ending(),
    ) {
        let mut bytes = REQUEST_MAGIC.to_vec();
        bytes.push(VERSION);
        bytes.extend(tail);
        check(&deliver(&bytes, &pieces, &eintr, end), SCRIPT_TIMEOUTS);
    }

    /// Structure-aware: valid headers with mutated fields, cut headers, garbage, in any
    /// order and any cut, under any timeouts.
    #[test]
    fn mutated_header_streams_end_as_the_oracle_says(
        frames in prop::collection::vec(frame(), 0..8),
        pieces in pieces(), eintr in eintr(), end in ending(), t in timeouts(),
    ) {
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::bytes).collect();
        check(&deliver(&bytes, &pieces, &eintr, end), t);
    }

    /// Valid requests, pipelined and cut anywhere, come out exactly, in order, then EOF.
    #[test]
    fn pipelined_valid_requests_round_trip_exactly(
        reqs in prop::collection::vec(request(), 0..12), pieces in pieces(), eintr in eintr(),
    ) {
        let bytes: Vec<u8> = reqs.iter().flat_map(|r| r.encode()).collect();
        let (got, _) = parse_all(&deliver(&bytes, &pieces, &eintr, None), SCRIPT_TIMEOUTS);
        let mut want: Vec<Outcome> = reqs.iter().map(|r| Outcome::Request(*r)).collect();
        want.push(Outcome::Closed);
        prop_assert_eq!(got, want);
    }

    /// The first malformed or cut frame ends the connection; every valid frame before it
    /// was served (nothing after it is read as a request).
    #[test]
    fn requests_before_the_first_bad_frame_are_all_served(
        frames in prop::collection::vec(frame(), 1..8), pieces in pieces(),
    ) {
        let first_bad = frames.iter().position(|f| !matches!(f, Frame::Valid(_))).unwrap_or(frames.len());
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::bytes).collect();
        let (got, _) = parse_all(&deliver(&bytes, &pieces, &[false], None), SCRIPT_TIMEOUTS);
        let served: Vec<Request> =
            got.iter().filter_map(|o| if let Outcome::Request(r) = o { Some(*r) } else { None }).collect();
        prop_assert!(served.len() >= first_bad);
        prop_assert_eq!(&served[..first_bad], &valid_only(&frames[..first_bad])[..]);
    }

    /// Whatever the size and block fields say, one parse allocates at most the text of
    /// an I/O error (a failed read's message): never in proportion to a field.
    #[test]
    fn a_parse_allocates_nothing_a_size_field_could_inflate(
        frames in prop::collection::vec(frame(), 1..4), pieces in pieces(), end in ending(),
    ) {
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::bytes).collect();
        let mut stream = ScriptedStream::new(&deliver(&bytes, &pieces, &[false], end));
        let stop = AtomicBool::new(false);
        for _ in 0..frames.len() + 1 {
            let before = allocated();
            let incoming = read_request(&mut stream, SCRIPT_TIMEOUTS, &stop);
            let used = allocated() - before;
            // 512 B: an io::Error with a formatted "... after N header bytes" message.
            prop_assert!(used <= 512, "{used} bytes allocated for {incoming:?}");
            drop(incoming);
        }
    }

    /// encode -> decode is the identity on every request.
    #[test]
    fn every_request_round_trips(r in request()) {
        prop_assert_eq!(Request::decode(&r.encode()), Ok(r));
    }

    /// decode -> encode is the identity on every accepted header: one request, one
    /// encoding (no bytes the decoder ignores).
    #[test]
    fn every_accepted_header_is_the_encoding_of_its_request(bytes in prop::array::uniform24(any::<u8>())) {
        if let Ok(r) = Request::decode(&bytes) {
            prop_assert_eq!(r.encode(), bytes);
        }
        if let Ok(h) = ResponseHeader::decode(&bytes) {
            prop_assert_eq!(h.encode(), bytes);
        }
    }

    /// Same for accepted headers reached through a valid prefix (random 24 bytes pass
    /// the magic check once in 2^32).
    #[test]
    fn headers_with_valid_magic_decode_to_their_own_encoding(tail in prop::array::uniform19(any::<u8>())) {
        let mut bytes = [0u8; HEADER_LEN];
        bytes[..4].copy_from_slice(&REQUEST_MAGIC);
        bytes[4] = VERSION;
        bytes[5..].copy_from_slice(&tail);
        bytes[5] %= 3; // kinds 0, 1 and one unknown
        bytes[6] = 0;
        match Request::decode(&bytes) {
            Ok(r) => prop_assert_eq!(r.encode(), bytes),
            Err(e) => prop_assert!(bytes[5] == 2 || bytes[7] != 0, "{e}"),
        }
    }

    /// Every response header round-trips (the client's side of the same format).
    #[test]
    fn every_response_header_round_trips(
        status in prop_oneof![Just(Status::Data), Just(Status::Stats), Just(Status::Error)],
        length in edge_u64(), block in edge_u64(),
    ) {
        let h = ResponseHeader { status, length, block };
        prop_assert_eq!(ResponseHeader::decode(&h.encode()), Ok(h));
    }
}
