#!/usr/bin/env python3
"""Fingerprint the simulator's results over a broad grid, to prove a refactor changes nothing.

    PYTHONPATH=<worktree>/python python scripts/result-fingerprint.py run before.jsonl [--jobs J]
    PYTHONPATH=<worktree>/python python scripts/result-fingerprint.py run after.jsonl
    python scripts/result-fingerprint.py diff before.jsonl after.jsonl [--new-field topology=star] [--new-field block_time_p95_s=*]
    python scripts/result-fingerprint.py csv-diff reproduce-before/ reproduce-after/ [--new-column preset]

``run`` simulates every point of the grid (TCP variant x rule set x limited transmit x
delayed ACK x timestamps x servers x RTOmin, the mitigations with handshakes and UDP, random
tie-breaking, a 10 Gbps fixed-block point, and one point per other knob) and writes one
JSON line per point: its result without ``wall_seconds`` (the only field that is not a
function of the scenario), the SHA-256 of that, and for the points marked ``events`` also
the SHA-256 of the per-event trace (every transmission, ACK, queue operation and cwnd /
ssthresh / RTO / state change of every flow) and of the per-ACK sender trace, so a
difference that leaves the totals alone still shows. ``diff`` prints one line per point
and every field that differs; ``csv-diff`` compares the CSV and checks files of two
``incastlab reproduce`` outputs field by field, except wall times. Both exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

IGNORED_FIELDS = ("wall_seconds",)  # the core's own timer: the one field that varies run to run


def grid() -> list[tuple[str, dict, bool]]:
    """(name, scenario keywords, hash the event trace too) for every point."""
    points: list[tuple[str, dict, bool]] = []

    def add(kw: dict, events: bool = False) -> None:
        name = " ".join(f"{k}={v}" for k, v in kw.items())
        points.append((name, kw, events))

    # the TCP core: every variant under every rule set it may follow (ns-3's only with NewReno)
    combos = [(v, r) for v in ("reno", "newreno", "sack") for r in ("rfc", "ns2")] + [("newreno", "ns3")]
    for (tcp, rules), lt, delack, ts, n, rto in itertools.product(
            combos, (True, False), ("0s", "40ms"), (False, True), (1, 4, 16, 64), ("200ms", "200us")):
        kw = dict(tcp=tcp, tcp_rules=rules, limited_transmit=lt, delayed_ack=delack, timestamps=ts,
                  servers=n, rto_min=rto, duration="2s")
        # the event trace of a quarter of a second, where the small worlds keep it short
        add(kw)
        if n in (4, 16) and delack == "0s":
            add({**kw, "duration": "250ms"}, events=True)

    # the client's schedulers (Osada et al.), with and without handshakes and UDP background
    for (tcp, rules), mit, hs, udp, n in itertools.product(
            [("newreno", "rfc"), ("sack", "rfc"), ("newreno", "ns2"), ("newreno", "ns3")],
            ("ntcp", "tcpfg", "ictcp", "ccs", "nccs", "ocs"), (False, True), (0.0, 0.001), (8, 40)):
        kw = dict(tcp=tcp, tcp_rules=rules, mitigation=mit, handshake=hs, udp=udp, servers=n,
                  buffer_packets=40, duration="1s")
        add(kw, events=(n == 8 and udp == 0.0))
    for cond in ("delivered", "open"):
        add(dict(mitigation="nccs", condition_i=cond, handshake=True, servers=40, buffer_packets=40, duration="1s"))
        add(dict(mitigation="ocs", condition_i=cond, handshake=True, servers=40, buffer_packets=40, duration="1s"))
    add(dict(mitigation="nccs", nccs_k=2, active_servers=20, handshake=True, servers=60, buffer_packets=120,
             duration="1s"))

    # ties broken at random, per variant and rule set
    for (tcp, rules), n in itertools.product(combos, (16, 64)):
        add(dict(tcp=tcp, tcp_rules=rules, tie_break="random", servers=n, rto_min="200us", duration="1s"),
            events=(n == 16))

    # a 10 Gbps fixed-block point (SIGCOMM'09: 1 MB / N per server), and the bench's one-shot
    for tcp in ("newreno", "sack"):
        for n in (16, 64):
            add(dict(tcp=tcp, servers=n, block="1MB", rate="10Gbps", rtt="40us", buffer=150_000,
                     rto_min="200us", duration="300ms"))
    add(dict(servers=64, sru="1MiB", buffer=150_000, rate="10Gbps", rtt="40us", duration=None, blocks=1))

    # one point per remaining sender knob, each with every variant
    knobs = [
        dict(slow_start=False), dict(slow_start_after_idle=True), dict(dupack_threshold=1),
        dict(dupack_threshold=5), dict(init_cwnd=10), dict(rwnd="1GiB"), dict(rto_backoff="new_ack"),
        dict(timer_ticks=True, timer_granularity="4ms", rto_min="10ms"), dict(rto_random=0.5, rto_min="1ms"),
        dict(jitter="3us"), dict(send_jitter="2us"), dict(buffer_admission="mtu_slots"),
        dict(duration=None, blocks=40), dict(mss=536, header=42), dict(rwnd=5000),
    ]
    for knob, (tcp, rules) in itertools.product(knobs, combos):
        add({"tcp": tcp, "tcp_rules": rules, "servers": 32, "duration": "1s", **knob})

    # what came after the grid: CUBIC and DCTCP with ECN marks, PRR and RACK-TLP, the fabrics
    # (two switches, leaf-spine), PAUSE and PFC with a victim, shared pools, QoS classes,
    # several clients and the Riak workload; the short ones with their event traces
    add(dict(cc="cubic", tcp="sack", servers=16, duration="1s"), events=True)
    add(dict(cc="dctcp", ecn_threshold=20, tcp="sack", servers=32, rate="10Gbps", rtt="40us", buffer=150_000,
             rto_min="1ms", duration="100ms"))
    for rto in ("200ms", "200us"):
        add(dict(tcp="sack", prr=True, rack_tlp=True, servers=16, rto_min=rto, duration="1s"), events=(rto == "200ms"))
    add(dict(topology="two_switch", servers=16, duration="1s"), events=True)
    add(dict(topology="leaf_spine", leaves=4, spines=2, oversubscription=2.0, servers=16, duration="1s"))
    add(dict(topology="two_switch", pause=True, victim=True, servers=8, duration="1s"))
    add(dict(topology="two_switch", pause=True, pfc=True, qos_classes=2, victim=True, victim_class=1, servers=8,
             duration="1s"))
    add(dict(buffer_sharing="dynamic", servers=16, duration="1s"))
    add(dict(qos_classes=2, qos_scheduler="wrr", qos_weights=[3, 1], victim=True, victim_class=1, servers=8,
             duration="1s"))
    add(dict(clients=2, servers=8, duration="1s"), events=True)
    add(dict(workload="riak", servers=16, get_rate=125, duration="500ms"))
    # the linux preset (what validate starts from) with both its congestion controls, where
    # incast starts at 100 Mbit/s and a 5-packet buffer and beyond: a change to the preset
    # shows here, by cc
    for cc, n in itertools.product(("cubic", "newreno"), (1, 4, 8, 16)):
        add(dict(preset="linux", cc=cc, servers=n, rate="100Mbps", buffer="8KiB", blocks=20, duration=None),
            events=(n == 4))
    return points


def run_point(name: str, kw: dict, events: bool) -> dict:
    from incastlab.recording import Recording
    from incastlab.scenario import Scenario
    from incastlab.sim import simulate

    scn = Scenario(**kw)
    line = {"name": name}
    if events:
        with tempfile.TemporaryDirectory(prefix="fingerprint-") as tmp:
            events, trace = os.path.join(tmp, "events.csv"), os.path.join(tmp, "trace.csv")
            r = simulate(scn, recording=Recording(events=events, trace=trace))
            # both traces in one hash: the event trace and the per-ACK sender trace (snd_una,
            # snd_nxt, srtt, in_recovery of every flow)
            line["events_sha256"] = _files_sha256([events, trace])
    else:
        r = simulate(scn)
    result = {k: v for k, v in r.to_dict().items() if k not in IGNORED_FIELDS}
    line["sha256"] = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()
    line["result"] = result
    return line


def _files_sha256(paths: list[str]) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def cmd_run(args: argparse.Namespace) -> int:
    points = [p for p in grid() if not args.only or args.only in p[0]]
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool, open(args.out, "w") as out:
        # the core releases the GIL; results are written in grid order
        for i, line in enumerate(pool.map(lambda p: run_point(*p), points), 1):
            out.write(json.dumps(line) + "\n")
            if sys.stderr.isatty():
                print(f"\r{i}/{len(points)}", end="", file=sys.stderr)
    print(f"\n{len(points)} points in {time.monotonic() - start:.0f} s -> {args.out}", file=sys.stderr)
    return 0


def _load(path: str) -> dict[str, dict]:
    with open(path) as f:
        return {line["name"]: line for line in map(json.loads, f)}


def cmd_diff(args: argparse.Namespace) -> int:
    a, b = _load(args.a), _load(args.b)
    differ = 0
    for name in list(a) + [n for n in b if n not in a]:
        if name not in a or name not in b:
            print(f"ONLY IN {'B' if name in b else 'A'}  {name}")
            differ += 1
            continue
        pa, pb = a[name], _without_new_fields(a[name], b[name], args.new_field)
        same = pa["sha256"] == pb["sha256"] and pa.get("events_sha256") == pb.get("events_sha256")
        if args.verbose or not same:
            ev = f" events {pa['events_sha256'][:12]}" if "events_sha256" in pa else ""
            print(f"{'same' if same else 'DIFF'}  {pa['sha256'][:12]}{ev}  {name}")
        if same:
            continue
        differ += 1
        ra, rb = pa["result"], pb["result"]
        for k in sorted(set(ra) | set(rb)):
            if ra.get(k) != rb.get(k):
                print(f"      {k}: {ra.get(k)!r} -> {rb.get(k)!r}")
        if pa.get("events_sha256") != pb.get("events_sha256"):
            print("      the event traces differ")
    traced = sum("events_sha256" in p for p in a.values())
    print(f"{len(a)} points ({traced} with event traces): {differ} differ")
    return 1 if differ else 0


def _without_new_fields(pa: dict, pb: dict, new_fields: list[str]) -> dict:
    """``pb`` without each NAME=VALUE field that ``pa``'s result lacks and ``pb``'s holds
    with exactly that value (a scenario field added since ``a`` was run, at its default),
    its hash recomputed; any other difference still shows."""
    result = dict(pb["result"])
    for spec in new_fields:
        name, _, value = spec.partition("=")
        # "*": a new result field whose value is a function of the run (a new statistic),
        # which the points before could not have had
        if name not in pa["result"] and name in result and (value == "*" or str(result[name]) == value):
            del result[name]
    if result == pb["result"]:
        return pb
    sha = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()
    return {**pb, "result": result, "sha256": sha}


def cmd_csv_diff(args: argparse.Namespace) -> int:
    da, db = Path(args.a), Path(args.b)
    files = sorted({p.name for p in da.iterdir() if p.suffix in (".csv", ".json")}
                   | {p.name for p in db.iterdir() if p.suffix in (".csv", ".json")})
    differ = 0
    for fname in files:
        fa, fb = da / fname, db / fname
        if not fa.exists() or not fb.exists():
            print(f"ONLY IN {'B' if fb.exists() else 'A'}  {fname}")
            differ += 1
            continue
        problems = _csv_problems(fa, fb, args.new_column) if fname.endswith(".csv") else _json_problems(fa, fb)
        print(f"{'DIFF' if problems else 'same'}  {fname}")
        for p in problems[:20]:
            print(f"      {p}")
        differ += bool(problems)
    print(f"{len(files)} files: {differ} differ")
    return 1 if differ else 0


def _csv_problems(fa: Path, fb: Path, new_columns: list[str] = ()) -> list[str]:
    """Every field that differs, wall times aside; a column in ``new_columns`` that B has and
    A lacks (a scenario field added since A was run) is left out of B."""
    with open(fa, newline="") as f:
        ra = list(csv.DictReader(f))
    with open(fb, newline="") as f:
        rb = list(csv.DictReader(f))
    if not ra and not rb:
        return []
    ca, cb = list(ra[0]) if ra else [], list(rb[0]) if rb else []
    added = [c for c in new_columns if c in cb and c not in ca]
    cb = [c for c in cb if c not in added]
    if ca != cb:
        return [f"columns differ: {ca} vs {cb}"]
    if len(ra) != len(rb):
        return [f"{len(ra)} rows vs {len(rb)}"]
    compared = [c for c in ca if "wall" not in c]
    return [f"row {i} {c}: {x[c]!r} vs {y[c]!r}" for i, (x, y) in enumerate(zip(ra, rb)) for c in compared
            if x[c] != y[c]]


def _json_problems(fa: Path, fb: Path) -> list[str]:
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if "wall" not in k}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    a, b = strip(json.loads(fa.read_text())), strip(json.loads(fb.read_text()))
    return [] if a == b else ["contents differ (wall times aside)"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(required=True)
    r = sub.add_parser("run", help="simulate the grid, one JSON line per point")
    r.add_argument("out")
    r.add_argument("--jobs", type=int, default=1, help="points at once (default 1)")
    r.add_argument("--only", help="only the points whose name contains this")
    r.set_defaults(func=cmd_run)
    d = sub.add_parser("diff", help="compare two runs point by point")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("-v", "--verbose", action="store_true", help="print every point's hash, not only differences")
    d.add_argument("--new-field", action="append", default=[], metavar="NAME=VALUE",
                   help="a field added since A was run: ignored where B has it at VALUE (any value for *) and A lacks it")
    d.set_defaults(func=cmd_diff)
    c = sub.add_parser("csv-diff", help="compare two 'incastlab reproduce' output directories")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--new-column", action="append", default=[], metavar="NAME",
                   help="a column added since A was run (a new scenario field): left out where B has it and A lacks it")
    c.set_defaults(func=cmd_csv_diff)
    args = p.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
