//! ns-2's departures from the RFCs (`TcpRules::Ns2`: ns-2.35's `Agent/TCP` family with its
//! defaults, the simulator FAST'08 and Osada et al. ran; `peers/ns2/README.md`). The
//! sender's are here, next to the rules the RFCs give (`TcpRules::Rfc`), so each decision
//! reads both; the others sit with the algorithm they change, as noted:
//!
//! - **The retransmission timer runs on an idle connection.** `TcpAgent::newtimer` re-arms
//!   it at every new ACK while `t_seqno_ > ack`, which holds once everything sent is
//!   acknowledged; RFC 6298 §5.2 stops it. When it expires with nothing outstanding
//!   (`TcpAgent::timeout` with `slow_start_restart_` and `restart_bugfix_`, both on by
//!   default) cwnd drops to one segment (`slowdown(CLOSE_CWND_ONE|NO_OUTSTANDING_DATA)`:
//!   ssthresh kept, no backoff, not counted as a timeout), `recover` moves to the highest
//!   sequence sent (`RenoTcpAgent::timeout` with `bug_fix_`), and the timer is re-armed.
//!   In incast the servers that finished wait a whole RTO for a straggler, so this shapes
//!   the next block: it starts from one segment.
//! - **Fast retransmit needs an ACK beyond `recover`** (`dupack_action`'s `highest_ack_ >
//!   recover_` counts packets, one past RFC 6582's "covers more than recover"): after an
//!   idle expiry, a loss of the next block's first segment cannot be fast-retransmitted.
//!   Reno checks it too (`bug_fix_`); RFC 5681's Reno does not (`TcpSender::covers_recover`
//!   in `tcp::recovery`).
//! - **ssthresh halves the window, not FlightSize** (`slowdown(CLOSE_SSTHRESH_HALF)`:
//!   `int(window() / 2)` packets, at least 2: `tcp::congestion::newreno`), and a timeout
//!   halves it again even when the segment had already been resent by a timeout (RFC 5681
//!   §3.1 holds it then: `TcpSender::on_timeout`).
//! - **Whole packets.** An ns-2 agent sends `packetSize_` bytes per packet whatever the
//!   application wrote (`TcpAgent::output`), so a write's short last segment is a full
//!   packet on the wire (`host::Conns::transmit` sends [`TcpSender::packet_bytes`]), takes a whole packet of
//!   the window (`TcpAgent::output` runs while `t_seqno_ <= highest_ack_ + win`, in
//!   packets), and its ACK opens cwnd by one packet in slow start (`TcpAgent::opencwnd`:
//!   `cwnd_ += 1`, where RFC 5681 eq. (2) adds min(N, SMSS): `tcp::congestion::newreno`).
//!   With bytes, a short last segment would slip into less than a segment of window room
//!   and leave in the same burst as the segments before it.

use crate::scenario::TcpRules;
use crate::tcp::sender::TcpSender;

impl TcpSender {
    /// The payload bytes a segment of `len` bytes occupies, in the window and on the wire:
    /// its own, or a whole packet of `packetSize_` (ns-2).
    pub fn packet_bytes(&self, len: u64) -> u64 {
        match self.cfg.rules {
            TcpRules::Ns2 => self.cfg.mss,
            _ => len,
        }
    }

    /// Nothing is outstanding: does the retransmission timer keep running (ns-2)?
    pub(crate) fn timer_runs_when_idle(&self) -> bool {
        self.cfg.rules == TcpRules::Ns2
    }

    /// ns-2's timer expired on an idle connection: one segment of cwnd, `recover` at the
    /// highest sequence sent, the timer re-armed without backoff.
    pub(crate) fn idle_expiry(&mut self, now: crate::time::Time) {
        self.cwnd = self.cfg.mss;
        self.recover = self.snd_max;
        self.dupacks = 0;
        self.stats.idle_restarts += 1;
        self.restart_timer(now);
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpRules;
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
    use crate::tcp::sender::TcpSender;
    use crate::time::Time;

    fn ns2_sender() -> TcpSender {
        let mut cfg = config();
        cfg.rules = TcpRules::Ns2;
        TcpSender::new(cfg)
    }

    /// Send and acknowledge one 4-segment write: the connection is then idle.
    fn one_block(s: &mut TcpSender) -> Time {
        let mut out = vec![];
        s.cwnd = 8 * MSS;
        s.write(Time::ZERO, 4 * MSS, &mut out);
        let t = Time::from_us(100);
        s.on_ack(t, ack_of(4), &[], &mut out);
        t
    }

    #[test]
    fn the_timer_keeps_running_after_the_last_ack_and_an_idle_expiry_cuts_cwnd_to_one() {
        let mut s = ns2_sender();
        let t = one_block(&mut s);
        assert_eq!(s.timer_deadline(), Some(t + s.rto.rto), "re-armed at the last ACK (TcpAgent::newtimer)");
        let mut out = vec![];
        let fire = s.take_timer_request().unwrap();
        assert!(!s.on_timer_event(fire, &mut out), "an idle expiry is not a timeout");
        assert!(out.is_empty());
        assert_eq!(s.cwnd, MSS);
        assert_eq!((s.stats.timeouts, s.stats.idle_restarts), (0, 1));
        assert_eq!(s.rto.backoffs, 0, "no backoff without outstanding data");
        assert!(s.timer_deadline().is_some(), "re-armed while idle");
        // the RFCs stop the timer instead
        let mut s = TcpSender::new(config());
        one_block(&mut s);
        assert_eq!(s.timer_deadline(), None);
    }

    #[test]
    fn after_an_idle_expiry_the_next_writes_first_loss_is_not_fast_retransmitted() {
        // ns-2's dupack_action: highest_ack_ > recover_ fails when recover_ is the last
        // packet of the previous block (peers/ns2 test of the same name)
        let mut s = ns2_sender();
        one_block(&mut s);
        let mut out = vec![];
        let fire = s.take_timer_request().unwrap();
        s.on_timer_event(fire, &mut out);
        s.cwnd = 8 * MSS;
        s.write(fire, 8 * MSS, &mut out);
        out.clear();
        for _ in 0..5 {
            s.on_ack(fire + Time::from_us(100), ack_of(4), &[], &mut out); // segment 4 lost
        }
        assert_eq!(s.stats.fast_retransmits, 0);
        assert!(seg_numbers(&out).iter().all(|&n| n > 11), "no retransmission: {:?}", seg_numbers(&out));
    }

    #[test]
    fn ssthresh_halves_the_window_in_whole_segments() {
        let mut s = ns2_sender();
        s.cwnd = 7 * MSS + MSS / 2;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        assert_eq!(s.loss_ssthresh(), 3 * MSS, "int(7 / 2) segments");
    }

    /// ssthresh after the timer expired twice for the first of 8 segments in flight.
    fn ssthresh_after_two_timeouts(mut s: TcpSender) -> u64 {
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        for _ in 0..2 {
            let t = s.take_timer_request().unwrap();
            assert!(s.on_timer_event(t, &mut out));
        }
        s.ssthresh
    }

    #[test]
    fn a_repeated_timeout_halves_ssthresh_again() {
        // RFC 5681 §3.1 holds ssthresh at the second expiry (eq. (4) at the first: 8 / 2);
        // ns-2's slowdown halves the one-segment window again, to the minimum of 2
        assert_eq!(ssthresh_after_two_timeouts(TcpSender::new(config())), 4 * MSS);
        assert_eq!(ssthresh_after_two_timeouts(ns2_sender()), 2 * MSS);
    }

    #[test]
    fn slow_start_opens_a_whole_segment_for_the_ack_of_a_short_last_segment() {
        // ns-2's opencwnd adds one packet per new ACK; RFC 5681 eq. (2) adds the bytes acked
        for (mut s, growth) in [(ns2_sender(), MSS), (TcpSender::new(config()), 100)] {
            let mut out = vec![];
            s.write(Time::ZERO, MSS + 100, &mut out);
            s.on_ack(Time::from_us(100), ack_of(1), &[], &mut out);
            let before = s.cwnd;
            s.on_ack(Time::from_us(110), ack_of(1) + 100, &[], &mut out);
            assert_eq!(s.cwnd - before, growth, "{:?}", s.cfg.rules);
        }
    }

    #[test]
    fn a_short_last_segment_takes_a_whole_segment_of_window() {
        // cwnd 2.5 segments: the RFCs send a 100 B third segment into the half segment of
        // room; ns-2 counts packets and sends two
        for (mut s, sent) in [(ns2_sender(), 2), (TcpSender::new(config()), 3)] {
            s.cwnd = 2 * MSS + MSS / 2;
            let mut out = vec![];
            s.write(Time::ZERO, 2 * MSS + 100, &mut out);
            assert_eq!(out.len(), sent, "{:?}", s.cfg.rules);
        }
    }
}
