"""``incastlab doctor``: will this cluster collapse, why, and which fix (docs/doctor.md).

Values are taken as text and parsed by ``incastlab.doctor.describe``, so a refusal names
the flag (``--fan-in: '0' is not allowed; ...``), exit status 2, before anything runs.
"""

from __future__ import annotations

import json
import sys
import time

from ..errors import UsageError
from ..outfiles import check_writable, write_atomically


def register(subparsers) -> None:
    from .. import schema
    from ..diagnosis.defaults import DEFAULTS  # light: --help and a refused flag load no simulator

    STACKS = sorted(schema.PRESETS)

    d = {k: v[0] for k, v in DEFAULTS.items()}
    p = subparsers.add_parser(
        "doctor",
        help="will this cluster collapse under incast, why, and which fix (with the evidence)",
        description=("Describe a cluster in its own terms; the doctor screens it with closed-form bounds, "
                     "simulates the points that decide, and prints the verdict (collapse or not, the onset "
                     "fan-in, goodput and p99 block time, the mechanism), the fixes ranked by goodput at your "
                     "point with the exact setting and side effects, and the evidence. docs/doctor.md."),
    )
    p.add_argument("--rate", help=f"link rate (default {d['rate']})")
    p.add_argument("--rtt", help=f"round-trip propagation time (default {d['rtt']})")
    p.add_argument("--cable", help="instead of --rtt: cable lengths per tier from a server up to the switch where "
                                   "paths meet, e.g. 2m or 2m,30m; the RTT is 4 x their sum x 5 ns/m (propagation)")
    p.add_argument("--buffer", help=f"switch buffer per port (default {d['buffer']})")
    p.add_argument("--pool", help="instead of --buffer: the switch's shared buffer pool (dynamic thresholds)")
    p.add_argument("--fan-in", help=f"servers answering one read (default {d['fan_in']})")
    p.add_argument("--response", help=f"bytes each server returns per read (default {d['response']})")
    riak = p.add_argument_group("a Riak-like cluster (instead of --fan-in and --response; docs/doctor.md)")
    riak.add_argument("--get-rate", help="gets each node coordinates per second, e.g. 125 (with --reply-size)")
    riak.add_argument("--reply-size", help="bytes one replica returns per get, e.g. 100KB (with --get-rate)")
    riak.add_argument("--nodes", help="nodes in the cluster (default 20, the blog's cluster)")
    riak.add_argument("--n-val", "--replicas", dest="n_val", help="replicas each get asks (Riak's N; default 3)")
    riak.add_argument("--r", "--read-quorum", dest="r", help="replies a get waits for (Riak's R; default 2)")
    p.add_argument("--stack", "--preset", dest="stack",
                   help=f"TCP stack, one of the core's presets: {', '.join(STACKS)} (default {d['stack']}; "
                        "simulate --preset-table shows each)")
    p.add_argument("--this-host", action="store_true",
                   help="the stack is this machine's kernel: its sysctls (tcp_rto_min_us, congestion control, "
                        "SACK, timestamps), the default route's rto_min, the timer tick")
    p.add_argument("--rto-min", help="override the stack's minimum RTO")
    p.add_argument("--delayed-ack", help="override the stack's delayed-ACK timeout (0 = off)")
    p.add_argument("--cc", help="override the congestion control: newreno, cubic, dctcp")
    p.add_argument("--record", metavar="FILE",
                   help="a recording of the client's link: a `monitor --millisampler` or `simulate --millisampler` "
                        ".parquet (the fan-in per interval is read from it) or a `monitor --record` file (give "
                        "--fan-in); the block size from its bursts (--response overrides; --rate if the bursts "
                        "do not reach line rate)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--html", metavar="FILE", help="also write the report as an HTML page")
    p.add_argument("--jobs", help="parallel simulations (default: up to 2, the cores this process may use)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _jobs(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.isdigit() or not 1 <= int(text) <= 256:
        raise UsageError("--jobs", text, "a whole number of parallel simulations from 1 to 256")
    return int(text)


def run(args) -> int:
    from ..diagnosis import describe, diagnose
    from ..diagnosis.screen import screen

    if args.html is not None:
        check_writable(args.html, "--html", ("html", "htm"))
    jobs = _jobs(args.jobs)
    desc = dict(rate=args.rate, rtt=args.rtt, cable=args.cable, buffer=args.buffer, pool=args.pool,
                fan_in=args.fan_in, response=args.response, stack=args.stack, this_host=args.this_host,
                rto_min=args.rto_min, delayed_ack=args.delayed_ack, cc=args.cc, cli=True)
    riak = dict(get_rate=args.get_rate, reply_size=args.reply_size, nodes=args.nodes, n_val=args.n_val, r=args.r)
    t0 = time.monotonic()

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"doctor [{time.monotonic() - t0:5.1f} s] {msg}", file=sys.stderr, flush=True)

    if any(v is not None for v in riak.values()):
        from ..diagnosis.riak import describe_riak, diagnose_riak

        if args.record is not None:
            raise UsageError("--record", args.record, "no --record with --get-rate (a recording describes a read; "
                             "its note suggests a get rate to try)")
        report = diagnose_riak(describe_riak(**riak, **desc), jobs=jobs, progress=progress)
        return _emit(args, report)
    notes = []
    if args.record is not None:
        desc, notes = _from_recording(args, desc)
    cluster = describe(**desc)
    progress("screen: " + screen(cluster).text())
    report = diagnose(cluster, jobs=jobs, progress=progress)
    report.notes[:0] = notes
    return _emit(args, report)


def _emit(args, report) -> int:
    if args.html is not None:
        write_atomically(args.html, lambda tmp: open(tmp, "w").write(report.html()))
    if args.json:
        print(json.dumps(report.to_dict(), indent=1, default=str))
    else:
        print(report.text())
        if args.html is not None:
            print(f"wrote {args.html}")
    return 0


def _from_recording(args, desc: dict) -> tuple[dict, list[str]]:
    """The description a recording gives (``diagnosis/recording.py``): the line rate, the
    fan-in per interval when the file has it (else --fan-in is required), the response per
    server as the median burst over the fan-in (unless --response is given)."""
    from .. import units
    from ..diagnosis.defaults import DEFAULTS
    from ..diagnosis.cluster import cable_rtt_s, parse_cable
    from ..diagnosis.recording import has_fan_in, summarize

    if args.fan_in is None and not has_fan_in(args.record):
        raise UsageError("--fan-in", None, "the servers answering one read (this recording has no fan-in per "
                         "interval, a `monitor --record` file; required with it, or record with --millisampler)")
    rate = units.parse_rate(args.rate, "--rate") if args.rate is not None else None
    if args.cable is not None:
        rtt = cable_rtt_s(parse_cable(args.cable, "--cable"))
    else:
        rtt = units.parse_duration_ps(args.rtt if args.rtt is not None else DEFAULTS["rtt"][0], "--rtt") / 1e12
    try:
        s = summarize(args.record, rate, rtt)
    except UsageError as e:
        raise UsageError("--record", e.value, e.allowed) from None
    if args.fan_in is not None:
        try:
            n = int(args.fan_in)
        except ValueError:
            raise UsageError("--fan-in", args.fan_in, "a whole number of servers") from None
    elif s.fan_in is not None:
        n = s.fan_in
    else:
        raise UsageError("--fan-in", None, "the servers answering one read (no interval of this recording at line "
                         "rate has its flows counted)")
    desc = dict(desc, rate=s.line_rate_bps, fan_in=n)
    if args.response is None:
        desc["response"] = max(1, s.burst_bytes_median // max(n, 1))
    notes = ["from the recording: " + s.text()]
    notes += s.notes(n, None if args.response is None else units.parse_size(args.response, "--response"))
    return desc, notes
