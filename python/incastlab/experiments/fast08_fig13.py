"""FAST'08 Fig. 13: RTOmin 200 ms vs 200 us (000_315d806dde942a9f.txt §5.2).

(a) TCP Reno for several SRU sizes, each with RTOmin 200 ms and 200 us; (b) Reno, NewReno
and SACK with RTOmin 200 us next to NewReno at 200 ms. 32 KiB buffer (the project default; the seed
text does not give Fig. 13's), FAST'08 Table 1 otherwise. Timers are high resolution
(G = 1 us): the paper's ns-2 runs had no clock granularity problem (§5.2 discusses it for
real kernels; see wren09-timers).
"""

from __future__ import annotations

import math

from .measure import at, curve, fmt_x, mbps
from .sources import FAST08, FAST08_SERVERS, QUICK_SERVERS
from .spec import Check, Experiment, Plot, Series

SRUS = ("10KiB", "64KiB", "256KiB", "1000KiB")
PANEL_A, PANEL_B = "(a) Reno, varying SRU size", "(b) TCP variants, SRU 256KiB"
SRC = f"{FAST08} §5.2, Fig. 13"


def reno(sru: str, rto: str) -> str:
    return f"Reno SRU {sru}, RTOmin {rto}"


def variant(name: str, rto: str) -> str:
    return f"{name}, RTOmin {rto}"


# §5.2: "Reducing RTOmin to 200us requires a TCP clock granularity of 100us"
RTO = {"200ms": {"rto_min": "200ms"}, "200us": {"rto_min": "200us", "timer_granularity": "100us"}}

# (a): one colour per SRU, dashed at 200 ms, solid at 200 us
SERIES = tuple(
    Series(reno(s, rto), {"tcp": "reno", "sru": s, **RTO[rto]}, PANEL_A,
           style={"color": f"C{i}", "linestyle": "--" if rto == "200ms" else "-"})
    for i, s in enumerate(SRUS) for rto in ("200ms", "200us")
) + (
    Series(variant("NewReno", "200ms"), {"tcp": "newreno", **RTO["200ms"]}, PANEL_B),
    Series(variant("NewReno", "200us"), {"tcp": "newreno", **RTO["200us"]}, PANEL_B),
    Series(variant("Reno", "200us"), {"tcp": "reno", **RTO["200us"]}, PANEL_B),
    Series(variant("SACK", "200us"), {"tcp": "sack", **RTO["200us"]}, PANEL_B),
)


def newreno_order_of_magnitude(df):
    parts, ok = [], True
    for n in (8, 16, 32):
        slow, fast = at(df, variant("NewReno", "200ms"), n), at(df, variant("NewReno", "200us"), n)
        r = fast / slow if slow else float("inf")
        parts.append(f"{n}: {mbps(slow)} -> {mbps(fast)} ({fmt_x(r)})")
        ok &= r >= 10
    return "NewReno " + "; ".join(parts), ok


def reno_every_sru(df):
    parts, ok = [], True
    for s in SRUS:
        slow, fast = curve(df, reno(s, "200ms")), curve(df, reno(s, "200us"))
        ns = [n for n in slow.index if 8 <= n <= 32]
        # geometric mean of the gain over the paper's 8-32 servers
        g = math.exp(sum(math.log(max(fast[n], 1e-9) / max(slow[n], 1e-9)) for n in ns) / len(ns))
        parts.append(f"{s} {fmt_x(g)}")
        ok &= g >= 10
    return "Reno, gain of 200us over 200ms (geometric mean over 8-32 servers): " + ", ".join(parts), ok


def newreno_30_percent_at_64(df):
    c = curve(df, variant("NewReno", "200us"))
    drop = 1 - c[64] / c.iloc[0]
    return (f"NewReno 200us: {mbps(c.iloc[0])} at 1 server, {mbps(c[64])} at 64 ({drop:.0%} lower)",
            0.2 <= drop <= 0.4)


EXPERIMENT = Experiment(
    name="fast08-fig13",
    title="RTOmin 200 ms vs 200 us",
    source=f"{FAST08} Fig. 13",
    summary="Goodput vs. servers with RTOmin 200 ms and 200 us: (a) Reno for SRUs of 10 KiB to 1000 KiB, "
            "(b) Reno, NewReno and SACK; 200 us gives an order of magnitude at 8-32 servers.",
    series=SERIES,
    base={"preset": "fast08", "buffer": "32KiB"},
    values=FAST08_SERVERS,
    quick_values=QUICK_SERVERS,
    # the 200 ms curves sit at 2-150 Mbps, 200 us at 100-950: apart only on a log axis
    plot=Plot(logy=True),
    checks=(
        Check("\"reducing RTOmin from 200ms to 200us improves goodput by an order of magnitude for between 8 "
              "to 32 servers\" (NewReno, >= 10x at 8, 16 and 32)", SRC, newreno_order_of_magnitude),
        Check("\"for any given SRU size, reducing RTOmin to 200us results in an order of magnitude improvement "
              "in goodput using TCP Reno\" (>= 10x, geometric mean over 8-32 servers)", f"{FAST08} §5.2, Fig. 13(a)",
              reno_every_sru),
        Check("\"even with an aggressive RTOmin value of 200us, TCP NewReno still observes a 30% decrease in "
              "goodput for 64 servers\" (20-40% below 1 server)", f"{FAST08} §5.2, Fig. 13(b)",
              newreno_30_percent_at_64),
    ),
)
