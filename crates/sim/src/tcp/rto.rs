//! Retransmission timeout estimation, RFC 6298.
//!
//! - §2.2 first sample R: SRTT = R, RTTVAR = R/2;
//! - §2.3 later samples: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R;
//! - RTO = SRTT + max(G, 4 RTTVAR), then at least RTOmin (§2.4, a parameter here as in
//!   FAST'08 §5.2) and at most RTOmax (§2.5);
//! - §5.5 each expiry doubles the RTO ("back off the timer"), up to RTOmax; a new sample
//!   from a segment that was not retransmitted (Karn, §3) recomputes it.
//!
//! RTT samples are measured with a clock of granularity G: a sample is the number of
//! whole ticks between send and ACK, times G. With G = 1 us this is the microsecond RTT
//! tracking of SIGCOMM'09 (`001_e0dada207805edc8.txt`, "Tracks RTT in us"); with G = 1 or
//! 4 ms it is a jiffies clock.
//!
//! With `rto_min_on_rttvar` (`RtoEstimator::linux`) the estimator is Linux's instead
//! (net/ipv4/tcp_input.c, `tcp_rtt_estimator`, `tcp_set_rto` / `__tcp_set_rto`):
//! - samples are microseconds whatever the timer tick (Linux's RTT samples come from
//!   `tcp_clock_us` transmit stamps);
//! - srtt as RFC 6298's (gain 1/8); the mean deviation `mdev` with gain 1/4, or 1/32 when
//!   the sample is below srtt (Linux's Eifel-like damping); `mdev_max`, the largest `mdev`
//!   in the current round trip, starts each round trip (an ACK past `rtt_seq`, the SND.NXT of
//!   the last round's start) at RTOmin; `rttvar` follows `mdev_max` up at once and down by
//!   1/4 of the gap once per round trip; all three are 4 x the deviation;
//! - RTO = srtt + rttvar, so RTOmin bounds the variance term, not the sum (200 ms + srtt
//!   where RFC 6298 gives max(200 ms, srtt + 4 rttvar)), in whole timer ticks rounded up
//!   (`usecs_to_jiffies`), at most RTOmax (`tcp_bound_rto`); the first sample R gives
//!   srtt = R, rttvar = max(2 R, RTOmin).

use crate::time::{Time, PS_PER_US};

/// RFC 6298 estimator state for one connection.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    pub srtt: Option<Time>,
    pub rttvar: Time,
    /// Current RTO including backoff.
    pub rto: Time,
    pub rto_min: Time,
    pub rto_max: Time,
    pub granularity: Time,
    /// Consecutive expiries since the last valid sample.
    pub backoffs: u32,
    /// Linux's estimator in place of RFC 6298's (`rto_min_on_rttvar`); None: RFC 6298.
    pub linux: Option<LinuxRtt>,
}

/// `tcp_rtt_estimator`'s state, in microseconds as Linux keeps it: `srtt8` is 8 x srtt,
/// the others 4 x the deviation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxRtt {
    pub srtt8: u64,
    pub mdev: u64,
    pub mdev_max: u64,
    pub rttvar: u64,
    /// SND.NXT when the current round trip began: an ACK past it starts the next.
    pub rtt_seq: u64,
}

impl RtoEstimator {
    /// Before any sample the RTO is 1 s (RFC 6298 §2.1), bounded by RTOmin/RTOmax.
    pub fn new(rto_min: Time, rto_max: Time, granularity: Time) -> Self {
        let mut e =
            RtoEstimator { srtt: None, rttvar: Time::ZERO, rto: Time::ZERO, rto_min, rto_max, granularity, backoffs: 0, linux: None };
        e.rto = e.base_rto();
        e
    }

    /// Linux's estimator (`tcp_rtt_estimator`, `__tcp_set_rto`) from here on, before any sample.
    pub fn use_linux(&mut self) {
        self.linux = Some(LinuxRtt::default());
        self.rto = self.base_rto();
    }

    /// The measured RTT of a segment sent at `sent` and acknowledged at `now`, as seen by
    /// a clock ticking every `granularity`.
    pub fn measure(&self, sent: Time, now: Time) -> Time {
        if self.linux.is_some() {
            // tcp_stamp_us_delta: whole microseconds, whatever the tick
            return Time(now.0.saturating_sub(sent.0) / PS_PER_US * PS_PER_US);
        }
        let g = self.granularity.0;
        Time((now.0 / g - sent.0 / g) * g)
    }

    /// Take an RTT sample (RFC 6298 §2.2-2.3) and recompute the RTO; one without sequence
    /// numbers (a handshake's) for Linux's estimator.
    pub fn sample(&mut self, r: Time) {
        self.sample_at(r, 0, 0);
    }

    /// Take an RTT sample from an ACK that moved SND.UNA to `snd_una` while SND.NXT was
    /// `snd_nxt` (Linux's estimator counts round trips by them), and recompute the RTO.
    pub fn sample_at(&mut self, r: Time, snd_una: u64, snd_nxt: u64) {
        if let Some(lx) = self.linux.as_mut() {
            lx.sample((r.0 / PS_PER_US) as i64, snd_una, snd_nxt, self.rto_min.0 / PS_PER_US);
            self.srtt = Some(Time(lx.srtt8 * PS_PER_US / 8));
            self.rttvar = Time(lx.rttvar * PS_PER_US / 4);
            self.backoffs = 0;
            self.rto = self.base_rto();
            return;
        }
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(srtt) => {
                let diff = srtt.0.abs_diff(r.0);
                self.rttvar = Time((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Some(Time((7 * srtt.0 + r.0) / 8));
            }
        }
        self.backoffs = 0;
        self.rto = self.base_rto();
    }

    /// RTO from the estimates, without backoff (1 s before the first sample, §2.1).
    pub fn base_rto(&self) -> Time {
        if let Some(lx) = self.linux.filter(|lx| lx.srtt8 > 0) {
            // __tcp_set_rto: srtt + rttvar, usecs_to_jiffies (rounded up to whole ticks)
            let us = (lx.srtt8 >> 3) + lx.rttvar;
            let rto = (us * PS_PER_US).next_multiple_of(self.granularity.0);
            return Time(rto).min(self.rto_max);
        }
        let rto = match self.srtt {
            Some(srtt) => Time(srtt.0 + self.granularity.0.max(4 * self.rttvar.0)),
            None => Time(crate::time::PS_PER_S),
        };
        rto.max(self.rto_min).min(self.rto_max)
    }

    /// End the backoff without a sample: the RTO from the estimates again (ns-3's rule).
    pub fn clear_backoff(&mut self) {
        self.backoffs = 0;
        self.rto = self.base_rto();
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5), capped at RTOmax.
    pub fn back_off(&mut self) {
        self.backoffs += 1;
        self.rto = Time(self.rto.0.saturating_mul(2)).min(self.rto_max);
    }
}

impl LinuxRtt {
    /// `tcp_rtt_estimator` with a sample of `m` microseconds, RTOmin `rto_min` microseconds.
    fn sample(&mut self, mut m: i64, snd_una: u64, snd_nxt: u64, rto_min: u64) {
        if self.srtt8 != 0 {
            m -= (self.srtt8 >> 3) as i64; // the error of the estimate
            self.srtt8 = (self.srtt8 as i64 + m) as u64; // srtt = 7/8 srtt + 1/8 m
            if m < 0 {
                m = -m - (self.mdev >> 2) as i64;
                if m > 0 {
                    m >>= 3; // a sample below srtt moves mdev by 1/32 only
                }
            } else {
                m -= (self.mdev >> 2) as i64;
            }
            self.mdev = (self.mdev as i64 + m) as u64; // mdev = 3/4 mdev + 1/4 |error|
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            if snd_una > self.rtt_seq {
                // a round trip ended: rttvar decays towards its largest mdev, which restarts
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = rto_min;
            }
        } else {
            let m = m.max(0) as u64;
            self.srtt8 = m << 3;
            self.mdev = m << 1; // RTO = 3 RTT until RTOmin bounds it
            self.rttvar = self.mdev.max(rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        }
        self.srtt8 = self.srtt8.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(min_us: u64) -> RtoEstimator {
        RtoEstimator::new(Time::from_us(min_us), Time::from_ms(60_000), Time::from_us(1))
    }

    #[test]
    fn initial_rto_is_one_second_rfc6298_2_1() {
        assert_eq!(est(200).rto, Time::from_ms(1000));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est(1);
        e.sample(Time::from_us(100));
        assert_eq!(e.srtt, Some(Time::from_us(100)));
        assert_eq!(e.rttvar, Time::from_us(50));
        assert_eq!(e.rto, Time::from_us(300)); // 100 + 4 * 50
    }

    #[test]
    fn rto_min_floors_the_timeout() {
        let mut e = est(200_000); // RTOmin 200 ms
        e.sample(Time::from_us(100));
        assert_eq!(e.rto, Time::from_ms(200));
    }

    #[test]
    fn steady_samples_shrink_rttvar_towards_granularity() {
        let mut e = est(1);
        for _ in 0..200 {
            e.sample(Time::from_us(100));
        }
        // RTTVAR decays to (almost) zero, so RTO = SRTT + G
        assert_eq!(e.srtt, Some(Time::from_us(100)));
        assert!(e.rto <= Time::from_us(102), "{:?}", e.rto);
    }

    #[test]
    fn expiry_doubles_until_rto_max() {
        let mut e = RtoEstimator::new(Time::from_ms(200), Time::from_ms(1000), Time::from_us(1));
        e.sample(Time::from_us(100));
        e.back_off();
        assert_eq!(e.rto, Time::from_ms(400));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto, Time::from_ms(1000));
        assert_eq!(e.backoffs, 3);
    }

    fn linux(min_ms: u64, tick_us: u64) -> RtoEstimator {
        let mut e = RtoEstimator::new(Time::from_ms(min_ms), Time::from_ms(120_000), Time::from_us(tick_us));
        e.use_linux();
        e
    }

    #[test]
    fn linux_rto_is_srtt_plus_rtomin_in_whole_jiffies() {
        // tcp_rtt_estimator's first sample: srtt 700 us, rttvar max(2 x 700 us, 200 ms);
        // __tcp_set_rto: 200.7 ms, usecs_to_jiffies at HZ = 250: 51 jiffies = 204 ms
        let mut e = linux(200, 4000);
        e.sample(Time::from_us(700));
        assert_eq!(e.srtt, Some(Time::from_us(700)));
        assert_eq!(e.rto, Time::from_ms(204));
        // RFC 6298 with the same 4 ms clock: max(200 ms, 4 ms + 4 x 2 ms) = 200 ms
        let mut rfc = RtoEstimator::new(Time::from_ms(200), Time::from_ms(120_000), Time::from_ms(4));
        rfc.sample(rfc.measure(Time::ZERO, Time::from_us(700)));
        assert_eq!(rfc.rto, Time::from_ms(200));
    }

    #[test]
    fn linux_rto_after_a_delayed_acks_sample() {
        // the testbed's case: srtt 736 us, then a 41.7 ms sample (a delayed ACK): srtt
        // 736 + (41700 - 736) / 8 = 5856 us, mdev 4 x 368 + 40964 - 368 = 42068 < RTOmin, so
        // RTO = 5.856 + 200 ms = 205.856 ms: 52 jiffies, 208 ms (RFC 6298: 200 ms)
        let mut e = linux(200, 4000);
        e.sample_at(Time::from_us(736), 1, 10);
        e.sample_at(Time::from_us(41_700), 20, 30);
        assert_eq!(e.srtt, Some(Time(5_856_500_000))); // 8 srtt = 46852 us
        assert_eq!(e.linux.unwrap().mdev, 1472 + 40_964 - 368);
        assert_eq!(e.rto, Time::from_ms(208));
        // one jiffy is 1 us without a tick: the sum itself
        let mut fine = linux(200, 1);
        fine.sample_at(Time::from_us(736), 1, 10);
        fine.sample_at(Time::from_us(41_700), 20, 30);
        assert_eq!(fine.rto, Time::from_us(205_856));
    }

    #[test]
    fn linux_rttvar_follows_mdev_up_at_once_and_down_once_per_round_trip() {
        // RTOmin 1 ms so the deviation shows: first sample 10 ms: rttvar = 2 x 10 ms = 20 ms
        let mut e = linux(1, 1);
        e.sample_at(Time::from_ms(10), 1, 100);
        assert_eq!(e.rto, Time::from_ms(30));
        // a 50 ms sample within the same round trip (SND.UNA 50, not past rtt_seq 100):
        // error 40 ms, mdev 20 + 40 - 5 = 55 ms (4x) > rttvar: rttvar = 55 ms, srtt 15 ms
        e.sample_at(Time::from_ms(50), 50, 100);
        assert_eq!(e.rto, Time::from_ms(15 + 55));
        // samples at srtt after the round trip: rttvar moves down by 1/4 of its gap to
        // mdev_max (which restarts at RTOmin) once per round trip, not per sample
        let state = |e: &RtoEstimator| {
            let lx = e.linux.unwrap();
            (lx.mdev, lx.mdev_max, lx.rttvar, lx.rtt_seq)
        };
        // past rtt_seq: mdev 55 - 55/4; the round's mdev_max (55 ms) is not below rttvar, no decay
        e.sample_at(Time::from_ms(15), 150, 200);
        assert_eq!(state(&e), (41_250, 1000, 55_000, 200));
        e.sample_at(Time::from_ms(15), 160, 200); // the same round trip: mdev_max = mdev
        assert_eq!(state(&e), (30_938, 30_938, 55_000, 200));
        e.sample_at(Time::from_ms(15), 250, 300); // the next: rttvar -= (55 - 30.938) / 4
        assert_eq!(state(&e), (23_204, 1000, 55_000 - 6015, 300));
        assert_eq!(e.rto, Time::from_us(15_000 + 48_985));
    }

    #[test]
    fn linux_samples_are_microseconds_whatever_the_tick() {
        let e = linux(200, 4000);
        assert_eq!(e.measure(Time::from_us(3900), Time(4_100_500_000)), Time::from_us(200));
    }

    #[test]
    fn coarse_clock_rounds_samples_to_whole_ticks() {
        let e = RtoEstimator::new(Time::from_ms(1), Time::from_ms(60_000), Time::from_ms(4));
        // sent at 3.9 ms, acked at 4.1 ms: the jiffies clock sees one tick (4 ms)
        assert_eq!(e.measure(Time::from_us(3900), Time::from_us(4100)), Time::from_ms(4));
        // sent at 4.1 ms, acked at 7.9 ms: same tick, zero
        assert_eq!(e.measure(Time::from_us(4100), Time::from_us(7900)), Time::ZERO);
    }
}
