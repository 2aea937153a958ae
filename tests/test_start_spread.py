"""The servers' start spread read from a per-event trace, and the simulator's measured think
times (``incastlab.testbed.start_spread``, the scenario's ``think_times``; issue 27)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab.recording import Recording
from incastlab.scenario import Scenario
from incastlab.sim import simulate
from incastlab.testbed import start_spread as ss
from trace_support import US, write_trace


# Two flows, two blocks and the testbed's closing stats exchange (a third request). A request
# is an ack line with the wire header's 24 bytes; its a is the acknowledgment it carries.
LINES = [
    (100, "ack", 0, 1, 24), (103, "ack", 1, 1, 24),  # block 0's requests, 3 us apart
    (130, "tx", 0, 1, 1448), (190, "tx", 1, 1, 1448), (191, "tx", 1, 1449, 1448),
    (900, "ack", 1, 1, 24),  # flow 1's request again (acknowledging no more): not a block
    (1000, "ack", 1, 25, 24), (1010, "ack", 0, 25, 24),  # block 1's
    (1040, "tx", 1, 1, 1448), (1110, "tx", 0, 1, 1448),
    (2000, "ack", 0, 49, 24), (2000, "ack", 1, 49, 24), (2020, "tx", 0, 1, 100), (2020, "tx", 1, 1, 100),  # stats
]


def test_each_server_starts_its_block_at_its_first_segment_after_its_request(tmp_path):
    path = write_trace(tmp_path / "testbed-n2.csv", LINES)
    starts = ss.block_starts(path, blocks=2)
    assert [(s.block, s.flow, s.request_ps // US, s.first_send_ps // US) for s in starts] == [
        (0, 0, 100, 130), (1, 0, 1010, 1110), (0, 1, 103, 190), (1, 1, 1000, 1040)]
    # think time: from the block's earliest request anywhere; offset: from its first segment
    assert [t // US for t in ss.think_times_ps(starts)] == [30, 40, 90, 110]
    assert [t // US for t in ss.start_offsets_ps(starts)] == [0, 0, 60, 70]
    assert ss.summary(starts) == {"flow_blocks": 4, "start_offset_us_p50": 0.0, "start_offset_us_p90": 70.0,
                                  "think_us_p50": 40.0, "think_us_p90": 110.0, "think_us_max": 110.0}
    # without the block count, the stats exchange is a third block
    assert len(ss.block_starts(path)) == 6


def test_a_trace_without_requests_has_no_starts(tmp_path):
    path = write_trace(tmp_path / "t.csv", [(10, "tx", 0, 1, 1448)])
    starts = ss.block_starts(path)
    assert starts == [] and ss.think_quantiles(ss.think_times_ps(starts)) == []
    assert ss.summary(starts)["start_offset_us_p50"] is None


def test_think_quantiles_keep_a_short_list_and_take_midpoints_of_a_long_one():
    assert ss.think_quantiles([5, 7, 9]) == [5, 7, 9]
    q = ss.think_quantiles(list(range(100)), k=4)
    # nearest rank at 1/8, 3/8, 5/8, 7/8 of 100 values 0..99: ranks 13, 38, 63, 88
    assert q == [12, 37, 62, 87]
    assert len(ss.think_quantiles(list(range(1000)))) == ss.THINK_QUANTILES


def _scenario(**kw) -> Scenario:
    return Scenario(servers=4, sru="64KiB", blocks=10, rate="1Gbps", buffer="256KiB", **kw)


def test_the_simulator_draws_the_think_times_the_trace_then_shows(tmp_path):
    # the round trip: think times given to the simulator come back out of its own trace,
    # late by at most the time its four requests take to leave the client one after another
    # (64-byte frames at 1 Gbit/s, 512 ns each: the last reaches its server 1.536 us after
    # the first)
    requests_span = 3 * 512_000
    trace = str(tmp_path / "sim.csv")
    simulate(_scenario(think_times="50us,150us"), recording=Recording(events=trace))
    think = ss.think_times_ps(ss.block_starts(trace))
    assert len(think) == 40
    assert all(0 <= t - 50 * US <= requests_span or 0 <= t - 150 * US <= requests_span for t in think), think
    assert {t > 100 * US for t in think} == {False, True}  # both values drawn (2^-39 otherwise)
    # without: the servers start as their requests arrive
    simulate(_scenario(), recording=Recording(events=trace))
    assert max(ss.think_times_ps(ss.block_starts(trace))) <= requests_span


def test_the_same_seed_draws_the_same_think_times():
    run = lambda **kw: {k: v for k, v in simulate(_scenario(**kw)).to_dict().items() if k != "wall_seconds"}
    a, b = run(think_times="10us,90us,400us"), run(think_times="10us,90us,400us")
    assert a == b
    assert a["block_time_max_s"] != run()["block_time_max_s"]


@pytest.mark.parametrize("args, allowed", [
    (["--think-times", "5"], "durations of 0s to 1s each"),
    (["--think-times", "20us,2s"], "durations of 0s to 1s each"),
    (["--think-times", "20us", "--jitter", "10us"], "unset when jitter is above 0s"),
])
def test_bad_think_times_are_one_line_exit_2_naming_the_field(args, allowed):
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "2", "--blocks", "1",
                        *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "think" in r.stderr and allowed in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
