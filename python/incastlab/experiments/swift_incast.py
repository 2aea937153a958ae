"""Swift's incast: N senders to one host of a k = 16 fat tree (1,024 hosts), Swift beside TCP
SACK, DCTCP and NDP on one fabric, at fan-ins up to a thousand.

Swift (Kumar et al., SIGCOMM 2020) handles "large-scale incast" by letting the window fall
below one packet and pacing (§3.4), and scales its target delay with the number of flows
(§3.5) so that many flows share a bottleneck at a bounded queue. Swift is not one of the
seeds; the paper (ACM open access, doi 10.1145/3387514.3406591) reports its incast in §5.3,
Table 3: a 5000-to-1 incast (100 long-lived flows from each of 50 machines, 50 Gbps) at
49.5 Gbps with a loss rate of 0.0003 %, against GCN, its DCTCP-style protocol, at "a 5.1%
loss-rate" for "a smaller scale 1000-to-1 incast"; its abstract: "loss rates that are at
least 10x lower than a DCTCP protocol, and handles O(10k) incasts that sharply degrade
with DCTCP". Its flows are long-lived (§3.2: the initial window "has little effect in our
setting"); here each flow is one 64 KB transfer from a cold start (docs/transports.md).

The setting, shared by every series: fattree-incast's k = 16 fat tree (10 Gbps everywhere,
1 us per link), 100-packet (150 KB) switch ports, one 64 KB flow per sender, the receiver
host 0 and the senders drawn at random (seeded). The series differ only in what the
senders run and what the ports do with what does not fit:
- **Swift**: SACK recovery, IW 2, RTOmin 200 us, its target from the path and its timer
  on its own delay samples (`docs/transports.md`), ECMP per flow;
- **TCP SACK**: IW 2, RTOmin 200 us (microsecond timers), rwnd 64 KiB, ECMP;
- **DCTCP**: the same with K = 20 packets (a fifth of the port), ECMP;
- **NDP**: trimming ports with return-to-sender, IW 8 (about one base BDP), RTOmin 10 ms as
  the last resort, per-packet spraying (NDP's own load balancing).

The line-rate optimum is N x 64 KB of payload at 10 Gbps. The checks, each of which a run
can fail: Swift delivers every flow at every N; at the largest N its windows fall below
one packet (the §3.4 mechanism); at the largest N its loss rate (payload bytes dropped over
payload bytes sent) is at most a tenth of DCTCP's (the abstract's "at least 10x lower")
and its last flow is no later than DCTCP's ("handles O(10k) incasts that sharply degrade
with DCTCP").
"""

from __future__ import annotations

import pandas as pd

from .completion import LineRateOptimum
from .measure import at, curve
from .sources import SWIFT_PAPER
from .spec import Check, Experiment, Plot, Series

FLOW_BYTES = 64_000
RATE_BPS = 10e9
SWIFT, TCP, DCTCP, NDP = ("Swift (SACK recovery, IW 2)", "TCP SACK, RTOmin 200 us", "DCTCP K = 20, RTOmin 200 us",
                          "NDP (trimming, return-to-sender, IW 8)")
TCP_LIKE = {"tcp": "sack", "rwnd": "64KiB", "rto_min": "200us", "load_balancing": "ecmp"}
SERIES = (
    Series(SWIFT, {**TCP_LIKE, "transport": "swift"}),
    Series(TCP, TCP_LIKE),
    Series(DCTCP, {**TCP_LIKE, "cc": "dctcp", "ecn_threshold": 20}),
    Series(NDP, {"transport": "ndp", "trimming": True, "return_to_sender": True, "init_cwnd": 8, "rto_min": "10ms",
                 "load_balancing": "spray"}),
)
# the abstract: "loss rates that are at least 10x lower than a DCTCP protocol"
LOSS_SHARE = 0.1

OPTIMUM = LineRateOptimum(FLOW_BYTES, RATE_BPS)


def _largest(df: pd.DataFrame) -> int:
    return int(df["x"].max())


def every_flow(df: pd.DataFrame):
    done, flows = curve(df, SWIFT, "flows_completed"), curve(df, SWIFT, "flows")
    return (f"Swift flows completed per N: {', '.join(f'{n}: {int(done[n])}/{int(flows[n])}' for n in flows.index)}",
            bool((done == flows).all()))


def below_a_packet(df: pd.DataFrame):
    n = _largest(df)
    least = at(df, SWIFT, n, "swift_min_cwnd")
    per_n = curve(df, SWIFT, "swift_min_cwnd")
    return (f"Swift's least window per N: {', '.join(f'{k}: {v:.3g}' for k, v in per_n.items())} packets",
            least < 1.0)


def loss_rate(df: pd.DataFrame, series: str, n: int) -> float:
    """Payload bytes dropped over payload bytes sent, every retransmission counted again: the
    paper's loss rate (§4.2: "the lost packets divided by the sent packets") in bytes, which
    differs from it in packets only by each flow's short last packet."""
    return at(df, series, n, "bytes_dropped") / at(df, series, n, "bytes_sent")


def low_loss(df: pd.DataFrame):
    n = _largest(df)
    rate = {s: loss_rate(df, s, n) for s in (SWIFT, TCP, DCTCP)}
    drops = {s: at(df, s, n, "drops") for s in (SWIFT, TCP, DCTCP)}
    ratio = {s: at(df, s, n, "incast_completion_s") / float(OPTIMUM.seconds(n)) for s in (SWIFT, TCP, DCTCP, NDP)}
    ok = rate[SWIFT] <= LOSS_SHARE * rate[DCTCP] and ratio[SWIFT] <= ratio[DCTCP]
    return (f"{n} senders: loss rate Swift {rate[SWIFT]:.2%}, DCTCP {rate[DCTCP]:.2%} (Swift/DCTCP "
            f"{rate[SWIFT] / rate[DCTCP]:.2f}), TCP {rate[TCP]:.2%}; drops Swift {drops[SWIFT]:.0f}, "
            f"DCTCP {drops[DCTCP]:.0f}, TCP {drops[TCP]:.0f}; completion over the optimum Swift "
            f"{ratio[SWIFT]:.3g}x, DCTCP {ratio[DCTCP]:.3g}x, TCP {ratio[TCP]:.3g}x, NDP {ratio[NDP]:.3g}x", ok)


def draw(fig, df: pd.DataFrame) -> None:
    OPTIMUM.draw(fig, df, [s.label for s in SERIES], "senders (one 64 KB flow each, k = 16 fat tree)")


def report(df: pd.DataFrame) -> str:
    cols = ("incast_completion_s", "drops", "timeouts", "max_queue_packets")
    lines = ["series, N: completion / optimum, drops, loss rate (payload bytes dropped, or trimmed by NDP's ports, "
             "over bytes sent), timeouts, client port's max queue (packets)"]
    for s in SERIES:
        for n in sorted(df["x"].unique()):
            v = {c: at(df, s.label, n, c) for c in cols}
            lines.append(f"{s.label}, {n}: {v['incast_completion_s'] / float(OPTIMUM.seconds(n)):.3g}x, "
                         f"{v['drops']:.0f}, {loss_rate(df, s.label, n):.2%}, {v['timeouts']:.0f}, "
                         f"{v['max_queue_packets']:.0f}")
    return "\n".join(lines)


EXPERIMENT = Experiment(
    name="swift-incast",
    title="Swift's incast on a k = 16 fat tree, 16 to 1000 senders x 64 KB, 10 Gbps: beside TCP, DCTCP and NDP",
    source=f"{SWIFT_PAPER} (abstract, §3.4, §5.3)",
    summary="16 to 1000 senders drawn over a 1,024-host fat tree each send 64 KB to one receiver at 10 Gbps "
            "(100-packet ports): Swift's windows fall below a packet and it paces; its losses and completion "
            "beside TCP SACK and DCTCP (ECMP) and NDP (trimming, spraying) on the same fabric.",
    series=SERIES,
    base={"workload": "incast", "topology": "fat_tree", "fat_tree_k": 16, "rate": "10Gbps", "rtt": "4us",
          "buffer_packets": 100, "sru": FLOW_BYTES},
    values=(16, 128, 1000),
    quick_values=(16, 1000),
    seed_variation={},
    plot=Plot(kind="custom", draw=draw),
    report=report,
    checks=(
        Check("Swift completes every flow of the incast at every N (no flow left waiting on its pacing or "
              "its timer)", f"{SWIFT_PAPER} (§3.4)", every_flow),
        Check("\"large-scale incast\": with a thousand flows to one host Swift's window falls below one "
              "packet and it paces (§3.4); bar: least window < 1 packet at the largest N",
              f"{SWIFT_PAPER} (§3.4)", below_a_packet),
        Check(f"Swift's loss against a DCTCP protocol's (abstract: \"loss rates that are at least 10x lower than a "
              f"DCTCP protocol, and handles O(10k) incasts that sharply degrade with DCTCP\"; §5.3: 0.0003 % at "
              f"5000-to-1 against GCN's 5.1 % at 1000-to-1); bar: at the largest N, Swift's loss rate (bytes dropped "
              f"over bytes sent) at most {LOSS_SHARE:.0%} of DCTCP's, and its last flow no later than DCTCP's",
              f"{SWIFT_PAPER} (abstract, §5.3)", low_loss),
    ),
)
