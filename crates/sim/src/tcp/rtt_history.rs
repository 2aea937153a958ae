//! ns-3's RTT sampling (`TcpRules::Ns3`): every ACK of new data is an RTT sample
//! (`TcpSocketBase::EstimateRtt`), measured from the oldest segment it acknowledges unless
//! that one was retransmitted, not one timed segment per RTT as RFC 6298 and ns-2 have it;
//! a timeout forgets every send time (`m_history.clear()`), so go-back-N's retransmissions
//! give none.

use std::collections::VecDeque;

use crate::time::Time;

/// ns-3's RTT history (`TcpSocketBase::UpdateRttHistory`): when each segment in flight
/// was first sent, and whether it has been sent again.
#[derive(Clone, Debug, Default)]
pub struct RttHistory {
    /// (first sequence, end, first sent, retransmitted), oldest first.
    sent: VecDeque<(u64, u64, Time, bool)>,
}

impl RttHistory {
    /// A segment [seq, seq + len) left at `now`; `retransmit` when below SND.MAX.
    pub fn on_send(&mut self, seq: u64, len: u64, now: Time, retransmit: bool) {
        if !retransmit {
            self.sent.push_back((seq, seq + len, now, false));
        } else if let Some(e) = self.sent.iter_mut().find(|e| e.0 <= seq && seq < e.1) {
            e.3 = true;
            e.1 = e.1.max(seq + len);
        }
    }

    /// An ACK up to `ack` arrived: the send time to sample the RTT from (the oldest
    /// segment's, if it is wholly acknowledged and was never resent); forget every segment
    /// it acknowledges.
    pub fn on_ack(&mut self, ack: u64) -> Option<Time> {
        let sample = match self.sent.front() {
            Some(&(_, end, sent, false)) if ack >= end => Some(sent),
            _ => None,
        };
        while self.sent.front().is_some_and(|e| e.1 <= ack) {
            self.sent.pop_front();
        }
        sample
    }

    pub fn clear(&mut self) {
        self.sent.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpRules;
    use crate::tcp::sender::tests::{ack_of, config, MSS};
    use crate::tcp::sender::TcpSender;

    /// srtt after the ACKs of segments 0..3 (sent at 0) arrive at 100, 200, 300, 400 us.
    fn srtt_after_four_acks(rules: TcpRules) -> Time {
        let mut cfg = config();
        cfg.rules = rules;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 4 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 4 * MSS, &mut out);
        for k in 1..=4 {
            s.on_ack(Time::from_us(100 * k), ack_of(k), &[], &mut out);
        }
        s.rto.srtt.unwrap()
    }

    #[test]
    fn every_ack_of_new_data_is_an_rtt_sample_under_ns3_rules() {
        // TcpSocketBase::EstimateRtt samples each ACK against the oldest segment it
        // covers: 100, 200, 300, 400 us; srtt = 100, then 7/8 srtt + 1/8 sample (in ps)
        let us = Time::from_us(1).0;
        let srtt = [200, 300, 400].iter().fold(100 * us, |srtt, r| (7 * srtt + r * us) / 8);
        assert_eq!(srtt_after_four_acks(TcpRules::Ns3), Time(srtt));
        // RFC 6298 / ns-2: one timed segment per RTT, the first (100 us); the next timed
        // segment is only sent after that sample
        assert_eq!(srtt_after_four_acks(TcpRules::Rfc), Time::from_us(100));
    }

    #[test]
    fn no_rtt_sample_from_a_resent_segment_and_none_after_a_timeout() {
        let mut h = RttHistory::default();
        h.on_send(1, MSS, Time::ZERO, false);
        h.on_send(1 + MSS, MSS, Time::ZERO, false);
        h.on_send(1, MSS, Time::from_us(50), true); // fast retransmission of the first
        assert_eq!(h.on_ack(1 + MSS), None, "Karn: the oldest was resent");
        assert_eq!(h.on_ack(1 + 2 * MSS), Some(Time::ZERO));
        h.on_send(1 + 2 * MSS, MSS, Time::from_us(60), false);
        h.clear(); // a timeout
        h.on_send(1 + 2 * MSS, MSS, Time::from_us(70), true);
        assert_eq!(h.on_ack(1 + 3 * MSS), None);
    }
}
