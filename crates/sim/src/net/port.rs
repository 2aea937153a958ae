//! An output-queued port: a drop-tail FIFO of `buffer_bytes` in front of a link of
//! `rate_bps` and `delay` propagation.
//!
//! The FIFO is work-conserving and never paused, so each packet's departure time is
//! known when it is enqueued: it starts when the link is free and takes its
//! serialization time. The port therefore needs no "transmit done" event; it keeps the
//! departure times of the packets it holds and forgets them lazily, which gives the
//! exact occupancy at every arrival. A packet occupies the buffer from its arrival until
//! its last bit is on the wire (the packet being transmitted counts).

use std::collections::VecDeque;

use crate::time::{serialization_time, Time};

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    /// Accepted; its last bit reaches the far end of the link at this time.
    Arrives(Time),
    /// Tail-dropped: the buffer had no room.
    Dropped,
}

/// A drop-tail output port and the link behind it.
#[derive(Clone, Debug)]
pub struct OutputPort {
    rate_bps: u64,
    delay: Time,
    /// Capacity in bytes; `u64::MAX` for a host NIC that never drops.
    buffer_bytes: u64,
    /// Capacity in packets, if the buffer counts packets (ns-2 style) rather than bytes.
    buffer_packets: Option<u32>,
    /// When the link finishes sending everything accepted so far.
    busy_until: Time,
    /// (departure time, wire bytes) of each packet still in the buffer, oldest first.
    held: VecDeque<(Time, u32)>,
    occupancy: u64,
    /// Counters.
    pub max_occupancy: u64,
    /// Most packets held at once (Osada et al.'s Q_max).
    pub max_packets: u64,
    pub drops: u64,
    pub dropped_bytes: u64,
    pub sent_packets: u64,
}

impl OutputPort {
    pub fn new(rate_bps: u64, delay: Time, buffer_bytes: u64) -> Self {
        OutputPort {
            rate_bps,
            delay,
            buffer_bytes,
            buffer_packets: None,
            busy_until: Time::ZERO,
            held: VecDeque::new(),
            occupancy: 0,
            max_occupancy: 0,
            max_packets: 0,
            drops: 0,
            dropped_bytes: 0,
            sent_packets: 0,
        }
    }

    /// A port whose buffer holds at most `packets` packets, whatever their size.
    pub fn with_packet_limit(rate_bps: u64, delay: Time, packets: u32) -> Self {
        let mut p = Self::new(rate_bps, delay, u64::MAX);
        p.buffer_packets = Some(packets);
        p
    }

    /// A host's NIC queue: unbounded (the sending host throttles itself rather than drop).
    pub fn unbounded(rate_bps: u64, delay: Time) -> Self {
        Self::new(rate_bps, delay, u64::MAX)
    }

    /// Forget packets whose last bit has left by `now`.
    #[inline]
    fn drain(&mut self, now: Time) {
        while let Some(&(depart, bytes)) = self.held.front() {
            if depart > now {
                break;
            }
            self.occupancy -= bytes as u64;
            self.held.pop_front();
        }
    }

    /// Offer a packet of `wire_bytes` at `now`.
    #[inline]
    pub fn enqueue(&mut self, now: Time, wire_bytes: u32) -> Enqueue {
        self.drain(now);
        let full = match self.buffer_packets {
            Some(limit) => self.held.len() >= limit as usize,
            None => self.occupancy + wire_bytes as u64 > self.buffer_bytes,
        };
        if full {
            self.drops += 1;
            self.dropped_bytes += wire_bytes as u64;
            return Enqueue::Dropped;
        }
        let start = if self.busy_until > now { self.busy_until } else { now };
        let depart = start + serialization_time(wire_bytes as u64, self.rate_bps);
        self.busy_until = depart;
        self.held.push_back((depart, wire_bytes));
        self.occupancy += wire_bytes as u64;
        self.max_occupancy = self.max_occupancy.max(self.occupancy);
        self.max_packets = self.max_packets.max(self.held.len() as u64);
        self.sent_packets += 1;
        Enqueue::Arrives(depart + self.delay)
    }

    /// Bytes held at `now` (for tests and traces).
    pub fn occupancy_at(&mut self, now: Time) -> u64 {
        self.drain(now);
        self.occupancy
    }

    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    const GIG: u64 = 1_000_000_000;

    #[test]
    fn lone_packet_arrives_after_serialization_plus_propagation() {
        let mut p = OutputPort::new(GIG, Time::from_us(25), 32 * 1024);
        assert_eq!(p.enqueue(Time::ZERO, 1500), Enqueue::Arrives(Time::from_us(12 + 25)));
    }

    #[test]
    fn back_to_back_packets_leave_one_serialization_time_apart() {
        let mut p = OutputPort::new(GIG, Time::ZERO, 1 << 20);
        let a = p.enqueue(Time::ZERO, 1500);
        let b = p.enqueue(Time::ZERO, 1500);
        assert_eq!((a, b), (Enqueue::Arrives(Time::from_us(12)), Enqueue::Arrives(Time::from_us(24))));
    }

    #[test]
    fn tail_drop_when_buffer_full_and_never_above_buffer() {
        // 32 KiB holds 21 packets of 1500 B; the 22nd offered at once is dropped.
        let mut p = OutputPort::new(GIG, Time::ZERO, 32 * 1024);
        let outcomes: Vec<_> = (0..22).map(|_| p.enqueue(Time::ZERO, 1500)).collect();
        assert!(outcomes[..21].iter().all(|o| matches!(o, Enqueue::Arrives(_))));
        assert_eq!(outcomes[21], Enqueue::Dropped);
        assert_eq!(p.drops, 1);
        assert_eq!(p.max_occupancy, 21 * 1500);
        assert!(p.max_occupancy <= p.buffer_bytes());
    }

    #[test]
    fn room_frees_when_a_packet_has_left() {
        let mut p = OutputPort::new(GIG, Time::ZERO, 3000);
        p.enqueue(Time::ZERO, 1500);
        p.enqueue(Time::ZERO, 1500);
        assert_eq!(p.enqueue(Time::from_us(11), 1500), Enqueue::Dropped);
        // at 12 us the first packet's last bit has left
        assert_eq!(p.occupancy_at(Time::from_us(12)), 1500);
        assert!(matches!(p.enqueue(Time::from_us(12), 1500), Enqueue::Arrives(_)));
    }

    #[test]
    fn packet_limited_buffer_counts_packets_not_bytes() {
        let mut p = OutputPort::with_packet_limit(GIG, Time::ZERO, 3);
        for _ in 0..3 {
            assert!(matches!(p.enqueue(Time::ZERO, 64), Enqueue::Arrives(_)));
        }
        assert_eq!(p.enqueue(Time::ZERO, 64), Enqueue::Dropped);
        assert_eq!(p.max_packets, 3);
    }

    #[test]
    fn idle_link_starts_at_arrival_not_at_last_departure() {
        let mut p = OutputPort::new(GIG, Time::ZERO, 1 << 20);
        p.enqueue(Time::ZERO, 1500);
        assert_eq!(p.enqueue(Time::from_us(100), 1500), Enqueue::Arrives(Time::from_us(112)));
    }
}
