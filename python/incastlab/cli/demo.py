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

import pandas as pd

from .. import plots, sim
from ..errors import UsageError
from ..experiments.sources import NS2_FAST08
from ..outfiles import check_directory, check_writable, directory, together, write_csv
from ..scenario import Scenario
from ..table import render_results
from . import argtypes
from .progress import point_progress
from .scenario_args import flag_names

DEMO_SERVERS = "1,2,3,4,6,8,12,16,24,32,48,64"
# FAST'08's 20 s of simulated time per point (§3.1): the 36 points took 11 s of wall time
# on this 2-core machine while others were building (`time incastlab demo`), well inside
# the minute the demo may take; --duration 5s is 4x faster.
DEMO_DURATION = "20s"

# (key, label, Scenario changes from FAST'08 as ns-2 ran it: the reproductions' reading,
# experiments/sources.py NS2_FAST08, docs/model.md)
CONFIGS: list[tuple[str, str, dict]] = [
    ("fast08", "FAST'08 default: 32KiB buffer, RTOmin 200ms", {}),
    ("big_buffer", "bigger buffer: 256KiB, RTOmin 200ms", {"buffer": "256KiB"}),
    # §5.2: RTOmin 200 us "requires a TCP clock granularity of 100us"
    ("rto_200us", "RTOmin 200us, 32KiB buffer", {"rto_min": "200us", "timer_granularity": "100us"}),
]

# Goodput below this share of the one-server goodput counts as collapsed (FAST'08 §4.1
# calls an order-of-magnitude drop a collapse; half is where it visibly starts).
COLLAPSE_SHARE = 0.5


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo",
        help="simulate the FAST'08 incast collapse and two fixes; table, explanation, plot",
        description="Sweep the number of servers for the FAST'08 default (32 KiB buffer, RTOmin 200 ms), "
        "a bigger buffer (256 KiB) and RTOmin 200 us; print tables and an explanation; write "
        "OUT/demo.csv and OUT/demo.png.",
    )
    p.add_argument("--out", default="out", metavar="DIR", help="directory for demo.csv and demo.png (default out)")
    p.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=1 << 20),
                   default=DEMO_SERVERS, metavar="N[,N...]", help=f"numbers of servers (default {DEMO_SERVERS})")
    p.add_argument("--duration", default=DEMO_DURATION, metavar="TIME",
                   help=f"simulated time per point (default {DEMO_DURATION}, as in FAST'08 §3.1)")
    p.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=1024), default=None,
                   metavar="J", help="points simulated at once (default: the available cores)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError("--out", args.out, "a directory (this is a file)")
    with flag_names():
        points = [(key, label, Scenario(**{**NS2_FAST08, "buffer": "32KiB", **changes}, servers=n,
                                        duration=args.duration))
                  for key, label, changes in CONFIGS for n in args.servers]
    check_directory(out, "--out")  # created when the files are written: a stopped run leaves nothing
    if out.is_dir():
        check_writable(out / "demo.csv", "--out")
        check_writable(out / "demo.png", "--out")

    duration = points[0][2].model_dump()["duration"]
    paper = "as in FAST'08 §3.1" if duration == "20s" else "FAST'08 ran 20s; --duration 20s for that"
    print(f"incastlab demo: {len(args.servers)} server counts x {len(CONFIGS)} configurations, "
          f"{duration} of simulated time per point ({paper})")
    start = time.monotonic()
    results = sim.run_points([s for _, _, s in points], jobs=args.jobs,
                             progress=point_progress("demo", len(points)))
    wall = time.monotonic() - start

    frames: dict[str, pd.DataFrame] = {}
    for key, label, _ in CONFIGS:
        frames[key] = sim.to_frame([r for (k, _, _), r in zip(points, results) if k == key])
    labels = {key: label for key, label, _ in CONFIGS}
    for key, df in frames.items():
        print(f"\n## {labels[key]}")
        print(render_results(df))
    print()
    print(explain(frames, labels, duration))

    table = pd.concat([df.assign(configuration=key) for key, df in frames.items()], ignore_index=True)
    table = table[["configuration"] + [c for c in table.columns if c != "configuration"]]
    with directory(out, "--out"), together():  # both files or neither (docs/faults.md)
        csv_path = write_csv(table, out / "demo.csv", "--out")
        png_path = plots.goodput_vs_servers(
            {labels[k]: df for k, df in frames.items()}, out / "demo.png",
            title=f"TCP incast in simulation (FAST'08 Fig. 4 setting, {duration} per point)",
            link_rate_bps=points[0][2].rate,
        )
    print(f"\nwrote {csv_path} and {png_path} ({len(points)} points in {wall:.1f} s wall)")
    sys.stdout.flush()
    return 0


def collapse_onset(df: pd.DataFrame) -> int | None:
    """The fewest servers whose goodput is below COLLAPSE_SHARE of the one-server run
    (or of the smallest N simulated), or None if it never collapses."""
    d = df.sort_values("servers")
    reference = d["goodput_mbps"].iloc[0]
    low = d[d["goodput_mbps"] < COLLAPSE_SHARE * reference]
    return int(low["servers"].iloc[0]) if len(low) else None


def _at(df: pd.DataFrame, n: int, field: str = "goodput_mbps"):
    return df.loc[df["servers"] == n, field].iloc[0]


def explain(frames: dict[str, pd.DataFrame], labels: dict[str, str], duration: str) -> str:
    """One paragraph, every number in it read from the results."""
    base = frames["fast08"].sort_values("servers")
    n_first, n_last = int(base["servers"].iloc[0]), int(base["servers"].iloc[-1])
    g_first = base["goodput_mbps"].iloc[0]
    onset = collapse_onset(base)
    text = []
    if onset is None:
        text.append(
            f"With the FAST'08 defaults the goodput stayed above {COLLAPSE_SHARE:.0%} of the "
            f"{n_first}-server goodput ({g_first:.0f} Mbps) up to {n_last} servers: no collapse in this range."
        )
    else:
        after = base[base["servers"] >= onset]
        worst = after.loc[after["goodput_mbps"].idxmin()]
        factor = g_first / max(worst["goodput_mbps"], 1e-9)
        blocks, timeouts = int(_at(base, onset, "blocks")), int(_at(base, onset, "timeouts"))
        per_block = f"{timeouts / blocks:.2f} per block" if blocks else "with no block completed"
        text.append(
            f"With the FAST'08 defaults (32 KiB buffer, RTOmin 200 ms) one client reading from "
            f"{n_first} server{'s' if n_first > 1 else ''} gets {g_first:.0f} Mbps; goodput collapses at "
            f"{onset} servers ({_at(base, onset):.0f} Mbps) and falls to {worst['goodput_mbps']:.0f} Mbps at "
            f"{int(worst['servers'])} servers, a collapse by a factor of {factor:.1f}. "
            f"At {onset} servers the run had {timeouts} retransmission timeouts ({per_block}) and "
            f"{int(_at(base, onset, 'drops'))} drops: while a server whose window was lost waits for its "
            f"200 ms timeout, the others have finished their share and the client's link idles."
        )
    text.append(_fix_sentence(frames["big_buffer"], base, "A 256 KiB buffer (8x)", onset, n_last,
                              "the buffer absorbs a larger synchronized burst before it drops"))
    text.append(_fix_sentence(frames["rto_200us"], base, "RTOmin 200 us", onset, n_last,
                              "timeouts still happen, but each idles the link for about 200 us instead of 200 ms"))
    text.append(f"(Each point is {duration} of simulated time.)")
    return " ".join(text)


def _fix_sentence(fix: pd.DataFrame, base: pd.DataFrame, name: str, base_onset: int | None, n_last: int,
                  why: str) -> str:
    fix = fix.sort_values("servers")
    onset = collapse_onset(fix)
    where = (f"pushes the onset of the collapse from {base_onset} to {onset} servers" if onset and base_onset
             else f"keeps goodput above {COLLAPSE_SHARE:.0%} of the one-server goodput up to {n_last} servers"
             if onset is None else f"collapses at {onset} servers")
    probe = base_onset if base_onset is not None else n_last
    g_base, g_fix = _at(base, probe), _at(fix, probe)
    g_base_last, g_fix_last = _at(base, n_last), _at(fix, n_last)
    return (
        f"{name} {where}; at {probe} servers it delivers {g_fix:.0f} Mbps instead of {g_base:.0f} "
        f"({_ratio(g_fix, g_base)}), and at {n_last} servers {g_fix_last:.0f} instead of {g_base_last:.0f} Mbps "
        f"({_ratio(g_fix_last, g_base_last)}), with {int(_at(fix, n_last, 'timeouts'))} timeouts "
        f"against {int(_at(base, n_last, 'timeouts'))} in the same simulated time: {why}."
    )


def _ratio(a: float, b: float) -> str:
    if b <= 0:
        return "the default delivered nothing"
    return f"{a / b:.1f}x"
