"""DCTCP against NewReno on incast: what ``dctcp-incast-1g`` and ``dctcp-incast-10g`` share.

The workload is SIGCOMM'09's fixed block (001_e0dada207805edc8.txt: "Each of N servers
respond with 1 MB / N bytes"), one port's shallow buffer of 100 packets (the 10 Gbps
panel of ``sigcomm09-fixed-block`` and ``incastlab bench``'s 10 Gbps incast: 100 x 1500 B),
and the marking threshold K of the DCTCP paper (Alizadeh et al., "Data Center TCP
(DCTCP)", SIGCOMM 2010, §3.3's guideline K > C x RTT / 7 and §4's settings: K = 20
packets at 1 Gbps, 65 at 10 Gbps; RFC 8257 §3.1 marks at an instantaneous queue of K).
The paper is not among the seeds; its section numbers are cited from the published paper.

Both ccs see the same switch (it marks only ECN-capable packets, RFC 3168 §6.1.1, so
NewReno's are never marked); RFC rules, 1460 B segments, RTOmin 200 ms, IW 2 (the
project's defaults, docs/defaults.md) and a receive window of 64 KiB, the largest a
16-bit window field holds without window scaling (RFC 7323 §2), so that one server can
fill either link (bandwidth-delay products 12.5 kB at 1 Gbps, 50 kB at 10 Gbps; the
default 20 x 1460 B would hold one server to 5.4 Gbps at 10 Gbps).

The checks are derived from the parameters, not from the curves:

- a block with one retransmission timeout lasts at least RTOmin, so goodput is then at
  most 1 MiB / 200 ms = 42 Mbps: "collapsed" is below half the payload capacity, "holds"
  is at least 80 % of it (the bar of ``sigcomm09-fixed-block``'s "maximum throughput");
- where DCTCP collapses, from its first round (a block's first RTT, measured: the first
  block already times out): every server sends its IW packets at once, before any mark
  can come back (RFC 8257 §3.2-3.4), so the port must absorb N x IW packets. The first K
  of them find fewer than K queued and are not marked (§3.1); their ACKs come back
  without ECE, and each makes slow start send one packet more than it acknowledges
  (RFC 5681 §3.1), up to K more packets, while the port drains about a bandwidth-delay
  product (C x RTT / packet) before those ACKs return. So the first round overflows the
  B-packet buffer when N x IW + K - BDP > B, or, whatever K, when N x IW > B, i.e. from
  N_burst = B // IW + 1 on: N_pred = min(N_burst, ceil((B - K + BDP) / IW)). DCTCP's first
  collapsed N must lie within the margin of N_pred, and every N from N_burst plus the
  margin must be collapsed. The margin is 15 % either side: the port also drains while
  the burst arrives (IW packet times, plus the servers' U(0, 3 us) think time with several
  seeds), ACKs of servers whose second packet was marked still grow the window on their
  first, and whether a drop ends in a timeout (a block's last packets) or in fast
  retransmit flips near the edge.
"""

from __future__ import annotations

import math

from ..scenario import Scenario
from .measure import curve, first_below, link_payload_mbps, mbps
from .sources import DCTCP_PAPER, SIGCOMM09
from .spec import Check, Series

HOLDS, COLLAPSED = 0.8, 0.5  # shares of the payload capacity, see the module docstring
MARGIN = 0.15  # on the predicted collapse, see the module docstring
BUFFER_PACKETS = 100
BASE = {"block": "1MiB", "buffer_packets": BUFFER_PACKETS, "rwnd": "64KiB"}
NEWRENO = "NewReno"


def dctcp_label(k: int) -> str:
    return f"DCTCP, K = {k} packets"


def series(net: dict, k_values: tuple[int, ...], servers: tuple[int, ...], quick: tuple[int, ...]) -> tuple:
    """NewReno, then DCTCP at each K, on the same switch (its threshold is the first K)."""
    port = {**net, "ecn_threshold": k_values[0]}
    out = [Series(NEWRENO, {**port, "cc": "newreno"}, values=servers, quick_values=quick)]
    for k in k_values:
        out.append(Series(dctcp_label(k), {**net, "cc": "dctcp", "ecn_threshold": k}, values=servers,
                          quick_values=quick))
    return tuple(out)


def predicted_collapse(params: dict) -> tuple[int, int]:
    """(N_burst, N_pred) of the module docstring from a series' Scenario fields."""
    scn = Scenario(servers=1, **BASE, **params)
    iw, b, k = scn.init_cwnd, scn.buffer_packets, scn.ecn_threshold
    bdp = scn.rate * scn.rtt / ((scn.mss + scn.header) * 8)
    burst = b // iw + 1
    return burst, min(burst, math.ceil((b - k + bdp) / iw))


def first_collapse(c, cap: float):
    """The smallest N at which the curve is below COLLAPSED x capacity (None if never)."""
    return first_below(c, COLLAPSED * cap)


def holds_where_newreno_collapsed(exp_series: tuple):
    """Check (1): DCTCP >= 80 % at every N up to NewReno's first collapse."""
    def measure(df):
        cap = link_payload_mbps(df)
        nr = curve(df, NEWRENO)
        n_nr = first_collapse(nr, cap)
        if n_nr is None:
            return f"NewReno never fell below {COLLAPSED:.0%} of {cap:.0f} Mbps", False
        parts, ok = [f"NewReno first below {COLLAPSED:.0%} at {n_nr} servers ({mbps(nr[n_nr])})"], True
        for s in exp_series:
            if s.params.get("cc") != "dctcp":
                continue
            d = curve(df, s.label)
            upto = d[d.index <= n_nr]
            ok &= bool(upto.min() >= HOLDS * cap)
            both = [n for n in nr.index if nr[n] < COLLAPSED * cap and d[n] >= HOLDS * cap]
            parts.append(f"{s.label}: lowest {mbps(upto.min())} ({upto.min() / cap:.0%}) at 1-{n_nr} servers; "
                         f"holds where NewReno is collapsed at N = {', '.join(map(str, both)) or 'none'}")
        return "; ".join(parts), ok
    return measure


def collapse_as_predicted(exp_series: tuple):
    """Check (2): DCTCP's first collapse within MARGIN of N_pred, and collapsed from N_burst + MARGIN on."""
    def measure(df):
        cap = link_payload_mbps(df)
        parts, ok = [], True
        for s in exp_series:
            if s.params.get("cc") != "dctcp":
                continue
            burst, pred = predicted_collapse(s.params)
            lo, hi = pred * (1 - MARGIN), pred * (1 + MARGIN)
            d = curve(df, s.label)
            first = first_collapse(d, cap)
            beyond = d[d.index >= burst * (1 + MARGIN)]
            fine = first is not None and lo <= first <= hi and bool(len(beyond)) and bool(
                beyond.max() < COLLAPSED * cap)
            ok &= fine
            parts.append(f"{s.label}: predicted {pred} ({lo:.1f}-{hi:.1f}), first below {COLLAPSED:.0%} at {first} "
                         f"servers; N_burst {burst}, highest at N >= {burst * (1 + MARGIN):.1f} "
                         f"{mbps(beyond.max()) if len(beyond) else 'none'}")
        return "; ".join(parts), ok
    return measure


def checks(exp_series: tuple) -> tuple[Check, ...]:
    src = f"{DCTCP_PAPER} §4.2.1 (incast); RFC 8257 §3; workload {SIGCOMM09}"
    return (
        Check(f"DCTCP holds goodput where NewReno collapses: at every N up to the first where NewReno is below "
              f"{COLLAPSED:.0%} of the payload capacity, DCTCP keeps at least {HOLDS:.0%} (a block with one "
              f"200 ms timeout is at most 42 Mbps)", src, holds_where_newreno_collapsed(exp_series)),
        Check(f"DCTCP too collapses once the servers' first windows overflow the buffer: its first N below "
              f"{COLLAPSED:.0%} is within {MARGIN:.0%} of N_pred = min(B // IW + 1, ceil((B - K + BDP) / IW)) (the "
              f"first round's N x IW packets, plus the K unmarked ones' slow-start extras less an RTT's drain, "
              f"exceed the B-packet buffer), and below it at every N >= {1 + MARGIN:g} x N_burst = B // IW + 1 "
              f"(the first windows alone exceed the buffer)", src, collapse_as_predicted(exp_series)),
    )
