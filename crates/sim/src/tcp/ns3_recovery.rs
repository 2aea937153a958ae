//! ns-3's NewReno rules (`TcpRules::Ns3`; ns-3.44 `TcpSocketBase` with `TcpClassicRecovery` and
//! SACK off), modelled for differential testing against the ns-3 peer (`peers/ns3`). It
//! departs from RFC 6582, which `newreno.rs` follows as ns-2 does:
//!
//! - ns-3 runs RFC 6675's pipe algorithm without SACK by *emulating* SACK blocks
//!   (`TcpTxBuffer::AddRenoSack`): each duplicate ACK marks the first unmarked segment
//!   after the head as SACKed, although the segments it stands for lie beyond the holes;
//! - limited transmit (RFC 3042) is that emulation in the disorder state: a duplicate ACK
//!   SACKs one segment, so one more may be sent; without limited transmit the first two
//!   duplicate ACKs SACK nothing;
//! - on the third duplicate ACK (`EnterRecovery`) the head is marked lost, ssthresh =
//!   max(2 SMSS, (pipe + SMSS) / 2) with pipe counted after those marks, cwnd = ssthresh
//!   (no inflation: the emulated SACKs open the window instead), and the head is
//!   retransmitted without restarting the retransmission timer;
//! - a partial ACK discards what it acknowledges; a SACK mark that lands on the new head
//!   moves to the next segment (`TcpTxBuffer::DiscardUpTo`), the head is marked lost and
//!   retransmitted, and only the first partial ACK restarts the timer;
//! - new data goes out while min(rwnd, cwnd) - pipe allows (`AvailableWindow`), never past
//!   SND.UNA + RCV.WND (`TcpTxBuffer::NextSeg` rule 2), and not in pieces smaller than a
//!   segment while more data waits (silly-window avoidance in `SendPendingData`);
//! - a full ACK ends recovery with cwnd = ssthresh; duplicate ACKs after a timeout are
//!   ignored until everything sent before it is acknowledged (CA_LOSS); the timeout sets
//!   ssthresh from the pipe before it.
//!
//! - cwnd grows per whole segment acknowledged, the remainder carried to the next ACK
//!   (`m_bytesAckedNotProcessed`), so the short last segment of a write grows nothing.
//! - every ACK of new data is an RTT sample (`TcpSocketBase::EstimateRtt`), measured from
//!   the oldest segment it acknowledges unless that one was retransmitted, not one timed
//!   segment per RTT as RFC 6298 and ns-2 have it; a timeout forgets every send time
//!   (`m_history.clear()`), so go-back-N's retransmissions give none ([`RttHistory`]).
//!
//! Segments are counted as SMSS-sized from SND.UNA (ns-3 keeps the sent segments; the
//! emulation needs only where the SACKed run ends).

use std::collections::VecDeque;

use crate::tcp::sender::{Segment, TcpSender};
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

/// The emulated scoreboard: SACK marks on the run of segments after the head, and the
/// head's lost / retransmitted marks.
#[derive(Clone, Copy, Debug, Default)]
pub struct RenoSack {
    /// End of the SACKed run [head end, `sacked_end`); equal to the head's end when empty.
    sacked_end: u64,
    head_lost: bool,
    head_retransmitted: bool,
    /// A timeout happened and not everything sent before it is acknowledged (CA_LOSS).
    pub(crate) after_timeout: bool,
    /// The next partial ACK is the first of this recovery (it restarts the timer).
    first_partial: bool,
    /// Acknowledged bytes short of a whole segment, carried to the next ACK
    /// (`m_bytesAckedNotProcessed`).
    acked_carry: u64,
}

impl TcpSender {
    /// End of the segment at the head.
    fn ns3_head_end(&self) -> u64 {
        (self.snd_una + self.cfg.mss).min(self.snd_max)
    }

    /// SACK one more segment after the head (`AddRenoSack`); nothing if all are SACKed.
    fn ns3_add_reno_sack(&mut self) {
        let head_end = self.ns3_head_end();
        let from = self.reno.sacked_end.max(head_end);
        if from < self.snd_max {
            self.reno.sacked_end = (from + self.cfg.mss).min(self.snd_max);
        }
    }

    /// RFC 6675 pipe as ns-3 counts it (`TcpTxBuffer::BytesInFlight`): sent - SACKed -
    /// lost + retransmitted.
    pub(crate) fn ns3_pipe(&self) -> u64 {
        let head_end = self.ns3_head_end();
        let sacked = self.reno.sacked_end.saturating_sub(head_end);
        let head = head_end - self.snd_una;
        let lost = if self.reno.head_lost { head } else { 0 };
        let rtx = if self.reno.head_lost && self.reno.head_retransmitted { head } else { 0 };
        self.flight_size() - sacked - lost + rtx
    }

    /// Mark the head lost and not yet retransmitted (`MarkHeadAsLost`).
    fn ns3_mark_head_lost(&mut self) {
        self.reno.head_lost = true;
        self.reno.head_retransmitted = false;
    }

    /// Retransmit the head and mark it so.
    fn ns3_retransmit_head(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.retransmit_first_unacked(now, out);
        self.reno.head_retransmitted = true;
    }

    /// `SendPendingData`: the lost head if it waits, then new data, while the window allows.
    fn ns3_send(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.cfg.mss;
        loop {
            let window = self.cwnd.min(self.rwnd);
            let pipe = self.ns3_pipe();
            let available = window.saturating_sub(pipe);
            if available == 0 {
                return;
            }
            if self.reno.head_lost && !self.reno.head_retransmitted {
                self.ns3_retransmit_head(now, out); // NextSeg rule 1
                continue;
            }
            // rule 2: new data within the receive window, whole segments while more waits
            let sent = self.snd_max - self.snd_una;
            if self.snd_nxt < self.snd_max || self.snd_max >= self.app_limit || sent >= self.rwnd {
                return;
            }
            let waiting = self.app_limit - self.snd_max;
            if available < mss && waiting > available {
                return; // silly-window avoidance
            }
            let len = available.min(mss).min(waiting).min(self.rwnd - sent);
            let seq = self.snd_max;
            self.emit(now, seq, len, out);
            self.snd_nxt = seq + len;
            self.snd_max = self.snd_nxt;
        }
    }

    /// Every ACK, for NewReno with ns-3's recovery.
    pub(crate) fn on_ack_ns3(&mut self, now: Time, ack: u64, out: &mut Vec<Segment>) {
        if ack > self.snd_una {
            self.ns3_new_ack(now, ack, out);
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.dart += 1;
            self.ns3_duplicate_ack(now, out);
        }
        if !self.reno.after_timeout {
            self.ns3_send(now, out);
        }
    }

    fn ns3_duplicate_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.reno.after_timeout {
            return; // CA_LOSS: duplicate ACKs are not counted
        }
        if self.in_recovery {
            self.ns3_add_reno_sack();
            return;
        }
        self.dupacks += 1;
        if self.dupacks == self.cfg.dupack_threshold && self.snd_una >= self.recover {
            self.ns3_enter_recovery(now, out);
        } else if self.cfg.limited_transmit && self.dupacks < self.cfg.dupack_threshold {
            self.ns3_add_reno_sack();
            self.stats.limited_transmits += 1;
        }
    }

    /// `EnterRecovery` (RFC 6675 step 4 on emulated SACKs).
    fn ns3_enter_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.cfg.mss;
        self.ns3_add_reno_sack();
        self.ns3_mark_head_lost();
        self.recover = self.snd_max;
        self.in_recovery = true;
        self.reno.first_partial = true;
        // ns-3 keeps "the head as in flight" for the non-SACK case: pipe + SMSS
        self.ssthresh = ((self.ns3_pipe() + mss) / 2).max(2 * mss);
        self.cwnd = self.ssthresh;
        self.stats.fast_retransmits += 1;
        self.ns3_retransmit_head(now, out); // the timer is not restarted
    }

    /// `TcpNewReno::IncreaseWindow` for `segments` whole segments acknowledged: slow start
    /// adds one SMSS for the ACK, congestion avoidance max(1, SMSS^2 / cwnd) once.
    fn ns3_grow_window(&mut self, mut segments: u64) {
        let mss = self.cfg.mss;
        if self.cwnd < self.ssthresh && segments >= 1 {
            self.cwnd += mss;
            segments -= 1;
        }
        if self.cwnd >= self.ssthresh && segments > 0 {
            self.cwnd += (mss * mss / self.cwnd).max(1);
        }
    }

    /// Whole segments in `acked` bytes plus the carry; the rest is carried on.
    fn ns3_whole_segments(&mut self, acked: u64) -> u64 {
        let bytes = acked + self.reno.acked_carry;
        self.reno.acked_carry = bytes % self.cfg.mss;
        bytes / self.cfg.mss
    }

    fn ns3_new_ack(&mut self, now: Time, ack: u64, out: &mut Vec<Segment>) {
        let old_head_end = self.ns3_head_end();
        let old_una = self.snd_una;
        let acked = self.advance_una(now, ack);
        // DiscardUpTo: SACK marks below the new head go; one on the new head moves on,
        // and the head is then taken for lost
        let head_end = self.ns3_head_end();
        let head_was_sacked = self.reno.sacked_end > self.snd_una && self.snd_una >= old_head_end;
        self.reno.sacked_end = self.reno.sacked_end.max(head_end);
        if head_was_sacked {
            self.ns3_add_reno_sack();
            self.ns3_mark_head_lost();
        } else {
            self.reno.head_lost = false;
            self.reno.head_retransmitted = false;
        }
        if self.reno.after_timeout {
            // CA_LOSS: slow start, go back N (every segment sent before the timeout is
            // marked lost and resent in order, as `send_new_data` does from SND.NXT)
            let segments = if ack >= self.recover {
                self.reno.after_timeout = false;
                (ack - self.recover) / self.cfg.mss
            } else {
                self.ns3_whole_segments(acked)
            };
            self.ns3_grow_window(segments);
            self.restart_timer(now);
            self.send_new_data(now, out);
            return;
        }
        if self.in_recovery && ack < self.recover {
            // partial ACK: the new head is lost too
            self.ns3_mark_head_lost();
            self.ns3_retransmit_head(now, out);
            if std::mem::take(&mut self.reno.first_partial) {
                self.restart_timer(now);
            }
            return;
        }
        let segments = if self.in_recovery {
            self.in_recovery = false;
            self.cwnd = self.ssthresh; // TcpClassicRecovery::ExitRecovery
            (ack - old_una) / self.cfg.mss
        } else {
            self.ns3_whole_segments(acked)
        };
        self.dupacks = 0;
        self.ns3_grow_window(segments);
        self.restart_timer(now);
    }

    /// The timeout's part of ns-3's rules: ssthresh from the pipe before it, the emulated
    /// SACKs forgotten, duplicate ACKs ignored until `recover` is acknowledged.
    /// Returns the ssthresh ns-3 sets (`ReTxTimeout`): not reduced again when the head
    /// was already resent after an earlier timeout.
    pub(crate) fn ns3_on_timeout(&mut self) -> u64 {
        let mss = self.cfg.mss;
        let resent_head = self.reno.after_timeout && self.snd_una < self.retransmitted_end;
        let ssthresh = if resent_head { self.ssthresh } else { (self.ns3_pipe() / 2).max(2 * mss) };
        self.reno = RenoSack { after_timeout: true, ..RenoSack::default() };
        ssthresh
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpRules;
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
    use crate::tcp::sender::TcpSender;
    use crate::time::Time;

    /// A NewReno sender under ns-3's rules with segments 0..w-1 in flight, 100 more to send.
    fn ns3_sender(w: u64, limited_transmit: bool) -> TcpSender {
        let mut cfg = config();
        cfg.rules = TcpRules::Ns3;
        cfg.limited_transmit = limited_transmit;
        let mut s = TcpSender::new(cfg);
        s.cwnd = w * MSS;
        s.ssthresh = w * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, (w + 100) * MSS, &mut out);
        assert_eq!(out.len() as u64, w);
        s
    }

    fn dupacks(s: &mut TcpSender, n: usize) -> Vec<u64> {
        let mut out = vec![];
        for _ in 0..n {
            s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        }
        seg_numbers(&out)
    }

    #[test]
    fn limited_transmit_is_an_emulated_sack_that_frees_one_segment_of_pipe() {
        // TcpSocketBase::DupAck in CA_DISORDER: AddRenoSack, then SendPendingData
        let mut s = ns3_sender(4, true);
        assert_eq!(dupacks(&mut s, 2), vec![4, 5]);
        assert_eq!(s.cwnd, 4 * MSS, "cwnd unchanged");
        let mut s = ns3_sender(4, false);
        assert!(dupacks(&mut s, 2).is_empty(), "without limited transmit nothing is SACKed");
    }

    #[test]
    fn third_dupack_sets_ssthresh_from_the_pipe_and_leaves_the_timer_alone() {
        // 8 in flight; EnterRecovery SACKs one segment and marks the head lost: pipe 6,
        // ssthresh = (6 + 1) / 2 segments; RFC 6582 would take 8 / 2
        let mut s = ns3_sender(8, false);
        let timer = s.timer_deadline();
        assert_eq!(dupacks(&mut s, 3), vec![0], "the head is retransmitted");
        assert_eq!(s.ssthresh, 7 * MSS / 2);
        assert_eq!(s.cwnd, s.ssthresh, "no inflation");
        assert_eq!(s.timer_deadline(), timer, "fast retransmit does not restart the timer");
    }

    #[test]
    fn each_dupack_in_recovery_frees_one_segment_and_whole_segments_go() {
        // pipe after entry: 8 - 1 SACKed - 1 lost + 1 retransmitted = 7 against cwnd 3.5;
        // four more emulated SACKs leave half a segment of room, which silly-window
        // avoidance does not use; the fifth frees one and a half: one segment goes
        let mut s = ns3_sender(8, false);
        dupacks(&mut s, 3);
        assert!(dupacks(&mut s, 4).is_empty());
        assert_eq!(dupacks(&mut s, 1), vec![8]);
    }

    #[test]
    fn partial_ack_moves_the_mark_off_the_new_head_and_retransmits_it() {
        // segments 0 and 1 lost: the retransmitted 0 arrives and the ACK stops at 1, which
        // the emulation had SACKed; the mark moves on and 1 is retransmitted at once
        let mut s = ns3_sender(8, false);
        dupacks(&mut s, 3);
        let mut out = vec![];
        s.on_ack(Time::from_us(200), ack_of(1), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![1]);
        assert!(s.in_recovery);
        // the full ACK ends recovery at cwnd = ssthresh
        out.clear();
        s.on_ack(Time::from_us(300), ack_of(8), &[], &mut out);
        assert!(!s.in_recovery);
        assert!(s.cwnd >= s.ssthresh && s.cwnd <= s.ssthresh + MSS);
    }

    #[test]
    fn cwnd_grows_per_whole_segment_acknowledged() {
        // m_bytesAckedNotProcessed: two half-segment ACKs grow cwnd once, as one segment
        let mut s = ns3_sender(4, false);
        s.ssthresh = 2 * MSS; // congestion avoidance
        let mut out = vec![];
        s.on_ack(Time::from_us(100), 1 + MSS / 2, &[], &mut out);
        assert_eq!(s.cwnd, 4 * MSS, "half a segment grows nothing");
        s.on_ack(Time::from_us(101), 1 + MSS, &[], &mut out);
        assert_eq!(s.cwnd, 4 * MSS + MSS / 4, "the second half completes one segment");
    }

    #[test]
    fn duplicate_acks_after_a_timeout_are_ignored_until_recover() {
        // CA_LOSS: dupACKs are not counted, so no fast retransmit of the resent window
        let mut s = ns3_sender(8, true);
        let fire = s.take_timer_request().unwrap();
        let mut out = vec![];
        assert!(s.on_timer_event(fire, &mut out));
        out.clear();
        let mut out = vec![];
        for _ in 0..5 {
            s.on_ack(fire + Time::from_us(10), ack_of(0), &[], &mut out);
        }
        assert!(out.is_empty() && !s.in_recovery && s.stats.fast_retransmits == 0);
    }

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
        let srtt = [200, 300, 400]
            .iter()
            .fold(100 * us, |srtt, r| (7 * srtt + r * us) / 8);
        assert_eq!(srtt_after_four_acks(TcpRules::Ns3), Time(srtt));
        // RFC 6298 / ns-2: one timed segment per RTT, the first (100 us); the next timed
        // segment is only sent after that sample
        assert_eq!(srtt_after_four_acks(TcpRules::Rfc), Time::from_us(100));
    }

    #[test]
    fn no_rtt_sample_from_a_resent_segment_and_none_after_a_timeout() {
        let mut h = super::RttHistory::default();
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
