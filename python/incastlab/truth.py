"""Ground truth for the incast verdict: simulated machine-seconds labelled from the events,
judged by the monitor's rule, counted into a confusion matrix per utilization band.

The monitor infers incast from counters (``monitor/verdict.py``); the simulator knows it from
its events (``crates/sim/src/trace.rs``: every data packet a switch dropped with the TCP
senders whose data waited at that port, and every retransmission timeout with the loss it
came from). **A machine-second is incast** when a flow whose data goes to that machine timed
out in that second and the loss the timeout came from was at a port where two or more TCP
senders' packets were queued: many senders met in one queue, it overflowed, and a flow
stalled for an RTO. Everything else is not: a lone bulk flow's own loss (one sender queued),
losses recovered without a timeout, a timeout without a loss (a spurious one), UDP noise
(datagrams are not TCP senders), an idle link.

The labelled set (:data:`CASES`) spans 5-80 % average receive utilization, 1 and 10 Gbps,
a star and a leaf-spine:

- ``reads``: FAST'08's synchronized reads (``000_315d806dde942a9f.txt`` §3.1) into one
  client, with paced bulk flows into the same client raising its load; the client's seconds;
- ``riak``: Fritchie's Riak gets (``003_a133663d5dbcfa75.txt``), 16 nodes, over a
  connection per pair and over Erlang distribution, at get rates from a few to ~75 % of the
  link; every node's seconds;
- ``lone``: one flow at a time into a host (each long block read from one server of two),
  its window larger than the port, alone or beside UDP noise (its own losses and timeouts:
  on links of one rate a lone flow overflows a port only with others' traffic);
- ``steady``: 4 or 8 paced flows into one host, 10-80 % of its link (many senders, no
  synchronized bursts);
- ``udp``: UDP constant-rate noise at 10-50 % of the client's link;

the last three beside a read workload made light (one 1460 B segment per server per block,
and a think time of up to a second per request: ``jitter``), whose hosts are otherwise idle.

Bands are of the machine's 1 s average receive rate over its line rate (the receive side is
where incast happens); a machine-second below 5 % (an idle link, a server receiving only
ACKs) or above 80 % is counted apart.

**Design and held-out seeds.** A rule designed on the labelled set and judged on it would be
a check that cannot fail. The rule was written before the set existed and looked at on the
design seeds only (``DESIGN_SEEDS``); the matrix that counts is the one of the held-out seeds
(``HELD_OUT_SEEDS``), run once the rule was fixed (``incastlab monitor truth --seeds held-out``).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

PS_PER_S = 10**12
#: Utilization bands (fraction of the line rate): [lo, hi).
BANDS = ((0.05, 0.20), (0.20, 0.35), (0.35, 0.50), (0.50, 0.65), (0.65, 0.80))
DESIGN_SEEDS = (1,)
HELD_OUT_SEEDS = (2, 3)
#: Simulated seconds per case (each second of each judged machine is one sample).
DURATION_S = 4
QUICK_DURATION_S = 2


@dataclass(frozen=True)
class Losses:
    """A run's ground truth: per loss ``loss_*`` and per timeout ``timeout_*`` arrays, and
    each flow's (sender, receiver) host (``flow_ends``, shape (flows, 2))."""

    loss_time_ps: np.ndarray
    loss_port: np.ndarray
    loss_flow: np.ndarray
    loss_queued_senders: np.ndarray
    timeout_time_ps: np.ndarray
    timeout_flow: np.ndarray
    timeout_receiver: np.ndarray
    timeout_loss: np.ndarray
    flow_ends: np.ndarray
    #: Per loss, the dropped packet's first sequence number (relative, as the event trace: the first data byte is 1).
    loss_seq: np.ndarray | None = None

    @staticmethod
    def from_native(c: dict[str, bytes]) -> Losses:
        """From ``_native.simulate_recording``'s truth columns (little-endian bytes)."""
        u32 = lambda k: np.frombuffer(c[k], dtype="<u4")  # noqa: E731
        return Losses(
            loss_time_ps=np.frombuffer(c["loss_time_ps"], dtype="<u8"), loss_port=u32("loss_port"),
            loss_flow=u32("loss_flow"), loss_queued_senders=u32("loss_queued_senders"),
            timeout_time_ps=np.frombuffer(c["timeout_time_ps"], dtype="<u8"), timeout_flow=u32("timeout_flow"),
            timeout_receiver=u32("timeout_receiver"), timeout_loss=np.frombuffer(c["timeout_loss"], dtype="<i8"),
            flow_ends=u32("flow_ends").reshape(-1, 2),
            loss_seq=np.frombuffer(c["loss_seq"], dtype="<u8") if "loss_seq" in c else None)

    def incast_timeouts(self) -> np.ndarray:
        """Per timeout: it came from a loss at a port where 2 or more TCP senders waited."""
        has = self.timeout_loss >= 0
        out = np.zeros(len(self.timeout_loss), dtype=bool)
        out[has] = self.loss_queued_senders[self.timeout_loss[has]] >= 2
        return out


def label(losses: Losses, host: int, seconds: int) -> np.ndarray:
    """Per whole second of ``host``: incast by the ground truth (module docstring)."""
    hit = (losses.timeout_receiver == host) & losses.incast_timeouts()
    s = (losses.timeout_time_ps[hit] // PS_PER_S).astype(np.int64)
    out = np.zeros(seconds, dtype=bool)
    out[s[s < seconds]] = True
    return out


# ---- the labelled set ------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One simulated run of the labelled set: its family, the scenario's fields, the hosts
    whose machine-seconds are judged (None: every host), and its simulated seconds when
    not the set's (the 10 Gbps Riak runs: ten times the events per second)."""

    family: str
    fields: dict[str, Any]
    hosts: tuple[int, ...] | None
    seconds: int | None = None

    @property
    def name(self) -> str:
        return f"{self.family} " + " ".join(f"{k}={v}" for k, v in self.fields.items())


# a light read workload: one segment per server per block, up to 1 s of think time per request
LIGHT = {"servers": 4, "sru": "1460B", "jitter": "1s"}
FABRICS = {
    "1G star": {"rate": "1Gbps", "topology": "star"},
    "1G leaf-spine": {"rate": "1Gbps", "topology": "leaf_spine", "leaves": 2},
    "10G star": {"rate": "10Gbps", "topology": "star", "rtt": "40us"},
    "10G leaf-spine": {"rate": "10Gbps", "topology": "leaf_spine", "leaves": 2, "rtt": "40us"},
}
# per fabric: a shallow port, the FAST'08 collapse's and the Riak blog's
BUFFER = {"1Gbps": "64KiB", "10Gbps": "150000B"}


def _rate_bps(fabric: dict[str, Any]) -> float:
    return 1e9 if fabric["rate"] == "1Gbps" else 10e9


def cases(quick: bool = False) -> list[Case]:
    """Every run of the labelled set (``quick``: a handful, for tests and a first look)."""
    out: list[Case] = []
    fabrics = ["1G star", "10G star"] if quick else list(FABRICS)
    for fname in fabrics:
        fab = FABRICS[fname]
        line = _rate_bps(fab)
        ten = line > 1e9
        base = {**fab, "buffer": BUFFER[fab["rate"]], "rto_min": "200ms", "tcp": "sack", "cc": "cubic"}
        # reads: the collapse, with paced bulk flows into the client for 0-60 % more load
        for servers, extra in ((16, 0.0), (16, 0.3), (32, 0.6)) if quick else \
                ((8, 0.0), (16, 0.0), (16, 0.2), (32, 0.4), (16, 0.6), (32, 0.7)):
            kw = {**base, "servers": servers, "sru": "256KiB" if not ten else "1MiB"}
            if extra:
                kw.update(bulk_flows=4, bulk_to=str(servers), bulk_rate=f"{extra * line / 4:.0f}bps")
            out.append(Case("reads", kw, (servers,)))
        # riak: both transports, from a few per cent to ~75 % of the link (a node receives
        # 3 replies of 16 KiB per get it coordinates: 250 Mbit/s is ~640 gets/s at 1 Gbps)
        scale = line / 1e9
        rates = (160, 800, 1440) if quick else (120, 320, 640, 960, 1280, 1760)
        transports = ("per_pair",) if quick else ("per_pair", "erlang_dist")
        for transport in transports:
            for r in rates:
                if ten and not quick and r not in (320, 1280):
                    continue  # 10 Gbps: two points of 2 s, ten times the events per second each
                kw = {**base, "workload": "riak", "servers": 16, "replicas": 3, "read_quorum": 2,
                      "reply_bytes": "16KiB", "reply_size_dist": "exponential", "get_rate": r * scale,
                      "riak_transport": transport}
                out.append(Case("riak", kw, None, 2 if ten else None))
        client = LIGHT["servers"]
        light = {**base, **LIGHT}
        # lone: one flow at a time (each block read from one of two servers, a long one) with
        # a window larger than the port, alone or beside UDP noise from both servers: the
        # flow's own losses (on equal links a lone flow overflows a port only with others' help)
        for udp in (0.0, 0.2) if quick else (0.0, 0.1, 0.3):
            kw = {**base, "servers": 2, "active_servers": 1, "sru": "64MiB" if ten else "16MiB", "rwnd": "1MiB"}
            if udp:
                kw["udp"] = udp
            out.append(Case("lone", kw, (2,)))
        # steady: several paced flows into one host
        for n, load in ((4, 0.3), (8, 0.7)) if quick else \
                ((4, 0.1), (4, 0.3), (8, 0.45), (4, 0.6), (8, 0.7), (8, 0.78)):
            out.append(Case("steady", {**light, "bulk_flows": n, "bulk_rate": f"{load * line / n:.0f}bps"},
                            (client,)))
        # udp: constant-rate noise into the light reads' client
        for udp in (0.1, 0.4) if quick else (0.1, 0.25, 0.4, 0.5):
            out.append(Case("udp", {**light, "udp": udp}, (client,)))
    return out


def judge_case(case: Case, seed: int, duration_s: int) -> pd.DataFrame:
    """Run one case and return its judged machine-seconds: ``family``, ``case``, ``seed``,
    ``host``, ``second``, ``util`` (1 s receive rate / line rate), ``truth``, ``level``
    (the verdict), ``ratio_level`` (the rule before issue 26), ``evidence``."""
    from . import utilization as U
    from .sim import simulate

    r = simulate({**case.fields, "seed": seed, "duration": f"{duration_s}s"}, port_util_interval="100us",
                 truth=True)
    u, losses = r.port_util, r.truth
    hosts = list(case.hosts) if case.hosts is not None else u.machines()
    v = U.verdicts(u, hosts)
    sec = u.aggregate(1.0)
    whole = sec.whole()
    rows = []
    for h in hosts:
        d, n = u.downlink(h), u.nic(h)
        line = float(u.ports["rate_bps"].iloc[n])
        truth = label(losses, h, whole)
        for s in range(whole):
            rows.append({"host": h, "second": s, "util": float(sec["tx_bytes"][d, s] * 8 / line),
                         "truth": bool(truth[s])})
    df = pd.DataFrame(rows).merge(v, on=["host", "second"])
    df.insert(0, "seed", seed)
    df.insert(0, "case", case.name)
    df.insert(0, "family", case.family)
    return df


def labelled_set(seeds: Iterable[int], quick: bool = False, jobs: int = 2,
                 progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Every case of :func:`cases` at every seed, judged (``judge_case``), in case order."""
    # the longest runs first, so the pool does not end waiting on one
    work = sorted(((c, s) for s in seeds for c in cases(quick)), key=lambda w: -_cost(w[0]))
    duration = QUICK_DURATION_S if quick else DURATION_S
    done = 0
    frames: list[pd.DataFrame | None] = [None] * len(work)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(judge_case, c, s, min(duration, c.seconds or duration)): i
                   for i, (c, s) in enumerate(work)}
        for fut in futures:
            frames[futures[fut]] = fut.result()
            done += 1
            if progress:
                progress(done, len(work))
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(["seed", "case", "host", "second"], kind="stable", ignore_index=True)


def _cost(c: Case) -> float:
    """A rough order of a case's simulation time: events grow with the rate and the gets."""
    rate = 10.0 if c.fields.get("rate") == "10Gbps" else 1.0
    return rate * (c.seconds or DURATION_S) * (3.0 if c.family == "riak" else 1.0)


# ---- the confusion matrix ----------------------------------------------------------------------

def band_of(util: float) -> str:
    for lo, hi in BANDS:
        if lo <= util < hi:
            return f"{lo * 100:.0f}-{hi * 100:.0f} %"
    return "below 5 %" if util < BANDS[0][0] else "80 % and above"


def confusion(df: pd.DataFrame, column: str = "level") -> pd.DataFrame:
    """Per band (and the bands together): true and false positives and negatives of the
    verdict ``incast`` in ``column`` against ``truth``, recall and precision (NaN where
    undefined: no incast second, or none called)."""
    d = df.assign(band=df["util"].map(band_of), called=df[column] == "incast")
    order = [band_of(lo) for lo, _ in BANDS] + ["5-80 %", "below 5 %", "80 % and above"]
    rows = []
    for band in order:
        sel = d[d["util"].between(BANDS[0][0], BANDS[-1][1], inclusive="left")] if band == "5-80 %" \
            else d[d["band"] == band]
        tp = int((sel["truth"] & sel["called"]).sum())
        fp = int((~sel["truth"] & sel["called"]).sum())
        fn = int((sel["truth"] & ~sel["called"]).sum())
        tn = int((~sel["truth"] & ~sel["called"]).sum())
        rows.append({"band": band, "seconds": len(sel), "incast": tp + fn, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
                     "recall": tp / (tp + fn) if tp + fn else float("nan"),
                     "precision": tp / (tp + fp) if tp + fp else float("nan")})
    return pd.DataFrame(rows)


def markdown(new: pd.DataFrame, old: pd.DataFrame) -> str:
    """The two matrices side by side, one row per band, as a Markdown table."""
    def f(x: float) -> str:
        return "-" if x != x else f"{x:.2f}"

    lines = ["| band | machine-seconds | incast (truth) | new rule: TP / FP / FN | recall | precision "
             "| rule before: TP / FP / FN | recall | precision |",
             "|---|---:|---:|---|---:|---:|---|---:|---:|"]
    for (_, a), (_, b) in zip(new.iterrows(), old.iterrows()):
        lines.append(f"| {a['band']} | {a['seconds']} | {a['incast']} | {a['tp']} / {a['fp']} / {a['fn']} | "
                     f"{f(a['recall'])} | {f(a['precision'])} | {b['tp']} / {b['fp']} / {b['fn']} | "
                     f"{f(b['recall'])} | {f(b['precision'])} |")
    return "\n".join(lines)


def summary_json(df: pd.DataFrame) -> str:
    """Both matrices as one JSON object (``--json``)."""
    return json.dumps({"machine_seconds": len(df),
                       "new": confusion(df, "level").to_dict(orient="records"),
                       "ratio": confusion(df, "ratio_level").to_dict(orient="records")}, allow_nan=True)
