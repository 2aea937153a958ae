//! The simulated world and its event loop: N servers and one client on one
//! output-queued switch (FAST'08 Fig. 1).
//!
//! Path of a data packet: server NIC (unbounded host queue) -> link -> switch port
//! towards the client (the shallow drop-tail buffer where incast happens) -> link ->
//! client. ACKs and requests take the client NIC -> switch port towards server i ->
//! server i. A round trip crosses four links, so the base RTT is 4 x link delay plus
//! serialization. Each packet costs one event per hop: its arrival at the far end.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::app::SyncReadClient;
use crate::event::{Event, EventQueue, FlowId, PktId};
use crate::net::{Enqueue, OutputPort};
use crate::packet::{Kind, Packet, PacketPool, MAX_SACK_BLOCKS};
use crate::scenario::{Scenario, StopAt, TcpVariant};
use crate::tcp::{ReceiverConfig, SenderConfig, Segment, TcpReceiver, TcpSender};
use crate::time::{serialization_time, Time};
use crate::trace::{RecordOptions, Recorder, TraceEvent, TraceRow};

/// Payload of a request packet: a size and a block id, as the testbed's wire header.
pub const REQUEST_PAYLOAD_BYTES: u32 = 24;

/// One server's connection: its sender and the client's receiver.
struct Flow {
    sender: TcpSender,
    receiver: TcpReceiver,
}

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
}

/// Everything that exists in one simulation.
pub struct World {
    pub now: Time,
    queue: EventQueue,
    pool: PacketPool,
    server_nic: Vec<OutputPort>,
    pub to_client: OutputPort,
    client_nic: OutputPort,
    to_server: Vec<OutputPort>,
    flows: Vec<Flow>,
    /// Bytes requested from each server and not yet written to its socket.
    pending_request: Vec<u64>,
    pub client: SyncReadClient,
    rng: Pcg64,
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
    pub(crate) recorder: Recorder,
}

impl World {
    /// Build the world for a validated scenario; connections are already established.
    pub fn new(sc: &Scenario) -> World {
        Self::with_records(sc, &RecordOptions::default())
    }

    /// A world that also records what `opts` asks for.
    pub fn with_records(sc: &Scenario, opts: &RecordOptions) -> World {
        let s = &sc.spec;
        let n = s.servers as usize;
        let delay = Time(s.link_delay_ps);
        let handshake_rtt = Time(4 * s.link_delay_ps) + Time(4 * serialization_time(s.header_bytes as u64, s.rate_bps).0);
        let sender_cfg = SenderConfig {
            variant: s.tcp,
            mss: s.mss_bytes as u64,
            init_cwnd: s.init_cwnd_segments as u64 * s.mss_bytes as u64,
            rwnd: s.rwnd_bytes,
            dupack_threshold: s.dupack_threshold,
            limited_transmit: s.limited_transmit,
            slow_start: s.slow_start,
            slow_start_after_idle: s.slow_start_after_idle,
            rto_min: Time(s.rto_min_ps),
            rto_max: Time(s.rto_max_ps),
            granularity: Time(s.timer_granularity_ps),
            timer_ticks: s.timer_ticks,
            rto_random: s.rto_random,
        };
        let receiver_cfg = ReceiverConfig {
            delayed_ack: (s.delayed_ack_ps > 0).then_some(Time(s.delayed_ack_ps)),
            sack: s.tcp == TcpVariant::Sack,
        };
        let flows = (0..n)
            .map(|i| {
                // each sender draws from its own stream, derived from the run's seed
                let seed = s.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64 + 1);
                let mut sender = TcpSender::with_seed(sender_cfg.clone(), seed);
                // The SYN / SYN-ACK exchange gave the first RTT sample (RFC 6298 §2.2).
                sender.rto.sample(handshake_rtt);
                Flow { sender, receiver: TcpReceiver::new(receiver_cfg.clone()) }
            })
            .collect();
        World {
            now: Time::ZERO,
            queue: EventQueue::with_capacity(4 * n + 64),
            pool: PacketPool::default(),
            server_nic: (0..n).map(|_| OutputPort::unbounded(s.rate_bps, delay)).collect(),
            to_client: OutputPort::new(s.rate_bps, delay, s.buffer_bytes),
            client_nic: OutputPort::unbounded(s.rate_bps, delay),
            to_server: (0..n).map(|_| OutputPort::new(s.rate_bps, delay, s.buffer_bytes)).collect(),
            flows,
            pending_request: vec![0; n],
            client: SyncReadClient::new(sc.per_server_bytes.clone()),
            rng: Pcg64::seed_from_u64(s.seed),
            header: s.header_bytes,
            jitter: s.response_jitter_ps,
            send_jitter: s.send_jitter_ps,
            stop: sc.stop,
            draining: false,
            flows_unacked: 0,
            measured_until: Time::ZERO,
            counters: WorldCounters::default(),
            scratch: Vec::with_capacity(64),
            recorder: Recorder::new(opts, n),
        }
    }

    /// Run until the scenario's stop condition.
    pub fn run(&mut self) {
        self.start_block();
        let end = match self.stop {
            StopAt::Time(t) => t,
            StopAt::Blocks(_) => Time::NEVER,
        };
        while let Some((t, ev)) = self.queue.pop() {
            if t > end {
                break;
            }
            self.now = t;
            self.counters.events += 1;
            self.dispatch(ev);
            if self.draining && self.flows_unacked == 0 {
                return;
            }
        }
        if let StopAt::Time(t) = self.stop {
            self.measured_until = t;
        } else if !self.draining {
            self.measured_until = self.now; // ran out of events (cannot happen in a star)
        }
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::ArriveSwitch(p) => self.at_switch(p),
            Event::ArriveClient(p) => self.at_client(p),
            Event::ArriveServer(p) => self.at_server(p),
            Event::RtoTimer(f) => {
                let mut out = std::mem::take(&mut self.scratch);
                if self.flows[f as usize].sender.on_timer_event(self.now, &mut out) {
                    self.trace(f, TraceEvent::Timeout);
                }
                self.transmit(f, &mut out);
                self.scratch = out;
            }
            Event::DelAckTimer(f) => {
                if self.flows[f as usize].receiver.on_timer_event(self.now) {
                    self.send_ack(f);
                }
                self.schedule_delack(f);
            }
            Event::ServerRespond(f) => self.respond(f),
        }
    }

    fn start_block(&mut self) {
        let now = self.now;
        let requests: Vec<(u32, u64)> = self.client.start_block(now).collect();
        for (flow, bytes) in requests {
            let wire = self.header + REQUEST_PAYLOAD_BYTES;
            // the request is data on the same connection: it carries the cumulative ACK,
            // so nothing is left waiting for the delayed-ACK timer
            let r = &mut self.flows[flow as usize].receiver;
            r.on_ack_sent();
            let pkt = Packet::new(flow, Kind::Request, wire, REQUEST_PAYLOAD_BYTES, bytes, r.ack_number());
            self.send_from_client(pkt);
        }
    }

    fn send_from_client(&mut self, pkt: Packet) {
        self.recorder.capture(self.now, &pkt, false);
        let wire = pkt.wire_bytes;
        let id = self.pool.alloc(pkt);
        match self.client_nic.enqueue(self.now, wire) {
            Enqueue::Arrives(t) => self.queue.push(t, Event::ArriveSwitch(id)),
            Enqueue::Dropped => unreachable!("host queues are unbounded"),
        }
    }

    fn at_switch(&mut self, id: PktId) {
        let (kind, flow, wire, len, seq, after_timeout) = {
            let p = self.pool.get(id);
            (p.kind, p.flow, p.wire_bytes, p.len, p.seq, p.after_timeout)
        };
        let (port, event) = match kind {
            Kind::Data => (&mut self.to_client, Event::ArriveClient(id)),
            Kind::Ack | Kind::Request => (&mut self.to_server[flow as usize], Event::ArriveServer(id)),
        };
        let outcome = port.enqueue(self.now, wire);
        if kind == Kind::Data {
            self.recorder.capture(self.now, self.pool.get(id), matches!(outcome, Enqueue::Dropped));
        }
        match outcome {
            Enqueue::Arrives(t) => self.queue.push(t, event),
            Enqueue::Dropped => {
                self.pool.release(id);
                if kind == Kind::Data {
                    self.counters.data_bytes_dropped += len as u64;
                    if after_timeout && self.flows[flow as usize].receiver.holds(seq, len) {
                        self.counters.spurious_timeouts += 1;
                    }
                } else {
                    // Requests and ACKs share a port with nothing faster than the client's
                    // own link, so this port never fills; a drop here would hang the block.
                    panic!("reverse-path drop: every port runs at one rate in the star topology");
                }
            }
        }
    }

    fn at_client(&mut self, id: PktId) {
        let p = self.pool.release(id);
        debug_assert_eq!(p.kind, Kind::Data);
        self.counters.data_bytes_arrived += p.len as u64;
        let f = p.flow as usize;
        if p.after_timeout && self.flows[f].receiver.holds(p.seq, p.len) {
            self.counters.spurious_timeouts += 1;
        }
        let before = self.flows[f].receiver.rcv_nxt - 1;
        let got = self.flows[f].receiver.on_segment(self.now, p.seq, p.len);
        if got.ack_now {
            self.send_ack(p.flow);
        } else {
            self.schedule_delack(p.flow);
        }
        if got.delivered > 0 {
            self.counters.app_bytes += got.delivered;
            if self.client.on_progress(self.now, p.flow, before, before + got.delivered) {
                self.block_done();
            }
        }
    }

    fn block_done(&mut self) {
        if let StopAt::Blocks(target) = self.stop {
            if self.client.blocks_done >= target {
                self.measured_until = self.now;
                self.draining = true;
                self.flows_unacked = self.flows.iter().filter(|f| !f.sender.all_acked()).count();
                return;
            }
        }
        self.start_block();
    }

    fn send_ack(&mut self, flow: FlowId) {
        let r = &mut self.flows[flow as usize].receiver;
        r.on_ack_sent();
        let mut pkt = Packet::new(flow, Kind::Ack, self.header, 0, 0, r.ack_number());
        let n = r.sack_blocks(&mut pkt.sack);
        pkt.nsack = n as u8;
        // RFC 2018 §3: each block costs 8 bytes of option, plus 2 for the option header
        if n > 0 {
            pkt.wire_bytes += 2 + 8 * n as u32;
        }
        debug_assert!(n <= MAX_SACK_BLOCKS);
        self.send_from_client(pkt);
    }

    fn schedule_delack(&mut self, flow: FlowId) {
        if let Some(t) = self.flows[flow as usize].receiver.take_timer_request() {
            self.queue.push(t, Event::DelAckTimer(flow));
        }
    }

    fn at_server(&mut self, id: PktId) {
        let p = self.pool.release(id);
        match p.kind {
            Kind::Ack => {
                let mut out = std::mem::take(&mut self.scratch);
                let s = &mut self.flows[p.flow as usize].sender;
                let was_unacked = !s.all_acked();
                s.on_ack(self.now, p.ack, p.sack_blocks(), &mut out);
                if self.draining && was_unacked && s.all_acked() {
                    self.flows_unacked -= 1;
                }
                self.trace(p.flow, TraceEvent::Ack);
                self.transmit(p.flow, &mut out);
                self.scratch = out;
            }
            Kind::Request => {
                // its piggybacked ACK first (never a duplicate ACK: it carries data, RFC 5681 §2)
                let s = &mut self.flows[p.flow as usize].sender;
                if p.ack > s.snd_una {
                    let mut out = std::mem::take(&mut self.scratch);
                    s.on_ack(self.now, p.ack, &[], &mut out);
                    self.transmit(p.flow, &mut out);
                    self.scratch = out;
                }
                self.pending_request[p.flow as usize] += p.seq;
                if self.jitter > 0 {
                    let think = self.rng.random_range(0..self.jitter);
                    self.queue.push(self.now + Time(think), Event::ServerRespond(p.flow));
                } else {
                    self.respond(p.flow);
                }
            }
            Kind::Data => unreachable!("servers receive no data"),
        }
    }

    /// The server writes the requested bytes to its socket.
    fn respond(&mut self, flow: FlowId) {
        let bytes = std::mem::take(&mut self.pending_request[flow as usize]);
        let mut out = std::mem::take(&mut self.scratch);
        self.flows[flow as usize].sender.write(self.now, bytes, &mut out);
        self.trace(flow, TraceEvent::Write);
        self.transmit(flow, &mut out);
        self.scratch = out;
    }

    #[inline]
    fn trace(&mut self, flow: FlowId, event: TraceEvent) {
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

    /// What the run recorded (empty unless asked for).
    pub fn take_records(&mut self) -> crate::trace::Records {
        std::mem::take(&mut self.recorder.records)
    }

    /// Put the segments a sender produced on its server's NIC and keep its timer.
    fn transmit(&mut self, flow: FlowId, out: &mut Vec<Segment>) {
        let nic = &mut self.server_nic[flow as usize];
        for seg in out.drain(..) {
            // ns-2's `overhead_`: host timing noise breaks drop-tail phase lock-out
            let enter = if self.send_jitter > 0 { self.now + Time(self.rng.random_range(0..=self.send_jitter)) } else { self.now };
            let wire = self.header + seg.len;
            let mut pkt = Packet::new(flow, Kind::Data, wire, seg.len, seg.seq, 0);
            pkt.after_timeout = seg.after_timeout;
            let id = self.pool.alloc(pkt);
            self.counters.data_bytes_sent += seg.len as u64;
            match nic.enqueue(enter, wire) {
                Enqueue::Arrives(t) => self.queue.push(t, Event::ArriveSwitch(id)),
                Enqueue::Dropped => unreachable!("host queues are unbounded"),
            }
        }
        if let Some(t) = self.flows[flow as usize].sender.take_timer_request() {
            self.queue.push(t, Event::RtoTimer(flow));
        }
    }

    /// Data payload bytes in packets still queued or on a link, counted packet by packet.
    pub fn data_bytes_in_flight(&self) -> u64 {
        self.pool.live_packets().filter(|p| p.kind == Kind::Data).map(|p| p.len as u64).sum()
    }

    /// (packets, events) ever held at once: what the run's memory grows with.
    pub fn high_water_marks(&self) -> (usize, usize) {
        (self.pool.capacity(), self.queue.peak)
    }

    /// Sum of a per-flow sender counter.
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

    /// Drops at every switch port.
    pub fn switch_drops(&self) -> u64 {
        self.to_client.drops + self.to_server.iter().map(|p| p.drops).sum::<u64>()
    }

    /// Packets that crossed one link, all links.
    pub fn packet_hops(&self) -> u64 {
        let ports = self.server_nic.iter().chain(self.to_server.iter());
        ports.map(|p| p.sent_packets).sum::<u64>() + self.to_client.sent_packets + self.client_nic.sent_packets
    }

    /// Largest occupancy of any switch port, and whether any exceeded its buffer.
    pub fn max_switch_occupancy(&self) -> u64 {
        self.to_server.iter().map(|p| p.max_occupancy).max().unwrap_or(0).max(self.to_client.max_occupancy)
    }
}
