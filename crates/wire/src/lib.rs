//! The real-TCP data path of the incastlab testbed.
//!
//! It runs the synchronized-read workload of FAST'08 (`000_315d806dde942a9f.txt` §3.1,
//! §3.2): a client asks N servers for one server request unit (SRU) each, waits for every
//! byte of the block, records the block's completion time and asks for the next block.
//! The same code runs between network namespaces on one machine (the testbed) and between
//! real hosts (`incastlab serve` / `incastlab read`).
//!
//! Parts, each with one job:
//! - [`protocol`]: the tiny request/response headers on the wire;
//! - [`request_reader`]: the server's parser, one request from a stream read in any pieces;
//! - [`sockopt`]: the Linux socket options the knobs map to (TCP_QUICKACK, TCP_CONGESTION,
//!   SO_RCVBUF, TCP_WINDOW_CLAMP) and TCP_INFO;
//! - [`netns`]: create a socket inside a named network namespace;
//! - [`server`]: answers requests, refuses bad ones, survives bad peers;
//! - [`client`]: the synchronized reader with its application-level mitigations;
//! - [`summary`]: percentiles of block times.

pub mod client;
pub mod netns;
pub mod protocol;
pub mod request_reader;
pub mod server;
pub mod sockopt;
pub mod summary;

pub use client::{read_blocks, ClientConfig, ClientResult};
pub use server::{Server, ServerConfig, ServerStats};

/// The crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
