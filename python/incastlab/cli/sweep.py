"""``incastlab sweep``: a parameter study over any scenario fields, through a result store.

    incastlab sweep --grid servers=1,2,4..64 buffer=32KiB,64KiB rto_min=200ms,200us --seeds 5 --out study
    incastlab sweep --study buffers.toml --out study --dask-local 2
    incastlab sweep --grid servers=1..64 --out study --scheduler tcp://host:8786

Writes OUT/NAME.csv (one row per point) and OUT/NAME.study.json (the study, the run, the
versions); every point also goes to the store (OUT/store unless --store), so a second
run, or a run after a kill, simulates only the points the store lacks. docs/sweep.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..outfiles import check_writable, pruned_on_failure, together
from ..study import spec
from ..study.executors import CLI_EXECUTOR, KINDS, check_executor
from ..table import plural
from . import argtypes
from .progress import point_progress

if TYPE_CHECKING:
    from ..study.store import ResultStore


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="a parameter study over any scenario fields, resumable, local or on Dask",
        description="Simulate every combination of a grid of scenario fields (or a study file), keep every "
        "point in a result store and simulate only the points it lacks. Writes OUT/NAME.csv and "
        "OUT/NAME.study.json; `incastlab report OUT` makes a page of them. Grammar: docs/sweep.md.",
    )
    what = p.add_argument_group("what to simulate")
    what.add_argument("--grid", nargs="+", action="extend", default=[], metavar="FIELD=VALUES",
                      help="scenario fields and their values, crossed: servers=1,2,4..64 buffer=32KiB,64KiB "
                      "rto_min=200ms,200us. A..B doubles from A to B (both included), A..B+S steps by S, A..B*F "
                      "multiplies by F; units as the field takes them (docs/scenario-fields.md)")
    what.add_argument("--study", metavar="FILE", help="a study file (TOML: base, grid, named series, seeds, plot)")
    what.add_argument("--seeds", type=argtypes.positive_int("--seeds", minimum=1, maximum=spec.MAX_SEEDS),
                      default=None, metavar="N", help="run every point with seed 1..N")
    out = p.add_argument_group("where results go")
    out.add_argument("--out", metavar="DIR", required=True, help="directory for NAME.csv and NAME.study.json")
    out.add_argument("--name", default=None, help="NAME of the output files (default: the study file's name, "
                     "or 'sweep')")
    out.add_argument("--store", metavar="DIR", help="the result store (default: OUT/store); share one between "
                     "studies to reuse their points")
    out.add_argument("--json", action="store_true", help="print one JSON object per point on stdout instead of the "
                     "summary")
    run = p.add_argument_group("where points run")
    run.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=1024), default=None,
                     metavar="J", help="local workers (default: the available cores)")
    run.add_argument("--executor", choices=[k for k in KINDS if k != "dask"], default=None,
                     help=f"local worker processes or threads (default: {CLI_EXECUTOR}; they measure alike, "
                     "docs/sweep.md)")
    run.add_argument("--dask-local", type=argtypes.positive_int("--dask-local", minimum=1, maximum=1024),
                     default=None, metavar="N", help="start a Dask LocalCluster of N single-threaded worker processes")
    run.add_argument("--scheduler", metavar="ADDR", help="run on a Dask cluster: its scheduler, e.g. tcp://host:8786 "
                     "(every worker needs the same incastlab build)")
    run.add_argument("--batch", type=argtypes.positive_int("--batch", minimum=1, maximum=100000), default=None,
                     metavar="N", help="points per task (default: about 0.5 s of simulation locally, 1 s on Dask, "
                     "from the measured time per point)")
    p.set_defaults(func=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    from ..study import api
    from ..study.store import ResultStore

    # every refusal before anything is written or printed: one line, no file left
    study = _study(args)
    points = study.points()  # every scenario checked
    name = args.name or study.name
    if not name or "/" in name or name.startswith("."):
        raise UsageError("--name", name, "a file name without '/' that does not start with '.'")
    if (args.dask_local or args.scheduler) and (args.jobs or args.executor):
        raise UsageError("--jobs" if args.jobs else "--executor", args.jobs or args.executor,
                         "local workers, or Dask (--dask-local/--scheduler), not both")
    check_executor(args.executor, args.jobs, args.scheduler, args.dask_local)
    if args.store:
        ResultStore(args.store, "--store")  # checked; created at its first write
    # a refused or failed run leaves no empty directory behind (points stored are kept)
    with pruned_on_failure(args.out), pruned_on_failure(args.store or args.out):
        out = _prepare_out(args.out)
        for suffix in (".csv", ".study.json"):
            check_writable(out / f"{name}{suffix}", "--out")
        store = ResultStore(args.store or out / "store", "--store")
        if not args.json:
            print(f"# {name}: {_points(len(points))} ({_shape(study)})", flush=True)
        progress = _Progress(quiet=args.json)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        try:
            local = None if (args.dask_local or args.scheduler) else (args.executor or CLI_EXECUTOR)
            df, summary = api.run_study(study, store=store, executor=local, jobs=args.jobs,
                                        scheduler=args.scheduler, dask_local=args.dask_local, batch=args.batch,
                                        progress=progress, announce=progress.announce, meta={"argv": sys.argv})
        except KeyboardInterrupt:
            print(f"incastlab sweep: stopped; the points finished so far are in {store.root}: the same command "
                  "simulates only the rest", file=sys.stderr)
            raise
        paths = _write(out, name, df, study, summary, store, started)
    if args.json:
        from ..experiments.run import csv_frame

        for row in csv_frame(df).to_dict("records"):
            print(json.dumps(row, default=str))
        return 0
    print(f"# {summary.text()}")
    note = _identical_seeds_note(df, study)
    if note:
        print(f"note: {note}")
    print(f"wrote {paths[0]}, {paths[1]}; store {store.root} ({plural(len(store.files()), 'file')}); "
          f"`incastlab report {out}` makes a page")
    return 0


def _points(n: int) -> str:
    return f"{n} point" + ("" if n == 1 else "s")


def _study(args: argparse.Namespace) -> spec.Study:
    if args.study and args.grid:
        raise UsageError("--grid", " ".join(args.grid), "either --grid or --study, not both")
    if args.study:
        return spec.load(args.study, args.seeds)
    if not args.grid:
        raise UsageError("--grid", None, "FIELD=VALUES items (e.g. --grid servers=1,2,4..64) or --study FILE")
    return spec.from_grid(args.grid, args.seeds)


def _shape(study: spec.Study) -> str:
    parts = [f"{k} x{len(v)}" if len(v) > 1 else f"{k}={spec.BY_PUBLIC[k].format(v[0])}"
             for k, v in study.grid.items()]
    if len(study.series) > 1:
        parts.append(f"{len(study.series)} series")
    if study.seeds:
        parts.append(plural(study.seeds, "seed"))
    return ", ".join(parts)


def _prepare_out(text: str) -> Path:
    from .reproduce import _prepare_out as prepare

    return prepare(text)


class _Progress:
    """The progress bar over the points to simulate, started once the store has been read."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.inner = None

    def announce(self, from_store: int, to_compute: int) -> None:
        if not self.quiet:
            print(f"# {_points(from_store)} from the store, {to_compute} to simulate", flush=True)
        self.inner = point_progress("sweep", to_compute, line_per_point=False)

    def __call__(self, done: float, total: int, simulated_s: float | None = None) -> None:
        if self.inner is not None:
            self.inner(done, total, simulated_s)


def _write(out: Path, name: str, df, study: spec.Study, summary, store: ResultStore, started: str):
    with together():  # the CSV and the study file appear together or not at all (docs/faults.md)
        return _write_both(out, name, df, study, summary, store, started)


def _write_both(out: Path, name: str, df, study: spec.Study, summary, store: ResultStore, started: str):
    from .. import __version__
    from ..experiments.run import csv_frame
    from ..outfiles import write_csv, write_text

    csv = write_csv(csv_frame(df), out / f"{name}.csv", "--out")
    meta = {
        "kind": "incastlab sweep", "name": name, "study": study.describe(), "summary": summary.to_dict(),
        "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv,
        "incastlab_version": __version__, "core_version": summary.core_version, "core_build": summary.core_build,
        "python": platform.python_version(), "host": platform.node(), "store": str(store.root.resolve()),
        "csv": csv.name,
    }
    text = json.dumps(meta, indent=2, default=str) + "\n"
    js = write_text(out / f"{name}.study.json", text, "--out")
    return csv, js


def _identical_seeds_note(df, study: spec.Study) -> str | None:
    """Seeds that change nothing are worth saying: nothing in these scenarios draws at random."""
    if not study.seeds or study.seeds < 2 or df.empty:
        return None
    keys = [c for c in ("series",) if c in df] + [spec.BY_PUBLIC[k].result_name for k in study.grid]
    varied = df.groupby(keys, dropna=False)["goodput_mbps"].nunique(dropna=False)
    if (varied > 1).any():
        return None
    return (f"the {study.seeds} seeds gave the same goodput at every point: nothing in these scenarios draws at "
            "random (add e.g. jitter=3us, the servers' think time the reproductions use; docs/sweep.md)")
