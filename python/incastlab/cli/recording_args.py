"""``--pcap``, ``--trace`` and their options: what a simulated point records besides
its result (docs/capture.md)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..recording import DEFAULT_CAPTURE_LIMIT, TRACE_ALL_FLOWS_UP_TO, Recording
from . import argtypes

RECORDING_FLAGS = {"pcap": "--pcap", "trace": "--trace", "trace_flows": "--trace-flows",
                   "capture_limit": "--capture-limit", "events": "--events", "port_util": "--port-util",
                   "port_util_interval": "--port-util-interval", "millisampler": "--millisampler"}


def add_recording_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "capture and trace (with several --servers values, one file per point: the servers count "
        "goes before the extension, fig.pcap -> fig-n16.pcap)")
    g.add_argument("--pcap", metavar="FILE",
                   help="write the client's switch port as a pcap (.pcap): a mirror port, so dropped packets "
                        "appear too; simulated timestamps, real TCP/IP headers (docs/capture.md)")
    g.add_argument("--pcap-received-only", action="store_true",
                   help="leave the packets the switch dropped out of the pcap (what the client received)")
    g.add_argument("--capture-limit", type=argtypes.positive_int("--capture-limit", minimum=1), default=None,
                   metavar="N", help=f"capture at most N packets per point (default {DEFAULT_CAPTURE_LIMIT:,}); "
                                     "a truncated capture is reported")
    g.add_argument("--trace", metavar="FILE",
                   help="write each traced flow's sender state (cwnd, ssthresh, srtt, rto, ...) after every "
                        "ACK, timeout and write (.csv or .parquet)")
    g.add_argument("--trace-flows", type=argtypes.int_list("--trace-flows", minimum=0), default=None,
                   metavar="F[,F...]",
                   help=f"flows to trace, numbered from 0 (default: all flows up to {TRACE_ALL_FLOWS_UP_TO} "
                        "servers, else flow 0)")
    g.add_argument("--events", metavar="FILE",
                   help="write every flow's packet events (tx, rtx, ack, enq, deq, drop at the client's port, "
                        "cwnd, ssth, rto, state) as CSV lines in the ns-3 peer's format, for "
                        "python -m incastlab.peers.tracediff (.csv)")
    g.add_argument("--port-util", metavar="FILE",
                   help="write every port's bytes and packets sent, drops and RTO timeouts per interval "
                        "(.csv or .parquet; docs/utilization.md): record at the finest interval you want, "
                        "coarser ones are sums of it")
    g.add_argument("--port-util-interval", type=argtypes.duration(
                       "--port-util-interval", bounds=(10**8, 10**12, "an interval from 100us to 1s")),
                   default=None, metavar="DUR", help="the --port-util interval (default 100us)")
    g.add_argument("--millisampler", metavar="FILE",
                   help="write every machine's Millisampler-style series (bytes in/out, active flows, "
                        "retransmissions, ECN marks at 100us, 1ms, 10ms; .parquet) in the schema "
                        "`incastlab monitor --millisampler` writes (docs/monitor.md)")


def recordings_for(args: argparse.Namespace, servers: list[int], scenarios: list | None = None) -> list[Recording]:
    """One Recording per point, checked before anything is simulated (against
    ``scenarios[i]``'s clients and workload when given)."""
    for flag, value, needs in (("--trace-flows", args.trace_flows, "trace"),
                               ("--capture-limit", args.capture_limit, "pcap"),
                               ("--pcap-received-only", "on" if args.pcap_received_only else None, "pcap"),
                               ("--port-util-interval", args.port_util_interval, "port_util")):
        if value is not None and not getattr(args, needs):
            shown = ",".join(map(str, value)) if isinstance(value, list) else str(value)
            if flag == "--port-util-interval":
                shown = f"{value / 1e6:g}us"
            raise UsageError(flag, shown, f"to be used with --{needs.replace('_', '-')}")
    base = Recording(
        pcap=args.pcap, trace=args.trace, events=args.events,
        trace_flows=tuple(args.trace_flows) if args.trace_flows is not None else None,
        capture_limit=args.capture_limit or DEFAULT_CAPTURE_LIMIT,
        pcap_received_only=args.pcap_received_only,
        port_util=args.port_util,
        port_util_interval_ps=(args.port_util_interval or 10**8) if (args.port_util or args.millisampler) else None,
        millisampler=args.millisampler,
    )
    several = len(servers) > 1
    recordings = [base.for_point(n) if several else base for n in servers]
    for i, (rec, n) in enumerate(zip(recordings, servers)):
        point = {"clients": scenarios[i].clients, "workload": scenarios[i].workload} if scenarios else {}
        rec.check(n, RECORDING_FLAGS, **point)
    return recordings


def report_truncated_captures(results, recordings: list[Recording], limit: int | None) -> None:
    for r, rec in zip(results, recordings):
        if r.data.get("capture_truncated"):
            print(f"note: {rec.pcap} holds only the first {limit or DEFAULT_CAPTURE_LIMIT:,} packets of the "
                  f"{r.servers}-server run (--capture-limit); the capture was truncated", file=sys.stderr)


def report_truncated_port_util(results, recordings: list[Recording]) -> None:
    """One line per run whose per-port sampling reached its memory cap (a run by blocks)."""
    for r, rec in zip(results, recordings):
        u = getattr(r, "port_util", None)
        if rec.port_util and u is not None and u.truncated:
            print(f"note: {rec.port_util} holds only the first {u.intervals * u.interval_s:g} s "
                  f"({u.intervals:,} intervals) of the {r.servers}-server run: the sampling reached its "
                  f"1024 MiB memory cap; the series was truncated there, on every port", file=sys.stderr)
