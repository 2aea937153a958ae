"""Run a study: the points the store lacks, in batches, each batch stored as it finishes.

The runner keys every point (``store.point_key``), takes the rows the store already has,
and feeds the rest to an executor in batches, keeping ``executor.capacity`` batches in
flight. Each finished batch becomes one file of the store before anything else happens,
and the run's journal (``STORE/runs/RUN.json``) says which points are in flight, so a
killed sweep loses only those, and says so.

Batch size: the first batch of each worker holds one point; after that a batch holds
about ``target_s`` of simulation, from the measured time per point so far, and never
more than an even share of what is left (so the last batches spread over the workers).
Thousands of sub-second points then cost a few scheduling round trips per second
instead of one per point (docs/sweep.md, "Execution").
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from ..errors import EnvironmentProblem
from ..interrupts import signal_name
from ..result import with_scenario
from ..table import plural
from ..scenario import Scenario
from . import worker
from .executors import ExecutorInfo
from .keys import KEY, canonical_json, point_key

if TYPE_CHECKING:
    from .store import ResultStore

# The columns a row has only when a store is used (with the result's own and the scenario's).
_WITH_A_STORE = (KEY, "core_version", "core_build", "run_id", "from_store")

#: Seconds of simulation a batch aims at, per kind of executor: shorter locally (a kill
#: loses at most one batch per worker), longer on Dask (a task costs milliseconds of
#: scheduling and network). Locally each worker waits while the parent stores its batch and
#: hands it the next, which on a busy machine took 5-15 ms per batch (docs/sweep.md).
TARGET_BATCH_S = {"threads": 0.5, "processes": 0.5, "dask": 1.0}
MAX_BATCH = 2000
#: How often the runner wakes to redraw progress while batches run.
TICK_S = 0.25

# progress(done, total, simulated_s): done counts the points simulated so far of the
# ``total`` to simulate (the store's points are not counted: they cost nothing)
Progress = Callable[[float, int, "float | None"], None]


@dataclass
class Summary:
    """What a run did and what it cost."""

    points: int  # as asked, duplicates included
    unique: int  # distinct points (keys)
    from_store: int  # distinct points the store already had
    computed: int  # distinct points simulated now
    batches: int
    executor: ExecutorInfo
    startup_s: float  # starting the executor (processes, a LocalCluster)
    wall_s: float  # from the first batch to the last result, startup excluded
    core_s: float  # the core's own time over all computed points (sum of wall_seconds)
    core_version: str = ""
    core_build: str = ""
    run_id: str = ""

    @property
    def overhead_per_point_s(self) -> float | None:
        """Worker time per computed point not spent in the core: scheduling, transfer,
        storing, and workers idle at the end; (wall x workers - core time) / points."""
        if not self.computed or not self.executor.workers:
            return None
        return (self.wall_s * self.executor.workers - self.core_s) / self.computed

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["overhead_per_point_s"] = self.overhead_per_point_s
        return d

    def text(self) -> str:
        ex = self.executor
        line = f"{self.points} point{'s' if self.points != 1 else ''}: {self.from_store} from the store, " \
               f"{self.computed} simulated"
        if ex.workers:
            what = {"threads": "worker thread", "processes": "worker process", "dask": "Dask worker"}[ex.kind]
            line += (f" in {self.wall_s:.1f} s by {ex.workers} {what}{'es' if ex.kind == 'processes' else 's'}"
                     if ex.workers != 1 else f" in {self.wall_s:.1f} s by 1 {what}")
            line += f" ({ex.where}; {plural(self.batches, 'batch', 'batches')}, startup {self.startup_s:.1f} s)"
        if self.computed:
            line += (f"; core time {self.core_s:.1f} s, {self.core_s / self.computed * 1e3:.1f} ms per point, "
                     f"overhead {self.overhead_per_point_s * 1e3:.2f} ms per point")
        if self.unique != self.points:
            line += f"; {self.points - self.unique} duplicate points run once"
        return line


@dataclass
class Plan:
    """The points of a run: each scenario's key, the distinct points, and which of them the
    store has (``stored``) or lacks (``todo``, in the order they are given)."""

    scenarios: Sequence[Scenario]
    keys: list[str]
    by_key: dict[str, tuple[Scenario, str]]  # key -> (scenario, its canonical JSON)
    stored: set[str]
    todo: list[str]
    old: dict[str, dict[str, Any]]  # the stored rows, read whole up front

    @classmethod
    def make(cls, scenarios: Sequence[Scenario], store: ResultStore | None, core: tuple[str, str]) -> "Plan":
        texts = [canonical_json(s.to_native()) for s in scenarios]
        keys = [point_key(t, core) for t in texts]
        by_key: dict[str, tuple[Scenario, str]] = {}
        for k, s, t in zip(keys, scenarios, texts):
            by_key.setdefault(k, (s, t))
        stored = store.keys() & set(by_key) if store is not None else set()
        # read whole now, not at the end: a file damaged past its key column is found (and
        # set aside) before the run, and its points are simulated with the others
        old = _stored_rows(store, stored) if stored else {}
        stored = set(old)
        return cls(scenarios, keys, by_key, stored, [k for k in by_key if k not in stored], old)


class Outcome(NamedTuple):
    """What ``run`` returns: one row per scenario (in order), the Summary, and each
    scenario's in-memory recording (``result.Observed``: per-port series, ground truth)
    where one was asked for and kept (else None)."""

    rows: list[dict[str, Any]]
    summary: Summary
    observed: list[Any]


class Batcher:
    """Batch sizes: one point until a point has been timed, then about ``target_s`` worth."""

    def __init__(self, target_s: float, workers: int, fixed: int | None = None):
        self.target_s, self.workers, self.fixed = target_s, workers, fixed
        self.points = 0
        self.seconds = 0.0

    def observe(self, points: int, seconds: float) -> None:
        self.points += points
        self.seconds += seconds

    def next_size(self, remaining: int) -> int:
        if self.fixed is not None:
            return max(1, min(self.fixed, remaining))  # never 0: an empty batch would never end the run
        if not self.points:
            return 1
        per_point = max(self.seconds / self.points, 1e-6)
        size = max(1, min(MAX_BATCH, round(self.target_s / per_point)))
        return max(1, min(size, remaining, math.ceil(remaining / self.workers)))


def run(scenarios: Sequence[Scenario], start_executor: Callable[[], Any], store: ResultStore | None = None,
        progress: Progress | None = None, batch: int | None = None,
        meta: dict[str, Any] | None = None, announce: Callable[[int, int], None] | None = None,
        recordings: Sequence[Any] | None = None, reduce: Callable[[dict, Any], dict] | None = None,
        ) -> Outcome:
    """Simulate ``scenarios`` through ``store`` on the executor ``start_executor()`` returns
    (started only when the store lacks a point, closed before returning); returns one row
    per scenario, in order (the result fields and, with a store, the store's columns and
    ``from_store``), a Summary and what each point recorded in memory.

    ``announce(from_store, to_compute)`` is called once the store has been read;
    ``meta`` goes into the run journal (the command, the study). ``recordings[i]`` (a
    ``Recording``) names the files point i writes, ``reduce(result, observed)`` turns a
    point's per-port series and ground truth (``result.Observed``) into extra columns of its row (after the scenario's) in its
    worker: both only on the threads executor and without a store (a store keeps result
    rows, not files or series)."""
    if (recordings is not None or reduce is not None) and store is not None:
        raise ValueError("recordings and reduce need a run without a store")
    if recordings is not None and len(recordings) != len(scenarios):
        raise ValueError("one Recording per scenario")
    core = worker.core_identity()
    plan = Plan.make(scenarios, store, core)
    if announce is not None:
        announce(len(plan.stored), len(plan.todo))
    started = time.monotonic()
    executor = start_executor() if plan.todo else _NoExecutor()
    startup_s = time.monotonic() - started
    try:
        local = _in_process(plan, executor, recordings, reduce, progress)
        outcome = _run(plan, executor, core, store, progress, batch, startup_s, meta, local)
    except BaseException:
        executor.close(cancel=True)  # Ctrl-C or a failure: stop the running points
        raise
    executor.close()
    if store is not None:
        store.compact()
    return outcome


def _in_process(plan: Plan, executor: Any, recordings: Sequence[Any] | None,
                reduce: Callable[[dict, Any], dict] | None, progress: Progress | None) -> dict[str, worker.InProcess]:
    """What each point to compute carries on a threads executor: its recording, the
    reduction, and a probe when progress is shown (a point's simulated time, read while it
    runs). Other executors carry none (and refuse recordings)."""
    if not plan.todo:
        return {}
    if executor.info.kind != "threads":
        if recordings is not None or reduce is not None:
            raise ValueError("recordings and reduce need the threads executor")
        return {}
    if recordings is None and reduce is None and progress is None:
        return {}
    from .. import _native

    rec_of = {plan.keys[i]: r for i, r in reversed(list(enumerate(recordings)))} if recordings is not None else {}
    return {k: worker.InProcess(rec_of.get(k), _native.Progress() if progress is not None else None, reduce)
            for k in plan.todo}


class _NoExecutor:
    """What runs nothing: every point came from the store."""

    info = ExecutorInfo("none", 0, "every point from the store")
    capacity = 0

    def close(self, cancel: bool = False) -> None:
        pass


def _run(plan: Plan, executor: Any, core: tuple[str, str], store: ResultStore | None, progress: Progress | None,
         batch: int | None, startup_s: float, meta: dict[str, Any] | None,
         local: dict[str, worker.InProcess]) -> Outcome:
    from .store import process_identity  # here: the store's pyarrow loads only for a run

    todo, by_key = plan.todo, plan.by_key
    run_id = store.new_run_id() if store is not None else ""
    journal = _Journal(store, run_id, {
        "run_id": run_id, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "status": "running",
        **process_identity(), "argv": sys.argv, "python": platform.python_version(),
        "core_version": core[0], "core_build": core[1], "executor": asdict(executor.info),
        "points": len(plan.scenarios), "unique": len(by_key), "from_store": len(plan.stored),
        "to_compute": len(todo), "submitted": 0, "computed": 0, "in_flight": [], **(meta or {}),
    })
    computed: dict[str, dict[str, Any]] = {}
    series: dict[str, Any] = {}
    batcher = Batcher(TARGET_BATCH_S.get(executor.info.kind, 1.0), max(1, executor.info.workers), batch)
    in_flight: dict[int, list[str]] = {}  # batch number -> its keys
    next_point, batches, core_s = 0, 0, 0.0
    start = time.monotonic()
    try:
        while next_point < len(todo) or in_flight:
            while next_point < len(todo) and len(in_flight) < executor.capacity:
                size = batcher.next_size(len(todo) - next_point)
                chunk = todo[next_point:next_point + size]
                next_point += size
                in_flight[batches] = chunk
                journal.update(in_flight=_flying(in_flight), submitted=next_point)  # written before it can run
                executor.submit(batches, [(k, by_key[k][1], local[k]) if k in local else (k, by_key[k][1])
                                          for k in chunk], core)
                batches += 1
            for tag, out in executor.wait(TICK_S):
                rows = []
                for k, result_json in out["results"]:
                    data = json.loads(result_json)
                    core_s += data.get("wall_seconds", 0.0)
                    rows.append({**_store_row(data, by_key[k], k, core, run_id), **out.get("columns", {}).get(k, {})})
                series.update(out.get("observed", {}))
                batcher.observe(len(rows), out["wall_s"])
                if store is not None:
                    store.write(rows)  # stored before it leaves the in-flight list
                for r in rows:
                    computed[r[KEY]] = r
                del in_flight[tag]
                journal.update(in_flight=_flying(in_flight), computed=len(computed))
            if progress is not None and todo:
                running = [k for keys in in_flight.values() for k in keys if k in local]
                partial = sum(_fraction_done(by_key[k][0], local[k].probe) for k in running)
                simulated = max((local[k].probe.sim_seconds for k in running), default=None)
                progress(len(computed) + partial, len(todo), simulated)
    except BaseException as e:
        how = f"interrupted ({signal_name(e)})" if isinstance(e, KeyboardInterrupt) else f"failed: {e!r}"
        try:
            journal.update(status=how, finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"), wall_s=time.monotonic() - start)
        except (OSError, EnvironmentProblem):  # a full disk: the run's own error says more than this one
            pass
        raise
    wall = time.monotonic() - start
    summary = Summary(points=len(plan.scenarios), unique=len(by_key), from_store=len(plan.stored),
                      computed=len(computed), batches=batches, executor=executor.info, startup_s=startup_s,
                      wall_s=wall, core_s=core_s, core_version=core[0], core_build=core[1], run_id=run_id)
    journal.update(status="done", finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"), **summary.to_dict())

    old = plan.old
    rows = []
    for k in plan.keys:
        row = dict(computed[k]) if k in computed else dict(old[k])
        row.pop("scenario_json", None)
        if store is None:  # the store's columns mean something only with a store
            for c in _WITH_A_STORE:
                row.pop(c, None)
        else:
            row["from_store"] = k not in computed
        rows.append(row)
    return Outcome(rows, summary, [series.get(k) for k in plan.keys])


def _fraction_done(s: Scenario, probe: Any) -> float:
    """How much of a running point is done: blocks over the block count, or simulated
    time over the duration; below 1 until the point has returned (0 before it starts).
    One-shot flows run until delivered, an end not known ahead: counted only once returned."""
    if probe is None:
        return 0.0
    if s.blocks is not None:
        fraction = probe.blocks / s.blocks
    elif s.duration is not None:
        fraction = probe.sim_seconds / s.duration
    else:
        fraction = 0.0
    return min(fraction, 0.99)


def _flying(in_flight: dict[int, list[str]]) -> list[str]:
    return [k for keys in in_flight.values() for k in keys]


def _store_row(data: dict[str, Any], point: tuple[Scenario, str], key: str, core: tuple[str, str],
               run_id: str) -> dict[str, Any]:
    row = with_scenario(data, point[0])
    row.update({KEY: key, "core_version": core[0], "core_build": core[1], "run_id": run_id,
                "scenario_json": point[1]})
    return row


def _stored_rows(store: ResultStore, keys: set[str]) -> dict[str, dict[str, Any]]:
    table = store.read_table(keys)
    return {r[KEY]: r for r in table.to_pylist()} if table is not None else {}


class _Journal:
    """The run's journal in the store (nothing without a store)."""

    def __init__(self, store: ResultStore | None, run_id: str, first: dict[str, Any]):
        self.store, self.run_id, self.data = store, run_id, first
        self._write()

    def update(self, **changes: Any) -> None:
        self.data.update(changes)
        self._write()

    def _write(self) -> None:
        if self.store is not None:
            self.store.write_journal(self.run_id, self.data)
