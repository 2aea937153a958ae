"""Run the simulator core: one point (``simulate``) or many in parallel (``sweep``).

The core (``incastlab._native.simulate``) takes and returns JSON and releases the GIL
while it runs, so a plain thread pool keeps every core busy without the cost of
processes (``docs/native-api.md``). Results come back in input order and do not depend
on the number of threads: each point is its own deterministic simulation.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from . import schema
from .errors import UsageError
from .recording import DEFAULT_CAPTURE_LIMIT, Recording, simulate_recording
from .scenario import Scenario

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

#: How often a running sweep reports progress inside its points.
TICK_SECONDS = 0.5
#: How long the main thread waits for the points at a time: Ctrl-C is seen between waits,
#: and progress is reported no more often.
WAIT_SECONDS = 0.1


@dataclass(frozen=True)
class SimResult:
    """The outcome of one simulated point: the core's flat result, read as attributes.

    ``r.goodput_mbps``, ``r.timeouts``, ``r["drops"]``; ``r.to_dict()`` is the JSON object
    ``incastlab simulate --json`` prints. Times are seconds, rates Mbps, sizes bytes.
    """

    data: Mapping[str, Any]
    scenario: Scenario | None = field(default=None, compare=False)
    #: Every port's series (``incastlab.utilization.PortUtil``) when sampling was asked for.
    port_util: Any = field(default=None, compare=False)
    #: The ground truth of every loss and timeout (``incastlab.truth.Losses``) when asked for.
    truth: Any = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))

    def __getattr__(self, name: str) -> Any:
        if name in ("data", "scenario", "port_util", "truth") or name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(f"SimResult has no field {name!r}") from None

    def __repr__(self) -> str:
        # the headline numbers in their units, not the whole mapping (issue 11: picoseconds)
        d = self.data
        head = ", ".join(f"{k}={d[k]!r}" for k in ("servers", "goodput_mbps", "blocks", "timeouts", "drops",
                                                   "sim_seconds") if k in d)
        return f"SimResult({head}, scenario={self.scenario!r})" if self.scenario is not None else f"SimResult({head})"

    def __reduce__(self):  # MappingProxyType does not pickle; rebuild from a plain dict
        return (SimResult, (dict(self.data), self.scenario, self.port_util, self.truth))

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.data))

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (a copy), in the core's field order."""
        return dict(self.data)

    def to_json(self) -> str:
        """One line of ``--json`` output."""
        return json.dumps(self.to_dict())


def simulate(
    scenario: Scenario | Mapping[str, Any],
    *,
    pcap: str | os.PathLike | None = None,
    trace: str | os.PathLike | None = None,
    trace_flows: Iterable[int] | None = None,
    capture_limit: int = DEFAULT_CAPTURE_LIMIT,
    pcap_received_only: bool = False,
    recording: Recording | None = None,
    progress_probe: Any = None,
    port_util: str | os.PathLike | None = None,
    port_util_interval: str | float | None = None,
    truth: bool = False,
) -> SimResult:
    """Simulate one point. ``scenario`` is a ``Scenario`` or the keywords of one.

    ``pcap="run.pcap"`` also writes the client's switch port as a pcap, ``trace="run.csv"``
    (or ``.parquet``) the sender state of ``trace_flows`` (docs/capture.md); the result
    then has ``capture_packets``/``capture_truncated`` and ``trace_rows``.
    ``progress_probe``: an ``incastlab._native.Progress`` the run reports to while it runs
    (its ``sim_seconds`` and ``blocks``, read from another thread).
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
    from . import _native  # imported here so `import incastlab` works without the build

    util = losses = None
    try:
        if recording.wanted:
            data, util, losses = simulate_recording(scn.to_native(), recording, progress_probe)
        else:
            data = json.loads(_native.simulate(json.dumps(scn.to_native()), progress=progress_probe))
    except _native.ScenarioError as e:  # a Scenario the core refuses was refused at construction
        raise _native_error(*e.args) from None
    return SimResult(with_scenario(data, scn), scn, util, losses)


def with_scenario(data: Mapping[str, Any], scn: Scenario) -> dict[str, Any]:
    """The core's result row with every scenario field (SI units, ``docs/scenario-fields.md``)
    and the incastlab version, so a row read alone says what produced it. The core's own
    columns win: they give what ran (the per-server part in fixed-block mode, the buffer
    as ports count it)."""
    from . import __version__

    row = dict(data)
    for name, value in scn.result_fields().items():
        row.setdefault(name, value)
    row["incastlab_version"] = __version__
    return row


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
    ``dask_local=N`` choose where points run, ``batch`` fixes the points per task. Rows
    then also carry ``point_key``, ``core_version``, ``core_build``, ``run_id`` and
    ``from_store`` (and ``series`` when the study names series).
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
        rows, _ = api.run_scenarios([_as_scenario(s) for s in scenarios], **options)
        return api.frame(rows)
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
    columns = list(rows[0]) if rows else list(RESULT_COLUMNS)
    return pd.DataFrame.from_records(rows, columns=columns)


def sweep_servers(
    base: Scenario, servers: Iterable[int], jobs: int | None = None, progress: ProgressFn | None = None
) -> pd.DataFrame:
    """``sweep`` over numbers of servers, everything else as in ``base`` (FAST'08 Fig. 4)."""
    return sweep([base.with_servers(n) for n in servers], jobs=jobs, progress=progress)


def run_points(
    scenarios: Iterable[Scenario], jobs: int | None = None, progress: TickFn | None = None,
    recordings: list[Recording] | None = None,
    reduce: Callable[[SimResult], SimResult] | None = None,
) -> list[SimResult]:
    """Like ``sweep`` but returns the ``SimResult`` objects (input order); ``progress(done,
    total, simulated_s)`` is called as points finish and every ``TICK_SECONDS`` while they
    run, ``done`` counting the running points' fractions (``cli.progress.point_progress``).

    ``recordings[i]`` names the files point i writes (``Recording.for_point``); ``reduce``,
    applied to each result in its worker as soon as it is done, keeps only what is needed
    of it (a point's port series can be hundreds of MB)."""
    points = [_as_scenario(s) for s in scenarios]
    jobs = available_cores() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError("jobs", jobs, "a whole number of parallel jobs, at least 1")
    if recordings is not None and len(recordings) != len(points):
        raise ValueError("one Recording per scenario")
    return _run_all(points, jobs, progress, recordings or [None] * len(points), reduce)


def available_cores() -> int:
    """Cores this process may run on (respects taskset/cgroup affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _run_all(points: list[Scenario], jobs: int, progress: TickFn | None,
             recordings: list[Recording | None], reduce: Callable[[SimResult], SimResult] | None = None
             ) -> list[SimResult]:
    """Run every point in worker threads (the core releases the GIL) while the main thread
    waits in short slices, so Ctrl-C reaches it at once; it then asks the core to stop
    (``_native.cancel``: every running point stops within a few thousand events and writes
    nothing) and re-raises KeyboardInterrupt."""
    from . import _native

    total = len(points)
    _native.clear_cancel()
    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, total)), thread_name_prefix="incastlab-sim")
    try:
        probes = [_native.Progress() for _ in points]
        def point(p: Scenario, rec: Recording | None, probe: Any) -> SimResult:
            r = simulate(p, recording=rec, progress_probe=probe)
            return reduce(r) if reduce is not None else r

        futures = [pool.submit(point, p, rec, probe) for p, rec, probe in zip(points, recordings, probes)]
        pending, done, last_tick = set(futures), 0, time.monotonic()
        while pending:
            finished, pending = wait(pending, timeout=WAIT_SECONDS, return_when=FIRST_COMPLETED)
            for f in finished:
                f.result()  # the first failure stops the run
            done += len(finished)
            if progress and (finished or time.monotonic() - last_tick >= TICK_SECONDS):
                running = [(p, probe) for f, p, probe in zip(futures, points, probes) if f in pending and f.running()]
                partial = sum(_fraction_done(p, probe) for p, probe in running)
                simulated = max((probe.sim_seconds for _, probe in running), default=None)
                progress(done + partial, total, simulated)
                last_tick = time.monotonic()
        return [f.result() for f in futures]  # input order
    except BaseException:
        _native.cancel()  # Ctrl-C or a failed point: stop the points still running
        raise
    finally:
        # drop the points not started yet instead of running them all
        pool.shutdown(wait=True, cancel_futures=True)
        _native.clear_cancel()


def _fraction_done(s: Scenario, probe: Any) -> float:
    """How much of a running point is done: blocks over the block count, or simulated
    time over the duration; below 1 until the point has returned. One-shot flows run
    until delivered, an end not known ahead: counted only once returned."""
    if s.blocks is not None:
        fraction = probe.blocks / s.blocks
    elif s.duration is not None:
        fraction = probe.sim_seconds / s.duration
    else:
        fraction = 0.0
    return min(fraction, 0.99)


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
