//! Long-lived bulk flows: TCP flows between chosen hosts that carry no blocks or gets, beside
//! the workload (FAST'08 `000_315d806dde942a9f.txt` §5.2's "other flows" a pause also stops;
//! the steady many-flow load an operator's verdict must not call incast, issue 26).
//!
//! Each flow is either **backlogged** (its application wrote more than any run sends at the
//! start: a bulk transfer, what TCP's window alone paces) or **application-limited** (it
//! writes one MSS every `MSS / rate`, from a random phase of that interval: a steady stream at
//! a chosen rate, with no burst the application makes). A flow may also start later and end
//! after a number of bytes ([`BulkFlow::start`], [`BulkFlow::bytes`]): the base for flows that
//! arrive as a process and are sized from a distribution (issue 28). The victim of
//! `scenario.victim` is one backlogged flow between two hosts of its own.
//!
//! Bulk flows are background: their bytes and drops are their own, not the measured totals'
//! (`host::Conn::measured`).

use rand::Rng;

use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::time::{Time, PS_PER_S};

/// Bytes a backlogged flow's application writes at the start: more than any run sends.
pub const BULK_WRITE_BYTES: u64 = 1 << 50;

/// The timer kind of an application-limited flow's next write.
const WRITE: u8 = 0;
/// The timer kind of a flow's start.
const START: u8 = 1;

/// How one flow's application writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Everything at once: TCP's window paces it.
    Backlogged,
    /// `chunk` bytes every `every` (one MSS at the flow's rate).
    Rate { chunk: u64, every: Time },
}

impl Pace {
    /// `rate_bps`' pace in writes of one `mss`; `None`: backlogged.
    pub fn of(rate_bps: Option<u64>, mss: u64) -> Pace {
        match rate_bps {
            None => Pace::Backlogged,
            Some(r) => Pace::Rate { chunk: mss, every: Time(((mss * 8) as u128 * PS_PER_S as u128 / r as u128) as u64) },
        }
    }
}

/// One bulk flow.
#[derive(Clone, Debug)]
pub struct BulkFlow {
    pub flow: FlowId,
    pub pace: Pace,
    /// When its application starts writing (`Time::ZERO`: at the start of the run).
    pub start: Time,
    /// Bytes it writes in all; `None`: without end.
    pub bytes: Option<u64>,
    /// Bytes written so far.
    pub written: u64,
    /// Payload bytes delivered in order to its receiver's application.
    pub app_bytes: u64,
}

impl BulkFlow {
    /// A flow of `pace` from the start of the run, without end.
    pub fn new(flow: FlowId, pace: Pace) -> BulkFlow {
        BulkFlow { flow, pace, start: Time::ZERO, bytes: None, written: 0, app_bytes: 0 }
    }

    /// What it writes next: a chunk (or everything, or what is left), none once done.
    fn next_write(&self) -> u64 {
        let chunk = match self.pace {
            Pace::Backlogged => BULK_WRITE_BYTES,
            Pace::Rate { chunk, .. } => chunk,
        };
        self.bytes.map_or(chunk, |b| chunk.min(b - self.written))
    }
}

/// The bulk flows of a world.
#[derive(Clone, Debug, Default)]
pub struct Bulk {
    pub flows: Vec<BulkFlow>,
    /// The first flow is the victim of `scenario.victim` (its goodput is a result column).
    pub victim: bool,
    /// Flow id -> index in `flows` (`u32::MAX`: not a bulk flow).
    index: Vec<u32>,
}

impl Bulk {
    /// The flows of `list`, in order.
    pub fn new(list: Vec<BulkFlow>) -> Bulk {
        let mut b = Bulk::default();
        for f in list {
            b.add(f);
        }
        b
    }

    /// One more flow (flows dialled while the run goes on are added the same way).
    pub fn add(&mut self, f: BulkFlow) {
        let id = f.flow as usize;
        if self.index.len() <= id {
            self.index.resize(id + 1, u32::MAX);
        }
        self.index[id] = self.flows.len() as u32;
        self.flows.push(f);
    }

    /// Every flow starts: now, or at its start; an application-limited one at a random
    /// phase of its interval (drawn in flow order), so the flows' writes do not fall in step.
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        for (i, f) in self.flows.iter_mut().enumerate() {
            let at = match f.pace {
                Pace::Backlogged => f.start,
                Pace::Rate { every, .. } => f.start + Time(cx.rng.random_range(0..every.0.max(1))),
            };
            if at == cx.now && f.pace == Pace::Backlogged {
                let bytes = f.next_write();
                f.written = f.written.saturating_add(bytes);
                out.push(Action::Write(f.flow, bytes));
            } else {
                out.push(Action::Timer { at, kind: START, arg: i as u32 });
            }
        }
    }

    /// Flow `i` writes (its start, or its next chunk), and an application-limited one sets
    /// the timer of the chunk after.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, kind: u8, i: u32, out: &mut Actions) {
        debug_assert!(kind == WRITE || kind == START);
        let f = &mut self.flows[i as usize];
        let bytes = f.next_write();
        if bytes == 0 {
            return;
        }
        f.written = f.written.saturating_add(bytes);
        out.push(Action::Write(f.flow, bytes));
        if let Pace::Rate { every, .. } = f.pace {
            out.push(Action::Timer { at: cx.now + every, kind: WRITE, arg: i });
        }
    }

    /// `flow` delivered in-order bytes from `from` to `to`.
    pub(crate) fn on_delivered(&mut self, flow: FlowId, from: u64, to: u64) {
        let i = self.index[flow as usize] as usize;
        self.flows[i].app_bytes += to - from;
    }
}
