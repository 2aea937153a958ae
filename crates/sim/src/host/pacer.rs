//! A receiving host's pull pacer, shared by the flows that send to it: NDP's pull queue
//! (Handley et al., SIGCOMM 2017, §3.2) and the credit scheduler of receiver-credit
//! transports (EQDS, Olteanu et al., NSDI 2022, §4; UEC's receiver credit).
//!
//! The receiver owes its senders pulls (NDP: one per data packet or header that arrives;
//! credit: one per packet a sender still has to send). It sends them no closer together
//! than `interval`, the time one full data packet takes on the host's own link, so the data
//! they ask for arrives at the link's rate and the last hop does not queue; and it serves
//! the flows that are owed pulls in turn (NDP §3.2: "the pull queue ... fair", htsim's
//! `FairPullQueue`: round robin in flow order). A pull owed while the pacer is idle and the
//! last pull is at least `interval` old goes at once (NDP: on the ACK or NACK that asked for
//! it); otherwise it waits, and the pacer's one timer sends the next pull when its time
//! comes.
//!
//! One difference from htsim's `NdpPullPacer`: htsim may hold two pending timer events
//! (one left from before the queue emptied at a flow's end, one scheduled by the next
//! arrival), which then send two pulls at one instant; here the pacer keeps one timer, so
//! pulls are never closer than `interval`, as NDP §3.2 describes them.

use std::collections::BTreeMap;

use crate::event::FlowId;
use crate::time::Time;

/// What became of a pull a flow asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pulled {
    /// It goes now.
    Now,
    /// It waits in the pacer's queue.
    Queued,
}

/// One receiving host's pacer.
#[derive(Clone, Debug)]
pub struct PullPacer {
    /// The closest two pulls may be: one full data packet on the host's link.
    interval: Time,
    /// Pulls owed, by flow (flows owed none are absent): the round robin goes through them
    /// in flow order.
    owed: BTreeMap<FlowId, u32>,
    /// The round robin's position: the next flow served is the first at or after it.
    cursor: FlowId,
    /// When the last pull went.
    last: Option<Time>,
    /// When the pacer's timer event is due, if one is pending.
    timer: Option<Time>,
    /// A timer event the owner must schedule.
    timer_request: Option<Time>,
    /// Pulls sent (at once or from the queue).
    pub sent: u64,
}

impl PullPacer {
    pub fn new(interval: Time) -> PullPacer {
        PullPacer { interval, owed: BTreeMap::new(), cursor: 0, last: None, timer: None, timer_request: None, sent: 0 }
    }

    /// The pacing interval.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// No pull is owed.
    pub fn is_idle(&self) -> bool {
        self.owed.is_empty()
    }

    /// Pulls owed to `flow`.
    pub fn owed(&self, flow: FlowId) -> u32 {
        self.owed.get(&flow).copied().unwrap_or(0)
    }

    /// `flow` asks for one pull at `now`: it goes at once if the pacer is idle and its last
    /// pull is `interval` old (or there was none), else it is queued (htsim's
    /// `NdpPullPacer::sendPacket`).
    pub fn request(&mut self, now: Time, flow: FlowId) -> Pulled {
        if self.owed.is_empty() {
            let due = self.last.map_or(now, |t| t + self.interval);
            if due <= now {
                self.last = Some(now);
                self.sent += 1;
                return Pulled::Now;
            }
            self.arm(due);
        }
        *self.owed.entry(flow).or_insert(0) += 1;
        Pulled::Queued
    }

    /// `flow` is owed `n` more pulls, sent from the queue (a credit receiver's demand).
    pub fn owe(&mut self, now: Time, flow: FlowId, n: u32) {
        if n == 0 {
            return;
        }
        if self.owed.is_empty() {
            let due = self.last.map_or(now, |t| (t + self.interval).max(now));
            self.arm(due);
        }
        *self.owed.entry(flow).or_insert(0) += n;
    }

    /// `flow` needs no more pulls: drop those it is owed (htsim's `release_pulls`, when the
    /// receiver has the whole flow).
    pub fn flush(&mut self, flow: FlowId) {
        self.owed.remove(&flow);
    }

    /// The timer event due at `now` fired: the flow whose turn it is gets its next pull, if
    /// any is owed; the timer runs again while pulls are owed.
    pub fn on_timer(&mut self, now: Time) -> Option<FlowId> {
        if self.timer != Some(now) {
            return None; // (never: one event per timer; kept for the harness's injected events)
        }
        self.timer = None;
        let flow = self.owed.range(self.cursor..).next().or_else(|| self.owed.iter().next()).map(|(&f, _)| f)?;
        let n = self.owed.get_mut(&flow).expect("a flow owed pulls");
        *n -= 1;
        if *n == 0 {
            self.owed.remove(&flow);
        }
        self.cursor = flow + 1;
        self.last = Some(now);
        self.sent += 1;
        if !self.owed.is_empty() {
            self.arm(now + self.interval);
        }
        Some(flow)
    }

    fn arm(&mut self, at: Time) {
        if self.timer.is_none() {
            self.timer = Some(at);
            self.timer_request = Some(at);
        }
    }

    /// A time at which the owner must deliver a timer event, if needed.
    pub fn take_timer_request(&mut self) -> Option<Time> {
        self.timer_request.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Time = Time(7_251_200); // 9064 B at 10 Gbps

    #[test]
    fn an_idle_pacer_pulls_at_once_then_no_faster_than_one_packet_time() {
        let mut p = PullPacer::new(T);
        assert_eq!(p.request(Time(0), 1), Pulled::Now);
        assert_eq!(p.request(Time(1_000), 2), Pulled::Queued);
        assert_eq!(p.take_timer_request(), Some(T), "the next pull one packet time after the first");
        assert_eq!(p.request(Time(2_000), 3), Pulled::Queued);
        assert_eq!(p.take_timer_request(), None, "one timer");
        assert_eq!(p.on_timer(T), Some(2));
        assert_eq!(p.take_timer_request(), Some(Time(2 * T.0)));
        assert_eq!(p.on_timer(Time(2 * T.0)), Some(3));
        assert_eq!(p.take_timer_request(), None, "nothing owed");
        // a request more than a packet time after the last pull goes at once
        assert_eq!(p.request(Time(3 * T.0), 4), Pulled::Now);
        assert_eq!(p.sent, 4);
    }

    #[test]
    fn flows_owed_pulls_are_served_in_turn_not_in_arrival_order() {
        // NDP §3.2: fair across senders; flow 1 asked three times before flow 2 asked once
        let mut p = PullPacer::new(T);
        assert_eq!(p.request(Time(0), 9), Pulled::Now);
        for _ in 0..3 {
            p.request(Time(1), 1);
        }
        p.request(Time(2), 2);
        let order: Vec<_> = (1..=4).map(|k| p.on_timer(Time(k * T.0)).unwrap()).collect();
        assert_eq!(order, vec![1, 2, 1, 1]);
    }

    #[test]
    fn a_flushed_flow_gets_no_more_pulls_and_the_timer_left_pending_sends_nothing() {
        let mut p = PullPacer::new(T);
        p.request(Time(0), 1);
        p.request(Time(1), 1);
        p.flush(1);
        assert!(p.is_idle());
        assert_eq!(p.on_timer(T), None);
        // the next request after the flush still waits out the interval
        assert_eq!(p.request(Time(T.0 - 1), 2), Pulled::Queued);
    }

    #[test]
    fn credit_owed_in_bulk_is_paced_from_now_or_from_the_last_pull() {
        let mut p = PullPacer::new(T);
        p.owe(Time(100), 5, 3);
        assert_eq!(p.take_timer_request(), Some(Time(100)), "idle and never pulled: at once");
        assert_eq!(p.on_timer(Time(100)), Some(5));
        assert_eq!(p.take_timer_request(), Some(Time(100 + T.0)));
        assert_eq!(p.owed(5), 2);
    }
}
