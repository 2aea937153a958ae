//! The fabric: every output port (host NICs and switch ports), the topology and routes that
//! join them, ingress tracking, 802.3x PAUSE and 802.1Qbb PFC, ECN marking, shared pools and
//! QoS classes, and the mirror of the watched port.
//!
//! Its interface is small. A host puts a packet on its NIC ([`Fabric::offer`]); the fabric
//! runs its own events (a packet reaching a switch, a link becoming free, PAUSE frames:
//! [`Fabric::at_switch`], [`Fabric::on_link_free`], [`Fabric::on_pause`], [`Fabric::on_pfc`])
//! and hands back a packet delivered to a host as the event [`Event::ArriveHost`], and a
//! packet a switch dropped as the return value of [`Fabric::at_switch`]. It never decides a
//! TCP question: what a drop means for a connection is the caller's.
//!
//! Each port schedules its own work, as htsim's queues do: a packet that starts on a link
//! has its arrival at the far end scheduled then (`net::port`), and a port whose
//! transmission ends while packets wait has its "link free" event at that instant.
//!
//! **Fast path.** A fabric whose ports hold nothing beyond a drop-tail FIFO (no ECN marking,
//! no pool share, no classes), with no PAUSE and nothing watching its ports, is
//! [`Fabric::is_plain`]: offers and link-free events take short paths. The gate is derived
//! from what the ports hold ([`OutputPort::is_plain`]), so a new discipline that forgets it
//! is taken down the featured path, never skipped.

use crate::ctx::Ctx;
use crate::event::{key_time, Event, Key, PktId, PortId};
use crate::net::balance::{Balancer, LoadBalancing};
use crate::net::buffer::SwitchBuffers;
use crate::net::pause::{frame_times, pause_time, Frame, HeldClock, IngressPause, PauseConfig, CONTROL_WIRE_BYTES};
use crate::net::shaper::Shaper;
use crate::net::topology::LeafSpine;
use crate::net::trim::{Offered, Verdict};
use crate::net::{Admission, HostId, Node, Offer, OutputPort, Topology, TopologyKind};
use crate::packet::{Kind, CE, ECT};
use crate::port_util::PortUtil;
use crate::scenario::{Scenario, StopAt};
use crate::trace::EventKind;

/// Where the hosts go: what the applications of a world need of the topology.
#[derive(Clone, Debug)]
pub struct HostLayout {
    /// Servers (or Riak nodes): hosts `0..servers`.
    pub servers: u32,
    /// Clients, after the servers.
    pub clients: u32,
    /// A background bulk flow's two hosts after the clients: its sender on the far switch
    /// (behind the trunk, on the last leaf) and its receiver beside the clients, so its data
    /// shares the far servers' path to the clients' switch but not a client's port.
    pub bulk_pair: bool,
    /// Hosts after those carrying only background flows: on the two switches and the
    /// leaf-spine, round-robin over the switches (the leaves).
    pub background: u32,
    /// The host whose downlink is "the bottleneck" (the port the results and the mirror
    /// watch): the first client, or node 0 of a Riak cluster.
    pub watched: HostId,
}

/// The network of one world.
pub struct Fabric {
    /// Every output port, numbered as `topo` numbers them: host NICs, then switch ports.
    ports: Vec<OutputPort>,
    topo: Topology,
    /// The far end of each port's link is a switch (else a host).
    to_switch: Vec<bool>,
    /// The switch port towards the watched host: the shallow buffer where incast happens.
    bottleneck: PortId,
    /// Per packet id: the port whose link brought it to the switch it is at (its ingress
    /// there: routing and PAUSE read it). Beside the pool, which keeps packets 72 bytes.
    /// Kept only when something reads it (`track_ingress`): on a star without PAUSE every
    /// packet is at switch 0 and no ingress is counted.
    via: Vec<PortId>,
    /// More than one switch, or PAUSE: `via` is kept.
    track_ingress: bool,
    /// 802.3x PAUSE (or PFC) at every switch ingress (`net::pause`), when on.
    pause: Option<IngressPause>,
    /// How long each port (in each class, under PFC) has been held by PAUSE frames, at
    /// `port * classes + class`; empty without PAUSE.
    held: Vec<HeldClock>,
    held_classes: usize,
    /// Each flow's (sender host, receiver host): a packet travelling its flow's forward
    /// direction (data, SYN-ACKs, datagrams) goes to the receiver, the rest to the sender.
    ends: Vec<(HostId, HostId)>,
    /// Each flow's QoS class (`victim_class` for the background flow, else 0).
    class: Vec<u8>,
    /// Each flow's ports at switch 0 towards its receiver and towards its sender: its route
    /// on a star, looked up once (read while `track_ingress` is off: one switch).
    star_egress: Vec<[PortId; 2]>,
    /// Something watches the ports (`Recorder::watch_ports`).
    watched: bool,
    /// Which uplink a packet takes where its route goes up (`net::balance`).
    balance: Balancer,
    /// See the module's "Fast path".
    plain: bool,
    /// The switch ports trim (`net::trim`), and the stream of their coin flips (which of
    /// two packets to trim), apart from every other draw so that trimming shifts none.
    trimming: bool,
    trim_rng: rand_pcg::Pcg64,
    /// The trims since the world last took them, (flow, seq), kept for the time breakdown
    /// of receiver-driven flows (`host::flowtime`); `None`: not kept.
    trims: Option<Vec<(crate::event::FlowId, u64)>>,
    /// A test's rule: a packet about to be offered to a switch port for which it returns
    /// true is dropped there instead (`world::harness`, as ns-3's `TcpGeneralTest` drops
    /// the packets a test names).
    #[cfg(test)]
    pub(crate) drop_rule: Option<Box<dyn FnMut(&crate::packet::Packet, PortId) -> bool>>,
}

impl Fabric {
    /// The fabric of a validated scenario, with hosts placed as `layout` says; `watched`:
    /// the recorder watches the ports.
    pub(crate) fn new(sc: &Scenario, layout: &HostLayout, watched: bool) -> Fabric {
        let s = &sc.spec;
        let (n, clients) = (layout.servers, layout.clients);
        let delay = sc.link_delay;
        let bulk = if layout.bulk_pair { 2 } else { 0 };
        let trunk_bps = sc.fabric.trunk_bps.unwrap_or(s.rate_bps);
        // the extra hosts' switches: the bulk pair's, then the background's round-robin
        let extra_on = |far: u32, near: u32, switches: u32| {
            let pair = [far, near];
            pair[..bulk].iter().copied().chain((0..layout.background).map(|b| b % switches)).collect::<Vec<_>>()
        };
        let topo = match s.topology {
            TopologyKind::Star => Topology::star(n, clients, bulk as u32 + layout.background, s.rate_bps, delay),
            TopologyKind::TwoSwitch => {
                let on = extra_on(1, 0, 2);
                Topology::two_switch(n, clients, &on, s.rate_bps, trunk_bps, delay, sc.fabric.trunk_delay)
            }
            TopologyKind::LeafSpine => {
                let (leaves, spines) = (sc.fabric.leaves, sc.fabric.spines);
                let shape = LeafSpine { servers: n, leaves, spines, clients, extra_on: extra_on(leaves - 1, 0, leaves) };
                Topology::leaf_spine(shape, s.rate_bps, trunk_bps, delay, sc.fabric.trunk_delay)
            }
            TopologyKind::FatTree => {
                Topology::fat_tree(sc.fabric.fat_tree.expect("a validated fat tree"), s.rate_bps, delay)
            }
        };
        // each switch has its own pool (if any); a port takes its switch's share or classes
        let switch_port = |rate_bps, delay, buffers: &SwitchBuffers| {
            if let Some(cfg) = sc.trim {
                // (its data queue is the buffer; validation leaves it no other discipline)
                return OutputPort::unbounded(rate_bps, delay).with_trimming(cfg);
            }
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
        let mut ports = ports;
        if let (Some(rate), Some(burst)) = (s.shaper_rate_bps, s.shaper_burst_bytes) {
            // the switch port towards each client: a shaper gating its link, its queue the
            // buffer (`net::shaper`; the scenario allows no pool, classes or PAUSE with it)
            for client in n..n + clients {
                let sw = topo.far_switch(topo.nic(client)).expect("a client hangs off a switch");
                let port = topo.route(sw, client) as usize;
                let spec = &topo.ports[port];
                let shaper = Shaper::new(rate, burst, s.buffer_bytes);
                ports[port] = OutputPort::unbounded(spec.rate_bps, spec.delay).with_shaper(shaper);
                if let Some(k) = s.ecn_threshold_packets {
                    ports[port].set_ecn_threshold(k);
                }
            }
        }
        let to_switch = (0..topo.ports.len() as PortId).map(|p| topo.far_switch(p).is_some()).collect();
        let client_switch = topo.far_switch(topo.nic(layout.watched)).expect("the client hangs off a switch");
        let bottleneck = topo.route(client_switch, layout.watched);
        let pause = s.pause.then(|| {
            let (xoff_bytes, xon_bytes, quanta) = (s.pause_xoff_bytes, s.pause_xon_bytes, s.pause_quanta as u16);
            let cfg = PauseConfig { xoff_bytes, xon_bytes, quanta };
            match s.pfc {
                true => IngressPause::per_class(cfg, topo.ports.len(), s.qos_classes as usize),
                false => IngressPause::new(cfg, topo.ports.len()),
            }
        });
        let held_classes = if s.pfc { s.qos_classes as usize } else { 1 };
        let held = if s.pause { vec![HeldClock::default(); topo.ports.len() * held_classes] } else { Vec::new() };
        let track_ingress = pause.is_some() || topo.switches > 1;
        let plain = pause.is_none() && !watched && ports.iter().all(OutputPort::is_plain);
        let flows = (n * clients + 1) as usize;
        let balance = Balancer::new(s.load_balancing, s.seed, topo.switches as usize);
        let trim_rng = <rand_pcg::Pcg64 as rand::SeedableRng>::seed_from_u64(s.seed ^ 0x7472_696d);
        Fabric {
            trimming: sc.trim.is_some(),
            trim_rng,
            trims: (sc.trim.is_some() && s.time_breakdown && s.transport.pulls()).then(Vec::new),
            balance,
            ports,
            topo,
            to_switch,
            bottleneck,
            via: Vec::new(),
            track_ingress,
            pause,
            held,
            held_classes,
            ends: Vec::with_capacity(flows),
            class: Vec::with_capacity(flows),
            star_egress: Vec::with_capacity(flows),
            watched,
            plain,
            #[cfg(test)]
            drop_rule: None,
        }
    }

    /// The per-port utilization sampler of this fabric (`port_util`).
    pub(crate) fn port_util(&self, sc: &Scenario, interval: crate::time::Time, cap_bytes: u64) -> PortUtil {
        let duration = match sc.stop {
            StopAt::Time(t) => Some(t),
            StopAt::Blocks(_) => None,
        };
        PortUtil::with_cap(&self.topo, interval, duration, cap_bytes)
    }

    /// A flow from host `src` to host `dst` in QoS class `class` (its id is the next one):
    /// the NICs of its two ends.
    pub(crate) fn add_flow(&mut self, src: HostId, dst: HostId, class: u8) -> (PortId, PortId) {
        self.ends.push((src, dst));
        self.class.push(class);
        self.star_egress.push([self.topo.route(0, dst), self.topo.route(0, src)]);
        (self.topo.nic(src), self.topo.nic(dst))
    }

    /// Offers and link-free events take the short paths (see the module's "Fast path").
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// Nothing reads a packet's ingress: one switch and no PAUSE.
    #[inline]
    pub fn tracks_ingress(&self) -> bool {
        self.track_ingress
    }

    /// Something watches the ports (the recorder's per-event trace or utilization
    /// sampling): every offer and start is reported, off the short paths.
    pub(crate) fn watch(&mut self, on: bool) {
        self.watched = on;
        self.plain = self.pause.is_none() && !on && self.ports.iter().all(OutputPort::is_plain);
    }

    // ---- offers ------------------------------------------------------------------------

    /// Offer packet `id` to `port` now; false if the port dropped it (the caller frees it).
    #[inline]
    pub(crate) fn offer<const LEAN: bool>(&mut self, cx: &mut Ctx, port: PortId, id: PktId) -> bool {
        self.offer_to::<LEAN, false>(cx, port, id) != Offer::Dropped
    }

    /// Offer packet `id` to `port` now: what the port did with it. (The port is borrowed
    /// once: indexing `ports` at every use cost a bounds check and a reload each.)
    /// `HOLD` (a packet arriving at a switch): a packet that would wait as the transmission
    /// ahead of it ends, at this very instant, has that "link free" event run first if it
    /// comes next (a plain port), or leaves it to the caller (`Fabric::at_switch`), which
    /// runs it at once if it comes next.
    #[inline(never)]
    pub(crate) fn offer_to<const LEAN: bool, const HOLD: bool>(
        &mut self,
        cx: &mut Ctx,
        port: PortId,
        id: PktId,
    ) -> Offer {
        if !(LEAN || self.plain) {
            return self.offer_to_featured::<HOLD>(cx, port, id);
        }
        // what `offer_to_featured` does with ECN marks, pools, classes, PAUSE and the
        // port watch off: a FIFO that starts the packet or makes it wait
        let wire = cx.pool.get(id).wire_bytes;
        let p = &self.ports[port as usize];
        let free = p.free_at();
        if HOLD
            && ends_at_this_instant(cx, free)
            && p.waiting_packets() == 0
            && cx.queue.runs_next(free)
            && p.admits(cx.now, wire)
        {
            // The packet would wait alone, and the link-free event that comes next start it
            // (`link_free_now`). That event is run first, here, and the packet offered to
            // the link it left idle: the same tie orders reserved, the same occupancy seen,
            // without the packet passing through the queue. (FAST'08 at one server: every
            // data packet at the switch; 7 % of its time.)
            cx.queue.take_next(free);
            cx.events += 1;
        }
        let now = cx.queue.current();
        let (queue, out) = (&mut cx.queue, &mut self.ports[port as usize]);
        let offer = out.offer(now, id, wire, |end| queue.reserve(end));
        match offer {
            Offer::Started(arrive) => {
                let ev = self.arrival(port, id);
                cx.queue.push(arrive, ev);
            }
            Offer::Waiting { first: true } => {
                let free = self.ports[port as usize].free_at();
                debug_assert!(free > now, "a plain port makes a packet wait only behind a transmission");
                if !(HOLD && ends_at_this_instant(cx, free)) {
                    cx.queue.push_key(free, Event::LinkFree(port));
                }
            }
            Offer::Waiting { first: false } | Offer::Dropped => {}
        }
        offer
    }

    /// [`Fabric::offer_to`] with every feature a port may have.
    #[inline(always)]
    fn offer_to_featured<const HOLD: bool>(&mut self, cx: &mut Ctx, port: PortId, id: PktId) -> Offer {
        if self.trimming && port >= self.topo.hosts {
            return self.offer_trimming::<HOLD>(cx, port, id);
        }
        let p = cx.pool.get(id);
        let (wire, ect) = (p.wire_bytes, p.has(ECT));
        let class = self.class[p.flow as usize] as usize;
        let now = cx.queue.current();
        let queue = &mut cx.queue;
        let out = &mut self.ports[port as usize];
        // RFC 3168 §5: mark rather than drop; the occupancy the packet finds decides
        let mark = ect && out.marks_ce(cx.now);
        // a port without classes (a NIC without PFC) has one FIFO for every class
        let offer = if class == 0 || !out.has_buffer() {
            out.offer(now, id, wire, |end| queue.reserve(end))
        } else {
            out.offer_in_class(now, id, wire, class, |end| queue.reserve(end))
        };
        if mark && offer != Offer::Dropped {
            out.note_ce_mark();
            cx.pool.get_mut(id).ecn |= CE;
        }
        let (free, waiting, control_end) = (out.free_at(), out.waiting_packets(), out.control_end());
        let held = out.held_until(cx.now);
        if self.watched {
            self.watch_offer(cx, port, offer, id);
        }
        match offer {
            Offer::Started(arrive) => {
                let ev = self.arrival(port, id);
                cx.queue.push(arrive, ev);
                if waiting > 0 {
                    // PFC: it started beside waiting packets of paused classes
                    cx.queue.push_key(free, Event::LinkFree(port));
                }
            }
            // (a paused idle port has no transmission to end: its pause's end starts it)
            Offer::Waiting { first: true } if HOLD && ends_at_this_instant(cx, free) => {}
            Offer::Waiting { first: true } if free > now => cx.queue.push_key(free, Event::LinkFree(port)),
            // an idle wire carrying a PAUSE frame: the data waits for its end
            Offer::Waiting { first: true } if control_end > cx.now => {
                cx.queue.push(control_end, Event::LinkFree(port));
            }
            // a free link whose shaper lacks the tokens: it starts when they suffice
            Offer::Waiting { first: true } if held.is_some() => {
                cx.queue.push(held.expect("tested"), Event::LinkFree(port));
            }
            Offer::Waiting { .. } | Offer::Dropped => {}
        }
        offer
    }

    /// [`Fabric::offer_to_featured`] at a trimming switch port (`net::trim`): the port
    /// decides which queue the packet joins, or cuts it (or the data queue's tail) to its
    /// header, which the pool's copy then becomes (`Kind::Header`, the port's trimmed size).
    fn offer_trimming<const HOLD: bool>(&mut self, cx: &mut Ctx, port: PortId, id: PktId) -> Offer {
        let p = cx.pool.get(id);
        let (wire, kind) = (p.wire_bytes, p.kind);
        let offered = match kind {
            Kind::Data => Offered::Data,
            Kind::Udp => Offered::Datagram,
            _ => Offered::Control,
        };
        let returnable = matches!(kind, Kind::Data | Kind::Header);
        let now = cx.queue.current();
        let (queue, out, rng) = (&mut cx.queue, &mut self.ports[port as usize], &mut self.trim_rng);
        let coin = || rand::Rng::random::<bool>(rng);
        let (offer, verdict, victim) = out.offer_trimming(now, id, wire, offered, returnable, coin, |end| queue.reserve(end));
        let trim_bytes = out.trim().expect("a trimming port").cfg.trim_bytes;
        let (free, waiting) = (out.free_at(), out.waiting_packets());
        for cut in [(verdict == Verdict::TrimArrival).then_some(id), victim].into_iter().flatten() {
            let p = cx.pool.get_mut(cut);
            p.kind = Kind::Header;
            p.wire_bytes = trim_bytes;
            if let Some(trims) = &mut self.trims {
                trims.push((p.flow, p.seq));
            }
        }
        if let Some(trims) = self.trims.as_mut().filter(|_| verdict == Verdict::Refuse && kind == Kind::Data) {
            // cut, and its header dropped or returned: the port counts it a trim as well
            let p = cx.pool.get(id);
            trims.push((p.flow, p.seq));
        }
        if self.watched {
            self.watch_offer(cx, port, offer, id);
        }
        match offer {
            Offer::Started(arrive) => {
                let ev = self.arrival(port, id);
                cx.queue.push(arrive, ev);
            }
            Offer::Waiting { first: true } if HOLD && ends_at_this_instant(cx, free) => {}
            Offer::Waiting { first: true } => {
                debug_assert!(waiting == 1 && free > now, "an idle trimming port starts what it admits");
                cx.queue.push_key(free, Event::LinkFree(port));
            }
            Offer::Waiting { .. } | Offer::Dropped => {}
        }
        offer
    }

    /// A trimming port refused header `id` (`Offer::Dropped`) and returns headers to their
    /// sender (NDP §3.1): it goes back from switch `sw` as `Kind::Bounced`, towards its
    /// flow's sender, through that switch's port there. Returns it if that port drops it.
    fn return_to_sender<const LEAN: bool>(&mut self, cx: &mut Ctx, sw: u32, port: PortId, id: PktId) -> Option<PktId> {
        let trim_bytes = self.ports[port as usize].trim().expect("a trimming port").cfg.trim_bytes;
        let p = cx.pool.get_mut(id);
        p.kind = Kind::Bounced;
        p.wire_bytes = trim_bytes;
        let flow = p.flow;
        let src = self.ends[flow as usize].0;
        let back = self.route(sw, src, flow);
        (self.offer_to::<LEAN, false>(cx, back, id) == Offer::Dropped).then_some(id)
    }

    /// The trims noted since the last call, (flow, seq), emptied (the time breakdown's).
    pub(crate) fn take_trims(&mut self) -> Option<std::vec::Drain<'_, (crate::event::FlowId, u64)>> {
        self.trims.as_mut().filter(|t| !t.is_empty()).map(|t| t.drain(..))
    }

    /// The switch ports' trims, headers dropped and headers returned, when they trim.
    pub fn trim_counts(&self) -> Option<(u64, u64, u64)> {
        self.trimming.then(|| {
            self.switch_ports().iter().filter_map(OutputPort::trim).fold((0, 0, 0), |(t, d, b), x| {
                (t + x.trims, d + x.header_drops, b + x.bounces)
            })
        })
    }

    /// The event of packet `id`'s last bit reaching the far end of `port`'s link; a packet
    /// bound for a switch remembers the port it came in by.
    #[inline]
    fn arrival(&mut self, port: PortId, id: PktId) -> Event {
        match self.to_switch[port as usize] {
            true => {
                if self.track_ingress {
                    let i = id as usize;
                    if i >= self.via.len() {
                        self.via.resize(i + 1, 0);
                    }
                    self.via[i] = port;
                }
                Event::ArriveSwitch(id)
            }
            false => Event::ArriveHost(id),
        }
    }

    // ---- what the recorder watches -------------------------------------------------------

    /// What the recorder watches of a packet offered to `port` (`Recorder::watch_ports`).
    #[inline(never)]
    fn watch_offer(&mut self, cx: &mut Ctx, port: PortId, offer: Offer, id: PktId) {
        if cx.recorder.events && port == self.bottleneck {
            self.bottleneck_event(cx, offer, id);
        }
        match offer {
            Offer::Started(_) => self.util_started(cx, port, id),
            Offer::Dropped => {
                let wire = cx.pool.get(id).wire_bytes;
                if cx.recorder.losses {
                    self.note_loss(cx, port, id);
                }
                if let Some(u) = &mut cx.recorder.port_util {
                    u.dropped(port, cx.now, wire);
                }
            }
            Offer::Waiting { .. } => {}
        }
    }

    /// `port` dropped packet `id`: the ground truth records a data packet's loss with the
    /// number of TCP flows whose data waited there (its own included), the instant it was
    /// refused.
    fn note_loss(&self, cx: &mut Ctx, port: PortId, id: PktId) {
        let p = cx.pool.get(id);
        if p.kind != Kind::Data {
            return;
        }
        let (flow, seq, len) = (p.flow, p.seq, p.len);
        let mut flows: Vec<crate::event::FlowId> = self.ports[port as usize]
            .waiting_ids()
            .map(|w| cx.pool.get(w))
            .filter(|q| q.kind == Kind::Data)
            .map(|q| q.flow)
            .chain(std::iter::once(flow))
            .collect();
        flows.sort_unstable();
        flows.dedup();
        cx.recorder.loss(cx.now, port, flow, seq, len, flows.len() as u32);
    }

    /// Packet `id` just started on `port`: the sampler counts it in the interval its last
    /// bit leaves in (the end of the transmission just reserved).
    fn util_started(&mut self, cx: &mut Ctx, port: PortId, id: PktId) {
        let Some(u) = &mut cx.recorder.port_util else { return };
        let p = cx.pool.get(id);
        let end = key_time(self.ports[port as usize].free_at());
        let data = (p.kind == Kind::Data).then_some((p.flow, p.seq, p.seq + p.len as u64));
        u.sent(port, end, p.wire_bytes, data, p.has(CE));
    }

    /// The per-event trace of data packets at the client's port, as ns-3's device queue
    /// reports them: a packet offered to an idle link is enqueued and dequeued at once.
    fn bottleneck_event(&mut self, cx: &mut Ctx, offer: Offer, id: PktId) {
        let p = cx.pool.get(id);
        if p.kind != Kind::Data {
            return;
        }
        let (flow, seq, len) = (p.flow, p.seq, p.len as u64);
        let waiting = self.to_client().waiting_packets() as u64;
        let (t, r) = (cx.now, &mut cx.recorder);
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
    fn watch_next(&mut self, cx: &mut Ctx, port: PortId, id: PktId) {
        if cx.recorder.events && port == self.bottleneck {
            let p = cx.pool.get(id);
            if p.kind == Kind::Data {
                let waiting = self.to_client().waiting_packets() as u64;
                cx.recorder.event(cx.now, EventKind::Deq, p.flow, p.seq, p.len as u64, Some(waiting));
            }
        }
        self.util_started(cx, port, id);
    }

    /// A flow's sender timed out now: the sampler counts it at the port that delivers the
    /// flow's data to its receiver (the receiver's downlink), where the incast that caused
    /// it is seen.
    pub(crate) fn note_timeout(&self, cx: &mut Ctx, flow: crate::event::FlowId) {
        let Some(u) = &mut cx.recorder.port_util else { return };
        let receiver = self.ends[flow as usize].1;
        u.timeout(self.downlink(receiver), cx.now);
    }

    // ---- links -------------------------------------------------------------------------

    /// `port`'s transmission ended and packets wait: the next one starts, unless the port
    /// is paused (then its pause's end starts it).
    pub(crate) fn on_link_free<const LEAN: bool>(&mut self, cx: &mut Ctx, port: PortId) {
        if LEAN || self.plain {
            // what follows with PAUSE, PFC classes and the port watch off
            let (queue, out) = (&mut cx.queue, &mut self.ports[port as usize]);
            if out.free_at() > queue.current() {
                return; // a transmission started since: its own "link free" comes
            }
            let (id, arrive, more) = out.next(cx.now, |end| queue.reserve(end));
            let free = out.free_at();
            let ev = self.arrival(port, id);
            cx.queue.push(arrive, ev);
            if more {
                cx.queue.push_key(free, Event::LinkFree(port));
            }
            return;
        }
        let p = &self.ports[port as usize];
        if p.control_end() > cx.now {
            // a PAUSE frame went out at the frame boundary: the data waits for its end
            return cx.queue.push(p.control_end(), Event::LinkFree(port));
        }
        // a transmission started since (its own "link free" comes), or nothing may start
        if p.free_at() > cx.queue.current() || p.blocked(cx.now) {
            return;
        }
        if let Some(t) = p.held_until(cx.now) {
            // a shaper's bucket lacks the next packet's tokens: look again when it holds them
            return cx.queue.push(t, Event::LinkFree(port));
        }
        let queue = &mut cx.queue;
        let (id, arrive, more) = self.ports[port as usize].next(cx.now, |end| queue.reserve(end));
        if let Some(pause) = &mut self.pause {
            if port >= self.topo.hosts {
                // a switch port: the packet leaves the bytes of the ingress it came in by
                let ingress = self.via[id as usize];
                let p = cx.pool.get(id);
                let class = self.class[p.flow as usize] as usize;
                if pause.dequeued(ingress, class, p.wire_bytes as u64) == Some(Frame::Xon) {
                    self.send_pause_frame(cx, ingress, class, Frame::Xon);
                }
            }
        }
        if self.watched {
            self.watch_next(cx, port, id);
        }
        let ev = self.arrival(port, id);
        cx.queue.push(arrive, ev);
        if more {
            cx.queue.push_key(self.ports[port as usize].free_at(), Event::LinkFree(port));
        }
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
    fn link_free_now<const LEAN: bool>(&mut self, cx: &mut Ctx, key: Key, port: PortId) {
        if !cx.queue.runs_next(key) {
            return cx.queue.push_key(key, Event::LinkFree(port));
        }
        cx.queue.take_next(key);
        cx.events += 1;
        self.on_link_free::<LEAN>(cx, port);
    }

    // ---- switches ------------------------------------------------------------------------

    /// Packet `id` reached a switch: it is forwarded on the port its route gives. Returns
    /// the packet back (not freed) if that port dropped it: what a drop means is the
    /// caller's.
    #[inline(always)]
    pub(crate) fn at_switch<const LEAN: bool>(&mut self, cx: &mut Ctx, id: PktId) -> Option<PktId> {
        let (forward, flow) = {
            let p = cx.pool.get(id);
            (p.kind.to_client(), p.flow)
        };
        // the ingress it came by, and its egress: data, SYN-ACKs and datagrams go to the
        // flow's receiver, the rest to its sender
        let (via, port) = if !LEAN && self.track_ingress {
            let via = self.via[id as usize];
            let sw = self.topo.far_switch(via).expect("a packet arriving at a switch came over a link to it");
            let (src, dst) = self.ends[flow as usize];
            (via, self.route(sw, if forward { dst } else { src }, flow))
        } else {
            // one switch, no PAUSE: nothing reads the ingress, and the route was looked up at build
            (PortId::MAX, self.star_egress[flow as usize][usize::from(!forward)])
        };
        #[cfg(test)]
        if let Some(rule) = &mut self.drop_rule {
            if rule(cx.pool.get(id), port) {
                if cx.recorder.losses {
                    self.note_loss(cx, port, id);
                }
                self.ports[port as usize].drop(cx.pool.get(id).wire_bytes);
                return Some(id);
            }
        }
        let offer = self.offer_to::<LEAN, true>(cx, port, id);
        let admitted = offer != Offer::Dropped;
        if let (false, Some(pause), Offer::Waiting { .. }) = (LEAN, &mut self.pause, offer) {
            let wire = cx.pool.get(id).wire_bytes as u64;
            let time = pause_time(pause.cfg.quanta, self.topo.ports[via as usize].rate_bps);
            let class = self.class[flow as usize] as usize;
            if pause.enqueued(via, class, wire, cx.now, time) == Some(Frame::Xoff) {
                self.send_pause_frame(cx, via, class, Frame::Xoff);
            }
        }
        if forward && port == self.bottleneck {
            // a mirror of the client's port sees everything offered to it (data, SYN-ACKs,
            // background UDP), dropped or not
            cx.recorder.capture(cx.now, cx.pool.get(id), !admitted);
        }
        if !admitted {
            if !LEAN && self.trimming && self.returns(port, cx.pool.get(id).kind) {
                let sw = if self.track_ingress { self.topo.far_switch(via).expect("a switch") } else { 0 };
                return self.return_to_sender::<LEAN>(cx, sw, port, id);
            }
            return Some(id);
        }
        if let Offer::Waiting { first: true } = offer {
            let free = self.ports[port as usize].free_at();
            if ends_at_this_instant(cx, free) {
                self.link_free_now::<LEAN>(cx, free, port); // `offer_to::<_, true>` left it unfiled
            }
        }
        None
    }

    /// `port` returns refused headers to their senders, and a packet of `kind` is one it
    /// returns (data cut to its header, or a header; not one already returned).
    fn returns(&self, port: PortId, kind: Kind) -> bool {
        matches!(kind, Kind::Data | Kind::Header) && self.ports[port as usize].trim().is_some_and(|t| t.returns())
    }

    /// The port switch `sw` forwards a packet of `flow` for host `dst` on: its route, with
    /// the load balancer's choice of uplink.
    #[inline]
    fn route(&mut self, sw: u32, dst: HostId, flow: crate::event::FlowId) -> PortId {
        match self.balance.mode {
            LoadBalancing::Destination => self.topo.route(sw, dst),
            _ => {
                let balance = &mut self.balance;
                self.topo.route_with(sw, dst, |n| balance.pick(sw, flow, n))
            }
        }
    }

    // ---- PAUSE and PFC ---------------------------------------------------------------------

    /// The switch at the far end of `ingress` sends `frame` to `ingress`'s upstream end
    /// (for `class` under PFC): on the reverse link, at the next frame boundary, ahead of
    /// the data waiting there, which waits for it (`net::pause`).
    pub(crate) fn send_pause_frame(&mut self, cx: &mut Ctx, ingress: PortId, class: usize, frame: Frame) {
        let back = self.topo.reverse[ingress as usize];
        let spec = self.topo.ports[back as usize];
        let start = self.ports[back as usize].send_control(cx.queue.current(), CONTROL_WIRE_BYTES);
        let (at, _) = frame_times(start, spec.rate_bps, spec.delay);
        let pfc = self.pause.as_ref().is_some_and(IngressPause::is_per_class);
        let ev = match (frame, pfc) {
            (Frame::Xoff, false) => Event::PauseOn(ingress),
            (Frame::Xon, false) => Event::PauseOff(ingress),
            (Frame::Xoff, true) => Event::PfcOn { class: class as u8, port: ingress },
            (Frame::Xon, true) => Event::PfcOff { class: class as u8, port: ingress },
        };
        cx.queue.push(at, ev);
    }

    /// A PFC frame for `class` reached `port`: XOFF stops that class's queue for the
    /// configured quanta, XON resumes it; the port's other classes go on (802.1Qbb).
    pub(crate) fn on_pfc(&mut self, cx: &mut Ctx, port: PortId, class: usize, xoff: bool) {
        let Some(pause) = &self.pause else { return };
        if xoff {
            let until = cx.now + pause_time(pause.cfg.quanta, self.topo.ports[port as usize].rate_bps);
            self.ports[port as usize].pause_class_until(class, until);
            self.held[port as usize * self.held_classes + class].hold(cx.now, until);
            cx.queue.push(until, Event::PauseEnd(port));
        } else {
            self.ports[port as usize].pause_class_until(class, cx.now);
            self.held[port as usize * self.held_classes + class].hold(cx.now, cx.now);
            self.resume(cx, port);
        }
    }

    /// A PAUSE frame reached `port`: XOFF stops it for the configured quanta, XON resumes it.
    pub(crate) fn on_pause(&mut self, cx: &mut Ctx, port: PortId, xoff: bool) {
        let Some(pause) = &self.pause else { return };
        if xoff {
            let until = cx.now + pause_time(pause.cfg.quanta, self.topo.ports[port as usize].rate_bps);
            self.ports[port as usize].pause_until(until);
            self.held[port as usize].hold(cx.now, until);
            cx.queue.push(until, Event::PauseEnd(port));
        } else {
            self.ports[port as usize].pause_until(cx.now);
            self.held[port as usize].hold(cx.now, cx.now);
            self.resume(cx, port);
        }
    }

    /// How long flow `f`'s sending NIC has held its class, by PAUSE or PFC, up to `now`
    /// (zero without PAUSE).
    pub fn held_through(&self, f: crate::event::FlowId, now: crate::time::Time) -> crate::time::Time {
        if self.held.is_empty() {
            return crate::time::Time::ZERO;
        }
        let nic = self.topo.nic(self.ends[f as usize].0) as usize;
        let class = if self.held_classes > 1 { self.class[f as usize] as usize } else { 0 };
        self.held[nic * self.held_classes + class].through(now)
    }

    /// `port`'s pause may have ended: start its next packet if its link is idle.
    pub(crate) fn resume(&mut self, cx: &mut Ctx, port: PortId) {
        let p = &self.ports[port as usize];
        // a link still transmitting has its "link free" event pending
        if !p.paused(cx.now) && p.waiting_packets() > 0 && p.free_at() < cx.queue.current() {
            self.on_link_free::<false>(cx, port);
        }
    }

    // ---- what the results read -------------------------------------------------------------

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Port `p`.
    pub fn port(&self, p: PortId) -> &OutputPort {
        &self.ports[p as usize]
    }

    /// Each flow's (sender host, receiver host).
    pub fn ends(&self) -> &[(HostId, HostId)] {
        &self.ends
    }

    /// The switch port towards host `h` (its last hop).
    pub fn downlink(&self, h: HostId) -> PortId {
        let sw = self.topo.far_switch(self.topo.nic(h)).expect("every host hangs off a switch");
        self.topo.route(sw, h)
    }

    /// Ports of the fabric (host NICs and switch ports).
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// Every switch port (host NICs come first).
    fn switch_ports(&self) -> &[OutputPort] {
        &self.ports[self.topo.hosts as usize..]
    }

    /// The switch port towards the watched host: the shallow buffer where incast happens.
    pub fn to_client(&self) -> &OutputPort {
        &self.ports[self.bottleneck as usize]
    }

    /// On a fabric of more than one switch, the switch port that dropped most (ties: the
    /// one that held most, then the lowest): where a multi-path incast congests need not be
    /// the receiver's port (routed by destination, a fat tree funnels every sender into one
    /// aggregation downlink above it). `None` on a single switch, where it is the client's.
    pub fn busiest_port(&self) -> Option<PortId> {
        if self.topo.switches < 2 {
            return None;
        }
        let first = self.topo.hosts as PortId;
        (first..self.ports.len() as PortId)
            .max_by_key(|&p| (self.ports[p as usize].drops, self.ports[p as usize].max_occupancy, std::cmp::Reverse(p)))
    }

    /// The watched host's port.
    pub fn bottleneck(&self) -> PortId {
        self.bottleneck
    }

    /// Drops at every switch port.
    pub fn switch_drops(&self) -> u64 {
        self.switch_ports().iter().map(|p| p.drops).sum()
    }

    /// Packets marked CE at the switches (ECN).
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

    /// Take the short paths or not, whatever the ports hold (a test comparing the paths).
    #[cfg(test)]
    pub(crate) fn force_plain(&mut self, plain: bool) {
        self.plain = plain;
    }

    /// The ingress `id` came in by, as a test sets it (a packet injected at a switch).
    #[cfg(test)]
    pub(crate) fn set_ingress(&mut self, id: PktId, via: PortId) {
        if id as usize >= self.via.len() {
            self.via.resize(id as usize + 1, 0);
        }
        self.via[id as usize] = via;
    }
}

/// A transmission whose "done" key is `free` ends at this very instant, after the event
/// being processed: its link-free event is one `offer_to::<_, true>` may leave to its caller.
#[inline(always)]
fn ends_at_this_instant(cx: &Ctx, free: Key) -> bool {
    key_time(free) == cx.now && free > cx.queue.current()
}
