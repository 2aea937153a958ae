//! Optional records of a run, as plain data (writing files is a front's job):
//!
//! - a capture of the client's switch port, as a mirror port would see it: every data
//!   packet offered to the port towards the client (before the drop decision, so a
//!   dropped original and its retransmission both appear) and every packet the client
//!   sends (ACKs and requests);
//! - a per-flow sender trace: the congestion state after every event that can change it.

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

/// What a run recorded.
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub capture: Vec<Captured>,
    /// The capture stopped at `capture_limit` packets.
    pub capture_truncated: bool,
    pub trace: Vec<TraceRow>,
}

/// The recorder a world carries; does nothing unless asked.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder {
    capture_limit: usize,
    traced: Vec<bool>,
    pub(crate) records: Records,
}

impl Recorder {
    pub(crate) fn new(opts: &RecordOptions, flows: usize) -> Recorder {
        let mut traced = vec![false; flows];
        for &f in &opts.trace_flows {
            if let Some(t) = traced.get_mut(f as usize) {
                *t = true;
            }
        }
        Recorder { capture_limit: opts.capture_limit, traced, records: Records::default() }
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

    #[inline]
    pub(crate) fn traces(&self, flow: FlowId) -> bool {
        self.traced.get(flow as usize).copied().unwrap_or(false)
    }

    pub(crate) fn trace(&mut self, row: TraceRow) {
        self.records.trace.push(row);
    }
}
