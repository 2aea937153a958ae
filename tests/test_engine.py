"""One engine behind every front (issue 24): incastlab.simulate/sweep, `incastlab simulate`,
`demo` and `reproduce` run their points through the study runner; study/ does not import
sim.py; and the command line loads no heavy library before it has parsed its arguments, so
a refused argument returns at once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import incastlab
from incastlab.study import runner

# What `incastlab simulate --servers 0` must not load before refusing it: each costs 0.1-0.8 s
HEAVY = ("pandas", "pydantic", "matplotlib", "pyarrow", "numpy", "incastlab._native", "incastlab.scenario")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_parsing_the_command_line_loads_no_heavy_library():
    loaded = _loaded_after("from incastlab.cli.main import build_parser\n"
                           "p = build_parser()\n"
                           "try:\n    p.parse_args(['simulate', '--servers', '0'])\nexcept SystemExit:\n    pass")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY]


def test_the_engine_does_not_import_the_api_that_fronts_it():
    loaded = _loaded_after("import incastlab.study.api, incastlab.study.runner, incastlab.study.worker, "
                           "incastlab.study.executors, incastlab.study.spec, incastlab.study.store")
    assert "incastlab.sim" not in loaded


class _Spy:
    def __init__(self, monkeypatch):
        self.calls = []
        real = runner.run

        def run(scenarios, *args, **kwargs):
            self.calls.append(len(scenarios))
            return real(scenarios, *args, **kwargs)

        monkeypatch.setattr(runner, "run", run)


def test_simulate_and_sweep_run_through_the_study_runner(monkeypatch):
    spy = _Spy(monkeypatch)
    r = incastlab.simulate({"servers": 2, "duration": "20ms"})
    df = incastlab.sweep([incastlab.Scenario(servers=n, duration="20ms") for n in (1, 2, 3)], jobs=2)
    grid = incastlab.sweep(grid={"servers": "1,2"}, base={"duration": "20ms"})
    assert spy.calls == [1, 3, 2]
    assert r.servers == 2 and list(df["servers"]) == [1, 2, 3] and list(grid["servers"]) == [1, 2]
    assert "from_store" not in df and "point_key" not in grid, "the store's columns only with a store"


def test_the_command_line_and_reproductions_run_through_the_study_runner(monkeypatch, tmp_path, capsys):
    from incastlab import experiments
    from incastlab.cli.main import main
    from incastlab.experiments import run

    spy = _Spy(monkeypatch)
    assert main(["simulate", "--servers", "1,2", "--duration", "20ms", "--json"]) == 0
    assert main(["demo", "--servers", "1", "--duration", "20ms", "--seeds", "1", "--out", str(tmp_path)]) == 0
    run.simulate(experiments.load("fast08-fig4"), quick=True)
    capsys.readouterr()
    assert spy.calls == [2, 3, 6]


def test_a_point_with_files_to_write_needs_a_run_without_a_store(tmp_path):
    from incastlab.recording import Recording

    with pytest.raises(ValueError, match="without a store"):
        runner.run([incastlab.Scenario(servers=1, blocks=1)], lambda: None, store=object(),
                   recordings=[Recording(pcap=str(tmp_path / "x.pcap"))])


def test_a_frame_keeps_a_column_only_later_rows_have():
    # the core leaves out what a point does not have (PAUSE frame counts without PAUSE);
    # taking the first row's columns dropped them from every row (fast08-fig14.csv did)
    from incastlab.result import SimResult
    from incastlab.sim import to_frame

    df = to_frame([SimResult({"servers": 1, "goodput_mbps": 1.0}),
                   SimResult({"servers": 2, "goodput_mbps": 2.0, "pause_xoff_frames": 7})])
    assert list(df.columns) == ["servers", "goodput_mbps", "pause_xoff_frames"]
    assert df["pause_xoff_frames"].iloc[1] == 7
