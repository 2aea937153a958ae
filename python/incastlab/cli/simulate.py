"""``incastlab simulate``: sweep the number of servers through the simulator core.

    incastlab simulate --servers 1,2,4,8,16,32,64 --buffer 32KiB --rto-min 200ms --duration 2s

prints a table (or ``--json``: one object per point), and optionally writes the
FAST'08 Fig. 4 style plot (``--plot``), the rows as CSV (``--csv``), a pcap of the
client's switch port (``--pcap``) and a per-flow sender trace (``--trace``).
"""

from __future__ import annotations

import argparse
import os
import sys

from ..table import plural
from . import argtypes
from .recording_args import add_recording_arguments
from .scenario_args import add_scenario_arguments

# FAST'08 Fig. 4 sweeps 1..64 servers.
DEFAULT_SERVERS = "1,2,4,8,16,32,64"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="packet-level simulation of synchronized reads (goodput vs. servers)",
        description="Simulate the FAST'08 synchronized-read workload for each number of servers; "
        "points run in parallel on the available cores. The defaults are the RFCs' TCP (preset rfc); "
        "--preset fast08 is FAST'08 as ns-2 ran it, the README's table and the reproductions' reading; "
        "--preset-table lists every preset and the fields it sets.",
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
    out.add_argument("--preset-table", action="store_true",
                     help="print the presets --preset takes (the fields each sets, and why; with --preset, that "
                     "one) and exit")
    add_recording_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.preset_table:
        from .. import schema
        from ..presets import table
        from .scenario_args import flag_names

        # with --preset, that preset alone (refused as --preset would be, if unknown)
        chosen = None
        if args.preset is not None:
            with flag_names():
                name = schema.BY_PUBLIC["preset"].parse(args.preset)
            chosen = {name: schema.PRESETS[name]}
        print(table(presets=chosen), end="")
        return 0
    # imported here, not at the top: `incastlab simulate --servers 0` is refused by argparse
    # before any of them loads (pydantic, pandas, matplotlib, the core)
    from .. import plots, sim
    from ..outfiles import check_distinct, check_writable, together, write_csv
    from ..table import BUSIEST_COLUMNS, RIAK_COLUMNS, SIM_COLUMNS, flow_columns, render_results
    from .progress import point_progress
    from .recording_args import RECORDING_FLAGS, recordings_for, report_truncated_captures, report_truncated_port_util
    from .scenario_args import build_scenarios, flag_names

    scenarios = build_scenarios(args, args.servers)
    # refuse unwritable outputs before spending time simulating
    if args.plot is not None:
        plots.check_plot_path(args.plot)
    if args.csv is not None:
        check_writable(args.csv, "--csv")
    recordings = recordings_for(args, args.servers, scenarios)
    outputs = [(f, flag) for f, flag in ((args.csv, "--csv"), (args.plot, "--plot")) if f] + \
        [(f, RECORDING_FLAGS[field]) for rec in recordings for f, field in rec.files()]
    check_distinct(outputs)

    # every file of the run appears together at the end, or none does (docs/faults.md)
    with together() as files:
        staged = [rec.with_files(lambda path, field: files.reserve(path, RECORDING_FLAGS[field])) for rec in recordings]
        try:
            with flag_names({"port_util_interval": "--port-util-interval"}):  # a refusal from the core names the flag
                results = sim.run_points(scenarios, jobs=args.jobs,
                                         progress=point_progress("simulate", len(scenarios)), recordings=staged)
        except KeyboardInterrupt:
            made = sum(1 for s in files.staged if os.path.getsize(s.tmp))
            if made:
                print(f"incastlab simulate: stopped; the {made} files of the points that had finished were "
                      "removed with the rest: nothing written", file=sys.stderr)
            raise
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
            write_csv(df, args.csv, "--csv")
        if args.plot:
            first = scenarios[0]
            if first.is_flows():
                # the optimum is the incast's: every sender's bytes through the receiver's link
                per_sender = first.sru if first.block is None else first.block_part_bytes()
                plots.completion_vs_senders({first.label(): df}, args.plot,
                                            title=f"{first.workload}: {first.label()}",
                                            optimum_bytes_per_sender=per_sender if first.workload == "incast" else None,
                                            link_rate_bps=first.rate)
            else:
                title = (f"TCP incast: synchronized reads, RTT {first.model_dump()['rtt']}, "
                         f"{_stop_text(first)}")
                plots.goodput_vs_servers({first.label(): df}, args.plot, title=title, link_rate_bps=first.rate)
    report_truncated_captures(results, recordings, args.capture_limit)
    report_truncated_port_util(results, recordings)
    if outputs and not args.json:
        print("wrote " + ", ".join(f for f, _ in outputs), file=sys.stderr)
    return 0


def _stop_text(s) -> str:
    if s.is_flows():
        return "each point until its flows are delivered"
    if s.blocks is not None:
        return f"{plural(s.blocks, 'block')} per point"
    return f"{s.model_dump()['duration']} simulated per point"
