"""Run scenarios or a Study through a store on an executor: what the fronts call.

``run_scenarios`` is the one path: ``incastlab.simulate(...)`` and ``incastlab.sweep(...)``,
``incastlab simulate``, ``demo``, ``sweep`` and ``reproduce`` all come here, so they share
the store, the executors, progress and Ctrl-C. ``simulate_points`` is the same run as
``SimResult`` objects, for the fronts that record files or read per-port series.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import UsageError
from ..result import SimResult
from ..scenario import Scenario
from . import runner
from . import executors
from .executors import CLI_EXECUTOR, DEFAULT_EXECUTOR, check_executor  # noqa: F401 - CLI_EXECUTOR: the fronts'

if TYPE_CHECKING:
    import pandas as pd

    from .spec import Study
    from .store import ResultStore

def open_store(store: str | os.PathLike | ResultStore | None, param: str = "store") -> ResultStore | None:
    if store is None:
        return None
    from .store import ResultStore

    return store if isinstance(store, ResultStore) else ResultStore(store, param)


def run_scenarios(scenarios: Sequence[Scenario], store: str | os.PathLike | ResultStore | None = None,
                  executor: str | None = None, jobs: int | None = None, scheduler: str | None = None,
                  dask_local: int | None = None, batch: int | None = None,
                  progress: runner.Progress | None = None, announce: Callable[[int, int], None] | None = None,
                  meta: dict[str, Any] | None = None, recordings: Sequence[Any] | None = None,
                  reduce: Callable[[dict, Any], dict] | None = None) -> runner.Outcome:
    """Simulate ``scenarios`` (rows in order) through ``store`` on the chosen executor;
    ``recordings`` and ``reduce`` as ``runner.run`` takes them (threads, no store)."""
    check_executor(executor, jobs, scheduler, dask_local)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise UsageError("batch", batch, "a whole number of points per task, at least 1 (None: sized from the "
                         "measured time per point)")
    st = open_store(store)
    return runner.run(scenarios,
                      lambda: executors.make_executor(executor or DEFAULT_EXECUTOR, jobs, scheduler, dask_local),
                      st, progress=progress, batch=batch, meta=meta, announce=announce, recordings=recordings,
                      reduce=reduce)


def simulate_points(scenarios: Sequence[Scenario], jobs: int | None = None,
                    progress: runner.Progress | None = None, recordings: Sequence[Any] | None = None,
                    reduce: Callable[[dict, Any], dict] | None = None) -> list[SimResult]:
    """Simulate ``scenarios`` in threads of this process, without a store: one SimResult
    each, in order, with its per-port series when one was sampled (and not reduced)."""
    out = run_scenarios(scenarios, executor="threads", jobs=jobs, progress=progress, recordings=recordings,
                        reduce=reduce)
    return [SimResult(row, s, o.port_util, o.truth) if o is not None else SimResult(row, s)
            for row, s, o in zip(out.rows, scenarios, out.observed)]


def run_study(study: Study, **kwargs: Any) -> tuple["pd.DataFrame", runner.Summary]:
    """Every point of ``study`` as one DataFrame row (``series`` first when the study names
    series), with the store's columns; ``kwargs`` as for ``run_scenarios``."""
    pts = study.points()
    meta = {"study": study.describe(), **kwargs.pop("meta", {})}
    rows, summary, _ = run_scenarios([p.scenario for p in pts], meta=meta, **kwargs)
    df = frame(rows)
    if any(s.label for s in study.series):
        df.insert(0, "series", [p.series for p in pts])
    return df, summary


def frame(rows: list[dict[str, Any]]) -> "pd.DataFrame":
    """Rows as a DataFrame, the columns in the order they first appear."""
    import pandas as pd

    columns: dict[str, None] = {}
    for r in rows:
        columns.update(dict.fromkeys(r))
    return pd.DataFrame.from_records(rows, columns=list(columns))
