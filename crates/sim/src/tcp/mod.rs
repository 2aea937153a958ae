//! TCP endpoints: the data sender (one per server) and receiver (at the client).
//!
//! Each behaviour lives in its own file: `sender` (sequence space, RFC 5681 sending, the
//! RFC 6298 timer and its timeouts), `recovery` (loss recovery, one file per algorithm:
//! Reno, NewReno, SACK, ns-3's), `congestion` (congestion control: NewReno's AIMD), `rto`
//! (RFC 6298 estimator), `rtt_history` (ns-3's RTT samples), `timer` (lazy timers),
//! `ns2_rules` (ns-2's departures the sender takes), `receiver` (cumulative ACKs,
//! out-of-order data, delayed ACK per RFC 1122 §4.2.3.2 / RFC 5681 §4.2), `ictcp` (the
//! receiver-side window control of ICTCP).

pub mod congestion;
pub mod ictcp;
pub mod linux_rcv;
pub mod ns2_rules;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod rtt_history;
pub mod sender;
pub mod timer;

pub use receiver::{ReceiverConfig, TcpReceiver};
pub use sender::{Segment, SenderConfig, TcpSender};
