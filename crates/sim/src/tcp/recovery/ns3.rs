//! ns-3's NewReno recovery (`TcpRules::Ns3`; ns-3.44 `TcpSocketBase` with
//! `TcpClassicRecovery` and SACK off), modelled for differential testing against the ns-3
//! peer (`peers/ns3`). It departs from RFC 6582, which `newreno.rs` follows as ns-2 does:
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
//!   ssthresh from the pipe before it;
//! - cwnd grows per whole segment acknowledged (`tcp::congestion::newreno`), the remainder
//!   carried to the next ACK (`m_bytesAckedNotProcessed`), so the short last segment of a
//!   write grows nothing.
//!
//! ns-3's RTT sampling, the other departure of these rules, is the sender's
//! (`tcp::rtt_history`).
//!
//! Segments are counted as SMSS-sized from SND.UNA (ns-3 keeps the sent segments; the
//! emulation needs only where the SACKed run ends).

use crate::tcp::sender::{Segment, TcpSender};
use crate::time::Time;

/// The emulated scoreboard: SACK marks on the run of segments after the head, and the
/// head's lost / retransmitted marks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ns3 {
    /// End of the SACKed run [head end, `sacked_end`); equal to the head's end when empty.
    sacked_end: u64,
    head_lost: bool,
    head_retransmitted: bool,
    /// A timeout happened and not everything sent before it is acknowledged (CA_LOSS).
    pub(super) after_timeout: bool,
    /// The next partial ACK is the first of this recovery (it restarts the timer).
    first_partial: bool,
    /// Acknowledged bytes short of a whole segment, carried to the next ACK
    /// (`m_bytesAckedNotProcessed`).
    acked_carry: u64,
}

/// End of the segment at the head.
fn head_end(s: &TcpSender) -> u64 {
    (s.snd_una + s.cfg.mss).min(s.snd_max)
}

impl Ns3 {
    /// SACK one more segment after the head (`AddRenoSack`); nothing if all are SACKed.
    fn add_reno_sack(&mut self, s: &TcpSender) {
        let from = self.sacked_end.max(head_end(s));
        if from < s.snd_max {
            self.sacked_end = (from + s.cfg.mss).min(s.snd_max);
        }
    }

    /// RFC 6675 pipe as ns-3 counts it (`TcpTxBuffer::BytesInFlight`): sent - SACKed -
    /// lost + retransmitted.
    pub(super) fn pipe(&self, s: &TcpSender) -> u64 {
        let head_end = head_end(s);
        let sacked = self.sacked_end.saturating_sub(head_end);
        let head = head_end - s.snd_una;
        let lost = if self.head_lost { head } else { 0 };
        let rtx = if self.head_lost && self.head_retransmitted { head } else { 0 };
        s.flight_size() - sacked - lost + rtx
    }

    /// Mark the head lost and not yet retransmitted (`MarkHeadAsLost`).
    fn mark_head_lost(&mut self) {
        self.head_lost = true;
        self.head_retransmitted = false;
    }

    /// Retransmit the head and mark it so.
    fn retransmit_head(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        s.retransmit_first_unacked(now, out);
        self.head_retransmitted = true;
    }

    /// `SendPendingData`: the lost head if it waits, then new data, while the window allows.
    fn send(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        let mss = s.cfg.mss;
        loop {
            let window = s.cwnd.min(s.rwnd);
            let available = window.saturating_sub(self.pipe(s));
            if available == 0 {
                return;
            }
            if self.head_lost && !self.head_retransmitted {
                self.retransmit_head(s, now, out); // NextSeg rule 1
                continue;
            }
            // rule 2: new data within the receive window, whole segments while more waits
            let sent = s.snd_max - s.snd_una;
            if s.snd_nxt < s.snd_max || s.snd_max >= s.app_limit || sent >= s.rwnd {
                return;
            }
            let waiting = s.app_limit - s.snd_max;
            if available < mss && waiting > available {
                return; // silly-window avoidance
            }
            let len = available.min(mss).min(waiting).min(s.rwnd - sent);
            let seq = s.snd_max;
            s.emit(now, seq, len, out);
            s.snd_nxt = seq + len;
            s.snd_max = s.snd_nxt;
        }
    }

    /// Every ACK, for NewReno with ns-3's recovery.
    pub(super) fn on_ack(&mut self, s: &mut TcpSender, now: Time, ack: u64, acked: u64, out: &mut Vec<Segment>) {
        if acked > 0 {
            self.new_ack(s, now, ack, acked, out);
        } else if ack == s.snd_una && s.snd_una < s.snd_max {
            s.dart += 1;
            self.duplicate_ack(s, now, out);
        }
        if !self.after_timeout {
            self.send(s, now, out);
        }
    }

    fn duplicate_ack(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        if self.after_timeout {
            return; // CA_LOSS: duplicate ACKs are not counted
        }
        if s.in_recovery {
            self.add_reno_sack(s);
            return;
        }
        s.dupacks += 1;
        if s.dupacks == s.cfg.dupack_threshold && s.covers_recover() {
            self.enter_recovery(s, now, out);
        } else if s.cfg.limited_transmit && s.dupacks < s.cfg.dupack_threshold {
            self.add_reno_sack(s);
            s.stats.limited_transmits += 1;
        }
    }

    /// `EnterRecovery` (RFC 6675 step 4 on emulated SACKs).
    fn enter_recovery(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        let mss = s.cfg.mss;
        self.add_reno_sack(s);
        self.mark_head_lost();
        s.recover = s.snd_max;
        s.in_recovery = true;
        self.first_partial = true;
        // ns-3 keeps "the head as in flight" for the non-SACK case: pipe + SMSS
        let (cwnd, pipe, window) = (s.cwnd, self.pipe(s), s.cwnd.min(s.rwnd));
        s.ssthresh = s.congestion.on_loss(cwnd, pipe + mss, window);
        s.cwnd = s.ssthresh;
        s.stats.fast_retransmits += 1;
        self.retransmit_head(s, now, out); // the timer is not restarted
    }

    /// Whole segments in `acked` bytes plus the carry; the rest is carried on.
    fn whole_segments(&mut self, s: &TcpSender, acked: u64) -> u64 {
        let bytes = acked + self.acked_carry;
        self.acked_carry = bytes % s.cfg.mss;
        bytes / s.cfg.mss
    }

    /// `TcpNewReno::IncreaseWindow` for `segments` whole segments acknowledged.
    #[inline]
    fn grow(s: &mut TcpSender, now: Time, segments: u64) {
        let clock = s.ack_clock(now);
        s.congestion.on_ack(clock, &mut s.cwnd, s.ssthresh, segments * s.cfg.mss);
    }

    /// An ACK of `acked` new bytes up to `ack` (SND.UNA has moved there).
    fn new_ack(&mut self, s: &mut TcpSender, now: Time, ack: u64, acked: u64, out: &mut Vec<Segment>) {
        let old_una = ack - acked;
        let old_head_end = (old_una + s.cfg.mss).min(s.snd_max);
        // DiscardUpTo: SACK marks below the new head go; one on the new head moves on,
        // and the head is then taken for lost
        let head_was_sacked = self.sacked_end > s.snd_una && s.snd_una >= old_head_end;
        self.sacked_end = self.sacked_end.max(head_end(s));
        if head_was_sacked {
            self.add_reno_sack(s);
            self.mark_head_lost();
        } else {
            self.head_lost = false;
            self.head_retransmitted = false;
        }
        if self.after_timeout {
            // CA_LOSS: slow start, go back N (every segment sent before the timeout is
            // marked lost and resent in order, as `send_new_data` does from SND.NXT)
            let segments = if ack >= s.recover {
                self.after_timeout = false;
                (ack - s.recover) / s.cfg.mss
            } else {
                self.whole_segments(s, acked)
            };
            Self::grow(s, now, segments);
            s.restart_timer(now);
            s.send_new_data(now, out);
            return;
        }
        if s.in_recovery && ack < s.recover {
            // partial ACK: the new head is lost too
            self.mark_head_lost();
            self.retransmit_head(s, now, out);
            if std::mem::take(&mut self.first_partial) {
                s.restart_timer(now);
            }
            return;
        }
        let segments = if s.in_recovery {
            s.leave_recovery(); // TcpClassicRecovery::ExitRecovery
            (ack - old_una) / s.cfg.mss
        } else {
            self.whole_segments(s, acked)
        };
        s.dupacks = 0;
        Self::grow(s, now, segments);
        s.restart_timer(now);
    }

    /// The timeout's part of ns-3's rules (`ReTxTimeout`), once ssthresh was taken from
    /// the pipe before it: the emulated SACKs are forgotten, and duplicate ACKs ignored
    /// until `recover` is acknowledged.
    pub(super) fn on_timeout(&mut self) {
        *self = Ns3 { after_timeout: true, ..Ns3::default() };
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
}
