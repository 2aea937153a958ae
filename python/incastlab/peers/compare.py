"""What the differential harnesses share: a grid of points run in a peer simulator and in
incastlab, and their numbers side by side.

    python -m incastlab.peers.ns3 --servers 4,16 --duration 2s --limited-transmit on,off
    python -m incastlab.peers.ns2 --servers 4,16 --duration 2s --vary limited_transmit=on,off

A peer module (``peers.ns3``, ``peers.ns2``) describes its simulator as a ``Peer``: its
name, the numbers it reports (``Metric``), how it treats each Scenario field
(``fields.FieldMap``), and how to run it for one point (a ``RunPeer``). This module
builds the grid (``build_grid``: a ``Point`` per servers x axis values x seed, checked
for both simulators before anything runs), runs both sides in parallel (``run_grid``) and
prints each metric for incastlab, the peer and incastlab / peer, or with several seeds the
mean (min-max) of each (``render_table``, ``render_means``); a point's block counts
"agree" within ±25 %.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import EnvironmentProblem, UsageError
from ..recording import Recording
from ..scenario import Scenario
from ..sim import SimResult, available_cores, simulate
from ..table import render
from ..units import number_or_text
from . import tracediff
from .fields import FieldMap

DEFAULT_SERVERS = "4,8,16,32,64"
# "within 25 %": the bar for calling a point's block count an agreement.
AGREEMENT = 0.25


# --- a peer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A compared number: our result field (also its key in records), its table heading,
    and the peer's result column (None: counted from both simulators' traces)."""

    key: str
    heading: str
    column: str | None


# Both peers print these columns, with the same meaning (their result lines were written
# to match): blocks completed, payload goodput, RTO expirations with data outstanding and
# drops at the client's port.
METRICS = (
    Metric("blocks", "blocks", "blocks_completed"),
    Metric("goodput_mbps", "Mbps", "goodput_mbps"),
    Metric("timeouts", "timeouts", "tcp_timeouts"),
    Metric("drops", "drops", "drops_at_bottleneck"),
)
# Dropped retransmissions, from both traces (tracediff.lost_retransmits).
LOST_RETRANSMITS = Metric("lost_retransmits", "lost rtx", None)


@dataclass(frozen=True, eq=False)
class Peer:
    """A peer simulator as the comparison sees it."""

    name: str  # "ns-3": in headings, table columns and lines
    key: str  # "ns3": in record keys, trace file names and --ns3-rules
    arg_word: str  # what its command line calls its arguments: "flags", "options"
    metrics: tuple[Metric, ...]
    fields: FieldMap
    #: Its arguments for a scenario; ``UsageError`` naming a field it cannot express.
    args: Callable[[Scenario], list[str]]
    #: What the mapping keeps but the peer does differently, one line each.
    warnings: Callable[[Scenario], list[str]]

    @property
    def prog(self) -> str:
        """The name its command prints before errors and progress."""
        return f"{self.key}-compare"


# --- the peer's process ------------------------------------------------------------------


def parse_result(text: str, name: str) -> dict[str, Any]:
    """A peer's result (a header line ``N,...`` and one CSV line) as a dict, numbers as
    numbers; ``name`` is the peer's, for the error."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    try:
        at = next(i for i, ln in enumerate(lines) if ln.startswith("N,"))
        names, values = lines[at].split(","), lines[at + 1].split(",")
    except (StopIteration, IndexError):
        raise EnvironmentProblem(f"{name} printed no result line (header N,... and one CSV line)") from None
    if len(names) != len(values):
        raise EnvironmentProblem(f"{name}'s result line has {len(values)} fields for {len(names)} names")
    return {k: number_or_text(v) for k, v in zip(names, values)}


def run_process(cmd: Sequence[str], name: str) -> dict[str, Any]:
    """Run a peer once; its result line as a dict. A failure names the peer's last word
    on stderr and the command, to rerun by hand."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    said = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    if proc.returncode != 0:
        raise EnvironmentProblem(f"{name} failed (exit status {proc.returncode}: {said}): {shlex.join(cmd)}")
    try:
        return parse_result(proc.stdout, name)
    except EnvironmentProblem as e:
        raise EnvironmentProblem(f"{e} ({said}): {shlex.join(cmd)}") from None


# --- the grid ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """A grid axis besides servers: the Scenario field it sets, its table heading (lower-
    cased in trace file names), and its values as shown and as set."""

    field: str
    heading: str
    values: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Point:
    """One grid point: what both simulators run, what ours runs (``--ours``, the peer's
    rules), the peer's arguments, and the axis values that name it."""

    peer: Peer
    shared: Scenario
    ours: Scenario
    peer_args: tuple[str, ...]
    axes: tuple[Axis, ...] = ()
    shown: tuple[str, ...] = ()  # this point's value of each axis, as shown
    #: One of several seeds of the same point (the seed goes into trace file names).
    seeded: bool = False

    @property
    def identity(self) -> tuple[int, tuple[str, ...]]:
        """The point whatever its seed: what the means over seeds group by."""
        return self.shared.servers, self.shown

    @property
    def tag(self) -> str:
        """The point in file names: ``n16-lt-on``, ``n16-tcp-reno-seed2``."""
        parts = [f"n{self.shared.servers}", *(f"{a.heading.lower()}-{v}" for a, v in zip(self.axes, self.shown))]
        if self.seeded:
            parts.append(f"seed{self.shared.seed}")
        return re.sub(r"[^\w.-]", "_", "-".join(parts))


def build_grid(peer: Peer, servers: Sequence[int], axes: Sequence[Axis], shared: dict[str, Any],
               ours: dict[str, Any], with_rules: bool = False, seeds: int = 1,
               extra_args: Sequence[str] = ()) -> list[Point]:
    """Every (servers, axis values..., seed) point, checked for both simulators before any
    runs. ``ours`` (and with ``with_rules`` the peer's hard-wired rules, under it) apply to
    our side only; ``extra_args`` follow the mapped ones in the peer's arguments. With
    ``seeds`` > 1 each point runs with seeds 1..seeds, which differ only if something is
    drawn at random: the servers' think time (``jitter``) is the one draw both simulators
    make, so it must be set."""
    def point(n: int, combo: tuple[tuple[str, Any], ...], seed: int | None) -> Point:
        fields = {**shared, "seed": seed} if seed is not None else dict(shared)
        fixed = {"servers": n, **{a.field: value for a, (_, value) in zip(axes, combo)}}
        both = Scenario(**{**fields, **fixed})
        if seed is not None and not both.jitter:
            raise UsageError("--seeds", seeds, "1, or several with --set jitter=TIME (a server think time: the "
                             "only random draw both simulators make, so without it every seed is the same run)")
        args = (*peer.args(both), *extra_args)
        own = {**(peer.fields.rules(both) if with_rules else {}), **ours}
        return Point(peer, both, Scenario(**{**_merged(fields, own), **fixed}), args, tuple(axes),
                     tuple(text for text, _ in combo), seeded=seed is not None)

    seed_list = list(range(1, seeds + 1)) if seeds > 1 else [None]
    return [point(n, combo, seed) for n in servers for combo in itertools.product(*(a.values for a in axes))
            for seed in seed_list]


def _merged(shared: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """``ours`` over ``shared``; a block count for ours replaces the shared duration
    (Scenario refuses both)."""
    merged = {**shared, **ours}
    if ours.get("blocks") is not None and "duration" not in ours:
        merged.pop("duration", None)
    return merged


def parse_assignment(text: str, flag: str) -> tuple[str, str]:
    """``FIELD=VALUE`` (dashes in FIELD read as underscores) naming a Scenario field."""
    name, eq, value = text.partition("=")
    name = name.strip().lower().replace("-", "_")
    if not eq or name not in Scenario.model_fields:
        raise UsageError(flag, text, "FIELD=VALUE with FIELD one of the Scenario fields: "
                         + ", ".join(Scenario.model_fields))
    return name, value.strip()


def assignments(texts: Sequence[str], flag: str, own: dict[str, str]) -> dict[str, str]:
    """``FIELD=VALUE`` texts as a dict; ``own`` names the fields that have their own flag
    (grid axes, the run length), which ``flag`` may not set."""
    fields = dict(parse_assignment(t, flag) for t in texts)
    for name, where in own.items():
        if name in fields:
            raise UsageError(flag, f"{name}={fields[name]}", f"another field: {name} has its own flag, {where}")
    return fields


# --- running both sides ------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One point's numbers from both simulators (trace-counted metrics only when traced)."""

    point: Point
    ours: dict[str, float]
    theirs: dict[str, float]
    ours_wall_s: float
    theirs_wall_s: float
    traces: tuple[Path, Path] | None = None  # (the peer's, ours)

    def ratio(self, key: str) -> float | None:
        return ratio(self.ours.get(key), self.theirs.get(key))

    @property
    def blocks_agree(self) -> bool:
        return agrees(self.ours["blocks"], self.theirs["blocks"])


def ratio(ours: float | None, theirs: float | None) -> float | None:
    """incastlab / the peer; None when the peer's value is zero or a value is missing."""
    if ours is None or theirs is None or theirs == 0:
        return None
    return ours / theirs


def agrees(ours: float, theirs: float, within: float = AGREEMENT) -> bool:
    """Within ``within`` of the peer's value (both zero agrees)."""
    return abs(ours - theirs) <= within * abs(theirs)


# How to run the peer for a point (writing its trace if given a path): its result row,
# which has the metrics' columns and ``wall_seconds``.
RunPeer = Callable[[Point, Path | None], dict[str, Any]]
# How to run ours for a scenario (writing its trace if given a path).
RunOurs = Callable[[Scenario, Path | None], SimResult]


def run_ours(s: Scenario, events: Path | None = None) -> SimResult:
    """Simulate ``s`` in incastlab, writing its per-event trace to ``events`` if given."""
    return simulate(s, recording=Recording(events=str(events))) if events else simulate(s)


def trace_paths(p: Point, trace_dir: Path | None) -> tuple[Path, Path] | None:
    """Where a point's traces go: ``ns3-TAG.csv`` (the peer's key) and ``incastlab-TAG.csv``."""
    if trace_dir is None:
        return None
    return trace_dir / f"{p.peer.key}-{p.tag}.csv", trace_dir / f"incastlab-{p.tag}.csv"


def run_grid(points: Sequence[Point], run_peer: RunPeer, run_ours: RunOurs = run_ours, jobs: int = 1,
             trace_dir: Path | None = None, progress: Callable[[int, int], None] | None = None) -> list[Comparison]:
    """Run every point in both simulators, ``jobs`` runs at a time (threads: the peer is a
    process, ours releases the GIL); results in grid order. Traces, and so the metrics
    counted from them, only with ``trace_dir``."""
    traces = [trace_paths(p, trace_dir) for p in points]
    # the largest points first: in the peer they take longest, so the pool ends evenly
    order = sorted(range(len(points)), key=lambda i: -points[i].shared.servers)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="compare")
    failed = threading.Event()

    def guarded(side, *args):
        # set by the worker at the failure itself, so no run starts after it, however late
        # the waiting thread gets to cancel the rest (the skipped runs' None is never read:
        # the failure is raised first)
        if failed.is_set():
            return None
        try:
            return side(*args)
        except BaseException:
            failed.set()
            raise

    try:
        theirs: dict[int, Future] = {}
        for i in order:
            theirs[i] = pool.submit(guarded, _peer_side, points[i], run_peer, traces[i][0] if traces[i] else None)
        ours = {i: pool.submit(guarded, _our_side, p, run_ours, traces[i][1] if traces[i] else None)
                for i, p in enumerate(points)}
        for done, f in enumerate(as_completed([*theirs.values(), *ours.values()]), start=1):
            f.result()  # the first failure stops the grid
            if progress:
                progress(done, 2 * len(points))
        return [Comparison(p, ours[i].result()[0], theirs[i].result()[0], ours[i].result()[1],
                           theirs[i].result()[1], traces[i]) for i, p in enumerate(points)]
    finally:
        # on a failure or Ctrl-C, drop the runs not started yet instead of waiting for them
        pool.shutdown(wait=True, cancel_futures=True)


def _peer_side(p: Point, run_peer: RunPeer, trace: Path | None) -> tuple[dict[str, float], float]:
    row = run_peer(p, trace)
    numbers = {m.key: row[m.column] for m in p.peer.metrics if m.column is not None}
    return numbers | _traced(p.peer, trace), float(row["wall_seconds"])


def _our_side(p: Point, run_ours: RunOurs, trace: Path | None) -> tuple[dict[str, float], float]:
    r = run_ours(p.ours, trace)
    numbers = {m.key: r[m.key] for m in p.peer.metrics if m.column is not None}
    return numbers | _traced(p.peer, trace), float(r.wall_seconds)


def _traced(peer: Peer, trace: Path | None) -> dict[str, float]:
    if trace is None:
        return {}
    return {m.key: tracediff.lost_retransmits(trace) for m in peer.metrics if m.column is None}


# --- output ------------------------------------------------------------------------------


def _fmt(key: str, v: float | None) -> str:
    if v is None:
        return "-"
    if key == "goodput_mbps" or not float(v).is_integer():  # a mean over seeds may be fractional
        return f"{v:.1f}"
    return f"{int(v)}"


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def _metrics_of(results: Sequence[Comparison]) -> list[Metric]:
    """The peer's metrics, those counted from traces only when every point was traced."""
    return [m for m in results[0].point.peer.metrics
            if m.column is not None or all(m.key in c.theirs for c in results)]


def _heads(results: Sequence[Comparison], *before: str) -> list[str]:
    """servers, the axes, ``before``, then each metric with the peer's value and the ratio."""
    first = results[0].point
    heads = ["servers", *(a.heading for a in first.axes), *before]
    for m in _metrics_of(results):
        heads += [m.heading, first.peer.name, "ratio"]
    return heads


def render_table(results: Sequence[Comparison]) -> str:
    """One row per point of a grid (not empty): each metric for incastlab, the peer and
    incastlab / peer."""
    rows = []
    for c in results:
        row = [str(c.point.shared.servers), *c.point.shown]
        for m in _metrics_of(results):
            row += [_fmt(m.key, c.ours.get(m.key)), _fmt(m.key, c.theirs.get(m.key)), _fmt_ratio(c.ratio(m.key))]
        rows.append(row)
    return render(_heads(results), rows)


def agreement_line(results: Sequence[Comparison]) -> str:
    n = sum(c.blocks_agree for c in results)
    return f"blocks within ±{AGREEMENT:.0%} of {results[0].point.peer.name}: {n} of {len(results)} points"


def by_point(results: Sequence[Comparison]) -> dict[tuple[int, tuple[str, ...]], list[Comparison]]:
    """The runs (seeds) of each point, in grid order."""
    groups: dict[tuple[int, tuple[str, ...]], list[Comparison]] = {}
    for c in results:
        groups.setdefault(c.point.identity, []).append(c)
    return groups


def render_means(results: Sequence[Comparison]) -> tuple[str, str]:
    """Over the seeds of each point: each simulator's mean (min-max) of each metric and the
    ratio of the means; and the agreement line on mean blocks."""
    rows, agree, groups = [], 0, by_point(results)
    for (n, shown), runs in groups.items():
        row = [str(n), *shown, str(len(runs))]
        for m in _metrics_of(results):
            ours, theirs = [c.ours[m.key] for c in runs], [c.theirs[m.key] for c in runs]
            row += [_spread(m.key, ours), _spread(m.key, theirs), _fmt_ratio(ratio(_mean(ours), _mean(theirs)))]
        agree += agrees(_mean([c.ours["blocks"] for c in runs]), _mean([c.theirs["blocks"] for c in runs]))
        rows.append(row)
    name = results[0].point.peer.name
    line = f"mean blocks within ±{AGREEMENT:.0%} of {name}'s mean: {agree} of {len(groups)} points"
    return render(_heads(results, "seeds"), rows), line


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _spread(key: str, values: Sequence[float]) -> str:
    if len(values) == 1:
        return _fmt(key, values[0])
    return f"{_fmt(key, _mean(values))} ({_fmt(key, min(values))}-{_fmt(key, max(values))})"


def ours_only(points: Sequence[Point]) -> dict[str, Any]:
    """Fields where ours runs something else than the shared scenario (human units)."""
    if not points:
        return {}
    shared, own = points[0].shared.model_dump(), points[0].ours.model_dump()
    return {k: own[k] for k in own if own[k] != shared[k]}


def heading(points: Sequence[Point], where: str) -> list[str]:
    """The lines above the table: what ran (``where``: the peer's program), and how the two
    sides differ."""
    peer, first, own = points[0].peer, points[0].shared, points[0].ours
    lines = [f"# incastlab vs {peer.name} ({where}): {first.label()}, "
             f"{first.model_dump()['duration']} simulated per point",
             f"# {peer.name} {peer.arg_word} (first point): {' '.join(points[0].peer_args)}"]
    extra = ours_only(points)
    if extra:
        lines.append("# incastlab only: " + ", ".join(f"{k}={v}" for k, v in extra.items()))
    rules = peer.fields.rules(first)
    apart = [f"{k}={_effective(own, k)} ({peer.name}: {v})" for k, v in rules.items() if _effective(own, k) != v]
    if apart:
        lines.append(f"# incastlab's rules where {peer.name} hard-wires others: " + ", ".join(apart)
                     + f" (--{peer.key}-rules to match)")
    else:
        lines.append(f"# incastlab follows the rules {peer.name} hard-wires: "
                     + ", ".join(f"{k}={v}" for k, v in rules.items()))
    lines += [f"# note: {w}" for w in peer.warnings(first)]
    lines.append(f"# each metric: incastlab, {peer.name}, incastlab/{peer.name}")
    return lines


def _effective(s: Scenario, name: str) -> Any:
    """A field's value as our model reads it (an unset buffer admission follows
    buffer_packets)."""
    return s.admission() if name == "buffer_admission" else getattr(s, name)


def _coordinates(p: Point) -> dict[str, Any]:
    """servers and each axis's field, in human units."""
    shown = p.shared.model_dump()
    return {"servers": p.shared.servers, **{a.field: shown[a.field] for a in p.axes}}


def to_record(c: Comparison) -> dict[str, Any]:
    """One point as the JSON object ``--json`` prints."""
    key = c.point.peer.key
    rec: dict[str, Any] = {
        **_coordinates(c.point),
        "incastlab": c.ours,
        key: c.theirs,
        "ratio": {k: c.ratio(k) for k in c.theirs},
        "blocks_within_25pct": c.blocks_agree,
        "incastlab_wall_seconds": c.ours_wall_s,
        f"{key}_wall_seconds": c.theirs_wall_s,
        f"{key}_args": list(c.point.peer_args),
        "incastlab_only": ours_only([c.point]),
    }
    if c.traces:
        rec["traces"] = {key: str(c.traces[0]), "incastlab": str(c.traces[1])}
    return rec


def to_flat(c: Comparison) -> dict[str, Any]:
    """One point as a CSV row."""
    key = c.point.peer.key
    row = _coordinates(c.point)
    for k in c.theirs:
        row |= {f"{k}_incastlab": c.ours.get(k), f"{k}_{key}": c.theirs[k], f"{k}_ratio": c.ratio(k)}
    return row | {"incastlab_wall_seconds": c.ours_wall_s, f"{key}_wall_seconds": c.theirs_wall_s}


def print_results(results: Sequence[Comparison], where: str, as_json: bool) -> None:
    """JSON records (the agreement line on stderr), or the heading and the table: per run,
    or with several seeds their means."""
    if as_json:
        for c in results:
            print(json.dumps(to_record(c)))
        print(agreement_line(results), file=sys.stderr)
        return
    print("\n".join(heading([c.point for c in results], where)))
    if len(by_point(results)) < len(results):
        table, line = render_means(results)
        print("# mean (min-max) over the seeds")
        print(table)
        print(line)
        return
    print(render_table(results))
    print(agreement_line(results))


# --- command line ------------------------------------------------------------------------

AddArguments = Callable[[argparse._ArgumentGroup], None]


def build_parser(peer: Peer, description: str, add_axes: AddArguments, add_locations: AddArguments,
                 example_tag: str) -> argparse.ArgumentParser:
    """The options every harness has; ``add_axes`` adds the peer's grid axes (after
    --servers), ``add_locations`` where its program is (after --jobs)."""
    from ..cli import argtypes
    from ..cli.main import ArgumentParser  # one-line usage errors, exit status 2

    p = ArgumentParser(prog=f"python -m incastlab.peers.{peer.key}", description=description)
    g = p.add_argument_group("grid")
    g.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=4096),
                   default=DEFAULT_SERVERS, metavar="N[,N...]", help=f"numbers of servers (default {DEFAULT_SERVERS})")
    add_axes(g)
    g.add_argument("--duration", metavar="TIME", default=None,
                   help="simulated time per point (default 20s, FAST'08 §3.1)")
    g.add_argument("--set", dest="shared", action="append", default=[], metavar="FIELD=VALUE",
                   help=f"set a Scenario field for both simulators (refused if {peer.name} cannot express it); "
                        "repeatable")
    g.add_argument("--ours", action="append", default=[], metavar="FIELD=VALUE",
                   help=f"set a Scenario field for incastlab only, e.g. tcp_rules={peer.key}; repeatable")
    g.add_argument("--seeds", type=argtypes.positive_int("--seeds", minimum=1, maximum=1000), default=1,
                   metavar="K", help="run each point with seeds 1..K in both simulators and compare the means "
                                     "(needs --set jitter=TIME: the only random draw both make); default 1")
    g.add_argument(f"--{peer.key}-rules", dest="with_rules", action="store_true",
                   help=f"run incastlab with the rules {peer.name} hard-wires ("
                        + ", ".join(peer.fields.hard_wired) + "); --ours wins over it")
    r = p.add_argument_group("running")
    r.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=256), default=None, metavar="J",
                   help="runs at once (default: the available cores)")
    add_locations(r)
    r.add_argument("--lost-retransmits", action="store_true",
                   help=f"trace both simulators and count dropped retransmissions (slower in {peer.name})")
    r.add_argument("--trace-dir", metavar="DIR", default=None,
                   help=f"keep both per-event traces there ({peer.key}-{example_tag}.csv, "
                        f"incastlab-{example_tag}.csv; compare with python -m incastlab.peers.tracediff); "
                        "implies --lost-retransmits")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="one JSON object per point")
    o.add_argument("--csv", metavar="FILE", help="write one row per point as CSV")
    return p


def _trace_dir(text: str | None) -> Path | None:
    if text is None:
        return None
    d = Path(text)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("--trace-dir", text, f"a directory we can create ({e.strerror})") from None
    if not os.access(d, os.W_OK):
        raise UsageError("--trace-dir", text, "a writable directory")
    return d


# Finds the peer's program (installing or building it if need be): how to run it for a
# point, and where it is (for the heading).
Locate = Callable[[], tuple[RunPeer, str]]


def run(args: argparse.Namespace, points: Sequence[Point], locate: Locate) -> int:
    """Check the outputs, find the peer, run the grid and print it (``build_parser``'s
    options in ``args``)."""
    from ..cli.progress import point_progress
    from ..outfiles import check_writable, write_csv

    if args.csv:
        check_writable(args.csv, "--csv")
    trace_dir = _trace_dir(args.trace_dir)
    run_peer, where = locate()  # after every refusal: it may install or build the peer
    progress = point_progress(points[0].peer.prog, 2 * len(points))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"incastlab-{points[0].peer.key}-") as scratch:
        traced = trace_dir or (Path(scratch) if args.lost_retransmits else None)
        results = run_grid(points, run_peer, run_ours, args.jobs or available_cores(), traced, progress)
        if trace_dir is None:  # the traces vanish with the scratch directory
            results = [replace(c, traces=None) for c in results]
    print_results(results, where, args.json)
    if args.csv:
        import pandas as pd

        write_csv(pd.DataFrame([to_flat(c) for c in results]), args.csv)
    print(f"{len(points)} points in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


def main(prog: str, parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int],
         argv: list[str] | None) -> int:
    """Parse ``argv`` and ``run``; a usage or environment problem is one line and exit
    status 2."""
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (UsageError, EnvironmentProblem) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
