"""`incastlab serve`: the storage-server side of the synchronized-read workload, for
real hosts. Answers each request of `incastlab read` with the bytes it asks for."""

from __future__ import annotations

import json
import sys
import time

from . import argtypes
from ..errors import EnvironmentProblem
from ..units import PS_PER_S, format_size


def cmd_serve(args) -> int:
    from .. import _native
    from ..testbed.kernel import check_congestion
    check_congestion(args.cc)
    from ..testbed.kernel import check_socket_option
    rto_min_s = None if args.rto_min is None else args.rto_min / PS_PER_S
    check_socket_option("TCP_RTO_MIN_US", "--rto-min", rto_min_s)
    cfg = {
        "listen": f"{args.bind}:{args.port}",
        "max_request_bytes": args.max_request,
        "header_timeout_ps": args.header_timeout,
        "idle_timeout_ps": args.idle_timeout,
        "max_connections": args.max_connections,
        "congestion": args.cc,
        "rto_min_us": None if rto_min_s is None else round(rto_min_s * 1e6),
        "log": True,
    }
    try:
        server = _native.WireServer(json.dumps(cfg))
    except (OSError, ValueError) as e:
        raise EnvironmentProblem(f"serve: {e}") from None
    if args.json:
        print(json.dumps({"listening": server.local_addr, "max_request_bytes": args.max_request}), flush=True)
    else:
        print(f"incastlab serve: listening on {server.local_addr} (max request {format_size(args.max_request)}, "
              f"max {args.max_connections} connections); Ctrl-C stops", flush=True)
    deadline = None if args.duration is None else time.monotonic() + args.duration / PS_PER_S
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stats = json.loads(server.stats())
        server.stop()
    if args.json:
        print(json.dumps(stats), flush=True)
    else:
        print(f"incastlab serve: stopped after {stats['requests']} requests, "
              f"{stats['bytes_sent'] / 1e6:.1f} MB sent, {stats['connections_accepted']} connections; "
              f"refused {stats['refused_too_large']} too large, {stats['malformed']} malformed, "
              f"{stats['header_timeouts']} slow headers", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="serve synchronized reads over TCP (run on every storage node)",
                              description=__doc__)
    p.add_argument("--port", type=argtypes.positive_int("--port", minimum=0, maximum=65535), default=5701,
                   help="TCP port (default 5701; 0 picks a free one)")
    p.add_argument("--bind", type=argtypes.listen_address("--bind"), default="0.0.0.0",
                   help="address to listen on (default all IPv4; [::] for IPv6)")
    p.add_argument("--max-request", type=argtypes.size("--max-request"), default=64 * 2**20,
                   help="largest request served; larger ones are refused with an error (default 64MiB)")
    p.add_argument("--header-timeout", type=argtypes.duration("--header-timeout"), default=5 * PS_PER_S,
                   help="time a request header may take to arrive once started (default 5s)")
    p.add_argument("--idle-timeout", type=argtypes.duration("--idle-timeout"), default=600 * PS_PER_S,
                   help="close connections idle this long (default 600s)")
    p.add_argument("--max-connections", type=argtypes.positive_int("--max-connections", maximum=100000), default=4096,
                   help="refuse connections beyond this many (default 4096)")
    p.add_argument("--cc", default=None, metavar="ALGO", help="congestion control of the responses (TCP_CONGESTION)")
    p.add_argument("--rto-min", type=argtypes.duration("--rto-min"), default=None, metavar="DURATION",
                   help="RTOmin of the responses (TCP_RTO_MIN_US, Linux 6.15+; a locked rto_min on the route "
                        "to the client still wins, as tcp_rto_min() reads the route first)")
    p.add_argument("--duration", type=argtypes.duration("--duration"), default=None,
                   help="stop by itself after this long (default: run until Ctrl-C / SIGTERM)")
    p.add_argument("--json", action="store_true", help="JSON lines: the address, then the counters at exit")
    p.set_defaults(func=cmd_serve)
