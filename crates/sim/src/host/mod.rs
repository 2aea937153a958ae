//! The hosts' TCP: every flow's connection ([`Conn`]) and what its two ends do with the
//! packets that reach them, its timers and its NICs.
//!
//! A packet crosses the parts one way at a time: an application asks a connection to write,
//! request or open (`app`, through the world); the connection's sender makes segments, which
//! enter the sending host's NIC (`net::fabric`); the fabric hands each packet to the host at
//! the far end, whose end of the connection takes it here and tells the world what it means
//! for the application ([`Arrival`]). The connections never look at a port, and the fabric
//! never decides a TCP question.
//!
//! A flow's receiving end sends ACKs, requests and SYNs; its sending end data, SYN-ACKs and
//! (for the UDP background) datagrams on the same path. Connections either persist across
//! blocks (FAST'08) or are opened for every block with a SYN / SYN-ACK exchange (Osada et
//! al.'s missions): `connect`.

pub mod conn;
pub mod credit;
pub mod flowtime;
pub mod ndp;
pub mod pacer;
mod pull;

use rand::Rng;
use serde::{Deserialize, Serialize};

pub use conn::{Conn, ConnState, PullFlow, PullSink};

use crate::ctx::Ctx;
use crate::event::{key_time, Event, FlowId, Key, PktId};
use crate::net::{Fabric, HostId};
use crate::packet::{Kind, Packet, PacketPool, CE, ECE, ECT, MAX_SACK_BLOCKS};
use crate::scenario::{Scenario, SwiftRto, TcpVariant, TCP_INIT_CWND};
use crate::tcp::congestion::swift::SwiftParams;
use crate::tcp::congestion::Cc;
use crate::tcp::linux_rcv::LinuxRcvConfig;
use crate::tcp::{ReceiverConfig, Segment, SenderConfig, TcpReceiver, TcpSender};
use crate::time::Time;
use crate::trace::{EventKind, SenderSnapshot, TraceEvent, TraceRow};

/// Payload of a request packet: a size and a block id, as the testbed's wire header.
pub const REQUEST_PAYLOAD_BYTES: u32 = 24;

/// The scenario's `transport`: what every flow runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP (`tcp`), with the scenario's variant, rules and congestion control.
    #[default]
    Tcp,
    /// NDP (Handley et al., SIGCOMM 2017): first window at line rate, then pulls paced by
    /// the receiver; NACKs for trimmed packets (`host::ndp`).
    Ndp,
    /// Receiver credit (EQDS, NSDI 2022; UEC): an unscheduled window, then credit paced
    /// by the receiver (`host::credit`).
    Credit,
    /// Swift (Kumar et al., SIGCOMM 2020): TCP's connection with Swift's delay-based
    /// window in place of `cc`, paced below one packet (`tcp::congestion::swift`).
    Swift,
}

impl Transport {
    /// Receiver-driven: every flow has its [`PullFlow`] (NDP, credit).
    #[inline(always)]
    pub fn pulls(self) -> bool {
        matches!(self, Transport::Ndp | Transport::Credit)
    }
}

/// The connections' counters (of measured flows, but for `background_bytes_dropped`).
#[derive(Default, Debug, Clone)]
pub struct ConnCounters {
    /// Data payload bytes put on the wire (retransmissions included).
    pub data_bytes_sent: u64,
    /// Data payload bytes that reached their receiver (duplicates included).
    pub data_bytes_arrived: u64,
    pub data_bytes_dropped: u64,
    /// Payload bytes handed to the receiving applications in order.
    pub app_bytes: u64,
    /// Timeouts whose segment had in fact arrived: its timeout-triggered retransmission
    /// reached (or was dropped before) a receiver that already held it.
    pub spurious_timeouts: u64,
    pub syn_timeouts: u64,
    /// Packets of an earlier connection of the flow that arrived after it was replaced.
    pub stale_packets: u64,
    /// Requests dropped at a switch (each sent again: [`Conns::request_dropped`]).
    pub requests_dropped: u64,
    /// Pure ACKs dropped at a switch.
    pub acks_dropped: u64,
    /// Data payload bytes of background (unmeasured) flows dropped at a switch.
    pub background_bytes_dropped: u64,
}

/// What a packet reaching one end of its flow means for the applications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Nothing.
    Nothing,
    /// A data segment of `len` payload bytes reached the receiving end of `flow`; its
    /// in-order bytes went from `from` to `to` (equal: nothing new for the application).
    Data { flow: FlowId, len: u32, from: u64, to: u64 },
    /// An ACK reached the sending end of `flow`: `sent`, the sender transmitted in answer;
    /// `all_acked`, a measured flow's data became all acknowledged.
    Acked { flow: FlowId, sent: bool, all_acked: bool },
    /// A request (`number`: bytes asked for, or a Riak request's number) reached the
    /// sending end of `flow`; `sent`, its piggybacked ACK made the sender transmit.
    Request { flow: FlowId, number: u64, sent: bool },
    /// `flow`'s SYN-ACK reached its receiving end: the connection is open.
    Established(FlowId),
    /// A new connection of `flow` replaced the old one at its sending end.
    Accepted(FlowId),
}

/// Every flow's connection, and the settings they share.
pub struct Conns {
    conns: Vec<Conn>,
    sender_cfg: SenderConfig,
    receiver_cfg: ReceiverConfig,
    seed: u64,
    /// TCP/IP header bytes on every packet.
    header: u32,
    /// Connections are opened for every block (`connect`), not pre-established.
    handshake: bool,
    syn_timeout: Time,
    /// Host send jitter: each data packet enters its NIC up to this late (ps).
    send_jitter: u64,
    /// Host send jitter: the event key (time and tie order) of each sending host's last
    /// jittered packet entering its NIC, by host: packets of one host enter in the order
    /// TCP sent them, under either tie rule.
    jitter_entered: Vec<Key>,
    /// Data segments carry ECT (RFC 3168 §6.1.1): the congestion control reacts to marks.
    ect: bool,
    /// No background flow: every flow is measured.
    all_measured: bool,
    scratch: Vec<Segment>,
    pub counters: ConnCounters,
    /// What the flows run; not TCP: every flow has its [`PullFlow`].
    transport: Transport,
    /// A receiver-driven transport's first (NDP) or unscheduled (credit) window, packets,
    /// if `init_cwnd` was given (else each flow's path BDP: [`Conns::bdp_packets`]).
    first_window: Option<u32>,
    /// Each receiving host's pull pacer (receiver-driven transports), by host.
    pacers: Vec<Option<pacer::PullPacer>>,
    /// Where each flow's time went (`time_breakdown`); `None`: not kept.
    pub clocks: Option<Box<flowtime::FlowClocks>>,
    /// Swift's settings (`transport = swift`); a flow's unset ones come from its path.
    swift: Option<SwiftSettings>,
}

/// The scenario's `swift_*` fields; `None`: derived from each flow's path (`Conns::add`).
#[derive(Clone, Copy, Debug)]
struct SwiftSettings {
    base_target: Option<Time>,
    h: Option<Time>,
    fs_range: Option<Time>,
    fs_min_cwnd: f64,
    fs_max_cwnd: f64,
    ai: f64,
    beta: f64,
    max_mdf: f64,
    min_cwnd: f64,
}

/// The ACK receiver `r` of `flow` sends now: cumulative, TSecr, window, ECE (DCTCP's echo)
/// and the SACK blocks it holds, each costing 8 bytes of option plus 2 for the option
/// header (RFC 2018 §3).
#[inline(always)] // on the per-ACK path: out of line it cost 2 % of a run's instructions
fn ack_packet(flow: FlowId, r: &mut TcpReceiver, header: u32, now: Time) -> Packet {
    r.on_ack_sent();
    let mut pkt = Packet::new(flow, Kind::Ack, header, 0, now.0, r.ack_number());
    pkt.ts = r.ts_echo();
    pkt.set_window(r.advertised_window());
    if r.ece() {
        pkt.ecn = ECE;
    }
    if r.has_sack_blocks() {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let n = r.sack_blocks(&mut blocks);
        pkt.set_sack(&blocks[..n]);
        pkt.wire_bytes += 2 + 8 * n as u32;
    }
    pkt
}

impl Conns {
    /// The connections of a validated scenario (none yet: [`Conns::add`]); `hosts` for the
    /// send jitter's per-host clocks.
    pub(crate) fn new(sc: &Scenario, hosts: usize) -> Conns {
        let s = &sc.spec;
        let sender_cfg = SenderConfig {
            variant: s.tcp,
            mss: s.mss_bytes as u64,
            init_cwnd: s.init_cwnd_segments.unwrap_or(TCP_INIT_CWND) as u64 * s.mss_bytes as u64,
            rwnd: sc.rwnd_bytes,
            dupack_threshold: s.dupack_threshold,
            limited_transmit: s.limited_transmit,
            slow_start: s.slow_start,
            slow_start_after_idle: s.slow_start_after_idle,
            rto_min: sc.rto_min,
            rto_max: Time(s.rto_max_ps),
            granularity: Time(s.timer_granularity_ps),
            timer_ticks: s.timer_ticks,
            // Swift's RTO takes its samples from its own delay measurement (§3.6): the
            // sender's timestamp path (every ACK of new data, from its echo)
            timestamps: s.timestamps || (s.transport == Transport::Swift && s.swift_rto == SwiftRto::Delay),
            rto_random: s.rto_random,
            rto_backoff: s.rto_backoff,
            rules: s.tcp_rules,
            cc: s.cc,
            prr: s.prr,
            rack_tlp: s.rack_tlp,
            hystart: s.hystart,
            ssthresh_from_cwnd: s.ssthresh_from_cwnd,
            count_acked_segments: s.count_acked_segments,
            cwnd_limited_growth: s.cwnd_limited_growth,
            prr_extra_if_advanced: s.prr_extra_if_advanced,
            prr_counts_fast_retransmit: s.prr_counts_fast_retransmit,
            grow_on_recovery_exit: s.grow_on_recovery_exit,
            rack_timer_floor: s.rack_timer_floor,
            recovery_from_loss: s.recovery_from_loss,
            loss_retransmit_queue: s.loss_retransmit_queue,
            frto: s.frto,
            rearm_rto_from_head: s.rearm_rto_from_head,
            tso_deferral: s.tso_deferral,
            gso_half_cwnd: s.gso_half_cwnd,
            rack_rtt_sack_first: s.rack_rtt_sack_first,
            sacked_leave_flight: s.sacked_leave_flight,
            cwnd_limited_latch: s.cwnd_limited_latch,
            cubic_linux: s.cubic_linux,
            rto_min_on_rttvar: s.rto_min_on_rttvar,
            timer_wheel: s.timer_wheel,
        };
        let receiver_cfg = ReceiverConfig {
            delayed_ack: (s.delayed_ack_ps > 0).then_some(Time(s.delayed_ack_ps)),
            sack: s.tcp == TcpVariant::Sack,
            window: sc.rwnd_bytes,
            dctcp_echo: s.cc == Cc::Dctcp,
            ack_short_below: s.ack_short_segments.then_some(s.mss_bytes),
            linux: (s.rcv_window_growth || s.rcv_autotuning || s.ack_pingpong || s.quickack_mode).then_some(
                LinuxRcvConfig {
                    grow_window: s.rcv_window_growth,
                    autotune: s.rcv_autotuning,
                    pingpong: s.ack_pingpong,
                    advmss: s.mss_bytes as u64,
                    scaling_ratio: s.rcv_scaling_ratio as u64,
                    ato: Time(s.delayed_ack_ps),
                    quickack: s.quickack_mode,
                    rto_min: s.receiver_rto_min_ps.map_or(sc.rto_min, Time),
                    tick: s.timer_ticks.then_some(Time(s.timer_granularity_ps)),
                    rtt_from_window: s.rcv_rtt_from_window,
                },
            ),
            timer_wheel: s.timer_wheel.then_some(Time(s.timer_granularity_ps)),
        };
        let swift = (s.transport == Transport::Swift).then(|| SwiftSettings {
            base_target: s.swift_base_target_ps.map(Time),
            h: s.swift_h_ps.map(Time),
            fs_range: s.swift_fs_range_ps.map(Time),
            fs_min_cwnd: s.swift_fs_min_cwnd,
            fs_max_cwnd: s.swift_fs_max_cwnd,
            ai: s.swift_ai,
            beta: s.swift_beta,
            max_mdf: s.swift_max_mdf,
            min_cwnd: s.swift_min_cwnd_floor,
        });
        Conns {
            conns: Vec::new(),
            ect: sender_cfg.cc.uses_ecn(),
            sender_cfg,
            receiver_cfg,
            seed: s.seed,
            header: s.header_bytes,
            handshake: s.handshake,
            syn_timeout: Time(s.syn_timeout_ps),
            send_jitter: s.send_jitter_ps,
            jitter_entered: vec![0; if s.send_jitter_ps > 0 { hosts } else { 0 }],
            all_measured: true,
            scratch: Vec::with_capacity(64),
            counters: ConnCounters::default(),
            transport: s.transport,
            first_window: s.init_cwnd_segments,
            pacers: Vec::new(),
            swift,
            clocks: s.time_breakdown.then(|| {
                // Riak's replies are pipelined on their connection (app::riak)
                let pipelined = s.workload == crate::scenario::Workload::Riak;
                Box::new(flowtime::FlowClocks::new(s.rate_bps, s.mss_bytes as u64, s.header_bytes as u64, pipelined))
            }),
        }
    }

    /// A flow from host `src` to host `dst` of application `app`, in QoS class `class`:
    /// the next flow id. Its connection is established unless connections are made per
    /// block (then `connect` opens it); a background flow (`measured` false) is always.
    /// A pre-established connection's SYN / SYN-ACK gave its sender the first RTT sample
    /// (RFC 6298 §2.2): its path's, out and back.
    pub(crate) fn add(
        &mut self,
        cx: &mut Ctx,
        net: &mut Fabric,
        src: HostId,
        dst: HostId,
        class: u8,
        measured: bool,
        app: u8,
    ) -> FlowId {
        let f = self.conns.len() as FlowId;
        let mut sender = self.new_sender(f, 0);
        let one_way = net.topology().one_way(src, dst, self.header as u64);
        sender.rto.sample(Time(2 * one_way.0));
        if let Some(sw) = self.swift {
            let (params, hops) = self.swift_params(net, sw, src, dst);
            sender.use_swift(params, hops);
        }
        let state = if self.handshake && measured { ConnState::Closed } else { ConnState::Open };
        let receiver = TcpReceiver::new(self.receiver_cfg.clone());
        let nics = net.add_flow(src, dst, class);
        let pull = self.transport.pulls().then(|| {
            self.pacer_for(net, dst);
            let mut rto = crate::tcp::rto::RtoEstimator::new(self.sender_cfg.rto_min, self.sender_cfg.rto_max, self.sender_cfg.granularity);
            rto.sample(Time(2 * one_way.0));
            let ndp = self.transport == Transport::Ndp;
            let first_window = self.first_window.unwrap_or_else(|| self.bdp_packets(net, src, dst));
            let sender = ndp::PullSender::new(self.sender_cfg.mss, first_window, rto, ndp);
            let sink = if ndp { PullSink::Ndp(Default::default()) } else { PullSink::Credit(Default::default()) };
            Box::new(PullFlow { sender, sink })
        });
        self.conns.push(Conn {
            sender,
            receiver,
            state,
            conn: 0,
            server_conn: 0,
            syn_sent_at: Time::ZERO,
            syn_timeout: self.syn_timeout,
            syn_deadline: Time::NEVER,
            peer_tsval: Time::ZERO,
            request_tsval: Time::ZERO,
            window: self.receiver_cfg.window,
            nics,
            hosts: (src, dst),
            measured,
            app,
            pull,
        });
        self.all_measured &= measured;
        cx.recorder.add_flow();
        f
    }

    /// Swift's parameters for a flow from `src` to `dst` and its path's hops (switches
    /// crossed: the TTL's count, §3.5). Unset, `base_target` is the path's unloaded round
    /// trip (a full data packet out, an ACK back, store and forward), `h` one full packet's
    /// time on the sending host's link (a packet of queue per hop) and `fs_range` ten `h`.
    fn swift_params(&self, net: &Fabric, sw: SwiftSettings, src: HostId, dst: HostId) -> (SwiftParams, u32) {
        let topo = net.topology();
        let base = self.unloaded_rtt(net, src, dst);
        let h = sw.h.unwrap_or_else(|| self.packet_time(net, src));
        let params = SwiftParams {
            base_target: sw.base_target.unwrap_or(base),
            h,
            fs_range: sw.fs_range.unwrap_or(Time(10 * h.0)),
            fs_min_cwnd: sw.fs_min_cwnd,
            fs_max_cwnd: sw.fs_max_cwnd,
            ai: sw.ai,
            beta: sw.beta,
            max_mdf: sw.max_mdf,
            min_cwnd: sw.min_cwnd,
        };
        (params, topo.hops(src, dst) - 1)
    }

    /// The round trip of `src`'s flow to `dst` on an idle fabric: a full data packet out,
    /// stored and forwarded at every hop (propagation plus its serialization on each link),
    /// and a header-sized answer (ACK, NACK, pull) back the same way. Swift's base target
    /// and NDP's and credit's first window start from it.
    fn unloaded_rtt(&self, net: &Fabric, src: HostId, dst: HostId) -> Time {
        let topo = net.topology();
        let full = self.header as u64 + self.sender_cfg.mss;
        topo.one_way(src, dst, full) + topo.one_way(dst, src, self.header as u64)
    }

    /// One full data packet's time on `host`'s own link.
    fn packet_time(&self, net: &Fabric, host: HostId) -> Time {
        let topo = net.topology();
        crate::time::serialization_time(self.header as u64 + self.sender_cfg.mss, topo.ports[topo.nic(host) as usize].rate_bps)
    }

    /// NDP's and credit's first window when `init_cwnd` is not given: the path's
    /// bandwidth-delay product in full packets, rounded up, so the first window keeps the
    /// sender's link busy until the first pull (or credit) is back. (NDP sends the first
    /// window at line rate and then one packet per pull, so a first window below the BDP
    /// is also the most the flow ever has in flight; htsim's `EXAMPLES/in_and_out` reports
    /// the same results down to a first window of 6 packets on its 10 Gbps, 9 KB fat tree
    /// and a flow that cannot fill its pipe below 6; this rule gives 8 across its pods.
    /// docs/transports.md says where the rule comes from.)
    fn bdp_packets(&self, net: &Fabric, src: HostId, dst: HostId) -> u32 {
        let (rtt, per_packet) = (self.unloaded_rtt(net, src, dst), self.packet_time(net, src));
        rtt.0.div_ceil(per_packet.0.max(1)).clamp(1, u32::MAX as u64) as u32
    }

    /// A fresh sender for connection `conn` of `flow`; its random draws derive from the
    /// run's seed, the flow and the connection.
    fn new_sender(&self, flow: FlowId, conn: u32) -> TcpSender {
        let seed = self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (flow as u64 + 1) ^ ((conn as u64) << 40);
        TcpSender::with_seed(self.sender_cfg.clone(), seed)
    }

    /// Nothing per packet needs the paths a lean world skips: no ECN-capable senders, no
    /// send jitter, no background flow, TCP.
    pub(crate) fn is_lean(&self) -> bool {
        !self.ect && self.send_jitter == 0 && self.all_measured && self.transport == Transport::Tcp && self.clocks.is_none()
    }

    /// Account flow `f` up to now in its sender's state (the time breakdown, when kept).
    #[inline(never)]
    pub(super) fn clock_tick(&mut self, cx: &Ctx, net: &Fabric, f: FlowId) {
        let phase = self.phase(f);
        if let Some(c) = &mut self.clocks {
            c.tick(f, phase, cx.now, net.held_through(f, cx.now));
        }
    }

    /// What flow `f`'s sender is doing, for the time breakdown: TCP's congestion state; a
    /// receiver-driven sender waits for pulls while it has packets to send.
    pub(super) fn phase(&self, f: FlowId) -> flowtime::Phase {
        let fl = &self.conns[f as usize];
        match fl.pull.as_deref() {
            None => flowtime::tcp_phase(&fl.sender),
            Some(p) if p.sender.has_unsent() => flowtime::Phase::PullWait,
            Some(_) => flowtime::Phase::Open,
        }
    }

    /// Flow `f` made progress now (the time breakdown, when kept).
    #[inline(never)]
    pub(super) fn clock_progress(&mut self, cx: &Ctx, net: &Fabric, f: FlowId) {
        let phase = self.phase(f);
        if let Some(c) = &mut self.clocks {
            c.progress(f, phase, cx.now, net.held_through(f, cx.now));
        }
    }

    /// Flow `f` begins a part now, unless it is in one (the time breakdown, when kept).
    pub(crate) fn clock_begin(&mut self, cx: &Ctx, f: FlowId) {
        if let Some(c) = &mut self.clocks {
            c.begin(f, self.conns[f as usize].hosts.1, cx.now);
        }
    }

    /// The flows run a receiver-driven transport (NDP, credit), not TCP.
    #[inline(always)]
    fn pulls(&self) -> bool {
        self.transport.pulls()
    }

    /// What the flows run.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// A receiving host's pull pacer, if it has one.
    pub fn pacer(&self, host: HostId) -> Option<&pacer::PullPacer> {
        self.pacers.get(host as usize).and_then(Option::as_ref)
    }

    /// Flow `f`'s connection.
    #[inline]
    pub fn get(&self, f: FlowId) -> &Conn {
        &self.conns[f as usize]
    }

    /// Flows so far (their ids are `0..len`).
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// The senders' settings.
    pub fn sender_config(&self) -> &SenderConfig {
        &self.sender_cfg
    }

    /// In-order bytes flow `f`'s receiving end holds (its stream offset).
    #[inline]
    pub fn delivered(&self, f: FlowId) -> u64 {
        self.conns[f as usize].receiver.rcv_nxt - 1
    }

    // ---- the sending end -------------------------------------------------------------

    /// The sending end of flow `f` writes `bytes` to its socket; true if it transmitted.
    pub(crate) fn write<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, bytes: u64) -> bool {
        if !LEAN && self.pulls() {
            return self.write_pull(cx, net, f, bytes);
        }
        if !LEAN && self.clocks.is_some() {
            let held = net.held_through(f, cx.now);
            let phase = flowtime::tcp_phase(&self.conns[f as usize].sender);
            let c = self.clocks.as_mut().expect("kept");
            c.written(f, phase, cx.now, held, bytes);
        }
        self.conns[f as usize].sender.write(cx.now, bytes, &mut self.scratch);
        self.trace::<false>(cx, f, TraceEvent::Write);
        self.transmit::<LEAN>(cx, net, f)
    }

    /// Put the segments flow `flow`'s sender just produced (in `scratch`) on its host's
    /// NIC and keep its timer; true if there were any. (The segments are read in place:
    /// taking the vector out and putting it back cost more than the loop on the per-ACK path.)
    fn transmit<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, flow: FlowId) -> bool {
        let fl = &self.conns[flow as usize];
        let (conn, measured) = (fl.server_conn, LEAN || fl.measured);
        let sent_any = !self.scratch.is_empty();
        for i in 0..self.scratch.len() {
            let seg = self.scratch[i];
            if !LEAN && cx.recorder.events {
                let kind = if seg.retransmit { EventKind::Rtx } else { EventKind::Tx };
                cx.recorder.event(cx.now, kind, flow, seg.seq, seg.len as u64, None);
            }
            // ns-2 pads a write's short last segment to a whole packet (tcp::ns2_rules)
            let payload = self.conns[flow as usize].sender.packet_bytes(seg.len as u64) as u32;
            // `ack` carries the TSecr: the TSval of the last ACK or request the server had
            let echo = self.conns[flow as usize].peer_tsval.0;
            let mut pkt = Packet::new(flow, Kind::Data, self.header + payload, seg.len, seg.seq, echo);
            pkt.after_timeout = seg.after_timeout;
            pkt.conn = conn;
            pkt.ts = cx.now; // TSval (RFC 7323): when TCP sent it
            if !LEAN && self.ect {
                pkt.ecn = ECT; // RFC 3168 §6.1.1: data segments only, not pure ACKs or SYNs
            }
            if measured {
                self.counters.data_bytes_sent += seg.len as u64;
            }
            self.send_data::<LEAN>(cx, net, flow, pkt);
        }
        self.scratch.clear();
        if !LEAN && sent_any && self.clocks.is_some() {
            self.clock_progress(cx, net, flow);
        }
        let sender = &mut self.conns[flow as usize].sender;
        if let Some(t) = sender.take_timer_request() {
            cx.queue.push(t, Event::RtoTimer(flow));
        }
        if !LEAN && self.swift.is_some() {
            if let Some(t) = sender.take_pace_request() {
                cx.queue.push(t, Event::PaceTimer(flow));
            }
        }
        sent_any
    }

    /// Flow `f`'s pacing event (Swift below one packet) may fire; true if it transmitted.
    pub(crate) fn on_pace_timer(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) -> bool {
        self.conns[f as usize].sender.on_pace_event(cx.now, &mut self.scratch);
        self.transmit::<false>(cx, net, f)
    }

    /// Flow `f`'s TCP sends `pkt`: it enters the NIC now, or up to `send_jitter` later
    /// (ns-2's `overhead_`: host timing noise breaks drop-tail phase lock-out), never
    /// before the host's previous packet.
    #[inline(always)]
    fn send_data<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, pkt: Packet) {
        if LEAN || self.send_jitter == 0 {
            return self.send_from_sender::<LEAN>(cx, net, f, pkt);
        }
        let late = cx.now + Time(cx.rng.random_range(0..=self.send_jitter));
        let host = self.conns[f as usize].hosts.0 as usize;
        let previous = self.jitter_entered[host];
        let enter = late.max(key_time(previous));
        // at the instant of the host's previous packet, after it: the counter of
        // `tie_break=fifo` orders them so already, `random`'s draws would not
        let key = cx.queue.reserve(enter).max(previous + 1);
        self.jitter_entered[host] = key;
        let id = cx.pool.alloc(pkt);
        cx.queue.push_key(key, Event::NicEnter(id));
    }

    /// The sending end of flow `f` puts `pkt` on its NIC now. Inlined: the packet is then
    /// written into its pool slot as it is built, where a call took it through the stack in
    /// narrow stores copied by wide loads (which the store buffer cannot forward).
    #[inline(always)]
    fn send_from_sender<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, pkt: Packet) {
        let nic = self.conns[f as usize].nics.0;
        let id = cx.pool.alloc(pkt);
        let admitted = net.offer::<LEAN>(cx, nic, id);
        debug_assert!(admitted, "host queues are unbounded");
    }

    /// The receiving end of `pkt`'s flow puts it on its NIC now (inlined: see
    /// `send_from_sender`); the mirror sees it if that is the watched host's NIC.
    #[inline(always)]
    fn send_from_receiver<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, pkt: Packet) {
        let nic = self.conns[pkt.flow as usize].nics.1;
        let id = cx.pool.alloc(pkt);
        cx.recorder.capture_sent(cx.now, nic, cx.pool.get(id));
        let admitted = net.offer::<LEAN>(cx, nic, id);
        debug_assert!(admitted, "host queues are unbounded");
    }

    /// A datagram of `bytes` from the sending end of flow `f`'s host (UDP background: it
    /// rides the flow's path, outside its connection).
    pub(crate) fn send_datagram(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, bytes: u32) {
        let pkt = Packet::new(f, Kind::Udp, bytes, 0, 0, 0);
        self.send_from_sender::<false>(cx, net, f, pkt);
    }

    /// A packet a host held back enters its NIC: a jittered data packet, or a dropped
    /// request sent again (with the ACK, window and echo of now: `refresh_request`).
    pub(crate) fn nic_enter<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, id: PktId) {
        if cx.pool.get(id).kind == Kind::Request {
            self.refresh_request(cx, id);
            if let Some(c) = self.clocks.as_mut().filter(|_| !LEAN) {
                c.request_timeout(cx.pool.get(id).flow, cx.now);
            }
        }
        let pkt = cx.pool.get(id);
        let fl = &self.conns[pkt.flow as usize];
        let nic = if pkt.kind.to_client() { fl.nics.0 } else { fl.nics.1 };
        net.offer::<LEAN>(cx, nic, id);
    }

    /// Flow `f`'s retransmission timer may expire; true if its sender transmitted.
    pub(crate) fn on_rto<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) -> bool {
        if !LEAN && self.pulls() {
            return self.on_pull_rto(cx, net, f);
        }
        if !LEAN && self.clocks.is_some() {
            self.clock_tick(cx, net, f);
        }
        if self.conns[f as usize].sender.on_timer_event(cx.now, &mut self.scratch) {
            if let Some(c) = self.clocks.as_mut().filter(|_| !LEAN) {
                c.timeout(f);
            }
            self.trace::<LEAN>(cx, f, TraceEvent::Timeout);
            net.note_timeout(cx, f);
            if cx.recorder.losses {
                let fl = &self.conns[f as usize];
                cx.recorder.timeout(cx.now, f, fl.sender.snd_una, fl.hosts.1);
            }
        } else if !LEAN && cx.recorder.events {
            // the probe or the reordering timer: RACK's marks may start recovery and PRR set
            // cwnd, which the per-event trace shows before what the timer sends
            self.record_state(cx, f);
        }
        self.transmit::<LEAN>(cx, net, f)
    }

    /// An ACK, request or SYN reached the sending end of its flow. (Inlined in its caller:
    /// the star's per-ACK path.)
    #[inline(always)]
    pub(crate) fn at_sending_end<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        let f = p.flow as usize;
        if !LEAN && self.pulls() {
            return self.at_pull_sender(cx, net, p);
        }
        if p.kind == Kind::Syn {
            return self.on_syn(cx, net, p);
        }
        if p.conn != self.conns[f].server_conn {
            self.counters.stale_packets += 1;
            return Arrival::Nothing;
        }
        if !LEAN && cx.recorder.events {
            let payload = if p.kind == Kind::Request { REQUEST_PAYLOAD_BYTES as u64 } else { 0 };
            cx.recorder.event(cx.now, EventKind::Ack, p.flow, p.ack, payload, None);
        }
        let clocked = !LEAN && self.clocks.is_some();
        let una = self.conns[f].sender.snd_una;
        if clocked {
            self.clock_tick(cx, net, p.flow);
        }
        let fl = &mut self.conns[f];
        let s = &mut fl.sender;
        match p.kind {
            Kind::Ack => {
                fl.peer_tsval = Time(p.seq); // the ACK's TSval (RFC 7323 TS.Recent)
                let was_unacked = !s.all_acked();
                s.set_ece(p.has(ECE));
                s.on_ack_segment(cx.now, p.ack, p.wnd as u64, p.ts, &p.sack_blocks(), &mut self.scratch);
                let all_acked = was_unacked && s.all_acked() && (LEAN || fl.measured);
                if clocked && s.snd_una != una {
                    self.clock_progress(cx, net, p.flow);
                }
                self.trace::<LEAN>(cx, p.flow, TraceEvent::Ack);
                let sent = self.transmit::<LEAN>(cx, net, p.flow);
                Arrival::Acked { flow: p.flow, sent, all_acked }
            }
            Kind::Request => {
                fl.peer_tsval = fl.request_tsval;
                // its piggybacked ACK first
                s.on_data_segment_ack(cx.now, p.ack, p.wnd as u64, p.ts, &mut self.scratch);
                if clocked && s.snd_una != una {
                    self.clock_progress(cx, net, p.flow);
                }
                let sent = self.transmit::<LEAN>(cx, net, p.flow);
                Arrival::Request { flow: p.flow, number: p.seq, sent }
            }
            // a TCP flow's header returned by a trimming port: its payload is lost
            Kind::Bounced => {
                self.count_lost_payload(p.flow, p.len);
                Arrival::Nothing
            }
            _ => unreachable!("a sending end receives ACKs, requests and SYNs"),
        }
    }

    /// A SYN reached the sending end: a new connection replaces the old one (whose stale
    /// packets will be ignored), and the SYN-ACK goes back.
    fn on_syn(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        let f = p.flow;
        let mut arrival = Arrival::Nothing;
        if p.conn != self.conns[f as usize].server_conn {
            let mut sender = self.new_sender(f, p.conn);
            let fl = &mut self.conns[f as usize];
            sender.stats = std::mem::take(&mut fl.sender.stats); // counters span connections
            fl.sender = sender;
            fl.server_conn = p.conn;
            arrival = Arrival::Accepted(f);
        }
        self.conns[f as usize].sender.set_peer_window(p.wnd as u64);
        let mut pkt = Packet::new(f, Kind::SynAck, self.header, 0, 0, 0);
        pkt.conn = p.conn;
        self.send_from_sender::<false>(cx, net, f, pkt);
        arrival
    }

    // ---- the receiving end -------------------------------------------------------------

    /// Data, a SYN-ACK or a datagram reached the receiving end of its flow.
    #[inline(always)]
    pub(crate) fn at_receiving_end<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        match p.kind {
            Kind::Data => self.on_data::<LEAN>(cx, net, p),
            Kind::SynAck => self.on_syn_ack(cx, net, p),
            Kind::Udp => Arrival::Nothing, // the background's datagrams are discarded
            Kind::Header => self.on_header(cx, net, p),
            _ => unreachable!("a receiving end receives data, SYN-ACKs, datagrams and headers"),
        }
    }

    #[inline(always)]
    pub(crate) fn on_data<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        if !LEAN && self.pulls() {
            return self.on_pull_data(cx, net, p);
        }
        let f = p.flow as usize;
        let fl = &mut self.conns[f];
        let measured = LEAN || fl.measured;
        if measured {
            self.counters.data_bytes_arrived += p.len as u64;
        }
        if p.conn != fl.conn {
            self.counters.stale_packets += 1;
            return Arrival::Nothing;
        }
        if measured && p.after_timeout && fl.receiver.holds(p.seq, p.len) {
            self.counters.spurious_timeouts += 1;
        }
        let before = fl.receiver.rcv_nxt - 1;
        if !LEAN && fl.receiver.on_ce(p.has(CE)) {
            // DCTCP (RFC 8257 §3.2): the CE bit changed while an ACK was delayed
            self.send_ack::<LEAN>(cx, net, p.flow);
            self.conns[f].receiver.ce_flushed();
        }
        let receiver = &mut self.conns[f].receiver;
        if !LEAN && self.swift.is_some() {
            receiver.echo_own(p.ts);
        } else {
            receiver.note_timestamp(p.seq, p.ts);
        }
        if receiver.models_linux_window() {
            receiver.note_tsecr(cx.now, Time(p.ack), p.len);
        }
        let got = receiver.on_segment(cx.now, p.seq, p.len);
        if got.ack_now {
            self.send_ack::<LEAN>(cx, net, p.flow);
        } else {
            self.schedule_delack(cx, p.flow);
        }
        if measured {
            self.counters.app_bytes += got.delivered;
        }
        Arrival::Data { flow: p.flow, len: p.len, from: before, to: before + got.delivered }
    }

    fn on_syn_ack(&mut self, cx: &mut Ctx, _net: &mut Fabric, p: Packet) -> Arrival {
        let fl = &mut self.conns[p.flow as usize];
        if p.conn != fl.conn || fl.state != ConnState::SynSent {
            return Arrival::Nothing; // a late SYN-ACK for a retransmitted SYN, or an old connection
        }
        fl.state = ConnState::Open;
        // The server's first RTT sample (RFC 6298 §2.2) is its SYN-ACK -> ACK time; on
        // this symmetric path it equals the client's SYN -> SYN-ACK time.
        let rtt = cx.now - fl.syn_sent_at;
        fl.sender.rto.sample(rtt);
        Arrival::Established(p.flow)
    }

    fn send_ack<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, flow: FlowId) {
        let fl = &mut self.conns[flow as usize];
        let mut pkt = ack_packet(flow, &mut fl.receiver, self.header, cx.now);
        pkt.conn = fl.conn;
        self.send_from_receiver::<LEAN>(cx, net, pkt);
    }

    fn schedule_delack(&mut self, cx: &mut Ctx, flow: FlowId) {
        if let Some(t) = self.conns[flow as usize].receiver.take_timer_request() {
            cx.queue.push(t, Event::DelAckTimer(flow));
        }
    }

    /// Flow `f`'s delayed-ACK timer may expire.
    pub(crate) fn on_delack<const LEAN: bool>(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) {
        if self.conns[f as usize].receiver.on_timer_event(cx.now) {
            self.send_ack::<LEAN>(cx, net, f);
        }
        self.schedule_delack(cx, f);
    }

    /// Open a new connection of flow `f` (connections made per block): a SYN, with the
    /// window the flow advertises.
    pub(crate) fn connect(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) {
        let fl = &mut self.conns[f as usize];
        fl.conn += 1;
        fl.state = ConnState::SynSent;
        fl.syn_timeout = self.syn_timeout;
        let mut receiver = TcpReceiver::new(ReceiverConfig { window: fl.window, ..self.receiver_cfg.clone() });
        receiver.stats = std::mem::take(&mut fl.receiver.stats);
        fl.receiver = receiver;
        self.clock_begin(cx, f);
        self.send_syn(cx, net, f);
    }

    fn send_syn(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) {
        let fl = &mut self.conns[f as usize];
        fl.syn_sent_at = cx.now;
        fl.syn_deadline = cx.now + fl.syn_timeout;
        let mut pkt = Packet::new(f, Kind::Syn, self.header, 0, 0, 0);
        pkt.conn = fl.conn;
        pkt.set_window(fl.window);
        let deadline = fl.syn_deadline;
        self.send_from_receiver::<false>(cx, net, pkt);
        cx.queue.push(deadline, Event::SynTimer(f));
    }

    /// Flow `f`'s SYN timer may expire: the SYN or its SYN-ACK was lost, and the SYN goes
    /// again, backing off (RFC 6298 §5.5).
    pub(crate) fn on_syn_timer(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) {
        let fl = &mut self.conns[f as usize];
        if fl.state != ConnState::SynSent || fl.syn_deadline != cx.now {
            return;
        }
        self.counters.syn_timeouts += 1;
        fl.syn_timeout = Time(2 * fl.syn_timeout.0);
        self.send_syn(cx, net, f);
    }

    /// The receiving end of flow `f` sends request `number` (Riak: its number on the
    /// connection; synchronized reads: the bytes asked for). It is data on the same
    /// connection: it carries the cumulative ACK and window, so nothing is left waiting
    /// for the delayed-ACK timer.
    pub(crate) fn send_request(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, number: u64) {
        self.clock_begin(cx, f);
        let wire = self.header + REQUEST_PAYLOAD_BYTES;
        let fl = &mut self.conns[f as usize];
        fl.receiver.on_data_sent(cx.now);
        fl.receiver.on_ack_sent();
        fl.request_tsval = cx.now;
        let mut pkt = Packet::new(f, Kind::Request, wire, REQUEST_PAYLOAD_BYTES, number, fl.receiver.ack_number());
        pkt.conn = fl.conn;
        pkt.ts = fl.receiver.ts_echo();
        pkt.set_window(fl.receiver.advertised_window());
        self.send_from_receiver::<false>(cx, net, pkt);
    }

    /// A dropped request enters its NIC again: like any segment TCP sends, it carries the
    /// connection's ACK, window and timestamp echo of now (RFC 793 §3.7 "Managing the
    /// Window", RFC 7323 §4.3), not those of its first sending an RTOmin ago: a stale echo
    /// would make the replica's next RTT sample an RTOmin too long.
    pub(crate) fn refresh_request(&mut self, cx: &mut Ctx, id: PktId) {
        let f = cx.pool.get(id).flow as usize;
        if cx.pool.get(id).conn != self.conns[f].conn {
            return; // its connection was replaced: the replica will count it stale
        }
        let fl = &mut self.conns[f];
        fl.receiver.on_ack_sent();
        fl.request_tsval = cx.now;
        let p = cx.pool.get_mut(id);
        p.ack = fl.receiver.ack_number();
        p.ts = fl.receiver.ts_echo();
        p.set_window(fl.receiver.advertised_window());
    }

    /// Flow `f` advertises window `w` from now on; with `may_update` (its application still
    /// expects data on it), a window update goes now if the window changed and the
    /// connection is open.
    pub(crate) fn set_window(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, w: u64, may_update: bool) {
        let fl = &mut self.conns[f as usize];
        fl.window = w;
        let changed = fl.receiver.window != w;
        fl.receiver.window = w;
        if may_update && changed && fl.state == ConnState::Open {
            self.send_ack::<false>(cx, net, f);
        }
    }

    /// Flow `f`'s part of the block is done (`last_of_block`: the block's last): a
    /// per-block connection closes, and the part's time breakdown (when kept) is summed.
    pub(crate) fn close(&mut self, cx: &Ctx, net: &Fabric, f: FlowId, last_of_block: bool) {
        let phase = if self.clocks.is_some() { self.phase(f) } else { flowtime::Phase::Open };
        if let Some(c) = &mut self.clocks {
            let fl = &self.conns[f as usize];
            let (src, dst) = fl.hosts;
            let held = net.held_through(f, cx.now);
            let one_way = |wire| net.topology().one_way(src, dst, wire);
            c.end(f, phase, dst, cx.now, held, last_of_block, one_way);
        }
        if self.handshake {
            self.conns[f as usize].state = ConnState::Closed;
        }
    }

    // ---- drops -------------------------------------------------------------------------

    /// A switch dropped request `id`. A request is a small message on the connection's
    /// reverse direction; its TCP sends it again after its retransmission timeout, which on
    /// these RTTs sits at RTOmin (RFC 6298 §2.4). Modelled: the same packet re-enters the
    /// requester's NIC one RTOmin after the drop, with the ACK, window and timestamp echo of
    /// then (`refresh_request`). Not counted as a timeout: `requests_dropped` counts these.
    pub(crate) fn request_dropped(&mut self, cx: &mut Ctx, id: PktId) {
        self.counters.requests_dropped += 1;
        cx.queue.push(cx.now + self.sender_cfg.rto_min, Event::NicEnter(id));
    }

    /// A switch dropped `p` (data, an ACK, a SYN or a SYN-ACK; freed).
    pub(crate) fn dropped(&mut self, p: &Packet) {
        let fl = &self.conns[p.flow as usize];
        match p.kind {
            Kind::Data | Kind::Header | Kind::Bounced if !fl.measured => {
                self.counters.background_bytes_dropped += p.len as u64
            }
            // a trimmed packet's header lost too: its payload is counted here
            Kind::Header | Kind::Bounced => self.counters.data_bytes_dropped += p.len as u64,
            Kind::Data => {
                self.counters.data_bytes_dropped += p.len as u64;
                if p.after_timeout && fl.receiver.holds(p.seq, p.len) {
                    self.counters.spurious_timeouts += 1;
                }
            }
            // the next cumulative ACK covers it (with one client the client's downlink
            // carries only that client's ACKs and never fills)
            Kind::Ack | Kind::Nack | Kind::Pull => self.counters.acks_dropped += 1,
            // the receiving end's SYN timer will notice
            Kind::SynAck | Kind::Syn => {}
            Kind::Request | Kind::Udp => unreachable!("requests and datagrams are the world's to handle"),
        }
    }

    // ---- observation -------------------------------------------------------------------

    /// Record `flow`'s sender state if the per-event trace or its flow trace is on: a test
    /// inlined where every ACK passes, the recording out of line.
    #[inline(always)]
    fn trace<const LEAN: bool>(&mut self, cx: &mut Ctx, flow: FlowId, event: TraceEvent) {
        if (!LEAN && cx.recorder.events) || cx.recorder.traces(flow) {
            self.record_sender(cx, flow, event);
        }
    }

    #[inline(never)]
    fn record_sender(&mut self, cx: &mut Ctx, flow: FlowId, event: TraceEvent) {
        if cx.recorder.events {
            self.record_state(cx, flow);
        }
        if !cx.recorder.traces(flow) {
            return;
        }
        let s = &self.conns[flow as usize].sender;
        let row = TraceRow {
            time: cx.now,
            flow,
            event,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt: s.rto.srtt.unwrap_or(Time::ZERO),
            rto: s.rto.rto,
            snd_una: s.snd_una,
            snd_nxt: s.snd_nxt,
            in_recovery: s.in_recovery,
        };
        cx.recorder.trace(row);
    }

    /// The per-event trace's cwnd, ssthresh, RTO and congestion-state rows, where they changed.
    #[inline(never)]
    fn record_state(&mut self, cx: &mut Ctx, flow: FlowId) {
        let s = &self.conns[flow as usize].sender;
        let snapshot = SenderSnapshot {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            rto_us: s.rto.rto.0 / crate::time::PS_PER_US,
            state: s.cong_state() as u8,
        };
        cx.recorder.sender_state(cx.now, flow, snapshot);
    }

    /// Measured flows whose data is not all acknowledged.
    pub(crate) fn unacked_measured(&self) -> usize {
        self.conns.iter().filter(|c| c.measured && !c.all_acked()).count()
    }

    fn measured(&self) -> impl Iterator<Item = &Conn> {
        self.conns.iter().filter(|c| c.measured)
    }

    /// Sum of a per-flow sender counter over the measured flows (counters carry over from
    /// one connection of a flow to the next).
    pub fn sender_total(&self, f: impl Fn(&TcpSender) -> u64) -> u64 {
        self.measured().map(|c| f(&c.sender)).sum()
    }

    /// Element-wise sum of a per-flow sender array counter over the measured flows.
    pub fn sender_array_total<const K: usize>(&self, f: impl Fn(&TcpSender) -> [u64; K]) -> [u64; K] {
        let mut total = [0; K];
        for c in self.measured() {
            for (t, v) in total.iter_mut().zip(f(&c.sender)) {
                *t += v;
            }
        }
        total
    }

    /// Sum of a per-flow receiver counter over the measured flows.
    pub fn receiver_total(&self, f: impl Fn(&TcpReceiver) -> u64) -> u64 {
        self.measured().map(|c| f(&c.receiver)).sum()
    }

    /// The measured flows' data payload bytes in packets still queued or on a link, counted
    /// packet by packet.
    /// (A trimmed packet's header still carries its payload's length: that payload is in
    /// flight until the header is delivered, returned or dropped, when it counts as dropped.)
    pub fn data_bytes_in_flight(&self, pool: &PacketPool) -> u64 {
        let carries = |k: Kind| matches!(k, Kind::Data | Kind::Header | Kind::Bounced);
        pool.live_packets().filter(|p| carries(p.kind) && self.get(p.flow).measured).map(|p| p.len as u64).sum()
    }

    /// Swift: the least window a measured flow reached, packets; `None` without Swift.
    pub fn swift_min_cwnd(&self) -> Option<f64> {
        self.swift?;
        let least = self.measured().filter_map(|c| c.sender.swift()).map(|s| s.min_cwnd_seen);
        least.reduce(f64::min)
    }

    /// Every receiver-driven sender's counters, summed over the measured flows.
    pub fn pull_totals(&self) -> ndp::PullStats {
        let mut t = ndp::PullStats::default();
        for p in self.measured().filter_map(|c| c.pull.as_deref()) {
            let s = &p.sender.stats;
            t.new_packets += s.new_packets;
            t.retransmits += s.retransmits;
            t.acks += s.acks;
            t.nacks += s.nacks;
            t.pulls += s.pulls;
            t.bounces += s.bounces;
            t.timeouts += s.timeouts;
        }
        t
    }

    #[cfg(test)]
    pub(crate) fn get_mut(&mut self, f: FlowId) -> &mut Conn {
        &mut self.conns[f as usize]
    }
}
