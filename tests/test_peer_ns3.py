"""The ns-3 differential harness (``incastlab.peers.ns3``) and the trace differ
(``incastlab.peers.tracediff``).

What it shares with the ns-2 harness (the grid, ratios, tables, records) is tested in
test_peer_compare.py. Unit tests need no ns-3: a stand-in shell script plays the peer's
binary where a run is needed. The end-to-end test (``-m ns3``) runs the real peer; point
it at a built binary with ``INCASTLAB_NS3_BINARY=/path/to/ns3-incast``, or let it build
one (minutes).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from incastlab import EnvironmentProblem, Scenario, UsageError
from incastlab.peers import ns3, tracediff
from incastlab.peers.tracediff import Sent
from peer_support import CONTEXT, NEITHER_PEER_EXPRESSES, executable

# What ns3-incast --header=true prints (a real 2 s run at 4 servers).
NS3_OUTPUT = (
    "N,sru,buffer,rto_min,sim_seconds,blocks_completed,goodput_mbps,tcp_timeouts,drops_at_bottleneck,"
    "wall_seconds,rate,tcp,bottleneck_pkts,events,wall_run_seconds,other_drops,max_queue_bytes,tc_drops,"
    "devq_drops,del_ack_count,sack,link_pkts\n"
    "4,262144,32768,200ms,2.000000,19,82.858,9,470,1.566,1Gbps,TcpNewReno,14318,199796,1.548,0,31542,470,0,1,0,"
    "57750\n"
)

# A hand-written trace (1 Gbps: one 1500 B serialization time is 12 us). How each send is
# classified, and each drop matched, is in the comment at its end.
HAND_TRACE = """\
0.000050000,enq,0,0,0,1
0.000100000,tx,0,1,1460
0.000100000,tx,0,1461,1460
0.000100000,tx,1,1,1460
0.000111999,tx,1,1461,1460
0.000124000,tx,0,2921,1460
0.000130000,drop,0,1461,1460,21
0.000131000,drop,1,1461,1460,21
0.000140000,ack,0,1461,0
0.000200000,rtx,0,1461,1460
0.000212000,tx,0,4381,1460
0.000230000,drop,0,1461,1460,21
0.000231000,drop,0,0,0,21
0.000300000,tx,1,1461,1460
0.000310000,drop,1,1461,1460,21
0.000400000,rto,1,200000,400000
"""
# flow 0 seq 1:     first send of flow 0                    -> new, idle NIC
# flow 0 seq 1461:  same instant as flow 0's previous send  -> back-to-back
# flow 1 seq 1:     first send of flow 1                    -> new, idle NIC
# flow 1 seq 1461:  11.999 us after flow 1's previous       -> back-to-back
# flow 0 seq 2921:  24 us after flow 0's previous           -> new, idle NIC
# drop 0/1461 @130, drop 1/1461 @131                        -> both back-to-back sends
# rtx 0/1461 @200:  76 us after flow 0's previous           -> retransmission, idle NIC
# tx 0/4381 @212:   exactly 12 us after                     -> new, idle NIC (not < 12 us)
# drop 0/1461 @230: latest send is the rtx                  -> retransmission, lost retransmit
# drop 0/0 @231:    no send of (0, 0)                       -> unmatched
# tx 1/1461 @300:   188 us after; (1, 1461) sent before     -> new, idle NIC, but a resend
# drop 1/1461 @310: latest send is that resend              -> new idle, lost retransmit
GBPS = 10**9


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def fake_ns3(tmp_path: Path) -> Path:
    """A stand-in for ns3-incast: prints the real result line and writes HAND_TRACE to --trace."""
    trace = write(tmp_path / "hand.csv", HAND_TRACE)
    return executable(tmp_path / "ns3-incast", f"""#!/bin/sh
for a in "$@"; do case "$a" in --trace=*) cp {trace} "${{a#--trace=}}";; esac; done
cat <<'OUT'
{NS3_OUTPUT}OUT
""")


# --- Scenario -> flags -----------------------------------------------------------------------


def test_fast08_defaults_map_to_the_readme_settings_that_match_incastlab():
    assert ns3.ns3_args(Scenario(servers=16)) == [
        "--servers=16", "--sru=262144", "--buffer=32768", "--rate=1Gbps", "--delay=25us", "--rtoMin=200ms",
        "--clockGranularity=1us", "--simTime=20", "--tcp=TcpNewReno", "--sack=false",
        "--ns3::TcpSocketBase::LimitedTransmit=true", "--delAckCount=1", "--initCwnd=2", "--rcvBuf=29200",
        "--mss=1460", "--timestamps=false", "--jitterUs=0", "--seed=1"]


def test_limited_transmit_is_always_passed_because_ns3_defaults_it_on():
    on = ns3.ns3_args(Scenario(servers=4, limited_transmit=True))
    off = ns3.ns3_args(Scenario(servers=4, limited_transmit=False))
    assert "--ns3::TcpSocketBase::LimitedTransmit=true" in on
    assert "--ns3::TcpSocketBase::LimitedTransmit=false" in off


def test_sack_is_newreno_with_sack_on():
    args = ns3.ns3_args(Scenario(servers=4, tcp="sack"))
    assert "--tcp=TcpNewReno" in args and "--sack=true" in args


def test_reno_is_refused_saying_ns3_has_no_reno_fast_recovery():
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, tcp="reno"))
    assert e.value.param == "tcp" and "no Reno" in e.value.allowed


def test_delayed_ack_on_is_two_segments_with_its_timeout():
    args = ns3.ns3_args(Scenario(servers=4, delayed_ack="40ms"))
    assert "--delAckCount=2" in args and "--delAckTimeout=40ms" in args


def test_units_are_written_exactly_as_ns3_parses_them():
    args = ns3.ns3_args(Scenario(servers=4, rtt="1us", rate="2.5Gbps", duration="0.5s", jitter="2500ns",
                                 rto_min="1500us", timer_granularity="1ns", rwnd="1MiB", init_cwnd=10, mss=1000,
                                 buffer="64KiB", sru="1MiB", seed=7))
    for flag in ("--delay=250ns", "--rate=2500Mbps", "--simTime=0.5", "--jitterUs=2.5", "--rtoMin=1500us",
                 "--clockGranularity=1ns", "--rcvBuf=1048576", "--initCwnd=10", "--mss=1000", "--buffer=65536",
                 "--sru=1048576", "--seed=7"):
        assert flag in args


def test_timestamps_are_passed_with_a_warning_about_ns3s_millisecond_clock():
    s = Scenario(servers=4, timestamps=True)
    assert "--timestamps=true" in ns3.ns3_args(s)
    assert any("ms" in w for w in ns3.ns3_warnings(s))


def test_seed_zero_is_refused_because_ns3_refuses_it():
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, seed=0))
    assert e.value.param == "seed"


# One value other than the default for every field the peer cannot express: those neither
# peer can (peer_support), then ns-3's own.
NOT_EXPRESSIBLE = {**NEITHER_PEER_EXPRESSES, "block": "1MiB", "dupack_threshold": 2, "rto_max": "10s",
                   "send_jitter": "1us", "buffer_packets": 20}


def test_every_inexpressible_field_has_a_sample_here():
    assert set(NOT_EXPRESSIBLE) == set(ns3.INEXPRESSIBLE)


@pytest.mark.parametrize("field, value", sorted(NOT_EXPRESSIBLE.items()))
def test_an_inexpressible_field_is_refused_naming_it(field, value):
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, **CONTEXT.get(field, {}), **{field: value}))
    assert e.value.param in (field, *CONTEXT.get(field, {}))
    assert "ns-3 peer cannot express" in e.value.allowed


def test_dctcp_is_refused_as_cubic_is():
    # the sample above is cubic; the peer runs TcpNewReno over drop-tail queues, no DCTCP either
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, cc="dctcp"))
    assert e.value.param == "cc" and "DCTCP" in e.value.allowed


def test_every_scenario_field_is_classified_once():
    tables = [set(ns3.MAPPED), set(ns3.HARD_WIRED), set(ns3.INEXPRESSIBLE)]
    assert [f for f in Scenario.model_fields if ns3.classify_field(f) is None] == []
    assert sum(map(len, tables)) == len(set.union(*tables)), "a field is in two tables"
    assert set.union(*tables) <= set(Scenario.model_fields), "a table names a field Scenario no longer has"


def test_a_field_missing_from_the_tables_is_still_refused_when_set(monkeypatch):
    monkeypatch.delitem(ns3.INEXPRESSIBLE, "udp")
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, udp=0.01))
    assert e.value.param == "udp" and "newer than peers/ns3.py" in e.value.allowed


def test_a_hard_wired_rule_set_for_both_must_be_ns3s():
    with pytest.raises(UsageError) as e:
        ns3.ns3_args(Scenario(servers=4, buffer_admission="bytes"))
    assert e.value.param == "buffer_admission" and "--ours" in e.value.allowed
    ns3.ns3_args(Scenario(servers=4, buffer_admission="mtu_slots", header=42))  # ns-3's own: accepted
    ns3.ns3_args(Scenario(servers=4))  # left at our defaults: they describe our model only


def test_ns3_rules_make_a_scenario_the_peer_accepts():
    rules = ns3.ns3_rules(Scenario(servers=4))
    assert rules == {"header": 42, "buffer_admission": "mtu_slots", "rto_backoff": "new_ack", "tcp_rules": "ns3",
                     "tie_break": "fifo"}
    ns3.ns3_args(Scenario(servers=4, **rules))
    assert ns3.ns3_rules(Scenario(servers=4, timestamps=True))["header"] == 54
    assert "tcp_rules" not in ns3.ns3_rules(Scenario(servers=4, tcp="sack"))


# --- the peer's result line and binary -------------------------------------------------------


def test_the_result_line_parses_into_numbers_and_words():
    row = ns3.parse_result(NS3_OUTPUT)
    assert row["N"] == 4 and row["blocks_completed"] == 19 and row["goodput_mbps"] == 82.858
    assert row["tcp_timeouts"] == 9 and row["drops_at_bottleneck"] == 470 and row["max_queue_bytes"] == 31542
    assert row["rto_min"] == "200ms" and row["tcp"] == "TcpNewReno"


def test_run_ns3_passes_header_and_trace_and_reads_the_line(fake_ns3, tmp_path):
    row = ns3.run_ns3(fake_ns3, ["--servers=4"], trace=tmp_path / "t.csv")
    assert row["blocks_completed"] == 19
    assert (tmp_path / "t.csv").read_text() == HAND_TRACE


def test_a_missing_peer_says_where_it_looked_and_how_to_point_at_it(tmp_path, monkeypatch):
    monkeypatch.delenv("INCASTLAB_NS3_PEER", raising=False)
    with pytest.raises(EnvironmentProblem) as e:
        ns3.peer_dir(tmp_path / "nowhere")
    message = str(e.value)
    assert str(tmp_path / "nowhere") in message and "--peer" in message and "INCASTLAB_NS3_PEER" in message
    assert "\n" not in message


def test_a_given_binary_is_used_as_is(fake_ns3, tmp_path, monkeypatch):
    monkeypatch.setenv("INCASTLAB_NS3_DIR", str(tmp_path / "empty-cache"))
    assert ns3.ns3_binary(fake_ns3, peer=tmp_path / "nowhere") == fake_ns3.resolve()
    monkeypatch.setenv("INCASTLAB_NS3_BINARY", str(fake_ns3))
    assert ns3.ns3_binary(peer=tmp_path / "nowhere") == fake_ns3.resolve()


def test_a_given_path_that_is_not_a_program_is_refused(tmp_path):
    with pytest.raises(UsageError) as e:
        ns3.ns3_binary(write(tmp_path / "ns3-incast", "not a program"))
    assert e.value.param == "--ns3-binary"


def test_a_cached_binary_is_used_without_the_peer(tmp_path, monkeypatch):
    monkeypatch.delenv("INCASTLAB_NS3_BINARY", raising=False)
    monkeypatch.setenv("INCASTLAB_NS3_DIR", str(tmp_path))
    cached = executable(tmp_path / "ns3-incast", "#!/bin/sh\n")
    assert ns3.ns3_binary(peer=tmp_path / "nowhere") == cached


def fake_peer(root: Path) -> Path:
    """A peer whose build.sh "compiles" by writing a script to its OUTPUT argument."""
    root.mkdir()
    write(root / "incast.cc", "// stand-in\n")
    write(root / "build.sh", 'printf "#!/bin/sh\\n" > "$2"; chmod +x "$2"; echo "built $2"\n')
    return root


def fake_venv(root: Path) -> Path:
    """A venv whose python answers the probe for the ns3 package with 'installed'."""
    (root / "venv" / "bin").mkdir(parents=True)
    executable(root / "venv" / "bin" / "python", "#!/bin/sh\nexit 0\n")
    return root / "venv"


def test_a_missing_binary_is_built_into_the_cache_from_the_peer(tmp_path, monkeypatch):
    monkeypatch.delenv("INCASTLAB_NS3_BINARY", raising=False)
    cache = tmp_path / "cache"
    fake_venv(cache)
    built = ns3.ns3_binary(peer=fake_peer(tmp_path / "peer"), cache=cache)
    assert built == cache / "ns3-incast" and os.access(built, os.X_OK)
    assert not (cache / "ns3-incast.partial").exists()


def test_a_cached_binary_older_than_the_peer_source_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.delenv("INCASTLAB_NS3_BINARY", raising=False)
    cache = tmp_path / "cache"
    fake_venv(cache)
    old = executable(cache / "ns3-incast", "#!/bin/sh\necho old\n")
    os.utime(old, (1, 1))
    ns3.ns3_binary(peer=fake_peer(tmp_path / "peer"), cache=cache)
    assert "old" not in old.read_text()


# --- the grid and the table --------------------------------------------------------------


def test_points_go_servers_by_limited_transmit_and_are_tagged_by_it():
    points = ns3.build_grid([4, 16], [True, False], {"duration": "1s"}, {})
    assert [(p.shared.servers, p.shared.limited_transmit) for p in points] == [
        (4, True), (4, False), (16, True), (16, False)]
    assert [p.tag for p in points] == ["n4-lt-on", "n4-lt-off", "n16-lt-on", "n16-lt-off"]
    assert points[1].peer_args == tuple(ns3.ns3_args(points[1].shared))


def test_seeded_points_pass_their_seed_and_name_it_in_file_names():
    points = ns3.build_grid([4], [True], {"jitter": "3us"}, {}, seeds=3)
    assert [p.tag for p in points] == ["n4-lt-on-seed1", "n4-lt-on-seed2", "n4-lt-on-seed3"]
    assert all("--seed=%d" % p.shared.seed in p.peer_args for p in points)


def test_ns3_rules_are_ns3s_on_our_side_only():
    [p] = ns3.build_grid([4], [True], {}, {}, with_ns3_rules=True)
    assert {k: getattr(p.ours, k) for k in ns3.HARD_WIRED} == ns3.ns3_rules(p.shared)
    assert p.shared.tcp_rules == "rfc"


def test_the_table_is_headed_by_lt_and_ns3():
    [p] = ns3.build_grid([4], [False], {"duration": "1s"}, {})
    c = ns3.Comparison(p, {"blocks": 30, "goodput_mbps": 1.0, "timeouts": 3, "drops": 5},
                       {"blocks": 20, "goodput_mbps": 1.0, "timeouts": 0, "drops": 10}, 0.01, 1.0)
    header, _, row = ns3.render_table([c]).splitlines()
    assert header.split()[:5] == ["servers", "LT", "blocks", "ns-3", "ratio"] and row.split()[:2] == ["4", "off"]
    assert ns3.agreement_line([c]) == "blocks within ±25% of ns-3: 0 of 1 points"
    assert ns3.render_means([c])[1] == "mean blocks within ±25% of ns-3's mean: 0 of 1 points"
    assert set(ns3.to_record(c)) >= {"ns3", "ns3_args", "ns3_wall_seconds", "limited_transmit"}


def test_the_command_runs_both_simulators_with_a_stand_in_peer(fake_ns3, tmp_path, capsys):
    rc = ns3.main(["--servers", "2", "--duration", "20ms", "--limited-transmit", "on", "--ns3-binary", str(fake_ns3),
                   "--trace-dir", str(tmp_path / "traces"), "--csv", str(tmp_path / "out.csv"), "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    [record] = [json.loads(line) for line in out.splitlines()]
    assert record["ns3"]["blocks"] == 19 and record["ns3"]["lost_retransmits"] == 2  # the stand-in's HAND_TRACE
    assert record["incastlab"]["blocks"] > 0 and "lost_retransmits" in record["incastlab"]
    assert (tmp_path / "traces" / "ns3-n2-lt-on.csv").exists()
    assert (tmp_path / "traces" / "incastlab-n2-lt-on.csv").stat().st_size > 0
    assert "blocks_ratio" in (tmp_path / "out.csv").read_text().splitlines()[0]


@pytest.mark.parametrize("args, named", [
    (["--set", "udp=0.1"], "udp"),
    (["--set", "tcp=reno"], "tcp"),
    (["--set", "dupack_threshold=2"], "dupack_threshold"),
    (["--set", "bogus=1"], "--set"),
    (["--set", "servers=3"], "--set"),
    (["--ours", "limited_transmit=on"], "--ours"),
    (["--set", "rto_backoff=sample"], "rto_backoff"),
    (["--ours", "buffer=1"], "buffer"),
    (["--servers", "0"], "--servers"),
    (["--limited-transmit", "maybe"], "--limited-transmit"),
    (["--ns3-binary", "/nonexistent/ns3-incast"], "--ns3-binary"),
])
def test_bad_input_is_one_line_and_exit_status_2(args, named, capsys):
    assert exit_status(ns3.main, ["--duration", "10ms", *args]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def exit_status(main, argv: list[str]) -> int:
    """What the command exits with, whether argparse exits or main returns."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


# --- traces ----------------------------------------------------------------------------------


def test_times_are_read_as_exact_picoseconds():
    assert tracediff.parse_time_ps("0.000012000") == 12_000_000
    assert tracediff.parse_time_ps("0.000111999") - tracediff.parse_time_ps("0.000100000") == 11_999_000
    assert tracediff.parse_time_ps("1e-6") == 1_000_000
    assert tracediff.parse_time_ps("2.000000000001") == 2 * 10**12 + 1


def test_both_line_widths_parse():
    assert tracediff.parse_line("0.5,drop,3,1461,1460,21") == tracediff.Event(5 * 10**11, "drop", 3, 1461, 1460, 21, 0)
    assert tracediff.parse_line("0.5,rto,3,200000,400000").c is None


def test_a_line_that_is_not_an_event_is_refused_naming_file_and_line(tmp_path):
    path = write(tmp_path / "bad.csv", "0.1,tx,0,1,1460\n0.2,tx,zero,1,1460\n")
    with pytest.raises(UsageError) as e:
        tracediff.read_trace(path)
    assert e.value.param == f"{path}:2"


def test_hand_trace_kinds_are_counted(tmp_path):
    t = tracediff.read_trace(write(tmp_path / "a.csv", HAND_TRACE))
    assert dict(t.counts) == {"enq": 1, "tx": 7, "rtx": 1, "drop": 5, "ack": 1, "rto": 1}
    assert t.start_ps == 100_000_000


def test_sends_are_classified_by_the_gap_to_their_flows_previous_send(tmp_path):
    t = tracediff.read_trace(write(tmp_path / "a.csv", HAND_TRACE))
    stats = tracediff.drop_stats(t.data, tracediff.serialization_ps(GBPS))
    assert dict(stats.sent) == {Sent.NEW_IDLE: 5, Sent.BACK_TO_BACK: 2, Sent.RTX_IDLE: 1}
    assert dict(stats.dropped) == {Sent.NEW_IDLE: 1, Sent.BACK_TO_BACK: 2, Sent.RTX_IDLE: 1}
    assert stats.rate(Sent.NEW_IDLE) == 0.2 and stats.rate(Sent.BACK_TO_BACK) == 1.0
    assert stats.unmatched == 1 and stats.lost_retransmits == 2


def test_one_serialization_time_is_1500_bytes_at_the_link_rate():
    assert tracediff.serialization_ps(GBPS) == 12_000_000
    assert tracediff.serialization_ps(10 * GBPS) == 1_200_000


def test_lost_retransmits_of_a_trace_file(tmp_path):
    assert tracediff.lost_retransmits(write(tmp_path / "a.csv", HAND_TRACE)) == 2


def test_until_counts_from_the_first_data_packet_and_flow_selects_one(tmp_path):
    path = write(tmp_path / "a.csv", HAND_TRACE)
    early = tracediff.read_trace(path, until_s=30e-6)  # up to 0.000130: the enq before the first tx counts
    assert dict(early.counts) == {"enq": 1, "tx": 5, "drop": 1}
    one = tracediff.read_trace(path, flow=1)
    assert dict(one.counts) == {"tx": 3, "drop": 2, "rto": 1}


FLOW0_A = "0.1,tx,0,1,1460\n0.1,tx,0,1461,1460\n0.2,drop,0,1461,1460,21\n0.3,rtx,0,1461,1460\n"
FLOW0_B = "0.5,tx,0,1,1460\n0.5,tx,0,1461,1460\n0.6,tx,0,2921,1460\n0.7,drop,0,2921,1460,21\n"


def test_first_divergence_is_the_first_differing_kind_or_sequence(tmp_path):
    a = tracediff.read_trace(write(tmp_path / "a.csv", FLOW0_A)).data
    b = tracediff.read_trace(write(tmp_path / "b.csv", FLOW0_B)).data
    assert tracediff.first_divergence(a, b) == 2
    assert tracediff.first_divergence(a, a) is None
    assert tracediff.first_divergence(a[:2], a) == 2  # one run ends early


def test_the_divergence_report_shows_both_sides_around_it_with_times_from_the_start(tmp_path):
    a = tracediff.read_trace(write(tmp_path / "a.csv", FLOW0_A))
    b = tracediff.read_trace(write(tmp_path / "b.csv", FLOW0_B))
    text = tracediff.render_divergence(0, a, b, a.data, b.data, context=1)
    title, _, _, before, at, after = text.splitlines()
    assert "event 2" in title
    assert before.split() == ["1", "0.000000", "tx", "1461", "0.000000", "tx", "1461"]
    assert at.split() == [">", "2", "100.000000", "drop", "1461", "100.000000", "tx", "2921"]
    assert after.split() == ["3", "200.000000", "rtx", "1461", "200.000000", "drop", "2921"]


def test_the_tracediff_command_prints_counts_rates_and_divergences(tmp_path, capsys):
    rc = tracediff.main([str(write(tmp_path / "a.csv", HAND_TRACE)), str(write(tmp_path / "b.csv", FLOW0_B))])
    out = capsys.readouterr().out
    assert rc == 0
    assert "events by kind" in out and "back-to-back burst" in out and "flow 1: first divergence" in out
    assert "dropped retransmissions" in out


@pytest.mark.parametrize("extra", [[], ["--until", "-1"], ["--rate", "fast"]])
def test_the_tracediff_command_refuses_bad_input_in_one_line(extra, tmp_path, capsys):
    trace = write(tmp_path / "a.csv", HAND_TRACE)
    argv = [str(tmp_path / "none.csv"), str(trace)] if not extra else [str(trace), str(trace), *extra]
    assert exit_status(tracediff.main, argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- end to end against the real peer ----------------------------------------------------------


@pytest.mark.ns3
def test_a_tiny_grid_against_the_real_ns3_peer(capsys):
    rc = ns3.main(["--servers", "4,16", "--duration", "2s", "--limited-transmit", "on", "--lost-retransmits",
                   "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert [(r["servers"], r["limited_transmit"]) for r in records] == [(4, True), (16, True)]
    for r in records:
        for side in ("incastlab", "ns3"):
            assert set(r[side]) == {"blocks", "goodput_mbps", "timeouts", "drops", "lost_retransmits"}
        assert r["ns3"]["blocks"] > 0 and r["incastlab"]["blocks"] > 0
        for key in ("blocks", "goodput_mbps", "drops"):
            assert r["ratio"][key] > 0 and math.isfinite(r["ratio"][key])
    assert "blocks within ±25% of ns-3" in captured.err
