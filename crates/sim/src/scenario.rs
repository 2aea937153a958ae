//! The scenario: what to simulate, as plain numbers in base units (bytes, bits/s,
//! picoseconds), and its validation. Parsing of human units happens at the edge (Python).
//!
//! Defaults are FAST'08 Table 1 (`000_315d806dde942a9f.txt` §3.1): 1 Gbps links, RTT
//! 100 us, SRU 256 KB, NewReno, dupack threshold 3, slow start on, RTOmin 200 ms, with a
//! 32 KiB output buffer (the paper varies it; 32 KB is the buffer of its Fig. 4 runs).

use serde::{Deserialize, Serialize};

use crate::app::cdf::FlowSizeCdf;
use crate::app::flows::Placement;
use crate::app::riak::ReplySizeDist;
use crate::app::serialization_model::serialization_model;
use crate::event::TieBreak;
use crate::host::Transport;
use crate::net::balance::LoadBalancing;
use crate::net::trim::{DataLimit, TrimConfig};
use crate::net::buffer::BufferSharing;
use crate::net::topology::FatTree;
use crate::net::{Admission, ClassScheduler, TopologyKind};
use crate::preset::PresetName;
use crate::schema::{self, format_bytes, format_ps, format_rate};
use crate::tcp::congestion::Cc;
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

/// Where Swift's retransmission timer takes its RTT samples (`swift_rto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SwiftRto {
    /// Swift's own (SIGCOMM 2020 §3.6: the RTO is "computed using exponentially weighted
    /// moving average over the end-to-end RTT"): RFC 6298's estimator fed by the delay of
    /// every ACK of new data, measured from the send time the ACK echoes, the
    /// retransmission's own when it was a retransmission that arrived (the echo removes
    /// Karn's ambiguity, RFC 6298 §3); each sample ends the backoff. htsim's Swift does
    /// the same from every ACK (`swift.cpp`, `update_rtt`).
    #[default]
    Delay,
    /// TCP's: one timed segment per RTT and Karn's rule (no sample from a retransmitted
    /// segment, the backoff kept until one), unless `timestamps` is on.
    Tcp,
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
    /// ns-3.44's `TcpSocketBase` for NewReno without SACK (`tcp::recovery::ns3`): recovery
    /// by RFC 6675's pipe on SACKs emulated from duplicate ACKs, ssthresh from that pipe,
    /// no timer restart at fast retransmit, cwnd grown per whole segment acknowledged.
    /// For comparison with the ns-3 peer.
    Ns3,
}

/// How the client schedules its connections, as people name the schemes (Osada et al.,
/// `004_f48ce568b38e0ea9.txt` §4-5); validation resolves it into a [`Mitigation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// All servers answer at once (NTCP).
    #[default]
    Ntcp,
    /// All at once with a fine-grained RTO: RTOmin 200 us unless `rto_min_ps` is set (§5.1).
    Tcpfg,
    /// Receiver-side window control (Wu et al., CoNEXT 2010; `tcp::ictcp`).
    Ictcp,
    /// Complete connection serialization (§4.2).
    Ccs,
    /// Nearly complete serialization, at most `nccs_k` open (§4.3).
    Nccs,
    /// Optimized serialization (§4.4).
    Ocs,
}

/// What the hosts do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// FAST'08's synchronized reads (`app::sync_read`): clients read blocks from all servers.
    #[default]
    SyncRead,
    /// Fritchie's Riak gets (`app::riak`): the servers are a cluster's nodes, each
    /// coordinating gets that fan in from `replicas` others.
    Riak,
    /// One-shot flows (`app::flows`): `incasts` incasts at once, each of `servers` senders
    /// sending `sru_bytes` to one receiver, all starting together.
    Incast,
    /// One-shot flows among `servers` hosts: each sends `sru_bytes` to every other.
    Shuffle,
    /// One-shot flows among `servers` hosts: each sends `sru_bytes` to one other, every host
    /// receiving from one (a random derangement).
    Permutation,
}

impl Workload {
    /// One-shot flows (`app::flows`): the run ends when they are all delivered.
    pub fn is_flows(self) -> bool {
        matches!(self, Workload::Incast | Workload::Shuffle | Workload::Permutation)
    }
}

/// How a Riak cluster's nodes carry their messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RiakTransport {
    /// One persistent connection per ordered (replica -> coordinator) pair carrying the
    /// replies; requests travel its reverse direction (the model before issue 26).
    #[default]
    PerPair,
    /// Erlang distribution (`app::erlang_dist`): one TCP connection per pair of nodes carries
    /// every message between them, in order, both ways; a process sending to a connection
    /// whose queue is at `dist_buf_busy_limit_bytes` is suspended until it drains.
    ErlangDist,
}

/// How NCCS and OCS read condition-I, "S - T1 V bits sent" (§4.3-4.4; docs/model.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ConditionI {
    /// The bits the newest connection's server has sent, checked as it sends (the paper's words).
    #[default]
    Sent,
    /// The bits that reached the client, checked as they arrive (what a real client sees).
    Delivered,
    /// As `Sent`, and also checked as a connection opens.
    Open,
}

/// How the client schedules its connections, with the numbers Osada et al.'s model gives
/// (`app::serialization_model`), as validation resolves a [`Scheme`].
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
#[serde(tag = "scheme", rename_all = "lowercase")]
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
    Nccs { k: u32, start_next_at_remaining: u64, count_sent: bool, check_at_open: bool },
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
        count_sent: bool,
        check_at_open: bool,
    },
}

/// A scenario as given by a user, before validation. Every field, its unit, range and
/// meaning is in [`crate::schema::FIELDS`]; an unset optional field takes a default that
/// depends on others (the schema's `unset`), resolved by [`ScenarioSpec::validate`].
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScenarioSpec {
    /// The preset the fields not given came from (`crate::preset`; applied by
    /// [`ScenarioSpec::from_json`]); a label for what a result row ran.
    pub preset: PresetName,
    pub servers: u32,
    /// Clients each running their own synchronized reads from every server.
    pub clients: u32,
    pub workload: Workload,
    /// Riak: gets each node coordinates per second (a Poisson process).
    pub get_rate: f64,
    pub replicas: u32,
    pub read_quorum: u32,
    /// Riak: the replies' mean size.
    pub reply_bytes: u64,
    pub reply_size_dist: ReplySizeDist,
    /// Riak: how the nodes' messages travel (`app::erlang_dist`).
    pub riak_transport: RiakTransport,
    /// Riak over Erlang distribution: a connection's busy limit (`+zdbbl`).
    pub dist_buf_busy_limit_bytes: u64,
    pub sru_bytes: Option<u64>,
    pub block_bytes: Option<u64>,
    pub active_servers: Option<u32>,
    pub buffer_bytes: u64,
    pub buffer_packets: Option<u32>,
    pub buffer_admission: Option<Admission>,
    /// Static per-port buffers, or one pool per switch with dynamic thresholds (`net::buffer`).
    pub buffer_sharing: BufferSharing,
    pub buffer_pool_bytes: Option<u64>,
    pub dt_alpha: f64,
    /// QoS classes partitioning each switch port's buffer (`net::qos`); 1 = no QoS.
    pub qos_classes: u32,
    /// How a port's classes share its link (`net::qos`).
    pub qos_scheduler: ClassScheduler,
    /// Under `wrr`, one weight per class; unset: equal weights.
    pub qos_weights: Option<Vec<u32>>,
    /// A token-bucket shaper (Linux tbf, `net::shaper`) on the switch port towards each
    /// client, releasing at this rate; unset: none.
    pub shaper_rate_bps: Option<u64>,
    /// The shaper's bucket (tbf's `burst`); unset: one full packet.
    pub shaper_burst_bytes: Option<u64>,
    pub rate_bps: u64,
    /// Round-trip propagation; each of the star's four links (server -> switch -> client
    /// and back) delays a packet by a quarter of it.
    pub rtt_ps: u64,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub tcp: TcpVariant,
    pub tcp_rules: TcpRules,
    /// Congestion control (`tcp::congestion`).
    pub cc: Cc,
    /// DCTCP's marking threshold K at switch ports, packets held (RFC 8257 §3.1); unset:
    /// no ECN marking.
    pub ecn_threshold_packets: Option<u32>,
    pub rto_min_ps: Option<u64>,
    pub rto_max_ps: u64,
    pub timer_granularity_ps: u64,
    pub timer_ticks: bool,
    /// Linux's timer wheel (kernel/time/timer.c `calc_wheel_index`, `calc_index`): the
    /// retransmission / probe / reordering timer and the delayed-ACK timer are `timer_list`s
    /// on jiffies of `timer_granularity_ps`: a timer of n jiffies (`usecs_to_jiffies`, rounded
    /// up) fires n + 1 ticks after the tick it was armed in, more from 64 jiffies
    /// (`tcp::timer::wheel_expiry`).
    pub timer_wheel: bool,
    /// Linux's RTO estimator (`tcp_rtt_estimator`, `tcp_set_rto` / `__tcp_set_rto`): RTO =
    /// srtt + rttvar, rttvar never below RTOmin, in whole jiffies, from microsecond samples
    /// (`tcp::rto`).
    pub rto_min_on_rttvar: bool,
    pub timestamps: bool,
    pub rto_random: f64,
    pub rto_backoff: RtoBackoff,
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
    /// RFC 6937 proportional rate reduction in SACK recovery (`tcp::recovery::prr`).
    pub prr: bool,
    /// RFC 8985 RACK-TLP loss detection with SACK (`tcp::recovery::rack`).
    pub rack_tlp: bool,
    /// Linux's HyStart in CUBIC's slow start (`tcp::congestion::hystart`); cubic only.
    pub hystart: bool,
    /// Linux's `tcp_cwnd_reduction`: PRR-SSRB's extra segment only on an ACK that
    /// advanced SND.UNA and marked nothing newly lost (`tcp::recovery::prr`); prr only.
    pub prr_extra_if_advanced: bool,
    /// Linux's `tcp_cwnd_reduction` (and RFC 9937): the fast retransmit is sent within the
    /// entering ACK's sndcnt, at least one segment, not before it (`tcp::recovery::sack`);
    /// prr only.
    pub prr_counts_fast_retransmit: bool,
    /// Linux's `tcp_ack`: the ACK that ends fast recovery also grows cwnd from ssthresh as
    /// an Open-state ACK does, with the growth credit counted from the recovery's start
    /// (`tcp::recovery::sack`); tcp=sack only.
    pub grow_on_recovery_exit: bool,
    /// Linux's ICSK_ACK_PUSHED: the receiver acknowledges an in-order segment shorter than
    /// the MSS at once (`tcp::receiver`).
    pub ack_short_segments: bool,
    /// Linux's `tcp_grow_window`: each in-order segment that raises `rcv_ssthresh` (the
    /// advertised window) towards `window_clamp` is acknowledged at once (`tcp::linux_rcv`).
    pub rcv_window_growth: bool,
    /// Linux's `tcp_rcv_space_adjust` (Dynamic Right-Sizing): `window_clamp` follows the
    /// bytes copied per receiver RTT, from `tcp_rmem[1]` up to `tcp_rmem[2]` (`tcp::linux_rcv`).
    pub rcv_autotuning: bool,
    /// Linux 6.16's receiver RTT for `rcv_autotuning`: a zero-ms timestamp sample is
    /// dropped and the window-based sample (`tcp_rcv_rtt_measure`) feeds the estimate
    /// (`tcp::linux_rcv`).
    pub rcv_rtt_from_window: bool,
    /// Linux's ping-pong mode: a request within `ato` of the last data holds the quick and
    /// short-segment ACKs until a delayed-ACK timeout (`tcp::linux_rcv`).
    pub ack_pingpong: bool,
    /// Linux's `scaling_ratio`: receive-window bytes per 256 bytes of receive buffer (a
    /// segment's length over its skb's truesize), for `rcv_window_growth` and `rcv_autotuning`.
    pub rcv_scaling_ratio: u32,
    /// Linux's TCP_TIMEOUT_MIN_US: 2 ms added to the probe timeout (with more than one
    /// segment out) and to RACK's reordering timer (`tcp::recovery::rack`); rack_tlp only.
    pub rack_timer_floor: bool,
    /// Linux's `tcp_fastretrans_alert` in TCP_CA_Loss and `tcp_rack_reo_timeout`: after a
    /// timeout, an ACK on which RACK marks a retransmission lost again (FLAG_LOST_RETRANS),
    /// or RACK's reordering timer marking any segment lost, enters fast recovery at once
    /// instead of waiting for the next RTO (`tcp::recovery::sack`); rack_tlp only.
    pub recovery_from_loss: bool,
    /// Linux's other entries into quick-ACK mode at the receiver: `tcp_event_data_recv`'s
    /// `tcp_incr_quickack` at a connection's first data and after a gap longer than the
    /// receiving socket's RTO, `tcp_data_queue`'s `tcp_enter_quickack_mode` for a segment
    /// already held (`tcp::linux_rcv`).
    pub quickack_mode: bool,
    /// The receiving socket's own RTOmin, for `quickack_mode`'s gap; unset: `rto_min_ps`.
    pub receiver_rto_min_ps: Option<u64>,
    /// Linux's Loss state: after a timeout the segments marked lost are resent from the
    /// retransmit queue as ACKs (SACKs too) grow cwnd, SACKed ones kept
    /// (`tcp_timeout_mark_lost`, `tcp_xmit_retransmit_queue`), instead of going back N
    /// (`tcp::recovery::sack`); rack_tlp only.
    pub loss_retransmit_queue: bool,
    /// F-RTO (RFC 5682 §3, Linux's `tcp_frto` = 2): the first ACK after a timeout that
    /// advances SND.UNA sends new data; loss_retransmit_queue only.
    pub frto: bool,
    /// Linux's `tcp_rearm_rto` with the probe or reordering timer pending: the RTO from the
    /// first unacknowledged segment's last transmission (`tcp_rto_delta_us`), and with a
    /// probe outstanding an ACK of new data re-arms the probe timer
    /// (`tcp_schedule_loss_probe`), whose expiry only re-arms the RTO that way
    /// (`tcp_send_loss_probe`, `tlp_high_seq` set) (`tcp::sender`); rack_tlp only.
    pub rearm_rto_from_head: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`): on an ACK outside recovery, a send
    /// allowance under a third of the window, with the next ACK due within min(SRTT / 2,
    /// 1 ms) and the last send under 1 ms ago, waits for the next ACK (`tcp::sender`);
    /// rack_tlp only.
    pub tso_deferral: bool,
    /// Linux's `tcp_cwnd_test`: a GSO skb of at most half of cwnd, each further skb tested for
    /// TSO deferral (`tcp::sender`); with `tso_deferral` only.
    pub gso_half_cwnd: bool,
    /// Linux's order of RACK's RTT updates (`tcp_ack`: `tcp_sacktag_write_queue`, then
    /// `tcp_clean_rtx_queue`, each through `tcp_rack_advance`): RACK.rtt ends at the last
    /// cumulatively acknowledged segment's, not the newest SACKed one's (`tcp::recovery::rack`);
    /// rack_tlp only.
    pub rack_rtt_sack_first: bool,
    /// Linux's `tcp_packets_in_flight` outside recovery: SACKed segments leave the flight cwnd
    /// limits, and every ACK may send (`tcp::sender`), in place of RFC 3042; rack_tlp only.
    pub sacked_leave_flight: bool,
    /// Linux's `tcp_cwnd_validate`: a window that filled cwnd stays cwnd-limited (may grow)
    /// until it is acknowledged, not only while the flight fills cwnd (`tcp::sender`).
    pub cwnd_limited_latch: bool,
    /// CUBIC as Linux's tcp_cubic.c computes it: whole packets, t in jiffies, `cnt` at most
    /// once a jiffy, ssthresh from cwnd, W_max forgotten at a timeout
    /// (`tcp::congestion::cubic_linux`); off: RFC 9438. cc = cubic only.
    pub cubic_linux: bool,
    /// Linux's `tcp_reno_ssthresh`: ssthresh = max(cwnd / 2, 2 SMSS) at a loss
    /// (`tcp::congestion::newreno`); reno and DCTCP only.
    pub ssthresh_from_cwnd: bool,
    /// Linux's `tcp_slow_start` / `tcp_cong_avoid_ai`: growth per segment acknowledged
    /// (`tcp::congestion::newreno`); reno and DCTCP only.
    pub count_acked_segments: bool,
    /// Linux's `tcp_is_cwnd_limited` gate on reno's growth (`tcp::congestion::newreno`).
    pub cwnd_limited_growth: bool,
    pub slow_start: bool,
    pub slow_start_after_idle: bool,
    pub delayed_ack_ps: u64,
    /// The first window in segments; unset: [`TCP_INIT_CWND`] under TCP and Swift (resolved
    /// at validation), each flow's path BDP under NDP and credit (`host::Conns::add`).
    pub init_cwnd_segments: Option<u32>,
    pub rwnd_bytes: Option<u64>,
    pub response_jitter_ps: u64,
    /// Measured think times (`app::sync_read::Think::Drawn`); unset: `response_jitter_ps`.
    pub think_times_ps: Option<Vec<u64>>,
    pub send_jitter_ps: u64,
    pub tie_break: TieBreak,
    pub duration_ps: Option<u64>,
    pub blocks: Option<u64>,
    pub seed: u64,
    pub handshake: bool,
    /// Record where each flow's time went (`host::flowtime`): the synchronized reads' parts
    /// and the one-shot flows, over TCP, NDP or receiver credit; off: nothing per ACK.
    pub time_breakdown: bool,
    pub syn_timeout_ps: u64,
    pub mitigation: Scheme,
    pub nccs_k: u32,
    pub condition_i: ConditionI,
    pub udp_fraction: f64,
    pub udp_packet_bytes: u32,
    pub topology: TopologyKind,
    /// Switch-to-switch links' rate (two_switch's trunk, leaf_spine's uplinks); unset: the
    /// host links' rate, or under leaf_spine the rate `oversubscription` gives.
    pub trunk_rate_bps: Option<u64>,
    /// leaf_spine: leaves (unset: 2), spines (unset: 1), and the ratio of a leaf's host
    /// ports to its uplinks (unset: 1, unless `trunk_rate_bps` is set).
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    pub oversubscription: Option<f64>,
    pub pause: bool,
    pub pause_xoff_bytes: u64,
    pub pause_xon_bytes: u64,
    pub pause_quanta: u32,
    pub victim: bool,
    /// The QoS class of the victim's packets, data and ACKs (the incast stays in class 0).
    pub victim_class: u32,
    /// IEEE 802.1Qbb priority-based flow control instead of 802.3x PAUSE (`net::pause`).
    pub pfc: bool,
    /// fat_tree: the k of the k-ary fat tree (k pods, k^3/4 hosts).
    pub fat_tree_k: Option<u32>,
    /// fat_tree: the aggregation-core links' rate; unset: the edge-aggregation links' (trunk_rate).
    pub core_rate_bps: Option<u64>,
    /// Switch-to-switch links' propagation delay (a trunk, leaf-spine and edge-aggregation
    /// links); unset: the host links' (rtt / 4).
    pub trunk_delay_ps: Option<u64>,
    /// fat_tree: the aggregation-core links' delay; unset: trunk_delay.
    pub core_delay_ps: Option<u64>,
    /// How a switch picks among equal-cost uplinks (`net::balance`).
    pub load_balancing: LoadBalancing,
    /// incast: incasts at once, each to its own receiver.
    pub incasts: u32,
    /// incast, shuffle, permutation on a fat tree: which hosts take part (`app::flows`).
    pub placement: Placement,
    /// incast, shuffle, permutation: when the flows start.
    pub start_ps: u64,
    /// incast, shuffle, permutation: each flow starts at a uniform random instant of this
    /// window after `start_ps` (htsim's `extrastarttime`); 0: all at once.
    pub start_spread_ps: u64,
    /// Background flows arriving as a Poisson process (`app::background`): the load they
    /// offer, a fraction of each background host's link; 0: none.
    pub background_load: f64,
    /// The background flows' sizes (`app::cdf`).
    pub background_cdf: FlowSizeCdf,
    /// Hosts beside the workload's that carry only background flows (not on a fat tree,
    /// whose background runs among all its hosts); 0: the background runs among the
    /// workload's hosts.
    pub background_hosts: u32,
    /// What every flow runs: TCP, NDP or receiver credit (`host::Transport`).
    pub transport: Transport,
    /// Switch ports trim a data packet to its header when their data queue is full, and
    /// serve headers first (`net::trim`; NDP §3.1).
    pub trimming: bool,
    /// Wire bytes a trimmed packet keeps; unset: `header_bytes`.
    pub trim_bytes: Option<u32>,
    /// A trimming port's header queue, bytes; unset: twice its data queue (htsim).
    pub trim_header_queue_bytes: Option<u64>,
    /// A header that finds the header queue full goes back to its sender (NDP §3.1).
    pub return_to_sender: bool,
    /// Swift (`transport = swift`; Kumar et al., SIGCOMM 2020 §3.2, §3.5): the target's
    /// fixed part; unset: each flow's unloaded round trip.
    pub swift_base_target_ps: Option<u64>,
    /// Swift: target per hop of a flow's path (topology-based scaling, the paper's h);
    /// unset: one full packet's time on the sending host's link.
    pub swift_h_ps: Option<u64>,
    /// Swift: the flow-based scaling's range; unset: ten h.
    pub swift_fs_range_ps: Option<u64>,
    /// Swift: the windows (packets) at which the flow-based scaling adds fs_range and 0.
    pub swift_fs_min_cwnd: f64,
    pub swift_fs_max_cwnd: f64,
    /// Swift: additive increment per RTT (packets), multiplicative decrease constant and
    /// the largest decrease per RTT (§3.2).
    pub swift_ai: f64,
    pub swift_beta: f64,
    pub swift_max_mdf: f64,
    /// Swift: where its retransmission timer takes its RTT samples (§3.6).
    pub swift_rto: SwiftRto,
    /// Swift: the window's floor, packets (Algorithm 1's min_cwnd; §3.4: 0.001). 1 is
    /// Table 3's "Swift w/o cwnd < 1".
    pub swift_min_cwnd_floor: f64,
    /// Incast: connections each sender opens to its receiver (Swift §5.3: "100 flows from
    /// each of 50 machines").
    pub flows_per_sender: u32,
    /// The steady-state window starts here (after a warm-up) and ends with the duration:
    /// the results' `steady_*` columns count only what happens in it.
    pub measure_from_ps: Option<u64>,
    /// Long-lived background flows between chosen hosts (`app::bulk`).
    pub bulk_flows: u32,
    pub bulk_from: Option<Vec<u32>>,
    pub bulk_to: Option<Vec<u32>>,
    /// Each bulk flow's application rate; unset: always backlogged.
    pub bulk_rate_bps: Option<u64>,
}

impl Default for ScenarioSpec {
    fn default() -> Self {
        ScenarioSpec {
            preset: PresetName::Rfc,
            servers: 1,
            // FAST'08 Fig. 1: one client
            clients: 1,
            workload: Workload::SyncRead,
            // Fritchie's troubles start at "25-35 %" average utilization: 125 gets/s of 3
            // replies of 100 KB bring 300 Mbit/s of payload into each node, 30 % of a
            // gigabit link (his "thousands of queries per second" had smaller replies)
            get_rate: 125.0,
            // Fritchie: "Typically, the number of copies is three"
            replicas: 3,
            // Riak's default R: a quorum of 3, i.e. 2 (Riak docs, "Replication Properties")
            read_quorum: 2,
            // Fritchie's example: "big, for example, 100 kilobytes each"
            reply_bytes: 100_000,
            reply_size_dist: ReplySizeDist::Fixed,
            // what the workload had before Erlang distribution was modelled (issue 26)
            riak_transport: RiakTransport::PerPair,
            // Erlang's default dist_buf_busy_limit (erl +zdbbl: "Defaults to 1024" KB;
            // ERTS_DE_BUSY_LIMIT (1024*1024) in erts/emulator/beam/dist.h)
            dist_buf_busy_limit_bytes: 1024 * 1024,
            // 256 KiB (FAST'08 Table 1), resolved at validation unless block_bytes is set
            sru_bytes: None,
            block_bytes: None,
            active_servers: None,
            buffer_bytes: 32 * 1024,
            buffer_packets: None,
            buffer_admission: None,
            buffer_sharing: BufferSharing::Static,
            buffer_pool_bytes: None,
            // Choudhury & Hahne's alpha; 1 lets one congested queue take half the pool
            dt_alpha: 1.0,
            qos_classes: 1,
            // strict priority: what a port's classes had before the field existed (all
            // traffic in class 0 then, where any scheduler sends the same packets)
            qos_scheduler: ClassScheduler::Sp,
            qos_weights: None,
            // no shaper: every port sends at its link's rate, as a switch does
            shaper_rate_bps: None,
            shaper_burst_bytes: None,
            rate_bps: 1_000_000_000,
            rtt_ps: 100 * PS_PER_US,
            mss_bytes: 1460,
            header_bytes: 40,
            tcp: TcpVariant::Newreno,
            tcp_rules: TcpRules::Rfc,
            cc: Cc::Newreno,
            ecn_threshold_packets: None,
            // 200 ms (FAST'08 Table 1), 200 us under TCPFG (Osada et al. §5.1)
            rto_min_ps: None,
            rto_max_ps: 60 * PS_PER_S, // RFC 6298 §2.5: a maximum of at least 60 s
            timer_granularity_ps: PS_PER_US,
            // timers fire at their exact deadline (a high-resolution timer)
            timer_ticks: false,
            // RFC 6298 §2-§5 (Linux's timer wheel and estimator: the linux preset)
            timer_wheel: false,
            rto_min_on_rttvar: false,
            // RFC 7323 timestamps off: RFC 6298 with Karn's rule, as ns-2's Agent/TCP
            timestamps: false,
            // RTO x (1 + U(0, x)); 001_e0dada207805edc8.txt uses 0.5; off by default
            rto_random: 0.0,
            // ns-2's rule, which FAST'08's and Osada et al.'s simulations ran
            rto_backoff: RtoBackoff::Sample,
            dupack_threshold: 3,
            // RFC 3042, which RFC 5681 §3.2 says a sender SHOULD use; ns-2 (since 2001), ns-3
            // and Linux have it on. FAST'08 Table 1 says disabled, but its runs most likely
            // had it (docs/model.md, "The ns-2 reading of FAST'08")
            limited_transmit: true,
            // RFC 6675's recovery and loss detection, as ns-2's Sack1 (Linux has both on)
            prr: false,
            rack_tlp: false,
            // RFC 9438 §4.10 leaves slow start to RFC 5681 (Linux runs HyStart: the linux preset)
            hystart: false,
            // RFC 6937 §3 PRR-SSRB's "+ MSS" on every ACK (Linux's condition: the linux preset)
            prr_extra_if_advanced: false,
            // RFC 6937 §3 read literally: the fast retransmit, then the entering ACK's sndcnt
            prr_counts_fast_retransmit: false,
            // RFC 6675 §5 / RFC 6582 §3.2: cwnd = ssthresh on leaving recovery, no growth then
            grow_on_recovery_exit: false,
            // RFC 1122 §4.2.3.2 / RFC 5681 §4.2 only (Linux's short-segment ACK: the linux preset)
            ack_short_segments: false,
            rcv_window_growth: false,
            rcv_autotuning: false,
            ack_pingpong: false,
            rcv_scaling_ratio: 128,
            // RFC 8985 §6.3, §7.2: PTO = 2 SRTT, the reordering timer at RACK.rtt + reo_wnd
            // (Linux's + TCP_TIMEOUT_MIN_US: the linux preset)
            rack_timer_floor: false,
            recovery_from_loss: false,
            rcv_rtt_from_window: false,
            quickack_mode: false,
            receiver_rto_min_ps: None,
            loss_retransmit_queue: false,
            frto: false,
            rearm_rto_from_head: false,
            tso_deferral: false,
            gso_half_cwnd: false,
            rack_rtt_sack_first: false,
            sacked_leave_flight: false,
            cwnd_limited_latch: false,
            cubic_linux: false,
            // RFC 5681 eq. (4) and (2)-(3), as ns-2 and ns-3 (Linux's reno: the linux preset)
            ssthresh_from_cwnd: false,
            count_acked_segments: false,
            cwnd_limited_growth: false,
            slow_start: true,
            // RFC 5681 §4.1 restart after idle: off as in ns-2 (Linux has it on by default)
            slow_start_after_idle: false,
            delayed_ack_ps: 0,
            // ns-2's window_init (RFC 5681 allows 2 to 4) under TCP; NDP's and credit's
            // first window is each flow's path BDP unless given; resolved at validation
            init_cwnd_segments: None,
            // ns-2 Agent/TCP window_ = 20 packets (DEFAULT_RWND_BYTES) unless CCS/NCCS
            // advertise BaseBDP; resolved at validation
            rwnd_bytes: None,
            response_jitter_ps: 0,
            think_times_ps: None,
            send_jitter_ps: 0,
            tie_break: TieBreak::Fifo,
            // 20 s (FAST'08 §3.1: each run is 20 s of simulated time) unless blocks is set
            duration_ps: None,
            blocks: None,
            seed: 1,
            handshake: false,
            time_breakdown: false,
            syn_timeout_ps: 3 * PS_PER_S,
            mitigation: Scheme::Ntcp,
            nccs_k: 4,
            condition_i: ConditionI::Sent,
            udp_fraction: 0.0,
            udp_packet_bytes: 1500,
            // FAST'08 Fig. 1: one switch
            topology: TopologyKind::Star,
            // switch-to-switch links as fast as the hosts' unless given (FAST'08 §5.2 does
            // not give its trunk's rate); leaf_spine's shape resolved at validation
            trunk_rate_bps: None,
            leaves: None,
            spines: None,
            oversubscription: None,
            // 802.3x PAUSE off, as FAST'08's runs but those of §5.2 / Fig. 14
            pause: false,
            // FAST'08 does not give the Procurve 2848's thresholds: XOFF above two full
            // frames of one ingress waiting, XON at one (docs/model.md, "PAUSE")
            pause_xoff_bytes: 3000,
            pause_xon_bytes: 1500,
            // the largest pause a frame asks for (802.3 §31B.2); XON ends it early
            pause_quanta: 0xFFFF,
            // no background flow, as FAST'08's incast runs
            victim: false,
            // a fat tree's shape is given when it is asked for
            fat_tree_k: None,
            core_rate_bps: None,
            trunk_delay_ps: None,
            core_delay_ps: None,
            // static two-level routes: what leaf_spine had before there was a choice
            load_balancing: LoadBalancing::Destination,
            incasts: 1,
            placement: Placement::Random,
            start_ps: 0,
            start_spread_ps: 0,
            background_load: 0.0,
            // the DCTCP paper's web search distribution, the most used
            background_cdf: FlowSizeCdf::WebSearch,
            background_hosts: 0,
            transport: Transport::Tcp,
            swift_base_target_ps: None,
            swift_h_ps: None,
            swift_fs_range_ps: None,
            swift_fs_min_cwnd: 0.1,
            swift_fs_max_cwnd: 100.0,
            swift_ai: 1.0,
            swift_beta: 0.8,
            swift_max_mdf: 0.5,
            swift_rto: SwiftRto::Delay,
            swift_min_cwnd_floor: crate::tcp::congestion::swift::MIN_CWND,
            flows_per_sender: 1,
            measure_from_ps: None,
            // drop-tail ports, as every result before trimming existed
            trimming: false,
            trim_bytes: None,
            trim_header_queue_bytes: None,
            return_to_sender: false,
            victim_class: 0,
            // whole-link PAUSE when pause is on (FAST'08 §5.2 tested 802.3x)
            pfc: false,
            // no background flows, as every seed's incast runs
            bulk_flows: 0,
            bulk_from: None,
            bulk_to: None,
            bulk_rate_bps: None,
        }
    }
}

/// FAST'08 Table 1's SRU.
pub const DEFAULT_SRU_BYTES: u64 = 256 * 1024;
/// FAST'08 Table 1's RTOmin.
pub const DEFAULT_RTO_MIN_PS: u64 = 200 * PS_PER_MS;
/// TCPFG's RTOmin (Osada et al. §5.1: 200 us with a fine-grained timer).
pub const TCPFG_RTO_MIN_PS: u64 = 200 * PS_PER_US;
/// ns-2 Agent/TCP `window_` = 20 packets of 1460 B: the per-flow cap FAST'08's ns-2 runs
/// most likely had (docs/defaults.md); its Fig. 6 figure of ~65 % at 64 servers with a
/// 1024 KB buffer is reproduced with it.
pub const DEFAULT_RWND_BYTES: u64 = 20 * 1460;
/// The largest window TCP can advertise: 2^14 scaling of a 16-bit field, RFC 7323 §2.3.
pub const MAX_RWND_BYTES: u64 = 1 << 30;
/// FAST'08 §3.1: each run is 20 s of simulated time.
pub const DEFAULT_DURATION_PS: u64 = 20 * PS_PER_S;

/// A scenario the core refuses: names the parameter (the core's name), its value and
/// what is allowed, in the units people write; `related` names the other fields of a
/// constraint between two, so a front can blame the one its user set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub param: &'static str,
    pub value: String,
    pub allowed: String,
    pub related: &'static [&'static str],
}

impl ScenarioError {
    pub fn new(param: &'static str, value: impl ToString, allowed: impl ToString) -> Self {
        ScenarioError { param, value: value.to_string(), allowed: allowed.to_string(), related: &[] }
    }

    fn with_related(mut self, related: &'static [&'static str]) -> Self {
        self.related = related;
        self
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} is not allowed; expected {}", self.param, self.value, self.allowed)
    }
}

impl std::error::Error for ScenarioError {}

fn check(ok: bool, err: impl FnOnce() -> ScenarioError) -> Result<(), ScenarioError> {
    if ok {
        Ok(())
    } else {
        Err(err())
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
    /// The spec as given, its unset fields resolved (`sru_bytes` unless in fixed-block
    /// mode, `rto_min_ps`, `rwnd_bytes`, `duration_ps` unless `blocks` is set).
    pub spec: ScenarioSpec,
    /// How switch ports admit packets (resolved from `buffer_admission`/`buffer_packets`).
    pub admission: Admission,
    /// The packet limit under [`Admission::Packets`]: `buffer_packets`, or as many full
    /// packets as `buffer_bytes` holds.
    pub buffer_packets: u32,
    /// Under dynamic sharing, the bytes of the switch's pool (`buffer_pool_bytes`, or every
    /// switch port's static buffer together); `None` for static buffers.
    pub buffer_pool_bytes: Option<u64>,
    /// Bytes each server returns for one block, index = server.
    pub per_server_bytes: Vec<u64>,
    pub stop: StopAt,
    /// Propagation delay of each link: a quarter of the RTT.
    pub link_delay: Time,
    pub rto_min: Time,
    pub rwnd_bytes: u64,
    /// The scheduling scheme with its thresholds.
    pub mitigation: Mitigation,
    /// The fabric's shape and its switch-to-switch rate.
    pub fabric: Fabric,
    /// Switch ports trim (`trimming`), with their queues resolved.
    pub trim: Option<TrimConfig>,
}

/// The fabric as validation resolved it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    /// The switch-to-switch links' rate (a trunk, every uplink); `None` on the star.
    pub trunk_bps: Option<u64>,
    /// leaf_spine: leaves and spines (0 otherwise).
    pub leaves: u32,
    pub spines: u32,
    /// leaf_spine: (servers per leaf x rate) / (spines x uplink rate), as given or as the
    /// given trunk rate makes it.
    pub oversubscription: Option<f64>,
    /// fat_tree: its shape, rates and delays.
    pub fat_tree: Option<FatTree>,
    /// The switch-to-switch links' delay.
    pub trunk_delay: Time,
    /// Hosts the fabric has: the workload's (and the background's) on the star, two
    /// switches and the leaf-spine; k^3/4 on a fat tree.
    pub hosts: u32,
}

/// Why no switch-to-switch link may be slower than a host's. Not loss on the reverse path:
/// a switch drops requests (sent again an RTOmin later: `Conns::request_dropped`), ACKs and SYNs like any
/// packet. But the results watch the client's switch port as the bottleneck
/// (`max_queue_bytes`, the capture mirror, the event trace), and a trunk slower than the host
/// links would be the rate bottleneck instead; nor do the sources have one: datacenter
/// uplinks are at least as fast as host links, and oversubscription comes from having fewer.
const SLOWER_LINK: &str = "a switch-to-switch link slower than the host links would be the bottleneck, \
                           and the results measure the client's switch port as the bottleneck";

/// Unset leaf_spine fields: the smallest leaf-spine, two leaves under one spine, at full
/// bisection (every uplink as fast as the host ports below it together).
pub const DEFAULT_LEAVES: u32 = 2;
pub const DEFAULT_SPINES: u32 = 1;

/// Largest supported fan-in; bounded so memory stays predictable.
pub const MAX_SERVERS: u32 = 1 << 20;

/// TCP's (and Swift's) initial window when `init_cwnd` is not given, in segments: ns-2's
/// `window_init` of 2, as FAST'08 ran it (RFC 5681 §3.1: 2 to 4 segments, by their size).
pub const TCP_INIT_CWND: u32 = 2;

/// The most connections `flows_per_sender` may make in all (the bound `clients` x `servers`
/// has too).
pub const MAX_FLOW_CONNECTIONS: u64 = 1 << 20;

/// A round trip crosses four links in the star: server -> switch -> client, and back.
pub const LINKS_PER_RTT: u64 = 4;

impl ScenarioSpec {
    /// Check every field; on success return the scenario the simulator runs.
    pub fn validate(&self) -> Result<Scenario, ScenarioError> {
        let s = self;
        schema::check_fields(&serde_json::to_value(s).expect("a spec serializes"))?;
        let (admission, buffer_packets) = s.buffer()?;
        let buffer_pool_bytes = s.switch_buffers(admission)?;
        let shaper_burst_bytes = s.shaper()?;
        s.check_combinations()?;
        s.check_classes()?;
        s.check_workload()?;
        let trim = s.check_transport(admission, buffer_packets)?;
        s.bulk_pairs()?;
        let rto_min_ps = s.rto_min()?;
        let stop = s.stop()?;
        s.check_steady(stop)?;
        let per_server_bytes = s.per_server_bytes()?;
        let (rwnd_bytes, mitigation) = s.scheduling(&per_server_bytes)?;
        let fabric = s.fabric()?;
        let spec = ScenarioSpec {
            // (Riak has no blocks: its sru stays unset)
            sru_bytes: (s.block_bytes.is_none() && s.workload != Workload::Riak).then_some(per_server_bytes[0]),
            rto_min_ps: Some(rto_min_ps),
            rwnd_bytes: Some(rwnd_bytes),
            // NDP's and credit's stays unset: each flow's own path decides it
            init_cwnd_segments: s.init_cwnd_segments.or((!s.transport.pulls()).then_some(TCP_INIT_CWND)),
            buffer_pool_bytes,
            shaper_burst_bytes,
            duration_ps: match stop {
                StopAt::Time(t) => Some(t.0),
                StopAt::Blocks(_) => None,
            },
            ..s.clone()
        };
        Ok(Scenario {
            spec,
            admission,
            buffer_packets,
            buffer_pool_bytes,
            per_server_bytes,
            stop,
            link_delay: Time(s.rtt_ps / LINKS_PER_RTT),
            rto_min: Time(rto_min_ps),
            rwnd_bytes,
            mitigation,
            fabric,
            trim,
        })
    }

    /// Swift's fields: set only with `transport = swift`, and a flow-based scaling whose
    /// window range is not empty (its alpha divides by 1/sqrt(fs_min) - 1/sqrt(fs_max)).
    fn check_swift(&self) -> Result<(), ScenarioError> {
        let (s, d) = (self, ScenarioSpec::default());
        if s.transport != Transport::Swift {
            let fields = [
                ("swift_base_target_ps", s.swift_base_target_ps.is_some(), format_ps(s.swift_base_target_ps.unwrap_or(0))),
                ("swift_h_ps", s.swift_h_ps.is_some(), format_ps(s.swift_h_ps.unwrap_or(0))),
                ("swift_fs_range_ps", s.swift_fs_range_ps.is_some(), format_ps(s.swift_fs_range_ps.unwrap_or(0))),
                ("swift_fs_min_cwnd", s.swift_fs_min_cwnd != d.swift_fs_min_cwnd, s.swift_fs_min_cwnd.to_string()),
                ("swift_fs_max_cwnd", s.swift_fs_max_cwnd != d.swift_fs_max_cwnd, s.swift_fs_max_cwnd.to_string()),
                ("swift_ai", s.swift_ai != d.swift_ai, s.swift_ai.to_string()),
                ("swift_beta", s.swift_beta != d.swift_beta, s.swift_beta.to_string()),
                ("swift_max_mdf", s.swift_max_mdf != d.swift_max_mdf, s.swift_max_mdf.to_string()),
                ("swift_rto", s.swift_rto != d.swift_rto, format!("{:?}", s.swift_rto).to_lowercase()),
                ("swift_min_cwnd_floor", s.swift_min_cwnd_floor != d.swift_min_cwnd_floor, s.swift_min_cwnd_floor.to_string()),
            ];
            for (name, set, value) in fields {
                check(!set, || {
                    ScenarioError::new(name, value, "its default unless transport is swift").with_related(&["transport"])
                })?;
            }
            return Ok(());
        }
        check(s.swift_fs_min_cwnd < s.swift_fs_max_cwnd, || {
            let allowed = format!("below swift_fs_max_cwnd ({}): the flow-based scaling falls from fs_range at fs_min_cwnd to 0 at fs_max_cwnd", s.swift_fs_max_cwnd);
            ScenarioError::new("swift_fs_min_cwnd", s.swift_fs_min_cwnd.to_string(), allowed).with_related(&["swift_fs_max_cwnd"])
        })
    }

    /// The transport and the trimming ports agree with the rest: NDP and receiver credit
    /// carry one-shot flows (the synchronized reads' requests and Riak's are TCP's) with no
    /// TCP-only knob set; trimming ports have one static data queue (no pool, classes or
    /// lossless flow control beside them) and room for a header; return-to-sender is NDP's.
    fn check_transport(&self, admission: Admission, buffer_packets: u32) -> Result<Option<TrimConfig>, ScenarioError> {
        let (s, d) = (self, ScenarioSpec::default());
        let transport = word(&s.transport);
        let split = match s.workload {
            Workload::SyncRead => true,
            Workload::Riak => s.riak_transport == RiakTransport::PerPair,
            w => w.is_flows(),
        };
        check(!s.time_breakdown || split, || {
            let allowed = "off unless workload is sync_read, riak (riak_transport per_pair), incast, shuffle or permutation (it splits the reads' parts, Riak's replies and the one-shot flows; Erlang distribution's one stream per node pair is not split)";
            ScenarioError::new("time_breakdown", "on", allowed).with_related(&["workload", "riak_transport"])
        })?;
        if s.transport != Transport::Tcp {
            check(s.workload.is_flows(), || {
                let allowed = format!("incast, shuffle or permutation with transport {transport} (one-shot flows; the synchronized reads' requests and Riak's gets are TCP's)");
                ScenarioError::new("workload", word(&s.workload), allowed).with_related(&["transport"])
            })?;
            let tcp_only = [
                ("cc", s.cc != d.cc, word(&s.cc)),
                ("delayed_ack_ps", s.delayed_ack_ps != 0, format_ps(s.delayed_ack_ps)),
            ];
            for (name, set, value) in tcp_only {
                check(!set, || {
                    let allowed = format!("its default with transport {transport} (a TCP knob)");
                    ScenarioError::new(name, value, allowed).with_related(&["transport"])
                })?;
            }
        }
        s.check_swift()?;
        if s.return_to_sender {
            check(s.transport == Transport::Ndp, || {
                ScenarioError::new("return_to_sender", "on", "off unless transport is ndp (its sender answers a returned header)")
                    .with_related(&["transport"])
            })?;
        }
        if !s.trimming {
            let trim_only = [
                ("trim_bytes", s.trim_bytes.is_some(), format_bytes(s.trim_bytes.unwrap_or(0) as u64)),
                ("trim_header_queue_bytes", s.trim_header_queue_bytes.is_some(), format_bytes(s.trim_header_queue_bytes.unwrap_or(0))),
                ("return_to_sender", s.return_to_sender, "on".into()),
            ];
            for (name, set, value) in trim_only {
                check(!set, || ScenarioError::new(name, value, "unset unless trimming is on").with_related(&["trimming"]))?;
            }
            return Ok(None);
        }
        let lossless = [
            ("buffer_sharing", s.buffer_sharing != BufferSharing::Static, word(&s.buffer_sharing), "static"),
            ("qos_classes", s.qos_classes != 1, s.qos_classes.to_string(), "1"),
            ("pause", s.pause, "on".into(), "off"),
            ("buffer_admission", admission == Admission::MtuSlots, "mtu_slots".into(), "bytes or packets"),
            ("ecn_threshold_packets", s.ecn_threshold_packets.is_some(), s.ecn_threshold_packets.unwrap_or(0).to_string(), "unset"),
            // a tbf shaper's port is one byte FIFO behind a bucket: not a trimming port too
            ("shaper_rate_bps", s.shaper_rate_bps.is_some(), format_rate(s.shaper_rate_bps.unwrap_or(0)), "unset"),
        ];
        for (name, set, value, allowed) in lossless {
            check(!set, || {
                let allowed = format!("{allowed} with trimming (a trimming port has one data queue and one header queue)");
                ScenarioError::new(name, value, allowed).with_related(&["trimming"])
            })?;
        }
        let mtu = s.mtu();
        let trim_bytes = s.trim_bytes.unwrap_or(s.header_bytes);
        check(trim_bytes >= 1 && trim_bytes as u64 <= mtu, || {
            ScenarioError::new("trim_bytes", format_bytes(trim_bytes as u64), format!("1B to the MTU ({mtu}B)"))
        })?;
        let data_limit = match admission {
            Admission::Packets => DataLimit::Packets(buffer_packets as u64),
            _ => DataLimit::Bytes(s.buffer_bytes),
        };
        let data_bytes = match data_limit {
            DataLimit::Packets(p) => p * mtu,
            DataLimit::Bytes(b) => b,
        };
        let header_queue_bytes = s.trim_header_queue_bytes.unwrap_or(2 * data_bytes);
        check(header_queue_bytes >= mtu, || {
            let allowed = format!("at least the MTU ({mtu}B): room for any control packet");
            ScenarioError::new("trim_header_queue_bytes", format_bytes(header_queue_bytes), allowed)
        })?;
        Ok(Some(TrimConfig { trim_bytes, data_limit, header_queue_bytes, return_to_sender: s.return_to_sender }))
    }

    /// The fabric's shape and switch-to-switch rate: `trunk_rate` where there is a trunk,
    /// the leaf-spine's fields only on a leaf-spine, and no link slower than a host's.
    fn fabric(&self) -> Result<Fabric, ScenarioError> {
        let s = self;
        s.check_fabric_fields()?;
        let trunk_delay = Time(s.trunk_delay_ps.unwrap_or(s.rtt_ps / LINKS_PER_RTT));
        let hosts = s.workload_hosts() + s.extra_hosts();
        let plain = Fabric { trunk_bps: None, leaves: 0, spines: 0, oversubscription: None, fat_tree: None, trunk_delay, hosts };
        if s.topology == TopologyKind::FatTree {
            return s.fat_tree(plain);
        }
        if s.topology != TopologyKind::LeafSpine {
            let trunk_bps = (s.topology != TopologyKind::Star).then(|| s.trunk_rate_bps.unwrap_or(s.rate_bps));
            if let Some(t) = trunk_bps {
                s.check_trunk_rate(t)?;
            }
            return Ok(Fabric { trunk_bps, ..plain });
        }
        let (leaves, spines) = (s.leaves.unwrap_or(DEFAULT_LEAVES), s.spines.unwrap_or(DEFAULT_SPINES));
        let per_leaf = s.servers.div_ceil(leaves);
        // one leaf's host ports together, over its uplinks together
        let host_side = per_leaf as f64 * s.rate_bps as f64;
        let (trunk_bps, oversubscription) = match s.trunk_rate_bps {
            Some(t) => {
                s.check_trunk_rate(t)?;
                (t, host_side / (spines as f64 * t as f64))
            }
            None => {
                let o = s.oversubscription.unwrap_or(1.0);
                let uplink_bps = (host_side / (spines as f64 * o)).round() as u64;
                s.check_derived_uplink(uplink_bps, per_leaf, spines)?;
                (uplink_bps, o)
            }
        };
        Ok(Fabric { trunk_bps: Some(trunk_bps), leaves, spines, oversubscription: Some(oversubscription), ..plain })
    }

    /// Hosts the workload places: the servers and clients of the synchronized reads, Riak's
    /// nodes, an incast's senders and receivers, the hosts of a shuffle or a permutation.
    fn workload_hosts(&self) -> u32 {
        match self.workload {
            Workload::SyncRead => self.servers + self.clients,
            Workload::Incast => self.servers + self.incasts,
            Workload::Riak | Workload::Shuffle | Workload::Permutation => self.servers,
        }
    }

    /// Hosts beside the workload's: the bulk flow's two, and the background's own.
    fn extra_hosts(&self) -> u32 {
        2 * self.victim as u32 + self.background_hosts
    }

    /// A k-ary fat tree: k even, its hosts enough for the workload's, uplinks at least as
    /// fast as the host links.
    fn fat_tree(&self, plain: Fabric) -> Result<Fabric, ScenarioError> {
        let s = self;
        let k = s.fat_tree_k.ok_or_else(|| {
            ScenarioError::new("fat_tree_k", "unset", "an even number from 4 to 64, required with topology fat_tree")
        })?;
        check(k % 2 == 0, || ScenarioError::new("fat_tree_k", k, "an even number from 4 to 64 (k/2 ports up, k/2 down)"))?;
        let agg_bps = s.trunk_rate_bps.unwrap_or(s.rate_bps);
        s.check_trunk_rate(agg_bps)?;
        let core_bps = s.core_rate_bps.unwrap_or(agg_bps);
        check(core_bps >= s.rate_bps, || {
            let allowed = format!("at least rate ({}): {SLOWER_LINK}", format_rate(s.rate_bps));
            ScenarioError::new("core_rate_bps", format_rate(core_bps), allowed).with_related(&["rate_bps"])
        })?;
        let core_delay = s.core_delay_ps.map_or(plain.trunk_delay, Time);
        let tree = FatTree { k, agg_bps, agg_delay: plain.trunk_delay, core_bps, core_delay };
        let needed = match (s.workload, s.placement) {
            (Workload::Incast, Placement::Packed | Placement::Tail) => s.incasts as u64 * (s.servers as u64 + 1),
            (Workload::Incast, Placement::Random) => s.servers as u64 + 1,
            _ => s.workload_hosts() as u64 + 2 * s.victim as u64,
        };
        check(needed <= tree.hosts() as u64, || {
            let allowed = format!("a fat tree of k = {k} has {} hosts; the workload needs {needed}", tree.hosts());
            ScenarioError::new("servers", s.servers, allowed).with_related(&["fat_tree_k", "workload"])
        })?;
        let trunk_bps = Some(agg_bps);
        Ok(Fabric { trunk_bps, fat_tree: Some(tree), hosts: tree.hosts(), ..plain })
    }

    /// `trunk_rate` only where there is a switch-to-switch link, the leaf-spine's fields only
    /// on a leaf-spine, and not both a trunk rate and a ratio that would set it.
    fn check_fabric_fields(&self) -> Result<(), ScenarioError> {
        let s = self;
        if let Some(t) = s.trunk_rate_bps {
            check(s.topology != TopologyKind::Star, || {
                let allowed = "unset on the star (it has no switch-to-switch link)";
                ScenarioError::new("trunk_rate_bps", format_rate(t), allowed).with_related(&["topology"])
            })?;
        }
        let leaf_fields = [
            ("leaves", s.leaves.map(|v| v.to_string())),
            ("spines", s.spines.map(|v| v.to_string())),
            ("oversubscription", s.oversubscription.map(|v| v.to_string())),
        ];
        for (name, value) in leaf_fields {
            if let Some(v) = value {
                check(s.topology == TopologyKind::LeafSpine, || {
                    let topology = serde_json::to_value(s.topology).unwrap_or_default();
                    let topology = topology.as_str().unwrap_or_default();
                    let allowed = format!("unset unless topology is leaf_spine (not {topology})");
                    ScenarioError::new(name, v, allowed).with_related(&["topology"])
                })?;
            }
        }
        if let (Some(o), Some(t)) = (s.oversubscription, s.trunk_rate_bps) {
            let allowed = format!("unset when trunk_rate is given ({})", format_rate(t));
            return Err(ScenarioError::new("oversubscription", o, allowed).with_related(&["trunk_rate_bps"]));
        }
        let fat_tree_fields = [
            ("fat_tree_k", s.fat_tree_k.map(|v| v.to_string())),
            ("core_rate_bps", s.core_rate_bps.map(format_rate)),
            ("core_delay_ps", s.core_delay_ps.map(format_ps)),
        ];
        for (name, value) in fat_tree_fields {
            if let Some(v) = value {
                check(s.topology == TopologyKind::FatTree, || {
                    ScenarioError::new(name, v, "unset unless topology is fat_tree").with_related(&["topology"])
                })?;
            }
        }
        // the star has no switch-to-switch link, nor an uplink to choose
        let no_uplinks = "its default on the star (it has no switch-to-switch link)";
        if let Some(d) = s.trunk_delay_ps {
            check(s.topology != TopologyKind::Star, || {
                ScenarioError::new("trunk_delay_ps", format_ps(d), no_uplinks).with_related(&["topology"])
            })?;
        }
        check(s.load_balancing == LoadBalancing::Destination || s.topology != TopologyKind::Star, || {
            ScenarioError::new("load_balancing", word(&s.load_balancing), format!("destination: {no_uplinks}"))
                .with_related(&["topology"])
        })?;
        check(!s.victim || s.topology != TopologyKind::FatTree, || {
            let allowed = "off on a fat tree (the bulk pair's places are the other fabrics'); background_load loads a fat tree";
            ScenarioError::new("victim", "on", allowed).with_related(&["topology"])
        })?;
        check(s.background_hosts == 0 || s.topology != TopologyKind::FatTree, || {
            let allowed = "0 on a fat tree (its background runs among all its hosts)";
            ScenarioError::new("background_hosts", s.background_hosts, allowed).with_related(&["topology"])
        })
    }

    /// A given switch-to-switch rate is at least the host links' (see [`SLOWER_LINK`]).
    fn check_trunk_rate(&self, trunk_bps: u64) -> Result<(), ScenarioError> {
        check(trunk_bps >= self.rate_bps, || {
            let allowed = format!("at least rate ({}): {SLOWER_LINK}", format_rate(self.rate_bps));
            ScenarioError::new("trunk_rate_bps", format_rate(trunk_bps), allowed).with_related(&["rate_bps"])
        })
    }

    /// The uplink rate `oversubscription` gives is at least the host links' (see
    /// [`SLOWER_LINK`]) and within the rate's range; names `spines` when the ratio is unset.
    fn check_derived_uplink(&self, uplink_bps: u64, per_leaf: u32, spines: u32) -> Result<(), ScenarioError> {
        let s = self;
        let (name, value): (&'static str, String) = match s.oversubscription {
            Some(o) => ("oversubscription", o.to_string()),
            None => ("spines", spines.to_string()),
        };
        let shape = format!("{per_leaf} servers per leaf over {spines} spines at {}", format_rate(s.rate_bps));
        let related: &'static [&'static str] = &["leaves", "servers", "rate_bps"];
        check(uplink_bps >= s.rate_bps, || {
            let most = match name {
                "spines" => per_leaf.to_string(),
                _ => (per_leaf as f64 / spines as f64).to_string(),
            };
            ScenarioError::new(name, &value, format!("at most {most} ({shape}): {SLOWER_LINK}")).with_related(related)
        })?;
        let max_rate = match schema::field_named("trunk_rate_bps").map(|f| f.range) {
            Some(schema::Range::Whole { max, .. }) => max,
            _ => u64::MAX,
        };
        check(uplink_bps <= max_rate, || {
            let allowed = format!("uplinks of at most {} ({shape})", format_rate(max_rate));
            ScenarioError::new(name, &value, allowed).with_related(related)
        })
    }

    fn mtu(&self) -> u64 {
        (self.mss_bytes + self.header_bytes) as u64
    }

    /// How ports admit packets and, under the `packets` rule, how many they hold.
    fn buffer(&self) -> Result<(Admission, u32), ScenarioError> {
        let (s, mtu) = (self, self.mtu());
        check(s.buffer_bytes >= mtu, || {
            ScenarioError::new("buffer_bytes", format_bytes(s.buffer_bytes), format!("at least one full packet ({mtu} B)"))
                .with_related(&["mss_bytes", "header_bytes"])
        })?;
        if s.buffer_packets.is_some() {
            check(s.buffer_admission.is_none_or(|a| a == Admission::Packets), || {
                ScenarioError::new("buffer_admission", admission_word(s.buffer_admission), "packets (or unset) when buffer_packets is set")
                    .with_related(&["buffer_packets"])
            })?;
        }
        let admission = s.buffer_admission.unwrap_or(if s.buffer_packets.is_some() { Admission::Packets } else { Admission::Bytes });
        Ok((admission, s.buffer_packets.unwrap_or((s.buffer_bytes / mtu).min(u32::MAX as u64) as u32)))
    }

    /// The shared pool's bytes under dynamic sharing, after checking that the buffer fields
    /// agree: a pool and QoS classes count bytes, a pool needs dynamic sharing, each class
    /// holds at least one full packet, and classes partition a static port (FAST'08 §4.1).
    fn switch_buffers(&self, admission: Admission) -> Result<Option<u64>, ScenarioError> {
        let (s, mtu) = (self, self.mtu());
        let dynamic = s.buffer_sharing == BufferSharing::Dynamic;
        let bytes_only = "bytes (buffer_packets unset) under a shared pool or QoS classes";
        check(admission == Admission::Bytes || (!dynamic && s.qos_classes == 1), || {
            let related: &'static [&'static str] =
                if dynamic { &["buffer_sharing", "buffer_packets"] } else { &["qos_classes", "buffer_packets"] };
            ScenarioError::new("buffer_admission", admission_word(Some(admission)), bytes_only).with_related(related)
        })?;
        if let Some(pool) = s.buffer_pool_bytes {
            check(dynamic, || {
                ScenarioError::new("buffer_pool_bytes", format_bytes(pool), "unset unless buffer_sharing is dynamic")
                    .with_related(&["buffer_sharing"])
            })?;
            check(pool >= mtu, || {
                let allowed = format!("at least one full packet ({mtu} B)");
                ScenarioError::new("buffer_pool_bytes", format_bytes(pool), allowed)
            })?;
        }
        let n = s.qos_classes as u64;
        check(n == 1 || !dynamic, || {
            ScenarioError::new("qos_classes", n, "1 under a shared pool (classes partition a static port buffer)")
                .with_related(&["buffer_sharing"])
        })?;
        check(s.buffer_bytes / n >= mtu, || {
            let most = (s.buffer_bytes / mtu).min(8);
            ScenarioError::new("qos_classes", n, format!("1 to {most}: each class holds a full packet ({mtu} B)"))
                .with_related(&["buffer_bytes"])
        })?;
        // unset: the pool holds what the switch's static buffers would, one per port (the
        // client's and each server's)
        if !dynamic {
            return Ok(None);
        }
        let pool = s.buffer_pool_bytes.unwrap_or(s.buffer_bytes.saturating_mul(s.servers as u64 + 1));
        // The congested port settles at alpha / (1 + alpha) of the pool, one packet over at
        // most; what it leaves must still let another port take a full packet (free >= MTU
        // and alpha x free >= MTU), or the star's ACK ports, which the world never lets drop
        // (`Conns::request_dropped`), could find the pool full.
        let alpha = s.dt_alpha;
        let least = ((1.0 + alpha) * (mtu as f64) * (1.0 + 1f64.max(1.0 / alpha))).ceil() as u64;
        check(pool >= least, || {
            let allowed = format!(
                "at least {least} B at dt_alpha {alpha}: a port congested at alpha/(1+alpha) of the pool \
                 must leave a full packet ({mtu} B) for another"
            );
            ScenarioError::new("buffer_pool_bytes", format_bytes(pool), allowed)
                .with_related(&["dt_alpha", "buffer_sharing", "buffer_bytes"])
        })?;
        Ok(Some(pool))
    }

    /// The shaper's bucket, resolved (`None`: no shaper), after checking that the shaper's
    /// fields agree with the rest: it is slower than the link it gates, its bucket passes
    /// the largest packet (tbf drops a packet larger than its bucket), and its queue is
    /// the port's static byte buffer (tbf's bfifo), so no pool, classes, packet count or
    /// PAUSE; the synchronized reads' clients are whom it shapes.
    fn shaper(&self) -> Result<Option<u64>, ScenarioError> {
        let s = self;
        let Some(rate) = s.shaper_rate_bps else {
            if let Some(b) = s.shaper_burst_bytes {
                return Err(ScenarioError::new("shaper_burst_bytes", format_bytes(b), "unset unless shaper_rate is set")
                    .with_related(&["shaper_rate_bps"]));
            }
            return Ok(None);
        };
        check(rate <= s.rate_bps, || {
            let allowed = format!("at most rate ({}): a shaper gates a link, it cannot send faster", format_rate(s.rate_bps));
            ScenarioError::new("shaper_rate_bps", format_rate(rate), allowed).with_related(&["rate_bps"])
        })?;
        let largest = if s.udp_fraction > 0.0 { s.mtu().max(s.udp_packet_bytes as u64) } else { s.mtu() };
        let burst = s.shaper_burst_bytes.unwrap_or(largest);
        check(burst >= largest, || {
            let allowed = format!("at least the largest packet ({largest} B): tbf drops a packet its bucket cannot hold");
            ScenarioError::new("shaper_burst_bytes", format_bytes(burst), allowed).with_related(&["mss_bytes", "header_bytes"])
        })?;
        let own_queue = "unset or their defaults with a shaper: its queue is the port's static byte buffer (tbf's bfifo)";
        let conflicts: [(&'static str, bool, String); 6] = [
            ("buffer_packets", s.buffer_packets.is_some(), s.buffer_packets.unwrap_or(0).to_string()),
            ("buffer_admission", s.buffer_admission.is_some_and(|a| a != Admission::Bytes), admission_word(s.buffer_admission)),
            ("buffer_sharing", s.buffer_sharing != BufferSharing::Static, word(&s.buffer_sharing)),
            ("qos_classes", s.qos_classes != 1, s.qos_classes.to_string()),
            ("pause", s.pause, "on".into()),
            ("workload", s.workload != Workload::SyncRead, word(&s.workload)),
        ];
        for (name, set, value) in conflicts {
            check(!set, || {
                let allowed = if name == "workload" { "sync_read with a shaper (it shapes the clients' ports)" } else { own_queue };
                ScenarioError::new(name, value, allowed).with_related(&["shaper_rate_bps"])
            })?;
        }
        Ok(Some(burst))
    }

    /// Constraints between fields that derive nothing.
    fn check_combinations(&self) -> Result<(), ScenarioError> {
        let s = self;
        let flows = s.servers as u64 * s.clients as u64;
        check(flows <= MAX_SERVERS as u64, || {
            let most = MAX_SERVERS as u64 / s.servers as u64;
            ScenarioError::new("clients", s.clients, format!("1 to {most}: servers x clients at most {MAX_SERVERS} connections"))
                .with_related(&["servers"])
        })?;
        // The serialization schemes and ICTCP schedule one client's connections (Osada et
        // al. §4, Wu et al.): several clients would each need their own, not modelled.
        let one_client_only = !matches!(s.mitigation, Scheme::Ntcp | Scheme::Tcpfg);
        check(s.clients == 1 || !one_client_only, || {
            ScenarioError::new("mitigation", word(&s.mitigation), "ntcp or tcpfg when clients > 1 (the schemes schedule one client's connections)")
                .with_related(&["clients"])
        })?;
        if let Some(a) = s.active_servers {
            check(a <= s.servers, || {
                ScenarioError::new("active_servers", a, format!("1 to servers ({})", s.servers)).with_related(&["servers"])
            })?;
        }
        let largest = s.mtu().max(1500);
        check(s.udp_packet_bytes as u64 <= largest, || {
            ScenarioError::new("udp_packet_bytes", format_bytes(s.udp_packet_bytes as u64), format!("28B to the MTU ({largest}B)"))
        })?;
        // PRR and RACK-TLP act on the SACK scoreboard (RFC 6937 §3 pipe, RFC 8985 §2)
        for (on, name) in [(s.prr, "prr"), (s.rack_tlp, "rack_tlp")] {
            check(!on || s.tcp == TcpVariant::Sack, || {
                ScenarioError::new(name, "on", "off unless tcp is sack (it needs the SACK scoreboard)")
                    .with_related(&["tcp"])
            })?;
        }
        check(s.pause_xon_bytes < s.pause_xoff_bytes, || {
            let (on, off) = (format_bytes(s.pause_xon_bytes), format_bytes(s.pause_xoff_bytes));
            let e = ScenarioError::new("pause_xon_bytes", on, format!("below pause_xoff ({off})"));
            e.with_related(&["pause_xoff_bytes"])
        })?;
        check(s.tcp_rules != TcpRules::Ns3 || s.tcp == TcpVariant::Newreno, || {
            ScenarioError::new("tcp_rules", "ns3", "rfc or ns2 unless tcp is newreno (ns-3's rules are modelled for NewReno without SACK)")
                .with_related(&["tcp"])
        })
    }

    /// The QoS fields agree: the victim's class exists (and so does the victim), weights
    /// are given only to `wrr` and one per class, PFC has PAUSE and classes to act on.
    fn check_classes(&self) -> Result<(), ScenarioError> {
        let s = self;
        let n = s.qos_classes;
        if s.victim_class != 0 {
            check(s.victim, || {
                ScenarioError::new("victim_class", s.victim_class, "0 unless victim is on").with_related(&["victim"])
            })?;
            check(s.victim_class < n, || {
                let allowed = format!("0 to qos_classes - 1 ({})", n - 1);
                ScenarioError::new("victim_class", s.victim_class, allowed).with_related(&["qos_classes"])
            })?;
        }
        if let Some(w) = &s.qos_weights {
            let text = w.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            check(s.qos_scheduler == ClassScheduler::Wrr, || {
                let e = ScenarioError::new("qos_weights", &text, "unset unless qos_scheduler is wrr");
                e.with_related(&["qos_scheduler"])
            })?;
            check(w.len() == n as usize, || {
                let allowed = format!("one weight per class ({n} weights)");
                ScenarioError::new("qos_weights", &text, allowed).with_related(&["qos_classes"])
            })?;
        }
        if s.pfc {
            check(s.pause, || ScenarioError::new("pfc", "on", "off unless pause is on").with_related(&["pause"]))?;
            check(n >= 2, || {
                ScenarioError::new("pfc", "on", "off unless qos_classes is 2 or more (it pauses one class)")
                    .with_related(&["qos_classes"])
            })?;
        }
        Ok(())
    }

    /// The workload's own fields agree with the rest: Riak's replicas and quorum fit the
    /// cluster, and fields that make no sense for the other workload keep their defaults.
    fn check_workload(&self) -> Result<(), ScenarioError> {
        let (s, d) = (self, ScenarioSpec::default());
        let name = word(&s.workload);
        if s.workload != Workload::Riak {
            let riak_only = [
                ("get_rate", s.get_rate != d.get_rate, s.get_rate.to_string()),
                ("replicas", s.replicas != d.replicas, s.replicas.to_string()),
                ("read_quorum", s.read_quorum != d.read_quorum, s.read_quorum.to_string()),
                ("reply_bytes", s.reply_bytes != d.reply_bytes, format_bytes(s.reply_bytes)),
                ("reply_size_dist", s.reply_size_dist != d.reply_size_dist, word(&s.reply_size_dist)),
                ("riak_transport", s.riak_transport != d.riak_transport, word(&s.riak_transport)),
                ("dist_buf_busy_limit_bytes", s.dist_buf_busy_limit_bytes != d.dist_buf_busy_limit_bytes,
                    format_bytes(s.dist_buf_busy_limit_bytes)),
            ];
            for (name, set, value) in riak_only {
                check(!set, || {
                    ScenarioError::new(name, value, "its default unless workload is riak").with_related(&["workload"])
                })?;
            }
        }
        // the one-shot flows' own fields
        let flows_only = [
            ("incasts", s.incasts != d.incasts && s.workload != Workload::Incast, s.incasts.to_string(), "incast"),
            ("placement", s.placement != d.placement && !s.workload.is_flows(), word(&s.placement), "incast, shuffle or permutation"),
            ("start_ps", s.start_ps != 0 && !s.workload.is_flows(), format_ps(s.start_ps), "incast, shuffle or permutation"),
            ("start_spread_ps", s.start_spread_ps != 0 && !s.workload.is_flows(), format_ps(s.start_spread_ps), "incast, shuffle or permutation"),
        ];
        for (field, set, value, workloads) in flows_only {
            check(!set, || {
                ScenarioError::new(field, value, format!("its default unless workload is {workloads}")).with_related(&["workload"])
            })?;
        }
        if matches!(s.workload, Workload::Shuffle | Workload::Permutation) {
            check(s.servers >= 2, || {
                ScenarioError::new("servers", s.servers, format!("at least 2 with workload {name} (hosts sending to one another)"))
                    .with_related(&["workload"])
            })?;
        }
        if s.workload == Workload::SyncRead {
            // one think-time model: measured times, or jitter's uniform one
            return check(s.think_times_ps.is_none() || s.response_jitter_ps == 0, || {
                ScenarioError::new("think_times_ps", durations(&s.think_times_ps), "unset when jitter is above 0s (one think time per request: measured or uniform)")
                    .with_related(&["response_jitter_ps"])
            });
        }
        if s.workload == Workload::Riak {
            check(s.replicas < s.servers, || {
                let allowed = format!("replicas ({}) below servers ({}): each get asks that many other nodes", s.replicas, s.servers);
                ScenarioError::new("replicas", s.replicas, allowed).with_related(&["servers"])
            })?;
            check(s.read_quorum <= s.replicas, || {
                let allowed = format!("read_quorum ({}) at most replicas ({})", s.read_quorum, s.replicas);
                ScenarioError::new("read_quorum", s.read_quorum, allowed).with_related(&["replicas"])
            })?;
            check(s.riak_transport == RiakTransport::ErlangDist || s.dist_buf_busy_limit_bytes == d.dist_buf_busy_limit_bytes, || {
                let allowed = "its default unless riak_transport is erlang_dist";
                ScenarioError::new("dist_buf_busy_limit_bytes", format_bytes(s.dist_buf_busy_limit_bytes), allowed)
                    .with_related(&["riak_transport"])
            })?;
        }
        // blocks, clients and connection schedules belong to the synchronized reads
        let riak = s.workload == Workload::Riak;
        let no_blocks = if riak {
            "unset with workload riak (its gets run for the duration; no blocks)".to_string()
        } else {
            format!("unset with workload {name} (it runs until its flows are delivered, or for the duration)")
        };
        let off = format!("off with workload {name}");
        let zero = format!("0 with workload {name}");
        let sync_read_only: Vec<(&'static str, bool, String, String)> = vec![
            ("blocks", s.blocks.is_some(), s.blocks.unwrap_or(0).to_string(), no_blocks.clone()),
            ("sru_bytes", riak && s.sru_bytes.is_some(), format_bytes(s.sru_bytes.unwrap_or(0)), no_blocks.clone()),
            // (an incast may split a fixed block over its senders, SIGCOMM'09's 1 MB / N)
            ("block_bytes", s.block_bytes.is_some() && s.workload != Workload::Incast, format_bytes(s.block_bytes.unwrap_or(0)), no_blocks.clone()),
            ("active_servers", s.active_servers.is_some(), s.active_servers.unwrap_or(0).to_string(), no_blocks),
            ("clients", s.clients != 1, s.clients.to_string(), format!("1 with workload {name} (it has no clients)")),
            ("handshake", s.handshake, "on".into(), format!("{off} (its connections are made at the start)")),
            ("mitigation", !matches!(s.mitigation, Scheme::Ntcp | Scheme::Tcpfg), word(&s.mitigation),
                format!("ntcp or tcpfg with workload {name} (the schemes schedule one client's blocks)")),
            ("udp_fraction", s.udp_fraction > 0.0, s.udp_fraction.to_string(), zero.clone()),
            ("response_jitter_ps", s.response_jitter_ps > 0, format_ps(s.response_jitter_ps), zero.clone()),
            ("think_times_ps", s.think_times_ps.is_some(), durations(&s.think_times_ps), format!("unset with workload {name}")),
            ("victim", riak && s.victim, "on".into(), "off with workload riak (its nodes' own traffic is many-to-many)".into()),
            ("background_load", riak && s.background_load > 0.0, s.background_load.to_string(), zero),
        ];
        for (name, set, value, allowed) in sync_read_only {
            check(!set, || ScenarioError::new(name, value, allowed).with_related(&["workload"]))?;
        }
        Ok(())
    }

    /// Hosts of a world: servers (Riak: nodes), then clients, then the victim's two.
    pub fn hosts(&self) -> u32 {
        self.workload_hosts() + 2 * self.victim as u32
    }

    /// The bulk flows' fields agree: hosts that exist, no flow to itself, a rate no faster
    /// than the link, and nothing set without flows. Returns each flow's (sender, receiver).
    pub fn bulk_pairs(&self) -> Result<Vec<(u32, u32)>, ScenarioError> {
        let s = self;
        let list = |v: &Option<Vec<u32>>| v.as_ref().map(|l| l.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
        if s.bulk_flows == 0 {
            for (name, set) in [("bulk_from", list(&s.bulk_from)), ("bulk_to", list(&s.bulk_to))] {
                if let Some(v) = set {
                    return Err(ScenarioError::new(name, v, "unset unless bulk_flows is 1 or more").with_related(&["bulk_flows"]));
                }
            }
            if let Some(r) = s.bulk_rate_bps {
                let e = ScenarioError::new("bulk_rate_bps", format_rate(r), "unset unless bulk_flows is 1 or more");
                return Err(e.with_related(&["bulk_flows"]));
            }
            return Ok(vec![]);
        }
        // host numbers name a star's or a leaf-spine's hosts beside the reads or gets, or a fat
        // tree's hosts beside its one-shot flows (the long flow next to an incast: NDP
        // SIGCOMM'17 Fig. 19); on a fat tree both ends are given, it has no clients to default to
        let fat_tree = s.topology == TopologyKind::FatTree;
        let one_shot = matches!(s.workload, Workload::Incast | Workload::Shuffle | Workload::Permutation);
        check(if fat_tree { one_shot } else { !one_shot }, || {
            ScenarioError::new(
                "bulk_flows",
                s.bulk_flows,
                "0 unless workload is sync_read or riak on a star or a leaf-spine, or incast, shuffle or permutation on a fat tree",
            )
            .with_related(&["workload", "topology"])
        })?;
        if fat_tree {
            for (name, v) in [("bulk_from", &s.bulk_from), ("bulk_to", &s.bulk_to)] {
                check(v.is_some(), || {
                    ScenarioError::new(name, "unset", "host numbers on a fat tree (it has no servers or clients to default to)")
                        .with_related(&["bulk_flows", "topology"])
                })?;
            }
        }
        if let (Some(r), true) = (s.bulk_rate_bps, s.transport != Transport::Tcp) {
            // a receiver-driven flow is one write: its length goes in every packet
            let allowed = format!("unset with transport {} (a receiver-driven flow writes once, backlogged)", word(&s.transport));
            return Err(ScenarioError::new("bulk_rate_bps", format_rate(r), allowed).with_related(&["transport"]));
        }
        let hosts = if fat_tree { s.fat_tree_k.map_or(0, |k| k * k * k / 4) } else { s.hosts() };
        for (name, v) in [("bulk_from", &s.bulk_from), ("bulk_to", &s.bulk_to)] {
            if let Some(l) = v {
                check(!l.is_empty() && l.iter().all(|&h| h < hosts), || {
                    let places = if fat_tree { "the fat tree's hosts" } else { "servers, then clients, then the victim's two" };
                    let allowed = format!("host numbers from 0 to {} ({places})", hosts.max(1) - 1);
                    ScenarioError::new(name, list(v).unwrap_or_default(), allowed).with_related(&["servers", "clients"])
                })?;
            }
        }
        if let Some(r) = s.bulk_rate_bps {
            check(r <= s.rate_bps, || {
                let allowed = format!("at most rate ({}): a flow cannot write faster than its link", format_rate(s.rate_bps));
                ScenarioError::new("bulk_rate_bps", format_rate(r), allowed).with_related(&["rate_bps"])
            })?;
        }
        // unset receivers: the first client, or node 0 of a Riak cluster
        let first_client = if s.workload == Workload::Riak { 0 } else { s.servers };
        let to = s.bulk_to.clone().unwrap_or_else(|| vec![first_client]);
        let from = match &s.bulk_from {
            Some(l) => l.clone(),
            None => (0..s.servers).filter(|h| !to.contains(h)).collect(),
        };
        check(!from.is_empty(), || {
            ScenarioError::new("bulk_to", list(&Some(to.clone())).unwrap_or_default(), "leaving a server to send from")
                .with_related(&["bulk_from", "servers"])
        })?;
        let pairs: Vec<(u32, u32)> = (0..s.bulk_flows as usize).map(|i| (from[i % from.len()], to[i % to.len()])).collect();
        if let Some(&(h, _)) = pairs.iter().find(|(a, b)| a == b) {
            let allowed = format!("no flow from a host to itself (flow from host {h} to host {h})");
            return Err(ScenarioError::new("bulk_from", list(&Some(from)).unwrap_or_default(), allowed).with_related(&["bulk_to"]));
        }
        Ok(pairs)
    }

    /// RTOmin: given, or FAST'08's 200 ms, or TCPFG's 200 us; at most RTOmax.
    fn rto_min(&self) -> Result<u64, ScenarioError> {
        let s = self;
        let rto_min_ps = s.rto_min_ps.unwrap_or(if s.mitigation == Scheme::Tcpfg { TCPFG_RTO_MIN_PS } else { DEFAULT_RTO_MIN_PS });
        check(s.rto_max_ps >= rto_min_ps, || {
            let (lo, hi) = (format_ps(rto_min_ps), format_ps(s.rto_max_ps));
            ScenarioError::new("rto_min_ps", &lo, format!("rto_min ({lo}) at most rto_max ({hi}); a bare number is seconds"))
                .with_related(&["rto_max_ps"])
        })?;
        Ok(rto_min_ps)
    }

    /// Several connections per incast sender, and the steady-state window: `flows_per_sender`
    /// is an incast's (its senders' connections to their receiver; at most 2^20 in all), and
    /// `measure_from_ps` needs a duration to end before (the window is measure_from to it).
    fn check_steady(&self, stop: StopAt) -> Result<(), ScenarioError> {
        let s = self;
        if s.flows_per_sender != 1 {
            check(s.workload == Workload::Incast, || {
                ScenarioError::new("flows_per_sender", s.flows_per_sender, "1 unless workload is incast (its senders' connections to their receiver)")
                    .with_related(&["workload"])
            })?;
            let conns = s.flows_per_sender as u64 * s.servers as u64 * s.incasts as u64;
            check(conns <= MAX_FLOW_CONNECTIONS, || {
                let allowed = format!("at most {MAX_FLOW_CONNECTIONS} connections in all (flows_per_sender x servers x incasts = {conns})");
                ScenarioError::new("flows_per_sender", s.flows_per_sender, allowed).with_related(&["servers", "incasts"])
            })?;
        }
        if let Some(m) = s.measure_from_ps {
            let StopAt::Time(end) = stop else {
                let allowed = "unset unless duration is set (the steady-state window runs from measure_from to the duration)";
                return Err(ScenarioError::new("measure_from_ps", format_ps(m), allowed).with_related(&["duration_ps", "blocks"]));
            };
            check(m < end.0, || {
                let allowed = format!("before the duration ({}): the steady-state window runs from measure_from to it", format_ps(end.0));
                ScenarioError::new("measure_from_ps", format_ps(m), allowed).with_related(&["duration_ps"])
            })?;
        }
        Ok(())
    }

    /// After a block count, or after a duration (FAST'08's 20 s when neither is given).
    fn stop(&self) -> Result<StopAt, ScenarioError> {
        match (self.blocks, self.duration_ps) {
            (Some(_), Some(d)) => Err(ScenarioError::new("duration_ps", format_ps(d), "either a duration or a block count, not both")
                .with_related(&["blocks"])),
            (Some(b), None) => Ok(StopAt::Blocks(b)),
            // one-shot flows: until they are all delivered (one "block" of flows)
            (None, None) if self.workload.is_flows() => Ok(StopAt::Blocks(1)),
            (None, d) => Ok(StopAt::Time(Time(d.unwrap_or(DEFAULT_DURATION_PS)))),
        }
    }

    /// Bytes each server returns per block: the SRU (fixed-SRU mode), or the block split
    /// over the servers (fixed-block mode).
    fn per_server_bytes(&self) -> Result<Vec<u64>, ScenarioError> {
        let n = self.servers as u64;
        match (self.block_bytes, self.sru_bytes) {
            (Some(block), Some(_)) => Err(ScenarioError::new(
                "block_bytes",
                format_bytes(block),
                "either block (fixed-block mode) or sru (fixed-SRU mode), not both",
            )
            .with_related(&["sru_bytes"])),
            (Some(block), None) => {
                check(block >= n, || {
                    ScenarioError::new("block_bytes", format_bytes(block), format!("at least one byte per server ({n} B)")).with_related(&["servers"])
                })?;
                // Fixed-block mode (001_e0dada207805edc8.txt: "each of N servers respond with
                // 1 MB / N bytes"): the remainder goes to the first servers so the block is exact.
                let (q, r) = (block / n, block % n);
                Ok((0..n).map(|i| q + u64::from(i < r)).collect())
            }
            (None, sru) => Ok(vec![sru.unwrap_or(DEFAULT_SRU_BYTES); self.servers as usize]),
        }
    }

    /// The advertised window and the scheduling scheme with its thresholds, from Osada et
    /// al.'s model where a scheme needs it.
    fn scheduling(&self, per_server_bytes: &[u64]) -> Result<(u64, Mitigation), ScenarioError> {
        let s = self;
        // the model takes one server's part: the SRU, or the block's floor share
        let part_bytes = s.block_bytes.map_or(per_server_bytes[0], |b| b / s.servers as u64);
        let thresholds = || {
            serialization_model(s.rate_bps, s.rtt_ps, s.mss_bytes, part_bytes, s.header_bytes)
                .map(|m| m.scheduler_thresholds())
                .map_err(|e| match e.param {
                    // BaseBDP = rate x RTT: too few packets, name the RTT and the rate beside it
                    "base_rtt_ps" => ScenarioError { param: "rtt_ps", ..e }.with_related(&["rate_bps", "mss_bytes", "mitigation"]),
                    _ => e.with_related(&["mitigation"]),
                })
        };
        let rwnd_bytes = match (s.rwnd_bytes, s.mitigation) {
            (Some(r), _) => r,
            // Under CCS and NCCS the client advertises BaseBDP as its window (§4.2, Eq. (1)),
            // capped at what TCP can advertise (a 1 s RTT at 10 Gbps is 1.25 GB)
            (None, Scheme::Ccs | Scheme::Nccs) => thresholds()?.bdp_bytes.min(MAX_RWND_BYTES),
            (None, _) => DEFAULT_RWND_BYTES,
        };
        check(rwnd_bytes >= s.mss_bytes as u64, || {
            ScenarioError::new("rwnd_bytes", format_bytes(rwnd_bytes), format!("at least one MSS ({} B)", s.mss_bytes)).with_related(&["mss_bytes"])
        })?;
        let (count_sent, check_at_open) = (s.condition_i != ConditionI::Delivered, s.condition_i == ConditionI::Open);
        let mitigation = match s.mitigation {
            Scheme::Ntcp | Scheme::Tcpfg => Mitigation::None,
            Scheme::Ictcp => Mitigation::Ictcp,
            Scheme::Ccs => Mitigation::Ccs,
            Scheme::Nccs => Mitigation::Nccs {
                k: s.nccs_k,
                start_next_at_remaining: thresholds()?.start_next_at_remaining,
                count_sent,
                check_at_open,
            },
            Scheme::Ocs => {
                let t = thresholds()?;
                Mitigation::Ocs {
                    set_size: t.set_size,
                    window_bytes: t.window_bytes,
                    start_next_at_remaining: t.start_next_at_remaining,
                    bdp_bytes: t.bdp_bytes,
                    count_sent,
                    check_at_open,
                }
            }
        };
        Ok((rwnd_bytes, mitigation))
    }
}

impl Scenario {
    /// What validation derived from the spec, for a front to show: the link delay, the
    /// buffer as ports count it, and the scheduling scheme with its thresholds.
    pub fn derived_json(&self) -> serde_json::Value {
        serde_json::json!({
            "link_delay_ps": self.link_delay.0,
            "buffer_admission": self.admission,
            "buffer_packets": self.buffer_packets,
            "buffer_pool_bytes": self.buffer_pool_bytes,
            "per_server_bytes_first": self.per_server_bytes[0],
            "mitigation": self.mitigation,
            "trunk_rate_bps": self.fabric.trunk_bps,
        })
    }
}

/// A list of durations as the scenario spells it ("20us,70us").
fn durations(v: &Option<Vec<u64>>) -> String {
    v.as_deref().unwrap_or_default().iter().map(|&ps| format_ps(ps)).collect::<Vec<_>>().join(",")
}

/// An enum as the scenario spells it.
fn word(v: &impl Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn admission_word(a: Option<Admission>) -> String {
    serde_json::to_value(a).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::serialization_model::serialization_model;

    fn spec() -> ScenarioSpec {
        ScenarioSpec { servers: 8, ..ScenarioSpec::default() }
    }

    #[test]
    fn flows_per_sender_is_an_incasts_and_measure_from_needs_a_duration_after_it() {
        let incast = ScenarioSpec { workload: Workload::Incast, flows_per_sender: 100, duration_ps: Some(PS_PER_S), ..spec() };
        assert!(incast.validate().is_ok());
        let param = |s: ScenarioSpec| s.validate().unwrap_err().param;
        assert_eq!(param(ScenarioSpec { flows_per_sender: 2, ..spec() }), "flows_per_sender", "sync_read's connections");
        assert_eq!(param(ScenarioSpec { flows_per_sender: 65_536, servers: 100, ..incast.clone() }), "flows_per_sender", "over 2^20");
        let from = |m: u64, s: ScenarioSpec| ScenarioSpec { measure_from_ps: Some(m), ..s };
        assert!(from(PS_PER_S / 2, incast.clone()).validate().is_ok());
        assert_eq!(param(from(PS_PER_S, incast.clone())), "measure_from_ps", "at the duration: an empty window");
        // one-shot flows without a duration run until delivered: no end to measure to
        assert_eq!(param(from(1, ScenarioSpec { duration_ps: None, ..incast.clone() })), "measure_from_ps");
        assert_eq!(param(from(1, ScenarioSpec { blocks: Some(3), ..spec() })), "measure_from_ps");
        // sync reads' default duration (20 s) is a duration
        assert!(from(PS_PER_S, spec()).validate().is_ok());
        // Swift's floor is Swift's
        assert_eq!(param(ScenarioSpec { swift_min_cwnd_floor: 1.0, ..incast.clone() }), "swift_min_cwnd_floor");
        let swift = ScenarioSpec { transport: crate::host::Transport::Swift, swift_min_cwnd_floor: 1.0, ..incast };
        assert!(swift.validate().is_ok());
        assert_eq!(param(ScenarioSpec { swift_min_cwnd_floor: 0.0001, ..swift }), "swift_min_cwnd_floor", "below 0.001 (§3.4)");
    }

    #[test]
    fn unset_fields_resolve_to_fast08_table1() {
        let sc = spec().validate().unwrap();
        assert_eq!(sc.spec.sru_bytes, Some(256 * 1024));
        assert_eq!((sc.rto_min, sc.rwnd_bytes), (Time(200 * PS_PER_MS), 20 * 1460));
        assert_eq!(sc.stop, StopAt::Time(Time(20 * PS_PER_S)));
        assert_eq!(sc.link_delay, Time(25 * PS_PER_US), "RTT 100 us over the star's four links");
    }

    #[test]
    fn a_shaper_is_slower_than_its_link_its_bucket_passes_a_full_packet_and_its_queue_is_the_static_buffer() {
        let shaped = ScenarioSpec { shaper_rate_bps: Some(100_000_000), ..spec() };
        // unset bucket: one full packet (1460 + 40 B)
        assert_eq!(shaped.validate().unwrap().spec.shaper_burst_bytes, Some(1500));
        assert_eq!(spec().validate().unwrap().spec.shaper_burst_bytes, None);
        let refused = |s: ScenarioSpec| {
            let e = s.validate().unwrap_err();
            (e.param, e.related)
        };
        let fast = ScenarioSpec { shaper_rate_bps: Some(2_000_000_000), ..spec() };
        assert_eq!(refused(fast), ("shaper_rate_bps", &["rate_bps"][..]));
        let small = ScenarioSpec { shaper_burst_bytes: Some(1499), ..shaped.clone() };
        assert_eq!(refused(small), ("shaper_burst_bytes", &["mss_bytes", "header_bytes"][..]));
        let udp = ScenarioSpec { udp_fraction: 0.1, udp_packet_bytes: 1500, mss_bytes: 1000, shaper_burst_bytes: Some(1040), ..shaped.clone() };
        assert_eq!(refused(udp).0, "shaper_burst_bytes", "a UDP datagram larger than the bucket");
        let alone = ScenarioSpec { shaper_burst_bytes: Some(6056), ..spec() };
        assert_eq!(refused(alone), ("shaper_burst_bytes", &["shaper_rate_bps"][..]));
        let pool = ScenarioSpec { buffer_sharing: BufferSharing::Dynamic, ..shaped.clone() };
        assert_eq!(refused(pool), ("buffer_sharing", &["shaper_rate_bps"][..]));
        let packets = ScenarioSpec { buffer_packets: Some(5), ..shaped.clone() };
        assert_eq!(refused(packets), ("buffer_packets", &["shaper_rate_bps"][..]));
        let riak = ScenarioSpec { workload: Workload::Riak, ..shaped.clone() };
        assert_eq!(refused(riak), ("workload", &["shaper_rate_bps"][..]));
        let pause = ScenarioSpec { pause: true, ..shaped };
        assert_eq!(refused(pause), ("pause", &["shaper_rate_bps"][..]));
    }

    #[test]
    fn prr_and_rack_tlp_need_the_sack_scoreboard() {
        for (prr, rack_tlp, name) in [(true, false, "prr"), (false, true, "rack_tlp")] {
            let s = ScenarioSpec { prr, rack_tlp, ..spec() };
            let e = s.validate().unwrap_err();
            assert_eq!((e.param, e.related), (name, &["tcp"][..]));
            assert!(e.to_string().contains("off unless tcp is sack"), "{e}");
            assert!(ScenarioSpec { tcp: TcpVariant::Sack, ..s }.validate().is_ok());
        }
    }

    #[test]
    fn init_cwnd_resolves_to_tcps_2_and_stays_unset_for_ndp_and_credit_whose_paths_decide_it() {
        let resolved = |transport, iw| ScenarioSpec { transport, init_cwnd_segments: iw, workload: Workload::Incast, ..spec() }.validate().unwrap().spec.init_cwnd_segments;
        assert_eq!(resolved(Transport::Tcp, None), Some(TCP_INIT_CWND));
        assert_eq!(resolved(Transport::Swift, None), Some(TCP_INIT_CWND));
        assert_eq!(resolved(Transport::Tcp, Some(10)), Some(10));
        for pulls in [Transport::Ndp, Transport::Credit] {
            let trimming = ScenarioSpec { transport: pulls, trimming: true, workload: Workload::Incast, ..spec() };
            let resolved = |iw| ScenarioSpec { init_cwnd_segments: iw, ..trimming.clone() }.validate().unwrap().spec.init_cwnd_segments;
            assert_eq!(resolved(None), None, "each flow's path BDP (host::Conns::add)");
            assert_eq!(resolved(Some(23)), Some(23));
        }
    }

    #[test]
    fn tcpfg_defaults_to_a_200us_rto_min_and_a_given_one_wins_osada_5_1() {
        let fg = ScenarioSpec { mitigation: Scheme::Tcpfg, ..spec() };
        assert_eq!(fg.validate().unwrap().rto_min, Time(200 * PS_PER_US));
        let given = ScenarioSpec { rto_min_ps: Some(PS_PER_MS), ..fg };
        assert_eq!(given.validate().unwrap().rto_min, Time(PS_PER_MS));
    }

    #[test]
    fn ccs_and_nccs_advertise_base_bdp_unless_a_window_is_given_osada_eq_1() {
        for scheme in [Scheme::Ccs, Scheme::Nccs] {
            // 1 Gbps x 100 us / 8 = 12,500 B
            assert_eq!(ScenarioSpec { mitigation: scheme, ..spec() }.validate().unwrap().rwnd_bytes, 12_500);
        }
        let huge_bdp = ScenarioSpec { mitigation: Scheme::Ccs, rtt_ps: PS_PER_S, rate_bps: 10_000_000_000, ..spec() };
        assert_eq!(huge_bdp.validate().unwrap().rwnd_bytes, MAX_RWND_BYTES, "1.25 GB of BDP, capped at 2^30 B");
        let given = ScenarioSpec { mitigation: Scheme::Ccs, rwnd_bytes: Some(65_536), ..spec() };
        assert_eq!(given.validate().unwrap().rwnd_bytes, 65_536);
    }

    #[test]
    fn nccs_and_ocs_take_their_thresholds_from_the_model_as_their_part_and_reading_say() {
        let part = 32 * 1024;
        let t = serialization_model(1_000_000_000, 100 * PS_PER_US, 1460, part, 40).unwrap().scheduler_thresholds();
        let ocs = ScenarioSpec { sru_bytes: Some(part), mitigation: Scheme::Ocs, condition_i: ConditionI::Open, ..spec() };
        assert_eq!(
            ocs.validate().unwrap().mitigation,
            Mitigation::Ocs {
                set_size: t.set_size,
                window_bytes: t.window_bytes,
                start_next_at_remaining: t.start_next_at_remaining,
                bdp_bytes: t.bdp_bytes,
                count_sent: true,
                check_at_open: true,
            }
        );
        // fixed-block mode: the model takes one server's floor share of the block
        let nccs = ScenarioSpec { block_bytes: Some(8 * part + 7), mitigation: Scheme::Nccs, nccs_k: 2, ..spec() };
        let nccs = ScenarioSpec { condition_i: ConditionI::Delivered, ..nccs };
        assert_eq!(
            nccs.validate().unwrap().mitigation,
            Mitigation::Nccs { k: 2, start_next_at_remaining: t.start_next_at_remaining, count_sent: false, check_at_open: false }
        );
    }

    #[test]
    fn qos_and_pfc_fields_are_refused_naming_the_field() {
        let refused = |s: ScenarioSpec| {
            let e = s.validate().unwrap_err();
            (e.param, e.allowed)
        };
        let classes = ScenarioSpec { qos_classes: 2, ..spec() };
        let (p, a) = refused(ScenarioSpec { victim_class: 1, ..classes.clone() });
        assert_eq!((p, a.as_str()), ("victim_class", "0 unless victim is on"));
        let (p, a) = refused(ScenarioSpec { victim: true, victim_class: 2, ..classes.clone() });
        assert_eq!((p, a.as_str()), ("victim_class", "0 to qos_classes - 1 (1)"));
        assert!(ScenarioSpec { victim: true, victim_class: 1, ..classes.clone() }.validate().is_ok());
        let (p, a) = refused(ScenarioSpec { qos_weights: Some(vec![3, 1]), ..classes.clone() });
        assert_eq!((p, a.as_str()), ("qos_weights", "unset unless qos_scheduler is wrr"));
        let wrr = ScenarioSpec { qos_scheduler: ClassScheduler::Wrr, ..classes.clone() };
        let (p, a) = refused(ScenarioSpec { qos_weights: Some(vec![3, 1, 1]), ..wrr.clone() });
        assert_eq!((p, a.as_str()), ("qos_weights", "one weight per class (2 weights)"));
        assert_eq!(refused(ScenarioSpec { qos_weights: Some(vec![3, 0]), ..wrr.clone() }).0, "qos_weights");
        assert!(ScenarioSpec { qos_weights: Some(vec![3, 1]), ..wrr }.validate().is_ok());
        let (p, a) = refused(ScenarioSpec { pfc: true, ..classes.clone() });
        assert_eq!((p, a.as_str()), ("pfc", "off unless pause is on"));
        assert_eq!(refused(ScenarioSpec { pfc: true, pause: true, ..spec() }).0, "pfc");
        assert!(ScenarioSpec { pfc: true, pause: true, ..classes }.validate().is_ok());
    }

    #[test]
    fn conflicting_fields_are_refused_naming_both() {
        let both = ScenarioSpec { block_bytes: Some(1 << 20), sru_bytes: Some(1 << 16), ..spec() };
        let e = both.validate().unwrap_err();
        assert_eq!((e.param, e.related), ("block_bytes", &["sru_bytes"][..]));
        let stop = ScenarioSpec { blocks: Some(3), duration_ps: Some(PS_PER_S), ..spec() };
        assert_eq!(stop.validate().unwrap_err().related, &["blocks"]);
        let rto = ScenarioSpec { rto_max_ps: PS_PER_MS, ..spec() };
        let e = rto.validate().unwrap_err();
        assert_eq!((e.param, e.value.as_str(), e.related), ("rto_min_ps", "200ms", &["rto_max_ps"][..]));
        assert_eq!(e.allowed, "rto_min (200ms) at most rto_max (1ms); a bare number is seconds");
    }

    #[test]
    fn switch_buffer_combinations_are_refused_naming_the_field() {
        let dynamic = ScenarioSpec { buffer_sharing: BufferSharing::Dynamic, ..spec() };
        // alpha 1 leaves half the pool: it must hold two full packets beyond the congested
        // port's overshoot, 2 x (1500 + 1500) B; alpha 3 leaves a quarter, 4 x 3000
        let small = |pool, dt_alpha| {
            ScenarioSpec { buffer_pool_bytes: Some(pool), dt_alpha, ..dynamic.clone() }.validate()
        };
        assert!(small(6000, 1.0).is_ok() && small(11_999, 3.0).is_err() && small(12_000, 3.0).is_ok());
        assert_eq!(small(5999, 1.0).unwrap_err().param, "buffer_pool_bytes");
        // alpha 1/4: another port may take a quarter of what is free, which must be a packet:
        // 1.25 x 1500 x (1 + 4) = 9375 B
        assert!(small(9374, 0.25).is_err() && small(9375, 0.25).is_ok());
        // unset pool: 9 ports x 32 KiB
        assert_eq!(dynamic.validate().unwrap().buffer_pool_bytes, Some(9 * 32 * 1024));
        let pool = ScenarioSpec { buffer_pool_bytes: Some(1 << 20), ..spec() };
        assert_eq!(pool.validate().unwrap_err().param, "buffer_pool_bytes", "a pool needs dynamic sharing");
        let packets = ScenarioSpec { buffer_packets: Some(20), ..dynamic.clone() };
        assert_eq!(packets.validate().unwrap_err().param, "buffer_admission");
        let both = ScenarioSpec { qos_classes: 2, ..dynamic };
        assert_eq!(both.validate().unwrap_err().param, "qos_classes");
        // 32 KiB in 22 classes leaves 1489 B each, less than a 1500 B packet
        let many = ScenarioSpec { qos_classes: 22, ..spec() }.validate();
        assert!(many.is_err(), "schema range 1-8 or the packet rule refuses it");
        let e = ScenarioSpec { qos_classes: 8, buffer_bytes: 8 * 1500 - 1, ..spec() }.validate().unwrap_err();
        assert_eq!((e.param, e.allowed.as_str()), ("qos_classes", "1 to 7: each class holds a full packet (1500 B)"));
    }

    #[test]
    fn a_scheme_outside_the_model_is_refused_naming_the_rtt() {
        // 1 Gbps x 20 us is 1.7 packets: below the model's two-packet initial window
        let short = ScenarioSpec { rtt_ps: 20 * PS_PER_US, mitigation: Scheme::Ocs, ..spec() };
        assert_eq!(short.validate().unwrap_err().param, "rtt_ps");
        assert!(ScenarioSpec { rtt_ps: 20 * PS_PER_US, ..spec() }.validate().is_ok(), "NTCP needs no model");
    }

    fn leaf_spine(servers: u32, spines: u32) -> ScenarioSpec {
        ScenarioSpec { servers, topology: TopologyKind::LeafSpine, leaves: Some(2), spines: Some(spines), ..spec() }
    }

    #[test]
    fn oversubscription_sets_the_uplink_rate_as_computed_by_hand() {
        // 8 servers on 2 leaves: 4 per leaf at 1 Gbps, 2 spines, 2:1 -> 4 / (2 x 2) = 1 Gbps
        let two_to_one = ScenarioSpec { oversubscription: Some(2.0), ..leaf_spine(8, 2) };
        let f = two_to_one.validate().unwrap().fabric;
        assert_eq!((f.trunk_bps, f.leaves, f.spines, f.oversubscription), (Some(1_000_000_000), 2, 2, Some(2.0)));
        // unset: full bisection, 4 / 2 = 2 Gbps; 7 servers count as 4 on the fuller leaf
        assert_eq!(leaf_spine(7, 2).validate().unwrap().fabric.trunk_bps, Some(2_000_000_000));
        // a given trunk rate: 4 x 1 / (2 x 10) = 0.2, reported as the fabric's ratio
        let fast = ScenarioSpec { trunk_rate_bps: Some(10_000_000_000), ..leaf_spine(8, 2) };
        assert_eq!(fast.validate().unwrap().fabric.oversubscription, Some(0.2));
        // two switches: the trunk runs at the host rate unless given; the star has none
        let two = ScenarioSpec { topology: TopologyKind::TwoSwitch, ..spec() };
        assert_eq!(two.validate().unwrap().fabric.trunk_bps, Some(1_000_000_000));
        let none = Fabric {
            trunk_bps: None,
            leaves: 0,
            spines: 0,
            oversubscription: None,
            fat_tree: None,
            trunk_delay: Time(25 * PS_PER_US),
            hosts: 9, // 8 servers and the client
        };
        assert_eq!(spec().validate().unwrap().fabric, none);
    }

    #[test]
    fn fabric_fields_are_refused_where_they_cannot_apply_naming_them() {
        let refused = |s: ScenarioSpec| {
            let e = s.validate().unwrap_err();
            (e.param, e.related)
        };
        let star_trunk = ScenarioSpec { trunk_rate_bps: Some(10_000_000_000), ..spec() };
        assert_eq!(refused(star_trunk), ("trunk_rate_bps", &["topology"][..]));
        let two = ScenarioSpec { topology: TopologyKind::TwoSwitch, ..spec() };
        assert_eq!(refused(ScenarioSpec { spines: Some(2), ..two.clone() }), ("spines", &["topology"][..]));
        let trunk_rate_bps = Some(2_000_000_000);
        let both = ScenarioSpec { oversubscription: Some(2.0), trunk_rate_bps, ..leaf_spine(8, 2) };
        assert_eq!(refused(both), ("oversubscription", &["trunk_rate_bps"][..]));
        // no switch-to-switch link slower than a host's: 4 per leaf over 2 spines allows 2:1
        let related = &["leaves", "servers", "rate_bps"][..];
        let over = ScenarioSpec { oversubscription: Some(2.5), ..leaf_spine(8, 2) };
        assert_eq!(refused(over), ("oversubscription", related));
        assert_eq!(refused(leaf_spine(2, 2)), ("spines", related), "1 server per leaf over 2 spines");
        let slow = ScenarioSpec { trunk_rate_bps: Some(100_000_000), ..two };
        assert_eq!(refused(slow.clone()), ("trunk_rate_bps", &["rate_bps"][..]));
        // the reason given is the true one: requests and ACKs do drop (`World::dropped`)
        let why = slow.validate().unwrap_err().allowed;
        assert!(why.contains("bottleneck") && !why.contains("never drops"), "{why}");
    }

    #[test]
    fn riak_fields_are_checked_against_the_cluster_and_the_other_workload() {
        let riak = ScenarioSpec { servers: 4, workload: Workload::Riak, ..ScenarioSpec::default() };
        assert!(riak.validate().is_ok());
        let few = ScenarioSpec { servers: 3, ..riak.clone() }.validate().unwrap_err();
        assert_eq!((few.param, few.related), ("replicas", &["servers"][..]));
        assert_eq!(few.allowed, "replicas (3) below servers (3): each get asks that many other nodes");
        let quorum = ScenarioSpec { read_quorum: 4, ..riak.clone() }.validate().unwrap_err();
        assert_eq!((quorum.param, quorum.related), ("read_quorum", &["replicas"][..]));
        // what belongs to the synchronized reads is refused by name with riak
        let refused = [
            (ScenarioSpec { blocks: Some(3), ..riak.clone() }, "blocks"),
            (ScenarioSpec { sru_bytes: Some(1000), ..riak.clone() }, "sru_bytes"),
            (ScenarioSpec { block_bytes: Some(1000), ..riak.clone() }, "block_bytes"),
            (ScenarioSpec { active_servers: Some(2), ..riak.clone() }, "active_servers"),
            (ScenarioSpec { clients: 2, ..riak.clone() }, "clients"),
            (ScenarioSpec { handshake: true, ..riak.clone() }, "handshake"),
            (ScenarioSpec { mitigation: Scheme::Ccs, ..riak.clone() }, "mitigation"),
            (ScenarioSpec { udp_fraction: 0.01, ..riak.clone() }, "udp_fraction"),
            (ScenarioSpec { response_jitter_ps: 1, ..riak.clone() }, "response_jitter_ps"),
            (ScenarioSpec { think_times_ps: Some(vec![0, 1_000_000]), ..riak.clone() }, "think_times_ps"),
            (ScenarioSpec { victim: true, ..riak.clone() }, "victim"),
        ];
        for (s, name) in refused {
            let e = s.validate().unwrap_err();
            assert_eq!((e.param, e.related), (name, &["workload"][..]), "{e}");
        }
        // one think-time model per run, and the measured times' own range
        let both = ScenarioSpec { think_times_ps: Some(vec![20_000_000]), response_jitter_ps: 1, ..spec() };
        let e = both.validate().unwrap_err();
        assert_eq!((e.param, e.related), ("think_times_ps", &["response_jitter_ps"][..]));
        assert_eq!(e.to_string(), "think_times_ps: 20us is not allowed; expected unset when jitter is above 0s (one think time per request: measured or uniform)");
        for bad in [vec![], vec![0, PS_PER_S + 1]] {
            let e = ScenarioSpec { think_times_ps: Some(bad), ..spec() }.validate().unwrap_err();
            assert_eq!(e.param, "think_times_ps", "{e}");
        }
        assert!(ScenarioSpec { think_times_ps: Some(vec![0, 70_000_000]), ..spec() }.validate().is_ok());
        // and Riak's own fields with the synchronized reads
        let e = ScenarioSpec { get_rate: 10.0, ..spec() }.validate().unwrap_err();
        assert_eq!((e.param, e.related), ("get_rate", &["workload"][..]));
        let lognormal = ScenarioSpec { reply_size_dist: ReplySizeDist::Lognormal, ..spec() };
        assert_eq!(lognormal.validate().unwrap_err().to_string(), "reply_size_dist: lognormal is not allowed; expected its default unless workload is riak");
        let e = ScenarioSpec { get_rate: 0.0, ..riak }.validate().unwrap_err();
        assert_eq!(e.param, "get_rate", "the schema's range: above 0");
    }
}
