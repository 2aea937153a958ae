//! Flow completion times (FCT) and slowdowns of a run's one-shot flows and background flows,
//! as the fabric studies report them (pFabric SIGCOMM 2013 §5, HPCC SIGCOMM 2019 §5: the
//! FCT over the FCT the flow would have on an idle fabric, "slowdown" or "normalized FCT").
//!
//! The idle FCT here is the first packet's one-way latency (serialization and propagation,
//! store and forward, on its route) and then the rest of the flow's wire bytes at the host
//! link's rate: what an unlimited window on an empty path gives. Percentiles are nearest-rank
//! over the flows that completed.

use serde::Serialize;

use crate::net::{Fabric, HostId};
use crate::scenario::Scenario;
use crate::time::{Time, PS_PER_S};

/// One finished or unfinished flow, as the summaries read it.
#[derive(Clone, Copy, Debug)]
pub struct FlowTime {
    pub src: HostId,
    pub dst: HostId,
    pub bytes: u64,
    pub start: Time,
    pub end: Option<Time>,
    /// Its incast (0 for others).
    pub group: u32,
}

/// Completion times of a set of flows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FctSummary {
    pub flows: u64,
    pub completed: u64,
    pub fct_p50_s: Option<f64>,
    pub fct_p99_s: Option<f64>,
    pub fct_max_s: Option<f64>,
    pub slowdown_p50: Option<f64>,
    pub slowdown_p99: Option<f64>,
}

/// The FCT of `bytes` from `src` to `dst` on the idle fabric.
pub fn idle_fct(sc: &Scenario, net: &Fabric, src: HostId, dst: HostId, bytes: u64) -> Time {
    let s = &sc.spec;
    let (mss, header) = (s.mss_bytes as u64, s.header_bytes as u64);
    let packets = bytes.div_ceil(mss).max(1);
    let wire = bytes + packets * header;
    let first = bytes.min(mss) + header;
    net.topology().one_way(src, dst, first) + crate::time::serialization_time(wire - first, s.rate_bps)
}

/// Nearest-rank percentile of `v` (sorted).
fn nearest_rank(v: &[f64], p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    Some(v[rank.clamp(1, v.len()) - 1])
}

/// The summary of `flows`.
pub fn summarize(sc: &Scenario, net: &Fabric, flows: &[FlowTime]) -> FctSummary {
    let secs = |t: Time| t.0 as f64 / PS_PER_S as f64;
    let done: Vec<&FlowTime> = flows.iter().filter(|f| f.end.is_some()).collect();
    let mut fct: Vec<f64> = done.iter().map(|f| secs(f.end.unwrap() - f.start)).collect();
    let mut slowdown: Vec<f64> = done
        .iter()
        .map(|f| (f.end.unwrap() - f.start).0 as f64 / idle_fct(sc, net, f.src, f.dst, f.bytes).0.max(1) as f64)
        .collect();
    fct.sort_by(f64::total_cmp);
    slowdown.sort_by(f64::total_cmp);
    FctSummary {
        flows: flows.len() as u64,
        completed: done.len() as u64,
        fct_p50_s: nearest_rank(&fct, 50.0),
        fct_p99_s: nearest_rank(&fct, 99.0),
        fct_max_s: fct.last().copied(),
        slowdown_p50: nearest_rank(&slowdown, 50.0),
        slowdown_p99: nearest_rank(&slowdown, 99.0),
    }
}

/// The slowest incast's completion: from its first flow's start to its last flow's end
/// (htsim's and NDP's "last flow completion"); `None` if some flow is unfinished.
pub fn incast_completion(flows: &[FlowTime]) -> Option<f64> {
    let groups = flows.iter().map(|f| f.group).max()? + 1;
    (0..groups)
        .map(|g| {
            let of: Vec<&FlowTime> = flows.iter().filter(|f| f.group == g).collect();
            let start = of.iter().map(|f| f.start).min()?;
            let end = of.iter().map(|f| f.end).collect::<Option<Vec<Time>>>()?.into_iter().max()?;
            Some((end - start).as_secs_f64())
        })
        .collect::<Option<Vec<f64>>>()
        .map(|v| v.into_iter().fold(0.0, f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioSpec;
    use crate::time::PS_PER_US;

    #[test]
    fn the_idle_fct_is_the_first_packets_one_way_trip_then_the_rest_at_line_rate() {
        // star, 1 Gbps, 25 us links: 3000 B = 3 packets (1460, 1460, 80) + 120 B of headers;
        // the first (1500 B) crosses two links: 2 x (25 + 12) us; the other 1620 B follow at
        // 8 ns a byte: 12.96 us
        let sc = ScenarioSpec { servers: 1, ..ScenarioSpec::default() }.validate().unwrap();
        let w = crate::world::World::new(&sc);
        assert_eq!(idle_fct(&sc, w.net(), 0, 1, 3000), Time(74 * PS_PER_US + 12_960_000));
    }

    #[test]
    fn an_incast_completes_when_its_last_flow_does_and_not_before_all_do() {
        let f = |start: u64, end: Option<u64>, group| FlowTime {
            src: 0,
            dst: 1,
            bytes: 1,
            start: Time(start),
            end: end.map(Time),
            group,
        };
        let two = [f(0, Some(5 * PS_PER_S), 0), f(PS_PER_S, Some(3 * PS_PER_S), 0), f(0, Some(2 * PS_PER_S), 1)];
        assert_eq!(incast_completion(&two), Some(5.0), "the slower incast");
        assert_eq!(incast_completion(&[f(0, None, 0)]), None);
    }
}
