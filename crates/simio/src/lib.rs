//! Writes a simulated run's records ([`incast_sim::trace::Records`]) to standard formats,
//! so ordinary tools read them (docs/capture.md):
//!
//! - [`pcap`]: the mirror-port capture of the client's switch port as a pcap file with
//!   nanosecond timestamps and real Ethernet/IPv4/TCP headers (valid checksums, SACK
//!   options), which Wireshark and tshark open and analyse;
//! - [`trace_csv`]: the per-flow sender trace as CSV;
//! - [`events_csv`]: the per-event trace in the ns-3 peer's format.
//!
//! The simulator core stays free of I/O; this crate only translates and writes.

pub mod address;
pub mod atomic;
pub mod events_csv;
pub mod frame;
pub mod pcap;
pub mod run;
pub mod trace_csv;
pub mod wire;

pub use atomic::write_atomically;
pub use events_csv::write_events_csv;
pub use pcap::{write_pcap, PcapOptions, PcapSummary};
pub use run::{simulate_to_files, FileRequest, Written};
pub use trace_csv::write_trace_csv;
