//! The event queue and its tie rule.
//!
//! **Tie rule.** Events run in order of time; events at the same instant run in the order
//! they were *scheduled*, as in ns-2's and ns-3's schedulers (each event carries the
//! value of a counter taken when it was scheduled; DESIGN.md, "Modelling notes"). What is
//! scheduled when therefore matters, and the world schedules an event when its cause
//! happens: a packet's arrival at the far end of a link when its transmission starts
//! (`net::port`). A link whose transmission ends while packets wait has a "link free"
//! event at that instant, ordered by a counter value *reserved* when that transmission
//! started, which is exactly where ns-3's `TransmitComplete` (scheduled at
//! `TransmitStart`) would run; when nothing waits the event is not needed and never
//! pushed ([`EventQueue::reserve`]).
//!
//! [`TieBreak::Random`] replaces the counter by seeded random draws (an event scheduled for
//! the current instant still runs after the current one: causes precede effects), so how
//! much a result hangs on the order of exactly simultaneous events can be measured
//! (`docs/model.md`, "Tie order").
//!
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990): a discrete-event simulation
//! never schedules into the past, so every key is at least the last one popped, and a key
//! can be filed by the highest bit in which it differs from that last key. Push is O(1);
//! pop scans one bucket and refiles it into lower ones, each key moving at most 128
//! times. It pops in exactly the order a binary heap would, at a fraction of the cost: the
//! binary heap's pop was 42 % of the core's instructions.

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::time::Time;

/// Index of a packet in the [`crate::packet::PacketPool`].
pub type PktId = u32;
/// Index of a flow (one server's connection to the client).
pub type FlowId = u32;
/// Index of an output port (a queue and the link behind it) in the world.
pub type PortId = u32;

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet's last bit reaches the switch.
    ArriveSwitch(PktId),
    /// A packet's last bit reaches the client.
    ArriveClient(PktId),
    /// A packet's last bit reaches a server.
    ArriveServer(PktId),
    /// A port's link finished a transmission and packets wait: start the next one.
    LinkFree(PortId),
    /// A jittered data packet enters its server's NIC (`send_jitter`).
    NicEnter(PktId),
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

/// How events at exactly the same instant are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TieBreak {
    /// In the order they were scheduled (ns-2, ns-3).
    #[default]
    Fifo,
    /// In a seeded random order (a cause still precedes its effects).
    Random,
}

/// (time, order) as one number: time in the high 64 bits, so keys sort as events run.
pub type Key = u128;

/// The key of an event at `time` with tie order `order`.
#[inline]
pub fn key(time: Time, order: u64) -> Key {
    ((time.0 as Key) << 64) | order as Key
}

/// The time part of a key.
#[inline]
pub fn key_time(k: Key) -> Time {
    Time((k >> 64) as u64)
}

/// Buckets 0..=128: bucket b holds keys whose highest bit differing from `last` is b - 1.
const BUCKETS: usize = 129;

/// Pending events, earliest first.
pub struct EventQueue {
    buckets: Vec<Vec<(Key, Event)>>,
    /// Which buckets are not empty, one bit each.
    nonempty: [u64; 3],
    /// The last key popped (the event being processed): every pending key is at least this.
    last: Key,
    len: usize,
    next_seq: u64,
    /// `Some` in [`TieBreak::Random`] mode: the draws that replace the counter.
    random: Option<rand_pcg::Pcg64>,
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
        Self::new(n, TieBreak::Fifo, 0)
    }

    /// A queue with room for about `n` pending events whose ties are broken as `tie` says
    /// (`seed` drives the random order).
    pub fn new(n: usize, tie: TieBreak, seed: u64) -> Self {
        let mut buckets: Vec<Vec<(Key, Event)>> = (0..BUCKETS).map(|_| Vec::new()).collect();
        // events far apart in time land in the high buckets; give those room up front
        for b in &mut buckets[65..] {
            b.reserve(n / 64);
        }
        let random = (tie == TieBreak::Random).then(|| rand_pcg::Pcg64::seed_from_u64(seed ^ 0x7469_6562_7265_616b));
        EventQueue { buckets, nonempty: [0; 3], last: 0, len: 0, next_seq: 0, random, peak: 0 }
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

    /// The tie order for an event scheduled now for `time`.
    #[inline]
    fn next_order(&mut self, time: Time) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let Some(rng) = &mut self.random else { return seq };
        let last_order = self.last as u64;
        if time == key_time(self.last) {
            // after the event being processed, anywhere among the others of this instant
            let room = u64::MAX - last_order;
            last_order.saturating_add(1 + rng.random_range(0..room.max(1)))
        } else {
            rng.random()
        }
    }

    /// A key at `time` (after the event being processed) holding the tie order an event
    /// scheduled now would get, for an event that may be pushed later with
    /// [`EventQueue::push_key`] or never.
    #[inline]
    pub fn reserve(&mut self, time: Time) -> Key {
        key(time, self.next_order(time))
    }

    /// Schedule `event` at `time` (never before the event being processed).
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let k = self.reserve(time);
        self.push_key(k, event);
    }

    /// Schedule `event` at a key from [`EventQueue::reserve`].
    #[inline]
    pub fn push_key(&mut self, key: Key, event: Event) {
        debug_assert!(key >= self.last, "an event scheduled in the past");
        self.file(key, event);
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// The key of the event being processed (the last one popped).
    #[inline]
    pub fn current(&self) -> Key {
        self.last
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
        // bucket 0 holds the keys equal to `last`: one, unless two random draws collided
        let (key, event) = self.buckets[0].pop().expect("the minimum is in bucket 0");
        if self.buckets[0].is_empty() {
            self.nonempty[0] &= !1;
        }
        self.len -= 1;
        Some((key_time(key), event))
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

    #[test]
    fn a_reserved_key_runs_where_an_event_scheduled_at_reservation_would() {
        // ns-3's TransmitComplete is scheduled when the transmission starts; ours is pushed
        // later, when a packet comes to wait, with the order reserved at the start
        let mut q = EventQueue::default();
        let done = q.reserve(Time(12)); // transmission starts at 0, ends at 12
        q.push(Time(12), Event::ArriveServer(1)); // scheduled after the start
        q.push_key(done, Event::LinkFree(0)); // a packet came to wait, later
        assert_eq!(q.pop(), Some((Time(12), Event::LinkFree(0))));
        assert_eq!(q.pop(), Some((Time(12), Event::ArriveServer(1))));
    }

    #[test]
    fn current_is_the_key_of_the_event_being_processed() {
        let mut q = EventQueue::default();
        let k = q.reserve(Time(7));
        q.push_key(k, Event::IctcpSlot);
        q.pop();
        assert_eq!(q.current(), k);
        assert_eq!(key_time(q.current()), Time(7));
    }

    /// The order in which 20 events scheduled at one instant run, under `tie` and `seed`.
    fn order_of_ties(tie: TieBreak, seed: u64) -> Vec<u32> {
        let mut q = EventQueue::new(0, tie, seed);
        for f in 0..20 {
            q.push(Time(5), Event::RtoTimer(f));
        }
        std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::RtoTimer(f) => f,
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn random_tie_break_shuffles_simultaneous_events_and_is_seeded() {
        let a = order_of_ties(TieBreak::Random, 1);
        assert_eq!(a, order_of_ties(TieBreak::Random, 1), "same seed, same order");
        assert_ne!(a, order_of_ties(TieBreak::Random, 2), "another seed, another order");
        assert_ne!(a, (0..20).collect::<Vec<_>>(), "not the insertion order");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>(), "every event runs once");
    }

    #[test]
    fn random_tie_break_keeps_time_order_and_runs_effects_after_their_cause() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let mut q = EventQueue::new(0, TieBreak::Random, 9);
        for f in 0..30 {
            q.push(Time(rng.random_range(0..50)), Event::RtoTimer(f));
        }
        let (mut now, mut popped, mut next) = (Time(0), 0, 30);
        while let Some((t, _)) = q.pop() {
            assert!(t >= now, "time never goes back");
            now = t;
            popped += 1;
            if next < 3_000 {
                // an effect at the same instant: it must still come after this event
                q.push(now, Event::RtoTimer(next));
                q.push(now + Time(rng.random_range(0..20)), Event::RtoTimer(next + 1));
                next += 2;
            }
        }
        assert_eq!(popped, next);
    }
}
