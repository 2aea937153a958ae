"""The doctor itself: screen, search the onset, simulate the fixes, assemble the report
(the parts are listed in ``incastlab.diagnosis``; docs/doctor.md)."""

from __future__ import annotations

import time
from typing import Callable

from ..errors import UsageError
from ..sim import available_cores, run_points
from ..timesplit import TimeSplit, where_the_time_went
from .defaults import MAX_FAN_IN
from .cluster import Cluster, describe
from .evidence import distances, sweep_command
from .fixes import COSTS, candidates
from .mechanism import mechanism
from .report import DoctorReport, Evidence, RankedFix, SimPoint, Verdict
from .screen import screen
from .search import Measurer, find_onset


def search_limit(fan_in: int) -> int:
    """How far the onset is searched: twice the user's fan-in, at least 64 (FAST'08's range)."""
    return min(MAX_FAN_IN, max(64, 2 * fan_in))


def time_split_at(m: Measurer, n: int) -> TimeSplit | None:
    """Where the blocks' time went at the user's point: its seed-1 run again with the
    breakdown on (which changes no result: docs/simulate.md, "Where the time went").
    None where the core has no breakdown (a workload other than synchronized reads)."""
    (point,) = m.measure([(n, "cluster", {})])  # (cached): its length, short or full
    try:
        sc = m.scenario(n, {"time_breakdown": True}, 1, point.blocks)
    except UsageError:
        return None
    m.progress(f"where the time went: cluster@{n} again with the breakdown on")
    m.simulations += 1
    (r,) = run_points([sc], jobs=1)
    return where_the_time_went(r, over="block")


def runnable_fixes(cluster: Cluster, sc, m: Measurer) -> tuple[list, list[str]]:
    """The candidate fixes the core can run at the user's point, and a note for each it
    refuses (NCCS and OCS derive their thresholds from a BDP above 2 packets)."""
    fixes, refused = [], []
    for f in candidates(cluster, sc):
        try:
            m.scenario(cluster.fan_in, f.fields, 1)
            fixes.append(f)
        except UsageError as e:
            refused.append(f"{f.name}: not simulated ({e})")
    return fixes, refused


def diagnose(cluster: Cluster, *, jobs: int | None = None,
             progress: Callable[[str], None] | None = None) -> DoctorReport:
    t0 = time.monotonic()
    sc = screen(cluster)
    base = cluster.fields()
    m = Measurer(base, rto_min_s=float(cluster.setting("rto_min", 0.2)), jobs=jobs or min(2, available_cores()),
                 progress=progress)
    n = cluster.fan_in
    one, here = m.measure([(1, "cluster", {}), (n, "cluster", {})])
    ref = one.goodput_mbps
    onset = find_onset(m, sc.n_safe, sc.n_burst, search_limit(n))

    fixes, refused = runnable_fixes(cluster, sc, m)
    fix_points = m.measure([(n, f.key, f.fields) for f in fixes])
    ranked = sorted(zip(fixes, fix_points), key=lambda fp: (-fp[1].goodput_mbps, fp[1].block_time_p99_s))

    working = sorted((f.cost, -p.goodput_mbps, f.name) for f, p in ranked if not p.collapsed(ref))
    rto = float(cluster.setting("rto_min", 0.2))
    delack = float(cluster.setting("delayed_ack", 0) or 0)
    collapse = here.collapsed(ref)
    split = time_split_at(m, n)
    verdict = Verdict(
        collapse=collapse, fan_in=n, goodput_mbps=here.goodput_mbps, one_server_mbps=ref,
        block_time_p99_s=here.block_time_p99_s, onset=onset.onset, last_good=onset.last_good,
        searched_up_to=onset.n_max, cheapest_fix=working[0][2] if working else None,
        mechanism=mechanism(here.forensics, rto, delack, collapse),
        time_split=None if split is None else {"over": split.over, "parts": split.parts, "mean_s": split.mean_s,
                                               "rows": split.rows(), "sentence": split.sentence()})
    cluster_points = [p for p in m.points() if p.label == "cluster"]
    ranked_fixes = [RankedFix(rank=i + 1, key=f.key, name=f.name, goodput_mbps=p.goodput_mbps,
                              block_time_p99_s=p.block_time_p99_s, collapse=p.collapsed(ref), takes=f.takes,
                              setting=f.setting, side_effects=f.side_effects, cost=COSTS[f.cost],
                              sweep=sweep_command({**m.base, **f.fields}, [p]))
                    for i, (f, p) in enumerate(ranked)]
    notes = list(refused)
    if not verdict.collapse:
        notes.append(f"no collapse at {n} servers, so the fixes change little here"
                     + (f"; they matter from the onset, {onset.onset} servers (run the doctor there)"
                        if onset.onset else ""))
    if any(d.rate_bps != cluster.rate_bps for d in distances(rto, n, cluster.rate_bps)):
        notes.append("the validation runs are at other link rates than yours: read their distances as the "
                     "simulator's error in the same TCP regime, not at your rate")
    if collapse != (onset.onset is not None and n >= onset.onset):
        notes.append(f"the point at {n} servers and the onset search disagree: goodput is not monotone in "
                     "the fan-in here (chaotic near the edge; docs/model.md, 'Single runs are chaotic')")
    evidence = Evidence(
        sweep=sweep_command(m.base, cluster_points),
        points=[SimPoint(p.label, p.servers, list(p.seeds), p.goodput_mbps, p.block_time_p99_s,
                         int(p.forensics.get("timeouts", 0)), p.fields) for p in m.points()],
        screen=sc.text(),
        osada=(None if sc.osada is None else
               {k: getattr(sc.osada, k) for k in ("base_bdp_pkt", "n_min", "wnd_pkt", "q_max_tcp_packets",
                                                   "window_case", "t1_ps")}),
        validation=[d.__dict__ for d in distances(rto, n, cluster.rate_bps)])
    return DoctorReport(
        inputs=[{"name": a, "value": b, "default": c} for a, b, c in cluster.inputs()],
        stack_table=[{"item": it.what, "kernel": it.kernel, "simulator": it.simulator, "modelled": it.modelled}
                     for it in cluster.stack_table],
        verdict=verdict, fixes=ranked_fixes, evidence=evidence, simulations=m.simulations,
        wall_seconds=time.monotonic() - t0, notes=notes)


#: The keywords that make a description Riak-like (``diagnosis/riak.py``).
RIAK_KEYWORDS = ("get_rate", "reply_size", "nodes", "n_val", "r")


def doctor(*, jobs: int | None = None, progress: Callable[[str], None] | None = None, **description):
    """Diagnose a cluster described in its operator's terms (``describe``'s keywords:
    rate, rtt or cable, buffer or pool, fan_in, response, stack or this_host, rto_min,
    delayed_ack, cc). Returns a :class:`DoctorReport`; bad input raises ``incastlab.UsageError``.
    With ``get_rate`` and ``reply_size`` (and ``nodes``, ``n_val``, ``r``) the cluster is
    Riak-like and the answer a :class:`riak.RiakReport` (docs/doctor.md).

    >>> r = incastlab.doctor(rate="1Gbps", buffer="32KiB", fan_in=16, stack="fast08")  # doctest: +SKIP
    >>> r.verdict.collapse, r.verdict.onset, r.fixes[0].key                              # doctest: +SKIP
    """
    if any(description.get(k) is not None for k in RIAK_KEYWORDS):
        from .riak import describe_riak, diagnose_riak

        return diagnose_riak(describe_riak(**description), jobs=jobs, progress=progress)
    return diagnose(describe(**description), jobs=jobs, progress=progress)
