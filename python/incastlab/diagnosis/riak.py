"""A Riak-like cluster: a get rate and a reply size instead of a fan-in and a response.

The operator of seed 003 (Fritchie, ``003_a133663d5dbcfa75.txt``) does not know a fan-in;
they know their cluster: N nodes, each coordinating gets at some rate, each get asking
n_val replicas (Riak's N, typically 3) and completing at r replies (Riak's R, a quorum of
N: 2), replies of some size. The doctor models exactly that with the simulator's Riak
workload (``workload="riak"``, crates/sim/src/app/riak.rs: Poisson gets at every node,
replicas chosen uniformly; ``riak_transport=per_pair``, one persistent connection per
replica -> coordinator pair, issue 26) and answers the same questions: collapse at your get
rate or not, the get rate where it starts, the fixes ranked at your rate.

**The collapse rule for gets** (the sync-read rule, half of one server's goodput, has no
meaning here: an open-loop cluster delivers what is asked of it until its links saturate,
while the harm the blog describes is gets that wait for a retransmission timer). A point
*collapses* when its **p99 get latency is at least** ``max(RTOmin / 2, 10 x a lone get's
time)``, a lone get's time being its n_val replies over the coordinator's link plus one
RTT. At a 200 ms RTOmin that is 100 ms: nothing else in one datacenter makes a get that
slow, so one get in a hundred waited on a timer. The 10x floor keeps the rule meaningful
for stacks whose RTOmin is near a get's own time (microsecond timers). The threshold is the
cluster's and stays fixed while the fixes are ranked (a fix lowering RTOmin does not lower
the bar). Fixes are ranked by p99 get latency, then goodput.

**Onset** is the smallest get rate on ``LOAD_GRID`` (utilizations of a coordinator's link
by its own gets' replies, 5-90 %) whose point collapses, found by bisection from your
point, two probes a round (one per core), assuming the p99 grows with the load. Near the
edge one seed's p99 is not monotone (whether one get in a hundred waited out a timeout is
decided by a few timeouts; docs/doctor.md's Riak case), and the report says so when your
point and the onset disagree. **A point** runs ``point_seconds``, one length for
the cluster: at least five RTOmin and 200 gets per node at your rate, within
``MAX_POINT_BYTES`` of replies at the grid's top load; seed 1.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from .. import units
from ..errors import UsageError
from ..timesplit import TimeSplit, where_the_time_went
from .cluster import Cluster, describe
from .fixes import COSTS, candidates
from .mechanism import CATEGORIES
from .report import _ms, cluster_line
from .screen import screen

#: Riak's defaults (Riak docs, "Replication Properties": n_val 3, r quorum 2) and the
#: blog's "Riak cluster of 20 machines".
RIAK_DEFAULTS = {"nodes": (20, "the blog's illustration: 'your Riak cluster of 20 machines'"),
                 "n_val": (3, "Riak's default N (replicas per key)"),
                 "r": (2, "Riak's default R (a quorum of N = 3)")}
MAX_NODES = 256
#: Utilization of a coordinator's link by the replies to its own gets, the onset grid.
LOAD_GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9)
RTO_SHARE = 0.5            # p99 at or above this share of RTOmin: a get waited on a timer
LONE_GET_MULTIPLE = 10     # ... and at least this many lone gets' time
RTO_SPAN = 5               # a point lasts at least this many RTOmin
MIN_GETS_PER_NODE = 200    # ... and this many gets per node (a p99 over 200 x nodes gets)
MAX_POINT_BYTES = 2 << 30  # ... within this many reply bytes in the whole cluster at the top load
#: Fixes that apply to gets (serialization and OCS schedule a synchronized read's servers).
RIAK_FIXES = ("rto_min", "dctcp", "buffer", "rwnd")


@dataclass(frozen=True)
class RiakCluster:
    """A described Riak-like cluster: the links, switch and stack of ``base`` (a Cluster
    with fan_in = n_val and response = the reply size, for the screen and the fixes)."""

    base: Cluster
    nodes: int
    n_val: int
    r: int
    get_rate: float              # gets each node coordinates per second
    reply_bytes: int
    defaulted: tuple = ()

    def utilization(self, get_rate: float | None = None) -> float:
        g = self.get_rate if get_rate is None else get_rate
        return g * self.n_val * self.reply_bytes * 8 / self.base.rate_bps

    def rate_at(self, utilization: float) -> float:
        return utilization * self.base.rate_bps / (8 * self.n_val * self.reply_bytes)

    @property
    def rto_min_s(self) -> float:
        return float(self.base.setting("rto_min", 0.2))

    def lone_get_s(self) -> float:
        return self.n_val * self.reply_bytes * 8 / self.base.rate_bps + self.base.rtt_s

    def threshold_s(self) -> float:
        return max(RTO_SHARE * self.rto_min_s, LONE_GET_MULTIPLE * self.lone_get_s())

    def fields(self, get_rate: float) -> dict[str, Any]:
        f = self.base.fields()
        f.pop("sru", None)
        f.update(workload="riak", servers=self.nodes, replicas=self.n_val, read_quorum=self.r,
                 reply_bytes=self.reply_bytes, get_rate=_round_rate(get_rate), riak_transport="per_pair")
        return f

    def point_seconds(self) -> float:
        """One length for every point of this cluster (so one sweep reproduces them): RTO_SPAN
        RTOmin and MIN_GETS_PER_NODE gets at your rate, within MAX_POINT_BYTES of replies at
        the grid's top load (the most any point of the search carries)."""
        want = max(RTO_SPAN * self.rto_min_s, MIN_GETS_PER_NODE / self.get_rate)
        top = max(self.get_rate, self.rate_at(LOAD_GRID[-1]))
        per_s = self.nodes * top * self.n_val * self.reply_bytes
        return round(max(0.05, min(want, MAX_POINT_BYTES / per_s)), 3)

    def inputs(self) -> list[tuple[str, str, bool]]:
        rows = [r for r in self.base.inputs() if r[0] not in ("fan-in", "response per server")]
        return rows + [("nodes", str(self.nodes), "nodes" in self.defaulted),
                       ("n_val (replicas a get asks)", str(self.n_val), "n_val" in self.defaulted),
                       ("r (replies a get waits for)", str(self.r), "r" in self.defaulted),
                       ("get rate per node", f"{self.get_rate:g}/s ({self.utilization():.0%} of a node's link "
                                             "in replies)", False),
                       ("reply size", units.format_size(self.reply_bytes), False)]


def _round_rate(g: float) -> float:
    return float(f"{g:.4g}")


def parse_get_rate(text: Any, param: str) -> float:
    allowed = "gets per second each node coordinates, e.g. 125 or 125/s (0.001 to 10000000)"
    s = str(text).strip()
    if s.endswith("/s"):
        s = s[:-2]
    try:
        g = float(s)
    except ValueError:
        raise UsageError(param, text, allowed) from None
    if not (g == g and 0.001 <= g <= 1e7):
        raise UsageError(param, text, allowed)
    return g


def _whole(text: Any, param: str, lo: int, hi: int, what: str) -> int:
    try:
        n = int(str(text))
    except ValueError:
        raise UsageError(param, text, f"{what}: a whole number from {lo} to {hi}") from None
    if not lo <= n <= hi:
        raise UsageError(param, text, f"{what}: a whole number from {lo} to {hi}")
    return n


def describe_riak(*, get_rate: Any = None, reply_size: Any = None, nodes: Any = None, n_val: Any = None,
                  r: Any = None, cli: bool = False, **rest) -> RiakCluster:
    """Parse a Riak-like description (``describe``'s link, switch and stack keywords, plus
    these); a bad or missing value raises UsageError naming it."""
    name = (lambda p: "--" + p.replace("_", "-")) if cli else (lambda p: p)  # noqa: E731
    if get_rate is None:
        raise UsageError(name("get_rate"), None, "gets per second each node coordinates (required with "
                         f"{name('reply_size')}: a Riak-like cluster is described by both)")
    if reply_size is None:
        raise UsageError(name("reply_size"), None, "the bytes one replica returns per get, e.g. 100KB (required "
                         f"with {name('get_rate')})")
    for k in ("fan_in", "response"):
        if rest.get(k) is not None:
            raise UsageError(name(k), rest[k], f"no {name(k)} with {name('get_rate')}: a get's fan-in is "
                             f"{name('n_val')} and its response {name('reply_size')}")
    g = parse_get_rate(get_rate, name("get_rate"))
    reply = units.parse_size(reply_size, name("reply_size"))
    if not 1 <= reply <= 2**30:
        raise UsageError(name("reply_size"), reply_size, "1B to 1GiB per reply")
    defaulted = tuple(k for k, v in (("nodes", nodes), ("n_val", n_val), ("r", r)) if v is None)
    n_nodes = _whole(RIAK_DEFAULTS["nodes"][0] if nodes is None else nodes, name("nodes"), 2, MAX_NODES, "nodes")
    nv = _whole(RIAK_DEFAULTS["n_val"][0] if n_val is None else n_val, name("n_val"), 1, min(64, n_nodes - 1),
                f"replicas a get asks, below {name('nodes')} ({n_nodes})")
    rq = _whole(min(RIAK_DEFAULTS["r"][0], nv) if r is None else r, name("r"), 1, nv,
                f"replies a get waits for, at most {name('n_val')} ({nv})")
    rest = {k: v for k, v in rest.items() if k not in ("fan_in", "response")}
    base = describe(fan_in=nv, response=reply, cli=cli, **rest)
    base = replace(base, defaulted=tuple(k for k in base.defaulted if k not in ("fan_in", "response")))
    rc = RiakCluster(base=base, nodes=n_nodes, n_val=nv, r=rq, get_rate=g, reply_bytes=reply, defaulted=defaulted)
    if rc.utilization() > 1.0:
        raise UsageError(name("get_rate"), get_rate, f"a load a node's link can carry: {g:g} gets/s x {nv} replies "
                         f"x {units.format_size(reply)} is {rc.utilization():.0%} of {units.format_rate(base.rate_bps)}"
                         f" (at most {rc.rate_at(1.0):.4g}/s)")
    return rc


# ---- the simulations ---------------------------------------------------------------------

@dataclass(frozen=True)
class GetPoint:
    label: str                   # "cluster" or a fix's key
    get_rate: float
    utilization: float
    seconds: float
    gets: int
    get_p50_s: float
    get_p99_s: float
    goodput_mbps: float
    timeouts: int
    drops: int
    forensics: dict = field(default_factory=dict)
    #: where the gets' time went (``timesplit``, over the gets), if run with the breakdown on
    time_split: dict | None = None

    def collapsed(self, threshold_s: float) -> bool:
        return self.get_p99_s >= threshold_s


_FORENSICS = ("timeouts", "timeouts_full_window", "timeouts_last_packet", "timeouts_lost_retransmit",
              "timeouts_other", "delayed_ack_timeouts", "spurious_timeouts", "drops", "fast_retransmits",
              "tail_loss_probes")


class GetMeasurer:
    """Runs the cluster at get rates (with a fix's fields), caches, counts."""

    def __init__(self, rc: RiakCluster, *, jobs: int = 2, progress: Callable[[str], None] | None = None):
        self.rc, self.jobs = rc, jobs
        self.progress = progress or (lambda msg: None)
        self.cache: dict[tuple, GetPoint] = {}
        self.simulations = 0

    def scenario(self, get_rate: float, fields: dict):
        from ..scenario import Scenario

        return Scenario(duration=self.rc.point_seconds(), seed=1, **{**self.rc.fields(get_rate), **fields})

    def measure(self, wanted: list[tuple[float, str, dict]]) -> list[GetPoint]:
        from ..sim import run_points

        # (the time breakdown changes no result: a point run with it is the point without it)
        key = lambda g, f: (_round_rate(g), tuple(sorted((k, v) for k, v in f.items()  # noqa: E731
                                                         if k != "time_breakdown")))
        todo = list({key(g, f): (g, lab, f) for g, lab, f in wanted if key(g, f) not in self.cache}.values())
        if todo:
            self.progress("simulating " + ", ".join(f"{lab}@{_round_rate(g):g}/s" for g, lab, _ in todo)
                          + f" ({self.simulations} simulations so far)")
            self.simulations += len(todo)
            results = run_points([self.scenario(g, f) for g, _, f in todo], jobs=self.jobs)
            for (g, lab, f), res in zip(todo, results):
                d = res.to_dict()
                split = where_the_time_went(d, over="block")
                self.cache[key(g, f)] = GetPoint(
                    label=lab, get_rate=_round_rate(g), utilization=self.rc.utilization(g),
                    seconds=float(d["duration_s"]), gets=int(d["gets_completed"]),
                    get_p50_s=float(d["get_latency_p50_s"]), get_p99_s=float(d["get_latency_p99_s"]),
                    goodput_mbps=float(d["goodput_mbps"]), timeouts=int(d["timeouts"]), drops=int(d["drops"]),
                    forensics={k: d[k] for k in _FORENSICS if isinstance(d.get(k), (int, float))},
                    time_split=None if split is None else split_dict(split))
        return [self.cache[key(g, f)] for g, _, f in wanted]


@dataclass(frozen=True)
class GetOnset:
    onset_get_rate: float | None     # smallest grid rate that collapses; None: none up to the grid's top
    last_good_get_rate: float | None
    searched_up_to: float


def find_get_onset(m: GetMeasurer, threshold_s: float) -> GetOnset:
    """Bisection on LOAD_GRID (as get rates), two probes a round."""
    rc = m.rc
    rates = [rc.rate_at(u) for u in LOAD_GRID]
    bad = lambda i: m.measure([(rates[i], "cluster", {})])[0].collapsed(threshold_s)  # noqa: E731
    lo, hi = -1, len(rates)           # virtual ends: lo holds, hi collapses
    while hi - lo > 1:
        a = lo + max(1, (hi - lo) // 3)
        b = lo + max(a - lo + 1, 2 * (hi - lo) // 3)
        probes = [i for i in (a, b) if lo < i < hi]
        m.measure([(rates[i], "cluster", {}) for i in probes])
        for i in probes:
            if bad(i):
                hi = i
                break
            lo = i
    return GetOnset(rates[hi] if hi < len(rates) else None, rates[lo] if lo >= 0 else None, rates[-1])


def split_dict(split: TimeSplit) -> dict:
    """A split as the report carries it (as the synchronized reads' ``verdict.time_split``)."""
    return {"over": "get", "parts": split.parts, "mean_s": split.mean_s, "rows": split.rows(),
            "sentence": split.sentence()}


def split_lines(t: dict | None, get_rate: float) -> list[str]:
    """The report's lines of where the gets' time went (none without a split)."""
    if not t:
        return []
    out = [f"where the time went: {t['sentence']}",
           f"  where the time went at {get_rate:g} gets/s a node (mean over the {t['parts']} gets, each the reply "
           f"that completed it, get {_ms(t['mean_s'])}, seed 1):"]
    return out + [f"    {r['share']:>4.0%}  {_ms(r['seconds']):>10}  {r['what']}" for r in t["rows"] if r["seconds"] > 0]


def mechanism_for_gets(p: GetPoint, rto_min_s: float, nodes: int) -> str:
    """The mechanism line for gets, in mechanism.py's categories (FAST'08 §5.1)."""
    f = p.forensics
    t = int(f.get("timeouts", 0))
    per_k = 1000 * t / max(p.gets, 1)
    split = _split_clause(p.time_split)
    if t == 0:
        return (f"no retransmission timeouts; {p.drops} drops ({p.drops / p.seconds / nodes:.0f} a second a node) "
                "recovered without a timer" + split)
    counts = {k: int(f.get(k, 0)) for k in CATEGORIES}
    top = max(counts, key=counts.get)
    name, why = CATEGORIES[top]
    rest = ", ".join(f"{counts[k]} {CATEGORIES[k][0]}" for k in CATEGORIES if k != top and counts[k])
    return (f"{t} timeouts in {p.seconds:g} s ({per_k:.0f} per 1000 gets), {counts[top] / t:.0%} {name}: {why}; "
            f"each holds a reply for about RTOmin ({rto_min_s * 1e3:g} ms)" + (f"; the rest: {rest}" if rest else "")
            + f"; {p.drops} drops ({p.drops / p.seconds / nodes:.0f} a second a node)" + split)


def _split_clause(t: dict | None) -> str:
    """The mechanism's closing clause from the split: the component the mean get spent most
    on, and the timers' share (what a timeout cost the gets, not only how many there were)."""
    if not t or t["mean_s"] <= 0:
        return ""
    rows = {r["component"]: r for r in t["rows"]}
    top = max(t["rows"], key=lambda r: r["share"])
    clause = f"; the mean get ({_ms(t['mean_s'])}) went mostly to {top['what']} ({top['share']:.0%})"
    if top["component"] != "rto_wait" and rows["rto_wait"]["share"] >= 0.01:
        clause += f", {rows['rto_wait']['share']:.0%} to waiting out RTO timers"
    return clause


@dataclass(frozen=True)
class RiakFix:
    rank: int
    key: str
    name: str
    get_p99_s: float
    goodput_mbps: float
    collapse: bool
    takes: str
    setting: str
    side_effects: str
    cost: str


@dataclass(frozen=True)
class RiakReport:
    """The doctor's answer for a Riak-like cluster (``incastlab.doctor(get_rate=...)``)."""

    inputs: list[dict]
    collapse: bool
    get_rate: float
    utilization: float
    get_p50_s: float
    get_p99_s: float
    threshold_s: float
    onset_get_rate: float | None
    onset_utilization: float | None
    last_good_get_rate: float | None
    searched_up_to: float
    mechanism: str
    cheapest_fix: str | None
    fixes: list[RiakFix]
    points: list[dict]
    sweep: str
    simulations: int
    wall_seconds: float
    rule: str
    notes: list[str] = field(default_factory=list)
    #: where the time of the gets at your point went (``split_dict``; None: not split)
    time_split: dict | None = None

    def to_dict(self) -> dict:
        return {"workload": "riak", **asdict(self)}

    def text(self) -> str:
        out = ["incastlab doctor (a Riak-like cluster)", ""]
        out.append(cluster_line(self.inputs))
        out.append("")
        out.append(f"verdict: {'COLLAPSE' if self.collapse else 'no collapse'} at {self.get_rate:g} gets/s a node "
                   f"({self.utilization:.0%} of its link): p99 get {_ms(self.get_p99_s)} (p50 {_ms(self.get_p50_s)}; "
                   f"collapse from {_ms(self.threshold_s)})")
        if self.onset_get_rate is None:
            out.append(f"onset: none up to {self.searched_up_to:.4g} gets/s ({LOAD_GRID[-1]:.0%})")
        else:
            held = (f" (holds at {self.last_good_get_rate:.4g}/s)" if self.last_good_get_rate else "")
            out.append(f"onset: {self.onset_get_rate:.4g} gets/s a node ({self.onset_utilization:.0%} of the link)"
                       f"{held}")
        out.extend(split_lines(self.time_split, self.get_rate))
        out.append(f"mechanism: {self.mechanism}")
        if self.collapse:
            out.append(f"cheapest fix that works: {self.cheapest_fix or 'none of those tried'}")
        out.append(f"rule: {self.rule}")
        out.append("")
        out.append(f"fixes at {self.get_rate:g} gets/s, best first (by p99 get):")
        for f in self.fixes:
            out.append(f"  {f.rank}. {f.name}: p99 get {_ms(f.get_p99_s)}, {f.goodput_mbps:.0f} Mbps"
                       f"{'  (still collapsed)' if f.collapse else ''}")
            out.append(f"     takes: {f.takes} [{f.cost}]")
            out.append(f"     setting: {f.setting}")
            out.append(f"     side effects: {f.side_effects}")
        out.append("")
        out.append("evidence:")
        pts = sorted((p for p in self.points if p["label"] == "cluster"), key=lambda p: p["get_rate"])
        out.append("  simulated (gets/s a node: p99 get, timeouts): " + ", ".join(
            f"{p['get_rate']:.4g}: {_ms(p['get_p99_s'])}, {p['timeouts']}" for p in pts))
        out.append(f"  reproduce: {self.sweep}")
        for n in self.notes:
            out.append(f"note: {n}")
        out.append(f"({self.simulations} simulations in {self.wall_seconds:.1f} s)")
        return "\n".join(out)

    def html(self) -> str:
        import html

        return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>incastlab doctor</title></head><body>"
                f"<pre>{html.escape(self.text())}</pre></body></html>\n")


def _sweep(rc: RiakCluster, points: list[GetPoint]) -> str:
    from .evidence import _value

    parts = []
    for k, v in rc.fields(rc.get_rate).items():
        if k in ("get_rate", "servers"):
            continue
        if k == "rate":
            v = units.format_rate(int(v)).replace(" ", "")
        elif k in ("rtt", "rto_min", "delayed_ack", "timer_granularity") and isinstance(v, float):
            v = f"{round(v * 1e6, 3):g}us"
        parts.append(f"{k}={_value(v)}")
    rates = ",".join(f"{g:g}" for g in sorted({p.get_rate for p in points}))
    return (f"incastlab sweep --grid servers={rc.nodes} get_rate={rates} duration={rc.point_seconds():g}s "
            + " ".join(parts) + " --out doctor-evidence")


def diagnose_riak(rc: RiakCluster, *, jobs: int | None = None,
                  progress: Callable[[str], None] | None = None) -> RiakReport:
    from ..sim import available_cores

    t0 = time.monotonic()
    m = GetMeasurer(rc, jobs=jobs or min(2, available_cores()), progress=progress)
    thr = rc.threshold_s()
    # your point with the time breakdown on (it changes no result; the onset search reuses it)
    here = m.measure([(rc.get_rate, "cluster", {"time_breakdown": True})])[0]
    onset = find_get_onset(m, thr)
    sc = screen(rc.base)
    fixes = []
    notes = []
    for f in candidates(rc.base, sc):
        if f.key not in RIAK_FIXES:
            continue
        try:
            m.scenario(rc.get_rate, f.fields)
            fixes.append(f)
        except UsageError as e:
            notes.append(f"{f.name}: not simulated ({e})")
    fix_points = m.measure([(rc.get_rate, f.key, f.fields) for f in fixes])
    ranked = sorted(zip(fixes, fix_points), key=lambda fp: (fp[1].get_p99_s, -fp[1].goodput_mbps))
    working = sorted((f.cost, p.get_p99_s, f.name) for f, p in ranked if not p.collapsed(thr))
    collapse = here.collapsed(thr)
    mech = mechanism_for_gets(here, rc.rto_min_s, rc.nodes)
    if not collapse and here.timeouts:
        notes.append(f"no collapse by the rule, but {here.timeouts} gets' replies waited out a timeout in "
                     f"{here.seconds:g} s: incast is present below the onset (the blog's drops at 25-35 %)")
    if collapse != (onset.onset_get_rate is not None and rc.get_rate >= onset.onset_get_rate):
        notes.append("your point and the onset search disagree: the p99 get is not monotone in the load here. "
                     "Near the edge a p99 is decided by whether one get in a hundred waited out a timeout, which "
                     "one seed's few hundred timeouts do or do not reach: read the cluster as at the edge")
    rule = (f"collapse = the p99 get latency at least max({RTO_SHARE:g} x RTOmin, {LONE_GET_MULTIPLE} x a lone "
            f"get's {_ms(rc.lone_get_s())}) = {_ms(thr)}; onset = the smallest load on the grid "
            f"{', '.join(f'{u:.0%}' for u in LOAD_GRID)} of a node's link that collapses; each point "
            f"{rc.nodes} nodes, Poisson gets, one connection per replica->coordinator pair, at least "
            f"{RTO_SPAN} RTOmin and {MIN_GETS_PER_NODE} gets a node, seed 1")
    pts = m.cache.values()
    return RiakReport(
        inputs=[{"name": a, "value": b, "default": c} for a, b, c in rc.inputs()],
        collapse=collapse, get_rate=rc.get_rate, utilization=rc.utilization(), get_p50_s=here.get_p50_s,
        get_p99_s=here.get_p99_s, threshold_s=thr, onset_get_rate=onset.onset_get_rate,
        onset_utilization=(rc.utilization(onset.onset_get_rate) if onset.onset_get_rate else None),
        last_good_get_rate=onset.last_good_get_rate, searched_up_to=onset.searched_up_to, mechanism=mech,
        cheapest_fix=working[0][2] if working else None,
        fixes=[RiakFix(i + 1, f.key, f.name, p.get_p99_s, p.goodput_mbps, p.collapsed(thr), f.takes, f.setting,
                       f.side_effects, COSTS[f.cost]) for i, (f, p) in enumerate(ranked)],
        points=[asdict(p) for p in pts],
        sweep=_sweep(rc, [p for p in pts if p.label == "cluster"]),
        simulations=m.simulations, wall_seconds=time.monotonic() - t0, rule=rule, notes=notes,
        time_split=here.time_split)
