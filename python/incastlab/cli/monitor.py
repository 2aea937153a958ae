"""``incastlab monitor``: microbursts, retransmission timeouts and an incast verdict for
one interface, once per second; ``incastlab monitor plot FILE`` draws a recording.
See docs/monitor.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

from ..errors import EnvironmentProblem, UsageError
from . import argtypes

_IN_NETNS_ENV = "INCASTLAB_MONITOR_NETNS"
# (least ps, most ps, what to say) of --interval and --duration
_INTERVAL = (10 * 10**6, 100 * 10**9, "10us to 100ms (one report per second)")
_DURATION = (10**12, 24 * 3600 * 10**12, "1s to 24h (one report per second)")
_FLOW_INTERVAL = (10**9, 10**12, "1ms to 1s")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "monitor",
        help="watch an interface for microbursts and incast timeouts",
        description="Poll an interface's byte/packet counters every ~100 us and print, once per second, "
                    "average and peak rates at 1 s, 100 ms, 10 ms, 1 ms and the finest achieved timescale, "
                    "TCP retransmission/timeout counters, qdisc drops, and an incast verdict.",
    )
    p.add_argument("--iface", help="interface to watch (default: the one of the default route)")
    # a report per second needs several samples in it (issue 11: 2s ran, then failed)
    p.add_argument("--interval", type=argtypes.duration("--interval", bounds=_INTERVAL), default=100_000_000,
                   help="sampling interval (default 100us; 10us to 100ms)")
    p.add_argument("--duration", type=argtypes.duration("--duration", bounds=_DURATION), default=10 * 10**12,
                   help="how long to watch, e.g. 10s, 10min, 24h (default 10s; 1s to 24h)")
    p.add_argument("--json", action="store_true", help="one JSON object per second, then a summary object")
    p.add_argument("--record", metavar="FILE", help="write the fine-grained intervals to FILE.parquet or FILE.csv")
    p.add_argument("--line-rate", type=argtypes.rate("--line-rate"),
                   help="link rate for 'bursts at line rate' (default: the NIC's speed; unknown for virtual links)")
    p.add_argument("--netns", help="watch an interface inside this named network namespace (root)")
    p.add_argument("--tcp-netns", metavar="NAME[,NAME...]",
                   help="sum TCP counters over these namespaces instead of the interface's: timeouts happen "
                        "at the senders ('.' = the interface's namespace)")
    p.add_argument("--qdisc-dev", metavar="DEV", help="read qdisc drops of DEV instead of --iface "
                   "(e.g. the switch port towards this host)")
    p.add_argument("--qdisc-netns", metavar="NAME", help="namespace of --qdisc-dev (root)")
    p.add_argument("--source", choices=["auto", "ebpf", "sysfs"], default="auto",
                   help="where counting happens: ebpf = 100 us buckets in the kernel (tc hooks; needs root, "
                        "Linux >= 6.6); sysfs = a native poller of /sys/class/net/IF/statistics; "
                        "auto (default) = ebpf for hardware NICs where allowed, sysfs for software "
                        "devices such as veth, whose counters move per packet at transmit time")
    p.add_argument("--spin", type=argtypes.duration("--spin", allow_zero=True), default=0,
                   help="busy-wait this long before each deadline for finer timing (burns CPU; default 0)")
    p.add_argument("--flow-interval", type=argtypes.duration("--flow-interval", bounds=_FLOW_INTERVAL),
                   default=10 * 10**9,
                   help="how often the TCP sockets are read for the fan-in per interval, stalls and active "
                        "flows (default 10ms; 1ms to 1s)")
    p.add_argument("--millisampler", metavar="FILE.parquet",
                   help="write Millisampler-style series (bytes in/out, active flows, retransmissions, ECN marks "
                        "at 100us, 1ms, 10ms; docs/monitor.md) in the schema `simulate --millisampler` writes")
    p.set_defaults(func=run_monitor)
    sub = p.add_subparsers(dest="monitor_action", metavar="ACTION")
    sub.required = False
    pp = sub.add_parser("plot", help="draw rate over time at several resolutions from a --record file",
                        description="Draw rx/tx rate over time at 1 s, 100 ms, 10 ms, 1 ms and the finest "
                                    "recorded timescale from a file written by `incastlab monitor --record`.")
    pp.add_argument("file", metavar="FILE", help="a .parquet or .csv written by --record")
    pp.add_argument("--out", metavar="PNG", help="image to write (default: FILE with .png)")
    pp.add_argument("--json", action="store_true", help="print what was drawn as JSON")
    pp.set_defaults(func=run_plot)
    pt = sub.add_parser("truth", help="judge the verdict against simulated ground truth: a confusion matrix per "
                                      "utilization band",
                        description="Simulate the labelled set (docs/monitor.md, 'How often the verdict is right'): "
                                    "machine-seconds whose truth is known from the simulator's events, judged by "
                                    "the verdict and by the rule before it, counted per utilization band.")
    pt.add_argument("--seeds", default="held-out",
                    help="'design' (the seeds the rule was looked at on), 'held-out' (default: the ones that "
                         "count), or seed numbers, e.g. 4,5")
    pt.add_argument("--quick", action="store_true", help="a handful of runs of 2 s (a first look; ~1.5 min)")
    pt.add_argument("--jobs", type=int, default=2, help="simulations at once (default 2)")
    pt.add_argument("--out", metavar="FILE.csv", help="also write every judged machine-second")
    pt.add_argument("--json", action="store_true", help="print both matrices as one JSON object")
    pt.set_defaults(func=run_truth)


def run_plot(args) -> int:
    from ..monitor import plot

    from ..outfiles import check_writable

    out = args.out or os.path.splitext(args.file)[0] + ".png"
    check_writable(out, "--out", ("png",))
    info = plot.plot(args.file, out)
    if args.json:
        print(json.dumps(info))
    else:
        print(f"wrote {out} (median sampling interval {info['median_interval_us']:.0f} us)")
    return 0


def _truth_seeds(text: str) -> tuple[int, ...]:
    from .. import truth

    if text == "design":
        return truth.DESIGN_SEEDS
    if text == "held-out":
        return truth.HELD_OUT_SEEDS
    try:
        seeds = tuple(int(x) for x in text.split(","))
    except ValueError:
        seeds = ()
    if not seeds or any(x < 0 for x in seeds):
        raise UsageError("--seeds", text, "design, held-out, or seed numbers such as 4,5")
    return seeds


def run_truth(args) -> int:
    from .. import truth

    seeds = _truth_seeds(args.seeds)
    if not 1 <= args.jobs <= 64:
        raise UsageError("--jobs", args.jobs, "1 to 64")
    if args.out:
        from ..outfiles import check_writable

        check_writable(args.out, "--out", ("csv",))

    def progress(done: int, total: int) -> None:
        print(f"\r{done}/{total} runs", end="", file=sys.stderr, flush=True)

    df = truth.labelled_set(seeds, quick=args.quick, jobs=args.jobs, progress=progress)
    print(file=sys.stderr)
    if args.out:
        from ..outfiles import write_atomically

        write_atomically(args.out, lambda tmp: df.to_csv(tmp, index=False))
    if args.json:
        print(truth.summary_json(df))
        return 0
    print(f"{len(df)} machine-seconds, seeds {','.join(map(str, seeds))}; `incast` against the ground truth:")
    print(truth.markdown(truth.confusion(df, "level"), truth.confusion(df, "ratio_level")))
    return 0


def _netns_names(text: str, flag: str) -> list[str | None]:
    out: list[str | None] = []
    for name in text.split(","):
        name = name.strip()
        if name == ".":
            out.append(None)
        elif name and "/" not in name and os.path.exists(f"/run/netns/{name}"):
            out.append(name)
        else:
            raise UsageError(flag, text, "names listed by `ip netns list` (comma-separated; '.' = this one)")
    return out


def _can_enter_netns() -> bool:
    """Whether this process holds CAP_SYS_ADMIN (needed by setns), from /proc/self/status."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) & (1 << 21))
    except (OSError, ValueError):
        pass
    return os.geteuid() == 0


def _reexec_in_netns(name: str) -> int:
    """Run this same command inside the namespace, so sysfs, /proc/net and tc all show the
    interface's namespace (`ip netns exec` also remounts /sys for it)."""
    if "/" in name or not os.path.exists(f"/run/netns/{name}"):
        raise UsageError("--netns", name, "a name listed by `ip netns list`")
    if not _can_enter_netns():
        raise EnvironmentProblem("--netns needs root (entering a network namespace); run it as root or "
                                 "use `ip netns exec` yourself")
    ip = shutil.which("ip") or "/usr/sbin/ip"
    env = dict(os.environ, **{_IN_NETNS_ENV: name})
    # the very command line we were started with (console script, python -m, a wrapper)
    argv = [ip, "netns", "exec", name, sys.executable, *sys.orig_argv[1:]]
    sys.stdout.flush()
    os.execve(ip, argv, env)
    return 2  # not reached


def run_monitor(args) -> int:
    from ..monitor import record as record_mod
    from ..monitor.runner import Monitor, MonitorConfig, default_iface, sysfs_line_rate_bps

    interval_ns = args.interval // 1000  # in range: checked as the arguments were parsed
    duration_ns = args.duration // 1000
    if args.record:
        record_mod.check_path(args.record)
    if args.millisampler:
        from ..millisampler import check_path

        check_path(args.millisampler, "--millisampler")
    tcp_netns = _netns_names(args.tcp_netns, "--tcp-netns") if args.tcp_netns else [None]
    if args.qdisc_netns:
        _netns_names(args.qdisc_netns, "--qdisc-netns")
    if args.netns and os.environ.get(_IN_NETNS_ENV) != args.netns:
        return _reexec_in_netns(args.netns)
    iface = args.iface or default_iface()
    line_rate = float(args.line_rate) if args.line_rate else sysfs_line_rate_bps(iface)
    cfg = MonitorConfig(iface=iface, interval_ns=interval_ns, duration_ns=duration_ns, line_rate_bps=line_rate,
                        tcp_netns=tcp_netns, qdisc_dev=args.qdisc_dev, qdisc_netns=args.qdisc_netns,
                        spin_ns=args.spin // 1000, netns=args.netns, source=args.source,
                        flow_interval_ns=args.flow_interval // 1000)
    recorder = record_mod.Recorder(args.record) if args.record else None
    emit = _emit_json if args.json else _emit_table
    monitor = Monitor(cfg, recorder)
    if args.millisampler:
        from ..millisampler import MonitorWriter

        monitor.millisampler = MonitorWriter(args.millisampler, iface)
    stop: KeyboardInterrupt | None = None
    try:
        summary = monitor.run(emit)
    except KeyboardInterrupt as e:  # Ctrl-C ends a long watch: keep the recording, print the summary
        summary, stop = monitor.summary(), e
    except BaseException:
        if recorder is not None:
            recorder.abort()
        raise
    if recorder is not None:
        recorder.close()
    if monitor.millisampler is not None:
        monitor.millisampler.close()
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        _print_summary(summary, args.record)
    if stop is not None:
        raise stop  # exit status 128 + the signal, as for every command (docs/faults.md)
    return 0


def _emit_json(rec: dict) -> None:
    print(json.dumps(rec), flush=True)


def _fmt_rate(r: dict | None) -> str:
    if r is None:
        return "-"
    ratio = "-" if r["ratio"] is None else f"{r['ratio']:.1f}x"
    return f"{r['peak_mbps']:8.1f} ({ratio})"


def _emit_table(rec: dict) -> None:
    iv = rec["interval"]
    print(f"t={rec['t_s']:.1f}s  {rec['iface']}  {rec['source']}: interval median {iv['median_us']:.0f} us, p99 {iv['p99_us']:.0f} us,"
          f" jitter {iv['jitter_us']:.0f} us, {iv['samples']} samples"
          + (f", {iv['missed']} missed" if iv["missed"] else "")
          + (f", {iv['uncertain']} mistimed dropped" if iv["uncertain"] else "")
          + "".join(f"; {d} counters refresh every ~{us:.0f} us" for d, us in iv["driver_refresh_us"].items()))
    for d in ("rx", "tx"):
        scales = [k for k in rec[d] if k not in ("packets", "avg_mbps", "1s")]
        avg = rec[d]["avg_mbps"]
        finest = f"finest ({rec['interval']['finest_us']:.0f}us)"
        cols = "  ".join(f"{finest if k == 'finest' else k} {_fmt_rate(rec[d][k])}" for k in scales)
        print(f"  {d}  avg {avg:8.1f} Mbit/s  peak Mbit/s (peak/avg): {cols}")
    tcp = rec["tcp"]

    def n(v):
        return "?" if v is None else str(v)

    qd = ", ".join(f"{q} {v}" for q, v in rec["qdisc_drops"].items()) or "?"
    print(f"  tcp/s  retrans {n(tcp['retrans_segs'])} (d-sacked {n(tcp['dsack_recv_segs'])})  rto timeouts "
          f"{n(tcp['rto_timeouts'])}  fast retrans {n(tcp['fast_retrans'])}  spurious rto {n(tcp['spurious_rtos'])}  listen drops {n(tcp['listen_drops'])}"
          f"  | qdisc drops/s {qd}")
    if rec["tcp_top_senders"]:
        top = ", ".join(f"{t['sender']} {t['bytes'] / 1e6:.1f} MB" for t in rec["tcp_top_senders"])
        print(f"  tcp senders {rec['tcp_senders']}; largest: {top}")
    if rec["ecn_ce"] and any(rec["ecn_ce"].values()):
        print(f"  ECN CE-marked packets/s: rx {rec['ecn_ce']['rx']}  tx {rec['ecn_ce']['tx']}")
    fanin = rec.get("fanin")
    if fanin:
        print(f"  fan-in: at most {fanin['senders']} TCP senders within one {fanin['interval_ms']:g} ms at line rate"
              + (f"; {rec['stalled_senders']} resumed after 190 ms or more of silence" if rec.get("stalled_senders")
                 else ""))
    print(f"  verdict: {rec['verdict']} ({rec['evidence']}); the peak/average rule before it: "
          f"{rec['verdict_ratio_rule']}", flush=True)


def _print_summary(s: dict, record_path: str | None) -> None:
    iv = s["interval"]
    stopped = f" (stopped by {s['stopped_by']})" if s.get("stopped_by") else ""
    print(f"summary: {s['seconds']} s on {s['iface']}{stopped}, {s['incast_seconds']} s judged incast; {s['source']}: "
          f"{iv['statement']} (median {iv['median_us']} us, p99 {iv['p99_us']} us, jitter {iv['jitter_us']} us, "
          f"{iv['samples']} intervals, {iv['missed']} missed, {iv['uncertain']} mistimed readings dropped)")
    if s["counter_events"]["wraps"] or s["counter_events"]["resets"]:
        print(f"  counter wraps {s['counter_events']['wraps']}, resets {s['counter_events']['resets']} "
              "(reset intervals counted as 0, never negative)")
    for what, why in s["unavailable"].items():
        print(f"  could not read {what}: {why}")
    if record_path:
        print(f"  recorded the intervals to {record_path}")
