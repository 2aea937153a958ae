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
    p.add_argument("--buffer", help=f"switch buffer per port (default {d['buffer']})")
    p.add_argument("--pool", help="instead of --buffer: the switch's shared buffer pool (dynamic thresholds)")
    p.add_argument("--fan-in", help=f"servers answering one read (default {d['fan_in']})")
    p.add_argument("--response", help=f"bytes each server returns per read (default {d['response']})")
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
                   help="a `monitor --record` file of the client's link: the block size from its bursts "
                        "(give --fan-in; --rate if the bursts do not reach line rate)")
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
    desc = dict(rate=args.rate, rtt=args.rtt, buffer=args.buffer, pool=args.pool, fan_in=args.fan_in,
                response=args.response, stack=args.stack, this_host=args.this_host, rto_min=args.rto_min,
                delayed_ack=args.delayed_ack, cc=args.cc, cli=True)
    note = None
    if args.record is not None:
        desc, note = _from_recording(args, desc)
    cluster = describe(**desc)
    t0 = time.monotonic()

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"doctor [{time.monotonic() - t0:5.1f} s] {msg}", file=sys.stderr, flush=True)

    progress("screen: " + screen(cluster).text())
    report = diagnose(cluster, jobs=jobs, progress=progress)
    if note:
        report.notes.insert(0, note)
    if args.html is not None:
        write_atomically(args.html, lambda tmp: open(tmp, "w").write(report.html()))
    if args.json:
        print(json.dumps(report.to_dict(), indent=1, default=str))
    else:
        print(report.text())
        if args.html is not None:
            print(f"wrote {args.html}")
    return 0


def _from_recording(args, desc: dict) -> tuple[dict, str]:
    """The block size from a recording's bursts; the response per server is it over --fan-in."""
    from .. import units
    from ..diagnosis.defaults import DEFAULTS
    from ..diagnosis.recording import summarize

    if args.response is not None:
        raise UsageError("--response", args.response, "no --response with --record (the recording gives the block)")
    if args.fan_in is None:
        raise UsageError("--fan-in", None, "the servers answering one read (a recording does not say; required "
                         "with --record)")
    rate = units.parse_rate(args.rate, "--rate") if args.rate is not None else None
    rtt = units.parse_duration_ps(args.rtt if args.rtt is not None else DEFAULTS["rtt"][0], "--rtt") / 1e12
    try:
        s = summarize(args.record, rate, rtt)
    except UsageError as e:
        raise UsageError("--record", e.value, e.allowed) from None
    try:
        n = int(args.fan_in)
    except ValueError:
        raise UsageError("--fan-in", args.fan_in, "a whole number of servers") from None
    desc = dict(desc, rate=s.line_rate_bps, response=max(1, s.burst_bytes_median // max(n, 1)))
    return desc, "from the recording: " + s.text()
