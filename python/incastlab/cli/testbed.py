"""`incastlab testbed`: the synchronized-read workload over real Linux TCP between
network namespaces on this machine (needs root). See docs/testbed.md."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys

from . import argtypes, workload_args
from .progress import point_progress
from ..errors import UsageError
from ..table import plural
from ..units import PS_PER_S


def _lock(prefix: str):
    """One testbed command per prefix at a time (two would tear down each other's namespaces)."""
    os.makedirs("/run/incastlab", exist_ok=True)
    f = open(f"/run/incastlab/testbed-{prefix}.lock", "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError("--prefix", prefix, "a prefix no other running testbed command uses") from None
    return f


def _add_network(p: argparse.ArgumentParser) -> None:
    p.add_argument("--buffer", type=argtypes.size("--buffer", minimum=1514), default=64 * 1024,
                   help="switch buffer at the client's port: tbf drop-tail limit in bytes (default 64KiB)")
    # a floor we chose for tbf shaping 1514-byte frames (tc answered 1 bit/s with a raw usage dump)
    p.add_argument("--rate", type=argtypes.rate("--rate", minimum=10**6), default=10**9,
                   help="bottleneck rate, at least 1Mbps (default 1Gbps)")
    p.add_argument("--rto-min", type=argtypes.duration("--rto-min"), default=None,
                   help="senders' RTOmin (default: the kernel's 200ms)")
    p.add_argument("--rto-min-via", choices=["route", "sysctl", "socket"], default="route",
                   help="how --rto-min is set: per-route rto_min (default), net.ipv4.tcp_rto_min_us in each "
                        "server namespace, or the TCP_RTO_MIN_US socket option (Linux 6.15+)")
    p.add_argument("--burst", type=argtypes.size("--burst", minimum=1514), default=4 * 1514,
                   help="tbf bucket (default 4 frames = 6056 B: enough for tbf's timer to keep 1 Gbps busy, "
                        "small enough not to act as extra buffer)")
    add_cpu_idle(p)
    p.add_argument("--offload", action="store_true",
                   help="leave TSO/GSO/GRO on (default off: 64 KB super-packets would hit the queue at once)")
    p.add_argument("--ecn-threshold", type=argtypes.positive_int("--ecn-threshold"), default=None, metavar="K",
                   help="refused: the testbed's tbf port marks no ECN (docs/testbed.md, \"DCTCP and ECN\", says how "
                        "to compare DCTCP on a host whose kernel marks)")


CPU_IDLE_CHOICES = ("poll", "system")


def add_cpu_idle(p: argparse.ArgumentParser) -> None:
    """--cpu-idle, for every command that runs testbed points (``testbed.cpu_idle``; its
    choices written out, since importing the testbed package loads the native core, which
    parsing a command line must not: tests/test_cpu_idle.py checks they are the same)."""
    p.add_argument("--cpu-idle", choices=CPU_IDLE_CHOICES, default="poll",
                   help="what idle CPUs do while a point runs: poll (default; the kernel is asked for a 0 us wake-up "
                        "latency, so a packet steered to another CPU is handled at once) or system (the machine's own "
                        "idle policy; on a VM a halted vCPU takes tens of us to wake: docs/testbed.md)")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", type=argtypes.testbed_prefix("--prefix"), default="iltb", help="name prefix of every namespace and link (default iltb)")


def _spec(args, servers: int):
    from ..testbed import TopologySpec
    try:
        return TopologySpec(servers=servers, rate_bps=args.rate, buffer_bytes=args.buffer, offload=args.offload,
                            rto_min_s=None if args.rto_min is None else args.rto_min / PS_PER_S,
                            rto_min_via=args.rto_min_via, prefix=args.prefix,
                            burst_bytes=args.burst, cpu_idle=args.cpu_idle)
    except ValueError as e:
        raise UsageError("--servers/--prefix", servers, str(e)) from None


def _run_points(topo, counts: list[int], work, as_json: bool, capture=None) -> list[dict]:
    from ..testbed import run_point
    from ..testbed.report import describe, table
    if not as_json:
        print(f"testbed: {describe(topo.spec, work)}", flush=True)
    rows = []
    # a point of 40 blocks with 200 ms timeouts can take minutes: show the blocks move
    progress = point_progress("testbed", len(counts))
    for i, n in enumerate(counts):
        def blocks_done(done: int, i: int = i) -> None:
            if progress is not None:
                progress(i + min(done / work.blocks, 0.99), len(counts))

        row = run_point(topo, n, work, on_blocks=blocks_done,
                        capture=None if capture is None else str(capture / f"testbed-n{n}"))
        if progress is not None:
            progress(i + 1, len(counts))
        rows.append(row)
        if as_json:
            print(json.dumps(row), flush=True)
    if not as_json:
        print(table(rows))
        if capture is not None:
            print(f"captures and per-event traces in {capture} (testbed-nN/, testbed-nN.csv)")
    return rows


def _capture_dir(args):
    from .validate import check_trace_dir
    return check_trace_dir(args.capture, "--capture") if getattr(args, "capture", None) else None


def _workload(args):
    from ..testbed import Workload
    return Workload(**workload_args.workload_kwargs(args))


def _refuse_what_this_kernel_lacks(args) -> None:
    """A cc the kernel lacks or an ECN threshold: one line, before anything is built."""
    from ..testbed.kernel import check_congestion, check_ecn_threshold
    check_ecn_threshold(getattr(args, "ecn_threshold", None))
    check_congestion(getattr(args, "cc", None))
    workload_args.check_kernel_options(args)


def cmd_sweep(args) -> int:
    from ..testbed import Topology
    from ..testbed.shell import require_root
    _refuse_what_this_kernel_lacks(args)
    capture = _capture_dir(args)
    require_root()
    lock = _lock(args.prefix)
    topo = Topology(_spec(args, max(args.servers)))
    try:
        topo.up()
        _run_points(topo, args.servers, _workload(args), args.json, capture)
    finally:
        topo.down()
        lock.close()
    return 0


def cmd_up(args) -> int:
    from ..testbed import Topology
    from ..testbed.report import describe
    from ..testbed.shell import require_root
    _refuse_what_this_kernel_lacks(args)
    require_root()
    lock = _lock(args.prefix)
    topo = Topology(_spec(args, args.servers))
    topo.up()
    lock.close()
    msg = {"up": True, "prefix": args.prefix, "servers": args.servers, "buffer_bytes": args.buffer, "rate_bps": args.rate}
    print(json.dumps(msg) if args.json else
          f"testbed {args.prefix!r} up: client + {plural(args.servers, 'server')}; run `incastlab testbed run`, then `incastlab testbed down`")
    return 0


def cmd_run(args) -> int:
    from ..testbed import Topology
    from ..testbed.shell import require_root
    _refuse_what_this_kernel_lacks(args)
    require_root()
    lock = _lock(args.prefix)
    topo = Topology.load(args.prefix)
    counts = args.servers or [topo.spec.servers]
    if max(counts) > topo.spec.servers:
        raise UsageError("--servers", ",".join(map(str, counts)), f"at most {topo.spec.servers} (the testbed that is up)")
    capture = _capture_dir(args)
    try:
        _run_points(topo, counts, _workload(args), args.json, capture)
    finally:
        lock.close()
    return 0


def cmd_down(args) -> int:
    from ..testbed import teardown
    from ..testbed.shell import require_root
    require_root()
    lock = _lock(args.prefix)
    removed = teardown(args.prefix)
    lock.close()
    if args.json:
        print(json.dumps({"removed": removed}))
    else:
        n = len(removed["netns"]) + len(removed["links"])
        print(f"testbed {args.prefix!r}: removed {n} objects" + (f" ({', '.join(removed['netns'] + removed['links'])})" if n else ""))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("testbed", help="synchronized reads over real Linux TCP in network namespaces (root)",
                              description=__doc__)
    sub = p.add_subparsers(dest="testbed_command", metavar="STEP", parser_class=type(p))
    sub.required = True

    s = sub.add_parser("sweep", help="build, run every server count, tear down",
                       description="Build the namespace cluster, run the workload for every server count, tear it down "
                                   "(also on Ctrl-C, SIGTERM and errors; stale objects of a killed run are removed first).")
    s.add_argument("--servers", type=argtypes.int_list("--servers", maximum=1000), default=[1, 2, 4, 8, 16, 32],
                   help="server counts (default 1,2,4,8,16,32)")
    _add_network(s)
    workload_args.add(s, blocks_default=40)
    _add_common(s)
    s.add_argument("--capture", default=None, metavar="DIR",
                   help="capture every point packet by packet (dumpcap in the namespaces) into DIR and write its "
                        "per-event trace, testbed-nN.csv (docs/testbed.md, \"Capture and trace\")")
    s.add_argument("--json", action="store_true", help="one JSON object per point")
    s.set_defaults(func=cmd_sweep)

    u = sub.add_parser("up", help="build the cluster and leave it up")
    u.add_argument("--servers", type=argtypes.positive_int("--servers", maximum=1000), required=True,
                   help="number of server namespaces")
    _add_network(u)
    _add_common(u)
    u.add_argument("--json", action="store_true", help="print the cluster built as one JSON object")
    u.set_defaults(func=cmd_up)

    r = sub.add_parser("run", help="run the workload on the cluster `up` built")
    r.add_argument("--servers", type=argtypes.int_list("--servers", maximum=1000), default=None,
                   help="server counts to run (default: all servers that are up)")
    workload_args.add(r, blocks_default=40)
    _add_common(r)
    r.add_argument("--capture", default=None, metavar="DIR",
                   help="capture every point packet by packet (dumpcap in the namespaces) into DIR and write its "
                        "per-event trace, testbed-nN.csv (docs/testbed.md, \"Capture and trace\")")
    r.add_argument("--json", action="store_true", help="one JSON object per point")
    r.set_defaults(func=cmd_run)

    d = sub.add_parser("down", help="remove every namespace and link with the prefix (also a killed run's)")
    _add_common(d)
    d.add_argument("--json", action="store_true", help="print what was removed as one JSON object")
    d.set_defaults(func=cmd_down)
