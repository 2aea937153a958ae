"""FAST'08 Fig. 12: limited transmit, dupack threshold 1, no slow start (000_315d806dde942a9f.txt §5.1.2).

NewReno with each mechanism on its own, FAST'08 Table 1 otherwise, 32 KiB buffer (as in
fast08-fig10; the seed text does not give Fig. 12's).
"""

from __future__ import annotations

from .measure import curve, fmt_x, mbps
from .sources import FAST08, FAST08_SERVERS, QUICK_SERVERS
from .spec import Check, Experiment, Series

NEWRENO = "NewReno"
LT = "NewReno + limited transmit"
DT1 = "NewReno, dathresh=1"
NOSS = "NewReno, no slow start"
SRC = f"{FAST08} §5.1.2, Fig. 12"


def collapsed_mean(df, s):
    c = curve(df, s)
    return c[(c.index >= 8) & (c.index <= 64)].mean()


def no_benefit(variants):
    def measure(df):
        base = collapsed_mean(df, NEWRENO)
        parts, ok = [f"NewReno {mbps(base)}"], True
        for v in variants:
            g = collapsed_mean(df, v)
            parts.append(f"{v} {mbps(g)} ({fmt_x(g / base if base else float('inf'))})")
            # 1.25x: a margin for one run per point; a benefit of the kind Fig. 13 shows is 10x
            ok &= g <= 1.25 * base
        return "mean goodput over 8-64 servers: " + ", ".join(parts), ok
    return measure


def all_collapse(df):
    parts, ok = [], True
    for s in (LT, DT1, NOSS):
        c = curve(df, s)
        worst = c[(c.index >= 8) & (c.index <= 64)].min()
        parts.append(f"{s} {worst / c.iloc[0]:.0%}")
        ok &= worst < 0.25 * c.iloc[0]
    return "lowest goodput over 8-64 servers as a share of 1 server: " + ", ".join(parts), ok


EXPERIMENT = Experiment(
    name="fast08-fig12",
    title="Limited transmit, dupack threshold 1, no slow start",
    source=f"{FAST08} Fig. 12",
    summary="Goodput vs. servers for NewReno alone, with limited transmit (RFC 3042), with a duplicate-ACK "
            "threshold of 1 and without slow start: none improves on NewReno.",
    series=(
        Series(NEWRENO, {"tcp": "newreno"}),
        Series(LT, {"tcp": "newreno", "limited_transmit": True}),
        Series(DT1, {"tcp": "newreno", "dupack_threshold": 1}),
        Series(NOSS, {"tcp": "newreno", "slow_start": False}),
    ),
    base={"buffer": "32KiB"},
    values=FAST08_SERVERS,
    quick_values=QUICK_SERVERS,
    checks=(
        Check("\"neither of these mechanisms [limited transmit, dathresh=1] provide any throughput benefit over "
              "TCP NewReno\" (each at most 1.25x NewReno over 8-64 servers)", SRC, no_benefit((LT, DT1))),
        Check("\"forcing TCP flows to discover link capacity using only additive increase does not alleviate "
              "the situation\" (no slow start at most 1.25x NewReno)", SRC, no_benefit((NOSS,))),
        Check("All three still collapse below a quarter of their 1-server goodput in 8-64 servers", SRC,
              all_collapse),
    ),
)
