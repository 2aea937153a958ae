"""The simulations that decide: one measured point, and the onset found by bisection.

**A point** is the cluster at N servers reading ``point_blocks`` blocks (at least
``MIN_BLOCKS``, and enough that the transfer at line rate lasts ``RTO_SPAN`` minimum RTOs,
within a budget of ``MAX_POINT_BYTES``; below), the servers' think time
drawn uniformly from 0-3 us (``jitter``, as the reproductions and the ns-3 comparison do:
with equal delays single runs near the edge are chaotic, docs/model.md, "Single runs are
chaotic"), seed 1. A point whose goodput lands in the chaotic band (``CHAOS_BAND`` of the
one-server goodput, around the collapse rule's half) is run again with seeds 2 and 3 and
the seeds' mean is its value. The accuracy script's full sweep measures every point the
same way, so the search is judged, not the definition.

**Onset** (the demo's rule, ``cli/demo.py``): the smallest fan-in on ``GRID`` whose goodput
falls below half of one server's. The search starts from the screen's bracket, widens it
until its low end holds and its high end collapses, then narrows it two points at a time
(one per core) until the two ends are neighbours on the grid; then every grid point below
that crossing not yet simulated is, in one batch, because goodput is not monotone at a few
servers and the rule wants the first crossing. Where the walk up finds no crossing, the grid
points between two measured fan-ins whose goodput fell to less than half are run too
(``_scan_falls``): goodput is not monotone at many servers either.

**Why a point lasts two minimum RTOs.** With a fixed 40 blocks, a point at 10 Gbps and up
(or with small responses) transfers for a few milliseconds, shorter than one 200 ms RTO, so
one start-up timeout (a first flight lost whole, before the flows have a window to recover
with: FAST'08 §5.1) outweighs everything else and decides the point: at 10 Gbps, 4 x 256 KiB,
40 blocks last 34 ms and two timeouts took goodput from 8 to 1.4 Gbps (docs/doctor.md).
Sizing the run so its transfer at line rate lasts at least ``RTO_SPAN`` RTOmin means a
point that never times out is measured over the same span in which a timeout would cost
its whole RTO, and a single start-up timeout costs at most about a third of the point.
The RTOmin is the cluster's (its stack's, or ``--rto-min``); every fix at a fan-in runs as
many blocks as the cluster there, so the fixes are compared over the same work.

**The budget** (``MAX_POINT_BYTES``, 5 GiB) holds two 200 ms RTOmin of transfer at
100 Gbps, 5 GB of responses: every point up to 100 Gbps at the rfc and linux stacks' 200 ms
lasts its two RTOs, in the cluster's own packets (no jumbo frames assumed). Its cost is the
packets: about five events each (the hops, the ACK); a 100 Gbps point at the budget is
3.4 M packets of 1,460 B and 17-18 M events (4 x 256 KiB, 4,769 blocks: docs/doctor.md
gives its wall time), and a point that collapses moves as many packets. The earlier budget, 512 MiB, left a 100 Gbps point 43 ms long, a fifth of one RTO,
and two onsets of the accuracy run were false for it (docs/doctor.md, run 6); a longer
RTOmin (``--rto-min``) above 200 ms at 100 Gbps is capped by the budget still.

**A long point is run short first.** At 25-100 Gbps a point at the budget is 17 M events
whether or not it collapses (the packets are the cost, not the simulated time), and an
answer has 10-20 points: far beyond 10 s. So where a point's full length is beyond
``SHORT_POINT_BYTES`` (the earlier 512 MiB), the doctor runs it at that length first, and
again at its full length only if it timed out in fewer than ``START_UP_SHARE`` of its
blocks and its goodput is below the top of the chaotic band (70 % of one server's): the few
timeouts a start-up loss gives (a first flight lost whole), which a short point cannot
dilute, making it look collapsed. A point without a timeout has nothing a longer run would
dilute; one that timed out in a quarter of its blocks or more collapses at any length; one
above 70 % despite its timeouts holds, and a longer run would only raise it. The full sweep
of the accuracy script (``scripts/doctor-accuracy.py``) runs every point at its full length:
it is the definition, and the run short first is what its accuracy judges.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..scenario import Scenario
from ..sim import SimResult, run_points

#: Fan-ins the onset is searched on: steps of about sqrt(2) (1, 2, 3, 4, 6, 8, 12, ...).
GRID: tuple[int, ...] = tuple(sorted({1, 2, 3} | {b * m for b in (2, 3) for m in (2 ** k for k in range(1, 10))
                                                     if b * m <= 1024}))
COLLAPSE_SHARE = 0.5          # the demo's rule: below half of one server's goodput
CHAOS_BAND = (0.3, 0.7)       # of one server's goodput: run more seeds
EXTRA_SEEDS = (2, 3)
MIN_BLOCKS = 40
RTO_SPAN = 2                  # a point's transfer at line rate lasts at least this many RTOmin
MAX_POINT_BYTES = 5 * 2**30  # ... within this budget of response bytes per point: 2 x 200 ms at 100 Gbps (5 GB), and the rounding to whole blocks
SHORT_POINT_BYTES = 512 * 2**20  # a longer point runs this long first (module docstring)
START_UP_SHARE = 0.25            # ... and again at full length if it timed out in fewer of its blocks
JITTER = "3us"

FORENSICS = ("timeouts", "timeouts_full_window", "timeouts_last_packet", "timeouts_lost_retransmit",
             "timeouts_other", "delayed_ack_timeouts", "spurious_timeouts", "drops", "blocks",
             "fast_retransmits", "tail_loss_probes", "pause_xoff_frames")


@dataclass(frozen=True)
class Point:
    """One measured point: the mean over its seeds, forensics summed over them."""

    servers: int
    label: str                   # "cluster" or a fix's key
    blocks: int
    fields: dict                 # the scenario keywords beyond the cluster's (a fix's)
    seeds: tuple[int, ...]
    goodput_mbps: float
    goodput_per_seed: tuple[float, ...]
    block_time_p99_s: float      # mean of the seeds' p99 block times
    sim_seconds: float
    forensics: dict = field(default_factory=dict)

    def collapsed(self, reference_mbps: float) -> bool:
        return self.goodput_mbps < COLLAPSE_SHARE * reference_mbps


def _forensics(results: list[SimResult]) -> dict:
    out = {}
    for k in FORENSICS:
        vals = [r.to_dict().get(k) for r in results]
        if all(isinstance(v, (int, float)) for v in vals):
            out[k] = sum(vals)
    return out


def point_blocks(servers: int, response_bytes: int, rate_bps: float, rto_min_s: float) -> int:
    """Blocks in a point at ``servers``: at least MIN_BLOCKS; enough that the transfer at line
    rate (payload only) lasts RTO_SPAN x RTOmin; at most MAX_POINT_BYTES of responses (but
    never fewer than MIN_BLOCKS). Module docstring: why."""
    block_bytes = max(1, servers * response_bytes)
    at_line_rate_s = block_bytes * 8 / rate_bps
    wanted = math.ceil(RTO_SPAN * rto_min_s / at_line_rate_s)
    return max(MIN_BLOCKS, min(wanted, MAX_POINT_BYTES // block_bytes))


def short_blocks(servers: int, response_bytes: int, rate_bps: float, rto_min_s: float) -> int:
    """Blocks of a point's first, short run: ``point_blocks`` within SHORT_POINT_BYTES."""
    full = point_blocks(servers, response_bytes, rate_bps, rto_min_s)
    return max(MIN_BLOCKS, min(full, SHORT_POINT_BYTES // max(1, servers * response_bytes)))


def needs_full_length(timeouts: int, blocks: int) -> bool:
    """A short run whose timeouts may be start-up losses only (module docstring)."""
    return 0 < timeouts < START_UP_SHARE * blocks


class Measurer:
    """Runs points of one cluster, caches them, and counts simulations and their wall time.
    ``rto_min_s`` is the cluster's RTOmin, which sizes every point (``point_blocks``)."""

    def __init__(self, base_fields: dict[str, Any], *, rto_min_s: float, jobs: int = 2,
                 progress: Callable[[str], None] | None = None):
        self.rto_min_s = float(rto_min_s)
        self.base = dict(base_fields)
        self.base.setdefault("jitter", JITTER)
        self.jobs = jobs
        self.progress = progress or (lambda msg: None)
        self.cache: dict[tuple, Point] = {}
        self.simulations = 0
        self.reference_mbps: float | None = None

    def blocks(self, servers: int) -> int:
        """A point's full length (its definition)."""
        return point_blocks(servers, int(self.base["sru"]), float(self.base["rate"]), self.rto_min_s)

    def short_blocks(self, servers: int) -> int:
        """Its first run's length (the same below 25 Gbps or so)."""
        return short_blocks(servers, int(self.base["sru"]), float(self.base["rate"]), self.rto_min_s)

    def scenario(self, servers: int, fields: dict, seed: int, blocks: int | None = None) -> Scenario:
        return Scenario(servers=servers, blocks=blocks or self.blocks(servers), duration=None, seed=seed,
                        **{**self.base, **fields})

    def _run(self, jobs: list[tuple]) -> list[SimResult]:
        """Run (servers, fields, seed[, blocks]) points; blocks: the full length unless given."""
        self.simulations += len(jobs)
        return run_points([self.scenario(*j) for j in jobs], jobs=self.jobs)

    def measure(self, wanted: list[tuple[int, str, dict]]) -> list[Point]:
        """Points (servers, label, fields), each measured once (cached), in one batch per
        seed round so both cores stay busy."""
        key = lambda n, f: (n, tuple(sorted(f.items())))  # noqa: E731
        todo = [(n, lab, f) for n, lab, f in wanted if key(n, f) not in self.cache]
        todo = list({key(n, f): (n, lab, f) for n, lab, f in todo}.values())
        if todo:
            what = ", ".join(f"{lab}@{n}" for n, lab, f in todo)
            self.progress(f"simulating {what} ({self.simulations} simulations so far)")
            length = {key(n, f): self.short_blocks(n) for n, _, f in todo}
            first = self._run([(n, f, 1, length[key(n, f)]) for n, _, f in todo])
            if self.reference_mbps is None:
                self.reference_mbps = self._reference(todo, first)
            longer = [(i, n, f) for i, ((n, _, f), r) in enumerate(zip(todo, first))
                      if length[key(n, f)] < self.blocks(n) and needs_full_length(r.timeouts, length[key(n, f)])
                      and r.goodput_mbps < CHAOS_BAND[1] * self.reference_mbps]
            if longer:
                self.progress("a few timeouts in a short point: again at full length at "
                              + ", ".join(f"{todo[i][1]}@{n}" for i, n, _ in longer))
                again = self._run([(n, f, 1, self.blocks(n)) for _, n, f in longer])
                for (i, n, f), r in zip(longer, again):
                    first[i] = r
                    length[key(n, f)] = self.blocks(n)
                    if n == 1 and not f:
                        self.reference_mbps = r.goodput_mbps
            results = {key(n, f): [r] for (n, _, f), r in zip(todo, first)}
            lo, hi = (c * self.reference_mbps for c in CHAOS_BAND)
            chaotic = [(n, lab, f) for (n, lab, f), r in zip(todo, first) if lo <= r.goodput_mbps <= hi]
            if chaotic:
                self.progress(f"chaotic band: seeds {EXTRA_SEEDS} at " + ", ".join(f"{lab}@{n}" for n, lab, f in chaotic))
                more = self._run([(n, f, s, length[key(n, f)]) for n, _, f in chaotic for s in EXTRA_SEEDS])
                for i, (n, _, f) in enumerate(chaotic):
                    results[key(n, f)] += more[i * len(EXTRA_SEEDS):(i + 1) * len(EXTRA_SEEDS)]
            for n, lab, f in todo:
                rs = results[key(n, f)]
                g = tuple(r.goodput_mbps for r in rs)
                self.cache[key(n, f)] = Point(
                    servers=n, label=lab, blocks=length[key(n, f)], fields=dict(f), seeds=(1,) + (EXTRA_SEEDS if len(rs) > 1 else ()),
                    goodput_mbps=sum(g) / len(g), goodput_per_seed=g,
                    block_time_p99_s=sum(r.block_time_p99_s for r in rs) / len(rs),
                    sim_seconds=sum(r.sim_seconds for r in rs), forensics=_forensics(rs))
        return [self.cache[key(n, f)] for n, _, f in wanted]

    def _reference(self, todo, first) -> float:
        for (n, _, f), r in zip(todo, first):
            if n == 1 and not f:
                return r.goodput_mbps
        raise RuntimeError("the one-server reference must be in the first batch")

    def points(self) -> list[Point]:
        return sorted(self.cache.values(), key=lambda p: (p.label != "cluster", p.label, p.servers))


@dataclass(frozen=True)
class Onset:
    onset: int | None            # smallest grid fan-in below half; None: none up to n_max
    last_good: int | None        # the grid neighbour below it that holds
    n_max: int
    steps: int                   # search rounds


def _index_at_most(n: int) -> int:
    return max(i for i, g in enumerate(GRID) if g <= max(n, 1))


def find_onset(m: Measurer, n_safe: int, n_burst: int, n_max: int) -> Onset:
    """The onset on GRID (up to n_max), starting from the screen's bracket."""
    grid = [g for g in GRID if g <= n_max]
    ref = m.reference_mbps
    assert ref is not None
    bad = lambda i: m.measure([(grid[i], "cluster", {})])[0].collapsed(ref)  # noqa: E731
    lo = min(_index_at_most(max(n_safe, 1)), len(grid) - 1)
    hi = min(_index_at_most(max(n_burst, 2)) + (0 if max(n_burst, 2) in grid else 1), len(grid) - 1)
    hi = max(hi, lo + 1) if lo + 1 < len(grid) else lo
    m.measure([(grid[lo], "cluster", {}), (grid[hi], "cluster", {})])
    steps = 1
    while lo > 0 and bad(lo):            # the screen's safe end collapsed: walk down by halves
        hi, lo = lo, max(0, _index_at_most(grid[lo] // 2))
        m.measure([(grid[lo], "cluster", {})])
        steps += 1
    if not bad(hi):                       # no collapse at the burst bound: walk up by doubling
        while hi < len(grid) - 1 and not bad(hi):
            lo, hi = hi, min(len(grid) - 1, _index_at_most(grid[hi] * 2))
            m.measure([(grid[hi], "cluster", {})])
            steps += 1
        if not bad(hi):
            dip = _scan_falls(m, grid)
            if dip is None:
                return Onset(None, grid[hi], n_max, steps)
            return _scan_below(m, grid, dip, steps + 1, n_max)
    if lo == 0 and bad(0):
        return Onset(grid[0], None, n_max, steps)
    while hi - lo > 1:                    # two probes per round: one per core
        a = lo + max(1, (hi - lo) // 3)
        b = lo + max(a - lo + 1, 2 * (hi - lo) // 3)
        probes = [i for i in (a, b) if lo < i < hi]
        m.measure([(grid[i], "cluster", {}) for i in probes])
        steps += 1
        for i in probes:
            if bad(i):
                hi = i
                break
            lo = i
    return _scan_below(m, grid, hi, steps, n_max)


def _scan_falls(m: Measurer, grid: list[int]) -> int | None:
    """No crossing found: but goodput is not monotone in the fan-in at the high end either
    (a shared pool at 100 Gbps collapsed at 32 servers and held at 64: docs/doctor.md, run 7),
    so the walk up can step over a dip. Without loss, more servers never deliver less in all,
    so where the measured goodput falls to less than half from one measured fan-in to the next
    (the collapse rule's factor, against the smaller fan-in instead of one server) the losses
    bite somewhere between: every grid point between them not yet simulated is run, in one
    batch. Returns the index of the smallest collapsed grid point measured, or None."""
    ref = m.reference_mbps
    cluster = {p.servers: p for p in m.points() if p.label == "cluster" and not p.fields}
    measured = sorted(n for n in cluster if n in grid)
    between = [g for a, b in zip(measured, measured[1:])
               if cluster[b].goodput_mbps < COLLAPSE_SHARE * cluster[a].goodput_mbps
               for g in grid if a < g < b and g not in cluster]
    if between:
        m.measure([(g, "cluster", {}) for g in between])
        cluster = {p.servers: p for p in m.points() if p.label == "cluster" and not p.fields}
    return next((i for i, g in enumerate(grid) if g in cluster and cluster[g].collapsed(ref)), None)


def _scan_below(m: Measurer, grid: list[int], hi: int, steps: int, n_max: int) -> Onset:
    """The bisection finds *a* crossing; the rule wants the smallest. Goodput is not
    monotone in the fan-in at a few servers (one 200 ms timeout in a short run, or a
    delayed-ACK stall: FAST'08's drop "between 3-5 servers" on its Fig. 3(a)), so every grid point
    below the crossing that was not simulated is, in one batch (small fan-ins are cheap)."""
    ref = m.reference_mbps
    below = [(g, "cluster", {}) for g in grid[:hi]]
    points = m.measure(below)
    first = next((i for i, p in enumerate(points) if p.collapsed(ref)), None)
    if first is not None:
        hi = first
    return Onset(grid[hi], grid[hi - 1] if hi > 0 else None, n_max, steps + 1)


def timed(fn, *args, **kwargs):
    t = time.monotonic()
    out = fn(*args, **kwargs)
    return out, time.monotonic() - t
