//! The simulated world and its event loop: N servers and one client on one
//! output-queued switch (FAST'08 Fig. 1, Osada et al. Fig. 1), or on the other fabrics
//! `net::topology` builds (two switches and a trunk, a leaf-spine), with 802.3x PAUSE between switches
//! and their upstream ports when asked (`net::pause`) and an optional victim bulk flow.
//! The path below is the star's; elsewhere a packet crosses one more switch per hop of
//! its route.
//!
//! Path of a data packet: server NIC (unbounded host queue) -> link -> switch port
//! towards the client (the shallow drop-tail buffer where incast happens) -> link ->
//! client. ACKs, SYNs and requests take the client NIC -> switch port towards server i ->
//! server i. A round trip crosses four links, so the base RTT is 4 x link delay plus
//! serialization. Each packet costs one event per hop (its arrival at the far end,
//! scheduled when its transmission starts) and one more at each port where it waited
//! (the link becoming free: `net::port`).
//!
//! Connections either persist across blocks (FAST'08) or are opened for every block with
//! a SYN / SYN-ACK exchange (Osada et al.'s missions); the client's scheduler
//! (`app::schedule`) decides when each one opens and what window it advertises.
//!
//! A flow is one connection between any two hosts (`ends`): with several clients there is
//! one per (server, client); in the Riak workload (`world::riak`) one per ordered pair of
//! nodes, and every node is both a sending and a receiving end.

mod riak;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::app::schedule::{Action, Scheduler};
use crate::app::sync_read::Progress;
use crate::app::SyncReadClient;
use crate::event::{Event, EventQueue, FlowId, PktId, PortId};
use crate::net::buffer::SwitchBuffers;
use crate::net::pause::{frame_times, pause_time, Frame, IngressPause, PauseConfig, CONTROL_WIRE_BYTES};
use crate::net::topology::LeafSpine;
use crate::net::{Admission, HostId, Node, Offer, OutputPort, Topology, TopologyKind};
use crate::packet::{Kind, Packet, PacketPool, CE, ECE, ECT, MAX_SACK_BLOCKS};
use crate::port_util::PortUtil;
use crate::scenario::{Mitigation, Scenario, StopAt, TcpVariant, Workload};
use crate::tcp::congestion::Cc;
use crate::tcp::ictcp::Ictcp;
use crate::tcp::{ReceiverConfig, SenderConfig, Segment, TcpReceiver, TcpSender};
use crate::time::{serialization_time, Time, PS_PER_S};
use crate::trace::{EventKind, RecordOptions, Recorder, SenderSnapshot, TraceEvent, TraceRow};

/// How often a world checks whether the process asked it to stop (a relaxed atomic load
/// every 4096 events: well under a millisecond apart, free on the hot path).
pub const CANCEL_CHECK_EVENTS: u64 = 4096;

/// Payload of a request packet: a size and a block id, as the testbed's wire header.
pub const REQUEST_PAYLOAD_BYTES: u32 = 24;

/// The client's view of one flow's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConnState {
    /// No connection (handshake mode, between blocks).
    Closed,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Established: requests and data flow.
    Open,
}

/// One server's connection: its sender and the client's receiver.
struct Flow {
    sender: TcpSender,
    receiver: TcpReceiver,
    state: ConnState,
    /// Connection number at the client; a new one per block in handshake mode.
    conn: u32,
    /// Connection number the server answers for.
    server_conn: u32,
    syn_sent_at: Time,
    syn_timeout: Time,
    syn_deadline: Time,
    /// Window the client advertises on this flow's next connection.
    window: u64,
    /// The NICs of its sending and receiving hosts.
    nics: (PortId, PortId),
    /// Its receiver's client and its sender's index among that client's servers (sync_read).
    reader: (u32, FlowId),
}

/// A background bulk flow from its own sender to its own receiver (FAST'08 §5.2's "other
/// flows" a pause also stops): it always has data to send and is not part of the blocks.
struct Victim {
    flow: FlowId,
    sender_host: HostId,
    receiver_host: HostId,
    sender: TcpSender,
    receiver: TcpReceiver,
    /// Payload bytes delivered in order to its receiver's application.
    app_bytes: u64,
}

/// Bytes the victim's application writes at the start: more than any run sends.
const VICTIM_WRITE_BYTES: u64 = 1 << 50;

/// Counters the world keeps besides those of its parts.
#[derive(Default, Debug, Clone)]
pub struct WorldCounters {
    pub events: u64,
    /// Data payload bytes put on the wire (retransmissions included).
    pub data_bytes_sent: u64,
    /// Data payload bytes that reached the client (duplicates included).
    pub data_bytes_arrived: u64,
    pub data_bytes_dropped: u64,
    /// Payload bytes handed to the client application in order.
    pub app_bytes: u64,
    /// Timeouts whose segment had in fact arrived: its timeout-triggered retransmission
    /// reached (or was dropped before) a receiver that already held it.
    pub spurious_timeouts: u64,
    pub syn_timeouts: u64,
    /// Packets of an earlier connection of the flow that arrived after it was replaced.
    pub stale_packets: u64,
    pub udp_sent: u64,
    pub udp_dropped: u64,
    /// The victim flow's payload bytes dropped at a switch.
    pub victim_bytes_dropped: u64,
    /// Requests dropped at a switch (each sent again: `at_switch`).
    pub requests_dropped: u64,
    /// Pure ACKs dropped at a switch.
    pub acks_dropped: u64,
}

/// What the far end of a port's link is: the event a packet's arrival there is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FarEnd {
    Switch,
    Client,
    Server,
}

/// The ACK receiver `r` of `flow` sends now: cumulative, TSecr, window, ECE (DCTCP's echo)
/// and the SACK blocks it holds, each costing 8 bytes of option plus 2 for the option
/// header (RFC 2018 §3).
#[inline]
fn ack_packet(flow: FlowId, r: &mut TcpReceiver, header: u32) -> Packet {
    r.on_ack_sent();
    let mut pkt = Packet::new(flow, Kind::Ack, header, 0, 0, r.ack_number());
    pkt.ts = r.ts_echo();
    pkt.set_window(r.window);
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

/// Everything that exists in one simulation.
pub struct World {
    pub now: Time,
    queue: EventQueue,
    pool: PacketPool,
    /// Every output port, numbered as `topo` numbers them: host NICs, then switch ports.
    ports: Vec<OutputPort>,
    topo: Topology,
    /// The far end of each port's link.
    far: Vec<FarEnd>,
    /// The switch port towards the (first) client: the shallow buffer where incast happens.
    bottleneck: PortId,
    /// The first client's host id (= the number of servers); client c is host
    /// `first_client + c`.
    first_client: HostId,
    /// Per packet id: the port whose link brought it to the switch it is at (its ingress
    /// there: routing and PAUSE read it). Beside the pool, which keeps packets 72 bytes.
    /// Kept only when something reads it (`track_ingress`): on a star without PAUSE every
    /// packet is at switch 0 and no ingress is counted.
    via: Vec<PortId>,
    /// More than one switch, or PAUSE: `via` is kept.
    track_ingress: bool,
    /// 802.3x PAUSE at every switch ingress (`net::pause`), when on.
    pause: Option<IngressPause>,
    /// The background bulk flow, when there is one; its flow id is the number of servers.
    victim: Option<Box<Victim>>,
    /// The victim's flow id (`FlowId::MAX` when there is none).
    victim_flow: FlowId,
    /// The QoS class of the victim's data and ACKs (`victim_class`); the rest is class 0.
    victim_class: usize,
    /// Each flow's (sender host, receiver host), the victim's included: a flow is one TCP
    /// connection whose data goes sender -> receiver and whose ACKs and requests go back.
    ends: Vec<(HostId, HostId)>,
    /// Each flow's ports at switch 0 towards its receiver and towards its sender: its route
    /// on a star, looked up once (read while `track_ingress` is off: one switch).
    star_egress: Vec<[PortId; 2]>,
    /// Host send jitter: when each sending host's last jittered packet enters its NIC
    /// (packets of one host enter in the order TCP sent them), by host.
    jitter_entered: Vec<Time>,
    flows: Vec<Flow>,
    sender_cfg: SenderConfig,
    receiver_cfg: ReceiverConfig,
    /// Bytes requested from each server and not yet written to its socket.
    pending_request: Vec<u64>,
    /// Each client's synchronized reads (FAST'08 §3.1), indexed by client; client c's flow
    /// from server i is flow `c * servers + i`.
    pub clients: Vec<SyncReadClient>,
    /// Blocks mode: clients that have read all their blocks.
    clients_done: usize,
    /// The Riak workload's gets and connections, when it runs (then there are no clients).
    riak: Option<Box<riak::Riak>>,
    scheduler: Scheduler,
    ictcp: Option<Ictcp>,
    handshake: bool,
    active_servers: usize,
    /// Flows of the current block, in the order they were chosen.
    active: Vec<FlowId>,
    syn_timeout: Time,
    udp_interval: Option<Time>,
    udp_bytes: u32,
    rng: Pcg64,
    seed: u64,
    header: u32,
    jitter: u64,
    /// Host send jitter: each data packet enters its server's NIC up to this late.
    send_jitter: u64,
    stop: StopAt,
    /// Blocks mode: the last block is done; waiting for the last ACKs.
    draining: bool,
    /// Blocks mode: flows that still have unacknowledged data while draining.
    flows_unacked: usize,
    /// When the measurement ended (end of the duration, or of the last block).
    pub measured_until: Time,
    pub counters: WorldCounters,
    scratch: Vec<Segment>,
    actions: Vec<Action>,
    pub(crate) recorder: Recorder,
    progress: Option<std::sync::Arc<crate::progress::RunProgress>>,
    /// No port marks ECN, has a pool share or classes, is paused or watched: offers and
    /// link-free events take their short paths (`offer_to`, `on_link_free`).
    plain: bool,
    /// `plain`, and every other optional feature the per-packet paths test is off too: no
    /// event trace, victim flow, ingress tracking (one switch), ECN-capable senders, ICTCP,
    /// send jitter, or scheduler that follows bytes. The event loop then runs a copy of
    /// itself compiled with those tests folded away (`LEAN` in `run_events_as`).
    lean: bool,
}

impl World {
    /// Build the world for a validated scenario.
    pub fn new(sc: &Scenario) -> World {
        Self::with_records(sc, &RecordOptions::default())
    }

    /// A world that also records what `opts` asks for.
    pub fn with_records(sc: &Scenario, opts: &RecordOptions) -> World {
        let s = &sc.spec;
        let n = s.servers as usize;
        let delay = sc.link_delay;
        let base_rtt = Time(4 * delay.0) + Time(4 * serialization_time(s.header_bytes as u64, s.rate_bps).0);
        let sender_cfg = SenderConfig {
            variant: s.tcp,
            mss: s.mss_bytes as u64,
            init_cwnd: s.init_cwnd_segments as u64 * s.mss_bytes as u64,
            rwnd: sc.rwnd_bytes,
            dupack_threshold: s.dupack_threshold,
            limited_transmit: s.limited_transmit,
            slow_start: s.slow_start,
            slow_start_after_idle: s.slow_start_after_idle,
            rto_min: sc.rto_min,
            rto_max: Time(s.rto_max_ps),
            granularity: Time(s.timer_granularity_ps),
            timer_ticks: s.timer_ticks,
            timestamps: s.timestamps,
            rto_random: s.rto_random,
            rto_backoff: s.rto_backoff,
            rules: s.tcp_rules,
            cc: s.cc,
            prr: s.prr,
            rack_tlp: s.rack_tlp,
        };
        let receiver_cfg = ReceiverConfig {
            delayed_ack: (s.delayed_ack_ps > 0).then_some(Time(s.delayed_ack_ps)),
            sack: s.tcp == TcpVariant::Sack,
            window: sc.rwnd_bytes,
            dctcp_echo: s.cc == Cc::Dctcp,
        };
        // each switch has its own pool (if any); a port takes its switch's share or classes
        let switch_port = |rate_bps, delay, buffers: &SwitchBuffers| {
            let mut port = match sc.admission {
                Admission::Packets => OutputPort::with_packet_limit(rate_bps, delay, sc.buffer_packets),
                Admission::Bytes => buffers.fit(OutputPort::new(rate_bps, delay, buffers.static_bytes())),
                Admission::MtuSlots => {
                    OutputPort::with_mtu_slots(rate_bps, delay, s.buffer_bytes, s.mss_bytes + s.header_bytes)
                }
            };
            if let Some(k) = s.ecn_threshold_packets {
                port.set_ecn_threshold(k);
            }
            port
        };
        // the victim's sender and receiver are the two hosts after the clients; across switches
        // the sender sits on the far switch (behind the trunk, on the last leaf) and the
        // receiver beside the clients, so its data shares the far servers' path to the clients'
        // switch but not a client's port
        let extra = if s.victim { 2 } else { 0 };
        let trunk_bps = sc.fabric.trunk_bps.unwrap_or(s.rate_bps);
        // Riak: the servers are the nodes, and there is no client
        let riak = s.workload == Workload::Riak;
        let clients = if riak { 0 } else { s.clients };
        let topo = match s.topology {
            TopologyKind::Star => Topology::star(n as u32, clients, extra, s.rate_bps, delay),
            TopologyKind::TwoSwitch => {
                Topology::two_switch(n as u32, clients, &[1, 0][..extra as usize], s.rate_bps, trunk_bps, delay)
            }
            TopologyKind::LeafSpine => {
                let (leaves, spines) = (sc.fabric.leaves, sc.fabric.spines);
                let extra_on = [leaves - 1, 0][..extra as usize].to_vec();
                let fabric = LeafSpine { servers: n as u32, leaves, spines, clients, extra_on };
                Topology::leaf_spine(fabric, s.rate_bps, trunk_bps, delay)
            }
        };
        let client_host = n as HostId;
        let extras_from = client_host + clients;
        let flows = n * clients as usize;
        let (topo_ports, topo_switches, topo_hosts) = (topo.ports.len(), topo.switches, topo.hosts as usize);
        let buffers: Vec<SwitchBuffers> = (0..topo.switches).map(|_| SwitchBuffers::of(sc)).collect();
        let ports: Vec<OutputPort> = topo
            .ports
            .iter()
            .map(|spec| match spec.from {
                Node::Switch(sw) => switch_port(spec.rate_bps, spec.delay, &buffers[sw as usize]),
                // a host's NIC; under PFC with a queue per class, as the switches' ports
                Node::Host(_) if s.pfc => {
                    OutputPort::unbounded(spec.rate_bps, spec.delay).with_buffer(buffers[0].nic_classes())
                }
                Node::Host(_) => OutputPort::unbounded(spec.rate_bps, spec.delay),
            })
            .map(|mut port| {
                if s.pfc {
                    port.enable_pfc(s.qos_classes as usize);
                }
                port
            })
            .collect();
        let far = topo
            .ports
            .iter()
            .map(|spec| match spec.to {
                Node::Switch(_) => FarEnd::Switch,
                // the victim's receiver gets data as the clients do; a Riak node receives
                // both, and hands ACKs and requests to its sending end (`at_client`)
                Node::Host(h) if (client_host..extras_from).contains(&h) || h == extras_from + 1 => FarEnd::Client,
                Node::Host(_) if riak => FarEnd::Client,
                Node::Host(_) => FarEnd::Server,
            })
            .collect();
        // the port towards the (first) client; Riak's nodes are alike: node 0's
        let watched = if riak { 0 } else { client_host };
        let client_switch = topo.far_switch(topo.nic(watched)).expect("the client hangs off a switch");
        let bottleneck = topo.route(client_switch, watched);
        let ictcp = (sc.mitigation == Mitigation::Ictcp).then(|| Ictcp::new(s.rate_bps, s.mss_bytes as u64, base_rtt, n));
        let udp_interval = (s.udp_fraction > 0.0).then(|| {
            let per_server_bps = s.rate_bps as f64 * s.udp_fraction / n as f64;
            Time((s.udp_packet_bytes as f64 * 8.0 / per_server_bps * PS_PER_S as f64) as u64)
        });
        // the farthest ahead a packet event is scheduled: the largest packet's serialization
        // and propagation on the slowest link (the wheel's span; `event.rs`)
        let largest = (s.mss_bytes + s.header_bytes).max(s.udp_packet_bytes) as u64;
        let horizon = topo.ports.iter().map(|p| p.delay + serialization_time(largest, p.rate_bps)).max();
        let mut w = World {
            now: Time::ZERO,
            queue: EventQueue::with_horizon(4 * n + 64, s.tie_break, s.seed, horizon.unwrap_or(Time::ZERO)),
            pool: PacketPool::default(),
            ports,
            topo,
            far,
            bottleneck,
            first_client: client_host,
            via: Vec::new(),
            track_ingress: s.pause || topo_switches > 1,
            victim: None,
            victim_flow: if s.victim { flows as FlowId } else { FlowId::MAX },
            victim_class: s.victim_class as usize,
            ends: Vec::with_capacity(flows + 1),
            star_egress: Vec::with_capacity(flows + 1),
            pause: s.pause.then(|| {
                let (xoff_bytes, xon_bytes, quanta) = (s.pause_xoff_bytes, s.pause_xon_bytes, s.pause_quanta as u16);
                let cfg = PauseConfig { xoff_bytes, xon_bytes, quanta };
                match s.pfc {
                    true => IngressPause::per_class(cfg, topo_ports, s.qos_classes as usize),
                    false => IngressPause::new(cfg, topo_ports),
                }
            }),
            jitter_entered: vec![Time::ZERO; if s.send_jitter_ps > 0 { topo_hosts } else { 0 }],
            flows: Vec::with_capacity(flows),
            sender_cfg,
            receiver_cfg,
            pending_request: vec![0; flows],
            clients: vec![SyncReadClient::new(sc.per_server_bytes.clone()); clients as usize],
            clients_done: 0,
            riak: riak.then(|| riak::Riak::new(sc)),
            scheduler: Scheduler::new(sc.mitigation.clone(), sc.per_server_bytes.clone()),
            ictcp,
            handshake: s.handshake,
            active_servers: s.active_servers.unwrap_or(s.servers) as usize,
            active: Vec::with_capacity(n),
            syn_timeout: Time(s.syn_timeout_ps),
            udp_interval,
            udp_bytes: s.udp_packet_bytes,
            rng: Pcg64::seed_from_u64(s.seed),
            seed: s.seed,
            header: s.header_bytes,
            jitter: s.response_jitter_ps,
            send_jitter: s.send_jitter_ps,
            stop: sc.stop,
            draining: false,
            flows_unacked: 0,
            measured_until: Time::ZERO,
            counters: WorldCounters::default(),
            scratch: Vec::with_capacity(64),
            actions: Vec::with_capacity(16),
            recorder: Recorder::new(opts),
            progress: opts.progress.clone(),
            plain: false, // set below, once the ports and the recorder are built
            lean: false,
        };
        w.recorder.watched_nic = w.topo.nic(watched);
        // (a refused interval allocates nothing: `crate::record` returns the refusal)
        let sampled = opts.port_util_interval.filter(|&i| crate::port_util::check(sc, w.ports.len(), i).is_ok());
        if let Some(interval) = sampled {
            let duration = match sc.stop {
                StopAt::Time(t) => Some(t),
                StopAt::Blocks(_) => None,
            };
            let cap = opts.port_util_cap_bytes.unwrap_or(crate::port_util::MAX_BYTES);
            w.recorder.port_util = Some(PortUtil::with_cap(&w.topo, interval, duration, cap));
            w.recorder.watch_ports = true;
        }
        w.plain = w.pause.is_none()
            && s.ecn_threshold_packets.is_none()
            && !w.recorder.watch_ports
            && w.ports.iter().all(|p| !p.has_buffer());
        // (an event trace watches the ports: such a world is not plain)
        w.lean = w.plain
            && !s.victim
            && !w.track_ingress
            && !s.cc.uses_ecn()
            && w.ictcp.is_none()
            && w.send_jitter == 0
            && !w.scheduler.counts_sent()
            && !w.scheduler.follows_delivery();
        debug_assert!(!(w.lean && w.recorder.events), "the lean loop records no events");
        // one connection per (server, client): every server holds a stripe of every
        // client's blocks
        for c in 0..clients {
            for i in 0..n as HostId {
                w.add_flow(i, client_host + c);
            }
        }
        if s.victim {
            let (flow, sender_host, receiver_host) = (w.flows.len() as FlowId, extras_from, extras_from + 1);
            w.ends.push((sender_host, receiver_host));
            w.star_egress.push([w.topo.route(0, receiver_host), w.topo.route(0, sender_host)]);
            w.recorder.add_flow();
            let mut sender = w.new_sender(flow, 0);
            let one_way = w.topo.one_way(sender_host, receiver_host, s.header_bytes as u64);
            sender.rto.sample(Time(2 * one_way.0));
            let receiver = TcpReceiver::new(w.receiver_cfg.clone());
            w.victim = Some(Box::new(Victim { flow, sender_host, receiver_host, sender, receiver, app_bytes: 0 }));
        }
        w
    }

    /// A flow from host `src` to host `dst`: the next flow id. A pre-established
    /// connection's SYN / SYN-ACK gave its sender the first RTT sample (RFC 6298 §2.2):
    /// its path's, out and back.
    fn add_flow(&mut self, src: HostId, dst: HostId) -> FlowId {
        let f = self.flows.len() as FlowId;
        let mut sender = self.new_sender(f, 0);
        let one_way = self.topo.one_way(src, dst, self.header as u64);
        sender.rto.sample(Time(2 * one_way.0));
        let state = if self.handshake { ConnState::Closed } else { ConnState::Open };
        let receiver = TcpReceiver::new(self.receiver_cfg.clone());
        let (window, syn_timeout) = (self.receiver_cfg.window, self.syn_timeout);
        let (conn, server_conn, syn_sent_at, syn_deadline) = (0, 0, Time::ZERO, Time::NEVER);
        let nics = (self.topo.nic(src), self.topo.nic(dst));
        let reader = (dst.saturating_sub(self.first_client), src);
        let fl = Flow { sender, receiver, state, conn, server_conn, syn_sent_at, syn_timeout, syn_deadline, window, nics, reader };
        self.flows.push(fl);
        self.ends.push((src, dst));
        self.star_egress.push([self.topo.route(0, dst), self.topo.route(0, src)]);
        self.recorder.add_flow();
        f
    }

    /// A fresh sender for connection `conn` of `flow`; its random draws derive from the
    /// run's seed, the flow and the connection.
    fn new_sender(&self, flow: FlowId, conn: u32) -> TcpSender {
        let seed = self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (flow as u64 + 1) ^ ((conn as u64) << 40);
        TcpSender::with_seed(self.sender_cfg.clone(), seed)
    }

    /// Run until the scenario's stop condition.
    pub fn run(&mut self) {
        if let Some(interval) = self.udp_interval {
            // one source per server, towards the first client (on its flow's path)
            for f in 0..self.clients.first().map_or(0, |c| c.servers()) as FlowId {
                let phase = self.rng.random_range(0..interval.0.max(1));
                self.queue.push(Time(phase), Event::UdpSend(f));
            }
        }
        if let Some(ictcp) = &self.ictcp {
            self.queue.push(ictcp.slot(), Event::IctcpSlot);
        }
        for c in 0..self.clients.len() {
            self.start_block(c);
        }
        self.start_gets();
        if let Some(v) = &mut self.victim {
            let mut out = std::mem::take(&mut self.scratch);
            v.sender.write(self.now, VICTIM_WRITE_BYTES, &mut out);
            self.victim_transmit(&mut out);
            self.scratch = out;
        }
        let end = match self.stop {
            StopAt::Time(t) => t,
            StopAt::Blocks(_) => Time::NEVER,
        };
        if !self.run_events(end) {
            if let StopAt::Time(t) = self.stop {
                self.measured_until = t;
            } else if !self.draining {
                self.measured_until = self.now; // ran out of events (cannot happen in a star)
            }
        }
        if let Some(p) = &self.progress {
            p.record(self.now.max(self.measured_until), self.blocks_done());
        }
    }

    /// Process events up to `end`; true if the last block's data was all acknowledged.
    fn run_events(&mut self, end: Time) -> bool {
        match self.lean {
            true => self.run_events_as::<true>(end),
            false => self.run_events_as::<false>(end),
        }
    }

    /// [`World::run_events`]; `LEAN`: the world is [`World::lean`], and the per-packet
    /// paths compiled for it skip the tests of features it does not have (each reads
    /// `!LEAN && ...`). The two copies differ only in cost.
    #[inline(never)]
    fn run_events_as<const LEAN: bool>(&mut self, end: Time) -> bool {
        while let Some((t, ev)) = self.queue.pop() {
            if t > end {
                break;
            }
            self.now = t;
            self.counters.events += 1;
            if self.counters.events % CANCEL_CHECK_EVENTS == 0 {
                if crate::cancel_requested() {
                    break; // the caller discards this world's result (lib.rs, CANCEL)
                }
                if let Some(p) = &self.progress {
                    p.record(t, self.blocks_done());
                }
            }
            self.dispatch::<LEAN>(ev);
            if self.draining && self.flows_unacked == 0 {
                return true;
            }
        }
        false
    }

    #[inline]
    fn dispatch<const LEAN: bool>(&mut self, ev: Event) {
        match ev {
            Event::ArriveSwitch(p) => self.at_switch::<LEAN>(p),
            Event::ArriveClient(p) => self.at_client::<LEAN>(p),
            Event::ArriveServer(p) => self.at_server::<LEAN>(p),
            Event::LinkFree(port) => self.on_link_free::<LEAN>(port),
            Event::NicEnter(p) => {
                // a jittered data packet, or a dropped request sent again
                if self.pool.get(p).kind == Kind::Request {
                    self.refresh_request(p);
                }
                let pkt = self.pool.get(p);
                let (src, dst) = self.ends[pkt.flow as usize];
                self.offer::<LEAN>(self.topo.nic(if pkt.kind.to_client() { src } else { dst }), p);
            }
            Event::RtoTimer(f) if !LEAN && f == self.victim_flow => {
                let mut out = std::mem::take(&mut self.scratch);
                if self.victim.as_mut().unwrap().sender.on_timer_event(self.now, &mut out) {
                    self.util_timeout(f);
                }
                self.victim_transmit(&mut out);
                self.scratch = out;
            }
            Event::DelAckTimer(f) if !LEAN && f == self.victim_flow => {
                let v = self.victim.as_mut().unwrap();
                if v.receiver.on_timer_event(self.now) {
                    self.victim_ack();
                }
                self.victim_delack();
            }
            Event::RtoTimer(f) => {
                let mut out = std::mem::take(&mut self.scratch);
                if self.flows[f as usize].sender.on_timer_event(self.now, &mut out) {
                    self.trace::<LEAN>(f, TraceEvent::Timeout);
                    self.util_timeout(f);
                }
                self.transmit::<LEAN>(f, &mut out);
                self.scratch = out;
            }
            Event::DelAckTimer(f) => {
                if self.flows[f as usize].receiver.on_timer_event(self.now) {
                    self.send_ack::<LEAN>(f);
                }
                self.schedule_delack(f);
            }
            Event::ServerRespond(f) => self.respond(f),
            Event::SynTimer(f) => self.on_syn_timer(f),
            Event::UdpSend(f) => self.send_udp(f),
            Event::IctcpSlot => self.on_ictcp_slot(),
            Event::GetIssue(node) => self.issue_get(node),
            Event::PauseOn(port) => self.on_pause(port, true),
            Event::PauseOff(port) => self.on_pause(port, false),
            Event::PauseEnd(port) => self.resume(port),
            Event::PfcOn { class, port } => self.on_pfc(port, class as usize, true),
            Event::PfcOff { class, port } => self.on_pfc(port, class as usize, false),
        }
    }

    // ---- the client ------------------------------------------------------------------

    /// Blocks every client has completed.
    pub fn blocks_done(&self) -> u64 {
        self.clients.iter().map(|c| c.blocks_done).sum()
    }

    /// Flow `f`'s client and server (its index in the client's reads).
    #[inline]
    fn reader(&self, f: FlowId) -> (usize, FlowId) {
        let (c, server) = self.flows[f as usize].reader;
        (c as usize, server)
    }

    /// Client `c` starts its next block.
    fn start_block(&mut self, c: usize) {
        let n = self.clients[c].servers();
        let first = (c * n) as FlowId; // client c's flows are c * n + server
        self.active.clear();
        if self.active_servers < n {
            // Osada et al. §5.1: N_a of the N_s servers, chosen at random for each block
            let mut all: Vec<FlowId> = (first..first + n as FlowId).collect();
            for i in 0..self.active_servers {
                let j = self.rng.random_range(i..n);
                all.swap(i, j);
            }
            self.active.extend_from_slice(&all[..self.active_servers]);
        } else {
            self.active.extend(first..first + n as FlowId);
        }
        self.clients[c].start_block(self.now, self.active.len());
        let active = std::mem::take(&mut self.active);
        let mut actions = std::mem::take(&mut self.actions);
        self.scheduler.start_block(&active, &mut actions);
        self.active = active;
        self.apply(&mut actions);
        self.actions = actions;
    }

    fn apply(&mut self, actions: &mut Vec<Action>) {
        for a in actions.drain(..) {
            match a {
                Action::Open(f) => self.open(f),
                Action::Window(f, w) => self.set_window(f, w),
            }
        }
    }

    /// Open flow `f` for this block: a SYN in handshake mode, else the request.
    fn open(&mut self, f: FlowId) {
        if let Some(ictcp) = &mut self.ictcp {
            // ICTCP measures from here; a connection made for this block counts from 0
            let delivered = if self.handshake { 0 } else { self.flows[f as usize].receiver.rcv_nxt - 1 };
            self.flows[f as usize].window = ictcp.open(f, delivered);
            self.flows[f as usize].receiver.window = self.flows[f as usize].window;
        }
        if !self.handshake {
            self.send_request(f);
            return;
        }
        let fl = &mut self.flows[f as usize];
        fl.conn += 1;
        fl.state = ConnState::SynSent;
        fl.syn_timeout = self.syn_timeout;
        let mut receiver = TcpReceiver::new(ReceiverConfig { window: fl.window, ..self.receiver_cfg.clone() });
        receiver.stats = std::mem::take(&mut fl.receiver.stats);
        fl.receiver = receiver;
        self.send_syn(f);
    }

    fn send_syn(&mut self, f: FlowId) {
        let fl = &mut self.flows[f as usize];
        fl.syn_sent_at = self.now;
        fl.syn_deadline = self.now + fl.syn_timeout;
        let mut pkt = Packet::new(f, Kind::Syn, self.header, 0, 0, 0);
        pkt.conn = fl.conn;
        pkt.set_window(fl.window);
        let deadline = fl.syn_deadline;
        self.send_from_client::<false>(pkt);
        self.queue.push(deadline, Event::SynTimer(f));
    }

    fn on_syn_timer(&mut self, f: FlowId) {
        let fl = &mut self.flows[f as usize];
        if fl.state != ConnState::SynSent || fl.syn_deadline != self.now {
            return;
        }
        // the SYN or its SYN-ACK was lost: send it again, backing off (RFC 6298 §5.5)
        self.counters.syn_timeouts += 1;
        fl.syn_timeout = Time(2 * fl.syn_timeout.0);
        self.send_syn(f);
    }

    fn send_request(&mut self, f: FlowId) {
        let base = self.flows[f as usize].receiver.rcv_nxt - 1;
        let (c, server) = self.reader(f);
        let bytes = self.clients[c].request(server, base);
        self.send_request_packet(f, bytes);
    }

    /// Advertise window `w` on flow `f` (now, with a window update, if it is open).
    fn set_window(&mut self, f: FlowId, w: u64) {
        let (c, server) = self.reader(f);
        let fl = &mut self.flows[f as usize];
        fl.window = w;
        let changed = fl.receiver.window != w;
        fl.receiver.window = w;
        if changed && fl.state == ConnState::Open && self.clients[c].remaining(server, fl.receiver.rcv_nxt - 1) > 0 {
            self.send_ack::<false>(f);
        }
    }

    /// The receiving end of `pkt`'s flow puts it on its NIC now. Inlined, as the senders'
    /// sends: the packet is then written into its pool slot as it is built, where a call took
    /// it through the stack in narrow stores copied by wide loads (which the store buffer
    /// cannot forward).
    #[inline(always)]
    fn send_from_client<const LEAN: bool>(&mut self, pkt: Packet) {
        let nic = self.flows[pkt.flow as usize].nics.1;
        let id = self.pool.alloc(pkt);
        self.recorder.capture_sent(self.now, nic, self.pool.get(id));
        let admitted = self.offer::<LEAN>(nic, id);
        debug_assert!(admitted, "host queues are unbounded");
    }

    // ---- links -----------------------------------------------------------------------

    /// Offer packet `id` to `port` now; false if the port dropped it (the caller frees it).
    #[inline]
    fn offer<const LEAN: bool>(&mut self, port: PortId, id: PktId) -> bool {
        self.offer_to::<LEAN, false>(port, id) != Offer::Dropped
    }

    /// Offer packet `id` to `port` now: what the port did with it. (The port is borrowed
    /// once: indexing `ports` at every use cost a bounds check and a reload each.)
    /// `HOLD` (a packet arriving at a switch): a packet that would wait as the transmission
    /// ahead of it ends, at this very instant, has that "link free" event run first if it
    /// comes next (a plain port), or leaves it to the caller (`World::at_switch`), which
    /// runs it at once if it comes next.
    #[inline(never)]
    fn offer_to<const LEAN: bool, const HOLD: bool>(&mut self, port: PortId, id: PktId) -> Offer {
        if !(LEAN || self.plain) {
            return self.offer_to_featured::<HOLD>(port, id);
        }
        // what `offer_to_featured` does with ECN marks, pools, classes, PAUSE and the
        // port watch off: a FIFO that starts the packet or makes it wait
        let wire = self.pool.get(id).wire_bytes;
        let p = &self.ports[port as usize];
        let free = p.free_at();
        if HOLD
            && self.ends_at_this_instant(free)
            && p.waiting_packets() == 0
            && self.queue.runs_next(free)
            && p.admits(self.now, wire)
        {
            // The packet would wait alone, and the link-free event that comes next start it
            // (`link_free_now`). That event is run first, here, and the packet offered to
            // the link it left idle: the same tie orders reserved, the same occupancy seen,
            // without the packet passing through the queue. (FAST'08 at one server: every
            // data packet at the switch; 7 % of its time.)
            self.queue.take_next(free);
            self.counters.events += 1;
        }
        let now = self.queue.current();
        let (queue, out) = (&mut self.queue, &mut self.ports[port as usize]);
        let offer = out.offer(now, id, wire, |end| queue.reserve(end));
        match offer {
            Offer::Started(arrive) => {
                let ev = self.arrival(port, id);
                self.queue.push(arrive, ev);
            }
            Offer::Waiting { first: true } => {
                let free = self.ports[port as usize].free_at();
                debug_assert!(free > now, "a plain port makes a packet wait only behind a transmission");
                if !(HOLD && self.ends_at_this_instant(free)) {
                    self.queue.push_key(free, Event::LinkFree(port));
                }
            }
            Offer::Waiting { first: false } | Offer::Dropped => {}
        }
        offer
    }

    /// [`World::offer_to`] with every feature a port may have.
    #[inline(always)]
    fn offer_to_featured<const HOLD: bool>(&mut self, port: PortId, id: PktId) -> Offer {
        let p = self.pool.get(id);
        let (wire, ect) = (p.wire_bytes, p.has(ECT));
        let class = if p.flow == self.victim_flow { self.victim_class } else { 0 };
        let now = self.queue.current();
        let queue = &mut self.queue;
        let out = &mut self.ports[port as usize];
        // RFC 3168 §5: mark rather than drop; the occupancy the packet finds decides
        let mark = ect && out.marks_ce(self.now);
        // a port without classes (a NIC without PFC) has one FIFO for every class
        let offer = if class == 0 || !out.has_buffer() {
            out.offer(now, id, wire, |end| queue.reserve(end))
        } else {
            out.offer_in_class(now, id, wire, class, |end| queue.reserve(end))
        };
        if mark && offer != Offer::Dropped {
            out.note_ce_mark();
            self.pool.get_mut(id).ecn |= CE;
        }
        let (free, waiting, control_end) = (out.free_at(), out.waiting_packets(), out.control_end());
        if self.recorder.watch_ports {
            self.watch_offer(port, offer, id);
        }
        match offer {
            Offer::Started(arrive) => {
                let ev = self.arrival(port, id);
                self.queue.push(arrive, ev);
                if waiting > 0 {
                    // PFC: it started beside waiting packets of paused classes
                    self.queue.push_key(free, Event::LinkFree(port));
                }
            }
            // (a paused idle port has no transmission to end: its pause's end starts it)
            Offer::Waiting { first: true } if HOLD && self.ends_at_this_instant(free) => {}
            Offer::Waiting { first: true } if free > now => self.queue.push_key(free, Event::LinkFree(port)),
            // an idle wire carrying a PAUSE frame: the data waits for its end
            Offer::Waiting { first: true } if control_end > self.now => {
                self.queue.push(control_end, Event::LinkFree(port));
            }
            Offer::Waiting { .. } | Offer::Dropped => {}
        }
        offer
    }

    /// What the recorder watches of a packet offered to `port` (`Recorder::watch_ports`).
    #[inline(never)]
    fn watch_offer(&mut self, port: PortId, offer: Offer, id: PktId) {
        if self.recorder.events && port == self.bottleneck {
            self.bottleneck_event(offer, id);
        }
        match offer {
            Offer::Started(_) => self.util_started(port, id),
            Offer::Dropped => {
                let wire = self.pool.get(id).wire_bytes;
                if let Some(u) = &mut self.recorder.port_util {
                    u.dropped(port, self.now, wire);
                }
            }
            Offer::Waiting { .. } => {}
        }
    }

    /// Packet `id` just started on `port`: the sampler counts it in the interval its last
    /// bit leaves in (the end of the transmission just reserved).
    fn util_started(&mut self, port: PortId, id: PktId) {
        let Some(u) = &mut self.recorder.port_util else { return };
        let p = self.pool.get(id);
        let end = crate::event::key_time(self.ports[port as usize].free_at());
        u.sent(port, end, p.wire_bytes, (p.kind == Kind::Data).then_some(p.flow));
    }

    /// The per-event trace of data packets at the client's port, as ns-3's device queue
    /// reports them: a packet offered to an idle link is enqueued and dequeued at once.
    fn bottleneck_event(&mut self, offer: Offer, id: PktId) {
        let p = self.pool.get(id);
        if p.kind != Kind::Data {
            return;
        }
        let (flow, seq, len) = (p.flow, p.seq, p.len as u64);
        let waiting = self.to_client().waiting_packets() as u64;
        let (t, r) = (self.now, &mut self.recorder);
        match offer {
            Offer::Started(_) => {
                r.event(t, EventKind::Enq, flow, seq, len, Some(1));
                r.event(t, EventKind::Deq, flow, seq, len, Some(0));
            }
            Offer::Waiting { .. } => r.event(t, EventKind::Enq, flow, seq, len, Some(waiting)),
            Offer::Dropped => r.event(t, EventKind::Drop, flow, seq, len, Some(waiting)),
        }
    }

    /// What the recorder watches of a waiting packet `port` started (`Recorder::watch_ports`).
    #[inline(never)]
    fn watch_next(&mut self, port: PortId, id: PktId) {
        if self.recorder.events && port == self.bottleneck {
            let p = self.pool.get(id);
            if p.kind == Kind::Data {
                let waiting = self.to_client().waiting_packets() as u64;
                self.recorder.event(self.now, EventKind::Deq, p.flow, p.seq, p.len as u64, Some(waiting));
            }
        }
        self.util_started(port, id);
    }

    /// The event of packet `id`'s last bit reaching the far end of `port`'s link; a packet
    /// bound for a switch remembers the port it came in by.
    #[inline]
    fn arrival(&mut self, port: PortId, id: PktId) -> Event {
        match self.far[port as usize] {
            FarEnd::Switch => {
                if self.track_ingress {
                    let i = id as usize;
                    if i >= self.via.len() {
                        self.via.resize(i + 1, 0);
                    }
                    self.via[i] = port;
                }
                Event::ArriveSwitch(id)
            }
            FarEnd::Client => Event::ArriveClient(id),
            FarEnd::Server => Event::ArriveServer(id),
        }
    }

    /// `port`'s transmission ended and packets wait: the next one starts, unless the port
    /// is paused (then its pause's end starts it).
    fn on_link_free<const LEAN: bool>(&mut self, port: PortId) {
        if LEAN || self.plain {
            // what follows with PAUSE, PFC classes and the port watch off
            let (queue, out) = (&mut self.queue, &mut self.ports[port as usize]);
            if out.free_at() > queue.current() {
                return; // a transmission started since: its own "link free" comes
            }
            let (id, arrive, more) = out.next(self.now, |end| queue.reserve(end));
            let free = out.free_at();
            let ev = self.arrival(port, id);
            self.queue.push(arrive, ev);
            if more {
                self.queue.push_key(free, Event::LinkFree(port));
            }
            return;
        }
        let p = &self.ports[port as usize];
        if p.control_end() > self.now {
            // a PAUSE frame went out at the frame boundary: the data waits for its end
            return self.queue.push(p.control_end(), Event::LinkFree(port));
        }
        // a transmission started since (its own "link free" comes), or nothing may start
        if p.free_at() > self.queue.current() || p.blocked(self.now) {
            return;
        }
        let queue = &mut self.queue;
        let (id, arrive, more) = self.ports[port as usize].next(self.now, |end| queue.reserve(end));
        if let Some(pause) = &mut self.pause {
            if port >= self.topo.hosts {
                // a switch port: the packet leaves the bytes of the ingress it came in by
                let ingress = self.via[id as usize];
                let p = self.pool.get(id);
                let class = if p.flow == self.victim_flow { self.victim_class } else { 0 };
                if pause.dequeued(ingress, class, p.wire_bytes as u64) == Some(Frame::Xon) {
                    self.send_pause_frame(ingress, class, Frame::Xon);
                }
            }
        }
        if self.recorder.watch_ports {
            self.watch_next(port, id);
        }
        let ev = self.arrival(port, id);
        self.queue.push(arrive, ev);
        if more {
            self.queue.push_key(self.ports[port as usize].free_at(), Event::LinkFree(port));
        }
    }

    fn at_client<const LEAN: bool>(&mut self, id: PktId) {
        let p = self.pool.release(id);
        if !LEAN && p.flow == self.victim_flow {
            return self.at_victim_receiver(p);
        }
        let f = p.flow as usize;
        match p.kind {
            Kind::Udp => return,
            Kind::SynAck => return self.on_syn_ack(p),
            Kind::Data => {}
            // a host that also sends (a Riak node): the packet is for its sending end
            _ => return self.at_sender::<LEAN>(p),
        }
        self.counters.data_bytes_arrived += p.len as u64;
        let fl = &mut self.flows[f];
        if p.conn != fl.conn {
            self.counters.stale_packets += 1;
            return;
        }
        if let (false, Some(ictcp)) = (LEAN, &mut self.ictcp) {
            ictcp.on_arrival(self.now, p.len as u64);
        }
        if p.after_timeout && fl.receiver.holds(p.seq, p.len) {
            self.counters.spurious_timeouts += 1;
        }
        let before = fl.receiver.rcv_nxt - 1;
        if !LEAN && fl.receiver.on_ce(p.has(CE)) {
            // DCTCP (RFC 8257 §3.2): the CE bit changed while an ACK was delayed
            self.send_ack::<LEAN>(p.flow);
            self.flows[f].receiver.ce_flushed();
        }
        let receiver = &mut self.flows[f].receiver;
        receiver.note_timestamp(p.seq, p.ts);
        let got = receiver.on_segment(self.now, p.seq, p.len);
        if got.ack_now {
            self.send_ack::<LEAN>(p.flow);
        } else {
            self.schedule_delack(p.flow);
        }
        if got.delivered == 0 {
            return;
        }
        self.counters.app_bytes += got.delivered;
        let (c, server) = self.reader(p.flow);
        let Some(client) = self.clients.get_mut(c) else {
            // no clients: the Riak workload's nodes (their flows' reader is client 0)
            return self.riak_delivered(p.flow, before, before + got.delivered);
        };
        let progress = client.on_progress(self.now, server, before, before + got.delivered);
        if let Progress::Partial(_) = progress {
            if LEAN || !self.scheduler.follows_delivery() {
                return; // nothing to tell (NCCS and OCS counting sent bytes hear it in `transmit`)
            }
        }
        let mut actions = std::mem::take(&mut self.actions);
        match progress {
            Progress::Partial(remaining) => {
                // (the schemes that count run with one client: flow = server)
                let (client, flows) = (&self.clients[0], &self.flows);
                let remaining_of = |g: FlowId| client.remaining(g, flows[g as usize].receiver.rcv_nxt - 1);
                self.scheduler.on_progress(p.flow, remaining, remaining_of, &mut actions);
            }
            Progress::FlowDone => {
                self.flow_done(p.flow);
                self.scheduler.on_progress(p.flow, 0, |_| 0, &mut actions);
                self.scheduler.on_done(p.flow, &mut actions);
            }
            Progress::BlockDone => {
                self.flow_done(p.flow);
                self.block_done(c);
            }
        }
        self.apply(&mut actions);
        self.actions = actions;
    }

    fn on_syn_ack(&mut self, p: Packet) {
        let fl = &mut self.flows[p.flow as usize];
        if p.conn != fl.conn || fl.state != ConnState::SynSent {
            return; // a late SYN-ACK for a retransmitted SYN, or an old connection
        }
        fl.state = ConnState::Open;
        // The server's first RTT sample (RFC 6298 §2.2) is its SYN-ACK -> ACK time; on
        // this symmetric path it equals the client's SYN -> SYN-ACK time.
        let rtt = self.now - fl.syn_sent_at;
        fl.sender.rto.sample(rtt);
        self.send_request(p.flow);
    }

    fn flow_done(&mut self, f: FlowId) {
        if let Some(ictcp) = &mut self.ictcp {
            ictcp.close(f);
        }
        if self.handshake {
            self.flows[f as usize].state = ConnState::Closed;
        }
    }

    /// Client `c` has its block. In blocks mode each client reads `blocks` blocks; the
    /// measurement ends when the last client has read its last.
    fn block_done(&mut self, c: usize) {
        if let StopAt::Blocks(target) = self.stop {
            if self.clients[c].blocks_done >= target {
                self.clients_done += 1;
                if self.clients_done == self.clients.len() {
                    self.measured_until = self.now;
                    self.draining = true;
                    self.flows_unacked = self.flows.iter().filter(|f| !f.sender.all_acked()).count();
                }
                return;
            }
        }
        self.start_block(c);
    }

    fn send_ack<const LEAN: bool>(&mut self, flow: FlowId) {
        let fl = &mut self.flows[flow as usize];
        let mut pkt = ack_packet(flow, &mut fl.receiver, self.header);
        pkt.conn = fl.conn;
        self.send_from_client::<LEAN>(pkt);
    }

    fn schedule_delack(&mut self, flow: FlowId) {
        if let Some(t) = self.flows[flow as usize].receiver.take_timer_request() {
            self.queue.push(t, Event::DelAckTimer(flow));
        }
    }

    fn on_ictcp_slot(&mut self) {
        let Some(mut ictcp) = self.ictcp.take() else { return };
        let mut changed = vec![];
        let flows = &self.flows;
        ictcp.end_slot(self.now, |f| flows[f as usize].receiver.rcv_nxt - 1, &mut changed);
        self.queue.push(self.now + ictcp.slot(), Event::IctcpSlot);
        self.ictcp = Some(ictcp);
        for (f, w) in changed {
            self.set_window(f, w);
        }
    }

    // ---- the switch ------------------------------------------------------------------

    /// The switch at the far end of `ingress` sends `frame` to `ingress`'s upstream end
    /// (for `class` under PFC): on the reverse link, at the next frame boundary, ahead of
    /// the data waiting there, which waits for it (`net::pause`).
    fn send_pause_frame(&mut self, ingress: PortId, class: usize, frame: Frame) {
        let back = self.topo.reverse[ingress as usize];
        let spec = self.topo.ports[back as usize];
        let start = self.ports[back as usize].send_control(self.queue.current(), CONTROL_WIRE_BYTES);
        let (at, _) = frame_times(start, spec.rate_bps, spec.delay);
        let pfc = self.pause.as_ref().is_some_and(IngressPause::is_per_class);
        let ev = match (frame, pfc) {
            (Frame::Xoff, false) => Event::PauseOn(ingress),
            (Frame::Xon, false) => Event::PauseOff(ingress),
            (Frame::Xoff, true) => Event::PfcOn { class: class as u8, port: ingress },
            (Frame::Xon, true) => Event::PfcOff { class: class as u8, port: ingress },
        };
        self.queue.push(at, ev);
    }

    /// A PFC frame for `class` reached `port`: XOFF stops that class's queue for the
    /// configured quanta, XON resumes it; the port's other classes go on (802.1Qbb).
    fn on_pfc(&mut self, port: PortId, class: usize, xoff: bool) {
        let Some(pause) = &self.pause else { return };
        if xoff {
            let until = self.now + pause_time(pause.cfg.quanta, self.topo.ports[port as usize].rate_bps);
            self.ports[port as usize].pause_class_until(class, until);
            self.queue.push(until, Event::PauseEnd(port));
        } else {
            self.ports[port as usize].pause_class_until(class, self.now);
            self.resume(port);
        }
    }

    /// A PAUSE frame reached `port`: XOFF stops it for the configured quanta, XON resumes it.
    fn on_pause(&mut self, port: PortId, xoff: bool) {
        let Some(pause) = &self.pause else { return };
        if xoff {
            let until = self.now + pause_time(pause.cfg.quanta, self.topo.ports[port as usize].rate_bps);
            self.ports[port as usize].pause_until(until);
            self.queue.push(until, Event::PauseEnd(port));
        } else {
            self.ports[port as usize].pause_until(self.now);
            self.resume(port);
        }
    }

    /// `port`'s pause may have ended: start its next packet if its link is idle.
    fn resume(&mut self, port: PortId) {
        let p = &self.ports[port as usize];
        // a link still transmitting has its "link free" event pending
        if !p.paused(self.now) && p.waiting_packets() > 0 && p.free_at() < self.queue.current() {
            self.on_link_free::<false>(port);
        }
    }

    fn at_switch<const LEAN: bool>(&mut self, id: PktId) {
        let (kind, flow, len, seq, after_timeout) = {
            let p = self.pool.get(id);
            (p.kind, p.flow, p.len, p.seq, p.after_timeout)
        };
        // the ingress it came by, and its egress: data, SYN-ACKs and datagrams go to the
        // flow's receiver, the rest to its sender
        let (via, port) = if !LEAN && self.track_ingress {
            let via = self.via[id as usize];
            let sw = self.topo.far_switch(via).expect("a packet arriving at a switch came over a link to it");
            let (src, dst) = self.ends[flow as usize];
            (via, self.topo.route(sw, if kind.to_client() { dst } else { src }))
        } else {
            // one switch, no PAUSE: nothing reads the ingress, and the route was looked up at build
            (PortId::MAX, self.star_egress[flow as usize][usize::from(!kind.to_client())])
        };
        let offer = self.offer_to::<LEAN, true>(port, id);
        let admitted = offer != Offer::Dropped;
        if let (false, Some(pause), Offer::Waiting { .. }) = (LEAN, &mut self.pause, offer) {
            let wire = self.pool.get(id).wire_bytes as u64;
            let time = pause_time(pause.cfg.quanta, self.topo.ports[via as usize].rate_bps);
            let class = if flow == self.victim_flow { self.victim_class } else { 0 };
            if pause.enqueued(via, class, wire, self.now, time) == Some(Frame::Xoff) {
                self.send_pause_frame(via, class, Frame::Xoff);
            }
        }
        if kind.to_client() && port == self.bottleneck {
            // a mirror of the client's port sees everything offered to it (data, SYN-ACKs,
            // background UDP), dropped or not
            self.recorder.capture(self.now, self.pool.get(id), !admitted);
        }
        match admitted {
            true => {}
            false if !LEAN && flow == self.victim_flow => {
                self.pool.release(id);
                match kind {
                    Kind::Data => self.counters.victim_bytes_dropped += len as u64,
                    _ => self.counters.acks_dropped += 1, // its next cumulative ACK covers it
                }
            }
            false if kind == Kind::Request => {
                // Several clients (or Riak nodes) can fill a port with requests. A request
                // is a small message on the connection's reverse direction; its TCP sends it
                // again after its retransmission timeout, which on these RTTs sits at
                // RTOmin (RFC 6298 §2.4). Modelled: the same packet re-enters the
                // requester's NIC one RTOmin after the drop, with the ACK, window and
                // timestamp echo of then (`refresh_request`). Not counted as a timeout:
                // `requests_dropped` counts these.
                self.counters.requests_dropped += 1;
                self.queue.push(self.now + self.sender_cfg.rto_min, Event::NicEnter(id));
            }
            false => {
                self.pool.release(id);
                match kind {
                    Kind::Data => {
                        self.counters.data_bytes_dropped += len as u64;
                        if after_timeout && self.flows[flow as usize].receiver.holds(seq, len) {
                            self.counters.spurious_timeouts += 1;
                        }
                    }
                    Kind::Udp => self.counters.udp_dropped += 1,
                    // the client's SYN timer will notice
                    Kind::SynAck | Kind::Syn => {}
                    // the next cumulative ACK covers it (with one client this port carries
                    // only that client's ACKs and never fills)
                    Kind::Ack => self.counters.acks_dropped += 1,
                    Kind::Request => unreachable!("handled above"),
                }
            }
        }
        if let Offer::Waiting { first: true } = offer {
            let free = self.ports[port as usize].free_at();
            if self.ends_at_this_instant(free) {
                self.link_free_now::<LEAN>(free, port); // `offer_to::<_, true>` left it unfiled
            }
        }
    }

    /// A transmission whose "done" key is `free` ends at this very instant, after the event
    /// being processed: its link-free event is one `offer_to::<_, true>` may leave to its caller.
    #[inline(always)]
    fn ends_at_this_instant(&self, free: crate::event::Key) -> bool {
        crate::event::key_time(free) == self.now && free > self.queue.current()
    }

    /// `port`'s "link free" event at `key`, at this very instant (`offer_to::<_, true>` left
    /// it to its caller), now that the event that made it is done: run at once if nothing
    /// pending comes before it, as the queue would have run it next (and counted as an
    /// event all the same); filed otherwise. Saves a push and a pop per packet on a port
    /// whose packets arrive back to back (FAST'08 at one server: every packet; a plain
    /// port's `offer_to` runs the event itself, before the offer). Nothing else differs
    /// from a popped event: neither handler touches what ends a run, and the cancel check
    /// that falls on it is made at the next multiple of CANCEL_CHECK_EVENTS.
    #[inline(never)]
    fn link_free_now<const LEAN: bool>(&mut self, key: crate::event::Key, port: PortId) {
        if !self.queue.runs_next(key) {
            return self.queue.push_key(key, Event::LinkFree(port));
        }
        self.queue.take_next(key);
        self.counters.events += 1;
        self.on_link_free::<LEAN>(port);
    }

    // ---- the servers -----------------------------------------------------------------

    fn at_server<const LEAN: bool>(&mut self, id: PktId) {
        let p = self.pool.release(id);
        self.at_sender::<LEAN>(p)
    }

    /// An ACK, request or SYN reached the sending end of its flow. (Inlined in both
    /// callers: `at_server`'s call is the star's per-ACK path.)
    #[inline(always)]
    fn at_sender<const LEAN: bool>(&mut self, p: Packet) {
        if !LEAN && p.flow == self.victim_flow {
            return self.at_victim_sender(p);
        }
        let f = p.flow as usize;
        if p.kind == Kind::Syn {
            return self.on_syn(p);
        }
        if p.conn != self.flows[f].server_conn {
            self.counters.stale_packets += 1;
            return;
        }
        if !LEAN && self.recorder.events {
            let payload = if p.kind == Kind::Request { REQUEST_PAYLOAD_BYTES as u64 } else { 0 };
            self.recorder.event(self.now, EventKind::Ack, p.flow, p.ack, payload, None);
        }
        let mut out = std::mem::take(&mut self.scratch);
        let s = &mut self.flows[f].sender;
        match p.kind {
            Kind::Ack => {
                let was_unacked = !s.all_acked();
                s.set_ece(p.has(ECE));
                s.on_ack_segment(self.now, p.ack, p.wnd as u64, p.ts, &p.sack_blocks(), &mut out);
                if self.draining && was_unacked && s.all_acked() {
                    self.flows_unacked -= 1;
                }
                self.trace::<LEAN>(p.flow, TraceEvent::Ack);
                self.transmit::<LEAN>(p.flow, &mut out);
            }
            Kind::Request => {
                // its piggybacked ACK first
                s.on_data_segment_ack(self.now, p.ack, p.wnd as u64, p.ts, &mut out);
                self.transmit::<LEAN>(p.flow, &mut out);
                if self.riak.is_some() {
                    self.riak_request(p.flow, p.seq, &mut out);
                } else {
                    self.pending_request[f] += p.seq;
                    if self.jitter > 0 {
                        let think = self.rng.random_range(0..self.jitter);
                        self.queue.push(self.now + Time(think), Event::ServerRespond(p.flow));
                    } else {
                        self.respond(p.flow);
                    }
                }
            }
            _ => unreachable!("servers receive ACKs, requests and SYNs"),
        }
        self.scratch = out;
    }

    fn on_syn(&mut self, p: Packet) {
        let f = p.flow;
        if p.conn != self.flows[f as usize].server_conn {
            // a new connection replaces the old one (its stale packets will be ignored)
            let mut sender = self.new_sender(f, p.conn);
            let fl = &mut self.flows[f as usize];
            sender.stats = std::mem::take(&mut fl.sender.stats); // counters span connections
            fl.sender = sender;
            fl.server_conn = p.conn;
            self.pending_request[f as usize] = 0;
        }
        self.flows[f as usize].sender.set_peer_window(p.wnd as u64);
        let mut pkt = Packet::new(f, Kind::SynAck, self.header, 0, 0, 0);
        pkt.conn = p.conn;
        self.send_from_server::<false>(f, pkt);
    }

    /// The server writes the requested bytes to its socket.
    fn respond(&mut self, flow: FlowId) {
        let bytes = std::mem::take(&mut self.pending_request[flow as usize]);
        let mut out = std::mem::take(&mut self.scratch);
        self.flows[flow as usize].sender.write(self.now, bytes, &mut out);
        self.trace::<false>(flow, TraceEvent::Write);
        self.transmit::<false>(flow, &mut out);
        self.scratch = out;
    }

    fn send_udp(&mut self, f: FlowId) {
        let Some(interval) = self.udp_interval else { return };
        let pkt = Packet::new(f, Kind::Udp, self.udp_bytes, 0, 0, 0);
        self.counters.udp_sent += 1;
        self.send_from_server::<false>(f, pkt);
        self.queue.push(self.now + interval, Event::UdpSend(f));
    }

    /// The sending end of flow `f` puts `pkt` on its NIC now (inlined: see `send_from_client`).
    #[inline(always)]
    fn send_from_server<const LEAN: bool>(&mut self, f: FlowId, pkt: Packet) {
        let nic = self.flows[f as usize].nics.0;
        let id = self.pool.alloc(pkt);
        let admitted = self.offer::<LEAN>(nic, id);
        debug_assert!(admitted, "host queues are unbounded");
    }

    /// Server `f`'s TCP sends `pkt`: it enters the NIC now, or up to `send_jitter` later
    /// (ns-2's `overhead_`: host timing noise breaks drop-tail phase lock-out), never
    /// before the host's previous packet.
    fn send_data<const LEAN: bool>(&mut self, f: FlowId, pkt: Packet) {
        if LEAN || self.send_jitter == 0 {
            return self.send_from_server::<LEAN>(f, pkt);
        }
        let late = self.now + Time(self.rng.random_range(0..=self.send_jitter));
        let host = self.ends[f as usize].0 as usize;
        let enter = late.max(self.jitter_entered[host]);
        self.jitter_entered[host] = enter;
        let id = self.pool.alloc(pkt);
        self.queue.push(enter, Event::NicEnter(id));
    }

    /// Put the segments a sender produced on its server's NIC and keep its timer.
    fn transmit<const LEAN: bool>(&mut self, flow: FlowId, out: &mut Vec<Segment>) {
        let conn = self.flows[flow as usize].server_conn;
        let sent_any = !out.is_empty();
        for seg in out.drain(..) {
            if !LEAN && self.recorder.events {
                let kind = if seg.retransmit { EventKind::Rtx } else { EventKind::Tx };
                self.recorder.event(self.now, kind, flow, seg.seq, seg.len as u64, None);
            }
            // ns-2 pads a write's short last segment to a whole packet (tcp::ns2_rules)
            let payload = self.flows[flow as usize].sender.packet_bytes(seg.len as u64) as u32;
            let mut pkt = Packet::new(flow, Kind::Data, self.header + payload, seg.len, seg.seq, 0);
            pkt.after_timeout = seg.after_timeout;
            pkt.conn = conn;
            pkt.ts = self.now; // TSval (RFC 7323): when TCP sent it
            if !LEAN && self.sender_cfg.cc.uses_ecn() {
                pkt.ecn = ECT; // RFC 3168 §6.1.1: data segments only, not pure ACKs or SYNs
            }
            self.counters.data_bytes_sent += seg.len as u64;
            self.send_data::<LEAN>(flow, pkt);
        }
        if let Some(t) = self.flows[flow as usize].sender.take_timer_request() {
            self.queue.push(t, Event::RtoTimer(flow));
        }
        if !LEAN && sent_any && self.scheduler.counts_sent() {
            self.report_sent(flow); // condition-I is checked as bytes are sent
        }
    }

    /// Osada et al. §4.3 count "the number of bits which has been already sent": tell the
    /// scheduler how much of its part each server has still to send.
    fn report_sent(&mut self, flow: FlowId) {
        let (client, flows) = (&self.clients[0], &self.flows); // one client (validation)
        let unsent_of = |g: FlowId| client.unsent(g, flows[g as usize].sender.snd_max - 1);
        let unsent = unsent_of(flow);
        if unsent == u64::MAX {
            return;
        }
        let mut actions = std::mem::take(&mut self.actions);
        self.scheduler.on_progress(flow, unsent, unsent_of, &mut actions);
        self.apply(&mut actions);
        self.actions = actions;
    }

    // ---- observation -----------------------------------------------------------------

    /// Record `flow`'s sender state if the per-event trace or its flow trace is on: a test
    /// inlined where every ACK passes, the recording out of line.
    #[inline(always)]
    fn trace<const LEAN: bool>(&mut self, flow: FlowId, event: TraceEvent) {
        if (!LEAN && self.recorder.events) || self.recorder.traces(flow) {
            self.record_sender(flow, event);
        }
    }

    #[inline(never)]
    fn record_sender(&mut self, flow: FlowId, event: TraceEvent) {
        if self.recorder.events {
            let s = &self.flows[flow as usize].sender;
            let snapshot = SenderSnapshot {
                cwnd: s.cwnd,
                ssthresh: s.ssthresh,
                rto_us: s.rto.rto.0 / crate::time::PS_PER_US,
                state: s.cong_state() as u8,
            };
            self.recorder.sender_state(self.now, flow, snapshot);
        }
        if !self.recorder.traces(flow) {
            return;
        }
        let s = &self.flows[flow as usize].sender;
        let row = TraceRow {
            time: self.now,
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
        self.recorder.trace(row);
    }

    /// Flow `f`'s sender timed out now: the sampler counts it at the port that delivers
    /// the flow's data to its receiver (the receiver's downlink), where the incast that
    /// caused it is seen.
    fn util_timeout(&mut self, f: FlowId) {
        if self.recorder.port_util.is_none() {
            return;
        }
        let receiver = self.ends[f as usize].1;
        let downlink = self.downlink(receiver);
        if let Some(u) = &mut self.recorder.port_util {
            u.timeout(downlink, self.now);
        }
    }

    /// The switch port towards host `h` (its last hop).
    fn downlink(&self, h: HostId) -> PortId {
        let sw = self.topo.far_switch(self.topo.nic(h)).expect("every host hangs off a switch");
        self.topo.route(sw, h)
    }

    /// Ports of the fabric (host NICs and switch ports).
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// What the run recorded (empty unless asked for).
    pub fn take_records(&mut self) -> crate::trace::Records {
        if let Some(mut u) = self.recorder.port_util.take() {
            u.finish();
            self.recorder.records.port_util = Some(u);
        }
        self.recorder.records.ends = self.ends.clone();
        std::mem::take(&mut self.recorder.records)
    }

    /// The servers' data payload bytes in packets still queued or on a link, counted packet
    /// by packet (the victim's are its own).
    pub fn data_bytes_in_flight(&self) -> u64 {
        let victim = self.victim_flow;
        self.pool.live_packets().filter(|p| p.kind == Kind::Data && p.flow != victim).map(|p| p.len as u64).sum()
    }

    /// The victim flow's goodput over the measured time, Mbps, when there is one.
    pub fn victim_goodput_mbps(&self) -> Option<f64> {
        let secs = self.measured_until.as_secs_f64();
        self.victim.as_ref().map(|v| if secs > 0.0 { v.app_bytes as f64 * 8.0 / secs / 1e6 } else { 0.0 })
    }

    // ---- the victim flow -------------------------------------------------------------

    /// Put the victim sender's segments on its NIC and keep its timer.
    fn victim_transmit(&mut self, out: &mut Vec<Segment>) {
        let v = self.victim.as_mut().expect("a victim flow");
        let (flow, nic) = (v.flow, self.topo.nic(v.sender_host));
        for seg in out.drain(..) {
            let v = self.victim.as_ref().unwrap();
            let payload = v.sender.packet_bytes(seg.len as u64) as u32;
            let mut pkt = Packet::new(flow, Kind::Data, self.header + payload, seg.len, seg.seq, 0);
            pkt.ts = self.now;
            let id = self.pool.alloc(pkt);
            let admitted = self.offer::<false>(nic, id);
            debug_assert!(admitted, "host queues are unbounded");
        }
        if let Some(t) = self.victim.as_mut().unwrap().sender.take_timer_request() {
            self.queue.push(t, Event::RtoTimer(flow));
        }
    }

    fn at_victim_receiver(&mut self, p: Packet) {
        let v = self.victim.as_mut().expect("a victim flow");
        v.receiver.note_timestamp(p.seq, p.ts);
        let got = v.receiver.on_segment(self.now, p.seq, p.len);
        v.app_bytes += got.delivered;
        if got.ack_now {
            self.victim_ack();
        } else {
            self.victim_delack();
        }
    }

    fn victim_ack(&mut self) {
        let v = self.victim.as_mut().expect("a victim flow");
        let pkt = ack_packet(v.flow, &mut v.receiver, self.header);
        let nic = self.topo.nic(v.receiver_host);
        let id = self.pool.alloc(pkt);
        let admitted = self.offer::<false>(nic, id);
        debug_assert!(admitted, "host queues are unbounded");
    }

    fn victim_delack(&mut self) {
        let v = self.victim.as_mut().expect("a victim flow");
        if let Some(t) = v.receiver.take_timer_request() {
            self.queue.push(t, Event::DelAckTimer(v.flow));
        }
    }

    fn at_victim_sender(&mut self, p: Packet) {
        let mut out = std::mem::take(&mut self.scratch);
        let v = self.victim.as_mut().expect("a victim flow");
        v.sender.on_ack_segment(self.now, p.ack, p.wnd as u64, p.ts, &p.sack_blocks(), &mut out);
        self.victim_transmit(&mut out);
        self.scratch = out;
    }

    /// (packets, events) ever held at once: what the run's memory grows with.
    pub fn high_water_marks(&self) -> (usize, usize) {
        (self.pool.capacity(), self.queue.peak())
    }

    /// Sum of a per-flow sender counter (counters carry over from one connection of a
    /// flow to the next).
    pub fn sender_total(&self, f: impl Fn(&TcpSender) -> u64) -> u64 {
        self.flows.iter().map(|fl| f(&fl.sender)).sum()
    }

    /// Element-wise sum of a per-flow sender array counter.
    pub fn sender_array_total<const K: usize>(&self, f: impl Fn(&TcpSender) -> [u64; K]) -> [u64; K] {
        let mut total = [0; K];
        for fl in &self.flows {
            for (t, v) in total.iter_mut().zip(f(&fl.sender)) {
                *t += v;
            }
        }
        total
    }

    /// Sum of a per-flow receiver counter.
    pub fn receiver_total(&self, f: impl Fn(&TcpReceiver) -> u64) -> u64 {
        self.flows.iter().map(|fl| f(&fl.receiver)).sum()
    }

    /// Every switch port (host NICs come first).
    fn switch_ports(&self) -> &[OutputPort] {
        &self.ports[self.topo.hosts as usize..]
    }

    /// The switch port towards the client: the shallow buffer where incast happens.
    pub fn to_client(&self) -> &OutputPort {
        &self.ports[self.bottleneck as usize]
    }

    /// Drops at every switch port.
    pub fn switch_drops(&self) -> u64 {
        self.switch_ports().iter().map(|p| p.drops).sum()
    }

    /// Packets marked CE at the switch (ECN).
    pub fn switch_ce_marks(&self) -> u64 {
        self.switch_ports().iter().map(|p| p.ce_marks).sum()
    }

    /// Packets that crossed one link, all links.
    pub fn packet_hops(&self) -> u64 {
        self.ports.iter().map(|p| p.sent_packets).sum()
    }

    /// Largest occupancy of any switch port, in bytes.
    pub fn max_switch_occupancy(&self) -> u64 {
        self.switch_ports().iter().map(|p| p.max_occupancy).max().unwrap_or(0)
    }

    /// PAUSE frames sent (XOFF, XON), when PAUSE is on.
    pub fn pause_frames(&self) -> Option<(u64, u64)> {
        self.pause.as_ref().map(|p| (p.xoff_frames, p.xon_frames))
    }

    /// The Riak workload's gets, when it runs.
    pub fn riak_gets(&self) -> Option<&crate::app::riak::RiakGets> {
        self.riak.as_ref().map(|r| &r.gets)
    }

    /// Payload bytes each client's application received.
    pub fn client_app_bytes(&self) -> Vec<u64> {
        self.clients.iter().map(|c| c.app_bytes).collect()
    }

    /// Number of active servers per block.
    pub fn active_per_block(&self) -> usize {
        self.active_servers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::TieBreak;
    use crate::net::ClassScheduler;
    use crate::scenario::{ScenarioSpec, TcpRules};
    use crate::time::PS_PER_US;
    use crate::trace::EventKind;

    /// Two servers, a one-packet buffer at the client's port, every event recorded.
    fn two_server_world(tie_break: TieBreak, seed: u64) -> World {
        let spec = ScenarioSpec { servers: 2, buffer_packets: Some(1), tie_break, seed, ..ScenarioSpec::default() };
        World::with_records(&spec.validate().unwrap(), &RecordOptions { events: true, ..Default::default() })
    }

    #[test]
    fn the_lean_and_plain_paths_give_what_the_featured_paths_give_with_every_feature_off() {
        // FAST'08 collapsing at 16 servers (drops, timeouts, back-to-back arrivals at the
        // client's port), a 10 Gbps one-shot incast, two switches, random ties
        let specs = [
            ScenarioSpec { servers: 16, duration_ps: Some(300_000 * PS_PER_US), ..ScenarioSpec::default() },
            ScenarioSpec {
                servers: 64,
                sru_bytes: Some(1 << 20),
                buffer_bytes: 150_000,
                rate_bps: 10_000_000_000,
                rtt_ps: 40 * PS_PER_US,
                blocks: Some(1),
                ..ScenarioSpec::default()
            },
            ScenarioSpec {
                servers: 16,
                topology: TopologyKind::TwoSwitch,
                duration_ps: Some(300_000 * PS_PER_US),
                ..ScenarioSpec::default()
            },
            ScenarioSpec {
                servers: 16,
                tie_break: TieBreak::Random,
                duration_ps: Some(300_000 * PS_PER_US),
                ..ScenarioSpec::default()
            },
        ];
        for spec in specs {
            // (lean implies plain: a lean loop takes the plain ports' paths)
            let run = |plain: bool, lean: bool| {
                let mut w = World::new(&spec.validate().unwrap());
                assert!(w.plain, "every feature of the ports is off");
                assert_eq!(w.lean, spec.topology == TopologyKind::Star, "every other feature is off (one switch)");
                (w.plain, w.lean) = (plain, lean && w.lean);
                w.run();
                let c = &w.counters;
                let totals = (c.events, c.app_bytes, c.data_bytes_sent, c.data_bytes_dropped, w.switch_drops());
                let tcp = w.sender_array_total(|s| [s.stats.timeouts, s.stats.retransmits, s.stats.fast_retransmits]);
                (totals, tcp, w.blocks_done(), w.queue.peak(), w.now, w.max_switch_occupancy())
            };
            let lean = run(true, true);
            assert!(lean.0 .4 > 0 && lean.1[0] > 0, "the scenario drops packets and times out: {spec:?}");
            assert_eq!(lean, run(true, false), "lean and plain: {spec:?}");
            assert_eq!(lean, run(false, false), "lean and featured: {spec:?}");
        }
    }

    /// (flow, sequence number) of each data packet the client's port dropped.
    fn drops(w: &World) -> Vec<(FlowId, u64)> {
        w.recorder.records.events.iter().filter(|e| e.kind == EventKind::Drop).map(|e| (e.flow, e.a)).collect()
    }

    /// Server 0 writes two segments at 100 us: the first starts at once, the second waits in
    /// its NIC and starts at 112 us, when the first has left. Server 1 writes one segment at
    /// 112 us onto its idle NIC, in an event scheduled before server 0's first transmission
    /// started (as an ACK arriving then would be). Both reach the switch at 112 + 12 + 25 us,
    /// where the client's port has room for one.
    fn race(w: &mut World) {
        let mss = w.sender_cfg.mss;
        w.queue.push(Time(112 * PS_PER_US), Event::ServerRespond(1));
        w.queue.push(Time(100 * PS_PER_US), Event::ServerRespond(0));
        w.pending_request[0] = 2 * mss;
        w.pending_request[1] = mss;
        w.run_events(Time(500 * PS_PER_US));
    }

    #[test]
    fn an_idle_nic_packet_beats_a_queued_one_to_a_full_port_as_in_ns3() {
        // ns-3: the queued packet starts in TransmitComplete (scheduled at 100 us); server
        // 1's send runs in an event scheduled before that, so its packet's arrival at the
        // switch is scheduled first and takes the last slot (peers/ns3/README.md)
        let mut w = two_server_world(TieBreak::Fifo, 1);
        race(&mut w);
        assert_eq!(drops(&w), vec![(0, 1 + w.sender_cfg.mss)], "server 0's second segment is dropped");
        // conservation: sent = delivered + dropped + in flight
        let c = &w.counters;
        assert_eq!(c.data_bytes_sent, c.data_bytes_arrived + c.data_bytes_dropped + w.data_bytes_in_flight());
        assert_eq!(c.data_bytes_sent, 3 * w.sender_cfg.mss);
    }

    #[test]
    fn under_random_tie_breaking_either_packet_may_win_the_slot() {
        let mss = 1460;
        let winners: std::collections::BTreeSet<_> = (0..40)
            .map(|seed| {
                let mut w = two_server_world(TieBreak::Random, seed);
                race(&mut w);
                drops(&w)
            })
            .collect();
        assert!(winners.contains(&vec![(0, 1 + mss)]) && winners.contains(&vec![(1, 1)]), "{winners:?}");
    }

    /// When a one-segment write of 100 B reaches the client.
    fn short_write_arrives(rules: TcpRules) -> Time {
        let spec = ScenarioSpec { servers: 1, tcp_rules: rules, ..ScenarioSpec::default() };
        let mut w = World::with_records(&spec.validate().unwrap(), &RecordOptions { events: true, ..Default::default() });
        w.pending_request[0] = 100;
        w.queue.push(Time(100 * PS_PER_US), Event::ServerRespond(0));
        w.run_events(Time(500 * PS_PER_US));
        w.recorder.records.events.iter().find(|e| e.kind == EventKind::Deq).map(|e| e.time).expect("the segment was forwarded")
    }

    #[test]
    fn under_ns2_rules_a_short_segment_is_a_whole_packet_on_the_wire() {
        // ns-2's TcpAgent::output sends packetSize_ bytes whatever the application wrote:
        // 100 B of payload and 40 B of headers cross the server's link as 1500 B, 1360 B
        // more than under RFC rules, and the switch forwards it once its last bit arrived
        let bit = serialization_time(1, 1_000_000_000);
        let extra = short_write_arrives(TcpRules::Ns2) - short_write_arrives(TcpRules::Rfc);
        assert_eq!(extra, Time(1360 * bit.0));
    }

    #[test]
    fn on_two_switches_the_far_servers_traffic_and_only_it_crosses_the_trunk() {
        // 4 servers: 0, 1 and the client on switch 0, 2 and 3 on switch 1. Every packet the
        // far servers' NICs sent was offered to the trunk towards switch 0 (sent or dropped
        // there), and everything that crossed the other way was for them.
        let topology = TopologyKind::TwoSwitch;
        let spec = ScenarioSpec { servers: 4, blocks: Some(5), topology, ..ScenarioSpec::default() };
        let mut w = World::new(&spec.validate().unwrap());
        w.run();
        let t = &w.topo;
        let (up, down) = (t.route(1, 4), t.route(0, 2));
        let sent = |p: PortId| w.ports[p as usize].sent_packets;
        let offered = |p: PortId| sent(p) + w.ports[p as usize].drops;
        assert_eq!(offered(up), sent(t.nic(2)) + sent(t.nic(3)));
        // (the run ends when the last ACK arrives: nothing is in flight)
        assert_eq!(sent(down), offered(t.route(1, 2)) + offered(t.route(1, 3)));
        assert!(sent(up) > 0 && w.blocks_done() == 5);
        // a far server's first RTT sample is its 6-link path's, out and back
        let one_way = t.one_way(2, 4, 40);
        assert_eq!(one_way, Time(3 * (25 * PS_PER_US + serialization_time(40, 1_000_000_000).0)));
    }

    /// Two servers on the star with PAUSE (XOFF above 1000 B of one ingress waiting, XON
    /// at 500 B or below); each writes two full segments at 0; server 1 sends a datagram at
    /// 70 us. The world runs to `end` (a fresh one each time: a run consumes the first
    /// event past its end).
    fn paused_pair(end: Time) -> World {
        let (pause, pause_xoff_bytes, pause_xon_bytes) = (true, 1000, 500);
        let spec = ScenarioSpec { servers: 2, pause, pause_xoff_bytes, pause_xon_bytes, ..Default::default() };
        let mut w = World::new(&spec.validate().unwrap());
        let mss = w.sender_cfg.mss;
        w.pending_request = vec![2 * mss, 2 * mss];
        w.queue.push(Time::ZERO, Event::ServerRespond(0));
        w.queue.push(Time::ZERO, Event::ServerRespond(1));
        w.udp_interval = Some(Time(PS_PER_S));
        w.queue.push(Time(70 * PS_PER_US), Event::UdpSend(1));
        w.run_events(end);
        w
    }

    #[test]
    fn pause_frames_leave_and_land_when_hand_computed() {
        // 1 Gbps, 25 us links, 1500 B frames (12 us). Each NIC sends its two segments at 0
        // and 12 us; they reach the switch at 37 and 49 us. At 37 server 0's first starts
        // towards the client, server 1's waits: 1500 B of ingress 1 > 1000: XOFF on the
        // idle link back to NIC 1, 8 B of preamble and 64 B of frame (0.576 us) + 25 us: it
        // lands at 62.576 us and pauses NIC 1 for 0xFFFF x 512 ns. At 49 server 0's second
        // waits: XOFF to NIC 0, landing at 74.576. Server 1's first starts at 49, server 0's
        // second at 61 (ingress 0 empties: XON, lands at 86.576), server 1's second at 73
        // (XON to NIC 1, lands at 98.576).
        let us = |x: u64| Time(x * PS_PER_US);
        let frame = Time(576_000);
        let full = Time(65_535 * 512 * 1000);
        let paused = |end: Time, port: FlowId, at: Time| paused_pair(end).ports[port as usize].paused(at);
        assert!(!paused(us(62) + frame - Time(1), 1, us(62) + frame));
        assert!(paused(us(62) + frame, 1, us(62) + frame + full - Time(1)));
        assert!(!paused(us(62) + frame, 1, us(62) + frame + full));
        assert!(!paused(us(74) + frame - Time(1), 0, us(75)));
        assert!(paused(us(74) + frame, 0, us(75)));
        assert!(paused(us(86) + frame - Time(1), 0, us(87)));
        assert!(!paused(us(86) + frame, 0, us(86) + frame), "XON resumes at once");
        assert!(paused(us(98) + frame - Time(1), 1, us(99)));
        assert!(!paused(us(98) + frame, 1, us(98) + frame));
        assert_eq!(paused_pair(us(98) + frame).pause_frames(), Some((2, 2)));
    }

    #[test]
    fn a_paused_nic_holds_its_packets_until_the_xon_lands() {
        // the datagram server 1 sends at 70 us, while its NIC is paused (62.576 to 98.576
        // us), starts when the XON lands, and its last bit leaves 12 us later
        let us = |x: u64| Time(x * PS_PER_US);
        let frame = Time(576_000);
        let nic1 = 1;
        assert_eq!(paused_pair(us(70)).ports[nic1].waiting_packets(), 1);
        assert_eq!(paused_pair(us(98) + frame - Time(1)).ports[nic1].sent_packets, 2, "nothing starts while paused");
        let w = paused_pair(us(98) + frame);
        assert_eq!(w.ports[nic1].sent_packets, 3, "the datagram starts as the XON lands");
        assert_eq!(crate::event::key_time(w.ports[nic1].free_at()), us(110) + frame);
    }

    /// A world of two servers with PAUSE (and PFC over two classes, the victim in class 1,
    /// when `pfc`), nothing scheduled yet.
    fn idle_world(pfc: bool) -> World {
        let spec = ScenarioSpec {
            servers: 2,
            pause: true,
            pfc,
            victim: pfc,
            qos_classes: if pfc { 2 } else { 1 },
            victim_class: pfc as u32,
            buffer_bytes: 64 * 1024,
            ..Default::default()
        };
        World::new(&spec.validate().unwrap())
    }

    /// A 1500 B packet of `kind` for `flow` in the pool (an ACK carrying no news, a datagram).
    fn full_packet(w: &mut World, flow: FlowId, kind: Kind) -> PktId {
        w.pool.alloc(Packet::new(flow, kind, 1500, 0, 0, 1))
    }

    #[test]
    fn a_pause_frame_takes_its_84_bytes_of_link_time_before_the_next_data_frame() {
        // 802.3 Annex 31B: the frame goes at the next frame boundary. Two 1500 B packets
        // for server 1 reach the switch from the client's link at 0: the first starts on
        // the port to server 1 (0 to 12 us), the second waits. An XOFF for NIC 1 sent then
        // starts at 12 us, lands 0.576 us + 25 us later (37.576) and holds the wire 84 B
        // (0.672 us): the waiting packet starts at 12.672, not 12, and ends at 24.672
        let (us, ns) = (|x: u64| Time(x * PS_PER_US), |x: u64| Time(x * 1000));
        for with_frame in [false, true] {
            let mut w = idle_world(false);
            let to_server1 = w.topo.route(0, 1);
            for _ in 0..2 {
                let id = full_packet(&mut w, 1, Kind::Ack);
                w.via.resize(id as usize + 1, 0);
                w.via[id as usize] = w.topo.nic(w.first_client);
                w.at_switch::<false>(id);
            }
            if with_frame {
                w.send_pause_frame(w.topo.nic(1), 0, Frame::Xoff);
            }
            w.run_events(us(38));
            let second_ends = crate::event::key_time(w.ports[to_server1 as usize].free_at());
            assert_eq!(second_ends, if with_frame { us(24) + ns(672) } else { us(24) });
            let nic1 = w.topo.nic(1) as usize;
            assert_eq!(w.ports[nic1].control_end(), Time::ZERO, "the frame crosses the switch's link, not the NIC's");
            // it paused NIC 1 from the instant it landed: for 0xFFFF x 512 ns from 37.576 us
            let lands_plus_full = us(37) + ns(576) + Time(65_535 * 512 * 1000);
            assert_eq!(w.ports[nic1].paused(lands_plus_full - Time(1)), with_frame);
            assert!(!w.ports[nic1].paused(lands_plus_full));
        }
    }

    /// Two servers on the star with PFC over two classes (all incast traffic in class 0),
    /// thresholds and writes as in `paused_pair`.
    fn pfc_pair(end: Time) -> World {
        let (pause, pause_xoff_bytes, pause_xon_bytes) = (true, 1000, 500);
        let spec = ScenarioSpec {
            servers: 2,
            pause,
            pfc: true,
            qos_classes: 2,
            buffer_bytes: 64 * 1024,
            pause_xoff_bytes,
            pause_xon_bytes,
            ..Default::default()
        };
        let mut w = World::new(&spec.validate().unwrap());
        let mss = w.sender_cfg.mss;
        w.pending_request = vec![2 * mss, 2 * mss];
        w.queue.push(Time::ZERO, Event::ServerRespond(0));
        w.queue.push(Time::ZERO, Event::ServerRespond(1));
        w.run_events(end);
        w
    }

    #[test]
    fn pfc_frames_pause_only_their_class_when_hand_computed() {
        // the 802.3x case above with the accounting per (ingress, class): every packet is
        // class 0, so the frames leave and land at the same instants (62.576, 74.576,
        // 86.576, 98.576 us) and pause class 0 of the NIC; class 1 and the port as a whole
        // are never paused (IEEE 802.1Qbb)
        let us = |x: u64| Time(x * PS_PER_US);
        let frame = Time(576_000);
        let full = Time(65_535 * 512 * 1000);
        let w = pfc_pair(us(62) + frame - Time(1));
        assert!(!w.ports[1].class_paused(0, us(62) + frame));
        let w = pfc_pair(us(62) + frame);
        assert!(w.ports[1].class_paused(0, us(62) + frame + full - Time(1)));
        assert!(!w.ports[1].class_paused(0, us(62) + frame + full));
        assert!(!w.ports[1].class_paused(1, us(63)) && !w.ports[1].paused(us(63)));
        let w = pfc_pair(us(74) + frame);
        assert!(w.ports[0].class_paused(0, us(75)) && !w.ports[0].class_paused(1, us(75)));
        let w = pfc_pair(us(86) + frame);
        assert!(!w.ports[0].class_paused(0, us(86) + frame), "XON resumes class 0 at once");
        let w = pfc_pair(us(98) + frame - Time(1));
        assert!(w.ports[1].class_paused(0, us(99)));
        let w = pfc_pair(us(98) + frame);
        assert!(!w.ports[1].class_paused(0, us(98) + frame));
        assert_eq!(w.pause_frames(), Some((2, 2)));
    }

    #[test]
    fn a_paused_class_does_not_stop_another_class_of_the_same_nic() {
        // NIC 1 has class 0 paused (a PFC XOFF); a class-0 datagram and a class-1 packet
        // (the victim's) are offered at 0: the class-1 packet starts at once (its last bit
        // leaves at 12 us), the datagram waits until the XON lands at 50 us and leaves at
        // 62 us. Under 802.3x both would wait.
        let us = |x: u64| Time(x * PS_PER_US);
        let run_to = |end: Time| {
            let mut w = idle_world(true);
            let nic1 = w.topo.nic(1);
            w.on_pfc(nic1, 0, true);
            let udp = full_packet(&mut w, 1, Kind::Udp);
            assert!(matches!(w.offer_to::<false, false>(nic1, udp), Offer::Waiting { .. }));
            let victim = w.pool.alloc(Packet::new(w.victim_flow, Kind::Data, 1500, 1460, 1, 0));
            assert!(matches!(w.offer_to::<false, false>(nic1, victim), Offer::Started(_)));
            assert_eq!(crate::event::key_time(w.ports[nic1 as usize].free_at()), us(12));
            w.queue.push(us(50), Event::PfcOff { class: 0, port: nic1 });
            w.run_events(end);
            w.ports[nic1 as usize].clone()
        };
        let nic = run_to(us(50) - Time(1));
        assert_eq!((nic.sent_packets, nic.waiting_packets()), (1, 1), "the datagram waits while class 0 is paused");
        let nic = run_to(us(50));
        assert_eq!((nic.sent_packets, nic.waiting_packets()), (2, 0));
        assert_eq!(crate::event::key_time(nic.free_at()), us(62));
    }

    /// Bytes of each class a switch port sends over its first `packets` packets of a long
    /// backlog in both classes: class 0 in 1500 B packets, class 1 in 500 B, as the
    /// scenario's QoS fields set the port up.
    fn class_shares(qos_scheduler: ClassScheduler, qos_weights: Option<Vec<u32>>, packets: usize) -> [u64; 2] {
        let spec = ScenarioSpec {
            servers: 2,
            qos_classes: 2,
            qos_scheduler,
            qos_weights,
            buffer_bytes: 1 << 30,
            ..Default::default()
        };
        let w = World::new(&spec.validate().unwrap());
        let mut port = w.ports[w.bottleneck as usize].clone();
        let mut order = 0;
        let mut reserve = || {
            order += 1;
            let o = order;
            move |t| crate::event::key(t, o)
        };
        let mut class_of = std::collections::HashMap::new();
        for i in 0..4000 {
            for (class, wire) in [(0, 1500), (1, 500)] {
                let id = 2 * i + class as u32;
                class_of.insert(id, (class, wire as u64));
                let _ = port.offer_in_class(crate::event::key(Time::ZERO, 0), id, wire, class, reserve());
            }
        }
        // the first offer found the link idle and started: class 0's first packet
        let mut sent = [1500, 0];
        for _ in 1..packets {
            let now = crate::event::key_time(port.free_at());
            let (id, _, _) = port.next(now, reserve());
            let (class, wire) = class_of[&id];
            sent[class] += wire;
        }
        sent
    }

    #[test]
    fn wrr_weights_3_to_1_from_the_scenario_give_75_and_25_percent_of_the_bytes_within_a_packet() {
        // DRR with a quantum of one full packet (1500 B): per round class 0 sends 4500 B,
        // class 1 1500 B, whatever their packet sizes (Shreedhar & Varghese 1995)
        for packets in [7, 100, 1001, 3001] {
            let sent = class_shares(ClassScheduler::Wrr, Some(vec![3, 1]), packets);
            let total = (sent[0] + sent[1]) as f64;
            let off = sent[0] as f64 - 0.75 * total;
            assert!(off.abs() <= 1500.0, "{packets} packets: {sent:?}: class 0 {off} B from 75 %");
        }
        // unset weights: equal shares
        let sent = class_shares(ClassScheduler::Wrr, None, 1001);
        assert!((sent[0] as f64 - sent[1] as f64).abs() <= 1500.0, "{sent:?}");
    }

    #[test]
    fn strict_priority_from_the_scenario_starves_the_low_class_while_class_0_is_backlogged() {
        let sent = class_shares(ClassScheduler::Sp, None, 3001);
        assert_eq!(sent, [3001 * 1500, 0]);
    }

    /// (incast goodput, victim goodput) in Mbps: 4 servers for 2 s beside a victim bulk flow.
    fn with_victim(topology: TopologyKind, pause: bool) -> (f64, f64) {
        let duration_ps = Some(2 * PS_PER_S);
        let spec = ScenarioSpec { servers: 4, topology, pause, victim: true, duration_ps, ..ScenarioSpec::default() };
        let r = crate::simulate(&spec.validate().unwrap());
        (r.goodput_mbps, r.victim_goodput_mbps.unwrap())
    }

    #[test]
    fn pause_stops_a_victim_that_shares_the_paused_trunk_but_not_one_on_its_own_ingress() {
        // FAST'08 §5.2: "pause frames pause all traffic entering an interface, regardless of
        // whether that traffic is causing congestion". On one switch the victim's ingress
        // (its own NIC) never fills, so PAUSE leaves it alone and helps the incast; across
        // two switches the client's switch pauses the trunk, and the victim's data, bound
        // for another port, stops with the far servers'. Nothing here names the victim:
        // the blocking comes from the ingress accounting. Measured: star 264 -> 952 Mbps of
        // incast goodput, victim 973 both ways; two switches, victim 910 -> 230 Mbps.
        let (incast_off, victim_off) = with_victim(TopologyKind::Star, false);
        let (incast_on, victim_on) = with_victim(TopologyKind::Star, true);
        assert!(incast_on > 3.0 * incast_off, "{incast_off} -> {incast_on}");
        // the victim's path is disjoint from every paused ingress: exactly the same goodput
        assert_eq!(victim_on, victim_off);
        let (_, victim_off) = with_victim(TopologyKind::TwoSwitch, false);
        let (_, victim_on) = with_victim(TopologyKind::TwoSwitch, true);
        // margin: half, where the measurement gives a quarter
        assert!(victim_on < 0.5 * victim_off, "{victim_off} -> {victim_on}");
        // on a leaf-spine (2 leaves, 1 spine) the client's leaf pauses the spine's port down
        // to it, which carries the far servers' data and the victim's (sent from the last
        // leaf): measured 956 -> 267 Mbps
        let (_, victim_off) = with_victim(TopologyKind::LeafSpine, false);
        let (_, victim_on) = with_victim(TopologyKind::LeafSpine, true);
        assert!(victim_on < 0.5 * victim_off, "{victim_off} -> {victim_on}");
    }

    /// Drops at leaf 1's uplink, at the spine's port down to leaf 0, and at the client's
    /// port: 16 servers on 2 leaves under 1 spine for 2 s.
    fn over_one_uplink(oversubscription: f64) -> [u64; 3] {
        let (servers, topology, leaves, spines) = (16, TopologyKind::LeafSpine, Some(2), Some(1));
        let (oversubscription, duration_ps) = (Some(oversubscription), Some(2 * PS_PER_S));
        let shape = ScenarioSpec { topology, leaves, spines, oversubscription, ..Default::default() };
        let spec = ScenarioSpec { servers, duration_ps, ..shape };
        let sc = spec.validate().unwrap();
        let mut w = World::new(&sc);
        w.run();
        let (up, down) = (w.topo.route(1, servers), w.topo.route(2, servers));
        [w.ports[up as usize].drops, w.ports[down as usize].drops, w.to_client().drops]
    }

    #[test]
    fn an_oversubscribed_uplink_becomes_a_second_incast_point() {
        // Expected before measuring: 8 servers per leaf. At full bisection (1:1) leaf 1's
        // uplink runs at 8 Gbps, the sum of its 8 host ports: packets arriving together from
        // them wait at most 7 behind one another (~10 KB, under the 32 KiB buffer), so it
        // never drops, and all the incast's loss is at the client's port as on a star. At
        // 8:1 it runs at 1 Gbps: the 8 far servers' synchronized windows meet there as on a
        // star port of 8 servers (FAST'08 Fig. 2 collapses by then), so it drops too and
        // the far servers time out there. Either way the spine's port down to leaf 0 never
        // drops: its one ingress for this traffic, the uplink, runs at its own rate.
        let full = over_one_uplink(1.0);
        assert_eq!((full[0], full[1]), (0, 0));
        assert!(full[2] > 0, "{full:?}");
        let over = over_one_uplink(8.0);
        assert!(over[0] > 0 && over[1] == 0, "{over:?}");
        // Measured (not asserted, it goes either way with the phase of the windows): the
        // uplink drops 267 packets and paces the far half into the client's port, whose
        // drops fall from 1411 to 529; goodput 90 -> 66 Mbps.
    }

    /// The victim's goodput in Mbps beside 4 servers for 2 s across two switches with
    /// PAUSE, the victim in QoS class 1 of 2 (64 KiB ports: 32 KiB per class), under PFC
    /// or 802.3x.
    fn victim_in_class_1(pfc: bool) -> f64 {
        let duration_ps = Some(2 * PS_PER_S);
        let (topology, pause, victim, qos_classes, victim_class) = (TopologyKind::TwoSwitch, true, true, 2, 1);
        let spec = ScenarioSpec {
            servers: 4,
            topology,
            pause,
            pfc,
            victim,
            qos_classes,
            victim_class,
            buffer_bytes: 64 * 1024,
            duration_ps,
            ..ScenarioSpec::default()
        };
        crate::simulate(&spec.validate().unwrap()).victim_goodput_mbps.unwrap()
    }

    #[test]
    fn pfc_lets_a_victim_in_another_class_cross_the_paused_trunk_where_802_3x_stops_it() {
        // 802.3x pauses the whole trunk, class 1 with class 0: the head-of-line blocking
        // comes from the pause, not from the victim's class. 802.1Qbb pauses class 0 only,
        // and the victim takes what the far servers leave of the trunk. Measured: 16 -> 394
        // Mbps. Margins: a quarter of the link under 802.3x, 3x under PFC (fast08-fig14's)
        let (paused, pfc) = (victim_in_class_1(false), victim_in_class_1(true));
        assert!(paused < 250.0, "802.3x: {paused}");
        assert!(pfc >= 3.0 * paused, "802.3x {paused} -> PFC {pfc}");
    }

    #[test]
    fn two_clients_of_one_server_share_its_link_evenly() {
        // One server, two clients: both connections leave by the server's NIC, each client
        // has its own switch port, so nothing drops and the NIC is the bottleneck. Its
        // payload rate is 1 Gbps x 1460 / 1500 = 973.33 Mbps; the two flows, both capped
        // by the same 20-packet window and served in FIFO order, get half each. The NIC
        // idles only at the start (the requests' one-way trip): within 0.1 %.
        let spec = ScenarioSpec { servers: 1, clients: 2, duration_ps: Some(PS_PER_S), ..ScenarioSpec::default() };
        let r = crate::simulate(&spec.validate().unwrap());
        let cap = 1000.0 * 1460.0 / 1500.0;
        assert_eq!(r.drops, 0);
        assert!(r.goodput_mbps <= cap && r.goodput_mbps > 0.999 * cap, "{}", r.goodput_mbps);
        let (least, most) = (r.client_goodput_min_mbps.unwrap(), r.client_goodput_max_mbps.unwrap());
        // the two clients differ by at most the block one of them has half read: 1 ms of
        // one flow's share at most over the second (measured: 0.03 Mbps)
        assert!((most - least) < 0.001 * cap / 2.0 && (least + most - r.goodput_mbps).abs() < 1e-6, "{least} {most}");
        assert_eq!(r.bytes_sent, r.bytes_delivered + r.bytes_dropped + r.bytes_in_flight);
        // one client alone on the same server: the NIC idles a request round trip per block
        let alone = ScenarioSpec { clients: 1, ..spec };
        assert!(crate::simulate(&alone.validate().unwrap()).goodput_mbps < 0.96 * cap);
    }

    #[test]
    fn each_client_reads_its_own_blocks_and_the_run_ends_when_the_last_is_read() {
        // blocks mode: every client reads 3 blocks from every server; flows c * 4 + i
        let spec = ScenarioSpec { servers: 4, clients: 3, blocks: Some(3), ..ScenarioSpec::default() };
        let mut w = World::new(&spec.validate().unwrap());
        w.run();
        assert_eq!(w.clients.iter().map(|c| c.blocks_done).collect::<Vec<_>>(), vec![3, 3, 3]);
        assert_eq!(w.client_app_bytes(), vec![3 * 4 * 256 * 1024; 3]);
        assert_eq!((w.ends[5], w.ends[11]), ((1, 5), (3, 6)), "server 1 -> client 1, server 3 -> client 2");
        assert_eq!(w.data_bytes_in_flight(), 0);
    }

    #[test]
    fn a_request_dropped_on_a_crowded_trunk_is_sent_again_and_its_block_completes() {
        // 8 clients ask 16 far servers at once over one trunk holding 4 packets: requests
        // drop there; each comes back one RTOmin (1 ms) later and every block completes
        let spec = ScenarioSpec {
            servers: 32,
            clients: 8,
            topology: TopologyKind::TwoSwitch,
            buffer_packets: Some(4),
            sru_bytes: Some(4096),
            rto_min_ps: Some(crate::time::PS_PER_MS),
            blocks: Some(3),
            ..ScenarioSpec::default()
        };
        let mut w = World::new(&spec.validate().unwrap());
        w.run();
        assert!(w.counters.requests_dropped > 0);
        assert_eq!(w.blocks_done(), 8 * 3);
        assert_eq!(w.counters.app_bytes, 8 * 3 * 32 * 4096);
    }

    /// One get from node 0 of a 4-node star at time 0, replies of one full segment; when
    /// it completes (latency) with read quorum `q`.
    fn one_get_latency(q: u32) -> Time {
        let workload = Workload::Riak;
        let spec = ScenarioSpec { servers: 4, workload, read_quorum: q, reply_bytes: 1460, ..ScenarioSpec::default() };
        let mut w = World::new(&spec.validate().unwrap());
        w.issue_get(0); // (no start_gets: this get alone; it schedules node 0's next)
        w.run_events(Time(500 * PS_PER_US));
        let g = w.riak_gets().unwrap();
        assert_eq!((g.issued, g.completed), (1, 1));
        assert_eq!(g.node_bytes_received, vec![3 * 1460, 0, 0, 0], "every reply arrives, quorum or not");
        assert_eq!(g.gets_held(), 0, "all three replies arrived: the get is retired");
        Time(g.latencies.max().unwrap()) // the one sample: exact
    }

    #[test]
    fn a_riak_get_completes_when_its_quorum_th_reply_has_arrived() {
        // 1 Gbps, 25 us links. Node 0's three 64 B requests leave its NIC back to back
        // (0.512 us each) and reach replica k at 50.512 + 0.512 (k + 1) us. Each writes one
        // 1500 B segment (12 us): at the switch 37 us later, 88.024, 88.536 and 89.048 us.
        // Node 0's port sends them one after another: they land 12 + 25 us after each
        // starts, at 125.024, 137.024 and 149.024 us. The get completes at its q-th.
        let us = |x: f64| Time((x * PS_PER_US as f64).round() as u64);
        assert_eq!(one_get_latency(1), us(125.024));
        assert_eq!(one_get_latency(2), us(137.024), "Riak's default R = 2: the second reply");
        assert_eq!(one_get_latency(3), us(149.024));
    }

    #[test]
    fn riak_nodes_reach_each_other_on_one_connection_per_ordered_pair() {
        // 5 nodes, many gets: every flow runs from a replica to another node, and no
        // ordered pair has two
        let spec = ScenarioSpec {
            servers: 5,
            workload: Workload::Riak,
            get_rate: 500.0,
            reply_bytes: 5000,
            duration_ps: Some(PS_PER_S / 5),
            ..ScenarioSpec::default()
        };
        let mut w = World::new(&spec.validate().unwrap());
        w.run();
        let pairs: std::collections::BTreeSet<_> = w.ends.iter().copied().collect();
        assert_eq!(pairs.len(), w.ends.len());
        assert!(w.ends.iter().all(|&(a, b)| a != b && a < 5 && b < 5));
        assert_eq!(w.ends.len(), 20, "500 gets/s for 0.2 s use all 5 x 4 pairs");
        let g = w.riak_gets().unwrap();
        assert!(g.completed > 0 && g.completed <= g.issued);
        // (app_bytes and node_bytes_received grow from one value: compare with the replies)
        assert!(g.reply_bytes_delivered <= w.counters.app_bytes && w.counters.app_bytes <= g.reply_bytes_written);
    }
}

#[cfg(test)]
mod resent_request_tests {
    use super::*;
    use crate::scenario::ScenarioSpec;
    use crate::time::{PS_PER_MS, PS_PER_US};

    #[test]
    fn a_dropped_request_is_sent_again_with_the_ack_window_and_ts_echo_of_then() {
        // flow 0's client sends a request carrying ACK 1, TS echo 0; an RTOmin later (the
        // drop path's NicEnter) it has received 3000 B stamped at 150 us: the resent
        // request carries those, as any segment TCP sends then would (RFC 7323 §4.3)
        let spec = ScenarioSpec { servers: 2, timestamps: true, ..ScenarioSpec::default() };
        let mut w = World::new(&spec.validate().unwrap());
        let fl = &w.flows[0];
        let mut pkt = Packet::new(0, Kind::Request, 64, REQUEST_PAYLOAD_BYTES, 1000, fl.receiver.ack_number());
        (pkt.conn, pkt.ts, pkt.wnd) = (fl.conn, fl.receiver.ts_echo(), 0);
        let id = w.pool.alloc(pkt);
        let now = Time(200 * PS_PER_MS);
        let r = &mut w.flows[0].receiver;
        r.on_segment(now, 1, 1500);
        r.note_timestamp(1, Time(150 * PS_PER_US));
        r.on_ack_sent(); // the ACK of the first segment went out
        r.on_segment(now, 1501, 1500);
        assert_eq!((w.pool.get(id).ack, w.pool.get(id).ts), (1, Time::ZERO));
        w.refresh_request(id);
        let p = w.pool.get(id);
        assert_eq!((p.ack, p.ts), (3001, Time(150 * PS_PER_US)));
        assert_eq!(p.wnd as u64, w.flows[0].receiver.window.min(u32::MAX as u64), "set, not left at 0");
    }

    #[test]
    fn the_recorder_covers_every_flow_with_several_clients_and_riak_connections() {
        // flows beyond the servers' count: client 1's (c * servers + i) and Riak's, opened
        // as gets need them; the per-event trace and a traced late flow must cover them all
        let duration_ps = Some(PS_PER_S / 50);
        let two_clients = ScenarioSpec { servers: 4, clients: 2, duration_ps, ..ScenarioSpec::default() };
        let riak = ScenarioSpec {
            servers: 5,
            workload: Workload::Riak,
            get_rate: 500.0,
            duration_ps: Some(PS_PER_S / 5),
            ..ScenarioSpec::default()
        };
        for (spec, late) in [(two_clients, 7), (riak, 19)] {
            let (trace_flows, capture_limit) = (vec![late], 1 << 20);
            let opts = RecordOptions { events: true, trace_flows, capture_limit, ..Default::default() };
            let mut w = World::with_records(&spec.validate().unwrap(), &opts);
            w.run();
            let flows = w.ends.len();
            assert!(flows > late as usize, "flow {late} exists ({flows} flows)");
            let rec = w.take_records();
            assert_eq!(rec.ends.len(), flows);
            let cwnd_flows: std::collections::BTreeSet<_> =
                rec.events.iter().filter(|e| e.kind == EventKind::Cwnd).map(|e| e.flow).collect();
            assert_eq!(cwnd_flows.len(), flows, "every flow's first sender state is reported");
            assert!(rec.trace.iter().any(|r| r.flow == late) && rec.trace.iter().all(|r| r.flow == late));
            // the mirror of the watched host's port: what other receivers send never crosses it
            let watched = if spec.workload == Workload::Riak { 0 } else { 4 };
            let mut sent = rec.capture.iter().filter(|c| !c.packet.kind.to_client());
            assert!(sent.clone().count() > 0 && sent.all(|c| rec.ends[c.packet.flow as usize].1 == watched));
        }
    }
}
