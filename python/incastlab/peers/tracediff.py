"""Compare two per-event traces in the ns-3 peer's format, whoever wrote them.

    python -m incastlab.peers.tracediff ns3.csv incastlab.csv [--flow F] [--until SECONDS] [--block K]

A trace is CSV lines ``time_s,kind,flow,a,b[,c]`` (``../shared/peers/ns3/README.md``,
"Trace format"): ``tx``/``rtx`` with the relative sequence number and payload bytes of a
data packet as its server's TCP hands it down, ``drop`` with the same at the bottleneck,
and ``ack``, ``enq``, ``deq``, ``cwnd``, ``ssth``, ``rto``, ``state``. The ns-3 peer writes
it with ``--trace FILE``, incastlab with ``--events FILE`` (``Recording(events=...)``).

Printed: the events of each kind in both traces; the bottleneck's drop rate by how the
dropped packet was sent (a new packet onto an idle NIC, a retransmission onto an idle NIC,
or the second or later of one server's back-to-back burst); whose packets the bottleneck
held at each drop (only the dropped packet's own flow's, others' too, only others'); and,
per flow, the first tx/rtx/drop event where the two runs part, with the events around it.

The two runs need not start together (ns-3 opens its connections at 1 ms, incastlab at
0), so ``--until`` and the times shown count from each trace's first data packet.

``--block K`` compares one block of synchronized reads (K from 0): in each trace, the events
from the K-th request's arrival at the first server it reaches to the (K+1)-th's (a request
is an ``ack`` line carrying 24 bytes, the wire header; one acknowledging no more than the
flow's previous request is a retransmission of it), with each flow's sequence and
acknowledgment numbers counted from that block's first byte (1), which the request's own
acknowledgment number gives. The namespace testbed's trace (``incastlab validate --trace``)
is compared with the simulator's that way: their streams differ by the testbed's 24-byte
response headers and a stats exchange, their blocks do not.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from .. import units
from ..errors import EnvironmentProblem, UsageError
from ..table import render

# The kinds of the peer README's trace table, in its order; others are counted as found.
KINDS = ("tx", "rtx", "ack", "enq", "deq", "drop", "cwnd", "ssth", "rto", "state")
SENDS = ("tx", "rtx")
# The events that say what happened to a flow's data: the sequence two runs are aligned on.
DATA_KINDS = frozenset(("tx", "rtx", "drop"))
# The bottleneck's own events, from which the flows it holds at each moment follow.
QUEUE_KINDS = frozenset(("enq", "deq", "drop"))
# Events whose ``a`` is a sequence or acknowledgment number (``--block`` renumbers them).
SEQ_KINDS = frozenset(("tx", "rtx", "ack", "enq", "deq", "drop"))
# A request of the synchronized reads: an ``ack`` line carrying the wire header's 24 bytes.
REQUEST_BYTES = 24

PS_PER_S = 10**12
# A full Ethernet frame's IP packet: the unit of "one serialization time" when telling a
# back-to-back burst from a packet that found its NIC idle.
MTU_BYTES = 1500
DEFAULT_RATE_BPS = 10**9
LINE_FORMAT = "time_s,kind,flow,a,b[,c] (the ns-3 peer's trace format)"


class Event(NamedTuple):
    """One trace line; ``a``, ``b``, ``c`` mean what the README's table says for ``kind``."""

    time_ps: int
    kind: str
    flow: int
    a: int
    b: int
    c: int | None
    line: int


@dataclass
class Trace:
    """What ``read_trace`` keeps of a trace file: every kind counted, data events listed."""

    name: str
    counts: Counter = field(default_factory=Counter)
    #: tx, rtx and drop events in file (= time) order.
    data: list[Event] = field(default_factory=list)
    #: enq, deq and drop events at the bottleneck, in order.
    queue: list[Event] = field(default_factory=list)
    #: Time of the first tx/rtx: the origin of ``--until`` and of the times shown.
    start_ps: int | None = None


# --- reading ------------------------------------------------------------------------------


def parse_time_ps(text: str) -> int:
    """Seconds as written (``0.001153840``) to integer picoseconds, exactly, so a gap of
    exactly one serialization time compares equal to it instead of a float's neighbour."""
    whole, dot, frac = text.partition(".")
    if whole.isdigit() and (not dot or frac.isdigit()) and len(frac) <= 12:
        return int(whole) * PS_PER_S + int(frac.ljust(12, "0") or 0)
    value = Decimal(text) * PS_PER_S  # exponents and other spellings: slower, still exact
    if not value.is_finite() or value < 0:
        raise InvalidOperation(text)
    return int(value.to_integral_value())


def parse_line(text: str, line: int = 0) -> Event:
    """One CSV line of a trace; raises ``ValueError`` when it is not one."""
    parts = text.strip().split(",")
    if len(parts) not in (5, 6):
        raise ValueError(f"{len(parts)} fields")
    try:
        time_ps = parse_time_ps(parts[0])
    except (InvalidOperation, ValueError):
        raise ValueError(f"time {parts[0]!r}") from None
    kind = parts[1].strip()
    if not kind:
        raise ValueError("no kind")
    c = int(parts[5]) if len(parts) == 6 else None
    return Event(time_ps, kind, int(parts[2]), int(parts[3]), int(parts[4]), c, line)


def iter_events(path: str | Path) -> Iterator[Event]:
    """Every event of a trace file, in order. A header line (``time_s,...``) is skipped;
    any other line that is not an event is refused, naming the file and line."""
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise UsageError("trace", str(path), "an existing trace file") from None
    except OSError as e:
        raise EnvironmentProblem(f"cannot read {path}: {e.strerror}") from None
    with f:
        for n, text in enumerate(f, start=1):
            if not text.strip() or (n == 1 and text.startswith("time")):
                continue
            try:
                yield parse_line(text, n)
            except ValueError:
                raise UsageError(f"{path}:{n}", text.strip(), LINE_FORMAT) from None


def block_events(events: Iterable[Event], block: int, path: str | Path = "trace") -> list[Event]:
    """The events of block `block` (from 0), numbered from the block's first byte: see
    the module's ``--block``. Refuses a block the trace does not have, naming how many it has."""
    events = list(events)
    rounds: dict[int, list[Event]] = defaultdict(list)  # flow -> its requests, in order
    for e in events:
        if e.kind == "ack" and e.b == REQUEST_BYTES:
            # a request acknowledging no more than the flow's previous one is that request
            # sent again (the client's RTO, when the whole response was lost), not a new block
            if not rounds[e.flow] or e.a > rounds[e.flow][-1].a:
                rounds[e.flow].append(e)
    have = min((len(r) for r in rounds.values()), default=0)
    if block >= have:
        raise UsageError("--block", block, f"a block the trace {Path(path).name} has (0 to {have - 1})"
                         if have else f"a trace of synchronized reads ({Path(path).name} has no request)")
    start = min(r[block].time_ps for r in rounds.values())
    end = min((r[block + 1].time_ps for r in rounds.values() if len(r) > block + 1), default=None)
    base = {f: r[block].a - 1 for f, r in rounds.items()}  # the byte before the block's first
    out = []
    for e in events:
        if e.time_ps < start or (end is not None and e.time_ps >= end):
            continue
        if e.kind in SEQ_KINDS and e.flow in base:
            e = e._replace(a=e.a - base[e.flow])
        out.append(e)
    return out


def read_trace(path: str | Path, flow: int | None = None, until_s: float | None = None,
               block: int | None = None) -> Trace:
    """Count a trace's kinds and keep its data events, for one flow or all, up to
    ``until_s`` seconds after its first data packet (events before that packet count);
    with `block`, only that block's events (``block_events``)."""
    trace = Trace(name=Path(path).name)
    end_ps: int | None = None
    events: Iterable[Event] = iter_events(path)
    if block is not None:
        events = block_events(events, block, path)
    for e in events:
        if trace.start_ps is None and e.kind in SENDS:
            trace.start_ps = e.time_ps
            if until_s is not None:
                end_ps = e.time_ps + round(until_s * PS_PER_S)
        if end_ps is not None and e.time_ps > end_ps:
            break  # traces are written in time order
        if flow is not None and e.flow != flow:
            continue
        trace.counts[e.kind] += 1
        if e.kind in DATA_KINDS:
            trace.data.append(e)
        if e.kind in QUEUE_KINDS:
            trace.queue.append(e)
    return trace


# --- how a packet was sent, and which were dropped ------------------------------------------


class Sent(Enum):
    """How a data packet left its server (the rows of the drop-rate table)."""

    NEW_IDLE = "new packet onto an idle NIC"
    RTX_IDLE = "retransmission onto an idle NIC"
    BACK_TO_BACK = "2nd or later of a back-to-back burst"


def serialization_ps(rate_bps: int, packet_bytes: int = MTU_BYTES) -> int:
    """Time to put one ``packet_bytes`` packet on a ``rate_bps`` link, in ps."""
    return packet_bytes * 8 * PS_PER_S // rate_bps


def classify(send: Event, previous_send_ps: int | None, gap_ps: int) -> Sent:
    """A send less than ``gap_ps`` (one serialization time) after its flow's previous
    send waits behind it in the server's NIC: back-to-back. Otherwise the NIC was idle.
    (A packet arriving later than that behind a long burst still counts as idle here.)"""
    if previous_send_ps is not None and send.time_ps - previous_send_ps < gap_ps:
        return Sent.BACK_TO_BACK
    return Sent.RTX_IDLE if send.kind == "rtx" else Sent.NEW_IDLE


@dataclass
class DropStats:
    """Data packets sent and dropped at the bottleneck, by how they were sent."""

    sent: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    #: drop lines with no earlier tx/rtx of their (flow, seq): SYN-ACKs, pure ACKs, ...
    unmatched: int = 0
    #: drops of a retransmission: an ``rtx`` line, or a (flow, seq) sent before.
    lost_retransmits: int = 0

    def rate(self, how: Sent) -> float | None:
        return self.dropped[how] / self.sent[how] if self.sent[how] else None


def drop_stats(events: Iterable[Event], gap_ps: int) -> DropStats:
    """Classify each tx/rtx by ``classify`` and match each drop to the latest tx/rtx of
    the same (flow, seq) at or before it."""
    stats = DropStats()
    last_send_ps: dict[int, int] = {}
    latest: dict[tuple[int, int], tuple[Sent, bool]] = {}  # (flow, seq) -> (how, a resend)
    for e in events:
        if e.kind in SENDS:
            how = classify(e, last_send_ps.get(e.flow), gap_ps)
            last_send_ps[e.flow] = e.time_ps
            key = (e.flow, e.a)
            latest[key] = (how, e.kind == "rtx" or key in latest)
            stats.sent[how] += 1
        elif e.kind == "drop":
            match = latest.get((e.flow, e.a))
            if match is None:
                stats.unmatched += 1
                continue
            how, resent = match
            stats.dropped[how] += 1
            stats.lost_retransmits += resent
    return stats


def lost_retransmits(path: str | Path) -> int:
    """Retransmissions the bottleneck dropped in a trace file (any link rate: the count
    does not depend on how sends are classified)."""
    return drop_stats(read_trace(path).data, serialization_ps(DEFAULT_RATE_BPS)).lost_retransmits


# --- whose packets a drop found ----------------------------------------------------------------


class Company(Enum):
    """Whose packets were waiting at the bottleneck when a packet was dropped there."""

    OWN = "only its own flow's"
    MIXED = "its own flow's and others'"
    OTHERS = "only other flows'"
    NONE = "none (dropped at an empty queue)"


def drop_company(events: Iterable[Event]) -> Counter:
    """For each drop, whose packets the queue held (from the enq/deq events before it). A
    sender can overflow the queue by itself only if it sends faster than the port drains
    (its link faster than the port's rate); at the port's own rate, drops find others' packets."""
    held: Counter = Counter()
    found: Counter = Counter()
    for e in events:
        if e.kind == "enq":
            held[e.flow] += 1
        elif e.kind == "deq":
            # (a block cut from a longer trace can open with departures of earlier arrivals)
            held[e.flow] = max(0, held[e.flow] - 1)
        elif e.kind == "drop":
            own, others = held[e.flow] > 0, sum(held.values()) - held[e.flow] > 0
            found[Company.MIXED if own and others else Company.OWN if own else
                  Company.OTHERS if others else Company.NONE] += 1
    return found


def render_drop_company(a: Trace, b: Trace) -> str:
    ca, cb = drop_company(a.queue), drop_company(b.queue)
    ta, tb = sum(ca.values()) or 1, sum(cb.values()) or 1
    rows = [[c.value, str(ca[c]), f"{100 * ca[c] / ta:.0f}%", str(cb[c]), f"{100 * cb[c] / tb:.0f}%"] for c in Company]
    return render(["packets waiting at a drop", f"{a.name} drops", "share", f"{b.name} drops", "share"], rows)


# --- where two runs part ---------------------------------------------------------------------


def by_flow(events: Iterable[Event]) -> dict[int, list[Event]]:
    flows: dict[int, list[Event]] = defaultdict(list)
    for e in events:
        flows[e.flow].append(e)
    return flows


def first_divergence(a: Sequence[Event], b: Sequence[Event]) -> int | None:
    """The first index where one flow's (kind, a) sequences differ, or where one ends
    before the other; None when they are the same."""
    for i, (x, y) in enumerate(zip(a, b)):
        if (x.kind, x.a) != (y.kind, y.a):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


# --- the report --------------------------------------------------------------------------


def _ms(ps: int) -> str:
    return f"{ps / 1e9:.6f}"


def _event_cells(e: Event | None, start_ps: int) -> list[str]:
    if e is None:
        return ["", "(end)"]
    return [_ms(e.time_ps - start_ps), f"{e.kind} {e.a}"]


def render_counts(a: Trace, b: Trace) -> str:
    kinds = [k for k in KINDS if a.counts[k] or b.counts[k]]
    kinds += sorted((set(a.counts) | set(b.counts)) - set(KINDS))
    rows = [[k, str(a.counts[k]), str(b.counts[k])] for k in kinds]
    return render(["kind", a.name, b.name], rows)


def _rate_cells(stats: DropStats, how: Sent) -> list[str]:
    r = stats.rate(how)
    return [str(stats.sent[how]), str(stats.dropped[how]), "-" if r is None else f"{100 * r:.2f}%"]


def render_drop_rates(a: Trace, b: Trace, gap_ps: int) -> str:
    sa, sb = drop_stats(a.data, gap_ps), drop_stats(b.data, gap_ps)
    rows = [[how.value, *_rate_cells(sa, how), *_rate_cells(sb, how)] for how in Sent]
    rows.append(["drops with no earlier send", "", str(sa.unmatched), "", "", str(sb.unmatched), ""])
    rows.append(["dropped retransmissions", "", str(sa.lost_retransmits), "", "", str(sb.lost_retransmits), ""])
    heads = ["how sent", f"{a.name} sent", "dropped", "rate", f"{b.name} sent", "dropped", "rate"]
    return render(heads, rows)


def render_divergence(flow: int, a: Trace, b: Trace, ea: list[Event], eb: list[Event], context: int) -> str:
    """One flow's first divergence, with ``context`` aligned events either side."""
    i = first_divergence(ea, eb)
    if i is None:
        return f"flow {flow}: the same {len(ea)} tx/rtx/drop events"
    lo, hi = max(0, i - context), min(max(len(ea), len(eb)), i + context + 1)
    rows = []
    for j in range(lo, hi):
        x = ea[j] if j < len(ea) else None
        y = eb[j] if j < len(eb) else None
        rows.append([">" if j == i else "", str(j), *_event_cells(x, a.start_ps or 0), *_event_cells(y, b.start_ps or 0)])
    heads = ["", "#", f"{a.name} ms", "event", f"{b.name} ms", "event"]
    title = f"flow {flow}: first divergence at its event {i} ({len(ea)} vs {len(eb)} tx/rtx/drop events)"
    return title + "\n" + render(heads, rows)


def render_divergences(a: Trace, b: Trace, context: int) -> str:
    fa, fb = by_flow(a.data), by_flow(b.data)
    return "\n".join(render_divergence(f, a, b, fa.get(f, []), fb.get(f, []), context)
                     for f in sorted(set(fa) | set(fb)))


def _start_text(t: Trace) -> str:
    return "no data packet" if t.start_ps is None else f"first data packet at {_ms(t.start_ps)} ms"


def report(a: Trace, b: Trace, rate_bps: int, context: int = 3) -> str:
    gap = serialization_ps(rate_bps)
    return "\n".join([
        f"# A = {a.name} ({_start_text(a)}), B = {b.name} ({_start_text(b)}); times below count from there",
        "",
        "events by kind",
        render_counts(a, b),
        "",
        f"drop rate at the bottleneck by how the packet was sent (back-to-back: within one "
        f"serialization time, {gap / 1e6:g} us for {MTU_BYTES} B at {units.format_rate(rate_bps)}, "
        f"of its flow's previous send)",
        render_drop_rates(a, b, gap),
        "",
        "whose packets the bottleneck held when it dropped one (from its enq/deq/drop events)",
        render_drop_company(a, b),
        "",
        "first divergence per flow ((kind, seq) of tx, rtx and drop)",
        render_divergences(a, b, context),
    ])


# --- command line --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from ..cli.main import ArgumentParser  # one-line usage errors, exit status 2

    p = ArgumentParser(prog="python -m incastlab.peers.tracediff",
                       description="Compare two per-event traces in the ns-3 peer's format "
                                   "(time_s,kind,flow,a,b[,c]): counts, drop rates by how packets "
                                   "were sent, and each flow's first divergence.")
    p.add_argument("a", metavar="A.csv", help="first trace (e.g. ns-3's --trace output)")
    p.add_argument("b", metavar="B.csv", help="second trace (e.g. incastlab's --events output)")
    p.add_argument("--flow", type=_nonnegative("--flow"), default=None, metavar="F", help="only flow F")
    p.add_argument("--until", type=_positive_seconds, default=None, metavar="SECONDS",
                   help="only events up to SECONDS after each trace's first data packet")
    p.add_argument("--rate", type=_rate, default=DEFAULT_RATE_BPS, metavar="RATE",
                   help="link rate that sets one serialization time (default 1Gbps)")
    p.add_argument("--context", type=_nonnegative("--context"), default=3, metavar="N",
                   help="events shown either side of a divergence (default 3)")
    p.add_argument("--block", type=_nonnegative("--block"), default=None, metavar="K",
                   help="only block K (from 0) of synchronized reads, numbered from its first byte")
    return p


def _rate(text: str) -> int:
    try:
        return units.parse_rate(text, "--rate")
    except UsageError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {e.allowed}") from None


def _nonnegative(flag: str):
    def parse(text: str) -> int:
        if not text.strip().isdigit():
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected a whole number, 0 or more")
        return int(text)
    parse.__name__ = flag
    return parse


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected seconds above zero, e.g. 0.2")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        a = read_trace(args.a, args.flow, args.until, args.block)
        b = read_trace(args.b, args.flow, args.until, args.block)
        if a.name == b.name:  # same file name from two directories: tell them apart
            a.name, b.name = f"A:{a.name}", f"B:{b.name}"
        print(report(a, b, args.rate, args.context))
    except (UsageError, EnvironmentProblem) as e:
        print(f"tracediff: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


def each_trace(tool: str, analyse: Callable[[str], Any], paths: Sequence[str]) -> int:
    """The ``main`` of a trace tool in ``scripts/`` (``tool``.py): ``analyse`` each trace and
    print ``path result``; no trace given, or one that is missing or not a trace, is one line
    on stderr naming it, and status 2."""
    if not paths:
        print(f"usage: python scripts/{tool}.py TRACE.csv [TRACE.csv ...]", file=sys.stderr)
        return 2
    for p in paths:
        try:
            result = analyse(p)
        except (OSError, ValueError, EnvironmentProblem) as e:  # UsageError is a ValueError
            print(f"{tool}: {e}" if p in str(e) else f"{tool}: {p}: {e}", file=sys.stderr)
            return 2
        print(p, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
