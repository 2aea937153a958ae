"""``incastlab demo``: the README's main job.

Simulates the FAST'08 incast collapse (``000_315d806dde942a9f.txt`` §4.1, Fig. 4) and
two of its fixes: a bigger switch buffer (§4.3, Fig. 6) and RTOmin = 200 us (§5.2,
Fig. 13). Prints a table per configuration and a paragraph read off the numbers, and
writes ``OUT/demo.csv`` and ``OUT/demo.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..table import plural
from . import argtypes

if TYPE_CHECKING:
    import pandas as pd

DEMO_SERVERS = "1,2,3,4,6,8,12,16,24,32,48,64"
# FAST'08's 20 s of simulated time per point (§3.1). Near the edge of the collapse single
# runs are chaotic (docs/model.md, "Single runs are chaotic": 565 -> 956 -> 551 Mbps at
# 16/24/32 servers with the 256 KiB buffer), so each point is the mean of a few runs whose
# servers' think times differ, as `reproduce --seeds` draws them; 3 x 36 points take 54 s
# of CPU time, 24-46 s of wall time on this 2-core machine at load 2-3 (191 s at load
# 8-15; docs/simulate.md, "incastlab demo"), inside the minute the demo may take.
DEMO_DURATION = "20s"
DEMO_SEEDS = 3

# (key, label, Scenario changes from FAST'08 as ns-2 ran it: the core's preset fast08,
# docs/model.md, "The ns-2 reading of FAST'08")
CONFIGS: list[tuple[str, str, dict]] = [
    ("fast08", "FAST'08 default: 32KiB buffer, RTOmin 200ms", {}),
    ("big_buffer", "bigger buffer: 256KiB, RTOmin 200ms", {"buffer": "256KiB"}),
    # §5.2: RTOmin 200 us "requires a TCP clock granularity of 100us"
    ("rto_200us", "RTOmin 200us, 32KiB buffer", {"rto_min": "200us", "timer_granularity": "100us"}),
]
# The table's column for each configuration (the plot's legend gives the labels above).
COLUMNS = {"fast08": "FAST'08 default", "big_buffer": "256KiB buffer", "rto_200us": "RTOmin 200us"}

# Goodput below this share of the one-server goodput counts as collapsed (FAST'08 §4.1
# calls an order-of-magnitude drop a collapse; half is where it visibly starts).
COLLAPSE_SHARE = 0.5
# What the explanation reads of each point: the mean over its runs.
MEAN_COLUMNS = ("goodput_mbps", "blocks", "timeouts", "drops")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo",
        help="simulate the FAST'08 incast collapse and two fixes; table, explanation, plot",
        description="Sweep the number of servers for the FAST'08 default (32 KiB buffer, RTOmin 200 ms), "
        "a bigger buffer (256 KiB) and RTOmin 200 us, a few runs per point; print the means with their "
        "spread and an explanation; write OUT/demo.csv (every run) and OUT/demo.png (means, min-max bands).",
    )
    p.add_argument("--out", default="out", metavar="DIR", help="directory for demo.csv and demo.png (default out)")
    p.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=1 << 20),
                   default=DEMO_SERVERS, metavar="N[,N...]", help=f"numbers of servers (default {DEMO_SERVERS})")
    p.add_argument("--duration", default=DEMO_DURATION, metavar="TIME",
                   help=f"simulated time per point (default {DEMO_DURATION}, as in FAST'08 §3.1)")
    p.add_argument("--seeds", type=argtypes.positive_int("--seeds", minimum=1, maximum=100), default=DEMO_SEEDS,
                   metavar="K", help=f"runs per point, differing in the servers' think time (U(0, 3us) per block, "
                   f"as reproduce --seeds draws it); 1: one run without think time, as `incastlab simulate "
                   f"--preset fast08` gives it (default {DEMO_SEEDS})")
    p.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=1024), default=None,
                   metavar="J", help="points simulated at once (default: the available cores)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from .. import plots, sim
    from ..experiments.spec import SEED_VARIATION
    from ..outfiles import check_directory, check_writable, directory, together, write_csv
    from ..scenario import Scenario
    from .progress import point_progress
    from .scenario_args import flag_names

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError("--out", args.out, "a directory (this is a file)")
    vary = dict(SEED_VARIATION) if args.seeds > 1 else {}
    with flag_names():
        points = [(key, Scenario(**{"preset": "fast08", "buffer": "32KiB", **changes}, servers=n,
                                 duration=args.duration, seed=seed, **vary))
                  for key, _, changes in CONFIGS for n in args.servers for seed in range(1, args.seeds + 1)]
    check_directory(out, "--out")  # created when the files are written: a stopped run leaves nothing
    if out.is_dir():
        check_writable(out / "demo.csv", "--out")
        check_writable(out / "demo.png", "--out")

    duration = points[0][1].model_dump()["duration"]
    paper = "as in FAST'08 §3.1" if duration == "20s" else "FAST'08 ran 20s; --duration 20s for that"
    runs = (f"{args.seeds} runs per point (servers' think time U(0, {vary['jitter']}))" if args.seeds > 1
            else "one run per point")
    print(f"incastlab demo: {plural(len(args.servers), 'server count')} x {len(CONFIGS)} configurations, "
          f"{runs}, {duration} of simulated time each ({paper})")
    start = time.monotonic()
    results = sim.run_points([s for _, s in points], jobs=args.jobs,
                             progress=point_progress("demo", len(points), line_per_point=False))
    wall = time.monotonic() - start

    runs_of = {key: sim.to_frame([r for (k, _), r in zip(points, results) if k == key]) for key, _, _ in CONFIGS}
    frames = {key: mean_of_runs(df) for key, df in runs_of.items()}
    labels = {key: label for key, label, _ in CONFIGS}
    print()
    print(means_table(frames, labels, args.seeds))
    print()
    print(explain(frames, labels, duration, args.seeds))

    table = pd.concat([df.assign(configuration=key) for key, df in runs_of.items()], ignore_index=True)
    table = table[["configuration"] + [c for c in table.columns if c != "configuration"]]
    with directory(out, "--out"), together():  # both files or neither (docs/faults.md)
        csv_path = write_csv(table, out / "demo.csv", "--out")
        png_path = plots.goodput_vs_servers(
            {labels[k]: df for k, df in runs_of.items()}, out / "demo.png",
            title=f"TCP incast in simulation (FAST'08 Fig. 4 setting, {duration} per point)",
            link_rate_bps=points[0][1].rate,
        )
    print(f"\nwrote {csv_path} and {png_path} ({plural(len(points), 'run')} in {wall:.1f} s wall)")
    sys.stdout.flush()
    return 0


def mean_of_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per number of servers: the mean of each of ``MEAN_COLUMNS`` over its runs,
    and the goodput's ``goodput_min`` / ``goodput_max`` / ``runs``."""
    g = runs.groupby("servers", as_index=False)
    out = g[list(MEAN_COLUMNS)].mean()
    spread = g["goodput_mbps"].agg(goodput_min="min", goodput_max="max", runs="size")
    return out.merge(spread, on="servers")


def means_table(frames: dict[str, pd.DataFrame], labels: dict[str, str], seeds: int) -> str:
    """Goodput per configuration and number of servers: the mean, and its runs' min-max."""
    from ..table import render

    keys = list(frames)
    servers = frames[keys[0]]["servers"].tolist()

    def cell(df: pd.DataFrame, n: int) -> str:
        row = df[df["servers"] == n].iloc[0]
        if seeds == 1:
            return f"{row['goodput_mbps']:.0f}"
        return f"{row['goodput_mbps']:.0f} ({row['goodput_min']:.0f}-{row['goodput_max']:.0f})"

    heading = "goodput Mbps, " + (f"mean (min-max) of {seeds} runs" if seeds > 1 else "one run")
    rows = [[str(n)] + [cell(frames[k], n) for k in keys] for n in servers]
    return f"# {heading}\n" + render(["servers"] + [COLUMNS.get(k, labels[k]) for k in keys], rows)


def collapse_onset(df: pd.DataFrame) -> int | None:
    """The fewest servers whose goodput is below COLLAPSE_SHARE of the one-server run
    (or of the smallest N simulated), or None if it never collapses."""
    d = df.sort_values("servers")
    reference = d["goodput_mbps"].iloc[0]
    low = d[d["goodput_mbps"] < COLLAPSE_SHARE * reference]
    return int(low["servers"].iloc[0]) if len(low) else None


def _at(df: pd.DataFrame, n: int, field: str = "goodput_mbps"):
    return df.loc[df["servers"] == n, field].iloc[0]


def explain(frames: dict[str, pd.DataFrame], labels: dict[str, str], duration: str, seeds: int = 1) -> str:
    """One paragraph, every number in it read from the results: each point's mean over its
    ``seeds`` runs (``mean_of_runs``)."""
    base = frames["fast08"].sort_values("servers")
    n_first, n_last = int(base["servers"].iloc[0]), int(base["servers"].iloc[-1])
    g_first = base["goodput_mbps"].iloc[0]
    onset = collapse_onset(base)
    runs = "the run" if seeds == 1 else f"the runs (mean of {seeds})"
    text = []
    if onset is None:
        text.append(
            f"With the FAST'08 defaults the goodput stayed above {COLLAPSE_SHARE:.0%} of its "
            f"{g_first:.0f} Mbps at {plural(n_first, 'server')} up to {plural(n_last, 'server')}: "
            f"no collapse in this range."
        )
    else:
        after = base[base["servers"] >= onset]
        worst = after.loc[after["goodput_mbps"].idxmin()]
        factor = g_first / max(worst["goodput_mbps"], 1e-9)
        blocks, timeouts = _at(base, onset, "blocks"), _at(base, onset, "timeouts")
        per_block = f"{timeouts / blocks:.2f} per block" if blocks else "with no block completed"
        text.append(
            f"With the FAST'08 defaults (32 KiB buffer, RTOmin 200 ms) one client reading from "
            f"{plural(n_first, 'server')} gets {g_first:.0f} Mbps; goodput collapses at "
            f"{plural(onset, 'server')} ({_at(base, onset):.0f} Mbps) and falls to {worst['goodput_mbps']:.0f} "
            f"Mbps at {plural(int(worst['servers']), 'server')}, a collapse by a factor of {factor:.1f}. "
            f"At {plural(onset, 'server')} {runs} had {timeouts:.0f} retransmission timeouts ({per_block}) and "
            f"{_at(base, onset, 'drops'):.0f} drops: while a server whose window was lost waits for its "
            f"200 ms timeout, the others have finished their share and the client's link idles."
        )
    text.append(_fix_sentence(frames["big_buffer"], base, "A 256 KiB buffer (8x)", onset, n_last,
                              "the buffer absorbs a larger synchronized burst before it drops"))
    text.append(_fix_sentence(frames["rto_200us"], base, "RTOmin 200 us", onset, n_last,
                              "timeouts still happen, but each idles the link for about 200 us instead of 200 ms"))
    each = f"Each point is the mean of {seeds} runs" if seeds > 1 else "Each point is one run"
    text.append(f"({each} of {duration} of simulated time.)")
    return " ".join(text)


def _fix_sentence(fix: pd.DataFrame, base: pd.DataFrame, name: str, base_onset: int | None, n_last: int,
                  why: str) -> str:
    """What a fix does to the collapse the default shows, read from the means; where the
    default does not collapse, only what the fix delivers (there is nothing to explain)."""
    fix = fix.sort_values("servers")
    onset = collapse_onset(fix)
    g_base_last, g_fix_last = _at(base, n_last), _at(fix, n_last)
    if base_onset is None:
        collapses = f", and collapses at {plural(onset, 'server')}" if onset is not None else ""
        return (f"{name} delivers {g_fix_last:.0f} Mbps at {plural(n_last, 'server')} "
                f"({g_base_last:.0f} without){collapses}.")
    if onset is None:
        where = (f"keeps goodput above {COLLAPSE_SHARE:.0%} of the one-server goodput up to "
                 f"{plural(n_last, 'server')}")
    elif onset > base_onset:
        where = f"pushes the onset of the collapse from {base_onset} to {plural(onset, 'server')}"
    elif onset == base_onset:
        where = f"leaves the onset of the collapse at {plural(onset, 'server')}"
    else:
        where = f"brings the collapse forward from {base_onset} to {plural(onset, 'server')}"
    g_base, g_fix = _at(base, base_onset), _at(fix, base_onset)
    at_last = ("" if base_onset == n_last else
               f", and at {plural(n_last, 'server')} {g_fix_last:.0f} instead of {g_base_last:.0f} Mbps "
               f"({_ratio(g_fix_last, g_base_last)})")
    return (
        f"{name} {where}; at {plural(base_onset, 'server')} it delivers {g_fix:.0f} Mbps instead of {g_base:.0f} "
        f"({_ratio(g_fix, g_base)}){at_last}, with {_at(fix, n_last, 'timeouts'):.0f} timeouts against "
        f"{_at(base, n_last, 'timeouts'):.0f} at {plural(n_last, 'server')} in the same simulated time: {why}."
    )


def _ratio(a: float, b: float) -> str:
    if b <= 0:
        return "the default delivered nothing"
    return f"{a / b:.1f}x"
