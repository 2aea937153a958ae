//! An output port: a FIFO in front of a link of `rate_bps` and `delay` propagation,
//! modelled causally, as ns-2's `LinkDelay` and ns-3's `PointToPointNetDevice` do.
//!
//! A packet offered to an idle link starts its transmission at once, and its arrival at
//! the far end (last bit) is scheduled then. A packet offered to a busy link waits; when
//! the transmission in progress ends, the next waiting packet starts, and only then is
//! its arrival scheduled. The order of that moment among the events of its instant is the
//! order reserved when the transmission in progress started (`event.rs`, "Tie rule"), so
//! a packet that waited behind another from its own host and a packet sent at the same
//! instant onto an idle link reach the next queue in the order ns-3 gives them.
//!
//! The port itself only decides; the world schedules what it returns (a packet started
//! now, or a "link free" event when the first packet comes to wait).
//!
//! Which packets the buffer admits is [`Admission`]: by bytes held (the packet on the
//! wire included), by packets held (ns-2's DropTail), or while one more MTU fits beside
//! the waiting packets (ns-3's device queue with flow control). A port may also have a
//! queue [`Discipline`] (`net::discipline`): a share of its switch's pool, or QoS classes that order
//! its waiting packets (`net::qos`). Such a port's static admission test refuses every
//! packet, which sends it down the port's own path where a static port would drop it: the
//! static buffer's hot path tests for a discipline only there, and once per `next`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::buffer::PortBuffer;
use super::discipline::Discipline;
use super::trim::{Offered, Trim, TrimConfig, Verdict};
use super::shaper::Shaper;
use crate::event::{Key, PktId};
use crate::time::{serialization_time, Time, PS_PER_S};

/// How a switch port decides whether a packet fits in its buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Admission {
    /// Bytes: a packet enters if its bytes fit beside every byte held, the packet on the
    /// wire included (a store-and-forward buffer frees a packet's memory when its last bit
    /// has left). A 32 KiB port holds 21 full packets in all, and a short tail segment may
    /// still fit beside 20 waiting ones.
    #[default]
    Bytes,
    /// Packets (ns-2's `Queue/DropTail` with `qlim_`): a packet enters if fewer than the
    /// limit are held, the one on the wire included, whatever their sizes.
    Packets,
    /// MTU slots (ns-3's `PointToPointNetDevice` queue with `NetDeviceQueue` flow control):
    /// a packet enters while one more MTU fits beside the waiting bytes; the packet on the
    /// wire has left the queue. A 32 KiB port holds 21 waiting packets plus one on the
    /// wire, whatever their sizes.
    MtuSlots,
}

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The link was idle: the packet's transmission starts now and its last bit reaches
    /// the far end at this time. Schedule that arrival now.
    Started(Time),
    /// The link is busy: the packet waits. `first` = no packet waited before it, so the
    /// owner must schedule the port's "link free" event at [`OutputPort::free_at`].
    Waiting { first: bool },
    /// Tail-dropped: the buffer had no room.
    Dropped,
}

/// A drop-tail output port and the link behind it.
#[derive(Clone, Debug)]
pub struct OutputPort {
    rate_bps: u64,
    /// Picoseconds per byte when `rate_bps` divides 8 x 10^12 ps/s (1, 10, 25, 40, 100 Gbps...):
    /// a serialization time is then a multiplication, not a division on every packet; 0: divide.
    ps_per_byte: u64,
    delay: Time,
    /// Capacity in bytes (`Bytes`, `MtuSlots`); `u64::MAX` for a host NIC that never drops.
    buffer_bytes: u64,
    /// Capacity in packets (`Packets`).
    buffer_packets: u64,
    admission: Admission,
    /// The largest packet (`MtuSlots` keeps room for one).
    mtu: u64,
    /// Packets waiting for the link, oldest first, with their wire bytes.
    waiting: VecDeque<(PktId, u32)>,
    waiting_bytes: u64,
    /// Wire bytes of the packet whose transmission ends at `key_time(done)`.
    on_wire: u32,
    /// The instant the transmission in progress ends, with the tie order reserved when it
    /// started: the key of the link's "transmission done" moment (0: never transmitted).
    done: Key,
    /// Counters.
    pub max_occupancy: u64,
    /// Most packets held at once, the one on the wire included (Osada et al.'s Q_max).
    pub max_packets: u64,
    pub drops: u64,
    pub dropped_bytes: u64,
    pub sent_packets: u64,
    /// ECN marking threshold K in packets held (`u64::MAX`: never mark).
    ecn_threshold: u64,
    /// Packets marked CE.
    pub ce_marks: u64,
    /// 802.3x PAUSE: the port starts no transmission before this instant (`pause`).
    paused_until: Time,
    /// 802.1Qbb PFC: each class starts nothing before its instant (empty without PFC).
    class_paused_until: Vec<Time>,
    /// The link carries MAC control frames (PAUSE, PFC) until this instant: the next data
    /// frame waits for it (`net::pause`).
    control_end: Time,
    /// Its queue discipline beyond the static drop-tail FIFO (`net::discipline`); `None`: none.
    extra: Option<Box<Discipline>>,
}

impl OutputPort {
    fn with(rate_bps: u64, delay: Time, admission: Admission, buffer_bytes: u64, buffer_packets: u64, mtu: u64) -> Self {
        let exact = rate_bps > 0 && (8 * PS_PER_S) % rate_bps == 0 && 8 * PS_PER_S / rate_bps <= u32::MAX as u64;
        OutputPort {
            rate_bps,
            ps_per_byte: if exact { 8 * PS_PER_S / rate_bps } else { 0 },
            delay,
            buffer_bytes,
            buffer_packets,
            admission,
            mtu,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            on_wire: 0,
            done: 0,
            max_occupancy: 0,
            max_packets: 0,
            drops: 0,
            dropped_bytes: 0,
            sent_packets: 0,
            ecn_threshold: u64::MAX,
            ce_marks: 0,
            paused_until: Time::ZERO,
            class_paused_until: Vec::new(),
            control_end: Time::ZERO,
            extra: None,
        }
    }

    /// A port whose buffer holds `buffer_bytes`, the packet on the wire included.
    pub fn new(rate_bps: u64, delay: Time, buffer_bytes: u64) -> Self {
        Self::with(rate_bps, delay, Admission::Bytes, buffer_bytes, u64::MAX, 0)
    }

    /// A port whose buffer holds at most `packets` packets, whatever their size.
    pub fn with_packet_limit(rate_bps: u64, delay: Time, packets: u32) -> Self {
        Self::with(rate_bps, delay, Admission::Packets, u64::MAX, packets as u64, 0)
    }

    /// A port that admits a packet while `mtu` more bytes fit beside those waiting.
    pub fn with_mtu_slots(rate_bps: u64, delay: Time, buffer_bytes: u64, mtu: u32) -> Self {
        Self::with(rate_bps, delay, Admission::MtuSlots, buffer_bytes, u64::MAX, mtu as u64)
    }

    /// A host's NIC queue: unbounded (the sending host throttles itself rather than drop).
    pub fn unbounded(rate_bps: u64, delay: Time) -> Self {
        Self::new(rate_bps, delay, u64::MAX)
    }

    /// Admit by `extra` (a share of a switch's pool, QoS classes) as well as by the static
    /// buffer in bytes (a pool's port has an unbounded one: [`OutputPort::unbounded`]).
    pub fn with_buffer(mut self, extra: PortBuffer) -> Self {
        assert_eq!(self.admission, Admission::Bytes, "pools and classes count bytes");
        // `offer`'s test "fewer than 0 packets held" fails for every packet, whatever its
        // size, and sends it to `offer_in_class`, which counts bytes against `buffer_bytes`
        (self.admission, self.buffer_packets) = (Admission::Packets, 0);
        self.extra = Some(Box::new(Discipline::Shared(extra)));
        self
    }

    /// A trimming port (`net::trim`): its data queue and header queue decide what enters;
    /// the static buffer is unbounded. (Its static admission test fails for every packet, as
    /// `with_buffer`'s does; the fabric offers to it through [`OutputPort::offer_trimming`].)
    pub fn with_trimming(mut self, cfg: TrimConfig) -> Self {
        (self.admission, self.buffer_packets, self.buffer_bytes) = (Admission::Packets, 0, u64::MAX);
        self.extra = Some(Box::new(Discipline::Trim(Trim::new(cfg))));
        self
    }

    /// Its trimming queues, if it trims.
    pub fn trim(&self) -> Option<&Trim> {
        match self.extra.as_deref() {
            Some(Discipline::Trim(t)) => Some(t),
            _ => None,
        }
    }

    /// [`OutputPort::offer`] at a trimming port: what happened to packet `id` (of `wire`
    /// bytes, `offered` as data, a datagram or a header), the verdict (the fabric cuts a
    /// trimmed packet to its header in the pool), and the waiting packet trimmed in its place
    /// if the tail was (`Verdict::TrimTail`). A refused packet is counted as dropped, or as
    /// returned to its sender when the port returns headers and `returnable` (data or a
    /// trimmed header not returned before).
    #[allow(clippy::too_many_arguments)]
    pub fn offer_trimming(
        &mut self,
        now_key: Key,
        id: PktId,
        wire: u32,
        offered: Offered,
        returnable: bool,
        coin: impl FnOnce() -> bool,
        reserve_done: impl FnOnce(Time) -> Key,
    ) -> (Offer, Verdict, Option<PktId>) {
        let now = crate::event::key_time(now_key);
        let mut extra = self.extra.take().expect("a trimming port");
        let Discipline::Trim(t) = extra.as_mut() else { unreachable!("a trimming port") };
        let verdict = t.decide(now, wire, offered, coin);
        let trim_bytes = t.cfg.trim_bytes;
        let mut victim = None;
        let (queue, wire) = match verdict {
            Verdict::Data => (super::trim::DATA, wire),
            Verdict::Header => (super::trim::HEADERS, wire),
            Verdict::TrimArrival => {
                t.trims += 1;
                (super::trim::HEADERS, trim_bytes)
            }
            Verdict::TrimTail => {
                let (v, old) = t.trim_tail();
                self.waiting_bytes -= (old - trim_bytes) as u64;
                victim = Some(v);
                (super::trim::DATA, wire)
            }
            Verdict::Refuse => {
                t.trims += u64::from(offered == Offered::Data);
                let returned = t.returns() && returnable;
                t.bounces += u64::from(returned);
                t.header_drops += u64::from(!returned && offered != Offered::Datagram);
                self.extra = Some(extra);
                return (if returned { Offer::Dropped } else { self.drop(wire) }, verdict, None);
            }
        };
        let offer = if self.busy(now_key) || self.paused(now) {
            t.push(queue, id, wire);
            self.waiting.push_back((id, wire));
            self.waiting_bytes += wire as u64;
            Offer::Waiting { first: self.waiting.len() == 1 }
        } else {
            let end = self.end_of(now, wire);
            t.started(end, wire, queue);
            let done = reserve_done(end);
            Offer::Started(self.start(now, wire, done))
        };
        self.extra = Some(extra);
        self.note_occupancy(now);
        (offer, verdict, victim)
    }

    /// Put `shaper` (Linux tbf, `net::shaper`) in front of the link: it admits by its own
    /// queue's waiting bytes and releases a packet when its bucket holds the packet's bytes'
    /// worth. The port's static buffer must be unbounded ([`OutputPort::unbounded`]).
    pub fn with_shaper(mut self, shaper: Shaper) -> Self {
        assert_eq!(self.buffer_bytes, u64::MAX, "a shaper's queue is its own");
        // as `with_buffer`: the static test refuses every packet, so `offer_in_class` decides
        (self.admission, self.buffer_packets) = (Admission::Packets, 0);
        self.extra = Some(Box::new(Discipline::Shaped(shaper)));
        self
    }

    /// Mark ECN-capable packets CE when `k` packets are held on their arrival.
    pub fn set_ecn_threshold(&mut self, k: u32) {
        self.ecn_threshold = k as u64;
    }

    /// An ECN-capable packet arriving at `now` is to be marked CE: the port holds at least
    /// K packets, the one on the wire included, so the arrival would be packet K + 1.
    /// DCTCP's marking on the instantaneous queue (RFC 8257 §3.1; Alizadeh et al.,
    /// SIGCOMM 2010, §3.1: "mark the CE codepoint if the queue occupancy is greater than
    /// K upon its arrival"). Count the mark with [`OutputPort::note_ce_mark`] if the
    /// packet is admitted.
    #[inline]
    pub fn marks_ce(&self, now: Time) -> bool {
        self.ecn_threshold != u64::MAX && self.held_packets(now) >= self.ecn_threshold
    }

    pub fn note_ce_mark(&mut self) {
        self.ce_marks += 1;
    }

    /// Packets held at `now`, the one on the wire included.
    #[inline]
    fn held_packets(&self, now: Time) -> u64 {
        self.waiting.len() as u64 + u64::from(self.on_wire_at(now) > 0)
    }

    /// When the transmission in progress ends, as an event-queue key.
    pub fn free_at(&self) -> Key {
        self.done
    }

    /// The link is transmitting, or its "transmission done" moment has not been processed
    /// yet (`now` is the key of the event being processed), or packets wait.
    #[inline]
    fn busy(&self, now: Key) -> bool {
        self.done > now || !self.waiting.is_empty() || self.control_end > crate::event::key_time(now)
    }

    /// The wire is taken at `now`: a transmission, or its "done" moment still to come, or
    /// a MAC control frame.
    #[inline]
    fn wire_busy(&self, now: Key) -> bool {
        self.done > now || self.control_end > crate::event::key_time(now)
    }

    /// Wire bytes still on the link at `now` (a packet has left when its last bit has).
    #[inline]
    fn on_wire_at(&self, now: Time) -> u64 {
        if crate::event::key_time(self.done) > now {
            self.on_wire as u64
        } else {
            0
        }
    }

    /// A packet of `wire_bytes` arriving at `now` fits in the buffer.
    #[inline]
    pub fn admits(&self, now: Time, wire_bytes: u32) -> bool {
        match self.admission {
            Admission::Bytes => self.waiting_bytes + self.on_wire_at(now) + wire_bytes as u64 <= self.buffer_bytes,
            Admission::Packets => self.held_packets(now) < self.buffer_packets,
            Admission::MtuSlots => self.waiting_bytes + self.mtu <= self.buffer_bytes,
        }
    }

    /// Start transmitting a packet of `wire_bytes` at `now`; `done` is the key reserved
    /// for the moment it ends. Returns when its last bit reaches the far end.
    #[inline]
    fn start(&mut self, now: Time, wire_bytes: u32, done: Key) -> Time {
        // `done` was reserved at the transmission's end: not computed again
        let end = crate::event::key_time(done);
        debug_assert_eq!(end, self.end_of(now, wire_bytes));
        self.done = done;
        self.on_wire = wire_bytes;
        self.sent_packets += 1;
        end + self.delay
    }

    /// When a transmission of `wire_bytes` starting at `now` would end.
    #[inline]
    pub fn end_of(&self, now: Time, wire_bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            // exact: bytes x 8e12 / rate with no remainder (both factors < 2^32: no overflow)
            return now + Time(wire_bytes as u64 * self.ps_per_byte);
        }
        now + serialization_time(wire_bytes as u64, self.rate_bps)
    }

    fn note_occupancy(&mut self, now: Time) {
        let bytes = self.waiting_bytes + self.on_wire_at(now);
        let packets = self.held_packets(now);
        self.max_occupancy = self.max_occupancy.max(bytes);
        self.max_packets = self.max_packets.max(packets);
    }

    /// Offer packet `id` of `wire_bytes` at the instant of event key `now_key`. If it
    /// starts at once, `reserve_done(end)` must return the key reserved for the end of
    /// its transmission (`EventQueue::reserve`).
    #[inline]
    pub fn offer(&mut self, now_key: Key, id: PktId, wire_bytes: u32, reserve_done: impl FnOnce(Time) -> Key) -> Offer {
        let now = crate::event::key_time(now_key);
        if !self.admits(now, wire_bytes) {
            if self.extra.is_some() {
                return self.offer_in_class(now_key, id, wire_bytes, 0, reserve_done); // `with_buffer`
            }
            return self.drop(wire_bytes);
        }
        if self.busy(now_key) || self.paused(now) {
            self.waiting.push_back((id, wire_bytes));
            self.waiting_bytes += wire_bytes as u64;
            self.note_occupancy(now);
            Offer::Waiting { first: self.waiting.len() == 1 }
        } else {
            let done = reserve_done(self.end_of(now, wire_bytes));
            let arrive = self.start(now, wire_bytes, done);
            // an idle link waits for nothing: what it holds is the packet now on the wire
            // (`note_occupancy` would find the same)
            self.max_occupancy = self.max_occupancy.max(wire_bytes as u64);
            self.max_packets = self.max_packets.max(u64::from(wire_bytes > 0));
            Offer::Started(arrive)
        }
    }

    /// Count a packet of `wire_bytes` dropped here.
    pub(crate) fn drop(&mut self, wire_bytes: u32) -> Offer {
        self.drops += 1;
        self.dropped_bytes += wire_bytes as u64;
        Offer::Dropped
    }

    /// [`OutputPort::offer`] for a packet of QoS class `class` at a port with a
    /// [`Discipline`]: that admits it beside the static limit, and its classes, if any,
    /// order the waiting packets (`waiting` still counts them, in arrival order). Kept out
    /// of line so the static path's `offer` stays as small as it was.
    #[inline(never)]
    pub fn offer_in_class(
        &mut self,
        now_key: Key,
        id: PktId,
        wire_bytes: u32,
        class: usize,
        reserve_done: impl FnOnce(Time) -> Key,
    ) -> Offer {
        let now = crate::event::key_time(now_key);
        let mut extra = self.extra.take().expect("a port with a discipline");
        let on_wire = self.on_wire_at(now);
        let held = self.waiting_bytes + on_wire;
        let fits = held + wire_bytes as u64 <= self.buffer_bytes && extra.admits(now, held, on_wire, wire_bytes, class);
        let blocked = if self.class_paused_until.is_empty() {
            // (a shaper whose bucket lacks the packet's tokens holds it on a free link)
            self.busy(now_key) || self.paused(now) || extra.ready_at(now, wire_bytes) > now
        } else {
            // PFC: a packet of a class that may send starts on a free wire even while
            // packets of paused classes wait
            self.wire_busy(now_key) || self.paused(now) || self.class_paused(class, now) || self.sendable(&extra, now)
        };
        let offer = if !fits {
            self.drop(wire_bytes)
        } else if blocked {
            extra.admit(wire_bytes);
            extra.push(class, id, wire_bytes);
            self.waiting.push_back((id, wire_bytes));
            self.waiting_bytes += wire_bytes as u64;
            Offer::Waiting { first: self.waiting.len() == 1 }
        } else {
            extra.admit(wire_bytes);
            let end = self.end_of(now, wire_bytes);
            extra.started(now, end, wire_bytes, class);
            let done = reserve_done(end);
            Offer::Started(self.start(now, wire_bytes, done))
        };
        self.extra = Some(extra);
        if fits {
            self.note_occupancy(now);
        }
        offer
    }

    /// The link became free at `now` (its "link free" event): start the oldest waiting
    /// packet. Returns it with the time its last bit reaches the far end, and whether
    /// packets still wait (then the owner schedules the next "link free" at
    /// [`OutputPort::free_at`]).
    #[inline]
    pub fn next(&mut self, now: Time, reserve_done: impl FnOnce(Time) -> Key) -> (PktId, Time, bool) {
        if self.extra.is_some() {
            return self.next_of_extra(now, reserve_done);
        }
        let (id, wire) = self.waiting.pop_front().expect("a link-free event is scheduled only while packets wait");
        self.waiting_bytes -= wire as u64;
        let done = reserve_done(self.end_of(now, wire));
        let arrive = self.start(now, wire, done);
        (id, arrive, !self.waiting.is_empty())
    }

    /// IEEE 802.3x PAUSE: start no transmission before `until` (a frame already on the wire
    /// finishes; `until` = now resumes at once, as a pause of zero quanta does). While
    /// paused, offered packets wait; the owner restarts the link when the pause ends.
    pub fn pause_until(&mut self, until: Time) {
        self.paused_until = until;
    }

    /// The port is paused at `now` (it may start nothing).
    #[inline]
    pub fn paused(&self, now: Time) -> bool {
        now < self.paused_until
    }

    /// Give the port per-class pause (802.1Qbb PFC) over its `classes` QoS classes.
    pub fn enable_pfc(&mut self, classes: usize) {
        assert!(self.extra.as_ref().is_some_and(|e| e.classes().is_some()), "PFC pauses the queues of a port's classes");
        self.class_paused_until = vec![Time::ZERO; classes];
    }

    /// IEEE 802.1Qbb: start no packet of `class` before `until` (`until` = now resumes it).
    pub fn pause_class_until(&mut self, class: usize, until: Time) {
        self.class_paused_until[class] = until;
    }

    /// `class` is paused at `now` (PFC).
    #[inline]
    pub fn class_paused(&self, class: usize, now: Time) -> bool {
        self.class_paused_until.get(class).is_some_and(|&t| now < t)
    }

    /// A waiting packet's class may send at `now` (under PFC; the port's classes).
    fn sendable(&self, extra: &Discipline, now: Time) -> bool {
        let classes = extra.classes().expect("PFC ports have classes");
        (0..classes.count()).any(|c| classes.backlogged(c) && !self.class_paused(c, now))
    }

    /// Nothing may start at `now` though packets may wait: the port is paused, or (PFC)
    /// every waiting packet's class is.
    #[inline]
    pub fn blocked(&self, now: Time) -> bool {
        self.paused(now)
            || (!self.class_paused_until.is_empty() && !self.sendable(self.extra.as_deref().expect("classes"), now))
    }

    /// The oldest waiting packet may not start before this instant, later than `now`, though
    /// the link is free: a shaper's bucket lacks its tokens (`net::shaper`). The owner
    /// schedules the port's "link free" event then. `None`: nothing holds it.
    #[inline]
    pub fn held_until(&self, now: Time) -> Option<Time> {
        let extra = self.extra.as_deref()?;
        let &(_, wire) = self.waiting.front()?;
        Some(extra.ready_at(now, wire)).filter(|&t| t > now)
    }

    /// A MAC control frame of `wire_bytes` is to be sent at the instant of `now_key`: it
    /// starts at the next frame boundary (when the frame on the wire and any control
    /// frame before it have ended, 802.3 Annex 31B) ahead of waiting data, which waits for
    /// it. Returns when it starts.
    pub fn send_control(&mut self, now_key: Key, wire_bytes: u64) -> Time {
        let start = crate::event::key_time(now_key).max(crate::event::key_time(self.done)).max(self.control_end);
        self.control_end = start + serialization_time(wire_bytes, self.rate_bps);
        start
    }

    /// When the MAC control frames on the link end (in the past when there are none).
    #[inline]
    pub fn control_end(&self) -> Time {
        self.control_end
    }

    /// The port is a FIFO with a static buffer and nothing else: no ECN marking, no pool
    /// share, no classes, no per-class pause (`net::fabric`'s fast path).
    pub fn is_plain(&self) -> bool {
        self.ecn_threshold == u64::MAX && self.extra.is_none() && self.class_paused_until.is_empty()
    }

    /// The port has a pool share or classes (`with_buffer`).
    pub fn has_buffer(&self) -> bool {
        self.extra.is_some()
    }

    /// [`OutputPort::next`] at a port with a [`Discipline`]: its classes, if any, choose the
    /// packet, and its pool learns when the packet will have left.
    #[inline(never)]
    fn next_of_extra(&mut self, now: Time, reserve_done: impl FnOnce(Time) -> Key) -> (PktId, Time, bool) {
        let oldest = self.waiting.pop_front().expect("a link-free event is scheduled only while packets wait");
        let extra = self.extra.as_deref_mut().expect("a port with a discipline");
        let paused = &self.class_paused_until;
        let may_send = |c: usize| paused.get(c).is_none_or(|&t| now >= t);
        let (id, wire, class) = extra.pop_where(may_send).unwrap_or((oldest.0, oldest.1, 0));
        let end = now + serialization_time(wire as u64, self.rate_bps);
        extra.started(now, end, wire, class);
        self.waiting_bytes -= wire as u64;
        let done = reserve_done(end);
        let arrive = self.start(now, wire, done);
        (id, arrive, !self.waiting.is_empty())
    }

    /// Packets waiting (not counting the one on the wire).
    pub fn waiting_packets(&self) -> usize {
        self.waiting.len()
    }

    /// The packets waiting, oldest first (the ground truth of a loss reads who they are).
    pub fn waiting_ids(&self) -> impl Iterator<Item = PktId> + '_ {
        self.waiting.iter().map(|&(id, _)| id)
    }

    /// Bytes held at `now`: waiting and on the wire (for tests and traces).
    pub fn occupancy_at(&self, now: Time) -> u64 {
        self.waiting_bytes + self.on_wire_at(now)
    }

    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::key;

    /// Key of an instant: time `t` with tie order `o`.
    fn at(t: Time, o: u64) -> Key {
        key(t, o)
    }

    const GIG: u64 = 1_000_000_000;

    #[test]
    fn end_of_is_the_serialization_time_whether_multiplied_or_divided() {
        // 1, 10, 25, 100, 400 Gbps take the multiplication; 3 Gbps and 7 bps the division
        for rate in [GIG, 10 * GIG, 25 * GIG, 100 * GIG, 400 * GIG, 3 * GIG, 7] {
            let port = OutputPort::unbounded(rate, Time::ZERO);
            for bytes in [1, 40, 64, 1500, 9000, 65_535] {
                let expected = Time(5) + serialization_time(bytes as u64, rate);
                assert_eq!(port.end_of(Time(5), bytes), expected, "{rate} {bytes}");
            }
        }
    }

    /// A driver standing in for the world: offers packets at given instants, runs the
    /// link-free events, and records when each packet reaches the far end.
    struct Link {
        port: OutputPort,
        order: u64,
        free: Option<Key>,
        arrivals: Vec<(PktId, Time)>,
    }

    impl Link {
        fn new(port: OutputPort) -> Self {
            Link { port, order: 1, free: None, arrivals: vec![] }
        }
        fn reserve(&mut self) -> impl FnOnce(Time) -> Key {
            self.order += 1;
            let o = self.order;
            move |t| key(t, o)
        }
        /// Run pending link-free events up to `t`.
        fn run_until(&mut self, t: Time) {
            while let Some(k) = self.free.filter(|&k| crate::event::key_time(k) <= t) {
                let r = self.reserve();
                let (id, arrive, more) = self.port.next(crate::event::key_time(k), r);
                self.arrivals.push((id, arrive));
                self.free = more.then(|| self.port.free_at());
            }
        }
        fn offer(&mut self, t: Time, id: PktId, bytes: u32) -> Offer {
            self.run_until(t);
            self.order += 1;
            let now = at(t, self.order);
            let r = self.reserve();
            let o = self.port.offer(now, id, bytes, r);
            match o {
                Offer::Started(arrive) => self.arrivals.push((id, arrive)),
                Offer::Waiting { first: true } => self.free = Some(self.port.free_at()),
                _ => {}
            }
            o
        }
    }

    #[test]
    fn lone_packet_arrives_after_serialization_plus_propagation() {
        let mut l = Link::new(OutputPort::new(GIG, Time::from_us(25), 32 * 1024));
        assert_eq!(l.offer(Time::ZERO, 1, 1500), Offer::Started(Time::from_us(12 + 25)));
    }

    #[test]
    fn back_to_back_packets_leave_one_serialization_time_apart() {
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 1 << 20));
        l.offer(Time::ZERO, 1, 1500);
        assert_eq!(l.offer(Time::ZERO, 2, 1500), Offer::Waiting { first: true });
        l.run_until(Time::from_us(100));
        assert_eq!(l.arrivals, vec![(1, Time::from_us(12)), (2, Time::from_us(24))]);
    }

    #[test]
    fn a_waiting_packet_starts_when_the_link_frees_not_when_it_was_offered() {
        // the link-free moment is the transmission's end, keyed by the order reserved
        // when that transmission started
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 1 << 20));
        l.offer(Time::ZERO, 1, 1500);
        l.offer(Time::from_us(5), 2, 1500);
        assert_eq!(crate::event::key_time(l.free.unwrap()), Time::from_us(12));
        assert_eq!(l.free.unwrap() as u64, 3, "order reserved at packet 1's start");
    }

    #[test]
    fn byte_buffer_counts_the_packet_on_the_wire_and_never_overflows() {
        // 32 KiB holds 21 packets of 1500 B in all; the 22nd offered at once is dropped.
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 32 * 1024));
        let outcomes: Vec<_> = (0..22).map(|i| l.offer(Time::ZERO, i, 1500)).collect();
        assert!(outcomes[..21].iter().all(|o| !matches!(o, Offer::Dropped)));
        assert_eq!(outcomes[21], Offer::Dropped);
        assert_eq!(l.port.drops, 1);
        assert_eq!(l.port.max_occupancy, 21 * 1500);
        assert!(l.port.max_occupancy <= l.port.buffer_bytes());
    }

    #[test]
    fn byte_buffer_admits_a_short_tail_beside_twenty_one_full_packets() {
        // peers/ns3/README.md and issue 10: an SRU's 844-byte tail (884 B on the wire)
        // still fits in 32 KiB beside 21 full packets (21 x 1500 + 884 = 32384), where a
        // packet-slot buffer is full
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 32 * 1024));
        for i in 0..21 {
            l.offer(Time::ZERO, i, 1500);
        }
        assert!(matches!(l.offer(Time::ZERO, 21, 884), Offer::Waiting { .. }));
        assert_eq!(l.offer(Time::ZERO, 22, 884), Offer::Dropped);
        let mut l = Link::new(OutputPort::with_packet_limit(GIG, Time::ZERO, 21));
        for i in 0..21 {
            l.offer(Time::ZERO, i, 1500);
        }
        assert_eq!(l.offer(Time::ZERO, 21, 884), Offer::Dropped);
    }

    #[test]
    fn mtu_slots_hold_twenty_one_waiting_plus_one_on_the_wire_like_ns3() {
        // ns-3 (peers/ns3/README.md): "a 32 KiB port holds 21 waiting packets plus the one
        // on the wire, whatever their sizes"
        let mut l = Link::new(OutputPort::with_mtu_slots(GIG, Time::ZERO, 32 * 1024, 1500));
        let outcomes: Vec<_> = (0..23).map(|i| l.offer(Time::ZERO, i, 1500)).collect();
        assert!(matches!(outcomes[0], Offer::Started(_)));
        assert!(outcomes[1..22].iter().all(|o| matches!(o, Offer::Waiting { .. })));
        assert_eq!(outcomes[22], Offer::Dropped);
        assert_eq!(l.port.waiting_packets(), 21);
        // short packets do not buy extra room beyond what one more MTU needs
        let mut l = Link::new(OutputPort::with_mtu_slots(GIG, Time::ZERO, 32 * 1024, 1500));
        l.offer(Time::ZERO, 0, 1500);
        let admitted = (1..40).filter(|&i| !matches!(l.offer(Time::ZERO, i, 884), Offer::Dropped)).count();
        assert_eq!(admitted, 36, "waiting bytes + 1500 <= 32768: 35 x 884 = 30940 still admits one more");
    }

    #[test]
    fn packet_limit_counts_packets_held_not_bytes_like_ns2() {
        let mut l = Link::new(OutputPort::with_packet_limit(GIG, Time::ZERO, 3));
        for i in 0..3 {
            assert!(!matches!(l.offer(Time::ZERO, i, 64), Offer::Dropped));
        }
        assert_eq!(l.offer(Time::ZERO, 3, 64), Offer::Dropped);
        assert_eq!(l.port.max_packets, 3);
    }

    #[test]
    fn room_frees_when_a_packet_has_left() {
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 3000));
        l.offer(Time::ZERO, 0, 1500);
        l.offer(Time::ZERO, 1, 1500);
        assert_eq!(l.offer(Time::from_us(11), 2, 1500), Offer::Dropped);
        // at 12 us the first packet's last bit has left and the second is on the wire
        l.run_until(Time::from_us(12));
        assert_eq!(l.port.occupancy_at(Time::from_us(12)), 1500);
        assert!(!matches!(l.offer(Time::from_us(12), 3, 1500), Offer::Dropped));
    }

    #[test]
    fn idle_link_starts_at_the_offer_not_at_the_last_departure() {
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 1 << 20));
        l.offer(Time::ZERO, 0, 1500);
        assert_eq!(l.offer(Time::from_us(100), 1, 1500), Offer::Started(Time::from_us(112)));
    }

    #[test]
    fn an_offer_before_the_pending_transmission_end_at_the_same_instant_waits() {
        // the transmission ends at 12 us, but its "done" moment (order 2) comes after an
        // event of order 1 at 12 us: as in ns-3, the device is still busy for that event
        let mut p = OutputPort::new(GIG, Time::ZERO, 1 << 20);
        assert!(matches!(p.offer(at(Time::ZERO, 0), 0, 1500, |t| key(t, 2)), Offer::Started(_)));
        assert_eq!(p.offer(at(Time::from_us(12), 1), 1, 1500, |t| key(t, 9)), Offer::Waiting { first: true });
        // and after it, the link is free
        let mut p = OutputPort::new(GIG, Time::ZERO, 1 << 20);
        p.offer(at(Time::ZERO, 0), 0, 1500, |t| key(t, 2));
        assert!(matches!(p.offer(at(Time::from_us(12), 3), 1, 1500, |t| key(t, 9)), Offer::Started(_)));
    }

    #[test]
    fn a_paused_port_queues_what_it_would_have_started() {
        // IEEE 802.3x: a paused MAC starts no frame; the one on the wire finishes
        let mut p = OutputPort::new(GIG, Time::ZERO, 1 << 20);
        p.pause_until(Time::from_us(50));
        assert!(p.paused(Time::from_us(49)) && !p.paused(Time::from_us(50)));
        assert_eq!(p.offer(at(Time::from_us(10), 1), 0, 1500, |t| key(t, 2)), Offer::Waiting { first: true });
        // at the pause's end the owner starts it: it leaves 12 us later
        let (id, arrive, more) = p.next(Time::from_us(50), |t| key(t, 3));
        assert_eq!((id, arrive, more), (0, Time::from_us(62), false));
        // an idle, unpaused port starts at once again
        assert!(matches!(p.offer(at(Time::from_us(70), 4), 1, 1500, |t| key(t, 5)), Offer::Started(_)));
    }

    #[test]
    fn ecn_marks_arrivals_that_find_k_packets_held() {
        // K = 3 at 1 Gbps, 1500-byte packets (12 us each). Five packets at t = 0: they find
        // 0, 1, 2, 3, 4 packets held, so the 4th and 5th are marked (RFC 8257 §3.1). At
        // 30 us packet 0 and 1 have left (12, 24 us), packet 2 is on the wire, 3 and 4 wait:
        // 3 held, so an arrival then is marked; at 36 us packet 2 has left: 2 held, not.
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 1 << 20));
        l.port.set_ecn_threshold(3);
        let marks: Vec<bool> = (0..5)
            .map(|i| {
                let m = l.port.marks_ce(Time::ZERO);
                l.offer(Time::ZERO, i, 1500);
                m
            })
            .collect();
        assert_eq!(marks, [false, false, false, true, true]);
        l.run_until(Time::from_us(30));
        assert!(l.port.marks_ce(Time::from_us(30)));
        l.run_until(Time::from_us(36));
        assert!(!l.port.marks_ce(Time::from_us(36)));
        // without a threshold nothing is marked, however full the port
        let mut l = Link::new(OutputPort::new(GIG, Time::ZERO, 1 << 20));
        (0..50).for_each(|i| {
            l.offer(Time::ZERO, i, 1500);
        });
        assert!(!l.port.marks_ce(Time::ZERO));
    }
}
