//! Latencies kept in bounded memory: a log-linear histogram (HdrHistogram, 3 significant
//! digits) instead of one entry per sample, so a long run's memory does not grow with the
//! number of samples. Percentiles are nearest-rank (as `stats::percentile`), reported as
//! the middle of the sample's bucket: within 1/2048 (0.05 %) of the exact value, and exact
//! below 2048 ps. The maximum is kept exactly.

use hdrhistogram::Histogram;

/// Significant decimal digits the histogram keeps (sub-buckets of 2048 per power of two).
const SIGNIFICANT_DIGITS: u8 = 3;

#[derive(Clone, Debug)]
pub struct Latencies {
    /// Picoseconds; it widens its range as larger values come (memory ~ log of the largest).
    hist: Histogram<u64>,
    max: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies { hist: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits"), max: 0 }
    }
}

impl Latencies {
    pub fn record(&mut self, ps: u64) {
        self.hist.record(ps).expect("an auto-resizing histogram takes any u64");
        self.max = self.max.max(ps);
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The nearest-rank `p`-th percentile (0 < p <= 100) within 0.05 %; None without samples.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        (!self.is_empty()).then(|| self.hist.median_equivalent(self.hist.value_at_quantile(p / 100.0)))
    }

    /// The largest sample, exact; None without samples.
    pub fn max(&self) -> Option<u64> {
        (!self.is_empty()).then_some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::percentile;
    use rand::{Rng, SeedableRng};

    #[test]
    fn percentiles_are_within_the_stated_error_of_the_exact_ones() {
        // 100,000 log-uniform latencies from 10 us to 1 s, against the exact nearest rank
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let values: Vec<u64> = (0..100_000).map(|_| 10f64.powf(rng.random_range(7.0..12.0)) as u64).collect();
        let mut l = Latencies::default();
        values.iter().for_each(|&v| l.record(v));
        for p in [1.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let (got, exact) = (l.percentile(p).unwrap() as f64, percentile(&values, p) as f64);
            assert!((got / exact - 1.0).abs() <= 1.0 / 2048.0, "p{p}: {got} vs {exact}");
        }
        assert_eq!(l.max(), values.iter().copied().max());
        assert_eq!(l.len(), 100_000);
    }

    #[test]
    fn small_values_are_exact_and_no_samples_give_none() {
        let mut l = Latencies::default();
        assert_eq!((l.percentile(50.0), l.max()), (None, None));
        for v in [10, 19, 18] {
            l.record(v);
        }
        assert_eq!((l.percentile(1.0), l.percentile(50.0), l.max()), (Some(10), Some(18), Some(19)));
    }
}
