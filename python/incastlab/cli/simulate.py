"""``incastlab simulate``: sweep the number of servers through the simulator core.

    incastlab simulate --servers 1,2,4,8,16,32,64 --buffer 32KiB --rto-min 200ms --duration 2s

prints a table (or ``--json``: one object per point), and optionally writes the
FAST'08 Fig. 4 style plot (``--plot``), the rows as CSV (``--csv``), a pcap of the
client's switch port (``--pcap``) and a per-flow sender trace (``--trace``).
"""

from __future__ import annotations

import argparse
import sys

from .. import plots, sim
from ..outfiles import check_writable, write_csv
from ..table import BUSIEST_COLUMNS, RIAK_COLUMNS, SIM_COLUMNS, flow_columns, render_results
from . import argtypes
from .progress import point_progress
from .recording_args import (add_recording_arguments, recordings_for, report_truncated_captures,
                             report_truncated_port_util)
from .scenario_args import add_scenario_arguments, build_scenarios, flag_names

# FAST'08 Fig. 4 sweeps 1..64 servers.
DEFAULT_SERVERS = "1,2,4,8,16,32,64"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="packet-level simulation of synchronized reads (goodput vs. servers)",
        description="Simulate the FAST'08 synchronized-read workload for each number of servers; "
        "points run in parallel on the available cores.",
    )
    p.add_argument("--servers", type=argtypes.int_list("--servers", minimum=1, maximum=1 << 20),
                   default=DEFAULT_SERVERS, metavar="N[,N...]",
                   help=f"numbers of servers to simulate (default {DEFAULT_SERVERS})")
    add_scenario_arguments(p)
    out = p.add_argument_group("output")
    out.add_argument("--jobs", type=argtypes.positive_int("--jobs", minimum=1, maximum=1024), default=None,
                     metavar="J", help="points simulated at once (default: the available cores)")
    out.add_argument("--json", action="store_true", help="one JSON object per line per point")
    out.add_argument("--plot", metavar="FILE", help="write goodput vs. servers (.png, .svg or .pdf)")
    out.add_argument("--csv", metavar="FILE", help="write the result rows as CSV")
    add_recording_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    scenarios = build_scenarios(args, args.servers)
    # refuse unwritable outputs before spending time simulating
    if args.plot is not None:
        plots.check_plot_path(args.plot)
    if args.csv is not None:
        check_writable(args.csv, "--csv")
    recordings = recordings_for(args, args.servers, scenarios)

    with flag_names({"port_util_interval": "--port-util-interval"}):  # a refusal from the core names the flag too
        results = sim.run_points(scenarios, jobs=args.jobs, progress=point_progress("simulate", len(scenarios)),
                                 recordings=recordings)
    df = sim.to_frame(results)

    if args.json:
        for r in results:
            print(r.to_json())
    else:
        print(f"# {scenarios[0].label()}, {_stop_text(scenarios[0])}")
        first = scenarios[0]
        if first.is_flows():
            columns = flow_columns(with_background=first.background_load > 0)
        else:
            columns = RIAK_COLUMNS if first.workload == "riak" else SIM_COLUMNS
        if "busiest_port" in df.columns:
            columns = columns[:-2] + BUSIEST_COLUMNS + columns[-2:]  # before events and wall time
        print(render_results(df, columns))
    if args.csv:
        write_csv(df, args.csv)
    if args.plot:
        first = scenarios[0]
        if first.is_flows():
            # the optimum is the incast's: every sender's bytes through the receiver's link
            per_sender = first.sru if first.block is None else first.block_part_bytes()
            plots.completion_vs_senders({first.label(): df}, args.plot, title=f"{first.workload}: {first.label()}",
                                        optimum_bytes_per_sender=per_sender if first.workload == "incast" else None,
                                        link_rate_bps=first.rate)
        else:
            title = (f"TCP incast: synchronized reads, RTT {first.model_dump()['rtt']}, "
                     f"{_stop_text(first)}")
            plots.goodput_vs_servers({first.label(): df}, args.plot, title=title, link_rate_bps=first.rate)
    report_truncated_captures(results, recordings, args.capture_limit)
    report_truncated_port_util(results, recordings)
    if (args.csv or args.plot or args.pcap or args.trace or args.events or args.port_util or args.millisampler) \
            and not args.json:
        recorded = [f for rec in recordings for f in (rec.pcap, rec.trace, rec.events, rec.port_util,
                                                      rec.millisampler) if f]
        written = [f for f in (args.csv, args.plot) if f] + recorded
        print("wrote " + ", ".join(written), file=sys.stderr)
    return 0


def _stop_text(s) -> str:
    if s.is_flows():
        return "each point until its flows are delivered"
    if s.blocks is not None:
        return f"{s.blocks} blocks per point"
    return f"{s.model_dump()['duration']} simulated per point"
