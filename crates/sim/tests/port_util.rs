//! Per-port utilization sampling (`incast_sim::port_util`) against hand-computed cases and
//! the run's own counters; sampling must not change the run.

use incast_sim::net::{Node, TopologyKind};
use incast_sim::port_util::PortUtil;
use incast_sim::trace::RecordOptions;
use incast_sim::time::Time;
use incast_sim::{ScenarioSpec, SimResult};

const MS: u64 = 1_000_000_000;

fn sampled(spec: ScenarioSpec, interval_us: u64) -> (SimResult, PortUtil) {
    let sc = spec.validate().unwrap();
    let opts = RecordOptions { port_util_interval: Some(Time::from_us(interval_us)), ..Default::default() };
    let (r, rec) = incast_sim::record(&sc, &opts).unwrap();
    (r, rec.port_util.expect("sampling was asked for"))
}

fn port_to(u: &PortUtil, from: Node, to: Node) -> usize {
    u.ports.iter().position(|p| p.from == from && p.to == to).expect("such a port")
}

#[test]
fn one_flow_at_line_rate_fills_every_100us_within_one_packet_and_an_idle_trunk_stays_zero() {
    // One server sending one 64 MiB SRU through a 4 MiB buffer with a 1 MiB window: no
    // drop, a window far above the 12.5 KB of bandwidth-delay product, so once slow start
    // has filled the pipe the client's port sends back to back. 1500 B packets take 12 us
    // at 1 Gbps: 8 or 9 of them end in each 100 us, 12,000 or 13,500 B, never more than
    // one packet (1500 B) from rate x 100 us = 12,500 B. Two switches with the only server
    // beside the client (servers 0..ceil(1/2) on switch 0): the trunk carries nothing.
    let spec = ScenarioSpec {
        servers: 1,
        sru_bytes: Some(64 << 20),
        buffer_bytes: 4 << 20,
        rwnd_bytes: Some(1 << 20),
        topology: TopologyKind::TwoSwitch,
        duration_ps: Some(50 * MS),
        ..Default::default()
    };
    let (r, u) = sampled(spec, 100);
    assert_eq!(r.drops, 0);
    assert_eq!(u.intervals(), 500);
    let down = port_to(&u, Node::Switch(0), Node::Host(1));
    let line = 1_000_000_000u64 * 100 / 8 / 1_000_000; // bytes in 100 us
    // from 5 ms on (slow start is over within a few RTTs of 100 us) to the run's end
    for (i, c) in u.cells[down].iter().enumerate().skip(50) {
        assert!(c.tx_bytes.abs_diff(line) <= 1500, "interval {i}: {} B", c.tx_bytes);
        assert!(c.tx_packets == 8 || c.tx_packets == 9, "interval {i}: {} packets", c.tx_packets);
    }
    for trunk in [port_to(&u, Node::Switch(0), Node::Switch(1)), port_to(&u, Node::Switch(1), Node::Switch(0))] {
        assert!(u.cells[trunk].iter().all(|c| *c == Default::default()), "the idle trunk is all zero");
    }
    assert_eq!(u.senders()[down], &[1][..]);
}

#[test]
fn drops_timeouts_and_packets_add_up_to_the_result() {
    // a collapsing FAST'08 point (16 servers, 32 KiB, RTOmin 200 ms) for 1.5 s
    let spec = ScenarioSpec { servers: 16, duration_ps: Some(1500 * MS), ..Default::default() };
    let (r, u) = sampled(spec.clone(), 100);
    let total = |f: fn(&incast_sim::port_util::Cell) -> u64| -> u64 {
        u.cells.iter().flatten().map(f).sum()
    };
    assert!(r.drops > 0 && r.timeouts > 0);
    assert_eq!(total(|c| c.drop_packets as u64), r.drops);
    assert_eq!(total(|c| c.timeouts as u64), r.timeouts);
    // every packet started on a link (a hop) is counted once if its last bit left before the
    // end; a port sends one packet at a time, so at most one per port is cut off by the end
    let tx = total(|c| c.tx_packets as u64);
    assert!(tx <= r.packet_hops && tx + u.ports.len() as u64 >= r.packet_hops, "{tx} of {} hops", r.packet_hops);
    // all timeouts are the client's flows: counted at the client's port
    let down = port_to(&u, Node::Switch(0), Node::Host(16));
    let at_client: u64 = u.cells[down].iter().map(|c| c.timeouts as u64).sum();
    assert_eq!(at_client, r.timeouts);
    assert_eq!(u.senders()[down][0], 16);
    // sampling changes nothing in the run
    let plain = incast_sim::simulate(&spec.validate().unwrap());
    assert_eq!(
        (plain.goodput_mbps, plain.drops, plain.timeouts, plain.events),
        (r.goodput_mbps, r.drops, r.timeouts, r.events)
    );
}

#[test]
fn a_run_by_blocks_records_until_its_drain_ends() {
    let spec = ScenarioSpec { servers: 4, blocks: Some(3), duration_ps: None, ..Default::default() };
    let (r, u) = sampled(spec, 1000);
    let secs = r.sim_seconds;
    assert!(!u.truncated);
    assert!(u.intervals() as f64 >= secs * 1000.0, "{} intervals over {secs} s", u.intervals());
    assert!(u.cells.iter().all(|c| c.len() == u.intervals()));
    // no duration to cut transmissions off: every hop but those still on a link (at most
    // one per port) when the last block completed is counted, and every drop
    let tx: u64 = u.cells.iter().flatten().map(|c| c.tx_packets as u64).sum();
    assert!(tx <= r.packet_hops && tx + u.ports.len() as u64 >= r.packet_hops, "{tx} of {} hops", r.packet_hops);
    assert_eq!(u.cells.iter().flatten().map(|c| c.drop_packets as u64).sum::<u64>(), r.drops);
}

#[test]
fn a_run_by_blocks_over_a_small_cap_is_cut_at_one_interval_on_every_port() {
    // the same run twice, the second with a cap of half its intervals: every port's series
    // ends at that interval, and what is kept is exactly the uncapped run's first half
    // (sampling does not change the run, so both runs are the same)
    let spec = ScenarioSpec { servers: 4, blocks: Some(5), duration_ps: None, ..Default::default() };
    let (r, whole) = sampled(spec.clone(), 100);
    assert!(!whole.truncated);
    let half = whole.intervals() / 2;
    assert!(half >= 10, "{} intervals", whole.intervals());
    let sc = spec.validate().unwrap();
    let cap = (whole.ports.len() * half) as u64 * incast_sim::port_util::CELL_BYTES;
    let opts = RecordOptions {
        port_util_interval: Some(Time::from_us(100)),
        port_util_cap_bytes: Some(cap),
        ..Default::default()
    };
    let (r2, rec) = incast_sim::record(&sc, &opts).unwrap();
    let cut = rec.port_util.unwrap();
    assert!(cut.truncated);
    assert_eq!(cut.intervals(), half);
    for (p, (c, w)) in cut.cells.iter().zip(&whole.cells).enumerate() {
        assert_eq!(c.as_slice(), &w[..half], "port {p}");
    }
    assert_eq!((r2.drops, r2.events), (r.drops, r.events));
}

#[test]
fn a_series_over_the_cap_is_refused_before_running() {
    // 2000 s at 100 us: 20 M intervals x 6 ports x 44 B = 4.9 GiB
    let spec = ScenarioSpec { servers: 2, duration_ps: Some(2000 * 1000 * MS), ..Default::default() };
    let sc = spec.validate().unwrap();
    let opts = RecordOptions { port_util_interval: Some(Time::from_us(100)), ..Default::default() };
    let err = incast_sim::record(&sc, &opts).unwrap_err();
    assert_eq!(err.param, "port_util_interval");
    assert!(err.allowed.contains("20000000 intervals x 6 ports x 44 B = 5036 MiB"), "{}", err.allowed);
}

#[test]
fn on_a_riak_cluster_each_timeout_is_counted_at_the_downlink_of_the_flows_receiver() {
    // many-to-many (003_a133663d5dbcfa75.txt): every node receives replies, so timeouts and
    // drops spread over every node's port, and add up to the result's
    use incast_sim::scenario::Workload;
    let spec = ScenarioSpec {
        workload: Workload::Riak,
        servers: 8,
        get_rate: 2000.0,
        reply_bytes: 32 * 1024,
        buffer_bytes: 32 * 1024,
        duration_ps: Some(1000 * MS),
        ..Default::default()
    };
    let (r, u) = sampled(spec, 100);
    let sum = |p: usize, f: fn(&incast_sim::port_util::Cell) -> u64| u.cells[p].iter().map(f).sum::<u64>();
    let downlinks: Vec<usize> = (0..8).map(|h| port_to(&u, Node::Switch(0), Node::Host(h))).collect();
    assert!(r.timeouts > 0 && r.drops > 0, "a loaded cluster: {} timeouts, {} drops", r.timeouts, r.drops);
    assert_eq!(downlinks.iter().map(|&p| sum(p, |c| c.timeouts as u64)).sum::<u64>(), r.timeouts);
    assert_eq!(downlinks.iter().map(|&p| sum(p, |c| c.drop_packets as u64)).sum::<u64>(), r.drops);
    let with_drops = downlinks.iter().filter(|&&p| sum(p, |c| c.drop_packets as u64) > 0).count();
    assert!(with_drops > 1, "drops at {with_drops} nodes' ports");
    // a node's fan-in: the other nodes that replied to it (at most 7)
    assert!(downlinks.iter().all(|&p| (2..=7).contains(&u.senders()[p][0])), "{:?}", u.senders());
}
