"""FAST'08 Fig. 4: TCP incast in simulation (000_315d806dde942a9f.txt §4.1).

The paper's default setting (Table 1: 1 Gbps, RTT 100 us, SRU 256 KB, NewReno, RTOmin
200 ms) with a 32 KiB output buffer, the project default (docs/defaults.md: the seed text
does not give the buffer of Fig. 4; 32 KB is the smallest buffer of Fig. 6).
"""

from __future__ import annotations

from .measure import at, curve, link_payload_mbps, mbps
from .sources import FAST08, FAST08_SERVERS, QUICK_SERVERS
from .spec import Check, Experiment, Series

SERIES = "32KiB buffer, RTOmin 200ms (FAST'08 Table 1)"
SRC = f"{FAST08} §4.1, Fig. 4"


def one_server_near_link_rate(df):
    g1, cap = at(df, SERIES, 1), link_payload_mbps(df)
    return f"1 server: {mbps(g1)} = {g1 / cap:.0%} of the {cap:.0f} Mbps payload capacity", g1 >= 0.9 * cap


def collapse_onset_around_8(df):
    c = curve(df, SERIES)
    g1 = c.iloc[0]
    low = c[c < g1 / 10]
    onset = int(low.index[0]) if len(low) else None
    text = (f"first N below a tenth of 1 server's {mbps(g1)}: {onset} ({mbps(c[onset])})" if onset
            else f"never below a tenth of {mbps(g1)} (lowest {mbps(c.min())} at {int(c.idxmin())})")
    return text, onset is not None and 5 <= onset <= 12


def collapsed_beyond(df):
    c = curve(df, SERIES)
    g1 = c.iloc[0]
    beyond = c[c.index >= 16]
    worst = beyond.max()
    return (f"16-64 servers: {mbps(beyond.min())} to {mbps(worst)} ({worst / g1:.1%} of 1 server at most)",
            bool((beyond <= g1 / 10).all()))


def timeouts_cause_it(df):
    parts, ok = [], True
    for n in (16, 32):
        p50, to, blocks = (at(df, SERIES, n, c) for c in ("block_time_p50_s", "timeouts", "blocks"))
        parts.append(f"{n} servers: median block {p50 * 1e3:.0f} ms, {to:.0f} timeouts / {blocks:.0f} blocks")
        ok &= p50 >= 0.2 and to >= max(1, blocks)
    return "; ".join(parts), ok


EXPERIMENT = Experiment(
    name="fast08-fig4",
    title="Incast collapse: goodput vs. number of servers",
    source=f"{FAST08} Fig. 4",
    summary="The FAST'08 simulation default (Table 1) with a 32 KiB buffer: goodput near link rate for one "
            "server, an order-of-magnitude collapse from about 8 servers on, caused by 200 ms timeouts.",
    series=(Series(SERIES, {}),),
    base={"preset": "fast08", "buffer": "32KiB"},
    values=FAST08_SERVERS,
    quick_values=QUICK_SERVERS,
    checks=(
        Check("One server gets close to the link rate (Fig. 4 starts near 1 Gbps); bar: 90% of the payload "
              "capacity", SRC, one_server_near_link_rate),
        Check("\"an order of magnitude collapse at around 8 servers\": the first N whose goodput is below a "
              "tenth of one server's lies in 5-12", SRC, collapse_onset_around_8),
        Check("\"... and beyond\": every N from 16 to 64 stays below a tenth of one server's goodput", SRC,
              collapsed_beyond),
        Check("\"TCP retransmission timeouts are the primary cause of Incast\" (Fig. 5): at 16 and 32 servers "
              "the median block waits at least one 200 ms RTOmin and timeouts >= blocks",
              f"{FAST08} §4.1, Fig. 5", timeouts_cause_it),
    ),
)
