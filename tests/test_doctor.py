"""``incastlab doctor`` and ``incastlab.doctor()``: verdicts, fixes, the screen, the
recording input and refusals (docs/doctor.md)."""

import json
import subprocess
import sys

import numpy as np
import pytest

import incastlab
from incastlab import UsageError
from incastlab.diagnosis import describe, search_limit
from incastlab.diagnosis.defaults import DEFAULTS
from incastlab.diagnosis.screen import screen
from incastlab.diagnosis.search import GRID, Measurer, find_onset
from incastlab.presets import Kernel

FAST08 = dict(rate="1Gbps", rtt="100us", buffer="32KiB", fan_in=16, response="256KiB", stack="fast08")


def incastlab_cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "incastlab.cli.main", "doctor", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def fast08():
    return incastlab.doctor(**FAST08)


def test_fast08_cluster_collapses_with_its_onset_where_fig4_puts_it(fast08):
    v = fast08.verdict
    assert v.collapse
    # FAST'08 Fig. 4 (32 KB buffer): goodput is down by an order of magnitude by 8 servers
    # (the README's demo, this preset without think time: from 6); with 0-3 us think time
    # single runs can collapse from 2-4 already (docs/model.md, "Single runs are chaotic")
    assert v.onset is not None and 2 <= v.onset <= 8
    assert v.goodput_mbps < 0.25 * v.one_server_mbps  # README's table: 121 of 913 Mbps at 16
    # the 200 ms timeouts are the mechanism: the p99 block waits one out
    assert v.block_time_p99_s > 0.2
    assert "timeouts" in v.mechanism and "200 ms" in v.mechanism


def test_fast08_fine_rto_lifts_the_point_out_of_collapse_and_a_host_setting_is_the_cheapest_fix(fast08):
    rto = next(f for f in fast08.fixes if f.key == "rto_min")
    # FAST'08 §5.1.2, Fig. 13: RTOmin 200 us gives an order of magnitude at 8-32 servers
    assert not rto.collapse and rto.goodput_mbps > 4 * fast08.verdict.goodput_mbps
    # in ns-2's reading (1000 B packets, 31-packet queue) a 2-packet window clamp also fits
    # 16 flows in buffer + BDP (16 x 2 x 1040 B < 32 KiB + 12.5 kB): both are host settings,
    # and the cheapest fix that works is one of them
    cheapest = next(f for f in fast08.fixes if f.name == fast08.verdict.cheapest_fix)
    assert cheapest.cost == "a host setting" and cheapest.key in ("rto_min", "rwnd")
    assert not fast08.fixes[0].collapse
    assert [f.rank for f in fast08.fixes] == list(range(1, len(fast08.fixes) + 1))
    assert all(a.goodput_mbps >= b.goodput_mbps for a, b in zip(fast08.fixes, fast08.fixes[1:]))


def test_fast08_evidence_names_its_points_and_the_validation_in_this_regime(fast08):
    ev = fast08.evidence
    servers = {p.servers for p in ev.points if p.label == "cluster"}
    assert {1, 16, fast08.verdict.onset} <= servers
    assert ev.sweep.startswith("incastlab sweep --grid servers=") and "buffer=32768" in ev.sweep
    peers = {d["peer"] for d in ev.validation}
    assert {"ns-3.44", "ns-2.35"} <= peers  # the RTOmin 200 ms tables of docs/model.md
    ns3 = next(d for d in ev.validation if d["peer"] == "ns-3.44")
    assert ns3["nearest_servers"] == 16 and ns3["ratio"] == pytest.approx(1.00)


def test_a_buffer_that_holds_every_window_does_not_collapse():
    r = incastlab.doctor(rate="1Gbps", buffer="64MiB", fan_in=16, response="256KiB", stack="fast08")
    assert not r.verdict.collapse
    assert r.verdict.onset is None  # none up to 64 servers: 64 x 30 KB windows fit in 64 MiB
    assert r.verdict.searched_up_to == 64
    assert r.verdict.goodput_mbps > 0.8 * r.verdict.one_server_mbps


def test_the_screen_is_n_times_window_against_buffer_plus_bdp():
    s = screen(describe(**dict(FAST08, stack="rfc")))
    # the rfc preset's 20-packet window of 1460 + 40 B; 1 Gbps x 100 us / 8
    assert (s.window_bytes, s.bdp_bytes, s.port_room_bytes) == (30000, 12500, 32768)
    assert s.n_safe == 1                      # (32768 + 12500) // 30000
    assert s.n_burst == 16                    # IW 2 = 3000 B: 45268 // 3000 + 1
    assert s.osada is not None and s.osada.base_bdp_pkt_ceil == 9  # Osada §5.1's 9 packets


def test_bisection_finds_the_onset_a_sweep_of_the_same_points_finds():
    c = describe(**dict(FAST08, fan_in=8))
    m = Measurer(c.fields(), rto_min_s=c.setting("rto_min", 0.2))
    m.measure([(1, "cluster", {}), (8, "cluster", {})])
    s = screen(c)
    onset = find_onset(m, s.n_safe, s.n_burst, search_limit(8))
    grid = [g for g in GRID if g <= search_limit(8)]
    swept = m.measure([(n, "cluster", {}) for n in grid])  # the same definition at every point
    first = next((p.servers for p in swept if p.collapsed(m.reference_mbps)), None)
    assert onset.onset == first


def test_defaults_are_shown_as_defaults():
    r = describe(fan_in=8)
    shown = {i[0]: (i[1], i[2]) for i in r.inputs()}
    assert shown["rate"] == ("10Gbps", True) and shown["fan-in"] == ("8", False)
    assert r.stack == DEFAULTS["stack"][0] and r.resolved["init_cwnd"] == 10  # the core's linux preset: IW 10


def test_this_host_reads_tcp_rto_min_us_and_a_route_rto_min_wins(tmp_path):
    for name, value in {"tcp_congestion_control": "cubic", "tcp_sack": "1", "tcp_rto_min_us": "5000"}.items():
        (tmp_path / name).write_text(value + "\n")
    k = Kernel(sysctl_dir=tmp_path, module_dir=tmp_path, routes=lambda: "default via 10.0.0.1 dev eth0\n",
               jiffy=lambda: 0.001)
    c = describe(this_host=True, fan_in=4, kernel=k)
    assert c.fields()["rto_min"] == pytest.approx(0.005) and c.fields()["cc"] == "cubic"
    k2 = Kernel(sysctl_dir=tmp_path, module_dir=tmp_path, routes=lambda: "default via 10.0.0.1 rto_min lock 2ms\n",
                jiffy=lambda: 0.001)
    assert describe(this_host=True, fan_in=4, kernel=k2).fields()["rto_min"] == pytest.approx(0.002)
    (tmp_path / "tcp_congestion_control").write_text("bbr\n")
    with pytest.raises(UsageError) as e:
        describe(this_host=True, fan_in=4, kernel=k)
    assert e.value.param == "this_host"


def test_a_recording_gives_the_block_from_its_bursts(tmp_path):
    from incastlab.diagnosis.recording import summarize
    from incastlab.monitor.record import Recorder

    # 1 s at 100 us: every 10 ms a 1 MB read arrives at 10 Gbps (800 us, 8 intervals of 125 kB)
    n = 10_000
    rx = np.zeros(n, dtype=np.uint64)
    for start in range(0, n, 100):
        rx[start:start + 8] = 125_000
    rec = Recorder(str(tmp_path / "run.parquet"))
    t = np.arange(1, n + 1) * 1e-4
    rec.write(t, np.full(n, 1e-4), rx, np.zeros(n, np.uint64), rx // 1500, np.zeros(n, np.uint64))
    rec.close()
    s = summarize(str(tmp_path / "run.parquet"), None, 100e-6)
    assert s.line_rate_bps == 10**10 and s.bursts == 100 and s.burst_bytes_median == 1_000_000
    assert s.bursts_per_second == pytest.approx(100)


@pytest.mark.parametrize("args, flag", [
    (["--fan-in", "0"], "--fan-in"),
    (["--fan-in", "2000"], "--fan-in"),
    (["--fan-in", "many"], "--fan-in"),
    (["--rate", "1Qbps"], "--rate"),
    (["--rate", "10kbps"], "--rate"),
    (["--buffer", "100"], "--buffer"),
    (["--buffer", "64KiB", "--pool", "4MiB"], "--pool"),
    (["--rtt", "fast"], "--rtt"),
    (["--response", "0"], "--response"),
    (["--stack", "bsd"], "--stack"),
    (["--stack", "linux", "--this-host"], "--stack"),
    (["--cc", "vegas"], "--cc"),
    (["--rto-min", "soon"], "--rto-min"),
    (["--jobs", "0"], "--jobs"),
    (["--html", "report.txt"], "--html"),
    (["--record", "run.txt", "--fan-in", "4"], "--record"),
    (["--record", "missing.parquet", "--fan-in", "4"], "--record"),
    (["--record", "run.csv"], "--fan-in"),
])
def test_bad_input_is_one_line_naming_the_parameter_exit_2(args, flag, tmp_path, monkeypatch, capsys):
    # in-process (the CLI's main, as the console script calls it): a subprocess per case
    # costs seconds of imports on a loaded machine; test_cli_json_and_html runs the real one
    from incastlab.cli.main import main

    monkeypatch.chdir(tmp_path)
    try:
        code = main(["doctor", *args])
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in err, err
    assert out == "" and list(tmp_path.iterdir()) == []


def test_cli_json_and_html(tmp_path):
    html = tmp_path / "doctor.html"
    p = incastlab_cli("--rate", "1Gbps", "--buffer", "32KiB", "--fan-in", "4", "--response", "64KiB",
                      "--stack", "fast08", "--json", "--html", str(html), "--quiet")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["verdict"]["fan_in"] == 4
    assert "smallest fan-in whose goodput falls below 50% of one server's" in d["verdict"]["rule"]
    assert d["fixes"] and all(f["sweep"].startswith("incastlab sweep") for f in d["fixes"])
    page = html.read_text()
    assert "<h2" in page and "incastlab sweep" in page


def test_same_description_same_report():
    a = incastlab.doctor(**dict(FAST08, fan_in=6)).to_dict()
    b = incastlab.doctor(**dict(FAST08, fan_in=6)).to_dict()
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert a == b
