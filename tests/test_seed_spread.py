"""The simulator's spread over seeds (incastlab.seed_spread) and validate's --sim-seeds."""

import subprocess
import sys

import pytest

from incastlab import seed_spread
from incastlab.scenario import Scenario
from incastlab.sim import simulate

CLI = [sys.executable, "-m", "incastlab.cli.main"]


def onset(**kw) -> Scenario:
    # four servers behind an 8 KiB port at 100 Mbit/s with think times drawn per request from
    # three values: the draws differ per seed, and so do the timeouts where incast starts
    return Scenario(preset="linux", servers=4, rate="100Mbps", buffer="8KiB", blocks=5, duration=None,
                    rtt="20us", think_times="10us,50us,200us", **kw)


def test_each_seed_draws_the_think_times_anew_and_the_spread_summarises_them():
    spread = seed_spread.over_seeds(onset(seed=3), 4)
    assert spread["seeds"] == [3, 4, 5, 6]
    each = [simulate(onset(seed=s)).to_dict() for s in (3, 4, 5, 6)]
    assert spread["goodput_mbps"] == [r["goodput_mbps"] for r in each]
    assert spread["timeouts"] == [r["timeouts"] for r in each]
    assert len(set(spread["goodput_mbps"])) > 1, "the seeds' think-time draws give different runs"
    g = sorted(spread["goodput_mbps"])
    assert spread["goodput_mbps_p50"] == (g[1] + g[2]) / 2
    assert (spread["goodput_mbps_min"], spread["goodput_mbps_max"]) == (g[0], g[-1])
    assert spread["timeouts_min"] <= spread["timeouts_p50"] <= spread["timeouts_max"]


def test_the_first_seeds_result_already_run_is_taken_as_it_is():
    first = {"goodput_mbps": 12.5, "timeouts": 7}
    spread = seed_spread.over_seeds(onset(), 2, first=first)
    assert spread["seeds"] == [1, 2] and spread["goodput_mbps"][0] == 12.5 and spread["timeouts"][0] == 7
    assert spread["goodput_mbps"][1] == simulate(onset(seed=2)).to_dict()["goodput_mbps"]


def test_inside_needs_both_goodput_and_timeouts_within_the_ends():
    spread = {"goodput_mbps_min": 30.0, "goodput_mbps_max": 40.0, "timeouts_min": 2, "timeouts_max": 5}
    assert seed_spread.inside(30.0, 2, spread) and seed_spread.inside(40.0, 5, spread)
    assert not seed_spread.inside(29.9, 3, spread)
    assert not seed_spread.inside(35.0, 6, spread)
    assert seed_spread.describe({"timeouts_p50": 3.5, "timeouts_min": 2, "timeouts_max": 5}, "timeouts", "g") \
        == "3.5 [2-5]"


@pytest.mark.parametrize("extra, allowed", [
    ([], "1 without --measured-think-times"),
    (["--measured-think-times", "--sim-seeds", "0"], "at least 1"),
])
def test_validate_refuses_sim_seeds_it_cannot_use_by_name_before_building_anything(extra, allowed):
    args = ["validate", "--servers", "2", "--cc", "reno", "--sim-seeds", "3"] + extra
    out = subprocess.run(CLI + args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out
    assert "--sim-seeds" in out.stderr and allowed in out.stderr and "Traceback" not in out.stderr
