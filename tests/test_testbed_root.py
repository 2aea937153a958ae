"""The namespace testbed end to end, through the CLI (needs root: CI runs as root).

Reproduces the issue's measured shape (bridge + tbf + veth, TSO/GSO/GRO off, 64 KiB
buffer, 1 Gbps): incast collapse with the default RTOmin and its fix with route
rto_min 2ms (FAST'08 `000_315d806dde942a9f.txt` §5.1.2, Fig. 13); and that every object
of ours is gone after a run, even one killed with SIGINT or SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

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


def test_incast_collapses_with_default_rto_min_and_route_rto_min_fixes_it():
    common = ["--servers", "1,4,8,16", "--buffer", "64KiB", "--rate", "1Gbps", "--blocks", "40"]
    slow = sweep(*common)
    fast = sweep(*common, "--rto-min", "2ms")
    one = slow[1]["goodput_mbps"]
    # The data path must not be the bottleneck: one server fills most of the link
    # (goodput tops out at 1448/1514 of the rate; tbf's timer costs a few per cent more).
    assert one > 700, slow[1]
    for n in (4, 8, 16):
        assert slow[n]["goodput_mbps"] < one / 2, (n, slow[n])
        assert slow[n]["block_time_max_s"] > 0.2, "a 200 ms RTO stalled some block"
    assert sum(slow[n]["timeouts"] for n in (4, 8, 16)) > 0
    # the MIB counters of the server namespaces agree with the senders' TCP_INFO
    assert all(slow[n]["timeouts"] == slow[n]["timeouts_netstat"] for n in slow)
    assert sum(slow[n]["drops"] for n in (4, 8, 16)) > 0
    for n in (4, 8, 16):
        assert fast[n]["goodput_mbps"] >= 2 * slow[n]["goodput_mbps"], (n, slow[n]["goodput_mbps"], fast[n]["goodput_mbps"])


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


def _start_long_sweep() -> subprocess.Popen:
    p = subprocess.Popen(CLI + ["testbed", "sweep", "--prefix", PREFIX, "--servers", "4", "--blocks", "100000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    p.wait(timeout=30)
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
