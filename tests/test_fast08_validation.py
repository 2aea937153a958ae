"""The simulator against FAST'08 (`000_315d806dde942a9f.txt`), figure by figure.

Every run here also checks the modelling invariants (DESIGN.md): payload bytes sent =
delivered + dropped + in flight, and no queue above its buffer. Unless a test says
otherwise, points simulate 5 s instead of the paper's 20 s (§3.1) to keep the suite fast;
at the collapse a point still spans tens of 200 ms timeouts, and the assertions leave
room for that sampling (margins stated at each).
"""

from __future__ import annotations

import pytest

from incastlab import Scenario, sweep

# FAST'08 as ns-2 ran it (docs/model.md): 1000 B of payload per 1040 B packet.
MSS = Scenario(servers=1, preset="fast08").mss  # ns-2's packetSize_ (1000 B)
WIRE = MSS + 40
PAYLOAD_CAPACITY_MBPS = 1000 * MSS / WIRE

SHORT = "5s"


def run(points: list[Scenario]):
    df = sweep(points)
    for _, r in df.iterrows():
        assert r.bytes_sent == r.bytes_delivered + r.bytes_dropped + r.bytes_in_flight, "byte conservation"
        assert r.max_queue_packets <= r.buffer_packets, "queue above its buffer (counted in packets)"
    return df.set_index("servers", drop=False)


def fast08(**knobs) -> Scenario:
    return Scenario(**{"preset": "fast08", **knobs})


def servers_sweep(servers, **knobs):
    duration = knobs.pop("duration", SHORT)
    return run([fast08(servers=n, duration=duration, **knobs) for n in servers])


def onset(goodput_by_n, one_server: float) -> int:
    """Smallest N whose goodput is below 75 % of the one-server goodput: where the curve
    bends. (Fig. 6's large-buffer curves bend to 60-70 % rather than collapse, so a 50 %
    rule would miss them.) A large sentinel if it never bends in the sweep."""
    for n, g in sorted(goodput_by_n.items()):
        if g < 0.75 * one_server:
            return n
    return 10**9


def test_one_server_gets_at_least_90_percent_of_payload_capacity():
    # Fig. 4 starts near link rate with one server. 90 % of payload capacity is the
    # issue's bar; the gap is the idle request round trip between blocks.
    df = servers_sweep([1])
    assert df.goodput_mbps[1] >= 0.9 * PAYLOAD_CAPACITY_MBPS


def test_fig4_collapse_at_16_and_32_servers_is_caused_by_timeouts():
    # Fig. 4 (32 KB buffer, RTOmin 200 ms): "an order of magnitude collapse at around 8
    # servers and beyond". The bar here is the issue's: below a quarter of one server.
    df = servers_sweep([1, 16, 32])
    one = df.goodput_mbps[1]
    for n in (16, 32):
        r = df.loc[n]
        assert r.goodput_mbps < one / 4, f"{n} servers: {r.goodput_mbps:.0f} Mbps vs {one:.0f}"
        # Timeouts are the cause (§4.1, Fig. 5): at line rate a block of n x 256 KiB takes
        # ~35-70 ms, yet the median block waits at least one 200 ms RTOmin, and there are
        # more timeouts than blocks.
        line_rate_block_s = n * 256 * 1024 * 8 / 1e9
        assert r.block_time_p50_s >= 0.2 > line_rate_block_s
        assert r.timeouts >= max(1, r.blocks)


def test_fig6_doubling_the_buffer_roughly_doubles_the_servers_before_collapse():
    # Fig. 6: "doubling the size of the switch's output port buffer in simulation doubles
    # the number of servers that can be supported before the system experiences Incast".
    grid = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128]
    onsets = {}
    for kib in (32, 64, 128, 256, 512, 1024):
        df = servers_sweep(grid, buffer=f"{kib}KiB")
        onsets[kib] = onset(df.goodput_mbps.to_dict(), df.goodput_mbps[1])
    kibs = sorted(onsets)
    # More buffer never makes it collapse earlier.
    assert all(onsets[a] <= onsets[b] for a, b in zip(kibs, kibs[1:])), onsets
    # "Roughly doubles": across the four doublings from 32 KiB to 512 KiB (16x buffer) the
    # onset moves by at least 2^4 / 4 = 4x and at most 2^4 * 4 = 64x, i.e. 1.4x-2.8x per
    # doubling on average. 1024 KiB does not bend within the figure's 128 servers, here or
    # in ns-2.35 under the same reading (peers/ns2: 753 Mbps at 128 servers, 82 % of one
    # server), so it only has to hold at least as far as 512 KiB (checked above).
    growth = onsets[512] / onsets[32]
    assert 4 <= growth <= 64, onsets


# ns-2.35 under the same reading, 20 s (python -m incastlab.peers.ns2 --servers 64
# --set buffer=1024KiB --set mss=1000 --set rwnd=20000 --set limited_transmit=true
# --ns2-rules): 948 Mbps. The paper's "about 65%" does not come out of ns-2 with ns-2's
# packets and window (docs/model.md, findings); the reproduction fast08-fig6 reports it.
NS2_1024KIB_64_MBPS = 948.2


def test_fig6_1024KB_buffer_at_64_servers_runs_as_in_ns2():
    # §4.2: "for a 1024KB buffer, 64 servers only utilize about 65% of the client's link
    # bandwidth". We hold ours to what ns-2 gives under the reading: within 10 % of it (a
    # point that does not collapse varies by a few percent between deterministic runs of
    # either simulator), and not collapsed.
    df = servers_sweep([64], buffer="1024KiB", duration="20s")
    assert 0.9 * NS2_1024KIB_64_MBPS <= df.goodput_mbps[64] <= 1.1 * NS2_1024KIB_64_MBPS, df.goodput_mbps[64]


def test_fig7_larger_sru_raises_goodput():
    # Fig. 7 (64 servers): "the 1000KB SRU size run is two orders of magnitude faster
    # than the 10KB SRU size run". We require the ordering and at least 10x: our 64 KiB
    # buffer (the paper does not give Fig. 7's) and 5 s runs put us at ~30x, not 100x.
    srus = ["10KiB", "32KiB", "64KiB", "128KiB", "256KiB", "1000KiB"]
    df = run([fast08(servers=64, sru=s, buffer="64KiB", duration=SHORT) for s in srus])
    g = list(df.goodput_mbps)
    assert all(a <= b * 1.1 for a, b in zip(g, g[1:])), g  # 10 %: one run per point
    assert g[-1] >= 10 * g[0], g


def test_fig9_fixed_block_goodput_falls_with_servers():
    # Fig. 9: fixed 1 MB block split over N servers: "a rapid drop-off in goodput".
    grid = [1, 4, 8, 16, 32, 64]
    df = servers_sweep(grid, block="1MiB")
    g = [df.goodput_mbps[n] for n in grid]
    assert all(b <= a * 1.1 for a, b in zip(g[1:], g[2:])), g  # falls from 4 on (10 %: one run)
    assert g[-1] < 0.1 * g[0], g


# RTOmin 200 us over 200 ms in ns-2.35 itself, under the same reading (peers/ns2, 5 s runs:
# ns peers/ns2/incast.tcl --servers N --simTime 5 --packetSize 1000 --qlim 31 --window 20
# --singledup 1 --minrto 0.2|0.0002 --tcpTick 0.0001): 45 -> 282, 17 -> 131, 9 -> 50 blocks.
NS2_GAIN = {8: 947.4 / 153.6, 16: 884.1 / 118.4, 32: 671.6 / 133.2}


@pytest.mark.parametrize("n", [8, 16, 32])
def test_fig13_rto_min_200us_gains_what_ns2_gains_at_8_to_32_servers(n):
    # Fig. 13: "reducing RTOmin from 200ms to 200us improves goodput by an order of
    # magnitude for between 8 to 32 servers". ns-2 itself gains 5-7.5x here, not 10x
    # (docs/model.md); we hold ours to ns-2's gain, 25 % below it at most (the agreement
    # bar of the peer comparisons, docs/model.md), and to a large gain in any case.
    df = run([fast08(servers=n, duration=SHORT),
              fast08(servers=n, rto_min="200us", timer_granularity="100us", duration=SHORT)])
    slow, fast = df.goodput_mbps.iloc[0], df.goodput_mbps.iloc[1]
    assert fast >= 0.75 * NS2_GAIN[n] * slow, (slow, fast, NS2_GAIN[n])
