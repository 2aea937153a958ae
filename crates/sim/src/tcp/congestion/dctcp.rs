//! DCTCP's sender (RFC 8257 §3.3-3.5; Alizadeh et al., SIGCOMM 2010, §3.1): it estimates
//! the fraction of its bytes that met a queue above the marking threshold, alpha, once
//! per window of data, and answers marks with cwnd x (1 - alpha / 2) once per window.
//! Window growth, losses and timeouts are NewReno's (RFC 8257 §3.5: "a DCTCP sender ...
//! MUST react to loss episodes in the same way as conventional TCP").

use crate::tcp::congestion::newreno::NewReno;
use crate::tcp::sender::SenderConfig;

/// RFC 8257 §3.3's estimation gain g: 1/16 (§4.2: "g = 1/16"; the paper's §3.3).
pub const G: f64 = 1.0 / 16.0;

/// DCTCP over NewReno's growth and loss response.
#[derive(Clone, Debug)]
pub struct Dctcp {
    classic: NewReno,
    mss: u64,
    /// DCTCP.Alpha (RFC 8257 §3.3). Starts at 1 as Linux's `dctcp_alpha_on_init`
    /// (DCTCP_MAX_ALPHA) does: the first marks halve cwnd.
    pub alpha: f64,
    /// DCTCP.WindowEnd: when SND.UNA passes it, a window of data has been observed.
    window_end: u64,
    /// DCTCP.BytesAcked and DCTCP.BytesMarked of the current observation window.
    bytes_acked: u64,
    bytes_marked: u64,
    /// The ECE response is over when SND.UNA reaches this (once per window, RFC 3168
    /// §6.1.2, RFC 8257 §3.4).
    cwr_end: u64,
}

impl Dctcp {
    pub fn new(cfg: &SenderConfig) -> Self {
        Dctcp { classic: NewReno::new(cfg), mss: cfg.mss, alpha: 1.0, window_end: 1, bytes_acked: 0, bytes_marked: 0, cwr_end: 1 }
    }

    #[inline]
    pub fn on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        self.classic.on_ack(cwnd, ssthresh, acked);
    }

    #[inline]
    pub fn ssthresh_on_loss(&self, cwnd: u64, in_flight: u64, window: u64) -> u64 {
        self.classic.ssthresh_on_loss(cwnd, in_flight, window)
    }

    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, window: u64, repeated: bool) {
        self.classic.on_timeout(cwnd, ssthresh, in_flight, window, repeated);
    }

    /// An ACK arrived (before loss recovery sees it): it acknowledged `acked` new bytes,
    /// carried ECE if `ece`; `snd_una` is after it, `snd_nxt` the next byte to send.
    /// `recovering`: loss recovery is under way and has already reduced the window.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack_ecn(&mut self, cwnd: &mut u64, ssthresh: &mut u64, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64, recovering: bool) {
        // RFC 8257 §3.3 steps 1-2: count the bytes acknowledged, and those marked
        self.bytes_acked += acked;
        if ece {
            self.bytes_marked += acked;
        }
        // steps 3-7: once SND.UNA passes WindowEnd, fold the window's fraction into alpha
        if snd_una > self.window_end {
            let f = if self.bytes_acked > 0 { self.bytes_marked as f64 / self.bytes_acked as f64 } else { 0.0 };
            self.alpha = (1.0 - G) * self.alpha + G * f;
            self.window_end = snd_nxt;
            self.bytes_acked = 0;
            self.bytes_marked = 0;
        }
        // §3.4: on ECE, cwnd = cwnd x (1 - alpha / 2), at most once per window of data;
        // ssthresh follows so the window grows again by congestion avoidance (RFC 3168
        // §6.1.2), and not below 2 segments (Linux's dctcp_ssthresh)
        if ece && !recovering && snd_una >= self.cwr_end {
            let reduced = (*cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
            *cwnd = reduced.max(2 * self.mss);
            *ssthresh = *cwnd;
            self.cwr_end = snd_nxt.max(snd_una + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::tests::{config, MSS};

    fn dctcp() -> Dctcp {
        Dctcp::new(&config())
    }

    #[test]
    fn alpha_moves_by_g_times_the_marked_fraction_once_per_window() {
        // RFC 8257 §3.3: alpha = (1 - g) alpha + g F at the end of each window. Window 1
        // ends when SND.UNA passes 1: half of the 4000 bytes of the next window are marked.
        let mut d = dctcp();
        d.alpha = 0.0;
        let (mut cwnd, mut ss) = (10 * MSS, u64::MAX);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, false, 1001, 5001, false); // ends window 1 (F = 0)
        assert_eq!(d.alpha, 0.0);
        d.on_ack_ecn(&mut cwnd, &mut ss, 2000, false, 3001, 7001, false);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 4001, 8001, false);
        assert_eq!(d.alpha, 0.0, "no update before SND.UNA passes WindowEnd = 5001");
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 5001, 9001, false);
        assert_eq!(d.alpha, 0.0, "SND.UNA = WindowEnd is not past it");
        d.on_ack_ecn(&mut cwnd, &mut ss, 0, false, 5002, 9001, false);
        // window 2 acknowledged 2000 + 1000 + 1000 + 0 bytes, 2000 of them marked
        assert!((d.alpha - G * 2000.0 / 4000.0).abs() < 1e-12, "{}", d.alpha);
    }

    #[test]
    fn marks_cut_cwnd_by_alpha_over_two_once_per_window() {
        // RFC 8257 §3.4: cwnd = cwnd x (1 - alpha / 2); alpha = 0.5 -> x 0.75.
        let mut d = dctcp();
        d.alpha = 0.5;
        d.window_end = u64::MAX; // keep alpha fixed for this test
        let (mut cwnd, mut ss) = (40 * MSS, u64::MAX);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 1001, 40_001, false);
        assert_eq!((cwnd, ss), (30 * MSS, 30 * MSS));
        // more ECE within the same window (SND.UNA < 40001): no second cut
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 2001, 40_001, false);
        assert_eq!(cwnd, 30 * MSS);
        // the next window's ECE cuts again
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 40_001, 70_001, false);
        assert_eq!(cwnd, 22_500);
    }

    #[test]
    fn no_cut_without_ece_or_during_loss_recovery_and_never_below_two_segments() {
        let mut d = dctcp(); // alpha = 1: a halving
        let (mut cwnd, mut ss) = (10 * MSS, u64::MAX);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, false, 1001, 10_001, false);
        assert_eq!(cwnd, 10 * MSS);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 2001, 10_001, true);
        assert_eq!(cwnd, 10 * MSS, "loss recovery already reduced this window (RFC 8257 §3.5)");
        let (mut cwnd, mut ss) = (3 * MSS, u64::MAX);
        d.on_ack_ecn(&mut cwnd, &mut ss, 1000, true, 3001, 10_001, false);
        assert_eq!(cwnd, 2 * MSS);
    }
}
