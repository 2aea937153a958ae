//! What a run returns: flat, serializable, one object per simulated point.

use serde::Serialize;

use crate::event::TieBreak;
use crate::fct::{FctSummary, FlowTime};
use crate::host::Transport;
use crate::net::balance::LoadBalancing;
use crate::net::{Admission, TopologyKind};

fn is_star(t: &TopologyKind) -> bool {
    *t == TopologyKind::Star
}

fn is_tcp(t: &Transport) -> bool {
    *t == Transport::Tcp
}
use crate::scenario::{RtoBackoff, TcpRules, Workload};
use crate::tcp::congestion::Cc;
use crate::tcp::sender::TimeoutKind;

/// The outcome of one simulation. Field names are the `--json` schema of
/// `incastlab simulate`; times are seconds, rates Mbps, sizes bytes.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SimResult {
    pub servers: u32,
    /// Clients reading at once (`goodput_mbps` is all of theirs together).
    pub clients: u32,
    /// What the hosts do: synchronized reads, or Riak gets.
    pub workload: Workload,
    /// Riak: gets the nodes issued, and gets that had their read quorum of replies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gets_issued: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gets_completed: Option<u64>,
    /// Riak: latency of completed gets, from issue to the quorum-th reply's last byte.
    /// Absent without Riak; `Some(None)` (JSON null) when no get completed. The
    /// percentiles are nearest-rank from a log-linear histogram, within 0.05 % of the
    /// exact value (`app::latency`); the maximum is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_latency_p50_s: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_latency_p99_s: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_latency_max_s: Option<Option<f64>>,
    /// Riak: reply payload delivered in order to each node, bytes, index = node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_bytes_received: Option<Vec<u64>>,
    pub sru_bytes: u64,
    pub block_bytes: u64,
    pub buffer_bytes: u64,
    pub rate_bps: u64,
    pub rtt_s: f64,
    pub tcp: String,
    pub rto_min_s: f64,
    pub seed: u64,
    /// The modelling rules in force, so every output says which reading produced it (the
    /// enums serialize as the scenario spells them).
    pub mss_bytes: u32,
    pub limited_transmit: bool,
    /// RFC 6937 PRR and RFC 8985 RACK-TLP in SACK recovery.
    pub prr: bool,
    pub rack_tlp: bool,
    pub buffer_admission: Admission,
    /// The packet limit under the `packets` admission (0 otherwise).
    pub buffer_packets: u32,
    pub tcp_rules: TcpRules,
    pub cc: Cc,
    pub rto_backoff: RtoBackoff,
    pub tie_break: TieBreak,
    /// The fabric; left out of the output on the star, so star results read as before.
    #[serde(skip_serializing_if = "is_star")]
    pub topology: TopologyKind,
    /// The switch-to-switch links' rate (two_switch's trunk, leaf_spine's uplinks, derived
    /// from oversubscription unless given); left out on the star.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trunk_rate_bps: Option<u64>,
    /// leaf_spine's shape: leaves, spines and the oversubscription of its leaves (as given,
    /// or as a given trunk rate makes it); left out on other fabrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// fat_tree: its k; left out on other fabrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fat_tree_k: Option<u32>,
    /// How switches chose among equal-cost uplinks; left out when by destination (the
    /// static routes every result had before there was a choice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancing: Option<LoadBalancing>,
    /// What the flows ran (`transport`); left out for TCP, so TCP results read as before.
    #[serde(skip_serializing_if = "is_tcp")]
    pub transport: Transport,
    /// Trimming switch ports (`net::trim`): data packets cut to their header, headers dropped
    /// (the header queue full) and headers returned to their senders. Left out without
    /// trimming.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trims: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_drops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounces: Option<u64>,
    /// NDP and receiver credit: the NACKs and the PULL packets (credits) their senders
    /// received. Left out for TCP. (Their timeouts and retransmissions are in `timeouts`
    /// and `retransmits`.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nacks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulls: Option<u64>,
    /// Swift: the least window any measured flow reached, packets (below 1: it paced,
    /// §3.4). Left out for the other transports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swift_min_cwnd: Option<f64>,
    /// The steady-state window (`measure_from_ps` to the duration; left out without one):
    /// its start, the receivers' in-order goodput in it, the measured flows' data payload
    /// bytes sent (retransmissions included) and dropped at switches in it and their ratio
    /// (Swift §4.2's loss rate, "the lost packets divided by the sent packets", in bytes:
    /// the same for full-sized segments), data segments sent, retransmission timeouts, and the mean of the RTT
    /// samples the senders took in it (Swift's delay samples, every ACK of new data; TCP's
    /// one timed segment per RTT without timestamps; `None`: no sample), and the measured
    /// flows that delivered nothing in order in it (`steady_flows_idle`: a window's numbers
    /// can come from a part of the flows while the rest wait out backed-off timers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_from_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_goodput_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_bytes_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_bytes_dropped: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_loss_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_segments_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_timeouts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_rtt_mean_s: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_flows_idle: Option<u64>,
    /// One-shot flows (incast, shuffle, permutation): how many, how many delivered whole,
    /// their completion times and slowdowns (FCT over the idle fabric's: `fct`), nearest-
    /// rank over the completed ones; and an incast's last flow's completion (the slowest
    /// incast's, from its first start). Left out for the other workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_p50_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_p99_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_max_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown_p99: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incast_completion_s: Option<f64>,
    /// The Poisson background's flows, the same way (left out without a background).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_flows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_flows_completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_fct_p50_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_fct_p99_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_slowdown_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_slowdown_p99: Option<f64>,
    /// 802.3x PAUSE frames the switches sent: XOFF and XON (only when PAUSE is on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_xoff_frames: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_xon_frames: Option<u64>,
    /// Riak over Erlang distribution: times a process was suspended on a busy connection
    /// (`busy_dist_port`, `app::erlang_dist`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_dist_port: Option<u64>,
    /// The victim flow's goodput (Mbps) and payload bytes dropped, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub victim_goodput_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub victim_bytes_dropped: Option<u64>,
    /// Payload bytes the bulk flows (and the victim) delivered in order to their receivers'
    /// applications, when there are any: a long flow's goodput over a span is the difference
    /// of two runs' values (runs differ only in where they stop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bulk_bytes_delivered: Option<u64>,
    /// Application payload delivered to the client, in Mbit per simulated second (all
    /// clients together).
    pub goodput_mbps: f64,
    /// The least and the most goodput one client had (Mbps), with more than one client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_goodput_min_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_goodput_max_mbps: Option<f64>,
    pub blocks: u64,
    pub block_time_p50_s: f64,
    /// The 95th percentile (the DCTCP paper's query completion statistic, its Table 2).
    pub block_time_p95_s: f64,
    pub block_time_p99_s: f64,
    pub block_time_max_s: f64,
    /// Retransmission timeouts that fired, all flows.
    pub timeouts: u64,
    /// Data segments sent again (fast retransmit, partial ACK, or after a timeout).
    pub retransmits: u64,
    /// Timeouts by FAST'08 §5.1 category (Table 3); they sum to `timeouts`.
    pub timeouts_full_window: u64,
    pub timeouts_last_packet: u64,
    pub timeouts_lost_retransmit: u64,
    pub timeouts_other: u64,
    /// Lost retransmits whose DART was at least / below the dupACK threshold (Table 3).
    pub lost_retransmits_dart_ge_threshold: u64,
    pub lost_retransmits_dart_lt_threshold: u64,
    /// Duplicate ACKs received at each timeout: index = DART, last bin = that or more
    /// (FAST'08 Fig. 11).
    pub dart_histogram: Vec<u64>,
    /// Timeouts whose segment had not been lost (ground truth from the simulator).
    pub spurious_timeouts: u64,
    /// Delayed-ACK timer expiries at the client (FAST'08 §4.2's delayed-ACK waits).
    pub delayed_ack_timeouts: u64,
    pub fast_retransmits: u64,
    pub limited_transmits: u64,
    /// ACKs whose send allowance Linux's TSO deferral held for the next ACK (`tso_deferral`).
    pub tso_deferrals: u64,
    /// Retransmission-timer expiries with nothing outstanding, which cut cwnd to one
    /// segment (ns-2's rules only: `tcp::ns2_rules`).
    pub idle_restarts: u64,
    /// Tail loss probes sent (RFC 8985 §7.3; rack_tlp only).
    pub tail_loss_probes: u64,
    /// Segments RACK's time-based detection marked lost (RFC 8985 §6.2; rack_tlp only).
    pub rack_marked_lost: u64,
    /// Packets dropped at any switch port.
    pub drops: u64,
    /// Packets marked CE at any switch port (ECN, RFC 3168 §5).
    pub ce_marks: u64,
    /// Largest occupancy seen at the client's port, in bytes.
    pub max_queue_bytes: u64,
    /// Most packets (TCP and UDP) held at once at the client's port: Osada et al.'s Q_max.
    pub max_queue_packets: u64,
    /// More than one switch: the switch port that dropped most (`Fabric::busiest_port`:
    /// where a multi-path incast congests need not be the client's port), its drops and its
    /// largest occupancy in bytes. Left out on a single switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busiest_port: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busiest_port_drops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busiest_port_max_queue_bytes: Option<u64>,
    /// Servers answering each block (Osada et al.'s N_a).
    pub active_servers: u32,
    /// Mean block completion time: Osada et al.'s mission complete time (MCT) when
    /// connections are opened per block.
    pub block_time_mean_s: f64,
    /// SYN retransmissions after a lost SYN-ACK (3 s each at first).
    pub syn_timeouts: u64,
    /// Packets of a replaced connection that arrived after it was gone.
    pub stale_packets: u64,
    pub udp_sent: u64,
    pub udp_dropped: u64,
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
    /// Most packets alive at once, and most events pending at once: the run's memory
    /// grows with these (and with N), not with simulated time.
    pub peak_packets: u64,
    pub peak_events: u64,
    /// Where the time went (`time_breakdown`; docs/simulate.md, "Where the time went"):
    /// `time_flows` parts finished (a flow's part of a block, from the client's request to
    /// its last byte delivered), their mean completion time `time_flow_s`, and its mean
    /// split: the request's trip, transmission at the flow's fair share of the host link,
    /// queueing (the rest of its loss-free time), waiting out RTO timers, loss recovery
    /// rounds, its sender's NIC held by PAUSE/PFC, a receiver-driven flow's trimmed packets
    /// awaiting their resend and its waits for pulls or credit beyond its fair share, and
    /// any remainder (`other`, zero unless an interval escaped). A one-shot flow is one
    /// part, from its start. `time_blocks` and `time_block_*` the same over each block's
    /// last part (the one that ended the block; an incast's last flow). Left out when off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_request_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_transmission_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_queueing_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_rto_wait_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_recovery_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_pause_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_trim_recovery_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_pull_wait_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_flow_other_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_request_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_transmission_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_queueing_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_rto_wait_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_recovery_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_pause_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_trim_recovery_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_pull_wait_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_block_other_s: Option<f64>,
}

/// Build the result of a finished world.
pub(crate) fn summarize(sc: &crate::Scenario, w: &crate::world::World, wall_seconds: f64) -> SimResult {
    use crate::stats::percentile;
    use crate::time::PS_PER_S;
    let s = &sc.spec;
    let secs = |ps: u64| ps as f64 / PS_PER_S as f64;
    let sim_seconds = w.measured_until.as_secs_f64();
    let reads = w.apps().sync_reads();
    let block_times = |r: &crate::app::sync_read::SyncReads| r.clients.iter().flat_map(|c| c.block_times.clone()).collect();
    let times: Vec<u64> = reads.map_or(vec![], block_times);
    let times = &times;
    let mbps = |bytes: u64| if sim_seconds > 0.0 { bytes as f64 * 8.0 / sim_seconds / 1e6 } else { 0.0 };
    let riak = w.riak_gets();
    let per_client = w.client_app_bytes();
    let (least, most) = (per_client.iter().min().copied(), per_client.iter().max().copied());
    let several = per_client.len() > 1;
    let c = w.counters();
    let (net, conns) = (w.net(), w.conns());
    let steady = w.steady();
    let by_kind = conns.sender_array_total(|t| t.stats.timeouts_by_kind);
    let busiest = net.busiest_port();
    let pulled = conns.transport().pulls().then(|| conns.pull_totals());
    let trims = net.trim_counts();
    let one_shot: Option<Vec<FlowTime>> = w.apps().flow_set().map(|fs| {
        let time = |f: &crate::app::flows::OneShot| FlowTime {
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            end: f.end,
            group: f.group,
        };
        fs.flows.iter().map(time).collect()
    });
    let flows = one_shot.as_deref().map(|v| crate::fct::summarize(sc, net, v));
    let incast = one_shot.as_deref().filter(|_| s.workload == Workload::Incast).and_then(crate::fct::incast_completion);
    let background = w.apps().background().map(|b| {
        let time = |f: &crate::app::background::BackgroundFlow| FlowTime {
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            end: f.end,
            group: 0,
        };
        crate::fct::summarize(sc, net, &b.flows.iter().map(time).collect::<Vec<_>>())
    });
    let (flows, background) = (flows.as_ref(), background.as_ref());
    let field = |x: Option<&FctSummary>, f: fn(&FctSummary) -> Option<f64>| x.and_then(f);
    let mut r = SimResult {
        servers: s.servers,
        clients: s.clients,
        workload: s.workload,
        gets_issued: riak.map(|g| g.issued),
        gets_completed: riak.map(|g| g.completed),
        get_latency_p50_s: riak.map(|g| g.latencies.percentile(50.0).map(secs)),
        get_latency_p99_s: riak.map(|g| g.latencies.percentile(99.0).map(secs)),
        get_latency_max_s: riak.map(|g| g.latencies.max().map(secs)),
        node_bytes_received: riak.map(|g| g.node_bytes_received.clone()),
        busy_dist_port: w.apps().erlang_dist().map(|d| d.busy_dist_port),
        sru_bytes: if s.workload == Workload::Riak { 0 } else { sc.per_server_bytes[0] },
        block_bytes: reads.map_or(0, |r| r.clients[0].block_bytes(r.active_per_block())),
        buffer_bytes: s.buffer_bytes,
        rate_bps: s.rate_bps,
        rtt_s: secs(s.rtt_ps),
        tcp: format!("{:?}", s.tcp).to_lowercase(),
        rto_min_s: secs(sc.rto_min.0),
        seed: s.seed,
        mss_bytes: s.mss_bytes,
        limited_transmit: s.limited_transmit,
        prr: s.prr,
        rack_tlp: s.rack_tlp,
        buffer_admission: sc.admission,
        buffer_packets: if sc.admission == Admission::Packets { sc.buffer_packets } else { 0 },
        tcp_rules: s.tcp_rules,
        cc: s.cc,
        rto_backoff: s.rto_backoff,
        tie_break: s.tie_break,
        topology: s.topology,
        trunk_rate_bps: sc.fabric.trunk_bps,
        leaves: (sc.fabric.leaves > 0).then_some(sc.fabric.leaves),
        spines: (sc.fabric.spines > 0).then_some(sc.fabric.spines),
        oversubscription: sc.fabric.oversubscription,
        fat_tree_k: sc.fabric.fat_tree.map(|t| t.k),
        load_balancing: (s.load_balancing != LoadBalancing::Destination).then_some(s.load_balancing),
        transport: s.transport,
        trims: trims.map(|t| t.0),
        header_drops: trims.map(|t| t.1),
        bounces: trims.map(|t| t.2),
        nacks: pulled.as_ref().map(|p| p.nacks),
        swift_min_cwnd: conns.swift_min_cwnd(),
        steady_from_s: steady.map(|st| secs(st.from.0)),
        steady_goodput_mbps: steady.map(|st| {
            let window = sim_seconds - st.from.as_secs_f64();
            st.app_bytes as f64 * 8.0 / window / 1e6
        }),
        steady_bytes_sent: steady.map(|st| st.bytes_sent),
        steady_bytes_dropped: steady.map(|st| st.bytes_dropped),
        steady_loss_rate: steady.map(|st| if st.bytes_sent > 0 { st.bytes_dropped as f64 / st.bytes_sent as f64 } else { 0.0 }),
        steady_segments_sent: steady.map(|st| st.segments),
        steady_timeouts: steady.map(|st| st.timeouts),
        steady_flows_idle: steady.map(|st| st.flows_idle),
        steady_rtt_mean_s: steady.map(|st| (st.rtt_samples > 0).then(|| secs(st.rtt_sum_ps) / st.rtt_samples as f64)),
        pulls: pulled.as_ref().map(|p| p.pulls),
        flows: flows.map(|f| f.flows),
        flows_completed: flows.map(|f| f.completed),
        fct_p50_s: field(flows, |f| f.fct_p50_s),
        fct_p99_s: field(flows, |f| f.fct_p99_s),
        fct_max_s: field(flows, |f| f.fct_max_s),
        slowdown_p50: field(flows, |f| f.slowdown_p50),
        slowdown_p99: field(flows, |f| f.slowdown_p99),
        incast_completion_s: incast,
        background_flows: background.map(|f| f.flows),
        background_flows_completed: background.map(|f| f.completed),
        background_fct_p50_s: field(background, |f| f.fct_p50_s),
        background_fct_p99_s: field(background, |f| f.fct_p99_s),
        background_slowdown_p50: field(background, |f| f.slowdown_p50),
        background_slowdown_p99: field(background, |f| f.slowdown_p99),
        pause_xoff_frames: net.pause_frames().map(|f| f.0),
        pause_xon_frames: net.pause_frames().map(|f| f.1),
        victim_goodput_mbps: w.victim_goodput_mbps(),
        victim_bytes_dropped: w.victim_goodput_mbps().map(|_| c.background_bytes_dropped),
        bulk_bytes_delivered: w.bulk_bytes_delivered(),
        goodput_mbps: mbps(c.app_bytes),
        client_goodput_min_mbps: least.filter(|_| several).map(mbps),
        client_goodput_max_mbps: most.filter(|_| several).map(mbps),
        blocks: w.blocks_done(),
        block_time_p50_s: secs(percentile(times, 50.0)),
        block_time_p95_s: secs(percentile(times, 95.0)),
        block_time_p99_s: secs(percentile(times, 99.0)),
        block_time_max_s: secs(times.iter().copied().max().unwrap_or(0)),
        timeouts: conns.sender_total(|t| t.stats.timeouts) + pulled.as_ref().map_or(0, |p| p.timeouts),
        retransmits: conns.sender_total(|t| t.stats.retransmits) + pulled.as_ref().map_or(0, |p| p.retransmits),
        timeouts_full_window: by_kind[TimeoutKind::FullWindow as usize],
        timeouts_last_packet: by_kind[TimeoutKind::LastPacket as usize],
        timeouts_lost_retransmit: by_kind[TimeoutKind::LostRetransmit as usize],
        timeouts_other: by_kind[TimeoutKind::Other as usize],
        lost_retransmits_dart_ge_threshold: conns.sender_total(|t| t.stats.lost_retransmits_dart_ge_threshold),
        lost_retransmits_dart_lt_threshold: conns.sender_total(|t| t.stats.lost_retransmits_dart_lt_threshold),
        dart_histogram: conns.sender_array_total(|t| t.stats.dart_histogram).to_vec(),
        spurious_timeouts: c.spurious_timeouts,
        delayed_ack_timeouts: conns.receiver_total(|r| r.stats.delayed_ack_timeouts),
        fast_retransmits: conns.sender_total(|t| t.stats.fast_retransmits),
        limited_transmits: conns.sender_total(|t| t.stats.limited_transmits),
        tso_deferrals: conns.sender_total(|t| t.stats.tso_deferrals),
        idle_restarts: conns.sender_total(|t| t.stats.idle_restarts),
        tail_loss_probes: conns.sender_total(|t| t.stats.tail_loss_probes),
        rack_marked_lost: conns.sender_total(|t| t.stats.rack_marked_lost),
        drops: net.switch_drops(),
        ce_marks: net.switch_ce_marks(),
        max_queue_bytes: net.to_client().max_occupancy,
        max_queue_packets: net.to_client().max_packets,
        busiest_port: busiest.map(|p| net.topology().port_name(p)),
        busiest_port_drops: busiest.map(|p| net.port(p).drops),
        busiest_port_max_queue_bytes: busiest.map(|p| net.port(p).max_occupancy),
        active_servers: reads.map_or(s.servers as usize, |r| r.active_per_block()) as u32,
        block_time_mean_s: if times.is_empty() { 0.0 } else { secs(times.iter().sum::<u64>()) / times.len() as f64 },
        syn_timeouts: c.syn_timeouts,
        stale_packets: c.stale_packets,
        udp_sent: w.apps().udp().map_or(0, |u| u.sent),
        udp_dropped: w.apps().udp().map_or(0, |u| u.dropped),
        sim_seconds,
        wall_seconds,
        events: w.events(),
        packet_hops: net.packet_hops(),
        bytes_sent: c.data_bytes_sent,
        bytes_delivered: c.data_bytes_arrived,
        bytes_dropped: c.data_bytes_dropped,
        bytes_in_flight: w.data_bytes_in_flight(),
        app_bytes: c.app_bytes,
        peak_packets: w.high_water_marks().0 as u64,
        peak_events: w.high_water_marks().1 as u64,
        ..SimResult::default()
    };
    if let Some(clocks) = &conns.clocks {
        set_time_split(&mut r, clocks);
    }
    r
}

/// The time breakdown's fields: means over the finished parts, seconds.
fn set_time_split(r: &mut SimResult, clocks: &crate::host::flowtime::FlowClocks) {
    use crate::host::flowtime::Totals;
    let mean = |t: &Totals, ps: i128| (t.parts > 0).then(|| ps as f64 / t.parts as f64 / crate::time::PS_PER_S as f64);
    let each = |t: &Totals| {
        let s = &t.split;
        let other = t.time as i128 - s.sum() as i128;
        let ps = [t.time, s.request, s.transmission, s.queueing, s.rto_wait, s.recovery, s.pause, s.trim_recovery, s.pull_wait];
        (t.parts, ps.map(|x| mean(t, x as i128)), mean(t, other))
    };
    let (n, [all, request, transmission, queueing, rto_wait, recovery, pause, trim, pull], other) = each(&clocks.all);
    r.time_flows = Some(n);
    (r.time_flow_s, r.time_flow_request_s, r.time_flow_transmission_s, r.time_flow_queueing_s) = (all, request, transmission, queueing);
    (r.time_flow_rto_wait_s, r.time_flow_recovery_s, r.time_flow_pause_s, r.time_flow_other_s) = (rto_wait, recovery, pause, other);
    (r.time_flow_trim_recovery_s, r.time_flow_pull_wait_s) = (trim, pull);
    let (n, [all, request, transmission, queueing, rto_wait, recovery, pause, trim, pull], other) = each(&clocks.blocks);
    r.time_blocks = Some(n);
    (r.time_block_s, r.time_block_request_s, r.time_block_transmission_s, r.time_block_queueing_s) = (all, request, transmission, queueing);
    (r.time_block_rto_wait_s, r.time_block_recovery_s, r.time_block_pause_s, r.time_block_other_s) = (rto_wait, recovery, pause, other);
    (r.time_block_trim_recovery_s, r.time_block_pull_wait_s) = (trim, pull);
}

#[cfg(test)]
mod tests {
    use crate::scenario::{ScenarioSpec, Workload};
    use crate::time::PS_PER_MS;

    #[test]
    fn get_latencies_are_null_when_no_get_completed_and_absent_without_riak() {
        // 4 nodes, one get per second each, 1 ms: (almost surely) no get at all
        let spec = ScenarioSpec {
            servers: 4,
            workload: Workload::Riak,
            get_rate: 1.0,
            duration_ps: Some(PS_PER_MS),
            ..ScenarioSpec::default()
        };
        let r = crate::run(&spec).unwrap();
        assert_eq!(r.gets_completed, Some(0));
        let latencies = (r.get_latency_p50_s, r.get_latency_p99_s, r.get_latency_max_s);
        assert_eq!(latencies, (Some(None), Some(None), Some(None)));
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["get_latency_p50_s"].is_null() && json.get("get_latency_max_s").is_some());
        let sync = serde_json::to_value(crate::run(&ScenarioSpec { servers: 2, ..ScenarioSpec::default() }).unwrap());
        assert!(sync.unwrap().get("get_latency_p50_s").is_none(), "no Riak, no field");
    }
}
