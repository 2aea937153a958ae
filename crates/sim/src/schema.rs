//! The scenario's one schema: for every field of [`ScenarioSpec`], the name people write,
//! its unit, its range, what leaving it unset means and a one-line doc (ns-3's attributes
//! carry the same). The core validates against it ([`check_fields`]); the Python front
//! builds its keywords, unit parsing, ranges, defaults, command-line flags and the docs
//! table from it (`incastlab._native.scenario_schema`), so a knob is written down once.
//!
//! Ranges that involve two fields (`rto_max_ps >= rto_min_ps`, a buffer of at least one
//! packet) are checked in `ScenarioSpec::validate`, which names both fields.

use serde::Serialize;
use serde_json::Value;

use crate::scenario::{ScenarioError, ScenarioSpec, MAX_SERVERS};
use crate::time::{PS_PER_MS, PS_PER_S, PS_PER_US};

/// What a field's number counts. Inside the core every quantity is an integer in a base
/// unit; the front parses `32KiB`, `10Gbps`, `200us` into these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A whole number of things (servers, segments, packets, blocks).
    Count,
    /// Bytes.
    Bytes,
    /// Bits per second.
    BitsPerSecond,
    /// Picoseconds (seconds at every public edge).
    Picoseconds,
    /// A real number (a fraction or a factor).
    Fraction,
    /// A real number of events per second (a rate of things, not of bits).
    PerSecond,
    /// On or off.
    Flag,
    /// One word out of `choices`.
    Choice,
    /// A list of whole numbers, each in the range (written "3,1").
    Weights,
    /// A list of durations in picoseconds, each in the range (written "20us,70us").
    Durations,
}

/// The values a field allows on its own.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Range {
    /// Whole numbers from `min` to `max`, both included.
    Whole { min: u64, max: u64 },
    /// Real numbers from `min` to `max`, both included (NaN never).
    Real { min: f64, max: f64 },
    /// Any value of the field's type (flags, choices).
    Any,
}

/// One scenario field.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Field {
    /// The core's name, with the unit in it (`rto_min_ps`); also the JSON key.
    pub name: &'static str,
    /// The name people write (`rto_min`): the Python keyword, the flag `--rto-min`.
    pub public: &'static str,
    pub unit: Unit,
    pub range: Range,
    /// The words a `Choice` takes, as the core spells them.
    pub choices: &'static [&'static str],
    /// `null` is allowed; `unset` says what it means.
    pub optional: bool,
    /// What an unset optional field means (a default that depends on other fields).
    pub unset: &'static str,
    /// One line: what the field is, and the source of its default.
    pub doc: &'static str,
    /// Why the range ends where it does, when a source says so.
    pub limit_source: &'static str,
}

const U32: u64 = u32::MAX as u64;
/// Why an RTO has a floor: SIGCOMM'09 (`001_e0dada207805edc8.txt`) tracks RTTs and fires
/// timers in microseconds; a timer below that fires faster than a full packet leaves a
/// 10 Gbps link (1.2 us), and one capped there retransmits forever.
const MICROSECOND_TIMERS: &str = "microsecond timers, SIGCOMM'09";
const NO_MAX: u64 = u64::MAX;

const fn whole(min: u64, max: u64) -> Range {
    Range::Whole { min, max }
}

const fn field(name: &'static str, public: &'static str, unit: Unit, range: Range, doc: &'static str) -> Field {
    Field { name, public, unit, range, choices: &[], optional: false, unset: "", doc, limit_source: "" }
}

const fn optional(mut f: Field, unset: &'static str) -> Field {
    f.optional = true;
    f.unset = unset;
    f
}

const fn choice(name: &'static str, public: &'static str, choices: &'static [&'static str], doc: &'static str) -> Field {
    Field { name, public, unit: Unit::Choice, range: Range::Any, choices, optional: false, unset: "", doc, limit_source: "" }
}

const fn flag(name: &'static str, doc: &'static str) -> Field {
    field(name, name, Unit::Flag, Range::Any, doc)
}

const fn because(mut f: Field, source: &'static str) -> Field {
    f.limit_source = source;
    f
}

use Unit::{BitsPerSecond, Bytes, Count, Fraction, PerSecond, Picoseconds};

/// Every field of [`ScenarioSpec`], in the order people read them: the workload, the
/// network, TCP, the run, the mitigations.
pub const FIELDS: &[Field] = &[
    choice("preset", "preset", &["rfc", "fast08", "ns2", "ns3", "linux"],
        "a named set of fields whose values stand where a field is not given (docs/scenario-fields.md, Presets; simulate --preset-table); rfc: the defaults"),
    field("servers", "servers", Count, whole(1, MAX_SERVERS as u64),
        "storage servers N answering each block (FAST'08: the swept variable)"),
    because(field("clients", "clients", Count, whole(1, 4096),
        "clients, each reading its own blocks from all servers at once (one connection per server and client)"),
        "servers x clients at most 2^20 connections"),
    choice("workload", "workload", &["sync_read", "riak", "incast", "shuffle", "permutation"],
        "sync_read: clients read blocks from every server (FAST'08); riak: the servers are nodes coordinating gets (Fritchie); incast, shuffle, permutation: one-shot flows of sru bytes (docs/fabrics.md)"),
    because(field("get_rate", "get_rate", PerSecond, Range::Real { min: 0.001, max: 1e7 },
        "riak: gets each node coordinates per second, a Poisson process (Fritchie: thousands per second)"),
        "a get at least every 1000 s, at most one per 100 ns"),
    field("replicas", "replicas", Count, whole(1, 64),
        "riak: other nodes each get asks, chosen uniformly (Fritchie: typically 3); below servers"),
    field("read_quorum", "read_quorum", Count, whole(1, 64),
        "riak: replies a get waits for (Riak's default R, a quorum of 3: 2); 1 to replicas"),
    because(field("reply_bytes", "reply_bytes", Bytes, whole(1, 1 << 30),
        "riak: mean reply size (Fritchie's example: 100 KB)"), "at most 1 GiB"),
    choice("reply_size_dist", "reply_size_dist", &["fixed", "exponential", "lognormal"],
        "riak: reply sizes: all reply_bytes, exponential or lognormal (sigma 1) with that mean"),
    choice("riak_transport", "riak_transport", &["per_pair", "erlang_dist"],
        "riak: a connection per ordered replica->coordinator pair carrying replies (requests on its reverse), or Erlang distribution: one connection per node pair carrying every message in order, a sender suspended while its port is busy (app/erlang_dist.rs)"),
    because(field("dist_buf_busy_limit_bytes", "dist_buf_busy_limit", Bytes, whole(1024, 2_097_151 * 1024),
        "riak erlang_dist: bytes queued on a connection at which its senders are suspended (Erlang's dist_buf_busy_limit, +zdbbl: 1024 KB)"),
        "erl +zdbbl: 1-2097151 KB"),
    optional(field("sru_bytes", "sru", Bytes, whole(1, NO_MAX),
        "bytes each server returns per block (fixed-SRU mode; FAST'08 Table 1: 256 KB)"),
        "256KiB, unless block is set"),
    optional(field("block_bytes", "block", Bytes, whole(1, NO_MAX),
        "fixed-block mode: the block, split over the servers (SIGCOMM'09: 1 MB / N each)"),
        "fixed-SRU mode"),
    optional(field("active_servers", "active_servers", Count, whole(1, MAX_SERVERS as u64),
        "of the servers, this many chosen at random answer each block (Osada et al. §5.1: N_a)"),
        "all servers"),
    field("buffer_bytes", "buffer", Bytes, whole(1, NO_MAX),
        "switch output-port buffer (FAST'08 Fig. 4: 32 KB)"),
    optional(field("buffer_packets", "buffer_packets", Count, whole(1, U32),
        "the buffer's limit in packets (ns-2's qlim_; Osada et al. Table 1); implies admission by packets"),
        "buffer counts bytes"),
    optional(choice("buffer_admission", "buffer_admission", &["bytes", "packets", "mtu_slots"],
        "how a port admits a packet: bytes held, packets held (ns-2 DropTail) or MTU slots (ns-3)"),
        "packets if buffer_packets is set, else bytes"),
    choice("buffer_sharing", "buffer_sharing", &["static", "dynamic"],
        "switch buffers: static per port, or a pool per switch with dynamic thresholds (FAST'08 §4.1)"),
    optional(field("buffer_pool_bytes", "buffer_pool", Bytes, whole(1, NO_MAX),
        "dynamic sharing: the switch's pool, all ports together"),
        "buffer x (servers + 1): every port's static buffer together"),
    because(field("dt_alpha", "dt_alpha", Fraction, Range::Real { min: 1.0 / 64.0, max: 64.0 },
        "dynamic sharing: a port's queue grows while below dt_alpha x free pool (Choudhury-Hahne; 1 common)"),
        "Choudhury-Hahne study powers of two"),
    because(field("qos_classes", "qos_classes", Count, whole(1, 8),
        "QoS classes partitioning each switch port's buffer equally; the incast in class 0 (FAST'08 §4.1); 1 = off"),
        "802.1p's 8 priorities"),
    choice("qos_scheduler", "qos_scheduler", &["strict", "wrr"],
        "how a port's QoS classes share its link: strict priority (class 0 first) or byte-counted WRR (DRR)"),
    optional(field("qos_weights", "qos_weights", Unit::Weights, whole(1, U32),
        "wrr: one weight per class, e.g. 3,1 (DRR credits weight x one full packet per turn)"),
        "equal weights"),
    field("rate_bps", "rate", BitsPerSecond, whole(1_000, 10_000_000_000_000),
        "rate of every link (FAST'08 Table 1: 1 Gbps)"),
    optional(field("shaper_rate_bps", "shaper_rate", BitsPerSecond, whole(1_000, 10_000_000_000_000),
        "a token-bucket shaper (Linux tbf) on the switch port towards each client releases packets at this rate, at most rate; its queue holds buffer bytes waiting (the namespace testbed's bottleneck)"),
        "no shaper: the port sends at its link's rate"),
    optional(field("shaper_burst_bytes", "shaper_burst", Bytes, whole(1, NO_MAX),
        "the shaper's bucket (tbf burst): after an idle spell it releases this many bytes back to back at the link's rate"),
        "one full packet"),
    because(field("rtt_ps", "rtt", Picoseconds, whole(1, 4 * PS_PER_S),
        "round-trip propagation, RTT/4 on each of the star's 4 links (FAST'08 Table 1: 100 us)"),
        "at most 1 s per link"),
    field("mss_bytes", "mss", Bytes, whole(64, 65_495),
        "TCP payload per segment (MTU 1500 - 40 B of TCP/IP headers)"),
    field("header_bytes", "header", Bytes, whole(0, 120),
        "header bytes per packet on the wire (TCP/IP 40; ns-3's PPP links 42)"),
    choice("tcp", "tcp", &["reno", "newreno", "sack"],
        "TCP loss recovery (FAST'08 Table 1: NewReno; Fig. 10)"),
    choice("tcp_rules", "tcp_rules", &["rfc", "ns2", "ns3"],
        "whose rules TCP follows where implementations differ: the RFCs, ns-2.35's Agent/TCP, ns-3.44's TcpSocketBase"),
    choice("cc", "cc", &["newreno", "dctcp", "cubic"],
        "congestion control: RFC 5681 NewReno (FAST'08 Table 1), DCTCP (RFC 8257; ECN-capable, needs ecn_threshold_packets to see marks) or RFC 9438 CUBIC"),
    optional(field("ecn_threshold_packets", "ecn_threshold", Count, whole(1, U32),
        "ECN marking threshold K: a switch port marks an ECN-capable packet CE when it holds at least K packets on its arrival (RFC 8257 §3.1; DCTCP paper: K = 20 at 1 Gbps)"),
        "no ECN marking"),
    optional(because(field("rto_min_ps", "rto_min", Picoseconds, whole(PS_PER_US, NO_MAX),
        "RFC 6298 minimum retransmission timeout (FAST'08 Table 1: 200 ms)"), MICROSECOND_TIMERS),
        "200ms; 200us under the tcpfg mitigation"),
    because(field("rto_max_ps", "rto_max", Picoseconds, whole(PS_PER_US, NO_MAX),
        "cap on the backed-off retransmission timeout (RFC 6298 §2.5: at least 60 s)"), MICROSECOND_TIMERS),
    field("timer_granularity_ps", "timer_granularity", Picoseconds, whole(1, NO_MAX),
        "RFC 6298 clock granularity G (1 us: microsecond RTT tracking, SIGCOMM'09)"),
    flag("timer_ticks", "timers fire on multiples of timer_granularity, as jiffies do (WREN'09); off: exact deadlines"),
    flag("timer_wheel", "Linux's timer wheel (kernel/time/timer.c: calc_wheel_index, calc_index) for the timers that are \
        timer_lists on jiffies of timer_granularity: the retransmission timer (RTO, tail-loss probe and RACK's reordering \
        timer share icsk_retransmit_timer) and the delayed-ACK timer (icsk_delack_timer). A timer of n jiffies \
        (usecs_to_jiffies, rounded up) expires at the current jiffy + n and fires at the next bucket boundary after \
        that: n + 1 ticks after the tick it was armed in below 64 jiffies, rounded up to 8 jiffies from 64 to 504, \
        to 64 beyond; off: timer_ticks' next tick after now + the timeout (the delayed ACK: exactly)"),
    flag("rto_min_on_rttvar", "Linux's RTO (tcp_rtt_estimator, tcp_set_rto / __tcp_set_rto): RTO = srtt + rttvar, where \
        rttvar (4 x the largest mean deviation of the round trip, decaying once per round trip) is never below \
        rto_min, so RTO = rto_min + srtt at small RTTs; samples in microseconds, the RTO in whole timer_granularity \
        ticks rounded up (usecs_to_jiffies); off: RFC 6298, max(rto_min, srtt + max(G, 4 rttvar)) on samples of \
        timer_granularity ticks"),
    flag("timestamps", "RFC 7323 timestamps: every ACK of new data is an RTT sample (Linux); off: Karn's rule (ns-2)"),
    because(field("rto_random", "rto_random", Fraction, Range::Real { min: 0.0, max: 10.0 },
        "each RTO x (1 + U(0, this)) (SIGCOMM'09: 0.5); 0 = off"), "0 (off) to 10"),
    choice("rto_backoff", "rto_backoff", &["sample", "new_ack"],
        "when the RTO backoff ends: at the next RTT sample (Karn; ns-2) or at every ACK of new data (ns-3)"),
    field("dupack_threshold", "dupack_threshold", Count, whole(1, 1000),
        "duplicate ACKs that trigger fast retransmit (FAST'08 Table 1: 3)"),
    flag("limited_transmit", "RFC 3042 limited transmit (RFC 5681 §3.2 SHOULD; ns-2, ns-3 and Linux have it on)"),
    flag("prr", "RFC 6937 PRR-SSRB paces SACK recovery (Linux); off: RFC 6675's cwnd = ssthresh. tcp=sack only"),
    flag("rack_tlp", "RFC 8985 RACK loss detection and tail loss probes (Linux); off: DupThresh. tcp=sack only"),
    flag("hystart", "Linux's HyStart: CUBIC leaves slow start at an ACK train or a delay increase (tcp_cubic \
        hystart=1); off: RFC 5681 slow start. Other ccs ignore it"),
    flag("prr_extra_if_advanced", "Linux's tcp_cwnd_reduction: below ssthresh, PRR-SSRB adds its extra segment only \
        on an ACK that advanced SND.UNA and marked nothing newly lost; off: RFC 6937 §3, on every ACK. prr only"),
    flag("prr_counts_fast_retransmit", "Linux's tcp_cwnd_reduction and RFC 9937: the fast retransmit is sent within \
        the entering ACK's sndcnt (at least one segment); off: RFC 6937 §3 read literally, the fast retransmit and \
        then that ACK's sndcnt. prr only"),
    flag("grow_on_recovery_exit", "Linux's tcp_ack: the ACK that ends fast recovery also grows cwnd from ssthresh \
        (tcp_try_undo_recovery sets Open before tcp_cong_control), counting from the recovery's start \
        (tcp_init_cwnd_reduction clears snd_cwnd_cnt); off: RFC 6675 / RFC 6582 cwnd = ssthresh. tcp=sack only"),
    flag("ack_short_segments", "Linux's ICSK_ACK_PUSHED (tcp_measure_rcv_mss, tcp_cleanup_rbuf): an in-order segment \
        shorter than the MSS is acknowledged at once; off: RFC 1122 §4.2.3.2's delayed ACK for it too"),
    flag("rcv_window_growth", "Linux's tcp_grow_window (net/ipv4/tcp_input.c): each in-order segment raises rcv_ssthresh, \
        the advertised window, by 2 MSS up to window_clamp and is acknowledged at once (icsk_ack.quick); off: a fixed \
        window (rwnd) and RFC 1122 §4.2.3.2's pairs"),
    flag("rcv_autotuning", "Linux's tcp_rcv_space_adjust / tcp_rcvbuf_grow (DRS): once per receiver RTT (from \
        timestamps) window_clamp becomes about twice the bytes the application read, from tcp_rmem[1] = 128 KiB up to \
        tcp_rmem[2] = 32 MiB; off: the clamp stays at its first value. rcv_window_growth only"),
    flag("rcv_rtt_from_window", "Linux 6.16's receiver RTT for rcv_autotuning (commit a7ffb88bcbb1, tcp: remove zero \
        TCP TS samples for autotuning): a timestamp sample of 0 ms on the 1 ms clock is no sample, and tcp_rcv_rtt_measure's \
        window-based one (the time until rcv_nxt passes a segment by the window then advertised) is taken when first or \
        lower; off: Linux <= 6.15, every timestamp sample counts, at least 1 ms. rcv_autotuning only"),
    flag("ack_pingpong", "Linux's ping-pong mode (tcp_event_data_sent, tcp_pingpong_thresh = 1): a request sent within \
        ato (the delayed-ACK timeout) of the last data holds rcv_window_growth's and ack_short_segments' immediate \
        ACKs until a delayed-ACK timeout (tcp_delack_timer_handler); off: never in the mode"),
    because(field("rcv_scaling_ratio", "rcv_scaling_ratio", Count, whole(1, 255),
        "Linux's scaling_ratio: window bytes per 256 bytes of receive buffer, a segment's length over its skb's truesize \
        (TCP_DEFAULT_SCALING_RATIO = 128; veth on the testbed: 162). rcv_window_growth only"), "a u8 in 1/256, tcp_measure_rcv_mss"),
    flag("rack_timer_floor", "Linux's TCP_TIMEOUT_MIN_US: 2 ms more on the tail-loss probe's timeout (2 SRTT, with more \
        than one segment out) and on RACK's reordering timer (tcp_schedule_loss_probe, tcp_rack_mark_lost); off: RFC \
        8985 §6.3, §7.2. rack_tlp only"),
    flag("recovery_from_loss", "Linux's way out of the Loss state (tcp_fastretrans_alert's TCP_CA_Loss case, \
        tcp_rack_reo_timeout): after a timeout, an ACK on which RACK marks a retransmission lost again \
        (FLAG_LOST_RETRANS), or RACK's reordering timer marking any segment lost, enters fast recovery \
        (tcp_enter_recovery: ssthresh from the current cwnd, PRR) instead of waiting for another RTO; off: RFC \
        6582 §3.2 step 4, no fast retransmit until what was sent before the timeout is acknowledged. rack_tlp only"),
    flag("quickack_mode", "Linux's other entries into quick-ACK mode at the receiver: tcp_event_data_recv's \
        tcp_incr_quickack at a connection's first data and when in-order data comes more than the receiving socket's \
        RTO after the last, tcp_data_queue's tcp_enter_quickack_mode (out of ping-pong mode too) for a segment it \
        already holds: the next min(rcv_wnd / 2 MSS, 16) ACKs go at once, unless ping-pong mode holds them; off: \
        delayed ACKs as RFC 1122 §4.2.3.2 allows"),
    optional(field("receiver_rto_min_ps", "receiver_rto_min", Picoseconds, whole(PS_PER_US, NO_MAX),
        "the receiving socket's own RTOmin, for quickack_mode's gap (its RTO is this plus its SRTT; with \
        timer_ticks, this in whole ticks plus one, as usecs_to_jiffies rounds up)"), "rto_min"),
    flag("loss_retransmit_queue", "Linux's Loss state after a timeout: SACKed segments stay SACKed and the rest are \
        marked lost (tcp_timeout_mark_lost); every ACK grows cwnd by what it delivered, SACKed segments too \
        (tcp_cong_control), and the marked segments are resent lowest first while fewer than cwnd are in flight \
        (tcp_xmit_retransmit_queue), new data after; off: RFC 2018 §8 forgets the SACKs and the sender goes back \
        N. rack_tlp only"),
    flag("frto", "F-RTO (RFC 5682 §3; Linux's net.ipv4.tcp_frto = 2, tcp_process_loss): after a timeout outside \
        recovery, the first ACK that advances SND.UNA sends new data, and the resends wait for an ACK that SACKs \
        or duplicates (the loss was real); the undo of a spurious timeout is not modelled. loss_retransmit_queue only"),
    flag("rearm_rto_from_head", "Linux's tcp_rearm_rto with the probe or RACK reordering timer pending: the RTO runs from \
        the first unacknowledged segment's last transmission (tcp_rto_delta_us), not from now; with a tail-loss probe \
        outstanding, an ACK of new data re-arms the probe timer (tcp_set_xmit_timer -> tcp_schedule_loss_probe), whose \
        expiry sends nothing (tcp_send_loss_probe with tlp_high_seq set) and re-arms the RTO that way, so a late ACK \
        does not push the RTO back; off: RFC 6298 §5.3, the RTO restarts at every ACK of new data. rack_tlp only"),
    flag("tso_deferral", "Linux's TSO deferral (tcp_tso_should_defer, tcp_tso_win_divisor = 3): on an ACK outside \
        recovery, new data allowed by less than a third of min(cwnd, the peer's window), with the first unacknowledged \
        segment's ACK due within min(SRTT / 2, 1 ms) and the last send under 1 ms ago, waits for the next ACK (or goes \
        as the tail-loss probe); off: every allowance goes at once. rack_tlp only"),
    flag("gso_half_cwnd", "Linux's tcp_cwnd_test: tcp_write_xmit builds GSO skbs of at most max(cwnd / 2, 1) segments \
        and tests each further skb for TSO deferral as it did the first, so of an ACK's allowance a remainder under a \
        third of cwnd waits for the next ACK, which then releases it with its own (a burst); off: the allowance is \
        tested once, as a whole. With tso_deferral only"),
    flag("rack_rtt_sack_first", "Linux's order of RACK's RTT updates: tcp_ack tags an ACK's SACK blocks \
        (tcp_sacktag_write_queue) before it takes the cumulatively acknowledged segments off the queue \
        (tcp_clean_rtx_queue), and tcp_rack_advance keeps the RTT of each, so RACK.rtt ends at the last \
        cumulatively acknowledged segment's: a hole sent with it waits a reordering window before it counts as lost; \
        off: RFC 8985 §6.2, ascending send time, RACK.rtt of the newest delivered segment. rack_tlp only"),
    flag("sacked_leave_flight", "Linux's tcp_packets_in_flight outside recovery (packets_out - sacked_out - lost_out \
        + retrans_out, in tcp_cwnd_test and tcp_tso_should_defer): SACKed segments leave the flight cwnd limits and every \
        ACK may send, so an ACK that SACKs lets as many new segments go; off: RFC 3042 limited transmit, one new \
        segment on each of the first two duplicate ACKs. rack_tlp only"),
    flag("cwnd_limited_latch", "Linux's tcp_cwnd_validate: tcp_write_xmit records whether cwnd limited a window \
        (and its largest flight) until SND.UNA passes the SND.NXT of the record, and tcp_is_cwnd_limited reads that \
        record, so the ACKs after a window's last send (the tail of a response) still grow cwnd; off: a window grows \
        only while the flight before the ACK fills it. Matters with cwnd_limited_growth and for CUBIC"),
    flag("cubic_linux", "CUBIC as Linux's tcp_cubic.c computes it: cwnd in whole packets grown one packet per cnt \
        acknowledged (tcp_cong_avoid_ai), cnt from the curve with t in jiffies plus delay_min and recomputed at most once \
        a jiffy (not for HZ/32 while cwnd holds), the Reno estimate in whole packets without RFC 9438's switch to alpha 1, \
        cnt at most 20 before a first loss and at least 2, ssthresh = cwnd x 717/1024 in packets, and a timeout forgets \
        W_max and delay_min (bictcp_reset); off: RFC 9438. The jiffy is timer_granularity. cc=cubic only"),
    flag("ssthresh_from_cwnd", "Linux's tcp_reno_ssthresh: a loss leaves ssthresh = max(cwnd / 2, 2 segments); off: \
        RFC 5681 eq. (4), half of FlightSize. cc=newreno (and DCTCP's loss response) only"),
    flag("count_acked_segments", "Linux's tcp_slow_start and tcp_cong_avoid_ai: cwnd grows by every segment an ACK \
        acknowledges in slow start, by one per cwnd acknowledged after; off: RFC 5681 eq. (2)-(3) per ACK. \
        cc=newreno (and DCTCP) only"),
    flag("cwnd_limited_growth", "Linux's tcp_is_cwnd_limited: reno grows cwnd only while it limits the sender (in slow \
        start while cwnd < 2 x the flight); off: RFC 5681, every ACK of new data. cc=newreno only"),
    flag("slow_start", "RFC 5681 slow start (FAST'08 Table 1: on); off: start in congestion avoidance"),
    flag("slow_start_after_idle", "RFC 5681 §4.1 restart from the initial window after an idle RTO (Linux: on; ns-2: off)"),
    because(field("delayed_ack_ps", "delayed_ack", Picoseconds, whole(0, 500 * PS_PER_MS),
        "delayed-ACK timeout, 0 = off (off in FAST'08's ns-2 runs, §4.2)"), "RFC 1122 §4.2.3.2"),
    optional(field("init_cwnd_segments", "init_cwnd", Count, whole(1, 1000),
        "initial congestion window in segments; NDP's first window and credit's unscheduled window in full packets"),
        "2 (ns-2's window_init) under tcp and swift; each flow's path BDP in full packets under ndp and credit \
        (docs/transports.md)"),
    optional(because(field("rwnd_bytes", "rwnd", Bytes, whole(1, 1 << 30),
        "advertised receive window: the per-flow window cap (ns-2's window_ of 20 packets)"),
        "RFC 7323 §2.3: at most 1 GiB"),
        "20 x 1460 B; BaseBDP under the ccs and nccs mitigations (Osada et al. Eq. (1))"),
    field("response_jitter_ps", "jitter", Picoseconds, whole(0, PS_PER_S),
        "server think time, uniform in [0, this) per request (FAST'08 §4.1: none)"),
    field("send_jitter_ps", "send_jitter", Picoseconds, whole(0, PS_PER_S),
        "host timing noise: each data packet enters its NIC uniform in [0, this] late (ns-2's overhead_)"),
    optional(field("think_times_ps", "think_times", Unit::Durations, whole(0, PS_PER_S),
        "measured server think times: each request's is one of these, drawn uniformly (an empirical \
        distribution; incastlab validate --measured-think-times measures the testbed's from its capture)"),
        "jitter's uniform think time"),
    choice("tie_break", "tie_break", &["fifo", "random"],
        "order of exactly simultaneous events: as scheduled (ns-2, ns-3) or seeded random"),
    optional(field("duration_ps", "duration", Picoseconds, whole(1, NO_MAX),
        "simulated time to run (FAST'08 §3.1: 20 s)"), "20s, unless blocks is set"),
    optional(field("blocks", "blocks", Count, whole(1, NO_MAX),
        "stop after this many blocks instead of after a duration"), "run for the duration"),
    optional(field("measure_from_ps", "measure_from", Picoseconds, whole(0, NO_MAX),
        "the steady-state window: from this instant (after a warm-up) to the duration, the results' steady_* columns (goodput, bytes sent and dropped, mean RTT sample) count only what happens in it"), "no window"),
    field("seed", "seed", Count, whole(0, NO_MAX), "random seed: same seed, same result"),
    flag("time_breakdown", "split each flow's completion time into request, transmission, queueing, RTO waits, recovery, PAUSE, and (NDP, credit) trim recovery and pull waits (docs/simulate.md)"),
    flag("handshake", "open a new connection (SYN, SYN-ACK, request) for every block (Osada et al.); off: persistent"),
    field("syn_timeout_ps", "syn_timeout", Picoseconds, whole(1, NO_MAX),
        "SYN retransmission timeout (RFC 6298 §5.7: 3 s)"),
    choice("mitigation", "mitigation", &["ntcp", "tcpfg", "ictcp", "ccs", "nccs", "ocs"],
        "how the client schedules its connections (Osada et al. §4-5; ICTCP, Wu et al.)"),
    field("nccs_k", "nccs_k", Count, whole(1, MAX_SERVERS as u64),
        "NCCS: at most this many connections open at once (Osada et al.: 2, 4, 8)"),
    choice("condition_i", "condition_i", &["sent", "delivered", "open"],
        "NCCS/OCS: read S - T1 V as bits sent, bits delivered, or sent and checked at open (docs/model.md)"),
    because(field("udp_fraction", "udp", Fraction, Range::Real { min: 0.0, max: 0.5 },
        "UDP constant-bit-rate background as a fraction of the link rate over all servers (Osada et al. §5.1)"),
        "at most half the link"),
    field("udp_packet_bytes", "udp_packet", Bytes, whole(28, 65_535),
        "UDP background datagram size on the wire (Osada et al. do not say; full-size packets)"),
    choice("topology", "topology", &["star", "two_switch", "leaf_spine", "fat_tree"],
        "one switch (FAST'08 Fig. 1), two joined by a trunk (FAST'08 §5.2), a two-tier leaf-spine (docs/model.md), or a three-tier k-ary fat tree (docs/fabrics.md)"),
    optional(field("trunk_rate_bps", "trunk_rate", BitsPerSecond, whole(1_000, 10_000_000_000_000),
        "switch-to-switch links' rate (two_switch's trunk, every leaf_spine uplink); at least rate"),
        "rate, or under leaf_spine what oversubscription gives"),
    optional(because(field("leaves", "leaves", Count, whole(2, 1024),
        "leaf_spine: leaf switches; servers round-robin over them, the client on leaf 0"),
        "a spine's port count"), "2 under leaf_spine"),
    optional(because(field("spines", "spines", Count, whole(1, 512),
        "leaf_spine: spine switches, each linked to every leaf; a destination's rank on its leaf picks the spine"),
        "a leaf's port count"), "1 under leaf_spine"),
    optional(because(field("oversubscription", "oversubscription", Fraction, Range::Real { min: 1.0, max: 240.0 },
        "leaf_spine: (servers per leaf x rate) / (spines x uplink rate); sets the uplinks' rate"),
        "VL2, SIGCOMM'09: conventional trees reach 1:240"), "1 (full bisection) under leaf_spine, unless trunk_rate is set"),
    flag("pause", "802.3x PAUSE: a switch pauses an ingress's upstream port past pause_xoff (FAST'08 §5.2)"),
    field("pause_xoff_bytes", "pause_xoff", Bytes, whole(1, NO_MAX),
        "PAUSE: XOFF when the bytes waiting that came in over one ingress exceed this (FAST'08 gives none)"),
    field("pause_xon_bytes", "pause_xon", Bytes, whole(0, NO_MAX),
        "PAUSE: send XON (zero quanta) when they fall to this or below; below pause_xoff"),
    because(field("pause_quanta", "pause_quanta", Count, whole(1, 0xFFFF),
        "PAUSE: quanta of 512 bit times an XOFF asks for, refreshed while above XOFF (802.3 §31B: at most 0xFFFF)"),
        "a 16-bit field, 802.3 §31B"),
    flag("victim",
        "a bulk TCP flow beside the incast, own sender to own receiver (across switches: the far one to the client's)"),
    because(field("victim_class", "victim_class", Count, whole(0, 7),
        "the QoS class of the victim's data and ACKs (the incast stays in class 0); below qos_classes"),
        "802.1p's 8 priorities"),
    flag("pfc", "802.1Qbb priority flow control: PAUSE per (ingress, class), stopping only that class upstream"),
    optional(because(field("fat_tree_k", "fat_tree_k", Count, whole(4, 64),
        "fat_tree: k, even: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores, k^3/4 hosts (Al-Fares et al., SIGCOMM'08)"),
        "k = 64 is 65,536 hosts"), "required under fat_tree"),
    optional(field("core_rate_bps", "core_rate", BitsPerSecond, whole(1_000, 10_000_000_000_000),
        "fat_tree: the aggregation-core links' rate; at least rate"), "trunk_rate (the edge-aggregation links')"),
    optional(field("trunk_delay_ps", "trunk_delay", Picoseconds, whole(0, PS_PER_S),
        "switch-to-switch links' propagation delay (trunk, uplinks, edge-aggregation)"), "the host links' (rtt / 4)"),
    optional(field("core_delay_ps", "core_delay", Picoseconds, whole(0, PS_PER_S),
        "fat_tree: the aggregation-core links' propagation delay"), "trunk_delay"),
    choice("load_balancing", "load_balancing", &["destination", "ecmp", "spray", "spray_rr"],
        "uplink choice: by destination (static two-level routes), ecmp (a seeded hash of the flow), spray (each packet at random) or spray_rr (in turn)"),
    because(field("incasts", "incasts", Count, whole(1, 65_536),
        "incast: incasts at once, each of servers senders to its own receiver"), "a fat tree of k = 64's hosts"),
    field("flows_per_sender", "flows_per_sender", Count, whole(1, 65_536),
        "incast: connections each sender opens to its receiver, each sending sru bytes (Swift §5.3: 100 flows from each of 50 machines)"),
    choice("placement", "placement", &["random", "packed", "tail"],
        "incast, shuffle, permutation on a fat tree: hosts drawn at random (seeded), packed in host order (receiver, then its senders), or tail (receivers first, senders the last hosts, as htsim's setIncast)"),
    field("start_ps", "start", Picoseconds, whole(0, 3_600 * PS_PER_S),
        "incast, shuffle, permutation: when the flows start (after the background warms up)"),
    field("start_spread_ps", "start_spread", Picoseconds, whole(0, 3_600 * PS_PER_S),
        "incast, shuffle, permutation: each flow starts at a uniform instant of this window after start (0: together)"),
    because(field("background_load", "background_load", Fraction, Range::Real { min: 0.0, max: 0.95 },
        "Poisson background flows between random hosts, as a fraction of each host's link (0: none)"),
        "a queue that never empties above 1"),
    choice("background_cdf", "background_cdf", &["web_search", "data_mining"],
        "background flow sizes: web search (DCTCP paper Fig. 4) or data mining (VL2), as pFabric uses them (app/cdf.rs)"),
    field("background_hosts", "background_hosts", Count, whole(0, MAX_SERVERS as u64),
        "hosts carrying only background flows beside the workload's (not on a fat tree: all its hosts do); 0: the workload's hosts"),
    choice("transport", "transport", &["tcp", "ndp", "credit", "swift"],
        "what every flow runs: TCP; NDP (SIGCOMM'17: first window at line rate, then receiver pulls; NACKs for trimmed packets); receiver credit (EQDS, NSDI'22; UEC); or Swift (SIGCOMM'20: TCP's connection with a delay-based window, paced below a packet): docs/transports.md"),
    optional(field("swift_base_target_ps", "swift_base_target", Picoseconds, whole(1, PS_PER_S),
        "swift: the target delay's fixed part, base_target (Swift §3.5)"), "each flow's unloaded round trip"),
    optional(field("swift_h_ps", "swift_h", Picoseconds, whole(0, PS_PER_S),
        "swift: target added per hop of the path, h (topology-based scaling, §3.5)"), "one full packet's time on the sending host's link"),
    optional(field("swift_fs_range_ps", "swift_fs_range", Picoseconds, whole(0, PS_PER_S),
        "swift: the most the flow-based scaling adds, fs_range (§3.5)"), "ten h"),
    field("swift_fs_min_cwnd", "swift_fs_min_cwnd", Fraction, Range::Real { min: 0.001, max: 10_000.0 },
        "swift: the window (packets) at which the flow-based scaling adds fs_range, fs_min_cwnd (§3.5; 0.1, htsim's)"),
    field("swift_fs_max_cwnd", "swift_fs_max_cwnd", Fraction, Range::Real { min: 0.001, max: 10_000.0 },
        "swift: the window (packets) at which the flow-based scaling adds nothing, fs_max_cwnd (§3.5; 100, htsim's)"),
    field("swift_ai", "swift_ai", Fraction, Range::Real { min: 0.001, max: 100.0 },
        "swift: additive increment, packets per RTT, ai (§3.2; 1, htsim's)"),
    field("swift_beta", "swift_beta", Fraction, Range::Real { min: 0.001, max: 1.0 },
        "swift: multiplicative decrease constant, beta (§3.2; 0.8, htsim's)"),
    field("swift_max_mdf", "swift_max_mdf", Fraction, Range::Real { min: 0.001, max: 0.999 },
        "swift: the largest multiplicative decrease per RTT, max_mdf (§3.2; 0.5, htsim's)"),
    choice("swift_rto", "swift_rto", &["delay", "tcp"],
        "swift: where its retransmission timer takes RTT samples: delay = the delay of every ACK of new data, a retransmission's too, each ending the backoff (§3.6: an EWMA over the end-to-end RTT; docs/transports.md); tcp = TCP's one timed segment per RTT with Karn's rule"),
    field("swift_min_cwnd_floor", "swift_min_cwnd_floor", Fraction, Range::Real { min: 0.001, max: 10_000.0 },
        "swift: the window's floor, packets, min_cwnd (§3.4: 0.001; 1 is Table 3's Swift without windows below one packet)"),
    flag("trimming", "switch ports trim a data packet to its header when the data queue (the buffer) is full and serve headers first (NDP §3.1, UEC 1.0)"),
    optional(field("trim_bytes", "trim_bytes", Bytes, whole(1, 65_535),
        "trimming: wire bytes a trimmed packet keeps"), "header (the packet's headers)"),
    optional(field("trim_header_queue_bytes", "trim_header_queue", Bytes, whole(1, NO_MAX),
        "trimming: the header queue of each switch port, bytes"), "twice the data queue (htsim's CompositeQueue)"),
    flag("return_to_sender", "trimming, ndp: a header that finds the header queue full goes back to its sender (NDP §3.1)"),
    because(field("bulk_flows", "bulk_flows", Count, whole(0, 4096),
        "long-lived background flows between chosen hosts (bulk_from -> bulk_to), beside the workload: TCP, or on a fat tree beside one-shot flows the scenario's transport; 0 = none"),
        "4096 flows"),
    optional(field("bulk_from", "bulk_from", Unit::Weights, whole(0, U32),
        "bulk flows: sending hosts, e.g. 1,2,3 (flow i from the (i mod len)-th); hosts are numbered servers, clients, the victim's two (a fat tree: its hosts, and both lists are required)"),
        "the servers (riak: nodes) not in bulk_to, in order"),
    optional(field("bulk_to", "bulk_to", Unit::Weights, whole(0, U32),
        "bulk flows: receiving hosts (flow i to the (i mod len)-th), numbered as bulk_from"),
        "the first client (riak: node 0)"),
    optional(field("bulk_rate_bps", "bulk_rate", BitsPerSecond, whole(1_000, 10_000_000_000_000),
        "bulk flows: each writes at this rate, one MSS at a time (application-limited); at most rate"),
        "always backlogged (a bulk transfer)"),
];

/// The field whose core name is `name`.
pub fn field_named(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// The schema, the defaults and the presets as one JSON document, for the Python front.
pub fn schema_json() -> String {
    let defaults = serde_json::to_value(ScenarioSpec::default()).expect("defaults serialize");
    let fields: Vec<Value> = FIELDS
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).expect("a field serializes");
            v["default"] = defaults[f.name].clone();
            v
        })
        .collect();
    serde_json::json!({ "version": crate::VERSION, "fields": fields, "presets": crate::preset::PRESETS }).to_string()
}

/// `v` as people write it in `unit` ("200ms", "32KiB", "1Gbps").
pub fn format_value(unit: Unit, v: &Value) -> String {
    match (unit, v.as_u64()) {
        (Unit::Picoseconds, Some(ps)) => format_ps(ps),
        (Unit::Bytes, Some(b)) => format_bytes(b),
        (Unit::BitsPerSecond, Some(bps)) => format_rate(bps),
        (Unit::Durations, None) if v.is_array() => {
            v.as_array().unwrap().iter().map(|x| x.as_u64().map_or_else(|| x.to_string(), format_ps)).collect::<Vec<_>>().join(",")
        }
        _ => match v {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
            Value::Null => "none".into(),
            other => other.to_string(),
        },
    }
}

/// A duration in the largest unit that states it exactly: "100us", "1500ns", "0s".
pub fn format_ps(ps: u64) -> String {
    exact(ps, &[("s", PS_PER_S), ("ms", PS_PER_MS), ("us", 1_000_000), ("ns", 1_000)], "ps")
}

/// Bytes in the largest binary unit that states them exactly: "32KiB", "1500B".
pub fn format_bytes(b: u64) -> String {
    exact(b, &[("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)], "B")
}

/// A rate in the largest decimal unit that states it exactly: "1Gbps", "1500bps".
pub fn format_rate(bps: u64) -> String {
    exact(bps, &[("Tbps", 1_000_000_000_000), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000)], "bps")
}

fn exact(n: u64, scales: &[(&str, u64)], base: &str) -> String {
    if n == 0 {
        return format!("0{}", scales[0].0);
    }
    match scales.iter().find(|(_, s)| n >= *s && n % s == 0) {
        Some((unit, s)) => format!("{}{unit}", n / s),
        None => format!("{n}{base}"),
    }
}

/// What `f` allows on its own, in words ("64B to 65495B", "at least 1", "above zero").
pub fn allowed_text(f: &Field) -> String {
    let fmt = |n: u64| format_value(f.unit, &Value::from(n));
    let text = match f.range {
        Range::Whole { min, .. } if f.unit == Unit::Weights => {
            format!("whole numbers of at least {min}, one per class, e.g. 3,1")
        }
        Range::Whole { min, max } if f.unit == Unit::Durations => {
            format!("durations of {} to {} each, e.g. 20us,70us", format_ps(min), format_ps(max))
        }
        Range::Whole { min, max } => {
            let above_zero = min == 1 && f.unit == Unit::Picoseconds;
            match (max == NO_MAX || (max == U32 && f.unit == Unit::Count), above_zero) {
                (true, true) => "above zero".to_string(),
                (true, false) => format!("at least {}", fmt(min)),
                (false, true) => format!("above zero, at most {}", fmt(max)),
                (false, false) => format!("{} to {}", fmt(min), fmt(max)),
            }
        }
        Range::Real { min, max } if f.unit == Unit::PerSecond => format!("{min} to {max} per second"),
        Range::Real { min, max } => format!("{min} to {max}"),
        Range::Any if f.unit == Unit::Choice => format!("one of {}", f.choices.join(", ")),
        Range::Any => "on or off".to_string(),
    };
    if f.limit_source.is_empty() {
        text
    } else {
        format!("{text} ({})", f.limit_source)
    }
}

/// Check every field against its own range. `spec` is the spec as JSON.
pub(crate) fn check_fields(spec: &Value) -> Result<(), ScenarioError> {
    for f in FIELDS {
        let v = &spec[f.name];
        let refuse = || ScenarioError::new(f.name, format_value(f.unit, v), allowed_text(f));
        let ok = match (v, f.range) {
            (Value::Null, _) => f.optional,
            (Value::Array(a), Range::Whole { min, max }) if matches!(f.unit, Unit::Weights | Unit::Durations) => {
                !a.is_empty() && a.iter().all(|x| x.as_u64().is_some_and(|n| (min..=max).contains(&n)))
            }
            (_, Range::Whole { min, max }) => v.as_u64().is_some_and(|n| (min..=max).contains(&n)),
            (_, Range::Real { min, max }) => v.as_f64().is_some_and(|x| (min..=max).contains(&x)),
            (Value::String(s), Range::Any) if f.unit == Unit::Choice => f.choices.contains(&s.as_str()),
            (Value::Bool(_), Range::Any) => f.unit == Unit::Flag,
            _ => false,
        };
        if !ok {
            return Err(refuse());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_field_is_in_the_schema_once_and_nothing_else_is() {
        let spec = serde_json::to_value(ScenarioSpec::default()).unwrap();
        let mut keys: Vec<&str> = spec.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        keys.sort_unstable();
        names.sort_unstable();
        assert_eq!(keys, names);
        let mut public: Vec<&str> = FIELDS.iter().map(|f| f.public).collect();
        public.sort_unstable();
        public.dedup();
        assert_eq!(public.len(), FIELDS.len(), "two fields share a public name");
    }

    #[test]
    fn every_choice_is_a_word_the_spec_reads_and_no_other_word_is() {
        for f in FIELDS.iter().filter(|f| f.unit == Unit::Choice) {
            for &word in f.choices {
                let json = serde_json::json!({ f.name: word });
                let spec: Result<ScenarioSpec, _> = serde_json::from_value(json);
                assert!(spec.is_ok(), "{}: {word} is listed but not read: {:?}", f.name, spec.err());
            }
            let spec: Result<ScenarioSpec, _> = serde_json::from_value(serde_json::json!({ f.name: "bogus" }));
            assert!(spec.is_err(), "{} reads a word the schema does not list", f.name);
        }
    }

    #[test]
    fn the_defaults_are_inside_their_own_ranges() {
        let spec = serde_json::to_value(ScenarioSpec::default()).unwrap();
        check_fields(&spec).unwrap();
    }

    #[test]
    fn a_value_out_of_range_is_refused_naming_the_field_in_its_unit() {
        let mut spec = serde_json::to_value(ScenarioSpec::default()).unwrap();
        spec["delayed_ack_ps"] = Value::from(600 * PS_PER_MS);
        let e = check_fields(&spec).unwrap_err();
        assert_eq!((e.param, e.value.as_str()), ("delayed_ack_ps", "600ms"));
        assert_eq!(e.allowed, "0s to 500ms (RFC 1122 §4.2.3.2)");
        spec["delayed_ack_ps"] = Value::from(0);
        spec["udp_fraction"] = Value::from(0.75);
        assert_eq!(check_fields(&spec).unwrap_err().param, "udp_fraction");
    }

    #[test]
    fn units_format_exactly() {
        assert_eq!(format_ps(100_000_000), "100us");
        assert_eq!(format_ps(1_500_000), "1500ns");
        assert_eq!(format_ps(0), "0s");
        assert_eq!(format_bytes(32 * 1024), "32KiB");
        assert_eq!(format_bytes(1500), "1500B");
        assert_eq!(format_rate(1_000_000_000), "1Gbps");
        assert_eq!(format_rate(1500), "1500bps");
    }
}
