//! Switch buffers beyond a port's own static one: a pool the ports of one switch share, with
//! dynamic queue thresholds, and the hook an output port consults when it has one of these
//! or QoS classes (`net::qos`).
//!
//! FAST'08 (`000_315d806dde942a9f.txt` §4.1): "most switches dynamically allocate each
//! link's output buffer from a shared memory pool". The rule such switches use is
//! Choudhury & Hahne's dynamic threshold (DT; "Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM Trans. Networking 6(2), 1998): with B
//! bytes of memory of which Q(t) are held by all queues, a queue may grow while its length
//! is below T(t) = alpha x (B - Q(t)); a packet arriving at a queue at or above T is
//! dropped. One congested queue alone then settles where q = alpha (B - q), at
//! alpha / (1 + alpha) of the pool (B/2 for alpha = 1), and the rest stays free for the
//! others.
//!
//! A packet holds its bytes from its admission until its last bit has left the port, the
//! packet on the wire included, as the static `Admission::Bytes` counts them; the queue
//! length compared with T is the port's bytes held on the same terms. A pool learns when a
//! packet leaves from its port at the moment its transmission starts (its end is known
//! then) and settles what has left lazily, so no event is spent on it.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::port::OutputPort;
use super::qos::{ClassScheduler, Classes};
use crate::event::PktId;
use crate::scenario::Scenario;
use crate::time::Time;

/// How a switch's ports get their buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferSharing {
    /// Each port its own `buffer_bytes` (FAST'08's ns-2 runs).
    #[default]
    Static,
    /// One pool per switch, dynamic thresholds (Choudhury & Hahne).
    Dynamic,
}

/// The buffers of a switch as a scenario sets them: made once per switch, applied to each
/// of its ports.
pub struct SwitchBuffers {
    pool: Option<PoolRef>,
    classes: u32,
    port_bytes: u64,
    scheduler: ClassScheduler,
    /// One per class (`qos_weights`, equal when unset).
    weights: Vec<u64>,
    /// DRR's quantum: one full packet, so every turn of a backlogged class sends.
    quantum: u64,
}

impl SwitchBuffers {
    pub fn of(sc: &Scenario) -> Self {
        let s = &sc.spec;
        let pool = sc.buffer_pool_bytes.map(|b| SharedPool::shared(b, s.dt_alpha));
        let weights = match &s.qos_weights {
            Some(w) => w.iter().map(|&w| w as u64).collect(),
            None => vec![1; s.qos_classes as usize],
        };
        let quantum = (s.mss_bytes + s.header_bytes) as u64;
        let (classes, port_bytes, scheduler) = (s.qos_classes, s.buffer_bytes, s.qos_scheduler);
        SwitchBuffers { pool, classes, port_bytes, scheduler, weights, quantum }
    }

    /// A host NIC's queues under PFC: one unbounded FIFO per class, scheduled as the
    /// switch ports are (a DCB host's per-priority transmit queues), so a paused class
    /// holds only its own packets.
    pub fn nic_classes(&self) -> PortBuffer {
        let n = self.classes as usize;
        let classes = Classes::new(vec![u64::MAX; n], self.scheduler, &self.weights, self.quantum);
        PortBuffer { pool: None, classes: Some(classes) }
    }

    /// The static limit a port keeps: its buffer, or none when the pool decides.
    pub fn static_bytes(&self) -> u64 {
        if self.pool.is_some() {
            u64::MAX
        } else {
            self.port_bytes
        }
    }

    /// `port` with its share of the pool or its classes, if the scenario has either. The
    /// incast's packets are in class 0: FAST'08's storage traffic is one class of service,
    /// so QoS leaves it the class's 1/n of the port (§4.1, docs/model.md "Switch buffers");
    /// only the victim may be put in another (`victim_class`).
    pub fn fit(&self, port: OutputPort) -> OutputPort {
        let n = self.classes as usize;
        let classes = (n > 1).then(|| {
            Classes::new(vec![self.port_bytes / n as u64; n], self.scheduler, &self.weights, self.quantum)
        });
        if self.pool.is_none() && classes.is_none() {
            return port;
        }
        port.with_buffer(PortBuffer { pool: self.pool.clone(), classes })
    }
}

/// The memory one switch's ports share.
#[derive(Clone, Debug)]
pub struct SharedPool {
    capacity: u64,
    alpha: f64,
    /// Bytes admitted and not yet known to have left.
    held: u64,
    /// (when its last bit leaves, bytes) of every packet on a wire.
    leaving: BinaryHeap<Reverse<(Time, u64)>>,
    /// Most bytes held at once.
    pub max_held: u64,
}

/// One pool, shared by the ports of its switch (each holds a reference; the world owns
/// the ports).
pub type PoolRef = Rc<RefCell<SharedPool>>;

impl SharedPool {
    /// A pool of `capacity` bytes whose queues may each grow to `alpha` x the free memory.
    pub fn new(capacity: u64, alpha: f64) -> Self {
        assert!(alpha > 0.0 && alpha.is_finite(), "dt_alpha is validated above zero");
        SharedPool { capacity, alpha, held: 0, leaving: BinaryHeap::new(), max_held: 0 }
    }

    /// A pool for the ports of one switch to share.
    pub fn shared(capacity: u64, alpha: f64) -> PoolRef {
        Rc::new(RefCell::new(Self::new(capacity, alpha)))
    }

    /// Release the packets whose last bit has left by `now`.
    fn settle(&mut self, now: Time) {
        while let Some(&Reverse((t, bytes))) = self.leaving.peek() {
            if t > now {
                break;
            }
            self.leaving.pop();
            self.held -= bytes;
        }
    }

    /// Bytes held at `now`, every port's together.
    pub fn held_at(&mut self, now: Time) -> u64 {
        self.settle(now);
        self.held
    }

    /// Choudhury-Hahne's threshold at `now`: alpha x (B - Q).
    pub fn threshold_at(&mut self, now: Time) -> f64 {
        self.alpha * (self.capacity - self.held_at(now)) as f64
    }

    /// A packet of `wire` bytes offered at `now` to a queue holding `queue_bytes` enters if
    /// the queue is below the threshold and the packet fits in the free memory.
    pub fn admits(&mut self, now: Time, queue_bytes: u64, wire: u32) -> bool {
        let free = self.capacity - self.held_at(now);
        wire as u64 <= free && (queue_bytes as f64) < self.alpha * free as f64
    }

    /// A packet of `wire` bytes was admitted.
    pub fn admit(&mut self, wire: u32) {
        self.held += wire as u64;
        self.max_held = self.max_held.max(self.held);
    }

    /// A packet of `wire` bytes started its transmission; its last bit leaves at `end`.
    pub fn leaves_at(&mut self, end: Time, wire: u32) {
        self.leaving.push(Reverse((end, wire as u64)));
    }
}

/// What an output port has beyond its static FIFO buffer: a share of its switch's pool,
/// QoS classes, or both. The port consults it only when it has one (`port::OutputPort`),
/// so the static buffer's hot path pays one untaken branch.
#[derive(Clone, Debug, Default)]
pub struct PortBuffer {
    pub pool: Option<PoolRef>,
    pub classes: Option<Classes>,
}

impl PortBuffer {
    /// A packet of class `class` and `wire` bytes, offered at `now` to a port holding
    /// `held` bytes of which `on_wire` are on the wire, may enter.
    pub fn admits(&self, now: Time, held: u64, on_wire: u64, wire: u32, class: usize) -> bool {
        self.classes.as_ref().is_none_or(|c| c.admits(class, on_wire, wire))
            && self.pool.as_ref().is_none_or(|p| p.borrow_mut().admits(now, held, wire))
    }

    /// The packet was admitted.
    pub fn admit(&mut self, wire: u32) {
        if let Some(p) = &self.pool {
            p.borrow_mut().admit(wire);
        }
    }

    /// A packet of class `class` and `wire` bytes started its transmission, ending at `end`.
    pub fn started(&mut self, end: Time, wire: u32, class: usize) {
        if let Some(p) = &self.pool {
            p.borrow_mut().leaves_at(end, wire);
        }
        if let Some(c) = &mut self.classes {
            c.on_wire_class = class;
        }
    }

    /// Queue a waiting packet in its class (a port without classes keeps its FIFO).
    pub fn push(&mut self, class: usize, id: PktId, wire: u32) {
        if let Some(c) = &mut self.classes {
            c.push(class, id, wire);
        }
    }

    /// The packet the classes `eligible` lets send send next, with its bytes and class;
    /// `None` without classes.
    pub fn pop_where(&mut self, eligible: impl Fn(usize) -> bool) -> Option<(PktId, u32, usize)> {
        self.classes.as_mut().map(|c| c.pop_where(eligible))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dt_admits_while_the_queue_is_below_alpha_times_the_free_memory_choudhury_hahne() {
        // B = 100,000 B, another port holds 40,000 B: free = 60,000 B. With alpha = 1 a
        // queue of 59,999 B is below T = 60,000 and admits; at 60,000 it is not below T.
        let mut p = SharedPool::new(100_000, 1.0);
        p.admit(40_000);
        assert_eq!(p.threshold_at(Time::ZERO), 60_000.0);
        assert!(p.admits(Time::ZERO, 59_999, 100));
        assert!(!p.admits(Time::ZERO, 60_000, 100));
        // alpha = 0.5: T = 30,000; alpha = 2: T = 120,000, but a packet must still fit in
        // the free memory
        let mut half = SharedPool::new(100_000, 0.5);
        half.admit(40_000);
        assert!(half.admits(Time::ZERO, 29_999, 1500) && !half.admits(Time::ZERO, 30_000, 1500));
        let mut two = SharedPool::new(100_000, 2.0);
        two.admit(40_000);
        assert!(two.admits(Time::ZERO, 0, 60_000));
        assert!(!two.admits(Time::ZERO, 0, 60_001), "60,000 B free");
    }

    #[test]
    fn one_queue_alone_settles_at_alpha_over_one_plus_alpha_of_the_pool() {
        // q admits while q < alpha (B - q): the queue's fill stops once q >= alpha B / (1 + alpha)
        for (alpha, settle) in [(1.0, 50_000), (3.0, 75_000), (0.25, 20_000)] {
            let mut p = SharedPool::new(100_000, alpha);
            let mut q = 0;
            while p.admits(Time::ZERO, q, 500) {
                p.admit(500);
                q += 500;
            }
            assert_eq!(q, settle, "alpha {alpha}");
        }
    }

    /// Offer `n` packets of `wire` bytes to `port` at `t` (order keys from `o`); how many entered.
    fn fill(port: &mut OutputPort, t: Time, n: u32, wire: u32, class: usize, o: &mut u64) -> u64 {
        (0..n)
            .filter(|&i| {
                *o += 2;
                let done = *o + 1;
                let now = crate::event::key(t, *o);
                let offer = port.offer_in_class(now, i, wire, class, |end| crate::event::key(end, done));
                !matches!(offer, crate::net::Offer::Dropped)
            })
            .count() as u64
    }

    #[test]
    fn ports_sharing_a_pool_take_what_the_threshold_leaves_them() {
        // B = 30,000 B, alpha = 1, 1500 B packets, the packet on the wire counted. Port A
        // alone: admits while q_A < 30,000 - q_A, i.e. q_A < 15,000: 10 packets. Port B then
        // sees free = 15,000: admits while q_B < 15,000 - q_B, i.e. q_B < 7,500: 5 packets.
        let pool = SharedPool::shared(30_000, 1.0);
        let port = |p: &PoolRef| {
            let share = PortBuffer { pool: Some(p.clone()), classes: None };
            OutputPort::unbounded(1_000_000_000, Time::ZERO).with_buffer(share)
        };
        let (mut a, mut b, mut o) = (port(&pool), port(&pool), 0);
        assert_eq!(fill(&mut a, Time::ZERO, 20, 1500, 0, &mut o), 10);
        assert_eq!(fill(&mut b, Time::ZERO, 20, 1500, 0, &mut o), 5);
        assert_eq!(pool.borrow_mut().held_at(Time::ZERO), 22_500);
        // the first packets of A and of B, each on its own link, leave at 12 us (1500 B at
        // 1 Gbps): their bytes return to the pool
        assert_eq!(pool.borrow_mut().held_at(Time::from_us(12)), 19_500);
        assert_eq!(a.drops, 10);
    }

    #[test]
    fn qos_classes_in_a_port_each_take_their_share_of_its_buffer() {
        // a 32 KiB port in 4 classes: 8192 B each, 5 packets of 1500 B, the one on the wire
        // included; class 2 still takes 5 more
        let classes = Classes::equal_split(4, 32 * 1024);
        let extra = PortBuffer { pool: None, classes: Some(classes) };
        let mut p = OutputPort::new(1_000_000_000, Time::ZERO, 32 * 1024).with_buffer(extra);
        let mut o = 0;
        assert_eq!(fill(&mut p, Time::ZERO, 10, 1500, 0, &mut o), 5);
        assert_eq!(fill(&mut p, Time::ZERO, 10, 1500, 2, &mut o), 5);
        assert_eq!(p.waiting_packets(), 9, "one of the ten is on the wire");
        // a packet of no bytes (header_bytes 0, a bare ACK) still takes the classes' path
        assert_eq!(fill(&mut p, Time::ZERO, 1, 0, 3, &mut o), 1);
        assert_eq!(p.waiting_packets(), 10);
    }

    #[test]
    fn memory_returns_when_the_last_bit_has_left() {
        let mut p = SharedPool::new(3000, 1.0);
        p.admit(1500);
        p.admit(1500);
        p.leaves_at(Time::from_us(12), 1500);
        p.leaves_at(Time::from_us(24), 1500);
        assert_eq!(p.held_at(Time::from_us(11)), 3000);
        assert_eq!(p.held_at(Time::from_us(12)), 1500, "a packet has left when its last bit has");
        assert_eq!(p.held_at(Time::from_us(30)), 0);
        assert_eq!(p.max_held, 3000);
    }
}
