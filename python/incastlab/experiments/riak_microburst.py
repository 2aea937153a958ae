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
  machine-seconds per machine, enough to see a see-saw;
- **two transports** (issue 26): a connection per ordered replica -> coordinator pair (the
  model before), and Erlang distribution as Riak runs on it (``app/erlang_dist.rs``: one
  connection per pair of nodes carrying every message in order, Erlang's default 1 MiB
  ``dist_buf_busy_limit``, a vnode or a get suspended while its connection is busy: the
  blog's "busy_dist_port"). The checks read the Erlang distribution series; the other is
  drawn beside it.

Each machine-second is judged by the monitor's verdict rule and by the rule before issue 26
(``verdict.judge_ratio``), and labelled from the simulator's events (``incastlab.truth``).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .. import truth as T
from .. import utilization as U
from ..monitor import verdict
from .sources import RIAK
from .spec import Check, Experiment, Observe, Plot, Series

SRC = RIAK
NODES = 16
PER_PAIR = f"Riak, {NODES} nodes, a connection per pair"
DIST = f"Riak, {NODES} nodes, Erlang distribution"
LABEL = DIST  # the series the checks read
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
    v = U.verdicts(u, nodes)
    for level in ("incast", "possible", "none"):
        out[f"verdict_{level}"] = int((v["level"] == level).sum())
        out[f"ratio_verdict_{level}"] = int((v["ratio_level"] == level).sum())
    # every machine-second: its receive utilization, the ground truth, both rules' verdicts
    truth = {h: T.label(r.truth, h, whole) for h in nodes}
    seconds = [[round(float(rx[i, s] / rate), 4), bool(truth[h][s]), lv, rl]
               for i, h in enumerate(nodes) for s, lv, rl in
               zip(range(whole), v[v["host"] == h]["level"], v[v["host"] == h]["ratio_level"])]
    out["machine_seconds"] = json.dumps(seconds)
    out["truth_incast"] = int(sum(t for _, t, _, _ in seconds))
    return out


def _series(df: pd.DataFrame, label: str = LABEL) -> pd.DataFrame:
    return df[df["series"] == label] if "series" in df else df


def _at_util(df: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    df = _series(df)
    d = df[(df["avg_util"] >= lo) & (df["avg_util"] <= hi)]
    if d.empty:
        have = ", ".join(f"{x:.0%}" for x in df.sort_values("avg_util")["avg_util"])
        raise KeyError(f"no point with average utilization in {lo:.0%}-{hi:.0%} (have {have})")
    return d


def burstiness_grows_as_polling_shrinks(df):
    # at the point nearest the blog's escript run (an off-peak cluster at ~20 %: "Avg 170-210 Mbit/s")
    df = _series(df)
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
    top = _series(df).sort_values("avg_util").iloc[-1]
    low = _at_util(df, 0.2, 0.35).iloc[0]
    s_top, s_low = _spread(top["tx_1s_mbps"]), _spread(low["tx_1s_mbps"])
    # the 1 s transmit rate of a typical machine (median over machines of its busiest second
    # over its quietest) varies 2x or more above 50 % (the blog: 900 vs 200 Mbit/s, 4.5x) and
    # less than 1.5x at 20-35 % (the blog's 20-30 % seconds: 226-302 Mbit/s, 1.3x)
    ok = top["avg_util"] >= 0.5 and s_top >= 2 and s_low < 1.5
    return (f"1 s transmit rate, busiest / quietest second, median over machines: {s_top:.2f}x at "
            f"{top['avg_util']:.0%}, {s_low:.2f}x at {low['avg_util']:.0%}; {_seesaw_words(top)}"), ok


def _seesaw_words(row) -> str:
    """The blog's words in numbers: seconds at 900 Mbit/s or more, at 200 Mbit/s or less."""
    rates = np.asarray(json.loads(row["tx_1s_mbps"])).ravel()
    hi, lo = int((rates >= 900).sum()), int((rates <= 200).sum())
    return (f"at {row['avg_util']:.0%}, of {rates.size} machine-seconds {hi} transmit 900 Mbit/s or more and "
            f"{lo} 200 Mbit/s or less (1 s rates {rates.min():.0f}-{rates.max():.0f} Mbit/s)")


def seesaw_in_the_blogs_numbers(df):
    top = _series(df).sort_values("avg_util").iloc[-1]
    rates = np.asarray(json.loads(top["tx_1s_mbps"])).ravel()
    hi, lo = int((rates >= 900).sum()), int((rates <= 200).sum())
    # "see-saw between 900 Mbit/sec down to 200 Mbit/sec. To make matters worse, the 200
    # Mbit/sec rate will happen much more frequently than the 900 Mbit/sec rate": above 50 %,
    # machine-seconds at 900 Mbit/s or more and at 200 or less both occur, the low ones more often
    ok = top["avg_util"] >= 0.5 and hi > 0 and lo > hi
    return _seesaw_words(top), bool(ok)


def _judged(d: pd.DataFrame) -> pd.DataFrame:
    """Every machine-second of the points in ``d``: util, truth, level, ratio_level."""
    rows = [r for cell in d["machine_seconds"] for r in json.loads(cell)]
    return pd.DataFrame(rows, columns=["util", "truth", "level", "ratio_level"])


def _verdict_text(df: pd.DataFrame, lo: float, hi: float | None) -> tuple[str, float, float]:
    d = _series(df)
    d = d[(d["avg_util"] >= lo) & (d["avg_util"] <= (hi if hi is not None else 1.0))]
    if d.empty:
        raise KeyError(f"no point with average utilization from {lo:.0%}")
    m = _judged(d)
    called, truth = m["level"] == "incast", m["truth"]
    tp = int((called & truth).sum())
    recall = tp / max(int(truth.sum()), 1)
    precision = tp / max(int(called.sum()), 1)
    counts = "/".join(str(int((m["level"] == k).sum())) for k in ("incast", "possible", "none"))
    ratio = "/".join(str(int((m["ratio_level"] == k).sum())) for k in ("incast", "possible", "none"))
    text = (f"points at {', '.join(f'{u:.0%}' for u in d['avg_util'])}: {len(m)} machine-seconds, "
            f"{int(truth.sum())} incast by the ground truth; verdict incast/possible/none {counts} "
            f"(recall {recall:.2f}, precision {precision:.2f}); the rule before {ratio}")
    return text, recall, precision


def verdict_calls_incast_at_moderate_load(df):
    text, recall, precision = _verdict_text(df, 0.25, 0.35)
    # the labelled set's bar (docs/monitor.md): recall and precision of `incast` at least 0.9
    return f"at 25-35 %, {text}", recall >= 0.9 and precision >= 0.9


def verdict_calls_incast_on_a_busy_cluster(df):
    text, recall, precision = _verdict_text(df, 0.45, None)
    # where the rule before called every machine-second "none" (40-66 %), the same bar
    return f"from 45 %, {text}", recall >= 0.9 and precision >= 0.9


def draw(fig, df: pd.DataFrame) -> None:
    (a, b), (c, d) = fig.subplots(2, 2)
    df = df.sort_values("avg_util")
    dist, pair = _series(df, DIST), _series(df, PER_PAIR)
    for _, row in dist.iterrows():
        a.plot([iv * 1e3 for iv in INTERVALS], [row[_key(iv)] for iv in INTERVALS], marker="o", markersize=3,
               label=f"{row['avg_util']:.0%}")
    a.set_xscale("log")
    a.set_xlabel("sampling interval (ms)")
    a.set_ylabel("peak / average (per second, receive side)")
    a.set_title("(a) microbursts vanish at 1 s (Erlang distribution)", fontsize=10)
    a.legend(fontsize=6, title="avg utilization", title_fontsize=6)
    for label, part, style in ((DIST, dist, "-"), (PER_PAIR, pair, "--")):
        b.plot(part["avg_util"] * 100, part["drops_per_s_machine"], marker="o", linestyle=style,
               label=label.split(", ")[-1])
    b.axhspan(40, 100, xmin=0, xmax=1, color="tab:red", alpha=0.1, label="blog: 40-100/s at 25-35 %")
    b.set_xlabel("average utilization (%)")
    b.set_ylabel("dropped frames per second per machine")
    b.set_title("(b) drops against utilization", fontsize=10)
    b.legend(fontsize=7)
    lines = [("Erlang dist., highest load", dist.iloc[-1], "-"),
             ("Erlang dist., ~30 %", dist.iloc[(dist["avg_util"] - 0.3).abs().argsort().iloc[0]], "-"),
             ("per pair, highest load", pair.iloc[-1], ":")]
    for label, row, style in lines:
        rates = np.asarray(json.loads(row["tx_1s_mbps"]))[0]
        c.plot(np.arange(len(rates)), rates, marker="o", markersize=3, linestyle=style,
               label=f"machine 0, {label} ({row['avg_util']:.0%})")
    c.axhline(900, color="grey", linewidth=0.5)
    c.axhline(200, color="grey", linewidth=0.5)
    c.set_xlabel("second")
    c.set_ylabel("1 s transmit rate (Mbit/s)")
    c.set_ylim(0, 1000)
    c.set_title("(c) the 1 s see-saw (blog: 900 down to 200)", fontsize=10)
    c.legend(fontsize=6)
    x = np.arange(len(dist))
    w = 0.28
    truth = dist["truth_incast"].to_numpy(dtype=float)
    d.bar(x - w, truth, w, color="black", label="incast by the ground truth")
    d.bar(x, dist["verdict_incast"].to_numpy(dtype=float), w, color="tab:red", label="verdict: incast")
    d.bar(x + w, dist["ratio_verdict_incast"].to_numpy(dtype=float), w, color="tab:grey",
          label="the peak/average rule before: incast")
    d.set_xticks(x)
    d.set_xticklabels([f"{v:.0%}" for v in dist["avg_util"]], fontsize=7)
    d.set_xlabel("average utilization")
    d.set_ylabel("machine-seconds")
    d.set_title("(d) machine-seconds called incast (Erlang distribution)", fontsize=10)
    d.legend(fontsize=6)


EXPERIMENT = Experiment(
    name="riak-microburst",
    title="Riak microbursts: peak/average against the sampling interval, drops against utilization, "
          "the 1 s see-saw",
    source=SRC,
    summary=__doc__.split("\n\n")[1].replace("\n", " "),
    series=(Series(DIST, {"riak_transport": "erlang_dist"}), Series(PER_PAIR, {"riak_transport": "per_pair"})),
    base={"workload": "riak", "servers": NODES, "replicas": 3, "read_quorum": 2, "reply_bytes": "16KiB",
          "reply_size_dist": "exponential", "buffer": "64KiB", "rto_min": "200ms", "tcp": "sack", "cc": "cubic"},
    axis="get_rate",
    values=(160, 320, 480, 640, 800, 960, 1280, 1600),
    quick_values=(320, 640, 1280),
    duration="20s",
    quick_duration="2s",
    seed_variation={},
    observe=Observe("100us", observe, truth=True),
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
        Check("\"The 1-second utilization rates will see-saw between 900 Mbit/sec down to 200 Mbit/sec. To make "
              "matters worse, the 200 Mbit/sec rate will happen much more frequently than the 900 Mbit/sec rate\": "
              "above 50 %, some machine-seconds transmit 900 Mbit/s or more, and more transmit 200 Mbit/s or less",
              SRC, seesaw_in_the_blogs_numbers),
        Check("\"If your cluster has average utilization of 25-35% ... you may already be dropping\": the monitor's "
              "verdict, applied per machine-second at 25-35 %, calls incast with recall and precision of at least "
              "0.9 against the simulator's ground truth", SRC, verdict_calls_incast_at_moderate_load),
        Check("\"At 45-55% utilization ... a cluster that can barely run above 50-60%\": from 45 %, where the rule "
              "before issue 26 called every machine-second `none`, the verdict calls incast with recall and "
              "precision of at least 0.9", SRC, verdict_calls_incast_on_a_busy_cluster),
    ),
)
