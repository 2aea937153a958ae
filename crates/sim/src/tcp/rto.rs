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

use crate::time::Time;

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
}

impl RtoEstimator {
    /// Before any sample the RTO is 1 s (RFC 6298 §2.1), bounded by RTOmin/RTOmax.
    pub fn new(rto_min: Time, rto_max: Time, granularity: Time) -> Self {
        let mut e = RtoEstimator { srtt: None, rttvar: Time::ZERO, rto: Time::ZERO, rto_min, rto_max, granularity, backoffs: 0 };
        e.rto = e.base_rto();
        e
    }

    /// The measured RTT of a segment sent at `sent` and acknowledged at `now`, as seen by
    /// a clock ticking every `granularity`.
    pub fn measure(&self, sent: Time, now: Time) -> Time {
        let g = self.granularity.0;
        Time((now.0 / g - sent.0 / g) * g)
    }

    /// Take an RTT sample (RFC 6298 §2.2-2.3) and recompute the RTO.
    pub fn sample(&mut self, r: Time) {
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

    #[test]
    fn coarse_clock_rounds_samples_to_whole_ticks() {
        let e = RtoEstimator::new(Time::from_ms(1), Time::from_ms(60_000), Time::from_ms(4));
        // sent at 3.9 ms, acked at 4.1 ms: the jiffies clock sees one tick (4 ms)
        assert_eq!(e.measure(Time::from_us(3900), Time::from_us(4100)), Time::from_ms(4));
        // sent at 4.1 ms, acked at 7.9 ms: same tick, zero
        assert_eq!(e.measure(Time::from_us(4100), Time::from_us(7900)), Time::ZERO);
    }
}
