"""The namespace testbed end to end, through the CLI (needs root: CI runs as root).

Incast collapse with the default RTOmin and the effect of route rto_min 2ms (FAST'08
`000_315d806dde942a9f.txt` §4, §5.2, Fig. 13) on bridge + tbf + veth with TSO/GSO/GRO
off; and that every object of ours is gone after a run, even one
killed with SIGINT or SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CI runs as root)"),
]

CLI = [sys.executable, "-m", "incastlab.cli.main"]
PREFIX = "iltbt"  # not the default prefix, so a developer's own testbed is left alone


def netns_of_ours() -> list[str]:
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True).stdout.strip()
    return sorted(n["name"] for n in json.loads(out or "[]") if n["name"].startswith(PREFIX + "-"))


def links_of_ours() -> list[str]:
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True).stdout
    return [l["ifname"] for l in json.loads(out) if l["ifname"].startswith(PREFIX + "-")]


def sweep(*extra: str) -> dict[int, dict]:
    out = subprocess.run(CLI + ["testbed", "sweep", "--prefix", PREFIX, "--json", *extra],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    return {r["servers"]: r for r in rows}


@pytest.fixture(autouse=True)
def clean():
    subprocess.run(CLI + ["testbed", "down", "--prefix", PREFIX], capture_output=True)
    yield
    subprocess.run(CLI + ["testbed", "down", "--prefix", PREFIX], capture_output=True)
    assert netns_of_ours() == []


def _best_of_3(*args: str) -> float:
    # A capability ("can it reach X?") is the best of a few runs: other work on the two
    # shared cores only ever lowers a run's goodput.
    return max(sweep(*args)[1]["goodput_mbps"] for _ in range(3))


def test_the_data_path_is_not_the_bottleneck():
    # Through the same namespaces, bridge and veths but with the port unshaped, one
    # server moves 3.9-5.3 Gbps on a quiet machine (1.5 Gbps measured while four builds
    # loaded the two cores), so at 1 Gbps the port, not the data path, is the limit.
    free = _best_of_3("--servers", "1", "--blocks", "400", "--rate", "100Gbps", "--buffer", "4MiB", "--burst", "1MiB")
    assert free > 1200, free
    # Shaped to 1 Gbps one server gets 850-920 Mbps on a quiet machine (goodput is capped
    # at 1448/1514 = 95.6 % by headers); tbf's timer runs late when other work loads the
    # two cores (single runs measured down to 500 Mbps, best of three once at 740), hence
    # 70 % here; the data path itself is measured above and on loopback (> 5 Gbps).
    shaped = _best_of_3("--servers", "1", "--blocks", "200", "--rate", "1Gbps", "--buffer", "64KiB")
    assert shaped > 700, shaped


def test_incast_collapse_and_the_rto_min_fix_on_real_linux_tcp():
    # The issue's shape (FAST'08 Fig. 2-4 and 13 on real Linux TCP): with the default
    # RTOmin, N >= 4 gets below half of N = 1, timeouts are counted, and route rto_min
    # 2 ms raises goodput at least twofold. At 1 Gbps this 2-core machine's CPU-bound
    # namespace "fabric" barely outruns the port, so bursts rarely overflow and Linux
    # (SACK, RACK-TLP) recovers without timeouts (docs/testbed.md); at 100 Mbps the fabric
    # outruns the port as N real links outrun one switch port. 8 KiB drains in 0.66 ms,
    # about what 64 KiB does at 1 Gbps. Senders run reno, the loss-based TCP the papers
    # study (this kernel's default, bbr, paces and drops erratically in so small a queue).
    # Measured (idle machine): N=1 94-95 Mbps, N=4-16 29-36; with 2 ms 66-89 (2.3-2.5x).
    common = ["--servers", "1,4,8,16", "--buffer", "8KiB", "--rate", "100Mbps", "--blocks", "20", "--cc", "reno"]
    slow = sweep(*common)
    fast = sweep(*common, "--rto-min", "2ms")
    one = slow[1]["goodput_mbps"]
    assert one > 85, slow[1]
    for n in (4, 8, 16):
        assert slow[n]["goodput_mbps"] < one / 2, (n, slow[n]["goodput_mbps"], one)
        assert slow[n]["timeouts"] > 0 and slow[n]["drops"] > 0, slow[n]
        assert slow[n]["block_time_max_s"] > 0.2, "some block waited out a 200 ms RTO"
        # per point 1.5x: a point of 20 blocks moves ~10 % with one more backed-off timeout
        assert fast[n]["goodput_mbps"] >= 1.5 * slow[n]["goodput_mbps"], (n, slow[n], fast[n])
    # "at least twofold" over the collapsed region as a whole (measured 2.4x)
    total = lambda r: sum(r[n]["goodput_mbps"] for n in (4, 8, 16))  # noqa: E731
    assert total(fast) >= 2 * total(slow), (total(slow), total(fast))
    # the MIB counters of the server namespaces agree with the senders' TCP_INFO
    assert all(slow[n]["timeouts"] == slow[n]["timeouts_netstat"] for n in slow)


def test_up_run_down_step_by_step():
    up = subprocess.run(CLI + ["testbed", "up", "--prefix", PREFIX, "--servers", "2"], capture_output=True, text=True)
    assert up.returncode == 0, up.stderr
    assert f"{PREFIX}-c" in netns_of_ours() and f"{PREFIX}-s2" in netns_of_ours()
    run = subprocess.run(CLI + ["testbed", "run", "--prefix", PREFIX, "--servers", "1,2", "--blocks", "5", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    rows = [json.loads(l) for l in run.stdout.splitlines()]
    assert [r["servers"] for r in rows] == [1, 2]
    assert all(r["blocks"] == 5 and r["goodput_mbps"] > 0 for r in rows)
    too_many = subprocess.run(CLI + ["testbed", "run", "--prefix", PREFIX, "--servers", "3"], capture_output=True, text=True)
    assert too_many.returncode == 2 and "--servers" in too_many.stderr
    down = subprocess.run(CLI + ["testbed", "down", "--prefix", PREFIX], capture_output=True, text=True)
    assert down.returncode == 0
    assert netns_of_ours() == [] and links_of_ours() == []


def _sigint_default() -> None:
    # A shell without job control starts background commands with SIGINT ignored, and
    # Python keeps an inherited SIG_IGN (no KeyboardInterrupt). Give the sweep the
    # disposition a terminal gives it, however pytest itself was started.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_long_sweep() -> subprocess.Popen:
    p = subprocess.Popen(CLI + ["testbed", "sweep", "--prefix", PREFIX, "--servers", "4", "--blocks", "100000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 30
    while f"{PREFIX}-s4" not in netns_of_ours():
        assert p.poll() is None, p.stderr.read()
        assert time.monotonic() < deadline, "the sweep never built its namespaces"
        time.sleep(0.1)
    time.sleep(1.0)  # let the run get going
    return p


def test_sigint_tears_everything_down():
    p = _start_long_sweep()
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()  # do not leave a sweep running (and loading the cores) for the next tests
        p.wait()
        raise
    assert p.returncode == 130
    assert netns_of_ours() == [] and links_of_ours() == []


def test_after_sigkill_down_and_a_later_sweep_remove_the_leftovers():
    p = _start_long_sweep()
    p.kill()
    p.wait(timeout=10)
    assert f"{PREFIX}-sw" in netns_of_ours(), "SIGKILL leaves the namespaces (nothing can run on SIGKILL)"
    down = subprocess.run(CLI + ["testbed", "down", "--prefix", PREFIX], capture_output=True, text=True)
    assert down.returncode == 0 and f"{PREFIX}-sw" in down.stdout
    assert netns_of_ours() == [] and links_of_ours() == []

    p = _start_long_sweep()
    p.kill()
    p.wait(timeout=10)
    rows = sweep("--servers", "1", "--blocks", "3")  # finds and removes the stale ones first
    assert rows[1]["blocks"] == 3
    assert netns_of_ours() == []


def test_teardown_touches_nothing_that_is_not_ours():
    foreign = f"{PREFIX}x-keep"  # shares the letters but not the "<prefix>-" prefix
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        down = subprocess.run(CLI + ["testbed", "down", "--prefix", PREFIX], capture_output=True, text=True)
        assert down.returncode == 0
        out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert foreign in out
    finally:
        subprocess.run(["ip", "netns", "del", foreign])


def test_bad_input_is_one_line_and_exit_2():
    out = subprocess.run(CLI + ["testbed", "sweep", "--prefix", PREFIX, "--servers", "1", "--cc", "no-such-cc",
                                "--blocks", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "no-such-cc" in out.stderr and "Traceback" not in out.stderr
    assert netns_of_ours() == []


def test_validate_prints_both_sides_with_the_ratio_and_plots(tmp_path):
    plot = tmp_path / "v.png"
    out = subprocess.run(CLI + ["validate", "--prefix", PREFIX, "--servers", "1,4", "--blocks", "5", "--json",
                                "--cc", "reno", "--plot", str(plot)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(l) for l in out.stdout.splitlines()]
    assert [r["servers"] for r in rows] == [1, 4]
    for r in rows:
        assert r["simulator"]["blocks"] == 5 and r["testbed"]["blocks"] == 5
        assert r["goodput_ratio"] == pytest.approx(r["goodput_mbps_testbed"] / r["goodput_mbps_sim"])
        # the simulator ran the linux preset for the testbed's --cc, whose table the row carries
        assert r["simulator"]["tcp"] == "sack" and r["simulator"]["cc"] == "newreno"
        assert r["testbed"]["congestion"] == "reno"
        cc_row = r["preset"][0]
        assert cc_row["kernel"].startswith("testbed --cc reno") and cc_row["simulator"] == "cc=newreno"
    assert plot.stat().st_size > 1000
    assert netns_of_ours() == []


def test_start_next_at_threshold_reads_every_block_and_is_reported():
    # NCCS's application form (Osada et al. §4.3): at most K servers, the next request when
    # the newest response has SIZE left; every byte of every block still arrives.
    r = sweep("--servers", "4", "--max-concurrent", "2", "--start-next-at", "64KiB", "--blocks", "3")[4]
    assert r["blocks"] == 3 and r["start_next_at_bytes"] == 64 * 1024
    assert r["goodput_mbps"] > 0


def test_bad_start_next_at_is_one_line_and_exit_2():
    out = subprocess.run(CLI + ["testbed", "sweep", "--start-next-at", "lots"], capture_output=True, text=True)
    assert out.returncode == 2 and "--start-next-at" in out.stderr and "Traceback" not in out.stderr


def _traced_validate(tmp_path) -> dict:
    """`validate --trace` of one 2-server point: its JSON row (with both traces' paths)."""
    out = subprocess.run(CLI + ["validate", "--prefix", PREFIX, "--servers", "2", "--blocks", "4", "--json",
                                "--cc", "reno", "--rate", "100Mbps", "--buffer", "8KiB", "--trace", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[0])


def test_validate_traces_both_sides_segmented_alike(tmp_path):
    # --trace: each point captured packet by packet (docs/testbed.md, "Capture and trace"),
    # and the simulator's trace of the same point written beside it
    from incastlab.peers import tracediff
    row = _traced_validate(tmp_path)
    sim = tracediff.read_trace(row["traces"]["simulator"])
    assert sim.counts["drop"] == row["simulator"]["drops"]
    # a response is segmented as the simulator's: its header rides in the first full segment
    for side in (row["traces"]["testbed"], row["traces"]["simulator"]):
        first = [e for e in tracediff.read_trace(side, block=1).data if e.kind == "tx" and e.a == 1]
        assert [e.b for e in first] == [1448, 1448], side
    assert (tmp_path / "testbed-n2" / f"{PREFIX}-c-p.pcapng").stat().st_size > 0
    # the client's receive-window tracepoint is kept beside the servers' lines where this
    # kernel has it: tcp_rcv_space_adjust fires on every read of the client's sockets
    lines = (tmp_path / "testbed-n2" / "tcp_probe.txt").read_text()
    assert " tcp_probe: " in lines
    if Path("/sys/kernel/tracing/events/tcp/tcp_rcv_space_adjust").is_dir():
        assert " tcp_rcv_space_adjust: " in lines


def test_validate_runs_the_simulator_with_the_think_times_and_round_trip_it_measured(tmp_path):
    # --measured-think-times and --rtt measured without --trace: the point is captured to a
    # temporary directory, its servers' think times (testbed.start_spread) and its round trip
    # (testbed.round_trip) read from it; the simulator runs with the round trip, and a second
    # time with the think times too (and, --sim-seeds, with two more seeds); nothing of the
    # capture is left behind
    import glob
    import tempfile
    from incastlab.schema import BY_PUBLIC
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "incastlab-capture-*")))
    out = subprocess.run(CLI + ["validate", "--prefix", PREFIX, "--servers", "2", "--blocks", "4", "--json",
                                "--cc", "reno", "--rate", "100Mbps", "--buffer", "8KiB", "--measured-think-times",
                                "--rtt", "measured", "--sim-seeds", "3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.splitlines()[0])
    assert row["start_spread"]["flow_blocks"] == 2 * 4  # two servers, four blocks, the stats exchange left out
    think = BY_PUBLIC["think_times"].to_native(row["think_times"])
    assert len(think) == 8 and think == sorted(think)
    # the servers of a namespace testbed take some microseconds to answer, and less than the
    # 200 ms an RTO would be
    assert 0 < think[-1] < 200 * 10**9, row["think_times"]
    sim = row["simulator_think"]
    assert sim["blocks"] == 4 and row["goodput_mbps_sim_think"] == sim["goodput_mbps"]
    assert row["goodput_ratio_think"] == pytest.approx(row["goodput_mbps_testbed"] / sim["goodput_mbps"])
    # --sim-seeds 3: the think-time run is seed 1 of three, and the testbed's run is inside
    # their spread exactly when its goodput and timeouts both lie within the seeds' ends
    seeds = row["think_seeds"]
    assert seeds["seeds"] == [1, 2, 3] and seeds["goodput_mbps"][0] == sim["goodput_mbps"]
    assert seeds["timeouts"][0] == sim["timeouts"] and len(seeds["goodput_mbps"]) == 3
    tb_in = (min(seeds["goodput_mbps"]) <= row["goodput_mbps_testbed"] <= max(seeds["goodput_mbps"])
             and min(seeds["timeouts"]) <= row["timeouts_testbed"] <= max(seeds["timeouts"]))
    assert seeds["testbed_inside"] is tb_in
    # every one of the 4 x 256 KiB / 1448 B segments per server has its data half; the
    # namespaces' packets cross in microseconds (docs/testbed.md: 1-10 us with idle CPUs
    # polling, 30-80 us on a hop steered to a halted vCPU otherwise), well under the 100 us
    # --rtt would give, and both runs take what was measured
    trip = row["round_trip"]
    assert trip["data_samples"] >= 2 * 4 * (256 * 1024 // 1448) and trip["ack_samples"] > 0
    assert 0 < trip["data_half_us_p10"] < 100 and 0 < trip["ack_half_us_p10"] < 100, trip
    assert row["simulator"]["rtt_s"] == sim["rtt_s"] == trip["simulator_rtt_s"] < 100e-6
    # its idle CPUs polled while it ran (testbed.cpu_idle; validate's default --cpu-idle)
    assert row["testbed"]["cpu_idle"] == "poll"
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "incastlab-capture-*"))) == before
    assert netns_of_ours() == []
    # `validate --rerun` on the row just written runs its saved scenarios again: the same
    # build gives the same numbers, the testbed side is kept (wall time aside)
    saved = tmp_path / "rows.jsonl"
    saved.write_text(out.stdout)
    again = subprocess.run(CLI + ["validate", "--rerun", str(saved), "--json"], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    new = json.loads(again.stdout.splitlines()[0])
    same = lambda r: {k: v for k, v in r.items() if k != "wall_seconds"}
    assert same(new["simulator"]) == same(row["simulator"])
    assert same(new["simulator_think"]) == same(sim)
    assert (new["think_seeds"]["goodput_mbps"], new["think_seeds"]["timeouts"]) == (seeds["goodput_mbps"],
                                                                                   seeds["timeouts"])
    assert new["testbed"] == row["testbed"] and new["round_trip"] == trip


def test_the_capture_counts_every_switch_drop(tmp_path):
    # the trace's drops are tbf's drop counter, one for one, and every send reached the switch.
    # It failed in about 1 run of 3 until the captures ran on past the point's end: dumpcap's
    # last 250 ms of frames were lost unseen (capture.SETTLE_S); the conversion now refuses a
    # capture that missed a frame a later point saw, so a miss fails loudly, not as a count
    from incastlab.peers import tracediff
    row = _traced_validate(tmp_path)
    tb = tracediff.read_trace(row["traces"]["testbed"])
    t = row["testbed"]
    assert tb.counts["drop"] + t["trace_control_drops"] == t["drops"] and t["trace_unmatched_egress"] == 0
    assert tb.counts["tx"] + tb.counts["rtx"] == tb.counts["enq"] + tb.counts["drop"], "every send reached the switch"
    assert netns_of_ours() == []



def _tcpi_rto_ms(client_ns: str, server_ns: str, option_us: int) -> float:
    """tcpi_rto of a connection from `client_ns` that has sent 50 small writes 2 ms apart,
    with TCP_RTO_MIN_US = `option_us` on its socket (0: not set)."""
    server = subprocess.Popen(["ip", "netns", "exec", server_ns, sys.executable, "-c",
                               "import socket\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
                               "s.bind(('10.99.0.2',5999)); s.listen(1); print('up', flush=True)\nc,_=s.accept()\n"
                               "while c.recv(65536): pass\n"], stdout=subprocess.PIPE, text=True)
    assert server.stdout.readline().strip() == "up"
    out = subprocess.run(["ip", "netns", "exec", client_ns, sys.executable, "-c",
                          "import socket,struct,time\nc=socket.socket()\n"
                          f"if {option_us}: c.setsockopt(socket.IPPROTO_TCP, 45, {option_us})\n"
                          "c.connect(('10.99.0.2',5999))\n"
                          "for _ in range(50): c.send(b'x'*1000); time.sleep(0.002)\n"
                          "print(struct.unpack_from('I', c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 8)[0])\n"
                          "c.close()"], capture_output=True, text=True, timeout=30)
    server.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    return int(out.stdout) / 1000


def test_the_kernels_rto_min_precedence_is_the_presets(tmp_path):
    # Linux 6.15+: tcp_rto_min() takes a locked route metric first, then icsk_rto_min, which
    # TCP_RTO_MIN_US sets and which starts as the namespace's tcp_rto_min_us. Measured on a
    # connection between two namespaces of ours (tcpi_rto = RTOmin + srtt/8 + rounding to
    # jiffies, so at most 4 jiffies = 16 ms above RTOmin at HZ=250 with a tiny RTT: the cases'
    # RTOmins, 100 / 12 / 20 ms, are told apart by that margin), against presets.rto_min
    # reading the same namespace.
    from incastlab import presets
    from incastlab.testbed import kernel
    if not kernel.has_socket_option("TCP_RTO_MIN_US"):
        pytest.skip("this kernel has no TCP_RTO_MIN_US (Linux 6.15+)")
    a, b = f"{PREFIX}-rto-a", f"{PREFIX}-rto-b"
    ip = lambda *args: subprocess.run(["ip", *args], check=True, capture_output=True)
    ip("netns", "add", a), ip("netns", "add", b)
    ip("link", "add", f"{PREFIX}-ra", "netns", a, "type", "veth", "peer", "name", f"{PREFIX}-rb", "netns", b)
    ip("-n", a, "addr", "add", "10.99.0.1/24", "dev", f"{PREFIX}-ra"), ip("-n", b, "addr", "add", "10.99.0.2/24", "dev", f"{PREFIX}-rb")
    ip("-n", a, "link", "set", f"{PREFIX}-ra", "up"), ip("-n", b, "link", "set", f"{PREFIX}-rb", "up")
    ip("netns", "exec", a, "sysctl", "-qw", "net.ipv4.tcp_rto_min_us=100000")
    jiffy = presets._jiffy()
    ns = presets.Kernel.of_netns(a, "10.99.0.2")
    cases = []
    for route, option_us in ((False, 0), (False, 12000), (True, 12000)):
        if route:
            ip("-n", a, "route", "add", "10.99.0.2/32", "dev", f"{PREFIX}-ra", "rto_min", "20ms")
        expected, why = presets.rto_min(ns, jiffy, socket_s=option_us / 1e6 if option_us else None)
        cases.append((expected * 1e3, _tcpi_rto_ms(a, b, option_us), why))
    assert [round(e) for e, _, _ in cases] == [100, 12, 20], cases   # sysctl; option over sysctl; route over both
    for expected, rto, why in cases:
        assert expected <= rto < expected + 16, (expected, rto, why)
