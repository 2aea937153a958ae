//! How well the sampling loop kept its schedule.
//!
//! The monitor never claims a resolution it did not get: it reports the median and p99 of
//! the intervals it achieved and their jitter, here the mean absolute deviation from the
//! median (robust to the rare long stall that p99 and max already show).

/// Summary of achieved sampling intervals, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalStats {
    pub count: usize,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub jitter_ns: u64,
}

/// Nearest-rank percentile `p` (0..=100) of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl IntervalStats {
    /// Statistics of `intervals_ns`; `None` when there is no interval yet.
    pub fn of(intervals_ns: &[u64]) -> Option<Self> {
        if intervals_ns.is_empty() {
            return None;
        }
        let mut sorted = intervals_ns.to_vec();
        sorted.sort_unstable();
        let median = percentile(&sorted, 50.0);
        let mad: u128 = sorted.iter().map(|&x| x.abs_diff(median) as u128).sum::<u128>() / sorted.len() as u128;
        Some(IntervalStats {
            count: sorted.len(),
            median_ns: median,
            p99_ns: percentile(&sorted, 99.0),
            max_ns: *sorted.last().unwrap(),
            jitter_ns: mad as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_intervals_no_statistics() {
        assert_eq!(IntervalStats::of(&[]), None);
    }

    #[test]
    fn steady_intervals_have_zero_jitter() {
        let s = IntervalStats::of(&[100_000; 50]).unwrap();
        assert_eq!((s.median_ns, s.p99_ns, s.max_ns, s.jitter_ns), (100_000, 100_000, 100_000, 0));
    }

    #[test]
    fn one_stall_shows_in_max_and_p99_not_median() {
        let mut v = vec![100_000u64; 99];
        v.push(5_000_000);
        let s = IntervalStats::of(&v).unwrap();
        assert_eq!(s.median_ns, 100_000);
        assert_eq!(s.p99_ns, 100_000); // nearest rank 99 of 100
        assert_eq!(s.max_ns, 5_000_000);
        assert_eq!(s.jitter_ns, 4_900_000 / 100);
    }
}
