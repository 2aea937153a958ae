"""Run one point of the synchronized-read workload on a built topology."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass

from .. import _native
from ..errors import EnvironmentProblem
from ..table import plural
from . import counters, cpu_idle
from .names import PORT
from .topology import Topology

DEFAULT_RTO_MIN_S = 0.2  # Linux TCP_RTO_MIN (HZ/5)
MAX_QUEUE_NOTE = ("tbf reports only its instantaneous backlog; sampling it from user space "
                  "would miss sub-millisecond bursts, so the peak is not reported")


@dataclass
class Workload:
    """What the client does and how the endpoints' sockets are set."""
    blocks: int = 40
    sru_bytes: int = 256 * 1024
    block_bytes: int | None = None
    quickack: bool = False
    #: TCP_DELACK_MAX_US on the client's sockets (Linux 6.15+): its longest ACK delay
    delack_max_s: float | None = None
    congestion: str | None = None
    rwnd_clamp_bytes: int | None = None
    max_concurrent: int | None = None
    stagger_s: float = 0.0
    start_next_at: int | None = None
    block_timeout_s: float = 120.0


def _interruptible(fn, *args, tick=None):
    """Call a native function that holds no GIL on a worker thread, so Ctrl-C (or
    SIGTERM turned into KeyboardInterrupt) reaches the main thread at once; the caller's
    cleanup then stops the servers, which ends the worker's connections. ``tick()`` is
    called every 0.2 s meanwhile (progress)."""
    box: dict = {}

    def work():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the main thread below
            box["error"] = e

    t = threading.Thread(target=work, daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.2)
        if tick is not None:
            tick()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _start_servers(topo: Topology, n: int, work: Workload) -> list:
    spec = topo.spec
    rto_us = None
    if spec.rto_min_s is not None and spec.rto_min_via == "socket":
        rto_us = max(1, round(spec.rto_min_s * 1e6))
    servers = []
    try:
        for i in range(1, n + 1):
            path, addr = topo.server_endpoint(i)
            cfg = {"listen": f"{addr}:{PORT}", "netns": path, "congestion": work.congestion,
                   "rto_min_us": rto_us, "log": True,
                   "max_request_bytes": max(work.sru_bytes, work.block_bytes or 0)}
            servers.append(_native.WireServer(json.dumps(cfg)))
    except (OSError, ValueError) as e:
        for s in servers:
            s.stop()
        raise EnvironmentProblem(f"starting server {len(servers) + 1}: {e}") from None
    return servers


def run_point(topo: Topology, n: int, work: Workload, on_blocks=None,
              capture: str | os.PathLike | None = None) -> dict:
    """Run `work` against the first `n` servers; return the simulate-style result.
    ``on_blocks(done)`` is called while it runs with the blocks completed so far. With
    `capture` (a path without extension): capture the point into the directory `capture`
    and write its per-event trace to `capture`.csv (``testbed.capture``)."""
    with cpu_idle.held(topo.spec.cpu_idle) as idle:
        if capture is None:
            row = _run_point(topo, n, work, on_blocks)
        else:
            from .capture import Capture
            with Capture(topo.names, n, capture):
                row = _run_point(topo, n, work, on_blocks)
    row["cpu_idle"] = idle
    if capture is None:
        return row
    from .capture import write_trace
    trace = write_trace(capture, topo.names, n, f"{capture}.csv")
    row["trace"] = f"{capture}.csv"
    row["trace_unmatched_egress"] = trace.unmatched_egress
    row["trace_control_drops"] = trace.control_drops
    return row


def _run_point(topo: Topology, n: int, work: Workload, on_blocks=None) -> dict:
    spec = topo.spec
    if n > spec.servers:
        raise EnvironmentProblem(f"the testbed has {plural(spec.servers, 'server')}, {n} were asked for")
    names = topo.names
    server_ns = [names.server_ns(i) for i in range(1, n + 1)]
    q_ns, q_dev = topo.bottleneck
    servers = _start_servers(topo, n, work)
    try:
        client_cfg = {
            "servers": [s.local_addr for s in servers],
            "netns": topo.client_netns_path,
            "sru_bytes": work.sru_bytes,
            "block_bytes": work.block_bytes,
            "blocks": work.blocks,
            "quickack": work.quickack,
            "delack_max_us": None if work.delack_max_s is None else round(work.delack_max_s * 1e6),
            "rcvbuf_bytes": None if work.rwnd_clamp_bytes is None else work.rwnd_clamp_bytes // 2,
            "window_clamp_bytes": work.rwnd_clamp_bytes,
            "max_concurrent": work.max_concurrent,
            "stagger_ps": round(work.stagger_s * 1e12),
            "start_next_at_remaining": work.start_next_at,
            "block_timeout_ps": round(work.block_timeout_s * 1e12),
        }
        mib0 = [counters.tcp_mib(ns) for ns in server_ns]
        q0 = counters.qdisc_stats(q_ns, q_dev)
        t0 = time.monotonic()
        probe = _native.WireProgress()
        tick = (lambda: on_blocks(probe.blocks)) if on_blocks is not None else None
        try:
            res = json.loads(_interruptible(_native.wire_read, json.dumps(client_cfg), probe, tick=tick))
        except (OSError, ValueError) as e:
            raise EnvironmentProblem(f"testbed run with {plural(n, 'server')} failed: {e}") from None
        wall = time.monotonic() - t0
        q1 = counters.qdisc_stats(q_ns, q_dev)
        mib1 = [counters.tcp_mib(ns) for ns in server_ns]
    finally:
        for s in servers:
            s.stop()

    def mib_delta(key: str) -> int:
        return sum(b.get(key, 0) - a.get(key, 0) for a, b in zip(mib0, mib1))

    return {
        "servers": n,
        "sru_bytes": res["sru_bytes"],
        "block_bytes": res["block_bytes"],
        "buffer_bytes": spec.buffer_bytes,
        "rate_bps": spec.rate_bps,
        "rto_min_s": spec.rto_min_s if spec.rto_min_s is not None else DEFAULT_RTO_MIN_S,
        "rto_min_via": spec.rto_min_via if spec.rto_min_s is not None else "kernel default",
        "goodput_mbps": res["goodput_mbps"],
        "blocks": res["blocks"],
        # sender-side TCP_INFO (tcpi_total_rto / tcpi_total_retrans), summed over servers
        "timeouts": res["timeouts"],
        "retransmits": res["retransmits"],
        # the same from the server namespaces' MIBs, as a cross-check
        "timeouts_netstat": mib_delta("TcpExt.TCPTimeouts"),
        "retransmits_netstat": mib_delta("Tcp.RetransSegs"),
        # why segments were resent: tail-loss probes, and DSACKs telling the sender a
        # retransmission was spurious (the original had arrived, e.g. reordered)
        "loss_probes": mib_delta("TcpExt.TCPLossProbes"),
        "dsacks_received": mib_delta("TcpExt.TCPDSACKRecv"),
        "reorder_events": mib_delta("TcpExt.TCPSACKReorder") + mib_delta("TcpExt.TCPTSReorder")
        + mib_delta("TcpExt.TCPRenoReorder"),
        # loss responses the kernel undid (tcp_try_undo_*: Eifel's timestamps, DSACKs, after a
        # recovery or a timeout) and timeouts F-RTO found spurious: rules the simulator lacks
        "undos": mib_delta("TcpExt.TCPFullUndo") + mib_delta("TcpExt.TCPPartialUndo")
        + mib_delta("TcpExt.TCPDSACKUndo") + mib_delta("TcpExt.TCPLossUndo"),
        "spurious_rtos": mib_delta("TcpExt.TCPSpuriousRTOs"),
        # cubic's HyStart leaving slow start (tcp_cubic.c hystart_update): by an ACK train, by a
        # delay increase, and the sum of cwnd (segments) at those exits
        "hystart_train_exits": mib_delta("TcpExt.TCPHystartTrainDetect"),
        "hystart_delay_exits": mib_delta("TcpExt.TCPHystartDelayDetect"),
        "hystart_exit_cwnd_sum": mib_delta("TcpExt.TCPHystartTrainCwnd") + mib_delta("TcpExt.TCPHystartDelayCwnd"),
        "drops": q1["drops"] - q0["drops"],
        "max_queue_bytes": None,
        "max_queue_note": MAX_QUEUE_NOTE,
        "block_time_p50_s": res["block_time_p50_s"],
        "block_time_p99_s": res["block_time_p99_s"],
        "block_time_max_s": res["block_time_max_s"],
        "wall_seconds": wall,
        "rto_recovery_seconds": res["rto_recovery_seconds"],
        "congestion": res["server_congestion"],
        "quickack": work.quickack,
        "delack_max_s": work.delack_max_s,
        "rwnd_clamp_bytes": work.rwnd_clamp_bytes,
        "max_concurrent": work.max_concurrent,
        "stagger_s": work.stagger_s,
        "start_next_at_bytes": work.start_next_at,
        "offload": spec.offload,
    }
