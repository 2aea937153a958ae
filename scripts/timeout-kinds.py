#!/usr/bin/env python3
"""What each retransmission timeout found lost, in a per-event trace (the testbed's capture
or the simulator's, as ``incastlab validate --trace`` writes them):

    python scripts/timeout-kinds.py traces/testbed-n8.csv traces/sim-n8.csv

A timeout is an entry into the Loss state (``state`` line to 4). At that moment the flow's
outstanding segments (sent, at or above the highest ACK number) are looked up: a segment is
lost when its latest transmission has a ``drop`` line. Kinds:

- ``whole_window_first_flight`` / ``whole_window_mid_block``: every outstanding segment was
  lost, in Open or Disorder, in a block's first flight (no ACK of new data since the
  request) or later in the block;
- ``with_probe``: of those, how many had a tail-loss probe among the lost (a send 3 ms or
  more after the flow's previous send or ACK, in Open or Disorder: PTO = 2 SRTT + 2 jiffies
  at these RTTs);
- ``lost_retransmission``: in Recovery, a retransmission among the lost;
- ``other``: anything else (in Recovery with only new data lost; some outstanding
  segments delivered in Open).

A line that is not an event is one line on stderr and status 2."""

from __future__ import annotations

import sys

from incastlab.peers import tracediff

LOSS = 4
RECOVERY = 3
PROBE_GAP_PS = 3 * 10**9
REQUEST_BYTES = tracediff.REQUEST_BYTES


def kinds(path: str) -> dict[str, int]:
    state: dict[int, int] = {}
    una: dict[int, int] = {}
    advanced: dict[int, bool] = {}  # an ACK of new data since the block's request
    last_event: dict[int, int] = {}
    # flow -> seq -> [retransmission?, lost?, probe?] of its latest transmission
    sent: dict[int, dict[int, list[bool]]] = {}
    out = dict.fromkeys(("whole_window_first_flight", "whole_window_mid_block", "with_probe",
                         "lost_retransmission", "other"), 0)
    for e in tracediff.iter_events(path):
        f = e.flow
        if e.kind == "state":
            if e.b == LOSS and e.a != LOSS:
                outstanding = [v for s, v in sent.get(f, {}).items() if s >= una.get(f, 1)]
                lost = [v for v in outstanding if v[1]]
                if e.a == RECOVERY and any(v[0] for v in lost):
                    out["lost_retransmission"] += 1
                elif e.a != RECOVERY and outstanding and len(lost) == len(outstanding):
                    out["whole_window_mid_block" if advanced.get(f) else "whole_window_first_flight"] += 1
                    out["with_probe"] += any(v[2] for v in lost)
                else:
                    out["other"] += 1
            state[f] = e.b
        elif e.kind in ("tx", "rtx"):
            probe = state.get(f, 0) < 2 and f in last_event and e.time_ps - last_event[f] >= PROBE_GAP_PS
            sent.setdefault(f, {})[e.a] = [e.kind == "rtx", False, probe]
            last_event[f] = e.time_ps
        elif e.kind == "drop":
            seg = sent.get(f, {}).get(e.a)
            if seg is not None:
                seg[1] = True
        elif e.kind == "ack":
            if e.b == REQUEST_BYTES:
                advanced[f] = False
            else:
                advanced[f] = advanced.get(f, False) or e.a > una.get(f, 1)
                last_event[f] = e.time_ps
            una[f] = max(una.get(f, 1), e.a)
    return out


def main(paths: list[str]) -> int:
    return tracediff.each_trace("timeout-kinds", kinds, paths)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
