"""Per-port utilization (incastlab.utilization) on simulated runs, judged by the monitor's rule."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from incastlab import sim, utilization as U
from incastlab.errors import UsageError


@pytest.fixture(scope="module")
def collapse():
    # FAST'08 Fig. 4's collapse: 16 servers, 32 KiB, RTOmin 200 ms; 2 whole seconds
    return sim.simulate({"servers": 16, "duration": "2s"}, port_util_interval="100us")


@pytest.fixture(scope="module")
def one_server():
    return sim.simulate({"servers": 1, "duration": "2s"}, port_util_interval="100us")


def test_drops_and_timeouts_per_interval_sum_to_the_result(collapse):
    u = collapse.port_util
    assert collapse.drops > 0 and collapse.timeouts > 0
    assert u["drop_packets"].sum() == collapse.drops
    assert u["timeouts"].sum() == collapse.timeouts
    per_second = U.drops_per_second(u)
    assert per_second["drops"].sum() == collapse.drops  # 2 s run: both seconds whole


@pytest.mark.parametrize("interval", [1e-3, 2e-3, 64e-3, 0.25, 1.0])
def test_aggregation_preserves_totals(collapse, interval):
    u = collapse.port_util
    agg = u.aggregate(interval)
    assert agg.interval_s == pytest.approx(interval)
    for name in U.SERIES:
        assert np.array_equal(agg[name].sum(axis=1), u[name].sum(axis=1)), name


def test_aggregation_refuses_what_is_not_a_multiple(collapse):
    with pytest.raises(UsageError, match="whole multiple"):
        collapse.port_util.aggregate(150e-6)


def test_the_verdict_reads_a_collapse_as_incast_and_one_server_as_none(collapse, one_server):
    # the client is host N (servers are 0..N-1)
    v = U.verdicts(collapse.port_util, [16])
    assert list(v["level"]) == ["incast", "incast"], v["evidence"].tolist()
    assert "16 TCP senders" in v["evidence"].iloc[0]
    v1 = U.verdicts(one_server.port_util, [1])
    assert list(v1["level"]) == ["none", "none"], v1["evidence"].tolist()
    # and the servers, which only send, show nothing either
    assert set(U.verdicts(collapse.port_util, [0, 7])["level"]) == {"none"}


def test_a_collapse_is_bursty_at_100us_and_flat_at_1s(collapse):
    # 003_a133663d5dbcfa75.txt: "as the polling period gets smaller, the ratio between maximum
    # observed incoming rate and average rate gets larger"; at 1 s it is 1 by definition. (That
    # it never grows between nested intervals holds by construction: not asserted.)
    u = collapse.port_util
    d = u.downlink(16)
    assert U.peak_to_average(u, d, 1.0)["ratio"].to_numpy() == pytest.approx(1.0)
    assert U.peak_to_average(u, d, 1e-4)["ratio"].min() > 3  # the verdict's BURST_RATIO


def test_the_ratio_can_grow_with_the_interval_only_between_intervals_that_do_not_nest():
    # 1 ms series, one port, 1 s: line rate (125,000 B per ms at 1 Gbps) in ms 1 and 2 only.
    # Average 250,000 B x 8 / 1 s = 2 Mbit/s. 1 ms peak 1 Gbit/s: ratio 500. 2 ms buckets
    # [0,1] and [2,3] hold 125,000 B each: 500 Mbit/s, ratio 250; 4 ms (nested in 2 ms):
    # [0..3] holds 250,000 B: 500 Mbit/s, 250. 3 ms does not nest in 2 ms: [0,1,2] holds
    # 250,000 B: 666.7 Mbit/s, ratio 333.3, above the 2 ms ratio.
    tx = np.zeros((1, 1000), dtype=np.int64)
    tx[0, 1:3] = 125_000
    series = {name: np.zeros((1, 1000), dtype=np.int64) for name in U.SERIES}
    series["tx_bytes"] = tx
    ports = pd.DataFrame({"port": [0], "from": ["switch 0"], "to": ["host 0"], "rate_bps": [10**9]})
    u = U.PortUtil(10**9, ports, series, np.zeros((1, 1), dtype=np.int64))
    ratio = {ms: U.peak_to_average(u, 0, ms * 1e-3)["ratio"].iloc[0] for ms in (1, 2, 3, 4)}
    assert ratio == pytest.approx({1: 500.0, 2: 250.0, 3: 1000 / 3, 4: 250.0})


def test_peak_to_average_by_hand():
    # one port, 2 s at 1 ms: idle except 10 ms at line rate (125,000 B per ms at 1 Gbps) in
    # the first second. Second 0: average 1.25 MB x 8 / 1 s = 10 Mbit/s; 1 ms peak 1 Gbit/s:
    # ratio 100; at 64 ms the burst falls in one bucket: 10 Mbit x ... / 0.064 s = 156.25
    # Mbit/s, ratio 15.625 (15 whole buckets of 64 ms fit in 1 s; the last 40 ms are left
    # out of the peak, not of the average). Second 1 is idle: no ratio.
    k = 2000
    tx = np.zeros((1, k), dtype=np.int64)
    tx[0, 100:110] = 125_000
    series = {name: np.zeros((1, k), dtype=np.int64) for name in U.SERIES}
    series["tx_bytes"] = tx
    ports = pd.DataFrame({"port": [0], "from": ["switch 0"], "to": ["host 0"], "rate_bps": [10**9]})
    u = U.PortUtil(10**9, ports, series, np.zeros((1, 2), dtype=np.int64))
    p = U.peak_to_average(u, 0, 1e-3)
    assert p["avg_bps"].tolist() == [10e6, 0.0]
    assert p["ratio"].iloc[0] == pytest.approx(100.0)
    assert np.isnan(p["ratio"].iloc[1])
    assert U.peak_to_average(u, 0, 64e-3)["ratio"].iloc[0] == pytest.approx(15.625)


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_the_file_reads_back_as_written(tmp_path, suffix):
    path = tmp_path / f"util.{suffix}"
    r = sim.simulate({"servers": 4, "duration": "300ms"}, port_util=path, port_util_interval="1ms")
    back = U.PortUtil.read(path)
    assert back.interval_ps == r.port_util.interval_ps == 10**9
    for name in U.SERIES:
        assert np.array_equal(back[name], r.port_util[name]), name
    assert back.ports["to"].tolist() == r.port_util.ports["to"].tolist()
    assert back.truncated is False


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_truncated_series_says_so_through_its_file(tmp_path, suffix):
    # the flag a run by blocks gets at the cap (crates/sim/tests/port_util.rs reaches it)
    # is a column of the file, read back
    import dataclasses

    u = sim.simulate({"servers": 2, "duration": "20ms"}, port_util_interval="1ms").port_util
    cut = dataclasses.replace(u, truncated=True)
    path = tmp_path / f"util.{suffix}"
    cut.write(path)
    back = U.PortUtil.read(path)
    assert back.truncated is True
    assert back.intervals == u.intervals == 20
    assert np.array_equal(back["tx_bytes"], u["tx_bytes"])


def test_the_core_series_are_views_of_its_bytes_not_int64_copies(collapse):
    # docs/utilization.md: memory; the fine series stays at the core's widths
    u = collapse.port_util
    assert (u["tx_bytes"].dtype, u["tx_packets"].dtype) == (np.dtype("<u8"), np.dtype("<u4"))
    assert not u["tx_bytes"].flags.owndata
    assert u.aggregate(1e-3)["tx_packets"].dtype == np.int64


def test_sampling_changes_nothing_in_the_result():
    plain = sim.simulate({"servers": 8, "duration": "500ms"}).to_dict()
    sampled = sim.simulate({"servers": 8, "duration": "500ms"}, port_util_interval="100us").to_dict()
    for row in (plain, sampled):
        row.pop("wall_seconds")
    assert plain == sampled


def test_a_series_over_the_memory_cap_is_refused_by_name():
    # 2000 s at 100 us x 10 ports x 44 B = 8393 MiB > 1 GiB
    with pytest.raises(UsageError) as e:
        sim.simulate({"servers": 4, "duration": "2000s"}, port_util_interval="100us")
    assert e.value.param == "port_util_interval"
    assert "8393 MiB" in e.value.allowed
    with pytest.raises(UsageError, match="100us to 1s"):
        sim.simulate({"servers": 4, "duration": "1s"}, port_util_interval="10us")


def test_cli_refuses_the_cap_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "4",
                          "--duration", "2000s", "--port-util", str(tmp_path / "u.csv")],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--port-util-interval" in out.stderr and "8393 MiB" in out.stderr
    assert not (tmp_path / "u.csv").exists()


def test_cli_writes_the_file(tmp_path):
    path = tmp_path / "u.parquet"
    out = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "2",
                          "--duration", "200ms", "--port-util", str(path), "--port-util-interval", "1ms"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    df = pd.read_parquet(path)
    assert set(df["interval_s"]) == {0.001}
    assert len(df) == 6 * 200  # 6 ports (3 NICs, 3 switch ports) x 200 intervals


def test_a_reproduction_can_observe_every_port_of_its_points(tmp_path):
    # the machinery riak-microburst uses, on today's incast workload: each point's series is
    # reduced in its worker to columns of its row; the figure draws its own axes
    from incastlab.experiments import Check, Experiment, Observe, Plot, Series
    from incastlab.experiments import run

    def columns(r):
        u = r.port_util
        down = u.downlink(r.servers)  # the client
        return {"ratio_1ms": float(U.peak_to_average(u, down, 1e-3)["ratio"].mean()),
                "incast_seconds": int((U.verdicts(u, [r.servers])["level"] == "incast").sum())}

    def draw(fig, df):
        ax = fig.subplots()
        ax.plot(df["x"], df["ratio_1ms"], marker="o")

    exp = Experiment(
        name="observe-test", title="t", source="003_a133663d5dbcfa75.txt", summary="s",
        series=(Series("incast"),), checks=(Check("c", "s", lambda df: ("m", True)),),
        values=(1, 16), duration="1s", observe=Observe("100us", columns), plot=Plot(kind="custom", draw=draw))
    df = run.simulate(exp, jobs=2)
    assert list(df["x"]) == [1, 16]
    assert list(df["incast_seconds"]) == [0, 1]
    assert df["ratio_1ms"].iloc[0] < 1.2 < 3 < df["ratio_1ms"].iloc[1]
    paths = run.write_outputs(exp, df, run.evaluate(exp, df), tmp_path)
    assert paths["png"].stat().st_size > 0


def test_simulate_reports_a_truncated_series_in_one_line(capsys):
    # the CLI's note (cli/recording_args.py), as report_truncated_captures gives for captures
    import dataclasses
    from types import SimpleNamespace

    from incastlab.cli.recording_args import report_truncated_port_util
    from incastlab.recording import Recording

    u = sim.simulate({"servers": 2, "duration": "20ms"}, port_util_interval="1ms").port_util
    rec = Recording(port_util="util.csv")
    report_truncated_port_util([SimpleNamespace(port_util=u, servers=2)], [rec])
    assert capsys.readouterr().err == ""
    report_truncated_port_util([SimpleNamespace(port_util=dataclasses.replace(u, truncated=True), servers=2)], [rec])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "util.csv holds only the first 0.02 s (20 intervals) of the 2-server run" in err
