"""An incast on a fat tree, scaled to a thousand senders: the last flow's completion against
the line-rate optimum.

SIGCOMM'09 (001_e0dada207805edc8.txt) closes with "Scaling to thousands of servers in
simulation with 10Gbps ethernet" and "Improved throughput by adding random delay to
desynchronize retransmissions"; its slides give no topology. Datacenters of that size are
fat trees (Al-Fares et al., SIGCOMM 2008), so here N senders, drawn at random over a
k = 16 fat tree (1,024 hosts; seeded), each send 270 KB to one receiver at once (the flow
size of the 1000-to-1 incast of issue 28) with per-flow ECMP, and we read when the last
byte arrives. The line-rate optimum is N x 270 KB of payload at 10 Gbps: what the
receiver's link could not beat.

Parameters, and why:
- **10 Gbps everywhere, 1 us per link** (a base RTT of about 4 us within a rack, 12 us
  across pods, as htsim's fat trees), **100-packet port buffers** (the 10 Gbps panel of
  sigcomm09-fixed-block and the bench's 10 Gbps incast: 150 KB, shallow);
- **SACK**, 1460 B segments, IW 2 (the project's defaults), the receive window 64 KiB (no
  window scaling, RFC 7323 §2; the default 20-packet window would cap one sender);
- three transports: TCP with RTOmin 200 ms (FAST'08 Table 1), TCP with RTOmin 200 us and
  the RTO randomized (SIGCOMM'09: "RTO = est. RTO * (1 + RAND(0.5))", microsecond
  timers), and DCTCP with K = 65 packets (the DCTCP paper's 10 Gbps setting) and RTOmin
  200 us.

The checks: the collapse SIGCOMM'09 starts from ("Goodput as low as 1-10% of client link
capacity"), with RTOmin 200 ms, from the first N whose first windows (N x IW = 2N packets)
overflow the receiver's 100-packet port (N >= 51); and the scaling claim, as
sigcomm09-fixed-block measures it on a star: at the largest N, microsecond timeouts finish
at least 10x sooner.
"""

from __future__ import annotations

import pandas as pd

from .completion import LineRateOptimum
from .measure import curve, fmt_x
from .sources import SIGCOMM09
from .spec import Check, Experiment, Plot, Series

FLOW_BYTES = 270_000
RATE_BPS = 10e9
TCP_200MS, TCP_200US, DCTCP = "TCP, RTOmin 200 ms", "TCP, RTOmin 200 us randomized", "DCTCP K = 65, RTOmin 200 us"
SERIES = (
    Series(TCP_200MS, {"rto_min": "200ms"}),
    Series(TCP_200US, {"rto_min": "200us", "rto_random": 0.5}),
    Series(DCTCP, {"rto_min": "200us", "cc": "dctcp", "ecn_threshold": 65}),
)
# first-round overflow: N x IW (2) packets > 100 buffered
FIRST_OVERFLOW = 51


OPTIMUM = LineRateOptimum(FLOW_BYTES, RATE_BPS)
optimum_s, over_optimum = OPTIMUM.seconds, OPTIMUM.over


def collapses(df: pd.DataFrame):
    c = over_optimum(df, TCP_200MS)
    big = c[c.index >= FIRST_OVERFLOW]
    worst_goodput = (1 / big).max()
    return (f"RTOmin 200 ms, N >= {FIRST_OVERFLOW}: goodput at most {worst_goodput:.1%} of the line rate "
            f"({', '.join(f'{n}: {1 / v:.1%}' for n, v in big.items())})", worst_goodput <= 0.10)


def scales(df: pd.DataFrame):
    slow, fast = curve(df, TCP_200MS, "incast_completion_s"), curve(df, TCP_200US, "incast_completion_s")
    n = int(slow.index.max())
    gain = slow[n] / fast[n]
    return (f"{n} senders: 200 ms {slow[n]:.3g} s, 200 us randomized {fast[n]:.3g} s ({fmt_x(gain)}; "
            f"{fast[n] / optimum_s(n):.2f}x the optimum)", gain >= 10)


def draw(fig, df: pd.DataFrame) -> None:
    OPTIMUM.draw(fig, df, [s.label for s in SERIES], "senders (one 270 KB flow each, k = 16 fat tree)")


EXPERIMENT = Experiment(
    name="fattree-incast",
    title="Incast on a k = 16 fat tree, 1 to 1000 senders x 270 KB, 10 Gbps: last flow's completion",
    source=f"{SIGCOMM09} (Next-generation Datacenters)",
    summary="1 to 1000 senders drawn over a 1,024-host fat tree each send 270 KB to one receiver at 10 Gbps "
            "(100-packet ports, ECMP): with RTOmin 200 ms the incast waits out timeouts for orders of magnitude "
            "beyond the line-rate optimum; microsecond randomized timeouts keep it within a few times the optimum "
            "at a thousand senders (SIGCOMM'09's \"scaling to thousands of servers\"); DCTCP in between.",
    series=SERIES,
    base={"workload": "incast", "topology": "fat_tree", "fat_tree_k": 16, "rate": "10Gbps", "rtt": "4us",
          "buffer_packets": 100, "sru": FLOW_BYTES, "load_balancing": "ecmp", "tcp": "sack", "rwnd": "64KiB"},
    values=(1, 4, 16, 64, 128, 256, 512, 1000),
    quick_values=(1, 64, 1000),
    seed_variation={},
    plot=Plot(kind="custom", draw=draw),
    checks=(
        Check(f"\"Goodput as low as 1-10% of client link capacity\" with RTOmin 200 ms, once the first windows "
              f"overflow the port (N x IW > 100 packets: N >= {FIRST_OVERFLOW}); bar: 10 %", f"{SIGCOMM09} "
              "(TCP Incast Problem)", collapses),
        Check("\"Scaling to thousands of servers in simulation with 10Gbps ethernet\": at the largest N the "
              "randomized microsecond timeouts finish at least 10x sooner than RTOmin 200 ms (the bar "
              "sigcomm09-fixed-block sets on a star)", f"{SIGCOMM09} (Next-generation Datacenters)", scales),
    ),
)
