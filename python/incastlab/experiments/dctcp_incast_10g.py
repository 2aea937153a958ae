"""DCTCP against NewReno on incast at 10 Gbps (``dctcp_common`` says what and why).

10 Gbps, 10 us per link (RTT 40 us: FAST'08 §5.2, "10us for Infiniband and 10Gbps
Ethernet"), the 100-packet buffer of ``sigcomm09-fixed-block``'s 10 Gbps panel and of
``incastlab bench``, 1 to 1024 servers (SIGCOMM'09: "Scaling to thousands of servers in
simulation with 10Gbps ethernet"). K = 65 packets is the DCTCP paper's 10 Gbps setting; it
leaves 35 packets above K in this buffer, so DCTCP is also run at K = 20 to show what
that headroom costs. BDP 33.3 packets: N_pred = min(51, 35) = 35 at K = 65, min(51, 57) = 51
at K = 20.

200 blocks per point instead of 20 s: a 10 Gbps block that holds takes under 1 ms, so 20 s
would be over 20,000 blocks per point; 200 blocks are 200 repetitions of the same first
round, and a collapsed point still times out in every one of them.
"""

from __future__ import annotations

from .dctcp_common import BASE, checks, series
from .sources import DCTCP_PAPER, SIGCOMM09
from .spec import Experiment, Plot

SERVERS = (1, 2, 4, 8, 16, 24, 32, 36, 40, 44, 48, 52, 56, 64, 128, 256, 512, 1024)
SERIES = series({"rate": "10Gbps", "rtt": "40us"}, (65, 20), SERVERS, (1, 4, 32, 56, 1024))

EXPERIMENT = Experiment(
    name="dctcp-incast-10g",
    title="DCTCP (K = 65, and 20) against NewReno, fixed 1 MiB block, 10 Gbps, 100-packet buffer",
    source=f"{DCTCP_PAPER} §4.2.1; workload {SIGCOMM09}",
    summary="1 MiB split over N = 1 to 1024 servers at 10 Gbps, RTT 40 us, a 100-packet port buffer marking at "
            "K = 65 (DCTCP paper) and K = 20: DCTCP holds where NewReno collapses; with K = 65 only 35 packets "
            "of headroom remain and it collapses earlier than with K = 20, which holds until the servers' first "
            "windows overflow the buffer.",
    series=SERIES,
    checks=checks(SERIES),
    base={**BASE, "blocks": 200},
    seeds=3,
    plot=Plot(logx=True),
)
