"""The monitor's fan-in count on loopback, end to end (needs root for a private namespace).

Issue 11: `incastlab monitor --iface lo` counted 0 TCP senders while a 4-server read ran on
lo. The read (FAST'08's synchronized read, ``000_315d806dde942a9f.txt`` §2: the client asks
every server for one SRU and asks again when all have arrived) connected, transferred and
closed within a second, and the monitor only looked at the connections alive at the end of
each second. A read that outlived the second was counted twice over instead: both ends of a
loopback connection are sockets of this host and both receive (the request one way, the
data the other). The rule now (``python/incastlab/monitor/senders.py``): a connection is one
sender, its sender is the end that sent more in the second, and connections closed within
the second count.

The namespace is private so that no other socket of this machine is in the count; the
servers are four loopback addresses on one port, as ``127.0.0.1..4``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from monitor_support.run import CLI, HERE, env, json_lines

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a network namespace (CI runs as root)"),
]

# per process: several checkouts may run the tests on one machine at once
NETNS = f"ilmon-lo{os.getpid()}"
SERVERS = [f"127.0.0.{i}" for i in range(1, 5)]
PORT = 5201
SRU = 256 * 1024
WORKLOAD = os.path.join(HERE, "workload.py")


def _ns(*cmd: str) -> list[str]:
    return ["ip", "netns", "exec", NETNS, *cmd]


@pytest.fixture(scope="module")
def netns():
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)
    subprocess.run(["ip", "netns", "add", NETNS], check=True)
    try:
        subprocess.run(_ns("ip", "link", "set", "lo", "up"), check=True)
        yield NETNS
    finally:
        subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)


def _monitor_a_read(seconds: int, read_s: float) -> tuple[list[dict], dict, dict | None]:
    """Monitor lo for `seconds`; once the first second is reported, run a read of `read_s`
    seconds. Returns the monitor's seconds, its summary and the read's result (None when
    the read outlasts the monitor: it is stopped then)."""
    server = subprocess.Popen(_ns(sys.executable, WORKLOAD, "serve", "--addrs", ",".join(SERVERS), "--port",
                                  str(PORT), "--duration", str(seconds + read_s + 20)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    monitor = read = None
    try:
        assert server.stdout.readline().strip() == "ready", server.stderr.read()
        monitor = subprocess.Popen([sys.executable, CLI, "monitor", "--netns", NETNS, "--iface", "lo", "--duration",
                                    f"{seconds}s", "--json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        first = monitor.stdout.readline()  # the monitor is watching
        assert first.strip(), monitor.stderr.read()
        read = subprocess.Popen(_ns(sys.executable, WORKLOAD, "read", "--addrs", ",".join(SERVERS), "--port",
                                    str(PORT), "--sru", str(SRU), "--duration", str(read_s)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rest, err = monitor.communicate(timeout=60)
        assert monitor.returncode == 0, err
        seconds_out, summary = json_lines(first + rest)
        result = None
        if read.poll() is not None or read_s < seconds:
            out, err = read.communicate(timeout=60)
            assert read.returncode == 0, err
            result = json.loads(out)
        return seconds_out, summary, result
    finally:
        for p in (read, monitor, server):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def _print(seconds: list[dict]) -> None:
    for s in seconds:
        print(s["t_s"], s["rx"]["avg_mbps"], s["tcp_senders"], s.get("tcp_top_senders"), s["tcp"], s["verdict"], "|",
              s["evidence"])


def test_a_read_that_closes_within_the_second_counts_its_four_senders(netns):
    # 0.3 s of blocks: the read opens, transfers and closes between two readings (issue 11)
    seconds, summary, read = _monitor_a_read(4, 0.3)
    print("\n", read)
    _print(seconds)
    assert read["blocks"] > 0
    assert summary["unavailable"] == {}, summary["unavailable"]
    with_senders = [s for s in seconds if s["tcp_senders"]]
    assert with_senders, [s["evidence"] for s in seconds]
    # every second the read ran in (it may straddle two) saw all four servers, and only them
    assert all(s["tcp_senders"] == 4 for s in with_senders), [s["tcp_senders"] for s in seconds]
    per_server: dict[str, int] = {}
    for s in with_senders:
        for t in s["tcp_top_senders"]:
            assert t["sender"].rsplit(":", 1)[0] in SERVERS and t["sender"].endswith(f":{PORT}"), t
            per_server[t["sender"]] = per_server.get(t["sender"], 0) + t["bytes"]
    # each server sent every block's SRU to the client; its FIN advances bytes_received by one
    want = read["blocks"] * SRU
    assert sorted(per_server) == sorted(f"{a}:{PORT}" for a in SERVERS)
    assert all(want <= b <= want + 1 for b in per_server.values()), (per_server, want)


def test_a_read_on_loopback_is_four_senders_not_eight(netns):
    # a read through every second after the first: each of its connections has two local
    # ends, and both receive
    seconds, summary, _ = _monitor_a_read(4, 30)
    _print(seconds)
    counts = [s["tcp_senders"] for s in seconds]
    # from the second the read started in (its start-up may take a while on a loaded box)
    started = next(i for i, n in enumerate(counts) if n)
    assert counts[started:] == [4] * (len(counts) - started) and len(counts) - started >= 2, counts
    for s in seconds[started:]:
        assert {t["sender"] for t in s["tcp_top_senders"]} == {f"{a}:{PORT}" for a in SERVERS}
        # loopback's rx and tx are one counter: its bursts are judged, and named, once
        assert "on tx" not in s["evidence"], s["evidence"]
