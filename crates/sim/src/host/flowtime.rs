//! Where a flow's time went (issue 30): each part a flow carries (a synchronized read's
//! response, from the instant the client asks for it to the instant its last byte is
//! delivered in order at the client) split into components that add up to its completion
//! time. Opt-in (`time_breakdown`): a world with it off runs none of this.
//!
//! The split is a partition of the part's interval, kept as events happen at the flow's
//! sending end (docs/simulate.md, "Where the time went", has the definitions):
//!
//! - `request`: from the part's start to the sender's first write of it: the request's
//!   trip (and a per-block connection's handshake, SYN timeouts, the server's think time);
//! - after it, every interval between two events of the sender goes to the sender's state
//!   during it (ns-3's names, `trace::CongState`): open (or disorder) to `open`, fast
//!   recovery or the retransmission rounds after a timeout (until what was outstanding at
//!   the timeout is acknowledged) to `recovery`; the part of it during which PAUSE or PFC
//!   held the sender's NIC goes to `pause` instead;
//! - `rto_wait`: when a retransmission timeout fires, the time since the flow's last
//!   progress (a segment transmitted, or an ACK that moved `snd_una`) is taken back from
//!   the state it was counted in (not from `pause`): the flow waited out the timer;
//! - at the end, `open` is split at its fair share: `transmission` = the least of `open`
//!   and the time the part's bytes take on the idle path at 1/n of the host link rate
//!   (n: the parts to the same receiver that overlap it, itself included), `queueing` the
//!   rest (the open-state time beyond the fair share: waiting in switch queues, and a
//!   window still ramping up in slow start).

use crate::event::FlowId;
use crate::net::HostId;
use crate::tcp::sender::TcpSender;
use crate::time::{serialization_time, Time};
use crate::trace::CongState;

/// A part's time, in picoseconds, by component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub request: u64,
    pub transmission: u64,
    pub queueing: u64,
    pub rto_wait: u64,
    pub recovery: u64,
    pub pause: u64,
}

impl Split {
    /// The components together.
    pub fn sum(&self) -> u64 {
        self.request + self.transmission + self.queueing + self.rto_wait + self.recovery + self.pause
    }

    fn add(&mut self, o: &Split) {
        self.request += o.request;
        self.transmission += o.transmission;
        self.queueing += o.queueing;
        self.rto_wait += o.rto_wait;
        self.recovery += o.recovery;
        self.pause += o.pause;
    }
}

/// One finished part: its completion time and where it went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartTime {
    pub flow: FlowId,
    pub start: Time,
    pub end: Time,
    pub split: Split,
}

impl PartTime {
    /// The completion time less the components (zero unless an interval escaped them).
    pub fn other(&self) -> i128 {
        (self.end.0 - self.start.0) as i128 - self.split.sum() as i128
    }
}

/// Sums over finished parts (all of them, and the last part of each block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub parts: u64,
    pub time: u64,
    pub split: Split,
}

impl Totals {
    fn add(&mut self, p: &PartTime) {
        self.parts += 1;
        self.time += p.end.0 - p.start.0;
        self.split.add(&p.split);
    }
}

/// The part a flow is in, while it runs.
#[derive(Clone, Copy, Debug, Default)]
struct Open {
    live: bool,
    start: Time,
    /// The sender's first write of the part (`None`: still in `request`).
    written: Option<Time>,
    /// Accounted up to here; the NIC's held time at that instant.
    last: Time,
    held: Time,
    /// Time in the open and recovery states since the last progress (a timeout takes it).
    pending_open: u64,
    pending_recovery: u64,
    /// Committed open-state time (split at the end into transmission and queueing).
    open: u64,
    bytes: u64,
    /// Parts open at its receiver when it began (itself included), and parts begun there
    /// before it.
    overlap_at_start: u32,
    begun_before: u64,
    split: Split,
}

/// The time breakdown of every flow of a world (`Conns::clocks`).
#[derive(Clone, Debug, Default)]
pub struct FlowClocks {
    parts: Vec<Open>,
    /// Per receiving host: parts open, and parts begun.
    open_at: Vec<u32>,
    begun_at: Vec<u64>,
    /// The host link rate, MSS and header: the fair-share ideal.
    rate_bps: u64,
    mss: u64,
    header: u64,
    pub all: Totals,
    pub blocks: Totals,
    /// Every finished part, in order (tests read them; kept only under `cfg(test)`).
    #[cfg(test)]
    pub finished: Vec<PartTime>,
}

impl FlowClocks {
    pub fn new(rate_bps: u64, mss: u64, header: u64) -> Self {
        FlowClocks { rate_bps, mss, header, ..Default::default() }
    }

    /// Flow `f` (to host `dst`) begins a part at `now`, unless one is running.
    pub fn begin(&mut self, f: FlowId, dst: HostId, now: Time) {
        let i = f as usize;
        if self.parts.len() <= i {
            self.parts.resize(i + 1, Open::default());
        }
        if self.parts[i].live {
            return;
        }
        let h = dst as usize;
        if self.open_at.len() <= h {
            self.open_at.resize(h + 1, 0);
            self.begun_at.resize(h + 1, 0);
        }
        self.open_at[h] += 1;
        self.begun_at[h] += 1;
        self.parts[i] = Open {
            live: true,
            start: now,
            last: now,
            overlap_at_start: self.open_at[h],
            begun_before: self.begun_at[h] - 1,
            ..Open::default()
        };
    }

    fn live(&mut self, f: FlowId) -> Option<&mut Open> {
        self.parts.get_mut(f as usize).filter(|p| p.live)
    }

    /// Flow `f`'s sender writes `bytes` at `now` (its NIC held `held` so far).
    pub fn written(&mut self, f: FlowId, s: &TcpSender, now: Time, held: Time, bytes: u64) {
        let Some(p) = self.live(f) else { return };
        if p.written.is_none() {
            p.split.request += now.0 - p.last.0;
            p.written = Some(now);
            p.last = now;
            p.held = held;
        } else {
            tick(p, s, now, held);
        }
        p.bytes += bytes;
    }

    /// Account flow `f` up to `now` in the state its sender was in since the last call.
    #[inline]
    pub fn tick(&mut self, f: FlowId, s: &TcpSender, now: Time, held: Time) {
        if let Some(p) = self.live(f) {
            if p.written.is_some() {
                tick(p, s, now, held);
            }
        }
    }

    /// Flow `f` made progress at `now` (it transmitted, or an ACK moved `snd_una`).
    pub fn progress(&mut self, f: FlowId, s: &TcpSender, now: Time, held: Time) {
        if let Some(p) = self.live(f) {
            if p.written.is_some() {
                tick(p, s, now, held);
                commit(p);
            }
        }
    }

    /// Flow `f`'s retransmission timer fired at `now`: the time since its last progress
    /// was a wait for it. (Call `tick` first, with the sender as it was.)
    pub fn timeout(&mut self, f: FlowId) {
        if let Some(p) = self.live(f) {
            p.split.rto_wait += p.pending_open + p.pending_recovery;
            p.pending_open = 0;
            p.pending_recovery = 0;
        }
    }

    /// Flow `f`'s part ends at `now` (its last byte delivered); `last_of_block`: it was the
    /// block's last. `ideal_first`: the idle one-way latency of its first packet of
    /// `first_wire` bytes. Returns the finished part.
    pub fn end(
        &mut self,
        f: FlowId,
        s: &TcpSender,
        dst: HostId,
        now: Time,
        held: Time,
        last_of_block: bool,
        ideal_first: impl FnOnce(u64) -> Time,
    ) -> Option<PartTime> {
        let (rate, mss, header) = (self.rate_bps, self.mss, self.header);
        let h = dst as usize;
        let begun_now = self.begun_at[h];
        let p = self.live(f)?;
        if p.written.is_some() {
            tick(p, s, now, held);
            commit(p);
        } else {
            p.split.request += now.0 - p.last.0; // ended before any write (nothing asked)
        }
        p.live = false;
        let n = p.overlap_at_start as u64 + (begun_now - p.begun_before - 1);
        let fair = fair_share_time(p.bytes, n.max(1), rate, mss, header, ideal_first);
        p.split.transmission = p.open.min(fair.0);
        p.split.queueing = p.open - p.split.transmission;
        let part = PartTime { flow: f, start: p.start, end: now, split: p.split };
        self.open_at[h] -= 1;
        self.all.add(&part);
        if last_of_block {
            self.blocks.add(&part);
        }
        #[cfg(test)]
        self.finished.push(part);
        Some(part)
    }
}

/// The time `bytes` take at 1/n of the host link on the idle path: the first packet's
/// one-way latency, then the rest of the wire bytes at `rate / n` (as `fct::idle_fct`
/// does at the whole rate).
fn fair_share_time(bytes: u64, n: u64, rate: u64, mss: u64, header: u64, ideal_first: impl FnOnce(u64) -> Time) -> Time {
    if bytes == 0 {
        return Time::ZERO;
    }
    let packets = bytes.div_ceil(mss);
    let wire = bytes + packets * header;
    let first = bytes.min(mss) + header;
    Time(ideal_first(first).0 + serialization_time(wire - first, rate).0 * n)
}

/// Account `p` from its last instant to `now` in the sender's current state.
#[inline]
fn tick(p: &mut Open, s: &TcpSender, now: Time, held: Time) {
    let dt = now.0 - p.last.0;
    if dt == 0 {
        return;
    }
    // held time within (last, now]: the NIC's clock never runs faster than the world's
    let paused = (held.0 - p.held.0).min(dt);
    p.split.pause += paused;
    match s.cong_state() {
        CongState::Open | CongState::Disorder => p.pending_open += dt - paused,
        CongState::Recovery | CongState::Loss => p.pending_recovery += dt - paused,
    }
    p.last = now;
    p.held = held;
}

/// What `p` accounted since its last progress stands.
fn commit(p: &mut Open) {
    p.open += p.pending_open;
    p.split.recovery += p.pending_recovery;
    p.pending_open = 0;
    p.pending_recovery = 0;
}
