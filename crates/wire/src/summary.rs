//! Percentiles of block completion times.

/// The `q`-quantile (0..=1) of `sorted` by linear interpolation between closest ranks
/// (numpy's and pandas' default), or 0 for an empty slice.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_an_even_count_interpolates() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
    }

    #[test]
    fn extremes_are_min_and_max() {
        let v = [0.1, 0.2, 5.0];
        assert_eq!(quantile(&v, 0.0), 0.1);
        assert_eq!(quantile(&v, 1.0), 5.0);
    }

    #[test]
    fn p99_of_a_hundred_values_sits_near_the_top() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((quantile(&v, 0.99) - 99.01).abs() < 1e-9);
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
