"""Workload flags shared by `testbed sweep`, `testbed run` and `read`."""

from __future__ import annotations

import argparse

from . import argtypes
from ..units import PS_PER_S


def add(parser: argparse.ArgumentParser, *, blocks_default: int) -> None:
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--sru", type=argtypes.size("--sru"), default=256 * 1024,
                      help="fixed-SRU mode: bytes each server sends per block (default 256KiB, FAST'08 Table 1)")
    size.add_argument("--block", type=argtypes.size("--block"), default=None,
                      help="fixed-block mode: block size split over the servers (e.g. 1MiB)")
    parser.add_argument("--blocks", type=argtypes.positive_int("--blocks", maximum=10**7), default=blocks_default,
                        help=f"blocks to read (default {blocks_default})")
    parser.add_argument("--quickack", action="store_true", help="client ACKs every segment (TCP_QUICKACK: delayed ACK off)")
    parser.add_argument("--delack-max", type=argtypes.duration("--delack-max"), default=None, metavar="DURATION",
                        help="the client delays an ACK at most this long (TCP_DELACK_MAX_US, Linux 6.15+; "
                             "the kernel rounds up to jiffies and takes 2 jiffies to 200ms)")
    parser.add_argument("--cc", default=None, metavar="ALGO",
                        help="congestion control of the senders (TCP_CONGESTION: reno, cubic, bbr, ...)")
    parser.add_argument("--rwnd-clamp", type=argtypes.size("--rwnd-clamp", minimum=2048, maximum=2**31 - 1), default=None,
                        help="cap the client's advertised receive window (TCP_WINDOW_CLAMP + SO_RCVBUF)")
    parser.add_argument("--max-concurrent", type=argtypes.positive_int("--max-concurrent"), default=None, metavar="K",
                        help="mitigation: at most K servers send at a time")
    parser.add_argument("--stagger", type=argtypes.duration("--stagger"), default=0, metavar="DELAY",
                        help="mitigation: request i leaves i x DELAY after the block starts (e.g. 100us)")
    parser.add_argument("--start-next-at", type=argtypes.size("--start-next-at", minimum=0), default=None,
                        metavar="SIZE",
                        help="mitigation (NCCS, Osada et al.): the next request leaves when the newest "
                             "response has SIZE bytes left; with --max-concurrent K, at most K at a time")


def workload_kwargs(args) -> dict:
    return {
        "blocks": args.blocks,
        "sru_bytes": args.sru,
        "block_bytes": args.block,
        "quickack": args.quickack,
        "delack_max_s": None if args.delack_max is None else args.delack_max / PS_PER_S,
        "congestion": args.cc,
        "rwnd_clamp_bytes": args.rwnd_clamp,
        "max_concurrent": args.max_concurrent,
        "stagger_s": args.stagger / PS_PER_S,
        "start_next_at": args.start_next_at,
    }


def check_kernel_options(args) -> None:
    """Refuse, by its flag, a socket option the running kernel lacks or a value it refuses
    (before anything is built)."""
    from ..testbed.kernel import check_socket_option
    check_socket_option("TCP_DELACK_MAX_US", "--delack-max", workload_seconds(args, "delack_max"))
    if getattr(args, "rto_min_via", None) == "socket":
        check_socket_option("TCP_RTO_MIN_US", "--rto-min", workload_seconds(args, "rto_min"))


def workload_seconds(args, name: str) -> float | None:
    v = getattr(args, name, None)
    return None if v is None else v / PS_PER_S
