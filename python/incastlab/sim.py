"""Run the simulator core: one point (``simulate``) or many (``sweep``), from Python.

Both are fronts of the one engine, the study runner (``incastlab.study``): a point is
simulated by its worker in a thread of this process (the core releases the GIL, so threads
keep every core busy), or with ``sweep(..., executor="processes")`` or on Dask, through a
result store if one is named (``docs/native-api.md``, ``docs/sweep.md``). Results come
back in input order and do not depend on the number of workers: each point is its own
deterministic simulation.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from . import schema
from .errors import UsageError
from .recording import DEFAULT_CAPTURE_LIMIT, Recording
from .result import SimResult, with_scenario  # noqa: F401 - with_scenario: the row, for older callers
from .scenario import Scenario
from .study.executors import available_cores  # noqa: F401 - part of this module's API

if TYPE_CHECKING:  # pandas is imported when a DataFrame is built, so a bare simulate()
    import pandas as pd  # (e.g. one bench point in a fresh process) does not pay ~100 MiB

# The documented result fields (docs/native-api.md); the core may add more after these.
RESULT_COLUMNS = [
    "servers", "sru_bytes", "buffer_bytes", "rto_min_s", "goodput_mbps", "blocks", "timeouts",
    "retransmits", "drops", "max_queue_bytes", "block_time_p50_s", "block_time_p99_s",
    "block_time_max_s", "sim_seconds", "wall_seconds", "events", "packet_hops",
]

ProgressFn = Callable[[int, int], None]
# (done, total, simulated_s): done counts finished points and the running ones' fractions
# (cli.progress.Progress)
TickFn = Callable[[float, int, "float | None"], None]


def simulate(
    scenario: Scenario | Mapping[str, Any],
    *,
    pcap: str | os.PathLike | None = None,
    trace: str | os.PathLike | None = None,
    trace_flows: Iterable[int] | None = None,
    capture_limit: int = DEFAULT_CAPTURE_LIMIT,
    pcap_received_only: bool = False,
    recording: Recording | None = None,
    port_util: str | os.PathLike | None = None,
    port_util_interval: str | float | None = None,
    truth: bool = False,
) -> SimResult:
    """Simulate one point. ``scenario`` is a ``Scenario`` or the keywords of one.

    ``pcap="run.pcap"`` also writes the client's switch port as a pcap, ``trace="run.csv"``
    (or ``.parquet``) the sender state of ``trace_flows`` (docs/capture.md); the result
    then has ``capture_packets``/``capture_truncated`` and ``trace_rows``.
    ``port_util_interval="100us"`` samples every port at that interval (100 us .. 1 s) into
    ``result.port_util`` (``incastlab.utilization.PortUtil``); ``port_util="util.parquet"``
    (or ``.csv``) also writes it, at 100 us unless an interval is given (docs/utilization.md).
    ``truth=True`` records every loss and timeout into ``result.truth``
    (``incastlab.truth.Losses``: the ground truth the verdict is judged against, docs/monitor.md).
    """
    scn = _as_scenario(scenario)
    interval_ps = None
    if port_util_interval is not None or port_util is not None:
        from .units import parse_duration_ps
        from .utilization import check_interval

        ps = parse_duration_ps(port_util_interval if port_util_interval is not None else "100us",
                               "port_util_interval")
        interval_ps = check_interval(ps / 1e12)
    if recording is None:
        recording = Recording(
            pcap=os.fspath(pcap) if pcap is not None else None,
            trace=os.fspath(trace) if trace is not None else None,
            trace_flows=tuple(trace_flows) if trace_flows is not None else None,
            capture_limit=capture_limit,
            pcap_received_only=pcap_received_only,
            port_util=os.fspath(port_util) if port_util is not None else None,
            port_util_interval_ps=interval_ps,
            losses=truth,
        )
    [result] = run_points([scn], jobs=1, recordings=[recording] if recording.wanted else None)
    return result


def sweep(
    scenarios: Iterable[Scenario | Mapping[str, Any]] | None = None,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    *,
    grid: Mapping[str, Any] | None = None,
    base: Mapping[str, Any] | None = None,
    seeds: int | None = None,
    series: Mapping[str, Mapping[str, Any]] | None = None,
    study: str | os.PathLike | Any | None = None,
    store: str | os.PathLike | Any | None = None,
    executor: str | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
    batch: int | None = None,
) -> pd.DataFrame:
    """Simulate every scenario, ``jobs`` at a time (default: the cores this process may use).

    Returns one row per scenario, in input order, with the result fields as columns.
    ``progress(done, total)`` is called after each point finishes.

    A study instead of a list (docs/sweep.md): ``grid={"servers": "1..64", "buffer":
    ["32KiB", "64KiB"]}`` crossed, on top of ``base`` fields, ``seeds`` runs each, per named
    ``series`` ({label: fields}); or ``study="study.toml"``. ``store="results/"`` keeps
    every point in a result store and computes only the points it lacks; ``executor``
    (``"threads"``, ``"processes"``, ``"dask"``), ``scheduler="tcp://host:8786"`` or
    ``dask_local=N`` choose where points run, ``batch`` fixes the points per task. With a
    store, rows also carry ``point_key``, ``core_version``, ``core_build``, ``run_id`` and
    ``from_store``; rows carry ``series`` when the study names series.
    """
    new_style = any(v is not None for v in (grid, base, seeds, series, study, store, executor, scheduler,
                                            dask_local, batch))
    if not new_style:
        if scenarios is None:
            raise UsageError("scenarios", None, "a list of Scenarios, or grid={...} (docs/sweep.md)")
        return to_frame(run_points(scenarios, jobs, _whole_points(progress) if progress else None))
    from .study import api, spec

    tick = _whole_points(progress) if progress else None
    options = dict(store=store, executor=executor, jobs=jobs, scheduler=scheduler, dask_local=dask_local,
                   batch=batch, progress=tick)
    if scenarios is not None:
        if any(v is not None for v in (grid, base, seeds, series, study)):
            raise UsageError("scenarios", "...", "either a list of Scenarios or a grid/study, not both")
        return api.frame(api.run_scenarios([_as_scenario(s) for s in scenarios], **options).rows)
    if study is not None:
        if any(v is not None for v in (grid, base, series)):
            raise UsageError("study", study, "either a study file or grid/base/series, not both")
        chosen = study if isinstance(study, spec.Study) else spec.load(study, seeds)
    else:
        chosen = spec.from_mapping(grid, base, seeds, series)
    df, _ = api.run_study(chosen, **options)
    return df


def _whole_points(progress: ProgressFn) -> TickFn:
    """A ``progress(done, total)`` called once per finished point, as ``sweep`` promises."""
    seen = [0]

    def tick(done: float, total: int, simulated_s: float | None = None) -> None:
        while seen[0] < int(done):
            seen[0] += 1
            progress(seen[0], total)

    return tick


def to_frame(results: Iterable[SimResult]) -> pd.DataFrame:
    """Results as a DataFrame: one row each, the result fields as columns, in order."""
    import pandas as pd

    rows = [r.to_dict() for r in results]
    if not rows:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    # every column any row has, in the order they first appear: the core leaves out what a
    # point does not have (PAUSE frame counts without PAUSE), and the first row alone
    # would drop them for every row (fast08-fig14 lost its PAUSE counts that way)
    columns = list(dict.fromkeys(c for r in rows for c in r))
    return pd.DataFrame.from_records(rows, columns=columns)


def sweep_servers(
    base: Scenario, servers: Iterable[int], jobs: int | None = None, progress: ProgressFn | None = None
) -> pd.DataFrame:
    """``sweep`` over numbers of servers, everything else as in ``base`` (FAST'08 Fig. 4)."""
    return sweep([base.with_servers(n) for n in servers], jobs=jobs, progress=progress)


def run_points(
    scenarios: Iterable[Scenario | Mapping[str, Any]], jobs: int | None = None, progress: TickFn | None = None,
    recordings: list[Recording] | None = None,
    reduce: Callable[[dict, Any], dict] | None = None,
) -> list[SimResult]:
    """Like ``sweep`` but returns the ``SimResult`` objects (input order); ``progress(done,
    total, simulated_s)`` is called as points finish and while they run, ``done`` counting
    the running points' fractions (``cli.progress.point_progress``).

    ``recordings[i]`` names the files point i writes (``Recording.for_point``); ``reduce``,
    applied to each result and its port series in its worker as soon as it is done, gives
    the columns to keep of it (a point's port series can be hundreds of MB). The study
    runner runs them (``study.api.simulate_points``), in threads of this process."""
    from . import _native
    from .study import api

    points = [_as_scenario(s) for s in scenarios]
    if isinstance(jobs, bool) or (jobs is not None and (not isinstance(jobs, int) or jobs < 1)):
        raise UsageError("jobs", jobs, "a whole number of parallel jobs, at least 1")
    try:
        return api.simulate_points(points, jobs=jobs, progress=progress, recordings=recordings, reduce=reduce)
    except _native.ScenarioError as e:  # a Scenario the core refuses was refused at construction
        raise _native_error(*e.args) from None


def _as_scenario(s: Scenario | Mapping[str, Any]) -> Scenario:
    if isinstance(s, Scenario):
        return s
    if isinstance(s, Mapping):
        return Scenario(**s)
    raise TypeError(f"expected a Scenario or a dict of its fields, got {type(s).__name__}")


def _native_error(param: str, value: str, allowed: str, related: list[str]) -> UsageError:
    """The core's refusal, named as people write the field."""
    field_spec = schema.BY_NAME.get(param)
    return UsageError(field_spec.public if field_spec else param, value, allowed)
