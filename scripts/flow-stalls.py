#!/usr/bin/env python3
"""Where a server's flow stands still, in a per-event trace (the testbed's capture or the
simulator's, as ``incastlab validate --trace`` writes them):

    python scripts/flow-stalls.py traces/testbed-n2.csv traces/sim-think-n2.csv

Per trace:

- **stalls**: a flow with data outstanding that neither sends nor hears an ACK for
  ``STALL_MS`` or more, by the congestion state it stood in (0 Open, 1 Disorder, 3 Recovery,
  4 Loss), by what ended it (its retransmission timeout, an entry into Loss; an ACK; a
  send, e.g. a tail-loss probe) and by length: an ACK after 30 ms or more is the client's
  delayed-ACK timer (40 ms at least, TCP_DELACK_MIN); with the flow-seconds each cost;
- **recovery releases**: what each ACK that advances SND.UNA in recovery (the one that ends
  it included) lets go, as a
  string of ``r`` (a retransmission) and ``n`` (new data) in sending order, an ``x`` after
  each new segment the port dropped. ``rnx`` is the costly one: the retransmission gets
  through, the new segment behind it does not, nothing reaches the client out of order, and
  the one segment it did receive is acknowledged by its delayed-ACK timer.

docs/testbed.md ("2 servers at 8 KiB") reads these on the testbed against the simulator."""

from __future__ import annotations

import sys
from collections import Counter, defaultdict

from incastlab.peers import tracediff

STALL_MS = 3  # below Linux's shortest tail-loss probe timeout (2 x SRTT + 2 ms, on 4 ms ticks)
RECOVERY, LOSS = 3, 4
SHORT_MS = 30  # below the client's delayed-ACK timer (TCP_DELACK_MIN, 40 ms) less a jiffy's slack


def stalls(path: str) -> dict:
    state: dict[int, int] = defaultdict(int)
    last_event: dict[int, int] = {}
    una: dict[int, int] = {}
    nxt: dict[int, int] = {}
    dropped = {(e.flow, e.a) for e in tracediff.iter_events(path) if e.kind == "drop"}
    count: Counter = Counter()
    cost_ps: Counter = Counter()
    releases: Counter = Counter()
    releasing: dict[int, str] = {}  # flow -> what the current recovery ACK let go so far
    for e in tracediff.iter_events(path):
        if e.kind not in ("ack", "tx", "rtx", "state"):
            continue
        f = e.flow
        if f in last_event and nxt.get(f, 0) > una.get(f, 0):
            idle = e.time_ps - last_event[f]
            if idle >= STALL_MS * 10**9:
                count[(state[f], ended_by(e), idle < SHORT_MS * 10**9)] += 1
                cost_ps[(state[f], ended_by(e), idle < SHORT_MS * 10**9)] += idle
        last_event[f] = e.time_ps
        if e.kind == "state":
            state[f] = e.b
        elif e.kind == "ack":
            if f in releasing:
                releases[releasing.pop(f)] += 1
            if e.b == tracediff.REQUEST_BYTES:  # a new block: everything before it is done
                una[f] = nxt[f] = e.a
                continue
            advanced = e.a > una.get(f, e.a)
            una[f] = max(una.get(f, e.a), e.a)
            if advanced and state[f] == RECOVERY:
                releasing[f] = ""
        else:
            nxt[f] = max(nxt.get(f, 0), e.a + e.b)
            if f in releasing:
                releasing[f] += "r" if e.kind == "rtx" else "nx" if (f, e.a) in dropped else "n"
    releases.update(releasing.values())
    return {"stalls": {f"state {s}, ended by {how}, {'3-30' if short else '>= 30'} ms":
                       {"n": n, "flow_s": round(cost_ps[(s, how, short)] / 1e12, 3)}
                       for (s, how, short), n in sorted(count.items(), key=lambda kv: -cost_ps[kv[0]])},
            "stalled_flow_s": round(sum(cost_ps.values()) / 1e12, 3),
            "recovery_releases": dict(sorted(releases.items(), key=lambda kv: -kv[1]))}


def ended_by(e: tracediff.Event) -> str:
    if e.kind == "state":
        return "timeout" if e.b == LOSS else "state change"
    return "ACK" if e.kind == "ack" else "send"


def main(paths: list[str]) -> int:
    return tracediff.each_trace("flow-stalls", stalls, paths)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
