//! Invariants that must hold in every run (DESIGN.md, "Invariants checked in tests"):
//! bytes sent = delivered + dropped + in flight; no byte delivered twice to the
//! application; no queue above its buffer; same seed, same result.

use incast_sim::world::World;
use incast_sim::event::TieBreak;
use incast_sim::net::buffer::BufferSharing;
use incast_sim::app::riak::ReplySizeDist;
use incast_sim::net::{Admission, ClassScheduler, TopologyKind};
use incast_sim::scenario::{RtoBackoff, Scheme, TcpRules, Workload};
use incast_sim::tcp::congestion::Cc;
use incast_sim::{ScenarioSpec, SimResult, TcpVariant};

const MS: u64 = 1_000_000_000;
const US: u64 = 1_000_000;

/// A spread of scenarios: collapse and no collapse, small and large fan-in, every knob.
fn scenarios() -> Vec<ScenarioSpec> {
    let base = ScenarioSpec { duration_ps: Some(300 * MS), ..ScenarioSpec::default() };
    let mut v = vec![];
    for servers in [1, 3, 16, 64] {
        v.push(ScenarioSpec { servers, ..base.clone() });
        v.push(ScenarioSpec { servers, rto_min_ps: Some(200 * US), ..base.clone() });
        v.push(ScenarioSpec { servers, blocks: Some(3), duration_ps: None, rto_min_ps: Some(1 * MS), ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 8, delayed_ack_ps: 40 * MS, ..base.clone() });
    v.push(ScenarioSpec { servers: 8, rwnd_bytes: Some(1 << 30), buffer_bytes: 256 * 1024, ..base.clone() });
    v.push(ScenarioSpec { servers: 8, block_bytes: Some(1 << 20), ..base.clone() });
    v.push(ScenarioSpec { servers: 8, slow_start: false, dupack_threshold: 1, ..base.clone() });
    v.push(ScenarioSpec { servers: 8, send_jitter_ps: 3 * US, response_jitter_ps: 10 * US, seed: 7, ..base.clone() });
    v.push(ScenarioSpec { servers: 8, slow_start_after_idle: true, rto_min_ps: Some(200 * US), ..base.clone() });
    v.push(ScenarioSpec { servers: 4, rate_bps: 10_000_000_000, rtt_ps: 40 * US, ..base.clone() });
    v.push(ScenarioSpec { servers: 4, sru_bytes: Some(1), ..base.clone() });
    for tcp in [TcpVariant::Reno, TcpVariant::Newreno, TcpVariant::Sack] {
        v.push(ScenarioSpec { servers: 16, tcp, ..base.clone() });
        v.push(ScenarioSpec { servers: 16, tcp, limited_transmit: true, rto_min_ps: Some(MS), ..base.clone() });
        v.push(ScenarioSpec { servers: 16, tcp, rto_random: 0.5, rto_min_ps: Some(200 * US), seed: 3, ..base.clone() });
        v.push(ScenarioSpec { servers: 16, tcp, delayed_ack_ps: 40 * MS, rto_min_ps: Some(200 * US), ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 8, timer_granularity_ps: 4 * MS, timer_ticks: true, rto_min_ps: Some(MS), ..base.clone() });
    // the modelling rules: each admission rule, ns-3's backoff rule, random tie order
    for buffer_admission in [Admission::Bytes, Admission::Packets, Admission::MtuSlots] {
        v.push(ScenarioSpec { servers: 16, buffer_admission: Some(buffer_admission), limited_transmit: true, ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 16, rto_backoff: RtoBackoff::NewAck, ..base.clone() });
    // switch buffers: a shared pool with dynamic thresholds, QoS classes (net::buffer, net::qos)
    for (servers, alpha) in [(16, 1.0), (64, 0.5), (64, 4.0)] {
        let (buffer_sharing, buffer_pool_bytes) = (BufferSharing::Dynamic, Some(256 * 1024));
        v.push(ScenarioSpec { servers, buffer_sharing, buffer_pool_bytes, dt_alpha: alpha, ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 16, qos_classes: 4, buffer_bytes: 64 * 1024, ..base.clone() });
    for tcp in [TcpVariant::Reno, TcpVariant::Newreno, TcpVariant::Sack] {
        v.push(ScenarioSpec { servers: 16, tcp, tcp_rules: TcpRules::Ns2, limited_transmit: true, ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 8, tcp_rules: TcpRules::Ns2, blocks: Some(4), duration_ps: None, ..base.clone() });
    for limited_transmit in [true, false] {
        v.push(ScenarioSpec { servers: 16, tcp_rules: TcpRules::Ns3, limited_transmit, ..base.clone() });
        v.push(ScenarioSpec { servers: 4, tcp_rules: TcpRules::Ns3, limited_transmit, rto_min_ps: Some(200 * US), ..base.clone() });
    }
    v.push(ScenarioSpec { servers: 16, tie_break: TieBreak::Random, seed: 5, ..base.clone() });
    // ECN and DCTCP (RFC 8257), with delayed ACKs (its receiver's state machine) and without
    for delayed_ack_ps in [0, 40 * MS] {
        v.push(ScenarioSpec { servers: 32, cc: Cc::Dctcp, ecn_threshold_packets: Some(20), delayed_ack_ps, ..base.clone() });
    }
    // PRR (RFC 6937) and RACK-TLP (RFC 8985) on SACK, past FAST'08's collapse and in blocks
    for (prr, rack_tlp) in [(true, false), (false, true), (true, true)] {
        v.push(ScenarioSpec { servers: 32, tcp: TcpVariant::Sack, prr, rack_tlp, ..base.clone() });
        let blocks = Some(3);
        let sack = ScenarioSpec { tcp: TcpVariant::Sack, ..base.clone() };
        v.push(ScenarioSpec { servers: 32, prr, rack_tlp, blocks, duration_ps: None, ..sack });
    }
    // Osada et al.'s setting: missions with handshakes, active servers, UDP, packet buffers
    let osada = ScenarioSpec {
        servers: 64,
        active_servers: Some(24),
        sru_bytes: Some(32 * 1024),
        buffer_packets: Some(40),
        handshake: true,
        udp_fraction: 0.001,
        rwnd_bytes: Some(12_500),
        ..base.clone()
    };
    // the schemes' thresholds come from Osada et al.'s model in the core (app::serialization_model)
    for mitigation in [Scheme::Ntcp, Scheme::Ictcp, Scheme::Ccs, Scheme::Nccs, Scheme::Ocs] {
        v.push(ScenarioSpec { mitigation, ..osada.clone() });
        v.push(ScenarioSpec { mitigation, handshake: false, tcp: TcpVariant::Sack, ..osada.clone() });
    }
    // multi-hop routes: two switches and a trunk, the far half of the servers three links
    // from the client, with handshakes, UDP and random ties too
    let two = ScenarioSpec { topology: TopologyKind::TwoSwitch, ..base.clone() };
    for servers in [1, 2, 7, 32] {
        v.push(ScenarioSpec { servers, ..two.clone() });
        v.push(ScenarioSpec { servers, blocks: Some(3), duration_ps: None, rto_min_ps: Some(1 * MS), ..two.clone() });
    }
    v.push(ScenarioSpec { topology: TopologyKind::TwoSwitch, ..osada.clone() });
    v.push(ScenarioSpec { servers: 16, tie_break: TieBreak::Random, seed: 9, ..two.clone() });
    // each switch with its own pool, or its ports split in classes, across the trunk too
    let (buffer_sharing, buffer_pool_bytes) = (BufferSharing::Dynamic, Some(256 * 1024));
    v.push(ScenarioSpec { servers: 32, buffer_sharing, buffer_pool_bytes, ..two.clone() });
    v.push(ScenarioSpec { servers: 16, qos_classes: 2, buffer_bytes: 64 * 1024, pause: true, ..two.clone() });
    // 802.3x PAUSE on one switch and across two, persistent and with handshakes
    for topology in [TopologyKind::Star, TopologyKind::TwoSwitch] {
        for servers in [2, 16, 64] {
            v.push(ScenarioSpec { servers, topology, pause: true, ..base.clone() });
        }
        let few = ScenarioSpec { blocks: Some(4), duration_ps: None, ..base.clone() };
        v.push(ScenarioSpec { servers: 8, topology, pause: true, pause_quanta: 50, ..few.clone() });
        v.push(ScenarioSpec { topology, pause: true, ..osada.clone() });
        // a victim bulk flow beside the incast, with PAUSE and without
        for pause in [false, true] {
            v.push(ScenarioSpec { servers: 16, topology, pause, victim: true, ..base.clone() });
            v.push(ScenarioSpec { servers: 6, topology, pause, victim: true, tcp: TcpVariant::Sack, ..few.clone() });
        }
        // 802.1Qbb PFC with the victim in its own class: per-class queues on every NIC and
        // port, one class paused while the other flows; strict priority and WRR
        let (qos_classes, victim_class) = (2, 1);
        let (pause, pfc, victim) = (true, true, true);
        let pfc = ScenarioSpec { topology, pause, pfc, victim, qos_classes, victim_class, ..base.clone() };
        for servers in [2, 16, 32] {
            v.push(ScenarioSpec { servers, buffer_bytes: 64 * 1024, ..pfc.clone() });
        }
        let (qos_scheduler, qos_weights) = (ClassScheduler::Wrr, Some(vec![3, 1]));
        v.push(ScenarioSpec { servers: 16, buffer_bytes: 64 * 1024, qos_scheduler, qos_weights, ..pfc.clone() });
        let (blocks, duration_ps, tcp) = (Some(4), None, TcpVariant::Sack);
        v.push(ScenarioSpec { servers: 8, buffer_bytes: 64 * 1024, tcp, blocks, duration_ps, ..pfc.clone() });
        let (pause_quanta, tie_break, seed) = (50, TieBreak::Random, 5);
        v.push(ScenarioSpec { servers: 16, buffer_bytes: 64 * 1024, pause_quanta, tie_break, seed, ..pfc.clone() });
        // several clients, each with its own blocks from every server; with handshakes,
        // active servers, UDP, jitter, a victim and across the trunk
        for clients in [2, 5] {
            v.push(ScenarioSpec { servers: 16, clients, topology, ..base.clone() });
            v.push(ScenarioSpec { servers: 8, clients, topology, blocks: Some(3), duration_ps: None, ..base.clone() });
            v.push(ScenarioSpec { clients, topology, ..osada.clone() });
        }
        let jittery = ScenarioSpec { send_jitter_ps: 3 * US, response_jitter_ps: 10 * US, seed: 4, ..base.clone() };
        v.push(ScenarioSpec { servers: 8, clients: 3, topology, victim: true, pause: true, ..jittery });
        // Riak gets: light and heavy load, each reply-size law, PAUSE, SACK, send jitter
        let riak = ScenarioSpec { workload: Workload::Riak, topology, ..base.clone() };
        for (servers, get_rate) in [(4, 50.0), (16, 125.0), (16, 400.0)] {
            v.push(ScenarioSpec { servers, get_rate, ..riak.clone() });
        }
        for reply_size_dist in [ReplySizeDist::Exponential, ReplySizeDist::Lognormal] {
            v.push(ScenarioSpec { servers: 8, get_rate: 300.0, reply_size_dist, read_quorum: 1, ..riak.clone() });
        }
        v.push(ScenarioSpec { servers: 12, pause: true, tcp: TcpVariant::Sack, reply_bytes: 20_000, ..riak.clone() });
        v.push(ScenarioSpec { servers: 6, replicas: 5, read_quorum: 5, send_jitter_ps: 3 * US, seed: 2, ..riak });
    }
    // a leaf-spine: servers round-robin over 3 leaves under 2 spines, the far ones four links
    // from the client over a spine their rank picks; at full bisection, oversubscribed, with
    // faster uplinks; each switch with its own pool; PAUSE at every ingress (pausing uplinks
    // upstream); a victim from the last leaf to the client's
    let ls = ScenarioSpec { topology: TopologyKind::LeafSpine, leaves: Some(3), spines: Some(2), ..base.clone() };
    for servers in [4, 7, 32] {
        v.push(ScenarioSpec { servers, ..ls.clone() });
        v.push(ScenarioSpec { servers, blocks: Some(3), duration_ps: None, rto_min_ps: Some(1 * MS), ..ls.clone() });
    }
    // 32 servers: 11 per leaf at 1 Gbps over 2 spines; 5:1 leaves 1.1 Gbps uplinks
    v.push(ScenarioSpec { servers: 32, oversubscription: Some(5.0), ..ls.clone() });
    v.push(ScenarioSpec { servers: 32, trunk_rate_bps: Some(10_000_000_000), ..ls.clone() });
    let random = ScenarioSpec { tie_break: TieBreak::Random, seed: 9, ..ls.clone() };
    v.push(ScenarioSpec { servers: 16, oversubscription: Some(2.0), ..random });
    let osada_ls = ScenarioSpec { topology: TopologyKind::LeafSpine, leaves: Some(4), ..osada.clone() };
    v.push(osada_ls.clone());
    let (buffer_sharing, buffer_pool_bytes) = (BufferSharing::Dynamic, Some(256 * 1024));
    v.push(ScenarioSpec { servers: 32, buffer_sharing, buffer_pool_bytes, oversubscription: Some(3.0), ..ls.clone() });
    // several clients and Riak's gets on a leaf-spine: the clients on leaf 0, the nodes
    // round-robin over the leaves
    v.push(ScenarioSpec { servers: 16, clients: 3, ..ls.clone() });
    v.push(ScenarioSpec { servers: 16, workload: Workload::Riak, get_rate: 200.0, ..ls.clone() });
    for servers in [4, 16, 64] {
        v.push(ScenarioSpec { servers, pause: true, ..ls.clone() });
    }
    for servers in [16, 64] {
        v.push(ScenarioSpec { servers, pause: true, oversubscription: Some(2.0), ..ls.clone() });
    }
    v.push(ScenarioSpec { servers: 32, pause: true, buffer_sharing, buffer_pool_bytes, ..ls.clone() });
    v.push(ScenarioSpec { pause: true, ..osada_ls });
    for pause in [false, true] {
        v.push(ScenarioSpec { servers: 16, pause, victim: true, oversubscription: Some(2.0), ..ls.clone() });
        let few = ScenarioSpec { blocks: Some(4), duration_ps: None, tcp: TcpVariant::Sack, ..ls.clone() };
        v.push(ScenarioSpec { servers: 6, pause, victim: true, ..few });
    }
    v
}

fn run(spec: &ScenarioSpec) -> (SimResult, World) {
    let sc = spec.validate().expect("valid scenario");
    let mut w = World::new(&sc);
    w.run();
    (incast_sim::simulate(&sc), w)
}

#[test]
fn bytes_sent_equal_delivered_plus_dropped_plus_in_flight() {
    for spec in scenarios() {
        let (r, _) = run(&spec);
        assert!(r.bytes_sent > 0, "{spec:?}");
        let kinds = r.timeouts_full_window + r.timeouts_last_packet + r.timeouts_lost_retransmit + r.timeouts_other;
        assert_eq!(kinds, r.timeouts, "timeout categories partition the timeouts: {spec:?}");
        assert_eq!(r.dart_histogram.iter().sum::<u64>(), r.timeouts, "{spec:?}");
        assert_eq!(r.bytes_sent, r.bytes_delivered + r.bytes_dropped + r.bytes_in_flight, "{spec:?}");
    }
}

#[test]
fn no_switch_queue_ever_exceeds_its_buffer() {
    for spec in scenarios() {
        let sc = spec.validate().unwrap();
        let (r, w) = run(&spec);
        let mtu = (spec.mss_bytes + spec.header_bytes) as u64;
        match sc.admission {
            Admission::Packets => assert!(r.max_queue_packets <= sc.buffer_packets as u64, "{spec:?}"),
            // a shared pool: one queue alone reaches alpha / (1 + alpha) of it, and never the whole
            Admission::Bytes if sc.buffer_pool_bytes.is_some() => {
                let (pool, alpha) = (sc.buffer_pool_bytes.unwrap(), spec.dt_alpha);
                let bound = (alpha / (1.0 + alpha) * pool as f64) as u64 + mtu;
                assert!(w.max_switch_occupancy() <= bound.min(pool), "{spec:?}");
            }
            Admission::Bytes => {
                assert!(r.max_queue_bytes <= spec.buffer_bytes, "{spec:?}");
                assert!(w.max_switch_occupancy() <= spec.buffer_bytes, "{spec:?}");
            }
            // the buffer holds the waiting packets; the one on the wire has left it (ns-3)
            Admission::MtuSlots => assert!(w.max_switch_occupancy() <= spec.buffer_bytes + mtu, "{spec:?}"),
        }
    }
}

#[test]
fn application_receives_each_byte_exactly_once() {
    for spec in scenarios() {
        let (r, w) = run(&spec);
        if spec.workload == Workload::Riak {
            let g = w.riak_gets().unwrap();
            // a completed get had its quorum of whole replies; a reply arrives whole once
            // and only after it was written; a get's replicas write one reply each
            let (quorum, replicas) = (spec.read_quorum as u64, spec.replicas as u64);
            assert!(g.completed * quorum <= g.replies_delivered, "{spec:?}");
            assert!(g.replies_delivered <= g.replies_written, "{spec:?}");
            assert!(g.replies_written <= g.issued * replicas, "{spec:?}");
            // the nodes' applications got whole replies and parts of the next ones, never
            // more than the replicas wrote, nor than arrived in order
            assert!(g.reply_bytes_delivered <= r.app_bytes && r.app_bytes <= g.reply_bytes_written, "{spec:?}");
            assert!(r.app_bytes <= r.bytes_delivered && r.gets_completed <= r.gets_issued, "{spec:?}");
            assert!(g.replies_delivered > 0, "{spec:?}: the case exercises nothing");
            continue;
        }
        // never more than was asked for (each client's blocks done and the one it reads),
        // and at least every completed block
        let asked = (r.blocks + spec.clients as u64) * r.block_bytes;
        assert!(r.app_bytes >= r.blocks * r.block_bytes && r.app_bytes <= asked, "{spec:?}: {r:?}");
        if spec.blocks.is_some() {
            assert_eq!(r.blocks, spec.clients as u64 * spec.blocks.unwrap(), "{spec:?}");
            assert_eq!(r.app_bytes, r.blocks * r.block_bytes, "{spec:?}");
        }
        // the application never gets more than arrived
        assert!(r.app_bytes <= r.bytes_delivered);
    }
}

#[test]
fn same_seed_gives_identical_results() {
    for spec in scenarios() {
        let (mut a, _) = run(&spec);
        let (mut b, _) = run(&spec);
        a.wall_seconds = 0.0;
        b.wall_seconds = 0.0;
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    }
}

#[test]
fn different_seeds_differ_only_when_something_is_random() {
    let jittery = ScenarioSpec { servers: 16, send_jitter_ps: 3 * US, duration_ps: Some(500 * MS), ..ScenarioSpec::default() };
    let (a, _) = run(&jittery);
    let (b, _) = run(&ScenarioSpec { seed: 2, ..jittery.clone() });
    assert_ne!((a.events, a.drops), (b.events, b.drops), "jitter draws from the seeded RNG");
    let fixed = ScenarioSpec { servers: 16, duration_ps: Some(500 * MS), ..ScenarioSpec::default() };
    let (c, _) = run(&fixed);
    let (d, _) = run(&ScenarioSpec { seed: 2, ..fixed.clone() });
    assert_eq!((c.events, c.drops), (d.events, d.drops), "no randomness is configured");
}

#[test]
fn blocks_mode_stops_after_the_last_byte_is_acknowledged() {
    let spec = ScenarioSpec { servers: 4, blocks: Some(2), duration_ps: None, ..ScenarioSpec::default() };
    let (r, w) = run(&spec);
    assert_eq!(r.blocks, 2);
    assert!(w.now().as_secs_f64() >= r.sim_seconds, "the drain ends at or after the last block");
    assert_eq!(r.bytes_in_flight, 0, "every data packet has arrived or been dropped");
}

#[test]
fn every_block_of_a_blocks_mode_scenario_completes() {
    // a sender left with data outstanding and no timer would stall its block for ever: the
    // event queue runs dry before the last block
    for spec in scenarios().iter().filter(|s| s.blocks.is_some()) {
        assert_eq!(run(spec).0.blocks, spec.clients as u64 * spec.blocks.unwrap(), "{spec:?}");
    }
}

#[test]
fn invalid_scenarios_name_their_parameter() {
    let bad = [
        (ScenarioSpec { servers: 0, ..ScenarioSpec::default() }, "servers"),
        (ScenarioSpec { buffer_bytes: 100, ..ScenarioSpec::default() }, "buffer_bytes"),
        (ScenarioSpec { sru_bytes: Some(0), ..ScenarioSpec::default() }, "sru_bytes"),
        (ScenarioSpec { rate_bps: 0, ..ScenarioSpec::default() }, "rate_bps"),
        (ScenarioSpec { rto_min_ps: Some(0), ..ScenarioSpec::default() }, "rto_min_ps"),
        (ScenarioSpec { dupack_threshold: 0, ..ScenarioSpec::default() }, "dupack_threshold"),
        (ScenarioSpec { servers: 4, block_bytes: Some(3), ..ScenarioSpec::default() }, "block_bytes"),
        (ScenarioSpec { blocks: Some(0), ..ScenarioSpec::default() }, "blocks"),
        (ScenarioSpec { clients: 0, ..ScenarioSpec::default() }, "clients"),
        (ScenarioSpec { servers: 1 << 20, clients: 2, ..ScenarioSpec::default() }, "clients"),
        (ScenarioSpec { clients: 2, mitigation: Scheme::Ccs, ..ScenarioSpec::default() }, "mitigation"),
        (ScenarioSpec { clients: 2, mitigation: Scheme::Ictcp, ..ScenarioSpec::default() }, "mitigation"),
    ];
    for (spec, param) in bad {
        let err = incast_sim::run(&spec).unwrap_err();
        assert_eq!(err.param, param);
        assert!(err.to_string().starts_with(param));
    }
}

#[test]
fn delayed_ack_beside_a_200us_rto_min_gives_spurious_timeouts() {
    // DESIGN.md, FAST'08 §4.2: a sender with one segment outstanding waits for an ACK the
    // client holds for the delayed-ACK timeout (40 ms). With RTOmin 200 ms it just waits
    // (a delayed-ACK "mini-timeout"); with RTOmin 200 us it times out on a segment that
    // did arrive: a spurious timeout. One server and a one-segment window: no loss at all.
    let spec = ScenarioSpec {
        servers: 1,
        rwnd_bytes: Some(1460),
        sru_bytes: Some(10 * 1460),
        delayed_ack_ps: 40 * MS,
        duration_ps: Some(2000 * MS),
        ..ScenarioSpec::default()
    };
    let (slow, _) = run(&spec);
    assert_eq!((slow.timeouts, slow.drops), (0, 0));
    assert!(slow.delayed_ack_timeouts >= 9 * slow.blocks && slow.blocks > 0, "{slow:?}");
    assert!(slow.block_time_p50_s >= 9.0 * 0.040, "nine of ten segments wait 40 ms");
    let (fine, _) = run(&ScenarioSpec { rto_min_ps: Some(200 * US), ..spec.clone() });
    assert_eq!(fine.drops, 0);
    assert!(fine.timeouts > 0 && fine.spurious_timeouts == fine.timeouts, "{fine:?}");
    // with immediate ACKs the same run has no timeout at all
    let (quick, _) = run(&ScenarioSpec { rto_min_ps: Some(200 * US), delayed_ack_ps: 0, ..spec });
    assert_eq!(quick.timeouts, 0);
}

#[test]
fn rto_min_200us_times_out_spuriously_when_queueing_exceeds_the_rto() {
    // FAST'08 §5.2 warns that a small RTOmin "increases the risk of premature timeouts":
    // 21 packets queued at 1 Gbps add 252 us to a 100 us RTT, above an RTO near 300 us.
    let spec = ScenarioSpec { servers: 4, rto_min_ps: Some(200 * US), duration_ps: Some(500 * MS), ..ScenarioSpec::default() };
    let (r, _) = run(&spec);
    assert!(r.spurious_timeouts > 0 && r.spurious_timeouts <= r.timeouts, "{r:?}");
    let (slow, _) = run(&ScenarioSpec { rto_min_ps: Some(200 * MS), ..spec });
    assert_eq!(slow.spurious_timeouts, 0, "a 200 ms RTO is never premature here");
}

#[test]
fn capture_sees_every_transmission_so_retransmissions_can_be_recounted() {
    use incast_sim::packet::Kind;
    use incast_sim::trace::RecordOptions;
    use std::collections::HashMap;
    // blocks mode ends with nothing in flight, so every byte sent was captured
    let spec = ScenarioSpec { servers: 8, blocks: Some(10), duration_ps: None, ..ScenarioSpec::default() };
    let sc = spec.validate().unwrap();
    let opts = RecordOptions { capture_limit: 1 << 22, trace_flows: vec![3], events: true, ..RecordOptions::default() };
    let (r, rec) = incast_sim::simulate_recording(&sc, &opts);
    assert!(!rec.capture_truncated);
    let data: Vec<_> = rec.capture.iter().filter(|c| c.packet.kind == Kind::Data).collect();
    assert_eq!(data.iter().filter(|c| c.dropped).count() as u64, r.drops);
    assert_eq!(data.iter().map(|c| c.packet.len as u64).sum::<u64>(), r.bytes_sent);
    assert_eq!(r.bytes_in_flight, 0);
    assert!(r.retransmits > 0, "the scenario must exercise retransmissions");
    // the paths are FIFO, so a segment is a retransmission exactly when it starts below
    // the highest sequence already seen on its flow: what a pcap analyser counts
    let mut highest: HashMap<u32, u64> = HashMap::new();
    let mut recount = 0;
    for c in &data {
        let h = highest.entry(c.packet.flow).or_insert(0);
        if c.packet.seq < *h {
            recount += 1;
        }
        *h = (*h).max(c.packet.seq + c.packet.len as u64);
    }
    assert_eq!(recount, r.retransmits);
    // capture is in time order; the trace holds only the flow asked for
    assert!(rec.capture.windows(2).all(|w| w[0].time <= w[1].time));
    assert!(!rec.trace.is_empty() && rec.trace.iter().all(|t| t.flow == 3));
    // the per-event trace counts the same transmissions, retransmissions and drops
    use incast_sim::trace::EventKind;
    let count = |k: EventKind| rec.events.iter().filter(|e| e.kind == k).count() as u64;
    assert_eq!(count(EventKind::Rtx), r.retransmits);
    assert_eq!(count(EventKind::Tx) + count(EventKind::Rtx), data.len() as u64);
    assert_eq!(count(EventKind::Drop), r.drops);
    assert_eq!(count(EventKind::Enq), count(EventKind::Deq), "everything queued left (blocks mode drains)");
    assert!(rec.events.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn results_name_the_rules_as_the_scenario_spells_them() {
    // a result says which reading produced it, in the words a scenario would use
    let spec = ScenarioSpec {
        servers: 2,
        duration_ps: Some(MS),
        buffer_admission: Some(Admission::MtuSlots),
        tcp_rules: TcpRules::Ns3,
        rto_backoff: RtoBackoff::NewAck,
        tie_break: TieBreak::Random,
        ..ScenarioSpec::default()
    };
    let (r, _) = run(&spec);
    let as_scenario = serde_json::to_value(&spec).unwrap();
    for (result_field, spec_field) in
        [("buffer_admission", "buffer_admission"), ("tcp_rules", "tcp_rules"), ("rto_backoff", "rto_backoff"), ("tie_break", "tie_break")]
    {
        let said = serde_json::to_value(&r).unwrap()[result_field].clone();
        assert_eq!(said, as_scenario[spec_field], "{result_field}");
    }
    assert!(r.limited_transmit && r.buffer_packets == 0);
    let (p, _) = run(&ScenarioSpec { buffer_admission: None, buffer_packets: Some(7), ..spec });
    assert_eq!((p.buffer_admission, p.buffer_packets), (Admission::Packets, 7));
}

#[test]
fn a_run_reports_its_progress_and_ends_at_its_result() {
    use incast_sim::progress::RunProgress;
    use incast_sim::trace::RecordOptions;
    use std::sync::Arc;
    // the front reads this while the run goes on (issue 11: progress inside one point)
    for spec in [
        ScenarioSpec { servers: 16, duration_ps: Some(300 * MS), ..ScenarioSpec::default() },
        ScenarioSpec { servers: 4, blocks: Some(7), ..ScenarioSpec::default() },
    ] {
        let progress = Arc::new(RunProgress::default());
        let opts = RecordOptions { progress: Some(progress.clone()), ..RecordOptions::default() };
        let (r, _) = incast_sim::simulate_recording(&spec.validate().unwrap(), &opts);
        assert_eq!(progress.blocks(), r.blocks, "{spec:?}");
        assert!(progress.sim_ps() as f64 / 1e12 >= r.sim_seconds, "{spec:?}");
    }
}

#[test]
fn dctcp_keeps_the_queue_near_k_where_newreno_overflows_it() {
    // 1 MiB block over 16 servers, 100-packet buffer, K = 20 (the DCTCP paper's 1 Gbps
    // setting): NewReno's synchronized windows overflow the buffer; DCTCP's marks hold the
    // queue below it, so nothing is dropped
    let base = ScenarioSpec {
        servers: 16,
        block_bytes: Some(1 << 20),
        buffer_packets: Some(100),
        ecn_threshold_packets: Some(20),
        duration_ps: Some(200 * MS),
        ..ScenarioSpec::default()
    };
    let (newreno, _) = run(&base);
    let (dctcp, _) = run(&ScenarioSpec { cc: Cc::Dctcp, ..base.clone() });
    assert_eq!(newreno.ce_marks, 0, "NewReno's packets are not ECN-capable");
    assert!(newreno.drops > 0);
    assert!(dctcp.ce_marks > 0);
    assert_eq!(dctcp.drops, 0);
    assert!(dctcp.max_queue_packets < 100, "{}", dctcp.max_queue_packets);
}
