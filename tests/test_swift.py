"""Swift (`transport = swift`, docs/transports.md) from the Python front: impossible
combinations are refused naming the field, a Swift incast reports its least window, and
swift-incast's loss check is the paper's bar (the cwnd rules, the pacing and the timer's
samples are pinned in crates/sim/src/tcp/congestion/swift.rs and crates/sim/src/world/tests.rs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab import Scenario, UsageError, simulate

SWIFT = {"transport": "swift", "workload": "incast", "tcp": "sack"}


@pytest.mark.parametrize("given, blamed", [
    # Swift's own knobs mean nothing to another transport
    ({"workload": "incast", "swift_ai": 2.0}, "swift_ai"),
    ({"workload": "incast", "transport": "ndp", "trimming": True, "swift_base_target": "20us"}, "swift_base_target"),
    ({"workload": "incast", "swift_fs_range": "10us"}, "swift_fs_range"),
    ({"workload": "incast", "swift_rto": "tcp"}, "swift_rto"),
    ({**SWIFT, "swift_rto": "karn"}, "swift_rto"),
    # the flow-based scaling falls from fs_range at fs_min_cwnd to 0 at fs_max_cwnd
    ({**SWIFT, "swift_fs_min_cwnd": 50.0, "swift_fs_max_cwnd": 10.0}, "swift_fs_min_cwnd"),
    # (given alone, the maximum is the field named: the user's, not the default it meets)
    ({**SWIFT, "swift_fs_max_cwnd": 0.05}, "swift_fs_max_cwnd"),
    # Swift is the window: TCP's congestion control cannot run beside it
    ({**SWIFT, "cc": "dctcp"}, "cc"),
    # one-shot flows only (as NDP and credit): the field given is named
    ({"transport": "swift"}, "transport"),
    # the schema's ranges
    ({**SWIFT, "swift_max_mdf": 1.0}, "swift_max_mdf"),
    ({**SWIFT, "swift_beta": 0}, "swift_beta"),
])
def test_impossible_swift_combinations_are_refused_naming_the_field(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(servers=4, **given)
    assert e.value.param == blamed, e.value


def test_the_cli_refuses_a_swift_field_without_swift_in_one_line_exit_2():
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "4", "--workload",
                        "incast", "--swift-beta", "0.5"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--swift-beta" in r.stderr and "transport is swift" in r.stderr


def test_a_swift_incast_delivers_every_flow_and_reports_its_least_window():
    # 64 senders x 64 KB into one 10 Gbps host of a k = 8 fat tree: a base BDP of about
    # 10 packets shared by 64 flows leaves each well under one packet (Swift §3.4)
    s = Scenario(servers=64, topology="fat_tree", fat_tree_k=8, rate="10Gbps", rtt="4us", sru="64KB",
                 buffer_packets=200, **SWIFT)
    r = simulate(s).to_dict()
    assert r["transport"] == "swift"
    assert r["flows_completed"] == r["flows"] == 64
    assert r["swift_min_cwnd"] < 1.0
    # TCP's results carry no Swift field
    tcp = simulate(Scenario(servers=4, workload="incast", sru="16KB")).to_dict()
    assert "swift_min_cwnd" not in tcp


def test_the_drop_account_classes_every_drop_of_swift_incasts_128_senders():
    # scripts/drop-account.py (docs/transports.md, "Where the drops come from"): every loss is
    # matched to the transmission it was and given one class. At 128 senders (152 drops, seed
    # 1; the 1000-sender point takes 14 s here, too long for the suite) the first windows are
    # most of the losses (111) and a flow without an ACK sends nothing but its first window and
    # its timer's retransmissions (crates/sim/src/world/tests.rs pins that rule itself)
    from script_support import load_script

    mod = load_script("drop-account")
    r, d = mod.account(mod.scenario("swift-incast", "Swift", "128", []))
    assert len(d) == r.drops > 0, "every drop classed once"
    before_an_ack = d[d.had_ack == "no ACK yet"].phase
    assert set(before_an_ack) <= {"part of the first window", "the timeout's own retransmission"}, \
        before_an_ack.value_counts().to_dict()
    assert d.phase.value_counts().idxmax() == "part of the first window"


@pytest.mark.parametrize("swift_share, swift_later, passes", [
    (0.09, False, True),   # a tenth of DCTCP's loss rate and earlier: the abstract's claim holds
    (0.11, False, False),  # not "at least 10x lower than a DCTCP protocol"
    (0.05, True, False),   # low loss but a last flow later than DCTCP's ("sharply degrade with DCTCP")
])
def test_swift_incasts_loss_check_is_the_papers_tenth_of_dctcps_loss_rate(swift_share, swift_later, passes):
    # swift-incast's check 3 on a made-up result table: the bar follows Swift's abstract
    # ("loss rates that are at least 10x lower than a DCTCP protocol"), in the paper's loss
    # rate (§4.2: lost over sent), against DCTCP only; TCP SACK's numbers do not enter it
    import pandas as pd

    from incastlab.experiments import swift_incast as si

    dctcp_rate, sent = 0.2, 1_000_000
    rows = []
    for label, rate, completion in ((si.SWIFT, swift_share * dctcp_rate, 0.2 if swift_later else 0.05),
                                    (si.TCP, 0.0, 0.01), (si.DCTCP, dctcp_rate, 0.1), (si.NDP, 0.0, 0.01)):
        rows.append({"series": label, "x": 1000, "bytes_sent": sent, "bytes_dropped": rate * sent,
                     "drops": rate * sent / 1460, "incast_completion_s": completion})
    measured, ok = si.low_loss(pd.DataFrame(rows))
    assert ok is passes, measured


@pytest.mark.parametrize("given, blamed", [
    # several connections per sender are an incast's
    ({"flows_per_sender": 10}, "flows_per_sender"),
    ({"workload": "shuffle", "flows_per_sender": 10}, "flows_per_sender"),
    # the steady-state window ends at the duration: one-shot flows without one run until delivered
    ({**SWIFT, "measure_from": "1ms"}, "measure_from"),
    ({**SWIFT, "duration": "10ms", "measure_from": "10ms"}, "measure_from"),
    # Swift's window floor: Swift's, and no lower than §3.4's 0.001 packets
    ({"workload": "incast", "swift_min_cwnd_floor": 1.0}, "swift_min_cwnd_floor"),
    ({**SWIFT, "swift_min_cwnd_floor": 0.0001}, "swift_min_cwnd_floor"),
])
def test_the_steady_incasts_fields_refuse_what_they_cannot_mean(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(servers=4, **given)
    assert e.value.param == blamed, e.value


def test_the_cli_refuses_a_window_after_the_duration_in_one_line_exit_2():
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "4", "--workload",
                        "incast", "--duration", "5ms", "--measure-from", "6ms"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--measure-from" in r.stderr


def test_long_lived_swift_flows_report_the_steady_state_window():
    # 10 senders x 10 long-lived flows into one 10 Gbps host: the window's columns are there,
    # count only its 5 ms, and the goodput is at most the payload line rate
    s = Scenario(servers=10, flows_per_sender=10, rate="10Gbps", rtt="10us", buffer_packets=100, sru="1000GB",
                 duration="20ms", measure_from="15ms", rto_min="200us", **SWIFT)
    r = simulate(s).to_dict()
    assert r["steady_from_s"] == pytest.approx(0.015)
    assert 0 < r["steady_goodput_mbps"] <= 10e3 * 1460 / 1500
    assert r["steady_bytes_sent"] < r["bytes_sent"] and r["steady_segments_sent"] > 0
    assert r["steady_loss_rate"] == r["steady_bytes_dropped"] / r["steady_bytes_sent"]
    assert r["steady_rtt_mean_s"] > 10e-6
    assert r["steady_flows_idle"] in range(0, 10 * 10 + 1)  # a count of the 100 flows; its meaning: the harness test
    # without a window, no steady column
    assert "steady_goodput_mbps" not in simulate(Scenario(servers=4, workload="incast", sru="16KB")).to_dict()


@pytest.mark.parametrize("swift_loss, floor1_loss, floor1_rtt_us, passes", [
    (0.0, 0.05, 200.0, True),    # Table 3's direction: far more loss, far higher RTT
    (0.0, 0.0, 200.0, False),    # no loss at floor 1: not "degrades to ... loss"
    (0.01, 0.05, 200.0, False),  # only 5x Swift's loss
    (0.0, 0.05, 30.0, False),    # RTT not twice Swift's (20 us)
])
def test_swift_steady_incasts_floor_check_is_table_3s_direction(swift_loss, floor1_loss, floor1_rtt_us, passes):
    import pandas as pd

    from incastlab.experiments import swift_steady_incast as ssi

    rows = [{"series": ssi.SWIFT, "x": 100, "steady_loss_rate": swift_loss, "steady_rtt_mean_s": 20e-6},
            {"series": ssi.FLOOR1, "x": 100, "steady_loss_rate": floor1_loss, "steady_rtt_mean_s": floor1_rtt_us * 1e-6}]
    measured, ok = ssi.floor_one_degrades(pd.DataFrame(rows))
    assert ok is passes, measured
