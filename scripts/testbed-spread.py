#!/usr/bin/env python3
"""How far the testbed agrees with itself, and the simulator with the testbed's median, over
several runs of the same `incastlab validate --json` grid:

    python scripts/testbed-spread.py run1.jsonl run2.jsonl ...

Rows are grouped into points by the testbed's congestion control, buffer, rate, blocks,
block size and server count. Per point: the testbed's runs (goodput Mbit/s and timeouts,
median and range), the share of ordered pairs of those runs that pass issue 27's bars
against each other (goodput within 25 %, timeouts within 2x, two or fewer on both sides
passing), and the simulator's think-time result (the seeds' median where `--sim-seeds` gave
one, the mean over the point's rows, as the build that wrote them computed it) judged by the
same bars against the testbed's median. Rows written by different builds mix their
simulators: score one build on all of them by running them through `incastlab validate
--rerun FILE ... --json` first. `--json` prints the points as JSON.

Where incast starts one 20-block run is one draw of a wide distribution (docs/testbed.md,
"The simulator's spread over seeds"): a point whose testbed runs agree with each other in
only a third of pairs cannot be held to the bars run by run, by any model. The pair share
says how much of a grid's misses the testbed's own spread explains; the median comparison
is the one the spread does not blur."""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
from collections import defaultdict

GOODPUT_BAR = 0.25  # issue 27: goodput within 25 %
TIMEOUT_BAR = 2.0  # ... and timeouts within 2x
FEW_TIMEOUTS = 2  # two or fewer on both sides pass: 2 against 0 is not a 2x gap


class BadInput(Exception):
    """A file that is not validate's JSON lines, named with the line."""


def within_bars(goodput: float, timeouts: float, ref_goodput: float, ref_timeouts: float) -> bool:
    """Issue 27's bars: ``goodput`` within 25 % of ``ref_goodput`` and ``timeouts`` within 2x
    of ``ref_timeouts`` (both at most two passes)."""
    g = abs(goodput - ref_goodput) <= GOODPUT_BAR * ref_goodput
    if timeouts <= FEW_TIMEOUTS and ref_timeouts <= FEW_TIMEOUTS:
        return g
    return g and ref_timeouts > 0 and 1 / TIMEOUT_BAR <= timeouts / ref_timeouts <= TIMEOUT_BAR


def point_of(row: dict) -> tuple:
    tb = row["testbed"]
    return (tb["congestion"], tb["buffer_bytes"], tb["rate_bps"], tb["blocks"], tb["block_bytes"], tb["servers"])


def simulator_of(row: dict) -> tuple[float, float] | None:
    """The think-time simulation's goodput and timeouts: the seeds' median where there are
    seeds, else the one run; None without --measured-think-times."""
    seeds = row.get("think_seeds")
    if seeds:
        return seeds["goodput_mbps_p50"], seeds["timeouts_p50"]
    sim = row.get("simulator_think")
    return (sim["goodput_mbps"], sim["timeouts"]) if sim else None


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        if os.path.exists(path) and not os.path.isfile(path):  # a FIFO or device would block or never end
            raise BadInput(f"{path}: not a regular file")
        try:
            with open(path) as f:
                lines = f.readlines()
        except OSError as e:
            raise BadInput(f"{path}: {e.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                point_of(row)
                row["goodput_mbps_testbed"] + row["timeouts_testbed"]
            except (ValueError, KeyError, TypeError):
                raise BadInput(f"{path}:{n}: not a row of incastlab validate --json") from None
            rows.append(row)
    if not rows:
        raise BadInput("no rows in " + ", ".join(paths))
    return rows


def spread(rows: list[dict]) -> list[dict]:
    """One record per point, in point order."""
    by_point: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by_point[point_of(r)].append(r)
    out = []
    for point in sorted(by_point):
        rs = by_point[point]
        runs = [(r["goodput_mbps_testbed"], r["timeouts_testbed"]) for r in rs]
        pairs = list(itertools.permutations(runs, 2))
        rec = {
            "cc": point[0], "buffer_bytes": point[1], "rate_bps": point[2], "blocks": point[3],
            "block_bytes": point[4], "servers": point[5], "runs": len(runs),
            "testbed_goodput_p50": statistics.median(g for g, _ in runs),
            "testbed_goodput_range": [min(g for g, _ in runs), max(g for g, _ in runs)],
            "testbed_timeouts_p50": statistics.median(t for _, t in runs),
            "testbed_timeouts_range": [min(t for _, t in runs), max(t for _, t in runs)],
            "testbed_pairs_within": (sum(within_bars(a[0], a[1], b[0], b[1]) for a, b in pairs) / len(pairs)
                                     if pairs else None),
        }
        sims = [s for s in map(simulator_of, rs) if s is not None]
        if sims:
            rec["sim_goodput"] = statistics.mean(g for g, _ in sims)
            rec["sim_timeouts"] = statistics.mean(t for _, t in sims)
            rec["sim_within_testbed_median"] = within_bars(rec["sim_goodput"], rec["sim_timeouts"],
                                                           rec["testbed_goodput_p50"], rec["testbed_timeouts_p50"])
        out.append(rec)
    return out


def render(points: list[dict]) -> str:
    lines = ["| point | testbed runs | goodput p50 [range] | timeouts p50 [range] | testbed pairs within "
             "| simulator | within the testbed's median |", "|---|---|---|---|---|---|---|"]
    pair_ok = pair_n = sim_ok = sim_n = 0
    for p in points:
        name = f"{p['cc']} {p['buffer_bytes'] // 1024} KiB, {p['servers']}"
        pw = p["testbed_pairs_within"]
        if pw is not None:
            k = p["runs"] * (p["runs"] - 1)
            pair_ok += round(pw * k)
            pair_n += k
        sim = (f"{p['sim_goodput']:.1f} / {p['sim_timeouts']:.1f}" if "sim_goodput" in p else "-")
        within = {True: "yes", False: "no"}.get(p.get("sim_within_testbed_median"), "-")
        if "sim_within_testbed_median" in p:
            sim_n += 1
            sim_ok += p["sim_within_testbed_median"]
        g, t = p["testbed_goodput_range"], p["testbed_timeouts_range"]
        lines.append(f"| {name} | {p['runs']} | {p['testbed_goodput_p50']:.1f} [{g[0]:.0f}-{g[1]:.0f}] | "
                     f"{p['testbed_timeouts_p50']:g} [{t[0]}-{t[1]}] | "
                     f"{'-' if pw is None else f'{pw:.2f}'} | {sim} | {within} |")
    if pair_n:
        lines.append(f"\ntestbed run pairs within the bars: {pair_ok} of {pair_n} ({pair_ok / pair_n:.3f})")
    if sim_n:
        lines.append(f"simulator within the bars of the testbed's median: {sim_ok} of {sim_n} points")
    return "\n".join(lines)



def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    paths = [a for a in argv if a != "--json"]
    if not paths or any(a.startswith("-") for a in paths):
        print("usage: python scripts/testbed-spread.py [--json] VALIDATE.jsonl [VALIDATE.jsonl ...]", file=sys.stderr)
        return 2
    try:
        rows = read_rows(paths)
    except BadInput as e:
        print(f"testbed-spread: {e}", file=sys.stderr)
        return 2
    points = spread(rows)
    print(json.dumps(points, indent=1) if as_json else render(points))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
