//! Flow-size distributions of datacenter traffic, as the papers that study it publish them,
//! and sampling from them.
//!
//! - `web_search`: the web search cluster's flow sizes of the DCTCP paper (Alizadeh et al.,
//!   SIGCOMM 2010, Fig. 4), used again by pFabric (SIGCOMM 2013, Fig. 4) and HPCC (SIGCOMM
//!   2019). The points are those the HPCC artifact publishes
//!   (alibaba-edu/High-Precision-Congestion-Control, `traffic_gen/WebSearch_distribution.txt`
//!   at 9cf8b9e8): pFabric's `CDF_search` in bytes. Mean 1.71 MB; half the flows under
//!   80 KB, most bytes in flows over 1 MB.
//! - `data_mining`: the data mining cluster of VL2 (Greenberg et al., SIGCOMM 2009, Fig. 2),
//!   as pFabric uses it; the points are those the Opera artifact publishes
//!   (TritonNetworking/opera-sim, `Figure1_traffic/datamining.csv` at ed471fed). Half the
//!   flows under 1.1 KB, a tail to 1 GB; mean 5.0 MB.
//!
//! A size is drawn by inverse transform with linear interpolation between the published
//! points (as HPCC's and pFabric's generators do), rounded to whole bytes, at least 1.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// Which published flow-size distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowSizeCdf {
    #[default]
    WebSearch,
    DataMining,
}

/// (bytes, cumulative probability), increasing in both.
const WEB_SEARCH: &[(f64, f64)] = &[
    (0.0, 0.0),
    (10_000.0, 0.15),
    (20_000.0, 0.20),
    (30_000.0, 0.30),
    (50_000.0, 0.40),
    (80_000.0, 0.53),
    (200_000.0, 0.60),
    (1_000_000.0, 0.70),
    (2_000_000.0, 0.80),
    (5_000_000.0, 0.90),
    (10_000_000.0, 0.97),
    (30_000_000.0, 1.0),
];

const DATA_MINING: &[(f64, f64)] = &[
    (100.0, 0.0),
    (180.0, 0.085),
    (250.0, 0.14),
    (560.0, 0.33),
    (900.0, 0.47),
    (1_100.0, 0.55),
    (1_870.0, 0.65),
    (3_160.0, 0.70),
    (10_000.0, 0.80),
    (100_001.0, 0.874),
    (400_000.0, 0.90),
    (1_850_000.0, 0.95),
    (10_000_000.0, 0.97),
    (30_000_000.0, 0.98),
    (100_000_000.0, 0.99),
    (250_000_000.0, 0.995),
    (1_000_000_000.0, 1.0),
];

impl FlowSizeCdf {
    fn points(self) -> &'static [(f64, f64)] {
        match self {
            FlowSizeCdf::WebSearch => WEB_SEARCH,
            FlowSizeCdf::DataMining => DATA_MINING,
        }
    }

    /// The size at cumulative probability `u` (0..1), interpolating linearly.
    pub fn quantile(self, u: f64) -> u64 {
        let pts = self.points();
        let i = pts.partition_point(|&(_, p)| p < u).clamp(1, pts.len() - 1);
        let ((x0, p0), (x1, p1)) = (pts[i - 1], pts[i]);
        let x = if p1 > p0 { x0 + (x1 - x0) * (u - p0) / (p1 - p0) } else { x1 };
        (x.round() as u64).max(1)
    }

    /// A size drawn from the distribution.
    pub fn draw(self, rng: &mut impl Rng) -> u64 {
        self.quantile(rng.random::<f64>())
    }

    /// The distribution's mean, bytes (of the interpolated distribution: each segment's
    /// midpoint weighted by its probability).
    pub fn mean(self) -> f64 {
        self.points().windows(2).map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn quantiles_fall_on_the_published_points_and_between_them_linearly() {
        let w = FlowSizeCdf::WebSearch;
        assert_eq!((w.quantile(0.15), w.quantile(0.53), w.quantile(1.0)), (10_000, 80_000, 30_000_000));
        assert_eq!(w.quantile(0.175), 15_000, "halfway from 10 to 20 KB");
        assert_eq!(FlowSizeCdf::DataMining.quantile(0.55), 1_100);
    }

    #[test]
    fn means_are_the_segments_midpoints_weighted_by_their_probabilities() {
        // by hand from the points above: web search 1,711,250 B, data mining 5,036,535 B
        let (web, mining) = (FlowSizeCdf::WebSearch.mean(), FlowSizeCdf::DataMining.mean());
        assert!((web - 1_711_250.0).abs() < 1.0, "{web}");
        assert!((mining - 5_036_535.175).abs() < 1.0, "{mining}");
    }

    #[test]
    fn draws_follow_the_distribution() {
        // 200,000 draws: the fraction under 80 KB is 0.53 (sd 0.0011: 5 sd is 0.006); the
        // sample mean within 3 % of 1.71 MB (sd 3.97 MB / sqrt(2e5) = 0.52 % of it: 5.8 sd)
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let w = FlowSizeCdf::WebSearch;
        let draws: Vec<u64> = (0..200_000).map(|_| w.draw(&mut rng)).collect();
        let under = draws.iter().filter(|&&d| d <= 80_000).count() as f64 / draws.len() as f64;
        assert!((under - 0.53).abs() < 0.006, "{under}");
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean / w.mean() - 1.0).abs() < 0.03, "{mean}");
    }
}
