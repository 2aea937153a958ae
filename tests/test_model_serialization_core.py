"""The core's serialization model (``incast_sim::app::serialization_model``, which sizes the
NCCS and OCS schedulers) against the Python reference ``incastlab.model.serialization``.

Both compute Osada et al.'s Eqs. (1)-(11) (``004_f48ce568b38e0ea9.txt``) exactly, with the
readings of docs/model-serialization.md; here they must agree value for value, exact
fractions included, over a grid of links, RTTs, segment and SRU sizes and headers.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import pytest

from incastlab import _native
from incastlab.errors import UsageError
from incastlab.model import serialization as ser
from incastlab.units import PS_PER_S

KIB = 1024
US = 10**6  # picoseconds per microsecond

RATES_BPS = [10**8, 10**9, 1_234_567_891, 25 * 10**8, 7 * 10**9, 10**10, 4 * 10**10, 10**11]
# 78 us is Fig. 3's BaseBDP_pkt = 6.5 at 1 Gbps; 123456789 ps is not a whole microsecond
RTTS_PS = [10 * US, 25 * US, 78 * US, 100 * US, 123_456_789, 250 * US, 500 * US, 1000 * US]
MSS_BYTES = [536, 1000, 1460, 4000, 8960, 9000]
SRU_BYTES = [1000, KIB, 1460, 9 * KIB, 32 * KIB, 64 * KIB, 100_003, 116 * KIB, 512 * KIB, 1024 * KIB]
HEADER_BYTES = [40, 42]
GRID = list(itertools.product(RATES_BPS, RTTS_PS, MSS_BYTES, SRU_BYTES, HEADER_BYTES))


def core(rate, rtt, mss, sru, header) -> dict:
    return json.loads(_native.serialization_model(rate, rtt, mss, sru, header))


def exact(pair) -> Fraction:
    return Fraction(*pair)


def reference(rate, rtt, mss, sru, header) -> dict:
    """The Python model's values, the fractional ones recomputed exactly from its
    per-equation functions (its dataclass keeps floats and whole picoseconds)."""
    m = ser.serialization_model(rate, rtt, mss, sru, header_bytes=header)
    bdp = ser.base_bdp_bytes(rate, rtt)
    bdp_pkt = ser.base_bdp_pkt(bdp, mss, header)
    tau = ser.packet_time_ps(rate, mss, header)
    t1 = ser.t1_ps(m.m, bdp_pkt, rtt, tau)
    return {
        "model": m,
        "base_bdp_bytes": bdp,
        "base_bdp_pkt": bdp_pkt,
        "packet_time_ps": tau,
        "t1_ps": t1,
        "t2_ps": ser.t2_ps(sru, mss, m.m, tau) if m.eq6_holds else None,
        "eq7_rhs_packets": ser.eq7_rhs(bdp_pkt),
        "condition_i_bytes": ser.condition_i_bytes(sru, t1, rate),
        # what the schedulers take: ceil(T1 V / 8) exactly (scenario.py's native_mitigation
        # rounds T1 to whole ps and divides in floats first: one byte more at 370 points of
        # this grid, all at 7 Gbps, where a packet time is not a whole number of ps)
        "start_next_at_remaining": math.ceil(t1 * rate / (8 * PS_PER_S)),
    }


def test_core_matches_the_python_reference_over_the_grid():
    compared = refused = 0
    for point in GRID:
        rate, rtt, mss, sru, header = point
        try:
            ref = reference(*point)
        except UsageError as e:
            # BaseBDP of 2 packets or less: the core refuses too, naming the same parameter
            assert e.param == "base-rtt", point
            with pytest.raises(ValueError, match="^base_rtt_ps: "):
                core(*point)
            refused += 1
            continue
        got, m = core(*point), ref["model"]
        for name in ("base_bdp_bytes", "base_bdp_pkt", "packet_time_ps", "t1_ps", "eq7_rhs_packets",
                     "condition_i_bytes"):
            assert exact(got[name]) == ref[name], (point, name)
        assert (None if got["t2_ps"] is None else exact(got["t2_ps"])) == ref["t2_ps"], point
        for name in ("base_bdp_pkt_ceil", "m", "sru_packets", "eq6_holds", "eq7_holds", "n_min_eq8", "window_case",
                     "n_min", "wnd_pkt", "q_max_tcp_packets"):
            assert got[name] == getattr(m, name), (point, name)
        # the Python model's whole picoseconds are the exact T1 rounded
        assert m.t1_ps == round(exact(got["t1_ps"])), point
        assert got["scheduler_thresholds"] == {
            "start_next_at_remaining": ref["start_next_at_remaining"],
            "set_size": m.n_min,
            "window_bytes": m.wnd_pkt * mss,
            "bdp_bytes": math.ceil(ref["base_bdp_bytes"]),
        }, point
        compared += 1
    # 1440 points have a BaseBDP of 2 packets or less (short RTTs up to 10 Gbps, jumbo MSS
    # at 100 Mbps); all are refused by both
    assert (compared, refused) == (6240, 1440)


def test_grid_covers_both_window_cases_and_both_sides_of_eq6_and_eq7():
    # a differential test that never reaches a branch cannot say the branch agrees
    seen = set()
    for rate, rtt, mss, sru, header in GRID:
        try:
            m = ser.serialization_model(rate, rtt, mss, sru, header_bytes=header)
        except UsageError:
            continue
        t1_bytes = ser.t1_ps(m.m, ser.base_bdp_pkt(ser.base_bdp_bytes(rate, rtt), mss, header), rtt,
                             ser.packet_time_ps(rate, mss, header)) * rate / (8 * PS_PER_S)
        seen |= {("case", m.window_case), ("eq6", m.eq6_holds), ("eq7", m.eq7_holds), ("eq8", m.n_min_eq8 is not None),
                 ("t2 < 0", m.t2_ps is not None and m.t2_ps < 0), ("T1 V/8 whole", t1_bytes.denominator == 1)}
    assert seen == {(name, v) for name in ("eq6", "eq7", "eq8", "t2 < 0", "T1 V/8 whole") for v in (True, False)} | {
        ("case", "a"), ("case", "b")}


@pytest.mark.parametrize(
    "args, param",
    [((0, 100 * US, 1460, KIB, 40), "rate_bps"), ((10**9, 0, 1460, KIB, 40), "base_rtt_ps"),
     ((10**9, 100 * US, 0, KIB, 40), "mss_bytes"), ((10**9, 100 * US, 1460, 0, 40), "sru_bytes")],
)
def test_core_refuses_zero_inputs_naming_the_parameter(args, param):
    with pytest.raises(ValueError, match=f"^{param}: 0 is not allowed"):
        core(*args)
