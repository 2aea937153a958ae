"""The incast verdict: one second of evidence in, a judgement and its reasons out.

Incast at a receiver is three things in order (``003_a133663d5dbcfa75.txt``: "enough frames
will arrive from all over the cluster to overrun the Ethernet switch's buffers for the
coordinator machine's Ethernet port", then TCP waits out "200 milliseconds";
``000_315d806dde942a9f.txt`` §4: the collapse is caused by retransmission timeouts after
whole-window losses):

1. **fan-in in the same instants**: at least ``MIN_SENDERS`` TCP senders delivered data
   within one short interval (1 ms in the simulator; the monitor's socket poll, 10 ms by
   default) while the receive link ran at line rate (a finest-interval bucket at
   ``LINE_FRACTION`` of it or more). Where the fan-in per interval is not known, the TCP
   senders of the second together with line-rate runs at the finest interval stand for it;
2. **the port overflowed**: frames dropped (a qdisc, or the switch port towards the host),
   or retransmitted segments beyond those the receivers reported as duplicates (D-SACK,
   RFC 2883; RFC 3708 uses it to detect spurious retransmissions: on a CPU-starved loopback
   every retransmission was such a tail loss probe, 45 retransmitted, 45 D-SACKed);
3. **flows then stalled for a retransmission timeout**: at least ``MIN_TIMEOUTS`` RTO
   timeouts (TcpExt TCPTimeouts); where they cannot be read, a sender whose deliveries
   stopped for ``STALL_S`` (Linux's 200 ms RTOmin less one poll) before resuming.

Verdict (:func:`judge`): ``incast`` when 3 holds in the second and 1 and 2 held together in it
or in the second before (a timeout fires at least an RTOmin, 200 ms on Linux, after its loss,
often in the next second); ``possible`` when 1 and 2 hold without a timeout (losses recovered
without one), or when the timeouts cannot be read; ``none`` otherwise, saying why (one
sender: a flow's own loss stalls; no overflow; no fan-in at line rate).

Nothing here compares the peak with the average: a host at 80 % of its link is judged as one
at 5 %. The rule before issue 26 needed a 1 ms peak of ``BURST_RATIO`` times the 1 s average,
which a host above a third of its link never shows; it is kept as :func:`judge_ratio`, used
for comparison (``incastlab monitor truth``) and where neither the fan-in per interval nor
the senders of the second are known (a host whose sockets cannot be read), the only case it
has evidence the new rule lacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BURST_RATIO = 3.0
LINE_FRACTION = 0.7
MIN_PEAK_BPS = 10e6
MIN_TIMEOUTS = 1
# Incast is fan-in: at least this many peers delivered data (monitor.senders).
MIN_SENDERS = 2
# A sender silent this long and then delivering again waited out an RTO: Linux's TCP_RTO_MIN
# is 200 ms (include/net/tcp.h, HZ / 5); less the 10 ms of the monitor's socket poll.
STALL_S = 0.19


@dataclass
class DirectionFacts:
    """Rates of one direction (rx or tx) over one second."""

    name: str
    avg_bps: float
    peak_1ms_bps: float | None  # None when 1 ms is finer than the sampling achieved
    burst_runs_ms: list[int] = field(default_factory=list)  # runs of 1 ms buckets near line rate


@dataclass
class FanIn:
    """The most TCP senders that delivered data within one ``interval_s`` while the receive
    link ran at line rate in it (0 when it never did)."""

    senders: int
    interval_s: float


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
    # fan-in per short interval at line rate; None where per-interval deliveries are not known
    fanin: FanIn | None = None
    # senders that resumed after a silence of STALL_S or more; None if unknown
    stalls: int | None = None


@dataclass
class Verdict:
    level: str  # "incast" | "possible" | "none"
    evidence: str

    def __str__(self) -> str:
        return self.evidence


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:.0f} Mbit/s"


# -- the pieces of evidence -----------------------------------------------------------------

def _spurious(f: SecondFacts) -> int:
    # D-SACKs arrive a round trip after their retransmission, possibly in the next second:
    # never more spurious retransmissions than retransmissions
    return min(f.spurious_retrans or 0, f.retrans_segs or 0)


def _drops(f: SecondFacts) -> dict[str, int]:
    return {q: n for q, n in f.qdisc_drops.items() if n > 0}


def overflowed(f: SecondFacts) -> bool:
    """Frames dropped, or segments retransmitted that were really lost."""
    return bool(_drops(f)) or (f.retrans_segs or 0) > _spurious(f)


def _line_rate_run(d: DirectionFacts, line_rate: float | None) -> bool:
    """The finest-interval rate reached line rate (or, line rate unknown, a real burst)."""
    if d.peak_1ms_bps is None:
        return False
    if line_rate:
        return d.peak_1ms_bps >= LINE_FRACTION * line_rate
    return d.peak_1ms_bps >= MIN_PEAK_BPS


def fanin_known(f: SecondFacts) -> bool:
    return f.fanin is not None or f.senders is not None


def fanned_in(f: SecondFacts) -> bool:
    """At least MIN_SENDERS senders' data arrived in the same instants at line rate."""
    if f.fanin is not None:
        return f.fanin.senders >= MIN_SENDERS
    rx = [d for d in f.directions if d.name == "rx"] or f.directions
    return (f.senders or 0) >= MIN_SENDERS and any(_line_rate_run(d, f.line_rate_bps) for d in rx)


def burst(f: SecondFacts) -> bool:
    """Many senders' data met at line rate and the port overflowed, in this second."""
    return fanin_known(f) and fanned_in(f) and overflowed(f)


def _stalled(f: SecondFacts) -> bool | None:
    """Flows waited out an RTO: the timeout counter, else the senders seen resuming after a
    silence; None when neither can be read."""
    if f.rto_timeouts is not None:
        return f.rto_timeouts >= MIN_TIMEOUTS
    if f.stalls is not None:
        return f.stalls >= 1
    return None


# -- the evidence as text ---------------------------------------------------------------------

def _burst_text(d: DirectionFacts, line_rate: float | None) -> str:
    ratio = d.peak_1ms_bps / d.avg_bps if d.avg_bps > 0 else float("inf")
    where = f"{100 * d.peak_1ms_bps / line_rate:.0f} % of line rate" if line_rate else "line rate unknown"
    text = f"microbursts on {d.name}: 1 ms peak {_mbps(d.peak_1ms_bps)} ({where}), {ratio:.1f}x the 1 s average"
    if d.burst_runs_ms:
        lo, hi = min(d.burst_runs_ms), max(d.burst_runs_ms)
        span = f"{lo} ms" if lo == hi else f"{lo}-{hi} ms"
        text += f", {len(d.burst_runs_ms)} bursts at line rate lasting {span}"
    return text


def _interval_text(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"  # a loaded host's 27.2919 ms reads 27.3 ms


def _evidence(f: SecondFacts, bursts: list[DirectionFacts]) -> list[str]:
    parts = [_burst_text(d, f.line_rate_bps) for d in bursts]
    if f.fanin is not None and f.fanin.senders:
        parts.append(f"{f.fanin.senders} TCP senders within one {_interval_text(f.fanin.interval_s)} at line rate")
    if f.rto_timeouts:
        parts.append(f"{f.rto_timeouts} RTO timeouts/s")
    if f.stalls:
        parts.append(f"{f.stalls} sender{'s' if f.stalls != 1 else ''} resumed after {STALL_S * 1e3:.0f} ms or more "
                     "of silence")
    drops = _drops(f)
    if drops:
        parts.append("drops at " + ", ".join(f"qdisc {q} ({n}/s)" for q, n in drops.items()))
    spurious = _spurious(f)
    if f.retrans_segs:
        parts.append(f"{f.retrans_segs} retransmitted segments/s"
                     + (f" ({spurious} of them spurious, D-SACKed)" if spurious else ""))
    if f.senders is not None:
        parts.append(f"{f.senders} TCP sender{'s' if f.senders != 1 else ''}")
    return parts


# -- the rules --------------------------------------------------------------------------------

def judge(f: SecondFacts, previous: SecondFacts | None = None) -> Verdict:
    """The rule in the module docstring for second ``f``; ``previous`` is the second before
    it (its burst may be what this second's timeouts come from)."""
    if not fanin_known(f):
        return judge_ratio(f)
    line = [d for d in f.directions if _line_rate_run(d, f.line_rate_bps)]
    shown = [d for d in line if d.name == "rx"] or line
    evidence = "; ".join(_evidence(f, shown))
    now, before = burst(f), previous is not None and burst(previous)
    stalled = _stalled(f)
    if (now or before) and stalled:
        where = "" if now else "; the burst and its losses in the second before"
        return Verdict("incast", f"{evidence}{where}: consistent with incast")
    if now and stalled is None:
        return Verdict("possible", f"{evidence}; RTO timeouts unreadable: possible incast")
    if now:
        return Verdict("possible", f"{evidence}; no RTO timeout: possible incast (losses recovered without timeouts)")
    if not (line or stalled or overflowed(f)):
        return Verdict("none", "no sign of incast" + (f" ({evidence})" if evidence else ""))
    if stalled and overflowed(f) and (f.senders or 0) < MIN_SENDERS and (f.fanin is None or f.fanin.senders < 2):
        return Verdict("none", f"no sign of incast (one sender: a flow's own loss stalls; {evidence})")
    if not fanned_in(f):
        return Verdict("none", f"no sign of incast (no fan-in at line rate; {evidence})")
    # (fan-in with an overflow is a burst, judged above)
    return Verdict("none", f"no sign of incast (no overflow; {evidence})")


def _bursty(d: DirectionFacts, line_rate: float | None) -> bool:
    if d.peak_1ms_bps is None or d.avg_bps <= 0:
        return False
    if d.peak_1ms_bps < BURST_RATIO * d.avg_bps:
        return False
    if line_rate:
        return d.peak_1ms_bps >= LINE_FRACTION * line_rate
    return d.peak_1ms_bps >= MIN_PEAK_BPS


def judge_ratio(f: SecondFacts) -> Verdict:
    """The rule before issue 26: ``incast`` when, in rx or tx, the 1 ms peak is at least
    ``BURST_RATIO`` x the 1 s average and ``LINE_FRACTION`` of the line rate (without a line
    rate: above ``MIN_PEAK_BPS``) and at least one RTO timeout came, unless one sender alone
    delivered; ``possible`` when such microbursts come with loss but no timeout, or with the
    timeouts unreadable; ``none`` otherwise. Above a third of the link no second can have
    such a microburst: the limit issue 26 removed."""
    bursts = [d for d in f.directions if _bursty(d, f.line_rate_bps)]
    evidence = "; ".join(_evidence(dataclass_without_fanin(f), bursts))
    timeouts = f.rto_timeouts is not None and f.rto_timeouts >= MIN_TIMEOUTS
    loss = overflowed(f)
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


def dataclass_without_fanin(f: SecondFacts) -> SecondFacts:
    """``f`` as the rule before issue 26 read it (it had no fan-in per interval, no stalls)."""
    from dataclasses import replace

    return replace(f, fanin=None, stalls=None)
