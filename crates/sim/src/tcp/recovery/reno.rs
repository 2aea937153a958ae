//! Reno fast retransmit and fast recovery (RFC 5681 §3.2, the algorithm FAST'08 calls
//! "TCP Reno"), which NewReno (`newreno.rs`) builds on:
//!
//! - the third duplicate ACK (the threshold is a parameter, FAST'08 Table 1 "dathresh")
//!   sets ssthresh (RFC 5681 eq. (4), `tcp::congestion`), `recover` = highest sequence
//!   sent, retransmits the first unacknowledged segment and sets cwnd = ssthresh +
//!   dupthresh x SMSS; the retransmission restarts the RTO timer (RFC 6298 §5.1 would
//!   leave a running timer alone; ns-2's `dupack_action` calls `reset_rtx_timer` and Linux
//!   re-arms when it retransmits the head, so the timer is not left to fire one RTT after
//!   the fast retransmit when the RTO is near the RTT);
//! - the first two duplicate ACKs may each send a new segment (RFC 3042 limited transmit);
//! - each further duplicate ACK inflates cwnd by one SMSS (and may send new data);
//! - the first ACK of new data ends recovery and deflates cwnd to ssthresh, even if it only
//!   acknowledges part of the window. Further losses in the same window then need three new
//!   duplicate ACKs, which a small window cannot produce: "with a window size of six, Reno
//!   will always experience a timeout when the first two packets of the window are lost"
//!   (FAST'08 §5.1.1).
//!
//! RFC 5681's Reno enters recovery at every third duplicate ACK; ns-2's Reno also asks the
//! ACK to cover `recover` (`bug_fix_`, `tcp::ns2_rules`).

use crate::scenario::TcpRules;
use crate::tcp::sender::{Segment, TcpSender};
use crate::time::Time;

/// Every ACK, for Reno.
#[inline]
pub(super) fn on_ack(s: &mut TcpSender, now: Time, ack: u64, acked: u64, out: &mut Vec<Segment>) {
    if acked > 0 {
        if s.in_recovery {
            s.leave_recovery();
            s.restart_timer(now);
        } else {
            s.on_new_ack_open(now, acked);
        }
        s.send_new_data(now, out);
    } else if is_duplicate(s, ack) {
        let may_enter = s.cfg.rules != TcpRules::Ns2 || s.covers_recover();
        on_duplicate_ack(s, now, may_enter, out);
    }
}

/// A duplicate ACK in RFC 5681's sense: it acknowledges SND.UNA with data outstanding (a
/// window update never gets here: `TcpSender::on_ack_segment`).
pub(super) fn is_duplicate(s: &TcpSender, ack: u64) -> bool {
    ack == s.snd_una && s.snd_una < s.snd_max
}

/// A duplicate ACK arrived: in recovery it inflates cwnd; below the threshold it may send
/// a new segment (limited transmit); at the threshold it starts fast retransmit, if
/// `may_enter`. Returns true if it entered recovery.
#[inline(always)]
pub(super) fn on_duplicate_ack(s: &mut TcpSender, now: Time, may_enter: bool, out: &mut Vec<Segment>) -> bool {
    s.dart += 1;
    if s.in_recovery {
        s.cwnd += s.cfg.mss;
        s.send_new_data(now, out);
        return false;
    }
    s.dupacks += 1;
    if s.dupacks < s.cfg.dupack_threshold {
        s.limited_transmit(now, out);
    }
    if s.dupacks != s.cfg.dupack_threshold || !may_enter {
        return false;
    }
    enter(s, now, out);
    true
}

/// Fast retransmit: enter fast recovery (RFC 5681 §3.2 steps 2 and 3).
fn enter(s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
    s.ssthresh = s.loss_ssthresh();
    s.recover = s.snd_max;
    s.in_recovery = true;
    s.stats.fast_retransmits += 1;
    s.retransmit_first_unacked(now, out);
    s.restart_timer(now);
    s.cwnd = s.ssthresh + s.cfg.dupack_threshold as u64 * s.cfg.mss;
    s.send_new_data(now, out);
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpVariant;
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
    use crate::tcp::sender::TcpSender;
    use crate::time::Time;

    fn reno() -> TcpSender {
        let mut cfg = config();
        cfg.variant = TcpVariant::Reno;
        TcpSender::new(cfg)
    }

    /// Feed `acks` (cumulative ACK numbers in segments) one by one.
    fn acks(s: &mut TcpSender, t: Time, acks: &[u64]) -> Vec<u64> {
        let mut out = vec![];
        for &a in acks {
            s.on_ack(t, ack_of(a), &[], &mut out);
        }
        seg_numbers(&out)
    }

    #[test]
    fn window_of_six_with_first_two_lost_always_times_out_fast08_5_1_1() {
        // FAST'08 §5.1.1: window 6 (segments 0..5), segments 0 and 1 lost.
        let mut s = reno();
        s.cwnd = 6 * MSS;
        s.ssthresh = 6 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 6 * MSS, &mut out); // the SRU ends with the window
        assert_eq!(out.len(), 6);
        let rto_at = s.take_timer_request().unwrap();
        // 2, 3, 4, 5 arrive: four duplicate ACKs for 0; the third triggers fast retransmit
        let sent = acks(&mut s, Time::from_us(100), &[0, 0, 0, 0]);
        assert_eq!(sent, vec![0], "fast retransmit of segment 0");
        // retransmitted 0 arrives: ACK for 1 is new data, Reno leaves recovery with
        // cwnd = ssthresh = 3 segments while 5 are outstanding: nothing may be sent, and no
        // more duplicate ACKs can come
        let sent = acks(&mut s, Time::from_us(200), &[1]);
        assert!(sent.is_empty());
        assert!(!s.in_recovery);
        let mut out = vec![];
        let fire = s.take_timer_request().unwrap_or(rto_at);
        let mut fired = s.on_timer_event(fire, &mut out);
        if !fired {
            let t = s.take_timer_request().expect("timer still armed");
            fired = s.on_timer_event(t, &mut out);
        }
        assert!(fired, "Reno recovers the second loss only by a timeout");
        assert_eq!(seg_numbers(&out), vec![1]);
    }

    #[test]
    fn newreno_recovers_the_same_loss_without_a_timeout() {
        let mut cfg = config();
        cfg.variant = TcpVariant::Newreno;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 6 * MSS;
        s.ssthresh = 6 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 6 * MSS, &mut out);
        acks(&mut s, Time::from_us(100), &[0, 0, 0, 0]);
        let sent = acks(&mut s, Time::from_us(200), &[1]);
        assert_eq!(sent, vec![1], "NewReno's partial ACK retransmits segment 1 at once");
        acks(&mut s, Time::from_us(300), &[6]);
        assert!(s.all_acked());
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn any_new_ack_ends_reno_recovery_and_deflates_to_ssthresh() {
        let mut s = reno();
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        acks(&mut s, Time::from_us(100), &[0, 0, 0, 0, 0]);
        assert!(s.in_recovery);
        acks(&mut s, Time::from_us(200), &[2]);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 4 * MSS);
    }
}
