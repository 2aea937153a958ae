"""The servers' start spread of synchronized reads, read from a per-event trace (the
testbed's capture, as ``incastlab validate --trace`` writes it; the simulator's has the
same form).

On the namespace testbed the servers of a block do not answer in the same microsecond:
the client writes its requests one after another, and each server's thread wakes on two
shared cores when the scheduler lets it (docs/testbed.md, "The servers' start spread,
measured per run"). The simulator's servers answer at once unless told otherwise. What this
module measures, per block and flow, is the **think time** the simulator needs to start
its servers as the testbed's started: from the block's earliest request arrival at any
server (the request is an ``ack`` line carrying the wire header's bytes, as
``peers.tracediff`` reads it) to this server's first data segment of the block. The
simulator's requests reach their servers a few microseconds apart at most (0.18 us apart on
validate's 4 Gbit/s links), so drawing
each request's think time from these values reproduces both the request spread and the
servers' wake-up latency, as a distribution: which server starts first is drawn anew per
request (the testbed's order is not kept).

``think_quantiles`` compresses the measured values into evenly spaced quantiles, the
scenario's ``think_times`` (drawn uniformly, so each quantile stands for an equal share
of the measured flow-blocks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..peers import tracediff

# How many quantiles stand for a run's measured think times in the scenario.
THINK_QUANTILES = 32


@dataclass(frozen=True)
class BlockStart:
    """One server's start of one block."""

    block: int
    flow: int
    request_ps: int  # the block's request reached this server
    first_send_ps: int  # this server sent the block's first data segment


def block_starts(path: str | Path, blocks: int | None = None) -> list[BlockStart]:
    """Every flow's start of every block in the trace at `path` (of its first `blocks`
    blocks: the testbed's trace ends with a stats exchange that is not a block). A
    request acknowledging no more than the flow's previous one is that request sent
    again, as ``tracediff.block_events`` counts them."""
    requests: dict[int, list[int]] = {}  # flow -> arrival of each block's request
    last_ack: dict[int, int] = {}
    first_send: dict[tuple[int, int], int] = {}  # (flow, block) -> time
    for e in tracediff.iter_events(path):
        if e.kind == "ack" and e.b == tracediff.REQUEST_BYTES:
            if e.flow not in last_ack or e.a > last_ack[e.flow]:
                requests.setdefault(e.flow, []).append(e.time_ps)
                last_ack[e.flow] = e.a
        elif e.kind == "tx" and e.flow in requests:
            first_send.setdefault((e.flow, len(requests[e.flow]) - 1), e.time_ps)
    out = []
    for flow, times in sorted(requests.items()):
        for block, t in enumerate(times[:blocks]):
            if (flow, block) in first_send:
                out.append(BlockStart(block, flow, t, first_send[(flow, block)]))
    return out


def think_times_ps(starts: Iterable[BlockStart]) -> list[int]:
    """Each flow-block's think time in the simulator's sense: from the block's earliest
    request arrival to this server's first segment, in picoseconds."""
    starts = list(starts)
    earliest: dict[int, int] = {}
    for s in starts:
        earliest[s.block] = min(earliest.get(s.block, s.request_ps), s.request_ps)
    return sorted(s.first_send_ps - earliest[s.block] for s in starts)


def start_offsets_ps(starts: Iterable[BlockStart]) -> list[int]:
    """Each flow-block's first segment after its block's first one (what
    ``scripts/timeout-anatomy.py`` calls the start spread), in picoseconds."""
    starts = list(starts)
    first: dict[int, int] = {}
    for s in starts:
        first[s.block] = min(first.get(s.block, s.first_send_ps), s.first_send_ps)
    return sorted(s.first_send_ps - first[s.block] for s in starts)


def nearest_rank(sorted_values: list[int], p: float) -> int:
    """The p-quantile (0 < p <= 1) of sorted values by the nearest-rank rule."""
    return sorted_values[max(0, math.ceil(p * len(sorted_values)) - 1)]


def think_quantiles(think_ps: list[int], k: int = THINK_QUANTILES) -> list[int]:
    """`k` quantiles of the sorted think times at the midpoints of k equal shares,
    (i + 1/2) / k; all of them when there are no more than k."""
    if len(think_ps) <= k:
        return list(think_ps)
    return [nearest_rank(think_ps, (i + 0.5) / k) for i in range(k)]


def summary(starts: list[BlockStart]) -> dict:
    """The spread in microseconds: the start offsets' median and 90th percentile and the
    think times', over how many flow-blocks."""
    offsets, think = start_offsets_ps(starts), think_times_ps(starts)
    us = lambda xs, p: round(nearest_rank(xs, p) / 1e6, 1) if xs else None
    return {"flow_blocks": len(starts), "start_offset_us_p50": us(offsets, 0.5), "start_offset_us_p90": us(offsets, 0.9),
            "think_us_p50": us(think, 0.5), "think_us_p90": us(think, 0.9), "think_us_max": us(think, 1.0)}
