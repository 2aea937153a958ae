//! Reno fast retransmit and fast recovery (RFC 5681 §3.2, the algorithm FAST'08 calls
//! "TCP Reno").
//!
//! It enters fast recovery on the third duplicate ACK as NewReno does (without RFC 6582's
//! `recover` check; shared code in `newreno.rs`), but the first ACK of new data ends recovery and deflates cwnd to ssthresh, even if it only acknowledges
//! part of the window. Further losses in the same window then need three new duplicate
//! ACKs, which a small window cannot produce: "with a window size of six, Reno will always
//! experience a timeout when the first two packets of the window are lost" (FAST'08
//! §5.1.1).

use crate::tcp::sender::TcpSender;
use crate::time::Time;

impl TcpSender {
    /// An ACK of new data arrived in fast recovery (Reno): recovery ends.
    pub(crate) fn on_new_ack_in_recovery_reno(&mut self, now: Time) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.cwnd = self.ssthresh;
        self.restart_timer(now);
    }
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
