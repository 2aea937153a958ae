"""`incastlab read`: the client side of the synchronized-read workload, for real hosts.
Reads blocks striped over the servers (each runs `incastlab serve`) and reports goodput,
block times and the senders' retransmissions and timeouts (from their TCP_INFO)."""

from __future__ import annotations

import argparse
import json

from . import argtypes, workload_args
from .. import units
from ..errors import EnvironmentProblem
from ..table import plural
from ..units import PS_PER_S, format_size


# A server silent this long while it owes bytes is gone or wedged: Linux backs a lost
# segment off 200 ms, 400 ms, ... (RFC 6298 5.5), 25 s in all after seven losses in a row.
_TIMEOUT_DEFAULT = 30 * PS_PER_S
_TIMEOUT = (10**9, 3600 * PS_PER_S, "a duration from 1ms to 1h")

_SERVERS_HELP = "comma-separated host:port pairs, e.g. 10.0.0.2:5701,10.0.0.3:5701"


def parse_servers(text: str) -> list[str]:
    out = [s.strip() for s in text.split(",") if s.strip()]
    for s in out:
        host, sep, port = s.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {_SERVERS_HELP}")
    if not out:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {_SERVERS_HELP}")
    return out


def summary(res: dict) -> str:
    n = res["servers"]
    lines = [
        f"incastlab read: {plural(n, 'server')}, {plural(res['blocks'], 'block')} of {format_size(res['block_bytes'])}"
        + ("" if res["block_bytes"] == n * res["sru_bytes"] else " (split over the servers)")
        + f" ({n} x {format_size(res['sru_bytes'])})" * (res["block_bytes"] == n * res["sru_bytes"]),
        f"  transfer  {res['payload_bytes'] / 1e6:10.1f} MB in {res['wall_seconds']:.3f} s",
        f"  goodput   {res['goodput_mbps']:10.1f} Mbps",
        f"  block time  p50 {res['block_time_p50_s'] * 1e3:.3f} ms  p99 {res['block_time_p99_s'] * 1e3:.3f} ms  "
        f"max {res['block_time_max_s'] * 1e3:.3f} ms",
    ]
    rt = "unknown" if res["retransmits"] is None else str(res["retransmits"])
    to = "unknown" if res["timeouts"] is None else str(res["timeouts"])
    lines.append(f"  senders   retransmits {rt}, timeouts {to} (servers' TCP_INFO), cc {res['server_congestion'] or 'unknown'}")
    return "\n".join(lines)


def cmd_read(args) -> int:
    from .. import _native
    from ..testbed.kernel import check_congestion
    check_congestion(args.cc)
    workload_args.check_kernel_options(args)
    kw = workload_args.workload_kwargs(args)
    cfg = {
        "servers": args.servers,
        "sru_bytes": kw["sru_bytes"],
        "block_bytes": kw["block_bytes"],
        "blocks": kw["blocks"],
        "quickack": kw["quickack"],
        "delack_max_us": None if kw["delack_max_s"] is None else round(kw["delack_max_s"] * 1e6),
        "rcvbuf_bytes": None if kw["rwnd_clamp_bytes"] is None else kw["rwnd_clamp_bytes"] // 2,
        "window_clamp_bytes": kw["rwnd_clamp_bytes"],
        "max_concurrent": kw["max_concurrent"],
        "stagger_ps": round(kw["stagger_s"] * 1e12),
        "start_next_at_remaining": kw["start_next_at"],
        "congestion": kw["congestion"],
        "idle_timeout_ps": args.timeout,
    }
    from ..testbed.runner import _interruptible
    from .progress import point_progress

    probe = _native.WireProgress()
    progress = point_progress("read", args.blocks, line_per_point=False, unit="block")
    tick = (lambda: progress(min(probe.blocks, args.blocks - 1), args.blocks)) if progress else None
    try:
        res = json.loads(_interruptible(_native.wire_read, json.dumps(cfg), probe, tick=tick))
        if progress is not None:
            progress(args.blocks, args.blocks)
    except TimeoutError as e:
        raise EnvironmentProblem(f"read: {e} (--timeout {units.exact_duration(args.timeout)})") from None
    except (OSError, ValueError) as e:
        raise EnvironmentProblem(f"read: {e}") from None
    if args.json:
        res["rto_min_s"] = None  # the servers' RTOmin is theirs; see server_rto_min_us
        res["buffer_bytes"] = None  # a real switch's buffer is not known to the client
        res["drops"] = None  # drops happen in the switch; read them from its counters
        res["max_queue_bytes"] = None
        print(json.dumps(res), flush=True)
    else:
        print(summary(res))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("read", help="read striped blocks from `incastlab serve` servers over TCP",
                              description=__doc__)
    p.add_argument("--servers", type=parse_servers, required=True, metavar="H:P,H:P,...",
                   help="servers in request order, e.g. 10.0.0.2:5701,10.0.0.3:5701")
    workload_args.add(p, blocks_default=1000)
    p.add_argument("--timeout", type=argtypes.duration("--timeout", bounds=_TIMEOUT), default=_TIMEOUT_DEFAULT,
                   metavar="DUR", help="give up when a server that owes bytes sends nothing for this long "
                   f"(default {units.exact_duration(_TIMEOUT_DEFAULT)}; a block also fails after 120 s in all)")
    p.add_argument("--json", action="store_true", help="complete result as one JSON object")
    p.set_defaults(func=cmd_read)
