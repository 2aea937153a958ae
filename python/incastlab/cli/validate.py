"""`incastlab validate`: the same scenario in the simulator and on the namespace testbed,
side by side with the ratio per point (needs root for the testbed). The simulator runs
the scenario with the "linux" preset for the testbed's --cc (cubic -> cc=cubic, reno ->
cc=newreno): the running kernel read item by item (SACK, RACK-TLP, PRR, timestamps, IW,
delayed ACK, RTOmin, jiffies), each with the simulator's field and whether it is modelled;
--preset-table prints it (docs/testbed.md, "Simulator vs testbed")."""

from __future__ import annotations

import json

from . import argtypes
from .scenario_args import flag_names
from ..units import PS_PER_S, format_rate, format_size

# validate's flags for the Scenario fields whose flag is not the field's own: a refusal
# names the flag typed (`--rtt 5` is refused as --rtt, not as the field rtt)
_OWN_FLAGS = {"servers": "--servers", "rwnd": "--rwnd-clamp"}


def _ratio(a, b):
    return None if not b else a / b


def cmd_validate(args) -> int:
    from ..plots import check_plot_path, goodput_vs_servers
    from ..presets import linux, linux_scenario, render, scenario_fields
    from ..sim import simulate
    from ..testbed import Topology, TopologySpec, Workload, run_point
    from ..testbed.shell import require_root
    from ..testbed.kernel import check_congestion
    from .testbed import _lock

    check_congestion(args.cc)  # before the simulator side: a cc this kernel lacks is refused at once
    rto_min_set = None if args.rto_min is None else args.rto_min / PS_PER_S  # the testbed's route rto_min
    preset = linux(cc=args.cc, quickack=args.quickack, rto_min_s=rto_min_set, rwnd_clamp=args.rwnd_clamp)
    if args.preset_table:
        print(render(preset, markdown=args.markdown))
        return 0
    plot = check_plot_path(args.plot) if args.plot else None
    require_root()
    rto_min_s = scenario_fields(preset)["rto_min"]  # the plot's title
    # the simulator side first: it cannot fail half-way through the testbed
    sims = {}
    for n in args.servers:
        with flag_names(_OWN_FLAGS):
            scn = linux_scenario(preset, servers=n, sru=args.sru, block=args.block, buffer=args.buffer,
                                 rate=args.rate, rtt_s=args.rtt / PS_PER_S, blocks=args.blocks)
            sims[n] = simulate(scn).to_dict()
    if not args.json:
        print("# the simulator runs the linux preset:")
        print(render(preset))
        print()
    lock = _lock(args.prefix)
    topo = Topology(TopologySpec(servers=max(args.servers), rate_bps=args.rate, buffer_bytes=args.buffer,
                                 rto_min_s=rto_min_set, prefix=args.prefix))
    work = Workload(blocks=args.blocks, sru_bytes=args.sru, block_bytes=args.block, quickack=args.quickack,
                    congestion=args.cc, rwnd_clamp_bytes=args.rwnd_clamp)
    rows = []
    try:
        topo.up()
        for n in args.servers:
            tb = run_point(topo, n, work)
            sim = sims[n]
            row = {
                "servers": n,
                "goodput_mbps_sim": sim["goodput_mbps"], "goodput_mbps_testbed": tb["goodput_mbps"],
                "goodput_ratio": _ratio(tb["goodput_mbps"], sim["goodput_mbps"]),
                "timeouts_sim": sim["timeouts"], "timeouts_testbed": tb["timeouts"],
                "drops_sim": sim["drops"], "drops_testbed": tb["drops"],
                "block_time_max_s_sim": sim["block_time_max_s"], "block_time_max_s_testbed": tb["block_time_max_s"],
                "simulator": sim, "testbed": tb,
                "preset": [{"item": it.what, "kernel": it.kernel, "simulator": it.simulator, "modelled": it.modelled}
                           for it in preset],
            }
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    finally:
        topo.down()
        lock.close()
    if not args.json:
        from ..table import render
        head = ["servers", "sim Mbps", "testbed Mbps", "ratio", "sim TO", "tb TO", "sim drops", "tb drops",
                "sim max ms", "tb max ms"]
        body = [[str(r["servers"]), f"{r['goodput_mbps_sim']:.0f}", f"{r['goodput_mbps_testbed']:.0f}",
                 "-" if r["goodput_ratio"] is None else f"{r['goodput_ratio']:.2f}",
                 str(r["timeouts_sim"]), str(r["timeouts_testbed"]), str(r["drops_sim"]), str(r["drops_testbed"]),
                 f"{r['block_time_max_s_sim'] * 1e3:.1f}", f"{r['block_time_max_s_testbed'] * 1e3:.1f}"]
                for r in rows]
        print(render(head, body))
    if plot:
        import pandas as pd
        frame = lambda key: pd.DataFrame({"servers": [r["servers"] for r in rows], "goodput_mbps": [r[key] for r in rows]})
        goodput_vs_servers({"simulator (linux preset)": frame("goodput_mbps_sim"),
                            "testbed (Linux TCP in namespaces)": frame("goodput_mbps_testbed")},
                           plot, title=f"simulator vs testbed, {format_rate(args.rate)}, buffer {format_size(args.buffer)}, RTOmin {rto_min_s * 1e3:g} ms",
                           link_rate_bps=args.rate)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("validate", help="the same scenario in the simulator and on the testbed, side by side",
                              description=__doc__)
    p.add_argument("--servers", type=argtypes.int_list("--servers", maximum=1000), default=[1, 2, 4, 8, 16],
                   help="server counts (default 1,2,4,8,16)")
    p.add_argument("--buffer", type=argtypes.size("--buffer", minimum=1514), default=64 * 1024, help="default 64KiB")
    p.add_argument("--rate", type=argtypes.rate("--rate", minimum=10**6), default=10**9,
                   help="at least 1Mbps (the testbed's tbf), default 1Gbps")
    p.add_argument("--rtt", type=argtypes.duration("--rtt"), default=100 * 10**6,
                   help="the simulator's round-trip propagation (default 100us; the namespaces' is tens of us)")
    p.add_argument("--rto-min", type=argtypes.duration("--rto-min"), default=None,
                   help="RTOmin on both sides (testbed: per-route rto_min; default 200ms)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--sru", type=argtypes.size("--sru"), default=256 * 1024, help="default 256KiB")
    size.add_argument("--block", type=argtypes.size("--block"), default=None, help="fixed-block mode")
    p.add_argument("--blocks", type=argtypes.positive_int("--blocks", maximum=10**6), default=40, help="default 40")
    p.add_argument("--quickack", action="store_true", help="no delayed ACK on either side")
    p.add_argument("--rwnd-clamp", type=argtypes.size("--rwnd-clamp", minimum=2048, maximum=2**31 - 1), default=None,
                   help="receive-window cap on both sides")
    p.add_argument("--cc", default="cubic", metavar="ALGO",
                   help="the testbed senders' congestion control: cubic or reno, which the simulator runs as "
                        "cc=cubic or cc=newreno (default cubic, Linux's default; set on the testbed's sockets "
                        "whatever the namespaces' default is)")
    p.add_argument("--preset-table", action="store_true",
                   help="print the linux preset for these flags (kernel value, simulator field, modelled) and exit")
    p.add_argument("--markdown", action="store_true", help="with --preset-table: as a markdown table")
    p.add_argument("--prefix", type=argtypes.testbed_prefix("--prefix"), default="iltb", help="testbed name prefix (default iltb)")
    p.add_argument("--plot", default=None, metavar="FILE", help="both goodput curves to FILE (.png, .svg, .pdf)")
    p.add_argument("--json", action="store_true", help="one JSON object per point (both results nested)")
    p.set_defaults(func=cmd_validate)
