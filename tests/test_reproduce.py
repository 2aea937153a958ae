"""``incastlab reproduce``: the three files and their schema, the check list, --list, bad
names, --strict. Runs use --quick (1 s of simulated time per point) on the cheapest
reproductions: these tests pin the framework, not the papers' numbers (those are in
tests/test_fast08_validation.py and in docs/reproduce.md's full run)."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pandas as pd
import pytest

from incastlab import experiments
from incastlab.cli.main import main
from incastlab.experiments import Check, Experiment, Series
from incastlab.experiments import run as runner
from incastlab.experiments.sources import LATER_PAPERS
from incastlab.sim import RESULT_COLUMNS

SEED_FILES = ("000_315d806dde942a9f.txt", "001_e0dada207805edc8.txt", "002_08b014e448da6385.txt",
              "003_a133663d5dbcfa75.txt", "004_f48ce568b38e0ea9.txt")


def incastlab(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_list_names_every_registered_reproduction():
    r = incastlab("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    for name in experiments.names():
        assert name in r.stdout
    js = [json.loads(line) for line in incastlab("reproduce", "--list", "--json").stdout.splitlines()]
    assert [j["name"] for j in js] == experiments.names()
    assert all(j["source"] and j["title"] and j["summary"] for j in js)


def test_issue_3_reproductions_are_all_registered():
    wanted = {"fast08-fig4", "fast08-fig6", "fast08-fig7", "fast08-fig9", "fast08-fig10", "fast08-fig11",
              "fast08-table3", "fast08-fig12", "fast08-fig13", "sigcomm09-fixed-block", "wren09-delack",
              "wren09-timers", "osada-fig9", "osada-fig13", "osada-fig17"}
    assert wanted <= set(experiments.names())


@pytest.mark.parametrize("name", experiments.names())
def test_every_reproduction_is_well_formed_and_its_scenarios_build(name):
    exp = experiments.load(name)
    assert exp.name == name and exp.series and exp.checks
    assert len({s.label for s in exp.series}) == len(exp.series), "series labels must be unique"
    for c in exp.checks:
        assert c.claim and any(f in c.source for f in SEED_FILES + LATER_PAPERS), c.source
    # every point is a valid Scenario with the knobs this build has (catches typos in params)
    for quick in (True, False):
        pts = runner.points(exp, quick=quick)
        assert pts and {p.scenario.seed for p in pts} == set(range(1, exp.seeds + 1))
    full = runner.points(exp)
    timed = [p for p in full if p.scenario.blocks is None and not p.scenario.is_flows()]  # flows run until delivered
    # (one that sweeps where its runs stop, ndp-collateral's, sets it per point; long-lived
    # flows measured in a steady-state window, swift-steady-incast's, run to the duration)
    until_delivered = [p for p in full if p.scenario.is_flows() and exp.axis != "duration" and p.scenario.measure_from is None]
    assert all(p.scenario.duration is None for p in until_delivered)
    assert all(p.scenario.duration is not None for p in full if p.scenario.measure_from is not None)
    assert all(p.scenario.duration == 20 for p in timed if exp.duration == "20s"), \
        "the default is the paper's 20 s per point (FAST'08 §3.1)"


@pytest.mark.parametrize("name", ["fast08-fig4", "fast08-fig9"])
def test_quick_run_writes_csv_png_and_checks_with_the_documented_schema(name, tmp_path):
    out = tmp_path / "out"  # created by the command
    r = incastlab("reproduce", name, "--out", str(out), "--quick")
    assert r.returncode == 0, r.stderr
    exp = experiments.load(name)
    csv, png, checks = (out / f"{name}{ext}" for ext in (".csv", ".png", ".checks.json"))
    assert csv.exists() and png.exists() and checks.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted([csv.name, png.name, checks.name, "store"]), \
        "no temp files left"

    df = pd.read_csv(csv)
    assert {"series", "panel", "x", "seed"} | set(RESULT_COLUMNS) <= set(df.columns)
    points = sum(len(exp.axis_values(True, s)) for s in exp.series)
    assert len(df) == points
    assert set(df["series"]) == {s.label for s in exp.series}
    assert (df["sim_seconds"] == 1.0).all(), "--quick runs 1 s per point"

    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    entries = json.loads(checks.read_text())
    assert isinstance(entries, list) and len(entries) == len(exp.checks)
    for e in entries:
        assert set(e) == {"claim", "source", "measured", "pass"}
        assert isinstance(e["claim"], str) and e["claim"]
        assert isinstance(e["source"], str) and any(f in e["source"] for f in SEED_FILES + LATER_PAPERS)
        assert isinstance(e["measured"], str) and e["measured"]
        assert isinstance(e["pass"], bool)
    # the printed table shows each verdict
    assert r.stdout.count("pass") + r.stdout.count("FAIL") >= len(entries)


def test_all_quick_runs_every_reproduction_and_measures_every_check(tmp_path):
    # Every check function and plot kind (lines, DART bars, Table 3 categories) against real
    # results, in --quick mode (1 s per point, ~20 s in all): a check that cannot find a
    # result field it needs would say "could not measure".
    r = incastlab("reproduce", "all", "--out", str(tmp_path), "--quick", timeout=600)
    assert r.returncode == 0, r.stderr
    for name in experiments.names():
        for ext in (".csv", ".png", ".checks.json"):
            assert (tmp_path / f"{name}{ext}").exists(), (name, ext)
        for entry in json.loads((tmp_path / f"{name}.checks.json").read_text()):
            assert "could not measure" not in entry["measured"], (name, entry)
    assert f"{len(experiments.names())} reproductions" in r.stdout


def test_seeds_vary_runs_and_are_recorded(tmp_path):
    r = incastlab("reproduce", "fast08-fig9", "--out", str(tmp_path), "--quick", "--seeds", "2", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "fast08-fig9.csv")
    assert sorted(df["seed"].unique()) == [1, 2]
    # with send jitter the two seeds are different runs somewhere in the collapse
    wide = df.pivot_table(index=["series", "x"], columns="seed", values="drops")
    assert (wide[1] != wide[2]).any()


def test_set_changes_every_point_and_is_noted(tmp_path):
    # osada-fig9 under both readings of condition-I (docs/model.md): counted in bits sent,
    # NCCS K=8 never times out at 1 Gbps; checked as a connection opens, 8 connections
    # start together with 8.5-packet windows against a 40-packet buffer and it incasts
    def nccs8_timeouts(*extra):
        out = tmp_path / ("-".join(extra) or "default")
        r = incastlab("reproduce", "osada-fig9", "--out", str(out), "--quick", *extra)
        assert r.returncode == 0, r.stderr
        df = pd.read_csv(out / "osada-fig9.csv")
        return r.stdout, df[(df.series == "NCCS K=8") & (df.x >= 24)]["timeouts"].sum()
    stdout, default = nccs8_timeouts()
    assert default == 0 and "condition_i" not in stdout
    stdout, opened = nccs8_timeouts("--set", "condition_i=open")
    assert opened > 0 and "condition_i=open" in stdout


@pytest.mark.parametrize("args, value", [
    (["reproduce", "fast08-fig99", "--out", "OUT"], "fast08-fig99"),
    (["reproduce", "--out", "OUT"], "NAME: missing"),
    (["reproduce", "fast08-fig4"], "--out"),
    (["reproduce", "fast08-fig4", "--out", "OUT", "--seeds", "0"], "0"),
    (["reproduce", "fast08-fig4", "--out", "OUT", "--jobs", "x"], "x"),
    (["reproduce", "osada-fig9", "--out", "OUT", "--set", "condition_i=later"], "condition_i=later"),
    (["reproduce", "osada-fig9", "--out", "OUT", "--set", "active_servers=3"], "active_servers=3"),
    (["reproduce", "osada-fig9", "--out", "OUT", "--set", "no_such_field=1"], "no_such_field=1"),
    # issue 25: the series of fast08-fig13 are defined by rto_min; setting it under them ran
    # one RTOmin for all under the old labels
    (["reproduce", "fast08-fig13", "--out", "OUT", "--set", "rto_min=1ms"], "rto_min is set by the series"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args, value, tmp_path):
    out = tmp_path / "OUT"
    r = incastlab(*[str(out) if a == "OUT" else a for a in args])
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and value in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
    assert not out.exists()


def test_out_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = incastlab("reproduce", "fast08-fig4", "--out", str(f), "--quick")
    assert r.returncode == 2 and "--out" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _toy(name: str, passes: bool) -> Experiment:
    """A one-point reproduction whose only check passes or fails by construction."""
    def measure(df):
        g = float(df["goodput_mbps"].iloc[0])
        return f"{g:.0f} Mbps", (g > 0) if passes else (g > 1e7)  # 10 Tbps on a 1 Gbps link: impossible
    return Experiment(name=name, title="toy", source="000_315d806dde942a9f.txt Fig. 4", summary="toy",
                      series=(Series("one server", {}),), values=(1,), quick_values=(1,),
                      checks=(Check("toy claim", "000_315d806dde942a9f.txt Fig. 4", measure),))


@pytest.fixture
def toys(monkeypatch):
    for name, passes in (("toy-pass", True), ("toy-fail", False)):
        module = types.ModuleType(f"incastlab.experiments.toy_{passes}")
        module.EXPERIMENT = _toy(name, passes)
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(experiments.REGISTRY, name, module.__name__.rsplit(".", 1)[1])


def test_failed_check_is_a_finding_exit_0_unless_strict(toys, tmp_path, capsys):
    assert main(["reproduce", "toy-fail", "--out", str(tmp_path), "--quick"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" in out and "FAILED checks" in out and "toy claim" in out
    # the claim's source as a reader knows it, the seed file beside it (issue 31)
    assert "source: FAST'08 Fig. 4 (000_315d806dde942a9f.txt)" in out
    assert "## toy-fail: toy. FAST'08 Fig. 4 (000_315d806dde942a9f.txt)" in out
    assert json.loads((tmp_path / "toy-fail.checks.json").read_text())[0]["pass"] is False
    assert main(["reproduce", "toy-fail", "--out", str(tmp_path), "--quick", "--strict"]) == 1
    assert main(["reproduce", "toy-pass", "--out", str(tmp_path), "--quick", "--strict"]) == 0
    assert json.loads((tmp_path / "toy-pass.checks.json").read_text())[0]["pass"] is True


def test_json_prints_one_check_per_line(toys, tmp_path, capsys):
    assert main(["reproduce", "toy-pass", "--out", str(tmp_path), "--quick", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["reproduction"] == "toy-pass" and entry["pass"] is True


def test_a_check_needing_a_missing_result_field_fails_and_says_why():
    exp = Experiment(name="x", title="x", source="s", summary="s", series=(Series("a"),),
                     checks=(Check("c", "000_315d806dde942a9f.txt", lambda df: (str(df["no_such_field"]), True)),))
    [entry] = runner.evaluate(exp, pd.DataFrame({"goodput_mbps": [1.0]}))
    assert entry["pass"] is False and "no_such_field" in entry["measured"]


def test_a_second_run_reads_every_point_from_the_store_and_writes_the_same_results(tmp_path):
    out = tmp_path / "out"
    first = incastlab("reproduce", "fast08-fig4", "--out", str(out), "--quick")
    assert first.returncode == 0, first.stderr
    df1 = pd.read_csv(out / "fast08-fig4.csv")
    second = incastlab("reproduce", "fast08-fig4", "--out", str(out), "--quick")
    assert second.returncode == 0 and f"{len(df1)} points from the store" in second.stdout
    df2 = pd.read_csv(out / "fast08-fig4.csv")
    assert not df1["from_store"].any() and df2["from_store"].all()
    same = [c for c in df1.columns if c not in ("wall_seconds", "from_store", "run_id")]
    pd.testing.assert_frame_equal(df1[same], df2[same])
    nostore = incastlab("reproduce", "fast08-fig4", "--out", str(tmp_path / "plain"), "--quick", "--no-store")
    assert nostore.returncode == 0 and not (tmp_path / "plain" / "store").exists()
