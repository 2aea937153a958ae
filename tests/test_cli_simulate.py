"""``incastlab simulate`` end to end, through the real command line (a subprocess), so
exit status, stderr and files are what a user sees."""

import json
import re
import subprocess
import sys
from unittest import mock

import pytest

# Short runs keep the file fast: a few blocks or a fraction of a simulated second.
SHORT = ["--blocks", "5"]

REQUIRED_JSON_FIELDS = {
    "servers", "sru_bytes", "buffer_bytes", "rto_min_s", "goodput_mbps", "blocks", "timeouts",
    "retransmits", "drops", "max_queue_bytes", "block_time_p50_s", "block_time_p99_s", "sim_seconds",
    "wall_seconds", "events",
}


def incastlab(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, flag, value", [
    (["--servers", "0"], "--servers", "0"),
    (["--servers", "1,x"], "--servers", "1,x"),
    (["--buffer", "-1"], "--buffer", "-1"),
    (["--buffer", "100"], "--buffer", "100"),
    (["--sru", "0"], "--sru", "0"),
    (["--rate", "1Qbps"], "--rate", "1Qbps"),
    (["--rto-min", "banana"], "--rto-min", "banana"),
    (["--rtt", "fast"], "--rtt", "fast"),
    (["--blocks", "0"], "--blocks", "0"),
    (["--delayed-ack", "2s"], "--delayed-ack", "2s"),
    (["--jobs", "0"], "--jobs", "0"),
    (["--plot", "goodput.txt"], "--plot", "goodput.txt"),
    # issue 11: each of these was silent, misattributed or a traceback
    (["--rto-min", "200"], "--rto-min", "200s"),  # seconds: blamed on --rto-min, not --rto-max
    (["--rto-min", "-5ms"], "--rto-min", "-5ms"),  # a value, not "expected one argument"
    (["--csv", ""], "--csv", "''"),
    (["--plot", ""], "--plot", "''"),
    (["--block", "1MiB", "--sru", "64KiB"], "--block", "1MiB"),
    (["--seed", "99999999999999999999999"], "--seed", "99999999999999999999999"),
])
def test_bad_input_is_one_line_exit_2_naming_the_flag(args, flag, value, tmp_path):
    r = incastlab("simulate", "--servers", "1", *SHORT, *args) if args[0] != "--servers" \
        else incastlab("simulate", *SHORT, *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert flag in lines[0] and value in lines[0] and "expected" in lines[0]
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_riak_workload_runs_end_to_end_and_tables_gets():
    # issue 13: the Riak-style workload through the real command line
    args = ["simulate", "--workload", "riak", "--servers", "16", "--get-rate", "100", "--duration", "200ms"]
    r = incastlab(*args)
    assert r.returncode == 0, r.stderr
    heading = r.stdout.splitlines()[1].split()
    assert heading[:4] == ["nodes", "goodput", "Mbps", "gets"] and "blocks" not in heading
    point = json.loads(incastlab(*args, "--json").stdout)
    assert point["workload"] == "riak" and 0 < point["gets_completed"] <= point["gets_issued"]
    assert len(point["node_bytes_received"]) == 16 and sum(point["node_bytes_received"]) == point["app_bytes"]


def test_riak_latencies_print_as_dashes_and_null_when_no_get_completed():
    # one get per node per second, 1 ms: no get completes; latencies are null, not 0 s
    args = ["simulate", "--workload", "riak", "--servers", "4", "--get-rate", "1", "--duration", "1ms"]
    point = json.loads(incastlab(*args, "--json").stdout)
    assert point["gets_completed"] == 0
    assert [point[f"get_latency_{k}_s"] for k in ("p50", "p99", "max")] == [None, None, None]
    r = incastlab(*args)
    assert r.returncode == 0, r.stderr
    heading, row = r.stdout.splitlines()[1], r.stdout.splitlines()[3]
    cells = dict(zip(["nodes", "goodput", "gets", "done", "p50", "p99", "max"], row.split()))
    assert heading.split()[5:11] == ["p50", "ms", "p99", "ms", "max", "ms"]
    assert (cells["p50"], cells["p99"], cells["max"]) == ("-", "-", "-")


@pytest.mark.parametrize("args, flag", [
    (["--workload", "riak", "--servers", "8", "--blocks", "3"], "--blocks"),
    # the constraint is between two fields: blamed on the one given (servers, which the
    # command sweeps, keeps its field name)
    (["--workload", "riak", "--servers", "3", "--duration", "10ms"], "servers"),
    (["--workload", "riak", "--servers", "3", "--replicas", "3", "--duration", "10ms"], "--replicas"),
    (["--workload", "riak", "--servers", "8", "--read-quorum", "4", "--duration", "10ms"], "--read-quorum"),
    (["--servers", "4", "--get-rate", "50", "--duration", "10ms"], "--get-rate"),
    (["--servers", "4", "--clients", "2", "--mitigation", "ocs", "--duration", "10ms"], "--mitigation"),
])
def test_workload_combinations_are_refused_in_one_line_naming_the_flag(args, flag):
    r = incastlab("simulate", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "expected" in lines[0], r.stderr


# Flows beyond the servers' count: client c's flow from server i is flow c x servers + i;
# the Riak workload opens one per ordered pair of nodes as its gets need it (flows created
# while the run goes). Each once crashed the recorder (a table sized by the servers).
TWO_CLIENTS = ["--servers", "4", "--clients", "2", "--duration", "20ms"]
RIAK = ["--workload", "riak", "--servers", "8", "--get-rate", "2000", "--duration", "20ms"]


@pytest.mark.parametrize("run, flows", [(TWO_CLIENTS, 4 * 2), (RIAK, 8 * 7)], ids=["clients", "riak"])
def test_events_cover_every_flow_with_several_clients_or_riak(run, flows, tmp_path):
    from incastlab.peers.tracediff import iter_events

    path = tmp_path / "e.csv"
    r = incastlab("simulate", *run, "--events", str(path))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    events = list(iter_events(path))  # refuses any line that is not an event
    assert events and all(0 <= e.flow < flows for e in events)
    seen = {e.flow for e in events if e.kind == "tx"}
    if run is TWO_CLIENTS:
        assert seen == set(range(flows)), "both clients' flows send"
    else:
        assert max(seen) >= 8, "flows opened during the run are traced too"
    assert [p.name for p in tmp_path.iterdir()] == ["e.csv"], "no temporary file left"


@pytest.mark.parametrize("run, late, beyond, why", [
    (TWO_CLIENTS, "7", "8", "servers x clients = 4 x 2"),
    (RIAK, "0,55", "56", "servers x (servers - 1) = 8 x 7"),
], ids=["clients", "riak"])
def test_trace_flows_reach_every_flow_and_refuse_past_the_last(run, late, beyond, why, tmp_path):
    path = tmp_path / "t.csv"
    r = incastlab("simulate", *run, "--trace", str(path), "--trace-flows", late)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = path.read_text().splitlines()
    assert lines[0].startswith("time_s,flow,") and len(lines) > 1
    asked = {int(f) for f in late.split(",")}
    traced = {int(line.split(",")[1]) for line in lines[1:]}
    assert traced and traced <= asked
    if run is TWO_CLIENTS:
        assert traced == {7}, "client 1's last flow"
    r = incastlab("simulate", *run, "--trace", str(tmp_path / "x.csv"), "--trace-flows", beyond)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line, = r.stderr.strip().splitlines()
    assert "--trace-flows" in line and f"from 0 to {int(beyond) - 1}" in line and why in line
    assert not (tmp_path / "x.csv").exists()


def test_missing_output_directory_is_refused_before_simulating(tmp_path):
    target = tmp_path / "no-such-dir" / "fig.png"
    r = incastlab("simulate", "--servers", "1", *SHORT, "--plot", str(target))
    assert r.returncode == 2 and "--plot" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == "" and not target.exists()


def test_help_works_for_every_new_command():
    for cmd in ("simulate", "demo", "bench"):
        r = incastlab(cmd, "--help")
        assert r.returncode == 0 and "usage: incastlab " + cmd in r.stdout


def _json_lines(r):
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line.strip()]


def test_json_has_one_object_per_point_with_the_schema_fields():
    lines = _json_lines(incastlab("simulate", "--servers", "1,2,4", *SHORT, "--json"))
    assert len(lines) == 3
    points = [json.loads(line) for line in lines]
    for p in points:
        assert REQUIRED_JSON_FIELDS <= set(p), REQUIRED_JSON_FIELDS - set(p)
    assert [p["servers"] for p in points] == [1, 2, 4]
    assert all(p["blocks"] == 5 for p in points)
    assert points[0]["buffer_bytes"] == 32 * 1024 and points[0]["rto_min_s"] == pytest.approx(0.2)


def test_units_reach_the_core():
    p = json.loads(_json_lines(incastlab("simulate", "--servers", "2", "--buffer", "64KB", "--sru", "32KiB",
                                         "--rto-min", "200us", *SHORT, "--json"))[0])
    assert (p["buffer_bytes"], p["sru_bytes"]) == (64_000, 32 * 1024)
    assert p["rto_min_s"] == pytest.approx(200e-6)


def _without_wall(text: str) -> str:
    # wall_seconds is the only field allowed to differ between identical runs
    return re.sub(r'"wall_seconds": [-+0-9.eE]+, ?', "", text)


def test_same_seed_gives_byte_identical_json_apart_from_wall_time():
    args = ["simulate", "--servers", "1,8,16", "--duration", "0.3s", "--seed", "7", "--jitter", "20us", "--json"]
    a, b = incastlab(*args), incastlab(*args)
    assert a.returncode == 0 and b.returncode == 0
    assert "wall_seconds" in a.stdout
    assert _without_wall(a.stdout) == _without_wall(b.stdout)


def test_parallel_and_serial_runs_give_identical_results():
    args = ["simulate", "--servers", "1,2,4,8,16,32", "--duration", "0.3s", "--json"]
    serial, parallel = incastlab(*args, "--jobs", "1"), incastlab(*args, "--jobs", "2")
    assert serial.returncode == 0 and parallel.returncode == 0
    assert _without_wall(serial.stdout) == _without_wall(parallel.stdout)


def test_table_lists_every_point():
    r = incastlab("simulate", "--servers", "1,3", *SHORT)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # without a terminal, progress only for work longer than a few seconds
    assert "goodput Mbps" in r.stdout and "timeouts" in r.stdout
    rows = [line.split() for line in r.stdout.splitlines() if re.match(r"\s*\d+\s", line)]
    assert [row[0] for row in rows] == ["1", "3"]


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_writes_a_png_and_csv(tmp_path):
    png, csv = tmp_path / "fig4.png", tmp_path / "fig4.csv"
    r = incastlab("simulate", "--servers", "1,2,4", *SHORT, "--plot", str(png), "--csv", str(csv))
    assert r.returncode == 0, r.stderr
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC)
    import matplotlib.image
    img = matplotlib.image.imread(str(png))
    assert img.shape[0] > 200 and img.shape[1] > 300
    import pandas as pd
    df = pd.read_csv(csv)
    assert list(df["servers"]) == [1, 2, 4]
    assert not list(tmp_path.glob(".incastlab-*"))  # no temporary file left behind


def test_plot_svg_by_extension(tmp_path):
    svg = tmp_path / "fig4.svg"
    r = incastlab("simulate", "--servers", "1,2", *SHORT, "--plot", str(svg))
    assert r.returncode == 0, r.stderr
    assert "<svg" in svg.read_text()[:2000]


def test_demo_writes_table_explanation_csv_and_png(tmp_path):
    r = incastlab("demo", "--out", str(tmp_path / "out"), "--servers", "1,8", "--duration", "0.3s", "--seeds", "2")
    assert r.returncode == 0, r.stderr
    assert "FAST'08 default" in r.stdout and "RTOmin 200us" in r.stdout
    assert "# goodput Mbps, mean (min-max) of 2 runs" in r.stdout
    assert "With the FAST'08 defaults" in r.stdout and "mean of 2 runs" in r.stdout  # the generated paragraph
    assert (tmp_path / "out" / "demo.png").read_bytes().startswith(PNG_MAGIC)
    import pandas as pd
    df = pd.read_csv(tmp_path / "out" / "demo.csv")  # every run: 3 configurations x 2 servers x 2 seeds
    assert list(df["configuration"].unique()) == ["fast08", "big_buffer", "rto_200us"]
    assert len(df) == 12 and set(df["seed"]) == {1, 2} and set(df["response_jitter_s"]) == {3e-06}
    assert set(df["preset"]) == {"fast08"}


def test_demo_with_one_seed_is_the_simulate_command_of_the_readme(tmp_path):
    # one run per point, no think time: the numbers `incastlab simulate --preset fast08` gives
    r = incastlab("demo", "--out", str(tmp_path / "out"), "--servers", "16", "--duration", "0.5s", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    s = incastlab("simulate", "--preset", "fast08", "--servers", "16", "--duration", "0.5s", "--json")
    import pandas as pd
    demo = pd.read_csv(tmp_path / "out" / "demo.csv")
    assert demo.loc[demo["configuration"] == "fast08", "goodput_mbps"].item() == json.loads(s.stdout)["goodput_mbps"]


BENCH_FIELDS = {"name", "servers", "events_per_s", "packet_hops_per_s", "wall_seconds", "sim_seconds",
                "events", "max_rss_mib"}


def test_bench_quick_json_fields():
    lines = _json_lines(incastlab("bench", "--quick", "--json", timeout=600))
    recs = [json.loads(line) for line in lines]
    assert [r["name"] for r in recs] == ["fast08-1-2s", "fast08-64-2s", "oneshot-10g-64", "oneshot-10g-256"]
    for rec in recs:
        assert BENCH_FIELDS <= set(rec)
        assert rec["events"] > 0 and rec["events_per_s"] > 0 and rec["max_rss_mib"] > 0
    oneshot = recs[2]
    assert oneshot["servers"] == 64
    # issue 15's references: ns-3 at 1 server (100x asked), htsim on the one-shot points (2x
    # asked), as measured on this machine's CPU model if they were
    from incastlab.cli import bench
    refs, same = bench.reference_machine(bench.cpu_model())
    assert (recs[0]["servers"], recs[0]["reference_tool"], recs[0]["target_speedup"]) == (1, "ns-3", 100)
    assert recs[0]["speedup_target_wall_s"] == pytest.approx(refs.ns3_fast08_1_s / 100)
    assert (oneshot["reference_tool"], oneshot["target_speedup"], oneshot["target_events_per_s"]) == ("htsim", 2, 25e6)
    assert recs[3]["speedup_target_wall_s"] == pytest.approx(refs.htsim_oneshot_s[256] / 2)
    assert recs[1]["reference_tool"] is None and recs[1]["speedup"] is None
    assert recs[0]["speedup"] == pytest.approx(refs.ns3_fast08_1_s / recs[0]["wall_seconds"])
    assert all(r["reference_same_machine"] is same for r in recs if r["reference_tool"])
    assert all((r["speedup_ok"] is None) == (not same) for r in recs if r["reference_tool"])


def test_bench_references_are_this_machines_or_get_no_verdict(tmp_path):
    from incastlab.cli import bench
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n")
    assert bench.cpu_model(cpuinfo) == "AMD EPYC"
    assert bench.cpu_model(tmp_path / "missing") is None
    # each machine's own times; the bench on an unknown CPU shows the latest with no verdict
    for m in bench.REFERENCE_MACHINES:
        assert bench.reference_machine(m.cpu) == (m, True)
        point = bench.bench_points(quick=True, cpu=m.cpu)[0]
        assert (point.reference.wall_s, point.reference.same_machine) == (m.ns3_fast08_1_s, True)
    other = bench.bench_points(quick=True, cpu="Some Other CPU")
    assert [p.reference.same_machine for p in other if p.reference] == [False, False, False]
    assert other[0].reference.machine == bench.REFERENCE_MACHINES[-1].cpu
    # a speed-up against another machine's time is reported, without a verdict
    rec = {"result": {"servers": 1, "wall_seconds": 0.01, "events": 10, "packet_hops": 5, "sim_seconds": 2.0,
                      "goodput_mbps": 900.0, "blocks": 1, "peak_packets": 1, "peak_events": 1},
           "rss_before_kib": 1000, "rss_after_kib": 2000}
    with mock.patch.object(bench.subprocess, "run", return_value=mock.Mock(returncode=0, stdout=json.dumps(rec))):
        here, there = bench.run_point(bench.bench_points(True, cpu="AMD EPYC")[0]), bench.run_point(other[0])
    assert here["speedup_ok"] is True and there["speedup_ok"] is None
    assert here["speedup"] == there["speedup"] == pytest.approx(bench.REFERENCE_MACHINES[-1].ns3_fast08_1_s / 0.01)
    assert "another CPU model" in bench.render_bench([there]) and "no verdict" in bench.render_bench([there])
    assert "another CPU model" not in bench.render_bench([here])


@pytest.mark.parametrize("argv, usage", [([], "usage: incastlab [-h]"), (["model"], "usage: incastlab model"),
                                          (["testbed"], "usage: incastlab testbed")])
def test_a_bare_command_prints_its_help_not_an_error(argv, usage):
    # `incastlab` alone, or a command that needs a subcommand given none: what there is to choose
    p = incastlab(*argv)
    assert p.returncode == 0 and p.stdout.startswith(usage) and p.stderr == ""
    assert "COMMAND" in p.stdout or "MODEL" in p.stdout or "STEP" in p.stdout


def test_version_names_the_installed_package():
    from importlib.metadata import version

    p = incastlab("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"incastlab {version('incastlab')}"


def test_ctrl_c_stops_a_long_point_within_a_second_and_writes_nothing(tmp_path):
    # issue 11: Ctrl-C used to wait for the running point to end (42 s seen). The core
    # checks a cancel flag every 4096 events; 100,000 servers x 1 block runs for minutes.
    import signal
    import time

    csv = tmp_path / "out.csv"
    p = subprocess.Popen([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "100000",
                          "--blocks", "1", "--csv", str(csv)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)  # inside the core by then (parsing and building take well under that)
    assert p.poll() is None, p.communicate()
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    latency = time.monotonic() - sent
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert latency < 1.0, latency
    assert not csv.exists() and list(tmp_path.iterdir()) == []


def test_percentiles_of_few_blocks_are_marked():
    # issue 11: 64 servers in 20 s complete one block and p50 = p99 was printed as a
    # distribution; under 10 blocks the table marks them and says why
    from incastlab.table import FEW_BLOCKS, render_results
    import pandas as pd

    row = {"servers": 64, "goodput_mbps": 13.4, "blocks": 1, "block_time_p50_s": 1.6, "block_time_p99_s": 1.6,
           "block_time_max_s": 1.6, "timeouts": 40, "retransmits": 900, "drops": 950, "max_queue_bytes": 32000,
           "events": 10**5, "wall_seconds": 0.1}
    out = render_results(pd.DataFrame([row, {**row, "servers": 1, "blocks": FEW_BLOCKS}]))
    lines = out.splitlines()
    assert lines[2].split()[3:5] == ["1600.00*", "1600.00*"]
    assert "*" not in lines[3]
    assert lines[-1].startswith(f"* percentile of fewer than {FEW_BLOCKS} blocks")


def test_progress_gives_an_eta_and_a_plain_line_per_point_without_a_terminal(monkeypatch, capsys):
    # issue 11: progress showed only on a terminal and had no ETA
    from incastlab.cli import progress

    clock = iter([0.0, 10.0, 20.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    show = progress.point_progress("simulate", 4)
    show(1, 4)
    show(2, 4)
    err = capsys.readouterr().err.splitlines()
    assert err == ["simulate: 1/4 points, 10.0 s, ETA 30 s", "simulate: 2/4 points, 20.0 s, ETA 20 s"]


def test_progress_stays_quiet_for_short_work_without_a_terminal(capsys):
    from incastlab.cli import progress

    show = progress.point_progress("simulate", 3)
    show(1, 3)
    assert capsys.readouterr().err == ""


def test_progress_moves_inside_one_point(monkeypatch):
    # issue 11: a single long point said nothing until it ended; now the core reports its
    # simulated time and blocks (RunProgress) and the sweep turns them into a fraction
    from incastlab import Scenario, sim
    from incastlab.study import runner

    # ticks every 5 ms, where the point takes about 0.3 s (9 M events on this project's
    # machine; the 5 s point it took once ended before the first 0.1 s wait was over)
    monkeypatch.setattr(runner, "TICK_S", 0.005)
    ticks = []
    point = Scenario(servers=64, duration="20s", rto_min="200us", buffer="256KiB")
    sim.run_points([point], jobs=1, progress=lambda done, total, simulated_s=None: ticks.append((done, simulated_s)))
    inside = [(d, s) for d, s in ticks if 0 < d < 1]
    assert inside, ticks
    assert all(s is not None and 0 < s <= 20 for _, s in inside)
    assert [d for d, _ in inside] == sorted(d for d, _ in inside), "progress never goes backwards"
    assert ticks[-1][0] == 1


def test_sweep_still_calls_a_two_argument_progress_once_per_point():
    from incastlab import Scenario, sweep

    seen = []
    sweep([Scenario(servers=n, blocks=1) for n in (1, 2, 3)], jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
