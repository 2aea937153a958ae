#!/usr/bin/env python3
"""What follows a retransmission timeout, in per-event traces (a testbed capture or a simulator
trace, `incastlab validate --trace DIR`; docs/testbed.md, "Capture and trace").

    python scripts/after-timeout.py DIR/testbed-n8.csv DIR/sim-think-n8.csv [...]

For every file, over its flows:

- **the timeout's retransmission, acknowledged**: from the bottleneck's dequeue of the segment a
  timeout resent (the first `rtx` within 0.5 ms of the flow's change to Loss) to the first ACK
  at or past its end reaching the server; how many within 5 ms (an ACK at once) and how many
  30 ms or more (a delayed ACK). Retransmissions dropped again are not counted;
- **after the first ACK**: whether the flow's next segment after the first ACK that follows
  the timeout is new data (F-RTO, RFC 5682) or a resend;
- **Loss episodes**, from a timeout until the flow leaves Loss: resends and new segments sent
  in it, its length (p50 / p90), and how many end in Recovery (Linux's `tcp_enter_recovery`
  from Loss) rather than Open; with the time from the timeout to such a change (p10 / p50 /
  p90, ms).

docs/testbed.md, "After a timeout: the client's quick ACKs and Linux's recovery from Loss",
reads these for the testbed and the simulator.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

LOSS, RECOVERY = "4", "3"  # the traces' congestion states (ns-3's numbering)
RESENT_WITHIN_S = 0.0005
FAST_S, DELAYED_S = 0.005, 0.030


def analyse(path: Path) -> dict:
    timeouts = 0
    loss_since: dict[str, float] = {}  # flow -> when it entered Loss
    awaiting_rtx: dict[str, float] = {}  # flow -> its timeout, until the retransmission shows
    pending: dict[str, list] = {}  # flow -> [seq, end, dequeued at]
    ack_delays: list[float] = []
    to_recovery: list[float] = []
    first_ack: dict[str, str] = {}  # flow -> "waiting" for its first ACK since the timeout, "acked"
    after_first_ack = {"tx": 0, "rtx": 0}
    episode: dict[str, list] = {}  # flow -> [resends, new segments]
    resends: list[int] = []
    news: list[int] = []
    lengths: list[float] = []
    with path.open(newline="") as f:
        for row in csv.reader(f):
            t, kind, flow = float(row[0]), row[1], row[2]
            if kind == "state":
                old, new = row[3], row[4]
                if new == LOSS:
                    timeouts += 1
                    loss_since[flow] = awaiting_rtx[flow] = t
                    episode[flow] = [0, 0]
                    first_ack[flow] = "waiting"
                elif old == LOSS:
                    if flow in loss_since:
                        if new == RECOVERY:
                            to_recovery.append(t - loss_since[flow])
                        lengths.append(t - loss_since[flow])
                        n_rtx, n_tx = episode.pop(flow)
                        resends.append(n_rtx)
                        news.append(n_tx)
                    loss_since.pop(flow, None)
                    first_ack.pop(flow, None)
                continue
            if flow in loss_since and kind in ("tx", "rtx"):
                episode[flow][kind == "tx"] += 1
                if first_ack.get(flow) == "acked":
                    after_first_ack[kind] += 1
                    del first_ack[flow]
            if kind == "ack" and first_ack.get(flow) == "waiting" and flow not in awaiting_rtx:
                first_ack[flow] = "acked"
            if kind == "rtx" and flow in awaiting_rtx:
                if t - awaiting_rtx.pop(flow) <= RESENT_WITHIN_S:
                    seq = int(row[3])
                    pending[flow] = [seq, seq + int(row[4]), None]
            elif kind == "deq" and flow in pending and pending[flow][2] is None and int(row[3]) == pending[flow][0]:
                pending[flow][2] = t
            elif kind == "ack" and flow in pending and pending[flow][2] is not None and int(row[3]) >= pending[flow][1]:
                ack_delays.append(t - pending.pop(flow)[2])
    return {"timeouts": timeouts, "acked": len(ack_delays),
            "acked_within_5ms": sum(d < FAST_S for d in ack_delays),
            "acked_after_30ms": sum(d >= DELAYED_S for d in ack_delays),
            "loss_to_recovery": len(to_recovery),
            "loss_to_recovery_ms": _quantiles([d * 1e3 for d in to_recovery]),
            "after_first_ack_new": after_first_ack["tx"], "after_first_ack_resend": after_first_ack["rtx"],
            "loss_episodes": len(lengths), "episode_resends": _p50_p90(resends), "episode_new": _p50_p90(news),
            "episode_ms": _p50_p90([d * 1e3 for d in lengths])}


def _p50_p90(xs: list[float]) -> list[float] | None:
    if len(xs) < 2:
        return None
    return [round(statistics.median(xs), 1), round(statistics.quantiles(xs, n=10)[-1], 1)]


def _quantiles(xs: list[float]) -> list[float] | None:
    if len(xs) < 2:
        return None
    deciles = statistics.quantiles(xs, n=10)
    return [round(deciles[0], 2), round(statistics.median(xs), 2), round(deciles[-1], 2)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", type=Path, help="per-event trace CSVs")
    args = p.parse_args(argv)
    total = {"timeouts": 0, "acked": 0, "acked_within_5ms": 0, "acked_after_30ms": 0, "loss_to_recovery": 0,
             "after_first_ack_new": 0, "after_first_ack_resend": 0}
    for path in args.traces:
        if not path.is_file():
            p.error(f"traces: no such file: {path}")
        r = analyse(path)
        for k in total:
            total[k] += r[k]
        print(f"{path}: {r['timeouts']} timeouts; retransmission acknowledged: {r['acked']}, within 5 ms "
              f"{r['acked_within_5ms']}, 30 ms or more {r['acked_after_30ms']}; Loss -> Recovery "
              f"{r['loss_to_recovery']}, ms after the timeout p10/p50/p90 {r['loss_to_recovery_ms']}; after the "
              f"first ACK: new data {r['after_first_ack_new']}, a resend {r['after_first_ack_resend']}; "
              f"{r['loss_episodes']} Loss episodes: resends p50/p90 {r['episode_resends']}, new segments "
              f"{r['episode_new']}, ms {r['episode_ms']}")
    if len(args.traces) > 1:
        print(f"all: {total['timeouts']} timeouts; retransmission acknowledged: {total['acked']}, within 5 ms "
              f"{total['acked_within_5ms']}, 30 ms or more {total['acked_after_30ms']}; Loss -> Recovery "
              f"{total['loss_to_recovery']}; after the first ACK: new data {total['after_first_ack_new']}, a resend "
              f"{total['after_first_ack_resend']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
