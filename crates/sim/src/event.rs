//! The event queue, ordered by (time, insertion sequence), so events at the same
//! instant run in the order they were scheduled. Same inputs, same order, always
//! (DESIGN.md: "Ties broken by insertion sequence").
//!
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990): a discrete-event simulation
//! never schedules into the past, so every key is at least the last one popped, and a key
//! can be filed by the highest bit in which it differs from that last key. Push is O(1);
//! pop scans one bucket and refiles it into lower ones, each key moving at most 128
//! times. It pops in exactly the order a binary heap would (keys are unique), at a
//! fraction of the cost: the binary heap's pop was 42 % of the core's instructions.

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

/// (time, sequence) as one number: time in the high 64 bits, so the order is the same.
type Key = u128;

/// Buckets 0..=128: bucket b holds keys whose highest bit differing from `last` is b - 1.
const BUCKETS: usize = 129;

/// Pending events, earliest first.
pub struct EventQueue {
    buckets: Vec<Vec<(Key, Event)>>,
    /// Which buckets are not empty, one bit each.
    nonempty: [u64; 3],
    /// The last key popped: every pending key is at least this.
    last: Key,
    len: usize,
    next_seq: u64,
    /// Most events ever pending at once (memory high-water mark).
    pub peak: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        let mut buckets: Vec<Vec<(Key, Event)>> = (0..BUCKETS).map(|_| Vec::new()).collect();
        // events far apart in time land in the high buckets; give those room up front
        for b in &mut buckets[65..] {
            b.reserve(n / 64);
        }
        EventQueue { buckets, nonempty: [0; 3], last: 0, len: 0, next_seq: 0, peak: 0 }
    }

    #[inline]
    fn bucket_of(&self, key: Key) -> usize {
        (128 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn file(&mut self, key: Key, event: Event) {
        let b = self.bucket_of(key);
        self.buckets[b].push((key, event));
        self.nonempty[b / 64] |= 1 << (b % 64);
    }

    /// Schedule `event` at `time` (never before the event being processed).
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let key = ((time.0 as Key) << 64) | self.next_seq as Key;
        debug_assert!(key >= self.last, "an event scheduled in the past");
        self.next_seq += 1;
        self.file(key, event);
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            // the smallest key is in the lowest non-empty bucket: make it `last` and
            // refile that bucket below it (its minimum lands in bucket 0)
            let b = self.lowest_nonempty();
            let mut moving = std::mem::take(&mut self.buckets[b]);
            self.nonempty[b / 64] &= !(1 << (b % 64));
            self.last = moving.iter().map(|&(k, _)| k).min().expect("a non-empty bucket");
            for &(k, e) in &moving {
                self.file(k, e);
            }
            moving.clear();
            self.buckets[b] = moving; // keep its capacity
        }
        // keys are unique, so bucket 0 (keys equal to `last`) holds exactly one
        let (key, event) = self.buckets[0].pop().expect("the minimum is in bucket 0");
        self.nonempty[0] &= !1;
        self.len -= 1;
        Some((Time((key >> 64) as u64), event))
    }

    #[inline]
    fn lowest_nonempty(&self) -> usize {
        let w = self.nonempty.iter().position(|&w| w != 0).expect("len > 0 means some bucket holds a key");
        w * 64 + self.nonempty[w].trailing_zeros() as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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

    #[test]
    fn pops_in_time_then_insertion_order_when_pushes_interleave_with_pops() {
        // what the simulator does: pop the earliest event, schedule a few at or after it
        // (same instant, next packet time, a timer far ahead); checked against a sort
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut pending: Vec<(u64, u64)> = vec![]; // (time, seq)
        let mut seq = 0u64;
        for _ in 0..50 {
            let t = rng.random_range(0..1_000);
            q.push(Time(t), Event::RtoTimer(seq as u32));
            pending.push((t, seq));
            seq += 1;
        }
        let (mut now, mut popped) = (0u64, 0);
        while let Some((t, ev)) = q.pop() {
            pending.sort_unstable();
            let (pt, ps) = pending.remove(0);
            assert_eq!((t.0, ev), (pt, Event::RtoTimer(ps as u32)));
            assert!(t.0 >= now);
            now = t.0;
            popped += 1;
            if popped < 5_000 {
                for _ in 0..rng.random_range(0..4) {
                    let at = now + [0, 1, 12_000, 200_000_000_000][rng.random_range(0..4)];
                    q.push(Time(at), Event::RtoTimer(seq as u32));
                    pending.push((at, seq));
                    seq += 1;
                }
            }
        }
        assert!(pending.is_empty() && q.is_empty() && q.len() == 0);
        assert!(popped > 1_000, "{popped}");
    }
}
