"""The testbed's round trip read from a per-event trace, and the propagation the simulator
needs to match it (``incastlab.testbed.round_trip``, validate's ``--rtt measured``; issue 27)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab import presets
from incastlab.recording import Recording
from incastlab.sim import simulate
from incastlab.testbed import round_trip as rt
from trace_support import US, write_trace


LINES = [
    (0, "ack", 0, 1, 24),  # the request: not an ACK of data
    (10, "tx", 0, 1, 1448), (11, "enq", 0, 1, 1448),  # data half 1 us
    (12, "tx", 0, 1449, 1448), (50, "enq", 0, 1449, 1448),  # 38 us: steered to a halted CPU
    (60, "tx", 0, 2897, 1448), (61, "drop", 0, 2897, 1448),  # a drop has a data half too
    (132, "deq", 0, 1, 1448), (137, "ack", 0, 1449, 0),  # ACK half 5 us
    (253, "deq", 0, 1449, 1448), (293, "ack", 0, 2897, 0),  # 40 us
    (300, "ack", 0, 2897, 0),  # a duplicate of it: not the segment's first ACK
    (400, "rtx", 0, 2897, 1448), (401, "enq", 0, 2897, 1448),  # the retransmission: 1 us
]


def test_each_segment_gives_one_sample_of_each_half(tmp_path):
    h = rt.halves(write_trace(tmp_path / "testbed-n1.csv", LINES))
    assert sorted(x // US for x in h.data_ps) == [1, 1, 1, 38]
    assert sorted(x // US for x in h.ack_ps) == [5, 40]
    # nearest rank: the 10th percentile of four values is the first, the 90th the fourth
    assert rt.percentile_ps(h.data_ps) == 1 * US and rt.percentile_ps(h.data_ps, 0.9) == 38 * US
    s = rt.summary(h, rt.simulator_rtt_ps(h, link_rate_bps=40 * 10**9, data_frame_bytes=1514, ack_frame_bytes=66))
    assert (s["data_samples"], s["ack_samples"], s["data_half_us_p10"], s["ack_half_us_p10"]) == (4, 2, 1.0, 5.0)


def test_the_simulators_links_are_subtracted_and_the_round_trip_kept_positive(tmp_path):
    h = rt.halves(write_trace(tmp_path / "t.csv", LINES))
    # 40 Gbit/s links: a 1514-byte frame 302.8 ns, a 66-byte ACK 13.2 ns, each crossing two links
    assert rt.simulator_rtt_ps(h, link_rate_bps=40 * 10**9, data_frame_bytes=1514,
                               ack_frame_bytes=66) == 6 * US - 2 * 302_800 - 2 * 13_200
    # 4 Gbit/s (validate's): the frames alone take 6.32 us, more than the measured 6 us
    assert rt.simulator_rtt_ps(h, link_rate_bps=4 * 10**9, data_frame_bytes=1514, ack_frame_bytes=66) == 1


def test_a_trace_without_a_half_measures_nothing(tmp_path):
    h = rt.halves(write_trace(tmp_path / "t.csv", [(10, "tx", 0, 1, 1448), (11, "enq", 0, 1, 1448)]))
    assert rt.simulator_rtt_ps(h, link_rate_bps=4 * 10**9, data_frame_bytes=1514, ack_frame_bytes=66) is None
    s = rt.summary(h, None)
    assert s["simulator_rtt_s"] is None and s["ack_half_us_p10"] is None and s["data_half_us_p10"] == 1.0


@pytest.mark.parametrize("rtt_s", [20e-6, 100e-6])
def test_the_round_trip_read_from_the_simulators_own_trace_is_the_one_it_ran(tmp_path, rtt_s):
    # the measurement and the subtraction together invert the simulator's path exactly: its
    # unloaded segments (the 10th percentile) cross a link's frame time plus rtt/4 to the
    # shaper, and their ACKs come back over three links (client link, switch -> server)
    items = presets.linux(cc="reno") + presets.testbed(rate_bps=100_000_000, buffer_bytes=8192, burst_bytes=6056)
    scn = presets.linux_scenario(items, servers=4, sru=256 * 1024, block=None, buffer=8192, rate=100_000_000,
                         rtt_s=rtt_s, blocks=4)
    path = tmp_path / "sim.csv"
    simulate(scn, recording=Recording(events=str(path)))
    native = scn.to_native()
    got = rt.simulator_rtt_ps(rt.halves(path), link_rate_bps=native["rate_bps"],
                              data_frame_bytes=native["mss_bytes"] + native["header_bytes"],
                              ack_frame_bytes=native["header_bytes"])
    assert got == round(rtt_s * 10**12)


def test_validate_takes_measured_or_a_duration_for_rtt_and_names_both():
    out = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "validate", "--rtt", "meassured", "--preset-table"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--rtt: 'meassured' is not allowed; expected a duration such as 200ms" in out.stderr and ", or measured" in out.stderr
    table = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "validate", "--rtt", "measured", "--preset-table"],
                           capture_output=True, text=True)
    assert table.returncode == 0, table.stderr
    assert "rtt, read from each point's capture (testbed.round_trip)" in table.stdout
