//! QoS classes partitioning one output port: each class its own FIFO with its own byte
//! limit, a static share of the port's buffer, served by strict priority or by weighted
//! round robin in bytes.
//!
//! FAST'08 (`000_315d806dde942a9f.txt` §4.1): "A common implementation technique for
//! providing QoS is to partition the output queue for each class of service. As a result,
//! disabling QoS increases the effective size of the output queues". A class holds a
//! packet if its bytes, the class's packet on the wire included, fit in the class's limit
//! (as `Admission::Bytes` counts a whole port).
//!
//! Weighted round robin is deficit round robin (Shreedhar & Varghese, "Efficient fair
//! queueing using deficit round robin", SIGCOMM 1995): at each turn a backlogged class is
//! credited `weight x quantum` bytes and sends its packets while they fit in its credit, so
//! over a long backlog the classes' shares of the bytes sent are their weights' shares,
//! whatever the packet sizes, to within one packet. Strict priority serves class 0 first,
//! then class 1, and so on.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::event::PktId;

/// How the classes of a port share its link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassScheduler {
    /// The lowest-numbered backlogged class sends; the others wait.
    #[default]
    #[serde(rename = "strict")]
    Sp,
    /// Deficit round robin over the backlogged classes, by bytes, per-class weights.
    Wrr,
}

/// The classes of one port.
#[derive(Clone, Debug)]
pub struct Classes {
    queues: Vec<VecDeque<(PktId, u32)>>,
    /// Waiting bytes of each class.
    bytes: Vec<u64>,
    /// Bytes each class may hold, its packet on the wire included.
    limits: Vec<u64>,
    scheduler: ClassScheduler,
    /// Bytes a class is credited at each of its turns (weight x quantum).
    credit: Vec<u64>,
    deficit: Vec<u64>,
    /// The class whose turn it is, and whether it has been credited for this turn.
    turn: usize,
    credited: bool,
    len: usize,
    /// The class of the packet on the wire (or the last one sent).
    pub on_wire_class: usize,
}

impl Classes {
    /// Classes with these byte limits; under `Wrr` class i is credited `weights[i] x
    /// quantum` bytes per turn (a quantum of at least one MTU lets every turn send).
    pub fn new(limits: Vec<u64>, scheduler: ClassScheduler, weights: &[u64], quantum: u64) -> Self {
        let n = limits.len();
        assert!(n >= 1 && weights.len() == n && weights.iter().all(|&w| w >= 1), "one weight of at least 1 per class");
        Classes {
            queues: vec![VecDeque::new(); n],
            bytes: vec![0; n],
            limits,
            scheduler,
            credit: weights.iter().map(|w| w * quantum).collect(),
            deficit: vec![0; n],
            turn: 0,
            credited: false,
            len: 0,
            on_wire_class: 0,
        }
    }

    /// `n` classes sharing `buffer_bytes` equally (the remainder unused), strict priority.
    pub fn equal_split(n: usize, buffer_bytes: u64) -> Self {
        Self::new(vec![buffer_bytes / n as u64; n], ClassScheduler::Sp, &vec![1; n], 1)
    }

    pub fn count(&self) -> usize {
        self.limits.len()
    }

    pub fn limit(&self, class: usize) -> u64 {
        self.limits[class]
    }

    /// Packets waiting in all classes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A packet of `wire` bytes fits in `class`, beside its waiting bytes and, if the port's
    /// `on_wire` bytes are of this class, the packet on the wire.
    pub fn admits(&self, class: usize, on_wire: u64, wire: u32) -> bool {
        let mine = if self.on_wire_class == class { on_wire } else { 0 };
        self.bytes[class] + mine + wire as u64 <= self.limits[class]
    }

    pub fn push(&mut self, class: usize, id: PktId, wire: u32) {
        self.queues[class].push_back((id, wire));
        self.bytes[class] += wire as u64;
        self.len += 1;
    }

    /// The next packet to send, with its bytes and class. Only while packets wait.
    pub fn pop(&mut self) -> (PktId, u32, usize) {
        self.pop_where(|_| true)
    }

    /// Packets of `class` wait.
    pub fn backlogged(&self, class: usize) -> bool {
        !self.queues[class].is_empty()
    }

    /// The next packet to send from the classes `eligible` lets send (802.1Qbb: a paused
    /// class is skipped, the others are scheduled as if it were empty, its DRR credit
    /// kept). Only while an eligible class has a packet.
    pub fn pop_where(&mut self, eligible: impl Fn(usize) -> bool) -> (PktId, u32, usize) {
        let class = match self.scheduler {
            ClassScheduler::Sp => {
                (0..self.queues.len()).find(|&c| !self.queues[c].is_empty() && eligible(c)).expect("a packet waits")
            }
            ClassScheduler::Wrr => self.drr_class(eligible),
        };
        let (id, wire) = self.queues[class].pop_front().expect("the chosen class has a packet");
        self.bytes[class] -= wire as u64;
        self.len -= 1;
        (id, wire, class)
    }

    /// Deficit round robin: the class that sends next; its deficit is charged.
    fn drr_class(&mut self, eligible: impl Fn(usize) -> bool) -> usize {
        assert!((0..self.queues.len()).any(|c| self.backlogged(c) && eligible(c)), "a packet waits");
        loop {
            let c = self.turn;
            if !eligible(c) {
                // paused: it keeps its deficit, as a backlogged class does between turns
            } else if let Some(&(_, wire)) = self.queues[c].front() {
                if !self.credited {
                    self.deficit[c] += self.credit[c];
                    self.credited = true;
                }
                if wire as u64 <= self.deficit[c] {
                    self.deficit[c] -= wire as u64;
                    if self.queues[c].len() == 1 {
                        // an emptied class keeps no credit (DRR: deficit reset when idle)
                        self.deficit[c] = 0;
                        self.next_turn();
                    }
                    return c;
                }
            } else {
                self.deficit[c] = 0;
            }
            self.next_turn();
        }
    }

    fn next_turn(&mut self) {
        self.turn = (self.turn + 1) % self.queues.len();
        self.credited = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes each class sends over the first `packets` packets of a long backlog.
    fn shares(c: &mut Classes, packets: usize) -> Vec<u64> {
        let mut sent = vec![0; c.count()];
        for _ in 0..packets {
            let (_, wire, class) = c.pop();
            sent[class] += wire as u64;
        }
        sent
    }

    #[test]
    fn wrr_three_to_one_gives_75_and_25_percent_of_bytes_within_one_packet() {
        // weights 3:1, quantum 1500 B: class 0 sends 1500 B packets, class 1 sends 500 B
        // packets; per round class 0 sends 4500 B (3 packets), class 1 1500 B (3 packets)
        let mut c = Classes::new(vec![u64::MAX; 2], ClassScheduler::Wrr, &[3, 1], 1500);
        for i in 0..10_000 {
            c.push(0, i, 1500);
            c.push(1, 10_000 + i, 500);
        }
        for packets in [6, 60, 601, 6007] {
            let sent = shares(&mut c.clone(), packets);
            let total = (sent[0] + sent[1]) as f64;
            let want0 = 0.75 * total;
            assert!((sent[0] as f64 - want0).abs() <= 1500.0, "{packets} packets: {sent:?}, want {want0} B in class 0");
        }
        let sent = shares(&mut c, 6);
        assert_eq!(sent, vec![4500, 1500], "one round exactly");
    }

    #[test]
    fn wrr_with_equal_weights_alternates_and_an_idle_class_keeps_no_credit() {
        let mut c = Classes::new(vec![u64::MAX; 2], ClassScheduler::Wrr, &[1, 1], 1500);
        for i in 0..4 {
            c.push(0, i, 1500);
        }
        // class 1 idle: class 0 sends everything
        assert_eq!((0..4).map(|_| c.pop().2).collect::<Vec<_>>(), [0, 0, 0, 0]);
        for i in 0..2 {
            c.push(0, 10 + i, 1500);
            c.push(1, 20 + i, 1500);
        }
        let order: Vec<usize> = (0..4).map(|_| c.pop().2).collect();
        assert!(order == [0, 1, 0, 1] || order == [1, 0, 1, 0], "{order:?}");
    }

    #[test]
    fn strict_priority_starves_the_low_class_while_the_high_one_is_backlogged() {
        let mut c = Classes::new(vec![u64::MAX; 3], ClassScheduler::Sp, &[1, 1, 1], 1);
        for i in 0..5 {
            c.push(2, 100 + i, 1500);
            c.push(1, i, 1500);
        }
        assert_eq!((0..5).map(|_| c.pop().2).collect::<Vec<_>>(), [1; 5]);
        c.push(0, 50, 64);
        assert_eq!(c.pop(), (50, 64, 0), "a higher class overtakes at once");
        let low: Vec<usize> = (0..5).map(|_| c.pop().2).collect();
        assert_eq!(low, [2; 5], "the low class sends once the others are empty");
        assert!(c.is_empty());
    }

    #[test]
    fn a_class_that_may_not_send_is_skipped_and_the_others_served() {
        // 802.1Qbb: a paused priority stops; the scheduler serves the rest
        for scheduler in [ClassScheduler::Sp, ClassScheduler::Wrr] {
            let mut c = Classes::new(vec![u64::MAX; 2], scheduler, &[1, 1], 1500);
            for i in 0..3 {
                c.push(0, i, 1500);
                c.push(1, 10 + i, 1500);
            }
            let sent: Vec<usize> = (0..3).map(|_| c.pop_where(|k| k != 0).2).collect();
            assert_eq!(sent, [1, 1, 1], "{scheduler:?}");
            assert!(c.backlogged(0) && !c.backlogged(1));
            assert_eq!(c.pop_where(|_| true).2, 0);
        }
    }

    #[test]
    fn each_class_holds_only_its_own_limit_with_its_packet_on_the_wire() {
        // 32 KiB split in 4: 8192 B each, 5 full packets (7500 B) but not 6
        let mut c = Classes::equal_split(4, 32 * 1024);
        assert_eq!(c.limit(0), 8192);
        let admitted = (0..10).take_while(|&i| {
            let ok = c.admits(0, 0, 1500);
            if ok {
                c.push(0, i, 1500);
            }
            ok
        });
        assert_eq!(admitted.count(), 5);
        assert!(c.admits(1, 0, 1500), "class 1 has its own room");
        // a class-1 packet on the wire counts against class 1, not class 0
        c.on_wire_class = 1;
        assert!(c.admits(0, 1500, 692), "7500 + 692 = 8192 fits class 0");
        assert!(!c.admits(1, 7000, 1500), "7000 on the wire + 1500 > 8192");
    }
}
