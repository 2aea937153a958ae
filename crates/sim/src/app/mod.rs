//! Applications: what the hosts do with their connections. The synchronized-read client of
//! FAST'08 §3.1 with the connection-serialization schedules of Osada et al. and ICTCP as its
//! observer (`sync_read`), the Riak-style gets of Fritchie's blog (`riak`, over one
//! connection per pair of nodes with `erlang_dist`), long-lived bulk flows between chosen
//! hosts (`bulk`) and UDP background traffic (`udp`), with the model that sizes the schedules.
//!
//! An application only decides; the world carries its [`Action`]s out, in order, on the
//! connections (`host`). It hears of its flows through [`App::on_delivered`],
//! [`App::on_request`], [`App::on_established`], [`App::on_accepted`] and [`App::on_sent`],
//! and of its own timers through [`App::on_timer`]; it reads the connections but never
//! changes them. A new workload is one module here and one arm of [`App`].

pub mod background;
pub mod bulk;
pub mod cdf;
pub mod flows;
pub mod erlang_dist;
pub mod latency;
pub mod riak;
pub mod schedule;
pub mod serialization_model;
pub mod sync_read;
pub mod udp;

pub use sync_read::SyncReadClient;

use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::host::Conns;
use crate::net::HostId;
use crate::time::Time;

/// Something an application asks the world to do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Make a connection from `src` to `dst` (its flow id was handed out by
    /// [`Actions::dial`]), counted with the measured flows or not.
    Dial { src: HostId, dst: HostId, measured: bool },
    /// Open a new connection of this flow (a SYN; connections made per block).
    Connect(FlowId),
    /// The flow's receiving end sends a request: bytes asked for, or a request's number.
    Request(FlowId, u64),
    /// The flow's receiving end advertises this window from now on; `may_update`: it still
    /// expects data, so a changed window goes out at once on an open connection.
    Window { flow: FlowId, window: u64, may_update: bool },
    /// The flow's sending end writes this many bytes to its socket.
    Write(FlowId, u64),
    /// The flow's part of the block is done (a per-block connection closes; Riak's, a
    /// reply's, whose connection persists); true: it was the block's last part (the time
    /// breakdown sums the blocks' last parts apart; Riak: the reply that completed its get).
    Close(FlowId, bool),
    /// The flow begins a part now (a one-shot flow's start; the time breakdown's, which a
    /// request or a SYN begins for the synchronized reads).
    Begin(FlowId),
    /// A datagram of this many bytes from the flow's sending host, on its path.
    Datagram(FlowId, u32),
    /// Call [`App::on_timer`] with `kind` and `arg` at `at`.
    Timer { at: Time, kind: u8, arg: u32 },
    /// The measurement is over (every client read its blocks): the world drains and stops.
    Finished,
}

/// The actions of one call, in order.
#[derive(Debug, Default)]
pub struct Actions {
    list: Vec<Action>,
    /// [`Action::Dial`]s in `list`.
    dials: u32,
}

impl Actions {
    /// Ask for `a`.
    #[inline]
    pub fn push(&mut self, a: Action) {
        self.list.push(a);
    }

    /// Ask for a connection from `src` to `dst` while `conns` has the flows it has now: its
    /// flow id (flows are numbered in the order they are made, and the world makes them as
    /// it carries the actions out).
    pub fn dial(&mut self, conns: &Conns, src: HostId, dst: HostId) -> FlowId {
        self.dial_as(conns, src, dst, true)
    }

    /// [`Actions::dial`] for a flow counted with the measured ones or not (a background's).
    pub fn dial_as(&mut self, conns: &Conns, src: HostId, dst: HostId, measured: bool) -> FlowId {
        self.list.push(Action::Dial { src, dst, measured });
        self.dials += 1;
        (conns.len() as u32 + self.dials - 1) as FlowId
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, Action> {
        self.dials = 0;
        self.list.drain(..)
    }
}

/// One application.
pub enum App {
    SyncRead(sync_read::SyncReads),
    Riak(riak::Riak),
    /// Riak over Erlang distribution (`riak_transport = erlang_dist`).
    RiakDist(erlang_dist::ErlangDist),
    Bulk(bulk::Bulk),
    Udp(udp::UdpBackground),
    Flows(flows::FlowSet),
    Background(background::Background),
}

impl App {
    /// The run starts.
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, conns: &Conns, out: &mut Actions) {
        match self {
            App::SyncRead(a) => a.on_start(cx, conns, out),
            App::Riak(a) => a.on_start(cx, out),
            App::RiakDist(a) => a.on_start(cx, out),
            App::Bulk(a) => a.on_start(cx, out),
            App::Udp(a) => a.on_start(cx, out),
            App::Flows(a) => a.on_start(cx, out),
            App::Background(a) => a.on_start(cx, out),
        }
    }

    /// `flow`'s receiving end holds in-order bytes up to stream offset `to` (from `from`).
    #[inline(always)]
    pub(crate) fn on_delivered<const LEAN: bool>(
        &mut self,
        cx: &mut Ctx,
        conns: &Conns,
        flow: FlowId,
        from: u64,
        to: u64,
        out: &mut Actions,
    ) {
        match self {
            App::SyncRead(a) => a.on_delivered::<LEAN>(cx, conns, flow, from, to, out),
            App::Riak(a) => a.on_delivered(cx, conns, flow, from, to, out),
            App::RiakDist(a) => a.on_delivered(cx, conns, flow, from, to, out),
            App::Bulk(a) => a.on_delivered(flow, from, to),
            App::Flows(a) => a.on_delivered(cx, flow, to, out),
            App::Background(a) => a.on_delivered(cx, flow, to),
            App::Udp(_) => {}
        }
    }

    /// A request (bytes asked for, or its number) reached the sending end of `flow`.
    pub(crate) fn on_request(&mut self, cx: &mut Ctx, flow: FlowId, number: u64, out: &mut Actions) {
        match self {
            App::SyncRead(a) => a.on_request(cx, flow, number, out),
            App::Riak(a) => a.on_request(flow, number, out),
            App::RiakDist(_) | App::Bulk(_) | App::Udp(_) | App::Flows(_) | App::Background(_) => {
                unreachable!("nothing sends it requests")
            }
        }
    }

    /// `flow`'s connection is open (its SYN-ACK arrived).
    pub(crate) fn on_established(&mut self, conns: &Conns, flow: FlowId, out: &mut Actions) {
        if let App::SyncRead(a) = self {
            a.on_established(conns, flow, out);
        }
    }

    /// A new connection of `flow` replaced the old one at its sending end.
    pub(crate) fn on_accepted(&mut self, flow: FlowId) {
        if let App::SyncRead(a) = self {
            a.on_accepted(flow);
        }
    }

    /// `flow`'s sender transmitted (called only when [`Apps::follows_sent`]).
    pub(crate) fn on_sent(&mut self, conns: &Conns, flow: FlowId, out: &mut Actions) {
        if let App::SyncRead(a) = self {
            a.on_sent(conns, flow, out);
        }
    }

    /// An ACK reached `flow`'s sending end (called only when [`Apps::follows_acks`]).
    pub(crate) fn on_acked(&mut self, conns: &Conns, flow: FlowId, out: &mut Actions) {
        if let App::RiakDist(a) = self {
            a.on_acked(conns, flow, out);
        }
    }

    /// A timer this application set ([`Action::Timer`]) is due.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, conns: &Conns, kind: u8, arg: u32, out: &mut Actions) {
        match self {
            App::SyncRead(a) => a.on_timer(cx, conns, kind, arg, out),
            App::Riak(a) => a.on_timer(cx, conns, arg, out),
            App::RiakDist(a) => a.on_timer(cx, conns, arg, out),
            App::Udp(a) => a.on_timer(cx, arg, out),
            App::Flows(a) => a.on_timer(arg, out),
            App::Background(a) => a.on_timer(cx, conns, out),
            App::Bulk(a) => a.on_timer(cx, kind, arg, out),
        }
    }
}

/// The applications of a world, in the order they start.
pub struct Apps {
    pub(crate) list: Vec<App>,
    /// Some application follows every data segment's arrival (ICTCP).
    observes_arrivals: bool,
    /// Some application follows what senders transmit (NCCS, OCS counting sent bytes).
    follows_sent: bool,
    /// Some application follows the ACKs its senders get (Erlang distribution's busy ports).
    follows_acks: bool,
    /// Nothing per packet needs the paths a lean world skips.
    lean: bool,
}

impl Apps {
    pub(crate) fn new(list: Vec<App>) -> Apps {
        let reads = list.iter().find_map(|a| match a {
            App::SyncRead(r) => Some(r),
            _ => None,
        });
        let observes_arrivals = reads.is_some_and(|r| r.observes_arrivals());
        let follows_sent = reads.is_some_and(|r| r.follows_sent());
        // Erlang distribution resumes a suspended process when its connection's data is
        // acknowledged
        let follows_acks = list.iter().any(|a| matches!(a, App::RiakDist(_)));
        let follows_delivery = reads.is_some_and(|r| r.follows_delivery());
        // a background makes connections as it runs that are not measured: the lean paths
        // count every connection as measured (`host::Conns::is_lean`)
        let dials_unmeasured = list.iter().any(|a| matches!(a, App::Background(_)));
        let lean = !observes_arrivals && !follows_sent && !follows_delivery && !follows_acks && !dials_unmeasured;
        Apps { list, observes_arrivals, follows_sent, follows_acks, lean }
    }

    /// See [`Apps::new`]'s fields.
    #[inline]
    pub fn observes_arrivals(&self) -> bool {
        self.observes_arrivals
    }

    #[inline]
    pub fn follows_sent(&self) -> bool {
        self.follows_sent
    }

    #[inline]
    pub fn follows_acks(&self) -> bool {
        self.follows_acks
    }

    pub(crate) fn is_lean(&self) -> bool {
        self.lean
    }

    /// A data segment of `len` bytes reached the receiving end of `flow` now.
    pub(crate) fn on_arrival(&mut self, now: Time, flow: FlowId, conns: &Conns, len: u32) {
        if let App::SyncRead(a) = &mut self.list[conns.get(flow).app as usize] {
            a.on_arrival(now, len);
        }
    }

    /// A switch dropped a datagram.
    pub(crate) fn datagram_dropped(&mut self) {
        for a in &mut self.list {
            if let App::Udp(u) = a {
                u.dropped += 1;
            }
        }
    }

    /// The synchronized reads, when they run.
    pub fn sync_reads(&self) -> Option<&sync_read::SyncReads> {
        self.list.iter().find_map(|a| match a {
            App::SyncRead(r) => Some(r),
            _ => None,
        })
    }

    /// The Riak workload's gets, when it runs (over either transport).
    pub fn riak_gets(&self) -> Option<&riak::RiakGets> {
        self.list.iter().find_map(|a| match a {
            App::Riak(r) => Some(&r.gets),
            App::RiakDist(r) => Some(&r.gets),
            _ => None,
        })
    }

    /// Riak over Erlang distribution, when it runs.
    pub fn erlang_dist(&self) -> Option<&erlang_dist::ErlangDist> {
        self.list.iter().find_map(|a| match a {
            App::RiakDist(r) => Some(r),
            _ => None,
        })
    }

    /// The bulk flows, when there are any.
    pub fn bulk(&self) -> Option<&bulk::Bulk> {
        self.list.iter().find_map(|a| match a {
            App::Bulk(b) => Some(b),
            _ => None,
        })
    }

    /// The one-shot flows, when the workload has them.
    pub fn flow_set(&self) -> Option<&flows::FlowSet> {
        self.list.iter().find_map(|a| match a {
            App::Flows(f) => Some(f),
            _ => None,
        })
    }

    /// The Poisson background, when there is one.
    pub fn background(&self) -> Option<&background::Background> {
        self.list.iter().find_map(|a| match a {
            App::Background(b) => Some(b),
            _ => None,
        })
    }

    /// The UDP background, when there is one.
    pub fn udp(&self) -> Option<&udp::UdpBackground> {
        self.list.iter().find_map(|a| match a {
            App::Udp(u) => Some(u),
            _ => None,
        })
    }
}
