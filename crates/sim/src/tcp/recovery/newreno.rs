//! NewReno (RFC 6582 §3.2): Reno's fast retransmit and fast recovery (`reno.rs`), carried
//! on through partial ACKs:
//!
//! - the third duplicate ACK starts fast retransmit only if the ACK covers `recover`
//!   (step 1), so one window's losses, or those of a window sent before a timeout, start
//!   one recovery at most;
//! - a partial ACK (below `recover`) retransmits the next hole at once, deflates cwnd by
//!   the amount acknowledged (adding back one SMSS if that was at least one SMSS), and
//!   the first one resets the retransmission timer ("Impatient", RFC 6582 §4);
//! - a full ACK ends recovery with cwnd = ssthresh (step 3 offers this or
//!   min(ssthresh, max(FlightSize, SMSS) + SMSS); ns-2's NewReno without
//!   `exit_recovery_fix_` and ns-3's TcpClassicRecovery take ssthresh).

use crate::tcp::recovery::reno;
use crate::tcp::sender::{Segment, TcpSender};
use crate::time::Time;

/// NewReno's state beside the sender's `recover`.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// A partial ACK has already reset the timer in this recovery (RFC 6582 §3.2 step 5).
    partial_ack_seen: bool,
}

impl NewReno {
    /// Every ACK, for NewReno.
    #[inline]
    pub(super) fn on_ack(&mut self, s: &mut TcpSender, now: Time, ack: u64, acked: u64, out: &mut Vec<Segment>) {
        if acked > 0 {
            if s.in_recovery {
                self.on_ack_in_recovery(s, now, ack, acked, out);
            } else {
                s.on_new_ack_open(now, acked);
            }
            s.send_new_data(now, out);
        } else if reno::is_duplicate(s, ack) {
            let may_enter = s.covers_recover();
            if reno::on_duplicate_ack(s, now, may_enter, out) {
                self.partial_ack_seen = false;
            }
        }
    }

    /// An ACK of `acked` new bytes (now acknowledging up to `ack`) arrived in recovery.
    fn on_ack_in_recovery(&mut self, s: &mut TcpSender, now: Time, ack: u64, acked: u64, out: &mut Vec<Segment>) {
        let mss = s.cfg.mss;
        if ack >= s.recover {
            s.leave_recovery(); // full ACK
            s.restart_timer(now);
            return;
        }
        // partial ACK: the next hole is lost too; retransmit it now
        s.retransmit_first_unacked(now, out);
        s.cwnd = s.cwnd.saturating_sub(acked).max(mss);
        if acked >= mss {
            s.cwnd += mss;
        }
        if !self.partial_ack_seen {
            self.partial_ack_seen = true;
            s.restart_timer(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
    use crate::tcp::sender::{Segment, TcpSender};
    use crate::time::Time;

    /// A sender with `w` segments in flight (0..w-1) and 100 more to send.
    fn sender_with_window(w: u64) -> TcpSender {
        let mut s = TcpSender::new(config());
        s.cwnd = w * MSS;
        s.ssthresh = w * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, (w + 100) * MSS, &mut out);
        assert_eq!(out.len() as u64, w);
        s
    }

    /// `sender_with_window(8)` after three duplicate ACKs for segment 0 at `t`: in fast
    /// recovery; also returns what it sent.
    fn after_three_dupacks(t: Time) -> (TcpSender, Vec<Segment>) {
        let mut s = sender_with_window(8);
        let mut out = vec![];
        for _ in 0..3 {
            s.on_ack(t, ack_of(0), &[], &mut out);
        }
        (s, out)
    }

    #[test]
    fn third_duplicate_ack_retransmits_the_first_hole() {
        let mut s = sender_with_window(8);
        let mut out = vec![];
        let t = Time::from_us(100);
        s.on_ack(t, ack_of(0), &[], &mut out); // segment 0 lost: 1, 2, 3 produce dupACKs
        s.on_ack(t, ack_of(0), &[], &mut out);
        assert!(out.is_empty(), "two dupACKs do not trigger fast retransmit");
        s.on_ack(t, ack_of(0), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![0]);
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh, 4 * MSS);
        assert_eq!(s.cwnd, 4 * MSS + 3 * MSS);
        assert_eq!(s.stats.fast_retransmits, 1);
    }

    #[test]
    fn fast_retransmit_restarts_the_retransmission_timer() {
        // sent at 0, the third dupACK at 150 us: the timer now runs from 150 us (ns-2's
        // reset_rtx_timer in dupack_action; Linux re-arms on retransmitting the head)
        let t = Time::from_us(150);
        let (s, _) = after_three_dupacks(t);
        let rto = s.rto.rto; // no RTT sample yet: the initial RTO, unchanged by the dupACKs
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!(s.timer_deadline(), Some(t + rto));
    }

    #[test]
    fn dupack_threshold_one_retransmits_on_the_first_duplicate() {
        let mut cfg = config();
        cfg.dupack_threshold = 1;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 8 * MSS, &mut out);
        out.clear();
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![0]);
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole_without_waiting() {
        // window 0..7, segments 0 and 3 lost
        let (mut s, mut out) = after_three_dupacks(Time::from_us(100));
        out.clear();
        // retransmitted 0 arrives: receiver has 0,1,2 then hole at 3 -> partial ACK
        s.on_ack(Time::from_us(200), ack_of(3), &[], &mut out);
        assert_eq!(seg_numbers(&out)[0], 3, "partial ACK retransmits segment 3 at once");
        assert!(s.in_recovery, "still in recovery until recover is acknowledged");
        // retransmitted 3 arrives: everything up to recover acknowledged -> full ACK
        out.clear();
        s.on_ack(Time::from_us(300), ack_of(8), &[], &mut out);
        assert!(!s.in_recovery);
        assert!(s.cwnd <= s.ssthresh);
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn dupacks_in_recovery_inflate_the_window_and_release_new_data() {
        let t = Time::from_us(100);
        let (mut s, mut out) = after_three_dupacks(t);
        // cwnd = 4 + 3 = 7 segments < 8 in flight: nothing new yet
        out.clear();
        s.on_ack(t, ack_of(0), &[], &mut out); // cwnd 8
        s.on_ack(t, ack_of(0), &[], &mut out); // cwnd 9 -> segment 8 may go
        assert_eq!(seg_numbers(&out), vec![8]);
    }

    #[test]
    fn no_second_fast_retransmit_for_dupacks_below_recover_after_timeout() {
        // RFC 6582 §3.2 step 1: after a timeout, recover = snd_max; duplicate ACKs for
        // data sent before it must not trigger a new fast retransmit.
        let mut s = sender_with_window(8);
        let mut out = vec![];
        let fire = s.take_timer_request().unwrap();
        s.on_timer_event(fire, &mut out);
        out.clear();
        for _ in 0..3 {
            s.on_ack(fire + Time::from_us(10), ack_of(0), &[], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 0);
        assert!(!s.in_recovery);
    }
}
