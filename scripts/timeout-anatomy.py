#!/usr/bin/env python3
"""Where the timeouts of synchronized reads come from, in a per-event trace (the testbed's
capture or the simulator's, as ``incastlab validate --trace`` writes them):

    python scripts/timeout-anatomy.py traces/testbed-n8.csv traces/sim-n8.csv

Per trace, over its blocks (docs/testbed.md, "Capture and trace"):

- how late each server's first segment of a block leaves after the block's first one
  (the servers' start spread; the simulator's servers answer in the same microsecond);
- the flow-blocks whose whole first window (its first up-to-10 new segments) was dropped;
- every timeout (an entry into the Loss state, 4), by what preceded it in its block:
  no ACK of the block reached the server (a whole window lost), the flow was Open or in
  Disorder after ACKs (a lost tail whose probe was lost too), or it was in recovery;
- how one server's sends bunch: the share of segments sent in back-to-back bursts (each
  within 20 us of the last) of 4 or more, and how many of those bursts followed two or more
  ACKs with no send between (the sender held back on an ACK that allowed a send).

The testbed's last "block" is its stats exchange and is left out."""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

from incastlab.errors import UsageError
from incastlab.peers import tracediff

BURST_GAP_PS = 20_000_000  # 20 us: back to back on the testbed's veths (2-3 us per frame)
FIRST_WINDOW = 10  # Linux's and the linux preset's initial window, in segments
LOSS = 4  # the congestion state Loss (tcp_ca_state TCP_CA_Loss): a retransmission timeout


def blocks(path: str) -> list[list[tracediff.Event]]:
    events = list(tracediff.iter_events(path))
    out = []
    while True:
        try:
            out.append(tracediff.block_events(events, len(out), path))
        except UsageError:
            break
    return out[:-1] if "testbed" in Path(path).name else out


def anatomy(path: str) -> dict:
    starts, whole_window_lost, flow_blocks = [], 0, 0
    timeouts: Counter = Counter()
    for evs in blocks(path):
        first_tx: dict[int, int] = {}
        sends: dict[int, list[list]] = defaultdict(list)  # flow -> [seq, dropped, kind]
        acked: set[int] = set()
        state: dict[int, int] = {}
        for e in evs:
            if e.kind in ("tx", "rtx"):
                first_tx.setdefault(e.flow, e.time_ps)
                sends[e.flow].append([e.a, False, e.kind])
            elif e.kind == "drop":
                for s in reversed(sends[e.flow]):
                    if s[0] == e.a:
                        s[1] = True
                        break
            elif e.kind == "ack" and e.b != tracediff.REQUEST_BYTES and e.a > 1:
                acked.add(e.flow)
            elif e.kind == "state":
                before = state.get(e.flow, 0)
                state[e.flow] = e.b
                if e.b == LOSS and before != LOSS:
                    timeouts["whole window lost (no ACK in the block)" if e.flow not in acked else
                             "Open: tail and its probe lost" if before in (0, 1) else  # Open, Disorder
                             "in recovery"] += 1
        if not first_tx:
            continue
        t0 = min(first_tx.values())
        for f, t in first_tx.items():
            flow_blocks += 1
            starts.append((t - t0) / 1e6)
            window = [s for s in sends[f] if s[2] == "tx"][:FIRST_WINDOW]
            whole_window_lost += all(s[1] for s in window)
    q = lambda xs, p: round(sorted(xs)[math.ceil(p * len(xs)) - 1]) if xs else None  # nearest rank
    return {"flow_blocks": flow_blocks, "start_us_p50": q(starts, 0.5), "start_us_p90": q(starts, 0.9),
            "whole_first_window_lost": whole_window_lost, "timeouts": sum(timeouts.values()),
            **dict(timeouts), **bursts(path)}


def bursts(path: str) -> dict:
    last_send: dict[int, int] = {}
    acks_since: dict[int, int] = defaultdict(int)
    current: dict[int, list[int]] = {}  # flow -> [segments, ACKs before it]
    done: list[list[int]] = []
    for e in tracediff.iter_events(path):
        if e.kind == "ack":
            acks_since[e.flow] = 0 if e.b == tracediff.REQUEST_BYTES else acks_since[e.flow] + 1
        elif e.kind in ("tx", "rtx"):
            if e.flow in current and e.time_ps - last_send[e.flow] <= BURST_GAP_PS:
                current[e.flow][0] += 1
            else:
                if e.flow in current:
                    done.append(current[e.flow])
                current[e.flow] = [1, acks_since[e.flow]]
                acks_since[e.flow] = 0
            last_send[e.flow] = e.time_ps
    done += current.values()
    segments = sum(b[0] for b in done)
    big = [b for b in done if b[0] >= 4]
    return {"segments_in_bursts_of_4_or_more": round(sum(b[0] for b in big) / segments, 2) if segments else None,
            "bursts_of_4_or_more": len(big), "of_them_after_2_or_more_acks": sum(b[1] >= 2 for b in big)}


def main(paths: list[str]) -> int:
    return tracediff.each_trace("timeout-anatomy", anatomy, paths)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
