"""The namespace testbed's round trip, read from a per-event trace (the testbed's capture, as
``incastlab validate --trace`` writes it), and the propagation the simulator needs to match it.

The simulator's ``rtt`` is propagation only; its packets also spend a frame's time on every
link they cross. On the testbed a packet crosses veths and a bridge on two shared cores:
there is no wire, and what a hop costs is the kernel's work on the packet. Read from the
capture, in two halves that leave out the bottleneck's own wait (the simulator's shaper
has that):

- the **data half**: a segment leaving its server's veth (``tx``, ``rtx``) to its arrival
  at the bottleneck (``enq`` or ``drop`` of the same flow and sequence number);
- the **ACK half**: a segment leaving the bottleneck (``deq``) to the first ACK of it
  reaching its server (an ``ack`` whose number is the segment's end; a delayed ACK makes
  this half long, a duplicate ACK is not counted again).

With the testbed's idle CPUs polling (``testbed.cpu_idle``) most packets cross a hop in
1-10 us. With ``--cpu-idle system`` on the 2-vCPU VM of docs/testbed.md both halves are
bimodal: a packet steered to a halted vCPU waits 30-80 us for the interrupt that wakes it,
about half of them, decided per flow ("Half the packets waited for the other CPU"). The
simulator has one delay per link, so it takes the fast mode: the 10th percentile of each
half (``PERCENTILE``), the unloaded path. At one or two servers every flow may take the
slow path, and then that is the round trip measured.

``simulator_rtt_ps`` subtracts what the simulator's links already add: a data frame's
time on the server's link and on the client's, an ACK's on the client's and the server's
(the testbed's links run at ``rate``, a 1514-byte frame about 3 us at 4 Gbit/s), and
keeps at least the scenario's smallest round trip, 1 ps.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

from ..peers import tracediff

# The percentile of each half taken as the unloaded path (the fast mode of a bimodal delay).
PERCENTILE = 0.10
# A segment's ACK is looked for among this many of its flow's latest departures.
RECENT_DEPARTURES = 8
PS_PER_US = 10**6


@dataclass(frozen=True)
class Halves:
    """Every sample of the two halves, in picoseconds."""
    data_ps: list[int]
    ack_ps: list[int]


def halves(trace: str | Path) -> Halves:
    """The two halves of every segment in `trace` that has them."""
    sent: dict[tuple[int, int], deque] = defaultdict(deque)  # (flow, seq) -> send times not yet arrived
    departed: dict[int, deque] = defaultdict(lambda: deque(maxlen=RECENT_DEPARTURES))  # flow -> (end, time)
    data, ack = [], []
    for e in tracediff.iter_events(trace):
        if e.kind in ("tx", "rtx"):
            sent[(e.flow, e.a)].append(e.time_ps)
        elif e.kind in ("enq", "drop"):
            waiting = sent.get((e.flow, e.a))
            if waiting:
                data.append(e.time_ps - waiting.popleft())
        elif e.kind == "deq":
            departed[e.flow].append((e.a + e.b, e.time_ps))
        elif e.kind == "ack" and e.b != tracediff.REQUEST_BYTES:
            recent = departed.get(e.flow)
            if not recent:
                continue
            for i, (end, t) in enumerate(recent):
                if end == e.a:
                    ack.append(e.time_ps - t)
                    del recent[i]  # a duplicate of this ACK is not its first
                    break
    return Halves(data, ack)


def percentile_ps(values: list[int], p: float = PERCENTILE) -> int | None:
    """The nearest-rank `p` percentile of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


def frame_time_ps(frame_bytes: int, rate_bps: int) -> int:
    """A frame's time on a link of `rate_bps`, as the simulator counts it."""
    return frame_bytes * 8 * 10**12 // rate_bps


def simulator_rtt_ps(h: Halves, *, link_rate_bps: int, data_frame_bytes: int, ack_frame_bytes: int) -> int | None:
    """The propagation that gives the simulator the testbed's unloaded round trip (the two
    halves' ``PERCENTILE``), less its links' frame times; None without both halves."""
    data, ack = percentile_ps(h.data_ps), percentile_ps(h.ack_ps)
    if data is None or ack is None:
        return None
    frames = 2 * frame_time_ps(data_frame_bytes, link_rate_bps) + 2 * frame_time_ps(ack_frame_bytes, link_rate_bps)
    return max(1, data + ack - frames)


def summary(h: Halves, rtt_ps: int | None) -> dict:
    """What a result row keeps: each half's samples and percentiles in us, and the round
    trip given to the simulator (seconds; None when nothing was measured)."""
    out = {"percentile": PERCENTILE, "data_samples": len(h.data_ps), "ack_samples": len(h.ack_ps)}
    for name, values in (("data", h.data_ps), ("ack", h.ack_ps)):
        for p in (PERCENTILE, 0.5, 0.9):
            v = percentile_ps(values, p)
            out[f"{name}_half_us_p{round(p * 100)}"] = None if v is None else v / PS_PER_US
    out["simulator_rtt_s"] = None if rtt_ps is None else rtt_ps / 10**12
    return out
