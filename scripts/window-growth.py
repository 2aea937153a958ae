#!/usr/bin/env python3
"""How fast each sender's window grows between losses, and how often it loses, in a
per-event trace (the testbed's capture or the simulator's, as ``incastlab validate --trace``
writes them):

    python scripts/window-growth.py traces/testbed-n4.csv traces/sim-n4.csv

Per trace:
- ``segments_per_ack``: the data segments each ACK of new data acknowledged, in the Open
  state (2 with a receiver that delays every second ACK);
- ``avoidance_growth``: in congestion avoidance (Open, cwnd >= ssthresh), the segments cwnd
  grew, each weighted by the cwnd it grew from, over the segments acknowledged meanwhile:
  1.0 is one segment per window acknowledged (Linux's ``tcp_cong_avoid_ai``), and RFC 5681
  eq. (3)'s SMSS^2 / cwnd per ACK gives 1 / segments_per_ack;
- ``episodes``: the times a flow entered Recovery or Loss (a loss response), with the
  median cwnd (segments) the loss found (before the entering ACK's reduction: the
  simulator writes that reduction before the state change, at the same instant), and the
  drops per episode;
- ``delivered_twice``: segments the bottleneck passed more than once (a retransmission
  of a segment that was not lost);
- ``entries_new_data_first``: entries into Recovery where the flow sent new data ahead of
  the retransmission, in the sends between the ACK that entered it and the next ACK
  (Linux retransmits first: ``tcp_xmit_recovery`` runs inside ``tcp_ack``, new data after);
- ``entry_sends``, ``exit_sends``: how many segments (retransmissions and new data) the
  ACK that entered Recovery, and the one that left it, released: the sends from that ACK to
  the flow's next one, as {count: times}. Linux sends the fast retransmit alone on entry
  (``tcp_cwnd_reduction``'s sndcnt includes it: ``prr_counts_fast_retransmit``) and may
  grow cwnd on the exit ACK (``grow_on_recovery_exit``);
- ``ack_stalls``: ACKs that reached a server 30 ms or more after its last send while it had
  data outstanding (a delayed ACK waited out, or a timeout), by the sender's state and by
  what that last send was: ``recovery_rtx`` (Recovery, a retransmission), ``recovery_new``
  (Recovery, new data), ``open_short`` (Open, a segment shorter than the MSS: a
  response's last), ``open_full``, ``other`` (Disorder, CWR, Loss).

The testbed's ``ssth`` column is ``tcp_current_ssthresh()`` (the larger of ssthresh and
3/4 cwnd in Open), which is at most cwnd exactly when ssthresh is, so "cwnd >= ssth" reads
congestion avoidance the same in both traces. Trace lines are
``time_s,kind,flow,a,b[,c]``; a line that is not one is one line on stderr and status 2."""

from __future__ import annotations

import statistics
import sys

from incastlab.peers import tracediff

MSS = 1448
OPEN = 0
# TcpCongState values that are a loss response (the ns-3 peer's trace: Recovery 3, Loss 4)
LOSS_STATES = (3, 4)
REQUEST_BYTES = tracediff.REQUEST_BYTES


def growth(path: str, mss: int = MSS) -> dict:
    cwnd: dict[int, int] = {}
    ssth: dict[int, int] = {}
    state: dict[int, int] = {}
    last_ack: dict[int, int] = {}
    acked = weighted_growth = 0.0
    acks = open_acked = open_acks = 0
    entry_cwnd: list[float] = []
    drops = 0
    cwnd_time: dict[int, int] = {}
    cwnd_before: dict[int, int] = {}  # cwnd before the instant of its last change
    for e in tracediff.iter_events(path):
        f = e.flow
        if e.kind == "cwnd":
            if cwnd_time.get(f) != e.time_ps:
                cwnd_before[f] = cwnd.get(f, 0)
                cwnd_time[f] = e.time_ps
            old = cwnd.get(f)
            if old is not None and e.a > old and state.get(f, OPEN) == OPEN and old >= ssth.get(f, 1 << 62):
                weighted_growth += (e.a - old) / mss * old / mss
            cwnd[f] = e.a
        elif e.kind == "ssth":
            ssth[f] = e.a
        elif e.kind == "state":
            if e.b in LOSS_STATES and e.a not in LOSS_STATES:
                # the window the loss found: the simulator writes the entering ACK's
                # reduction at the ACK's own instant, before the state change, and the
                # kernel's tcp_probe reports cwnd as each segment arrives, before TCP acts
                # on it, so a change at the state's own instant is the reduction
                at_entry = cwnd_before[f] if cwnd_time.get(f) == e.time_ps else cwnd.get(f, 0)
                entry_cwnd.append(at_entry / mss)
            state[f] = e.b
        elif e.kind == "drop":
            drops += 1
        elif e.kind == "ack" and e.b != REQUEST_BYTES:
            prev = last_ack.get(f)
            last_ack[f] = e.a
            # a new block renumbers nothing in these traces; a jump backwards is a new
            # connection's sequence space
            if prev is None or e.a <= prev or state.get(f, OPEN) != OPEN or f not in cwnd:
                continue
            segments = (e.a - prev) / mss
            open_acked += segments
            open_acks += 1
            if cwnd[f] >= ssth.get(f, 1 << 62):
                acked += segments
                acks += 1
    episodes = len(entry_cwnd)
    twice, first = order_at_entry(path)
    stalls = ack_stalls(path, mss)
    entry_sends, exit_sends = recovery_edge_sends(path)
    return {
        "segments_per_ack": round(open_acked / open_acks, 2) if open_acks else None,
        "avoidance_acked_segments": round(acked),
        "avoidance_growth": round(weighted_growth / acked, 2) if acked else None,
        "episodes": episodes,
        "cwnd_at_episode_median": round(statistics.median(entry_cwnd), 1) if entry_cwnd else None,
        "drops": drops,
        "drops_per_episode": round(drops / episodes, 2) if episodes else None,
        "delivered_twice": twice,
        "entries_new_data_first": first,
        "entry_sends": entry_sends,
        "exit_sends": exit_sends,
        "ack_stalls": stalls,
    }


STALL_PS = 30 * 10**9  # 30 ms: below the 40 ms delayed-ACK timeout, far above these RTTs


def ack_stalls(path: str, mss: int = MSS) -> dict[str, int]:
    """ACKs reaching a server >= 30 ms after its last send with data outstanding, by the
    sender's state and its last send (the ``ack_stalls`` keys of the module's doc)."""
    state: dict[int, int] = {}
    last_send: dict[int, tuple[int, str, int]] = {}  # flow -> (time, kind, bytes)
    snd_max: dict[int, int] = {}
    una: dict[int, int] = {}
    out = dict.fromkeys(("recovery_rtx", "recovery_new", "open_short", "open_full", "other"), 0)
    for e in tracediff.iter_events(path):
        f = e.flow
        if e.kind == "state":
            state[f] = e.b
        elif e.kind in ("tx", "rtx"):
            last_send[f] = (e.time_ps, e.kind, e.b)
            snd_max[f] = max(snd_max.get(f, 0), e.a + e.b)
        elif e.kind == "ack":
            sent = last_send.get(f)
            if e.b != REQUEST_BYTES and sent and snd_max[f] > una.get(f, 0) and e.time_ps - sent[0] >= STALL_PS:
                st = state.get(f, OPEN)
                if st == 3:
                    out["recovery_rtx" if sent[1] == "rtx" else "recovery_new"] += 1
                elif st == OPEN and sent[1] == "tx":
                    out["open_short" if sent[2] < mss else "open_full"] += 1
                else:
                    out["other"] += 1
            una[f] = max(una.get(f, 0), e.a)
    return out


def order_at_entry(path: str) -> tuple[int, int]:
    """(segments dequeued more than once, Recovery entries with new data sent ahead of the
    retransmission among the sends that follow the entering ACK)."""
    dequeued: dict[tuple[int, int], int] = {}
    pending: dict[int, list[str]] = {}  # flow -> its sends since its last ACK
    sends: dict[int, list[str]] = {}  # flow -> its sends since a Recovery entry
    first = 0

    def close(f: int) -> None:
        nonlocal first
        burst = sends.pop(f, None)
        if burst and "rtx" in burst and "tx" in burst[: burst.index("rtx")]:
            first += 1

    for e in tracediff.iter_events(path):
        if e.kind == "deq":
            dequeued[(e.flow, e.a)] = dequeued.get((e.flow, e.a), 0) + 1
        elif e.kind == "ack":
            close(e.flow)
        elif e.kind == "state" and e.b == 3 and e.a != 3:
            # the sends the entering ACK caused: those of the same instant before the state
            # line (the simulator's) and every one after it until the next ACK
            sends[e.flow] = list(pending.get(e.flow, []))
        elif e.kind in ("tx", "rtx"):
            if e.flow in sends:
                sends[e.flow].append(e.kind)
            pending.setdefault(e.flow, []).append(e.kind)
        if e.kind == "ack":
            pending[e.flow] = []
    for f in list(sends):
        close(f)
    return sum(n - 1 for n in dequeued.values() if n > 1), first


def recovery_edge_sends(path: str) -> tuple[dict[int, int], dict[int, int]]:
    """({segments sent: times} for the ACKs that entered Recovery, the same for the ACKs
    that left it). An ACK's sends are those of its instant written before its state line
    (the simulator writes them so) and every one after it until the flow's next ACK."""
    pending: dict[int, int] = {}  # flow -> sends since its last ACK
    open_burst: dict[int, tuple[str, int]] = {}  # flow -> (edge, sends so far)
    counts: dict[str, dict[int, int]] = {"entry": {}, "exit": {}}

    def close(f: int) -> None:
        if f in open_burst:
            edge, n = open_burst.pop(f)
            counts[edge][n] = counts[edge].get(n, 0) + 1

    for e in tracediff.iter_events(path):
        f = e.flow
        if e.kind == "ack":
            close(f)
            pending[f] = 0
        elif e.kind == "state" and (e.b == 3) != (e.a == 3):
            close(f)
            # into Recovery, or out of it by an ACK; a timeout's Recovery -> Loss is neither,
            # and its retransmission counts for no ACK
            if e.b != 4:
                open_burst[f] = ("entry" if e.b == 3 else "exit", pending.get(f, 0))
        elif e.kind in ("tx", "rtx"):
            pending[f] = pending.get(f, 0) + 1
            if f in open_burst:
                edge, n = open_burst[f]
                open_burst[f] = (edge, n + 1)
    for f in list(open_burst):
        close(f)
    return tuple(dict(sorted(c.items())) for c in (counts["entry"], counts["exit"]))  # type: ignore[return-value]


def main(paths: list[str]) -> int:
    return tracediff.each_trace("window-growth", growth, paths)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
