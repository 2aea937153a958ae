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
//!   but a request dropped by a switch is sent again when its timer expires, and the time
//!   up to then is `rto_wait` (`request_timeout`);
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
//!
//! A receiver-driven flow (NDP, receiver credit: `host::pull`) has two states of its own,
//! and its part is a one-shot flow's (from its start to its last byte delivered):
//!
//! - `trim_recovery`: while one of its packets has been trimmed by a switch (`net::trim`)
//!   and its resend has not yet reached the receiver: the header's trip, the NACK's, the
//!   wait for a pull or credit to resend it on, and the resend's trip (NDP §3.2);
//! - pull-blocked: the sender has packets to send (new or NACKed) and no pull or credit to
//!   send them on. At the end the fair share is counted against the open time first, then
//!   against this time (at 1/n of the link a pulled sender spends most of its time waiting
//!   for its turn); what is left of it is `pull_wait`: waiting for pulls beyond the fair
//!   share, and what is left of the open time `queueing`.
//!
//! Riak's gets (`app::riak`) pipeline their replies: one persistent connection per replica
//! -> coordinator pair carries every reply the coordinator asks that replica for, one after
//! another, so a flow can be in several parts at once (`FlowClocks::pipelined`). Each
//! request begins a part (a reply's, from its get's issue), the replica's writes take the
//! parts in the order they began (it reads its requests in order), and the replies end in
//! that order too (one byte stream); every event of the sender is counted in each part it
//! has written, since each waited through it.

use std::collections::VecDeque;

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
    /// Receiver-driven transports: a trimmed packet not yet resent and arrived.
    pub trim_recovery: u64,
    /// Receiver-driven transports: waiting for pulls or credit beyond the fair share.
    pub pull_wait: u64,
}

impl Split {
    /// The components together.
    pub fn sum(&self) -> u64 {
        self.request
            + self.transmission
            + self.queueing
            + self.rto_wait
            + self.recovery
            + self.pause
            + self.trim_recovery
            + self.pull_wait
    }

    fn add(&mut self, o: &Split) {
        self.request += o.request;
        self.transmission += o.transmission;
        self.queueing += o.queueing;
        self.rto_wait += o.rto_wait;
        self.recovery += o.recovery;
        self.pause += o.pause;
        self.trim_recovery += o.trim_recovery;
        self.pull_wait += o.pull_wait;
    }
}

/// What a flow was doing during an interval: the state the interval is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Sending, or waiting for ACKs, with nothing lost (TCP's open or disorder state; a
    /// receiver-driven sender with everything sent).
    Open = 0,
    /// TCP's loss recovery: fast recovery, or the rounds after a timeout.
    Recovery = 1,
    /// A receiver-driven sender with packets to send and no pull or credit for them.
    PullWait = 2,
    /// A receiver-driven flow with a trimmed packet whose resend has not arrived (set by
    /// the part's own record of trims, whatever the caller says).
    Trimmed = 3,
}

/// A TCP sender's phase (ns-3's state names, `trace::CongState`).
#[inline]
pub fn tcp_phase(s: &TcpSender) -> Phase {
    match s.cong_state() {
        CongState::Open | CongState::Disorder => Phase::Open,
        CongState::Recovery | CongState::Loss => Phase::Recovery,
    }
}

/// One finished part: its completion time and where it went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartTime {
    pub flow: FlowId,
    pub start: Time,
    pub end: Time,
    pub split: Split,
    /// It ended its block (Riak: it completed its get).
    pub last_of_block: bool,
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
#[derive(Clone, Debug, Default)]
struct Open {
    start: Time,
    /// The sender's first write of the part (`None`: still in `request`).
    written: Option<Time>,
    /// Accounted up to here; the NIC's held time at that instant.
    last: Time,
    held: Time,
    /// Time in each phase since the last progress (a timeout takes it), by `Phase`.
    pending: [u64; 4],
    /// Committed open-state and pull-blocked time (split at the end into transmission,
    /// queueing and pull_wait).
    open: u64,
    pull_blocked: u64,
    /// Sequence numbers of its packets trimmed whose resend has not arrived.
    trimmed: Vec<u64>,
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
    /// Per flow, its parts running, oldest first (at most one unless `pipelined`).
    parts: Vec<VecDeque<Open>>,
    /// A request begins a part even while the flow is in one (Riak's replies).
    pipelined: bool,
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
    /// `pipelined`: every `begin` begins a part, even while the flow is in one (Riak's
    /// replies on a persistent connection); else a flow is in one part at a time.
    pub fn new(rate_bps: u64, mss: u64, header: u64, pipelined: bool) -> Self {
        FlowClocks { rate_bps, mss, header, pipelined, ..Default::default() }
    }

    /// Flow `f` (to host `dst`) begins a part at `now`, unless one is running and the
    /// flow's parts are not pipelined.
    pub fn begin(&mut self, f: FlowId, dst: HostId, now: Time) {
        let i = f as usize;
        if self.parts.len() <= i {
            self.parts.resize(i + 1, VecDeque::new());
        }
        if !self.pipelined && !self.parts[i].is_empty() {
            return;
        }
        let h = dst as usize;
        if self.open_at.len() <= h {
            self.open_at.resize(h + 1, 0);
            self.begun_at.resize(h + 1, 0);
        }
        self.open_at[h] += 1;
        self.begun_at[h] += 1;
        self.parts[i].push_back(Open {
            start: now,
            last: now,
            overlap_at_start: self.open_at[h],
            begun_before: self.begun_at[h] - 1,
            ..Open::default()
        });
    }

    /// Flow `f`'s parts running, oldest first.
    fn live(&mut self, f: FlowId) -> impl Iterator<Item = &mut Open> {
        self.parts.get_mut(f as usize).into_iter().flat_map(|q| q.iter_mut())
    }

    /// Flow `f`'s parts its sender has written to (their sending end's events count in them).
    fn writing(&mut self, f: FlowId) -> impl Iterator<Item = &mut Open> {
        self.live(f).take_while(|p| p.written.is_some())
    }

    /// Flow `f`'s sender writes `bytes` at `now` (its NIC held `held` so far): the oldest
    /// part not yet written to is written now; the ones before it (written already) count
    /// the time up to now. A flow whose parts are all written adds the bytes to its newest.
    pub fn written(&mut self, f: FlowId, phase: Phase, now: Time, held: Time, bytes: u64) {
        let Some(parts) = self.parts.get_mut(f as usize) else { return };
        let Some(newest) = parts.len().checked_sub(1) else { return };
        let first_unwritten = parts.iter().position(|p| p.written.is_none());
        for p in parts.iter_mut().take(first_unwritten.unwrap_or(usize::MAX)) {
            tick(p, phase, now, held);
        }
        let p = &mut parts[first_unwritten.unwrap_or(newest)];
        if p.written.is_none() {
            p.split.request += now.0 - p.last.0;
            p.written = Some(now);
            p.last = now;
            p.held = held;
        }
        p.bytes += bytes;
    }

    /// Account flow `f` up to `now` in the state its sender was in since the last call.
    #[inline]
    pub fn tick(&mut self, f: FlowId, phase: Phase, now: Time, held: Time) {
        for p in self.writing(f) {
            tick(p, phase, now, held);
        }
    }

    /// Flow `f` made progress at `now` (it transmitted, or an ACK moved `snd_una`).
    pub fn progress(&mut self, f: FlowId, phase: Phase, now: Time, held: Time) {
        for p in self.writing(f) {
            tick(p, phase, now, held);
            commit(p);
        }
    }

    /// A switch trimmed flow `f`'s packet at `seq` at `now` (`phase`: its sender's until
    /// now): the flow is in `trim_recovery` until the packet's resend arrives.
    pub fn trimmed(&mut self, f: FlowId, seq: u64, phase: Phase, now: Time, held: Time) {
        for p in self.writing(f) {
            if !p.trimmed.contains(&seq) {
                tick(p, phase, now, held);
                p.trimmed.push(seq);
            }
        }
    }

    /// Flow `f`'s packet at `seq` reached its receiver whole at `now`: if it was a trimmed
    /// packet's resend, that trim is recovered.
    pub fn arrived(&mut self, f: FlowId, seq: u64, phase: Phase, now: Time, held: Time) {
        for p in self.live(f) {
            if let Some(i) = p.trimmed.iter().position(|&s| s == seq) {
                tick(p, phase, now, held);
                p.trimmed.swap_remove(i);
            }
        }
    }

    /// Flow `f`'s retransmission timer fired at `now`: the time since its last progress
    /// was a wait for it. (Call `tick` first, with the sender as it was.)
    pub fn timeout(&mut self, f: FlowId) {
        for p in self.live(f) {
            p.split.rto_wait += p.pending.iter().sum::<u64>();
            p.pending = [0; 4];
        }
    }

    /// A request of flow `f` that a switch dropped is sent again at `now`, its TCP's timer
    /// expired (`Conns::request_dropped`): every part of the flow not yet written waited it
    /// out, from its start or the last such timer (the requests behind a lost one wait for
    /// it too: one byte stream).
    pub fn request_timeout(&mut self, f: FlowId, now: Time) {
        for p in self.live(f).filter(|p| p.written.is_none()) {
            p.split.rto_wait += now.0 - p.last.0;
            p.last = now;
        }
    }

    /// Flow `f`'s oldest part ends at `now` (its last byte delivered); `last_of_block`: it was the
    /// block's last. `ideal_first`: the idle one-way latency of its first packet of
    /// `first_wire` bytes. Returns the finished part.
    pub fn end(
        &mut self,
        f: FlowId,
        phase: Phase,
        dst: HostId,
        now: Time,
        held: Time,
        last_of_block: bool,
        ideal_first: impl FnOnce(u64) -> Time,
    ) -> Option<PartTime> {
        let (rate, mss, header) = (self.rate_bps, self.mss, self.header);
        let h = dst as usize;
        let begun_now = self.begun_at[h];
        let mut p = self.parts.get_mut(f as usize)?.pop_front()?;
        let p = &mut p;
        if p.written.is_some() {
            tick(p, phase, now, held);
            commit(p);
        } else {
            p.split.request += now.0 - p.last.0; // ended before any write (nothing asked)
        }
        let n = p.overlap_at_start as u64 + (begun_now - p.begun_before - 1);
        let fair = fair_share_time(p.bytes, n.max(1), rate, mss, header, ideal_first);
        // the fair share is counted against the open time first, then against the time
        // spent waiting for pulls (a pulled sender at its fair share waits for its turn)
        let from_open = p.open.min(fair.0);
        let from_pulls = p.pull_blocked.min(fair.0 - from_open);
        p.split.transmission = from_open + from_pulls;
        p.split.queueing = p.open - from_open;
        p.split.pull_wait = p.pull_blocked - from_pulls;
        let part = PartTime { flow: f, start: p.start, end: now, split: p.split, last_of_block };
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
fn tick(p: &mut Open, phase: Phase, now: Time, held: Time) {
    let dt = now.0 - p.last.0;
    if dt == 0 {
        return;
    }
    // held time within (last, now]: the NIC's clock never runs faster than the world's
    let paused = (held.0 - p.held.0).min(dt);
    p.split.pause += paused;
    let phase = if p.trimmed.is_empty() { phase } else { Phase::Trimmed };
    p.pending[phase as usize] += dt - paused;
    p.last = now;
    p.held = held;
}

/// What `p` accounted since its last progress stands.
fn commit(p: &mut Open) {
    let [open, recovery, pull_blocked, trimmed] = std::mem::take(&mut p.pending);
    p.open += open;
    p.split.recovery += recovery;
    p.pull_blocked += pull_blocked;
    p.split.trim_recovery += trimmed;
}
