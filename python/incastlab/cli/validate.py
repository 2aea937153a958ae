"""`incastlab validate`: the same scenario in the simulator and on the namespace testbed,
side by side with the ratio per point (needs root for the testbed). The simulator runs
the scenario with the "linux" preset for the testbed's --cc (cubic -> cc=cubic, reno ->
cc=newreno): the running kernel read item by item (SACK, RACK-TLP, PRR, timestamps, IW,
delayed ACK, RTOmin, jiffies), each with the simulator's field and whether it is modelled,
and the testbed's setting (its tbf bottleneck as the simulator's shaper, its links' speed,
the bytes tbf counts per frame); --preset-table prints it (docs/testbed.md, "Simulator vs
testbed"). --trace DIR captures every testbed point and writes both sides' per-event traces
for python -m incastlab.peers.tracediff (docs/testbed.md, "Capture and trace").
--measured-think-times runs the simulator a second time per point with the servers' think times
measured from that point's capture (``testbed.start_spread``): the testbed's servers start
tens of microseconds apart, the simulator's at once (docs/testbed.md, "The servers' start
spread, measured per run").
--sim-seeds N (with --measured-think-times) runs that simulation with N seeds, each drawing
the think times anew, and reports the spread and whether the testbed's run lies inside it
(``incastlab.seed_spread``): where incast starts one run is one draw of a wide distribution,
on either side (docs/testbed.md, "The simulator's spread over seeds").
--rtt measured gives the simulator each point's round trip as its capture shows it
(``testbed.round_trip``): the namespaces' packets cross in microseconds, not the 100 us of
--rtt's default (docs/testbed.md, "The round trip, measured per run").
--rerun FILE ... runs the simulator side of saved --json rows again with this build, no
testbed and no root (``validate_rerun``): a simulator change judged on the same testbed runs
(docs/testbed.md, "The testbed against itself")."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from . import argtypes
from .scenario_args import flag_names
from ..units import PS_PER_S, format_rate, format_size

# validate's flags for the Scenario fields whose flag is not the field's own: a refusal
# names the flag typed (`--rtt 5` is refused as --rtt, not as the field rtt)
_OWN_FLAGS = {"servers": "--servers", "rwnd": "--rwnd-clamp", "shaper_rate": "--rate", "shaper_burst": "--burst"}
# --rtt's word for "read each point's round trip from its capture"
MEASURED = "measured"
# the round trip the scenarios are checked with before the testbed has measured one
_RTT_BEFORE_MEASURED_PS = 100 * 10**6


def _ratio(a, b):
    return None if not b else a / b


def _preset(args, kernel=None, client=None) -> list:
    """The linux preset for these flags, read in the root namespace or (`kernel`, `client`)
    in the testbed's, with the testbed's own rows."""
    from ..presets import linux, testbed
    rto_min_set = None if args.rto_min is None else args.rto_min / PS_PER_S
    delack_max = None if args.delack_max is None else args.delack_max / PS_PER_S
    items = linux(cc=args.cc, quickack=args.quickack, rto_min_s=rto_min_set, rto_min_via=args.rto_min_via,
                  delack_max_s=delack_max, rwnd_clamp=args.rwnd_clamp, kernel=kernel, client=client)
    stamps = next(it.fields["timestamps"] for it in items if "timestamps" in it.fields)
    return items + testbed(rate_bps=args.rate, buffer_bytes=args.buffer, burst_bytes=args.burst, timestamps=stamps,
                           measured_think_times=args.measured_think_times,
                           rtt_s=None if args.rtt == MEASURED else args.rtt / PS_PER_S, cpu_idle=args.cpu_idle)


def _scenarios(args, preset) -> dict:
    from ..presets import linux_scenario
    rtt_ps = _RTT_BEFORE_MEASURED_PS if args.rtt == MEASURED else args.rtt
    with flag_names(_OWN_FLAGS):
        return {n: linux_scenario(preset, servers=n, sru=args.sru, block=args.block, buffer=args.buffer,
                                  rate=args.rate, rtt_s=rtt_ps / PS_PER_S, blocks=args.blocks)
                for n in args.servers}


def _with_measured_rtt(scn, trace: str) -> tuple:
    """The scenario with the round trip read from the point's testbed trace, and what was
    measured (``testbed.round_trip``); the scenario unchanged when the capture has no
    sample of a half."""
    from ..scenario import Scenario
    from ..testbed import round_trip
    from ..units import exact_duration
    native = scn.to_native()
    h = round_trip.halves(trace)
    rtt_ps = round_trip.simulator_rtt_ps(h, link_rate_bps=native["rate_bps"],
                                         data_frame_bytes=native["mss_bytes"] + native["header_bytes"],
                                         ack_frame_bytes=native["header_bytes"])
    if rtt_ps is None:
        return scn, round_trip.summary(h, None)
    return Scenario(**{**scn.model_dump(), "rtt": exact_duration(rtt_ps)}), round_trip.summary(h, rtt_ps)


def _with_measured_think_times(scn, trace: str, blocks: int, sim_trace: str | None, seeds: int = 1) -> dict:
    """The point's start spread read from the testbed's trace, and the simulator's result
    with the servers' think times drawn from it (``testbed.start_spread``); with ``seeds`` >
    1 also the spread of that run over as many seeds (``seed_spread``)."""
    from ..recording import Recording
    from ..scenario import Scenario
    from ..sim import simulate
    from ..testbed import start_spread
    from ..units import exact_duration
    starts = start_spread.block_starts(trace, blocks)
    think = start_spread.think_quantiles(start_spread.think_times_ps(starts))
    out = {"start_spread": start_spread.summary(starts), "think_times": None, "simulator_think": None,
           "scenario_think": None,
           "goodput_mbps_sim_think": None, "timeouts_sim_think": None, "goodput_ratio_think": None}
    if not think:  # no block started in the capture: nothing measured to run with
        return out
    out["think_times"] = ",".join(exact_duration(ps) for ps in think)
    rec = Recording(events=sim_trace) if sim_trace else None
    think_scn = Scenario(**{**scn.model_dump(), "think_times": out["think_times"]})
    sim = simulate(think_scn, recording=rec).to_dict()
    out.update(scenario_think=think_scn.model_dump(), simulator_think=sim, goodput_mbps_sim_think=sim["goodput_mbps"],
               timeouts_sim_think=sim["timeouts"])
    if seeds > 1:
        from ..seed_spread import over_seeds
        out["think_seeds"] = over_seeds(think_scn, seeds, first=sim)
    return out


def cmd_validate(args) -> int:
    from ..plots import check_plot_path
    from ..presets import Kernel, render, scenario_fields
    from ..recording import Recording
    from ..sim import simulate
    from ..testbed import Topology, TopologySpec, Workload, run_point
    from ..testbed.names import CLIENT_ADDR, server_addr
    from ..testbed.shell import require_root
    from ..testbed.kernel import check_congestion
    from . import workload_args
    from .testbed import _lock

    if args.rerun:
        return _cmd_rerun(args)
    check_congestion(args.cc)  # before the simulator side: a cc this kernel lacks is refused at once
    workload_args.check_kernel_options(args)
    check_sim_seeds(args)
    preset = _preset(args)
    if args.preset_table:
        print(render(preset, markdown=args.markdown))
        return 0
    plot = check_plot_path(args.plot) if args.plot else None
    trace_dir = check_trace_dir(args.trace, "--trace") if args.trace else None
    require_root()
    _scenarios(args, preset)  # refuse a scenario the simulator refuses before building anything
    rto_min_s = scenario_fields(preset)["rto_min"]  # the plot's title
    lock = _lock(args.prefix)
    rto_min_set = None if args.rto_min is None else args.rto_min / PS_PER_S
    topo = Topology(TopologySpec(servers=max(args.servers), rate_bps=args.rate, buffer_bytes=args.buffer,
                                 rto_min_s=rto_min_set, rto_min_via=args.rto_min_via, burst_bytes=args.burst,
                                 prefix=args.prefix, cpu_idle=args.cpu_idle))
    work = Workload(blocks=args.blocks, sru_bytes=args.sru, block_bytes=args.block, quickack=args.quickack,
                    delack_max_s=None if args.delack_max is None else args.delack_max / PS_PER_S,
                    congestion=args.cc, rwnd_clamp_bytes=args.rwnd_clamp)
    rows = []
    measured_rtt = args.rtt == MEASURED
    capture_tmp = None
    if (args.measured_think_times or measured_rtt) and trace_dir is None:  # read from a capture: a temporary one
        capture_tmp = tempfile.TemporaryDirectory(prefix="incastlab-capture-")
    capture_dir = trace_dir or (Path(capture_tmp.name) if capture_tmp else None)
    try:
        topo.up()
        # the kernel as the testbed's sockets see it: a server's namespace and the client's
        names = topo.names
        preset = _preset(args, Kernel.of_netns(names.server_ns(1), CLIENT_ADDR),
                         Kernel.of_netns(names.client_ns, server_addr(1)))
        sims = {}
        scenarios = _scenarios(args, preset)
        sim_trace = lambda n: Recording(events=str(trace_dir / f"sim-n{n}.csv")) if trace_dir else None
        if not measured_rtt:  # with a measured round trip, each point's simulator run waits for its capture
            for n, scn in scenarios.items():
                sims[n] = simulate(scn, recording=sim_trace(n)).to_dict()
        if not args.json:
            print("# the simulator runs the linux preset:")
            print(render(preset))
            print()
        for n in args.servers:
            capture = str(capture_dir / f"testbed-n{n}") if capture_dir else None
            tb = run_point(topo, n, work, capture=capture)
            measured = {}
            if measured_rtt:
                scenarios[n], measured["round_trip"] = _with_measured_rtt(scenarios[n], tb["trace"])
                sims[n] = simulate(scenarios[n], recording=sim_trace(n)).to_dict()
            sim = sims[n]
            row = {
                "servers": n,
                "goodput_mbps_sim": sim["goodput_mbps"], "goodput_mbps_testbed": tb["goodput_mbps"],
                "goodput_ratio": _ratio(tb["goodput_mbps"], sim["goodput_mbps"]),
                "timeouts_sim": sim["timeouts"], "timeouts_testbed": tb["timeouts"],
                "drops_sim": sim["drops"], "drops_testbed": tb["drops"],
                "block_time_max_s_sim": sim["block_time_max_s"], "block_time_max_s_testbed": tb["block_time_max_s"],
                "simulator": sim, "testbed": tb,
                "scenario": scenarios[n].model_dump(),  # what `validate --rerun` runs again
                "preset": [{"item": it.what, "kernel": it.kernel, "simulator": it.simulator, "modelled": it.modelled}
                           for it in preset],
                **measured,
            }
            if args.measured_think_times:
                think_trace = str(trace_dir / f"sim-think-n{n}.csv") if trace_dir else None
                row.update(_with_measured_think_times(scenarios[n], tb["trace"], args.blocks, think_trace,
                                                      args.sim_seeds))
                row["goodput_ratio_think"] = _ratio(tb["goodput_mbps"], row["goodput_mbps_sim_think"])
                if row.get("think_seeds"):
                    from ..seed_spread import inside
                    row["think_seeds"]["testbed_inside"] = inside(tb["goodput_mbps"], tb["timeouts"],
                                                                  row["think_seeds"])
            if trace_dir:
                row["traces"] = {"simulator": str(trace_dir / f"sim-n{n}.csv"), "testbed": tb["trace"]}
                if args.measured_think_times:
                    row["traces"]["simulator_think"] = think_trace
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    finally:
        topo.down()
        lock.close()
        if capture_tmp is not None:
            capture_tmp.cleanup()
    if not args.json:
        _print_table(rows, args.measured_think_times, args.sim_seeds, measured_rtt)
        if trace_dir:
            n = args.servers[0]
            print(f"\ntraces in {trace_dir}; compare one block, e.g.:\n  python -m incastlab.peers.tracediff "
                  f"{trace_dir / f'testbed-n{n}.csv'} {trace_dir / f'sim-n{n}.csv'} --rate {format_rate(args.rate)} "
                  f"--block 1")
    if plot:
        _plot(rows, plot, args.measured_think_times, measured_rtt, args.rate, args.buffer, rto_min_s)
    return 0


def _print_table(rows: list, think: bool, sim_seeds: int, measured_rtt: bool) -> None:
    from ..table import render
    head = ["servers", "sim Mbps", "testbed Mbps", "ratio", "sim TO", "tb TO", "sim drops", "tb drops",
            "sim max ms", "tb max ms"]
    body = [[str(r["servers"]), f"{r['goodput_mbps_sim']:.0f}", f"{r['goodput_mbps_testbed']:.0f}",
             "-" if r["goodput_ratio"] is None else f"{r['goodput_ratio']:.2f}",
             str(r["timeouts_sim"]), str(r["timeouts_testbed"]), str(r["drops_sim"]), str(r["drops_testbed"]),
             f"{r['block_time_max_s_sim'] * 1e3:.1f}", f"{r['block_time_max_s_testbed'] * 1e3:.1f}"]
            for r in rows]
    if think:  # each beside its plain-simulator column, the spread last
        fmt = lambda v, spec: "-" if v is None else format(v, spec)
        head[5:5] = ["sim+think TO"]
        head[4:4] = ["sim+think Mbps", "think ratio"]
        head.append("start spread p50/p90 us")
        for r, b in zip(rows, body):
            sp = r["start_spread"]
            b[5:5] = [fmt(r["timeouts_sim_think"], "d")]
            b[4:4] = [fmt(r["goodput_mbps_sim_think"], ".0f"), fmt(r["goodput_ratio_think"], ".2f")]
            b.append(f"{fmt(sp['start_offset_us_p50'], '.0f')}/{fmt(sp['start_offset_us_p90'], '.0f')}")
        if sim_seeds > 1:  # the think-time run's spread over seeds, and the testbed's run against it
            from ..seed_spread import describe
            head += [f"sim+think Mbps, {sim_seeds} seeds", "TO, seeds", "tb inside"]
            for r, b in zip(rows, body):
                sd = r.get("think_seeds")
                b += ["-", "-", "-"] if not sd else [describe(sd, "goodput_mbps", ".0f"),
                                                     describe(sd, "timeouts", "g"),
                                                     "yes" if sd["testbed_inside"] else "no"]
    if measured_rtt:
        head.append("sim RTT us")
        for r, b in zip(rows, body):
            rtt_s = r["round_trip"]["simulator_rtt_s"]
            b.append("-" if rtt_s is None else f"{rtt_s * 1e6:.1f}")
    print(render(head, body))


def _plot(rows: list, plot, think: bool, measured_rtt: bool, rate: int, buffer: int, rto_min_s: float) -> None:
    import pandas as pd
    from ..plots import goodput_vs_servers
    frame = lambda key: pd.DataFrame({"servers": [r["servers"] for r in rows], "goodput_mbps": [r[key] for r in rows]})
    sim_label = "simulator (linux preset, each point's measured round trip)" if measured_rtt else "simulator (linux preset)"
    curves = {sim_label: frame("goodput_mbps_sim"),
              "testbed (Linux TCP in namespaces)": frame("goodput_mbps_testbed")}
    if think:
        curves["simulator with the testbed's measured think times too" if measured_rtt
               else "simulator with the testbed's measured think times"] = frame("goodput_mbps_sim_think")
    goodput_vs_servers(curves,
                       plot, title=f"simulator vs testbed, {format_rate(rate)}, buffer {format_size(buffer)}, RTOmin {rto_min_s * 1e3:g} ms",
                       link_rate_bps=rate)


def _cmd_rerun(args) -> int:
    """--rerun: this build's simulator on saved rows (``validate_rerun``); one JSON row per
    point with --json, else the table; --plot as for a run."""
    from ..plots import check_plot_path
    from .validate_rerun import rerun
    plot = check_plot_path(args.plot) if args.plot else None
    rows = []
    for row in rerun(args.rerun):
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    think = any(r.get("simulator_think") for r in rows)
    if not args.json:
        seeds = max((len(r["think_seeds"]["seeds"]) for r in rows if r.get("think_seeds")), default=1)
        _print_table(rows, think, seeds, all(r.get("round_trip") for r in rows))
    if plot:
        tb = rows[0]["testbed"]
        _plot(rows, plot, think, all(r.get("round_trip") for r in rows), tb["rate_bps"], tb["buffer_bytes"],
              tb["rto_min_s"])
    return 0


def check_sim_seeds(args) -> None:
    """--sim-seeds draws the think times anew per seed: without --measured-think-times the
    simulator's servers start in lock step and every seed gives the same run."""
    from ..errors import UsageError
    if args.sim_seeds > 1 and not args.measured_think_times:
        raise UsageError("--sim-seeds", str(args.sim_seeds),
                         "1 without --measured-think-times (without think times every seed gives the same run)")


def check_trace_dir(path: str, flag: str):
    """The directory the traces go to: made if missing (its parent must exist), and writable."""
    import os
    from pathlib import Path
    from ..errors import UsageError
    d = Path(path)
    if d.exists() and not d.is_dir():
        raise UsageError(flag, path, "a directory (this is a file)")
    if not d.exists():
        if not d.parent.is_dir():
            raise UsageError(flag, path, f"a directory in an existing one ({d.parent} does not exist)")
        d.mkdir()
    if not os.access(d, os.W_OK):
        raise UsageError(flag, path, "a writable directory")
    return d


def register(subparsers) -> None:
    from .testbed import add_cpu_idle
    p = subparsers.add_parser("validate", help="the same scenario in the simulator and on the testbed, side by side",
                              description=__doc__)
    p.add_argument("--servers", type=argtypes.int_list("--servers", maximum=1000), default=[1, 2, 4, 8, 16],
                   help="server counts (default 1,2,4,8,16)")
    p.add_argument("--buffer", type=argtypes.size("--buffer", minimum=1514), default=64 * 1024, help="default 64KiB")
    p.add_argument("--rate", type=argtypes.rate("--rate", minimum=10**6), default=10**9,
                   help="at least 1Mbps (the testbed's tbf), default 1Gbps")
    p.add_argument("--rtt", type=argtypes.duration_or_word("--rtt", MEASURED), default=100 * 10**6,
                   help="the simulator's round-trip propagation (default 100us), or 'measured': each point's, read "
                        "from its capture (to a temporary directory unless --trace is given; docs/testbed.md)")
    p.add_argument("--rto-min", type=argtypes.duration("--rto-min"), default=None,
                   help="the senders' RTOmin on both sides (default: the kernel's, 200ms)")
    p.add_argument("--rto-min-via", choices=["route", "sysctl", "socket"], default="route",
                   help="how the testbed sets --rto-min: a route's rto_min (default), net.ipv4.tcp_rto_min_us in "
                        "each server namespace, or TCP_RTO_MIN_US (Linux 6.15+); the preset says which wins")
    p.add_argument("--delack-max", type=argtypes.duration("--delack-max"), default=None, metavar="DURATION",
                   help="the client delays an ACK at most this long on both sides (testbed: TCP_DELACK_MAX_US, "
                        "Linux 6.15+)")
    p.add_argument("--burst", type=argtypes.size("--burst", minimum=1514), default=4 * 1514,
                   help="the testbed's tbf bucket, which the simulator's shaper takes too (default 4 frames, 6056 B)")
    add_cpu_idle(p)
    p.add_argument("--trace", default=None, metavar="DIR",
                   help="capture every testbed point packet by packet and write both sides' per-event traces to "
                        "DIR (testbed-nN.csv, sim-nN.csv; python -m incastlab.peers.tracediff compares them)")
    p.add_argument("--sim-seeds", type=argtypes.positive_int("--sim-seeds", maximum=1000), default=1, metavar="N",
                   help="with --measured-think-times: run that simulation with N seeds (each draws the think times "
                        "anew) and report its spread and whether the testbed's run lies inside it (default 1)")
    p.add_argument("--measured-think-times", action="store_true",
                   help="also run the simulator with each point's servers' think times measured from the testbed's "
                        "capture (their start spread; captured to a temporary directory unless --trace is given)")
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
    p.add_argument("--rerun", nargs="+", default=None, metavar="FILE",
                   help="no testbed: run the simulator side of saved `validate --json` rows again with this build, "
                        "each row's testbed side kept (its round trip, think times and seeds as saved; a field "
                        "added since takes the linux preset's value); with --json, --plot; the other flags are "
                        "the rows' own")
    p.set_defaults(func=cmd_validate)
