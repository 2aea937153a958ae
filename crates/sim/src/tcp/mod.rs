//! TCP endpoints: the data sender (one per server) and receiver (at the client).
//!
//! Each behaviour lives in its own file: `rto` (RFC 6298), `timer` (lazy timers),
//! `sender` (RFC 5681 sending, slow start, congestion avoidance, RTO expiry),
//! `newreno` (RFC 6582 fast retransmit / fast recovery), `receiver` (cumulative ACKs,
//! out-of-order data, delayed ACK per RFC 1122 §4.2.3.2 / RFC 5681 §4.2).

pub mod ictcp;
pub mod newreno;
pub mod ns2_rules;
pub mod ns3_recovery;
pub mod reno;
pub mod sack;
pub mod receiver;
pub mod rto;
pub mod sender;
pub mod timer;

pub use receiver::{ReceiverConfig, TcpReceiver};
pub use sender::{Segment, SenderConfig, TcpSender};
