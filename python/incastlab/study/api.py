"""Run scenarios or a Study through a store on an executor: what the fronts call.

``run_scenarios`` is the one path: ``incastlab.sweep(...)``, ``incastlab sweep`` and
``incastlab reproduce`` all come here, so all three share the store and the executors.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import UsageError
from ..scenario import Scenario
from . import runner
from .executors import check_executor, make_executor
from .spec import Study
from .store import ResultStore

if TYPE_CHECKING:
    import pandas as pd

#: The executor when none is asked for, from Python (docs/sweep.md, "Execution": threads
#: and processes measured alike on 2 cores, and threads start at once and need no
#: ``if __name__ == "__main__"`` guard in the caller's script, which worker processes
#: started by forkserver do). ``incastlab sweep`` uses processes (CLI_EXECUTOR).
DEFAULT_EXECUTOR = "threads"
CLI_EXECUTOR = "processes"


def open_store(store: str | os.PathLike | ResultStore | None, param: str = "store") -> ResultStore | None:
    if store is None or isinstance(store, ResultStore):
        return store
    return ResultStore(store, param)


def run_scenarios(scenarios: Sequence[Scenario], store: str | os.PathLike | ResultStore | None = None,
                  executor: str | None = None, jobs: int | None = None, scheduler: str | None = None,
                  dask_local: int | None = None, batch: int | None = None,
                  progress: runner.Progress | None = None, announce: Callable[[int, int], None] | None = None,
                  meta: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], runner.Summary]:
    """Simulate ``scenarios`` (rows in order) through ``store`` on the chosen executor."""
    check_executor(executor, jobs, scheduler, dask_local)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise UsageError("batch", batch, "a whole number of points per task, at least 1 (None: sized from the "
                         "measured time per point)")
    st = open_store(store)
    return runner.run(scenarios, lambda: make_executor(executor or DEFAULT_EXECUTOR, jobs, scheduler, dask_local),
                      st, progress=progress, batch=batch, meta=meta, announce=announce)


def run_study(study: Study, **kwargs: Any) -> tuple["pd.DataFrame", runner.Summary]:
    """Every point of ``study`` as one DataFrame row (``series`` first when the study names
    series), with the store's columns; ``kwargs`` as for ``run_scenarios``."""
    pts = study.points()
    meta = {"study": study.describe(), **kwargs.pop("meta", {})}
    rows, summary = run_scenarios([p.scenario for p in pts], meta=meta, **kwargs)
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
