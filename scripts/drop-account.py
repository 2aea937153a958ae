#!/usr/bin/env python3
"""Account for every dropped data packet of one reproduction point: what its sender was doing
when it sent the packet.

    PYTHONPATH=python python scripts/drop-account.py swift-incast Swift 1000
    PYTHONPATH=python python scripts/drop-account.py swift-incast "TCP SACK" 1000 timestamps=true

EXPERIMENT is a reproduction (``incastlab reproduce --list``), SERIES the start of one of its
series' labels, N the point's axis value; FIELD=VALUE changes the scenario (values as JSON,
else text). Each loss (flow, sequence number, port: the ground truth, ``truth=True``) is
matched to the transmission it was (the event trace, ``Recording(events=...)``) and classed by
the sender's state then: part of the first window (no ACK and no timeout yet); the timeout's
own retransmission (sent at the instant of an RTO); resent in fast recovery; resent after a
timeout going back N; new data with the window below one packet (Swift's pacing); new data
with the window at a packet or more after it was below one (regrowth); new data after a
timeout; new data in window mode with no timeout yet. Each class is split by whether the flow
had had an ACK, and the drops by port (the client's: the port with most drops; the others,
upstream). Used for issue 29's account of swift-incast (docs/transports.md).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from incastlab import experiments
from incastlab.recording import Recording
from incastlab.sim import simulate

PS = 10**12


def scenario(name: str, series: str, x: str, changes: list[str], seed: int = 1) -> dict:
    exp = experiments.load(name)
    chosen = [s for s in exp.series if s.label.startswith(series)]
    if len(chosen) != 1:
        sys.exit(f"drop-account: error: SERIES {series!r} must start exactly one of: "
                 + "; ".join(s.label for s in exp.series))
    kw = {**exp.base, **chosen[0].params, exp.axis: json.loads(x), "seed": seed}
    for c in changes:
        k, _, v = c.partition("=")
        try:
            kw[k] = json.loads(v)
        except json.JSONDecodeError:
            kw[k] = v
    return kw


def account(kw: dict) -> tuple[object, pd.DataFrame]:
    with tempfile.TemporaryDirectory() as d:
        ev_path = Path(d) / "events.csv"
        r = simulate(kw, recording=Recording(events=str(ev_path), losses=True))
        e = pd.read_csv(ev_path, header=None, names=["t", "kind", "flow", "a", "b", "c"])
    t = r.truth
    loss = pd.DataFrame({"ps": t.loss_time_ps.astype(np.int64), "port": t.loss_port,
                         "flow": t.loss_flow.astype(np.int64), "seq": t.loss_seq.astype(np.int64)})
    e["ps"] = (e.t * PS).round().astype(np.int64)
    e["flow"] = e.flow.astype(np.int64)
    sends = e[e.kind.isin(["tx", "rtx"])][["ps", "flow", "a", "kind"]].rename(columns={"a": "seq", "ps": "send_ps"})
    sends["seq"] = sends.seq.astype(np.int64)
    d = pd.merge_asof(loss.sort_values("ps"), sends.sort_values("send_ps"), left_on="ps", right_on="send_ps",
                      by=["flow", "seq"]).sort_values("send_ps")
    if d.kind.isna().any():
        raise SystemExit(f"drop-account: {int(d.kind.isna().sum())} losses matched no transmission")

    def state_at_send(kind: str, col: str, name: str, per_flow=None):
        nonlocal d
        x = e[e.kind == kind][["ps", "flow", col]].copy()
        if per_flow is not None:
            x[col] = per_flow(x)
        x = x.rename(columns={"ps": name + "_ps", col: name}).sort_values(name + "_ps")
        d = pd.merge_asof(d, x, left_on="send_ps", right_on=name + "_ps", by="flow").drop(columns=[name + "_ps"])

    state_at_send("cwnd", "a", "cwnd")
    state_at_send("cwnd", "a", "least_cwnd", lambda x: x.groupby("flow").a.cummin())
    state_at_send("rto", "a", "timeouts_before", lambda x: x.groupby("flow").cumcount() + 1)
    state_at_send("ack", "a", "acks_before", lambda x: x.groupby("flow").cumcount() + 1)
    state_at_send("state", "b", "state")
    d = d.fillna({"timeouts_before": 0, "acks_before": 0, "state": 0})
    rto = e[e.kind == "rto"]
    at_rto = set(zip(rto.flow, rto.ps))
    d["at_rto"] = [(f, p) in at_rto for f, p in zip(d.flow, d.send_ps)]
    mss = r.mss_bytes
    rtx = d.kind == "rtx"
    d["phase"] = np.select(
        [rtx & d.at_rto, rtx & (d.state == 3), rtx,
         (d.acks_before == 0) & (d.timeouts_before == 0), d.cwnd < mss, d.least_cwnd < mss, d.timeouts_before > 0],
        ["the timeout's own retransmission", "resent in fast recovery", "resent after a timeout, going back N",
         "part of the first window", "new data, window below one packet", "new data, regrowth (window >= 1 packet "
         "after < 1)", "new data after a timeout (window >= 1 packet)"],
        "new data, window mode, no timeout yet")
    d["had_ack"] = np.where(d.acks_before > 0, "after an ACK", "no ACK yet")
    client = loss.port.value_counts().idxmax()
    d["where"] = np.where(d.port == client, "client port", "upstream")
    return r, d


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kw = scenario(argv[0], argv[1], argv[2], argv[3:])
    r, d = account(kw)
    print(f"{argv[0]}, {argv[1]}, N = {argv[2]} {' '.join(argv[3:])}: drops {r.drops}, timeouts {r.timeouts}")
    tab = d.groupby(["phase", "had_ack"]).size().unstack(fill_value=0)
    for c in ("no ACK yet", "after an ACK"):
        if c not in tab:
            tab[c] = 0
    tab = tab[["no ACK yet", "after an ACK"]]
    tab["all"] = tab.sum(axis=1)
    print(tab.sort_values("all", ascending=False).to_string())
    print(f"all {len(d)}: client port {int((d['where'] == 'client port').sum())}, "
          f"upstream {int((d['where'] == 'upstream').sum())}; in the first 5 ms {int((d.send_ps < 5 * 10**9).sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
