"""The verdict at any load (issue 26): its rule on hand-made seconds, the ground truth it is
judged against, the per-interval fan-in from socket readings, and the Millisampler-style
series both faces write."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from incastlab.monitor import verdict
from incastlab.monitor.flows import FlowPoller, Reading, StallTracker, fold
from incastlab.monitor.senders import Delivery, SenderCounter, TcpSocket

GBPS = 1e9


def second(avg, peak, *, fanin=None, senders=None, timeouts=0, drops=0, retrans=0, dsack=None, stalls=None,
           line=GBPS):
    """One second of a host's evidence (rx only)."""
    runs = [3] if line and peak >= verdict.LINE_FRACTION * line else []
    return verdict.SecondFacts([verdict.DirectionFacts("rx", avg, peak, runs)], line, timeouts, retrans,
                               {"switch port": drops}, senders, dsack,
                               fanin=None if fanin is None else verdict.FanIn(fanin, 1e-3), stalls=stalls)


# -- the rule at any load -------------------------------------------------------------------

@pytest.mark.parametrize("util", [0.05, 0.3, 0.55, 0.8])
def test_fan_in_overflow_and_timeouts_are_incast_at_any_load(util):
    # the Riak blog's busy cluster: above a third of the link the peak cannot be 3x the average
    f = second(util * GBPS, 1.0 * GBPS, fanin=12, senders=15, timeouts=20, drops=300)
    v = verdict.judge(f)
    assert v.level == "incast" and "12 TCP senders within one 1 ms at line rate" in v.evidence
    # the rule before issue 26 sees it only below a third of the link
    assert verdict.judge_ratio(f).level == ("incast" if util < 1 / 3 else "none")


def test_a_lone_flows_own_loss_and_stall_is_not_incast():
    f = second(0.6 * GBPS, GBPS, fanin=1, senders=1, timeouts=3, drops=2000)
    v = verdict.judge(f)
    assert v.level == "none" and "one sender" in v.evidence


def test_steady_many_flow_load_without_overflow_is_not_incast():
    # 8 paced flows at 75 %: they meet at line rate in some millisecond, nothing is lost
    v = verdict.judge(second(0.75 * GBPS, GBPS, fanin=8, senders=8))
    assert v.level == "none" and "no overflow" in v.evidence


def test_fan_in_without_line_rate_is_no_fan_in_in_the_same_instants():
    # many flows trickling (the fan-in per interval counts only intervals at line rate)
    v = verdict.judge(second(0.2 * GBPS, 0.4 * GBPS, fanin=0, senders=30, timeouts=2, drops=5))
    assert v.level == "none" and "no fan-in at line rate" in v.evidence


def test_overflow_without_a_timeout_is_possible_incast():
    v = verdict.judge(second(0.5 * GBPS, GBPS, fanin=5, senders=5, drops=40))
    assert v.level == "possible" and "no RTO timeout" in v.evidence


def test_a_timeout_a_second_after_its_burst_is_incast():
    # the burst and its drops at 0.9 s, the RTO 200 ms later, in the next second
    burst = second(0.4 * GBPS, GBPS, fanin=9, senders=9, drops=80)
    stalled = second(0.05 * GBPS, 0.3 * GBPS, fanin=0, senders=3, timeouts=6)
    v = verdict.judge(stalled, previous=burst)
    assert v.level == "incast" and "in the second before" in v.evidence
    assert verdict.judge(stalled).level == "none"


def test_unreadable_timeouts_are_replaced_by_senders_that_resumed_after_a_silence():
    f = second(0.4 * GBPS, GBPS, fanin=6, senders=6, timeouts=None, drops=50, stalls=2)
    assert verdict.judge(f).level == "incast"
    assert verdict.judge(dataclasses.replace(f, stalls=None)).level == "possible"
    assert verdict.judge(dataclasses.replace(f, stalls=0)).level == "possible"


def test_retransmissions_all_dsacked_are_no_overflow():
    f = second(0.4 * GBPS, GBPS, fanin=6, senders=6, timeouts=1, retrans=45, dsack=45)
    assert verdict.judge(f).level == "none"
    assert verdict.judge(dataclasses.replace(f, spurious_retrans=10)).level == "incast"


def test_without_any_fan_in_evidence_the_ratio_rule_decides():
    # a host whose sockets cannot be read: no fan-in, no senders; the only case the old rule
    # has evidence the new one lacks
    f = second(0.2 * GBPS, 0.95 * GBPS, timeouts=5, drops=10)
    assert verdict.judge(f).level == verdict.judge_ratio(f).level == "incast"
    f = second(0.8 * GBPS, 0.95 * GBPS, timeouts=5, drops=10)
    assert verdict.judge(f).level == "none"


# -- the ground truth -----------------------------------------------------------------------

def test_a_machine_second_is_incast_when_a_timeout_came_from_a_loss_where_two_senders_waited():
    from incastlab.truth import Losses, label

    losses = Losses(
        loss_time_ps=np.array([10**11, 2 * 10**11, 13 * 10**11], dtype=np.uint64),
        loss_port=np.array([5, 5, 5], dtype=np.uint32), loss_flow=np.array([0, 1, 2], dtype=np.uint32),
        loss_queued_senders=np.array([3, 1, 2], dtype=np.uint32),
        # flow 0 times out at 0.3 s (its loss: 3 senders), flow 1 at 1.4 s (1 sender: its own),
        # flow 2 at 1.6 s (2 senders) but its data goes to host 8; flow 3 spuriously at 2.5 s
        timeout_time_ps=np.array([3 * 10**11, 14 * 10**11, 16 * 10**11, 25 * 10**11], dtype=np.uint64),
        timeout_flow=np.array([0, 1, 2, 3], dtype=np.uint32),
        timeout_receiver=np.array([7, 7, 8, 7], dtype=np.uint32),
        timeout_loss=np.array([0, 1, 2, -1], dtype=np.int64),
        flow_ends=np.array([[0, 7], [1, 7], [2, 8], [3, 7]], dtype=np.uint32))
    assert label(losses, 7, 3).tolist() == [True, False, False]
    assert label(losses, 8, 3).tolist() == [False, True, False]


def test_confusion_counts_per_band():
    import pandas as pd

    from incastlab.truth import confusion

    df = pd.DataFrame({"util": [0.1, 0.1, 0.1, 0.6, 0.6, 0.9, 0.01],
                       "truth": [True, False, True, True, False, True, False],
                       "level": ["incast", "incast", "none", "incast", "possible", "incast", "none"]})
    c = confusion(df).set_index("band")
    assert c.loc["5-20 %", ["tp", "fp", "fn", "tn"]].tolist() == [1, 1, 1, 0]
    assert c.loc["5-20 %", "recall"] == 0.5 and c.loc["5-20 %", "precision"] == 0.5
    assert c.loc["50-65 %", ["tp", "tn"]].tolist() == [1, 1]
    assert c.loc["5-80 %", "seconds"] == 5 and c.loc["80 % and above", "tp"] == 1
    assert c.loc["below 5 %", "tn"] == 1
    assert np.isnan(c.loc["20-35 %", "recall"])


@pytest.mark.parametrize("servers,lone", [(16, False), (1, True)])
def test_the_simulators_truth_labels_the_collapse_incast(servers, lone):
    # FAST'08's collapse: every second of the client is incast by the events and by the rule;
    # one server: nothing is lost
    from incastlab import utilization as U
    from incastlab.sim import simulate
    from incastlab.truth import label

    r = simulate({"servers": servers, "duration": "2s"}, port_util_interval="100us", truth=True)
    truth = label(r.truth, servers, 2)
    v = U.verdicts(r.port_util, [servers])
    if lone:
        assert len(r.truth.loss_time_ps) == 0 and not truth.any()
        assert (v["level"] == "none").all()
    else:
        assert truth.all() and (v["level"] == "incast").all(), v["evidence"].tolist()
        assert (r.truth.loss_queued_senders >= 2).all()


# -- fan-in per interval from socket readings ------------------------------------------------

def _rx_at(spans_ns, rate_bps):
    """Receive-counter intervals of 100 us: ``rate_bps`` inside the spans, nothing outside."""
    t = np.arange(100_000, 60_000_000, 100_000, dtype=np.float64)
    busy = np.zeros(len(t), dtype=bool)
    for lo, hi in spans_ns:
        busy |= (t > lo) & (t <= hi)
    return t, np.full(len(t), 100_000.0), np.where(busy, rate_bps * 1e-4 / 8, 0.0)


def test_fan_in_counts_the_senders_of_a_reading_whose_span_ran_at_line_rate():
    d = lambda s, n: Delivery(f"10.0.0.{s}:1", "10.0.0.9:80", n)  # noqa: E731
    readings = [Reading(10_000_000, [d(1, 10)], 0),
                Reading(20_000_000, [d(1, 5000), d(2, 5000), d(3, 5000)], 2),  # burst at 12-15 ms
                Reading(30_000_000, [d(1, 10), d(2, 10), d(3, 10), d(4, 10)], 0)]  # four, but slow
    t, dt, b = _rx_at([(12_000_000, 15_000_000)], GBPS)
    got, last = fold(readings, StallTracker(), 0, GBPS, t, dt, b)
    assert got.fanin == verdict.FanIn(3, 0.01)
    assert [x.sender for x in got.deliveries][:3] == ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]
    assert len(got.deliveries) == 4 and got.active == [1, 3, 4] and got.retrans == [0, 2, 0]
    assert last == 30_000_000
    # no line rate known: no fan-in is claimed
    assert fold(readings, StallTracker(), 0, None, t, dt, b)[0].fanin is None


def test_a_sender_that_resumes_after_190_ms_of_silence_is_a_stall():
    d = Delivery("10.0.0.1:1", "10.0.0.9:80", 100)
    s = StallTracker()
    assert s.update(Reading(0, [d], 0), None) == 0
    # silent in every reading from 10 to 200 ms, delivering again at 210 ms
    assert s.update(Reading(210_000_000, [d], 0), 200_000_000) == 1
    assert s.update(Reading(220_000_000, [d], 0), 210_000_000) == 0


def test_the_poller_counts_deliveries_and_retransmissions_per_reading():
    class Watch:
        def __init__(self):
            self.counter = SenderCounter(lambda ip: ip.startswith("10."))
            self.now = []

        def read(self):
            return self.now

    w = Watch()
    sock = lambda rx, segs, rtx, remote="10.0.0.1": TcpSocket(1, "10.0.0.9", 80, remote, 5, rx, segs,  # noqa: E731
                                                              False, rtx)
    w.now = [sock(0, 0, 4)]
    p = FlowPoller(w, clock=iter(range(10**6, 10**9, 10**7)).__next__)
    assert p.poll().retrans == 0  # the first reading is the baseline
    w.now = [sock(3000, 2, 7), TcpSocket(2, "10.0.0.9", 81, "192.168.0.1", 6, 900, 1, False, 9)]
    r = p.poll()
    # only the connection through the interface; 3 segments sent again since
    assert [x.bytes for x in r.deliveries] == [3000] and r.retrans == 3
    assert [x.t_ns for x in p.drain()] == [10**6, 11 * 10**6]


# -- Millisampler-style series -----------------------------------------------------------------

def test_both_faces_write_one_schema_and_one_analysis_reads_both(tmp_path):
    from incastlab import millisampler as M
    from incastlab.sim import simulate

    r = simulate({"servers": 8, "duration": "1s"}, port_util_interval="100us")
    sim_file = M.write(M.from_port_util(r.port_util, [8]), tmp_path / "sim.parquet")
    # a monitor second: 1 Gbit/s for the first half, socket readings every 10 ms
    w = M.MonitorWriter(str(tmp_path / "mon.parquet"), "veth0")
    t = np.arange(100_000, 1_000_000_001, 100_000)
    series = {"t_end_ns": t.tolist(), "dt_ns": [100_000] * len(t),
              "rx_bytes": [12_500 if x <= 500_000_000 else 0 for x in t], "tx_bytes": [64] * len(t)}
    readings = [Reading(int(x), [Delivery("a:1", "b:2", 1)] * 2, 1) for x in range(5_000_000, 10**9, 10**7)]
    flows, _ = fold(readings, StallTracker(), 0, GBPS, t.astype(float), np.full(len(t), 1e5),
                    np.asarray(series["rx_bytes"], float))
    w.second(series, 0, 10**9, 0, flows, {})
    mon_file = w.close()
    both = __import__("pandas").concat([M.read(sim_file), M.read(mon_file)], ignore_index=True)
    assert list(both.columns) == list(M.COLUMNS)
    b = M.burstiness(both).set_index(["source", "scale_s"])
    # the monitor's second: 1 Gbit/s peak at every scale, 500 Mbit/s on average
    assert b.loc[("monitor", 0.001), "peak_bps"] == pytest.approx(1e9)
    assert b.loc[("monitor", 0.01), "mean_bps"] == pytest.approx(5e8)
    # active flows and retransmissions only where the socket readings are (10 ms), null finer
    mon = both[both["source"] == "monitor"]
    assert mon[mon["scale_s"] == 0.01]["active_flows"].notna().all()
    assert mon[mon["scale_s"] < 0.01]["active_flows"].isna().all()
    assert b.loc[("monitor", 0.01), "out_retrans"] == 100
    # the simulated client of an 8-server read: 8 flows in some 10 ms, its port's drops retransmitted
    sim = both[(both["source"] == "simulator") & (both["scale_s"] == 0.01)]
    assert int(sim["active_flows"].max()) == 8 and int(sim["in_retrans"].sum()) > 0


def test_a_file_of_another_kind_is_refused_naming_it(tmp_path):
    from incastlab import millisampler as M
    from incastlab.errors import UsageError

    bad = tmp_path / "x.parquet"
    M.write([], bad)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"t_s": [0.0]}), bad)
    with pytest.raises(UsageError, match="missing columns"):
        M.read(bad)
    with pytest.raises(UsageError, match=r"\.parquet"):
        M.check_path(str(tmp_path / "x.csv"), "--millisampler")


@pytest.mark.parametrize("args,flag", [(["--seeds", "some"], "--seeds"), (["--seeds", "-1"], "--seeds"),
                                        (["--jobs", "0"], "--jobs"), (["--out", "x.txt"], "--out")])
def test_monitor_truth_refuses_bad_arguments_in_one_line(args, flag):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "monitor", "truth", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and flag in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_loopback_connection_is_named_by_the_direction_that_carried_more_in_the_second():
    # CI, stop 33: a read's first reading on lo held only the client's 8-byte request (the
    # server's socket received it); the second's sender was then the client, with the data's bytes
    request = Delivery("127.0.0.1:40168", "127.0.0.4:5201", 8)
    data = Delivery("127.0.0.4:5201", "127.0.0.1:40168", 64_000)
    readings = [Reading(10_000_000, [request], 0), Reading(20_000_000, [data], 0),
                Reading(30_000_000, [request, data], 0)]
    got, _ = fold(readings, StallTracker(), 0, None, np.zeros(0), np.zeros(0), np.zeros(0))
    assert got.deliveries == [Delivery("127.0.0.4:5201", "127.0.0.1:40168", 128_000)]
