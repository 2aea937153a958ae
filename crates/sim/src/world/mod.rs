//! The simulated world: the event loop, and the dispatch of each event to the part that
//! handles it. Everything else lives in the parts:
//!
//! - the fabric (`net::fabric`): ports, links, switches, routes, PAUSE and PFC;
//! - the connections (`host`): every flow's TCP sender and receiver, its timers, its NICs;
//! - the applications (`app`): synchronized reads (FAST'08 §3.1) with their schedules and
//!   ICTCP, Riak gets, a background bulk flow, UDP background.
//!
//! A packet crosses them in one direction at a time: an application's action makes a
//! connection send; the segment enters its host's NIC and crosses the fabric, one event per
//! hop (its arrival at the far end of each link, scheduled when its transmission starts, and
//! a "link free" event where it waited); the fabric hands it to the host at the far end
//! ([`Event::ArriveHost`]), whose end of the connection takes it and says what it means
//! ([`Arrival`]); the world tells the flow's application, and carries out what it decides
//! ([`Action`]). A packet a switch drops comes back to the world, which tells the
//! connection or application whose it was. The world itself keeps only the loop, the stop
//! condition and the drain at the end of a blocks run.
//!
//! On the star (FAST'08 Fig. 1): server NIC (unbounded host queue) -> link -> switch port
//! towards the client (the shallow drop-tail buffer where incast happens) -> link ->
//! client; ACKs, SYNs and requests back the other way. A round trip crosses four links, so
//! the base RTT is 4 x link delay plus serialization.

#[cfg(test)]
mod harness;
mod plan;
mod steady;
#[cfg(test)]
mod tests;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::app::background::Background;
use crate::app::bulk::{Bulk, BulkFlow, Pace};
use crate::app::erlang_dist::ErlangDist;
use crate::app::flows::{FlowSet, OneShot};
use crate::app::riak::{ReplySizes, Riak};
use crate::app::sync_read::{SyncReadConfig, SyncReads, Think};
use crate::app::udp::UdpBackground;
use crate::app::{Action, Actions, App, Apps};
use crate::ctx::Ctx;
use crate::event::{Event, EventQueue, FlowId, PktId};
use crate::events::AppTimer;
use crate::host::{Arrival, ConnCounters, Conns};
use crate::net::fabric::HostLayout;
use crate::net::{Fabric, HostId, OutputPort};
use crate::packet::{Kind, PacketPool};
use crate::port_util::PortUtil;
use crate::scenario::{Mitigation, RiakTransport, Scenario, StopAt, Workload};
use crate::tcp::ictcp::Ictcp;
use plan::Plan;
pub use steady::Steady;
use crate::time::{serialization_time, Time, PS_PER_S};
use crate::trace::{RecordOptions, Recorder};

pub use crate::host::REQUEST_PAYLOAD_BYTES;

/// How often a world checks whether the process asked it to stop (a relaxed atomic load
/// every 4096 events: well under a millisecond apart, free on the hot path).
pub const CANCEL_CHECK_EVENTS: u64 = 4096;

/// Everything that exists in one simulation.
pub struct World {
    cx: Ctx,
    net: Fabric,
    conns: Conns,
    apps: Apps,
    stop: StopAt,
    /// Blocks mode: the last block is done; waiting for the last ACKs.
    draining: bool,
    /// Blocks mode: measured flows that still have unacknowledged data while draining.
    flows_unacked: usize,
    /// When the measurement ended (end of the duration, or of the last block).
    pub measured_until: Time,
    /// The steady-state window's start (`measure_from_ps`), and what the counters held then.
    measure_from: Option<Time>,
    steady: Option<Steady>,
    /// Each measured flow's progress when the window opened (`steady::idle_flows`).
    steady_progress: steady::Progress,
    /// What the application being called asks for (carried out after the call).
    actions: Actions,
    progress: Option<std::sync::Arc<crate::progress::RunProgress>>,
    /// Every part is lean (`Fabric::is_plain` with one switch, `Conns::is_lean`,
    /// `Apps::is_lean`): the event loop runs a copy of itself compiled with the tests of the
    /// features it lacks folded away (`LEAN` in `run_events_as`). Derived from what the parts
    /// hold, so a new feature that forgets its part's gate is taken down the full path.
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
        let mut rng = Pcg64::seed_from_u64(s.seed);
        let plan = Plan::of(sc, &mut rng);
        let client_host = n as HostId;
        let layout = HostLayout { servers: n as u32, clients: plan.clients, bulk_pair: s.victim, background: s.background_hosts, watched: plan.watched };
        let mut net = Fabric::new(sc, &layout, false);
        let mut recorder = Recorder::new(opts);
        recorder.watched_nic = net.topology().nic(plan.watched);
        // (a refused interval allocates nothing: `crate::record` returns the refusal)
        let sampled = opts.port_util_interval.filter(|&i| crate::port_util::check(sc, net.port_count(), i).is_ok());
        if let Some(interval) = sampled {
            let cap = opts.port_util_cap_bytes.unwrap_or(crate::port_util::MAX_BYTES);
            recorder.port_util = Some(net.port_util(sc, interval, cap));
            recorder.watch_ports = true;
        }
        net.watch(recorder.watch_ports);
        // the farthest ahead a packet event is scheduled: the largest packet's serialization
        // and propagation on the slowest link (the wheel's span; `event.rs`)
        let largest = (s.mss_bytes + s.header_bytes).max(s.udp_packet_bytes) as u64;
        let horizon = net.topology().ports.iter().map(|p| p.delay + serialization_time(largest, p.rate_bps)).max();
        let mut cx = Ctx {
            now: Time::ZERO,
            queue: EventQueue::with_horizon(4 * n + 64, s.tie_break, s.seed, horizon.unwrap_or(Time::ZERO)),
            pool: PacketPool::default(),
            rng,
            recorder,
            events: 0,
        };
        let mut conns = Conns::new(sc, net.topology().hosts as usize);
        // the applications, in the order they start: the UDP background's sources, then the
        // workload (reads, gets or one-shot flows), then the bulk flow, then the background
        let clients = plan.clients;
        let udp = s.udp_fraction > 0.0 && s.workload == Workload::SyncRead;
        let workload_app = udp as u8;
        let mut list = Vec::with_capacity(4);
        if udp {
            let per_server_bps = s.rate_bps as f64 * s.udp_fraction / n as f64;
            let interval = Time((s.udp_packet_bytes as f64 * 8.0 / per_server_bps * PS_PER_S as f64) as u64);
            // one source per server, towards the first client (on its flow's path)
            list.push(App::Udp(UdpBackground::new((0..n as FlowId).collect(), interval, s.udp_packet_bytes)));
        }
        match s.workload {
            Workload::SyncRead => {
                // one connection per (server, client): every server holds a stripe of every
                // client's blocks
                for c in 0..clients {
                    for i in 0..n as HostId {
                        conns.add(&mut cx, &mut net, i, client_host + c, 0, true, workload_app);
                    }
                }
                list.push(App::SyncRead(Self::sync_reads(sc)));
            }
            Workload::Riak => {
                let sizes = ReplySizes::new(s.reply_size_dist, s.reply_bytes);
                list.push(match s.riak_transport {
                    RiakTransport::PerPair => App::Riak(Riak::new(n, s.get_rate, s.replicas, s.read_quorum, sizes)),
                    RiakTransport::ErlangDist => App::RiakDist(ErlangDist::new(
                        n,
                        s.get_rate,
                        s.replicas,
                        s.read_quorum,
                        sizes,
                        s.dist_buf_busy_limit_bytes,
                    )),
                });
            }
            Workload::Incast | Workload::Shuffle | Workload::Permutation => {
                let first = conns.len() as FlowId;
                // each incast sender opens `flows_per_sender` connections (1: one flow per pair)
                let copies = s.flows_per_sender as usize;
                let flows = plan
                    .pairs
                    .iter()
                    .enumerate()
                    .flat_map(|(k, pair)| std::iter::repeat_n((k, pair), copies))
                    .map(|(k, &(src, dst, group))| {
                        let flow = conns.add(&mut cx, &mut net, src, dst, 0, true, workload_app);
                        let late = if s.start_spread_ps > 0 { cx.rng.random_range(0..s.start_spread_ps) } else { 0 };
                        // an incast's k-th sender returns its part (a fixed block's share, or the SRU)
                        let part = sc.per_server_bytes[k % sc.per_server_bytes.len()];
                        let (bytes, start) = (part, Time(s.start_ps + late));
                        OneShot { flow, src, dst, bytes, start, end: None, group }
                    })
                    .collect();
                let until_done = matches!(sc.stop, StopAt::Blocks(_));
                list.push(App::Flows(FlowSet::new(flows, first, until_done)));
            }
        }
        // the victim's flow and the bulk flows: one application after the workload
        let bulk_app = list.len() as u8;
        let mut bulk = Vec::new();
        if s.victim {
            // the victim's two hosts come after the workload's (`HostLayout::bulk_pair`)
            let (sender, receiver) = (plan.workload_hosts, plan.workload_hosts + 1);
            let flow = conns.add(&mut cx, &mut net, sender, receiver, s.victim_class as u8, false, bulk_app);
            bulk.push(BulkFlow::new(flow, Pace::Backlogged));
        }
        // (validation checked the pairs)
        let pace = Pace::of(s.bulk_rate_bps, s.mss_bytes as u64);
        for (src, dst) in s.bulk_pairs().expect("a validated scenario") {
            bulk.push(BulkFlow::new(conns.add(&mut cx, &mut net, src, dst, 0, false, bulk_app), pace));
        }
        if !bulk.is_empty() {
            let mut b = Bulk::new(bulk);
            b.victim = s.victim;
            list.push(App::Bulk(b));
        }
        if s.background_load > 0.0 {
            let hosts = plan.background_hosts(sc);
            list.push(App::Background(Background::new(hosts, s.background_load, s.rate_bps, s.background_cdf)));
        }
        assert!(list.len() <= AppTimer::MAX as usize, "an application timer names its application in a nibble");
        let apps = Apps::new(list);
        let lean = net.is_plain() && !net.tracks_ingress() && conns.is_lean() && apps.is_lean();
        debug_assert!(!(lean && cx.recorder.events), "the lean loop records no events");
        World {
            progress: opts.progress.clone(),
            cx,
            net,
            conns,
            apps,
            stop: sc.stop,
            draining: false,
            flows_unacked: 0,
            measured_until: Time::ZERO,
            measure_from: s.measure_from_ps.map(Time),
            steady: None,
            steady_progress: Vec::new(),
            actions: Actions::default(),
            lean,
        }
    }

    /// The synchronized reads of a validated scenario (FAST'08 §3.1), with its schedule and
    /// ICTCP when the mitigation asks for them.
    fn sync_reads(sc: &Scenario) -> SyncReads {
        let s = &sc.spec;
        let n = s.servers as usize;
        let base_rtt = Time(4 * sc.link_delay.0) + Time(4 * serialization_time(s.header_bytes as u64, s.rate_bps).0);
        let ictcp = (sc.mitigation == Mitigation::Ictcp).then(|| Ictcp::new(s.rate_bps, s.mss_bytes as u64, base_rtt, n));
        SyncReads::new(SyncReadConfig {
            servers: n,
            clients: s.clients as usize,
            part: sc.per_server_bytes.clone(),
            active_servers: s.active_servers.unwrap_or(s.servers) as usize,
            scheme: sc.mitigation.clone(),
            ictcp,
            handshake: s.handshake,
            think: match &s.think_times_ps {
                Some(times) => Think::Drawn(times.clone()),
                None if s.response_jitter_ps > 0 => Think::Uniform(s.response_jitter_ps),
                None => Think::Immediate,
            },
            blocks: match sc.stop {
                StopAt::Blocks(b) => Some(b),
                StopAt::Time(_) => None,
            },
        })
    }

    /// Run until the scenario's stop condition.
    pub fn run(&mut self) {
        for app in 0..self.apps.list.len() {
            self.call_app(app, |a, cx, conns, out| a.on_start(cx, conns, out));
        }
        let end = match self.stop {
            StopAt::Time(t) => t,
            StopAt::Blocks(_) => Time::NEVER,
        };
        if let Some(from) = self.measure_from {
            // the warm-up, then the window: the run is split, not perturbed (no event is
            // added; the first event past `from` is put back under its own key)
            self.run_events(from);
            self.steady = Some(Steady::of(self, from));
            self.steady_progress = steady::progress(&self.conns);
        }
        if !self.run_events(end) {
            if let StopAt::Time(t) = self.stop {
                self.measured_until = t;
            } else if !self.draining {
                self.measured_until = self.cx.now; // ran out of events (cannot happen in a star)
            }
        }
        if let Some(p) = &self.progress {
            p.record(self.cx.now.max(self.measured_until), self.blocks_done());
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
        while let Some((t, ev)) = self.cx.queue.pop() {
            if t > end {
                self.put_back(ev);
                break;
            }
            self.cx.now = t;
            self.cx.events += 1;
            if self.cx.events % CANCEL_CHECK_EVENTS == 0 {
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

    /// The event just popped lies past the end of this phase of the run: file it again
    /// under its own key (time and tie order), so the next phase pops it exactly where it
    /// was (`run`'s steady-state window splits a run without perturbing it).
    #[cold]
    #[inline(never)]
    fn put_back(&mut self, ev: Event) {
        let key = self.cx.queue.current();
        self.cx.queue.push_key(key, ev);
    }

    /// Hand `ev` to the part whose event it is (`events::Family`).
    #[inline]
    fn dispatch<const LEAN: bool>(&mut self, ev: Event) {
        let (cx, net, conns) = (&mut self.cx, &mut self.net, &mut self.conns);
        match ev {
            // the fabric's
            Event::ArriveSwitch(id) => {
                if let Some(dropped) = net.at_switch::<LEAN>(cx, id) {
                    self.dropped(dropped);
                }
                if !LEAN && self.conns.clocks.is_some() {
                    self.conns.clock_trims(&self.cx, &mut self.net);
                }
            }
            Event::ArriveHost(id) => self.at_host::<LEAN>(id),
            Event::LinkFree(port) => net.on_link_free::<LEAN>(cx, port),
            Event::PauseOn(port) => net.on_pause(cx, port, true),
            Event::PauseOff(port) => net.on_pause(cx, port, false),
            Event::PauseEnd(port) => net.resume(cx, port),
            Event::PfcOn { class, port } => net.on_pfc(cx, port, class as usize, true),
            Event::PfcOff { class, port } => net.on_pfc(cx, port, class as usize, false),
            // the connections'
            Event::NicEnter(id) => conns.nic_enter::<LEAN>(cx, net, id),
            Event::RtoTimer(f) => {
                let sent = conns.on_rto::<LEAN>(cx, net, f);
                self.sent::<LEAN>(f, sent);
            }
            Event::DelAckTimer(f) => conns.on_delack::<LEAN>(cx, net, f),
            Event::SynTimer(f) => conns.on_syn_timer(cx, net, f),
            Event::PullTimer(host) => conns.on_pull_timer(cx, net, host),
            Event::PaceTimer(f) => {
                let sent = conns.on_pace_timer(cx, net, f);
                self.sent::<LEAN>(f, sent);
            }
            // the applications'
            Event::App { timer, arg } => {
                let AppTimer { app, kind } = AppTimer::of(timer);
                self.call_app(app as usize, |a, cx, conns, out| a.on_timer(cx, conns, kind, arg, out));
            }
        }
    }

    /// A packet reached a host: its flow's end there takes it, and the flow's application
    /// hears what it means.
    #[inline(always)]
    fn at_host<const LEAN: bool>(&mut self, id: PktId) {
        let (cx, net, conns) = (&mut self.cx, &mut self.net, &mut self.conns);
        let p = cx.pool.release(id);
        // data, SYN-ACKs and datagrams travel to a flow's receiving end, the rest back
        let arrival = match p.kind {
            Kind::Data => conns.on_data::<LEAN>(cx, net, p),
            Kind::Ack | Kind::Request | Kind::Syn | Kind::Nack | Kind::Pull | Kind::Bounced => {
                conns.at_sending_end::<LEAN>(cx, net, p)
            }
            Kind::SynAck | Kind::Udp | Kind::Header => conns.at_receiving_end::<LEAN>(cx, net, p),
        };
        match arrival {
            Arrival::Nothing => {}
            Arrival::Data { flow, len, from, to } => {
                if !LEAN && self.apps.observes_arrivals() {
                    self.apps.on_arrival(self.cx.now, flow, &self.conns, len);
                }
                if to > from {
                    let app = self.conns.get(flow).app as usize;
                    self.call_app(app, |a, cx, conns, out| a.on_delivered::<LEAN>(cx, conns, flow, from, to, out));
                }
            }
            Arrival::Acked { flow, sent, all_acked } => {
                if self.draining && all_acked {
                    self.flows_unacked -= 1;
                }
                self.sent::<LEAN>(flow, sent);
                if !LEAN && self.apps.follows_acks() {
                    let app = self.conns.get(flow).app as usize;
                    self.call_app(app, |a, _, conns, out| a.on_acked(conns, flow, out));
                }
            }
            Arrival::Request { flow, number, sent } => {
                self.sent::<LEAN>(flow, sent);
                let app = self.conns.get(flow).app as usize;
                self.call_app(app, |a, cx, _, out| a.on_request(cx, flow, number, out));
            }
            Arrival::Established(flow) => {
                let app = self.conns.get(flow).app as usize;
                self.call_app(app, |a, _, conns, out| a.on_established(conns, flow, out));
            }
            Arrival::Accepted(flow) => {
                let app = self.conns.get(flow).app as usize;
                self.apps.list[app].on_accepted(flow);
            }
        }
    }

    /// Flow `f`'s sender transmitted (`sent`): an application that follows bytes sent
    /// hears it.
    #[inline(always)]
    fn sent<const LEAN: bool>(&mut self, f: FlowId, sent: bool) {
        if !LEAN && sent && self.apps.follows_sent() {
            let app = self.conns.get(f).app as usize;
            self.call_app(app, |a, _, conns, out| a.on_sent(conns, f, out));
        }
    }

    /// A switch dropped packet `id`: its connection or application hears it.
    fn dropped(&mut self, id: PktId) {
        match self.cx.pool.get(id).kind {
            Kind::Request => self.conns.request_dropped(&mut self.cx, id),
            Kind::Udp => {
                self.cx.pool.release(id);
                self.apps.datagram_dropped();
            }
            _ => {
                let p = self.cx.pool.release(id);
                self.conns.dropped(&p);
            }
        }
    }

    /// Call application `app` and carry out what it asks for.
    #[inline(always)]
    fn call_app(&mut self, app: usize, f: impl FnOnce(&mut App, &mut Ctx, &Conns, &mut Actions)) {
        f(&mut self.apps.list[app], &mut self.cx, &self.conns, &mut self.actions);
        if !self.actions.is_empty() {
            self.carry_out(app as u8);
        }
    }

    /// Carry out application `app`'s actions, in order.
    #[inline(never)]
    fn carry_out(&mut self, app: u8) {
        let mut out = std::mem::take(&mut self.actions);
        for action in out.drain() {
            let (cx, net, conns) = (&mut self.cx, &mut self.net, &mut self.conns);
            match action {
                Action::Dial { src, dst, measured } => {
                    conns.add(cx, net, src, dst, 0, measured, app);
                }
                Action::Connect(f) => conns.connect(cx, net, f),
                Action::Request(f, number) => conns.send_request(cx, net, f, number),
                Action::Window { flow, window, may_update } => conns.set_window(cx, net, flow, window, may_update),
                Action::Write(f, bytes) => {
                    let sent = conns.write::<false>(cx, net, f, bytes);
                    self.sent::<false>(f, sent);
                }
                Action::Close(f, last) => conns.close(cx, net, f, last),
                Action::Begin(f) => conns.clock_begin(cx, f),
                Action::Datagram(f, bytes) => conns.send_datagram(cx, net, f, bytes),
                Action::Timer { at, kind, arg } => {
                    cx.queue.push(at, Event::App { timer: AppTimer { app, kind }.byte(), arg })
                }
                Action::Finished => self.finish(),
            }
        }
        // (an action that called an application again left its own, carried out, behind)
        debug_assert!(self.actions.is_empty());
        self.actions = out;
    }

    /// Every client has read its blocks: the measurement ends now, and the run once the
    /// measured flows' last data is acknowledged.
    fn finish(&mut self) {
        self.measured_until = self.cx.now;
        self.draining = true;
        self.flows_unacked = self.conns.unacked_measured();
    }

    // ---- what the results read -----------------------------------------------------------

    /// What happened in the steady-state window (`measure_from_ps` to the end), once run.
    pub fn steady(&self) -> Option<Steady> {
        self.steady.map(|start| Steady {
            flows_idle: steady::idle_flows(&self.steady_progress, &steady::progress(&self.conns)),
            ..start.until(&Steady::of(self, self.measured_until))
        })
    }

    /// The instant of the last event run.
    pub fn now(&self) -> Time {
        self.cx.now
    }

    /// Events run.
    pub fn events(&self) -> u64 {
        self.cx.events
    }

    /// The fabric.
    pub fn net(&self) -> &Fabric {
        &self.net
    }

    /// The connections.
    pub fn conns(&self) -> &Conns {
        &self.conns
    }

    /// The connections' counters.
    pub fn counters(&self) -> &ConnCounters {
        &self.conns.counters
    }

    /// The applications.
    pub fn apps(&self) -> &Apps {
        &self.apps
    }

    /// Blocks every client has completed.
    pub fn blocks_done(&self) -> u64 {
        self.apps.sync_reads().map_or(0, SyncReads::blocks_done)
    }

    /// The Riak workload's gets, when it runs.
    pub fn riak_gets(&self) -> Option<&crate::app::riak::RiakGets> {
        self.apps.riak_gets()
    }

    /// Payload bytes each client's application received.
    pub fn client_app_bytes(&self) -> Vec<u64> {
        self.apps.sync_reads().map_or(vec![], |r| r.clients.iter().map(|c| c.app_bytes).collect())
    }

    /// The background bulk flow's goodput over the measured time, Mbps, when there is one.
    pub fn victim_goodput_mbps(&self) -> Option<f64> {
        let secs = self.measured_until.as_secs_f64();
        let victim = self.apps.bulk().filter(|b| b.victim).map(|b| b.flows[0].app_bytes);
        victim.map(|bytes| if secs > 0.0 { bytes as f64 * 8.0 / secs / 1e6 } else { 0.0 })
    }

    /// Payload bytes the bulk flows delivered in order, when there are any.
    pub fn bulk_bytes_delivered(&self) -> Option<u64> {
        self.apps.bulk().map(|b| b.flows.iter().map(|f| f.app_bytes).sum())
    }

    /// The measured flows' data payload bytes in packets still queued or on a link.
    pub fn data_bytes_in_flight(&self) -> u64 {
        self.conns.data_bytes_in_flight(&self.cx.pool)
    }

    /// (packets, events) ever held at once: what the run's memory grows with.
    pub fn high_water_marks(&self) -> (usize, usize) {
        (self.cx.pool.capacity(), self.cx.queue.peak())
    }

    /// Ports of the fabric (host NICs and switch ports).
    pub fn port_count(&self) -> usize {
        self.net.port_count()
    }

    /// The switch port towards the client: the shallow buffer where incast happens.
    pub fn to_client(&self) -> &OutputPort {
        self.net.to_client()
    }

    /// Largest occupancy of any switch port, in bytes.
    pub fn max_switch_occupancy(&self) -> u64 {
        self.net.max_switch_occupancy()
    }

    /// What the run recorded (empty unless asked for).
    pub fn take_records(&mut self) -> crate::trace::Records {
        let r = &mut self.cx.recorder;
        if let Some(mut u) = r.port_util.take() {
            u.finish();
            r.records.port_util = Some(u);
        }
        r.records.ends = self.net.ends().to_vec();
        std::mem::take(&mut r.records)
    }

    /// The utilization sampler, while the run holds it.
    pub fn port_util(&self) -> Option<&PortUtil> {
        self.cx.recorder.port_util.as_ref()
    }
}
