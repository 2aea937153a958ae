//! NewReno's congestion control (ns-3's `TcpNewReno`): RFC 5681 §3.1 slow start and
//! congestion avoidance, and on a loss ssthresh = max(FlightSize / 2, 2 SMSS) (eq. (4)).
//!
//! The rule sets count differently, and the reading each takes is kept here:
//! - the RFCs count bytes: slow start adds min(N, SMSS) for an ACK of N new bytes
//!   (eq. (2)), congestion avoidance SMSS x SMSS / cwnd per ACK (eq. (3));
//! - ns-2 counts packets (`TcpAgent::opencwnd`: one packet per new ACK in slow start, so
//!   the ACK of a short last segment opens a whole one) and halves the window, not
//!   FlightSize, in whole packets (`slowdown(CLOSE_SSTHRESH_HALF)`: `int(window() / 2)`);
//! - ns-3 counts whole segments acknowledged (`TcpNewReno::IncreaseWindow`: slow start takes
//!   one segment of the ACK, congestion avoidance then grows once if any are left, even
//!   past ssthresh in the same ACK); its socket carries the bytes short of a segment to the
//!   next ACK and passes its pipe as the bytes in flight (`tcp::recovery::ns3`).

use crate::scenario::TcpRules;
use crate::tcp::sender::SenderConfig;

/// How the window and the data an ACK acknowledges are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counting {
    /// The RFCs: bytes.
    Bytes,
    /// ns-2: whole packets.
    Packets,
    /// ns-3: whole segments acknowledged; the caller passes whole segments' bytes.
    Segments,
}

/// RFC 5681 AIMD.
#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u64,
    /// Off: the window only grows additively (FAST'08 §5.1.2, "no slow start").
    slow_start: bool,
    counting: Counting,
}

impl NewReno {
    pub fn new(cfg: &SenderConfig) -> Self {
        let counting = match cfg.rules {
            TcpRules::Rfc => Counting::Bytes,
            TcpRules::Ns2 => Counting::Packets,
            TcpRules::Ns3 => Counting::Segments,
        };
        NewReno { mss: cfg.mss, slow_start: cfg.slow_start, counting }
    }

    /// Congestion avoidance's increase per ACK: SMSS x SMSS / cwnd, at least one byte
    /// (RFC 5681 eq. (3)).
    fn avoidance_increase(&self, cwnd: u64) -> u64 {
        (self.mss * self.mss / cwnd).max(1)
    }

    /// An ACK of `acked` new bytes outside recovery (RFC 5681 §3.1).
    #[inline]
    pub fn on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        let mss = self.mss;
        match self.counting {
            Counting::Segments => {
                let mut segments = acked / mss;
                if *cwnd < ssthresh && segments >= 1 {
                    *cwnd += mss; // TcpNewReno::SlowStart
                    segments -= 1;
                }
                if *cwnd >= ssthresh && segments > 0 {
                    *cwnd += self.avoidance_increase(*cwnd); // TcpNewReno::CongestionAvoidance
                }
            }
            // slow start: one packet (ns-2's opencwnd), or min(N, SMSS) (eq. (2))
            Counting::Packets if self.slow_start && *cwnd < ssthresh => *cwnd += mss,
            Counting::Bytes if self.slow_start && *cwnd < ssthresh => *cwnd += acked.min(mss),
            _ => *cwnd += self.avoidance_increase(*cwnd),
        }
    }

    /// ssthresh after a loss: max(FlightSize / 2, 2 SMSS) (RFC 5681 eq. (4)), with
    /// `in_flight` as FlightSize; ns-2 halves `window` (min(cwnd, rwnd)) in whole packets.
    #[inline]
    pub fn ssthresh_on_loss(&self, in_flight: u64, window: u64) -> u64 {
        let mss = self.mss;
        let half = match self.counting {
            Counting::Packets => window / mss / 2 * mss,
            _ => in_flight / 2,
        };
        half.max(2 * mss)
    }

    /// RFC 5681 §3.1: after a retransmission timeout ssthresh follows eq. (4), unless the
    /// segment had already been retransmitted by a timeout (`repeated`: then it is held),
    /// and cwnd is the loss window, one SMSS.
    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, window: u64, repeated: bool) {
        if !repeated {
            *ssthresh = self.ssthresh_on_loss(in_flight, window);
        }
        *cwnd = self.mss;
        if !self.slow_start {
            *ssthresh = *cwnd; // no slow start: growth stays additive
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::tests::{config, MSS};

    fn newreno(rules: TcpRules) -> NewReno {
        NewReno::new(&SenderConfig { rules, ..config() })
    }

    #[test]
    fn ssthresh_is_half_the_flight_size_but_at_least_two_segments_rfc5681_eq4() {
        let c = newreno(TcpRules::Rfc);
        assert_eq!(c.ssthresh_on_loss(10 * MSS, 40 * MSS), 5 * MSS, "FlightSize, not the window");
        assert_eq!(c.ssthresh_on_loss(7 * MSS, 7 * MSS), 7 * MSS / 2, "in bytes");
        assert_eq!(c.ssthresh_on_loss(3 * MSS, 3 * MSS), 2 * MSS, "at least 2 SMSS");
    }

    #[test]
    fn ns2_halves_the_window_in_whole_packets() {
        // slowdown(CLOSE_SSTHRESH_HALF): int(window() / 2) packets, at least 2
        let c = newreno(TcpRules::Ns2);
        assert_eq!(c.ssthresh_on_loss(MSS, 7 * MSS + MSS / 2), 3 * MSS, "the window, not FlightSize");
        assert_eq!(c.ssthresh_on_loss(10 * MSS, MSS), 2 * MSS);
    }

    #[test]
    fn slow_start_adds_the_bytes_acknowledged_up_to_one_smss_rfc5681_eq2() {
        let mut c = newreno(TcpRules::Rfc);
        let mut cwnd = 2 * MSS;
        c.on_ack(&mut cwnd, 10 * MSS, 100);
        assert_eq!(cwnd, 2 * MSS + 100);
        c.on_ack(&mut cwnd, 10 * MSS, 3 * MSS);
        assert_eq!(cwnd, 3 * MSS + 100, "one SMSS for an ACK of three");
    }

    #[test]
    fn congestion_avoidance_adds_smss_squared_over_cwnd_rfc5681_eq3() {
        let mut c = newreno(TcpRules::Rfc);
        let mut cwnd = 4 * MSS;
        c.on_ack(&mut cwnd, 2 * MSS, MSS);
        assert_eq!(cwnd, 4 * MSS + MSS / 4);
        let mut huge = 2 * MSS * MSS;
        c.on_ack(&mut huge, 0, MSS);
        assert_eq!(huge, 2 * MSS * MSS + 1, "at least one byte");
    }

    #[test]
    fn without_slow_start_growth_is_additive_below_ssthresh() {
        let mut c = NewReno::new(&SenderConfig { slow_start: false, ..config() });
        let mut cwnd = 2 * MSS;
        c.on_ack(&mut cwnd, 10 * MSS, MSS);
        assert_eq!(cwnd, 2 * MSS + MSS / 2);
    }

    #[test]
    fn ns2_slow_start_opens_a_whole_packet_for_a_short_segment() {
        let mut c = newreno(TcpRules::Ns2);
        let mut cwnd = 2 * MSS;
        c.on_ack(&mut cwnd, 10 * MSS, 100);
        assert_eq!(cwnd, 3 * MSS);
    }

    #[test]
    fn ns3_counts_whole_segments_and_may_cross_into_avoidance_in_one_ack() {
        let mut c = newreno(TcpRules::Ns3);
        let mut cwnd = 2 * MSS;
        c.on_ack(&mut cwnd, 10 * MSS, MSS - 1);
        assert_eq!(cwnd, 2 * MSS, "less than a segment grows nothing");
        // one segment below ssthresh, two acknowledged: slow start, then avoidance
        let mut cwnd = 3 * MSS;
        c.on_ack(&mut cwnd, 4 * MSS, 2 * MSS);
        assert_eq!(cwnd, 4 * MSS + MSS / 4);
    }

    #[test]
    fn timeout_sets_the_loss_window_and_holds_ssthresh_when_repeated_rfc5681_3_1() {
        let mut c = newreno(TcpRules::Rfc);
        let (mut cwnd, mut ssthresh) = (8 * MSS, 20 * MSS);
        c.on_timeout(&mut cwnd, &mut ssthresh, 8 * MSS, 8 * MSS, false);
        assert_eq!((cwnd, ssthresh), (MSS, 4 * MSS));
        c.on_timeout(&mut cwnd, &mut ssthresh, 8 * MSS, MSS, true);
        assert_eq!((cwnd, ssthresh), (MSS, 4 * MSS), "held on a repeated timeout");
        let mut c = NewReno::new(&SenderConfig { slow_start: false, ..config() });
        c.on_timeout(&mut cwnd, &mut ssthresh, 8 * MSS, 8 * MSS, false);
        assert_eq!(ssthresh, MSS, "no slow start: ssthresh follows cwnd");
    }
}
