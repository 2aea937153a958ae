#!/usr/bin/env python3
"""Where a sender's congestion window stays put while it keeps sending, in a per-event trace
(the testbed's capture or the simulator's, as ``incastlab validate --trace`` writes them):

    python scripts/cwnd-holds.py traces/testbed-n6.csv traces/sim-think-n6.csv

A hold is a span of one flow between two changes of its cwnd (a ``cwnd`` line with a new
value) or of its congestion state (a ``state`` line), during which at least 20 of its
segments were sent (``tx`` and ``rtx`` lines): the window was in use and did not grow.
Linux's CUBIC recomputes its growth step at most once a jiffy and, while cwnd is unchanged,
not for HZ / 32 jiffies (``bictcp_update``, net/ipv4/tcp_cubic.c: 7 jiffies, 28-32 ms, at
HZ 250); a step that had become "very small" (``cnt`` = 100 cwnd) holds cwnd that long. RFC
9438's arithmetic moves cwnd by a fraction of a segment on every ACK and makes almost none.

Per trace: ``holds`` and their lengths in milliseconds by range (``lt_8``, ``8_to_24``,
``24_to_40``, ``ge_40``), and ``held_s``, the time in holds of 8 ms or more (summed over
flows). Trace lines are ``time_s,kind,flow,a,b[,c]``; a line that is not one is one line on
stderr and status 2."""

from __future__ import annotations

import sys

from incastlab.peers import tracediff

MIN_SENDS = 20
PS_PER_MS = 10**9
BOUNDS_MS = ((0, 8, "lt_8"), (8, 24, "8_to_24"), (24, 40, "24_to_40"), (40, None, "ge_40"))


def holds(path: str, min_sends: int = MIN_SENDS) -> dict:
    cwnd: dict[int, int] = {}
    since: dict[int, int] = {}  # when the flow's current span began
    sends: dict[int, int] = {}
    lengths_ps: list[int] = []
    for e in tracediff.iter_events(path):
        f = e.flow
        if e.kind in tracediff.SENDS:
            sends[f] = sends.get(f, 0) + 1
            continue
        if e.kind == "cwnd" and cwnd.get(f) == e.a:
            continue  # the same value again: not a change
        if e.kind not in ("cwnd", "state"):
            continue
        if e.kind == "cwnd":
            cwnd[f] = e.a
        if f in since and sends.get(f, 0) >= min_sends:
            lengths_ps.append(e.time_ps - since[f])
        since[f] = e.time_ps
        sends[f] = 0
    out: dict = {"holds": len(lengths_ps)}
    for lo, hi, name in BOUNDS_MS:
        out[name] = sum(1 for t in lengths_ps if t >= lo * PS_PER_MS and (hi is None or t < hi * PS_PER_MS))
    out["held_s"] = round(sum(t for t in lengths_ps if t >= 8 * PS_PER_MS) / 10**12, 3)
    return out


def main(paths: list[str]) -> int:
    return tracediff.each_trace("cwnd-holds", holds, paths)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
