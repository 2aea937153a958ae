"""``incastlab reproduce``: one command per figure of the source documents.

    incastlab reproduce --list
    incastlab reproduce fast08-fig13 --out out/ [--quick] [--jobs J] [--seeds K] [--strict]
    incastlab reproduce all --out out/

Each reproduction writes OUT/NAME.csv (every simulated point), OUT/NAME.png (the figure,
shaped like the source's) and OUT/NAME.checks.json (the source's claims, measured), and
prints its checks. A failed check is a finding, not an error: the exit status is 0 unless
``--strict`` is given (then 1 when any check failed). The reproductions themselves live in
``incastlab.experiments`` (docs/reproduce.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from pathlib import Path

from ..errors import UsageError
from ..outfiles import check_writable, pruned_on_failure
from ..table import plural
from . import argtypes
from .progress import point_progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a figure of the source papers: CSV, plot and checked claims",
        description="Run one reproduction (or 'all'): simulate its series, write OUT/NAME.csv, OUT/NAME.png "
        "and OUT/NAME.checks.json, and print which of the source's claims hold. A failed check is a "
        "finding: exit status 0 unless --strict.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a reproduction (see --list), or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--out", metavar="DIR", help="directory for NAME.csv, NAME.png, NAME.checks.json (created)")
    p.add_argument("--quick", action="store_true",
                   help="shorter simulated time per point (for tests and CI; the default is the paper's 20 s)")
    p.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=1024), default=None,
                   metavar="J", help="points simulated at once (default: the available cores)")
    p.add_argument("--seeds", type=argtypes.positive_int("--seeds", minimum=1, maximum=1000), default=None,
                   metavar="K", help="runs per point, differing in the servers' think time (U(0, 3us) per block, as "
                   "the ns-2/ns-3 comparisons draw it) or, where the workload draws at random (Osada et al.'s active "
                   "servers), by those draws alone; plots show the mean and the min-max spread "
                   "(default: each reproduction's own, usually 1)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE",
                   help="run every point with this scenario field changed, e.g. --set condition_i=delivered "
                   "(repeatable; the checks still judge the result)")
    p.add_argument("--store", metavar="DIR", help="the result store (default: OUT/store): points it has are not "
                   "simulated again; the one `incastlab sweep` uses (docs/sweep.md)")
    p.add_argument("--no-store", action="store_true", help="simulate every point and keep none")
    p.add_argument("--strict", action="store_true", help="exit status 1 if any check fails")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line: each check (with --list: each reproduction)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import experiments
    from ..experiments import run as runner
    from ..study.store import ResultStore

    if args.list:
        return _list(args.json)
    if not args.name:
        raise UsageError("NAME", None, "a reproduction name or 'all' (see incastlab reproduce --list)")
    chosen = experiments.names() if args.name == "all" else [args.name]
    exps = [experiments.load(n) for n in chosen]
    if not args.out:
        raise UsageError("--out", None, "a directory for the results (e.g. --out out)")
    overrides = {exp.name: runner.parse_overrides(exp, args.overrides) for exp in exps}
    with pruned_on_failure(args.out):  # a refused or failed run leaves no empty directory behind
        out = _prepare_out(args.out)
        if args.no_store and args.store:
            raise UsageError("--no-store", "--store " + args.store, "either a store or --no-store, not both")
        store = None if args.no_store else ResultStore(args.store or out / "store", "--store")
        for exp in exps:  # refuse a knob this build lacks, or a file it cannot write, before spending time
            runner.points(exp, args.quick, args.seeds, overrides[exp.name])
            for suffix in (".csv", ".png", ".checks.json"):
                check_writable(out / f"{exp.name}{suffix}", "--out")

        failed: list[tuple[str, dict]] = []
        total_checks = 0
        start_all = time.monotonic()
        for exp in exps:
            checks = _run_one(exp, args, out, overrides[exp.name], store)
            total_checks += len(checks)
            failed += [(exp.name, c) for c in checks if not c["pass"]]
    wall = time.monotonic() - start_all

    if not args.json:
        if len(exps) > 1:
            print(f"\n# {len(exps)} reproductions, {total_checks} checks, {total_checks - len(failed)} passed, "
                  f"{len(failed)} failed ({wall:.1f} s wall)")
        if failed:
            from ..experiments.sources import cite

            print("FAILED checks (departures from the sources, see each NAME.checks.json):")
            for name, c in failed:
                print(f"  {name}: {c['claim']}\n    source: {cite(c['source'])}\n    measured: {c['measured']}")
    sys.stdout.flush()
    return 1 if (args.strict and failed) else 0


def _list(as_json: bool) -> int:
    from .. import experiments
    from ..experiments.sources import cite

    exps = [experiments.load(n) for n in experiments.names()]
    if as_json:
        for e in exps:
            print(json.dumps({"name": e.name, "source": e.source, "title": e.title, "summary": e.summary}))
        return 0
    print(left_aligned(["name", "source", "what"], [[e.name, cite(e.source), e.title] for e in exps]))
    return 0


def _prepare_out(text: str) -> Path:
    out = Path(text)
    if out.exists() and not out.is_dir():
        raise UsageError("--out", text, "a directory (this is a file)")
    if not out.exists():
        parent = out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError("--out", text, f"a directory whose parent exists ({parent} does not)")
        try:
            out.mkdir()
        except (OSError, ValueError) as e:  # /proc, a NUL byte, no permission
            raise UsageError("--out", text, f"a directory that can be created ({e.strerror or e})") from None
    if not os.access(out, os.W_OK | os.X_OK):  # a read-only mount, another user's directory
        raise UsageError("--out", text, f"a writable directory ({out} is not writable)")
    return out


def _run_one(exp, args: argparse.Namespace, out: Path, overrides: dict[str, str], store) -> list[dict]:
    from ..experiments import run as runner
    from ..experiments.sources import cite

    pts = runner.points(exp, args.quick, args.seeds, overrides)
    seeds = args.seeds or exp.seeds
    duration = exp.run_text(args.quick)
    note = f"{duration} per point" + (" (--quick)" if args.quick else "") + \
        (f", mean and min-max of {seeds} seeds" if seeds > 1 else "") + \
        "".join(f", {k}={v}" for k, v in overrides.items())
    if not args.json:
        print(f"\n## {exp.name}: {exp.title}. {cite(exp.source)}")
        print(f"# {plural(len(pts), 'point')}, {note}")
    sys.stdout.flush()
    start = time.monotonic()
    progress = _StoreProgress(exp.name, len(pts))
    df = runner.simulate(exp, args.quick, args.jobs, args.seeds, progress=progress, overrides=overrides, store=store,
                         announce=progress.announce)
    wall = time.monotonic() - start
    checks = runner.evaluate(exp, df)
    paths = runner.write_outputs(exp, df, checks, out, note=note)
    if args.json:
        for c in checks:
            print(json.dumps({"reproduction": exp.name, **c}))
        return checks
    if exp.report is not None:
        print(exp.report(df))
    print(render_checks(checks))
    print(f"wrote {paths['csv']}, {paths['png']}, {paths['checks']} ({wall:.1f} s wall{progress.stored_text()})")
    return checks


def render_checks(checks: list[dict]) -> str:
    """The checks as a short table: verdict, claim (wrapped) and what we measured."""
    rows = []
    for i, c in enumerate(checks, 1):
        claim = textwrap.shorten(c["claim"], 70, placeholder="...")
        rows.append([str(i), "pass" if c["pass"] else "FAIL", claim, c["measured"]])
    return left_aligned(["#", "check", "claim", "measured"], rows)


def left_aligned(heads: list[str], rows: list[list[str]]) -> str:
    """Text columns read best left-aligned (the last one is not padded)."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    pad = widths[:-1] + [0]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, pad)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, pad)).rstrip() for r in rows]
    return "\n".join(lines)


class _StoreProgress:
    """Progress over the points to simulate; the store's points are counted once, up front."""

    def __init__(self, what: str, total: int):
        self.what = what
        self.inner = point_progress(what, total)
        self.from_store = None

    def announce(self, from_store: int, to_compute: int) -> None:
        self.from_store = from_store
        self.inner = point_progress(self.what, to_compute)

    def __call__(self, done: float, total: int, simulated_s: float | None = None) -> None:
        if self.inner is not None:
            self.inner(done, total, simulated_s)

    def stored_text(self) -> str:
        return f", {plural(self.from_store, 'point')} from the store" if self.from_store else ""
