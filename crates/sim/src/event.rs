//! The event queue: a binary heap ordered by (time, insertion sequence), so events at
//! the same instant run in the order they were scheduled. Same inputs, same order,
//! always (DESIGN.md: "Ties broken by insertion sequence").

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Time;

/// Index of a packet in the [`crate::packet::PacketPool`].
pub type PktId = u32;
/// Index of a flow (one server's connection to the client).
pub type FlowId = u32;

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet's last bit reaches the switch.
    ArriveSwitch(PktId),
    /// A packet's last bit reaches the client.
    ArriveClient(PktId),
    /// A packet's last bit reaches a server.
    ArriveServer(PktId),
    /// The retransmission timer of a flow may expire (lazy timer: see `tcp::timer`).
    RtoTimer(FlowId),
    /// The delayed-ACK timer of a flow's receiver may expire.
    DelAckTimer(FlowId),
    /// A server finished its think time and writes its answer to the socket.
    ServerRespond(FlowId),
    /// The client's SYN retransmission timer of a flow may expire.
    SynTimer(FlowId),
    /// A server's UDP background source sends its next datagram.
    UdpSend(FlowId),
    /// The client's ICTCP time slot ends.
    IctcpSlot,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) comes out first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, earliest first.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    /// Most events ever pending at once (memory high-water mark).
    pub peak: usize,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), next_seq: 0, peak: 0 }
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
        self.peak = self.peak.max(self.heap.len());
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_time_comes_first() {
        let mut q = EventQueue::default();
        q.push(Time(30), Event::RtoTimer(3));
        q.push(Time(10), Event::RtoTimer(1));
        q.push(Time(20), Event::RtoTimer(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.0).collect();
        assert_eq!(order, vec![10, 20, 30]);
    }

    #[test]
    fn ties_run_in_insertion_order() {
        let mut q = EventQueue::default();
        for f in 0..100 {
            q.push(Time(5), Event::RtoTimer(f));
        }
        for f in 0..100 {
            assert_eq!(q.pop(), Some((Time(5), Event::RtoTimer(f))));
        }
        assert!(q.is_empty());
    }
}
