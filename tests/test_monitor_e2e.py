"""The monitor end to end on real Linux TCP in network namespaces (needs root).

A synchronized-read incast (FAST'08, ``000_315d806dde942a9f.txt`` §2: 16 servers, 256 KiB
SRU, a 64 KiB drop-tail port) through a 500 Mbit/s tbf towards the client; the monitor
watches the client's interface (``--netns``), reads TCP counters where the senders are
(``--tcp-netns``; RTO timeouts are counted at the senders) and the drops of the switch
port (``--qdisc-dev/--qdisc-netns``). Then a single bulk flow through the same port must
not be called incast. The topology is in ``monitor_support/netns_setup.py``.

Rate: 500 Mbit/s is what this 2-core machine forwards through three namespaces with
offloads off while the workload, the monitor and other builds share the CPU (the bulk
flow reaches ~410 Mbit/s), so the shaped rate, not the CPU, is the bottleneck.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from monitor_support import netns_setup as topo
from monitor_support.run import CLI, HERE, env, incastlab, json_lines

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces (CI runs as root)"),
]

RATE_BPS = 500e6
RATE_TC = "500mbit"
WORKLOAD = os.path.join(HERE, "workload.py")
MONITOR_SECONDS = 4
# the workload runs this long before the monitor starts, past its connections' slow start
WORKLOAD_LEAD_S = 1.0


@pytest.fixture(scope="module")
def testbed():
    try:
        topo.setup(RATE_TC)
        yield topo
    finally:
        topo.teardown()


def _run_with_monitor(mode: str, tmp_path, source: str, extra: tuple[str, ...] = ()) -> tuple[list[dict], dict, str]:
    """Start the workload, and the monitor a second later; the workload outlasts the
    monitor's start-up (two Python start-ups under `ip netns exec`, seconds on a loaded
    2-core box) plus its MONITOR_SECONDS, so every monitored second sees the workload in its
    stride (a monitor started first could catch the bulk flow's first second, 216 of 500
    Mbit/s once); it is stopped when the monitor is done."""
    addrs = ",".join(topo.SERVER_ADDRS)
    duration = MONITOR_SECONDS + 10
    rec = str(tmp_path / f"{mode}.parquet")
    server = subprocess.Popen(["ip", "netns", "exec", topo.SERVERS, sys.executable, WORKLOAD, "serve",
                               "--addrs", addrs, "--duration", str(duration + 3)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    clients: list = []
    monitor = None
    try:
        assert server.stdout.readline().strip() == "ready", server.stderr.read()
        # "read+bulk": a bulk flow from the first server address beside the read
        clients = [subprocess.Popen(["ip", "netns", "exec", topo.CLIENT, sys.executable, WORKLOAD, m,
                                     "--addrs", addrs, "--duration", str(duration)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for m in mode.split("+")]
        time.sleep(WORKLOAD_LEAD_S)
        monitor = subprocess.Popen(
            [sys.executable, CLI, "monitor", "--netns", topo.CLIENT, "--iface", topo.CLIENT_IF,
             "--duration", f"{MONITOR_SECONDS}s", "--line-rate", "500Mbps", "--json",
             "--tcp-netns", topo.SERVERS, "--qdisc-dev", topo.SW_CLIENT_IF, "--qdisc-netns", topo.SWITCH,
             "--record", rec, "--source", source, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        mon_out, mon_err = monitor.communicate(timeout=60)
        assert monitor.returncode == 0, mon_err
        assert all(c.poll() is None for c in clients), "the workload ended before the monitor did: lengthen it"
        seconds, summary = json_lines(mon_out)
        return seconds, summary, rec
    finally:
        for p in (monitor, *clients, server):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("source", ["sysfs", "ebpf"])
def test_incast_read_is_judged_incast_with_its_evidence(testbed, tmp_path, source):
    seconds, summary, rec = _run_with_monitor("read", tmp_path, source)
    print(f"\n[{source}] incast read")
    for s in seconds:
        print(s["t_s"], s["rx"]["avg_mbps"], s["rx"]["1ms"], s["rx"]["100ms"]["peak_mbps"], s["tcp"]["rto_timeouts"],
              s["qdisc_drops"], s["ecn_ce"], s["verdict"], "|", s["evidence"])
    print("interval:", summary["interval"])
    assert summary["source"] == source and len(seconds) == MONITOR_SECONDS
    peak_1ms = max(s["rx"]["1ms"]["peak_mbps"] for s in seconds)
    peak_100ms = max(s["rx"]["100ms"]["peak_mbps"] for s in seconds)
    rate = RATE_BPS / 1e6
    # the tbf releases at most rate x T + its 16 KB bucket in any T: 1 ms -> rate + 131 Mbit/s
    tbf_1ms = rate + 16 * 1024 * 8 / 1e-3 / 1e6
    # below 0.7 x rate the bursts would not be "at line rate" at all
    assert peak_1ms >= 0.7 * rate
    if source == "sysfs":
        # veth's counters move when the switch port transmits: bounded by the tbf (5 % slack
        # for timestamping the readings)
        assert peak_1ms <= tbf_1ms * 1.05
    # eBPF counts when the client's stack processes the packet; on this loaded 2-core VM the
    # receive backlog is drained in batches, so its 1 ms peak can exceed the tbf bound (see
    # docs/monitor.md); at 100 ms both sources must agree with the shaped rate
    assert peak_100ms <= rate * 1.1
    for s in seconds:
        # 1 s peak/avg is 1 by definition (None for a second with no traffic at all: a flow
        # in exponential RTO backoff can stall a block for more than a second); incast's
        # 1 ms ratio is far above it
        assert s["rx"]["1s"]["ratio"] is None or s["rx"]["1s"]["ratio"] == pytest.approx(1.0)
    assert max(s["rx"]["1ms"]["ratio"] for s in seconds) >= 2.5
    assert sum(s["tcp"]["rto_timeouts"] or 0 for s in seconds) > 0
    assert sum(sum(s["qdisc_drops"].values()) for s in seconds) > 0
    incast = [s for s in seconds if s["verdict"] == "incast"]
    assert len(incast) >= MONITOR_SECONDS // 2, [s["evidence"] for s in seconds]
    assert "consistent with incast" in incast[0]["evidence"]
    assert summary["incast_seconds"] == len(incast)
    assert summary["unavailable"] == {}
    # fan-in over a real (veth) interface: the 16 servers, never more (a server in RTO
    # backoff for a whole second delivers nothing in it), named by their address and port
    counts = [s["tcp_senders"] for s in seconds]
    assert max(counts) == len(topo.SERVER_ADDRS) and all(n <= len(topo.SERVER_ADDRS) for n in counts), counts
    assert all(t["sender"].rsplit(":", 1)[0] in topo.SERVER_ADDRS for s in seconds for t in s["tcp_top_senders"])
    plot = incastlab("monitor", "plot", rec, "--out", str(tmp_path / "read.png"))
    assert plot.returncode == 0, plot.stderr


@pytest.mark.parametrize("source", ["sysfs", "ebpf"])
def test_single_bulk_transfer_is_not_incast(testbed, tmp_path, source):
    seconds, summary, _ = _run_with_monitor("bulk", tmp_path, source)
    print(f"\n[{source}] bulk")
    for s in seconds:
        print(s["t_s"], s["rx"]["avg_mbps"], s["rx"]["1ms"], s["tcp"]["rto_timeouts"], s["qdisc_drops"],
              s["verdict"], "|", s["evidence"])
    assert summary["source"] == source
    assert [s["tcp_senders"] for s in seconds] == [1] * len(seconds)
    # the flow really ran through the port: half the shaped rate on average, and every
    # second (a single flow can lose packets and wait out RTOs in a 64 KiB queue: a second
    # at 149 Mbit/s was measured, which is why this is not "half the rate every second")
    avgs = [s["rx"]["avg_mbps"] for s in seconds]
    assert sum(avgs) / len(avgs) > 0.5 * RATE_BPS / 1e6 and min(avgs) > 0.1 * RATE_BPS / 1e6, avgs
    # both sources count the same flow: at 100 ms it is the shaped rate
    assert max(s["rx"]["100ms"]["peak_mbps"] for s in seconds) <= RATE_BPS / 1e6 * 1.1
    if source == "sysfs":  # what `auto` uses on veth
        assert all(s["verdict"] == "none" for s in seconds), [s["evidence"] for s in seconds]
        assert summary["incast_seconds"] == 0
    # eBPF on veth dates packets after receive-backlog batching (docs/monitor.md, Limits): on
    # this loaded box a steady 480 Mbit/s flow shows 1 ms peaks of 1-2 Gbit/s, and with one
    # RTO in the same second the rule has (rarely) called a bulk second incast; that is why
    # `auto` uses sysfs on software devices, and why the verdict is not asserted for it here


def test_incast_beside_a_bulk_flow_above_half_the_link_is_incast(testbed, tmp_path):
    # issue 26: the read's answers beside a bulk flow that keeps the port busy; the 1 ms peak
    # cannot be 3x a 1 s average above a third of the link, so the rule before called it none
    ms = str(tmp_path / "busy-ms.parquet")
    seconds, summary, rec = _run_with_monitor("read+bulk", tmp_path, "sysfs", ("--millisampler", ms))
    print("\n[sysfs] read beside a bulk flow")
    for s in seconds:
        print(s["t_s"], s["rx"]["avg_mbps"], s["rx"]["1ms"], s["fanin"], s["tcp"]["rto_timeouts"], s["qdisc_drops"],
              s["tcp_senders"], s["verdict"], s["verdict_ratio_rule"], "|", s["evidence"])
    avgs = [s["rx"]["avg_mbps"] for s in seconds]
    # the link above half its rate every second
    assert min(avgs) > 0.5 * RATE_BPS / 1e6, avgs
    incast = [s for s in seconds if s["verdict"] == "incast"]
    assert len(incast) >= MONITOR_SECONDS // 2, [s["evidence"] for s in seconds]
    # judge's rule (monitor/verdict.py): a second is incast on its own fan-in, or on its
    # timeouts after the fanned-in burst of the second before, which its evidence then names
    for i, s in enumerate(seconds):
        if s["verdict"] == "incast" and s["fanin"]["senders"] < 2:
            assert "the burst and its losses in the second before" in s["evidence"], s["evidence"]
            assert i > 0 and seconds[i - 1]["fanin"]["senders"] >= 2, (seconds[i - 1]["fanin"], s["evidence"])
    from incastlab import millisampler

    df = millisampler.read(ms)
    assert set(df["scale_s"]) == {1e-4, 1e-3, 1e-2} and (df["source"] == "monitor").all()


def test_without_privileges_it_reads_what_it_can_and_names_what_it_cannot(testbed):
    # root without capabilities: the namespaces of --tcp-netns/--qdisc-netns cannot be entered
    drop = ("ip", "netns", "exec", topo.CLIENT, "setpriv", "--inh-caps=-all", "--bounding-set=-all")
    r = incastlab("monitor", "--iface", topo.CLIENT_IF, "--duration", "1s", "--json",
                  "--tcp-netns", topo.SERVERS, "--qdisc-dev", topo.SW_CLIENT_IF, "--qdisc-netns", topo.SWITCH,
                  prefix=drop)
    assert r.returncode == 0, r.stderr
    seconds, summary = json_lines(r.stdout)
    assert summary["source"] == "sysfs" and "software device" in summary["source_reason"]
    assert seconds[0]["rx"]["1ms"] is not None  # rates need no privilege
    assert seconds[0]["interval"]["realtime"] is False
    unavailable = summary["unavailable"]
    assert any(topo.SERVERS in k for k in unavailable), unavailable
    assert any(topo.SW_CLIENT_IF in k for k in unavailable), unavailable
    assert seconds[0]["tcp"]["rto_timeouts"] is None and seconds[0]["verdict"] != "incast"


def test_ebpf_without_privileges_is_a_clear_error(testbed):
    drop = ("ip", "netns", "exec", topo.CLIENT, "setpriv", "--inh-caps=-all", "--bounding-set=-all")
    r = incastlab("monitor", "--iface", topo.CLIENT_IF, "--duration", "1s", "--source", "ebpf", prefix=drop)
    assert r.returncode == 2 and "--source ebpf" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_netns_needs_privileges_and_says_so(testbed):
    r = incastlab("monitor", "--netns", topo.CLIENT, "--iface", topo.CLIENT_IF, "--duration", "1s",
                  prefix=("setpriv", "--inh-caps=-all", "--bounding-set=-all"))
    assert r.returncode == 2 and "needs root" in r.stderr


@pytest.mark.parametrize("source", ["sysfs", "ebpf"])
def test_interface_that_disappears_mid_run_is_a_clear_error(testbed, source):
    subprocess.run(["ip", "netns", "exec", topo.CLIENT, "ip", "link", "add", "ilmon-tmp0", "type", "veth", "peer", "name", "ilmon-tmp1"], check=True)
    mon = subprocess.Popen([sys.executable, os.path.join(HERE, "cli.py"), "monitor", "--netns", topo.CLIENT,
                            "--iface", "ilmon-tmp0", "--duration", "8s", "--source", source],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env())
    first = mon.stdout.readline()  # the monitor runs (its first second is out) ...
    assert first.startswith("t="), (first, mon.stderr.read() if mon.poll() is not None else "")
    subprocess.run(["ip", "netns", "exec", topo.CLIENT, "ip", "link", "del", "ilmon-tmp0"], check=True)  # ... pull it
    out, err = mon.communicate(timeout=20)
    assert mon.returncode == 2, (out, err)
    assert "ilmon-tmp0" in err and "disappeared" in err and "Traceback" not in err
