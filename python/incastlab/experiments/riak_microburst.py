"""The Riak blog's microbursts (``003_a133663d5dbcfa75.txt``), on a simulated Riak cluster.

The blog is an operator's account, not a paper: a Riak cluster on 1 Gbps hosts behind Cisco
Catalyst 3750 switches ("buffer space for a few dozen or a few hundred frames"), in which
"each cluster member is taking in many thousands of queries per second", each get gathering
"(typically) 3 replies" that are "big enough to use many Ethernet frames". Its claims are
what an operator's counters show: the peak/average ratio of the receive rate grows as the
polling interval shrinks (its escript: 1.1 at 500 ms to 7.6-9.0 at 1 ms), frames are dropped
at 25-35 % average utilization ("40-100 frames per second per machine"), and above 50 %
(sampled at 1 s) the 1 s rate see-saws between 900 and 200 Mbit/s.

We run the Riak workload (``workload="riak"``: every node coordinates gets at ``get_rate``
per second, Poisson, each answered by ``replicas`` = 3 nodes with replies of
``reply_bytes`` on average, exponentially distributed) and sample every port at 100 us
(``incastlab.utilization``): each machine's receive side is the switch port towards it,
its transmit side its NIC; each machine-second is judged by the monitor's own verdict rule.

Parameters, and why:
- **16 nodes** on one switch: the blog's illustration is "your Riak cluster of 20
  machines" (Voxer's was 50+); 16 keeps the whole sweep to about two minutes with
  ``--jobs 2`` (131 s measured);
- **1 Gbps, RTT 100 us**: GigE in one rack; **RTOmin 200 ms** (Linux, as the blog says:
  "the Linux TCP stack's default timeout ... is 200 milliseconds"); SACK with CUBIC (Linux
  2.6.32's defaults, the blog's kernel);
- **64 KiB per port** (43 full frames): "buffer space for a few dozen ... frames";
- **replies of 16 KiB on average, exponential**: "many Ethernet frames" each (11 on
  average) at "many thousands of queries per second": at 16 nodes a node receives
  3 x 16 KiB = 48 KiB per get it coordinates, so 250 Mbit/s (the blog's 25 %) is about 640
  gets per second per node; the sweep runs the get rate from 160 to 1600 per node, about
  6 % to 63 % of the link (each node also serves three times as many replica reads: 480 to
  4800 queries per second);
- **20 s per point** (the project's per-point default, FAST'08 §3.1's; 2 s quick): twenty
  machine-seconds per machine, enough to see a see-saw.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .. import utilization as U
from ..monitor import verdict
from .sources import RIAK
from .spec import Check, Experiment, Observe, Plot, Series

SRC = RIAK
NODES = 16
LABEL = f"Riak, {NODES} nodes"
INTERVALS = U.INTERVALS_S


def _key(interval_s: float) -> str:
    return f"ratio_{interval_s * 1e6:.0f}us"


def observe(r) -> dict:
    """One point's row: utilization, drops, peak/average per interval, the 1 s rates and
    the verdicts, over every node's whole seconds."""
    u = r.port_util
    nodes = list(range(r.servers))
    sec = u.aggregate(1.0)
    whole = sec.whole()
    rate = float(u.ports["rate_bps"].iloc[u.nic(0)])
    rx = np.array([sec["tx_bytes"][u.downlink(h), :whole] * 8.0 for h in nodes])  # bits per second
    tx = np.array([sec["tx_bytes"][u.nic(h), :whole] * 8.0 for h in nodes])
    drops = np.array([sec["drop_packets"][u.downlink(h), :whole] for h in nodes])
    out = {
        "avg_util": float(rx.mean() / rate),
        "drops_per_s_machine": float(drops.mean()),
        "drops_per_s_machine_max": float(drops.max()) if drops.size else 0.0,
        "rx_1s_mbps": json.dumps(np.round(rx / 1e6, 1).tolist()),
        "tx_1s_mbps": json.dumps(np.round(tx / 1e6, 1).tolist()),
    }
    for iv in INTERVALS:
        ratios = np.concatenate([U.peak_to_average(u, u.downlink(h), iv)["ratio"].to_numpy() for h in nodes])
        ratios = ratios[np.isfinite(ratios)]
        out[_key(iv)] = float(ratios.mean()) if ratios.size else float("nan")
    levels = U.verdicts(u, nodes)["level"]
    for level in ("incast", "possible", "none"):
        out[f"verdict_{level}"] = int((levels == level).sum())
    return out


def _at_util(df: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    d = df[(df["avg_util"] >= lo) & (df["avg_util"] <= hi)]
    if d.empty:
        have = ", ".join(f"{x:.0%}" for x in df.sort_values("avg_util")["avg_util"])
        raise KeyError(f"no point with average utilization in {lo:.0%}-{hi:.0%} (have {have})")
    return d


def burstiness_grows_as_polling_shrinks(df):
    # at the point nearest the blog's escript run (an off-peak cluster at ~20 %: "Avg 170-210 Mbit/s")
    row = df.iloc[(df["avg_util"] - 0.2).abs().argsort().iloc[0]]
    ratios = [row[_key(iv)] for iv in INTERVALS]
    shown = ", ".join(f"{iv * 1e3:g} ms {x:.2f}" for iv, x in zip(INTERVALS, ratios))
    # That the ratio does not grow with the interval is not checked: between nested intervals
    # (100 us -> 1 ms -> 2 ms ... -> 64 ms, 125 -> 250 -> 500 ms -> 1 s) it holds by
    # construction, a coarse bucket's rate being the mean of its fine ones. What can fail: at
    # 1 ms at least the verdict's BURST_RATIO (3), what the monitor calls a microburst (the
    # blog measured 7.6-9.0); at 500 ms at most 1.5 (the blog: 1.0-1.1, "invisible").
    ok = row[_key(1e-3)] >= verdict.BURST_RATIO and row[_key(0.5)] <= 1.5
    return f"at {row['avg_util']:.0%} average utilization, peak/average by interval: {shown}", ok


def _versus_blog(ours: float, blog: tuple[int, int]) -> str:
    lo, hi = blog
    where = "above" if ours > hi else "below" if ours < lo else "within"
    return f"{where} the blog's {lo}-{hi}"


def drops_at_a_third_of_the_link(df):
    d = _at_util(df, 0.25, 0.35)
    per = ", ".join(f"{u:.0%}: {x:.1f}/s" for u, x in zip(d["avg_util"], d["drops_per_s_machine"]))
    # at least 4 frames/s per machine: a tenth of the blog's 40, since its number belongs to its
    # switch and traffic; the claim we hold is that an average far below the link drops frames.
    # How ours compare with the blog's 40-100 is reported, not judged (a bar there would be fitted).
    mean = float(d["drops_per_s_machine"].mean())
    return (f"dropped frames per second per machine at 25-35 % utilization: {per} "
            f"({_versus_blog(mean, (40, 100))})"), bool((d["drops_per_s_machine"] >= 4).all())


def drops_rise_sharply(df):
    low = _at_util(df, 0.25, 0.35)["drops_per_s_machine"].mean()
    high = _at_util(df, 0.45, 0.55)["drops_per_s_machine"].mean()
    # "rise very sharply": at 45-55 % (the blog's "At 45-55% utilization, you'll start seeing
    # 100-500") at least 2.5x what 25-35 % drops (the blog: 40-100 -> 100-500, 2.5x at its low
    # ends). Our levels against the blog's are reported, not judged.
    return (f"drops per second per machine: {low:.1f} at 25-35 % ({_versus_blog(low, (40, 100))}) -> "
            f"{high:.1f} at 45-55 % ({_versus_blog(high, (100, 500))}), {high / max(low, 1e-9):.1f}x"
            ), high >= 2.5 * max(low, 1e-9)


def _spread(cell: str) -> float:
    rates = np.asarray(json.loads(cell))
    lo = rates.min(axis=1)
    return float(np.median(rates.max(axis=1) / np.maximum(lo, 1.0)))


def seesaw_above_half(df):
    top = df.sort_values("avg_util").iloc[-1]
    low = _at_util(df, 0.2, 0.35).iloc[0]
    s_top, s_low = _spread(top["tx_1s_mbps"]), _spread(low["tx_1s_mbps"])
    # the 1 s transmit rate of a typical machine (median over machines of its busiest second
    # over its quietest) varies 2x or more above 50 % (the blog: 900 vs 200 Mbit/s, 4.5x) and
    # less than 1.5x at 20-35 % (the blog's 20-30 % seconds: 226-302 Mbit/s, 1.3x)
    ok = top["avg_util"] >= 0.5 and s_top >= 2 and s_low < 1.5
    return (f"1 s transmit rate, busiest / quietest second, median over machines: {s_top:.2f}x at "
            f"{top['avg_util']:.0%}, {s_low:.2f}x at {low['avg_util']:.0%}"), ok


def verdict_calls_incast_at_moderate_load(df):
    d = _at_util(df, 0.25, 0.35)
    judged = d["verdict_incast"] + d["verdict_possible"] + d["verdict_none"]
    share = float(d["verdict_incast"].sum() / judged.sum())
    # some machine-seconds at 25-35 % are incast by the monitor's rule (every point of the
    # sweep drops frames, so there is no drop-free point to hold a "never without drops" to)
    return f"machine-seconds judged incast at 25-35 %: {share:.0%}", share > 0


def draw(fig, df: pd.DataFrame) -> None:
    (a, b), (c, d) = fig.subplots(2, 2)
    df = df.sort_values("avg_util")
    for _, row in df.iterrows():
        a.plot([iv * 1e3 for iv in INTERVALS], [row[_key(iv)] for iv in INTERVALS], marker="o", markersize=3,
               label=f"{row['avg_util']:.0%}")
    a.set_xscale("log")
    a.set_xlabel("sampling interval (ms)")
    a.set_ylabel("peak / average (per second, receive side)")
    a.set_title("(a) microbursts vanish at 1 s", fontsize=10)
    a.legend(fontsize=6, title="avg utilization", title_fontsize=6)
    b.plot(df["avg_util"] * 100, df["drops_per_s_machine"], marker="o")
    b.axhspan(40, 100, xmin=0, xmax=1, color="tab:red", alpha=0.1, label="blog: 40-100/s at 25-35 %")
    b.set_xlabel("average utilization (%)")
    b.set_ylabel("dropped frames per second per machine")
    b.set_title("(b) drops against utilization", fontsize=10)
    b.legend(fontsize=7)
    top = df.iloc[-1]
    for label, row in (("highest load", top), ("~30 %", df.iloc[(df["avg_util"] - 0.3).abs().argsort().iloc[0]])):
        rates = np.asarray(json.loads(row["tx_1s_mbps"]))[0]
        c.plot(np.arange(len(rates)), rates, marker="o", label=f"machine 0, {label} ({row['avg_util']:.0%})")
    c.set_xlabel("second")
    c.set_ylabel("1 s transmit rate (Mbit/s)")
    c.set_ylim(0, 1000)
    c.set_title("(c) the 1 s see-saw", fontsize=10)
    c.legend(fontsize=7)
    x = np.arange(len(df))
    bottom = np.zeros(len(df))
    for level, color in (("incast", "tab:red"), ("possible", "tab:orange"), ("none", "tab:green")):
        vals = df[f"verdict_{level}"].to_numpy(dtype=float)
        d.bar(x, vals, bottom=bottom, color=color, label=level)
        bottom += vals
    d.set_xticks(x)
    d.set_xticklabels([f"{v:.0%}" for v in df["avg_util"]], fontsize=7)
    d.set_xlabel("average utilization")
    d.set_ylabel("machine-seconds")
    d.set_title("(d) the monitor's verdict per machine-second", fontsize=10)
    d.legend(fontsize=7)


EXPERIMENT = Experiment(
    name="riak-microburst",
    title="Riak microbursts: peak/average against the sampling interval, drops against utilization, "
          "the 1 s see-saw",
    source=SRC,
    summary=__doc__.split("\n\n")[1].replace("\n", " "),
    series=(Series(LABEL),),
    base={"workload": "riak", "servers": NODES, "replicas": 3, "read_quorum": 2, "reply_bytes": "16KiB",
          "reply_size_dist": "exponential", "buffer": "64KiB", "rto_min": "200ms", "tcp": "sack", "cc": "cubic"},
    axis="get_rate",
    values=(160, 320, 480, 640, 800, 960, 1280, 1600),
    quick_values=(320, 640, 1280),
    duration="20s",
    quick_duration="2s",
    seed_variation={},
    observe=Observe("100us", observe),
    plot=Plot(kind="custom", draw=draw),
    checks=(
        Check("\"as the polling period gets smaller, the ratio between maximum observed incoming rate and average "
              "rate gets larger\": near 20 % average utilization, the mean per-second ratio is at least 3 (the "
              "verdict's microburst ratio) at 1 ms and at most 1.5 at 500 ms (that it never grows between "
              "nested intervals holds by construction and is not a check)", SRC,
              burstiness_grows_as_polling_shrinks),
        Check("\"If your cluster has average utilization of 25-35% and uses Ethernet switches with small buffers, "
              "you may already be dropping 40-100 frames per second per machine\": at least 4 per second per "
              "machine there", SRC, drops_at_a_third_of_the_link),
        Check("\"The frame drop rate will rise very sharply as utilization increases. At 45-55% utilization, you'll "
              "start seeing 100-500 dropped frames\": at 45-55 % at least 2.5x the drops of 25-35 %", SRC,
              drops_rise_sharply),
        Check("\"more than 50% average utilization (sampled @ 1 second intervals) ... The 1-second utilization "
              "rates will see-saw between 900 Mbit/sec down to 200 Mbit/sec\": above 50 % a machine's 1 s "
              "transmit rate varies 2x or more between seconds, at 20-35 % less than 1.5x", SRC, seesaw_above_half),
        Check("The monitor's verdict rule, applied per machine-second, calls incast at 25-35 % average "
              "utilization", SRC, verdict_calls_incast_at_moderate_load),
    ),
)
