//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM 2017, §3): a receiver-driven transport for switches that trim.
//!
//! - **Sender** (§3.2): sends a first window at line rate, with no handshake, then one packet
//!   per pull; a pull number is cumulative, so a lost or late pull is made up by the next.
//!   A NACK (the receiver got a trimmed header) queues the packet for retransmission, sent
//!   on the next pull, before any new data; an ACK only frees it. A header the network
//!   returned (return-to-sender, §3.1) is queued the same way, and resent at once only when
//!   no pull is to be expected for it. A retransmission timeout is the last resort, for a
//!   header lost with its packet.
//! - **Receiver** (§3.2): for every data packet an ACK, for every header a NACK, both at
//!   once; and for each a pull in its host's pull queue (`host::pacer`), paced at the link's
//!   rate. A pull the pacer lets go at once rides on that ACK or NACK (its pull bit); the
//!   others go as PULL packets. When the receiver has the whole flow, the pulls it still
//!   owes the flow are dropped.
//! - **Per-packet spraying** (§3.2) is the fabric's: `load_balancing = spray` (or
//!   `spray_rr`) sends each packet, data and control, on its own path.
//!
//! Read with htsim's `ndp.cpp` (commit 841d9e7b), NDP's own simulator, for the details the
//! paper leaves open, which this follows: the first window is `init_cwnd` full packets (unset:
//! the path's BDP, `host::Conns::bdp_packets`; htsim's `-cwnd` has no default of that kind); a
//! NACK without the pull bit still lets the sender use pulls it was granted when it had
//! nothing to send (`_last_pull < _max_pull`), up to the NACK's pull number; the receiver
//! keeps pulling for every arrival until it has the whole flow, so the pulls a sender gets
//! after its last packet is sent are wasted, as in htsim. Differences, each written down in
//! `docs/transports.md`: htsim's timeouts are compiled out (it relies on return-to-sender),
//! here they are on, at `rto_min`; NACKs here carry no path scores (htsim's path penalties
//! are off in its incast setting).

use std::collections::{BTreeMap, BTreeSet};

use crate::tcp::rto::RtoEstimator;
use crate::tcp::timer::{Fired, LazyTimer};
use crate::tcp::Segment;
use crate::time::Time;

/// One NDP (or receiver-credit) sender's counters.
#[derive(Clone, Debug, Default)]
pub struct PullStats {
    /// Data packets sent for the first time, and again (after a NACK, a return or a timeout).
    pub new_packets: u64,
    pub retransmits: u64,
    pub acks: u64,
    pub nacks: u64,
    /// PULL packets received (pulls riding on ACKs and NACKs not counted).
    pub pulls: u64,
    /// Headers returned by the network.
    pub bounces: u64,
    /// Retransmission timeouts (each may resend several packets).
    pub timeouts: u64,
}

/// The sending end of an NDP or receiver-credit flow.
#[derive(Clone, Debug)]
pub struct PullSender {
    mss: u64,
    /// The first window (NDP) or unscheduled window (credit), packets.
    first_window: u32,
    /// Bytes the application wrote.
    flow_size: u64,
    /// Next new sequence number (the first data byte is 1, as TCP's).
    next_seq: u64,
    /// Sequence numbers waiting for a pull to be sent again, lowest first.
    rtx: BTreeSet<u64>,
    /// Pull numbers: the highest heard of, and how many pulls have been answered.
    max_pull: u32,
    last_pull: u32,
    /// NDP's pull bookkeeping for returned headers (htsim's `_pull_window`,
    /// `_first_window_count`): pulls to be expected if everything sent were lost, and
    /// packets of the first window not yet ACKed, NACKed or returned.
    pull_window: i64,
    first_window_left: i64,
    /// NDP: a NACK lets the sender use pulls it had nothing to send for (module doc).
    nack_uses_granted: bool,
    /// Every packet sent and not yet ACKed, NACKed or returned: when it was sent.
    sent_at: BTreeMap<u64, Time>,
    pub rto: RtoEstimator,
    timer: LazyTimer,
    timer_request: Option<Time>,
    /// The receiver has every byte.
    pub done: bool,
    pub stats: PullStats,
}

impl PullSender {
    /// The first (NDP) or unscheduled (credit) window, packets.
    pub fn first_window(&self) -> u32 {
        self.first_window
    }

    /// A sender of `mss`-byte packets whose first (or unscheduled) window is `first_window`
    /// packets; `ndp`: NDP's rules (a NACK may use granted pulls), else receiver credit's.
    pub fn new(mss: u64, first_window: u32, rto: RtoEstimator, ndp: bool) -> PullSender {
        PullSender {
            mss,
            first_window,
            flow_size: 0,
            next_seq: 1,
            rtx: BTreeSet::new(),
            max_pull: 0,
            last_pull: 0,
            pull_window: 0,
            first_window_left: 0,
            nack_uses_granted: ndp,
            sent_at: BTreeMap::new(),
            rto,
            timer: LazyTimer::default(),
            timer_request: None,
            done: false,
            stats: PullStats::default(),
        }
    }

    /// Bytes written (the flow's length, which every data packet carries).
    pub fn flow_size(&self) -> u64 {
        self.flow_size
    }

    /// Packets queued to be sent again.
    pub fn retransmissions_queued(&self) -> usize {
        self.rtx.len()
    }

    /// It has packets to send, new or queued again (it waits for pulls or credit).
    pub fn has_unsent(&self) -> bool {
        !self.rtx.is_empty() || self.next_seq <= self.flow_size
    }

    /// The application writes `bytes`: the first window goes at once (line rate: the NIC
    /// serializes it), the rest waits for pulls (NDP §3.2).
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) {
        let first = self.flow_size == 0;
        self.flow_size += bytes;
        if first {
            for _ in 0..self.first_window {
                if !self.send_one(now, out) {
                    break;
                }
                self.first_window_left += 1;
            }
        }
    }

    /// Send one packet: a queued retransmission first, else new data. False if there was
    /// nothing to send.
    fn send_one(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        if let Some(seq) = self.rtx.pop_first() {
            let len = self.mss.min(self.flow_size + 1 - seq);
            self.emit(now, seq, len, true, out);
            self.stats.retransmits += 1;
            return true;
        }
        if self.next_seq > self.flow_size {
            return false;
        }
        let seq = self.next_seq;
        let len = self.mss.min(self.flow_size + 1 - seq);
        self.next_seq += len;
        self.emit(now, seq, len, false, out);
        self.stats.new_packets += 1;
        true
    }

    fn emit(&mut self, now: Time, seq: u64, len: u64, retransmit: bool, out: &mut Vec<Segment>) {
        out.push(Segment { seq, len: len as u32, retransmit, after_timeout: false });
        self.sent_at.insert(seq, now);
        if !self.timer.is_armed() {
            self.arm(now + self.rto.rto);
        }
    }

    fn arm(&mut self, at: Time) {
        if let Some(t) = self.timer.arm(at) {
            self.timer_request = Some(t);
        }
    }

    /// Pulls up to number `pull` may be answered: send a packet for each not yet answered,
    /// while there is something to send (htsim's `pull_packets`).
    fn pull_packets(&mut self, now: Time, pull: u32, out: &mut Vec<Segment>) {
        self.max_pull = self.max_pull.max(pull);
        while self.last_pull < self.max_pull {
            if !self.send_one(now, out) {
                break;
            }
            self.last_pull += 1;
        }
    }

    /// An ACK of the packet at `seq`: the receiver holds in order everything below `cum`;
    /// `pull` is the pull number it carries if its pull bit is set.
    pub fn on_ack(&mut self, now: Time, seq: u64, cum: u64, sent: Time, pull: Option<u32>, out: &mut Vec<Segment>) {
        self.stats.acks += 1;
        self.pull_window += 1 - i64::from(pull.is_some());
        self.first_window_left -= 1;
        self.sent_at.remove(&seq);
        let r = self.rto.measure(sent, now);
        self.rto.sample(r);
        if cum > self.flow_size {
            self.done = true;
            self.sent_at.clear();
            self.rtx.clear();
            self.timer.cancel();
            return;
        }
        if let Some(p) = pull {
            self.pull_packets(now, p, out);
        }
    }

    /// A NACK of the packet at `seq` (its payload was trimmed): queued to be sent again,
    /// on the next pull. `pull_no` is the pull number it carries, `pull_bit` whether the
    /// pull rides on it.
    pub fn on_nack(&mut self, now: Time, seq: u64, pull_no: u32, pull_bit: bool, out: &mut Vec<Segment>) {
        self.stats.nacks += 1;
        self.pull_window += 1;
        self.first_window_left -= 1;
        if self.done {
            return;
        }
        self.sent_at.remove(&seq);
        self.rtx.insert(seq);
        if pull_bit || (self.nack_uses_granted && self.last_pull < self.max_pull) {
            self.pull_packets(now, pull_no, out);
        }
    }

    /// A PULL numbered `pull` arrived.
    pub fn on_pull(&mut self, now: Time, pull: u32, out: &mut Vec<Segment>) {
        self.stats.pulls += 1;
        self.pull_window -= 1;
        if !self.done {
            self.pull_packets(now, pull, out);
        }
    }

    /// The network returned the header of the packet at `seq`: queued to be sent again; at
    /// once only if no pull will come for it (it was the first window's last packet still
    /// out, and no pull is expected), as htsim's `processRTS` does: an immediate resend
    /// would feed a second incast at the receiver.
    pub fn on_bounce(&mut self, now: Time, seq: u64, out: &mut Vec<Segment>) {
        self.stats.bounces += 1;
        self.first_window_left -= 1;
        if self.done {
            return;
        }
        self.sent_at.remove(&seq);
        self.rtx.insert(seq);
        if self.pull_window == 0 && self.first_window_left <= 1 {
            self.send_one(now, out);
        }
    }

    /// A time at which the owner must deliver a timer event, if needed.
    pub fn take_timer_request(&mut self) -> Option<Time> {
        self.timer_request.take()
    }

    /// The retransmission timer may expire: every packet sent at least an RTO ago and not
    /// answered is sent again now (NDP's last resort). True if it was a timeout.
    pub fn on_timer_event(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        match self.timer.on_event(now) {
            Fired::Expired => {}
            Fired::Reschedule(t) => {
                self.timer_request = Some(t);
                return false;
            }
            Fired::Ignore => return false,
        }
        let rto = self.rto.rto;
        let expired: Vec<u64> = self.sent_at.iter().filter(|&(_, &t)| t + rto <= now).map(|(&s, _)| s).collect();
        let timed_out = !expired.is_empty();
        if timed_out {
            self.stats.timeouts += 1;
            self.rto.back_off();
        }
        for seq in expired {
            let len = self.mss.min(self.flow_size + 1 - seq);
            self.rtx.remove(&seq);
            self.emit(now, seq, len, true, out);
            self.stats.retransmits += 1;
        }
        if let Some(oldest) = self.sent_at.values().min() {
            self.arm(*oldest + self.rto.rto);
        }
        timed_out
    }
}

/// The receiving end of an NDP flow, beside its reassembly (the flow's `TcpReceiver`, which
/// holds the bytes in order and out of order).
#[derive(Clone, Debug, Default)]
pub struct NdpSink {
    /// Pulls asked for so far: the number the next ACK or NACK carries (cumulative).
    pub pull_no: u32,
    /// The receiver has every byte (its pulls are flushed).
    pub done: bool,
    /// Headers received (payloads trimmed in the network).
    pub headers: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 9000;

    fn sender(first_window: u32) -> PullSender {
        let rto = RtoEstimator::new(Time(1_000_000_000), Time(60 * 1_000_000_000_000), Time(1_000_000));
        PullSender::new(MSS, first_window, rto, true)
    }

    fn seqs(out: &[Segment]) -> Vec<u64> {
        out.iter().map(|s| s.seq).collect()
    }

    #[test]
    fn the_first_window_goes_at_once_and_the_rest_waits_for_pulls_ndp_3_2() {
        let mut s = sender(3);
        let mut out = vec![];
        s.write(Time(0), 5 * MSS, &mut out);
        assert_eq!(seqs(&out), vec![1, 9001, 18001]);
        out.clear();
        s.on_ack(Time(10), 1, 9001, Time(0), None, &mut out);
        assert!(out.is_empty(), "an ACK without the pull bit sends nothing");
        s.on_pull(Time(11), 1, &mut out);
        assert_eq!(seqs(&out), vec![27001]);
        out.clear();
        // pull numbers are cumulative: pull 3 answers pulls 2 and 3 (a lost pull made up)
        s.on_pull(Time(12), 3, &mut out);
        assert_eq!(seqs(&out), vec![36001]);
        assert_eq!(s.stats.new_packets, 5);
    }

    #[test]
    fn a_nacked_packet_goes_again_on_the_next_pull_before_new_data() {
        let mut s = sender(2);
        let mut out = vec![];
        s.write(Time(0), 4 * MSS, &mut out);
        out.clear();
        s.on_nack(Time(5), 9001, 1, false, &mut out);
        assert!(out.is_empty(), "no pull came with it");
        s.on_pull(Time(6), 1, &mut out);
        assert_eq!(out, vec![Segment { seq: 9001, len: MSS as u32, retransmit: true, after_timeout: false }]);
        out.clear();
        // a NACK carrying the pull bit is answered at once
        s.on_nack(Time(7), 1, 2, true, &mut out);
        assert_eq!(seqs(&out), vec![1]);
    }

    #[test]
    fn a_nack_spends_pulls_granted_while_there_was_nothing_to_send() {
        // htsim's processNack: _last_pull < _max_pull lets the NACK resend at once
        let mut s = sender(1);
        let mut out = vec![];
        s.write(Time(0), MSS, &mut out);
        out.clear();
        s.on_pull(Time(5), 1, &mut out);
        assert!(out.is_empty(), "nothing left to send: the pull is unanswered");
        s.on_nack(Time(6), 1, 2, false, &mut out);
        assert_eq!(seqs(&out), vec![1]);
    }

    #[test]
    fn the_ack_covering_the_flow_ends_it() {
        let mut s = sender(2);
        let mut out = vec![];
        s.write(Time(0), MSS + 100, &mut out);
        assert_eq!(out.iter().map(|s| s.len).collect::<Vec<_>>(), vec![9000, 100], "a short last packet");
        out.clear();
        s.on_ack(Time(10), 9001, 9101, Time(0), Some(1), &mut out);
        assert!(s.done && out.is_empty());
    }

    #[test]
    fn a_packet_unanswered_for_an_rto_is_sent_again_as_a_last_resort() {
        let mut s = sender(2);
        let mut out = vec![];
        s.write(Time(0), 2 * MSS, &mut out);
        out.clear();
        let at = s.take_timer_request().unwrap();
        assert_eq!(at, Time(1_000_000_000_000), "RFC 6298 §2.1's initial 1 s before any sample");
        s.on_ack(Time(100), 1, 1, Time(0), None, &mut out);
        assert!(s.on_timer_event(at, &mut out));
        assert_eq!(seqs(&out), vec![9001], "only the packet still unanswered");
        assert_eq!(s.stats.timeouts, 1);
    }

    #[test]
    fn a_returned_header_is_resent_at_once_only_when_no_pull_will_come_for_it() {
        let mut s = sender(3);
        let mut out = vec![];
        s.write(Time(0), 4 * MSS, &mut out);
        out.clear();
        s.on_bounce(Time(3), 1, &mut out);
        assert!(out.is_empty(), "two first-window packets still out: their answers will pull");
        s.on_bounce(Time(4), 9001, &mut out);
        assert_eq!(seqs(&out), vec![1], "one left out and no pull expected: resent at once");
    }
}
