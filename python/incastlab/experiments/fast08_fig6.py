"""FAST'08 Fig. 6: a bigger switch buffer delays the collapse (000_315d806dde942a9f.txt §4.3).

Buffers 32 KiB to 1024 KiB, SRU 256 KiB, everything else FAST'08 Table 1. The paper
sweeps to 128 servers ("doubling the number of servers [from 64] only improves goodput
to 800Mbps"), so we do too. The per-flow window cap is ns-2's default 20 packets
(docs/defaults.md): with it the 1024 KB / 64-server point is the paper's ~65 %.
"""

from __future__ import annotations

import math

from . import measure
from .measure import at, curve, mbps
from .sources import FAST08
from .spec import Check, Experiment, Series

BUFFERS_KIB = (32, 64, 128, 256, 512, 1024)
SERVERS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128)
SRC = f"{FAST08} §4.3, Fig. 6"


def label(kib: int) -> str:
    return f"buffer {kib}KiB"


def onset(df, kib: int) -> int | None:
    """`measure.onset` of the curve of buffer `kib` (Fig. 6's big-buffer curves level off)."""
    return measure.onset(curve(df, label(kib)))


def onsets_grow(df):
    ons = {k: onset(df, k) for k in BUFFERS_KIB}
    known = [(k, n) for k, n in ons.items() if n is not None]
    text = ", ".join(f"{k}KiB: {n if n else '>' + str(SERVERS[-1])}" for k, n in ons.items())
    return f"onset (first N < 75% of 1 server) {text}", all(a <= b for (_, a), (_, b) in zip(known, known[1:]))


def doubling_doubles(df):
    ons = {k: onset(df, k) for k in BUFFERS_KIB}
    pairs = [(a, b) for a, b in zip(BUFFERS_KIB, BUFFERS_KIB[1:]) if ons[a] and ons[b]]
    if not pairs:
        return "no two buffers both collapse within the sweep", False
    factor = math.exp(sum(math.log(ons[b] / ons[a]) for a, b in pairs) / len(pairs))
    # "roughly doubles": 1.4x-2.8x per doubling (a factor sqrt(2) either way: the onset is
    # read on a grid whose steps are 1.2-1.5x)
    return (f"onset grows {factor:.2f}x per buffer doubling (geometric mean over {len(pairs)} doublings)",
            1.4 <= factor <= 2.8)


def big_buffer_64(df):
    g = at(df, label(1024), 64)
    return f"1024KiB, 64 servers: {mbps(g)} = {g / 1000:.0%} of 1 Gbps", 0.55 <= g / 1000 <= 0.75


def big_buffer_128(df):
    g64, g128 = at(df, label(1024), 64), at(df, label(1024), 128)
    return (f"1024KiB: {mbps(g64)} at 64 servers, {mbps(g128)} at 128",
            g128 > g64 and 700 <= g128 <= 900)


EXPERIMENT = Experiment(
    name="fast08-fig6",
    title="Switch buffer size: 32 KiB to 1024 KiB",
    source=f"{FAST08} Fig. 6",
    summary="Goodput vs. servers for output buffers of 32 KiB to 1024 KiB (SRU 256 KiB): the collapse "
            "moves out roughly in proportion to the buffer; 1024 KiB still gives only ~65% at 64 servers.",
    series=tuple(Series(label(k), {"buffer": f"{k}KiB"}) for k in BUFFERS_KIB),
    base={"preset": "fast08"},
    values=SERVERS,
    quick_values=(1, 4, 16, 64, 128),
    checks=(
        Check("A larger buffer never brings the collapse earlier (\"a larger switch buffer size delays the "
              "onset of Incast\")", f"{FAST08} §4.3", onsets_grow),
        Check("\"doubling the size of the switch's output port buffer in simulation doubles the number of "
              "servers that can transmit before the system experiences Incast\" (1.4x-2.8x per doubling)",
              SRC, doubling_doubles),
        Check("\"for a 1024KB buffer, 64 servers only utilize about 65% of the client's link bandwidth\" "
              "(55-75%)", SRC, big_buffer_64),
        Check("\"doubling the number of servers only improves goodput to 800Mbps\" (1024 KB, 128 servers: "
              "700-900 Mbps and above the 64-server goodput)", SRC, big_buffer_128),
    ),
)
