"""``incastlab sweep`` and the result store (issue 14): the grid grammar, study files, store
keys, resuming after SIGKILL and SIGINT of a real sweep, two sweeps writing one store at
once, and a real Dask LocalCluster with 2 workers. Points are short (0.2-1 s simulated)
so the file runs in well under a minute; the 1,000-point measurements are in docs/sweep.md."""

from __future__ import annotations


import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import incastlab
from incastlab.errors import UsageError
from incastlab.study import grid, spec, store as store_mod, worker
from incastlab.study.store import ResultStore, canonical_json, point_key

# Columns that differ between two runs of the same point (time, provenance), not results.
RUN_COLUMNS = {"wall_seconds", "run_id", "from_store"}


def incastlab_cli(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def results(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in df if c in RUN_COLUMNS]).reset_index(drop=True)


# --- the grammar ------------------------------------------------------------------------


def test_a_range_doubles_and_keeps_both_ends():
    assert grid.parse_grid(["servers=1,2,4..64"]) == {"servers": [1, 2, 4, 8, 16, 32, 64]}
    assert grid.parse_grid(["servers=3..64"])["servers"] == [3, 6, 12, 24, 48, 64]
    assert grid.parse_grid(["servers=4..16+4"])["servers"] == [4, 8, 12, 16]


def test_values_take_the_fields_units():
    g = grid.parse_grid(["buffer=32KiB..128KiB", "rto_min=200ms,200us", "rto_max=100us..100ms*10",
                         "udp=0..0.3+0.1", "tcp=reno,sack", "limited_transmit=on,off"])
    assert g["buffer"] == [32768, 65536, 131072]
    assert g["rto_min"] == [0.2, 0.0002]
    assert g["rto_max"] == [0.0001, 0.001, 0.01, 0.1]  # exact: stepped in whole picoseconds
    assert g["udp"] == [0.0, 0.1, 0.2, 0.3]
    assert g["tcp"] == ["reno", "sack"] and g["limited_transmit"] == [True, False]


@pytest.mark.parametrize("item, named, allowed", [
    ("bufer=1", "--grid", "servers, clients, workload"),  # the field list, in the schema's order
    ("buffer=32XB", "--grid buffer", "size"),
    ("servers=0,1", "--grid servers", "1 to"),
    ("tcp=reno..sack", "--grid tcp", "range needs numbers"),
    ("servers=8..4", "--grid servers", "A at most B"),
    ("servers", "--grid", "FIELD=VALUES"),
])
def test_a_bad_grid_item_names_the_field_and_what_is_allowed(item, named, allowed):
    with pytest.raises(UsageError) as e:
        grid.parse_grid([item])
    assert e.value.param == named and allowed in e.value.allowed


def test_cli_refuses_a_misspelt_field_in_one_line_with_status_2(tmp_path):
    r = incastlab_cli("sweep", "--grid", "bufer=1", "--out", str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "bufer" in lines[0] and "buffer" in lines[0] and "Traceback" not in r.stderr
    r = incastlab_cli("sweep", "--grid", "servers=1", "seed=1,2", "--seeds", "2", "--out", str(tmp_path))
    assert r.returncode == 2 and "seed" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --- study files ------------------------------------------------------------------------

STUDY = """
title = "RTOmin against buffer"
seeds = 2
[base]
duration = "200ms"
jitter = "3us"
[grid]
servers = "1..4"
buffer = ["32KiB", "64KiB"]
[[series]]
label = "RTOmin 200 ms"
[[series]]
label = "RTOmin 200 us"
rto_min = "200us"
[plot]
x = "servers"
"""


def test_a_study_file_crosses_the_grid_per_series_and_seed(tmp_path):
    path = tmp_path / "rto.toml"
    path.write_text(STUDY)
    st = spec.load(path)
    pts = st.points()
    assert len(pts) == 2 * 3 * 2 * 2  # series x servers x buffer x seeds
    assert {p.series for p in pts} == {"RTOmin 200 ms", "RTOmin 200 us"}
    first = pts[0].scenario
    assert (first.servers, first.buffer, first.seed, first.duration, first.rto_min) == (1, 32768, 1, 0.2, 0.2)
    assert pts[-1].scenario.rto_min == 0.0002 and pts[-1].scenario.jitter == 3e-6


@pytest.mark.parametrize("edit, named", [
    (("[base]", "[base]\nbufer = \"1\""), "bufer"),
    (("title =", "colour = 1\ntitle ="), "colour"),
    (("x = \"servers\"", "x = \"rtt\""), "[plot] x"),
    (("rto_min = \"200us\"", "rto_min = \"2 fortnights\""), "rto_min"),
    (("[[series]]\nlabel = \"RTOmin 200 ms\"", "[[series]]\nlabel = \"RTOmin 200 ms\"\nservers = 3"), "servers"),
])
def test_a_bad_study_file_is_one_usage_error_naming_the_file_and_key(tmp_path, edit, named):
    path = tmp_path / "bad.toml"
    path.write_text(STUDY.replace(*edit, 1))
    with pytest.raises(UsageError) as e:
        spec.load(path)
    assert str(path) in str(e.value) and named in str(e.value)


def test_the_plot_runs_along_the_first_numeric_field_a_word_field_gives_lines():
    # the README's `sweep --grid preset=rfc,fast08,ns3 servers=1..64`: its page plotted nothing
    # ("the x field is not numeric") when x was the first grid field, preset
    from incastlab.report import figures

    study = spec.from_grid(["preset=rfc,fast08", "servers=1,2"])
    assert study.x_field() == "servers"
    rows = pd.DataFrame({"preset": ["rfc", "rfc", "fast08", "fast08"], "servers": [1, 2, 1, 2],
                         "goodput_mbps": [900.0, 80.0, 910.0, 930.0]})
    v = figures.view(rows, study.describe())
    assert (v.x, v.lines) == ("servers", ["preset"])
    assert spec.from_grid(["servers=4", "buffer=32KiB,64KiB"]).x_field() == "buffer", "one value: no axis"
    assert spec.from_grid(["tcp=reno,sack"]).x_field() == "tcp", "nothing numeric: the first, as before"


# --- the store --------------------------------------------------------------------------


def test_the_key_is_the_sha256_of_the_canonical_scenario_and_the_core():
    s = incastlab.Scenario(servers=4, buffer="64KiB")
    text = canonical_json(s.to_native())
    core = worker.core_identity()
    expected = hashlib.sha256(json.dumps({"core_build": core[1], "core_version": core[0],
                                          "scenario": json.loads(text)}, sort_keys=True,
                                         separators=(",", ":")).encode()).hexdigest()
    assert point_key(text, core) == expected
    # equal scenarios written differently are one point; any field or another core is another
    same = incastlab.Scenario(servers=4, buffer=65536, rto_min="200ms")
    assert point_key(canonical_json(same.to_native()), core) == expected
    other = incastlab.Scenario(servers=4, buffer="64KiB", rto_max="59s")
    assert point_key(canonical_json(other.to_native()), core) != expected
    assert point_key(text, (core[0], "0" * 16)) != expected and point_key(text, ("9.9.9", core[1])) != expected


def test_a_rerun_reads_the_store_and_a_changed_field_or_core_misses(tmp_path, monkeypatch):
    kw = dict(grid={"servers": "1..8", "buffer": ["32KiB", "64KiB"]}, base={"duration": "0.3s"},
              store=tmp_path / "store")
    first = incastlab.sweep(**kw)
    assert len(first) == 8 and not first["from_store"].any()
    again = incastlab.sweep(**kw)
    assert again["from_store"].all()
    pd.testing.assert_frame_equal(results(first), results(again), check_dtype=False)
    # one more buffer: only its 4 points are simulated
    more = incastlab.sweep(**{**kw, "grid": {"servers": "1..8", "buffer": ["32KiB", "64KiB", "128KiB"]}})
    assert (~more["from_store"]).sum() == 4 and set(more.loc[~more["from_store"], "buffer_bytes"]) == {131072}
    # another build of the core: nothing it has is reused
    worker.core_identity.cache_clear()
    monkeypatch.setattr(worker, "core_identity", lambda: ("0.1.0", "another-build"))
    other = incastlab.sweep(**kw)
    assert not other["from_store"].any() and set(other["core_build"]) == {"another-build"}


def test_the_store_reads_files_whose_columns_differ(tmp_path):
    st = ResultStore(tmp_path / "s")
    st.write([{"point_key": "a", "goodput_mbps": 1.0, "block_bytes": None}])
    st.write([{"point_key": "b", "goodput_mbps": 2.0, "block_bytes": 1000, "new_counter": 7}])
    st.write([{"point_key": "a", "goodput_mbps": 1.0, "block_bytes": None}])  # a second writer's copy
    df = st.read().sort_values("point_key").reset_index(drop=True)
    assert list(df["point_key"]) == ["a", "b"] and df.loc[1, "new_counter"] == 7 and pd.isna(df.loc[0, "new_counter"])
    assert st.keys() == {"a", "b"}
    assert not list(st.data.glob(".*")), "no temporary file left behind"


def test_compaction_merges_files_and_keeps_every_point(tmp_path):
    st = ResultStore(tmp_path / "s")
    for i in range(6):
        st.write([{"point_key": str(i), "goodput_mbps": float(i)}])
    assert st.compact(above=3) == 6 and len(st.files()) == 1
    assert st.keys() == {str(i) for i in range(6)}


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UsageError) as e:
        ResultStore(tmp_path)
    assert e.value.param == "--store"


# --- resuming: SIGKILL and SIGINT of a real sweep -----------------------------------------

KILL_GRID = ["servers=1..64", "buffer=32KiB,48KiB,64KiB,96KiB", "rto_min=200ms,1ms", "jitter=3us", "duration=1s"]
KILL_SEEDS = 3


def _start_sweep(out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "incastlab.cli.main", "sweep", "--grid", *KILL_GRID,
                             "--seeds", str(KILL_SEEDS), "--out", str(out), "--jobs", "2", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_files(st: ResultStore, n: int, proc: subprocess.Popen, limit_s: float = 60) -> None:
    end = time.monotonic() + limit_s
    while len(st.files()) < n:
        assert proc.poll() is None, f"the sweep ended before {n} batches were stored: {proc.communicate()}"
        assert time.monotonic() < end, "no progress"
        time.sleep(0.02)


def test_a_sweep_killed_with_sigkill_resumes_losing_only_its_points_in_flight(tmp_path):
    out = tmp_path / "out"
    proc = _start_sweep(out)
    st_path = out / "store"
    while not (st_path / store_mod.MARKER).exists():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    st = ResultStore(st_path)
    _wait_for_files(st, 4, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and any worker it started
    proc.wait()

    (journal,) = st.journals()
    # it never got to say otherwise: the file says running; read back, the dead pid tells (issue 25)
    (raw,) = [json.loads(p.read_text()) for p in st.runs.glob("*.json")]
    assert raw["status"] == "running"
    assert journal["status"].startswith(f"died (process {proc.pid} is gone"), journal["status"]
    order = list(dict.fromkeys(point_key(canonical_json(p.scenario.to_native()), worker.core_identity())
                               for p in spec.from_grid(KILL_GRID, KILL_SEEDS).points()))
    stored = st.keys()
    submitted = set(order[:journal["submitted"]])
    lost = submitted - stored
    assert stored <= submitted
    assert lost <= set(journal["in_flight"]), "a point that was not in flight was lost"
    assert len(journal["in_flight"]) <= 2 * 64  # two batches (one per worker); a batch is far below 64 points here

    # SIGINT half-way through the rest: it stops, says how to resume, and keeps what finished
    proc = _start_sweep(out)
    _wait_for_files(st, len(st.files()) + 3, proc)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "the same command" in err
    interrupted = [j for j in st.journals() if j["run_id"] != journal["run_id"]][0]
    assert interrupted["status"] == "interrupted (SIGINT)" and interrupted["from_store"] == len(stored)

    # the resumed sweep simulates exactly what is missing; the result is the uninterrupted one
    before = st.keys()
    r = incastlab_cli("sweep", "--grid", *KILL_GRID, "--seeds", str(KILL_SEEDS), "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    last = [j for j in st.journals() if j["status"] == "done"][-1]
    assert last["from_store"] == len(before) and last["computed"] == len(order) - len(before)
    resumed = pd.read_csv(out / "sweep.csv")
    reference = incastlab.sweep(grid=dict(g.split("=") for g in KILL_GRID), seeds=KILL_SEEDS,
                                store=tmp_path / "fresh")
    # through CSV as the sweep's file went (an unset field, None, reads back as NaN)
    reference = pd.read_csv(io.StringIO(reference.to_csv(index=False)))
    cols = [c for c in resumed.columns if c in reference.columns and c not in RUN_COLUMNS | {"dart_histogram"}]
    pd.testing.assert_frame_equal(resumed[cols], reference[cols], check_dtype=False)


def test_two_sweeps_writing_one_store_at_once_corrupt_nothing(tmp_path):
    st_path = tmp_path / "shared"
    ResultStore(st_path)
    grids = [["servers=1..64", "buffer=32KiB,64KiB", "duration=0.5s"],
             ["servers=1..64", "buffer=64KiB,128KiB", "duration=0.5s"]]
    procs = [subprocess.Popen([sys.executable, "-m", "incastlab.cli.main", "sweep", "--grid", *g, "--out",
                               str(tmp_path / f"out{i}"), "--store", str(st_path), "--jobs", "1", "--batch", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, g in enumerate(grids)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    st = ResultStore(st_path)
    table = st.read_table().to_pandas()
    assert st.keys() == set(table["point_key"]) and len(st.keys()) == 7 * 3
    # a point both computed is there twice at most, with the same results
    for _, rows in table.groupby("point_key"):
        assert len(rows) <= 2
        assert results(rows.drop(columns=["dart_histogram"])).drop_duplicates().shape[0] == 1
    a, b = (pd.read_csv(tmp_path / f"out{i}" / "sweep.csv") for i in range(2))
    shared = ["servers", "buffer_bytes", "goodput_mbps", "timeouts", "drops"]
    overlap = a[a["buffer_bytes"] == 65536][shared].reset_index(drop=True)
    pd.testing.assert_frame_equal(overlap, b[b["buffer_bytes"] == 65536][shared].reset_index(drop=True))
    # and a third run finds everything
    again = incastlab.sweep(grid={"servers": "1..64", "buffer": ["32KiB", "64KiB", "128KiB"]},
                            base={"duration": "0.5s"}, store=st_path)
    assert again["from_store"].all()


# --- executors ----------------------------------------------------------------------------


def test_processes_and_a_two_worker_dask_localcluster_give_the_threads_results(tmp_path):
    kw = dict(grid={"servers": "1..64", "rto_min": ["200ms", "200us"]}, base={"duration": "0.5s"})
    threads = incastlab.sweep(**kw, store=tmp_path / "t", executor="threads", jobs=2)
    procs = incastlab.sweep(**kw, store=tmp_path / "p", executor="processes", jobs=2)
    # LocalCluster(n_workers=2, threads_per_worker=1, processes=True): the real thing, 2 points per task
    dask = incastlab.sweep(**kw, store=tmp_path / "d", dask_local=2, batch=2)
    for other in (procs, dask):
        pd.testing.assert_frame_equal(results(threads).drop(columns=["dart_histogram"]),
                                      results(other).drop(columns=["dart_histogram"]), check_dtype=False)
    (journal,) = ResultStore(tmp_path / "d").journals()
    assert journal["executor"]["kind"] == "dask" and journal["executor"]["workers"] == 2
    assert journal["batches"] == 7 and journal["status"] == "done"  # 14 points, 2 per task


@pytest.mark.parametrize("batch", [0, -1, 1.5, True])
def test_a_batch_of_no_points_is_refused_not_looped_on(batch):
    # issue 25: batch=0 made every batch empty, and the runner waited for them forever
    with pytest.raises(incastlab.UsageError) as e:
        incastlab.sweep(grid={"servers": "1,2"}, base={"duration": "10ms"}, batch=batch)
    assert e.value.param == "batch"


def test_a_worker_on_another_core_build_refuses_to_run():
    with pytest.raises(RuntimeError, match="same build"):
        worker.run_batch([("k", "{}")], ("0.1.0", "not-this-build"))


def test_the_list_call_of_sweep_is_unchanged():
    df = incastlab.sweep([incastlab.Scenario(servers=n, duration="0.2s") for n in (1, 4)], jobs=2)
    assert list(df["servers"]) == [1, 4] and "from_store" not in df
