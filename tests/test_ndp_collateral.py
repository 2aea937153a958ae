"""ndp-collateral's reading of its runs: the long flow's goodput from runs stopped at
successive times (the checks themselves run in tests/test_reproduce.py's quick run of all)."""

from __future__ import annotations

import pandas as pd
import pytest

from incastlab import Scenario, simulate
from incastlab.experiments import ndp_collateral as nc


def _frame(label: str, stops_ms, bytes_, incast_s=None) -> pd.DataFrame:
    return pd.DataFrame({"series": label, "sim_seconds": [t / 1e3 for t in stops_ms],
                         "bulk_bytes_delivered": bytes_,
                         "incast_completion_s": [None if incast_s is None or t / 1e3 < nc.INCAST_START_MS / 1e3 +
                                                 incast_s else incast_s for t in stops_ms]})


def test_the_long_flows_goodput_is_the_difference_of_two_stops_over_their_distance():
    # 1 GB/s (8 Gbps) to 2 ms, then half of that while the incast runs (2 -> 4 ms), then 1 GB/s
    df = _frame(nc.NDP, [1, 2, 3, 4, 6], [1e6, 2e6, 2.5e6, 3e6, 5e6], incast_s=0.0015)
    g = nc.long_flow_goodput(df, nc.NDP)
    assert list(g.round(6)) == [8.0, 4.0, 4.0, 8.0]
    assert nc.incast_end_s(df, nc.NDP) == pytest.approx(0.0035)
    before, during, share = nc.kept_share(df, nc.NDP)
    # the span runs from the incast's start (2 ms) to the first stop after its end (4 ms)
    assert (before, during, share) == pytest.approx((8.0, 4.0, 0.5))


def test_an_incast_that_has_not_ended_spans_to_the_last_stop():
    df = _frame(nc.DCTCP, [1, 2, 4, 6], [1e6, 2e6, 2.5e6, 3e6])
    assert nc.incast_end_s(df, nc.DCTCP) is None
    assert nc.kept_share(df, nc.DCTCP)[2] == pytest.approx((1e6 * 8 / 4e-3 / 1e9) / 8.0)


def test_before_the_incast_starts_the_long_flow_does_not_see_it():
    # the runs read the long flow's rate before the incast from a run stopped at its start:
    # up to then nothing of the incast may exist, so its flows' size cannot change a byte
    base = {**nc.EXPERIMENT.base, **nc.SERIES[0].params, "duration": f"{nc.INCAST_START_MS:g}ms", "seed": 1}
    small = simulate(Scenario(**{**base, "sru": 9000})).bulk_bytes_delivered
    full = simulate(Scenario(**base)).bulk_bytes_delivered
    assert small == full > 0
