"""The incast verdict: one second of evidence in, a judgement and its reasons out.

Incast at a receiver has a signature made of three parts (``003_a133663d5dbcfa75.txt``:
"microbursts" at line rate invisible at 1 s sampling, frames dropped at a shallow switch
buffer, and TCP senders waiting out a 200 ms RTO; ``000_315d806dde942a9f.txt`` §4: the
collapse is caused by retransmission timeouts after whole-window losses):

1. **microbursts**: in some direction, the 1 ms peak rate is at least ``BURST_RATIO`` times
   the 1 s average, and (when the line rate is known) at least ``LINE_FRACTION`` of it;
   without a line rate the peak must exceed ``MIN_PEAK_BPS`` so an idle link's noise
   does not count;
2. **timeouts**: at least ``MIN_TIMEOUTS`` RTO timeouts (TcpExt TCPTimeouts) in the second;
3. **loss**: qdisc drops, or retransmitted segments in the second beyond those the receivers
   reported as duplicates (D-SACK, RFC 2883; RFC 3708 uses it to detect spurious
   retransmissions): a retransmission whose original arrived lost nothing. On a CPU-starved
   loopback every retransmission was such a tail loss probe (measured: 45 retransmitted
   segments, 45 D-SACKed, no fast retransmit, no out-of-order segment).

Verdict: ``incast`` when 1 and 2 hold (3 is reported as supporting evidence); ``possible``
when microbursts come with loss but no timeout, or when microbursts are seen but the
timeout counters could not be read; ``none`` otherwise (timeouts without microbursts are
reported, but point at something other than incast).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BURST_RATIO = 3.0
LINE_FRACTION = 0.7
MIN_PEAK_BPS = 10e6
MIN_TIMEOUTS = 1
# Incast is fan-in: at least this many peers delivered data in the second (monitor.senders).
MIN_SENDERS = 2


@dataclass
class DirectionFacts:
    """Rates of one direction (rx or tx) over one second."""

    name: str
    avg_bps: float
    peak_1ms_bps: float | None  # None when 1 ms is finer than the sampling achieved
    burst_runs_ms: list[int] = field(default_factory=list)  # runs of 1 ms buckets near line rate


@dataclass
class SecondFacts:
    directions: list[DirectionFacts]
    line_rate_bps: float | None
    rto_timeouts: int | None  # None when unreadable
    retrans_segs: int | None
    qdisc_drops: dict[str, int]  # qdisc name -> drops this second (only readable ones)
    senders: int | None = None  # TCP peers that delivered data this second; None if unknown
    # segments the receivers reported as duplicates (TcpExt TCPDSACKRecvSegs); None if unknown
    spurious_retrans: int | None = None


@dataclass
class Verdict:
    level: str  # "incast" | "possible" | "none"
    evidence: str

    def __str__(self) -> str:
        return self.evidence


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:.0f} Mbit/s"


def _bursty(d: DirectionFacts, line_rate: float | None) -> bool:
    if d.peak_1ms_bps is None or d.avg_bps <= 0:
        return False
    if d.peak_1ms_bps < BURST_RATIO * d.avg_bps:
        return False
    if line_rate:
        return d.peak_1ms_bps >= LINE_FRACTION * line_rate
    return d.peak_1ms_bps >= MIN_PEAK_BPS


def _burst_text(d: DirectionFacts, line_rate: float | None) -> str:
    ratio = d.peak_1ms_bps / d.avg_bps
    where = f"{100 * d.peak_1ms_bps / line_rate:.0f} % of line rate" if line_rate else "line rate unknown"
    text = f"microbursts on {d.name}: 1 ms peak {_mbps(d.peak_1ms_bps)} ({where}), {ratio:.1f}x the 1 s average"
    if d.burst_runs_ms:
        lo, hi = min(d.burst_runs_ms), max(d.burst_runs_ms)
        span = f"{lo} ms" if lo == hi else f"{lo}-{hi} ms"
        text += f", {len(d.burst_runs_ms)} bursts at line rate lasting {span}"
    return text


def judge(f: SecondFacts) -> Verdict:
    """Apply the rule in the module docstring to one second."""
    bursts = [d for d in f.directions if _bursty(d, f.line_rate_bps)]
    parts = [_burst_text(d, f.line_rate_bps) for d in bursts]
    if f.rto_timeouts:
        parts.append(f"{f.rto_timeouts} RTO timeouts/s")
    drops = {q: n for q, n in f.qdisc_drops.items() if n > 0}
    if drops:
        parts.append("drops at " + ", ".join(f"qdisc {q} ({n}/s)" for q, n in drops.items()))
    # D-SACKs arrive a round trip after their retransmission, possibly in the next second:
    # never more spurious retransmissions than retransmissions
    spurious = min(f.spurious_retrans or 0, f.retrans_segs or 0)
    if f.retrans_segs:
        parts.append(f"{f.retrans_segs} retransmitted segments/s"
                     + (f" ({spurious} of them spurious, D-SACKed)" if spurious else ""))
    if f.senders is not None:
        parts.append(f"{f.senders} TCP sender{'s' if f.senders != 1 else ''}")
    evidence = "; ".join(parts)
    timeouts = f.rto_timeouts is not None and f.rto_timeouts >= MIN_TIMEOUTS
    loss = bool(drops) or (f.retrans_segs or 0) > spurious
    if bursts and timeouts and f.senders is not None and f.senders < MIN_SENDERS:
        # one flow stalling on its own RTOs, not many answering at once
        return Verdict("none", f"no sign of incast (one sender: a flow's own loss stalls; {evidence})")
    if bursts and timeouts:
        return Verdict("incast", f"{evidence}: consistent with incast")
    if bursts and f.rto_timeouts is None:
        return Verdict("possible", f"{evidence}; RTO timeouts unreadable: possible incast")
    if bursts and loss:
        return Verdict("possible", f"{evidence}; no RTO timeout: possible incast (losses recovered without timeouts)")
    if timeouts and not bursts:
        return Verdict("none", f"no sign of incast (no microbursts; {evidence})")
    return Verdict("none", "no sign of incast" + (f" ({evidence})" if evidence else ""))
