"""Osada et al. Fig. 9-12: goodput, Q_max and MCT vs. active servers at 1 Gbps
(`004_f48ce568b38e0ea9.txt` §5.1): N_s = 64, S = 32 KB, a 40-packet port buffer, UDP
background 0.1 %. The figure drawn is Fig. 9 (goodput); the CSV holds Q_max
(`max_queue_packets`, Fig. 10) and MCT (`block_time_mean_s`, Fig. 11-12), and the checks
read all three.
"""

from __future__ import annotations

from .measure import curve, mbps, rows
from .osada_common import SEED_VARIATION, BASE, OSADA, SCHEMES, beyond, max_goodput, peak
from .spec import Check, Experiment, Plot, Series

SRC = f"{OSADA} §5.1"
ACTIVE = (1, 4, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64)
LABELS = ("NTCP", "NTCP, rwnd BaseBDP", "TCPFG", "ICTCP", "CCS", "NCCS K=2", "NCCS K=4", "NCCS K=8", "OCS")


def onset(df, series: str) -> int:
    """First active-server count past the series' best point whose goodput is below half
    of that best (one server alone never leaves slow start with 32 KB, so the maximum
    goodput is not the reference)."""
    c = curve(df, series)
    after = c[c.index > c.idxmax()]
    below = after[after < 0.5 * c.max()]
    return int(below.index[0]) if len(below) else 10**9


def ntcp_ictcp_collapse(df):
    # judged on our default reading (ns-2's 20-packet window); the BaseBDP reading is reported beside it
    out, ok = [], True
    for s in ("NTCP", "ICTCP", "NTCP, rwnd BaseBDP"):
        share = beyond(df, s, 24).max() / max_goodput(df)
        out.append(f"{s}: collapses at {onset(df, s)}, at most {share:.0%} of the maximum from 24 on")
        if s != "NTCP, rwnd BaseBDP":
            ok &= share < 0.25 and 12 <= onset(df, s) <= 24
    return "; ".join(out), ok


def ccs_near_450(df):
    c = beyond(df, "CCS", 8).mean()
    # ours sits below 450: every connection pays a SYN round trip before its slow start
    return f"CCS mean goodput from 8 active servers on: {mbps(c)} (paper: about 450)", 300 <= c <= 550


def nccs4_and_ocs_near_max(df):
    top = max_goodput(df)
    parts, ok = [], True
    for s in ("NCCS K=4", "OCS"):
        m = beyond(df, s, 16).mean()
        parts.append(f"{s} {m / top:.0%}")
        ok &= m >= 0.9 * top
    return "mean goodput from 16 active servers on, share of the 972 Mbps maximum: " + ", ".join(parts), ok


def ocs_above_nccs4_with_less_queue(df):
    g = {s: beyond(df, s, 16).mean() for s in ("NCCS K=4", "OCS")}
    q = {s: peak(df, s, "max_queue_packets") for s in g}
    return (f"mean goodput from 16 active servers on: OCS {mbps(g['OCS'])}, NCCS K=4 {mbps(g['NCCS K=4'])}; "
            f"Q_max: OCS {q['OCS']:.0f}, NCCS K=4 {q['NCCS K=4']:.0f}"), g["OCS"] > g["NCCS K=4"] and q["OCS"] < q["NCCS K=4"]


def ocs_qmax_near_eq11(df):
    q = peak(df, "OCS", "max_queue_packets")
    return f"OCS Q_max {q:.0f} packets (Eq. (11): 15; paper measured about 13)", abs(q - 15) <= 5


def ccs_smallest_qmax(df):
    q = {s: peak(df, s, "max_queue_packets") for s in LABELS}
    smallest = min(q, key=q.get)
    return "Q_max: " + ", ".join(f"{s} {v:.0f}" for s, v in q.items()), smallest == "CCS"


def larger_k_does_not_incast(df):
    d = rows(df, "NCCS K=8")
    timeouts = d["timeouts"].sum()
    share = beyond(df, "NCCS K=8", 16).mean() / max_goodput(df)
    return (f"NCCS K=8: {timeouts:.0f} timeouts in all runs, {share:.0%} of the maximum from 16 active servers on "
            f"(Q_max {peak(df, 'NCCS K=8', 'max_queue_packets'):.0f})"), timeouts == 0


def mct_near_ideal(df):
    # Eq. (12): N_a x [S/MSS] x (MSS + 40) x 8 / V
    ideal = lambda n: n * 23 * 1500 * 8 / 1e9  # noqa: E731 - 32 KB is 23 segments
    parts, ok = [], True
    for s in ("NCCS K=4", "NCCS K=8", "OCS"):
        mct = beyond(df, s, 16, "block_time_mean_s")
        worst = max(mct[n] / ideal(n) for n in mct.index)
        parts.append(f"{s} at most {worst:.2f}x the ideal")
        ok &= worst <= 1.3
    return "MCT from 16 active servers on: " + ", ".join(parts) + " (paper: almost equal)", ok


EXPERIMENT = Experiment(
    name="osada-fig9",
    title="Connection serialization at 1 Gbps: goodput (Q_max and MCT, Fig. 10-12, in the checks)",
    source=f"{OSADA} Fig. 9-12",
    summary="Goodput, Q_max and MCT vs. active servers for NTCP, TCPFG, ICTCP, CCS, NCCS (K=2, 4, 8) and OCS: "
            "NTCP and ICTCP collapse past ~15-20 servers, CCS stays low and flat, NCCS K=4 and K=8 and OCS stay near "
            "the maximum with small queues.",
    series=tuple(Series(s, SCHEMES[s]) for s in LABELS),
    base={**BASE, "servers": 64, "sru": "32KiB", "buffer_packets": 40, "rate": "1Gbps"},
    axis="active_servers",
    values=ACTIVE,
    quick_values=(1, 8, 24, 48),
    seeds=3,
    seed_variation=SEED_VARIATION,
    plot=Plot(xlabel="Number of active servers"),
    checks=(
        Check("\"Drastic goodput degradations occur in NTCP and ICTCP when the number of active servers is over "
              "about 15\" (pass: below half the maximum first at 12-24 servers, below a quarter from 24 on; "
              "judged with ns-2's 20-packet window, the BaseBDP window reported beside it)", f"{SRC}, Fig. 9",
              ntcp_ictcp_collapse),
        Check("CCS \"cannot fully use the client link bandwidth and its goodput is about 450 Mbps\" "
              "(pass: 300-550 Mbps)", f"{SRC}, Fig. 9", ccs_near_450),
        Check("NCCS K=4 and OCS \"almost fully use the client link bandwidth\" (>= 90 % of 972 Mbps)",
              f"{SRC}, Fig. 9", nccs4_and_ocs_near_max),
        Check("\"CCS method attains the smallest Q_max\"", f"{SRC}, Fig. 10", ccs_smallest_qmax),
        Check("\"For the parameter setting to obtain Fig.9, even if we use larger value of K, Incast did not occur\" "
              "(NCCS K=8: no timeout in any run)", f"{SRC}, Fig. 9", larger_k_does_not_incast),
        Check("\"OCS method ... attains slightly larger goodput than NCCS method with K = 4 while limiting smaller "
              "number of packets in the port buffer\"", f"{SRC}, Fig. 9-10", ocs_above_nccs4_with_less_queue),
        Check("OCS's Q_max is close to Eq. (11)'s Q_max^TCP = 15 (\"about 13\"; pass: 15 +- 5 with UDP in the count)",
              f"{SRC}, Fig. 10, Eq. (11)", ocs_qmax_near_eq11),
        Check("\"MCT in NCCS (K = 4 and K = 8) and OCS methods are almost equal to the ideal MCT\" of Eq. (12) "
              "(pass: within 1.3x)", f"{SRC}, Fig. 11-12, Eq. (12)", mct_near_ideal),
    ),
)
