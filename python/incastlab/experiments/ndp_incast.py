"""NDP's incast: 1 to 431 senders to one host of a 432-host 10 Gbps fat tree, the last flow's
completion against the line-rate optimum, NDP over trimming switches next to receiver
credit, TCP and DCTCP over drop-tail ones.

NDP (Handley et al., SIGCOMM 2017) reports that 431 senders to one host of a 432-host
10 Gbps fat tree finish within about 14 % of the line-rate optimum, with no timeout. The
setting is htsim's `incast_shortflows` (NDP's simulator, as issue 29 names it): a k = 12
fat tree (432 hosts), 10 Gbps everywhere, 450 KB flows, 9000 B packets with 64 B headers,
8-packet (72,000 B) switch queues, NDP's first window 23 packets, per-packet spraying, the
receiver host 0 and the senders the last N hosts (`placement = tail`, htsim's
`setIncast`). The line-rate optimum is N x 450 KB of payload at 10 Gbps (headers and the
path's latency not counted: a stricter bar than one that counts them).

Series, and why:
- **NDP** (`docs/transports.md`): trimming ports with return-to-sender (NDP §3.1, for the
  largest incasts), IW 23, RTOmin 10 ms as the last resort (htsim has none).
- **Receiver credit** (EQDS-style): the same trimming ports, an unscheduled window of 2
  packets (about one base BDP: 12 us at 10 Gbps is 15 KB), RTOmin 10 ms.
- **TCP** SACK, RTOmin 200 us (microsecond timers, SIGCOMM'09's fix), IW 10, rwnd 1 MiB,
  over drop-tail 72,000 B ports.
- **DCTCP** with K = 4 packets (half the 8-packet queue; the DCTCP paper's K = 65 does not
  fit it), RTOmin 200 us, the same ports.

The checks: NDP's own claim at 431 senders (within 14 % of the optimum) and its "no
timeout" at every N.
"""

from __future__ import annotations

import pandas as pd

from .completion import LineRateOptimum
from .measure import curve
from .sources import NDP_PAPER
from .spec import Check, Experiment, Plot, Series

FLOW_BYTES = 450_000
RATE_BPS = 10e9
NDP, CREDIT, TCP, DCTCP = ("NDP (trimming, return-to-sender, IW 23)", "receiver credit (trimming, 2 unscheduled)",
                           "TCP SACK, RTOmin 200 us", "DCTCP K = 4, RTOmin 200 us")
TRIMMING = {"trimming": True, "rto_min": "10ms"}
SERIES = (
    Series(NDP, {"transport": "ndp", "return_to_sender": True, "init_cwnd": 23, **TRIMMING}),
    Series(CREDIT, {"transport": "credit", "init_cwnd": 2, **TRIMMING}),
    Series(TCP, {"tcp": "sack", "rwnd": "1MiB", "rto_min": "200us", "init_cwnd": 10}),
    Series(DCTCP, {"tcp": "sack", "rwnd": "1MiB", "rto_min": "200us", "init_cwnd": 10, "cc": "dctcp",
                   "ecn_threshold": 4}),
)
# NDP: "within about 14 % of the line-rate optimum" at 431 senders
NDP_BAR = 1.14


OPTIMUM = LineRateOptimum(FLOW_BYTES, RATE_BPS)
optimum_s, over_optimum = OPTIMUM.seconds, OPTIMUM.over


def near_optimum(df: pd.DataFrame):
    r = over_optimum(df, NDP)
    n = int(r.index.max())
    return (f"{n} senders: NDP {r[n]:.3f}x the optimum (bar {NDP_BAR}); receiver credit "
            f"{over_optimum(df, CREDIT)[n]:.3f}x, TCP {over_optimum(df, TCP)[n]:.3g}x, "
            f"DCTCP {over_optimum(df, DCTCP)[n]:.3g}x", r[n] <= NDP_BAR)


def no_timeout(df: pd.DataFrame):
    t = curve(df, NDP, "timeouts")
    trims = curve(df, NDP, "trims")
    return (f"NDP timeouts per N: {', '.join(f'{n}: {int(v)}' for n, v in t.items())} "
            f"(trims at the largest N: {int(trims.iloc[-1])})", bool((t == 0).all()))


def draw(fig, df: pd.DataFrame) -> None:
    OPTIMUM.draw(fig, df, [s.label for s in SERIES], "senders (one 450 KB flow each, k = 12 fat tree)", bar=NDP_BAR)


EXPERIMENT = Experiment(
    name="ndp-incast",
    title="NDP's incast on a 432-host fat tree, 1 to 431 senders x 450 KB, 10 Gbps: last flow's completion",
    source=f"{NDP_PAPER} (incast evaluation)",
    summary="1 to 431 senders on htsim's incast setting (k = 12 fat tree, 8-packet queues, 9000 B packets, "
            "spraying) each send 450 KB to host 0: NDP over trimming switches finishes near the line-rate "
            "optimum with no timeout, receiver credit likewise; TCP and DCTCP over drop-tail 8-packet queues "
            "wait out timeouts.",
    series=SERIES,
    base={"workload": "incast", "topology": "fat_tree", "fat_tree_k": 12, "rate": "10Gbps", "rtt": "4us",
          "buffer": "72000B", "sru": FLOW_BYTES, "mss": 9000, "header": 64, "placement": "tail",
          "load_balancing": "spray"},
    values=(1, 10, 50, 100, 200, 431),
    quick_values=(1, 100, 431),
    seed_variation={},
    plot=Plot(kind="custom", draw=draw),
    checks=(
        Check(f"431 senders to one host of a 432-host 10 Gbps fat tree finish \"within about 14 %\" of the "
              f"line-rate optimum (issue 29's reading of NDP's incast result); bar: {NDP_BAR}x",
              f"{NDP_PAPER} (incast evaluation)", near_optimum),
        Check("NDP's incast needs no retransmission timeout (trimming tells the receiver at once; "
              "return-to-sender keeps the headers): 0 timeouts at every N", f"{NDP_PAPER} (§3.1, incast evaluation)",
              no_timeout),
    ),
)
