//! UDP background traffic (Osada et al. `004_f48ce568b38e0ea9.txt` §5: a fraction of the
//! client's link in datagrams): one constant-rate source per server, towards the first
//! client on its flow's path, each starting at a random phase of its interval.

use rand::Rng;

use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::time::Time;

/// The background's sources.
#[derive(Clone, Debug)]
pub struct UdpBackground {
    /// The flows whose paths the sources use (one per server).
    flows: Vec<FlowId>,
    interval: Time,
    bytes: u32,
    pub sent: u64,
    /// Datagrams a switch dropped.
    pub dropped: u64,
}

impl UdpBackground {
    /// Sources on `flows`, each sending a `bytes`-byte datagram every `interval`.
    pub fn new(flows: Vec<FlowId>, interval: Time, bytes: u32) -> UdpBackground {
        UdpBackground { flows, interval, bytes, sent: 0, dropped: 0 }
    }

    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        for &f in &self.flows {
            let phase = cx.rng.random_range(0..self.interval.0.max(1));
            out.push(Action::Timer { at: Time(phase), kind: 0, arg: f });
        }
    }

    /// Source `flow` sends its next datagram.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, flow: FlowId, out: &mut Actions) {
        self.sent += 1;
        out.push(Action::Datagram(flow, self.bytes));
        out.push(Action::Timer { at: cx.now + self.interval, kind: 0, arg: flow });
    }
}
