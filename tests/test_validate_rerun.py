"""`incastlab validate --rerun`: saved rows' simulator side run again with this build, without
root or a testbed. (The root test of validate checks it on a row the testbed just wrote.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from incastlab.cli.validate_rerun import fields_from_preset_text, rerun
from incastlab.scenario import Scenario
from incastlab.sim import simulate

CLI = [sys.executable, "-m", "incastlab.cli.main"]
THINK = "20us,40us,60us,80us"
TESTBED = {"goodput_mbps": 50.0, "timeouts": 3, "blocks": 4, "block_bytes": 2 * 262144, "rate_bps": 100_000_000,
           "buffer_bytes": 8192, "rto_min_s": 0.2}


def results(sim: dict) -> dict:
    """A result without its wall-clock time, the one field a run does not repeat."""
    return {k: v for k, v in sim.items() if k != "wall_seconds"}


def scenario(**extra) -> Scenario:
    fields = dict(preset="linux", servers=2, block=2 * 262144, blocks=4, duration=None, seed=1, rtt="5us",
                  rate="4Gbps", shaper_rate="100Mbps", buffer="8KiB", cc="newreno")
    return Scenario(**{**fields, **extra})


def new_row() -> dict:
    """A row as this build's `validate --json --measured-think-times --sim-seeds 2` writes it
    (its testbed side made up)."""
    plain, think = scenario(), scenario(think_times=THINK)
    sim, st = simulate(plain).to_dict(), simulate(think).to_dict()
    return {"servers": 2, "testbed": dict(TESTBED), "goodput_mbps_testbed": 50.0, "timeouts_testbed": 3,
            "drops_testbed": 900, "block_time_max_s_testbed": 0.25,
            "start_spread": {"start_offset_us_p50": 20.0, "start_offset_us_p90": 60.0},
            "scenario": plain.model_dump(), "simulator": sim, "think_times": THINK,
            "scenario_think": think.model_dump(), "simulator_think": st,
            "think_seeds": {"seeds": [1, 2]}, "traces": {"testbed": "t.csv", "simulator": "s.csv"}}


def write(tmp_path, rows, name="rows.jsonl") -> str:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(p)


def test_a_row_this_build_wrote_comes_back_the_same(tmp_path):
    row = new_row()
    (out,) = list(rerun([write(tmp_path, [row])]))
    for key in ("simulator", "simulator_think"):
        assert results(out[key]) == results(row[key]), key  # every result field, the event counts too
    assert out["testbed"] == row["testbed"] and out["rerun"].endswith("rows.jsonl:1")
    # the seed spread: seed 1 is the think-time run, seed 2 drawn anew
    assert out["think_seeds"]["seeds"] == [1, 2]
    assert out["think_seeds"]["goodput_mbps"][0] == row["simulator_think"]["goodput_mbps"]
    assert out["think_seeds"]["goodput_mbps"][1] == simulate(scenario(think_times=THINK, seed=2)).to_dict()["goodput_mbps"]
    assert out["goodput_ratio_think"] == pytest.approx(50.0 / row["simulator_think"]["goodput_mbps"])
    assert out["traces"] == {"testbed": "t.csv"}  # the old simulator traces are not this run's


def test_a_row_without_its_scenario_is_rebuilt_from_its_preset_table(tmp_path):
    # rows written before validate saved its scenario: the modelled rows' field=value text,
    # the measured round trip and think times, the seed; a row not modelled is left out
    preset = [{"item": "links", "simulator": "rate=4Gbps", "modelled": "yes: measured"},
              {"item": "tbf", "simulator": "shaper_rate=100Mbps, shaper_burst=6056B, buffer=8192B", "modelled": "yes"},
              {"item": "cc", "simulator": "cc=newreno", "modelled": "yes"},
              {"item": "F-RTO", "simulator": "frto=False", "modelled": "yes"},
              {"item": "not yet", "simulator": "hystart=True", "modelled": "no: not in this build"},
              {"item": "think", "simulator": "think_times, read from each point's capture", "modelled": "yes"}]
    assert fields_from_preset_text({"preset": preset}) == {
        "rate": "4Gbps", "shaper_rate": "100Mbps", "shaper_burst": "6056B",
        "buffer": "8192B", "cc": "newreno", "frto": False}
    row = {"servers": 2, "testbed": dict(TESTBED), "preset": preset, "goodput_mbps_testbed": 50.0,
           "timeouts_testbed": 3, "simulator": {"seed": 1, "rtt_s": 5e-6}, "think_times": THINK,
           "simulator_think": {"seed": 1}}
    (out,) = list(rerun([write(tmp_path, [row])]))
    want = Scenario(preset="linux", servers=2, block=2 * 262144, blocks=4, duration=None, seed=1, rtt="5us",
                    rate="4Gbps", shaper_rate="100Mbps", shaper_burst="6056B", buffer="8192B", cc="newreno",
                    frto=False)
    assert results(out["simulator"]) == results(simulate(want).to_dict())
    think = Scenario(**{**want.model_dump(), "think_times": THINK})
    assert results(out["simulator_think"]) == results(simulate(think).to_dict())
    assert out["scenario"] == want.model_dump() and "think_seeds" not in out


def test_the_cli_needs_no_root_and_prints_rows_or_the_table(tmp_path):
    path = write(tmp_path, [new_row()])
    got = subprocess.run(CLI + ["validate", "--rerun", path, "--json"], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    (line,) = got.stdout.splitlines()
    assert json.loads(line)["simulator"]["goodput_mbps"] == new_row()["simulator"]["goodput_mbps"]
    table = subprocess.run(CLI + ["validate", "--rerun", path], capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "sim+think Mbps, 2 seeds" in table.stdout


def test_bad_files_and_rows_are_one_line_and_status_2(tmp_path):
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    row = new_row()
    row["scenario"]["no_such_field"] = 1  # a field this build does not have
    damaged = {**new_row(), "scenario": [1, 2]}
    old_damaged = {k: v for k, v in new_row().items() if k != "scenario"} | {"preset": [{"item": "x"}]}
    cases = {str(tmp_path / "absent.jsonl"): "absent.jsonl",
             write(tmp_path, [{"servers": 2}], "short.jsonl"): "short.jsonl:1",
             write(tmp_path, [row], "future.jsonl"): "no_such_field",
             write(tmp_path, [], "empty.jsonl"): "at least one row",
             str(fifo): "regular file", str(tmp_path): "regular file",
             write(tmp_path, [damaged], "damaged.jsonl"): "damaged.jsonl:1",
             write(tmp_path, [old_damaged], "old.jsonl"): "old.jsonl:1"}
    for path, named in cases.items():
        got = subprocess.run(CLI + ["validate", "--rerun", path], capture_output=True, text=True, timeout=120)
        assert got.returncode == 2 and got.stdout == "", (path, got.stdout)
        err = got.stderr.strip().splitlines()
        assert len(err) == 1 and "--rerun" in err[0] and named in err[0], err
