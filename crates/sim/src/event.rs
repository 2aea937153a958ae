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
//! The queue is a timing wheel (Varghese and Lauck, 1987) for the near future and a binary
//! heap for the far future. The wheel has 64 slots, one word of occupancy bits, each
//! 2^20 ps (about 1 us) wide or wider, as wide as the links' serialization and propagation
//! need for the wheel to reach them (about 67 us ahead at 2^20 ps;
//! [`EventQueue::with_horizon`]): packets, ACKs and link-free events land in it with an
//! O(1) push; retransmission and delayed-ACK timers lie beyond it and wait in the heap
//! until the wheel reaches them. The next occupied slot is kept as pushes come and found
//! by turning the occupancy word when the wheel moves on; a slot's few events are sorted
//! by key. A radix heap (the previous queue) moved each event through up to ~28 buckets
//! over the ~100 us of pending packet events and spent 45 % of the run in pop; the wheel
//! moves each at most twice (heap -> slot -> current). Wider wheels of up to 4096 slots,
//! as many as the horizon needed, searched several bitmap words on every move; one word
//! with wider slots on slow links costs FAST'08 at one server 4 % less time.

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::time::Time;

/// Index of a packet in the [`crate::packet::PacketPool`].
pub type PktId = u32;
/// Index of a flow (one server's connection to the client).
pub type FlowId = u32;
/// Index of an output port (a queue and the link behind it) in the world.
pub type PortId = u32;

pub use crate::events::Event;

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

/// log2 of the narrowest wheel slot's width in picoseconds: about 1 us, a few packet
/// times at 10 Gbps.
const SLOT_BITS: u32 = 20;
/// Slots in the wheel: one word of occupancy bits. A wheel that must reach further has
/// wider slots, not more of them ([`EventQueue::with_horizon`]).
const SLOTS: usize = 64;

/// A pending event: its key as two words (24 bytes with the event, where a `u128` key's
/// 16-byte alignment made 32), so more of them fit in a cache line.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    order: u64,
    /// [`Event::pack`]ed.
    event: u64,
}

impl Entry {
    #[inline]
    fn key(&self) -> Key {
        key(Time(self.time), self.order)
    }
}

/// An event in the far-future heap, ordered by key alone.
#[derive(Clone, Copy, Debug)]
struct Far(Entry);

impl PartialEq for Far {
    fn eq(&self, o: &Self) -> bool {
        self.0.key() == o.0.key()
    }
}
impl Eq for Far {}
impl PartialOrd for Far {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Far {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.key().cmp(&self.0.key()) // reversed: BinaryHeap pops the largest, we want the earliest
    }
}

/// Sort a slot's few events by key. A slot holds a handful (often one or two), where an
/// insertion sort beats the general sort's set-up; keys are distinct (a counter; or 64-bit
/// random draws, equal with negligible probability), so any correct sort gives the same order.
#[inline(always)]
fn sort_by_key(v: &mut [Entry]) {
    if v.len() > 16 {
        sort_long(v);
        return;
    }
    for i in 1..v.len() {
        let e = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key() > e.key() {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}

/// Sort a slot of many events: a burst's (hundreds at an incast's start), a few runs
/// already in key order, pushed one after another; a merge of runs (the stable sort) beats
/// pdqsort's partitions there. Out of line: rare, and kept off the pop's inlined path.
#[cold]
#[inline(never)]
fn sort_long(v: &mut [Entry]) {
    v.sort_by_key(Entry::key);
}

/// A wheel slot's push that must grow it: rare (slots keep their allocations), so kept
/// out of the common path.
#[cold]
#[inline(never)]
fn grow_and_push(slot: &mut Vec<Entry>, time: u64, order: u64, event: u64) {
    slot.push(Entry { time, order, event });
}

/// Pending events, earliest first.
pub struct EventQueue {
    /// The wheel: slot `a % SLOTS` holds the events of absolute slot `a` (time >> `shift`),
    /// for `a` in (`base`, `base` + SLOTS); unsorted. The slots are as narrow as the near
    /// future allows ([`EventQueue::with_horizon`]), and few: every event filed touches
    /// its slot's vector, and a wheel of 4096 slots missed the first-level cache on most.
    slots: Box<[Vec<Entry>; SLOTS]>,
    /// log2 of a slot's width in picoseconds.
    shift: u32,
    /// Which wheel slots hold events, one bit each.
    occupied: u64,
    /// The absolute slot being processed; its events are `current[head..]`.
    base: u64,
    /// The earliest occupied wheel slot after `base` (absolute; `u64::MAX`: none): found
    /// when the wheel moves on, lowered by pushes, so that the next move reads one word
    /// instead of searching the bitmap on the pop's critical path.
    next: u64,
    /// The events of slot `base`, sorted by key (earliest first); those before `head` have
    /// been popped. A wheel slot's vector is swapped in whole, not copied.
    current: Vec<Entry>,
    head: usize,
    /// Events at or beyond slot `base` + SLOTS.
    far: std::collections::BinaryHeap<Far>,
    /// The slot of the heap's earliest event (`u64::MAX`: none), kept as it changes so
    /// that every move of the wheel does not look into the heap.
    far_slot: u64,
    /// The key of the event being processed: every pending key is above it.
    last: Key,
    len: usize,
    next_seq: u64,
    /// `Some` in [`TieBreak::Random`] mode: the draws that replace the counter.
    random: Option<rand_pcg::Pcg64>,
    /// Most events pending at the start of any pop (see [`EventQueue::peak`]).
    peak: usize,
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
        Self::with_shift(n, tie, seed, SLOT_BITS)
    }

    /// [`EventQueue::new`] with a wheel just wide enough that an event scheduled at most
    /// `horizon` ahead (a packet's arrival at the far end of a link: serialization and
    /// propagation) lands in it; later ones (timers) wait in the heap. Which events go
    /// where changes only the cost, never the order.
    pub fn with_horizon(n: usize, tie: TieBreak, seed: u64, horizon: Time) -> Self {
        // + 2: the current slot, and a horizon that does not start on a slot boundary
        let mut shift = SLOT_BITS;
        while (horizon.0 >> shift) + 2 > SLOTS as u64 {
            shift += 1;
        }
        Self::with_shift(n, tie, seed, shift)
    }

    fn with_shift(n: usize, tie: TieBreak, seed: u64, shift: u32) -> Self {
        let random = (tie == TieBreak::Random).then(|| rand_pcg::Pcg64::seed_from_u64(seed ^ 0x7469_6562_7265_616b));
        EventQueue {
            slots: Box::new(std::array::from_fn(|_| Vec::new())),
            shift,
            occupied: 0,
            base: 0,
            next: u64::MAX,
            current: Vec::with_capacity(64),
            head: 0,
            far: std::collections::BinaryHeap::with_capacity(n),
            far_slot: u64::MAX,
            last: 0,
            len: 0,
            next_seq: 0,
            random,
            peak: 0,
        }
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
    #[inline(always)]
    pub fn push_key(&mut self, key: Key, event: Event) {
        debug_assert!(key >= self.last, "an event scheduled in the past");
        let (time, order) = ((key >> 64) as u64, key as u64);
        // the entry is built where it is stored, from registers: built once for both paths
        // it went through the stack, and its wider reload missed the store buffer
        let ahead = (time >> self.shift).wrapping_sub(self.base).wrapping_sub(1);
        if ahead < SLOTS as u64 - 1 {
            self.next = self.next.min(time >> self.shift);
            self.file_in_wheel(Entry { time, order, event: event.pack() });
        } else {
            self.file_current_or_far(time, order, event);
        }
        self.len += 1;
    }

    /// An event of the current slot, or beyond the wheel's span; out of line, so the
    /// common path of [`EventQueue::push_key`] (a later slot within the wheel's span) stays
    /// small where it is inlined.
    #[inline(never)]
    fn file_current_or_far(&mut self, time: u64, order: u64, event: Event) {
        let e = Entry { time, order, event: event.pack() };
        if self.slot(&e) == self.base {
            // usually the latest of its slot: appended; else inserted among the unpopped
            match self.current.last() {
                Some(b) if b.key() > e.key() => self.insert_current(e),
                _ => self.current.push(e),
            }
        } else {
            self.far_slot = self.far_slot.min(self.slot(&e));
            self.far.push(Far(e));
        }
    }

    /// Insert `e` among the current slot's unpopped events, before its last. An insert
    /// near the front (a short packet's transmission end, a few ns ahead, among the
    /// hundreds of events of an incast's burst) moves the events before it one place into
    /// the room the popped ones left, rather than all those after it.
    #[inline(never)]
    fn insert_current(&mut self, e: Entry) {
        let (head, len) = (self.head, self.current.len());
        let i = head + self.current[head..].partition_point(|c| c.key() < e.key());
        if head > 0 && i - head < len - i {
            self.current.copy_within(head..i, head - 1);
            self.head -= 1;
            self.current[i - 1] = e;
        } else {
            self.current.insert(i, e);
        }
    }

    /// The key of the event being processed (the last one popped).
    #[inline]
    pub fn current(&self) -> Key {
        self.last
    }

    /// An event at `key` would be the next one popped: it falls in the slot being
    /// processed, before every pending event of that slot (later slots and the heap hold
    /// only later keys). False when that cannot be told cheaply (a later slot).
    #[inline]
    pub fn runs_next(&self, key: Key) -> bool {
        debug_assert!(key > self.last, "an event scheduled in the past");
        ((key >> 64) as u64 >> self.shift) == self.base && self.current.get(self.head).is_none_or(|e| e.key() > key)
    }

    /// Make `key` the event being processed, exactly as pushing it and popping it would
    /// (the caller checked [`EventQueue::runs_next`]): the world runs an event that comes
    /// next without filing it.
    #[inline]
    pub fn take_next(&mut self, key: Key) {
        debug_assert!(self.runs_next(key));
        // pushed, it would have been pending at this pop
        self.peak = self.peak.max(self.len + 1);
        self.last = key;
    }

    /// The earliest event, removed. (Inlined in both copies of the world's event loop: a
    /// call returned the event through the stack.)
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = if let Some(&e) = self.current.get(self.head) {
            self.head += 1;
            e
        } else if self.len == 0 {
            return None;
        } else {
            self.advance()
        };
        // pending events grow only between pops: their most is reached at one
        self.peak = self.peak.max(self.len);
        self.len -= 1;
        self.last = e.key();
        Some((Time(e.time), Event::unpack(e.event)))
    }

    /// Move to the next slot that holds events (in the wheel, or the heap's earliest if
    /// that comes first), bring the heap's events that are now within the wheel's span
    /// into it, take the slot's events, sorted, as the current ones, and return the first.
    #[inline(always)]
    fn advance(&mut self) -> Entry {
        self.current.clear();
        self.head = 0;
        let far = self.far_slot;
        debug_assert_eq!(far, self.far.peek().map_or(u64::MAX, |f| self.slot(&f.0)));
        debug_assert_eq!(self.next, self.next_occupied().unwrap_or(u64::MAX));
        self.base = self.next.min(far);
        debug_assert!(self.base != u64::MAX, "len > 0 means some event is pending");
        if far - self.base < SLOTS as u64 {
            self.pull_far();
        }
        let i = self.index(self.base);
        self.occupied &= !(1 << i);
        // the slot after this one, for the next move (pushes may still lower it)
        self.next = self.next_occupied().unwrap_or(u64::MAX);
        let slot = &mut self.slots[i];
        if slot.len() == 1 {
            // a lone event (most slots at low load): taken as it is, `current` stays empty
            let e = slot[0];
            slot.clear();
            return e;
        }
        // the emptied current vector becomes the slot's, keeping both allocations
        std::mem::swap(&mut self.current, slot);
        sort_by_key(&mut self.current);
        self.head = 1;
        self.current[0]
    }

    /// Bring the heap's events that are now within the wheel's span into it; out of line,
    /// so the common `advance` (nothing to bring) stays small.
    #[inline(never)]
    fn pull_far(&mut self) {
        while let Some(&Far(e)) = self.far.peek() {
            if self.slot(&e) - self.base >= SLOTS as u64 {
                break;
            }
            self.far.pop();
            self.file_in_wheel(e);
        }
        self.far_slot = self.far.peek().map_or(u64::MAX, |f| self.slot(&f.0));
    }

    /// File an event of slot `base` or later into the wheel (never the heap).
    #[inline(always)]
    fn file_in_wheel(&mut self, e: Entry) {
        let i = self.index(self.slot(&e));
        self.occupied |= 1 << i;
        let slot = &mut self.slots[i];
        // a push that cannot grow the vector: without the call to grow on its path, the
        // entry goes from registers to the slot, not through a spill and a wider reload
        // (which the store buffer cannot forward)
        if slot.len() < slot.capacity() {
            slot.push(e);
        } else {
            grow_and_push(slot, e.time, e.order, e.event);
        }
    }

    /// The wheel slot of absolute slot `slot`.
    #[inline(always)]
    fn index(&self, slot: u64) -> usize {
        (slot % SLOTS as u64) as usize
    }

    /// The absolute slot of entry `e`.
    #[inline(always)]
    fn slot(&self, e: &Entry) -> u64 {
        e.time >> self.shift
    }

    /// The first occupied wheel slot after `base` (absolute), if any: the occupancy word
    /// turned so that the slot after `base` is its lowest bit.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        let turned = self.occupied.rotate_right(self.index(self.base + 1) as u32);
        (turned != 0).then(|| self.base + 1 + turned.trailing_zeros() as u64)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Most events ever pending at once (memory high-water mark).
    pub fn peak(&self) -> usize {
        self.peak.max(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_entries_stay_24_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 8);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    #[test]
    fn the_wheel_reaches_the_horizon_with_slots_as_narrow_as_they_can_be() {
        let shift = |h: u64| EventQueue::with_horizon(0, TieBreak::Fifo, 0, Time(h)).shift;
        // 25 us of propagation and 12 us of serialization: 37 slots of 2^20 ps, + 2
        assert_eq!(shift(37_000_000), SLOT_BITS);
        // 100 slots of 2^20 ps, + 2, do not fit in 64: 50 + 2 of 2^21 ps do
        assert_eq!(shift(100 << SLOT_BITS), SLOT_BITS + 1);
        assert_eq!(shift(62 << SLOT_BITS), SLOT_BITS);
        assert_eq!(shift(63 << SLOT_BITS), SLOT_BITS + 1);
        assert_eq!(shift(u64::MAX), 59);
    }

    #[test]
    fn peak_is_the_most_events_ever_pending() {
        let mut q = EventQueue::default();
        let mut t = 10;
        for (pushes, pops) in [(3, 2), (4, 4), (2, 0)] {
            for _ in 0..pushes {
                t += 1; // never before the event being processed
                q.push(Time(t), Event::RtoTimer(0));
            }
            for _ in 0..pops {
                q.pop();
            }
        }
        // pending: 3, 1, 5 (the most), 1, 3 (at the end, never popped)
        assert_eq!(q.peak(), 5);
        q.push(Time(99), Event::SynTimer(7));
        q.push(Time(99), Event::SynTimer(7));
        assert_eq!(q.peak(), 5);
        q.push(Time(99), Event::SynTimer(7));
        assert_eq!(q.peak(), 6, "pushes after the last pop count");
    }

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
            if popped < 20_000 {
                for _ in 0..rng.random_range(0..4) {
                    // same instant, next picosecond, a packet time, a slot's width, across
                    // the wheel's span (2^32 ps), a 200 ms timer
                    let offsets = [0, 1, 12_000, 1 << 20, (1 << 20) + 1, 3 << 30, (1 << 32) + 7, 200_000_000_000];
                    let at = now + offsets[rng.random_range(0..offsets.len())];
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
    fn a_burst_slot_with_inserts_near_its_front_pops_as_a_sort_would() {
        // an incast's start: hundreds of events in one slot, filed as a few runs each in
        // key order (the long slot's merge sort), then, as they run, short transmissions'
        // ends scheduled a few ns ahead: inserted near the front (the events before them
        // move into the popped ones' room), near the back, or at the same instant
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(29);
        let mut q = EventQueue::default();
        let mut pending: Vec<(u64, u64)> = vec![];
        let mut seq = 0u64;
        for run in 0..5u64 {
            for k in 0..100u64 {
                let t = 2_000_000 + k * 7_000 + run * 1_300; // slot 1 and 2 (2^20 ps wide)
                q.push(Time(t), Event::RtoTimer(seq as u32));
                pending.push((t, seq));
                seq += 1;
            }
        }
        pending.sort_unstable();
        let (mut popped, mut fronts) = (0, 0);
        while let Some((t, ev)) = q.pop() {
            let (pt, ps) = pending.remove(0);
            assert_eq!((t.0, ev), (pt, Event::RtoTimer(ps as u32)), "pop {popped}");
            popped += 1;
            if popped < 300 {
                let at = t.0 + [0, 1, 51_200, 600_000][rng.random_range(0..4)];
                let i = pending.partition_point(|&p| p < (at, seq));
                fronts += usize::from(i < pending.len() / 2);
                q.push(Time(at), Event::RtoTimer(seq as u32));
                pending.insert(i, (at, seq));
                seq += 1;
            }
        }
        assert!(pending.is_empty() && q.is_empty());
        assert!(fronts > 100, "the front path was taken {fronts} times");
    }

    #[test]
    fn a_reserved_key_runs_where_an_event_scheduled_at_reservation_would() {
        // ns-3's TransmitComplete is scheduled when the transmission starts; ours is pushed
        // later, when a packet comes to wait, with the order reserved at the start
        let mut q = EventQueue::default();
        let done = q.reserve(Time(12)); // transmission starts at 0, ends at 12
        q.push(Time(12), Event::ArriveHost(1)); // scheduled after the start
        q.push_key(done, Event::LinkFree(0)); // a packet came to wait, later
        assert_eq!(q.pop(), Some((Time(12), Event::LinkFree(0))));
        assert_eq!(q.pop(), Some((Time(12), Event::ArriveHost(1))));
    }

    #[test]
    fn a_key_runs_next_only_before_every_pending_event_of_the_current_slot() {
        let mut q = EventQueue::default();
        q.push(Time(10), Event::RtoTimer(0));
        let early = q.reserve(Time(10)); // reserved before the pending one below was pushed
        q.push(Time(10), Event::RtoTimer(1));
        q.push(Time(3 << SLOT_BITS), Event::RtoTimer(2));
        q.pop(); // RtoTimer(0): the current slot now holds RtoTimer(1)
        let late = q.reserve(Time(10));
        assert!(q.runs_next(early), "before the pending event of its instant");
        assert!(!q.runs_next(late), "after it");
        let later = q.reserve(Time(2 << SLOT_BITS));
        assert!(!q.runs_next(later), "a later slot is never told");
    }

    #[test]
    fn taking_the_next_key_leaves_the_queue_as_a_push_and_a_pop_would() {
        let run = |take: bool| {
            let mut q = EventQueue::default();
            q.push(Time(10), Event::RtoTimer(0));
            q.push(Time(50), Event::RtoTimer(1));
            q.pop();
            let k = q.reserve(Time(10));
            q.push(Time(20), Event::RtoTimer(2));
            if take {
                assert!(q.runs_next(k));
                q.take_next(k);
            } else {
                q.push_key(k, Event::LinkFree(9));
                assert_eq!(q.pop(), Some((Time(10), Event::LinkFree(9))));
            }
            let current = q.current();
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            (current, q.peak(), rest)
        };
        assert_eq!(run(true), run(false));
    }

    #[test]
    fn current_is_the_key_of_the_event_being_processed() {
        let mut q = EventQueue::default();
        let k = q.reserve(Time(7));
        q.push_key(k, Event::SynTimer(7));
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

    /// What a step of the property test does: pop, or schedule an event this far ahead
    /// (now, or at a key reserved now and pushed a few steps later).
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Pop,
        Push(u64),
        Reserve(u64),
    }

    /// Offsets that hit every path: the same instant, within the current ~1 us slot, the
    /// next slot, past the narrowest wheel's 2^26 ps span (to the far heap; a wheel of
    /// 2^26 ps slots reaches 2^32 ps), and a 200 ms timer.
    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let offset = prop_oneof![
            Just(0u64),
            0u64..(1 << 20),
            (1u64 << 20)..(1 << 22),
            (1u64 << 31)..(1 << 33),
            Just(200_000_000_000u64),
        ];
        prop_oneof![
            3 => Just(Op::Pop),
            4 => offset.clone().prop_map(Op::Push),
            1 => offset.prop_map(Op::Reserve),
        ]
    }

    /// Run `ops` on the queue and on a reference binary heap keyed by the keys the queue
    /// hands out (as the radix heap and the binary heap before it were): both must pop the
    /// same events in the same order.
    fn same_as_reference_heap(ops: &[Op], tie: TieBreak, seed: u64, shift: u32) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = EventQueue::with_shift(0, tie, seed, shift);
        let mut reference = BinaryHeap::new();
        let mut reserved: Vec<(Key, u32)> = vec![];
        let (mut now, mut id) = (0u64, 0u32);
        // a reserved key is pushed a few steps later, or at the end, as a link-free event is
        // when a packet comes to wait
        type Reference = BinaryHeap<Reverse<(Key, u32)>>;
        fn push_reserved(q: &mut EventQueue, r: &mut Reference, v: &mut Vec<(Key, u32)>, all: bool) {
            while v.len() > usize::from(!all) * 2 {
                let (k, i) = v.remove(0);
                // a key whose instant has passed is never pushed (a link that went idle)
                if k > q.current() {
                    q.push_key(k, Event::LinkFree(i));
                    r.push(Reverse((k, i)));
                }
            }
        }
        for &op in ops.iter().chain(std::iter::repeat_n(&Op::Pop, ops.len() + 8)) {
            match op {
                Op::Push(dt) => {
                    let k = q.reserve(Time(now + dt));
                    q.push_key(k, Event::RtoTimer(id));
                    reference.push(Reverse((k, id)));
                    id += 1;
                }
                Op::Reserve(dt) => {
                    reserved.push((q.reserve(Time(now + dt)), id));
                    id += 1;
                }
                Op::Pop => {
                    push_reserved(&mut q, &mut reference, &mut reserved, false);
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((k, i))| (k, i));
                    match (got, want) {
                        (None, None) => push_reserved(&mut q, &mut reference, &mut reserved, true),
                        (Some((t, e)), Some((k, i))) => {
                            let gid = match e {
                                Event::RtoTimer(g) | Event::LinkFree(g) => g,
                                _ => unreachable!(),
                            };
                            assert_eq!((t, gid), (key_time(k), i));
                            assert_eq!(q.current(), k);
                            now = t.0;
                        }
                        (g, w) => panic!("queue {g:?}, reference {w:?}"),
                    }
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        assert!(q.is_empty() && reserved.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn pops_as_a_reference_binary_heap_does(ops in proptest::collection::vec(op(), 0..400)) {
            same_as_reference_heap(&ops, TieBreak::Fifo, 0, SLOT_BITS);
        }

        #[test]
        fn pops_as_a_reference_binary_heap_does_under_random_ties(
            ops in proptest::collection::vec(op(), 0..400), seed in 0u64..1_000,
        ) {
            same_as_reference_heap(&ops, TieBreak::Random, seed, SLOT_BITS);
        }

        #[test]
        fn a_wide_wheel_pops_as_a_reference_binary_heap_does(
            ops in proptest::collection::vec(op(), 0..400), random in proptest::bool::ANY,
        ) {
            // slots of 2^26 ps span 2^32 ps: most offsets of `op` land in the slot being
            // processed or the next, many events share a slot and are sorted
            let tie = if random { TieBreak::Random } else { TieBreak::Fifo };
            same_as_reference_heap(&ops, tie, 5, 26);
        }
    }
}
