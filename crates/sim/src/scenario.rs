//! The scenario: what to simulate, as plain numbers in base units (bytes, bits/s,
//! picoseconds), and its validation. Parsing of human units happens at the edge (Python).
//!
//! Defaults are FAST'08 Table 1 (`000_315d806dde942a9f.txt` §3.1): 1 Gbps links, RTT
//! 100 us, SRU 256 KB, NewReno, dupack threshold 3, slow start on, RTOmin 200 ms, with a
//! 32 KiB output buffer (the paper varies it; 32 KB is the buffer of its Fig. 4 runs).

use serde::{Deserialize, Serialize};

use crate::event::TieBreak;
use crate::net::Admission;
use crate::time::{Time, PS_PER_MS, PS_PER_S, PS_PER_US};

/// TCP loss-recovery variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// Reno (RFC 5681 §3.2): any new ACK ends fast recovery.
    Reno,
    /// RFC 6582 NewReno (FAST'08 Table 1 default).
    #[default]
    Newreno,
    /// SACK-based loss recovery (RFC 2018 blocks, RFC 6675 scoreboard).
    Sack,
}

/// When a retransmission timer's exponential backoff (RFC 6298 §5.5) ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RtoBackoff {
    /// At the next RTT sample, which Karn's rule takes only from a segment that was never
    /// retransmitted (RFC 6298 §3, §5.7; ns-2's `t_backoff_`, reset in `newack` when the
    /// timed segment is acknowledged): after a timeout the backed-off RTO stays until
    /// fresh data is acknowledged.
    #[default]
    Sample,
    /// At every ACK of new data: the RTO is recomputed from SRTT and RTTVAR (ns-3's
    /// `TcpSocketBase::NewAck`), so one ACK after a timeout ends the backoff.
    NewAck,
}

/// Whose rules TCP follows where implementations differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TcpRules {
    /// The RFCs as written (RFC 5681, 6582, 6298), as ns-2 implements them: NewReno
    /// inflates cwnd by duplicate ACKs and deflates it by partial ACKs, ssthresh halves
    /// FlightSize, every ACK of new data grows cwnd.
    #[default]
    Rfc,
    /// ns-2.35's `Agent/TCP` family with its defaults (`tcp::ns2_rules`): the
    /// retransmission timer keeps running on an idle connection and its expiry cuts cwnd to
    /// one segment; fast retransmit needs an ACK one packet beyond `recover`; ssthresh
    /// halves the window in whole segments. The simulator FAST'08 and Osada et al. ran.
    Ns2,
    /// ns-3.44's `TcpSocketBase` for NewReno without SACK (`tcp::ns3_recovery`): recovery
    /// by RFC 6675's pipe on SACKs emulated from duplicate ACKs, ssthresh from that pipe,
    /// no timer restart at fast retransmit, cwnd grown per whole segment acknowledged.
    /// For comparison with the ns-3 peer.
    Ns3,
}

/// How the client schedules its connections (Osada et al., `004_f48ce568b38e0ea9.txt` §4;
/// the numbers come from the paper's model, `incastlab.model.serialization`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "scheme", rename_all = "lowercase", deny_unknown_fields)]
pub enum Mitigation {
    /// All servers answer at once (NTCP; TCPFG is this with a small RTOmin).
    #[default]
    None,
    /// Receiver-side window control (Wu et al., CoNEXT 2010; `tcp::ictcp`).
    Ictcp,
    /// Complete connection serialization: one connection at a time (§4.2).
    Ccs,
    /// Nearly complete serialization (§4.3): open the next connection when the newest
    /// one has `start_next_at_remaining` bytes left (S - T1 V), at most `k` open. "Left"
    /// counts what the server has not yet sent when `count_sent` (the paper: "the number
    /// of bits which has been already sent"), else what has not reached the client. With
    /// `check_at_open` the threshold is also checked as a connection opens, so when the
    /// whole part is below it the next one opens at once.
    Nccs {
        k: u32,
        start_next_at_remaining: u64,
        #[serde(default)]
        count_sent: bool,
        #[serde(default)]
        check_at_open: bool,
    },
    /// Optimized serialization (§4.4): sets of `set_size` connections, all handshakes up
    /// front with zero windows (Fig. 8), `window_bytes` each; the next set gets its window
    /// when the current set has `start_next_at_remaining` bytes left; when fewer than
    /// `set_size` connections remain, their windows grow to share `bdp_bytes`. "Left"
    /// counts and `check_at_open` works as for NCCS (the paper: "transmit data of S - nT1 x V/n").
    Ocs {
        set_size: u32,
        window_bytes: u64,
        start_next_at_remaining: u64,
        bdp_bytes: u64,
        #[serde(default)]
        count_sent: bool,
        #[serde(default)]
        check_at_open: bool,
    },
}

/// A scenario as given by a user, before validation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScenarioSpec {
    pub servers: u32,
    pub sru_bytes: u64,
    pub block_bytes: Option<u64>,
    pub buffer_bytes: u64,
    /// The switch buffer's limit in packets (ns-2's `qlim_`; Osada et al. give theirs in
    /// packets). Set, it implies the `packets` admission.
    pub buffer_packets: Option<u32>,
    /// How a switch port decides whether a packet fits (`net::port::Admission`); unset:
    /// `packets` if `buffer_packets` is set, else `bytes`.
    pub buffer_admission: Option<Admission>,
    pub rate_bps: u64,
    pub link_delay_ps: u64,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub tcp: TcpVariant,
    pub rto_min_ps: u64,
    pub rto_max_ps: u64,
    pub timer_granularity_ps: u64,
    pub timer_ticks: bool,
    pub timestamps: bool,
    pub rto_random: f64,
    /// When the RTO's exponential backoff ends (ns-2's rule, `sample`, or ns-3's).
    pub rto_backoff: RtoBackoff,
    /// Whose rules NewReno follows where implementations differ (the RFCs, or ns-3's).
    pub tcp_rules: TcpRules,
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
    pub slow_start: bool,
    pub slow_start_after_idle: bool,
    pub delayed_ack_ps: u64,
    pub init_cwnd_segments: u32,
    pub rwnd_bytes: u64,
    pub response_jitter_ps: u64,
    pub send_jitter_ps: u64,
    pub duration_ps: Option<u64>,
    pub blocks: Option<u64>,
    pub seed: u64,
    /// How events at exactly the same instant are ordered (`event.rs`, "Tie rule").
    pub tie_break: TieBreak,
    /// Of the `servers` (N_s), this many (N_a) chosen at random answer each block
    /// (Osada et al. §5.1); None = all.
    pub active_servers: Option<u32>,
    /// Open a new connection (SYN, SYN-ACK, request) for every block instead of reusing
    /// persistent ones (Osada et al.'s missions; FAST'08's connections persist).
    pub handshake: bool,
    /// SYN retransmission timeout (the classic 3 s, RFC 6298 §5.7 / RFC 1122).
    pub syn_timeout_ps: u64,
    pub mitigation: Mitigation,
    /// UDP constant-bit-rate background: this fraction of the link rate in total, split
    /// evenly over all `servers` (Osada et al. §5.1: x = 0.1 % is 0.001).
    pub udp_fraction: f64,
    pub udp_packet_bytes: u32,
}

impl Default for ScenarioSpec {
    fn default() -> Self {
        ScenarioSpec {
            servers: 1,
            sru_bytes: 256 * 1024,
            block_bytes: None,
            buffer_bytes: 32 * 1024,
            buffer_packets: None,
            buffer_admission: None,
            rate_bps: 1_000_000_000,
            link_delay_ps: 25 * PS_PER_US, // 4 links per round trip: RTT 100 us
            mss_bytes: 1460,
            header_bytes: 40,
            tcp: TcpVariant::Newreno,
            rto_min_ps: 200 * PS_PER_MS,
            rto_max_ps: 60 * PS_PER_S, // RFC 6298 §2.5: a maximum of at least 60 s
            timer_granularity_ps: PS_PER_US,
            // timers fire at their exact deadline (a high-resolution timer)
            timer_ticks: false,
            // RFC 7323 timestamps off: RFC 6298 with Karn's rule, as ns-2's Agent/TCP
            timestamps: false,
            // RTO x (1 + U(0, x)); 001_e0dada207805edc8.txt uses 0.5; off by default
            rto_random: 0.0,
            // ns-2's rule, which FAST'08's and Osada et al.'s simulations ran
            rto_backoff: RtoBackoff::Sample,
            tcp_rules: TcpRules::Rfc,
            dupack_threshold: 3,
            // RFC 3042, which RFC 5681 §3.2 says a sender SHOULD use; ns-2 (since 2001), ns-3
            // and Linux have it on. FAST'08 Table 1 says disabled, but its runs most likely
            // had it (docs/model.md, "The ns-2 reading of FAST'08")
            limited_transmit: true,
            slow_start: true,
            // RFC 5681 §4.1 restart after idle: off as in ns-2 (Linux has it on by default)
            slow_start_after_idle: false,
            delayed_ack_ps: 0,
            init_cwnd_segments: 2,
            // ns-2 Agent/TCP window_ = 20 packets: the per-flow cap FAST'08's ns-2 runs most
            // likely had (docs/defaults.md); its Fig. 6 figure of ~65 % at 64 servers with a
            // 1024 KB buffer is reproduced with it. `rwnd_bytes` lifts it.
            rwnd_bytes: 20 * 1460,
            response_jitter_ps: 0,
            send_jitter_ps: 0,
            duration_ps: Some(20 * PS_PER_S), // FAST'08 §3.1: each run is 20 s of simulated time
            blocks: None,
            seed: 1,
            tie_break: TieBreak::Fifo,
            active_servers: None,
            handshake: false,
            syn_timeout_ps: 3 * PS_PER_S,
            mitigation: Mitigation::None,
            udp_fraction: 0.0,
            udp_packet_bytes: 1500,
        }
    }
}

/// A scenario the core refuses: names the parameter, its value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub param: &'static str,
    pub value: String,
    pub allowed: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} is not allowed; expected {}", self.param, self.value, self.allowed)
    }
}

impl std::error::Error for ScenarioError {}

fn check(ok: bool, param: &'static str, value: impl ToString, allowed: &str) -> Result<(), ScenarioError> {
    if ok {
        Ok(())
    } else {
        Err(ScenarioError { param, value: value.to_string(), allowed: allowed.to_string() })
    }
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// Stop when simulated time reaches this instant.
    Time(Time),
    /// Stop when this many blocks have completed.
    Blocks(u64),
}

/// A validated scenario: every field is in range and derived values are computed once.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub spec: ScenarioSpec,
    /// How switch ports admit packets (resolved from `buffer_admission`/`buffer_packets`).
    pub admission: Admission,
    /// The packet limit under [`Admission::Packets`]: `buffer_packets`, or as many full
    /// packets as `buffer_bytes` holds.
    pub buffer_packets: u32,
    /// Bytes each server returns for one block, index = server.
    pub per_server_bytes: Vec<u64>,
    pub stop: StopAt,
}

/// Largest supported fan-in; bounded so memory stays predictable.
pub const MAX_SERVERS: u32 = 1 << 20;

impl ScenarioSpec {
    /// Check every field; on success return the scenario the simulator runs.
    pub fn validate(&self) -> Result<Scenario, ScenarioError> {
        let s = self;
        check(s.servers >= 1 && s.servers <= MAX_SERVERS, "servers", s.servers, "a whole number from 1 to 1048576")?;
        check(s.mss_bytes >= 64 && s.mss_bytes <= 65_495, "mss_bytes", s.mss_bytes, "64 to 65495 bytes")?;
        check(s.header_bytes <= 120, "header_bytes", s.header_bytes, "0 to 120 bytes")?;
        let mtu = (s.mss_bytes + s.header_bytes) as u64;
        check(s.buffer_bytes >= mtu, "buffer_bytes", s.buffer_bytes, &format!("at least one full packet ({mtu} bytes)"))?;
        if let Some(p) = s.buffer_packets {
            check(p >= 1, "buffer_packets", p, "at least 1 packet")?;
            check(
                s.buffer_admission.is_none_or(|a| a == Admission::Packets),
                "buffer_admission",
                format!("{:?}", s.buffer_admission.unwrap_or_default()).to_lowercase(),
                "packets (or unset) when buffer_packets is set",
            )?;
        }
        let admission = s.buffer_admission.unwrap_or(if s.buffer_packets.is_some() { Admission::Packets } else { Admission::Bytes });
        let buffer_packets = s.buffer_packets.unwrap_or((s.buffer_bytes / mtu).min(u32::MAX as u64) as u32);
        if let Some(a) = s.active_servers {
            check(a >= 1 && a <= s.servers, "active_servers", a, &format!("1 to servers ({})", s.servers))?;
        }
        check(s.syn_timeout_ps >= 1, "syn_timeout_ps", s.syn_timeout_ps, "above zero")?;
        check((0.0..=0.5).contains(&s.udp_fraction), "udp_fraction", s.udp_fraction, "a fraction from 0 to 0.5 of the link rate")?;
        check(
            s.udp_packet_bytes >= 28 && s.udp_packet_bytes as u64 <= mtu.max(1500),
            "udp_packet_bytes",
            s.udp_packet_bytes,
            "28 bytes to the MTU",
        )?;
        match &s.mitigation {
            Mitigation::Nccs { k, .. } => check(*k >= 1, "mitigation.k", k, "at least 1 connection")?,
            Mitigation::Ocs { set_size, window_bytes, .. } => {
                check(*set_size >= 1, "mitigation.set_size", set_size, "at least 1 connection")?;
                check(*window_bytes >= s.mss_bytes as u64, "mitigation.window_bytes", window_bytes, "at least one MSS")?;
            }
            _ => {}
        }
        check(s.rate_bps >= 1_000 && s.rate_bps <= 10_000_000_000_000, "rate_bps", s.rate_bps, "1 kbps to 10 Tbps")?;
        check(s.link_delay_ps <= PS_PER_S, "link_delay_ps", s.link_delay_ps, "at most 1 s")?;
        check(s.rto_min_ps >= 1, "rto_min_ps", s.rto_min_ps, "above zero")?;
        check(
            s.tcp_rules != TcpRules::Ns3 || s.tcp == TcpVariant::Newreno,
            "tcp_rules",
            "ns3",
            "rfc or ns2 unless tcp is newreno (ns-3's rules are modelled for NewReno without SACK)",
        )?;
        check(s.rto_max_ps >= s.rto_min_ps, "rto_max_ps", s.rto_max_ps, "at least rto_min")?;
        check(s.timer_granularity_ps >= 1, "timer_granularity_ps", s.timer_granularity_ps, "above zero")?;
        check((0.0..=10.0).contains(&s.rto_random), "rto_random", s.rto_random, "a fraction from 0 (off) to 10")?;
        check(s.dupack_threshold >= 1 && s.dupack_threshold <= 1000, "dupack_threshold", s.dupack_threshold, "1 to 1000")?;
        check(s.init_cwnd_segments >= 1 && s.init_cwnd_segments <= 1000, "init_cwnd_segments", s.init_cwnd_segments, "1 to 1000")?;
        check(s.rwnd_bytes >= s.mss_bytes as u64, "rwnd_bytes", s.rwnd_bytes, "at least one MSS")?;
        check(s.delayed_ack_ps <= 500 * PS_PER_MS, "delayed_ack_ps", s.delayed_ack_ps, "0 (off) to 500 ms (RFC 1122 4.2.3.2)")?;
        check(s.response_jitter_ps <= PS_PER_S, "response_jitter_ps", s.response_jitter_ps, "0 to 1 s")?;
        check(s.send_jitter_ps <= PS_PER_S, "send_jitter_ps", s.send_jitter_ps, "0 to 1 s")?;
        let stop = match (s.blocks, s.duration_ps) {
            (Some(b), _) => {
                check(b >= 1, "blocks", b, "at least 1")?;
                StopAt::Blocks(b)
            }
            (None, Some(d)) => {
                check(d >= 1, "duration_ps", d, "above zero")?;
                StopAt::Time(Time(d))
            }
            (None, None) => return Err(ScenarioError { param: "duration_ps", value: "none".into(), allowed: "a duration or a block count".into() }),
        };
        let n = s.servers as u64;
        let per_server_bytes = match s.block_bytes {
            Some(block) => {
                check(block >= n, "block_bytes", block, &format!("at least one byte per server ({n})"))?;
                // Fixed-block mode (001_e0dada207805edc8.txt: "each of N servers respond with
                // 1 MB / N bytes"): the remainder goes to the first servers so the block is exact.
                let (q, r) = (block / n, block % n);
                (0..n).map(|i| q + u64::from(i < r)).collect()
            }
            None => {
                check(s.sru_bytes >= 1, "sru_bytes", s.sru_bytes, "at least 1 byte")?;
                vec![s.sru_bytes; s.servers as usize]
            }
        };
        Ok(Scenario { spec: s.clone(), admission, buffer_packets, per_server_bytes, stop })
    }
}
