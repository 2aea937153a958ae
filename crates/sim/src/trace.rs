//! Optional records of a run, as plain data (writing files is a front's job):
//!
//! - a capture of the client's switch port, as a mirror port would see it: every data
//!   packet offered to the port towards the client (before the drop decision, so a
//!   dropped original and its retransmission both appear) and every packet the client
//!   sends (ACKs and requests);
//! - a per-flow sender trace: the congestion state after every event that can change it;
//! - a per-event trace of every flow in the ns-3 peer's kinds (`peers/ns3/README.md`:
//!   tx, rtx, ack, enq, deq, drop, cwnd, ssth, rto, state), so one script can diff a run
//!   of each simulator;
//! - the ground truth of every loss and timeout ([`LossRow`], [`TimeoutRow`]): where each
//!   data packet was dropped, how many TCP senders had packets queued at that port, and
//!   for every retransmission timeout the loss it came from. What the monitor's verdict
//!   infers from counters, the simulator knows from its events (`incastlab monitor truth`).

use crate::event::FlowId;
use crate::packet::Packet;
use crate::time::Time;

/// What to record besides the result.
#[derive(Clone, Debug, Default)]
pub struct RecordOptions {
    /// Mirror the client's port; at most this many packets (memory bound), 0 = off.
    pub capture_limit: usize,
    /// Flows whose sender state to trace (empty = none).
    pub trace_flows: Vec<FlowId>,
    /// Record the per-event trace ([`EventRow`]) of every flow.
    pub events: bool,
    /// Sample every port's utilization, drops and timeouts at this interval
    /// (`crate::port_util`); `None` = off.
    pub port_util_interval: Option<Time>,
    /// Memory cap of a run by blocks' sampling; `None` = `port_util::MAX_BYTES` (tests set a
    /// small one to reach it).
    pub port_util_cap_bytes: Option<u64>,
    /// Record every data packet a switch drops and every retransmission timeout, with the
    /// loss it came from ([`Records::losses`], [`Records::timeouts`]).
    pub losses: bool,
    /// Report how far the run has got here while it runs.
    pub progress: Option<std::sync::Arc<crate::progress::RunProgress>>,
}

/// One captured packet.
#[derive(Clone, Copy, Debug)]
pub struct Captured {
    pub time: Time,
    pub packet: Packet,
    /// The switch dropped it (a mirror port still sees it).
    pub dropped: bool,
}

/// Sender state at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRow {
    pub time: Time,
    pub flow: FlowId,
    pub event: TraceEvent,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Time,
    pub rto: Time,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub in_recovery: bool,
}

/// What caused a trace row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    Ack,
    Timeout,
    Write,
}

impl TraceEvent {
    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Ack => "ack",
            TraceEvent::Timeout => "timeout",
            TraceEvent::Write => "write",
        }
    }
}

/// What one row of the per-event trace says (the ns-3 peer's kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// TCP sent a new segment: a = sequence number, b = payload bytes.
    Tx,
    /// TCP sent a segment again: a = sequence number, b = payload bytes.
    Rtx,
    /// A segment from the client reached the server: a = ACK number, b = payload bytes
    /// (0 for a pure ACK, the request's size for a request).
    Ack,
    /// At the client's switch port, a data packet was queued, started, or dropped: a =
    /// sequence number, b = payload bytes, c = packets waiting afterwards (the packet on
    /// the wire not counted, as in ns-3's device queue).
    Enq,
    Deq,
    Drop,
    /// The sender's cwnd or ssthresh changed: a = bytes.
    Cwnd,
    Ssth,
    /// The RTO changed: a = old, b = new, in microseconds.
    Rto,
    /// The congestion state changed: a = old, b = new ([`CongState`] numbers).
    State,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Tx => "tx",
            EventKind::Rtx => "rtx",
            EventKind::Ack => "ack",
            EventKind::Enq => "enq",
            EventKind::Deq => "deq",
            EventKind::Drop => "drop",
            EventKind::Cwnd => "cwnd",
            EventKind::Ssth => "ssth",
            EventKind::Rto => "rto",
            EventKind::State => "state",
        }
    }
}

/// A sender's congestion state, numbered as ns-3's `TcpSocketState::TcpCongState_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongState {
    Open = 0,
    /// Duplicate ACKs below the threshold.
    Disorder = 1,
    /// Fast recovery.
    Recovery = 3,
    /// After a timeout, until everything sent before it is acknowledged.
    Loss = 4,
}

/// One row of the per-event trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventRow {
    pub time: Time,
    pub kind: EventKind,
    pub flow: FlowId,
    pub a: u64,
    pub b: u64,
    /// Only for enq, deq and drop.
    pub c: Option<u64>,
}

/// The sender state the per-event trace reports when it changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderSnapshot {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub rto_us: u64,
    pub state: u8,
}

/// A data packet a switch port dropped, and who else was waiting there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossRow {
    pub time: Time,
    /// The port that dropped it (numbered as the topology numbers ports).
    pub port: crate::event::PortId,
    pub flow: FlowId,
    /// Its first sequence number and payload bytes.
    pub seq: u64,
    pub len: u32,
    /// Distinct TCP flows with data packets waiting at the port, the dropped packet's own
    /// flow included: 1 is a flow overflowing the port alone; 2 or more, senders' data
    /// meeting in one queue. (UDP datagrams are not senders: incast is TCP's.)
    pub queued_senders: u32,
}

/// A retransmission timeout, and the loss it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutRow {
    pub time: Time,
    pub flow: FlowId,
    /// The host the flow's data goes to (the machine that waits).
    pub receiver: u32,
    /// Index in [`Records::losses`] of the drop of the segment the timer was guarding: the
    /// latest drop of this flow's data that covers its oldest unacknowledged byte, else the
    /// latest drop of its data not yet acknowledged. `None`: nothing of it was dropped (a
    /// lost ACK, or a spurious timeout).
    pub loss: Option<u32>,
}

/// A flow's drops not yet acknowledged, for [`TimeoutRow::loss`].
#[derive(Clone, Debug, Default)]
struct Outstanding {
    /// (seq, end, index in the loss rows), oldest first.
    drops: Vec<(u64, u64, u32)>,
}

/// What a run recorded.
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub capture: Vec<Captured>,
    /// The capture stopped at `capture_limit` packets.
    pub capture_truncated: bool,
    pub trace: Vec<TraceRow>,
    pub events: Vec<EventRow>,
    pub port_util: Option<crate::port_util::PortUtil>,
    /// Each flow's (sender host, receiver host), by flow id, the victim's last when there is
    /// one: who the captured packets' connections join (a front addresses them from this).
    pub ends: Vec<(u32, u32)>,
    /// Every data packet a switch dropped, in time order (`RecordOptions::losses`).
    pub losses: Vec<LossRow>,
    /// Every retransmission timeout, in time order (`RecordOptions::losses`).
    pub timeouts: Vec<TimeoutRow>,
}

/// The recorder a world carries; does nothing unless asked.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder {
    capture_limit: usize,
    /// The watched host's NIC: of the packets receivers send, the mirror sees only its own
    /// (with several clients, or Riak's nodes, the others' ACKs never cross the port).
    pub(crate) watched_nic: crate::event::PortId,
    /// By flow id, up to the largest flow asked for: flows created later (several clients,
    /// the Riak workload's connections) are traced as the first ones.
    traced: Vec<bool>,
    /// The per-event trace is on.
    pub(crate) events: bool,
    /// Something watches the ports (the per-event trace or the utilization sampling): the
    /// one flag the world tests per packet offered or started.
    pub(crate) watch_ports: bool,
    /// Per-port utilization sampling, when on (moved to `records` at the end).
    pub(crate) port_util: Option<crate::port_util::PortUtil>,
    /// Each flow's sender state as last reported in the per-event trace: one entry per flow
    /// the world has created (`Recorder::add_flow`), so flow ids index it.
    reported: Vec<Option<SenderSnapshot>>,
    /// The ground truth of losses and timeouts is recorded (`RecordOptions::losses`).
    pub(crate) losses: bool,
    /// Per flow, its drops not yet acknowledged (grown as flows appear).
    outstanding: Vec<Outstanding>,
    pub(crate) records: Records,
}

impl Recorder {
    pub(crate) fn new(opts: &RecordOptions) -> Recorder {
        let mut traced = vec![false; opts.trace_flows.iter().max().map_or(0, |&f| f as usize + 1)];
        for &f in &opts.trace_flows {
            traced[f as usize] = true;
        }
        Recorder {
            capture_limit: opts.capture_limit,
            watched_nic: 0,
            traced,
            events: opts.events,
            // a drop is seen where the ports are watched (`Fabric::watch_offer`)
            watch_ports: opts.events || opts.losses,
            port_util: None,
            reported: vec![],
            losses: opts.losses,
            outstanding: vec![],
            records: Records::default(),
        }
    }

    /// A switch port dropped a data packet of `flow` (`seq`, `len` payload bytes) while
    /// `queued_senders` TCP flows had data waiting there (the caller counted them).
    pub(crate) fn loss(&mut self, time: Time, port: crate::event::PortId, flow: FlowId, seq: u64, len: u32, queued_senders: u32) {
        let index = self.records.losses.len() as u32;
        self.records.losses.push(LossRow { time, port, flow, seq, len, queued_senders });
        let f = flow as usize;
        if self.outstanding.len() <= f {
            self.outstanding.resize_with(f + 1, Outstanding::default);
        }
        self.outstanding[f].drops.push((seq, seq + len as u64, index));
    }

    /// `flow`'s retransmission timer fired with `snd_una` its oldest unacknowledged byte;
    /// its data goes to host `receiver`. The loss it came from is the latest drop covering
    /// `snd_una`, else the latest drop not yet acknowledged; drops below `snd_una` are
    /// forgotten (acknowledged since: the receiver got their retransmission).
    pub(crate) fn timeout(&mut self, time: Time, flow: FlowId, snd_una: u64, receiver: u32) {
        let loss = match self.outstanding.get_mut(flow as usize) {
            Some(o) => {
                o.drops.retain(|&(_, end, _)| end > snd_una);
                let covering = o.drops.iter().rev().find(|&&(seq, end, _)| seq <= snd_una && snd_una < end);
                covering.or(o.drops.last()).map(|&(_, _, i)| i)
            }
            None => None,
        };
        self.records.timeouts.push(TimeoutRow { time, flow, receiver, loss });
    }

    /// The world created its next flow (ids are given in order from 0).
    pub(crate) fn add_flow(&mut self) {
        if self.events {
            self.reported.push(None);
        }
    }

    #[inline]
    pub(crate) fn capture(&mut self, time: Time, packet: &Packet, dropped: bool) {
        if self.capture_limit == 0 {
            return;
        }
        if self.records.capture.len() >= self.capture_limit {
            self.records.capture_truncated = true;
            return;
        }
        self.records.capture.push(Captured { time, packet: *packet, dropped });
    }

    /// Capture a packet the receiving end whose NIC is `nic` sends, if that is the watched host.
    #[inline]
    pub(crate) fn capture_sent(&mut self, time: Time, nic: crate::event::PortId, packet: &Packet) {
        if self.capture_limit != 0 && nic == self.watched_nic {
            self.capture(time, packet, false);
        }
    }

    #[inline]
    pub(crate) fn traces(&self, flow: FlowId) -> bool {
        self.traced.get(flow as usize).copied().unwrap_or(false)
    }

    pub(crate) fn trace(&mut self, row: TraceRow) {
        self.records.trace.push(row);
    }

    /// Add a row to the per-event trace (the caller checked `events`).
    pub(crate) fn event(&mut self, time: Time, kind: EventKind, flow: FlowId, a: u64, b: u64, c: Option<u64>) {
        self.records.events.push(EventRow { time, kind, flow, a, b, c });
    }

    /// Report what changed in `flow`'s sender state since it was last reported.
    pub(crate) fn sender_state(&mut self, time: Time, flow: FlowId, now: SenderSnapshot) {
        let before = self.reported[flow as usize].replace(now);
        let was = before.unwrap_or(SenderSnapshot { cwnd: u64::MAX, ssthresh: u64::MAX, rto_us: now.rto_us, state: now.state });
        if now.cwnd != was.cwnd {
            self.event(time, EventKind::Cwnd, flow, now.cwnd, 0, None);
        }
        if now.ssthresh != was.ssthresh {
            self.event(time, EventKind::Ssth, flow, now.ssthresh, 0, None);
        }
        if now.rto_us != was.rto_us {
            self.event(time, EventKind::Rto, flow, was.rto_us, now.rto_us, None);
        }
        if now.state != was.state {
            self.event(time, EventKind::State, flow, was.state as u64, now.state as u64, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_traced_to_the_latest_drop_covering_its_oldest_unacknowledged_byte() {
        let mut r = Recorder::new(&RecordOptions { losses: true, ..Default::default() });
        r.loss(Time(10), 7, 0, 1, 1460, 3); // 0: flow 0's first segment, 3 senders waiting
        r.loss(Time(11), 7, 0, 2921, 1460, 1); // 1: its third
        r.loss(Time(12), 7, 1, 1, 1460, 2); // 2: another flow's
        r.timeout(Time(100), 0, 1, 5);
        r.loss(Time(110), 7, 0, 1, 1460, 2); // 3: the first segment's retransmission, dropped again
        r.timeout(Time(300), 0, 1, 5);
        // the first segment got through since: the drops below 2921 are forgotten
        r.timeout(Time(700), 0, 2921, 5);
        r.timeout(Time(800), 2, 1, 5); // nothing of flow 2 was dropped: a spurious timeout or a lost ACK
        let loss: Vec<Option<u32>> = r.records.timeouts.iter().map(|t| t.loss).collect();
        assert_eq!(loss, vec![Some(0), Some(3), Some(1), None]);
        assert_eq!(r.records.losses[3].queued_senders, 2);
        assert!(r.records.timeouts.iter().all(|t| t.receiver == 5));
    }

    #[test]
    fn without_a_covering_drop_the_latest_unacknowledged_one_is_the_loss() {
        // the segment at snd_una was not dropped (a lost ACK left it unacknowledged), a later one was
        let mut r = Recorder::new(&RecordOptions { losses: true, ..Default::default() });
        r.loss(Time(10), 3, 4, 4381, 1460, 2);
        r.timeout(Time(100), 4, 1461, 0);
        assert_eq!(r.records.timeouts[0].loss, Some(0));
    }
}
