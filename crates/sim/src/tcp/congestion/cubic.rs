//! CUBIC congestion control as RFC 9438 specifies it. The window grows along
//! W_cubic(t) = C (t - K)^3 + W_max (§4.2, eq. 1), with t the time since the current
//! congestion-avoidance epoch began and K = cbrt((W_max - cwnd_epoch) / C) (eq. 2); it
//! never grows slower than the Reno estimate W_est (§4.3, the Reno-friendly region). Each
//! ACK moves cwnd by (target - cwnd) / cwnd segments towards target = W_cubic(t + RTT)
//! clamped to [cwnd, 1.5 cwnd] (§4.2; concave below W_max, §4.4, convex above, §4.5). A
//! loss leaves ssthresh = FlightSize x beta_cubic (§4.6) and remembers W_max, lowered by
//! fast convergence when the window had not regained the last W_max (§4.7); a timeout
//! follows Reno's cwnd = 1 SMSS with CUBIC's ssthresh, and the next epoch starts with
//! K = 0 and W_max = cwnd_epoch (§4.8).
//!
//! Application-limited periods (§5.8: "CUBIC does not increase its congestion window if a
//! flow is application-limited", by the sender application or by the receive window; §4.2:
//! t "MUST NOT include" such periods). An ACK that finds the flight below cwnd by a segment
//! or more (`AckClock::cwnd_limited` false) grows neither cwnd nor W_est, in slow start or
//! not, as Linux's `tcp_is_cwnd_limited` gate does, and the time since the epoch's last ACK
//! is taken out of t. When the application writes again after the sender had nothing
//! outstanding, the epoch start moves forward by the idle time, as Linux does at
//! CA_EVENT_TX_START. Incast needs both: a server idles between blocks while the client
//! waits for the slowest one, and without it t would run on and the next block would
//! start on the steep convex part of the curve; a flow held by the receive window (FAST'08's
//! 20 packets) would otherwise grow cwnd far past anything it sends, and remember that as
//! W_max.
//!
//! Slow start is RFC 5681 §3.1 (which §4.10 allows), or with `hystart` Linux's HyStart
//! (`tcp::congestion::hystart`), which leaves it early at an ACK train or a delay increase.
//! Out of scope: HyStart++ (RFC 9406; Linux does not run it), undoing spurious losses
//! (§4.9), ECN.
//!
//! Units and exactness. The simulator counts bytes and picoseconds; the RFC counts
//! segments and seconds (C = 0.4 segments/s^3). Time stays an exact integer until the
//! cube: t and RTT are converted to seconds only to evaluate eq. (1) and (2) in f64, and
//! the result is floored to whole bytes, so the per-ACK step (integer arithmetic from
//! there) is deterministic; f64 rounding moves a target by far less than a byte. beta_cubic
//! = 7/10 and alpha_cubic = 3 (1 - beta) / (1 + beta) = 9/17 are exact rationals here.
//!
//! Where Linux's tcp_cubic.c differs, this follows the RFC: Linux counts cwnd in whole
//! packets and grows by one packet every `cnt` ACKs (a byte-counted window here grows by a
//! fraction of a segment per ACK), takes the cube root in fixed point (`bic_scale`, `cubic_root`)
//! with t in jiffies, recomputes `cnt` at most once a jiffy, takes ssthresh from cwnd, not
//! FlightSize, and forgets W_max at a timeout (`bictcp_reset`). Its `tcp_friendliness` (on by
//! default) is §4.3's region without the switch to alpha = 1. These are not within a segment
//! at incast's windows: against the Linux testbed the kernel's rules bring the drops within
//! 7 % at 13 of 14 points, where these gave up to 12x fewer or 40 % more (docs/testbed.md).
//! `cubic_linux` (on in the `linux` preset) runs them instead (`tcp::congestion::cubic_linux`).

use crate::tcp::congestion::cubic_linux::LinuxCubic;
use crate::tcp::congestion::hystart::{self, HyStart};
use crate::tcp::congestion::AckClock;
use crate::tcp::sender::SenderConfig;
use crate::time::Time;

/// C in segments per second cubed (§5.1: 0.4).
const C: f64 = 0.4;
/// beta_cubic = 0.7 (§4.6) as a fraction.
const BETA_NUM: u64 = 7;
const BETA_DEN: u64 = 10;
/// alpha_cubic = 3 (1 - beta) / (1 + beta) = 0.9 / 1.7 (§4.3) as a fraction.
const ALPHA_NUM: u64 = 9;
const ALPHA_DEN: u64 = 17;
/// W_est is kept in 1/1024 bytes so that its small per-ACK increments are not lost.
const EST_SCALE: u64 = 1024;
const PS_PER_S: f64 = 1e12;

/// One congestion-avoidance epoch (§4.2): when it began and the curve it follows.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Time,
    /// K in seconds (eq. 2).
    k: f64,
    /// The W_max of this epoch's curve, in bytes.
    w_max: u64,
    /// The Reno estimate W_est (§4.3), in 1/EST_SCALE bytes.
    w_est: u64,
    /// The epoch's latest ACK: an application-limited ACK moves `start` by the time since.
    last_ack: Time,
}

/// RFC 9438 CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic {
    mss: u64,
    slow_start: bool,
    /// The window just before the last reduction, after fast convergence (§4.7); None
    /// before the first congestion event.
    w_max: Option<u64>,
    /// cwnd before the last reduction (§4.6 cwnd_prior): W_est grows by alpha_cubic until it
    /// reaches it, then by one segment per RTT (§4.3).
    cwnd_prior: u64,
    epoch: Option<Epoch>,
    /// The next epoch follows a timeout: K = 0, W_max = cwnd_epoch (§4.8).
    after_timeout: bool,
    /// Linux's HyStart, with `hystart` on (and slow start).
    hystart: Option<HyStart>,
    /// When the current epoch began as Linux keeps it (`epoch_start`), for HyStart's one-second
    /// gate: moved on by idle time, not by application-limited ACKs (which move `Epoch::start`).
    linux_epoch_start: Option<Time>,
    /// With `cubic_linux`, Linux's tcp_cubic.c in place of the rules above
    /// (`tcp::congestion::cubic_linux`); HyStart stays here.
    linux: Option<LinuxCubic>,
}

impl Cubic {
    pub fn new(cfg: &SenderConfig) -> Self {
        Cubic {
            mss: cfg.mss,
            slow_start: cfg.slow_start,
            w_max: None,
            cwnd_prior: 0,
            epoch: None,
            after_timeout: false,
            hystart: (cfg.hystart && cfg.slow_start).then(HyStart::new),
            linux_epoch_start: None,
            linux: cfg.cubic_linux.then(|| LinuxCubic::new(cfg.mss, cfg.granularity, cfg.slow_start)),
        }
    }

    /// An ACK with an RTT sample, before it grows cwnd: HyStart may end slow start here
    /// (ssthresh = cwnd), as Linux's `cubictcp_acked` does before `cong_avoid`.
    #[inline]
    pub fn on_sample(&mut self, s: hystart::Sample, cwnd: u64, ssthresh: &mut u64) {
        let epoch_start = match &mut self.linux {
            Some(l) => {
                l.on_sample(s.now, s.rtt);
                l.epoch_start()
            }
            None => self.linux_epoch_start,
        };
        if let Some(h) = &mut self.hystart {
            if h.on_sample(s, epoch_start, self.mss, cwnd, *ssthresh) {
                *ssthresh = cwnd;
            }
        }
    }

    /// The retransmission timer fired (Linux's TCP_CA_Loss): HyStart starts over.
    pub fn on_timeout_state(&mut self, now: Time, snd_max: u64) {
        if let Some(h) = &mut self.hystart {
            h.on_timeout(now, snd_max);
        }
    }

    /// Start a congestion-avoidance epoch at `now` with cwnd_epoch = `cwnd` (§4.2). With
    /// no congestion event yet, or after a timeout (§4.8), the curve starts at its plateau:
    /// K = 0 and W_max = cwnd_epoch.
    fn start_epoch(&mut self, now: Time, cwnd: u64) -> Epoch {
        let w_max = match self.w_max {
            Some(w) if !self.after_timeout => w,
            _ => cwnd,
        };
        self.w_max = Some(w_max);
        self.after_timeout = false;
        // eq. 2 in segments; W_max < cwnd_epoch gives a negative K (already convex)
        let k = ((w_max as f64 - cwnd as f64) / self.mss as f64 / C).cbrt();
        Epoch { start: now, k, w_max, w_est: cwnd * EST_SCALE, last_ack: now }
    }

    /// W_cubic(t) in bytes for `t_ps` picoseconds into `epoch` (§4.2 eq. 1).
    fn w_cubic(&self, epoch: &Epoch, t_ps: u64) -> f64 {
        let d = t_ps as f64 / PS_PER_S - epoch.k;
        C * d * d * d * self.mss as f64 + epoch.w_max as f64
    }

    /// An ACK of `acked` new bytes outside recovery.
    #[inline]
    pub fn on_ack(&mut self, clock: AckClock, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        if let Some(l) = &mut self.linux {
            return l.on_ack(clock.now, clock.cwnd_limited, clock.prior_flight, cwnd, ssthresh, acked);
        }
        if !clock.cwnd_limited {
            // §5.8: no growth; §4.2: the time since the last ACK is not growth time
            if let Some(e) = &mut self.epoch {
                e.start = Time(e.start.0 + clock.now.0.saturating_sub(e.last_ack.0));
                e.last_ack = clock.now;
            }
            return;
        }
        if self.slow_start && *cwnd < ssthresh {
            *cwnd += acked.min(self.mss); // RFC 5681 eq. (2), as §4.10 allows
            return;
        }
        let mut epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.linux_epoch_start = Some(clock.now);
                self.start_epoch(clock.now, *cwnd)
            }
        };
        epoch.last_ack = clock.now;
        // §4.3: W_est grows by alpha_cubic x segments acknowledged / cwnd, by 1 once it
        // has reached cwnd_prior
        let (num, den) = if epoch.w_est >= self.cwnd_prior * EST_SCALE { (1, 1) } else { (ALPHA_NUM, ALPHA_DEN) };
        let step = num as u128 * acked as u128 * self.mss as u128 * EST_SCALE as u128 / (den as u128 * *cwnd as u128);
        epoch.w_est += step as u64;
        let t = clock.now.0 - epoch.start.0;
        let w_est = epoch.w_est / EST_SCALE;
        if self.w_cubic(&epoch, t) < w_est as f64 {
            // the Reno-friendly region: cwnd = W_est (never shrunk by an ACK)
            *cwnd = (*cwnd).max(w_est);
        } else {
            // §4.2: target = W_cubic(t + RTT) within [cwnd, 1.5 cwnd]; cwnd moves
            // (target - cwnd) / cwnd segments per segment acknowledged
            let rtt = clock.srtt.map_or(0, |r| r.0);
            let target = (self.w_cubic(&epoch, t + rtt).max(0.0) as u64).clamp(*cwnd, *cwnd + *cwnd / 2);
            *cwnd += ((target - *cwnd) as u128 * acked as u128 / *cwnd as u128) as u64;
        }
        self.epoch = Some(epoch);
    }

    /// The sender was idle (nothing outstanding, application-limited) for `idle`: that time
    /// is not growth time, so the epoch starts that much later (§5.8; Linux's
    /// CA_EVENT_TX_START, which with `cubic_linux` counts the jiffies from `now` back to the
    /// last send).
    pub fn on_idle(&mut self, idle: Time, now: Time, last_send: Time) {
        if let Some(l) = &mut self.linux {
            return l.on_tx_start(now, last_send);
        }
        if let Some(e) = &mut self.epoch {
            e.start = Time(e.start.0 + idle.0);
            e.last_ack = Time(e.last_ack.0 + idle.0); // taken out once, not again at the next ACK
        }
        if let Some(t) = &mut self.linux_epoch_start {
            *t = Time(t.0 + idle.0);
        }
    }

    /// A loss with congestion window `cwnd` and FlightSize `in_flight`: remember W_max
    /// with fast convergence (§4.7), end the epoch, return ssthresh = max(FlightSize x
    /// beta_cubic, 2 SMSS) (§4.6).
    pub fn on_loss(&mut self, cwnd: u64, in_flight: u64) -> u64 {
        if let Some(l) = &mut self.linux {
            return l.on_loss(cwnd);
        }
        self.w_max = Some(match self.w_max {
            // (1 + beta_cubic) / 2 = 17/20
            Some(w) if cwnd < w => cwnd * (BETA_DEN + BETA_NUM) / (2 * BETA_DEN),
            _ => cwnd,
        });
        self.cwnd_prior = cwnd;
        self.epoch = None;
        self.linux_epoch_start = None;
        (in_flight * BETA_NUM / BETA_DEN).max(2 * self.mss)
    }

    /// §4.8: a timeout sets cwnd to Reno's loss window (RFC 5681 §3.1: one SMSS) and
    /// ssthresh as §4.6 does, unless the segment had already been retransmitted by a
    /// timeout (`repeated`: ssthresh held, as RFC 5681 says); the next epoch starts with
    /// K = 0 and W_max = cwnd_epoch.
    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, repeated: bool) {
        if let Some(l) = &mut self.linux {
            return l.on_timeout(cwnd, ssthresh, repeated);
        }
        if !repeated {
            *ssthresh = self.on_loss(*cwnd, in_flight);
        }
        self.epoch = None;
        self.linux_epoch_start = None;
        self.after_timeout = true;
        *cwnd = self.mss;
        if !self.slow_start {
            *ssthresh = *cwnd; // no slow start: growth stays in congestion avoidance
        }
    }

    /// Fast recovery begins (`tcp_init_cwnd_reduction`): Linux's growth credit is cleared.
    pub fn on_recovery_start(&mut self) {
        if let Some(l) = &mut self.linux {
            l.on_recovery_start();
        }
    }

    #[cfg(test)]
    fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::congestion::Cc;
    use crate::tcp::sender::tests::{config, MSS};

    fn cubic() -> Cubic {
        Cubic::new(&SenderConfig { cc: Cc::Cubic, ..config() })
    }

    fn clock(now_ps: u64, rtt_ps: u64) -> AckClock {
        AckClock { now: Time(now_ps), srtt: Some(Time(rtt_ps)), cwnd_limited: true, prior_flight: 0 }
    }

    /// Closed form of eq. (1) in segments.
    fn w_cubic_segments(t_s: f64, k: f64, w_max: f64) -> f64 {
        C * (t_s - k).powi(3) + w_max
    }

    /// Feed ACKs of one segment, a window's worth per `rtt_ps`, from `start_ps` until
    /// `until_ps`; returns cwnd.
    fn run(c: &mut Cubic, mut cwnd: u64, start_ps: u64, until_ps: u64, rtt_ps: u64) -> u64 {
        let mut now = start_ps;
        while now < until_ps {
            let acks = cwnd / MSS;
            for i in 0..acks {
                c.on_ack(clock(now + rtt_ps * i / acks, rtt_ps), &mut cwnd, 0, MSS);
            }
            now += rtt_ps;
        }
        cwnd
    }

    #[test]
    fn k_is_the_cube_root_of_the_reduction_over_c_rfc9438_eq2() {
        let mut c = cubic();
        let ssthresh = c.on_loss(100 * MSS, 100 * MSS);
        let mut cwnd = ssthresh;
        c.on_ack(clock(0, 1), &mut cwnd, ssthresh, MSS);
        // K = cbrt((100 - 70) / 0.4) = cbrt(75) s
        let k = c.k().unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-12, "K = {k}");
        assert!((k - 4.217_163).abs() < 1e-6);
    }

    #[test]
    fn the_window_after_a_loss_is_beta_times_the_flight_rfc9438_4_6() {
        let mut c = cubic();
        assert_eq!(c.on_loss(100 * MSS, 100 * MSS), 70 * MSS);
        assert_eq!(c.on_loss(10 * MSS, 10 * MSS), 7 * MSS);
        assert_eq!(c.on_loss(2 * MSS, 2 * MSS), 2 * MSS, "at least 2 SMSS");
    }

    #[test]
    fn fast_convergence_lowers_w_max_rfc9438_4_7() {
        let mut c = cubic();
        c.on_loss(100 * MSS, 100 * MSS);
        assert_eq!(c.w_max, Some(100 * MSS));
        // a loss before regaining W_max: W_max = cwnd (1 + beta) / 2
        c.on_loss(80 * MSS, 80 * MSS);
        assert_eq!(c.w_max, Some(68 * MSS));
        // a loss above it: W_max = cwnd
        c.on_loss(90 * MSS, 90 * MSS);
        assert_eq!(c.w_max, Some(90 * MSS));
    }

    #[test]
    fn growth_follows_the_cubic_curve_over_simulated_time_rfc9438_4_2() {
        // W_max = 100 segments, cwnd_epoch = 70, RTT 200 ms: the Reno estimate (about
        // +0.53 segment per RTT, 86 segments at 6 s) stays below the curve, so cwnd follows W_cubic
        let rtt = 200_000_000_000; // 200 ms in ps
        let mut c = cubic();
        let mut cwnd = c.on_loss(100 * MSS, 100 * MSS);
        let k = 75f64.cbrt();
        let mut now = 0;
        for t_s in [1u64, 2, 4, 6] {
            let until = t_s * 1_000_000_000_000;
            cwnd = run(&mut c, cwnd, now, until, rtt);
            now = until;
            let seg = cwnd as f64 / MSS as f64;
            let at_t = w_cubic_segments(t_s as f64, k, 100.0);
            let at_t_rtt = w_cubic_segments(t_s as f64 + 0.2, k, 100.0);
            // cwnd chases W_cubic(t + RTT) from below and lags it by at most about an
            // RTT of the curve: between W_cubic(t - RTT) and W_cubic(t + RTT), 1 segment of slack
            let before = w_cubic_segments(t_s as f64 - 0.2, k, 100.0);
            assert!(seg >= before - 1.0 && seg <= at_t_rtt + 1e-9, "t = {t_s} s: cwnd {seg} vs W_cubic {at_t}");
        }
        // concave up to W_max, convex beyond: at 6 s cwnd is above W_max
        assert!(cwnd > 100 * MSS);
    }

    #[test]
    fn the_reno_friendly_region_wins_at_small_bdp_rfc9438_4_3() {
        // W_max = 10 segments, RTT 100 us: K = cbrt(3 / 0.4) = 1.96 s, so over 5 RTTs the
        // curve stays at about 7 segments while W_est grows by alpha_cubic per RTT
        let rtt = 100_000_000; // 100 us in ps
        let mut c = cubic();
        let cwnd = c.on_loss(10 * MSS, 10 * MSS);
        let cwnd = run(&mut c, cwnd, 0, 5 * rtt, rtt);
        let curve = w_cubic_segments(5e-4, 7.5f64.cbrt(), 10.0);
        assert!(curve < 7.01, "the curve is flat: {curve}");
        // cwnd is W_est: the same ACKs (a round of floor(cwnd) ACKs per RTT) each adding
        // alpha_cubic / cwnd segments, in f64; 0.01 segment for the byte-granular window
        let mut w_est = 7.0f64;
        for _ in 0..5 {
            for _ in 0..w_est as u64 {
                w_est += 9.0 / 17.0 / w_est;
            }
        }
        let seg = cwnd as f64 / MSS as f64;
        assert!((seg - w_est).abs() < 0.01, "cwnd {seg} segments, W_est {w_est}");
        assert!(seg > curve + 2.0, "well above the curve");
    }

    #[test]
    fn the_target_is_clamped_to_one_and_a_half_cwnd_rfc9438_4_2() {
        let mut c = cubic();
        let mut cwnd = 10 * MSS;
        c.on_ack(clock(0, 1), &mut cwnd, 0, MSS); // epoch at t = 0, K = 0, W_max = 10
        // 100 s later W_cubic is 400,000 segments: one ACK moves (15 - 10) / 10 segment
        let before = cwnd;
        c.on_ack(clock(100_000_000_000_000, 1), &mut cwnd, 0, MSS);
        assert_eq!(cwnd - before, (before + before / 2 - before) * MSS / before);
    }

    #[test]
    fn idle_time_is_not_growth_time_rfc9438_5_8() {
        let rtt = 100_000_000; // 100 us
        let grow_after = |idle_ps: u64| {
            let mut c = cubic();
            let mut cwnd = c.on_loss(20 * MSS, 20 * MSS);
            c.on_ack(clock(0, rtt), &mut cwnd, 0, MSS); // epoch starts at 0
            c.on_idle(Time(idle_ps), Time(0), Time(0));
            let before = cwnd;
            c.on_ack(clock(idle_ps + rtt, rtt), &mut cwnd, 0, MSS);
            cwnd - before
        };
        // one RTT of growth, whether or not a second of idling came before it
        assert_eq!(grow_after(1_000_000_000_000), grow_after(0));
        // without the shift a second on the curve would be a 1.5 cwnd target
        let mut c = cubic();
        let mut cwnd = c.on_loss(20 * MSS, 20 * MSS);
        c.on_ack(clock(0, rtt), &mut cwnd, 0, MSS);
        let before = cwnd;
        c.on_ack(clock(1_000_000_000_000 + rtt, rtt), &mut cwnd, 0, MSS);
        assert!(cwnd - before > grow_after(0), "the shift is what keeps the growth small");
    }

    fn limited(now_ps: u64, rtt_ps: u64) -> AckClock {
        AckClock { cwnd_limited: false, ..clock(now_ps, rtt_ps) }
    }

    #[test]
    fn an_application_limited_ack_grows_nothing_rfc9438_5_8() {
        let rtt = 100_000_000; // 100 us
        let mut c = cubic();
        let ssthresh = c.on_loss(20 * MSS, 20 * MSS);
        let mut cwnd = ssthresh;
        c.on_ack(clock(0, rtt), &mut cwnd, ssthresh, MSS); // the epoch begins
        let (before, w_est) = (cwnd, c.epoch.unwrap().w_est);
        for i in 1..=100 {
            c.on_ack(limited(i * rtt, rtt), &mut cwnd, ssthresh, MSS);
        }
        assert_eq!((cwnd, c.epoch.unwrap().w_est), (before, w_est), "neither cwnd nor W_est (§4.3)");
        // slow start too: "CUBIC does not increase its congestion window"
        let mut ss = 2 * MSS;
        c.on_ack(limited(0, rtt), &mut ss, 10 * MSS, MSS);
        assert_eq!(ss, 2 * MSS);
        c.on_ack(clock(0, rtt), &mut ss, 10 * MSS, MSS);
        assert_eq!(ss, 3 * MSS, "a window-limited ACK grows it");
    }

    #[test]
    fn application_limited_time_is_not_growth_time_rfc9438_4_2() {
        // an epoch, then 1 s of ACKs that found the window not full, then a full-window ACK
        // one RTT later: it grows cwnd as if the second had not passed
        let rtt = 100_000_000; // 100 us
        let grow_after = |limited_ps: u64| {
            let mut c = cubic();
            let mut cwnd = c.on_loss(20 * MSS, 20 * MSS);
            c.on_ack(clock(0, rtt), &mut cwnd, 0, MSS);
            let mut now = 0;
            while now < limited_ps {
                now += rtt;
                c.on_ack(limited(now, rtt), &mut cwnd, 0, MSS);
            }
            let before = cwnd;
            c.on_ack(clock(now + rtt, rtt), &mut cwnd, 0, MSS);
            (cwnd - before, c.epoch.unwrap().start)
        };
        let (plain, start) = grow_after(0);
        let (after_limited, shifted) = grow_after(1_000_000_000_000);
        assert_eq!(after_limited, plain);
        assert_eq!(shifted.0 - start.0, 1_000_000_000_000, "t lost exactly the limited second");
        // and an idle period taken out by on_idle is not taken out again by the next ACK
        let mut c = cubic();
        let mut cwnd = c.on_loss(20 * MSS, 20 * MSS);
        c.on_ack(clock(0, rtt), &mut cwnd, 0, MSS);
        c.on_idle(Time(1_000_000_000_000), Time(0), Time(0));
        c.on_ack(limited(1_000_000_000_000 + rtt, rtt), &mut cwnd, 0, MSS);
        assert_eq!(c.epoch.unwrap().start.0, 1_000_000_000_000 + rtt, "idle once, then the RTT since");
    }

    /// Slow start from 16 segments, one ACK of one segment every 100 us with RTT samples of
    /// 400 us: (cwnd, ssthresh) after 20 ACKs.
    fn slow_start_with(hystart: bool) -> (u64, u64) {
        let mut c = Cubic::new(&SenderConfig { cc: Cc::Cubic, hystart, ..config() });
        let (mut cwnd, mut ssthresh) = (16 * MSS, 1 << 30);
        for i in 0..20u64 {
            let now = Time(i * 100_000_000);
            let una = 1 + (i + 1) * MSS;
            let s = hystart::Sample { now, rtt: Time(400_000_000), snd_una: una, snd_max: una + cwnd, flight: cwnd };
            c.on_sample(s, cwnd, &mut ssthresh);
            c.on_ack(clock(now.0, 400_000_000), &mut cwnd, ssthresh, MSS);
        }
        (cwnd, ssthresh)
    }

    #[test]
    fn hystart_ends_slow_start_where_the_ack_train_passes_its_threshold() {
        // the round starts at the first ACK (0 us); the threshold is (400 us + 1 ms) / 2 (the
        // cushion's cap: hystart::tests): the ACK at 800 us ends slow start with ssthresh = cwnd
        // = 16 + 8 segments, and the 12 ACKs from it on grow cwnd in congestion avoidance, by less than
        // a segment in all
        let (cwnd, ssthresh) = slow_start_with(true);
        assert_eq!(ssthresh, 24 * MSS);
        assert!(cwnd >= 24 * MSS && cwnd < 25 * MSS, "{cwnd}");
        // without HyStart, slow start runs on: 16 + 20 segments
        assert_eq!(slow_start_with(false), (36 * MSS, 1 << 30));
    }

    #[test]
    fn a_timeout_sets_one_segment_and_restarts_the_curve_at_its_plateau_rfc9438_4_8() {
        let mut c = cubic();
        let (mut cwnd, mut ssthresh) = (40 * MSS, 1 << 30);
        c.on_timeout(&mut cwnd, &mut ssthresh, 40 * MSS, false);
        assert_eq!((cwnd, ssthresh), (MSS, 28 * MSS));
        c.on_timeout(&mut cwnd, &mut ssthresh, MSS, true);
        assert_eq!(ssthresh, 28 * MSS, "held on a repeated timeout (RFC 5681 §3.1)");
        // slow start to ssthresh, then the first epoch: K = 0, W_max = cwnd_epoch
        let mut now = 0;
        while cwnd < ssthresh {
            c.on_ack(clock(now, 1), &mut cwnd, ssthresh, MSS);
            now += 1;
        }
        c.on_ack(clock(now, 1), &mut cwnd, ssthresh, MSS);
        assert_eq!(c.k(), Some(0.0));
        assert_eq!(c.w_max, Some(28 * MSS));
    }
}
