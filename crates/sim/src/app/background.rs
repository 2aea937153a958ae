//! Background flows arriving as a Poisson process, as the fabric studies load a datacenter
//! (DCTCP, SIGCOMM 2010 §4.3; pFabric, SIGCOMM 2013 §5; HPCC, SIGCOMM 2019 §5.1): each
//! flow between two hosts drawn uniformly (the source, then another destination), its size
//! drawn from a published distribution (`app::cdf`), a new connection each, started the
//! moment it arrives. The arrival rate makes the offered load `load` of every host's link:
//! lambda = load x rate x hosts / (8 x mean size) flows per second over the whole fabric
//! (payload bytes; headers and ACKs come on top, as in those papers).
//!
//! The flows are not measured with the workload's (`host::Conn::measured`): their bytes,
//! drops and completion times are their own.

use rand::Rng;
use rand_distr::{Distribution, Exp};

use super::cdf::FlowSizeCdf;
use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::host::Conns;
use crate::net::HostId;
use crate::time::{Time, PS_PER_S};

/// One background flow.
#[derive(Clone, Copy, Debug)]
pub struct BackgroundFlow {
    pub flow: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub bytes: u64,
    pub start: Time,
    pub end: Option<Time>,
}

/// The background of a run.
pub struct Background {
    hosts: Vec<HostId>,
    cdf: FlowSizeCdf,
    /// Arrivals' gaps, seconds.
    gaps: Exp<f64>,
    pub flows: Vec<BackgroundFlow>,
    /// By flow id minus `first_flow`: its index in `flows` (`u32::MAX`: another app's flow).
    index: Vec<u32>,
    first_flow: FlowId,
}

/// Timer kind: the next arrival.
const ARRIVAL: u8 = 0;

impl Background {
    /// Flows among `hosts` at `load` of links of `rate_bps` each, sizes from `cdf`.
    pub fn new(hosts: Vec<HostId>, load: f64, rate_bps: u64, cdf: FlowSizeCdf) -> Background {
        let lambda = load * rate_bps as f64 * hosts.len() as f64 / (8.0 * cdf.mean());
        let gaps = Exp::new(lambda).expect("a positive arrival rate");
        Background { hosts, cdf, gaps, flows: vec![], index: vec![], first_flow: FlowId::MAX }
    }

    fn next_arrival(&self, cx: &mut Ctx) -> Time {
        let gap = self.gaps.sample(&mut cx.rng);
        cx.now + Time(((gap * PS_PER_S as f64) as u64).max(1))
    }

    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        let at = self.next_arrival(cx);
        out.push(Action::Timer { at, kind: ARRIVAL, arg: 0 });
    }

    /// A flow arrives: its hosts and size are drawn, its connection made and its bytes
    /// written; and the next arrival is drawn.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, conns: &Conns, out: &mut Actions) {
        let n = self.hosts.len();
        let src = cx.rng.random_range(0..n);
        let dst = (src + cx.rng.random_range(1..n)) % n; // another host, uniformly
        let (src, dst) = (self.hosts[src], self.hosts[dst]);
        let bytes = self.cdf.draw(&mut cx.rng);
        let flow = out.dial_as(conns, src, dst, false);
        out.push(Action::Write(flow, bytes));
        if self.first_flow == FlowId::MAX {
            self.first_flow = flow;
        }
        let i = (flow - self.first_flow) as usize;
        if i >= self.index.len() {
            self.index.resize(i + 1, u32::MAX);
        }
        self.index[i] = self.flows.len() as u32;
        self.flows.push(BackgroundFlow { flow, src, dst, bytes, start: cx.now, end: None });
        let at = self.next_arrival(cx);
        out.push(Action::Timer { at, kind: ARRIVAL, arg: 0 });
    }

    /// `flow`'s receiver holds its bytes up to `to`.
    pub(crate) fn on_delivered(&mut self, cx: &mut Ctx, flow: FlowId, to: u64) {
        let i = self.index[(flow - self.first_flow) as usize] as usize;
        let f = &mut self.flows[i];
        if to >= f.bytes && f.end.is_none() {
            f.end = Some(cx.now);
        }
    }
}
