//! Wire format: a fixed 24-byte request header and a fixed 24-byte response header.
//!
//! Request (client -> server), all integers big-endian:
//!
//! | bytes | field   | meaning |
//! |-------|---------|---------|
//! | 0..4  | magic   | `ILTQ` |
//! | 4     | version | [`VERSION`] |
//! | 5     | kind    | 0 = data (send `size` bytes), 1 = stats (send this connection's TCP_INFO counters) |
//! | 6..8  | reserved| 0 |
//! | 8..16 | size    | bytes of payload wanted (the SRU, `000_315d806dde942a9f.txt` §3.1) |
//! | 16..24| block   | block id, echoed back |
//!
//! Response (server -> client): magic `ILTA`, version, status (0 = data, 1 = stats,
//! 2 = error), reserved, `length` (bytes that follow), block id. A data response is
//! followed by exactly `length` payload bytes; a stats response by a JSON object; an
//! error response by a UTF-8 message, after which the server closes the connection.
//! Goodput counts payload bytes only; the 24-byte headers are 0.01 % of a 256 KiB SRU.

use std::fmt;

/// Size of both headers in bytes.
pub const HEADER_LEN: usize = 24;
/// Protocol version carried in every header.
pub const VERSION: u8 = 1;
/// Magic of a request header.
pub const REQUEST_MAGIC: [u8; 4] = *b"ILTQ";
/// Magic of a response header.
pub const RESPONSE_MAGIC: [u8; 4] = *b"ILTA";

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// `size` bytes of payload.
    Data,
    /// The server's TCP_INFO counters for this connection (the sender's view of
    /// retransmissions and timeouts), as JSON.
    Stats,
}

/// A decoded request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub kind: RequestKind,
    pub size: u64,
    pub block: u64,
}

/// What a response carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Data,
    Stats,
    Error,
}

/// A decoded response header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseHeader {
    pub status: Status,
    pub length: u64,
    pub block: u64,
}

/// Why a header could not be decoded. The messages are sent to the peer verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    BadMagic([u8; 4]),
    BadVersion(u8),
    BadKind(u8),
    BadReserved(u16),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadMagic(m) => write!(f, "bad magic {:02x?}: not an incastlab peer (expected {:?} / {:?})",
                m, String::from_utf8_lossy(&REQUEST_MAGIC), String::from_utf8_lossy(&RESPONSE_MAGIC)),
            DecodeError::BadVersion(v) => write!(f, "protocol version {v} is not supported (this side speaks {VERSION})"),
            DecodeError::BadKind(k) => write!(f, "kind/status {k} is not known"),
            DecodeError::BadReserved(r) => write!(f, "reserved field is {r}, must be 0"),
        }
    }
}

impl std::error::Error for DecodeError {}

fn put_header(magic: [u8; 4], code: u8, a: u64, b: u64) -> [u8; HEADER_LEN] {
    let mut out = [0u8; HEADER_LEN];
    out[0..4].copy_from_slice(&magic);
    out[4] = VERSION;
    out[5] = code;
    out[8..16].copy_from_slice(&a.to_be_bytes());
    out[16..24].copy_from_slice(&b.to_be_bytes());
    out
}

fn check_header(buf: &[u8; HEADER_LEN], magic: [u8; 4]) -> Result<(u8, u64, u64), DecodeError> {
    let found: [u8; 4] = buf[0..4].try_into().unwrap();
    if found != magic {
        return Err(DecodeError::BadMagic(found));
    }
    if buf[4] != VERSION {
        return Err(DecodeError::BadVersion(buf[4]));
    }
    let reserved = u16::from_be_bytes([buf[6], buf[7]]);
    if reserved != 0 {
        return Err(DecodeError::BadReserved(reserved));
    }
    let a = u64::from_be_bytes(buf[8..16].try_into().unwrap());
    let b = u64::from_be_bytes(buf[16..24].try_into().unwrap());
    Ok((buf[5], a, b))
}

impl Request {
    /// A request for `size` payload bytes of block `block`.
    pub fn data(size: u64, block: u64) -> Self {
        Request { kind: RequestKind::Data, size, block }
    }

    /// A request for the server's counters of this connection.
    pub fn stats() -> Self {
        Request { kind: RequestKind::Stats, size: 0, block: 0 }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let code = match self.kind {
            RequestKind::Data => 0,
            RequestKind::Stats => 1,
        };
        put_header(REQUEST_MAGIC, code, self.size, self.block)
    }

    pub fn decode(buf: &[u8; HEADER_LEN]) -> Result<Self, DecodeError> {
        let (code, size, block) = check_header(buf, REQUEST_MAGIC)?;
        let kind = match code {
            0 => RequestKind::Data,
            1 => RequestKind::Stats,
            k => return Err(DecodeError::BadKind(k)),
        };
        Ok(Request { kind, size, block })
    }
}

impl ResponseHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let code = match self.status {
            Status::Data => 0,
            Status::Stats => 1,
            Status::Error => 2,
        };
        put_header(RESPONSE_MAGIC, code, self.length, self.block)
    }

    pub fn decode(buf: &[u8; HEADER_LEN]) -> Result<Self, DecodeError> {
        let (code, length, block) = check_header(buf, RESPONSE_MAGIC)?;
        let status = match code {
            0 => Status::Data,
            1 => Status::Stats,
            2 => Status::Error,
            k => return Err(DecodeError::BadKind(k)),
        };
        Ok(ResponseHeader { status, length, block })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_request_round_trips() {
        let r = Request::data(256 * 1024, 7);
        assert_eq!(Request::decode(&r.encode()), Ok(r));
    }

    #[test]
    fn stats_request_round_trips() {
        let r = Request::stats();
        assert_eq!(Request::decode(&r.encode()), Ok(r));
    }

    #[test]
    fn request_layout_is_big_endian_at_fixed_offsets() {
        let b = Request::data(0x0102_0304_0506_0708, 9).encode();
        assert_eq!(&b[0..4], b"ILTQ");
        assert_eq!(b[4], VERSION);
        assert_eq!(b[5], 0);
        assert_eq!(&b[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b[23], 9);
    }

    #[test]
    fn response_round_trips_every_status() {
        for status in [Status::Data, Status::Stats, Status::Error] {
            let h = ResponseHeader { status, length: 12345, block: u64::MAX };
            assert_eq!(ResponseHeader::decode(&h.encode()), Ok(h));
        }
    }

    #[test]
    fn request_with_wrong_magic_is_refused() {
        let mut b = Request::data(1, 1).encode();
        b[0..4].copy_from_slice(b"GET ");
        assert_eq!(Request::decode(&b), Err(DecodeError::BadMagic(*b"GET ")));
    }

    #[test]
    fn response_magic_is_not_a_request() {
        let h = ResponseHeader { status: Status::Data, length: 1, block: 1 }.encode();
        assert!(matches!(Request::decode(&h), Err(DecodeError::BadMagic(_))));
    }

    #[test]
    fn unknown_version_kind_and_reserved_are_refused() {
        let good = Request::data(1, 1).encode();
        let mut b = good;
        b[4] = 99;
        assert_eq!(Request::decode(&b), Err(DecodeError::BadVersion(99)));
        let mut b = good;
        b[5] = 7;
        assert_eq!(Request::decode(&b), Err(DecodeError::BadKind(7)));
        let mut b = good;
        b[7] = 1;
        assert_eq!(Request::decode(&b), Err(DecodeError::BadReserved(1)));
    }

    #[test]
    fn error_messages_name_the_problem() {
        let msg = DecodeError::BadMagic(*b"GET ").to_string();
        assert!(msg.contains("bad magic"), "{msg}");
        assert!(DecodeError::BadVersion(3).to_string().contains("version 3"));
    }
}
