"""FAST'08 Fig. 9: fixed block size (000_315d806dde942a9f.txt §4.4).

A 1 MiB block split over N servers (1 MiB / N each; the SIGCOMM'09 block size), against
the fixed-SRU scaling of Fig. 4 (256 KiB per server) as reference: the two deliver the
same block at N = 4. 32 KiB buffer, everything else FAST'08 Table 1.
"""

from __future__ import annotations

from .measure import at, curve, mbps
from .sources import FAST08, FAST08_SERVERS, QUICK_SERVERS
from .spec import Check, Experiment, Series

BLOCK = "fixed block 1MiB (1MiB/N per server)"
SRU = "fixed SRU 256KiB (Fig. 4 scaling)"
SRC = f"{FAST08} §4.4, Fig. 9"


def rapid_drop_off(df):
    c = curve(df, BLOCK)
    top, last = c.max(), c.iloc[-1]
    return (f"peak {mbps(top)} at {int(c.idxmax())} servers, {mbps(last)} at {int(c.index[-1])} "
            f"({last / top:.1%} of the peak)", last <= 0.1 * top)


def even_lower(df):
    ns = [n for n in curve(df, BLOCK).index if n >= 8]
    worse = [n for n in ns if at(df, BLOCK, n) <= 1.1 * at(df, SRU, n)]
    text = ", ".join(f"{n}: {at(df, BLOCK, n):.0f} vs {at(df, SRU, n):.0f}" for n in ns)
    return f"fixed block vs fixed SRU (Mbps) at {text}", len(worse) == len(ns)


EXPERIMENT = Experiment(
    name="fast08-fig9",
    title="Fixed block size: 1 MiB split over N servers",
    source=f"{FAST08} Fig. 9",
    summary="Fixed-block scaling (1 MiB / N per server) next to fixed-SRU scaling: goodput drops off "
            "rapidly, and below the fixed-SRU curve because each server's share shrinks.",
    series=(Series(BLOCK, {"block": "1MiB"}), Series(SRU, {})),
    base={"preset": "fast08", "buffer": "32KiB"},
    values=FAST08_SERVERS,
    quick_values=QUICK_SERVERS,
    checks=(
        Check("\"A rapid drop-off in goodput is observed for a fixed block size as the number of servers "
              "increases\": at 64 servers at most a tenth of the peak", SRC, rapid_drop_off),
        Check("\"the effect of increasing the number of servers is compounded by a reduced SRU size and "
              "results in even lower goodput\": fixed block <= fixed SRU (+10%, one run) at every N >= 8",
              SRC, even_lower),
    ),
)
