//! The composed world, tested at packet granularity through [`Harness`]: each test builds a
//! small world, puts packets, writes, timers or drops into it at chosen instants, and checks
//! what comes out where against hand-computed times and counts. On the star at the defaults
//! (1 Gbps, 25 us links): a 1500 B frame takes 12 us on a link, a 40 B ACK or SYN 0.32 us, a
//! 64 B request 0.512 us; hosts 0..n are the servers, host n the client; ports 0..n are their
//! NICs, then the switch's port towards the client, then its ports towards each server.

use super::harness::Harness;
use super::World;
use crate::app::riak::RiakGets;
use crate::event::{Event, FlowId, PortId, TieBreak};
use crate::events::AppTimer;
use crate::net::pause::Frame;
use crate::net::{ClassScheduler, Offer, TopologyKind};
use crate::packet::{Kind, Packet, CE, ECE, ECT};
use crate::app::flows::Placement;
use crate::net::balance::LoadBalancing;
use crate::scenario::{Mitigation, RiakTransport, ScenarioSpec, TcpRules, Workload};
use crate::tcp::congestion::Cc;
use crate::time::{serialization_time, Time, PS_PER_MS, PS_PER_S, PS_PER_US};
use crate::trace::{EventKind, RecordOptions};

fn us(x: f64) -> Time {
    Time((x * PS_PER_US as f64).round() as u64)
}

fn ms(x: f64) -> Time {
    Time((x * PS_PER_MS as f64).round() as u64)
}

/// A full-size data segment of `flow` starting at `seq`.
fn segment(flow: FlowId, seq: u64) -> Packet {
    Packet::new(flow, Kind::Data, 1500, 1460, seq, 0)
}

// ---- the paths a lean world takes --------------------------------------------------------

#[test]
fn the_lean_and_plain_paths_give_what_the_featured_paths_give_with_every_feature_off() {
    // FAST'08 collapsing at 16 servers (drops, timeouts, back-to-back arrivals at the
    // client's port), a 10 Gbps one-shot incast, two switches, random ties
    let specs = [
        ScenarioSpec { servers: 16, duration_ps: Some(300_000 * PS_PER_US), ..ScenarioSpec::default() },
        ScenarioSpec {
            servers: 64,
            sru_bytes: Some(1 << 20),
            buffer_bytes: 150_000,
            rate_bps: 10_000_000_000,
            rtt_ps: 40 * PS_PER_US,
            blocks: Some(1),
            ..ScenarioSpec::default()
        },
        ScenarioSpec {
            servers: 16,
            topology: TopologyKind::TwoSwitch,
            duration_ps: Some(300_000 * PS_PER_US),
            ..ScenarioSpec::default()
        },
        ScenarioSpec {
            servers: 16,
            tie_break: TieBreak::Random,
            duration_ps: Some(300_000 * PS_PER_US),
            ..ScenarioSpec::default()
        },
    ];
    for spec in specs {
        // (lean implies plain: a lean loop takes the plain ports' paths)
        let run = |plain: bool, lean: bool| {
            let mut h = Harness::new(spec.clone());
            assert!(h.w.net.is_plain(), "every feature of the ports is off");
            assert_eq!(h.w.lean, spec.topology == TopologyKind::Star, "every other feature is off (one switch)");
            h.w.net.force_plain(plain);
            h.w.lean = lean && h.w.lean;
            h.run();
            let (w, c) = (&h.w, h.counters());
            let totals = (w.events(), c.app_bytes, c.data_bytes_sent, c.data_bytes_dropped, w.net.switch_drops());
            let tcp = w.conns.sender_array_total(|s| [s.stats.timeouts, s.stats.retransmits, s.stats.fast_retransmits]);
            (totals, tcp, w.blocks_done(), w.cx.queue.peak(), w.now(), w.max_switch_occupancy())
        };
        let lean = run(true, true);
        assert!(lean.0 .4 > 0 && lean.1[0] > 0, "the scenario drops packets and times out: {spec:?}");
        assert_eq!(lean, run(true, false), "lean and plain: {spec:?}");
        assert_eq!(lean, run(false, false), "lean and featured: {spec:?}");
    }
}

#[test]
fn a_world_with_any_feature_of_a_part_is_not_lean() {
    let lean = |spec: ScenarioSpec| Harness::new(spec).w.lean;
    assert!(lean(ScenarioSpec { servers: 4, ..ScenarioSpec::default() }));
    // the fabric's, the connections' and the applications' features each take it off
    let two_switches = ScenarioSpec { servers: 4, topology: TopologyKind::TwoSwitch, ..ScenarioSpec::default() };
    let ecn = ScenarioSpec { servers: 4, cc: Cc::Dctcp, ecn_threshold_packets: Some(20), ..ScenarioSpec::default() };
    let jitter = ScenarioSpec { servers: 4, send_jitter_ps: 2 * PS_PER_US, ..ScenarioSpec::default() };
    let bulk = ScenarioSpec { servers: 4, victim: true, ..ScenarioSpec::default() };
    let ictcp = ScenarioSpec { servers: 4, mitigation: crate::scenario::Scheme::Ictcp, ..ScenarioSpec::default() };
    let shaper = ScenarioSpec { servers: 4, shaper_rate_bps: Some(100_000_000), ..ScenarioSpec::default() };
    let breakdown = ScenarioSpec { servers: 4, time_breakdown: true, ..ScenarioSpec::default() };
    for spec in [two_switches, ecn, jitter, bulk, ictcp, shaper, breakdown] {
        assert!(!lean(spec.clone()), "{spec:?}");
    }
}

// ---- links, ports and the tie rule --------------------------------------------------------

/// Server 0 writes two segments at 100 us: the first starts at once, the second waits in
/// its NIC and starts at 112 us, when the first has left. Server 1 writes one segment at
/// 112 us onto its idle NIC, in an event scheduled before server 0's first transmission
/// started (as an ACK arriving then would be). Both reach the switch at 112 + 12 + 25 us,
/// where the client's port has room for one.
fn race(tie_break: TieBreak, seed: u64) -> Harness {
    let spec = ScenarioSpec { servers: 2, buffer_packets: Some(1), tie_break, seed, ..ScenarioSpec::default() };
    let mut h = Harness::traced(spec);
    let mss = h.mss();
    h.write(us(112.0), 1, mss).write(us(100.0), 0, 2 * mss).run_until(us(500.0));
    h
}

#[test]
fn an_idle_nic_packet_beats_a_queued_one_to_a_full_port_as_in_ns3() {
    // ns-3: the queued packet starts in TransmitComplete (scheduled at 100 us); server 1's
    // send runs in an event scheduled before that, so its packet's arrival at the switch is
    // scheduled first and takes the last slot (peers/ns3/README.md)
    let h = race(TieBreak::Fifo, 1);
    assert_eq!(h.drops_at_client(), vec![(0, 1 + h.mss())], "server 0's second segment is dropped");
    // conservation: sent = delivered + dropped + in flight
    let c = h.counters();
    assert_eq!(c.data_bytes_sent, c.data_bytes_arrived + c.data_bytes_dropped + h.w.data_bytes_in_flight());
    assert_eq!(c.data_bytes_sent, 3 * h.mss());
}

#[test]
fn under_random_tie_breaking_either_packet_may_win_the_slot() {
    let winners: std::collections::BTreeSet<_> =
        (0..40).map(|seed| race(TieBreak::Random, seed).drops_at_client()).collect();
    assert!(winners.contains(&vec![(0, 1 + 1460)]) && winners.contains(&vec![(1, 1)]), "{winners:?}");
}

/// Each flow's segments sent once, in the order they reached the client's switch port
/// (a retransmitted sequence number is left out: it arrives twice).
fn first_sends_in_arrival_order(h: &Harness) -> std::collections::BTreeMap<FlowId, Vec<u64>> {
    let resent: std::collections::BTreeSet<(FlowId, u64)> =
        h.events(EventKind::Rtx).iter().map(|e| (e.flow, e.a)).collect();
    let mut arrivals: Vec<_> = h.events(EventKind::Enq).into_iter().chain(h.events(EventKind::Drop)).collect();
    arrivals.sort_by_key(|e| e.time); // stable: the trace's order within an instant
    let mut per_flow: std::collections::BTreeMap<FlowId, Vec<u64>> = Default::default();
    for e in arrivals.iter().filter(|e| !resent.contains(&(e.flow, e.a))) {
        per_flow.entry(e.flow).or_default().push(e.a);
    }
    per_flow
}

#[test]
fn send_jitter_keeps_a_hosts_packets_in_order_under_either_tie_rule() {
    // send_jitter holds a packet up to J and never lets it enter before the host's previous
    // one: at the same instant, so under tie_break=random the draws used to let it enter
    // first (a helper counted 981 of 7280 segments out of order at 2 servers, stop 41)
    for (tie_break, seed) in [(TieBreak::Fifo, 1), (TieBreak::Random, 1), (TieBreak::Random, 2), (TieBreak::Random, 3)] {
        let spec = ScenarioSpec { servers: 8, send_jitter_ps: 2 * PS_PER_US, tie_break, seed, blocks: Some(3),
                                  duration_ps: None, ..ScenarioSpec::default() };
        let mut h = Harness::traced(spec);
        h.run();
        let orders = first_sends_in_arrival_order(&h);
        assert!(orders.len() == 8 && orders.values().map(Vec::len).sum::<usize>() > 8 * 100, "{tie_break:?}: the blocks were sent");
        for (flow, seqs) in &orders {
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{tie_break:?} seed {seed}: flow {flow} reordered: {seqs:?}");
        }
    }
}

#[test]
fn a_packets_arrival_is_scheduled_when_its_transmission_starts_one_event_per_hop() {
    // one segment entering server 0's NIC at 10 us: it reaches the switch 12 + 25 us later,
    // where the idle client's port starts it at once (enqueued and dequeued at 47 us), and
    // the client 37 us after that; 2 hops, 2 arrival events, no link-free event
    let mut h = Harness::traced(ScenarioSpec { servers: 1, ..ScenarioSpec::default() });
    h.enter_nic(us(10.0), segment(0, 1));
    h.run_until(us(83.0));
    let at_port: Vec<Time> = h.events(EventKind::Enq).iter().chain(&h.events(EventKind::Deq)).map(|e| e.time).collect();
    assert_eq!(at_port, vec![us(47.0), us(47.0)]);
    assert_eq!(h.counters().data_bytes_arrived, 0, "not yet at 83 us");
    assert_eq!(h.w.events(), 2);
    let mut h = Harness::new(ScenarioSpec { servers: 1, ..ScenarioSpec::default() });
    h.enter_nic(us(10.0), segment(0, 1));
    h.run_until(us(84.0));
    assert_eq!(h.counters().data_bytes_arrived, 1460, "at 84 us");
}

#[test]
fn back_to_back_packets_wait_behind_one_another_and_leave_a_link_time_apart() {
    // three segments reaching the client's port at once: they leave it 12 us apart and reach
    // the client at 37, 49 and 61 us (a link-free event for each packet that waited)
    let mut h = Harness::new(ScenarioSpec { servers: 3, ..ScenarioSpec::default() });
    let nic = |i: u32| h.topo().nic(i);
    let vias = [nic(0), nic(1), nic(2)];
    for (i, via) in vias.into_iter().enumerate() {
        h.reach_switch(Time::ZERO, via, segment(i as FlowId, 1));
    }
    h.run_until(us(60.9));
    assert_eq!(h.counters().data_bytes_arrived, 2 * 1460);
    let to_client = h.net().bottleneck();
    assert_eq!(h.port(to_client).sent_packets, 3);
    assert_eq!(h.w.events(), 3 + 2 + 2, "3 arrivals at the switch, 2 link-free, 2 of 3 arrivals at the client");
}

#[test]
fn a_port_holds_21_full_packets_of_its_32_kib_and_drops_the_rest() {
    // bytes admission, the one on the wire included: 21 x 1500 = 31,500 <= 32,768 < 22 x 1500
    let mut h = Harness::new(ScenarioSpec { servers: 1, ..ScenarioSpec::default() });
    let via = h.topo().nic(0);
    for k in 0..30 {
        h.reach_switch(Time::ZERO, via, segment(0, 1 + 1460 * k));
    }
    h.drop_where(|_, _| false); // (a rule that drops nothing: the port's own admission decides)
    h.run_until(Time(1));
    let port = h.port(h.net().bottleneck());
    assert_eq!((port.drops, port.max_occupancy, port.max_packets), (9, 31_500, 21));
    assert_eq!(h.counters().data_bytes_dropped, 9 * 1460);
}

#[test]
fn under_ns2_rules_a_short_segment_is_a_whole_packet_on_the_wire() {
    // ns-2's TcpAgent::output sends packetSize_ bytes whatever the application wrote: 100 B
    // of payload and 40 B of headers cross the server's link as 1500 B, 1360 B more than
    // under RFC rules, and the switch forwards it once its last bit arrived
    let reaches_port = |tcp_rules| {
        let mut h = Harness::traced(ScenarioSpec { servers: 1, tcp_rules, ..ScenarioSpec::default() });
        h.write(us(100.0), 0, 100).run_until(us(500.0));
        h.events(EventKind::Deq)[0].time
    };
    let bit = serialization_time(1, 1_000_000_000);
    assert_eq!(reaches_port(TcpRules::Ns2) - reaches_port(TcpRules::Rfc), Time(1360 * bit.0));
}

#[test]
fn a_forward_packet_goes_to_its_flows_receiver_and_a_reverse_one_to_its_sender() {
    // flow 1 joins server 1 and the client: its ACK, reaching the switch from the client's
    // NIC, leaves on the port towards server 1; its data, from server 1's NIC, on the port
    // towards the client
    let mut h = Harness::new(ScenarioSpec { servers: 2, ..ScenarioSpec::default() });
    let (client_nic, server1_nic) = (h.topo().nic(2), h.topo().nic(1));
    h.reach_switch(Time::ZERO, client_nic, Packet::new(1, Kind::Ack, 40, 0, 0, 1));
    h.reach_switch(Time::ZERO, server1_nic, segment(1, 1));
    h.run_until(Time(1));
    let (to_client, to_0, to_1) = (h.downlink(2), h.downlink(0), h.downlink(1));
    let sent = |p: PortId| h.port(p).sent_packets;
    assert_eq!((sent(to_client), sent(to_0), sent(to_1)), (1, 0, 1));
}

// ---- a token-bucket shaper (Linux tbf) at the client's port ------------------------------------

/// The namespace testbed's bottleneck: 100 Mbit/s released by a shaper of `burst` bytes in
/// front of 4 Gbit/s links (veths, measured: docs/testbed.md), an 8 KiB queue; frames of
/// 1514 B as tbf counts them (1448 B of payload and 66 B of headers).
fn shaped(servers: u32, burst: u64) -> Harness {
    Harness::traced(shaped_spec(servers, burst))
}

fn shaped_spec(servers: u32, burst: u64) -> ScenarioSpec {
    ScenarioSpec {
        servers,
        rate_bps: 4_000_000_000,
        shaper_rate_bps: Some(100_000_000),
        shaper_burst_bytes: Some(burst),
        buffer_bytes: 8192,
        mss_bytes: 1448,
        header_bytes: 66,
        ..ScenarioSpec::default()
    }
}

fn frame(flow: FlowId, k: u64) -> Packet {
    Packet::new(flow, Kind::Data, 1514, 1448, 1 + 1448 * k, 0)
}

#[test]
fn a_shaper_releases_its_bucket_at_once_then_one_frame_per_frame_time_as_tbf() {
    // tbf burst 4 frames: of 9 frames reaching the port at once, 4 leave at once (one after
    // another at the link's 4 Gbit/s: 3.028 us each), the other 5 wait in the 8 KiB queue
    // and leave as the bucket refills, one 1514-byte frame time (121.12 us) apart
    // (they reach it one link time apart, as from a server's 4 Gbit/s NIC)
    let mut h = shaped(1, 4 * 1514);
    let via = h.topo().nic(0);
    let (wire, token) = (serialization_time(1514, 4_000_000_000), serialization_time(1514, 100_000_000));
    assert_eq!((wire, token), (Time(3_028_000), Time(121_120_000)));
    for k in 0..9 {
        h.reach_switch(Time(k * wire.0), via, frame(0, k));
    }
    h.run_until(ms(2.0));
    let deq: Vec<Time> = h.events(EventKind::Deq).iter().map(|e| e.time).collect();
    let expected: Vec<Time> = (0..4).map(|k| Time(k * wire.0)).chain((1..=5).map(|k| Time(k * token.0))).collect();
    assert_eq!(deq, expected);
    assert_eq!(h.port(h.net().bottleneck()).drops, 0);
}

#[test]
fn a_shapers_queue_counts_waiting_bytes_not_the_frame_on_the_wire() {
    // tbf's bfifo with limit 8192 holds five 1514-byte frames waiting; with a one-frame
    // bucket the first of 8 frames (one link time apart) leaves at once, five wait and the
    // seventh and eighth are dropped, where a port counting the frame on the wire (8 KiB:
    // 5 frames in all) drops three of 8 frames offered at once
    let mut h = shaped(1, 1514);
    let via = h.topo().nic(0);
    let wire = serialization_time(1514, 4_000_000_000);
    for k in 0..8 {
        h.reach_switch(Time(k * wire.0), via, frame(0, k));
    }
    h.run_until(us(30.0));
    assert_eq!(h.drops_at_client(), vec![(0, 1 + 1448 * 6), (0, 1 + 1448 * 7)]);
    let mut h = Harness::traced(ScenarioSpec { servers: 1, buffer_bytes: 8192, mss_bytes: 1448, header_bytes: 66, ..ScenarioSpec::default() });
    let via = h.topo().nic(0);
    for k in 0..8 {
        h.reach_switch(Time::ZERO, via, frame(0, k));
    }
    h.run_until(Time(1));
    assert_eq!(h.drops_at_client().len(), 3);
}

#[test]
fn a_shaper_refills_while_idle_and_a_late_frame_finds_tokens_or_waits_for_them() {
    // one-frame bucket: a frame at 0 leaves at once; one at 60.56 us (half a frame time)
    // waits until 121.12 us; one at 1 ms finds a full bucket and leaves at once
    let mut h = shaped(1, 1514);
    let via = h.topo().nic(0);
    h.reach_switch(Time::ZERO, via, frame(0, 0));
    h.reach_switch(Time(60_560_000), via, frame(0, 1));
    h.reach_switch(ms(1.0), via, frame(0, 2));
    h.run_until(ms(2.0));
    let deq: Vec<Time> = h.events(EventKind::Deq).iter().map(|e| e.time).collect();
    assert_eq!(deq, vec![Time::ZERO, Time(121_120_000), ms(1.0)]);
}

#[test]
fn a_shaped_run_moves_payload_at_the_shapers_rate_not_the_links() {
    // one server, 20 blocks of 256 KiB, a queue larger than its 20-packet window (no loss):
    // goodput below 1448/1514 of 100 Mbit/s (95.6), and above 90 (a request's round trip
    // per block idles the link), where the 4 Gbit/s links alone would give 40 times that
    let spec = ScenarioSpec { blocks: Some(20), buffer_bytes: 256 * 1024, ..shaped_spec(1, 4 * 1514) };
    let mut h = Harness::new(spec);
    h.run();
    let (bytes, t) = (h.counters().app_bytes, h.w.cx.now);
    let mbps = bytes as f64 * 8.0 / t.as_secs_f64() / 1e6;
    assert!(mbps > 90.0 && mbps < 95.7, "{mbps}");
}

// ---- the connections ---------------------------------------------------------------------

#[test]
fn a_handshake_takes_one_round_trip_before_the_request_and_the_block_arrives_one_later() {
    // SYN at 0: 40 B to the switch (25.32 us) and on to the server (50.64 us); its SYN-ACK
    // back at the client at 101.28 us; the 64 B request reaches the server at 152.304 us,
    // whose 1500 B segment reaches the client 2 x 37 us later: the block takes 226.304 us
    let spec =
        ScenarioSpec { servers: 1, handshake: true, sru_bytes: Some(1460), blocks: Some(1), ..ScenarioSpec::default() };
    let mut h = Harness::traced(spec.clone());
    h.run();
    let sent = h.events(EventKind::Tx);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].time, us(152.304), "the server writes when the request arrives");
    let times = &h.w.apps.sync_reads().unwrap().clients[0].block_times;
    assert_eq!(times, &vec![us(226.304).0]);
    assert_eq!((h.conn(0).conn, h.conn(0).server_conn), (1, 1));
    // the server's first RTT sample is the SYN -> SYN-ACK time (RFC 6298 §2.2), before the
    // data's ACK gives the next (at 276.944 us)
    let mut h = Harness::new(spec);
    h.start().run_until(us(276.0));
    assert_eq!(h.conn(0).sender.rto.srtt, Some(us(101.28)));
}

#[test]
fn a_lost_syn_ack_is_recovered_when_the_syn_timer_sends_the_syn_again() {
    // the first SYN-ACK dies at the switch; the SYN goes again at its 3 s timeout, and the
    // block completes a round trip and a request's later: 3 s + 226.304 us
    let spec =
        ScenarioSpec { servers: 1, handshake: true, sru_bytes: Some(1460), blocks: Some(1), ..ScenarioSpec::default() };
    let mut h = Harness::new(spec.clone());
    h.drop_nth(0, Kind::SynAck, 0).run();
    assert_eq!(h.counters().syn_timeouts, 1);
    let times = &h.w.apps.sync_reads().unwrap().clients[0].block_times;
    assert_eq!(times, &vec![(Time(3 * PS_PER_S) + us(226.304)).0]);
    let mut h = Harness::new(spec);
    h.drop_nth(0, Kind::SynAck, 0).start().run_until(Time(3 * PS_PER_S) + us(276.0));
    assert_eq!(h.conn(0).sender.rto.srtt, Some(us(101.28)), "the sample is taken from the SYN sent again");
}

#[test]
fn a_syn_of_a_new_connection_replaces_the_sender_and_packets_of_the_old_one_are_stale() {
    // two blocks, a connection each: the second block's SYN (conn 2) makes the server a new
    // sender, and a data segment of connection 1 arriving after that is ignored
    let spec =
        ScenarioSpec { servers: 1, handshake: true, sru_bytes: Some(1460), blocks: Some(2), ..ScenarioSpec::default() };
    let mut h = Harness::new(spec);
    // block 1 ends at 226.304 us; block 2's SYN-ACK reaches the client at 327.584 us
    let mut old = segment(0, 1);
    old.conn = 1;
    h.reach_host(us(400.0), old);
    h.run();
    assert_eq!((h.conn(0).conn, h.conn(0).server_conn), (2, 2));
    assert_eq!(h.counters().stale_packets, 1);
    assert_eq!(h.counters().app_bytes, 2 * 1460, "the stale segment delivered nothing");
}

#[test]
fn three_duplicate_acks_after_one_lost_segment_bring_one_fast_retransmit_and_no_timeout() {
    // 20 segments, the third lost at the switch: the later ones' ACKs are duplicates, and
    // the third (limited transmit sends a segment on each of the first two) retransmits it
    let spec = ScenarioSpec { servers: 1, sru_bytes: Some(20 * 1460), blocks: Some(1), ..ScenarioSpec::default() };
    let mut h = Harness::new(spec);
    h.drop_nth(0, Kind::Data, 2).run();
    let s = &h.conn(0).sender.stats;
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 1));
    let c = h.counters();
    assert_eq!((c.data_bytes_dropped, c.app_bytes), (1460, 20 * 1460));
    assert_eq!(c.data_bytes_sent, c.data_bytes_arrived + c.data_bytes_dropped + h.w.data_bytes_in_flight());
}

#[test]
fn a_lost_first_window_is_sent_again_when_the_timer_expires_rto_min_after_it_left() {
    // the request reaches the server at 51.024 us; its 2-segment initial window dies at the
    // switch; RTOmin 200 ms rules the 303.84 us estimate (srtt 101.28 us + 4 x 50.64 us): the
    // first segment goes again at 200.051024 ms (RFC 6298 §5, FAST'08 §5.1.1)
    let spec = ScenarioSpec { servers: 1, sru_bytes: Some(4 * 1460), blocks: Some(1), ..ScenarioSpec::default() };
    let mut h = Harness::traced(spec);
    let mut first_two = 0;
    h.drop_where(move |p, _| {
        first_two += (p.kind == Kind::Data) as u32;
        p.kind == Kind::Data && first_two <= 2
    });
    h.run();
    let again = h.events(EventKind::Rtx);
    assert_eq!((again[0].time, again[0].a), (ms(200.051024), 1));
    assert_eq!(h.conn(0).sender.stats.timeouts, 1);
    assert_eq!(h.counters().app_bytes, 4 * 1460);
}

#[test]
fn a_lone_segment_is_acknowledged_when_the_delayed_ack_timer_expires() {
    // RFC 1122 §4.2.3.2: one segment, no second to ACK it with: the ACK waits 40 ms. The
    // segment reaches the client at 125.024 us; its ACK reaches the server 50.64 us after
    // 40.125024 ms, and the run (blocks mode) ends there
    let spec = ScenarioSpec {
        servers: 1,
        sru_bytes: Some(1460),
        blocks: Some(1),
        delayed_ack_ps: 40 * PS_PER_MS,
        ..ScenarioSpec::default()
    };
    let mut h = Harness::traced(spec);
    h.run();
    assert_eq!(h.events(EventKind::Ack).last().map(|e| e.time), Some(ms(40.175664)));
    assert_eq!(h.conn(0).receiver.stats.delayed_ack_timeouts, 1);
    assert_eq!(h.w.apps.sync_reads().unwrap().clients[0].block_times, vec![us(125.024).0]);
}

#[test]
fn a_server_answers_after_one_of_the_measured_think_times() {
    // one server, one segment per block, nothing lost: each block takes what it takes
    // without a think time (125.024 us, then 125.344 us) plus the think time drawn, one of
    // the measured values
    let spec = |think: Option<Vec<u64>>| ScenarioSpec {
        servers: 1,
        sru_bytes: Some(1460),
        blocks: Some(40),
        think_times_ps: think,
        ..ScenarioSpec::default()
    };
    let block_times = |think| {
        let mut h = Harness::new(spec(think));
        h.run();
        h.w.apps.sync_reads().unwrap().clients[0].block_times.clone()
    };
    let base = block_times(None);
    let times = block_times(Some(vec![us(50.0).0, us(300.0).0]));
    let waited: std::collections::BTreeSet<u64> = times.iter().zip(&base).map(|(&t, &b)| t - b).collect();
    // both values drawn in 40 blocks (each misses all 40 with probability 2^-40), nothing else
    assert_eq!(waited, [us(50.0).0, us(300.0).0].into_iter().collect());
}

#[test]
fn a_dropped_request_is_sent_again_with_the_ack_window_and_ts_echo_of_then() {
    // flow 0's client sends a request carrying ACK 1, TS echo 0; an RTOmin later (the drop
    // path's NicEnter) it has received 3000 B stamped at 150 us: the resent request carries
    // those, as any segment TCP sends then would (RFC 7323 §4.3)
    let mut h = Harness::new(ScenarioSpec { servers: 2, timestamps: true, ..ScenarioSpec::default() });
    let fl = h.conn(0);
    let mut pkt = Packet::new(0, Kind::Request, 64, crate::host::REQUEST_PAYLOAD_BYTES, 1000, fl.receiver.ack_number());
    (pkt.conn, pkt.ts, pkt.wnd) = (fl.conn, fl.receiver.ts_echo(), 0);
    let id = h.w.cx.pool.alloc(pkt);
    let now = Time(200 * PS_PER_MS);
    let r = &mut h.w.conns.get_mut(0).receiver;
    r.on_segment(now, 1, 1500);
    r.note_timestamp(1, us(150.0));
    r.on_ack_sent(); // the ACK of the first segment went out
    r.on_segment(now, 1501, 1500);
    assert_eq!((h.packet(id).ack, h.packet(id).ts), (1, Time::ZERO));
    h.w.conns.refresh_request(&mut h.w.cx, id);
    let p = h.packet(id);
    assert_eq!((p.ack, p.ts), (3001, us(150.0)));
    assert_eq!(p.wnd as u64, h.conn(0).receiver.window.min(u32::MAX as u64), "set, not left at 0");
}

// ---- ECN and DCTCP ------------------------------------------------------------------------

/// Four ECN-capable segments reaching the client's port together under DCTCP with K = 2
/// (or `ect` off), run to 80 us (before any ACK is back at the server), capturing what the
/// client sends.
fn marked(ect: bool) -> Harness {
    let spec = ScenarioSpec {
        servers: 1,
        cc: Cc::Dctcp,
        tcp: crate::TcpVariant::Sack,
        ecn_threshold_packets: Some(2),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::recording(spec, RecordOptions { capture_limit: 100, ..Default::default() });
    let via = h.topo().nic(0);
    for k in 0..4 {
        let mut p = segment(0, 1 + 1460 * k);
        if ect {
            p.ecn = ECT;
        }
        h.reach_switch(Time::ZERO, via, p);
    }
    h.run_until(us(80.0));
    h
}

#[test]
fn an_ect_packet_finding_k_packets_held_is_marked_ce_and_its_ack_echoes_it() {
    // RFC 8257 §3.1 on the instantaneous queue: the first two find 0 and 1 packets held, the
    // last two find 2 and 3 (>= K = 2): marked. The receiver's two-state machine (§3.2)
    // echoes ECE on the ACKs of the marked segments and only those (no delayed ACK)
    let h = marked(true);
    assert_eq!(h.port(h.net().bottleneck()).ce_marks, 2);
    let acks: Vec<(u64, bool)> =
        h.w.cx
            .recorder
            .records
            .capture
            .iter()
            .filter(|c| c.packet.kind == Kind::Ack)
            .map(|c| (c.packet.ack, c.packet.has(ECE)))
            .collect();
    assert_eq!(acks, vec![(1461, false), (2921, false), (4381, true), (5841, true)]);
}

#[test]
fn a_packet_that_is_not_ect_is_never_marked() {
    let h = marked(false);
    assert_eq!(h.port(h.net().bottleneck()).ce_marks, 0);
    assert!(h.w.cx.recorder.records.capture.iter().all(|c| !c.packet.has(CE) && !c.packet.has(ECE)));
}

#[test]
fn under_dctcp_every_data_segment_a_sender_sends_is_ect_and_its_acks_are_not() {
    let spec = ScenarioSpec {
        servers: 1,
        cc: Cc::Dctcp,
        tcp: crate::TcpVariant::Sack,
        sru_bytes: Some(10 * 1460),
        blocks: Some(1),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::recording(spec, RecordOptions { capture_limit: 100, ..Default::default() });
    h.run();
    let captured = &h.w.cx.recorder.records.capture;
    assert!(captured.iter().any(|c| c.packet.kind == Kind::Data));
    // RFC 3168 §6.1.1: data segments only, not pure ACKs or SYNs
    assert!(captured.iter().all(|c| c.packet.has(ECT) == (c.packet.kind == Kind::Data)));
}

// ---- ICTCP, as the client's observer --------------------------------------------------------

#[test]
fn under_ictcp_each_connection_opens_with_two_mss_and_windows_change_a_segment_at_a_slot_end() {
    // Wu et al. §4 as Osada et al. run it (tcp::ictcp): a new connection starts at 2 MSS; the
    // client changes a window only when a slot (2 x base RTT = 202.56 us) ends, by one MSS
    let spec = ScenarioSpec {
        servers: 4,
        mitigation: crate::scenario::Scheme::Ictcp,
        sru_bytes: Some(64 * 1460),
        blocks: Some(2),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::recording(spec, RecordOptions { capture_limit: 1 << 16, ..Default::default() });
    h.run();
    let sent: Vec<(Time, FlowId, Kind, u64)> =
        h.w.cx
            .recorder
            .records
            .capture
            .iter()
            .filter(|c| !c.packet.kind.to_client())
            .map(|c| (c.time, c.packet.flow, c.packet.kind, c.packet.wnd as u64))
            .collect();
    let requests: Vec<u64> = sent.iter().filter(|s| s.2 == Kind::Request).map(|s| s.3).collect();
    assert_eq!(requests, vec![2 * 1460; 8], "two blocks of four requests, each at 2 MSS");
    let slot = us(202.56);
    let mut window = [2 * 1460u64; 4];
    let mut changes = 0;
    for &(t, f, kind, wnd) in &sent {
        if kind == Kind::Request {
            window[f as usize] = wnd; // a block's request opens at 2 MSS (above)
            continue;
        }
        let before = window[f as usize];
        if wnd != before {
            assert_eq!(t.0 % slot.0, 0, "a window changes at the end of a slot: {t:?}");
            assert_eq!(wnd.abs_diff(before), 1460, "by one MSS");
            assert!(wnd >= 2 * 1460);
            window[f as usize] = wnd;
            changes += 1;
        }
    }
    assert!(changes > 0, "some window grew");
}

// ---- applications ---------------------------------------------------------------------------

#[test]
fn each_udp_source_sends_a_datagram_every_interval_from_its_random_phase() {
    // 2 servers, 10 % of 1 Gbps: 50 Mbps each, a 1500 B datagram every 240 us; in 10 ms a
    // source sends floor((10 ms - phase) / 240 us) + 1 = 41 or 42
    for seed in 1..6 {
        let duration_ps = Some(10 * PS_PER_MS);
        let spec = ScenarioSpec { servers: 2, udp_fraction: 0.1, duration_ps, seed, ..ScenarioSpec::default() };
        let mut h = Harness::new(spec);
        h.run();
        let sent = h.w.apps.udp().unwrap().sent;
        assert!((82..=84).contains(&sent), "seed {seed}: {sent}");
    }
}

#[test]
fn a_background_bulk_flow_counts_its_own_bytes_and_drops_and_not_the_measured_totals() {
    let spec = ScenarioSpec { servers: 8, victim: true, duration_ps: Some(200 * PS_PER_MS), ..ScenarioSpec::default() };
    let mut h = Harness::new(spec);
    h.run();
    let w = &h.w;
    let bulk = w.apps.bulk().unwrap();
    let measured: u64 = w.client_app_bytes().iter().sum();
    assert!(bulk.victim && bulk.flows[0].app_bytes > 0);
    assert_eq!(h.counters().app_bytes, measured, "the bulk flow's bytes are its own");
    let c = h.counters();
    assert_eq!(c.data_bytes_sent, c.data_bytes_arrived + c.data_bytes_dropped + w.data_bytes_in_flight());
    // its flow is the last, between the two hosts after the client
    let f = bulk.flows[0].flow;
    assert_eq!((f, h.conn(f).hosts, h.conn(f).measured), (8, (9, 10), false));
}

#[test]
fn two_clients_of_one_server_share_its_link_evenly() {
    // One server, two clients: both connections leave by the server's NIC, each client has
    // its own switch port, so nothing drops and the NIC is the bottleneck. Its payload rate
    // is 1 Gbps x 1460 / 1500 = 973.33 Mbps; the two flows, both capped by the same
    // 20-packet window and served in FIFO order, get half each. The NIC idles only at the
    // start (the requests' one-way trip): within 0.1 %.
    let spec = ScenarioSpec { servers: 1, clients: 2, duration_ps: Some(PS_PER_S), ..ScenarioSpec::default() };
    let r = crate::simulate(&spec.validate().unwrap());
    let cap = 1000.0 * 1460.0 / 1500.0;
    assert_eq!(r.drops, 0);
    assert!(r.goodput_mbps <= cap && r.goodput_mbps > 0.999 * cap, "{}", r.goodput_mbps);
    let (least, most) = (r.client_goodput_min_mbps.unwrap(), r.client_goodput_max_mbps.unwrap());
    // the two clients differ by at most the block one of them has half read: 1 ms of one
    // flow's share at most over the second (measured: 0.03 Mbps)
    assert!((most - least) < 0.001 * cap / 2.0 && (least + most - r.goodput_mbps).abs() < 1e-6, "{least} {most}");
    assert_eq!(r.bytes_sent, r.bytes_delivered + r.bytes_dropped + r.bytes_in_flight);
    // one client alone on the same server: the NIC idles a request round trip per block
    let alone = ScenarioSpec { clients: 1, ..spec };
    assert!(crate::simulate(&alone.validate().unwrap()).goodput_mbps < 0.96 * cap);
}

#[test]
fn each_client_reads_its_own_blocks_and_the_run_ends_when_the_last_is_read() {
    // blocks mode: every client reads 3 blocks from every server; flows c * 4 + i
    let mut h = Harness::new(ScenarioSpec { servers: 4, clients: 3, blocks: Some(3), ..ScenarioSpec::default() });
    h.run();
    let w = &h.w;
    assert_eq!(w.apps.sync_reads().unwrap().clients.iter().map(|c| c.blocks_done).collect::<Vec<_>>(), vec![3, 3, 3]);
    assert_eq!(w.client_app_bytes(), vec![3 * 4 * 256 * 1024; 3]);
    assert_eq!((w.net.ends()[5], w.net.ends()[11]), ((1, 5), (3, 6)), "server 1 -> client 1, server 3 -> client 2");
    assert_eq!(w.data_bytes_in_flight(), 0);
}

#[test]
fn a_request_dropped_on_a_crowded_trunk_is_sent_again_and_its_block_completes() {
    // 8 clients ask 16 far servers at once over one trunk holding 4 packets: requests drop
    // there; each comes back one RTOmin (1 ms) later and every block completes
    let spec = ScenarioSpec {
        servers: 32,
        clients: 8,
        topology: TopologyKind::TwoSwitch,
        buffer_packets: Some(4),
        sru_bytes: Some(4096),
        rto_min_ps: Some(PS_PER_MS),
        blocks: Some(3),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    h.run();
    assert!(h.counters().requests_dropped > 0);
    assert_eq!(h.w.blocks_done(), 8 * 3);
    assert_eq!(h.counters().app_bytes, 8 * 3 * 32 * 4096);
}

/// A Riak cluster of 4 nodes with quorum `q`, replies of one full segment, one get from
/// node 0 at time 0 (the next ones a thousand seconds away), run to `end`.
fn one_get(q: u32, end: Time, drop_first_request: bool) -> Harness {
    get_of(one_get_spec(q), end, drop_first_request)
}

fn one_get_spec(q: u32) -> ScenarioSpec {
    ScenarioSpec {
        servers: 4,
        workload: Workload::Riak,
        read_quorum: q,
        reply_bytes: 1460,
        get_rate: 0.001,
        ..ScenarioSpec::default()
    }
}

/// [`one_get`] of any spec.
fn get_of(spec: ScenarioSpec, end: Time, drop_first_request: bool) -> Harness {
    let mut h = Harness::new(spec);
    if drop_first_request {
        h.drop_where({
            let mut dropped = false;
            move |p, _| {
                let first = p.kind == Kind::Request && !dropped;
                dropped |= first;
                first
            }
        });
    }
    h.at(Time::ZERO, Event::App { timer: AppTimer { app: 0, kind: 0 }.byte(), arg: 0 });
    h.run_until(end);
    h
}

fn gets(h: &Harness) -> &RiakGets {
    h.w.riak_gets().unwrap()
}

#[test]
fn a_riak_get_completes_when_its_quorum_th_reply_has_arrived() {
    // 1 Gbps, 25 us links. Node 0's three 64 B requests leave its NIC back to back (0.512 us
    // each) and reach replica k at 50.512 + 0.512 (k + 1) us. Each writes one 1500 B segment
    // (12 us): at the switch 37 us later, 88.024, 88.536 and 89.048 us. Node 0's port sends
    // them one after another: they land 12 + 25 us after each starts, at 125.024, 137.024 and
    // 149.024 us. The get completes at its q-th.
    for (q, at) in [(1, 125.024), (2, 137.024), (3, 149.024)] {
        let h = one_get(q, us(500.0), false);
        let g = gets(&h);
        assert_eq!((g.issued, g.completed), (1, 1));
        assert_eq!(g.node_bytes_received, vec![3 * 1460, 0, 0, 0], "every reply arrives, quorum or not");
        assert_eq!(g.gets_held(), 0, "all three replies arrived: the get is retired");
        assert_eq!(Time(g.latencies.max().unwrap()), us(at), "quorum {q}");
    }
}

#[test]
fn a_riak_request_dropped_at_the_switch_comes_again_one_rto_min_later_and_its_reply_arrives() {
    // the first request dies at the switch at 25.512 us; the other two are answered as above
    // but a request later (their replies land at 125.536 and 137.536 us: the quorum of 2);
    // the first enters node 0's NIC again at 200.025512 ms and its reply arrives after it
    let h = one_get(2, us(500.0), true);
    let g = gets(&h);
    assert_eq!(h.counters().requests_dropped, 1);
    assert_eq!((g.completed, Time(g.latencies.max().unwrap())), (1, us(137.536)));
    assert_eq!(g.node_bytes_received[0], 2 * 1460, "two replies by 500 us");
    let h = one_get(2, ms(201.0), true);
    assert_eq!(gets(&h).node_bytes_received[0], 3 * 1460, "the third once its request came again");
    assert_eq!(gets(&h).gets_held(), 0);
}

/// Three Riak nodes over Erlang distribution (or one connection per pair), every get asking
/// both others for a 100,000 B reply and waiting for both; ports of 1 MiB so nothing drops.
/// Gets start where `gets` says (node, instant); the next ones are a thousand seconds away.
fn three_nodes(transport: RiakTransport, busy_limit: u64, gets: &[(u32, Time)], end: Time) -> Harness {
    let spec = ScenarioSpec {
        servers: 3,
        workload: Workload::Riak,
        replicas: 2,
        read_quorum: 2,
        reply_bytes: 100_000,
        get_rate: 0.001,
        buffer_bytes: 1 << 20,
        riak_transport: transport,
        dist_buf_busy_limit_bytes: busy_limit,
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    for &(node, at) in gets {
        h.at(at, Event::App { timer: AppTimer { app: 0, kind: 0 }.byte(), arg: node });
    }
    h.run_until(end);
    h
}

/// In-order bytes delivered on the flow from host `a` to host `b` (0 if there is none).
fn delivered_between(h: &Harness, a: u32, b: u32) -> u64 {
    let f = h.net().ends().iter().position(|&e| e == (a, b));
    f.map_or(0, |f| h.w.conns.delivered(f as FlowId))
}

const MIB: u64 = 1 << 20;

#[test]
fn over_erlang_distribution_a_request_waits_behind_the_replies_ahead_of_it_on_the_same_connection() {
    // Node 0's get at 0: nodes 1 and 2 each write 100,000 B to node 0 from ~51 us, and node
    // 0's port takes both, ~1.6 ms. Node 1's get at 100 us asks node 0 on the same stream
    // node 1's reply is on ("a single TCP connection that carries all Erlang messages between
    // A and B", 003_a133663d5dbcfa75.txt): node 0 reads it only after that reply. At 1 ms
    // node 0 has not answered (flow 0 -> 1 has delivered only node 0's own 24 B request);
    // with a connection per ordered pair the request travels the reply connection's
    // reverse direction and node 0's reply is arriving by then.
    let starts = [(0, Time::ZERO), (1, us(100.0))];
    let dist = three_nodes(RiakTransport::ErlangDist, MIB, &starts, ms(1.0));
    assert_eq!(delivered_between(&dist, 0, 1), 24, "only node 0's request to node 1");
    let per_pair = three_nodes(RiakTransport::PerPair, MIB, &starts, ms(1.0));
    assert!(delivered_between(&per_pair, 0, 1) > 0, "node 0's reply on its own connection");
    // once node 1's reply is in, node 0 reads the request and answers: both gets complete
    let dist = three_nodes(RiakTransport::ErlangDist, MIB, &starts, ms(10.0));
    assert_eq!(delivered_between(&dist, 0, 1), 24 + 100_000);
    assert_eq!((gets(&dist).issued, gets(&dist).completed), (2, 2));
    assert_eq!(dist.w.apps.erlang_dist().unwrap().busy_dist_port, 0, "1 MiB is never reached here");
    // one flow per direction of each node pair: requests and replies share them
    let ends: std::collections::BTreeSet<_> = dist.net().ends().iter().copied().collect();
    assert_eq!(ends.len(), 6);
    assert_eq!(dist.counters().requests_dropped, 0);
}

#[test]
fn a_replica_suspended_on_a_busy_connection_stops_answering_every_other_node() {
    // Gets from nodes 0 and 1 at 0: node 2 reads both requests at ~51 us and answers the
    // first; with a 1 KiB busy limit its 100,000 B reply leaves that connection busy, and its
    // process is suspended ("P cannot process any queries from the other 10 machines",
    // 003_a133663d5dbcfa75.txt) until the reply is acknowledged, ~0.9-1.7 ms later: at 600 us
    // one of node 2's two connections has delivered nothing. With Erlang's default 1 MiB both
    // replies are under way by then.
    let starts = [(0, Time::ZERO), (1, Time::ZERO)];
    let busy = three_nodes(RiakTransport::ErlangDist, 1024, &starts, us(600.0));
    let (to0, to1) = (delivered_between(&busy, 2, 0), delivered_between(&busy, 2, 1));
    assert_eq!(to0.min(to1), 0, "{to0} {to1}");
    assert!(busy.w.apps.erlang_dist().unwrap().busy_dist_port > 0);
    let free = three_nodes(RiakTransport::ErlangDist, MIB, &starts, us(600.0));
    assert!(delivered_between(&free, 2, 0) > 0 && delivered_between(&free, 2, 1) > 0);
    // suspended, not lost: every reply arrives once the connection drains
    let busy = three_nodes(RiakTransport::ErlangDist, 1024, &starts, ms(20.0));
    assert_eq!((gets(&busy).completed, gets(&busy).replies_delivered), (2, 4));
}

#[test]
fn every_timeout_of_the_collapse_is_traced_to_an_earlier_drop_of_its_flow_where_several_senders_waited() {
    // FAST'08's collapse (16 servers, 32 KiB, RTOmin 200 ms): the ground truth of issue 26
    let spec = ScenarioSpec { servers: 16, duration_ps: Some(PS_PER_S), ..ScenarioSpec::default() };
    let mut h = Harness::recording(spec, RecordOptions { losses: true, ..Default::default() });
    h.run();
    let timeouts_counted: u64 = h.w.conns.sender_total(|s| s.stats.timeouts);
    let rec = h.w.take_records();
    assert!(timeouts_counted > 0);
    assert_eq!(rec.timeouts.len() as u64, timeouts_counted, "one row per timeout");
    assert_eq!(rec.losses.len() as u64, h.w.net.switch_drops(), "every drop is data here, each one row");
    let bottleneck = h.w.net.bottleneck();
    for t in &rec.timeouts {
        assert_eq!(t.receiver, 16, "the client waits");
        let l = rec.losses[t.loss.expect("every timeout of the collapse follows a drop of its flow") as usize];
        assert!(l.flow == t.flow && l.time < t.time && l.port == bottleneck, "{l:?} {t:?}");
        assert!((1..=16).contains(&l.queued_senders));
    }
    // the synchronized answers meet in the client's queue
    assert!(rec.timeouts.iter().all(|t| rec.losses[t.loss.unwrap() as usize].queued_senders >= 2));
}

#[test]
fn the_ground_truth_changes_no_result() {
    let spec = ScenarioSpec { servers: 16, duration_ps: Some(PS_PER_S / 2), ..ScenarioSpec::default() };
    let sc = spec.validate().unwrap();
    let plain = crate::simulate(&sc);
    let (with, _) = crate::simulate_recording(&sc, &RecordOptions { losses: true, ..Default::default() });
    assert_eq!((plain.timeouts, plain.drops, plain.events, plain.app_bytes), (with.timeouts, with.drops, with.events, with.app_bytes));
}

#[test]
fn paced_bulk_flows_deliver_at_their_rate_and_backlogged_ones_fill_the_link() {
    // 4 flows of 100 Mbit/s into the client beside 2 idle-ish servers' reads: each writes a
    // 1460 B segment every 116.8 us; over 0.5 s each delivers 0.5 s x 100 Mbit/s = 6.25 MB,
    // less at most one interval's segment (the random phase) and what is in flight (well
    // under a window: 20 x 1460 B), so within 1 %
    let spec = ScenarioSpec {
        servers: 4,
        sru_bytes: Some(1460),
        response_jitter_ps: PS_PER_S,
        bulk_flows: 4,
        bulk_rate_bps: Some(100_000_000),
        duration_ps: Some(PS_PER_S / 2),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    h.run();
    let bulk = h.w.apps.bulk().unwrap();
    assert!(!bulk.victim && bulk.flows.len() == 4);
    for f in &bulk.flows {
        assert_eq!(h.conn(f.flow).hosts.1, 4, "to the first client");
        assert!((f.app_bytes as f64 / 6.25e6 - 1.0).abs() < 0.01, "{}", f.app_bytes);
    }
    let senders: std::collections::BTreeSet<u32> = bulk.flows.iter().map(|f| h.conn(f.flow).hosts.0).collect();
    assert_eq!(senders, (0..4).collect(), "from the servers, in order");
    // one backlogged flow alone fills its path: the 1 Gbit/s link's payload rate, 973 Mbit/s
    let spec = ScenarioSpec {
        servers: 2,
        sru_bytes: Some(1460),
        response_jitter_ps: PS_PER_S,
        bulk_flows: 1,
        bulk_from: Some(vec![1]),
        bulk_to: Some(vec![0]),
        duration_ps: Some(PS_PER_S / 2),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    h.run();
    let f = &h.w.apps.bulk().unwrap().flows[0];
    assert_eq!(h.conn(f.flow).hosts, (1, 0));
    // its 20-packet window over a 100 us RTT would allow 2.3 Gbit/s: the link limits it
    let mbps = f.app_bytes as f64 * 8.0 / 0.5 / 1e6;
    assert!(mbps > 950.0 && mbps < 973.4, "{mbps}");
}

#[test]
fn riak_nodes_reach_each_other_on_one_connection_per_ordered_pair() {
    // 5 nodes, many gets: every flow runs from a replica to another node, and no ordered pair
    // has two
    let spec = ScenarioSpec {
        servers: 5,
        workload: Workload::Riak,
        get_rate: 500.0,
        reply_bytes: 5000,
        duration_ps: Some(PS_PER_S / 5),
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    h.run();
    let ends = h.net().ends();
    let pairs: std::collections::BTreeSet<_> = ends.iter().copied().collect();
    assert_eq!(pairs.len(), ends.len());
    assert!(ends.iter().all(|&(a, b)| a != b && a < 5 && b < 5));
    assert_eq!(ends.len(), 20, "500 gets/s for 0.2 s use all 5 x 4 pairs");
    let g = gets(&h);
    assert!(g.completed > 0 && g.completed <= g.issued);
    // (app_bytes and node_bytes_received grow from one value: compare with the replies)
    let app = h.counters().app_bytes;
    assert!(g.reply_bytes_delivered <= app && app <= g.reply_bytes_written);
}

#[test]
fn the_recorder_covers_every_flow_with_several_clients_and_riak_connections() {
    // flows beyond the servers' count: client 1's (c * servers + i) and Riak's, opened as
    // gets need them; the per-event trace and a traced late flow must cover them all
    let two_clients =
        ScenarioSpec { servers: 4, clients: 2, duration_ps: Some(PS_PER_S / 50), ..ScenarioSpec::default() };
    let riak = ScenarioSpec {
        servers: 5,
        workload: Workload::Riak,
        get_rate: 500.0,
        duration_ps: Some(PS_PER_S / 5),
        ..ScenarioSpec::default()
    };
    for (spec, late) in [(two_clients, 7), (riak, 19)] {
        let opts =
            RecordOptions { events: true, trace_flows: vec![late], capture_limit: 1 << 20, ..Default::default() };
        let mut w = World::with_records(&spec.validate().unwrap(), &opts);
        w.run();
        let flows = w.net().ends().len();
        assert!(flows > late as usize, "flow {late} exists ({flows} flows)");
        let rec = w.take_records();
        assert_eq!(rec.ends.len(), flows);
        let cwnd_flows: std::collections::BTreeSet<_> =
            rec.events.iter().filter(|e| e.kind == EventKind::Cwnd).map(|e| e.flow).collect();
        assert_eq!(cwnd_flows.len(), flows, "every flow's first sender state is reported");
        assert!(rec.trace.iter().any(|r| r.flow == late) && rec.trace.iter().all(|r| r.flow == late));
        // the mirror of the watched host's port: what other receivers send never crosses it
        let watched = if spec.workload == Workload::Riak { 0 } else { 4 };
        let mut sent = rec.capture.iter().filter(|c| !c.packet.kind.to_client());
        assert!(sent.clone().count() > 0 && sent.all(|c| rec.ends[c.packet.flow as usize].1 == watched));
    }
}

// ---- fabrics ---------------------------------------------------------------------------------

#[test]
fn on_two_switches_the_far_servers_traffic_and_only_it_crosses_the_trunk() {
    // 4 servers: 0, 1 and the client on switch 0, 2 and 3 on switch 1. Every packet the far
    // servers' NICs sent was offered to the trunk towards switch 0 (sent or dropped there),
    // and everything that crossed the other way was for them.
    let mut h = Harness::new(ScenarioSpec {
        servers: 4,
        blocks: Some(5),
        topology: TopologyKind::TwoSwitch,
        ..ScenarioSpec::default()
    });
    h.run();
    let t = h.topo();
    let (up, down) = (t.route(1, 4), t.route(0, 2));
    let sent = |p: PortId| h.port(p).sent_packets;
    let offered = |p: PortId| sent(p) + h.port(p).drops;
    assert_eq!(offered(up), sent(t.nic(2)) + sent(t.nic(3)));
    // (the run ends when the last ACK arrives: nothing is in flight)
    assert_eq!(sent(down), offered(t.route(1, 2)) + offered(t.route(1, 3)));
    assert!(sent(up) > 0 && h.w.blocks_done() == 5);
    // a far server's first RTT sample is its 6-link path's, out and back
    assert_eq!(t.one_way(2, 4, 40), Time(3 * (25 * PS_PER_US + serialization_time(40, 1_000_000_000).0)));
}

/// Drops at leaf 1's uplink, at the spine's port down to leaf 0, and at the client's port:
/// 16 servers on 2 leaves under 1 spine for 2 s.
fn over_one_uplink(oversubscription: f64) -> [u64; 3] {
    let (servers, topology, leaves, spines) = (16, TopologyKind::LeafSpine, Some(2), Some(1));
    let spec = ScenarioSpec {
        servers,
        topology,
        leaves,
        spines,
        oversubscription: Some(oversubscription),
        duration_ps: Some(2 * PS_PER_S),
        ..Default::default()
    };
    let mut h = Harness::new(spec);
    h.run();
    let (up, down) = (h.topo().route(1, servers), h.topo().route(2, servers));
    [h.port(up).drops, h.port(down).drops, h.w.to_client().drops]
}

#[test]
fn an_oversubscribed_uplink_becomes_a_second_incast_point() {
    // Expected before measuring: 8 servers per leaf. At full bisection (1:1) leaf 1's uplink
    // runs at 8 Gbps, the sum of its 8 host ports: packets arriving together from them wait at
    // most 7 behind one another (~10 KB, under the 32 KiB buffer), so it never drops, and all
    // the incast's loss is at the client's port as on a star. At 8:1 it runs at 1 Gbps: the 8
    // far servers' synchronized windows meet there as on a star port of 8 servers (FAST'08
    // Fig. 2 collapses by then), so it drops too. Either way the spine's port down to leaf 0
    // never drops: its one ingress for this traffic, the uplink, runs at its own rate.
    let full = over_one_uplink(1.0);
    assert_eq!((full[0], full[1]), (0, 0));
    assert!(full[2] > 0, "{full:?}");
    let over = over_one_uplink(8.0);
    assert!(over[0] > 0 && over[1] == 0, "{over:?}");
}

// ---- PAUSE and PFC ---------------------------------------------------------------------------

/// Two servers on the star with PAUSE (XOFF above 1000 B of one ingress waiting, XON at 500
/// B or below) (and PFC over two classes when `pfc`); each writes two full segments at 0;
/// server 1 sends a datagram at 70 us. Run to `end` (a fresh world each time).
fn paused_pair(pfc: bool, end: Time) -> Harness {
    let (pause, pause_xoff_bytes, pause_xon_bytes) = (true, 1000, 500);
    let classes = if pfc { 2 } else { 1 };
    let buffer_bytes = if pfc { 64 * 1024 } else { 32 * 1024 };
    let spec = ScenarioSpec {
        servers: 2,
        pause,
        pfc,
        qos_classes: classes,
        buffer_bytes,
        pause_xoff_bytes,
        pause_xon_bytes,
        ..Default::default()
    };
    let mut h = Harness::new(spec);
    let mss = h.mss();
    h.write(Time::ZERO, 0, 2 * mss).write(Time::ZERO, 1, 2 * mss);
    if !pfc {
        h.enter_nic(us(70.0), Packet::new(1, Kind::Udp, 1500, 0, 0, 0));
    }
    h.run_until(end);
    h
}

#[test]
fn pause_frames_leave_and_land_when_hand_computed() {
    // 1 Gbps, 25 us links, 1500 B frames (12 us). Each NIC sends its two segments at 0 and
    // 12 us; they reach the switch at 37 and 49 us. At 37 server 0's first starts towards the
    // client, server 1's waits: 1500 B of ingress 1 > 1000: XOFF on the idle link back to NIC
    // 1, 8 B of preamble and 64 B of frame (0.576 us) + 25 us: it lands at 62.576 us and
    // pauses NIC 1 for 0xFFFF x 512 ns. At 49 server 0's second waits: XOFF to NIC 0, landing
    // at 74.576. Server 1's first starts at 49, server 0's second at 61 (ingress 0 empties:
    // XON, lands at 86.576), server 1's second at 73 (XON to NIC 1, lands at 98.576).
    let frame = Time(576_000);
    let full = Time(65_535 * 512 * 1000);
    let paused = |end: Time, port: PortId, at: Time| paused_pair(false, end).port(port).paused(at);
    assert!(!paused(us(62.0) + frame - Time(1), 1, us(62.0) + frame));
    assert!(paused(us(62.0) + frame, 1, us(62.0) + frame + full - Time(1)));
    assert!(!paused(us(62.0) + frame, 1, us(62.0) + frame + full));
    assert!(!paused(us(74.0) + frame - Time(1), 0, us(75.0)));
    assert!(paused(us(74.0) + frame, 0, us(75.0)));
    assert!(paused(us(86.0) + frame - Time(1), 0, us(87.0)));
    assert!(!paused(us(86.0) + frame, 0, us(86.0) + frame), "XON resumes at once");
    assert!(paused(us(98.0) + frame - Time(1), 1, us(99.0)));
    assert!(!paused(us(98.0) + frame, 1, us(98.0) + frame));
    assert_eq!(paused_pair(false, us(98.0) + frame).net().pause_frames(), Some((2, 2)));
}

#[test]
fn a_paused_nic_holds_its_packets_until_the_xon_lands() {
    // the datagram server 1 sends at 70 us, while its NIC is paused (62.576 to 98.576 us),
    // starts when the XON lands, and its last bit leaves 12 us later
    let frame = Time(576_000);
    let nic1 = 1;
    assert_eq!(paused_pair(false, us(70.0)).port(nic1).waiting_packets(), 1);
    assert_eq!(
        paused_pair(false, us(98.0) + frame - Time(1)).port(nic1).sent_packets,
        2,
        "nothing starts while paused"
    );
    let h = paused_pair(false, us(98.0) + frame);
    assert_eq!(h.port(nic1).sent_packets, 3, "the datagram starts as the XON lands");
    assert_eq!(crate::event::key_time(h.port(nic1).free_at()), us(110.0) + frame);
}

#[test]
fn pfc_frames_pause_only_their_class_when_hand_computed() {
    // the 802.3x case above with the accounting per (ingress, class): every packet is class
    // 0, so the frames leave and land at the same instants (62.576, 74.576, 86.576, 98.576
    // us) and pause class 0 of the NIC; class 1 and the port as a whole are never paused
    // (IEEE 802.1Qbb)
    let frame = Time(576_000);
    let full = Time(65_535 * 512 * 1000);
    let h = paused_pair(true, us(62.0) + frame - Time(1));
    assert!(!h.port(1).class_paused(0, us(62.0) + frame));
    let h = paused_pair(true, us(62.0) + frame);
    assert!(h.port(1).class_paused(0, us(62.0) + frame + full - Time(1)));
    assert!(!h.port(1).class_paused(0, us(62.0) + frame + full));
    assert!(!h.port(1).class_paused(1, us(63.0)) && !h.port(1).paused(us(63.0)));
    let h = paused_pair(true, us(74.0) + frame);
    assert!(h.port(0).class_paused(0, us(75.0)) && !h.port(0).class_paused(1, us(75.0)));
    let h = paused_pair(true, us(86.0) + frame);
    assert!(!h.port(0).class_paused(0, us(86.0) + frame), "XON resumes class 0 at once");
    let h = paused_pair(true, us(98.0) + frame - Time(1));
    assert!(h.port(1).class_paused(0, us(99.0)));
    let h = paused_pair(true, us(98.0) + frame);
    assert!(!h.port(1).class_paused(0, us(98.0) + frame));
    assert_eq!(h.net().pause_frames(), Some((2, 2)));
}

/// Two servers with PAUSE (and PFC over two classes, the bulk flow in class 1, when `pfc`).
fn idle_world(pfc: bool) -> Harness {
    Harness::new(ScenarioSpec {
        servers: 2,
        pause: true,
        pfc,
        victim: pfc,
        qos_classes: if pfc { 2 } else { 1 },
        victim_class: pfc as u32,
        buffer_bytes: 64 * 1024,
        ..Default::default()
    })
}

#[test]
fn a_pause_frame_takes_its_84_bytes_of_link_time_before_the_next_data_frame() {
    // 802.3 Annex 31B: the frame goes at the next frame boundary. Two 1500 B packets for
    // server 1 reach the switch from the client's link at 0: the first starts on the port to
    // server 1 (0 to 12 us), the second waits. An XOFF for NIC 1 sent then starts at 12 us,
    // lands 0.576 us + 25 us later (37.576) and holds the wire 84 B (0.672 us): the waiting
    // packet starts at 12.672, not 12, and ends at 24.672
    for with_frame in [false, true] {
        let mut h = idle_world(false);
        let (to_server1, client_nic, nic1) = (h.downlink(1), h.topo().nic(2), h.topo().nic(1));
        for _ in 0..2 {
            let id = h.w.cx.pool.alloc(Packet::new(1, Kind::Ack, 1500, 0, 0, 1));
            h.w.net.set_ingress(id, client_nic);
            assert_eq!(h.w.net.at_switch::<false>(&mut h.w.cx, id), None);
        }
        if with_frame {
            h.w.net.send_pause_frame(&mut h.w.cx, nic1, 0, Frame::Xoff);
        }
        h.run_until(us(38.0));
        let second_ends = crate::event::key_time(h.port(to_server1).free_at());
        assert_eq!(second_ends, if with_frame { us(24.672) } else { us(24.0) });
        assert_eq!(h.port(nic1).control_end(), Time::ZERO, "the frame crosses the switch's link, not the NIC's");
        // it paused NIC 1 from the instant it landed: for 0xFFFF x 512 ns from 37.576 us
        let lands_plus_full = us(37.576) + Time(65_535 * 512 * 1000);
        assert_eq!(h.port(nic1).paused(lands_plus_full - Time(1)), with_frame);
        assert!(!h.port(nic1).paused(lands_plus_full));
    }
}

#[test]
fn a_paused_class_does_not_stop_another_class_of_the_same_nic() {
    // NIC 1 has class 0 paused (a PFC XOFF); a class-0 datagram and a class-1 packet (the
    // bulk flow's) are offered at 0: the class-1 packet starts at once (its last bit leaves
    // at 12 us), the datagram waits until the XON lands at 50 us and leaves at 62 us. Under
    // 802.3x both would wait.
    let run_to = |end: Time| {
        let mut h = idle_world(true);
        let nic1 = h.topo().nic(1);
        h.w.net.on_pfc(&mut h.w.cx, nic1, 0, true);
        let udp = h.w.cx.pool.alloc(Packet::new(1, Kind::Udp, 1500, 0, 0, 0));
        assert!(matches!(h.w.net.offer_to::<false, false>(&mut h.w.cx, nic1, udp), Offer::Waiting { .. }));
        let bulk = h.w.apps.bulk().unwrap().flows[0].flow;
        let id = h.w.cx.pool.alloc(Packet::new(bulk, Kind::Data, 1500, 1460, 1, 0));
        assert!(matches!(h.w.net.offer_to::<false, false>(&mut h.w.cx, nic1, id), Offer::Started(_)));
        assert_eq!(crate::event::key_time(h.port(nic1).free_at()), us(12.0));
        h.at(us(50.0), Event::PfcOff { class: 0, port: nic1 }).run_until(end);
        h.port(nic1).clone()
    };
    let nic = run_to(us(50.0) - Time(1));
    assert_eq!((nic.sent_packets, nic.waiting_packets()), (1, 1), "the datagram waits while class 0 is paused");
    let nic = run_to(us(50.0));
    assert_eq!((nic.sent_packets, nic.waiting_packets()), (2, 0));
    assert_eq!(crate::event::key_time(nic.free_at()), us(62.0));
}

/// Bytes of each class a switch port sends over its first `packets` packets of a long
/// backlog in both classes: class 0 in 1500 B packets, class 1 in 500 B, as the scenario's
/// QoS fields set the port up.
fn class_shares(qos_scheduler: ClassScheduler, qos_weights: Option<Vec<u32>>, packets: usize) -> [u64; 2] {
    let spec = ScenarioSpec {
        servers: 2,
        qos_classes: 2,
        qos_scheduler,
        qos_weights,
        buffer_bytes: 1 << 30,
        ..Default::default()
    };
    let h = Harness::new(spec);
    let mut port = h.port(h.net().bottleneck()).clone();
    let mut order = 0;
    let mut reserve = || {
        order += 1;
        let o = order;
        move |t| crate::event::key(t, o)
    };
    let mut class_of = std::collections::HashMap::new();
    for i in 0..4000 {
        for (class, wire) in [(0, 1500), (1, 500)] {
            let id = 2 * i + class as u32;
            class_of.insert(id, (class, wire as u64));
            let _ = port.offer_in_class(crate::event::key(Time::ZERO, 0), id, wire, class, reserve());
        }
    }
    // the first offer found the link idle and started: class 0's first packet
    let mut sent = [1500, 0];
    for _ in 1..packets {
        let now = crate::event::key_time(port.free_at());
        let (id, _, _) = port.next(now, reserve());
        let (class, wire) = class_of[&id];
        sent[class] += wire;
    }
    sent
}

#[test]
fn wrr_weights_3_to_1_from_the_scenario_give_75_and_25_percent_of_the_bytes_within_a_packet() {
    // DRR with a quantum of one full packet (1500 B): per round class 0 sends 4500 B, class 1
    // 1500 B, whatever their packet sizes (Shreedhar & Varghese 1995)
    for packets in [7, 100, 1001, 3001] {
        let sent = class_shares(ClassScheduler::Wrr, Some(vec![3, 1]), packets);
        let total = (sent[0] + sent[1]) as f64;
        let off = sent[0] as f64 - 0.75 * total;
        assert!(off.abs() <= 1500.0, "{packets} packets: {sent:?}: class 0 {off} B from 75 %");
    }
    // unset weights: equal shares
    let sent = class_shares(ClassScheduler::Wrr, None, 1001);
    assert!((sent[0] as f64 - sent[1] as f64).abs() <= 1500.0, "{sent:?}");
}

#[test]
fn strict_priority_from_the_scenario_starves_the_low_class_while_class_0_is_backlogged() {
    assert_eq!(class_shares(ClassScheduler::Sp, None, 3001), [3001 * 1500, 0]);
}

/// (incast goodput, bulk goodput) in Mbps: 4 servers for 2 s beside a bulk flow.
fn with_victim(topology: TopologyKind, pause: bool) -> (f64, f64) {
    let spec = ScenarioSpec {
        servers: 4,
        topology,
        pause,
        victim: true,
        duration_ps: Some(2 * PS_PER_S),
        ..ScenarioSpec::default()
    };
    let r = crate::simulate(&spec.validate().unwrap());
    (r.goodput_mbps, r.victim_goodput_mbps.unwrap())
}

#[test]
fn pause_stops_a_victim_that_shares_the_paused_trunk_but_not_one_on_its_own_ingress() {
    // FAST'08 §5.2: "pause frames pause all traffic entering an interface, regardless of
    // whether that traffic is causing congestion". On one switch the victim's ingress (its
    // own NIC) never fills, so PAUSE leaves it alone and helps the incast; across two
    // switches the client's switch pauses the trunk, and the victim's data, bound for another
    // port, stops with the far servers'. Nothing here names the victim: the blocking comes
    // from the ingress accounting. Measured: star 264 -> 952 Mbps of incast goodput, victim
    // 973 both ways; two switches, victim 910 -> 230 Mbps.
    let (incast_off, victim_off) = with_victim(TopologyKind::Star, false);
    let (incast_on, victim_on) = with_victim(TopologyKind::Star, true);
    assert!(incast_on > 3.0 * incast_off, "{incast_off} -> {incast_on}");
    // the victim's path is disjoint from every paused ingress: exactly the same goodput
    assert_eq!(victim_on, victim_off);
    let (_, victim_off) = with_victim(TopologyKind::TwoSwitch, false);
    let (_, victim_on) = with_victim(TopologyKind::TwoSwitch, true);
    // margin: half, where the measurement gives a quarter
    assert!(victim_on < 0.5 * victim_off, "{victim_off} -> {victim_on}");
    // on a leaf-spine (2 leaves, 1 spine) the client's leaf pauses the spine's port down to
    // it, which carries the far servers' data and the victim's (sent from the last leaf):
    // measured 956 -> 267 Mbps
    let (_, victim_off) = with_victim(TopologyKind::LeafSpine, false);
    let (_, victim_on) = with_victim(TopologyKind::LeafSpine, true);
    assert!(victim_on < 0.5 * victim_off, "{victim_off} -> {victim_on}");
}

/// The victim's goodput in Mbps beside 4 servers for 2 s across two switches with PAUSE,
/// the victim in QoS class 1 of 2 (64 KiB ports: 32 KiB per class), under PFC or 802.3x.
fn victim_in_class_1(pfc: bool) -> f64 {
    let spec = ScenarioSpec {
        servers: 4,
        topology: TopologyKind::TwoSwitch,
        pause: true,
        pfc,
        victim: true,
        qos_classes: 2,
        victim_class: 1,
        buffer_bytes: 64 * 1024,
        duration_ps: Some(2 * PS_PER_S),
        ..ScenarioSpec::default()
    };
    crate::simulate(&spec.validate().unwrap()).victim_goodput_mbps.unwrap()
}

#[test]
fn pfc_lets_a_victim_in_another_class_cross_the_paused_trunk_where_802_3x_stops_it() {
    // 802.3x pauses the whole trunk, class 1 with class 0: the head-of-line blocking comes
    // from the pause, not from the victim's class. 802.1Qbb pauses class 0 only, and the
    // victim takes what the far servers leave of the trunk. Measured: 16 -> 394 Mbps.
    // Margins: a quarter of the link under 802.3x, 3x under PFC (fast08-fig14's)
    let (paused, pfc) = (victim_in_class_1(false), victim_in_class_1(true));
    assert!(paused < 250.0, "802.3x: {paused}");
    assert!(pfc >= 3.0 * paused, "802.3x {paused} -> PFC {pfc}");
}

#[test]
fn mitigations_of_the_reads_stay_with_the_reads() {
    // (the schedules are refused with several clients: the reads' app holds one scheduler)
    let spec =
        ScenarioSpec { servers: 4, clients: 2, mitigation: crate::scenario::Scheme::Ccs, ..ScenarioSpec::default() };
    assert!(spec.validate().is_err());
    let _ = Mitigation::None;
}

// ---- fat trees, load balancing, one-shot flows and the background ------------------------

/// A k = 4 fat tree (16 hosts) at 10 Gbps with 1 us links.
fn fat_tree(workload: Workload, servers: u32, load_balancing: LoadBalancing) -> ScenarioSpec {
    ScenarioSpec {
        servers,
        workload,
        topology: TopologyKind::FatTree,
        fat_tree_k: Some(4),
        rate_bps: 10_000_000_000,
        rtt_ps: 4 * PS_PER_US,
        load_balancing,
        ..ScenarioSpec::default()
    }
}

#[test]
fn ecmp_sends_each_flow_up_the_uplink_its_hash_names() {
    // a shuffle of 16 hosts: 28 flows leave edge 0 (hosts 0 and 1 to the 14 hosts off it),
    // one packet each, at once; each takes uplink hash(seed 1, switch 0, flow) mod 2
    let spec = ScenarioSpec { sru_bytes: Some(1460), ..fat_tree(Workload::Shuffle, 16, LoadBalancing::Ecmp) };
    let mut h = Harness::new(spec);
    let ups = h.topo().uplinks(0).to_vec();
    let mut expected = [0u64; 2];
    for f in 0..h.w.conns.len() as FlowId {
        let (src, dst) = h.conn(f).hosts;
        if h.topo().switch_of(src) == 0 && h.topo().switch_of(dst) != 0 {
            let via = h.topo().nic(src);
            h.reach_switch(Time::ZERO, via, segment(f, 1));
            expected[(crate::net::balance::ecmp_hash(1, 0, f) % 2) as usize] += 1;
        }
    }
    assert_eq!(expected[0] + expected[1], 28);
    assert!(expected[0] > 0 && expected[1] > 0, "the hash spreads them: {expected:?}");
    h.run_until(Time(1));
    let took = |p: PortId| h.port(p).sent_packets + h.port(p).waiting_packets() as u64;
    assert_eq!([took(ups[0]), took(ups[1])], expected);
}

#[test]
fn spraying_spreads_one_flows_packets_evenly_over_the_uplinks() {
    // one flow's 4,000 packets leave edge 0: sprayed at random, each uplink takes 2,000
    // (binomial sd 32: 5 sd = 160); in turn, exactly 2,000 each
    for (lb, margin) in [(LoadBalancing::Spray, 160), (LoadBalancing::SprayRr, 0)] {
        let mut h = Harness::new(fat_tree(Workload::Permutation, 16, lb));
        let f = (0..h.w.conns.len() as FlowId).find(|&f| h.conn(f).hosts.0 == 0).unwrap();
        let (dst, nic0) = (h.conn(f).hosts.1, h.topo().nic(0));
        assert_ne!(h.topo().switch_of(dst), 0, "the permutation sends host 0 off its edge");
        for k in 0..4000 {
            h.reach_switch(Time::ZERO, nic0, segment(f, 1 + 1460 * k));
        }
        h.drop_where(|_, _| false);
        h.run_until(Time(1));
        let ups = h.topo().uplinks(0).to_vec();
        let took = |p: PortId| h.port(p).sent_packets + h.port(p).waiting_packets() as u64 + h.port(p).drops;
        let (a, b) = (took(ups[0]), took(ups[1]));
        assert_eq!(a + b, 4000);
        assert!(a.abs_diff(2000) <= margin, "{lb:?}: {a} / {b}");
    }
}

#[test]
fn sprayed_flows_reorder_but_every_byte_is_delivered_once_and_conservation_holds() {
    // a permutation of 1 MB flows over a k = 4 tree with every packet sprayed: packets of a
    // flow take different paths and queues (reordering, duplicate ACKs, spurious fast
    // retransmits), yet each flow's bytes reach its application exactly once and
    // sent = delivered + dropped + in flight
    for lb in [LoadBalancing::Spray, LoadBalancing::SprayRr, LoadBalancing::Ecmp] {
        let spec = ScenarioSpec { sru_bytes: Some(1_000_000), buffer_packets: Some(20), ..fat_tree(Workload::Permutation, 16, lb) };
        let mut h = Harness::new(spec);
        h.run();
        let c = h.counters();
        let fs = h.w.apps.flow_set().unwrap();
        assert_eq!((fs.completed(), c.app_bytes), (16, 16 * 1_000_000), "{lb:?}");
        assert_eq!(c.data_bytes_sent, c.data_bytes_arrived + c.data_bytes_dropped + h.w.data_bytes_in_flight(), "{lb:?}");
        if lb != LoadBalancing::Ecmp {
            let dup = h.w.conns.sender_total(|s| s.stats.fast_retransmits);
            assert!(dup > 0, "{lb:?}: reordering shows as duplicate ACKs");
        }
    }
}

#[test]
fn a_lone_flow_across_pods_completes_in_its_idle_time_plus_the_handshake_free_start() {
    // one 1460 B flow from host 0 to host 15 on an idle k = 4 tree at 10 Gbps, 1 us links:
    // 6 links of 1 us + 1.2 us each; nothing else runs: its FCT is that, slowdown 1
    let spec = ScenarioSpec { sru_bytes: Some(1460), placement: Placement::Packed, ..fat_tree(Workload::Incast, 1, LoadBalancing::Ecmp) };
    let mut h = Harness::new(spec.clone());
    h.run();
    let f = h.w.apps.flow_set().unwrap().flows[0];
    assert_eq!((f.src, f.dst), (1, 0), "packed: the receiver, then its sender");
    assert_eq!(f.end, Some(Time(2 * 2_200_000)), "2 links of 1 us + 1.2 us (the same edge)");
    let r = crate::simulate(&spec.validate().unwrap());
    assert_eq!((r.flows, r.flows_completed, r.slowdown_p50), (Some(1), Some(1), Some(1.0)));
    assert_eq!(r.incast_completion_s, Some(4.4e-6));
}

#[test]
fn a_tail_incast_sends_from_the_last_hosts_across_pods_as_htsims_set_incast() {
    // k = 4, 16 hosts: 3 senders to host 0 under tail placement are hosts 13, 14, 15 (pod
    // 3, htsim's setIncast(3, 13)); a lone 1460 B flow from there crosses 6 links of 1 us
    // and 1.2 us each, three times the same-edge flow's two
    let spec = ScenarioSpec { sru_bytes: Some(1460), placement: Placement::Tail, ..fat_tree(Workload::Incast, 3, LoadBalancing::Ecmp) };
    let mut h = Harness::new(spec.clone());
    h.run();
    let flows = &h.w.apps.flow_set().unwrap().flows;
    assert_eq!(flows.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>(), vec![(13, 0), (14, 0), (15, 0)]);
    assert_eq!(h.topo().hops(13, 0), 6, "across pods: up to a core and down");
    // the three arrive together at host 0's edge; the first's last link is idle
    assert_eq!(flows.iter().filter_map(|f| f.end).min(), Some(Time(6 * 2_200_000)));
}

#[test]
fn background_flows_arrive_at_the_rate_their_load_and_mean_size_give() {
    // 10 % of 16 hosts' 10 Gbps links in web search flows (mean 1,711,250 B): 1168.7
    // flows/s; over 1 s, 1169 expected (Poisson sd 34): within 5 sd; their bytes are not the
    // workload's, and the workload's end does not end the run (it has a duration)
    let spec = ScenarioSpec {
        sru_bytes: Some(1460),
        background_load: 0.1,
        duration_ps: Some(PS_PER_S),
        ..fat_tree(Workload::Permutation, 2, LoadBalancing::Ecmp)
    };
    let spec = ScenarioSpec { fat_tree_k: Some(4), ..spec };
    let sc = spec.validate().unwrap();
    let r = crate::simulate(&sc);
    let lambda = 0.1 * 10e9 * 16.0 / (8.0 * crate::app::cdf::FlowSizeCdf::WebSearch.mean());
    let expected = lambda * 1.0;
    let n = r.background_flows.unwrap() as f64;
    assert!((n - expected).abs() < 5.0 * expected.sqrt(), "{n} flows, {expected} expected");
    assert_eq!(r.app_bytes, 2 * 1460, "only the permutation's bytes are measured");
    assert!(r.background_flows_completed.unwrap() > 0);
}

#[test]
fn fabric_fields_are_refused_by_name_where_they_cannot_apply() {
    let refused = |spec: ScenarioSpec| spec.validate().unwrap_err().to_string();
    let star = ScenarioSpec { servers: 4, ..ScenarioSpec::default() };
    assert!(refused(ScenarioSpec { fat_tree_k: Some(4), ..star.clone() }).starts_with("fat_tree_k"));
    assert!(refused(ScenarioSpec { load_balancing: LoadBalancing::Ecmp, ..star.clone() }).starts_with("load_balancing"));
    assert!(refused(ScenarioSpec { incasts: 2, ..star.clone() }).starts_with("incasts"));
    let tree = ScenarioSpec { topology: TopologyKind::FatTree, ..star.clone() };
    assert!(refused(tree.clone()).starts_with("fat_tree_k"), "required");
    assert!(refused(ScenarioSpec { fat_tree_k: Some(5), ..tree.clone() }).contains("even"));
    let big = ScenarioSpec { servers: 16, workload: Workload::Incast, fat_tree_k: Some(4), ..tree };
    assert!(refused(big).contains("16 hosts"), "16 senders and a receiver do not fit 16 hosts");
}

#[test]
fn a_long_flow_beside_a_fat_tree_incast_runs_the_scenarios_transport_and_counts_its_bytes_apart() {
    // NDP SIGCOMM'17 Fig. 19's setting, small: a backlogged flow from host 2 (the next edge
    // switch of pod 0) to host 1 (host 0's edge switch) beside a 4-to-1 incast into host 0
    // from pod 3 that starts 100 us in. The long flow is an NDP flow like the incast's; its
    // bytes are its own (bulk_bytes_delivered), not the incast's, and the run still ends when
    // the incast's last flow is delivered
    let spec = ScenarioSpec {
        sru_bytes: Some(10 * 9000),
        mss_bytes: 9000,
        header_bytes: 64,
        init_cwnd_segments: Some(23),
        transport: crate::host::Transport::Ndp,
        trimming: true,
        buffer_packets: Some(8),
        placement: Placement::Tail,
        start_ps: 100 * PS_PER_US,
        bulk_flows: 1,
        bulk_from: Some(vec![2]),
        bulk_to: Some(vec![1]),
        ..fat_tree(Workload::Incast, 4, LoadBalancing::Spray)
    };
    let mut h = Harness::new(spec.clone());
    h.run();
    let bulk = h.w.apps.bulk().unwrap();
    let long = bulk.flows[0].app_bytes;
    let conn = h.conn(bulk.flows[0].flow);
    assert_eq!(conn.hosts, (2, 1));
    assert!(conn.pull.is_some() && !conn.measured, "an NDP flow, counted apart");
    assert_eq!(h.counters().app_bytes, 4 * 10 * 9000, "only the incast's bytes are measured");
    let r = crate::simulate(&spec.clone().validate().unwrap());
    assert_eq!((r.flows_completed, r.bulk_bytes_delivered), (Some(4), Some(long)));
    // alone for 100 us it has left slow start behind: 4 hops of store and forward (33 us),
    // then one 9000 B packet per 7.25 us; stopped at the incast's start, a prefix of the run
    let before = crate::simulate(&ScenarioSpec { duration_ps: Some(100 * PS_PER_US), ..spec.clone() }.validate().unwrap());
    let b = before.bulk_bytes_delivered.unwrap();
    assert!(b >= 9 * 9000 && b < long, "{b} then {long}");
    // refused by name: no ends given on a fat tree, a paced NDP flow, a host that is not there
    let refused = |spec: ScenarioSpec| spec.validate().unwrap_err().to_string();
    assert!(refused(ScenarioSpec { bulk_from: None, ..spec.clone() }).starts_with("bulk_from"));
    assert!(refused(ScenarioSpec { bulk_rate_bps: Some(1_000_000), ..spec.clone() }).starts_with("bulk_rate_bps"));
    assert!(refused(ScenarioSpec { bulk_to: Some(vec![16]), ..spec }).contains("from 0 to 15"));
}

// ---- packet trimming and the receiver-driven transports (issue 29) ------------------------

/// An NDP incast of `servers` flows of `packets` full packets each on the star at 10 Gbps,
/// with trimming switch ports whose data queue holds `queue` packets.
fn ndp_incast(servers: u32, packets: u64, queue: u32) -> ScenarioSpec {
    let spec = ScenarioSpec {
        servers,
        workload: Workload::Incast,
        rate_bps: 10_000_000_000,
        rtt_ps: 10 * PS_PER_US,
        transport: crate::host::Transport::Ndp,
        trimming: true,
        buffer_packets: Some(queue),
        ..ScenarioSpec::default()
    };
    ScenarioSpec { sru_bytes: Some(packets * spec.mss_bytes as u64), ..spec }
}

/// Every packet of `kinds` offered to a switch port, as (kind, flow, seq, ts), in order.
type Seen = std::rc::Rc<std::cell::RefCell<Vec<(Kind, FlowId, u64, Time, u8)>>>;

fn watch(h: &mut Harness, kinds: &'static [Kind]) -> Seen {
    let seen: Seen = Default::default();
    let log = seen.clone();
    h.drop_where(move |p, _| {
        if kinds.contains(&p.kind) {
            log.borrow_mut().push((p.kind, p.flow, p.seq, p.ts, p.ecn));
        }
        false
    });
    seen
}

#[test]
fn a_trimmed_packet_comes_back_as_a_nack_and_is_sent_again_on_a_pull_not_a_timeout() {
    // NDP §3.1-3.2: 4 senders' first windows (init_cwnd 2) meet a data queue of 2 packets at
    // the client's port: what does not fit is cut to its header; the receiver NACKs each
    // header at once, and each NACKed packet is sent again exactly once, on a pull, before
    // any timer could fire (rto_min is 200 ms here, the run lasts microseconds)
    let spec = ScenarioSpec { init_cwnd_segments: Some(2), ..ndp_incast(4, 8, 2) };
    let mut h = Harness::traced(spec);
    let seen = watch(&mut h, &[Kind::Nack]);
    h.run();
    let (trims, header_drops, bounces) = h.net().trim_counts().expect("trimming ports");
    assert!(trims > 0, "the first windows overflow the data queue");
    assert_eq!((header_drops, bounces), (0, 0), "the header queue has room");
    let nacked: Vec<(FlowId, u64)> = seen.borrow().iter().map(|&(_, f, seq, _, _)| (f, seq)).collect();
    assert_eq!(nacked.len() as u64, trims, "one NACK per trimmed packet");
    let mut resent: Vec<(FlowId, u64)> = h.events(EventKind::Rtx).iter().map(|e| (e.flow, e.a)).collect();
    let mut nacked_sorted = nacked.clone();
    nacked_sorted.sort();
    resent.sort();
    assert_eq!(resent, nacked_sorted, "each NACKed packet, and only those, sent again");
    let totals = h.w.conns.pull_totals();
    assert_eq!((totals.nacks, totals.timeouts, totals.retransmits), (trims, 0, trims));
    assert_eq!(h.counters().app_bytes, 4 * 8 * h.mss(), "every byte delivered");
    assert_eq!(h.counters().data_bytes_dropped, trims * h.mss(), "a trimmed payload counts as dropped");
}

#[test]
fn the_receivers_pulls_are_paced_one_full_packet_time_apart_ndp_3_2() {
    // 8 senders x 40 packets into one 10 Gbps host: after the first windows, the receiver
    // owes pulls faster than it may send them, and its pacer lets one go every full data
    // packet's time on its link (mss + header bytes: 1,200 ns at 1,500 B), never closer;
    // the pull packets that leave while the pacer is backlogged are exactly that apart
    let spec = ndp_incast(8, 40, 8);
    let mut h = Harness::new(spec);
    let seen = watch(&mut h, &[Kind::Pull]);
    h.run();
    let interval = h.w.conns.pacer(h.conn(0).hosts.1).expect("the receiver's pacer").interval();
    assert_eq!(interval, serialization_time(h.mss() + 40, 10_000_000_000));
    assert_eq!(interval, Time(1_200_000), "1,500 B at 10 Gbps");
    let times: Vec<Time> = seen.borrow().iter().map(|&(_, _, _, ts, _)| ts).collect();
    assert!(times.len() > 100, "most of 8 x 40 packets are pulled: {}", times.len());
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert!(gaps.iter().all(|&g| g >= interval.0), "no two pulls closer than a packet time");
    let exact = gaps.iter().filter(|&&g| g == interval.0).count();
    assert!(exact * 10 >= gaps.len() * 9, "backlogged, the pacer runs at the link rate: {exact} of {}", gaps.len());
    assert_eq!(h.counters().app_bytes, 8 * 40 * h.mss());
}

// ---- Swift (issue 29) ----------------------------------------------------------------------

/// A Swift incast of `servers` flows of `packets` full packets each on the star at 10 Gbps
/// (10 us of propagation round trip) into a switch port of `queue` packets.
fn swift_incast(servers: u32, packets: u64, queue: u32) -> ScenarioSpec {
    let spec = ScenarioSpec {
        servers,
        workload: Workload::Incast,
        rate_bps: 10_000_000_000,
        rtt_ps: 10 * PS_PER_US,
        transport: crate::host::Transport::Swift,
        tcp: crate::scenario::TcpVariant::Sack,
        buffer_packets: Some(queue),
        duration_ps: Some(PS_PER_S),
        ..ScenarioSpec::default()
    };
    ScenarioSpec { sru_bytes: Some(packets * spec.mss_bytes as u64), ..spec }
}

#[test]
fn a_swift_incast_completes_every_flow_and_holds_the_queue_near_its_target_swift_3_5() {
    // 100 senders x 50 packets into one 10 Gbps host, on a port of 400 packets (room for
    // the first windows, 100 x 2). Swift's target here: base (the unloaded round trip,
    // 12.5 us) + 1 hop x h (1.2 us: a packet's time) + the flow-based scaling, which at
    // 100 flows' windows (well below fs_max_cwnd's 100 packets) adds most of fs_range
    // (12 us): a queue of at most h + fs_range = 13.2 us, 11 packets, is the target.
    let spec = swift_incast(100, 50, 400);
    let mut h = Harness::traced(spec);
    h.run();
    let mss = h.mss();
    assert_eq!(h.counters().app_bytes, 100 * 50 * mss, "every flow delivered whole");
    assert_eq!(h.w.conns.unacked_measured(), 0, "every flow acknowledged");
    assert_eq!(h.port(h.downlink(0)).drops, 0, "no loss at the port");
    assert_eq!(h.w.conns.sender_total(|s| s.stats.timeouts), 0);
    // the queue each data packet finds at the client's port (packets waiting)
    let found: Vec<u64> = h.events(EventKind::Enq).iter().map(|e| e.c.unwrap_or(0)).collect();
    let sw = h.conn(0).sender.swift().expect("a Swift sender");
    let fixed = sw.target().0 as f64 - sw.flow_scaling_now();
    let (h_ps, fs_range) = (1.2e6, 12e6);
    assert!((fixed - 12.5e6 - h_ps).abs() < 0.2e6, "base + 1 hop x h: {fixed} ps");
    // after the first windows drain (the first 10 % of the arrivals), the queue's median is
    // within a factor of two of the target's queue part, h plus the flow-based scaling at
    // the windows 100 flows share (11 packets at most, fs_range's full 12 us at the least
    // windows): an AIMD around the target swings by beta x the excess, hence the margin
    let steady = &found[found.len() / 10..];
    let mut sorted = steady.to_vec();
    sorted.sort();
    let median = sorted[sorted.len() / 2] as f64;
    let most = (h_ps + fs_range) / 1.2e6;
    assert!(median > 1.0 && median < 2.0 * most, "median queue {median} packets, target's queue at most {most}");
    // the link stays busy: an arriving packet rarely finds the queue empty
    let empty = steady.iter().filter(|&&b| b == 0).count();
    assert!(empty * 10 < steady.len(), "{empty} of {} arrivals found it empty", steady.len());
}

#[test]
fn under_a_1000_flow_incast_swifts_window_falls_below_one_packet_and_every_flow_completes() {
    // 1000 senders x 10 packets into one 10 Gbps host: a bandwidth-delay product of about
    // 10 packets shared by 1000 flows leaves each a hundredth of a packet, so the windows
    // must fall below one packet (§3.4) and the senders pace; the port (3000 packets)
    // holds the first windows (1000 x 2), so no flow should need a timeout
    let spec = swift_incast(1000, 10, 3000);
    let mut h = Harness::new(spec);
    h.run();
    let least = (0..1000).map(|f| h.conn(f).sender.swift().unwrap().min_cwnd_seen).fold(f64::MAX, f64::min);
    assert!(least < 1.0, "least window {least} packets");
    assert_eq!(h.counters().app_bytes, 1000 * 10 * h.mss(), "every flow delivered whole");
    assert_eq!(h.port(h.downlink(0)).drops, 0);
}

#[test]
fn a_swift_sender_below_one_packet_sends_a_packet_every_rtt_over_cwnd() {
    // one flow whose window is set to a quarter packet: its packets leave 4 RTTs apart
    // (§3.4), not clocked by ACKs
    let spec = swift_incast(1, 6, 100);
    let mut h = Harness::traced(spec);
    h.w.conns.get_mut(0).sender.use_swift(
        crate::tcp::congestion::swift::SwiftParams {
            base_target: Time(PS_PER_MS), // far above the delay: the window only grows
            h: Time::ZERO,
            fs_range: Time::ZERO,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 0.0, // and here it stays
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: crate::tcp::congestion::swift::MIN_CWND,
        },
        1,
    );
    h.w.conns.get_mut(0).sender.cwnd = h.mss() / 4;
    h.run();
    let sends: Vec<u64> = h.events(EventKind::Tx).iter().map(|e| e.time.0).collect();
    assert_eq!(sends.len(), 6);
    let rtt = h.conn(0).sender.swift().unwrap().rtt().expect("a delay sample").0;
    let gaps: Vec<u64> = sends.windows(2).map(|w| w[1] - w[0]).collect();
    // the first packet goes alone (no delay sample yet, nothing in flight), the second when
    // its ACK brings the first sample; from then the pacing gap is 4 x the smoothed delay
    // at the send, every sample the same unloaded RTT
    assert_eq!(gaps[0], rtt, "gaps {gaps:?}, rtt {rtt}");
    for g in &gaps[1..] {
        assert_eq!(*g, 4 * rtt, "gaps {gaps:?}, rtt {rtt}");
    }
}

#[test]
fn ndp_and_credit_start_with_the_paths_bdp_unless_init_cwnd_is_given() {
    // the star at 10 Gbps, 2.5 us links (rtt 10 us), 9000 B packets + 64 B headers: a full
    // packet takes 7.2512 us a link; out, stored and forwarded twice: 2 x (2.5 + 7.2512) =
    // 19.5024 us; a 64 B answer back: 2 x (2.5 + 0.0512) = 5.1024 us; a round trip of
    // 24.6048 us is 3.39 packet times: a first window of 4
    let one = |transport, init_cwnd: Option<u32>| ScenarioSpec {
        mss_bytes: 9000,
        header_bytes: 64,
        transport,
        init_cwnd_segments: init_cwnd,
        sru_bytes: Some(40 * 9000),
        ..ndp_incast(1, 40, 8)
    };
    for transport in [crate::host::Transport::Ndp, crate::host::Transport::Credit] {
        let first = |spec: ScenarioSpec| Harness::new(spec).conn(0).pull.as_ref().unwrap().sender.first_window();
        assert_eq!(first(one(transport, None)), 4, "{transport:?}: the path's BDP");
        assert_eq!(first(one(transport, Some(3))), 3, "{transport:?}: a given init_cwnd wins");
        assert_eq!(first(one(transport, Some(40))), 40);
        // 4 is the least that keeps the sender's link busy: the first answer (its pull or
        // credit) is back at 24.6048 us, before the 4th packet is out (29.0048 us), so the
        // 40 packets leave back to back and the last reaches the client 2 x 2.5 + 7.2512 us
        // after it left the NIC at 40 x 7.2512 us: 302.2992 us; with 3 the link idles
        // from 21.7536 us until each pull comes
        let last = |spec: ScenarioSpec| crate::simulate(&spec.validate().unwrap()).fct_max_s.unwrap();
        let line_rate = (40.0 * 7.2512 + 5.0 + 7.2512) * 1e-6;
        assert!((last(one(transport, None)) - line_rate).abs() < 1e-12, "{transport:?}: {}", last(one(transport, None)));
        assert!(last(one(transport, Some(3))) > line_rate + 2e-6, "{transport:?}: {}", last(one(transport, Some(3))));
    }
}

#[test]
fn on_a_fat_tree_each_flow_starts_with_its_own_paths_bdp() {
    // k = 4, 10 Gbps, 1 us links (htsim's incast setting, smaller), 9000 B + 64 B: into host
    // 0 from host 1 (its edge switch: 2 hops), hosts 2, 3 (its pod: 4) and the other pods
    // (6). Round trips: 2 x 8.2512 + 2 x 1.0512 = 18.6048 us (2.57 packet times: 3),
    // 37.2096 us (5.13: 6), 55.8144 us (7.70: 8; on k = 12 too, htsim's 432-host tree)
    let spec = ScenarioSpec {
        mss_bytes: 9000,
        header_bytes: 64,
        transport: crate::host::Transport::Ndp,
        trimming: true,
        buffer_packets: Some(8),
        placement: Placement::Tail,
        sru_bytes: Some(9000),
        ..fat_tree(Workload::Incast, 15, LoadBalancing::Spray)
    };
    let h = Harness::new(spec);
    let mut windows = std::collections::BTreeMap::new();
    for f in 0..h.w.conns.len() as FlowId {
        let (src, dst) = h.conn(f).hosts;
        let hops = h.topo().hops(src, dst);
        let w = h.conn(f).pull.as_ref().unwrap().sender.first_window();
        assert_eq!(*windows.entry(hops).or_insert(w), w, "one window per path length");
    }
    assert_eq!(windows.into_iter().collect::<Vec<_>>(), vec![(2, 3), (4, 6), (6, 8)]);
}

#[test]
fn before_its_first_delay_sample_a_swift_flow_sends_only_its_first_window_and_timer_retransmissions() {
    // 200 senders x 20 packets into a 20-packet port: most first windows (2 packets each)
    // are lost, those flows time out before any ACK and their windows fall below a packet
    // (Algorithm 1's timeout decrease). Pacing's rtt / cwnd (§3.2) needs a measured rtt,
    // which such a flow does not have: until its first ACK it sends its first window and
    // then one retransmission per timeout, at least RTOmin apart, and no new data. (Paced on
    // the path's unloaded RTT instead, such flows sent their whole 64 KB at 25 us a packet
    // into a full port: 18,297 of swift-incast's 42,437 drops at 1000 senders.)
    let rto_min = 200 * PS_PER_US;
    let spec = ScenarioSpec { rto_min_ps: Some(rto_min), ..swift_incast(200, 20, 20) };
    let mut h = Harness::traced(spec);
    h.run();
    assert_eq!(h.counters().app_bytes, 200 * 20 * h.mss(), "every flow delivered whole");
    let first_ack = |f: FlowId| h.events(EventKind::Ack).iter().filter(|e| e.flow == f).map(|e| e.time).min();
    let mut timed_out_before_an_ack = 0;
    for f in 0..200 {
        let ack = first_ack(f).expect("an ACK");
        let early = |k| h.events(k).into_iter().filter(|e| e.flow == f && e.time < ack).map(|e| e.time.0).collect::<Vec<u64>>();
        let (tx, rtx) = (early(EventKind::Tx), early(EventKind::Rtx));
        assert!(tx.iter().all(|&t| t == 0), "flow {f}: new data before its first ACK at {tx:?}");
        assert!(rtx.windows(2).all(|w| w[1] - w[0] >= rto_min), "flow {f}: retransmissions {rtx:?}");
        timed_out_before_an_ack += (!rtx.is_empty()) as u32;
    }
    assert!(timed_out_before_an_ack >= 50, "only {timed_out_before_an_ack} flows timed out before an ACK");
}

#[test]
fn swifts_timer_takes_a_sample_from_its_retransmissions_ack_and_ends_the_backoff_swift_3_6() {
    // One Swift flow of one packet, that packet dropped: the timer fires, the packet goes
    // again, and its ACK echoes the retransmission's own send time. Swift's RTO is "computed
    // using exponentially weighted moving average over the end-to-end RTT" (§3.6): that ACK
    // is a sample (the echo names the transmission, so Karn's ambiguity does not arise,
    // RFC 6298 §3) and ends the backoff. With TCP's rule (swift_rto = tcp, Karn) it is no
    // sample and the doubled RTO stays.
    use crate::scenario::SwiftRto;
    // the run to its end, and its estimator just before the retransmission's ACK arrives
    // (the connection starts with the handshake's sample of the unloaded path)
    let run = |swift_rto| {
        let spec = ScenarioSpec { swift_rto, rto_min_ps: Some(200 * PS_PER_US), ..swift_incast(1, 1, 100) };
        let mut h = Harness::traced(spec.clone());
        h.drop_nth(0, Kind::Data, 0).run();
        assert_eq!(h.counters().app_bytes, h.mss(), "the packet arrived");
        let rtx: Vec<Time> = h.events(EventKind::Rtx).iter().map(|e| e.time).collect();
        assert_eq!(rtx.len(), 1, "one timeout, one retransmission: {rtx:?}");
        let ack = h.events(EventKind::Ack).iter().map(|e| e.time).find(|&t| t > rtx[0]).expect("its ACK");
        let mut before = Harness::new(spec);
        before.drop_nth(0, Kind::Data, 0).start().run_until(Time(ack.0 - 1));
        let prior = before.conn(0).sender.rto.clone();
        assert_eq!(prior.backoffs, 1, "the timer backed off once");
        let r = prior.measure(rtx[0], ack);
        (h.conn(0).sender.rto.clone(), prior, r)
    };
    let (est, prior, r) = run(SwiftRto::Delay);
    let srtt0 = prior.srtt.expect("the handshake's sample").0;
    assert_eq!(est.srtt, Some(Time((7 * srtt0 + r.0) / 8)), "RFC 6298 §2.3 with the retransmission's delay {r:?}");
    assert_eq!((est.backoffs, est.rto), (0, est.base_rto()), "the sample ended the backoff");
    let (est, prior, _) = run(SwiftRto::Tcp);
    assert_eq!((est.srtt, est.backoffs, est.rto), (prior.srtt, 1, prior.rto), "Karn: no sample, the backoff stays");
}

// ---- where the time went (host::flowtime) -------------------------------------------------

/// The finished parts of a run with the time breakdown on.
fn parts(h: &Harness) -> Vec<crate::host::flowtime::PartTime> {
    h.w.conns.clocks.as_ref().expect("time_breakdown on").finished.clone()
}

/// A result with the time breakdown's fields (and the wall time) cleared: what a run with the
/// breakdown on must share with one without it.
fn without_time_split(r: &crate::SimResult) -> crate::SimResult {
    crate::SimResult {
        wall_seconds: 0.0,
        time_flows: None, time_flow_s: None, time_flow_request_s: None, time_flow_transmission_s: None,
        time_flow_queueing_s: None, time_flow_rto_wait_s: None, time_flow_recovery_s: None,
        time_flow_pause_s: None, time_flow_other_s: None, time_blocks: None, time_block_s: None,
        time_block_request_s: None, time_block_transmission_s: None, time_block_queueing_s: None,
        time_block_rto_wait_s: None, time_block_recovery_s: None, time_block_pause_s: None,
        time_block_other_s: None, time_flow_trim_recovery_s: None, time_flow_pull_wait_s: None,
        time_block_trim_recovery_s: None, time_block_pull_wait_s: None,
        ..r.clone()
    }
}

/// One server, one block of `segments` full segments, the breakdown on.
fn lone(segments: u64, init_cwnd: u32) -> ScenarioSpec {
    ScenarioSpec {
        servers: 1,
        sru_bytes: Some(segments * 1460),
        blocks: Some(1),
        init_cwnd_segments: Some(init_cwnd),
        time_breakdown: true,
        ..ScenarioSpec::default()
    }
}

#[test]
fn a_lone_flow_without_loss_whose_window_covers_its_part_is_all_transmission() {
    // 8 segments, an initial window of 8: the request reaches the server at 51.024 us (64
    // B: 0.512 us a link, 25 us each), its segments leave back to back, and the last
    // arrives 7 x 12 us after the first's 74 us: the part is the request's trip and its
    // transmission at the whole link (its fair share alone), nothing else
    let mut h = Harness::new(lone(8, 8));
    h.run();
    let p = parts(&h);
    assert_eq!(p.len(), 1);
    let s = p[0].split;
    assert_eq!(s.request, us(51.024).0);
    assert_eq!(s.transmission, us(74.0 + 7.0 * 12.0).0);
    assert_eq!((s.queueing, s.rto_wait, s.recovery, s.pause), (0, 0, 0, 0));
    assert_eq!(p[0].end - p[0].start, Time(s.sum()), "the components add up");
    let block = h.w.apps.sync_reads().unwrap().clients[0].block_times[0];
    assert_eq!(block, s.sum());
}

#[test]
fn a_lone_flow_ramping_up_in_slow_start_counts_the_ramp_beyond_its_share_as_queueing() {
    // the same 8 segments from an initial window of 2: the window, not the link, paces the
    // first round trips; that time beyond the fair-share ideal is what `queueing` holds
    // (docs/simulate.md: queueing includes slow start's ramp); nothing is lost
    let mut h = Harness::new(lone(8, 2));
    h.run();
    let s = parts(&h)[0].split;
    assert_eq!(s.transmission, us(74.0 + 7.0 * 12.0).0, "its fair share alone, as above");
    assert!(s.queueing > 0);
    assert_eq!((s.rto_wait, s.recovery, s.pause), (0, 0, 0));
    assert_eq!(parts(&h)[0].end - parts(&h)[0].start, Time(s.sum()));
}

#[test]
fn a_flow_whose_only_loss_is_its_last_segment_waits_one_rto_min_and_one_retransmission() {
    // 4 segments in one initial window, the last lost: the third's ACK is the flow's last
    // progress and restarts the timer (RFC 6298 §5.3), which fires RTOmin (200 ms, above
    // srtt + 4 rttvar) later; the retransmission then takes one segment's trip (74 us) in
    // the Loss state. Before the loss, the sender's loss-free time runs to that ACK: the
    // third segment arrives 74 + 2 x 12 us after the write, its 40 B ACK 50.64 us later,
    // 38.64 us past the 4 segments' fair-share time (74 + 3 x 12 us): that is `queueing`
    let mut h = Harness::new(lone(4, 4));
    h.drop_nth(0, Kind::Data, 3).run();
    assert_eq!(h.conn(0).sender.stats.timeouts, 1);
    let p = parts(&h);
    let s = p[0].split;
    assert_eq!(s.rto_wait, ms(200.0).0, "one RTOmin; the timer has no ticks (timer_ticks off)");
    assert_eq!(s.recovery, us(74.0).0);
    assert_eq!(s.transmission, us(74.0 + 3.0 * 12.0).0);
    assert_eq!((s.queueing, s.pause), (us(38.64).0, 0));
    assert_eq!(p[0].end - p[0].start, Time(s.sum()));
}

#[test]
fn a_lost_first_window_waits_its_rto_from_the_windows_transmission() {
    // the case of `a_lost_first_window_is_sent_again_when_the_timer_expires_rto_min_after_it_left`:
    // both segments leave at 51.024 us and die; the timer armed then fires 200 ms later
    let mut h = Harness::new(lone(4, 2));
    let mut first_two = 0;
    h.drop_where(move |p, _| {
        first_two += (p.kind == Kind::Data) as u32;
        p.kind == Kind::Data && first_two <= 2
    });
    h.run();
    let s = parts(&h)[0].split;
    assert_eq!(s.request, us(51.024).0);
    assert_eq!(s.rto_wait, ms(200.0).0);
    assert_eq!(parts(&h)[0].end - parts(&h)[0].start, Time(s.sum()));
}

#[test]
fn a_sender_held_by_pause_counts_the_hold_as_pause_time() {
    // 8 segments leave the server's NIC from 51.024 us, 12 us apart; an XOFF lands on the
    // NIC 1 ps before the fourth would start (87.024 us) and holds it 0xFFFF quanta (33.554432
    // ms at 1 Gbps); the part's PAUSE time is that hold, the first picosecond of it while
    // the third frame was still on the wire included (the NIC was held), so its loss-free
    // time falls 1 ps short of its fair-share ideal
    let spec = ScenarioSpec { pause: true, ..lone(8, 8) };
    let mut h = Harness::new(spec);
    h.at(us(87.024) - Time(1), Event::PauseOn(0));
    h.start().run_until(Time(PS_PER_S));
    let p = parts(&h);
    assert_eq!(p.len(), 1);
    let s = p[0].split;
    let hold = crate::net::pause::pause_time(0xFFFF, 1_000_000_000);
    assert_eq!(hold, Time(65_535 * 512 * 1000));
    assert_eq!(s.pause, hold.0);
    assert_eq!(s.transmission, us(74.0 + 7.0 * 12.0).0 - 1);
    assert_eq!(s.queueing, 0);
    assert_eq!(p[0].end - p[0].start, Time(s.sum()));
}

#[test]
fn in_a_collapse_every_part_adds_up_and_the_blocks_last_parts_make_the_block_times() {
    // FAST'08's collapse (16 servers, 256 KB blocks, 32 KB buffer): every part's components
    // add up to its completion time exactly, the blocks' last parts are the blocks, and the
    // time goes mostly to RTO waits (the collapse's mechanism, FAST'08 §5.1)
    let spec = ScenarioSpec { servers: 16, blocks: Some(10), time_breakdown: true, ..ScenarioSpec::default() };
    let mut h = Harness::new(spec.clone());
    h.run();
    let p = parts(&h);
    assert_eq!(p.len(), 16 * 10);
    for part in &p {
        assert_eq!(part.other(), 0, "{part:?}");
    }
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    let blocks: u64 = h.w.apps.sync_reads().unwrap().clients[0].block_times.iter().sum();
    assert_eq!((clocks.blocks.parts, clocks.blocks.time), (10, blocks));
    assert!(clocks.blocks.split.rto_wait > clocks.blocks.time / 2, "{:?}", clocks.blocks);
    // and the breakdown moves nothing: the run without it gives the same result
    let with = crate::run(&spec).unwrap();
    let without = crate::run(&ScenarioSpec { time_breakdown: false, ..spec }).unwrap();
    let strip = without_time_split;
    assert_eq!(strip(&with), strip(&without));
    assert!((with.time_block_s.unwrap() - with.block_time_mean_s).abs() < 1e-12);
}

#[test]
fn the_time_breakdown_is_refused_by_name_outside_the_reads_riaks_replies_and_the_one_shot_flows() {
    let riak = ScenarioSpec { servers: 4, workload: Workload::Riak, time_breakdown: true, ..ScenarioSpec::default() };
    assert!(riak.validate().is_ok());
    let spec = ScenarioSpec { riak_transport: RiakTransport::ErlangDist, ..riak };
    let e = spec.validate().err().expect("refused").to_string();
    assert!(e.starts_with("time_breakdown") && e.contains("riak (riak_transport per_pair)"), "{e}");
    for workload in [Workload::Incast, Workload::Shuffle, Workload::Permutation] {
        let spec = ScenarioSpec { servers: 4, workload, time_breakdown: true, ..ScenarioSpec::default() };
        assert!(spec.validate().is_ok(), "{workload:?}");
    }
}

#[test]
fn a_trimmed_packet_spends_the_time_from_its_trim_to_its_resends_arrival_in_trim_recovery() {
    // two NDP senders of one 1,500 B packet each (all their first window) into a 10 Gbps host whose
    // port holds one data packet: both reach the switch at 3.7 us (1.2 us on the wire, 2.5 us
    // a link); one goes on, the other is cut to its 40 B header (the queue's one place is the
    // packet on the wire: no tail to trim instead, no coin). The header follows the packet
    // (4.9 us, 32 ns, 2.5 us: 7.432 us at the receiver), whose ACK took the pacer's pull at
    // 7.4 us, so the NACK goes without one and the pull one packet time later (8.6 us)
    // reaches the sender at 13.664 us (32 ns + 2.5 us, twice); the resend arrives 7.4 us
    // later, at 21.064 us. The trimmed flow's part: 3.7 us sending at its fair share, then
    // 17.364 us from its trim to its resend's arrival; the other's, its 7.4 us trip alone
    let spec = ScenarioSpec { time_breakdown: true, ..ndp_incast(2, 1, 1) };
    let mut h = Harness::traced(spec);
    h.run();
    assert_eq!(h.net().trim_counts(), Some((1, 0, 0)));
    let p = parts(&h);
    let trimmed = p.iter().find(|x| x.split.trim_recovery > 0).expect("the trimmed flow's part");
    assert_eq!(h.conn(trimmed.flow).pull.as_ref().unwrap().sender.stats.nacks, 1);
    let rtx = h.events(EventKind::Rtx);
    assert_eq!((rtx.len(), rtx[0].time), (1, us(13.664)), "resent on the pull, as derived");
    assert_eq!((trimmed.start, trimmed.end), (Time::ZERO, us(21.064)));
    let s = trimmed.split;
    assert_eq!(s.transmission, us(3.7).0, "until its trim: within its fair share (7.4 us at 1/2)");
    assert_eq!(s.trim_recovery, us(21.064 - 3.7).0);
    assert_eq!((s.request, s.queueing, s.rto_wait, s.recovery, s.pause, s.pull_wait), (0, 0, 0, 0, 0, 0));
    let other = p.iter().find(|x| x.flow != trimmed.flow).unwrap();
    assert_eq!((other.end, other.split.transmission, other.split.sum()), (us(7.4), us(7.4).0, us(7.4).0));
    for x in &p {
        assert_eq!(x.other(), 0, "{x:?}");
    }
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    assert_eq!((clocks.blocks.parts, clocks.blocks.time), (1, us(21.064).0), "the incast ends with its last flow");
}

#[test]
fn a_lone_ndp_flow_clocked_by_its_pulls_waits_for_them_beyond_its_fair_share() {
    // one NDP flow of 3 packets with a first window of 1 into an idle 10 Gbps host: each
    // packet after the first goes when the pull riding on the previous one's ACK comes back
    // (7.4 us out, 5.064 us back: 12.464 us and 24.928 us), the last arrives at 32.328 us.
    // Until 24.928 us the sender has packets and no pull; its fair share alone is the first
    // packet's 7.4 us trip and 2 x 1.2 us: 9.8 us, counted against the last packet's 7.4 us
    // trip (open) first, then 2.4 us of the wait; the other 22.528 us waited for pulls
    let spec = ScenarioSpec { init_cwnd_segments: Some(1), time_breakdown: true, ..ndp_incast(1, 3, 8) };
    let mut h = Harness::traced(spec);
    h.run();
    let tx: Vec<Time> = h.events(EventKind::Tx).iter().map(|e| e.time).collect();
    assert_eq!(tx, vec![Time::ZERO, us(12.464), us(24.928)]);
    let p = parts(&h);
    assert_eq!((p.len(), p[0].end), (1, us(32.328)));
    let s = p[0].split;
    assert_eq!(s.transmission, us(9.8).0);
    assert_eq!(s.pull_wait, us(32.328 - 9.8).0);
    assert_eq!((s.request, s.queueing, s.rto_wait, s.recovery, s.pause, s.trim_recovery), (0, 0, 0, 0, 0, 0));
}

#[test]
fn in_one_shot_incasts_every_part_adds_up_and_the_breakdown_moves_nothing() {
    // 16 senders x 20 packets into one 10 Gbps host over a trimming port of 8 packets (NDP,
    // receiver credit) and over drop-tail TCP: every flow is one part whose components add
    // up to its completion time exactly; the incast's last part is the incast's completion
    // time; the trims show as trim recovery; and the run with the breakdown off gives the
    // same result, field for field
    let ndp = ScenarioSpec { time_breakdown: true, ..ndp_incast(16, 20, 8) };
    let credit = ScenarioSpec { transport: crate::host::Transport::Credit, ..ndp.clone() };
    let tcp = ScenarioSpec { transport: crate::host::Transport::Tcp, trimming: false, ..ndp.clone() };
    for spec in [ndp, credit, tcp] {
        let pulled = spec.transport.pulls();
        let mut h = Harness::new(spec.clone());
        h.run();
        let p = parts(&h);
        assert_eq!(p.len(), 16);
        for part in &p {
            assert_eq!(part.other(), 0, "{:?}: {part:?}", spec.transport);
        }
        let clocks = h.w.conns.clocks.as_ref().unwrap();
        let last = p.iter().map(|x| x.end).max().unwrap();
        assert_eq!((clocks.blocks.parts, clocks.blocks.time), (1, last.0), "{:?}", spec.transport);
        if pulled {
            let (trims, _, _) = h.net().trim_counts().unwrap();
            assert!(trims > 0 && clocks.all.split.trim_recovery > 0, "{:?}: {trims} trims", spec.transport);
            assert_eq!((clocks.all.split.recovery, clocks.all.split.rto_wait), (0, 0), "no TCP state, no timeout");
        } else {
            assert!(h.port(h.downlink(16)).drops > 0 && clocks.all.split.rto_wait + clocks.all.split.recovery > 0);
            assert_eq!((clocks.all.split.trim_recovery, clocks.all.split.pull_wait), (0, 0));
        }
        let with = crate::run(&spec).unwrap();
        let without = crate::run(&ScenarioSpec { time_breakdown: false, ..spec.clone() }).unwrap();
        assert_eq!(without_time_split(&with), without_time_split(&without), "{:?}", spec.transport);
        assert_eq!(with.time_block_s, with.incast_completion_s, "one incast, all started at 0");
        assert_eq!(with.time_flow_other_s, Some(0.0));
    }
}

// ---- where the time went: Riak's gets (a get is a block, each reply a part) ----------------

#[test]
fn a_get_whose_third_reply_is_dropped_at_a_two_packet_port_waits_one_rto_min_for_it() {
    // `one_get`'s get (4 nodes, three 1,460 B replies, 1 Gbps, 25 us links) into a node-0
    // port of 3,000 B: reply 0 reaches it at 88.024 us and goes on the wire, reply 1 (88.536
    // us) fits beside it, reply 2 (89.048 us) does not and dies. Each part runs from the
    // get's issue at 0:
    // - reply 0: its request's trip to replica 0 (51.024 us), then its 74 us one-way trip
    //   alone: all transmission (n = 3 parts overlap, but one packet's fair share is its
    //   first packet's trip);
    // - reply 1: request 51.536 us, then behind reply 0 at the port until 100.024 us: it
    //   lands at 137.024 us, 11.488 us past its 74 us share: queueing;
    // - reply 2: request 52.048 us; its segment, sent then (its last progress), is never
    //   ACKed, so its timer (armed at the write, RTOmin 200 ms above 3 x the handshake's
    //   RTT) fires 200 ms later: exactly RTOmin of rto_wait, then the resend's 74 us trip in
    //   the Loss state (recovery), landing at 200.126048 ms.
    // With a quorum of 3 the get completes at reply 2: the block is its part, and the get's
    // latency is the block's time to the picosecond.
    let spec = ScenarioSpec { buffer_bytes: 3000, time_breakdown: true, ..one_get_spec(3) };
    let h = get_of(spec, ms(201.0), false);
    assert_eq!(h.w.conns.get(2).sender.stats.timeouts, 1, "reply 2's flow timed out once");
    let p = parts(&h);
    assert_eq!(p.len(), 3);
    let by_flow = |f: FlowId| p.iter().find(|x| x.flow == f).unwrap();
    let s0 = by_flow(0).split;
    assert_eq!((s0.request, s0.transmission, s0.queueing, s0.rto_wait, s0.recovery), (us(51.024).0, us(74.0).0, 0, 0, 0));
    let s1 = by_flow(1).split;
    assert_eq!((s1.request, s1.transmission, s1.queueing, s1.rto_wait), (us(51.536).0, us(74.0).0, us(11.488).0, 0));
    let s2 = by_flow(2).split;
    assert_eq!((s2.request, s2.rto_wait, s2.recovery), (us(52.048).0, ms(200.0).0, us(74.0).0));
    assert_eq!((s2.transmission, s2.queueing, s2.pause), (0, 0, 0));
    for part in &p {
        assert_eq!(part.other(), 0, "{part:?}");
        assert_eq!(part.start, Time::ZERO, "every reply's part starts at its get's issue");
    }
    let g = gets(&h);
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    assert_eq!((g.completed, clocks.blocks.parts), (1, 1));
    assert_eq!(Time(clocks.blocks.time), ms(200.126048));
    assert_eq!(clocks.blocks.time, g.latencies.max().unwrap(), "the block is the get");
    assert_eq!(clocks.blocks.split, s2, "and its split is its completing reply's");
}

#[test]
fn at_a_quorum_of_two_the_get_is_its_second_reply_and_a_late_one_is_a_part_only() {
    // the same get at Riak's default quorum: it completes at reply 1 (137.024 us, queueing
    // behind reply 0); reply 2's RTO wait is in the parts' sums, not the get's
    let spec = ScenarioSpec { buffer_bytes: 3000, time_breakdown: true, ..one_get_spec(2) };
    let h = get_of(spec, ms(201.0), false);
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    assert_eq!((clocks.blocks.parts, Time(clocks.blocks.time)), (1, us(137.024)));
    assert_eq!((clocks.blocks.split.queueing, clocks.blocks.split.rto_wait), (us(11.488).0, 0));
    assert_eq!((clocks.all.parts, clocks.all.split.rto_wait), (3, ms(200.0).0));
}

#[test]
fn a_dropped_get_request_waits_out_its_timer_then_makes_its_trip() {
    // `one_get`'s first request dies at the switch and enters node 0's NIC again at
    // 200.025512 ms (the request's modelled RTOmin, `Conns::request_dropped`): its reply's
    // part waited that timer out from the get's issue. The request then reaches replica 0
    // 51.024 us later (0.512 + 25 us, twice), whose reply lands 74 us after that, alone:
    // 200.025512 ms of RTO wait, 51.024 us of request, its 74 us share, at 200.150536 ms
    let spec = ScenarioSpec { time_breakdown: true, ..one_get_spec(2) };
    let h = get_of(spec, ms(201.0), true);
    assert_eq!(h.counters().requests_dropped, 1);
    let p = parts(&h);
    assert_eq!(p.len(), 3);
    let late = p.iter().find(|x| x.flow == 0).unwrap();
    assert_eq!(late.end, ms(200.150536));
    assert_eq!(late.split.rto_wait, ms(200.025512).0);
    assert_eq!((late.split.request, late.split.transmission), (us(51.024).0, us(74.0).0));
    assert_eq!(late.other(), 0);
    assert!(!late.last_of_block, "the get completed at its other two replies");
}

#[test]
fn replies_pipelined_on_one_connection_are_parts_in_their_order() {
    // two nodes, every get asks the other (one connection each way); node 0 issues three
    // gets at 0, 1 and 2 us for 14,600 B replies (10 segments): replica 1 reads the requests
    // in order and writes each reply behind the one before on the same connection. Each
    // reply is its own part, they end in order, each from its own get's issue, every part
    // adds up, and each reply's wait behind the ones before it is in its open time
    // (transmission and queueing), nothing else (no loss: a 1 MiB port)
    let spec = ScenarioSpec {
        servers: 2,
        workload: Workload::Riak,
        replicas: 1,
        read_quorum: 1,
        reply_bytes: 14_600,
        get_rate: 0.001,
        buffer_bytes: 1 << 20,
        time_breakdown: true,
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec);
    for i in 0..3 {
        h.at(us(i as f64), Event::App { timer: AppTimer { app: 0, kind: 0 }.byte(), arg: 0 });
    }
    h.run_until(ms(5.0));
    let p = parts(&h);
    assert_eq!(p.len(), 3);
    assert!(p.iter().all(|x| x.flow == p[0].flow), "one connection");
    assert_eq!(p.iter().map(|x| x.start).collect::<Vec<_>>(), vec![us(0.0), us(1.0), us(2.0)]);
    assert!(p.windows(2).all(|w| w[0].end < w[1].end), "ended in order");
    for part in &p {
        assert_eq!(part.other(), 0, "{part:?}");
        let s = part.split;
        assert_eq!((s.rto_wait, s.recovery, s.pause), (0, 0, 0));
        assert!(s.request > 0 && s.transmission > 0);
    }
    // the later replies waited behind the earlier ones: more open time each
    let open = |x: &crate::host::flowtime::PartTime| x.split.transmission + x.split.queueing;
    assert!(open(&p[0]) < open(&p[1]) && open(&p[1]) < open(&p[2]), "{p:?}");
    let g = gets(&h);
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    assert_eq!((g.completed, clocks.blocks.parts), (3, 3));
    assert_eq!(p.iter().map(|x| (x.end - x.start).0).max(), g.latencies.max());
}

#[test]
fn in_a_riak_cluster_every_reply_adds_up_the_gets_are_the_blocks_and_the_breakdown_moves_nothing() {
    // Fritchie's cluster (20 nodes, 125 gets/s each asking 3 replicas for 100 KB, a 32 KiB
    // port: the blog's drops at 30 % load) for 0.5 s: every reply's components add up
    // exactly; the blocks are the completed gets (their slowest is the get latency's max);
    // timeouts show as RTO waits; and the result with the breakdown off is the same
    let spec = ScenarioSpec {
        servers: 20,
        workload: Workload::Riak,
        duration_ps: Some(PS_PER_S / 2),
        time_breakdown: true,
        ..ScenarioSpec::default()
    };
    let mut h = Harness::new(spec.clone());
    h.run();
    let p = parts(&h);
    let g = gets(&h);
    assert_eq!(p.len() as u64, g.replies_delivered);
    for part in &p {
        assert_eq!(part.other(), 0, "{part:?}");
    }
    let clocks = h.w.conns.clocks.as_ref().unwrap();
    assert_eq!(clocks.blocks.parts, g.completed);
    let blocks: Vec<&crate::host::flowtime::PartTime> = p.iter().filter(|x| x.last_of_block).collect();
    assert_eq!(blocks.len() as u64, g.completed);
    assert_eq!(blocks.iter().map(|x| (x.end - x.start).0).max(), g.latencies.max());
    let with = crate::run(&spec).unwrap();
    assert!(with.timeouts > 0 && clocks.all.split.rto_wait > 0, "the blog's timeouts: {}", with.timeouts);
    let without = crate::run(&ScenarioSpec { time_breakdown: false, ..spec }).unwrap();
    assert_eq!(without_time_split(&with), without_time_split(&without));
    assert_eq!(with.time_blocks, with.gets_completed);
    assert_eq!(with.time_flow_other_s, Some(0.0));
    assert_eq!(with.time_block_other_s, Some(0.0));
}

/// Long-lived Swift flows from `senders` hosts, `per_sender` each, to one 10 Gbps host (a
/// 10 us round trip, `queue`-packet port), run `ms` ms and measured over the last quarter.
fn swift_steady_incast(senders: u32, per_sender: u32, queue: u32, ms: u64, floor: f64) -> ScenarioSpec {
    ScenarioSpec {
        flows_per_sender: per_sender,
        sru_bytes: Some(1 << 40), // backlogged for the whole run
        duration_ps: Some(ms * PS_PER_MS),
        measure_from_ps: Some(ms * 3 / 4 * PS_PER_MS),
        rto_min_ps: Some(200 * PS_PER_US),
        swift_min_cwnd_floor: floor,
        ..swift_incast(senders, 1, queue)
    }
}

#[test]
fn long_lived_swift_flows_into_one_host_lose_nothing_after_warm_up_and_the_floor_1_variant_loses_swift_table_3() {
    // 20 senders x 50 long-lived flows (1000-to-1, Swift §5.3's setting scaled to 10 Gbps)
    // on a 200-packet port: the first windows (1000 x 2) overflow it, the flows converge in
    // the 150 ms warm-up, and the last 50 ms are the steady state Table 3 measures
    let run = |floor: f64| {
        let mut h = Harness::new(swift_steady_incast(20, 50, 200, 200, floor));
        h.run();
        h.w.steady().expect("a steady-state window")
    };
    let (swift, floor1) = (run(crate::tcp::congestion::swift::MIN_CWND), run(1.0));
    let window_s = 0.05;
    let line_payload_bps = 10e9 * 1460.0 / 1500.0;
    let rtt_us = |s: &crate::world::Steady| s.rtt_sum_ps as f64 / s.rtt_samples as f64 / 1e6;
    // Swift: no loss, no timeout, the link full (Table 3: "line-rate throughput ... almost
    // zero loss"); 95 %: the link's idle moments as 1000 paced flows hand over
    assert_eq!((swift.bytes_dropped, swift.timeouts), (0, 0), "Swift in steady state: {swift:?}");
    let goodput = swift.app_bytes as f64 * 8.0 / window_s;
    assert!(goodput >= 0.95 * line_payload_bps, "Swift's goodput {goodput} bps");
    // its delay near the target: base (12.5 us) + h (1.2 us) + at most fs_range (12 us) =
    // 25.7 us; twice that bounds an AIMD swinging about it
    assert!(rtt_us(&swift) < 2.0 * 25.7, "Swift's mean RTT {} us", rtt_us(&swift));
    // the floor at one packet: 1000 packets in flight against 200 of port and about 8 of
    // bandwidth-delay product; the port stays full (240 us of queue) and drops what does
    // not fit (Table 3's direction: "high latency and loss")
    assert!(floor1.bytes_dropped as f64 > 0.01 * floor1.bytes_sent as f64, "floor 1: {floor1:?}");
    assert!(rtt_us(&floor1) > 150.0, "floor 1's mean RTT {} us: three quarters of a full port's 240 us", rtt_us(&floor1));
}

#[test]
fn the_steady_state_window_counts_the_flows_that_delivered_nothing_in_it() {
    // 6 senders x 2 flows of 20 packets each (12 flows, 240 packets: 0.3 ms at 10 Gbps, plus
    // timeouts of 200 us and more where the 100-packet port drops) are done long before 15 ms:
    // a window from 15 ms sees none of them deliver; a window from 0 sees every one deliver
    let spec = |from_ms: u64| ScenarioSpec {
        flows_per_sender: 2,
        duration_ps: Some(20 * PS_PER_MS),
        measure_from_ps: Some(from_ms * PS_PER_MS),
        rto_min_ps: Some(200 * PS_PER_US),
        ..swift_incast(6, 20, 100)
    };
    let window = |from_ms: u64| {
        let mut h = Harness::new(spec(from_ms));
        h.run();
        assert!(h.w.conns().unacked_measured() == 0, "every flow done by 20 ms");
        h.w.steady().expect("a window")
    };
    let late = window(15);
    assert_eq!((late.app_bytes, late.flows_idle), (0, 12), "{late:?}");
    let whole = window(0);
    assert_eq!(whole.flows_idle, 0, "{whole:?}");
}

#[test]
fn the_steady_state_window_counts_without_changing_the_run() {
    // the run is split at measure_from, not perturbed: with and without the window, the same
    // events, the same totals; the window holds what happened after its start
    let spec = ScenarioSpec { duration_ps: Some(20 * PS_PER_MS), measure_from_ps: None, ..swift_steady_incast(10, 10, 50, 20, 0.001) };
    let totals = |spec: ScenarioSpec| {
        let mut h = Harness::new(spec);
        h.run();
        let c = h.counters();
        ((h.w.events(), c.app_bytes, c.data_bytes_sent, c.data_bytes_dropped), h.w.steady())
    };
    let (plain, none) = totals(spec.clone());
    let (split, window) = totals(ScenarioSpec { measure_from_ps: Some(5 * PS_PER_MS), ..spec });
    assert_eq!(none, None);
    assert_eq!(plain, split);
    let w = window.expect("a window");
    assert!(w.app_bytes > 0 && w.app_bytes < plain.1 && w.bytes_sent < plain.2, "{w:?}");
    assert_eq!(w.from, Time(5 * PS_PER_MS));
}

// ---- Linux's receive window: growth, autotuning, ping-pong (tcp::linux_rcv) ---------------

/// One server, blocks of four 1448-byte segments, the delayed ACK of Linux (40 ms), and the
/// three receiver rules as given; the ACK numbers the server received, in order.
fn linux_receiver_acks(blocks: u64, growth: bool, pingpong: bool, ratio: u32) -> (Vec<u64>, u64) {
    let spec = ScenarioSpec {
        servers: 1,
        mss_bytes: 1448,
        sru_bytes: Some(4 * 1448),
        blocks: Some(blocks),
        delayed_ack_ps: 40 * PS_PER_MS,
        timestamps: true,
        rcv_window_growth: growth,
        ack_pingpong: pingpong,
        rcv_scaling_ratio: ratio,
        ..ScenarioSpec::default()
    };
    let mut h = Harness::traced(spec);
    h.run();
    // pure ACKs only (a request's piggybacked ACK is logged with its payload)
    let acks = h.events(EventKind::Ack).iter().filter(|e| e.b == 0).map(|e| e.a).collect();
    (acks, h.conn(0).receiver.stats.delayed_ack_timeouts)
}

#[test]
fn a_segment_that_grows_the_window_is_acknowledged_at_once() {
    // ratio 162: window_clamp 82944 over rcv_ssthresh 64088, room for 6.5 steps of 2896
    // bytes; each of the block's four in-order segments takes one (tcp_grow_window sets
    // icsk_ack.quick) and is acknowledged alone: ACKs of 1, 2, 3 and 4 segments
    let (acks, timeouts) = linux_receiver_acks(1, true, false, 162);
    assert_eq!(acks, vec![1449, 2897, 4345, 5793]);
    assert_eq!(timeouts, 0);
    // without the rule the same block is acknowledged in pairs (RFC 1122 §4.2.3.2)
    let (acks, _) = linux_receiver_acks(1, false, false, 162);
    assert_eq!(acks, vec![2897, 5793]);
}

#[test]
fn outside_growth_segments_are_acknowledged_in_pairs() {
    // the default ratio 128: tcp_init_buffer_space's clamp 64088 is where rcv_ssthresh
    // starts, so there is no room; no quick ACK, pairs as RFC 1122 has them
    let (acks, _) = linux_receiver_acks(1, true, false, 128);
    assert_eq!(acks, vec![2897, 5793]);
}

#[test]
fn in_pingpong_mode_the_growth_quick_ack_is_held() {
    // block 1 as above (four growth ACKs, rcv_ssthresh 64088 -> 75672, still below 82944);
    // block 2's request leaves at once after block 1's last segment, within ato (40 ms):
    // tcp_event_data_sent enters ping-pong mode, and block 2's segments, though each still
    // grows the window, are acknowledged in pairs
    let (acks, timeouts) = linux_receiver_acks(2, true, true, 162);
    let b = 4 * 1448;
    assert_eq!(acks, vec![1449, 2897, 4345, 5793, b + 2897, b + 5793]);
    assert_eq!(timeouts, 0);
    // without ping-pong mode, block 2's first three segments take the rest of the room
    // (75672 + 2 x 2896, then the last 1480 bytes to 82944) and go alone; the fourth finds
    // none, is the block's last, and waits for the delayed-ACK timer
    let (acks, timeouts) = linux_receiver_acks(2, true, false, 162);
    assert_eq!(acks, vec![1449, 2897, 4345, 5793, b + 1449, b + 2897, b + 4345, b + 5793]);
    assert_eq!(timeouts, 1);
}

#[test]
fn drs_raises_the_clamp_when_the_bytes_read_per_receiver_rtt_grow_and_the_sender_sees_the_window() {
    // one 1 MiB response with autotuning: the receiver RTT comes from the data's TSecr,
    // and once a receiver RTT carried more than the first rcvq_space (10 x 1448) the clamp
    // rises above its 82944 start; rcv_ssthresh follows it, and the ACKs advertise it
    let spec = |autotune| ScenarioSpec {
        servers: 1,
        mss_bytes: 1448,
        sru_bytes: Some(1 << 20),
        blocks: Some(1),
        delayed_ack_ps: 40 * PS_PER_MS,
        timestamps: true,
        rcv_window_growth: true,
        rcv_autotuning: autotune,
        rcv_scaling_ratio: 162,
        rwnd_bytes: Some(1 << 30), // the linux preset's: the receiver's own window rules
        ..ScenarioSpec::default()
    };
    let mut h = Harness::traced(spec(true));
    h.run();
    let lx = *h.conn(0).receiver.linux.clone().unwrap();
    assert!(lx.grow_steps >= 1 && lx.window_clamp > 82_944, "clamp {} after {} steps", lx.window_clamp, lx.grow_steps);
    assert_eq!(lx.window_clamp, (lx.rcvbuf * 162) >> 8, "tcp_win_from_space of the grown buffer");
    assert!(lx.rcv_ssthresh > 82_944, "rcv_ssthresh followed: {}", lx.rcv_ssthresh);
    assert_eq!(h.conn(0).receiver.advertised_window(), lx.rcv_ssthresh);
    // and without autotuning the same response leaves the clamp where it began
    let mut h = Harness::traced(spec(false));
    h.run();
    let lx = *h.conn(0).receiver.linux.clone().unwrap();
    assert_eq!((lx.window_clamp, lx.rcv_ssthresh, lx.grow_steps), (82_944, 82_944, 0));
}

#[test]
fn without_zero_ms_samples_the_first_receiver_rtt_is_a_windows_time_and_drs_opens_the_windows() {
    // four servers at 100 Mbit/s behind an 8 KiB port, 100 us round trips: with every
    // timestamp sample at least 1 ms (Linux <= 6.15), DRS compares about 1 ms of data at a
    // time with its first 14480 bytes and a clamp mostly stays at 82944 bytes; since 6.16 a 0 ms
    // sample is none, the estimate is the time the first window took (milliseconds), and
    // DRS raises the buffer as the testbed's client did (docs/testbed.md, "The client's
    // receive window, opened by the kernel's receiver RTT")
    let spec = |from_window| ScenarioSpec {
        servers: 4,
        mss_bytes: 1448,
        rate_bps: 100_000_000,
        buffer_bytes: 8192,
        rtt_ps: 100 * PS_PER_US,
        sru_bytes: Some(256 * 1024),
        blocks: Some(5),
        delayed_ack_ps: 40 * PS_PER_MS,
        timestamps: true,
        rcv_window_growth: true,
        rcv_autotuning: true,
        rcv_rtt_from_window: from_window,
        rcv_scaling_ratio: 162,
        rwnd_bytes: Some(1 << 30),
        ..ScenarioSpec::default()
    };
    let clamps = |from_window| {
        let mut h = Harness::new(spec(from_window));
        h.run();
        (0..4).map(|f| h.conn(f).receiver.linux.clone().unwrap().window_clamp).collect::<Vec<_>>()
    };
    let (old, new) = (clamps(false), clamps(true));
    // lock-step servers: a clamp or two also grows from 1 ms estimates, over longer stalls
    assert!(old.contains(&82_944), "<= 6.15: a connection whose clamp never grew: {old:?}");
    assert!(new.iter().all(|&c| c > 500_000), "6.16: every clamp past 500 kB: {new:?}");
    assert!(old.iter().zip(&new).all(|(o, n)| n > o), "each connection's clamp larger: {old:?} -> {new:?}");
}


// ---- Linux's Disorder: RACK's RTT order and the flight SACKs leave (tcp::recovery::rack) ----

#[test]
fn with_linux_s_rack_order_and_flight_count_flows_send_new_data_in_disorder() {
    // two servers at 100 Mbit/s behind an 8 KiB port (docs/testbed.md, "2 servers at 8 KiB"):
    // with rack_rtt_sack_first and sacked_leave_flight, an ACK that moves SND.UNA and SACKs
    // later data leaves a hole sent with the acknowledged segment unmarked for a reordering
    // window, and the flow sends new data in Disorder, as the testbed's kernel did (its run 1:
    // 982 Disorder episodes, 2244 segments sent in them); without them a flow is there only
    // between a pure duplicate ACK and RACK's mark, and sends by limited transmit
    let disorder = |on: bool| {
        let spec = ScenarioSpec::from_json(serde_json::json!({
            "preset": "linux", "servers": 2, "rate_bps": 4_000_000_000u64, "shaper_rate_bps": 100_000_000u64,
            "shaper_burst_bytes": 6056, "buffer_bytes": 8192, "rtt_ps": 20 * PS_PER_US, "sru_bytes": 256 * 1024,
            "blocks": 10,
            "rack_rtt_sack_first": on, "sacked_leave_flight": on,
        }))
        .unwrap();
        let mut h = Harness::traced(spec);
        h.run();
        let rows = &h.w.cx.recorder.records.events;
        let mut state = [0u64; 2];
        let (mut entries, mut sent) = (0, 0);
        for e in rows {
            match e.kind {
                EventKind::State => {
                    entries += (e.a == 0 && e.b == 1) as u32;
                    state[e.flow as usize] = e.b;
                }
                EventKind::Tx => sent += (state[e.flow as usize] == 1) as u32,
                _ => {}
            }
        }
        (entries, sent)
    };
    let (on, off) = (disorder(true), disorder(false));
    // this build: 187 entries and 380 segments against 1 and 10; a tenfold margin claims only
    // that the rule makes Disorder common where it was rare, not its exact count
    assert!(on.0 >= 10 * off.0.max(1) && on.1 >= 10 * off.1.max(1), "Disorder: {on:?} against {off:?}");
}
