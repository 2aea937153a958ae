"""Osada et al. Fig. 17-18: TCPFG with RTOmin 200, 10, 5, 1 and 0.2 ms at 10 Gbps
(`004_f48ce568b38e0ea9.txt` §5.2): N_s = 256, S = 512 KB, a 40-packet port buffer. Fig. 17
is goodput (drawn); Fig. 18, timeouts per connection, is `timeouts` / connections in the
CSV and the checks.
"""

from __future__ import annotations

from .measure import curve, mbps, rows
from .osada_common import SEED_VARIATION, OSADA, SCHEMES, TEN_GBPS
from .spec import Check, Experiment, Plot, Series

SRC = f"{OSADA} §5.2"
ACTIVE = (1, 16, 32, 64, 128, 192, 256)
RTOS = ("200ms", "10ms", "5ms", "1ms", "0.2ms")


def label(rto: str) -> str:
    return f"RTOmin={rto}"


def degrades(df):
    c = curve(df, label("0.2ms"))
    top, last = c.max(), c.iloc[-1]
    return f"RTOmin 0.2 ms: {mbps(top)} at best, {mbps(last)} at {c.index[-1]} active servers", last < 0.8 * top


def one_ms_beats(df):
    many = [n for n in curve(df, label("1ms")).index if n >= 128]
    one = curve(df, label("1ms")).loc[many].mean()
    fine = curve(df, label("0.2ms")).loc[many].mean()
    return f"mean goodput at 128+ active servers: 1 ms {mbps(one)}, 0.2 ms {mbps(fine)}", one > fine


def timeouts_grow(df):
    d = rows(df, label("0.2ms")).copy()
    d["per_conn"] = d["timeouts"] / (d["x"] * d["blocks"].clip(lower=1))
    per = d.groupby("x")["per_conn"].mean()
    return f"RTOmin 0.2 ms timeouts per connection: {per.iloc[0]:.2f} at {per.index[0]}, {per.iloc[-1]:.2f} at {per.index[-1]}", per.iloc[-1] > per.iloc[0]


EXPERIMENT = Experiment(
    name="osada-fig17",
    title="TCPFG: which RTOmin? (10 Gbps, N_s = 256, S = 512 KB, 40-packet buffer)",
    source=f"{OSADA} Fig. 17-18",
    summary="Goodput vs. active servers for RTOmin 200, 10, 5, 1 and 0.2 ms: the finest timer degrades at many "
            "servers through repeated backed-off timeouts, and 1 ms beats 0.2 ms there: the best RTOmin is not "
            "the smallest.",
    series=tuple(Series(label(r), {**SCHEMES["TCPFG"], "rto_min": r}) for r in RTOS),
    base={**TEN_GBPS, "buffer_packets": 40},
    axis="active_servers",
    values=ACTIVE,
    quick_values=(1, 64, 256),
    seeds=2,
    seed_variation=SEED_VARIATION,
    plot=Plot(xlabel="Number of active servers"),
    checks=(
        Check("TCPFG \"goodputs degrade\" when the number of servers is large (pass: 0.2 ms ends below 80 % of "
              "its best)", f"{SRC}, Fig. 17", degrades),
        Check("\"The goodputs of RTOmin = 1 msec is clearly greater than that of RTOmin = 0.2 msec\": the best "
              "RTOmin is not the smallest", f"{SRC}, Fig. 17", one_ms_beats),
        Check("\"the number of retransmission timeouts increases\" with the number of servers", f"{SRC}, Fig. 18",
              timeouts_grow),
    ),
)
