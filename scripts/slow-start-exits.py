#!/usr/bin/env python3
"""Where each flow leaves slow start, block by block, in a per-event trace (the testbed's
capture or the simulator's, as ``incastlab validate --trace`` writes them):

    python scripts/slow-start-exits.py traces/testbed-n4.csv traces/sim-n4.csv

For every block and flow that starts the block in slow start (cwnd below ssthresh): the
cwnd (segments) when ssthresh first fell while the flow was in the Open state (0: no loss
seen, so not a loss response; with cubic, HyStart's exit), and the cwnd when the flow's first
packet of the block was dropped. Prints, per trace, how many flow-blocks exited without a
loss, and the medians of both cwnds."""

from __future__ import annotations

import statistics
import sys

from incastlab.peers import tracediff


def exits(path: str, mss: int = 1448) -> dict:
    blocks = 0
    while True:  # count the blocks the trace has
        try:
            next(iter(tracediff.block_events(tracediff.iter_events(path), blocks, path)), None)
        except Exception:
            break
        blocks += 1
    hystart, first_drop, in_ss = [], [], 0
    cwnd: dict[int, int] = {}
    ssth: dict[int, int] = {}
    state: dict[int, int] = {}
    stats = 1 if "testbed" in path.rsplit("/", 1)[-1] else 0  # the testbed's last "block": its stats exchange
    for k in range(blocks - stats):
        seen_exit: set[int] = set()
        senders: set[int] = set()
        seen_drop: set[int] = set()
        start_ss: set[int] | None = None
        for e in tracediff.block_events(tracediff.iter_events(path), k, path):
            if start_ss is None and e.kind in ("tx", "rtx"):
                start_ss = {f for f in cwnd if cwnd[f] < ssth.get(f, 1 << 30)} | {f for f in range(64) if f not in cwnd}
            if e.kind in ("tx", "rtx"):
                senders.add(e.flow)
            if e.kind == "cwnd":
                cwnd[e.flow] = e.a
            elif e.kind == "ssth":
                old = ssth.get(e.flow, 1 << 30)
                ssth[e.flow] = e.a
                if (e.a < old and state.get(e.flow, 0) == 0 and start_ss and e.flow in start_ss
                        and e.flow not in seen_exit and e.flow not in seen_drop):
                    seen_exit.add(e.flow)
                    hystart.append(cwnd.get(e.flow, 0) / mss)
            elif e.kind == "state":
                state[e.flow] = e.b
            elif e.kind == "drop" and e.flow not in seen_drop:
                seen_drop.add(e.flow)
                if start_ss and e.flow in start_ss:
                    first_drop.append(cwnd.get(e.flow, 0) / mss)
        in_ss += len((start_ss or set()) & senders)
    med = lambda xs: round(statistics.median(xs), 1) if xs else None
    return {"blocks": blocks - stats, "flow_blocks_in_slow_start": in_ss, "exits_without_loss": len(hystart),
            "exit_cwnd_median": med(hystart), "exit_cwnd_range": (min(hystart, default=None), max(hystart, default=None)),
            "first_drop_cwnd_median": med(first_drop), "flow_blocks_with_a_drop": len(first_drop)}


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(p, exits(p))
