"""NDP's collateral damage: a long flow into the incast receiver's neighbour keeps its rate
through a 64-to-1 incast with NDP; with DCTCP and TCP it loses it.

NDP (Handley et al., SIGCOMM 2017) Fig. 19 shows a long-running flow to one host and an
incast of 64 short flows to the next host on the same top-of-rack switch: with NDP "the
long flow ... is back to line rate in the following RTT" after the incast arrives, while
with DCTCP "the incast is large enough that ECN is not sufficient, and loss occurs.
Timeouts occur". The words are htsim's `sim/EXAMPLES/collateral/README.md` (Broadcom/
csg-htsim at 841d9e7), which says its three runs are that figure's curves; the paper's
own text was not at hand. Its setting (`old_tests/main_ndp_incast_collateral.cpp`): a
432-host 10 Gbps fat tree (k = 12), 9000 B packets, the long flow from host 7 (the next
edge switch of pod 0) to host 1, 64 senders of 50 packets (450 KB) each to host 0 (the last
64 hosts, htsim's `setIncast`), NDP with 8-packet queues and IW 15, DCTCP with 100-packet
queues (its ECN queues mark above 15 packets, its `_rto` 10 ms), all flows started
together.

Here: the same fabric, hosts and flows; the incast starts 2 ms after the long flow (htsim
80 ms: 2 ms is hundreds of the path's round trips, the long flow is long at line rate by
then), and the long flow's goodput is read from runs that stop at successive times
(`duration` is the sweep axis; a run stopped earlier is a prefix of one stopped later, so
the difference of two runs' `bulk_bytes_delivered` is what the long flow delivered between
their ends).

Series, and why:
- **NDP**: trimming ports of 8 x 9000 B, IW 15 (htsim's collateral setting), spraying,
  RTOmin 10 ms as the last resort (`docs/transports.md`).
- **DCTCP**: 100-packet drop-tail ports marking at K = 15 packets (htsim's ECN queue),
  per-flow ECMP, SACK, IW 10, RTOmin 10 ms (htsim's `_rto` of the collateral main).
- **DCTCP over lossless Ethernet**: the same with 802.3x PAUSE at every switch ingress
  (per-ingress accounting, as htsim's `LosslessInputQueue` that its README calls what
  most switches do), XOFF past 8 packets from one ingress, XON at 2: the figure's third
  curve ("approximates the behaviour of DCQCN").
- **TCP**: the same ports and timers as DCTCP without ECN: what DCTCP adds.

The checks: NDP's long flow keeps at least 90 % of its own rate before the incast over the
incast's span; DCTCP's long flow keeps less than NDP's; over lossless Ethernet it keeps at
most half ("the lower-pod switch outgoing interface that the long flow traverses is paused
sufficiently that it achieves low throughput"). A span is from the incast's start to the
first stop at or after its last flow (the last stop, 60 ms, if it has not ended by then).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .sources import NDP_PAPER
from .spec import Check, Experiment, Plot, Series

FLOW_BYTES = 450_000
INCAST_START_MS = 2.0
LONG_FROM, LONG_TO = 7, 1  # htsim's long_src_no (432 hosts) and long_dest_no
NDP, DCTCP, LOSSLESS, TCP = ("NDP (trimming 8-packet ports, IW 15)", "DCTCP K = 15 (100-packet ports), RTOmin 10 ms",
                             "DCTCP over lossless Ethernet (PAUSE per ingress)", "TCP SACK (100-packet ports), RTOmin 10 ms")
# PAUSE thresholds in packets of 9064 B: XOFF past 8 held from one ingress (12 ingresses x 8
# fit the 100-packet port with room for what is on the wire), XON at 2 (htsim's
# LosslessOutputQueue resumes below 2 packets, queue_lossless.cpp)
PACKET_WIRE = 9064
_DROP_TAIL = {"buffer": "900000B", "tcp": "sack", "init_cwnd": 10, "rto_min": "10ms", "load_balancing": "ecmp",
              "rwnd": "4MiB"}
SERIES = (
    Series(NDP, {"transport": "ndp", "trimming": True, "init_cwnd": 15, "buffer": "72000B", "rto_min": "10ms",
                 "load_balancing": "spray"}),
    Series(DCTCP, {**_DROP_TAIL, "cc": "dctcp", "ecn_threshold": 15}),
    Series(LOSSLESS, {**_DROP_TAIL, "cc": "dctcp", "ecn_threshold": 15, "pause": True,
                      "pause_xoff": f"{8 * PACKET_WIRE}B", "pause_xon": f"{2 * PACKET_WIRE}B"}),
    Series(TCP, dict(_DROP_TAIL)),
)
# where the runs stop (ms): the long flow alone, then through the incast and after it
STOPS_MS = (1.0, 2.0, 2.25, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 22.5, 25.0, 27.5, 30.0, 35.0,
            40.0, 45.0, 50.0, 60.0)
QUICK_STOPS_MS = (1.0, 2.0, 5.0, 30.0)
# NDP: "back to line rate in the following RTT": over the whole incast the long flow keeps
# 90 % of its rate before it (one round trip of a 23 ms incast is a rounding error; 10 %
# leaves room for the trimmed headers of the first round trip and the shared uplinks)
KEEPS = 0.90


def _ms(v: float) -> str:
    return f"{v:g}ms"


def long_flow_goodput(df: pd.DataFrame, label: str) -> pd.Series:
    """The long flow's goodput (Gbps) over each span between two successive stops, indexed
    by the span's end (seconds)."""
    d = df[df["series"] == label].sort_values("sim_seconds")
    t = d["sim_seconds"].to_numpy(dtype=float)
    b = d["bulk_bytes_delivered"].to_numpy(dtype=float)
    rate = np.diff(b) * 8 / np.diff(t) / 1e9
    return pd.Series(rate, index=t[1:])


def _bytes_at(df: pd.DataFrame, label: str, stop_s: float) -> float:
    d = df[df["series"] == label]
    row = d.iloc[(d["sim_seconds"] - stop_s).abs().argmin()]
    return float(row["bulk_bytes_delivered"])


def incast_end_s(df: pd.DataFrame, label: str) -> float | None:
    """When the series' incast's last flow arrived (from the first stop after it)."""
    d = df[df["series"] == label]
    done = d["incast_completion_s"].dropna()
    return None if done.empty else INCAST_START_MS / 1e3 + float(done.iloc[0])


def kept_share(df: pd.DataFrame, label: str) -> tuple[float, float, float]:
    """(rate before the incast, rate over the incast's span, their ratio); the span is the
    stops from the incast's start to the first stop at or after its end (Gbps)."""
    t0 = INCAST_START_MS / 1e3
    before = _bytes_at(df, label, t0) * 8 / t0 / 1e9
    end = incast_end_s(df, label)
    stops = sorted(df[df["series"] == label]["sim_seconds"])
    t1 = next((s for s in stops if end is not None and s >= end - 1e-12), stops[-1])
    during = (_bytes_at(df, label, t1) - _bytes_at(df, label, t0)) * 8 / (t1 - t0) / 1e9
    return before, during, during / before if before else 0.0


def ndp_keeps_its_rate(df: pd.DataFrame):
    before, during, share = kept_share(df, NDP)
    end = incast_end_s(df, NDP)
    lows = long_flow_goodput(df, NDP)
    return (f"NDP's long flow: {before:.2f} Gbps before the incast, {during:.2f} Gbps from its start to its end "
            f"({share:.1%}; the incast's last flow at {end * 1e3 if end else float('nan'):.2f} ms); lowest span "
            f"{lows.min():.2f} Gbps; bar {KEEPS:.0%}", share >= KEEPS)


def dctcp_loses_more(df: pd.DataFrame):
    _, _, ndp = kept_share(df, NDP)
    _, _, dctcp = kept_share(df, DCTCP)
    _, _, tcp = kept_share(df, TCP)
    _, _, lossless = kept_share(df, LOSSLESS)
    return (f"the long flow keeps {ndp:.1%} of its rate with NDP, {dctcp:.1%} with DCTCP, {lossless:.1%} with DCTCP "
            f"over lossless Ethernet, {tcp:.1%} with TCP over each one's incast", dctcp < ndp)


# "low throughput" under PAUSE: at most half of its rate before the incast
LOW = 0.5


def lossless_pauses_it(df: pd.DataFrame):
    _, during, share = kept_share(df, LOSSLESS)
    pauses = int(df[df["series"] == LOSSLESS]["pause_xoff_frames"].max())
    return (f"over lossless Ethernet the long flow keeps {share:.1%} ({during:.2f} Gbps) over the incast's span; "
            f"{pauses:,} XOFF frames; bar {LOW:.0%}", share <= LOW)


def draw(fig, df: pd.DataFrame) -> None:
    ax = fig.subplots(1, 1)
    for label in (s.label for s in SERIES):
        g = long_flow_goodput(df, label)
        ax.step(g.index * 1e3, g.values, where="pre", label=label)
        end = incast_end_s(df, label)
        if end is not None:
            ax.axvline(end * 1e3, linestyle=":", linewidth=0.8, color=ax.lines[-1].get_color())
    ax.axvline(INCAST_START_MS, color="k", linestyle="--", linewidth=0.8, label="64-to-1 incast starts")
    ax.set_xlabel("time (ms); dotted: each series' incast ends")
    ax.set_ylabel("long flow's goodput (Gbps)")
    ax.set_ylim(0, 10.5)
    ax.legend(fontsize=7)


EXPERIMENT = Experiment(
    name="ndp-collateral",
    title="NDP's collateral damage (SIGCOMM'17 Fig. 19): a long flow beside a 64-to-1 incast on a 432-host "
          "fat tree, NDP against DCTCP, DCTCP over lossless Ethernet and TCP",
    source=f"{NDP_PAPER}, Fig. 19",
    summary="A long flow into host 1 runs beside a 64 x 450 KB incast into host 0 on the same edge switch (k = 12 "
            "fat tree, 10 Gbps, 9000 B packets): with NDP the long flow keeps its line rate through the incast; "
            "with DCTCP it loses some of it, and over lossless Ethernet the pauses take most of it.",
    series=SERIES,
    base={"workload": "incast", "topology": "fat_tree", "fat_tree_k": 12, "rate": "10Gbps", "rtt": "4us",
          "servers": 64, "sru": FLOW_BYTES, "mss": 9000, "header": 64, "placement": "tail",
          "start": _ms(INCAST_START_MS), "bulk_flows": 1, "bulk_from": str(LONG_FROM), "bulk_to": str(LONG_TO)},
    axis="duration",
    values=tuple(_ms(v) for v in STOPS_MS),
    quick_values=tuple(_ms(v) for v in QUICK_STOPS_MS),
    seed_variation={},
    plot=Plot(kind="custom", draw=draw),
    checks=(
        Check(f"with NDP the long flow \"is back to line rate in the following RTT\" after the incast arrives: over "
              f"the incast's span it keeps at least {KEEPS:.0%} of its rate before it",
              f"{NDP_PAPER}, Fig. 19 (htsim's EXAMPLES/collateral/README.md)", ndp_keeps_its_rate),
        Check("with DCTCP \"the incast is large enough that ECN is not sufficient, and loss occurs\": the long flow "
              "keeps less of its rate than with NDP",
              f"{NDP_PAPER}, Fig. 19 (htsim's EXAMPLES/collateral/README.md)", dctcp_loses_more),
        Check(f"over lossless Ethernet the incast's pauses reach the long flow's path, which \"achieves low "
              f"throughput\": at most {LOW:.0%} of its rate before the incast",
              f"{NDP_PAPER}, Fig. 19 (htsim's EXAMPLES/collateral/README.md)", lossless_pauses_it),
    ),
)
