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
//!
//! Linux's reno (net/ipv4/tcp_cong.c) differs from the RFCs in three rules, each a scenario
//! flag (on in the `linux` preset, off by default):
//! - `ssthresh_from_cwnd`: `tcp_reno_ssthresh` returns max(cwnd / 2, 2) in whole segments,
//!   half the congestion window, not half of FlightSize; it is called at fast-recovery entry
//!   (`tcp_init_cwnd_reduction`) and at a timeout (`tcp_enter_loss`, net/ipv4/tcp_input.c);
//! - `count_acked_segments`: growth counts the segments an ACK acknowledges, not the ACKs:
//!   `tcp_slow_start` adds every one of them up to ssthresh (no RFC 3465 limit L) and hands
//!   the rest to `tcp_cong_avoid_ai`, which adds one segment per cwnd segments acknowledged
//!   (its credit `snd_cwnd_cnt`, cleared by `tcp_enter_loss`). With a receiver that ACKs
//!   every second segment, RFC 5681 eq. (3) grows cwnd by half a segment per RTT and Linux
//!   by one. The simulator counts bytes: a segment is SMSS bytes;
//! - `cwnd_limited_growth`: `tcp_reno_cong_avoid` grows nothing unless
//!   `tcp_is_cwnd_limited` (include/net/tcp.h): RFC 7661's idea that an unused window is not
//!   grown, which RFC 5681 does not have.

use crate::scenario::TcpRules;
use crate::tcp::congestion::AckClock;
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
    /// Linux's `tcp_reno_ssthresh`: half of cwnd, not of FlightSize.
    ssthresh_from_cwnd: bool,
    /// Linux's `tcp_slow_start` / `tcp_cong_avoid_ai`: growth per segment acknowledged.
    count_acked_segments: bool,
    /// Linux's `tcp_is_cwnd_limited` gate: grow only when the window was what limited the
    /// sender.
    cwnd_limited_growth: bool,
    /// `tcp_cong_avoid_ai`'s credit (`snd_cwnd_cnt`), in bytes acknowledged in congestion
    /// avoidance since cwnd last grew.
    credit: u64,
}

impl NewReno {
    pub fn new(cfg: &SenderConfig) -> Self {
        let counting = match cfg.rules {
            TcpRules::Rfc => Counting::Bytes,
            TcpRules::Ns2 => Counting::Packets,
            TcpRules::Ns3 => Counting::Segments,
        };
        NewReno {
            mss: cfg.mss,
            slow_start: cfg.slow_start,
            counting,
            ssthresh_from_cwnd: cfg.ssthresh_from_cwnd,
            count_acked_segments: cfg.count_acked_segments,
            cwnd_limited_growth: cfg.cwnd_limited_growth,
            credit: 0,
        }
    }

    /// May this ACK grow cwnd? Always by RFC 5681; with `cwnd_limited_growth`, only when
    /// Linux's `tcp_is_cwnd_limited` (include/net/tcp.h) holds, as `tcp_reno_cong_avoid`
    /// asks first: in slow start while cwnd < 2 x the packets out, else when the window was
    /// cwnd-limited. The simulator reads both from the flight before this ACK (Linux keeps
    /// the largest flight and whether the window was limited over the last window,
    /// `tcp_cwnd_validate`).
    #[inline]
    pub fn may_grow(&self, clock: AckClock, cwnd: u64, ssthresh: u64) -> bool {
        if !self.cwnd_limited_growth || clock.cwnd_limited {
            return true;
        }
        self.slow_start && cwnd < ssthresh && cwnd < 2 * clock.prior_flight
    }

    /// Linux's growth (`tcp_reno_cong_avoid`): slow start adds every byte acknowledged up
    /// to ssthresh (`tcp_slow_start`), and what is left goes to congestion avoidance, one
    /// SMSS per cwnd bytes acknowledged (`tcp_cong_avoid_ai` with w = cwnd: a credit
    /// earned at a larger cwnd is spent first, as one segment).
    /// Kept out of line: inlined, it made `on_ack` too large to inline into the per-ACK
    /// path of every other rule set (+0.4 % instructions on FAST'08 at 1 server).
    #[inline(never)]
    fn linux_on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, mut acked: u64) {
        if self.slow_start && *cwnd < ssthresh {
            let grown = (*cwnd + acked).min(ssthresh);
            acked -= grown - *cwnd;
            *cwnd = grown;
            if acked == 0 {
                return;
            }
        }
        if self.credit >= *cwnd {
            self.credit = 0;
            *cwnd += self.mss;
        }
        self.credit += acked;
        if self.credit >= *cwnd {
            let segments = self.credit / *cwnd;
            self.credit -= segments * *cwnd;
            *cwnd += segments * self.mss;
        }
    }

    /// Congestion avoidance's increase per ACK: SMSS x SMSS / cwnd, at least one byte
    /// (RFC 5681 eq. (3)).
    fn avoidance_increase(&self, cwnd: u64) -> u64 {
        (self.mss * self.mss / cwnd).max(1)
    }

    /// An ACK of `acked` new bytes outside recovery (RFC 5681 §3.1).
    #[inline(always)]
    pub fn on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        let mss = self.mss;
        if self.count_acked_segments {
            return self.linux_on_ack(cwnd, ssthresh, acked);
        }
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

    /// Forget the congestion-avoidance credit (`tcp_init_cwnd_reduction`'s snd_cwnd_cnt = 0).
    pub fn clear_credit(&mut self) {
        self.credit = 0;
    }

    /// ssthresh after a loss: max(FlightSize / 2, 2 SMSS) (RFC 5681 eq. (4)), with
    /// `in_flight` as FlightSize; ns-2 halves `window` (min(cwnd, rwnd)) in whole packets;
    /// with `ssthresh_from_cwnd`, Linux's `tcp_reno_ssthresh` halves `cwnd` in whole
    /// segments (its cwnd counts packets: `snd_cwnd >> 1`).
    #[inline]
    pub fn ssthresh_on_loss(&self, cwnd: u64, in_flight: u64, window: u64) -> u64 {
        let mss = self.mss;
        let half = match self.counting {
            _ if self.ssthresh_from_cwnd => cwnd / mss / 2 * mss,
            Counting::Packets => window / mss / 2 * mss,
            _ => in_flight / 2,
        };
        half.max(2 * mss)
    }

    /// RFC 5681 §3.1: after a retransmission timeout ssthresh follows eq. (4), unless the
    /// segment had already been retransmitted by a timeout (`repeated`: then it is held),
    /// and cwnd is the loss window, one SMSS.
    /// With `count_acked_segments` the growth credit is cleared, as `tcp_enter_loss` clears
    /// `snd_cwnd_cnt`.
    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, window: u64, repeated: bool) {
        if !repeated {
            *ssthresh = self.ssthresh_on_loss(*cwnd, in_flight, window);
        }
        self.credit = 0;
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
        assert_eq!(c.ssthresh_on_loss(40 * MSS, 10 * MSS, 40 * MSS), 5 * MSS, "FlightSize, not the window");
        assert_eq!(c.ssthresh_on_loss(7 * MSS, 7 * MSS, 7 * MSS), 7 * MSS / 2, "in bytes");
        assert_eq!(c.ssthresh_on_loss(3 * MSS, 3 * MSS, 3 * MSS), 2 * MSS, "at least 2 SMSS");
    }

    #[test]
    fn ns2_halves_the_window_in_whole_packets() {
        // slowdown(CLOSE_SSTHRESH_HALF): int(window() / 2) packets, at least 2
        let c = newreno(TcpRules::Ns2);
        assert_eq!(c.ssthresh_on_loss(7 * MSS + MSS / 2, MSS, 7 * MSS + MSS / 2), 3 * MSS, "the window, not FlightSize");
        assert_eq!(c.ssthresh_on_loss(MSS, 10 * MSS, MSS), 2 * MSS);
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

    fn linux(ssthresh_from_cwnd: bool, count_acked_segments: bool, cwnd_limited_growth: bool) -> NewReno {
        NewReno::new(&SenderConfig { ssthresh_from_cwnd, count_acked_segments, cwnd_limited_growth, ..config() })
    }

    #[test]
    fn linux_ssthresh_is_half_of_cwnd_in_whole_segments_tcp_reno_ssthresh() {
        // tcp_reno_ssthresh: max(snd_cwnd >> 1, 2), snd_cwnd in packets
        let c = linux(true, false, false);
        assert_eq!(c.ssthresh_on_loss(10 * MSS, 4 * MSS, 10 * MSS), 5 * MSS, "cwnd, not the 4 segments in flight");
        assert_eq!(c.ssthresh_on_loss(7 * MSS + MSS / 2, 7 * MSS, 7 * MSS), 3 * MSS, "7 whole segments >> 1");
        assert_eq!(c.ssthresh_on_loss(3 * MSS, 3 * MSS, 3 * MSS), 2 * MSS, "at least 2");
        // a timeout takes it from cwnd too (tcp_enter_loss calls ca_ops->ssthresh)
        let mut c = linux(true, false, false);
        let (mut cwnd, mut ssthresh) = (12 * MSS, 1 << 30);
        c.on_timeout(&mut cwnd, &mut ssthresh, MSS, 12 * MSS, false);
        assert_eq!((cwnd, ssthresh), (MSS, 6 * MSS), "one segment in flight at the timeout, cwnd 12");
    }

    #[test]
    fn linux_slow_start_adds_every_segment_acknowledged_up_to_ssthresh_tcp_slow_start() {
        let mut c = linux(false, true, false);
        let mut cwnd = 10 * MSS;
        c.on_ack(&mut cwnd, 100 * MSS, 2 * MSS);
        assert_eq!(cwnd, 12 * MSS, "a delayed ACK of two segments opens two (RFC 5681 eq. (2): one)");
        // crossing ssthresh: 1 segment of slow start, the other 2 are congestion avoidance's
        // credit (2 of the 10 segments the next segment of growth needs)
        let mut cwnd = 9 * MSS;
        c.on_ack(&mut cwnd, 10 * MSS, 3 * MSS);
        assert_eq!(cwnd, 10 * MSS);
        c.on_ack(&mut cwnd, 10 * MSS, 7 * MSS);
        assert_eq!(cwnd, 10 * MSS, "9 of 10 segments' credit");
        c.on_ack(&mut cwnd, 10 * MSS, MSS);
        assert_eq!(cwnd, 11 * MSS, "the 10th");
    }

    #[test]
    fn linux_congestion_avoidance_adds_a_segment_per_window_acknowledged_tcp_cong_avoid_ai() {
        // four ACKs of two segments each at cwnd 8: one window acknowledged, one segment more;
        // RFC 5681 eq. (3) adds SMSS^2 / cwnd per ACK, half a segment for the same window
        let (mut linux_cwnd, mut rfc_cwnd) = (8 * MSS, 8 * MSS);
        let (mut c, mut rfc) = (linux(false, true, false), newreno(TcpRules::Rfc));
        for _ in 0..4 {
            c.on_ack(&mut linux_cwnd, 2 * MSS, 2 * MSS);
            rfc.on_ack(&mut rfc_cwnd, 2 * MSS, 2 * MSS);
        }
        assert_eq!(linux_cwnd, 9 * MSS);
        assert!(rfc_cwnd > 8 * MSS + 4 * MSS / 10 && rfc_cwnd < 8 * MSS + MSS / 2, "RFC: {rfc_cwnd}");
        // a stretch ACK of two windows at once adds two segments
        let mut cwnd = 4 * MSS;
        c.credit = 0;
        c.on_ack(&mut cwnd, 2 * MSS, 8 * MSS);
        assert_eq!(cwnd, 6 * MSS);
    }

    #[test]
    fn linux_timeout_clears_the_growth_credit_tcp_enter_loss() {
        let mut c = linux(false, true, false);
        let mut cwnd = 10 * MSS;
        c.on_ack(&mut cwnd, 2 * MSS, 9 * MSS);
        assert_eq!((cwnd, c.credit), (10 * MSS, 9 * MSS));
        let mut ssthresh = 2 * MSS;
        c.on_timeout(&mut cwnd, &mut ssthresh, 10 * MSS, 10 * MSS, false);
        assert_eq!(c.credit, 0, "snd_cwnd_cnt = 0");
    }

    #[test]
    fn linux_grows_only_a_window_that_limits_the_sender_tcp_is_cwnd_limited() {
        let clock = |cwnd_limited, prior_flight| AckClock { now: crate::time::Time::ZERO, srtt: None, cwnd_limited, prior_flight };
        let c = linux(false, false, true);
        assert!(c.may_grow(clock(true, 10 * MSS), 10 * MSS, 5 * MSS), "cwnd-limited");
        assert!(!c.may_grow(clock(false, 3 * MSS), 10 * MSS, 5 * MSS), "avoidance, 3 of 10 segments used");
        // slow start: grows while cwnd < 2 x the packets out ("cwnd is 10, the application
        // sends 9 frames: we allow cwnd to reach 18")
        assert!(c.may_grow(clock(false, 9 * MSS), 17 * MSS, 100 * MSS));
        assert!(!c.may_grow(clock(false, 9 * MSS), 18 * MSS, 100 * MSS));
        assert!(newreno(TcpRules::Rfc).may_grow(clock(false, 0), 10 * MSS, 5 * MSS), "RFC 5681: always");
    }
}
