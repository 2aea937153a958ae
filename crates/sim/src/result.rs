//! What a run returns: flat, serializable, one object per simulated point.

use serde::Serialize;

/// The outcome of one simulation. Field names are the `--json` schema of
/// `incastlab simulate`; times are seconds, rates Mbps, sizes bytes.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SimResult {
    pub servers: u32,
    pub sru_bytes: u64,
    pub block_bytes: u64,
    pub buffer_bytes: u64,
    pub rate_bps: u64,
    pub rtt_s: f64,
    pub tcp: String,
    pub rto_min_s: f64,
    pub seed: u64,
    /// Application payload delivered to the client, in Mbit per simulated second.
    pub goodput_mbps: f64,
    pub blocks: u64,
    pub block_time_p50_s: f64,
    pub block_time_p99_s: f64,
    pub block_time_max_s: f64,
    /// Retransmission timeouts that fired, all flows.
    pub timeouts: u64,
    /// Data segments sent again (fast retransmit, partial ACK, or after a timeout).
    pub retransmits: u64,
    /// Packets dropped at any switch port.
    pub drops: u64,
    /// Largest occupancy seen at the client's port, in bytes.
    pub max_queue_bytes: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    pub events: u64,
    /// Packets that crossed one link (one per hop).
    pub packet_hops: u64,
    /// Invariant counters: sent = delivered + dropped + in flight (payload bytes, with
    /// every retransmission counted as sent again).
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub bytes_dropped: u64,
    pub bytes_in_flight: u64,
    /// Payload bytes handed to the client application (each byte exactly once).
    pub app_bytes: u64,
}
