//! A world-level test harness, in the manner of smoltcp's `send!`/`recv!` and ns-3's
//! `TcpGeneralTest`: build a small world from a scenario, put packets, writes and timers into
//! it at chosen instants, drop the packets a rule names, run it to an instant, and look at
//! what came out where (ports, connections, the recorder's per-event trace).
//!
//! Everything a test injects is scheduled as an event of the world before it runs, so it
//! takes its place among the world's own events by the tie rule (`event.rs`): an injection
//! at instant t runs after the events scheduled for t before it. A run stops at the first
//! event past its end, which it takes from the queue: one `run_until` per harness (build a
//! fresh one to look at another instant, or read the per-event trace).

use super::World;
use crate::app::sync_read::RESPOND;
use crate::app::App;
use crate::event::{Event, FlowId, PktId, PortId};
use crate::events::AppTimer;
use crate::host::{Conn, ConnCounters};
use crate::net::{Fabric, OutputPort, Topology};
use crate::packet::Packet;
use crate::scenario::ScenarioSpec;
use crate::time::Time;
use crate::trace::{EventKind, EventRow, RecordOptions};

/// A world under test.
pub(crate) struct Harness {
    pub w: World,
}

impl Harness {
    /// The world of `spec` (which must validate).
    pub fn new(spec: ScenarioSpec) -> Harness {
        Self::recording(spec, RecordOptions::default())
    }

    /// The world of `spec`, recording what `opts` asks for.
    pub fn recording(spec: ScenarioSpec, opts: RecordOptions) -> Harness {
        let sc = spec.validate().unwrap_or_else(|e| panic!("the test's scenario: {e}"));
        Harness { w: World::with_records(&sc, &opts) }
    }

    /// The world of `spec` with every event recorded.
    pub fn traced(spec: ScenarioSpec) -> Harness {
        Self::recording(spec, RecordOptions { events: true, ..Default::default() })
    }

    // ---- what a test puts in ------------------------------------------------------------

    /// Schedule `ev` at `at`.
    pub fn at(&mut self, at: Time, ev: Event) -> &mut Self {
        self.w.cx.queue.push(at, ev);
        self
    }

    /// Flow `flow`'s server writes `bytes` at `at`, as if a request for them had arrived
    /// (the synchronized reads' answer).
    pub fn write(&mut self, at: Time, flow: FlowId, bytes: u64) -> &mut Self {
        let app = self.w.conns.get(flow).app;
        match &mut self.w.apps.list[app as usize] {
            App::SyncRead(r) => r.pend(flow, bytes),
            _ => panic!("flow {flow} is not a synchronized read's"),
        }
        let timer = AppTimer { app, kind: RESPOND }.byte();
        self.at(at, Event::App { timer, arg: flow })
    }

    /// `pkt` enters the NIC of its flow's end that sends it (the sender's for data,
    /// SYN-ACKs and datagrams, the receiver's for the rest) at `at`.
    pub fn enter_nic(&mut self, at: Time, pkt: Packet) -> PktId {
        let id = self.w.cx.pool.alloc(pkt);
        self.at(at, Event::NicEnter(id));
        id
    }

    /// `pkt`'s last bit reaches the switch at the far end of `via`'s link at `at`.
    pub fn reach_switch(&mut self, at: Time, via: PortId, pkt: Packet) -> PktId {
        let id = self.w.cx.pool.alloc(pkt);
        self.w.net.set_ingress(id, via);
        self.at(at, Event::ArriveSwitch(id));
        id
    }

    /// `pkt`'s last bit reaches the host of its flow's end it travels to at `at`.
    pub fn reach_host(&mut self, at: Time, pkt: Packet) -> PktId {
        let id = self.w.cx.pool.alloc(pkt);
        self.at(at, Event::ArriveHost(id));
        id
    }

    /// Every packet about to be offered to a switch port for which `rule` returns true is
    /// dropped there (counted as that port's drop).
    pub fn drop_where(&mut self, rule: impl FnMut(&Packet, PortId) -> bool + 'static) -> &mut Self {
        self.w.net.drop_rule = Some(Box::new(rule));
        self
    }

    /// The `n`th packet (from 0) of `flow` whose kind `kind` matches, offered to any
    /// switch port, is dropped there.
    pub fn drop_nth(&mut self, flow: FlowId, kind: crate::packet::Kind, n: usize) -> &mut Self {
        let mut seen = 0;
        self.drop_where(move |p, _| {
            if p.flow != flow || p.kind != kind {
                return false;
            }
            seen += 1;
            seen == n + 1
        })
    }

    // ---- running ------------------------------------------------------------------------

    /// Start the applications (a world built for a test starts nothing by itself: a test
    /// that only injects leaves them idle).
    pub fn start(&mut self) -> &mut Self {
        for app in 0..self.w.apps.list.len() {
            self.w.call_app(app, |a, cx, conns, out| a.on_start(cx, conns, out));
        }
        self
    }

    /// Run the events up to and including `end`.
    pub fn run_until(&mut self, end: Time) -> &mut Self {
        self.w.run_events(end);
        self
    }

    /// Start the applications and run to the scenario's stop.
    pub fn run(&mut self) -> &mut Self {
        self.w.run();
        self
    }

    // ---- what a test reads --------------------------------------------------------------

    pub fn net(&self) -> &Fabric {
        &self.w.net
    }

    pub fn topo(&self) -> &Topology {
        self.w.net.topology()
    }

    pub fn port(&self, p: PortId) -> &OutputPort {
        self.w.net.port(p)
    }

    /// The port of the switch the client hangs off towards host `h`.
    pub fn downlink(&self, h: u32) -> PortId {
        self.w.net.downlink(h)
    }

    pub fn conn(&self, f: FlowId) -> &Conn {
        self.w.conns.get(f)
    }

    pub fn counters(&self) -> &ConnCounters {
        &self.w.conns.counters
    }

    /// The per-event trace rows of `kind`.
    pub fn events(&self, kind: EventKind) -> Vec<EventRow> {
        self.w.cx.recorder.records.events.iter().filter(|e| e.kind == kind).cloned().collect()
    }

    /// (flow, sequence number) of each data packet the client's port dropped.
    pub fn drops_at_client(&self) -> Vec<(FlowId, u64)> {
        self.events(EventKind::Drop).iter().map(|e| (e.flow, e.a)).collect()
    }

    /// The packet `id` as it is now in the pool.
    pub fn packet(&self, id: PktId) -> Packet {
        *self.w.cx.pool.get(id)
    }

    /// The senders' maximum segment size.
    pub fn mss(&self) -> u64 {
        self.w.conns.sender_config().mss
    }
}
