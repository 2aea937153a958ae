"""Osada et al. Fig. 13-16: goodput, Q_max and MCT vs. active servers at 10 Gbps
(`004_f48ce568b38e0ea9.txt` §5.1): N_s = 256, S = 512 KB, a 200-packet port buffer, UDP
background 0.1 %. The figure drawn is Fig. 13 (goodput); Q_max and MCT are in the CSV.
"""

from __future__ import annotations

from .measure import curve, mbps
from .osada_common import SEED_VARIATION, OSADA, SCHEMES, TEN_GBPS, beyond, peak
from .spec import Check, Experiment, Plot, Series

SRC = f"{OSADA} §5.1"
ACTIVE = (1, 16, 32, 64, 96, 128, 160, 192, 256)
LABELS = ("NTCP", "TCPFG", "CCS", "NCCS K=4", "NCCS K=8", "OCS")


def nccs8_below_ntcp(df):
    n8, nt = beyond(df, "NCCS K=8", 64).mean(), beyond(df, "NTCP", 64).mean()
    per_n = ", ".join(f"{n}: {a:.0f} vs {b:.0f}" for n, a, b in
                      zip(curve(df, "NCCS K=8").index, curve(df, "NCCS K=8"), curve(df, "NTCP")))
    return (f"mean goodput from 64 active servers on: NCCS K=8 {mbps(n8)}, NTCP {mbps(nt)} "
            f"(per active-server count, NCCS K=8 vs NTCP Mbps: {per_n})"), n8 < nt


def ocs_best(df):
    means = {s: beyond(df, s, 32).mean() for s in LABELS}
    best = max(means, key=means.get)
    return "mean goodput from 32 active servers on: " + ", ".join(f"{s} {mbps(v)}" for s, v in means.items()), best == "OCS"


def ocs_qmax(df):
    q = peak(df, "OCS", "max_queue_packets")
    return f"OCS Q_max {q:.0f} packets (Eq. (11): 84; paper measured 90)", abs(q - 84) <= 20


EXPERIMENT = Experiment(
    name="osada-fig13",
    title="Connection serialization at 10 Gbps (N_s = 256, S = 512 KB, 200-packet buffer)",
    source=f"{OSADA} Fig. 13-16",
    summary="Goodput, Q_max and MCT vs. active servers at 10 Gbps: NCCS with K=8 lets incast happen and falls "
            "below NTCP; OCS is best, with Q_max near its Eq. (11) bound.",
    series=tuple(Series(s, SCHEMES[s]) for s in LABELS),
    base={**TEN_GBPS, "buffer_packets": 200},
    axis="active_servers",
    values=ACTIVE,
    quick_values=(1, 64, 192),
    seeds=2,
    seed_variation=SEED_VARIATION,
    plot=Plot(xlabel="Number of active servers"),
    checks=(
        Check("\"In NCCS method with K = 8 ... Incast occurs ... goodputs of NCCS method with K = 8 becomes less "
              "than NTCP\"", f"{SRC}, Fig. 13", nccs8_below_ntcp),
        Check("\"Fig. 13 shows that OCS method has the best goodputs\"", f"{SRC}, Fig. 13", ocs_best),
        Check("OCS's Q_max near Eq. (11)'s 84 packets (\"Q_max = 90\" with UDP; pass: 84 +- 20)",
              f"{SRC}, Fig. 14, Eq. (11)", ocs_qmax),
    ),
)
