//! Packet trimming: a switch port that cuts a data packet to its header when its data queue
//! is full, instead of dropping it, and forwards the header ahead of the data.
//!
//! NDP (Handley et al., SIGCOMM 2017, §3.1; Cut Payload, NSDI 2014, before it): a port keeps
//! two queues, a small one for data packets and one for headers and control packets (ACKs,
//! NACKs, pulls), served first. A data packet that finds the data queue full is trimmed to
//! its header, which joins the header queue; the receiver learns at once what was lost and
//! asks for it again (`host::ndp`). To break up phase effects, "the switch trims either the
//! arriving packet or the last packet in the data queue, with equal probability" (§3.1).
//! Only when the header queue is full too is a header dropped, or, with return-to-sender,
//! turned back to its sender (§3.1, the fix for the largest incasts). The same trimming is
//! in the Ultra Ethernet 1.0 specification and in shipping switches.
//!
//! Parameters and their defaults follow htsim's `CompositeQueue`, NDP's own simulator: the
//! data queue is the port's buffer (bytes or packets, the packet on the wire included), the
//! header queue holds twice as many bytes, and a trimmed packet keeps the scenario's header
//! bytes on the wire.
//!
//! Where this model departs from htsim's, and why:
//! - Strict priority for the header queue. htsim serves the data queue once in 100,001 turns
//!   while both hold packets (its `_ratio_high`, `_ratio_low`); NDP's paper speaks of a
//!   weighted round robin of 10 headers to 1 packet (§3.1). A header queue never stays
//!   backlogged for 100,000 headers in any run here, so the two give the same order; a
//!   weighted round robin is left for when a run needs it.
//! - When the header queue has no room, the arriving packet is the one trimmed (and its
//!   header dropped or returned), never the data queue's tail, so an arrival costs at most
//!   one packet and the fabric hands back at most one (htsim may drop the tail's header and
//!   keep the arrival: the same payload lost, another sequence number).

use std::collections::VecDeque;

use crate::event::PktId;
use crate::time::Time;

/// The data queue's limit: bytes held, or packets held, the packet on the wire included
/// (as the port's static buffer counts them: `net::port::Admission`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLimit {
    Bytes(u64),
    Packets(u64),
}

/// A trimming port's parameters (scenario fields `trimming`, `trim_bytes`,
/// `trim_header_queue_bytes`, `return_to_sender`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimConfig {
    /// Wire bytes a trimmed packet keeps: its headers.
    pub trim_bytes: u32,
    pub data_limit: DataLimit,
    /// Bytes the header queue holds, the header on the wire included.
    pub header_queue_bytes: u64,
    /// A header that finds the header queue full goes back to its sender instead of being
    /// dropped.
    pub return_to_sender: bool,
}

/// What kind of packet is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offered {
    /// A data packet: it may be trimmed.
    Data,
    /// A datagram (UDP background): data, but a port cannot trim what no transport
    /// would answer, so it is dropped when the data queue is full.
    Datagram,
    /// A header or a control packet: the header queue.
    Control,
}

/// What a trimming port does with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It joins the data queue (or starts at once).
    Data,
    /// It joins the header queue (or starts at once).
    Header,
    /// The data queue is full: it is cut to its header, which joins the header queue.
    TrimArrival,
    /// The data queue is full: the packet at its tail is cut to its header, which joins the
    /// header queue, and the arrival takes its place.
    TrimTail,
    /// No room: dropped, or returned to its sender (`Trim::returns`).
    Refuse,
}

/// The data queue's class, as [`Trim::pop`] names it.
pub const DATA: usize = 0;
/// The header queue's.
pub const HEADERS: usize = 1;

/// A trimming port's queues and counters.
#[derive(Clone, Debug)]
pub struct Trim {
    pub cfg: TrimConfig,
    data: VecDeque<(PktId, u32)>,
    headers: VecDeque<(PktId, u32)>,
    /// Bytes waiting in each queue (not counting the packet on the wire).
    data_bytes: u64,
    header_bytes: u64,
    /// The packet on the wire: when its last bit leaves, its bytes and its queue.
    wire: (Time, u32, usize),
    /// Data packets cut to their header (arrivals and tails).
    pub trims: u64,
    /// Headers (trimmed or control) dropped because the header queue was full.
    pub header_drops: u64,
    /// Headers returned to their sender instead.
    pub bounces: u64,
}

impl Trim {
    pub fn new(cfg: TrimConfig) -> Trim {
        Trim {
            cfg,
            data: VecDeque::new(),
            headers: VecDeque::new(),
            data_bytes: 0,
            header_bytes: 0,
            wire: (Time::ZERO, 0, DATA),
            trims: 0,
            header_drops: 0,
            bounces: 0,
        }
    }

    /// The on-wire packet's bytes at `now` if it belongs to `queue` and has not left.
    #[inline]
    fn on_wire(&self, now: Time, queue: usize) -> u64 {
        let (end, bytes, q) = self.wire;
        if q == queue && end > now {
            bytes as u64
        } else {
            0
        }
    }

    /// A data packet of `wire` bytes fits beside `bytes` and `packets` already held.
    fn data_fits(&self, bytes: u64, packets: u64, wire: u32) -> bool {
        match self.cfg.data_limit {
            DataLimit::Bytes(b) => bytes + wire as u64 <= b,
            DataLimit::Packets(p) => packets < p,
        }
    }

    /// What to do with a packet of `wire` bytes offered at `now`; `coin` is drawn only when
    /// the data queue is full and its tail could be trimmed instead of the arrival (§3.1's
    /// equal probability).
    pub fn decide(&self, now: Time, wire: u32, offered: Offered, coin: impl FnOnce() -> bool) -> Verdict {
        let headers_held = self.header_bytes + self.on_wire(now, HEADERS);
        let header_fits = |bytes: u32| headers_held + bytes as u64 <= self.cfg.header_queue_bytes;
        if offered == Offered::Control {
            return if header_fits(wire) { Verdict::Header } else { Verdict::Refuse };
        }
        let on_wire = self.on_wire(now, DATA);
        let (bytes, packets) = (self.data_bytes + on_wire, self.data.len() as u64 + u64::from(on_wire > 0));
        if self.data_fits(bytes, packets, wire) {
            return Verdict::Data;
        }
        if offered == Offered::Datagram || !header_fits(self.cfg.trim_bytes) {
            return Verdict::Refuse;
        }
        if let Some(&(_, tail)) = self.data.back() {
            if self.data_fits(bytes - tail as u64, packets - 1, wire) && coin() {
                return Verdict::TrimTail;
            }
        }
        Verdict::TrimArrival
    }

    /// Cut the data queue's tail to its header and queue the header: the packet, and the
    /// bytes it had on the wire.
    pub fn trim_tail(&mut self) -> (PktId, u32) {
        let (id, wire) = self.data.pop_back().expect("a tail to trim");
        self.data_bytes -= wire as u64;
        self.push(HEADERS, id, self.cfg.trim_bytes);
        self.trims += 1;
        (id, wire)
    }

    /// Queue packet `id` of `wire` bytes in `queue`.
    #[inline]
    pub fn push(&mut self, queue: usize, id: PktId, wire: u32) {
        if queue == HEADERS {
            self.headers.push_back((id, wire));
            self.header_bytes += wire as u64;
        } else {
            self.data.push_back((id, wire));
            self.data_bytes += wire as u64;
        }
    }

    /// The next packet to send, with its bytes and queue: headers first (strict priority,
    /// see the module's doc).
    #[inline]
    pub fn pop(&mut self) -> Option<(PktId, u32, usize)> {
        if let Some((id, wire)) = self.headers.pop_front() {
            self.header_bytes -= wire as u64;
            return Some((id, wire, HEADERS));
        }
        let (id, wire) = self.data.pop_front()?;
        self.data_bytes -= wire as u64;
        Some((id, wire, DATA))
    }

    /// A packet of `queue` and `wire` bytes started its transmission, ending at `end`.
    #[inline]
    pub fn started(&mut self, end: Time, wire: u32, queue: usize) {
        self.wire = (end, wire, queue);
    }

    /// Headers that find no room go back to their sender.
    pub fn returns(&self) -> bool {
        self.cfg.return_to_sender
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u32 = 9064;

    fn port(limit: DataLimit) -> Trim {
        Trim::new(TrimConfig { trim_bytes: 64, data_limit: limit, header_queue_bytes: 2 * 72_000, return_to_sender: false })
    }

    #[test]
    fn htsims_eight_packet_queue_of_jumbo_frames_holds_seven_with_their_headers() {
        // htsim's incast setting: a queue of 8 x 9000 = 72,000 bytes, packets of 9000 + 64:
        // seven fit (63,448 B), the eighth (72,512 B) is trimmed
        let mut t = port(DataLimit::Bytes(72_000));
        for id in 0..7 {
            assert_eq!(t.decide(Time::ZERO, MTU, Offered::Data, || unreachable!()), Verdict::Data);
            t.push(DATA, id, MTU);
        }
        assert_eq!(t.decide(Time::ZERO, MTU, Offered::Data, || false), Verdict::TrimArrival);
        assert_eq!(t.decide(Time::ZERO, MTU, Offered::Data, || true), Verdict::TrimTail);
        // an ACK goes to the header queue whatever the data queue holds
        assert_eq!(t.decide(Time::ZERO, 64, Offered::Control, || unreachable!()), Verdict::Header);
        // a datagram is never trimmed
        assert_eq!(t.decide(Time::ZERO, MTU, Offered::Datagram, || true), Verdict::Refuse);
    }

    #[test]
    fn the_packet_on_the_wire_counts_until_its_last_bit_has_left() {
        let mut t = port(DataLimit::Packets(2));
        t.push(DATA, 1, MTU);
        t.started(Time(100), MTU, DATA);
        assert_eq!(t.decide(Time(99), MTU, Offered::Data, || false), Verdict::TrimArrival, "1 waiting + 1 on the wire");
        assert_eq!(t.decide(Time(100), MTU, Offered::Data, || false), Verdict::Data, "the wire is free at 100");
    }

    #[test]
    fn trimming_the_tail_moves_its_header_to_the_header_queue_served_first() {
        let mut t = port(DataLimit::Packets(2));
        t.push(DATA, 1, MTU);
        t.push(DATA, 2, MTU);
        assert_eq!(t.trim_tail(), (2, MTU));
        t.push(DATA, 3, MTU);
        assert_eq!(t.trims, 1);
        assert_eq!(t.pop(), Some((2, 64, HEADERS)), "the trimmed header leaves first");
        assert_eq!(t.pop(), Some((1, MTU, DATA)));
        assert_eq!(t.pop(), Some((3, MTU, DATA)));
        assert_eq!(t.pop(), None);
    }

    #[test]
    fn a_full_header_queue_refuses_headers_and_the_trims_that_would_make_them() {
        let mut t = Trim::new(TrimConfig {
            trim_bytes: 64,
            data_limit: DataLimit::Packets(1),
            header_queue_bytes: 128,
            return_to_sender: false,
        });
        t.push(DATA, 1, MTU);
        t.push(HEADERS, 2, 64);
        assert_eq!(t.decide(Time::ZERO, MTU, Offered::Data, || false), Verdict::TrimArrival, "one header's room left");
        t.push(HEADERS, 3, 64);
        assert_eq!(t.decide(Time::ZERO, 64, Offered::Control, || true), Verdict::Refuse);
        assert_eq!(t.decide(Time::ZERO, MTU, Offered::Data, || true), Verdict::Refuse);
    }
}
