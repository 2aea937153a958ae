//! Per-port utilization sampling: an optional record of a run (`trace::RecordOptions`).
//!
//! The Riak blog (`003_a133663d5dbcfa75.txt`) is about what an operator sees: microbursts
//! at line rate invisible in 1 s averages, the peak/average ratio growing as the polling
//! interval shrinks, and "40-100 frames per second per machine" dropped at a switch with
//! small buffers. This records what such an operator's counters would show, for every port
//! of the fabric (a switch's port towards a host is that host's receive side, a host's NIC
//! its transmit side, a trunk each switch's uplink), per interval of a fixed length:
//!
//! - bytes and packets whose transmission **finished** in the interval (an interface
//!   counter counts a frame when its last bit has gone), so a packet is never split over
//!   two intervals: an interval at line rate carries `rate x interval` within one packet;
//! - packets and bytes **dropped** at the port in the interval (a switch's discards);
//! - RTO timeouts of the flows whose data this port delivers to its host (on a switch's
//!   port towards a host), counted when the timer fires;
//! - packets that carried a CE mark (RFC 3168) and data segments sent again (a segment
//!   that starts below the highest sequence of its flow the port has carried: on the wire,
//!   a retransmission), Millisampler's ECN marks and retransmissions;
//! - the number of distinct TCP flows whose data finished on the port, per interval and per
//!   1 ms, 10 ms and 1 s window (a distinct count cannot be added up from finer intervals,
//!   so each window keeps its own): the fan-in the monitor counts as senders, and
//!   Millisampler's active flows.
//!
//! One fine series can be added up to every coarser multiple of its interval (the Python
//! side does), so a run records at the finest interval wanted. Memory grows with
//! duration / interval x ports, so a request whose size exceeds [`MAX_BYTES`] is refused
//! before the run ([`check`]); a run that stops after a number of blocks has no known
//! duration, so it records at most the intervals the cap allows for all its ports
//! (`MAX_BYTES / (ports x 44 B)`) and, if the run goes on past them, is marked `truncated`:
//! every port's series ends at that same interval, and every interval kept is whole (what
//! happened in it is recorded whatever order the events come in; nothing after it is).

use std::collections::{HashMap, HashSet};

use crate::event::{FlowId, PortId};
use crate::net::{Node, Topology};
use crate::scenario::{Scenario, ScenarioError, StopAt};
use crate::time::{Time, PS_PER_S, PS_PER_US};

/// Bound on the memory one run's sampling may take.
pub const MAX_BYTES: u64 = 1 << 30;
/// Finest and coarsest interval: 100 us (finer than the blog's 1 ms escript) to 1 s.
pub const MIN_INTERVAL: Time = Time(100 * PS_PER_US);
pub const MAX_INTERVAL: Time = Time(PS_PER_S);

/// The windows whose distinct flows are counted besides the interval itself (Millisampler's
/// 1 ms and 10 ms, and the verdict's second), when coarser than the interval and a whole
/// multiple of it.
pub const FLOW_WINDOWS: [Time; 3] = [Time(PS_PER_S / 1000), Time(PS_PER_S / 100), Time(PS_PER_S)];

/// What one port did in one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub tx_bytes: u64,
    pub drop_bytes: u64,
    pub tx_packets: u32,
    pub drop_packets: u32,
    pub timeouts: u32,
    /// Packets that finished carrying CE (RFC 3168 §5: a switch marked them).
    pub ce_packets: u32,
    /// Data segments that finished here starting below the highest sequence their flow had
    /// carried here: retransmissions, as a wire monitor recognises them.
    pub retrans_packets: u32,
}

/// Bytes per interval per port, what [`check`] multiplies by: a cell and the interval's
/// distinct-flow count.
pub const CELL_BYTES: u64 = std::mem::size_of::<Cell>() as u64 + 4;

/// Distinct flows per window of one length, on one port. A port's transmissions end in the
/// order they start, so its windows only move forward.
#[derive(Clone, Debug)]
pub struct DistinctFlows {
    pub window: Time,
    /// Per window index: the distinct flows whose data finished in it.
    pub counts: Vec<u32>,
    current: u64,
    seen: HashSet<FlowId>,
}

impl DistinctFlows {
    fn new(window: Time) -> DistinctFlows {
        DistinctFlows { window, counts: vec![], current: 0, seen: HashSet::new() }
    }

    fn note(&mut self, t: Time, flow: FlowId) {
        let w = t.0 / self.window.0;
        if w != self.current {
            self.close();
            self.current = w;
        }
        self.seen.insert(flow);
    }

    fn close(&mut self) {
        if self.seen.is_empty() {
            return;
        }
        let w = self.current as usize;
        if self.counts.len() <= w {
            self.counts.resize(w + 1, 0);
        }
        self.counts[w] = self.seen.len() as u32;
        self.seen.clear();
    }
}

/// One sampled port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub port: PortId,
    pub from: Node,
    pub to: Node,
    pub rate_bps: u64,
}

/// A run's per-port series: `cells[p][i]` is port `ports[p]` in interval
/// `[i x interval, (i + 1) x interval)`; `flows[k][p]` its distinct flows per window of
/// `windows[k]` (the interval first, then those of [`FLOW_WINDOWS`] it divides).
#[derive(Clone, Debug)]
pub struct PortUtil {
    pub interval: Time,
    pub ports: Vec<PortInfo>,
    pub cells: Vec<Vec<Cell>>,
    /// The windows distinct flows are counted in.
    pub windows: Vec<Time>,
    pub flows: Vec<Vec<DistinctFlows>>,
    /// The cap stopped the recording: a run by blocks went on past the intervals its cap
    /// allows, and every series ends there ([`PortUtil::intervals`]).
    pub truncated: bool,
    /// Intervals recorded at most: the run's (a run for a duration) or the cap's.
    limit: usize,
    /// `limit` intervals' end: transmissions that end later are not counted.
    until: Time,
    /// A run by blocks: going past `until` truncates the series.
    capped: bool,
    /// Per port: the end of the highest sequence each flow's data reached (retransmissions).
    highest: Vec<HashMap<FlowId, u64>>,
}

/// Refuse an interval outside 100 us .. 1 s, or a run whose series would exceed the cap.
pub fn check(sc: &Scenario, topo_ports: usize, interval: Time) -> Result<(), ScenarioError> {
    let shown = || format!("{} us", interval.0 / PS_PER_US);
    if interval < MIN_INTERVAL || interval > MAX_INTERVAL {
        return Err(ScenarioError::new("port_util_interval", shown(), "an interval from 100 us to 1 s"));
    }
    if let StopAt::Time(d) = sc.stop {
        let bytes = intervals(d, interval) * topo_ports as u64 * CELL_BYTES;
        if bytes > MAX_BYTES {
            return Err(ScenarioError::new(
                "port_util_interval",
                shown(),
                format!(
                    "a series within {} MiB: {} intervals x {topo_ports} ports x {CELL_BYTES} B = {} MiB; choose a \
                     coarser interval or a shorter duration",
                    MAX_BYTES >> 20,
                    intervals(d, interval),
                    bytes.div_ceil(1 << 20)
                ),
            ));
        }
    }
    Ok(())
}

/// Intervals that cover `duration` (a last partial one included).
fn intervals(duration: Time, interval: Time) -> u64 {
    duration.0.div_ceil(interval.0).max(1)
}

impl PortUtil {
    /// Sample every port of `topo`; `duration` (if known) sizes the series up front, else
    /// the cap ([`MAX_BYTES`]) bounds them.
    pub fn new(topo: &Topology, interval: Time, duration: Option<Time>) -> PortUtil {
        PortUtil::with_cap(topo, interval, duration, MAX_BYTES)
    }

    /// As [`PortUtil::new`], with a run by blocks capped at `cap_bytes` (tests use a small one).
    pub fn with_cap(topo: &Topology, interval: Time, duration: Option<Time>, cap_bytes: u64) -> PortUtil {
        let ports: Vec<PortInfo> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| PortInfo { port: i as PortId, from: p.from, to: p.to, rate_bps: p.rate_bps })
            .collect();
        let n = ports.len();
        let (len, limit) = match duration {
            Some(d) => (intervals(d, interval) as usize, intervals(d, interval) as usize),
            // at least one interval, so a tiny cap still records something
            None => (0, (cap_bytes / (CELL_BYTES * n.max(1) as u64)).max(1) as usize),
        };
        let windows: Vec<Time> = std::iter::once(interval)
            .chain(FLOW_WINDOWS.into_iter().filter(|w| w.0 > interval.0 && w.0 % interval.0 == 0))
            .collect();
        PortUtil {
            interval,
            cells: vec![vec![Cell::default(); len]; n],
            flows: windows.iter().map(|&w| vec![DistinctFlows::new(w); n]).collect(),
            windows,
            truncated: false,
            limit,
            until: duration.unwrap_or(Time(interval.0.saturating_mul(limit as u64))),
            capped: duration.is_none(),
            highest: vec![HashMap::new(); n],
            ports,
        }
    }

    /// Distinct flows per second on each port (the monitor's senders): `[port][second]`.
    pub fn senders(&self) -> Vec<&[u32]> {
        let k = self.windows.iter().position(|&w| w.0 == PS_PER_S).expect("every interval divides a second");
        self.flows[k].iter().map(|d| d.counts.as_slice()).collect()
    }

    /// The cell of `port` at instant `t`, grown on demand up to `limit` intervals. Beyond
    /// them nothing is recorded, on any port; a run by blocks is then `truncated`.
    #[inline]
    fn cell(&mut self, port: PortId, t: Time) -> Option<&mut Cell> {
        let i = (t.0 / self.interval.0) as usize;
        if i >= self.limit {
            self.truncated |= self.capped;
            return None;
        }
        let series = &mut self.cells[port as usize];
        if i >= series.len() {
            series.resize(i + 1, Cell::default());
        }
        Some(&mut series[i])
    }

    /// A packet of `wire_bytes` started on `port`; its last bit leaves at `end`. `data`:
    /// the flow and sequence range of a TCP data segment; `ce`: it carries a CE mark.
    #[inline]
    pub fn sent(&mut self, port: PortId, end: Time, wire_bytes: u32, data: Option<(FlowId, u64, u64)>, ce: bool) {
        if end >= self.until {
            self.truncated |= self.capped;
            return;
        }
        let retransmit = data.is_some_and(|(f, seq, seq_end)| {
            let highest = self.highest[port as usize].entry(f).or_insert(0);
            let again = seq < *highest;
            *highest = (*highest).max(seq_end);
            again
        });
        if let Some(c) = self.cell(port, end) {
            c.tx_bytes += wire_bytes as u64;
            c.tx_packets += 1;
            c.ce_packets += ce as u32;
            c.retrans_packets += retransmit as u32;
        }
        if let Some((f, _, _)) = data {
            for windows in &mut self.flows {
                windows[port as usize].note(end, f);
            }
        }
    }

    /// `port` dropped a packet of `wire_bytes` at `now`.
    #[inline]
    pub fn dropped(&mut self, port: PortId, now: Time, wire_bytes: u32) {
        if let Some(c) = self.cell(port, now) {
            c.drop_bytes += wire_bytes as u64;
            c.drop_packets += 1;
        }
    }

    /// A flow whose data `port` delivers timed out at `now`.
    pub fn timeout(&mut self, port: PortId, now: Time) {
        if let Some(c) = self.cell(port, now) {
            c.timeouts += 1;
        }
    }

    /// Close the open windows and give every port the same number of intervals (up to the
    /// last one anything happened in, or all `limit` of them when the cap cut the run) and
    /// of windows of each length (as many as cover those intervals).
    pub(crate) fn finish(&mut self) {
        let last = self.cells.iter().map(Vec::len).max().unwrap_or(0);
        let len = if self.truncated { self.limit } else { last };
        for c in &mut self.cells {
            c.resize(len, Cell::default());
        }
        let span = self.interval.0 * len as u64;
        for (w, windows) in self.windows.iter().zip(&mut self.flows) {
            let n = span.div_ceil(w.0) as usize;
            for d in windows.iter_mut() {
                d.close();
                d.counts.resize(n, 0);
            }
        }
    }

    /// Intervals recorded (every port has as many).
    pub fn intervals(&self) -> usize {
        self.cells.first().map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioSpec;

    #[test]
    fn a_finished_packet_counts_whole_in_the_interval_of_its_last_bit() {
        let topo = Topology::star(1, 1, 0, 1_000_000_000, Time::from_us(25));
        let mut u = PortUtil::new(&topo, MIN_INTERVAL, None);
        // a 1500 B packet from 95 to 107 us: all of it in the second interval
        u.sent(0, Time::from_us(107), 1500, Some((0, 1, 1461)), false);
        u.finish();
        assert_eq!(u.cells[0][0], Cell::default());
        assert_eq!((u.cells[0][1].tx_bytes, u.cells[0][1].tx_packets), (1500, 1));
        assert_eq!(u.senders()[0], &[1][..]);
        assert_eq!(u.flows[0][0].counts, vec![0, 1], "the interval's own distinct flows");
    }

    #[test]
    fn senders_are_distinct_flows_per_second() {
        let topo = Topology::star(3, 1, 0, 1_000_000_000, Time::from_us(25));
        let mut u = PortUtil::new(&topo, MIN_INTERVAL, None);
        let port = 4;
        for (t_ms, f) in [(1, 0), (2, 0), (3, 1), (1500, 2)] {
            u.sent(port, Time::from_ms(t_ms), 1500, Some((f, 1, 1461)), false);
        }
        u.sent(port, Time::from_ms(1600), 64, None, false); // not data: no sender
        u.finish();
        assert_eq!(u.senders()[port as usize], &[2, 1][..]);
        assert_eq!(u.senders()[0], &[0, 0][..], "every port as many seconds");
        // the same flows per 10 ms: flows 0 and 1 in the first window, flow 2 in the 150th
        let ten = &u.flows[2][port as usize];
        assert_eq!((ten.window, ten.counts[0], ten.counts[150], ten.counts.iter().sum::<u32>()), (Time::from_ms(10), 2, 1, 3));
    }

    #[test]
    fn a_segment_below_its_flows_highest_sequence_is_a_retransmission_and_ce_marks_count() {
        let topo = Topology::star(1, 1, 0, 1_000_000_000, Time::from_us(25));
        let mut u = PortUtil::new(&topo, MIN_INTERVAL, None);
        u.sent(2, Time::from_us(10), 1500, Some((0, 1, 1461)), false);
        u.sent(2, Time::from_us(20), 1500, Some((0, 1461, 2921)), true);
        u.sent(2, Time::from_us(30), 1500, Some((0, 1, 1461)), false); // sent again
        u.sent(2, Time::from_us(40), 1500, Some((1, 1, 1461)), false); // another flow's first
        u.finish();
        assert_eq!((u.cells[2][0].retrans_packets, u.cells[2][0].ce_packets, u.cells[2][0].tx_packets), (1, 1, 4));
    }

    #[test]
    fn a_run_by_blocks_stops_recording_on_every_port_at_the_caps_interval() {
        // 4 ports x 32 B x 10 intervals = 1280 B: intervals 0..9 are recorded, on every port
        let topo = Topology::star(1, 1, 0, 1_000_000_000, Time::from_us(25));
        let mut u = PortUtil::with_cap(&topo, MIN_INTERVAL, None, 4 * CELL_BYTES * 10);
        u.sent(0, Time::from_us(950), 1500, None, false); // interval 9: the last one kept
        assert!(!u.truncated);
        u.sent(0, Time::from_us(1050), 1500, None, false); // interval 10: past the cap
        assert!(u.truncated);
        u.dropped(1, Time::from_us(1200), 1500); // nothing more past it, on any port
        u.dropped(1, Time::from_us(500), 1500); // an interval kept still gets its events
        u.finish();
        assert!(u.cells.iter().all(|c| c.len() == 10), "every series cut at interval 10");
        assert_eq!(u.cells[0].iter().map(|c| c.tx_packets).sum::<u32>(), 1);
        assert_eq!(u.cells[1].iter().map(|c| c.drop_packets).sum::<u32>(), 1);
        assert_eq!(u.cells[1][5].drop_packets, 1);
    }

    #[test]
    fn refuses_intervals_out_of_range_and_series_over_the_cap() {
        let sc = ScenarioSpec { servers: 4, duration_ps: Some(10 * PS_PER_S), ..Default::default() }.validate().unwrap();
        let err = check(&sc, 10, Time::from_us(50)).unwrap_err();
        assert_eq!(err.param, "port_util_interval");
        assert!(check(&sc, 10, Time(2 * PS_PER_S)).is_err());
        assert!(check(&sc, 10, MIN_INTERVAL).is_ok());
        // 10 s at 100 us = 100,000 intervals; x 400 ports x 44 B = 1.76 GB > 1 GiB
        let err = check(&sc, 400, MIN_INTERVAL).unwrap_err();
        assert!(err.allowed.contains("100000 intervals x 400 ports x 44 B = 1679 MiB"), "{}", err.allowed);
    }
}
